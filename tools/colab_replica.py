"""A replica of Google Colab's Python runtime, for running the reader notebooks as Colab runs them.

    python tools/colab_replica.py build [--optional]  # build it, or reuse the one built from the same inputs
    python tools/colab_replica.py path      # print where it is

What it is: a virtual environment of Python 3.13 (Colab's minor version; Colab has 3.13.15, these machines
pyenv's 3.13.0) holding the packages the notebooks and Colab's kernel need, at the versions of Colab's published
package list (``constraints/colab-*.txt``, derived from ``pip freeze`` of Colab's CPU runtime):

- the package's run-time requirements (read from ``pyproject.toml``, so a new one is picked up) and their
  dependencies, plus Colab's kernel, ``ipykernel``, and Colab's ``pip``, ``setuptools`` and ``wheel``: the subset
  of Colab's 638 pins that a notebook of this book can reach. The rest (TensorFlow, JAX, pandas, ...) is left out:
  nothing imports it, and it would triple the size;
- with two differences from Colab that cannot be avoided here: Colab installs ``torch 2.11.0+cpu`` and
  ``torchvision 0.26.0+cpu`` from PyTorch's own index, which these machines cannot reach, so PyPI's ``torch
  2.11.0`` and ``torchvision 0.26.0`` (CUDA builds on Linux, with NVIDIA's libraries and Triton, which Colab's CPU
  runtime lacks) stand in for them; Colab's own ``nvidia-*`` pins are dropped so that those libraries can be the
  ones PyPI's torch asks for;
- without ``jedi``: IPython 7.34 declares it, pip installs it with IPython, and Colab omits it; it is removed
  again so the replica has what Colab has (the Colab cell then must not bring it back: see
  ``colab_cell_source`` in ``tools/notebooks.py``).

Built once per machine and reused (kept under ``~/.cache/probdr-lite/``, or ``$PROBDR_COLAB_REPLICA``): the
folder records a key of its inputs (the constraints file, the requirements, the Python, this file's recipe
version) and is rebuilt only when the key changes. Tests never change it: they run on a hard-linked copy.
``colab-freeze.txt`` in the folder is its ``pip freeze --all`` right after the build.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Bump when the recipe below changes, so that replicas built by the old recipe are rebuilt.
RECIPE = "1"
#: Colab's minor version of Python (its os-info file: Python 3.13.15).
PYTHON_MINOR = "3.13"
#: What Colab's kernel runs beside the notebooks' own imports.
KERNEL = ["ipykernel", "pip", "setuptools", "wheel"]
#: PyPI's stand-ins for Colab's CPU builds from PyPI's index (same release, no local version tag).
STAND_INS = {"torch", "torchvision"}
#: Declared by Colab's IPython 7.34 but absent from Colab: removed after the install.
ABSENT_ON_COLAB = ["jedi"]
FREEZE = "colab-freeze.txt"
KEY = "colab-replica-key.txt"


def constraints_file() -> Path:
    files = sorted((ROOT / "constraints").glob("colab-*.txt"))
    if not files:
        raise SystemExit("constraints/colab-*.txt is missing")
    return files[-1]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def colab_pins(path: Path | None = None) -> dict[str, str]:
    """{canonical name: version} of Colab's published list."""
    pins = {}
    for line in (path or constraints_file()).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#") and "==" in line:
            name, _, version = line.partition("==")
            pins[canonical(name)] = version.strip()
    return pins


def replica_constraints(path: Path | None = None) -> str:
    """Colab's pins as pip constraints for the replica: torch and torchvision without their ``+cpu`` tag (PyPI's
    builds of the same release stand in), Colab's NVIDIA libraries left to PyPI's torch."""
    out = []
    for name, version in colab_pins(path).items():
        if name.startswith("nvidia-"):
            continue
        if name in STAND_INS:
            version = version.split("+", 1)[0]
        out.append(f"{name}=={version}")
    return "\n".join(out) + "\n"


def requirements() -> list[str]:
    """What is installed: the package's run-time requirements (names; the versions come from Colab's pins)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in project["dependencies"]]
    return list(dict.fromkeys(canonical(n) for n in names + KERNEL))


def find_python() -> str:
    """Python 3.13 for the replica: ``$PROBDR_COLAB_PYTHON``, else pyenv's 3.13.0, else ``python3.13`` on PATH."""
    candidates = [os.environ.get("PROBDR_COLAB_PYTHON")]
    pyenv = shutil.which("pyenv")
    if pyenv:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        if root:
            candidates.append(str(Path(root) / "versions" / "3.13.0" / "bin" / "python"))
    candidates.append(shutil.which(f"python{PYTHON_MINOR}"))
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            version = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                     capture_output=True, text=True).stdout.strip()
            if version == PYTHON_MINOR:
                return candidate
    raise SystemExit(f"no Python {PYTHON_MINOR} found for the Colab replica: set PROBDR_COLAB_PYTHON, or install "
                     f"pyenv's 3.13.0 or a python{PYTHON_MINOR} (Debian 13: apt-get install python3.13-venv)")


