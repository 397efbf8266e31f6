"""The energies chapter's tables, figures and sentences: every word follows from the numbers, so each test feeds
numbers for which a word would be false and checks that it is not used."""

import matplotlib
import numpy as np
import pytest

from probdr_lite import energies as E
from probdr_lite.figures import energies as F
from probdr_lite.figures.prose import sci

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def entry(deltas):
    d = np.asarray(deltas, dtype=float)
    return {"values": np.concatenate([[0.0], np.cumsum(d)]), "deltas": d, "n_rise": int((d > 0).sum()),
            "n_fall": int((d < 0).sum())}


def harness(flip=None):
    """Every block moves every energy its reading's way, except ``flip`` = (reading, variant)."""
    out = {}
    for r in E.READINGS:
        out[r] = {}
        for v in VARIANTS:
            d = [E.SENSE[r] * 1.0] * 8
            if flip == (r, v):
                d[3] = -d[3]
            out[r][v] = entry(d)
    return out


def alignment(exact_full=("exact",), exact_tangent=("exact",)):
    return {r: {v: {"cosine": 1.0 if v in exact_full else 0.9, "tangent_cosine": 1.0 if v in exact_tangent else 0.95}
                for v in VARIANTS} for r in E.READINGS}


def markdown_rows_are_whole(table):
    lines = table.to_markdown().split("\n\n")[0].splitlines()
    n = lines[0].count("|")
    assert all(line.count("|") == n for line in lines), "a cell holds a '|' that splits the row"


def test_exact_for_and_alignment_table():
    a = alignment(("diffusion",), ("attention", "diffusion", "paper"))
    ex = F.exact_for(a, "hopfield")
    assert ex == {"full": ["diffusion"], "tangent": ["attention", "diffusion", "paper"]}
    a["hopfield"]["diffusion"]["cosine"] = 1.0 - 1e-6  # not exact to the identity threshold
    assert F.exact_for(a, "hopfield")["full"] == []
    t = F.alignment_table(alignment(("diffusion",), ("attention", "diffusion")))
    assert "after LayerNorm also plain attention" in t.to_markdown()
    markdown_rows_are_whole(t)
    with pytest.raises(ValueError, match="alignment"):
        F.exact_for({}, "phi")


def test_harness_text_follows_the_counts():
    text = F.harness_text(harness())
    assert "each of the 5 blocks moves each of the 8 energies" in text and "cannot tell" in text
    text = F.harness_text(harness(("crate", "exact")))
    assert "cannot tell" not in text and "7 of the 8 energies" in text
    assert "only plain attention, $A - I$, the paper's block and the symmetric block move it" in text
    t = F.harness_table(harness(("crate", "exact")))
    assert "raised 1/8, lowered 7/8" in t.to_markdown() and "lowered 8/8" in t.to_markdown()
    markdown_rows_are_whole(t)


def test_proposition_and_gradient_field_texts():
    assert "same to rounding" in F.proposition_text({"a": 1e-14, "b": 3e-15})
    bad = F.proposition_text({"a": 1e-14, "b": 1e-6})
    assert "same to rounding" not in bad and "fails" in bad
    text = F.gradient_field_text({"attention": 1e-3, "exact": 1e-17})
    assert "field of the exact block is a gradient field: its Jacobian is symmetric" in text
    assert "Those of plain attention are not" in text
    assert "None of the updates" in F.gradient_field_text({"attention": 1e-3})
    t = F.gradient_field_table({"attention": 1e-3, "exact": 1e-17})
    assert t.body[0][-1] == "no" and t.body[1][-1] == "yes"
    markdown_rows_are_whole(t)


def thesis_numbers(att_end, pix_end, sd=0.01):
    le, base = {}, {}
    for v in ("attention", "diffusion"):
        le[v] = {"attention": {q: np.array([0.02, att_end[v]]) for q in (2, 10)},
                 "pixels": {q: np.array([0.6, pix_end[v]]) for q in (2, 10)}}
    for g in ("attention", "pixels"):
        base[g] = {q: {"mean": 0.02, "sd": sd} for q in (2, 10)}
    erank = {"attention": np.array([80.0, 60.0]), "diffusion": np.array([80.0, 50.0])}
    return le, base, erank


def test_thesis_text_follows_the_numbers():
    le, base, er = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.5})
    text = F.thesis_text(le, base, er, {"attention": np.full(10, 1e-4)}, np.ones(10))
    assert "level of a random subspace" in text
    assert "plain attention moves towards it, $A - I$ away from it" in text
    assert "close to a set of separate points" in text and "$A - I$ fastest" in text
    le, base, er = thesis_numbers({"attention": 0.9, "diffusion": 0.95}, {"attention": 0.6, "diffusion": 0.6})
    text = F.thesis_text(le, base, er, {"attention": np.full(10, 0.5)}, np.full(10, 80.0))
    assert "level of a random subspace" not in text and "far from 1" not in text
    assert "no block moves towards it" in text and "the graph is connected" in text
    closing = F.closing_text(harness(), {v: (1e-17 if v == "exact" else 1e-3) for v in VARIANTS},
                             alignment(), le, base)
    assert "as the title claims" in closing and "only the exact block is a gradient field" in closing
    le2, base2, _ = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.5})
    closing = F.closing_text(harness(("phi", "paper")), {v: 1e-3 for v in VARIANTS}, alignment(), le2, base2)
    assert "not borne out" in closing and "None of the 5 blocks" in closing and "do not all move" in closing
    assert "moves at least as far as $A - I$" in closing
    t = F.thesis_table(le, base, er)
    assert len(t.body) == 3 and t.body[-1][0] == "random subspace"
    markdown_rows_are_whole(t)


