"""The trained-transformers chapter: the figures, tables and sentences of the multi-seed comparison.

Presentation only: the rows are read by :mod:`probdr_lite.experiments.files`
and their statistics (seed bands, paired differences, the decision rule, the
power calculation) computed by :mod:`probdr_lite.experiments.stats`; this module
draws them and returns the facts of the chapter's sentences (the captions and alt texts are the chapter's). The
recipe grid's tables, figure and verdict facts are in :mod:`probdr_lite.presentation.figures.recipes`.

- :data:`ARM_STYLE`  name, label, operator and colour of every trained arm (the one place they are defined);
- :func:`curves_figure` / :func:`curves_facts`  validation curves, one mean line and a seed band per arm;
- :func:`arms_table`  :func:`~probdr_lite.experiments.summarise`'s arms as a table;
- :func:`quantity_level` / :func:`quantity_difference` / :func:`quantity_spread`  a value, a signed difference and
  a standard deviation of a quantity in print (accuracies in %, their differences in pp; the recipe tables too);
- :func:`gates_figure` / :func:`gates_table` / :func:`gates_facts`  the learned g of the gated arms ``A - g I`` (from g = 0 and g = 1);
- :func:`mechanism_figure` / :func:`mechanism_facts` / :func:`mechanism_table` / :func:`agreement_table`  what the
  attention blocks did along training, and which measurements move the same way between the initialisations in
  every case.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_choice, check_length, check_result, check_scalar
from probdr_lite.experiments.files import check_task_rows as _task_rows
from probdr_lite.experiments.attention import GATE_START
from probdr_lite.experiments.results import TASK_METRICS, TASK_VARIANTS
from probdr_lite.experiments.stats import (
    BANDS,
    check_summary,
    gate_values,
    mechanism_agreement,
    seed_band,
)
from probdr_lite.presentation.plotting import Table

from ..prose import num, pct, signed
from ..style import OKABE_ITO, VARIANT_STYLE, VariantStyle

__all__ = [
    "ARM_STYLE",
    "VARIANT_LABELS",
    "VARIANT_COLOURS",
    "OPERATOR_MATH",
    "OPERATOR_TEXT",
    "Table",
    "curves_figure",
    "curves_facts",
    "arms_table",
    "quantity_level",
    "quantity_difference",
    "quantity_spread",
    "gates_figure",
    "gates_table",
    "gates_facts",
    "mechanism_figure",
    "mechanism_facts",
    "mechanism_table",
    "agreement_table",
]

#: Every trained arm: its label (legends, tables) and colour from the book-wide VARIANT_STYLE (family "trained"),
#: and the operator as mathtext (plots), as text (tables) and as MathJax (sentences).
_OPERATORS = {
    "attention": ("$A$", "A"),
    "diffusion": ("$A - I$", "A − I"),
    "gated": ("$A - gI$", "A − gI"),
    "gated-from-1": ("$A - gI$, $g_0 = 1$", "A − gI from g = 1"),
    "sym-normalised": (r"$A_{\rm sym}$", "A_sym"),
    "symmetric": (r"$A_{\rm sym} - I$", "A_sym − I"),
}
#: The gated arm that starts at g = 1 is newer than the book-wide table of styles; it takes the Okabe-Ito colour
#: no other trained arm uses.
_TRAINED_STYLE = {**VARIANT_STYLE["trained"],
                  "gated-from-1": VariantStyle("gated from 1: A − gI, g₀ = 1", OKABE_ITO["bluish green"])}
#: the operator as MathJax, for generated Markdown sentences (the way the chapter's prose writes it)
_TEX = {"attention": "$A$", "diffusion": "$A - I$", "gated": "$A - gI$", "gated-from-1": "$A - gI$ from $g = 1$",
        "sym-normalised": r"$A_{\rm sym}$", "symmetric": r"$A_{\rm sym} - I$"}
ARM_STYLE = {v: {"label": _TRAINED_STYLE[v].label, "colour": _TRAINED_STYLE[v].colour,
                 "math": math_, "text": text, "tex": _TEX[v]} for v, (math_, text) in _OPERATORS.items()}
VARIANT_LABELS = {v: s["label"] for v, s in ARM_STYLE.items()}
OPERATOR_MATH = {v: s["math"] for v, s in ARM_STYLE.items()}
OPERATOR_TEXT = {v: s["text"] for v, s in ARM_STYLE.items()}
VARIANT_COLOURS = {v: s["colour"] for v, s in ARM_STYLE.items()}
METRIC_LABELS = {"val_loss": "validation loss (cross-entropy, nats)", "train_loss": "training loss (nats)",
                 "val_acc": "validation accuracy"}
QUANTITY_LABELS = {"final_val_loss": "final validation loss", "best_val_loss": "best validation loss",
                   "final_val_acc": "final validation accuracy", "best_val_acc": "best validation accuracy"}
TASK_NAMES = {"charlm": "character model", "vit": "vision transformer"}
#: the gated arms, in the order they are drawn
GATED_ARMS = tuple(GATE_START)


# ------------------------------------------------------------------------------------------------------- curves

def _variants(rows, task):
    present = {r["variant"] for r in rows}
    return [v for v in TASK_VARIANTS[task] if v in present]


def curves_figure(rows, metric: str = "val_loss", *, band: str = "sd", zoom_after=None, reference=None,
                  reference_label: str = "reference", variants=None, title=None, titles=None):
    """Validation curves of every arm: the mean over seeds as a line and a shaded seed band.

    Parameters
    ----------
    rows : list of results rows (one task)
    metric, band : see :func:`seed_band`
    zoom_after : number, optional
        Add a second panel showing only evaluation points at iterations >= ``zoom_after``,
        with the y-axis fitted to them (the arms differ little at the end of training).
    reference : number, optional
        Draw a dashed horizontal line at this value (e.g. nanoGPT's published 1.88).
    reference_label : str
        Legend text of the reference line.
    variants : list of str, optional
        The arms to draw (default: every arm in ``rows``).
    title : str, optional
        Figure title.
    titles : dict, optional
        The chapter's panel titles: ``titles[band]`` over the first panel and ``titles["zoom"]`` over the zoomed
        one (a panel without a title in ``titles`` has none).

    Returns
    -------
    matplotlib Figure. In each panel the k-th line is the mean of the k-th arm and the
    k-th ``PolyCollection`` its band. The chapter describes it, with :func:`curves_facts`.
    """
    rows, task = _task_rows(rows)
    band = check_choice(band, "band", BANDS)
    present = _variants(rows, task)
    if variants is None:
        variants = present
    else:
        variants = [check_choice(v, "variants", present) for v in variants]
        if not variants:
            raise ValueError("variants must name an arm")
    if reference is not None:
        reference = check_scalar(reference, "reference")
    data = {v: seed_band(rows, v, metric, band) for v in variants}
    max_iter = max(float(d[0][-1]) for d in data.values())
    if zoom_after is not None:
        zoom_after = check_scalar(zoom_after, "zoom_after", low=0, high=max_iter)
    n_panels = 1 if zoom_after is None else 2
    fig, axes = plt.subplots(1, n_panels, figsize=(5.2 * n_panels, 3.6), squeeze=False)
    axes = axes[0]
    titles = titles or {}
    for k, ax in enumerate(axes):
        zoomed = k == 1
        for v, (iters, mean, lower, upper, values) in data.items():
            keep = iters >= zoom_after if zoomed else np.ones_like(iters, dtype=bool)
            colour = VARIANT_COLOURS[v]
            ax.plot(iters[keep], mean[keep], color=colour, lw=1.8, marker="o" if keep.sum() < 15 else None,
                    ms=3, label=f"{v}: {OPERATOR_MATH[v]} (n = {len(values)})")
            ax.fill_between(iters[keep], lower[keep], upper[keep], color=colour, alpha=0.2, linewidth=0)
        if reference is not None:
            ax.axhline(reference, color="0.3", ls="--", lw=1, label=reference_label)
        if zoomed:
            lo = min(float(d[2][d[0] >= zoom_after].min()) for d in data.values())
            hi = max(float(d[3][d[0] >= zoom_after].max()) for d in data.values())
            pad = 0.08 * (hi - lo) if hi > lo else 0.01 * max(abs(hi), 1.0)
            ax.set_xlim(zoom_after, max_iter + 0.02 * max_iter)
            ax.set_ylim(lo - pad, hi + pad)
            if "zoom" in titles:
                ax.set_title(titles["zoom"], fontsize=10)
        elif band in titles:
            ax.set_title(titles[band], fontsize=10)
        ax.set_xlabel("training iteration" if task == "charlm" else "training step (batches)")
        ax.set_ylabel(METRIC_LABELS[metric])
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small", frameon=False)
    if title is not None:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def curves_facts(metric: str = "val_loss") -> dict:
    """What :func:`curves_figure` draws for ``metric``: ``metric``, its label (``label``, and ``Label`` to open a
    sentence)."""
    label = METRIC_LABELS[check_choice(metric, 'metric', tuple(METRIC_LABELS))]
    return {"metric": metric, "label": label, "Label": label.capitalize()}


# ------------------------------------------------------------------------------------------------------- tables
# (Table lives in probdr_lite.presentation.plotting, shared with the other chapters.)


# The numbers of a quantity (``final_val_loss``, ``best_val_acc``, ...) in print: an accuracy in percent with 2
# decimals (its differences in percentage points), a loss with ``digits`` decimals. None or NaN (not measured) prints
# "n/a", and rounding never shows a sign the value does not have (prose.num / prose.signed).

def _quantity_text(value, quantity, digits, formatter, accuracy_unit) -> str:
    if value is None:
        return "n/a"
    if not quantity.endswith("acc"):
        return formatter(value, digits)
    text = formatter(100 * value, 2)
    return text if text == "n/a" else f"{text} {accuracy_unit}"


def quantity_level(value, quantity: str, digits: int = 4) -> str:
    """A value of a quantity: ``"96.90 %"`` for an accuracy, ``"1.7710"`` for a loss."""
    return _quantity_text(value, quantity, digits, num, "%")


def quantity_difference(value, quantity: str, digits: int = 4) -> str:
    """A difference of a quantity, signed: ``"+1.23 pp"`` for an accuracy, ``"-0.0123"`` for a loss, ``"0.0000"``."""
    return _quantity_text(value, quantity, digits, signed, "pp")


def quantity_spread(value, quantity: str, digits: int = 4) -> str:
    """A standard deviation of a quantity (of its values or its differences): ``"1.23 pp"``, ``"0.0123"``."""
    return _quantity_text(value, quantity, digits, num, "pp")


def arms_table(summary: dict, task: str, digits: int = 4, caption=None) -> Table:
    """Per arm: number of seeds, mean ± sd over seeds of every final and best metric, throughput; the caption is the
    chapter's."""
    task = check_summary(summary, task)
    quantities = [f"{kind}_{m}" for m in TASK_METRICS[task] for kind in ("final", "best")]
    header = ["arm", "seeds"] + [QUANTITY_LABELS[q] for q in quantities] + ["throughput"]
    body = []
    for a in summary["arms"]:
        if a["task"] != task:
            continue
        cells = [VARIANT_LABELS[a["variant"]], str(a["n"])]
        cells += [f"{quantity_level(a[q + '_mean'], q, digits)} ± {quantity_spread(a[q + '_sd'], q, digits)}"
                  for q in quantities]
        cells.append(f"{a['throughput']:,.0f} {a['throughput_unit']}")
        body.append(cells)
    return Table(header, body, caption=caption)


# -------------------------------------------------------------------------------------------------------- gates

def _gates(rows):
    """{arm: (seeds, gates (n_seeds, n_layer, n_head))} for every gated arm of ``rows`` that records its gates."""
    out = {}
    for arm in GATED_ARMS:
        got = gate_values(rows, arm) if any(r["variant"] == arm for r in rows) else None
        if got is not None:
            out[arm] = got
    return out


def gates_figure(rows, *, title=None, ylabel=None):
    """Where the learned g of every head ends, layer by layer: one dot per seed, the mean over seeds as a bar.

    ``rows`` are of one recipe; each gated arm present (:data:`GATED_ARMS`: from g = 0 and from g = 1) is drawn
    in its colour, side by side within each layer. Dashed lines mark g = 0 (plain attention A) and g = 1 (the
    paper's A − I). The scatter collections come in the order arm, layer, head; each holds the points (x, g) of
    every seed for that head. The title and the y-axis label are the chapter's. The chapter describes the figure.
    """
    rows, _ = _task_rows(rows)
    found = _gates(rows)
    if not found:
        raise ValueError(f"rows must record the 'gates' of {GATED_ARMS}")
    shapes = {g.shape[1:] for _, g in found.values()}
    if len(shapes) != 1:
        raise ValueError(f"gates must share one shape; got {sorted(shapes)}")
    n_layer, n_head = next(iter(shapes))
    # narrow enough that, with its legend beside it, the figure fits the page's column with 9 px tick labels
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * n_layer + 1.5), 3.5))
    n_arms = len(found)
    slot = 0.8 / n_arms
    for a, (arm, (seeds, g)) in enumerate(found.items()):
        colour = ARM_STYLE[arm]["colour"]
        start = -0.4 + a * slot
        offsets = start + (np.arange(n_head) + 0.5) * slot / n_head
        for layer in range(n_layer):
            for h in range(n_head):
                x = np.full(len(seeds), layer + offsets[h])
                ax.scatter(x, g[:, layer, h], s=12, color=colour, alpha=0.8, zorder=3,
                           label=f"{ARM_STYLE[arm]['text']} ({len(seeds)} seeds)" if layer == 0 and h == 0 else None)
                ax.plot([x[0] - 0.3 * slot / n_head, x[0] + 0.3 * slot / n_head], [g[:, layer, h].mean()] * 2,
                        color="k", lw=1.4, zorder=4)
    ax.axhline(0.0, color="0.35", ls="--", lw=1)
    ax.axhline(1.0, color="0.35", ls=":", lw=1)
    ax.text(-0.55, 0.0, "g = 0: $A$", va="bottom", ha="left", fontsize=8, color="0.3")
    ax.text(-0.55, 1.0, "g = 1: $A - I$", va="bottom", ha="left", fontsize=8, color="0.3")
    ax.set_xticks(range(n_layer))
    ax.set_xticklabels([f"layer {i}\n(heads 0–{n_head - 1})" for i in range(n_layer)])
    ax.set_xlim(-0.6, n_layer - 0.4)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize="x-small", frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


