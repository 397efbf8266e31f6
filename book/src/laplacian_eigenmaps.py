# %% tags=["colab", "remove-cell"]
#@title Colab only: install this book's helper package { display-mode: "form" }
# Anywhere else (the book build, Binder, Jupyter, a local checkout) this cell does nothing.
import importlib.metadata, importlib.util, re, sys
if "google.colab" in sys.modules and importlib.util.find_spec("probdr_lite") is None:
    have = {re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() for d in importlib.metadata.distributions()}
    needs = {"numpy", "scipy", "scikit-learn", "matplotlib", "ipywidgets", "ipython", "torch", "torchvision", "tqdm", "threadpoolctl", "jsonschema"}
    no_deps = "--no-deps" if needs <= have else ""  # Colab has them all: add this package, change nothing
    # %pip install --quiet {no_deps} "probdr-lite @ git+https://github.com/probdr-lite/probdr-lite@main"

# %% [markdown]
# # Laplacian Eigenmaps
#
# Suppose the data lie on a thin curved sheet inside a high-dimensional space, like a rolled-up
# carpet. Straight-line distances then mislead: two points on neighbouring turns of the roll can
# be close in space but far apart along the sheet. Laplacian Eigenmaps {cite:p}`belkin2003laplacian`
# trusts only *short* distances. It links each point to a few near neighbours, forgets every
# other distance, and looks for coordinates in which linked points stay close. The whole book
# grows out of this method, so this chapter builds it slowly and checks each step.
#
# **What the chapter finds.** The best coordinates, in the method's sense, are the eigenvectors
# of one matrix problem, $L v = \lambda D v$, with the smallest eigenvalues above zero. They are
# the smoothest functions on the graph: on a spiral, the first of them alone lists the points in
# their order along it. On a swiss roll, too many neighbours with flat weights glue neighbouring
# turns together and the embedding folds; a smaller bandwidth undoes it. On the same graph, this book's code and scikit-learn give the same embedding to
# round-off.
#
# **In this chapter you will learn**
#
# - how to turn data into a neighbourhood graph and its three Laplacians;
# - why an energy, the weighted squared length of the graph's edges, measures how badly an
#   embedding tears the graph apart, and why $L v = \lambda D v$ minimises it;
# - how the number of neighbours $k$ and the bandwidth $t$ decide whether a swiss roll unrolls;
# - how to compare two embeddings whose eigenvectors have no fixed sign.

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from probdr_lite.data import load_mnist, toy_manifold
from probdr_lite.eigenmaps import embed_graph, laplacian_eigenmaps
from probdr_lite.presentation.figures.neighbourhoods import (
    BANDWIDTH_FACTORS,
    NEIGHBOURS,
    agreement_table,
    compare_figure,
    energy_figure,
    laplacians_figure,
    neighbours_panel,
    order_table,
)
from probdr_lite.chapters.laplacian_eigenmaps import (
    agreement_facts,
    classes_apart,
    harmonic_score,
    order_score,
    smooth_functions,
    smoothness_facts,
    unrolling_facts,
)
from probdr_lite.presentation.live.builders import neighbours_live
from probdr_lite.presentation.prose import claim, glue, num, pct, sci
from probdr_lite.presentation.style import describe
from probdr_lite.graphs import default_bandwidth, graph_energy, knn_graph, laplacian

blas = threadpool_limits(limits=1)  # a few hundred points: one BLAS thread beats several waiting for each other

# %% [markdown]
# ## From data to a graph
#
# Start with $n$ points $y_1, \dots, y_n$, the rows of $Y \in \mathbb{R}^{n \times d}$. The
# *k-nearest-neighbour graph* joins $i$ and $j$ when either point is among the other's $k$
# nearest. Joining on "either" rather than "both" keeps the graph symmetric: if $G$ is the
# directed neighbour relation, then $W = \max(G, G^\top)$ elementwise. Each edge gets a weight,
# either 1 or the *heat kernel*
#
# $$
# W_{ij} = \exp\!\left(-\frac{\lVert y_i - y_j \rVert^2}{t}\right),
# $$
#
# which is close to 1 for a very short edge and fades for longer ones; the bandwidth $t$ sets
# what counts as long. Non-edges have $W_{ij} = 0$. The *degree* of a point is the total weight
# of its edges, $D = \operatorname{diag}(W \mathbf{1})$, and from $W$ and $D$ come three
# Laplacians:
#
# $$
# L = D - W, \qquad
# L_{\mathrm{sym}} = I - D^{-1/2} W D^{-1/2}, \qquad
# L_{\mathrm{rw}} = I - D^{-1} W .
# $$
#
# $D^{-1} W$ is row-stochastic: its row $i$ is a probability distribution over the neighbours of
# $i$, the transition matrix of a random walk on the graph, which is where $L_{\mathrm{rw}}$ gets
# its name. Keep $A = D^{-1} W$ in mind; in [the transformer-block chapter](transformer_block.ipynb)
# it becomes the attention matrix, and $L_{\mathrm{rw}} = I - A$. Until then, $L$ on its own
# always means $D - W$.
#
# Here is a graph on twelve points along a wavy line, with two neighbours each.

