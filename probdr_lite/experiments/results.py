"""Results files of the experiments: schema, reading, appending and the paired summary.

A results file is one JSON list; each element ("row") is one training run of
one arm (attention variant) with one seed. Schema version 1:

================  ==========  =====================================================
field             type        meaning
================  ==========  =====================================================
schema_version    int         1
task              str         "charlm" or "vit"
variant           str         "attention", "diffusion", "gated" or (vit) "symmetric"
seed              int >= 0    drives initial weights, batch order, eval batches
config            dict        every field of CharLMConfig / ViTConfig
final_val_loss    float       validation loss after the last step
best_val_loss     float       smallest validation loss over the evaluation points
final_val_acc     float       (vit only) validation accuracy after the last step
best_val_acc      float       (vit only) largest validation accuracy
curve_columns     list[str]   ["iter", "train_loss", "val_loss"(, "val_acc")]
curve             list[list]  one row per evaluation point, columns as above
throughput        float       training tokens (charlm) or images (vit) per second
throughput_unit   str         "tokens/s" or "images/s"
train_seconds     float       time in training steps (evaluation excluded)
wall_seconds      float       the whole run, data loading and evaluation included
torch_version     str         ``torch.__version__``
device            str         e.g. "cpu (x86_64, 1 threads)" or "cuda (NVIDIA ...)"
git_commit        str         ``git rev-parse HEAD`` when the row was written, or "unknown"
command           str         the command line that produced the row
timestamp         str         ISO 8601, UTC, when the row was written (end of the run)
================  ==========  =====================================================

Optional: ``gates`` (gated arm: the learned g per layer and head), ``n_params``,
``threads``, ``python_version``. :func:`validate_results` checks the required
fields, their types, and that the summary numbers agree with the curve.

:func:`summarise` answers the question the paper's single runs could not
(book section 4, objection 5): per arm the mean and standard deviation over
seeds of the final and best validation metric, and, pairing runs by seed
(same initial weights and data order), the difference of every arm from
``attention`` with a paired t-test (``scipy.stats.ttest_rel``) and a sign test
(``scipy.stats.binomtest`` on the number of seeds where the arm is better).
"""

from __future__ import annotations

import json
import math
import numbers
import os
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .attention import CAUSAL_VARIANTS, VARIANTS

SCHEMA_VERSION = 1
TASKS = ("charlm", "vit")
TASK_VARIANTS = {"charlm": CAUSAL_VARIANTS, "vit": VARIANTS}
#: validation metrics per task, and whether smaller is better
TASK_METRICS = {"charlm": {"val_loss": True}, "vit": {"val_acc": False, "val_loss": True}}
CURVE_COLUMNS = {"charlm": ["iter", "train_loss", "val_loss"],
                 "vit": ["iter", "train_loss", "val_loss", "val_acc"]}

_REAL = "real"
REQUIRED = {
    "schema_version": int, "task": str, "variant": str, "seed": int, "config": dict,
    "final_val_loss": _REAL, "best_val_loss": _REAL, "curve_columns": list, "curve": list,
    "throughput": _REAL, "throughput_unit": str, "train_seconds": _REAL, "wall_seconds": _REAL,
    "torch_version": str, "device": str, "git_commit": str, "command": str, "timestamp": str,
}
TASK_REQUIRED = {"charlm": {}, "vit": {"final_val_acc": _REAL, "best_val_acc": _REAL}}
OPTIONAL = {"gates": list, "n_params": int, "threads": int, "python_version": str}


def _type_ok(value, kind) -> bool:
    if kind == _REAL:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _type_name(kind) -> str:
    return "a finite number" if kind == _REAL else kind.__name__


