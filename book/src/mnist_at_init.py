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
# [the transformer-block chapter](transformer_block.ipynb). Before, the first two latent
# coordinates form one shapeless cloud; after, they form tight clumps that carry the class colours.
# No weight was learned: the clumps come from the attention graph alone, because every block moves
# each image towards the images it resembles.
#
# **What this chapter finds.** The figure reproduces, but two coordinates out of 128 flatter it.
# Measured in the full latent space, the blocks move the class centres apart relative to the
# spread within each class, yet an image's nearest neighbours share its class less often after
# every block. k-means, its clusters scored against the classes by normalised mutual information
# (NMI), recovers the classes better than from the raw embedding after a few blocks; after all
# eight, on the 10,000 test images, a test against k-means' own randomness finds it no better and
# no worse, while on a subset of 2,000 images the same test finds a gain: that verdict depends on
# the number of images. Plain attention makes the same clumps, and at these weights the paper's
# $A - I$ block is plain attention with a longer step.
#
# **In this chapter you will learn**
#
# - how to reproduce the figure on all 10,000 MNIST test images, and which settings the paper
#   leaves open (with the choices made here);
# - four numbers that say how well the latents are grouped by class, and a rule that reads a
#   change of the NMI of k-means against k-means' own randomness;
# - how the answer depends on the number of blocks, the number of images and the variant of the
#   block (plain attention, $A - I$, the paper's block, the exact stop-gradient gradient, a
#   symmetric graph);
# - why the two-coordinate picture and the numbers disagree, and how $\kappa$ and $\eta$ decide
#   whether the blocks do nothing, cluster, or freeze.

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import numpy as np

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
    SLIDERS,
    kappa_ends,
    knn_over_seeds,
    layer_rows,
    mnist_latents,
    nmi_facts,
    pick,
    rule_p_value,
    run_blocks,
    self_attention_share,
    sweep,
    variant_metrics,
)
from probdr_lite.presentation.plotting import Table
from probdr_lite.presentation.prose import claim, glue, num, pct, sci, signed
from probdr_lite.presentation.style import METRIC_LABELS, describe
from probdr_lite.metrics import METRIC_NAMES, METRICS, between_within_ratio, knn_accuracy
from probdr_lite.unrolled import CHAPTER_VARIANTS, STEP_FAMILY, attention_step

# %% [markdown]
# ## The settings
#
# Images are flattened to $Y \in \mathbb{R}^{n \times 784}$ and embedded once, $X_0 = \Pi(Y W_E)$,
# where $\Pi$ is LayerNorm without gain or bias: it centres each row over its $d_q$ features and
# scales it to squared length $d_q$. Then the same block is applied eight times:
#
# $$
# \begin{aligned}
# X_{l+1} &= \Pi\big(X_l + \eta\, \Delta(X_l)\big), \qquad
# \Delta = 2 (A - I) X + \frac{2}{d_q + \beta} X, \\
# A &= \sigma\Big(\frac{\kappa}{d_q} X X^\top - \beta I + M\Big),
# \end{aligned}
# $$
#
# with $\sigma$ the softmax of each row and $X_l$ the latents after $l$ blocks. The paper states
# $d_q$, $\kappa$, $\eta$ and the number of blocks. The table marks the rest as chosen here,
# including which update runs: `paper`, the book's name for the full block above among the variants
# of [the transformer-block chapter](transformer_block.ipynb#how-far-the-simplified-steps-turn-from-the-gradient).

# %% tags=["hide-input"]
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

# %% tags=["hide-cell"]
X0, labels = mnist_latents()  # X0 = Pi(Y W_E): (10000, d_q) float32
_sq = (X0.double() ** 2).sum(1) / PAPER.d_q  # |x_i|^2 / d_q, 1 after LayerNorm
_diag = PAPER.kappa * _sq - PAPER.beta  # the diagonal logits kappa |x_i|^2 / d_q - beta
glue("diag_logit", num(PAPER.kappa - PAPER.beta, 0))
glue("diag_logit_gap", sci(float(_diag.max() - _diag.min())))
glue("self_cos", num((PAPER.kappa - PAPER.beta) / PAPER.kappa, 3))
claim(bool(float((_sq - 1).abs().max()) < 1e-5),
      "LayerNorm leaves every row with squared length d_q, so the diagonal logit is kappa - beta for every image")
claim(bool(float(_diag.max() - _diag.min()) < 1e-3 * PAPER.kappa),
      "the diagonal logit is the same for every image, to float32 round-off")

# %% [markdown]
# Because every row of $X$ has squared length $d_q$, the logit of an image with itself,
# $\kappa |x_i|^2 / d_q - \beta$, is $\kappa - \beta$ = {glue:text}`diag_logit` for every image
# (over the 10,000 images it varies by {glue:text}`diag_logit_gap`, float32 round-off), while the
# logit with another image is $\kappa \cos(x_i, x_j) \le \kappa$. So $\beta$ lowers each image's
# weight on itself by the factor $e^{-\beta}$: another image outweighs it only when their cosine
# is above $(\kappa - \beta)/\kappa$ = {glue:text}`self_cos`.
#
# ## The paper's picture, on all 10,000 test images
#
# The embedding $X_0 = \Pi(Y W_E)$ uses one draw of $W_E \sim \mathcal{N}(0, 1/784)$ (seed 0)
# for the whole chapter. The paper's block then runs eight times, with the attention computed in
# chunks of rows so that the $10{,}000 \times 10{,}000$ matrix $A$ is never held in memory.

