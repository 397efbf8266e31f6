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
These tests download packages from PyPI; with one process they run after the book's tests.

All the selected lines run at once, each in its own copy and virtual environment (a thread each, waiting on its
``bash``; at most :func:`lines_at_once` at a time), started by the first test of this module that asks for one; each
test then waits for its own line and fails with what that line raised. A line spends much of its time waiting: on the
package index (pip resolves one requirement after another), on the disk (several GB of files written) and on its
kernel starting; side by side those waits overlap, and with the other test worker's work (``make test``), instead of
holding a worker each in turn.

Each line writes everything it writes into its own folder: the clone, the virtual environment and pip's temporary
files (``TMPDIR``), which hold the downloaded wheels while pip installs them. The folder is deleted as soon as the
line ends, before the next line starts. How many lines run at once follows the free disk there
(:data:`LINE_DISK_GB` each, :data:`SPARE_DISK_GB` left for the tests beside them); where not even one fits, every
line's test fails saying how much disk it needs and how much is free, instead of pip failing half-way with ``No space
left on device``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

import pytest
import yaml

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "notebooks/jupyter/data.ipynb"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu/"
#: Deadlines of one install command and of the notebook: only a hung one waits this long. The lines share the machine
#: (see above), so on two busy cores one takes several times its usual 3-5 minutes.
INSTALL_TIMEOUT_S, NOTEBOOK_TIMEOUT_S = 3600, 900
#: Lines installing at the same time at most (each writes a virtual environment of up to 6.3 GB), when the disk has
#: room for them (:func:`lines_at_once`).
AT_ONCE = 3
#: Free disk one line takes at its peak: the virtual environment with PyTorch's CUDA build, pip's temporary files, the
#: clone and the notebook's output. Measured (free disk sampled every 2 s): 7.0 GB at the peak for one line alone,
#: 19.7 GB for the three side by side; 9 leaves a margin.
LINE_DISK_GB = 9
#: Free disk kept for the other tests running beside the lines (the book build and its browsers).
SPARE_DISK_GB = 3


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


def _env(venv: Path, tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "CONDA"))}
    # TMPDIR (``tmp``, in the line's own folder): pip's downloads and unpacked wheels (GBs for PyTorch's CUDA build)
    # go where the folder's deletion takes them too, and the disk a line uses is counted in one place.
    # PIP_NO_COMPILE: pip writes no bytecode for the packages it installs (PyTorch alone has thousands of modules);
    # Python compiles the modules the notebook imports when it imports them, so what the line installs and what
    # runs are the same, and the three installs take less of the machine.
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_COMPILE="1", MPLBACKEND="Agg", TMPDIR=str(tmp))
    return env


#: The process groups of the commands running now (``_run``), killed when the tests stop before they finish.
RUNNING: set[int] = set()


