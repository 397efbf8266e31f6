"""Tests for probdr_lite.graphs: k-NN graphs, Laplacians and the graph energy."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import laplacian as scipy_laplacian
from scipy.spatial.distance import cdist

from probdr_lite.graphs import graph_energy, knn_graph, laplacian


@pytest.fixture
def cloud():
    return np.random.default_rng(0).normal(size=(60, 3))


def brute_knn_sets(Y, k):
    """Index sets of the k nearest other points, by sorting all distances."""
    D = cdist(Y, Y)
    np.fill_diagonal(D, np.inf)
    return [set(np.argsort(row)[:k]) for row in D], D


# --- knn_graph -------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_connectivity_graph_matches_brute_force(cloud, dtype):
    k = 5
    W = knn_graph(cloud.astype(dtype), n_neighbors=k)
    assert sp.isspmatrix_csr(W) or sp.issparse(W)
    assert W.dtype == dtype
    sets, _ = brute_knn_sets(cloud, k)
    n = cloud.shape[0]
    expected = np.zeros((n, n))
    for i, s in enumerate(sets):
        for j in s:
            expected[i, j] = expected[j, i] = 1.0  # i ~ j if either picks the other
    np.testing.assert_array_equal(W.toarray(), expected)


def test_graph_is_symmetric_with_zero_diagonal_and_degree_at_least_k(cloud):
    k = 4
    for mode in ("connectivity", "heat"):
        W = knn_graph(cloud, n_neighbors=k, mode=mode).toarray()
        np.testing.assert_array_equal(W, W.T)
        assert np.all(np.diag(W) == 0)
        # every point keeps its own k neighbours under max-symmetrisation
        assert np.all((W > 0).sum(axis=1) >= k)


def test_mean_symmetrisation_halves_one_sided_edges(cloud):
    Wmax = knn_graph(cloud, 5, symmetrize="max").toarray()
    Wmean = knn_graph(cloud, 5, symmetrize="mean").toarray()
    sets, _ = brute_knn_sets(cloud, 5)
    for i in range(len(sets)):
        for j in range(len(sets)):
            both = (j in sets[i]) and (i in sets[j])
            one = (j in sets[i]) != (i in sets[j])
            assert Wmean[i, j] == (1.0 if both else 0.5 if one else 0.0)
    np.testing.assert_array_equal(Wmax > 0, Wmean > 0)


def test_heat_weights_follow_the_kernel(cloud):
    k, t = 6, 0.7
    W = knn_graph(cloud, k, mode="heat", bandwidth=t).toarray()
    D2 = cdist(cloud, cloud, "sqeuclidean")
    mask = W > 0
    np.testing.assert_allclose(W[mask], np.exp(-D2[mask] / t), rtol=1e-12)


def test_heat_default_bandwidth_is_mean_squared_knn_distance(cloud):
    k = 6
    sets, D = brute_knn_sets(cloud, k)
    t = np.mean([D[i, j] ** 2 for i, s in enumerate(sets) for j in s])
    np.testing.assert_allclose(
        knn_graph(cloud, k, mode="heat").toarray(),
        knn_graph(cloud, k, mode="heat", bandwidth=t).toarray(), rtol=1e-12)
    # scale invariance of the default: rescaling the data leaves the weights alone
    np.testing.assert_allclose(
        knn_graph(cloud, k, mode="heat").toarray(),
        knn_graph(10.0 * cloud, k, mode="heat").toarray(), rtol=1e-10)


def test_duplicate_points_get_unit_heat_weight():
    Y = np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 0.0], [3.0, 1.0]])
    W = knn_graph(Y, 1, mode="heat", bandwidth=1.0).toarray()
    assert W[0, 1] == W[1, 0] == 1.0
    assert np.all(np.diag(W) == 0)


def test_torch_input(cloud):
    W1 = knn_graph(torch.from_numpy(cloud), 5).toarray()
    np.testing.assert_array_equal(W1, knn_graph(cloud, 5).toarray())


@pytest.mark.parametrize("k", [0, 60, 100, 2.5])
def test_n_neighbors_out_of_range(cloud, k):
    with pytest.raises((ValueError, TypeError), match="n_neighbors"):
        knn_graph(cloud, n_neighbors=k)


def test_knn_graph_bad_inputs(cloud):
    with pytest.raises(ValueError, match="mode"):
        knn_graph(cloud, 5, mode="gaussian")
    with pytest.raises(ValueError, match="symmetrize"):
        knn_graph(cloud, 5, symmetrize="min")
    with pytest.raises(ValueError, match="bandwidth"):
        knn_graph(cloud, 5, mode="heat", bandwidth=0.0)
    with pytest.raises(ValueError, match="bandwidth"):
        knn_graph(cloud, 5, mode="heat", bandwidth=-1.0)
    with pytest.raises(ValueError, match="Y"):
        knn_graph(cloud[:, 0], 5)
    bad = cloud.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Y"):
        knn_graph(bad, 5)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="Y"):
        knn_graph(bad, 5)
    with pytest.raises(TypeError, match="Y"):
        knn_graph("abc", 5)


# --- laplacian -------------------------------------------------------------

@pytest.fixture
def weights(cloud):
    return knn_graph(cloud, 5, mode="heat")


@pytest.mark.parametrize("sparse_in", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_laplacians_match_scipy_csgraph(weights, sparse_in, dtype):
    W = weights.astype(dtype)
    Win = W if sparse_in else W.toarray()
    Wd = W.toarray().astype(np.float64)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    L = laplacian(Win, "unnormalized")
    assert sp.issparse(L) == sparse_in
    assert L.dtype == dtype
    dense = lambda M: M.toarray() if sp.issparse(M) else M
    np.testing.assert_allclose(dense(L), scipy_laplacian(Wd), **tol)
    np.testing.assert_allclose(dense(laplacian(Win, "symmetric")),
                               scipy_laplacian(Wd, normed=True), **tol)
    # L_rw = D^{-1} L, checked against the definition D^{-1} (D - W)
    deg = Wd.sum(axis=1)
    np.testing.assert_allclose(dense(laplacian(Win, "random_walk")),
                               (np.diag(deg) - Wd) / deg[:, None], **tol)


def test_laplacian_null_vectors(weights):
    W = weights.toarray()
    deg = W.sum(axis=1)
    one = np.ones(W.shape[0])
    np.testing.assert_allclose(laplacian(W, "unnormalized") @ one, 0, atol=1e-12)
    np.testing.assert_allclose(laplacian(W, "random_walk") @ one, 0, atol=1e-12)
    np.testing.assert_allclose(laplacian(W, "symmetric") @ np.sqrt(deg), 0, atol=1e-12)
    # L_rw rows are I - A with A row-stochastic
    A = np.eye(W.shape[0]) - laplacian(W, "random_walk")
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-12)


def test_laplacian_of_asymmetric_attention_uses_row_sums():
    A = np.random.default_rng(1).uniform(size=(7, 7))
    L_rw = laplacian(A, "random_walk")
    np.testing.assert_allclose(L_rw, np.eye(7) - A / A.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("kind", ["symmetric", "random_walk"])
def test_isolated_node_refused_for_normalised_kinds(kind):
    W = np.ones((4, 4)) - np.eye(4)
    W[3, :] = W[:, 3] = 0.0
    with pytest.raises(ValueError, match="isolated"):
        laplacian(W, kind)
    with pytest.raises(ValueError, match="isolated"):
        laplacian(sp.csr_matrix(W), kind)
    L = laplacian(W, "unnormalized")  # still defined
    assert np.all(L[3] == 0)


def test_laplacian_bad_inputs(weights):
    with pytest.raises(ValueError, match="kind"):
        laplacian(weights, "normalized")
    with pytest.raises(ValueError, match="W"):
        laplacian(np.ones((3, 4)))
    with pytest.raises(ValueError, match="W"):
        laplacian(sp.csr_matrix(np.ones((3, 4))))
    with pytest.raises(ValueError, match="W"):
        laplacian(-np.ones((3, 3)))
    W = weights.toarray()
    W[0, 1] = np.nan
    with pytest.raises(ValueError, match="W"):
        laplacian(W)
    with pytest.raises(ValueError, match="W"):
        laplacian(sp.csr_matrix(W))
    with pytest.raises(ValueError, match="W"):
        laplacian(np.ones(3))


# --- graph_energy ----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_graph_energy_equals_twice_trace(weights, dtype):
    X = np.random.default_rng(2).normal(size=(weights.shape[0], 2)).astype(dtype)
    L = laplacian(weights.astype(dtype)).toarray().astype(np.float64)
    Xd = X.astype(np.float64)
    e = graph_energy(X, weights.astype(dtype))
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(e, 2 * np.trace(Xd.T @ L @ Xd), rtol=rtol)


def test_graph_energy_brute_force_double_sum():
    rng = np.random.default_rng(3)
    W = rng.uniform(size=(9, 9)) * (rng.uniform(size=(9, 9)) < 0.5)  # asymmetric on purpose
    X = rng.normal(size=(9, 3))
    brute = sum(W[i, j] * np.sum((X[i] - X[j]) ** 2) for i in range(9) for j in range(9))
    np.testing.assert_allclose(graph_energy(X, W), brute, rtol=1e-12)
    np.testing.assert_allclose(graph_energy(torch.from_numpy(X), sp.csr_matrix(W)), brute,
                               rtol=1e-12)


def test_graph_energy_bad_inputs(weights):
    X = np.zeros((weights.shape[0] + 1, 2))
    with pytest.raises(ValueError, match="W"):
        graph_energy(X, weights)
    with pytest.raises(ValueError, match="X"):
        graph_energy(np.zeros(weights.shape[0]), weights)