# %%
Xs = run_blocks(X0, n_layers=PAPER.n_layers, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
                variant=PAPER.variant)  # [X_0, X_1, ..., X_8], each (10000, d_q)
fig = before_after_figure(Xs[0], Xs[-1], labels)
describe(fig, f"The first two latent coordinates of {len(labels):,} MNIST test images coloured by digit, before any "
              f"block and after {PAPER.n_layers} blocks.")
plt.show()

# %% tags=["remove-cell"]
_bw2 = [between_within_ratio(X[:, :2], labels) for X in (Xs[0], Xs[-1])]  # on the two coordinates drawn
_knn2 = knn_accuracy(Xs[-1][:, :2], labels, n_neighbors=METRICS.n_neighbors, cv=METRICS.cv)
claim(bool(_bw2[1] > 2 * _bw2[0] and _knn2 > 0.5),
      "the picture matches the paper's description: a single cloud before, separated clumps coloured mostly by one "
      "class after")
glue("knn_k", str(METRICS.n_neighbors))
glue("knn_cv", str(METRICS.cv))
glue("sil_max", f"{METRICS.max_samples:,}")
glue("km_restarts", str(METRICS.n_init))
glue("km_seeds", str(METRICS.nmi_seeds))
glue("km_last_seed", str(METRICS.nmi_seeds - 1))

# %% [markdown]
# The picture matches the paper's description: a single cloud before, separated clumps coloured
# mostly by one class after. Now the numbers.
#
# ## Four numbers per layer
#
# All four are computed in the full $d_q = 128$-dimensional latent space, with one set of settings
# for the whole book:
#
# - **k-NN accuracy**: the share of images whose class is the majority class of their
#   {glue:text}`knn_k` nearest neighbours, over {glue:text}`knn_cv` stratified folds. It asks
#   whether *neighbours* share a class.
# - **Silhouette**: for image $i$, $s_i = (b_i - a_i)/\max(a_i, b_i)$ with $a_i$ the mean distance
#   to its own class and $b_i$ the mean distance to the nearest other class, averaged over the
#   images. It asks whether *classes* are compact and apart. Its cost grows as $n^2$, so on more
#   than {glue:text}`sil_max` images it is computed on a random subset of {glue:text}`sil_max`,
#   drawn once (seed 0) and the same at every layer: only the 10,000-image table below has this
#   random part; on {glue:text}`sil_max` images or fewer every image counts.
# - **Between/within-class ratio**: the mean distance between two class centroids, over the mean
#   distance of an image to its own class centroid. It asks how far apart the class *centres* are
#   compared with the spread around them. It has no random part.
# - **NMI of k-means**: run k-means with 10 clusters ({glue:text}`km_restarts` restarts), and
#   measure the normalised mutual information between clusters and classes. It asks whether the
#   *clusters* the data fall into are the classes. k-means starts from random centres, so one run
#   is one draw: it runs once for each seed 0 to {glue:text}`km_last_seed`, and the tables give
#   the mean ± the standard deviation over these {glue:text}`km_seeds` seeds.
#
# The paper's block on all 10,000 images, every layer, with the lowest and highest of the NMI's
# runs in the last column:

# %%
rows_full = layer_rows(Xs, labels, variant="paper")  # one dict per layer, in the full latent space
layer_table(rows_full, nmi_range=True,
            caption=f"The paper's block on all {len(labels):,} test images; NMI: mean ± standard deviation over "
                    f"{METRICS.nmi_seeds} k-means seeds.")

# %% tags=["hide-cell"]
L = PAPER.n_layers
nmi = nmi_facts(rows_full, "paper")
knn_seeds = {t: knn_over_seeds(Xs[t], labels) for t in (0, L)}  # k-NN accuracy with 5 seeds of its folds
bw_full = pick(rows_full, "between_within", variant="paper")
sil_full = pick(rows_full, "silhouette", variant="paper")
knn_full = pick(rows_full, "knn_accuracy", variant="paper")
_nmi_text = [f"{m:.3f} ± {s:.3f}" for m, s in zip(nmi["mean"], nmi["sd"])]
glue("mnist_knn_first", num(knn_full[0]))
glue("mnist_knn_last", num(knn_full[L]))
glue("knn_fold_range0", f"{knn_seeds[0].min():.3f} to {knn_seeds[0].max():.3f}")
glue("knn_fold_range8", f"{knn_seeds[L].min():.3f} to {knn_seeds[L].max():.3f}")
glue("mnist_nmi_first", _nmi_text[0])
glue("mnist_nmi_last", _nmi_text[L])
glue("mnist_nmi_best_layer", str(nmi["best"]))
glue("mnist_nmi_best", _nmi_text[nmi["best"]])
glue("mnist_nmi_gain_best", signed(nmi["gain_best"]))
glue("nmi_gain_last", signed(nmi["gain_last"]))
glue("sil_peak", num(max(sil_full)))
claim(bool(bw_full[L] > bw_full[0]), "the between/within ratio grows: the class centres move apart")
claim(bool(np.all(np.diff(knn_full) < 0)), "the k-NN accuracy falls at every block")
claim(bool(knn_seeds[L].max() < knn_seeds[0].min()),
      "the k-NN accuracy falls, by far more than the folds' seed moves it")
