"""The energies chapter's claim cells fail when their sentences would be false (issue 35).

Each test reads a hidden cell of ``book/src/energies.py`` (found by its sentence), executes it in a namespace that
holds facts computed as the chapter computes them, checks that it passes, then flips the facts so that the sentence
would be false and checks that the cell raises ``ClaimError`` naming the sentence.
"""

from pathlib import Path

import jupytext
import numpy as np
import pytest

from probdr_lite.chapters import energies as thesis
from probdr_lite.chapters.objections import THRESHOLDS
from probdr_lite.presentation import prose
from probdr_lite.presentation.prose import ClaimError

CHAPTER = Path(__file__).resolve().parents[2] / "book" / "src" / "energies.py"
N_STEPS = 8
VERDICT = "neither A - I nor plain attention ends closer in most of the constructions with room"
EVERY = "no block moves towards its graph's LE embedding in every construction where the test has room"
PROPOSITION = "autograd's gradient of Phi and the closed form differ by less than the identity threshold"
FIELDS = "the exact block, (A + A^T) X and Sinkhorn attention are gradient fields"


def cell(sentence: str) -> str:
    """The source of the chapter's one code cell that checks ``sentence``."""
    nb = jupytext.read(CHAPTER, fmt="py:percent")
    found = [c.source for c in nb.cells if c.cell_type == "code" and sentence in c.source]
    assert len(found) == 1, f"{len(found)} cells check {sentence!r}"
    return found[0]


def run(source: str, **names) -> None:
    exec(source, {"np": np, "thesis": thesis, "glue": lambda *a: None, "claim": prose.claim, "num": prose.num,
                  "pct": prose.pct, "sci": prose.sci, **names})


def layers(start, end, peak=None):
    """A path of mean cosines over the layers, from ``start`` to ``end`` (through ``peak`` at layer 4)."""
    path = np.linspace(start, end, N_STEPS + 1)
    if peak is not None:
        path[4] = peak
    return path


def robust(ends_by_construction):
    """:func:`thesis.robustness` shaped results, one construction per (start, {variant: path}) item, all above the
    random level and below the ceiling."""
    out = {}
    for k, (start, ends) in enumerate(ends_by_construction):
        le = {v: {"g": {2: path}} for v, path in ends.items()}
        out[float(k + 1)] = {"le": le, "baseline": {"g": {2: {"mean": 0.03, "sd": 0.01}}}}
    return out


#: Four constructions: A - I closer in one (and turning away after its peak), plain attention in one, two ties,
#: and each block away in one: the pattern of the chapter's counts.
REAL = [
    (0.5, {"attention": layers(0.5, 0.60), "diffusion": layers(0.5, 0.70, peak=0.8), "paper": layers(0.5, 0.70)}),
    (0.5, {"attention": layers(0.5, 0.70), "diffusion": layers(0.5, 0.40), "paper": layers(0.5, 0.40)}),
    (0.5, {"attention": layers(0.5, 0.40), "diffusion": layers(0.5, 0.401), "paper": layers(0.5, 0.401)}),
    (0.5, {"attention": layers(0.5, 0.60), "diffusion": layers(0.5, 0.601), "paper": layers(0.5, 0.601)}),
]


def verdict_namespace(constructions):
    rows = thesis.robustness_facts(robust(constructions), n_sd=3.0, rel_tol=thesis.MOVE_TOL)
    return {"rows": rows, "ROBUST_VARIANTS": ("attention", "diffusion", "paper"),
            "ROBUST_KAPPAS": tuple(float(k + 1) for k in range(len(constructions))), "N_STEPS": N_STEPS,
            "move_tol": thesis.MOVE_TOL}


def test_the_thesis_verdict_holds_on_split_counts():
    run(cell(VERDICT), **verdict_namespace(REAL))


def test_the_thesis_verdict_fails_when_a_minus_i_ends_closer_in_most():
    flipped = [(0.5, {"attention": layers(0.5, 0.60), "diffusion": layers(0.5, 0.75, peak=0.8),
                      "paper": layers(0.5, 0.75)})] * 3 + REAL[2:3]
    with pytest.raises(ClaimError, match="neither A - I nor plain attention ends closer in most"):
        run(cell(VERDICT), **verdict_namespace(flipped))


def test_the_thesis_verdict_fails_when_a_block_moves_towards_every_embedding():
    flipped = [REAL[0], (0.5, {"attention": layers(0.5, 0.70), "diffusion": layers(0.5, 0.60),
                               "paper": layers(0.5, 0.40)})]
    with pytest.raises(ClaimError, match="no block moves towards its graph's LE embedding in every construction"):
        run(cell(EVERY), **verdict_namespace(flipped))


def proposition_namespace(gaps_mnist):
    from probdr_lite.presentation.figures.block import make_toy

    toy = make_toy("moons", n=40, noise=0.07, d_q=8)
    gaps_toy = thesis.proposition_gaps(toy.X0, kappas=(1.0, 30.0), betas=(1.0,))
    return {"toy": toy, "gaps_toy": gaps_toy, "gaps_mnist": gaps_mnist, "TOL": THRESHOLDS["identity"]}


def test_the_proposition_claim_holds_and_fails_with_a_gap_above_rounding():
    from probdr_lite.presentation.figures.block import make_toy

    small = make_toy("moons", n=40, noise=0.07, d_q=8).X0
    run(cell(PROPOSITION), **proposition_namespace(thesis.proposition_gaps(small, kappas=(30.0,), betas=(1.0,))))
    with pytest.raises(ClaimError, match="autograd's gradient of Phi and the closed form"):
        run(cell(PROPOSITION), **proposition_namespace(np.array([1e-6])))


def test_the_gradient_field_claim_fails_when_plain_attention_becomes_symmetric():
    """The page's asymmetries (book/energies.html), then plain attention's set to rounding."""
    page = {"attention": 4.5e-04, "diffusion": 2.0e-03, "paper": 2.0e-03, "exact": 1.9e-17, "symmetric": 1.0e-03,
            "energy_transformer": 5.2e-18, "sinkformer": 1.8e-18}
    run(cell(FIELDS), asymmetry=page, TOL=THRESHOLDS["identity"])
    with pytest.raises(ClaimError, match="Sinkhorn attention are gradient fields"):
        run(cell(FIELDS), asymmetry={**page, "attention": 1e-15}, TOL=THRESHOLDS["identity"])
