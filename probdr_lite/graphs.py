"""Neighbourhood graphs and their Laplacians (the Laplacian Eigenmaps chapter).

Laplacian Eigenmaps (Belkin & Niyogi, 2003) starts from a graph on the n data
points. This module builds it and turns it into the matrices the rest of the
book uses:

- :func:`knn_graph`   the symmetrised k-nearest-neighbour graph W, with 0/1 or
  heat-kernel weights W_ij = exp(-||y_i - y_j||^2 / t);
- :func:`laplacian`   L = D - W, L_sym = I - D^{-1/2} W D^{-1/2} or
  L_rw = I - D^{-1} W, with D = diag(W 1);
- :func:`graph_energy` the Laplacian-eigenmaps energy sum_ij W_ij ||x_i - x_j||^2,
  which equals 2 tr(X^T L X) for a symmetric W;
- :func:`default_bandwidth` the heat-kernel bandwidth ``knn_graph`` picks by default;
- :func:`heat_kernel_attention` the random walk D^{-1} W' of an all-pairs heat-kernel graph, which is softmax
  attention on the LayerNorm sphere (notes 3.7).

Finding the neighbours is scikit-learn's job (``kneighbors_graph``); this module
only chooses weights, symmetrises and normalises.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph

from probdr_lite._validation import check_array, check_choice, check_scalar

__all__ = ["knn_graph", "default_bandwidth", "heat_kernel_attention", "laplacian", "graph_energy", "check_weights"]

GRAPH_MODES = ("connectivity", "heat")
SYMMETRIZATIONS = ("max", "mean")
LAPLACIAN_KINDS = ("unnormalized", "symmetric", "random_walk")


def check_weights(W, name: str = "W"):
    """Return ``W`` as a float CSR matrix or a float NumPy array after checks.

    The weight matrix must be square, finite and non-negative. Sparse input
    stays sparse (CSR), anything else goes through :func:`check_array`.
    """
    if sp.issparse(W):
        if W.ndim != 2 or W.shape[0] != W.shape[1]:
            raise ValueError(f"{name} must be a square (n, n) matrix; got shape {W.shape}")
        if not (np.issubdtype(W.dtype, np.number) or W.dtype == np.bool_):
            raise TypeError(f"{name} must hold numbers; got dtype {W.dtype}")
        W = sp.csr_matrix(W)
        if W.dtype not in (np.float32, np.float64):
            W = W.astype(np.float64)
        if not np.all(np.isfinite(W.data)):
            raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    else:
        W = check_array(W, name, ndim=2, square=True)
    data = W.data if sp.issparse(W) else W
    if data.size and data.min() < 0:
        raise ValueError(f"{name} must have non-negative edge weights; smallest is {data.min():g}")
    return W


def knn_graph(Y, n_neighbors: int = 10, mode: str = "connectivity", bandwidth=None,
              symmetrize: str = "max"):
    """Symmetric k-nearest-neighbour graph of the rows of ``Y`` (the Laplacian Eigenmaps chapter).

    Each point is joined to its ``n_neighbors`` nearest other points (Euclidean
    distance, found by :func:`sklearn.neighbors.kneighbors_graph`). The directed
    graph G is then made symmetric, by default as in Belkin & Niyogi (2003):
    W = max(G, G^T), i.e. i ~ j if either is among the other's neighbours.

    Weights (``mode``):

    - ``"connectivity"``: W_ij = 1 on every edge;
    - ``"heat"``: W_ij = exp(-||y_i - y_j||^2 / t), the heat kernel with
      bandwidth t (the book's convention everywhere: softmax attention with
      sharpness kappa on unit rows is this kernel with t = 2 / kappa). By default t is the mean squared distance from a point to
      its k nearest neighbours, so that a typical edge has weight about e^{-1}
      whatever the scale of the data (if every such distance is 0, t = 1).

    Parameters
    ----------
    Y : array_like or torch.Tensor, shape (n, d)
        Data, one point per row; n >= 2.
    n_neighbors : int, default 10
        k, in [1, n - 1].
    mode : {"connectivity", "heat"}, default "connectivity"
    bandwidth : float > 0 or None, default None
        The heat-kernel t; ignored for ``"connectivity"``. None picks the data
        default above.
    symmetrize : {"max", "mean"}, default "max"
        ``"max"``: W = max(G, G^T) (Belkin & Niyogi). ``"mean"``:
        W = (G + G^T) / 2, the convention of scikit-learn's
        ``SpectralEmbedding``.

    Returns
    -------
    W : scipy.sparse.csr_matrix, shape (n, n)
        Symmetric, non-negative, zero diagonal; float64 (float32 if ``Y`` is float32).
    """
    Y = check_array(Y, "Y", ndim=2, min_rows=2)
    n = Y.shape[0]
    k = check_scalar(n_neighbors, "n_neighbors", low=1, high=n - 1, integer=True)
    mode = check_choice(mode, "mode", GRAPH_MODES)
    symmetrize = check_choice(symmetrize, "symmetrize", SYMMETRIZATIONS)
    if bandwidth is not None:
        bandwidth = check_scalar(bandwidth, "bandwidth", low=0, low_inclusive=False)

    # Directed graph G: row i holds the distances to the k nearest *other* points
    # (include_self=False drops i itself, even when it has duplicates).
    G = kneighbors_graph(Y, k, mode="distance", include_self=False)
    G = sp.csr_matrix(G, dtype=np.float64)
    if mode == "connectivity":
        G.data = np.ones_like(G.data)
    else:
        sq = G.data ** 2  # explicit zeros (duplicate points) are kept: weight exp(0) = 1
        t = bandwidth if bandwidth is not None else float(sq.mean())
        if t == 0.0:
            t = 1.0
        G.data = np.exp(-sq / t)

    W = G.maximum(G.T) if symmetrize == "max" else 0.5 * (G + G.T)
    W = sp.coo_matrix(W)
    off = (W.row != W.col) & (W.data != 0)  # zero diagonal, no stored zeros
    W = sp.csr_matrix((W.data[off], (W.row[off], W.col[off])), shape=(n, n), dtype=Y.dtype)
    W.sort_indices()
    return W


def laplacian(W, kind: str = "unnormalized"):
    """Graph Laplacian of a weight matrix (the Laplacian Eigenmaps chapter).

    With the degree matrix D = diag(W 1) (row sums),

    - ``"unnormalized"``: L = D - W;
    - ``"symmetric"``:    L_sym = I - D^{-1/2} W D^{-1/2};
    - ``"random_walk"``:  L_rw = I - D^{-1} W (the "I - A" of the paper, with
      A = D^{-1} W row-stochastic).

    All three share the eigenvalue 0 when W is symmetric: L 1 = 0,
    L_sym D^{1/2} 1 = 0, L_rw 1 = 0. W need not be symmetric (an attention
    matrix is not); the degree is then the out-degree (row sums).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix, shape (n, n)
        Non-negative edge weights. The normalised kinds need every degree > 0.
    kind : {"unnormalized", "symmetric", "random_walk"}, default "unnormalized"

    Returns
    -------
    L : same kind of matrix as ``W`` (sparse CSR in, CSR out; dense in, dense out).
    """
    W = check_weights(W, "W")
    kind = check_choice(kind, "kind", LAPLACIAN_KINDS)
    n = W.shape[0]
    deg = np.asarray(W.sum(axis=1)).ravel()
    if kind != "unnormalized":
        isolated = np.flatnonzero(deg <= 0)
        if isolated.size:
            raise ValueError(
                f"W has {isolated.size} isolated node(s) with zero degree (first: index "
                f"{isolated[0]}); kind={kind!r} divides by the degree. Use more neighbours, "
                "drop those points, or use kind='unnormalized'."
            )
    if sp.issparse(W):
        D = sp.diags(deg)
        eye = sp.identity(n, dtype=W.dtype, format="csr")
        if kind == "unnormalized":
            L = D - W
        elif kind == "symmetric":
            s = sp.diags(1.0 / np.sqrt(deg))
            L = eye - s @ W @ s
        else:
            L = eye - sp.diags(1.0 / deg) @ W
        return sp.csr_matrix(L, dtype=W.dtype)
    if kind == "unnormalized":
        L = np.diag(deg) - W
    elif kind == "symmetric":
        s = 1.0 / np.sqrt(deg)
        L = np.eye(n) - s[:, None] * W * s[None, :]
    else:
        L = np.eye(n) - W / deg[:, None]
    return L.astype(W.dtype, copy=False)


def graph_energy(X, W) -> float:
    """Laplacian-eigenmaps energy E(X) = sum_ij W_ij ||x_i - x_j||^2 (the Laplacian Eigenmaps chapter).

    Computed edge by edge from the definition. For a symmetric W it equals
    2 tr(X^T L X) with L = D - W, the trace term of the ProbDR ELBO; for a
    general W it equals tr(X^T (D_out + D_in - W - W^T) X).

    Parameters
    ----------
    X : array_like or torch.Tensor, shape (n, q)
        Embedding, one point per row.
    W : array_like or scipy.sparse matrix, shape (n, n)
        Non-negative edge weights.

    Returns
    -------
    float
    """
    X = check_array(X, "X", ndim=2)
    W = check_weights(W, "W")
    if W.shape[0] != X.shape[0]:
        raise ValueError(f"W must be ({X.shape[0]}, {X.shape[0]}) to match X; got shape {W.shape}")
    C = sp.coo_matrix(W)
    X = X.astype(np.float64, copy=False)
    total = 0.0
    chunk = 1 << 16  # edges per block, to bound memory for big graphs
    for start in range(0, C.nnz, chunk):
        r = C.row[start:start + chunk]
        c = C.col[start:start + chunk]
        w = C.data[start:start + chunk].astype(np.float64)
        diff = X[r] - X[c]  # (edges, q)
        total += float(np.dot(w, np.einsum("eq,eq->e", diff, diff)))
    return total


def default_bandwidth(Y, n_neighbors: int = 10) -> float:
    """The heat-kernel bandwidth t that :func:`knn_graph` picks by default: the mean squared distance from a point
    to its ``n_neighbors`` nearest neighbours."""
    Y = check_array(Y, "Y", ndim=2, min_rows=2)
    G = sp.coo_matrix(knn_graph(Y, n_neighbors))
    Y64 = Y.astype(np.float64)
    return float(np.mean(np.sum((Y64[G.row] - Y64[G.col]) ** 2, axis=1)))


def heat_kernel_attention(X, kappa, beta=0.0) -> np.ndarray:
    """The random-walk matrix D^{-1} W' of a heat-kernel graph, built without any softmax (notes 3.7).

    The rows of X are first scaled to unit norm, x_i -> x_i / ||x_i||. The graph is the Laplacian Eigenmaps
    chapter's heat-kernel graph on all pairs, W_ij = exp(-kappa ||x_i - x_j||^2 / 2) (``knn_graph`` with every
    other point a neighbour and bandwidth t = 2 / kappa), plus self-loops of weight exp(-beta): W' = W + e^{-beta} I,
    D = diag(W' 1). For unit rows exp(kappa x_i . x_j) = e^kappa exp(-kappa ||x_i - x_j||^2 / 2), so this equals the
    softmax attention ``attention_matrix(X, kappa, beta)`` for LayerNormed X (whose logits are
    kappa cos(x_i, x_j) - beta [i = j]).

    Parameters
    ----------
    X : array (n, d), n >= 2, no zero rows
    kappa : float in (0, 1000]
    beta : float in [0, 1000]

    Returns
    -------
    ndarray (n, n), rows summing to 1.
    """
    X = check_array(X, "X", ndim=2, min_rows=2).astype(np.float64)
    kappa = check_scalar(kappa, "kappa", low=0.0, high=1000.0, low_inclusive=False)
    beta = check_scalar(beta, "beta", low=0.0, high=1000.0)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("X must have no zero rows (each row is scaled to unit norm)")
    n = X.shape[0]
    W = knn_graph(X / norms, n_neighbors=n - 1, mode="heat", bandwidth=2.0 / kappa).toarray()
    W += math.exp(-beta) * np.eye(n)
    return W / W.sum(1, keepdims=True)
