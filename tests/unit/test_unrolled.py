"""Tests of probdr_lite.unrolled against independent answers: autograd, dense reference formulas, closed forms.

Its attention kernel, probdr_lite._tiled_attention, is tested here through unrolled.attention_times and the steps;
the transformer with diagonal weights has its own file, test_diagonal_transformer.py.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from probdr_lite import _tiled_attention as T
from probdr_lite import unrolled as U

F64 = torch.float64


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/conftest.py


# ---------------------------------------------------------------------------------------------------------------------
# Dense references written here from the formulas of the notes, independent of the module's row-block code


def ref_pi(Z):
    Zc = Z - Z.mean(1, keepdim=True)
    return math.sqrt(Z.shape[1]) * Zc / Zc.norm(dim=1, keepdim=True)


def ref_mask(mask, n, dtype=F64):
    if mask is None:
        return torch.zeros(n, n, dtype=dtype)
    if isinstance(mask, str):  # "causal"
        return torch.full((n, n), -math.inf, dtype=dtype).triu(1)
    if mask.dtype == torch.bool:
        return torch.where(mask, 0.0, -math.inf).to(dtype)
    return mask.to(dtype)


def ref_A(X, kappa, beta, mask=None):
    n, d = X.shape
    S = kappa / d * X @ X.T - beta * torch.eye(n, dtype=X.dtype) + ref_mask(mask, n, X.dtype)
    return torch.softmax(S, dim=1)


def ref_F(X, kappa, beta, mask=None, A_fixed=None):
    """log det(X X^T + beta I) - tr(X^T (I - A) X), with A = A(X) or a fixed A."""
    n = X.shape[0]
    A = ref_A(X, kappa, beta, mask) if A_fixed is None else A_fixed
    L = torch.eye(n, dtype=X.dtype) - A
    return torch.logdet(X @ X.T + beta * torch.eye(n, dtype=X.dtype)) - torch.trace(X.T @ L @ X)


def latents(n, d_q, seed=0, dtype=F64):
    g = torch.Generator().manual_seed(seed)
    return ref_pi(torch.randn(n, d_q, generator=g, dtype=F64)).to(dtype)


def autograd_grad(fn, X):
    X = X.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(X), X)
    return g


def rel(a, b):
    return float((a - b).norm() / b.norm())


# ---------------------------------------------------------------------------------------------------------------------
# Pi and embed


def test_layer_norm_is_nn_layernorm_and_projection():
    Z = torch.randn(20, 16, dtype=F64) * 5 + 3
    P = U.layer_norm(Z)
    ln = nn.LayerNorm(16, eps=0.0, elementwise_affine=False).double()
    assert torch.allclose(P, ln(Z), atol=1e-12)
    assert torch.allclose(P.sum(1), torch.zeros(20, dtype=F64), atol=1e-12)
    assert torch.allclose((P * P).sum(1), torch.full((20,), 16.0, dtype=F64))
    # Pi is the Euclidean projection onto the sphere in the centred subspace: no feasible point is closer
    feasible = ref_pi(torch.randn(500, 16, dtype=F64))
    for i in range(3):
        assert (Z[i] - P[i]).norm() <= (Z[i] - feasible).norm(dim=1).min() + 1e-12


def test_embed_seed_dtype_and_distribution():
    Y = np.random.default_rng(0).random((30, 784))
    a, b = U.embed(Y, d_q=64, seed=3), U.embed(Y, d_q=64, seed=3)
    assert torch.equal(a, b) and a.dtype == F64 and a.shape == (30, 64)
    assert not torch.allclose(a, U.embed(Y, d_q=64, seed=4))
    a32 = U.embed(Y.astype(np.float32), d_q=64, seed=3)
    assert a32.dtype == torch.float32 and torch.allclose(a32.double(), a, atol=1e-4)
    # W_E ~ N(0, 1/d): a row of ones gives (1^T W_E) ~ N(0, 1) per coordinate before Pi; check through its variance
    g = torch.Generator().manual_seed(3)
    W = torch.randn(784, 64, generator=g, dtype=F64) / math.sqrt(784)
    assert torch.allclose(a, ref_pi(torch.from_numpy(Y) @ W), atol=1e-12)


# ---------------------------------------------------------------------------------------------------------------------
# The attention matrix


def test_attention_matches_reference_and_rows_sum_to_one():
    X = latents(25, 8)
    A = U.attention_matrix(X, kappa=3.0, beta=0.5)
    assert torch.allclose(A, ref_A(X, 3.0, 0.5), atol=1e-14)
    assert torch.allclose(A.sum(1), torch.ones(25, dtype=F64))


def test_heat_kernel_reading():
    """With unit-norm logits, softmax attention is D^{-1} W for the heat kernel W = exp(-kappa |x_i - x_j|^2 / 2d_q)."""
    X = latents(15, 6)
    kappa = 4.0
    W = torch.exp(-kappa * torch.cdist(X, X) ** 2 / (2 * 6))
    assert torch.allclose(U.attention_matrix(X, kappa), W / W.sum(1, keepdim=True), atol=1e-13)


@pytest.mark.parametrize("d_q", [2, 128, 1024])
@pytest.mark.parametrize("kappa", [1e-3, 30.0, 1e4])
def test_causal_mask_lower_triangular_and_finite(kappa, d_q):
    X = latents(40, d_q, seed=1, dtype=torch.float32)
    A = U.attention_matrix(X, kappa, beta=1.0, mask="causal")
    assert torch.isfinite(A).all()
    assert torch.equal(A, A.tril())
    assert torch.allclose(A.sum(1), torch.ones(40), atol=1e-5)
    assert A[0, 0] == 1.0


def test_masks_boolean_and_additive_agree():
    X = latents(12, 5)
    keep = torch.rand(12, 12, generator=torch.Generator().manual_seed(0)) > 0.5
    keep.fill_diagonal_(True)
    additive = torch.where(keep, 0.0, -math.inf).to(F64)
    A_bool = U.attention_matrix(X, 2.0, mask=keep)
    assert torch.allclose(A_bool, U.attention_matrix(X, 2.0, mask=additive.numpy()))
    assert torch.all(A_bool[~keep] == 0)
    soft = torch.randn(12, 12, dtype=F64)  # a finite additive bias shifts the logits
    assert torch.allclose(U.attention_matrix(X, 2.0, mask=soft), ref_A(X, 2.0, 0.0, soft))


# ---------------------------------------------------------------------------------------------------------------------
# The directions against autograd and the paper's two approximations


@pytest.mark.parametrize("mask", [None, "causal"])
@pytest.mark.parametrize("n", [10, 30])  # n < d_q and n > d_q (the push-through identity)
def test_exact_is_gradient_of_stop_gradient_objective(n, mask):
    d_q, kappa, beta = 16, 5.0, 0.7
    X = latents(n, d_q, seed=2)
    A = ref_A(X, kappa, beta, mask)
    g = autograd_grad(lambda Z: ref_F(Z, kappa, beta, A_fixed=A), X)
    assert torch.allclose(U.update_direction(X, kappa, beta, "exact", mask=mask, block_size=7), g, atol=1e-10)
    # the package's own objective agrees with the reference, value and gradient
    assert torch.allclose(U.stop_gradient_objective(X, A, beta), ref_F(X, kappa, beta, A_fixed=A))
    g2 = autograd_grad(lambda Z: U.stop_gradient_objective(Z, A, beta), X)
    assert torch.allclose(g2, g, atol=1e-10)
    step = U.block_step(X, kappa, 0.3, beta, "exact", mask=mask)
    assert torch.allclose(step, ref_pi(X + 0.3 * g), atol=1e-10)


@pytest.mark.parametrize("mask", [None, "causal"])
@pytest.mark.parametrize("kappa", [1.0, 30.0])
def test_full_is_gradient_of_full_objective(kappa, mask):
    n, d_q, beta = 24, 12, 0.5
    X = latents(n, d_q, seed=3)
    g = autograd_grad(lambda Z: ref_F(Z, kappa, beta, mask), X)
    D = U.update_direction(X, kappa, beta, "full", mask=mask, block_size=5)
    assert torch.allclose(D, g, atol=1e-9 * max(1.0, float(g.abs().max())))
    assert torch.allclose(U.full_objective(X, kappa, beta, mask), ref_F(X, kappa, beta, mask))
    # and it differs from the stop-gradient direction (objection 3): the softmax term is not negligible
    assert rel(U.update_direction(X, kappa, beta, "exact", mask=mask), g) > 1e-3


def test_full_gradient_ascends_F():
    X = latents(20, 8, seed=4)
    D = U.update_direction(X, 3.0, 1.0, "full")
    f0 = ref_F(X, 3.0, 1.0)
    assert ref_F(X + 1e-4 * D, 3.0, 1.0) > f0  # first-order ascent direction
    # directional derivative from finite differences
    fd = (ref_F(X + 1e-6 * D, 3.0, 1.0) - ref_F(X - 1e-6 * D, 3.0, 1.0)) / 2e-6
    assert abs(float(fd) - float((D * D).sum())) < 1e-5 * float((D * D).sum())


@pytest.mark.parametrize("mask", [None, "causal"])
@pytest.mark.parametrize("n", [8, 40])
def test_paper_differs_from_exact_by_its_two_approximations(n, mask):
    d_q, kappa, beta = 16, 10.0, 1.0
    X = latents(n, d_q, seed=5)
    eye = torch.eye(n, dtype=F64)
    L = eye - ref_A(X, kappa, beta, mask)
    Cinv_X = torch.linalg.inv(X @ X.T + beta * eye) @ X
    regulariser_gap = 2 * Cinv_X - 2 * X / (d_q + beta)  # approximation of notes 3.4
    symmetry_gap = 2 * L @ X - (L + L.T) @ X  # objection 1: 2 L X instead of (L + L^T) X
    exact = U.update_direction(X, kappa, beta, "exact", mask=mask)
    paper = U.update_direction(X, kappa, beta, "paper", mask=mask)
    assert torch.allclose(exact, paper + regulariser_gap + symmetry_gap, atol=1e-10)
    assert torch.allclose(U.regulariser_gradient(X, beta), 2 * Cinv_X, atol=1e-10)
    assert torch.allclose(paper, -2 * L @ X + 2 * X / (d_q + beta), atol=1e-12)


def test_attention_and_diffusion_directions():
    X = latents(20, 6)
    A = ref_A(X, 7.0, 0.3)
    assert torch.allclose(U.update_direction(X, 7.0, 0.3, "attention"), 2 * A @ X, atol=1e-12)
    assert torch.allclose(U.update_direction(X, 7.0, 0.3, "diffusion"), 2 * (A @ X - X), atol=1e-12)


@pytest.mark.parametrize("mask", [None, "causal"])
def test_symmetric_matches_dense_normalised_kernel(mask):
    n, d_q, kappa, beta = 30, 8, 6.0, 0.4
    X = latents(n, d_q, seed=6)
    S = kappa / d_q * X @ X.T - beta * torch.eye(n, dtype=F64) + ref_mask(mask, n)
    E = torch.exp(S)
    dinv = E.sum(1).rsqrt()
    A_sym = dinv[:, None] * E * dinv[None, :]
    expected = 2 * (A_sym @ X - X)
    for bs in (4, 30):
        assert torch.allclose(U.update_direction(X, kappa, beta, "symmetric", mask=mask, block_size=bs), expected)
    assert torch.allclose(U.block_step(X, kappa, 0.4, beta, "symmetric", mask=mask), ref_pi(X + 0.4 * expected))
    if mask is None:  # a symmetric graph: D^{-1/2} E D^{-1/2} is symmetric with largest eigenvalue 1
        assert torch.allclose(A_sym, A_sym.T)
        assert abs(float(torch.linalg.eigvalsh(A_sym)[-1]) - 1.0) < 1e-10


def test_symmetric_scale_free_step_when_direction_overflows():
    """Causal mask and large beta: the first point's degree is exp(kappa - beta), tiny, so D^{-1/2} E D^{-1/2} has
    entries near exp(beta / 2); the step stays finite (Pi ignores scale) and agrees with float64 log-space."""
    X = latents(20, 16, seed=7, dtype=torch.float32)
    X64 = X.double()
    kappa, beta = 30.0, 400.0
    step32 = U.block_step(X, kappa, 0.4, beta, "symmetric", mask="causal")
    assert torch.isfinite(step32).all()
    with pytest.raises(ValueError, match="beta"):
        U.update_direction(X, kappa, beta, "symmetric", mask="causal")
    # reference: in float64 the direction is representable (exp(200) < 1e308)
    D64 = U.update_direction(X64, kappa, beta, "symmetric", mask="causal")
    S = kappa / 16 * X64 @ X64.T - beta * torch.eye(20, dtype=F64) + ref_mask("causal", 20)
    lse = torch.logsumexp(S, 1)
    A_sym = torch.exp(S - (lse[:, None] + lse[None, :]) / 2)
    assert torch.allclose(D64, 2 * (A_sym @ X64 - X64), rtol=1e-9)
    assert torch.allclose(step32.double(), ref_pi(X64 + 0.4 * D64), atol=1e-4)


# ---------------------------------------------------------------------------------------------------------------------
# The notes' reparameterisation identity


@pytest.mark.parametrize("eta", [0.1, 0.4, 0.75])
def test_laplacian_step_is_rescaled_attention_step(eta):
    X = latents(30, 10, seed=8)
    A = U.attention_matrix(X, 30.0, beta=1.0)
    L = torch.eye(30, dtype=F64) - A
    lhs = U.layer_norm(X - eta * L @ X)
    rhs = U.layer_norm(X + eta / (1 - eta) * A @ X)
    assert (lhs - rhs).abs().max() < 1e-10
    # the same through block_step: diffusion with eta equals attention with eta / (1 - 2 eta) (eta < 1/2)
    if eta < 0.5:
        a = U.block_step(X, 30.0, eta, 1.0, "diffusion")
        b = U.block_step(X, 30.0, eta / (1 - 2 * eta), 1.0, "attention")
        assert (a - b).abs().max() < 1e-10


# ---------------------------------------------------------------------------------------------------------------------
# Row blocks equal the dense computation


@pytest.mark.parametrize("mask_kind", [None, "causal", "bool", "additive"])
@pytest.mark.parametrize("block_size", [1, 5, 16, 37, 100])
def test_row_blocks_equal_dense(block_size, mask_kind):
    n = 37
    X = latents(n, 9, seed=9)
    g = torch.Generator().manual_seed(1)
    mask = {
        None: None,
        "causal": "causal",
        "bool": (torch.rand(n, n, generator=g) > 0.3) | torch.eye(n, dtype=torch.bool),
        "additive": torch.randn(n, n, generator=g, dtype=F64),
    }[mask_kind]
    A = ref_A(X, 12.0, 0.5, mask)
    assert torch.allclose(U.attention_times(X, 12.0, 0.5, mask, block_size=block_size), A @ X, atol=1e-12)
    L = torch.eye(n, dtype=F64) - A
    exact = 2 * torch.linalg.solve(X @ X.T + 0.5 * torch.eye(n, dtype=F64), X) - (L + L.T) @ X
    got = U.update_direction(X, 12.0, 0.5, "exact", mask=mask, block_size=block_size)
    assert torch.allclose(got, exact, atol=1e-9)
    step = U.block_step(X, 12.0, 0.4, 0.5, "paper", mask=mask, block_size=block_size)
    assert torch.allclose(step, ref_pi(X - 0.8 * L @ X + 0.8 / (9 + 0.5) * X), atol=1e-12)  # 2 eta / (d_q + beta)


def test_symmetric_tiles_are_taken_only_where_one_shift_serves_every_row():
    """Unmasked A X goes through tiles of exp(S - c) with one constant c; that is exact arithmetic only if c bounds
    every logit, and accurate only if no row's largest logit is far below c (LayerNormed rows, small beta)."""
    X = latents(30, 8, seed=12)
    c = T._common_shift(X, 12.0, 0.5)
    S = 12.0 / 8 * X @ X.T - 0.5 * torch.eye(30, dtype=F64)
    assert c == pytest.approx(12.0) and float(S.max()) <= c + 1e-12  # Cauchy-Schwarz: ||x||^2 = d_q after Pi
    assert float((c - S.max(1).values).max()) <= T._SHIFT_MARGIN
    assert T._common_shift(X, 12.0, T._SHIFT_MARGIN + 1.0) is None  # the diagonal no longer bounds the row maxima
    uneven = X * torch.linspace(0.2, 1.0, 30, dtype=F64)[:, None]
    assert T._common_shift(uneven, 200.0, 0.0) is None  # short rows' logits far below the longest row's
    for Y, kappa, beta in ((X, 12.0, 0.5), (X, 12.0, 40.0), (uneven, 200.0, 0.0), (uneven, 2.0, 0.0)):
        assert torch.allclose(U.attention_times(Y, kappa, beta, block_size=7), ref_A(Y, kappa, beta) @ Y, atol=1e-12)


