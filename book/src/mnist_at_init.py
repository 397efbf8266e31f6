# %% [markdown]
# # Does a transformer at initialisation cluster MNIST?
#
# The paper's most striking figure {cite:p}`ravuri2025transformers` shows MNIST digits before and
# after eight blocks of an *untrained* transformer with the diagonal weights of chapter 4. Before,
# the first two latent coordinates form one shapeless cloud. After, they form tight clumps, and the
# clumps carry the class colours. No weight was learned: the clumps come from the attention
# graph alone, because every block moves each image towards the images it resembles.
#
# A picture of two coordinates out of 128 can mislead in either direction, so this chapter reruns
# the figure and then measures it. The measurements are per layer and per attention variant, made
# in the full latent space. Where the numbers and the picture part ways, the text follows the
# numbers.
#
# **In this chapter you will learn**
#
# - how to reproduce the figure on all 10,000 MNIST test images, and which settings the paper
#   leaves open (with the choices made here);
# - four numbers that say how well the latents are grouped by class: k-NN accuracy, silhouette,
#   between/within-class ratio and the NMI of k-means, per layer;
# - how plain attention, $A - I$, the paper's block, the exact stop-gradient gradient and a
#   symmetric graph compare on those numbers;
# - why the two-coordinate picture and the numbers disagree;
# - how $\kappa$ and $\eta$ decide whether the blocks do nothing, cluster, or freeze (live sliders,
#   scrub figures and sweeps).

# %%
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from probdr_lite.figures.mnist import (
    PAPER,
    before_after_figure,
    depth_scrub,
    kappa_scrub,
    kmeans_nmi_spread,
    layer_table,
    metric_lines_figure,
    metrics_table,
    mnist_latents,
    mnist_panel,
    pick,
    run_blocks,
    settings_table,
    sweep,
    sweep_figure,
    variant_metrics,
)
from probdr_lite.figures.style import METRIC_LABELS
from probdr_lite.metrics import METRICS, between_within_ratio, knn_accuracy, layer_metrics

# %% [markdown]
# ## The settings
#
# Images are flattened to $Y \in \mathbb{R}^{n \times 784}$ and embedded once, $X_0 = \Pi(Y W_E)$.
# Then the same block is applied eight times:
#
# $$
# \begin{aligned}
# X_{t+1} &= \Pi\big(X_t + \eta\, D(X_t)\big), \qquad
# D = 2 (A - I) X + \frac{2}{d_q + \beta} X, \\
# A &= \sigma\Big(\frac{\kappa}{d_q} X X^\top - \beta I + M\Big).
# \end{aligned}
# $$
#
# The paper states $d_q$, $\kappa$, $\eta$ and the number of blocks. The rest is chosen here and
# marked as such:

# %%
settings_table(PAPER)

# %% [markdown]
# ## The paper's picture, on all 10,000 test images
#
# `mnist_latents` computes $X_0 = \Pi(Y W_E)$ with $W_E \sim \mathcal{N}(0, 1/784)$, and
# `run_blocks` applies the block above (`variant="paper"`) with the attention computed in row
# blocks, so the $10{,}000 \times 10{,}000$ matrix $A$ is never held in memory.

# %%
X0, labels = mnist_latents()  # X0 = Pi(Y W_E): (10000, d_q) float32
Xs = run_blocks(X0, n_layers=PAPER.n_layers, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
                variant=PAPER.variant)  # [X_0, X_1, ..., X_8]
print(f"{X0.shape[0]:,} images, d_q = {X0.shape[1]}, {len(Xs) - 1} blocks")
fig = before_after_figure(Xs[0], Xs[-1], labels)
plt.show()

# %% [markdown]
# The picture matches the paper's description: a single cloud before, separated clumps coloured
# mostly by one class after. Now the numbers.
#
# ## Four numbers per layer
#
# All four are computed in the full $d_q = 128$-dimensional latent space by
# `probdr_lite.metrics`, with settings fixed in `METRICS`:
#
# - **k-NN accuracy**: the share of images whose class is the majority class of their 5 nearest
#   neighbours, over 5 stratified folds. It asks whether *neighbours* share a class.
# - **Silhouette**: for image $i$, $s_i = (b_i - a_i)/\max(a_i, b_i)$ with $a_i$ the mean distance
#   to its own class and $b_i$ the mean distance to the nearest other class; averaged, on a
#   subset of at most 2,000 images. It asks whether *classes* are compact and apart.
# - **Between/within-class ratio**: the mean distance between two class centroids, over the mean
#   distance of an image to its own class centroid. It asks how far apart the class *centres* are
#   compared with the spread around them.
# - **NMI of k-means**: run k-means with 10 clusters (4 restarts), and measure the normalised mutual
#   information between clusters and classes. It asks whether the *clusters* the data fall into
#   are the classes.
#
# First the paper's block on all 10,000 images, every layer:

