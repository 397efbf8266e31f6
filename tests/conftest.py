"""Test-suite wiring: unit tests run first, then the tests that need the built book, then README's install lines.

``make test`` is one pytest run. The book tests (``tests/book``) share a
session fixture that builds the book once (every notebook executed); pytest
runs them after all the unit tests so that a quick failure shows up first.
"""

import pytest


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = str(item.fspath)
        if "/tests/install/" in path:  # new virtual environments from PyPI: the slowest, last
            return 3
        if "/tests/book/" in path:
            return 2 if item.get_closest_marker("browser") else 1
        return 0

    items.sort(key=rank)  # sort is stable: order within each group is kept


@pytest.fixture(autouse=True)
def _seed_global_rngs():
    """Tests that draw from the global torch / NumPy generators see the same numbers on every run."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    np.random.seed(0)
    yield
