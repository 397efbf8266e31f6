"""The Laplacian Eigenmaps chapter's measurements: the numbers its paragraphs paste and its claims check.

The chapter (``book/src/laplacian_eigenmaps.py``) writes its sentences in Markdown, glues these numbers into them and
checks beside each paragraph, with :func:`probdr_lite.presentation.prose.claim`, the facts that make it true.
:func:`order_along_roll` builds the heat-kernel k-NN graph of the Swiss roll at each (k, t) and its one-dimensional
Laplacian Eigenmaps embedding, and scores how well that coordinate sorts the points along the roll;
:func:`unrolling_facts` says which settings keep the order, by a threshold that is an argument with a default.
:func:`agreement_facts` counts the decimals that the principal-angle cosines of
:func:`probdr_lite.presentation.figures.neighbourhoods.compare_figure`'s rows share with 1
(:func:`decimals_of_agreement`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse.csgraph import connected_components
from scipy.stats import spearmanr

from probdr_lite._validation import check_array, check_length, check_scalar
from probdr_lite.eigenmaps import embed_graph
from probdr_lite.graphs import knn_graph

__all__ = ["order_along_roll", "unrolling_facts", "agreement_facts", "decimals_of_agreement"]


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
        out.append(abs(float(spearmanr(X[:, 0], t)[0])))
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
