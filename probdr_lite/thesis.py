"""Does a block perform Laplacian Eigenmaps? The paper's title claim, measured along the MNIST path.

If a block were one step of Laplacian-eigenmaps inference, the latents X_t would move towards the Laplacian
Eigenmaps (LE) embedding of the graph the inference uses: the top principal subspace of X_t would turn towards the
span of the q smallest non-trivial generalised eigenvectors (L v = lambda D v, the constant one dropped). Two graphs
are candidates:

- the attention graph at X_0: weights E = exp(S), S = (kappa / d_q) X_0 X_0^T - beta I, whose random walk D^{-1} E
  is the first block's attention A (:func:`attention_graph`); its LE embedding is the eigenvectors of smallest
  eigenvalue of I - A, the modes a diffusion step I - h (I - A) damps least;
- the k-nearest-neighbour graph of the pixels, the Laplacian Eigenmaps chapter's graph and settings
  (:func:`probdr_lite.eigenmaps.laplacian_eigenmaps` with its defaults: 10 neighbours, 0/1 weights).

- :func:`principal_subspace`  the top-q principal directions of X (an orthonormal (n, q) basis, X centred);
- :func:`le_targets`          both LE embeddings, q_max columns each;
- :func:`le_alignment`        mean principal-angle cosine between the two, per variant, layer, graph and q
  (:func:`probdr_lite.metrics.subspace_agreement`);
- :func:`random_baseline`     the same number for random q-dimensional subspaces (about sqrt(q / n));
- :func:`participation_ratio` how many points an eigenvector lives on (1: a single point);
- :func:`effective_rank`      exp of the entropy of the normalised singular values (Roy & Vetterli, 2007): 1 for
  a rank-one X (every row the same: the rank collapse of deep attention), d_q for a flat spectrum.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from probdr_lite._threads import one_thread
from probdr_lite._validation import check_array, check_scalar, check_seed
from probdr_lite.eigenmaps import embed_graph, laplacian_eigenmaps
from probdr_lite.metrics import subspace_agreement
from probdr_lite.unrolled import KAPPA_MAX, BETA_MAX, MAX_DENSE_N

__all__ = [
    "QS",
    "principal_subspace",
    "attention_graph",
    "le_targets",
    "GRAPHS",
    "graph_targets",
    "le_alignment",
    "random_baseline",
    "participation_ratio",
    "effective_rank",
    "effective_rank_path",
    "CEILING",
    "robustness",
    "robustness_facts",
]

#: The subspace dimensions q of the book's test.
QS = (2, 5, 10)


def _qs(qs, n) -> list:
    if isinstance(qs, (str, bytes)) or not hasattr(qs, "__len__") or len(qs) == 0:
        raise ValueError(f"qs must be a non-empty list of integers in [1, {n - 2}]; got {qs!r}")
    return [check_scalar(q, "qs", low=1, high=n - 2, integer=True) for q in qs]


def principal_subspace(X, q) -> np.ndarray:
    """An orthonormal basis (n, q) of the top-q principal subspace of X: left singular vectors of X - 1 mean(X).

    Centring removes the direction 1 that every row shares (the trivial, constant LE eigenvector has no
    counterpart among principal directions).

    Parameters
    ----------
    X : array or tensor of shape (n, d), n >= 3
    q : int in [1, min(n - 1, d)]
    """
    X = check_array(X, "X", ndim=2, min_rows=3).astype(np.float64)
    q = check_scalar(q, "q", low=1, high=min(X.shape[0] - 1, X.shape[1]), integer=True)
    U, _, _ = np.linalg.svd(X - X.mean(0, keepdims=True), full_matrices=False)
    return U[:, :q]


def attention_graph(X, kappa, beta=1.0) -> np.ndarray:
    """The attention's weight matrix W = exp(S - max S), S = (kappa / d_q) X X^T - beta I (no mask), dense float64.

    Symmetric (S is symmetrised to the last bit), so D^{-1} W is the attention A = softmax(S) and
    (D - W) v = lambda D v has the eigenvectors of I - A. The common factor exp(-max S) changes neither.
    """
    X = check_array(X, "X", ndim=2, min_rows=3).astype(np.float64)
    if X.shape[0] > MAX_DENSE_N:
        raise ValueError(f"X has n = {X.shape[0]} rows, above MAX_DENSE_N = {MAX_DENSE_N} for a dense graph")
    kappa = check_scalar(kappa, "kappa", low=0.0, high=KAPPA_MAX, low_inclusive=False)
    beta = check_scalar(beta, "beta", low=0.0, high=BETA_MAX)
    S = (kappa / X.shape[1]) * (X @ X.T) - beta * np.eye(X.shape[0])
    S = 0.5 * (S + S.T)
    return np.exp(S - S.max())


@one_thread
def le_targets(images, X0, kappa, beta=1.0, q_max=max(QS)) -> dict:
    """The two LE embeddings the test compares with: {"attention": (n, q_max), "pixels": (n, q_max)}.

    "attention": :func:`probdr_lite.eigenmaps.embed_graph` of :func:`attention_graph` (X0, kappa, beta);
    "pixels": :func:`probdr_lite.eigenmaps.laplacian_eigenmaps` (images, q_max) with the book's defaults.
    Columns are eigenvectors 2, ..., q_max + 1 in order, so the first q columns are the q-dimensional embedding.
    Also returns their generalised eigenvalues under "attention_eigenvalues" and "pixels_eigenvalues".
    """
    images = check_array(images, "images", ndim=2, min_rows=3)
    X0 = check_array(X0, "X0", ndim=2, min_rows=3)
    if images.shape[0] != X0.shape[0]:
        raise ValueError(f"X0 must have one row per image ({images.shape[0]}); got {X0.shape[0]}")
    q_max = check_scalar(q_max, "q_max", low=1, high=X0.shape[0] - 2, integer=True)
    V_att, lam_att = embed_graph(attention_graph(X0, kappa, beta), n_components=q_max, return_eigenvalues=True)
    V_pix, lam_pix = laplacian_eigenmaps(images, q_max, return_eigenvalues=True)
    return {"attention": V_att, "pixels": V_pix, "attention_eigenvalues": lam_att, "pixels_eigenvalues": lam_pix}


#: The graphs of the robustness test (:func:`graph_targets`): the chapter's attention graph W = exp(S) at X_0; the
#: same without its self-loops (as scikit-learn's spectral embedding and the Laplacian Eigenmaps chapter build
#: graphs: at kappa = 30 the diagonal of W dominates, so its LE vectors sit on single images); the k-NN graph of
#: the latents X_0; the pixels' k-NN graph (both with the Laplacian Eigenmaps chapter's 10 neighbours, 0/1 weights).
GRAPHS = ("attention", "attention_no_loops", "latents_knn", "pixels")


def graph_targets(images, X0, kappa, beta=1.0, q_max=max(QS)) -> dict:
    """The LE embedding of each graph of :data:`GRAPHS`: {graph: (n, q_max) array}, eigenvectors 2, ..., q_max + 1."""
    images = check_array(images, "images", ndim=2, min_rows=3)
    X0 = check_array(X0, "X0", ndim=2, min_rows=3).astype(np.float64)
    if images.shape[0] != X0.shape[0]:
        raise ValueError(f"X0 must have one row per image ({images.shape[0]}); got {X0.shape[0]}")
    q_max = check_scalar(q_max, "q_max", low=1, high=X0.shape[0] - 2, integer=True)
    W = attention_graph(X0, kappa, beta)
    W_off = W.copy()
    np.fill_diagonal(W_off, 0.0)
    return {"attention": embed_graph(W, n_components=q_max),
            "attention_no_loops": embed_graph(W_off, n_components=q_max),
            "latents_knn": laplacian_eigenmaps(X0, q_max),
            "pixels": laplacian_eigenmaps(images, q_max)}


def _targets(targets: dict) -> dict:
    if not isinstance(targets, dict):
        raise ValueError("targets must be a dict {graph: (n, q_max) embedding}, e.g. from le_targets")
    out = {k: check_array(v, f"targets[{k!r}]", ndim=2, min_rows=3) for k, v in targets.items()
           if not k.endswith("_eigenvalues")}
    if not out:
        raise ValueError("targets must hold at least one embedding")
    return out


def _mean_cosine(basis, V) -> float:
    return float(subspace_agreement(basis, V).mean())


@one_thread
def le_alignment(paths: dict, targets: dict, qs=QS) -> dict:
    """Mean principal-angle cosine between the top-q principal subspace of X_t and each LE embedding's first q.

    1 means X_t's q leading principal directions span the LE embedding; a random subspace gives about
    sqrt(q / n) (:func:`random_baseline`).

    Parameters
    ----------
    paths : dict {variant: [X_0, ..., X_T]}, e.g. from :func:`probdr_lite.objections.mnist_paths`
    targets : dict {graph: (n, q_max) array}, from :func:`le_targets`
    qs : sequence of ints, default :data:`QS`

    Returns
    -------
    dict {variant: {graph: {q: float array over the layers}}}.
    """
    targets = _targets(targets)
    if not isinstance(paths, dict) or not paths:
        raise ValueError("paths must be a non-empty dict {variant: list of latents}")
    n = next(iter(targets.values())).shape[0]
    qs = _qs(qs, n)
    for k, V in targets.items():
        if V.shape[0] != n or V.shape[1] < max(qs):
            raise ValueError(f"targets[{k!r}] must have shape ({n}, >= {max(qs)}); got {V.shape}")
    out = {}
    for variant, path in paths.items():
        rows = {k: {q: [] for q in qs} for k in targets}
        for t, X in enumerate(path):
            X = check_array(X, f"paths[{variant!r}][{t}]", ndim=2, min_rows=3)
            if X.shape[0] != n:
                raise ValueError(f"paths[{variant!r}][{t}] must have n = {n} rows like the targets; got {X.shape[0]}")
            for q in qs:
                B = principal_subspace(X, q)
                for k, V in targets.items():
                    rows[k][q].append(_mean_cosine(B, V[:, :q]))
        out[variant] = {k: {q: np.array(v) for q, v in r.items()} for k, r in rows.items()}
    return out


@one_thread
def random_baseline(targets: dict, qs=QS, n_draws=20, seed=0) -> dict:
    """The mean principal-angle cosine of random q-dimensional subspaces (Gaussian bases, seeded) with each target.

    For a uniformly random subspace the sum of squared cosines with a fixed q-dimensional one has mean q^2 / n, so
    the mean cosine is about sqrt(q / n) (a little less: the mean of a root is below the root of the mean).

    Returns
    -------
    dict {graph: {q: {"mean": float, "sd": float}}} over ``n_draws`` draws.
    """
    targets = _targets(targets)
    n = next(iter(targets.values())).shape[0]
    qs = _qs(qs, n)
    n_draws = check_scalar(n_draws, "n_draws", low=2, high=10_000, integer=True)
    rng = np.random.default_rng(check_seed(seed))
    out = {}
    for k, V in targets.items():
        out[k] = {}
        for q in qs:
            vals = np.array([_mean_cosine(rng.standard_normal((n, q)), V[:, :q]) for _ in range(n_draws)])
            out[k][q] = {"mean": float(vals.mean()), "sd": float(vals.std(ddof=1))}
    return out


def participation_ratio(V) -> np.ndarray:
    """How many points carry each column v of V: (sum_i v_i^2)^2 / sum_i v_i^4, from 1 (one point) to n (all equal).

    An LE eigenvector of a nearly disconnected graph lives on one small component; its ratio is then close to the
    size of that component.
    """
    V = check_array(V, "V", ndim=2, min_rows=1).astype(np.float64)
    sq = V ** 2
    den = (sq ** 2).sum(0)
    if np.any(den == 0):
        raise ValueError("V must have no zero column")
    return sq.sum(0) ** 2 / den


def effective_rank(X) -> float:
    """exp(H(p)), p_i = s_i / sum_j s_j the normalised singular values of X (Roy & Vetterli, 2007).

    Between 1 (rank one: every row a multiple of one vector) and min(n, d) (all singular values equal). X is not
    centred: LayerNormed rows that all become the same vector, the rank collapse of deep attention (Dong et al.,
    2021), give 1.
    """
    X = check_array(X, "X", ndim=2, min_rows=1).astype(np.float64)
    s = np.linalg.svd(X, compute_uv=False)
    if s.sum() == 0:
        raise ValueError("X must not be all zeros (its effective rank is undefined)")
    p = s[s > 0] / s.sum()
    return float(math.exp(-(p * np.log(p)).sum()))


@one_thread
def effective_rank_path(paths: dict) -> dict:
    """{variant: float array of :func:`effective_rank` over the layers}."""
    if not isinstance(paths, dict) or not paths:
        raise ValueError("paths must be a non-empty dict {variant: list of latents}")
    return {v: np.array([effective_rank(X.numpy() if isinstance(X, torch.Tensor) else X) for X in p])
            for v, p in paths.items()}


#: A start at or above this mean cosine leaves the test no headroom: it cannot show a block moving towards the target.
CEILING = 0.95


def robustness(images, paths_by_kappa: dict, beta=1.0, qs=(2, 10), n_draws=20) -> dict:
    """The thesis test for every graph of :data:`GRAPHS` at every kappa: {kappa: {"le": ..., "baseline": ...}}.

    ``paths_by_kappa`` maps each kappa to {variant: [X_0, ..., X_T]} (e.g. from
    :func:`probdr_lite.objections.mnist_paths` at that kappa, one X_0 for all); the targets are built at that
    kappa from X_0 (:func:`graph_targets`), "le" is :func:`le_alignment` and "baseline" :func:`random_baseline`.
    """
    if not isinstance(paths_by_kappa, dict) or not paths_by_kappa:
        raise ValueError("paths_by_kappa must be a non-empty dict {kappa: {variant: list of latents}}")
    out = {}
    for kappa, paths in paths_by_kappa.items():
        X0 = next(iter(paths.values()))[0]
        X0 = X0.numpy() if isinstance(X0, torch.Tensor) else X0
        targets = graph_targets(images, X0, kappa, beta, q_max=max(qs))
        out[kappa] = {"le": le_alignment(paths, targets, qs), "baseline": random_baseline(targets, qs, n_draws)}
    return out


def robustness_facts(robust: dict, n_sd=3.0, rel_tol=0.02, ceiling=CEILING) -> list:
    """One dict per (kappa, graph, q) of :func:`robustness`: where the latents start, the random level, and how
    each block moves.

    A block "moves towards" the LE embedding when its last layer is above its start by more than ``rel_tol`` of
    the start and the run leaves the random level (more than ``n_sd`` standard deviations of the random subspaces
    above their mean), "away" likewise below, else "still"; the thesis text of the chapter reads the same rule.
    ``start_above_random`` and ``at_ceiling`` (start >= ``ceiling``) say whether the test has room to show a move.
    """
    rows = []
    for kappa, r in robust.items():
        le, base = r["le"], r["baseline"]
        variants = list(le)
        for g in base:
            for q in base[g]:
                b = base[g][q]
                level = b["mean"] + n_sd * b["sd"]
                start = float(le[variants[0]][g][q][0])
                ends = {v: float(le[v][g][q][-1]) for v in variants}
                informative = max([start] + list(ends.values())) > level
                moves = {}
                for v, end in ends.items():
                    change = end - start
                    moves[v] = ("still" if not informative or abs(change) <= rel_tol * abs(start)
                                else "towards" if change > 0 else "away")
                rows.append({"kappa": float(kappa), "graph": g, "q": int(q), "start": start, "ends": ends,
                             "moves": moves, "random": b["mean"], "random_sd": b["sd"],
                             "start_above_random": start > level, "at_ceiling": start >= ceiling})
    return rows
