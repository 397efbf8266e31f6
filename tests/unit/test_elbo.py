"""The shared ELBO kernel (probdr_lite._elbo): singularity judged with a relative tolerance, and the "exact" block
direction equal to the ELBO chapter's gradient with L = I - A.

Every singularity case is far from the threshold lambda_min(C) <= lambda_max(C) * max(n, d_q) * eps on its side
(exactly singular, or a condition number many orders of magnitude below 1 / (max(n, d_q) eps)), so the outcome does
not depend on the BLAS, the thread count or the last bit of any kernel; each case is run on 1 and 2 threads, in NumPy
and in torch.
"""

import math

import numpy as np
import pytest
import torch

from probdr_lite import unrolled as U
from probdr_lite._elbo import check_regular, inverse_covariance_times, is_regular, log_det_covariance
from probdr_lite.probdr import le_elbo, le_elbo_grad

F64 = torch.float64


def layer_normed(n, d_q, seed=0):
    """n LayerNormed rows: centred, squared norm d_q. They span at most d_q - 1 dimensions (X 1 = 0)."""
    Z = np.random.default_rng(seed).standard_normal((n, d_q))
    Z -= Z.mean(axis=1, keepdims=True)
    return math.sqrt(d_q) * Z / np.linalg.norm(Z, axis=1, keepdims=True)


def with_condition(n, d_q, cond, seed=0):
    """(n, d_q) with singular values spread geometrically from 1 down to 1 / sqrt(cond), so X X^T has condition
    number cond on its range."""
    rng = np.random.default_rng(seed)
    U_, _ = np.linalg.qr(rng.standard_normal((n, min(n, d_q))))
    V_, _ = np.linalg.qr(rng.standard_normal((d_q, min(n, d_q))))
    s = np.geomspace(1.0, cond ** -0.5, min(n, d_q))
    return (U_ * s) @ V_.T


# (X, beta, singular?) with the smallest eigenvalue of C far from the tolerance on the stated side
CASES = [
    pytest.param(layer_normed(4, 4), 0.0, True, id="layernormed-4x4-beta0"),  # rank 3 of 4: exactly singular
    pytest.param(layer_normed(6, 6, seed=1), 0.0, True, id="layernormed-6x6-beta0"),
    pytest.param(np.repeat(layer_normed(3, 8), 2, axis=0), 0.0, True, id="repeated-rows-beta0"),  # rank 3 of 6
    pytest.param(layer_normed(50, 8), 1e-30, True, id="n>d_q-beta-1e-30"),  # beta / lambda_max ~ 1e-32
    pytest.param(layer_normed(4, 4), 1e-3, False, id="layernormed-4x4-beta1e-3"),  # cond ~ 1e4
    pytest.param(layer_normed(50, 8), 1e-6, False, id="n>d_q-beta1e-6"),  # cond ~ 1e8
    pytest.param(with_condition(5, 9, 1e6), 0.0, False, id="cond1e6-beta0"),
    pytest.param(with_condition(5, 9, 1e30), 0.0, True, id="cond1e30-beta0"),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("X, beta, singular", CASES)
def test_singularity_is_judged_with_a_relative_tolerance(X, beta, singular, threads):
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for Xb in (X, torch.from_numpy(X)):
            assert is_regular(Xb, beta) is (not singular)
            if singular:
                with pytest.raises(ValueError, match="beta"):
                    inverse_covariance_times(Xb, beta)
            else:  # against an independent dense solve of C Z = X
                C = X @ X.T + beta * np.eye(X.shape[0])
                Z = np.asarray(inverse_covariance_times(Xb, beta))
                np.testing.assert_allclose(C @ Z, X, atol=1e-6 * np.abs(X).max())
    finally:
        torch.set_num_threads(before)


def test_the_issue_case_raises_through_the_public_function():
    X = torch.from_numpy(layer_normed(4, 4))
    with pytest.raises(ValueError, match="beta = 0 leaves C = X X\\^T \\+ beta I numerically singular"):
        U.regulariser_gradient(X, 0.0)
    assert torch.isfinite(U.regulariser_gradient(X, 1e-3)).all()


def test_n_above_d_q_needs_a_positive_beta():
    with pytest.raises(ValueError, match="beta must be > 0 when n > d_q"):
        check_regular(layer_normed(9, 4), 0.0)


@pytest.mark.parametrize("n", [6, 40])  # n <= d_q (the (n, n) Gram) and n > d_q (the (d_q, d_q) one)
def test_log_det_covariance_matches_a_dense_log_det(n):
    X, beta = layer_normed(n, 10, seed=3), 0.3
    expected = np.linalg.slogdet(X @ X.T + beta * np.eye(n))[1]
    assert log_det_covariance(X, beta) == pytest.approx(expected, rel=1e-12)
    assert float(log_det_covariance(torch.from_numpy(X), beta)) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------------
# The thesis in code: the "exact" block direction is the ELBO chapter's gradient with L = I - A


def _dense_elbo(X, L, beta, nu):
    """(nu / 2) [log det C - tr(C L)], C = X X^T + beta I, written densely in torch for autograd (notes section 2)."""
    C = X @ X.T + beta * torch.eye(X.shape[0], dtype=X.dtype)
    return 0.5 * nu * (torch.logdet(C) - torch.trace(C @ L))


@pytest.mark.parametrize("mask", [None, "causal"])
@pytest.mark.parametrize("n", [10, 30])  # n < d_q and n > d_q
def test_exact_direction_is_the_elbo_gradient_with_L_equal_I_minus_A(n, mask):
    """update_direction("exact") = dELBO/dX with L = I - A and nu = 2:

    dELBO/dX = (nu / 2) [2 C^{-1} X - (L + L^T) X], so nu = 2 gives D = 2 C^{-1} X - (L + L^T) X, i.e. twice
    the ELBO chapter's gradient at its default nu = 1.
    """
    d_q, kappa, beta = 16, 5.0, 0.7
    X = torch.from_numpy(layer_normed(n, d_q, seed=2))
    A = U.attention_matrix(X, kappa, beta, mask)
    L = torch.eye(n, dtype=F64) - A
    D = U.update_direction(X, kappa, beta, "exact", mask=mask, block_size=7)
    # the ELBO chapter's function, NumPy in and out
    np.testing.assert_allclose(D.numpy(), le_elbo_grad(X.numpy(), L.numpy(), beta, nu=2.0), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(D.numpy(), 2.0 * le_elbo_grad(X.numpy(), L.numpy(), beta), rtol=1e-10, atol=1e-12)
    # an independent answer: autograd of the dense ELBO with L held fixed
    Xg = X.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(_dense_elbo(Xg, L, beta, nu=2.0), Xg)
    torch.testing.assert_close(D, g, rtol=1e-9, atol=1e-10)
    # and the value of the ELBO chapter's ELBO is the dense one
    assert le_elbo(X.numpy(), L.numpy(), beta, nu=2.0) == pytest.approx(float(_dense_elbo(X, L, beta, 2.0)),
                                                                        rel=1e-10)
