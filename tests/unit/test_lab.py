"""Local Jupyter: the JupyterLab that `make install` brings renders MyST through jupyterlab-myst,
and `make lab` starts it on the loopback address."""

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
