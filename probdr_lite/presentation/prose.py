"""Numbers into words: the book's formatters, its one template mechanism and the glue that lets a page quote another.

A sentence that states a computed fact is the chapter's: a template in a chapter cell, filled by :func:`fill` from
the facts a ``*_facts`` function of the package returns. Its slots name the formatters here, and a word that
depends on a number (:func:`trend`, :func:`closeness`) is a fact too, chosen by a tolerance passed in, so a test
can feed numbers for which each word would be false and check that it is not used. One rule holds book-wide:
:func:`num` prints a number so that rounding never shows a sign the value does not have in print (a value that
rounds to zero is written ``0.000``, not ``-0.000``).
"""

from __future__ import annotations

import math
import re
import string

from probdr_lite._validation import check_scalar
from probdr_lite.metrics import change_direction

__all__ = ["num", "signed", "pct", "sci", "pvalue", "TREND_WORDS", "trend", "closeness", "listing", "plural",
           "count_phrase", "fill", "glue", "glued", "paste", "GLUE_ROLE", "ClaimError", "claim"]

#: The words for the directions of :func:`probdr_lite.metrics.change_direction` (a template's ``{d:trend}``).
TREND_WORDS = {"up": "rises", "down": "falls", "flat": "barely changes"}


def _finite(x, name="x") -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {x!r}") from None
    return x


def num(x, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals; a value that rounds to zero prints as ``0.000`` (never ``-0.000``).

    NaN prints as ``n/a`` and infinities as ``∞`` / ``-∞``, so a sentence never shows Python's ``nan``.
    """
    x = _finite(x)
    digits = check_scalar(int(digits), "digits", low=0, integer=True)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    text = f"{x:.{digits}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]
    return text


def signed(x, digits: int = 3) -> str:
    """Like :func:`num` with an explicit sign: ``+0.120``, ``-0.050``, and ``0.000`` (no sign) for zero."""
    text = num(x, digits)
    if text in ("n/a", "∞", "-∞") or text.startswith("-") or float(text) == 0.0:
        return text if text != "∞" else "+∞"
    return "+" + text


def pct(x, digits: int = 0) -> str:
    """A fraction as a percentage: ``pct(0.423) == "42 %"``; rounding to zero prints ``0 %``."""
    return f"{num(100.0 * _finite(x), digits)} %"


def sci(x, digits: int = 1) -> str:
    """Scientific notation for tiny or huge numbers (``1.2e-15``); exactly zero prints as ``0``."""
    x = _finite(x)
    if x == 0.0:
        return "0"
    if math.isnan(x):
        return "n/a"
    return f"{x:.{int(digits)}e}"


def pvalue(p, digits: int = 3) -> str:
    """A p-value to ``digits`` significant digits (``0.0123``, ``4.5e-07``, ``1``); a missing one (None, NaN:
    no test was run) prints ``n/a``. Outside [0, 1] it is not a p-value: ``ValueError``."""
    if p is None:
        return "n/a"
    p = _finite(p, "p")
    if math.isnan(p):
        return "n/a"
    check_scalar(p, "p", low=0.0, high=1.0)
    digits = check_scalar(int(digits), "digits", low=1, integer=True)
    return f"{p:.{digits}g}"


def trend(before, after, rel_tol: float = 0.01) -> str:
    """``"rises"``, ``"falls"`` or ``"barely changes"``: the words of :data:`TREND_WORDS` for the direction that
    :func:`probdr_lite.metrics.change_direction` decides (beyond ``rel_tol`` of ``|before|``; absolute when
    ``before == 0``).
    """
    a, b = _finite(before, "before"), _finite(after, "after")
    rel_tol = check_scalar(_finite(rel_tol, "rel_tol"), "rel_tol", low=0.0)
    return TREND_WORDS[change_direction(a, b, rel_tol)]


def closeness(a, b, rel_tol: float) -> str:
    """``"nearly equal"`` when ``|a - b| <= rel_tol * max(|a|, |b|)``, else ``"different"``."""
    a, b = _finite(a, "a"), _finite(b, "b")
    rel_tol = check_scalar(_finite(rel_tol, "rel_tol"), "rel_tol", low=0.0)
    return "nearly equal" if abs(a - b) <= rel_tol * max(abs(a), abs(b)) else "different"


def listing(items) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [str(i) for i in items]
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def plural(n: int, word: str) -> str:
    """``"1 seed"``, ``"3 seeds"``: a count with its noun (regular plurals only)."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def count_phrase(k, n, what: str) -> str:
    """``"every one of the 9 steps"``, ``"none of the 9 steps"`` or ``"4 of the 9 steps"`` from the counts."""
    n = int(n)
    k = check_scalar(int(k), "k", low=0, high=n, integer=True)
    if n > 0 and k == n:
        return f"every one of the {n} {what}"
    if k == 0:
        return f"none of the {n} {what}"
    return f"{k} of the {n} {what}"



_SPEC = re.compile(r"(?P<fmt>num|signed|pct|sci|pvalue)(?P<digits>\d?)|(?P<listing>listing)|plural:(?P<plural>\w+)"
                   r"|(?P<trend>trend)|agree:(?P<one>\w+)/(?P<many>\w+)")


class _Slots(string.Formatter):
    """``str.format`` whose format specs name the formatters above: ``{x:num2}``, ``{d:signed}``, ``{f:pct}``,
    ``{g:sci1}``, ``{p:pvalue}``, ``{names:listing}``, ``{n:plural:seed}``, ``{d:trend}`` (a direction of
    :func:`probdr_lite.metrics.change_direction` as its word in :data:`TREND_WORDS`) and ``{n:agree:was/were}``,
    the word that agrees with the count ``n`` (the first for 1, the second otherwise; the count itself is not
    printed); any other spec is Python's own."""

    def format_field(self, value, spec):
        m = _SPEC.fullmatch(spec)
        if m is None:
            return super().format_field(value, spec)
        if m["trend"]:
            return TREND_WORDS[value]
        if m["listing"]:
            return listing(value)
        if m["plural"]:
            return plural(value, m["plural"])
        if m["one"]:
            return m["one"] if value == 1 else m["many"]
        formatter = {"num": num, "signed": signed, "pct": pct, "sci": sci, "pvalue": pvalue}[m["fmt"]]
        return formatter(value, int(m["digits"])) if m["digits"] else formatter(value)


def fill(template: str, facts: dict | None = None, **more) -> str:
    """A chapter's sentence with its slots filled from the package's facts: the book's one template mechanism.

    ``template`` is written in the chapter and uses ``str.format`` slots whose spec names a formatter of this
    module (``"{gap:sci}"``, ``"{acc:pct1}"``, ``"{arms:listing}"``, ``"{n:plural:seed}"``, ``"{d:trend}"``,
    ``"{n:agree:was/were}"``); ``facts`` (and
    keyword arguments, which win) supply the values. Words that depend on a number (``"rises"``) are facts
    too, computed by the package's rules, so a template holds no threshold. A slot without a fact raises
    ``KeyError`` naming it.
    """
    if not isinstance(template, str):
        raise TypeError(f"template must be a string; got {type(template).__name__}")
    values = {**(facts or {}), **more}
    try:
        return _Slots().vformat(template, (), values)
    except KeyError as exc:
        raise KeyError(f"the template's slot {exc.args[0]!r} has no fact; facts given: {sorted(values)}") from None


#: The mime prefix under which myst-nb's glue keeps a value out of sight (``myst_nb.glue(..., display=False)``).
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, text) -> None:
    """Publish ``text`` (a fact already formatted, e.g. ``sci(gap)``) under ``name`` for another page to paste.

    The output has the shape myst-nb's ``glue(name, value, display=False)`` writes: the book's build collects it,
    and a MyST page pastes it with ``{glue:text}`chapter.ipynb::name```. It shows nothing in the notebook itself,
    and it needs no myst-nb, so the same cell runs on Colab and Binder. The text must hold no maths (a pasted
    text is not typeset).
    """
    from IPython.display import display

    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be an identifier-like string; got {name!r}")
    text = str(text)
    if "$" in text or "\\(" in text:
        raise ValueError(f"text must hold no maths (pasted text is not typeset); got {text!r}")
    # a string's repr, as myst-nb's glue stores a str: the paste reads it back with literal_eval, so "0.500" stays
    # "0.500" instead of becoming the float 0.5
    _GLUED[name] = text
    display({GLUE_PREFIX + "text/plain": repr(text)}, raw=True,
            metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}})


