"""The transformer-block chapter: a 2-D toy on the LayerNorm sphere, the variants side by side, the causal mask.

The toy (:class:`~probdr_lite.chapters.transformer_block.LiftedToy`,
:func:`~probdr_lite.chapters.transformer_block.make_toy`) and its paths through the blocks
(:func:`~probdr_lite.chapters.transformer_block.toy_paths`) are the chapter's measurements, in
:mod:`probdr_lite.chapters.transformer_block`; they are imported here too, so that the chapter builds the toy and its
figures from one module.

The figure builders return a figure (with an ``update`` function where it moves) or a
:class:`~probdr_lite.presentation.widgets.SliderPanel`, without alt text: the sentences about the figures are the
chapter's, which describes each one after building it. The checks the chapter prints are core maths:
:func:`probdr_lite.graphs.heat_kernel_attention` and :func:`probdr_lite.unrolled.euler_diffusion_errors`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_choice, check_scalar
from probdr_lite._threads import single_threaded
from probdr_lite.presentation.style import variant_label
from probdr_lite.chapters.transformer_block import LiftedToy, lift_toy, make_toy, toy_paths
from probdr_lite.presentation.plotting import class_scatter
from probdr_lite.unrolled import BLOCK_VARIANTS, CHAPTER_VARIANTS, attention_matrix, check_block_variants, unroll
from probdr_lite.presentation.widgets import Slider, SliderPanel

__all__ = [
    "LiftedToy",
    "lift_toy",
    "make_toy",
    "toy_paths",
    "variant_figure",
    "variant_panel",
    "mask_figure",
    "WORDS",
    "direction_facts",
    "euler_facts",
    "regulariser_facts",
    "logits_facts",
]


TOY_DEFAULTS = dict(kappa=100.0, eta=0.4, beta=1.0)


# ---------------------------------------------------------------------------------------------------------------------
# The variants side by side: a figure and its slider panel


def _limits(Y, pad=0.06):
    lo, hi = Y.min(0), Y.max(0)
    margin = pad * (hi - lo).max()
    return (lo[0] - margin, hi[0] + margin), (lo[1] - margin, hi[1] + margin)


def _variant_axes(toy, variants, width=2.4, dpi=72):
    xlim, ylim = _limits(toy.Y)
    height = width * (ylim[1] - ylim[0]) / (xlim[1] - xlim[0])
    fig, axes = plt.subplots(1, len(variants), figsize=(width * len(variants), height + 0.7), dpi=dpi,
                             squeeze=False)
    points = []
    for ax, v in zip(axes[0], variants):
        ax.scatter(toy.Y[:, 0], toy.Y[:, 1], s=3, c="0.85", linewidths=0)  # layer 0, for reference
        points.append(class_scatter(ax, toy.Y, toy.labels, s=5, alpha=0.9, legend=False))
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(variant_label(v), fontsize=7.5)
    return fig, points


def variant_figure(toy: LiftedToy, variants=CHAPTER_VARIANTS, n_steps: int = 8, mask=None, dpi=72):
    """One panel per variant: the toy (grey) and where ``depth`` blocks move it (coloured by class).

    Returns
    -------
    fig : Figure
    update : callable ``update(kappa, eta, beta, depth=n_steps)``
        Recomputes the blocks and moves the points in place (``set_offsets``).
    """
    variants = check_block_variants(variants)
    n_steps = check_scalar(n_steps, "n_steps", low=0, high=64, integer=True)
    fig, points = _variant_axes(toy, variants, dpi=dpi)

    def update(kappa, eta, beta, depth=n_steps):
        depth = check_scalar(depth, "depth", low=0, high=64, integer=True)
        paths = toy_paths(toy, depth, kappa, eta, beta, variants, mask=mask)
        lost = 0
        for pts, v in zip(points, variants):
            pts.set_offsets(paths[v][-1])
            lost += int(np.isnan(paths[v][-1][:, 0]).sum())
        fig.suptitle(f"after {depth} block{'s' * (depth != 1)}: κ = {kappa:.3g}, η = {eta:.3g}, β = {beta:.3g}"
                     + (" (causal mask)" if mask is not None else "")
                     + (f"; {lost} points overshot past the equator and are not drawn" if lost else ""), fontsize=9)

    update(**TOY_DEFAULTS)
    fig.tight_layout()
    return fig, update


def variant_panel(toy: LiftedToy, variants=CHAPTER_VARIANTS, kappa=TOY_DEFAULTS["kappa"],
                  eta=TOY_DEFAULTS["eta"], beta=TOY_DEFAULTS["beta"], depth=8) -> SliderPanel:
    """Sliders kappa (log, 1 to 1000), eta (0.02 to 1), beta (log, 0.1 to 10) and depth (0 to 16) over :func:`variant_figure`.

    beta stays above 0 because the "exact" variant needs C = X X^T + beta I invertible, and with more points than
    latent dimensions X X^T alone is singular.
    """
    fig, update = variant_figure(toy, variants, n_steps=depth)
    sliders = [
        Slider("kappa", 1.0, 1000.0, kappa, log=True, description="κ (sharpness)"),
        Slider("eta", 0.02, 1.0, eta, step=0.02, description="η (step size)"),
        Slider("beta", 0.1, 10.0, beta, log=True, description="β (regulariser)"),
        Slider("depth", 0, 16, depth, integer=True, description="depth (blocks)"),
    ]
    return SliderPanel(fig, update, sliders)


# ---------------------------------------------------------------------------------------------------------------------
# The causal mask


def mask_figure(toy: LiftedToy, kappa=TOY_DEFAULTS["kappa"], eta=TOY_DEFAULTS["eta"], beta=TOY_DEFAULTS["beta"],
                n_steps: int = 8, variant: str = "diffusion", dpi=72):
    """A without and with the causal mask (images, on a log colour scale), and what 8 blocks do with each.

    The toy's points are ordered by class and along x (see :func:`make_toy`), so under the causal mask point i
    only sees points 1..i: A is lower-triangular, the first point attends only to itself and never moves.
    """
    from matplotlib.colors import LogNorm

    variant = check_choice(variant, "variant", BLOCK_VARIANTS)
    n_steps = check_scalar(n_steps, "n_steps", low=0, high=64, integer=True)
    fig, axes = plt.subplots(1, 4, figsize=(10.2, 3.0), dpi=dpi, layout="constrained")
    floor = 1e-6  # entries below this are shown as the lowest colour (the masked ones are exactly 0)
    norm = LogNorm(vmin=floor, vmax=1.0)
    for ax, mask, name in zip(axes[:2], (None, "causal"), ("no mask (M = 0)", "causal mask")):
        with single_threaded():
            A = attention_matrix(toy.X0, kappa, beta, mask=mask).numpy()
        im = ax.imshow(np.maximum(A, floor), norm=norm, cmap="magma_r", interpolation="nearest")
        ax.set_title(f"A, {name}", fontsize=9)
        ax.set_xlabel("key j (attended to)")
        ax.set_ylabel("query i")
    fig.colorbar(im, ax=axes[:2], fraction=0.025, pad=0.02, label="A_ij")
    xlim, ylim = _limits(toy.Y)
    for ax, mask, name in zip(axes[2:], (None, "causal"), ("no mask", "causal mask")):
        with single_threaded():
            Xs = unroll(toy.X0, n_steps, kappa, eta, beta, variant, mask=mask)
        ax.scatter(toy.Y[:, 0], toy.Y[:, 1], s=3, c="0.85", linewidths=0)
        class_scatter(ax, toy.unlift(Xs[-1]), toy.labels, s=5, alpha=0.9, legend=False)
        ax.plot(*toy.Y[0], marker="*", ms=11, color="k", ls="")  # the first point: its own only neighbour
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{variant}, {n_steps} blocks, {name}", fontsize=9)
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# The facts of the chapter's computed sentences (the sentences are templates in the chapter)

#: The thresholds behind the chapter's words, each a rule on the numbers:
#:
#: - ``same_direction``: variants share one tangent direction when their cosines with the exact one differ by less;
#: - ``hardly_turns``: a cosine above this with the exact direction hardly turns the step;
#: - ``first_order``: halving h divides the error of a first-order method by about 2, here by a factor in this range;
#: - ``close_cosine`` / ``close_ratio``: the approximation 2 X / (d_q + beta) of 2 C^{-1} X is close when its cosine
#:   with it is at least the first and the length ratio lies strictly inside the second;
#: - ``weak_link``: a correlation of the logits with the cosines below this in size says little about similarity.
WORDS = {"same_direction": 1e-9, "hardly_turns": 0.95, "first_order": (1.6, 2.4), "close_cosine": 0.9,
         "close_ratio": (0.5, 2.0), "weak_link": 0.3}


def direction_facts(cosines: dict) -> dict:
    """The cosines of the variants' tangent directions with the exact one (``{variant: cosine}``, as the chapter
    prints them): ``c_A`` (``diffusion``), ``c_sym`` (``symmetric``); ``same`` when ``attention``, ``diffusion`` and
    ``paper`` share one direction (:data:`WORDS` ``same_direction``) and ``hardly_turns`` when ``c_A`` is above
    ``hardly_turns``."""
    c = {v: check_scalar(cosines[v], f"cosines[{v!r}]", low=-1.0 - 1e-9, high=1.0 + 1e-9)
         for v in ("attention", "diffusion", "paper", "symmetric")}
    return {"c_A": c["diffusion"], "c_sym": c["symmetric"],
            "same": max(abs(c[v] - c["diffusion"]) for v in ("attention", "paper")) < WORDS["same_direction"],
            "hardly_turns": c["diffusion"] > WORDS["hardly_turns"]}


def euler_facts(rows) -> dict:
    """From the rows of :func:`probdr_lite.unrolled.euler_diffusion_errors` (k doubling from row to row):
    ``halving``, the error of the second-last row over that of the last, and ``first_order`` when it lies strictly
    inside :data:`WORDS` ``first_order`` (about 2, the mark of a first-order method)."""
    check_scalar(len(rows), "len(rows)", low=2, integer=True)
    last = check_scalar(rows[-1]["relative_error"], "the last row's relative_error", low=0.0, low_inclusive=False)
    halving = rows[-2]["relative_error"] / last
    lo, hi = WORDS["first_order"]
    return {"halving": halving, "first_order": lo < halving < hi}


def regulariser_facts(cosine, ratio) -> dict:
    """The paper's 2 X / (d_q + beta) against the exact 2 C^{-1} X: their ``cosine``, the ``ratio`` of the exact
    term's norm to the approximation's, and ``close`` when the cosine is at least :data:`WORDS` ``close_cosine``
    and the ratio lies strictly inside ``close_ratio``."""
    cosine = check_scalar(cosine, "cosine", low=-1.0 - 1e-9, high=1.0 + 1e-9)
    ratio = check_scalar(ratio, "ratio", low=0.0, low_inclusive=False)
    lo, hi = WORDS["close_ratio"]
    return {"cosine": cosine, "ratio": ratio, "close": cosine >= WORDS["close_cosine"] and lo < ratio < hi}


def logits_facts(r_diagonal, r_random) -> dict:
    """The correlations of the logits with the pairwise cosines under diagonal and random weights, and
    ``random_weak`` when the random one is below :data:`WORDS` ``weak_link`` in size."""
    r_diagonal = check_scalar(r_diagonal, "r_diagonal", low=-1.0 - 1e-9, high=1.0 + 1e-9)
    r_random = check_scalar(r_random, "r_random", low=-1.0 - 1e-9, high=1.0 + 1e-9)
    return {"r_diagonal": r_diagonal, "r_random": r_random, "random_weak": abs(r_random) < WORDS["weak_link"]}
