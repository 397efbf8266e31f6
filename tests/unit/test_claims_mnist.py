"""The MNIST chapter's claims fail when their numbers would make the sentence false.

Each test takes a claim cell from ``book/src/mnist_at_init.py`` (found by its sentence), runs it on rows shaped as the
chapter's own (small, built here with the chapter's layer-by-layer numbers, and the chapter's facts functions), and
checks that it passes; then it feeds numbers for which the sentence is false and checks that the cell raises
``ClaimError`` naming that sentence.
"""

import re
from pathlib import Path

import jupytext
import numpy as np
import pytest

from probdr_lite.chapters import mnist_at_init as MT
from probdr_lite.presentation.prose import ClaimError, claim, num, pct, sci, signed

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "mnist_at_init.py"
L = MT.PAPER.n_layers

#: The NMI over the k-means seeds per layer (low, high), the k-NN accuracy, silhouette and between/within ratio of
#: the paper's block on the 10,000 images, as the chapter shows them (rounded).
NMI_RANGES = [(0.43, 0.50), (0.50, 0.53), (0.53, 0.56), (0.55, 0.56), (0.558, 0.561), (0.55, 0.56), (0.52, 0.54),
              (0.49, 0.51), (0.47, 0.485)]
KNN = [0.947, 0.940, 0.928, 0.903, 0.873, 0.842, 0.810, 0.780, 0.754]
SIL = [0.052, 0.074, 0.099, 0.124, 0.137, 0.130, 0.120, 0.110, 0.100]
BW = [0.767, 0.909, 1.153, 1.455, 1.756, 1.95, 2.10, 2.25, 2.36]


#: The NMI ranges of the paper's block on the 2,000 images (better than layer 0 after eight blocks there) and on the
#: 1,000 images of the panel (the runs after four blocks only just clear layer 0's highest).
NMI_RANGES_2K = [(0.406, 0.444), (0.408, 0.447), (0.448, 0.466), (0.454, 0.471), (0.444, 0.481), (0.454, 0.471),
                 (0.468, 0.502), (0.454, 0.477), (0.4515, 0.479)]
NMI_RANGES_1K = [(0.444, 0.4756), (0.447, 0.472), (0.465, 0.490), (0.480, 0.510), (0.4758, 0.528), (0.460, 0.485),
                 (0.468, 0.495), (0.456, 0.497), (0.446, 0.478)]


def rows(nmi_ranges=NMI_RANGES, bw=BW, variant="paper", n=10_000):
    return [{"variant": variant, "n": n, "layer": t, "knn_accuracy": KNN[t], "silhouette": SIL[t],
             "between_within": bw[t], "kmeans_nmi": (lo + hi) / 2, "kmeans_nmi_sd": (hi - lo) / 4,
             "kmeans_nmi_min": lo, "kmeans_nmi_max": hi} for t, (lo, hi) in enumerate(nmi_ranges)]


def claim_cell(sentence):
    """The source of the chapter's one code cell whose claims include ``sentence``."""
    cells = [c.source for c in jupytext.read(CHAPTER, fmt="py:percent").cells
             if c.cell_type == "code" and "claim(" in c.source and sentence in c.source]
    assert len(cells) == 1, f"{len(cells)} claim cells name {sentence!r}"
    return cells[0]


def namespace(**more):
    ns = {"np": np, "claim": claim, "glue": lambda name, text: None, "num": num, "pct": pct, "sci": sci,
          "signed": signed, "pick": MT.pick, "nmi_facts": MT.nmi_facts, "PAPER": MT.PAPER, "L": L,
          "Xs": [None] * (L + 1), "labels": None}
    ns.update(more)
    return ns


def knn_seeds(first=(0.945, 0.948), last=(0.752, 0.756)):
    """A stand-in for knn_over_seeds: the k-NN accuracy with five fold seeds, spanning ``first`` at layer 0 and
    ``last`` at the last layer."""
    spans = iter([first, last])
    return lambda X, labels: np.linspace(*next(spans), 5)


