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
# of the paper's own objective: the attention is held fixed (objection 3), and $2 L X$ is not the
# gradient of $\operatorname{tr}(X^\top L X)$ (objection 1). That leaves a question the paper's
# title raises and the objections do not answer: what *does* a block optimise, if anything? This
# paper is not the only one to read a transformer block as a step of a gradient method. Modern
# Hopfield networks {cite:p}`ramsauer2020hopfield` and the Energy Transformer
# {cite:p}`hoover2023energy` read attention as descent on a log-sum-exp energy; tokens on the
# sphere {cite:p}`geshkovski2023perspective` follow an interaction energy and cluster; CRATE
# {cite:p}`yu2023crate` reads attention as a step that compresses a coding rate; Sinkformers
# {cite:p}`sander2022sinkformers` make attention doubly stochastic so that its layers become a
# gradient flow; and graph-diffusion models, GRAND {cite:p}`chamberlain2021grand`, GFSA
# {cite:p}`choi2023gfsa` and the Differential Transformer {cite:p}`ye2024differential`, are close
# relatives of $A - I$. This chapter puts all of them in one harness, on the same latents, with the
# same measure of what LayerNorm keeps of a step, and then tests the paper's title claim head-on.
#
# **In this chapter you will learn**
#
# - a proposition: the stop-gradient step is the *exact* gradient step of another objective,
#   $\Phi$, whose data term is the log-sum-exp energy of modern Hopfield networks;
# - which of the book's five blocks is an exact gradient step of which reading's energy, and which
#   of them is the gradient of any energy at all;
# - what happens to every reading's energy along the eight MNIST steps;
# - whether a block moves the latents towards the Laplacian Eigenmaps embedding, the claim in the
#   paper's title, against the level of a random subspace;
# - why the explicit Euler step over-smooths, from the frequency response of each block on the
#   graph spectrum.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from probdr_lite.chapters import energies as E
from probdr_lite.chapters import objections as O
from probdr_lite.chapters import energies as thesis
from probdr_lite import unrolled as U
from probdr_lite.data import load_mnist
from probdr_lite.presentation.figures import readings as figs
from probdr_lite.presentation.prose import fill, glue, sci
from probdr_lite.presentation.figures.block import make_toy
from probdr_lite.presentation.style import describe

# %% [markdown]
# ## The setting
#
# Everything runs on the MNIST path of [the objections chapter](objections.ipynb): the stratified
# 2,000 test images (200 per class) embedded with the seeded Gaussian projection $W_E$, latents
# of width $d_q = 128$, sharpness $\kappa = 30$, step $\eta = 0.4$, $\beta = 1$, eight steps of one
# shared block, no mask, for each of the five blocks of
# [the transformer-block chapter](transformer_block.ipynb): plain attention $2 A X$, $A - I$
# ($2 (A - I) X$), the paper's block, the exact block $2 C^{-1} X - (L + L^\top) X$ and the
# symmetric block. The toy of that chapter (two moons lifted to $d_q = 16$) is the small second
# data set. All the numbers of the chapter come from the next cell.

# %%
D_Q, KAPPA, ETA, BETA, N_STEPS = 128, 30.0, 0.4, 1.0, 8
VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric")
KAPPAS2 = (100.0, 1000.0, 10000.0)  # the second map's sharpness (Differential Transformer)

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
# the thesis: the principal subspace of X_t against the Laplacian Eigenmaps embeddings
targets = thesis.le_targets(images, X0, KAPPA, BETA)
le = thesis.le_alignment(paths, targets)
baseline = thesis.random_baseline(targets)
erank = thesis.effective_rank_path(paths)
participation = thesis.participation_ratio(targets["attention"])
# the blocks as graph filters, and A - I as a difference of attention maps
lam = E.attention_spectrum(X0, KAPPA, BETA)
modes = E.graph_modes(X0, KAPPA, BETA)
retention = {v: E.mode_retention(paths[v], ETA, D_Q, BETA, KAPPA, v, modes=modes) for v in ("attention", "diffusion")}
diff_gap = E.differential_gap(X0, KAPPA, KAPPAS2, BETA)

# %%
# How the tables, figures and sentences name each block (MathJax where it is maths), each reading (with the paper it
# comes from, cited in the text), each reading's energy (A_t, X_t: held at the step's start; E.SENSE says which way
# the reading moves it) and each graph of the thesis test.
NAMES = {
    "variant": {"attention": "plain attention", "diffusion": "$A - I$", "paper": "the paper's block",
                "exact": "the exact block", "symmetric": "the symmetric block",
                "energy_transformer": r"$(A + A^\top) X$", "sinkformer": "Sinkhorn attention $P X$"},
    "reading": {"ple": "PLE ELBO, stop-gradient (Ravuri and Lawrence)", "phi": r"$\Phi$ (derived here)",
                "hopfield": "modern Hopfield network (Ramsauer et al.)",
                "energy_transformer": "Energy Transformer (Hoover et al.)",
                "sphere": "tokens on the sphere (Geshkovski et al.)", "crate": "CRATE, coding rate (Yu et al.)",
                "sinkformer": "Sinkformer (Sander et al.)", "grand": "GRAND, Dirichlet energy (Chamberlain et al.)",
                "gfsa": "GFSA, graph filter (Choi et al.)", "diff_transformer": "Differential Transformer (Ye et al.)"},
    "energy": {
        "ple": r"$\log\det C - \operatorname{tr}(X^\top (I - A_t) X)$",
        "phi": r"$\log\det C - \lVert X \rVert_F^2 + \tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}$",
        "hopfield": r"$\tfrac12 \lVert X \rVert_F^2 - \tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}(X, X_t)$",
        "energy_transformer": r"$-\tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}$",
        "sphere": r"$\tfrac{d_q}{2\kappa n^2}\sum_{ij} e^{S_{ij} - \kappa}$",
        "crate": r"$\tfrac12 \log\det(I + X X^\top / \beta)$",
        "sinkformer": r"$\tfrac{d_q}{2\kappa}\min_f \big[\sum_{ij} e^{f_i + S_{ij} + f_j} - 2\sum_i f_i\big]$",
        "grand": r"$\operatorname{tr}(X^\top (I - A_t) X)$",
        "gfsa": r"none: a filter $w_0 I + w_1 A + w_K A^K$",
        "diff_transformer": r"none: a difference $A(\kappa) - \lambda A(\kappa_2)$",
    },
    "graph": {"attention": "LE of the attention graph at $X_0$", "pixels": "LE of the pixels' k-NN graph",
              "attention_no_loops": "LE of the attention graph at $X_0$ without self-loops",
              "latents_knn": "LE of the latents' k-NN graph at $X_0$"},
    "graph_short": {"attention": "$W = e^S$", "attention_no_loops": "$W$ without self-loops",
                    "latents_knn": "k-NN of $X_0$", "pixels": "k-NN of the pixels"},
    "sense": {1: "raised", -1: "lowered"},
    "move": {"towards": "↑", "away": "↓", "still": "·"},
    "none": "none",  # a table cell's list of no block
    "where": "{graph} at $\\kappa = {kappa:g}$",  # a construction of the thesis test, in the sentences about them
}

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
# The factor $d_q/\kappa$ cancels the $\kappa/d_q$ of the logits; the proof never uses the
# symmetry of $A$, so it holds with the causal mask as well. `E.phi` computes $\Phi$,
# `E.phi_gradient` the closed form (through the block's own kernel), and autograd compares them:

