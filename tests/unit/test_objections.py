"""Tests of probdr_lite.chapters.objections (and its figures) against answers computed independently here.

References: autograd and finite differences for gradients, numpy / scipy eigensolvers for spectra, closed forms for
orthogonal rows, dense formulas written from the notes for the attention and LayerNorm identities.
"""

import json
import math

import matplotlib
import numpy as np
import pytest
import scipy.sparse.linalg as ssl
import torch

from probdr_lite.chapters import objections as O
from probdr_lite import unrolled as U
from probdr_lite.chapters import objections as V
from probdr_lite.presentation.figures import objection_tests as figs
from probdr_lite.metrics import cluster_metrics, kmeans_nmi_over_seeds
from probdr_lite.presentation.plotting import figure_data

from .chapter_calls import chapter_calls, words_passed

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

F64 = torch.float64


def ln(Z):
    """LayerNorm without affine terms, written out (rows centred, squared norm d_q)."""
    Z = Z - Z.mean(1, keepdim=True)
    return math.sqrt(Z.shape[1]) * Z / Z.norm(dim=1, keepdim=True)


def latents(n, d_q, seed=0):
    return ln(torch.randn(n, d_q, generator=torch.Generator().manual_seed(seed), dtype=F64))


def ref_A(X, kappa, beta, causal=False):
    n, d = X.shape
    S = kappa / d * X @ X.T - beta * torch.eye(n, dtype=F64)
    if causal:
        S = S.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    return torch.softmax(S, dim=1)


def orthogonal_rows(sq_norms, d_q, seed=0):
    """Rows orthogonal to each other and to 1, with the given squared norms."""
    n = len(sq_norms)
    M = torch.randn(d_q, n + 1, generator=torch.Generator().manual_seed(seed), dtype=F64)
    M[:, 0] = 1.0
    Q = torch.linalg.qr(M)[0][:, 1:].T  # (n, d_q), orthonormal, orthogonal to 1
    return torch.sqrt(torch.as_tensor(sq_norms, dtype=F64))[:, None] * Q


@pytest.fixture(scope="module")
def X():
    return latents(40, 12, seed=1)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ---------------------------------------------------------------------------------------------------------------------
# Objection 1


def test_gradient_asymmetry_against_autograd_of_the_trace(X):
    """With L = I - A held fixed, autograd of tr(X^T L X) is the true gradient; 2 L X is the paper's."""
    A = ref_A(X, 3.0, 1.0)
    L = torch.eye(40, dtype=F64) - A
    Xg = X.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(torch.trace(Xg.T @ L @ Xg), Xg)
    expected = float((2 * L @ X - g).norm() / g.norm())
    assert O.gradient_asymmetry(X, 3.0, 1.0) == pytest.approx(expected, rel=1e-12)
    assert expected > 1e-3  # random latents at this kappa: small but not zero


def test_gradient_asymmetry_with_a_causal_mask(X):
    A = ref_A(X, 3.0, 1.0, causal=True)
    L = torch.eye(40, dtype=F64) - A
    expected = float(((L - L.T) @ X).norm() / ((L + L.T) @ X).norm())
    assert O.gradient_asymmetry(X, 3.0, 1.0, mask="causal") == pytest.approx(expected, rel=1e-12)
    assert expected > 5 * O.gradient_asymmetry(X, 3.0, 1.0)  # the mask, not the data, makes A non-symmetric


def test_equal_degrees_make_the_two_directions_agree():
    """Orthogonal rows of equal norm: every pair is equally similar, all degrees equal, A symmetric."""
    X = orthogonal_rows([16.0] * 6, 16)  # LayerNormed: centred, squared norm d_q = 16
    assert torch.allclose(ln(X), X, atol=1e-12)
    assert O.gradient_asymmetry(X, 5.0, 1.0) < 1e-12
    assert O.gradient_asymmetry(X, 5.0, 1.0, mask="causal") > 0.1  # a causal mask breaks the symmetry again


def test_asymmetry_along_path_and_by_kappa(X):
    path = U.unroll(X, 2, 10.0, 0.4, 1.0, "paper")
    out = O.asymmetry_along_path(path, 10.0, 1.0)
    for t, Xt in enumerate(path):
        A = ref_A(Xt, 10.0, 1.0)
        assert out["column_sum_min"][t] == pytest.approx(float(A.sum(0).min()), rel=1e-12)
        assert out["column_sum_max"][t] == pytest.approx(float(A.sum(0).max()), rel=1e-12)
        assert out["relative_difference"][t] == pytest.approx(O.gradient_asymmetry(Xt, 10.0, 1.0), rel=1e-12)
    by_kappa = O.asymmetry_by_kappa(X, [1.0, 3.0], 1.0)
    assert by_kappa[1] == pytest.approx(O.gradient_asymmetry(X, 3.0, 1.0))