def _kill(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _run(cmd: str, cwd: Path, env: dict, timeout: int) -> float:
    """Run ``cmd`` with bash in a process group of its own; past ``timeout`` the whole group is killed (killing bash
    alone would leave its pip running on, into a folder being deleted)."""
    start = time.perf_counter()
    with subprocess.Popen(["bash", "-euo", "pipefail", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as proc:
        RUNNING.add(proc.pid)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc.pid)
            out, err = proc.communicate()
            pytest.fail(f"`{cmd}` did not finish in {timeout} s:\n{(out + err)[-4000:]}", pytrace=False)
        finally:
            RUNNING.discard(proc.pid)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        pytest.fail(f"`{cmd}` exited {proc.returncode} after {seconds:.0f} s:\n{(out + err)[-4000:]}",
                    pytrace=False)
    return seconds


def _new_reader(folder: Path) -> tuple[Path, Path, dict]:
    """A fresh clone (a copy of the checkout) and a new, empty virtual environment inside it; temporary files go to
    ``folder/tmp``."""
    repo = _checkout_copy(folder / "probdr-lite")
    venv = repo / ".venv"
    subprocess.run([_python(), "-m", "venv", str(venv)], check=True)
    (folder / "tmp").mkdir()
    return repo, venv, _env(venv, folder / "tmp")


def _then_a_notebook_runs(name: str, repo: Path, venv: Path, env: dict, install_s: float) -> str:
    """The installed Jupyter executes a reader notebook on its python3 kernel; the package is the copy's. Returns
    what the test prints: how long the line and the notebook took."""
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
    return f"[install line {name}] install {install_s:.0f} s, {NOTEBOOK} executed in {seconds:.0f} s"


def test_readme_marks_every_install_line():
    assert {"requirements", "lab", "torch-cpu", "torch-cpu-pip"} <= set(LINES), LINES
    assert LINES["requirements"] == "pip install -r requirements.txt && pip install --no-deps ."
    assert LINES["lab"] == 'pip install -e ".[lab]"'


def test_lines_at_once_follows_the_free_disk():
    """One line more for each LINE_DISK_GB free beyond the spare, none where one does not fit, never more than
    AT_ONCE."""
    one = SPARE_DISK_GB + LINE_DISK_GB
    assert [lines_at_once(gb) for gb in (0, one - 0.5, one, one + LINE_DISK_GB - 0.5, one + LINE_DISK_GB)] == \
        [0, 0, 1, 1, min(2, AT_ONCE)]
    assert lines_at_once(one + 100 * LINE_DISK_GB) == AT_ONCE


def _pip_line(name: str, repo: Path, venv: Path, env: dict) -> str:
    """README's line ``name``, as written, then the notebook."""
    seconds = _run(LINES[name], repo, env, INSTALL_TIMEOUT_S)
    return _then_a_notebook_runs(name, repo, venv, env, seconds)


def _cpu_pytorch_line(name: str, repo: Path, venv: Path, env: dict) -> str:
    """README's line ``name`` (PyTorch from its CPU index), as written: it installs PyTorch's CPU build; then the
    notebook."""
    seconds = _run(LINES[name], repo, env, INSTALL_TIMEOUT_S)  # make installs into the copy's .venv, this one
    torch = subprocess.run([str(venv / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert "+cpu" in torch or sys.platform == "darwin", torch
    return _then_a_notebook_runs(name, repo, venv, env, seconds)


def _conda_environment_as_conda_hands_it_to_pip(name: str, repo: Path, venv: Path, env: dict) -> str:
    from tests.unit.test_packaging import conda_requirements

    conda_packages = " ".join(f"'{name}{spec}'" for name, spec in conda_requirements(repo / "environment.yml").items())
    seconds = _run(f"pip install {conda_packages}", repo, env, INSTALL_TIMEOUT_S)  # what conda installs
    spec = yaml.safe_load((repo / "environment.yml").read_text(encoding="utf-8"))
    section = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    handed = repo / "condaenv.probdr.requirements.txt"  # conda's temporary file, beside environment.yml
    handed.write_text("\n".join(section), encoding="utf-8")
    seconds += _run(f"pip install -U -r {handed.name}", repo, env, INSTALL_TIMEOUT_S)
    handed.unlink()
    return _then_a_notebook_runs("conda", repo, venv, env, seconds)


#: Every install that is tested: README's lines by their marks, and conda's environment.yml; the longest first.
INSTALLS = {"requirements": _pip_line, "lab": _pip_line, "conda": _conda_environment_as_conda_hands_it_to_pip,
            "torch-cpu": _cpu_pytorch_line, "torch-cpu-pip": _cpu_pytorch_line}
NEEDS_TORCH_CPU_INDEX = ("torch-cpu", "torch-cpu-pip")


@pytest.fixture(scope="module")
def torch_cpu_index() -> bool:
    """Whether PyTorch's CPU index answers (asked once for both lines that need it)."""
    try:
        with urllib.request.urlopen(TORCH_CPU_INDEX, timeout=15):
            return True
    except OSError:
        return False


def _install(name: str, folder: Path) -> str:
    """One line from nothing: a reader's clone and new venv in ``folder``, the line, the notebook. The folder is
    deleted afterwards, before this thread takes the next line, so that line finds the disk free again."""
    try:
        repo, venv, env = _new_reader(folder)
        return INSTALLS[name](name, repo, venv, env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def lines_at_once(free_gb: float) -> int:
    """How many lines may install side by side with ``free_gb`` GB free: at most :data:`AT_ONCE`, each taking
    :data:`LINE_DISK_GB`, leaving :data:`SPARE_DISK_GB`; 0 when not even one fits."""
    return max(0, min(AT_ONCE, int((free_gb - SPARE_DISK_GB) // LINE_DISK_GB)))


def _no_room(free_gb: float, where: Path) -> NoReturn:
    pytest.fail(f"README's install lines need {LINE_DISK_GB + SPARE_DISK_GB} GB of free disk at {where} (one line "
                f"takes up to {LINE_DISK_GB} GB: a virtual environment with PyTorch and pip's unpacked wheels); "
                f"{free_gb:.1f} GB are free", pytrace=False)


@pytest.fixture(scope="module")
def lines(request, tmp_path_factory):
    """{name: the future of that line's run} for every line a selected test of this module asks for, all started at
    once (at most :func:`lines_at_once` at a time, as the disk allows); a line that needs PyTorch's CPU index is not
    started without it (the others start before the index is asked)."""
    selected = [item.callspec.params["name"] for item in request.session.items
                if getattr(item, "module", None) is request.module and item.originalname == "test_install_works"]
    where = tmp_path_factory.getbasetemp()
    free_gb = shutil.disk_usage(where).free / 1e9
    at_once = lines_at_once(free_gb)
    pool = ThreadPoolExecutor(max_workers=max(at_once, 1), thread_name_prefix="install-line")
    futures = {}

    def start(names):
        for n in names:
            if at_once:
                futures[n] = pool.submit(_install, n, tmp_path_factory.mktemp(f"install-{n}"))
            else:  # each test fails with the message, none installs
                futures[n] = pool.submit(_no_room, free_gb, where)

    start(n for n in INSTALLS if n in selected and n not in NEEDS_TORCH_CPU_INDEX)
    if any(n in selected for n in NEEDS_TORCH_CPU_INDEX) and request.getfixturevalue("torch_cpu_index"):
        start(n for n in NEEDS_TORCH_CPU_INDEX if n in selected)
    try:
        yield futures
    finally:
        # after the tests every line has finished; when they stop early, the lines not started yet never start and
        # the commands still running are killed
        pool.shutdown(wait=False, cancel_futures=True)
        for group in list(RUNNING):
            _kill(group)


@pytest.mark.parametrize("name", list(INSTALLS))
def test_install_works(name, lines: dict[str, Future], request):
    """README's line ``name`` (or conda's environment.yml), as written, in a new venv, then a reader notebook."""
    if name in NEEDS_TORCH_CPU_INDEX and not request.getfixturevalue("torch_cpu_index"):
        pytest.skip(f"PyTorch's CPU index ({TORCH_CPU_INDEX}) cannot be reached from this machine, and the line "
                    f"needs it")
    # what the line raised (its failure, an assertion), re-raised here; the timeout only bounds a hung line
    print("\n" + lines[name].result(timeout=2 * INSTALL_TIMEOUT_S + NOTEBOOK_TIMEOUT_S + 120))
