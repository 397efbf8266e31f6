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
# # Does a transformer at initialisation cluster MNIST?
#
# The paper's most striking figure {cite:p}`ravuri2025transformers` shows MNIST digits before and
# after eight blocks of an *untrained* transformer with the diagonal weights of
# [the transformer-block chapter](transformer_block.ipynb). Before,
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
#   on the book's site a kernel-free live figure too, and sweeps).

# %%
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from probdr_lite.presentation.live.builders import mnist_live
from probdr_lite.presentation.figures.mnist import (
    before_after_figure,
    layer_table,
    metric_lines_figure,
    metrics_table,
    mnist_panel,
    settings_table,
    step_family_figure,
    sweep_figure,
)
from probdr_lite.chapters.mnist_at_init import (
    PAPER,
    kmeans_nmi_spread,
    mnist_latents,
    numbers_facts,
    paper_numbers,
    pick,
    picture_facts,
    pixel_facts,
    run_blocks,
    step_family_facts,
    summary_facts,
    sweep,
    sweep_facts,
    variant_metrics,
    variants_facts,
)
from probdr_lite.presentation.prose import fill, glue, num
from probdr_lite.presentation.style import METRIC_LABELS, describe
from probdr_lite.metrics import METRICS, between_within_ratio, knn_accuracy, layer_metrics
from probdr_lite.unrolled import STEP_FAMILY, attention_step

# %% [markdown]
# ## The settings
#
# Images are flattened to $Y \in \mathbb{R}^{n \times 784}$ and embedded once, $X_0 = \Pi(Y W_E)$.
# Then the same block is applied eight times:
#
# $$
# \begin{aligned}
# X_{t+1} &= \Pi\big(X_t + \eta\, \Delta(X_t)\big), \qquad
# \Delta = 2 (A - I) X + \frac{2}{d_q + \beta} X, \\
# A &= \sigma\Big(\frac{\kappa}{d_q} X X^\top - \beta I + M\Big).
# \end{aligned}
# $$
#
# The paper states $d_q$, $\kappa$, $\eta$ and the number of blocks. The rest is chosen here and
# marked as such:

# %%
settings_table(PAPER, meanings={
    "d_q": "latent width",
    "kappa": "attention sharpness (logits κ cos(x_i, x_j))",
    "eta": "step size",
    "n_layers": "blocks",
    "beta": "regulariser and self-attention penalty",
    "variant": "update: 2 η (A − I) X + 2 η X / (d_q + β), then Π",
    "seed": "seed of W_E ~ N(0, 1/784)",
    "mask": "M = 0: no mask",
})

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
describe(fig, fill("The first two latent coordinates of {n:,} MNIST test images coloured by digit, before any block "
                   "and after {n_layers} blocks.", n=len(labels), n_layers=PAPER.n_layers))
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
# Then the five variants of the transformer-block chapter from one common starting point. The `exact` and `symmetric`
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
describe(fig, fill("{n} panels, one per clustering number ({metrics:listing}), each against the layer with one line "
                   "per variant.", n=len(METRIC_LABELS), metrics=METRIC_LABELS.values()))
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
numbers = paper_numbers(rows_full, PAPER.n_layers)  # first/last values and peaks of the paper's block
facts = numbers_facts(numbers)
display(Markdown(fill(
    "**What the numbers say (all {n:,} images, the paper's block).** "
    "The between/within-class ratio {bw_direction:trend} from {bw0:num2} to {bw8:num2}"
    + (": the class centres move apart relative to the spread around them, which is the clumping the picture shows. "
       if facts["centres_apart"] else ". ")
    + "The k-NN accuracy {knn_direction:trend} from {knn0:num} to {knn8:num}. "
    + ("So the blocks make neighbourhoods *less* pure: when images collapse into a clump, images of different "
       "classes collapse together, and a neighbour in the same clump is no longer evidence of the same class. "
       if facts["knn_lower"] else "")
    + "The silhouette goes from {sil_first:num} to {sil_last:num}"
    + (", peaking at {sil_peak_value:num} after {sil_peak} blocks" if facts["sil_peaks_inside"] else "")
    + "; the NMI of k-means goes from {nmi_first:num} to {nmi_last:num}"
    + (", peaking at {nmi_peak_value:num} after {nmi_peak} blocks" if facts["nmi_peaks_inside"] else "")
    + ". "
    + ("Both peak before the last block: a few blocks group the images by class better than eight do. Later "
       "blocks keep merging clumps, and merged clumps mix classes: the smoothing overshoots. "
       if facts["both_peak_early"] else "")
    + ("The silhouette stays below {small_silhouette:g} throughout: the classes never become compact, "
       "well-separated groups in the full space." if facts["silhouette_small"] else ""),
    facts)))

