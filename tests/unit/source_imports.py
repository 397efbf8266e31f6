"""Reading imports from source with ``ast``, shared by the layering test (test_layers.py) and the import-cycle
test (test_import_cycles.py)."""

from __future__ import annotations

import ast


def resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom in ``module`` (a package's ``__init__`` when ``is_package``) names."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))
