"""Tests of probdr_lite.chapters.energies (does a block move towards the Laplacian Eigenmaps embedding?) against independent
answers: scikit-learn's PCA, numpy's eigenvectors of the attention's random walk, the exact distribution of the
cosine between a random direction and a fixed one, and closed forms of the effective rank."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from sklearn.decomposition import PCA

from probdr_lite import eigenmaps
from probdr_lite.chapters import energies as T
from probdr_lite import unrolled as U
from probdr_lite.metrics import subspace_agreement


def latents(n, d_q, seed=0):
    return U.layer_norm(torch.randn(n, d_q, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))


def test_principal_subspace_against_scikit_learn():
    Y = np.random.default_rng(0).normal(size=(80, 6)) * np.array([5.0, 3.0, 1.0, 0.5, 0.2, 0.1]) + 7.0
    B = T.principal_subspace(Y, 3)
    assert np.allclose(B.T @ B, np.eye(3), atol=1e-12)
    scores = PCA(n_components=3, svd_solver="full").fit_transform(Y)
    assert subspace_agreement(B, scores).min() == pytest.approx(1.0, abs=1e-10)


def test_attention_le_is_the_slow_eigenvectors_of_the_random_walk():
    X = latents(60, 8, seed=1)
    W = T.attention_graph(X, 2.0, 1.0)
    assert np.allclose(W, W.T)
    A = U.attention_matrix(X, 2.0, 1.0).numpy()
    assert np.allclose(W / W.sum(1, keepdims=True), A, atol=1e-12)
    mu, V = np.linalg.eig(A)
    order = np.argsort(-mu.real)  # largest eigenvalues of A = smallest of I - A; the first is the constant
    V = V[:, order].real
    le = eigenmaps.embed_graph(W, n_components=3)
    assert subspace_agreement(le, V[:, 1:4]).min() == pytest.approx(1.0, abs=1e-8)


def test_dense_graphs_take_the_dense_solver_and_agree_with_lanczos(monkeypatch):
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(400, 5))
    W = np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1) / 4.0)
    dense = eigenmaps.embed_graph(W, n_components=4)
    monkeypatch.setattr(eigenmaps, "_DENSE_SHARE", 2.0)  # never dense: Lanczos on the same graph
    lanczos = eigenmaps.embed_graph(sp.csr_matrix(W), n_components=4)
    assert subspace_agreement(dense, lanczos).min() == pytest.approx(1.0, abs=1e-8)


def test_le_targets_are_the_books_laplacian_eigenmaps():
    Y = np.random.default_rng(3).normal(size=(120, 10))
    X0 = U.embed(torch.from_numpy(Y), 16, seed=0)
    t = T.le_targets(Y, X0, 3.0, 1.0, q_max=4)
    assert t["attention"].shape == (120, 4) and t["pixels"].shape == (120, 4)
    assert np.allclose(t["pixels"], eigenmaps.laplacian_eigenmaps(Y, 4))
    assert np.allclose(t["attention"], eigenmaps.embed_graph(T.attention_graph(X0, 3.0, 1.0), 4))


def test_le_alignment_is_one_for_the_target_itself_and_random_level_otherwise():
    rng = np.random.default_rng(4)
    n = 200
    V = np.linalg.qr(rng.normal(size=(n, 10)))[0]
    V = V - V.mean(0)  # principal subspaces are centred
    X_on = V @ rng.normal(size=(10, 10)) * 10 + 0.0
    X_off = rng.normal(size=(n, 10))
    out = T.le_alignment({"on": [X_on, X_on], "off": [X_off, X_off]}, {"g": V}, qs=(10,))
    assert out["on"]["g"][10][0] == pytest.approx(1.0, abs=1e-10)
    base = T.random_baseline({"g": V}, qs=(10,), n_draws=50)
    assert abs(out["off"]["g"][10][0] - base["g"][10]["mean"]) < 5 * base["g"][10]["sd"] + 0.02


def test_random_baseline_against_the_exact_mean_cosine_of_one_direction():
    """For q = 1, |cos| of a uniformly random direction in R^n with a fixed one has mean
    Gamma(n/2) / (sqrt(pi) Gamma((n + 1) / 2))."""
    n = 50
    V = np.zeros((n, 1))
    V[0, 0] = 1.0
    base = T.random_baseline({"g": V}, qs=(1,), n_draws=4000, seed=1)["g"][1]
    exact = math.exp(math.lgamma(n / 2) - math.lgamma((n + 1) / 2)) / math.sqrt(math.pi)
    assert base["mean"] == pytest.approx(exact, abs=4 * base["sd"] / math.sqrt(4000))


def test_random_baseline_of_a_target_does_not_depend_on_the_others():
    """Each target meets the same draws, so its level is the same alone or beside other targets (one number per
    target on the page, whichever table shows it)."""
    rng = np.random.default_rng(7)
    V, W = rng.normal(size=(60, 2)), rng.normal(size=(60, 2))
    alone = T.random_baseline({"v": V}, qs=(2,), n_draws=10)["v"]
    beside = T.random_baseline({"w": W, "v": V}, qs=(2,), n_draws=10)["v"]
    assert alone == beside


def test_effective_rank_closed_forms():
    u = np.arange(1.0, 6.0)
    assert T.effective_rank(np.outer(u, [1.0, -2.0, 0.5])) == pytest.approx(1.0, abs=1e-6)  # rank one
    Q = np.linalg.qr(np.random.default_rng(5).normal(size=(30, 4)))[0]
    assert T.effective_rank(3.0 * Q) == pytest.approx(4.0, rel=1e-10)  # four equal singular values
    s = np.array([3.0, 1.0])
    p = s / s.sum()
    assert T.effective_rank(np.diag(s)) == pytest.approx(math.exp(-(p * np.log(p)).sum()))
    paths = {"v": [np.diag(s), np.eye(2)]}
    assert np.allclose(T.effective_rank_path(paths)["v"], [T.effective_rank(np.diag(s)), 2.0])


def test_participation_ratio():
    e = np.zeros((10, 1))
    e[3] = 2.0
    assert T.participation_ratio(np.hstack([e, np.ones((10, 1))])) == pytest.approx([1.0, 10.0])


@pytest.mark.parametrize("call, name", [
    (lambda: T.principal_subspace(np.ones((5, 3)), 4), "q"),
    (lambda: T.principal_subspace(np.full((5, 3), np.nan), 1), "X"),
    (lambda: T.attention_graph(np.ones((5, 3)), 0.0), "kappa"),
    (lambda: T.le_targets(np.ones((5, 3)), np.ones((6, 3)), 1.0), "X0"),
    (lambda: T.le_alignment({}, {"g": np.ones((5, 2))}), "paths"),
    (lambda: T.le_alignment({"v": [np.ones((5, 3))]}, {"g": np.ones((5, 2))}, qs=(3,)), "targets"),
    (lambda: T.le_alignment({"v": [np.ones((5, 3))]}, {"g": np.ones((5, 3))}, qs=(4,)), "qs"),
    (lambda: T.le_alignment({"v": [np.ones((6, 3))]}, {"g": np.ones((5, 3))}, qs=(2,)), "rows"),
    (lambda: T.random_baseline({"g": np.ones((5, 2))}, qs=(2,), n_draws=1), "n_draws"),
    (lambda: T.effective_rank(np.zeros((3, 3))), "zeros"),
    (lambda: T.participation_ratio(np.zeros((3, 1))), "zero column"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


# ---------------------------------------------------------------------------------------------------------------------
# The test over every graph


def test_graph_targets_without_self_loops_is_scikit_learns_spectral_embedding():
    """scikit-learn's spectral embedding drops the diagonal of the affinity (scipy's Laplacian ignores it): the
    attention graph without self-loops gives its subspace; with the loops the embedding is another one."""
    from sklearn.manifold import spectral_embedding

    X0 = latents(150, 16, seed=4)
    images = np.random.default_rng(1).standard_normal((150, 30))
    targets = T.graph_targets(images, X0, kappa=20.0, beta=1.0, q_max=3)
    assert set(targets) == set(T.GRAPHS) and all(v.shape == (150, 3) for v in targets.values())
    W = T.attention_graph(X0, 20.0, 1.0)
    ref = spectral_embedding(W, n_components=4, norm_laplacian=True, drop_first=True, random_state=0)[:, :3]
    assert subspace_agreement(targets["attention_no_loops"], ref).min() > 0.999
    assert subspace_agreement(targets["attention"], ref).min() < 0.99  # the self-loops change the graph
    assert np.allclose(targets["pixels"], eigenmaps.laplacian_eigenmaps(images, 3))
    assert np.allclose(targets["latents_knn"], eigenmaps.laplacian_eigenmaps(X0.numpy(), 3))


def _robust(start, ends, sd=0.01, mean=0.05):
    le = {v: {"pixels": {2: np.array([start, end])}} for v, end in ends.items()}
    return {30.0: {"le": le, "baseline": {"pixels": {2: {"mean": mean, "sd": sd}}}}}


@pytest.mark.parametrize("start,ends,moves,above,ceiling", [
    (0.60, {"attention": 0.70, "diffusion": 0.50}, {"attention": "towards", "diffusion": "away"}, True, False),
    (0.60, {"attention": 0.605, "diffusion": 0.70}, {"attention": "still", "diffusion": "towards"}, True, False),
    (0.05, {"attention": 0.06, "diffusion": 0.04}, {"attention": "still", "diffusion": "still"}, False, False),
    (0.99, {"attention": 0.99, "diffusion": 0.985}, {"attention": "still", "diffusion": "still"}, True, True),
])
def test_robustness_facts_read_the_moves(start, ends, moves, above, ceiling):
    """Moves beyond 2 % of the start count, but not while every value is at the random level (mean + 3 sd); and
    neither block ends closer when both end at that level."""
    (row,) = T.robustness_facts(_robust(start, ends))
    d = ends["diffusion"] - ends["attention"]
    assert row["closer"] == ("random" if max(ends.values()) <= 0.05 + 3 * 0.01 else
                             "tie" if abs(d) <= 0.02 * start else "diffusion" if d > 0 else "attention")
    assert row["peaks"] == {v: int(np.argmax([start, e])) for v, e in ends.items()}
    assert row["moves"] == moves and row["start_above_random"] is above and row["at_ceiling"] is ceiling
    assert (row["kappa"], row["graph"], row["q"], row["start"]) == (30.0, "pixels", 2, start)


def test_robustness_runs_every_graph_at_every_kappa():
    X0 = latents(80, 12, seed=2)
    images = np.random.default_rng(0).standard_normal((80, 20))
    paths = {k: {v: U.unroll(X0, 2, k, 0.4, 1.0, v) for v in ("attention", "diffusion")} for k in (3.0, 30.0)}
    robust = T.robustness(images, paths, qs=(2,), n_draws=5)
    assert set(robust) == {3.0, 30.0}
    for r in robust.values():
        assert set(r["le"]["attention"]) == set(T.GRAPHS) == set(r["baseline"])
        assert r["le"]["diffusion"]["pixels"][2].shape == (3,)
    assert len(T.robustness_facts(robust)) == 2 * len(T.GRAPHS)


def test_one_tolerance_decides_both_a_move_and_which_block_ends_closer():
    """A gap of 1 % of the start is a tie and no move; 3 % is a move and a win (MOVE_TOL = 2 %)."""
    (row,) = T.robustness_facts(_robust(0.5, {"attention": 0.503, "diffusion": 0.508}))
    assert row["closer"] == "tie" and row["moves"] == {"attention": "still", "diffusion": "still"}
    (row,) = T.robustness_facts(_robust(0.5, {"attention": 0.5, "diffusion": 0.515}))
    assert row["closer"] == "diffusion" and row["moves"] == {"attention": "still", "diffusion": "towards"}


def test_centring_removes_the_constant_part_of_an_le_vector():
    """A target that is a principal direction plus a constant: centred it is found exactly, raw it is not."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    basis = T.principal_subspace(X, 2)
    V = basis + 0.5
    centred = T.le_alignment({"x": [X]}, {"g": V}, qs=(2,))["x"]["g"][2][0]
    raw = T.le_alignment({"x": [X]}, {"g": V}, qs=(2,), centre=False)["x"]["g"][2][0]
    assert abs(centred - 1.0) < 1e-12 and raw < 0.99


def test_every_graph_has_its_builder_and_labels():
    assert all({"build", "label", "short"} <= set(e) for e in T.GRAPHS.values())
    with pytest.raises(KeyError):
        T.graph_label("no_such_graph")
