"""Plotting helpers shared by the chapters, and kernel-free "scrub" figures.

A *scrub figure* is the static twin of a slider: the figure is drawn once for
each value of the parameter, the frames are embedded in the page as PNGs, and
the reader moves a range control to flip between them. It needs no kernel, so
it works on the rendered site. It is built on matplotlib's
``Animation.to_jshtml`` and refuses to produce more than ``max_bytes`` of HTML.
"""

from __future__ import annotations

import html
import re
from typing import Callable, Sequence

import matplotlib

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import animation

from .._validation import check_array, check_scalar

__all__ = [
    "CLASS_COLOURS",
    "ScrubFigure",
    "describe",
    "fixed_layout",
    "smallest_text_points",
    "smallest_tick_points",
    "Table",
    "class_scatter",
    "digit_grid",
    "figure_data",
    "scrub",
]

#: One colour per MNIST class (M. A. Petroff's ten-colour cycle, arXiv 2107.02270), the same in every figure
#: and live figure of the book. Defined here, below ``figures`` (``style`` names it with the book's other
#: colours), so that this module imports nothing from the layer above it.
CLASS_COLOURS = ("#3f90da", "#ffa90e", "#bd1f01", "#94a4a2", "#832db6",
                 "#a96b59", "#e76300", "#b9ac70", "#717581", "#92dadd")


def smallest_text_points(fig, layout=True):
    """The font size, in points, of the smallest visible text of ``fig`` (titles, labels, ticks, legends, notes),
    or None if it has none; like :func:`smallest_tick_points`, after laying the figure out (``layout=False``: the
    caller just did)."""
    from matplotlib.text import Text

    if layout:
        fig.draw_without_rendering()
    sizes = [float(t.get_fontsize()) for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]
    return min(sizes) if sizes else None


def smallest_tick_points(fig, layout=True):
    """The font size, in points, of the smallest visible tick label of ``fig`` (None if it has none).

    The tick labels are only set when a figure is drawn, so the figure is laid out first (without rendering;
    ``layout=False``: the caller just did).
    """
    if layout:
        fig.draw_without_rendering()
    sizes = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        axes = [ax.xaxis, ax.yaxis] + ([ax.zaxis] if hasattr(ax, "zaxis") else [])
        for axis in axes:
            if not axis.get_visible():
                continue
            for label in axis.get_ticklabels(minor=False) + axis.get_ticklabels(minor=True):
                if label.get_visible() and label.get_text().strip():
                    sizes.append(float(label.get_fontsize()))
    return min(sizes) if sizes else None


def describe(fig, alt: str):
    """Give ``fig`` its alt text: one sentence (ending with a full stop) saying what the figure shows.

    Every PNG the figure is then saved as carries the sentence as its ``Description`` and the pixel height of its
    smallest tick label as ``probdr:tick-px`` (see :mod:`probdr_lite.presentation.style`). Returns ``fig``, so that a builder can end
    with ``return describe(fig, "...")``; describing a figure again replaces the sentence.
    """
    import matplotlib as mpl

    alt = " ".join(str(alt).split())
    if len(alt.split()) < 4 or not alt.endswith("."):
        raise ValueError(f"alt must be one sentence of at least four words ending with a full stop; got {alt!r}")
    fig._probdr_alt = alt
    canvas = fig.canvas
    if getattr(canvas, "_probdr_describes", None) is fig:
        return fig
    original = canvas.print_figure

    def print_figure(filename, *args, **kwargs):
        fmt = kwargs.get("format")
        if fmt is None and isinstance(filename, str) and "." in filename:
            fmt = filename.rsplit(".", 1)[1]
        if (fmt or mpl.rcParams["savefig.format"]).lower() == "png":
            dpi = kwargs.get("dpi") or mpl.rcParams["savefig.dpi"]
            dpi = fig.dpi if dpi == "figure" else float(dpi)
            meta = dict(kwargs.get("metadata") or {})
            meta.setdefault("Description", fig._probdr_alt)
            fig.draw_without_rendering()  # one layout for both sizes (the save draws the figure again)
            tick, text = smallest_tick_points(fig, layout=False), smallest_text_points(fig, layout=False)
            if tick is not None:
                meta["probdr:tick-px"] = f"{tick * dpi / 72:.2f}"
            if text is not None:
                meta["probdr:text-px"] = f"{text * dpi / 72:.2f}"
            kwargs["metadata"] = meta
        return original(filename, *args, **kwargs)

    canvas.print_figure = print_figure
    canvas._probdr_describes = fig
    return fig