def test_tangent_part_is_the_jacobian_of_layer_norm(X):
    """Pi(X + eps D) = X + eps T(D) + O(eps^2): compare with autograd's Jacobian-vector product of LayerNorm."""
    D = torch.randn(X.shape, generator=torch.Generator().manual_seed(5), dtype=F64)
    _, jvp = torch.autograd.functional.jvp(ln, (X,), (D,))
    assert torch.allclose(O.tangent_part(D, X), jvp, atol=1e-12)
    # a multiple of X and a constant shift of each row are invisible to LayerNorm to first order
    assert O.tangent_part(3.0 * X + 2.0, X).abs().max() < 1e-12
    assert O.tangent_cosine(D, D + 5.0 * X, X) == pytest.approx(1.0, abs=1e-12)


def test_asymmetry_along_path_tangent_measures(X):
    path = U.unroll(X, 2, 10.0, 0.4, 1.0, "paper")
    out = O.asymmetry_along_path(path, 10.0, 1.0, mask="causal")
    for t, Xt in enumerate(path):
        A = ref_A(Xt, 10.0, 1.0, causal=True)
        L = torch.eye(40, dtype=F64) - A
        paper, true = 2 * L @ Xt, (L + L.T) @ Xt
        _, t_paper = torch.autograd.functional.jvp(ln, (Xt,), (paper,))
        _, t_true = torch.autograd.functional.jvp(ln, (Xt,), (true,))
        cos = float((t_paper * t_true).sum() / (t_paper.norm() * t_true.norm()))
        assert out["tangent_cosine"][t] == pytest.approx(cos, rel=1e-10)
        assert out["tangent_relative_difference"][t] == pytest.approx(
            float((t_paper - t_true).norm() / t_true.norm()), rel=1e-10)
        assert out["cosine"][t] == pytest.approx(float((paper * true).sum() / (paper.norm() * true.norm())),
                                                 rel=1e-10)
        # the remainder of plain attention beyond half the log-sum-exp gradient, (A - A^T) X / 2
        R, AX = 0.5 * (A - A.T) @ Xt, A @ Xt
        _, t_R = torch.autograd.functional.jvp(ln, (Xt,), (R,))
        _, t_AX = torch.autograd.functional.jvp(ln, (Xt,), (AX,))
        assert out["remainder_share"][t] == pytest.approx(float(R.norm() / AX.norm()), rel=1e-10)
        assert out["tangent_remainder_share"][t] == pytest.approx(float(t_R.norm() / t_AX.norm()), rel=1e-10)
        # after LayerNorm the objection-1 gap is that remainder: ||T(2R)|| / ||T((A + A^T) X)||
        _, t_sym = torch.autograd.functional.jvp(ln, (Xt,), ((A + A.T) @ Xt,))
        assert out["tangent_relative_difference"][t] == pytest.approx(float(2 * t_R.norm() / t_sym.norm()),
                                                                      rel=1e-9)


@pytest.mark.parametrize("call, name", [
    (lambda X: O.asymmetry_along_path([], 3.0), "path"),
    (lambda X: O.asymmetry_along_path(X, 3.0), "path"),
    (lambda X: O.asymmetry_by_kappa(X, []), "kappas"),
    (lambda X: O.asymmetry_by_kappa(X, [1.0, -2.0]), "kappas"),
    (lambda X: O.gradient_asymmetry(X, 0.0), "kappa"),
    (lambda X: O.gradient_asymmetry(X[:, :1], 1.0), "X"),
    (lambda X: O.tangent_part(X[:, :3], X), "D"),
])
def test_objection_1_bad_input(X, call, name):
    with pytest.raises(ValueError, match=name):
        call(X)


# ---------------------------------------------------------------------------------------------------------------------
# Objection 2


def test_symmetric_part_min_eigenvalue_against_numpy_and_scipy():
    M = np.random.default_rng(0).standard_normal((60, 60))
    S = (M + M.T) / 2
    value = O.symmetric_part_min_eigenvalue(M)
    assert value == pytest.approx(np.linalg.eigvalsh(S)[0], abs=1e-10)
    lanczos = ssl.eigsh(S, k=1, which="SA", return_eigenvectors=False, tol=1e-12,
                       v0=np.random.default_rng(1).standard_normal(60))[0]
    assert value == pytest.approx(lanczos, abs=1e-8)


