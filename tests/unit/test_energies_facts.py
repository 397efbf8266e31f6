"""The energies chapter's facts (presentation/figures/readings.py) and the templates of its cells that state them.

Each fact is checked against the numbers it comes from, and each word or boolean on numbers just either side of its
threshold (:data:`~probdr_lite.presentation.figures.readings.WORDS`, or the identity threshold), so a choice that the numbers do
not support is not made. The last tests read ``book/src/energies.py`` and fill every piece of every template (every
branch of each ``... if facts["x"] else ...``) from the facts the cell passes, so a slot without a fact, or a
formatter that does not fit its fact, fails here rather than in the book build; and they check that a template
chooses only on boolean facts, never on a comparison.
"""

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from probdr_lite.chapters import energies as E
from probdr_lite.presentation.figures import readings as F
from probdr_lite.chapters.objections import THRESHOLDS
from probdr_lite.chapters.energies import CEILING

from .chapter_calls import chapter_calls, check_template, source_cells

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "energies.py"
W = F.WORDS
TOL = THRESHOLDS["identity"]
VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric")


def chapter_names() -> dict:
    """The names the chapter gives the blocks, readings, energies and graphs (its ``NAMES``, as written there)."""
    for node in ast.walk(ast.parse(CHAPTER.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["NAMES"]:
            return ast.literal_eval(node.value)
    raise AssertionError("the chapter defines no NAMES")


def chapter_passed(func: str, position: int | None = None, keyword: str | None = None) -> dict:
    """The dict (of labels, headers, templates) the chapter passes to its one call of ``figs.<func>``, at
    ``position`` or as ``keyword``, as written there: so the tests build each table and figure with the chapter's
    own words, and a key a builder reads that the chapter does not pass fails here."""
    (call,) = chapter_calls("energies", func)
    node = call.args[position] if keyword is None else {k.arg: k.value for k in call.keywords}[keyword]
    return ast.literal_eval(node)


NAMES = chapter_names()
THESIS_LABELS = chapter_passed("thesis_figure", 2)
FAMILY_LABELS = chapter_passed("step_family_figure", 3)


def entry(deltas, values=None):
    d = np.asarray(deltas, dtype=float)
    v = np.concatenate([[0.0], np.cumsum(d)]) if values is None else np.asarray(values, dtype=float)
    return {"values": v, "deltas": d, "n_rise": int((d > 0).sum()), "n_fall": int((d < 0).sum())}


def harness(flips=()):
    """Every block moves every energy its reading's way at all 8 steps, except the (reading, variant) of ``flips``."""
    out = {}
    for r in E.READINGS:
        out[r] = {}
        for v in VARIANTS:
            d = [E.SENSE[r] * 1.0] * 8
            if (r, v) in flips:
                d[3] = -d[3]
            out[r][v] = entry(d)
    return out


def alignment(exact_full=("exact",), exact_tangent=("exact",)):
    return {r: {v: {"cosine": 1.0 if v in exact_full else 0.9, "tangent_cosine": 1.0 if v in exact_tangent else 0.95}
                for v in VARIANTS} for r in E.READINGS}


# ---------------------------------------------------------------------------------------------------------------------
# The facts and their words


def test_proposition_facts_say_same_only_below_the_threshold():
    f = F.proposition_facts({"a": 1e-14, "b": 3e-15})
    assert f["cases"] == [{"case": "a", "gap": 1e-14}, {"case": "b", "gap": 3e-15}]
    assert f["worst"] == 1e-14 and f["tol"] == TOL and f["same"] is True
    assert F.proposition_facts({"a": 0.9 * TOL})["same"] is True
    assert F.proposition_facts({"a": 1e-14, "b": 1.1 * TOL})["same"] is False
    assert F.proposition_facts({"a": 1e-6}, tol=1e-5)["same"] is True
    with pytest.raises(ValueError, match="gaps"):
        F.proposition_facts({})


def test_gradient_field_facts():
    f = F.gradient_field_facts({"attention": 1e-3, "exact": 1e-17, "symmetric": 2e-4}, NAMES)
    assert f["fields"] == ["the exact block"] and f["one_field"] and f["any_field"] and f["fields_max"] == 1e-17
    assert f["others"] == ["plain attention", "the symmetric block"] and f["any_other"] and f["others_min"] == 2e-4
    two = F.gradient_field_facts({"exact": 1e-17, "energy_transformer": 3e-17})
    assert two["fields"] == ["exact", "energy_transformer"]  # without the chapter's names, the keys
    assert two["any_field"] and not two["one_field"] and two["fields_max"] == 3e-17
    assert not two["any_other"] and math.isnan(two["others_min"])
    none = F.gradient_field_facts({"attention": 1e-3})
    assert not none["any_field"] and not none["one_field"] and math.isnan(none["fields_max"])
    # the threshold: just below it a gradient field, at it not
    assert F.gradient_field_facts({"exact": 0.9 * TOL})["any_field"]
    assert not F.gradient_field_facts({"exact": TOL})["any_field"]
    with pytest.raises(ValueError, match="asymmetry must be the dict"):
        F.gradient_field_facts({})


def test_harness_facts_follow_the_counts():
    f = F.harness_facts(harness())
    assert (f["n_steps"], f["n_blocks"], f["n_energies"]) == (8, 5, len(E.READINGS))
    assert f["uniform"] and f["others"] == [] and f["n_all_agree"] == len(E.READINGS) and not f["none_all_agree"]
    f = F.harness_facts(harness({("crate", "exact")}), NAMES)
    assert not f["uniform"] and f["n_all_agree"] == len(E.READINGS) - 1
    assert NAMES["reading"]["crate"] not in f["all_agree"] and NAMES["reading"]["ple"] in f["all_agree"]
    assert f["others"] == [{"reading": NAMES["reading"]["crate"],
                            "agree": ["plain attention", "$A - I$", "the paper's block", "the symmetric block"],
                            "some_agree": True, "one_agrees": False}]
    every = {(r, v) for r in E.READINGS for v in VARIANTS if v != "paper"}
    f = F.harness_facts(harness(every))
    assert f["none_all_agree"] and f["all_agree"] == []
    assert all(o["one_agrees"] and o["agree"] == ["paper"] for o in f["others"])
    with pytest.raises(TypeError, match="table must be the dict returned by probdr_lite.chapters.energies.energy_table"):
        F.harness_facts([])
    f = F.harness_facts(harness({("ple", v) for v in VARIANTS}))
    assert f["others"][0]["some_agree"] is False and f["others"][0]["agree"] == []


def test_objectives_facts_say_when_the_graph_change_undoes_the_steps():
    def e(values):
        return entry(np.ones(len(values) - 1), values)

    h = {"ple": {"attention": e([-7.0, -8.0]), "diffusion": e([-7.0, -3.0])},
         "phi": {"attention": e([-5.0, 26.0]), "diffusion": e([-5.0, 41.0])}}
    f = F.objectives_facts(h, NAMES)
    ple, phi = f["readings"]
    assert ple["reading"] == NAMES["reading"]["ple"] and ple["n_steps"] == 1 and ple["raised"]
    assert ple["ends"] == [{"variant": "plain attention", "first": -7.0, "last": -8.0, "trend": "falls"},
                           {"variant": "$A - I$", "first": -7.0, "last": -3.0, "trend": "rises"}]
    assert ple["undone"] == ["plain attention"] and ple["any_undone"]
    assert phi["undone"] == [] and not phi["any_undone"]  # phi is not frozen: no undoing to report
    # the trend's tolerance: a rise within WORDS["objective_trend"] of |first| is no rise, so it is undone
    for side, undone in ((0.9, True), (1.1, False)):
        h["ple"]["attention"] = e([-100.0, -100.0 + side * W["objective_trend"] * 100])
        assert F.objectives_facts(h)["readings"][0]["any_undone"] is undone
    with pytest.raises(ValueError, match="table must be .* lacks \\['phi'\\]"):
        F.objectives_facts({"ple": h["ple"]})


def test_spectrum_facts():
    f = E.spectrum_facts(np.array([0.0, 0.5, 1.0]), eta=0.4)
    assert (f["mid"], f["top"], f["h"], f["n_steps"]) == (0.5, 1.0, 0.8, 8)
    assert f["top_diffusion"] == pytest.approx(0.2 ** 8) and f["mid_diffusion"] == pytest.approx(0.6 ** 8)
    assert f["top_flow"] == pytest.approx(np.exp(-0.8 * 8)) and f["top_response"] == pytest.approx(0.2)
    rel = E.frequency_response(1.0, "paper", 0.4, 128, 1.0)
    assert f["top_paper"] == pytest.approx(abs(rel) ** 8) and f["top_attention"] > 0
    # removed in one step from lambda = 1/h = 1.25 on
    assert not E.spectrum_facts(np.array([0.0, 1.24]), eta=0.4)["removed"]
    assert E.spectrum_facts(np.array([0.0, 1.25]), eta=0.4)["removed"]
    with pytest.raises(ValueError, match="lam"):
        E.spectrum_facts(np.array([]))


def test_retention_facts_include_the_filters_ratio():
    r = {v: {"top": {"measured": 1e-2, "predicted": p}, "middle": {"measured": 0.1, "predicted": 0.15},
             "n_modes": 50, "n_steps": 8} for v, p in (("diffusion", 1e-6), ("attention", 1e-2))}
    assert F.retention_facts(r)["filter_ratio"] == pytest.approx(1e4)
    with pytest.raises(ValueError, match="retention must be .* lacks \\['attention'\\]"):
        F.retention_facts({"diffusion": r["diffusion"]})


def test_differential_facts():
    f = F.differential_facts([0.1, 1e-7], [100.0, 1000.0])
    assert f["gaps"] == [{"gap": 0.1, "kappa2": 100.0}, {"gap": 1e-7, "kappa2": 1000.0}] and f["kappa"] == 30.0
    for side, identity in ((0.9, True), (1.1, False)):
        assert F.differential_facts([0.1, side * W["second_map_identity"]], [1.0, 2.0])["identity"] is identity
    with pytest.raises(ValueError, match="kappas2 must have 1 entry, one per gap"):
        F.differential_facts([0.1], [100.0, 1000.0])
    with pytest.raises(ValueError, match="gaps must"):
        F.differential_facts([], [])


def test_readings_facts():
    h = harness({("hopfield", "exact")} | {("crate", v) for v in VARIANTS})
    f = F.readings_facts(h, NAMES)
    rows = {r["reading"]: r for r in f["readings"]}
    assert list(rows) == list(E.READINGS)
    assert rows["ple"] == {"reading": "ple", "sense": "raised", "agree": [NAMES["variant"][v] for v in VARIANTS],
                           "every_block": True, "no_block": False}
    assert F.readings_facts(h)["readings"][0]["sense"] == 1 and F.readings_facts(h)["readings"][0]["agree"][0] == \
        "attention"  # without the chapter's names: the sense and the keys
    assert rows["hopfield"]["sense"] == "lowered" and not rows["hopfield"]["every_block"]
    assert "the exact block" not in rows["hopfield"]["agree"] and not rows["hopfield"]["no_block"]
    assert rows["crate"]["no_block"] and rows["crate"]["agree"] == []


def thesis_numbers(att_end, pix_end, sd=0.01, start=(0.02, 0.6)):
    le, base = {}, {}
    for v in ("attention", "diffusion"):
        le[v] = {"attention": {q: np.array([start[0], att_end[v]]) for q in (2, 10)},
                 "pixels": {q: np.array([start[1], pix_end[v]]) for q in (2, 10)}}
    for g in ("attention", "pixels"):
        base[g] = {q: {"mean": 0.02, "sd": sd} for q in (2, 10)}
    erank = {"attention": np.array([80.0, 60.0]), "diffusion": np.array([80.0, 50.0])}
    return le, base, erank


def test_thesis_facts():
    le, base, er = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.5})
    f = F.thesis_facts(le, base, er, np.full(10, 1e-4), np.ones(10), NAMES)
    att, pix = f["graphs"]
    assert att["graph"] == NAMES["graph"]["attention"] and [q["q"] for q in att["qs"]] == [2, 10]
    q = att["qs"][0]
    assert q["random"] and (q["low"], q["high"], q["mean"], q["sd"]) == (0.02, 0.04, 0.02, 0.01)
    q = pix["qs"][0]
    assert not q["random"] and q["start"] == 0.6 and not q["far"]
    assert q["ends"] == [{"variant": "plain attention", "end": 0.7}, {"variant": "$A - I$", "end": 0.5}]
    assert q["up"] == ["plain attention"] and q["one_up"] and q["down"] == ["$A - I$"] and q["any_down"]
    assert q["best"] == "plain attention" and q["rel_tol"] == W["move"]
    assert f["isolated"] and f["has_participation"] and (f["lam_min"], f["p_max"]) == (1e-4, 1.0)
    assert f["rank_first"] == 80.0 and f["fastest"] == "$A - I$" and f["rank_falls"]
    assert f["ranks"] == [{"variant": "$A - I$", "rank": 50.0}, {"variant": "plain attention", "rank": 60.0}]


