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
# # The transformer block
#
# [The unrolled-inference chapter](unrolled_inference.ipynb) climbed the ELBO by gradient ascent
# with the graph held fixed, and noticed that a stack of identical steps is a network of identical
# layers. This chapter makes the network a
# transformer. The argument of {cite:t}`ravuri2025transformers` needs four moves: build the graph
# from the latents themselves with a heat kernel, hold it fixed for one step, simplify the
# regulariser, and project back with LayerNorm. Each move is checked here with numbers, and each
# simplification is kept as a *variant* of the block so that later chapters can test whether it
# matters.
#
# **The dictionary.** Each ingredient of the ELBO's gradient step in
# [the unrolled-inference chapter](unrolled_inference.ipynb) has a counterpart in the block. Here
# $n$ is the number of points (tokens), $d_q$ the width of the latents $X \in \mathbb{R}^{n \times d_q}$
# (the $q$ of the earlier chapters), $\mathbf{1}_n$ and $\mathbf{1}_{d_q}$ the all-ones vectors of those
# lengths, and $C = X X^\top + \beta I$. The left column is the gradient of $F = 2\,\mathrm{ELBO}$, derived
# in the next sections; each row is checked with numbers below.
#
# | gradient step on $F = 2\,\mathrm{ELBO}$ | transformer block | how close |
# | --- | --- | --- |
# | precision $\hat L$, a symmetric graph Laplacian | $L = I - A$, with $A$ the softmax attention | approximated: $I - A$ is a random-walk Laplacian, not symmetric |
# | data term $-(\hat L + \hat L^\top) X = -2\hat L X$ | attention minus the value, $2(A - I)X$ | approximated: exact only for a symmetric $A$ (variant `exact`) |
# | log-determinant term $2 C^{-1} X$ | feed-forward block $2X/(d_q + \beta)$ | approximated: exact when the rows of $X$ are orthogonal |
# | a fixed graph, built once from the data | a graph rebuilt from the latents in every block, held fixed during the step | approximated: the stop-gradient drops the graph's own gradient |
# | centring over the points, $X^\top \mathbf{1}_n = 0$ | LayerNorm: each row centred over its features, $X \mathbf{1}_{d_q} = 0$, and scaled to $\lVert x_i\rVert^2 = d_q$ | dropped and replaced: a different constraint |
# | $\beta$ in $C$: jitter, threshold $1/\beta$, shrinkage | $\beta$ in $2/(d_q + \beta)$, and $-\beta$ on every self-logit | approximated: threshold and shrinkage go with $2C^{-1}X$; the self-logit term is added, not derived |
# | step size $\eta$ | residual scale, $W_O = 2\eta I$ | exact, with a factor 2 ($F = 2\,\mathrm{ELBO}$) |
# | none | ReLU of the feed-forward block | dropped |
#
# Where did the zero-eigenvalue trap of [the ELBO chapter](probdr_elbo.ipynb) go? Rows of $A$ sum to
# one, so $(I - A)\mathbf{1}_n = 0$: the constant vector over the points is again an eigenvector with
# eigenvalue 0, and LayerNorm does not centre over the points. What saves the block is the other
# half of LayerNorm: every row has squared norm $d_q$, so $\lVert X\rVert_F^2 = n d_q$ and nothing can
# grow without bound along $\mathbf{1}_n$ or anywhere else. The trap is closed by the sphere, not by
# centring.
#
# **In this chapter you will learn**
#
# - how the gradient step on $F(X) = \log\det(X X^\top + \beta I) - \operatorname{tr}(X^\top L X)$
#   becomes the residual update $X \leftarrow \Pi\big(X + 2\eta(A - I)X + \tfrac{2\eta}{d_q + \beta} X\big)$;
# - why the step sizes of the two chapters are not comparable as numbers: a factor 2 from the
#   objective, and the spectra of $D - W$ and $I - A$, which turn the earlier step thresholds into
#   $\eta < 1/2$;
# - why softmax attention with sharpness $\kappa$ *is* the random-walk matrix $D^{-1}W$ of a
#   heat-kernel graph with bandwidth $t = 2/\kappa$ (checked against the graph code of
#   [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb)), and what that bump looks like on the sphere;
# - why $A - I$ is one explicit Euler step of graph diffusion, and why, with the diagonal weights, plain
#   attention $A$ differs from it only by the size of the step;
# - LayerNorm as the projection $\Pi$ of each row onto $\{x \in \mathbb{R}^{d_q} : x^\top \mathbf{1}_{d_q} = 0,\ \|x\|^2 = d_q\}$;
# - how to set the weights of an ordinary PyTorch transformer so that its forward pass equals the
#   unrolled update, and what the five variants and the causal mask do to a toy data set.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from probdr_lite.chapters.probdr_elbo import SETUP
from probdr_lite.chapters.transformer_block import BUMP_KAPPAS, TOY_SETTINGS, bead_facts, toy_beta_range, toy_paths
from probdr_lite.data import load_mnist
from probdr_lite.diagonal_transformer import DiagonalTransformer
from probdr_lite.presentation.figures.block import make_toy, mask_figure, variant_panel
from probdr_lite.presentation.figures.bridge import (
    bump_panel,
    bump_scrub,
    euler_limits,
    laplacian_eigenvalues,
    spectra_figure,
)
from probdr_lite.presentation.figures.block import toy_beta_text
from probdr_lite.presentation.live.builders import toy_live
from probdr_lite.presentation.prose import claim, glue, num, pct
from probdr_lite.presentation.style import describe
from probdr_lite.graphs import heat_kernel_attention, knn_graph, laplacian
from probdr_lite.probdr import step_sizes
from probdr_lite.unrolled import (
    CHAPTER_VARIANTS,
    attention_matrix,
    block_step,
    euler_diffusion_errors,
    layer_norm,
    regulariser_gradient,
    unroll,
    update_direction,
)

torch.set_num_threads(1)  # a few hundred points: one thread beats two that wait for each other

# %% tags=["remove-cell"]
glue("toy_kappa", f"{TOY_SETTINGS['kappa']['default']:g}")  # the sliders' defaults
glue("toy_eta", f"{TOY_SETTINGS['eta']['default']:g}")
glue("toy_beta", f"{TOY_SETTINGS['beta']['default']:g}")
glue("toy_depth", str(TOY_SETTINGS["depth"]["default"]))
glue("elbo_n", str(SETUP.n))  # the unrolled-inference chapter's graph, compared below
glue("elbo_k", str(SETUP.k))

# %% [markdown]
# ## A toy that a block can move
#
# A block acts on latents whose rows lie on a sphere: LayerNorm centres every row and scales it to
# squared norm $d_q$, $X \mathbf{1}_{d_q} = 0$ and $\lVert x_i\rVert^2 = d_q$. To watch a block at work, the chapter lifts the two-moons data set
# (300 points in the plane, two classes) onto that sphere in $d_q = 16$ dimensions. A point
# $y \in \mathbb{R}^2$ becomes the unit vector $u = (y, c)/\|(y, c)\|$ in $\mathbb{R}^3$, and then
# $x = \sqrt{d_q}\, u Q$, where the three rows of $Q$ are orthonormal and orthogonal to the
# all-ones vector. Each update below combines rows of $X$, and LayerNorm only centres and rescales,
# so the latents never leave the three-dimensional span of $Q$. The moved latents can therefore be
# mapped back to the plane exactly, and at layer 0 that map returns the moons themselves.

