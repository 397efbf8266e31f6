"""The live figures of chapters 2 to 6, each computed by probdr_lite at build time (or, for the toy, in the browser).

Chapters by their number in the book's sidebar (1 is the data chapter):

- :func:`neighbours_live` (chapter 2): Laplacian Eigenmaps of the Swiss roll over a grid of k and the bandwidth t;
- :func:`beta_live` (chapter 3): which eigen-directions survive the threshold 1/beta, and how much they shrink;
- :func:`eta_live` (chapter 4): gradient ascent on the LE-ELBO over a grid of step sizes (slow, stable, divergent);
- :func:`toy_live` (chapter 5): the 2-D toy under kappa, eta, beta, depth, the variant and the causal mask, computed
  in the browser from the toy's 2-D points (see ``live.js``, ``toyStep``);
- :func:`mnist_live` (chapter 6): the paper's block on 2,000 MNIST images over a grid of kappa, eta, beta and depth
  (:func:`probdr_lite.chapters.mnist_at_init.run_blocks`, the chapter's own function; the grid is
  :data:`probdr_lite.chapters.mnist_at_init.SLIDERS`'), the first two latent coordinates with a colour key and a
  choice of fixed or following axes, and the between/within-class ratio at every layer; its points are loaded per
  setting (see :mod:`probdr_lite.presentation.live`).

Every scatter's axes follow the data of the current setting, except chapter 3's, which are fixed on purpose (the
caption says why), and chapter 6's, where the reader chooses. What a setting leaves (the pieces of a graph, the
directions kept, the step a run diverged at, the spread of the points) is a number in a readout or a title; where a
panel has nothing to draw (no point, one spot, every bar zero) ``live.js`` says so in the panel.

The words are the chapters': each builder takes ``text``, a dict of the chapter's sentences (the keys of
:data:`TEXT_KEYS`), and pastes numbers into their ``{...}`` slots with ``str.format`` (Python's own format specs:
``{t0:.3g}``, ``{n:,}``), the caption once. No word is chosen by code: every setting gets the same sentences. Each
panel's alt text is a sentence of the chapter's too (:func:`_panel_text`): its build-time slots are filled here, and
its ``{control}`` and ``{=readout}`` slots are kept for ``live.js``, which fills them in the browser for the setting
shown. Canvas text (titles, axis labels, readout labels) and the colour key stay here, except chapter 3's titles,
which state what the setting leaves (how many eigenvalues lie below the threshold, how many directions are kept) and
are the chapter's, filled like its alt texts.

Canvas text writes maths in Unicode (λᵢ, x₁); captions, which are sentences, write it as MathJax (``$\\kappa$``),
which ``live.js`` typesets.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.colors import to_hex
from scipy.sparse.csgraph import connected_components

from probdr_lite._validation import check_array, check_choice, check_length, check_result, check_scalar, check_text
from probdr_lite._threads import single_threaded
from probdr_lite.metrics import rms_spread
from probdr_lite.presentation.live import LiveFigure, array, control, grid_cells, points
from probdr_lite.presentation.figures.block import toy_beta_text
from probdr_lite.presentation.style import CLASS_COLOURS, VARIANT_STYLE
from probdr_lite.presentation.widgets import slider_label

__all__ = [
    "CLASS_PALETTE",
    "TEXT_KEYS",
    "TOY_VARIANTS",
    "toy_controls",
    "toy_facts",
    "toy_live",
    "mnist_grid",
    "mnist_facts",
    "mnist_live",
    "beta_facts",
    "beta_live",
    "eta_facts",
    "eta_live",
    "neighbours_facts",
    "neighbours_live",
]

#: The class colours of every other figure in the book (plotting.CLASS_COLOURS), as hex for the browser.
CLASS_PALETTE = [to_hex(c) for c in CLASS_COLOURS]

TOY_VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric")

#: The three categories of chapter 3's eigen-directions and their colours (Okabe-Ito vermilion, blue, grey).
_KEPT, _SURVIVES, _DROPPED = 0, 1, 2
_CATEGORY_COLOURS = ["#D55E00", "#0072B2", "#BBBBBB"]


#: The sentences each builder takes in ``text`` (written in the chapter) and the numbers pasted into them by
#: ``str.format``: ``caption`` from the ``"caption"`` facts of its ``*_facts`` function; the toy's ``beta`` from the
#: numbers of :func:`toy_beta_text`; the toy's ``spot`` and ``empty`` are said by the browser when it draws no point
#: or one spot, and have no slots. The ``alt*`` keys are the panels' alt texts, one per panel in order
#: (:func:`_panel_text`): ``{control}`` and ``{=readout}`` slots, which ``live.js`` fills for the setting shown, and
#: slots from the ``"caption"`` facts, filled here; ``beta_live``'s ``title*`` keys are its panels' titles, in order,
#: filled the same way.
TEXT_KEYS = {
    "toy_live": ("caption", "beta", "spot", "empty", "alt"),
    "mnist_live": ("caption", "alt_points", "alt_ratio"),
    "beta_live": ("caption", "alt_eigenvalues", "alt_scales", "alt_points", "title_eigenvalues", "title_scales",
                  "title_points"),
    "eta_live": ("caption", "alt_gap", "alt_gram", "alt_points"),
    "neighbours_live": ("caption", "alt"),
}


def _sig(x: float, digits: int = 3) -> float:
    return float(f"{x:.{digits}g}")


def _text(text, builder: str) -> dict:
    """The chapter's sentences for ``builder``: a dict of strings with exactly the keys of ``TEXT_KEYS[builder]``."""
    return check_text(text, f"{builder}: text", TEXT_KEYS[builder])


