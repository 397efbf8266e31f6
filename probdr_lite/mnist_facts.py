"""The facts behind the MNIST chapter's computed sentences: its numbers in, a dict of facts out.

The sentences themselves live in the chapter (``book/src/mnist_at_init.py``), as templates filled by
:func:`probdr_lite.presentation.prose.fill`. What stays here is what makes them honest: the numbers each sentence states
and, as booleans or small enums (a direction ``"up"``/``"down"``/``"flat"``, a metric's key), every choice that
follows from a number, each decided by a threshold of :data:`WORDS` (so the tests can feed numbers for which each
choice would be false). A template holds no threshold, and the words for the enums are presentation's (a direction's
in :data:`probdr_lite.presentation.prose.TREND_WORDS`, a metric's label in :data:`probdr_lite.presentation.style.METRIC_LABELS`).

The numbers come from :func:`probdr_lite.metrics.layer_metrics` rows (one dict per layer and variant, as the
chapter's tables use) and from :func:`probdr_lite.mnist_blocks.sweep`.

:func:`live_facts` feeds the caption of the chapter's kernel-free live figure, whose clauses the chapter passes to
:func:`probdr_lite.presentation.live.builders.mnist_live`.
"""

from __future__ import annotations

import numpy as np

from probdr_lite.metrics import METRIC_NAMES, change_direction, rms_spread
from probdr_lite.mnist_blocks import pick
from probdr_lite.unrolled import CHAPTER_VARIANTS as VARIANTS

__all__ = ["WORDS", "paper_numbers", "numbers_facts", "variants_facts", "step_family_facts", "picture_facts",
           "sweep_facts", "summary_facts", "pixel_facts", "live_facts"]

#: The thresholds behind the chapter's comparison words.
WORDS = {
    # a number "rises"/"falls" only if it moves by more than this fraction of its first value
    "trend": 0.01,
    # k-NN accuracy counts as lower/higher (purer neighbourhoods) only beyond this absolute change
    "knn_change": 0.01,
    # two variants' k-NN accuracies are "nearly indistinguishable" within this absolute difference
    "indistinguishable": 0.01,
    # "no variant ends purer than the start": best final k-NN accuracy within this of layer 0
    "no_purer": 0.005,
    # the silhouette "stays small" while below this
    "small_silhouette": 0.25,
    # the two-coordinate picture "looks far better" if its k-NN accuracy rises by more than this
    "picture_better": 0.05,
    # a sweep's ends count as "acting little" if their change is below this fraction of the largest change
    "ends_small": 0.1,
    # a k-NN change in the sweep is a "loss of purity" beyond this
    "sweep_knn": 0.01,
    # the top sweep row's collapse is worth explaining beyond this k-NN drop
    "top_row_drop": 0.1,
    # pixel-space and latent k-NN accuracy are "practically the same" within this relative difference
    "same_accuracy": 0.01,
    # in the live figure, an image "does not move" if its mean distance moved is below this fraction of the spread
    "still": 0.01,
}



def _pick(rows, metric, variant, layer=None):
    chosen = sorted((r for r in rows if r["variant"] == variant), key=lambda r: r["layer"])
    if not chosen:
        raise ValueError(f"rows must hold the variant {variant!r}")
    if layer is None:
        return [r[metric] for r in chosen]
    hits = [r[metric] for r in chosen if r["layer"] == layer]
    if len(hits) != 1:
        raise ValueError(f"rows must hold exactly one row of {variant!r} at layer {layer}; got {len(hits)}")
    return hits[0]


def paper_numbers(rows_full, n_layers) -> dict:
    """The paper's block on all images: first and last values and the peaks of the silhouette and the NMI."""
    sil = _pick(rows_full, "silhouette", "paper")
    nmi = _pick(rows_full, "kmeans_nmi", "paper")
    return {
        "n_layers": int(n_layers),
        "n": int(next(r["n"] for r in rows_full if r["variant"] == "paper")),
        "knn0": _pick(rows_full, "knn_accuracy", "paper", 0),
        "knn8": _pick(rows_full, "knn_accuracy", "paper", n_layers),
        "bw0": _pick(rows_full, "between_within", "paper", 0),
        "bw8": _pick(rows_full, "between_within", "paper", n_layers),
        "sil": sil, "nmi": nmi,
        "sil_peak": int(np.argmax(sil)), "nmi_peak": int(np.argmax(nmi)),
    }


