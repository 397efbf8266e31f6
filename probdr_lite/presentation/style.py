"""One look for the whole book: the label and colour of every variant and the label of every clustering number.

Two families of variants appear in the book, and their names overlap, so they are kept apart:

- **block variants** (the transformer-block, MNIST and objections chapters;
  :data:`probdr_lite.unrolled.BLOCK_VARIANTS`): the update *direction* D of an untrained block, X <- Pi(X + eta D).
  Their labels state D.
- **trained-attention variants** (the trained-transformers chapter; ``probdr_lite.experiments``): the attention
  *operator* inside a trained multi-head transformer. Their labels state the operator.

"diffusion" is A - I in both families, "attention" is plain softmax attention in both, and "symmetric" is
A_sym - I = D^(-1/2) E D^(-1/2) - I in both, so each keeps one colour across the book; the trained arm without
the "- I" (A_sym alone) is "sym-normalised".

Colours are the Okabe-Ito palette (Okabe & Ito, 2008), distinguishable under the common colour-vision
deficiencies; the paper's block is black, as the reference line. Yellow is left out (too pale on white).

Use :func:`variant_style` (``family`` is ``"block"`` or ``"trained"``) or the two tables directly.

Every figure builder gives its figure a one-sentence description with :func:`describe` (defined in
:mod:`probdr_lite.presentation.plotting`, the presentation layer's base, and named here with the rest of the book's look). The PNG the figure is saved
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

from probdr_lite._validation import check_choice
from probdr_lite.metrics import METRICS
from probdr_lite.presentation.plotting import CLASS_COLOURS, describe, smallest_text_points, smallest_tick_points

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


#: One colour per MNIST class (Petroff's ten-colour cycle), the same in every figure and live figure of the
#: book: :data:`probdr_lite.presentation.plotting.CLASS_COLOURS` (defined there, the lower layer), named here with the rest.


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
    styles = VARIANT_STYLE[check_choice(family, "family", VARIANT_STYLE)]
    return styles[check_choice(name, f"{family} variant", styles)]


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

