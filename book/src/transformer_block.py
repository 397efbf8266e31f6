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
# [The unrolled-inference chapter](unrolled_inference.ipynb) climbed the ELBO of
# [the ELBO chapter](probdr_elbo.ipynb) by gradient ascent with the graph held fixed, and noticed
# that a stack of identical steps is a network of identical layers. This chapter follows
# {cite:t}`ravuri2025transformers` from one such step to a transformer block, checking each move with
# numbers.
#
# **What it finds.** With diagonal weights, a post-LayerNorm transformer block computes, to rounding
# error, the update the paper builds from the ELBO's gradient step: softmax attention is the random
# walk on a heat-kernel graph of the latents, $A - I$ is minus its Laplacian (one Euler step of
# diffusion on the graph), and LayerNorm projects the result back onto a sphere. In that sense a
# block is one step of Laplacian-Eigenmaps inference. It is not a gradient step on the ELBO: the graph
# is rebuilt in every block and held fixed, the data term is the gradient only for a symmetric graph,
# the log-determinant that keeps points apart becomes a term that only rescales the step, and
# LayerNorm's constraint is not the ELBO's. And plain attention is the same block with a shorter step.
#
# **In this chapter you will learn**
#
# - the four moves from the ELBO's gradient step to the block, and which are exact;
# - attention as a heat-kernel random walk, $A - I$ as graph diffusion, LayerNorm as a projection;
# - how to make an ordinary PyTorch transformer compute the update.

# %% tags=["hide-input"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from probdr_lite.chapters.objections import tangent_part as tangent  # what LayerNorm keeps of a step, row by row
from probdr_lite.chapters.probdr_elbo import SETUP
from probdr_lite.chapters.transformer_block import BUMP_KAPPAS, TOY_SETTINGS, bead_facts, toy_beta_range, toy_paths
from probdr_lite.data import load_mnist
from probdr_lite.diagonal_transformer import DiagonalTransformer
from probdr_lite.graphs import heat_kernel_attention, knn_graph, laplacian
from probdr_lite.presentation.figures.block import make_toy, mask_figure, toy_beta_text, variant_panel
from probdr_lite.presentation.figures.bridge import (bump_panel, bump_scrub, euler_limits, laplacian_eigenvalues,
                                                     spectra_figure)
from probdr_lite.presentation.live.builders import toy_live
from probdr_lite.presentation.plotting import Table
from probdr_lite.presentation.prose import claim, glue, num, pct, signed
from probdr_lite.presentation.style import describe
from probdr_lite.probdr import le_elbo, step_sizes
from probdr_lite.unrolled import (CHAPTER_VARIANTS, attention_matrix, attention_step, block_step,
                                  euler_diffusion_errors, layer_norm, regulariser_gradient, unroll, update_direction)

torch.set_num_threads(1)  # a few hundred points: one thread beats two that wait for each other

# %% tags=["remove-cell"]
glue("toy_kappa", f"{TOY_SETTINGS['kappa']['default']:g}")  # the toy's settings (the interactive figures' defaults)
glue("toy_eta", f"{TOY_SETTINGS['eta']['default']:g}")
glue("toy_beta", f"{TOY_SETTINGS['beta']['default']:g}")
glue("toy_depth", str(TOY_SETTINGS["depth"]["default"]))
glue("elbo_n", str(SETUP.n))  # the ELBO chapter's graph and beta, compared below
glue("elbo_k", str(SETUP.k))
glue("elbo_beta", f"{SETUP.beta:g}")

# %% [markdown]
# ## A toy that a block can move
#
# A block acts on latents $X \in \mathbb{R}^{n \times d_q}$: $n$ points (tokens), each a row $x_i$ of
# width $d_q$ (the $q$ of the earlier chapters). LayerNorm (without its learned scale and shift,
# [defined below](transformer_block.ipynb#layernorm-is-a-projection)) centres each row and scales it
# to squared norm $d_q$, so the rows lie on a sphere. The toy lifts the two-moons data set (300
# points in the plane, two classes, scaled to radius 1) onto that sphere in $d_q = 16$ dimensions. A
# point $y \in \mathbb{R}^2$ is set at height $c = 1$ and pushed out to the unit sphere of
# $\mathbb{R}^3$, $u = (y, c)/\lVert(y, c)\rVert$; then $x = \sqrt{d_q}\, u Q$, where the three rows
# of $Q$ are orthonormal and orthogonal to $\mathbf{1}_{d_q}$. The blocks only combine rows of $X$ and
# rescale them, so the latents stay in the span of $Q$ and map back to the plane exactly: $z = x
# Q^\top/\sqrt{d_q}$ returns to the unit sphere of $\mathbb{R}^3$ and $y = c\,(z_1, z_2)/z_3$ to the plane.
# Unless a section says otherwise, the toy's numbers use $\kappa$ = {glue:text}`toy_kappa`, $\eta$ =
# {glue:text}`toy_eta`, $\beta$ = {glue:text}`toy_beta` and {glue:text}`toy_depth` blocks, settings
# the next section defines.

# %%
kappa, eta, beta, depth = (TOY_SETTINGS[k]["default"] for k in ("kappa", "eta", "beta", "depth"))  # the toy's settings
toy = make_toy("moons", n=300, noise=0.07, d_q=16)
X0 = toy.X0  # (n, d_q), float64
n, d_q = X0.shape
print(f"{n} points in d_q = {d_q}; mapped back to the plane, largest distance to the moons "
      f"{np.abs(toy.unlift(X0) - toy.Y).max():.1e}")

# %% tags=["remove-cell"]
claim(n == 300 and d_q == 16 and len(np.unique(toy.labels)) == 2 and toy.offset == 1.0
      and float(np.linalg.norm(toy.Y, axis=1).max()) == 1.0
      and bool(X0.sum(1).abs().max() < 1e-12 and (X0.pow(2).sum(1) - d_q).abs().max() < 1e-12)
      and bool(np.abs(toy.unlift(X0) - toy.Y).max() < 1e-12),
      "the two-moons data set (300 points in the plane, two classes, scaled to radius 1) onto that sphere in d_q = 16 "
      "dimensions; at height c = 1; map back to the plane exactly")

