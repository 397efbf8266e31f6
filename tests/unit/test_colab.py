"""Installing probdr-lite on Google Colab changes none of Colab's pinned packages.

Colab pins IPython 7.34, ipywidgets 7.7.1, traitlets 5.7.1 and more (its kernel breaks on
IPython 8+). constraints/colab-*.txt holds its published package list; these tests read the
package's own metadata (pyproject.toml) and check every runtime requirement against it, offline.
pip leaves an installed package alone when its version already meets a requirement, so if every
requirement is met, the install cell adds probdr-lite and nothing else.
"""

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = sorted((ROOT / "constraints").glob("colab-*.txt"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def colab_pins(path):
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = Version(version.strip())
    return pins


def colab_python(path):
    match = re.search(r"Python (\d+\.\d+\.\d+)", path.read_text(encoding="utf-8"))
    assert match, f"{path.name} must name Colab's Python version in its header"
    return match.group(1)


def colab_environment(path):
    """The marker environment of Colab's Linux x86-64 runtime."""
    python = colab_python(path)
    env = default_environment()
    env.update(python_version=".".join(python.split(".")[:2]), python_full_version=python,
               implementation_name="cpython", platform_python_implementation="CPython",
               sys_platform="linux", platform_system="Linux", os_name="posix", platform_machine="x86_64")
    return env


def _latest():
    assert CONSTRAINTS, "constraints/colab-*.txt is missing"
    return CONSTRAINTS[-1]


def test_the_constraints_file_says_where_it_comes_from():
    header = [l for l in _latest().read_text(encoding="utf-8").splitlines() if l.startswith("#")]
    text = " ".join(header)
    date = re.search(r"colab-(\d{4}-\d{2}-\d{2})\.txt", _latest().name).group(1)
    assert date in text and "googlecolab/backend-info" in text and re.search(r"commit [0-9a-f]{7,}", text)


def test_colab_pins_the_packages_its_kernel_depends_on():
    """A sanity check of the parsed file: the versions issue 11 quotes from Colab's list."""
    pins = colab_pins(_latest())
    assert pins["ipython"] == Version("7.34.0") and pins["traitlets"] == Version("5.7.1")
    assert pins["ipywidgets"] == Version("7.7.1") and pins["ipykernel"] == Version("6.17.1")
    assert pins["torch"].public == "2.11.0" and pins["torch"].local == "cpu"


@pytest.mark.parametrize("requirement", PYPROJECT["dependencies"])
def test_every_runtime_requirement_is_met_by_colabs_pinned_version(requirement):
    req = Requirement(requirement)
    env = colab_environment(_latest())
    if req.marker is not None and not req.marker.evaluate(env):
        pytest.skip(f"{requirement} does not apply on Colab")
    pins = colab_pins(_latest())
    name = canonicalize_name(req.name)
    assert name in pins, f"{req.name} is not installed on Colab: the install cell would add it"
    assert req.specifier.contains(pins[name], prereleases=True), (
        f"Colab pins {req.name}=={pins[name]}, which {requirement!r} rejects: the install cell would change it"
    )


def test_colabs_python_is_supported():
    python = colab_python(_latest())
    assert Requirement(f"python{PYPROJECT['requires-python']}").specifier.contains(python)


def test_a_requirement_colab_would_have_to_change_is_caught():
    """The check above is not vacuous: the requirement issue 11 found (ipython>=8.0) fails it."""
    pins = colab_pins(_latest())
    assert not Requirement("ipython>=8.0").specifier.contains(pins["ipython"])
    assert not Requirement("traitlets>=5.8").specifier.contains(pins["traitlets"])


def test_runtime_requirements_hold_no_build_or_test_tools():
    names = {canonicalize_name(Requirement(r).name) for r in PYPROJECT["dependencies"]}
    tools = {"jupyter-book", "pytest", "playwright", "nbformat", "pyyaml", "jupyterlab", "jupyterlab-myst", "sphinx"}
    assert not names & tools, names & tools


def test_constraints_file_is_derived_from_the_published_freeze():
    """Where the project's shared data sits beside the repository, the constraints match Colab's freeze."""
    date = re.search(r"colab-(\d{4}-\d{2}-\d{2})\.txt", _latest().name).group(1)
    freeze = ROOT.parent / "shared" / "data" / "colab" / f"pip-freeze-cpu-{date}.txt"
    if not freeze.exists():
        pytest.skip("the shared data folder is not beside this checkout")
    spec = importlib.util.spec_from_file_location("from_freeze", ROOT / "constraints" / "from_freeze.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = _latest().read_text(encoding="utf-8").splitlines()
    body = [l for l in lines if not l.startswith("#") or "installed from" in l]
    assert body == module.pins(freeze.read_text(encoding="utf-8"))
