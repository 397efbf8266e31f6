"""Each chapter is as long as what it teaches, and no printout stands in the reading path (issues 42.6, 43.2-3;
tools/page_words.py holds the limits and says what is counted)."""

import pytest

from tests.tool_modules import tool

from .conftest import toc_pages

pytestmark = pytest.mark.book

PW = tool("page_words")


@pytest.mark.parametrize("doc, page", toc_pages(), ids=[d for d, _ in toc_pages()])
def test_a_chapter_stays_within_its_length_and_printout_limits(built_book, doc, page):
    words = PW.page_words((built_book / page).read_text(encoding="utf-8"))
    limits = PW.LIMITS.get(doc)
    if limits is None:
        assert words["output"] <= PW.LIMITS["book/laplacian_eigenmaps"][1], (
            f"{page}: {words['output']} words of printed output; make the printouts tables or sentences")
        return
    for what, limit in zip(("prose", "output", "rendered"), limits):
        if limit is not None:
            assert words[what] <= limit, (
                f"{page}: {words[what]} {what} words, above the limit of {limit} (tools/page_words.py); cut what "
                "is said twice, what a table already says, or move the record to an appendix page")
