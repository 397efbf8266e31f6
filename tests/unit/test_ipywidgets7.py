"""The widget code runs under Colab's kernel-side widget stack: IPython 7.34.0, ipywidgets 7.7.1 and
traitlets 5.7.1 together (with ipykernel 6.17.1 and jupyter_client 7.4.9), the versions of Colab's
published package list (2026-08-19).

``make install`` puts those packages, without dependencies, in ``.venv/colab-widgets`` (the Makefile's
``COLAB_PINS``). This test reruns the slider, panel and scrub tests in a subprocess with that folder first
on the path, so they import Colab's versions and run the rest (numpy, matplotlib, torch) from the venv.
Not covered: Colab runs Python 3.13 and numpy 2.1 / matplotlib 3.10; here the venv's Python and
versions run them. Missing folder: skipped on a developer's machine, a failure in CI (``CI=true``).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COLAB = ROOT / ".venv" / "colab-widgets"
#: Colab's versions (its pip freeze of 2026-08-19) of the packages the widget code meets in a kernel.
PINS = {"IPython": "7.34.0", "ipywidgets": "7.7.1", "traitlets": "5.7.1", "ipykernel": "6.17.1",
        "jupyter_client": "7.4.9"}
WIDGET_TESTS = ["test_plotting_widgets.py", "test_figures_eigenmaps_elbo_unrolling.py",
                "test_figures_block_mnist.py"]


def _makefile_pins() -> dict:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    line = re.search(r"^COLAB_PINS\s*:=(.*)$", text, re.M)
    assert line, "the Makefile has no COLAB_PINS"
    return dict(p.split("==") for p in line.group(1).split())


def test_makefile_installs_colabs_versions():
    pins = {k.lower(): v for k, v in _makefile_pins().items()}
    assert {k.lower(): v for k, v in PINS.items()}.items() <= pins.items()


def test_widget_code_works_under_colabs_ipython_ipywidgets_and_traitlets():
    if not (COLAB / ".installed").is_file():
        msg = f"Colab's widget stack is not in {COLAB.relative_to(ROOT)} (make install puts it there)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"required in CI: {msg}", pytrace=False)
        pytest.skip(msg)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(COLAB), str(ROOT)])}
    probe = "; ".join([f"import {m}" for m in PINS] + [f"print({' ,'.join(f'{m}.__version__' for m in PINS)})"])
    versions = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert dict(zip(PINS, versions.stdout.split())) == PINS
    tests = [str(ROOT / "tests" / "unit" / name) for name in WIDGET_TESTS]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, f"widget tests fail under Colab's versions {PINS}:\n{run.stdout[-4000:]}"
    assert re.search(r"\d+ passed", run.stdout) and " skipped" not in run.stdout.splitlines()[-1], run.stdout[-500:]