#: a gate that started at 1 ends "where the other start ends" if no head ends further than this from its twin
GATES_APART = 0.1

#: the columns of :func:`gates_table` (the chapter names them, in its ``header``)
GATES_COLUMNS = ("cell", "start", "seeds", "shape", "range", "mean", "layer_means", "nearer_1", "twin_gap")


def _labelled_rows(groups, name: str) -> list:
    """``[(label, rows)]`` of a non-empty ``{label: rows of one task}``, each rows checked by ``check_task_rows``."""
    if not isinstance(groups, dict) or not groups:
        raise ValueError(f"{name} must map labels to rows")
    return [(label, _task_rows(rows)[0]) for label, rows in groups.items()]


def gates_table(cells: dict, header, caption=None) -> Table:
    """Where the learned gates of each gated arm ended, one row per cell and start: the range and mean over every
    seed, layer and head, the mean of each layer, how many heads ended nearer 1 than 0, and (on the row of the arm
    started at 1, with seeds shared with the arm started at 0) how far above its twin each head ended. The
    ``header`` (one name per column of :data:`GATES_COLUMNS`) and the caption are the chapter's."""
    check_length(header, "header", len(GATES_COLUMNS), "column")
    body = []
    for label, rows in _labelled_rows(cells, "cells"):
        found = _gates(rows)
        gaps = _gate_gap(found)
        for arm, (seeds, g) in found.items():
            gap = gaps if arm == "gated-from-1" and gaps is not None else None
            body.append([label, f"$g = {GATE_START[arm]:g}$", str(len(seeds)), f"{g.shape[1]} × {g.shape[2]}",
                         f"{g.min():.2f} to {g.max():.2f}", f"{g.mean():.2f}",
                         ", ".join(f"{m:.2f}" for m in g.mean(axis=(0, 2))), f"{int((g > 0.5).sum())} of {g.size}",
                         "" if gap is None else f"{signed(gap.mean(), 2)} ({signed(gap.min(), 2)} to "
                                                f"{signed(gap.max(), 2)}), seeds: {gap.shape[0]}"])
    return Table(header, body, caption=caption)


