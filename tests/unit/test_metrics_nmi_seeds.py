"""k-means NMI over seeds (probdr_lite.metrics.kmeans_nmi_over_seeds) against scikit-learn's own KMeans and NMI."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score

from probdr_lite.metrics import METRICS, MetricSettings, kmeans_nmi, kmeans_nmi_over_seeds
from probdr_lite.presentation.figures import mnist as M


def test_one_nmi_per_seed_as_scikit_learn_computes_it():
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(4), 30)
    X = rng.normal(size=(120, 5)) + np.eye(5)[labels]
    got = kmeans_nmi_over_seeds(X, labels)
    expected = [normalized_mutual_info_score(labels, KMeans(4, n_init=METRICS.n_init, random_state=s).fit_predict(X))
                for s in range(METRICS.nmi_seeds)]
    assert got.shape == (METRICS.nmi_seeds,) == (5,)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert got[0] == kmeans_nmi(X, labels, seed=0)
    assert kmeans_nmi_over_seeds(X, labels, MetricSettings(nmi_seeds=2)).tolist() == got[:2].tolist()


def test_the_settings_need_at_least_two_seeds():
    with pytest.raises(ValueError, match="nmi_seeds"):
        MetricSettings(nmi_seeds=1)


def test_tables_show_the_nmi_as_mean_and_spread():
    rows = [{"variant": "paper", "n": 10, "layer": t, "knn_accuracy": 0.9, "silhouette": 0.1,
             "between_within": 1.0, "kmeans_nmi": 0.4641, "kmeans_nmi_sd": 0.0291, "kmeans_nmi_min": 0.43,
             "kmeans_nmi_max": 0.5} for t in (0, 1)]
    assert str(M.layer_table(rows)).splitlines()[-1] == "| 1 | 0.900 | 0.100 | 1.000 | 0.464 ± 0.029 |"
    assert "0.464 ± 0.029" in str(M.metrics_table(rows, layers=(0, 1)))