# %%
print(METRICS)
rows_full = layer_metrics(Xs, labels, variant="paper")  # one dict per layer, in the full latent space
layer_table(rows_full)

# %% [markdown]
# Then the five variants of chapter 4 from one common starting point. The `exact` and `symmetric`
# directions cost two to three times as much per block as the others, so the variants run on a
# stratified subset of 2,000 images (200 per class). The paper's block appears at both sizes,
# which shows how much the subset changes the numbers.

# %%
X0_sub, labels_sub = mnist_latents(n=2000)  # the same W_E; a class-balanced subset
rows_var, paths_var = variant_metrics(X0_sub, labels_sub, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
                                      n_layers=PAPER.n_layers, return_latents=True)
rows = rows_var + rows_full
metrics_table(rows, layers=(0, PAPER.n_layers))

# %%
fig = metric_lines_figure(rows)
plt.show()

# %% [markdown]
# How large must a difference be to mean something? k-NN accuracy, silhouette and the
# between/within ratio are fixed numbers of the latents, but k-means starts from random centres.
# Rerunning it with five seeds on the paper's final latents shows its own noise:

# %%
nmi_seeds = kmeans_nmi_spread(paths_var["paper"][-1], labels_sub, seeds=range(5))
print(f"NMI of k-means over 5 seeds, paper's block, layer {PAPER.n_layers}, {len(labels_sub):,} images: "
      f"{np.round(nmi_seeds, 3).tolist()} (standard deviation {nmi_seeds.std(ddof=1):.3f})")

# %% tags=["remove-input"]
L_ = PAPER.n_layers
N = X0.shape[0]


def full(metric, layer=None):
    return pick(rows_full, metric, variant="paper", layer=layer)


def trend(a, b, tol=0.01):
    return "rises" if b > a * (1 + tol) else "falls" if b < a * (1 - tol) else "barely changes"


knn0, knn8 = full("knn_accuracy", 0), full("knn_accuracy", L_)
bw0, bw8 = full("between_within", 0), full("between_within", L_)
sil, nmi = full("silhouette"), full("kmeans_nmi")
sil_peak, nmi_peak = int(np.argmax(sil)), int(np.argmax(nmi))
display(Markdown(
    f"**What the numbers say (all {N:,} images, the paper's block).** "
    f"The between/within-class ratio {trend(bw0, bw8)} from {bw0:.2f} to {bw8:.2f}: the class centres move apart "
    f"relative to the spread around them, which is the clumping the picture shows. "
    f"The k-NN accuracy {trend(knn0, knn8)} from {knn0:.3f} to {knn8:.3f}. "
    + (f"So the blocks make neighbourhoods *less* pure: when images collapse into a clump, images of different "
       f"classes collapse together, and a neighbour in the same clump is no longer evidence of the same class. "
       if knn8 < knn0 - 0.01 else "")
    + f"The silhouette goes from {sil[0]:.3f} to {sil[-1]:.3f}"
    + (f", peaking at {sil[sil_peak]:.3f} after {sil_peak} blocks" if 0 < sil_peak < L_ else "")
    + f"; the NMI of k-means goes from {nmi[0]:.3f} to {nmi[-1]:.3f}"
    + (f", peaking at {nmi[nmi_peak]:.3f} after {nmi_peak} blocks" if 0 < nmi_peak < L_ else "")
    + ". "
    + ("Both peak before the last block: a few blocks group the images by class better than eight do. Later "
       "blocks keep merging clumps, and merged clumps mix classes: the smoothing overshoots. "
       if 0 < sil_peak < L_ and 0 < nmi_peak < L_ else "")
    + ("The silhouette stays small throughout: the classes never become compact, well-separated groups in "
       "the full space." if max(sil) < 0.25 else "")
))

