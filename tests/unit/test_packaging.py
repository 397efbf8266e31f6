"""The project's install files agree with each other and with pyproject.toml, which holds the ranges.

pyproject.toml: run-time `dependencies` (what the notebooks import) and the extras `book`,
`lab` and `test` (tools). environment.yml: everything, for a local conda install. binder/:
run time and JupyterLab only, for readers on Binder. requirements-lock.txt (tests/unit/test_lock.py)
pins what `make install` installs.
"""

import fnmatch
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
notebooks = tool("notebooks")  # tools/notebooks.py: the repository's notebook tooling
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]

# conda-forge names that differ from PyPI's
CONDA_TO_PYPI = {"pytorch-cpu": "torch", "matplotlib-base": "matplotlib", "playwright-python": "playwright"}
TOOLS = {"jupyter-book", "pytest", "nbformat", "pyyaml", "packaging", "playwright", "sphinx", "uv"}


def pypi_requirements(reqs):
    """{name: SpecifierSet} of PEP 508 strings."""
    out = {}
    for text in reqs:
        req = Requirement(text)
        out[canonicalize_name(req.name)] = req.specifier
    return out


def conda_requirements(path):
    """{PyPI name: SpecifierSet} of a conda environment file's conda packages (python and pip aside)."""
    env = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert env["channels"][0] == "conda-forge" and "defaults" not in env["channels"], path
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str):
            name, spec = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", dep).groups()
            if name in ("python", "pip"):
                continue
            out[canonicalize_name(CONDA_TO_PYPI.get(name, name))] = SpecifierSet(spec)
    return out


def all_extras():
    reqs = list(PROJECT["dependencies"])
    for extra in PROJECT["optional-dependencies"].values():
        reqs += extra
    return pypi_requirements(reqs)


def test_environment_yml_names_every_requirement_with_the_same_range():
    assert conda_requirements(ROOT / "environment.yml") == all_extras()


