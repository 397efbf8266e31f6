"""How much of the book's prose the package holds, and how heavy its presentation layer is (issue 28).

    python tools/package_weight.py [--files]

Prints two measures, each read from the source with ``ast``:

- **Prose words in the package**: the words of every string literal under ``probdr_lite/presentation`` that is not
  a docstring and has four or more whitespace-separated words (an f-string counts as one literal: its text parts,
  each interpolation as one word). Split by what the literal is part of: an exception message (inside ``raise``),
  a figure's description (a ``describe(...)`` call: the site's alt text) or anything else (sentences, captions,
  labels, table cells). A word is a run of letters (digits and symbols are not words). Inline maths (``$...$``,
  MathJax) is counted as written, and a second total leaves it out: ``\\tfrac``, ``\\sum`` and ``d_q`` are runs of
  letters but not words of prose, and a formula is not a sentence.
- **Lines**: of the presentation layer (everything under ``probdr_lite/presentation``: its Python, and the live
  figures' JavaScript and CSS) against the core maths (the ``probdr_lite/*.py`` at the top level; ``experiments/``
  and ``chapters/`` are counted apart, ``data/`` not at all), and their ratio.

``--files`` lists the words per file.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "probdr_lite"
KINDS = ("raise", "describe", "other")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_MATHS = re.compile(r"\$[^$]*\$")


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                ids.add(id(first.value))
    return ids


def _inside(tree: ast.AST, kind: type | None = None, call: str | None = None) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if (kind is not None and isinstance(node, kind)) or (
                call is not None and isinstance(node, ast.Call)
                and call in (getattr(node.func, "id", None), getattr(node.func, "attr", None))):
            ids.update(id(n) for n in ast.walk(node))
    return ids


def prose_words(source: str, maths: bool = True) -> Counter:
    """Words of prose in the non-docstring string literals of four or more words of one module, by kind; with
    ``maths=False`` the words inside inline maths (``$...$``) are left out."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    raised, described = _inside(tree, kind=ast.Raise), _inside(tree, call="describe")
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = " ".join(v.value if isinstance(v, ast.Constant) else " x " for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip | parts:
            text = node.value
        else:
            continue
        if len(text.split()) < 4:
            continue
        kind = "raise" if id(node) in raised else "describe" if id(node) in described else "other"
        out[kind] += len(_WORD.findall(text if maths else _MATHS.sub(" ", text)))
    return out


def _lines(paths) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


def weight(package: Path = PACKAGE) -> dict:
    layer = package / "presentation"
    sources = {str(p.relative_to(package)): p.read_text(encoding="utf-8") for p in sorted(layer.rglob("*.py"))}
    presentation = sorted(p for p in layer.rglob("*") if p.suffix in (".py", ".js", ".css"))
    core = sorted(package.glob("*.py"))
    return {
        "words": {name: prose_words(src) for name, src in sources.items()},
        "words_without_maths": {name: prose_words(src, maths=False) for name, src in sources.items()},
        "presentation_lines": _lines(presentation),
        "core_lines": _lines(core),
        "experiments_lines": _lines(sorted((package / "experiments").glob("*.py"))),
        "chapters_lines": _lines(sorted((package / "chapters").glob("*.py"))),
    }


def _by_kind(count: Counter) -> str:
    return f"{sum(count.values())} ({', '.join(f'{k} {count[k]}' for k in KINDS)})"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list the words per file")
    args = parser.parse_args(argv)
    w = weight()
    total = sum(w["words"].values(), Counter())
    if args.files:
        for name, c in sorted(w["words"].items(), key=lambda kv: -sum(kv[1].values())):
            if c:
                print(f"{_by_kind(c):>6}  {name}")
    no_maths = sum(w["words_without_maths"].values(), Counter())
    print(f"prose words under probdr_lite/presentation: {_by_kind(total)}")
    print(f"the same without the words inside inline maths: {_by_kind(no_maths)}")
    print(f"lines: presentation {w['presentation_lines']}, core maths {w['core_lines']} "
          f"(experiments {w['experiments_lines']} and chapters {w['chapters_lines']} apart): "
          f"{w['presentation_lines'] / w['core_lines']:.2f} times")


if __name__ == "__main__":
    main()