# %%
s = np.linspace(0, 3 * np.pi, 12) + np.random.default_rng(0).normal(0, 0.1, 12)
Y_small = np.column_stack([s, np.sin(s)])  # 12 points along a sine wave, in order
W = knn_graph(Y_small, n_neighbors=2)  # W = max(G, G^T), 0/1 weights, sparse
D = sp.diags(np.asarray(W.sum(axis=1)).ravel())  # D = diag(W 1)
L = laplacian(W, kind="unnormalized")  # L = D - W
L_sym = laplacian(W, kind="symmetric")  # I - D^{-1/2} W D^{-1/2}
L_rw = laplacian(W, kind="random_walk")  # I - D^{-1} W

ones = np.ones(12)  # L 1 = 0 and L_rw 1 = 0
sqrt_d = np.sqrt(D.diagonal())  # L_sym D^{1/2} 1 = 0

# %%
fig = laplacians_figure(Y_small, W)
describe(fig, f"A graph of {len(Y_small)} points, its edges shaded by weight, beside heat maps of its three "
              "Laplacians: L = D − W, the symmetric L_sym and the random-walk L_rw.")
plt.show()

# %% tags=["remove-cell"]
claim(bool(max(np.abs(L @ ones).max(), np.abs(L_rw @ ones).max(), np.abs(L_sym @ sqrt_d).max()) < 1e-12),
      "All three Laplacians send something to zero: L and L_rw the constant vector, L_sym the vector D^{1/2} 1")
claim(bool(abs(L - L.T).max() < 1e-15 and abs(L_sym - L_sym.T).max() < 1e-15 and abs(L_rw - L_rw.T).max() > 0.1
           and len(set(D.diagonal())) > 1),
      "L and L_sym are symmetric; L_rw is not, because each row is divided by its own degree, and the degrees differ "
      "from point to point")
glue("degree_min", str(int(D.diagonal().min())))
glue("degree_max", str(int(D.diagonal().max())))
claim(len(set(D.diagonal())) == 2, "here a point has degree_min or degree_max edges")

# %% [markdown]
# The points are numbered along the wave, so each matrix is a band around its diagonal. All
# three Laplacians send something to zero: $L$ and $L_{\mathrm{rw}}$ the constant vector, since
# every row of $D - W$ and of $I - D^{-1}W$ sums to zero, and $L_{\mathrm{sym}}$ the vector
# $D^{1/2}\mathbf{1}$. $L$ and $L_{\mathrm{sym}}$ are symmetric; $L_{\mathrm{rw}}$ is not, because
# each row is divided by its own degree, and the degrees differ from point to point (here a point
# has {glue:text}`degree_min` or {glue:text}`degree_max` edges).
#
# ## What the Laplacian measures
#
# Give every point a coordinate $x_i \in \mathbb{R}^{q}$: the rows $x_i$ of $X \in \mathbb{R}^{n \times q}$
# are the points, its $q$ columns the coordinates, and $q$ is the dimension of the embedding.
# A good embedding keeps linked points close, so add up the squared lengths of all edges,
# each weighted by $W_{ij}$. Expanding the square shows where $L$ comes from:
#
# $$
# \begin{aligned}
# E(X) &= \sum_{ij} W_{ij} \lVert x_i - x_j \rVert^2
# = \sum_{ij} W_{ij} \left(\lVert x_i\rVert^2 + \lVert x_j\rVert^2 - 2\, x_i^\top x_j\right) \\
# &= 2 \operatorname{tr}(X^\top D X) - 2 \operatorname{tr}(X^\top W X)
# = 2 \operatorname{tr}(X^\top L X).
# \end{aligned}
# $$

# %%
X_random = np.random.default_rng(1).normal(size=(12, 2))
E_edges = graph_energy(X_random, W)  # sum_ij W_ij ||x_i - x_j||^2, edge by edge
E_trace = 2 * np.trace(X_random.T @ (L @ X_random))  # 2 tr(X^T L X)

# %% tags=["remove-cell"]
glue("energy_small", num(E_trace, 4))
claim(bool(abs(E_edges - E_trace) <= 1e-12 * abs(E_trace)), "Added up edge by edge or computed as the trace, the "
      "energy of a random embedding of the twelve points is the same")

