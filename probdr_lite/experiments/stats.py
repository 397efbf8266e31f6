"""Statistics of the sweeps: seed bands, paired differences, power, Holm's adjustment and the recipe table.

Everything here is numbers in, numbers (or a structured outcome) out; the
words and the plots are in :mod:`probdr_lite.presentation.figures.training` and
:mod:`probdr_lite.presentation.figures.recipes`. :mod:`probdr_lite.chapters.objections` (a layer above) reads
``HEADLINE`` and :func:`lower_is_better` for the objections' single-run verdict.

- :func:`seed_band`, :func:`paired_differences`, :func:`gate_values`  read the rows;
- :func:`seeds_needed`  the normal-approximation power calculation;
- :func:`holm`  Holm's step-down adjustment of a family of p-values;
- :func:`recipe_table`  one row per (recipe, arm): the paired difference from
  attention with its unadjusted 95 % t interval and the paired t-test (a description; the chapter's verdicts are
  read from the declared families of :mod:`.families`, one rule for every verdict word);
- :func:`nanogpt_gap`  our baseline against nanoGPT's published loss, with the
  spread of a 20-batch estimate.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_choice, check_scalar
from .attention import GATE_START
from .files import check_task_rows
from .results import INTERVAL_SERIES, LAYER_SERIES, RECIPE_FACTORS, TASK_METRICS, TASK_VARIANTS

BANDS = ("sd", "minmax")
#: The number each task is judged on.
HEADLINE = {"charlm": "final_val_loss", "vit": "final_val_acc"}


def _variants(rows, task):
    present = {r["variant"] for r in rows}
    return [v for v in TASK_VARIANTS[task] if v in present]


def quantities(task: str) -> list:
    """The summary quantities of ``task``: final and best of each validation metric."""
    return [f"{kind}_{m}" for m in TASK_METRICS[task] for kind in ("final", "best")]


#: Where a run is read: at its end (``final``, the verdict's reading), at its best checkpoint (lowest validation
#: loss), or where the plateau rule fired (``stop``: where a run without the decay stops; the end for a run whose
#: rule never fired or that has no rule).
READINGS = ("final", "checkpoint", "stop")


def reading_quantities(task: str) -> list:
    """Every quantity :func:`row_quantity` reads: each of :data:`READINGS` of each validation metric, and best."""
    return [f"{kind}_{m}" for m in TASK_METRICS[task] for kind in (*READINGS, "best")]


def row_quantity(row: dict, quantity: str) -> float:
    """The value of ``quantity`` (:func:`reading_quantities`) in a validated results row."""
    kind, metric = quantity.split("_", 1)
    if kind == "stop":
        at_plateau = row.get(f"plateau_{metric}")
        return row[f"final_{metric}"] if at_plateau is None else at_plateau
    return row[quantity]


def lower_is_better(quantity: str) -> bool:
    return not quantity.endswith("acc")


# ------------------------------------------------------------------------------------------------ curves, pairs

def seed_band(rows, variant: str, metric: str = "val_loss", band: str = "sd"):
    """One arm's curves over seeds, their mean and a band around it.

    ``band="sd"``: mean -+ sample sd over seeds (ddof = 1; zero width with one
    seed); ``"minmax"``: the lowest and highest seed at each evaluation point.
    Returns iters (m,), mean, lower, upper (m,), curves (n_seeds, m), rows in seed order.
    """
    rows, task = check_task_rows(rows)
    variant = check_choice(variant, "variant", _variants(rows, task))
    columns = rows[0]["curve_columns"]
    metric = check_choice(metric, "metric", [c for c in columns if c != "iter"])
    band = check_choice(band, "band", BANDS)
    arm = sorted((r for r in rows if r["variant"] == variant), key=lambda r: r["seed"])
    curves = [np.asarray(r["curve"], dtype=float) for r in arm]
    iters = curves[0][:, 0]
    for r, c in zip(arm, curves):
        if c.shape[0] != iters.shape[0] or not np.array_equal(c[:, 0], iters):
            raise ValueError(f"rows of variant {variant!r} must share their evaluation iterations; "
                             f"seed {r['seed']} differs from seed {arm[0]['seed']}")
    values = np.stack([c[:, columns.index(metric)] for c in curves])
    mean = values.mean(axis=0)
    if band == "sd":
        sd = values.std(axis=0, ddof=1) if len(values) > 1 else np.zeros_like(mean)
        lower, upper = mean - sd, mean + sd
    else:
        lower, upper = values.min(axis=0), values.max(axis=0)
    return iters, mean, lower, upper, values


def paired_differences(rows, quantity: str = "final_val_loss", baseline: str = "attention") -> dict:
    """Per arm, the seeds shared with ``baseline`` and the differences ``arm - baseline`` of ``quantity``.

    Returns ``{variant: (seeds, differences)}`` (1-D arrays, seeds ascending)
    for every arm other than the baseline; the rows must be of one recipe.
    """
    rows, task = check_task_rows(rows)
    quantity = check_choice(quantity, "quantity", reading_quantities(task))
    present = _variants(rows, task)
    baseline = check_choice(baseline, "baseline", present)
    by = {(r["variant"], r["seed"]): row_quantity(r, quantity) for r in rows}
    out = {}
    for v in present:
        if v == baseline:
            continue
        seeds = sorted(s for (vv, s) in by if vv == v and (baseline, s) in by)
        out[v] = (np.array(seeds, dtype=int), np.array([by[(v, s)] - by[(baseline, s)] for s in seeds]))
    return out


def gate_values(rows, arm: str = "gated"):
    """The learned gates g of a gated arm at the end of training: (seeds, array (n_seeds, n_layer, n_head)), or
    ``None`` when no row of ``arm`` records them. The rows must be of one recipe (a seed appears once)."""
    rows, _ = check_task_rows(rows)
    arm = check_choice(arm, "arm", tuple(GATE_START))
    gated = sorted((r for r in rows if r["variant"] == arm and r.get("gates")), key=lambda r: r["seed"])
    if len({r["seed"] for r in gated}) != len(gated):
        raise ValueError(f"rows must be of one recipe: arm {arm!r} has a seed twice")
    if not gated:
        return None
    shapes = {np.shape(r["gates"]) for r in gated}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"rows' 'gates' must all be lists of n_layer lists of n_head numbers; got shapes {shapes}")
    return np.array([r["seed"] for r in gated]), np.array([r["gates"] for r in gated], dtype=float)


def check_summary(summary, task: str) -> str:
    """Check that ``summary`` is :func:`.results.summarise`'s output and holds arms of ``task``; return the task."""
    if not (isinstance(summary, dict) and "arms" in summary and "paired" in summary):
        raise ValueError("summary must be the dict returned by probdr_lite.experiments.summarise "
                         "(keys 'arms' and 'paired')")
    task = check_choice(task, "task", tuple(TASK_METRICS))
    if not any(a["task"] == task for a in summary["arms"]):
        raise ValueError(f"summary holds no arms of task {task!r}")
    return task