# %% [markdown]
# ## From the gradient step to a residual update
#
# With the Wishart's degrees of freedom $\nu = 1$ (they only scale the objective) and a graph
# Laplacian $L$, [the ELBO](probdr_elbo.ipynb#the-model) {eq}`elbo` is
# $\tfrac12\left[\log\det C - \operatorname{tr}(C L)\right] + \text{const}$, with
# $C = X X^\top + \beta I$. Since $\operatorname{tr}(C L) = \operatorname{tr}(X^\top L X) + \beta
# \operatorname{tr} L$, the paper's objective is
#
# $$
# F(X) = \log\det C - \operatorname{tr}(X^\top L X) = 2\,\mathrm{ELBO}(X) + \beta \operatorname{tr} L + \text{const},
# $$
#
# and for a fixed $L$ its gradient is
#
# $$
# \nabla F(X) = 2 C^{-1} X - (L + L^\top) X .
# $$
#
# Since $F = 2\,\mathrm{ELBO} + \text{const}$, a step $X + \eta \nabla F$ is the step
# $X + 2\eta\, \nabla \mathrm{ELBO}$: this is where the factor 2 in the block's $2\eta$ below comes from.
#
# Which $L$? In [the ELBO chapter](probdr_elbo.ipynb) the variational distribution was a Wishart
# centred on the data's Laplacian $\hat L$. The paper centres it instead on a Laplacian of the
# latents, $\tilde L = I - \sigma(\kappa Z Z^\top - M)$, and calls this its *variational constraint*
# (a constraint on where the variational distribution sits): $\sigma$ is the row-wise softmax,
# $\kappa > 0$ a sharpness, $M$ a mask (in the paper's sign; the table below compares signs), and $Z$
# a copy of the latents taken before the step and held constant while $X$ moves (a *stop-gradient*).
# The step starts at $X = Z$, so below the logits are written with $X$. Choosing $\tilde L = I - A$
# is a definition, not a result: put into the gradient it returns the $A - I$ term at once
# ([the circularity point](objections.ipynb#the-circularity-point)). Four moves then make a
# transformer block:
#
# 1. **The graph comes from the latents.** $L = I - A$, with $A = \sigma(S)$ and logits
#    $S = \tfrac{\kappa}{d_q} X X^\top - \beta I + M$ ($1/d_q$ because LayerNorm's rows have squared
#    norm $d_q$, not 1). $M$ is 0 where a point may attend and $-\infty$ where it may not. The
#    $-\beta I$ is not derived ($\tilde L$ has no $\beta$); the paper adds it with the $\beta$ of $C$.
#    It lowers each *self-logit* $S_{ii}$, a point's logit for itself, by $\beta$.
# 2. **The data term $-(L + L^\top) X$ is written $-2 L X = 2 (A - I) X$**, which is the gradient of
#    $-\operatorname{tr}(X^\top L X)$ only for a symmetric $L$; a softmax is not symmetric.
# 3. **$2 C^{-1} X$ is replaced by $2X/(d_q + \beta)$**, a fixed linear map: a feed-forward layer
#    with its ReLU removed (the block below has none).
# 4. **LayerNorm $\Pi$ projects the result back** onto the sphere.
#
# The sources write the mask with different signs, each giving a masked entry the logit $-\infty$:
#
# | written by | logits | $M_{ij}$ where $i$ may attend to $j$ | where it may not |
# | --- | --- | --- | --- |
# | the paper | $\kappa X X^\top - \beta I - M$ | 0 | $+\infty$ (the paper says $-\infty$, which subtracted would unmask) |
# | this book | $\tfrac{\kappa}{d_q} X X^\top - \beta I + M$ | 0 | $-\infty$ |
# | PyTorch's `scaled_dot_product_attention` | queries times keys over $\sqrt{d_q}$, plus `attn_mask` $= -\beta I + M$ | 0 | $-\infty$ |
#
# With $\Delta$ for the step direction, the block is
#
# $$
# X \leftarrow \Pi\Big(X + \eta\, \Delta\Big), \qquad
# \Delta = 2 (A - I) X + \frac{2}{d_q + \beta} X .
# $$
#
# Why $\beta$ = {glue:text}`toy_beta` here and {glue:text}`elbo_beta` in
# [the ELBO chapter](probdr_elbo.ipynb)? There $\beta$ was chiefly a threshold (directions of $\hat L$
# with eigenvalue above $1/\beta$ are dropped), a role that goes with $2C^{-1}X$, which move 3 removes.
# The paper does not state its $\beta$;
# [the toy below](transformer_block.ipynb#the-variants-side-by-side) barely depends on it.
#
# The package's step direction and block against the formulas typed out with the dense matrix $A$:

# %%
A = attention_matrix(X0, kappa, beta)  # A = softmax((kappa / d_q) X X^T - beta I), rows sum to 1
I = torch.eye(n, dtype=X0.dtype)
L = I - A
Delta_formula = 2 * (A - I) @ X0 + 2 / (d_q + beta) * X0
Delta_package = update_direction(X0, kappa, beta, "paper")
X1 = block_step(X0, kappa, eta, beta, "paper")
checks = {"rows of A sum to 1": (A.sum(1) - 1).abs().max(),
          "the package's Δ against the formula": (Delta_package - Delta_formula).abs().max(),
          "the package's block against Π(X + ηΔ)": (layer_norm(X0 + eta * Delta_formula) - X1).abs().max()}
Table(["check", "largest difference"], [[name, f"{float(gap):.1e}"] for name, gap in checks.items()])