# %% [markdown]
# Added up edge by edge or computed as the trace, the energy of a random embedding of the twelve
# points is the same, $E(X)$ = {glue:text}`energy_small`, to round-off.
#
# Minimising $E(X)$ alone is pointless: $X = 0$, or every point at the same place, costs
# nothing. Laplacian Eigenmaps rules that out with two constraints. The scale is fixed,
# $X^\top D X = I$, and the coordinates must not be constant, $X^\top D \mathbf{1} = 0$.
#
# Why $X^\top D X = I$ rather than $X^\top X = I$? Written out, $X^\top D X = \sum_i D_{ii}\, x_i x_i^\top$:
# each point counts with its degree, the weight that $\lVert x_i \rVert^2$ carries in $E(X)$ (the
# expansion above). Take a coordinate that is non-zero at one point $i$ only: its energy is
# $2 D_{ii} x_i^2$. Scaled by $X^\top X = I$ ($x_i = 1$) it costs $2 D_{ii}$, cheap for a point whose
# edges are light, so the cheapest coordinates could describe a few stragglers rather than the
# data. Scaled by $X^\top D X = I$ ($D_{ii} x_i^2 = 1$) it costs 2, whatever the point. The
# weighting also ties the coordinates to the random walk $L_{\mathrm{rw}} = I - A$ that the
# transformer chapters build on (Exercise 1). The second constraint is orthogonality to the
# constant vector in the same weights. So the problem is
#
# $$
# \min_{X \in \mathbb{R}^{n \times q}} \operatorname{tr}(X^\top L X)
# \quad \text{subject to} \quad X^\top D X = I_q, \qquad X^\top D \mathbf{1} = 0 .
# $$
#
# Give each constraint a multiplier: a symmetric $q \times q$ matrix $\Lambda$ for the first (it is a
# symmetric matrix equation, so it has one condition per entry on and above the diagonal) and a
# vector $\mu \in \mathbb{R}^{q}$ for the second. The Lagrangian is
#
# $$
# \mathcal{L}(X, \Lambda, \mu) = \operatorname{tr}(X^\top L X)
# - \operatorname{tr}\big(\Lambda (X^\top D X - I_q)\big) - \mu^\top X^\top D \mathbf{1} .
# $$
#
# With the matrix derivatives $\partial_X \operatorname{tr}(X^\top L X) = 2 L X$ (as $L$ is
# symmetric), $\partial_X \operatorname{tr}(\Lambda X^\top D X) = 2 D X \Lambda$ (as $D$ and
# $\Lambda$ are) and $\partial_X\, \mu^\top X^\top D \mathbf{1} = D \mathbf{1} \mu^\top$,
# a minimiser satisfies
#
# $$
# 2 L X - 2 D X \Lambda - D \mathbf{1} \mu^\top = 0 .
# $$
#
# **The multiplier $\mu$ vanishes.** Multiply on the left by $\mathbf{1}^\top$. Since
# $L \mathbf{1} = 0$ and $L$ is symmetric, $\mathbf{1}^\top L X = 0$; the second constraint makes
# $\mathbf{1}^\top D X = 0$; what is left is $-(\mathbf{1}^\top D \mathbf{1})\, \mu^\top = 0$, and
# $\mathbf{1}^\top D \mathbf{1} = \sum_i D_{ii} > 0$, so $\mu = 0$. The stationarity condition is
# $L X = D X \Lambda$.
#
# **$\Lambda$ may be taken diagonal.** $\Lambda$ is symmetric, so $\Lambda = R M R^\top$ with $R$
# orthogonal and $M$ diagonal. Put $X' = X R$. The objective does not change,
# $\operatorname{tr}(R^\top X^\top L X R) = \operatorname{tr}(X^\top L X)$, and neither do the
# constraints, $X'^\top D X' = R^\top I_q R = I_q$ and $X'^\top D \mathbf{1} = R^\top 0 = 0$. So
# $X'$ is a minimiser whenever $X$ is, and it satisfies $L X' = D X R\, R^\top \Lambda R = D X' M$:
# column by column, $L v = \lambda D v$ with $\lambda$ a diagonal entry of $M$. The conditions for
# a minimum are thus the *generalised eigenproblem*
#
# $$
# L v = \lambda D v, \qquad 0 = \lambda_0 \le \lambda_1 \le \lambda_2 \le \dots
# $$
#
# The eigenvalues are numbered from zero, and so are the eigenvectors $v_0, v_1, \dots$, each
# scaled to $v^\top D v = 1$. The *zeroth*, $v_0$, is the constant vector: $L \mathbf{1} = 0$, so
# $\lambda_0 = 0$. In this book "the first eigenvector" is $v_1$, the first that is not constant.
#
# Which eigenvectors make the minimum? For an eigenvector, $v^\top L v = \lambda\, v^\top D v = \lambda$,
# so its energy is $E(v) = 2\lambda$. A stationary $X$ (rotated as above) has $q$ eigenvectors
# $v_{k_1}, \dots, v_{k_q}$ as its columns, so the trace is the sum of their eigenvalues,
#
# $$
# \operatorname{tr}(X^\top L X) = \sum_{j=1}^{q} v_{k_j}^\top L\, v_{k_j} = \sum_{j=1}^{q} \lambda_{k_j} ,
# $$
#
# and the minimum takes the $q$ smallest eigenvalues the constraints allow. $X^\top D \mathbf{1} = 0$
# excludes $v_0$, so the embedding is $X = [v_1, \dots, v_q]$, with energy
# $2(\lambda_1 + \dots + \lambda_q)$. This book's code solves the problem in its symmetric form,
# $L_{\mathrm{sym}} u = \lambda u$ with $v = D^{-1/2} u$, as scikit-learn does. Here it runs on a spiral of
# 300 points: a swiss roll like the next section's (which has more points) seen end on.

