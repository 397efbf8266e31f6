"""The committed results files: where they are, reading them, and what they say about how they were made.

Each task has two files under ``probdr_lite/results/``: the first sweep (one
recipe, :data:`RESULTS_FILES`) and the recipe grid (:data:`RECIPE_FILES`,
appended to by ``python -m probdr_lite.experiments grid``). :func:`task_rows`
reads both; :func:`load_task_results` reads the first only (the trained-transformers chapter quotes it);
:func:`mechanism_rows` adds the measured reruns of :data:`MECHANISM_FILES`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .._validation import check_choice
from .results import RECIPE_FACTORS, TASKS, load_results, validate_results

#: Where the committed results live (``probdr_lite/results/``).
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"
#: The first sweep of each task (one recipe) inside :data:`RESULTS_DIR`.
RESULTS_FILES = {"charlm": "charlm_cpu.json", "vit": "vit_mnist.json"}
#: The recipe grid of each task inside :data:`RESULTS_DIR`.
RECIPE_FILES = {"charlm": "charlm_recipes.json", "vit": "vit_recipes.json"}
#: The intervention on the scale of W_V and W_O and its base cells, five seeds, run together on one machine with one
#: commit (grids ``*-vo-power`` and ``*-vo-rerun``; see the results README): kept apart from the recipe tables, which
#: they would otherwise join. The first three seeds, run earlier on another machine, are in ``*_vo_scale_xeon.json``.
INTERVENTION_FILES = {"charlm": "charlm_vo_scale_epyc.json", "vit": "vit_vo_scale_epyc.json"}
#: Measured reruns of committed cells, for the mechanism record of recipes whose rows predate it (not part of
#: the recipe tables: they repeat runs that are already there).
MECHANISM_FILES = {"charlm": "charlm_mechanism.json"}
#: Environment variable that points the chapter at another results folder (a scratch sweep while developing).
RESULTS_ENV = "PROBDR_RESULTS_DIR"


def results_dir(directory=None) -> Path:
    """The folder to read results from: ``directory``, else ``$PROBDR_RESULTS_DIR``, else :data:`RESULTS_DIR`."""
    if directory is None:
        directory = os.environ.get(RESULTS_ENV) or RESULTS_DIR
    return Path(directory)


def load_task_results(task: str, directory=None):
    """The validated rows of ``task`` from its first-sweep file, or ``None`` if the file is not there.

    A file that exists but breaks the schema raises ``ValueError`` (from
    :func:`.results.load_results`): a damaged file is never read as "no results".
    """
    task = check_choice(task, "task", tuple(RESULTS_FILES))
    path = results_dir(directory) / RESULTS_FILES[task]
    if not path.is_file():
        return None
    rows = [r for r in load_results(path) if r["task"] == task]
    return rows or None


def task_rows(task: str, directory=None) -> list:
    """Every committed row of ``task``: the first sweep and the recipe grid (an empty list if neither exists)."""
    task = check_choice(task, "task", TASKS)
    rows = []
    for name in (RESULTS_FILES[task], RECIPE_FILES[task]):
        path = results_dir(directory) / name
        if path.is_file():
            rows += [r for r in load_results(path) if r["task"] == task]
    return rows


def mechanism_rows(task: str, directory=None) -> list:
    """Every row of ``task`` that records its mechanism: the recipe grid's and the measured reruns of
    :data:`MECHANISM_FILES` (an empty list if there are none)."""
    task = check_choice(task, "task", TASKS)
    rows = [r for r in task_rows(task, directory) if "mechanism" in r]
    name = MECHANISM_FILES.get(task)
    if name is not None and (results_dir(directory) / name).is_file():
        rows += [r for r in load_results(results_dir(directory) / name) if r["task"] == task and "mechanism" in r]
    return rows


def intervention_rows(task: str, directory=None) -> list:
    """The rows of the W_V W_O intervention of ``task`` (:data:`INTERVENTION_FILES`; an empty list if none)."""
    task = check_choice(task, "task", TASKS)
    path = results_dir(directory) / INTERVENTION_FILES[task]
    return [r for r in load_results(path) if r["task"] == task] if path.is_file() else []


def check_task_rows(rows, name: str = "rows") -> tuple[list, str]:
    """Validate ``rows`` and check they are non-empty and of one task; return (rows, task)."""
    if not isinstance(rows, list):
        raise ValueError(f"{name} must be a list of results rows; got {type(rows).__name__}")
    if not rows:
        raise ValueError(f"{name} must hold at least one results row; got an empty list")
    validate_results(rows)
    tasks = sorted({r["task"] for r in rows})
    if len(tasks) != 1:
        raise ValueError(f"{name} must all belong to one task; got tasks {tasks}")
    return rows, tasks[0]


def run_commands(rows) -> list:
    """The distinct command lines recorded in ``rows``, in the order they first appear."""
    rows, _ = check_task_rows(rows)
    return list(dict.fromkeys(r["command"] for r in rows))


def readme_commands(directory=None) -> list:
    """The ``probdr_lite.experiments`` command lines written in the results folder's ``README.md``.

    Lines ending in a backslash are joined with the next one; leading ``VAR=value``
    assignments are kept. Returns an empty list when there is no README or it names no command.
    """
    path = results_dir(directory) / "README.md"
    if not path.is_file():
        return []
    text = re.sub(r"[ \t]*\\[ \t]*\n\s*", " ", path.read_text(encoding="utf-8"))
    env = r"(?:[A-Z_][A-Z0-9_]*=[^\s`]+\s+)*"  # leading VAR=value assignments belong to the command
    start = re.compile(env + r"(?:[^\s`$=]*python\S*\s+-m\s+probdr_lite\.experiments\b|\bprobdr-experiments\b)")
    out = []
    for line in text.splitlines():
        m = start.search(line)
        if m:
            out.append(line[m.start():].split("`", 1)[0].strip())  # an inline `code` span ends at its backtick
    return list(dict.fromkeys(out))


def rows_provenance(rows) -> dict:
    """What the rows say about how they were made.

    Returns a dict with ``task``, ``n_rows``, ``seeds`` (per variant, over all recipes), the sets of
    ``torch_versions``, ``devices`` and ``git_commits``, the first and last
    ``timestamp``, the total ``train_hours`` and ``wall_hours``, ``config`` (the
    configuration of the first row) and ``recipes`` (the distinct recipes, as
    dicts of the recipe factors, in the order they first appear).
    """
    from .results import TASK_VARIANTS

    rows, task = check_task_rows(rows)
    stamps = sorted(r["timestamp"] for r in rows)
    present = {r["variant"] for r in rows}
    recipes = list(dict.fromkeys(json.dumps(r["recipe"], sort_keys=True) for r in rows))
    return {
        "task": task,
        "n_rows": len(rows),
        "seeds": {v: sorted({r["seed"] for r in rows if r["variant"] == v})
                  for v in TASK_VARIANTS[task] if v in present},
        "torch_versions": sorted({r["torch_version"] for r in rows}),
        "devices": sorted({r["device"] for r in rows}),
        "git_commits": sorted({r["git_commit"] for r in rows}),
        "first_timestamp": stamps[0],
        "last_timestamp": stamps[-1],
        "train_hours": sum(r["train_seconds"] for r in rows) / 3600,
        "wall_hours": sum(r["wall_seconds"] for r in rows) / 3600,
        "config": dict(rows[0]["config"]),
        "recipes": [json.loads(r) for r in recipes],
        "factors": RECIPE_FACTORS[task],
    }


#: The measured spread of single validation batches of the character model (``eval-spread`` command).
EVAL_SPREAD_FILE = "charlm_eval_spread.json"


def load_eval_spread(directory=None):
    """The committed output of ``python -m probdr_lite.experiments eval-spread``, or ``None`` if not committed."""
    path = results_dir(directory) / EVAL_SPREAD_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"eval-spread file {path} is not valid JSON ({exc})") from exc
    for key in ("batch_sd", "n_batches", "batch_losses"):
        if key not in data:
            raise ValueError(f"eval-spread file {path} lacks the field {key!r}")
    return data
