"""The published objections to the paper's derivation, each turned into a number (notes section 4).

A public review of Ravuri & Lawrence (arXiv 2507.21040) raises five major objections and a few minor ones. Each
function here computes the number that settles one of them; the ``verdict_*`` functions turn those numbers into a
verdict with a threshold stated in the code (``THRESHOLDS``), so that the chapter's sentences follow from what it
computed. Notation as in the notes: latents X (n, d_q) with LayerNormed rows, A = sigma((kappa / d_q) X X^T - beta I
+ M) the row-softmax attention, L = I - A, C = X X^T + beta I.

- objection 1, d tr(X^T L X) / dX is (L + L^T) X, not 2 L X: :func:`gradient_asymmetry`,
  :func:`asymmetry_along_path`, :func:`asymmetry_by_kappa`;
- objection 2, the Wishart scale I - A is not symmetric positive definite: :func:`symmetric_part_min_eigenvalue`,
  :func:`laplacian_spectrum`, :func:`spectrum_along_path`;
- objection 3, stop-gradient drops terms of the gradient: :func:`full_gradient`, :func:`stop_gradient_check`,
  :func:`stop_gradient_sweep`;
- objection 4, 2 C^{-1} X ~ 2 X / (d_q + beta): :func:`regulariser_approximation`, :func:`regulariser_prediction`,
  :func:`regulariser_sweep`;
- objection 5, single training runs: :func:`training_evidence` (chapter 6's results and decision rule);
- minor, clustering shown only as a picture: :func:`mnist_paths`, :func:`layer_metrics`;
- derived, A - I is a plain-attention step with another step size: :func:`rescaled_step_gaps`;
- derived, the chain needs the diagonal initialisation: :func:`attention_logits`, :func:`logit_similarity`.

The steps themselves come from :mod:`probdr_lite.unrolled`, the clustering numbers from :mod:`probdr_lite.metrics`
and the training results and their decision rule from chapter 6 (:mod:`probdr_lite.figures.training`); this
module only measures.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import torch

from probdr_lite import unrolled as U
from probdr_lite._validation import check_array, check_choice, check_scalar, check_seed, check_tensor
from probdr_lite.figures._threads import single_threaded
from probdr_lite.graphs import laplacian

__all__ = [
    "THRESHOLDS",
    "METRICS",
    "Verdict",
    "cosine",
    "gradient_asymmetry",
    "asymmetry_along_path",
    "asymmetry_by_kappa",
    "symmetric_part_min_eigenvalue",
    "laplacian_spectrum",
    "spectrum_along_path",
    "full_gradient",
    "stop_gradient_check",
    "stop_gradient_sweep",
    "regulariser_approximation",
    "regulariser_prediction",
    "regulariser_sweep",
    "mnist_paths",
    "layer_metrics",
    "rescaled_step_gaps",
    "attention_logits",
    "logit_similarity",
    "HEADLINE",
    "training_evidence",
    "verdict_asymmetry",
    "verdict_wishart",
    "verdict_stop_gradient",
    "verdict_regulariser",
    "verdict_training",
    "verdict_clustering",
    "verdict_plain_attention",
    "CLASS_LEVEL",
    "verdict_reparameterisation",
    "verdict_initialisation",
]

#: The thresholds every verdict uses (the chapter prints them next to the verdicts).
THRESHOLDS = {
    # objection 1: two directions whose relative difference is below this count as the same direction
    "asymmetry": 0.10,
    # objection 2: an eigenvalue below -tol is negative; a residual below tol is zero (float64 rounding)
    "eigen_tol": 1e-10,
    # objection 3: stop-gradient is a fair stand-in for the gradient if the mean cosine is at least this
    # (and every seed's small step raises F)
    "cosine": 0.90,
    # objection 4: the approximation is acceptable where its relative error is below this
    "approx_error": 0.10,
    # objection 5: a paired difference counts as real if the paired t-test gives p below this ...
    "alpha": 0.05,
    # ... and it is judged at all only with at least this many seeds paired across the arms (chapter 6's protocol)
    "min_seeds": 5,
    # derived: an identity holds "to rounding" if the largest difference is below this (float64)
    "identity": 1e-10,
    # derived: logits and similarities count as unrelated if |correlation| is below this
    "correlation": 0.20,
}

#: The four clustering numbers of :func:`probdr_lite.metrics.cluster_metrics`, with plot labels.
METRICS = {
    "knn_accuracy": "k-NN accuracy (5-fold)",
    "silhouette": "silhouette of the classes",
    "between_within": "between / within-class spread",
    "kmeans_nmi": "NMI of k-means with the classes",
}

F64 = torch.float64


# ---------------------------------------------------------------------------------------------------------------------
# Small helpers


def _one_thread(func):
    """Run ``func`` on one thread (torch, BLAS, OpenMP); see :mod:`probdr_lite.figures._threads`.

    Every computation here works on (n, n) matrices with n of a few thousand at most, where extra threads cost
    more than they save; on a shared machine they made this chapter's computations four times slower.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with single_threaded():
            return func(*args, **kwargs)

    return wrapper


def cosine(a, b) -> float:
    """Cosine of the angle between two arrays seen as vectors: <a, b> / (||a|| ||b||) (Frobenius)."""
    a = torch.as_tensor(a).to(F64).reshape(-1)
    b = torch.as_tensor(b).to(F64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"b must have as many entries as a ({a.numel()}); got {b.numel()}")
    na, nb = float(a.norm()), float(b.norm())
    if na == 0 or nb == 0:
        raise ValueError("cosine is undefined for a zero array (a or b is all zeros)")
    return float(a @ b) / (na * nb)


def _latents(X, name="X") -> torch.Tensor:
    X = check_tensor(X, name, ndim=2, min_rows=2)
    if X.shape[1] < 2:
        raise ValueError(f"{name} must have d_q >= 2 columns; got shape {tuple(X.shape)}")
    return X.to(F64)


def _path(path, name="path") -> list:
    if isinstance(path, (torch.Tensor, np.ndarray)) or not hasattr(path, "__len__") or len(path) == 0:
        raise ValueError(f"{name} must be a non-empty list of (n, d_q) latents, e.g. from unrolled.unroll")
    return [_latents(X, f"{name}[{t}]") for t, X in enumerate(path)]


# ---------------------------------------------------------------------------------------------------------------------
# Objection 1: 2 L X versus (L + L^T) X


