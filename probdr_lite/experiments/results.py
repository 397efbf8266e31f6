"""Results files of the experiments: schema, reading, appending and the paired summary.

A results file is one JSON list; each element ("row") is one training run of
one arm (attention variant) with one seed under one recipe. Schema version 3
(:data:`ROW_SCHEMA`, a JSON Schema checked with ``jsonschema``):

===================  ==========  =====================================================
field                type        meaning
===================  ==========  =====================================================
schema_version       int         3
task                 str         "charlm" or "vit"
variant              str         an arm of :data:`TASK_VARIANTS` for the task
seed                 int >= 0    drives initial weights, batch order, eval batches
config               dict        every field of CharLMConfig / ViTConfig
recipe               dict        the recipe factors (:data:`RECIPE_FACTORS`), as in config
final_val_loss       float       validation loss after the last step
best_val_loss        float       smallest validation loss over the evaluation points
final_val_acc        float       (vit only) validation accuracy after the last step
best_val_acc         float       (vit only) largest validation accuracy
checkpoint_index     int         the evaluation point with the smallest validation loss
                                 (the first of ties): the *best checkpoint*
checkpoint_val_loss  float       validation loss there (= best_val_loss)
checkpoint_val_acc   float       (vit only) validation accuracy there
plateau_index        int | null  (vit only) the evaluation point where the plateau rule
                                 fired; null without a rule or when it never fired
plateau_val_loss     float|null  (vit only) validation loss there ("at the stop": a
plateau_val_acc      float|null  run without a decay stops there)
epochs_run           int         (vit only) epochs trained
curve_columns        list[str]   ["iter", "train_loss", "val_loss"(, "val_acc")]
curve                list[list]  one row per evaluation point, columns as above
throughput           float       training tokens (charlm) or images (vit) per second
throughput_unit      str         "tokens/s" or "images/s"
train_seconds        float       time in training steps (evaluation excluded)
wall_seconds         float       the whole run, data loading and evaluation included
torch_version        str         ``torch.__version__``
device               str         e.g. "cpu (x86_64, 1 threads)" or "cuda (NVIDIA ...)"
git_commit           str         ``git rev-parse HEAD`` when the row was written, or "unknown"
command              str         the command line that produced the row
timestamp            str         ISO 8601, UTC, when the row was written (end of the run)
===================  ==========  =====================================================

Optional: ``study`` ("exploratory" or "confirmatory": the confirmatory round's rows say so; rows without it are
exploratory), ``test_loss``, ``test_acc`` and ``test_predictions`` (vit, exactly when ``config.n_test`` > 0: the
final model on the held-out test split, and each test image's predicted class as a string of digits),
``gates`` (gated arms: the learned g per layer and head at the end),
``mechanism`` (what the attention blocks did along training,
:mod:`.mechanism`), ``n_params``, ``threads``, ``python_version``.
:func:`validate_results` checks the schema and that the summary numbers, the
checkpoint, the plateau and the recipe agree with the curve and the config.

Older rows are upgraded on reading by :func:`upgrade_row`, which changes
nothing measured. Version 1 rows (written before the recipe factors existed)
get the factors they were run with (``init="gpt2"``; for the ViT
``schedule="cosine"`` and ``patience=0``), and the ViT arm then called
``symmetric`` (D^{-1/2} E D^{-1/2} v, with no "- v") is renamed
``sym-normalised``; ``symmetric`` now names the (A_sym - I) arm. Version 2 rows
get ``decay_epochs=0`` (the plateau rule then stopped at once) and the
checkpoint and plateau fields, computed from their curves.

Writing (:func:`append_results`) is atomic and locked (an ``flock`` on the
file's folder), so parallel sweeps can append to one file.
:func:`check_results_file` is what a command runs *before* training: the file
must be readable and valid, its folder writable and the lock obtainable; and
:func:`save_row` never loses a finished run: if the append fails anyway, the
row is written beside the file (or, if that folder refuses it, into the
working directory or the temporary folder) and the caller is told where.

:func:`summarise` answers the question the paper's single runs could not
(book section 4, objection 5): per arm the mean and standard deviation over
seeds of the final and best validation metric, and, pairing runs by seed
(same initial weights and data order), the difference of every arm from
``attention`` with a paired t-test (``scipy.stats.ttest_rel``) and a sign test
(``scipy.stats.binomtest`` on the number of seeds where the arm is better).
It reads one recipe at a time; :mod:`.stats` compares recipes.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
import time
import warnings
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .attention import CAUSAL_VARIANTS, VARIANTS
from .plateau import plateau_index

SCHEMA_VERSION = 3
TASKS = ("charlm", "vit")
TASK_VARIANTS = {"charlm": CAUSAL_VARIANTS, "vit": VARIANTS}
#: validation metrics per task, and whether smaller is better
TASK_METRICS = {"charlm": {"val_loss": True}, "vit": {"val_acc": False, "val_loss": True}}
CURVE_COLUMNS = {"charlm": ["iter", "train_loss", "val_loss"],
                 "vit": ["iter", "train_loss", "val_loss", "val_acc"]}
#: the recipe factors of each task (config fields): what the recipe grid varies
RECIPE_FACTORS = {"charlm": ("init", "lr", "max_iters"),
                  "vit": ("init", "lr", "schedule", "epochs", "patience", "decay_epochs")}
#: what version 1 rows were run with, for the factors they did not record
V1_DEFAULTS = {"charlm": {"init": "gpt2"}, "vit": {"init": "gpt2", "schedule": "cosine", "patience": 0}}
#: version 1 arm names that changed meaning
V1_RENAMES = {"vit": {"symmetric": "sym-normalised"}}


#: mechanism series (:mod:`.mechanism`) measured per layer at every evaluation point
LAYER_SERIES = ("update_ratio", "v_over_av", "shrink", "wvwo_top_sv", "wvwo_mean_eig")
#: mechanism series recorded once per interval between evaluation points (the others: once per evaluation point)
INTERVAL_SERIES = ("lr", "grad_norm", "clipped", "attn_grad_norm")
#: what a row's ``study`` field may say: a run of the exploratory study, or of the confirmatory round declared in
#: :mod:`.confirmatory` before its first run (rows without the field are exploratory)
STUDIES = ("exploratory", "confirmatory")
#: what version 2 rows were run with, for the factors they did not record
V2_DEFAULTS = {"charlm": {}, "vit": {"decay_epochs": 0}}


def recipe_of(task: str, config: dict) -> dict:
    """The recipe factors of a run: ``{factor: config[factor]}`` for the factors of ``task``."""
    return {f: config.get(f) for f in RECIPE_FACTORS[task]}


def derived_fields(task: str, curve, config: dict) -> dict:
    """The fields of a row that follow from its curve and config: the best checkpoint and (vit) the plateau.

    The best checkpoint is the evaluation point with the smallest validation
    loss (the first of ties), where a run that keeps its best checkpoint would
    be read; the plateau is the first evaluation point at which the plateau rule
    (:func:`.plateau.plateau_index`, with the config's ``patience``) fires on the
    curve's validation losses, or ``None``.
    """
    c = np.asarray(curve, dtype=float)
    i = int(np.argmin(c[:, 2]))
    out = {"checkpoint_index": i, "checkpoint_val_loss": float(c[i, 2])}
    if task == "vit":
        out["checkpoint_val_acc"] = float(c[i, 3])
        stop, _ = plateau_index(c[:, 2], int(config.get("patience") or 0))
        out["plateau_index"] = stop
        out["plateau_val_loss"] = None if stop is None else float(c[stop, 2])
        out["plateau_val_acc"] = None if stop is None else float(c[stop, 3])
    return out


def _number(kind="number", **extra):
    return {"type": kind, **extra}


_COMMON_PROPERTIES = {
    "schema_version": {"const": SCHEMA_VERSION},
    "seed": _number("integer", minimum=0),
    "config": {"type": "object"},
    "recipe": {"type": "object"},
    "final_val_loss": _number(), "best_val_loss": _number(),
    "curve": {"type": "array", "minItems": 1},
    "throughput": _number(), "throughput_unit": {"type": "string"},
    "train_seconds": _number(), "wall_seconds": _number(),
    "torch_version": {"type": "string"}, "device": {"type": "string"}, "git_commit": {"type": "string"},
    "command": {"type": "string"}, "timestamp": {"type": "string"},
    "gates": {"type": "array", "items": {"type": "array", "items": _number()}},
    "checkpoint_index": _number("integer", minimum=0), "checkpoint_val_loss": _number(),
    "mechanism": {"type": "object", "required": ["iters"]},
    "n_params": _number("integer", minimum=0), "threads": _number("integer", minimum=1),
    "python_version": {"type": "string"},
    "study": {"enum": list(STUDIES)},
}


def _task_schema(task: str) -> dict:
    width = len(CURVE_COLUMNS[task])
    props = dict(_COMMON_PROPERTIES)
    props["task"] = {"const": task}
    props["variant"] = {"enum": list(TASK_VARIANTS[task])}
    props["curve_columns"] = {"const": CURVE_COLUMNS[task]}
    props["curve"] = {"type": "array", "minItems": 1,
                      "items": {"type": "array", "minItems": width, "maxItems": width, "items": _number()}}
    props["config"] = {"type": "object", "required": list(RECIPE_FACTORS[task])}
    props["recipe"] = {"type": "object", "required": list(RECIPE_FACTORS[task]),
                       "additionalProperties": False,
                       "properties": {f: {} for f in RECIPE_FACTORS[task]}}
    required = ["schema_version", "task", "variant", "seed", "config", "recipe", "final_val_loss",
                "best_val_loss", "checkpoint_index", "checkpoint_val_loss", "curve_columns", "curve", "throughput",
                "throughput_unit", "train_seconds", "wall_seconds", "torch_version", "device", "git_commit",
                "command", "timestamp"]
    if task == "vit":
        props.update(final_val_acc=_number(), best_val_acc=_number(), epochs_run=_number("integer", minimum=1),
                     checkpoint_val_acc=_number(),
                     plateau_index={"anyOf": [_number("integer", minimum=0), {"type": "null"}]},
                     plateau_val_loss={"anyOf": [_number(), {"type": "null"}]},
                     plateau_val_acc={"anyOf": [_number(), {"type": "null"}]},
                     test_loss=_number(minimum=0), test_acc=_number(minimum=0, maximum=1),
                     test_predictions={"type": "string", "pattern": "^[0-9]+$"})
        required += ["final_val_acc", "best_val_acc", "epochs_run", "checkpoint_val_acc", "plateau_index",
                     "plateau_val_loss", "plateau_val_acc"]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "required": required, "properties": props}


#: The JSON Schema of a row, per task (the task field selects which applies).
ROW_SCHEMA = {task: _task_schema(task) for task in TASKS}


def _validator(task: str):
    """A Draft 2020-12 validator whose "number" is a finite real (no NaN, no infinity, no bool)."""
    from jsonschema import Draft202012Validator, validators

    def finite_number(checker, instance):
        return (Draft202012Validator.TYPE_CHECKER.is_type(instance, "number")
                and math.isfinite(instance))

    checker = Draft202012Validator.TYPE_CHECKER.redefine("number", finite_number)
    cls = validators.extend(Draft202012Validator, type_checker=checker)
    return cls(ROW_SCHEMA[task])


_VALIDATORS = {}


def _config_defaults(task: str) -> dict:
    from .configs import CharLMConfig, ViTConfig

    return (CharLMConfig if task == "charlm" else ViTConfig)().to_dict()


def _next_version(row, version: int, run_with: dict):
    """A copy of ``row`` stamped ``version``, its config given ``run_with[task]`` (what rows of the version before
    were run with, for the factors they did not record) where it lacks a field. Returns (the copy, its config, or
    None when the row has no config)."""
    new = copy.deepcopy(row)
    new["schema_version"] = version
    config = new.get("config")
    if not isinstance(config, dict):
        return new, None
    for name, value in run_with[row["task"]].items():
        config.setdefault(name, value)
    return new, config


def _upgrade_v1(row) -> dict:
    task = row["task"]
    new, config = _next_version(row, 2, V1_DEFAULTS)
    if config is not None:
        # version 1 code wrote every config field; a hand-made row that lacks a recipe factor gets the value
        # a run would have used, the config class's default
        defaults = _config_defaults(task)
        for name in RECIPE_FACTORS[task]:
            if name not in V2_DEFAULTS[task]:
                config.setdefault(name, defaults[name])
        if task == "vit":
            new["epochs_run"] = config.get("epochs")
    new["variant"] = V1_RENAMES.get(task, {}).get(new.get("variant"), new.get("variant"))
    return new


def _upgrade_v2(row) -> dict:
    task = row["task"]
    new, config = _next_version(row, 3, V2_DEFAULTS)
    if config is not None:
        new["recipe"] = recipe_of(task, config)
        curve = new.get("curve")
        if isinstance(curve, list) and curve and all(isinstance(p, list) and len(p) == len(CURVE_COLUMNS[task])
                                                     for p in curve):
            new.update(derived_fields(task, curve, new["config"]))
    return new


def upgrade_row(row) -> dict:
    """An older row as a version 3 row (module docstring); other rows are returned unchanged."""
    if not (isinstance(row, dict) and row.get("task") in TASKS):
        return row
    if row.get("schema_version") == 1:
        row = _upgrade_v1(row)
    if row.get("schema_version") == 2:
        row = _upgrade_v2(row)
    return row


def validate_row(row, index: int = 0) -> dict:
    """Check one row against the schema; raise ``ValueError`` naming the row and the bad field."""
    where = f"results row {index}"
    if not isinstance(row, dict):
        raise ValueError(f"{where} must be a JSON object (dict); got {type(row).__name__}")
    task = row.get("task")
    if task not in TASKS:
        raise ValueError(f"{where}: field 'task' must be one of {TASKS}; got {task!r}")
    if task not in _VALIDATORS:
        _VALIDATORS[task] = _validator(task)
    errors = sorted(_VALIDATORS[task].iter_errors(row), key=lambda e: list(e.path))
    if errors:
        err = errors[0]
        if err.path:
            field = err.path[0]
        elif err.validator == "required":
            field = err.message.split("'")[1]
        else:
            field = "?"
        raise ValueError(f"{where}: field {field!r} is invalid: {err.message}")
    # what JSON Schema cannot say: the summary numbers are what the curve says, the recipe what the config says
    if row["recipe"] != recipe_of(task, row["config"]):
        raise ValueError(f"{where}: field 'recipe' is {row['recipe']!r} but its config gives "
                         f"{recipe_of(task, row['config'])!r}")
    curve = np.asarray(row["curve"], dtype=float)
    checks = {"final_val_loss": curve[-1, 2], "best_val_loss": curve[:, 2].min()}
    if task == "vit":
        checks.update(final_val_acc=curve[-1, 3], best_val_acc=curve[:, 3].max())
    checks.update(derived_fields(task, row["curve"], row["config"]))
    for name, expected in checks.items():
        got = row[name]
        same = (got is None and expected is None) or (
            got is not None and expected is not None and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12))
        if not same:
            raise ValueError(f"{where}: field {name!r} is {got!r} but its curve gives {expected!r}")
    if "mechanism" in row:
        _check_mechanism(row["mechanism"], row["curve"], where)
    n_test = row["config"].get("n_test") or 0 if task == "vit" else 0
    for name in ("test_loss", "test_acc", "test_predictions"):
        if (name in row) != bool(n_test):
            raise ValueError(f"{where}: field {name!r} must be present exactly when config.n_test > 0 "
                             f"(a held-out test split); config.n_test is {n_test}")
    if n_test and len(row["test_predictions"]) != n_test:
        raise ValueError(f"{where}: field 'test_predictions' must hold one class per test image "
                         f"({n_test}); got {len(row['test_predictions'])}")
    return row


def _check_mechanism(mech: dict, curve, where: str) -> None:
    """The mechanism record's evaluation points must be the curve's, and every series as long as they are."""
    iters = [p[0] for p in curve]
    if mech["iters"] != iters:
        raise ValueError(f"{where}: field 'mechanism' has evaluation points {mech['iters']!r} but the curve has "
                         f"{iters!r}")
    for name, series in mech.items():
        if name in ("iters", "probe") or name.startswith("wvwo_sv_"):
            continue
        n = len(iters) - (1 if name in INTERVAL_SERIES else 0)
        if not isinstance(series, list) or len(series) != n:
            raise ValueError(f"{where}: field 'mechanism' series {name!r} must have {n} entries "
                             f"(one per {'interval between evaluation points' if name in INTERVAL_SERIES else 'evaluation point'})")



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
    """Read, upgrade (version 1 rows, see :func:`upgrade_row`) and validate a results file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path must name an existing results file; {path} does not exist")
    try:
        rows = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"results file {path} is not valid JSON ({exc})") from exc
    if isinstance(rows, list):
        rows = [upgrade_row(r) for r in rows]
    return validate_results(rows)