def test_symmetric_part_min_eigenvalue_of_a_two_by_two_counterexample():
    """Exercise 1 of the chapter: A = [[0, 1], [0, 1]] gives (1 - sqrt 2) / 2."""
    A = np.array([[0.0, 1.0], [0.0, 1.0]])
    assert O.symmetric_part_min_eigenvalue(np.eye(2) - A) == pytest.approx((1 - math.sqrt(2)) / 2, abs=1e-14)


def test_random_walk_laplacian_is_singular_and_not_positive(X):
    out = O.laplacian_spectrum(X, 10.0, 1.0)
    A = ref_A(X, 10.0, 1.0).numpy()
    S = np.eye(40) - (A + A.T) / 2
    assert out["min_eigenvalue"] == pytest.approx(np.linalg.eigvalsh(S)[0], abs=1e-12)
    assert out["min_eigenvalue"] <= 1e-12  # 1^T (I - A) 1 = 0
    assert out["null_residual"] < 1e-14
    shifted = O.laplacian_spectrum(X, 10.0, 1.0, gamma=0.5)
    assert shifted["min_eigenvalue"] == pytest.approx(out["min_eigenvalue"] + 0.5, abs=1e-12)
    assert shifted["null_residual"] == pytest.approx(0.5, abs=1e-12)


def test_symmetric_laplacian_plus_gamma_is_positive_definite(X):
    n, d = X.shape
    E = torch.exp(10.0 / d * X @ X.T - torch.eye(n, dtype=F64)).numpy()  # no rescaling: kappa = 10 is safe
    s = 1 / np.sqrt(E.sum(1))
    L_sym = np.eye(n) - s[:, None] * E * s[None, :]
    ev = np.linalg.eigvalsh(L_sym + 0.01 * np.eye(n))
    out = O.laplacian_spectrum(X, 10.0, 1.0, kind="symmetric", gamma=0.01)
    assert out["min_eigenvalue"] == pytest.approx(ev[0], abs=1e-12)
    assert out["min_eigenvalue"] == pytest.approx(0.01, abs=1e-10)
    assert out["null_residual"] == pytest.approx(0.01, abs=1e-12)
    along = O.spectrum_along_path([X, X], 10.0, 1.0, kind="symmetric", gamma=0.01)
    assert along["min_eigenvalue"].shape == (2,)


@pytest.mark.parametrize("call, name", [
    (lambda X: O.laplacian_spectrum(X, 3.0, kind="sym"), "kind"),
    (lambda X: O.laplacian_spectrum(X, 3.0, gamma=-1.0), "gamma"),
    (lambda X: O.symmetric_part_min_eigenvalue(np.ones((2, 3))), "M"),
    (lambda X: O.spectrum_along_path(None, 3.0), "path"),
])
def test_objection_2_bad_input(X, call, name):
    with pytest.raises(ValueError, match=name):
        call(X)


# ---------------------------------------------------------------------------------------------------------------------
# Objection 3


def test_full_gradient_against_finite_differences():
    X = latents(7, 5, seed=2)
    g = O.full_gradient(X, 3.0, 1.0)
    gen = torch.Generator().manual_seed(3)
    h = 1e-6
    for _ in range(3):
        V = torch.randn(7, 5, generator=gen, dtype=F64)
        fd = (float(U.full_objective(X + h * V, 3.0, 1.0)) - float(U.full_objective(X - h * V, 3.0, 1.0))) / (2 * h)
        assert float((g * V).sum()) == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_full_gradient_against_the_closed_form_of_unrolled(X):
    """unrolled's "full" direction builds the softmax derivative by hand (H = A + kappa/d_q A o (K - kbar))."""
    g = O.full_gradient(X, 10.0, 1.0)
    closed = U.update_direction(X, 10.0, 1.0, "full")
    assert torch.allclose(g, closed, rtol=1e-10, atol=1e-10)


