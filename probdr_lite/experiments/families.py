"""The exploratory study's families of tests and their statistics.

A verdict is a claim about the sign of a paired difference (arm - attention, seed by seed). Which claims are read
together, and so corrected together, is fixed here as data (:data:`FAMILIES`), not by the rows that happen to be
committed, so that adding an arm or a recipe to a secondary family can never move a primary verdict. The families
were written down after most of the rows they read had been run and looked at (:data:`DECLARED`,
:func:`exploratory_history`), so what they find is exploratory; the confirmatory round, declared before any of its
runs, is :mod:`.confirmatory`. The families:

- ``primary``: A - I ("diffusion") against plain attention in the cells of :data:`PRIMARY_RECIPES`, per model
  (charlm, vit), initialisation (:data:`INITS`) and budget (:data:`BUDGETS`): 8 tests, the chapter's question;
- ``recipes``: A - I against attention in every other recipe of the grids (secondary);
- ``arms``: the gated and symmetric arms (:data:`SECONDARY_ARMS`) against attention in every recipe (secondary);
- ``intervention``: the shifts of the W_V W_O intervention (:data:`.attention.VO_SCALE`; secondary).

Each family is corrected by Holm within the family: a family is one question, asked before the runs, whose claims
are read together (the primary family is the chapter's question, A - I against attention where the book states a
verdict; a secondary family is an exploration that may grow), so its error rate is controlled over its own claims,
and the primary family's m = 8 stays what it was declared whatever is run beside it. Holm, because it needs nothing
but valid marginal tests, holds under any dependence between the cells (they share seeds and data) and rejects
whatever Bonferroni rejects, and more (see :func:`simultaneous_intervals` for the form it takes). Each test is
printed with two labelled intervals: the unadjusted 95 % t interval and the simultaneous
interval of the family, from which alone :func:`verdict_category` reads the verdict word.

Also here: :func:`tost_paired` (equivalence of a paired difference against a margin), :func:`initialisation_effect`
(does A - I's effect depend on the initialisation? OLS on the seed-paired differences with the recipe factors),
:func:`fieller_ratio` (Fieller's interval for a ratio of means of paired quantities, unbounded cases included) and
:func:`intervention_table` (the intervention's shifts and shares). Numbers in, numbers out; scipy and numpy only
(the tests check them against statsmodels).
"""

from __future__ import annotations

import json
import math

import numpy as np

from .._validation import check_choice, check_scalar
from .attention import VO_SCALE
from .files import check_task_rows
from .stats import HEADLINE, holm, lower_is_better, paired_differences, row_quantity

#: The initialisations of the primary family (GPT-2's and PyTorch's default).
INITS = ("gpt2", "default")
#: The budgets of the primary family: early (the first recipe's budget) and at the plateau.
BUDGETS = ("early", "plateau")
#: The recipe of each primary cell, less its initialisation: ``{task: {budget: recipe factors}}``. Early: the
#: character model at nanoGPT's 2,000 iterations at lr 1e-3, the ViT at 10 epochs of the first recipe; plateau: the
#: character model at 5,000 iterations, the ViT under the plateau rule with its decay (``sweep.PLATEAU_DECAY``).
PRIMARY_RECIPES = {
    "charlm": {"early": {"lr": 1e-3, "max_iters": 2000},
               "plateau": {"lr": 1e-3, "max_iters": 5000}},
    "vit": {"early": {"lr": 3e-3, "schedule": "cosine", "epochs": 10, "patience": 0, "decay_epochs": 0},
            "plateau": {"lr": 3e-3, "schedule": "cosine", "epochs": 60, "patience": 5, "decay_epochs": 5}},
}
#: The arms of the secondary family ``arms``.
SECONDARY_ARMS = ("gated", "gated-from-1", "sym-normalised", "symmetric")
#: The declared families. ``cells``: ``"primary"`` (the recipes of :data:`PRIMARY_RECIPES` with each of
#: :data:`INITS`), ``"other"`` (every other recipe of the rows) or ``"all"``; ``arms``: the arms compared with
#: ``baseline``; the intervention family's tests are its ``schemes``.
FAMILIES = {
    "primary": {"arms": ("diffusion",), "baseline": "attention", "cells": "primary", "correction": "holm"},
    "recipes": {"arms": ("diffusion",), "baseline": "attention", "cells": "other", "correction": "holm"},
    "arms": {"arms": SECONDARY_ARMS, "baseline": "attention", "cells": "all", "correction": "holm"},
    "intervention": {"schemes": tuple(VO_SCALE), "baseline": "attention", "arm": "diffusion", "correction": "holm"},
}
#: The equivalence margins of the headline quantities, fixed from the scale of the quantity and not from the paired
#: differences: the character model 0.02 nats (about 1 % of its validation loss, 1.7 - 2.1 nats, and about twice
#: attention's seed-to-seed sd), the ViT 0.005 (half a percentage point of accuracy: a sixth of the 3 % of digits
#: it gets wrong, one to two of attention's seed-to-seed sds). A - I "neutral" means within these, by TOST.
EQUIVALENCE_MARGINS = {"charlm": 0.02, "vit": 0.005}
#: The methods of :func:`simultaneous_intervals`.
METHODS = ("holm", "bonferroni")
#: The words of :func:`verdict_category`.
VERDICTS = ("better", "worse", "equivalent", "cannot tell")
#: The kinds of set :func:`fieller_ratio` returns.
FIELLER_KINDS = ("bounded", "complement", "line", "half-line")


def _alpha(alpha):
    return check_scalar(alpha, "alpha", low=0, high=0.5, low_inclusive=False, high_inclusive=False)


def _vector(values, name, min_len=2):
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) < min_len:
        raise ValueError(f"{name} must be a 1-D sequence of at least {min_len} numbers; got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must hold finite numbers only")
    return x


# ------------------------------------------------------------------------------------------- one paired cell

