"""Figures and slider panels of the Laplacian Eigenmaps chapter.

Every builder here draws something the chapter explains:

- :func:`laplacians_figure`  a small graph and its three Laplacians L, L_sym, L_rw;
- :func:`energy_figure`      functions on a graph and their Laplacian energy
  sum_ij W_ij (f_i - f_j)^2: the smallest generalised eigenvectors are the smoothest;
- :func:`neighbours_panel`   sliders for the number of neighbours k and the heat-kernel
  bandwidth t, showing the graph's edges over the data and the embedding it gives;
- :func:`compare_figure`     our embedding beside scikit-learn's ``SpectralEmbedding``,
  with the agreement of the two subspaces;
- :func:`order_table`        the order along the roll at chosen settings (k, t);
- :func:`agreement_table`    the principal-angle cosines of :func:`compare_figure`'s rows and the decimals they
  share with 1.

The sliders' settings (:data:`NEIGHBOURS`, :data:`NEIGHBOUR_STEPS`, :data:`BANDWIDTH_FACTORS`) and the tables'
column labels (:data:`LABELS`) are defined here once and read by the kernel panel, the live figure, the chapter's
text and the tests.

The sliders come from :func:`probdr_lite.presentation.widgets.range_slider`. The alt texts are the chapter's: it describes
each figure after building it (:func:`probdr_lite.presentation.style.describe`) and passes the panel's as ``alt``.
"""

from __future__ import annotations


import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from matplotlib.collections import LineCollection
from scipy.linalg import orthogonal_procrustes
from scipy.sparse.csgraph import connected_components

from probdr_lite._validation import check_array, check_choice, check_length, check_scalar, check_seed
from probdr_lite.chapters.laplacian_eigenmaps import smooth_functions
from probdr_lite.eigenmaps import embed_graph, laplacian_eigenmaps
from probdr_lite._threads import one_thread
from probdr_lite.graphs import check_weights, default_bandwidth, graph_energy, knn_graph, laplacian
from probdr_lite.presentation.plotting import Table, class_scatter, fixed_layout
from probdr_lite.presentation.widgets import SliderPanel, range_slider, slider_label

__all__ = [
    "side_view",
    "laplacians_figure",
    "energy_figure",
    "neighbours_panel",
    "compare_figure",
    "order_table",
    "agreement_table",
    "NEIGHBOURS",
    "NEIGHBOUR_STEPS",
    "BANDWIDTH_FACTORS",
    "LABELS",
]

#: The k slider: (low, high, default) number of neighbours, for the kernel panel and the live figure alike.
NEIGHBOURS = (5, 60, 10)
#: The values of k that the live figure precomputes (from NEIGHBOURS' low to its high, its default among them).
NEIGHBOUR_STEPS = (5, 6, 8, 10, 15, 20, 25, 30, 40, 50, 60)
#: The live figure's bandwidths, as multiples of t0 (the mean squared distance to the default k nearest neighbours).
BANDWIDTH_FACTORS = (0.25, 0.5, 1, 2, 5, 20, 100)

#: The column labels of the chapter's tables (a missing one raises KeyError naming it).
LABELS = {
    "k": "neighbours $k$",
    "t": "bandwidth $t$",
    "rho": "order score (absolute Spearman correlation)",
    "data": "data set",
    "n": "$n$",
    "cos1": r"$\cos\theta_1$ (Belkin-Niyogi graph)",
    "cos2": r"$\cos\theta_2$ (Belkin-Niyogi graph)",
    "bn_decimals": r"decimals of $\cos\theta_2$ shared with 1 (Belkin-Niyogi graph)",
    "same_decimals": r"decimals of $\cos\theta_2$ shared with 1 (same graph)",
}

#: Colour map for "position along the manifold" (the toy manifolds' t).
POSITION_CMAP = "viridis"


# --- shared helpers ----------------------------------------------------------

def side_view(Y) -> np.ndarray:
    """Two columns to draw the data with: the (x, z) plane for 3-D data, where the
    swiss roll shows its spiral and the S-curve its S; the data itself when 2-D."""
    Y = check_array(Y, "Y", ndim=2)
    if Y.shape[1] == 3:
        return Y[:, [0, 2]].astype(np.float64)
    check_choice(Y.shape[1], "Y.shape[1]", (2, 3))
    return Y.astype(np.float64)


