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
def test_notebook_is_jupytexts_conversion_of_its_source(path):
    """Chapters are written in book/src/*.py (percent format); the .ipynb is Jupytext's conversion of it, read here
    by Jupytext directly (not through the package), with no outputs and no execution counts."""
    import jupytext

    src = ROOT / "book" / "src" / f"{path.stem}.py"
    assert src.exists(), f"{path.name} has no source book/src/{src.name}"
    expected = jupytext.read(src, fmt="py:percent")
    committed = json.loads(path.read_text())
    hint = "run: python -m probdr_lite._notebooks sync"
    assert [c["cell_type"] for c in committed["cells"]] == [c.cell_type for c in expected.cells], hint
    for ours, theirs in zip(committed["cells"], expected.cells):
        assert ours["source"] == theirs.source, hint
        assert ours["metadata"].get("tags", []) == theirs.metadata.get("tags", []), hint
        if ours["cell_type"] == "code":  # stripped, as nbstripout leaves a notebook
            assert ours["outputs"] == [] and ours["execution_count"] is None
    assert set(committed["metadata"]) <= {"kernelspec", "language_info"}  # no widget state, no Jupytext header


@pytest.mark.parametrize("src", sorted((ROOT / "book" / "src").glob("*.py")), ids=lambda p: p.name)
def test_every_source_starts_with_the_tagged_colab_cell(src):
    import jupytext

    first = jupytext.read(src, fmt="py:percent").cells[0]
    assert first.cell_type == "code" and first.metadata.get("tags") == _notebooks.COLAB_TAGS
    assert first.source == _notebooks.colab_cell_source()
    assert (ROOT / "book" / f"{src.stem}.ipynb").exists(), "run: python -m probdr_lite._notebooks sync"


def test_sync_writes_a_notebook_and_adds_the_colab_cell(tmp_path):
    src_dir = tmp_path / "book" / "src"
    src_dir.mkdir(parents=True)
    src = src_dir / "toy.py"
    src.write_text('# %% [markdown]\n# # A toy\n\n# %% tags=["hide-input"]\nx = 1\n', encoding="utf-8")
    changed = _notebooks.sync([src])
    nb_path = tmp_path / "book" / "toy.ipynb"
    assert src in changed and nb_path in changed
    nb = json.loads(nb_path.read_text())
    assert [c["cell_type"] for c in nb["cells"]] == ["code", "markdown", "code"]
    assert nb["cells"][2]["metadata"] == {"tags": ["hide-input"]} and nb["cells"][1]["source"] == "# A toy"
    assert _notebooks.problems(nb_path) == []
    assert _notebooks.sync([src]) == []  # a second run changes nothing
    nb["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1"}]
    nb_path.write_text(json.dumps(nb))
    assert any("outputs" in p for p in _notebooks.problems(nb_path))


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_chapter_title_has_no_maths(path):
    """The title appears in the sidebar of every page, and pages without maths do not load MathJax:
    a $...$ in a title would show as raw TeX there (write A − I, κ, η in Unicode instead)."""
    cells = json.loads(path.read_text())["cells"]
    title = next(l for c in cells if c["cell_type"] == "markdown"
                 for l in "".join(c["source"]).splitlines() if l.startswith("# "))
    assert "$" not in title and "\\(" not in title, title
