"""Tests for probdr_lite.metrics against brute-force recomputations and known answers."""

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.model_selection import StratifiedKFold

from probdr_lite.metrics import (
    rms_spread,
    between_within_ratio,
    change_direction,
    cluster_metrics,
    kmeans_nmi,
    knn_accuracy,
    procrustes_disparity,
    silhouette,
    subspace_agreement,
)


@pytest.fixture(scope="module")
def overlapping():
    """Three overlapping Gaussian classes in 4-D: metrics strictly between their extremes."""
    X, y = make_blobs(240, n_features=4, centers=3, cluster_std=3.0, random_state=1)
    return X, y


@pytest.fixture(scope="module")
def separated():
    X, y = make_blobs(300, n_features=5, centers=4, cluster_std=0.3, center_box=(-20, 20),
                      random_state=2)
    return X, y


# --- k-NN accuracy -----------------------------------------------------------

def brute_knn_accuracy(X, y, k, cv, seed):
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    accs = []
    for train, test in folds.split(X, y):
        D = cdist(X[test], X[train])
        nearest = np.argsort(D, axis=1, kind="stable")[:, :k]
        votes = y[train][nearest]
        pred = np.array([np.bincount(v, minlength=y.max() + 1).argmax() for v in votes])
        accs.append(np.mean(pred == y[test]))
    return float(np.mean(accs))


@pytest.mark.parametrize("k", [1, 5, 9])
def test_knn_accuracy_matches_brute_force(overlapping, k):
    X, y = overlapping
    acc = knn_accuracy(X, y, n_neighbors=k, cv=4, seed=3)
    assert acc == pytest.approx(brute_knn_accuracy(X, y, k, 4, 3), abs=1e-12)
    assert 0.4 < acc < 0.99  # not a degenerate case


def test_knn_accuracy_known_answers(separated):
    X, y = separated
    assert knn_accuracy(X, y) == 1.0
    rand = np.random.default_rng(0).integers(0, 2, size=len(y))
    assert abs(knn_accuracy(X, rand) - 0.5) < 0.12  # chance level


def test_knn_accuracy_torch_and_float32(overlapping):
    X, y = overlapping
    ref = knn_accuracy(X, y)
    assert knn_accuracy(torch.from_numpy(X), torch.from_numpy(y)) == ref
    assert knn_accuracy(X.astype(np.float32), y) == pytest.approx(ref, abs=0.02)


# --- silhouette ----------------------------------------------------------------

def brute_silhouette(X, y):
    D = cdist(X, X)
    s = np.zeros(len(X))
    for i in range(len(X)):
        same = (y == y[i])
        same[i] = False
        if not same.any():
            continue  # singleton class: s = 0 by convention
        a = D[i, same].mean()
        b = min(D[i, y == c].mean() for c in np.unique(y) if c != y[i])
        s[i] = (b - a) / max(a, b)
    return s.mean()


def test_silhouette_matches_definition(overlapping):
    X, y = overlapping
    s = silhouette(X, y, max_samples=None)
    assert s == pytest.approx(brute_silhouette(X, y), abs=1e-10)
    assert silhouette(X, y) == s  # n = 240 is below max_samples: no subsampling


def test_silhouette_subsample_is_seeded_and_close(overlapping):
    X, y = overlapping
    full = silhouette(X, y, max_samples=None)
    a = silhouette(X, y, max_samples=150, seed=1)
    assert a == silhouette(X, y, max_samples=150, seed=1)
    idx = np.sort(np.random.default_rng(1).choice(len(X), 150, replace=False))
    assert a == pytest.approx(brute_silhouette(X[idx], y[idx]), abs=1e-10)
    assert abs(a - full) < 0.1


def test_silhouette_known_answers(separated):
    X, y = separated
    assert silhouette(X, y) > 0.9
    rand = np.random.default_rng(0).integers(0, 4, size=len(y))
    assert abs(silhouette(X, rand)) < 0.1


# --- between / within --------------------------------------------------------

def test_between_within_brute_force(overlapping):
    X, y = overlapping
    cls = np.unique(y)
    mu = {c: X[y == c].mean(axis=0) for c in cls}
    within = np.mean([np.linalg.norm(X[i] - mu[y[i]]) for i in range(len(X))])
    between = np.mean([np.linalg.norm(mu[a] - mu[b]) for a in cls for b in cls if a < b])
    assert between_within_ratio(X, y) == pytest.approx(between / within, rel=1e-12)


