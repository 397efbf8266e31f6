"""Test-suite wiring: the order of the work, one process or several.

``make test`` is one pytest run over every core (pytest-xdist, ``-n auto --dist loadscope
--no-loadscope-reorder``). Each test module (or test class) is one unit of work that stays on one worker, so each
module's browser, server or replica fixtures are made once; README's install lines run side by side inside their
module (``tests/install``). (xdist's ``loadgroup`` would be the tool for grouping otherwise, but with pytest 9 it
groups nothing: it renames the tests' ids through an attribute pytest 9 no longer reads.) The book tests
(``tests/book``) share a session fixture that builds the book once for all workers, or reuses the build
``make book`` left when nothing it reads has changed (``tests/book/conftest.py``).

The order differs with the number of processes (this hook alone sets it, for every folder):

- **one process** (``pytest`` alone): unit tests first, so that a quick failure shows up first, then the tests
  of the built book (browser tests last among them), then README's install lines, the Colab replica and
  JupyterLab;
- **several workers**: the longest modules first (:data:`PARALLEL_ORDER`), then the unit tests, whose many short
  modules fill the workers' last minutes evenly. xdist hands out modules in this order as workers free up, so a
  long module handed out last would leave the other workers idle while it runs. When the book is to be built in this
  run (CI, or a checkout changed since ``make book``), the first book module builds it and the others wait for that
  build, so they come after the unit tests (:data:`WHILE_THE_BOOK_BUILDS`), which the other workers run meanwhile.
"""

import os

import pytest