# %% tags=["remove-cell"]
# Facts the introduction's "What this book finds" pastes (prose.glue; shown nowhere on this page).
for _name, _key in (("mnist_knn_first", "knn0"), ("mnist_knn_last", "knn8"), ("mnist_nmi_first", "nmi_first"),
                    ("mnist_nmi_last", "nmi_last")):
    glue(_name, num(facts[_key]))

# %% tags=["remove-input"]
facts = variants_facts(rows_var, PAPER.n_layers, nmi_seeds, PAPER.eta, PAPER.d_q, PAPER.beta)
lines = [fill("**The variants ({n_sub:,} images, after {n_layers} blocks).** Highest on each number:", facts)]
for row in facts["metrics"]:  # one line per number
    lines.append(fill(
        "- {label}: `{best}` ({best_value:num}); the five variants span {low:num} to {high:num}"
        + (", a range narrower than two standard deviations of k-means' own noise ({nmi_sd:num}), so the NMI "
           "does not separate the variants." if row["within_noise"] else "."),
        row, label=METRIC_LABELS[row["metric"]], nmi_sd=facts["nmi_sd"]))
lines.append(fill(
    "\nPlain attention ends with k-NN accuracy {att:num} and the $A - I$ block with {dif:num} "
    "(layer 0: {knn_sub0:num}). "
    + ("At the same $\\eta$ plain attention takes the smaller step (the transformer-block chapter: it equals "
       "diffusion with $\\eta = {eta_equiv:num}$), so it smooths less and loses less. "
       if facts["attention_smaller_step"] else "")
    + ("`paper` and `diffusion` end within {indistinguishable:g} of each other, as the transformer-block chapter "
       "predicts: the feed-forward term only adds $2\\eta/(d_q + \\beta) = {ff_weight:num4}$ to the weight on $X$. "
       if facts["paper_near_diffusion"] else "")
    + ("No variant ends with purer k-NN neighbourhoods than the random embedding starts with. "
       if facts["none_purer"] else
       "`{best_knn}` ends with purer k-NN neighbourhoods than the random embedding starts with. ")
    + ("The figure cannot tell the interpretations apart: every variant raises the between/within ratio, so every "
       "variant makes clumps." if facts["all_clump"] else ""),
    facts))
display(Markdown("\n".join(lines)))

# %% [markdown]
# ### $A - I$ is plain attention with a longer step
#
# With the diagonal weights of this chapter, plain attention, $A - I$ and the paper's block are one
# family: LayerNorm forgets a positive factor on each row, so each block is
# $\Pi(X + s A X)$, with $s = 2\eta$, $2\eta / (1 - 2\eta)$ and
# $2\eta / (1 - 2\eta + 2\eta / (d_q + \beta))$ (the identity of
# [the transformer-block chapter](transformer_block.ipynb); `attention_step` gives each block's
# $\eta' = s/2$). Comparing them compares step lengths. Here are the four numbers after eight
# blocks of plain attention over a range of steps, on the same 2,000 images, with the three blocks
# marked at their own $s$:

# %%
steps = {v: 2 * attention_step(PAPER.eta, v, PAPER.d_q, PAPER.beta) for v in STEP_FAMILY}
s_grid = sorted({float(s) for s in np.geomspace(0.1, 10.0, 9)} | set(steps.values()))
family_rows = {s: layer_metrics([run_blocks(X0_sub, PAPER.n_layers, PAPER.kappa, s / 2, PAPER.beta,
                                            "attention")[-1]], labels_sub)[0] for s in s_grid}
fig = step_family_figure(family_rows, steps)
describe(fig, fill("{n} panels, one per clustering number: its value after the last block of plain attention as the "
                   "block's step grows, with plain attention, A - I and the paper's block marked at their own steps.",
                   n=len(METRIC_LABELS)))
plt.show()

# %% tags=["remove-input"]
facts = step_family_facts(family_rows, steps, rows_var, nmi_seeds, PAPER.n_layers)
display(Markdown(fill(
    "The steps are $s = {s_attention:.3g}$ (plain attention), ${s_diffusion:.3g}$ ($A - I$) and ${s_paper:.3g}$ "
    "(the paper's block). Plain attention at $s = {s_diffusion:.3g}$ scores what the $A - I$ block scored in the "
    "table above, to {agreement:.1e} in every number (float32 rounding of two ways of writing one step): at "
    "initialisation $A - I$ does nothing that a longer attention step does not. Going from plain attention's step "
    "to $A - I$'s, k-NN accuracy ends {knn_accuracy_direction} ({knn_accuracy_change:signed}), the silhouette "
    "{silhouette_direction} ({silhouette_change:signed}), the between/within ratio {between_within_direction} "
    "({between_within_change:signed}) and the NMI of k-means "
    + ("within k-means' own noise" if facts["nmi_within_noise"] else "{kmeans_nmi_direction}")
    + " ({kmeans_nmi_change:signed}): whatever separates the variants above is the length of the step.",
    facts)))

