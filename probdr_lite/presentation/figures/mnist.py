"""The MNIST chapter's tables, figures and slider panel: an untrained transformer at the diagonal initialisation on
MNIST.

The numbers come from :mod:`probdr_lite.chapters.mnist_at_init` (the experiment) and :mod:`probdr_lite.metrics`; this module
draws them (the sentences about them, captions and alt texts, are the chapter's: it describes each figure after
building it):

- :func:`settings_table`: the figure's settings with the chapter's meanings, each marked as stated by the paper or
  chosen here;
- :func:`metrics_table`, :func:`layer_table`: the rows of ``variant_metrics`` / ``layer_metrics`` without pandas;
- :func:`before_after_figure`, :func:`metric_lines_figure`: the paper's picture and the numbers per layer;
- :class:`MnistPanel` / :func:`mnist_panel`: sliders kappa, eta, beta (ranges:
  :data:`probdr_lite.chapters.mnist_at_init.SLIDERS`) and depth over 1,000 images, redrawn in place;
- :func:`sweep_figure`: heat maps of ``chapters.mnist_at_init.sweep``;
- :func:`step_family_figure`: the numbers after the last block of plain attention over its step.

Wherever the NMI of k-means is drawn or printed it comes with its spread over the k-means seeds (the rows of
:func:`probdr_lite.chapters.mnist_at_init.layer_rows`, the cells of ``sweep``): mean ± standard deviation in a table
cell, an error bar of one standard deviation on a line.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict

import matplotlib.pyplot as plt
from matplotlib.offsetbox import AnnotationBbox, OffsetImage
from matplotlib.ticker import MaxNLocator
import numpy as np
import torch

from probdr_lite._threads import single_threaded
from probdr_lite._validation import check_array, check_choice, check_class_labels, check_result, check_scalar, check_text
from probdr_lite.presentation.style import METRIC_LABELS, variant_colour, variant_label
from probdr_lite.metrics import METRIC_NAMES, between_within_ratio, check_metric_names, layer_metrics
from probdr_lite.chapters.mnist_at_init import PAPER, SLIDERS, MnistSettings
from probdr_lite.presentation.plotting import Table, class_scatter
from probdr_lite.unrolled import BLOCK_VARIANTS, unroll
from probdr_lite.presentation.widgets import Slider, SliderPanel, slider_label

__all__ = [
    "settings_table",
    "metrics_table",
    "layer_table",
    "before_after_figure",
    "metric_lines_figure",
    "MnistPanel",
    "mnist_panel",
    "sweep_figure",
]


# ---------------------------------------------------------------------------------------------------------------------
# A table without pandas


# (Table lives in probdr_lite.presentation.plotting, shared with the other chapters.)


def _row_name(row) -> str:
    return f"{row['variant']} (n = {row['n']:,})"


def _cell(row, m, digits) -> str:
    """A row's value of ``m``; the NMI of k-means as mean ± standard deviation over the k-means seeds where the row
    holds its spread (:func:`probdr_lite.chapters.mnist_at_init.layer_rows`)."""
    if m == "kmeans_nmi" and "kmeans_nmi_sd" in row:
        return f"{row[m]:.{digits}f} ± {row['kmeans_nmi_sd']:.{digits}f}"
    return f"{row[m]:.{digits}f}"


def metrics_table(rows, layers=(0, 8), metrics=METRIC_NAMES, digits: int = 3, caption=None) -> Table:
    """One line per (variant, n), one column per metric and layer: e.g. "5-NN accuracy (5-fold CV), layer 8".

    Parameters
    ----------
    rows : list of dicts from :func:`layer_metrics` / :func:`variant_metrics`
    layers : layers to show (each must be present for every variant)
    metrics : subset of ``probdr_lite.metrics.METRIC_NAMES``
    digits : decimals shown (1 to 6)
    """
    metrics = check_metric_names(metrics)
    digits = check_scalar(digits, "digits", low=1, high=6, integer=True)
    check_result(rows, "rows", layer_metrics, kind=list)
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(_row_name(r), {})[r["layer"]] = r
    header = ["variant"] + [f"{METRIC_LABELS[m]}, layer {t}" for m in metrics for t in layers]
    body = []
    for name, by_layer in groups.items():
        missing = [t for t in layers if t not in by_layer]
        if missing:
            raise ValueError(f"rows have no layer {missing[0]} for {name}; layers available: {sorted(by_layer)}")
        body.append([name] + [_cell(by_layer[t], m, digits) for m in metrics for t in layers])
    return Table(header, body, caption)


def layer_table(rows, metrics=METRIC_NAMES, digits: int = 3, caption=None, nmi_range: bool = False) -> Table:
    """One line per layer, one column per metric, for the rows of a single (variant, n).

    With ``nmi_range=True`` a last column gives the lowest and highest NMI of k-means over the k-means seeds (the
    rows of :func:`probdr_lite.chapters.mnist_at_init.layer_rows`), the two numbers the chapter's rule compares.
    """
    metrics = check_metric_names(metrics)
    digits = check_scalar(digits, "digits", low=1, high=6, integer=True)
    check_result(rows, "rows", layer_metrics, kind=list)
    names = {_row_name(r) for r in rows}
    if len(names) != 1:
        raise ValueError(f"rows must come from one variant and one n; got {sorted(names)}")
    if nmi_range and not all("kmeans_nmi_min" in r and "kmeans_nmi_max" in r for r in rows):
        raise ValueError("nmi_range needs rows that hold the NMI's range over the k-means seeds "
                         "(probdr_lite.chapters.mnist_at_init.layer_rows)")
    header = ["layer"] + [METRIC_LABELS[m] for m in metrics] + (["NMI runs, lowest to highest"] if nmi_range else [])
    body = [[str(r["layer"])] + [_cell(r, m, digits) for m in metrics]
            + ([f"{r['kmeans_nmi_min']:.{digits}f} to {r['kmeans_nmi_max']:.{digits}f}"] if nmi_range else [])
            for r in sorted(rows, key=lambda r: r["layer"])]
    return Table(header, body, caption)


# ---------------------------------------------------------------------------------------------------------------------
# Static figures


def before_after_figure(X0, Xn, labels, n_layers=PAPER.n_layers, dpi=72):
    """The paper's picture: the first two latent coordinates before and after the blocks, coloured by class."""
    X0 = check_array(X0, "X0", ndim=2)
    Xn = check_array(Xn, "Xn", ndim=2)
    if Xn.shape != X0.shape:
        raise ValueError(f"Xn must have the shape of X0, {X0.shape}; got {Xn.shape}")
    labels = check_class_labels(labels, X0.shape[0], "X0")
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.2), dpi=dpi)
    class_scatter(axes[0], X0, labels, s=2, alpha=0.5, legend=False, title="X₀ = Π(Y W_E): before any block")
    class_scatter(axes[1], Xn, labels, s=2, alpha=0.5, legend=True,
                  title=f"X_{n_layers}: after {n_layers} blocks")
    for ax in axes:
        ax.set_xlabel("latent coordinate 1")
        ax.set_ylabel("latent coordinate 2")
    fig.tight_layout()
    return fig