claim(not nmi["better"][L] and not nmi["worse"][L],
      "after eight blocks the NMI is neither better nor worse than at layer 0: the ranges over seeds overlap")
claim(bool(abs(nmi["gain_last"]) < nmi["sd"][0]),
      "the difference of the means after eight blocks is smaller than layer 0's own seed spread")
claim(bool(nmi["better"][nmi["best"]] and 0 < nmi["best"] < L),
      "at the best number of blocks, before the last, the NMI is better than at layer 0 by the rule")
claim(bool(0 < int(np.argmax(sil_full)) < L and max(sil_full) < 0.25),
      "the silhouette peaks before the last block and stays small throughout")

# %% tags=["remove-cell"]
from math import comb

_better = [t for t in range(1, L + 1) if nmi["better"][t]]
claim(bool(_better and _better == list(range(_better[0], _better[-1] + 1)) and not any(nmi["worse"])),
      "at each of these layers the whole range of runs lies above layer 0's; no layer's lies below it")
glue("nmi_better_first", str(_better[0]))
glue("nmi_better_last", str(_better[-1]))
glue("nmi_tied_first", str(_better[-1] + 1))
claim(bool(_better[-1] == L - 2 and not nmi["better"][L - 1] and not nmi["worse"][L - 1]),
      "after seven and after eight blocks the ranges overlap layer 0's")
glue("rule_splits", str(comb(2 * METRICS.nmi_seeds, METRICS.nmi_seeds)))
glue("rule_p", num(rule_p_value(METRICS.nmi_seeds), 4))

# %% [markdown]
# **Do the blocks cluster the digits better or worse than the raw embedding?** The rule for the NMI:
# a layer clusters *better* than layer 0 when the lowest of its {glue:text}`km_seeds` k-means runs
# scores above the highest run at layer 0, *worse* when its highest is below layer 0's lowest, and
# the two cannot be told apart when the ranges overlap. The rule is a permutation test. If the
# layer made no difference, the ten runs of the two layers would be exchangeable: each of the
# {glue:text}`rule_splits` ways to say which five belong to which layer would be equally likely,
# and only two of them put one layer's runs wholly above the other's. So ranges that do not
# overlap have a two-sided $p$ = 2/{glue:text}`rule_splits` = {glue:text}`rule_p`.
#
# - **After {glue:text}`nmi_tied_first` blocks and after all eight, on these 10,000 images: neither.**
#   Their runs overlap layer 0's (the table's last column); after eight blocks the difference of the
#   means, {glue:text}`nmi_gain_last`, is smaller than layer 0's own standard deviation over the seeds.
# - **After {glue:text}`nmi_better_first` to {glue:text}`nmi_better_last` blocks: better.** At each
#   of these layers the whole range of runs lies above layer 0's; no layer's lies below it. The
#   NMI is largest after {glue:text}`mnist_nmi_best_layer` blocks, {glue:text}`mnist_nmi_gain_best`
#   above layer 0. Later blocks keep merging clumps, and merged clumps mix classes: the smoothing
#   overshoots.
# - **Neighbourhoods get worse all along.** The k-NN accuracy falls at every block; with five
#   seeds of the folds it spans {glue:text}`knn_fold_range0` at layer 0 and
#   {glue:text}`knn_fold_range8` at layer 8, so the fall is not the folds. When images collapse
#   into a clump, images of different classes collapse together, and a neighbour in the same clump
#   is no longer evidence of the same class.
# - **The class centres move apart, but the classes do not become compact.** The between/within
#   ratio grows: this is the clumping the picture shows. The silhouette rises to at most
#   {glue:text}`sil_peak` in the middle of the stack (which layer is highest depends on the random
#   subset it is computed on) and stays small throughout:
#   centres further apart, relative to the spread, do not put each image nearer its own class than
#   the next one.
#
# The test counts only k-means' randomness. $W_E$ is drawn once and the images are the fixed test
# set, so every verdict here is about this one embedding; how far another draw of $W_E$ would move
# the NMI is not measured.
#
# ## The variants compared
#
# The five variants of [the transformer-block chapter](transformer_block.ipynb) run from one common
# starting point. The `exact` direction needs $A^\top X$ as well as $A X$, and the `symmetric` one
# a first pass over the logits for the degrees before its product, so each of their blocks costs
# more than the others'; the variants therefore run on a stratified subset of 2,000 images (200 per
# class), with the same $W_E$. The paper's block appears at both sizes:

# %% tags=["hide-input"]
X0_sub, labels_sub = mnist_latents(n=2000)  # the same W_E; a class-balanced subset
rows_var, paths_var = variant_metrics(X0_sub, labels_sub, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta,
                                      n_layers=PAPER.n_layers, return_latents=True)
rows = rows_var + rows_full
metrics_table(rows, layers=(0, PAPER.n_layers),
              caption=f"NMI: mean ± standard deviation over {METRICS.nmi_seeds} k-means seeds.")

# %% tags=["hide-input"]
fig = metric_lines_figure(rows)
describe(fig, f"{len(METRIC_LABELS)} panels, one per clustering number ({', '.join(METRIC_LABELS.values())}), each "
              f"against the layer with one line per variant, the NMI with error bars of one standard deviation over "
              f"the k-means seeds.")