def test_thesis_facts_choices_turn_at_their_thresholds():
    # the random level: mean + n_sd sd = 0.05
    for side, random in ((0.9, True), (1.1, False)):
        top = 0.02 + side * W["n_sd"] * 0.01
        le, base, er = thesis_numbers({"attention": top, "diffusion": 0.03}, {"attention": 0.7, "diffusion": 0.5})
        assert F.thesis_facts(le, base, er, np.ones(10))["graphs"][0]["qs"][0]["random"] is random
    # a move counts beyond WORDS["move"] of the start
    for side, moves in ((0.9, False), (1.1, True)):
        end = 0.6 * (1 + side * W["move"])
        le, base, er = thesis_numbers({"attention": 0.3, "diffusion": 0.3}, {"attention": end, "diffusion": 0.6})
        q = F.thesis_facts(le, base, er, np.ones(10))["graphs"][1]["qs"][0]
        assert q["any_up"] is moves and not q["any_down"]
    # far from 1: every end below WORDS["close"]
    for end, far in ((0.99 * W["close"], True), (W["close"], False)):
        le, base, er = thesis_numbers({"attention": end, "diffusion": 0.3}, {"attention": 0.7, "diffusion": 0.5})
        assert F.thesis_facts(le, base, er, np.ones(10))["graphs"][0]["qs"][0]["far"] is far
    # isolated: every eigenvalue and every participation ratio below their bounds
    le, base, er = thesis_numbers({"attention": 0.3, "diffusion": 0.3}, {"attention": 0.7, "diffusion": 0.5})
    lam_in, lam_out = np.full(10, 0.9 * W["isolated_eigenvalue"]), np.full(10, 1.1 * W["isolated_eigenvalue"])
    p_in, p_out = np.full(10, 0.9 * W["isolated_participation"]), np.full(10, 1.1 * W["isolated_participation"])
    assert F.thesis_facts(le, base, er, lam_in, p_in)["isolated"]
    assert not F.thesis_facts(le, base, er, lam_out, p_in)["isolated"]
    assert not F.thesis_facts(le, base, er, lam_in, p_out)["isolated"]
    bare = F.thesis_facts(le, base, er, lam_in)
    assert bare["isolated"] and not bare["has_participation"] and math.isnan(bare["p_min"])
    # the effective rank falls only if every block lowers it beyond WORDS["rank_trend"]
    for side, falls in ((0.9, False), (1.1, True)):
        er = {"attention": np.array([80.0, 80.0 * (1 - side * W["rank_trend"])]), "diffusion": np.array([80.0, 50.0])}
        assert F.thesis_facts(le, base, er, lam_in)["rank_falls"] is falls