# %% tags=["remove-cell"]
claim(max(float(g) for g in checks.values()) < 1e-12,
      "The package's step direction and block against the formulas typed out with the dense matrix A")
F_value = float(torch.logdet(X0 @ X0.T + beta * I) - (X0 * (L @ X0)).sum())  # log det C - tr(X^T L X)
claim(abs(F_value - 2 * le_elbo(X0.numpy(), L.numpy(), beta) - beta * float(L.trace())) < 1e-9 * abs(F_value),
      "F(X) = log det C - tr(X^T L X) = 2 ELBO(X) + beta tr L + const")

# %% [markdown]
# ## LayerNorm is a projection
#
# LayerNorm without its learned scale and shift (and without $\epsilon$) maps a row
# $x \in \mathbb{R}^{d_q}$, with $\bar x$ the mean of its $d_q$ features, to
#
# $$
# \Pi(x) = \sqrt{d_q}\, \frac{x - \bar x \mathbf{1}_{d_q}}{\|x - \bar x \mathbf{1}_{d_q}\|} ,
# $$
#
# the nearest point to $x$ of the set
#
# $$
# \mathcal{S} = \{x \in \mathbb{R}^{d_q} : x^\top \mathbf{1}_{d_q} = 0,\ \|x\|^2 = d_q\},
# $$
#
# a sphere of radius $\sqrt{d_q}$ in the hyperplane of centred vectors: centring projects onto the
# hyperplane, and there the nearest point of the sphere lies on the ray through $x$. Applied to every
# row, $\Pi$ makes a block a step of *projected* gradient ascent. Two facts follow: $\Pi(a x) = \Pi(x)$
# for every $a > 0$; and LayerNorm constrains each *row*, whereas
# [the ELBO chapter](probdr_elbo.ipynb) centred each *column*, $X^\top \mathbf{1}_n = 0$: the block's
# constraint is not the ELBO's.
#
# What does $\Pi$ keep of a step? Write $P d = d - \bar d \mathbf{1}_{d_q}$ for the centred direction
# $d$. For $x \in \mathcal{S}$, $\|x + \epsilon P d\|^2 = d_q + 2\epsilon\, x^\top P d + O(\epsilon^2)$,
# so
#
# $$
# \Pi(x + \epsilon d) = x + \epsilon \Big(P d - \frac{x^\top P d}{d_q}\, x\Big) + O(\epsilon^2).
# $$
#
# The bracket is the *tangent part* of $d$, its projection onto the plane touching $\mathcal{S}$ at
# $x$. To first order only the tangent part of each row $\Delta_i$ moves $x_i$: adding a multiple of
# $X$ to $\Delta$ changes only the step's length, and two directions move the points alike when their
# tangent parts are parallel. The book compares directions this way.
#
# The check: the package's LayerNorm against PyTorch's, and $\Pi(x)$ against 20,000 random points of
# $\mathcal{S}$, none of which may be closer to $x$.

# %%
gen = torch.Generator().manual_seed(0)
x = torch.randn(1, d_q, generator=gen, dtype=torch.float64) * 3 + 1
ln = torch.nn.LayerNorm(d_q, eps=0.0, elementwise_affine=False)
candidates = layer_norm(torch.randn(20_000, d_q, generator=gen, dtype=torch.float64))  # points of the set
closest = (candidates - x).norm(dim=1).min()
Table(["check", "value"],
      [["the package's LayerNorm against PyTorch's: largest difference", f"{(layer_norm(x) - ln(x)).abs().max():.1e}"],
       ["distance from x to Π(x)", f"{(layer_norm(x) - x).norm():.4f}"],
       ["distance from x to the closest of 20,000 random points of the set", f"{closest:.4f}"]])

# %% tags=["remove-cell"]
claim(bool((layer_norm(x) - ln(x)).abs().max() < 1e-12 and closest >= (layer_norm(x) - x).norm()
           and len(candidates) == 20_000),
      "the package's layer_norm against torch.nn.LayerNorm, and "
      "Pi(x) against 20,000 random points of the constraint set, none of which may be closer to x")

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
# The factor $e^\kappa$ cancels when a row is normalised. So the softmax is the random-walk matrix
# $A = D^{-1} W'$ of the heat-kernel graph $W_{ij} = e^{-\|\hat x_i - \hat x_j\|^2 / t}$ of
# [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb), with bandwidth $t = 2/\kappa$ (measured on unit
# rows: $\kappa$ is an inverse bandwidth) and no self-loops ($W_{ii} = 0$), plus a self-loop of weight
# $e^{\kappa - \beta}/e^{\kappa} = e^{-\beta}$: $W' = W + e^{-\beta} I$, with degrees
# $D = \operatorname{diag}(W' \mathbf{1}_n)$. $I - A$ is the random-walk Laplacian $L_{\mathrm{rw}}$.
# Built with the graph code of that chapter, without any softmax, the two matrices agree:

# %%
# D^{-1} (W + e^{-beta} I) with W_ij = exp(-kappa |x_i - x_j|^2 / (2 d_q)) for i != j, W_ii = 0 (rows of norm^2 d_q)
A_graph = heat_kernel_attention(X0, kappa, beta)
print(f"softmax attention vs heat-kernel random walk: max |difference| = {np.abs(A.numpy() - A_graph).max():.1e}")

# %% tags=["remove-cell"]
claim(bool(np.abs(A.numpy() - A_graph).max() < 1e-12),
      "So the softmax is the random-walk matrix A = D^{-1} W' of the heat-kernel graph ... without any softmax")
claim(bool((A - A.T).abs().max() > 0.01), "A_ij != A_ji whenever the two points have different degrees")
glue("asym_max", num(float((A - A.T).abs().max()), 3))