def _paste(sentence: str, facts: dict) -> str:
    """The chapter's ``sentence`` with ``facts`` pasted into its slots (``str.format``); a slot without a fact raises
    ``KeyError`` naming it and the facts there are."""
    try:
        return sentence.format(**facts)
    except KeyError as exc:
        raise KeyError(f"the sentence's slot {exc.args[0]!r} has no number; numbers given: {sorted(facts)}") from None


def _panel_text(template: str, facts: dict, controls, readouts) -> str:
    """A panel's alt text (or title) from the chapter's ``template``: its slots named by a control (``{depth}``) or, with ``=``,
    by a readout (``{=ratio}``) of the figure stay as they are, for ``live.js`` to fill in the browser for the
    setting shown; any other slot is filled now from ``facts`` (the figure's ``"caption"`` facts)."""
    browser = {c["name"]: "{%s}" % c["name"] for c in controls}
    browser.update({"=" + r["name"]: "{=%s}" % r["name"] for r in readouts})
    return _paste(template, {**facts, **browser})


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 5: the toy, computed in the browser


def toy_controls(**defaults) -> list:
    """kappa, eta, beta and depth over the grids and defaults of
    :data:`probdr_lite.chapters.transformer_block.TOY_SETTINGS` (``defaults`` may move a default to another value of
    its grid), the variant (default ``"paper"``) and the causal mask: the controls of chapter 5's live figure."""
    from probdr_lite.chapters.transformer_block import TOY_SETTINGS

    at = {name: TOY_SETTINGS[name]["default"] for name in ("kappa", "eta", "beta", "depth")}
    at["variant"] = "paper"
    unknown = set(defaults) - set(at)
    if unknown:
        raise KeyError(f"toy_controls: no setting named {sorted(unknown)}; settings: {sorted(at)}")
    at.update(defaults)
    styles = VARIANT_STYLE["block"]
    values = {name: list(TOY_SETTINGS[name]["values"]) for name in ("kappa", "eta", "beta", "depth")}
    return [
        *(control(name, slider_label(name), values[name], at[name]) for name in ("kappa", "eta", "beta", "depth")),
        control("variant", "variant", list(TOY_VARIANTS), at["variant"], kind="select",
                labels=[styles[v].label for v in TOY_VARIANTS]),
        control("mask", "causal mask", [False, True], False, kind="checkbox"),
    ]


def toy_facts(n_points: int) -> dict:
    """The facts of the toy's caption: ``"caption"``, the ``n`` points."""
    return {"caption": {"n": int(n_points)}}