def robust_row(kappa=30.0, graph="pixels", q=2, moves=("towards", "towards", "away"), ends=(0.5, 0.6, 0.4),
               above=True, ceiling=False):
    names = ("attention", "diffusion", "paper")
    return {"kappa": kappa, "graph": graph, "q": q, "start": 0.5, "ends": dict(zip(names, ends)),
            "moves": dict(zip(names, moves)), "random": 0.02, "random_sd": 0.01, "start_above_random": above,
            "at_ceiling": ceiling}


def test_constructions_facts():
    rows = [robust_row(), robust_row(q=10, moves=("still", "towards", "away")),
            robust_row(kappa=3.0, graph="attention", ceiling=True), robust_row(graph="attention", above=False)]
    f = F.constructions_facts(rows, names=NAMES)
    assert (f["n"], f["n_kappas"], f["n_graphs"], f["n_room"], f["n_flat"], f["n_ceiling"]) == (4, 2, 2, 2, 1, 1)
    assert f["room"] == rows[:2] and f["flat"] == [rows[3]] and f["at_ceiling"] == [rows[2]]
    assert f["flat_where"] == ["$W = e^S$ at $\\kappa = 30$"] and f["ceiling_where"] == ["$W = e^S$ at $\\kappa = 3$"]
    assert f["any_flat"] and f["any_ceiling"] and f["ceiling"] == CEILING
    assert f["moves"] == {"attention": ["towards", "still"], "diffusion": ["towards", "towards"],
                          "paper": ["away", "away"]}
    assert f["held"] == [{"variant": "$A - I$", "towards": True, "away": False},
                         {"variant": "the paper's block", "towards": False, "away": True}]
    assert f["varied"] == [{"variant": "plain attention", "n_towards": 1, "n_away": 0, "n_still": 1}]
    # A - I ends closer (0.6 > 0.5) in both: that holds for all of them
    assert f["closer_held"] and f["always_closer"] and not f["closer_varies"] and f["n_closer"] == 2
    assert f["any_holds"] and f["any_depends"]
    bare = F.constructions_facts(rows)  # without the chapter's names: each {graph, kappa} and the keys
    assert bare["flat_where"] == [{"graph": "attention", "kappa": 30.0}] and bare["held"][0]["variant"] == "diffusion"
    with pytest.raises(TypeError, match="facts must be the list returned by probdr_lite.chapters.energies.robustness_facts"):
        F.constructions_facts({})
    mixed = F.constructions_facts([robust_row(), robust_row(q=10, ends=(0.6, 0.5, 0.4))])
    assert mixed["closer_varies"] and not mixed["closer_held"] and mixed["n_closer"] == 1
    farther = F.constructions_facts([robust_row(ends=(0.6, 0.6, 0.4))])  # equal ends: not closer
    assert farther["closer_held"] and not farther["always_closer"]
    none = F.constructions_facts([robust_row(above=False)])
    assert none["n_room"] == 0 and not (none["closer_held"] or none["closer_varies"] or none["any_holds"])
    assert none["held"] == [] and none["varied"] == [] and not none["any_ceiling"]


