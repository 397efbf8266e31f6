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
``badges`` prints README's badges. The repository URL and branch come from ``_config.yml`` and from
nowhere else.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "_config.yml"


def _config(config_path: Path = CONFIG) -> dict:
    import yaml  # a build and test dependency; reading the notebooks on Colab never gets here

    return yaml.safe_load(Path(config_path).read_text(encoding="utf-8"))


def repository(config_path: Path = CONFIG) -> tuple[str, str]:
    """``(url, branch)`` of the repository, from ``_config.yml``: the one place they are set.

    The branch is what the book's launch buttons (Binder, Colab) open, and so the ref the
    Colab cell installs the package from: notebook and package come from the same commit.
    """
    repo = _config(config_path).get("repository") or {}
    url, branch = repo.get("url"), repo.get("branch")
    if not (isinstance(url, str) and re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url)):
        raise ValueError(f"repository.url in {config_path} must be https://github.com/OWNER/NAME, got {url!r}")
    if not (isinstance(branch, str) and re.fullmatch(r"[\w./-]+", branch)):
        raise ValueError(f"repository.branch in {config_path} must be a branch or tag name, got {branch!r}")
    return url, branch


def repository_url(config_path: Path = CONFIG) -> str:
    """The repository URL, read from ``_config.yml``."""
    return repository(config_path)[0]


def colab_ref(config_path: Path = CONFIG) -> str:
    """The ref the Colab cell installs: ``repository.branch``, the one the launch buttons open."""
    return repository(config_path)[1]


def __getattr__(name):
    # COLAB_REF is read from _config.yml when asked for, not at import time
    if name == "COLAB_REF":
        return colab_ref()
    raise AttributeError(name)


def pages_url(config_path: Path = CONFIG) -> str:
    """Where .github/workflows/pages.yml publishes the site (GitHub Pages of the repository)."""
    owner, name = repository_url(config_path).rstrip("/").split("/")[-2:]
    return f"https://{owner.lower()}.github.io/{name}/"


def project_urls(config_path: Path = CONFIG) -> dict[str, str]:
    """``[project.urls]`` of pyproject.toml, as they follow from ``_config.yml`` (a test compares)."""
    url = repository_url(config_path)
    return {"Homepage": pages_url(config_path), "Source": url, "Issues": f"{url}/issues"}


def first_notebook(toc_path: Path = ROOT / "_toc.yml") -> str:
    import yaml

    toc = yaml.safe_load(Path(toc_path).read_text(encoding="utf-8"))
    chapters = toc.get("chapters") or [c for part in toc.get("parts", []) for c in part["chapters"]]
    return f"{chapters[0]['file']}.ipynb"


def readme_badges(config_path: Path = CONFIG) -> str:
    """The badges at the top of README.md: CI, the published book, Binder and Colab on the first chapter."""
    config = _config(config_path)
    url, branch = repository(config_path)
    owner_name = url.split("github.com/", 1)[1]
    binder = config["launch_buttons"]["binderhub_url"].rstrip("/")
    colab = config["launch_buttons"]["colab_url"].rstrip("/")
    nb = first_notebook(Path(config_path).parent / "_toc.yml")
    # the same path as the book's own Binder buttons (classic: tree/, jupyterlab: lab/tree/)
    tree = "lab/tree" if config["launch_buttons"].get("notebook_interface") == "jupyterlab" else "tree"
    return "\n".join([
        f"[![CI]({url}/actions/workflows/ci.yml/badge.svg?branch={branch})]({url}/actions/workflows/ci.yml)",
        f"[![Book]({url}/actions/workflows/pages.yml/badge.svg?branch={branch})]({pages_url(config_path)})",
        f"[![Binder]({binder}/badge_logo.svg)]({binder}/v2/gh/{owner_name}/{branch}?urlpath={tree}/{nb})",
        f"[![Open in Colab]({colab}/assets/colab-badge.svg)]({colab}/github/{owner_name}/blob/{branch}/{nb})",
    ])


def colab_cell_source(url: str | None = None, ref: str | None = None) -> str:
    """Source of the first cell of every chapter."""
    url = url or repository_url()
    ref = ref or colab_ref()
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
    if argv[:1] == ["badges"]:
        print(readme_badges())
        return 0
    if not argv or argv[0] not in ("check", "sync"):
        print("usage: python -m probdr_lite._notebooks sync [book/src/NAME.py ...]\n"
              "       python -m probdr_lite._notebooks check [book/NAME.ipynb ...]\n"
              "       python -m probdr_lite._notebooks badges", file=sys.stderr)
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
