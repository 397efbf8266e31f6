"""The MNIST chapter's measurements and the facts its computed sentences state.

The experiment: untrained blocks at the diagonal initialisation on MNIST, measured per layer. The paper's figure
(notes, settings below section 3) embeds flattened MNIST images, X_0 = Pi(Y W_E) with d_q = 128, runs 8 blocks with
kappa = 30 and eta = 0.4, and plots the first two latent coordinates before and after, coloured by class. The paper
leaves beta, the mask M, the number of images, W_E and weight sharing open; :data:`PAPER` fixes them (beta = 1,
M = 0, all 10,000 test images, W_E ~ N(0, 1/784) with seed 0, one block shared by all layers).

- :func:`mnist_latents`      X_0 for the test images (all, or a class-balanced subset);
- :func:`run_blocks`         the path X_0, ..., X_8 of one shared block;
- :func:`variant_metrics`    the four clustering numbers of :func:`probdr_lite.metrics.layer_metrics` (settings
  :data:`probdr_lite.metrics.METRICS`) per variant and layer, as tidy rows; :func:`pick` reads them back;
- :func:`kmeans_nmi_spread`  how much k-means' NMI moves with its seed alone (the noise of that number);
- :func:`sweep`              the numbers after 8 blocks over a grid of kappa and eta.

Tables, figures and the live panel are in :mod:`probdr_lite.presentation.figures.mnist`. Every function that runs
blocks on a few thousand points or fewer does so on one thread (see :mod:`probdr_lite._threads`).

The facts: its numbers in, a dict of facts out. The sentences themselves live in the chapter
(``book/src/mnist_at_init.py``), as templates filled by :func:`probdr_lite.presentation.prose.fill`. What stays here
is what makes them honest: the numbers each sentence states and, as booleans or small enums (a direction
``"up"``/``"down"``/``"flat"``, a metric's key), every choice that follows from a number, each decided by a threshold
of :data:`WORDS` (so the tests can feed numbers for which each choice would be false). A template holds no threshold,
and the words for the enums are presentation's (a direction's in :data:`probdr_lite.presentation.prose.TREND_WORDS`,
a metric's label in :data:`probdr_lite.presentation.style.METRIC_LABELS`). The numbers come from
:func:`probdr_lite.metrics.layer_metrics` rows (one dict per layer and variant, as the chapter's tables use) and from
:func:`sweep`. :func:`live_facts` feeds the caption of the chapter's kernel-free live figure, whose clauses the
chapter passes to :func:`probdr_lite.presentation.live.builders.mnist_live`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from probdr_lite._threads import single_threaded
from probdr_lite._validation import check_array, check_choice, check_class_labels, check_scalar, check_seed
from probdr_lite.metrics import (METRIC_NAMES, METRICS, change_direction, kmeans_nmi, layer_metrics, metric_value,
                                 rms_spread)
from probdr_lite.unrolled import CHAPTER_VARIANTS, check_block_variants, embed, unroll
from probdr_lite.unrolled import CHAPTER_VARIANTS as VARIANTS

__all__ = ["WORDS", "paper_numbers", "numbers_facts", "variants_facts", "step_family_facts", "picture_facts",
           "sweep_facts", "summary_facts", "pixel_facts", "live_facts", "PAPER", "MnistSettings", "SMALL_N",
           "mnist_latents", "run_blocks", "variant_metrics", "kmeans_nmi_spread", "pick", "sweep"]

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


#: Up to this many points the blocks run on one thread (see ``_threads``); above it torch keeps its own setting.
SMALL_N = 4096


@dataclass(frozen=True)
class MnistSettings:
    """The settings of the MNIST figure. Stated by the paper: d_q, kappa, eta, 8 blocks. Chosen here: the rest."""

    d_q: int = 128  # latent width (paper)
    kappa: float = 30.0  # attention sharpness, logits kappa cos(x_i, x_j) (paper)
    eta: float = 0.4  # step size, below 1/2 (paper)
    n_layers: int = 8  # blocks (paper); one block shared by all of them (our choice)
    beta: float = 1.0  # regulariser and self-attention penalty (our choice)
    variant: str = "paper"  # 2 (A - I) X + 2 X / (d_q + beta): the paper's update with its feed-forward term
    seed: int = 0  # of W_E ~ N(0, 1/784) (our choice)
    mask: None = None  # M = 0: every image attends to every image (our choice)


#: The defaults of the MNIST chapter.
PAPER = MnistSettings()


def mnist_latents(n=None, d_q: int = PAPER.d_q, seed: int = PAPER.seed):
    """X_0 = Pi(Y W_E) for MNIST test images, W_E ~ N(0, 1/784) (``unrolled.embed``), float32.

    Parameters
    ----------
    n : int in [10, 10000] or None
        None: all 10,000 test images. Otherwise a stratified subset (classes as balanced as possible, the same
        images on every run; ``load_mnist(n, stratified=True)``).
    d_q : int in [2, 4096]
    seed : int >= 0
        Seed of W_E.

    Returns
    -------
    X0 : torch.Tensor (n, d_q), float32, rows centred with squared norm d_q
    labels : ndarray (n,), int64
    """
    from probdr_lite.data import load_mnist

    if n is not None:
        n = check_scalar(n, "n", low=10, high=10_000, integer=True)
    d_q = check_scalar(d_q, "d_q", low=2, high=4096, integer=True)
    images, labels = load_mnist(n=n, stratified=n is not None)
    return embed(torch.from_numpy(images), d_q=d_q, seed=check_seed(seed)), labels


def run_blocks(X0, n_layers=PAPER.n_layers, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
               variant=PAPER.variant, mask=None) -> list:
    """``unroll`` (one shared block, n_layers times), on one thread when n <= SMALL_N; a list of n_layers + 1 arrays."""
    n = X0.shape[0] if hasattr(X0, "shape") else len(X0)
    if n <= SMALL_N:
        with single_threaded():
            path = unroll(X0, n_layers, kappa, eta, beta, variant, mask=mask)
    else:
        path = unroll(X0, n_layers, kappa, eta, beta, variant, mask=mask)
    return [X.numpy() for X in path]


def kmeans_nmi_spread(X, labels, seeds=range(5)) -> np.ndarray:
    """NMI of k-means (``metrics.METRICS``) for several k-means seeds on the same X: how much of a difference is noise."""
    seeds = [check_seed(s) for s in seeds]
    if len(seeds) < 2:
        raise ValueError(f"seeds must hold at least 2 seeds to show a spread; got {len(seeds)}")
    X = check_array(X, "X", ndim=2, min_rows=2)
    labels = check_class_labels(labels, X.shape[0], "X")
    with single_threaded():
        return np.array([kmeans_nmi(X, labels, seed=s, n_init=METRICS.n_init) for s in seeds])


def variant_metrics(X0, labels, variants=CHAPTER_VARIANTS, n_layers=PAPER.n_layers, kappa=PAPER.kappa,
                    eta=PAPER.eta, beta=PAPER.beta, metrics=METRIC_NAMES, seed: int = 0, return_latents=False):
    """Run every variant from the same X_0 and measure every layer: the rows of :func:`layer_metrics`, concatenated.

    With ``return_latents=True`` also returns {variant: [X_0, ..., X_{n_layers}]}.
    """
    variants = check_block_variants(variants)
    rows, paths = [], {}
    for v in variants:
        paths[v] = run_blocks(X0, n_layers, kappa, eta, beta, v)
        rows += layer_metrics(paths[v], labels, variant=v, metrics=metrics, seed=seed)
    return (rows, paths) if return_latents else rows


def pick(rows, metric, *, variant, layer=None, n=None):
    """The value of ``metric`` in the one row with this variant (and n, if given) at ``layer``.

    With ``layer=None`` returns the list of values over the layers, in layer order. Raises if no row, or more than
    one row per layer, matches (e.g. two sizes n of the same variant and n not given).
    """
    metric = check_choice(metric, "metric", METRIC_NAMES)
    chosen = [r for r in rows if r["variant"] == variant and (n is None or r["n"] == n)]
    layers = [r["layer"] for r in chosen]
    if not chosen:
        raise ValueError(f"no rows for variant {variant!r}" + (f" and n = {n}" if n is not None else ""))
    if len(set(layers)) != len(layers):
        raise ValueError(f"rows for variant {variant!r} hold several n ({sorted({r['n'] for r in chosen})}); pass n")
    by_layer = {r["layer"]: r[metric] for r in chosen}
    if layer is None:
        return [by_layer[t] for t in sorted(by_layer)]
    if layer not in by_layer:
        raise ValueError(f"no layer {layer} for variant {variant!r}; layers available: {sorted(by_layer)}")
    return by_layer[layer]


def sweep(X0, labels, kappas, etas, metrics=("knn_accuracy", "kmeans_nmi"), variant=PAPER.variant,
          beta=PAPER.beta, n_layers=PAPER.n_layers, seed: int = 0) -> dict:
    """Each metric after n_layers blocks for every (eta, kappa): {metric: array (len(etas), len(kappas))}.

    Also returns the layer-0 value of each metric under the key f"{metric}@0" (a float), the reference the heat map
    is read against.

    The blocks run in float64. With eta near 1/2 each block keeps only a fraction 1 - 2 eta of every point's own
    position, (1 - 2 eta)^8 = 1e-8 after 8 blocks at eta = 0.45: near float32's resolution, so float64 keeps
    rounding out of the comparison.
    """
    if len(kappas) == 0 or len(etas) == 0:
        raise ValueError("kappas and etas must each hold at least one value")
    metrics = tuple(check_choice(m, "metric", METRIC_NAMES) for m in
                    ((metrics,) if isinstance(metrics, str) else metrics))
    labels = check_class_labels(labels, X0.shape[0], "X0")
    seed = check_seed(seed)
    out = {m: np.empty((len(etas), len(kappas))) for m in metrics}
    X0 = torch.as_tensor(check_array(X0, "X0", ndim=2, min_rows=10), dtype=torch.float64)
    with single_threaded():
        X0np = X0.numpy()
        for m in metrics:
            out[f"{m}@0"] = metric_value(m, X0np, labels, seed=seed)
        for i, eta in enumerate(etas):
            for j, kappa in enumerate(kappas):
                X = unroll(X0, n_layers, kappa, eta, beta, variant)[-1].numpy()
                for m in metrics:
                    out[m][i, j] = metric_value(m, X, labels, seed=seed)
    return out
