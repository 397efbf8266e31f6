# %% tags=["colab", "remove-cell"]
# Colab only: install this book's helper package when it is missing.
# Anywhere else (the book build, Binder, a local checkout) this cell does nothing.
import importlib.util, sys
if "google.colab" in sys.modules and importlib.util.find_spec("probdr_lite") is None:
    # %pip install --quiet "probdr-lite @ git+https://github.com/probdr-lite/probdr-lite@main"

# %% [markdown]
# # The transformer block
#
# Chapter 3 climbed the ELBO by gradient ascent with the graph held fixed, and noticed that a stack
# of identical steps is a network of identical layers. This chapter makes the network a
# transformer. The argument of {cite:t}`ravuri2025transformers` needs four moves: build the graph
# from the latents themselves with a heat kernel, hold it fixed for one step, simplify the
# regulariser, and project back with LayerNorm. Each move is checked here with numbers, and each
# simplification is kept as a *variant* of the block so that later chapters can test whether it
# matters.
#
# **In this chapter you will learn**
#
# - how the gradient step on $F(X) = \log\det(X X^\top + \beta I) - \operatorname{tr}(X^\top L X)$
#   becomes the residual update $X \leftarrow \Pi\big(X + 2\eta(A - I)X + \tfrac{2\eta}{d_q + \beta} X\big)$;
# - why softmax attention with sharpness $\kappa$ *is* the random-walk matrix $D^{-1}W$ of a
#   heat-kernel graph with bandwidth $2/\kappa$ (checked against chapter 1's graph code);
# - why $A - I$ is one explicit Euler step of graph diffusion, and why plain attention $A$ differs
#   from it at initialisation only by the size of the step;
# - LayerNorm as the projection $\Pi$ onto $\{x : \mathbf{1}^\top x = 0,\ \|x\|^2 = d_q\}$;
# - how to set the weights of an ordinary PyTorch transformer so that its forward pass equals the
#   unrolled update, and what the five variants and the causal mask do to a toy data set.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from probdr_lite.figures.block import (
    make_toy,
    mask_figure,
    variant_panel,
)
from probdr_lite.figures.live.chapters import toy_live
from probdr_lite.graphs import heat_kernel_attention
from probdr_lite.unrolled import (
    CHAPTER_VARIANTS,
    DiagonalTransformer,
    attention_matrix,
    block_step,
    euler_diffusion_errors,
    layer_norm,
    regulariser_gradient,
    unroll,
    update_direction,
)

torch.set_num_threads(1)  # a few hundred points: one thread beats two that wait for each other

# %% [markdown]
# ## A toy that a block can move
#
# A block acts on latents whose rows lie on a sphere: LayerNorm centres every row and scales it to
# squared norm $d_q$. To watch a block at work, the chapter lifts the two-moons data set
# (300 points in the plane, two classes) onto that sphere in $d_q = 16$ dimensions. A point
# $y \in \mathbb{R}^2$ becomes the unit vector $u = (y, c)/\|(y, c)\|$ in $\mathbb{R}^3$, and then
# $x = \sqrt{d_q}\, u Q$, where the three rows of $Q$ are orthonormal and orthogonal to the
# all-ones vector. Each update below combines rows of $X$, and LayerNorm only centres and rescales,
# so the latents never leave the three-dimensional span of $Q$. The moved latents can therefore be
# mapped back to the plane exactly, and at layer 0 that map returns the moons themselves.

# %%
toy = make_toy("moons", n=300, noise=0.07, d_q=16)
X0 = toy.X0  # (n, d_q), float64
n, d_q = X0.shape
print(f"n = {n} points, d_q = {d_q}")
print(f"row sums (1^T x): max |.| = {X0.sum(1).abs().max():.1e}; "
      f"squared norms: {X0.pow(2).sum(1).min():.6f} to {X0.pow(2).sum(1).max():.6f} (d_q = {d_q})")
print(f"mapped back to the plane, largest distance to the data: {np.abs(toy.unlift(X0) - toy.Y).max():.1e}")

