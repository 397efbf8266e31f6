"""How much of a chapter's prose reads its own tables out (issue 35, item 4).

    python tools/prose_tables.py BUILD_HTML_DIR [--sentences] [--limit 0.1]

Why: a paragraph beside a table should say what the table means and where it stops, not recite it. The rule
the book keeps is that at most a tenth of a chapter's prose does the reciting; this tool measures that share on
the built site, page by page, and ``tests/book/test_prose_tables.py`` holds every chapter to it.

What is measured, on each chapter page's article body (sphinx-book-theme's ``<article class="bd-article">``):

- the page's *table numbers*: every number in a ``<table>`` (a Markdown table or an HTML table a cell printed);
- its *prose*: the text of every ``<p>`` outside tables, code cells (their source and their printed output)
  and ``<pre>`` blocks, split into sentences; figure captions and admonitions count, since a reader reads them;
- a *measured number*: a decimal (``0.463``), a number in scientific notation (``4.1e-14``) or a percentage
  (``36 %``), never zero. Integers without a percent sign are left out: they are settings and counts (layers,
  seeds, 2,000 iterations, 8,000 images, years) that a sentence cannot avoid naming when a table also lists
  them, and zero is the point a verdict is about. The sign is ignored (``-0.0752`` in a table and "falls by
  0.0752" in a sentence are the same number);
- a sentence *reads a table out* when it holds two or more distinct measured numbers that are also table
  numbers of its page. One number beside a verdict is evidence; two or more is a recital.

The share is the words of the sentences that read a table out over the words of all the page's prose.

Exit status: 0, or 1 with ``--limit X`` when a page's share is above X; 2 when the folder cannot be read.
"""

from __future__ import annotations

import argparse
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import tool_loader  # tools/ is on sys.path when this runs as a script; the tests register the loader

page_numbers = tool_loader.tool("page_numbers")  # its list of chapter pages and of void HTML elements
VOID = page_numbers.VOID
HIDDEN_TAGS = {"script", "style", "svg", "pre", "table"}  # text that is not prose (tables are read apart)
HIDDEN_CLASSES = {"cell_input", "cell_output", "headerlink"}

NUMBER = re.compile(r"(?<![\w.])[-+\u2212]?(\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+\u2212]?\d+)?)(\s?%)?")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\u201c\"])")
LIMIT = 0.10


def measured_numbers(text: str) -> set:
    """The measured numbers of a text (see the module's docstring), as absolute values."""
    found = set()
    for m in NUMBER.finditer(text):
        digits, percent = m.group(1).replace(",", "").replace("\u2212", "-"), m.group(2)
        value = abs(float(digits))
        is_integer = not any(c in digits for c in ".eE")
        if value == 0 or (is_integer and not percent):
            continue
        found.add(round(value, 12))
    return found


def sentences(paragraph: str) -> list:
    """A paragraph's sentences: split after . ! ? where the next one starts with a capital or a bracket."""
    text = " ".join(paragraph.split())
    return [s for s in SENTENCE_END.split(text) if s]


