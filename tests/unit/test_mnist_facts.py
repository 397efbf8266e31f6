"""The MNIST chapter's facts (probdr_lite/chapters/mnist_at_init.py) and the templates of its cells that state them.

Each fact is checked against the numbers it comes from, computed again here, and each word or boolean on numbers
just either side of its threshold in :data:`~probdr_lite.chapters.mnist_at_init.WORDS`, so a choice that the numbers do
not support is not made. The last tests read ``book/src/mnist_at_init.py`` and fill every piece of every template
(every branch of each ``... if facts["x"] else ...``) from the facts the cell passes, so a slot without a fact, or a
formatter that does not fit its fact, fails here rather than in the book build.
"""

import ast
import re
import statistics
from pathlib import Path

import numpy as np
import pytest

from probdr_lite.chapters import mnist_at_init as MT
from probdr_lite.presentation.style import METRIC_LABELS
from probdr_lite.unrolled import CHAPTER_VARIANTS

from .chapter_calls import check_template, source_cells

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "mnist_at_init.py"
W = MT.WORDS


def rows_for(variant, values, n=100):
    """Tidy rows {variant, n, layer, metric...}; ``values`` maps metric -> list over layers."""
    layers = len(next(iter(values.values())))
    return [{"variant": variant, "n": n, "layer": t, **{m: v[t] for m, v in values.items()}} for t in range(layers)]


def paper_rows(knn, bw, sil, nmi, n=100):
    return rows_for("paper", {"knn_accuracy": knn, "between_within": bw, "silhouette": sil, "kmeans_nmi": nmi}, n)


def numbers(knn=(0.9, 0.8, 0.7), bw=(0.7, 1.0, 1.5), sil=(0.04, 0.06, 0.01), nmi=(0.43, 0.5, 0.47)):
    return MT.paper_numbers(paper_rows(list(knn), list(bw), list(sil), list(nmi)), len(knn) - 1)


FINALS = {"attention": 0.85, "diffusion": 0.80, "paper": 0.805, "exact": 0.82, "symmetric": 0.83}


def variant_rows(finals=FINALS, bw_final=None, sil_final=None, nmi_final=None):
    """Three layers of every chapter variant from one start (k-NN 0.87, ratio 0.76), ending at ``finals``."""
    rows = []
    for v in CHAPTER_VARIANTS:
        rows += rows_for(v, {"knn_accuracy": [0.87, 0.86, finals[v]],
                             "silhouette": [0.04, 0.05, (sil_final or {}).get(v, 0.03)],
                             "between_within": [0.76, 1.0, (bw_final or {}).get(v, 1.4)],
                             "kmeans_nmi": [0.43, 0.45, (nmi_final or {}).get(v, 0.47)]}, n=2000)
    return rows


SEEDS = np.array([0.47, 0.48, 0.46, 0.47, 0.49])


# ---------------------------------------------------------------------------------------------------------------------
# The facts and their words


def test_numbers_facts_state_the_numbers_and_their_words():
    f = MT.numbers_facts(numbers())
    assert (f["n"], f["n_layers"], f["bw0"], f["bw8"], f["knn0"], f["knn8"]) == (100, 2, 0.7, 1.5, 0.9, 0.7)
    assert (f["sil_first"], f["sil_last"], f["sil_peak"], f["sil_peak_value"]) == (0.04, 0.01, 1, 0.06)
    assert (f["nmi_first"], f["nmi_last"], f["nmi_peak"], f["nmi_peak_value"]) == (0.43, 0.47, 1, 0.5)
    assert f["bw_direction"] == "up" and f["knn_direction"] == "down"
    assert f["centres_apart"] and f["knn_lower"] and f["silhouette_small"]
    assert f["sil_peaks_inside"] and f["nmi_peaks_inside"] and f["both_peak_early"]
    flat = MT.numbers_facts(numbers(knn=(0.9, 0.9, 0.905), bw=(0.7, 0.7, 0.703), sil=(0.3, 0.4, 0.5),
                                    nmi=(0.4, 0.5, 0.6)))
    assert flat["bw_direction"] == flat["knn_direction"] == "flat"
    assert not (flat["centres_apart"] or flat["knn_lower"] or flat["silhouette_small"])
    assert not (flat["sil_peaks_inside"] or flat["nmi_peaks_inside"] or flat["both_peak_early"])


