"""At most a tenth of each chapter's prose reads its own tables out (issue 35, item 4; tools/prose_tables.py)."""

import pytest

from tests.tool_modules import tool

from .conftest import toc_pages

pytestmark = pytest.mark.book

PT = tool("prose_tables")


@pytest.mark.parametrize("doc, page", toc_pages(), ids=[d for d, _ in toc_pages()])
def test_prose_says_what_its_tables_mean_rather_than_reading_them_out(built_book, doc, page):
    result = PT.page_share((built_book / page).read_text(encoding="utf-8"))
    assert result["words"] > 0, f"{page}: no prose found in the article body"
    recitals = "\n".join(f"  - {s} (in a table: {', '.join(f'{x:g}' for x in shared)})"
                         for s, shared in result["sentences"])
    assert result["share"] <= PT.LIMIT, (
        f"{page}: {result['share']:.1%} of the prose ({result['reciting']} of {result['words']} words) reads its "
        f"tables out, above {PT.LIMIT:.0%}; say what these sentences' numbers mean, or point to the table:\n"
        f"{recitals}")