def _edges(W, view):
    """Segments (m, 2, 2) and weights (m,) of the undirected edges i < j of W."""
    C = sp.triu(sp.coo_matrix(W), k=1).tocoo()
    return np.stack([view[C.row], view[C.col]], axis=1), C.data.astype(np.float64)


def _edge_colours(weights, max_alpha=0.6):
    """Grey edges whose opacity grows with the weight (the heaviest edge is darkest)."""
    top = weights.max() if weights.size else 1.0
    rgba = np.zeros((weights.size, 4))
    rgba[:, :3] = 0.25
    rgba[:, 3] = 0.03 + max_alpha * weights / top
    return rgba


def _check_colour(values, n, name="t"):
    return check_length(check_array(values, name, ndim=1), name, n, "row of Y")


def _weights_of(Y, W):
    """``W`` checked by :func:`check_weights`, one row and column per point of ``Y``."""
    W = check_weights(W, "W")
    if W.shape[0] != Y.shape[0]:
        raise ValueError(f"W must be ({Y.shape[0]}, {Y.shape[0]}) to match Y; got shape {W.shape}")
    return W


def _padded_limits(ax, P, pad=0.08):
    lo, hi = P.min(axis=0), P.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    ax.set_xlim(lo[0] - pad * span[0], hi[0] + pad * span[0])
    ax.set_ylim(lo[1] - pad * span[1], hi[1] + pad * span[1])


# --- the three Laplacians ------------------------------------------------------

@one_thread
def laplacians_figure(Y, W):
    """A small graph (left) and its Laplacians L = D - W, L_sym and L_rw as heat maps.

    Parameters
    ----------
    Y : array_like, shape (n, 2) or (n, 3)
        Points of the graph, 3 <= n <= 40 (the matrices are drawn cell by cell).
    W : array_like or sparse, shape (n, n)
        Symmetric non-negative weights, every degree > 0.

    Returns
    -------
    matplotlib Figure
    """
    view = side_view(Y)
    n = view.shape[0]
    check_scalar(n, "len(Y)", low=3, high=40, integer=True)  # the matrices are drawn cell by cell
    W = _weights_of(view, W)
    Wd = W.toarray() if sp.issparse(W) else np.asarray(W)
    mats = {
        r"$L = D - W$": laplacian(Wd, "unnormalized"),
        r"$L_{\mathrm{sym}} = I - D^{-1/2} W D^{-1/2}$": laplacian(Wd, "symmetric"),
        r"$L_{\mathrm{rw}} = I - D^{-1} W$": laplacian(Wd, "random_walk"),
    }
    fig, axes = plt.subplots(1, 4, figsize=(10.2, 2.9), gridspec_kw={"width_ratios": [1.3, 1, 1, 1]})
    segs, w = _edges(Wd, view)
    axes[0].add_collection(LineCollection(segs, colors=_edge_colours(w, 0.8), linewidths=1.2))
    axes[0].scatter(view[:, 0], view[:, 1], s=90, c="white", edgecolors="k", zorder=3)
    for i, (x, y) in enumerate(view):
        axes[0].text(x, y, str(i), ha="center", va="center", fontsize=7, zorder=4)
    _padded_limits(axes[0], view, pad=0.12)
    axes[0].set_title(f"the graph W ({n} points)", fontsize=10)
    axes[0].set_xticks([]); axes[0].set_yticks([])
    for ax, (title, M) in zip(axes[1:], mats.items()):
        scale = float(np.abs(M).max())
        im = ax.imshow(M, cmap="RdBu_r", vmin=-scale, vmax=scale)
        ax.set_title(title, fontsize=9)
        ax.set_xticks([]); ax.set_yticks([])
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
    fig.tight_layout()
    return fig


# --- the Laplacian energy ------------------------------------------------------------

