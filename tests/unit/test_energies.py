"""Tests of probdr_lite.chapters.energies against answers computed independently here.

Every energy is written out again in this file, straight from its formula, and differentiated by autograd; the
package's closed-form gradients must agree to rounding (float64). The proposition (the stop-gradient direction is the
full gradient of Phi) is checked over kappa, beta, masks and shapes to 1e-10. Sinkhorn is checked against the
classical alternating row/column scaling, the filters against eigenvectors of A, the Jacobian test against the full
Jacobian.
"""

import math

import numpy as np
import pytest
import torch

from probdr_lite.chapters import energies as E
from probdr_lite import unrolled as U

F64 = torch.float64
TOL = 1e-10


def ln(Z):
    Z = Z - Z.mean(1, keepdim=True)
    return math.sqrt(Z.shape[1]) * Z / Z.norm(dim=1, keepdim=True)


def latents(n, d_q, seed=0):
    return ln(torch.randn(n, d_q, generator=torch.Generator().manual_seed(seed), dtype=F64))


def logits(X, K, kappa, beta, causal):
    n, d = X.shape
    S = kappa / d * X @ K.T - beta * torch.eye(n, dtype=F64)
    if causal:
        S = S.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    return S


def rel(a, b):
    return float((a - b).norm() / b.norm())


def phi_by_hand(X, kappa, beta, causal):
    n, d = X.shape
    C = X @ X.T + beta * torch.eye(n, dtype=F64)
    return torch.logdet(C) - (X ** 2).sum() + d / kappa * torch.logsumexp(logits(X, X, kappa, beta, causal), 1).sum()


def sinkhorn_value_by_hand(X, kappa, beta, n_iter=3000):
    """The Sinkformer energy with the potentials computed by differentiable log-domain iterations (no envelope
    argument): autograd then differentiates through the whole solve."""
    n, d = X.shape
    S = logits(X, X, kappa, beta, False)
    S = 0.5 * (S + S.T)
    f = torch.zeros(n, dtype=F64)
    for _ in range(n_iter):
        f = 0.5 * (f - torch.logsumexp(S + f[None, :], dim=1))
    return d / (2 * kappa) * (torch.exp(f[:, None] + S + f[None, :]).sum() - 2 * f.sum())


def energy_by_hand(X, reading, kappa, beta, causal, ref):
    n, d = X.shape
    if reading in ("ple", "grand"):
        A = torch.softmax(logits(ref, ref, kappa, beta, causal), 1)
        trace = torch.trace(X.T @ (torch.eye(n, dtype=F64) - A) @ X)
        if reading == "grand":
            return trace
        return torch.logdet(X @ X.T + beta * torch.eye(n, dtype=F64)) - trace
    if reading == "phi":
        return phi_by_hand(X, kappa, beta, causal)
    if reading == "hopfield":
        return 0.5 * (X ** 2).sum() - d / kappa * torch.logsumexp(logits(X, ref, kappa, beta, causal), 1).sum()
    if reading == "energy_transformer":
        return -d / kappa * torch.logsumexp(logits(X, X, kappa, beta, causal), 1).sum()
    if reading == "sphere":
        return d / (2 * kappa * n * n) * torch.exp(logits(X, X, kappa, beta, causal) - kappa).sum()
    if reading == "crate":
        return 0.5 * torch.logdet(torch.eye(n, dtype=F64) + X @ X.T / beta)
    return sinkhorn_value_by_hand(X, kappa, beta)


@pytest.fixture(scope="module")
def X():
    return latents(24, 6, seed=1)


# ---------------------------------------------------------------------------------------------------------------------
# The proposition