def t_summary(differences, alpha: float = 0.05) -> dict:
    """The one-sample t statistics of paired differences.

    Returns ``n``, ``mean``, ``sd`` (ddof 1), ``se`` = sd / sqrt(n), ``df`` = n - 1, ``t`` = mean / se (+-inf when
    se = 0 and mean != 0, 0 when both are 0), ``pvalue`` (two-sided), ``p_greater`` (one-sided, against
    H0: mean <= 0) and ``p_less`` (against H0: mean >= 0), and ``ci`` the unadjusted (1 - alpha) t interval.
    """
    from scipy import stats

    d = _vector(differences, "differences")
    alpha = _alpha(alpha)
    n = len(d)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    t = mean / se if se > 0 else (math.copysign(math.inf, mean) if mean != 0 else 0.0)
    p_greater, p_less = float(stats.t.sf(t, n - 1)), float(stats.t.cdf(t, n - 1))
    half = float(stats.t.ppf(1 - alpha / 2, n - 1)) * se
    return {"n": n, "mean": mean, "sd": sd, "se": se, "df": n - 1, "t": t,
            "pvalue": min(1.0, 2 * min(p_greater, p_less)), "p_greater": p_greater, "p_less": p_less,
            "ci": (mean - half, mean + half)}


# ------------------------------------------------------------------------------- intervals of a whole family

def simultaneous_intervals(means, ses, dfs, alpha: float = 0.05, method: str = "holm") -> dict:
    """Simultaneous (1 - alpha) t intervals for m means, and the sign each of them establishes.

    ``method="bonferroni"``: each interval is the two-sided t interval at level alpha / m. ``method="holm"`` (the
    families' correction): Holm's step-down over the 2m one-sided hypotheses mean_i <= 0 and mean_i >= 0 (a verdict
    claims a sign, so these are the claims; Holm controls the chance of any false sign claim at alpha under any
    dependence between the tests, needs nothing but valid marginal t-tests, and rejects everything Bonferroni does
    and more), inverted as Strassburger and Bretz (Stat. Med. 2008) invert Holm: with r of the 2m hypotheses
    rejected, a side whose hypothesis is rejected is bounded by 0 (the interval [0, u] or [l, 0]: it establishes
    the sign and no more), and every other side is the one-sided t bound at level alpha / (2m - r). With r = 0
    these are the Bonferroni intervals; a side that is not rejected never reaches 0, so a verdict read from the
    interval is the step-down's decision. alpha must lie in (0, 0.5) (then at most m of the 2m are rejected).

    Returns ``low``, ``high`` (arrays (m,)), ``sign`` (+1, -1 or 0: the sign the family establishes),
    ``adjusted`` (the adjusted p-value of the sign claim in the direction of the mean: Holm over the 2m one-sided
    p-values, or m times the two-sided p for Bonferroni, capped at 1), ``level`` (the one-sided level of each
    unrejected side) and ``method``.
    """
    from scipy import stats


    alpha = _alpha(alpha)
    method = check_choice(method, "method", METHODS)
    means = _vector(means, "means", 1)
    ses = _vector(ses, "ses", 1)
    dfs = _vector(dfs, "dfs", 1)
    m = len(means)
    if not (len(ses) == len(dfs) == m):
        raise ValueError(f"means, ses and dfs must have the same length; got {m}, {len(ses)}, {len(dfs)}")
    if np.any(ses < 0) or np.any(dfs < 1):
        raise ValueError("ses must be >= 0 and dfs >= 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(ses > 0, means / np.where(ses > 0, ses, 1.0), np.sign(means) * np.inf)
    p_greater, p_less = stats.t.sf(t, dfs), stats.t.cdf(t, dfs)
    if method == "bonferroni":
        q = stats.t.ppf(1 - alpha / (2 * m), dfs)
        low, high = means - q * ses, means + q * ses
        adjusted = np.minimum(1.0, 2 * m * np.minimum(p_greater, p_less))
        sign = np.where(low > 0, 1, np.where(high < 0, -1, 0))
        return {"low": low, "high": high, "sign": sign, "adjusted": adjusted, "level": np.full(m, alpha / (2 * m)),
                "method": method}
    adj = holm(np.concatenate([p_greater, p_less]))
    adj_greater, adj_less = adj[:m], adj[m:]
    up, down = adj_greater <= alpha, adj_less <= alpha
    r = int(up.sum() + down.sum())
    q = stats.t.ppf(1 - alpha / (2 * m - r), dfs)
    low = np.where(up, 0.0, means - q * ses)
    high = np.where(down, 0.0, means + q * ses)
    sign = np.where(up, 1, np.where(down, -1, 0))
    adjusted = np.where(means >= 0, adj_greater, adj_less)
    return {"low": low, "high": high, "sign": sign, "adjusted": adjusted, "level": np.full(m, alpha / (2 * m - r)),
            "method": method}


def verdict_category(difference: float, interval, margin: float | None = None, *,
                     lower_is_better: bool = False) -> str:
    """The verdict word of one paired difference, read from its (simultaneous) interval alone.

    The rule: when the interval lies on one side of zero (zero allowed as its end, as Holm's step-down bounds a
    rejected side, not containing zero otherwise), the arm is ``"better"`` or ``"worse"`` by the sign of that side
    and ``lower_is_better``; otherwise, when ``margin`` is given and the interval lies within [-margin, margin],
    ``"equivalent"`` (the two one-sided tests of |difference| >= margin reject at the interval's level: a TOST);
    otherwise ``"cannot tell"``. A known sign takes precedence over equivalence.
    """
    difference = check_scalar(difference, "difference")
    try:
        low, high = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise ValueError(f"interval must be a pair of numbers (low, high); got {interval!r}") from None
    if math.isnan(low) or math.isnan(high) or not low <= difference <= high:
        raise ValueError(f"interval must be (low, high) with low <= difference <= high; got {interval!r} "
                         f"for difference {difference!r}")
    if margin is not None:
        margin = check_scalar(margin, "margin", low=0, low_inclusive=False)
    if not isinstance(lower_is_better, bool):
        raise ValueError(f"lower_is_better must be True or False; got {lower_is_better!r}")
    if (low >= 0 and high > 0) or (high <= 0 and low < 0):
        positive = low >= 0
        return "better" if positive != lower_is_better else "worse"
    if margin is not None and -margin <= low and high <= margin:
        return "equivalent"
    return "cannot tell"


# ------------------------------------------------------------------------------------------------ equivalence

def tost_paired(differences, margin: float, alpha: float = 0.05) -> dict:
    """Two one-sided t-tests (TOST) that a paired mean difference lies within (-margin, margin).

    H0: mean <= -margin or mean >= margin, against |mean| < margin; ``pvalue`` is the larger of the two one-sided
    p-values (``p_lower``: against mean <= -margin; ``p_upper``: against mean >= margin), and ``equivalent`` is
    ``pvalue < alpha``, the same as the (1 - 2 alpha) t interval ``ci`` lying inside (-margin, margin). The margin
    must be fixed before the numbers are read.
    """
    from scipy import stats

    d = _vector(differences, "differences")
    margin = check_scalar(margin, "margin", low=0, low_inclusive=False)
    alpha = _alpha(alpha)
    n = len(d)
    mean, se = float(d.mean()), float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0:
        p_lower, p_upper = float(mean <= -margin), float(mean >= margin)
    else:
        p_lower = float(stats.t.sf((mean + margin) / se, n - 1))
        p_upper = float(stats.t.cdf((mean - margin) / se, n - 1))
    half = float(stats.t.ppf(1 - alpha, n - 1)) * se
    p = max(p_lower, p_upper)
    return {"n": n, "mean": mean, "margin": margin, "p_lower": p_lower, "p_upper": p_upper, "pvalue": p,
            "equivalent": p < alpha, "ci": (mean - half, mean + half), "alpha": alpha}


# ------------------------------------------------------------------------------------------------- the families

def primary_recipe(task: str, init: str, budget: str) -> dict:
    """The recipe factors of one primary cell (:data:`PRIMARY_RECIPES` with ``init``)."""
    task = check_choice(task, "task", tuple(PRIMARY_RECIPES))
    init = check_choice(init, "init", INITS)
    budget = check_choice(budget, "budget", BUDGETS)
    return {**PRIMARY_RECIPES[task][budget], "init": init}


def _same_recipe(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and isinstance(b[k], float) and math.isclose(a[k], b[k]))
        for k in a)


