"""The published objections to the paper's derivation, each turned into a number (the objections chapter).

A public review of Ravuri & Lawrence (arXiv 2507.21040) raises five major objections and a few minor ones. Each
function here computes the number that settles one of them, and the verdicts' facts below turn those numbers, with
the thresholds ``THRESHOLDS``, into the booleans the chapter's claims check. Notation as in the book:
latents X (n, d_q) with LayerNormed rows, A = sigma((kappa / d_q) X X^T - beta I + M) the row-softmax attention,
L = I - A, C = X X^T + beta I.

- objection 1, d tr(X^T L X) / dX is (L + L^T) X, not 2 L X: :func:`gradient_asymmetry`,
  :func:`asymmetry_along_path`, :func:`asymmetry_by_kappa`, measured in the full space and in the tangent space of
  the LayerNorm sphere (:func:`tangent_part`, the part of a step that LayerNorm keeps; see the
  transformer-block chapter);
- objection 2, the Wishart scale I - A is not symmetric positive definite: :func:`symmetric_part_min_eigenvalue`,
  :func:`laplacian_spectrum`, :func:`spectrum_along_path`;
- objection 3, stop-gradient drops terms of the gradient: :func:`full_gradient`, :func:`stop_gradient_check`,
  :func:`stop_gradient_sweep` (which also check the proposition of :mod:`probdr_lite.chapters.energies`: the
  stop-gradient direction is the full gradient of another objective, Phi);
- objection 4, 2 C^{-1} X ~ 2 X / (d_q + beta): :func:`regulariser_approximation`, :func:`regulariser_prediction`,
  :func:`regulariser_sweep`;
- objection 5, single training runs: :func:`training_runs` (the trained-transformers chapter's primary family and
  interaction test, read with that chapter's rule);
- minor, clustering shown only as a picture: :func:`mnist_paths`, :func:`metrics_by_variant`;
- identities the transformer-block chapter derives and the objections chapter reuses:
  :func:`rescaled_step_gaps`, :func:`attention_logits`, :func:`logit_similarity`.

The steps themselves come from :mod:`probdr_lite.unrolled` and the clustering numbers from
:mod:`probdr_lite.metrics`.

The verdicts: each ``*_facts`` function returns the numbers a verdict states and the booleans that make it true,
each decided by a threshold of :data:`THRESHOLDS` (printed by the chapter next to the verdicts). The verdict words
("holds", "fails", "depends on ...") are written by the chapter (``book/src/objections.py``) in Markdown, and a
claim cell beside each checks the booleans returned here. Nothing here exists to choose a word.

A range of values is stated by three facts, ``<name>_lo``, ``<name>_hi`` and ``<name>_one`` (the two ends print
alike at the digits the chapter prints, so "from a to b" would read one number twice). A metric is named by its
key in :data:`probdr_lite.metrics.METRIC_NAMES` and a change by its direction ("up", "down" or "flat"), read by the
MNIST chapter's rule (:func:`clustering_facts`); their words are the chapter's.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy.linalg as sla
import torch

from probdr_lite import unrolled as U
from probdr_lite._validation import (check_array, check_choice, check_latents, check_result, check_scalar, check_seed,
                                     check_tensor)
from probdr_lite._threads import single_threaded
from probdr_lite.chapters.energies import attention_graph, phi
from probdr_lite.diagonal_transformer import DiagonalAttention, DiagonalConfig
from probdr_lite.experiments.stats import HEADLINE, lower_is_better
from probdr_lite.graphs import laplacian
from probdr_lite.chapters.mnist_at_init import NMI_KEYS, layer_rows, nmi_facts
from probdr_lite.metrics import METRIC_NAMES, METRICS, MetricSettings
from probdr_lite.tangent import cosine, tangent_cosine, tangent_part

__all__ = ["THRESHOLDS", "METRIC_NAMES", "cosine", "tangent_part", "tangent_cosine", "gradient_asymmetry",
           "asymmetry_along_path", "asymmetry_by_kappa", "symmetric_part_min_eigenvalue", "laplacian_spectrum",
           "spectrum_along_path", "full_gradient", "stop_gradient_check", "stop_gradient_sweep",
           "regulariser_approximation", "regulariser_prediction", "regulariser_sweep",
           "mnist_paths", "metrics_by_variant", "rescaled_step_gaps", "attention_logits", "logit_similarity",
           "HIGHER_IS_BETTER", "training_runs", "asymmetry_facts", "wishart_facts",
           "stop_gradient_facts", "regulariser_facts", "single_runs_facts", "clustering_facts"]

#: The thresholds every verdict uses (the chapter prints them next to the verdicts).
THRESHOLDS = {
    # objection 1: two directions whose relative difference is below this count as the same direction
    "asymmetry": 0.10,
    # ... and in the tangent space of the LayerNorm sphere, two directions count as the same if their cosine is at
    # least this: the cosine of two equal-length directions whose relative difference is 10 % (1 - 0.1^2 / 2)
    "tangent_cosine": 0.995,
    # objection 2: an eigenvalue below -tol is negative; a residual below tol is zero (float64 rounding)
    "eigen_tol": 1e-10,
    # objection 3: stop-gradient is a fair stand-in for the gradient if the mean cosine is at least this
    # (and every seed's small step raises F)
    "cosine": 0.90,
    # objection 4: the approximation is acceptable where its relative error is below this
    "approx_error": 0.10,
    # derived: an identity holds "to rounding" if the largest difference is below this (float64)
    "identity": 1e-10,
}

F64 = torch.float64


# ---------------------------------------------------------------------------------------------------------------------
# Small helpers


def _one_thread(func):
    """Run ``func`` on one thread (torch, BLAS, OpenMP); see :mod:`probdr_lite._threads`.

    Every computation here works on (n, n) matrices with n of a few thousand at most, where extra threads cost
    more than they save; on a shared machine they made this chapter's computations four times slower.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with single_threaded():
            return func(*args, **kwargs)

    return wrapper


