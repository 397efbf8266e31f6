"""Build the book once per test session; the book tests read the result.

Set ``PROBDR_REUSE_BUILD=1`` to test an existing ``_build/html`` without
rebuilding (handy while editing these tests; ``make test`` always rebuilds).
"""

import os
from pathlib import Path

import pytest

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
notebooks = tool("notebooks")  # tools/notebooks.py: the repository's notebook tooling
HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_book():
    """Path of the built site; fails (with Jupyter Book's error reports printed) if the build fails."""
    if os.environ.get("PROBDR_REUSE_BUILD") == "1" and (HTML / "index.html").exists():
        return HTML
    status = tool("build_book").build(quiet=True)
    if status != 0:
        pytest.fail("the book build failed (a notebook raised, or Sphinx warned); reports printed above",
                    pytrace=False)
    return HTML


def toc_pages():
    """Every page in the table of contents, as (docname, relative html path).

    Read from ``_toc.yml`` at collection time, so a chapter uncommented there is
    tested with no change to the tests.
    """
    return [(d, f"{d}.html") for d in notebooks.toc_pages(ROOT / "_toc.yml")]
