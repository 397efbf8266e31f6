"""Every number on every rendered page, before and after a change (issue 28).

    python tools/page_numbers.py snapshot BUILD_HTML_DIR OUT.json   # record the numbers of a built book
    python tools/page_numbers.py compare BEFORE.json AFTER.json [--fail-on-change] [--code] [--strict]
                                         [--ignore-page GLOB ...]

Why: moving sentences out of the package into the chapters must leave what the reader sees unchanged. A
snapshot of each build, compared, names every number that moved, with its words and its section.

What a snapshot holds. For each chapter page (every ``*.html`` under the build, except ``genindex``, ``search``,
``py-modindex`` and the folders ``_static``, ``_sources``, ``_images``, ``vendor``, ``live-data``, ``reports``):
the visible text of the article body (sphinx-book-theme's ``<article class="bd-article">``; navigation,
sidebars, header and footer lie outside it), read with the standard library's ``html.parser``, and in it, in
page order, every

- number: integers, decimals, dotted numbers (section numbers ``6.3``, versions), thousands with commas
  (``10,000``), signed numbers (``+0.12``, ``-3``, ``−0.05`` with a Unicode minus), scientific notation
  (``3.7e-14``, ``1.2×10⁻¹⁵``, ``1.2 × 10^-15``), percentages (``48 %``), super- and subscript digits
  (``C⁻¹``, ``X₀``); a number glued to letters is one token with its word (``gpt2``, ``float64``, a commit
  hash ``a239c76658``): in paragraphs, lists, headings, captions, citations (``Ramsauer et al., 2021``),
  admonitions and dropdowns, cell outputs (printed text, HTML tables) and tables;
- image description: the numbers of each ``<img alt="...">`` (the figures' descriptions);
- formula: the source of each MathJax formula that holds a digit, as one token (``\\(\\kappa = 30\\)``,
  display maths ``\\[...\\]``, and ``\\(..\\)``, ``\\[..\\]``, ``$..$``, ``$$..$$`` written in plain text or cell
  outputs), since a displayed number can sit in maths (a formula without a digit is not recorded);
- code: numbers in the source of code cells the page shows (kind ``code``). Recorded, but ``compare`` leaves
  them out unless ``--code``: moving a sentence into a chapter cell rewrites that cell's source without changing
  what the reader is told.

Each token has its kind (``text``, ``table``, ``alt``, ``math``, ``code``), the innermost section heading above
it, and a short context: the words around it in its paragraph (in a preformatted output, its line), or for a
table cell the row's first cell and the column's header. A page without an article body (``index.html``, a
redirect) is listed with no numbers.

Left out, as not visible text: ``<script>`` and ``<style>`` (including the live figures' JSON specs),
``<svg>`` icons, the headings' ``#`` links, link ``title`` tooltips (the figure links' "(676 × 295 pixels)", the
citations' full references), elements marked ``hidden`` or ``display: none``, and MathJax's own typeset copies
and hidden assistive MathML (``mjx-*``, ``.MathJax*``), whose source is recorded instead: the book typesets its
maths when it is built (``tools/site_speed.py``) and keeps each formula's TeX in its MathML as ``<annotation
encoding="application/x-tex">``, which is read as the formula's source with the delimiters Sphinx writes around it
(``\\(...\\)``, ``\\[...\\]``), so a snapshot of a build from before that change pairs its formulas with one
after it; likewise MathJax 2's ``<script type="math/tex">``. A page that MathJax 3 typeset in a browser and that
was saved from there keeps no source: snapshot the build's own HTML. Out of scope: the pixels of images
(a number drawn in a figure is not text).

Comparing. Per page, the two token sequences are aligned by ``difflib.SequenceMatcher`` on each token's key
(its text with spaces removed and ``−`` read as ``-``; a formula's source without its delimiters and without
the spaces around its operators, so ``\\(A - I\\)`` and ``$A-I$`` are one formula),
not on the words around it: a rewording, or a sentence moved from a package string into a chapter cell, that
shows the same numbers in the same order is no change, and an inserted sentence shows as its numbers added,
not as a shift of everything after it. Where a stretch differs, tokens are paired as "changed" (old -> new)
when the stretch has as many tokens on each side, else by the likeness of their words around; the rest are
"only before" / "only after". ``--strict`` compares the texts exactly (``48 %`` vs ``48%`` then differs).
``--ignore-page GLOB`` leaves pages out, such as ``book/environment.html``, whose package versions and Python
are those of the machine that built it.

Exit status: 0, or 1 with ``--fail-on-change`` when anything differs; 2 when an input cannot be read.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

FORMAT = "probdr-page-numbers/1"

SKIP_DIRS = {"_static", "_sources", "_images", "_downloads", "vendor", "live-data", "reports", ".doctrees"}
SKIP_FILES = {"genindex.html", "search.html", "py-modindex.html"}

CONTEXT_WORDS = 6

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
        "track", "wbr"}
BLOCK = {"address", "article", "aside", "blockquote", "caption", "dd", "details", "div", "dl", "dt",
         "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
         "hr", "li", "main", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
         "thead", "tr", "ul", "br", "img"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
SKIP_TAGS = {"script", "style", "template", "noscript", "svg", "nav", "button", "head", "title"}
SKIP_CLASSES = {"headerlink", "visually-hidden", "sr-only", "screen-reader-text", "MathJax_Preview", "MathJax",
                "MathJax_Display", "MJX_Assistive_MathML", "mjx-assistive-mml", "d-none"}

SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SUB = "₀₁₂₃₄₅₆₇₈₉"
_MANTISSA = r"(?:(?<!\d)(?:[1-9]\d{0,2}(?:,\d{3})+(?![\d,])(?:\.\d+)?|\d+(?:\.\d+)*)|(?<![\w.])\.\d+)"
NUMBER_RE = re.compile(
    r"(?:(?<![\w.)\]}])[+\-−](?=\.?\d))?"  # a sign, where it is not a binary operator or a hyphen
    + _MANTISSA +
    r"(?:[⁺⁻]?[" + SUP + r"]+)?"  # 10⁵, x² after a number
    r"(?:[eE][+\-−]?\d+(?![\w]))?"  # 3.7e-14
    r"(?:\s?[×·]\s?10(?:[⁺⁻]?[" + SUP + r"]+|\^\{?[+\-−]?\d+\}?))?"  # 1.2×10⁻¹⁵, 1.2 × 10^-15
    r"(?:\s?%)?"  # 48 %, 48%
    r"|[⁺⁻]?[" + SUP + r"]+|[" + SUB + r"]+"
)
# maths written into the text itself (cell outputs, raw HTML): \( \), \[ \], $$ $$, $ $
TEXT_MATH_RE = re.compile(
    r"\\\((?P<i>.+?)\\\)|\\\[(?P<d>.+?)\\\]|\$\$(?P<dd>.+?)\$\$|(?<![\\$\w])\$(?=\S)(?P<s>[^$\n]+?)(?<=\S)\$(?![\w$])",
    re.S,
)
_MATH_DELIMS = re.compile(r"^\s*(?:\\\(|\\\[|\$\$|\$)|(?:\\\)|\\\]|\$\$|\$)\s*$")


def _classes(attrs: dict) -> set:
    return set((attrs.get("class") or "").split())


def number_key(text: str) -> str:
    """What two numbers must share to be the same number on the page: the text, spaces removed, − as -."""
    return re.sub(r"\s+", "", text).replace("−", "-")


def math_key(source: str) -> str:
    """A formula's source without its delimiters and without the spaces that do not change what it shows."""
    s = _MATH_DELIMS.sub("", source.strip())
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"\s*([^\w\\\s])\s*", r"\1", s)  # "A - I" == "A-I"; "\alpha x" keeps its space
    return "math:" + s


