"""The MNIST chapter's computed sentences: its numbers in, Markdown out, with every comparison word decided by a
threshold of :data:`WORDS` (so the tests can feed numbers for which each word would be false).

The numbers come from :func:`probdr_lite.metrics.layer_metrics` rows (one dict per layer and variant, as the
chapter's tables use) and from :func:`probdr_lite.figures.mnist.sweep`.
"""

from __future__ import annotations

import numpy as np

from probdr_lite.figures.prose import closeness, listing, num, pct, signed, trend
from probdr_lite.figures.style import METRIC_LABELS
from probdr_lite.metrics import rms_spread
from probdr_lite.unrolled import CHAPTER_VARIANTS as VARIANTS

__all__ = ["WORDS", "paper_numbers", "numbers_text", "variants_text", "picture_text", "sweep_text", "summary_text",
           "pixel_text", "peaks_premise", "live_text"]

#: The thresholds behind the chapter's comparison words.
WORDS = {
    # a number "rises"/"falls" only if it moves by more than this fraction of its first value
    "trend": 0.01,
    # k-NN accuracy counts as lower/higher (purer neighbourhoods) only beyond this absolute change
    "knn_change": 0.01,
    # two variants' k-NN accuracies are "nearly indistinguishable" within this absolute difference
    "indistinguishable": 0.01,
    # "no variant ends purer than the start": best final k-NN accuracy within this of layer 0
    "no_purer": 0.005,
    # the silhouette "stays small" while below this
    "small_silhouette": 0.25,
    # the two-coordinate picture "looks far better" if its k-NN accuracy rises by more than this
    "picture_better": 0.05,
    # a sweep's ends count as "acting little" if their change is below this fraction of the largest change
    "ends_small": 0.1,
    # a k-NN change in the sweep is a "loss of purity" beyond this
    "sweep_knn": 0.01,
    # the top sweep row's collapse is worth explaining beyond this k-NN drop
    "top_row_drop": 0.1,
    # pixel-space and latent k-NN accuracy are "practically the same" within this relative difference
    "same_accuracy": 0.01,
    # in the live figure, an image "does not move" if its mean distance moved is below this fraction of the spread
    "still": 0.01,
}



def _pick(rows, metric, variant, layer=None):
    chosen = sorted((r for r in rows if r["variant"] == variant), key=lambda r: r["layer"])
    if not chosen:
        raise ValueError(f"rows must hold the variant {variant!r}")
    if layer is None:
        return [r[metric] for r in chosen]
    hits = [r[metric] for r in chosen if r["layer"] == layer]
    if len(hits) != 1:
        raise ValueError(f"rows must hold exactly one row of {variant!r} at layer {layer}; got {len(hits)}")
    return hits[0]


def paper_numbers(rows_full, n_layers) -> dict:
    """The paper's block on all images: first and last values and the peaks of the silhouette and the NMI."""
    sil = _pick(rows_full, "silhouette", "paper")
    nmi = _pick(rows_full, "kmeans_nmi", "paper")
    return {
        "n_layers": int(n_layers),
        "n": int(next(r["n"] for r in rows_full if r["variant"] == "paper")),
        "knn0": _pick(rows_full, "knn_accuracy", "paper", 0),
        "knn8": _pick(rows_full, "knn_accuracy", "paper", n_layers),
        "bw0": _pick(rows_full, "between_within", "paper", 0),
        "bw8": _pick(rows_full, "between_within", "paper", n_layers),
        "sil": sil, "nmi": nmi,
        "sil_peak": int(np.argmax(sil)), "nmi_peak": int(np.argmax(nmi)),
    }


def _early(p) -> bool:
    L = p["n_layers"]
    return 0 < p["sil_peak"] < L and 0 < p["nmi_peak"] < L


