"""What LayerNorm keeps of a step: the tangent part of a direction on the LayerNorm sphere, and cosines.

A block is X <- Pi(X + eta Delta), Pi the LayerNorm projection (the transformer-block chapter). To first order in
eta only the part of each row Delta_i tangent to the sphere at x_i survives Pi, so two step directions move the
points the same way exactly when their tangent parts are parallel. The objections chapter (objection 1) and the
energies chapter compare directions this way; :mod:`probdr_lite.chapters.objections` re-exports these functions.
"""

from __future__ import annotations

import torch

from probdr_lite._validation import check_latents, check_tensor

__all__ = ["cosine", "tangent_part", "tangent_cosine"]

F64 = torch.float64


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


def tangent_part(D, X) -> torch.Tensor:
    """What LayerNorm keeps of a step direction, to first order: Pi's Jacobian at X applied to D, row by row.

    For a row x on the LayerNorm set {x : 1^T x = 0, ||x||^2 = d_q}, Pi(x + eps d) = x + eps J d + O(eps^2) with

        J d = P d - (x^T P d / ||x||^2) x,    P = I - 1 1^T / d_q  (centring),

    the projection of d onto the tangent space of the sphere at x (the transformer-block chapter). Off the set the
    same formula is the Jacobian up to the positive factor sqrt(d_q) / ||P x||, which a cosine does not see.

    Parameters
    ----------
    D, X : arrays or tensors of the same shape (n, d_q), n >= 2, d_q >= 2; no row of X constant

    Returns
    -------
    float64 tensor of shape (n, d_q).
    """
    X = check_latents(X, "X")
    D = check_tensor(D, "D", ndim=2).to(F64)
    if D.shape != X.shape:
        raise ValueError(f"D must have the shape of X {tuple(X.shape)}; got {tuple(D.shape)}")
    return _tangent(D, X)


def _tangent(D, X):
    Xc = X - X.mean(1, keepdim=True)  # P x, (n, d_q)
    Dc = D - D.mean(1, keepdim=True)  # P d
    radial = (Dc * Xc).sum(1, keepdim=True) / (Xc * Xc).sum(1, keepdim=True)  # (n, 1)
    return Dc - radial * Xc


def tangent_cosine(D1, D2, X) -> float:
    """Cosine between the tangent parts (:func:`tangent_part`) of two step directions at X: 1 means that, after
    LayerNorm, the two steps move the points the same way (to first order), whatever their radial parts."""
    return cosine(tangent_part(D1, X), tangent_part(D2, X))