def test_stop_gradient_check_against_autograd_of_the_stop_gradient_objective(X):
    out = O.stop_gradient_check(X, 10.0, 1.0, step=1e-5)
    A = ref_A(X, 10.0, 1.0)
    Xg = X.clone().requires_grad_(True)
    (g_sg,) = torch.autograd.grad(U.stop_gradient_objective(Xg, A, 1.0), Xg)
    g_full = O.full_gradient(X, 10.0, 1.0)
    assert out["cosine_stop_gradient"] == pytest.approx(O.cosine(g_sg, g_full), rel=1e-9)
    # a small step changes F by (step ||X||) <grad F, g_sg / ||g_sg||> to first order
    first_order = 1e-5 * float(X.norm()) * float((g_full * g_sg).sum() / g_sg.norm())
    assert out["delta_F_small"] == pytest.approx(first_order, rel=1e-2)
    X1 = U.block_step(X, 10.0, 0.4, 1.0, "paper")
    F = U.full_objective
    assert out["delta_F_block"] == pytest.approx(float(F(X1, 10.0, 1.0) - F(X, 10.0, 1.0)))


@pytest.mark.parametrize("kappa, beta", [(1.0, 0.5), (10.0, 1.0), (30.0, 3.0)])
def test_stop_gradient_direction_is_the_gradient_of_phi(X, kappa, beta):
    """The proposition inside objection 3: autograd of Phi, written out here, equals the stop-gradient direction."""
    out = O.stop_gradient_check(X, kappa, beta, step=1e-5)
    Xg = X.clone().requires_grad_(True)
    n, d = X.shape
    S = kappa / d * Xg @ Xg.T - beta * torch.eye(n, dtype=F64)
    phi = torch.logdet(Xg @ Xg.T + beta * torch.eye(n, dtype=F64)) - (Xg ** 2).sum() \
        + d / kappa * torch.logsumexp(S, dim=1).sum()
    (g,) = torch.autograd.grad(phi, Xg)
    g_sg = U.update_direction(X, kappa, beta, "exact")
    assert float((g - g_sg).norm() / g_sg.norm()) < 1e-10
    assert out["phi_gap"] < 1e-10
    assert out["delta_phi_small"] > 0  # a small step along the gradient of Phi raises Phi


def test_stop_gradient_is_exact_when_attention_ignores_x(X):
    """As kappa -> 0 the attention is uniform whatever X is, so the dropped terms vanish."""
    out = O.stop_gradient_check(X, 1e-4, 1.0)
    assert out["cosine_stop_gradient"] > 1 - 1e-6
    assert out["delta_F_small"] > 0


def test_stop_gradient_sweep_matches_single_checks():
    images = np.random.default_rng(0).random((30, 20)).astype(np.float32)
    out = O.stop_gradient_sweep(images, kappas=[1.0, 30.0], seeds=[4], n=10, d_q=8, eta=0.3)
    assert out["cosine_paper"].shape == (2, 1) and out["eta"] == 0.3
    idx = np.random.default_rng(4).choice(30, 10, replace=False)
    X = U.embed(torch.from_numpy(images[idx]).double(), d_q=8, seed=4)
    one = O.stop_gradient_check(X, 30.0, 1.0, eta=0.3)
    assert out["cosine_stop_gradient"][1, 0] == pytest.approx(one["cosine_stop_gradient"], rel=1e-12)


@pytest.mark.parametrize("call, name", [
    (lambda X: O.stop_gradient_check(X, 3.0, beta=0.0), "beta"),
    (lambda X: O.stop_gradient_check(X, 3.0, step=0.0), "step"),
    (lambda X: O.stop_gradient_sweep(np.ones((5, 4)), n=10), "n"),
    (lambda X: O.stop_gradient_sweep(np.ones((5, 4)), seeds=[], n=3), "seeds"),
    (lambda X: O.cosine(torch.zeros(3), torch.ones(3)), "zero"),
])
def test_objection_3_bad_input(X, call, name):
    with pytest.raises(ValueError, match=name):
        call(X)


# ---------------------------------------------------------------------------------------------------------------------
# Objection 4


def test_regulariser_approximation_closed_form_for_orthogonal_rows():
    d_q, beta = 32, 1.0
    s = np.array([32.0, 32.0, 10.0, 50.0, 5.0])
    X = orthogonal_rows(s, d_q)
    # exact row i = 2 x_i / (s_i + beta); approx row i = 2 x_i / (d_q + beta)
    a, e = 1 / (d_q + beta), 1 / (s + beta)
    rel = math.sqrt(np.sum(s * (a - e) ** 2) / np.sum(s * e ** 2))
    cos = np.sum(s * a * e) / math.sqrt(np.sum(s * a ** 2) * np.sum(s * e ** 2))
    out = O.regulariser_approximation(X, beta)
    assert out["relative_error"] == pytest.approx(rel, rel=1e-10)
    assert out["cosine"] == pytest.approx(cos, rel=1e-10)
    assert out["norm_ratio"] == pytest.approx(math.sqrt(np.sum(s * e ** 2) / np.sum(s * a ** 2)), rel=1e-10)
    exact_case = O.regulariser_approximation(orthogonal_rows([32.0] * 4, d_q), beta)
    assert exact_case["relative_error"] < 1e-12 and exact_case["cosine"] == pytest.approx(1.0, abs=1e-12)


