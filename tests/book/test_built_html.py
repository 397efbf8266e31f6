"""Checks of the built HTML: every page is there, executed, and free of errors."""

import ast
import json
import re
from pathlib import Path

import pytest

from .conftest import ROOT, toc_pages

pytestmark = pytest.mark.book


def _notebook_pages():
    return [(d, p) for d, p in toc_pages() if (ROOT / f"{d}.ipynb").exists()]


@pytest.mark.parametrize("doc, page", toc_pages(), ids=[d for d, _ in toc_pages()])
def test_every_toc_page_is_built(built_book, doc, page):
    html = (built_book / page).read_text(encoding="utf-8")
    assert "<h1" in html


@pytest.mark.parametrize("doc, page", _notebook_pages(), ids=[d for d, _ in _notebook_pages()])
def test_every_notebook_was_executed_without_errors(built_book, doc, page):
    """Each code cell that the notebook has produced output; no tracebacks or stderr in the page."""
    html = (built_book / page).read_text(encoding="utf-8")
    n_code = sum(
        1 for c in json.loads((ROOT / f"{doc}.ipynb").read_text())["cells"][1:] if c["cell_type"] == "code"
    )
    assert n_code > 0
    assert html.count('class="cell_output') >= 1
    for marker in ("Traceback (most recent call last)", "output stderr", "output traceback"):
        assert marker not in html, f"{page} contains {marker!r}"


def test_index_redirects_to_the_landing_page(built_book):
    index = (built_book / "index.html").read_text(encoding="utf-8")
    assert "book/intro.html" in index


def test_mnist_page_shows_the_digit_grid(built_book):
    html = (built_book / "book" / "data.html").read_text(encoding="utf-8")
    images = re.findall(r'<img[^>]+src="([^"]+\.png)"', html)
    assert images, "no figure on the data page"
    for src in images:
        assert (built_book / "book" / src).resolve().is_file(), src
    assert "pixel mean 0.13251" in html
    assert "1,115,394 characters, 65 distinct" in html


def test_bibliography_is_rendered(built_book):
    html = (built_book / "book" / "references.html").read_text(encoding="utf-8")
    assert "Neural Computation</em>, 15(6):1373" in html and "Belkin" in html
    intro = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    assert re.search(r"href=\"references.html#id\d+\"", intro)


def test_findings_paste_every_number_and_link_to_their_evidence(built_book):
    """'What this book finds': every {glue:text} slot of intro.md became text with a number, none is left
    empty, and each finding's evidence link lands on an id that exists in the page it points to."""
    source = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    section = source.split("## What this book finds", 1)[1].split("\n## ", 1)[0]
    keys = re.findall(r"\{glue:text\}`[^`]+::([^`:]+)(?::[^`]*)?`", section)
    n_slots = len(keys)
    html = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    part = html.split('id="what-this-book-finds"', 1)[1].split("<section", 1)[0]
    pasted = re.findall(r'<span class="pasted-text">([^<]*)</span>', part)
    assert n_slots > 20 and len(pasted) == n_slots
    assert all(p.strip() for p in pasted)
    docs = re.findall(r"\{glue:text\}`([a-z_]+)\.ipynb::", section)
    for doc, key, text in zip(docs, keys, pasted):  # exactly what the chapter published, as it wrote it
        glued = json.loads((built_book.parent / "jupyter_execute" / "book" / f"{doc}.glue.json").read_text())
        assert text == ast.literal_eval(glued[key]["data"]["text/plain"]), (doc, key)
    for key, text in zip(keys, pasted):  # verdict words, and numbers everywhere else
        words = key.endswith("_outcome") or key == "vo_follows_both"
        assert words or re.search(r"\d", text), (key, text)
    links = re.findall(r'href="([a-z_]+\.html)#([^"]+)"', part)
    assert len(links) == source.split("## What this book finds", 1)[1].split("\n## ", 1)[0].count("[Evidence]")
    for page, anchor in links:
        assert f'id="{anchor}"' in (built_book / "book" / page).read_text(encoding="utf-8"), (page, anchor)