def test_step_family_facts_count_a_difference_beyond_the_random_level():
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.88}
    base = {g: {q: {"mean": 0.02, "sd": 0.01} for q in (2, 10)} for g in ("attention", "pixels")}
    noise = W["n_sd"] * 0.01
    family = {s: {g: {q: np.array([0.5, 0.5]) for q in (2, 10)} for g in base} for s in steps.values()}
    family[4.0]["attention"][2] = np.array([0.5, 0.5 + 1.1 * noise])
    family[4.0]["attention"][10] = np.array([0.5, 0.5 + 0.9 * noise])
    family[4.0]["pixels"][2] = np.array([0.5, 0.5 - 1.1 * noise])
    f = F.step_family_facts(family, steps, {"diffusion": 4.8e-14, "paper": 5.2e-14}, base)
    assert (f["s_attention"], f["s_diffusion"], f["s_paper"], f["gap_paper"]) == (0.8, 4.0, 3.88, 5.2e-14)
    assert [(f[f"{k}_higher"], f[f"{k}_lower"]) for k in ("attention_q2", "attention_q10", "pixels_q2", "pixels_q10")
            ] == [(True, False), (False, False), (False, True), (False, False)]
    assert f["attention_q2_change"] == pytest.approx(1.1 * noise)


def test_ceiling_facts():
    le = {"attention": {"attention": {2: np.array([0.96, 0.9]), 10: np.array([0.94, 0.9])}}}
    f = E.ceiling_facts(le)
    assert (f["start_q2"], f["start_q10"], f["at_ceiling"]) == (0.96, 0.94, [2])
    assert f["any_at_ceiling"] and f["ceiling"] == CEILING
    le["attention"]["attention"][10][0] = CEILING
    assert E.ceiling_facts(le)["at_ceiling"] == [2, 10]  # at the ceiling counts
    le["attention"]["attention"][2][0] = le["attention"]["attention"][10][0] = 0.94
    assert not E.ceiling_facts(le)["any_at_ceiling"]


