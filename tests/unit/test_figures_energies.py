"""The energies chapter's tables and figures: each cell follows from the numbers, so each test feeds numbers for
which a cell would be false and checks that it is not shown. The facts behind the chapter's sentences are tested in
test_energies_facts.py."""

import matplotlib
import numpy as np
import pytest

from probdr_lite.chapters import energies as E
from probdr_lite.presentation.figures import readings as F

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .test_energies_facts import (  # noqa: E402  (the synthetic readings and the chapter's words, shared)
    FAMILY_LABELS, NAMES, THESIS_LABELS, VARIANTS, alignment, chapter_passed, harness)

#: What the chapter passes each table and figure (its headers and labels).
ALIGNMENT = chapter_passed("alignment_table", 1)
FIELDS = chapter_passed("gradient_field_table", 1)
HARNESS = chapter_passed("harness_table", 1)
PATHS = chapter_passed("energy_path_figure", 1)
THESIS = chapter_passed("thesis_table", 3)
ROBUST = chapter_passed("robustness_table", 1)
SPECTRUM = chapter_passed("spectrum_figure", 1)


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
    t = F.alignment_table(alignment(("diffusion",), ("attention", "diffusion")), ALIGNMENT, NAMES,
                          caption="the chapter's caption")
    assert t.header[0] == ALIGNMENT["reading"] and t.header[1] == "plain attention" and t.body[0][0] == NAMES[
        "reading"]["ple"]
    assert t.header[-3:] == [ALIGNMENT["exact"], ALIGNMENT["tangent"], ALIGNMENT["closest"]]
    assert t.body[0][-3:] == ["$A - I$", "plain attention, $A - I$", "plain attention, $A - I$ (0)"]
    assert t.body[0][1] == "0.9000 / 1.0000"
    assert t.caption == "the chapter's caption"
    markdown_rows_are_whole(t)
    none = F.alignment_table(alignment((), ()), ALIGNMENT)  # no exact block: "none", and how close the nearest comes
    assert none.body[0][0] == NAMES["reading"]["ple"]
    assert none.body[0][-3:] == ["none", "none", "plain attention, $A - I$, the paper's block, the exact block, the "
                                 "symmetric block (5.0e-02)"]  # every tangent cosine 0.95: a five-way tie
    with pytest.raises(ValueError, match="alignment must be the dict returned by .*update_alignment; it lacks"):
        F.exact_for({"ple": {}}, "phi")


def test_harness_table_counts_the_steps():
    t = F.harness_table(harness([("crate", "exact")]), HARNESS, NAMES)
    crate = t.body[list(E.READINGS).index("crate")]
    assert crate[:3] == [NAMES["reading"]["crate"], NAMES["energy"]["crate"], "lowered"]
    # the steps that move the energy its reading's way (CRATE's: lowered), whatever that way is
    assert crate[3:] == ["8/8", "8/8", "8/8", "7/8", "8/8"]
    assert t.body[0][3] == "8/8" and t.body[0][2] == "raised" and t.caption is None
    assert t.header == [HARNESS["reading"], HARNESS["energy"], HARNESS["sense"]] + [NAMES["variant"][v]
                                                                                     for v in VARIANTS]
    markdown_rows_are_whole(t)
    with pytest.raises(TypeError, match="table must be the dict returned by"):
        F.harness_table([], HARNESS)


def test_closest_is_read_after_layernorm_and_lists_ties():
    """The closest blocks by the tangent cosine (what LayerNorm keeps), not the full-space one, with every block
    within the identity threshold of the best."""
    a = alignment()
    a["hopfield"]["attention"] = {"cosine": 0.999, "tangent_cosine": 0.9}  # closest in the full space only
    a["hopfield"]["paper"]["tangent_cosine"] = a["hopfield"]["diffusion"]["tangent_cosine"] = 0.99
    assert F.closest(a, "hopfield") == ["exact"]  # tangent cosine 1
    a["hopfield"]["exact"]["tangent_cosine"] = 0.99 - 1e-12  # within the threshold of the best: a tie
    assert F.closest(a, "hopfield") == ["diffusion", "paper", "exact"]
    a["hopfield"]["exact"]["tangent_cosine"] = 0.98
    assert F.closest(a, "hopfield") == ["diffusion", "paper"]


