"""Numbers for the chapters' sentences: the book's formatters, the glue that pastes them into an author's Markdown,
and the claim that checks a sentence.

A chapter's sentences are Markdown, written once by an author. A number in one is formatted here (:func:`num`,
:func:`signed`, :func:`pct`, :func:`sci`, :func:`pvalue`), published by a hidden cell with :func:`glue` and pasted
by myst-nb's ``{glue:text}`` role (in the reader notebooks by :func:`paste`); beside the paragraph, :func:`claim`
asserts the facts that make its words true, so that when the data change the build stops and names the sentence to
rewrite. Nothing here chooses a word. One rule holds book-wide: :func:`num` prints a number so that rounding never
shows a sign the value does not have in print (a value that rounds to zero is written ``0.000``, not ``-0.000``).
"""

from __future__ import annotations

import math
import re

from probdr_lite._validation import check_scalar

__all__ = ["num", "signed", "pct", "sci", "pvalue", "glue", "glued", "paste", "GLUE_ROLE", "ClaimError", "claim"]


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


#: The mime prefix under which myst-nb's glue keeps a value out of sight (``myst_nb.glue(..., display=False)``).
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, text) -> None:
    """Publish ``text`` (a number already formatted, e.g. ``sci(gap)``) under ``name`` for a Markdown paragraph to paste.

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
