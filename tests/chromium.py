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