# %% tags=["remove-input"]
var_names = ["attention", "diffusion", "paper", "exact", "symmetric"]
n_sub = X0_sub.shape[0]
at8 = {m: {v: pick(rows_var, m, variant=v, layer=L_) for v in var_names} for m in METRIC_LABELS}
best = {m: max(at8[m], key=at8[m].get) for m in at8}
spread = {m: max(at8[m].values()) - min(at8[m].values()) for m in at8}
knn_sub0 = pick(rows_var, "knn_accuracy", variant="paper", layer=0)
nmi_sd = nmi_seeds.std(ddof=1)
lines = [f"**The variants ({n_sub:,} images, after {L_} blocks).** Highest on each number:"]
for m in METRIC_LABELS:
    lines.append(f"- {METRIC_LABELS[m]}: `{best[m]}` ({at8[m][best[m]]:.3f}); the five variants span "
                 f"{min(at8[m].values()):.3f} to {max(at8[m].values()):.3f}"
                 + (f", a range narrower than two standard deviations of k-means' own noise ({nmi_sd:.3f}), so "
                    "the NMI does not separate the variants." if m == "kmeans_nmi" and spread[m] < 2 * nmi_sd
                    else "."))
att, dif = at8["knn_accuracy"]["attention"], at8["knn_accuracy"]["diffusion"]
lines.append(
    f"\nPlain attention ends with k-NN accuracy {att:.3f} and the A - I block with {dif:.3f} "
    f"(layer 0: {knn_sub0:.3f}). "
    + ("At the same η plain attention takes the smaller step (chapter 4: it equals diffusion with "
       f"η = {PAPER.eta / (1 + 2 * PAPER.eta):.3f}), so it smooths less and loses less. "
       if att > dif else "")
    + ("`paper` and `diffusion` are nearly indistinguishable, as chapter 4 predicts: the feed-forward term "
       f"only adds 2η/(d_q + β) = {2 * PAPER.eta / (PAPER.d_q + PAPER.beta):.4f} to the weight on X. "
       if abs(at8["knn_accuracy"]["paper"] - dif) < 0.01 else "")
    + ("No variant ends with purer k-NN neighbourhoods than the random embedding starts with. "
       if max(at8["knn_accuracy"].values()) <= knn_sub0 + 0.005 else
       f"`{best['knn_accuracy']}` ends with purer k-NN neighbourhoods than the random embedding starts with. ")
    + ("The figure cannot tell the interpretations apart: every variant raises the between/within ratio, "
       "so every variant makes clumps."
       if min(at8["between_within"].values()) > pick(rows_var, "between_within", variant="paper", layer=0) else "")
)
display(Markdown("\n".join(lines)))

# %% [markdown]
# ## Where the picture and the numbers disagree
#
# The picture shows two of 128 coordinates. Those two are an arbitrary projection: $W_E$ is random,
# so coordinates 1 and 2 are no more informative than any other pair. The numbers above use all
# 128. The same k-NN accuracy and between/within ratio, computed on the two plotted coordinates
# only, show what the picture can and cannot show:

# %%
knn_2d = {}
for layer in (0, PAPER.n_layers):
    X = Xs[layer]
    knn_2d[layer] = knn_accuracy(X[:, :2], labels, n_neighbors=METRICS.n_neighbors, cv=METRICS.cv)
    print(f"layer {layer}: k-NN accuracy {knn_2d[layer]:.3f} in the picture's 2 coordinates, "
          f"{pick(rows_full, 'knn_accuracy', variant='paper', layer=layer):.3f} in all {X.shape[1]}; "
          f"between/within {between_within_ratio(X[:, :2], labels):.2f} in 2, "
          f"{pick(rows_full, 'between_within', variant='paper', layer=layer):.2f} in all {X.shape[1]}")

