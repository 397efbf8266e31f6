"""The front-end tests start a Jupyter server and a browser (a minute or two): run them last, after the
unit tests and the book's tests, so that a quick failure shows up first."""

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: "/tests/frontend/" in str(item.fspath))  # stable: order otherwise kept