def test_spectrum_text_and_figure():
    lam = np.linspace(0.0, 1.0, 50)
    text = F.spectrum_text(lam, eta=0.4)
    assert "removed in one step" not in text and "over-smoothing" in text
    assert "removed in one step" in F.spectrum_text(np.linspace(0.0, 1.5, 50), eta=0.4)  # 1 / h = 1.25
    fig = F.spectrum_figure(lam)
    assert len(fig.axes) == 4  # two panels and their histogram twins
    with pytest.raises(ValueError, match="lam"):
        F.spectrum_figure(np.array([]))


def test_filter_note():
    note = F.filter_note(np.array([0.0, 0.5, 1.0]), eta=0.4)
    assert "$\\lambda = 1.00$" in note and "under $A - I$" in note
    assert f"keeps {sci(0.2 ** 8)} of its size under $A - I$" in note  # 1 - h lambda = 0.2 at h = 0.8


def test_differential_text():
    assert "attends only to itself" in F.differential_text([0.1, 1e-7], [100.0, 1000.0])
    assert "not yet the identity" in F.differential_text([0.1, 0.05], [100.0, 1000.0])
    with pytest.raises(ValueError, match="kappa_2"):
        F.differential_text([0.1], [100.0, 1000.0])


def test_energy_path_figure_and_energy_readings_table():
    h = harness()
    fig = F.energy_path_figure(h)
    assert sum(ax.axison for ax in fig.axes) == len(E.READINGS)
    t = F.energy_readings_table(h, alignment(), {"exact": 1e-17, "attention": 1e-3}, "note", "diff note")
    assert [row[0] for row in t.body] == [F.READING_NAMES[r] for r in E.READINGS + E.FILTER_READINGS]
    assert t.body[0][2] == "the exact block" and "every block" in t.body[0][4]
    markdown_rows_are_whole(t)


def test_thesis_figure():
    le, base, _ = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.5})
    fig = F.thesis_figure(le, base, qs=(2, 10))
    assert len(fig.axes) == 4


def test_step_family_figure_marks_each_block_on_its_own_curve():
    """One panel per graph; each block's marker sits on the curve at its own step (the value of that path)."""
    _, base, _ = thesis_numbers({"attention": 0.0, "diffusion": 0.0}, {"attention": 0.0, "diffusion": 0.0})
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.88}
    grid = sorted({0.1, 1.0, 10.0} | set(steps.values()))
    family = {s: {g: {q: np.array([0.0, 0.1 * q + np.log(s) / 10]) for q in (2, 10)} for g in base} for s in grid}
    fig = F.step_family_figure(family, steps, base)
    assert len(fig.axes) == 2
    for ax, g in zip(fig.axes, base):
        markers = [(line.get_xdata()[0], line.get_ydata()[0]) for line in ax.get_lines() if line.get_marker() == "o"]
        assert len(markers) == 2 * len(steps)  # each block at q = 2 and at q = 10
        for s in steps.values():
            assert any(x == s and y == family[s][g][2][-1] for x, y in markers), (g, s)


def test_objectives_text_says_when_the_graph_change_undoes_the_steps():
    def e(v):
        return {"values": np.array(v, float), "deltas": np.ones(len(v) - 1), "n_rise": len(v) - 1, "n_fall": 0}

    h = {"ple": {"attention": e([-7.0, -8.0]), "diffusion": e([-7.0, -3.0])},
         "phi": {"attention": e([-5.0, 26.0]), "diffusion": e([-5.0, 41.0])}}
    text = F.objectives_text(h)
    assert "plain attention -7 → -8 (falls)" in text and "$A - I$ -7 → -3 (rises)" in text
    assert "For plain attention every step raises" in text and "For $A - I$" not in text
    h["ple"]["attention"] = e([-7.0, -6.0])
    assert "undoes" not in F.objectives_text(h)
    with pytest.raises(ValueError, match="phi"):
        F.objectives_text({"ple": h["ple"]})


def test_retention_words_follow_the_factor():
    from probdr_lite.figures.energies import RETENTION_FACTOR, relation, retention_facts

    f = RETENTION_FACTOR
    assert relation(f * 1.01, 1.0) == "above" and relation(1.0, f * 1.01) == "below"
    assert relation(f * 0.99, 1.0).startswith("within") and relation(1.0, f * 0.99).startswith("within")
    with pytest.raises(ValueError, match="positive"):
        relation(0.0, 1.0)
    r = {"diffusion": {"top": {"measured": 1e-2, "predicted": 1e-6}, "middle": {"measured": 0.1, "predicted": 0.15},
                       "n_modes": 50, "n_steps": 8},
         "attention": {"top": {"measured": 1.5e-2, "predicted": 1e-2}, "middle": {"measured": 0.2, "predicted": 0.6},
                       "n_modes": 50, "n_steps": 8}}
    facts = retention_facts(r)
    assert facts["diffusion_top_rel"] == "above" and facts["diffusion_top_ratio"] == pytest.approx(1e4)
    assert facts["attention_middle_rel"] == "below" and facts["diffusion_middle_rel"].startswith("within")
    assert facts["top_rel"].startswith("within") and facts["n_steps"] == 8
