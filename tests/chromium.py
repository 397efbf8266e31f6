"""Where the browser tests find Chromium (Debian's package; never a browser Playwright downloads)."""

import os
import shutil
from pathlib import Path


def chromium_path() -> str | None:
    """``PROBDR_CHROMIUM``, else Debian's ``/usr/bin/chromium``, else ``chromium`` or ``chromium-browser`` on PATH."""
    for candidate in (os.environ.get("PROBDR_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    """A free TCP port on the loopback address (for the servers the browser tests start)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require(what: str, missing: str):
    """Skip a browser test whose tools are missing, or fail it where they are required (CI sets
    ``PROBDR_REQUIRE_BROWSER=1``)."""
    import pytest

    if os.environ.get("PROBDR_REQUIRE_BROWSER") == "1":
        pytest.fail(f"the {what} is required here (PROBDR_REQUIRE_BROWSER=1) but {missing}", pytrace=False)
    pytest.skip(f"{what} skipped: {missing}")
