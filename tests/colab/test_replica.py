"""Every reader notebook runs as Colab runs it, and its install cell changes none of Colab's packages.

The replica (``tools/colab_replica.py``; ``make test`` builds it once per machine) is Python 3.13 with the part
of Colab's published package list that the notebooks and Colab's kernel reach, at Colab's versions (PyPI's torch
2.11.0 standing in for Colab's 2.11.0+cpu). For each Colab reader notebook (``notebooks/colab/``), on a
hard-linked copy of the replica, so the replica itself never changes:

1. the freeze is the one recorded when the replica was built;
2. the notebook runs to the end in a kernel of the replica's IPython 7.34 / ipykernel 6.17.1, from a scratch
   folder, with a stand-in ``google.colab`` module imported at start-up (as Colab's kernel has it), pip without
   this machine's configuration (Colab has none), and its first cell, unchanged but for the URL, installing the
   package through ``%pip`` from a ``git+file`` clone of this working tree; no cell may raise or write to stderr;
   the URL names the clone's commit, so pip builds the package's wheel once, for the first notebook, and the others
   install that wheel from the run's own pip cache (an empty one at the start, as on a new Colab machine; the
   build from git is the same for every notebook, and it took each notebook a clone, a build environment and a
   build);
3. the freeze afterwards is the one before plus ``probdr-lite`` and nothing else; then the package is removed
   again, so the next notebook's install cell runs too (on Colab each notebook gets a new machine).

Run times and the freeze difference go to ``_build/colab-replica/report.json`` (and are printed with ``-s``).
Without the replica: skipped on a developer's machine (``make colab`` builds it and runs this), a failure in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
notebooks = tool("notebooks")  # tools/notebooks.py: the repository's notebook tooling
colab_replica = tool("colab_replica")

REPORT = ROOT / "_build" / "colab-replica" / "report.json"
NOTEBOOKS = [name for name, _ in notebooks.reader_chapters()]
#: What the CUDA build of PyPI's torch brings that Colab's CPU build does not (the stand-in's own libraries).
CUDA_STAND_IN = ("nvidia-", "cuda-", "triton")
#: The stand-in for the module Colab's kernel imports at start-up; the notebooks only test for its presence.
STAND_IN = '"""Stand-in for Colab\'s google.colab module (tests/colab): the notebooks only check that it is imported."""\n'


def _pip(python: Path, *args: str, cache: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args], capture_output=True,
                          text=True, env=_pip_env(cache), **kw)


