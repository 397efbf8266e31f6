"""Maths everywhere it is maths: in the search results, and in every sentence the book writes.

- Sphinx indexes a heading's maths as its TeX source, so the search index's titles are turned into text when the
  book is built (``tools/sphinx_local_assets.py``), and the search page typesets the maths of its summaries.
- Generated sentences (the computed paragraphs the chapters display, captions of live figures) write maths as
  MathJax, like the prose around them: a scan of the text each page shows finds no ASCII maths (``lambda_max``,
  ``d_q``, ``X_t``, ``D^{-1/2}``, TeX commands, spelled-out Greek letters) in any sentence outside code and maths,
  and no bare Greek letter in a computed sentence.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import toc_pages
from .screens import open_page, screen, settle, wait_search_done
from .test_browser import browser, server  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.book]

#: ASCII maths, by kind: what a sentence must not show outside code and maths.
ASCII_MATHS = {
    "a subscript with _": re.compile(r"\b[A-Za-z]{1,8}_(?:\{[^}]*\}|[A-Za-z0-9]{1,6})(?![A-Za-z0-9_])"),
    "a TeX command": re.compile(r"\\[A-Za-z]{2,}|\\[()\[\]]"),
    "a power with ^": re.compile(r"[A-Za-z0-9)\]]\^\{?[-(]?[0-9A-Za-z]"),
    "a spelled-out Greek letter": re.compile(r"\b(?:lambda|kappa|beta|eta|sigma|gamma|alpha|theta)\b"),
}
#: Greek letters used as symbols: a computed sentence writes them as MathJax ($\kappa$), as the prose does.
BARE_GREEK = re.compile(r"[αβγδεηθκλμνξπρστφχψωΓΔΘΛΞΠΣΦΨΩ]")

# Every text node the reader sees in the article, with where it sits: in a sentence (p, li, figure captions, table
# captions, headings) or elsewhere, and whether it is a cell output (computed). Code, maths, canvases and the
# inside of live figures (labels, readouts: figure text, like axis labels) are left out; a live figure's caption
# is a sentence.
_TEXTS_JS = """() => {
  const skip = 'pre, code, kbd, samp, .math, mjx-container, script, style, canvas, .headerlink, nav, .cell_input';
  const root = document.querySelector('article') || document.querySelector('main') || document.body;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const out = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement, t = n.textContent;
    if (!p || !t.trim() || p.closest(skip)) continue;
    const live = p.closest('.probdr-live');
    if (live && !p.closest('figcaption')) continue;
    const sentence = p.closest('p, li, figcaption, caption, h1, h2, h3, h4, h5, h6, dd, blockquote');
    if (!sentence || sentence.closest('td, th')) continue;
    out.push({text: t, computed: !!p.closest('.cell_output'), tag: sentence.tagName});
  }
  return out;
}"""


def test_search_index_titles_are_text_not_tex(built_book):
    raw = (built_book / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(raw[raw.index("(") + 1:raw.rindex(")")])
    titles = list(data["titles"]) + list(data["alltitles"])
    bad = [t for t in titles if re.search(r"\\[A-Za-z]|[_^]\{", t)]
    assert not bad, f"titles in searchindex.js with TeX: {bad}"
    assert any("κ" in t for t in data["alltitles"]), "the κ of a heading should read as κ"


@pytest.mark.browser
@pytest.mark.parametrize("query", ["sweeps", "attention", "Laplacian"])
def test_search_results_show_no_raw_tex(browser, server, query):  # noqa: F811
    """The reader's search: result titles and summaries show maths typeset (or as text), never TeX source."""
    with screen(browser, "desktop") as ctx:
        page = ctx.new_page()
        page.goto(f"{server}/search.html?q={query}", wait_until="load")
        page.wait_for_function("""() => /Search finished|did not match/.test(
          (document.getElementById('search-results') || {}).textContent || '')""", timeout=60_000)
        page.wait_for_function("""() => { const items = document.querySelectorAll('#search-results li');
          return items.length > 0 && Array.from(items).every((li) => li.querySelector('p.context'));}""",
                               timeout=60_000)
        settle(page, live=False)
        wait_search_done(page, f"the search for {query!r} to finish and typeset its summaries")
        seen = page.evaluate("""() => { const r = document.getElementById('search-results').cloneNode(true);
          const maths = r.querySelectorAll('mjx-container').length;
          r.querySelectorAll('mjx-container').forEach((m) => m.remove());
          return {text: r.textContent, maths, items: r.querySelectorAll('li').length}; }""")
        page.close()
    assert seen["items"] > 0, f"no results for {query!r}"
    raw = re.findall(r".{0,30}(?:\\[()\[\]]|\\[A-Za-z]{2,}).{0,30}", seen["text"])
    assert not raw, f"search results for {query!r} show raw TeX: {raw[:5]}"
    if query == "attention":
        assert seen["maths"] > 0, "the summaries' maths should be typeset"


@pytest.mark.browser
@pytest.mark.parametrize("doc, rel", toc_pages(), ids=[d for d, _ in toc_pages()])
def test_sentences_write_maths_as_mathjax(browser, server, doc, rel):  # noqa: F811
    with screen(browser, "desktop") as ctx:
        page = open_page(ctx, f"{server}/{rel}", live=False)  # after MathJax has typeset
        texts = page.evaluate(_TEXTS_JS)
        page.close()
    bad = []
    for t in texts:
        for kind, pattern in ASCII_MATHS.items():
            for m in pattern.finditer(t["text"]):
                bad.append(f"{kind}: ...{t['text'][max(0, m.start() - 40):m.end() + 30]!r} ({t['tag']})")
        if t["computed"]:
            for m in BARE_GREEK.finditer(t["text"]):
                bad.append(f"a bare Greek letter in a computed sentence: "
                           f"...{t['text'][max(0, m.start() - 40):m.end() + 30]!r} ({t['tag']})")
    assert not bad, f"{rel}: maths not written as maths ({len(bad)}):\n" + "\n".join(bad[:20])


def test_the_scan_finds_what_it_should():
    """The patterns flag the issue's examples and leave ordinary words and numbers alone."""
    flagged = ["lambda_max", "d_q", "X_t", "A_sym", "L_{\\mathrm{rw}}", "D^{-1/2}", "\\(A - I\\)", "kappa = 3"]
    clean = ["the meta-data", "betas", "x = 2", "A − I", "10 % of", "x-axis", "a sentence."]
    for s in flagged:
        assert any(p.search(s) for p in ASCII_MATHS.values()), s
    for s in clean:
        assert not any(p.search(s) for p in ASCII_MATHS.values()), s
    assert BARE_GREEK.search("η = 0.1") and not BARE_GREEK.search("eta")
