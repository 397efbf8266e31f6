"""The energies chapter's tables and figures: each cell follows from the numbers, so each test feeds numbers for
which a cell would be false and checks that it is not shown. The facts behind the chapter's sentences are tested in
test_energies_facts.py."""

import matplotlib
import numpy as np
import pytest

from probdr_lite import energies as E
from probdr_lite.figures import energies as F

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .test_energies_facts import VARIANTS, alignment, harness  # noqa: E402  (the synthetic readings, shared)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


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
    t = F.alignment_table(alignment(("diffusion",), ("attention", "diffusion")), caption="the chapter's caption")
    assert "after LayerNorm also plain attention" in t.to_markdown() and t.caption == "the chapter's caption"
    markdown_rows_are_whole(t)
    with pytest.raises(ValueError, match="alignment"):
        F.exact_for({}, "phi")


def test_harness_table_counts_the_steps():
    t = F.harness_table(harness([("crate", "exact")]))
    assert "raised 1/8, lowered 7/8" in t.to_markdown() and "lowered 8/8" in t.to_markdown()
    assert t.caption is None
    markdown_rows_are_whole(t)


def test_gradient_field_table():
    t = F.gradient_field_table({"attention": 1e-3, "exact": 1e-17}, caption="a caption")
    assert t.body[0][-1] == "no" and t.body[1][-1] == "yes" and t.caption == "a caption"
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


def test_thesis_table():
    le, base, er = thesis_numbers({"attention": 0.9, "diffusion": 0.95}, {"attention": 0.6, "diffusion": 0.6})
    t = F.thesis_table(le, base, er)
    assert len(t.body) == 3 and t.body[-1][0] == "random subspace"
    assert t.body[0][1:3] == ["0.020 → 0.900", "0.020 → 0.900"] and t.body[1][-1] == "80.0 → 50.0"
    markdown_rows_are_whole(t)


def test_spectrum_figure():
    lam = np.linspace(0.0, 1.0, 50)
    fig = F.spectrum_figure(lam)
    assert len(fig.axes) == 4  # two panels and their histogram twins
    with pytest.raises(ValueError, match="lam"):
        F.spectrum_figure(np.array([]))


def test_energy_path_figure_and_readings_table():
    h = harness()
    fig = F.energy_path_figure(h)
    assert sum(ax.axison for ax in fig.axes) == len(E.READINGS)
    rows = E.READINGS + E.FILTER_READINGS
    predicts = {r: f"predicts {r}" for r in rows}
    measured = {r: f"measured {r}" for r in rows}
    notes = {r: f"exact {r}" for r in E.FILTER_READINGS}
    t = F.energy_readings_table(h, alignment(("exact",), ("exact", "diffusion")), predicts, measured, notes,
                                caption="c")
    assert [row[0] for row in t.body] == [F.READING_NAMES[r] for r in rows]
    assert t.body[0][1] == F.ENERGY_TEX["ple"] + " (raised)" and t.body[2][1].endswith("(lowered)")
    assert t.body[0][2] == "the exact block (after LayerNorm also $A - I$)"
    assert [row[3] for row in t.body] == [predicts[r] for r in rows]
    assert [row[4] for row in t.body] == [measured[r] for r in rows]
    assert t.body[-1][2] == "exact diff_transformer" and t.body[-2][1] == F.ENERGY_TEX["gfsa"] and t.caption == "c"
    markdown_rows_are_whole(t)
    del measured["grand"]
    with pytest.raises(ValueError, match="missing \\['grand'\\]"):
        F.energy_readings_table(h, alignment(), predicts, measured, notes)
    with pytest.raises(ValueError, match="exact_notes"):
        F.energy_readings_table(h, alignment(), predicts, {**measured, "grand": "x"}, {})


def test_robustness_table():
    row = {"kappa": 30.0, "graph": "pixels", "q": 2, "start": 0.5, "ends": {"attention": 0.6, "diffusion": 0.4},
           "moves": {"attention": "towards", "diffusion": "away"}, "random": 0.02, "random_sd": 0.01}
    t = F.robustness_table([row], caption="c")
    assert t.body == [["30", "k-NN of the pixels", "2", "0.500", "0.020 ± 0.010", "0.600 ↑", "0.400 ↓"]]
    assert t.caption == "c"


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