VERDICT = "after eight blocks the NMI is neither better nor worse than at layer 0"
BEST = "at the best number of blocks, before the last, the NMI is better than at layer 0"
KNN_FALLS = "the k-NN accuracy falls, by far more than the folds' seed moves it"


def run_verdict(nmi_ranges=NMI_RANGES, knn=None):
    exec(claim_cell(VERDICT), namespace(rows_full=rows(nmi_ranges), knn_over_seeds=knn or knn_seeds()))


def test_the_verdict_cell_passes_with_the_chapters_numbers():
    run_verdict()


def test_the_verdict_fails_when_eight_blocks_cluster_better():
    better = NMI_RANGES[:L] + [(0.51, 0.52)]  # layer 8's lowest run above layer 0's highest
    with pytest.raises(ClaimError, match=VERDICT):
        run_verdict(better)


def test_the_verdict_fails_when_eight_blocks_cluster_worse():
    worse = NMI_RANGES[:L] + [(0.40, 0.42)]
    with pytest.raises(ClaimError, match=VERDICT):
        run_verdict(worse)


def test_the_best_layer_claim_fails_when_its_range_overlaps_layer_0():
    overlapping = [NMI_RANGES[0]] + [(0.45, 0.52)] * 4 + [(0.44, 0.48)] * 4  # the best layer overlaps layer 0's range
    with pytest.raises(ClaimError, match=BEST):
        run_verdict(overlapping)


def test_the_knn_claim_fails_when_the_fold_seeds_move_it_as_much():
    with pytest.raises(ClaimError, match=KNN_FALLS):
        run_verdict(knn=knn_seeds(first=(0.75, 0.948), last=(0.752, 0.80)))


BETTER = "at each of these layers the whole range of runs lies above layer 0's; no layer's lies below it"


def run_better(nmi_ranges=NMI_RANGES):
    from probdr_lite.metrics import METRICS

    exec(claim_cell(BETTER), namespace(nmi=MT.nmi_facts(rows(nmi_ranges), "paper"), METRICS=METRICS,
                                       rule_p_value=MT.rule_p_value))


def test_the_better_layers_cell_passes_with_the_chapters_numbers():
    run_better()


def test_the_better_layers_claim_fails_when_a_layer_between_them_overlaps_layer_0():
    gap = list(NMI_RANGES)
    gap[3] = (0.49, 0.56)  # layer 3's lowest run below layer 0's highest: layers 1-2 and 4-6 better, 3 not
    with pytest.raises(ClaimError, match=re.escape(BETTER)):
        run_better(gap)


def test_the_better_layers_claim_fails_when_a_layer_is_worse():
    worse = list(NMI_RANGES)
    worse[7] = (0.40, 0.42)
    with pytest.raises(ClaimError, match=re.escape(BETTER)):
        run_better(worse)


TIED = "after seven and after eight blocks the ranges overlap layer 0's"


def test_the_tied_layers_claim_fails_when_seven_blocks_cluster_better():
    """The page reads "after 7 and after eight blocks: neither"; a layer 7 whose runs all lie above layer 0's would
    make the better layers 1 to 7 and the sentence false."""
    better7 = list(NMI_RANGES)
    better7[7] = (0.51, 0.53)
    with pytest.raises(ClaimError, match=re.escape(TIED)):
        run_better(better7)


SUBSET = "after eight blocks the 2,000 images have the smaller between/within ratio"


def run_subset(bw_sub, shares=(0.37, 0.12), nmi_sub=NMI_RANGES_2K):
    share = iter(shares)
    rows_full = rows()
    sub = rows(nmi_sub, bw=bw_sub, n=2000)
    for r in sub:
        r["knn_accuracy"] -= 0.07  # the subset's k-NN accuracy, 0.873 at layer 0 against 0.947
    exec(claim_cell(SUBSET), namespace(rows_var=sub, rows_full=rows_full, X0_sub=None, X0=None,
                                       self_attention_share=lambda X: next(share),
                                       knn_full=MT.pick(rows_full, "knn_accuracy", variant="paper"),
                                       bw_full=MT.pick(rows_full, "between_within", variant="paper")))