# %%
facts = figs.proposition_facts({
    f"toy (${toy.X0.shape[0]}$ points, $d_q = {toy.X0.shape[1]}$), " + r"$\kappa$ from 1 to 100, $\beta$ from 0.1 "
    "to 10, no mask": float(gaps_toy[0].max()),
    "the same with the causal mask": float(gaps_toy[1].max()),
    f"MNIST latents (${X0.shape[0]}$ images, $d_q = {D_Q}$, $\\kappa = {KAPPA:g}$, $\\beta = {BETA:g}$)":
        float(gaps_mnist.max()),
})
cases = "; ".join(fill("{case}: {gap:sci}", c) for c in facts["cases"])
display(Markdown(fill(
    "Autograd's $\\nabla\\Phi$ against the closed form $2 C^{{-1}} X - (L + L^\\top) X$ (relative difference, "
    "float64): {cases}. "
    + ("Every gap is below {tol:sci0}: the two are the same to rounding." if facts["same"] else
       "The largest gap, {worst:sci}, is above {tol:sci0}: the check fails."),
    facts, cases=cases)))

# %% [markdown]
# Two consequences reach back to [the objections](objections.ipynb).
#
# - **Objection 3 becomes a choice of objective.** Holding $A$ fixed does not make the step an
#   approximation of some gradient: it *is* a gradient, of $\Phi$. The choice is between
#   $\Phi$ and the ELBO with the graph differentiated, $F_{\mathrm{full}}$. $\Phi$'s data term is
#   the log-sum-exp energy that modern Hopfield networks {cite:p}`ramsauer2020hopfield` and the
#   Energy Transformer {cite:p}`hoover2023energy` build on, so the paper's stop-gradient step is
#   an exact step on a Hopfield-type energy plus the log-determinant of ProbDR.
# - **Objection 1 gets a remainder.** $\tfrac{d_q}{\kappa}\sum_i \operatorname{logsumexp}_j
#   S_{ij}$ has gradient $(A + A^\top) X$, so plain attention's $A X$ is half of it plus the
#   antisymmetric remainder $(A - A^\top) X / 2$. The objections chapter measures the size of that
#   remainder along the MNIST steps.
#
# ## The readings, one by one
#
# Each reading names an energy and says which way its update moves it. In the book's symbols
# ($S_{ij}(X, X_t) = \tfrac{\kappa}{d_q} x_i^\top x_{t,j} - \beta [i = j] + M_{ij}$ where part of
# the state is held at the start of a step, $X_t$):
#
# - **The paper's PLE ELBO, with the stop-gradient** {cite:p}`ravuri2025transformers`:
#   $F(X; A_t) = \log\det C - \operatorname{tr}(X^\top (I - A_t) X)$, twice the ELBO with the graph
#   held at the step's start. It is *raised*; its gradient step is the exact block by construction.
# - **$\Phi$**, above: raised; the exact block again, now with nothing held fixed.
# - **Modern Hopfield networks** {cite:p}`ramsauer2020hopfield`: each token is a query $x_i$ against
#   stored patterns, here the tokens at the step's start, with energy
#   $\tfrac12 \lVert X \rVert_F^2 - \tfrac{d_q}{\kappa}\sum_i \operatorname{logsumexp}_j S_{ij}(X, X_t)$,
#   *lowered*. Its gradient at $X_t$ is $X_t - A X_t = L X_t$, so the $A - I$ block is exactly its
#   gradient descent step; at $\eta = 1/2$ that step is $X \leftarrow A X$, the Hopfield
#   retrieval step itself. On the LayerNorm sphere $\lVert X \rVert_F^2 = n d_q$ is constant, so
#   after LayerNorm plain attention, $A - I$ and the paper's block step in the same direction to
#   first order, but not the same distance: LayerNorm (without its affine part) forgets a positive
#   factor, so all three are $\Pi(X + s A X)$, with $s = 2\eta$ for plain attention,
#   $2\eta / (1 - 2\eta)$ for $A - I$ and $2\eta / (1 - 2\eta + 2\eta / (d_q + \beta))$ for the
#   paper's block, the identity the transformer-block chapter proves. At the book's $\eta = 0.4$
#   the last two steps are several times longer than plain attention's.
# - **The Energy Transformer** {cite:p}`hoover2023energy`: the attention energy
#   $-\tfrac{d_q}{\kappa}\sum_i \operatorname{logsumexp}_j S_{ij}$ of *all* tokens at once, keys
#   included, *lowered*; its descent direction is $(A + A^\top) X$, the update the objections chapter
#   found hiding in objection 1.
# - **Tokens on the sphere** {cite:p}`geshkovski2023perspective`: the interaction energy
#   $\tfrac{d_q}{2\kappa n^2}\sum_{ij} e^{S_{ij} - \kappa}$ (the factor $e^{-\kappa}$ only keeps it
#   finite), which the tokens *raise* as they cluster. Its gradient is
#   $(E' + E'^\top) X / 2n^2$ with $E' = e^{S - \kappa}$. Without a mask $E'$ is symmetric, and
#   row $i$ of the gradient is $D_i (A X)_i$ up to a constant: softmax attention divides each token's
#   pull by its degree $D_i$, so plain attention follows this gradient only in a metric weighted by
#   the degrees, not in the Euclidean one. With the causal mask $E'$ is not symmetric and that
#   reading fails.
# - **CRATE** {cite:p}`yu2023crate`: the coding rate $R(X) = \tfrac12 \log\det(I + X X^\top / \beta)$
#   (CRATE's precision $\epsilon$ set by $\epsilon^2 = \beta d_q / n$). CRATE's objective has two
#   parts: it *raises* $R(X)$ itself (expansion) and *lowers* $\sum_k R(U_k^\top X)$, the rates of
#   the tokens' projections onto its heads' subspaces (compression); its attention is a step on the
#   compression term. Here $R = \tfrac12 (\log\det C - n \log\beta)$, the log-determinant of the PLE
#   ELBO itself, and $\nabla R = C^{-1} X$: ProbDR's regulariser is CRATE's *expansion* term, raised
#   by both. Only for a single head with $U = I$ is the compression term $R$ itself, so that
#   ProbDR's regulariser raises the very quantity CRATE's attention lowers. CRATE reaches attention
#   only after a Neumann-series approximation of $C^{-1}$ and a softmax in place of the Gram matrix,
#   so no block need be its exact step.
# - **Sinkformers** {cite:p}`sander2022sinkformers`: Sinkhorn's algorithm rescales $E = e^S$ into a
#   symmetric doubly stochastic $P = \operatorname{diag}(e^f) E \operatorname{diag}(e^f)$. For $n$
#   points the energy is the value of that rescaling problem,
#   $\tfrac{d_q}{2\kappa}\min_f \big[\sum_{ij} e^{f_i + S_{ij} + f_j} - 2\sum_i f_i\big]$ (derived
#   here), whose gradient is $P X$; it is *raised*. The book's symmetric block
#   $D^{-1/2} E D^{-1/2}$ is the first iterate, from $u = 1$, of the *damped* symmetric scaling
#   $u \leftarrow (u / E u)^{1/2}$ (with $P = \operatorname{diag}(u) E \operatorname{diag}(u)$),
#   not its limit; the plain iteration $u \leftarrow 1 / (E u)$ gives $D^{-1} E D^{-1}$ instead. A
#   causal $E$ has no doubly stochastic rescaling at all (its entries below the diagonal stay
#   positive under any rescaling, and the only lower-triangular doubly stochastic matrix is the
#   identity, which Sinkhorn's iteration on it only approaches), so this reading has no masked form.
# - **GRAND** {cite:p}`chamberlain2021grand`: the attention diffusion
#   $dX/d\tau = (A(X) - I) X$, whose explicit Euler step is the $A - I$ block. Its energy is the
#   Dirichlet energy $\operatorname{tr}(X^\top (I - A_t) X)$ (on the sphere, half the weighted sum of
#   squared distances), *lowered*; but its gradient is $(L + L^\top) X$, so $A - I$ descends it
#   exactly only when $A$ is symmetric: objection 1 again.
# - **GFSA** {cite:p}`choi2023gfsa` replaces $A$ by a matrix polynomial $w_0 I + w_1 A + w_K A^K$
#   and the **Differential Transformer** {cite:p}`ye2024differential` by a difference of two
#   attention maps. Neither names an energy. The residual blocks here are GFSA filters with
#   $w_K = 0$ ($A - I$ is $w_0 = 1 - 2\eta$, $w_1 = 2\eta$), and $A - I$ is a difference of two maps
#   whose second attends only to itself; the last sections measure both.
#
# `E.energy` gives each energy as a differentiable function and `E.energy_gradient` its gradient in
# closed form; the unit tests compare the two with autograd for every reading, with and without the
# mask. Which block takes which reading's step? The table gives the cosine of each block's direction
# with the reading's own step at $X_0$, in the full space and after LayerNorm (the tangent parts
# that [the transformer-block chapter](transformer_block.ipynb) introduced):