@_one_thread
def gradient_asymmetry(X, kappa, beta=1.0, mask=None) -> float:
    """Relative difference of the paper's data-term gradient from the true one (objection 1).

    For a fixed non-symmetric L = I - A, d tr(X^T L X) / dX = (L + L^T) X, while the paper writes 2 L X. Returns

        ||2 L X - (L + L^T) X|| / ||(L + L^T) X||  =  ||(A^T - A) X|| / ||(2 I - A - A^T) X||   (Frobenius),

    0 when A is symmetric (equal degrees). Computed in float64 with the dense attention matrix.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), n <= unrolled.MAX_DENSE_N
    kappa : float in (0, 1e4]
    beta : float in [0, 1e4], default 1
    mask : None, "causal" or an (n, n) mask (see :func:`probdr_lite.unrolled.attention_matrix`)

    Returns
    -------
    float >= 0
    """
    X = _latents(X)
    A = U.attention_matrix(X, kappa, beta, mask)  # (n, n), validates kappa, beta, mask
    return _asymmetry(X, A)


def _asymmetry(X, A) -> float:
    AX, AtX = A @ X, A.T @ X  # (n, d_q) each
    paper = 2.0 * (X - AX)  # 2 L X
    true = 2.0 * X - AX - AtX  # (L + L^T) X
    denom = float(true.norm())
    if denom == 0.0:
        raise ValueError("(L + L^T) X is zero for this X (every point attends only to itself); no direction")
    return float((paper - true).norm()) / denom


@_one_thread
def asymmetry_along_path(path, kappa, beta=1.0, mask=None) -> dict:
    """:func:`gradient_asymmetry` at every step of a path, with the spread of the attention's column sums.

    A row-softmax A has rows summing to 1; its columns sum to the in-degrees. A is symmetric only if they are all
    1 (the degrees D of the heat-kernel graph are equal), so their range says why the two directions differ.

    Returns
    -------
    dict of float arrays of length len(path): ``relative_difference``, ``column_sum_min``, ``column_sum_max``.
    """
    path = _path(path)
    rel, lo, hi = [], [], []
    for X in path:
        A = U.attention_matrix(X, kappa, beta, mask)  # (n, n)
        rel.append(_asymmetry(X, A))
        cs = A.sum(0)  # (n,) in-degrees
        lo.append(float(cs.min()))
        hi.append(float(cs.max()))
    return {"relative_difference": np.array(rel), "column_sum_min": np.array(lo), "column_sum_max": np.array(hi)}


@_one_thread
def asymmetry_by_kappa(X, kappas, beta=1.0, mask=None) -> np.ndarray:
    """:func:`gradient_asymmetry` of one X for each kappa in ``kappas`` (a float array of the same length)."""
    kappas = _kappas(kappas)
    return np.array([gradient_asymmetry(X, k, beta, mask) for k in kappas])


def _kappas(kappas) -> list:
    if isinstance(kappas, (str, bytes)) or not hasattr(kappas, "__len__") or len(kappas) == 0:
        raise ValueError(f"kappas must be a non-empty list of numbers in (0, 1e4]; got {kappas!r}")
    return [check_scalar(k, "kappas", low=0.0, high=U.KAPPA_MAX, low_inclusive=False) for k in kappas]


# ---------------------------------------------------------------------------------------------------------------------
# Objection 2: is the Wishart scale symmetric positive definite?


@_one_thread
def symmetric_part_min_eigenvalue(M) -> float:
    """Smallest eigenvalue of the symmetric part (M + M^T) / 2 of a square matrix.

    x^T M x = x^T ((M + M^T) / 2) x for every x, so M is positive definite as a quadratic form exactly when this is
    > 0. Computed in float64 by ``scipy.linalg.eigh`` (LAPACK ``syevd``) on one thread: at n of a few thousand,
    BLAS threads on a busy shared machine wait on each other and made it up to fifty times slower.

    Parameters
    ----------
    M : array or tensor of shape (n, n)

    Returns
    -------
    float
    """
    M = check_array(M, "M", ndim=2, square=True).astype(np.float64)
    S = 0.5 * (M + M.T)
    return float(sla.eigh(S, eigvals_only=True, driver="evd")[0])


@_one_thread
def laplacian_spectrum(X, kappa, beta=1.0, kind="random_walk", gamma=0.0) -> dict:
    """Is the Laplacian used as the Wishart scale symmetric positive definite? (objection 2)

    - ``kind="random_walk"``: the paper's L = I - A (+ gamma I). L 1 = 1 - A 1 = 0 because every row of A sums to 1,
      so L is singular; and L is not symmetric, so "positive definite" can only mean its symmetric part.
    - ``kind="symmetric"``: L_sym = I - D^{-1/2} E D^{-1/2} (+ gamma I), E = exp(S) the heat-kernel weights,
      D = diag(E 1), built by :func:`probdr_lite.graphs.laplacian` (kind "symmetric"). It is symmetric with
      eigenvalues in [0, 2] and null vector D^{1/2} 1, so L_sym + gamma I is positive definite for gamma > 0.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), n <= unrolled.MAX_DENSE_N
    kappa : float in (0, 1e4]
    beta : float in [0, 1e4], default 1
    kind : {"random_walk", "symmetric"}
    gamma : float in [0, 1e4], default 0
        The shift that makes the scale positive definite.

    Returns
    -------
    dict with ``min_eigenvalue`` (of the symmetric part) and ``null_residual`` = ||L v|| / ||v|| for the known null
    vector v of the unshifted Laplacian (1 for random_walk, D^{1/2} 1 for symmetric): 0 means singular, and the
    shift makes it gamma.
    """
    X = _latents(X)
    kind = check_choice(kind, "kind", ("random_walk", "symmetric"))
    gamma = check_scalar(gamma, "gamma", low=0.0, high=1e4)
    n, d_q = X.shape
    if kind == "random_walk":
        A = U.attention_matrix(X, kappa, beta).numpy()  # (n, n)
        L = np.eye(n) - A
        v = np.ones(n)
    else:
        U.attention_matrix(X[:2], kappa, beta)  # validates kappa and beta with the module's messages
        S = (kappa / d_q) * (X @ X.T).numpy() - beta * np.eye(n)  # (n, n) symmetric logits
        W = np.exp(S - S.max())  # E up to a common factor, which L_sym does not see
        L = laplacian(W, "symmetric")
        v = np.sqrt(W.sum(1))  # D^{1/2} 1 (same common factor)
    L = L + gamma * np.eye(n)
    return {
        "min_eigenvalue": symmetric_part_min_eigenvalue(L),
        "null_residual": float(np.linalg.norm(L @ v) / np.linalg.norm(v)),
    }


