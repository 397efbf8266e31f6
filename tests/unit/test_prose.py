"""The book's number formatters, glue, paste and claim (probdr_lite.presentation.prose): each formatter on numbers at
the edges of its rounding, the glue as myst-nb reads it, and a claim that fails naming its sentence."""

import math

import pytest

from probdr_lite.presentation import prose as P


@pytest.mark.parametrize("x, digits, text", [
    (-0.0001, 3, "0.000"), (-0.0004999, 3, "0.000"), (-0.0005001, 3, "-0.001"), (0.0, 3, "0.000"),
    (-0.0, 2, "0.00"), (0.4326, 3, "0.433"), (-1.25, 1, "-1.2"), (12.0, 0, "12"), (-0.4, 0, "0"),
])
def test_num_never_prints_minus_zero(x, digits, text):
    assert P.num(x, digits) == text


def test_num_special_values_and_bad_input():
    assert P.num(math.nan) == "n/a" and P.num(math.inf) == "∞" and P.num(-math.inf) == "-∞"
    with pytest.raises(ValueError, match="x"):
        P.num("abc")
    with pytest.raises(ValueError, match=r"digits must be in \[0, inf\); got -1"):
        P.num(1.0, -1)


def test_signed_pct_sci():
    assert P.signed(0.12) == "+0.120" and P.signed(-0.05) == "-0.050" and P.signed(-0.0001) == "0.000"
    assert P.pct(0.423) == "42 %" and P.pct(-0.001) == "0 %" and P.pct(0.0561, 1) == "5.6 %"
    assert P.sci(0.0) == "0" and P.sci(1.234e-15) == "1.2e-15"


def test_pvalue_has_three_significant_digits_and_marks_a_missing_test():
    # three significant digits, whatever the magnitude; no trailing zeros
    assert P.pvalue(0.012345) == "0.0123" and P.pvalue(0.5) == "0.5" and P.pvalue(1.0) == "1"
    assert P.pvalue(4.5e-7) == "4.5e-07" and P.pvalue(0.00098765) == "0.000988" and P.pvalue(0.0) == "0"
    assert P.pvalue(0.012345, 2) == "0.012"
    assert P.pvalue(None) == "n/a" and P.pvalue(math.nan) == "n/a"  # no test run
    for bad in (-0.01, 1.5, math.inf):
        with pytest.raises(ValueError, match=r"p must be (a finite number )?in \[0, 1\]"):
            P.pvalue(bad)
    with pytest.raises(ValueError, match=r"digits must be in \[1, inf\); got 0"):
        P.pvalue(0.5, 0)


def test_no_word_chooser_or_template_is_left():
    """The chapters' words are Markdown: this module formats, pastes and checks numbers and chooses no word."""
    for gone in ("fill", "trend", "closeness", "listing", "plural", "count_phrase", "TREND_WORDS"):
        assert not hasattr(P, gone), gone


def test_glue_writes_what_myst_nb_collects(monkeypatch):
    """The output, put in a notebook cell, is found by myst-nb's own extractor under its name, with its text."""
    import IPython.display
    import nbformat
    from myst_nb.ext.glue import extract_glue_data_cell

    from probdr_lite.presentation.prose import GLUE_PREFIX, glue

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append((obj, kw)))
    glue("family_gap", "4.8e-14")
    glue("nmi", "0.500")
    (bundle, kw), (bundle2, kw2) = shown
    assert kw["raw"] is True
    cell = nbformat.v4.new_code_cell("", outputs=[nbformat.v4.new_output("display_data", data=bundle,
                                                                          metadata=kw["metadata"])])
    (key, output), = extract_glue_data_cell(cell)
    assert key == "family_gap"
    assert cell.outputs == []  # hidden: nothing left to show in the page
    # what a {glue:text} paste prints, by myst-nb's own formatter: the text exactly, a number-like one included
    from myst_nb.core.variables import format_plain_text

    assert format_plain_text(output["data"]["text/plain"], "s") == "4.8e-14"
    assert format_plain_text(bundle2[GLUE_PREFIX + "text/plain"], "s") == "0.500"
    with pytest.raises(ValueError, match="maths"):
        glue("x", "$A - I$")
    with pytest.raises(ValueError, match="name"):
        glue("not a name", "1")


# --- the author's paragraphs with pasted numbers, and the checks beside them (issue 35) ---

def test_paste_puts_the_glued_text_where_the_role_stands_and_changes_no_word(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell  # noqa: F401  (IPython is a run-time dependency)

    from probdr_lite.presentation import prose

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    prose.glue("energy_after", prose.num(0.12345))
    prose.glue("n_points", "800")
    prose.paste("The energy falls to {glue:text}`energy_after` on {glue}`n_points` points ($\\lambda_1$ stays).")
    assert shown[-1].data == "The energy falls to 0.123 on 800 points ($\\lambda_1$ stays)."


def test_paste_raises_on_a_name_never_glued_and_on_a_format_spec(monkeypatch):
    from probdr_lite.presentation import prose

    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: None)
    with pytest.raises(KeyError, match="never_glued_here"):
        prose.paste("It is {glue:text}`never_glued_here`.")
    prose.glue("a_value", "1.0")
    with pytest.raises(ValueError, match="format spec"):
        prose.paste("It is {glue:text}`a_value:.2f`.")
    with pytest.raises(ValueError, match="format spec"):
        prose.paste("It is {glue:text}`other.ipynb::a_value`.")


def test_glue_role_pattern_reads_what_myst_nb_reads():
    from probdr_lite.presentation.prose import GLUE_ROLE

    found = [m.group(2) for m in GLUE_ROLE.finditer("a {glue:text}`x` b {glue}`y` c {glue:md}`z` d {cite:p}`w`")]
    assert found == ["x", "y", "z"]


def test_claim_raises_naming_the_sentence_and_only_when_false():
    import numpy as np

    from probdr_lite.presentation.prose import ClaimError, claim

    claim(True, "The energy falls.")
    claim(np.float64(0.2) < 0.5, "The energy falls.")  # numpy's bool is a fact too
    with pytest.raises(ClaimError, match="The energy falls"):
        claim(np.float64(0.7) < 0.5, "The energy falls.")
    with pytest.raises(AssertionError):  # a claim that fails is an assertion that fails
        claim(False, "x")
    with pytest.raises(TypeError, match="bool"):
        claim(0.3, "The energy falls.")  # a number is not a fact: say what about it is true
    with pytest.raises(ValueError, match="sentence"):
        claim(True, "  ")
