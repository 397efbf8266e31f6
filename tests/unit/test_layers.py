"""The package's four layers, read from its source: each layer is a folder, imports only go downward, and no module
reaches into another's private names.

    maths         the modules at the package root (the list MATHS below) and probdr_lite.data
    experiments   probdr_lite.experiments.*: trained transformers, statistics, grids
    chapters      probdr_lite.chapters.*: each chapter's measurements and facts, one module per page
    presentation  probdr_lite.presentation.*: figures, live figures, plotting, widgets, labels, colours, prose

with maths < experiments < chapters < presentation: a module may import modules of its own layer or of lower ones
only. The chapters of the book (``book/src/*.py``) are not part of the package and call all four
(``test_public_api.py`` checks what they import).

The walk parses every module with ``ast`` and looks at every import, including those inside functions, with
relative imports resolved. It fails on

1. a module importing a module of a higher layer (an upward import);
2. a module importing another module's private name (``from probdr_lite.x import _y``) or using one through a
   module it imported (``import probdr_lite.x as X; X._y``). Private *modules* (``_validation``, ``_threads``,
   ``_elbo``, ``_tiled_attention``) are the package's shared internals and may be imported; their names are public
   to the package;
3. a module outside the folder of its kind: every module must sit in exactly one layer's folder, and the package
   root holds only the maths listed in MATHS, so a new module dropped at the root fails until it is moved;
4. a module outside presentation importing matplotlib, ipywidgets or IPython.display;
5. two modules of the same name (``__init__`` and ``__main__`` aside), at any level of the package.

Modules of other helpers' branches still being fixed are listed in KNOWN_OFFENDERS, each an xfail(strict=True):
the test of such a module fails as soon as the module is clean, so that the entry gets deleted. The integrator
empties the list.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from .source_imports import resolve

PACKAGE = Path(__file__).resolve().parents[2] / "probdr_lite"

LAYERS = ("maths", "experiments", "chapters", "presentation")
#: The maths at the package root. A module added at the root must be maths and be added here; anything else goes
#: in the folder of its layer.
MATHS = ("probdr_lite", "probdr_lite._elbo", "probdr_lite._threads", "probdr_lite._tiled_attention",
         "probdr_lite._validation", "probdr_lite.diagonal_transformer", "probdr_lite.eigenmaps", "probdr_lite.graphs",
         "probdr_lite.metrics", "probdr_lite.probdr", "probdr_lite.tangent", "probdr_lite.unrolled")
#: Layer -> the packages (folders) whose modules are that layer's.
FOLDERS = {"maths": ("probdr_lite.data",), "experiments": ("probdr_lite.experiments",),
           "chapters": ("probdr_lite.chapters",), "presentation": ("probdr_lite.presentation",)}
#: What only presentation may import (the module or any submodule of it).
DRAWING = ("matplotlib", "ipywidgets", "IPython.display")

#: module -> why it still fails (to be emptied when the owners' branches are merged)
KNOWN_OFFENDERS: dict = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = sorted(module_name(p) for p in PACKAGE.rglob("*.py"))


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def layer(name: str) -> str | None:
    """The layer of a probdr_lite module, by the folder it sits in (None: in no layer's folder)."""
    if name in MATHS:
        return "maths"
    for kind, packages in FOLDERS.items():
        if any(_within(name, p) for p in packages):
            return kind
    return None


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


def drawing_imports(module: str, source: str | None = None, is_package: bool = False) -> list:
    """(line, module) for every import of matplotlib, ipywidgets or IPython.display, inside functions too."""
    if source is None:
        source, is_package = module_source(module)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = resolve(module, is_package, node)
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]  # "from IPython import display"
        else:
            continue
        found += [(node.lineno, n) for n in names if any(_within(n, d) for d in DRAWING)]
    return found


def violations(module: str, source: str | None = None, is_package: bool = False) -> list:
    found = []
    own = layer(module)
    for line, target, name in imports(module, source, is_package):
        theirs = layer(target)
        if own is not None and theirs is not None and LAYERS.index(theirs) > LAYERS.index(own):
            found.append(f"{module}:{line} ({own}) imports {target} ({theirs})")
        if name is not None and is_private(name) and target != module:
            found.append(f"{module}:{line} uses the private name {name} of {target}")
    if own != "presentation":
        found += [f"{module}:{line} ({own}) imports {target}, which only presentation may import"
                  for line, target in drawing_imports(module, source, is_package)]
    return found


def misplaced(modules) -> list:
    """Why each of ``modules`` sits in no layer's folder."""
    return [f"{m} sits at the package root, which holds only the maths (MATHS in tests/unit/test_layers.py): put it "
            f"in the folder of its layer (probdr_lite/experiments/, chapters/ or presentation/), or, if it is maths, "
            f"add it to MATHS" for m in modules if layer(m) is None]


def shared_names(modules) -> dict:
    """Name -> the modules that share it (``__init__`` and ``__main__`` aside; a package is named by its folder)."""
    names = Counter(m.rsplit(".", 1)[-1] for m in modules if not m.endswith("__main__"))
    return {n: sorted(m for m in modules if m.rsplit(".", 1)[-1] == n) for n, c in names.items() if c > 1}