# %%
Y_roll_300, t_spiral = toy_manifold("swiss_roll", n=300, seed=0)  # t: the position along the roll
Y_spiral = Y_roll_300[:, [0, 2]]  # a 2-D spiral
k_spiral = 6  # neighbours, 0/1 weights
W_spiral = knn_graph(Y_spiral, n_neighbors=k_spiral)
L_spiral = laplacian(W_spiral)
D_spiral = sp.diags(np.asarray(W_spiral.sum(axis=1)).ravel())
V, lam = embed_graph(W_spiral, n_components=2, return_eigenvalues=True)  # v_1, v_2 and lambda_1, lambda_2
residual = np.abs(L_spiral @ V - (D_spiral @ V) * lam).max()  # L v = lambda D v
scale = np.abs(V.T @ (D_spiral @ V) - np.eye(2)).max()  # V^T D V = I
not_constant = np.abs(V.T @ D_spiral.diagonal()).max()  # V^T D 1 = 0
energies = [graph_energy(V[:, [k]], W_spiral) for k in range(2)]  # E(v_k) = 2 lambda_k

# %% tags=["remove-cell"]
largest_deviation = max(residual, scale, not_constant)
glue("k_spiral", str(k_spiral))
glue("lam1_spiral", f"{lam[0]:.3g}")
glue("lam2_spiral", f"{lam[1]:.3g}")
glue("deviation_spiral", sci(largest_deviation))
claim(bool(largest_deviation < 1e-10 and np.allclose(energies, 2 * lam, rtol=1e-8, atol=0)),
      "the eigenvectors satisfy L v = lambda D v and both constraints to round-off, and their energies are twice "
      "their eigenvalues")

# %% [markdown]
# On the spiral's graph ({glue:text}`k_spiral` neighbours, 0/1 weights), the two smallest non-zero
# eigenvalues are $\lambda_1$ = {glue:text}`lam1_spiral` and $\lambda_2$ = {glue:text}`lam2_spiral`.
# Their eigenvectors satisfy $L v = \lambda D v$ and both constraints to round-off (no deviation above
# {glue:text}`deviation_spiral`), and their energies, added up edge by edge, are twice their
# eigenvalues, as derived above.
#
# The figure shows what "cheap" looks like. Each panel colours the points of a spiral by one
# function $f$, drawn over the graph's edges, with $f$ scaled to the same size
# ($f^\top D f = 1$, $f^\top D \mathbf{1} = 0$). The first eigenvector changes slowly from one end
# of the spiral to the other, so every edge joins two similar colours. The twelfth oscillates along
# the spiral; a random vector changes colour at most edges. Each panel's title gives its
# energy, so the three can be compared.

# %%
colour_index = 12
fig = energy_figure(Y_spiral, W_spiral, colour_index=colour_index)
describe(fig, f"Three functions on a graph of {len(Y_spiral)} points, drawn over its edges in a red-blue scale: "
              f"the first generalised eigenvector, eigenvector {colour_index} and a random vector, each with its energy.")
plt.show()

# %% tags=["remove-cell"]
smooth = smooth_functions(W_spiral, colour_index)  # the three functions of the figure
smoothness = smoothness_facts(W_spiral, smooth)
energy_first, energy_middle, energy_random = smoothness["energy"]
claim(smoothness["largest_step"][0] < smoothness["colour_step"],
      "The first eigenvector changes slowly from one end of the spiral to the other, so every edge joins two similar "
      "colours")
claim(colour_index == 12 and smoothness["crossings"][1] >= 5 and energy_first < energy_middle < energy_random
      and smoothness["changes"][2] > 0.5,
      "The twelfth oscillates along the spiral; a random vector changes colour at most edges")
claim(bool(order_score(smooth[0]["f"], t_spiral) > 0.999),
      "The first eigenvector alone already unrolls the spiral: sorted by v_1, the points come out in the order in "
      "which they lie along it")

