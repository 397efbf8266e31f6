"""The objections chapter's verdicts: facts from probdr_lite/chapters/objections.py, sentences in the chapter.

Each fact is checked against the numbers it comes from, computed again here (numpy's min, max, mean, sd, arccos),
and each boolean a verdict rests on (and the verdict key that sums them up) on numbers just either side of its
threshold of :data:`probdr_lite.chapters.objections.THRESHOLDS`. The chapter's words are its Markdown; its claim
cells, which check these booleans beside each verdict, are tested in test_claims_objections.py.
"""

import math

import numpy as np
import pytest

from probdr_lite.chapters import objections as V
from probdr_lite.metrics import METRIC_NAMES
from probdr_lite.chapters.objections import THRESHOLDS

from .test_objections import metrics_dict

T = THRESHOLDS


def path_numbers(full, tangent, full_cos=None, remainder=None):
    """The keys of objections.asymmetry_along_path that the verdict reads, per step."""
    full, tangent = np.array(full, dtype=float), np.array(tangent, dtype=float)
    return {"relative_difference": full, "tangent_cosine": tangent,
            "cosine": np.array(full_cos if full_cos is not None else [0.9] * full.size, dtype=float),
            "tangent_remainder_share": np.array(remainder if remainder is not None else [0.1] * full.size)}


def degrees(cos):
    return [math.degrees(math.acos(c)) for c in cos]


# ---------------------------------------------------------------------------------------------------------------------
# Objection 1


def test_asymmetry_facts_state_the_ranges_and_angles():
    m = path_numbers([0.4, 0.7], [0.96, 0.95], [0.9, 0.7], [0.12, 0.2])
    c = path_numbers([0.5, 0.9], [0.97, 0.93], [0.8, 0.6], [0.5, 0.6])
    f = V.asymmetry_facts(m, c, [1e-4, 3e-3], [1, 30])
    assert (f["rel_m_lo"], f["rel_m_hi"], f["rel_c_lo"], f["rel_c_hi"]) == (0.4, 0.7, 0.5, 0.9)
    assert (f["tan_m_lo"], f["tan_m_hi"], f["tan_c_lo"], f["tan_c_hi"]) == (0.95, 0.96, 0.93, 0.97)
    assert (f["rem_m_lo"], f["rem_m_hi"], f["rem_c_lo"], f["rem_c_hi"]) == (0.12, 0.2, 0.5, 0.6)
    assert f["deg_m_lo"] == pytest.approx(min(degrees([0.9, 0.7]))) and f["deg_c_hi"] == pytest.approx(
        max(degrees([0.8, 0.6])))
    assert f["tdeg_m_hi"] == pytest.approx(max(degrees([0.96, 0.95])))
    assert not any(f[f"{k}_one"] for k in ("rel_m", "rel_c", "deg_m", "tan_m", "tan_c", "rem_m"))
    assert (f["kappa_min"], f["kappa_max"], f["random_max"]) == (1.0, 30.0, 3e-3)
    assert (f["threshold"], f["tangent_threshold"]) == (T["asymmetry"], T["tangent_cosine"])
    assert f["radial"]  # the tangent angles (at most 22°) are smaller than the full-space ones (up to 53°)
    wide = path_numbers([0.4, 0.7], [0.5, 0.6], [0.9, 0.95])
    assert not V.asymmetry_facts(wide, wide, [1e-4], [1])["radial"]


def test_asymmetry_ranges_are_one_number_when_their_ends_print_alike():
    m = path_numbers([0.401, 0.404], [0.9601, 0.9604], [0.9, 0.9], [0.2, 0.2])
    f = V.asymmetry_facts(m, m, [1e-4], [1])
    assert f["rel_m_one"] and f["tan_m_one"] and f["deg_m_one"] and f["rem_m_one"]  # 40 %, 0.960, 26°, 20 %
    m = path_numbers([0.40, 0.41], [0.960, 0.961], [0.9, 0.89], [0.2, 0.21])
    f = V.asymmetry_facts(m, m, [1e-4], [1])
    assert not (f["rel_m_one"] or f["tan_m_one"] or f["deg_m_one"] or f["rem_m_one"])