def validate_row(row, index: int = 0) -> dict:
    """Check one row against the schema; raise ``ValueError`` naming the row and the bad field."""
    where = f"results row {index}"
    if not isinstance(row, dict):
        raise ValueError(f"{where} must be a JSON object (dict); got {type(row).__name__}")
    task = row.get("task")
    if task not in TASKS:
        raise ValueError(f"{where}: field 'task' must be one of {TASKS}; got {task!r}")
    for name, kind in {**REQUIRED, **TASK_REQUIRED[task]}.items():
        if name not in row:
            raise ValueError(f"{where}: required field {name!r} is missing")
        if not _type_ok(row[name], kind):
            raise ValueError(f"{where}: field {name!r} must be {_type_name(kind)}; got {row[name]!r}")
    for name, kind in OPTIONAL.items():
        if name in row and not _type_ok(row[name], kind):
            raise ValueError(f"{where}: field {name!r} must be {_type_name(kind)}; got {row[name]!r}")
    if row["schema_version"] != SCHEMA_VERSION:
        raise ValueError(f"{where}: field 'schema_version' must be {SCHEMA_VERSION}; got {row['schema_version']!r}")
    if row["variant"] not in TASK_VARIANTS[task]:
        raise ValueError(f"{where}: field 'variant' must be one of {TASK_VARIANTS[task]} for task "
                         f"{task!r}; got {row['variant']!r}")
    if row["seed"] < 0:
        raise ValueError(f"{where}: field 'seed' must be >= 0; got {row['seed']}")
    if row["curve_columns"] != CURVE_COLUMNS[task]:
        raise ValueError(f"{where}: field 'curve_columns' must be {CURVE_COLUMNS[task]}; got {row['curve_columns']!r}")
    width = len(CURVE_COLUMNS[task])
    if not row["curve"]:
        raise ValueError(f"{where}: field 'curve' must hold at least one evaluation point")
    for j, point in enumerate(row["curve"]):
        if not (isinstance(point, list) and len(point) == width and all(_type_ok(v, _REAL) for v in point)):
            raise ValueError(f"{where}: field 'curve' point {j} must be a list of {width} finite numbers; got {point!r}")
    # the summary numbers must be what the curve says
    curve = np.asarray(row["curve"], dtype=float)
    checks = {"final_val_loss": curve[-1, 2], "best_val_loss": curve[:, 2].min()}
    if task == "vit":
        checks.update(final_val_acc=curve[-1, 3], best_val_acc=curve[:, 3].max())
    for name, expected in checks.items():
        if not math.isclose(row[name], expected, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"{where}: field {name!r} is {row[name]!r} but its curve gives {expected!r}")
    return row


def validate_results(rows) -> list:
    """Check a list of rows against the schema (module docstring); return it unchanged.

    Raises ``ValueError`` naming the first bad row and field.
    """
    if not isinstance(rows, list):
        raise ValueError(f"results must be a JSON list of rows; got {type(rows).__name__}")
    for i, row in enumerate(rows):
        validate_row(row, i)
    return rows


def load_results(path) -> list:
    """Read and validate a results file (a JSON list of rows)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path must name an existing results file; {path} does not exist")
    try:
        rows = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"results file {path} is not valid JSON ({exc})") from exc
    return validate_results(rows)


@contextmanager
def _directory_lock(directory: Path):
    """Hold an exclusive ``flock`` on ``directory`` so parallel sweeps can append to one file."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no locking, run sweeps one at a time
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def append_results(path, rows) -> int:
    """Validate ``rows`` and append them to the results file at ``path`` (created if missing).

    The file is rewritten atomically (temporary file, then rename) under a
    lock, so two sweeps appending to the same file do not lose rows. Returns
    the number of rows in the file afterwards.
    """
    rows = validate_results(list(rows))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _directory_lock(path.parent):
        existing = load_results(path) if path.exists() else []
        existing.extend(rows)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(existing, f, indent=1)
                f.write("\n")
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    return len(existing)


def _mean_sd(values):
    v = np.asarray(values, dtype=float)
    sd = float(v.std(ddof=1)) if len(v) > 1 else float("nan")
    return float(v.mean()), sd