# %% [markdown]
# ## From the gradient step to a residual update
#
# Chapter 3 maximised
#
# $$
# F(X) = \log\det C - \operatorname{tr}(X^\top L X), \qquad C = X X^\top + \beta I,
# $$
#
# whose gradient for a fixed $L$ is
#
# $$
# \nabla F(X) = 2 C^{-1} X - (L + L^\top) X .
# $$
#
# The paper turns the step $X + \eta \nabla F$ into a transformer block with four moves
# {cite:p}`ravuri2025transformers`:
#
# 1. **The graph comes from the latents.** $L = I - A$ with $A = \sigma(S)$ the row-wise softmax of
#    the logits $S = \tfrac{\kappa}{d_q} X X^\top - \beta I + M$. The mask $M$ is 0 for full
#    attention. $A$ is held fixed during the step (a stop-gradient), as $L$ was in chapter 3.
# 2. **The data term is written $2 L X$.** That is the gradient of the trace term only when $L$ is
#    symmetric. A softmax is not symmetric, so this is a simplification: the variant `"exact"` keeps
#    $(L + L^\top) X$.
# 3. **The regulariser $2 C^{-1} X$ is replaced by $2X/(d_q + \beta)$**, a fixed linear map of
#    $X$ that plays the role of the feed-forward block.
# 4. **LayerNorm $\Pi$ projects the result back** onto the sphere the latents started on.
#
# Together, with $-2LX = 2(A - I)X$:
#
# $$
# X \leftarrow \Pi\Big(X + \eta\, D\Big), \qquad
# D = 2 (A - I) X + \frac{2}{d_q + \beta} X .
# $$
#
# `update_direction` returns $D$ for each variant. Here it is next to the same formula typed out
# with the dense matrix $A$:

# %%
kappa, eta, beta = 100.0, 0.4, 1.0
A = attention_matrix(X0, kappa, beta)  # A = softmax((kappa / d_q) X X^T - beta I), rows sum to 1
I = torch.eye(n, dtype=X0.dtype)
L = I - A
D_formula = 2 * (A - I) @ X0 + 2 / (d_q + beta) * X0
D_package = update_direction(X0, kappa, beta, "paper")
print(f"rows of A sum to 1: max |A 1 - 1| = {(A.sum(1) - 1).abs().max():.1e}")
print(f"'paper' direction, package vs formula: max |difference| = {(D_package - D_formula).abs().max():.1e}")
X1 = block_step(X0, kappa, eta, beta, "paper")
print(f"one block, Pi(X + eta D) vs block_step: max |difference| = {(layer_norm(X0 + eta * D_formula) - X1).abs().max():.1e}")

# %% [markdown]
# The variants that the rest of the book compares differ only in $D$ (with $L = I - A$ and
# $C = X X^\top + \beta I$):
#
# | variant | direction $D$ | what it is |
# | --- | --- | --- |
# | `attention` | $2 A X$ | a standard attention block at the diagonal initialisation |
# | `diffusion` | $2 (A - I) X = -2 L X$ | the paper's $A - I$ without the feed-forward term |
# | `paper` | $2 (A - I) X + \tfrac{2}{d_q + \beta} X$ | the paper's block |
# | `exact` | $2 C^{-1} X - (L + L^\top) X$ | the true gradient of $F$ with $A$ held fixed |
# | `symmetric` | $2 (D^{-1/2} W D^{-1/2} - I) X$ | diffusion on the symmetrically normalised graph, $W = e^{S}$ |
#
# How far apart are the simplified directions and the exact one? To first order in $\eta$, $\Pi$
# removes from each row $D_i$ its component along $x_i$ (every $D$ here is already centred), so a
# multiple of $X$ added to $D$ changes nothing but the step size. The fair comparison is between the
# parts of the directions tangent to the sphere, $D_i - (D_i^\top x_i / d_q)\, x_i$:

# %%
def tangent(D, X):
    """The part of each row D_i orthogonal to x_i: what Pi keeps of the step, to first order in eta."""
    return D - (D * X).sum(1, keepdim=True) / X.shape[1] * X


T_exact = tangent(update_direction(X0, kappa, beta, "exact"), X0)
cosines = {}
for variant in CHAPTER_VARIANTS:
    T = tangent(update_direction(X0, kappa, beta, variant), X0)
    cosines[variant] = float((T * T_exact).sum() / (T.norm() * T_exact.norm()))
    print(f"{variant:>10}: cosine with the exact direction (tangent parts) {cosines[variant]:+.3f}")

