"""The facts of the Laplacian Eigenmaps and unrolled-inference chapters (probdr_lite/chapters/laplacian_eigenmaps.py
and unrolled_inference.py) and the templates of their cells that state them.

Each fact is checked against numbers computed here (SciPy's eigenvalues, a helix whose order along the curve is
known, ``fit_le_elbo``'s own Gram errors), and each boolean on numbers just either side of its threshold, so a
choice that the numbers do not support is not made. The last tests read ``book/src/laplacian_eigenmaps.py`` and
``book/src/unrolled_inference.py`` and fill every piece of every template (every branch of each
``... if facts["x"] else ...``) from the facts the cell passes, so a slot without a fact, or a formatter that does
not fit its fact, fails here rather than in the book build; they check that a template chooses only on boolean
facts, never on a comparison, and that every figure a chapter builds is described (its alt text) in the chapter.
"""

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

from probdr_lite.chapters import laplacian_eigenmaps as LE
from probdr_lite.chapters import unrolled_inference as UI
from probdr_lite.graphs import knn_graph, laplacian
from probdr_lite.probdr import fit_le_elbo

from .chapter_calls import chapter_calls, source_cells, words_passed

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = {name: ROOT / "book" / "src" / f"{name}.py" for name in ("laplacian_eigenmaps", "unrolled_inference")}


def helix(n=200):
    """A helix: one sheet, whose points lie in the order of ``t`` along it."""
    t = np.linspace(0, 1, n)
    return np.column_stack([np.cos(3 * t), np.sin(3 * t), t]), t


def graph_laplacian(n=40, seed=0):
    Y = np.random.default_rng(seed).normal(size=(n, 3))
    return laplacian(knn_graph(Y, n_neighbors=5, mode="heat"))


# ---------------------------------------------------------------------------------------------------------------------
# The facts and their choices


def test_decimals_of_agreement():
    assert LE.decimals_of_agreement(1.0) == 15 and LE.decimals_of_agreement(0.9991) == 3
    assert LE.decimals_of_agreement(1.0 - 5e-11) == 10 and LE.decimals_of_agreement(1.0 - 5e-10) == 9
    with pytest.raises(ValueError, match="cosine"):
        LE.decimals_of_agreement(1.5)


def agreement_rows(same_a=1.0 - 1e-13):
    return [{"name": "a", "cosines": np.array([1.0, 0.9991]), "agreement_same_graph": same_a},
            {"name": "b", "cosines": np.array([1.0, 0.95]), "agreement_same_graph": 1.0},
            {"name": "c", "cosines": np.array([0.99, 0.95]), "agreement_same_graph": 1.0}]


def test_agreement_facts():
    f = LE.agreement_facts(agreement_rows())
    assert f["sets"] == [{"name": "a", "same": 12, "bn": 3}, {"name": "b", "same": 15, "bn": 1},
                         {"name": "c", "same": 15, "bn": 1}]
    assert f["names"] == ["a", "b", "c"] and f["fewest"] == "b"  # the first of the tie
    assert f["to_roundoff"] and f["roundoff"] == 10
    # round-off from 10 decimals on: 1 - 5e-11 shares 10 decimals with 1, 1 - 5e-10 only 9
    assert LE.agreement_facts(agreement_rows(1.0 - 5e-11))["to_roundoff"]
    assert not LE.agreement_facts(agreement_rows(1.0 - 5e-10))["to_roundoff"]
    assert LE.agreement_facts(agreement_rows(1.0 - 5e-10), roundoff=9)["to_roundoff"]
    with pytest.raises(ValueError, match="rows"):
        LE.agreement_facts([])
    with pytest.raises(ValueError, match="roundoff"):
        LE.agreement_facts(agreement_rows(), roundoff=16)


