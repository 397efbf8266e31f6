"""The one implementation of the ELBO's gradient, shared by the ELBO chapter (NumPy) and the transformer block
(torch).

With C = X X^T + beta I (n x n) and a Laplacian L, the ProbDR ELBO (notes section 2) has gradient

    dELBO/dX = (nu / 2) [ 2 C^{-1} X - (L + L^T) X ].

:mod:`probdr_lite.probdr` calls :func:`elbo_gradient` for ``le_elbo_grad`` and its gradient ascent; the "exact"
block direction of :mod:`probdr_lite.unrolled` is the same call with L = I - A and nu = 2, so that
D = 2 C^{-1} X - (L + L^T) X. Everything here works on NumPy arrays and on torch tensors alike (the dispatch is by
the type of X) and is computed in float64; the result has X's dtype.

C^{-1} X and log det C go through the *smaller* Gram matrix: for n <= d_q the (n, n) matrix X X^T + beta I itself,
for n > d_q the (d_q, d_q) matrix X^T X + beta I with the push-through identity
C^{-1} X = X (X^T X + beta I)^{-1} and Sylvester's log det C = (n - d_q) log beta + log det(X^T X + beta I).

Whether C is singular is judged with a relative tolerance, as ``numpy.linalg.matrix_rank`` does: C counts as
singular when its smallest eigenvalue is at most ``lambda_max(C) * max(n, d_q) * eps`` (eps of float64). Its
eigenvalues are beta + sigma_i(X)^2 (and beta alone n - d_q times when n > d_q), with the singular values sigma of X
computed from X itself (not from the Gram matrix, whose rounding would put an exactly singular C right at the
threshold). So the same input gives the same answer on every machine, whatever its BLAS does with the last bit.

These are internal kernels: the public functions of ``probdr`` and ``unrolled`` validate their arguments first.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as la

__all__ = ["is_torch", "check_regular", "is_regular", "inverse_covariance_times", "log_det_covariance", "elbo_gradient"]

EPS = float(np.finfo(np.float64).eps)


def is_torch(X) -> bool:
    return type(X).__module__.split(".", 1)[0] == "torch"


def _f64(X):
    return X.detach().to(dtype=__import__("torch").float64) if is_torch(X) else np.asarray(X, dtype=np.float64)


def _eye(m: int, like):
    if is_torch(like):
        import torch

        return torch.eye(m, dtype=like.dtype, device=like.device)
    return np.eye(m)


def _gram(X64, beta: float):
    """(G, small): G = X X^T + beta I if n <= d_q (small = True), else X^T X + beta I."""
    n, d_q = X64.shape
    small = n <= d_q
    G = X64 @ X64.T if small else X64.T @ X64
    return G + beta * _eye(G.shape[0], X64), small


def _top_eigenvalue(G) -> float:
    if is_torch(G):
        import torch

        return float(torch.linalg.eigvalsh(G.detach())[-1])
    return float(la.eigvalsh(G, subset_by_index=[G.shape[0] - 1, G.shape[0] - 1])[0])


def _singular_values(X64):
    if is_torch(X64):
        import torch

        return torch.linalg.svdvals(X64.detach()).cpu().numpy()
    return np.linalg.svd(X64, compute_uv=False)


def check_regular(X64, beta: float, G=None) -> None:
    """Raise ValueError if C = X X^T + beta I is numerically singular (relative tolerance; see the module).

    ``G`` may pass the Gram matrix of :func:`_gram` when the caller has it (it gives lambda_max when n > d_q).
    """
    n, d_q = X64.shape
    if beta == 0 and n > d_q:
        raise ValueError(
            f"beta must be > 0 when n > d_q (n = {n}, d_q = {d_q}): then X X^T has rank <= d_q < n and "
            "C = X X^T + beta I is singular"
        )
    if n <= d_q:  # C's eigenvalues: beta + sigma_i(X)^2, sigma from X itself (O(n^2 d_q))
        sigma = _singular_values(X64)
        lam_max, lam_min = float(sigma.max()) ** 2 + beta, float(sigma.min()) ** 2 + beta
    else:  # C has eigenvalue beta (n - d_q times) and those of X^T X + beta I, the largest of which is lambda_max
        lam_max = _top_eigenvalue(_gram(X64, beta)[0] if G is None else G)
        lam_min = beta
    tol = lam_max * max(n, d_q) * EPS
    if not lam_min > tol:
        raise ValueError(
            f"beta = {beta:g} leaves C = X X^T + beta I numerically singular (smallest eigenvalue {lam_min:.3g} "
            f"<= {tol:.3g} = largest x max(n, d_q) x eps; LayerNormed rows span at most d_q - 1 dimensions); "
            "use beta > 0 or a larger beta"
        )


def is_regular(X, beta: float) -> bool:
    """False where :func:`check_regular` would raise."""
    try:
        check_regular(_f64(X), beta)
    except ValueError:
        return False
    return True


def _cholesky(G):
    """Lower Cholesky factor of an SPD G that :func:`check_regular` has passed."""
    if is_torch(G):
        import torch

        chol, info = torch.linalg.cholesky_ex(G)
        failed = int(info) != 0
    else:
        try:
            chol, failed = la.cholesky(G, lower=True), False
        except la.LinAlgError:
            chol, failed = None, True
    if failed:  # only within a few eps of the threshold: same message as check_regular
        raise ValueError("beta leaves C = X X^T + beta I numerically singular (its Cholesky factorisation failed); "
                         "use a larger beta")
    return chol


def _cho_solve(chol, rhs):
    if is_torch(chol):
        import torch

        return torch.cholesky_solve(rhs, chol)
    return la.cho_solve((chol, True), rhs)


def inverse_covariance_times(X, beta: float, *, check: bool = True):
    """C^{-1} X with C = X X^T + beta I, through the smaller Gram matrix, in float64; returns X's type and dtype."""
    X64 = _f64(X)
    G, small = _gram(X64, beta)
    if check:
        check_regular(X64, beta, G)
    chol = _cholesky(G)
    Z = _cho_solve(chol, X64) if small else _cho_solve(chol, X64.T).T
    return Z.to(X.dtype) if is_torch(X) else Z.astype(np.asarray(X).dtype, copy=False)


def log_det_covariance(X, beta: float, *, check: bool = True):
    """log det(X X^T + beta I_n) through the smaller Gram matrix; differentiable for torch input (keeps X's dtype)."""
    n, d_q = X.shape
    G, small = _gram(X, beta)
    if check:
        check_regular(_f64(X), beta, _f64(G))
    chol = _cholesky(G)
    extra = 0.0 if small else (n - d_q) * math.log(beta)
    if is_torch(X):
        import torch

        return 2.0 * torch.log(torch.diagonal(chol)).sum() + extra
    return 2.0 * float(np.sum(np.log(np.diag(chol)))) + extra


def elbo_gradient(X, sym_LX, beta: float, nu: float):
    """(nu / 2) [ 2 C^{-1} X - sym_LX ], sym_LX = (L + L^T) X: the gradient of the ProbDR ELBO in X.

    ``sym_LX`` is passed in because its cost depends on how L is held (sparse, dense, or attention computed in row
    blocks); the C^{-1} X part is always :func:`inverse_covariance_times`.
    """
    return (0.5 * nu) * (2.0 * inverse_covariance_times(X, beta) - sym_LX)