def test_gradient_field_table():
    rows = {"attention": {"asymmetry": 0.15, "antisymmetric": 55.7, "jacobian": 372.0},
            "exact": {"asymmetry": 6e-15, "antisymmetric": 9e-13, "jacobian": 150.0}}
    t = F.gradient_field_table(rows, FIELDS, NAMES, caption="a caption")
    assert t.body[0] == ["plain attention", "55.7", "372.0", "0.15", "no"]
    assert t.body[1] == ["the exact block", "9.0e-13", "150.0", "6.0e-15", "yes"] and t.caption == "a caption"
    assert t.header == [FIELDS[k] for k in ("update", "antisymmetric", "jacobian", "asymmetry", "field")]
    markdown_rows_are_whole(t)
    with pytest.raises(ValueError, match="lacks \\['jacobian'\\]"):
        F.gradient_field_table({"attention": {"asymmetry": 0.1, "antisymmetric": 1.0}}, FIELDS, NAMES)


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
    le["diffusion"]["pixels"][2] = np.array([0.6, 0.8, 0.7])  # peaks at layer 1, then turns away
    t = F.thesis_table(le, base, er, THESIS, NAMES)
    assert len(t.body) == 3 and t.body[-1][0] == THESIS["random"]
    assert t.header[1] == NAMES["graph"]["attention"] + ", $q = 2$" and t.header[-1] == THESIS["rank"]
    assert t.body[0][1:3] == ["0.020 → 0.900 (0.900 at 1)", "0.020 → 0.900 (0.900 at 1)"]
    assert t.body[1][3] == "0.600 → 0.700 (0.800 at 1)" and t.body[1][-1] == "80.0 → 50.0"
    markdown_rows_are_whole(t)


def test_spectrum_figure():
    lam = np.linspace(0.0, 1.0, 50)
    fig = F.spectrum_figure(lam, SPECTRUM, eta=0.4, n_steps=8)
    assert len(fig.axes) == 4  # two panels and their histogram twins
    one, after = fig.axes[0], fig.axes[1]
    assert one.get_title() == "one step ($\\eta$ = 0.40, $h = 2\\eta$)" and after.get_title() == "after 8 steps"
    assert after.get_ylabel() == "$|\\mathrm{response}|^{8}$"
    assert [line.get_label() for line in one.get_lines()][:4] == [SPECTRUM[k] for k in ("attention", "diffusion",
                                                                                        "paper", "flow")]
    with pytest.raises(ValueError, match="lam must be a 1-D array"):
        F.spectrum_figure(np.zeros((2, 2)), SPECTRUM)
    with pytest.raises(ValueError, match="lam must have at least 1 rows"):
        F.spectrum_figure(np.array([]), SPECTRUM)


def test_energy_path_figure():
    h = harness()
    fig = F.energy_path_figure(h, PATHS, NAMES)
    assert sum(ax.axison for ax in fig.axes) == len(E.READINGS)
    titles = [ax.get_title() for ax in fig.axes if ax.axison]
    assert titles[0] == NAMES["reading"]["ple"] + "\n(its reading: ↑)"  # raised
    assert titles[list(E.READINGS).index("energy_transformer")].endswith("(its reading: ↓)")  # not frozen, lowered