class _Frame:
    __slots__ = ("tag", "skip", "kind", "math", "pre", "heading", "cell", "table", "tex")

    def __init__(self, tag, skip=False, kind=None, math=False, pre=False, heading=False, cell=None, table=None,
                 tex=None):
        self.tag, self.skip, self.kind, self.math, self.pre = tag, skip, kind, math, pre
        self.heading, self.cell, self.table, self.tex = heading, cell, table, tex


class _Table:
    def __init__(self):
        self.headers: list = []  # column index -> header text
        self.row: list = []  # (column index, text) of the cells of the current row so far
        self.row_is_header = False
        self.in_thead = False
        self.seen_td = False
        self.col = 0


class _Cell:
    def __init__(self, table: _Table, col: int, header: bool):
        self.table, self.col, self.header = table, col, header
        self.text: list = []


class PageParser(HTMLParser):
    """The tokens of one page's article body, in page order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list = []
        self.in_article = False
        self.article_depth = None  # stack length at which the article element sits
        self.found_article = False
        self.section = ""
        self.title = ""
        self._in_title = False
        self.heading_text: list | None = None
        self.pieces: list = []  # [("text"|"math", str)] of the current block
        self.math_text: list | None = None
        self.math_display = False
        self.tex_note: list | None = None  # the TeX annotation of a typeset formula, while it is read
        self.tex_display = False
        self.tokens: list = []

    # --- state read from the open elements -------------------------------------------------------------
    def _skipping(self) -> bool:
        return any(f.skip for f in self.stack)

    def _kind(self) -> str:
        for f in reversed(self.stack):
            if f.kind:
                return f.kind
        return "text"

    def _pre(self) -> bool:
        return any(f.pre for f in self.stack)

    def _cell(self):
        for f in reversed(self.stack):
            if f.cell is not None:
                return f.cell
            if f.table is not None:
                return None
        return None

    # --- parser callbacks ------------------------------------------------------------------------------
    def handle_starttag(self, tag, attrs):
        attrs = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "title" and not self.stack_has("body"):
            self._in_title = True
        if not self.in_article:
            cls = _classes(attrs)
            if tag == "article" and "bd-article" in cls and not self.found_article:
                self.in_article, self.found_article = True, True
                self.article_depth = len(self.stack)
            if tag not in VOID:
                self.stack.append(_Frame(tag))
            return
        self._start_in_article(tag, attrs)

    def stack_has(self, tag):
        return any(f.tag == tag for f in self.stack)

    def _start_in_article(self, tag, attrs):
        cls = _classes(attrs)
        if tag == "mjx-container" and self.math_text is not None:
            self.tex_display = attrs.get("display") == "true"
        if (tag == "annotation" and attrs.get("encoding") == "application/x-tex" and self.math_text is not None
                and self.tex_note is None):
            # a formula typeset when the book was built: its TeX source, inside the hidden assistive MathML
            self.tex_note = []
            self.stack.append(_Frame(tag, skip=True, tex=True))
            return
        style = re.sub(r"\s+", "", attrs.get("style", "")).lower()
        skip = (
            tag in SKIP_TAGS or tag.startswith("mjx-") or bool(cls & SKIP_CLASSES)
            or "hidden" in attrs or "display:none" in style
            or (tag == "script" and attrs.get("type", "").startswith("math/tex"))
        )
        skipping = self._skipping()
        if tag == "script" and attrs.get("type", "").startswith("math/tex") and not skipping:
            # MathJax 2's record of a typeset formula's source (a page saved from a browser)
            self.math_text = []
            self.math_display = "mode=display" in attrs.get("type", "")
            self.stack.append(_Frame(tag, math=True))
            return
        if tag in BLOCK and not skipping:
            self._flush()
        if tag == "img" and not skipping and not skip and attrs.get("alt", "").strip():
            self._emit_block([("text", attrs["alt"])], kind="alt")
        if tag in VOID:
            return
        frame = _Frame(tag, skip=skip)
        if skipping or skip:
            self.stack.append(frame)
            return
        if "cell_input" in cls:
            frame.kind = "code"
        if tag == "pre":
            frame.pre = True
        if "math" in cls and tag in ("span", "div") and self.math_text is None:
            frame.math = True
            self.math_text = []
            self.math_display = tag == "div"
        if tag in HEADINGS:
            frame.heading = True
            self.heading_text = []
        if tag == "table":
            frame.table = _Table()
            frame.kind = frame.kind or ("table" if self._kind() != "code" else None)
        elif tag == "thead":
            t = self._table()
            if t:
                t.in_thead = True
        elif tag == "tr":
            t = self._table()
            if t:
                t.row, t.col, t.row_is_header = [], 0, t.in_thead
        elif tag in ("td", "th"):
            t = self._table()
            if t:
                try:
                    span = max(1, int(attrs.get("colspan") or 1))
                except ValueError:
                    span = 1
                frame.cell = _Cell(t, t.col, header=(tag == "th"))
                t.col += span
        self.stack.append(frame)

    def _table(self):
        for f in reversed(self.stack):
            if f.table is not None:
                return f.table
        return None

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if not any(f.tag == tag for f in self.stack):
            return  # a stray end tag
        while self.stack:
            frame = self.stack[-1]
            self._end_frame(frame)  # while it is still open, so that its state (pre, code, cell) holds
            self.stack.pop()
            if frame.tag == tag:
                break

    def _end_frame(self, frame):
        if frame.tex and self.tex_note is not None:
            # the formula's source where MathJax's typeset copy sits, with the delimiters Sphinx wrote around it
            tex, self.tex_note = "".join(self.tex_note), None
            if self.math_text is not None:
                self.math_text.append(("\\[" + tex + "\\]") if self.tex_display else ("\\(" + tex + "\\)"))
            return
        if not self.in_article:
            return
        if len(self.stack) - 1 <= self.article_depth:  # the article itself ends
            self._flush()
            self.in_article = False
            return
        if frame.skip or self._skipping():
            return
        if frame.math:
            source = "".join(self.math_text or [])
            self.math_text = None
            if frame.tag == "script":  # MathJax 2 keeps the source without delimiters
                source = ("\\[" + source + "\\]") if self.math_display else ("\\(" + source + "\\)")
            self.pieces.append(("math", source))
            if self.heading_text is not None:
                self.heading_text.append(source)
            cell = self._cell()
            if cell is not None:
                cell.text.append(source)
            return
        if frame.tag in BLOCK:
            if frame.heading:
                self.section = re.sub(r"\s+", " ", "".join(self.heading_text or [])).strip()
                self.heading_text = None
            self._flush()
        if frame.cell is not None:
            cell = frame.cell
            text = re.sub(r"\s+", " ", "".join(cell.text)).strip()
            t = cell.table
            t.row.append((cell.col, text))
            t.seen_td = t.seen_td or not cell.header
            if t.row_is_header or (cell.header and not t.seen_td):  # a <thead> row, or a first row of <th>
                while len(t.headers) <= cell.col:
                    t.headers.append("")
                t.headers[cell.col] = text
        if frame.tag == "thead" and self._table():
            self._table().in_thead = False

    def handle_data(self, data):
        if self._in_title and not self.in_article:
            self.title += data
        if self.tex_note is not None:
            self.tex_note.append(data)
            return
        if not self.in_article or self._skipping():
            return
        if self.math_text is not None:
            self.math_text.append(data)
            return
        self.pieces.append(("text", data))
        if self.heading_text is not None:
            self.heading_text.append(data)
        cell = self._cell()
        if cell is not None:
            cell.text.append(data)

    # --- blocks and tokens -----------------------------------------------------------------------------
    def _flush(self):
        pieces, self.pieces = self.pieces, []
        if not any(p[1].strip() for p in pieces):
            return
        if self._pre():
            # a preformatted block (printed output, code): each line is its own context
            lines: list = [[]]
            for typ, s in pieces:
                if typ == "math":
                    lines[-1].append((typ, s))
                    continue
                parts = s.split("\n")
                for k, part in enumerate(parts):
                    if k:
                        lines.append([])
                    if part:
                        lines[-1].append((typ, part))
            for line in lines:
                if any(p[1].strip() for p in line):
                    self._emit_block(line, kind=self._kind())
        else:
            self._emit_block(pieces, kind=self._kind())

    def _emit_block(self, pieces, kind):
        """Tokenize one block (a paragraph, a cell, a line of output, an alt text) and append its tokens."""
        merged: list = []
        for typ, s in pieces:
            if typ == "text" and merged and merged[-1][0] == "text":
                merged[-1] = ("text", merged[-1][1] + s)
            else:
                merged.append((typ, s))
        full = ""
        found: list = []  # (kind, text, start, end)
        formulas: list = []  # (start, end) of every formula in full: one word each in a context
        for typ, s in merged:
            if typ == "math":
                s = re.sub(r"\s+", " ", s).strip()
                if re.search(r"\d", s):
                    found.append(("math", s, len(full), len(full) + len(s)))
                formulas.append((len(full), len(full) + len(s)))
                full += s
                continue
            s = re.sub(r"\s+", " ", s)
            if kind == "code":
                parts = [("text", s)]
            else:
                parts, last = [], 0
                for m in TEXT_MATH_RE.finditer(s):
                    parts.append(("text", s[last:m.start()]))
                    parts.append(("math", m.group(0)))
                    last = m.end()
                parts.append(("text", s[last:]))
            for ptyp, ps in parts:
                if ptyp == "math":
                    if re.search(r"\d", ps):
                        found.append(("math", ps, len(full), len(full) + len(ps)))
                    formulas.append((len(full), len(full) + len(ps)))
                else:
                    for start, end in _number_spans(ps):
                        found.append((kind, ps[start:end], len(full) + start, len(full) + end))
                full += ps
        cell = self._cell() if kind != "alt" else None
        table_ctx = None
        if cell is not None:
            t = cell.table
            row_label = t.row[0][1] if t.row else re.sub(r"\s+", " ", "".join(cell.text)).strip()
            header = t.headers[cell.col] if cell.col < len(t.headers) else ""
            bits = []
            if t.row_is_header:
                bits.append("header row")
            else:
                if row_label and cell.col != 0:
                    bits.append(f"row {_short(row_label)!r}")
                if header:
                    bits.append(f"column {_short(header)!r}")
            table_ctx = ", ".join(bits)
        words = full  # full with the spaces inside formulas hidden, so that a formula is one word
        for a, b in formulas:
            words = words[:a] + words[a:b].replace(" ", "\0") + words[b:]
        for tkind, text, start, end in found:
            context = _context(words, start, end).replace("\0", " ")
            if table_ctx:
                context = f"{table_ctx}: {context}"
            if tkind != "math" and kind == "alt":
                tkind = "alt"
            self.tokens.append({
                "text": text,
                "key": math_key(text) if tkind == "math" else number_key(text),
                "kind": tkind,
                "section": self.section,
                "context": context,
            })


_GLUED = re.compile(r"[A-Za-z_]")


def _number_spans(text: str) -> list:
    """(start, end) of each number token in text. A number glued to letters is one token with them, the whole
    word: ``gpt2``, ``float64``, ``Law05``, a commit hash ``a239c76658`` (not its digit runs one by one)."""
    spans: list = []
    for m in NUMBER_RE.finditer(text):
        start, end = m.span()
        if spans and start < spans[-1][1]:
            continue  # inside a word already taken whole
        if m.group(0)[:1] in SUP + SUB + "⁺⁻":
            spans.append((start, end))
            continue
        if (start and _GLUED.match(text[start - 1])) or _GLUED.match(text[end:end + 1]):
            while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
        spans.append((start, end))
    return spans


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _context(full: str, start: int, end: int, n: int = CONTEXT_WORDS) -> str:
    """The words around full[start:end], the token itself in brackets."""
    before, after = full[:start], full[end:]
    bw, aw = before.split(), after.split()
    b = " ".join(bw[-n:])
    a = " ".join(aw[:n])
    if b and not before[-1:].isspace():
        b_sep = ""
    else:
        b_sep = " " if b else ""
    a_sep = "" if (a and not after[:1].isspace()) else (" " if a else "")
    return f"{b}{b_sep}[{_short(full[start:end], 60)}]{a_sep}{a}".strip()


def page_tokens(html: str) -> dict:
    parser = PageParser()
    parser.feed(html)
    parser.close()
    parser._flush()
    return {
        "title": re.sub(r"\s+", " ", parser.title).strip(),
        "body": "article.bd-article" if parser.found_article else None,
        "tokens": parser.tokens,
    }


def chapter_pages(root: Path) -> list:
    pages = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(".html") and name not in SKIP_FILES:
                pages.append(Path(dirpath) / name)
    return sorted(pages, key=lambda p: p.relative_to(root).as_posix())


def snapshot(root: Path) -> dict:
    pages = {}
    for path in chapter_pages(root):
        pages[path.relative_to(root).as_posix()] = page_tokens(path.read_text(encoding="utf-8"))
    return {"format": FORMAT, "source": str(root), "pages": pages}


# --- compare ---------------------------------------------------------------------------------------------

def _compared(tokens: list, code: bool) -> list:
    return [t for t in tokens if code or t["kind"] != "code"]


def _words(token: dict) -> list:
    return re.sub(r"\[[^\]]*\]", " ", token["context"]).split()


def _pair(old: list, new: list) -> list:
    """Pairs (i, j) of old[i] ~ new[j], in order, inside one differing stretch."""
    if len(old) == len(new):
        return list(zip(range(len(old)), range(len(new))))
    if len(old) * len(new) > 40000:
        return []
    sim = [[difflib.SequenceMatcher(None, _words(a), _words(b), autojunk=False).ratio() for b in new] for a in old]
    n, m = len(old), len(new)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            take = sim[i][j] + best[i + 1][j + 1] if sim[i][j] >= 0.3 else -1.0
            best[i][j] = max(best[i + 1][j], best[i][j + 1], take)
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if sim[i][j] >= 0.3 and best[i][j] == sim[i][j] + best[i + 1][j + 1]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def compare_page(before: list, after: list, strict: bool = False) -> dict:
    key = (lambda t: t["text"]) if strict else (lambda t: t["key"])
    a, b = [key(t) for t in before], [key(t) for t in after]
    changed, removed, added = [], [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        old, new = before[i1:i2], after[j1:j2]
        pairs = _pair(old, new) if op == "replace" else []
        paired_old = {i for i, _ in pairs}
        paired_new = {j for _, j in pairs}
        changed += [(old[i], new[j]) for i, j in pairs]
        removed += [t for i, t in enumerate(old) if i not in paired_old]
        added += [t for j, t in enumerate(new) if j not in paired_new]
    return {"changed": changed, "removed": removed, "added": added}


def _where(token: dict) -> str:
    section = token.get("section") or "(before the first heading)"
    kind = "" if token["kind"] in ("text",) else f" ({token['kind']})"
    return f"[{section}]{kind} {token['context']}"


def compare(before: dict, after: dict, code: bool = False, strict: bool = False, ignore=(), out=sys.stdout) -> bool:
    """Print the differences; True when there are any. Pages matching a pattern of ignore are left out."""
    pb, pa = before["pages"], after["pages"]
    names = sorted(set(pb) | set(pa))
    ignored = [p for p in names if any(fnmatch.fnmatch(p, pattern) for pattern in ignore)]
    if ignored:
        print(f"not compared: {', '.join(ignored)}", file=out)
    names = [p for p in names if p not in ignored]
    only_before = [p for p in names if p not in pa]
    only_after = [p for p in names if p not in pb]
    n_before = n_after = n_changed = n_removed = n_added = 0
    different = bool(only_before or only_after)
    for p in only_before:
        print(f"page removed: {p} ({len(_compared(pb[p]['tokens'], code))} numbers)", file=out)
    for p in only_after:
        print(f"page added: {p} ({len(_compared(pa[p]['tokens'], code))} numbers)", file=out)
    for p in names:
        tb = _compared(pb[p]["tokens"], code) if p in pb else []
        ta = _compared(pa[p]["tokens"], code) if p in pa else []
        n_before += len(tb)
        n_after += len(ta)
        if p not in pb or p not in pa:  # a whole page's numbers are removed or added
            n_removed += len(tb)
            n_added += len(ta)
            continue
        d = compare_page(tb, ta, strict=strict)
        n_changed += len(d["changed"])
        n_removed += len(d["removed"])
        n_added += len(d["added"])
        if not (d["changed"] or d["removed"] or d["added"]):
            continue
        different = True
        print(f"\n== {p}: {len(d['changed'])} changed, {len(d['removed'])} only before, "
              f"{len(d['added'])} only after", file=out)
        for old, new in d["changed"]:
            print(f"  changed  {old['text']} -> {new['text']}", file=out)
            print(f"      before: {_where(old)}", file=out)
            print(f"      after:  {_where(new)}", file=out)
        for t in d["removed"]:
            print(f"  only before  {t['text']}", file=out)
            print(f"      {_where(t)}", file=out)
        for t in d["added"]:
            print(f"  only after   {t['text']}", file=out)
            print(f"      {_where(t)}", file=out)
    print(f"{len(names)} pages, {n_before} numbers before, {n_after} after, {n_changed} changed, "
          f"{n_removed} removed, {n_added} added", file=out)
    return different


KINDS = (("text", 6), ("table", 6), ("alt", 5), ("math", 5), ("code", 6))


def summary(snap: dict) -> str:
    """A table: per page, the numbers compare reads (all but code), and the count of each kind."""
    lines = [f"{'page':<32} {'numbers':>7} " + " ".join(f"{k:>{w}}" for k, w in KINDS)]
    totals: dict = {}
    for name, page in snap["pages"].items():
        counts: dict = {}
        for t in page["tokens"]:
            counts[t["kind"]] = counts.get(t["kind"], 0) + 1
            totals[t["kind"]] = totals.get(t["kind"], 0) + 1
        note = "" if page["body"] else "  (no article body)"
        shown = len(page["tokens"]) - counts.get("code", 0)
        lines.append(f"{name:<32} {shown:>7} " + " ".join(f"{counts.get(k, 0):>{w}}" for k, w in KINDS) + note)
    shown = sum(totals.values()) - totals.get("code", 0)
    lines.append(f"{'total, ' + str(len(snap['pages'])) + ' pages':<32} {shown:>7} "
                 + " ".join(f"{totals.get(k, 0):>{w}}" for k, w in KINDS))
    return "\n".join(lines)


def _load(path: str):
    """The snapshot at path, or None after saying why it cannot be read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        _fail(f"cannot read snapshot {path}: {exc}")
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("pages"), dict):
        _fail(f"{path} is not a page-numbers snapshot (format {FORMAT!r})")
        return None
    return data


