"""Tests for probdr_lite.eigenmaps against scikit-learn and a dense generalised eigensolver."""

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from scipy.linalg import subspace_angles
from sklearn.datasets import make_s_curve, make_swiss_roll
from sklearn.manifold import SpectralEmbedding

from probdr_lite.eigenmaps import embed_graph, laplacian_eigenmaps
from probdr_lite.graphs import knn_graph, laplacian


def mnist_images(n):
    """The first n digits of the MNIST test set that ships inside the package (no network, no machine path)."""
    from probdr_lite.data import load_mnist

    out = load_mnist(n=n)
    return np.asarray(out[0] if isinstance(out, tuple) else out, dtype=np.float64)


DATASETS = {
    "swiss_roll": lambda: make_swiss_roll(1200, random_state=0)[0],
    "s_curve": lambda: make_s_curve(1200, random_state=0)[0],
    "mnist": lambda: mnist_images(2000),
}


def min_cosine(A, B):
    return float(np.cos(subspace_angles(A, B)).min())


@pytest.fixture(scope="module", params=list(DATASETS))
def dataset(request):
    return request.param, DATASETS[request.param]()


def test_agrees_with_sklearn_spectral_embedding(dataset):
    """Same k, Belkin-Niyogi max-symmetrised graph: subspaces agree to cos >= 0.99.

    With scikit-learn's own graph (self counted as a neighbour, mean-symmetrised)
    the embeddings must coincide up to each column's sign.
    """
    name, Y = dataset
    q, k = 2, 10
    ref = SpectralEmbedding(n_components=q, affinity="nearest_neighbors", n_neighbors=k,
                            random_state=0).fit_transform(Y)
    X = laplacian_eigenmaps(Y, n_components=q, n_neighbors=k)
    assert X.shape == (Y.shape[0], q)
    assert min_cosine(X, ref) >= 0.99, name

    same_graph = laplacian_eigenmaps(Y, n_components=q, n_neighbors=k - 1, symmetrize="mean")
    assert min_cosine(same_graph, ref) >= 0.9999, name
    signs = np.sign(np.sum(same_graph * ref, axis=0))
    np.testing.assert_allclose(same_graph * signs, ref, atol=1e-6 * np.abs(ref).max())


def test_more_components_still_agree(dataset):
    name, Y = dataset
    q, k = 3, 10
    ref = SpectralEmbedding(n_components=q, affinity="nearest_neighbors", n_neighbors=k,
                            random_state=0).fit_transform(Y)
    assert min_cosine(laplacian_eigenmaps(Y, q, k), ref) >= 0.99, name


def test_generalised_eigenproblem_and_constraints():
    Y = make_swiss_roll(500, random_state=1)[0]  # large enough for the sparse (eigsh) path
    W = knn_graph(Y, 8, mode="heat")
    X, lam = laplacian_eigenmaps(Y, 4, 8, mode="heat", return_eigenvalues=True)
    L = laplacian(W).toarray()
    D = np.diag(np.asarray(W.sum(axis=1)).ravel())
    # L v = lambda D v
    np.testing.assert_allclose(L @ X, D @ X * lam[None, :], atol=1e-8)
    # Belkin-Niyogi constraints: X^T D X = I, X^T D 1 = 0
    np.testing.assert_allclose(X.T @ D @ X, np.eye(4), atol=1e-8)
    np.testing.assert_allclose(X.T @ D @ np.ones(len(X)), 0, atol=1e-8)
    # eigenvalues 2..q+1 of a dense generalised solver
    ref_vals, ref_vecs = la.eigh(L, D, subset_by_index=[0, 4])
    np.testing.assert_allclose(lam, ref_vals[1:], rtol=1e-8, atol=1e-12)
    assert min_cosine(X, ref_vecs[:, 1:]) > 1 - 1e-8


def test_dense_path_for_small_graphs_matches_sklearn_precomputed():
    Y = make_s_curve(150, random_state=2)[0]
    W = knn_graph(Y, 7, mode="heat")
    X = embed_graph(W, 3)
    ref = SpectralEmbedding(n_components=3, affinity="precomputed",
                            random_state=0).fit_transform(W.toarray())
    assert min_cosine(X, ref) > 1 - 1e-8


def test_sparse_path_matches_sklearn_precomputed_heat_graph():
    Y = make_swiss_roll(800, random_state=3)[0]
    W = knn_graph(Y, 10, mode="heat")
    X = embed_graph(W, 2, random_state=5)
    ref = SpectralEmbedding(n_components=2, affinity="precomputed",
                            random_state=0).fit_transform(W)
    assert min_cosine(X, ref) > 1 - 1e-8


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float32_and_float64(dtype):
    Y = make_swiss_roll(400, random_state=0)[0]
    X64 = laplacian_eigenmaps(Y, 2, 10)
    X = laplacian_eigenmaps(Y.astype(dtype), 2, 10)
    assert np.all(np.isfinite(X))
    assert min_cosine(X, X64) > 0.999


def test_reproducible_and_sign_convention():
    Y = make_swiss_roll(400, random_state=0)[0]
    X1 = laplacian_eigenmaps(Y, 2, 10, random_state=3)
    X2 = laplacian_eigenmaps(Y, 2, 10, random_state=3)
    np.testing.assert_array_equal(X1, X2)
    idx = np.argmax(np.abs(X1), axis=0)
    assert np.all(X1[idx, [0, 1]] > 0)


def test_disconnected_graph_warns():
    rng = np.random.default_rng(0)
    Y = np.vstack([rng.normal(size=(40, 2)), 100 + rng.normal(size=(40, 2))])
    with pytest.warns(RuntimeWarning, match="connected components"):
        laplacian_eigenmaps(Y, 2, 5)


def test_bad_inputs():
    Y = make_swiss_roll(50, random_state=0)[0]
    with pytest.raises(ValueError, match="n_components"):
        laplacian_eigenmaps(Y, n_components=49)
    with pytest.raises(ValueError, match="n_components"):
        laplacian_eigenmaps(Y, n_components=0)
    with pytest.raises(ValueError, match="n_neighbors"):
        laplacian_eigenmaps(Y, n_neighbors=50)
    with pytest.raises(ValueError, match="mode"):
        laplacian_eigenmaps(Y, mode="rbf")
    with pytest.raises(ValueError, match="Y"):
        laplacian_eigenmaps(Y[None])
    bad = Y.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="Y"):
        laplacian_eigenmaps(bad)
    with pytest.raises(ValueError, match="random_state"):
        laplacian_eigenmaps(Y, random_state=-1)
    W = np.triu(np.ones((6, 6)), 1)  # directed
    with pytest.raises(ValueError, match="symmetric"):
        embed_graph(W, 2)
    W = np.ones((6, 6)) - np.eye(6)
    W[5, :] = W[:, 5] = 0
    with pytest.raises(ValueError, match="isolated"), pytest.warns(RuntimeWarning):
        embed_graph(sp.csr_matrix(W), 2)
