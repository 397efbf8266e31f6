"""Nothing computed is lost: the results file is checked before training, and a row that cannot be appended after
training is saved beside it (or elsewhere) with one line saying where.

Three ways a results file refuses a row, each tested before training (the command stops at once, status 2) and
after it (the row is saved elsewhere, status 1): a damaged JSON file, a read-only folder, and a lock that another
process holds. A read-only folder does not stop root, so the read-only cases run in a subprocess; when the tests
run as root, that subprocess first gives up the capabilities that let root ignore file permissions
(CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH).
"""

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from probdr_lite.experiments import CharLMConfig, load_results, train_charlm
from probdr_lite.experiments import __main__ as M
from probdr_lite.experiments import sweep as S
from probdr_lite.experiments.results import check_results_file, save_rows

TINY = dict(n_layer=1, n_head=2, n_embd=16, block_size=8, batch_size=4, max_iters=4, warmup_iters=1,
            eval_interval=2, eval_iters=2)
TINY_ARGS = ["--iters", "4", "--eval-interval", "2", "--eval-iters", "2", "--n-layer", "1", "--n-embd", "16",
             "--n-head", "2", "--block-size", "8", "--batch-size", "4", "--warmup-iters", "1", "--threads", "1",
             "--device", "cpu", "--quiet"]
DAMAGED = '[{"task": "charlm", "seed": 0'  # a run killed while writing by hand, say


@pytest.fixture(scope="module")
def row():
    return train_charlm(CharLMConfig(**TINY), "attention", 0, device="cpu", threads=1, quiet=True)


def _no_training(*args, **kwargs):
    raise AssertionError("training started although the results file cannot take its row")


def _unsaved(folder: Path):
    return sorted(folder.glob("*.unsaved-*.json"))


# ------------------------------------------------------------------ helpers: another process, another user