# %%
kappa, eta, beta, depth = (TOY_SETTINGS[k]["default"] for k in ("kappa", "eta", "beta", "depth"))  # the sliders'
toy = make_toy("moons", n=300, noise=0.07, d_q=16)
X0 = toy.X0  # (n, d_q), float64
n, d_q = X0.shape
print(f"n = {n} points, d_q = {d_q}")
print(f"row sums (X 1_dq): max |.| = {X0.sum(1).abs().max():.1e}; "
      f"squared norms: {X0.pow(2).sum(1).min():.6f} to {X0.pow(2).sum(1).max():.6f} (d_q = {d_q})")
print(f"mapped back to the plane, largest distance to the data: {np.abs(toy.unlift(X0) - toy.Y).max():.1e}")

# %% tags=["remove-cell"]
claim(n == 300 and d_q == 16 and len(np.unique(toy.labels)) == 2
      and bool(X0.sum(1).abs().max() < 1e-12 and (X0.pow(2).sum(1) - d_q).abs().max() < 1e-12)
      and bool(np.abs(toy.unlift(X0) - toy.Y).max() < 1e-12),
      "the two-moons data set (300 points in the plane, two classes) on that sphere in d_q = 16 dimensions; at layer "
      "0 that map returns the moons themselves")

# %% [markdown]
# ## From the gradient step to a residual update
#
# [The unrolled-inference chapter](unrolled_inference.ipynb) climbed the ELBO of
# [the ELBO chapter](probdr_elbo.ipynb),
# $\mathrm{ELBO}(X) = \tfrac{\nu}{2}\left[\log\det C - \operatorname{tr}(C L)\right] + \text{const}$,
# with $\nu = 1$. The degrees of freedom $\nu$ of the Wishart only multiply the whole objective, so
# they move its maximiser nowhere and only rescale the gradient. The paper works with twice that
# ELBO,
#
# $$
# F(X) = \log\det C - \operatorname{tr}(X^\top L X) = 2\,\mathrm{ELBO}(X) + \text{const},
# $$
#
# with $C = X X^\top + \beta I$ (the constant is $-\beta \operatorname{tr} L$), whose gradient for
# a fixed $L$ is
#
# $$
# \nabla F(X) = 2 C^{-1} X - (L + L^\top) X .
# $$
#
# A step $X + \eta \nabla F$ is therefore a step of size $2\eta$ on the ELBO: this is where the
# factor 2 in the paper's $2\eta$ comes from. It is also one reason why the unrolled-inference
# chapter's default step and this chapter's $\eta$ = {glue:text}`toy_eta` cannot be compared as numbers; the other
# is that the two Laplacians have very different spectra (see "Two Laplacians, two step sizes"
# below).
#
# The paper turns the step $X + \eta \nabla F$ into a transformer block with four moves
# {cite:p}`ravuri2025transformers`:
#
# 1. **The graph comes from the latents.** $L = I - A$ with $A = \sigma(S)$ the row-wise softmax of
#    the logits $S = \tfrac{\kappa}{d_q} X X^\top - \beta I + M$. The mask $M$ is 0 where a point
#    may attend and $-\infty$ where it may not (0 everywhere for full attention). $A$ is held fixed
#    during the step (a stop-gradient), as $L$ was in the unrolled-inference chapter. The paper
#    writes $\sigma(\kappa X X^\top - \beta I - M)$ for rows of unit norm; the book's latents have
#    squared norm $d_q$ after LayerNorm, hence the $1/d_q$. Three ways of writing the mask meet here:
#
#    | written by | logits | $M_{ij}$ where $i$ may attend to $j$ | where it may not |
#    | --- | --- | --- | --- |
#    | the paper | $\kappa X X^\top - \beta I - M$ | 0 | $+\infty$, so that $-M_{ij} = -\infty$ (the paper says $-\infty$, which subtracted would unmask) |
#    | this book | $\tfrac{\kappa}{d_q} X X^\top - \beta I + M$ | 0 | $-\infty$ |
#    | PyTorch (`attn_mask` of `scaled_dot_product_attention`) | $Q K^\top/\sqrt{d_q} + \text{mask}$, with mask $= -\beta I + M$ | 0 | $-\infty$ |
#
#    All three give the same logits: a masked entry gets $-\infty$ and so zero attention. The $-\beta I$ is not
#    derived: the paper's variational constraint $\tilde L = I - \sigma(\kappa Z Z^\top - M)$ has no
#    $\beta$, and the term first appears in the update, with the $\beta$ of $C$. What it does is
#    plain: every self-logit drops by $\beta$, so a point's weight on itself shrinks by a factor
#    $e^{-\beta}$ against its neighbours; in graph terms (next section) it sets the weight of each
#    point's self-loop. The book keeps it, with $\beta$ = {glue:text}`toy_beta` as in $C$.
# 2. **The data term is written $2 L X$.** That is the gradient of the trace term only when $L$ is
#    symmetric. A softmax is not symmetric, so this is a simplification: the variant `"exact"` keeps
#    $(L + L^\top) X$.
# 3. **The regulariser $2 C^{-1} X$ is replaced by $2X/(d_q + \beta)$**, a fixed linear map of
#    $X$ that plays the role of the feed-forward block (why this may stand in for it is in
#    "The feed-forward block stands in for the regulariser" below).
# 4. **LayerNorm $\Pi$ projects the result back** onto the sphere the latents started on.
#
# Together, with $-2LX = 2(A - I)X$, and writing $\Delta$ for the step direction (the letter $D$
# stays the degree matrix):
#
# $$
# X \leftarrow \Pi\Big(X + \eta\, \Delta\Big), \qquad
# \Delta = 2 (A - I) X + \frac{2}{d_q + \beta} X .
# $$
#
# `update_direction` returns $\Delta$ for each variant. Here it is next to the same formula typed
# out with the dense matrix $A$:

# %%
print(f"kappa = {kappa:g}, eta = {eta:g}, beta = {beta:g} (the defaults of the sliders below)")
A = attention_matrix(X0, kappa, beta)  # A = softmax((kappa / d_q) X X^T - beta I), rows sum to 1
I = torch.eye(n, dtype=X0.dtype)
L = I - A
Delta_formula = 2 * (A - I) @ X0 + 2 / (d_q + beta) * X0
Delta_package = update_direction(X0, kappa, beta, "paper")
print(f"rows of A sum to 1: max |A 1 - 1| = {(A.sum(1) - 1).abs().max():.1e}")
print(f"'paper' direction, package vs formula: max |difference| = {(Delta_package - Delta_formula).abs().max():.1e}")
X1 = block_step(X0, kappa, eta, beta, "paper")
print(f"one block, Pi(X + eta Delta) vs block_step: "
      f"max |difference| = {(layer_norm(X0 + eta * Delta_formula) - X1).abs().max():.1e}")