def test_regulariser_approximation_when_n_exceeds_d_q():
    X = latents(300, 16, seed=5)
    exact = 2 * np.linalg.solve(X.numpy() @ X.numpy().T + np.eye(300), X.numpy())  # the n x n system, directly
    approx = 2 * X.numpy() / 17
    out = O.regulariser_approximation(X, 1.0)
    assert out["relative_error"] == pytest.approx(np.linalg.norm(approx - exact) / np.linalg.norm(exact), rel=1e-8)


@pytest.mark.parametrize("n, d_q", [(4, 2048), (8192, 64)])
def test_regulariser_prediction_matches_random_latents_far_from_n_equal_d_q(n, d_q):
    measured = O.regulariser_approximation(latents(n, d_q, seed=7), 1.0)["relative_error"]
    assert measured == pytest.approx(O.regulariser_prediction(n, d_q, 1.0), rel=0.15)


def test_regulariser_sweep_shapes_and_values():
    out = O.regulariser_sweep([8, 40], d_q=16, seeds=[0, 1])
    assert out["relative_error"].shape == (2, 2)
    assert math.isnan(out["prediction"][1])  # 40 is neither << 16 nor >> 16
    X = ln(torch.randn(8, 16, generator=torch.Generator().manual_seed(1), dtype=F64))
    assert out["cosine"][0, 1] == pytest.approx(O.regulariser_approximation(X, 1.0)["cosine"], rel=1e-12)


@pytest.mark.parametrize("call, name", [
    (lambda: O.regulariser_approximation(latents(4, 8), beta=0.0), "beta"),
    (lambda: O.regulariser_sweep([]), "ns"),
    (lambda: O.regulariser_sweep([1]), "ns"),
    (lambda: O.regulariser_prediction(0, 8), "n"),
])
def test_objection_4_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------------------------------------------------------------
# The MNIST runs and the clustering numbers


@pytest.fixture(scope="module")
def small_runs():
    from probdr_lite.data import load_mnist

    images, labels = load_mnist(n=150, stratified=True)
    paths = O.mnist_paths(images, ("attention", "paper"), n_steps=2, d_q=16)
    return images, labels, paths


def test_mnist_paths_start_at_the_embedding(small_runs):
    images, _, paths = small_runs
    X0 = U.embed(torch.from_numpy(images).double(), d_q=16, seed=0)
    for v, path in paths.items():
        # the same embedding up to float64 rounding: the matrix product's sum order follows the thread count
        assert len(path) == 3 and torch.allclose(path[0], X0, rtol=0, atol=1e-12)
        expected = U.unroll(X0, 2, 30.0, 0.4, 1.0, v)
        assert torch.allclose(path[-1], expected[-1], atol=1e-12)


def test_metrics_by_variant_equal_cluster_metrics(small_runs):
    _, labels, paths = small_runs
    out = O.metrics_by_variant(paths, labels, layers=[0, 2])
    direct = cluster_metrics(paths["paper"][2].numpy(), labels)
    nmis = kmeans_nmi_over_seeds(paths["paper"][2].numpy(), labels)  # the NMI is the mean over the k-means seeds
    direct["kmeans_nmi"] = float(nmis.mean())
    assert out["paper"]["kmeans_nmi_sd"][1] == pytest.approx(nmis.std(ddof=1), abs=1e-12)
    assert (out["paper"]["kmeans_nmi_min"][1], out["paper"]["kmeans_nmi_max"][1]) == (nmis.min(), nmis.max())
    for key in O.METRIC_NAMES:
        assert out["paper"][key][1] == pytest.approx(direct[key], abs=1e-12)
        assert out["paper"][key][0] == out["attention"][key][0]  # layer 0 is shared
    assert list(out["layers"]) == [0, 2]