plt.show()

# %% tags=["remove-cell"]
knn_sub = pick(rows_var, "knn_accuracy", variant="paper")
bw_sub = pick(rows_var, "between_within", variant="paper")
share = {"sub": self_attention_share(X0_sub), "full": self_attention_share(X0)}  # mean A_ii at layer 0
glue("self_share_sub", pct(share["sub"], 1))
glue("self_share_full", pct(share["full"], 1))
claim(bool(knn_sub[0] < knn_full[0] - 0.02),
      "at layer 0 the k-NN accuracy of the 2,000 images is below that of the 10,000")
claim(bool(bw_sub[L] < bw_full[L]), "after eight blocks the 2,000 images have the smaller between/within ratio")
claim(bool(share["sub"] > 1.5 * share["full"]),
      "in the 2,000 images each image keeps a larger share of the attention for itself than in the 10,000")
nmi_sub = nmi_facts(rows_var, "paper")
glue("nmi_sub_range0", f"{nmi_sub['min'][0]:.3f} to {nmi_sub['max'][0]:.3f}")
glue("nmi_sub_range8", f"{nmi_sub['min'][L]:.3f} to {nmi_sub['max'][L]:.3f}")
claim(bool(nmi_sub["better"][L] and not nmi_facts(rows_full, "paper")["better"][L]),
      "on the 2,000 images the paper's block clusters better after eight blocks by the rule, on the 10,000 it does "
      "not: the verdict depends on n")

# %% [markdown]
# The two sizes differ for two reasons, one for the measurement and one for the blocks:
#
# - **Layer 0: a lower k-NN accuracy on 2,000 images than on 10,000.** The latents of the subset
#   are the same rows of the same $X_0$; only the number of candidates changes. In each fold an
#   image looks for its neighbours among 1,600 images instead of 8,000, so its nearest ones are
#   farther away and less alike. k-NN accuracy grows with the size of the sample it searches.
# - **Layer 8: a smaller between/within ratio on 2,000 images than on 10,000.** Here the blocks
#   themselves differ: each row of $A$ is a softmax over all $n$ images, and the image's own logit
#   is fixed at $\kappa - \beta$. With more images, more of them fall near it and share the
#   weight: at layer 0 an image keeps on average {glue:text}`self_share_sub` of the weight for
#   itself among 2,000 images, and {glue:text}`self_share_full` among 10,000. So each block moves
#   an image further towards its neighbours in the larger set, and eight blocks clump it more.
#
# So the NMI's verdict after eight blocks depends on $n$. On the 2,000 images the paper's block
# clusters *better* by the rule (runs {glue:text}`nmi_sub_range0` at layer 0,
# {glue:text}`nmi_sub_range8` at layer 8), on the 10,000 it does not; this chapter quotes the
# verdict for all 10,000 test images. Compare the variants with each other within one size, as the
# table does.

# %% tags=["remove-cell"]
at8 = {m: {v: pick(rows_var, m, variant=v, layer=L) for v in CHAPTER_VARIANTS} for m in METRIC_NAMES}
nmi_var = {v: nmi_facts(rows_var, v) for v in CHAPTER_VARIANTS}
glue("ff_weight", num(2 * PAPER.eta / (PAPER.d_q + PAPER.beta), 4))
claim(bool(max(at8["knn_accuracy"], key=at8["knn_accuracy"].get) == "attention"),
      "plain attention ends with the purest neighbourhoods of the five variants")
claim(bool(max(at8["knn_accuracy"].values()) < knn_sub[0]),
      "no variant ends with purer k-NN neighbourhoods than the embedding starts with")
claim(bool(abs(at8["knn_accuracy"]["paper"] - at8["knn_accuracy"]["diffusion"]) < 0.01),
      "the paper's block and A - I end within 0.01 of each other in k-NN accuracy")
claim(bool(min(at8["between_within"][v] for v in CHAPTER_VARIANTS) > bw_sub[0]),
      "every variant raises the between/within ratio: every variant makes clumps")
_apart = [(a, b) for a in CHAPTER_VARIANTS for b in CHAPTER_VARIANTS if nmi_var[a]["min"][L] > nmi_var[b]["max"][L]]
glue("nmi_sym_gap", num(nmi_var["symmetric"]["min"][L] - nmi_var["diffusion"]["max"][L], 4))
claim(bool(_apart == [("symmetric", "diffusion")]),
      "by the rule only the symmetric block's NMI lies wholly above another variant's, A - I's")

# %% [markdown]
# What separates the variants is how far each block moves the images. Plain attention ends with the
# purest neighbourhoods, because at the same $\eta$ it takes the shortest step (next subsection).
# The paper's block ends next to $A - I$: its feed-forward term only adds
# $2\eta/(d_q + \beta)$ = {glue:text}`ff_weight` to the weight on $X$. No variant ends with purer
# neighbourhoods than the embedding starts with, and every variant raises the between/within ratio:
# every variant makes clumps, so the picture cannot tell the interpretations of the block apart.
# The NMI hardly separates them: by the rule above only one pair is told apart after eight
# blocks, the symmetric block above $A - I$, whose ranges over the k-means seeds miss each other
# by {glue:text}`nmi_sym_gap`.
#
# ### $A - I$ is plain attention with a longer step
#
# With the diagonal weights, plain attention, $A - I$ and the paper's block differ only in their
# step: after LayerNorm each is a plain attention block $\Pi(X + 2\eta' A X)$, with $\eta' = \eta$,
# $\eta / (1 - 2\eta)$ and $\eta / (1 - 2\eta + 2\eta / (d_q + \beta))$
# ([derived in the transformer-block chapter](transformer_block.ipynb#plain-attention-changes-only-the-step-size);
# it does not hold for the value and output weights of trained models,
# [the trained-transformers chapter](trained_transformers.ipynb)). Here it means that comparing the
# three blocks compares step lengths. The four numbers after eight blocks of plain attention over
# a range of steps $2\eta'$, on the same 2,000 images, with the three blocks marked at their own steps:

# %% tags=["hide-input"]
steps = {v: 2 * attention_step(PAPER.eta, v, PAPER.d_q, PAPER.beta) for v in STEP_FAMILY}
s_grid = sorted({float(s) for s in np.geomspace(0.1, 10.0, 9)} | set(steps.values()))
family_rows = {s: layer_rows([run_blocks(X0_sub, PAPER.n_layers, PAPER.kappa, s / 2, PAPER.beta,
                                         "attention")[-1]], labels_sub)[0] for s in s_grid}
fig = step_family_figure(family_rows, steps)
describe(fig, f"{len(METRIC_LABELS)} panels, one per clustering number: its value after the last block of plain "
              f"attention as the block's step grows, with plain attention, A - I and the paper's block marked at "
              f"their own steps, the NMI with error bars of one standard deviation over the k-means seeds.")
plt.show()

# %% tags=["remove-cell"]
at_att, at_dif = family_rows[steps["attention"]], family_rows[steps["diffusion"]]
family_gap = max(abs(at_dif[m] - pick(rows_var, m, variant="diffusion", layer=L)) for m in METRIC_NAMES)
change = {m: at_dif[m] - at_att[m] for m in METRIC_NAMES}
for _v in STEP_FAMILY:
    glue(f"s_{_v}", num(steps[_v], 2))
glue("mnist_family_gap", sci(family_gap))
glue("change_knn", signed(change["knn_accuracy"]))
glue("change_sil", signed(change["silhouette"]))
glue("change_bw", signed(change["between_within"]))
glue("change_nmi", signed(change["kmeans_nmi"]))
claim(bool(family_gap < 1e-5),
      "plain attention at A - I's step scores what the A - I block scores, to float32 rounding")
claim(bool(change["knn_accuracy"] < 0 and change["silhouette"] < 0 and change["between_within"] > 0),
      "the longer step lowers k-NN accuracy and silhouette and raises the between/within ratio")
claim(bool(at_dif["kmeans_nmi_min"] <= at_att["kmeans_nmi_max"] and at_att["kmeans_nmi_min"] <= at_dif["kmeans_nmi_max"]),
      "the NMI at the two steps cannot be told apart: their ranges over seeds overlap")

# %% [markdown]
# The steps are $2\eta'$ = {glue:text}`s_attention` (plain attention), {glue:text}`s_diffusion`
# ($A - I$) and {glue:text}`s_paper` (the paper's block). Plain attention at $A - I$'s step scores
# what the $A - I$ block scored in the table above, to {glue:text}`mnist_family_gap` in every
# number: float32 rounding of two ways of writing one step. At these weights $A - I$ does nothing
# that a longer attention step does not. Going from plain attention's step to $A - I$'s lowers the
# k-NN accuracy ({glue:text}`change_knn`) and the silhouette ({glue:text}`change_sil`) and raises
# the between/within ratio ({glue:text}`change_bw`); the NMI moves by {glue:text}`change_nmi`, with
# overlapping ranges over the k-means seeds.
#
# ## Where the picture and the numbers disagree
#
# The picture shows two of 128 coordinates. Those two are an arbitrary projection: $W_E$ is random,
# so coordinates 1 and 2 are no more informative than any other pair. The numbers above use all
# 128. The same k-NN accuracy and between/within ratio, computed on the two plotted coordinates
# only, show what the picture can and cannot show:

# %%
shown = (0, PAPER.n_layers)  # before any block and after the last
knn_2d = {layer: knn_accuracy(Xs[layer][:, :2], labels, n_neighbors=METRICS.n_neighbors, cv=METRICS.cv)
          for layer in shown}
bw_2d = {layer: between_within_ratio(Xs[layer][:, :2], labels) for layer in shown}
knn_128 = {layer: pick(rows_full, "knn_accuracy", variant="paper", layer=layer) for layer in shown}  # table above
bw_128 = {layer: pick(rows_full, "between_within", variant="paper", layer=layer) for layer in shown}
Table(["layer", f"{METRIC_LABELS['knn_accuracy']}, 2 coordinates", f"{METRIC_LABELS['knn_accuracy']}, all 128",
       f"{METRIC_LABELS['between_within']}, 2 coordinates", f"{METRIC_LABELS['between_within']}, all 128"],
      [[str(layer), f"{knn_2d[layer]:.3f}", f"{knn_128[layer]:.3f}", f"{bw_2d[layer]:.2f}", f"{bw_128[layer]:.2f}"]
       for layer in shown])