# %% [markdown]
# $W'$ is symmetric, but each row of $A$ is divided by its own degree, $A_{ij} = W'_{ij}/d_i$ with
# $d_i = D_{ii}$, so $A_{ij} \ne A_{ji}$ whenever $d_i \ne d_j$ (on the toy the largest
# $|A_{ij} - A_{ji}|$ is {glue:text}`asym_max`). That is why $2 L X$ and $(L + L^\top) X$ differ.
#
# One row of $A$ is a bump centred on one point $x_\star$, drawn here over 1,500 points $p$ spread
# evenly on the unit sphere of $\mathbb{R}^3$, as a softmax (dots) and as a heat kernel with
# $t = 2/\kappa$ (line), which coincide. A small $\kappa$ spreads the row over the sphere, a large one
# shrinks it to a few neighbours; the title counts the *effective* number of neighbours,
# $1 / \sum_p A_{\star p}^2$.

# %% tags=["remove-output"]
bump_alt = ("One row of the attention on the unit sphere: each point's weight against its angle to the pole, "
            "softmax beside the heat kernel, and the sphere coloured by that weight.")
panel = bump_panel(kappa=kappa)
describe(panel.fig, bump_alt)
panel.show()

# %% tags=["remove-cell"]
glue("bump_first", f"{BUMP_KAPPAS[0]:,g}")
glue("bump_last", f"{BUMP_KAPPAS[-1]:,g}")
claim(len(BUMP_KAPPAS) == 8, "The same figure for eight values of kappa")

# %% [markdown]
# The same figure for eight values of $\kappa$ from {glue:text}`bump_first` to
# {glue:text}`bump_last`:

# %%
bump_scrub(alt=bump_alt)

# %% [markdown]
#
# ## $A - I$ is one Euler step of graph diffusion
#
# The data term alone, $X \leftarrow X + 2\eta (A - I) X = X - 2\eta L X$, is one explicit Euler
# step of size $h = 2\eta$ of the graph heat equation in the time $\tau$,
#
# $$
# \frac{dX}{d\tau} = -L X, \qquad X(\tau) = e^{-\tau L} X(0),
# $$
#
# which pulls each point towards the weighted mean of its neighbours, the Laplacian smoothing
# behind diffusion maps {cite:p}`coifman2006diffusion`. The table compares $k$ Euler steps of size
# $h = \tau/k$, with $\tau = 2\eta$ and $A$ fixed, ending at $X_k$, with the exact solution by the
# relative error $\lVert X_k - X(\tau)\rVert_F / \lVert X(\tau)\rVert_F$:

# %%
rows = euler_diffusion_errors(A.numpy(), X0.numpy(), tau=2 * eta, n_steps=(1, 2, 4, 8, 16))
Table(["Euler steps k", "step h = τ/k", "relative error"],
      [[str(r["steps"]), f"{r['h']:.4f}", f"{r['relative_error']:.2e}"] for r in rows])

# %% tags=["remove-cell"]
halving = rows[-2]["relative_error"] / rows[-1]["relative_error"]
glue("euler_halving", num(halving, 1))
claim(bool(1.6 < halving < 2.4) and (rows[-2]["steps"], rows[-1]["steps"]) == (8, 16),
      "Halving h about halves the error: a first-order method")

# %% [markdown]
# One block is the first row. Halving $h$ about halves the error (from 8 to 16 steps it falls by a
# factor of {glue:text}`euler_halving`): the explicit Euler method is *first order*.

# %% [markdown]
# ## Two Laplacians, two step sizes
#
# When is an Euler step $X - h L X$ safe? Along an eigenvector of $L$ with eigenvalue $\lambda$ it
# multiplies the component by $1 - h\lambda$, which stays in $(-1, 1]$ for every eigenvalue exactly
# when $h < 2/\lambda_{\max}(L)$: the stability limit. The unrolled-inference chapter's $L = D - W$,
# of a {glue:text}`elbo_k`-nearest-neighbour graph of {glue:text}`elbo_n` MNIST digits, has
# eigenvalues that grow with the degrees. $I - A$ is a random-walk Laplacian, similar (as a matrix) to
# the symmetric $I - D^{-1/2} W' D^{-1/2}$, since $I - A = D^{-1/2}(I - D^{-1/2} W' D^{-1/2}) D^{1/2}$,
# so its eigenvalues are real and lie in $[0, 2]$. The figure shows both spectra with each chapter's
# step. That chapter stepped on the ELBO, so its diffusion step is $h = \eta$, at its default
# $\eta = 1/\ell$ ($\ell = \lambda_{\max} + 1/\beta$, its curvature bound); a block steps on
# $F = 2\,\mathrm{ELBO}$, so here $h = 2\eta$.

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
Table(["Laplacian", "largest eigenvalue", "stable for h below", "the chapter's step h", "h × largest eigenvalue"],
      [["D − W (MNIST digits)", f"{fixed['lambda_max']:.2f}", f"{fixed['h_stable']:.4f}", f"{eta_elbo:.4f}",
        f"{eta_elbo * fixed['lambda_max']:.2f}"],
       ["I − A (the toy)", f"{rw['lambda_max']:.4f}", f"{rw['h_stable']:.4f}", f"{2 * eta:g}",
        f"{2 * eta * rw['lambda_max']:.2f}"]])

# %% tags=["remove-cell"]
h_fixed, h_block = eta_elbo * fixed["lambda_max"], 2 * eta * rw["lambda_max"]
glue("h_ratio", num(2 * eta / eta_elbo, 0))  # the two chapters' steps h: 2 eta here, eta = 1/ell there
claim(bool(rw["lambda_max"] <= 2 + 1e-9), "the largest eigenvalue of I - A lies within the bound 2")
claim(bool(h_fixed < 2 and h_block < 2), "both steps lie inside the stability limit 2 as h lambda_max")
claim(bool(2 * eta <= 1), "the block's step, with h = 2 eta <= 1, is a convex combination")

