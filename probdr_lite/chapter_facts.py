"""Small measurements of the Laplacian Eigenmaps, unrolled-inference and transformer-block chapters.

Each function computes what a chapter's sentence states, and the chapter holds the sentence: a template filled by
:func:`probdr_lite.presentation.prose.fill` (``book/src/laplacian_eigenmaps.py``, ``book/src/unrolled_inference.py``), or,
for the transformer block's toy, templates the chapter passes its live figure, which
:func:`probdr_lite.presentation.live.builders.toy_live` fills (``book/src/transformer_block.py``).
:func:`order_along_roll` builds the heat-kernel k-NN graph of the Swiss roll at each (k, t) and its one-dimensional
Laplacian Eigenmaps embedding, and scores how well that coordinate sorts the points along the roll;
:func:`unrolling_facts` says which settings keep the order. :func:`agreement_facts` counts the decimals that the
principal-angle cosines of :func:`probdr_lite.presentation.figures.neighbourhoods.compare_figure`'s rows share with 1
(:func:`decimals_of_agreement`). :func:`eta_outcomes` runs gradient ascent on the LE-ELBO at each step size and
says whether it diverged, converged or fell short; :func:`eta_facts` groups the step sizes by that and sets them
beside the step-size thresholds. :func:`toy_beta_effect` runs the transformer-block toy's blocks at both ends of
beta's range, and :func:`toy_beta_facts` gives what the toy's caption states about it.

Every choice a sentence makes is a boolean here, decided by a threshold that is an argument with a default, and
the tests feed numbers on both sides of it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse.csgraph import connected_components
from scipy.stats import spearmanr

from probdr_lite._validation import check_array, check_length, check_scalar
from probdr_lite.eigenmaps import embed_graph
from probdr_lite.graphs import knn_graph
from probdr_lite.lifted_toy import toy_paths
from probdr_lite.probdr import CONVERGED, fit_le_elbo
from probdr_lite.unrolled import attention_matrix

__all__ = ["order_along_roll", "unrolling_facts", "agreement_facts", "decimals_of_agreement", "eta_outcomes",
           "eta_facts", "toy_beta_effect", "toy_beta_facts"]


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
    least the threshold ``in_order``; a graph that falls apart is out of order); ``kept`` and ``lost``: the frames in
    and out of order; ``all_in_order`` and ``none_in_order``; and ``in_order_from``, the threshold itself.
    """
    in_order = check_scalar(in_order, "in_order", low=0.0, high=1.0)
    frames = [(int(k), float(bw)) for k, bw in frames]
    rho = order_along_roll(Y, t, frames)
    rows = [{"k": k, "t": bw, "rho": r, "apart": math.isnan(r), "in_order": bool(not math.isnan(r) and r >= in_order)}
            for (k, bw), r in zip(frames, rho)]
    kept = [r for r in rows if r["in_order"]]
    lost = [r for r in rows if not r["in_order"]]
    return {"frames": rows, "kept": kept, "lost": lost, "in_order_from": in_order,
            "all_in_order": not lost, "none_in_order": not kept}


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


def eta_outcomes(L_hat, beta, etas, *, n_components=2, n_steps=600, seed=0, converged=CONVERGED) -> list:
    """For each step size, what the unrolled-inference chapter's run does in ``n_steps`` steps (the eta figure's runs):
    ``"diverged"``, ``"converged"`` (Gram error below ``converged``) or ``"short"`` (neither)."""
    out = []
    for eta in etas:
        fit = fit_le_elbo(L_hat, n_components, beta, eta=float(eta), n_steps=n_steps, seed=seed, centre=True,
                          store_every=n_steps)
        if fit.diverged:
            out.append("diverged")
        elif fit.gram_error[-1] < converged:
            out.append("converged")
        else:
            out.append("short")
    return out


def eta_facts(L_hat, beta, etas, marks, *, n_components=2, n_steps=600, seed=0, converged=CONVERGED) -> dict:
    """The eta figure's step sizes ``etas`` grouped by what the run does (:func:`eta_outcomes`), beside the
    thresholds of :func:`probdr_lite.probdr.step_sizes` (``marks``).

    ``groups``: for each outcome that some step size has, in the order short, converged, diverged, a dict with the
    ``etas`` (in the given order) and the booleans ``short``, ``converged`` and ``diverged`` (which outcome it is);
    ``gram_below`` (the Gram error a converged run ends below) and ``n_steps``; ``safe`` and ``divergent`` from
    ``marks``; ``diverged_past_threshold``: the runs that diverged are exactly those with ``eta`` above
    ``divergent``.
    """
    outcomes = eta_outcomes(L_hat, beta, etas, n_components=n_components, n_steps=n_steps, seed=seed,
                            converged=converged)
    groups = []
    for kind in ("short", "converged", "diverged"):
        group = [float(e) for e, o in zip(etas, outcomes) if o == kind]
        if group:
            groups.append({"etas": group, **{k: k == kind for k in ("short", "converged", "diverged")}})
    diverged = {float(e) for e, o in zip(etas, outcomes) if o == "diverged"}
    return {"groups": groups, "gram_below": float(converged), "n_steps": int(n_steps),
            "safe": float(marks["safe"]), "divergent": float(marks["divergent"]),
            "diverged_past_threshold": {float(e) for e in etas if e > marks["divergent"]} == diverged}