# %%
display(Markdown(figs.alignment_table(alignment, {
    "reading": "reading", "exact": "exact step of", "also": "; after LayerNorm also {names}"}, NAMES, caption=(
    "each cell: cosine of the block's step with the reading's step (sense × gradient) at $X_0$, in the full space / "
    "after LayerNorm (tangent parts)")).to_markdown()))

# %% [markdown]
# Exactness is a strong test, and most readings pass it for no block. A weaker question is whether
# an update is the gradient of *some* energy. A smooth field $X \mapsto \Delta(X)$ is a gradient
# exactly when its Jacobian is symmetric (the Jacobian is then the energy's Hessian).
# `E.gradient_field_asymmetry` compares $u^\top J v$ with $v^\top J u$ for random directions,
# with two Jacobian-vector products by autograd, on the first 300 MNIST latents:

# %%
fields = figs.gradient_field_facts(asymmetry, NAMES)
display(Markdown(figs.gradient_field_table(asymmetry, {
    "update": "update", "field": "a gradient field?", "yes": "yes", "no": "no",
    "asymmetry": r"Jacobian asymmetry $\max \lvert u^\top J v - v^\top J u \rvert / "
                 r"(\lVert Jv \rVert + \lVert Ju \rVert)$",
}, NAMES, caption=fill(
    "a field is the gradient of an energy exactly when its Jacobian is symmetric; 'yes' means below {tol:sci0}",
    fields)).to_markdown()))

# %% tags=["remove-input"]
display(Markdown(fill(
    ("The direction field of {fields:listing} is a gradient field: its Jacobian is symmetric to {fields_max:sci}. "
     if fields["one_field"] else
     "The direction fields of {fields:listing} are gradient fields: their Jacobians are symmetric to "
     "{fields_max:sci}. " if fields["any_field"] else
     "None of the updates is a gradient field. ")
    + ("Those of {others:listing} are not: their asymmetry is {others_min:sci} or more, far above rounding, so no "
       "energy whatever has them as its gradient (in the Euclidean metric)." if fields["any_other"] else ""),
    fields)))

# %% [markdown]
# ## Every energy along the MNIST path
#
# Now run the harness: at every one of the eight steps of every block, does each energy go up or
# down? For the readings that hold part of the state fixed (the PLE ELBO, Hopfield, GRAND) the
# step from $X_t$ is judged with that part held at $X_t$, as the readings themselves do.