def _key(recipe: dict) -> str:
    return json.dumps(recipe, sort_keys=True)


def family_cells(family: str, rows_by_task: dict, *, families: dict | None = None, min_pairs: int = 2) -> list:
    """The paired cells of a declared family, in a fixed order: ``[{"task", "recipe", "arm", "init", "budget",
    "quantity", "lower_is_better", "seeds", "differences", "baseline_mean"}]`` (``budget`` is None outside the
    primary cells; ``baseline_mean`` is the baseline's mean over the paired seeds).

    ``rows_by_task``: ``{task: results rows}`` (e.g. :func:`.files.task_rows`). Only the cells the family declares
    are read; a declared cell with fewer than ``min_pairs`` paired seeds is left out.
    """
    families = FAMILIES if families is None else families
    if not isinstance(families, dict):
        raise ValueError("families must be a dict of family declarations like FAMILIES")
    family = check_choice(family, "family", tuple(f for f in families if "arms" in families[f]))
    min_pairs = check_scalar(min_pairs, "min_pairs", low=2, integer=True)
    spec = families[family]
    cells_kind = check_choice(spec["cells"], f"families[{family!r}]['cells']", ("primary", "other", "all"))
    if not isinstance(rows_by_task, dict) or not rows_by_task:
        raise ValueError("rows_by_task must be a non-empty dict {task: results rows}")
    out = []
    for task in (t for t in PRIMARY_RECIPES if t in rows_by_task):
        rows, t = check_task_rows(rows_by_task[task], f"rows_by_task[{task!r}]")
        if t != task:
            raise ValueError(f"rows_by_task[{task!r}] must be rows of task {task!r}; got {t!r}")
        primary = {_key(primary_recipe(task, i, b)): (i, b) for b in BUDGETS for i in INITS}
        by_recipe = {}
        for r in rows:
            by_recipe.setdefault(_key(r["recipe"]), []).append(r)
        if cells_kind == "primary":
            keys = [k for k in primary if k in by_recipe]
        else:
            keys = sorted(k for k in by_recipe if cells_kind == "all" or k not in primary)
        quantity = HEADLINE[task]
        for k in keys:
            recipe_rows = by_recipe[k]
            if spec["baseline"] not in {r["variant"] for r in recipe_rows}:
                continue
            pairs = paired_differences(recipe_rows, quantity, spec["baseline"])
            init, budget = primary.get(k, (recipe_rows[0]["recipe"].get("init"), None))
            for arm in spec["arms"]:
                if arm not in pairs or len(pairs[arm][0]) < min_pairs:
                    continue
                seeds, d = pairs[arm]
                base = {r["seed"]: row_quantity(r, quantity) for r in recipe_rows if r["variant"] == spec["baseline"]}
                out.append({"task": task, "recipe": dict(recipe_rows[0]["recipe"]), "arm": arm, "init": init,
                            "budget": budget, "quantity": quantity, "lower_is_better": lower_is_better(quantity),
                            "seeds": [int(s) for s in seeds], "differences": np.asarray(d, dtype=float),
                            "baseline_mean": float(np.mean([base[int(s)] for s in seeds]))})
    return out