def test_robustness_table():
    row = {"kappa": 30.0, "graph": "pixels", "q": 2, "start": 0.5, "ends": {"attention": 0.6, "diffusion": 0.4},
           "moves": {"attention": "towards", "diffusion": "away"}, "random": 0.02, "random_sd": 0.01,
           "peaks": {"attention": 8, "diffusion": 3}, "peak_values": {"attention": 0.6, "diffusion": 0.7},
           "closer": "attention"}
    t = F.robustness_table([row], ROBUST, NAMES, caption="c")
    assert t.body == [["30", "k-NN of the pixels", "2", "0.500", "0.020 ± 0.010", "0.600 ↑ (0.600 at 8)",
                       "0.400 ↓ (0.700 at 3)", "plain attention"]]
    assert t.header[-3:] == ["plain attention: last layer (peak at layer)", "$A - I$: last layer (peak at layer)",
                             "ends closer"] and t.caption == "c"
    both_random = F.robustness_table([{**row, "closer": "random"}], ROBUST, NAMES)
    assert both_random.body[0][-1] == NAMES["closer"]["random"]
    with pytest.raises(KeyError):
        F.robustness_table([{**row, "graph": "no_such_graph"}], ROBUST, NAMES)
    with pytest.raises(ValueError, match="facts must be the list returned by"):
        F.robustness_table([], ROBUST)


def test_thesis_figure():
    le, base, _ = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.5})
    fig = F.thesis_figure(le, base, THESIS_LABELS, NAMES, qs=(2, 10))
    assert len(fig.axes) == 4 and fig.axes[1].get_title() == NAMES["graph"]["attention"] + ", $q$ = 10"


def test_step_family_figure_marks_each_block_on_its_own_curve():
    """One panel per graph; each block's marker sits on the curve at its own step (the value of that path)."""
    _, base, _ = thesis_numbers({"attention": 0.0, "diffusion": 0.0}, {"attention": 0.0, "diffusion": 0.0})
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.88}
    grid = sorted({0.1, 1.0, 10.0} | set(steps.values()))
    family = {s: {g: {q: np.array([0.0, 0.1 * q + np.log(s) / 10]) for q in (2, 10)} for g in base} for s in grid}
    fig = F.step_family_figure(family, steps, base, FAMILY_LABELS, NAMES)
    assert len(fig.axes) == 2 and fig.axes[1].get_title() == NAMES["graph"]["pixels"]
    for ax, g in zip(fig.axes, base):
        markers = [(line.get_xdata()[0], line.get_ydata()[0]) for line in ax.get_lines() if line.get_marker() == "o"]
        assert len(markers) == 2 * len(steps)  # each block at q = 2 and at q = 10
        for s in steps.values():
            assert any(x == s and y == family[s][g][2][-1] for x, y in markers), (g, s)


def test_retention_relations_follow_the_factor():
    from probdr_lite.presentation.figures.readings import RETENTION_FACTOR, relation, retention_facts

    f = RETENTION_FACTOR
    assert relation(f * 1.01, 1.0) == {"above": True, "below": False}
    assert relation(1.0, f * 1.01) == {"above": False, "below": True}
    assert relation(f * 0.99, 1.0) == relation(1.0, f * 0.99) == {"above": False, "below": False}  # within
    with pytest.raises(ValueError, match="a must be in \\(0, inf\\)"):
        relation(0.0, 1.0)
    with pytest.raises(ValueError, match="b must be in"):
        relation(1.0, -1.0)
    r = {"diffusion": {"top": {"measured": 1e-2, "predicted": 1e-6}, "middle": {"measured": 0.1, "predicted": 0.15},
                       "n_modes": 50, "n_steps": 8},
         "attention": {"top": {"measured": 1.5e-2, "predicted": 1e-2}, "middle": {"measured": 0.2, "predicted": 0.6},
                       "n_modes": 50, "n_steps": 8}}
    facts = retention_facts(r)
    assert facts["diffusion_top_above"] and not facts["diffusion_top_below"]
    assert facts["diffusion_top_ratio"] == pytest.approx(1e4) and facts["factor"] == f
    assert facts["attention_middle_below"] and not facts["attention_middle_above"]
    assert not (facts["diffusion_middle_above"] or facts["diffusion_middle_below"])  # within the factor
    assert not (facts["top_above"] or facts["top_below"]) and facts["n_steps"] == 8