# %% tags=["remove-cell"]
claim(bool((A.sum(1) - 1).abs().max() < 1e-12 and (Delta_package - Delta_formula).abs().max() < 1e-12
           and (layer_norm(X0 + eta * Delta_formula) - X1).abs().max() < 1e-12),
      "update_direction returns Delta for each variant. Here it is next to the same formula typed out with the dense "
      "matrix A")

# %% [markdown]
# The variants that the rest of the book compares differ only in $\Delta$ (with $L = I - A$ and
# $C = X X^\top + \beta I$):
#
# | variant | direction $\Delta$ | what it is |
# | --- | --- | --- |
# | `attention` | $2 A X$ | a standard attention block at the diagonal initialisation |
# | `diffusion` | $2 (A - I) X = -2 L X$ | the paper's $A - I$ without the feed-forward term |
# | `paper` | $2 (A - I) X + \tfrac{2}{d_q + \beta} X$ | the paper's block |
# | `exact` | $2 C^{-1} X - (L + L^\top) X$ | the true gradient of $F$ with $A$ held fixed |
# | `symmetric` | $2 (D^{-1/2} W D^{-1/2} - I) X$ | diffusion on the symmetrically normalised graph, $W = e^{S}$, $D = \operatorname{diag}(W \mathbf{1}_n)$ |
#
# How far apart are the simplified directions and the exact one? To first order in $\eta$, $\Pi$
# keeps of each row $\Delta_i$ only its part tangent to the sphere at $x_i$: it removes the mean of
# $\Delta_i$ and its component along $x_i$ (this is the Jacobian of $\Pi$). Every $\Delta$ here is
# already centred, so the tangent part is $\Delta_i - (\Delta_i^\top x_i / d_q)\, x_i$, and a
# multiple of $X$ added to $\Delta$ changes nothing but the step size. The fair comparison is
# between tangent parts. `tangent_part` computes them; [the objections chapter](objections.ipynb)
# uses the same function on MNIST.

# %%
from probdr_lite.chapters.objections import tangent_part as tangent  # Pi's Jacobian at X applied to each row of Delta

exact_part = tangent(update_direction(X0, kappa, beta, "exact"), X0)
cosines = {}
for variant in CHAPTER_VARIANTS:
    part = tangent(update_direction(X0, kappa, beta, variant), X0)
    cosines[variant] = float((part * exact_part).sum() / (part.norm() * exact_part.norm()))
    print(f"{variant:>10}: cosine with the exact direction (tangent parts) {cosines[variant]:+.3f}")

# %% tags=["remove-cell"]
W_self = torch.exp(kappa / d_q * X0 @ X0.T - beta * I)  # W = e^S: the weights the softmax normalises
degrees = W_self.sum(1)
A_sym = W_self / torch.sqrt(degrees[:, None] * degrees[None, :])  # D^{-1/2} W D^{-1/2}
first_order = float(tangent((A.T - A) @ X0, X0).norm())  # how far 2 L X is from (L + L^T) X
second_order = float(tangent((A + A.T - 2 * A_sym) @ X0, X0).norm())  # and the symmetric variant's graph term
logdet_part = float(tangent(regulariser_gradient(X0, beta), X0).norm() / exact_part.norm())
sym_part = tangent(update_direction(X0, kappa, beta, "symmetric"), X0)
sym_gap = float((sym_part - exact_part).norm() / exact_part.norm())
glue("deg_spread", pct(float((degrees.max() - degrees.min()) / degrees.mean()), 0))
glue("sym_vs_paper", num(second_order / first_order, 2))
glue("logdet_share", pct(logdet_part, 1))
glue("sym_gap", pct(sym_gap, 1))
same = max(abs(cosines[v] - cosines["diffusion"]) for v in ("attention", "paper")) < 1e-9
claim(bool(same), "attention, diffusion and paper share one tangent direction")
claim(cosines["diffusion"] > 0.95, "Without a mask, on this toy, the simplifications hardly turn the step")
claim(cosines["symmetric"] > 0.9995 and second_order < 0.2 * first_order and logdet_part < 0.05 and sym_gap < 0.05,
      "The symmetric variant scores +1.000: its graph term is a small fraction as far from the exact one as the "
      "paper's, the log-determinant's tangent part is a few per cent, and a gap of a few per cent moves the cosine "
      "only in the fourth decimal")

# %% [markdown]
# `attention`, `diffusion` and `paper` share one tangent direction, since their $\Delta$ differ by
# multiples of $X$: to first order in $\eta$ they differ only in the length of the step. Without a
# mask, on this toy, that direction is close to the exact one (the cosine printed above), so the
# simplifications hardly turn the step; they change how long it is.
#
# Why does the `symmetric` variant score $+1.000$? Write the weights $W = e^{S}$ and their row sums,
# the degrees $d_i$. The exact graph term uses $A + A^\top$, with entries
# $W_{ij}(1/d_i + 1/d_j)$; the symmetric variant uses $2 D^{-1/2} W D^{-1/2}$, with entries
# $2W_{ij}/\sqrt{d_i d_j}$. Their difference is $W_{ij}(1/\sqrt{d_i} - 1/\sqrt{d_j})^2$: *second*
# order in the difference of the degrees at the two ends of an edge, while $2LX$ misses
# $(A^\top - A)X$, which is first order. Across the toy the degrees spread over
# {glue:text}`deg_spread` of their mean, but points joined by a heavy edge lie close together and
# have similar degrees, so the symmetric variant's graph term is only {glue:text}`sym_vs_paper`
# times as far from the exact one as the paper's (tangent parts). The rest of the exact direction,
# the log-determinant's $2C^{-1}X$, has a tangent part of {glue:text}`logdet_share` of it. In all,
# the symmetric direction is off by {glue:text}`sym_gap` of the exact one's length, and a cosine
# is about $1 - \tfrac12(\text{gap})^2$: the difference shows only in the fourth decimal.

# %% [markdown]
# ## Attention is the random walk of a heat-kernel graph
#
# After LayerNorm every row has $\|x_i\|^2 = d_q$, so with unit rows $\hat x_i = x_i / \sqrt{d_q}$
# the logits are $S_{ij} = \kappa\, \hat x_i^\top \hat x_j - \beta [i = j]$, $\kappa$ times a
# cosine. For unit vectors $\|\hat x_i - \hat x_j\|^2 = 2 - 2\hat x_i^\top \hat x_j$, hence
#
# $$
# e^{\kappa\, \hat x_i^\top \hat x_j} = e^{\kappa}\, e^{-\kappa \|\hat x_i - \hat x_j\|^2 / 2}.
# $$
#
# The factor $e^\kappa$ is the same in every entry and cancels when a row is normalised. So the
# softmax is the random-walk matrix $A = D^{-1} W'$ of the heat-kernel graph
# $W_{ij} = e^{-\|\hat x_i - \hat x_j\|^2 / t}$ of [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb)
# with bandwidth $t = 2/\kappa$, plus a self-loop of weight $e^{-\beta}$: $W' = W + e^{-\beta} I$,
# $D = \operatorname{diag}(W' \mathbf{1}_n)$. The book uses this convention throughout: the
# bandwidth is $t$ in $e^{-\|\cdot\|^2/t}$, measured on unit rows, and $\kappa = 2/t$ is an
# inverse bandwidth. $I - A$ is the random-walk Laplacian $L_{\mathrm{rw}}$.
# `heat_kernel_attention` builds $D^{-1}W'$ with the graph code of that chapter, `knn_graph`
# (every other point a neighbour), without any softmax:

# %%
A_graph = heat_kernel_attention(X0, kappa, beta)  # D^{-1} (W + e^{-beta} I), W_ij = exp(-kappa |x_i - x_j|^2 / 2)
print(f"softmax attention vs heat-kernel random walk: max |difference| = {np.abs(A.numpy() - A_graph).max():.1e}")
print(f"A is not symmetric: max |A - A^T| = {(A - A.T).abs().max():.3f}")

# %% tags=["remove-cell"]
claim(bool(np.abs(A.numpy() - A_graph).max() < 1e-12),
      "So the softmax is the random-walk matrix A = D^{-1} W' of the heat-kernel graph ... without any softmax")
claim(bool((A - A.T).abs().max() > 0.01), "A_ij != A_ji whenever the two points have different degrees")

# %% [markdown]
# The last line matters for what follows: a random walk leaves a point in proportion to *that
# point's* neighbourhood, so $A_{ij} \ne A_{ji}$ whenever the two points have different degrees.
# That is why $2 L X$ and $(L + L^\top) X$ differ.
#
# What does "inverse bandwidth" look like? One row of $A$ is the attention of one point $x_\star$, a
# bump centred on $x_\star$. The figure puts 1,500 evenly spread points on the unit sphere in three
# dimensions and draws the row of $x_\star$ (the star) for the chosen $\kappa$: on the left each
# point's weight against its angle to $x_\star$, computed as the softmax of $\kappa\, x_\star^\top p$
# (dots) and as the normalised heat kernel $e^{-\|x_\star - p\|^2/t}$ with $t = 2/\kappa$ (line), which
# coincide; the dashed line is where $\|x_\star - p\|^2 = t$. On the right the same weights on the sphere. A small
# $\kappa$ spreads the row over the whole sphere; a large one shrinks it to the nearest few points.
# The title counts the *effective* number of neighbours, $1 / \sum_p A_{qp}^2$.

# %% tags=["remove-output"]
bump_alt = ("One row of the attention on the unit sphere: each point's weight against its angle to the pole, "
            "softmax beside the heat kernel, and the sphere coloured by that weight.")
panel = bump_panel(kappa=kappa)
describe(panel.fig, bump_alt)
panel.show()

# %% tags=["remove-cell"]
glue("bump_first", f"{BUMP_KAPPAS[0]:,g}")
glue("bump_last", f"{BUMP_KAPPAS[-1]:,g}")
claim(len(BUMP_KAPPAS) == 8, "the same figure for eight values of kappa")

# %% [markdown]
# With a kernel (Binder, Colab, Jupyter, or *Live Code* in the rocket menu of the book's site) the cell above shows
# the figure with a $\kappa$ slider. Without one, the same figure for eight values of $\kappa$
# from {glue:text}`bump_first` to {glue:text}`bump_last`:

# %%
bump_scrub(alt=bump_alt)

# %% [markdown]
#
# ## $A - I$ is one Euler step of graph diffusion
#
# The data term alone, $X \leftarrow X + 2\eta (A - I) X = X - 2\eta L X$, is one explicit Euler
# step of size $h = 2\eta$ of the graph heat equation in the time $\tau$ (the letter $t$ stays the
# bandwidth),
#
# $$
# \frac{dX}{d\tau} = -L X, \qquad X(\tau) = e^{-\tau L} X(0),
# $$
#
# which smooths every coordinate over the graph: each point drifts towards the weighted mean of
# its neighbours, as in the Laplacian smoothing behind diffusion maps {cite:p}`coifman2006diffusion`.
# `euler_diffusion_errors` takes $k$ Euler steps of size $h = \tau/k$ with $A$ fixed and compares
# them with the exact solution $e^{-\tau L}X(0)$ from `scipy.linalg.expm`:

# %%
rows = euler_diffusion_errors(A.numpy(), X0.numpy(), t=2 * eta, n_steps=(1, 2, 4, 8, 16))
print(f"tau = 2 eta = {2 * eta:g}")
print(" steps k   h = tau/k    relative error")
for r in rows:
    print(f"{r['steps']:7d}  {r['h']:9.4f}    {r['relative_error']:.2e}")

# %% tags=["remove-cell"]
halving = rows[-2]["relative_error"] / rows[-1]["relative_error"]
glue("euler_halving", num(halving, 1))
claim(bool(1.6 < halving < 2.4) and (rows[-2]["steps"], rows[-1]["steps"]) == (8, 16),
      "Halving h about halves the error: a first-order method")

# %% [markdown]
# One block is the first row. Down the table $h$ halves from row to row, and so, roughly, does the
# error: from 8 to 16 steps it falls by a factor of {glue:text}`euler_halving`. An error proportional
# to $h$ is what makes the explicit Euler method *first order*: each step errs by $O(h^2)$, and the
# $\tau/h$ steps add up to $O(h)$.

# %% [markdown]
# ## Two Laplacians, two step sizes
#
# When is an explicit Euler step $X - h L X$ safe? Along an eigenvector of $L$ with eigenvalue
# $\lambda$ the step multiplies the component by $1 - h\lambda$, which stays in $(-1, 1]$ for every
# eigenvalue exactly when $h < 2/\lambda_{\max}(L)$: that is the stability limit. It depends on
# the spectrum, and the two chapters' Laplacians have very different ones. The unrolled-inference
# chapter used $L = D - W$ of a {glue:text}`elbo_k`-nearest-neighbour graph of {glue:text}`elbo_n` MNIST digits, whose eigenvalues
# grow with the degrees. The attention's $L = I - A$ is a random-walk Laplacian: it is similar to
# $I - D^{-1/2} W' D^{-1/2}$, so its eigenvalues are real and lie in $[0, 2]$. The figure shows
# both spectra with each chapter's step: $h = \eta$ for the ELBO step of the unrolled-inference
# chapter at its default $\eta = 1/\ell$, and $h = 2\eta$ for this chapter's block.

# %%
Y_elbo, _ = load_mnist(n=SETUP.n, stratified=True)  # the unrolled-inference chapter's digits, graph and beta
L_fixed = laplacian(knn_graph(Y_elbo.astype(np.float64), n_neighbors=SETUP.k))  # its D - W
lam_fixed = laplacian_eigenvalues(L_fixed)
lam_rw = laplacian_eigenvalues((I - A).numpy())  # this chapter's I - A on the toy
marks_elbo = step_sizes(L_fixed, SETUP.beta, n_components=SETUP.q)
eta_elbo = marks_elbo["safe"]  # that chapter's default eta = 1 / ell
fixed, rw = euler_limits(lam_fixed), euler_limits(lam_rw)
fig = spectra_figure(lam_fixed, lam_rw, h_fixed=eta_elbo, h_attention=2 * eta)
describe(fig, "The sorted eigenvalues of L = D − W and of L = I − A, each with the stability limit 2/h of its "
         "chapter's step as a dashed red line.")