# %% tags=["remove-cell"]
glue("knn_2d_0", num(knn_2d[0], 2))
glue("knn_2d_8", num(knn_2d[L], 2))
glue("knn_pct0", pct(knn_full[0]))
claim(bool(knn_2d[L] > knn_2d[0] + 0.05), "after eight blocks the picture looks far better")
claim(bool(knn_full[L] < knn_full[0] - 0.01), "in the full space the k-NN accuracy fell")
glue("kappa_low", f"{SLIDERS['kappa']['low']:g}")  # the ends of kappa's range in both interactive figures
glue("kappa_high", f"{SLIDERS['kappa']['high']:g}")
glue("kappa_default", f"{PAPER.kappa:g}")

# %% [markdown]
# Before any block, the picture's two coordinates give a k-NN accuracy of {glue:text}`knn_2d_0`,
# while the full latents already place {glue:text}`knn_pct0` of images next to their own class: a
# random projection to 128 dimensions keeps most of the pixel-space neighbourhoods. After eight
# blocks the picture looks far better (k-NN accuracy {glue:text}`knn_2d_8` on two coordinates),
# while in the full space k-NN accuracy fell. The blocks do not create class information; they
# pull neighbours together, so that the clusters already present in the high-dimensional space
# become visible in *any* two coordinates. That is a real effect, and the class centres do move
# apart relative to the spread within classes, but the picture is not evidence that an image's
# neighbours share its class more often than before: in the full space they share it less often.
#
# ## Try it: sharpness, step size, regulariser and depth
#
# The interactive figure runs the paper's block at a chosen $\kappa$, $\eta$, $\beta$ and depth, and
# draws the first two latent coordinates beside the between/within-class ratio (all 128 dimensions)
# at every layer; in a notebook it runs on 1,000 images (100 per class). $\kappa$ runs from a kernel
# wider than the data ($\kappa$ = {glue:text}`kappa_low`) through the default
# {glue:text}`kappa_default` to one narrower than the distance to the nearest neighbour ($\kappa$ =
# {glue:text}`kappa_high`). At the small end the points gather in one spot while the ratio hardly
# changes: the picture shrinks, but who is near whom stays the same. At the large end nothing moves
# at all.

# %%
X0_1k, labels_1k = mnist_latents(n=1000)

# %% tags=["remove-cell"]
ends = kappa_ends(X0_1k, labels_1k)  # eight blocks at the two ends of kappa's range, the other settings PAPER's
small, large = ends[SLIDERS["kappa"]["low"]], ends[SLIDERS["kappa"]["high"]]
claim(bool(small["spread"] < 0.05 and abs(small["ratio"] - 1) < 0.05),
      "at the small end of kappa's range the points gather in one spot while the between/within ratio hardly "
      "changes")
claim(bool(large["moved"] < 0.01 and abs(large["ratio"] - 1) < 0.01),
      "at the large end of kappa's range nothing moves at all")

# %% tags=["remove-cell"]
_path_1k = run_blocks(X0_1k, PAPER.n_layers, PAPER.kappa, PAPER.eta, PAPER.beta, PAPER.variant)
_at = (0, nmi["best"], L)  # layer 0, the 10,000 images' best layer and the last, on the panel's 1,000 images
nmi_1k = nmi_facts(layer_rows([_path_1k[t] for t in _at], labels_1k, variant="paper"), "paper")  # indexed as _at
_lead = nmi_1k["min"][1] - nmi_1k["max"][0]  # at the best layer: its lowest run minus layer 0's highest
glue("nmi_1k_lead", num(abs(_lead), 4))
glue("nmi_1k_sd0", num(nmi_1k["sd"][0], 3))
claim(bool(abs(_lead) < nmi_1k["sd"][0] / 2),
      "on the 1,000 images the lowest run after the 10,000 images' best number of blocks and layer 0's highest lie "
      "within half of layer 0's standard deviation over the seeds")
claim(bool(_lead > 0 and nmi_1k["better"][1]), "the rule reads a gain after that many blocks, by the smallest of margins")
claim(not nmi_1k["better"][2] and not nmi_1k["worse"][2],
      "on the 1,000 images the ranges overlap again after eight blocks")

# %% tags=["remove-output"]
panel = mnist_panel(X0_1k, labels_1k)
describe(panel.fig, f"The first two latent coordinates of {len(labels_1k):,} MNIST images after the chosen number of "
                    f"blocks, coloured by digit, beside the between/within-class ratio at every layer.")
panel.show()

# %% [markdown]
# On these 1,000 images, which exercise 2 uses too, the rule reads a gain after
# {glue:text}`mnist_nmi_best_layer` blocks, the best number on the 10,000, by the smallest of margins:
# the lowest of the five runs there lies only {glue:text}`nmi_1k_lead` above the highest at layer 0,
# against a standard deviation of {glue:text}`nmi_1k_sd0` over the seeds at layer 0. After eight
# blocks the ranges overlap, as on the 10,000. The figure shows the clumping; the verdict is the
# 10,000 images'.

# %% [markdown] tags=["site-only"]
# On this page, where no Python runs, the same figure is precomputed for the 2,000 images of the
# variants' comparison (200 per class) over a grid of settings, with $\kappa$ over the same range.