#: What this kernel has glued so far, by name: what :func:`paste` reads in a reader notebook.
_GLUED: dict[str, str] = {}

#: A glued number in a chapter's Markdown, as myst-nb reads it: ``{glue:text}`name```, ``{glue}`name``` or
#: ``{glue:md}`name``` (no format spec: the chapter glues text already formatted by the formatters above).
GLUE_ROLE = re.compile(r"\{glue(?::(text|md|any))?\}`([^`\n]+)`")


def glued(name: str) -> str:
    """The text glued under ``name`` in this kernel; a name never glued raises ``KeyError`` naming it."""
    try:
        return _GLUED[name]
    except KeyError:
        raise KeyError(f"nothing has been glued under {name!r} in this kernel (run the cell that glues it "
                       f"first); glued so far: {sorted(_GLUED)}") from None


def paste(markdown: str):
    """Show an author's Markdown paragraph with its glued numbers pasted, where myst-nb is not there to do it.

    The reader notebooks (Colab, Jupyter) turn each chapter Markdown cell that pastes numbers into a cell calling
    this: the words are the author's, unchanged; each ``{glue:text}`name``` becomes the text glued under ``name``
    earlier in the same kernel, as the book's build would paste it. A role with a format spec or another page's
    name (``page.ipynb::name``) raises: the chapters glue formatted text of their own page.
    """
    from IPython.display import Markdown, display

    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be a string; got {type(markdown).__name__}")

    def one(m):
        name = m.group(2).strip()
        if "::" in name or ":" in name:
            raise ValueError(f"a pasted name must be this page's and carry no format spec; got {name!r}")
        return glued(name)

    display(Markdown(GLUE_ROLE.sub(one, markdown)))


class ClaimError(AssertionError):
    """A chapter's sentence that its numbers no longer make true (see :func:`claim`)."""


def claim(condition, sentence: str) -> None:
    """Check, beside the paragraph that says it, a fact that makes an author's sentence true.

    ``condition`` is the fact (a bool, numpy's included); ``sentence`` names the sentence, in the chapter's own
    words, so that when the data change and the fact fails the build stops here and says which sentence a person
    must rewrite. Nothing is ever reworded by code.
    """
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence must name the sentence this checks; got {sentence!r}")
    if type(condition).__name__ not in ("bool", "bool_"):
        raise TypeError(f"condition must be a bool (a fact, not a number); got {type(condition).__name__}: "
                        f"{condition!r}")
    if not condition:
        raise ClaimError(f"the numbers no longer make this sentence true; rewrite it and its check: {sentence!r}")