plt.show()
print(f"D - W: lambda_max = {fixed['lambda_max']:.2f}, stable for h < {fixed['h_stable']:.4f}; "
      f"step h = eta = {eta_elbo:.4f}, h lambda_max = {eta_elbo * fixed['lambda_max']:.2f}")
print(f"I - A: eigenvalues in [{lam_rw.min():.2e}, {lam_rw.max():.4f}], stable for h < {rw['h_stable']:.4f}; "
      f"step h = 2 eta = {2 * eta:g}, h lambda_max = {2 * eta * rw['lambda_max']:.2f}")

# %% tags=["remove-cell"]
h_fixed, h_block = eta_elbo * fixed["lambda_max"], 2 * eta * rw["lambda_max"]
glue("eta_ratio", num(eta / eta_elbo, 0))
glue("h_stable_fixed", num(fixed["h_stable"], 4))
glue("eta_divergent_elbo", num(marks_elbo["divergent"], 4))
claim(bool(rw["lambda_max"] <= 2 + 1e-9), "the largest eigenvalue of I - A lies within the bound 2")
claim(bool(h_fixed < 2 and h_block < 2), "both steps lie inside the stability limit 2 as h lambda_max")
claim(bool(2 * eta <= 1), "the block's step, with h = 2 eta <= 1, is a convex combination")
claim(bool(marks_elbo["divergent"] > fixed["h_stable"]),
      "the ELBO step's threshold 2/(lambda_max - lambda_1) is larger than the pure diffusion limit 2/lambda_max")

# %% [markdown]
# The largest eigenvalue of $I - A$ lies within the bound 2 of every random-walk Laplacian, while
# that of $D - W$ is far larger. As numbers the two step sizes differ by a factor of
# {glue:text}`eta_ratio`, but as $h\lambda_{\max}$ (the printout) both lie inside the stability
# limit 2, and the block's step, with $h = 2\eta \le 1$, is a convex combination.
#
# The limit printed for $D - W$, $2/\lambda_{\max}$ = {glue:text}`h_stable_fixed`, is not the
# threshold of the unrolled-inference chapter, $2/(\lambda_{\max} - \lambda_1)$ =
# {glue:text}`eta_divergent_elbo`, although the graph is the same (the same {glue:text}`elbo_n` digits and
# {glue:text}`elbo_k`-nearest-neighbour graph). They are different quantities: the first is the limit of the
# diffusion step $X - hLX$ alone; the second is that of the full ELBO step, whose log-determinant
# term adds $\lambda_1$ back along the sharpest direction near the optimum and so moves the limit
# a little higher.

# %% [markdown]
# So the unrolled-inference chapter's thresholds carry over once both are written as $h\lambda_{\max}$.
# Here the diffusion step is $h = 2\eta$ on $I - A$, stable for
# $2\eta < 2/\lambda_{\max}(I - A)$; every random-walk Laplacian has $\lambda_{\max} \le 2$, so
# $h \le 1$, that is $\eta \le 1/2$, is sufficient whatever the graph. It is also the point where
# each step $(1 - h) X + h A X$ is a convex combination of a point and the weighted mean of its
# neighbours. For $h > 1$ the weight on $X$ turns negative and each point is pushed past that mean;
# the step need not blow up until $h$ reaches $2/\lambda_{\max}(I - A)$, but it no longer averages.
# This is why the paper keeps $\eta < 1/2$.
#
# ### Plain attention changes only the step size
#
# Take the diagonal weights of this chapter: the value weights are the identity and the output weights $2\eta I$, so
# the attention branch adds $2\eta A X$ (the weights are written out in "An ordinary transformer with diagonal
# weights" below). Write the plain block as $\Pi(X + 2\eta' A X)$. For $\eta < 1/2$,
#
# $$
# \Pi\big(X + 2\eta (A - I) X\big) = \Pi\big((1 - 2\eta) X + 2\eta A X\big)
# = \Pi\Big(X + \frac{2\eta}{1 - 2\eta} A X\Big),
# $$
#
# because $\Pi$ ignores a positive factor on a row. With the diagonal weights, then, an $A - I$ block
# is a plain attention block with step $\eta' = \eta/(1 - 2\eta)$. Conversely, a plain block with step
# $\eta'$ is a diffusion block with $\eta = \eta'/(1 + 2\eta')$. Both hold to round-off:

# %%
eta_plain = eta / (1 - 2 * eta)  # eta' = eta / (1 - 2 eta)
X_diffusion = block_step(X0, kappa, eta, beta, "diffusion")
X_plain = block_step(X0, kappa, eta_plain, beta, "attention")
gap_plain = float((X_diffusion - X_plain).abs().max())
print(f"diffusion with eta = {eta:g} vs plain attention with eta' = {eta_plain:g}: max |difference| = {gap_plain:.1e}")
eta_back = eta / (1 + 2 * eta)  # the other way: eta = eta' / (1 + 2 eta') for a plain step eta' = eta
gap_back = float((block_step(X0, kappa, eta, beta, "attention")
                  - block_step(X0, kappa, eta_back, beta, "diffusion")).abs().max())
print(f"plain attention with eta' = {eta:g} vs diffusion with eta = {eta_back:.3f}: max |difference| = {gap_back:.1e}")

# %% tags=["remove-cell"]
claim(max(gap_plain, gap_back) < 1e-12, "With the diagonal weights an A - I block is a plain attention block with step "
      "eta' = eta/(1 - 2 eta); conversely ... Both hold to round-off")

# %% [markdown]
# So with the diagonal weights, and at the same $\eta$, the plain block takes the gentler step. With
# other value and output weights, trained or drawn at random as at a standard initialisation, the two
# differ: the residual path becomes $X (I - W_V W_O) + A X W_V W_O$ rather than $X + A X W_V W_O$, a
# change [the chapter on trained transformers](trained_transformers.ipynb) measures.
#
# ## The feed-forward block stands in for the regulariser
#
# The log-determinant term pushes the latents apart; its gradient $2 C^{-1} X$ depends on all the
# points together. The paper replaces it by $2 X / (d_q + \beta)$, a linear map that a feed-forward
# layer with weight $\tfrac{2}{d_q + \beta} I$ computes (the ReLU is ignored). `regulariser_gradient`
# computes the exact term, using $C^{-1} X = X (X^\top X + \beta I)^{-1}$ so that only a
# $d_q \times d_q$ system is solved:

# %%
reg_exact = regulariser_gradient(X0, beta)  # 2 C^{-1} X, C = X X^T + beta I
reg_paper = 2 * X0 / (d_q + beta)  # the paper's approximation
cos_reg = float((reg_exact * reg_paper).sum() / (reg_exact.norm() * reg_paper.norm()))
ratio_reg = float(reg_exact.norm() / reg_paper.norm())
print(f"cosine between 2 C^-1 X and 2 X / (d_q + beta): {cos_reg:.3f}")
print(f"norm of the exact term / norm of the approximation: {ratio_reg:.3f}")

# %% tags=["remove-cell"]
claim(cos_reg < 0.9 and not 0.5 < ratio_reg < 2.0,
      "On this toy the approximation is poor in direction and in size")