# %% tags=["remove-cell"]
glue("mnist_family_gap", f"{facts['agreement']:.1e}")

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
facts = picture_facts(numbers, knn_2d)
display(Markdown(fill(
    "Before any block, the picture's two coordinates give a k-NN accuracy of {k0:num2}, while the full latents "
    "already place {knn0:pct} of images next to their own class: a random projection to 128 dimensions keeps most "
    "of the pixel-space neighbourhoods. After {n_layers} blocks the picture "
    + ("looks far better" if facts["picture_better"] else "changes")
    + " (k-NN accuracy {k8:num2} on two coordinates), while in the full space k-NN accuracy "
    + ("fell to {knn8:num2}. " if facts["knn_fell"] else "is {knn8:num2}. ")
    + "The blocks do not create class information; what they do is pull neighbours together, so that the clusters "
    "already present in the high-dimensional space become visible in *any* two coordinates. That is a real effect, "
    "but it is what makes the picture persuasive, and it is not evidence that the classes have become better "
    "separated.",
    facts)))

# %% [markdown]
# ## Try it: sharpness, step size, regulariser and depth
#
# The live panel runs the paper's block on 1,000 images (100 per class). Left: the first two
# latent coordinates after `depth` blocks. Right: the between/within-class ratio (all 128
# dimensions) at every layer for the current $\kappa$, $\eta$ and $\beta$, with the current depth
# circled and layer 0 dotted. Moving depth only redraws; moving the others reruns the eight
# blocks. Move $\kappa$ from a kernel wider than the data ($\kappa = 0.3$) through the default 30 to
# one narrower than the distance to the nearest neighbour ($\kappa = 3000$). At the small end the
# points gather in one spot (the axes follow them) while the ratio on the right hardly changes: the
# picture shrinks, but who is near whom stays the same. At the large end nothing moves at all.

# %%
X0_1k, labels_1k = mnist_latents(n=1000)

# %% tags=["remove-output"]
panel = mnist_panel(X0_1k, labels_1k)
describe(panel.fig, fill("The first two latent coordinates of {n:,} MNIST images after the chosen number of blocks, "
                         "coloured by digit, beside the between/within-class ratio at every layer.", n=len(labels_1k)))
panel.show()

# %% [markdown] tags=["site-only"]
# Without a kernel, the same panel, precomputed for the 2,000 images of the variants' comparison
# above (200 per class) over a grid of settings, with $\kappa$ over the same range; the points of a
# setting are fetched the first time you choose it. The axes start fixed at the extent of $X_0$, so
# the default view shows what the static figure above shows: after eight blocks the cloud has
# contracted into clumps. Let the axes follow the points to see the shape of a cloud that has
# shrunk. The caption's last sentence says what happens at each $\kappa$.

# %% tags=["hide-input"]
mnist_live(X0_sub, labels_sub, text={
    "caption": "Precomputed by `probdr_lite`'s `run_blocks`, the function of the tables above, for the {n:,} test "
               "images of the variants' comparison ({per_class} per class), the '{variant}' block, over {n_kappas} "
               "× {n_etas} × {n_betas} settings of $\\kappa$, $\\eta$ and $\\beta$ and every depth; the ratio is "
               "measured in all the latent dimensions, as in the tables. Each setting's points are one file of the "
               "site, fetched when you first pick that setting. At $\\eta = {eta:g}$ and $\\beta = {beta:g}$, after "
               "{n_layers} blocks: {kappa_cases}.",
    "kappa_spot": "for {which} the points gather into a single spot on the fixed axes, while the between/within "
                  "ratio goes from {ratio_start:num2} to {ratios:listing}",
    "kappa_still": "for {which} no image moves by more than {still:pct} of the starting spread, and the ratio stays "
                   "at {ratios:listing}",
    "kappa_move": "for {which} the points move (an image ends on average {moved:listing} from where it started) "
                  "and the ratio ends at {ratios:listing}",
    "spot_note": "All {n:,} points have gathered within {spread:.2g} of their mean, less than {spot:.0%} of this "
                 "frame: a single spot. Axes that follow the points show what is inside it",
    "alt_points": "First two latent coordinates of {n:,} MNIST images after {depth} blocks, coloured by digit, axes "
                  "{axes}; between/within ratio {=ratio}",
    "alt_ratio": "Between/within-class ratio at every layer; at depth {depth} it is {=ratio}",
})