def numbers_text(p) -> str:
    """'What the numbers say' for the paper's block on all images."""
    L = p["n_layers"]
    knn_lower = p["knn8"] < p["knn0"] - WORDS["knn_change"]
    sil, nmi = p["sil"], p["nmi"]
    return (
        f"**What the numbers say (all {p['n']:,} images, the paper's block).** "
        f"The between/within-class ratio {trend(p['bw0'], p['bw8'], WORDS['trend'])} from {num(p['bw0'], 2)} to "
        f"{num(p['bw8'], 2)}"
        + (": the class centres move apart relative to the spread around them, which is the clumping the picture "
           "shows. " if p["bw8"] > p["bw0"] * (1 + WORDS["trend"]) else ". ")
        + f"The k-NN accuracy {trend(p['knn0'], p['knn8'], WORDS['trend'])} from {num(p['knn0'])} to "
        f"{num(p['knn8'])}. "
        + ("So the blocks make neighbourhoods *less* pure: when images collapse into a clump, images of different "
           "classes collapse together, and a neighbour in the same clump is no longer evidence of the same class. "
           if knn_lower else "")
        + f"The silhouette goes from {num(sil[0])} to {num(sil[-1])}"
        + (f", peaking at {num(sil[p['sil_peak']])} after {p['sil_peak']} blocks" if 0 < p["sil_peak"] < L else "")
        + f"; the NMI of k-means goes from {num(nmi[0])} to {num(nmi[-1])}"
        + (f", peaking at {num(nmi[p['nmi_peak']])} after {p['nmi_peak']} blocks" if 0 < p["nmi_peak"] < L else "")
        + ". "
        + ("Both peak before the last block: a few blocks group the images by class better than eight do. Later "
           "blocks keep merging clumps, and merged clumps mix classes: the smoothing overshoots. " if _early(p) else "")
        + (f"The silhouette stays below {WORDS['small_silhouette']:g} throughout: the classes never become compact, "
           "well-separated groups in the full space." if max(sil) < WORDS["small_silhouette"] else "")
    )


def _at_last(rows_var, n_layers):
    return {m: {v: _pick(rows_var, m, v, n_layers) for v in VARIANTS} for m in METRIC_LABELS}


def variants_text(rows_var, n_layers, nmi_seeds, eta, d_q, beta) -> str:
    """The five variants on the subset after the last block, with k-means' own noise as the yardstick."""
    at = _at_last(rows_var, n_layers)
    best = {m: max(at[m], key=at[m].get) for m in at}
    spread = {m: max(at[m].values()) - min(at[m].values()) for m in at}
    n_sub = next(r["n"] for r in rows_var if r["variant"] == "paper")
    knn_sub0 = _pick(rows_var, "knn_accuracy", "paper", 0)
    bw_sub0 = _pick(rows_var, "between_within", "paper", 0)
    nmi_sd = float(np.std(nmi_seeds, ddof=1))
    lines = [f"**The variants ({n_sub:,} images, after {n_layers} blocks).** Highest on each number:"]
    for m in METRIC_LABELS:
        lines.append(f"- {METRIC_LABELS[m]}: `{best[m]}` ({num(at[m][best[m]])}); the five variants span "
                     f"{num(min(at[m].values()))} to {num(max(at[m].values()))}"
                     + (f", a range narrower than two standard deviations of k-means' own noise ({num(nmi_sd)}), so "
                        "the NMI does not separate the variants." if m == "kmeans_nmi" and spread[m] < 2 * nmi_sd
                        else "."))
    att, dif = at["knn_accuracy"]["attention"], at["knn_accuracy"]["diffusion"]
    lines.append(
        f"\nPlain attention ends with k-NN accuracy {num(att)} and the $A - I$ block with {num(dif)} "
        f"(layer 0: {num(knn_sub0)}). "
        + ("At the same $\\eta$ plain attention takes the smaller step (the transformer-block chapter: it equals "
           f"diffusion with $\\eta = {num(eta / (1 + 2 * eta))}$), so it smooths less and loses less. " if att > dif
           else "")
        + (f"`paper` and `diffusion` end within {WORDS['indistinguishable']:g} of each other, as the "
           "transformer-block chapter predicts: the feed-forward term only adds "
           f"$2\\eta/(d_q + \\beta) = {num(2 * eta / (d_q + beta), 4)}$ to the weight on $X$. "
           if abs(at["knn_accuracy"]["paper"] - dif) < WORDS["indistinguishable"] else "")
        + ("No variant ends with purer k-NN neighbourhoods than the random embedding starts with. "
           if max(at["knn_accuracy"].values()) <= knn_sub0 + WORDS["no_purer"] else
           f"`{best['knn_accuracy']}` ends with purer k-NN neighbourhoods than the random embedding starts with. ")
        + ("The figure cannot tell the interpretations apart: every variant raises the between/within ratio, "
           "so every variant makes clumps." if min(at["between_within"].values()) > bw_sub0 else "")
    )
    return "\n".join(lines)