# %% [markdown]
# The first eigenvector alone already *unrolls* the spiral: sorted by $v_1$, the points come out
# in the order in which they lie along it. That is the whole idea of the method. With 0/1 weights,
# as here, distances in the plane only chose the neighbours; heat-kernel weights use them once
# more, to weigh the edges.
#
# ## Neighbours and bandwidth
#
# The method sees the data only through the graph, so the graph has to be right. Take a swiss roll,
# a rectangle rolled up in three dimensions, coloured by the position along the roll. On the
# left it is seen from the side, with the graph's edges drawn darker the heavier they are; on the
# right is its two-dimensional Laplacian-eigenmaps embedding.

# %% tags=["remove-cell"]
k_sweep, t_sweep = (6, 10, 20, 30, 40), (20, 5, 1, 0.25)  # k at the widest bandwidth; then t / t0 at the last k
k_many = k_sweep[-1]
glue("k_default", str(NEIGHBOURS[2]))
glue("k_many", str(k_many))
claim(NEIGHBOURS[2] == 10, "the live figure's caption: t0, the mean squared distance to the ten nearest neighbours")

# %% [markdown]
# With $k$ = {glue:text}`k_default` neighbours and heat-kernel weights at $t = t_0$, the mean squared
# distance from a point to its ten nearest neighbours, the colours run in order along the first
# coordinate: the roll is unrolled. The figure below shows the embedding over a grid of $k$ and of $t$
# in multiples of $t_0$. $t_0$ is computed once, at $k$ = {glue:text}`k_default`, and kept for every $k$.
#
# - **More neighbours** eventually reach across the gap between two turns of the roll. A few such
#   short-cut edges are enough to glue the turns together, and the embedding folds: the colours mix.
# - **A smaller bandwidth** $t$ gives long edges almost no weight, so the short-cuts fade and the
#   roll unrolls again even with many neighbours. As $t$ grows every weight tends to 1 and the
#   graph becomes the plain 0/1 graph.
# - **Too few neighbours** break the graph into pieces; the smallest eigenvectors then only say
#   which piece a point is in (Exercise 2).

# %% tags=["remove-output"]
Y_roll, t_roll = toy_manifold("swiss_roll", n=800, seed=0)
panel = neighbours_panel(Y_roll, t_roll, n_neighbors=NEIGHBOURS, alt=(
    "The data seen side on with the edges of its heat-kernel nearest-neighbour graph, beside its two-dimensional "
    "Laplacian Eigenmaps embedding, both coloured by position along the sheet."))
panel.show()

# %% tags=["hide-input"]
neighbours_live(Y_roll, t_roll, text={
    "caption": "{n_ks} × {n_bandwidths} settings: $t$ from {factor_first:g} to {factor_last:g} times "
               "$t_0 = {t0:.3g}$, the mean squared distance to the ten nearest neighbours, the same $t_0$ at every "
               "$k$. Colour: position along the roll (viridis).",
    "alt": "Embedding of the Swiss roll coloured by position along the roll, k = {n_neighbors}, t = {bandwidth}; "
           "λ₁ = {=lam1}, λ₂ = {=lam2}",
})

# %% tags=["remove-cell"]
k0 = NEIGHBOURS[2]  # the sliders' default number of neighbours
t0 = default_bandwidth(Y_roll, k0)  # the live figure's bandwidth at its default k
t_widest = BANDWIDTH_FACTORS[-1] * t0  # the sliders' largest bandwidth
frames = [(k, t_widest) for k in k_sweep] + [(k_many, f * t0) for f in t_sweep]
order = unrolling_facts(Y_roll, t_roll, frames)
by_k, by_t = order["frames"][:len(k_sweep)], order["frames"][len(k_sweep):]
glue("n_settings", str(len(frames)))
glue("in_order_from", num(order["in_order_from"], 2))
glue("t_wide", f"{t_widest:.3g}")
glue("k_kept_last", str(k_sweep[2]))
glue("k_lost_first", str(k_sweep[3]))
glue("t_back", f"{t0:.3g}")
t_many = default_bandwidth(Y_roll, k_many)  # the mean squared distance to k_many neighbours (not used as t)
glue("t_many_ratio", num(t_many / t0, 1))
claim(t_many > 2 * t0, "the mean squared distance to 40 neighbours is several times t0, so at t = t0 the farther "
      "neighbours' edges weigh little")
claim(not any(f["apart"] for f in order["frames"]), "the graph stays in one piece at every setting of the table")
claim(all(f["in_order"] for f in by_k[:3]) and not any(f["in_order"] for f in by_k[3:]),
      "at the widest bandwidth the first coordinate keeps the order up to k = 20 neighbours and loses it from "
      "k = 30 on")