def family_table(family: str, rows_by_task: dict, *, alpha: float = 0.05, method: str = "holm",
                 margins: dict | None = None, families: dict | None = None, min_pairs: int = 2,
                 complete: bool = True) -> list:
    """Every test of a declared family with its two intervals and its verdict.

    One entry per cell of :func:`family_cells`, with ``n``, ``mean_diff`` (arm - baseline), ``sd_diff``,
    ``ci`` (the unadjusted 1 - alpha t interval), ``pvalue`` (unadjusted, two-sided), ``sim_ci`` (the family's
    simultaneous interval, :func:`simultaneous_intervals` with ``method``), ``adjusted_pvalue`` (of the sign claim,
    the same correction), ``m`` (the tests in the family), ``margin`` (``margins[task]`` or None), ``tost_pvalue``
    (:func:`tost_paired` against that margin, unadjusted; None without one), ``n_better`` / ``n_worse`` /
    ``n_tied`` (paired seeds), and ``verdict``: :func:`verdict_category` of the simultaneous interval.

    ``complete=True``: a family of declared cells (``"primary"``) must have every one of them, in both models, with
    at least ``min_pairs`` paired seeds (else ValueError naming the missing cells), so that its size m is the
    declared one and not that of the rows at hand; ``False`` reads whatever declared cells are there.
    """
    alpha = _alpha(alpha)
    margins = {} if margins is None else margins
    if not isinstance(margins, dict):
        raise ValueError("margins must be a dict {task: margin > 0}")
    if not isinstance(complete, bool):
        raise ValueError(f"complete must be True or False; got {complete!r}")
    cells = family_cells(family, rows_by_task, families=families, min_pairs=min_pairs)
    spec = (FAMILIES if families is None else families)[family]
    if complete and spec["cells"] == "primary":
        have = {(c["task"], c["init"], c["budget"], c["arm"]) for c in cells}
        missing = [(t, i, b, a) for t in PRIMARY_RECIPES for b in BUDGETS for i in INITS for a in spec["arms"]
                   if (t, i, b, a) not in have]
        if missing:
            raise ValueError(f"rows_by_task must hold every declared cell of family {family!r} with at least "
                             f"{min_pairs} paired seeds (or pass complete=False); missing (task, init, budget, arm): "
                             f"{missing}")
    if not cells:
        return []
    summaries = [t_summary(c["differences"], alpha) for c in cells]
    sim = simultaneous_intervals([s["mean"] for s in summaries], [s["se"] for s in summaries],
                                 [s["df"] for s in summaries], alpha, method)
    out = []
    for i, (c, s) in enumerate(zip(cells, summaries)):
        margin = margins.get(c["task"])
        if margin is not None:
            margin = check_scalar(margin, f"margins[{c['task']!r}]", low=0, low_inclusive=False)
        d = c["differences"]
        better = d < 0 if c["lower_is_better"] else d > 0
        worse = d > 0 if c["lower_is_better"] else d < 0
        sim_ci = (float(sim["low"][i]), float(sim["high"][i]))
        out.append({**c, "n": s["n"], "mean_diff": s["mean"], "sd_diff": s["sd"], "ci": s["ci"],
                    "pvalue": s["pvalue"], "sim_ci": sim_ci, "adjusted_pvalue": float(sim["adjusted"][i]),
                    "method": method, "m": len(cells), "alpha": alpha, "margin": margin,
                    "tost_pvalue": None if margin is None else tost_paired(d, margin, alpha)["pvalue"],
                    "n_better": int(better.sum()), "n_worse": int(worse.sum()),
                    "n_tied": int(len(d) - better.sum() - worse.sum()),
                    "verdict": verdict_category(s["mean"], sim_ci, margin, lower_is_better=c["lower_is_better"])})
    return out


# ------------------------------------------------------------------------------------ how the study was made

#: When each part of the exploratory design was committed (the repository's history): the families of tests
#: (8cb2f22), the equivalence margins (d19c732; their rationale used attention's observed seed-to-seed spread) and
#: the interaction test's specification (061702a). Every primary row carries the time it was written, so
#: :func:`exploratory_history` can say which were run, and read, before each of these.
DECLARED = {"families": ("8cb2f22", "2026-12-03T17:16:21+00:00"),
            "margins": ("d19c732", "2026-12-03T17:30:00+00:00"),
            "interaction": ("061702a", "2026-12-04T17:37:00+00:00")}


def exploratory_history(rows_by_task: dict) -> list:
    """Per primary cell, which paired seeds were written before the families were declared, and which after.

    Returns, in :func:`family_cells` order, ``{"task", "init", "budget", "seeds", "before", "after", "first",
    "last"}``: ``before`` the seeds whose two runs (attention and A - I) were both written before
    ``DECLARED["families"]``, ``after`` the others, ``first`` / ``last`` the dates of the cell's first and last row.
    """
    from datetime import datetime

    declared = datetime.fromisoformat(DECLARED["families"][1])
    out = []
    for c in family_cells("primary", rows_by_task):
        spec = FAMILIES["primary"]
        times = {}
        for r in rows_by_task[c["task"]]:
            if _same_recipe(r["recipe"], c["recipe"]) and r["variant"] in (spec["baseline"], c["arm"]):
                times.setdefault(int(r["seed"]), []).append(datetime.fromisoformat(r["timestamp"]))
        before = [s for s in c["seeds"] if max(times[s]) < declared]
        every = [t for s in c["seeds"] for t in times[s]]
        out.append({"task": c["task"], "init": c["init"], "budget": c["budget"], "seeds": list(c["seeds"]),
                    "before": before, "after": [s for s in c["seeds"] if s not in before],
                    "first": min(every).date().isoformat(), "last": max(every).date().isoformat()})
    return out