@pytest.mark.parametrize("n, d_q", [(7, 12), (30, 8), (64, 16)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kappa", [0.5, 3.0, 30.0, 300.0])
@pytest.mark.parametrize("beta", [0.1, 1.0, 10.0])
def test_stop_gradient_direction_is_the_full_gradient_of_phi(n, d_q, causal, kappa, beta):
    X = latents(n, d_q, seed=n)
    Xg = X.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(phi_by_hand(Xg, kappa, beta, causal), Xg)
    mask = "causal" if causal else None
    assert rel(E.phi_gradient(X, kappa, beta, mask), g) < TOL
    assert rel(U.update_direction(X, kappa, beta, "exact", mask=mask), g) < TOL
    assert float(E.phi(X, kappa, beta, mask)) == pytest.approx(float(phi_by_hand(X, kappa, beta, causal)), rel=1e-12)


def test_proposition_gaps_are_rounding(X):
    gaps = E.proposition_gaps(X, kappas=(1.0, 30.0), betas=(0.5, 2.0))
    assert gaps.shape == (2, 2, 2) and gaps.max() < TOL


def test_phi_is_not_the_full_objective(X):
    """Phi and F_full are different objectives: their gradients differ (objection 3 as a choice)."""
    g_full = U.update_direction(X, 30.0, 1.0, "full")
    assert rel(E.phi_gradient(X, 30.0, 1.0), g_full) > 0.01


# ---------------------------------------------------------------------------------------------------------------------
# Every reading: the value and the closed-form gradient against the formula written out here


@pytest.mark.parametrize("reading, causal", [(r, c) for r in E.READINGS for c in (False, True)
                                             if not (c and r == "sinkformer")])  # no masked Sinkformer
def test_energy_and_gradient_against_autograd_of_the_formula(X, reading, causal):
    kappa, beta = 3.0, 0.7
    ref = ln(X + 0.2 * latents(*X.shape, seed=9)) if reading in E.FROZEN else X
    mask = "causal" if causal else None
    Xg = X.clone().requires_grad_(True)
    value = energy_by_hand(Xg, reading, kappa, beta, causal, ref)
    (g,) = torch.autograd.grad(value, Xg)
    closed = E.energy_gradient(X, reading, kappa, beta, mask, reference=ref if reading in E.FROZEN else None)
    assert rel(closed, g) < 1e-9
    pkg = E.energy(X, reading, kappa, beta, mask, reference=ref if reading in E.FROZEN else None)
    assert float(pkg) == pytest.approx(float(value.detach()), rel=1e-10, abs=1e-12)


def test_frozen_readings_hold_the_reference_fixed(X):
    """With the reference detached, autograd of the package's energy is the closed form (no term from A_ref)."""
    ref = ln(X + 0.3 * latents(*X.shape, seed=4))
    for reading in E.FROZEN:
        Xg = X.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(E.energy(Xg, reading, 10.0, 1.0, reference=ref), Xg)
        assert rel(g, E.energy_gradient(X, reading, 10.0, 1.0, reference=ref)) < 1e-10


def test_hopfield_gradient_at_the_patterns_is_the_laplacian(X):
    A = torch.softmax(logits(X, X, 10.0, 1.0, False), 1)
    assert rel(E.energy_gradient(X, "hopfield", 10.0, 1.0), X - A @ X) < 1e-12


def test_crate_coding_rate_is_half_the_ple_log_determinant(X):
    n = X.shape[0]
    logdet = torch.logdet(X @ X.T + 2.0 * torch.eye(n, dtype=F64))
    assert float(E.energy(X, "crate", 3.0, 2.0)) == pytest.approx(0.5 * (float(logdet) - n * math.log(2.0)))


# ---------------------------------------------------------------------------------------------------------------------
# Sinkhorn


def test_sinkhorn_attention_against_alternating_scaling(X):
    P = E.sinkhorn_attention(X, 5.0, 1.0)
    assert torch.allclose(P, P.T, atol=1e-14)
    assert torch.allclose(P.sum(0), torch.ones(24, dtype=F64), atol=1e-12)
    assert torch.allclose(P.sum(1), torch.ones(24, dtype=F64), atol=1e-12)
    K = torch.exp(logits(X, X, 5.0, 1.0, False))
    for _ in range(5000):  # Sinkhorn-Knopp: rows, then columns; the limit is unique for a positive matrix
        K = K / K.sum(1, keepdim=True)
        K = K / K.sum(0, keepdim=True)
    assert torch.allclose(P, K, atol=1e-10)


def test_symmetric_block_is_the_first_damped_sinkhorn_step(X):
    S = logits(X, X, 5.0, 1.0, False)
    E_ = torch.exp(S)
    d = E_.sum(1)
    first = E_ / torch.sqrt(d)[:, None] / torch.sqrt(d)[None, :]
    sym = U.update_direction(X, 5.0, 1.0, "symmetric")
    assert rel(sym, 2 * (first @ X - X)) < 1e-12


# ---------------------------------------------------------------------------------------------------------------------
# Which block is which gradient step; gradient fields


@pytest.mark.parametrize("causal", [False, True])
def test_block_directions_equal_unrolled(X, causal):
    mask = "causal" if causal else None
    for v in U.CHAPTER_VARIANTS:
        assert rel(E.update_direction(X, v, 10.0, 1.0, mask), U.update_direction(X, 10.0, 1.0, v, mask=mask)) < 1e-12


def test_update_alignment_identifies_the_exact_steps(X):
    a = E.update_alignment(X, ("ple", "phi", "hopfield", "energy_transformer", "sinkformer"), kappa=10.0)
    assert a["ple"]["exact"]["cosine"] == pytest.approx(1.0, abs=1e-12)
    assert a["phi"]["exact"]["cosine"] == pytest.approx(1.0, abs=1e-12)
    assert a["hopfield"]["diffusion"]["cosine"] == pytest.approx(1.0, abs=1e-12)
    for v in ("attention", "paper"):  # the same tangent step as A - I: they differ from it by multiples of X
        assert a["hopfield"][v]["tangent_cosine"] == pytest.approx(1.0, abs=1e-12)
        assert a["hopfield"][v]["cosine"] < 1 - 1e-6
    assert a["ple"]["attention"]["cosine"] < 1 - 1e-3
    s = E.update_alignment(X, ("energy_transformer",), ("energy_transformer", "sinkformer"), kappa=10.0)
    assert s["energy_transformer"]["energy_transformer"]["cosine"] == pytest.approx(1.0, abs=1e-12)


def field_by_hand(Z, update, kappa, beta):
    n, d = Z.shape
    A = torch.softmax(logits(Z, Z, kappa, beta, False), 1)
    if update == "attention":
        return 2 * A @ Z
    if update == "diffusion":
        return 2 * (A - torch.eye(n, dtype=F64)) @ Z
    C = Z @ Z.T + beta * torch.eye(n, dtype=F64)
    return 2 * torch.linalg.solve(C, Z) - 2 * Z + (A + A.T) @ Z  # exact


@pytest.mark.parametrize("update, is_gradient", [("attention", False), ("diffusion", False), ("exact", True)])
def test_gradient_field_asymmetry_against_the_full_jacobian(update, is_gradient):
    """The probes' estimates against ||J - J^T||_F and ||J||_F of the whole Jacobian, by autograd on a small X."""
    X = latents(9, 4, seed=3)
    J = torch.autograd.functional.jacobian(lambda Z: field_by_hand(Z, update, 3.0, 1.0), X).reshape(36, 36)
    anti, size = float((J - J.T).norm()), float(J.norm())
    a = E.gradient_field_asymmetry(X, update, 3.0, 1.0, n_probes=100)
    assert a["jacobian"] == pytest.approx(size, rel=0.2)
    assert a["asymmetry"] == pytest.approx(a["antisymmetric"] / a["jacobian"], rel=1e-12)
    if is_gradient:
        assert anti / size < 1e-13 and a["asymmetry"] < 1e-13
    else:
        assert anti / size > 1e-2 and a["antisymmetric"] == pytest.approx(anti, rel=0.3)


def test_gradient_field_asymmetry_is_calibrated_by_linear_fields(monkeypatch):
    """A linear field X -> M X has the Jacobian M (x) I: a symmetric M scores 0, an antisymmetric one 2, whatever
    the probes; the estimate of ||J||_F is ||M||_F sqrt(d_q) to the probes' accuracy."""
    X = latents(12, 4, seed=5)
    K = torch.randn(12, 12, dtype=F64, generator=torch.Generator().manual_seed(0))
    for M, expected in ((K + K.T, 0.0), (K - K.T, 2.0)):
        monkeypatch.setattr(E, "_dense_direction", lambda Z, update, kappa, beta, causal, M=M: M @ Z)
        a = E.gradient_field_asymmetry(X, "attention", 3.0, 1.0, n_probes=100)
        assert a["asymmetry"] == pytest.approx(expected, abs=1e-12)
        assert a["jacobian"] == pytest.approx(float(M.norm()) * 2.0, rel=0.15)


def test_attention_diffusion_and_paper_share_one_antisymmetric_part(X):
    """Their Jacobians differ by multiples of I, which is symmetric: with the same probes, the same J - J^T."""
    a = {u: E.gradient_field_asymmetry(X, u, 5.0, 1.0) for u in ("attention", "diffusion", "paper")}
    anti = [a[u]["antisymmetric"] for u in a]
    assert max(anti) - min(anti) < 1e-10 * max(anti)
    assert len({round(a[u]["jacobian"], 6) for u in a}) == 3


def test_sinkformer_and_energy_transformer_updates_are_gradient_fields(X):
    for u in ("energy_transformer", "sinkformer"):
        assert E.gradient_field_asymmetry(X, u, 5.0, 1.0)["asymmetry"] < 1e-12
    assert E.gradient_field_asymmetry(X, "symmetric", 5.0, 1.0)["asymmetry"] > 1e-3


# ---------------------------------------------------------------------------------------------------------------------
# The harness


def test_energy_path_values_and_frozen_deltas(X):
    path = U.unroll(X, 3, 10.0, 0.4, 1.0, "paper")
    out = E.energy_path(path, E.READINGS, 10.0, 1.0)
    for r in E.READINGS:
        vals = [float(E.energy(Z, r, 10.0, 1.0)) for Z in path]
        assert np.allclose(out[r]["values"], vals, rtol=1e-10, atol=1e-12)
        if r in E.FROZEN:
            held = [float(E.energy(path[t + 1], r, 10.0, 1.0, reference=path[t])) for t in range(3)]
            assert np.allclose(out[r]["deltas"], np.array(held) - vals[:-1], rtol=1e-9, atol=1e-12)
        else:
            assert np.allclose(out[r]["deltas"], np.diff(vals))
        assert out[r]["n_rise"] + out[r]["n_fall"] <= 3
        assert out[r]["n_rise"] == int((out[r]["deltas"] > 0).sum())


@pytest.mark.parametrize("reading", E.READINGS)
def test_harness_sees_both_signs(X, reading):
    """A small step along +gradient raises the energy, along -gradient lowers it: the counts are not fixed."""
    g = E.energy_gradient(X, reading, 5.0, 1.0)
    eps = 1e-4 / float(g.norm())
    up = E.energy_path([X, X + eps * g], (reading,), 5.0, 1.0)[reading]
    down = E.energy_path([X, X - eps * g], (reading,), 5.0, 1.0)[reading]
    assert (up["n_rise"], up["n_fall"]) == (1, 0) and (down["n_rise"], down["n_fall"]) == (0, 1)


def test_energy_table_arranges_by_reading(X):
    paths = {v: U.unroll(X, 2, 10.0, 0.4, 1.0, v) for v in ("attention", "diffusion")}
    t = E.energy_table(paths, ("phi", "crate"), 10.0, 1.0)
    assert set(t) == {"phi", "crate"} and set(t["phi"]) == {"attention", "diffusion"}
    alone = E.energy_path(paths["diffusion"], ("crate",))["crate"]["values"]
    assert np.allclose(t["crate"]["diffusion"]["values"], alone)


# ---------------------------------------------------------------------------------------------------------------------
# Filters


def test_frequency_response_on_eigenvectors_of_a(X):
    kappa, beta, eta = 5.0, 1.0, 0.3
    A = torch.softmax(logits(X, X, kappa, beta, False), 1).numpy()
    mu, V = np.linalg.eig(A)
    mu, V = mu.real, V.real
    lam = E.attention_spectrum(X, kappa, beta)
    assert np.allclose(np.sort(1 - mu), lam, atol=1e-10)
    n, d_q = X.shape
    I = np.eye(n)
    maps = {"attention": I + 2 * eta * A, "diffusion": I + 2 * eta * (A - I),
            "paper": I + 2 * eta * (A - I) + 2 * eta / (d_q + beta) * I}
    for k in (0, 5, n - 1):
        v, l = V[:, k], 1 - mu[k]
        for name, M in maps.items():
            factor = (M @ v) @ v / (v @ v)
            assert factor == pytest.approx(float(E.frequency_response(l, name, eta, d_q, beta, relative=False)),
                                           rel=1e-9)
    assert E.frequency_response(0.0, "diffusion", eta) == pytest.approx(1.0)
    grid = np.linspace(0.01, 2.0, 50)  # one Euler step damps more than the flow it stands for
    assert np.all(E.frequency_response(grid, "diffusion", eta) < E.frequency_response(grid, "flow", eta))


def test_graph_modes_diagonalise_a(X):
    """R A = diag(1 - lambda) R for A = softmax of the logits built by hand, and the eigenvalues are the spectrum's."""
    kappa, beta = 5.0, 1.0
    A = torch.softmax(logits(X, X, kappa, beta, False), 1).numpy()
    lam, R = E.graph_modes(X, kappa, beta)
    assert np.allclose(lam, E.attention_spectrum(X, kappa, beta), atol=1e-12)
    assert np.allclose(R @ A, (1 - lam)[:, None] * R, atol=1e-10)
    assert lam[0] == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.matrix_rank(R) == X.shape[0]


@pytest.mark.parametrize("variant", ["diffusion", "attention", "paper"])
def test_mode_retention_on_the_frozen_graph_is_the_prediction(variant):
    """T steps of X <- X + 2 eta Delta X on X_0's graph without LayerNorm keep exactly |response|^T of each mode."""
    X0 = latents(60, 8, seed=4)
    kappa, beta, eta, T = 4.0, 1.0, 0.3, 5
    n, d_q = X0.shape
    A = torch.softmax(logits(X0, X0, kappa, beta, False), 1)
    step = {"diffusion": lambda Z: 2 * (A @ Z - Z), "attention": lambda Z: 2 * A @ Z,
            "paper": lambda Z: 2 * (A @ Z - Z) + 2 * Z / (d_q + beta)}[variant]
    path = [X0]
    for _ in range(T):
        path.append(path[-1] + eta * step(path[-1]))
    out = E.mode_retention(path, eta, d_q, beta, kappa, variant, n_modes=10)
    for part in ("top", "middle"):
        assert out[part]["measured"] == pytest.approx(out[part]["predicted"], rel=1e-6)
    assert out["n_steps"] == T and out["n_modes"] == 10
    lam = out["lam"]  # the prediction itself, from the closed form of the response
    assert out["top"]["predicted"] == pytest.approx(
        float(np.median(np.abs(E.frequency_response(lam[-10:], variant, eta, d_q, beta)) ** T)), rel=1e-12)


def test_mode_retention_by_step_is_the_prediction_on_the_frozen_graph_and_ends_at_the_last_step():
    """On X_0's graph without LayerNorm every step keeps exactly |response|^t of each mode: the per-step medians
    follow the prediction from t = 0 (all 1) to t = T, whose values are the summary's."""
    X0 = latents(60, 8, seed=5)
    kappa, beta, eta, T = 4.0, 1.0, 0.3, 4
    A = torch.softmax(logits(X0, X0, kappa, beta, False), 1)
    path = [X0]
    for _ in range(T):
        path.append(path[-1] + eta * 2 * (A @ path[-1] - path[-1]))
    out = E.mode_retention(path, eta, X0.shape[1], beta, kappa, "diffusion", n_modes=10)
    for part in ("top", "middle"):
        steps = out["steps"][part]
        assert steps["measured"].shape == steps["predicted"].shape == (T + 1,)
        assert steps["measured"][0] == pytest.approx(1.0) and steps["predicted"][0] == pytest.approx(1.0)
        assert np.allclose(steps["measured"], steps["predicted"], rtol=1e-6)
        assert steps["measured"][-1] == out[part]["measured"] and steps["predicted"][-1] == out[part]["predicted"]
        assert np.all(np.diff(steps["predicted"]) < 0)  # every mode above the constant one is damped


@pytest.mark.parametrize("variant", ["attention", "diffusion", "paper"])
def test_frozen_graph_path_is_the_block_with_the_graph_of_x0(variant):
    """Its first step is the real block's; every later step is Pi(X + eta Delta) with A computed at X_0 by hand."""
    X0 = latents(30, 6, seed=6)
    kappa, beta, eta = 5.0, 1.0, 0.4
    path = E.frozen_graph_path(X0, 3, kappa, eta, beta, variant)
    assert len(path) == 4 and torch.equal(path[0], X0)
    assert torch.allclose(path[1], U.block_step(X0, kappa, eta, beta, variant), atol=1e-12)
    A = torch.softmax(logits(X0, X0, kappa, beta, False), 1)
    c = {"attention": 0.0, "diffusion": 2.0, "paper": 2.0 - 2.0 / (6 + beta)}[variant]
    Z = path[2]
    assert torch.allclose(path[3], ln(Z + eta * (2 * A @ Z - c * Z)), atol=1e-12)
    real = U.unroll(X0, 3, kappa, eta, beta, variant)
    assert not torch.allclose(path[3], real[3], atol=1e-6)  # the real graph moves


def test_frozen_graph_path_refuses_bad_input():
    X0 = latents(10, 4)
    with pytest.raises(ValueError, match="n_steps"):
        E.frozen_graph_path(X0, 0)
    with pytest.raises(ValueError, match="variant"):
        E.frozen_graph_path(X0, 2, variant="exact")
    with pytest.raises(ValueError, match="eta"):
        E.frozen_graph_path(X0, 2, eta=-1.0)


def test_mode_retention_refuses_bad_input():
    X0 = latents(20, 6)
    with pytest.raises(ValueError, match="path"):
        E.mode_retention([X0])
    with pytest.raises(ValueError, match="n_modes"):
        E.mode_retention([X0, X0], n_modes=50, kappa=3.0)
    with pytest.raises(ValueError, match="variant"):
        E.mode_retention([X0, X0], variant="exact", kappa=3.0)


def test_differential_gap_tends_to_zero(X):
    gaps = E.differential_gap(X, 5.0, (10.0, 100.0, 1000.0), 1.0)
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-6
    A, A2 = torch.softmax(logits(X, X, 5.0, 1.0, False), 1), torch.softmax(logits(X, X, 10.0, 1.0, False), 1)
    I = torch.eye(24, dtype=F64)
    assert gaps[0] == pytest.approx(float(((A - A2) @ X - (A - I) @ X).norm() / ((A - I) @ X).norm()), rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("call, name", [
    (lambda X: E.energy(X, "nope"), "reading"),
    (lambda X: E.energy(X, "phi", kappa=0.0), "kappa"),
    (lambda X: E.energy(X, "phi", kappa=-1.0), "kappa"),
    (lambda X: E.energy(X, "phi", beta=0.0), "beta"),
    (lambda X: E.energy(X, "phi", mask="future"), "mask"),
    (lambda X: E.energy(X, "sinkformer", mask="causal"), "mask"),
    (lambda X: E.energy(X[0], "phi"), "X"),
    (lambda X: E.energy(X[:, :1], "phi"), "X"),
    (lambda X: E.energy(torch.full_like(X, float("nan")), "phi"), "X"),
    (lambda X: E.energy(X, "ple", reference=X[:3]), "reference"),
    (lambda X: E.energy(100.0 * X, "sphere"), "X"),
    (lambda X: E.phi_gradient(X, 0.0), "kappa"),
    (lambda X: E.update_direction(X, "nope"), "update"),
    (lambda X: E.update_direction(X, "sinkformer", mask="causal"), "mask"),
    (lambda X: E.update_alignment(X, "phi"), "readings"),
    (lambda X: E.update_alignment(X, ("phi",), ()), "updates"),
    (lambda X: E.gradient_field_asymmetry(X, "exact", n_probes=0), "n_probes"),
    (lambda X: E.energy_path([X], ("phi",)), "path"),
    (lambda X: E.energy_path([X, X[:5]], ("phi",)), "path"),
    (lambda X: E.energy_path([X, X], ("nope",)), "reading"),
    (lambda X: E.energy_table({}, ("phi",)), "paths"),
    (lambda X: E.frequency_response([0.5, 3.0], "diffusion"), "lam"),
    (lambda X: E.frequency_response([0.5], "exact"), "variant"),
    (lambda X: E.differential_gap(X, kappas2=()), "kappas2"),
    (lambda X: E.proposition_gaps(X, kappas=()), "kappas"),
])
def test_bad_input_names_the_parameter(X, call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call(X)
