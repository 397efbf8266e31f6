"""Does the sign of A - I follow the scale of W_V W_O? The intervention of the trained-transformers chapter.

The recipe tables show A - I hurting under the GPT-2 initialisation and not under PyTorch's default, and the
mechanism records find the scale of W_V W_O among the quantities the two start apart. The intervention
(:data:`.attention.VO_SCALE`) keeps one initialisation and draws only W_V and W_O at the other's scale. Per
intervention this module compares, seed by seed, three paired differences d = (A - I) - attention of the
chapter's headline quantity (:data:`.stats.HEADLINE`, the quantity of the recipe tables):

- d_base: the base recipe (the initialisation the intervention keeps), e.g. ``gpt2``;
- d_other: the recipe of the initialisation whose W_V, W_O scale it takes, e.g. ``default``;
- d_vo: the intervention, e.g. ``gpt2-vo-default``.

The *shift* d_vo - d_base (paired by seed) is what changing only W_V and W_O did to A - I's effect; the *gap*
mean(d_other) - mean(d_base) is what changing the whole initialisation did; their ratio is the share of the
initialisation's effect that the W_V W_O scale carries. A shift counts when its t-test, Holm-adjusted over
every intervention tested together, is below ``alpha`` and it points from d_base towards d_other; the scale
carries *most* of the initialisation's effect when, in addition, the share exceeds :data:`MOST`.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_scalar
from .attention import VO_SCALE
from .files import check_task_rows
from .stats import HEADLINE, holm, row_quantity

#: The share of the initialisation's effect above which the W_V W_O scale is said to carry most of it.
MOST = 0.5


def _paired(rows, recipe: dict, quantity: str) -> dict:
    """{seed: A - I minus attention} of ``recipe`` in ``rows``, over the seeds that have both arms."""
    runs = {(r["variant"], r["seed"]): row_quantity(r, quantity) for r in rows if r["recipe"] == recipe}
    return {s: runs[("diffusion", s)] - runs[("attention", s)] for (a, s) in runs
            if a == "diffusion" and ("attention", s) in runs}


def _t(values, alpha):
    from scipy import stats

    d = np.asarray(values, dtype=float)
    n = len(d)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = stats.t.ppf(1 - alpha / 2, n - 1) * sd / math.sqrt(n)
    p = float(stats.ttest_1samp(d, 0.0).pvalue) if sd > 0 else (0.0 if mean != 0 else 1.0)
    return mean, (mean - half, mean + half), p


def vo_scale_effects(tasks: dict, *, alpha: float = 0.05) -> dict:
    """The intervention's effects, per task and intervention, with one Holm family over all of them.

    Parameters
    ----------
    tasks : {task: (rows, intervention_rows)}
        ``rows``: the task's recipe rows (they hold the base recipes); ``intervention_rows``: the rows of the
        ``*-vo-*`` initialisations (grids ``charlm-vo``, ``vit-vo``).
    alpha : float in (0, 1), default 0.05

    Returns
    -------
    {task: {scheme: entry}} with entry keys ``base`` and ``vo_scale`` (the two initialisations), ``recipe``,
    ``quantity``, ``seeds`` (those with all three paired differences), ``d_vo`` / ``d_base`` / ``d_other`` (mean
    paired differences over those seeds), ``d_vo_ci`` (its 1 - alpha t interval), ``shift`` (mean d_vo - d_base),
    ``shift_ci``, ``shift_pvalue``, ``shift_holm``, ``gap`` (d_other - d_base), ``share`` (shift / gap) and
    ``towards`` (True when the Holm-adjusted shift is significant and has the sign of the gap) and
    ``carries_most`` (``towards`` and ``share`` > :data:`MOST`).
    """
    alpha = check_scalar(alpha, "alpha", low=0, high=1, low_inclusive=False, high_inclusive=False)
    if not isinstance(tasks, dict) or not tasks:
        raise ValueError("tasks must be a non-empty dict {task: (rows, intervention_rows)}")
    out, tests = {}, []
    for task, pair in tasks.items():
        rows, vo_rows = pair
        rows, t1 = check_task_rows(rows, "rows")
        vo_rows, t2 = check_task_rows(vo_rows, "intervention_rows")
        if not t1 == t2 == task:
            raise ValueError(f"rows and intervention_rows must both be of task {task!r}; got {t1!r}, {t2!r}")
        quantity = HEADLINE[task]
        out[task] = {}
        recipes = {r["recipe"]["init"]: r["recipe"] for r in vo_rows}
        unknown = sorted(set(recipes) - set(VO_SCALE))
        if unknown:
            raise ValueError(f"intervention_rows must be of the initialisations {tuple(VO_SCALE)}; got {unknown}")
        for scheme in (s for s in VO_SCALE if s in recipes):  # a fixed order, whatever order the rows came in
            recipe = recipes[scheme]
            base, other = VO_SCALE[scheme]
            d_vo = _paired(vo_rows, recipe, quantity)
            d_base = _paired(rows, {**recipe, "init": base}, quantity)
            d_other = _paired(rows, {**recipe, "init": other}, quantity)
            seeds = sorted(set(d_vo) & set(d_base) & set(d_other))
            if len(seeds) < 2:
                raise ValueError(f"{task} {scheme}: need at least 2 seeds with all three recipes run; got {seeds}")
            mean_vo, ci_vo, _ = _t([d_vo[s] for s in seeds], alpha)
            shift, shift_ci, shift_p = _t([d_vo[s] - d_base[s] for s in seeds], alpha)
            e = {"base": base, "vo_scale": other, "recipe": recipe, "quantity": quantity, "seeds": seeds,
                 "d_vo": mean_vo, "d_vo_ci": ci_vo,
                 "d_base": float(np.mean([d_base[s] for s in seeds])),
                 "d_other": float(np.mean([d_other[s] for s in seeds])),
                 "shift": shift, "shift_ci": shift_ci, "shift_pvalue": shift_p}
            e["gap"] = e["d_other"] - e["d_base"]
            e["share"] = shift / e["gap"] if e["gap"] != 0 else float("nan")
            out[task][scheme] = e
            tests.append(e)
    for e, p in zip(tests, holm([e["shift_pvalue"] for e in tests])):
        e["shift_holm"] = float(p)
        e["towards"] = bool(p < alpha and e["gap"] != 0 and np.sign(e["shift"]) == np.sign(e["gap"]))
        e["carries_most"] = bool(e["towards"] and e["share"] > MOST)
    return out


def follows_scale(effects: dict) -> dict:
    """Per task of :func:`vo_scale_effects`: True when every intervention moved A - I's effect most of the way to
    that of the initialisation whose W_V, W_O scale it took (``carries_most``): there the effect of A - I follows
    the scale of W_V W_O rather than the rest of the initialisation."""
    return {task: bool(per) and all(e["carries_most"] for e in per.values()) for task, per in effects.items()}
