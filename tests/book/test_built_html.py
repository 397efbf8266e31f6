"""Checks of the built HTML: every page is there, executed, and free of errors."""

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
