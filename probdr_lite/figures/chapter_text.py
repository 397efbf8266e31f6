"""Small measurements of the Laplacian Eigenmaps, unrolled-inference and transformer-block chapters, and the
sentences that state them.

Most of these functions compute before they word: :func:`order_along_roll` builds the heat-kernel k-NN graph of the
Swiss roll at each (k, t) and its one-dimensional Laplacian Eigenmaps embedding, and scores how well that coordinate
sorts the points along the roll; :func:`unrolling_sentence` words those scores. :func:`eta_outcomes` runs gradient
ascent on the LE-ELBO at each step size and says whether it diverged, converged or fell short; :func:`eta_sentence`
words that beside the step-size thresholds. :func:`toy_beta_effect` runs the transformer-block toy's blocks at both
ends of beta's range; :func:`toy_beta_sentence` words it (in the caption of the toy's live figure).
:func:`agreement_sentence` only words the principal-angle cosines of
:func:`probdr_lite.figures.eigenmaps.compare_figure`'s rows (:func:`decimals_of_agreement`).

The chapters print the sentences with ``display(Markdown(...))`` in a hidden-input cell, so that no fixed adjective
or count in the prose can drift from what the code computed. The thresholds behind the words are arguments with
defaults, and the tests feed numbers for which each word would be false.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse.csgraph import connected_components
from scipy.stats import spearmanr

from probdr_lite._validation import check_array, check_scalar
from probdr_lite.eigenmaps import embed_graph
from probdr_lite.figures.prose import listing, num
from probdr_lite.graphs import knn_graph
from probdr_lite.probdr import fit_le_elbo

__all__ = ["order_along_roll", "unrolling_sentence", "agreement_sentence", "decimals_of_agreement", "eta_outcomes",
           "eta_sentence", "toy_beta_effect", "toy_beta_sentence"]


def order_along_roll(Y, t, frames) -> list:
    """For each frame (n_neighbors, bandwidth): |Spearman correlation| of the first Laplacian-eigenmaps coordinate
    with the position ``t`` along the sheet (1 = the coordinate sorts the points exactly), or NaN when the graph
    falls apart (then there is no single embedding). The graph and embedding are those of the chapter's panel."""
    Y = check_array(Y, "Y", ndim=2, min_rows=10)
    t = check_array(t, "t", ndim=1)
    if t.shape[0] != Y.shape[0]:
        raise ValueError(f"t must have one value per row of Y ({Y.shape[0]}); got {t.shape[0]}")
    out = []
    for k, bw in frames:
        W = knn_graph(Y, n_neighbors=int(k), mode="heat", bandwidth=float(bw))
        if connected_components(W, directed=False)[0] > 1:
            out.append(math.nan)
            continue
        X = embed_graph(W, n_components=1)
        out.append(abs(float(spearmanr(X[:, 0], t)[0])))
    return out


def unrolling_sentence(Y, t, frames, in_order: float = 0.9) -> str:
    """Where settings ``frames`` = [(k, bandwidth), ...] of the swiss roll lose and regain the order along the roll.

    A frame counts as *in order* when :func:`order_along_roll` is at least ``in_order``.
    """
    in_order = check_scalar(in_order, "in_order", low=0.0, high=1.0)
    frames = [(int(k), float(bw)) for k, bw in frames]
    rho = order_along_roll(Y, t, frames)
    ok = [r >= in_order if not math.isnan(r) else False for r in rho]
    parts = "; ".join(f"$k = {k}$, $t = {bw:.3g}$: {'apart' if math.isnan(r) else num(r, 2)}"
                      for (k, bw), r in zip(frames, rho))
    text = (f"How well the first coordinate sorts the points along the roll (|Spearman correlation| with the "
            f"position, 1 = perfectly; 'in order' from {num(in_order, 2)}), frame by frame: {parts}. ")
    if all(ok):
        return text + "Every frame keeps the order."
    if not any(ok):
        return text + "No frame keeps the order."
    lost = [f for f, o in zip(frames, ok) if not o]
    kept = [f for f, o in zip(frames, ok) if o]
    return (text + f"In order: {listing(f'$k = {k}$ at $t = {bw:.3g}$' for k, bw in kept)}; out of order: "
            f"{listing(f'$k = {k}$ at $t = {bw:.3g}$' for k, bw in lost)}.")


def decimals_of_agreement(cosine) -> int:
    """How many decimals 1 and ``cosine`` share: floor(-log10(1 - cosine)), capped at 15 (round-off)."""
    c = float(cosine)
    if not -1.0 <= c <= 1.0 + 1e-12:
        raise ValueError(f"cosine must lie in [-1, 1]; got {c}")
    gap = 1.0 - min(c, 1.0)
    return 15 if gap <= 1e-15 else max(0, int(math.floor(-math.log10(gap))))