# %% tags=["hide-input"]
mnist_live(X0_sub, labels_sub, text={
    "caption": "Precomputed with the blocks of the tables above, for the {n:,} test "
               "images of the variants' comparison ({per_class} per class), the '{variant}' block, over {n_kappas} "
               "× {n_etas} × {n_betas} settings of $\\kappa$ (from {kappa_low:g} to {kappa_high:g}), $\\eta$ and "
               "$\\beta$ and every depth; it opens at $\\eta = {eta:g}$, $\\beta = {beta:g}$ and {n_layers} "
               "blocks. The ratio is measured in all the latent dimensions, as in the tables; beside it the figure "
               "prints how far an image has moved and how far the two coordinates drawn spread around their mean.",
    "alt_points": "First two latent coordinates of {n:,} MNIST images after {depth} blocks, coloured by digit, axes "
                  "{axes}; between/within ratio {=ratio}",
    "alt_ratio": "Between/within-class ratio at every layer; at depth {depth} it is {=ratio}",
})

# %% [markdown]
# ## Sweeps of $\kappa$ and $\eta$
#
# The same 1,000 images, eight blocks, every combination of $\kappa$ and $\eta$ below; each cell
# is the value after eight blocks (the NMI as its mean ± its standard deviation over the k-means
# seeds), coloured by its change from layer 0 (red: lower, blue: higher; for the NMI, of the mean).

# %% tags=["hide-input"]
kappas = (1.0, 3.0, 10.0, 20.0, 30.0, 50.0, 100.0, 1000.0)
etas = (0.1, 0.2, 0.3, 0.4, 0.45)
swept = ("knn_accuracy", "kmeans_nmi", "between_within")
grid = sweep(X0_1k, labels_1k, kappas, etas, metrics=swept)
fig = sweep_figure(grid, kappas, etas)
describe(fig, f"Heat maps of {', '.join(METRIC_LABELS[m] for m in swept)} after {PAPER.n_layers} blocks over κ and "
              f"η, each cell labelled with its value (the NMI with its standard deviation over the k-means seeds) and "
              f"coloured by its change from layer 0.")
plt.show()

# %% tags=["remove-cell"]
_row = etas.index(PAPER.eta)
bw_row = np.asarray(grid["between_within"][_row]) - grid["between_within@0"]
knn_row = np.asarray(grid["knn_accuracy"][_row]) - grid["knn_accuracy@0"]
_j = int(np.argmax(bw_row))
knn_top = float(grid["knn_accuracy"][-1, 0])
glue("sweep_eta", num(PAPER.eta, 1))
glue("kappa_first", num(kappas[0], 0))
glue("kappa_last", num(kappas[-1], 0))
glue("kappa_peak", num(kappas[_j], 0))
glue("bw_change_first", signed(bw_row[0]))
glue("bw_change_last", signed(bw_row[-1]))
glue("bw_change_peak", signed(bw_row[_j]))
glue("knn_change_peak", signed(knn_row[_j]))
glue("eta_top", num(etas[-1], 2))
glue("own_share", pct(1 - 2 * etas[-1]))
glue("knn_top", num(knn_top, 2))
claim(bool(max(abs(bw_row[0]), abs(bw_row[-1])) < 0.1 * bw_row.max()),
      "along the default row the blocks act only in the middle of the kappa range")
claim(bool(knn_row[_j] < -0.01), "where the ratio grows most, the neighbourhoods become less pure")
claim(bool(knn_top < grid["knn_accuracy@0"] - 0.1), "the top row collapses at small kappa")

# %% [markdown]
# Along the row $\eta$ = {glue:text}`sweep_eta` the between/within ratio changes by
# {glue:text}`bw_change_first` at $\kappa$ = {glue:text}`kappa_first`, by
# {glue:text}`bw_change_last` at $\kappa$ = {glue:text}`kappa_last`, and by
# {glue:text}`bw_change_peak` at $\kappa$ = {glue:text}`kappa_peak`: the blocks act only in the
# middle of the range. The two ends are the two limits of exercise 2 in
# [the transformer-block chapter](transformer_block.ipynb). With a very wide kernel $A$ is nearly
# uniform: every image is pulled towards the same global mean by about the same fraction, which
# shrinks the picture (the small end of the interactive figure's $\kappa$) without changing much of who is
# near whom. With a very narrow kernel and $\beta > 0$ each image attends almost only to itself,
# $A \approx I$, and nothing moves. Where the ratio grows most, the k-NN accuracy changes by
# {glue:text}`knn_change_peak`: wherever the blocks clump strongly, the neighbourhoods become less
# pure.
#
# The largest step, $\eta$ = {glue:text}`eta_top` (the top row of each map), is the exception at
# small $\kappa$: only {glue:text}`own_share` of each image's own position survives a block, and the
# slight preference of a wide kernel for similar images takes over. To first order in $\kappa$,
# $e^{s} \approx 1 + s$ in the logits $s_{ij} = \tfrac{\kappa}{d_q} x_i^\top x_j$ gives
# $A_{ij} \approx \tfrac1n\big(1 + \tfrac{\kappa}{d_q} x_i^\top (x_j - \bar x)\big)$, so row $i$ of
# $A X$ is $\bar x + \tfrac{\kappa}{n d_q} X^\top X x_i$ minus a multiple of $\bar x$ (this leaves out
# the self-logit's $-\beta$, which changes only the weight on $x_i$ itself, one of $n$). That is a
# multiplication by the latents' second-moment matrix, so eight such blocks act like power iteration
# and squeeze the latents towards their leading directions: k-NN accuracy {glue:text}`knn_top` at
# $\kappa$ = {glue:text}`kappa_first`.
#
# ## Summary
#
# - **What was shown.** Eight untrained blocks with diagonal weights pull MNIST into clumps, and
#   the two-coordinate picture flatters them: it looks far better after the blocks while, in the
#   full latent space, an image's nearest neighbours share its class less often after every block.
#   The class centres do move apart relative to the spread within classes. On all 10,000 test images
#   k-means finds the classes better than in the raw embedding after {glue:text}`nmi_better_first`
#   to {glue:text}`nmi_better_last` blocks (best after {glue:text}`mnist_nmi_best_layer`), and after
#   all eight no better and no worse
#   ([four numbers per layer](mnist_at_init.ipynb#four-numbers-per-layer)). Every variant makes
#   clumps; at these weights $A - I$ is plain attention with a longer step.
# - **What it rests on.** One draw of $W_E$ and one fixed set of images; the rule for the NMI is a
#   permutation test over k-means' seeds, at $p$ = {glue:text}`rule_p`, and counts no other
#   randomness. The verdict after eight blocks depends on $n$: on 2,000 images the same rule reads a
#   gain.
# - **What it does not show.** That $A - I$ clusters better than plain attention, or that the
#   clumps are classes: the clustering comes from repeated smoothing over a similarity graph, which
#   every variant shares. Whether $A - I$ helps once the weights are *trained* is the question of
#   [the trained-transformers chapter](trained_transformers.ipynb).