@pytest.mark.parametrize("side", [0.9, 1.1])
def test_numbers_facts_words_turn_at_their_thresholds(side):
    """Just inside a threshold (side 0.9) the word is not chosen; just beyond it (1.1) it is."""
    beyond = side > 1
    f = MT.numbers_facts(numbers(bw=(1.0, 1.0, 1.0 + side * W["trend"]),
                                 knn=(0.9, 0.9, 0.9 - side * W["knn_change"]),
                                 sil=(0.1, W["small_silhouette"] * (2 - side), 0.1)))
    assert f["centres_apart"] is beyond and (f["bw_direction"] == "up") is beyond
    assert f["knn_lower"] is beyond
    assert f["silhouette_small"] is beyond  # 0.9: the largest silhouette is above the bound, 1.1: below it
    one_early = MT.numbers_facts(numbers(sil=(0.1, 0.2, 0.3)))  # the silhouette peaks at the last block
    assert not one_early["sil_peaks_inside"] and one_early["nmi_peaks_inside"] and not one_early["both_peak_early"]


def test_variants_facts():
    f = MT.variants_facts(variant_rows(), 2, SEEDS, 0.4, 128, 1.0)
    assert (f["n_sub"], f["n_layers"], f["att"], f["dif"], f["knn_sub0"]) == (2000, 2, 0.85, 0.80, 0.87)
    assert [r["metric"] for r in f["metrics"]] == list(METRIC_LABELS)
    knn = f["metrics"][0]
    assert (knn["metric"], knn["best"], knn["best_value"], knn["low"], knn["high"]) == (
        "knn_accuracy", "attention", 0.85, 0.80, 0.85)
    assert f["nmi_sd"] == pytest.approx(statistics.stdev(SEEDS.tolist()))
    assert f["eta_equiv"] == pytest.approx(0.4 / 1.8) and f["ff_weight"] == pytest.approx(0.8 / 129)
    # all NMIs equal: within k-means' noise; the rule is the NMI's only
    assert [r["within_noise"] for r in f["metrics"]] == [m == "kmeans_nmi" for m in METRIC_LABELS]
    assert f["attention_smaller_step"] and f["paper_near_diffusion"] and f["none_purer"] and f["all_clump"]


def test_variants_facts_choices_turn_at_their_thresholds():
    base = MT.variants_facts(variant_rows(), 2, SEEDS, 0.4, 128, 1.0)
    assert base["none_purer"]
    noise = 2 * statistics.stdev(SEEDS.tolist())
    for side, beyond in ((0.9, False), (1.1, True)):
        purer = {**FINALS, "exact": 0.87 + side * W["no_purer"]}
        f = MT.variants_facts(variant_rows(purer), 2, SEEDS, 0.4, 128, 1.0)
        assert f["none_purer"] is not beyond and f["best_knn"] == "exact"
        apart = {**FINALS, "paper": 0.80 + side * W["indistinguishable"]}
        assert MT.variants_facts(variant_rows(apart), 2, SEEDS, 0.4, 128, 1.0)["paper_near_diffusion"] is not beyond
        spread = {"attention": 0.47 + side * noise}  # the variants' NMI range against two sd of k-means
        f = MT.variants_facts(variant_rows(nmi_final=spread), 2, SEEDS, 0.4, 128, 1.0)
        assert f["metrics"][-1]["within_noise"] is not beyond
    slower = MT.variants_facts(variant_rows({**FINALS, "attention": 0.79}), 2, SEEDS, 0.4, 128, 1.0)
    assert not slower["attention_smaller_step"]
    flat = MT.variants_facts(variant_rows(bw_final={"symmetric": 0.76}), 2, SEEDS, 0.4, 128, 1.0)
    assert not flat["all_clump"]  # one variant that does not raise the ratio is enough


