"""Reading a chapter's call of a package function with ``ast``: the words a chapter passes (sentences, captions,
labels), shared by the tests of the live figures' sentences (test_live_captions.py, test_live_figures.py) and of the
chapters' tables and figures (test_objections.py, test_energies_facts.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def chapter_calls(chapter: str, func: str) -> list[ast.Call]:
    """Every call of ``func`` (a name, or the attribute ``x.func``) in ``book/src/<chapter>.py``."""
    tree = ast.parse((ROOT / "book" / "src" / f"{chapter}.py").read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and ((isinstance(n.func, ast.Name) and n.func.id == func)
                 or (isinstance(n.func, ast.Attribute) and n.func.attr == func))]


def words_passed(call: ast.Call, keyword: str, position: int | None = None):
    """The value the call passes as ``keyword`` (or at ``position``), which must be written out in the chapter: a
    string, or a dict of strings, as literals (adjacent literals join into one), so that the words are the
    chapter's and nothing in them is computed, compared or chosen there."""
    kw = {k.arg: k.value for k in call.keywords}
    node = kw.get(keyword)
    if node is None and position is not None and len(call.args) > position:
        node = call.args[position]
    assert node is not None, f"line {call.lineno}: the call passes no {keyword}"
    strings = [node] if isinstance(node, ast.Constant) else (node.values if isinstance(node, ast.Dict) else [])
    assert strings and all(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in strings), (
        f"line {call.lineno}: {keyword} must be a string or a dict of strings written out; got {ast.unparse(node)}")
    return ast.literal_eval(node)


def source_cells(path: Path) -> list[ast.Module]:
    """A chapter source's cells (``# %%`` percent format), parsed, with the line numbers of the source."""
    lines = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("# %%")] + [len(lines)]
    return [ast.increment_lineno(ast.parse("".join(lines[a + 1:b])), a + 1) for a, b in zip(starts, starts[1:])]
