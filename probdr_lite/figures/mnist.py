"""Chapter 5: an untrained transformer at the diagonal initialisation clusters MNIST, in pictures and in numbers.

The paper's figure (notes, settings below section 3) embeds flattened MNIST images, X_0 = Pi(Y W_E) with d_q = 128,
runs 8 blocks with kappa = 30 and eta = 0.4, and plots the first two latent coordinates before and after, coloured by
class. The paper leaves beta, the mask M, the number of images, W_E and weight sharing open; :data:`PAPER` fixes them
(beta = 1, M = 0, all 10,000 test images, W_E ~ N(0, 1/784) with seed 0, one block shared by all layers).

This module turns that figure into numbers and into things a reader can move:

- :func:`variant_metrics`: per layer and per variant, the four numbers of :func:`probdr_lite.metrics.layer_metrics`
  (k-NN accuracy, silhouette, between/within-class ratio, NMI of k-means) with the book's settings
  ``probdr_lite.metrics.METRICS``, as a tidy list of dicts (one dict per variant and layer);
  :func:`metrics_table` renders it without pandas;
- :func:`before_after_figure`, :func:`metric_lines_figure`: the paper's picture and the numbers per layer;
- :class:`MnistPanel` / :func:`mnist_panel`: sliders kappa, eta, beta and depth over 1,000 images, redrawn in place;
  :func:`depth_scrub` and :func:`kappa_scrub` are its kernel-free twins;
- :func:`sweep` / :func:`sweep_figure`: one metric after 8 blocks over a grid of kappa and eta.

Every function that runs blocks on a few thousand points or fewer does so on one thread (see ``_threads``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict, dataclass

import matplotlib.pyplot as plt
from matplotlib.offsetbox import AnnotationBbox, OffsetImage
from matplotlib.ticker import MaxNLocator
import numpy as np
import torch

from probdr_lite._validation import check_array, check_choice, check_scalar, check_seed
from probdr_lite._threads import single_threaded
from probdr_lite.figures.block import CHAPTER_VARIANTS
from probdr_lite.figures.style import METRIC_LABELS, variant_colour
from probdr_lite.metrics import METRIC_NAMES, METRICS, between_within_ratio, kmeans_nmi, layer_metrics, metric_value
from probdr_lite.plotting import Table, class_scatter, scrub
from probdr_lite.unrolled import VARIANTS, embed, unroll
from probdr_lite.widgets import Slider, SliderPanel

__all__ = [
    "PAPER",
    "MnistSettings",
    "settings_table",
    "KAPPA_RANGE",
    "mnist_latents",
    "run_blocks",
    "variant_metrics",
    "kmeans_nmi_spread",
    "pick",
    "Table",
    "metrics_table",
    "layer_table",
    "before_after_figure",
    "metric_lines_figure",
    "MnistPanel",
    "mnist_panel",
    "depth_scrub",
    "kappa_scrub",
    "sweep",
    "sweep_figure",
]

#: Up to this many points the blocks run on one thread (see ``_threads``); above it torch keeps its own setting.
SMALL_N = 4096


@dataclass(frozen=True)
class MnistSettings:
    """The settings of the MNIST figure. Stated by the paper: d_q, kappa, eta, 8 blocks. Chosen here: the rest."""

    d_q: int = 128  # latent width (paper)
    kappa: float = 30.0  # attention sharpness, logits kappa cos(x_i, x_j) (paper)
    eta: float = 0.4  # step size, below 1/2 (paper)
    n_layers: int = 8  # blocks (paper); one block shared by all of them (our choice)
    beta: float = 1.0  # regulariser and self-attention penalty (our choice)
    variant: str = "paper"  # 2 (A - I) X + 2 X / (d_q + beta): the paper's update with its feed-forward term
    seed: int = 0  # of W_E ~ N(0, 1/784) (our choice)
    mask: None = None  # M = 0: every image attends to every image (our choice)


#: The defaults of chapter 5.
PAPER = MnistSettings()

def _check_variants(variants) -> tuple:
    if isinstance(variants, str) or len(variants) == 0:
        raise ValueError(f"variants must be a non-empty list of names from {VARIANTS}; got {variants!r}")
    return tuple(check_choice(v, "variant", VARIANTS) for v in variants)


def _check_metrics(metrics) -> tuple:
    if isinstance(metrics, str) or len(metrics) == 0:
        raise ValueError(f"metrics must be a non-empty list of names from {METRIC_NAMES}; got {metrics!r}")
    return tuple(check_choice(m, "metric", METRIC_NAMES) for m in metrics)


def _check_labels(labels, n: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be {n} integers (one class per row of X); got shape {labels.shape}, "
                         f"dtype {labels.dtype}")
    return labels


# ---------------------------------------------------------------------------------------------------------------------
# The computations: embed, run the blocks, measure every layer


def mnist_latents(n=None, d_q: int = PAPER.d_q, seed: int = PAPER.seed):
    """X_0 = Pi(Y W_E) for MNIST test images, W_E ~ N(0, 1/784) (``unrolled.embed``), float32.

    Parameters
    ----------
    n : int in [10, 10000] or None
        None: all 10,000 test images. Otherwise a stratified subset (classes as balanced as possible, the same
        images on every run; ``load_mnist(n, stratified=True)``).
    d_q : int in [2, 4096]
    seed : int >= 0
        Seed of W_E.

    Returns
    -------
    X0 : torch.Tensor (n, d_q), float32, rows centred with squared norm d_q
    labels : ndarray (n,), int64
    """
    from probdr_lite.data import load_mnist

    if n is not None:
        n = check_scalar(n, "n", low=10, high=10_000, integer=True)
    d_q = check_scalar(d_q, "d_q", low=2, high=4096, integer=True)
    images, labels = load_mnist(n=n, stratified=n is not None)
    return embed(torch.from_numpy(images), d_q=d_q, seed=check_seed(seed)), labels


def run_blocks(X0, n_layers=PAPER.n_layers, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
               variant=PAPER.variant, mask=None) -> list:
    """``unroll`` (one shared block, n_layers times), on one thread when n <= SMALL_N; a list of n_layers + 1 arrays."""
    n = X0.shape[0] if hasattr(X0, "shape") else len(X0)
    if n <= SMALL_N:
        with single_threaded():
            path = unroll(X0, n_layers, kappa, eta, beta, variant, mask=mask)
    else:
        path = unroll(X0, n_layers, kappa, eta, beta, variant, mask=mask)
    return [X.numpy() for X in path]


def kmeans_nmi_spread(X, labels, seeds=range(5)) -> np.ndarray:
    """NMI of k-means (``metrics.METRICS``) for several k-means seeds on the same X: how much of a difference is noise."""
    seeds = [check_seed(s) for s in seeds]
    if len(seeds) < 2:
        raise ValueError(f"seeds must hold at least 2 seeds to show a spread; got {len(seeds)}")
    X = check_array(X, "X", ndim=2, min_rows=2)
    labels = _check_labels(labels, X.shape[0])
    with single_threaded():
        return np.array([kmeans_nmi(X, labels, seed=s, n_init=METRICS.n_init) for s in seeds])


def variant_metrics(X0, labels, variants=CHAPTER_VARIANTS, n_layers=PAPER.n_layers, kappa=PAPER.kappa,
                    eta=PAPER.eta, beta=PAPER.beta, metrics=METRIC_NAMES, seed: int = 0, return_latents=False):
    """Run every variant from the same X_0 and measure every layer: the rows of :func:`layer_metrics`, concatenated.

    With ``return_latents=True`` also returns {variant: [X_0, ..., X_{n_layers}]}.
    """
    variants = _check_variants(variants)
    rows, paths = [], {}
    for v in variants:
        paths[v] = run_blocks(X0, n_layers, kappa, eta, beta, v)
        rows += layer_metrics(paths[v], labels, variant=v, metrics=metrics, seed=seed)
    return (rows, paths) if return_latents else rows


def pick(rows, metric, *, variant, layer=None, n=None):
    """The value of ``metric`` in the one row with this variant (and n, if given) at ``layer``.

    With ``layer=None`` returns the list of values over the layers, in layer order. Raises if no row, or more than
    one row per layer, matches (e.g. two sizes n of the same variant and n not given).
    """
    metric = check_choice(metric, "metric", METRIC_NAMES)
    chosen = [r for r in rows if r["variant"] == variant and (n is None or r["n"] == n)]
    layers = [r["layer"] for r in chosen]
    if not chosen:
        raise ValueError(f"no rows for variant {variant!r}" + (f" and n = {n}" if n is not None else ""))
    if len(set(layers)) != len(layers):
        raise ValueError(f"rows for variant {variant!r} hold several n ({sorted({r['n'] for r in chosen})}); pass n")
    by_layer = {r["layer"]: r[metric] for r in chosen}
    if layer is None:
        return [by_layer[t] for t in sorted(by_layer)]
    if layer not in by_layer:
        raise ValueError(f"no layer {layer} for variant {variant!r}; layers available: {sorted(by_layer)}")
    return by_layer[layer]


# ---------------------------------------------------------------------------------------------------------------------
# A table without pandas


# (Table lives in probdr_lite.plotting, shared with the other chapters.)


def _row_name(row) -> str:
    return f"{row['variant']} (n = {row['n']:,})"


def metrics_table(rows, layers=(0, 8), metrics=METRIC_NAMES, digits: int = 3, caption=None) -> Table:
    """One line per (variant, n), one column per metric and layer: e.g. "5-NN accuracy (5-fold CV), layer 8".

    Parameters
    ----------
    rows : list of dicts from :func:`layer_metrics` / :func:`variant_metrics`
    layers : layers to show (each must be present for every variant)
    metrics : subset of ``probdr_lite.metrics.METRIC_NAMES``
    digits : decimals shown (1 to 6)
    """
    metrics = _check_metrics(metrics)
    digits = check_scalar(digits, "digits", low=1, high=6, integer=True)
    if not rows:
        raise ValueError("rows must be a non-empty list of dicts from layer_metrics")
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(_row_name(r), {})[r["layer"]] = r
    header = ["variant"] + [f"{METRIC_LABELS[m]}, layer {t}" for m in metrics for t in layers]
    body = []
    for name, by_layer in groups.items():
        missing = [t for t in layers if t not in by_layer]
        if missing:
            raise ValueError(f"rows have no layer {missing[0]} for {name}; layers available: {sorted(by_layer)}")
        body.append([name] + [f"{by_layer[t][m]:.{digits}f}" for m in metrics for t in layers])
    return Table(header, body, caption)


def layer_table(rows, metrics=METRIC_NAMES, digits: int = 3, caption=None) -> Table:
    """One line per layer, one column per metric, for the rows of a single (variant, n)."""
    metrics = _check_metrics(metrics)
    digits = check_scalar(digits, "digits", low=1, high=6, integer=True)
    if not rows:
        raise ValueError("rows must be a non-empty list of dicts from layer_metrics")
    names = {_row_name(r) for r in rows}
    if len(names) != 1:
        raise ValueError(f"rows must come from one variant and one n; got {sorted(names)}")
    body = [[str(r["layer"])] + [f"{r[m]:.{digits}f}" for m in metrics] for r in sorted(rows, key=lambda r: r["layer"])]
    return Table(["layer"] + [METRIC_LABELS[m] for m in metrics], body, caption)


# ---------------------------------------------------------------------------------------------------------------------
# Static figures


def before_after_figure(X0, Xn, labels, n_layers=PAPER.n_layers, dpi=72):
    """The paper's picture: the first two latent coordinates before and after the blocks, coloured by class."""
    X0 = check_array(X0, "X0", ndim=2)
    Xn = check_array(Xn, "Xn", ndim=2)
    if Xn.shape != X0.shape:
        raise ValueError(f"Xn must have the shape of X0, {X0.shape}; got {Xn.shape}")
    labels = _check_labels(labels, X0.shape[0])
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.2), dpi=dpi)
    class_scatter(axes[0], X0, labels, s=2, alpha=0.5, legend=False, title="X₀ = Π(Y W_E): before any block")
    class_scatter(axes[1], Xn, labels, s=2, alpha=0.5, legend=True,
                  title=f"X_{n_layers}: after {n_layers} blocks")
    for ax in axes:
        ax.set_xlabel("latent coordinate 1")
        ax.set_ylabel("latent coordinate 2")
    fig.tight_layout()
    return fig