# %% [markdown]
# As numbers the two steps $h$ differ by a factor of {glue:text}`h_ratio`, but as $h\lambda_{\max}$
# both lie inside the limit 2.
#
# For the block, $\lambda_{\max}(I - A) \le 2$ makes $h = 2\eta \le 1$ stable on every graph, and
# in that range each step $(1 - 2\eta) X + 2\eta A X$ is a convex combination of a point and the
# weighted mean of its neighbours. Beyond it (exercise 1) each point is pushed past that mean: the step
# no longer averages, though it turns unstable only past $h = 2/\lambda_{\max}(I - A)$. The paper keeps
# $\eta < 1/2$ to keep the update bounded; in these terms, below $1/2$ every step is an average. The
# book keeps it too.
#
# ### Plain attention changes only the step size
#
# An attention block adds $A X W_V W_O$ to its input, with value weights $W_V$ and output weights
# $W_O$. With $W_V = I$ and $W_O = 2\eta' I$ (the diagonal weights that
# [an ordinary transformer](transformer_block.ipynb#an-ordinary-transformer-with-diagonal-weights)
# takes below), a *plain* attention block with step $\eta'$ is $\Pi(X + 2\eta' A X)$. Since
# $\Pi(a x) = \Pi(x)$ for $a > 0$, whenever $1 - 2\eta > 0$
#
# $$
# \Pi\big(X + 2\eta (A - I) X\big) = \Pi\big((1 - 2\eta) X + 2\eta A X\big)
# = \Pi\Big(X + \frac{2\eta}{1 - 2\eta} A X\Big).
# $$
#
# An $A - I$ block with step $\eta$ is a plain attention block with step $\eta' = \eta/(1 - 2\eta)$;
# conversely, a plain block with step $\eta'$ is an $A - I$ block with $\eta = \eta'/(1 + 2\eta')$.
# The paper's block adds $\tfrac{2\eta}{d_q + \beta} X$, one more multiple of $X$, so it is a plain
# block too, with $\eta' = \eta / \big(1 - 2\eta + \tfrac{2\eta}{d_q + \beta}\big)$. All three are
# one family, $\Pi(X + 2\eta' A X)$, whatever $A$ (masked or not) and $X$: at the same $\eta$ the
# plain block takes the shortest step, the paper's a longer one, the $A - I$ block the longest. Each
# block's $\eta'$, and the identity checked on the toy:

# %%
steps, gaps = {}, {}
for variant in ("diffusion", "paper"):
    steps[variant] = attention_step(eta, variant, d_q, beta)  # the plain step eta' of this block at step eta
    gaps[variant] = float((block_step(X0, kappa, eta, beta, variant)
                           - block_step(X0, kappa, steps[variant], beta, "attention")).abs().max())
eta_back = eta / (1 + 2 * eta)  # the other way: the A - I step equal to a plain step eta' = eta
gap_back = float((block_step(X0, kappa, eta, beta, "attention")
                  - block_step(X0, kappa, eta_back, beta, "diffusion")).abs().max())
gap_plain = max(gaps.values())
Table(["block", "the same as plain attention with step η'", "largest difference"],
      [[f"{v}, η = {eta:g}", f"{steps[v]:.3g}", f"{gaps[v]:.1e}"] for v in steps]
      + [[f"diffusion, η = {eta_back:.3f}", f"{eta:g}", f"{gap_back:.1e}"]])

# %% tags=["remove-cell"]
claim(max(gap_plain, gap_back) < 1e-12, "With the diagonal weights an A - I block is a plain attention block with step "
      "eta' = eta/(1 - 2 eta); conversely ... The paper's block is a plain block too")

# %% tags=["remove-cell"]
claim(eta < steps["paper"] < steps["diffusion"],
      "at the same eta the plain block takes the shortest step, the paper's a longer one, the A - I block the longest")

# %% [markdown]
# The identity needs value and output weights that are multiples of the identity. With other
# weights, trained or drawn at random, the residual path of the $A - I$ block is
# $X (I - W_V W_O) + A X W_V W_O$ rather than $X + A X W_V W_O$, and the two blocks differ:
# [the chapter on trained transformers](trained_transformers.ipynb) measures that change.

# %% [markdown]
# ## The feed-forward block stands in for the regulariser
#
# The log-determinant's gradient $2 C^{-1} X$, which pushes the latents apart, depends on all the
# points together; the paper replaces it by $2 X / (d_q + \beta)$. The exact term needs only a
# $d_q \times d_q$ system, since $C^{-1} X = X (X^\top X + \beta I)^{-1}$:

# %%
reg_exact = regulariser_gradient(X0, beta)  # 2 C^{-1} X, C = X X^T + beta I
reg_paper = 2 * X0 / (d_q + beta)  # the paper's approximation
cos_reg = float((reg_exact * reg_paper).sum() / (reg_exact.norm() * reg_paper.norm()))
ratio_reg = float(reg_exact.norm() / reg_paper.norm())

# %% tags=["remove-cell"]
glue("cos_reg", num(cos_reg, 3))
glue("ratio_reg", num(ratio_reg, 3))
claim(cos_reg < 0.9 and not 0.5 < ratio_reg < 2.0,
      "On this toy the approximation is poor in direction and in size")
claim(bool(ratio_reg < 1 / 50), "the exact term is less than a fiftieth as long")

# %% [markdown]
# On this toy the approximation is poor in direction and in size: the cosine between the two terms
# is {glue:text}`cos_reg`, and the exact term is {glue:text}`ratio_reg` times as long, less than a
# fiftieth. Why may it stand in at all? After LayerNorm the diagonal of $X X^\top$ is $d_q$; were the
# rows also orthogonal (possible only for $n \le d_q$), $C$ would be $(d_q + \beta) I$ and the two
# terms equal. The approximation drops the overlaps $x_i^\top x_j$, large on the toy's 300 rows in a
# three-dimensional span; [the objections chapter](objections.ipynb) measures it on MNIST latents.
#
# What, then, keeps the points apart? Nothing. The approximation is parallel to $X$, so after $\Pi$
# it only shortens the step of the $A - I$ block
# ([as above](transformer_block.ipynb#plain-attention-changes-only-the-step-size)). LayerNorm's
# sphere fixes each row's length: no blow-up, no collapse to $X = 0$, and the zero-eigenvalue trap of
# [the ELBO chapter](probdr_elbo.ipynb) is harmless ($\lVert X\rVert_F^2 = n d_q$ cannot grow). It
# does not stop points collapsing onto one spot of the
# sphere: a wide kernel pulls the whole toy together, and a narrow one gathers it into beads that only
# the narrowness of the kernel keeps apart.

