"""One look for the whole book: the label and colour of every variant and the label of every clustering number.

Two families of variants appear in the book, and their names overlap, so they are kept apart:

- **block variants** (chapters 4, 5 and 7; :data:`probdr_lite.unrolled.BLOCK_VARIANTS`): the update *direction*
  D of an untrained block, X <- Pi(X + eta D). Their labels state D.
- **trained-attention variants** (chapter 6; ``probdr_lite.experiments``): the attention *operator* inside a
  trained multi-head transformer. Their labels state the operator.

"diffusion" is A - I in both families, "attention" is plain softmax attention in both, and "symmetric" is
A_sym - I = D^(-1/2) E D^(-1/2) - I in both, so each keeps one colour across the book; the trained arm without
the "- I" (A_sym alone) is "sym-normalised".

Colours are the Okabe-Ito palette (Okabe & Ito, 2008), distinguishable under the common colour-vision
deficiencies; the paper's block is black, as the reference line. Yellow is left out (too pale on white).

Use :func:`variant_style` (``family`` is ``"block"`` or ``"trained"``) or the two tables directly.

Every figure builder gives its figure a one-sentence description with :func:`describe`. The PNG the figure is saved
as (in a notebook, on the book's site, with ``savefig``) then carries it as its ``Description``, with the height in
pixels of its smallest tick label (``probdr:tick-px``) and of its smallest text (``probdr:text-px``): the book's site
uses the first as the figure's alt text and the others to keep its text readable (``tools/sphinx_local_assets.py``).

The ten MNIST classes take :data:`CLASS_COLOURS`, M. A. Petroff's ten-colour cycle (arXiv 2107.02270, chosen
for colour-vision deficiencies; matplotlib ships it as the ``petroff10`` style), in place of matplotlib's tab10,
whose red and green classes merge for protanopes and deuteranopes. ``tests/unit/test_style.py`` checks both
palettes under simulated protanopia, deuteranopia and tritanopia.
"""

from __future__ import annotations

from typing import NamedTuple

from probdr_lite.metrics import METRICS

__all__ = [
    "describe",
    "smallest_text_points",
    "smallest_tick_points",
    "OKABE_ITO",
    "CLASS_COLOURS",
    "VariantStyle",
    "VARIANT_STYLE",
    "variant_style",
    "variant_label",
    "variant_colour",
    "METRIC_LABELS",
]

#: The Okabe-Ito palette, by name.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}


#: One colour per MNIST class (Petroff's ten-colour cycle), the same in every figure and live figure of the book.
CLASS_COLOURS = ("#3f90da", "#ffa90e", "#bd1f01", "#94a4a2", "#832db6",
                 "#a96b59", "#e76300", "#b9ac70", "#717581", "#92dadd")


class VariantStyle(NamedTuple):
    """How a variant is named and drawn: ``label`` states what it computes, ``colour`` is a hex colour."""

    label: str
    colour: str


#: The Okabe-Ito colour of each variant name. One table for both families, so that a name that means the same
#: update in both ("attention", "diffusion", "symmetric") has the same colour in every chapter; "full" (block
#: family) and "sym-normalised" (trained family) never share a figure.
_COLOUR_NAME = {"attention": "blue", "diffusion": "vermillion", "paper": "black", "exact": "bluish green",
                "symmetric": "reddish purple", "full": "orange", "gated": "sky blue", "sym-normalised": "orange"}

#: What each variant computes, per family: the update direction D of a block, or the operator of a trained head.
_LABELS = {
    "block": {"attention": "attention: 2 A X", "diffusion": "diffusion: 2 (A - I) X",
              "paper": "paper: 2 (A - I) X + 2 X / (d_q + β)", "exact": "exact: 2 C⁻¹ X - (L + Lᵀ) X",
              "symmetric": "symmetric: 2 (A_sym - I) X", "full": "full gradient"},
    "trained": {"attention": "attention: A", "diffusion": "diffusion: A − I", "gated": "gated: A − gI",
                "sym-normalised": "sym-normalised: A_sym", "symmetric": "symmetric: A_sym − I"},
}

#: {family: {name: VariantStyle}} for the whole book; family "block" (update directions of untrained blocks)
#: or "trained" (attention operators of trained transformers).
VARIANT_STYLE = {family: {name: VariantStyle(label, OKABE_ITO[_COLOUR_NAME[name]]) for name, label in labels.items()}
                 for family, labels in _LABELS.items()}


def variant_style(name: str, family: str = "block") -> VariantStyle:
    """The :class:`VariantStyle` of variant ``name`` in ``family`` ("block" or "trained")."""
    if family not in VARIANT_STYLE:
        raise ValueError(f"family must be one of {tuple(VARIANT_STYLE)}; got {family!r}")
    styles = VARIANT_STYLE[family]
    if name not in styles:
        raise ValueError(f"variant must be one of {tuple(styles)} (family {family!r}); got {name!r}")
    return styles[name]


def variant_label(name: str, family: str = "block") -> str:
    return variant_style(name, family).label


def variant_colour(name: str, family: str = "block") -> str:
    return variant_style(name, family).colour


#: Labels of the clustering numbers of :mod:`probdr_lite.metrics` (settings: ``probdr_lite.metrics.METRICS``).
METRIC_LABELS = {
    "knn_accuracy": f"{METRICS.n_neighbors}-NN accuracy ({METRICS.cv}-fold CV)",
    "silhouette": "silhouette of the classes",
    "between_within": "between/within-class ratio",
    "kmeans_nmi": "NMI of k-means (k = 10)",
}


def smallest_text_points(fig):
    """The font size, in points, of the smallest visible text of ``fig`` (titles, labels, ticks, legends, notes),
    or None if it has none; like :func:`smallest_tick_points`, after laying the figure out."""
    from matplotlib.text import Text

    fig.draw_without_rendering()
    sizes = [float(t.get_fontsize()) for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]
    return min(sizes) if sizes else None


def smallest_tick_points(fig):
    """The font size, in points, of the smallest visible tick label of ``fig`` (None if it has none).

    The tick labels are only set when a figure is drawn, so the figure is laid out first (without rendering).
    """
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
    smallest tick label as ``probdr:tick-px`` (see the module docstring). Returns ``fig``, so that a builder can end
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
            tick, text = smallest_tick_points(fig), smallest_text_points(fig)
            if tick is not None:
                meta["probdr:tick-px"] = f"{tick * dpi / 72:.2f}"
            if text is not None:
                meta["probdr:text-px"] = f"{text * dpi / 72:.2f}"
            kwargs["metadata"] = meta
        return original(filename, *args, **kwargs)

    canvas.print_figure = print_figure
    canvas._probdr_describes = fig
    return fig