def _early(p) -> bool:
    L = p["n_layers"]
    return 0 < p["sil_peak"] < L and 0 < p["nmi_peak"] < L


def numbers_facts(p) -> dict:
    """The facts of 'What the numbers say' (the paper's block on all images) and of exercise 2's premise.

    Besides :func:`paper_numbers`' own: the directions (:func:`~probdr_lite.metrics.change_direction`)
    ``bw_direction`` and ``knn_direction``; ``centres_apart`` (the
    between/within ratio rises beyond ``WORDS["trend"]``); ``knn_lower`` (k-NN accuracy falls by more than
    ``WORDS["knn_change"]``); the first, last and peak values of the silhouette and the NMI, with ``*_peaks_inside``
    (the peak lies strictly between the first and the last layer) and ``both_peak_early`` (both do);
    ``silhouette_small`` (the silhouette stays below ``small_silhouette`` at every layer).
    """
    L = p["n_layers"]
    sil, nmi = list(p["sil"]), list(p["nmi"])
    return {
        **p,
        "bw_direction": change_direction(p["bw0"], p["bw8"], WORDS["trend"]),
        "centres_apart": bool(p["bw8"] > p["bw0"] * (1 + WORDS["trend"])),
        "knn_direction": change_direction(p["knn0"], p["knn8"], WORDS["trend"]),
        "knn_lower": bool(p["knn8"] < p["knn0"] - WORDS["knn_change"]),
        "sil_first": sil[0], "sil_last": sil[-1], "sil_peak_value": sil[p["sil_peak"]],
        "sil_peaks_inside": 0 < p["sil_peak"] < L,
        "nmi_first": nmi[0], "nmi_last": nmi[-1], "nmi_peak_value": nmi[p["nmi_peak"]],
        "nmi_peaks_inside": 0 < p["nmi_peak"] < L,
        "both_peak_early": _early(p),
        "small_silhouette": WORDS["small_silhouette"],
        "silhouette_small": bool(max(sil) < WORDS["small_silhouette"]),
    }


def _at_last(rows_var, n_layers):
    return {m: {v: _pick(rows_var, m, v, n_layers) for v in VARIANTS} for m in METRIC_NAMES}


def variants_facts(rows_var, n_layers, nmi_seeds, eta, d_q, beta) -> dict:
    """The five variants on the subset after the last block, with k-means' own noise as the yardstick.

    ``metrics`` holds one dict per number of :data:`~probdr_lite.metrics.METRIC_NAMES` (its key ``metric``, the
    ``best`` variant and its ``best_value``, the ``low`` and ``high`` ends over the variants, and ``within_noise``:
    for the NMI only, the range is narrower than two standard deviations ``nmi_sd`` of k-means over seeds). Then
    ``att`` and ``dif`` (final k-NN accuracy of plain attention and of the $A - I$ block) against ``knn_sub0`` (layer
    0) and the choices: ``attention_smaller_step`` (plain attention ends higher), ``paper_near_diffusion`` (within
    ``indistinguishable``), ``none_purer`` (no variant's final k-NN accuracy beyond ``WORDS["no_purer"]`` above layer
    0; else ``best_knn`` is the purest) and ``all_clump`` (every variant raises the between/within ratio).
    ``eta_equiv`` is the step of diffusion that plain attention equals, ``ff_weight`` the feed-forward term's weight.
    """
    at = _at_last(rows_var, n_layers)
    best = {m: max(at[m], key=at[m].get) for m in at}
    spread = {m: max(at[m].values()) - min(at[m].values()) for m in at}
    knn_sub0 = _pick(rows_var, "knn_accuracy", "paper", 0)
    bw_sub0 = _pick(rows_var, "between_within", "paper", 0)
    nmi_sd = float(np.std(nmi_seeds, ddof=1))
    att, dif = at["knn_accuracy"]["attention"], at["knn_accuracy"]["diffusion"]
    return {
        "n_sub": int(next(r["n"] for r in rows_var if r["variant"] == "paper")),
        "n_layers": int(n_layers),
        "metrics": [{"metric": m, "best": best[m], "best_value": at[m][best[m]],
                     "low": min(at[m].values()), "high": max(at[m].values()),
                     "within_noise": bool(m == "kmeans_nmi" and spread[m] < 2 * nmi_sd)} for m in METRIC_NAMES],
        "nmi_sd": nmi_sd,
        "att": att, "dif": dif, "knn_sub0": knn_sub0,
        "attention_smaller_step": bool(att > dif),
        "eta_equiv": eta / (1 + 2 * eta),
        "indistinguishable": WORDS["indistinguishable"],
        "paper_near_diffusion": bool(abs(at["knn_accuracy"]["paper"] - dif) < WORDS["indistinguishable"]),
        "ff_weight": 2 * eta / (d_q + beta),
        "none_purer": bool(max(at["knn_accuracy"].values()) <= knn_sub0 + WORDS["no_purer"]),
        "best_knn": best["knn_accuracy"],
        "all_clump": bool(min(at["between_within"].values()) > bw_sub0),
    }