@one_thread
def energy_figure(Y, W, colour_index: int = 12, seed: int = 0):
    """Three functions f on the graph, drawn over its edges, with their energy.

    The functions are the first generalised eigenvector v_1 (L v = lambda D v,
    constant vector dropped), the ``colour_index``-th one, and a random vector;
    each is scaled to f^T D f = 1 and made D-orthogonal to the constant vector,
    so that the energy E(f) = sum_ij W_ij (f_i - f_j)^2 = 2 f^T L f can be
    compared fairly. For an eigenvector E = 2 lambda.

    Parameters
    ----------
    Y : array_like, shape (n, 2) or (n, 3)
    W : array_like or sparse, shape (n, n)
        A connected symmetric graph on the rows of Y (else ``ValueError``).
    colour_index : int, default 12
        Which eigenvector to show in the middle, in [2, min(n - 2, 50)].
    seed : int, default 0
        Seed of the random vector.

    Returns
    -------
    matplotlib Figure
    """
    view = side_view(Y)
    W = _weights_of(view, W)
    funcs = []
    for fn in smooth_functions(W, colour_index, seed):
        name = ("a random vector" if fn["index"] is None
                else rf"$v_{{{fn['index']}}}$, $\lambda_{{{fn['index']}}}$ = {fn['lam']:.4f}")
        funcs.append((fn["f"], name))
    segs, w = _edges(W, view)
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2))
    for ax, (f, name) in zip(axes, funcs):
        ax.add_collection(LineCollection(segs, colors=_edge_colours(w, 0.35), linewidths=0.5))
        lim = float(np.abs(f).max())
        ax.scatter(view[:, 0], view[:, 1], c=f, cmap="RdBu_r", vmin=-lim, vmax=lim, s=7,
                   linewidths=0, zorder=3)
        energy = graph_energy(f[:, None], W)
        ax.set_title(f"f = {name}\n" + rf"$E(f) = \sum_{{ij}} W_{{ij}} (f_i - f_j)^2$ = {energy:.4g}",
                     fontsize=9)
        _padded_limits(ax, view)
        ax.set_xticks([]); ax.set_yticks([])
    fig.tight_layout()
    return fig


# --- the neighbourhood panel -------------------------------------------------------

@one_thread
def _neighbours_figure(Y, t, alt):
    """Figure (alt text ``alt``) and update(n_neighbors, bandwidth) for :func:`neighbours_panel`."""
    Y = check_array(Y, "Y", ndim=2, min_rows=10)
    view = side_view(Y)
    t = _check_colour(t, Y.shape[0])
    fig, (ax_g, ax_e) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    edges = LineCollection([], linewidths=0.5, zorder=1)
    ax_g.add_collection(edges)
    ax_g.scatter(view[:, 0], view[:, 1], c=t, cmap=POSITION_CMAP, s=5, linewidths=0, zorder=2)
    _padded_limits(ax_g, view)
    ax_g.set_xticks([]); ax_g.set_yticks([])
    ax_g.set_xlabel("the data seen side on, with the graph's edges", fontsize=8)
    points = ax_e.scatter(np.zeros(Y.shape[0]), np.zeros(Y.shape[0]), c=t, cmap=POSITION_CMAP,
                          s=5, linewidths=0)
    note = ax_e.text(0.5, 0.5, "", transform=ax_e.transAxes, ha="center", va="center",
                     fontsize=9, color="firebrick", wrap=True)
    ax_e.set_xlabel("coordinate 1", fontsize=8)
    ax_e.set_ylabel("coordinate 2", fontsize=8)
    ax_e.tick_params(labelsize=7)

    @one_thread
    def update(n_neighbors, bandwidth):
        W = knn_graph(Y, n_neighbors=int(n_neighbors), mode="heat", bandwidth=float(bandwidth))
        segs, w = _edges(W, view)
        edges.set_segments(segs)
        edges.set_color(_edge_colours(w))
        ax_g.set_title(f"k = {int(n_neighbors)}, t = {bandwidth:.3g}: {len(w):,} edges", fontsize=10)
        n_parts, _ = connected_components(W, directed=False)
        if n_parts > 1:
            # Laplacian Eigenmaps needs one component: say so instead of drawing a degenerate embedding.
            points.set_offsets(np.empty((0, 2)))
            note.set_text(f"the graph falls apart into {n_parts} pieces:\n"
                          "no single embedding; use more neighbours")
            ax_e.set_title("Laplacian Eigenmaps: undefined", fontsize=10)
            return
        X, lam = embed_graph(W, n_components=2, return_eigenvalues=True)
        points.set_offsets(X)
        note.set_text("")
        _padded_limits(ax_e, X)
        ax_e.set_title(rf"Laplacian Eigenmaps ($\lambda_1$ = {lam[0]:.2g}, $\lambda_2$ = {lam[1]:.2g})",
                       fontsize=10)

    fixed_layout(fig, alt, left=0.03, right=0.98, top=0.88, bottom=0.13, wspace=0.22)
    return fig, update, Y