def test_step_family_facts():
    rows_var = variant_rows()
    at_dif = {m: float(rows_var[3 * CHAPTER_VARIANTS.index("diffusion") + 2][m]) for m in METRIC_LABELS}
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.5}
    family = {0.8: {**at_dif, "knn_accuracy": at_dif["knn_accuracy"] + 0.05, "silhouette": at_dif["silhouette"] - 0.01,
                    "kmeans_nmi": at_dif["kmeans_nmi"] - 0.015},
              4.0: {**at_dif, "silhouette": at_dif["silhouette"] + 1e-7}, 3.5: at_dif}
    f = MT.step_family_facts(family, steps, rows_var, SEEDS, 2)
    assert (f["s_attention"], f["s_diffusion"], f["s_paper"]) == (0.8, 4.0, 3.5)
    assert f["agreement"] == pytest.approx(1e-7)
    assert f["knn_accuracy_change"] == pytest.approx(-0.05) and f["knn_accuracy_direction"] == "lower"
    assert f["silhouette_change"] == pytest.approx(0.01 + 1e-7) and f["silhouette_direction"] == "higher"
    assert f["between_within_change"] == 0.0 and f["between_within_direction"] == "unchanged"
    noise = 2 * statistics.stdev(SEEDS.tolist())  # 0.0228
    assert f["kmeans_nmi_change"] == pytest.approx(0.015) and f["nmi_within_noise"] and 0.015 < noise
    family[0.8]["kmeans_nmi"] = at_dif["kmeans_nmi"] - 1.1 * noise
    assert not MT.step_family_facts(family, steps, rows_var, SEEDS, 2)["nmi_within_noise"]


def test_picture_facts():
    p = numbers()  # full-space k-NN 0.9 -> 0.7
    for side, beyond in ((0.9, False), (1.1, True)):
        f = MT.picture_facts(p, {0: 0.3, 2: 0.3 + side * W["picture_better"]})
        assert f["picture_better"] is beyond and (f["k0"], f["knn0"], f["knn8"], f["n_layers"]) == (0.3, 0.9, 0.7, 2)
        f = MT.picture_facts(numbers(knn=(0.9, 0.8, 0.9 - side * W["knn_change"])), {0: 0.3, 2: 0.3})
        assert f["knn_fell"] is beyond


def sweep_grid(bw_row, knn_row, top_first=0.8):
    kappas, etas = (1.0, 10.0, 30.0, 1000.0), (0.2, 0.4, 0.45)
    grid = {"between_within": np.full((3, 4), 0.75), "knn_accuracy": np.full((3, 4), 0.8),
            "between_within@0": 0.75, "knn_accuracy@0": 0.8}
    grid["between_within"][1] = 0.75 + np.asarray(bw_row)
    grid["knn_accuracy"][1] = 0.8 + np.asarray(knn_row)
    grid["knn_accuracy"][-1, 0] = top_first
    return grid, kappas, etas


def test_sweep_facts():
    grid, kappas, etas = sweep_grid([0.01, 0.5, 0.2, -0.02], [0.0, -0.1, 0.0, 0.0], top_first=0.6)
    f = MT.sweep_facts(grid, kappas, etas, 0.4)
    assert (f["eta"], f["kappa_first"], f["kappa_last"], f["kappa_peak"]) == (0.4, 1.0, 1000.0, 10.0)
    assert f["bw_first"] == pytest.approx(0.01) and f["bw_last"] == pytest.approx(-0.02)
    assert f["bw_peak"] == pytest.approx(0.5) and f["knn_peak"] == pytest.approx(-0.1)
    assert f["eta_top"] == 0.45 and f["own_share"] == pytest.approx(0.1) and f["knn_top"] == 0.6
    assert f["ends_small"] and f["peak_less_pure"] and f["top_row_collapses"]


@pytest.mark.parametrize("side", [0.9, 1.1])
def test_sweep_facts_choices_turn_at_their_thresholds(side):
    beyond = side > 1
    grid, kappas, etas = sweep_grid([side * W["ends_small"] * 0.5, 0.5, 0.2, 0.0], [0.0, -side * W["sweep_knn"], 0, 0],
                                    top_first=0.8 - side * W["top_row_drop"])
    f = MT.sweep_facts(grid, kappas, etas, 0.4)
    assert f["ends_small"] is not beyond and f["peak_less_pure"] is beyond and f["top_row_collapses"] is beyond