claim(not any(f["in_order"] for f in by_t[:2]) and all(f["in_order"] for f in by_t[2:]) and t_sweep[2:] == (1, 0.25),
      "with 40 neighbours the order comes back once t is shrunk to t0 and stays at a quarter of it")
X_default = embed_graph(knn_graph(Y_roll, n_neighbors=k0, mode="heat", bandwidth=t0), n_components=2)
claim(bool(order_score(X_default[:, 0], t_roll) >= order["in_order_from"]),
      "With k = 10 neighbours and heat-kernel weights at t = t0 ... the colours run in order along the first "
      "coordinate: the roll is unrolled")
claim(bool(harmonic_score(X_default[:, 0], X_default[:, 1]) > 0.5),
      "At k = 10 and t = t0 the second coordinate is mostly a second harmonic of the first")

# %% [markdown]
# The table follows one path through these settings, {glue:text}`n_settings` in all: first more
# neighbours at the widest bandwidth, then a shrinking bandwidth with {glue:text}`k_many`
# neighbours. Its score is the absolute Spearman rank correlation between the first coordinate
# $v_1$ and the position along the roll: 1 when sorting the points by $v_1$ lists them exactly in
# their order along the sheet, near 0 when the two have nothing to do with each other. Call a
# setting *in order* when its score is at least {glue:text}`in_order_from`.
# At the widest bandwidth, $t$ = {glue:text}`t_wide` (every edge weighs nearly 1), the order
# survives up to $k$ = {glue:text}`k_kept_last` neighbours and is gone from $k$ =
# {glue:text}`k_lost_first` on: the short-cuts have glued the turns of the roll together. Keeping
# {glue:text}`k_many` neighbours and shrinking $t$ gives the long edges less and less weight; the order is back at
# $t = t_0$ = {glue:text}`t_back` and stays at $t_0 / 4$. Since $t_0$ is not recomputed, it is short
# for {glue:text}`k_many` neighbours: their mean squared distance is {glue:text}`t_many_ratio` times
# $t_0$, so at $t = t_0$ the edges to the farther neighbours weigh little.

# %% tags=["remove-input"]
order_table(order)

# %% tags=["remove-cell"]
along = np.argsort(t_roll)  # the roll's length: its spiral x = t cos t, z = t sin t, walked in order of t
roll_length = np.linalg.norm(np.diff(Y_roll[along][:, [0, 2]], axis=0), axis=1).sum()
claim(bool(roll_length > 2 * np.ptp(Y_roll[:, 1])), "a strip more than twice as long as it is wide, such as the "
      "swiss roll")

# %% [markdown]
# **The second coordinate.** At $k$ = {glue:text}`k_default` and $t = t_0$ the second coordinate is
# mostly a *second harmonic* of the first. On a strip of length $\ell$ the smoothest non-constant function is half a
# wave along it, $\cos(\pi s / \ell)$ with $s$ the position along the strip; the second harmonic is
# a whole wave, $\cos(2\pi s / \ell)$. It is a function of the first
# ($\cos 2\theta = 2\cos^2\theta - 1$), so the points lie along an arch in the plane of the two
# coordinates instead of filling a rectangle. Half a wave *across* a strip of width $w$ would show
# the sheet's second direction, but its energy grows like $(\pi / w)^2$ against $(2\pi / \ell)^2$:
# on a strip more than twice as long as it is wide, such as the swiss roll, the second harmonic
# comes first. It is the exact minimiser, not a defect of the code, but it is a limit of the
# method: the $q$ cheapest coordinates need not be $q$ directions of the sheet.

# %% [markdown]
# ## The same embedding as scikit-learn
#
# scikit-learn's spectral embedding (its class `SpectralEmbedding`) solves the same eigenproblem.
# Its graph differs in two small ways: each point counts as one of its own $k$ neighbours, and
# the two directions of an edge are averaged, $(G + G^\top)/2$, instead of taking the larger. So we
# compare twice: with the Belkin-Niyogi graph, and with this book's code run on scikit-learn's
# convention, where the two should agree to round-off.
#
# Eigenvectors have no fixed sign, and when two eigenvalues are close, a small change of the graph
# can rotate the pair a long way (a rotation $X R$ changes neither the objective nor the
# constraints, as the derivation showed). What *is* fixed is the subspace the columns span, so we
# compare subspaces. The *principal angles* between two $q$-dimensional subspaces $\mathcal{A}$ and
# $\mathcal{B}$ of $\mathbb{R}^n$ are found one at a time: $\theta_1$ is the smallest angle between
# a unit vector $a_1 \in \mathcal{A}$ and a unit vector $b_1 \in \mathcal{B}$; $\theta_2$ is the
# smallest angle between unit vectors $a_2 \perp a_1$ in $\mathcal{A}$ and $b_2 \perp b_1$ in
# $\mathcal{B}$; and so on up to $\theta_q$. In practice: take orthonormal bases $Q_A, Q_B$
# ($n \times q$) of the two subspaces; the cosines $\cos\theta_1 \ge \dots \ge \cos\theta_q$ are
# the singular values of $Q_A^\top Q_B$. They do not
# depend on the bases chosen, and all of them equal 1 exactly when the subspaces coincide
# (Exercise 3). Here
# $q = 2$, and the smallest cosine, $\cos\theta_2$, is the agreement; the table counts the
# *decimals it shares with 1*, the nines after the point, $\lfloor -\log_{10}(1 - \cos\theta_2) \rfloor$,
# up to 15, the round-off of double precision. The bottom row of the figure is scikit-learn's
# embedding $X'$ turned onto ours by its *Procrustes rotation*, the orthogonal $R$ that minimises
# $\lVert X' R - X \rVert_F$, for the eye only.

