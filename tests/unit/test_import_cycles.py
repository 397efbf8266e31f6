"""The experiments subpackage imports one way: no module reaches itself through a chain of imports.

Read from the source with ``ast``: every import of every module of ``probdr_lite.experiments`` (those inside
functions too, with relative imports resolved) that names another module of the subpackage is an edge; the test
fails on any cycle of that graph and prints it. An import inside a function only delays a cycle, it does not
remove it, so those count. The package's ``__init__`` is a node like the others (a module that imports
``probdr_lite.experiments`` itself depends on everything the ``__init__`` imports); that importing a submodule
first runs its package's ``__init__`` is Python's machinery, not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .source_imports import resolve

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "probdr_lite.experiments"


def _modules(package_dir: Path, package: str) -> dict:
    """{module name: (path, is a package __init__)} of every module under ``package_dir``."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        if is_init:
            parts = parts[:-1]
        out[".".join([package, *parts])] = (path, is_init)
    return out


def import_graph(package_dir: Path, package: str) -> dict:
    """{module: set of modules of ``package`` it imports} for every module of ``package`` (in ``package_dir``)."""
    modules = _modules(package_dir, package)
    graph = {}
    for module, (path, is_init) in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = resolve(module, is_init, node)
                # "from . import x" and "from .pkg import x" name a module x when x is one, else a name of source
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules and "." in target:  # "import a.b.c" needs a.b.c
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != module:
                    edges.add(target)
        graph[module] = edges
    return graph


def find_cycle(graph: dict):
    """One cycle of ``graph`` as a list of nodes (first = last), or ``None`` (depth-first search, three colours)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_experiments_subpackage_has_no_import_cycle():
    graph = import_graph(ROOT / "probdr_lite" / "experiments", PACKAGE)
    assert f"{PACKAGE}.results" in graph and f"{PACKAGE}.charlm" in graph
    # the edges this test exists for: results reads the configs, not the training modules
    assert f"{PACKAGE}.configs" in graph[f"{PACKAGE}.results"]
    assert not graph[f"{PACKAGE}.results"] & {f"{PACKAGE}.charlm", f"{PACKAGE}.vit", f"{PACKAGE}._training"}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_checker_finds_cycles_through_function_level_and_relative_imports(tmp_path):
    """The checker on a made-up package with the cycle this subpackage used to have (so a pass means something)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .charlm import train\n")
    (pkg / "results.py").write_text("import json\n\ndef upgrade():\n    from .charlm import Config\n    return Config\n")
    (pkg / "charlm.py").write_text("from ._training import step\n\nclass Config: ...\n\ndef train(): ...\n")
    (pkg / "_training.py").write_text("from . import results\n\ndef step(): ...\n")
    (pkg / "sweep.py").write_text("import pkg.charlm\nfrom pkg import results as R\n")
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.results"] == {"pkg.charlm"}  # the import inside a function counts
    assert graph["pkg._training"] == {"pkg.results"}  # "from . import module"
    assert graph["pkg.sweep"] == {"pkg.charlm", "pkg.results"}
    assert graph["pkg"] == {"pkg.charlm"}
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1]
    assert set(cycle) == {"pkg.results", "pkg.charlm", "pkg._training"}
    (pkg / "results.py").write_text("import json\n")  # break it
    assert find_cycle(import_graph(pkg, "pkg")) is None