def replica_dir() -> Path:
    env = os.environ.get("PROBDR_COLAB_REPLICA")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "probdr-lite" / f"colab-replica-{constraints_file().stem.removeprefix('colab-')}"


def python_of(folder: Path) -> Path:
    return folder / "bin" / "python"


def key(python: str) -> str:
    version = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                             check=True).stdout.strip()
    text = "\n".join([RECIPE, version, replica_constraints(), *requirements(), *ABSENT_ON_COLAB])
    return hashlib.sha256(text.encode()).hexdigest()


def freeze(python: Path) -> list[str]:
    out = subprocess.run([str(python), "-m", "pip", "freeze", "--all", "--disable-pip-version-check"],
                         capture_output=True, text=True, check=True).stdout
    return sorted(l for l in out.splitlines() if l.strip())


def _pip(python: Path, *args: str) -> None:
    cmd = [str(python), "-m", "pip", "--disable-pip-version-check", *args]
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


@contextlib.contextmanager
def _locked(path: Path):
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_current(folder: Path, python: str) -> bool:
    stamp = folder / KEY
    return stamp.is_file() and stamp.read_text().strip() == key(python) and python_of(folder).exists()


def build() -> Path:
    """Build the replica (or keep the one built from the same inputs); return its folder."""
    python = find_python()
    folder = replica_dir()
    with _locked(folder.with_name(folder.name + ".lock")):
        if is_current(folder, python):
            print(f"Colab replica up to date: {folder}")
            return folder
        new = folder.with_name(folder.name + ".new")
        shutil.rmtree(new, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(new)], check=True)
        constraints = new / "constraints.txt"
        constraints.write_text(replica_constraints(), encoding="utf-8")
        pins = colab_pins()
        # Colab's pip first: it is the pip that the notebooks' %pip runs
        _pip(python_of(new), "install", "--quiet", "-c", str(constraints), *[n for n in ("pip", "setuptools", "wheel")])
        _pip(python_of(new), "install", "--quiet", "-c", str(constraints), *requirements())
        absent = [n for n in ABSENT_ON_COLAB if n not in pins]
        _pip(python_of(new), "uninstall", "--yes", *absent)
        (new / FREEZE).write_text("\n".join(freeze(python_of(new))) + "\n", encoding="utf-8")
        (new / KEY).write_text(key(python) + "\n", encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        new.rename(folder)
        print(f"Colab replica built: {folder} ({du(folder) / 2**30:.1f} GiB)")
        return folder


def du(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def compare_with_colab(lines: list[str]) -> dict[str, list[str]]:
    """A replica's freeze against Colab's pins: {"same": [...], "differ": ["name replica!=colab"], "extra": [...]}."""
    pins = colab_pins()
    out = {"same": [], "differ": [], "extra": []}
    for line in lines:
        match = re.match(r"([A-Za-z0-9_.-]+)==(\S+)$", line)
        if not match:
            out["extra"].append(line)
            continue
        name, version = canonical(match.group(1)), match.group(2)
        if name not in pins:
            out["extra"].append(line)
        elif pins[name] == version or (name in STAND_INS and pins[name].split("+")[0] == version):
            out["same"].append(name)
        else:
            out["differ"].append(f"{name} {version} (Colab {pins[name]})")
    return out


def required() -> bool:
    """Whether the replica must exist: in CI (``.ci/run`` sets PROBDR_REQUIRE_COLAB=1; hosted CI sets CI)."""
    return (os.environ.get("PROBDR_REQUIRE_COLAB") == "1"
            or os.environ.get("CI", "").lower() in ("1", "true", "yes"))


def main(argv: list[str]) -> int:
    if argv[:1] == ["build"]:
        try:
            build()
        except SystemExit as exc:
            # a developer's machine without Python 3.13: the replica test skips (in CI it is required)
            if "--optional" in argv and not required() and "no Python" in str(exc):
                print(f"{exc}\n(the Colab-replica test will be skipped)")
                return 0
            raise
        return 0
    if argv[:1] == ["path"]:
        print(replica_dir())
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