# %% tags=["remove-input"]
c_A, c_sym = cosines["diffusion"], cosines["symmetric"]
same = max(abs(cosines[v] - c_A) for v in ("attention", "paper")) < 1e-9
display(Markdown(
    ("`attention`, `diffusion` and `paper` share one tangent direction, since their D differ by multiples "
     "of X: to first order they differ only in the length of the step. " if same else "")
    + f"That direction has cosine {c_A:.3f} with the exact one; the `symmetric` variant has {c_sym:.3f}. "
    + ("Without a mask, on this toy, the simplifications hardly turn the step; they change how long it is."
       if c_A > 0.95 else "The simplifications turn the step noticeably.")
))

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
# $W_{ij} = e^{-\|\hat x_i - \hat x_j\|^2 / t}$ of chapter 1 with bandwidth $t = 2/\kappa$, plus a
# self-loop of weight $e^{-\beta}$: $W' = W + e^{-\beta} I$, $D = \operatorname{diag}(W' \mathbf{1})$.
# $\kappa$ is an inverse bandwidth, and $I - A$ is the random-walk Laplacian $L_{\mathrm{rw}}$.
# `heat_kernel_attention` builds $D^{-1}W'$ with chapter 1's `knn_graph` (every other point a
# neighbour), without any softmax:

# %%
A_graph = heat_kernel_attention(X0, kappa, beta)  # D^{-1} (W + e^{-beta} I), W_ij = exp(-kappa |x_i - x_j|^2 / 2)
print(f"softmax attention vs heat-kernel random walk: max |difference| = {np.abs(A.numpy() - A_graph).max():.1e}")
print(f"A is not symmetric: max |A - A^T| = {(A - A.T).abs().max():.3f}")

# %% [markdown]
# The last line matters for what follows: a random walk leaves a point in proportion to *that
# point's* neighbourhood, so $A_{ij} \ne A_{ji}$ whenever the two points have different degrees.
# That is why $2 L X$ and $(L + L^\top) X$ differ.
#
# ## $A - I$ is one Euler step of graph diffusion
#
# The data term alone, $X \leftarrow X + 2\eta (A - I) X = X - 2\eta L X$, is one explicit Euler
# step of size $h = 2\eta$ of the graph heat equation
#
# $$
# \frac{dX}{dt} = -L X, \qquad X(t) = e^{-tL} X(0),
# $$
#
# which smooths every coordinate over the graph: each point drifts towards the weighted mean of
# its neighbours, as in the Laplacian smoothing behind diffusion maps {cite:p}`coifman2006diffusion`.
# `euler_diffusion_errors` takes $k$ Euler steps of size $h = t/k$ with $A$ fixed and compares them
# with the exact solution $e^{-tL}X(0)$ from `scipy.linalg.expm`:

# %%
rows = euler_diffusion_errors(A.numpy(), X0.numpy(), t=2 * eta, n_steps=(1, 2, 4, 8, 16))
print(f"t = 2 eta = {2 * eta:g}")
print(" steps k     h = t/k    relative error")
for r in rows:
    print(f"{r['steps']:7d}  {r['h']:9.4f}    {r['relative_error']:.2e}")

# %% tags=["remove-input"]
halving = rows[-2]["relative_error"] / rows[-1]["relative_error"]
display(Markdown(
    f"One block is the first row. Halving h divides the error by about {halving:.1f} (last two rows), "
    + ("the mark of a first-order method." if 1.6 < halving < 2.4 else "not by the factor 2 of a first-order method.")
))

# %% [markdown]
# Explicit Euler is stable here only while $h \le 1$: the step is $(1 - h) X + h A X$, and for
# $h = 2\eta > 1$ the weight on $X$ turns negative and the points overshoot. This is why the paper
# keeps $\eta < 1/2$.
#
# **Plain attention changes only the step size.** Write the plain block as
# $\Pi(X + 2\eta' A X)$. For $\eta < 1/2$,
#
# $$
# \Pi\big(X + 2\eta (A - I) X\big) = \Pi\big((1 - 2\eta) X + 2\eta A X\big)
# = \Pi\Big(X + \frac{2\eta}{1 - 2\eta} A X\Big),
# $$
#
# because $\Pi$ ignores a positive factor on a row. With isotropic value and output weights, then,
# an $A - I$ block is a plain attention block with step $\eta' = \eta/(1 - 2\eta)$. Conversely, a
# plain block with step $\eta'$ is a diffusion block with $\eta = \eta'/(1 + 2\eta')$.

# %%
eta_plain = eta / (1 - 2 * eta)
X_diffusion = block_step(X0, kappa, eta, beta, "diffusion")
X_plain = block_step(X0, kappa, eta_plain, beta, "attention")
print(f"diffusion with eta = {eta:g} vs plain attention with eta' = {eta_plain:g}: "
      f"max |difference| = {(X_diffusion - X_plain).abs().max():.1e}")
