"""Local Jupyter: the JupyterLab that `make install` brings renders MyST through jupyterlab-myst,
and `make lab` starts it on the loopback address."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_jupyterlab_myst_is_enabled_and_compatible_with_the_installed_jupyterlab():
    """A prebuilt extension built for another @jupyter/ydoc is listed but never loaded
    (JupyterLab 4.6 with jupyterlab-myst 2.7): the chapters' MyST would show raw."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("jupyterlab_myst")
    out = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"],
                         capture_output=True, text=True, timeout=300)
    text = ANSI.sub("", out.stdout + out.stderr)
    lines = [l for l in text.splitlines() if re.search(r"^\s*jupyterlab-myst v\d", l)]
    assert lines, text
    assert "enabled" in lines[0] and lines[0].split()[3] == "OK", lines[0]
    assert "not compatible" not in text, text


def test_make_lab_serves_the_chapters_on_loopback_only():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    rule = re.search(r"^lab: install\n((?:\t.*\n)+)", makefile, re.M)
    assert rule, "make lab must depend on install (which brings JupyterLab and jupyterlab-myst)"
    recipe = rule.group(1)
    assert "jupyter lab" in recipe and "--ip=127.0.0.1" in recipe and "--notebook-dir=book" in recipe


def _semver(text: str) -> tuple:
    m = re.match(r"\D*(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.]+))?", text)
    major, minor, patch, pre = m.groups()
    return int(major), int(minor), int(patch), pre


def _satisfies(version: str, required: str) -> bool:
    """npm's ^ and ~ (and a bare version), as module federation checks a shared package: a pre-release
    lower bound (4.6.0-beta.0) is below 4.6.0 and above every 4.5.x."""
    v, r = _semver(version), _semver(required)
    low = r[:3]
    if tuple(v[:3]) < tuple(low):
        return False
    if required.startswith("^"):
        return v[0] == r[0] if r[0] else v[:2] == r[:2]
    if required.startswith("~"):
        return v[:2] == r[:2]
    if required[0].isdigit():
        return v[:3] == r[:3]
    return True  # >= and other forms: the lower bound above


def _required_versions(folder: Path) -> dict[str, str]:
    """{shared package: the version range the extension's bundle requires}, read from its webpack chunks (either
    minified form: requiredVersion:"^4.6.0" or "name",!1,[1,4,4,6])."""
    text = "".join(p.read_text(encoding="utf-8", errors="ignore") for p in (folder / "static").glob("*.js"))
    out = dict(re.findall(r'shareKey:"([^"]+)",import:[^,]*,requiredVersion:"([^"]+)"', text))
    prefix = {0: ">=", 1: "^", 2: "~"}
    for name, nums in re.findall(r'"(@[\w.-]+/[\w.-]+)",\s*(?:!1|false),\s*\[([\d,]+)\]', text):
        n = [int(x) for x in nums.split(",")]
        if len(n) >= 4:
            out.setdefault(name, f"{prefix.get(n[0], '')}{n[1]}.{n[2]}.{n[3]}")
    return out


def test_every_lab_extension_loads_in_the_jupyterlab_it_is_installed_with():
    """Every extension JupyterLab lists (its own list: `jupyter labextension list`) requires of JupyterLab's
    shared packages only versions that this JupyterLab has. jupytext 1.19 (requires @jupyterlab/* ^4.6.0-beta)
    and jupyterlab-widgets 3.0.17 (^4.6.2) were built for JupyterLab 4.6: in 4.5 the first failed to load and
    the second warned of an unsatisfied version; the lock holds releases built for 4.4."""
    pytest.importorskip("jupyterlab")
    out = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"],
                         capture_output=True, text=True, timeout=300)
    text = ANSI.sub("", out.stdout + out.stderr)
    folders = re.findall(r"^(/\S+labextensions)$", text, re.M)
    listed = re.findall(r"^\s+(\S+) v(\S+) (enabled|disabled)", text, re.M)
    assert folders and listed, text
    names = {n for n, _, _ in listed}
    assert {"jupyterlab-myst", "@jupyter-widgets/jupyterlab-manager"} <= names, names
    import jupyterlab

    core = json.loads((Path(jupyterlab.__file__).parent / "static" / "package.json").read_text())["resolutions"]
    checked = {}
    for name, version, state in listed:
        folder = next((Path(f) / name for f in folders if (Path(f) / name / "package.json").exists()), None)
        assert folder is not None, name
        needs = {k: v for k, v in _required_versions(folder).items() if k.startswith(("@jupyterlab/", "@jupyter/",
                                                                                      "@lumino/"))}
        bad = {k: f"needs {v}, JupyterLab has {core[k]}" for k, v in needs.items()
               if k in core and not _satisfies(core[k].lstrip("~^"), v)}
        assert not bad, f"{name} v{version} does not load in JupyterLab {core['@jupyterlab/application']}: {bad}"
        checked[name] = len(needs)
    assert checked["@jupyter-widgets/jupyterlab-manager"] > 0, "no requirement found: the reader is broken"


def test_the_version_check_catches_what_jupyterlab_rejects():
    assert not _satisfies("4.5.11", "^4.6.0-beta.0") and not _satisfies("4.5.11", "^4.6.2")
    assert _satisfies("4.5.11", "^4.4.9") and _satisfies("7.5.11", "^7.4.6") and not _satisfies("5.0.0", "^4.0.0")
    assert _satisfies("2.5.0", "^2.3.1-alpha.1") and not _satisfies("4.6.1", "~4.5.0")