def toy_live(toy, name="toy", *, text, effect, **defaults) -> LiveFigure:
    """Chapter 5's toy as a live figure: the browser runs the blocks (``live.js``) from the toy's 2-D points.

    The lifted latents live in a 3-D span (see :mod:`probdr_lite.presentation.figures.block`), so the browser works with unit
    vectors z_i in R^3 and the same update as :func:`probdr_lite.unrolled.block_step`; the book's tests compare its
    positions with :func:`probdr_lite.presentation.figures.block.toy_paths` at several settings.

    ``text`` holds the chapter's words (:data:`TEXT_KEYS`): the ``caption`` (its one slot ``{n}``, the number of
    points), then ``beta``, the chapter's sentence about beta's whole range with the numbers of :func:`toy_beta_text`
    of ``effect`` (:func:`probdr_lite.chapters.transformer_block.toy_beta_range`) pasted into its ``{...}`` slots.
    The chapter checks that sentence with a claim; it is also the beta control's ``weak`` note, which the browser
    tests read instead of demanding a visible change. ``spot`` and ``empty`` are what the panel says when all the
    points sit at one spot or none can be drawn. No word here is chosen by code.
    """
    from probdr_lite.chapters.transformer_block import LiftedToy, make_toy

    check_result(toy, "toy", make_toy, kind=LiftedToy, nonempty=False)
    text = _text(text, "toy_live")
    labels = [int(c) for c in toy.labels]
    controls = toy_controls(**defaults)
    by_name = {c["name"]: c for c in controls}
    facts = toy_facts(len(labels))
    sentence = text["beta"].format(**toy_beta_text(effect))
    by_name["beta"]["weak"] = sentence
    readouts = [
        {"name": "moved", "label": "mean distance moved from the start", "toy": "moved", "digits": 4},
        {"name": "lost", "label": "points pushed past the equator (not drawn)", "toy": "lost", "digits": 3},
        {"name": "self", "label": "weight a point gives itself in the first block (mean Aᵢᵢ)", "toy": "self",
         "digits": 2, "percent": True},
    ]
    spec = {
        "controls": controls,
        "toy": {"Y": [float(v) for v in toy.Y.ravel()], "offset": float(toy.offset), "d_q": toy.d_q},
        "panels": [{
            "type": "scatter", "source": "toy", "background": True, "bounds_include_background": True,
            "equal_aspect": True, "classes": labels, "palette": CLASS_PALETTE, "radius": 2.2,
            "accent": {"control": "variant", "colours": [VARIANT_STYLE["block"][v].colour for v in TOY_VARIANTS]},
            "title": "{variant}: {depth} blocks",
            "degenerate": {"spot": text["spot"], "empty": text["empty"]},
            "alt": _panel_text(text["alt"], facts["caption"], controls, readouts),
            "xlabel": "the plane of the toy (axes cover the toy and the moved points)",
        }],
        "readouts": readouts,
        "height": 360,
        "caption": _paste(text["caption"], facts["caption"]) + " " + sentence,
    }
    return LiveFigure(spec, name)


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 6: MNIST over a grid of kappa, eta, beta and depth

def mnist_grid(X0, labels, kappas=None, etas=None, betas=None, n_layers=None, variant=None) -> dict:
    """The paths of chapter 6's block for every (kappa, eta, beta), measured at every layer (by default over the
    grids of :data:`probdr_lite.chapters.mnist_at_init.SLIDERS`).

    The paths are :func:`probdr_lite.chapters.mnist_at_init.run_blocks` (chapter 6's function, one shared block, the chapter's
    ``PAPER`` settings for everything not on the grid) and the ratio is the ``"between_within"`` metric of
    :func:`probdr_lite.metrics.layer_metrics` (:func:`probdr_lite.metrics.metric_value`) in all d_q dimensions, so
    the default setting's numbers are the chapter's table's.

    Returns a dict of arrays over (len(kappas), len(etas), len(betas), n_layers + 1): ``xy`` (..., n, 2), the first
    two latent coordinates; ``ratio``; ``moved``, the mean distance ||x_i(t) - x_i(0)|| of an image from where it
    started; ``spread``, the root mean squared distance of the latents to their mean (all dimensions).
    """
    from probdr_lite.metrics import metric_value
    from probdr_lite.chapters.mnist_at_init import PAPER, SLIDERS, run_blocks

    kappas, etas, betas = (SLIDERS[k]["grid"] if v is None else v
                           for k, v in (("kappa", kappas), ("eta", etas), ("beta", betas)))
    n_layers = PAPER.n_layers if n_layers is None else n_layers
    variant = PAPER.variant if variant is None else variant
    check_array(np.asarray(X0), "X0", ndim=2, min_rows=10)  # X0 itself goes to run_blocks as given (its dtype too)
    n = X0.shape[0]
    shape = (len(kappas), len(etas), len(betas), n_layers + 1)
    out = {"xy": np.empty(shape + (n, 2)), "ratio": np.empty(shape), "moved": np.empty(shape),
           "spread": np.empty(shape)}
    with single_threaded():  # a few thousand points: threads cost more than they save (see _threads)
        for (a, kappa), (b, eta), (c, beta) in ((x, y, z) for x in enumerate(kappas) for y in enumerate(etas)
                                                for z in enumerate(betas)):
            path = run_blocks(X0, n_layers, kappa, eta, beta, variant)
            for t, X in enumerate(path):
                X64 = X.astype(np.float64)
                out["xy"][a, b, c, t] = X64[:, :2]
                out["ratio"][a, b, c, t] = metric_value("between_within", X, labels)
                out["moved"][a, b, c, t] = float(np.linalg.norm(X64 - path[0], axis=1).mean())
                out["spread"][a, b, c, t] = float(rms_spread(X64))
    return out


def mnist_facts(labels, kappas, etas, betas, n_layers, *, variant, eta, beta) -> dict:
    """The numbers of chapter 6's live caption, ``"caption"``: ``n`` images, ``per_class``, the ``variant``, the
    grid's sizes ``n_kappas``, ``n_etas``, ``n_betas``, its ends ``kappa_low``, ``kappa_high``, and the default
    ``eta``, ``beta`` and ``n_layers``."""
    labels = np.asarray(labels)
    n, n_classes = len(labels), int(labels.max()) + 1
    return {"caption": {"n": n, "per_class": n // n_classes, "variant": variant, "n_kappas": len(kappas),
                        "n_etas": len(etas), "n_betas": len(betas), "kappa_low": min(kappas),
                        "kappa_high": max(kappas), "eta": eta, "beta": beta, "n_layers": int(n_layers)}}