@_one_thread
def spectrum_along_path(path, kappa, beta=1.0, kind="random_walk", gamma=0.0) -> dict:
    """:func:`laplacian_spectrum` at every step of a path: arrays ``min_eigenvalue`` and ``null_residual``."""
    path = _path(path)
    rows = [laplacian_spectrum(X, kappa, beta, kind, gamma) for X in path]
    return {key: np.array([r[key] for r in rows]) for key in ("min_eigenvalue", "null_residual")}


# ---------------------------------------------------------------------------------------------------------------------
# Objection 3: stop-gradient versus the full gradient


@_one_thread
def full_gradient(X, kappa, beta=1.0, mask=None) -> torch.Tensor:
    """grad_X F(X) by autograd, F(X) = log det(X X^T + beta I) - tr(X^T L(X) X) with L(X) = I - A(X).

    Autograd differentiates through the softmax, so the terms the paper's stop-gradient drops are kept
    (:func:`probdr_lite.unrolled.full_objective` is F). Float64; returns a tensor of X's shape.
    """
    X = _latents(X).detach().clone().requires_grad_(True)
    F = U.full_objective(X, kappa, beta, mask)
    (g,) = torch.autograd.grad(F, X)
    return g


@_one_thread
def stop_gradient_check(X, kappa, beta=1.0, step=1e-4, eta=0.4) -> dict:
    """How well the stop-gradient direction stands in for the full gradient of F at X (objection 3).

    The stop-gradient direction is the "exact" direction of :func:`probdr_lite.unrolled.update_direction`,
    g_sg = 2 C^{-1} X - (L + L^T) X with L held fixed: the gradient the paper's argument would give if its algebra
    were right. The paper's own direction is the "paper" variant, 2 (A - I) X + 2 X / (d_q + beta).

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), n <= unrolled.MAX_DENSE_N
    kappa : float in (0, 1e4]
    beta : float in (0, 1e4], default 1
    step : float in (0, 1], default 1e-4
        The small step, relative to ||X||: X + step ||X|| g_sg / ||g_sg||.
    eta : float in (0, 10], default 0.4
        Step size of the one real block step Pi(X + eta D_paper).

    Returns
    -------
    dict with ``cosine_stop_gradient`` (cos(g_sg, grad F)), ``cosine_paper`` (cos(D_paper, grad F)),
    ``delta_F_small`` (F after the small step along g_sg minus F(X); > 0 means the step climbs F) and
    ``delta_F_block`` (F after one "paper" block step minus F(X)).
    """
    X = _latents(X)
    beta = check_scalar(beta, "beta", low=0.0, high=U.BETA_MAX, low_inclusive=False)
    step = check_scalar(step, "step", low=0.0, high=1.0, low_inclusive=False)
    g_full = full_gradient(X, kappa, beta)
    g_sg = U.update_direction(X, kappa, beta, "exact")
    d_paper = U.update_direction(X, kappa, beta, "paper")
    with torch.no_grad():
        F0 = float(U.full_objective(X, kappa, beta))
        X_small = X + step * float(X.norm()) * g_sg / g_sg.norm()
        X_block = U.block_step(X, kappa, eta, beta, "paper")
        return {
            "cosine_stop_gradient": cosine(g_sg, g_full),
            "cosine_paper": cosine(d_paper, g_full),
            "delta_F_small": float(U.full_objective(X_small, kappa, beta)) - F0,
            "delta_F_block": float(U.full_objective(X_block, kappa, beta)) - F0,
        }


@_one_thread
def stop_gradient_sweep(images, kappas=(1.0, 3.0, 10.0, 30.0), seeds=range(5), n=500, d_q=128, beta=1.0,
                        step=1e-4, eta=0.4) -> dict:
    """:func:`stop_gradient_check` for every kappa and seed on MNIST latents.

    Seed s draws n images (without replacement, ``numpy.random.default_rng(s)``) and embeds them with
    :func:`probdr_lite.unrolled.embed` (projection seed s), so seeds differ in both the images and the projection.

    Parameters
    ----------
    images : array of shape (N, d), N >= n
    kappas : sequence of floats in (0, 1e4]
    seeds : sequence of non-negative ints
    n : int in [2, unrolled.MAX_DENSE_N]
    d_q : int >= 2
    beta, step, eta : as in :func:`stop_gradient_check`

    Returns
    -------
    dict with ``kappas``, ``seeds`` and, for each key of :func:`stop_gradient_check`, an array of shape
    (len(kappas), len(seeds)).
    """
    images = check_array(images, "images", ndim=2, min_rows=2)
    kappas = _kappas(kappas)
    seeds = _seeds(seeds)
    n = check_scalar(n, "n", low=2, high=min(images.shape[0], U.MAX_DENSE_N), integer=True)
    d_q = check_scalar(d_q, "d_q", low=2, high=65536, integer=True)
    keys = ("cosine_stop_gradient", "cosine_paper", "delta_F_small", "delta_F_block")
    out = {k: np.zeros((len(kappas), len(seeds))) for k in keys}
    for j, s in enumerate(seeds):
        idx = np.random.default_rng(s).choice(images.shape[0], n, replace=False)
        X = U.embed(torch.from_numpy(np.ascontiguousarray(images[idx])).to(F64), d_q=d_q, seed=s)
        for i, k in enumerate(kappas):
            r = stop_gradient_check(X, k, beta, step, eta)
            for key in keys:
                out[key][i, j] = r[key]
    return {"kappas": np.array(kappas), "seeds": np.array(seeds), **out}


def _seeds(seeds) -> list:
    seeds = list(seeds) if hasattr(seeds, "__iter__") and not isinstance(seeds, (str, bytes)) else None
    if not seeds:
        raise ValueError("seeds must be a non-empty list of non-negative integers")
    return [check_seed(s, "seeds") for s in seeds]


# ---------------------------------------------------------------------------------------------------------------------
# Objection 4: 2 C^{-1} X ~ 2 X / (d_q + beta)


