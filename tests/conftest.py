"""Test-suite wiring: the order of the work, one process or several.

``make test`` is one pytest run over every core (pytest-xdist, ``-n auto --dist loadscope
--no-loadscope-reorder``). Each test module (or test class) is one unit of work that stays on one worker, so each
module's browser, server or replica fixtures are made once; the install lines are a class each, so that two of
them can install side by side. (xdist's ``loadgroup`` would be the tool for that, but with pytest 9 it groups
nothing: it renames the tests' ids through an attribute pytest 9 no longer reads.) The book tests
(``tests/book``) share a session fixture that builds the book once for all workers, or reuses the build
``make book`` left when nothing it reads has changed (``tests/book/conftest.py``).

The order differs with the number of processes:

- **one process** (``pytest`` alone): unit tests first, so that a quick failure shows up first, then the tests
  of the built book (browser tests last among them), then README's install lines;
- **several workers**: the longest modules first (the Colab replica, the install lines, the servers and
  browsers over the built book), then the unit tests, whose many short modules fill the workers' last minutes
  evenly. xdist hands out modules in this order as workers free up.
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

#: Rank of a test module's tier when several workers share the work: lower starts earlier. The long tiers go
#: first so that no worker is left with one of them while the others have finished.
PARALLEL_RANK = (
    ("/tests/install/", 0),    # README's install lines, each in a new virtual environment (a unit each)
    ("/tests/colab/", 1),      # every reader notebook executed in the Colab replica
    ("/tests/frontend/", 2),   # JupyterLab and Chromium
    ("/tests/book/", 3),       # the built book: its first module builds it when it is out of date
    ("/tests/unit/", 5),
)


def _serial_rank(item) -> int:
    path = str(item.fspath)
    if "/tests/install/" in path:  # new virtual environments from PyPI: the slowest, last
        return 3
    if "/tests/book/" in path:
        return 2 if item.get_closest_marker("browser") else 1
    return 0


def _parallel_rank(item) -> int:
    path = str(item.fspath)
    return next((rank for part, rank in PARALLEL_RANK if part in path), 4)


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