def agreement_sentence(rows, roundoff: int = 10) -> str:
    """The agreement of ``compare_figure``'s rows in words: decimals shared with 1 by the smallest principal-angle
    cosine, on the same graph and on the Belkin-Niyogi graph; 'to round-off' needs at least ``roundoff`` decimals."""
    rows = list(rows)
    if not rows:
        raise ValueError("rows must hold at least one data set from compare_figure")
    same = {r["name"]: decimals_of_agreement(r["agreement_same_graph"]) for r in rows}
    bn = {r["name"]: decimals_of_agreement(np.min(r["cosines"])) for r in rows}
    worst = min(bn, key=bn.get)
    text = ("On the same graph the smallest cosine agrees with 1 to "
            + listing(f"{d} decimals ({name})" for name, d in same.items())
            + (": the two implementations agree to round-off. " if min(same.values()) >= roundoff else
               ": close, but not to round-off. ")
            + "With the Belkin-Niyogi graph it agrees to "
            + listing(f"{d} ({name})" for name, d in bn.items())
            + f" decimals, the fewest on {worst}.")
    return text


def eta_outcomes(L_hat, beta, etas, *, n_components=2, n_steps=600, seed=0, converged=1e-2) -> list:
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


def eta_sentence(L_hat, beta, etas, *, n_components=2, n_steps=600, marks=None, seed=0, converged=1e-2) -> str:
    """The eta figure's step sizes ``etas`` grouped by what the run did, beside the thresholds of ``step_sizes``."""
    outcomes = eta_outcomes(L_hat, beta, etas, n_components=n_components, n_steps=n_steps, seed=seed,
                            converged=converged)
    groups = {k: [e for e, o in zip(etas, outcomes) if o == k] for k in ("short", "converged", "diverged")}
    words = {"short": f"stayed above a Gram error of {converged:g} after {n_steps} steps",
             "converged": f"converged (Gram error below {converged:g}) within {n_steps} steps",
             "diverged": "diverged"}
    parts = [f"$\\eta$ = {listing(f'{e:g}' for e in g)} {words[k]}" for k, g in groups.items() if g]
    text = "In the figure, " + "; ".join(parts) + "."
    if marks is not None:
        text += (f" The thresholds printed above are $1/\\ell = {num(marks['safe'], 4)}$ (uphill from any start) and "
                 f"$2/(\\lambda_{{\\max}} - \\lambda_1) = {num(marks['divergent'], 4)}$ (divergence near the optimum)")
        above = [e for e in etas if e > marks["divergent"]]
        agree = set(above) == set(groups["diverged"])
        text += ("; the runs that diverged are exactly those past the second." if agree else
                 "; the runs that diverged are not exactly those past the second, which describes only the "
                 "neighbourhood of the optimum.")
    return text


def toy_beta_effect(toy, kappas, betas, *, eta, depth, variant="paper", weak: float = 0.1) -> dict:
    """What beta's range does to the transformer-block chapter's toy (``figures.block.make_toy``) at each kappa.

    For each kappa in ``kappas`` and the two ends ``betas`` = (lowest, highest): the mean distance the points move in
    ``depth`` blocks and in one block (:func:`probdr_lite.figures.block.toy_paths`, points pushed past the equator
    left out), and the mean weight A_ii a point gives itself in the first block
    (:func:`probdr_lite.unrolled.attention_matrix`). ``weak`` is True when, at every kappa, the distance moved in
    ``depth`` blocks changes by less than the fraction ``weak`` over the range.
    """
    from probdr_lite.figures.block import toy_paths
    from probdr_lite.unrolled import attention_matrix

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


def toy_beta_sentence(effect) -> str:
    """:func:`toy_beta_effect` in words (maths as MathJax): how much beta moves the toy, and why."""
    b0, b1 = effect["betas"]
    rows, L = effect["rows"], effect["depth"]

    def change(r):
        return f"from {num(r['moved'][0], 3)} to {num(r['moved'][1], 3)} ({num(100 * r['change'], 0)}\u00a0%)"

    head = (f"Over the whole range of $\\beta$ ({b0:g} to {b1:g}) the picture "
            + ("barely changes" if effect["weak"] else "changes")
            + f": the mean distance the points move in {L} blocks goes "
            + listing(f"{change(r)} at $\\kappa = {r['kappa']:g}$" for r in rows) + ". ")
    own = listing(f"from {num(100 * r['self'][0], 1)}\u00a0% to {num(100 * r['self'][1], 1)}\u00a0% at "
                  f"$\\kappa = {r['kappa']:g}$" for r in rows)
    widest = max(rows, key=lambda r: abs(r["moved_1"][1] / r["moved_1"][0] - 1))
    text = (head + "$\\beta$ lowers the logit of a point for itself, which takes the weight a point gives itself in "
            f"the first block {own}. That changes the length of the first steps (one block at "
            f"$\\kappa = {widest['kappa']:g}$ moves the points {num(widest['moved_1'][0], 3)} at "
            f"$\\beta = {b0:g}$ and {num(widest['moved_1'][1], 3)} at $\\beta = {b1:g}$)"
            + (", not where the blocks take the points." if effect["weak"] else ", and where the blocks take them."))
    if effect["variant"] == "paper":
        d_q = effect["d_q"]
        text += (f" In the paper's block it also sets the weight $2/(d_q + \\beta)$ of the feed-forward term, from "
                 f"{num(2 / (d_q + b0), 3)} to {num(2 / (d_q + b1), 3)} at $d_q = {d_q}$.")
    return text