def test_closing_facts():
    le, base, _ = thesis_numbers({"attention": 0.9, "diffusion": 0.95}, {"attention": 0.6, "diffusion": 0.6})
    f = F.closing_facts(harness(), {v: (1e-17 if v == "exact" else 1e-3) for v in VARIANTS}, alignment(), le, base,
                        NAMES)
    assert not f["paper_exact"] and f["correction_exact"] and f["n_blocks"] == 5
    assert f["grads"] == ["the exact block"] and f["one_grad"] and f["any_grad"] and f["uniform"]
    assert f["lifted"] == ["plain attention", "$A - I$"] and f["any_lifted"] and not f["one_lifted"]
    assert f["has_control"] and f["control_q"] == 10 and f["attention_at_least"]  # both gain 0.0
    assert (f["attention_start"], f["attention_end"], f["diffusion_start"], f["diffusion_end"]) == (0.6, 0.6, 0.6, 0.6)
    le2, base2, _ = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.75})
    f = F.closing_facts(harness({("phi", "paper")}), {v: 1e-3 for v in VARIANTS}, alignment(("paper",)), le2, base2)
    assert f["paper_exact"] and not f["correction_exact"] and not f["any_grad"] and not f["uniform"]
    assert not f["any_lifted"] and not f["attention_at_least"]
    neither = F.closing_facts(harness(), {}, alignment(()), le2, base2)
    assert not neither["paper_exact"] and not neither["correction_exact"]
    # lifted needs both: above the random level and at or above WORDS["close"]
    for end, lifted in ((0.99 * W["close"], False), (W["close"], True)):
        le3, base3, _ = thesis_numbers({"attention": end, "diffusion": 0.03}, {"attention": 0.7, "diffusion": 0.5})
        assert F.closing_facts(harness(), {}, alignment(), le3, base3)["any_lifted"] is lifted
    le4, base4, _ = thesis_numbers({"attention": 0.9, "diffusion": 0.03}, {"attention": 0.7, "diffusion": 0.5},
                                   sd=0.3)  # random level 0.02 + 3 * 0.3 = 0.92: 0.9 is at the random level
    assert not F.closing_facts(harness(), {}, alignment(), le4, base4)["any_lifted"]
    alone = F.closing_facts(harness(), {}, alignment(), {"attention": le["attention"]}, base)
    assert not alone["has_control"] and math.isnan(alone["attention_start"])


