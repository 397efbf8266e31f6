"""The MNIST chapter's numbers (probdr_lite/chapters/mnist_at_init.py), each against an independent answer.

The chapter's sentences are Markdown with glued numbers, checked by claims (``tests/unit/test_claims_mnist.py``);
what is tested here is the numbers its hidden cells glue and claim: the NMI of k-means over seeds (against
scikit-learn's own KMeans), the chapter's better/worse rule on rows built by hand, the self-attention share (against a
dense softmax), the k-NN accuracy over fold seeds, what the blocks do at the ends of kappa's range (against a direct
run of the blocks) and the interactive figures' one set of ranges.
"""

import numpy as np
import pytest
import torch
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score

from probdr_lite.chapters import mnist_at_init as MT
from probdr_lite.metrics import METRIC_NAMES, METRICS, between_within_ratio, knn_accuracy
from probdr_lite._threads import single_threaded
from probdr_lite.unrolled import unroll


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 40)
    X = rng.normal(size=(120, 6)) + 1.5 * np.eye(6)[labels]
    return X, labels


def test_layer_rows_hold_the_nmi_over_kmeans_seeds(blobs):
    X, labels = blobs
    path = [X, 0.5 * X + 0.1]
    rows = MT.layer_rows(path, labels, variant="paper")
    assert [r["layer"] for r in rows] == [0, 1] and {r["variant"] for r in rows} == {"paper"}
    for r, Xt in zip(rows, path):
        nmis = [normalized_mutual_info_score(labels, KMeans(3, n_init=METRICS.n_init, random_state=s).fit_predict(Xt))
                for s in range(METRICS.nmi_seeds)]
        assert r["kmeans_nmi"] == pytest.approx(np.mean(nmis), abs=1e-12)
        assert r["kmeans_nmi_sd"] == pytest.approx(np.std(nmis, ddof=1), abs=1e-12)
        assert (r["kmeans_nmi_min"], r["kmeans_nmi_max"]) == pytest.approx((min(nmis), max(nmis)), abs=1e-12)
        assert r["knn_accuracy"] == pytest.approx(knn_accuracy(Xt, labels))
        assert set(r) == {"variant", "n", "layer", *METRIC_NAMES, *MT.NMI_KEYS}


def nmi_rows(ranges):
    """Rows of one variant whose NMI at each layer spans ``ranges[t] = (low, high)``."""
    return [{"variant": "paper", "n": 10, "layer": t, "kmeans_nmi": (lo + hi) / 2, "kmeans_nmi_sd": (hi - lo) / 4,
             "kmeans_nmi_min": lo, "kmeans_nmi_max": hi} for t, (lo, hi) in enumerate(ranges)]


def test_nmi_facts_follow_the_chapters_rule():
    f = MT.nmi_facts(nmi_rows([(0.43, 0.50), (0.53, 0.56), (0.558, 0.560), (0.47, 0.48)]))
    assert f["best"] == 2 and f["last"] == 3 and f["n_better"] == 2
    assert f["better"] == [False, True, True, False] and f["worse"] == [False] * 4
    assert f["gain_best"] == pytest.approx(0.559 - 0.465) and f["gain_last"] == pytest.approx(0.475 - 0.465)
    # a range that only touches layer 0's is not better; one wholly below it is worse
    f = MT.nmi_facts(nmi_rows([(0.43, 0.50), (0.50, 0.56), (0.40, 0.42)]))
    assert f["better"] == [False, False, False] and f["worse"] == [False, False, True]


@pytest.mark.parametrize("n_runs", [1, 2, 3, 5])
def test_rule_p_value_counts_the_splits_that_put_one_layer_wholly_above_the_other(n_runs):
    """Against an enumeration: of all the ways to say which n_runs of 2 n_runs distinct runs belong to layer t, the
    share for which nmi_facts' rule calls layer t better or worse than layer 0."""
    from itertools import combinations

    values = np.arange(2 * n_runs, dtype=float)
    splits = list(combinations(range(2 * n_runs), n_runs))
    told = 0
    for layer_t in splits:
        runs_t = values[list(layer_t)]
        runs_0 = np.delete(values, list(layer_t))
        f = MT.nmi_facts(nmi_rows([(runs_0.min(), runs_0.max()), (runs_t.min(), runs_t.max())]))
        told += f["better"][1] or f["worse"][1]
    assert MT.rule_p_value(n_runs) == pytest.approx(told / len(splits), rel=1e-12)