def leave_one_out(family: str, rows_by_task: dict, *, margins: dict | None = None, alpha: float = 0.05,
                  method: str = "holm", complete: bool = True) -> list:
    """The verdict of every cell of a family with each of its seeds left out in turn (the family recomputed each time,
    every other cell unchanged): ``[{"task", "init", "budget", "verdict", "without": {seed: verdict}}]``, in
    :func:`family_table` order (``complete`` as there). A verdict that a single seed can change is marginal."""
    margins = EQUIVALENCE_MARGINS if margins is None else margins
    full = family_table(family, rows_by_task, alpha=alpha, method=method, margins=margins, complete=complete)
    out = []
    for i, cell in enumerate(full):
        without = {}
        for seed in cell["seeds"]:
            dropped = {task: [r for r in rows if not (task == cell["task"] and int(r["seed"]) == seed
                                                     and _same_recipe(r["recipe"], cell["recipe"]))]
                       for task, rows in rows_by_task.items()}
            without[seed] = family_table(family, dropped, alpha=alpha, method=method, margins=margins,
                                         complete=complete)[i]["verdict"]
        out.append({"task": cell["task"], "init": cell["init"], "budget": cell["budget"], "verdict": cell["verdict"],
                    "without": without})
    return out


def arm_correlations(rows_by_task: dict, family: str = "primary") -> list:
    """Per cell of a family, the correlation across seeds between the baseline's and the arm's headline values.

    Pairing by seed removes the noise the two arms share only as far as they move together from seed to seed: the
    variance of a paired difference is var(a) + var(b) - 2 cov(a, b). Returns ``[{"task", "init", "budget",
    "n", "correlation"}]`` in :func:`family_table` order."""
    out = []
    for c in family_cells(family, rows_by_task):
        spec = FAMILIES[family]
        runs = {(r["variant"], int(r["seed"])): row_quantity(r, c["quantity"]) for r in rows_by_task[c["task"]]
                if _same_recipe(r["recipe"], c["recipe"])}
        a = np.array([runs[(spec["baseline"], s)] for s in c["seeds"]])
        b = np.array([runs[(c["arm"], s)] for s in c["seeds"]])
        out.append({"task": c["task"], "init": c["init"], "budget": c["budget"], "n": len(a),
                    "correlation": float(np.corrcoef(a, b)[0, 1])})
    return out


# ------------------------------------------------------------------------------------ the interaction test

def _dummies(labels) -> np.ndarray:
    levels = list(dict.fromkeys(labels))
    return np.array([[1.0 if lab == lev else 0.0 for lev in levels[1:]] for lab in labels]).reshape(len(labels), -1)


def ols_group_effect(values, groups, factors: dict | None = None, *, first: str = "gpt2", second: str = "default",
                     alpha: float = 0.05, cov_type: str = "nonrobust", clusters=None) -> dict:
    """OLS of ``values`` on an indicator of ``groups == second`` (against ``first``) and categorical ``factors``.

    ``values`` (n,); ``groups`` (n,) labels, each ``first`` or ``second``; ``factors``: ``{name: (n,) labels}``,
    each entered as treatment dummies (its first label the reference). Dummy columns that add nothing to the
    columns before them are dropped (they are not estimable). Returns the coefficient of the indicator,
    ``estimate`` (the mean difference second - first at equal levels of the factors), ``se``, ``t``, ``df`` =
    n - rank, ``pvalue`` (two-sided t), ``ci`` (1 - alpha), ``n`` and ``factors`` (the names kept).

    ``cov_type="nonrobust"``: one residual variance pooled over every cell; ``"HC3"``: MacKinnon and White's
    heteroscedasticity-consistent covariance (each residual scaled by 1 / (1 - leverage)), for cells whose seeds
    spread differently (the t distribution with n - rank degrees of freedom is kept for its p and interval);
    ``"cluster"``: the cluster-robust covariance over the labels ``clusters`` (n,) (values that share a seed share
    its batches and evaluation batches, so they are not independent), with the usual small-sample factor
    G/(G - 1) (n - 1)/(n - rank) and the t distribution with G - 1 degrees of freedom, G the number of clusters
    (statsmodels' ``cov_type="cluster"`` with ``use_t=True``).
    """
    from scipy import stats

    y = _vector(values, "values", 3)
    groups = list(groups)
    if len(groups) != len(y) or not set(groups) <= {first, second} or len(set(groups)) < 2:
        raise ValueError(f"groups must hold one label per value, each {first!r} or {second!r}, both present")
    alpha = _alpha(alpha)
    cov_type = check_choice(cov_type, "cov_type", ("nonrobust", "HC3", "cluster"))
    if (cov_type == "cluster") != (clusters is not None):
        raise ValueError("clusters must be given exactly when cov_type is 'cluster'")
    if clusters is not None:
        clusters = list(clusters)
        if len(clusters) != len(y) or len(set(clusters)) < 2:
            raise ValueError(f"clusters must hold one label per value ({len(y)}) and at least 2 distinct labels")
    factors = {} if factors is None else factors
    columns = [np.ones(len(y)), np.array([1.0 if g == second else 0.0 for g in groups])]
    kept = []
    for name, labels in factors.items():
        labels = [json.dumps(v, sort_keys=True) for v in labels]
        if len(labels) != len(y):
            raise ValueError(f"factors[{name!r}] must hold one label per value ({len(y)}); got {len(labels)}")
        added = False
        for col in _dummies(labels).T:
            trial = np.column_stack(columns + [col])
            if np.linalg.matrix_rank(trial) == trial.shape[1]:
                columns.append(col)
                added = True
        if added:
            kept.append(name)
    x = np.column_stack(columns)
    n, p = x.shape
    if np.linalg.matrix_rank(x[:, :2]) < 2 or n <= p:
        raise ValueError(f"values must outnumber the model's {p} coefficients and both groups must be present")
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    df = n - p
    bread = np.linalg.inv(x.T @ x)
    if cov_type == "nonrobust":
        cov = float(resid @ resid) / df * bread
    elif cov_type == "cluster":
        labels = np.array([json.dumps(c) for c in clusters])
        meat = np.zeros((p, p))
        for g in dict.fromkeys(labels):
            score = x[labels == g].T @ resid[labels == g]  # (p,)
            meat += np.outer(score, score)
        n_clusters = len(set(labels))
        cov = n_clusters / (n_clusters - 1) * (n - 1) / (n - p) * bread @ meat @ bread
        df = n_clusters - 1
    else:
        leverage = np.einsum("ij,jk,ik->i", x, bread, x)
        if np.any(leverage > 1 - 1e-10):
            raise ValueError("cov_type 'HC3' needs every value to share its cell of factors with another value "
                             "(a value alone in its cell has leverage 1)")
        w = (resid / (1 - leverage)) ** 2
        cov = bread @ (x.T * w) @ x @ bread
    est, se = float(beta[1]), float(math.sqrt(max(cov[1, 1], 0.0)))  # round-off can leave -1e-20 for a zero variance
    t = est / se if se > 0 else math.copysign(math.inf, est) if est != 0 else 0.0
    half = float(stats.t.ppf(1 - alpha / 2, df)) * se
    return {"estimate": est, "se": se, "t": t, "df": df, "pvalue": float(2 * stats.t.sf(abs(t), df)),
            "ci": (est - half, est + half), "n": n, "factors": kept, "alpha": alpha, "cov_type": cov_type,
            "clusters": None if clusters is None else len(set(json.dumps(c) for c in clusters))}