# %%
display(Markdown(figs.harness_table(harness, {
    "reading": "reading", "energy": "energy", "sense": "its reading",
    "rise": "raised {T}/{T}", "fall": "lowered {T}/{T}", "mixed": "raised {n_rise}/{T}, lowered {n_fall}/{T}",
}, NAMES, caption=(
    "how many of the steps along the MNIST path raise or lower each energy; the third column says which way the "
    "reading itself moves it")).to_markdown()))
fig = figs.energy_path_figure(harness, {
    "title": "{reading}\n(its reading: {arrow}{frozen})", "arrow": {1: "↑", -1: "↓"}, "frozen": ", frozen per step",
    "xlabel": "layer $t$", "ylabel": r"$E(X_t) - E(X_0)$"}, NAMES)
describe(fig, fill("{n_energies} panels, one per energy reading, each showing how far every block's steps move that "
                   "energy from its value at layer 0, layer by layer.", figs.harness_facts(harness)))
plt.show()

# %% tags=["remove-input"]
moved = figs.harness_facts(harness, NAMES)
lines = [fill(
    ("Along the {n_steps} steps, each of the {n_blocks} blocks moves each of the {n_energies} energies the way its "
     "reading says, at every step. " if moved["uniform"] else
     "Along the {n_steps} steps, every block moves "
     + ("none of the {n_energies} energies" if moved["none_all_agree"] else
        "{n_all_agree} of the {n_energies} energies")
     + " the way their readings say at every step"
     + ("" if moved["none_all_agree"] else " ({all_agree:listing})") + ". ")
    + ("Monotonicity along the path therefore cannot tell these readings apart, nor the blocks: each block raises "
       "every energy whose reading raises it and lowers every one whose reading lowers it. What separates them is "
       "which block takes each reading's gradient step exactly (the table above)." if moved["uniform"] else ""),
    moved)]
lines += [fill("{reading}: "
               + ("only {agree:listing} " + ("moves" if row["one_agrees"] else "move")
                  + " it the reading's way at every step. " if row["some_agree"] else
                  "no block moves it the reading's way at every step. "), row) for row in moved["others"]]
display(Markdown("".join(lines)))
objectives = figs.objectives_facts(harness, NAMES)
lines = []
for r in objectives["readings"]:
    ends = "; ".join(fill("{variant} {first:num0} → {last:num0} ({trend})", e) for e in r["ends"])
    lines.append(fill(
        "{reading}, layer 0 → layer {n_steps}: {ends}."
        + (" For {undone:listing} every step " + ("raises" if r["raised"] else "lowers") + " the value computed "
           "with the graph it started from, yet the value with each layer's own graph does not follow: the change of "
           "graph between steps undoes what the steps gain." if r["any_undone"] else ""),
        r, ends=ends))
display(Markdown(" ".join(lines)))

# %% [markdown]
# ## The thesis, tested head-on
#
# The paper's title says that a transformer block performs Laplacian Eigenmaps. If it did, the
# latents would turn towards the Laplacian Eigenmaps embedding of the graph the block uses: the
# top-$q$ principal subspace of $X_t$ would approach the span of the $q$ smallest non-trivial
# generalised eigenvectors of $L v = \lambda D v$. Two graphs are candidates: the attention graph
# of the first block, $W = e^{S}$ at $X_0$ (its random walk is the first $A$, so its LE embedding
# is the set of modes a diffusion step damps least), and the pixels' $k$-nearest-neighbour graph of
# [the Laplacian Eigenmaps chapter](laplacian_eigenmaps.ipynb), with that chapter's settings (10
# neighbours, 0/1 weights). The measure is the mean cosine of the principal angles between the two
# subspaces (`probdr_lite.metrics.subspace_agreement`, the one the ELBO chapter uses), for
# $q = 2, 5, 10$. Plain attention, which has no Laplacian in it, is the control, and random
# $q$-dimensional subspaces give the level of no alignment at all (about $\sqrt{q/n}$). The
# effective rank of $X_t$, $\exp$ of the entropy of its normalised singular values
# {cite:p}`roy2007effective`, tracks the rank collapse of deep attention {cite:p}`dong2021attention`.

# %%
display(Markdown(figs.thesis_table(le, baseline, erank, {
    "block": "block", "graph": "{graph}, $q = {q}$", "rank": "effective rank of $X_t$", "random": "random subspace",
}, NAMES, caption=fill(
    "layer 0 → layer {n_steps}: mean cosine of the principal angles between the top-$q$ principal subspace of $X_t$ "
    "and the LE embedding (1: the same subspace); random: mean ± sd over random subspaces", n_steps=N_STEPS))
                 .to_markdown()))
fig = figs.thesis_figure(le, baseline, {"random": "random subspace", "title": "{graph}, $q$ = {q}",
                                        "xlabel": "layer $t$", "ylabel": "mean principal-angle cosine"}, NAMES)
describe(fig, fill("{n_panels} panels, one per graph and subspace dimension q, each showing per layer how closely "
                   "every block's principal subspace matches the Laplacian Eigenmaps embedding, against the level of "
                   "a random subspace.", figs.panel_facts(baseline)))
plt.show()


# %% tags=["hide-input"]
def thesis_paragraphs(facts):
    """The thesis test in words, from figs.thesis_facts (also exercise 2's hidden cell)."""
    paragraphs = []
    for graph in facts["graphs"]:
        sentences = []
        for q in graph["qs"]:
            ends = ", ".join(fill("{variant} {end:num}", e) for e in q["ends"])
            sentences.append(fill(
                ("for $q = {q}$ every block stays at the level of a random subspace at every layer ({low:num} to "
                 "{high:num}, against {mean:num} ± {sd:num})") if q["random"] else
                "for $q = {q}$ the latents start at {start:num} (random: {mean:num} ± {sd:num}) and end at {ends}"
                + (" (above the random level, but far from 1, which would mean the same subspace)" if q["far"] else "")
                + "; "
                + ("{up:listing} " + ("moves" if q["one_up"] else "move") + " towards it" if q["any_up"] else
                   "no block moves towards it by more than {rel_tol:pct}")
                + (", {down:listing} away from it" if q["any_down"] else "")
                + ", and the closest at the end is {best}",
                q, ends=ends))
        paragraphs.append(fill("**{graph}:** {sentences}.", graph, sentences="; ".join(sentences)))
    paragraphs.append(fill(
        "The attention graph's smallest non-trivial generalised eigenvalues are {lam_min:sci} to {lam_max:sci}"
        + (", and its LE eigenvectors have participation ratios {p_min:num1} to {p_max:num1} (1 means a single image "
           "carries the whole vector)" if facts["has_participation"] else "")
        + (": the graph is close to a set of separate points, and its Laplacian Eigenmaps embedding picks out "
           "isolated images, which no principal subspace of the latents comes near." if facts["isolated"] else
           ": the graph is connected, and its eigenvectors spread over many images."),
        facts))
    ranks = ", ".join(fill("{rank:num1} ({variant})", v) for v in facts["ranks"])
    paragraphs.append(fill(
        "The effective rank of $X_t$ falls from {rank_first:num1} to {ranks}: every block pushes the latents towards "
        "the rank collapse of deep attention, {fastest} fastest." if facts["rank_falls"] else
        "The effective rank of $X_t$ goes from {rank_first:num1} to {ranks}: not every block lowers it.",
        facts, ranks=ranks))
    return "\n\n".join(paragraphs)