@_one_thread
def regulariser_approximation(X, beta=1.0) -> dict:
    """How close the paper's 2 X / (d_q + beta) is to the regulariser gradient 2 (X X^T + beta I)^{-1} X.

    The exact term is :func:`probdr_lite.unrolled.regulariser_gradient`, which uses the push-through identity
    (X X^T + beta I)^{-1} X = X (X^T X + beta I)^{-1} when n > d_q.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q)
    beta : float in (0, 1e4], default 1

    Returns
    -------
    dict with ``cosine`` (of the two as vectors), ``relative_error`` = ||approx - exact|| / ||exact|| and
    ``norm_ratio`` = ||exact|| / ||approx||.
    """
    X = _latents(X)
    beta = check_scalar(beta, "beta", low=0.0, high=U.BETA_MAX, low_inclusive=False)
    exact = U.regulariser_gradient(X, beta)
    approx = 2.0 * X / (X.shape[1] + beta)
    return {
        "cosine": cosine(approx, exact),
        "relative_error": float((approx - exact).norm() / exact.norm()),
        "norm_ratio": float(exact.norm() / approx.norm()),
    }


def regulariser_prediction(n, d_q, beta=1.0) -> float:
    """Rough relative error of the approximation for n random LayerNormed rows (two asymptotes, not a fit).

    LayerNormed rows lie in the (d_q - 1)-dimensional subspace orthogonal to 1, with squared norm d_q.

    - n << d_q: random rows are nearly orthogonal, X X^T = d_q (I + E) with off-diagonal E_ij ~ N(0, 1/(d_q - 1)).
      To first order C^{-1} X = X / (d_q + beta) - d_q E X / (d_q + beta)^2, and row i of E X has squared norm about
      (n - 1) d_q / (d_q - 1), so the relative error is about d_q / (d_q + beta) * sqrt((n - 1) / (d_q - 1)).
    - n >> d_q: X^T X is close to (n d_q / (d_q - 1)) P (P the projection onto that subspace), so
      C^{-1} X = X (X^T X + beta I)^{-1} is close to X / (n d_q / (d_q - 1) + beta): the right direction, a size
      smaller by (d_q + beta) / (n d_q / (d_q - 1) + beta), so the relative error is
      (n d_q / (d_q - 1) + beta) / (d_q + beta) - 1.

    Returns the first for n <= d_q / 4, the second for n >= 4 d_q, and NaN in between (where neither holds).
    """
    n = check_scalar(n, "n", low=1, integer=True)
    d_q = check_scalar(d_q, "d_q", low=2, integer=True)
    beta = check_scalar(beta, "beta", low=0.0, high=U.BETA_MAX)
    if 4 * n <= d_q:
        return d_q / (d_q + beta) * math.sqrt((n - 1) / (d_q - 1))
    if n >= 4 * d_q:
        return (n * d_q / (d_q - 1) + beta) / (d_q + beta) - 1.0
    return float("nan")


@_one_thread
def regulariser_sweep(ns=(8, 32, 128, 512, 2048), d_q=128, beta=1.0, seeds=range(3)) -> dict:
    """:func:`regulariser_approximation` on random LayerNormed latents for each n and seed.

    Seed s draws X = Pi(G), G with iid N(0, 1) entries from ``torch.Generator().manual_seed(s)``, in float64.

    Returns
    -------
    dict with ``ns``, ``seeds``, arrays ``cosine``, ``relative_error``, ``norm_ratio`` of shape (len(ns), len(seeds))
    and ``prediction`` (:func:`regulariser_prediction` for each n).
    """
    if isinstance(ns, (str, bytes)) or not hasattr(ns, "__len__") or len(ns) == 0:
        raise ValueError(f"ns must be a non-empty list of integers >= 2; got {ns!r}")
    ns = [check_scalar(v, "ns", low=2, high=100_000, integer=True) for v in ns]
    d_q = check_scalar(d_q, "d_q", low=2, high=65536, integer=True)
    seeds = _seeds(seeds)
    keys = ("cosine", "relative_error", "norm_ratio")
    out = {k: np.zeros((len(ns), len(seeds))) for k in keys}
    for i, n in enumerate(ns):
        for j, s in enumerate(seeds):
            G = torch.randn(n, d_q, generator=torch.Generator().manual_seed(s), dtype=F64)
            r = regulariser_approximation(U.layer_norm(G), beta)
            for k in keys:
                out[k][i, j] = r[k]
    pred = np.array([regulariser_prediction(n, d_q, beta) for n in ns])
    return {"ns": np.array(ns), "seeds": np.array(seeds), **out, "prediction": pred}


# ---------------------------------------------------------------------------------------------------------------------
# The MNIST runs, and the minor objection: numbers instead of a picture


@_one_thread
def mnist_paths(Y, variants=("attention", "diffusion", "paper", "exact", "symmetric"), n_steps=8, kappa=30.0,
                eta=0.4, beta=1.0, d_q=128, seed=0, mask=None) -> dict:
    """The notes' MNIST experiment for several variants from one embedding: {variant: [X_0, ..., X_n_steps]}.

    X_0 = :func:`probdr_lite.unrolled.embed` (Y, d_q, seed) in float64, then ``n_steps`` shared-weight steps of
    :func:`probdr_lite.unrolled.unroll` per variant (kappa = 30, eta = 0.4, beta = 1 by default, as in the notes).
    """
    Y = check_tensor(Y, "Y", ndim=2, min_rows=2).to(F64)
    if isinstance(variants, str) or not hasattr(variants, "__len__") or len(variants) == 0:
        raise ValueError(f"variants must be a non-empty list of names from {U.VARIANTS}; got {variants!r}")
    variants = [check_choice(v, "variants", U.VARIANTS) for v in variants]
    X0 = U.embed(Y, d_q=d_q, seed=seed)
    return {v: U.unroll(X0, n_steps, kappa, eta, beta, v, mask=mask) for v in variants}


