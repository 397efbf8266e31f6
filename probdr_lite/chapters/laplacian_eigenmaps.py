"""The Laplacian Eigenmaps chapter's measurements: the numbers its paragraphs paste and its claims check.

The chapter (``book/src/laplacian_eigenmaps.py``) writes its sentences in Markdown, glues these numbers into them and
checks beside each paragraph, with :func:`probdr_lite.presentation.prose.claim`, the facts that make it true.
:func:`order_along_roll` builds the heat-kernel k-NN graph of the Swiss roll at each (k, t) and its one-dimensional
Laplacian Eigenmaps embedding, and scores how well that coordinate sorts the points along the roll;
:func:`unrolling_facts` says which settings keep the order, by a threshold that is an argument with a default.
:func:`agreement_facts` counts the decimals that the principal-angle cosines of
:func:`probdr_lite.presentation.figures.neighbourhoods.compare_figure`'s rows share with 1
(:func:`decimals_of_agreement`). :func:`smooth_functions` are the three functions the energy figure draws
(:func:`probdr_lite.presentation.figures.neighbourhoods.energy_figure`) and :func:`smoothness_facts` what the
chapter says of them; :func:`order_score` and :func:`harmonic_score` read a coordinate against the position along a
sheet and against another coordinate. :func:`classes_apart` says which classes (digits) an embedding sets apart.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.stats import spearmanr

from probdr_lite._validation import check_array, check_class_labels, check_length, check_scalar, check_seed
from probdr_lite.eigenmaps import embed_graph
from probdr_lite.graphs import check_weights, graph_energy, knn_graph

__all__ = ["order_score", "harmonic_score", "order_along_roll", "unrolling_facts", "agreement_facts",
           "decimals_of_agreement", "smooth_functions", "smoothness_facts", "classes_apart"]


def order_score(x, t) -> float:
    """|Spearman correlation| of a coordinate ``x`` with the position ``t`` along a sheet: 1 when sorting the points
    by ``x`` lists them exactly in their order along it, near 0 when the two have nothing to do with each other."""
    x = check_array(x, "x", ndim=1)
    t = check_array(t, "t", ndim=1)
    check_length(t, "t", x.shape[0], "entry of x")
    return abs(float(spearmanr(x, t)[0]))


def harmonic_score(first, second) -> float:
    """How far ``second`` is a second harmonic of ``first``: the |Spearman correlation| of ``second`` with the distance
    of each point's rank in ``first`` from the middle rank. A second harmonic along a line (cos 2 theta against
    cos theta) is high at both ends and low in the middle, or the reverse, and scores near 1."""
    first = check_array(first, "first", ndim=1)
    second = check_array(second, "second", ndim=1)
    check_length(second, "second", first.shape[0], "entry of first")
    rank = np.argsort(np.argsort(first))
    return abs(float(spearmanr(second, np.abs(rank - (first.shape[0] - 1) / 2))[0]))


def order_along_roll(Y, t, frames) -> list:
    """For each frame (n_neighbors, bandwidth): |Spearman correlation| of the first Laplacian-eigenmaps coordinate
    with the position ``t`` along the sheet (1 = the coordinate sorts the points exactly), or NaN when the graph
    falls apart (then there is no single embedding). The graph and embedding are those of the chapter's panel."""
    Y = check_array(Y, "Y", ndim=2, min_rows=10)
    t = check_array(t, "t", ndim=1)
    check_length(t, "t", Y.shape[0], "row of Y")
    out = []
    for k, bw in frames:
        W = knn_graph(Y, n_neighbors=int(k), mode="heat", bandwidth=float(bw))
        if connected_components(W, directed=False)[0] > 1:
            out.append(math.nan)
            continue
        X = embed_graph(W, n_components=1)
        out.append(order_score(X[:, 0], t))
    return out


def unrolling_facts(Y, t, frames, in_order: float = 0.9) -> dict:
    """Where settings ``frames`` = [(k, bandwidth), ...] of the swiss roll keep and lose the order along the roll.

    ``frames``: one dict per setting in the given order, with ``k``, ``t`` (the bandwidth), ``rho``
    (:func:`order_along_roll`, NaN when the graph falls apart), ``apart`` (it does) and ``in_order`` (``rho`` is at
    least the threshold ``in_order``; a graph that falls apart is out of order); and ``in_order_from``, the threshold
    itself.
    """
    in_order = check_scalar(in_order, "in_order", low=0.0, high=1.0)
    frames = [(int(k), float(bw)) for k, bw in frames]
    rho = order_along_roll(Y, t, frames)
    rows = [{"k": k, "t": bw, "rho": r, "apart": math.isnan(r), "in_order": bool(not math.isnan(r) and r >= in_order)}
            for (k, bw), r in zip(frames, rho)]
    return {"frames": rows, "in_order_from": in_order}


def decimals_of_agreement(cosine) -> int:
    """How many decimals 1 and ``cosine`` share: floor(-log10(1 - cosine)), capped at 15 (round-off)."""
    c = float(cosine)
    if not -1.0 <= c <= 1.0 + 1e-12:
        raise ValueError(f"cosine must lie in [-1, 1]; got {c}")
    gap = 1.0 - min(c, 1.0)
    return 15 if gap <= 1e-15 else max(0, int(math.floor(-math.log10(gap))))