display(Markdown(thesis_paragraphs(figs.thesis_facts(le, baseline, erank, targets["attention_eigenvalues"],
                                                     participation, NAMES))))

# %% [markdown]
# These numbers hold for the paper's settings ($\kappa = 30$, $\beta = 1$, eight shared blocks on
# 2,000 MNIST test images) and for these two graphs. At $\kappa = 30$ the diagonal of $W = e^S$
# dominates each row, so its LE vectors sit on single images: a careful reader would also try the
# same graph without its self-loops (as scikit-learn's spectral embedding and
# [the Laplacian Eigenmaps chapter](laplacian_eigenmaps.ipynb) build graphs) and a $k$-nearest-
# neighbour graph of the latents $X_0$, at wider kernels too. The next cell runs the test over all
# four graphs (`thesis.GRAPHS`) at $\kappa = 3, 10, 30$, each against its own random level:

# %%
ROBUST_KAPPAS, ROBUST_VARIANTS = (3.0, 10.0, 30.0), ("attention", "diffusion", "paper")
robust_paths = {k: ({v: paths[v] for v in ROBUST_VARIANTS} if k == KAPPA else
                    O.mnist_paths(images, ROBUST_VARIANTS, N_STEPS, k, ETA, BETA, D_Q)) for k in ROBUST_KAPPAS}
robust = thesis.robustness(images, robust_paths, BETA, qs=(2, 10))
facts = thesis.robustness_facts(robust, n_sd=figs.WORDS["n_sd"], rel_tol=figs.WORDS["move"])
display(Markdown(figs.robustness_table(facts, {
    "kappa": "$\\kappa$", "graph": "graph", "q": "$q$", "start": "layer 0", "random": "random",
    "end": "{variant}, last layer"}, NAMES, caption=fill(
    "mean principal-angle cosine between the top-$q$ principal subspace of $X_t$ and each graph's LE embedding; "
    "↑ towards it, ↓ away, · neither (within {move:pct} of the start, or at the random level: mean + {n_sd:g} sd)",
    figs.WORDS)).to_markdown()))

# %% tags=["remove-input"]
said = figs.constructions_facts(facts, ROBUST_VARIANTS, NAMES)
_room, _flat, _ceil, _closer, _moves = (said[k] for k in ("room", "flat", "at_ceiling", "closer", "moves"))
holds = [fill("{variant} moves " + ("towards" if h["towards"] else "away from" if h["away"] else
                                    "neither towards nor away from") + " the LE embedding", h) for h in said["held"]]
depends = [fill("{variant} moves towards its graph's LE embedding in {n_towards}, away in {n_away} and neither in "
                "{n_still}", v) for v in said["varied"]]
if said["closer_held"]:
    holds.append(fill("$A - I$ ends " + ("closer to" if said["always_closer"] else "farther from")
                      + " it than plain attention", said))
if said["closer_varies"]:
    depends.append(fill("$A - I$ ends closer than plain attention in {n_closer} of them ({closer_where})", said,
                        closer_where="; ".join(said["closer_where"])))
display(Markdown(fill(
    "Of the {n} constructions ({n_kappas} values of $\\kappa$, {n_graphs} graphs, $q = 2$ and $10$), {n_flat} start "
    "at the random level (" + ("{flat_where}" if said["any_flat"] else "none") + ") and {n_ceiling} at the ceiling, "
    "a mean cosine of at least {ceiling:g} before any block (" + ("{ceiling_where}" if said["any_ceiling"] else "none")
    + "), where the test has no room to show a move. That leaves {n_room} where it can. "
    + ("What holds for every one of them: {holds}. " if said["any_holds"] else "Nothing holds for all of them. ")
    + ("What depends on the graph, $\\kappa$ and $q$: {depends}. " if said["any_depends"] else "")
    + "Along the step-size family below, any difference between $A - I$ and plain attention is one of step length.",
    said, flat_where="; ".join(said["flat_where"]), ceiling_where="; ".join(said["ceiling_where"]),
    holds="; ".join(holds), depends="; ".join(depends))))

# %% tags=["remove-cell"]
# Facts the introduction's "What this book finds" pastes (prose.glue; shown nowhere on this page).
glue("prop_gap", sci(max(float(gaps_toy.max()), float(gaps_mnist.max()))))
for _name, _value in {"thesis_n": len(facts), "thesis_room": len(_room), "thesis_flat": len(_flat),
                      "thesis_ceiling": len(_ceil), "thesis_ai_towards": _moves["diffusion"].count("towards"),
                      "thesis_att_towards": _moves["attention"].count("towards"),
                      "thesis_ai_closer": len(_closer)}.items():
    glue(_name, _value)


# %% [markdown]
#
# ### The control is a step size
#
# Plain attention is not an independent control for $A - I$ here. LayerNorm forgets a positive
# factor on each row, so with the blocks' identity value and output weights all three are one
# family, $X \leftarrow \Pi(X + s A X)$, and differ only in $s$ (the identity is the one
# [the transformer-block chapter](transformer_block.ipynb) proves):
#
# $$
# \begin{aligned}
# s &= 2\eta && \text{(plain attention)},\\
# s &= \frac{2\eta}{1 - 2\eta} && (A - I),\\
# s &= \frac{2\eta}{1 - 2\eta + 2\eta / (d_q + \beta)} && \text{(the paper's block)}.
# \end{aligned}
# $$
#
# `U.attention_step` gives the plain-attention step $\eta' = s/2$ of each block. The next cell
# checks the identity on the MNIST path (eight blocks of $A - I$ against eight of plain attention
# at its $\eta'$), then runs plain attention over a range of steps and measures the thesis test
# after the last block: the comparison of the previous section, as a function of $s$.