class LockHolder:
    """Another process that holds the results folder's lock until stopped."""

    def __init__(self, folder: Path):
        code = ("import fcntl, os, sys, time\n"
                f"fd = os.open({str(folder)!r}, os.O_RDONLY)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                "print('locked', flush=True)\n"
                "time.sleep(120)\n")
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "locked"

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def _drop_root_override():  # pragma: no cover - runs in the child
    """In a child of root: drop the capabilities that override file permissions (Linux prctl PR_CAPBSET_DROP)."""
    if os.geteuid() == 0:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _run_unprivileged(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run Python ``code`` in a subprocess for which a folder with mode 555 is read-only, even under root."""
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          preexec_fn=_drop_root_override, timeout=300)


def test_the_subprocess_cannot_write_into_a_read_only_folder(tmp_path):
    """The premise of the read-only tests: without it they would test nothing."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    done = _run_unprivileged(f"open({str(ro / 'x')!r}, 'w')", tmp_path)
    assert done.returncode == 1 and "PermissionError" in done.stderr and not (ro / "x").exists()


# ------------------------------------------------------------------ before training

def test_a_damaged_file_stops_the_command_before_training(tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs.json"
    out.write_text(DAMAGED)
    with pytest.raises(ValueError, match="cannot be appended to.*not valid JSON"):
        check_results_file(out)
    monkeypatch.setitem(M.TASKS, "charlm", (CharLMConfig, _no_training, "max_iters"))
    for argv in (["charlm", "--out", str(out)] + TINY_ARGS,
                 ["sweep", "--task", "charlm", "--variants", "attention", "--seeds", "0", "--out", str(out)]
                 + TINY_ARGS):
        with pytest.raises(SystemExit) as exc:
            M.main(argv)
        assert exc.value.code == 2
        assert f"results file {out} cannot be appended to" in capsys.readouterr().err
    monkeypatch.setattr(S, "train_charlm", _no_training)
    (tmp_path / "charlm_recipes.json").write_text(DAMAGED)
    with pytest.raises(SystemExit) as exc:
        M.main(["grid", "tiny", "--results-dir", str(tmp_path), "--threads", "1", "--device", "cpu", "--quiet"])
    assert exc.value.code == 2 and "cannot be appended to" in capsys.readouterr().err
    assert out.read_text() == DAMAGED  # untouched


def test_a_held_lock_stops_the_command_before_training(tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs.json"
    monkeypatch.setitem(M.TASKS, "charlm", (CharLMConfig, _no_training, "max_iters"))
    holder = LockHolder(tmp_path)
    try:
        with pytest.raises(ValueError, match="cannot be locked: another process holds the lock"):
            check_results_file(out, lock_timeout=0.3)
        with pytest.raises(SystemExit) as exc:
            M.main(["charlm", "--out", str(out), "--lock-timeout", "0.3"] + TINY_ARGS)
        assert exc.value.code == 2 and "cannot be locked" in capsys.readouterr().err
    finally:
        holder.stop()
    assert check_results_file(out, lock_timeout=0.3) == out  # free again
    assert not out.exists()


def test_a_read_only_folder_stops_the_command_before_training(tmp_path):
    folder = tmp_path
    results = folder / "results"
    results.mkdir()
    (results / "runs.json").write_text("[]\n")
    results.chmod(0o555)
    argv = ["charlm", "--out", str(results / "runs.json")] + TINY_ARGS
    done = _run_unprivileged(f"import sys; from probdr_lite.experiments.__main__ import main; "
                             f"sys.exit(main({argv!r}))", folder)
    assert done.returncode == 2, done.stderr
    assert "refuses new files" in done.stderr and "Traceback" not in done.stderr
    assert (results / "runs.json").read_text() == "[]\n"


# ------------------------------------------------------------------ after training

def test_a_file_damaged_during_training_keeps_the_row_beside_it(tmp_path, monkeypatch, capsys, row):
    out = tmp_path / "runs.json"

    def train_then_damage(config, variant, seed, **kwargs):
        out.write_text(DAMAGED)  # something else spoils the file while the run trains
        return {**copy.deepcopy(row), "variant": variant, "seed": seed}

    monkeypatch.setitem(M.TASKS, "charlm", (CharLMConfig, train_then_damage, "max_iters"))
    assert M.main(["charlm", "--out", str(out), "--seed", "3"] + TINY_ARGS) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    saved = _unsaved(tmp_path)
    assert len(saved) == 1 and saved[0].parent == tmp_path  # beside the results file
    assert lines[0].startswith(f"could not append 1 row(s) to {out} (ValueError") and str(saved[0]) in lines[0]
    assert lines[0].endswith(f"python -m probdr_lite.experiments append {saved[0]} --out {out}")
    assert load_results(saved[0])[0]["seed"] == 3 and out.read_text() == DAMAGED
    # once the file is repaired, the saved row goes in with the command the line gave
    out.write_text("[]\n")
    assert M.main(["append", str(saved[0]), "--out", str(out)]) == 0
    assert [r["seed"] for r in load_results(out)] == [3]


def test_a_sweep_goes_on_and_saves_every_row_it_cannot_append(tmp_path, monkeypatch, capsys, row):
    out = tmp_path / "runs.json"
    calls = []

    def train(config, variant, seed, **kwargs):
        calls.append(seed)
        if len(calls) == 2:
            out.write_text(DAMAGED)  # damaged after the first row was appended
        return {**copy.deepcopy(row), "variant": variant, "seed": seed}

    monkeypatch.setitem(M.TASKS, "charlm", (CharLMConfig, train, "max_iters"))
    argv = ["sweep", "--task", "charlm", "--variants", "attention", "--seeds", "0-2", "--out", str(out)]
    assert M.main(argv + TINY_ARGS) == 1
    assert calls == [0, 1, 2]  # the sweep went on
    printed = capsys.readouterr().out
    assert printed.count("could not append") == 2 and len(_unsaved(tmp_path)) == 2
    assert sorted(load_results(p)[0]["seed"] for p in _unsaved(tmp_path)) == [1, 2]


def test_a_grid_saves_a_row_whose_lock_is_held_and_goes_on(tmp_path, monkeypatch, capsys, row):
    holder = {}

    def train(config, variant, seed, **kwargs):
        if not holder:
            holder["h"] = LockHolder(tmp_path)  # another process takes the lock during the first run
        elif "h" in holder and len(holder) == 1:
            holder["h"].stop()
            holder["stopped"] = True
        r = copy.deepcopy(row)
        r.update(variant=variant, seed=seed, config=config.to_dict(), recipe={"init": config.init, "lr": config.lr,
                                                                               "max_iters": config.max_iters})
        return r

    monkeypatch.setattr(S, "train_charlm", train)
    argv = ["grid", "tiny", "--results-dir", str(tmp_path), "--threads", "1", "--device", "cpu", "--quiet",
            "--lock-timeout", "0.3"]
    try:
        assert M.main(argv) == 1
    finally:
        if "stopped" not in holder and "h" in holder:
            holder["h"].stop()
    printed = capsys.readouterr().out
    assert printed.count("could not append") == 1 and "LockTimeout" in printed
    assert len(_unsaved(tmp_path)) == 1
    assert len(load_results(tmp_path / "charlm_recipes.json")) == 7  # the other 7 runs of the grid went in


def test_a_folder_made_read_only_during_training_saves_the_row_in_the_working_directory(tmp_path, row):
    folder = tmp_path
    results, work = folder / "results", folder / "work"
    results.mkdir()
    work.mkdir()
    (results / "runs.json").write_text("[]\n")
    (folder / "row.json").write_text(json.dumps([row]))
    results.chmod(0o555)  # the folder refuses the atomic rewrite
    code = textwrap.dedent(f"""
        import json
        from probdr_lite.experiments.results import save_rows
        rows = json.load(open({str(folder / "row.json")!r}))
        n, saved = save_rows({str(results / "runs.json")!r}, rows, lock_timeout=5)
        print("RESULT", n, saved)
    """)
    done = _run_unprivileged(code, work)
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip().splitlines()
    assert len(out) == 2 and out[0].startswith(f"could not append 1 row(s) to {results / 'runs.json'}")
    saved = _unsaved(work)
    assert len(saved) == 1 and out[1] == f"RESULT None {saved[0]}"
    assert load_results(saved[0]) == [row] and (results / "runs.json").read_text() == "[]\n"


def test_save_rows_appends_when_it_can(tmp_path, row):
    out = tmp_path / "r.json"
    assert save_rows(out, [row]) == (1, None)
    assert save_rows(out, [row], say=lambda m: pytest.fail(m)) == (2, None)
    bad = copy.deepcopy(row)
    bad["final_val_loss"] = "x"
    with pytest.raises(ValueError, match="final_val_loss"):  # an invalid row is a bug, not a file problem
        save_rows(out, [bad])