def test_classes_apart_against_hand_counted_neighbours():
    """Two tight clusters far from a mixed third group: the clusters score 1, the mixed classes their share of the
    group, and the threshold decides on both sides of a purity."""
    rng = np.random.default_rng(0)
    a = rng.normal(0, 0.01, size=(20, 2))
    b = rng.normal(0, 0.01, size=(20, 2)) + [10.0, 0.0]
    mixed = rng.normal(0, 1.0, size=(40, 2)) + [0.0, 50.0]  # classes 2 and 3 interleaved in one blob
    X = np.vstack([a, b, mixed])
    labels = np.array([0] * 20 + [1] * 20 + [2, 3] * 20)
    f = LE.classes_apart(X, labels, n_neighbors=5)
    assert f["classes"] == [0, 1, 2, 3]
    assert f["purity"][:2] == [1.0, 1.0] and f["apart"] == [0, 1]
    assert 0.2 < f["purity"][2] < 0.8 and 0.2 < f["purity"][3] < 0.8 and f["others_max"] == max(f["purity"][2:])
    # on a line of four points labelled 0 0 1 1, the end points' nearest neighbour shares their label, the
    # middle ones' nearest (at distance 1 versus 1.5) does not
    line = np.array([[0.0, 0], [1, 0], [2.5, 0], [3.5, 0]])
    g = LE.classes_apart(line, np.array([0, 0, 1, 1]), n_neighbors=1)
    assert g["purity"] == [1.0, 1.0]
    h = LE.classes_apart(np.array([[0.0, 0], [1, 0], [1.8, 0], [3.5, 0]]), np.array([0, 0, 1, 1]), n_neighbors=1)
    assert h["purity"] == [0.5, 0.5] and h["apart"] == [] and h["others_max"] == 0.5
    assert LE.classes_apart(X, labels, n_neighbors=5, apart=0.0)["apart"] == [0, 1, 2, 3]
    assert np.isnan(LE.classes_apart(X, labels, n_neighbors=5, apart=0.0)["others_max"])
    with pytest.raises(ValueError, match="n_neighbors"):
        LE.classes_apart(X, labels, n_neighbors=len(X))
    with pytest.raises(ValueError, match="labels"):
        LE.classes_apart(X, labels[:-1])


def test_order_along_a_curve_and_a_broken_graph():
    Y, t = helix()
    rho = LE.order_along_roll(Y, t, [(8, 1.0), (1, 1.0)])
    assert rho[0] > 0.99 and math.isnan(rho[1])  # one neighbour each: the graph falls apart


def test_unrolling_facts_keep_a_frame_in_order_from_the_threshold_on():
    Y, t = helix()
    t[[10, 150]] = t[[150, 10]]  # two points scored out of place: the order is nearly, not exactly, kept
    (rho,) = LE.order_along_roll(Y, t, [(8, 1.0)])
    assert 0.9 < rho < 1.0
    f = LE.unrolling_facts(Y, t, [(8, 1.0), (1, 1.0)], in_order=rho)  # exactly at the threshold: in order
    ok, apart = f["frames"]
    assert (ok["k"], ok["t"], ok["rho"], ok["apart"], ok["in_order"]) == (8, 1.0, rho, False, True)
    assert apart["k"] == 1 and apart["apart"] and math.isnan(apart["rho"]) and not apart["in_order"]
    assert f["in_order_from"] == rho
    above = LE.unrolling_facts(Y, t, [(8, 1.0)], in_order=rho + 1e-9)
    assert not above["frames"][0]["in_order"]
    below = LE.unrolling_facts(Y, t, [(8, 1.0), (10, 1.0)], in_order=rho - 1e-9)
    assert all(r["in_order"] for r in below["frames"])
    with pytest.raises(ValueError, match="in_order"):
        LE.unrolling_facts(Y, t, [(8, 1.0)], in_order=1.5)


def test_eta_runs_follow_the_gram_error_and_the_divergence_threshold():
    L = graph_laplacian()
    lam = sla.eigh(L.toarray(), eigvals_only=True)
    slow, fast = 1e-4, 3.0 / lam.max()  # past 2 / (lambda_max - lambda_1) >= 2 / lambda_max: diverges
    marks = {"safe": 0.01, "divergent": 2.0 / (lam.max() - lam[1])}
    f = UI.eta_runs(L, 0.3, [slow, fast], marks, n_steps=200)
    gram = fit_le_elbo(L, 2, 0.3, eta=slow, n_steps=200, seed=0, centre=True).gram_error[-1]
    assert f["etas"] == [slow, fast] and f["diverged"] == [False, True] and f["converged"] == [False, False]
    assert f["diverged_at"][0] is None and f["diverged_at"][1] >= 1
    assert f["gram"][0] == pytest.approx(gram, rel=1e-12) and np.isnan(f["gram"][1])
    assert (f["gram_below"], f["n_steps"], f["safe"], f["divergent"]) == (0.01, 200, 0.01, marks["divergent"])
    assert UI.eta_runs(L, 0.3, [slow], marks, n_steps=200, converged=1.1 * gram)["converged"] == [True]


def test_curvature_facts_are_the_centred_hessians_eigenvalues():
    """At X = 0 the log-det part is I / beta and the trace part -L: the curvatures are 1/beta - lambda over the
    centred eigenvalues lambda of L (each q times), computed here with SciPy; a second iterate only widens the
    range."""
    L, beta = graph_laplacian(n=30), 0.3
    lam = sla.eigh(L.toarray(), eigvals_only=True)[1:]  # the centred directions leave out L's constant eigenvector
    f = UI.curvature_facts(L, beta, [np.zeros((30, 2))])
    assert f["logdet_low"] == pytest.approx(1 / beta) and f["logdet_high"] == pytest.approx(1 / beta)
    assert f["lowest"] == pytest.approx(1 / beta - lam.max()) and f["highest"] == pytest.approx(1 / beta - lam.min())
    assert f["largest"] == pytest.approx(max(abs(1 / beta - lam.max()), abs(1 / beta - lam.min())))
    X = np.random.default_rng(1).normal(size=(30, 2))
    g = UI.curvature_facts(L, beta, [np.zeros((30, 2)), X - X.mean(axis=0)])
    assert g["largest"] >= f["largest"] and g["logdet_low"] < f["logdet_low"]
    assert -1 / (8 * beta) <= g["logdet_low"] and g["logdet_high"] <= 1 / beta + 1e-12