@pytest.mark.parametrize("side", [0.9, 1.1])
def test_asymmetry_verdict_turns_at_both_thresholds(side):
    beyond = side > 1
    t, tc = T["asymmetry"], T["tangent_cosine"]
    same_tangent = 1 - (1 - tc) * 0.5  # well inside the tangent threshold
    full = path_numbers([0.0, side * t], [same_tangent, same_tangent])
    f = V.asymmetry_facts(full, full, [1e-4], [1])
    assert f["full"] is beyond and not f["tangent"]
    tangent = path_numbers([0.0, 0.5 * t], [1.0, 1 - side * (1 - tc)])
    f = V.asymmetry_facts(tangent, tangent, [1e-4], [1])
    assert f["tangent"] is beyond and not f["full"]
    both = path_numbers([side * t], [1 - side * (1 - tc)])
    f = V.asymmetry_facts(both, both, [1e-4], [1])
    assert f["full"] is beyond and f["tangent"] is beyond
    # one space's step beyond the threshold is enough, in either mask
    assert V.asymmetry_facts(path_numbers([0.0], [1.0]), full, [1e-4], [1])["full"] is beyond
    assert V.asymmetry_facts(path_numbers([side * t], [1.0]), path_numbers([0.0], [1.0]), [side * t],
                             [1])["random_below"] is not beyond


def test_asymmetry_facts_bad_input():
    m = path_numbers([0.4], [0.9])
    with pytest.raises(ValueError, match="random_by_kappa"):
        V.asymmetry_facts(m, m, [1e-4], [1, 30])
    with pytest.raises(ValueError, match="mnist"):
        V.asymmetry_facts({"relative_difference": [0.4], "tangent_cosine": [0.9]}, m, [1e-4], [1])


# ---------------------------------------------------------------------------------------------------------------------
# Objection 2


def test_wishart_facts_count_the_steps():
    f = V.wishart_facts([-0.1, 0.01, -0.02], [1e-16, 0.3, 0.2], [0.011, 0.01], 0.01)
    assert (f["n_steps"], f["n_null"], f["n_negative"], f["n_singular"]) == (3, 3, 2, 1)
    assert f["any_negative"] and not f["all_negative"] and f["any_singular"] and not f["all_singular"]
    assert (f["min_rw"], f["null_max"], f["sym_min"], f["gamma"]) == (-0.1, 0.3, 0.01, 0.01)
    assert f["holds"] and f["valid_sym"] and f["tol"] == T["eigen_tol"]
    f = V.wishart_facts([-0.1, -0.01], [1e-16, 1e-16], [0.01], 0.01)
    assert f["all_negative"] and f["all_singular"]


@pytest.mark.parametrize("side", [0.9, 1.1])
def test_wishart_facts_turn_at_the_tolerance(side):
    beyond = side > 1
    tol = T["eigen_tol"]
    negative = V.wishart_facts([-side * tol], [1.0], [1.0], 0.01)
    assert negative["any_negative"] is beyond and negative["holds"] is beyond
    singular = V.wishart_facts([1.0], [tol / side], [1.0], 0.01)  # a residual below tol is zero
    assert singular["any_singular"] is beyond and singular["holds"] is beyond
    assert V.wishart_facts([1.0], [1.0], [side * tol, 1.0], 0.01)["valid_sym"] is beyond
    with pytest.raises(ValueError, match="min_eig_rw"):
        V.wishart_facts([], [1.0], [1.0], 0.01)


# ---------------------------------------------------------------------------------------------------------------------
# Objection 3


def test_stop_gradient_facts_state_the_cosines_per_kappa():
    cos = np.array([[0.99, 0.97, 0.98], [-0.5, -0.7, -0.6]])
    rises = np.array([[1.0, 2.0, 3.0], [-1.0, 1.0, -1.0]])
    f = V.stop_gradient_facts([1, 30], cos, rises, np.full((2, 3), 1e-14))
    assert [r["kappa"] for r in f["per_kappa"]] == [1.0, 30.0] and f["n_seeds"] == 3
    assert [r["mean"] for r in f["per_kappa"]] == pytest.approx(cos.mean(1))
    assert [r["sd"] for r in f["per_kappa"]] == pytest.approx(np.std(cos, axis=1, ddof=1))
    assert [r["rises"] for r in f["per_kappa"]] == [3, 1]
    assert f["good"] == [1.0] and f["bad"] == [30.0]
    assert f["depends"] and not (f["all_pass"] or f["none_pass"])
    assert f["paper_kappa"] == 30 and f["paper_fails"] and not f["paper_passes"]
    assert f["exact_phi"] and f["gap_max"] == 1e-14
    one_seed = V.stop_gradient_facts([1], [[0.99]], [[1.0]], [[1e-14]])
    assert one_seed["per_kappa"][0]["sd"] == 0.0