SAMPLE = """
import numpy as np
from probdr_lite import unrolled as U
from .._validation import check_scalar
from . import attention


def f():
    from probdr_lite.presentation.style import VARIANT_STYLE
    from probdr_lite.presentation.figures.neighbourhoods import _edges
    from probdr_lite.chapters.energies import phi
    import matplotlib.pyplot as plt
    from IPython import display
    return U._check_latents(1.0), U.unroll, VARIANT_STYLE, phi, plt, display
"""


def test_the_walk_sees_every_kind_of_import():
    """The checker itself, on a sample with every shape (so that a clean result means something)."""
    assert "probdr_lite.unrolled" in MODULES and "probdr_lite.presentation.figures.mnist" in MODULES
    assert "probdr_lite.experiments" in MODULES and "probdr_lite.experiments.charlm" in MODULES
    assert "probdr_lite.chapters.energies" in MODULES and "probdr_lite.data" in MODULES
    seen = {(t, n) for _, t, n in imports("probdr_lite.experiments.charlm", SAMPLE)}
    assert ("probdr_lite._validation", "check_scalar") in seen  # relative, two dots
    assert ("probdr_lite.experiments.attention", None) in seen  # "from . import module"
    assert ("probdr_lite.unrolled", "_check_latents") in seen and ("probdr_lite.unrolled", "unroll") in seen
    assert drawing_imports("probdr_lite.experiments.charlm", SAMPLE) == [(12, "matplotlib.pyplot"),
                                                                         (13, "IPython.display")]
    found = violations("probdr_lite.experiments.charlm", SAMPLE)
    # three upward imports inside f (style, neighbourhoods, chapters.energies), _edges, U._check_latents, and the
    # two drawing libraries
    assert len(found) == 7, found
    assert "probdr_lite.experiments.charlm:11 (experiments) imports probdr_lite.chapters.energies (chapters)" in found
    assert violations("probdr_lite.chapters.sample", SAMPLE) == [  # chapters may import chapters, not presentation
        "probdr_lite.chapters.sample:9 (chapters) imports probdr_lite.presentation.style (presentation)",
        "probdr_lite.chapters.sample:10 (chapters) imports probdr_lite.presentation.figures.neighbourhoods "
        "(presentation)",
        "probdr_lite.chapters.sample:10 uses the private name _edges of probdr_lite.presentation.figures.neighbourhoods",
        "probdr_lite.chapters.sample:14 uses the private name _check_latents of probdr_lite.unrolled",
        "probdr_lite.chapters.sample:12 (chapters) imports matplotlib.pyplot, which only presentation may import",
        "probdr_lite.chapters.sample:13 (chapters) imports IPython.display, which only presentation may import"]
    assert violations("probdr_lite.presentation.sample", SAMPLE) == [  # presentation may import everything public
        "probdr_lite.presentation.sample:10 uses the private name _edges of "
        "probdr_lite.presentation.figures.neighbourhoods",
        "probdr_lite.presentation.sample:14 uses the private name _check_latents of probdr_lite.unrolled"]
    assert is_private("_labels") and not is_private("__version__")


def test_the_placement_checks_see_a_module_out_of_place():
    assert [layer(m) for m in ("probdr_lite.graphs", "probdr_lite.data", "probdr_lite.experiments.stats",
                               "probdr_lite.chapters", "probdr_lite.presentation.live.builders")] == [
        "maths", "maths", "experiments", "chapters", "presentation"]
    (why,) = misplaced(["probdr_lite.graphs", "probdr_lite.new_facts", "probdr_lite.chapters.new_facts"])
    assert why.startswith("probdr_lite.new_facts sits at the package root") and "folder of its layer" in why
    assert shared_names(["probdr_lite.eigenmaps", "probdr_lite.presentation.figures.eigenmaps",
                         "probdr_lite.experiments.__main__", "probdr_lite.chapters.__main__",
                         "probdr_lite.chapters", "probdr_lite.presentation.chapters"]) == {
        "eigenmaps": ["probdr_lite.eigenmaps", "probdr_lite.presentation.figures.eigenmaps"],
        "chapters": ["probdr_lite.chapters", "probdr_lite.presentation.chapters"]}


def _param(module):
    if module in KNOWN_OFFENDERS:
        return pytest.param(module, marks=pytest.mark.xfail(strict=True, reason=KNOWN_OFFENDERS[module]))
    return module


@pytest.mark.parametrize("module", [_param(m) for m in MODULES])
def test_imports_go_only_downward_and_never_reach_private_names(module):
    assert violations(module) == []


def test_every_module_sits_in_the_folder_of_its_layer():
    assert misplaced(MODULES) == []
    assert set(MATHS) <= set(MODULES), f"MATHS lists modules that are gone: {sorted(set(MATHS) - set(MODULES))}"
    assert {layer(m) for m in MODULES} == set(LAYERS)


def test_no_two_modules_share_a_name():
    assert shared_names(MODULES) == {}


def test_known_offenders_are_modules():
    assert set(KNOWN_OFFENDERS) <= set(MODULES)


def test_plotting_sits_below_the_figures():
    """probdr_lite.presentation.plotting is the presentation layer's base (figures build on it): it imports nothing
    from probdr_lite.presentation.figures, so the figures never import a module that imports them back."""
    upward = [(line, target) for line, target, _ in imports("probdr_lite.presentation.plotting")
              if _within(target, "probdr_lite.presentation.figures")]
    assert upward == [], upward
