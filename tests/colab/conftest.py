"""The Colab-replica run executes every reader notebook once more (several minutes): after the unit tests."""

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: "/tests/colab/" in str(item.fspath))  # stable: order otherwise kept
