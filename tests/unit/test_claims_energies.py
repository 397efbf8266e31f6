"""The energies chapter's claim cells fail when their sentences would be false (issue 35).

Each test reads a hidden cell of ``book/src/energies.py`` (found by its sentence), executes it in a namespace that
holds facts computed as the chapter computes them, checks that it passes, then flips the facts so that the sentence
would be false and checks that the cell raises ``ClaimError`` naming the sentence.
"""

import re
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
    with pytest.raises(ClaimError, match=re.escape(VERDICT)):
        run(cell(VERDICT), **verdict_namespace(flipped))


def test_the_thesis_verdict_fails_when_a_block_moves_towards_every_embedding():
    flipped = [REAL[0], (0.5, {"attention": layers(0.5, 0.70), "diffusion": layers(0.5, 0.60),
                               "paper": layers(0.5, 0.40)})]
    with pytest.raises(ClaimError, match=re.escape(EVERY)):
        run(cell(EVERY), **verdict_namespace(flipped))


AWAY = "plain attention moves towards the embedding in most constructions and away in none"


def away_namespace(attention_away=0, k10_moves=("towards", "towards", "towards")):
    """The counts of the constructions with room, shaped as the chapter's, and the two rows of the attention graph
    with its self-loops at kappa = 10 (both in the room), whose blocks move as ``k10_moves`` says."""
    k10 = [{"kappa": 10.0, "graph": "attention", "q": q, "start_above_random": True, "at_ceiling": False,
            "moves": dict(zip(("attention", "diffusion", "paper"), k10_moves))} for q in thesis.QS]
    count = {"attention": {"towards": 14, "away": attention_away, "still": 4 - attention_away},
             "diffusion": {"towards": 13, "away": 4, "still": 1}, "paper": {"towards": 13, "away": 4, "still": 1}}
    return {"count": count, "room": [None] * 18, "rows": k10}


def test_the_away_claims_hold_on_the_pages_counts_and_fail_when_plain_attention_moves_away():
    run(cell(AWAY), **away_namespace())
    with pytest.raises(ClaimError, match=re.escape(AWAY)):
        run(cell(AWAY), **away_namespace(attention_away=1))


def test_the_kappa_10_claim_fails_when_a_block_stays_still_on_the_attention_graph():
    with pytest.raises(ClaimError, match="every block moves towards its embedding at both q"):
        run(cell(AWAY), **away_namespace(k10_moves=("towards", "still", "towards")))


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


#: The page's Jacobian norms (book/energies.html): ||J - J^T||_F and ||J||_F of each update's field.
FIELD_NORMS = {"attention": (55.7, 372.0), "diffusion": (55.7, 85.9), "paper": (55.7, 84.9), "exact": (9e-13, 149.8),
               "symmetric": (19.2, 147.7), "energy_transformer": (8e-13, 396.6), "sinkformer": (3e-13, 184.6)}


def asymmetry_of(norms):
    return {u: {"antisymmetric": a, "jacobian": j, "asymmetry": a / j} for u, (a, j) in norms.items()}


def test_the_gradient_field_claim_fails_when_plain_attention_becomes_symmetric():
    run(cell(FIELDS), asymmetry=asymmetry_of(FIELD_NORMS), TOL=THRESHOLDS["identity"])
    with pytest.raises(ClaimError, match="Sinkhorn attention are gradient fields"):
        run(cell(FIELDS), asymmetry=asymmetry_of({**FIELD_NORMS, "attention": (1e-13, 372.0)}),
            TOL=THRESHOLDS["identity"])


def test_the_gradient_field_claim_fails_when_an_asymmetry_is_small():
    """'Not near a gradient field': an antisymmetric part of 5 % of the Jacobian would make the sentence false."""
    with pytest.raises(ClaimError, match="not near a gradient field"):
        run(cell(FIELDS), asymmetry=asymmetry_of({**FIELD_NORMS, "symmetric": (0.05 * 147.7, 147.7)}),
            TOL=THRESHOLDS["identity"])


def test_the_shared_antisymmetric_part_claim_fails_when_the_parts_differ():
    with pytest.raises(ClaimError, match="have the same antisymmetric part"):
        run(cell(FIELDS), asymmetry=asymmetry_of({**FIELD_NORMS, "diffusion": (50.0, 85.9)}),
            TOL=THRESHOLDS["identity"])


def test_the_jacobian_size_claim_fails_when_the_papers_block_keeps_a_quarter_of_plain_attentions():
    """The sentence says the Jacobians of A - I and the paper's block are under a quarter of plain attention's: a
    paper's block with a third of it (its shift no longer cancelling as much) makes the cell raise."""
    with pytest.raises(ClaimError, match="under a quarter of plain attention's"):
        run(cell(FIELDS), asymmetry=asymmetry_of({**FIELD_NORMS, "paper": (55.7, 372.0 / 3)}),
            TOL=THRESHOLDS["identity"])


STEPS = "the steps of A - I and the paper's block are several times longer than plain"


def test_the_step_lengths_claim_follows_eta():
    """At the book's eta = 0.4 the two longer steps are five times plain attention's; at eta = 0.1 they are not
    several times longer, and the cell raises."""
    from probdr_lite import unrolled as U

    run(cell(STEPS), U=U, ETA=0.4, D_Q=128, BETA=1.0)
    with pytest.raises(ClaimError, match="several times longer"):
        run(cell(STEPS), U=U, ETA=0.1, D_Q=128, BETA=1.0)


FAMILY = "with the pixels' graph the longer step ends lower at both q"


def family_namespace(pixels_end_q10):
    """The step family's numbers shaped as the chapter's (two steps; the attention graph at the random level,
    the pixels' graph well above it), with plain attention's step ending at 0.666 on the pixels' graph at q = 10
    and A - I's at ``pixels_end_q10``."""
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.88}
    base = {"attention": {2: {"mean": 0.024, "sd": 0.011}, 10: {"mean": 0.060, "sd": 0.005}},
            "pixels": {2: {"mean": 0.026, "sd": 0.009}, 10: {"mean": 0.058, "sd": 0.004}}}
    ends = {0.8: {"attention": {2: 0.018, 10: 0.082}, "pixels": {2: 0.818, 10: 0.666}},
            4.0: {"attention": {2: 0.026, 10: 0.104}, "pixels": {2: 0.744, 10: pixels_end_q10}},
            3.88: {"attention": {2: 0.026, 10: 0.104}, "pixels": {2: 0.745, 10: 0.558}}}
    starts = {"attention": {2: 0.016, 10: 0.061}, "pixels": {2: 0.793, 10: 0.598}}
    family_le = {s: {g: {q: np.array([starts[g][q], e[g][q]]) for q in (2, 10)} for g in e} for s, e in ends.items()}
    return {"family_le": family_le, "steps": steps, "baseline": base, "family_gap": {"diffusion": 1e-14, "paper": 1e-14},
            "U": type("U", (), {"STEP_FAMILY": ("attention", "diffusion", "paper")}), "TOL": THRESHOLDS["identity"],
            "ETA": 0.4, "D_Q": 128, "BETA": 1.0}


def test_the_step_family_claims_hold_on_the_pages_numbers_and_fail_on_a_tie():
    run(cell(FAMILY), **family_namespace(0.556))
    with pytest.raises(ClaimError, match="the longer step ends lower at both q"):
        run(cell(FAMILY), **family_namespace(0.666 - 0.5 * thesis.MOVE_TOL * 0.598))  # within the tolerance: a tie
