"""The MNIST chapter's numbers (probdr_lite/chapters/mnist_at_init.py), each against an independent answer.

The chapter's sentences are Markdown with glued numbers, checked by claims (``tests/unit/test_claims_mnist.py``);
what is tested here is the numbers its hidden cells glue and claim: the NMI of k-means over seeds (against
scikit-learn's own KMeans), the chapter's better/worse rule on rows built by hand, the self-attention share (against a
dense softmax) and the k-NN accuracy over fold seeds.
"""

import numpy as np
import pytest
import torch
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score

from probdr_lite.chapters import mnist_at_init as MT
from probdr_lite.metrics import METRIC_NAMES, METRICS, knn_accuracy

W = MT.WORDS


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