@_one_thread
def layer_metrics(paths: dict, labels, layers=None, seed=0) -> dict:
    """:func:`probdr_lite.metrics.cluster_metrics` of each variant's latents at the chosen layers.

    Parameters
    ----------
    paths : dict {variant: list of (n, d_q) latents}, e.g. from :func:`mnist_paths`
    labels : array of shape (n,)
    layers : sequence of ints, optional
        Layer indices into every path (default: all). A layer whose latents equal an already scored one (layer 0,
        shared by every variant) is scored once.
    seed : int, default 0

    Returns
    -------
    dict with ``layers`` (array) and, per variant, a dict {metric: array over layers} (keys of ``METRICS``).
    """
    from probdr_lite.metrics import cluster_metrics

    if not isinstance(paths, dict) or not paths:
        raise ValueError("paths must be a non-empty dict {variant: list of latents}")
    lengths = {len(p) for p in paths.values()}
    if len(lengths) != 1:
        raise ValueError(f"paths must all have the same number of layers; got lengths {sorted(lengths)}")
    n_layers = lengths.pop()
    layers = list(range(n_layers)) if layers is None else list(layers)
    if not layers:
        raise ValueError("layers must name at least one layer")
    layers = [check_scalar(t, "layers", low=0, high=n_layers - 1, integer=True) for t in layers]
    seed = check_seed(seed)
    cache = []  # (latents, metrics) already scored
    out = {"layers": np.array(layers)}
    for variant, path in paths.items():
        rows = []
        for t in layers:
            X = _latents(path[t], f"paths[{variant!r}][{t}]")
            hit = next((m for Z, m in cache if Z.shape == X.shape and torch.equal(Z, X)), None)
            if hit is None:
                hit = cluster_metrics(X.numpy(), labels, seed=seed)
                cache.append((X, hit))
            rows.append(hit)
        out[variant] = {m: np.array([r[m] for r in rows]) for m in METRICS}
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Derived points: A - I is a rescaled step; the chain needs diagonal initialisation


@_one_thread
def rescaled_step_gaps(X0, kappa=30.0, eta=0.4, beta=1.0, n_steps=8) -> dict:
    """Two identities that hold because LayerNorm Pi forgets a positive factor: Pi(c Z) = Pi(Z) for c > 0.

    - A - I is plain attention with another step. X + 2 eta (A - I) X = (1 - 2 eta) (X + 2 eta' A X) with
      eta' = eta / (1 - 2 eta), so "diffusion" at eta equals "attention" at eta' (needs eta < 1/2). In the notes'
      form, Pi(X - h L X) = Pi(X + h / (1 - h) A X) with h = 2 eta.
    - The approximated regulariser is only a smaller step. X + 2 eta (A - I) X + 2 eta X / (d_q + beta)
      = (1 + c) (X + 2 eta'' (A - I) X) with c = 2 eta / (d_q + beta), eta'' = eta / (1 + c), so "paper" at eta
      equals "diffusion" at eta''.

    Both are checked by unrolling each pair of variants ``n_steps`` steps in float64 from the same X0.

    Returns
    -------
    dict with ``attention_gap`` and ``paper_gap`` (largest absolute difference over all steps and entries),
    ``eta_attention`` = eta' and ``eta_diffusion`` = eta''.
    """
    X0 = _latents(X0, "X0")
    eta = check_scalar(eta, "eta", low=0.0, high=0.5, low_inclusive=False, high_inclusive=False)
    d_q = X0.shape[1]
    eta_att = eta / (1.0 - 2.0 * eta)
    eta_dif = eta / (1.0 + 2.0 * eta / (d_q + beta))

    def gap(run1, run2):
        return max(float((a - b).abs().max()) for a, b in zip(run1, run2))

    diffusion = U.unroll(X0, n_steps, kappa, eta, beta, "diffusion")
    attention = U.unroll(X0, n_steps, kappa, eta_att, beta, "attention")
    paper = U.unroll(X0, n_steps, kappa, eta, beta, "paper")
    diffusion2 = U.unroll(X0, n_steps, kappa, eta_dif, beta, "diffusion")
    return {"attention_gap": gap(diffusion, attention), "paper_gap": gap(paper, diffusion2),
            "eta_attention": eta_att, "eta_diffusion": eta_dif}


@_one_thread
def attention_logits(X, init="diagonal", kappa=30.0, std=0.02, seed=0) -> torch.Tensor:
    """Pre-softmax logits q_i . k_j / sqrt(d_q) of a single attention head at one of two initialisations.

    The query and key maps are the nn.Linear layers of :class:`probdr_lite.unrolled.DiagonalAttention`:

    - ``"diagonal"``: the paper's setting, W_Q = W_K = a I with a^2 = kappa / sqrt(d_q), so the logits are
      kappa x_i . x_j / d_q = kappa cos(x_i, x_j) for LayerNormed rows (notes 3.5);
    - ``"standard"``: the usual GPT-2 initialisation, every weight iid N(0, std^2) (seeded). Each logit is then a
      random bilinear form with standard deviation about std^2 d_q, unrelated to x_i . x_j.

    Returns
    -------
    torch.Tensor of shape (n, n), float64.
    """
    X = _latents(X)
    init = check_choice(init, "init", ("diagonal", "standard"))
    kappa = check_scalar(kappa, "kappa", low=0.0, high=U.KAPPA_MAX, low_inclusive=False)
    std = check_scalar(std, "std", low=0.0, high=10.0, low_inclusive=False)
    seed = check_seed(seed)
    d_q = X.shape[1]
    attn = U.DiagonalAttention(U.DiagonalConfig(d_q=d_q, kappa=kappa)).to(F64)
    if init == "standard":
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for layer in (attn.q_proj, attn.k_proj):
                layer.weight.copy_(torch.randn(d_q, d_q, generator=gen, dtype=F64) * std)
    with torch.no_grad():
        q, k = attn.q_proj(X), attn.k_proj(X)  # (n, d_q) each
        return q @ k.T / math.sqrt(d_q)  # (n, n)