def test_summary_facts():
    f = MT.summary_facts(numbers(), variant_rows())
    assert f["clumps"] and not f["purer"] and f["both_peak_early"] and f["plain_attention_clumps"]
    assert not f["a_minus_i_best"]  # plain attention ends highest on k-NN accuracy
    for side, beyond in ((0.9, False), (1.1, True)):
        assert MT.summary_facts(numbers(knn=(0.9, 0.9, 0.9 + side * W["no_purer"])), variant_rows())["purer"] is beyond
    assert not MT.summary_facts(numbers(bw=(0.7, 0.8, 0.7)), variant_rows())["clumps"]
    best = variant_rows({**FINALS, "diffusion": 0.9}, sil_final={"paper": 0.2})
    assert MT.summary_facts(numbers(), best)["a_minus_i_best"]
    only_knn = variant_rows({**FINALS, "diffusion": 0.9}, sil_final={"symmetric": 0.2})
    assert not MT.summary_facts(numbers(), only_knn)["a_minus_i_best"]
    flat = variant_rows(bw_final={"attention": 0.76})
    assert not MT.summary_facts(numbers(), flat)["plain_attention_clumps"]


def test_pixel_facts():
    near = MT.pixel_facts(0.970, 0.970 * (1 - 0.9 * W["same_accuracy"]))
    far = MT.pixel_facts(0.970, 0.970 * (1 - 1.1 * W["same_accuracy"]))
    assert near["same"] and not far["same"] and near["knn_pixels"] == 0.970 and near["same_accuracy"] == 0.01


def live_grid(half_widths, moved, kappas):
    """One eta and beta; frame k after the last block is the points (+-w, 0), so its rms spread is w."""
    K, L = len(kappas), 2
    xy = np.zeros((K, 1, 1, L + 1, 4, 2))
    for k, w in enumerate(half_widths):
        xy[k, 0, 0, L, :, 0] = [w, -w, w, -w]
    grid = {"xy": xy, "moved": np.zeros((K, 1, 1, L + 1)), "spread": np.ones((K, 1, 1, L + 1)),
            "ratio": np.tile(np.linspace(0.8, 1.2, L + 1), (K, 1, 1, 1))}
    grid["moved"][:, 0, 0, L] = moved
    grid["ratio"][3, 0, 0, L] = 1.5
    return grid


def test_live_facts_cases_follow_the_figures_own_tests():
    spot = 0.05
    kappas = (0.3, 1.0, 30.0, 100.0, 3000.0)
    widths = [0.9 * spot, 1.1 * spot, 1.0, 1.0, 1.0]  # a spot only below the figure's spot width
    moved = [0.5, 0.5, 0.5, 0.5, 0.9 * W["still"]]  # the starting spread is 1: still below WORDS["still"]
    f = MT.live_facts(live_grid(widths, moved, kappas), kappas, (0, 0, 0), 2, eta=0.4, beta=1.0, spot_width=spot)
    assert [(g["case"], g["kappas"]) for g in f["groups"]] == [("spot", [0.3]), ("move", [1.0, 30.0, 100.0]),
                                                               ("still", [3000.0])]
    assert f["groups"][1]["ratios"] == pytest.approx([1.2, 1.2, 1.5]) and f["groups"][0]["ratio_start"] == 0.8
    moved[-1] = 1.1 * W["still"]
    f = MT.live_facts(live_grid(widths, moved, kappas), kappas, (0, 0, 0), 2, eta=0.4, beta=1.0, spot_width=spot)
    assert [g["case"] for g in f["groups"]] == ["spot", "move"]


# ---------------------------------------------------------------------------------------------------------------------
# The chapter's templates


def facts_examples():
    """Each facts function the chapter calls, on numbers for which every choice above holds at least once."""
    grid, kappas, etas = sweep_grid([0.01, 0.5, 0.2, -0.02], [0.0, -0.1, 0.0, 0.0])
    rows_var = variant_rows()
    at_dif = {m: rows_var[3 * CHAPTER_VARIANTS.index("diffusion") + 2][m] for m in METRIC_LABELS}
    return {
        "paper_numbers": numbers(),
        "numbers_facts": MT.numbers_facts(numbers()),
        "variants_facts": MT.variants_facts(rows_var, 2, SEEDS, 0.4, 128, 1.0),
        "step_family_facts": MT.step_family_facts({0.8: at_dif, 4.0: at_dif, 3.5: at_dif},
                                                  {"attention": 0.8, "diffusion": 4.0, "paper": 3.5}, rows_var,
                                                  SEEDS, 2),
        "picture_facts": MT.picture_facts(numbers(), {0: 0.3, 2: 0.6}),
        "sweep_facts": MT.sweep_facts(grid, kappas, etas, 0.4),
        "summary_facts": MT.summary_facts(numbers(), rows_var),
        "pixel_facts": MT.pixel_facts(0.97, 0.95),
    }


