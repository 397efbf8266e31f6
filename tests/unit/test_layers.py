"""The package's three layers, read from its source: imports only go downward, and no module reaches into another's
private names.

    core          maths, measurements, statistics, experiments, data, the chapters' facts (chapter_facts,
                  mnist_facts, verdicts)   (everything not listed below)
    presentation  probdr_lite.presentation.figures.*, probdr_lite.presentation.plotting, probdr_lite.presentation.widgets: labels, colours, prose, plots
    chapters      book/src/*.py (not part of the package)

The walk parses every module with ``ast`` and looks at every import, including those inside functions, with
relative imports resolved. It fails on

1. a core module importing a presentation module (an upward import), and
2. a module importing another module's private name (``from probdr_lite.x import _y``) or using one through a
   module it imported (``import probdr_lite.x as X; X._y``). Private *modules* (``_validation``, ``_threads``,
   ``_elbo``, ``_tiled_attention``) are the package's shared internals and may be imported; their names are public
   to the package.

Modules of other helpers' branches still being fixed are listed in KNOWN_OFFENDERS, each an xfail(strict=True):
the test of such a module fails as soon as the module is clean, so that the entry gets deleted. The integrator
empties the list.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .source_imports import resolve

PACKAGE = Path(__file__).resolve().parents[2] / "probdr_lite"

PRESENTATION = ("probdr_lite.presentation",)

#: module -> why it still fails (to be emptied when the owners' branches are merged)
KNOWN_OFFENDERS: dict = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = sorted(module_name(p) for p in PACKAGE.rglob("*.py"))


def is_presentation(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in PRESENTATION)


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_source(module: str) -> tuple[str, bool]:
    """(source text, is a package) of a probdr_lite module."""
    path = PACKAGE.parent / (module.replace(".", "/") + ".py")
    if path.exists():
        return path.read_text(), False
    return (PACKAGE.parent / module.replace(".", "/") / "__init__.py").read_text(), True


def is_module(name: str) -> bool:
    base = PACKAGE.parent / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports(module: str, source: str | None = None, is_package: bool = False):
    """Yield (line, imported module, imported name or None) for every import of ``module`` (read from the package
    unless ``source`` is given), and (line, module, attribute) for every attribute read through a name bound to a
    probdr_lite module."""
    if source is None:
        source, is_package = module_source(module)
    tree = ast.parse(source)
    bound = {}  # local name -> probdr_lite module it refers to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("probdr_lite"):
                    yield node.lineno, alias.name, None
                    bound[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source_module = resolve(module, is_package, node)
            if not source_module.startswith("probdr_lite"):
                continue
            for alias in node.names:
                submodule = f"{source_module}.{alias.name}"
                if is_module(submodule):  # "from probdr_lite import unrolled as U"
                    yield node.lineno, submodule, None
                    bound[alias.asname or alias.name] = submodule
                else:
                    yield node.lineno, source_module, alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            yield node.lineno, bound[node.value.id], node.attr


def violations(module: str, source: str | None = None, is_package: bool = False) -> list:
    found = []
    for line, target, name in imports(module, source, is_package):
        if not is_presentation(module) and is_presentation(target):
            found.append(f"{module}:{line} (core) imports {target} (presentation)")
        if name is not None and is_private(name) and target != module:
            found.append(f"{module}:{line} uses the private name {name} of {target}")
    return found


SAMPLE = """
import numpy as np
from probdr_lite import unrolled as U
from .._validation import check_scalar
from . import attention


def f():
    from probdr_lite.presentation.style import VARIANT_STYLE
    from probdr_lite.presentation.figures.neighbourhoods import _edges
    return U._check_latents(1.0), U.unroll, VARIANT_STYLE
"""


def test_the_walk_sees_every_kind_of_import():
    """The checker itself, on a sample with every shape (so that a clean result means something)."""
    assert "probdr_lite.unrolled" in MODULES and "probdr_lite.presentation.figures.mnist" in MODULES
    assert "probdr_lite.experiments" in MODULES and "probdr_lite.experiments.charlm" in MODULES
    seen = {(t, n) for _, t, n in imports("probdr_lite.experiments.charlm", SAMPLE)}
    assert ("probdr_lite._validation", "check_scalar") in seen  # relative, two dots
    assert ("probdr_lite.experiments.attention", None) in seen  # "from . import module"
    assert ("probdr_lite.unrolled", "_check_latents") in seen and ("probdr_lite.unrolled", "unroll") in seen
    found = violations("probdr_lite.experiments.charlm", SAMPLE)
    assert len(found) == 4, found  # two upward imports inside f, _edges, U._check_latents
    assert violations("probdr_lite.presentation.figures.sample", SAMPLE) == [  # presentation may import presentation
        "probdr_lite.presentation.figures.sample:10 uses the private name _edges of probdr_lite.presentation.figures.neighbourhoods",
        "probdr_lite.presentation.figures.sample:11 uses the private name _check_latents of probdr_lite.unrolled"]
    assert is_private("_labels") and not is_private("__version__")


def _param(module):
    if module in KNOWN_OFFENDERS:
        return pytest.param(module, marks=pytest.mark.xfail(strict=True, reason=KNOWN_OFFENDERS[module]))
    return module


@pytest.mark.parametrize("module", [_param(m) for m in MODULES])
def test_imports_go_only_downward_and_never_reach_private_names(module):
    assert violations(module) == []


def test_known_offenders_are_modules():
    assert set(KNOWN_OFFENDERS) <= set(MODULES)


def test_plotting_sits_below_the_figures():
    """probdr_lite.presentation.plotting is the presentation layer's base (figures build on it): it imports nothing from
    probdr_lite.presentation.figures, so the figures never import a module that imports them back."""
    upward = [(line, target) for line, target, _ in imports("probdr_lite.presentation.plotting")
              if target == "probdr_lite.presentation.figures" or target.startswith("probdr_lite.presentation.figures.")]
    assert upward == [], upward