@pytest.mark.parametrize("kappa", [1e-6, 30.0, U.KAPPA_MAX])
def test_symmetric_tiles_agree_with_row_softmax_in_float32(kappa, monkeypatch):
    """The tiled path (each pair of tiles once, a common shift) and the row-block softmax (each row its own
    maximum) are both float32-accurate against float64, over the whole kappa range and a ragged last tile."""
    X = latents(300, 16, seed=13)
    truth = ref_A(X, kappa, 1.0) @ X
    X32 = X.float()
    tiled = U.attention_times(X32, kappa, 1.0, block_size=64)
    monkeypatch.setattr(T, "_SYMMETRIC_TILES", False)
    rows = U.attention_times(X32, kappa, 1.0, block_size=64)
    for got in (tiled, rows):
        assert torch.isfinite(got).all() and rel(got.double(), truth) < 1e-5


def test_symmetric_tiles_form_each_pair_of_tiles_once(monkeypatch):
    """The point of the tiled path: the logits' product covers about half the matrix ((n^2 + n b) / 2 entries at
    most for tiles of side b), where the row blocks form all n^2."""
    formed = []
    mm = torch.mm

    def counting_mm(a, b, **kw):
        out = mm(a, b, **kw)
        if a.shape[1] == 16:  # inner dimension d_q: a tile of the logits (the products with X have inner size n)
            formed.append(out.numel())
        return out

    monkeypatch.setattr(torch, "mm", counting_mm)
    X = latents(300, 16, seed=13)
    U.attention_times(X, 30.0, 1.0, block_size=64)
    assert sum(formed) <= (300**2 + 300 * 64) / 2
    formed.clear()
    monkeypatch.setattr(T, "_SYMMETRIC_TILES", False)
    U.attention_times(X, 30.0, 1.0, block_size=64)
    assert sum(formed) == 300**2