@pytest.mark.parametrize("call, name", [
    (lambda p, l: O.metrics_by_variant({}, l), "paths"),
    (lambda p, l: O.metrics_by_variant({"a": p["paper"], "b": p["paper"][:2]}, l), "paths"),
    (lambda p, l: O.metrics_by_variant(p, l, layers=[5]), "layers"),
    (lambda p, l: O.mnist_paths(np.ones((4, 6)), variants="paper"), "variants"),
    (lambda p, l: O.mnist_paths(np.ones((4, 6)), variants=["nope"]), "variants"),
])
def test_mnist_bad_input(small_runs, call, name):
    _, labels, paths = small_runs
    with pytest.raises(ValueError, match=name):
        call(paths, labels)


# ---------------------------------------------------------------------------------------------------------------------
# Derived points


def test_rescaled_step_identity_one_step_by_hand(X):
    """Pi(X - h L X) = Pi(X + h / (1 - h) A X) for h = 2 eta < 1, written out densely here."""
    h = 0.8
    A = ref_A(X, 30.0, 1.0)
    L = torch.eye(40, dtype=F64) - A
    assert torch.allclose(ln(X - h * L @ X), ln(X + h / (1 - h) * A @ X), atol=1e-13)
    gaps = O.rescaled_step_gaps(X, 3.0, 0.4, 1.0, n_steps=3)
    assert gaps["attention_gap"] < 1e-12 and gaps["paper_gap"] < 1e-12
    assert gaps["eta_attention"] == pytest.approx(2.0)
    assert gaps["eta_diffusion"] == pytest.approx(0.4 / (1 + 0.8 / 13))
    # the identity is not empty: the same eta in both variants gives different latents
    same_eta = U.unroll(X, 3, 3.0, 0.4, 1.0, "attention")[-1] - U.unroll(X, 3, 3.0, 0.4, 1.0, "diffusion")[-1]
    assert float(same_eta.abs().max()) > 1e-2


def test_diagonal_logits_are_kappa_times_cosine(X):
    S = O.attention_logits(X, "diagonal", kappa=7.0)
    Xn = X / X.norm(dim=1, keepdim=True)
    assert torch.allclose(S, 7.0 * Xn @ Xn.T, atol=1e-12)
    assert O.logit_similarity(X, "diagonal", kappa=7.0)["correlation"] == pytest.approx(1.0, abs=1e-12)


def test_standard_logits_are_small_and_unrelated_to_similarity():
    X = latents(200, 64, seed=3)
    sds, corrs = [], []
    for seed in range(4):
        out = O.logit_similarity(X, "standard", std=0.02, seed=seed)
        sds.append(out["logit_sd"])
        corrs.append(out["correlation"])
    assert np.mean(sds) == pytest.approx(0.02 ** 2 * 64, rel=0.2)  # the spread of a random bilinear form
    assert abs(np.mean(corrs)) < 0.1


@pytest.mark.parametrize("call, name", [
    (lambda X: O.rescaled_step_gaps(X, eta=0.5), "eta"),
    (lambda X: O.attention_logits(X, "gpt2"), "init"),
    (lambda X: O.attention_logits(X, std=0.0), "std"),
    (lambda X: O.logit_similarity(X[:2]), "X"),
])
def test_derived_bad_input(X, call, name):
    with pytest.raises(ValueError, match=name):
        call(X)


# ---------------------------------------------------------------------------------------------------------------------
# Objection 5: the trained-transformers chapter's results files


ITERS = [0, 10, 20]


def make_row(task, variant, seed, val, acc=None):
    config = {"max_iters": 20} if task == "charlm" else {"epochs": 3}
    curve = ([[it, v + 0.1, v] for it, v in zip(ITERS, val)] if task == "charlm"
             else [[it, v + 0.1, v, a] for it, v, a in zip(ITERS, val, acc)])
    row = {"schema_version": 1, "task": task, "variant": variant, "seed": seed, "config": config,
           "final_val_loss": curve[-1][2], "best_val_loss": min(c[2] for c in curve),
           "curve_columns": ["iter", "train_loss", "val_loss"] + ([] if task == "charlm" else ["val_acc"]),
           "curve": curve, "throughput": 100.0, "throughput_unit": "tokens/s" if task == "charlm" else "images/s",
           "train_seconds": 1.0, "wall_seconds": 1.0, "torch_version": "x", "device": "cpu", "git_commit": "x",
           "command": "test", "timestamp": "2026-01-01T00:00:00+00:00"}
    if task == "vit":
        row["final_val_acc"], row["best_val_acc"] = curve[-1][3], max(c[3] for c in curve)
    return row


