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
# # Which energy does a block descend?
#
# [The objections chapter](objections.ipynb) found that the paper's block is not the gradient step
# of its own objective. What *does* a block optimise? This chapter puts
# [the readings](energies.ipynb#the-readings-one-by-one) of a block as a gradient step in one
# harness, on the same MNIST latents, and tests the paper's title claim. It finds:
#
# - The book's exact block, the stop-gradient step of the ELBO of probabilistic Laplacian Eigenmaps
#   (PLE), is the exact gradient step of another objective, $\Phi$: a Hopfield-type log-sum-exp energy
#   plus PLE's log-determinant. The paper's block comes close to that step without taking it, and of
#   the five blocks only the exact block is the gradient of any energy.
# - Which way the energies move along the path tells neither the readings nor the blocks apart
#   ([every energy along the MNIST path](energies.ipynb#every-energy-along-the-mnist-path)); which
#   block takes which reading's step does.
# - The title claim, that a block performs Laplacian Eigenmaps, fails on the attention graph itself
#   (with its self-loops) at $\kappa = 30$, though not at $\kappa = 10$. Over other graphs and
#   sharpnesses plain attention moves towards the embedding or stays; only $A - I$ and the paper's
#   block ever move away.
# - On a graph held fixed, $A - I$ would smooth away the top of the graph's spectrum; along the real
#   path it keeps about as much of it as plain attention.

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from probdr_lite.chapters import energies as E
from probdr_lite.chapters import objections as O
from probdr_lite.chapters import energies as thesis
from probdr_lite.chapters.objections import THRESHOLDS
from probdr_lite import unrolled as U
from probdr_lite.data import load_mnist
from probdr_lite.presentation.figures import readings as figs
from probdr_lite.presentation.plotting import Table
from probdr_lite.presentation.prose import claim, glue, num, pct, sci
from probdr_lite.presentation.figures.block import make_toy
from probdr_lite.presentation.style import describe
from probdr_lite.tangent import cosine, tangent_cosine


# %% [markdown]
# ## The setting
#
# Everything runs on the MNIST path of [the objections chapter](objections.ipynb): 2,000 test images
# (200 per class) embedded with the Gaussian projection $W_E$, latents of width $d_q = 128$,
# $\kappa = 30$, $\eta = 0.4$, $\beta = 1$, eight steps of one shared block, no mask, for each of
# the five blocks of [the transformer-block chapter](transformer_block.ipynb): plain attention,
# $A - I$, the paper's block, the exact block and the symmetric block. "After LayerNorm" means the
# part of a step tangent to
# [LayerNorm's constraint set](transformer_block.ipynb#layernorm-is-a-projection) at $X$.

# %%
D_Q, KAPPA, ETA, BETA, N_STEPS = 128, 30.0, 0.4, 1.0, 8
VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric")
KAPPAS2 = (100.0, 1000.0, 10000.0)  # the second map's sharpness (Differential Transformer)
NAMES = figs.NAMES  # how the tables and figures name the blocks, readings, energies and graphs
TOL = THRESHOLDS["identity"]  # "the same to rounding", "exact", "a gradient field": below this

images, labels = load_mnist(n=2000, stratified=True)
paths = O.mnist_paths(images, VARIANTS, N_STEPS, KAPPA, ETA, BETA, D_Q)
X0 = paths["paper"][0]  # (2000, 128), float64, the embedded images
toy = make_toy("moons", n=300, noise=0.07, d_q=16)

# the proposition: autograd against the closed form, on the toy (kappa, beta, masks) and on MNIST
gaps_toy = E.proposition_gaps(toy.X0)
gaps_mnist = E.proposition_gaps(X0, kappas=(KAPPA,), betas=(BETA,))
# which block is which reading's gradient step, and which updates are gradient fields at all
alignment = E.update_alignment(X0, E.READINGS, VARIANTS, KAPPA, BETA)
asymmetry = {u: E.gradient_field_asymmetry(X0[:300], u, KAPPA, BETA) for u in E.UPDATES}
# every energy along the eight steps of every block
harness = E.energy_table(paths, E.READINGS, KAPPA, BETA)
# the thesis: the principal subspace of X_l against the Laplacian Eigenmaps embeddings
targets = thesis.le_targets(images, X0, KAPPA, BETA)
le = thesis.le_alignment(paths, targets)
baseline = thesis.random_baseline(targets)
erank = thesis.effective_rank_path(paths)
participation = thesis.participation_ratio(targets["attention"])
# the blocks as graph filters, and A - I as a difference of attention maps
lam = E.attention_spectrum(X0, KAPPA, BETA)
modes = E.graph_modes(X0, KAPPA, BETA)
retention = {v: E.mode_retention(paths[v], ETA, D_Q, BETA, KAPPA, v, modes=modes) for v in ("attention", "diffusion")}
# A - I with its LayerNorm on the graph held at X_0: what LayerNorm alone does to the modes
frozen_ln = E.mode_retention(E.frozen_graph_path(X0, N_STEPS, KAPPA, ETA, BETA, "diffusion"), ETA, D_Q, BETA, KAPPA,
                             "diffusion", modes=modes)
diff_gap = E.differential_gap(X0, KAPPA, KAPPAS2, BETA)

# %% [markdown]
# ## The stop-gradient step is an exact gradient step
#
# **Proposition.** Let $S = \tfrac{\kappa}{d_q} X X^\top - \beta I + M$ be the logits, with the
# mask $M$ equal to 0 where a point may attend and $-\infty$ where it may not, $A = \sigma(S)$ the
# row-wise softmax, $L = I - A$ and $C = X X^\top + \beta I$. The book's "exact" direction, the
# gradient of the ELBO with $A$ held fixed,
#
# $$
# g_{\mathrm{sg}} = 2 C^{-1} X - (L + L^\top) X ,
# $$
#
# is the full gradient, with nothing held fixed, of
#
# $$
# \Phi(X) = \log\det(X X^\top + \beta I) - \lVert X \rVert_F^2
#   + \frac{d_q}{\kappa} \sum_i \operatorname{logsumexp}_j S_{ij} .
# $$
#
# **Proof.** Take a small change $dX$. The first term changes by
# $d \log\det C = \operatorname{tr}(C^{-1} dC) = 2 \operatorname{tr}(X^\top C^{-1} dX)$, since
# $dC = dX\, X^\top + X\, dX^\top$ and $C$ is symmetric. The second changes by
# $-2 \operatorname{tr}(X^\top dX)$. For the third, the derivative of a row's log-sum-exp is that
# row's softmax, $d \operatorname{logsumexp}_j S_{ij} = \sum_j A_{ij}\, dS_{ij}$ (masked entries have
# $A_{ij} = 0$ and drop out), and $dS = \tfrac{\kappa}{d_q}(dX\, X^\top + X\, dX^\top)$ because $M$ and
# $\beta I$ do not depend on $X$. So
#
# $$
# d\Big[\tfrac{d_q}{\kappa} \sum_i \operatorname{logsumexp}_j S_{ij}\Big]
# = \sum_{ij} A_{ij} (dx_i^\top x_j + x_i^\top dx_j)
# = \operatorname{tr}\big(X^\top (A + A^\top)\, dX\big) .
# $$
#
# Adding up, $\nabla \Phi = 2 C^{-1} X - 2 X + (A + A^\top) X = 2 C^{-1} X - (L + L^\top) X$. $\square$
#
# The proof never uses the symmetry of $A$, so it holds with the causal mask too.

# %% tags=["remove-cell"]
gap_toy, gap_causal, gap_mnist = float(gaps_toy[0].max()), float(gaps_toy[1].max()), float(gaps_mnist.max())
glue("gap_toy", sci(gap_toy))
glue("gap_causal", sci(gap_causal))
glue("gap_mnist", sci(gap_mnist))
glue("identity_tol", sci(TOL, 0))
glue("toy_n", str(toy.X0.shape[0]))
glue("toy_dq", str(toy.X0.shape[1]))
glue("prop_gap", sci(max(float(gaps_toy.max()), gap_mnist)))  # the introduction pastes it
claim(bool(max(gap_toy, gap_causal, gap_mnist) < TOL),
      "autograd's gradient of Phi and the closed form differ by less than the identity threshold: the same to rounding")

