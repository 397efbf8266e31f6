"""The MNIST chapter's measurements and the facts its computed sentences state.

The experiment: untrained blocks at the diagonal initialisation on MNIST, measured per layer. The paper's figure
(notes, settings below section 3) embeds flattened MNIST images, X_0 = Pi(Y W_E) with d_q = 128, runs 8 blocks with
kappa = 30 and eta = 0.4, and plots the first two latent coordinates before and after, coloured by class. The paper
leaves beta, the mask M, the number of images, W_E and weight sharing open; :data:`PAPER` fixes them (beta = 1,
M = 0, all 10,000 test images, W_E ~ N(0, 1/784) with seed 0, one block shared by all layers).

- :func:`mnist_latents`      X_0 for the test images (all, or a class-balanced subset);
- :func:`run_blocks`         the path X_0, ..., X_8 of one shared block;
- :func:`nmi_summary`        the NMI of k-means over the k-means seeds (:func:`probdr_lite.metrics.kmeans_nmi_over_seeds`):
  its mean, spread and range, the one way the chapter reports an NMI (tables, figures, the sweep);
- :func:`layer_rows`         the four clustering numbers of :func:`probdr_lite.metrics.layer_metrics` (settings
  :data:`probdr_lite.metrics.METRICS`) per layer, the NMI of k-means by :func:`nmi_summary`;
- :func:`variant_metrics`    those rows per variant and layer; :func:`pick` reads them back;
- :func:`nmi_facts`          the NMI per layer read by the chapter's rule (better or worse than layer 0 only where
  the ranges over the k-means seeds do not overlap);
- :func:`rule_p_value`       the significance level of that rule, read as a permutation test of the runs;
- :func:`knn_over_seeds`     k-NN accuracy with several seeds of its folds;
- :func:`self_attention_share`  the weight an image gives itself in A, on average;
- :func:`sweep`              the numbers after 8 blocks over a grid of kappa and eta;
- :func:`kappa_ends`         what the blocks do at the two ends of kappa's range (:data:`SLIDERS`).

:data:`SLIDERS` holds the ranges of kappa, eta and beta of the chapter's two interactive figures, defined once.

Tables, figures and the live panel are in :mod:`probdr_lite.presentation.figures.mnist`. Every function that runs
blocks on a few thousand points or fewer does so on one thread (see :mod:`probdr_lite._threads`).

The chapter's sentences are Markdown in ``book/src/mnist_at_init.py``; the functions here return the numbers and
booleans its hidden cells glue and claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import torch

from probdr_lite._threads import single_threaded
from probdr_lite._validation import check_array, check_choice, check_class_labels, check_scalar, check_seed
from probdr_lite.metrics import (METRIC_NAMES, METRICS, kmeans_nmi, kmeans_nmi_over_seeds, knn_accuracy,
                                 layer_metrics, metric_value, rms_spread)
from probdr_lite.unrolled import CHAPTER_VARIANTS, check_block_variants, embed, unroll
from probdr_lite.unrolled import CHAPTER_VARIANTS as VARIANTS

__all__ = ["NMI_KEYS", "SLIDERS", "nmi_summary", "layer_rows", "nmi_facts", "rule_p_value", "knn_over_seeds",
           "self_attention_share", "kappa_ends", "PAPER", "MnistSettings", "SMALL_N", "mnist_latents", "run_blocks",
           "variant_metrics", "pick", "sweep"]

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


def nmi_summary(X, labels, settings=METRICS) -> dict:
    """The NMI of k-means over the k-means seeds 0, ..., ``settings.nmi_seeds`` - 1
    (:func:`~probdr_lite.metrics.kmeans_nmi_over_seeds`): ``kmeans_nmi`` (the mean), ``kmeans_nmi_sd`` (the standard
    deviation, ``ddof=1``), ``kmeans_nmi_min`` and ``kmeans_nmi_max``. Every NMI the chapter prints comes from here,
    with its spread (the tables, the figures' error bars, the sweep's heat map)."""
    v = kmeans_nmi_over_seeds(np.asarray(X), labels, settings)
    return {"kmeans_nmi": float(v.mean()), "kmeans_nmi_sd": float(v.std(ddof=1)), "kmeans_nmi_min": float(v.min()),
            "kmeans_nmi_max": float(v.max())}


def layer_rows(path, labels, variant=None, settings=METRICS) -> list:
    """:func:`~probdr_lite.metrics.layer_metrics` of every layer, with the NMI of k-means over the k-means seeds.

    ``kmeans_nmi`` and the keys of :data:`NMI_KEYS` are :func:`nmi_summary`'s (the mean, standard deviation, smallest
    and largest value over the seeds). The other numbers are those of ``layer_metrics`` with seed 0.
    """
    rows = layer_metrics(path, labels, settings, variant=variant,
                         metrics=tuple(m for m in METRIC_NAMES if m != "kmeans_nmi"))
    for r, X in zip(rows, path):
        r.update(nmi_summary(X, labels, settings))
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


def rule_p_value(n_runs: int = METRICS.nmi_seeds) -> float:
    """The two-sided p-value of :func:`nmi_facts`' rule, read as a permutation test: ``2 / comb(2 n_runs, n_runs)``.

    If the layer made no difference, the 2 ``n_runs`` runs of two layers (``n_runs`` each) would be exchangeable,
    so each of the ``comb(2 n_runs, n_runs)`` ways to say which runs belong to which layer would be equally likely.
    Only two of them put one layer's runs wholly above the other's (ranges that do not overlap, either way): with
    5 runs a layer, p = 2/252.
    """
    n_runs = check_scalar(n_runs, "n_runs", low=1, integer=True)
    return 2 / comb(2 * n_runs, n_runs)


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


def kappa_ends(X0, labels, kappas=None, n_layers=None, eta=None, beta=None) -> dict:
    """What ``n_layers`` blocks do at each of ``kappas`` (default: the two ends of ``SLIDERS["kappa"]``), the other
    settings :data:`PAPER`'s: the facts behind the chapter's sentences about the ends of kappa's range.

    For each kappa: ``spread`` (the first two latent coordinates' root mean squared distance to their mean,
    :func:`~probdr_lite.metrics.rms_spread`, after the last block over before the first: below 1 the picture
    shrinks), ``ratio`` (the between/within-class ratio after the last block over before the first, in all the
    latent dimensions) and ``moved`` (the mean distance an image moved, over the latents' spread before the first
    block, all dimensions).
    """
    kappas = (SLIDERS["kappa"]["low"], SLIDERS["kappa"]["high"]) if kappas is None else tuple(kappas)
    n_layers = PAPER.n_layers if n_layers is None else n_layers
    eta = PAPER.eta if eta is None else eta
    beta = PAPER.beta if beta is None else beta
    out = {}
    for kappa in kappas:
        path = run_blocks(X0, n_layers, kappa, eta, beta, PAPER.variant)
        first, last = (np.asarray(X, dtype=np.float64) for X in (path[0], path[-1]))
        out[float(kappa)] = {
            "spread": float(rms_spread(last[:, :2]) / rms_spread(first[:, :2])),
            "ratio": float(metric_value("between_within", last, labels) / metric_value("between_within", first, labels)),
            "moved": float(np.linalg.norm(last - first, axis=1).mean() / rms_spread(first)),
        }
    return out


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

#: The ranges of kappa, eta and beta in the chapter's two interactive figures, defined once. The kernel panel's
#: sliders (:func:`probdr_lite.presentation.figures.mnist.mnist_panel`) run from ``low`` to ``high`` (``log`` or in
#: steps of ``step``); the kernel-free live figure (:func:`probdr_lite.presentation.live.builders.mnist_live`)
#: precomputes the ``grid`` of each, which lies in that range. kappa's range and grid go from a kernel wider than the
#: data (0.3) to one narrower than the distance to the nearest neighbour (3000), the same in both figures; eta's grid
#: reaches the paper's 0.4 (below 1/2) and beta's from none to ten times the paper's choice, on fewer points than the
#: sliders, since every point of the grid is eight blocks run at build time. :data:`PAPER`'s value of each is a point
#: of its grid (the figures' default).
SLIDERS = {
    "kappa": {"low": 0.3, "high": 3000.0, "log": True, "step": None,
              "grid": (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 3000.0)},
    "eta": {"low": 0.02, "high": 0.98, "log": False, "step": 0.02, "grid": (0.1, 0.2, 0.4)},
    "beta": {"low": 0.0, "high": 10.0, "log": False, "step": 0.25, "grid": (0.0, 1.0, 10.0)},
}
for _name, _s in SLIDERS.items():
    if not (_s["low"] <= min(_s["grid"]) and max(_s["grid"]) <= _s["high"] and getattr(PAPER, _name) in _s["grid"]):
        raise ValueError(f"SLIDERS[{_name!r}]: the grid must lie in [low, high] and hold PAPER's value")


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


def _sweep_values(m, X, labels, seed) -> dict:
    """One cell of the sweep: ``{m: value}``, and for the NMI of k-means :func:`nmi_summary` (its mean over the
    k-means seeds with its spread, as in :func:`layer_rows`)."""
    if m == "kmeans_nmi":
        return nmi_summary(X, labels)
    return {m: metric_value(m, X, labels, seed=seed)}


def sweep(X0, labels, kappas, etas, metrics=("knn_accuracy", "kmeans_nmi"), variant=PAPER.variant,
          beta=PAPER.beta, n_layers=PAPER.n_layers, seed: int = 0) -> dict:
    """Each metric after n_layers blocks for every (eta, kappa): {metric: array (len(etas), len(kappas))}; the NMI
    of k-means is :func:`nmi_summary`'s mean over the k-means seeds of :data:`~probdr_lite.metrics.METRICS`, with
    its standard deviation under ``"kmeans_nmi_sd"`` (and its range under ``"kmeans_nmi_min"``, ``"kmeans_nmi_max"``).

    Also returns the layer-0 value of each under the key f"{key}@0" (a float), the reference the heat map is read
    against.

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
    keys = [k for m in metrics for k in ((m, *NMI_KEYS) if m == "kmeans_nmi" else (m,))]
    out = {k: np.empty((len(etas), len(kappas))) for k in keys}
    X0 = torch.as_tensor(check_array(X0, "X0", ndim=2, min_rows=10), dtype=torch.float64)
    with single_threaded():
        X0np = X0.numpy()
        for m in metrics:
            out.update({f"{k}@0": v for k, v in _sweep_values(m, X0np, labels, seed).items()})
        for i, eta in enumerate(etas):
            for j, kappa in enumerate(kappas):
                X = unroll(X0, n_layers, kappa, eta, beta, variant)[-1].numpy()
                for m in metrics:
                    for k, v in _sweep_values(m, X, labels, seed).items():
                        out[k][i, j] = v
    return out