def _path(path, name="path") -> list:
    if isinstance(path, (torch.Tensor, np.ndarray)) or not hasattr(path, "__len__") or len(path) == 0:
        raise ValueError(f"{name} must be a non-empty list of (n, d_q) latents, e.g. from unrolled.unroll")
    return [check_latents(X, f"{name}[{t}]") for t, X in enumerate(path)]


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
    X = check_latents(X)
    A = U.attention_matrix(X, kappa, beta, mask)  # (n, n), validates kappa, beta, mask
    return _asymmetry(X, A)


def _asymmetry(X, A) -> float:
    return _relative_gap(*_two_directions(X, A))


def _relative_gap(paper, true) -> float:
    """||paper - true|| / ||true|| of the two directions of :func:`_two_directions`."""
    denom = float(true.norm())
    if denom == 0.0:
        raise ValueError("(L + L^T) X is zero for this X (every point attends only to itself); no direction")
    return float((paper - true).norm()) / denom


def _two_directions(X, A):
    """The paper's data-term direction 2 L X and the true one (L + L^T) X, L = I - A; (n, d_q) each."""
    AX, AtX = A @ X, A.T @ X  # (n, d_q) each
    return 2.0 * (X - AX), 2.0 * X - AX - AtX


@_one_thread
def asymmetry_along_path(path, kappa, beta=1.0, mask=None) -> dict:
    """Objection 1 at every step of a path, in the full space and in the tangent space of the LayerNorm sphere.

    The full-space measure is :func:`gradient_asymmetry`. The tangent measure compares what LayerNorm keeps of the
    two directions (:func:`tangent_part`, as in the transformer-block chapter): their cosine, and the relative
    difference ||T(2 L X) - T((L + L^T) X)|| / ||T((L + L^T) X)||. A row-softmax A has rows summing to 1; its
    columns sum to the in-degrees, and A is symmetric only if they are all 1, so their range says why the two
    directions differ.

    The same gap, read through the log-sum-exp energy of :mod:`probdr_lite.chapters.energies`: the gradient of
    (d_q / kappa) sum_i logsumexp_j S_ij is (A + A^T) X, so plain attention's step A X is half of it plus the
    antisymmetric remainder R = (A - A^T) X / 2, which no energy of that family produces. ``remainder_share`` is
    ||R|| / ||A X|| and ``tangent_remainder_share`` the same for the tangent parts. Since the tangent part of X is
    zero, T(2 L X) = -2 T(A X) and T((L + L^T) X) = -T((A + A^T) X): the tangent measures of objection 1 are
    measures of R.

    Returns
    -------
    dict of float arrays of length len(path): ``relative_difference`` (full space), ``cosine`` (full space),
    ``tangent_relative_difference``, ``tangent_cosine``, ``remainder_share``, ``tangent_remainder_share``,
    ``column_sum_min``, ``column_sum_max``.
    """
    path = _path(path)
    keys = ("relative_difference", "cosine", "tangent_relative_difference", "tangent_cosine", "remainder_share",
            "tangent_remainder_share", "column_sum_min", "column_sum_max")
    out = {k: [] for k in keys}
    for X in path:
        A = U.attention_matrix(X, kappa, beta, mask)  # (n, n)
        paper, true = _two_directions(X, A)
        out["relative_difference"].append(_relative_gap(paper, true))
        out["cosine"].append(cosine(paper, true))
        t_paper, t_true = tangent_part(paper, X), tangent_part(true, X)
        out["tangent_relative_difference"].append(float((t_paper - t_true).norm() / t_true.norm()))
        out["tangent_cosine"].append(cosine(t_paper, t_true))
        AX = X - 0.5 * paper  # paper = 2 (X - A X), true = 2 X - A X - A^T X: no product computed twice
        R = 0.5 * (true - paper)  # (n, d_q) the antisymmetric remainder (A X - A^T X) / 2
        out["remainder_share"].append(float(R.norm() / AX.norm()))
        out["tangent_remainder_share"].append(float(tangent_part(R, X).norm() / tangent_part(AX, X).norm()))
        cs = A.sum(0)  # (n,) in-degrees
        out["column_sum_min"].append(float(cs.min()))
        out["column_sum_max"].append(float(cs.max()))
    return {k: np.array(v) for k, v in out.items()}


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
    X = check_latents(X)
    kind = check_choice(kind, "kind", ("random_walk", "symmetric"))
    gamma = check_scalar(gamma, "gamma", low=0.0, high=1e4)
    n, d_q = X.shape
    if kind == "random_walk":
        A = U.attention_matrix(X, kappa, beta).numpy()  # (n, n)
        L = np.eye(n) - A
        v = np.ones(n)
    else:
        W = attention_graph(X, kappa, beta)  # E up to a common factor, which L_sym does not see
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
    X = check_latents(X).detach().clone().requires_grad_(True)
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
    ``delta_F_small`` (F after the small step along g_sg minus F(X); > 0 means the step climbs F),
    ``delta_F_block`` (F after one "paper" block step minus F(X)), and the proposition of
    :mod:`probdr_lite.chapters.energies` checked at X: ``phi_gap`` = ||grad Phi - g_sg|| / ||g_sg|| with grad Phi by
    autograd (0 up to rounding: g_sg is the full gradient of Phi) and ``delta_phi_small``, the change of Phi along
    the same small step.
    """
    X = check_latents(X)
    beta = check_scalar(beta, "beta", low=0.0, high=U.BETA_MAX, low_inclusive=False)
    step = check_scalar(step, "step", low=0.0, high=1.0, low_inclusive=False)
    g_full = full_gradient(X, kappa, beta)
    g_sg = U.update_direction(X, kappa, beta, "exact")
    d_paper = U.update_direction(X, kappa, beta, "paper")
    Xg = X.detach().clone().requires_grad_(True)
    (g_phi,) = torch.autograd.grad(phi(Xg, kappa, beta), Xg)
    with torch.no_grad():
        F0, phi0 = float(U.full_objective(X, kappa, beta)), float(phi(X, kappa, beta))
        X_small = X + step * float(X.norm()) * g_sg / g_sg.norm()
        X_block = U.block_step(X, kappa, eta, beta, "paper")
        return {
            "cosine_stop_gradient": cosine(g_sg, g_full),
            "cosine_paper": cosine(d_paper, g_full),
            "delta_F_small": float(U.full_objective(X_small, kappa, beta)) - F0,
            "delta_F_block": float(U.full_objective(X_block, kappa, beta)) - F0,
            "phi_gap": float((g_phi - g_sg).norm() / g_sg.norm()),
            "delta_phi_small": float(phi(X_small, kappa, beta)) - phi0,
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
    dict with ``kappas``, ``seeds``, the step ``eta`` the block took and, for each key of
    :func:`stop_gradient_check`, an array of shape (len(kappas), len(seeds)).
    """
    images = check_array(images, "images", ndim=2, min_rows=2)
    kappas = _kappas(kappas)
    seeds = _seeds(seeds)
    n = check_scalar(n, "n", low=2, high=min(images.shape[0], U.MAX_DENSE_N), integer=True)
    d_q = check_scalar(d_q, "d_q", low=2, high=65536, integer=True)
    keys = ("cosine_stop_gradient", "cosine_paper", "delta_F_small", "delta_F_block", "phi_gap", "delta_phi_small")
    out = {k: np.zeros((len(kappas), len(seeds))) for k in keys}
    for j, s in enumerate(seeds):
        idx = np.random.default_rng(s).choice(images.shape[0], n, replace=False)
        X = U.embed(torch.from_numpy(np.ascontiguousarray(images[idx])).to(F64), d_q=d_q, seed=s)
        for i, k in enumerate(kappas):
            r = stop_gradient_check(X, k, beta, step, eta)
            for key in keys:
                out[key][i, j] = r[key]
    return {"kappas": np.array(kappas), "seeds": np.array(seeds), "eta": float(eta), **out}


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
    X = check_latents(X)
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
        raise ValueError(f"variants must be a non-empty list of names from {U.BLOCK_VARIANTS}; got {variants!r}")
    variants = [check_choice(v, "variants", U.BLOCK_VARIANTS) for v in variants]
    X0 = U.embed(Y, d_q=d_q, seed=seed)
    return {v: U.unroll(X0, n_steps, kappa, eta, beta, v, mask=mask) for v in variants}