def _direction(d) -> str:
    return "higher" if d > 0 else ("lower" if d < 0 else "unchanged")


def step_family_facts(family_rows, steps, rows_var, nmi_seeds, n_layers) -> dict:
    """Plain attention over a range of steps against the variants: the facts of the step-family paragraph.

    ``family_rows`` maps a step ``s`` to the :func:`~probdr_lite.metrics.layer_metrics` row of plain attention after
    ``n_layers`` blocks at ``eta = s / 2``; ``steps`` maps each variant of the family to its own ``s``. Facts:
    ``s_attention``, ``s_diffusion``, ``s_paper``; ``agreement``, the largest difference over the numbers between
    plain attention at $A - I$'s step and the $A - I$ block of ``rows_var``; per number ``<metric>_change`` (from
    plain attention's step to $A - I$'s) and ``<metric>_direction`` (``"higher"``, ``"lower"`` or ``"unchanged"``
    from its sign); ``nmi_within_noise``: the NMI's change is within two standard deviations of k-means over seeds.
    """
    at_dif = family_rows[steps["diffusion"]]
    at_att = family_rows[steps["attention"]]
    agreement = max(abs(at_dif[m] - pick(rows_var, m, variant="diffusion", layer=n_layers)) for m in METRIC_NAMES)
    change = {m: at_dif[m] - at_att[m] for m in METRIC_NAMES}
    facts = {"s_attention": steps["attention"], "s_diffusion": steps["diffusion"], "s_paper": steps["paper"],
             "agreement": float(agreement),
             "nmi_within_noise": bool(abs(change["kmeans_nmi"]) <= 2 * float(np.std(nmi_seeds, ddof=1)))}
    for m, d in change.items():
        facts[f"{m}_change"] = d
        facts[f"{m}_direction"] = _direction(d)
    return facts


def picture_facts(p, knn_2d) -> dict:
    """Where the two-coordinate picture and the full-space numbers disagree: ``k0`` and ``k8`` (k-NN accuracy on the
    picture's two coordinates before and after the blocks), ``knn0`` and ``knn8`` (in the full space),
    ``picture_better`` (``k8`` beyond ``WORDS["picture_better"]`` above ``k0``) and ``knn_fell`` (the full-space
    accuracy falls by more than ``WORDS["knn_change"]``)."""
    L = p["n_layers"]
    k0, k8 = knn_2d[0], knn_2d[L]
    return {"n_layers": L, "k0": k0, "k8": k8, "knn0": p["knn0"], "knn8": p["knn8"],
            "picture_better": bool(k8 > k0 + WORDS["picture_better"]),
            "knn_fell": bool(p["knn8"] < p["knn0"] - WORDS["knn_change"])}


def sweep_facts(grid, kappas, etas, eta) -> dict:
    """The kappa-eta sweep along the row ``eta``: the change of the between/within ratio from layer 0 at the first
    kappa (``bw_first``), the last (``bw_last``) and where it grows most (``bw_peak`` at ``kappa_peak``, where k-NN
    accuracy changes by ``knn_peak``). Choices: ``ends_small`` (both ends below ``WORDS["ends_small"]`` of the
    largest change), ``peak_less_pure`` (``knn_peak`` below ``-WORDS["sweep_knn"]``) and ``top_row_collapses`` (on
    the top row ``eta_top``, at the first kappa, k-NN accuracy, ``knn_top``, drops by more than
    ``WORDS["top_row_drop"]``); ``own_share`` is the fraction ``1 - 2 eta_top`` of an image's own position that
    survives a block there."""
    row = list(etas).index(eta)
    bw_row = np.asarray(grid["between_within"][row]) - grid["between_within@0"]
    knn_row = np.asarray(grid["knn_accuracy"][row]) - grid["knn_accuracy@0"]
    j = int(np.argmax(bw_row))
    knn_top = float(grid["knn_accuracy"][-1, 0])
    return {
        "eta": eta, "kappa_first": kappas[0], "kappa_last": kappas[-1], "kappa_peak": kappas[j],
        "bw_first": float(bw_row[0]), "bw_last": float(bw_row[-1]), "bw_peak": float(bw_row[j]),
        "ends_small": bool(max(abs(bw_row[0]), abs(bw_row[-1])) < WORDS["ends_small"] * bw_row.max()),
        "knn_peak": float(knn_row[j]),
        "peak_less_pure": bool(knn_row[j] < -WORDS["sweep_knn"]),
        "eta_top": etas[-1], "own_share": 1 - 2 * etas[-1], "knn_top": knn_top,
        "top_row_collapses": bool(knn_top - grid["knn_accuracy@0"] < -WORDS["top_row_drop"]),
    }