class _Article(HTMLParser):
    """Collects the article body's table text and its paragraphs' text.

    A formula typeset when the book was built (``tools/site_speed.py``: SVG and MathJax's assistive MathML inside an
    ``mjx-container``) reads as its TeX source, ``\\(...\\)`` or ``\\[...\\]``, taken from the MathML's TeX
    annotation, as the page's text read before the maths was typeset there: its glyphs and MathML are not words."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # (tag, in_article, hidden, in_table, in_paragraph)
        self.tables, self.paragraphs = [], []
        self._table, self._paragraph = None, None
        self._maths = None  # (the formula's flags, display) while inside a typeset formula
        self._tex = None  # the TeX annotation's text while it is read

    def _top(self):
        return self.stack[-1] if self.stack else (None, False, False, False, False)

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        _, in_article, hidden, in_table, in_paragraph = self._top()
        if tag == "mjx-container" and self._maths is None:
            self._maths = (self._top(), attrs.get("display") == "true")
        if tag == "annotation" and attrs.get("encoding") == "application/x-tex" and self._maths is not None:
            self._tex = []
        if tag == "article" and "bd-article" in classes:
            in_article = True
        hidden = hidden or tag.startswith("mjx-")
        opens_table = in_article and tag == "table" and not in_table and "cell_input" not in classes
        if opens_table:
            self._table = []
        in_table = in_table or opens_table
        hidden = hidden or tag in HIDDEN_TAGS or bool(classes & HIDDEN_CLASSES)
        opens_paragraph = in_article and tag == "p" and not hidden and not in_paragraph
        if opens_paragraph:
            self._paragraph = []
        self.stack.append((tag, in_article, hidden, in_table, in_paragraph or opens_paragraph))

    def handle_endtag(self, tag):
        if tag in VOID or not any(t == tag for t, *_ in self.stack):
            return
        if tag == "annotation" and self._tex is not None:
            (_, in_article, hidden, in_table, in_paragraph), display = self._maths
            tex, self._tex = "".join(self._tex), None
            self._text(("\\[" + tex + "\\]") if display else ("\\(" + tex + "\\)"), in_article, hidden, in_table,
                       in_paragraph)
        if tag == "mjx-container":
            self._maths = None
        while self.stack:
            t, _, _, in_table, in_paragraph = self.stack.pop()
            outer = self._top()
            if in_table and not outer[3] and self._table is not None:
                self.tables.append(" ".join(self._table))
                self._table = None
            if in_paragraph and not outer[4] and self._paragraph is not None:
                self.paragraphs.append(" ".join(self._paragraph))
                self._paragraph = None
            if t == tag:
                return

    def handle_data(self, data):
        if self._tex is not None:
            self._tex.append(data)
            return
        _, in_article, hidden, in_table, in_paragraph = self._top()
        self._text(data, in_article, hidden, in_table, in_paragraph)

    def _text(self, data, in_article, hidden, in_table, in_paragraph):
        if not in_article:
            return
        if in_table and self._table is not None:
            self._table.append(data)
        elif in_paragraph and not hidden and self._paragraph is not None:
            self._paragraph.append(data)


def page_share(html: str) -> dict:
    """Prose words, the words of sentences that read a table out, their share, and those sentences."""
    parser = _Article()
    parser.feed(html)
    parser.close()
    table_numbers = set()
    for text in parser.tables:
        table_numbers |= measured_numbers(text)
    words, reciting, recitals = 0, 0, []
    for paragraph in parser.paragraphs:
        for sentence in sentences(paragraph):
            n = len(sentence.split())
            words += n
            shared = measured_numbers(sentence) & table_numbers
            if len(shared) >= 2:
                reciting += n
                recitals.append((sentence, sorted(shared)))
    return {"words": words, "reciting": reciting, "share": reciting / words if words else 0.0,
            "sentences": recitals,  # (sentence, the table numbers it holds)
            "tables": len(parser.tables)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the built site, e.g. _build/html")
    parser.add_argument("--sentences", action="store_true", help="list the sentences that read a table out")
    parser.add_argument("--limit", type=float, default=None, help="exit 1 if a page's share is above this")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"not a folder: {args.root}", file=sys.stderr)
        return 2
    over = []
    print(f"{'page':34s} {'prose words':>11s} {'reading tables':>14s} {'share':>6s}")
    for path in page_numbers.chapter_pages(args.root):
        page = path.relative_to(args.root).as_posix()
        result = page_share(path.read_text(encoding="utf-8"))
        print(f"{page:34s} {result['words']:11d} {result['reciting']:14d} {result['share']:6.1%}")
        if args.sentences:
            for s, shared in result["sentences"]:
                print(f"    - {s}\n      (also in a table: {', '.join(f'{x:g}' for x in shared)})")
        if args.limit is not None and result["share"] > args.limit:
            over.append(page)
    if over:
        print(f"above {args.limit:.0%}: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
