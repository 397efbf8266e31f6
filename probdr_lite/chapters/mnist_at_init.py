"""The MNIST chapter's measurements and the facts its computed sentences state.

The experiment: untrained blocks at the diagonal initialisation on MNIST, measured per layer. The paper's figure
(notes, settings below section 3) embeds flattened MNIST images, X_0 = Pi(Y W_E) with d_q = 128, runs 8 blocks with
kappa = 30 and eta = 0.4, and plots the first two latent coordinates before and after, coloured by class. The paper
leaves beta, the mask M, the number of images, W_E and weight sharing open; :data:`PAPER` fixes them (beta = 1,
M = 0, all 10,000 test images, W_E ~ N(0, 1/784) with seed 0, one block shared by all layers).

- :func:`mnist_latents`      X_0 for the test images (all, or a class-balanced subset);
- :func:`run_blocks`         the path X_0, ..., X_8 of one shared block;
- :func:`layer_rows`         the four clustering numbers of :func:`probdr_lite.metrics.layer_metrics` (settings
  :data:`probdr_lite.metrics.METRICS`) per layer, the NMI of k-means as its mean, spread and range over the k-means
  seeds (:func:`probdr_lite.metrics.kmeans_nmi_over_seeds`);
- :func:`variant_metrics`    those rows per variant and layer; :func:`pick` reads them back;
- :func:`nmi_facts`          the NMI per layer read by the chapter's rule (better or worse than layer 0 only where
  the ranges over the k-means seeds do not overlap);
- :func:`knn_over_seeds`     k-NN accuracy with several seeds of its folds;
- :func:`self_attention_share`  the weight an image gives itself in A, on average;
- :func:`sweep`              the numbers after 8 blocks over a grid of kappa and eta.

Tables, figures and the live panel are in :mod:`probdr_lite.presentation.figures.mnist`. Every function that runs
blocks on a few thousand points or fewer does so on one thread (see :mod:`probdr_lite._threads`).

The chapter's sentences are Markdown in ``book/src/mnist_at_init.py``; the functions here return the numbers and
booleans its hidden cells glue and claim. :func:`live_facts` feeds the caption of the chapter's kernel-free live
figure (:func:`probdr_lite.presentation.live.builders.mnist_live`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from probdr_lite._threads import single_threaded
from probdr_lite._validation import check_array, check_choice, check_class_labels, check_scalar, check_seed
from probdr_lite.metrics import (METRIC_NAMES, METRICS, kmeans_nmi, kmeans_nmi_over_seeds, knn_accuracy,
                                 layer_metrics, metric_value, rms_spread)
from probdr_lite.unrolled import CHAPTER_VARIANTS, check_block_variants, embed, unroll
from probdr_lite.unrolled import CHAPTER_VARIANTS as VARIANTS

__all__ = ["WORDS", "NMI_KEYS", "layer_rows", "nmi_facts", "knn_over_seeds", "self_attention_share", "live_facts", "PAPER", "MnistSettings", "SMALL_N",
           "mnist_latents", "run_blocks", "variant_metrics", "pick", "sweep"]

#: The threshold of the live figure's caption (:func:`live_facts`).
WORDS = {
    # in the live figure, an image "does not move" if its mean distance moved is below this fraction of the spread
    "still": 0.01,
}

#: The extra keys :func:`layer_rows` adds to a row: the NMI of k-means summarised over the k-means seeds.
NMI_KEYS = ("kmeans_nmi_sd", "kmeans_nmi_min", "kmeans_nmi_max")


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


def layer_rows(path, labels, variant=None, settings=METRICS) -> list:
    """:func:`~probdr_lite.metrics.layer_metrics` of every layer, with the NMI of k-means over the k-means seeds.

    ``kmeans_nmi`` is the mean of :func:`~probdr_lite.metrics.kmeans_nmi_over_seeds` (seeds 0, ...,
    ``settings.nmi_seeds`` - 1), and each row also holds its standard deviation (``ddof=1``), its smallest and its
    largest value (:data:`NMI_KEYS`). The other numbers are those of ``layer_metrics`` with seed 0.
    """
    rows = layer_metrics(path, labels, settings, variant=variant,
                         metrics=tuple(m for m in METRIC_NAMES if m != "kmeans_nmi"))
    for r, X in zip(rows, path):
        v = kmeans_nmi_over_seeds(np.asarray(X), labels, settings)
        r.update({"kmeans_nmi": float(v.mean()), "kmeans_nmi_sd": float(v.std(ddof=1)),
                  "kmeans_nmi_min": float(v.min()), "kmeans_nmi_max": float(v.max())})
    return [{k: r[k] for k in ("variant", "n", "layer", *METRIC_NAMES, *NMI_KEYS)} for r in rows]


def nmi_facts(rows, variant="paper") -> dict:
    """The NMI of k-means per layer of one variant, read by the chapter's rule.

    The rule: layer t clusters the digits *better* than layer 0 when the smallest NMI over the k-means seeds at
    layer t is above the largest at layer 0 (the two ranges over seeds do not overlap), *worse* when its largest is
    below layer 0's smallest, and neither when the ranges overlap. Returns ``mean``, ``sd``, ``min``, ``max`` (lists
    over the layers), ``last`` (the last layer), ``best`` (the layer of the largest mean), ``gain_best`` and
    ``gain_last`` (mean at that layer minus mean at layer 0), ``better`` and ``worse`` (lists of booleans per layer,
    by the rule) and ``n_better`` (how many layers are better).
    """
    mean = [float(x) for x in _pick(rows, "kmeans_nmi", variant)]
    lo, hi = _pick(rows, "kmeans_nmi_min", variant), _pick(rows, "kmeans_nmi_max", variant)
    best, last = int(np.argmax(mean)), len(mean) - 1
    better = [bool(lo[t] > hi[0]) for t in range(len(mean))]
    worse = [bool(hi[t] < lo[0]) for t in range(len(mean))]
    return {"mean": mean, "sd": _pick(rows, "kmeans_nmi_sd", variant), "min": lo, "max": hi, "last": last,
            "best": best, "gain_best": mean[best] - mean[0], "gain_last": mean[last] - mean[0],
            "better": better, "worse": worse, "n_better": int(sum(better[1:]))}


def knn_over_seeds(X, labels, seeds=range(5), settings=METRICS) -> np.ndarray:
    """k-NN accuracy (``settings``) with each seed of the stratified folds: how much of a difference is the folds."""
    X = check_array(X, "X", ndim=2, min_rows=2)
    with single_threaded():
        return np.array([knn_accuracy(X, labels, n_neighbors=settings.n_neighbors, cv=settings.cv, seed=check_seed(s))
                         for s in seeds])


def self_attention_share(X, kappa=None, beta=None, block: int = 1000) -> float:
    """The mean over the images of A_ii, the weight an image gives itself in A = softmax(kappa/d_q X X^T - beta I).

    Computed in float64 over row blocks of ``block`` images, so that the (n, n) matrix is never held whole.
    ``kappa`` and ``beta`` default to :data:`PAPER`'s.
    """
    kappa = PAPER.kappa if kappa is None else check_scalar(kappa, "kappa", low=0.0, low_inclusive=False)
    beta = PAPER.beta if beta is None else check_scalar(beta, "beta", low=0.0)
    X = torch.as_tensor(check_array(X, "X", ndim=2, min_rows=2), dtype=torch.float64)
    n, d_q = X.shape
    total = 0.0
    for i in range(0, n, block):
        S = (kappa / d_q) * X[i:i + block] @ X.T
        idx = torch.arange(i, min(i + block, n))
        S[idx - i, idx] -= beta
        total += float(torch.softmax(S, dim=1)[idx - i, idx].sum())
    return total / n


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


def variant_metrics(X0, labels, variants=CHAPTER_VARIANTS, n_layers=PAPER.n_layers, kappa=PAPER.kappa,
                    eta=PAPER.eta, beta=PAPER.beta, return_latents=False):
    """Run every variant from the same X_0 and measure every layer: the rows of :func:`layer_rows`, concatenated.

    With ``return_latents=True`` also returns {variant: [X_0, ..., X_{n_layers}]}.
    """
    variants = check_block_variants(variants)
    rows, paths = [], {}
    for v in variants:
        paths[v] = run_blocks(X0, n_layers, kappa, eta, beta, v)
        rows += layer_rows(paths[v], labels, variant=v)
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


def _sweep_value(m, X, labels, seed):
    """One number of the sweep: the NMI of k-means as its mean over the k-means seeds (as in :func:`layer_rows`)."""
    if m == "kmeans_nmi":
        return float(kmeans_nmi_over_seeds(X, labels).mean())
    return metric_value(m, X, labels, seed=seed)


def sweep(X0, labels, kappas, etas, metrics=("knn_accuracy", "kmeans_nmi"), variant=PAPER.variant,
          beta=PAPER.beta, n_layers=PAPER.n_layers, seed: int = 0) -> dict:
    """Each metric after n_layers blocks for every (eta, kappa): {metric: array (len(etas), len(kappas))}; the NMI
    of k-means is its mean over the k-means seeds of :data:`~probdr_lite.metrics.METRICS`.

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
            out[f"{m}@0"] = _sweep_value(m, X0np, labels, seed)
        for i, eta in enumerate(etas):
            for j, kappa in enumerate(kappas):
                X = unroll(X0, n_layers, kappa, eta, beta, variant)[-1].numpy()
                for m in metrics:
                    out[m][i, j] = _sweep_value(m, X, labels, seed)
    return out