# %%
steps = {v: 2 * U.attention_step(ETA, v, D_Q, BETA) for v in U.STEP_FAMILY}
family_gap = {v: max(float((a - b).abs().max()) for a, b in
                     zip(paths[v], U.unroll(X0, N_STEPS, KAPPA, steps[v] / 2, BETA, "attention")))
              for v in ("diffusion", "paper")}
s_grid = sorted({float(s) for s in np.geomspace(0.1, 10.0, 9)} | set(steps.values()))
family_le = thesis.le_alignment({s: U.unroll(X0, N_STEPS, KAPPA, s / 2, BETA, "attention") for s in s_grid},
                                targets, qs=(2, 10))
fig = figs.step_family_figure(family_le, steps, baseline, {
    "curve": "plain attention at step $s$, $q$ = {q}", "xlabel": "step $s$ of $\\Pi(X + s A X)$",
    "ylabel": "mean principal-angle cosine, last layer"}, NAMES)
describe(fig, fill("{n_graphs} panels, one per graph: how closely the latents after the last block of plain attention "
                   "match the graph's Laplacian Eigenmaps embedding, as its step grows, with plain attention, A - I "
                   "and the paper's block marked at their own steps, and the random level dotted.",
                   figs.panel_facts(baseline)))
plt.show()

# %% tags=["remove-input"]
compared = figs.step_family_facts(family_le, steps, family_gap, baseline)
HIGHER, LOWER, SAME = "higher", "lower", "no different"  # the longer step's agreement against plain attention's
display(Markdown(fill(
    "With $\\eta = {eta:g}$, $d_q = {d_q}$ and $\\beta = {beta:g}$ the steps are $s = {s_attention:.3g}$ "
    "(plain attention), ${s_diffusion:.3g}$ ($A - I$) and ${s_paper:.3g}$ (the paper's block). Eight blocks of "
    "$A - I$ and eight of plain attention at $s = {s_diffusion:.3g}$ end at most ${gap_diffusion:.1e}$ apart (the "
    "paper's block: ${gap_paper:.1e}$), which is float64 rounding: at this initialisation $A - I$ does nothing that a "
    "longer attention step does not. Read along the family, the longer step leaves the latents' agreement with the "
    "LE embedding of the attention graph "
    + (HIGHER if compared["attention_q2_higher"] else LOWER if compared["attention_q2_lower"] else SAME)
    + " at $q = 2$ and "
    + (HIGHER if compared["attention_q10_higher"] else LOWER if compared["attention_q10_lower"] else SAME)
    + " at $q = 10$, and with the pixels' $k$-NN graph "
    + (HIGHER if compared["pixels_q2_higher"] else LOWER if compared["pixels_q2_lower"] else SAME)
    + " at $q = 2$ and "
    + (HIGHER if compared["pixels_q10_higher"] else LOWER if compared["pixels_q10_lower"] else SAME)
    + " at $q = 10$, than plain attention's own step does (a difference counts when it exceeds three standard "
    "deviations of the random level). Whatever the previous section found between plain attention and $A - I$ is a "
    "finding about the step length.",
    compared, eta=ETA, d_q=D_Q, beta=BETA)))

# %% tags=["remove-cell"]
for _v in U.STEP_FAMILY:
    glue(f"s_{_v}", f"{steps[_v]:.3g}")
glue("family_gap", sci(max(family_gap.values())))

# %% [markdown]
# ## Why the Euler step over-smooths
#
# Held at one graph, every block except the exact one is a polynomial filter of its graph matrix
# ($A$, or $D^{-1/2} E D^{-1/2}$ for the symmetric block), so its effect on each eigenvector is one
# number. This section holds the graph frozen at $X_0$ and leaves LayerNorm out (it rescales each
# token by its own factor, so it is not a factor common to all modes); along the real path the graph
# moves with $X_t$ and the blocks' modes mix, so the responses below are what one step on $X_0$'s
# graph does, not what eight real blocks leave of $X_0$'s modes. On an eigenvector with $(I - A) v = \lambda v$ the $A - I$ block multiplies the
# component by $1 - h\lambda$ ($h = 2\eta$), plain attention by $1 + h(1 - \lambda)$, the
# paper's block by $1 - h\lambda + 2\eta/(d_q + \beta)$. The symmetric block has the same
# eigenvalues as $A - I$ ($D^{-1/2} E D^{-1/2}$ is similar to $D^{-1} E$), so the same response on
# other eigenvectors. LayerNorm takes out a common factor, so what matters is the response relative
# to the constant mode $\lambda = 0$ (`E.frequency_response`). The figure draws these responses
# over the eigenvalues of $I - A$ at $X_0$ (grey, `E.attention_spectrum`), next to the diffusion
# flow $e^{-h\lambda}$ that one Euler step of size $h$ stands for.

# %%
fig = figs.spectrum_figure(lam, {
    "attention": "plain attention", "diffusion": "A − I and symmetric", "paper": "the paper's block",
    "flow": r"the diffusion flow $e^{-h\lambda}$", "count": r"eigenvalues of $I - A$ at $X_0$ (count)",
    "xlabel": r"eigenvalue $\lambda$ of $I - A$ (graph frequency)",
    "ylabel_one": r"response of one step, relative to $\lambda = 0$",
    "title_one": r"one step ($\eta$ = {eta:num2}, $h = 2\eta$)",
    "ylabel_n": r"$|\mathrm{{response}}|^{{{n_steps}}}$", "title_n": "after {n_steps} steps",
}, ETA, D_Q, BETA, N_STEPS)
describe(fig, fill("Two panels: the response of plain attention, A − I and the paper's block to each graph frequency "
                   "after one step and after {n_steps} steps, relative to the constant mode, over a histogram of the "
                   "eigenvalues of I − A.", n_steps=N_STEPS))
plt.show()