def fixed_layout(fig, alt: str, *, left: float, right: float, top: float, bottom: float, wspace: float):
    """Fixed margins and the alt text (:func:`describe`) for a figure that an ``update`` function redraws in place.

    ``tight_layout`` would fit the axes anew around each frame's titles, so the axes would jump as a slider moves;
    fixed margins (fractions of the figure, as for ``Figure.subplots_adjust``) keep them still. Returns ``fig``.
    """
    fig.subplots_adjust(left=left, right=right, top=top, bottom=bottom, wspace=wspace)
    return describe(fig, alt)



#: The size budget of one kernel-free figure (issue: at most 2 MB per figure).
MAX_SCRUB_BYTES = 2_000_000


def class_scatter(ax, X, labels, *, s=4.0, alpha=0.7, legend=True, title=None):
    """Scatter the first two columns of ``X`` coloured by class; return the PathCollection.

    The colours are fixed per class (``CLASS_COLOURS``) so that figures in
    different chapters can be compared by eye.
    """
    X = check_array(X, "X", ndim=2)
    labels = np.asarray(labels)
    if labels.shape != (X.shape[0],):
        raise ValueError(f"labels must have shape ({X.shape[0]},) to match X; got {labels.shape}")
    if X.shape[1] < 2:
        raise ValueError(f"X must have at least 2 columns to scatter; got {X.shape[1]}")
    colours = np.asarray(CLASS_COLOURS)[labels.astype(int) % len(CLASS_COLOURS)]
    points = ax.scatter(X[:, 0], X[:, 1], c=colours, s=s, alpha=alpha, linewidths=0)
    if legend:
        handles = [
            matplotlib.lines.Line2D([], [], marker="o", ls="", color=CLASS_COLOURS[c % 10], label=str(c))
            for c in np.unique(labels)
        ]
        ax.legend(handles=handles, title="class", fontsize="x-small", title_fontsize="small",
                  loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, markerscale=0.8)
    if title is not None:
        ax.set_title(title)
    return points


def digit_grid(images, labels=None, n_rows=4, n_cols=10, *, alt: str, size=1.0):
    """A figure of ``n_rows * n_cols`` digits (28 x 28), each titled with its label, with the chapter's alt text
    ``alt`` (:func:`describe`)."""
    images = check_array(images, "images", ndim=2)
    n_rows = check_scalar(n_rows, "n_rows", low=1, high=50, integer=True)
    n_cols = check_scalar(n_cols, "n_cols", low=1, high=50, integer=True)
    if images.shape[1] != 784:
        raise ValueError(f"images must have 784 columns (28 x 28 pixels); got {images.shape[1]}")
    if images.shape[0] < n_rows * n_cols:
        raise ValueError(
            f"images must have at least n_rows * n_cols = {n_rows * n_cols} rows; got {images.shape[0]}"
        )
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(size * n_cols, size * n_rows * 1.15))
    for k, ax in enumerate(np.atleast_1d(axes).ravel()):
        ax.imshow(images[k].reshape(28, 28), cmap="gray_r", vmin=0, vmax=1)
        if labels is not None:
            ax.set_title(str(int(labels[k])), fontsize=9, pad=2)
        ax.set_axis_off()
    fig.tight_layout(pad=0.3)
    return describe(fig, alt)


def figure_data(fig) -> list:
    """Every data array drawn in ``fig`` (lines, scatter offsets and colours, images, bar heights, texts).

    Used by the tests to check that moving a slider changes what is drawn, not
    only that a callback ran.
    """
    out = []
    for ax in fig.axes:
        for line in ax.get_lines():
            out.append(np.asarray(line.get_xydata(), dtype=float))
        for coll in ax.collections:
            out.append(np.asarray(coll.get_offsets(), dtype=float))
            fc = coll.get_facecolors()
            if len(fc):
                out.append(np.asarray(fc, dtype=float))
            arr = coll.get_array()
            if arr is not None:
                out.append(np.asarray(arr, dtype=float))
        for im in ax.get_images():
            out.append(np.asarray(im.get_array(), dtype=float))
        for patch in ax.patches:
            out.append(np.asarray(patch.get_path().vertices, dtype=float))
        out.append(np.asarray(ax.get_xlim() + ax.get_ylim(), dtype=float))
        texts = [ax.get_title()] + [t.get_text() for t in ax.texts]
        out.append(np.frombuffer("|".join(texts).encode(), dtype=np.uint8).astype(float))
    return out