def seeds_needed(mean_diff: float, sd_diff: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Paired seeds a two-sided test at level ``alpha`` needs to detect ``mean_diff`` with probability ``power``.

    Normal approximation, n = ((z_{1 - alpha/2} + z_power) sd_diff / |mean_diff|)^2 rounded up.
    """
    from scipy import stats

    mean_diff = check_scalar(mean_diff, "mean_diff")
    sd_diff = check_scalar(sd_diff, "sd_diff", low=0, low_inclusive=False)
    alpha = check_scalar(alpha, "alpha", low=0, high=1, low_inclusive=False, high_inclusive=False)
    power = check_scalar(power, "power", low=0, high=1, low_inclusive=False, high_inclusive=False)
    if mean_diff == 0:
        raise ValueError("mean_diff must be non-zero: no number of seeds detects a difference of 0")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return max(2, math.ceil((z * sd_diff / abs(mean_diff)) ** 2))


# -------------------------------------------------------------------------------------------- across recipes

def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN entries stay NaN and do not count as tests).

    Sort the m finite p-values, multiply the k-th smallest by (m - k + 1), take
    the running maximum and cap at 1. Rejecting where the adjusted p < alpha
    controls the family-wise error rate at alpha.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be a 1-D sequence; got shape {p.shape}")
    finite = np.flatnonzero(~np.isnan(p))
    if np.any((p[finite] < 0) | (p[finite] > 1)):
        raise ValueError("pvalues must lie in [0, 1] (or be NaN)")
    out = np.full_like(p, np.nan)
    m = len(finite)
    order = finite[np.argsort(p[finite], kind="stable")]
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, (m - k) * p[i])
        out[i] = min(1.0, running)
    return out


def recipe_key(row) -> str:
    """The recipe cell of a row: its full configuration as sorted JSON."""
    return json.dumps(row["config"], sort_keys=True)


@dataclass
class RecipeTable:
    """The output of :func:`recipe_table`: one entry per (recipe, arm) and the family they were tested in."""

    task: str
    quantity: str
    baseline: str
    factors: tuple
    recipes: list  # recipe factor dicts, in order
    baselines: list  # per recipe: n seeds, mean and sd of the baseline's quantity
    entries: list  # dicts, see recipe_table
    n_tests: int
    alpha: float
    extra: dict = field(default_factory=dict)


def recipe_table(rows, quantity: str | None = None, *, baseline: str = "attention", alpha: float = 0.05,
                 min_pairs: int = 2) -> RecipeTable:
    """Per recipe and arm, the paired difference from ``baseline`` with its unadjusted 95 % interval and t-test.

    Parameters
    ----------
    rows : results rows of one task, any number of recipes
    quantity : str, optional
        Default: :data:`HEADLINE` of the task (final validation loss / accuracy);
        any of :func:`reading_quantities` (e.g. ``"checkpoint_val_acc"``, the
        best checkpoint, or ``"stop_val_acc"``, where the plateau rule fired).
    baseline : str
    alpha : float in (0, 1)
        Level of the (1 - alpha) t interval.
    min_pairs : int >= 2
        A (recipe, arm) with fewer paired seeds gets no interval and no test.

    Each entry: ``recipe`` (factor dict), ``arm``, ``n`` pairs, ``seeds``,
    ``mean_diff`` (arm - baseline), ``sd_diff``, ``ci_low``/``ci_high``
    (unadjusted t interval), ``t_pvalue`` (unadjusted), ``n_better``/``n_worse``,
    ``baseline_mean``. No verdict is read here: the chapter's verdicts come from the declared families
    (:func:`.families.family_table`).
    """
    from scipy import stats

    rows, task = check_task_rows(rows)
    quantity = HEADLINE[task] if quantity is None else check_choice(quantity, "quantity", reading_quantities(task))
    alpha = check_scalar(alpha, "alpha", low=0, high=1, low_inclusive=False, high_inclusive=False)
    min_pairs = check_scalar(min_pairs, "min_pairs", low=2, integer=True)
    lower = lower_is_better(quantity)
    cells = {}
    for r in rows:
        cell = cells.setdefault(recipe_key(r), {"recipe": r["recipe"], "runs": {}})
        key = (r["variant"], r["seed"])
        if key in cell["runs"]:
            raise ValueError(f"rows hold recipe {r['recipe']} variant {key[0]!r} seed {key[1]} twice")
        cell["runs"][key] = row_quantity(r, quantity)
    recipes, baselines, entries = [], [], []
    for cell in cells.values():
        runs = cell["runs"]
        recipes.append(cell["recipe"])
        base_vals = [v for (a, _), v in runs.items() if a == baseline]
        baselines.append({"recipe": cell["recipe"], "n": len(base_vals),
                          "mean": float(np.mean(base_vals)) if base_vals else float("nan"),
                          "sd": float(np.std(base_vals, ddof=1)) if len(base_vals) > 1 else float("nan")})
        for arm in TASK_VARIANTS[task]:
            if arm == baseline or not any(a == arm for a, _ in runs):
                continue
            seeds = sorted(s for (a, s) in runs if a == arm and (baseline, s) in runs)
            d = np.array([runs[(arm, s)] - runs[(baseline, s)] for s in seeds], dtype=float)
            e = {"recipe": cell["recipe"], "arm": arm, "n": len(seeds), "seeds": seeds,
                 "mean_diff": float(d.mean()) if len(d) else float("nan"),
                 "sd_diff": float(d.std(ddof=1)) if len(d) > 1 else float("nan"),
                 "ci_low": float("nan"), "ci_high": float("nan"), "t_pvalue": float("nan"),
                 "n_better": int(np.sum(d < 0) if lower else np.sum(d > 0)),
                 "n_worse": int(np.sum(d > 0) if lower else np.sum(d < 0)),
                 "baseline_mean": baselines[-1]["mean"]}
            if len(d) >= min_pairs:
                half = stats.t.ppf(1 - alpha / 2, len(d) - 1) * e["sd_diff"] / math.sqrt(len(d))
                e["ci_low"], e["ci_high"] = e["mean_diff"] - half, e["mean_diff"] + half
                if e["sd_diff"] > 0:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        e["t_pvalue"] = float(stats.ttest_1samp(d, 0.0).pvalue)
                else:  # identical non-zero differences: the sign is certain; zero differences: no effect
                    e["t_pvalue"] = 0.0 if e["mean_diff"] != 0 else 1.0
            entries.append(e)
    n_tests = int(sum(not math.isnan(e["t_pvalue"]) for e in entries))
    return RecipeTable(task=task, quantity=quantity, baseline=baseline, factors=RECIPE_FACTORS[task],
                       recipes=recipes, baselines=baselines, entries=entries, n_tests=n_tests, alpha=alpha)


# -------------------------------------------------------------------------------------------------- nanoGPT

#: nanoGPT's ``shakespeare_char`` recipe run on a CPU (README of karpathy/nanoGPT), field names of CharLMConfig.
NANOGPT_CPU = {
    "n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": 64, "batch_size": 12, "max_iters": 2000,
    "lr": 1e-3, "min_lr": 1e-4, "warmup_iters": 100, "beta2": 0.99, "dropout": 0.0, "weight_decay": 0.1,
    "grad_clip": 1.0, "train_fraction": 0.9,
}
#: The validation loss nanoGPT's README reports for that recipe (about 1.88), and its number of evaluation batches.
NANOGPT_CPU_VAL_LOSS = 1.88
NANOGPT_EVAL_ITERS = 20


def config_differences(config: dict, reference: dict = NANOGPT_CPU) -> dict:
    """Fields where ``config`` differs from ``reference``: ``{field: (config value, reference value)}``."""
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict of configuration fields; got {type(config).__name__}")
    out = {}
    for name, ref in reference.items():
        value = config.get(name)
        same = value is not None and (value == ref or (isinstance(value, float) and isinstance(ref, float)
                                                       and math.isclose(value, ref, rel_tol=1e-12)))
        if not same:
            out[name] = (value, ref)
    return out


def nanogpt_gap(seed_mean: float, seed_sd: float, n_seeds: int, batch_sd: float, *, our_eval_iters: int = 200,
                their_eval_iters: int = NANOGPT_EVAL_ITERS, published: float = NANOGPT_CPU_VAL_LOSS,
                rounding: float = 0.005) -> dict:
    """How far nanoGPT's published loss is from our baseline, against the spread of one nanoGPT-style number.

    nanoGPT's figure is one seed, estimated from ``their_eval_iters`` random
    batches and rounded to two decimals. Its spread around the true mean loss of
    the recipe is sd_one = sqrt(seed_var + batch_sd^2 / their_eval_iters), where
    seed_var is our seed-to-seed variance with our own estimation noise
    (batch_sd^2 / our_eval_iters) taken out (floored at 0). The gap is measured
    against our mean over ``n_seeds`` seeds, whose own sd is seed_sd / sqrt(n):

    ``z`` = gap / sqrt(sd_one^2 + seed_sd^2 / n_seeds); ``within`` is |z| <= 2
    after allowing ``rounding`` (half the last published digit).
    """
    seed_sd = check_scalar(seed_sd, "seed_sd", low=0)
    batch_sd = check_scalar(batch_sd, "batch_sd", low=0)
    n_seeds = check_scalar(n_seeds, "n_seeds", low=1, integer=True)
    our_eval_iters = check_scalar(our_eval_iters, "our_eval_iters", low=1, integer=True)
    their_eval_iters = check_scalar(their_eval_iters, "their_eval_iters", low=1, integer=True)
    seed_mean = check_scalar(seed_mean, "seed_mean")
    seed_var = max(0.0, seed_sd ** 2 - batch_sd ** 2 / our_eval_iters)
    their_batch_sd = batch_sd / math.sqrt(their_eval_iters)
    sd_one = math.sqrt(seed_var + their_batch_sd ** 2)
    sd_gap = math.sqrt(sd_one ** 2 + seed_sd ** 2 / n_seeds)
    gap = seed_mean - published
    slack = max(0.0, abs(gap) - rounding)
    z = slack / sd_gap if sd_gap > 0 else math.inf
    return {"gap": gap, "seed_sd": seed_sd, "gap_in_seed_sd": gap / seed_sd if seed_sd > 0 else math.inf,
            "batch_sd": batch_sd, "their_batch_sd": their_batch_sd, "our_batch_sd": batch_sd / math.sqrt(our_eval_iters),
            "seed_sd_without_batches": math.sqrt(seed_var), "sd_one_run": sd_one, "sd_gap": sd_gap,
            "z": z, "within": z <= 2.0, "their_eval_iters": their_eval_iters, "our_eval_iters": our_eval_iters}


def last_epoch_change(rows, metric: str = "val_acc") -> dict:
    """Per arm, the mean over seeds of the change of ``metric`` between the last two evaluation points.

    A curve still rising at the end (accuracy) or falling (loss) was stopped before its plateau.
    """
    rows, task = check_task_rows(rows)
    columns = rows[0]["curve_columns"]
    metric = check_choice(metric, "metric", [c for c in columns if c != "iter"])
    j = columns.index(metric)
    out = {}
    for v in _variants(rows, task):
        changes = [r["curve"][-1][j] - r["curve"][-2][j] for r in rows if r["variant"] == v and len(r["curve"]) > 1]
        if changes:
            out[v] = float(np.mean(changes))
    return out


# ------------------------------------------------------------------------------------------------ mechanism

#: the series of a row's ``mechanism`` record (:mod:`.mechanism`) these functions read; the per-layer ones are
#: averaged over layers
MECHANISM_SERIES = LAYER_SERIES + tuple(s for s in INTERVAL_SERIES if s != "lr")


def _mechanism_cells(rows) -> dict:
    """{(init, arm): rows by seed} of the rows with a mechanism record; one recipe per initialisation."""
    rows, task = check_task_rows(rows)
    rows = [r for r in rows if "mechanism" in r]
    if not rows:
        raise ValueError("rows must hold at least one row with a 'mechanism' record")
    recipes = {}
    for r in rows:
        recipes.setdefault(r["config"]["init"], set()).add(recipe_key(r))
    mixed = [init for init, keys in recipes.items() if len(keys) > 1]
    if mixed:
        raise ValueError(f"rows must hold one recipe per initialisation; {mixed} have several")
    cells = {}
    for r in sorted(rows, key=lambda r: r["seed"]):
        cells.setdefault((r["config"]["init"], r["variant"]), []).append(r)
    return cells


def _layer_mean(values) -> float:
    return float(np.mean(values))


def mechanism_points(rows, series: str, at: str = "start") -> dict:
    """A mechanism series per (initialisation, arm), read at the start or the end of each run.

    ``at="start"`` is the first evaluation point (before any training step; every arm of a seed has the same
    weights there) or, for the gradient series, the first interval of training steps; ``"end"`` the last. Per
    layer series are averaged over the layers. Returns ``{(init, arm): {"seeds": [...], "values": array
    (n_seeds,), "mean": float, "per_layer": list (mean over seeds, per layer; None for whole-model series)}}``.
    """
    series = check_choice(series, "series", MECHANISM_SERIES)
    at = check_choice(at, "at", ("start", "end"))
    out = {}
    for key, cell in _mechanism_cells(rows).items():
        picked = [r["mechanism"][series][0 if at == "start" else -1] for r in cell]
        per_layer = None
        if isinstance(picked[0], list):
            per_layer = np.mean(np.array(picked, dtype=float), axis=0).tolist()
            values = np.array([_layer_mean(p) for p in picked])
        else:
            values = np.array(picked, dtype=float)
        out[key] = {"seeds": [r["seed"] for r in cell], "values": values, "mean": float(values.mean()),
                    "per_layer": per_layer}
    return out


def mechanism_path(rows, series: str) -> dict:
    """A mechanism series along training per (initialisation, arm): the layer mean, seed by seed and averaged.

    Returns ``{(init, arm): {"iters": array (m,), "mean": array (m,), "runs": [(seed, iters, values)]}}``;
    the mean runs over the evaluation points (for the gradient series: the ends of the intervals) that every
    seed of the cell reached (plateau runs stop at different epochs).
    """
    series = check_choice(series, "series", MECHANISM_SERIES)
    out = {}
    for key, cell in _mechanism_cells(rows).items():
        runs = []
        for r in cell:
            m = r["mechanism"]
            x = np.array(m["iters"][1:] if series in INTERVAL_SERIES else m["iters"], dtype=float)
            y = np.array([_layer_mean(v) if isinstance(v, list) else float(v) for v in m[series]])
            runs.append((r["seed"], x, y))
        n = min(len(x) for _, x, _ in runs)
        out[key] = {"iters": runs[0][1][:n], "mean": np.mean([y[:n] for _, _, y in runs], axis=0), "runs": runs}
    return out


def mechanism_ratio(rows, series: str, arm: str = "diffusion", baseline: str = "attention",
                    at: str = "start") -> dict:
    """Per initialisation: the paired ratio arm / baseline of :func:`mechanism_points`, seed by seed.

    Returns ``{init: {"seeds": [...], "ratios": array, "mean": float, "min": float, "max": float}}`` for the
    initialisations where both arms have shared seeds.
    """
    points = mechanism_points(rows, series, at)
    out = {}
    for init in dict.fromkeys(k[0] for k in points):
        a, b = points.get((init, arm)), points.get((init, baseline))
        if a is None or b is None:
            continue
        shared = sorted(set(a["seeds"]) & set(b["seeds"]))
        if not shared:
            continue
        ra = np.array([a["values"][a["seeds"].index(s)] / b["values"][b["seeds"].index(s)] for s in shared])
        out[init] = {"seeds": shared, "ratios": ra, "mean": float(ra.mean()), "min": float(ra.min()),
                     "max": float(ra.max())}
    return out


#: series read in the first layer at initialisation, where every arm of a seed sees the same input (deeper
#: layers see inputs the arms have already changed); every other (series, point) is read as the layers' mean
FIRST_LAYER_AT_START = ("update_ratio", "v_over_av")


def mechanism_reading(entry: dict, series: str, at: str) -> float:
    """The one number of a :func:`mechanism_points` entry that the chapter reads: the first layer's value for a
    series of :data:`FIRST_LAYER_AT_START` at ``"start"``, else the mean over layers."""
    return entry["per_layer"][0] if at == "start" and series in FIRST_LAYER_AT_START else entry["mean"]


#: the (series, point) pairs :func:`mechanism_agreement` compares between the initialisations
AGREEMENT_SERIES = (("wvwo_top_sv", "start"), ("update_ratio", "start"), ("v_over_av", "start"),
                    ("update_ratio", "end"), ("v_over_av", "end"), ("shrink", "end"), ("wvwo_top_sv", "end"),
                    ("wvwo_mean_eig", "end"), ("clipped", "end"))


def mechanism_agreement(rows_by_task: dict, arm: str = "diffusion", first: str = "gpt2",
                        second: str = "default") -> list:
    """Which measurements of ``arm`` differ between two initialisations in the same direction in every model.

    For each (series, point) of :data:`AGREEMENT_SERIES` and each task of ``rows_by_task`` (rows with
    mechanism records of both initialisations), the difference ``first - second`` of the mean over seeds
    (:func:`mechanism_points`; the stream-dependent series at the start are read in the first layer, where every
    arm sees the same input),
    and the paired gradient-norm ratio ``arm / attention`` in the first interval. Returns a list of dicts
    ``{"series", "at", "values": {task: (first value, second value)}, "same_sign": bool}``.
    """
    if not isinstance(rows_by_task, dict) or not rows_by_task:
        raise ValueError("rows_by_task must map tasks to rows with mechanism records")
    out = []
    for series, at in AGREEMENT_SERIES + (("grad_ratio", "start"),):
        values = {}
        for task, rows in rows_by_task.items():
            if series == "grad_ratio":
                r = mechanism_ratio(rows, "grad_norm", arm, "attention", "start")
                if first in r and second in r:
                    values[task] = (r[first]["mean"], r[second]["mean"])
                continue
            p = mechanism_points(rows, series, at)
            if (first, arm) in p and (second, arm) in p:
                values[task] = (mechanism_reading(p[(first, arm)], series, at),
                                mechanism_reading(p[(second, arm)], series, at))
        if len(values) == len(rows_by_task):
            signs = {np.sign(a - b) for a, b in values.values()}
            out.append({"series": series, "at": at, "values": values, "same_sign": len(signs) == 1 and 0 not in signs})
    return out