# %% [markdown]
# In float64, autograd's $\nabla\Phi$ and the closed form differ by a relative {glue:text}`gap_toy` at
# most on the transformer-block chapter's toy (two moons, {glue:text}`toy_n` points,
# $d_q$ = {glue:text}`toy_dq`, $\kappa$ from 1 to 100, $\beta$ from 0.1 to 10), by
# {glue:text}`gap_causal` with the causal mask, and by {glue:text}`gap_mnist` on the MNIST latents:
# all below the exactness threshold {glue:text}`identity_tol`.

# %% tags=["remove-cell"]
# How close the paper's block comes to the exact direction grad Phi, on the MNIST latents before the first block
_paper_dir = U.update_direction(X0, KAPPA, BETA, "paper")
_exact_dir = U.update_direction(X0, KAPPA, BETA, "exact")
paper_exact_cos, paper_exact_cos_ln = cosine(_paper_dir, _exact_dir), tangent_cosine(_paper_dir, _exact_dir, X0)
_phi0 = float(E.phi(X0, KAPPA, BETA))
_step = 1e-4 * float(X0.norm()) / float(_exact_dir.norm())
glue("paper_exact_cos", num(paper_exact_cos))  # the introduction pastes these two
glue("paper_exact_cos_ln", num(paper_exact_cos_ln))
claim(bool(float(E.phi(X0 + _step * _exact_dir, KAPPA, BETA)) > _phi0),
      "a small step along the exact direction raises Phi: the step ascends Phi")
claim(bool(0.9 < paper_exact_cos < 1 - TOL and paper_exact_cos < paper_exact_cos_ln < 1 - TOL),
      "the paper's block is not Phi's gradient but close to it, closer once LayerNorm's tangent space is taken")

# %% [markdown]
# So the exact block, $X + \eta \nabla\Phi$ before LayerNorm, *ascends* $\Phi$. The paper's block
# writes $2X/(d_q + \beta)$ for $2 C^{-1} X$ and $2 L X$ for $(L + L^\top) X$; on the MNIST latents
# before the first block its direction has cosine {glue:text}`paper_exact_cos` with $\nabla\Phi$, and
# {glue:text}`paper_exact_cos_ln` after LayerNorm: close to an ascent step on $\Phi$, not one.
#
# This turns [objection 3](objections.ipynb#3-stop-gradient-through-the-attention), that holding $A$
# fixed drops the terms of the gradient that pass through $A(X)$, into a choice of objective: holding
# $A$ fixed does not approximate a gradient, it *is* one, of $\Phi$. The choice is between
# $\Phi$ and $F_{\mathrm{full}}(X) = \log\det C - \operatorname{tr}(X^\top L(X) X)$, with the graph
# $L(X) = I - A(X)$ differentiated too.

# %% tags=["remove-cell"]
for _k2, _g in zip(KAPPAS2, diff_gap):
    glue(f"diff_gap_{int(_k2)}", sci(_g))
claim(bool(diff_gap[-1] < 1e-3),
      "at the sharpest second map the difference of two attention maps is A - I (relative gap below 1e-3)")

# %% [markdown]
# ## The readings, one by one
#
# Each reading names an energy and the way its update moves it. Where a reading holds part of
# the state at the start of a step, $X_l$, the logits are
# $S_{ij}(X, X_l) = \tfrac{\kappa}{d_q} x_i^\top x_{l,j} - \beta [i = j] + M_{ij}$.
#
# - **The paper's PLE ELBO, with the stop-gradient** {cite:p}`ravuri2025transformers`:
#   $F(X; A_l) = \log\det C - \operatorname{tr}(X^\top (I - A_l) X)$, with the graph held at the
#   step's start: twice [the ELBO](probdr_elbo.ipynb#the-model) at $\nu = 1$, up to a constant;
#   *raised*; its gradient step is the exact block by construction.
# - **$\Phi$**, above: *raised*; the exact block again, with nothing held fixed.
# - **Modern Hopfield networks** {cite:p}`ramsauer2020hopfield`: each token queries the tokens at
#   the step's start as stored patterns, with energy
#   $\tfrac12 \lVert X \rVert_F^2 - \tfrac{d_q}{\kappa}\sum_i \operatorname{logsumexp}_j S_{ij}(X, X_l)$,
#   *lowered*. Its gradient at $X_l$ is $L X_l$, so the $A - I$ block is exactly its
#   gradient-descent step.
# - **The Energy Transformer** {cite:p}`hoover2023energy`: the attention energy
#   $-\tfrac{d_q}{\kappa}\sum_i \operatorname{logsumexp}_j S_{ij}$ of all tokens at once, keys
#   included, *lowered*; its descent direction is $(A + A^\top) X$, the graph term of the gradient
#   $(L + L^\top) X$ of $\operatorname{tr}(X^\top L X)$, which the paper writes as $2 L X$
#   ([objection 1](objections.ipynb#1-the-gradient-of-a-quadratic-form-with-a-non-symmetric-matrix)).
# - **Tokens on the sphere** {cite:p}`geshkovski2023perspective`: the interaction energy
#   $\tfrac{d_q}{2\kappa n^2}\sum_{ij} e^{S_{ij} - \kappa}$,
#   *raised* as the tokens cluster. Without a mask, row $i$ of its gradient is $D_i (A X)_i$ up to a
#   constant, with $D_i = \sum_j e^{S_{ij}}$ the degree of point $i$, so plain attention follows it
#   only in a degree-weighted metric; with the causal mask the gradient still pulls each token
#   towards later ones, which no causal block can follow.
# - **CRATE** {cite:p}`yu2023crate`: the coding rate $R(X) = \tfrac12 \log\det(I + X X^\top / \beta)$
#   (precision $\epsilon^2 = \beta d_q / n$). CRATE's attention is a step that *lowers* the rates
#   $\sum_k R(U_k^\top X)$ of the tokens' projections onto its heads' subspaces (compression; its
#   objective also *raises* $R(X)$, expansion); with one head and $U = I$, the case read here,
#   attention *lowers* $R$. As $R = \tfrac12 (\log\det C - n \log\beta)$, PLE's regulariser raises
#   what CRATE's attention lowers.
# - **Sinkformers** {cite:p}`sander2022sinkformers`: Sinkhorn's algorithm rescales $E = e^S$ into a
#   symmetric doubly stochastic $P = \operatorname{diag}(e^f) E \operatorname{diag}(e^f)$. The
#   energy, *raised*, is the value of that rescaling problem,
#   $G(X) = \tfrac{d_q}{2\kappa}\min_f \big[\sum_{ij} e^{f_i + S_{ij} + f_j} - 2\sum_i f_i\big]$. A zero
#   derivative in $f_i$ makes row $i$ of $P$ sum to 1; by the envelope theorem $dG$ may hold $f$ at
#   its minimiser, so $dG = \tfrac{d_q}{2\kappa}\sum_{ij} P_{ij}\, dS_{ij}$ and, as in the proof above,
#   $\nabla G = P X$. The symmetric block's $D^{-1/2} E D^{-1/2}$ is the first iterate of Sinkhorn's
#   damped scaling $u \leftarrow (u / E u)^{1/2}$ from $u = 1$.
# - **GRAND** {cite:p}`chamberlain2021grand`: the attention diffusion $dX/d\tau = (A(X) - I) X$,
#   whose explicit Euler step is the $A - I$ block. Its energy is the Dirichlet energy
#   $\operatorname{tr}(X^\top (I - A_l) X)$, *lowered*, but its gradient is $(L + L^\top) X$, so
#   $A - I$ descends it exactly only when $A$ is symmetric.
# - **GFSA** {cite:p}`choi2023gfsa` replaces $A$ by a polynomial $w_0 I + w_1 A + w_K A^K$, the
#   **Differential Transformer** {cite:p}`ye2024differential` by a difference of two attention maps;
#   neither names an energy. The residual blocks are GFSA filters with $w_K = 0$ ($A - I$ has
#   $w_0 = 1 - 2\eta$, $w_1 = 2\eta$), and $A - I$ is a difference of two maps whose second attends
#   only to itself.

