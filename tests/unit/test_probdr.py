"""Tests for probdr_lite.probdr: Wishart KL, the LE-ELBO, its optimum and gradient ascent, PCA twin."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy.optimize import minimize
from scipy.stats import multivariate_normal, wishart
from sklearn.datasets import make_moons
from sklearn.decomposition import PCA

from probdr_lite.graphs import knn_graph, laplacian
from probdr_lite.probdr import (
    fit_le_elbo,
    le_closed_form,
    le_elbo,
    le_elbo_grad,
    le_elbo_hessian,
    le_lipschitz,
    pca_closed_form,
    pca_elbo,
    regularize_laplacian,
    unbounded_direction_demo,
    wishart_kl,
)


def random_spd(n, rng, jitter=0.5):
    A = rng.normal(size=(n, n))
    return A @ A.T / n + jitter * np.eye(n)


def gram(X):
    return X @ X.T


def rel_gram_err(X, Y):
    return np.linalg.norm(gram(X) - gram(Y)) / np.linalg.norm(gram(Y))


@pytest.fixture(scope="module")
def moons_graph():
    """Connected 8-NN graph on 150 two-moons points."""
    Y = make_moons(150, noise=0.05, random_state=0)[0]
    W = knn_graph(Y, 8)
    assert sp.csgraph.connected_components(W)[0] == 1
    return W


@pytest.fixture(scope="module")
def moons_laplacian(moons_graph):
    """Symmetric normalised Laplacian L_sym (null vector D^{1/2} 1, eigenvalues in [0, 2])."""
    return laplacian(moons_graph, "symmetric").toarray()


@pytest.fixture(scope="module")
def raw_laplacian():
    """Raw Laplacian L = D - W (L 1 = 0) of a connected 6-NN graph on 60 two-moons points."""
    W = knn_graph(make_moons(60, noise=0.05, random_state=0)[0], 6)
    assert sp.csgraph.connected_components(W)[0] == 1
    return laplacian(W, "unnormalized").toarray()


# --- Wishart KL --------------------------------------------------------------

@pytest.mark.parametrize("nu", [5.0, 3.5])
def test_wishart_kl_matches_monte_carlo(nu):
    """KL = E_q[log q(P) - log p(P)], P ~ W(V1, nu), estimated from 2e5 samples."""
    rng = np.random.default_rng(0)
    V1, V2 = random_spd(3, rng), random_spd(3, rng)
    q, p = wishart(df=nu, scale=V1), wishart(df=nu, scale=V2)
    P = q.rvs(200_000, random_state=1)  # (N, 3, 3)
    # For equal nu the log-density ratio is -tr((V1^{-1} - V2^{-1}) P)/2 - (nu/2) log(|V1|/|V2|);
    # check that against SciPy's logpdf on a subset, then use it on all samples.
    diff = np.linalg.inv(V1) - np.linalg.inv(V2)
    log_ratio = (-0.5 * np.einsum("ij,nji->n", diff, P)
                 - 0.5 * nu * (np.linalg.slogdet(V1)[1] - np.linalg.slogdet(V2)[1]))
    sub = np.moveaxis(P[:2000], 0, -1)
    np.testing.assert_allclose(log_ratio[:2000], q.logpdf(sub) - p.logpdf(sub), rtol=1e-9,
                               atol=1e-9)
    mc, se = log_ratio.mean(), log_ratio.std() / np.sqrt(len(log_ratio))
    exact = wishart_kl(V1, V2, nu)
    assert abs(mc - exact) < 4 * se
    assert abs(mc - exact) < 1e-2 * exact


def test_wishart_kl_zero_iff_equal_and_positive():
    rng = np.random.default_rng(2)
    V = random_spd(4, rng)
    assert abs(wishart_kl(V, V, 4.0)) < 1e-12
    assert wishart_kl(V, random_spd(4, rng), 4.0) > 0
    # float32 input gives the same number
    V2 = random_spd(4, rng)
    np.testing.assert_allclose(wishart_kl(V.astype(np.float32), V2.astype(np.float32), 6),
                               wishart_kl(V, V2, 6), rtol=1e-5)


def test_le_elbo_is_minus_wishart_kl_plus_constant():
    """ELBO(X) = -KL(W(L/nu, nu) || W(C^{-1}/nu, nu)) - (nu/2)(log det L + n)."""
    rng = np.random.default_rng(3)
    n, q, beta = 6, 2, 0.7
    nu = n + 1.0
    L = random_spd(n, rng)
    for _ in range(3):
        X = rng.normal(size=(n, q))
        C = X @ X.T + beta * np.eye(n)
        kl = wishart_kl(L / nu, np.linalg.inv(C) / nu, nu)
        const = 0.5 * nu * (np.linalg.slogdet(L)[1] + n)
        np.testing.assert_allclose(le_elbo(X, L, beta, nu), -kl - const, rtol=1e-10)


def test_wishart_kl_bad_inputs():
    rng = np.random.default_rng(4)
    V = random_spd(3, rng)
    with pytest.raises(ValueError, match="nu"):
        wishart_kl(V, V, 2.0)  # needs nu > n - 1 = 2
    with pytest.raises(ValueError, match="V1"):
        wishart_kl(-V, V, 5)
    asym = V.copy()
    asym[0, 1] += 1.0
    with pytest.raises(ValueError, match="V2.*symmetric"):
        wishart_kl(V, asym, 5)
    with pytest.raises(ValueError, match="V2"):
        wishart_kl(V, np.eye(4), 5)
    with pytest.raises(ValueError, match="V1"):
        wishart_kl(np.ones((3, 2)), V, 5)
    bad = V.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="V1"):
        wishart_kl(bad, V, 5)
    with pytest.raises(TypeError, match="nu"):
        wishart_kl(V, V, "5")


# --- LE-ELBO and its gradient --------------------------------------------------

def direct_elbo(X, L, beta, nu):
    n = X.shape[0]
    C = X @ X.T + beta * np.eye(n)
    return 0.5 * nu * (np.linalg.slogdet(C)[1] - np.trace(C @ L))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_le_elbo_matches_dense_formula(dtype):
    rng = np.random.default_rng(5)
    n, q = 30, 3
    L = rng.normal(size=(n, n))  # not symmetric: the formula still holds
    X = rng.normal(size=(n, q))
    ref = direct_elbo(X, L, 0.3, 2.0)
    rtol = 1e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(le_elbo(X.astype(dtype), L.astype(dtype), 0.3, 2.0), ref,
                               rtol=rtol)
    np.testing.assert_allclose(le_elbo(torch.from_numpy(X), sp.csr_matrix(L), 0.3, 2.0), ref,
                               rtol=1e-11)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("symmetric", [True, False])
def test_le_elbo_grad_matches_autograd(dtype, symmetric):
    rng = np.random.default_rng(6)
    n, q, beta, nu = 25, 4, 0.5, 3.0
    L = rng.normal(size=(n, n))
    if symmetric:
        L = L + L.T
    X = rng.normal(size=(n, q))
    Xt = torch.tensor(X, requires_grad=True)
    Lt = torch.tensor(L)
    C = Xt @ Xt.T + beta * torch.eye(n, dtype=torch.float64)
    elbo = 0.5 * nu * (torch.logdet(C) - torch.trace(C @ Lt))
    (ref,) = torch.autograd.grad(elbo, Xt)
    g = le_elbo_grad(X.astype(dtype), L.astype(dtype), beta, nu)
    assert g.dtype == dtype and g.shape == (n, q)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g, ref.numpy(), **tol)
    np.testing.assert_allclose(le_elbo_grad(X, sp.csr_matrix(L), beta, nu), ref.numpy(),
                               rtol=1e-10, atol=1e-10)


def test_le_bad_inputs():
    rng = np.random.default_rng(7)
    L = random_spd(5, rng)
    X = rng.normal(size=(5, 2))
    for fn in (le_elbo, le_elbo_grad):
        with pytest.raises(ValueError, match="L_hat"):
            fn(X, np.ones((5, 4)), 1.0)
        with pytest.raises(ValueError, match="L_hat"):
            fn(X, np.eye(6), 1.0)
        with pytest.raises(ValueError, match="beta"):
            fn(X, L, -1.0)
        with pytest.raises(ValueError, match="beta"):
            fn(X, L, 0.0)
        with pytest.raises(ValueError, match="nu"):
            fn(X, L, 1.0, nu=0.0)
        with pytest.raises(ValueError, match="X"):
            fn(X[:, 0], L, 1.0)
        bad = X.copy()
        bad[0, 0] = np.inf
        with pytest.raises(ValueError, match="X"):
            fn(bad, L, 1.0)
        badL = L.copy()
        badL[2, 2] = np.nan
        with pytest.raises(ValueError, match="L_hat"):
            fn(X, badL, 1.0)


@pytest.mark.parametrize("symmetric", [True, False])
def test_le_elbo_hessian_matches_autograd(symmetric):
    rng = np.random.default_rng(16)
    n, q, beta, nu = 9, 3, 0.4, 2.0
    L = rng.normal(size=(n, n))
    if symmetric:
        L = L + L.T
    X = rng.normal(size=(n, q))
    Lt = torch.tensor(L)

    def elbo(x, term):
        C = x.reshape(n, q) @ x.reshape(n, q).T + beta * torch.eye(n, dtype=torch.float64)
        return 0.5 * nu * ((torch.logdet(C) if term != "trace" else 0) - (torch.trace(C @ Lt) if term != "logdet" else 0))

    for term in ("elbo", "logdet", "trace"):
        ref = torch.autograd.functional.hessian(lambda x: elbo(x, term), torch.tensor(X.ravel())).numpy()
        np.testing.assert_allclose(le_elbo_hessian(X, L, beta, nu, term=term), ref, rtol=1e-9, atol=1e-9)
        # centred: the same quadratic form on an orthonormal basis Q of the directions with 1^T V = 0
        Hc = le_elbo_hessian(X, sp.csr_matrix(L), beta, nu, centre=True, term=term)
        Q = np.linalg.qr(np.eye(n) - np.ones((n, n)) / n)[0][:, : n - 1]
        B = np.kron(Q, np.eye(q))  # row-major vec of Q V
        assert Hc.shape == ((n - 1) * q,) * 2
        np.testing.assert_allclose(np.linalg.eigvalsh(Hc), np.linalg.eigvalsh(B.T @ ref @ B), rtol=1e-9, atol=1e-9)


def test_le_elbo_hessian_log_det_part_stays_in_its_interval():
    """The log-det part's curvatures lie in [-nu/(8 beta), nu/beta] at every X, and both ends are reached: 1/beta
    at X = 0, -1/(8 beta) at a column with sigma^2 = 3 beta."""
    rng = np.random.default_rng(17)
    beta, nu = 0.3, 1.5
    low, high = np.inf, -np.inf
    for _ in range(300):
        n, q = rng.integers(2, 7), rng.integers(1, 4)
        X = rng.normal(size=(n, q)) * rng.uniform(0.01, 3.0) * np.sqrt(beta)
        lam = np.linalg.eigvalsh(le_elbo_hessian(X, np.eye(n), beta, nu, term="logdet"))
        low, high = min(low, lam.min()), max(high, lam.max())
    assert -nu / (8 * beta) - 1e-12 <= low < 0 < high <= nu / beta + 1e-12
    np.testing.assert_allclose(np.linalg.eigvalsh(le_elbo_hessian(np.zeros((4, 2)), np.eye(4), beta, nu,
                                                                  term="logdet")), nu / beta)
    at = np.zeros((4, 1))
    at[0, 0] = np.sqrt(3 * beta)
    assert np.linalg.eigvalsh(le_elbo_hessian(at, np.eye(4), beta, nu, term="logdet")).min() == \
        pytest.approx(-nu / (8 * beta), rel=1e-12)
    # so the whole Hessian's norm stays within le_lipschitz, the sum of the two parts' norms
    L = random_spd(6, rng)
    for _ in range(50):
        X = rng.normal(size=(6, 2)) * rng.uniform(0.01, 3.0)
        assert np.abs(np.linalg.eigvalsh(le_elbo_hessian(X, L, beta, nu))).max() <= le_lipschitz(L, beta, nu)


def test_le_elbo_hessian_bad_inputs():
    X, L = np.ones((4, 2)), np.eye(4)
    with pytest.raises(ValueError, match="term"):
        le_elbo_hessian(X, L, 1.0, term="log")
    with pytest.raises(ValueError, match="L_hat"):
        le_elbo_hessian(X, np.eye(5), 1.0)
    with pytest.raises(ValueError, match="beta"):
        le_elbo_hessian(X, L, 0.0)


# --- the closed form ---------------------------------------------------------

def closed_form_elbo(lam, n, beta, trace_L, nu=1.0):
    """ELBO at X* from the eigenvalues alone: kept directions have s^2 + beta = 1/lambda."""
    kept = lam[lam < 1.0 / beta]
    logdet = np.sum(-np.log(kept)) + (n - len(kept)) * np.log(beta)
    trace = np.sum(1.0 - beta * kept) + beta * trace_L  # s_i^2 lambda_i = 1 - beta lambda_i
    return 0.5 * nu * (logdet - trace)


@pytest.mark.parametrize("beta", [1.0, 60.0])
def test_closed_form_is_a_maximum(moons_laplacian, beta):
    L = regularize_laplacian(moons_laplacian, 1e-2)
    n, q = L.shape[0], 3
    X, lam = le_closed_form(L, q, beta, return_eigenvalues=True)
    ref_lam = np.linalg.eigvalsh(L)[:q]
    np.testing.assert_allclose(lam, ref_lam, rtol=1e-9)
    best = le_elbo(X, L, beta)
    np.testing.assert_allclose(best, closed_form_elbo(lam, n, beta, np.trace(L)), rtol=1e-10)
    if beta == 60.0:
        assert np.sum(lam >= 1 / beta) >= 1  # thresholding is exercised
        assert np.all(X[:, lam >= 1 / beta] == 0)
    # stationary point
    g = le_elbo_grad(X, L, beta)
    assert np.linalg.norm(g) < 1e-8 * max(1.0, np.linalg.norm(X))
    rng = np.random.default_rng(8)
    # rotations leave the ELBO unchanged
    R = np.linalg.qr(rng.normal(size=(q, q)))[0]
    np.testing.assert_allclose(le_elbo(X @ R, L, beta), best, rtol=1e-10)
    # random perturbations never increase it
    for eps in (1e-3, 1e-1, 1.0):
        for _ in range(20):
            assert le_elbo(X + eps * rng.normal(size=X.shape), L, beta) < best
    # nor does a quasi-Newton optimiser started at random
    res = minimize(lambda v: -le_elbo(v.reshape(n, q), L, beta),
                   rng.normal(size=n * q),
                   jac=lambda v: -le_elbo_grad(v.reshape(n, q), L, beta).ravel(),
                   method="L-BFGS-B", options=dict(maxiter=5000, gtol=1e-10))
    assert -res.fun <= best + 1e-9 * abs(best)
    assert -res.fun >= best - 1e-4 * abs(best)  # and it gets there


def test_closed_form_on_random_spd_matches_eigendecomposition():
    rng = np.random.default_rng(9)
    L = random_spd(12, rng, jitter=0.2)
    beta = 0.5
    X = le_closed_form(L, 4, beta)
    lam, U = np.linalg.eigh(L)
    s2 = np.clip(1 / lam[:4] - beta, 0, None)
    expected = U[:, :4] @ np.diag(s2) @ U[:, :4].T
    np.testing.assert_allclose(gram(X), expected, atol=1e-10)
    # float32 and sparse input give the same Gram matrix
    np.testing.assert_allclose(gram(le_closed_form(L.astype(np.float32), 4, beta)), expected,
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gram(le_closed_form(sp.csr_matrix(L), 4, beta)), expected,
                               atol=1e-10)


def test_centred_closed_form_is_classical_le(raw_laplacian):
    L = raw_laplacian  # raw, singular
    beta, q = 1.0, 2
    X, lam = le_closed_form(L, q, beta, centre=True, return_eigenvalues=True)
    ref_lam, ref_U = np.linalg.eigh(L)
    np.testing.assert_allclose(lam, ref_lam[1:q + 1], rtol=1e-8)
    s2 = 1 / ref_lam[1:q + 1] - beta
    np.testing.assert_allclose(gram(X), ref_U[:, 1:q + 1] @ np.diag(s2) @ ref_U[:, 1:q + 1].T,
                               atol=1e-8 * s2.max())
    np.testing.assert_allclose(X.sum(axis=0), 0, atol=1e-8)
    # maximal among centred latents
    best = le_elbo(X, L, beta)
    rng = np.random.default_rng(10)
    for _ in range(20):
        E = rng.normal(size=X.shape)
        E -= E.mean(axis=0)
        assert le_elbo(X + 0.1 * E, L, beta) < best


def test_singular_laplacian_is_refused_with_the_fix(raw_laplacian):
    with pytest.raises(ValueError, match=r"L_hat.*regularize_laplacian.*centre=True"):
        le_closed_form(raw_laplacian, 2, 1.0)
    # an indefinite matrix on the centred subspace is refused too
    with pytest.raises(ValueError, match="L_hat.*centred"):
        le_closed_form(-np.eye(5), 2, 1.0, centre=True)


def test_closed_form_bad_inputs(moons_laplacian):
    L = regularize_laplacian(moons_laplacian)
    n = L.shape[0]
    with pytest.raises(ValueError, match="n_components"):
        le_closed_form(L, n + 1, 1.0)
    with pytest.raises(ValueError, match="n_components"):
        le_closed_form(L, n, 1.0, centre=True)
    with pytest.raises(ValueError, match="n_components"):
        le_closed_form(L, 0, 1.0)
    with pytest.raises(ValueError, match="L_hat"):
        le_closed_form(L[:, :-1], 2, 1.0)
    with pytest.raises(ValueError, match="beta"):
        le_closed_form(L, 2, -0.1)
    with pytest.raises(ValueError, match="gamma"):
        regularize_laplacian(moons_laplacian, gamma=0.0)
    with pytest.raises(ValueError, match="L"):
        regularize_laplacian(np.ones((3, 4)))


def test_regularize_laplacian_sparse_and_dense(moons_laplacian):
    dense = regularize_laplacian(moons_laplacian, 0.05)
    sparse = regularize_laplacian(sp.csr_matrix(moons_laplacian), 0.05)
    assert sp.issparse(sparse)
    np.testing.assert_allclose(sparse.toarray(), dense)
    np.testing.assert_allclose(np.linalg.eigvalsh(dense)[0], 0.05, atol=1e-10)


# --- the unbounded direction -------------------------------------------------

def test_unbounded_direction_grows_without_bound(raw_laplacian):
    L = raw_laplacian
    n, beta, nu = L.shape[0], 0.5, 2.0
    # t stops at 1e4: the round-off in L 1 (about 1e-16 of L) enters multiplied by t^2, which at t = 1e6 moved the
    # value by 2e-6 relative under another OpenBLAS kernel (OPENBLAS_CORETYPE=Prescott); at t = 1e4 that is 1e-10
    ts = np.array([0.0, 1.0, 1e2, 1e3, 1e4])
    vals = unbounded_direction_demo(L, beta, ts, nu=nu)
    expected = 0.5 * nu * (np.log(beta + ts ** 2) + (n - 1) * np.log(beta) - beta * np.trace(L))
    np.testing.assert_allclose(vals, expected, rtol=1e-6)
    assert np.all(np.diff(vals) > 0)
    # every factor 10 in t adds about nu log 10: no ceiling
    np.testing.assert_allclose(vals[-1] - vals[-2], nu * np.log(10), rtol=1e-4)
    # with gamma I the same direction turns down
    reg = unbounded_direction_demo(regularize_laplacian(L, 1e-2), beta, ts, nu=nu)
    assert reg[-1] < reg[1]
    # a different latent direction v gives the same curve (only ||X_t|| = t matters)
    np.testing.assert_allclose(unbounded_direction_demo(L, beta, ts, nu=nu, v=[3.0, -4.0]),
                               vals, rtol=1e-6)


def test_unbounded_demo_bad_inputs(raw_laplacian):
    with pytest.raises(ValueError, match="ts"):
        unbounded_direction_demo(raw_laplacian, 1.0, [1.0, np.nan])
    with pytest.raises(ValueError, match="v"):
        unbounded_direction_demo(raw_laplacian, 1.0, [1.0], v=[0.0, 0.0])
    with pytest.raises(ValueError, match="beta"):
        unbounded_direction_demo(raw_laplacian, -1.0, [1.0])


# --- gradient ascent ---------------------------------------------------------

def test_fit_converges_to_closed_form(moons_laplacian):
    L = regularize_laplacian(moons_laplacian, 1e-2)
    beta = 1.0
    fit = fit_le_elbo(L, 2, beta, n_steps=3000, seed=1, store_every=500)
    assert not fit.diverged
    assert fit.gram_error[-1] < 1e-2
    assert rel_gram_err(fit.X, le_closed_form(L, 2, beta)) < 1e-2  # recomputed directly
    np.testing.assert_allclose(fit.elbo[-1], le_elbo(fit.X_star, L, beta), rtol=1e-6)
    # the default step 1/ell makes every step an ascent step
    assert np.all(np.diff(fit.elbo) >= -1e-9 * np.abs(fit.elbo[:-1]))
    np.testing.assert_allclose(fit.eta, 1 / le_lipschitz(L, beta))
    # bookkeeping
    assert fit.n_steps == 3000 and len(fit.gram_error) == 3001
    np.testing.assert_array_equal(fit.steps, [0, 500, 1000, 1500, 2000, 2500, 3000])
    np.testing.assert_array_equal(fit.iterates[-1], fit.X)
    np.testing.assert_allclose(le_elbo(fit.iterates[2], L, beta), fit.elbo[1000], rtol=1e-12)
    np.testing.assert_allclose(rel_gram_err(fit.iterates[1], fit.X_star), fit.gram_error[500],
                               rtol=1e-6, atol=1e-9)


def test_fit_centred_on_raw_laplacian(raw_laplacian):
    fit = fit_le_elbo(raw_laplacian, 2, 1.0, n_steps=1500, centre=True, store_every=1500)
    assert not fit.diverged
    assert fit.gram_error[-1] < 1e-2
    np.testing.assert_allclose(fit.X.sum(axis=0), 0, atol=1e-8)


def test_fit_default_keeps_about_100_iterates(moons_laplacian):
    fit = fit_le_elbo(regularize_laplacian(moons_laplacian), 2, 1.0, n_steps=1001)
    np.testing.assert_array_equal(fit.steps, np.r_[np.arange(0, 1001, 10), 1001])
    assert fit.iterates.shape == (102, 150, 2)
    assert len(fit.elbo) == 1002


def test_fit_reproducible_and_float32(moons_laplacian):
    L = regularize_laplacian(moons_laplacian, 1e-2)
    a = fit_le_elbo(L, 2, 1.0, n_steps=50, seed=3)
    b = fit_le_elbo(L.astype(np.float32), 2, 1.0, n_steps=50, seed=3)
    np.testing.assert_allclose(a.elbo, b.elbo, rtol=1e-4)
    np.testing.assert_array_equal(a.X, fit_le_elbo(L, 2, 1.0, n_steps=50, seed=3).X)


def test_fit_divergent_step_is_flagged_and_finite(moons_laplacian):
    L = regularize_laplacian(moons_laplacian, 1e-2)
    lam_max = np.linalg.eigvalsh(L)[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / invalid-value warnings allowed
        fit = fit_le_elbo(L, 2, 1.0, eta=4.0 / lam_max, n_steps=3000)
    assert fit.diverged
    assert fit.n_steps < 3000
    for arr in (fit.X, fit.iterates, fit.elbo, fit.gram_error):
        assert np.all(np.isfinite(arr))
    # a small step is slow but safe
    slow = fit_le_elbo(L, 2, 1.0, eta=0.01 * fit.eta / 4.0, n_steps=300)
    assert not slow.diverged and slow.gram_error[-1] > 1e-2
    assert np.all(np.diff(slow.elbo) >= 0)


def test_fit_bad_inputs(moons_laplacian):
    L = regularize_laplacian(moons_laplacian, 1e-2)
    with pytest.raises(ValueError, match="eta"):
        fit_le_elbo(L, 2, 1.0, eta=0.0)
    with pytest.raises(ValueError, match="n_steps"):
        fit_le_elbo(L, 2, 1.0, n_steps=-1)
    with pytest.raises(ValueError, match="seed"):
        fit_le_elbo(L, 2, 1.0, seed=-2)
    with pytest.raises(ValueError, match="store_every"):
        fit_le_elbo(L, 2, 1.0, store_every=0)
    with pytest.raises(ValueError, match="n_components"):
        fit_le_elbo(L, L.shape[0] + 1, 1.0)
    with pytest.raises(ValueError, match="regularize_laplacian"):
        fit_le_elbo(laplacian(knn_graph(make_moons(60, random_state=1)[0], 6)), 2, 1.0)


# --- the PCA twin ------------------------------------------------------------

@pytest.fixture(scope="module")
def pca_data():
    """Y (n x d): n = 20 'points', d = 400 columns drawn from N(0, X0 X0^T + 0.3 I)."""
    rng = np.random.default_rng(11)
    n, d = 20, 400
    X0 = rng.normal(size=(n, 3)) * np.array([3.0, 2.0, 1.5])
    Y = X0 @ rng.normal(size=(3, d)) + np.sqrt(0.3) * rng.normal(size=(n, d))
    return Y


def test_pca_elbo_is_gaussian_log_likelihood(pca_data):
    Y = pca_data
    n, d = Y.shape
    S = Y @ Y.T / d
    X = np.random.default_rng(12).normal(size=(n, 2))
    sigma2 = 0.4
    C = X @ X.T + sigma2 * np.eye(n)
    loglik = multivariate_normal(np.zeros(n), C).logpdf(Y.T).sum()
    np.testing.assert_allclose(pca_elbo(X, S, sigma2, d), loglik + 0.5 * n * d * np.log(2 * np.pi),
                               rtol=1e-10)
    np.testing.assert_allclose(pca_elbo(X.astype(np.float32), S.astype(np.float32), sigma2, d),
                               pca_elbo(X, S, sigma2, d), rtol=1e-5)


def test_pca_closed_form_matches_sklearn_ppca(pca_data):
    """sklearn PCA on the d columns (uncentred S scaled by d - 1 after centring)."""
    Y = pca_data
    n, d = Y.shape
    Yc = Y - Y.mean(axis=1, keepdims=True)  # sklearn centres each of the n coordinates
    S = Yc @ Yc.T / (d - 1)  # sklearn's explained_variance_ uses d - 1
    q = 3
    pca = PCA(n_components=q, svd_solver="full").fit(Yc.T)  # exact, never the randomised solver
    sigma2 = pca.noise_variance_  # PPCA's maximum-likelihood noise (Tipping & Bishop)
    X, lam = pca_closed_form(S, q, sigma2, return_eigenvalues=True)
    np.testing.assert_allclose(lam, pca.explained_variance_, rtol=1e-10)
    W_sk = pca.components_.T * np.sqrt(pca.explained_variance_ - sigma2)
    np.testing.assert_allclose(gram(X), gram(W_sk), atol=1e-10 * np.abs(gram(W_sk)).max())
    # and the loading vectors against numpy's SVD of the data
    U, s, _ = np.linalg.svd(Yc, full_matrices=False)
    np.testing.assert_allclose(np.abs(X / np.linalg.norm(X, axis=0)), np.abs(U[:, :q]),
                               atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(X, axis=0) ** 2, s[:q] ** 2 / (d - 1) - sigma2,
                               rtol=1e-10)


def test_pca_closed_form_maximises_pca_elbo(pca_data):
    Y = pca_data
    n, d = Y.shape
    S = Y @ Y.T / d
    sigma2, q = 0.3, 3
    X = pca_closed_form(S, q, sigma2)
    best = pca_elbo(X, S, sigma2, d)
    # gradient ~ 0 by autograd of the direct formula
    Xt = torch.tensor(X, requires_grad=True)
    C = Xt @ Xt.T + sigma2 * torch.eye(n, dtype=torch.float64)
    f = -0.5 * d * (torch.logdet(C) + torch.trace(torch.linalg.solve(C, torch.tensor(S))))
    (g,) = torch.autograd.grad(f, Xt)
    assert g.norm() < 1e-8 * d
    rng = np.random.default_rng(13)

    def grad(Xv):  # dF/dX = d (C^{-1} S C^{-1} - C^{-1}) X, in NumPy for speed
        Ci = np.linalg.inv(Xv @ Xv.T + sigma2 * np.eye(n))
        return d * (Ci @ S @ Ci - Ci) @ Xv

    Xr = rng.normal(size=(n, q))  # the NumPy gradient is the autograd one
    Xt = torch.tensor(Xr, requires_grad=True)
    C = Xt @ Xt.T + sigma2 * torch.eye(n, dtype=torch.float64)
    f = -0.5 * d * (torch.logdet(C) + torch.trace(torch.linalg.solve(C, torch.tensor(S))))
    np.testing.assert_allclose(grad(Xr), torch.autograd.grad(f, Xt)[0].numpy(), rtol=1e-9,
                               atol=1e-9)

    def neg_and_grad(v):
        Xv = v.reshape(n, q)
        return -pca_elbo(Xv, S, sigma2, d), -grad(Xv).ravel()

    for eps in (1e-3, 1e-1):
        for _ in range(20):
            assert pca_elbo(X + eps * rng.normal(size=X.shape), S, sigma2, d) < best
    res = minimize(neg_and_grad, rng.normal(size=n * q), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=5000, gtol=1e-10))
    assert -res.fun <= best + 1e-9 * abs(best)
    assert -res.fun >= best - 1e-6 * abs(best)


def test_pca_threshold_gives_zero_scale(pca_data):
    Y = pca_data
    S = Y @ Y.T / Y.shape[1]
    lam = np.linalg.eigvalsh(S)[::-1]
    sigma2 = 0.5 * (lam[1] + lam[2])  # keeps two directions, drops the third
    X = pca_closed_form(S, 3, sigma2)
    assert np.all(X[:, 2] == 0) and np.all(np.linalg.norm(X[:, :2], axis=0) > 0)


def test_pca_bad_inputs(pca_data):
    S = pca_data @ pca_data.T / pca_data.shape[1]
    X = np.zeros((S.shape[0], 2))
    with pytest.raises(ValueError, match="sigma2"):
        pca_closed_form(S, 2, 0.0)
    with pytest.raises(ValueError, match="n_components"):
        pca_closed_form(S, S.shape[0] + 1, 1.0)
    with pytest.raises(ValueError, match="S"):
        pca_closed_form(S[:, :3], 2, 1.0)
    with pytest.raises(ValueError, match="d"):
        pca_elbo(X, S, 1.0, d=0)
    with pytest.raises(ValueError, match="S"):
        pca_elbo(X[:-1], S, 1.0, d=5)
    with pytest.raises(ValueError, match="sigma2"):
        pca_elbo(X, S, -1.0, d=5)