# %% [markdown]
# On this toy the approximation is poor, in direction (the cosine printed above) and in size (the
# exact term is less than a fiftieth as long). Why may it stand in for $2C^{-1}X$ at all? After
# LayerNorm the diagonal of $X X^\top$ is exactly $d_q$, since every row has $\lVert x_i\rVert^2 = d_q$.
# If the rows were also orthogonal, which is possible only for $n \le d_q$ points, $X X^\top = d_q I$,
# so $C = (d_q + \beta) I$ and $2C^{-1}X = 2X/(d_q + \beta)$ exactly. The approximation keeps the
# diagonal of $X X^\top$ and drops the overlaps $x_i^\top x_j$ between the rows. The toy is the other
# extreme: 300 rows in a three-dimensional span, with large overlaps, so the exact term is much
# shorter.

# %% tags=["remove-cell"]
claim(bool(ratio_reg < 1 / 50), "the exact term is less than a fiftieth as long")

# %% [markdown]
# The approximation is parallel to $X$, so after $\Pi$ it does nothing but shift weight between $X$
# and $A X$: the `paper` and `diffusion` variants differ only by the coefficient
# $2\eta/(d_q + \beta)$ on $X$. [The objections chapter](objections.ipynb) measures the approximation on MNIST
# latents and across $n$.
#
# ## LayerNorm is a projection
#
# LayerNorm without its learned scale and shift (and without $\epsilon$) maps a row to
#
# $$
# \Pi(x) = \sqrt{d_q}\, \frac{x - \bar x \mathbf{1}_{d_q}}{\|x - \bar x \mathbf{1}_{d_q}\|},
# $$
#
# the nearest point to $x \in \mathbb{R}^{d_q}$ on $\{x : x^\top \mathbf{1}_{d_q} = 0,\ \|x\|^2 = d_q\}$
# ($\bar x$ is the mean of the $d_q$ features of the row). Centring is the orthogonal projection onto
# the plane $x^\top \mathbf{1}_{d_q} = 0$, and inside that plane the nearest
# point of a sphere lies along the ray through $x$. A block is thus *projected* gradient ascent. The
# check: `layer_norm` against `torch.nn.LayerNorm`, and $\Pi(x)$ against 20,000 random points of
# the constraint set, none of which may be closer to $x$.

# %%
gen = torch.Generator().manual_seed(0)
x = torch.randn(1, d_q, generator=gen, dtype=torch.float64) * 3 + 1
ln = torch.nn.LayerNorm(d_q, eps=0.0, elementwise_affine=False)
print(f"layer_norm vs torch.nn.LayerNorm: max |difference| = {(layer_norm(x) - ln(x)).abs().max():.1e}")
candidates = layer_norm(torch.randn(20_000, d_q, generator=gen, dtype=torch.float64))  # points of the set
closest = (candidates - x).norm(dim=1).min()
print(f"distance from x to Pi(x): {(layer_norm(x) - x).norm():.4f}; "
      f"closest of 20,000 random points of the set: {closest:.4f}")

# %% tags=["remove-cell"]
claim(bool((layer_norm(x) - ln(x)).abs().max() < 1e-12 and closest >= (layer_norm(x) - x).norm()
           and len(candidates) == 20_000),
      "layer_norm against torch.nn.LayerNorm, and Pi(x) against 20,000 random points of the constraint set, none of "
      "which may be closer to x")

# %% [markdown]
# ## An ordinary transformer with diagonal weights
#
# The last step is to see the update inside a standard architecture. Take a single-head,
# post-LayerNorm block with attention and feed-forward in parallel, one block whose weights every
# layer shares, and set its weights to
#
# $$
# W_Q = W_K = a I,\ a^2 = \kappa/\sqrt{d_q}, \qquad W_V = I, \qquad W_O = 2\eta I, \qquad
# W_{\mathrm{ff}} = \tfrac{2\eta}{d_q + \beta} I,
# $$
#
# with the additive attention mask $-\beta I + M$. The usual scaling by $1/\sqrt{d_q}$ then gives
# logits $(X W_Q)(X W_K)^\top/\sqrt{d_q} = \tfrac{\kappa}{d_q} X X^\top$, the attention output
# is $2\eta A X$, and for the $A - I$ variants the value is subtracted before the output
# projection ($y = A V - V$). `DiagonalTransformer` builds this from `nn.Linear`,
# `scaled_dot_product_attention` and `nn.LayerNorm`, with one block shared by {glue:text}`toy_depth` layers:

# %%
torch.set_default_dtype(torch.float64)  # compute the diagonal weights in float64 (not float32, then converted)
nets = {v: DiagonalTransformer(d_q=d_q, n_layers=depth, kappa=kappa, eta=eta, beta=beta, variant=v)
        for v in ("attention", "diffusion", "paper")}
torch.set_default_dtype(torch.float32)
print(nets["paper"])

# %%
forward_gaps = {}
with torch.no_grad():
    for variant, net in nets.items():
        forward_gaps[variant] = float((net(X0) - unroll(X0, depth, kappa, eta, beta, variant)[-1]).abs().max())
        print(f"{variant:>10}: transformer forward vs {depth} unrolled steps, "
              f"max |difference| = {forward_gaps[variant]:.1e}")

# %% tags=["remove-cell"]
claim(max(forward_gaps.values()) < 1e-12, "The two agree to rounding error.")

# %% [markdown]
# The two agree to rounding error. (Built in float32 and converted with `.double()`, the weights
# would keep their float32 rounding and the agreement would stop at about $10^{-8}$.)
#
# Why post-LayerNorm? The reading is *projected* gradient ascent: take the step, then project back
# onto the sphere, $X \leftarrow \Pi(X + \eta \Delta)$. A post-LN block does exactly that, since its
# LayerNorm acts on the residual sum. Most trained transformers, GPT-2 and the models of
# [the chapter on trained transformers](trained_transformers.ipynb) among them, are pre-LN:
# $X \leftarrow X + f(\Pi(X))$. There LayerNorm only normalises what attention *reads*; the residual
# stream itself is never projected, so the states leave the sphere and the step is no longer a
# projected gradient step on anything this chapter derives. That is why the reading is checked here,
# on untrained post-LN blocks, while the trained-transformers chapter tests $A - I$ only as a change
# to the attention operator of ordinary pre-LN models, not the reading itself.
#
# The diagonal weights are what make the logits measure similarity. With the common random
# initialisation $W_Q, W_K \sim \mathcal{N}(0, 0.02^2)$ the logits are a random bilinear form
# $x_i^\top W_Q W_K^\top x_j / \sqrt{d_q}$ of the latents instead of their cosines:

# %%
W_Q = 0.02 * torch.randn(d_q, d_q, generator=gen, dtype=torch.float64)
W_K = 0.02 * torch.randn(d_q, d_q, generator=gen, dtype=torch.float64)
iu = np.triu_indices(n, 1)
pair_cosines = (X0 @ X0.T / d_q).numpy()[iu]
logits_random = ((X0 @ W_Q) @ (X0 @ W_K).T / math.sqrt(d_q)).numpy()[iu]
a = math.sqrt(kappa / math.sqrt(d_q))  # W_Q = W_K = a I
logits_diagonal = ((a * X0) @ (a * X0).T / math.sqrt(d_q)).numpy()[iu]
r_diagonal = np.corrcoef(logits_diagonal, pair_cosines)[0, 1]
r_random = np.corrcoef(logits_random, pair_cosines)[0, 1]
print(f"correlation of the logits with the cosines: diagonal weights {r_diagonal:.3f}, "
      f"random N(0, 0.02^2) weights {r_random:+.3f}")