# %% [markdown]
# That second map must be sharp: at $X_0$ the relative gap
# $\lVert (A(\kappa) - A(\kappa_2)) X - (A - I) X \rVert / \lVert (A - I) X \rVert$ is
# {glue:text}`diff_gap_100`, {glue:text}`diff_gap_1000` and {glue:text}`diff_gap_10000` at
# $\kappa_2 = 100$, 1000 and 10000. The table gives the cosine of each block's direction with each
# reading's step at $X_0$, in the full space and after LayerNorm.

# %% tags=["hide-input"]
display(Markdown(figs.alignment_table(alignment, {
    "reading": "reading", "exact": "exact step of", "tangent": "exact step of, after LayerNorm",
    "closest": "closest after LayerNorm (1 − cos)"}, NAMES, tol=TOL,
    caption=("each cell: cosine of the block's step with the reading's step (its energy's gradient, negated where the "
             "reading lowers the energy) at $X_0$, in the full "
             f"space / after LayerNorm (tangent parts); exact: a cosine within {sci(TOL, 0)} of 1; closest: the "
             "blocks with the highest cosine after LayerNorm")).to_markdown()))

# %% tags=["remove-cell"]
exact = {r: figs.exact_for(alignment, r, TOL)["full"] for r in alignment}
near = {r: figs.closest(alignment, r, TOL) for r in alignment}
miss = {r: 1.0 - alignment[r][near[r][0]]["tangent_cosine"] for r in alignment}
glue("n_no_exact", str(sum(not exact[r] for r in alignment)))
glue("miss_et", sci(miss["energy_transformer"]))
glue("miss_sink", sci(miss["sinkformer"]))
glue("sink_exact_gap", sci(alignment["sinkformer"]["symmetric"]["tangent_cosine"]
                           - alignment["sinkformer"]["exact"]["tangent_cosine"]))
glue("cos_sphere", num(1.0 - miss["sphere"], 2))
glue("cos_crate", num(1.0 - miss["crate"], 2))
claim({r for r in alignment if not exact[r]} == {"energy_transformer", "sphere", "crate", "sinkformer", "grand"},
      "five readings have no exact block: the Energy Transformer, tokens on the sphere, CRATE, Sinkformer and GRAND")
claim(all(abs(alignment["energy_transformer"][u]["tangent_cosine"] - alignment["grand"][u]["tangent_cosine"]) < TOL
          for u in VARIANTS), "after LayerNorm the Energy Transformer's and GRAND's steps are one")
claim(all(near[r] == ["exact"] for r in ("energy_transformer", "grand", "sphere")) and near["sinkformer"] == ["symmetric"]
      and alignment["sinkformer"]["symmetric"]["tangent_cosine"] - alignment["sinkformer"]["exact"]["tangent_cosine"]
      < 1e-4 and set(near["crate"]) == {"attention", "diffusion", "paper"},
      "after LayerNorm the exact block comes closest to the Energy Transformer's, GRAND's and the sphere's steps, the "
      "symmetric block to the Sinkformer's (the exact block within 1e-4 of it), the three of one direction to CRATE's")
claim(bool(max(miss[r] for r in ("energy_transformer", "sinkformer", "grand")) < 1e-2
           and min(miss[r] for r in ("energy_transformer", "sinkformer", "grand")) > 1e4 * TOL),
      "near misses: within a hundredth of a cosine of 1, yet more than ten thousand times the exactness threshold")
claim(bool(1.0 - miss["sphere"] < 0.9 and 1.0 - miss["crate"] < 0.5),
      "no block comes near the step of tokens on the sphere (below 0.9) or of CRATE (below 0.5)")

# %% [markdown]
# A block is the *exact* step of a reading when the cosine is 1 to within
# {glue:text}`identity_tol`; {glue:text}`n_no_exact` readings have no exact block. After LayerNorm
# plain attention, $A - I$ and the paper's block share one direction (they differ by multiples of
# $X$), and so do the Energy Transformer's and GRAND's steps (they differ by $2X$). The exact block,
# whose graph term is $(A + A^\top) X$, comes closest to that step, at $1 -$ {glue:text}`miss_et`; the
# symmetric block comes closest to the Sinkformer's, at $1 -$ {glue:text}`miss_sink`, ahead of the
# exact block by {glue:text}`sink_exact_gap`, a tie at the table's four decimals. Small gaps, but more
# than ten thousand times the exactness threshold: real, not noise. No block comes near the steps of
# tokens on the sphere (best {glue:text}`cos_sphere`, the exact block's) or of CRATE
# ({glue:text}`cos_crate`).
#
# A weaker test asks whether an update is the gradient of *some* energy. A smooth field
# $X \mapsto \Delta(X)$ is a gradient exactly when its Jacobian $J$ is symmetric (the energy's
# Hessian). The table measures $\lVert J - J^\top \rVert_F / \lVert J \rVert_F$: 0 for a
# gradient field, $\sqrt 2$ for a Jacobian with independent random entries, 2 for a pure rotation.
# Both norms are estimated on the first 300 MNIST latents from random probes $v$
# ($\mathbb E \lVert M v \rVert^2 = \lVert M \rVert_F^2$), with autograd's exact $J v$ and
# $J^\top v$.

# %% tags=["hide-input"]
display(Markdown(figs.gradient_field_table(asymmetry, {
    "update": "update", "antisymmetric": r"$\lVert J - J^\top \rVert_F$", "jacobian": r"$\lVert J \rVert_F$",
    "asymmetry": r"$\lVert J - J^\top \rVert_F / \lVert J \rVert_F$", "field": "a gradient field?", "yes": "yes",
    "no": "no"}, NAMES, tol=TOL, caption=(
    "the Jacobian of each update's direction field on the first 300 MNIST latents, its norms estimated from 8 "
    f"seeded random probes; 'yes': a ratio below {sci(TOL, 0)}")).to_markdown()))

# %% tags=["remove-cell"]
ratio = {u: a["asymmetry"] for u, a in asymmetry.items()}
fields = {u for u, r in ratio.items() if r < TOL}
others = {u: r for u, r in ratio.items() if r >= TOL}
glue("field_max", sci(max(ratio[u] for u in fields)))
glue("nonfield_min", num(min(others.values()), 2))
glue("nonfield_max", num(max(others.values()), 2))
_anti = [asymmetry[u]["antisymmetric"] for u in ("attention", "diffusion", "paper")]
claim(fields == {"exact", "energy_transformer", "sinkformer"},
      "the exact block, (A + A^T) X and Sinkhorn attention are gradient fields; the other four updates are not")
claim(bool(min(others.values()) > 0.1 and max(others.values()) < 1.0),
      "the four others are not near a gradient field: antisymmetric parts a tenth of the Jacobian or more")
claim(bool(max(_anti) - min(_anti) < 1e-8 * max(_anti))
      and max(asymmetry[u]["jacobian"] for u in ("diffusion", "paper")) < asymmetry["attention"]["jacobian"] / 4,
      "plain attention, A - I and the paper's block have the same antisymmetric part; the Jacobians of A - I and the "
      "paper's block are under a quarter of plain attention's")

# %% [markdown]
# The exact block, $(A + A^\top) X$ and Sinkhorn attention $P X$ are gradient fields: their ratios, at
# most {glue:text}`field_max`, are rounding. The other four are not, nor close: their antisymmetric
# parts are {glue:text}`nonfield_min` to {glue:text}`nonfield_max` of their Jacobians. Plain
# attention, $A - I$ and the paper's block share one antisymmetric part, because their Jacobians
# differ by multiples of the identity, which is symmetric; their ratios differ only through
# $\lVert J \rVert_F$, under a quarter of plain attention's for $A - I$ and the paper's block, whose
# shifts of about $-2I$ cancel most of it (exercise 1).