# %% tags=["remove-input"]
spectrum = E.spectrum_facts(lam, ETA, D_Q, BETA, N_STEPS)
display(Markdown(fill(
    "The eigenvalues of $I - A$ at $X_0$ have median {mid:num3} and reach {top:num3}. For the graph frozen at $X_0$, "
    "and without LayerNorm (which rescales each token by a factor of its own, so it is not one factor common to "
    "every mode), after {n_steps} steps a mode at the median keeps {mid_diffusion:pct} of its size relative to the "
    "constant mode under $A - I$ ({mid_attention:pct} under plain attention, {mid_flow:pct} under the flow "
    "$e^{{-\\tau L}}$ it discretises), and a mode at the top keeps {top_diffusion:sci} ({top_attention:sci}; flow "
    "{top_flow:sci}). Since $1 - h\\lambda < e^{{-h\\lambda}}$ for every $\\lambda > 0$, each Euler step damps "
    "every mode more than the diffusion over the same time $h = {h:num2}$ would, and most at the top of the "
    "spectrum, where $1 - h\\lambda$ "
    + ("reaches 0 at $\\lambda = 1/h$: such a mode is removed in one step." if spectrum["removed"] else
       "is smallest ({top_response:num3}).")
    + " That is the over-smoothing: the block keeps only the slowest modes of the graph.",
    spectrum)))
differential = figs.differential_facts(diff_gap, KAPPAS2, KAPPA)
parts = ", ".join(fill("{gap:sci} at $\\kappa_2 = {kappa2:g}$", g) for g in differential["gaps"])
differential_sentence = fill(
    "$\\lVert (A(\\kappa) - A(\\kappa_2)) X - (A - I) X \\rVert / \\lVert (A - I) X \\rVert$ at $X_0$ "
    "($\\kappa = {kappa:g}$): {parts}"
    + (": $A - I$ is the difference of two attention maps whose second map attends only to itself."
       if differential["identity"] else ": the second map is not yet the identity at these sharpnesses."),
    differential, parts=parts)
display(Markdown(differential_sentence))

# %% [markdown]
# Those are predictions for a graph that stands still. The real blocks recompute the graph from $X_t$
# at every step and apply LayerNorm after it, so the cell below measures, along the eight real steps,
# how much of each of $X_0$'s graph modes is left (`E.mode_retention`: the size of a mode's component,
# relative to the constant mode, at the last step over the first), beside the frozen graph's
# prediction for the same modes.

# %% tags=["remove-input"]
retained = figs.retention_facts(retention)
WITHIN = "within a factor of {factor:g} of"  # neither above nor below
display(Markdown(fill(
    "Along the real path, the {n_modes} top modes of $X_0$'s graph keep a median {diffusion_top:sci} of their "
    "relative size after {n_steps} steps of $A - I$, "
    + ("above" if retained["diffusion_top_above"] else "below" if retained["diffusion_top_below"] else WITHIN)
    + " the frozen graph's {diffusion_top_pred:sci}, and {attention_top:sci} under plain attention ("
    + ("above" if retained["attention_top_above"] else "below" if retained["attention_top_below"] else WITHIN)
    + " its prediction, {attention_top_pred:sci}). So on the real path $A - I$ keeps "
    + ("above" if retained["top_above"] else "below" if retained["top_below"] else WITHIN)
    + " what plain attention keeps of the top of the spectrum, although the frozen filters differ there by a factor of "
    "{filter_ratio:num0}. The {n_modes} modes around the median eigenvalue keep {diffusion_middle:num2} under "
    "$A - I$ (predicted {diffusion_middle_pred:num2}) and {attention_middle:num2} under plain attention "
    "(predicted {attention_middle_pred:num2}). The filter picture describes steps on a graph held fixed; what "
    "eight real blocks leave of $X_0$'s modes is these measured numbers.",
    retained)))

# %% tags=["remove-cell"]
glue("real_top_ai", sci(retention["diffusion"]["top"]["measured"]))
glue("frozen_top_ai", sci(retention["diffusion"]["top"]["predicted"]))

# %% [markdown]
# ## All the readings in one table
#
# Reading by reading: the energy and which way its reading moves it, the block whose direction is
# its exact gradient step at $X_0$, what the reading predicts, and what this chapter measured.

# %% tags=["remove-input"]
PREDICTS = {  # what each reading says a block does, in the book's words (the papers' claims, paraphrased)
    "ple": "its block climbs the ELBO of probabilistic Laplacian Eigenmaps",
    "phi": r"the exact block climbs $\Phi$ (the proposition)",
    "hopfield": "the update lowers the energy and retrieves a stored pattern or a mixture of a few",
    "energy_transformer": r"its update $X + h (A + A^\top) X$ lowers the energy",
    "sphere": "tokens cluster; the unnormalised dynamics raises the energy",
    "crate": "attention compresses: it lowers the coding rate",
    "sinkformer": "doubly stochastic attention is a gradient flow; it raises the energy",
    "grand": "attention diffusion lowers the Dirichlet energy (smoothing)",
    "gfsa": "attention is a low-pass filter; adding $I$ and $A^K$ counters over-smoothing",
    "diff_transformer": "subtracting a second attention map cancels attention spread over irrelevant tokens",
}
readings = figs.readings_facts(harness, NAMES)
measured = {row["reading"]: fill("{sense} at every step by " + ("every block" if row["every_block"] else
                                                                "no block" if row["no_block"] else
                                                                "{agree:listing}"), row)
            for row in readings["readings"]}
measured["gfsa"] = fill(
    "for the graph frozen at $X_0$, without LayerNorm: after {n_steps} steps the top eigenmode of $I - A$ "
    "($\\lambda = {top:num2}$) keeps {top_diffusion:sci} of its size under $A - I$, {top_paper:sci} under the "
    "paper's block and {top_attention:sci} under plain attention, against {top_flow:sci} under the flow (spectral "
    "figure)", spectrum)
measured["diff_transformer"] = differential_sentence
display(Markdown(figs.energy_readings_table(
    harness, alignment, PREDICTS, measured,
    exact_notes={"gfsa": "every block but the exact one is such a filter (with $w_K = 0$)",
                 "diff_transformer": "$A - I$ is its limit $\\kappa_2 \\to \\infty$, $\\lambda = 1$"},
    columns={"reading": "reading", "energy": "energy (its reading)", "exact": "exact gradient step of",
             "predicts": "what it predicts", "measured": "what this book measured", "energy_cell": "{energy} ({sense})",
             "also": " (after LayerNorm also {names})"}, names=NAMES,
    caption=fill("of the updates tested, the gradient fields are " + ("{fields:listing}" if fields["any_field"] else
                                                                      "none")
                 + "; exact means a cosine within {tol:sci0} of 1 at $X_0$", fields),
).to_markdown()))

