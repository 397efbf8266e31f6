"""The repository's tools (``tools/*.py``) as modules, for the tests.

``tools/`` is a folder of scripts, not a package, and no part of what a reader installs: a test loads a tool from
its file with :func:`tool`. Each file is loaded once, under its own name in ``sys.modules`` (the name the tools
load one another under, see ``tools/sphinx_local_assets.py``), so a test and a tool share one module.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def tool(name: str):
    """``tools/NAME.py`` as a module, loaded from its file the first time it is asked for."""
    path = TOOLS / f"{name}.py"
    module = sys.modules.get(name)
    if module is not None and Path(getattr(module, "__file__", None) or "").resolve() == path:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