# %% [markdown]
# ## How far the simplified steps turn from the gradient
#
# The variants the rest of the book compares differ only in $\Delta$. The table gives, for each, the
# cosine between its tangent parts and those of `exact`, the true gradient of $F$ with $A$ held fixed:

# %%
exact_part = tangent(update_direction(X0, kappa, beta, "exact"), X0)
cosines = {}
for variant in CHAPTER_VARIANTS:
    part = tangent(update_direction(X0, kappa, beta, variant), X0)
    cosines[variant] = float((part * exact_part).sum() / (part.norm() * exact_part.norm()))

# %% tags=["remove-cell"]
for variant, c in cosines.items():
    glue(f"cos_{variant}", f"{c:+.3f}")

# %% [markdown]
# | variant | direction $\Delta$ | what it is | cosine with `exact` |
# | --- | --- | --- | --- |
# | `attention` | $2 A X$ | a standard attention block at the diagonal initialisation | {glue:text}`cos_attention` |
# | `diffusion` | $2 (A - I) X = -2 L X$ | the paper's $A - I$ without the feed-forward term | {glue:text}`cos_diffusion` |
# | `paper` | $2 (A - I) X + \tfrac{2}{d_q + \beta} X$ | the paper's block | {glue:text}`cos_paper` |
# | `exact` | $2 C^{-1} X - (L + L^\top) X$ | the true gradient of $F$ with $A$ held fixed | {glue:text}`cos_exact` |
# | `symmetric` | $2 (D^{-1/2} W' D^{-1/2} - I) X$ | diffusion on the symmetrically normalised graph | {glue:text}`cos_symmetric` |

# %% tags=["remove-cell"]
W_self = torch.exp(kappa / d_q * X0 @ X0.T - beta * I)  # W' = e^S: the weights the softmax normalises
degrees = W_self.sum(1)
A_sym = W_self / torch.sqrt(degrees[:, None] * degrees[None, :])  # D^{-1/2} W' D^{-1/2}
first_order = float(tangent((A.T - A) @ X0, X0).norm())  # how far 2 L X is from (L + L^T) X
second_order = float(tangent((A + A.T - 2 * A_sym) @ X0, X0).norm())  # and the symmetric variant's graph term
logdet_part = float(tangent(regulariser_gradient(X0, beta), X0).norm() / exact_part.norm())
sym_part = tangent(update_direction(X0, kappa, beta, "symmetric"), X0)
sym_gap = float((sym_part - exact_part).norm() / exact_part.norm())
glue("deg_spread", pct(float((degrees.max() - degrees.min()) / degrees.mean()), 0))
glue("sym_vs_paper", num(second_order / first_order, 2))
glue("logdet_share", pct(logdet_part, 1))
glue("sym_gap", pct(sym_gap, 1))
glue("sym_cos_drop", num(sym_gap ** 2 / 2, 4))
same = max(abs(cosines[v] - cosines["diffusion"]) for v in ("attention", "paper")) < 1e-9
claim(bool(same), "attention, diffusion and paper share one tangent direction")
claim(cosines["diffusion"] > 0.95, "Without a mask, on this toy, the simplifications hardly turn the step")
claim(cosines["symmetric"] > 0.9995 and second_order < 0.2 * first_order and logdet_part < 0.05 and sym_gap < 0.05,
      "The symmetric variant scores +1.000: its graph term is a small fraction as far from the exact one as the "
      "paper's, the log-determinant's tangent part is a few per cent, and a gap of a few per cent moves the cosine "
      "only in the fourth decimal")
claim(bool(1 - cosines["symmetric"] <= 1 - np.sqrt(1 - sym_gap ** 2)),
      "A relative gap g lowers a cosine by at most about g^2/2")

# %% [markdown]
# `attention`, `diffusion` and `paper` score the same, since their $\Delta$ differ by multiples of
# $X$. Without a mask, on this toy, the simplifications hardly turn the step; they change how long it
# is. `symmetric` matches `exact` to three decimals, because its graph term differs from the exact one
# only at second order in the degrees:
#
# :::{dropdown} Why `symmetric` scores $+1.000$
# With the degrees $d_i$, the exact graph term $A + A^\top$ has
# entries $W'_{ij}(1/d_i + 1/d_j)$ and the symmetric one $2W'_{ij}/\sqrt{d_i d_j}$; they differ by
# $W'_{ij}(1/\sqrt{d_i} - 1/\sqrt{d_j})^2$, second order in the degree difference across an edge,
# while $2LX$ misses $(A^\top - A)X$, first order. The range of the degrees (largest minus smallest)
# is {glue:text}`deg_spread` of their mean, but a heavy edge joins points of similar degree, so the
# symmetric graph term is only {glue:text}`sym_vs_paper` times as far from the exact one as the
# paper's. The symmetric direction also lacks the log-determinant's term, whose tangent part is
# {glue:text}`logdet_share` of the exact direction's length; together the two put it
# {glue:text}`sym_gap` (relative) from the exact direction. A relative gap $g$ lowers a cosine by at
# most about $g^2/2$, here {glue:text}`sym_cos_drop`, so the cosine rounds to $+1.000$.
# :::
#
# ## An ordinary transformer with diagonal weights
#
# Take a single-head, post-LayerNorm block with attention and feed-forward in parallel, one block
# whose weights every layer shares, and set its weights to
#
# $$
# W_Q = W_K = a I,\ a^2 = \kappa/\sqrt{d_q}, \qquad W_V = I, \qquad W_O = 2\eta I, \qquad
# W_{\mathrm{ff}} = \tfrac{2\eta}{d_q + \beta} I,
# $$
#
# with the additive attention mask $-\beta I + M$. The usual scaling by $1/\sqrt{d_q}$ then gives
# logits $(X W_Q)(X W_K)^\top/\sqrt{d_q} = \tfrac{\kappa}{d_q} X X^\top$, the attention output is
# $2\eta A X$, and for the $A - I$ variants the value is subtracted before the output projection
# ($y = A V - V$). The package's diagonal transformer builds this from PyTorch's `nn.Linear`,
# `scaled_dot_product_attention` and `nn.LayerNorm`; its forward pass through
# {glue:text}`toy_depth` layers against as many unrolled steps:

# %%
torch.set_default_dtype(torch.float64)  # weights built in float32 and converted would keep float32 rounding (~1e-8)
nets = {v: DiagonalTransformer(d_q=d_q, n_layers=depth, kappa=kappa, eta=eta, beta=beta, variant=v)
        for v in ("attention", "diffusion", "paper")}
torch.set_default_dtype(torch.float32)
with torch.no_grad():
    forward_gaps = {v: float((net(X0) - unroll(X0, depth, kappa, eta, beta, v)[-1]).abs().max())
                    for v, net in nets.items()}
Table(["variant", f"transformer against {depth} unrolled steps: largest difference"],
      [[v, f"{gap:.1e}"] for v, gap in forward_gaps.items()])

# %% tags=["remove-cell"]
claim(max(forward_gaps.values()) < 1e-12, "The two agree to rounding error.")

# %% [markdown]
# The two agree to rounding error.
#
# Why post-LayerNorm? Its LayerNorm projects the residual sum itself, as projected gradient ascent
# needs. Most trained transformers, GPT-2 and the models of
# [the chapter on trained transformers](trained_transformers.ipynb) among them, are pre-LN,
# $X \leftarrow X + f(\Pi(X))$: the residual stream leaves the sphere, so that chapter tests $A - I$
# only as a change to the attention of ordinary models.
#
# The diagonal weights also make the logits measure similarity. With the common random initialisation
# $W_Q, W_K \sim \mathcal{N}(0, 0.02^2)$ they are a random bilinear form
# $x_i^\top W_Q W_K^\top x_j / \sqrt{d_q}$ instead of cosines:

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

# %% tags=["remove-cell"]
glue("r_diagonal", num(r_diagonal, 3))
glue("r_random", signed(r_random, 3))
claim(bool(r_diagonal > 0.9995), "With diagonal weights the logits are the scaled cosines")
claim(bool(abs(r_random) < 0.3), "with random weights the attention pattern says little about which points are similar")

# %% [markdown]
# With diagonal weights the logits *are* the scaled cosines (correlation {glue:text}`r_diagonal` over
# all pairs); with random weights the correlation is {glue:text}`r_random`, and the attention says
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
# Each panel shows the moons (grey) and where one variant's blocks take them (coloured by class), at
# the toy's settings. The points gather into beads along each moon: groups of points
# that have become each other's only neighbours. A smaller $\kappa$ pulls the whole toy towards one
# point; a larger one makes the beads smaller and more numerous until, in the limit (exercise 2),
# nothing moves.
#
# Over the whole range of $\beta$ ({glue:text}`bt_beta_lo` to {glue:text}`bt_beta_hi`) the picture
# barely changes: the mean distance the points move in the plane (where the moons have radius 1) in
# {glue:text}`bt_depth` blocks goes from
# {glue:text}`bt_moved_lo_at` to {glue:text}`bt_moved_hi_at` ({glue:text}`bt_change_at` %) at $\kappa$
# = {glue:text}`bt_kappa_at` and from {glue:text}`bt_moved_lo_narrow` to
# {glue:text}`bt_moved_hi_narrow` ({glue:text}`bt_change_narrow` %) at $\kappa$ =
# {glue:text}`bt_kappa_narrow`. $\beta$ lowers the logit of a point for itself, which takes the weight
# a point gives itself in the first block from {glue:text}`bt_self_lo_at` % to
# {glue:text}`bt_self_hi_at` % at $\kappa$ = {glue:text}`bt_kappa_at` and from
# {glue:text}`bt_self_lo_narrow` % to {glue:text}`bt_self_hi_narrow` % at $\kappa$ =
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