def test_panel_facts_count_the_panels_the_thesis_figures_draw():
    """Against the figures themselves: one panel per graph and q (thesis_figure), one per graph (step_family_figure),
    with the same defaults."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    le, base, _ = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.5})
    le = {v: {g: {q: le[v][g][2] for q in (2, 5, 10)} for g in le[v]} for v in le}
    base = {g: {q: base[g][2] for q in (2, 5, 10)} for g in base}
    steps = {"attention": 0.8, "diffusion": 4.0}
    family = {s: {g: {q: np.array([0.5, 0.6]) for q in (2, 10)} for g in base} for s in steps.values()}
    try:
        for graphs in (["attention"], ["attention", "pixels"]):
            b = {g: base[g] for g in graphs}
            f = F.panel_facts(b)
            assert f["n_graphs"] == len(graphs) and f["n_qs"] == 3
            assert f["n_panels"] == len(F.thesis_figure(le, b, THESIS_LABELS).axes) == 3 * len(graphs)
            assert f["n_graphs"] == len(F.step_family_figure(family, steps, b, FAMILY_LABELS).axes)
            assert F.panel_facts(b, qs=(2, 10))["n_panels"] == len(F.thesis_figure(le, b, THESIS_LABELS,
                                                                                  qs=(2, 10)).axes)
    finally:
        plt.close("all")
    with pytest.raises(ValueError, match="baseline must be the dict returned by probdr_lite.chapters.energies.random_baseline"):
        F.panel_facts({})


# ---------------------------------------------------------------------------------------------------------------------
# The chapter's templates


def facts_examples():
    """Each facts function the chapter calls, on numbers for which its lists are not empty (so that every loop over
    them reaches its template)."""
    le, base, er = thesis_numbers({"attention": 0.03, "diffusion": 0.04}, {"attention": 0.7, "diffusion": 0.5})
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.88}
    family = {s: {g: {q: np.array([0.5, 0.6]) for q in (2, 10)} for g in base} for s in steps.values()}
    retention = {v: {"top": {"measured": 1e-2, "predicted": 1e-3}, "middle": {"measured": 0.1, "predicted": 0.15},
                     "n_modes": 50, "n_steps": 8} for v in ("attention", "diffusion")}
    robust = [robust_row(), robust_row(q=10, moves=("still", "towards", "away"), ends=(0.6, 0.5, 0.4)),
              robust_row(ceiling=True), robust_row(above=False)]
    ple_undone = {"ple": {"attention": entry([1.0, 1.0], [-7.0, -8.0])}, "phi": {"attention": entry([1.0, 1.0])}}
    return {
        "proposition_facts": F.proposition_facts({"a": 1e-14, "b": 3e-15}),
        "gradient_field_facts": F.gradient_field_facts({"attention": 1e-3, "exact": 1e-17}, NAMES),
        "harness_facts": F.harness_facts(harness({("crate", "exact")}), NAMES),
        "objectives_facts": F.objectives_facts(ple_undone, NAMES),
        "spectrum_facts": E.spectrum_facts(np.linspace(0.0, 1.0, 50)),
        "retention_facts": F.retention_facts(retention),
        "differential_facts": F.differential_facts([0.1, 1e-7], [100.0, 1000.0]),
        "readings_facts": F.readings_facts(harness({("crate", "exact")}), NAMES),
        "thesis_facts": F.thesis_facts(le, base, er, np.full(10, 1e-4), np.ones(10), NAMES),
        "constructions_facts": F.constructions_facts(robust, names=NAMES),
        "step_family_facts": F.step_family_facts(family, steps, {"diffusion": 1e-14, "paper": 2e-14}, base),
        "ceiling_facts": E.ceiling_facts({"attention": {"attention": {2: np.array([0.96]), 10: np.array([0.5])}}}),
        "closing_facts": F.closing_facts(harness(), {}, alignment(), le, base, NAMES),
        "panel_facts": F.panel_facts(base),
    }


def chapter_cells():
    """The chapter's cells, parsed, with the line numbers of the chapter's source."""
    return source_cells(CHAPTER)


def facts_call(expr):
    """The name of the facts function ``expr`` calls (``figs.x_facts(...)``), or None."""
    if isinstance(expr, ast.Call):
        f = expr.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        return name if name in facts_examples() else None
    return None


def is_text(expr):
    """An expression the chapter builds text with: a fill, a str.join, or a list of them."""
    return any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) and n.func.id == "fill"
                                            or isinstance(n.func, ast.Attribute) and n.func.attr == "join")
               for n in ast.walk(expr))


def fill_calls():
    """Every ``fill(template, facts, **more)`` of the chapter, with the facts it gets, cell by cell in order.

    A name is bound to facts when it is assigned a ``*_facts(...)`` call (the chapter's literal constants are
    facts too), when it is the parameter of a chapter function called with such facts, or when it is the loop
    variable of a loop over a list of facts (``for x in facts["key"]``, nested loops too): then it stands for every
    element of the list in turn. A name assigned text (a fill or a join) stands for a placeholder text.
    """
    examples = facts_examples()
    trees = chapter_cells()
    constants, texts, params = {}, set(), {}
    for tree in trees:
        for node in tree.body:  # the chapter's literal constants, e.g. D_Q, KAPPA, ETA, BETA, N_STEPS = 128, ...
            if isinstance(node, ast.Assign):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        constants[t.id] = value
                    elif isinstance(t, ast.Tuple) and isinstance(value, tuple):
                        constants.update({e.id: v for e, v in zip(t.elts, value) if isinstance(e, ast.Name)})
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and is_text(node.value):
                texts.update(t.id for t in node.targets if isinstance(t, ast.Name))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args \
                    and facts_call(node.args[0]):
                params[node.func.id] = facts_call(node.args[0])
    calls = []
    bound = {name: [value] for name, value in constants.items()}
    for tree in trees:
        for node in ast.walk(tree):  # breadth first: an outer loop binds before the loops inside it
            if isinstance(node, ast.Assign) and facts_call(node.value):
                example = examples[facts_call(node.value)]
                bound.update({t.id: [example] for t in node.targets if isinstance(t, ast.Name)})
            elif isinstance(node, ast.FunctionDef) and node.name in params:
                bound[node.args.args[0].arg] = [examples[params[node.name]]]
            elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Subscript) \
                    and isinstance(node.iter.value, ast.Name) and node.iter.value.id in bound:
                items = [item for parent in bound[node.iter.value.id] for item in parent[node.iter.slice.value]]
                assert items, f"line {node.iter.lineno}: the example facts leave {ast.unparse(node.iter)} empty"
                bound[node.target.id] = items
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "fill"):
                continue
            loops = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and len(bound.get(n.id, ())) > 1}
            assert len(loops) <= 1, f"line {node.lineno}: one loop at a time"
            for k in range(len(bound[next(iter(loops))]) if loops else 1):
                def value(expr):
                    if isinstance(expr, ast.Name) and expr.id in bound:
                        return bound[expr.id][k if expr.id in loops else 0]
                    if isinstance(expr, ast.Name) and expr.id in texts:
                        return "some text"
                    if facts_call(expr):
                        return examples[facts_call(expr)]
                    if isinstance(expr, ast.Attribute) and ast.unparse(expr) == "figs.WORDS":
                        return F.WORDS
                    if isinstance(expr, ast.Subscript) and isinstance(expr.value, (ast.Name, ast.Subscript)):
                        return value(expr.value)[expr.slice.value]
                    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "join":
                        return "some text"
                    raise AssertionError(f"line {expr.lineno}: cannot tell which facts {ast.unparse(expr)} are")

                facts = {**(value(node.args[1]) if len(node.args) > 1 else {}),
                         **{kw.arg: value(kw.value) for kw in node.keywords}}
                choices = {ast.unparse(s): value(s) for s in ast.walk(node.args[0]) if isinstance(s, ast.Subscript)}
                calls.append((node, facts, choices))
    return calls


#: The facts of the chapter that are measurements, in probdr_lite.chapters.energies (the rest are in figs).
CHAPTER_FACTS = {"spectrum_facts", "ceiling_facts"}


def test_the_chapter_writes_its_computed_sentences_as_fill_templates():
    """What the chapter takes from presentation/figures/readings is tables, figures, names and facts, never a
    sentence; and it passes every facts function of the module, and its facts of chapters.energies, to fill."""
    source = CHAPTER.read_text(encoding="utf-8")
    used = {n.attr for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == "figs"}
    assert used <= set(F.__all__), used - set(F.__all__)
    assert not {u for u in used if u.endswith(("_text", "_note"))}, used
    measured = {n.attr for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name) and n.value.id == "E"}
    every = {f for f in F.__all__ if f.endswith("_facts")} | CHAPTER_FACTS
    assert CHAPTER_FACTS <= set(E.__all__)
    assert every == set(facts_examples()), every ^ set(facts_examples())
    assert every <= used | measured, every - used - measured


def test_every_template_of_the_chapter_fills_from_its_facts():
    calls = fill_calls()
    assert len({c.lineno for c, _, _ in calls}) >= 30
    called = set()
    for call, facts, choices in calls:
        check_template(call, facts, choices)
        called.add(call.lineno)
    assert called


def test_the_chapter_chooses_outside_templates_only_on_boolean_facts():
    """An ``if`` around a template, like the conditionals inside one, tests a boolean fact."""
    examples = facts_examples()
    for tree in chapter_cells():
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "fill"
                                                for n in ast.walk(node)):
                test = node.test
                assert isinstance(test, ast.Subscript) and isinstance(test.value, ast.Name), ast.unparse(test)
                # said["closer_held"] and the like: a key of some facts function, whose example is a bool
                key = test.slice.value
                holders = [f for f in examples.values() if key in f]
                assert holders and all(isinstance(f[key], bool) for f in holders), ast.unparse(test)


def test_the_chapter_describes_every_figure_it_builds():
    """The builders leave the alt text to the chapter: each cell that builds a figure with figs.*_figure gives it
    its sentence with describe(fig, fill(...)) before showing it."""
    built = 0
    for tree in chapter_cells():
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        figures = [c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr.endswith("_figure")]
        described = [c for c in calls if isinstance(c.func, ast.Name) and c.func.id == "describe"]
        assert len(described) == len(figures), f"line {tree.body[0].lineno}: {len(figures)} figures, " \
                                                f"{len(described)} described"
        for d in described:
            assert isinstance(d.args[1], ast.Call) and getattr(d.args[1].func, "id", "") == "fill", d.lineno
        built += len(figures)
    assert built >= 4