# %% [markdown]
# ## Every energy along the MNIST path
#
# At each of the eight steps of every block, does each energy go up or down? The readings that
# hold part of the state fixed (the PLE ELBO, Hopfield, GRAND) judge the step from $X_l$ with that
# part held at $X_l$.

# %% tags=["hide-input"]
display(Markdown(figs.harness_table(harness, {
    "reading": "reading", "energy": "energy", "sense": "its reading",
}, NAMES, caption=(
    "each block's cell: how many of the steps along the MNIST path move the energy the way its reading says (the "
    "third column), out of all")).to_markdown()))
fig = figs.energy_path_figure(harness, {
    "title": "{reading}\n(its reading: {arrow})", "arrow": {1: "↑", -1: "↓"},
    "xlabel": "layer $l$", "ylabel": r"$E(X_l) - E(X_0)$"}, NAMES)
describe(fig, f"{len(harness)} panels, one per energy reading, each showing how far every block's steps move that "
              "energy from its value at layer 0, layer by layer.")
plt.show()


# %% tags=["remove-cell"]
def follows(entry, reading):
    """Every step of the path moves the reading's energy the way the reading says."""
    return (entry["n_rise"] if E.SENSE[reading] > 0 else entry["n_fall"]) == entry["deltas"].size


claim(all(follows(harness[r][v], r) for r in harness for v in harness[r]),
      "every block moves every energy the way its reading says, at every step")
_raw = {r: alignment[r]["attention"] for r in ("ple", "crate")}  # plain attention against two readings' steps
for _r, _c in _raw.items():
    glue(f"att_{_r}_cos", num(_c["cosine"], 4))
    glue(f"att_{_r}_tan", num(_c["tangent_cosine"], 4))
claim(all(c["cosine"] < 0 < c["tangent_cosine"] for c in _raw.values()),
      "plain attention's raw step points against the PLE ELBO's and CRATE's steps, its tangent part with them")
claim(all(harness["crate"][v]["n_fall"] == N_STEPS for v in VARIANTS),
      "along the MNIST path every block lowers the log-determinant (CRATE's coding rate) at every step")

# %% [markdown]
# Every block moves every energy the way that energy's reading says, at every step: monotonicity
# along the path tells neither the readings nor the blocks apart; which block takes each reading's
# step does ([the alignment table](energies.ipynb#the-readings-one-by-one)). Plain attention's raw
# step has cosine {glue:text}`att_ple_cos` with the PLE ELBO's step and {glue:text}`att_crate_cos`
# with CRATE's, yet it moves both energies their reading's way: LayerNorm keeps only the tangent part
# of a step, and there the cosines are positive ({glue:text}`att_ple_tan` and
# {glue:text}`att_crate_tan`). Every block, the exact one included, lowers CRATE's coding rate, half
# PLE's log-determinant up to a constant: the term PLE's regulariser raises falls.

# %% tags=["remove-input"]
objective = {r: {v: (float(harness[r][v]["values"][0]), float(harness[r][v]["values"][-1])) for v in VARIANTS}
             for r in ("ple", "phi")}
display(Markdown(Table(
    ["block", "PLE ELBO, layer 0", f"PLE ELBO, layer {N_STEPS}", r"$\Phi$, layer 0", rf"$\Phi$, layer {N_STEPS}"],
    [[NAMES["variant"][v]] + [num(x, 0) for r in ("ple", "phi") for x in objective[r][v]] for v in VARIANTS],
    caption="each objective with each layer's own graph, at the first and the last layer").to_markdown()))

# %% tags=["remove-cell"]
ple_first, ple_attention = objective["ple"]["attention"]
rises = {r: {v: b > a + 0.01 * abs(a) for v, (a, b) in objective[r].items()} for r in objective}
glue("ple_first", num(ple_first, 0))
glue("ple_attention_last", num(ple_attention, 0))
claim(bool(ple_attention < ple_first - 0.01 * abs(ple_first)) and all(rises["ple"][v] for v in VARIANTS if
                                                                       v != "attention"),
      "the PLE ELBO ends lower under plain attention and higher under every other block")
claim(all(rises["phi"].values()), "Phi ends higher than it starts under every block")
# Phi's own ascent (the exact block) against A - I: the gain in Phi per unit of distance travelled, and the distance
travelled = {v: sum(float((b - a).norm()) for a, b in zip(paths[v], paths[v][1:])) for v in ("exact", "diffusion")}
gain = {v: objective["phi"][v][1] - objective["phi"][v][0] for v in travelled}
for _v in travelled:
    glue(f"phi_dist_{_v}", num(travelled[_v], 0))
    glue(f"phi_rate_{_v}", num(gain[_v] / travelled[_v], 0))
claim(max(objective["phi"], key=lambda v: objective["phi"][v][1]) == "diffusion"
      and gain["exact"] / travelled["exact"] > gain["diffusion"] / travelled["diffusion"]
      and travelled["diffusion"] > travelled["exact"],
      "Phi ends highest under A - I; the exact block gains more per unit of distance, A - I travels further")

# %% [markdown]
# Under plain attention the PLE ELBO falls, from {glue:text}`ple_first` to
# {glue:text}`ple_attention_last`, although each step raises the ELBO computed with the graph it
# started from: the change of graph between steps undoes the steps' gain. Under the other four it
# ends higher. $\Phi$ ends higher under all five, highest not under the exact block, which takes
# $\Phi$'s own gradient steps, but under $A - I$: a gradient step is the steepest per unit of
# distance, not the longest. The exact block gains {glue:text}`phi_rate_exact` of $\Phi$ per unit of
# distance travelled (summed Frobenius norms of the steps), $A - I$ {glue:text}`phi_rate_diffusion`,
# but $A - I$ travels {glue:text}`phi_dist_diffusion` against {glue:text}`phi_dist_exact`.

# %% [markdown]
# ## The thesis, tested head-on
#
# The paper's title says that a transformer block performs Laplacian Eigenmaps. If it did, the
# top-$q$ principal subspace of the latents $X_l$ would turn towards the span of the $q$ smallest
# non-trivial generalised eigenvectors, $(D - W) v = \lambda D v$ with $D$ the diagonal matrix of
# the degrees $W \mathbf 1$
# ([the Laplacian Eigenmaps chapter](laplacian_eigenmaps.ipynb#what-the-laplacian-measures)), of the
# graph $W$ the block uses. Two graphs are candidates: the attention graph of the first block,
# $W = e^{S}$ at $X_0$ (its random walk is the first $A$), and that chapter's $k$-nearest-neighbour
# graph of the pixels (10 neighbours, 0/1 weights). The measure is the mean cosine of the principal
# angles between the two subspaces, for $q = 2$ and $q = 10$, both sides centred; random
# $q$-dimensional subspaces give the level of no alignment (about $\sqrt{q/n}$). The table also
# gives the effective rank of $X_l$, $\exp$ of the entropy of its normalised singular values
# {cite:p}`roy2007effective`, which tracks the rank collapse of deep attention
# {cite:p}`dong2021attention`.

# %% tags=["remove-cell"]
no_loops = thesis.graph_targets(images, X0, KAPPA, BETA)["attention_no_loops"]
centring = {c: thesis.le_alignment({v: paths[v] for v in ("attention", "diffusion")}, {"g": no_loops}, qs=(2,),
                                   centre=c) for c in (True, False)}
const_share = float(np.abs(no_loops[:, 0].mean()) * np.sqrt(no_loops.shape[0]) / np.linalg.norm(no_loops[:, 0]))
glue("raw_start", num(centring[False]["attention"]["g"][2][0]))
for _v in ("attention", "diffusion"):
    glue(f"raw_end_{_v}", num(centring[False][_v]["g"][2][-1]))
glue("const_share", pct(const_share))
claim(all(centring[False][v]["g"][2][i] < centring[True][v]["g"][2][i] for v, i in
          (("attention", 0), ("attention", -1), ("diffusion", -1))),
      "Compared raw ... each lower than the centred cosine that the robustness table gives for this graph")
