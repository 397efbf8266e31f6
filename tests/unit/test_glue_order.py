"""Every number a chapter's Markdown pastes is glued in a code cell above it.

The reader notebooks (Colab, Jupyter) paste a paragraph's numbers when the reader reaches the paragraph, so a name
glued further down reads as a missing number there, although the site, which collects every glue first, shows it.
The Colab replica finds that by running the notebooks; this check reads the chapter sources instead, in a second.

A code cell's ``glue(name, ...)`` calls are read with ``ast``: a literal name is that name, an f-string or a sum
of strings is a pattern (each formatted or unknown part stands for any text), and a name held in a variable is
any name. The first cell whose pattern fits a pasted name is where it is glued.
"""

import ast
import re
from pathlib import Path

import jupytext
import pytest

from probdr_lite.presentation.prose import GLUE_ROLE

SOURCES = sorted((Path(__file__).resolve().parents[2] / "book" / "src").glob("*.py"))


def _pattern(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(_pattern(v) if isinstance(v, ast.Constant) else ".+" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _pattern(node.left) + _pattern(node.right)
    return ".+"


def glued_patterns(source: str) -> list:
    """The patterns of the names a code cell's source glues."""
    code = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    return [re.compile(_pattern(n.args[0])) for n in ast.walk(ast.parse(code))
            if isinstance(n, ast.Call) and n.args and getattr(n.func, "id", getattr(n.func, "attr", None)) == "glue"]


def late_pastes(cells) -> list:
    """(cell index, name) of each pasted name that no code cell above the paste glues."""
    patterns, late = [], []
    for i, cell in enumerate(cells):
        if cell.cell_type == "code":
            patterns += glued_patterns(cell.source)
        elif cell.cell_type == "markdown":
            for name in (m.group(2) for m in GLUE_ROLE.finditer(cell.source)):
                if "::" not in name and not any(p.fullmatch(name) for p in patterns):
                    late.append((i, name))
    return late


@pytest.mark.parametrize("src", SOURCES, ids=[s.stem for s in SOURCES])
def test_every_pasted_name_is_glued_above_its_paragraph(src):
    late = late_pastes(jupytext.read(src, fmt="py:percent").cells)
    assert not late, f"{src.name}: pasted before any cell above glues it (cell, name): {late}"


def test_the_check_finds_a_name_glued_below_its_paste_and_reads_patterns():
    cells = [jupytext.reads(text, fmt="py:percent").cells for text in (
        '# %% [markdown]\n# It is {glue:text}`late`.\n\n# %%\nglue("late", "1")\n',
        '# %%\nfor k in "ab":\n    glue(f"n_{k}_end", k)\n\n# %% [markdown]\n# {glue:text}`n_a_end` and '
        '{glue:text}`n_b_start`\n',
        '# %%\nglue("x" + key, 1)\n\n# %% [markdown]\n# {glue:text}`xy` and {glue:text}`other.ipynb::z:s`\n',
    )]
    assert late_pastes(cells[0]) == [(0, "late")]
    assert late_pastes(cells[1]) == [(1, "n_b_start")]
    assert late_pastes(cells[2]) == []
