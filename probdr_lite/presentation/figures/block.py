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

import math

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_choice, check_scalar
from probdr_lite._threads import single_threaded
from probdr_lite.presentation.style import variant_label
from probdr_lite.chapters.transformer_block import TOY_SETTINGS, LiftedToy, lift_toy, make_toy, toy_paths
from probdr_lite.presentation.plotting import class_scatter
from probdr_lite.unrolled import BLOCK_VARIANTS, CHAPTER_VARIANTS, attention_matrix, check_block_variants, unroll
from probdr_lite.presentation.prose import num
from probdr_lite.presentation.widgets import Slider, SliderPanel, slider_label

__all__ = [
    "toy_beta_text",
    "LiftedToy",
    "lift_toy",
    "make_toy",
    "toy_paths",
    "variant_figure",
    "variant_panel",
    "mask_figure",
]


#: The toy's default kappa, eta and beta, read from the one definition of its sliders.
TOY_DEFAULTS = {k: TOY_SETTINGS[k]["default"] for k in ("kappa", "eta", "beta")}


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


def v_step(values) -> float:
    """The step of an evenly spaced grid of slider values."""
    return round(values[1] - values[0], 12)


def variant_panel(toy: LiftedToy, variants=CHAPTER_VARIANTS) -> SliderPanel:
    """Sliders kappa, eta, beta and depth over :func:`variant_figure`, with the ranges and defaults of
    :data:`probdr_lite.chapters.transformer_block.TOY_SETTINGS` (those of the live figure too).

    beta stays above 0 because the "exact" variant needs C = X X^T + beta I invertible, and with more points than
    latent dimensions X X^T alone is singular.
    """
    S = TOY_SETTINGS
    fig, update = variant_figure(toy, variants, n_steps=S["depth"]["default"])

    def slider(name, **kw):
        v, default, description = S[name]["values"], S[name]["default"], slider_label(name)
        st = (math.log10(v[-1]) - math.log10(v[0])) / (len(v) - 1) if S[name]["log"] else 0.0
        geometric = S[name]["log"] and all(abs(math.log10(b / a) - st) < 0.05 * st for a, b in zip(v, v[1:]))
        if not geometric:
            return Slider(name, v[0], v[-1], default, log=S[name]["log"], description=description, **kw)
        # a log slider over a geometric grid steps by min + k step in log10: put the default on that grid exactly
        # (the values carry 3 significant figures, so their own ends would leave it between two steps)
        k = round((math.log10(default) - math.log10(v[0])) / st)
        lo, hi = default / 10 ** (k * st), default * 10 ** ((len(v) - 1 - k) * st)
        return Slider(name, lo, hi, default, log=True, step=st, description=description, **kw)

    sliders = [
        slider("kappa"),
        slider("eta", step=v_step(S["eta"]["values"])),
        slider("beta"),
        slider("depth", integer=True),
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


def toy_beta_text(effect) -> dict:
    """The numbers of the toy's sentence about beta as the text the chapter pastes (and the caption's ``beta``
    template takes): :func:`probdr_lite.chapters.transformer_block.toy_beta_facts` of ``effect``, formatted."""
    from probdr_lite.chapters.transformer_block import toy_beta_facts

    f = toy_beta_facts(effect)
    out = {"beta_lo": f"{f['beta_lo']:g}", "beta_hi": f"{f['beta_hi']:g}", "depth": str(f["depth"]),
           "d_q": str(f["d_q"]), "ff_lo": num(f["ff_lo"], 3), "ff_hi": num(f["ff_hi"], 3)}
    for k in ("at", "narrow"):
        out.update({f"kappa_{k}": f"{f[f'kappa_{k}']:g}", f"moved_lo_{k}": num(f[f"moved_lo_{k}"], 3),
                    f"moved_hi_{k}": num(f[f"moved_hi_{k}"], 3), f"change_{k}": num(f[f"change_percent_{k}"], 0),
                    f"self_lo_{k}": num(f[f"self_lo_{k}"], 1), f"self_hi_{k}": num(f[f"self_hi_{k}"], 1)})
    # the first block's distances are stated at the narrowest kernel, where beta's share of a row is largest
    out.update(first_lo_narrow=num(f["first_lo_narrow"], 3), first_hi_narrow=num(f["first_hi_narrow"], 3))
    return out