def metrics_by_variant(paths: dict, labels, layers=None, settings: MetricSettings = METRICS) -> dict:
    """The book's clustering numbers of each variant's latents at the chosen layers, arranged by variant.

    Every number comes from :func:`probdr_lite.chapters.mnist_at_init.layer_rows`, the function and the book-wide
    settings :data:`probdr_lite.metrics.METRICS` of the MNIST chapter's tables, so the two chapters print the same
    number for the same latents: the NMI of k-means is the mean over the k-means seeds, and ``kmeans_nmi_sd``,
    ``kmeans_nmi_min`` and ``kmeans_nmi_max`` its standard deviation and range
    (:data:`probdr_lite.chapters.mnist_at_init.NMI_KEYS`). This function only picks the layers and arranges the rows.

    Parameters
    ----------
    paths : dict {variant: list of (n, d_q) latents}, e.g. from :func:`mnist_paths`
    labels : array of shape (n,)
    layers : sequence of ints, optional
        Layer indices into every path (default: all). A layer whose latents equal an already scored one (layer 0,
        shared by every variant) is scored once.
    settings : probdr_lite.metrics.MetricSettings, default the book-wide METRICS

    Returns
    -------
    dict with ``layers`` (array) and, per variant, a dict {metric: array over layers} (keys of
    :data:`probdr_lite.metrics.METRIC_NAMES` and :data:`probdr_lite.chapters.mnist_at_init.NMI_KEYS`).
    """
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
    cache = []  # (latents, row) already scored
    out = {"layers": np.array(layers)}
    for variant, path in paths.items():
        chosen = [check_tensor(path[t], f"paths[{variant!r}][{t}]", ndim=2, min_rows=2) for t in layers]
        found = [next((r for Z, r in cache if Z.shape == X.shape and torch.equal(Z, X)), None) for X in chosen]
        new = [X for X, r in zip(chosen, found) if r is None]
        if new:
            scored = layer_rows([X.numpy() for X in new], labels, variant=variant, settings=settings)
            cache.extend(zip(new, scored))
            scored = iter(scored)
            found = [r if r is not None else next(scored) for r in found]
        out[variant] = {m: np.array([r[m] for r in found]) for m in (*METRIC_NAMES, *NMI_KEYS)}
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
    X0 = check_latents(X0, "X0")
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

    The query and key maps are the nn.Linear layers of :class:`probdr_lite.diagonal_transformer.DiagonalAttention`:

    - ``"diagonal"``: the paper's setting, W_Q = W_K = a I with a^2 = kappa / sqrt(d_q), so the logits are
      kappa x_i . x_j / d_q = kappa cos(x_i, x_j) for LayerNormed rows (notes 3.5);
    - ``"standard"``: the usual GPT-2 initialisation, every weight iid N(0, std^2) (seeded). Each logit is then a
      random bilinear form with standard deviation about std^2 d_q, unrelated to x_i . x_j.

    Returns
    -------
    torch.Tensor of shape (n, n), float64.
    """
    X = check_latents(X)
    init = check_choice(init, "init", ("diagonal", "standard"))
    kappa = check_scalar(kappa, "kappa", low=0.0, high=U.KAPPA_MAX, low_inclusive=False)
    std = check_scalar(std, "std", low=0.0, high=10.0, low_inclusive=False)
    seed = check_seed(seed)
    d_q = X.shape[1]
    attn = DiagonalAttention(DiagonalConfig(d_q=d_q, kappa=kappa)).to(F64)
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
    X = check_latents(X)
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
# Objection 5: is one training run per arm enough evidence?


#: Whether a larger value of a headline number (the number each training task is judged on, as in the
#: trained-transformers chapter) is better: the paper's direction is A - I better than attention.
HIGHER_IS_BETTER = {q: not lower_is_better(q) for q in HEADLINE.values()}

#: The kappa of the paper's runs, which the stop-gradient verdict names.
PAPER_KAPPA = 30.0


def _rounded(x: float, digits: int) -> str:
    """``x`` rounded to ``digits`` decimals as the chapter prints it, a rounded zero without its sign."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def _span(name, values, digits: int, scale: float = 1.0) -> dict:
    """``<name>_lo``, ``<name>_hi`` and ``<name>_one``: both ends, times ``scale`` (100 for a percentage), round
    alike to the ``digits`` decimals the chapter prints."""
    a = np.asarray(values, dtype=float)
    lo, hi = float(a.min()), float(a.max())
    one = _rounded(scale * lo, digits) == _rounded(scale * hi, digits)
    return {f"{name}_lo": lo, f"{name}_hi": hi, f"{name}_one": one}


