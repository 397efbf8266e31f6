"""Every install line README gives works as written: run in a new virtual environment, then a reader notebook runs.

For each line README marks with ``<!-- install-line: NAME -->`` (the bash block under the mark), and for conda's
``environment.yml``:

1. the checkout's files (tracked and untracked, not ignored) are copied into a scratch folder, as a reader's clone;
2. a new virtual environment is made there from the Python that runs the tests (``python -m venv``), and its
   ``bin/`` is put first on PATH, so the line's ``pip`` and ``make`` use it, as after ``source .venv/bin/activate``;
3. the line runs with bash, from the copy's root;
4. ``notebooks/jupyter/data.ipynb`` is executed with the Jupyter that the line installed (``jupyter nbconvert
   --execute``, its ``python3`` kernel): a line that installs no Jupyter or no kernel fails here, as it would for
   a reader who then opens the notebooks.

conda is not on these machines; conda's installs are done from PyPI under the PyPI names of the packages
``environment.yml`` lists (tests/unit/test_packaging.py's mapping), then its ``pip:`` section is handed to pip the way
conda does it: written to a requirements file in the folder of ``environment.yml`` and run as
``pip install -U -r FILE`` from that folder. The lines that need PyTorch's own index are skipped, saying why, where
that index cannot be reached. Each test prints how long the line and the notebook took (no assertion on it).
These tests download packages from PyPI; they run after the book's tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "notebooks/jupyter/data.ipynb"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu/"
INSTALL_TIMEOUT_S, NOTEBOOK_TIMEOUT_S = 1800, 900


def readme_lines() -> dict[str, str]:
    """{name: the bash block under ``<!-- install-line: name -->``} of README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.findall(r"<!-- install-line: ([\w-]+) -->\s*```bash\n(.*?)```", text, flags=re.S)
    lines = {}
    for name, block in found:
        commands = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
        lines[name] = "\n".join(c for c in commands if c)
    return lines


LINES = readme_lines()


def _python() -> str:
    """The interpreter the tests' own venv was made from (a new venv must not inherit this one's packages)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _checkout_copy(dest: Path) -> Path:
    """The checkout's files (``git ls-files``, tracked and untracked but not ignored) copied to ``dest``."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _env(venv: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "CONDA"))}
    # PIP_NO_COMPILE: pip writes no bytecode for the packages it installs (PyTorch alone has thousands of modules);
    # Python compiles the modules the notebook imports when it imports them, so what the line installs and what
    # runs are the same, and the three installs take less of the machine.
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_COMPILE="1", MPLBACKEND="Agg")
    return env


def _run(cmd: str, cwd: Path, env: dict, timeout: int) -> float:
    start = time.perf_counter()
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        pytest.fail(f"`{cmd}` exited {proc.returncode} after {seconds:.0f} s:\n{(proc.stdout + proc.stderr)[-4000:]}",
                    pytrace=False)
    return seconds


@pytest.fixture
def reader(tmp_path):
    """A fresh clone (a copy of the checkout) and a new, empty virtual environment inside it."""
    repo = _checkout_copy(tmp_path / "probdr-lite")
    venv = repo / ".venv"
    subprocess.run([_python(), "-m", "venv", str(venv)], check=True)
    yield repo, venv, _env(venv)
    # A venv with PyTorch is several GB of small files, which take a minute to delete: a process of its own deletes
    # them while the tests go on (pytest's temporary folders are not read again).
    subprocess.Popen(["rm", "-rf", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)


def _then_a_notebook_runs(name: str, repo: Path, venv: Path, env: dict, install_s: float) -> None:
    """The installed Jupyter executes a reader notebook on its python3 kernel; the package is the copy's."""
    assert (venv / "bin" / "jupyter").exists(), f"{name}: the line installed no Jupyter"
    where = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import probdr_lite; print(probdr_lite.__file__)"],
                                cwd=repo / "notebooks", env=env, capture_output=True, text=True,
                                check=True).stdout.strip()).resolve()
    assert where.is_relative_to(repo.resolve()), f"{name}: probdr_lite comes from {where}, not the clone"
    out = repo / "executed"
    seconds = _run(f"jupyter nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=python3 "
                   f"--ExecutePreprocessor.timeout={NOTEBOOK_TIMEOUT_S} --output-dir {out} {NOTEBOOK}",
                   repo, env, NOTEBOOK_TIMEOUT_S + 60)
    assert (out / Path(NOTEBOOK).name).exists()
    print(f"\n[install line {name}] install {install_s:.0f} s, {NOTEBOOK} executed in {seconds:.0f} s")