def summary_facts(p, rows_var) -> dict:
    """The summary's choices: ``clumps`` (the paper's block raises the between/within ratio on all images),
    ``purer`` (its k-NN accuracy rises beyond ``WORDS["no_purer"]``), ``both_peak_early`` (as in
    :func:`numbers_facts`), ``plain_attention_clumps`` (plain attention raises the ratio on the subset) and
    ``a_minus_i_best`` (`diffusion` or `paper` ends highest on both k-NN accuracy and silhouette)."""
    L = p["n_layers"]
    at = _at_last(rows_var, L)
    best = {m: max(at[m], key=at[m].get) for m in at}
    return {
        "n_layers": L,
        "clumps": bool(p["bw8"] > p["bw0"]),
        "purer": bool(p["knn8"] > p["knn0"] + WORDS["no_purer"]),
        "both_peak_early": _early(p),
        "plain_attention_clumps": bool(at["between_within"]["attention"]
                                       > _pick(rows_var, "between_within", "attention", 0)),
        "a_minus_i_best": (best["knn_accuracy"] in ("diffusion", "paper")
                           and best["silhouette"] in ("diffusion", "paper")),
    }


def pixel_facts(knn_pixels, knn_latents) -> dict:
    """Exercise 1's check: k-NN accuracy on the raw pixels against the latents at layer 0, and ``same``: the two
    are within a relative ``same_accuracy`` of each other: ``|a - b| <= same_accuracy * max(|a|, |b|)``."""
    a, b = float(knn_pixels), float(knn_latents)
    return {"knn_pixels": knn_pixels, "knn_latents": knn_latents, "same_accuracy": WORDS["same_accuracy"],
            "same": abs(a - b) <= WORDS["same_accuracy"] * max(abs(a), abs(b))}


def live_facts(grid, kappas, at, n_layers, *, eta, beta, spot_width) -> dict:
    """What the live figure shows along its kappa axis at the other controls' defaults (``at`` = the indices of the
    default kappa, eta, beta), after ``n_layers`` blocks, from :func:`probdr_lite.presentation.live.builders.mnist_grid`.

    Each kappa is one of three cases: the first two coordinates shrink to a *spot* (their root mean squared distance
    to their mean is below ``spot_width``, the figure's own test), the images *stay* where they are (mean distance
    moved below ``WORDS["still"]`` of the starting spread), or they *move*. ``groups`` holds runs of neighbouring
    kappas in the same case, each with its ``case``, ``kappas``, the between/within ratio before any block
    (``ratio_start``, of the run's first kappa) and after the last (``ratios``), and the mean distance ``moved``.
    """
    _, b, c = at
    xy = np.asarray(grid["xy"])[:, b, c, n_layers]
    rms2 = rms_spread(xy)
    moved = np.asarray(grid["moved"])[:, b, c, n_layers]
    spread0 = float(np.asarray(grid["spread"])[0, b, c, 0])
    ratio = np.asarray(grid["ratio"])[:, b, c, :]
    cases = ["spot" if r < spot_width else ("still" if m < WORDS["still"] * spread0 else "move")
             for r, m in zip(rms2, moved)]
    groups = []
    for k, case in enumerate(cases):
        if groups and groups[-1][0] == case:
            groups[-1][1].append(k)
        else:
            groups.append((case, [k]))
    return {
        "eta": eta, "beta": beta, "n_layers": int(n_layers), "still": WORDS["still"],
        "groups": [{"case": case, "kappas": [float(kappas[k]) for k in ks], "ratio_start": float(ratio[ks[0], 0]),
                    "ratios": [float(ratio[k, -1]) for k in ks], "moved": [float(moved[k]) for k in ks]}
                   for case, ks in groups],
    }
