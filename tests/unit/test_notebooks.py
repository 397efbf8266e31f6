"""Chapter notebooks follow the book's conventions and match their sources."""

import json
from pathlib import Path

import pytest
import yaml

from probdr_lite import _notebooks

ROOT = Path(__file__).resolve().parents[2]


def toc_notebooks():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for c in toc.get("chapters", [])]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    return [ROOT / f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").exists()]


def test_every_toc_entry_exists():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    for entry in [toc["root"]] + [c["file"] for c in toc["chapters"]]:
        assert any((ROOT / f"{entry}{ext}").exists() for ext in (".md", ".ipynb")), entry


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_notebook_conventions(path):
    """Colab install cell first, no outputs, python3 kernel."""
    assert _notebooks.problems(path) == []


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_colab_cell_installs_only_on_colab_and_never_touches_the_network(path):
    cell = json.loads(path.read_text())["cells"][0]
    src = "".join(cell["source"])
    assert 'if "google.colab" in sys.modules and importlib.util.find_spec("probdr_lite") is None:' in src
    assert _notebooks.repository_url() in src and f"@{_notebooks.COLAB_REF}" in src
    # outside Colab the guarded block must not run: execute it with a stub that would fail loudly
    code = src.replace("    %pip", "    raise AssertionError('would install') #")
    exec(compile(code, str(path), "exec"), {})


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_notebook_matches_its_source(path, tmp_path):
    """Chapters are written in book/src/*.py (percent format); the .ipynb must be regenerated from it."""
    import importlib.util

    src = ROOT / "book" / "src" / f"{path.stem}.py"
    if not src.exists():
        pytest.skip(f"{path.name} has no percent-format source")
    spec = importlib.util.spec_from_file_location("mknb", ROOT / "tools" / "mknb.py")
    mknb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mknb)
    out = tmp_path / path.name
    mknb.convert(src, out)
    assert json.loads(out.read_text()) == json.loads(path.read_text()), (
        f"run: python tools/mknb.py {src.relative_to(ROOT)} {path.relative_to(ROOT)}"
    )


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_chapter_title_has_no_maths(path):
    """The title appears in the sidebar of every page, and pages without maths do not load MathJax:
    a $...$ in a title would show as raw TeX there (write A − I, κ, η in Unicode instead)."""
    cells = json.loads(path.read_text())["cells"]
    title = next(l for c in cells if c["cell_type"] == "markdown"
                 for l in "".join(c["source"]).splitlines() if l.startswith("# "))
    assert "$" not in title and "\\(" not in title, title