def test_readme_marks_every_install_line():
    assert {"requirements", "lab", "torch-cpu", "torch-cpu-pip"} <= set(LINES), LINES
    assert LINES["requirements"] == "pip install -r requirements.txt && pip install --no-deps ."
    assert LINES["lab"] == 'pip install -e ".[lab]"'


def _pip_line_installs_what_a_reader_needs(name, reader):
    repo, venv, env = reader
    seconds = _run(LINES[name], repo, env, INSTALL_TIMEOUT_S)
    _then_a_notebook_runs(name, repo, venv, env, seconds)


# Each install line is a class of its own: make test's workers take a module or a class as one unit of work
# (pytest-xdist's loadscope), so two lines can install side by side.
class TestRequirementsLine:
    def test_installs_what_a_reader_needs(self, reader):
        _pip_line_installs_what_a_reader_needs("requirements", reader)


class TestLabLine:
    def test_installs_what_a_reader_needs(self, reader):
        _pip_line_installs_what_a_reader_needs("lab", reader)


@pytest.fixture(scope="module")
def torch_cpu_index() -> bool:
    """Whether PyTorch's CPU index answers (asked once for both lines that need it)."""
    try:
        with urllib.request.urlopen(TORCH_CPU_INDEX, timeout=15):
            return True
    except OSError:
        return False


@pytest.fixture
def needs_torch_cpu_index(torch_cpu_index):
    """Skips, before the reader's copy and virtual environment are made, where PyTorch's CPU index cannot be
    reached (the fixtures a test names are set up in that order)."""
    if not torch_cpu_index:
        pytest.skip(f"PyTorch's CPU index ({TORCH_CPU_INDEX}) cannot be reached from this machine, and the line "
                    f"needs it")


@pytest.mark.parametrize("name", ["torch-cpu", "torch-cpu-pip"])
def test_cpu_pytorch_line(name, needs_torch_cpu_index, reader):
    repo, venv, env = reader
    seconds = _run(LINES[name], repo, env, INSTALL_TIMEOUT_S)  # make installs into the copy's .venv, this one
    torch = subprocess.run([str(venv / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert "+cpu" in torch or sys.platform == "darwin", torch
    _then_a_notebook_runs(name, repo, venv, env, seconds)


class TestCondaEnvironment:
    def test_as_conda_hands_it_to_pip(self, reader):
        _conda_environment_as_conda_hands_it_to_pip(reader)


def _conda_environment_as_conda_hands_it_to_pip(reader):
    from tests.unit.test_packaging import conda_requirements

    repo, venv, env = reader
    conda_packages = " ".join(f"'{name}{spec}'" for name, spec in conda_requirements(repo / "environment.yml").items())
    seconds = _run(f"pip install {conda_packages}", repo, env, INSTALL_TIMEOUT_S)  # what conda installs
    spec = yaml.safe_load((repo / "environment.yml").read_text(encoding="utf-8"))
    section = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    handed = repo / "condaenv.probdr.requirements.txt"  # conda's temporary file, beside environment.yml
    handed.write_text("\n".join(section), encoding="utf-8")
    seconds += _run(f"pip install -U -r {handed.name}", repo, env, INSTALL_TIMEOUT_S)
    handed.unlink()
    _then_a_notebook_runs("conda", repo, venv, env, seconds)
