"""The energies chapter's facts (presentation/figures/readings.py and chapters/energies.py), each checked against
the numbers it comes from, and the chapter's labels (one place, a missing one raising). The chapter's sentences are
its own Markdown; the claims beside them are tested in test_claims_energies.py.
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

from .chapter_calls import chapter_calls

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "energies.py"
TOL = THRESHOLDS["identity"]
VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric")


def chapter_passed(func: str, position: int | None = None, keyword: str | None = None) -> dict:
    """The dict (of labels, headers, templates) the chapter passes to its one call of ``figs.<func>``, at
    ``position`` or as ``keyword``, as written there: so the tests build each table and figure with the chapter's
    own words, and a key a builder reads that the chapter does not pass fails here."""
    (call,) = chapter_calls("energies", func)
    node = call.args[position] if keyword is None else {k.arg: k.value for k in call.keywords}[keyword]
    return ast.literal_eval(node)


NAMES = F.NAMES
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


def thesis_numbers(att_end, pix_end, sd=0.01, start=(0.02, 0.6)):
    le, base = {}, {}
    for v in ("attention", "diffusion"):
        le[v] = {"attention": {q: np.array([start[0], att_end[v]]) for q in (2, 10)},
                 "pixels": {q: np.array([start[1], pix_end[v]]) for q in (2, 10)}}
    for g in ("attention", "pixels"):
        base[g] = {q: {"mean": 0.02, "sd": sd} for q in (2, 10)}
    erank = {"attention": np.array([80.0, 60.0]), "diffusion": np.array([80.0, 50.0])}
    return le, base, erank


def robust_row(kappa=30.0, graph="pixels", q=2, moves=("towards", "towards", "away"), ends=(0.5, 0.6, 0.4),
               above=True, ceiling=False):
    names = ("attention", "diffusion", "paper")
    return {"kappa": kappa, "graph": graph, "q": q, "start": 0.5, "ends": dict(zip(names, ends)),
            "moves": dict(zip(names, moves)), "random": 0.02, "random_sd": 0.01, "start_above_random": above,
            "at_ceiling": ceiling}


def test_step_family_facts_read_the_thesis_tests_rules():
    """Plain attention at A - I's step against its own, by the thesis test's one tolerance (MOVE_TOL of the start)
    and its room (a start above the random level, RANDOM_SD standard deviations over the mean, and below the
    ceiling): numbers just either side of each."""
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.88}
    base = {g: {q: {"mean": 0.02, "sd": 0.01} for q in (2, 10)} for g in ("attention", "pixels")}
    level = 0.02 + E.RANDOM_SD * 0.01
    family = {s: {g: {q: np.array([0.5, 0.5]) for q in (2, 10)} for g in base} for s in steps.values()}
    margin = E.MOVE_TOL * 0.5
    family[4.0]["attention"][2] = np.array([0.5, 0.5 + 1.1 * margin])  # higher, beyond the tolerance
    family[4.0]["attention"][10] = np.array([0.5, 0.5 + 0.9 * margin])  # within it: a tie
    family[4.0]["pixels"][2] = np.array([0.5, 0.5 - 1.1 * margin])  # lower
    for s in steps.values():  # a start at the random level: no room, whatever the ends
        family[s]["pixels"][10] = np.array([0.99 * level, 0.3])
    f = E.step_family_facts(family, steps, base)
    assert [f[k]["closer"] for k in ("attention_q2", "attention_q10", "pixels_q2", "pixels_q10")] == [
        "diffusion", "tie", "attention", "tie"]
    assert [f[k]["room"] for k in ("attention_q2", "attention_q10", "pixels_q2", "pixels_q10")] == [
        True, True, True, False]
    assert f["attention_q2"]["change"] == pytest.approx(1.1 * margin) and f["pixels_q2"]["margin"] == margin
    for s in steps.values():  # a start at the ceiling: no room either
        family[s]["attention"][2] = np.array([CEILING, 0.99])
    assert not E.step_family_facts(family, steps, base)["attention_q2"]["room"]


def test_compare_ends_is_the_one_tolerance():
    start = 0.5
    assert E.compare_ends(0.5 + 1.01 * E.MOVE_TOL * start, 0.5, start) == "first"
    assert E.compare_ends(0.5 + 0.99 * E.MOVE_TOL * start, 0.5, start) == "tie"
    assert E.compare_ends(0.5, 0.5 + 1.01 * E.MOVE_TOL * start, start) == "second"
    with pytest.raises(ValueError, match="rel_tol"):
        E.compare_ends(0.5, 0.4, 0.5, rel_tol=-1.0)


def test_ceiling_facts():
    le = {"attention": {"attention": {2: np.array([0.96, 0.9]), 10: np.array([0.94, 0.9])}}}
    f = E.ceiling_facts(le)
    assert (f["start_q2"], f["start_q10"], f["at_ceiling"]) == (0.96, 0.94, [2])
    assert f["any_at_ceiling"] and f["ceiling"] == CEILING
    le["attention"]["attention"][10][0] = CEILING
    assert E.ceiling_facts(le)["at_ceiling"] == [2, 10]  # at the ceiling counts
    le["attention"]["attention"][2][0] = le["attention"]["attention"][10][0] = 0.94
    assert not E.ceiling_facts(le)["any_at_ceiling"]


def test_every_label_is_defined_once_and_a_missing_one_raises():
    """The graphs' labels live with the graphs (chapters.energies.GRAPHS); the tables read them from there."""
    assert set(NAMES["graph"]) == set(E.GRAPHS) == set(NAMES["graph_short"])
    assert all(NAMES["graph"][g] == E.GRAPHS[g]["label"] for g in E.GRAPHS)
    with pytest.raises(KeyError):
        F._label(None, "graph", "no_such_graph")
    with pytest.raises(KeyError):
        E.graph_label("no_such_graph")
    names = {**NAMES, "variant": {k: v for k, v in NAMES["variant"].items() if k != "diffusion"}}
    with pytest.raises(KeyError):
        F._name("diffusion", names)