# %% [markdown]
# ## Sweeps of $\kappa$ and $\eta$
#
# The same 1,000 images, eight blocks, every combination of $\kappa$ and $\eta$ below; each cell
# is the value after eight blocks, coloured by its change from layer 0 (red: lower, blue: higher).

# %%
kappas = (1.0, 3.0, 10.0, 20.0, 30.0, 50.0, 100.0, 1000.0)
etas = (0.1, 0.2, 0.3, 0.4, 0.45)
swept = ("knn_accuracy", "kmeans_nmi", "between_within")
grid = sweep(X0_1k, labels_1k, kappas, etas, metrics=swept)
fig = sweep_figure(grid, kappas, etas)
describe(fig, fill("Heat maps of {metrics:listing} after {n_layers} blocks over κ and η, each cell labelled with its "
                   "value and coloured by its change from layer 0.", metrics=[METRIC_LABELS[m] for m in swept],
                   n_layers=PAPER.n_layers))
plt.show()

# %% tags=["remove-input"]
facts = sweep_facts(grid, kappas, etas, PAPER.eta)
display(Markdown(fill(
    "Along the row $\\eta = {eta:g}$ the between/within ratio changes by {bw_first:signed} at "
    "$\\kappa = {kappa_first:g}$, by {bw_last:signed} at $\\kappa = {kappa_last:g}$, and by {bw_peak:signed} at "
    "$\\kappa = {kappa_peak:g}$"
    + (", so the blocks act only in the middle of the range. " if facts["ends_small"] else ". ")
    + "The two ends are the two limits of exercise 2 in the transformer-block chapter. With a very wide kernel $A$ "
    "is nearly uniform: every image is pulled towards the same global mean by about the same fraction, which "
    "shrinks the picture (the smallest $\\kappa$ in the live figure) without changing much of who is near whom. "
    "With a very narrow kernel and $\\beta > 0$ each image attends almost only to itself, $A \\approx I$, and "
    "nothing moves. Where the ratio grows most, the k-NN accuracy changes by {knn_peak:signed}"
    + (": wherever the blocks clump strongly, the neighbourhoods become less pure. "
       if facts["peak_less_pure"] else ". ")
    + ("The top row is the exception at small $\\kappa$: with $\\eta = {eta_top:g}$ only {own_share:pct} of each "
       "image's own position survives a block, and the slight preference of a wide kernel for similar images takes "
       "over. To first order in $\\kappa$ the attention output is $\\bar x + (\\kappa / (n d_q)) X^\\top X x_i$ "
       "(up to a multiple of $\\bar x$), a multiplication by the latents' second-moment matrix, so eight such "
       "blocks act like power iteration and squeeze the latents towards their leading directions: k-NN accuracy "
       "{knn_top:num2} at $\\kappa = {kappa_first:g}$." if facts["top_row_collapses"] else ""),
    facts)))

# %% [markdown]
# ## Summary

# %% tags=["remove-input"]
facts = summary_facts(numbers, rows_var)
display(Markdown(fill(
    ("Eight untrained blocks with diagonal weights do pull MNIST into clumps, and the two-coordinate picture shows "
     "that faithfully. " if facts["clumps"] else "Eight untrained blocks do not raise the between/within ratio here. ")
    + "The numbers add what the picture cannot: "
    + ("neighbourhoods become purer (k-NN accuracy rises), " if facts["purer"] else
       "the clumps are not pure classes (k-NN accuracy falls), ")
    + ("the grouping by class is best after a few blocks rather than eight, " if facts["both_peak_early"] else "")
    + ("plain attention makes clumps too, and " if facts["plain_attention_clumps"] else
       "plain attention does not make clumps, and ")
    + ("the paper's $A - I$ groups by class better than the other variants here. " if facts["a_minus_i_best"] else
       "the paper's $A - I$ does not group by class better than the other variants here. ")
    + ("The clustering comes from repeated smoothing over a similarity graph, which every variant shares. "
       if facts["plain_attention_clumps"] else "")
    + "Whether $A - I$ helps once the weights are *trained* is the next chapter's question.",
    facts)))

