"""A tool (``tools/NAME.py``) as a module: the one loader the tools and the tests share.

``tools/`` is a folder of scripts, not a package, and no part of what a reader installs. A tool is loaded from its
file once, under its own name in ``sys.modules``, so every user of it shares one module whether or not ``tools/``
is on ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent


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