@pytest.mark.parametrize("side", [0.9, 1.1])
def test_stop_gradient_facts_turn_at_their_thresholds(side):
    beyond = side > 1
    t, ident = T["cosine"], T["identity"]
    up = [[1.0, 1.0]]
    f = V.stop_gradient_facts([30], [[side * t, side * t]], up, [[ident / side, 0.0]])
    assert f["all_pass"] is beyond and f["none_pass"] is not beyond and f["paper_passes"] is beyond
    assert f["exact_phi"] is beyond  # a gap below the identity threshold: the step is Phi's exact gradient step
    assert not f["depends"] and f["threshold"] == t and f["identity"] == ident
    # a high cosine is not enough if one seed's small step lowers F_full
    assert V.stop_gradient_facts([30], [[1.0, 1.0]], [[1.0, -side]], [[0.0, 0.0]])["none_pass"]
    three = V.stop_gradient_facts([1, 3, 30], [[1.0], [side * t], [0.0]], [[1.0]] * 3, [[0.0]] * 3)
    assert three["good"] == ([1.0, 3.0] if beyond else [1.0])
    assert three["depends"] and three["bad"] == ([30.0] if beyond else [3.0, 30.0])


def test_stop_gradient_facts_bad_input():
    with pytest.raises(ValueError, match="cos_sg"):
        V.stop_gradient_facts([1, 3, 10], [[1, 1], [1, 1]], [[1, 1], [1, 1]], [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="phi_gap"):
        V.stop_gradient_facts([1, 30], [[1, 1], [1, 1]], [[1, 1], [1, 1]], [1e-14])


# ---------------------------------------------------------------------------------------------------------------------
# Objection 4


def test_regulariser_facts_state_the_errors_over_n():
    err = np.array([[0.05, 0.07], [0.4, 0.6]])  # (n, seeds)
    f = V.regulariser_facts([8, 32], err, 128, 4.0, 0.3, 2000)
    assert [r["n"] for r in f["per_n"]] == [8, 32] and [r["error"] for r in f["per_n"]] == pytest.approx([0.06, 0.5])
    assert f["good"] == [8] and f["bad"] == [32] and f["any_good"] and f["both_sides"]
    assert (f["error_min"], f["error_max"]) == pytest.approx((0.06, 0.5))
    assert (f["mnist_n"], f["mnist_error"], f["mnist_cosine"], f["d_q"]) == (2000, 4.0, 0.3, 128)
    assert f["depends"] and not (f["holds"] or f["fails"])
    # n_ok is where the small-n error d_q / (d_q + beta) sqrt((n - 1) / (d_q - 1)) reaches the threshold
    assert 128 / 129 * math.sqrt((f["n_ok"] - 1) / 127) == pytest.approx(T["approx_error"])
    assert f["dq_per_n"] == pytest.approx(1 / T["approx_error"] ** 2)


@pytest.mark.parametrize("side", [0.9, 1.1])
def test_regulariser_verdict_turns_at_the_threshold(side):
    beyond = side > 1
    t = T["approx_error"]
    f = V.regulariser_facts([8, 32], [0.01, side * t], 128, 0.01, 0.99, 2000)
    assert f["depends"] is beyond and f["fails"] is not beyond and f["both_sides"] is beyond
    f = V.regulariser_facts([8, 32], [side * t, 1.0], 128, 1.0, 0.5, 2000)
    assert f["holds"] is beyond and f["depends"] is not beyond and f["any_good"] is not beyond
    f = V.regulariser_facts([8], [0.01], 128, side * t, 0.9, 2000)  # the MNIST latents alone
    assert f["depends"] is beyond and f["fails"] is not beyond
    with pytest.raises(ValueError, match="rel_err"):
        V.regulariser_facts([8, 32], [0.01], 128, 0.01, 0.9, 2000)


# ---------------------------------------------------------------------------------------------------------------------
# Objection 5


def _cell(task, init, diffs, verdict="cannot tell"):
    d = np.asarray(diffs, dtype=float)
    lower = task == "charlm"
    better = int(np.sum(d < 0 if lower else d > 0))
    worse = int(np.sum(d > 0 if lower else d < 0))
    return {"task": task, "init": init, "n": len(d), "n_better": better, "n_worse": worse, "verdict": verdict,
            "differences": d}


def _runs(cells, cis):
    return {"round": cells, "interaction": [{"task": t, "budget": b, "ci": ci} for (t, b), ci in cis.items()]}


def test_single_runs_facts_count_the_cells_and_read_the_interaction():
    cells = [_cell("charlm", "gpt2", [0.05, 0.06, 0.04], "worse"),
             _cell("charlm", "default", [-0.01, 0.02, -0.03]),
             _cell("vit", "default", [0.0, 0.01, -0.01])]
    cis = {("charlm", "early"): (-0.1, -0.05), ("vit", "early"): (0.02, 0.08)}
    f = V.single_runs_facts(_runs(cells, cis))
    assert f["n_cells"] == 3 and f["n_mixed"] == 2 and [c["mixed"] for c in f["cells"]] == [False, True, True]
    assert f["mixed_inits"] == ["default"] and f["one_way_inits"] == ["gpt2"] and f["depends_on_init"]
    assert f["verdicts"][("charlm", "gpt2")] == "worse"
    # an interval of the initialisation's effect that holds zero: the sign need not depend on the initialisation
    g = V.single_runs_facts(_runs(cells, {**cis, ("vit", "plateau"): (-0.01, 0.08)}))
    assert not g["depends_on_init"] and g["interaction_ci"][("vit", "plateau")] == (-0.01, 0.08)


# ---------------------------------------------------------------------------------------------------------------------
# Minor objection 1


KNN_FOLDS = (np.array([0.87, 0.88, 0.875]), np.array([0.70, 0.72, 0.71]))  # the k-NN accuracy over fold seeds


@pytest.mark.parametrize("overlap", [False, True])
def test_clustering_facts_read_the_nmi_by_the_mnist_chapters_rule(overlap):
    """The NMI rises only when its lowest run at the last layer lies above its highest at the first: runs of +-0.01
    around 0.40 and 0.43 do not overlap, runs of +-0.02 do (the seeds cannot tell: "flat")."""
    first, last = [0.5, 0.1, 1.0, 0.40], [0.5, 0.1, 1.0, 0.43]
    f = V.clustering_facts(metrics_dict((first, last), (first, first), nmi_spread=0.02 if overlap else 0.01),
                           *KNN_FOLDS[:1] * 2)
    nmi = {r["metric"]: r for r in f["metrics"]}["kmeans_nmi"]
    assert nmi["direction"] == ("flat" if overlap else "up")
    assert f["up"] == ([] if overlap else ["kmeans_nmi"]) and f["any_up"] is not overlap
    falling = V.clustering_facts(metrics_dict((last, first), (first, first)), *KNN_FOLDS[:1] * 2)
    assert {r["metric"]: r["direction"] for r in falling["metrics"]}["kmeans_nmi"] == "down"


@pytest.mark.parametrize("overlap", [False, True])
def test_clustering_facts_read_the_knn_accuracy_over_its_folds(overlap):
    """The k-NN accuracy falls only when every run at the last layer is below every run at the first; the silhouette
    and the between/within ratio, which have no random part, change when they change in print (three decimals)."""
    first, last = [0.87, 0.1, 1.0, 0.4], [0.71, 0.1004, 1.2, 0.4]
    last_folds = np.array([0.70, 0.875, 0.71]) if overlap else KNN_FOLDS[1]
    f = V.clustering_facts(metrics_dict((first, last), (first, first)), KNN_FOLDS[0], last_folds)
    directions = {r["metric"]: r["direction"] for r in f["metrics"]}
    assert directions["knn_accuracy"] == ("flat" if overlap else "down")
    assert directions["silhouette"] == "flat" and directions["between_within"] == "up"  # 0.100 in print both times
    assert f["knn_range_last"] == (last_folds.min(), last_folds.max())


def test_clustering_facts_state_the_numbers():
    m = metrics_dict(([0.9, 0.05, 0.8, 0.4], [0.7, 0.01, 1.5, 0.5]), ([0.9, 0.05, 0.8, 0.4], [0.85, 0.08, 1.2, 0.45]))
    f = V.clustering_facts(m, *KNN_FOLDS)
    assert (f["first"], f["last"], f["variant"]) == (0, 8, "paper")
    assert (f["knn_first"], f["knn_last"], f["bw_first"], f["bw_last"]) == (0.9, 0.7, 0.8, 1.5)
    assert f["nmi_range_first"] == pytest.approx((0.39, 0.41)) and f["knn_range_first"] == (0.87, 0.88)
    assert [r["direction"] for r in f["metrics"]] == ["down", "down", "up", "up"]
    assert [r["metric"] for r in f["metrics"]] == list(METRIC_NAMES)
    assert f["up"] == ["between_within", "kmeans_nmi"] and f["others"] == f["metrics"][:2]
    assert f["any_up"] and not f["all_up"]
    assert V.clustering_facts(m, *KNN_FOLDS, variant="attention")["metrics"][0]["last"] == 0.85
    with pytest.raises(ValueError, match="variant"):
        V.clustering_facts(m, *KNN_FOLDS, variant="symmetric")