def test_environment_yml_uses_conda_forge_names():
    """conda-forge's `playwright` is the Node.js command line; the Python package is `playwright-python`."""
    deps = [d for d in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"] if isinstance(d, str)]
    names = {re.split(r"[<>=! ]", d)[0] for d in deps}
    assert "playwright-python" in names and "playwright" not in names
    assert "pytorch-cpu" in names and "torch" not in names and "pytorch" not in names
    pip_section = [d for d in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"] if isinstance(d, dict)]
    assert pip_section and any(re.search(r"-e \.$", line) for line in pip_section[0]["pip"])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pip's own vendored pkg_resources
def test_environment_yml_pip_section_is_a_requirements_file_pip_accepts(tmp_path):
    """conda writes the `pip:` section to a requirements file and runs `pip install -U -r FILE`: pip's own parser
    must accept every line (it rejects options such as --no-deps there: "no such option")."""
    from pip._internal.network.session import PipSession
    from pip._internal.req.req_file import parse_requirements

    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    path = tmp_path / "condaenv.requirements.txt"
    path.write_text("\n".join(section) + "\n", encoding="utf-8")
    parsed = list(parse_requirements(str(path), session=PipSession()))
    assert [(r.requirement, r.is_editable) for r in parsed] == [(".", True)]
    path.write_text("--no-deps -e .\n", encoding="utf-8")  # the section as it was: the parser says no
    with pytest.raises(BaseException, match="no-deps"):
        list(parse_requirements(str(path), session=PipSession()))


def test_binder_environment_is_run_time_only_with_an_exact_python():
    path = ROOT / "binder" / "environment.yml"
    env = yaml.safe_load(path.read_text(encoding="utf-8"))
    pythons = [d for d in env["dependencies"] if isinstance(d, str) and re.match(r"python\b", d)]
    assert len(pythons) == 1 and re.fullmatch(r"python=3\.\d+\.\d+", pythons[0]), pythons
    runtime = pypi_requirements(PROJECT["dependencies"])
    lab = pypi_requirements(PROJECT["optional-dependencies"]["lab"])
    # ipywidgets narrowed to 8: the site's Live Code runs on Binder, and Thebe's widget manager is ipywidgets 8's
    assert conda_requirements(path) == {**runtime, **lab, "notebook": SpecifierSet(">=7,<8"),
                                        "ipywidgets": SpecifierSet(">=8,<9")}
    assert not set(conda_requirements(path)) & TOOLS
    # no pip section: installing the checkout from environment.yml would make every commit rebuild the image
    assert not [d for d in env["dependencies"] if isinstance(d, dict)]


def test_binder_python_is_one_the_package_supports():
    env = yaml.safe_load((ROOT / "binder" / "environment.yml").read_text(encoding="utf-8"))
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert SpecifierSet(PROJECT["requires-python"]).contains(python.split("=", 1)[1])


def test_binder_postbuild_installs_the_package_without_dependencies():
    post = ROOT / "binder" / "postBuild"
    text = post.read_text(encoding="utf-8")
    assert text.startswith("#!/bin/bash") and "set -euo pipefail" in text
    commands = [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#") and not l.startswith("set ")]
    assert commands == ["python -m pip install --no-deps --no-cache-dir ."]
    assert os.access(post, os.X_OK)
    try:
        mode = subprocess.run(["git", "ls-files", "-s", "binder/postBuild"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.split()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        pytest.skip("not a git checkout")
    assert mode == "100755", "postBuild must be committed executable"


def test_binder_ignores_the_root_files_it_must_not_use():
    """repo2docker reads binder/ instead of the root when binder/ exists (so the root requirements.txt is for
    pip readers only); binder/ itself holds no second recipe."""
    assert (ROOT / "binder" / "environment.yml").exists()
    assert not (ROOT / "binder" / "requirements.txt").exists()


def test_requirements_txt_is_what_a_reader_needs():
    """requirements.txt at the root (the design card lists it): exactly pyproject.toml's run-time requirements,
    then its `lab` extra (JupyterLab and a kernel, to open the reader notebooks), the same ranges, nothing else
    (no tools, no pins, no URLs)."""
    lines = [l.strip() for l in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()]
    reqs = [l for l in lines if l and not l.startswith("#")]
    wanted = PROJECT["dependencies"] + PROJECT["optional-dependencies"]["lab"]
    assert [str(Requirement(r)) for r in reqs] == [str(Requirement(r)) for r in wanted]
    assert {"jupyterlab", "ipykernel"} <= set(pypi_requirements(reqs))
    assert not any(l.startswith(("-", "git+", "http")) or "==" in l for l in reqs)


def test_pyproject_ranges():
    assert PROJECT["requires-python"] == ">=3.10"
    jb = pypi_requirements(PROJECT["optional-dependencies"]["book"])["jupyter-book"]
    assert jb == SpecifierSet(">=1.0.4,<2")
    # ranges, not pins: Colab and Binder bring their own torch and ipywidgets 7
    assert not any("==" in d for d in PROJECT["dependencies"])
    assert pypi_requirements(PROJECT["dependencies"])["ipywidgets"] == SpecifierSet(">=7.6,<9")
    assert not set(pypi_requirements(PROJECT["dependencies"])) & (TOOLS | {"jupyterlab", "jupyterlab-myst"})


def test_tests_and_lab_get_jupyterlab_with_myst():
    for extra in ("lab", "test"):
        names = set(pypi_requirements(PROJECT["optional-dependencies"][extra]))
        assert {"jupyterlab", "jupyterlab-myst"} <= names, extra


def test_project_urls_follow_from_config_yml():
    assert PROJECT["urls"] == notebooks.project_urls()



def _found_packages(include) -> list[str]:
    """The packages ``[tool.setuptools.packages.find]`` finds, as setuptools' finder walks: folders with an
    ``__init__.py``, from the repository root down through packages only, kept where a pattern matches. (Not
    ``setuptools.find_packages`` itself: importing setuptools in a test session that already loaded the
    standard library's distutils fails.)"""
    found = []

    def walk(folder: Path, name: str) -> None:
        if not (folder / "__init__.py").is_file():
            return
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in include):
            found.append(name)
        for sub in sorted(folder.iterdir()):
            if sub.is_dir():
                walk(sub, f"{name}.{sub.name}")

    for top in sorted(ROOT.iterdir()):
        if top.is_dir() and not top.name.startswith("."):
            walk(top, top.name)
    return found


def test_the_wheel_holds_no_repository_tooling():
    """The notebook tooling reads _config.yml, _toc.yml and book/src from the repository root, which an installed
    wheel does not have: it is tools/notebooks.py, outside the packages the wheel is built from. (The test reads
    what the wheel holds, the files of the found packages, rather than building one, which would be slow.)"""
    found = _found_packages(PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"])
    assert found and all(p == "probdr_lite" or p.startswith("probdr_lite.") for p in found), found
    modules = {path for p in found for path in (ROOT / p.replace(".", "/")).rglob("*.py")}
    names = {path.name for path in modules}
    assert "_notebooks.py" not in names and "notebooks.py" not in names
    assert (ROOT / "tools" / "notebooks.py").is_file()
    for path in modules:  # nothing the reader installs reads the repository's own configuration
        text = path.read_text(encoding="utf-8")
        assert "_config.yml" not in text and "_toc.yml" not in text, path.relative_to(ROOT)
