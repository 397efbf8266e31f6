"""Conventions for the chapter notebooks, and a small tool that enforces them.

Every chapter notebook

- starts with the Colab cell below (it installs this package only on Colab,
  and only when the import fails; anywhere else it does nothing and touches
  no network);
- is committed without outputs or execution counts (the book build executes it);
- uses the ``python3`` kernel.

``python -m probdr_lite._notebooks fix book/*.ipynb`` rewrites notebooks to
follow these rules; ``check`` reports the ones that do not (the tests call it);
``badges`` prints README's badges. The repository URL and branch come from
``_config.yml`` and from nowhere else.
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
    if argv[:1] == ["badges"]:
        print(readme_badges())
        return 0
    if not argv or argv[0] not in ("check", "fix"):
        print("usage: python -m probdr_lite._notebooks check|fix NOTEBOOK... | badges", file=sys.stderr)
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
