"""Conventions for the chapter notebooks, and the one command that writes them from their sources.

Chapters are written in ``book/src/NAME.py`` in Jupytext's percent format; ``book/NAME.ipynb`` is Jupytext's
conversion of that file, never edited by hand. Every chapter

- starts with the Colab cell, a code cell tagged ``colab`` and ``remove-cell`` whose text is
  :func:`colab_cell_source` (it installs this package only on Colab, and only when the import fails; anywhere else
  it does nothing and touches no network);
- is committed without outputs or execution counts (the book build executes it), like ``nbstripout`` leaves it;
- uses the ``python3`` kernel.

``python -m probdr_lite._notebooks sync`` (or ``make notebooks``) refreshes the Colab cell in every source and
rewrites every notebook from its source; ``python -m probdr_lite._notebooks check`` reports notebooks that break a
rule or differ from their source (the tests call :func:`problems`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The ref of the repository the Colab cell installs from. A tag, so that a
#: chapter opened on Colab runs against the package it was written for.
COLAB_REF = "v0.1.0"


def repository_url(config_path: Path = ROOT / "_config.yml") -> str:
    """The repository URL, read from ``_config.yml`` (the one place it is set)."""
    text = config_path.read_text(encoding="utf-8")
    match = re.search(r"^repository:\s*\n(?:\s+.*\n)*?\s+url\s*:\s*(\S+)", text, re.M)
    if not match:
        raise ValueError(f"no repository.url in {config_path}")
    return match.group(1).strip("\"'")


def colab_cell_source(url: str | None = None, ref: str = COLAB_REF) -> str:
    """Source of the first cell of every chapter."""
    url = url or repository_url()
    return (
        "# Colab only: install this book's helper package when it is missing.\n"
        "# Anywhere else (the book build, Binder, a local checkout) this cell does nothing.\n"
        "import importlib.util, sys\n"
        "if \"google.colab\" in sys.modules and importlib.util.find_spec(\"probdr_lite\") is None:\n"
        f"    %pip install --quiet \"probdr-lite @ git+{url}@{ref}\""
    )


KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
#: The tags of the Colab cell in a source; ``remove-cell`` keeps it out of the rendered book.
COLAB_TAGS = ["colab", "remove-cell"]
SOURCES = ROOT / "book" / "src"


def _cell_source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _read_source(src: Path):
    import jupytext

    return jupytext.read(Path(src), fmt="py:percent")


def notebook_for(src: Path) -> dict:
    """The notebook ``src`` (a percent-format chapter) converts to: Jupytext's conversion, without outputs,
    execution counts, cell ids or Jupytext's own metadata, with the python3 kernel (nbformat 4.4, as JSON data)."""
    nb = _read_source(src)
    cells = []
    for cell in nb.cells:
        out = {"cell_type": cell.cell_type, "metadata": {"tags": list(cell.metadata["tags"])}
               if cell.metadata.get("tags") else {}, "source": cell.source}
        if cell.cell_type == "code":
            out.update(execution_count=None, outputs=[])
        cells.append(out)
    return {"cells": cells, "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 4}


def notebook_text(src: Path) -> str:
    """:func:`notebook_for` as the JSON text committed in ``book/``."""
    return json.dumps(notebook_for(src), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def notebook_path(src: Path) -> Path:
    return Path(src).resolve().parents[1] / f"{Path(src).stem}.ipynb"


def source_path(notebook: Path) -> Path:
    return Path(notebook).resolve().parent / "src" / f"{Path(notebook).stem}.py"


def problems(path: Path) -> list[str]:
    """What is wrong with one notebook (an empty list if nothing)."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    cells = nb.get("cells", [])
    first = cells[0] if cells else {}
    if first.get("cell_type") != "code" or _cell_source(first) != colab_cell_source() or \
            first.get("metadata", {}).get("tags") != COLAB_TAGS:
        out.append("first cell is not the Colab install cell (tags colab, remove-cell)")
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            out.append(f"cell {i} has outputs or an execution count")
    if nb.get("metadata", {}).get("kernelspec", {}).get("name") != "python3":
        out.append("kernel is not python3")
    src = source_path(path)
    if not src.exists():
        out.append(f"no source {src.name} in book/src")
    elif nb != notebook_for(src):
        out.append(f"differs from Jupytext's conversion of book/src/{src.name}: run python -m probdr_lite._notebooks sync")
    return out


def sync_source(src: Path) -> bool:
    """Put the current :func:`colab_cell_source` into the Colab cell of ``src`` (first, tagged); True if changed."""
    import jupytext
    from nbformat.v4 import new_code_cell

    src = Path(src)
    nb = _read_source(src)
    colab = new_code_cell(colab_cell_source(), metadata={"tags": list(COLAB_TAGS)})
    if nb.cells and ("colab" in nb.cells[0].metadata.get("tags", []) or "google.colab" in nb.cells[0].source):
        if nb.cells[0].source == colab.source and nb.cells[0].metadata.get("tags") == COLAB_TAGS:
            return False
        nb.cells[0] = colab
    else:
        nb.cells.insert(0, colab)
    # no YAML header in the source; cell tags kept (Jupytext drops every cell key of a file that had none)
    nb.metadata["jupytext"] = {"notebook_metadata_filter": "-all", "cell_metadata_filter": "tags,-all"}
    src.write_text(jupytext.writes(nb, fmt="py:percent"), encoding="utf-8")
    return True


def sync(sources=None) -> list[Path]:
    """Refresh the Colab cell of every source and rewrite every notebook from its source; return what changed."""
    sources = sorted(SOURCES.glob("*.py")) if not sources else [Path(s) for s in sources]
    changed = []
    for src in sources:
        if sync_source(src):
            changed.append(src)
        dst = notebook_path(src)
        text = notebook_text(src)
        if not dst.exists() or dst.read_text(encoding="utf-8") != text:
            dst.write_text(text, encoding="utf-8")
            changed.append(dst)
    return changed


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("check", "sync"):
        print("usage: python -m probdr_lite._notebooks sync [book/src/NAME.py ...]\n"
              "       python -m probdr_lite._notebooks check [book/NAME.ipynb ...]", file=sys.stderr)
        return 2
    if argv[0] == "sync":
        for path in sync(argv[1:]):
            print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        return 0
    notebooks = [Path(n) for n in argv[1:]] or [notebook_path(s) for s in sorted(SOURCES.glob("*.py"))]
    bad = 0
    for path in notebooks:
        for p in problems(path):
            print(f"{path}: {p}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