# %% tags=["remove-cell"]
claim(bool(r_diagonal > 0.9995), "With diagonal weights the logits are the scaled cosines")
claim(bool(abs(r_random) < 0.3), "with random weights the attention pattern says little about which points are similar")

# %% [markdown]
# With diagonal weights the logits *are* the scaled cosines (a correlation of 1 to the three
# decimals printed); with random weights the correlation is weak, so the attention pattern says
# little about which points are similar. The chain from the ELBO to the block holds only at this
# special initialisation.

# %% [markdown]
# ## The variants side by side

# %% tags=["hide-cell"]
effect = toy_beta_range(toy)  # beta's whole range at the default kappa and at the narrowest kernel
beta_text = toy_beta_text(effect)
for key, value in beta_text.items():
    glue(f"bt_{key}", value)
rows_ = effect["rows"]
beads = {v: bead_facts(toy, path[-1]) for v, path in toy_paths(toy, depth, kappa, eta, beta).items()}
claim(all(b["groups"] <= b["n"] / 5 and min(b["per_class"]) >= 3 and b["shared"] >= 0.9 and b["pure"] >= 0.95
          for b in beads.values()),
      "At these values the points gather into beads along each moon")
claim(bool(effect["weak"]), "Over the whole range of beta the picture barely changes (under 10 % at each kappa)")
claim(all(r["self"][1] < r["self"][0] for r in rows_), "beta lowers the weight a point gives itself")
claim(abs(rows_[1]["moved_1"][1] / rows_[1]["moved_1"][0] - 1) > 0.1,
      "That changes the length of the first steps")

# %% [markdown]
# Now move the toy. Each panel shows the moons (grey) and where the blocks have taken them
# (coloured by class), for one variant. The sliders set $\kappa$, $\eta$, $\beta$ and the number
# of blocks; they start at $\kappa$ = {glue:text}`toy_kappa`, $\eta$ = {glue:text}`toy_eta`,
# $\beta$ = {glue:text}`toy_beta` and {glue:text}`toy_depth` blocks. At these values the points
# gather into beads along each moon: each point moves towards the weighted mean of its neighbours,
# and a bead is a group of points that have become each other's only neighbours. Things to try: a
# small $\kappa$ (a wide kernel) pulls the whole data set towards one point; a large $\kappa$
# shrinks every neighbourhood, so the beads become smaller and more numerous and the points move
# less (in the limit, exercise 2, nothing moves); $\eta$ above $1/2$ overshoots.
#
# Over the whole range of $\beta$ ({glue:text}`bt_beta_lo` to {glue:text}`bt_beta_hi`) the picture
# barely changes: the mean distance the points move in {glue:text}`bt_depth` blocks goes from
# {glue:text}`bt_moved_lo_at` to {glue:text}`bt_moved_hi_at` ({glue:text}`bt_change_at` %) at $\kappa$
# = {glue:text}`bt_kappa_at` and from {glue:text}`bt_moved_lo_narrow` to
# {glue:text}`bt_moved_hi_narrow` ({glue:text}`bt_change_narrow` %) at $\kappa$ =
# {glue:text}`bt_kappa_narrow`. $\beta$ lowers the logit of a point for itself, which takes the weight
# a point gives itself in the first block from {glue:text}`bt_self_lo_at` % to
# {glue:text}`bt_self_hi_at` % at $\kappa$ = {glue:text}`bt_kappa_at` and from
# {glue:text}`bt_self_lo_narrow` % to {glue:text}`bt_self_hi_narrow` % at $\kappa$ =
# {glue:text}`bt_kappa_narrow`. That changes the length of the first steps (one block at $\kappa$ =
# {glue:text}`bt_kappa_narrow` moves the points {glue:text}`bt_first_lo_narrow` at $\beta$ =
# {glue:text}`bt_beta_lo` and {glue:text}`bt_first_hi_narrow` at $\beta$ = {glue:text}`bt_beta_hi`),
# not where the blocks take the points. In the paper's block $\beta$ also sets the weight $2/(d_q +
# \beta)$ of the feed-forward term, from {glue:text}`bt_ff_lo` to {glue:text}`bt_ff_hi` at $d_q$ =
# {glue:text}`bt_d_q`.

# %% tags=["remove-output"]
panel = variant_panel(toy)
describe(panel.fig, f"One panel per variant ({len(CHAPTER_VARIANTS)} variants): the toy in grey and where the "
         "blocks move it, coloured by moon.")
panel.show()

# %% [markdown] tags=["site-only"]
# Without a kernel, the figure below runs the same blocks in your browser, one variant at a time,
# with every parameter and the causal mask of the next section.

# %% tags=["hide-input"]
toy_live(toy, effect=effect, text={
    "caption": "Computed in your browser: the same blocks as `probdr_lite.unrolled`, on the {n} points of the toy. "
               "Grey: the toy; coloured by moon: after the chosen number of blocks; the frame has the variant's "
               "colour of the other figures.",
    "beta": (
        "Over the whole range of $\\beta$ ({beta_lo} to {beta_hi}) the picture barely changes: the mean "
        "distance the points move in {depth} blocks goes from {moved_lo_at} to {moved_hi_at} "
        "({change_at} %) at $\\kappa$ = {kappa_at} and from {moved_lo_narrow} to {moved_hi_narrow} "
        "({change_narrow} %) at $\\kappa$ = {kappa_narrow}. $\\beta$ lowers the logit of a point for "
        "itself, which takes the weight a point gives itself in the first block from {self_lo_at} % to "
        "{self_hi_at} % at $\\kappa$ = {kappa_at} and from {self_lo_narrow} % to {self_hi_narrow} % at "
        "$\\kappa$ = {kappa_narrow}. That changes the length of the first steps (one block at $\\kappa$ = "
        "{kappa_narrow} moves the points {first_lo_narrow} at $\\beta$ = {beta_lo} and {first_hi_narrow} "
        "at $\\beta$ = {beta_hi}), not where the blocks take the points. In the paper's block $\\beta$ also"
        " sets the weight $2/(d_q + \\beta)$ of the feed-forward term, from {ff_lo} to {ff_hi} at $d_q$ = "
        "{d_q}."
    ),
    "spot": "All the points have gathered at one spot: the blocks have pulled every point to the same place",
    "empty": "Every point has been pushed past the equator: none can be drawn",
    "alt": "The toy (grey) and where {depth} blocks of the {variant} variant move it (κ {kappa}, η {eta}, β {beta}, "
           "causal mask {mask}); {=lost} points past the equator",
})

# %% [markdown]
# ## The causal mask
#
# A language model may not look ahead: token $i$ attends only to tokens $j \le i$. The mask $M$
# does this by adding $-\infty$ to every logit above the diagonal, so $A$ becomes lower-triangular.
# The graph turns into a directed one. Point 1 can attend only to itself ($A_{11} = 1$), so
# $(A - I)x_1 = 0$ and it never moves. Every later point is pulled only towards points that come
# before it in the ordering. Here the moons are ordered by class and then from left to right: with
# the mask, the upper moon flows towards its left tip, and the lower moon is drawn towards the
# upper moon, which comes first in the ordering.