class ScrubFigure:
    """HTML of precomputed frames with a range control (a kernel-free slider).

    Displaying it in a notebook shows the frames and the control; ``html`` is
    the markup and ``n_bytes`` its size.
    """

    def __init__(self, html: str, values: Sequence, label: str):
        self.html = html
        self.values = list(values)
        self.label = label

    @property
    def n_bytes(self) -> int:
        return len(self.html.encode("utf-8"))

    def _repr_html_(self) -> str:
        return self.html


def scrub(
    fig,
    update: Callable,
    values: Sequence,
    *,
    label: str = "value",
    dpi: float = 72,
    max_bytes: int = MAX_SCRUB_BYTES,
    interval: int = 400,
) -> ScrubFigure:
    """Render ``update(value)`` for each value into a kernel-free scrubbable figure.

    Parameters
    ----------
    fig : matplotlib Figure
        The figure to redraw; ``update`` changes its artists in place.
    update : callable
        ``update(value)`` draws the frame for one value (and should put the
        value in a title, since the control itself shows only a frame number).
    values : sequence
        The parameter values, one frame each (2 to 200 frames).
    label : str
        What the values are (for the reader of ``ScrubFigure.label``).
    dpi : float
        Resolution of the embedded PNG frames; lower it to fit the budget.
    max_bytes : int
        Size budget of the HTML; exceeding it raises ``ValueError``, so a page
        never silently grows past it.

    The figure is closed afterwards so that the notebook does not also show it
    as a static image.
    """
    values = list(values)
    if not 2 <= len(values) <= 200:
        raise ValueError(f"values must hold between 2 and 200 frames; got {len(values)}")
    dpi = check_scalar(dpi, "dpi", low=10, high=300)
    max_bytes = check_scalar(max_bytes, "max_bytes", low=1, integer=True)

    def draw(i):
        update(values[i])
        return []

    old_dpi = fig.dpi
    fig.set_dpi(dpi)
    try:
        anim = animation.FuncAnimation(fig, draw, frames=len(values), interval=interval,
                                       blit=False, repeat=False)
        html = anim.to_jshtml(default_mode="once")
    finally:
        fig.set_dpi(old_dpi)
        plt.close(fig)
    result = ScrubFigure(html, values, label)
    if result.n_bytes > max_bytes:
        raise ValueError(
            f"the scrub figure for {label!r} is {result.n_bytes:,} bytes, over max_bytes = {max_bytes:,}; "
            "lower dpi, the figure size or the number of frames"
        )
    return result


class Table:
    """A small table without pandas: HTML in a notebook, a Markdown table in plain text (``str``).

    ``header`` is a list of column names, ``body`` a list of rows of already formatted cells; the
    caption goes above the HTML table and below the Markdown one.
    """

    def __init__(self, header, body, caption=None):
        self.header = [str(h) for h in header]
        self.body = [[str(c) for c in row] for row in body]
        if any(len(row) != len(self.header) for row in self.body):
            raise ValueError(f"every row of body must have {len(self.header)} cells, like the header")
        self.caption = caption

    def to_markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "|".join(" --- " for _ in self.header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in self.body]
        return "\n".join(lines) + (f"\n\n{self.caption}" if self.caption else "")

    def _repr_html_(self) -> str:
        def esc(text):  # $...$ is maths, as in the Markdown form: written as \\( \\) for the page's MathJax
            return re.sub(r"\$([^$]+)\$", r'<span class="math notranslate nohighlight">\\(\1\\)</span>', html.escape(text))

        head = "".join(f"<th>{esc(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in self.body)
        cap = f"<caption>{esc(self.caption)}</caption>" if self.caption else ""
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __str__(self) -> str:
        return self.to_markdown()

    __repr__ = __str__