print(f"plain attention with eta' = {eta:g} is diffusion with eta = {eta / (1 + 2 * eta):.3f}")

# %% [markdown]
# So at initialisation, and at the same $\eta$, the plain block takes the gentler step. Once the
# value and output weights are trained they differ: the residual path becomes
# $X (I - W_V W_O) + A X W_V W_O$ rather than $X + A X W_V W_O$, a change the chapter on trained
# transformers measures.
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

# %% tags=["remove-input"]
display(Markdown(
    f"On this toy the two terms point in directions with cosine {cos_reg:.2f}, and the exact term is "
    f"{ratio_reg:.3g} times as long as the approximation"
    + (": here the approximation is poor in direction and in size." if cos_reg < 0.9 or not 0.5 < ratio_reg < 2
       else ": here the approximation is close.")
))

# %% [markdown]
# The approximation is parallel to $X$, so after $\Pi$ it does nothing but shift weight between $X$
# and $A X$: the `paper` and `diffusion` variants differ only by the coefficient
# $2\eta/(d_q + \beta)$ on $X$. The chapter on objections measures the approximation on MNIST
# latents and across $n$.
#
# ## LayerNorm is a projection
#
# LayerNorm without its learned scale and shift (and without $\epsilon$) maps a row to
#
# $$
# \Pi(x) = \sqrt{d_q}\, \frac{x - \bar x \mathbf{1}}{\|x - \bar x \mathbf{1}\|},
# $$
#
# the nearest point to $x$ on $\{x : \mathbf{1}^\top x = 0,\ \|x\|^2 = d_q\}$. Centring is the
# orthogonal projection onto the plane $\mathbf{1}^\top x = 0$, and inside that plane the nearest
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

# %% [markdown]
# ## An ordinary transformer with diagonal weights
#
# The last step is to see the update inside a standard architecture. Take a single-head,
# post-LayerNorm block with attention and feed-forward in parallel, and set its weights to
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
# `scaled_dot_product_attention` and `nn.LayerNorm`, with one block shared by 8 layers:

# %%
torch.set_default_dtype(torch.float64)  # compute the diagonal weights in float64 (not float32, then converted)
nets = {v: DiagonalTransformer(d_q=d_q, n_layers=8, kappa=kappa, eta=eta, beta=beta, variant=v)
        for v in ("attention", "diffusion", "paper")}
torch.set_default_dtype(torch.float32)
print(nets["paper"])

# %%
with torch.no_grad():
    for variant, net in nets.items():
        gap = (net(X0) - unroll(X0, 8, kappa, eta, beta, variant)[-1]).abs().max()
        print(f"{variant:>10}: transformer forward vs 8 unrolled steps, max |difference| = {gap:.1e}")

# %% [markdown]
# The two agree to rounding error. (Built in float32 and converted with `.double()`, the weights
# would keep their float32 rounding and the agreement would stop at about $10^{-8}$.)
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

# %% tags=["remove-input"]
display(Markdown(
    f"With diagonal weights the logits *are* the scaled cosines (correlation {r_diagonal:.2f}); with random "
    f"weights the correlation is {r_random:+.2f}, "
    + ("so the attention pattern says little about which points are similar. "
       if abs(r_random) < 0.3 else "a much weaker link than the diagonal weights give. ")
    + "The chain from the ELBO to the block holds only at this special initialisation."
))

# %% [markdown]
# ## The variants side by side
#
# Now move the toy. Each panel shows the moons (grey) and where the blocks have taken them
# (coloured by class), for one variant. The sliders set $\kappa$, $\eta$, $\beta$ and the number
# of blocks. At the default values the points gather into beads along each moon: each point moves
# towards the weighted mean of its neighbours, and a bead is a group of points that have become
# each other's only neighbours. Things to try: a small $\kappa$ (a wide kernel) pulls the whole
# data set towards one point; a large $\kappa$ shrinks every neighbourhood, so the beads become
# smaller and more numerous and the points move less (in the limit, exercise 2, nothing moves);
# $\eta$ above $1/2$ overshoots.

# %% tags=["remove-output"]
panel = variant_panel(toy)
panel.show()

# %% [markdown]
# Without a kernel, the figure below runs the same blocks in your browser, one variant at a time,
# with every parameter and the causal mask of the next section.