# %%
A_causal = attention_matrix(X0, kappa, beta, mask="causal")
upper_full = float(torch.triu(A, 1).sum() / n)
asym_full = float((A - A.T).norm() / A.norm())
asym_causal = float((A_causal - A_causal.T).norm() / A_causal.norm())
diffusion_part_causal = tangent(update_direction(X0, kappa, beta, "diffusion", mask="causal"), X0)
exact_part_causal = tangent(update_direction(X0, kappa, beta, "exact", mask="causal"), X0)
cos_causal = float((diffusion_part_causal * exact_part_causal).sum()
                   / (diffusion_part_causal.norm() * exact_part_causal.norm()))
print(f"share of attention above the diagonal: no mask {upper_full:.3f}, causal {float(torch.triu(A_causal, 1).sum()):.1f}")
print(f"asymmetry |A - A^T| / |A|: no mask {asym_full:.3f}, causal {asym_causal:.3f}")
print(f"cosine of the diffusion and exact directions (tangent parts): no mask {cosines['diffusion']:.3f}, "
      f"causal {cos_causal:.3f}")
masked = dict(n_steps=depth, variant="diffusion")
fig = mask_figure(toy, **masked)
describe(fig, f"The attention matrix A of the toy without and with the causal mask on a log colour scale, and "
         f"where {masked['n_steps']} blocks of the {masked['variant']} variant move the toy in each case.")
plt.show()

# %% tags=["remove-cell"]
upper_causal = float(torch.triu(A_causal, 1).sum())
glue("upper_share", pct(upper_full, 0))
claim(0.4 < upper_full < 0.6 and upper_causal == 0.0,
      "Without the mask about half of the attention goes to later points; with it, none does")
claim(asym_causal > 3 * asym_full and cos_causal < cosines["diffusion"] - 0.2,
      "The mask makes A far more asymmetric, and the cosine between the paper's direction and the exact gradient "
      "drops well below its value without the mask")

# %% [markdown]
# Without the mask about {glue:text}`upper_share` of the attention goes to later points; with it,
# none does. The mask makes $A$ far more asymmetric, and the asymmetry is why $2LX$ differs from
# $(L + L^\top)X$: the cosine between the paper's direction and the exact gradient drops well below
# its value without the mask (the last line of the printout). The simplification $2LX$ is furthest
# from the true gradient for the causal models it is mostly applied to.
# [The objections chapter](objections.ipynb) measures the gap along the MNIST steps.

# %% [markdown]
#
# ## Exercises
#
# **1.** [Plain attention changes only the step size](transformer_block.ipynb#plain-attention-changes-only-the-step-size) needs
# $\eta < 1/2$. What does the diffusion block do at $\eta = 1/2$, and at $\eta = 0.8$?
#
# :::{dropdown} Solution
# The diffusion block's sum is $(1 - 2\eta)X + 2\eta A X$. At $\eta = 1/2$ the $X$ term
# vanishes and the block is $\Pi(A X)$: each point jumps to the weighted mean of its neighbours.
# At $\eta = 0.8$ the update is $\Pi(-0.6 X + 1.6 A X)$: each point is pushed *past* that mean,
# away from where it was. This is the Euler step with $h = 1.6 > 1$, no longer a convex
# combination. The hidden cell checks the limit $\eta = 1/2$, and the identity at two more step sizes.
# :::

# %% tags=["hide-cell"]
for e in (0.1, 0.25):
    gap = (block_step(X0, kappa, e, beta, "diffusion") - block_step(X0, kappa, e / (1 - 2 * e), beta, "attention"))
    print(f"eta = {e}: diffusion vs attention at eta' = {e / (1 - 2 * e):g}, max |difference| {gap.abs().max():.1e}")
half = block_step(X0, kappa, 0.5, beta, "diffusion") - layer_norm(A @ X0)
print(f"eta = 1/2: diffusion block vs Pi(A X), max |difference| {half.abs().max():.1e}")

# %% [markdown]
# **2.** Take $\beta > 0$ and distinct points. What does $A$ tend to as $\kappa \to 0$, and as
# $\kappa \to \infty$? What does a block do in each limit?
#
# :::{dropdown} Solution
# As $\kappa \to 0$ the logits are $-\beta$ on the diagonal and 0 elsewhere, so every row tends to
# $(\mathbf{1}_n - (1 - e^{-\beta}) e_i)^\top / (n - 1 + e^{-\beta})$: nearly uniform. Every point is
# pulled towards the same global mean, and repeated blocks shrink the picture towards one point.
# As $\kappa \to \infty$ the self-logit $\kappa - \beta$ beats the nearest neighbour's
# $\kappa \cos(\hat x_i, \hat x_j)$ as soon as $\kappa (1 - \cos) > \beta$, so $A \to I$ and
# $(A - I)X \to 0$: nothing moves. The interesting regime lies between, where a point's
# neighbourhood holds a few others. The hidden cell measures both limits on the toy.
# :::

# %% tags=["hide-cell"]
e_beta = math.exp(-beta)
row0 = (torch.ones(n, dtype=X0.dtype) - (1 - e_beta) * torch.eye(n, dtype=X0.dtype)) / (n - 1 + e_beta)
print(f"kappa = 1e-6: max |A - uniform rows| = {(attention_matrix(X0, 1e-6, beta) - row0).abs().max():.1e}")
gap = 1 - (X0 @ X0.T / d_q - 2 * I).max(1).values  # 1 - cos to each point's nearest other point
print(f"kappa at which kappa (1 - cos) = beta for the closest pair: {beta / gap.min():.3g} "
      f"(median over points {beta / gap.median():.3g})")
for k in (1e2, 1e4):
    share = (attention_matrix(X0, k, beta).diagonal() > 0.99).double().mean()
    print(f"kappa = {k:g}: share of points with A_ii > 0.99: {share:.2f}")

# %% [markdown]
# **3.** Under the causal mask, point 1 never moves in the `diffusion` variant. Does it move in the
# `exact` variant? Check your answer with `unroll(X0, depth, kappa, eta, beta, "exact", mask="causal")`.
#
# :::{dropdown} Solution
# It does. The exact direction is $2C^{-1}X - (L + L^\top)X = 2C^{-1}X - 2X + AX + A^\top X$. Row 1
# of $AX - X$ is zero, but row 1 of $A^\top X$ is $\sum_j A_{j1} x_j$: every later point that
# attends to point 1 pulls it in turn, and the regulariser $2C^{-1}X$ moves it too. The transpose
# sends information backwards in the sequence, which a causal model forbids. So the exact gradient
# of the ELBO is not a causal operation, another reason the paper's $2LX$ is a choice rather than
# a derivation. The hidden cell measures how far point 1 moves in each variant.
# :::

# %% tags=["hide-cell"]
for v in ("diffusion", "exact"):
    run = unroll(X0, depth, kappa, eta, beta, v, mask="causal")
    print(f"{v:>9}: point 1 moves by {(run[-1][0] - run[0][0]).norm():.3e} over {depth} causal blocks")