def _gate_gap(found):
    if len(found) != 2:
        return None
    (s0, g0), (s1, g1) = found["gated"], found["gated-from-1"]
    shared = sorted(set(s0.tolist()) & set(s1.tolist()))
    if not shared:
        return None
    return g1[[list(s1).index(s) for s in shared]] - g0[[list(s0).index(s) for s in shared]]


def gates_facts(cells: dict) -> dict:
    """Whether the two starts of the gate end apart: ``n_twins`` cells where both starts share seeds, ``apart``
    (in every such cell some head ends more than :data:`GATES_APART` from its twin), ``together`` (in none does),
    ``mixed`` (in some but not all), ``apart_threshold``."""
    gaps = [g for g in (_gate_gap(_gates(_task_rows(rows)[0])) for rows in cells.values()) if g is not None]
    far = [bool(np.abs(g).max() >= GATES_APART) for g in gaps]
    return {"n_twins": len(gaps), "apart": bool(far) and all(far), "together": bool(far) and not any(far),
            "mixed": any(far) and not all(far), "apart_threshold": GATES_APART}


# ---------------------------------------------------------------------------------------------------- mechanism

#: the line style of each initialisation in the mechanism figure
INIT_STYLE = {"gpt2": "-", "default": "--"}


#: the mechanism series :func:`mechanism_figure` draws unless told otherwise
MECHANISM_SHOWN = ("update_ratio", "v_over_av", "shrink", "wvwo_mean_eig", "grad_norm")


