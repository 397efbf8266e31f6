"""How long each chapter is, as its reader meets it: prose words, printed-output words, rendered words (issue 43).

    python tools/page_words.py BUILD_HTML_DIR [--json]

Why: a chapter should be as long as what it teaches, and a printout a reader must read should be a table or a
sentence. The limits the book keeps (``tests/book/test_page_words.py`` holds every page to them) are in
:data:`LIMITS`. What is counted, on each chapter page's article body (sphinx-book-theme's
``<article class="bd-article">``), words being whitespace-separated pieces of visible text:

- *prose*: the text of paragraphs and list items outside tables, code cells (their source and their output),
  ``<pre>`` blocks and folded blocks (``<details>``: solutions, folded records);
- *output*: the text a code cell printed (a ``<pre>`` inside a cell's output), the words a reader steps over when
  a printout stands in the reading path; HTML tables and images a cell displays are not printouts;
- *rendered*: every visible word of the article outside code cells' source and folded blocks: prose, headings,
  tables, captions, printed output.

A formula counts as one word where it sits in the text: its TeX source (as Sphinx writes it, or, once the build
has typeset it, the TeX annotation of its assistive MathML), never the glyphs or MathML of its typeset copy. Hidden
text (``hidden``, ``display: none``, screen-reader copies of maths, the headings' ``#`` links) is not counted.

Exit status: 0, or 1 with ``--check`` when a page is over a limit; 2 when the folder cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import tool_loader  # tools/ is on sys.path when this runs as a script; the tests register the loader

page_numbers = tool_loader.tool("page_numbers")  # its list of chapter pages and of void HTML elements
VOID = page_numbers.VOID

#: per page (the path under the build, without .html): the most prose words, printed-output words and rendered
#: words it may hold (None: no limit). Chapters 2-6 teach one idea each; 8 and 9 read many measurements; chapter 7
#: is a result whose record lives on its appendix page.
LIMITS = {
    "book/laplacian_eigenmaps": (3000, 250, None),
    "book/probdr_elbo": (3000, 250, None),
    "book/unrolled_inference": (3000, 250, None),
    "book/transformer_block": (3000, 250, None),
    "book/mnist_at_init": (3000, 250, None),
    "book/trained_transformers": (3300, 250, 6500),
    "book/objections": (3300, 250, None),
    "book/energies": (3300, 250, None),
}
SKIP_TAGS = {"script", "style", "template", "noscript", "svg", "button", "head", "title"}
SKIP_CLASSES = set(page_numbers.SKIP_CLASSES) | {"cell_input", "katex-html", "MathJax_SVG", "mjx-container"}
HIDDEN_STYLE = re.compile(r"display\s*:\s*none")


class _Counter(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # one dict of flags per open element
        self.prose = self.output = self.rendered = 0

    def _flags(self):
        return self.stack[-1] if self.stack else {"article": False, "hidden": False, "table": False, "pre": False,
                                                  "cell": False, "output": False, "folded": False, "text": False,
                                                  "math": False}

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        attrs = {k: (v or "") for k, v in attrs}
        classes = set(attrs.get("class", "").split())
        f = dict(self._flags())
        if tag == "article" and "bd-article" in classes:
            f["article"] = True
        f["hidden"] = f["hidden"] or tag in SKIP_TAGS or bool(classes & SKIP_CLASSES) or "hidden" in attrs \
            or bool(HIDDEN_STYLE.search(attrs.get("style", ""))) or attrs.get("aria-hidden") == "true"
        f["table"] = f["table"] or tag == "table"
        f["pre"] = f["pre"] or tag == "pre"
        f["cell"] = f["cell"] or "cell" in classes
        f["output"] = f["output"] or "cell_output" in classes
        f["folded"] = f["folded"] or tag == "details"
        f["text"] = f["text"] or tag in ("p", "li")
        if "math" in classes and not f["math"]:
            f["box"] = dict(f)  # the flags where the formula sits: its TeX annotation is counted there
        f["math"] = f["math"] or "math" in classes
        if tag == "annotation" and attrs.get("encoding") == "application/x-tex" and f.get("box") is not None:
            f = {**f["box"], "math": True, "box": None}
        self.stack.append(f)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        f = self._flags()
        if not f["article"] or f["hidden"]:
            return
        n = 1 if f["math"] and data.strip() else len(data.split())
        if not n:
            return
        if f["output"] and f["pre"] and not f["folded"]:
            self.output += n
        if not f["folded"]:
            self.rendered += n
        if f["text"] and not (f["table"] or f["pre"] or f["cell"] or f["folded"]):
            self.prose += n


def page_words(html: str) -> dict:
    """``{"prose", "output", "rendered"}`` word counts of one page (see the module docstring)."""
    counter = _Counter()
    counter.feed(html)
    counter.close()
    return {"prose": counter.prose, "output": counter.output, "rendered": counter.rendered}


def site_words(root: Path) -> dict:
    """``{page: page_words}`` for every chapter page of a built site (``book/NAME`` keys)."""
    out = {}
    for path in sorted(Path(root).glob("book/*.html")):
        out[f"book/{path.stem}"] = page_words(path.read_text(encoding="utf-8"))
    return out


def over_limits(words: dict) -> list:
    """``(page, what, count, limit)`` for every count above its limit in :data:`LIMITS`."""
    bad = []
    for page, limits in LIMITS.items():
        if page not in words:
            continue
        for what, limit in zip(("prose", "output", "rendered"), limits):
            if limit is not None and words[page][what] > limit:
                bad.append((page, what, words[page][what], limit))
    return bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the built site, e.g. _build/html")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is over a limit of LIMITS")
    args = parser.parse_args(argv)
    if not (args.root / "book").is_dir():
        print(f"{args.root} is not a built book (no book/ folder)", file=sys.stderr)
        return 2
    words = site_words(args.root)
    if args.json:
        print(json.dumps(words, indent=1))
    else:
        print(f"{'page':32} {'prose':>7} {'output':>7} {'rendered':>9}")
        for page, w in words.items():
            print(f"{page:32} {w['prose']:>7} {w['output']:>7} {w['rendered']:>9}")
    bad = over_limits(words)
    for page, what, count, limit in bad:
        print(f"{page}: {what} {count} words, limit {limit}")
    return 1 if (args.check and bad) else 0


if __name__ == "__main__":
    raise SystemExit(main())