def test_the_eta_slider_is_defined_once():
    """The chapter's eta slider: the kernel panel and the live figure read ETA_SLIDER, and no second literal of its
    range or default appears in the chapter or in the panel's and the live figure's code."""
    import inspect
    from probdr_lite.presentation.figures import unrolling
    from probdr_lite.presentation.live import builders

    src = {"chapter": CHAPTERS["unrolled_inference"].read_text(encoding="utf-8"),
           "panel": inspect.getsource(unrolling.eta_panel), "live": inspect.getsource(builders.eta_live)}
    for where, text in src.items():
        for value in UI.ETA_SLIDER.values():
            assert not re.search(r"(?<![\d.])%s(?![\d])" % re.escape(repr(value)), text), (where, value)
    assert UI.ETA_SLIDER["low"] < UI.ETA_SLIDER["default"] < UI.ETA_SLIDER["high"]


def builders(chapter):
    """The figure, panel and scrub builders ``chapter`` imports from the figures of its topic."""
    tree = ast.parse(CHAPTERS[chapter].read_text(encoding="utf-8"))
    return {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
            and n.module in ("probdr_lite.presentation.figures.neighbourhoods", "probdr_lite.presentation.figures.unrolling")
            for a in n.names if a.name.endswith(("_figure", "_panel", "_scrub"))}  # not its tables and settings


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_chapter_describes_every_figure_it_builds(chapter):
    """A static figure's alt text is the chapter's describe() in the cell that builds it, before the figure is shown;
    a panel's or a scrub's is the ``alt`` the chapter writes out in its call."""
    names = builders(chapter)
    figures = {b for b in names if b.endswith("_figure")}
    assert figures and names - figures
    for cell in source_cells(CHAPTERS[chapter]):
        for i, node in enumerate(cell.body):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in figures):
                continue
            target = node.targets[0]
            fig = (target.elts[0] if isinstance(target, ast.Tuple) else target).id
            later = [ast.unparse(n) for n in cell.body[i + 1:]]
            described = [k for k, text in enumerate(later) if text.startswith(f"describe({fig}, ")]
            shown = [k for k, text in enumerate(later) if text == "plt.show()"]
            assert described and (not shown or described[0] < shown[0]), f"line {node.lineno}: {fig} undescribed"
    for builder in names - figures:
        for call in chapter_calls(chapter, builder):
            assert words_passed(call, "alt").endswith(".")


# (function, keyword) pairs whose value is a setting of the ELBO chapter, and the settings module that holds it
SET_UP_KEYWORDS = {("load_mnist", "n"), ("knn_graph", "n_neighbors"), ("beta_panel", "n_show"),
                   ("beta_live", "n_show"), ("eta_panel", "n_steps"), ("eta_live", "n_steps"), ("eta_runs", "n_steps")}


def set_up_literals(source: str) -> list:
    """Calls in ``source`` that type a number where the ELBO set-up (chapters.probdr_elbo.SETUP, figures.elbo.N_SHOW,
    chapters.unrolled_inference.N_STEPS) should be read: a keyword of SET_UP_KEYWORDS given a literal, or a literal
    beta passed to step_sizes."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", None))
        found += [(name, kw.arg) for kw in node.keywords
                  if (name, kw.arg) in SET_UP_KEYWORDS and isinstance(kw.value, ast.Constant)]
        if name == "step_sizes" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            found.append((name, "beta"))
    return found


@pytest.mark.parametrize("chapter", ["probdr_elbo", "unrolled_inference", "transformer_block"])
def test_the_elbo_set_up_is_read_from_one_place(chapter):
    """Chapters 3 to 5 load their digits, build their graph, set beta and the runs' length from the settings modules;
    none types one of those numbers into a call (a changed setting then changes every page that uses it)."""
    source = (ROOT / "book" / "src" / f"{chapter}.py").read_text(encoding="utf-8")
    assert set_up_literals(source) == [], chapter
    assert "SETUP" in source


def test_a_set_up_literal_is_caught():
    sample = "load_mnist(n=300)\nknn_graph(Y, n_neighbors=10)\nstep_sizes(L, 0.3, n_components=2)\neta_runs(n_steps=N)"
    assert set_up_literals(sample) == [("load_mnist", "n"), ("knn_graph", "n_neighbors"), ("step_sizes", "beta")]