def test_unroll_path_and_automatic_block_size():
    X = latents(50, 8, dtype=torch.float32)
    path = U.unroll(X, 3, 30.0, 0.4, 1.0, "diffusion")
    assert len(path) == 4 and torch.equal(path[0], X)
    by_hand = X
    for t in range(3):
        by_hand = U.block_step(by_hand, 30.0, 0.4, 1.0, "diffusion", block_size=7)
        assert torch.allclose(path[t + 1], by_hand, atol=1e-5)
    assert len(U.unroll(X, 0, 30.0, 0.4, 1.0, "exact")) == 1
    assert U._auto_block_size(10_000, 4, 1) * 10_000 * 4 <= U.BLOCK_BYTES


# ---------------------------------------------------------------------------------------------------------------------
# Corners stay finite; float32 and float64


@pytest.mark.parametrize("variant", U.BLOCK_VARIANTS)
@pytest.mark.parametrize("mask", [None, "causal"])
def test_corners_stay_finite(variant, mask):
    X32 = latents(24, 1024, seed=10, dtype=torch.float32)
    for kappa in (1e-6, 1e4):
        for beta in (0.0, 1e4):
            for eta in (1e-6, U.ETA_MAX):
                for X in (X32, X32.double()):
                    out = U.block_step(X, kappa, eta, beta, variant, mask=mask)
                    assert out.dtype == X.dtype and torch.isfinite(out).all(), (kappa, beta, eta)
                    assert torch.allclose((out * out).sum(1), torch.full((24,), 1024.0, dtype=X.dtype), rtol=1e-4)