claim(thesis.compare_ends(centring[True]["attention"]["g"][2][0], centring[False]["attention"]["g"][2][0],
                          centring[False]["attention"]["g"][2][0]) == "first",
      "centring the LE vectors raises the layer-0 cosine of the graph without self-loops at kappa = 30")

# %% [markdown]
# :::{dropdown} Why the test centres the LE vectors
# The principal subspace of $X_l$ is taken after subtracting the mean row, so it cannot contain the
# constant vector $\mathbf 1$. An LE vector solves $(D - W) v = \lambda D v$, so it is $D$-orthogonal
# to $\mathbf 1$ ($v^\top D \mathbf 1 = 0$) but not orthogonal to it, and its constant part, which no
# centred subspace holds, would lower every block's cosine alike; the test subtracts each LE vector's
# mean first.
# :::

# %% tags=["hide-input"]
display(Markdown(figs.thesis_table(le, baseline, erank, {
    "block": "block", "graph": "{graph}, $q = {q}$", "rank": "effective rank of $X_l$", "random": "random subspace",
}, NAMES, caption=(
    f"layer 0 → layer {N_STEPS} (in brackets the highest and the layer where it is reached): mean cosine of the "
    "principal angles between the top-$q$ principal subspace of $X_l$ and the centred LE embedding (1: the same "
    "subspace); random: mean ± sd over random subspaces"))
                 .to_markdown()))
fig = figs.thesis_figure(le, baseline, {"random": "random subspace", "title": "{graph}, $q$ = {q}",
                                        "xlabel": "layer $l$", "ylabel": "mean principal-angle cosine"}, NAMES)
describe(fig, f"{2 * len(baseline)} panels, one per graph and subspace dimension q, each showing per layer how "
              "closely every block's principal subspace matches the Laplacian Eigenmaps embedding, against the level "
              "of a random subspace.")
plt.show()

# %% tags=["remove-cell"]
att_all = np.concatenate([le[v]["attention"][q] for v in VARIANTS for q in thesis.QS])
att_ends = {q: {v: float(le[v]["attention"][q][-1]) for v in VARIANTS} for q in thesis.QS}
glue("att_best_end", num(max(max(e.values()) for e in att_ends.values())))
pix_start = {q: float(le["attention"]["pixels"][q][0]) for q in thesis.QS}
pix_ends = {q: {v: float(le[v]["pixels"][q][-1]) for v in VARIANTS} for q in thesis.QS}
move_tol = thesis.MOVE_TOL  # the one tolerance of every comparison of the thesis test (thesis.compare_ends)
glue("move_tol", pct(move_tol))
glue("random_sd", f"{thesis.RANDOM_SD:g}")
_level = {g: {q: thesis.random_level(baseline[g][q]) for q in thesis.QS} for g in ("attention", "pixels")}
claim(all(le["attention"]["attention"][q][0] <= _level["attention"][q] for q in thesis.QS),
      "at layer 0 the latents are no closer to [the attention graph's embedding] than random subspaces")
claim(all(pix_start[q] > 8 * _level["pixels"][q] for q in thesis.QS),
      "the pixels' graph: the latents start at more than eight times the random level at both q")
claim(all(att_ends[10][v] > _level["attention"][10] for v in VARIANTS),
      "at q = 10 every block ends just above the attention graph's random level")
claim(bool(att_all.max() < 0.5), "no block brings the latents within a mean cosine of 0.5 of the attention graph's LE "
                                 "embedding")
claim(all(thesis.compare_ends(pix_ends[q]["attention"], pix_start[q], pix_start[q]) == "first" for q in thesis.QS)
      and all(thesis.compare_ends(pix_ends[q][v], pix_start[q], pix_start[q]) == "second"
              for q in thesis.QS for v in ("diffusion", "paper")),
      "towards the pixels' graph plain attention moves towards it and A - I and the paper's block away, at both q")

# %% [markdown]
# The attention graph's LE embedding stays far from the latents: at layer 0 they are no closer to it
# than random subspaces (whose level is their mean plus {glue:text}`random_sd` standard deviations),
# and no block ends above {glue:text}`att_best_end`; at $q = 10$ every block ends just above the
# random level, a move the test below sets aside because it starts there. On the pixels' graph the
# latents start at more than eight times the random level at both $q$; after eight blocks plain
# attention is closer still, while $A - I$ and the paper's block have moved away by more than the
# test's tolerance, {glue:text}`move_tol` of the start.

# %% tags=["remove-cell"]
lam_att = np.asarray(targets["attention_eigenvalues"], dtype=float)
p_att = np.asarray(participation, dtype=float)
glue("lam_min", sci(lam_att.min()))
glue("lam_max", sci(lam_att.max()))
glue("n_le", str(lam_att.size))
glue("p_max", num(p_att.max(), 3))
ranks = {v: float(erank[v][-1]) for v in VARIANTS}
glue("rank_first", num(erank["attention"][0], 1))
glue("rank_last_min", num(min(ranks.values()), 1))
glue("rank_last_max", num(max(ranks.values()), 1))
claim(bool(lam_att.max() < 0.01 and p_att.max() < 1.5),
      "the attention graph is close to a set of separate points: eigenvalues below 0.01, each LE vector on about one "
      "image")
claim(all(ranks[v] < 0.99 * erank[v][0] for v in VARIANTS) and min(ranks, key=ranks.get) == "diffusion",
      "the effective rank falls under every block, fastest under A - I")

# %% [markdown]
# Why is the attention graph out of reach? At $\kappa = 30$ the diagonal of $W = e^S$ dominates each
# row: its {glue:text}`n_le` smallest non-trivial generalised eigenvalues lie between
# {glue:text}`lam_min` and {glue:text}`lam_max`, and no LE vector has a participation ratio
# $(\sum_i v_i^2)^2 / \sum_i v_i^4$ above {glue:text}`p_max` (1: a single image carries it): the
# embedding picks out single images. Meanwhile every block lowers the effective rank from
# {glue:text}`rank_first` to between {glue:text}`rank_last_min` ($A - I$) and
# {glue:text}`rank_last_max`.
#
# Fair alternatives are the same graph without its self-loops (as
# [the Laplacian Eigenmaps chapter](laplacian_eigenmaps.ipynb) builds graphs), the latents' own
# $k$-nearest-neighbour graph at $X_0$ (10 neighbours, 0/1 weights, as for the pixels), and wider
# kernels. The table runs the test on all four at $\kappa = 3, 10, 30$.

# %%
ROBUST_KAPPAS, ROBUST_VARIANTS = (3.0, 10.0, 30.0), ("attention", "diffusion", "paper")
N_SD, move_tol = thesis.RANDOM_SD, thesis.MOVE_TOL  # the random level's width and the test's one tolerance
robust_paths = {k: ({v: paths[v] for v in ROBUST_VARIANTS} if k == KAPPA else
                    O.mnist_paths(images, ROBUST_VARIANTS, N_STEPS, k, ETA, BETA, D_Q)) for k in ROBUST_KAPPAS}
robust = thesis.robustness(images, robust_paths, BETA, qs=thesis.QS)
rows = thesis.robustness_facts(robust, n_sd=N_SD, rel_tol=move_tol)

# %% tags=["hide-input"]
display(Markdown(figs.robustness_table(rows, {
    "kappa": "$\\kappa$", "graph": "graph", "q": "$q$", "start": "layer 0", "random": "random",
    "end": "{variant}: last layer (peak at layer)", "closer": "ends closer"}, NAMES, caption=(
    "mean principal-angle cosine between the top-$q$ principal subspace of $X_l$ and each graph's centred LE "
    f"embedding; ↑ towards it, ↓ away, · neither (within {pct(move_tol)} of the start, or at the random level: mean + "
    f"{N_SD:g} sd); 'ends closer' uses the same {pct(move_tol)} of the start, 'tie' means within it, and 'neither' "
    "that both blocks end at the random level"))
                 .to_markdown()))