def _line(ax, x, rows, m, **style):
    """The values of ``m`` in ``rows`` over ``x``: a line, and for the NMI of k-means (rows that hold its spread)
    with an error bar of one standard deviation over the k-means seeds at each point."""
    y = [r[m] for r in rows]
    if m == "kmeans_nmi" and all("kmeans_nmi_sd" in r for r in rows):
        return ax.errorbar(x, y, yerr=[r["kmeans_nmi_sd"] for r in rows], capsize=2, elinewidth=0.8, **style)
    return ax.plot(x, y, **style)


def metric_lines_figure(rows, metrics=METRIC_NAMES, dpi=100):
    """One panel per metric (two per row), layer on the x axis, one line per (variant, n); dashed lines for the
    largest n; the NMI of k-means with an error bar of one standard deviation over the k-means seeds."""
    metrics = check_metric_names(metrics)
    check_result(rows, "rows", layer_metrics, kind=list)
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["variant"], r["n"]), []).append(r)
    n_max = max(r["n"] for r in rows)
    several_n = len({r["n"] for r in rows}) > 1
    n_rows = (len(metrics) + 1) // 2
    fig, axes = plt.subplots(n_rows, min(2, len(metrics)), figsize=(8.4, 3.0 * n_rows), dpi=dpi, squeeze=False)
    for ax in axes.ravel()[len(metrics):]:
        ax.set_visible(False)
    for ax, m in zip(axes.ravel(), metrics):
        for (v, n), group in groups.items():
            group = sorted(group, key=lambda r: r["layer"])
            dashed = several_n and n == n_max
            _line(ax, [r["layer"] for r in group], group, m, marker="o", ms=3, ls="--" if dashed else "-",
                  color=variant_colour(v), label=f"{v} (n = {n:,})" if several_n else v)
        ax.set_xlabel("layer (blocks applied)")
        ax.set_title(METRIC_LABELS[m], fontsize=9)
        ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize="small", loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# The live panel