def test_float32_agrees_with_float64_and_numpy_accepted():
    X = latents(40, 16, seed=11)
    for variant in U.BLOCK_VARIANTS:
        a = U.block_step(X.float().numpy(), 30.0, 0.4, 1.0, variant)
        b = U.block_step(X.numpy(), 30.0, 0.4, 1.0, variant)
        assert a.dtype == torch.float32 and b.dtype == F64
        assert torch.allclose(a.double(), b, atol=2e-4), variant


# ---------------------------------------------------------------------------------------------------------------------
# Bad input: a clear error that names the parameter


X_OK = latents(10, 4)

BAD = [
    (lambda: U.block_step(torch.zeros(3, 4, 2), 1.0, 0.4, 1.0, "diffusion"), ValueError, "X"),  # wrong rank
    (lambda: U.block_step(torch.zeros(5, 1), 1.0, 0.4, 1.0, "diffusion"), ValueError, "d_q"),  # one column
    (lambda: U.block_step(torch.full((4, 3), math.nan), 1.0, 0.4, 1.0, "diffusion"), ValueError, "X"),
    (lambda: U.attention_matrix(torch.tensor([[1.0, math.inf]]), 1.0), ValueError, "X"),
    (lambda: U.block_step(X_OK, 0.0, 0.4, 1.0, "diffusion"), ValueError, "kappa"),
    (lambda: U.block_step(X_OK, 2e4, 0.4, 1.0, "diffusion"), ValueError, "kappa"),
    (lambda: U.block_step(X_OK, 1.0, 0.4, -1.0, "diffusion"), ValueError, "beta"),
    (lambda: U.block_step(X_OK, 1.0, 0.0, 1.0, "diffusion"), ValueError, "eta"),
    (lambda: U.block_step(X_OK, 1.0, 11.0, 1.0, "diffusion"), ValueError, "eta"),
    (lambda: U.block_step(X_OK, 1.0, 0.4, 1.0, "laplace"), ValueError, "variant"),
    (lambda: U.block_step(X_OK, 1.0, 0.4, 1.0, "diffusion", mask=torch.ones(9, 9, dtype=torch.bool)), ValueError,
     "mask"),
    (lambda: U.attention_matrix(X_OK, 1.0, mask="anticausal"), ValueError, "mask"),
    (lambda: U.attention_matrix(X_OK, 1.0, mask=torch.zeros(10, 10, dtype=torch.bool)), ValueError, "mask"),
    (lambda: U.attention_matrix(X_OK, 1.0, mask=torch.ones(10, 10, dtype=torch.int64)), TypeError, "mask"),
    (lambda: U.attention_matrix(torch.zeros(U.MAX_DENSE_N + 1, 2), 1.0), ValueError, "MAX_DENSE_N"),
    (lambda: U.full_objective(torch.zeros(U.MAX_DENSE_N + 1, 2), 1.0, 1.0), ValueError, "MAX_DENSE_N"),
    (lambda: U.block_step(latents(10, 4), 1.0, 0.4, 0.0, "exact"), ValueError, "beta"),  # n > d_q, beta = 0
    (lambda: U.regulariser_gradient(latents(4, 4), 0.0), ValueError, "beta"),  # rank d_q - 1: singular
    (lambda: U.unroll(X_OK, -1, 1.0, 0.4, 1.0, "diffusion"), ValueError, "n_steps"),
    (lambda: U.unroll(X_OK, 2.5, 1.0, 0.4, 1.0, "diffusion"), TypeError, "n_steps"),
    (lambda: U.block_step(X_OK, 1.0, 0.4, 1.0, "diffusion", block_size=0), ValueError, "block_size"),
    (lambda: U.block_step(X_OK, "1", 0.4, 1.0, "diffusion"), TypeError, "kappa"),
    (lambda: U.embed(np.ones((3, 5)), d_q=1), ValueError, "d_q"),
    (lambda: U.embed(np.ones((3, 5)), seed=-1), ValueError, "seed"),
    (lambda: U.layer_norm(torch.ones(3, 4)), ValueError, "constant"),
    (lambda: U.layer_norm(torch.tensor([[1.0, 2.0, 3.0], [0.1, 0.1, 0.1]])), ValueError, "constant"),  # rounding
    (lambda: U.attention_matrix(torch.full((3, 4), 1e30), 30.0), ValueError, "X"),  # logits overflow float32
    (lambda: U.stop_gradient_objective(X_OK, torch.eye(9), 1.0), ValueError, "A_fixed"),
]