def write_charlm(path, n_seeds, shift, spread=0.001):
    rows = []
    for s in range(n_seeds):
        base = [3.0, 2.5, 2.0 + 0.01 * s]
        rows.append(make_row("charlm", "attention", s, base))
        rows.append(make_row("charlm", "diffusion", s, [v + shift + spread * s for v in base]))
    (path / "charlm_cpu.json").write_text(json.dumps(rows))
    return rows


def test_training_runs_read_the_trained_transformers_chapters_round():
    """Objection 5 reads the chapter's confirmatory round and its per-budget test of the initialisation's effect."""
    from probdr_lite.experiments.confirmatory import confirmatory_table, load_rows
    from probdr_lite.experiments.families import initialisation_effect
    from probdr_lite.experiments.files import task_rows

    runs = V.training_runs()
    theirs = confirmatory_table(load_rows())
    assert [(e["task"], e["init"], e["verdict"], e["n"]) for e in runs["round"]] == \
        [(e["task"], e["init"], e["verdict"], e["n"]) for e in theirs]
    rows = {t: task_rows(t) for t in ("charlm", "vit")}
    for e in runs["interaction"]:
        ref = initialisation_effect(rows[e["task"]], cells="both", budget=e["budget"], cov_type="cluster")
        assert e["ci"] == pytest.approx(ref["ci"])
    assert sorted((e["task"], e["budget"]) for e in runs["interaction"]) == [
        ("charlm", "early"), ("charlm", "plateau"), ("vit", "early"), ("vit", "plateau")]


def test_training_runs_without_results_raise(tmp_path):
    with pytest.raises(ValueError):
        V.training_runs(tmp_path)
    with pytest.raises(ValueError, match="runs"):
        V.single_runs_facts({})


def metrics_dict(paper, attention, nmi_spread=0.01):
    """metrics_by_variant's shape: the four numbers at layers 0 and 8 of two variants, the NMI's runs over the
    k-means seeds spanning its mean +- ``nmi_spread``."""
    out = {"layers": np.array([0, 8])}
    for name, (first, last) in (("paper", paper), ("attention", attention)):
        out[name] = {k: np.array([first[i], last[i]]) for i, k in enumerate(O.METRIC_NAMES)}
        nmi = out[name]["kmeans_nmi"]
        out[name]["kmeans_nmi_sd"] = np.array([0.01, 0.01])  # the NMI's spread over the k-means seeds
        out[name]["kmeans_nmi_min"], out[name]["kmeans_nmi_max"] = nmi - nmi_spread, nmi + nmi_spread
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Figures and tables


def test_threshold_table_reads_its_labels_from_the_package():
    table = figs.thresholds_table()
    assert [row[0] for row in table.body] == [figs.THRESHOLD_NAMES[k] for k in O.THRESHOLDS]  # words, not keys
    assert not set(row[0] for row in table.body) & set(O.THRESHOLDS)
    assert [row[2] for row in table.body] == [figs.THRESHOLD_DECIDES[k] for k in O.THRESHOLDS]
    assert [row[1] for row in table.body] == [f"{v:g}" for v in O.THRESHOLDS.values()]
    assert set(figs.THRESHOLD_DECIDES) == set(O.THRESHOLDS) == set(figs.THRESHOLD_NAMES)  # one each, none left over
    with pytest.raises(KeyError, match="'unknown' has no label"):  # a missing label raises, never prints the key
        figs.thresholds_table({**O.THRESHOLDS, "unknown": 0.5})


def test_a_missing_label_raises_instead_of_printing_its_key(monkeypatch):
    from probdr_lite.presentation.figures import recipes as R

    runs = V.training_runs()
    monkeypatch.delitem(R.ROUND_NAMES, "charlm")
    with pytest.raises(KeyError, match="'charlm' has no label"):
        figs.single_runs_table(runs)
    with pytest.raises(ValueError):  # an update without a style: no fallback to its key
        figs._style("no such update")


def test_regulariser_table_prints_each_point():
    r = {"cosine": 0.4493, "relative_error": 0.8912, "norm_ratio": 2.1551}
    table = figs.regulariser_table([("32 MNIST latents", 32, r)])
    assert table.body == [["32 MNIST latents", "32", "0.449", "0.89", "2.155"]]


def test_the_objections_chapter_writes_its_tables_words():
    """The single-runs table's caption is written out in the chapter; the threshold labels are the package's."""
    (single,) = chapter_calls("objections", "single_runs_table")
    caption = words_passed(single, "caption")
    assert caption and "{" not in caption
    (thresholds,) = chapter_calls("objections", "thresholds_table")
    assert not thresholds.args and not thresholds.keywords


