"""Benchmark: the live figures in Chromium, on the built book (``make book`` first).

Two measurements, printed and never asserted (tests never assert seconds), each against its budget in the same run:

- key press to painted frame for every slider of every live figure (budget 50 ms), with the figure script's own
  redraw time; written to ``_build/live-figures.json`` with each page's weight;
- first contentful paint of each page with a live figure, median of 3 fresh visits, the network blocked.

They drive the same browser, static server and pages as ``tests/book/test_live_figures.py``, whose fixtures they
use, so they live there as tests marked ``benchmark``. ``make test`` leaves that marker out (``addopts`` in
pyproject.toml); this script runs only them:

    python benchmarks/bench_browser.py
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    sys.exit(pytest.main([str(ROOT / "tests" / "book" / "test_live_figures.py"), "-m", "benchmark", "-s",
                          "-p", "no:xdist", "-q", "--rootdir", str(ROOT)]))
