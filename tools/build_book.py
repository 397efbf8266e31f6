"""Build the book into _build/html, executing every notebook; print the reports if it fails.

Used by ``make book`` and by the book tests. Runs ``jupyter-book build --all``
(every page is re-read, so every notebook is executed again and a change in
``probdr_lite`` can never hide behind a cached page) with ``-W --keep-going``:
any warning, including anything a notebook cell writes to stderr, fails the
build after all pages have been tried.

A build that succeeds records the digest of its inputs (:func:`inputs_digest`: every file of the checkout that
the build can read, the Python that ran it and the installed JavaScript) in ``_build/book-inputs.sha256``. The
book tests build again only when that digest differs, so ``make test`` after ``make book`` on the same checkout
tests that build instead of executing every notebook a second time; any change to a chapter, the package, the
configuration or the lock builds anew. A failed build records its digest in ``_build/book-inputs.failed``, so
that the other test workers report the failure instead of building again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
STAMP = ROOT / "_build" / "book-inputs.sha256"
FAILED = ROOT / "_build" / "book-inputs.failed"
#: Folders of the checkout that the build never reads (the tests of the built book, the benchmarks, CI's files).
NOT_INPUTS = ("tests/", "benchmarks/", ".ci/", ".github/")


def inputs_digest(root: Path = ROOT) -> str:
    """SHA-256 over what the build reads: the content and path of every file of the checkout (tracked, and
    untracked but not ignored) outside :data:`NOT_INPUTS`, the installed JavaScript's lock
    (``node_modules/.package-lock.json``), and the Python that builds (its version, platform and path, and the name
    and version of every package installed in its site-packages, so a package changed by hand builds again)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, capture_output=True,
                            check=True).stdout.decode().split("\0")
    digest = hashlib.sha256()
    digest.update(f"{sys.version}|{platform.platform()}|{sys.executable}\n".encode())
    site = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    installed = sorted({f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions(path=site)})
    digest.update("\n".join(installed).encode() + b"\n")
    names = sorted(n for n in listed if n and not n.startswith(NOT_INPUTS))
    for name in names + ["node_modules/.package-lock.json"]:
        path = root / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def is_current() -> bool:
    """Whether ``_build/html`` is a successful build of the checkout as it is now."""
    return (HTML / "index.html").is_file() and STAMP.is_file() and STAMP.read_text().strip() == inputs_digest()


def failed_before() -> bool:
    """Whether the last build of the checkout as it is now failed (another test worker ran it)."""
    return FAILED.is_file() and FAILED.read_text().strip() == inputs_digest()


def print_reports() -> None:
    """Print Jupyter Book's per-notebook error reports (the cell tracebacks)."""
    reports = sorted((HTML / "reports").rglob("*.log")) if (HTML / "reports").is_dir() else []
    for report in reports:
        print(f"\n===== {report.relative_to(ROOT)} =====", flush=True)
        print(report.read_text(encoding="utf-8", errors="replace"), flush=True)
    if not reports:
        print("(no notebook error reports were written)", flush=True)


def build(quiet: bool = False) -> int:
    """Run the build; return its exit status."""
    bindir = Path(sys.executable).parent
    jb = bindir / "jupyter-book"
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(ROOT), "--all", "-W", "--keep-going"]
    env = dict(os.environ)
    # the thread counts the test workers set for themselves (tests/conftest.py) are not the build's: it runs with
    # the machine's own settings, as make book does
    for name in filter(None, env.pop("PROBDR_TEST_THREADS", "").split(",")):
        env.pop(name, None)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    # Start from an empty _build/html: pages dropped from the toc, stale error reports
    # and old vendor files must not linger in the site (the tests check all of it).
    shutil.rmtree(HTML, ignore_errors=True)
    STAMP.unlink(missing_ok=True)
    FAILED.unlink(missing_ok=True)
    digest = inputs_digest()  # of the inputs as the build starts: an edit made during the build is not built
    start = time.perf_counter()
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE if quiet else None, stderr=subprocess.STDOUT if quiet else None)
    seconds = time.perf_counter() - start
    STAMP.parent.mkdir(parents=True, exist_ok=True)
    if proc.returncode != 0:
        FAILED.write_text(digest + "\n")
        if quiet and proc.stdout:
            print(proc.stdout[-20000:], flush=True)
        print_reports()
        print(f"\nThe book build FAILED after {seconds:.0f} s (see the reports above).", flush=True)
    else:
        STAMP.write_text(digest + "\n")
        print(f"\nThe book built in {seconds:.0f} s. Open {HTML / 'index.html'}", flush=True)
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(build())
