"""The package's public API, ``probdr_lite.PUBLIC_API``: every name a chapter (``book/src/*.py``) takes from the
package is listed there, and every listed name exists, so that renaming or moving one fails here, not in a chapter.

A chapter takes a name by ``from probdr_lite.x import name``, or through a module it imported
(``from probdr_lite import unrolled as U; U.unroll``, ``import probdr_lite.x as X; X.name``)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import probdr_lite
from probdr_lite import PUBLIC_API

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book" / "src").glob("*.py"))


def is_module(name: str) -> bool:
    base = ROOT / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def chapter_imports(source: str) -> set:
    """{(module, name or None)} of everything a chapter's source takes from probdr_lite (None: the module itself)."""
    tree = ast.parse(source)
    found, bound = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "probdr_lite":
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if is_module(submodule):  # "from probdr_lite import unrolled as U"
                    found.add((submodule, None))
                    bound[alias.asname or alias.name] = submodule
                else:
                    found.add((node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "probdr_lite":
                    found.add((alias.name, None))
                    if alias.asname:
                        bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            found.add((bound[node.value.id], node.attr))
    return found


def test_the_walk_sees_every_kind_of_import():
    sample = ("from probdr_lite import unrolled as U\nfrom probdr_lite.graphs import knn_graph\n"
              "import probdr_lite.metrics as M\nfrom os import path\nU.unroll(M.METRICS)\n")
    assert chapter_imports(sample) == {("probdr_lite.unrolled", None), ("probdr_lite.unrolled", "unroll"),
                                       ("probdr_lite.graphs", "knn_graph"), ("probdr_lite.metrics", None),
                                       ("probdr_lite.metrics", "METRICS")}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_every_name_a_chapter_imports_is_listed(chapter):
    missing = sorted((m, n) for m, n in chapter_imports(chapter.read_text(encoding="utf-8"))
                     if m not in PUBLIC_API or (n is not None and n not in PUBLIC_API[m]))
    assert not missing, (f"book/src/{chapter.name} imports what probdr_lite.PUBLIC_API does not list: "
                         + ", ".join(f"{m}.{n}" if n else m for m, n in missing))


def test_the_list_holds_only_what_the_chapters_import():
    """No stale entries: a name the chapters no longer use leaves the list."""
    used = set().union(*(chapter_imports(c.read_text(encoding="utf-8")) for c in CHAPTERS))
    stale = sorted({(m, n) for m, names in PUBLIC_API.items() for n in names} - used)
    assert not stale, "no chapter imports " + ", ".join(f"{m}.{n}" for m, n in stale)
    assert set(PUBLIC_API) <= {m for m, _ in used}


@pytest.mark.parametrize("module", sorted(PUBLIC_API))
def test_every_listed_name_exists(module):
    mod = importlib.import_module(module)
    absent = [n for n in PUBLIC_API[module] if not hasattr(mod, n)]
    assert not absent, f"{module} has no {', '.join(absent)} (listed in probdr_lite.PUBLIC_API)"


def test_the_maths_modules_import_from_the_package():
    from probdr_lite import graphs, probdr, unrolled

    assert graphs.knn_graph and probdr.le_elbo and unrolled.unroll
    assert all(importlib.import_module(f"probdr_lite.{m}") for m in probdr_lite.__all__)


def test_importing_the_package_is_cheap():
    out = subprocess.run([sys.executable, "-c", "import sys, probdr_lite; "
                          "print(sorted(m for m in ('torch', 'matplotlib', 'numpy') if m in sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"