# %% tags=["remove-cell"]
room = [f for f in rows if f["start_above_random"] and not f["at_ceiling"]]
count = {v: {m: sum(f["moves"][v] == m for f in room) for m in ("towards", "away", "still")} for v in ROBUST_VARIANTS}
closer = {c: sum(f["closer"] == c for f in room) for c in ("diffusion", "attention", "tie")}
turns = [f for f in room if f["peaks"]["diffusion"] < N_STEPS
         and f["peak_values"]["diffusion"] - f["ends"]["diffusion"] > f["margin"]]
for _name, _value in {
        "thesis_n": len(rows), "thesis_n_graphs": len(thesis.GRAPHS), "thesis_n_kappas": len(ROBUST_KAPPAS),
        "thesis_n_qs": len(thesis.QS), "thesis_flat": sum(not f["start_above_random"] for f in rows),
        "thesis_ceiling": sum(f["at_ceiling"] for f in rows), "thesis_room": len(room),
        "thesis_ai_towards": count["diffusion"]["towards"], "thesis_ai_away": count["diffusion"]["away"],
        "thesis_att_towards": count["attention"]["towards"], "thesis_att_away": count["attention"]["away"],
        "thesis_ai_closer": closer["diffusion"], "thesis_att_closer": closer["attention"],
        "thesis_ties": closer["tie"], "thesis_ai_turns": len(turns)}.items():
    glue(_name, str(_value))  # the introduction pastes the thesis_* counts
glue("ceiling", num(thesis.CEILING, 2))
claim(len(room) > 0 and all(count[v]["towards"] < len(room) for v in ROBUST_VARIANTS),
      "no block moves towards its graph's LE embedding in every construction where the test has room")
claim(bool(closer["diffusion"] < len(room) / 2 and closer["attention"] < len(room) / 2),
      "neither A - I nor plain attention ends closer in most of the constructions with room")
claim(len(turns) > 0, "in some constructions A - I peaks before the last layer and then turns away")

# %% tags=["remove-cell"]
claim(count["attention"]["away"] == 0 and count["attention"]["towards"] > len(room) / 2
      and count["diffusion"]["away"] > 0 and count["paper"]["away"] > 0,
      "plain attention moves towards the embedding in most constructions and away in none; only A - I and the "
      "paper's block ever move away")
_k10 = [f for f in rows if f["kappa"] == 10.0 and f["graph"] == "attention"]
claim(len(_k10) == len(thesis.QS) and all(f["start_above_random"] and not f["at_ceiling"]
                                          and set(f["moves"].values()) == {"towards"} for f in _k10),
      "at kappa = 10 the attention graph with its self-loops starts above the random level and every block moves "
      "towards its embedding at both q")

# %% [markdown]
# Of the {glue:text}`thesis_n` constructions ({glue:text}`thesis_n_kappas` values of $\kappa$,
# {glue:text}`thesis_n_graphs` graphs, {glue:text}`thesis_n_qs` values of $q$),
# {glue:text}`thesis_flat` start at the random level and {glue:text}`thesis_ceiling` at the ceiling,
# a mean cosine of at least {glue:text}`ceiling` before any block. Setting both aside leaves
# {glue:text}`thesis_room`, each starting from a real but imperfect alignment. In these, $A - I$
# moves towards its graph's LE embedding in {glue:text}`thesis_ai_towards` and away in
# {glue:text}`thesis_ai_away`, plain attention towards in {glue:text}`thesis_att_towards` and away
# in {glue:text}`thesis_att_away`: only $A - I$ and the paper's block ever move away. At the last
# layer $A - I$ ends closer in {glue:text}`thesis_ai_closer`, plain attention in
# {glue:text}`thesis_att_closer`, and {glue:text}`thesis_ties` are ties; in
# {glue:text}`thesis_ai_turns`, $A - I$ is closest at an earlier layer and then turns away by more
# than the tolerance. No block moves towards every graph's embedding, and neither ends closer in
# most constructions. The verdict on the attention graph depends on $\kappa$: at $\kappa = 10$ the
# same graph, self-loops included, starts well above the random level, and every block moves towards
# its embedding at both $q$.
#
# Centring matters: for the attention graph without self-loops at $\kappa = 30$ the first LE
# vector's component along $\mathbf 1$ is {glue:text}`const_share` of its length, and raw cosines at
# $q = 2$ ({glue:text}`raw_start` at layer 0; {glue:text}`raw_end_attention` and
# {glue:text}`raw_end_diffusion` at the end, plain attention and $A - I$) stay below the table's
# centred ones.

# %% [markdown]
# ### The control is a step size
#
# With the blocks' identity value and output weights, an $A - I$ block is a plain attention block
# with a longer step
# ([the transformer-block chapter](transformer_block.ipynb#plain-attention-changes-only-the-step-size)
# shows why), and so is the paper's block: all three are $X \leftarrow \Pi(X + s A X)$, with
# different $s$, so plain attention is no independent control for $A - I$. The figure measures the
# thesis test after the last block of plain attention over a range of steps $s$.

# %%
steps = {v: 2 * U.attention_step(ETA, v, D_Q, BETA) for v in U.STEP_FAMILY}
family_gap = {v: max(float((a - b).abs().max()) for a, b in
                     zip(paths[v], U.unroll(X0, N_STEPS, KAPPA, steps[v] / 2, BETA, "attention")))
              for v in ("diffusion", "paper")}
s_grid = sorted({float(s) for s in np.geomspace(0.1, 10.0, 9)} | set(steps.values()))
family_le = thesis.le_alignment({s: U.unroll(X0, N_STEPS, KAPPA, s / 2, BETA, "attention") for s in s_grid},
                                targets, qs=thesis.QS)

# %% tags=["hide-input"]
fig = figs.step_family_figure(family_le, steps, baseline, {
    "curve": "plain attention at step $s$, $q$ = {q}", "xlabel": "step $s$ of $\\Pi(X + s A X)$",
    "ylabel": "mean principal-angle cosine, last layer"}, NAMES)
describe(fig, f"{len(baseline)} panels, one per graph: how closely the latents after the last block of plain "
              "attention match the graph's Laplacian Eigenmaps embedding, as its step grows, with plain attention, "
              "A - I and the paper's block marked at their own steps, and the random level dotted.")
plt.show()

# %% tags=["remove-cell"]
_s = {v: 2 * U.attention_step(ETA, v, D_Q, BETA) for v in U.STEP_FAMILY}  # the steps s of Pi(X + s A X)
claim(bool(min(_s["diffusion"], _s["paper"]) > 3 * _s["attention"]),
      "at the book's eta = 0.4 the steps of A - I and the paper's block are several times longer than plain "
      "attention's")

# %% tags=["remove-cell"]
compared = thesis.step_family_facts(family_le, steps, baseline)  # the thesis test's rules, as in its table
for _v in U.STEP_FAMILY:
    glue(f"s_{_v}", f"{steps[_v]:.3g}")  # the introduction pastes them
glue("family_gap", sci(max(family_gap.values())))  # the introduction pastes it
glue("gap_diffusion", sci(family_gap["diffusion"]))
glue("gap_paper", sci(family_gap["paper"]))
glue("eta", f"{ETA:g}")
glue("d_q", str(D_Q))
glue("beta", f"{BETA:g}")
for _g, _q in (("attention", 2), ("attention", 10), ("pixels", 2), ("pixels", 10)):
    glue(f"change_{_g}_q{_q}", f"{compared[f'{_g}_q{_q}']['change']:+.3f}")
_att_level = {q: thesis.random_level(baseline["attention"][q]) for q in thesis.QS}
_att_end = {q: {v: float(family_le[steps[v]]["attention"][q][-1]) for v in ("attention", "diffusion")}
            for q in thesis.QS}
claim(bool(max(family_gap.values()) < TOL), "eight blocks of A - I and of plain attention at its step agree to rounding")
claim(not compared["attention_q2"]["room"] and not compared["attention_q10"]["room"]
      and max(_att_end[2].values()) <= _att_level[2] and min(_att_end[10].values()) > _att_level[10],
      "on the attention graph the latents start at the random level at both q, which the test sets aside; at q = 2 "
      "both steps end there, at q = 10 both end above it")
