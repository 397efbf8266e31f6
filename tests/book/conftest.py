"""Build the book once per test session, unless it is built already; the book tests read the result.

``_build/html`` is rebuilt (every notebook executed, warnings failing the build) unless it is a successful
build of the checkout as it is now: ``tools/build_book.py`` records the digest of its inputs, so ``make test``
right after ``make book`` tests that build, and any change to a chapter, the package or the configuration
builds again. Under pytest-xdist the workers share one build: the first to ask builds while holding a lock on
``_build/.book-build.lock``, the others wait for it and then read the result (or its failure).

``PROBDR_FRESH_BUILD=1`` builds even when the inputs are unchanged; ``PROBDR_REUSE_BUILD=1`` tests whatever
``_build/html`` holds, stale or not (handy while editing these tests).
"""

import fcntl
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
    build_book = tool("build_book")
    lock = ROOT / "_build" / ".book-build.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # one worker builds; the others wait here
        if os.environ.get("PROBDR_FRESH_BUILD") == "1" and not _built_this_session():
            status = build_book.build(quiet=True)
        elif build_book.is_current():
            return HTML
        elif build_book.failed_before():
            status = 1
        else:
            status = build_book.build(quiet=True)
        _mark_built_this_session()
    if status != 0:
        pytest.fail("the book build failed (a notebook raised, or Sphinx warned); reports printed above",
                    pytrace=False)
    return HTML


def _session_id() -> str:
    """One id for every worker of this test run (pytest-xdist's, else this process's)."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid())


def _built_this_session() -> bool:
    marker = ROOT / "_build" / ".book-build.session"
    return marker.is_file() and marker.read_text() == _session_id()


def _mark_built_this_session() -> None:
    (ROOT / "_build" / ".book-build.session").write_text(_session_id())


def toc_pages():
    """Every page in the table of contents, as (docname, relative html path).

    Read from ``_toc.yml`` at collection time, so a chapter uncommented there is
    tested with no change to the tests.
    """
    return [(d, f"{d}.html") for d in notebooks.toc_pages(ROOT / "_toc.yml")]
