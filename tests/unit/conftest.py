"""Fixtures shared by the unit tests of several modules."""

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Tiny matrices: one torch thread avoids waiting on a busy second core (restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