@one_thread
def neighbours_panel(Y, t, *, alt: str, n_neighbors=NEIGHBOURS, bandwidth=None) -> SliderPanel:
    """Sliders for k (``n_neighbors``) and the heat-kernel bandwidth t over a Laplacian-eigenmaps figure.

    Left: the data seen side on with the k-NN graph's edges, darker for heavier
    weights W_ij = exp(-||y_i - y_j||^2 / t). Right: the embedding by
    :func:`probdr_lite.eigenmaps.embed_graph`, coloured by ``t`` (the position
    along the manifold). Too many neighbours join different layers of a rolled
    sheet by short-cut edges and the embedding folds; a small bandwidth fades
    those long edges out again. As t grows every weight tends to 1, the 0/1 graph.

    Parameters
    ----------
    Y : array_like, shape (n, 3) or (n, 2)
        Data, n >= 10.
    t : array_like, shape (n,)
        Colour: the position along the manifold.
    alt : str
        The figure's alt text, one sentence (the chapter's words).
    n_neighbors : (low, high, default), default :data:`NEIGHBOURS`
        Integers in [1, n - 1].
    bandwidth : (low, high, default) or None
        Positive numbers; None means the first and last of :data:`BANDWIDTH_FACTORS` times t0, from t0, with t0 =
        :func:`probdr_lite.graphs.default_bandwidth` ``(Y, default k)``. A logarithmic slider.

    Returns
    -------
    SliderPanel with sliders ``"n_neighbors"`` and ``"bandwidth"``.
    """
    Y = check_array(Y, "Y", ndim=2, min_rows=10)
    k_slider = range_slider("n_neighbors", n_neighbors, lower=1, upper=Y.shape[0] - 1,
                            integer=True, description=slider_label("n_neighbors"))
    if bandwidth is None:  # the live figure's range: BANDWIDTH_FACTORS' ends times t0, starting at t0
        t0 = default_bandwidth(Y, int(k_slider.value))
        bandwidth = (BANDWIDTH_FACTORS[0] * t0, BANDWIDTH_FACTORS[-1] * t0, t0)
    t_slider = range_slider("bandwidth", bandwidth, positive=True, log=True, description=slider_label("bandwidth"))
    fig, update, _ = _neighbours_figure(Y, t, alt)
    return SliderPanel(fig, update, [k_slider, t_slider])


# --- agreement with scikit-learn -------------------------------------------------