def chapter_cells():
    """The chapter's cells, parsed, with the line numbers of the chapter's source."""
    return source_cells(CHAPTER)


#: The presentation names a template's facts may be looked up in (a metric's key -> its label).
PRESENTATION = {"METRIC_LABELS": METRIC_LABELS}


def fill_calls():
    """Every ``fill(template, facts, **more)`` of the chapter, with the facts dict it gets (a name bound in its cell
    to a ``*_facts(...)`` call, such a call itself, or the loop variable of ``for x in facts["key"]``, each element of
    the list in turn) and the value of each subscript ``facts["x"]`` in its template."""
    examples = facts_examples()
    calls = []
    for cell in chapter_cells():
        bound = {}
        for node in ast.walk(cell):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in examples:
                bound.update({t.id: [examples[node.value.func.id]] for t in node.targets if isinstance(t, ast.Name)})
        for node in ast.walk(cell):  # a loop over a list of facts binds each element
            if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Subscript) \
                    and isinstance(node.iter.value, ast.Name) and node.iter.value.id in bound:
                bound[node.target.id] = list(bound[node.iter.value.id][0][node.iter.slice.value])
        alts = {id(n.args[1]) for n in ast.walk(cell) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id == "describe"}  # a figure's alt text: test_middle_chapters_facts.py fills those
        for node in ast.walk(cell):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "fill") \
                    or id(node) in alts:
                continue
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in bound and len(bound[n.id]) > 1}
            assert len(names) <= 1, f"line {node.lineno}: one loop at a time"
            for k in range(len(bound[next(iter(names))]) if names else 1):
                def value(expr):
                    if isinstance(expr, ast.Name) and expr.id not in bound and expr.id in PRESENTATION:
                        return PRESENTATION[expr.id]
                    if isinstance(expr, ast.Name):
                        return bound[expr.id][k if expr.id in names else 0]
                    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in examples:
                        return examples[expr.func.id]
                    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
                        key = expr.slice.value if isinstance(expr.slice, ast.Constant) else value(expr.slice)
                        return value(expr.value)[key]
                    raise AssertionError(f"line {expr.lineno}: cannot tell which facts {ast.unparse(expr)} are")

                facts = {**value(node.args[1]), **{kw.arg: value(kw.value) for kw in node.keywords}}
                choices = {ast.unparse(s): value(s) for s in ast.walk(node.args[0]) if isinstance(s, ast.Subscript)}
                calls.append((node, facts, choices))
    return calls


#: The MNIST experiment's names in probdr_lite.chapters.mnist_at_init: the chapter's runs, not facts.
EXPERIMENT = {"PAPER", "MnistSettings", "SMALL_N", "mnist_latents", "run_blocks", "variant_metrics",
              "kmeans_nmi_spread", "pick", "sweep"}


def test_the_chapter_writes_its_computed_sentences_as_fill_templates():
    """What the chapter takes from its module's facts is numbers and facts, and it passes every facts function to
    fill (the module's experiment, which the chapter also imports, is left aside)."""
    source = CHAPTER.read_text(encoding="utf-8")
    imported = {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)
                and n.module == "probdr_lite.chapters.mnist_at_init" for a in n.names} - EXPERIMENT
    assert imported and imported <= set(facts_examples()), imported
    passed = {n.func.id for c, _, _ in fill_calls() for n in ast.walk(c.args[1]) if isinstance(n, ast.Call)}
    passed |= {n.value.func.id for cell in chapter_cells() for n in ast.walk(cell) if isinstance(n, ast.Assign)
               and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
               and n.value.func.id.endswith("_facts")}
    assert {f for f in imported if f.endswith("_facts")} <= passed


def test_every_template_of_the_chapter_fills_from_its_facts():
    calls = fill_calls()
    assert len({c.lineno for c, _, _ in calls}) >= 10  # eight paragraphs, the variants' header and bullets
    for call, facts, choices in calls:
        check_template(call, facts, choices)