def mnist_live(X0, labels, name="mnist", kappas=None, etas=None, betas=None, n_layers=None, variant=None,
               kappa=None, eta=None, beta=None, axes="fixed", *, text) -> LiveFigure:
    """Chapter 6's panel without a kernel: the first two latent coordinates after ``depth`` blocks, coloured by digit
    with a colour key, and the between/within-class ratio at every layer, precomputed over ``kappas`` x ``etas`` x
    ``betas`` by :func:`mnist_grid` (defaults: the grids of :data:`probdr_lite.chapters.mnist_at_init.SLIDERS` and
    the chapter's ``PAPER`` settings).

    The points of each (kappa, eta, beta) are one chunk (every depth, 8 bits per coordinate within each frame): the
    book's site loads them when the reader first picks that setting. The axes are a control: fixed at the extent
    of X_0 (the default, where the picture shrinks and clumps as the chapter describes) or following the points of
    the current frame. A readout gives the spread of the two coordinates shown (their root mean squared distance to
    their mean, :func:`probdr_lite.metrics.rms_spread`), so a frame that has shrunk to a spot on fixed axes shows by
    how much; ``live.js`` says so in the panel when every point lies in one pixel, and counts the points that leave
    the fixed frame. ``text`` holds the chapter's sentences (:data:`TEXT_KEYS`), with the numbers of
    :func:`mnist_facts` pasted.
    """
    from probdr_lite.chapters.mnist_at_init import PAPER, SLIDERS

    kappas, etas, betas = (tuple(SLIDERS[k]["grid"]) if v is None else tuple(v)
                           for k, v in (("kappa", kappas), ("eta", etas), ("beta", betas)))
    defaults = {"kappa": PAPER.kappa if kappa is None else kappa, "eta": PAPER.eta if eta is None else eta,
                "beta": PAPER.beta if beta is None else beta}
    n_layers = PAPER.n_layers if n_layers is None else n_layers
    variant = PAPER.variant if variant is None else variant
    labels = np.asarray(labels)
    n_layers = check_scalar(n_layers, "n_layers", low=1, high=16, integer=True)
    check_choice(axes, "axes", ("fixed", "follow"))
    text = _text(text, "mnist_live")
    grid = mnist_grid(X0, labels, kappas, etas, betas, n_layers, variant)
    xy, ratio = grid["xy"], grid["ratio"]
    controls = [
        *(control(k, slider_label(k), list(v), defaults[k]) for k, v in (("kappa", kappas), ("eta", etas),
                                                                          ("beta", betas))),
        control("depth", slider_label("depth"), list(range(n_layers + 1)), n_layers),
        control("axes", "axes", ["fixed", "follow"], axes, kind="select",
                labels=["fixed: the extent of X₀", "follow the points"]),
    ]
    dims = ["kappa", "eta", "beta"]
    first = xy[0, 0, 0, 0]  # X_0: the same in every setting
    lo, hi = first.min(0), first.max(0)
    pad = 0.04 * (hi - lo)
    fixed = [float(lo[0] - pad[0]), float(hi[0] + pad[0]), float(lo[1] - pad[1]), float(hi[1] + pad[1])]
    n_classes = int(labels.max()) + 1
    chunks = [{"xy": points(xy[idx], ["depth"])} for idx in np.ndindex(*xy.shape[:3])]
    facts = mnist_facts(labels, kappas, etas, betas, n_layers, variant=variant, eta=defaults["eta"],
                        beta=defaults["beta"])
    readouts = [
        {"name": "ratio", **array(ratio, dims + ["depth"]), "label": "between/within-class ratio at this depth",
         "digits": 3},
        {"name": "ratio0", "label": "the same before any block (dashed line)", **array(ratio[0, 0, 0, :1], []),
         "digits": 3},
        {"name": "moved", **array(grid["moved"], dims + ["depth"]),
         "label": f"mean distance an image has moved (rows have length {float(np.sqrt(X0.shape[1])):.3g})",
         "digits": 3},
        {"name": "spread", **array(rms_spread(xy), dims + ["depth"]),
         "label": f"spread of the two coordinates shown (rms distance to their mean; before any block "
                  f"{float(rms_spread(first)):.3g})", "digits": 3},
    ]
    spec = {
        "controls": controls,
        "chunks": {"dims": dims, "grid": list(xy.shape[:3])},
        "panels": [
            {"type": "scatter", "xy": {"chunk": "xy"}, "classes": [int(c) for c in labels],
             "palette": CLASS_PALETTE, "radius": 1.1, "alpha": 0.55, "width": 1.15,
             "axes_control": "axes", "fixed_bounds": fixed,
             "key": {"title": "digit", "labels": [str(k) for k in range(n_classes)],
                     "colours": [CLASS_PALETTE[k % len(CLASS_PALETTE)] for k in range(n_classes)]},
             "title": "depth {depth}: κ = {kappa}, η = {eta}, β = {beta}",
             "alt": _panel_text(text["alt_points"], facts["caption"], controls, readouts),
             "xlabel": "latent coordinate 1", "ylabel": "latent coordinate 2"},
            {"type": "lines", "x": list(range(n_layers + 1)), "marker": "depth",
             "series": [{"y": array(ratio, dims), "colour": "#000000", "points": True}],
             "hlines": [{"value": float(ratio[0, 0, 0, 0]), "colour": "#777777"}],
             "title": "between/within at depth {depth}: {=ratio}",
             "alt": _panel_text(text["alt_ratio"], facts["caption"], controls, readouts),
             "xlabel": "layer (blocks applied)", "ylabel": "between/within-class ratio"},
        ],
        "readouts": readouts,
        "height": 360,
        "caption": _paste(text["caption"], facts["caption"]),
    }
    return LiveFigure(spec, name, chunks=chunks)


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 3: beta thresholds and shrinks


