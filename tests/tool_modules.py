"""The repository's tools (``tools/*.py``) as modules, for the tests: :func:`tool` is ``tools/tool_loader.py``'s,
loaded here from its file and registered as ``tool_loader``, which is how ``tools/sphinx_local_assets.py`` finds
it too when a test loads that extension."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"

if "tool_loader" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("tool_loader", TOOLS / "tool_loader.py")
    sys.modules["tool_loader"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["tool_loader"])

tool = sys.modules["tool_loader"].tool