#: The thread counts each worker's maths libraries (PyTorch's OpenMP, MKL, OpenBLAS) and its subprocesses (kernels,
#: pip) start with under several workers: the cores shared out, so that two workers on two cores do not each run
#: two threads that spin waiting for a core (the unit suite ran 17 % faster so). Set here, before anything imports
#: torch, and only where the environment sets none; the names set are recorded in PROBDR_TEST_THREADS so that the
#: book build (tools/build_book.py) removes them again and builds with the machine's own settings, as make book does.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
if os.environ.get("PYTEST_XDIST_WORKER") and not any(v in os.environ for v in THREAD_VARIABLES):
    _workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    _threads = str(max(1, (os.cpu_count() or 1) // max(1, _workers)))
    os.environ.update({v: _threads for v in THREAD_VARIABLES}, PROBDR_TEST_THREADS=",".join(THREAD_VARIABLES))

#: The units of work in the order the workers take them under several workers: longest first, by what each took
#: in a run on two cores (seconds; ``pytest --durations``), so that no worker is left with a long one while the others
#: have finished. The first entry a test's path contains gives its place; a path none contains comes last. Listed
#: apart is what takes about a minute or more.
PARALLEL_ORDER = (
    "/tests/install/",                    # README's install lines, side by side (mostly waiting on the index and disk)
    "/tests/colab/",                      # every reader notebook executed in the Colab replica (350 s)
    "/tests/book/test_live_code.py",      # a Jupyter server, four chapters' cells run from the page (250-340 s)
    "/tests/book/test_access.py",         # axe on every page in both modes, keyboard, print (150-300 s)
    "/tests/book/test_screens.py",        # phone and desktop, contrast, static figures, weight (80-160 s)
    "/tests/unit/test_mnist_tables.py",   # the MNIST chapter's tables recomputed (50-115 s)
    "/tests/book/test_browser.py",        # every page loaded and inspected once (50-100 s)
    "/tests/book/test_live_figures.py",   # every live figure's controls (50-95 s)
    "/tests/frontend/",                   # JupyterLab and its kernel (40-70 s)
    "/tests/unit/test_ipywidgets7.py",    # three unit modules again under Colab's widget versions (25-55 s)
    "/tests/book/",                       # the book's other modules (maths, site, built HTML)
    "/tests/unit/test_families.py",       # the statistics against statsmodels (40 s)
    "/tests/unit/",
)


#: The order while the book is being built in this run: the first book module (it builds), then what needs no built
#: book, then the other book modules, longest first as above.
WHILE_THE_BOOK_BUILDS = (
    "/tests/install/", "/tests/colab/", "/tests/book/test_live_code.py",
    "/tests/unit/test_mnist_tables.py", "/tests/frontend/", "/tests/unit/test_ipywidgets7.py",
    "/tests/unit/test_families.py", "/tests/unit/",
    "/tests/book/test_access.py", "/tests/book/test_screens.py", "/tests/book/test_browser.py",
    "/tests/book/test_live_figures.py", "/tests/book/",
)
#: Set by the first process (pytest alone, or xdist's controller) before the workers start, which inherit it: whether
#: the book is built in this run, decided once, so that every worker orders the work the same way (xdist requires
#: it; a worker that looked for itself could find the build another worker has begun).
BOOK_TO_BUILD = "PROBDR_BOOK_TO_BUILD"


def pytest_configure(config):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ[BOOK_TO_BUILD] = "1" if _book_to_build() else "0"


def _book_to_build() -> bool:
    """Whether the book fixture (tests/book/conftest.py) will build the book rather than read the one there."""
    from tests.tool_modules import tool

    build_book = tool("build_book")
    if os.environ.get("PROBDR_REUSE_BUILD") == "1" and (build_book.HTML / "index.html").exists():
        return False
    return os.environ.get("PROBDR_FRESH_BUILD") == "1" or not build_book.is_current()


def _serial_rank(item) -> int:
    path = str(item.fspath)
    if "/tests/book/" in path:
        return 2 if item.get_closest_marker("browser") else 1
    if "/tests/install/" in path:  # new virtual environments from PyPI: the slowest, after the book
        return 3
    if "/tests/colab/" in path:  # every reader notebook executed once more (several minutes)
        return 4
    if "/tests/frontend/" in path:  # a Jupyter server and a browser
        return 5
    return 0


def _parallel_rank(item) -> int:
    path = str(item.fspath)
    order = WHILE_THE_BOOK_BUILDS if os.environ.get(BOOK_TO_BUILD) == "1" else PARALLEL_ORDER
    return next((rank for rank, part in enumerate(order) if part in path), len(order))


def pytest_collection_modifyitems(config, items):
    # Every xdist worker collects, and the controller checks that all of them collected the same order; the
    # workers know they are workers from PYTEST_XDIST_WORKER.
    items.sort(key=_parallel_rank if os.environ.get("PYTEST_XDIST_WORKER") else _serial_rank)  # stable sort


@pytest.fixture(autouse=True)
def _seed_global_rngs():
    """Tests that draw from the global torch / NumPy generators see the same numbers on every run."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    np.random.seed(0)
    yield


#: Why a browser test can be skipped: what tests/chromium.py's ``require`` and the browser fixtures say is missing.
BROWSER_MISSING = ("no Chromium found", "Playwright for Python is not installed")
#: How to get Chromium where it is missing (README's prerequisites say the same).
CHROMIUM_INSTALL = "sudo apt-get install chromium   (Debian, Ubuntu; or set PROBDR_CHROMIUM to a Chromium binary)"


def _skip_reason(report) -> str:
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr or "")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Count the browser tests that did not run for want of Chromium or Playwright (:func:`pytest_unconfigure` says
    so after everything else)."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if any(m in _skip_reason(r) for m in BROWSER_MISSING)]
    if skipped:
        config.stash[_BROWSER_SKIPS] = (len(skipped), sorted({m for r in skipped for m in BROWSER_MISSING
                                                              if m in _skip_reason(r)}))


_BROWSER_SKIPS = pytest.StashKey[tuple]()


def pytest_unconfigure(config):
    """Say in the very last lines how many browser tests did not run and why, with the line that installs Chromium:
    without it the suite passes, and a skip list is easy to miss. (CI sets PROBDR_REQUIRE_BROWSER=1, which makes them
    fail instead.)"""
    found = config.stash.get(_BROWSER_SKIPS, None)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not found or reporter is None:
        return
    n, reasons = found
    reporter.write_sep("=", f"{n} browser tests did not run", yellow=True, bold=True)
    reporter.write_line(
        f"{n} tests that check the built book in a browser (every page offline, maths, live figures, Live Code, "
        f"search, dark mode, phone and desktop sizes, print) were skipped: {'; '.join(reasons)}.")
    reporter.write_line(f"Install Chromium and run the tests again:  {CHROMIUM_INSTALL}")
    reporter.write_line("(CI sets PROBDR_REQUIRE_BROWSER=1, which makes them fail instead of being skipped.)")
