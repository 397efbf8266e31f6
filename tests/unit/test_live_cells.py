"""Every code cell a reader can run in Live Code runs, given the runnable cells above it.

Thebe (the site's "Live Code") turns only the cells whose input is on the page into editors: a cell tagged
``remove-input`` or ``remove-cell`` never reaches the kernel. So a name that such a hidden cell defines is
undefined in Live Code, and a shown cell that uses it raises ``NameError`` there (chapter 5's causal-mask cell
once used ``c_A`` from a ``remove-input`` cell), although the book's build, which runs every cell, is fine.

This test reads each chapter source (``book/src/*.py``, Jupytext percent format, tags in the cell header) and
checks, with Python's ``symtable``, that every global name a shown code cell reads (at the top level or inside
a function or class it defines) is bound by that cell, by an earlier shown cell, or is a builtin of Python or
IPython. ``hide-input`` and ``hide-cell`` cells count as shown: their input is on the page, folded.
"""

from __future__ import annotations

import builtins
import json
import re
import symtable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "book" / "src").glob("*.py"))
#: Tags that keep a cell's input off the page, and so out of Live Code.
HIDDEN_TAGS = {"remove-input", "remove-cell"}
#: Names an IPython kernel provides besides Python's builtins.
IPYTHON_NAMES = {"display", "get_ipython", "In", "Out", "_", "__", "___", "exit", "quit"}
HEADER = re.compile(r"^# %%(?P<markdown> \[markdown\])?(?: tags=(?P<tags>\[.*?\]))?\s*$")


def code_cells(path: Path) -> list[tuple[int, list[str], str]]:
    """(line of the header, tags, source) of every code cell of a percent-format source."""
    cells, current = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = HEADER.match(line)
        if m:
            current = None
            if not m["markdown"]:
                current = [number, json.loads(m["tags"]) if m["tags"] else [], []]
                cells.append(current)
        elif current is not None:
            current[2].append(line)
    return [(n, tags, "\n".join(lines)) for n, tags, lines in cells]


def bound_and_read(source: str) -> tuple[set[str], set[str]]:
    """Global names a cell binds, and global names it reads (its functions' and classes' bodies included)."""
    # IPython's magics and shell escapes are not Python
    source = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    top = symtable.symtable(source, "<cell>", "exec")
    bound, read = set(), set()
    for sym in top.get_symbols():
        if sym.is_assigned() or sym.is_imported() or sym.is_namespace():
            bound.add(sym.get_name())
        if sym.is_referenced():
            read.add(sym.get_name())
    tables = list(top.get_children())
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for sym in table.get_symbols():
            if sym.is_global() and sym.is_referenced():
                read.add(sym.get_name())
            if sym.is_declared_global() and sym.is_assigned():
                bound.add(sym.get_name())
    return bound, read


def undefined_in_live_code(path: Path) -> list[str]:
    """``line: names`` for every shown cell that reads a name no shown cell before it (nor itself) binds."""
    known = set(dir(builtins)) | IPYTHON_NAMES
    hidden_only, problems = set(), []
    for line, tags, source in code_cells(path):
        bound, read = bound_and_read(source)
        if HIDDEN_TAGS & set(tags):
            hidden_only |= bound
            continue
        missing = sorted(read - bound - known)
        if missing:
            where = [f"{n} (bound only by a hidden cell)" if n in hidden_only else n for n in missing]
            problems.append(f"{path.name}:{line}: {', '.join(where)}")
        known |= bound
    return problems


def test_the_checker_sees_hidden_definitions(tmp_path):
    src = tmp_path / "chapter.py"
    src.write_text('# %% tags=["remove-input"]\nc_A = 1\n\n# %%\nimport numpy as np\n'
                   'def f():\n    return np.sqrt(c_A) + k\n\n# %% tags=["hide-cell"]\nk = 2\nprint(k, f())\n'
                   '# %% [markdown]\n# c_A in prose is not code\n\n# %%\n%time print(k)\n', encoding="utf-8")
    assert undefined_in_live_code(src) == ["chapter.py:4: c_A (bound only by a hidden cell), k"]


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_shown_cell_runs_after_the_shown_cells_before_it(path):
    assert code_cells(path), f"{path.name}: no code cells read"
    assert undefined_in_live_code(path) == []