# %%
Y_s, t_s = toy_manifold("s_curve", n=800, seed=0)
Y_mnist, labels_mnist = load_mnist(n=1000, stratified=True)
mnist = "MNIST (1,000 digits)"
k_compare = 10  # neighbours, with 0/1 weights, for every data set
fig, rows = compare_figure({
    "swiss roll": (Y_roll, t_roll, False),
    "S-curve": (Y_s, t_s, False),
    mnist: (Y_mnist, labels_mnist, True),
}, n_neighbors=k_compare)
agreement = agreement_facts(rows)
describe(fig, f"Two-dimensional Laplacian Eigenmaps of {len(rows)} data sets, one per column: this book's in the "
              "top row, scikit-learn's in the bottom row with the agreement of the two.")
plt.show()
agreement_table(rows, agreement)

# %% tags=["remove-cell"]
glue("same_decimals_min", str(min(a["same"] for a in agreement["sets"])))
glue("bn_decimals_min", str(min(a["bn"] for a in agreement["sets"])))
glue("bn_decimals_max", str(max(a["bn"] for a in agreement["sets"])))
claim(agreement["to_roundoff"], "on the same graph the two implementations agree to round-off on every data set")
claim(max(a["bn"] for a in agreement["sets"]) < agreement["roundoff"],
      "with the Belkin-Niyogi graph the agreement is far from round-off")
claim(agreement["fewest"] == mnist and min(a["bn"] for a in agreement["sets"]) <
      min(a["bn"] for a in agreement["sets"] if a["name"] != mnist),
      "the Belkin-Niyogi graph moves the embedding most on MNIST")

# %% tags=["remove-cell"]
glue("k_compare", str(k_compare))
digits = classes_apart(laplacian_eigenmaps(Y_mnist, 2, n_neighbors=k_compare), labels_mnist, n_neighbors=10)
glue("purity_0", pct(digits["purity"][0]))
glue("purity_1", pct(digits["purity"][1]))
glue("purity_others", pct(digits["others_max"]))
claim(digits["apart"] == [0, 1] and digits["classes"][:2] == [0, 1],
      "the first two coordinates, found with no labels, already set the 0s and the 1s apart")

# %% [markdown]
# On the same graph the smallest cosine shares at least {glue:text}`same_decimals_min` decimals
# with 1 on every data set: the two implementations agree to round-off. On the Belkin-Niyogi graph
# they agree to only {glue:text}`bn_decimals_min` to {glue:text}`bn_decimals_max` decimals, so that
# gap comes from the graph convention alone. It is largest on MNIST.
#
# All three data sets use $k$ = {glue:text}`k_compare` neighbours with 0/1 weights. On MNIST the
# first two coordinates, found with no labels, already set the 0s and the 1s apart, each at the end
# of an arm of its own: in the plane, on average {glue:text}`purity_0` of a 0's ten nearest points are 0s and
# {glue:text}`purity_1` of a 1's are 1s, against at most {glue:text}`purity_others` for any other
# digit. [The MNIST chapter](mnist_at_init.ipynb) returns to this picture through a transformer.