def beta_facts(betas, n_below, q: int, n_points: int, n_show: int) -> dict:
    """The numbers of chapter 3's live figure: ``"caption"`` holds ``q`` and ``n_show`` (the eigenvalues shown, of
    which ``n_below`` counts those below each threshold); ``"states"`` one dict per beta, with
    ``beta``, ``threshold`` (1/beta to three significant digits), ``below`` (how many of the shown eigenvalues lie
    below it, ``n_below``), ``kept`` (the directions the closed form keeps, at most ``q``) and ``n`` points."""
    check_length(n_below, "n_below", len(betas), "beta")
    for k in n_below:
        check_scalar(k, "n_below entry", low=0, high=n_show, integer=True)
    states = []
    for b, k in zip(betas, n_below):
        kept = min(int(k), q)
        states.append({"beta": b, "threshold": _sig(1.0 / b), "below": int(k), "kept": kept, "n": int(n_points)})
    return {"caption": {"q": int(q), "n_show": int(n_show)}, "states": states}


def beta_live(L_hat, labels, betas=None, name="beta", n_components=2, n_show=None, beta=None, *,
              text) -> LiveFigure:
    """Chapter 3's beta figure without a kernel, over ``betas`` (default: 31 values over the range of
    :data:`probdr_lite.presentation.figures.elbo.BETA`, and ``beta``, by default its default).

    Left: the ``n_show`` smallest eigenvalues of L_hat (on 1^T x = 0) and the threshold 1/beta, on an axis that
    holds the threshold at every beta; middle: the squared scales s_i^2 = max(1/lambda_i - beta, 0) of the closed
    form; right: X*'s first two coordinates on axes fixed at the widest embedding, so the shrinkage shows. Every
    number comes from :func:`probdr_lite.probdr.le_closed_form`. How many eigenvalues lie below the threshold and
    how many directions are kept are readouts (and the chapter's titles paste them); where beta leaves no direction
    (every s_i^2 = 0, X* = 0) ``live.js`` says in the panels that nothing is left to draw. ``text`` holds the
    chapter's sentences (:data:`TEXT_KEYS`), with the numbers of :func:`beta_facts` pasted.
    """
    from probdr_lite.probdr import le_closed_form

    text = _text(text, "beta_live")
    from probdr_lite.presentation.figures.elbo import BETA, N_SHOW  # the slider and the eigenvalues shown, defined once

    beta = BETA[2] if beta is None else beta
    n_show = N_SHOW if n_show is None else check_scalar(n_show, "n_show", low=1, integer=True)
    if betas is None:
        betas = sorted({_sig(b) for b in np.geomspace(BETA[0], BETA[1], 31)} | {beta})
    betas = [check_scalar(b, "betas entry", low=0.0, low_inclusive=False) for b in betas]
    labels = np.asarray(labels)
    q = n_components
    with single_threaded():
        X_wide, lam = le_closed_form(L_hat, n_show, min(betas), centre=True, return_eigenvalues=True)
        frames, s2, cats, n_below = [], [], [], []
        for b in betas:
            X = le_closed_form(L_hat, n_show, b, centre=True)
            frames.append(X[:, :2])
            s2.append(np.sum(X * X, axis=0))
            alive = lam < 1.0 / b
            cats.append([_KEPT if alive[i] and i < q else (_SURVIVES if alive[i] else _DROPPED)
                         for i in range(n_show)])
            n_below.append(int(alive.sum()))
    ext = 1.1 * float(np.abs(X_wide[:, :2]).max())
    s2 = np.array(s2)
    dims = ["beta"]
    facts = beta_facts(betas, n_below, q, len(labels), n_show)
    kept = [f["kept"] for f in facts["states"]]
    controls = [control("beta", "β", betas, beta)]
    readouts = [
        {"name": "threshold", "label": "threshold 1/β", **array(1.0 / np.array(betas), dims), "digits": 4},
        {"name": "below", "label": f"eigenvalues below it (of the {n_show} smallest)",
         **array(np.array(n_below, dtype=float), dims), "digits": 3},
        {"name": "kept", "label": f"directions kept (of q = {q})",
         **array(np.array(kept, dtype=float), dims), "digits": 3},
        {"name": "s1", "label": "s₁² (first direction)", **array(s2[:, 0], dims), "digits": 4},
        {"name": "s2", "label": "s₂² (second direction)", **array(s2[:, 1], dims), "digits": 4},
    ]
    alts = [_panel_text(text[k], facts["caption"], controls, readouts)
            for k in ("alt_eigenvalues", "alt_scales", "alt_points")]
    titles = [_panel_text(text[k], facts["caption"], controls, readouts)
              for k in ("title_eigenvalues", "title_scales", "title_points")]
    spec = {
        "controls": controls,
        "panels": [
            {"type": "lines", "x": list(range(1, n_show + 1)), "logy": True,
             "ylim": [0.8 * min(float(lam[0]), 1.0 / max(betas)), 1.3 * max(float(lam[-1]), 1.0 / min(betas))],
             "series": [{"y": array(np.tile(lam, (len(betas), 1)), dims), "colour": "#BBBBBB", "nolines": True,
                         "point_colours": array(np.array(cats, dtype=np.uint8), dims, "u8")}],
             "category_colours": _CATEGORY_COLOURS,
             "hlines": [{"y": array(1.0 / np.array(betas)[:, None], dims), "colour": "#000000",
                         "label": "the threshold 1/β = {=threshold}"}],
             "title": titles[0], "alt": alts[0],
             "xlabel": "eigen-direction i (smallest λ first)", "ylabel": "eigenvalue λᵢ (log scale)"},
            {"type": "bars", "heights": array(s2, dims), "categories": array(np.array(cats, dtype=np.uint8), dims,
                                                                               "u8"),
             "category_colours": _CATEGORY_COLOURS, "ymax": 1.05 * float(s2.max()),
             "title": titles[1], "alt": alts[1],
             "xlabel": "eigen-direction i", "ylabel": "sᵢ² = max(1/λᵢ − β, 0)"},
            {"type": "scatter", "xy": points(np.array(frames), dims, bits=16, box=(-ext, ext, -ext, ext)),
             "bounds": [-ext, ext, -ext, ext], "equal_aspect": True, "classes": [int(c) for c in labels],
             "palette": CLASS_PALETTE, "radius": 2.0,
             "title": titles[2], "alt": alts[2], "xlabel": "x₁", "ylabel": "x₂"},
        ],
        "readouts": readouts,
        "height": 270,
        "caption": _paste(text["caption"], facts["caption"]),
    }
    return LiveFigure(spec, name)


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 4: eta, stable, slow or divergent