def picture_text(p, knn_2d) -> str:
    """Where the two-coordinate picture and the full-space numbers disagree."""
    L = p["n_layers"]
    k0, k8 = knn_2d[0], knn_2d[L]
    return (
        f"Before any block, the picture's two coordinates give a k-NN accuracy of {num(k0, 2)}, while the full "
        f"latents already place {num(100 * p['knn0'], 0)} % of images next to their own class: a random projection "
        f"to 128 dimensions keeps most of the pixel-space neighbourhoods. After {L} blocks the picture "
        + ("looks far better" if k8 > k0 + WORDS["picture_better"] else "changes")
        + f" (k-NN accuracy {num(k8, 2)} on two coordinates), while in the full space k-NN accuracy "
        + (f"fell to {num(p['knn8'], 2)}. " if p["knn8"] < p["knn0"] - WORDS["knn_change"] else
           f"is {num(p['knn8'], 2)}. ")
        + "The blocks do not create class information; what they do is pull neighbours together, so that the "
        "clusters already present in the high-dimensional space become visible in *any* two coordinates. That "
        "is a real effect, but it is what makes the picture persuasive, and it is not evidence that the classes "
        "have become better separated."
    )


def sweep_text(grid, kappas, etas, eta) -> str:
    """The kappa-eta sweep along the paper's eta row."""
    row = list(etas).index(eta)
    bw_row = np.asarray(grid["between_within"][row]) - grid["between_within@0"]
    knn_row = np.asarray(grid["knn_accuracy"][row]) - grid["knn_accuracy@0"]
    j = int(np.argmax(bw_row))
    small_ends = max(abs(bw_row[0]), abs(bw_row[-1])) < WORDS["ends_small"] * bw_row.max()
    knn_top_small = grid["knn_accuracy"][-1, 0] - grid["knn_accuracy@0"]
    return (
        f"Along the row $\\eta = {eta:g}$ the between/within ratio changes by {signed(bw_row[0])} at "
        f"$\\kappa = {kappas[0]:g}$, by {signed(bw_row[-1])} at $\\kappa = {kappas[-1]:g}$, and by "
        f"{signed(bw_row[j])} at $\\kappa = {kappas[j]:g}$"
        + (", so the blocks act only in the middle of the range. " if small_ends else ". ")
        + "The two ends are the two limits of exercise 2 in the transformer-block chapter. With a very wide kernel "
        "$A$ is nearly uniform: every image is pulled towards the same global mean by about the same fraction, which "
        "shrinks the picture (the smallest $\\kappa$ in the live figure) without changing much of who is near whom. "
        "With a very narrow kernel and $\\beta > 0$ each image attends almost only to itself, $A \\approx I$, and "
        "nothing moves. "
        f"Where the ratio grows most, the k-NN accuracy changes by {signed(knn_row[j])}"
        + (": wherever the blocks clump strongly, the neighbourhoods become less pure. "
           if knn_row[j] < -WORDS["sweep_knn"] else ". ")
        + (f"The top row is the exception at small $\\kappa$: with $\\eta = {etas[-1]:g}$ only "
           f"{num(100 * (1 - 2 * etas[-1]), 0)} % of each image's own position survives a block, and the slight "
           "preference of a wide kernel for similar images takes over. To first order in $\\kappa$ the attention "
           "output is $\\bar x + (\\kappa / (n d_q)) X^\\top X x_i$ (up to a multiple of $\\bar x$), a multiplication "
           "by the latents' second-moment matrix, so eight such blocks act like power iteration and squeeze the "
           f"latents towards their leading directions: k-NN accuracy {num(grid['knn_accuracy'][-1, 0], 2)} at "
           f"$\\kappa = {kappas[0]:g}$." if knn_top_small < -WORDS["top_row_drop"] else "")
    )


def summary_text(p, rows_var) -> str:
    """The chapter's summary paragraph."""
    L = p["n_layers"]
    at = _at_last(rows_var, L)
    best = {m: max(at[m], key=at[m].get) for m in at}
    clumps = p["bw8"] > p["bw0"]
    purer = p["knn8"] > p["knn0"] + WORDS["no_purer"]
    a_minus_i_best = best["knn_accuracy"] in ("diffusion", "paper") and best["silhouette"] in ("diffusion", "paper")
    plain_clumps = at["between_within"]["attention"] > _pick(rows_var, "between_within", "attention", 0)
    return (
        ("Eight untrained blocks with diagonal weights do pull MNIST into clumps, and the two-coordinate picture "
         "shows that faithfully. " if clumps else "Eight untrained blocks do not raise the between/within ratio here. ")
        + "The numbers add what the picture cannot: "
        + ("the clumps are not pure classes (k-NN accuracy falls), " if not purer else
           "neighbourhoods become purer (k-NN accuracy rises), ")
        + ("the grouping by class is best after a few blocks rather than eight, " if _early(p) else "")
        + ("plain attention makes clumps too, and " if plain_clumps else "plain attention does not make clumps, and ")
        + ("the paper's $A - I$ groups by class better than the other variants here. " if a_minus_i_best else
           "the paper's $A - I$ does not group by class better than the other variants here. ")
        + ("The clustering comes from repeated smoothing over a similarity graph, which every variant shares. "
           if plain_clumps else "")
        + "Whether $A - I$ helps once the weights are *trained* is the next chapter's question."
    )


