"""The project's install files agree with each other."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

# conda-forge names that differ from PyPI's
CONDA_TO_PYPI = {"pytorch-cpu": "torch"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def requirements_names():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return {_name(l) for l in lines if l.strip() and not l.lstrip().startswith(("#", "-"))}


def environment_names():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"][0] == "conda-forge" and "defaults" not in env["channels"]
    names = set()
    for dep in env["dependencies"]:
        if isinstance(dep, str):
            name = _name(dep)
            if name not in ("python", "pip"):
                names.add(CONDA_TO_PYPI.get(name, name))
    return names


def test_requirements_and_environment_name_the_same_packages():
    req, env = requirements_names(), environment_names()
    assert req == env, f"only in requirements.txt: {req - env}; only in environment.yml: {env - req}"


def test_environment_uses_cpu_pytorch_and_installs_the_package():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = [d for d in env["dependencies"] if isinstance(d, str)]
    assert any(d.startswith("pytorch-cpu") for d in deps)
    pip_section = [d for d in env["dependencies"] if isinstance(d, dict)][0]["pip"]
    assert "-e ." in pip_section or "." in pip_section


def test_pyproject_declares_every_runtime_requirement():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(d) for d in meta["dependencies"]}
    for extra in meta["optional-dependencies"].values():
        declared |= {_name(d) for d in extra}
    assert requirements_names() <= declared, requirements_names() - declared
    assert meta["requires-python"] == ">=3.10"
    jb = [d for d in meta["optional-dependencies"]["book"] if d.startswith("jupyter-book")][0]
    assert ">=1.0.4" in jb and "<2" in jb
    # ranges, not pins: Colab and Binder bring their own torch and ipywidgets 7
    assert not any("==" in d for d in meta["dependencies"])
    assert "ipywidgets>=7.6,<9" in meta["dependencies"]