def test_between_within_invariances_and_known_answers(overlapping, separated):
    X, y = overlapping
    R = np.linalg.qr(np.random.default_rng(4).normal(size=(4, 4)))[0]
    r = between_within_ratio(X, y)
    assert between_within_ratio(3.0 * X @ R + 7.0, y) == pytest.approx(r, rel=1e-10)
    Xs, ys = separated
    assert between_within_ratio(Xs, ys) > 20
    rand = np.random.default_rng(0).permutation(ys)
    assert between_within_ratio(Xs, rand) < 0.3


# --- k-means NMI ---------------------------------------------------------------

def brute_nmi(a, b):
    """NMI with the arithmetic-mean normalisation, from the contingency table."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    P = np.zeros((ia.max() + 1, ib.max() + 1))
    np.add.at(P, (ia, ib), 1.0)
    P /= P.sum()
    pa, pb = P.sum(axis=1), P.sum(axis=0)
    nz = P > 0
    mi = np.sum(P[nz] * np.log(P[nz] / np.outer(pa, pb)[nz]))
    h = lambda p: -np.sum(p[p > 0] * np.log(p[p > 0]))
    return mi / (0.5 * (h(pa) + h(pb)))


def test_kmeans_nmi_matches_contingency_table(overlapping):
    X, y = overlapping
    pred = KMeans(n_clusters=3, n_init=2, random_state=5).fit_predict(X)
    nmi = kmeans_nmi(X, y, seed=5)
    assert nmi == pytest.approx(brute_nmi(y, pred), abs=1e-12)
    assert 0.05 < nmi < 0.99


def test_kmeans_nmi_known_answers(separated):
    X, y = separated
    assert kmeans_nmi(X, y) == pytest.approx(1.0)
    rand = np.random.default_rng(0).integers(0, 4, size=len(y))
    assert kmeans_nmi(X, rand) < 0.05
    assert 0 < kmeans_nmi(X, y, n_clusters=2) < 1


# --- cluster_metrics -------------------------------------------------------------

def test_cluster_metrics_dict(overlapping):
    X, y = overlapping
    m = cluster_metrics(torch.from_numpy(X).float(), y, seed=2)
    assert set(m) == {"knn_accuracy", "silhouette", "between_within", "kmeans_nmi"}
    Xf = X.astype(np.float32)
    assert m["knn_accuracy"] == knn_accuracy(Xf, y, seed=2)
    assert m["silhouette"] == pytest.approx(silhouette(X, y), abs=1e-5)
    assert m["between_within"] == pytest.approx(between_within_ratio(X, y), rel=1e-5)
    assert m["kmeans_nmi"] == kmeans_nmi(Xf, y, seed=2)


# --- embedding agreement ---------------------------------------------------------

def test_subspace_agreement_known_angle():
    rng = np.random.default_rng(6)
    Q = np.linalg.qr(rng.normal(size=(50, 3)))[0]
    theta = 0.3
    E1 = Q[:, :2]
    E2 = np.column_stack([Q[:, 0], np.cos(theta) * Q[:, 1] + np.sin(theta) * Q[:, 2]])
    np.testing.assert_allclose(subspace_agreement(E1, E2), [1.0, np.cos(theta)], atol=1e-12)
    # any invertible mixing of the columns is the same subspace
    A = rng.normal(size=(2, 2))
    np.testing.assert_allclose(subspace_agreement(E1, 5 * E1 @ A), [1.0, 1.0], atol=1e-10)
    # orthogonal subspaces
    np.testing.assert_allclose(subspace_agreement(Q[:, :1], Q[:, 1:]), [0.0], atol=1e-12)


def test_procrustes_disparity():
    rng = np.random.default_rng(7)
    E1 = rng.normal(size=(40, 2))
    R = np.linalg.qr(rng.normal(size=(2, 2)))[0]
    assert procrustes_disparity(E1, 3 * E1 @ R - 2) == pytest.approx(0.0, abs=1e-12)
    # independent noise: E[disparity] is near 1 for unrelated clouds
    assert procrustes_disparity(E1, rng.normal(size=(40, 2))) > 0.5
    # brute force: best rotation by SVD of the centred, normalised matrices
    E2 = E1 + 0.3 * rng.normal(size=E1.shape)
    A = E1 - E1.mean(0)
    A /= np.linalg.norm(A)
    B = E2 - E2.mean(0)
    B /= np.linalg.norm(B)
    s = np.linalg.svd(A.T @ B, compute_uv=False)
    assert procrustes_disparity(E1, E2) == pytest.approx(1 - s.sum() ** 2, abs=1e-12)



def test_rms_spread_is_the_root_of_the_covariance_trace_and_pairwise_distances():
    rng = np.random.default_rng(3)
    P = rng.normal(size=(4, 50, 3)) * np.array([1.0, 2.0, 0.5])
    got = rms_spread(P)
    assert got.shape == (4,)
    # the trace of the (biased) covariance, and half the mean squared distance between all pairs of points
    trace = np.array([np.trace(np.cov(p.T, bias=True)) for p in P])
    pairs = np.array([(cdist(p, p) ** 2).mean() / 2 for p in P])
    assert np.allclose(got ** 2, trace, rtol=1e-12) and np.allclose(got ** 2, pairs, rtol=1e-12)
    assert rms_spread(P[0] + 7.0) == pytest.approx(got[0], rel=1e-12)  # translation does not change it
    with pytest.raises(ValueError, match="points"):
        rms_spread(np.ones(5))


# --- bad inputs ----------------------------------------------------------------

def test_bad_inputs(overlapping):
    X, y = overlapping
    with pytest.raises(ValueError, match="labels"):
        knn_accuracy(X, y[:-1])
    with pytest.raises(ValueError, match="labels"):
        silhouette(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="labels"):
        silhouette(X[:3], [0, 1, 2])
    with pytest.raises(ValueError, match="cv"):
        knn_accuracy(X, y, cv=500)
    with pytest.raises(ValueError, match="cv"):
        knn_accuracy(X, y, cv=1)
    with pytest.raises(ValueError, match="n_neighbors"):
        knn_accuracy(X, y, n_neighbors=len(y))
    with pytest.raises(ValueError, match="n_neighbors"):
        knn_accuracy(X, y, n_neighbors=0)
    bad = X.copy()
    bad[0, 0] = np.nan
    for fn in (knn_accuracy, silhouette, between_within_ratio, kmeans_nmi, cluster_metrics):
        with pytest.raises(ValueError, match="X"):
            fn(bad, y)
        with pytest.raises(ValueError, match="X"):
            fn(X[:, 0], y)
    with pytest.raises(ValueError, match="labels"):
        between_within_ratio(X, np.where(y == 0, np.nan, 1.0))
    with pytest.raises(ValueError, match="n_clusters"):
        kmeans_nmi(X, y, n_clusters=1)
    with pytest.raises(ValueError, match="max_samples"):
        silhouette(X, y, max_samples=2)
    with pytest.raises(ValueError, match="seed"):
        kmeans_nmi(X, y, seed=-1)
    with pytest.raises(ValueError, match="E2"):
        subspace_agreement(X, X[:-1])
    with pytest.raises(ValueError, match="E1"):
        subspace_agreement(np.zeros((5, 2)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="E2"):
        procrustes_disparity(X[:, :2], X[:, :3])
    with pytest.raises(ValueError, match="E2"):
        procrustes_disparity(X[:, :2], np.ones((len(X), 2)))
    with pytest.raises(ValueError, match="within-class"):
        between_within_ratio(np.repeat(np.eye(2), 3, axis=0), [0, 0, 0, 1, 1, 1])


def test_change_direction_turns_at_the_tolerance():
    """Just inside the tolerance (a change of 0.9 of it) the direction is flat; just beyond it (1.1), up or down."""
    for before in (0.5, -2.0):
        step = 0.01 * abs(before)
        assert change_direction(before, before + 0.9 * step) == change_direction(before, before - 0.9 * step) == "flat"
        assert change_direction(before, before + 1.1 * step) == "up"
        assert change_direction(before, before - 1.1 * step) == "down"
    assert change_direction(0.0, 0.009) == "flat" and change_direction(0.0, 0.011) == "up"  # absolute at zero
    assert change_direction(1.0, 1.2, rel_tol=0.5) == "flat"
    with pytest.raises(ValueError, match="rel_tol"):
        change_direction(1.0, 2.0, rel_tol=-1.0)