def pixel_text(knn_pixels, knn_latents) -> str:
    """Exercise 1's check: k-NN accuracy on the raw pixels against the latents at layer 0."""
    word = closeness(knn_pixels, knn_latents, WORDS["same_accuracy"])
    return (f"k-NN accuracy on the raw 784 pixels {num(knn_pixels)}, on the 128 latents at layer 0 "
            f"{num(knn_latents)}: " + ("practically the same (within "
                                       f"{WORDS['same_accuracy']:.0%} of each other)." if word == "nearly equal" else
                                       f"more than {WORDS['same_accuracy']:.0%} apart."))


def peaks_premise(p) -> str:
    """Exercise 2's premise, from the numbers: where the silhouette and the NMI peak."""
    L = p["n_layers"]
    if _early(p):
        head = (f"The silhouette and the NMI peak after {p['sil_peak']} and {p['nmi_peak']} blocks and then fall "
                f"(by layer {L}: {num(p['sil'][-1])} and {num(p['nmi'][-1])}).")
    else:
        head = (f"Over the {L} blocks the silhouette goes from {num(p['sil'][0])} to {num(p['sil'][-1])} (largest "
                f"after {p['sil_peak']} blocks) and the NMI from {num(p['nmi'][0])} to {num(p['nmi'][-1])} (largest "
                f"after {p['nmi_peak']}).")
    return (f"**2.** {head} What happens after many more blocks? Predict, then check with "
            "`run_blocks(X0_1k, n_layers=40)` and `layer_metrics`.")



def live_text(grid, kappas, at, n_layers, *, eta, beta, spot_width) -> str:
    """What the live figure shows along its kappa axis at the other controls' defaults (``at`` = the indices of the
    default kappa, eta, beta), after ``n_layers`` blocks, from :func:`probdr_lite.figures.live.chapters.mnist_grid`.

    Each kappa is one of three cases: the first two coordinates shrink to a *spot* (their root mean squared distance
    to their mean is below ``spot_width``, the figure's own test), the images *stay* where they are (mean distance
    moved below ``WORDS["still"]`` of the starting spread), or they *move* (the between/within ratio is given).
    """
    _, b, c = at
    xy = np.asarray(grid["xy"])[:, b, c, n_layers]
    rms2 = rms_spread(xy)
    moved = np.asarray(grid["moved"])[:, b, c, n_layers]
    spread0 = float(np.asarray(grid["spread"])[0, b, c, 0])
    ratio = np.asarray(grid["ratio"])[:, b, c, :]
    cases = ["spot" if r < spot_width else ("still" if m < WORDS["still"] * spread0 else "move")
             for r, m in zip(rms2, moved)]
    groups = []
    for k, case in enumerate(cases):
        if groups and groups[-1][0] == case:
            groups[-1][1].append(k)
        else:
            groups.append((case, [k]))

    def which(ks):
        vals = [f"{kappas[k]:g}" for k in ks]
        return f"$\\kappa = {vals[0]}$" if len(vals) == 1 else f"$\\kappa$ = {listing(vals)}"

    def ratios(ks):
        vals = [num(ratio[k, -1], 2) for k in ks]
        return vals[0] if len(set(vals)) == 1 else listing(vals)

    parts = []
    for case, ks in groups:
        if case == "spot":
            parts.append(f"for {which(ks)} the points gather into a single spot on the fixed axes, while the "
                         f"between/within ratio goes from {num(ratio[ks[0], 0], 2)} to {ratios(ks)}")
        elif case == "still":
            parts.append(f"for {which(ks)} no image moves by more than {pct(WORDS['still'])} of the starting "
                         f"spread, and the ratio stays at {ratios(ks)}")
        else:
            parts.append(f"for {which(ks)} the points move (an image ends on average "
                         f"{listing(num(moved[k], 2) for k in ks)} from where it started) and the ratio ends at "
                         f"{ratios(ks)}")
    return (f"At $\\eta = {eta:g}$ and $\\beta = {beta:g}$, after {n_layers} blocks: " + "; ".join(parts) + ".")
