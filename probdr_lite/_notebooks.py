"""Conventions for the chapter notebooks, and a small tool that enforces them.

Every chapter notebook

- starts with the Colab cell below (it installs this package only on Colab,
  and only when the import fails; anywhere else it does nothing and touches
  no network);
- is committed without outputs or execution counts (the book build executes it);
- uses the ``python3`` kernel.

``python -m probdr_lite._notebooks fix book/*.ipynb`` rewrites notebooks to
follow these rules; ``check`` reports the ones that do not (the tests call it).
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


def _cell_source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def problems(path: Path) -> list[str]:
    """What is wrong with one notebook (an empty list if nothing)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    cells = nb.get("cells", [])
    if not cells or cells[0].get("cell_type") != "code" or _cell_source(cells[0]) != colab_cell_source():
        out.append("first cell is not the Colab install cell")
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            out.append(f"cell {i} has outputs or an execution count")
    if nb.get("metadata", {}).get("kernelspec", {}).get("name") != "python3":
        out.append("kernel is not python3")
    return out


def fix(path: Path) -> None:
    """Insert or refresh the Colab cell, strip outputs, set the kernel."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb.setdefault("cells", [])
    colab = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"tags": ["remove-cell"]},
        "outputs": [],
        "source": colab_cell_source(),
    }
    if cells and cells[0].get("cell_type") == "code" and "google.colab" in _cell_source(cells[0]):
        cells[0] = colab
    else:
        cells.insert(0, colab)
    for cell in cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell.pop("id", None)
    nb["metadata"]["kernelspec"] = KERNELSPEC
    nb["metadata"].pop("widgets", None)
    nb["nbformat"], nb["nbformat_minor"] = 4, 4
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("check", "fix"):
        print("usage: python -m probdr_lite._notebooks check|fix NOTEBOOK...", file=sys.stderr)
        return 2
    bad = 0
    for name in argv[1:]:
        if argv[0] == "fix":
            fix(Path(name))
        for p in problems(Path(name)):
            print(f"{name}: {p}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