def _pip_env(cache: Path) -> dict:
    """Colab's pip: no configuration file, no constraint, PyPI; the machine's certificate bundle kept; its cache in
    ``cache`` (this run's, empty at the start, as on a new Colab machine)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k == "PIP_CERT"}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore",
               PIP_NO_INPUT="1", PIP_CACHE_DIR=str(cache))
    return env


@pytest.fixture(scope="module")
def replica(tmp_path_factory):
    """(python of a hard-linked copy of the replica, its recorded freeze, a git+file URL of this working tree at
    its commit, a pip cache for the run, a scratch folder)."""
    folder = colab_replica.replica_dir()
    try:
        python = colab_replica.find_python()
        current = colab_replica.is_current(folder, python)
    except SystemExit as exc:
        current, why = False, str(exc)
    else:
        why = f"the Colab replica at {folder} is missing or out of date (make colab builds it)"
    if not current:
        if colab_replica.required():
            pytest.fail(f"required in CI: {why}", pytrace=False)
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("colab")
    copy = tmp / "replica"
    linked = subprocess.run(["cp", "-al", str(folder), str(copy)], capture_output=True, text=True)
    if linked.returncode != 0:  # another file system: a real copy
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(folder, copy, symlinks=True)
    recorded = (folder / colab_replica.FREEZE).read_text().split()
    # this working tree as a git repository on the branch the Colab cell names (uncommitted edits included)
    repo = tmp / "repo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (repo / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, repo / f)
    _, branch = notebooks.repository()
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", branch, str(repo)], check=True)
    subprocess.run(git + ["add", "-A"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "working tree"], cwd=repo, check=True)
    # the commit, not the branch: pip caches a wheel built from git only for a URL that names a commit
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    cache = tmp / "pip-cache"
    standin = tmp / "standin" / "google" / "colab"
    standin.mkdir(parents=True)
    (standin / "__init__.py").write_text(STAND_IN)
    startup = tmp / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-colab.py").write_text("import google.colab  # Colab's kernel has it imported\n")
    kernels = tmp / "kernels" / "colab-replica"
    kernels.mkdir(parents=True)
    env = {"PYTHONPATH": str(tmp / "standin"), "IPYTHONDIR": str(tmp / "ipython"), "MPLCONFIGDIR": str(tmp / "mpl"),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYDEVD_DISABLE_FILE_VALIDATION": "1", **{k: v for k, v in _pip_env(cache).items()
                                                                       if k.startswith("PIP_")}}
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(copy / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab replica", "language": "python", "env": env}))
    return {"python": copy / "bin" / "python", "recorded": recorded, "url": f"git+file://{repo}@{commit}",
            "cache": cache, "kernels": tmp / "kernels", "tmp": tmp}


def _report(**entries):
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(REPORT.read_text()) if REPORT.exists() else {}
    data.update(entries)
    REPORT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def test_the_replica_has_colabs_versions(replica):
    """Every package of the replica that Colab has is at Colab's version; the rest is the CUDA stand-in."""
    compared = colab_replica.compare_with_colab(replica["recorded"])
    assert all(d.startswith(CUDA_STAND_IN) for d in compared["differ"]), compared["differ"]
    assert all(e.startswith(CUDA_STAND_IN) for e in compared["extra"]), compared["extra"]
    pins = colab_replica.colab_pins()
    for name in ("ipython", "ipykernel", "ipywidgets", "traitlets", "numpy", "matplotlib", "pip"):
        assert f"{name}=={pins[name]}" in [l.lower() for l in replica["recorded"]], name
    assert "jedi" not in {l.split("==")[0].lower() for l in replica["recorded"]}, "Colab has no jedi"
    assert colab_replica.freeze(replica["python"]) == replica["recorded"], "the copy differs"
    _report(replica={"packages": len(replica["recorded"]), "at_colabs_version": len(compared["same"]),
                     "cuda_stand_in": compared["differ"] + compared["extra"]})


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_reader_notebook_runs_as_colab_runs_it(replica, name):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    python = replica["python"]
    before = colab_replica.freeze(python)
    assert before == replica["recorded"], "the replica changed before this notebook ran"
    nb = nbformat.read(notebooks.reader_path(name, "colab"), as_version=4)
    url, branch = notebooks.repository()
    cell = nb.cells[0]
    assert cell.source == notebooks.colab_cell_source(), "the first cell is the Colab cell"
    cell.source = cell.source.replace(f"git+{url}@{branch}", replica["url"])
    assert replica["url"] in cell.source
    # one more cell: where the kernel imported the package from (the install, not this checkout)
    nb.cells.append(nbformat.v4.new_code_cell("import probdr_lite; print(probdr_lite.__file__)"))
    work = replica["tmp"] / "content" / name  # Colab's notebooks run in /content
    work.mkdir(parents=True)
    km = KernelManager(kernel_name="colab-replica",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(replica["kernels"])]))
    client = NotebookClient(nb, km=km, timeout=600, resources={"metadata": {"path": str(work)}})
    start = time.perf_counter()
    try:
        client.execute()
        seconds = time.perf_counter() - start
        after = colab_replica.freeze(python)
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)
        _pip(python, "uninstall", "--yes", "probdr-lite", cache=replica["cache"])  # the next notebook installs it again
    errors = [(i, o.get("ename"), o.get("evalue")) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    stderr = [(i, o.text[:500]) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not errors and not stderr, (errors, stderr)
    _paragraphs_show_their_numbers(nb, name)
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    assert removed == [] and len(added) == 1 and added[0].startswith("probdr-lite @ git+file://"), (added, removed)
    where = Path("".join(o.text for o in nb.cells[-1].outputs if o.output_type == "stream").strip())
    assert where.is_relative_to(python.parent.parent / "lib"), f"probdr_lite came from {where}, not the install"
    nb.cells.pop()
    probe = [o.text for o in nb.cells[0].outputs if o.output_type == "stream"]
    print(f"\n{name}: ran in {seconds:.0f} s on the Colab replica; freeze: +{added[0].split(' @')[0]} only")
    data = json.loads(REPORT.read_text()) if REPORT.exists() else {}
    data.setdefault("notebooks", {})[name] = {"seconds": round(seconds, 1), "freeze_added": ["probdr-lite"],
                                              "freeze_removed": removed, "install_cell_output": probe}
    _report(notebooks=data["notebooks"])


def _paragraphs_show_their_numbers(nb, name: str) -> None:
    """Each paragraph that pastes glued numbers shows, in the executed notebook, the author's words in order with a
    number where each role stood: no raw role, no empty slot."""
    from probdr_lite.presentation.prose import GLUE_ROLE

    pasted = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(notebooks.PASTE_TITLE)]
    for cell in pasted:
        markdown = cell.source.split('paste(r"""', 1)[1].rsplit('""")', 1)[0]
        shown = "".join(o.get("data", {}).get("text/markdown", "") for o in cell.outputs
                        if o.output_type == "display_data")
        assert shown and "{glue" not in shown, f"{name}: a pasted paragraph shows {shown[:200]!r}"
        words = GLUE_ROLE.split(markdown)[::3]  # the author's text between the roles
        at = 0
        for piece, after in zip(words, words[1:] + [None]):
            found = shown.find(piece, at)
            assert found >= 0, f"{name}: the paragraph lost its words {piece[:80]!r}"
            at = found + len(piece)
            if after is not None:
                gap = shown.find(after, at) if after else at + 1
                assert gap > at, f"{name}: no number pasted after {piece[-60:]!r}"
    if GLUE_ROLE.search("".join(c.source for c in nb.cells if c.cell_type == "markdown")):
        pytest.fail(f"{name}: a Markdown cell of the reader notebook still holds a glue role")


def test_a_plain_install_would_add_jedi(replica):
    """Why the Colab cell passes --no-deps: without it pip would add jedi (IPython 7.34 declares it, Colab omits
    it). A dry run, so nothing changes; after the notebooks, so that it reads the package's metadata from the wheel
    they built instead of building it again."""
    run = _pip(replica["python"], "install", "--dry-run", "--quiet", "--report", "-",
               f"probdr-lite @ {replica['url']}", cache=replica["cache"], timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    names = sorted(i["metadata"]["name"].lower() for i in json.loads(run.stdout)["install"])
    assert names == ["jedi", "probdr-lite"], names
    _report(plain_install_would_add=names)