#: The recipe factors :func:`initialisation_effect` enters beside the initialisation, per task; a tuple of names
#: is one factor (the ViT's budget: its epochs, patience and decay change together).
EFFECT_FACTORS = {"charlm": (("lr",), ("max_iters",)),
                  "vit": (("lr",), ("schedule",), ("epochs", "patience", "decay_epochs"))}
#: The chapter's test of its question, declared before the power runs were read: does A - I's effect depend on the
#: initialisation? Every recipe run under both initialisations enters (``cells="all"``), with the other recipe
#: factors as covariates; HC3's covariance, because the cells' paired differences spread very differently (a few
#: percentage points under GPT-2's initialisation in the ViT, a few tenths under PyTorch's).
INTERACTION = {"cells": "all", "cov_type": "HC3", "alpha": 0.05}


def initialisation_effect(rows, *, arm: str = "diffusion", baseline: str = "attention", cells: str = "all",
                          first: str = "gpt2", second: str = "default", alpha: float = 0.05,
                          cov_type: str = "nonrobust", budget: str | None = None) -> dict:
    """Does the effect of ``arm`` depend on the initialisation? OLS on the seed-paired differences.

    Every recipe of ``rows`` (one task) with both arms gives its paired differences ``arm - baseline`` of the
    headline quantity; they are regressed (:func:`ols_group_effect`) on the initialisation (``second`` against
    ``first``) and the other recipe factors of :data:`EFFECT_FACTORS` (``cells="primary"``: only the primary cells,
    with the budget as the factor; ``cells="both"``: only the recipes run under both initialisations, whose other
    factors are then matched). ``budget`` ("early" or "plateau", as :data:`BUDGETS`) keeps only the recipes of that
    budget (the character model's 2,000 or 5,000 iterations; the ViT's fixed epochs or its plateau rule). The model
    is additive: one initialisation effect across the recipes, with a pooled residual variance (``cov_type="HC3"``:
    a covariance robust to cells that spread differently; ``"cluster"``: clustered by seed). Returns
    :func:`ols_group_effect`'s dict plus ``task``, ``quantity``, ``cells``, ``means`` (per initialisation, the
    mean paired difference) and ``signs`` (per initialisation, the paired seeds where the arm is better, worse and
    tied).
    """
    rows, task = check_task_rows(rows)
    cells = check_choice(cells, "cells", ("all", "primary", "both"))
    if budget is not None:
        budget = check_choice(budget, "budget", BUDGETS)
    quantity = HEADLINE[task]
    lower = lower_is_better(quantity)
    wanted = None
    if cells == "primary":
        wanted = {_key(primary_recipe(task, i, b)) for i in (first, second) for b in BUDGETS}
    by_recipe = {}
    for r in rows:
        if r["recipe"].get("init") in (first, second) and (wanted is None or _key(r["recipe"]) in wanted) \
                and (budget is None or budget_of(task, r["recipe"]) == budget):
            by_recipe.setdefault(_key(r["recipe"]), []).append(r)
    by_recipe = {k: v for k, v in by_recipe.items() if not {arm, baseline} - {r["variant"] for r in v}}
    if cells == "both":
        def twin(recipe):
            return _key({**recipe, "init": second if recipe["init"] == first else first})
        by_recipe = {k: v for k, v in by_recipe.items() if twin(v[0]["recipe"]) in by_recipe}
    values, groups, seeds, recipes = [], [], [], []
    labels = {"+".join(f): [] for f in EFFECT_FACTORS[task]}
    for recipe_rows in by_recipe.values():
        seed_list, d = paired_differences(recipe_rows, quantity, baseline)[arm]
        recipe = recipe_rows[0]["recipe"]
        values += list(d)
        seeds += [int(x) for x in seed_list]
        groups += [recipe["init"]] * len(d)
        recipes.append(dict(recipe))
        for f in EFFECT_FACTORS[task]:
            labels["+".join(f)] += [[recipe[k] for k in f]] * len(d)
    if not values:
        raise ValueError(f"rows must hold recipes with both arms {arm!r} and {baseline!r}")
    out = ols_group_effect(values, groups, labels, first=first, second=second, alpha=alpha, cov_type=cov_type,
                           clusters=seeds if cov_type == "cluster" else None)
    v, g = np.asarray(values), np.asarray(groups)
    signs = {}
    for init in (first, second):
        d = v[g == init]
        b = int(np.sum(d < 0 if lower else d > 0))
        w = int(np.sum(d > 0 if lower else d < 0))
        signs[init] = {"better": b, "worse": w, "tied": len(d) - b - w}
    return {**out, "task": task, "quantity": quantity, "cells": cells, "budget": budget, "recipes": recipes,
            "seeds": sorted(set(seeds)),
            "means": {init: float(v[g == init].mean()) for init in (first, second)}, "signs": signs}


