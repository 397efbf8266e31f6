"""Build the book into _build/html, executing every notebook; print the reports if it fails.

Used by ``make book`` and by the book tests. Runs ``jupyter-book build --all``
(every page is re-read, so every notebook is executed again and a change in
``probdr_lite`` can never hide behind a cached page) with ``-W --keep-going``:
any warning, including anything a notebook cell writes to stderr, fails the
build after all pages have been tried.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"


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
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    # Start from an empty _build/html: pages dropped from the toc, stale error reports
    # and old vendor files must not linger in the site (the tests check all of it).
    shutil.rmtree(HTML, ignore_errors=True)
    start = time.perf_counter()
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE if quiet else None, stderr=subprocess.STDOUT if quiet else None)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        if quiet and proc.stdout:
            print(proc.stdout[-20000:], flush=True)
        print_reports()
        print(f"\nThe book build FAILED after {seconds:.0f} s (see the reports above).", flush=True)
    else:
        print(f"\nThe book built in {seconds:.0f} s. Open {HTML / 'index.html'}", flush=True)
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(build())