def test_rule_p_value_of_five_runs_a_layer_is_two_in_252():
    assert MT.rule_p_value(5) == pytest.approx(2 / 252, rel=1e-15)
    assert MT.rule_p_value() == MT.rule_p_value(METRICS.nmi_seeds)
    with pytest.raises(ValueError, match="n_runs"):
        MT.rule_p_value(0)


def test_self_attention_share_is_the_mean_diagonal_of_a_dense_softmax(blobs):
    X, _ = blobs
    X = torch.as_tensor(X, dtype=torch.float64)
    S = 3.0 / X.shape[1] * X @ X.T - 0.5 * torch.eye(X.shape[0], dtype=torch.float64)
    expected = float(torch.softmax(S, dim=1).diagonal().mean())
    for block in (7, 1000):
        assert MT.self_attention_share(X.numpy(), kappa=3.0, beta=0.5, block=block) == pytest.approx(expected,
                                                                                                     rel=1e-12)


def test_knn_over_seeds_is_one_accuracy_per_fold_seed(blobs):
    X, labels = blobs
    got = MT.knn_over_seeds(X, labels, seeds=(0, 2))
    np.testing.assert_allclose(got, [knn_accuracy(X, labels, seed=s) for s in (0, 2)])


def test_nmi_summary_is_the_rows_nmi_and_what_the_sweep_reports(blobs):
    """The one way the chapter reports an NMI: layer_rows and the sweep read it from here."""
    X, labels = blobs
    v = [normalized_mutual_info_score(labels, KMeans(3, n_init=METRICS.n_init, random_state=s).fit_predict(X))
         for s in range(METRICS.nmi_seeds)]
    got = MT.nmi_summary(X, labels)
    assert got == pytest.approx({"kmeans_nmi": np.mean(v), "kmeans_nmi_sd": np.std(v, ddof=1),
                                 "kmeans_nmi_min": min(v), "kmeans_nmi_max": max(v)}, abs=1e-12)
    row = MT.layer_rows([X], labels, variant="paper")[0]
    assert {k: row[k] for k in got} == got


def test_kappa_ends_against_a_direct_run_of_the_blocks():
    X0, labels = MT.mnist_latents(n=100)
    ends = MT.kappa_ends(X0, labels, kappas=(0.3, 3000.0), n_layers=3)
    assert set(ends) == {0.3, 3000.0}
    for kappa, got in ends.items():
        with single_threaded():
            path = [X.numpy().astype(np.float64) for X in unroll(X0, 3, kappa, MT.PAPER.eta, MT.PAPER.beta, "paper")]
        first, last = path[0], path[-1]
        rms = lambda P: np.sqrt(((P - P.mean(0)) ** 2).sum(1).mean())  # noqa: E731
        assert got["spread"] == pytest.approx(rms(last[:, :2]) / rms(first[:, :2]), rel=1e-6)
        assert got["ratio"] == pytest.approx(between_within_ratio(last, labels) / between_within_ratio(first, labels),
                                             rel=1e-6)
        assert got["moved"] == pytest.approx(np.linalg.norm(last - first, axis=1).mean() / rms(first), rel=1e-6)
    # a kernel wider than the data pulls every image towards one point; one narrower than any distance moves none
    assert ends[0.3]["spread"] < 0.1 < 0.9 < ends[3000.0]["spread"] and ends[3000.0]["moved"] < 1e-3
    assert set(MT.kappa_ends(X0, labels, n_layers=1)) == {MT.SLIDERS["kappa"]["low"], MT.SLIDERS["kappa"]["high"]}


def test_the_interactive_figures_ranges_hold_the_chapters_settings():
    for name, s in MT.SLIDERS.items():
        assert s["low"] <= min(s["grid"]) and max(s["grid"]) <= s["high"], name
        assert getattr(MT.PAPER, name) in s["grid"], name
    assert MT.SLIDERS["kappa"]["grid"][0] == MT.SLIDERS["kappa"]["low"]  # kappa's grid spans the sliders' range
    assert MT.SLIDERS["kappa"]["grid"][-1] == MT.SLIDERS["kappa"]["high"]