# %% tags=["remove-input"]
knn2 = [knn_2d[0], knn_2d[L_]]
display(Markdown(
    f"Before any block, the picture looks like noise (k-NN accuracy {knn2[0]:.2f} on two coordinates), yet "
    f"the full latents already place {100 * knn0:.0f} % of images next to their own class: a random projection "
    f"to 128 dimensions keeps most of the pixel-space neighbourhoods. After {L_} blocks the picture "
    + ("looks far better" if knn2[1] > knn2[0] + 0.05 else "changes")
    + f" (k-NN accuracy {knn2[1]:.2f} on two coordinates), while in the full space k-NN accuracy "
    + (f"fell to {knn8:.2f}. " if knn8 < knn0 - 0.01 else f"is {knn8:.2f}. ")
    + "The blocks do not create class information; what they do is pull neighbours together, so that the "
    "clusters already present in the high-dimensional space become visible in *any* two coordinates. That "
    "is a real effect, but it is what makes the picture persuasive, and it is not evidence that the classes "
    "have become better separated."
))

# %% [markdown]
# ## Try it: sharpness, step size, regulariser and depth
#
# The live panel runs the paper's block on 1,000 images (100 per class). Left: the first two
# latent coordinates after `depth` blocks. Right: the between/within-class ratio (all 128
# dimensions) at every layer for the current $\kappa$, $\eta$ and $\beta$, with the current depth
# circled and layer 0 dotted. Moving depth only redraws; moving the others reruns the eight
# blocks. Try a small $\kappa$ (0.3 to 3), the default 30, and a large one (300 and up).

# %%
X0_1k, labels_1k = mnist_latents(n=1000)
panel = mnist_panel(X0_1k, labels_1k)
panel.show()

# %% [markdown]
# Without a kernel, the same panel in precomputed frames. First depth, at the paper's
# $\kappa = 30$, $\eta = 0.4$, $\beta = 1$:

# %%
depth_scrub(X0_1k, labels_1k)

# %% [markdown]
# Then $\kappa$, from a kernel wider than the data ($\kappa = 0.3$) to one narrower than the
# distance to the nearest neighbour ($\kappa = 3000$), after eight blocks. At the small end the
# points gather in one spot while the ratio on the right hardly changes: the picture shrinks, but
# who is near whom stays the same. At the large end nothing moves at all.

# %%
kappa_scrub(X0_1k, labels_1k)

# %% [markdown]
# ## Sweeps of $\kappa$ and $\eta$
#
# The same 1,000 images, eight blocks, every combination of $\kappa$ and $\eta$ below; each cell
# is the value after eight blocks, coloured by its change from layer 0 (red: lower, blue: higher).

# %%
kappas = (1.0, 3.0, 10.0, 20.0, 30.0, 50.0, 100.0, 1000.0)
etas = (0.1, 0.2, 0.3, 0.4, 0.45)
grid = sweep(X0_1k, labels_1k, kappas, etas, metrics=("knn_accuracy", "kmeans_nmi", "between_within"))
fig = sweep_figure(grid, kappas, etas)
plt.show()

# %% tags=["remove-input"]
row = etas.index(PAPER.eta)
bw_row = grid["between_within"][row] - grid["between_within@0"]
knn_row = grid["knn_accuracy"][row] - grid["knn_accuracy@0"]
j_most = int(np.argmax(bw_row))
small_ends = max(abs(bw_row[0]), abs(bw_row[-1])) < 0.1 * bw_row.max()
knn_top_small = grid["knn_accuracy"][-1, 0] - grid["knn_accuracy@0"]
display(Markdown(
    f"Along the row η = {PAPER.eta} the between/within ratio changes by {bw_row[0]:+.3f} at "
    f"κ = {kappas[0]:g}, by {bw_row[-1]:+.3f} at κ = {kappas[-1]:g}, and by {bw_row[j_most]:+.3f} "
    f"at κ = {kappas[j_most]:g}"
    + (", so the blocks act only in the middle of the range. " if small_ends else ". ")
    + "The two ends are the two limits of exercise 2 in chapter 4. With a very wide kernel A is nearly "
    "uniform: every image is pulled towards the same global mean by about the same fraction, which shrinks the "
    "picture (the smallest κ in the scrub figure) without changing much of who is near whom. With a very "
    "narrow kernel and β > 0 each image attends almost only to itself, A ≈ I, and nothing moves. "
    f"Where the ratio grows most, the k-NN accuracy changes by {knn_row[j_most]:+.3f}"
    + (": wherever the blocks clump strongly, the neighbourhoods become less pure. " if knn_row[j_most] < -0.01
       else ". ")
    + (f"The top row is the exception at small κ: with η = {etas[-1]} only "
       f"{100 * (1 - 2 * etas[-1]):.0f} % of each image's own position survives a block, and the slight "
       "preference of a wide kernel for similar images takes over. To first order in κ the attention "
       "output is x̄ + (κ / (n d_q)) Xᵀ X xᵢ (up to a multiple of x̄), a multiplication "
       "by the latents' second-moment matrix, so eight such blocks act like power iteration and squeeze the "
       f"latents towards their leading directions: k-NN accuracy {grid['knn_accuracy'][-1, 0]:.2f} at "
       f"κ = {kappas[0]:g}."
       if knn_top_small < -0.1 else "")
))