@pytest.mark.parametrize("call, error, word", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_names_the_parameter(call, error, word):
    with pytest.raises(error, match=word):
        call()


@pytest.mark.parametrize("variant", ["diffusion", "exact", "symmetric", "full"])
@pytest.mark.parametrize("mask", [None, "causal"])
def test_unroll_reuses_its_block_buffers_without_changing_a_step(variant, mask):
    """unroll keeps one workspace for all steps; each step must equal a fresh block_step bit for bit
    (a buffer reused while still needed, or sized for the wrong block, would show here)."""
    g = torch.Generator().manual_seed(3)
    X0 = U.layer_norm(torch.randn(37, 6, generator=g, dtype=torch.float64))
    path = U.unroll(X0, 3, 4.0, 0.3, 0.5, variant, mask=mask, block_size=10)  # 4 blocks, the last one short
    X = X0
    for got in path[1:]:
        X = U.block_step(X, 4.0, 0.3, 0.5, variant, mask=mask, block_size=10)
        assert torch.equal(got, X)


# ---------------------------------------------------------------------------------------------------------------------
# The step-size family: after LayerNorm, A - I and the paper's block are plain attention with a longer step


@pytest.mark.parametrize("mask", [None, "causal"])
@pytest.mark.parametrize("kappa,eta,beta", [(30.0, 0.4, 1.0), (3.0, 0.1, 0.0), (10.0, 0.45, 10.0)])
def test_attention_step_makes_plain_attention_walk_the_same_path(kappa, eta, beta, mask):
    """Eight shared blocks of A - I, or of the paper's block, and eight of plain attention at attention_step's eta'
    give the same latents to float64 rounding, with or without the causal mask (A is whatever softmax the mask
    leaves; the identity needs nothing of it)."""
    g = torch.Generator().manual_seed(3)
    X0 = U.layer_norm(torch.randn(60, 12, generator=g, dtype=F64))
    for variant in ("diffusion", "paper"):
        eta_plain = U.attention_step(eta, variant, d_q=12, beta=beta)
        walked = U.unroll(X0, 8, kappa, eta, beta, variant, mask=mask)
        plain = U.unroll(X0, 8, kappa, eta_plain, beta, "attention", mask=mask)
        gap = max(float((a - b).abs().max()) for a, b in zip(walked, plain))
        assert gap < 1e-11, (variant, gap)
        moved = float((walked[-1] - X0).abs().max())
        assert moved > 1e-3  # the blocks did move the points: the agreement is not that of two fixed points
        other = U.unroll(X0, 8, kappa, 1.1 * eta_plain, beta, "attention", mask=mask)[-1]
        assert float((other - walked[-1]).abs().max()) > 1e3 * max(gap, 1e-15)  # another step is another path


def test_attention_step_closed_forms():
    """s = 2 eta' at the book's eta = 0.4, d_q = 128, beta = 1: 0.8, 4 and 0.8 / (0.2 + 0.8 / 129)."""
    s = {v: 2 * U.attention_step(0.4, v, d_q=128, beta=1.0) for v in U.STEP_FAMILY}
    assert s["attention"] == pytest.approx(0.8, rel=1e-15)
    assert s["diffusion"] == pytest.approx(4.0, rel=1e-14)
    assert s["paper"] == pytest.approx(0.8 / (0.2 + 0.8 / 129), rel=1e-14)
    assert 3.87 < s["paper"] < 3.89


@pytest.mark.parametrize("call,match", [
    (lambda: U.attention_step(0.5, "diffusion", d_q=8), "eta must be below"),
    (lambda: U.attention_step(0.6, "diffusion", d_q=8), "eta must be below"),
    (lambda: U.attention_step(0.4, "exact", d_q=8), "variant"),
    (lambda: U.attention_step(0.0, "attention", d_q=8), "eta"),
    (lambda: U.attention_step(0.4, "paper", d_q=0), "d_q"),
])
def test_attention_step_refuses(call, match):
    with pytest.raises(ValueError, match=match):
        call()