#: seconds a command waits for the lock of a results file before it gives up (``--lock-timeout``)
LOCK_TIMEOUT = 60.0


class LockTimeout(OSError):
    """The lock of a results file's folder was not obtained in time: another process holds it."""


@contextmanager
def _directory_lock(directory: Path, timeout: float | None = None):
    """Hold an exclusive ``flock`` on ``directory`` so parallel sweeps can append to one file.

    With ``timeout`` (seconds), raise :class:`LockTimeout` when the lock is still
    held by another process after that long; ``None`` waits for ever.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no locking, run sweeps one at a time
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(f"another process holds the lock on its folder {directory} "
                                          f"(waited {timeout:g} s)") from None
                    time.sleep(min(0.1, timeout / 10 + 1e-3))
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _write_json_atomically(path: Path, data) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path`` (keeping its mode)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if path.exists():
            mode = path.stat().st_mode & 0o777
        else:  # what open() would have created: 0o666 less the umask
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def append_results(path, rows, *, lock_timeout: float | None = LOCK_TIMEOUT) -> int:
    """Validate ``rows`` and append them to the results file at ``path`` (created if missing).

    The file is rewritten atomically (temporary file, then rename) under a
    lock, so two sweeps appending to the same file do not lose rows. Returns
    the number of rows in the file afterwards. Raises ``ValueError`` when the
    file is damaged, :class:`LockTimeout` when the lock is not obtained within
    ``lock_timeout`` seconds, ``OSError`` when the folder refuses the write.
    """
    rows = validate_results(list(rows))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _directory_lock(path.parent, lock_timeout):
        existing = load_results(path) if path.exists() else []
        existing.extend(rows)
        _write_json_atomically(path, existing)
    return len(existing)


def check_results_file(path, *, lock_timeout: float | None = LOCK_TIMEOUT) -> Path:
    """Check, before any training, that rows can be appended to the results file ``path``; return it as a Path.

    The file, if it exists, must be a readable, valid results file; its folder
    must exist (it is created if missing) and accept a new file; its lock must be
    obtainable within ``lock_timeout`` seconds (it is released at once). Raises
    ``ValueError`` naming the file and what is wrong, so that a run is never
    trained only to find it cannot be saved.
    """
    path = Path(path)
    folder = path.parent
    if path.exists() and not path.is_file():
        raise ValueError(f"results file {path} is not a regular file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"results file {path}: its folder {folder} cannot be created ({exc.strerror})") from exc
    if path.exists():
        try:
            load_results(path)
        except OSError as exc:
            raise ValueError(f"results file {path} cannot be read ({exc.strerror})") from exc
        except ValueError as exc:
            raise ValueError(f"results file {path} cannot be appended to: {exc}. Repair it or choose another "
                             f"--out before training") from exc
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"results file {path} cannot be written: its folder {folder} refuses new files "
                         f"({exc.strerror})") from exc
    try:
        with _directory_lock(folder, lock_timeout):
            pass
    except LockTimeout as exc:
        raise ValueError(f"results file {path} cannot be locked: {exc}") from exc
    return path


def _unsaved_name(path: Path, rows: list) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    first = rows[0]
    return f"{path.name}.unsaved-{stamp}-{first['task']}-{first['variant']}-seed{first['seed']}.json"


def save_rows(path, rows, *, lock_timeout: float | None = LOCK_TIMEOUT, say=print):
    """Append ``rows`` to ``path``; if that fails, save them in a file of their own and say where, in one line.

    Returns ``(n_rows, None)`` after a successful append (rows now in the file)
    or ``(None, saved_path)``. The rows are validated first (invalid rows are a
    bug and raise). The fallback file, a valid results file holding only these
    rows, goes beside ``path``, else into the working directory, else into the
    temporary folder; if none accepts it the rows are printed as JSON. The line
    names the reason and the command that appends the saved file later.
    """
    rows = validate_results(list(rows))
    path = Path(path)
    try:
        return append_results(path, rows, lock_timeout=lock_timeout), None
    except (OSError, ValueError) as exc:
        reason = f"{type(exc).__name__}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
    name = _unsaved_name(path, rows)
    for folder in (path.parent, Path.cwd(), Path(tempfile.gettempdir())):
        target = folder / name
        try:
            with open(target, "x") as f:
                json.dump(rows, f, indent=1)
                f.write("\n")
        except OSError:
            continue
        say(f"could not append {len(rows)} row(s) to {path} ({reason}); saved them in {target} instead: "
            f"python -m probdr_lite.experiments append {target} --out {path}")
        return None, target
    say(f"could not append {len(rows)} row(s) to {path} ({reason}) nor save them in any folder; "
        f"the rows follow as JSON: {json.dumps(rows)}")
    return None, None


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