@_one_thread
def logit_similarity(X, init="diagonal", kappa=30.0, std=0.02, seed=0) -> dict:
    """Does the attention score follow token similarity? Pearson correlation of the logits with cos(x_i, x_j).

    Over all pairs i != j of :func:`attention_logits` and the cosine similarities of the rows of X.

    Returns
    -------
    dict with ``correlation``, ``logit_sd`` (standard deviation of the off-diagonal logits) and
    ``max_weight`` (mean over rows of the largest softmax weight; 1 / n means attention is uniform).
    """
    X = _latents(X)
    if X.shape[0] < 3:
        raise ValueError(f"X must have at least 3 rows for a correlation over pairs; got {X.shape[0]}")
    S = attention_logits(X, init, kappa, std, seed)
    Xn = X / X.norm(dim=1, keepdim=True)
    cos = Xn @ Xn.T
    off = ~torch.eye(X.shape[0], dtype=torch.bool)
    s, c = S[off].numpy(), cos[off].numpy()
    return {
        "correlation": float(np.corrcoef(s, c)[0, 1]),
        "logit_sd": float(s.std()),
        "max_weight": float(torch.softmax(S, dim=1).max(1).values.mean()),
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 5: chapter 6's multi-seed training results

#: The number each task is judged on, as in chapter 6.
HEADLINE = {"charlm": "final_val_loss", "vit": "final_val_acc"}


def training_evidence(directory=None) -> dict:
    """Chapter 6's committed multi-seed results, summarised and judged by chapter 6's own rule (objection 5).

    For each task the rows are read with :func:`probdr_lite.figures.training.load_task_results` (the files
    ``charlm_cpu.json`` and ``vit_mnist.json`` in ``probdr_lite/results``, or ``directory``), summarised by
    :func:`probdr_lite.experiments.summarise` (mean +- sd per arm, paired t-test and sign test against plain
    attention) and judged by :func:`probdr_lite.figures.training.verdict` for the A - I arm ("diffusion") on the
    headline number ``HEADLINE[task]``. Using chapter 6's rule keeps the two chapters from disagreeing.

    Returns
    -------
    dict {task: None while its results are not committed, else {"rows": list, "summary": dict,
    "verdict": probdr_lite.figures.training.Verdict or None if the results hold no paired A - I arm}}.
    """
    from probdr_lite.experiments import summarise
    from probdr_lite.figures.training import load_task_results, verdict

    out = {}
    for task, quantity in HEADLINE.items():
        rows = load_task_results(task, directory)
        if rows is None:
            out[task] = None
            continue
        summary = summarise(rows)
        paired = any(p["variant"] == "diffusion" and p["quantity"] == quantity for p in summary["paired"])
        out[task] = {"rows": rows, "summary": summary,
                     "verdict": verdict(summary, task, "diffusion", quantity, alpha=THRESHOLDS["alpha"]) if paired
                     else None}
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Verdicts: numbers in, a word and a sentence out


@dataclass(frozen=True)
class Verdict:
    """One row of the chapter's summary table.

    ``verdict`` is about the objection: "holds" (the numbers back it), "fails" (they do not), or "depends on ..."
    when they back it in one regime and not in another; derived points get "confirmed" or "not confirmed".
    ``because`` says why, from the numbers; ``would_change`` says what would turn the verdict around.
    """

    key: str
    objection: str
    test: str
    number: str
    verdict: str
    because: str
    would_change: str

    def sentence(self) -> str:
        return f"**Verdict: {self.verdict}.** {self.because} {self.would_change}"


def _pct(x) -> str:
    return f"{100 * x:.0f} %"


def verdict_asymmetry(mnist, causal, random_by_kappa, kappas, threshold=None) -> Verdict:
    """Objection 1 from the relative differences along the MNIST path, the causal path and random latents."""
    t = THRESHOLDS["asymmetry"] if threshold is None else threshold
    mnist, causal, rnd = (np.asarray(v, dtype=float) for v in (mnist, causal, random_by_kappa))
    big_mnist, big_causal, big_rnd = mnist.max() > t, causal.max() > t, rnd.max() > t
    if big_mnist and big_causal and not big_rnd:
        word = "holds on MNIST; fails on random latents"
    elif big_mnist and big_causal:
        word = "holds"
    elif not (big_mnist or big_causal or big_rnd):
        word = "fails"
    else:
        word = "depends on the data"
    because = (
        f"Along the MNIST steps 2 L X and (L + Lᵀ) X differ by {_pct(mnist.min())} to {_pct(mnist.max())}, and by "
        f"{_pct(causal.min())} to {_pct(causal.max())} under a causal mask, against a threshold of {_pct(t)} for "
        f"'the same direction'. For random latents (κ from {min(kappas):g} to {max(kappas):g}) the largest "
        f"difference is only {rnd.max():.1e}: their attention has nearly equal column sums, so A is nearly symmetric."
    )
    change = ("The objection would fail only if A were (nearly) symmetric. For softmax attention without a mask that "
              "means (nearly) equal degrees, so that every column of A sums to 1 like every row; the symmetric "
              "normalisation D^{-1/2} E D^{-1/2} is symmetric by construction, and a causal mask rules it out.")
    return Verdict("1", "2 L X is not the gradient of tr(Xᵀ L X) when A is not symmetric",
                   "relative difference ||2 L X - (L + Lᵀ) X|| / ||(L + Lᵀ) X|| per step",
                   f"{_pct(mnist.max())} (MNIST), {_pct(causal.max())} (causal), {rnd.max():.0e} (random)",
                   word, because, change)


def verdict_wishart(min_eig_rw, null_rw, min_eig_sym, gamma, tol=None) -> Verdict:
    """Objection 2 from the smallest eigenvalues of sym(I - A) and of L_sym + gamma I along a path."""
    tol = THRESHOLDS["eigen_tol"] if tol is None else tol
    lo = np.asarray(min_eig_rw, dtype=float)
    null = np.asarray(null_rw, dtype=float)
    sym = np.asarray(min_eig_sym, dtype=float)
    negative = int((lo < -tol).sum())
    singular = int((null < tol).sum())
    valid_sym = bool((sym > tol).all())
    word = "holds" if (negative or singular) else "fails"
    because = (
        f"The symmetric part of I - A has a negative eigenvalue at {negative} of {lo.size} steps (smallest "
        f"{lo.min():.3f}), and (I - A) 1 = 0 to {null.max():.0e} at {singular} of {null.size} steps, so the "
        f"scale is singular everywhere and indefinite where an eigenvalue is negative."
    )
    change = (f"With L_sym + γ I (γ = {gamma:g}) the smallest eigenvalue is at least {sym.min():.4f} at every step, "
              f"{'so that scale is a valid Wishart parameter' if valid_sym else 'so even that scale is not valid'}. "
              "The objection is about the paper's choice of I - A; it would not apply to a symmetric, shifted "
              "Laplacian like this one.")
    return Verdict("2", "W(L / ν, ν) needs a symmetric positive definite scale; I - A is neither",
                   "smallest eigenvalue of (I - A + (I - A)ᵀ) / 2 and ||(I - A) 1|| per step",
                   f"λ_min = {lo.min():.3f}; ||(I - A) 1|| ≤ {null.max():.0e}; with L_sym + γ I: {sym.min():.4f}",
                   word, because, change)


def verdict_stop_gradient(kappas, cos_sg, delta_small, threshold=None) -> Verdict:
    """Objection 3 from the cosine of the stop-gradient direction with grad F and the sign of the change in F.

    kappas (k,), cos_sg and delta_small of shape (k, seeds). A kappa passes if the mean cosine is at least the
    threshold and the small step raised F for every seed.
    """
    t = THRESHOLDS["cosine"] if threshold is None else threshold
    kappas = np.asarray(kappas, dtype=float)
    cos_sg, delta_small = np.atleast_2d(cos_sg), np.atleast_2d(delta_small)
    if cos_sg.shape != (kappas.size, cos_sg.shape[1]) or delta_small.shape != cos_sg.shape:
        raise ValueError("cos_sg and delta_small must have shape (len(kappas), n_seeds)")
    mean = cos_sg.mean(1)
    ok = (mean >= t) & (delta_small > 0).all(1)
    if ok.all():
        word = "fails"
    elif not ok.any():
        word = "holds"
    else:
        word = "depends on κ"
    parts = [f"κ = {k:g}: {m:.2f} ± {s:.2f}" for k, m, s in zip(kappas, mean, cos_sg.std(1, ddof=1))]
    rises = [int((delta_small[i] > 0).sum()) for i in range(kappas.size)]
    because = (f"Cosine between the stop-gradient direction and the full gradient (mean ± sd over "
               f"{cos_sg.shape[1]} seeds): {'; '.join(parts)}. A small step along it raised F for "
               f"{', '.join(f'{r}/{cos_sg.shape[1]}' for r in rises)} seeds at these κ. The threshold is a mean "
               f"cosine of {t:g} with F rising for every seed.")
    good, bad = kappas[ok], kappas[~ok]
    if word == "depends on κ":
        change = (f"Stop-gradient passes at κ = {', '.join(f'{k:g}' for k in good)} and fails at κ = "
                  f"{', '.join(f'{k:g}' for k in bad)}; the paper's κ = 30 "
                  f"{'passes' if 30.0 in good else 'fails' if 30.0 in bad else 'was not tested'}. A wider heat "
                  "kernel (smaller κ) makes A depend less on X, which is what turns the verdict.")
    else:
        change = "Only a different κ (the sharpness of the attention) could turn it around."
    return Verdict("3", "stop-gradient through A(X) drops terms of the true gradient",
                   "cosine(stop-gradient direction, autograd ∇F) and sign of ΔF, over κ and seeds",
                   ", ".join(f"{m:.2f} (κ={k:g})" for k, m in zip(kappas, mean)), word, because, change)


def verdict_regulariser(ns, rel_err, d_q, mnist_rel_err, mnist_cos, mnist_n, beta=1.0, threshold=None) -> Verdict:
    """Objection 4 from the relative error over n (random latents, mean over seeds) and on MNIST latents."""
    t = THRESHOLDS["approx_error"] if threshold is None else threshold
    ns = np.asarray(ns)
    err = np.asarray(rel_err, dtype=float)
    err = err.mean(1) if err.ndim == 2 else err
    good = ns[err < t]
    if good.size == ns.size and mnist_rel_err < t:
        word = "fails"
    elif good.size == 0 and mnist_rel_err >= t:
        word = "holds"
    else:
        word = "depends on n / d_q"
    because = (f"For random LayerNormed latents (d_q = {d_q}) the relative error is "
               + ", ".join(f"{e:.2f} (n = {n})" for n, e in zip(ns, err))
               + (f"; below the {t:g} threshold only for n in {list(map(int, good))}" if good.size else
                  f"; none of these n gets below the {t:g} threshold")
               + f". On {mnist_n} MNIST latents it is {mnist_rel_err:.2f} (cosine {mnist_cos:.2f}).")
    # the small-n asymptote of regulariser_prediction, solved for the n at which it reaches the threshold
    n_ok = 1 + (t * (d_q + beta) / d_q) ** 2 * (d_q - 1)
    change = ("It is accurate only when the n rows are nearly orthogonal with squared norm d_q. The error grows "
              f"like sqrt(n / d_q), so staying below {t:g} needs n ≤ {n_ok:.1f} at d_q = {d_q} (d_q of at least "
              f"about {1 / t ** 2:.0f} (n - 1) in general); for n above d_q the size is off by about n / d_q, and "
              "correlated rows such as MNIST digits spoil the direction as well.")
    return Verdict("4", "2 (X Xᵀ + β I)⁻¹ X ≈ 2 X / (d_q + β) is not justified",
                   "cosine and relative error of the approximation over n, and on MNIST latents",
                   f"error {err.min():.2f}-{err.max():.1f} (random), {mnist_rel_err:.2f} (MNIST)", word, because,
                   change)


def verdict_training(evidence: dict) -> Verdict:
    """Objection 5 from :func:`training_evidence`: do the multi-seed runs confirm the paper's single runs?

    The objection 'fails' for a task if chapter 6's rule says A - I **helps** there (the single runs pointed the
    right way after all), and 'holds' if the rule finds no detectable difference or finds that A - I hurts.
    """
    if not isinstance(evidence, dict) or not evidence:
        raise ValueError("evidence must be the dict returned by training_evidence")
    objection = "single runs, no seeds or error bars"
    test = f"≥ {THRESHOLDS['min_seeds']} seeds per arm, paired by seed, paired t-test vs A"
    min_seeds = THRESHOLDS["min_seeds"]
    judged = {t: e["verdict"] for t, e in evidence.items()
              if e is not None and e["verdict"] is not None and e["verdict"].n >= min_seeds}
    missing = [t for t in evidence if t not in judged]
    if not judged:
        partial = {t: (e["verdict"].n if e["verdict"] is not None else 0)
                   for t, e in evidence.items() if e is not None}
        because = ("Chapter 6's multi-seed results (probdr_lite/results) are not committed yet, so this chapter has "
                   "no numbers to judge the training claims by." if not partial else
                   "The results in probdr_lite/results so far hold too few seeds with both arms ("
                   + ", ".join(f"{t}: {n}" for t, n in partial.items())
                   + f" paired seeds, against the {min_seeds} of the protocol), so there is nothing to test yet.")
        return Verdict("5", objection, test, "too few paired seeds committed yet", "not yet tested", because,
                       "The verdict will follow from chapter 6's paired tests once its results files are complete.")
    helps = {t: v.outcome == "helps" for t, v in judged.items()}
    word = "fails" if all(helps.values()) else "holds" if not any(helps.values()) else "depends on the task"
    if missing:
        word += f" (too few seeds yet for {', '.join(missing)})"
    because = " ".join(str(v) + "." for v in judged.values())
    change = ("Here 'fails' would mean the multi-seed runs confirm the paper's single runs. With five seeds a "
              "difference smaller than the seed-to-seed spread of the paired differences cannot be seen; more "
              "seeds, longer training or larger models could change the verdict.")
    number = "; ".join(f"{t}: {v.outcome} ({v.mean_diff:+.4f}, p = {v.t_pvalue:.2g})" for t, v in judged.items())
    return Verdict("5", objection, test, number, word, because, change)


#: The two numbers that measure clustering *by class* (the claim of the MNIST figure); the other two are local.
CLASS_LEVEL = ("between_within", "kmeans_nmi")


def verdict_clustering(metrics: dict, variant="paper") -> Verdict:
    """The minor objection from :func:`layer_metrics`: do the numbers back 'the block clusters MNIST'?

    'fails' if all four numbers rise from the first to the last scored layer (the picture told the truth), 'holds'
    if none rises, 'depends on the metric' otherwise.
    """
    if not isinstance(metrics, dict) or "layers" not in metrics:
        raise ValueError("metrics must be the dict returned by layer_metrics")
    if variant not in metrics or variant == "layers":
        raise ValueError(f"variant {variant!r} is not in metrics (has {[k for k in metrics if k != 'layers']})")
    layers = metrics["layers"]
    m = metrics[variant]
    up = [k for k in METRICS if m[k][-1] > m[k][0]]
    down = [k for k in METRICS if m[k][-1] <= m[k][0]]
    word = "fails" if not down else "holds" if not up else "depends on the metric"
    first, last = int(layers[0]), int(layers[-1])
    change_str = "; ".join(f"{METRICS[k]} {m[k][0]:.3f} → {m[k][-1]:.3f}" for k in METRICS)
    because = (f"From layer {first} to layer {last} of the '{variant}' update: {change_str}. "
               + (f"Rising: {', '.join(METRICS[k] for k in up)}" if up else "None of the numbers rises")
               + (f"; not rising: {', '.join(METRICS[k] for k in down)}." if down else "."))
    change = ("'Clusters' is true of class centroids pulled apart relative to the spread within classes, and "
              "false of local neighbourhoods when k-NN accuracy falls: a picture of two coordinates cannot show "
              "which of the two is happening.")
    return Verdict("minor", "the clustering claim rests on a picture", "four clustering numbers per layer",
                   f"k-NN {m['knn_accuracy'][0]:.2f} → {m['knn_accuracy'][-1]:.2f}, between/within "
                   f"{m['between_within'][0]:.2f} → {m['between_within'][-1]:.2f}", word, because, change)


def verdict_plain_attention(metrics: dict, variant="paper", baseline="attention") -> Verdict:
    """Derived: does plain attention cluster MNIST too, i.e. raise the class-level numbers ``CLASS_LEVEL``?"""
    for v in (variant, baseline):
        if v not in metrics:
            raise ValueError(f"variant {v!r} is not in metrics")
    a, b = metrics[variant], metrics[baseline]
    rises = [k for k in CLASS_LEVEL if b[k][-1] > b[k][0]]
    word = "confirmed" if len(rises) == len(CLASS_LEVEL) else "not confirmed"
    because = ("From the first to the last layer, plain attention takes "
               + "; ".join(f"{METRICS[k]} from {b[k][0]:.3f} to {b[k][-1]:.3f} (the '{variant}' update: "
                           f"{a[k][-1]:.3f})" for k in CLASS_LEVEL)
               + f", and ends with k-NN accuracy {b['knn_accuracy'][-1]:.3f} against {a['knn_accuracy'][-1]:.3f}.")
    change = ("A picture of clusters therefore cannot tell the Laplacian reading from plain attention; it would "
              "take a number on which the two differ, such as trained performance (objection 5).")
    return Verdict("derived", "plain attention also clusters MNIST", "the same numbers for A instead of A - I",
                   f"between/within {b['between_within'][-1]:.2f} (A) vs {a['between_within'][-1]:.2f} (A - I)",
                   word, because, change)


def verdict_reparameterisation(gaps: dict, tol=None) -> Verdict:
    """Derived: A - I as a rescaled plain-attention step (from :func:`rescaled_step_gaps`)."""
    tol = THRESHOLDS["identity"] if tol is None else tol
    ok = gaps["attention_gap"] < tol and gaps["paper_gap"] < tol
    because = (f"Over the steps, 'diffusion' at η and 'attention' at η' = {gaps['eta_attention']:.4g} differ by at "
               f"most {gaps['attention_gap']:.1e}; 'paper' at η and 'diffusion' at η'' = {gaps['eta_diffusion']:.4g} "
               f"by {gaps['paper_gap']:.1e} (float64, threshold {tol:.0e}).")
    change = ("This holds at the diagonal initialisation with isotropic value/output weights; trained weights "
              "W_V W_O break it, since the residual becomes X (I - W_V W_O) + A X W_V W_O.")
    return Verdict("derived", "under LayerNorm, A - I is plain attention with a rescaled step",
                   "largest |difference| of the two unrolled runs",
                   f"{max(gaps['attention_gap'], gaps['paper_gap']):.0e}",
                   "confirmed" if ok else "not confirmed", because, change)


def verdict_initialisation(standard: dict, diagonal: dict, threshold=None) -> Verdict:
    """Derived: the chain needs the diagonal initialisation (from two :func:`logit_similarity` results)."""
    t = THRESHOLDS["correlation"] if threshold is None else threshold
    ok = abs(standard["correlation"]) < t and diagonal["correlation"] > 1 - t
    because = (f"Correlation of the attention logits with cos(x_i, x_j): {standard['correlation']:+.3f} at the "
               f"standard N(0, 0.02²) weights (logit sd {standard['logit_sd']:.3f}, largest weight per row "
               f"{standard['max_weight']:.4f}, nearly uniform) and {diagonal['correlation']:.3f} at the diagonal "
               f"initialisation (largest weight {diagonal['max_weight']:.2f}).")
    change = ("Only weights with W_Q W_Kᵀ close to a multiple of I make attention a similarity graph; "
              "training could produce such weights, but nothing at a standard initialisation does.")
    return Verdict("derived", "the chain needs diagonal query/key weights",
                   "correlation(logits, token cosine) at two initialisations",
                   f"{standard['correlation']:+.2f} (standard) vs {diagonal['correlation']:.2f} (diagonal)",
                   "confirmed" if ok else "not confirmed", because, change)