def toy_beta_effect(toy, kappas, betas, *, eta, depth, variant="paper", weak: float = 0.1) -> dict:
    """What beta's range does to the transformer-block chapter's toy (:func:`probdr_lite.lifted_toy.make_toy`) at each kappa.

    For each kappa in ``kappas`` and the two ends ``betas`` = (lowest, highest): the mean distance the points move in
    ``depth`` blocks and in one block (:func:`probdr_lite.lifted_toy.toy_paths`, points pushed past the equator
    left out), and the mean weight A_ii a point gives itself in the first block
    (:func:`probdr_lite.unrolled.attention_matrix`). ``weak`` is True when, at every kappa, the distance moved in
    ``depth`` blocks changes by less than the fraction ``weak`` over the range.
    """
    weak = check_scalar(weak, "weak", low=0.0, high=1.0)
    depth = check_scalar(depth, "depth", low=1, high=1000, integer=True)
    if len(betas) != 2 or not betas[0] < betas[1]:
        raise ValueError(f"betas must be the two ends of beta's range, lowest first; got {betas!r}")

    def moved(path, t):
        ok = np.isfinite(path[t][:, 0])
        return float(np.linalg.norm(path[t][ok] - path[0][ok], axis=1).mean())

    rows = []
    for kappa in kappas:
        row = {"kappa": float(kappa), "moved": [], "moved_1": [], "self": []}
        for beta in betas:
            path = toy_paths(toy, depth, kappa, eta, beta, [variant])[variant]
            row["moved"].append(moved(path, depth))
            row["moved_1"].append(moved(path, 1))
            A = attention_matrix(toy.X0, kappa, beta)
            row["self"].append(float(A.diagonal().mean()))
        row["change"] = row["moved"][1] / row["moved"][0] - 1.0
        rows.append(row)
    return {"rows": rows, "betas": [float(b) for b in betas], "eta": float(eta), "depth": depth, "variant": variant,
            "d_q": toy.d_q, "weak_below": weak, "weak": all(abs(r["change"]) < weak for r in rows)}


def toy_beta_facts(effect) -> dict:
    """What the toy's sentence about beta states, from :func:`toy_beta_effect`'s ``effect``.

    ``beta_lo`` and ``beta_hi`` (the ends of beta's range), ``depth``, ``weak`` and ``weak_below`` (the effect's);
    ``paper``, the variant is the paper's block, whose feed-forward term has the weight 2/(d_q + beta), with
    ``d_q`` and that weight at both ends, ``ff_lo`` and ``ff_hi``; ``rows``: one dict per kappa with ``kappa``,
    ``moved_lo`` and ``moved_hi`` (the mean distance moved in ``depth`` blocks at both ends), ``change_percent``
    (its relative change, in %), ``self_lo_percent`` and ``self_hi_percent`` (the mean weight a point gives itself
    in the first block, in %); ``widest_kappa``, the kappa whose first block's distance changes most over the
    range (relative to its value at the lowest beta; the first of a tie), and that distance at both ends,
    ``widest_lo`` and ``widest_hi``.
    """
    (b0, b1), d_q = effect["betas"], effect["d_q"]
    rows = effect["rows"]
    if not rows:
        raise ValueError("effect must hold at least one kappa's row (see toy_beta_effect)")
    widest = max(rows, key=lambda r: abs(r["moved_1"][1] / r["moved_1"][0] - 1))
    return {"beta_lo": b0, "beta_hi": b1, "depth": effect["depth"], "weak": bool(effect["weak"]),
            "weak_below": effect["weak_below"], "paper": effect["variant"] == "paper", "d_q": d_q,
            "ff_lo": 2 / (d_q + b0), "ff_hi": 2 / (d_q + b1),
            "rows": [{"kappa": r["kappa"], "moved_lo": r["moved"][0], "moved_hi": r["moved"][1],
                      "change_percent": 100 * r["change"], "self_lo_percent": 100 * r["self"][0],
                      "self_hi_percent": 100 * r["self"][1]} for r in rows],
            "widest_kappa": widest["kappa"], "widest_lo": widest["moved_1"][0], "widest_hi": widest["moved_1"][1]}