def test_the_subset_cell_passes_with_the_chapters_numbers():
    run_subset([b * 0.65 for b in BW])


def test_the_subset_claim_fails_when_the_subset_clumps_more():
    with pytest.raises(ClaimError, match=SUBSET):
        run_subset([b * 1.1 for b in BW])


DEPENDS = "on the 2,000 images the paper's block clusters better after eight blocks by the rule"


def test_the_verdict_depends_on_n_claim_fails_when_the_2000_images_agree_with_the_10000():
    with pytest.raises(ClaimError, match=DEPENDS):
        run_subset([b * 0.65 for b in BW], nmi_sub=NMI_RANGES_2K[:L] + [(0.43, 0.46)])


PANEL = "on the 1,000 images the lowest run after the 10,000 images' best number of blocks"


def run_panel(nmi_1k=NMI_RANGES_1K):
    """The panel's cell, which measures layer 0, the 10,000 images' best layer (4) and the last on 1,000 images."""
    rows_1k = rows(nmi_1k, n=1000)
    nmi = MT.nmi_facts(rows(), "paper")
    assert nmi["best"] == 4
    measured = lambda path, labels, variant: [dict(rows_1k[t], layer=i) for i, t in enumerate((0, 4, L))]  # noqa: E731
    exec(claim_cell(PANEL), namespace(layer_rows=measured, run_blocks=lambda *args: [None] * (L + 1), X0_1k=None,
                                      labels_1k=None, nmi=nmi))


def test_the_panel_cell_passes_with_the_chapters_numbers():
    run_panel()


def test_the_panel_claim_fails_when_four_blocks_clear_layer_0_by_far():
    clear = list(NMI_RANGES_1K)
    clear[4] = (0.50, 0.53)
    with pytest.raises(ClaimError, match=re.escape(PANEL)):
        run_panel(clear)


def test_the_panel_claim_fails_when_four_blocks_fall_just_short_of_layer_0():
    """The page says the rule reads a gain, by the smallest of margins: runs that miss by as little fail it."""
    short = list(NMI_RANGES_1K)
    short[4] = (0.4754, 0.528)  # lowest run 0.0002 below layer 0's highest
    with pytest.raises(ClaimError, match="the rule reads a gain after that many blocks"):
        run_panel(short)


def test_the_panel_claim_fails_when_eight_blocks_are_told_apart():
    apart = NMI_RANGES_1K[:L] + [(0.40, 0.43)]
    with pytest.raises(ClaimError, match="on the 1,000 images the ranges overlap again after eight blocks"):
        run_panel(apart)


ENDS = "at the small end of kappa's range the points gather in one spot"


def ends_cell(small, large):
    """The chapter's claims about the ends of kappa's range, on kappa_ends's numbers ``small`` and ``large``."""
    lo, hi = MT.SLIDERS["kappa"]["low"], MT.SLIDERS["kappa"]["high"]
    exec(claim_cell(ENDS), namespace(kappa_ends=lambda X, labels: {lo: small, hi: large}, SLIDERS=MT.SLIDERS,
                                     X0_1k=None, labels_1k=None))


#: The page's numbers (1,000 images): the picture shrinks to a millionth, the ratio moves by 3 %; at the narrow
#: end an image moves by a ten-millionth of the spread.
SMALL = {"spread": 4.8e-6, "ratio": 1.033, "moved": 1.09}
LARGE = {"spread": 1.0, "ratio": 1.0000000013, "moved": 1.7e-7}


def test_the_kappa_ends_claims_pass_with_the_chapters_numbers():
    ends_cell(SMALL, LARGE)


def test_the_small_end_claim_fails_when_the_ratio_changes():
    with pytest.raises(ClaimError, match="the between/within ratio hardly changes"):
        ends_cell({**SMALL, "ratio": 1.2}, LARGE)


def test_the_large_end_claim_fails_when_images_move():
    with pytest.raises(ClaimError, match="at the large end of kappa's range nothing moves at all"):
        ends_cell(SMALL, {**LARGE, "moved": 0.05})