def agreement_facts(rows, roundoff: int = 10) -> dict:
    """The agreement of ``compare_figure``'s rows: decimals shared with 1 (:func:`decimals_of_agreement`) by the
    smallest principal-angle cosine, on the same graph and on the Belkin-Niyogi graph.

    ``sets``: one dict per data set, in the rows' order, with ``name``, ``same`` and ``bn`` (those decimals);
    ``names``; ``fewest``, the data set whose Belkin-Niyogi agreement has the fewest decimals (the first of a tie);
    ``to_roundoff``, every data set agrees on the same graph to at least ``roundoff`` decimals.
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows must hold at least one data set from compare_figure")
    roundoff = check_scalar(roundoff, "roundoff", low=0, high=15, integer=True)
    sets = [{"name": r["name"], "same": decimals_of_agreement(r["agreement_same_graph"]),
             "bn": decimals_of_agreement(np.min(r["cosines"]))} for r in rows]
    return {"sets": sets, "names": [s["name"] for s in sets], "fewest": min(sets, key=lambda s: s["bn"])["name"],
            "roundoff": roundoff, "to_roundoff": min(s["same"] for s in sets) >= roundoff}


def smooth_functions(W, colour_index: int = 12, seed: int = 0) -> list:
    """The three functions on a connected graph ``W`` that the energy figure draws, each with its name and eigenvalue.

    The first generalised eigenvector v_1 of L v = lambda D v (the constant vector dropped), the ``colour_index``-th
    one, and a random vector (``seed``) made D-orthogonal to the constant vector and scaled to f^T D f = 1, as the
    eigenvectors are, so that their energies E(f) = sum_ij W_ij (f_i - f_j)^2 compare fairly (for an eigenvector
    E = 2 lambda). Returns a list of three dicts with ``f`` (array (n,)), ``index`` (1, ``colour_index``, or None
    for the random vector) and ``lam`` (its eigenvalue, or None).
    """
    W = check_weights(W, "W")
    n = W.shape[0]
    m = check_scalar(colour_index, "colour_index", low=2, high=min(n - 2, 50), integer=True)
    n_parts, _ = connected_components(W, directed=False)
    if n_parts > 1:
        raise ValueError(f"W must be a connected graph; it has {n_parts} components (use more neighbours)")
    V, lam = embed_graph(W, n_components=m, return_eigenvalues=True)
    deg = np.asarray(W.sum(axis=1)).ravel().astype(np.float64)
    r = np.random.default_rng(check_seed(seed)).standard_normal(n)
    r -= (deg @ r) / deg.sum()  # D-orthogonal to the constant vector
    r /= np.sqrt(r @ (deg * r))  # f^T D f = 1
    return [{"f": V[:, 0], "index": 1, "lam": float(lam[0])},
            {"f": V[:, m - 1], "index": m, "lam": float(lam[m - 1])},
            {"f": r, "index": None, "lam": None}]


def smoothness_facts(W, functions, colour_step: float = 0.05) -> dict:
    """What the chapter says of :func:`smooth_functions`' three functions on the graph ``W``.

    For each function, in the given order: ``energy`` (sum_ij W_ij (f_i - f_j)^2), ``largest_step`` (the largest
    |f_i - f_j| over the edges, as a share of the function's range, which the figure's colour scale spans) and
    ``changes`` (the share of edges across which f changes by more than ``colour_step`` of its range: a visible
    change of colour) and ``crossings`` (how often f changes sign when the points are sorted by the first function,
    which for v_1 is their order along the graph: how often f oscillates along it). Each is a list of three;
    ``colour_step`` is returned too.
    """
    W = check_weights(W, "W")
    colour_step = check_scalar(colour_step, "colour_step", low=0.0, high=1.0, low_inclusive=False)
    C = sp.triu(sp.coo_matrix(W), k=1).tocoo()
    out = {"energy": [], "largest_step": [], "changes": [], "crossings": [], "colour_step": colour_step}
    functions = list(functions)
    along = np.argsort(check_array(functions[0]["f"], "f", ndim=1))
    for fn in functions:
        f = check_array(fn["f"], "f", ndim=1)
        signs = np.sign(f[along])
        out["crossings"].append(int(np.count_nonzero(np.diff(signs[signs != 0]))))  # a zero is no change of sign
        step = np.abs(f[C.row] - f[C.col]) / np.ptp(f)
        out["energy"].append(float(graph_energy(f[:, None], W)))
        out["largest_step"].append(float(step.max()))
        out["changes"].append(float(np.mean(step > colour_step)))
    return out


def classes_apart(X, labels, n_neighbors: int = 10, apart: float = 0.75) -> dict:
    """Which classes an embedding ``X`` (n, q) sets apart: for each point, the share of its ``n_neighbors`` nearest
    other points in ``X`` (Euclidean) that have its label; averaged over the points of each class, that is the
    class's ``purity`` (1 when a class lies on its own, about its share of the points when it is mixed in).

    Returns a dict: ``classes`` (the sorted labels), ``purity`` (one float per class, in that order), ``apart`` (the
    classes whose purity is at least ``apart``, in order) and ``others_max`` (the largest purity of the other classes,
    NaN if there are none).
    """
    from sklearn.neighbors import NearestNeighbors

    X = check_array(X, "X", ndim=2, min_rows=3)
    labels = check_class_labels(labels, X.shape[0], "X")
    k = check_scalar(n_neighbors, "n_neighbors", low=1, high=X.shape[0] - 1, integer=True)
    apart = check_scalar(apart, "apart", low=0.0, high=1.0)
    _, idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    same = np.empty(X.shape[0])
    for i, row in enumerate(idx):
        others = row[row != i][:k]  # the point itself left out (a duplicate point may come first)
        same[i] = np.mean(labels[others] == labels[i])
    classes = np.unique(labels)
    purity = [float(same[labels == c].mean()) for c in classes]
    kept = [int(c) for c, p in zip(classes, purity) if p >= apart]
    rest = [p for c, p in zip(classes, purity) if int(c) not in kept]
    return {"classes": [int(c) for c in classes], "purity": purity, "apart": kept,
            "others_max": float(max(rest)) if rest else float("nan")}