@one_thread
def compare_figure(datasets, n_neighbors: int = 10, random_state: int = 0):
    """Our Laplacian Eigenmaps (top row) beside scikit-learn's ``SpectralEmbedding`` (bottom row).

    For each data set both methods embed into two dimensions with ``n_neighbors``
    neighbours. Ours uses the Belkin-Niyogi graph (k other points, W = max(G, G^T));
    scikit-learn counts each point among its own k neighbours and averages
    G and G^T. The agreement of the two is the smallest cosine of the principal
    angles between the two 2-D subspaces (1 = the same subspace); it is
    reported for that default pair, and for ours run on scikit-learn's graph
    convention (``n_neighbors - 1``, ``symmetrize="mean"``), which should agree
    to round-off. For display, scikit-learn's embedding is rotated onto ours
    (orthogonal Procrustes), since eigenvectors have no fixed sign.

    Parameters
    ----------
    datasets : dict of name -> (Y, colour, is_class)
        ``colour`` of shape (n,): a position (drawn with a colour scale) or
        class labels (``is_class=True``, drawn with the class colours).
    n_neighbors : int, default 10
        k, at least 2.
    random_state : int, default 0

    Returns
    -------
    fig : matplotlib Figure
    rows : list of dict
        Per data set: ``name``, ``n``, ``cosines`` (the principal-angle cosines for the
        default graphs, decreasing), ``agreement`` (the smallest of them) and
        ``agreement_same_graph``.
    """
    from sklearn.manifold import SpectralEmbedding

    from probdr_lite.metrics import subspace_agreement

    if not isinstance(datasets, dict) or not datasets:
        raise TypeError("datasets must be a non-empty dict of name -> (Y, colour, is_class)")
    k = check_scalar(n_neighbors, "n_neighbors", low=2, integer=True)
    seed = check_seed(random_state, "random_state")
    fig, axes = plt.subplots(2, len(datasets), figsize=(3.3 * len(datasets), 6.0), squeeze=False)
    rows = []
    for j, (name, entry) in enumerate(datasets.items()):
        if not isinstance(entry, (tuple, list)) or len(entry) != 3:
            raise TypeError(f"datasets[{name!r}] must be (Y, colour, is_class); got {type(entry).__name__}")
        Y, colour, is_class = entry
        Y = check_array(Y, f"datasets[{name!r}] Y", ndim=2, min_rows=k + 2).astype(np.float64)
        colour = _check_colour(colour, Y.shape[0], f"datasets[{name!r}] colour")
        ours = laplacian_eigenmaps(Y, 2, n_neighbors=k, random_state=seed)
        same = laplacian_eigenmaps(Y, 2, n_neighbors=k - 1, symmetrize="mean", random_state=seed)
        theirs = SpectralEmbedding(n_components=2, n_neighbors=k, random_state=seed).fit_transform(Y)
        cosines = subspace_agreement(ours, theirs)  # principal-angle cosines, decreasing
        row = {"name": name, "n": Y.shape[0], "cosines": cosines,
               "agreement": float(cosines[-1]),
               "agreement_same_graph": float(subspace_agreement(same, theirs)[-1])}
        rows.append(row)
        R, _ = orthogonal_procrustes(theirs, ours)
        for i, (X, who) in enumerate([(ours, "this book"), (theirs @ R, "scikit-learn")]):
            ax = axes[i, j]
            if is_class:
                class_scatter(ax, X, colour.astype(int), s=3, legend=(j == len(datasets) - 1 and i == 0))
            else:
                ax.scatter(X[:, 0], X[:, 1], c=colour, cmap=POSITION_CMAP, s=3, linewidths=0)
            ax.set_xticks([]); ax.set_yticks([])
            title = f"{name}: {who}"
            if i == 1:
                title += f"\nagreement {row['agreement']:.4f}"
            ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig, rows


def order_table(order):
    """A :class:`~probdr_lite.presentation.plotting.Table` of :func:`probdr_lite.chapters.laplacian_eigenmaps.
    unrolling_facts`: one row per setting, with k, t (3 significant digits) and the |Spearman correlation| of the
    first coordinate with the position along the roll (2 decimals; ``n/a`` where the graph falls apart)."""
    from probdr_lite.presentation.prose import num

    body = [[str(f["k"]), f"{f['t']:.3g}", num(f["rho"], 2)] for f in order["frames"]]
    return Table([LABELS["k"], LABELS["t"], LABELS["rho"]], body)


def agreement_table(rows, agreement):
    """A :class:`~probdr_lite.presentation.plotting.Table` of :func:`compare_figure`'s ``rows`` and their
    :func:`probdr_lite.chapters.laplacian_eigenmaps.agreement_facts`: per data set its n, the two principal-angle
    cosines with the Belkin-Niyogi graph (5 decimals each) and the decimals the smaller shares with 1, then the
    decimals that the smaller cosine with the same graph shares with 1 (a cosine printed to a few decimals would
    show 1 whether it shared 8 decimals or 15)."""
    body = []
    for r, a in zip(rows, agreement["sets"]):
        if r["name"] != a["name"]:
            raise ValueError(f"rows and agreement must list the same data sets in order; got {r['name']!r} "
                             f"and {a['name']!r}")
        cos = [f"{c:.5f}" for c in r["cosines"]]
        body.append([r["name"], str(r["n"]), *cos, str(a["bn"]), str(a["same"])])
    keys = ["data", "n", "cos1", "cos2", "bn_decimals", "same_decimals"]
    return Table([LABELS[k] for k in keys], body)
