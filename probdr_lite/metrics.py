"""Numbers for "does it cluster?" and "do two embeddings agree?" (notes section 4, minor objection).

The paper's clustering claim is a picture; the book backs each picture with
numbers computed per layer and per attention variant:

- :func:`knn_accuracy`          cross-validated k-NN classification accuracy;
- :func:`silhouette`            mean silhouette coefficient (optionally on a subsample);
- :func:`between_within_ratio`  spread of class centroids over spread within classes;
- :func:`kmeans_nmi`            NMI between k-means clusters and the classes;
- :func:`cluster_metrics`       all four in one dict (or the ones named);
- :func:`layer_metrics`         all four for every layer of a path X_0, X_1, ..., as tidy rows;
- :class:`MetricSettings` / :data:`METRICS`  the settings every table and figure of the book uses
  (5 neighbours, 5 folds, a silhouette on at most 2,000 points, k-means with 4 restarts);
- :func:`subspace_agreement`, :func:`procrustes_disparity`  agreement of two embeddings,
  which are defined only up to sign, rotation and scale (notes section 1, item 4);
- :func:`change_direction`      whether a number went up, down or stayed flat, beyond a relative tolerance.

scikit-learn and SciPy do the work; this module fixes seeds and settings and checks input.
Every function accepts NumPy arrays or torch tensors. Plot labels of the numbers live in
:mod:`probdr_lite.presentation.style` (presentation), not here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.linalg as la
from scipy.spatial import procrustes
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score, silhouette_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from probdr_lite._threads import single_threaded
from probdr_lite._validation import check_array, check_choice, check_scalar, check_seed

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

__all__ = [
    "METRIC_NAMES",
    "MetricSettings",
    "METRICS",
    "knn_accuracy",
    "silhouette",
    "between_within_ratio",
    "kmeans_nmi",
    "kmeans_nmi_over_seeds",
    "cluster_metrics",
    "metric_value",
    "check_metric_names",
    "layer_metrics",
    "subspace_agreement",
    "procrustes_disparity",
    "change_direction",
    "rms_spread",
]

#: The four clustering numbers, in the order of every table and plot.
METRIC_NAMES = ("knn_accuracy", "silhouette", "between_within", "kmeans_nmi")


@dataclass(frozen=True)
class MetricSettings:
    """How each clustering number is measured, fixed once so that a number in the book always means the same thing.

    Attributes
    ----------
    n_neighbors : int >= 1
        k of the k-NN classifier (:func:`knn_accuracy`).
    cv : int >= 2
        Stratified folds of the k-NN accuracy.
    max_samples : int >= 3 or None
        The silhouette is computed on at most this many points (:func:`silhouette`); None: all.
    n_init : int in [1, 100]
        k-means restarts (:func:`kmeans_nmi`).
    nmi_seeds : int in [2, 100]
        k-means is rerun with the seeds 0, ..., nmi_seeds - 1 by :func:`kmeans_nmi_over_seeds`: one k-means seed is
        one draw of a random number, and its spread over seeds is what a difference of NMIs is read against.
    """

    n_neighbors: int = 5
    cv: int = 5
    max_samples: int | None = 2000
    n_init: int = 4
    nmi_seeds: int = 5

    def __post_init__(self):
        check_scalar(self.n_neighbors, "n_neighbors", low=1, integer=True)
        check_scalar(self.cv, "cv", low=2, integer=True)
        if self.max_samples is not None:
            check_scalar(self.max_samples, "max_samples", low=3, integer=True)
        check_scalar(self.n_init, "n_init", low=1, high=100, integer=True)
        check_scalar(self.nmi_seeds, "nmi_seeds", low=2, high=100, integer=True)

    def as_dict(self) -> dict:
        return asdict(self)


#: The settings of every clustering number in the book (the MNIST and objections chapters alike).
METRICS = MetricSettings()


def _check_labels(labels, n: int, *, min_classes: int = 2):
    """Return (labels as a 1-D array of length n, class counts)."""
    if torch is not None and isinstance(labels, torch.Tensor):
        labels = labels.detach().cpu().numpy()
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.shape[0] != n:
        raise ValueError(f"labels must be a 1-D array of length n = {n}; got shape {lab.shape}")
    if lab.dtype == object:
        raise TypeError("labels must be numbers or strings; got dtype object")
    if np.issubdtype(lab.dtype, np.floating) and not np.all(np.isfinite(lab)):
        raise ValueError("labels must not contain NaN or inf")
    _, counts = np.unique(lab, return_counts=True)
    if counts.size < min_classes:
        raise ValueError(f"labels must contain at least {min_classes} classes; got {counts.size}")
    return lab, counts


def _check_xy(X, labels, min_classes=2):
    X = check_array(X, "X", ndim=2, min_rows=2)
    lab, counts = _check_labels(labels, X.shape[0], min_classes=min_classes)
    return X, lab, counts


def knn_accuracy(X, labels, n_neighbors: int = METRICS.n_neighbors, cv: int = METRICS.cv, seed: int = 0) -> float:
    """Cross-validated accuracy of a k-nearest-neighbour classifier on the embedding X.

    Stratified ``cv``-fold split (shuffled with ``seed``); each held-out point is
    given the majority class of its k nearest training points (Euclidean);
    returns the mean over folds of the fraction classified correctly.

    Parameters
    ----------
    X : array_like or torch.Tensor, shape (n, q)
    labels : array_like, shape (n,)
        Class of each point; at least 2 classes.
    n_neighbors : int, default 5
        k, in [1, n - ceil(n / cv)] (the smallest training fold).
    cv : int, default 5
        Number of folds, in [2, size of the smallest class].
    seed : int, default 0

    Returns
    -------
    float in [0, 1]
    """
    return _knn_accuracy(*_check_xy(X, labels), n_neighbors, cv, seed)


def _knn_accuracy(X, lab, counts, n_neighbors, cv, seed) -> float:
    """:func:`knn_accuracy` on checked X and labels (the range checks that depend on them stay here)."""
    n = X.shape[0]
    cv = check_scalar(cv, "cv", low=2, high=int(counts.min()), integer=True)
    k = check_scalar(n_neighbors, "n_neighbors", low=1, high=n - int(np.ceil(n / cv)),
                     integer=True)
    seed = check_seed(seed)
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    scores = cross_val_score(KNeighborsClassifier(n_neighbors=k), X, lab, cv=folds)
    return float(np.mean(scores))


def silhouette(X, labels, max_samples=METRICS.max_samples, seed: int = 0) -> float:
    """Mean silhouette coefficient of the classes in X (Rousseeuw, 1987).

    For point i with mean distance a(i) to its own class and smallest mean
    distance b(i) to another class, s(i) = (b - a) / max(a, b); returns the
    mean of s(i), in [-1, 1] (computed by :func:`sklearn.metrics.silhouette_score`).
    The cost is O(n^2), so above ``max_samples`` points a fixed random subset
    (drawn with ``seed``) is used.

    Parameters
    ----------
    X : array_like or torch.Tensor, shape (n, q)
    labels : array_like, shape (n,)
        Between 2 and n - 1 classes.
    max_samples : int >= 3 or None, default 2000
        None uses every point.
    seed : int, default 0

    Returns
    -------
    float in [-1, 1]
    """
    return _silhouette(*_check_xy(X, labels), max_samples, seed)


def _silhouette(X, lab, counts, max_samples, seed) -> float:
    n = X.shape[0]
    if counts.size > n - 1:
        raise ValueError(f"labels must have between 2 and n - 1 = {n - 1} classes; got {counts.size}")
    seed = check_seed(seed)
    if max_samples is not None:
        max_samples = check_scalar(max_samples, "max_samples", low=3, integer=True)
        if n > max_samples:
            idx = np.sort(np.random.default_rng(seed).choice(n, max_samples, replace=False))
            X, lab = X[idx], lab[idx]
            n_sub = np.unique(lab).size
            if not 2 <= n_sub <= max_samples - 1:
                raise ValueError(
                    f"the subsample of max_samples = {max_samples} points has {n_sub} classes; "
                    "increase max_samples"
                )
    return float(silhouette_score(X, lab, metric="euclidean"))


def between_within_ratio(X, labels) -> float:
    """Between-class over within-class spread of X.

    With class centroids mu_c,

        ratio = mean_{c < c'} ||mu_c - mu_c'||  /  mean_i ||x_i - mu_{c(i)}||,

    i.e. the mean distance between two class centroids over the mean distance
    of a point to its own centroid. It does not change when X is scaled,
    rotated or shifted; larger means better separated classes.

    Parameters
    ----------
    X : array_like or torch.Tensor, shape (n, q)
    labels : array_like, shape (n,)
        At least 2 classes, not every point at its centroid.

    Returns
    -------
    float >= 0
    """
    return _between_within_ratio(*_check_xy(X, labels))


def _between_within_ratio(X, lab, counts=None) -> float:
    X = X.astype(np.float64)
    classes, inverse = np.unique(lab, return_inverse=True)
    # Class centroids as one (C, n) @ (n, q) product with an averaging matrix: fast enough for a live panel that
    # recomputes the ratio of every layer on each slider move.
    onehot = (inverse[None, :] == np.arange(classes.size)[:, None]).astype(np.float64)
    centroids = (onehot / onehot.sum(axis=1, keepdims=True)) @ X
    within = float(np.mean(np.linalg.norm(X - centroids[inverse], axis=1)))
    if within == 0.0:
        raise ValueError("X has zero within-class spread (every point sits at its class centroid)")
    iu = np.triu_indices(classes.size, k=1)
    diff = centroids[:, None, :] - centroids[None, :, :]
    between = float(np.mean(np.linalg.norm(diff, axis=2)[iu]))
    return between / within


def kmeans_nmi(X, labels, n_clusters=None, seed: int = 0, n_init: int = METRICS.n_init) -> float:
    """Normalised mutual information between k-means clusters of X and the classes.

    k-means (scikit-learn, ``n_init`` restarts seeded by ``seed``) with as many
    clusters as classes by default, scored by
    NMI = I(clusters; classes) / mean(H(clusters), H(classes)) in [0, 1]
    (:func:`sklearn.metrics.normalized_mutual_info_score`, arithmetic mean).

    Parameters
    ----------
    X : array_like or torch.Tensor, shape (n, q)
    labels : array_like, shape (n,)
    n_clusters : int or None
        In [2, n]; None means the number of classes.
    seed : int, default 0
    n_init : int, default ``METRICS.n_init`` (4)
        k-means restarts, in [1, 100].

    Returns
    -------
    float in [0, 1]: 1 when the clusters are exactly the classes, near 0 when they are unrelated.
    """
    return _kmeans_nmi(*_check_xy(X, labels), n_clusters, seed, n_init)


def _kmeans_nmi(X, lab, counts, n_clusters, seed, n_init) -> float:
    n = X.shape[0]
    if n_clusters is None:
        n_clusters = counts.size
    n_clusters = check_scalar(n_clusters, "n_clusters", low=2, high=n, integer=True)
    seed = check_seed(seed)
    n_init = check_scalar(n_init, "n_init", low=1, high=100, integer=True)
    pred = KMeans(n_clusters=n_clusters, n_init=n_init, random_state=seed).fit_predict(
        X.astype(np.float64))
    return float(normalized_mutual_info_score(lab, pred))


def kmeans_nmi_over_seeds(X, labels, settings: MetricSettings = METRICS, n_clusters=None) -> np.ndarray:
    """:func:`kmeans_nmi` for each k-means seed 0, ..., ``settings.nmi_seeds`` - 1 (``settings.n_init`` restarts
    each), on one thread so that every value repeats exactly: an array of ``settings.nmi_seeds`` NMIs.

    The NMI of one k-means run depends on its seed; read a difference of NMIs against their spread over seeds.
    """
    X, lab, counts = _check_xy(X, labels)
    settings = _check_settings(settings)
    with single_threaded():
        return np.array([_kmeans_nmi(X, lab, counts, n_clusters, s, settings.n_init)
                         for s in range(settings.nmi_seeds)])


def check_metric_names(names) -> tuple:
    """A non-empty list of names from :data:`METRIC_NAMES`, as a tuple."""
    if isinstance(names, str) or len(names) == 0:
        raise ValueError(f"metrics must be a non-empty list of names from {METRIC_NAMES}; got {names!r}")
    return tuple(check_choice(m, "metric", METRIC_NAMES) for m in names)


def _check_settings(settings) -> MetricSettings:
    if not isinstance(settings, MetricSettings):
        raise TypeError(f"settings must be a probdr_lite.metrics.MetricSettings; got {type(settings).__name__}")
    return settings


def _value(name, X, lab, counts, settings: MetricSettings, seed: int) -> float:
    """One number on checked X, labels and class counts (validated once by the caller, not once per metric)."""
    if name == "knn_accuracy":
        return _knn_accuracy(X, lab, counts, settings.n_neighbors, settings.cv, seed)
    if name == "silhouette":
        return _silhouette(X, lab, counts, settings.max_samples, seed)
    if name == "between_within":
        return _between_within_ratio(X, lab)
    return _kmeans_nmi(X, lab, counts, None, seed, settings.n_init)


def metric_value(name: str, X, labels, settings: MetricSettings = METRICS, seed: int = 0) -> float:
    """One of the four numbers (``name`` in :data:`METRIC_NAMES`) of X, measured with ``settings``."""
    name = check_choice(name, "metric", METRIC_NAMES)
    X, lab, counts = _check_xy(X, labels)
    return _value(name, X, lab, counts, _check_settings(settings), check_seed(seed))


def cluster_metrics(X, labels, settings: MetricSettings = METRICS, seed: int = 0, metrics=METRIC_NAMES) -> dict:
    """The clustering numbers of one embedding, measured with ``settings`` (default :data:`METRICS`).

    Returns
    -------
    dict {name: float} in the order of ``metrics`` (default all four:
        ``"knn_accuracy"`` (:func:`knn_accuracy`), ``"silhouette"`` (:func:`silhouette`),
        ``"between_within"`` (:func:`between_within_ratio`), ``"kmeans_nmi"`` (:func:`kmeans_nmi`)).
    """
    X, lab, counts = _check_xy(X, labels)
    settings, seed, metrics = _check_settings(settings), check_seed(seed), check_metric_names(metrics)
    return {m: _value(m, X, lab, counts, settings, seed) for m in metrics}


def layer_metrics(path, labels, settings: MetricSettings = METRICS, *, seed: int = 0, metrics=METRIC_NAMES,
                  variant=None) -> list:
    """The clustering numbers of every layer of a path X_0, X_1, ...: a tidy list with one dict per layer.

    Parameters
    ----------
    path : sequence of arrays or tensors (n, d_q)
        X_0, X_1, ... (e.g. from :func:`probdr_lite.unrolled.unroll`), all the same shape.
    labels : array (n,)
    settings : MetricSettings, default :data:`METRICS`
    seed : int
        Seed of the k-NN folds, the silhouette subsample and k-means (the same for every layer).
    metrics : subset of :data:`METRIC_NAMES`
    variant : str or None
        Copied into every row, so that the rows of several variants can be concatenated.

    Returns
    -------
    list of dicts {"variant", "n", "layer", <metric>: float, ...}, all measured in the full d_q-dimensional space,
    on one thread (which also makes k-means repeat exactly; see :mod:`probdr_lite._threads`).
    """
    if isinstance(path, np.ndarray) or (torch is not None and isinstance(path, torch.Tensor)) or len(path) == 0:
        raise ValueError("latents must be a non-empty list of (n, d_q) arrays, one per layer")
    path = [check_array(X, f"latents[{t}]", ndim=2, min_rows=2) for t, X in enumerate(path)]
    shape = path[0].shape
    for t, X in enumerate(path):
        if X.shape != shape:
            raise ValueError(f"latents[{t}] has shape {X.shape}; every layer must have the shape of layer 0, {shape}")
    lab, counts = _check_labels(labels, shape[0])
    settings, seed, metrics = _check_settings(settings), check_seed(seed), check_metric_names(metrics)
    rows = []
    with single_threaded():
        for t, X in enumerate(path):
            rows.append({"variant": variant, "n": shape[0], "layer": t,
                         **{m: _value(m, X, lab, counts, settings, seed) for m in metrics}})
    return rows


def _check_pair(E1, E2):
    E1 = check_array(E1, "E1", ndim=2, min_rows=2)
    E2 = check_array(E2, "E2", ndim=2, min_rows=2)
    if E1.shape[0] != E2.shape[0]:
        raise ValueError(f"E2 must have the same number of rows as E1 ({E1.shape[0]}); "
                         f"got {E2.shape[0]}")
    return E1.astype(np.float64), E2.astype(np.float64)


def subspace_agreement(E1, E2) -> np.ndarray:
    """Cosines of the principal angles between the column spaces of two embeddings.

    Eigenvector embeddings are defined only up to sign and, within repeated
    eigenvalues, rotation; their column spaces are not. The cosines are the
    singular values of Q1^T Q2 for orthonormal bases Q1, Q2
    (:func:`scipy.linalg.subspace_angles`): all 1 means the same subspace.

    Parameters
    ----------
    E1 : array_like or torch.Tensor, shape (n, q1)
    E2 : array_like or torch.Tensor, shape (n, q2)

    Returns
    -------
    ndarray, shape (min(q1, q2),)
        Cosines in [0, 1], in decreasing order (the last one is the worst).
    """
    E1, E2 = _check_pair(E1, E2)
    for name, E in (("E1", E1), ("E2", E2)):
        if not np.any(E):
            raise ValueError(f"{name} must have at least one non-zero column")
    cos = np.cos(la.subspace_angles(E1, E2))
    return np.sort(np.clip(cos, 0.0, 1.0))[::-1]


def procrustes_disparity(E1, E2) -> float:
    """Procrustes disparity between two embeddings of the same points.

    Both are centred and scaled to unit Frobenius norm, then E2 is rotated
    (or reflected) and rescaled to best match E1; the disparity is the
    remaining sum of squared differences, in [0, 1] (0: identical up to
    shift, scale, rotation and reflection). Computed by
    :func:`scipy.spatial.procrustes`.

    Parameters
    ----------
    E1, E2 : array_like or torch.Tensor, shape (n, q)

    Returns
    -------
    float in [0, 1]
    """
    E1, E2 = _check_pair(E1, E2)
    if E1.shape != E2.shape:
        raise ValueError(f"E2 must have the same shape as E1 {E1.shape}; got {E2.shape}")
    for name, E in (("E1", E1), ("E2", E2)):
        if not np.any(E - E.mean(axis=0)):
            raise ValueError(f"{name} must have more than one distinct point")
    return float(procrustes(E1, E2)[2])


def rms_spread(points) -> np.ndarray:
    """The root mean squared distance of points to their mean: ``points`` of shape (..., n, d) gives shape (...)
    (the spread of each stack of n points in d dimensions). The one measure of a frame's spread that the live
    MNIST figure and the MNIST chapter's sentences share."""
    P = np.asarray(points, dtype=np.float64)
    if P.ndim < 2:
        raise ValueError(f"points must have shape (..., n, d); got shape {P.shape}")
    return np.sqrt(((P - P.mean(axis=-2, keepdims=True)) ** 2).sum(-1).mean(-1))


def change_direction(before, after, rel_tol: float = 0.01) -> str:
    """``"up"``, ``"down"`` or ``"flat"``: the change from ``before`` to ``after`` counts only beyond ``rel_tol`` of
    ``|before|`` (with ``before == 0``, beyond ``rel_tol`` itself). A chapter claims the direction its sentence
    states (:func:`probdr_lite.presentation.prose.claim`); no code turns it into a word."""
    a, b = float(before), float(after)
    rel_tol = check_scalar(rel_tol, "rel_tol", low=0.0)
    scale = abs(a) if a != 0 else 1.0
    if b - a > rel_tol * scale:
        return "up"
    if a - b > rel_tol * scale:
        return "down"
    return "flat"
