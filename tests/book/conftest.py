"""Build the book once per test session; the book tests read the result.

Set ``PROBDR_REUSE_BUILD=1`` to test an existing ``_build/html`` without
rebuilding (handy while editing these tests; ``make test`` always rebuilds).
"""

import os
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "tools"))


@pytest.fixture(scope="session")
def built_book():
    """Path of the built site; fails (with Jupyter Book's error reports printed) if the build fails."""
    if os.environ.get("PROBDR_REUSE_BUILD") == "1" and (HTML / "index.html").exists():
        return HTML
    import build_book

    status = build_book.build(quiet=True)
    if status != 0:
        pytest.fail("the book build failed (a notebook raised, or Sphinx warned); reports printed above",
                    pytrace=False)
    return HTML


def _toc_files(entry):
    """Files of one toc entry and everything nested under it (chapters, parts, sections)."""
    out = [entry["file"]] if isinstance(entry, dict) and "file" in entry else []
    if isinstance(entry, dict):
        for key in ("chapters", "parts", "sections"):
            for child in entry.get(key) or []:
                out += _toc_files(child)
    return out


def toc_pages():
    """Every page in the table of contents, as (docname, relative html path).

    Read from ``_toc.yml`` at collection time, so a chapter uncommented there is
    tested with no change to the tests.
    """
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    docs = [toc["root"]] + _toc_files({k: v for k, v in toc.items() if k in ("chapters", "parts")})
    docs = [str(Path(d).with_suffix("")) if Path(d).suffix in (".md", ".ipynb") else d for d in docs]
    return [(d, f"{d}.html") for d in dict.fromkeys(docs)]
