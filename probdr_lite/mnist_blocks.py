"""The MNIST chapter's experiment: untrained blocks at the diagonal initialisation on MNIST, measured per layer.

The paper's figure (notes, settings below section 3) embeds flattened MNIST images, X_0 = Pi(Y W_E) with d_q = 128,
runs 8 blocks with kappa = 30 and eta = 0.4, and plots the first two latent coordinates before and after, coloured by
class. The paper leaves beta, the mask M, the number of images, W_E and weight sharing open; :data:`PAPER` fixes them
(beta = 1, M = 0, all 10,000 test images, W_E ~ N(0, 1/784) with seed 0, one block shared by all layers).

- :func:`mnist_latents`      X_0 for the test images (all, or a class-balanced subset);
- :func:`run_blocks`         the path X_0, ..., X_8 of one shared block;
- :func:`variant_metrics`    the four clustering numbers of :func:`probdr_lite.metrics.layer_metrics` (settings
  :data:`probdr_lite.metrics.METRICS`) per variant and layer, as tidy rows; :func:`pick` reads them back;
- :func:`kmeans_nmi_spread`  how much k-means' NMI moves with its seed alone (the noise of that number);
- :func:`sweep`              the numbers after 8 blocks over a grid of kappa and eta.

Tables, figures and the live panel are in :mod:`probdr_lite.presentation.figures.mnist`. Every function that runs blocks on a
few thousand points or fewer does so on one thread (see :mod:`probdr_lite._threads`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from probdr_lite._threads import single_threaded
from probdr_lite._validation import check_array, check_choice, check_class_labels, check_scalar, check_seed
from probdr_lite.metrics import METRIC_NAMES, METRICS, kmeans_nmi, layer_metrics, metric_value
from probdr_lite.unrolled import CHAPTER_VARIANTS, check_block_variants, embed, unroll

__all__ = [
    "PAPER",
    "MnistSettings",
    "SMALL_N",
    "mnist_latents",
    "run_blocks",
    "variant_metrics",
    "kmeans_nmi_spread",
    "pick",
    "sweep",
]

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
