"""The widget code also runs under ipywidgets 7.7, the version Colab ships.

``make install`` puts ipywidgets 7.7.5 (without its dependencies, which the
venv already has) in ``.venv/ipywidgets7``. This test reruns the slider and
scrub tests in a subprocess with that copy first on the path.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPAT = ROOT / ".venv" / "ipywidgets7"
WIDGET_TESTS = ["test_plotting_widgets.py", "test_figures_ch1_3.py", "test_figures_ch4_5.py"]


def test_widget_code_works_with_ipywidgets_7():
    if not (COMPAT / "ipywidgets").is_dir():
        pytest.skip("ipywidgets 7.7 is not in .venv/ipywidgets7 (make install puts it there)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(COMPAT), str(ROOT)])}
    version = subprocess.run([sys.executable, "-c", "import ipywidgets; print(ipywidgets.__version__)"],
                             env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert version.startswith("7.7"), version
    tests = [str(ROOT / "tests" / "unit" / name) for name in WIDGET_TESTS]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, f"widget tests fail under ipywidgets {version}:\n{run.stdout[-4000:]}"