# %%
toy_live(toy)

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
T_diff = tangent(update_direction(X0, kappa, beta, "diffusion", mask="causal"), X0)
T_exact_causal = tangent(update_direction(X0, kappa, beta, "exact", mask="causal"), X0)
cos_causal = float((T_diff * T_exact_causal).sum() / (T_diff.norm() * T_exact_causal.norm()))
print(f"share of attention above the diagonal: no mask {upper_full:.3f}, causal {float(torch.triu(A_causal, 1).sum()):.1f}")
print(f"asymmetry |A - A^T| / |A|: no mask {asym_full:.3f}, causal {asym_causal:.3f}")
print(f"cosine of the diffusion and exact directions (tangent parts): no mask {c_A:.3f}, causal {cos_causal:.3f}")
fig = mask_figure(toy)
plt.show()

# %% tags=["remove-input"]
display(Markdown(
    f"Without the mask about {100 * upper_full:.0f} % of the attention goes to later points; with it, none "
    f"does. The asymmetry of A, which is why 2LX differs from (L + Lᵀ)X, "
    + (f"grows from {asym_full:.2f} to {asym_causal:.2f}, and the cosine between the paper's direction and "
       f"the exact gradient drops from {c_A:.2f} to {cos_causal:.2f}. The simplification 2LX is furthest from "
       "the true gradient for the causal models it is mostly applied to."
       if asym_causal > asym_full and cos_causal < c_A else
       f"is {asym_full:.2f} without the mask and {asym_causal:.2f} with it; the cosine between the paper's "
       f"direction and the exact gradient is {c_A:.2f} without and {cos_causal:.2f} with the mask.")
    + " The chapter on objections measures the gap along the MNIST steps."
))

# %% [markdown]
#
# ## Exercises
#
# **1.** Show that for $\eta < 1/2$ the diffusion block equals a plain attention block with step
# $\eta' = \eta/(1 - 2\eta)$. What does the diffusion block do at $\eta = 1/2$, and at $\eta = 0.8$?
#
# ```{admonition} Solution
# :class: dropdown
#
# $X + 2\eta(A - I)X = (1 - 2\eta)X + 2\eta A X = (1 - 2\eta)\big(X + \tfrac{2\eta}{1 - 2\eta} A X\big)$,
# and $\Pi$ ignores the positive factor $1 - 2\eta$ on every row. At $\eta = 1/2$ the $X$ term
# vanishes and the block is $\Pi(A X)$: each point jumps to the weighted mean of its neighbours.
# At $\eta = 0.8$ the update is $\Pi(-0.6 X + 1.6 A X)$: each point is pushed *past* that mean,
# away from where it was. This is the Euler step with $h = 1.6 > 1$, and the slider panel shows
# points leaving the picture.
# ```
#
# **2.** Take $\beta > 0$ and distinct points. What does $A$ tend to as $\kappa \to 0$, and as
# $\kappa \to \infty$? What does a block do in each limit?
#
# ```{admonition} Solution
# :class: dropdown
#
# As $\kappa \to 0$ the logits are $-\beta$ on the diagonal and 0 elsewhere, so every row tends to
# $(\mathbf{1} - (1 - e^{-\beta}) e_i)^\top / (n - 1 + e^{-\beta})$: nearly uniform. Every point is
# pulled towards the same global mean, and repeated blocks shrink the picture towards one point.
# As $\kappa \to \infty$ the self-logit $\kappa - \beta$ beats the nearest neighbour's
# $\kappa \cos(\hat x_i, \hat x_j)$ as soon as $\kappa (1 - \cos) > \beta$, so $A \to I$ and
# $(A - I)X \to 0$: nothing moves. The interesting regime lies between, where a point's
# neighbourhood holds a few others.
# ```
#
# **3.** Under the causal mask, point 1 never moves in the `diffusion` variant. Does it move in the
# `exact` variant? Check your answer with `unroll(X0, 8, kappa, eta, beta, "exact", mask="causal")`.
#
# ```{admonition} Solution
# :class: dropdown
#
# It does. The exact direction is $2C^{-1}X - (L + L^\top)X = 2C^{-1}X - 2X + AX + A^\top X$. Row 1
# of $AX - X$ is zero, but row 1 of $A^\top X$ is $\sum_j A_{j1} x_j$: every later point that
# attends to point 1 pulls it in turn, and the regulariser $2C^{-1}X$ moves it too. The transpose
# sends information backwards in the sequence, which a causal model forbids. So the exact gradient
# of the ELBO is not a causal operation, another reason the paper's $2LX$ is a choice rather than
# a derivation.
# ```