# %% tags=["remove-cell"]
from probdr_lite.data import load_mnist

pixels, _ = load_mnist()  # the same 10,000 test images, in the same order
knn_pixels = knn_accuracy(pixels, labels, n_neighbors=METRICS.n_neighbors, cv=METRICS.cv)
glue("knn_pixels", num(knn_pixels))
claim(bool(0 <= knn_pixels - knn_full[0] < 0.01),
      "k-NN on the raw pixels scores hardly more than on the latents before any block")

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
# neighbours of an image in pixel space are mostly still its neighbours in the latents: k-NN on the
# raw 784 pixels scores {glue:text}`knn_pixels`, hardly more than the latents'
# {glue:text}`mnist_knn_first`. Two coordinates are a 2-dimensional projection, far too few to keep
# those neighbourhoods.
# :::

# %% tags=["remove-cell"]
claim(bool(0 < nmi["best"] < L and 0 < int(np.argmax(sil_full)) < L),
      "the silhouette and the NMI are largest before the last block and then fall")

# %% [markdown]
# **2.** The silhouette and the NMI are largest in the middle of the stack (the NMI after
# {glue:text}`mnist_nmi_best_layer` blocks) and then fall (the 10,000-image table). What happens after
# many more blocks? Predict, then check on 1,000 images (hint: `run_blocks(X0_1k, n_layers=40)`
# runs the blocks, `layer_rows` measures the four numbers).

# %% [markdown]
# :::{dropdown} Solution
# Each block is a step of diffusion on a graph that is rebuilt from the current latents. Clumps
# that have formed attend almost only to themselves, but clumps whose kernels overlap keep
# merging, and merged clumps mix classes. Over many blocks the number of distinct positions
# shrinks until only a few remain (or, with a wide kernel, one). The between/within ratio can
# keep growing while k-NN accuracy, silhouette and NMI fall. This is the over-smoothing of
# deep attention stacks, seen here without any training.
# :::

# %% tags=["hide-cell"]
deep = run_blocks(X0_1k, n_layers=40, kappa=PAPER.kappa, eta=PAPER.eta, beta=PAPER.beta, variant=PAPER.variant)
keep = (0, 2, 4, 8, 16, 40)
deep_rows = layer_rows([deep[t] for t in keep], labels_1k, variant="paper")
Table(["layer"] + [METRIC_LABELS[m] for m in METRIC_NAMES],
      [[str(keep[r["layer"]])] + [f"{r[m]:.3f}" for m in METRIC_NAMES[:-1]]
       + [f"{r['kmeans_nmi']:.3f} ± {r['kmeans_nmi_sd']:.3f}"] for r in deep_rows],
      caption=f"The paper's block on the panel's {len(labels_1k):,} images, up to 40 blocks; NMI: mean ± standard "
              f"deviation over {METRICS.nmi_seeds} k-means seeds.")

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
# :::

# %% tags=["hide-cell"]
wide = run_blocks(X0_1k, n_layers=PAPER.n_layers, kappa=0.01, eta=PAPER.eta, beta=PAPER.beta, variant=PAPER.variant)
spread = [float(np.sqrt(((X - X.mean(0)) ** 2).sum(1).mean())) for X in (wide[0], wide[-1])]
ratio = [between_within_ratio(X, labels_1k) for X in (wide[0], wide[-1])]
Table(["$\\kappa = 0.01$", "layer 0", f"layer {PAPER.n_layers}"],
      [["rms distance to the mean", f"{spread[0]:.3f}", f"{spread[1]:.3f}"],
       [METRIC_LABELS["between_within"], f"{ratio[0]:.4f}", f"{ratio[1]:.4f}"]],
      caption=f"The paper's block on the panel's {len(labels_1k):,} images at a very small $\\kappa$.")