# %% [markdown]
# ## Summary
#
# - **What was shown.** Laplacian Eigenmaps keeps only local distances (the graph $W$) and scores
#   an embedding by $E(X) = 2\operatorname{tr}(X^\top L X)$. Under $X^\top D X = I$ and
#   $X^\top D \mathbf{1} = 0$ the minimum is $X = [v_1, \dots, v_q]$, the eigenvectors of
#   $L v = \lambda D v$ with the smallest non-zero eigenvalues. Too few neighbours and the graph
#   falls apart, too many with flat weights and it short-circuits.
# - **What it rests on.** The derivation through the Lagrangian, and checks on this chapter's data:
#   the eigenproblem's residuals, the swiss roll's order scores (one 800-point roll, at the
#   settings of the table) and the principal angles against scikit-learn.
# - **What it does not show.** How to choose $k$ and $t$ when, unlike here, the order along the
#   sheet is not known; that the $q$ coordinates are $q$ directions of the data (the second
#   harmonic is not); and why these constraints. In [the next chapter](probdr_elbo.ipynb) a
#   probabilistic model supplies the scale by itself, through a log-determinant, but not the degree
#   weighting or the orthogonality to the constant vector.
#
# ## Exercises
#
# **Exercise 1.** Show that $L_{\mathrm{sym}}$ and $L_{\mathrm{rw}}$ have the same eigenvalues,
# and express the eigenvectors of one through those of the other. Which of them gives the
# Laplacian-eigenmaps coordinates $v$ directly?
#
# :::{dropdown} Solution
# $L_{\mathrm{rw}} = I - D^{-1}W = D^{-1/2}\,(I - D^{-1/2} W D^{-1/2})\,D^{1/2} = D^{-1/2} L_{\mathrm{sym}} D^{1/2}$,
# so the two are similar matrices and share their eigenvalues. If $L_{\mathrm{sym}} u = \lambda u$
# then $L_{\mathrm{rw}} (D^{-1/2}u) = \lambda D^{-1/2} u$. Multiplying $L v = \lambda D v$ by
# $D^{-1}$ gives $L_{\mathrm{rw}} v = \lambda v$: the eigenvectors of $L_{\mathrm{rw}}$ are the
# coordinates $v$ themselves.
# :::

# %% tags=["hide-cell"]
Lrw = laplacian(W_spiral, kind="random_walk").toarray()
eig_rw = np.sort(np.linalg.eigvals(Lrw).real)[:3]
print(f"On the spiral, the two smallest non-zero eigenvalues of L_rw are {eig_rw[1]:.3g} and {eig_rw[2]:.3g}, "
      f"and those of L v = lambda D v are {lam[0]:.3g} and {lam[1]:.3g}.")
claim(bool(np.allclose(eig_rw[1:], lam, rtol=1e-8, atol=1e-12) and abs(eig_rw[0]) < 1e-10
           and np.abs(Lrw @ V - V * lam).max() < 1e-10),
      "Exercise 1: the eigenvectors of L_rw are the coordinates v themselves")

# %% [markdown]
# **Exercise 2.** A graph with $c$ connected components: how many eigenvalues of $L$ are zero,
# and what are their eigenvectors? Use it to explain why the swiss roll with $k = 3$ neighbours
# has no sensible two-dimensional embedding.
#
# :::{dropdown} Solution
# $E(v) = \sum_{ij} W_{ij}(v_i - v_j)^2 = 0$ exactly when $v$ is constant on every component, so
# the eigenvalue 0 has multiplicity $c$, with the components' indicator vectors as a basis.
# With $c > 1$ the "smallest non-trivial" eigenvectors are just indicators: they say which piece a
# point is in, and nothing about where in the piece it lies.
# :::

# %% tags=["hide-cell"]
from scipy.sparse.csgraph import connected_components

W3 = knn_graph(Y_roll, n_neighbors=3)
n_parts, _ = connected_components(W3, directed=False)
smallest = np.linalg.eigvalsh(laplacian(W3).toarray())[:5]
n_zero = int(np.sum(np.abs(smallest) < 1e-10))
claim(n_parts == n_zero > 1, "Exercise 2: with k = 3 the swiss roll's graph falls into as many pieces as L has zero "
      "eigenvalues")
print(f"With k = 3 neighbours the 800-point swiss roll's graph falls into {n_parts} pieces, and L has {n_zero} zero "
      "eigenvalues.")

# %% [markdown]
# **Exercise 3.** Show that the principal-angle cosines, the singular values of $Q_A^\top Q_B$, do
# not depend on which orthonormal bases $Q_A$ and $Q_B$ of the two subspaces are taken, and that all
# of them equal 1 exactly when the subspaces coincide.
#
# :::{dropdown} Solution
# Any other orthonormal bases are $Q_A R_A$ and $Q_B R_B$ with $R_A, R_B$ orthogonal $q \times q$
# matrices, and $(Q_A R_A)^\top Q_B R_B = R_A^\top (Q_A^\top Q_B) R_B$ has the same singular values as
# $Q_A^\top Q_B$. For a unit vector $b \in \mathbb{R}^q$, $Q_B b$ is a unit vector of $\mathcal{B}$, and
# $\lVert Q_A^\top Q_B b \rVert$ is the length of its projection onto $\mathcal{A}$, at most 1. All
# singular values equal 1 exactly when that length is 1 for every $b$, that is, when every vector of
# $\mathcal{B}$ lies in $\mathcal{A}$; with equal dimensions, when $\mathcal{A} = \mathcal{B}$.
# :::