def budget_of(task: str, recipe: dict) -> str:
    """The budget of a recipe: ``"plateau"`` for the character model's 5,000 iterations and the ViT's plateau rule
    (with or without its decay), ``"early"`` otherwise (2,000 iterations; a fixed number of epochs)."""
    task = check_choice(task, "task", tuple(PRIMARY_RECIPES))
    if task == "charlm":
        return "plateau" if recipe.get("max_iters") == PRIMARY_RECIPES["charlm"]["plateau"]["max_iters"] else "early"
    return "plateau" if recipe.get("patience") else "early"


# ------------------------------------------------------------------------------------------- Fieller's ratio

def fieller_ratio(numerator, denominator, alpha: float = 0.05) -> dict:
    """Fieller's (1 - alpha) confidence set for mean(numerator) / mean(denominator), the two paired seed by seed.

    The set is every R for which the paired t-test of numerator_i - R denominator_i does not reject mean 0 at
    alpha: a R^2 + b R + c <= 0 with a = ybar^2 - q s_yy, b = -2 (xbar ybar - q s_xy), c = xbar^2 - q s_xx,
    q = t_{n-1}(1 - alpha/2)^2 / n. Its ``kind``: ``"bounded"`` (a > 0: the interval [r1, r2]), ``"complement"``
    (a < 0 with real roots: (-inf, r1] and [r2, inf); the denominator's mean is not told from 0), ``"line"`` (a < 0
    without real roots: every number), or ``"half-line"`` (a = 0). ``pieces`` lists the set's closed pieces as
    (low, high) pairs with +-inf ends; ``ratio`` = xbar / ybar (nan when ybar = 0).
    """
    from scipy import stats

    x = _vector(numerator, "numerator")
    y = _vector(denominator, "denominator")
    if len(x) != len(y):
        raise ValueError(f"numerator and denominator must be paired (same length); got {len(x)} and {len(y)}")
    alpha = _alpha(alpha)
    n = len(x)
    xbar, ybar = float(x.mean()), float(y.mean())
    cov = np.cov(x, y, ddof=1)
    sxx, syy, sxy = float(cov[0, 0]), float(cov[1, 1]), float(cov[0, 1])
    q = float(stats.t.ppf(1 - alpha / 2, n - 1)) ** 2 / n
    a, b, c = ybar ** 2 - q * syy, -2 * (xbar * ybar - q * sxy), xbar ** 2 - q * sxx
    disc = b * b - 4 * a * c
    inf = math.inf
    if a > 0:
        root = math.sqrt(max(disc, 0.0))
        r1, r2 = sorted(((-b - root) / (2 * a), (-b + root) / (2 * a)))
        kind, pieces = "bounded", [(r1, r2)]
    elif a < 0 and disc > 0:
        root = math.sqrt(disc)
        r1, r2 = sorted(((-b - root) / (2 * a), (-b + root) / (2 * a)))
        kind, pieces = "complement", [(-inf, r1), (r2, inf)]
    elif a < 0 or (b == 0 and c <= 0):
        kind, pieces = "line", [(-inf, inf)]
    else:
        kind = "half-line"
        pieces = [(-inf, -c / b)] if b > 0 else [(-c / b, inf)]
    return {"ratio": xbar / ybar if ybar != 0 else math.nan, "kind": kind, "pieces": pieces, "n": n,
            "alpha": alpha, "numerator_mean": xbar, "denominator_mean": ybar}


def in_set(pieces, value: float) -> bool:
    """Whether ``value`` lies in a set given as closed pieces (:func:`fieller_ratio`'s ``pieces``)."""
    value = check_scalar(value, "value")
    return any(low <= value <= high for low, high in pieces)


# ------------------------------------------------------------------------------------------ the intervention

def _paired_by_seed(rows, recipe: dict, quantity: str, arm: str, baseline: str) -> dict:
    runs = {(r["variant"], r["seed"]): row_quantity(r, quantity) for r in rows if _same_recipe(r["recipe"], recipe)}
    return {s: runs[(arm, s)] - runs[(baseline, s)] for (v, s) in runs if v == arm and (baseline, s) in runs}