# %% [markdown]
# ## Summary

# %% tags=["remove-input"]
clumps = bw8 > bw0
purer = knn8 > knn0 + 0.005
early = 0 < sil_peak < L_ and 0 < nmi_peak < L_
a_minus_i_best = best["knn_accuracy"] in ("diffusion", "paper") and best["silhouette"] in ("diffusion", "paper")
display(Markdown(
    ("Eight untrained blocks with diagonal weights do pull MNIST into clumps, and the two-coordinate picture "
     "shows that faithfully. " if clumps else "Eight untrained blocks do not raise the between/within ratio here. ")
    + "The numbers add what the picture cannot: "
    + ("the clumps are not pure classes (k-NN accuracy falls), " if not purer else
       "neighbourhoods become purer (k-NN accuracy rises), ")
    + ("the grouping by class is best after a few blocks rather than eight, " if early else "")
    + "plain attention makes clumps too, and "
    + ("the paper's A - I groups by class better than the other variants here. " if a_minus_i_best else
       "the paper's A - I does not group by class better than the other variants here. ")
    + "The clustering comes from repeated smoothing over a similarity graph, which every variant shares. "
    "Whether A - I helps once the weights are *trained* is the next chapter's question."
))

# %% [markdown]
#
# ## Exercises
#
# **1.** Before any block, the two plotted coordinates show no class structure, yet the k-NN
# accuracy in the full latent space is high. Why? What would it be on the raw 784 pixels?
#
# ```{admonition} Solution
# :class: dropdown
#
# $X_0$ is a random Gaussian projection of the images to 128 dimensions, followed by LayerNorm.
# Random projections approximately preserve distances (the Johnson-Lindenstrauss lemma), so the
# neighbours of an image in pixel space are mostly still its neighbours in the latents, and k-NN
# on raw MNIST pixels is already very accurate. `knn_accuracy(load_mnist()[0], labels)` gives the
# pixel-space figure, practically the same as in the latents. Two coordinates are a 2-dimensional
# projection, far too few to keep those neighbourhoods.
# ```
#
# **2.** The silhouette and the NMI peak after a few blocks and then fall. What happens after
# many more blocks? Predict, then check with `run_blocks(X0_1k, n_layers=40)` and `layer_metrics`.
#
# ```{admonition} Solution
# :class: dropdown
#
# Each block is a step of diffusion on a graph that is rebuilt from the current latents. Clumps
# that have formed attend almost only to themselves, but clumps whose kernels overlap keep
# merging, and merged clumps mix classes. Over many blocks the number of distinct positions
# shrinks until only a few remain (or, with a wide kernel, one). The between/within ratio can
# keep growing while k-NN accuracy, silhouette and NMI fall. This is the over-smoothing of
# deep attention stacks, seen here without any training.
# ```
#
# **3.** In the limit of a very wide kernel the scrub figure shows all the points gathering in one
# spot, yet the numbers beside it hardly move. Explain, using the limit
# $A \to \tfrac{1}{n}\mathbf{1}\mathbf{1}^\top$.
#
# ```{admonition} Solution
# :class: dropdown
#
# With uniform $A$, $A X = \mathbf{1}\bar x^\top$ with $\bar x$ the mean latent, so one diffusion
# step is $X \leftarrow \Pi\big((1 - 2\eta) X + 2\eta \mathbf{1}\bar x^\top\big)$: every row moves
# the same fraction of the way towards the same point. Before $\Pi$, this is a scaling plus a shift,
# which leaves every distance ratio, hence every neighbourhood, silhouette and between/within ratio,
# unchanged. $\Pi$ rescales each row to the sphere; near a common point this is close to the same
# scaling for every row. So the picture shrinks towards $\Pi(\bar x)$ while the numbers stay put.
# ```