def test_asymmetry_and_spectrum_figures_draw_the_numbers():
    mnist = {"relative_difference": np.array([0.4, 0.6]), "column_sum_min": np.array([0.5, 0.4]),
             "column_sum_max": np.array([1.5, 2.0])}
    mnist["tangent_cosine"] = np.array([0.99, 0.97])
    causal = {**mnist, "relative_difference": np.array([0.9, 0.95]), "tangent_cosine": np.array([0.8, 0.75])}
    fig = figs.asymmetry_figure(mnist, causal, [1, 30], [1e-4, 1e-9])
    drawn = figure_data(fig)
    assert len(fig.axes) == 4
    assert any(a.shape == (2, 2) and np.allclose(a[:, 1], [0.9, 0.95]) for a in drawn)
    assert any(a.shape == (2, 2) and np.allclose(a[:, 1], [0.8, 0.75]) for a in drawn)
    fig = figs.spectrum_figure([-0.1, -0.05], [0.01, 0.01], 0.01)
    assert any(a.shape == (2, 2) and np.allclose(a[:, 1], [-0.1, -0.05]) for a in figure_data(fig))
    with pytest.raises(ValueError, match="random_values"):
        figs.asymmetry_figure(mnist, causal, [1, 30], [1e-4])
    with pytest.raises(ValueError, match="mnist"):
        figs.asymmetry_figure({}, causal, [1], [1e-4])


def test_stop_gradient_and_regulariser_figures():
    sweep = {"kappas": np.array([1.0, 30.0]), "eta": 0.25,
             "cosine_stop_gradient": np.array([[1.0, 0.99], [-0.5, -0.6]]),
             "cosine_paper": np.array([[0.9, 0.95], [-0.4, -0.5]]), "delta_F_block": np.array([[5, 6], [-2, -3]])}
    fig = figs.stop_gradient_figure(sweep)
    assert len(fig.axes) == 2
    assert any(a.shape == (2, 2) and np.allclose(a[:, 1], [0.995, -0.55]) for a in figure_data(fig))
    assert "η = 0.25" in fig.axes[1].get_title()  # the step the sweep's block took, not a fixed one
    reg = O.regulariser_sweep([8, 512], d_q=32, seeds=[0])
    fig = figs.regulariser_figure(reg, [("MNIST", 100, {"relative_error": 3.0, "cosine": 0.3})], d_q=32)
    assert any(a.shape == (1, 2) and np.allclose(a, [[100, 3.0]]) for a in figure_data(fig))
    with pytest.raises(ValueError, match="sweep must be the dict returned by .*stop_gradient_sweep"):
        figs.stop_gradient_figure({"kappas": [1]})
    with pytest.raises(ValueError, match=r"sweep\['eta'\]"):
        figs.stop_gradient_figure({**sweep, "eta": 0.0})
    with pytest.raises(ValueError, match="d_q"):
        figs.regulariser_figure(reg, d_q=1)


def test_metric_figure():
    m = metrics_dict(([0.9, 0.05, 0.8, 0.4], [0.7, 0.01, 1.5, 0.5]), ([0.9, 0.05, 0.8, 0.4], [0.85, 0.08, 1.2, 0.45]))
    fig = figs.layer_metrics_figure(m)
    assert len(fig.axes) == 4
    assert any(a.shape == (2, 2) and np.allclose(a[:, 1], [0.8, 1.5]) for a in figure_data(fig))
    # the NMI panel draws its spread over the k-means seeds as error bars (0.01 either side)
    nmi_axis = fig.axes[list(figs.METRICS).index("kmeans_nmi")]
    assert nmi_axis.containers and "k-means seeds" in nmi_axis.get_title()
    bars = [c for c in nmi_axis.containers if c.has_yerr][0]
    segments = bars.lines[2][0].get_segments()
    assert np.allclose([seg[:, 1] for seg in segments][0], [0.39, 0.41])


def test_single_runs_table():
    runs = V.training_runs()
    table = figs.single_runs_table(runs, caption="a caption")
    assert table.header == list(figs.SINGLE_RUNS_HEADER) and table.caption == "a caption"
    assert len(table.body) == len(runs["round"]) == 4
    for e, row in zip(runs["round"], table.body):
        assert row[2] == str(e["n"]) and row[-1] == e["verdict"]
        assert len(row[3].split(", ")) == e["n"] and row[4] == f"{e['n_better']} / {e['n_worse']}"
    with pytest.raises(ValueError, match="runs"):
        figs.single_runs_table({})
