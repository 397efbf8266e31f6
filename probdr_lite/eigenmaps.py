"""Laplacian Eigenmaps (Belkin & Niyogi, 2003; notes section 1, step 3).

Given a graph W with degrees D = diag(W 1), Laplacian Eigenmaps minimises the
energy sum_ij W_ij ||x_i - x_j||^2 = 2 tr(X^T L X) subject to X^T D X = I and
X^T D 1 = 0. The minimisers are the generalised eigenvectors

    L v = lambda D v,   0 = lambda_0 <= lambda_1 <= ...,

with the constant vector (lambda_0 = 0) dropped and the next q kept. We solve the
equivalent symmetric problem L_sym u = lambda u with L_sym = I - D^{-1/2} W D^{-1/2}
and map back, v = D^{-1/2} u, exactly as scikit-learn's ``spectral_embedding``
does; the sparse eigenproblem is SciPy's ``eigsh`` in shift-invert mode.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh

from probdr_lite._validation import check_array, check_scalar, check_seed
from probdr_lite.graphs import check_weights, knn_graph, laplacian

__all__ = ["laplacian_eigenmaps", "embed_graph"]

# Below this many points a dense eigensolver is both exact and quick.
_DENSE_MAX_N = 300
# A graph with more than this share of its n^2 entries non-zero (an attention graph: every pair) is solved densely
# up to this many points: Lanczos on a dense matrix gains nothing from sparsity and, on the nearly disconnected
# attention graph of 2,000 MNIST latents, took a minute where the dense solver takes a third of a second.
_DENSE_SHARE = 0.25
_DENSE_GRAPH_MAX_N = 4096
# Shift for the fallback shift-invert: just left of the spectrum [0, 2] of L_sym, so that
# L_sym - sigma I is positive definite (factorisable) even though L_sym is singular.
_SHIFT = -1e-5


def _smallest_eigenpairs(L_sym, k: int, seed: int):
    """The k smallest eigenpairs of the sparse symmetric PSD matrix L_sym, ascending.

    L_sym's spectrum lies in [0, 2], so its k smallest eigenpairs are the k *largest* of M = 2 I - L_sym, which
    plain Lanczos finds with sparse products alone (``eigsh(which="LA")``). Shift-invert around 0, what
    scikit-learn's SpectralEmbedding does, factorises L_sym instead; on a k-NN graph of 10,000 MNIST images that
    factor has about 60 times the non-zeros of L_sym and costs tens of seconds, the Lanczos run about one second
    (``benchmarks/bench_eigenmaps.py``). Shift-invert remains the fallback if Lanczos does not converge.
    """
    n = L_sym.shape[0]
    dense = n <= _DENSE_GRAPH_MAX_N and L_sym.nnz > _DENSE_SHARE * n * n
    if n <= _DENSE_MAX_N or k >= n - 1 or dense:
        vals, vecs = la.eigh(L_sym.toarray(), subset_by_index=[0, k - 1])
        return vals, vecs
    v0 = np.random.default_rng(seed).uniform(-1.0, 1.0, n)
    try:
        M = (2.0 * sp.identity(n, format="csr") - L_sym).tocsr()
        top, vecs = eigsh(M, k=k, which="LA", v0=v0, tol=0.0)
        vals = 2.0 - top
    except (ArpackError, ArpackNoConvergence, RuntimeError):
        try:
            vals, vecs = eigsh(L_sym, k=k, sigma=_SHIFT, which="LM", v0=v0, tol=0.0)
        except (ArpackError, ArpackNoConvergence, RuntimeError):
            # Last resort: Lanczos for the smallest algebraic values of L_sym itself.
            vals, vecs = eigsh(L_sym, k=k, which="SA", v0=v0, tol=1e-10, maxiter=50 * n)
    order = np.argsort(vals)
    return vals[order], vecs[:, order]


def embed_graph(W, n_components: int = 2, random_state: int = 0,
                return_eigenvalues: bool = False):
    """Laplacian-eigenmaps embedding of a given graph (notes section 1, step 3).

    Solves L v = lambda D v via L_sym u = lambda u, v = D^{-1/2} u, and returns the
    eigenvectors 2, ..., q + 1 (the constant one is dropped). Columns satisfy
    v^T D v = 1; each column's sign is fixed so that its largest-magnitude
    entry is positive.

    Parameters
    ----------
    W : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric non-negative weights, every degree > 0.
    n_components : int, default 2
        q, in [1, n - 2].
    random_state : int, default 0
        Seed of the Lanczos start vector (results are reproducible).
    return_eigenvalues : bool, default False
        Also return the q generalised eigenvalues lambda_1..lambda_q.

    Returns
    -------
    X : ndarray, shape (n, q)
    eigenvalues : ndarray, shape (q,)
        Only when ``return_eigenvalues`` is True.
    """
    W = check_weights(W, "W")
    n = W.shape[0]
    if n < 3:
        raise ValueError(f"W must describe at least 3 points; got n = {n}")
    q = check_scalar(n_components, "n_components", low=1, high=n - 2, integer=True)
    seed = check_seed(random_state, "random_state")
    W = sp.csr_matrix(W, dtype=np.float64)
    if abs(W - W.T).max() > 1e-10 * max(abs(W).max(), 1e-300):
        raise ValueError("W must be symmetric (Laplacian eigenmaps needs an undirected graph)")
    n_parts, _ = connected_components(W, directed=False)
    if n_parts > 1:
        warnings.warn(
            f"the graph has {n_parts} connected components, so the eigenvalue 0 is repeated "
            "and the embedding mixes component indicators; use more neighbours",
            RuntimeWarning, stacklevel=2,
        )
    L_sym = laplacian(W, kind="symmetric")  # refuses isolated nodes with a clear message
    deg = np.asarray(W.sum(axis=1)).ravel()
    vals, U = _smallest_eigenpairs(L_sym, q + 1, seed)
    X = U / np.sqrt(deg)[:, None]  # v = D^{-1/2} u, so that v^T D v = u^T u = 1
    X, vals = X[:, 1:], vals[1:]  # drop the constant vector, lambda_0 = 0
    idx = np.argmax(np.abs(X), axis=0)
    X = X * np.sign(X[idx, np.arange(q)])[None, :]
    return (X, vals) if return_eigenvalues else X


def laplacian_eigenmaps(Y, n_components: int = 2, n_neighbors: int = 10,
                        mode: str = "connectivity", bandwidth=None, random_state: int = 0,
                        return_eigenvalues: bool = False, symmetrize: str = "max"):
    """Laplacian Eigenmaps of the rows of ``Y`` (Belkin & Niyogi, 2003; notes section 1).

    Builds the k-NN graph W (:func:`probdr_lite.graphs.knn_graph`), then solves the
    generalised eigenproblem L v = lambda D v through the symmetric normalised
    Laplacian (:func:`embed_graph`) and keeps eigenvectors 2..q+1.

    Agreement with scikit-learn: ``SpectralEmbedding(n_components=q,
    affinity="nearest_neighbors", n_neighbors=k)`` counts each point as one of its
    own k neighbours and symmetrises with (G + G^T) / 2. Its graph is therefore
    ``knn_graph(Y, k - 1, symmetrize="mean")``; with those two arguments this
    function reproduces its embedding up to sign. With the Belkin-Niyogi defaults
    (max-symmetrisation, k other points) the subspaces still agree closely on
    smooth manifolds; the unit tests measure both.

    Parameters
    ----------
    Y : array_like or torch.Tensor, shape (n, d)
    n_components : int, default 2
        q, in [1, n - 2].
    n_neighbors : int, default 10
        k, in [1, n - 1].
    mode : {"connectivity", "heat"}, default "connectivity"
    bandwidth : float > 0 or None
        Heat-kernel t (see :func:`probdr_lite.graphs.knn_graph`).
    random_state : int, default 0
    return_eigenvalues : bool, default False
    symmetrize : {"max", "mean"}, default "max"

    Returns
    -------
    X : ndarray, shape (n, q), float64
    eigenvalues : ndarray, shape (q,), only when ``return_eigenvalues`` is True.
    """
    Y = check_array(Y, "Y", ndim=2, min_rows=3)
    q = check_scalar(n_components, "n_components", low=1, high=Y.shape[0] - 2, integer=True)
    W = knn_graph(Y, n_neighbors=n_neighbors, mode=mode, bandwidth=bandwidth,
                  symmetrize=symmetrize)
    return embed_graph(W, n_components=q, random_state=random_state,
                       return_eigenvalues=return_eigenvalues)