def _degrees(cos):
    return np.degrees(np.arccos(np.clip(np.asarray(cos, dtype=float), -1.0, 1.0)))


_PATH_KEYS = ("relative_difference", "tangent_cosine", "cosine", "tangent_remainder_share")


def _path_dict(d, name):
    check_result(d, name, asymmetry_along_path, keys=_PATH_KEYS)
    return {k: np.asarray(d[k], dtype=float) for k in _PATH_KEYS}


# ---------------------------------------------------------------------------------------------------------------------
# Objection 1


def asymmetry_facts(mnist: dict, causal: dict, random_by_kappa, kappas, threshold=None,
                    tangent_threshold=None) -> dict:
    """Objection 1 from :func:`~probdr_lite.chapters.objections.asymmetry_along_path` on the MNIST path without (``m``) and
    with (``c``) the causal mask, and :func:`~probdr_lite.chapters.objections.asymmetry_by_kappa` on random latents.

    In the full space two directions count as the same when their relative difference is at most ``threshold``
    (``full``: some step is past it); in the tangent space of the LayerNorm sphere when the cosine of their tangent
    parts is at least ``tangent_threshold`` (``tangent``: some step is below it); the objection holds in a space
    where its measure is past its threshold. Ranges (``_lo``, ``_hi``, ``_one``): ``rel_m``,
    ``rel_c`` (relative differences, printed as percentages), ``deg_m``, ``deg_c`` (their angles, whole degrees),
    ``tan_m``, ``tan_c`` (tangent cosines, three decimals), ``tdeg_m``, ``tdeg_c`` (their angles), ``rem_m``,
    ``rem_c`` (the antisymmetric remainder's share of plain attention's step after LayerNorm). ``radial``: the
    largest tangent angle is below the largest full-space one. ``random_max`` is the largest difference on random
    latents over ``kappa_min`` to ``kappa_max``, and ``random_below`` says it is within the threshold.
    """
    t = THRESHOLDS["asymmetry"] if threshold is None else float(threshold)
    tc = THRESHOLDS["tangent_cosine"] if tangent_threshold is None else float(tangent_threshold)
    m, c = _path_dict(mnist, "mnist"), _path_dict(causal, "causal")
    rnd = np.asarray(random_by_kappa, dtype=float)
    kappas = np.asarray(kappas, dtype=float)
    if rnd.shape != kappas.shape or rnd.size == 0:
        raise ValueError("random_by_kappa must have one value per kappa")
    full = bool(max(m["relative_difference"].max(), c["relative_difference"].max()) > t)
    tangent = bool(min(m["tangent_cosine"].min(), c["tangent_cosine"].min()) < tc)
    full_angles = _degrees(np.concatenate([m["cosine"], c["cosine"]]))
    tangent_angles = _degrees(np.concatenate([m["tangent_cosine"], c["tangent_cosine"]]))
    return {
        "full": full, "tangent": tangent,
        "threshold": t, "tangent_threshold": tc,
        # printed as whole percentages, whole degrees and cosines with three decimals
        **_span("rel_m", m["relative_difference"], 0, 100), **_span("rel_c", c["relative_difference"], 0, 100),
        **_span("deg_m", _degrees(m["cosine"]), 0), **_span("deg_c", _degrees(c["cosine"]), 0),
        **_span("tan_m", m["tangent_cosine"], 3), **_span("tan_c", c["tangent_cosine"], 3),
        **_span("tdeg_m", _degrees(m["tangent_cosine"]), 0), **_span("tdeg_c", _degrees(c["tangent_cosine"]), 0),
        **_span("rem_m", m["tangent_remainder_share"], 0, 100),
        **_span("rem_c", c["tangent_remainder_share"], 0, 100),
        "radial": bool(tangent_angles.max() < full_angles.max()),
        "kappa_min": float(kappas.min()), "kappa_max": float(kappas.max()),
        "random_max": float(rnd.max()), "random_below": bool(rnd.max() <= t),
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 2


def wishart_facts(min_eig_rw, null_rw, min_eig_sym, gamma, tol=None) -> dict:
    """Objection 2 from the smallest eigenvalues of sym(I - A) and of L_sym + gamma I along a path.

    ``n_negative`` of the ``n_steps`` steps have an eigenvalue below ``-tol`` (``any_negative``, ``all_negative``),
    and at ``n_singular`` of the ``n_null`` steps ``||(I - A) 1||`` is below ``tol`` (``any_singular``,
    ``all_singular``); the objection ``holds`` if either happens. ``valid_sym``: every step's ``L_sym + gamma I``
    has its smallest eigenvalue (at least ``sym_min``) above ``tol``. ``min_rw`` and ``null_max`` are the smallest
    eigenvalue and the largest residual of the paper's scale.
    """
    tol = THRESHOLDS["eigen_tol"] if tol is None else float(tol)
    lo = np.asarray(min_eig_rw, dtype=float)
    null = np.asarray(null_rw, dtype=float)
    sym = np.asarray(min_eig_sym, dtype=float)
    if lo.size == 0 or null.size == 0 or sym.size == 0:
        raise ValueError("min_eig_rw, null_rw and min_eig_sym must each hold at least one step")
    negative = int((lo < -tol).sum())
    singular = int((null < tol).sum())
    return {
        "holds": bool(negative or singular),
        "n_steps": int(lo.size), "n_null": int(null.size), "n_negative": negative, "n_singular": singular,
        "any_negative": negative > 0, "all_negative": negative == lo.size,
        "any_singular": singular > 0, "all_singular": singular == null.size,
        "min_rw": float(lo.min()), "null_max": float(null.max()), "tol": tol,
        "gamma": float(gamma), "sym_min": float(sym.min()), "valid_sym": bool((sym > tol).all()),
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 3


def stop_gradient_facts(kappas, cos_sg, delta_small, phi_gap, threshold=None, identity=None) -> dict:
    """Objection 3 from the cosine of the stop-gradient direction with grad F_full, the sign of the change in
    F_full, and (``phi_gap``) the proposition of :mod:`probdr_lite.chapters.energies`, checked at the same latents.

    kappas (k,); cos_sg, delta_small and phi_gap of shape (k, seeds). As a stand-in for grad F_full a kappa passes
    if the mean cosine is at least the threshold and the small step raised F_full for every seed: ``all_pass``,
    ``none_pass`` or (some but not all) ``depends``, with the kappas that pass (``good``) and fail (``bad``) and
    whether the paper's kappa (``paper_kappa``) passes (``paper_passes``) or fails (``paper_fails``). ``exact_phi``: every
    ||grad Phi - g_sg|| / ||g_sg|| (largest ``gap_max``) is below the ``identity`` threshold, so the stop-gradient
    step is the exact gradient step of Phi and the objection turns into a choice of objective. ``per_kappa``: one
    dict per kappa with its ``kappa``, ``mean`` and ``sd`` cosine and the number of seeds whose step raised F_full
    (``rises``).
    """
    t = THRESHOLDS["cosine"] if threshold is None else float(threshold)
    ident = THRESHOLDS["identity"] if identity is None else float(identity)
    kappas = np.asarray(kappas, dtype=float)
    cos_sg, delta_small = np.atleast_2d(cos_sg), np.atleast_2d(delta_small)
    if cos_sg.shape != (kappas.size, cos_sg.shape[1]) or delta_small.shape != cos_sg.shape:
        raise ValueError("cos_sg and delta_small must have shape (len(kappas), n_seeds)")
    gap = np.atleast_2d(np.asarray(phi_gap, dtype=float))
    if gap.shape != cos_sg.shape:
        raise ValueError("phi_gap must have the shape of cos_sg, (len(kappas), n_seeds)")
    mean = cos_sg.mean(1)
    sd = cos_sg.std(1, ddof=1) if cos_sg.shape[1] > 1 else np.zeros(kappas.size)
    ok = (mean >= t) & (delta_small > 0).all(1)
    n_seeds = int(cos_sg.shape[1])
    good, bad = [float(k) for k in kappas[ok]], [float(k) for k in kappas[~ok]]
    return {
        "all_pass": bool(ok.all()), "none_pass": bool(not ok.any()), "depends": bool(ok.any() and not ok.all()),
        "exact_phi": bool((gap < ident).all()), "gap_max": float(gap.max()), "identity": ident,
        "threshold": t, "n_seeds": n_seeds,
        "per_kappa": [{"kappa": float(k), "mean": float(mu), "sd": float(s), "rises": int((d > 0).sum()),
                       "n_seeds": n_seeds} for k, mu, s, d in zip(kappas, mean, sd, delta_small)],
        "good": good, "bad": bad,
        "paper_kappa": PAPER_KAPPA, "paper_passes": PAPER_KAPPA in good, "paper_fails": PAPER_KAPPA in bad,
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 4


def regulariser_facts(ns, rel_err, d_q, mnist_rel_err, mnist_cos, mnist_n, beta=1.0, threshold=None) -> dict:
    """Objection 4 from the relative error over n (random latents, mean over seeds) and on MNIST latents.

    The objection ``fails`` if every n and the MNIST latents are below the threshold, ``holds`` if none is, and
    ``depends`` (on n / d_q) otherwise. ``per_n``: one dict per n with its ``n`` and ``error``; ``good`` and ``bad`` the n below
    and not below the threshold (``any_good``, ``both_sides``: some of each). ``n_ok`` is the n at which the
    small-n asymptote of :func:`~probdr_lite.chapters.objections.regulariser_prediction` reaches the threshold, and
    ``dq_per_n`` the d_q per (n - 1) that keeps it below in general.
    """
    t = THRESHOLDS["approx_error"] if threshold is None else float(threshold)
    ns = np.asarray(ns)
    err = np.asarray(rel_err, dtype=float)
    err = err.mean(1) if err.ndim == 2 else err
    if err.shape != ns.shape or ns.size == 0:
        raise ValueError("rel_err must have one value (or one row of seeds) per n")
    good, bad = [int(n) for n in ns[err < t]], [int(n) for n in ns[err >= t]]
    fails = not bad and mnist_rel_err < t
    holds = not good and mnist_rel_err >= t
    return {
        "holds": bool(holds), "fails": bool(fails), "depends": not (holds or fails), "d_q": int(d_q), "threshold": t,
        "per_n": [{"n": int(n), "error": float(e)} for n, e in zip(ns, err)],
        "good": good, "bad": bad, "any_good": bool(good), "both_sides": bool(good and bad),
        "error_min": float(err.min()), "error_max": float(err.max()),
        "mnist_n": int(mnist_n), "mnist_error": float(mnist_rel_err), "mnist_cosine": float(mnist_cos),
        # the small-n asymptote of regulariser_prediction, solved for the n at which it reaches the threshold
        "n_ok": 1 + (t * (d_q + beta) / d_q) ** 2 * (d_q - 1),
        "dq_per_n": 1 / t ** 2,
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 5


def training_runs(directory=None) -> dict:
    """Objection 5's evidence, read as the trained-transformers chapter reads it.

    Returns ``{"round": ..., "interaction": ...}``: the confirmatory round's table
    (:func:`probdr_lite.experiments.confirmatory.confirmatory_table`: A − I against attention per model and
    initialisation, paired by seed, declared before it ran), and the exploratory study's test of whether A − I's effect
    depends on the initialisation, per model and budget (:func:`~probdr_lite.experiments.families.initialisation_effect`
    on the recipe run under both initialisations, clustered by seed), as the chapter computes them.
    """
    from probdr_lite.experiments.confirmatory import confirmatory_table, load_rows
    from probdr_lite.experiments.families import initialisation_effect
    from probdr_lite.experiments.files import task_rows

    rows = {task: task_rows(task, directory) for task in HEADLINE}
    return {"round": confirmatory_table(load_rows(directory)),
            "interaction": [initialisation_effect(rows[task], cells="both", budget=budget, cov_type="cluster")
                            for task in HEADLINE for budget in ("early", "plateau")]}


def single_runs_facts(runs: dict) -> dict:
    """Objection 5, one question only: could one pair of training runs per arm have told whether A − I helps?

    From :func:`training_runs`: ``cells``, one dict per cell of the confirmatory round (``task``, ``init``, ``n``
    paired seeds, ``n_better`` / ``n_worse`` seeds, ``verdict``, ``mixed``: its seeds point both ways); ``n_cells``;
    ``n_mixed``; ``mixed_inits``, the initialisations of the mixed cells; ``one_way_inits``, the initialisations all of
    whose cells point one way; ``verdicts`` by (task, init); ``depends_on_init``: every interval of the exploratory
    test of the initialisation's effect excludes zero (``interaction_ci``, per model and budget). Numbers and booleans
    only; the chapter writes the words.
    """
    check_result(runs, "runs", training_runs, keys=("round", "interaction"))
    cells = [{"task": e["task"], "init": e["init"], "n": e["n"], "n_better": e["n_better"], "n_worse": e["n_worse"],
              "verdict": e["verdict"], "mixed": e["n_better"] > 0 and e["n_worse"] > 0} for e in runs["round"]]
    ci = {(e["task"], e["budget"]): tuple(e["ci"]) for e in runs["interaction"]}
    inits = sorted({c["init"] for c in cells})
    return {"cells": cells, "n_cells": len(cells), "n_mixed": sum(c["mixed"] for c in cells),
            "mixed_inits": sorted({c["init"] for c in cells if c["mixed"]}),
            "one_way_inits": [i for i in inits if not any(c["mixed"] for c in cells if c["init"] == i)],
            "verdicts": {(c["task"], c["init"]): c["verdict"] for c in cells}, "interaction_ci": ci,
            "depends_on_init": bool(ci) and all(lo > 0 or hi < 0 for lo, hi in ci.values())}


# ---------------------------------------------------------------------------------------------------------------------
# Minor objection: clustering shown only as a picture


def clustering_facts(metrics: dict, knn_first, knn_last, variant="paper") -> dict:
    """The minor objection from :func:`probdr_lite.chapters.objections.metrics_by_variant`: do the numbers back 'the block
    clusters MNIST'?

    A change is read by the MNIST chapter's rule (:func:`probdr_lite.chapters.mnist_at_init.nmi_facts`), the one
    rule of the book for a clustering number: a number *rises* from the ``first`` to the ``last`` scored layer when
    its lowest value at the last layer is above its highest at the first, over the seeds of its random part, and
    *falls* when its highest is below the other's lowest; where the two ranges overlap it is ``"flat"`` (the
    seeds cannot tell). The NMI's seeds are the k-means seeds (``metrics``' ``kmeans_nmi_min`` and
    ``kmeans_nmi_max``, read by ``nmi_facts`` itself), the k-NN accuracy's the seeds of its folds (``knn_first``
    and ``knn_last``: :func:`probdr_lite.chapters.mnist_at_init.knn_over_seeds` of the variant's first and last
    scored latents); the silhouette and the between/within ratio have no random part, so each is one value, as
    printed (three decimals).

    The objection fails if all four rise (``all_up``: the picture told the truth), holds if none rises (not
    ``any_up``), and depends on the metric otherwise. ``metrics``: one dict per number with its key ``metric``,
    ``first`` and ``last`` values and ``direction`` ("up", "down" or "flat"); ``up``: the keys of those that rise
    (``any_up``); ``others``: the dicts of the rest (``any_others``). ``knn_range_first`` and ``knn_range_last``:
    the k-NN accuracy's range over the folds' seeds.
    """
    check_result(metrics, "metrics", metrics_by_variant, keys=("layers",))
    if variant not in metrics or variant == "layers":
        raise ValueError(f"variant {variant!r} is not in metrics (has {[k for k in metrics if k != 'layers']})")
    knn_first = check_array(knn_first, "knn_first", ndim=1)
    knn_last = check_array(knn_last, "knn_last", ndim=1)
    layers = metrics["layers"]
    m = metrics[variant]
    rows = [{"variant": variant, "layer": i, **{k: float(v[i]) for k, v in m.items()}} for i in range(len(layers))]
    nmi = nmi_facts(rows, variant)

    def direction(first_lo, first_hi, last_lo, last_hi):
        return "up" if last_lo > first_hi else "down" if last_hi < first_lo else "flat"

    def printed(key):
        a, b = round(float(m[key][0]), 3), round(float(m[key][-1]), 3)
        return direction(a, a, b, b)

    directions = {
        "knn_accuracy": direction(knn_first.min(), knn_first.max(), knn_last.min(), knn_last.max()),
        "silhouette": printed("silhouette"),
        "between_within": printed("between_within"),
        "kmeans_nmi": "up" if nmi["better"][-1] else "down" if nmi["worse"][-1] else "flat",
    }
    rows = [{"metric": k, "first": float(m[k][0]), "last": float(m[k][-1]), "direction": directions[k]}
            for k in METRIC_NAMES]
    up = [r["metric"] for r in rows if r["direction"] == "up"]
    others = [r for r in rows if r["direction"] != "up"]
    return {
        "all_up": len(up) == len(rows),
        "variant": variant, "first": int(layers[0]), "last": int(layers[-1]),
        "metrics": rows, "up": up, "any_up": bool(up), "others": others, "any_others": bool(others),
        "knn_first": float(m["knn_accuracy"][0]), "knn_last": float(m["knn_accuracy"][-1]),
        "knn_range_first": (float(knn_first.min()), float(knn_first.max())),
        "knn_range_last": (float(knn_last.min()), float(knn_last.max())),
        "bw_first": float(m["between_within"][0]), "bw_last": float(m["between_within"][-1]),
        "nmi_sd_first": float(m["kmeans_nmi_sd"][0]), "nmi_sd_last": float(m["kmeans_nmi_sd"][-1]),
        "nmi_range_first": (float(m["kmeans_nmi_min"][0]), float(m["kmeans_nmi_max"][0])),
        "nmi_range_last": (float(m["kmeans_nmi_min"][-1]), float(m["kmeans_nmi_max"][-1])),
    }