claim(all(compared[f"pixels_q{q}"]["room"] and compared[f"pixels_q{q}"]["closer"] == "attention" for q in thesis.QS),
      "with the pixels' graph the longer step ends lower at both q, by more than the test's tolerance")

# %% [markdown]
# With $\eta$ = {glue:text}`eta`, $d_q$ = {glue:text}`d_q` and $\beta$ = {glue:text}`beta` the steps are
# $s$ = {glue:text}`s_attention` (plain attention), {glue:text}`s_diffusion` ($A - I$) and
# {glue:text}`s_paper` (the paper's block). Eight blocks of $A - I$ and eight of plain attention at
# $s$ = {glue:text}`s_diffusion` end at most {glue:text}`gap_diffusion` apart (the paper's block:
# {glue:text}`gap_paper`), float64 rounding. From plain attention's step to $A - I$'s, the last
# layer's agreement with the pixels' graph falls by more than the tolerance at both $q$
# ({glue:text}`change_pixels_q2` at $q = 2$, {glue:text}`change_pixels_q10` at $q = 10$); with the
# attention graph it changes by {glue:text}`change_attention_q2` and {glue:text}`change_attention_q10`,
# from a start at the random level. Whatever the test finds between plain attention and $A - I$ is a
# finding about the step length.

# %% [markdown]
# ## The blocks as graph filters
#
# Held at one graph, every block except the exact one is a polynomial filter of its graph matrix
# ($A$, or $D^{-1/2} E D^{-1/2}$ for the symmetric block, which has the same eigenvalues). On an
# eigenvector with $(I - A) v = \lambda v$, one $A - I$ step multiplies the component by
# $1 - h\lambda$ ($h = 2\eta$), plain attention by $1 + h(1 - \lambda)$, the paper's block by
# $1 - h\lambda + 2\eta/(d_q + \beta)$. The figure draws each response relative to the constant mode
# ($\lambda = 0$) over the eigenvalues of $I - A$ at $X_0$ (grey), beside the diffusion flow
# $e^{-h\lambda}$ that one Euler step of size $h$ stands for. This predicts steps on the graph
# frozen at $X_0$ without LayerNorm; the real path below tests the prediction.

# %% tags=["hide-input"]
fig = figs.spectrum_figure(lam, {
    "attention": "plain attention", "diffusion": "A − I and symmetric", "paper": "the paper's block",
    "flow": r"the diffusion flow $e^{-h\lambda}$", "count": r"eigenvalues of $I - A$ at $X_0$ (count)",
    "xlabel": r"eigenvalue $\lambda$ of $I - A$ (graph frequency)",
    "ylabel_one": r"response of one step, relative to $\lambda = 0$",
    "title_one": r"one step ($\eta$ = {eta:.2f}, $h = 2\eta$)",
    "ylabel_n": r"$|\mathrm{{response}}|^{{{n_steps}}}$", "title_n": "after {n_steps} steps",
}, ETA, D_Q, BETA, N_STEPS)
describe(fig, "Two panels: the response of plain attention, A − I and the paper's block to each graph frequency "
              f"after one step and after {N_STEPS} steps, relative to the constant mode, over a histogram of the "
              "eigenvalues of I − A.")
plt.show()

# %% tags=["remove-cell"]
spectrum = E.spectrum_facts(lam, ETA, D_Q, BETA, N_STEPS)
glue("lam_mid", num(spectrum["mid"]))
glue("lam_top", num(spectrum["top"]))
for _v in ("diffusion", "attention", "flow"):
    glue(f"mid_{_v}", pct(spectrum[f"mid_{_v}"]))
    glue(f"top_{_v}", sci(spectrum[f"top_{_v}"]))
glue("h", num(spectrum["h"], 2))
glue("top_response", num(spectrum["top_response"]))
claim(not spectrum["removed"] and spectrum["top_response"] > 0,
      "at the top of the spectrum 1 - h lambda is smallest but still positive: no mode is removed in one step")
claim(bool(spectrum["top_diffusion"] < spectrum["top_flow"] < spectrum["top_attention"]
           and spectrum["mid_diffusion"] < spectrum["mid_flow"] < spectrum["mid_attention"]),
      "A - I keeps less of each mode than the flow, and plain attention more")

# %% [markdown]
# The eigenvalues of $I - A$ at $X_0$ have median {glue:text}`lam_mid` and reach {glue:text}`lam_top`.
# On the frozen graph, after eight steps a mode at the median keeps {glue:text}`mid_diffusion` of its
# size relative to the constant mode under $A - I$ ({glue:text}`mid_attention` under plain attention,
# {glue:text}`mid_flow` under the flow), and a mode at the top keeps {glue:text}`top_diffusion`
# ({glue:text}`top_attention` and {glue:text}`top_flow`). Since $1 - h\lambda < e^{-h\lambda}$ for
# every $\lambda > 0$, each Euler step damps every mode more than the diffusion over the same time
# $h$ = {glue:text}`h` would, most at the top of the spectrum, where $1 - h\lambda$ is smallest
# ({glue:text}`top_response`, still positive): the over-smoothing the frozen picture predicts for
# $A - I$.

# %% tags=["remove-cell"]
retained = figs.retention_facts(retention)
glue("n_modes", str(retained["n_modes"]))
for _k in ("diffusion_top", "diffusion_top_pred", "attention_top", "attention_top_pred"):
    glue(_k, sci(retained[_k]))
for _k in ("diffusion_middle", "diffusion_middle_pred", "attention_middle", "attention_middle_pred"):
    glue(_k, num(retained[_k], 2))
_filter_ratio = float(f"{retained['filter_ratio']:.2g}")  # the ratio of the two printed predictions, to 2 digits
glue("filter_ratio", f"{_filter_ratio:,.0f}")
glue("factor", f"{retained['factor']:g}")
glue("real_top_ai", sci(retention["diffusion"]["top"]["measured"]))  # the introduction pastes these three
glue("real_top_att", sci(retention["attention"]["top"]["measured"]))
glue("frozen_top_ai", sci(retention["diffusion"]["top"]["predicted"]))
claim(bool(retained["diffusion_top_ratio"] > 100), "A - I's real path keeps far more (over a hundred times) than the "
                                                 "frozen graph's prediction")
claim(not retained["attention_top_above"] and not retained["attention_top_below"],
      "plain attention's real path is within a factor of 2 of its prediction")
claim(not retained["top_above"] and not retained["top_below"],
      "on the real path A - I keeps within a factor of 2 of what plain attention keeps of the top of the spectrum")
claim(all(retained[f"{v}_middle"] < retained[f"{v}_middle_pred"] for v in ("diffusion", "attention")),
      "around the median both blocks keep less than the frozen graph predicts")
claim(all(5 < retained[f"{v}_middle"] / retained[f"{v}_top"] < 20 for v in ("diffusion", "attention")),
      "the top modes keep about ten times less than the modes around the median, under both blocks")
# where A - I's real path leaves its prediction, and what refills the top modes
_ai = retention["diffusion"]["steps"]["top"]
_floor = _ai["measured"][3:]  # from the third step on


def _within(a, b, factor=retained["factor"]):
    return max(a, b) < factor * min(a, b)


glue("ai_top_2", sci(_ai["measured"][2]))
glue("ai_top_2_pred", sci(_ai["predicted"][2]))
glue("ai_floor_min", sci(_floor.min()))
glue("ai_floor_max", sci(_floor.max()))
glue("frozen_ln_top", sci(frozen_ln["top"]["measured"]))
claim(all(_within(_ai["measured"][t], _ai["predicted"][t]) for t in (1, 2)) and _floor.max() < 2 * _floor.min()
      and not _within(_ai["measured"][3], _ai["predicted"][3]),
      "A - I's top modes follow the prediction for two steps, then stop falling: within a factor of 2 from the third "
      "step on")
claim(bool(frozen_ln["top"]["measured"] < retained["diffusion_top"] / 4),
      "with the graph held at X_0 and LayerNorm kept, the top modes fall far lower than on the real path")