# %% tags=["hide-input"]
toy_live(toy, effect=effect, text={
    "caption": "The same blocks as `probdr_lite.unrolled` on the {n} points of the toy, one variant at a time, with "
               "the causal mask of the next section as an option. Grey: the toy; coloured by moon: after the chosen "
               "number of blocks; the frame has the variant's colour of the other figures.",
    "beta": (
        "Over the whole range of $\\beta$ ({beta_lo} to {beta_hi}) the picture barely changes: the mean "
        "distance the points move in the plane (where the moons have radius 1) in {depth} blocks goes from "
        "{moved_lo_at} to {moved_hi_at} "
        "({change_at} %) at $\\kappa$ = {kappa_at} and from {moved_lo_narrow} to {moved_hi_narrow} "
        "({change_narrow} %) at $\\kappa$ = {kappa_narrow}. $\\beta$ lowers the logit of a point for "
        "itself, which takes the weight a point gives itself in the first block from {self_lo_at} % to "
        "{self_hi_at} % at $\\kappa$ = {kappa_at} and from {self_lo_narrow} % to {self_hi_narrow} % at "
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
# A language model may not look ahead: token $i$ attends only to tokens $j \le i$, so the mask puts
# $-\infty$ on every logit above the diagonal and $A$ is lower-triangular. Point 1 attends only to
# itself, so $(A - I)x_1 = 0$: it never moves, and every later point is pulled only towards earlier
# ones. The moons are ordered by class, then from left to right: the upper moon flows towards its left
# tip, the lower moon towards the upper one.

# %%
A_causal = attention_matrix(X0, kappa, beta, mask="causal")
upper_full = float(torch.triu(A, 1).sum() / n)
asym_full = float((A - A.T).norm() / A.norm())
asym_causal = float((A_causal - A_causal.T).norm() / A_causal.norm())
diffusion_part_causal = tangent(update_direction(X0, kappa, beta, "diffusion", mask="causal"), X0)
exact_part_causal = tangent(update_direction(X0, kappa, beta, "exact", mask="causal"), X0)
cos_causal = float((diffusion_part_causal * exact_part_causal).sum()
                   / (diffusion_part_causal.norm() * exact_part_causal.norm()))
masked = dict(n_steps=depth, variant="diffusion")
fig = mask_figure(toy, **masked)
describe(fig, f"The attention matrix A of the toy without and with the causal mask on a log colour scale, and "
         f"where {masked['n_steps']} blocks of the {masked['variant']} variant move the toy in each case.")
plt.show()
Table(["measure", "no mask", "causal mask"],
      [["share of attention above the diagonal", f"{upper_full:.3f}", f"{float(torch.triu(A_causal, 1).sum()):.1f}"],
       ["asymmetry ‖A − Aᵀ‖ / ‖A‖", f"{asym_full:.3f}", f"{asym_causal:.3f}"],
       ["cosine of the diffusion and exact directions", f"{cosines['diffusion']:.3f}", f"{cos_causal:.3f}"]])

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
# none does. The mask makes $A$ far more asymmetric, and the cosine between the paper's direction and
# the exact gradient drops well below its value without the mask: $2LX$ is furthest from the true
# gradient for the causal models it is mostly applied to. [The objections chapter](objections.ipynb)
# measures the gap along the MNIST steps.
#
# ## The block, term by term
#
# Each ingredient of the gradient step on $F$ has a counterpart in the block:
#
# | gradient step on $F$ | transformer block | how close |
# | --- | --- | --- |
# | precision $\hat L$, a symmetric graph Laplacian | $L = I - A$, with $A$ the softmax attention | approximated: $I - A$ is a random-walk Laplacian, not symmetric |
# | data term $-(L + L^\top) X$ | attention minus the value, $2(A - I)X$ | approximated: equal only for a symmetric $A$; variant `exact` keeps $-(L + L^\top) X$ |
# | log-determinant term $2 C^{-1} X$ | feed-forward block $2X/(d_q + \beta)$ | approximated: exact when the rows of $X$ are orthogonal; after $\Pi$ it only shortens the step |
# | a fixed graph, built once from the data | a graph rebuilt from the latents in every block, held fixed during the step | approximated: the stop-gradient drops the graph's own gradient |
# | centring over the points, $X^\top \mathbf{1}_n = 0$ | LayerNorm: each row centred, $X \mathbf{1}_{d_q} = 0$, and scaled to $\lVert x_i\rVert^2 = d_q$ | replaced: a different constraint |
# | $\beta$ in $C$: jitter, threshold $1/\beta$, shrinkage | $\beta$ in $2/(d_q + \beta)$, and $-\beta$ on every self-logit | approximated: threshold and shrinkage go with $2C^{-1}X$; the self-logit term is the paper's addition (move 1) |
# | step size $\eta$ | residual scale, $W_O = 2\eta I$ | exact, with a factor 2 ($F = 2\,\mathrm{ELBO}$ up to a constant) |
# | none | ReLU of the feed-forward block | dropped |
#
# What does a *stack* of blocks climb? Each block steps on $F$ with its own graph, built from the
# latents it receives, so consecutive blocks climb different objectives; whether the stack climbs any
# one function is open. [The energies chapter](energies.ipynb) measures candidate energies along the
# blocks' path.
#
# ## Summary
#
# - With diagonal weights a post-LayerNorm transformer block computes exactly
#   $X \leftarrow \Pi\big(X + 2\eta(A - I)X + \tfrac{2\eta}{d_q + \beta}X\big)$: attention is the random
#   walk of a heat-kernel graph on the latents, $A - I$ one Euler step of diffusion on it, LayerNorm a
#   projection onto a sphere.
# - It is not a gradient step on the ELBO. Even with the graph held fixed, the block writes $2LX$ where
#   the gradient has $(L + L^\top)X$, replaces the log-determinant's term by a multiple of $X$, and
#   keeps LayerNorm's constraint, not the ELBO's. On the toy its direction is close to the gradient's
#   without a mask, far from it with the causal mask.
# - Under LayerNorm, plain attention, $A - I$ and the paper's block differ only in the step's length.
# - Nothing in the block keeps points apart, and what a stack of blocks climbs is open. All of this
#   holds at the diagonal initialisation only.

# %% [markdown]
#
# ## Exercises
#
# **1.** What does the diffusion block do at $\eta = 1/2$, and at $\eta = 0.8$?
#
# :::{dropdown} Solution
# The diffusion block's sum is $(1 - 2\eta)X + 2\eta A X$. At $\eta = 1/2$ the $X$ term
# vanishes and the block is $\Pi(A X)$: each point jumps to the weighted mean of its neighbours.
# At $\eta = 0.8$ the update is $\Pi(-0.6 X + 1.6 A X)$: each point is pushed *past* that mean,
# away from where it was. This is the Euler step with $h = 1.6 > 1$, no longer a convex
# combination, and no longer a plain attention step of any size.
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
# neighbourhood holds a few others.
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
# a derivation.
# :::

# %% tags=["hide-cell"]
for v in ("diffusion", "exact"):
    run = unroll(X0, depth, kappa, eta, beta, v, mask="causal")
    print(f"{v:>9}: point 1 moves by {(run[-1][0] - run[0][0]).norm():.3e} over {depth} causal blocks")