def summarise(rows, baseline: str = "attention") -> dict:
    """Per-arm statistics and paired comparisons against ``baseline``.

    Parameters
    ----------
    rows : list of dict
        Rows of one or more tasks (validated here). Within a task every row
        must share one configuration, and each (variant, seed) may appear once.
    baseline : str
        The arm every other arm is compared with.

    Returns
    -------
    dict with two lists of flat dicts (ready for a table):

    ``"arms"``: one entry per (task, variant): ``n``, ``seeds``, and for each
    quantity ``q`` (``final_val_loss``, ``best_val_loss``, and for vit
    ``final_val_acc``, ``best_val_acc``) ``q_mean`` and ``q_sd`` (sample sd,
    ddof=1), plus the mean ``throughput``.

    ``"paired"``: one entry per (task, variant other than baseline, quantity):
    ``n`` paired seeds, ``mean_diff`` and ``sd_diff`` of arm minus baseline,
    ``n_better``/``n_worse`` (better = lower loss, higher accuracy),
    ``t_pvalue`` (two-sided paired t-test; NaN with fewer than 2 pairs or
    identical differences) and ``sign_pvalue`` (two-sided exact binomial test
    of n_better among the untied pairs, p = 1/2).
    """
    from scipy import stats

    rows = validate_results(list(rows))
    arms, paired = [], []
    for task in TASKS:
        task_rows = [r for r in rows if r["task"] == task]
        if not task_rows:
            continue
        configs = {json.dumps(r["config"], sort_keys=True) for r in task_rows}
        if len(configs) > 1:
            raise ValueError(f"rows of task {task!r} mix {len(configs)} configurations; "
                             "summarise one configuration at a time")
        by_arm = {}
        for r in task_rows:
            key = (r["variant"], r["seed"])
            if key in by_arm:
                raise ValueError(f"rows of task {task!r} hold variant {key[0]!r} seed {key[1]} twice")
            by_arm[key] = r
        quantities = [f"{kind}_{m}" for m in TASK_METRICS[task] for kind in ("final", "best")]
        variants = [v for v in TASK_VARIANTS[task] if any(k[0] == v for k in by_arm)]
        for v in variants:
            seeds = sorted(s for (vv, s) in by_arm if vv == v)
            entry = {"task": task, "variant": v, "n": len(seeds), "seeds": seeds}
            for q in quantities:
                entry[f"{q}_mean"], entry[f"{q}_sd"] = _mean_sd([by_arm[(v, s)][q] for s in seeds])
            entry["throughput"] = float(np.mean([by_arm[(v, s)]["throughput"] for s in seeds]))
            entry["throughput_unit"] = by_arm[(v, seeds[0])]["throughput_unit"]
            arms.append(entry)
        if baseline not in variants:
            continue
        for v in variants:
            if v == baseline:
                continue
            seeds = sorted(s for (vv, s) in by_arm if vv == v and (baseline, s) in by_arm)
            for q in quantities:
                lower_better = TASK_METRICS[task][q.split("_", 1)[1]]
                a = np.array([by_arm[(v, s)][q] for s in seeds], dtype=float)
                b = np.array([by_arm[(baseline, s)][q] for s in seeds], dtype=float)
                d = a - b
                n_better = int(np.sum(d < 0) if lower_better else np.sum(d > 0))
                n_worse = int(np.sum(d > 0) if lower_better else np.sum(d < 0))
                t_p = float("nan")
                if len(d) >= 2 and np.ptp(d) > 0:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t_p = float(stats.ttest_rel(a, b).pvalue)
                untied = n_better + n_worse
                sign_p = float(stats.binomtest(n_better, untied, 0.5).pvalue) if untied else float("nan")
                mean_d, sd_d = _mean_sd(d) if len(d) else (float("nan"), float("nan"))
                paired.append({"task": task, "variant": v, "baseline": baseline, "quantity": q,
                               "lower_is_better": lower_better, "n": len(seeds), "seeds": seeds,
                               "mean_diff": mean_d, "sd_diff": sd_d, "n_better": n_better,
                               "n_worse": n_worse, "t_pvalue": t_p, "sign_pvalue": sign_p})
    return {"arms": arms, "paired": paired}


def format_summary(summary: dict, digits: int = 4) -> str:
    """The output of :func:`summarise` as two plain-text (Markdown) tables."""
    f = f"{{:.{digits}f}}"
    lines = ["| task | arm | n | quantity | mean +- sd |", "| --- | --- | --- | --- | --- |"]
    for a in summary["arms"]:
        for key in a:
            if key.endswith("_mean"):
                q = key[:-5]
                lines.append(f"| {a['task']} | {a['variant']} | {a['n']} | {q} | "
                             f"{f.format(a[key])} +- {f.format(a[q + '_sd'])} |")
    lines += ["", "| task | arm - baseline | quantity | n | mean diff +- sd | better/worse | paired t p | sign p |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in summary["paired"]:
        lines.append(f"| {p['task']} | {p['variant']} - {p['baseline']} | {p['quantity']} | {p['n']} | "
                     f"{f.format(p['mean_diff'])} +- {f.format(p['sd_diff'])} | {p['n_better']}/{p['n_worse']} | "
                     f"{p['t_pvalue']:.3g} | {p['sign_pvalue']:.3g} |")
    return "\n".join(lines)