def metric_lines_figure(rows, metrics=METRIC_NAMES, dpi=72):
    """One panel per metric, layer on the x axis, one line per (variant, n); dashed lines for the largest n."""
    metrics = _check_metrics(metrics)
    if not rows:
        raise ValueError("rows must be a non-empty list of dicts from layer_metrics")
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["variant"], r["n"]), []).append(r)
    n_max = max(r["n"] for r in rows)
    several_n = len({r["n"] for r in rows}) > 1
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.1 * len(metrics), 3.2), dpi=dpi, squeeze=False)
    for ax, m in zip(axes[0], metrics):
        for (v, n), group in groups.items():
            group = sorted(group, key=lambda r: r["layer"])
            dashed = several_n and n == n_max
            ax.plot([r["layer"] for r in group], [r[m] for r in group], marker="o", ms=3,
                    ls="--" if dashed else "-", color=variant_colour(v),
                    label=f"{v} (n = {n:,})" if several_n else v)
        ax.set_xlabel("layer (blocks applied)")
        ax.set_title(METRIC_LABELS[m], fontsize=9)
        ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# The live panel and its kernel-free twins


def _legend_image(classes, dpi=72) -> np.ndarray:
    """The class legend (colours of ``class_scatter``) rendered once to an RGBA array, cropped to its content."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from probdr_lite.plotting import CLASS_COLOURS

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
        self.labels = _check_labels(labels, X0.shape[0])
        self.X0 = X0
        self.variant = check_choice(variant, "variant", VARIANTS)
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
    """Sliders kappa (log, 0.3 to 3000), eta (0.02 to 0.98), beta (0 to 10) and depth (0 to n_layers, default all)."""
    view = MnistPanel(X0, labels, variant=variant, n_layers=n_layers)
    depth = view.n_layers if depth is None else depth
    sliders = [
        Slider("kappa", 0.3, 3000.0, kappa, log=True, description="κ (sharpness)"),
        Slider("eta", 0.02, 0.98, eta, step=0.02, description="η (step size)"),
        Slider("beta", 0.0, 10.0, beta, step=0.25, description="β (regulariser)"),
        Slider("depth", 0, n_layers, depth, integer=True, description="depth (blocks)"),
    ]
    panel = SliderPanel(view.fig, view.update, sliders)
    panel.view = view
    return panel


def depth_scrub(X0, labels, variant=PAPER.variant, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
                n_layers=PAPER.n_layers, dpi=64):
    """Kernel-free twin of the panel: depth 0..n_layers at fixed kappa, eta, beta."""
    view = MnistPanel(X0, labels, variant=variant, n_layers=n_layers, dpi=dpi)
    return scrub(view.fig, lambda d: view.update(kappa, eta, beta, d), list(range(n_layers + 1)),
                 label="depth", dpi=dpi)


#: Sharpnesses from "everything attends to everything" to "each point attends to itself".
KAPPA_RANGE = (0.3, 1.0, 3.0, 10.0, 20.0, 30.0, 50.0, 100.0, 300.0, 1000.0, 3000.0)


def kappa_scrub(X0, labels, kappas=KAPPA_RANGE, variant=PAPER.variant, eta=PAPER.eta, beta=PAPER.beta,
                n_layers=PAPER.n_layers, dpi=64):
    """Kernel-free twin of the panel: kappa over ``kappas`` after n_layers blocks (the right panel shows all layers)."""
    kappas = [check_scalar(k, "kappa", low=0.0, high=1e4, low_inclusive=False) for k in kappas]
    view = MnistPanel(X0, labels, variant=variant, n_layers=n_layers, dpi=dpi, cache_size=len(kappas) + 1)
    return scrub(view.fig, lambda k: view.update(k, eta, beta, n_layers), kappas, label="kappa", dpi=dpi)


# ---------------------------------------------------------------------------------------------------------------------
# Sweeps of kappa and eta


_SWEEP_METRICS = ("knn_accuracy", "kmeans_nmi", "between_within", "silhouette")


def sweep(X0, labels, kappas, etas, metrics=("knn_accuracy", "kmeans_nmi"), variant=PAPER.variant,
          beta=PAPER.beta, n_layers=PAPER.n_layers, seed: int = 0) -> dict:
    """Each metric after n_layers blocks for every (eta, kappa): {metric: array (len(etas), len(kappas))}.

    Also returns the layer-0 value of each metric under the key f"{metric}@0" (a float), the reference the heat map
    is read against.

    The blocks run in float64. With eta near 1/2 each block keeps only a fraction 1 - 2 eta of every point's own
    position, (1 - 2 eta)^8 = 1e-8 after 8 blocks at eta = 0.45: near float32's resolution, so float64 keeps
    rounding out of the comparison.
    """
    if len(kappas) == 0 or len(etas) == 0:
        raise ValueError("kappas and etas must each hold at least one value")
    metrics = tuple(check_choice(m, "metric", _SWEEP_METRICS) for m in
                    ((metrics,) if isinstance(metrics, str) else metrics))
    labels = _check_labels(labels, X0.shape[0])
    seed = check_seed(seed)
    out = {m: np.empty((len(etas), len(kappas))) for m in metrics}
    X0 = torch.as_tensor(check_array(X0, "X0", ndim=2, min_rows=10), dtype=torch.float64)
    with single_threaded():
        X0np = X0.numpy()
        for m in metrics:
            out[f"{m}@0"] = metric_value(m, X0np, labels, seed=seed)
        for i, eta in enumerate(etas):
            for j, kappa in enumerate(kappas):
                X = unroll(X0, n_layers, kappa, eta, beta, variant)[-1].numpy()
                for m in metrics:
                    out[m][i, j] = metric_value(m, X, labels, seed=seed)
    return out


def sweep_figure(result, kappas, etas, metrics=None, n_layers=PAPER.n_layers, dpi=72):
    """Heat maps of :func:`sweep` (one per metric), each cell annotated with its value and the layer-0 value named."""
    metrics = [m for m in result if "@" not in m] if metrics is None else list(metrics)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.4), dpi=dpi, squeeze=False)
    for ax, m in zip(axes[0], metrics):
        grid = np.asarray(result[m])
        if grid.shape != (len(etas), len(kappas)):
            raise ValueError(f"result[{m!r}] has shape {grid.shape}; expected (len(etas), len(kappas)) = "
                             f"({len(etas)}, {len(kappas)})")
        base = result[f"{m}@0"]
        span = max(abs(grid.max() - base), abs(grid.min() - base), 1e-6)
        im = ax.imshow(grid - base, cmap="RdBu", vmin=-span, vmax=span, aspect="auto", origin="lower")
        for i in range(len(etas)):
            for j in range(len(kappas)):
                dark = abs(grid[i, j] - base) > 0.6 * span
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
        ax.set_xticks(range(len(kappas)), [f"{k:g}" for k in kappas], fontsize=8)
        ax.set_yticks(range(len(etas)), [f"{e:g}" for e in etas], fontsize=8)
        ax.set_xlabel("κ (sharpness)")
        ax.set_ylabel("η (step size)")
        ax.set_title(f"{METRIC_LABELS[m]} after {n_layers} blocks\n(layer 0: {base:.2f}; colour = change)",
                     fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label="change from layer 0")
    fig.tight_layout()
    return fig


def settings_table(settings: MnistSettings = PAPER) -> Table:
    """The settings of the figure, each marked as stated by the paper or chosen here."""
    stated = {"d_q", "kappa", "eta", "n_layers"}
    notes = {
        "d_q": "latent width",
        "kappa": "attention sharpness (logits κ cos(x_i, x_j))",
        "eta": "step size",
        "n_layers": "blocks",
        "beta": "regulariser and self-attention penalty",
        "variant": "update: 2 η (A − I) X + 2 η X / (d_q + β), then Π",
        "seed": "seed of W_E ~ N(0, 1/784)",
        "mask": "M = 0: no mask",
    }
    body = [[k, "none" if v is None else str(v), notes[k], "paper" if k in stated else "chosen here"]
            for k, v in asdict(settings).items()]
    return Table(["setting", "value", "meaning", "source"], body)