def _mechanism_series(series, labels):
    from probdr_lite.experiments.stats import MECHANISM_SERIES

    series = [check_choice(s, "series", MECHANISM_SERIES) for s in ([series] if isinstance(series, str) else series)]
    if not series:
        raise ValueError("series must name a series")
    return [check_choice(s, "series", labels or ()) for s in series]  # each one the chapter names


def mechanism_figure(rows, labels: dict, series=MECHANISM_SHOWN, arms=("attention", "diffusion"), title=None):
    """What the attention blocks did along training, one panel per mechanism series.

    ``rows`` of one task with a mechanism record, one recipe per initialisation. In each panel, for every
    (initialisation, arm): the mean over seeds of the layer-averaged series (thick; solid for ``gpt2``, dashed
    for ``default``) and each seed (thin). The x-axis is the training step (the same iterations as the
    curves); a log scale where the series spans more than a factor of 30. ``labels`` (the chapter's) names what
    each series measures, over its panel; the title is the chapter's. Returns the Figure; in panel k the thick lines
    come first, in the order initialisation, arm. The chapter describes it, with :func:`mechanism_facts`.
    """
    from probdr_lite.experiments.stats import mechanism_path

    rows, task = _task_rows(rows)
    series = _mechanism_series(series, labels)
    arms = [check_choice(a, "arms", TASK_VARIANTS[task]) for a in arms]
    paths = {s: mechanism_path(rows, s) for s in series}
    cols = min(2, len(series))  # two panels a row, so that the ticks stay readable at the page's width
    nrow = math.ceil(len(series) / cols)
    fig, axes = plt.subplots(nrow, cols, figsize=(5.1 * cols, 3.0 * nrow), squeeze=False)
    for k, s in enumerate(series):
        ax = axes[k // cols][k % cols]
        cells = [(key, p) for key, p in paths[s].items() if key[1] in arms]
        cells.sort(key=lambda kp: (list(INIT_STYLE).index(kp[0][0]) if kp[0][0] in INIT_STYLE else 9,
                                   arms.index(kp[0][1])))
        for (init, arm), p in cells:
            ax.plot(p["iters"], p["mean"], color=ARM_STYLE[arm]["colour"], ls=INIT_STYLE[init], lw=2,
                    label=f"{init} init, {ARM_STYLE[arm]['text']} (n = {len(p['runs'])})")
        for (init, arm), p in cells:
            for _, x, y in p["runs"]:
                ax.plot(x, y, color=ARM_STYLE[arm]["colour"], ls=INIT_STYLE[init], lw=0.6, alpha=0.35)
        values = np.concatenate([y for _, p in cells for _, _, y in p["runs"]]) if cells else np.zeros(1)
        positive = values[values > 0]
        if len(positive) == len(values) and positive.max() > 30 * positive.min():
            ax.set_yscale("log")
        if s in ("shrink", "wvwo_mean_eig"):
            ax.axhline(0.0, color="0.5", lw=0.8)
        ax.set_title(labels[s], fontsize=9)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    for k in range(len(series), nrow * cols):
        axes[k // cols][k % cols].axis("off")
    axes[0][0].legend(fontsize="xx-small", frameon=False)
    if title is not None:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def mechanism_facts(labels: dict, series=MECHANISM_SHOWN) -> dict:
    """What :func:`mechanism_figure` draws for ``series`` with the chapter's ``labels``: ``n_series`` panels and
    their labels, ``series`` (a list) and ``series_text`` (the labels joined by commas)."""
    names = [labels[s] for s in _mechanism_series(series, labels)]
    return {"n_series": len(names), "series": names, "series_text": ", ".join(names)}


_INIT_WORDS = {"gpt2": "GPT-2", "default": "PyTorch default"}

#: the columns of :func:`mechanism_table` (the chapter names them, in its ``header``)
MECHANISM_COLUMNS = ("case", "init", "seeds", "effect", "start_sv", "start_v_over_av", "start_update",
                     "end_shrink", "end_v_over_av", "end_eig", "base_shrink", "base_v_over_av", "base_eig",
                     "grad_ratio", "clipped")


def mechanism_table(cases: dict, header, effects: dict | None = None, arm: str = "diffusion",
                    baseline: str = "attention", caption=None) -> Table:
    """What the mechanism records show, one row per case and initialisation (means over layers and seeds).

    ``cases`` maps a case's label to its rows (both arms measured). Per initialisation: at the start, the largest
    singular value of ``W_V W_O`` (and how many times the other initialisation's it is, on the larger one's row),
    ``‖v‖ / ‖A v‖`` and the attention update against the stream in the first layer; at the end, in ``arm`` and in
    ``baseline``, the share of the attention update that the ``- v`` cancels (negative: enlarges),
    ``‖v‖ / ‖A v‖`` and the mean eigenvalue of ``W_V W_O``; the gradient norm of ``arm`` against ``baseline`` over
    the first interval (paired by seed, with the seeds' range) and the clipped steps over the last. ``effects``
    maps a case's label to ``{init: (difference text, reading)}`` of ``arm`` in the same recipe. The ``header``
    (one name per column of :data:`MECHANISM_COLUMNS`) and the caption are the chapter's.
    """
    from probdr_lite.experiments.stats import mechanism_points, mechanism_ratio, mechanism_reading

    check_length(header, "header", len(MECHANISM_COLUMNS), "column")
    body = []
    for label, rows in _labelled_rows(cases, "cases"):
        pts = {(s, at): mechanism_points(rows, s, at) for s in ("wvwo_top_sv", "v_over_av", "update_ratio",
                                                                 "shrink", "wvwo_mean_eig", "clipped")
               for at in ("start", "end")}
        inits = [i for i in _INIT_WORDS if (i, arm) in pts[("shrink", "end")]
                 and (i, baseline) in pts[("shrink", "end")]]
        if not inits:
            raise ValueError(f"rows must record {arm!r} and {baseline!r}")

        def at(series, when, init, which=baseline):
            return pts[(series, when)][(init, which)]["mean"]

        def first(series, init, which=baseline):
            return mechanism_reading(pts[(series, "start")][(init, which)], series, "start")

        ratios = mechanism_ratio(rows, "grad_norm", arm, baseline, "start")
        sv = {i: at("wvwo_top_sv", "start", i) for i in inits}
        for i in inits:
            n = len(pts[("shrink", "end")][(i, arm)]["seeds"])
            e = (effects or {}).get(label, {}).get(i)
            times = ""
            if len(inits) == 2 and sv[i] == max(sv.values()):
                times = f" ({max(sv.values()) / min(sv.values()):.0f} times the other's)"
            r = ratios.get(i)
            grad = "n/a" if r is None else (f"{r['mean']:.2f}" + (f" ({r['min']:.2f} to {r['max']:.2f})"
                                                                 if len(r["seeds"]) > 1 else ""))
            body.append([label, _INIT_WORDS[i], str(n), f"{e[0]} ({e[1]})" if e else "n/a",
                         f"{sv[i]:.3f}{times}", f"{first('v_over_av', i):.2f}",
                         f"{first('update_ratio', i, arm):.2f} ({first('update_ratio', i):.2f})",
                         pct(at("shrink", "end", i, arm)), f"{at('v_over_av', 'end', i, arm):.2f}",
                         signed(at("wvwo_mean_eig", "end", i, arm)), pct(at("shrink", "end", i)),
                         f"{at('v_over_av', 'end', i):.2f}", signed(at("wvwo_mean_eig", "end", i)), grad,
                         f"{pct(at('clipped', 'end', i, arm))} ({pct(at('clipped', 'end', i))})"])
    return Table(header, body, caption=caption)


#: which way a measurement of :func:`~probdr_lite.experiments.stats.mechanism_agreement` moves (the keys of the
#: chapter's ``directions`` in :func:`agreement_table`)
DIRECTIONS = ("lower", "higher", "differs", "equal")


def agreement_direction(a: dict) -> str:
    """Which way one measurement of :func:`~probdr_lite.experiments.stats.mechanism_agreement` moves, one of
    :data:`DIRECTIONS`: ``"lower"`` or ``"higher"`` with GPT-2 in every case, ``"differs"`` between cases, or
    ``"equal"`` in a case."""
    first = next(iter(a["values"].values()))
    if a["same_sign"]:
        return "lower" if first[0] < first[1] else "higher"
    return "differs" if all(x != y for x, y in a["values"].values()) else "equal"


def _agreement_keys(agreement):
    return [(a["series"], a["at"]) for a in agreement]


def agreement_table(agreement: list, rows: dict, directions: dict, labels: dict | None = None,
                    caption=None) -> Table:
    """Per measurement (of the arm ``agreement`` was measured on), its value under GPT-2 and under PyTorch's default
    initialisation in every case, and which way it moves (:func:`agreement_direction`). ``agreement`` is
    :func:`probdr_lite.experiments.stats.mechanism_agreement`'s output; the chapter names its measurements (``rows``,
    keyed by ``(series, at)``), the ways they move (``directions``, keyed by :data:`DIRECTIONS`) and its cases
    (``labels``); the caption is the chapter's."""
    check_result(agreement, "agreement", mechanism_agreement, kind=list)
    missing = [d for d in DIRECTIONS if d not in directions] + [k for k in _agreement_keys(agreement) if k not in rows]
    if missing:
        raise ValueError(f"directions and rows must name {missing}")
    tasks = list(agreement[0]["values"])
    missing = [t for t in tasks if t not in (labels or {})]
    if missing:
        raise ValueError(f"labels must name every case; missing {missing}")
    header = ["measurement"] + [f"{labels[t]}: GPT-2 / default" for t in tasks] + ["GPT-2 against default"]
    body = [[rows[(a["series"], a["at"])]]
            + [f"{a['values'][t][0]:.3g} / {a['values'][t][1]:.3g}" for t in tasks] + [directions[agreement_direction(a)]]
            for a in agreement]
    return Table(header, body, caption=caption)