claim(_within(retained["attention_top_pred"], _floor.min()),
      "plain attention's prediction lies near A - I's floor, within a factor of 2")

# %% [markdown]
# The real blocks recompute the graph at every step and apply LayerNorm. Measured along $A$'s left
# eigenvectors (which read each mode off exactly, although $A$'s eigenvectors are not orthogonal),
# relative to the constant mode, layer 8 against layer 0, the {glue:text}`n_modes` top modes keep a
# median {glue:text}`diffusion_top` under $A - I$ and {glue:text}`attention_top` under plain
# attention, about ten times less than the median modes ({glue:text}`diffusion_middle` and
# {glue:text}`attention_middle`; predicted {glue:text}`diffusion_middle_pred` and
# {glue:text}`attention_middle_pred`). Both blocks lose most of the top, but $A - I$ no more than
# plain attention, although their frozen filters differ there by a factor of about
# {glue:text}`filter_ratio`. Plain attention stays within a factor of {glue:text}`factor` of its
# prediction ({glue:text}`attention_top_pred`). $A - I$ follows its prediction for two steps
# ({glue:text}`ai_top_2`, predicted {glue:text}`ai_top_2_pred`), then stops falling: from the third
# step on it keeps between {glue:text}`ai_floor_min` and {glue:text}`ai_floor_max`, far above its
# predicted {glue:text}`diffusion_top_pred`. The moving graph refills $X_0$'s top modes: with the
# graph held at $X_0$ and LayerNorm kept, they fall to {glue:text}`frozen_ln_top`. Plain attention's
# prediction lies near that floor already.

# %% tags=["remove-cell"]
glue("paper_ple_cos", num(alignment["ple"]["paper"]["cosine"]))
glue("paper_ple_tangent", num(alignment["ple"]["paper"]["tangent_cosine"]))
claim("paper" not in exact["ple"] and "exact" in exact["ple"] and "exact" in exact["phi"],
      "the paper's block is not an exact step of its own objective; the exact block is, of the ELBO and of Phi")
claim({u for u in fields if u in VARIANTS} == {"exact"}, "of the five blocks only the exact block is a gradient field")
claim("diffusion" in exact["hopfield"], "A - I is exactly the Hopfield energy's descent step")
claim(bool(att_all.max() < 0.5) and closer["diffusion"] < len(room) / 2,
      "the title claim is not borne out on the attention graph with self-loops at kappa = 30 (no block near its "
      "embedding), and over the wider set no rule favours A - I")

# %% [markdown]
# ## Summary
#
# - **Shown: which step each block takes.** The exact block is the exact gradient step of the PLE
#   ELBO and of $\Phi$, and the only gradient field of the five; the paper's block is not an exact step
#   of its own objective (cosine {glue:text}`paper_ple_cos`, {glue:text}`paper_ple_tangent` after
#   LayerNorm). $A - I$ is exactly the Hopfield step; the other five readings have no exact block,
#   and no block comes near CRATE's or the sphere's step.
# - **Shown: what the energies do.** Their direction separates nothing
#   ([the harness](energies.ipynb#every-energy-along-the-mnist-path)); the log-determinant, which
#   PLE's regulariser raises, falls under every block. With each layer's own graph the PLE ELBO
#   falls under plain attention ({glue:text}`ple_first` to {glue:text}`ple_attention_last`), and
#   $\Phi$ ends highest under $A - I$, not under its own ascent. The effective rank falls from
#   {glue:text}`rank_first` to between {glue:text}`rank_last_min` and {glue:text}`rank_last_max`.
# - **Shown: the title claim** fails on the attention graph with its self-loops at $\kappa = 30$,
#   though not at $\kappa = 10$; over four graphs and three sharpnesses only $A - I$ and the paper's
#   block ever move away, and no rule favours $A - I$. On the real path $A - I$ loses the top of the
#   spectrum no faster than plain attention, unlike the frozen-graph prediction.
# - **Rests on** the paper's settings (one MNIST sample, $\kappa = 30$, $\eta = 0.4$, eight steps),
#   the mean principal-angle cosine, and the identity weights, under which $A - I$ is
#   [plain attention with a longer step](energies.ipynb#the-control-is-a-step-size).
# - **Does not show** what trained weights do ([the trained-transformers
#   chapter](trained_transformers.ipynb) measures that) or what the causal mask changes beyond the
#   proposition.

# %% tags=["remove-cell"]
# exercise 1: the three fields are 2 A X - c X, their Jacobians J_0 - c I; N = n d_q, the identity's squared norm
N_J = X0[:300].numel()
_trace = (asymmetry["attention"]["jacobian"] ** 2 + 4 * N_J - asymmetry["diffusion"]["jacobian"] ** 2) / 4
c_star, c_paper = _trace / N_J, 2 - 2 / (D_Q + BETA)
claim(bool(c_star < c_paper < 2 and asymmetry["paper"]["jacobian"] < asymmetry["diffusion"]["jacobian"]),
      "the norm's minimiser c* lies below the paper's c, which lies below 2, and the paper's block's Jacobian is "
      "the smaller")

# %% [markdown]
# ## Exercises
#
# 1. The fields of plain attention, $A - I$ and the paper's block are $2 A X - c X$ with $c = 0$, 2
#    and $2 - 2/(d_q + \beta)$. Show that $\lVert J_0 - c I \rVert_F^2$ is smallest at
#    $c^* = \operatorname{tr} J_0 / N$ ($N = 300 \cdot 128$), estimate $c^*$ from the gradient-field
#    table, and say why the paper's block has the smallest Jacobian.
# 2. With the graph held fixed, show that the symmetric block's direction $2 (A_s - I) X$,
#    $A_s = D^{-1/2} E D^{-1/2}$, descends the Dirichlet energy $\operatorname{tr}(X^\top (I - A_s) X)$
#    exactly. Why does this fail for $A - I$, and why is the symmetric block still not a gradient field?
# 3. Why can a Sinkformer not be causal? Find the only lower-triangular doubly stochastic matrix
#    with positive diagonal.
#
# :::{dropdown} Solution 1
# $\lVert J_0 - c I \rVert_F^2 = \lVert J_0 \rVert_F^2 - 2c \operatorname{tr} J_0 + c^2 N$, a parabola
# in $c$ with its minimum at $c^* = \operatorname{tr} J_0 / N$. At $c = 2$ it gives
# $\operatorname{tr} J_0 = (\lVert J_0 \rVert_F^2 + 4N - \lVert J_2 \rVert_F^2)/4$; with the table's
# norms, $c^*$ comes out below the paper's $c = 2 - 2/(d_q + \beta)$, which lies between $c^*$ and 2,
# so its Jacobian is smaller than $A - I$'s, and both are far smaller than plain attention's
# ($c = 0$). The norms are estimated from random probes, so $c^*$ is an estimate too.
# :::
#
# :::{dropdown} Solution 2
# $A_s$ is symmetric, so the gradient of $\operatorname{tr}(X^\top (I - A_s) X)$ with $A_s$ held fixed
# is $2 (I - A_s) X$, and the descent direction is $2 (A_s - I) X$, the symmetric block's. For
# $A - I$ the same energy with $I - A$ has gradient $(L + L^\top) X$, not $2 L X$, because $A$ is not
# symmetric: its rows sum to 1, its columns do not. Exactness with the graph held fixed is not a
# gradient field: $A_s$ moves with $X$, and the field $X \mapsto 2 (A_s(X) - I) X$ has a Jacobian with
# an antisymmetric part (the gradient-field table).
# :::
#
# :::{dropdown} Solution 3
# Row 1 of a lower-triangular matrix has a single entry, which must be 1 for the row to sum to 1;
# then column 1 already sums to 1, so every other entry of column 1 is 0. Repeating the argument
# row by row leaves the identity: a causal doubly stochastic attention would let every token attend
# only to itself. A causal $E = e^S$ is positive on and below the diagonal, and rescaling its rows
# and columns keeps those entries positive, so no rescaling of it is doubly stochastic; Sinkhorn's
# iteration on it only tends to the identity. That is why the Sinkformer reading has no masked form.
# :::