def _legend_image(classes, dpi=72) -> np.ndarray:
    """The class legend (colours of ``class_scatter``) rendered once to an RGBA array, cropped to its content."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from probdr_lite.presentation.plotting import CLASS_COLOURS

    fig = Figure(figsize=(1.0, 3.0), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    handles = [Line2D([], [], marker="o", ls="", color=CLASS_COLOURS[int(c) % 10], label=str(c)) for c in classes]
    fig.legend(handles=handles, title="class", loc="center", frameon=False, fontsize="small", markerscale=0.8)
    canvas.draw()
    img = np.asarray(canvas.buffer_rgba()).copy()
    ink = np.argwhere(img[..., 3] > 0)
    (r0, c0), (r1, c1) = ink.min(0), ink.max(0) + 1
    return img[r0:r1, c0:c1]


class MnistPanel:
    """The figure behind the live MNIST panel, with a cache so that moving only ``depth`` costs no blocks.

    Left: the first two latent coordinates after ``depth`` blocks, coloured by class. Right: the between/within-class
    ratio (computed in all d_q dimensions, cheap enough to redraw live) at every layer for the current kappa, eta and
    beta, with the current depth marked. ``update(kappa, eta, beta, depth)`` moves the existing artists
    (``set_offsets``, ``set_data``); nothing is re-created, so a redraw is one Agg render.
    """

    def __init__(self, X0, labels, variant=PAPER.variant, n_layers=PAPER.n_layers, dpi=72, cache_size=16):
        X0 = torch.as_tensor(check_array(X0, "X0", ndim=2, min_rows=10))
        self.labels = check_class_labels(labels, X0.shape[0], "X0")
        self.X0 = X0
        self.variant = check_choice(variant, "variant", BLOCK_VARIANTS)
        self.n_layers = check_scalar(n_layers, "n_layers", low=1, high=64, integer=True)
        self._cache = OrderedDict()
        self._cache_size = check_scalar(cache_size, "cache_size", low=1, integer=True)
        self.fig, (self.ax_scatter, ax_legend, self.ax_ratio) = plt.subplots(
            1, 3, figsize=(9.6, 3.9), dpi=dpi, gridspec_kw={"width_ratios": [1.0, 0.15, 0.95]})
        X = X0.numpy()
        self.points = class_scatter(self.ax_scatter, X, self.labels, s=4, alpha=0.6, legend=False)
        self.ax_scatter.set_xlabel("latent coordinate 1")
        self.ax_scatter.set_ylabel("latent coordinate 2")
        self.ax_scatter.set_xticks([])  # the coordinates' values mean nothing; their arrangement does
        self.ax_scatter.set_yticks([])
        # The class legend never changes: render it once and show it as an image. A live legend is ten texts and
        # markers, about a quarter of every redraw.
        # OffsetImage draws it at its own size (scaled by dpi / 72, as text is), whatever the width of this axes.
        legend = OffsetImage(_legend_image(np.unique(self.labels)), zoom=1.0)
        ax_legend.add_artist(AnnotationBbox(legend, (0.5, 0.5), xycoords="axes fraction", frameon=False))
        ax_legend.set_axis_off()
        layers = np.arange(self.n_layers + 1)
        (self.ratio_line,) = self.ax_ratio.plot(layers, np.ones_like(layers, dtype=float), "o-", ms=3, color="k")
        (self.ratio_now,) = self.ax_ratio.plot([0], [1.0], "o", ms=9, mfc="none", mec="C3", mew=2)
        self.ratio_at_0 = between_within_ratio(X, self.labels)  # the metrics module's own number, once
        self.ax_ratio.axhline(self.ratio_at_0, color="0.6", ls=":")
        self.ax_ratio.set_xlabel("layer (blocks applied)")
        self.ax_ratio.set_ylabel(METRIC_LABELS["between_within"])
        self.ax_ratio.set_xlim(-0.3, self.n_layers + 0.3)
        self.ax_ratio.grid(alpha=0.3)
        self.ax_ratio.yaxis.set_major_locator(MaxNLocator(5))  # few tick labels: text is most of an Agg redraw
        self.ax_scatter.set_title("depth", fontsize=10)  # placeholders, so that tight_layout leaves room for them
        self.ax_ratio.set_title("ratio", fontsize=10)
        self.fig.tight_layout(w_pad=0.2)

    def path(self, kappa, eta, beta):
        """(latents per layer, between/within ratio per layer) for these parameters, from the cache when possible."""
        key = (float(kappa), float(eta), float(beta))
        if key not in self._cache:
            with single_threaded():  # numpy's BLAS too: even the tiny centroid products stall on a busy machine
                Xs = [X.numpy() for X in unroll(self.X0, self.n_layers, kappa, eta, beta, self.variant)]
                ratios = np.array([between_within_ratio(X, self.labels) for X in Xs])
            self._cache[key] = (Xs, ratios)
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return self._cache[key]

    def update(self, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta, depth=None):
        depth = self.n_layers if depth is None else check_scalar(depth, "depth", low=0, high=self.n_layers,
                                                                  integer=True)
        Xs, ratios = self.path(kappa, eta, beta)
        X = Xs[depth]
        self.points.set_offsets(X[:, :2])
        lim = 1.08 * float(np.quantile(np.abs(X[:, :2]), 0.995)) + 1e-9
        self.ax_scatter.set_xlim(-lim, lim)
        self.ax_scatter.set_ylim(-lim, lim)
        self.ax_scatter.set_title(f"depth {depth}: κ = {kappa:.3g}, η = {eta:.3g}, β = {beta:.3g}", fontsize=10)
        self.ratio_line.set_ydata(ratios)
        self.ratio_now.set_data([depth], [ratios[depth]])
        top = max(float(ratios.max()), self.ratio_at_0) * 1.1
        self.ax_ratio.set_ylim(0, top)
        self.ax_ratio.set_title(f"between/within at depth {depth}: {ratios[depth]:.2f}", fontsize=10)


def mnist_panel(X0, labels, variant=PAPER.variant, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
                depth=None, n_layers=PAPER.n_layers) -> SliderPanel:
    """Sliders kappa, eta and beta over the ranges of :data:`probdr_lite.chapters.mnist_at_init.SLIDERS` (those of
    the live figure too) and depth (0 to n_layers, default all)."""
    view = MnistPanel(X0, labels, variant=variant, n_layers=n_layers)
    depth = view.n_layers if depth is None else depth
    at = {"kappa": kappa, "eta": eta, "beta": beta}
    sliders = [Slider(name, s["low"], s["high"], at[name], step=s["step"], log=s["log"],
                      description=slider_label(name)) for name, s in SLIDERS.items()]
    sliders.append(Slider("depth", 0, n_layers, depth, integer=True, description=slider_label("depth")))
    panel = SliderPanel(view.fig, view.update, sliders)
    panel.view = view
    return panel


# ---------------------------------------------------------------------------------------------------------------------
# The sweep of kappa and eta (computed by probdr_lite.chapters.mnist_at_init.sweep)


def sweep_figure(result, kappas, etas, metrics=None, n_layers=PAPER.n_layers, dpi=100):
    """Heat maps of :func:`sweep` (one per metric), each cell annotated with its value and the layer-0 value named;
    the NMI of k-means as its mean over the k-means seeds ± its standard deviation, in the cells and the title (its
    colour: the change of the mean)."""
    metrics = ([m for m in result if "@" not in m and m in METRIC_NAMES] if metrics is None else
               list(check_metric_names(metrics)))
    # the NMI's cells hold two lines (mean, then ± its standard deviation): its panel is wider
    widths = [1.55 if m == "kmeans_nmi" else 1.0 for m in metrics]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * sum(widths), 3.4), dpi=dpi, squeeze=False,
                             gridspec_kw={"width_ratios": widths})
    for n, (ax, m) in enumerate(zip(axes[0], metrics)):
        grid = np.asarray(result[m])
        if grid.shape != (len(etas), len(kappas)):
            raise ValueError(f"result[{m!r}] has shape {grid.shape}; expected (len(etas), len(kappas)) = "
                             f"({len(etas)}, {len(kappas)})")
        base = result[f"{m}@0"]
        spread = m == "kmeans_nmi"  # the NMI with its standard deviation over the k-means seeds
        sd = np.asarray(result["kmeans_nmi_sd"]) if spread else None
        span = max(abs(grid.max() - base), abs(grid.min() - base), 1e-6)
        im = ax.imshow(grid - base, cmap="RdBu", vmin=-span, vmax=span, aspect="auto", origin="lower")
        for i in range(len(etas)):
            for j in range(len(kappas)):
                dark = abs(grid[i, j] - base) > 0.6 * span
                text = f"{grid[i, j]:.2f}\n±{sd[i, j]:.2f}" if spread else f"{grid[i, j]:.2f}"
                ax.text(j, i, text, ha="center", va="center", fontsize=6 if spread else 7, linespacing=0.9,
                        color="white" if dark else "black")
        # ticks at 11 pt: the page shows the figure at a desktop column's width, where they stay readable
        ax.set_xticks(range(len(kappas)), [f"{k:g}" for k in kappas], fontsize=11, rotation=90)
        ax.set_yticks(range(len(etas)), [f"{e:g}" for e in etas], fontsize=11)
        ax.set_xlabel(slider_label("kappa"))
        if n == 0:  # the panels share their rows: one label says what they are
            ax.set_ylabel(slider_label("eta"))
        at0 = f"{base:.2f} ± {result['kmeans_nmi_sd@0']:.2f}" if spread else f"{base:.2f}"
        ax.set_title(f"{METRIC_LABELS[m]} after {n_layers} blocks\n(layer 0: {at0}; colour = change)", fontsize=9)
        bar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label="change from layer 0")
        bar.ax.tick_params(labelsize=11)
    fig.tight_layout()
    return fig


def step_family_figure(family_rows: dict, steps: dict, metrics=METRIC_NAMES, dpi=100):
    """Each clustering number after the last block of plain attention, as a function of its step s = 2 eta'.

    ``family_rows`` maps s to one row of :func:`probdr_lite.chapters.mnist_at_init.layer_rows` (the NMI of k-means
    with its spread over the k-means seeds, drawn as error bars of one standard deviation); ``steps`` maps each block
    of the family (:data:`probdr_lite.unrolled.STEP_FAMILY`) to its s, one of the keys, marked on the curves.
    """
    metrics = check_metric_names(metrics)
    s_grid = np.array(sorted(family_rows))
    fig, axes = plt.subplots(1, len(metrics), figsize=(2.55 * len(metrics), 2.7), dpi=dpi, squeeze=False)
    for ax, m in zip(axes[0], metrics):
        _line(ax, s_grid, [family_rows[s] for s in s_grid], m, ls="-", color="0.3", lw=1.2,
              label=r"plain attention at step $2\eta'$")
        for v, s in steps.items():
            _line(ax, [s], [family_rows[s]], m, marker="o", ls="", ms=6, color=variant_colour(v),
                  label=variant_label(v))
        ax.set(xscale="log", xlabel=r"step $2\eta'$")
        ax.set_title(METRIC_LABELS[m], fontsize="small")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize="x-small", frameon=False)
    return fig


def settings_table(settings: MnistSettings = PAPER, *, meanings: dict) -> Table:
    """The settings of the figure, each with its meaning (the chapter's words, ``meanings``: one per setting of
    :class:`~probdr_lite.chapters.mnist_at_init.MnistSettings`) and marked as stated by the paper or chosen here."""
    fields = asdict(settings)
    check_text(meanings, "meanings", sorted(fields))
    stated = {"d_q", "kappa", "eta", "n_layers"}
    body = [[k, "none" if v is None else str(v), str(meanings[k]), "paper" if k in stated else "chosen here"]
            for k, v in fields.items()]
    return Table(["setting", "value", "meaning", "source"], body)