# %% [markdown]
#
# ## Exercises
#
# **1.** Before any block, the two plotted coordinates show no class structure, yet the k-NN
# accuracy in the full latent space is high. Why? What would it be on the raw 784 pixels?
#
# :::{dropdown} Solution
# $X_0$ is a random Gaussian projection of the images to 128 dimensions, followed by LayerNorm.
# Random projections approximately preserve distances (the Johnson-Lindenstrauss lemma), so the
# neighbours of an image in pixel space are mostly still its neighbours in the latents, and k-NN
# on raw MNIST pixels is already accurate. `knn_accuracy(load_mnist()[0], labels)` gives the
# pixel-space figure; the hidden cell compares it with the latents'. Two coordinates are a
# 2-dimensional projection, far too few to keep those neighbourhoods.
# :::

# %% tags=["hide-cell"]
from probdr_lite.data import load_mnist

pixels, _ = load_mnist()
facts = pixel_facts(knn_accuracy(pixels, labels, n_neighbors=METRICS.n_neighbors, cv=METRICS.cv),
                    paper_numbers(rows_full, PAPER.n_layers)["knn0"])  # the latents' k-NN accuracy before block 1
print(fill("k-NN accuracy on the raw 784 pixels {knn_pixels:num}, on the 128 latents at layer 0 {knn_latents:num}: "
           + ("practically the same (within {same_accuracy:.0%} of each other)." if facts["same"] else
              "more than {same_accuracy:.0%} apart."),
           facts))

# %% tags=["remove-input"]
facts = numbers_facts(numbers)
display(Markdown(fill(
    "**2.** "
    + ("The silhouette and the NMI peak after {sil_peak} and {nmi_peak} blocks and then fall (by layer {n_layers}: "
       "{sil_last:num} and {nmi_last:num})." if facts["both_peak_early"] else
       "Over the {n_layers} blocks the silhouette goes from {sil_first:num} to {sil_last:num} (largest after "
       "{sil_peak} blocks) and the NMI from {nmi_first:num} to {nmi_last:num} (largest after {nmi_peak}).")
    + " What happens after many more blocks? Predict, then check with `run_blocks(X0_1k, n_layers=40)` and "
    "`layer_metrics`.",
    facts)))

# %% [markdown]
# :::{dropdown} Solution
# Each block is a step of diffusion on a graph that is rebuilt from the current latents. Clumps
# that have formed attend almost only to themselves, but clumps whose kernels overlap keep
# merging, and merged clumps mix classes. Over many blocks the number of distinct positions
# shrinks until only a few remain (or, with a wide kernel, one). The between/within ratio can
# keep growing while k-NN accuracy, silhouette and NMI fall. This is the over-smoothing of
# deep attention stacks, seen here without any training. The hidden cell runs 40 blocks on the
# 1,000 images of the live panel.
# :::

# %% tags=["hide-cell"]
deep = run_blocks(X0_1k, n_layers=40, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta, variant=PAPER.variant)
keep = (0, 2, 4, 8, 16, 40)
for r in layer_metrics([deep[t] for t in keep], labels_1k, variant="paper"):
    print(f"layer {keep[r['layer']]:>2}: " + ", ".join(f"{m} {r[m]:.3f}" for m in METRIC_LABELS))

# %% [markdown]
# **3.** In the limit of a very wide kernel the figure under "Try it" shows all the points gathering
# in one spot, yet the numbers beside them hardly move. Explain, using the limit
# $A \to \tfrac{1}{n}\mathbf{1}\mathbf{1}^\top$.
#
# :::{dropdown} Solution
# With uniform $A$, $A X = \mathbf{1}\bar x^\top$ with $\bar x$ the mean latent, so one diffusion
# step is $X \leftarrow \Pi\big((1 - 2\eta) X + 2\eta \mathbf{1}\bar x^\top\big)$: every row moves
# the same fraction of the way towards the same point. Before $\Pi$, this is a scaling plus a shift,
# which leaves every distance ratio, hence every neighbourhood, silhouette and between/within ratio,
# unchanged. $\Pi$ rescales each row to the sphere; near a common point this is close to the same
# scaling for every row. So the picture shrinks towards $\Pi(\bar x)$ while the numbers stay put.
# The hidden cell runs eight blocks at a very small $\kappa$ and compares.
# :::

# %% tags=["hide-cell"]
wide = run_blocks(X0_1k, n_layers=PAPER.n_layers, kappa=0.01, eta=PAPER.eta, beta=PAPER.beta, variant=PAPER.variant)
spread = [float(np.sqrt(((X - X.mean(0)) ** 2).sum(1).mean())) for X in (wide[0], wide[-1])]
ratio = [between_within_ratio(X, labels_1k) for X in (wide[0], wide[-1])]
print(f"kappa = 0.01: rms distance to the mean {spread[0]:.3f} -> {spread[1]:.3f}; "
      f"between/within {ratio[0]:.4f} -> {ratio[1]:.4f}")