def eta_facts(n_steps: int, n_etas: int, every: int, n_iterates) -> dict:
    """The numbers of chapter 4's live figure: ``"caption"`` holds ``n_steps``, ``n_etas`` (step sizes) and ``every``
    (the curves are drawn every so many steps); ``"states"`` one dict per step size, with ``last_step``, the step of
    its last stored iterate (``n_iterates`` - 1: the last step for a run that converged or was slow, the last one
    before the blow-up for a run that diverged)."""
    check_length(n_iterates, "n_iterates", int(n_etas), "step size")
    return {"caption": {"n_steps": int(n_steps), "n_etas": int(n_etas), "every": int(every)},
            "states": [{"last_step": int(m) - 1} for m in n_iterates]}


def eta_live(L_hat, labels, etas=None, name="eta", beta=None, n_components=2, n_steps=600, seed=0,
             eta=None, include=(), *, text) -> LiveFigure:
    """Chapter 4's eta figure without a kernel: :func:`probdr_lite.probdr.fit_le_elbo` for each eta in ``etas``
    (default: 30 values over the chapter's slider range, its default ``eta`` and every value of ``include``; the
    range and default are :data:`probdr_lite.chapters.unrolled_inference.ETA_SLIDER`), the ELBO gap and Gram error per
    step and the last iterate (for a run that diverged, the last one before the blow-up; a readout gives its step).
    ``text`` holds the chapter's sentences (:data:`TEXT_KEYS`), with the numbers of :func:`eta_facts` pasted."""
    from probdr_lite.presentation.figures.unrolling import GAP_LIMITS, GRAM_LIMITS, run_verdict
    from probdr_lite.probdr import CONVERGED, fit_le_elbo, le_closed_form, le_elbo

    from probdr_lite.chapters.probdr_elbo import SETUP
    from probdr_lite.chapters.unrolled_inference import ETA_SLIDER

    text = _text(text, "eta_live")
    if beta is None:  # the book's beta, set once (chapter 3's SETUP)
        beta = SETUP.beta
    beta = check_scalar(beta, "beta", low=0.0, low_inclusive=False)
    if eta is None:
        eta = ETA_SLIDER["default"]
    if etas is None:
        etas = sorted({_sig(e) for e in np.geomspace(ETA_SLIDER["low"], ETA_SLIDER["high"], 30)} | {eta}
                      | {float(e) for e in include})
    etas = [check_scalar(e, "etas entry", low=0.0, low_inclusive=False) for e in etas]
    labels = np.asarray(labels)
    T = check_scalar(n_steps, "n_steps", low=1, high=100_000, integer=True)
    gaps = np.full((len(etas), T + 1), np.nan)
    grams = np.full((len(etas), T + 1), np.nan)
    last, verdicts, final_gram, stored = [], [], [], []
    with single_threaded():
        elbo_star = le_elbo(le_closed_form(L_hat, n_components, beta, centre=True), L_hat, beta)
        for k, e in enumerate(etas):
            fit = fit_le_elbo(L_hat, n_components, beta, eta=e, n_steps=T, seed=seed, centre=True, store_every=T)
            m = len(fit.elbo)
            gaps[k, :m] = np.clip(elbo_star - fit.elbo, GAP_LIMITS[0], None)
            grams[k, :m] = np.clip(fit.gram_error, GRAM_LIMITS[0], None)
            last.append(fit.X[:, :2])
            verdicts.append(run_verdict(fit))
            final_gram.append(float(fit.gram_error[-1]))
            stored.append(m)
    # draw at most ~150 points per curve (every 4th step), the last one included
    keep = np.unique(np.r_[np.arange(0, T + 1, max(1, T // 150)), T])
    facts = eta_facts(T, len(etas), keep[1], stored)
    last = np.array(last)
    last[~np.isfinite(last)] = np.nan
    dims = ["eta"]
    controls = [control("eta", "step size η", etas, eta, digits=3)]
    readouts = [
        {"name": "verdict", "label": "the run", "dims": dims, "text": verdicts},
        {"name": "gram", "label": "Gram error at the last step", **array(final_gram, dims), "digits": 3},
        {"name": "shown", "label": "step of the iterate drawn on the right",
         **array([float(f["last_step"]) for f in facts["states"]], dims), "digits": 6},
    ]
    alts = [_panel_text(text[k], facts["caption"], controls, readouts) for k in ("alt_gap", "alt_gram", "alt_points")]
    spec = {
        "controls": controls,
        "panels": [
            {"type": "lines", "x": [int(t) for t in keep], "logy": True, "ylim": list(GAP_LIMITS),
             "series": [{"y": array(gaps[:, keep], dims, "f32"), "colour": "#000000"}],
             "title": "η = {eta}: {=verdict}", "alt": alts[0],
             "xlabel": "step t (= layer)", "ylabel": "ELBO(X*) − ELBO(Xₜ)"},
            {"type": "lines", "x": [int(t) for t in keep], "logy": True, "ylim": list(GRAM_LIMITS),
             "series": [{"y": array(grams[:, keep], dims, "f32"), "colour": "#D55E00"}],
             "hlines": [{"value": CONVERGED, "colour": "#888888"}],
             "title": "distance to X*: {=gram} at the last step",
             "alt": alts[1], "xlabel": "step t (= layer)",
             "ylabel": "Gram error to X*"},
            {"type": "scatter", "xy": points(last, dims), "classes": [int(c) for c in labels],
             "palette": CLASS_PALETTE, "radius": 2.0, "equal_aspect": True,
             "title": "where it ends: Xₜ at step {=shown}", "alt": alts[2],
             "xlabel": "x₁ (axes follow the points)", "ylabel": "x₂"},
        ],
        "readouts": readouts,
        "height": 270,
        "caption": _paste(text["caption"], facts["caption"]),
    }
    return LiveFigure(spec, name)


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 2: neighbours and bandwidth


def neighbours_facts(ks, factors, t0: float, pieces) -> dict:
    """The numbers of chapter 2's live figure: ``"caption"`` holds the grid's sizes ``n_ks`` and ``n_bandwidths``,
    the bandwidth factors at its ends, ``factor_first`` and ``factor_last``, and ``t0``; ``"states"`` one dict per
    (k, bandwidth), row-major, with ``pieces`` (the graph's connected pieces, of ``pieces``; more than one: no single
    embedding, and the panel draws none)."""
    pieces = check_array(pieces, "pieces", ndim=2)
    check_length(pieces, "pieces", len(ks), "k (row)")
    check_length(pieces.T, "pieces", len(factors), "bandwidth factor (column)")
    return {"caption": {"n_ks": len(ks), "n_bandwidths": len(factors), "factor_first": factors[0],
                        "factor_last": factors[-1], "t0": float(t0)},
            "states": [{"pieces": int(p)} for p in pieces.ravel()]}


def neighbours_live(Y, t, ks=None, factors=None, name="neighbours", k=None, factor=1, *, text) -> LiveFigure:
    """Chapter 2's figure without a kernel: Laplacian Eigenmaps (:func:`probdr_lite.eigenmaps.embed_graph`) of the
    heat-kernel k-NN graph for every k in ``ks`` and bandwidth ``factor`` x t0, t0 = ``default_bandwidth(Y, k)``
    at the default k. The signs of the two coordinates are chosen to agree with the default setting's, so that a
    small move of a control does not mirror the picture. The readouts count the graph's connected pieces; where it
    falls apart there is no single embedding, the panel draws no point and ``live.js`` says so. ``text`` holds the
    chapter's sentences (:data:`TEXT_KEYS`), with the numbers of :func:`neighbours_facts` pasted."""
    from probdr_lite.eigenmaps import embed_graph
    from probdr_lite.graphs import default_bandwidth, knn_graph

    from probdr_lite.presentation.figures.neighbourhoods import BANDWIDTH_FACTORS, NEIGHBOUR_STEPS, NEIGHBOURS

    ks = NEIGHBOUR_STEPS if ks is None else ks  # the sliders' settings, defined once
    factors = BANDWIDTH_FACTORS if factors is None else factors
    k = NEIGHBOURS[2] if k is None else k
    text = _text(text, "neighbours_live")
    Y = check_array(Y, "Y", ndim=2, min_rows=10)
    t = np.asarray(t, dtype=float)
    t0 = default_bandwidth(Y, k)
    bandwidths = [_sig(f * t0, 4) for f in factors]
    n = Y.shape[0]
    xy = np.full((len(ks), len(bandwidths), n, 2), np.nan)
    lam = np.full((len(ks), len(bandwidths), 2), np.nan)
    edges = np.zeros((len(ks), len(bandwidths)))
    pieces = np.ones((len(ks), len(bandwidths)))
    with single_threaded():
        for a, kk in enumerate(ks):
            for b, bw in enumerate(bandwidths):
                W = knn_graph(Y, n_neighbors=int(kk), mode="heat", bandwidth=float(bw))
                edges[a, b] = (W != 0).sum() // 2 if hasattr(W, "nnz") else np.count_nonzero(np.triu(W, 1))
                parts, _ = connected_components(W, directed=False)
                pieces[a, b] = parts
                if parts > 1:  # no single embedding (the panel says so)
                    continue
                X, ev = embed_graph(W, n_components=2, return_eigenvalues=True)
                xy[a, b], lam[a, b] = X, ev
    ref = xy[list(ks).index(k), list(factors).index(factor)]
    for a in range(len(ks)):
        for b in range(len(bandwidths)):
            for j in range(2):
                if np.isfinite(xy[a, b, :, j]).all() and float(xy[a, b, :, j] @ ref[:, j]) < 0:
                    xy[a, b, :, j] *= -1
    facts = neighbours_facts(ks, factors, t0, pieces)
    dims = ["n_neighbors", "bandwidth"]
    controls = [control("n_neighbors", "neighbours k", list(ks), k),
                control("bandwidth", "bandwidth t", bandwidths, bandwidths[list(factors).index(factor)], digits=3)]
    readouts = [
        {"name": "edges", "label": "edges in the graph", **array(edges, dims), "digits": 6},
        {"name": "lam1", "label": "λ₁", **array(lam[..., 0], dims), "digits": 3},
        {"name": "lam2", "label": "λ₂", **array(lam[..., 1], dims), "digits": 3},
        {"name": "pieces", "label": "connected pieces of the graph", **array(pieces, dims), "digits": 3},
    ]
    spec = {
        "controls": controls,
        "panels": [{"type": "scatter", "xy": points(xy, dims), "colour_values": [float(v) for v in t],
                    "radius": 2.0, "equal_aspect": False,
                    "title": "Laplacian Eigenmaps, k = {n_neighbors}, t = {bandwidth}",
                    "alt": _panel_text(text["alt"], facts["caption"], controls, readouts),
                    "xlabel": "coordinate 1 (axes follow the points)", "ylabel": "coordinate 2"}],
        "readouts": readouts,
        "height": 320,
        "caption": _paste(text["caption"], facts["caption"]),
    }
    return LiveFigure(spec, name)