def intervention_table(tasks: dict, *, alpha: float = 0.05, method: str = "holm", families: dict | None = None) -> list:
    """The intervention family: per task and scheme, the shift of A - I's effect and its share, seed by seed.

    ``tasks``: ``{task: (rows, intervention_rows)}``: ``rows`` hold the base recipes, ``intervention_rows`` the rows
    of the ``*-vo-*`` initialisations. The committed intervention files (:func:`.files.intervention_rows`) hold both,
    run together on one machine, and the chapter passes them as both. Per scheme
    (:data:`.attention.VO_SCALE`, base initialisation -> the one whose W_V W_O scale it takes), over the seeds with
    all three paired differences d = arm - baseline (the intervention, the base recipe, the other recipe): the
    ``shift`` d_vo - d_base with its unadjusted ``ci``, ``pvalue``, and the family's ``sim_ci`` /
    ``adjusted_pvalue`` (:func:`simultaneous_intervals` over every scheme of every task); the ``gap``
    d_other - d_base; and the ``share`` shift / gap with Fieller's set (:func:`fieller_ratio`): unadjusted
    (``share_kind``, ``share_pieces``) and at alpha / m, Bonferroni's level for the m shares of the family
    (``share_sim_kind``, ``share_sim_pieces``: simultaneous; Holm's step-down does not invert into a ratio's set).
    """
    alpha = _alpha(alpha)
    families = FAMILIES if families is None else families
    spec = families["intervention"]
    if not isinstance(tasks, dict) or not tasks:
        raise ValueError("tasks must be a non-empty dict {task: (rows, intervention_rows)}")
    out, pairs = [], []
    for task in (t for t in PRIMARY_RECIPES if t in tasks):
        rows, vo_rows = tasks[task]
        rows, t1 = check_task_rows(rows, "rows")
        vo_rows, t2 = check_task_rows(vo_rows, "intervention_rows")
        if not t1 == t2 == task:
            raise ValueError(f"rows and intervention_rows must both be of task {task!r}; got {t1!r}, {t2!r}")
        quantity = HEADLINE[task]
        recipes = {r["recipe"]["init"]: r["recipe"] for r in vo_rows}
        for scheme in (s for s in spec["schemes"] if s in recipes):
            recipe = recipes[scheme]
            base, other = VO_SCALE[scheme]
            args = (quantity, spec["arm"], spec["baseline"])
            d_vo = _paired_by_seed(vo_rows, recipe, *args)
            d_base = _paired_by_seed(rows, {**recipe, "init": base}, *args)
            d_other = _paired_by_seed(rows, {**recipe, "init": other}, *args)
            seeds = sorted(set(d_vo) & set(d_base) & set(d_other))
            if len(seeds) < 2:
                raise ValueError(f"{task} {scheme}: need at least 2 seeds with all three recipes run; got {seeds}")
            shift = np.array([d_vo[s] - d_base[s] for s in seeds])
            gap = np.array([d_other[s] - d_base[s] for s in seeds])
            s = t_summary(shift, alpha)
            f = fieller_ratio(shift, gap, alpha)
            pairs.append((shift, gap))
            out.append({"task": task, "scheme": scheme, "base": base, "vo_scale": other, "quantity": quantity,
                        "seeds": seeds, "n": len(seeds), "shift": s["mean"], "shift_se": s["se"], "df": s["df"],
                        "ci": s["ci"], "pvalue": s["pvalue"], "gap": float(gap.mean()),
                        "d_base": float(np.mean([d_base[k] for k in seeds])),
                        "d_other": float(np.mean([d_other[k] for k in seeds])),
                        "d_vo": float(np.mean([d_vo[k] for k in seeds])),
                        "share": f["ratio"], "share_kind": f["kind"], "share_pieces": f["pieces"]})
    if out:
        sim = simultaneous_intervals([e["shift"] for e in out], [e["shift_se"] for e in out],
                                     [e["df"] for e in out], alpha, method)
        for i, e in enumerate(out):
            e.update(sim_ci=(float(sim["low"][i]), float(sim["high"][i])), adjusted_pvalue=float(sim["adjusted"][i]),
                     method=method, m=len(out), alpha=alpha)
        for e, (shift, gap) in zip(out, pairs):
            f = fieller_ratio(shift, gap, alpha / len(out))
            e.update(share_sim_kind=f["kind"], share_sim_pieces=f["pieces"])
    return out


# ----------------------------------------------------------------------------------------------- the report

def _diff(value: float, quantity: str) -> str:
    """A paired difference in the quantity's units: percentage points for an accuracy, nats for a loss."""
    return f"{100 * value:+.2f} pp" if quantity.endswith("acc") else f"{value:+.4f}"


def _interval(ci, quantity: str) -> str:
    return f"[{_diff(ci[0], quantity)}, {_diff(ci[1], quantity)}]"


def format_families(rows_by_task: dict, intervention: dict | None = None, *, complete: bool = True) -> str:
    """The chapter's statistics as Markdown tables, for the results README (``python -m probdr_lite.experiments
    families`` prints them): the interaction test (:data:`INTERACTION`), every test of the primary family with its
    unadjusted and simultaneous intervals and the verdict word read from the latter, and the intervention family with
    Fieller's sets for its shares. The same functions and settings as the trained-transformers chapter, so the numbers
    are the chapter's; the sentences about them are the chapter's. ``complete``: as for :func:`family_table`."""
    lines = ["Interaction (does A - I's effect depend on the initialisation; OLS on the seed-paired differences, "
             f"{INTERACTION['cov_type']}):", "",
             "| model | paired seeds | default - gpt2 at equal recipe factors [95 % interval] | p |",
             "| --- | --- | --- | --- |"]
    for task, rows in rows_by_task.items():
        e = initialisation_effect(rows, cells=INTERACTION["cells"], cov_type=INTERACTION["cov_type"],
                                  alpha=INTERACTION["alpha"])
        lines.append(f"| {task} | {e['n']} | {_diff(e['estimate'], e['quantity'])} "
                     f"{_interval(e['ci'], e['quantity'])} | {e['pvalue']:.2g} |")
    lines += ["", "Primary family (A - I minus attention; Holm over its tests; the verdict is read from the "
              "simultaneous interval):", "",
              "| model | budget | init | seeds | A - I - attention | 95 % unadjusted | 95 % simultaneous | Holm p | "
              "better / worse / tied | verdict |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for e in family_table("primary", rows_by_task, margins=EQUIVALENCE_MARGINS, complete=complete):
        q = e["quantity"]
        lines.append(f"| {e['task']} | {e['budget']} | {e['init']} | {e['n']} | {_diff(e['mean_diff'], q)} | "
                     f"{_interval(e['ci'], q)} | {_interval(e['sim_ci'], q)} | {e['adjusted_pvalue']:.2g} | "
                     f"{e['n_better']} / {e['n_worse']} / {e['n_tied']} | {e['verdict']} |")
    if intervention:
        lines += ["", "Intervention family (shift = A - I's effect under the intervention minus under the base "
                  "initialisation; share = shift / the whole initialisation's effect, Fieller's 95 % set):", "",
                  "| model | initialisation | seeds | base | other | intervention | shift | 95 % unadjusted | "
                  "95 % simultaneous | Holm p | share | Fieller 95 % |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for e in intervention_table(intervention):
            q = e["quantity"]
            pieces = " u ".join(f"[{lo:.0%}, {hi:.0%}]".replace("inf%", "inf") for lo, hi in e["share_pieces"])
            lines.append(f"| {e['task']} | {e['scheme']} | {e['n']} | {_diff(e['d_base'], q)} | "
                         f"{_diff(e['d_other'], q)} | {_diff(e['d_vo'], q)} | {_diff(e['shift'], q)} | "
                         f"{_interval(e['ci'], q)} | {_interval(e['sim_ci'], q)} | {e['adjusted_pvalue']:.2g} | "
                         f"{e['share']:.0%} | {pieces} |")
    return "\n".join(lines)