def _fail(message: str) -> int:
    print(f"page_numbers: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("snapshot", help="record every number of every page of a built book")
    s.add_argument("build_html", help="the book's HTML output, e.g. _build/html")
    s.add_argument("out", help="the snapshot to write (JSON)")
    c = sub.add_parser("compare", help="name every number that differs between two snapshots")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--fail-on-change", action="store_true", help="exit 1 if anything differs")
    c.add_argument("--code", action="store_true", help="also compare the numbers in code cells' source")
    c.add_argument("--strict", action="store_true", help="compare the numbers' texts exactly (spaces, minus signs)")
    c.add_argument("--ignore-page", action="append", default=[], metavar="GLOB",
                   help="leave out the pages matching GLOB (repeatable), e.g. book/environment.html, whose "
                        "versions are the building machine's")
    args = ap.parse_args(argv)
    if args.command == "snapshot":
        root = Path(args.build_html)
        if not root.is_dir():
            return _fail(f"{root} is not a folder")
        try:
            snap = snapshot(root)
        except (OSError, UnicodeDecodeError) as exc:
            return _fail(f"cannot read {root}: {exc}")
        if not snap["pages"]:
            return _fail(f"no pages under {root}")
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(snap, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(summary(snap))
        print(f"written to {out}")
        return 0
    before, after = _load(args.before), _load(args.after)
    if before is None or after is None:
        return 2
    try:
        different = compare(before, after, code=args.code, strict=args.strict, ignore=args.ignore_page)
    except (KeyError, TypeError) as exc:
        return _fail(f"a snapshot lacks a field compare needs: {exc!r}")
    return 1 if (different and args.fail_on_change) else 0


if __name__ == "__main__":
    sys.exit(main())