# %% [markdown]
# ## Where this leaves the paper
#
# The same numbers, read for the paper's claim among the others:

# %% tags=["remove-input"]
facts = figs.closing_facts(harness, asymmetry, alignment, le, baseline, NAMES)
display(Markdown(fill(
    "The paper's block, as the paper writes it, is "
    + ("an exact gradient step of the stop-gradient ELBO" if facts["paper_exact"] else
       "not an exact gradient step of its own objective"
       + ("; its correction, the exact block, is the exact step of the stop-gradient ELBO and of $\\Phi$, a "
          "Hopfield-type log-sum-exp energy plus ProbDR's log-determinant" if facts["correction_exact"] else ""))
    + (". Of the {n_blocks} blocks, only {grads:listing} " + ("is" if facts["one_grad"] else "are")
       + " a gradient field at all" if facts["any_grad"] else ". None of the {n_blocks} blocks is a gradient field")
    + ". "
    + ("At the level of which energy goes which way the readings cannot be told apart here: along the MNIST path "
       "every block moves every energy the way each reading predicts. " if facts["uniform"] else
       "Along the MNIST path the blocks do not all move every energy the way the readings predict (table above). ")
    + "What the probabilistic Laplacian Eigenmaps reading adds to the others is the log-determinant, the term that "
      "expands the coding rate CRATE's attention compresses. "
    + ("{lifted:listing} " + ("brings" if facts["one_lifted"] else "bring") + " the latents' principal subspace "
       "close to the attention graph's Laplacian Eigenmaps embedding, as the title claims." if facts["any_lifted"] else
       "Its title claim, that a block performs Laplacian Eigenmaps on its attention graph, is not borne out at the "
       "paper's settings: no block brings the latents' principal subspace near that graph's Laplacian Eigenmaps "
       "embedding.")
    + (" Towards the pixels' graph ($q = {control_q}$), plain attention, which has no Laplacian in it, "
       + ("moves at least as far as $A - I$" if facts["attention_at_least"] else "moves less than $A - I$")
       + " ({attention_start:num} → {attention_end:num} against {diffusion_start:num} → {diffusion_end:num})."
       if facts["has_control"] else ""),
    facts)))

# %% [markdown]
# ## Exercises
#
# 1. Show that the Hopfield energy with the patterns held at $X_t$ has gradient $L X_t$ at $X_t$,
#    and that on the LayerNorm sphere the plain-attention block steps in the same direction as
#    $A - I$ to first order. Check both with `E.update_alignment` on the toy.
# 2. Rerun the thesis test at $\kappa = 3$: build the LE targets with `thesis.le_targets(images, X0, 3.0)`
#    and the paths with `O.mnist_paths(..., kappa=3.0)`. Is the attention graph still close to
#    disconnected? Does any block now move towards its LE embedding?
# 3. Why can a Sinkformer not be causal? Find the only lower-triangular doubly stochastic matrix
#    with positive diagonal.
#
# :::{dropdown} Solution 1
# With the patterns $X_t$ fixed, $\nabla_{x_i} \operatorname{logsumexp}_j S_{ij}(X, X_t) =
# \tfrac{\kappa}{d_q} \sum_j A_{ij} x_{t,j}$, so the gradient of $\tfrac12 \lVert X \rVert_F^2 -
# \tfrac{d_q}{\kappa}\sum_i \operatorname{logsumexp}_j S_{ij}$ at $X = X_t$ is $X_t - A X_t = L X_t$,
# and descent $X_t - h L X_t$ is the $A - I$ block. Plain attention's direction $2 A X$ differs
# from $-2 L X = 2 (A - I) X$ by $2X$, which has no tangent part on the sphere, so after LayerNorm
# the two agree in direction to first order (not in length: $A - I$'s step is the longer, as the
# identity $\Pi(X + s A X)$ above says). The hidden cell prints the cosines.
# :::
#
# :::{dropdown} Solution 2
# At $\kappa = 3$ each point spreads its attention over many neighbours, so the graph is far
# better connected. The hidden cell reruns the test on 500 of the images (to stay quick) and
# words the result from the numbers, as the section above does.
# :::
#
# :::{dropdown} Solution 3
# Row 1 of a lower-triangular matrix has a single entry, which must be 1 for the row to sum to 1;
# then column 1 already sums to 1, so every other entry of column 1 is 0. Repeating the argument
# row by row leaves the identity: a causal doubly stochastic attention would let every token attend
# only to itself. A causal $E = e^S$ is positive on and below the diagonal, and rescaling its rows
# and columns keeps those entries positive, so no rescaling of it is doubly stochastic; Sinkhorn's
# iteration on it only tends to the identity. That is why `E.sinkhorn_attention` refuses a mask.
# :::

# %% tags=["hide-cell"]
a_toy = E.update_alignment(toy.X0, ("hopfield",), ("attention", "diffusion"), 100.0, 1.0)["hopfield"]
print({u: {k: round(v, 12) for k, v in c.items()} for u, c in a_toy.items()})
sub = slice(0, 2000, 4)  # 500 of the images, every class
images_s = images[sub]
paths_s = O.mnist_paths(images_s, ("attention", "diffusion"), N_STEPS, 3.0, ETA, BETA, D_Q)
targets_s = thesis.le_targets(images_s, paths_s["diffusion"][0], 3.0, BETA)
le_s = thesis.le_alignment(paths_s, targets_s, qs=(2, 10))
display(Markdown(thesis_paragraphs(figs.thesis_facts(
    le_s, thesis.random_baseline(targets_s, qs=(2, 10)), thesis.effective_rank_path(paths_s),
    targets_s["attention_eigenvalues"], thesis.participation_ratio(targets_s["attention"]), NAMES))))
start = E.ceiling_facts(le_s)
ceiling_qs = [fill("$q = {q}$", q=q) for q in start["at_ceiling"]]
display(Markdown(fill(
    "Before any block the latents' principal subspace already agrees with the attention graph's LE embedding to "
    "{start_q2:.3f} at $q = 2$ and {start_q10:.3f} at $q = 10$"
    + (": at {ceiling_qs:listing} the test starts at its ceiling (at least {ceiling:g}), so it has no room to show a "
       "block moving towards that embedding." if start["any_at_ceiling"] else
       ", below the ceiling, so a move towards it could show."),
    start, ceiling_qs=ceiling_qs)))
