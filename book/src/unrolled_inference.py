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
# # Inference unrolled
#
# [The ELBO chapter](probdr_elbo.ipynb) solved the ELBO in closed form with one
# eigendecomposition. That does not generalise: as soon as the graph depends on the embedding itself, as it
# will in [the transformer-block chapter](transformer_block.ipynb), there is no eigendecomposition to take.
# What always works is to climb the ELBO by gradient ascent from a random start, and this chapter does exactly
# that.
#
# **What the chapter finds.** Gradient ascent from random noise reaches the closed-form embedding, with no
# eigendecomposition. Each step applies the same function to the current embedding: a smoothing over the graph
# plus a push outwards that multiplies every point by one $q \times q$ matrix computed from the embedding,
# added to its input. So $T$ steps are a network of $T$
# identical residual layers, which is how the rest of the book reads a transformer
# {cite:p}`ravuri2025transformers`. The step size decides what happens. Small steps are guaranteed to climb but
# are slow; larger ones, up to a threshold set by the extreme eigenvalues of the Laplacian, converge faster;
# past that threshold the run blows up. The last and longest phase of a run is set by the gap between two
# eigenvalues, and its measured rate matches the prediction.
#
# **In this chapter you will learn**
#
# - the gradient step written out, and why it splits into a graph-smoothing part and a push that acts on each
#   point separately;
# - how the step size $\eta$ decides between slow, stable and divergent ascent, with the exact thresholds,
#   and how to measure the distance to a closed form that is defined only up to a rotation;
# - the idea the rest of the book rests on: a stack of identical layers *is* an optimiser, unrolled.

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import numpy as np
from threadpoolctl import threadpool_limits

from probdr_lite.data import load_mnist
from probdr_lite.chapters.probdr_elbo import SETUP
from probdr_lite.chapters.unrolled_inference import ETA_SLIDER, ETAS_SHOWN, N_STEPS, curvature_facts, eta_runs
from probdr_lite.presentation.live.builders import eta_live
from probdr_lite.presentation.plotting import Table
from probdr_lite.presentation.prose import claim, glue, num
from probdr_lite.presentation.style import describe
from probdr_lite.presentation.figures.unrolling import eta_panel, steps_figure, steps_scrub
from probdr_lite.graphs import knn_graph, laplacian
from probdr_lite.metrics import subspace_agreement
from probdr_lite.probdr import fit_le_elbo, le_closed_form, le_elbo_grad, step_sizes

blas = threadpool_limits(limits=1)  # a few hundred points: one BLAS thread beats several waiting for each other

# %% tags=["remove-cell"]
glue("n_digits", str(SETUP.n))
glue("k_value", str(SETUP.k))
glue("beta_value", f"{SETUP.beta:g}")
glue("n_steps", str(N_STEPS))
claim(SETUP.q == 2, "the set-up of the ELBO chapter: q = 2 coordinates")

# %% [markdown]
# The set-up is that of the ELBO chapter: {glue:text}`n_digits` MNIST digits, their
# {glue:text}`k_value`-nearest-neighbour graph with Laplacian $\hat L = L = D - W$,
# $\beta$ = {glue:text}`beta_value`, $q = 2$ coordinates, and
# [the ELBO](probdr_elbo.ipynb#the-model) {eq}`elbo` with $\nu = 1$. $X \in \mathbb{R}^{n \times q}$
# is kept centred over the points, $X^\top \mathbf{1}_n = 0$: each column (one coordinate) sums to zero over the
# $n$ points. This centring keeps the constant eigenvector of $\hat L$ (eigenvalue 0) out of the ELBO, the trap
# of [the ELBO chapter](probdr_elbo.ipynb).

# %%
Y, labels = load_mnist(n=SETUP.n, stratified=True)  # the ELBO chapter's digits, graph and beta
Y = Y.astype(np.float64)
n = Y.shape[0]
L = laplacian(knn_graph(Y, n_neighbors=SETUP.k))  # L_hat = D - W
beta, q = SETUP.beta, SETUP.q
X_star = le_closed_form(L, q, beta, centre=True)  # the answer the ascent should find

# %% [markdown]
# ## One step of gradient ascent
#
# With $\nu = 1$ and a symmetric $\hat L$, the gradient of the ELBO is
# $\partial\,\mathrm{ELBO}/\partial X = C^{-1}X - \hat L X$ with $C = X X^\top + \beta I$ (a
# larger $\nu$ would act as a larger step). One step of
# size $\eta$, followed by re-centring with the centring matrix $H = I - \mathbf{1}_n\mathbf{1}_n^\top/n$, is
#
# $$
# X_{l+1} = H\left[X_l - \eta\,\hat L X_l + \eta\, X_l \left(X_l^\top X_l + \beta I\right)^{-1}\right].
# $$
#
# The last term uses the push-through identity
# $(X X^\top + \beta I)^{-1} X = X (X^\top X + \beta I)^{-1}$, which replaces an $n \times n$ inverse by
# a $q \times q$ one (on a random $X$ the two sides agree to round-off). The two parts of the step do
# different things.
#
# - $X_l - \eta \hat L X_l$ moves every point towards its neighbours: row $i$ of $-\hat L X$ is
#   $\sum_j W_{ij}(x_j - x_i)$. This is one explicit Euler step of graph diffusion,
#   $dX/d\tau = -\hat L X$, with step $h = \eta$: the smoothing that on its own would collapse the
#   embedding. On its own, such a step is stable for $h < 2/\lambda_{\max}(\hat L)$. In the full step the
#   second part adds some of $X$ back, and near the optimum that moves the threshold slightly higher (next
#   section).
# - $\eta\,X_l (X_l^\top X_l + \beta I)^{-1}$ multiplies every row by the same $q \times q$ matrix,
#   computed from the current $X_l$. It never mixes points, and it pushes outwards, most strongly along directions in which $X_l$ is
#   still small. This is the log-determinant's defence against collapse.
#
# In [the transformer-block chapter](transformer_block.ipynb) the first part becomes attention and
# the second the feed-forward block. The step fits in a three-line function:

# %%
def layer(X, eta):
    """One gradient step on the ELBO, then centring: X <- H [X + eta dELBO/dX]."""
    X = X + eta * le_elbo_grad(X, L, beta)  # dELBO/dX = C^{-1} X - L X
    return X - X.mean(axis=0)  # H X: keep X^T 1_n = 0


X = np.random.default_rng(0).normal(size=(n, q))
C = X @ X.T + beta * np.eye(n)
push_through_gap = np.abs(np.linalg.solve(C, X) - X @ np.linalg.inv(X.T @ X + beta * np.eye(q))).max()

# %% tags=["remove-cell"]
claim(bool(push_through_gap < 1e-10),
      "The last term uses the push-through identity (X X^T + beta I)^{-1} X = X (X^T X + beta I)^{-1}")

# %% [markdown]
# ## How large a step?
#
# The step size has to respect the curvature of the ELBO, its second derivative along a direction. Along any
# direction the trace term curves by between $-\lambda_{\max}$ and 0, where $\lambda_{\max}$ is the largest
# eigenvalue of $\hat L$, and the log-determinant by between $-1/(8\beta)$ and $1/\beta$ (derived below). The
# curvature of the ELBO is the sum of the two, so its size is at most
# $\ell = \lambda_{\max} + 1/\beta$. The gradient then changes by at most $\ell$ per unit of distance, and the
# usual ascent lemma guarantees that any $\eta < 2/\ell$ raises the ELBO at every step, whatever the start. The guaranteed rise is largest at $\eta = 1/\ell$, the *safe step*.
#
# Near the optimum the step can be described more precisely by linearising it. Write $u_1, u_2, \dots$ for the
# eigenvectors of $\hat L$ orthogonal to $\mathbf{1}_n$, with eigenvalues $\lambda_1 \le \lambda_2 \le \dots$;
# column $j$ of $X^*$ is $s_j u_j$. To *tilt* column $j$ by $\varepsilon$ towards an eigenvector $u_k$ that
# the solution does not use is to add $\varepsilon u_k$ to it; $\varepsilon$ is the tilt. A tilt changes the
# gradient by $-(\lambda_k - \lambda_j)$ times the tilt (Exercise 2 derives it), so each step
# multiplies the tilt by $1 - \eta(\lambda_k - \lambda_j)$. Two consequences follow.
#
# - The fastest tilt, of column 1 towards $u_{\max}$, the eigenvector with the largest eigenvalue
#   $\lambda_{\max}$, overshoots as soon as $\eta > 2/(\lambda_{\max} - \lambda_1)$. Past this *divergence threshold* every step makes the error
#   larger, and the iterates blow up.
# - The slowest tilt, between the last direction used and the first one left out, shrinks by
#   $1 - \eta(\lambda_{q+1} - \lambda_q)$ per step. The spectral gap sets the pace. (The lengths of
#   the columns also settle, at rate $2\lambda_j(1 - \beta\lambda_j)$; whichever is smaller wins.)
#
# :::{dropdown} Derivation: the curvature bound $\ell$ and the column-length rate
# **The two parts.** With $\nu = 1$ the ELBO is $\tfrac12\log\det C - \tfrac12\operatorname{tr}(X^\top \hat L X)$
# plus a constant. Move $X$ along a direction $V$ with $\lVert V\rVert_F = 1$ and write $S = X V^\top + V X^\top$.
# The trace part has second derivative $-\operatorname{tr}(V^\top \hat L V)$, between $-\lambda_{\max}$ and 0.
# The log-determinant part has second derivative
# $\operatorname{tr}(C^{-1} V V^\top) - \tfrac12 \operatorname{tr}(C^{-1} S C^{-1} S)$; the second term is
# negative and can outweigh the first, so this part needs a closer look.
#
# **The log-determinant part.** Rotate the rows and the columns of $X$ to its singular bases, so that column $i$
# of $X$ is $s_i e_i$ and $C$ is diagonal, with $a_i = s_i^2 + \beta$ in its first $q$ places and $\beta$
# elsewhere; rotations change neither $\lVert V\rVert_F$ nor the second derivative. The second derivative then
# splits into independent pieces of $V$:
#
# - an entry $V_{ki}$ with $k > q$, a move out of the span of $X$: curvature $1/a_i$;
# - a diagonal entry $V_{ii}$, a change of the length of column $i$: curvature $(\beta - s_i^2)/a_i^2$;
# - a pair $(V_{ij}, V_{ji})$, $i \ne j$, turning two columns: curvatures $(\beta \pm s_is_j)/(a_i a_j)$.
#
# Since $a_i a_j \ge (\beta + s_is_j)^2$, every piece is at most $1/\beta$ and at least
# $\varphi(u) = (\beta - u)/(\beta + u)^2$ for some $u \ge 0$, and $\varphi$ is smallest at $u = 3\beta$, where
# $\varphi = -1/(8\beta)$. So the log-determinant curves by between $-1/(8\beta)$ (a column with $s_i^2 = 3\beta$)
# and $1/\beta$ (at $X = 0$).
#
# **The bound.** The size of the sum is at most the sum of the sizes, $\lambda_{\max} + 1/\beta = \ell$. (The
# range of the sum, $[-\lambda_{\max} - 1/(8\beta),\, 1/\beta]$, gives the slightly smaller
# $\max(\lambda_{\max} + 1/(8\beta), 1/\beta)$; the book keeps the simpler $\ell$.) So the gradient is
# Lipschitz with constant $\ell$, and the usual ascent lemma, with $\nabla$ the gradient at $X$,
# $\mathrm{ELBO}(X + \eta \nabla) \ge \mathrm{ELBO}(X) + \eta(1 - \eta\ell/2)\lVert \nabla\rVert_F^2$, guarantees
# a rise for every $0 < \eta < 2/\ell$. The guaranteed rise $\eta(1 - \eta\ell/2)\lVert \nabla\rVert_F^2$ is
# largest at $\eta = 1/\ell$, where it is $\lVert \nabla\rVert_F^2/(2\ell)$. Re-centring changes nothing here: for a centred $X$,
# $C\mathbf{1}_n = \beta\mathbf{1}_n$ and $\hat L \mathbf{1}_n = 0$, so the gradient is already centred.
#
# **The column length.** Keep the direction $u_j$ of column $j$ and vary its length $s$. Along that line the
# ELBO is $f(s) = \tfrac12\log(s^2 + \beta) - \tfrac12\lambda_j s^2$ plus a constant, so
# $f'(s) = s/(s^2 + \beta) - \lambda_j s$ and $f''(s) = (\beta - s^2)/(s^2 + \beta)^2 - \lambda_j$. At the
# optimum $s_j^2 + \beta = 1/\lambda_j$, which gives
# $f''(s_j) = \lambda_j^2(2\beta - 1/\lambda_j) - \lambda_j = -2\lambda_j(1 - \beta\lambda_j)$. A step
# $s \leftarrow s + \eta f'(s)$ therefore multiplies the error in $s$ by $1 - 2\eta\lambda_j(1 - \beta\lambda_j)$:
# the rate is $2\lambda_j(1 - \beta\lambda_j)$.
# :::

# %%
marks = step_sizes(L, beta, n_components=q)
Table(["for this graph", "value"], [
    ["largest eigenvalue $\\lambda_{\\max}$ of $\\hat L$", f"{marks['lambda_max']:.3f}"],
    ["safe step $1/\\ell$: the largest guaranteed rise", f"{marks['safe']:.4f}"],
    ["divergence threshold: runs blow up past it", f"{marks['divergent']:.4f}"],
    ["slowest rate near $X^*$, per unit $\\eta$", f"{marks['slowest']:.4f}"]])

# %% tags=["remove-cell"]
glue("eta_low", num(ETA_SLIDER["low"], 3))
glue("eta_high", num(ETA_SLIDER["high"], 2))
X_0 = fit_le_elbo(L, q, beta, n_steps=0, seed=0, centre=True).X  # the start of every run of the chapter
start_ratio = np.linalg.norm(X_0) / np.linalg.norm(X_star)
glue("start_norm", num(np.linalg.norm(X_0), 2))
glue("answer_norm", num(np.linalg.norm(X_star), 2))
glue("start_ratio", num(start_ratio, 1))

# %% tags=["remove-cell"]
claim(bool(np.allclose(X_0.mean(axis=0), 0) and start_ratio > 1 and np.abs(X_0).max() < 1),
      "Each entry is small, but its norm is larger than the answer's")

# %% [markdown]
# Every run in this chapter starts from the same random $X_0$: independent entries $0.1 \times N(0, 1)$, then
# centred. Each entry is small, but its norm $\lVert X_0\rVert_F$ = {glue:text}`start_norm` is
# {glue:text}`start_ratio` times the answer's, $\lVert X^*\rVert_F$ = {glue:text}`answer_norm`.
#
# The figure runs {glue:text}`n_steps` steps from $X_0$ for step sizes $\eta$ between {glue:text}`eta_low` and
# {glue:text}`eta_high` on a logarithmic scale. On the left is the gap to the optimal ELBO, in the middle the
# distance to the closed form, and on the right the last iterate.
#
# The middle plot needs a word. $X^*$ is defined only up to a rotation $R$ (see the ELBO chapter), so
# $\lVert X_l - X^* \rVert$ would be no use. The *Gram matrix* $X X^\top$ does not see $R$, so the
# distance is
#
# $$
# \text{Gram error}(X_l) = \frac{\lVert X_l X_l^\top - X^* X^{*\top}\rVert_F}{\lVert X^* X^{*\top}\rVert_F},
# $$
#
# and the run counts as converged below $10^{-2}$.

# %% tags=["remove-output"]
panel = eta_panel(L, labels, beta=beta, n_components=q, n_steps=N_STEPS, alt=(
    "The ELBO gap and the Gram error to X* at every step of gradient ascent on log scales, and the last iterate "
    "coloured by class."))
panel.show()

# %% tags=["hide-input"]
eta_live(L, labels, beta=beta, n_components=q, n_steps=N_STEPS, include=ETAS_SHOWN, text={
    "caption": "{n_steps} steps of gradient ascent from the same random start for each of {n_etas} step sizes "
               "(curves drawn every {every} steps).",
    "alt_gap": "ELBO gap per step at η = {eta}: {=verdict}",
    "alt_gram": "Gram error per step; {=gram} at the last step",
    "alt_points": "The last iterate at η = {eta}",
})

# %% [markdown]
# For nine of the figure's step sizes, the table gives $\eta$ in units of $1/\ell$, the step at which a run
# diverged, if it did (the run is stopped once its iterate is $10^6$ times the size of the start, or so large
# that $C = X X^\top + \beta I$ can no longer be inverted in floating point), and the Gram error after
# {glue:text}`n_steps` steps.

# %%
ascent = eta_runs(L, beta, ETAS_SHOWN, marks, n_components=q, n_steps=N_STEPS)
Table(["step size η", "η × ℓ", "diverged at step", f"Gram error after {N_STEPS} steps"],
      [[f"{e:g}", f"{e / ascent['safe']:.2f}", "" if d is None else str(d), "" if g != g else f"{g:.1e}"]
       for e, d, g in zip(ascent["etas"], ascent["diverged_at"], ascent["gram"])])

# %% tags=["remove-cell"]
etas_, conv_, div_ = np.array(ascent["etas"]), np.array(ascent["converged"]), np.array(ascent["diverged"])
short_ = ~conv_ & ~div_
glue("eta_short_max", num(etas_[short_].max(), 2))
glue("eta_conv_min", num(etas_[conv_].min(), 3))
glue("eta_conv_max", num(etas_[conv_].max(), 3))
glue("n_diverged", str(int(div_.sum())))
glue("eta_divergent", num(ascent["divergent"], 4))
glue("slowest_rate", num(marks["slowest"], 2))
claim(bool(short_.any() and conv_.any() and div_.any()) and etas_[short_].max() < etas_[conv_].min()
      and etas_[conv_].max() < etas_[div_].min(),
      "The slow runs are still short of a Gram error of 1e-2 after 600 steps; the middle ones converge; the "
      "largest ones diverge")
claim(bool(np.array_equal(div_, etas_ > ascent["divergent"])),
      "The runs that diverge are exactly those past the divergence threshold")
claim(bool(np.all(etas_[conv_] < ascent["divergent"]) and etas_[conv_].max() > 0.9 * ascent["divergent"]),
      "A step just below the threshold still converges")
gram_ = np.array(ascent["gram"])[~div_]  # the runs that did not diverge, in order of eta
claim(bool(np.all(np.diff(etas_) > 0) and np.all(np.diff(gram_) < 0)),
      "larger eta, up to the threshold, converges faster")

# %% [markdown]
# The step sizes fall into three bands. Up to $\eta$ = {glue:text}`eta_short_max` the runs are
# stable but slow: after {glue:text}`n_steps` steps they are still above a Gram error of $10^{-2}$, because the
# slowest mode contracts by only $1 - \eta \times$ {glue:text}`slowest_rate` per step. From {glue:text}`eta_conv_min`
# (about $1/\ell$) to {glue:text}`eta_conv_max` they converge within the {glue:text}`n_steps` steps. The
# {glue:text}`n_diverged` larger step sizes diverge, and they are exactly those past the divergence threshold,
# {glue:text}`eta_divergent`. That threshold was derived only near the optimum, yet from this start it also
# marks where the runs blow up.

# %% [markdown]
# ## From noise to the answer, layer by layer
#
# Now one run at $\eta = 1/\ell$, watched closely and made twice: with the book's fitting routine, which
# records the ELBO and the Gram error at every step, and by applying the three-line layer function $T$ times.

# %%
eta = marks["safe"]
T = N_STEPS
fit = fit_le_elbo(L, q, beta, eta=eta, n_steps=T, seed=0, centre=True, store_every=1)

X = fit.iterates[0].copy()  # the same random start X_0
for _ in range(T):
    X = layer(X, eta)  # X_{l+1} = layer(X_l): a network of T identical layers

# %% tags=["remove-cell"]
claim(bool(np.abs(X - fit.X).max() < 1e-10 and np.all(np.diff(fit.elbo) >= -1e-9)),
      "The two give the same iterate to round-off, and the ELBO never goes down")

# %% tags=["remove-cell"]
glue("gram_start", f"{fit.gram_error[0]:.3g}")
glue("gram_100", f"{fit.gram_error[100]:.3g}")
glue("gram_end", f"{fit.gram_error[-1]:.2e}")
glue("first_converged", str(int(np.argmax(fit.gram_error < 1e-2))))
curvature = curvature_facts(L, beta, fit.iterates[::10])  # the Hessian's eigenvalues at every tenth step
glue("curvature_largest", num(curvature["largest"], 2))
glue("ell", num(1 / marks["safe"], 2))

# %% tags=["remove-cell"]
claim(bool(curvature["largest"] <= 1 / marks["safe"]
           and -1 / (8 * beta) <= curvature["logdet_low"] and curvature["logdet_high"] <= 1 / beta),
      "the largest curvature met is below ell, and the log-determinant's curvatures stay within [-1/(8 beta), "
      "1/beta]")

# %% [markdown]
# The two give the same iterate to round-off, and the ELBO never goes down. The Gram error falls from {glue:text}`gram_start` at the start to {glue:text}`gram_100` at step 100
# and {glue:text}`gram_end` at step {glue:text}`n_steps`, and is below $10^{-2}$ from step
# {glue:text}`first_converged` on. The run also checks the bound $\ell$. At every tenth step we took the ELBO's
# Hessian over all centred directions of $X$; its eigenvalues are the curvatures along its eigen-directions. The
# largest in size is {glue:text}`curvature_largest`, below $\ell$ = {glue:text}`ell`, and those of the
# log-determinant part alone stay within $[-1/(8\beta), 1/\beta]$.

# %%
shown = (0, 10, 50, 150, T)
fig = steps_figure(fit, labels, steps=shown)
describe(fig, f"The embedding coloured by class after {', '.join(map(str, shown))} steps of gradient ascent on "
         "common axes, and the closed form X* rotated onto the last.")
plt.show()

# %% tags=["remove-cell"]
size = np.linalg.norm(fit.iterates, axis=(1, 2))  # ||X_l||_F at every step
smallest = int(np.argmin(size))
claim(bool(size[0] > np.linalg.norm(X_star) and np.all(np.diff(size[:smallest + 1]) < 0) and smallest < shown[2]),
      "Smoothing (the first frames). The diffusion term quickly removes everything in the start that changes "
      "sharply across edges, and the cloud, larger than the answer, shrinks.")
claim(bool(np.all(np.diff(size[smallest:shown[3] + 1]) > 0) and abs(size[shown[3]] / np.linalg.norm(X_star) - 1) < 0.1),
      "Growth (the middle frames). Along the smoothest directions ... these grow until they reach their scale")
claim(bool(fit.gram_error[shown[3]] > 1e-2 > fit.gram_error[-1] and T - shown[3] > shown[3]),
      "Alignment (the last and longest phase). The embedding has the right size but still mixes the second "
      "eigenvector with the third")

# %% [markdown]
# The run goes through three phases, and the linearisation accounts for the last one.
#
# 1. **Smoothing** (the first frames). The diffusion term $-\eta \hat L X$ quickly removes everything in the
#    start that changes sharply across edges, and the cloud, larger than the answer, shrinks.
# 2. **Growth** (the middle frames). Along the smoothest directions, those with
#    $\lambda < 1/\beta$, the log-determinant pushes harder than the trace term pulls (near $X = 0$ the
#    ELBO curves upwards by $1/\beta - \lambda$ along them, Exercise 2 of
#    [the ELBO chapter](probdr_elbo.ipynb#exercises)), so these grow by about $1 + \eta(1/\beta - \lambda)$ per
#    step until they reach their scale $\sqrt{1/\lambda - \beta}$.
# 3. **Alignment** (the last and longest phase). The embedding has the right size but still mixes the
#    second eigenvector with the third, whose eigenvalue is only slightly larger. The mixture
#    fades by $1 - \eta(\lambda_3 - \lambda_2)$ per step.

# %%
window = np.flatnonzero((fit.gram_error < 1e-2) & (fit.gram_error > 1e-6))
measured = -np.polyfit(window, np.log(fit.gram_error[window]), 1)[0]  # slope of log(Gram error) per step
predicted = -np.log(1 - eta * marks["slowest"])

# %% tags=["remove-cell"]
glue("decay_measured", num(measured, 5))
glue("decay_predicted", num(predicted, 5))
claim(bool(abs(measured / predicted - 1) < 0.01), "The fitted slope of the Gram error over the last steps matches that "
      "prediction")

# %% [markdown]
# The fitted slope of the Gram error over the last steps matches that prediction: its logarithm falls by
# {glue:text}`decay_measured` per step, against $-\log(1 - \eta \times \text{rate})$ =
# {glue:text}`decay_predicted`. The embedding moving step by step (frames at roughly geometric steps, denser
# where things change):

# %%
frames = sorted({0, *np.unique(np.round(np.geomspace(1, T, 22)).astype(int)).tolist()})
steps_scrub(fit, labels, frames, alt="The iterate coloured by class on fixed axes, beside the Gram error to X* "
            "against the step with the current step marked.")

# %% [markdown]
# ## A stack of identical layers is an optimiser, unrolled
#
# Look again at the loop that applied the layer $T$ times. Read as an algorithm, it is
# gradient ascent on the ELBO. Read as an architecture, it is a network of depth $T$. Each
# layer takes the $n \times q$ representation, mixes every point with its neighbours (the
# $-\eta \hat L X$ term), multiplies every point by one $q \times q$ matrix computed from the
# representation (the $\eta X(X^\top X + \beta I)^{-1}$ term), adds the result to its input (a residual
# connection), and normalises (here only centring). Every layer is the same function, as if its weights
# were tied across layers, though the $q \times q$ matrix changes with the input; the depth is the number
# of iterations. The step size plays the part of the residual branch's scale, with the same
# dangers: too small and a deep network barely moves its input, too large and the activations
# blow up.
#
# This reading is the engine of the rest of the book.
# [The transformer-block chapter](transformer_block.ipynb) keeps the loop but changes one thing:
# the graph is no longer fixed by the data. It is rebuilt at every layer from the current latents, and the
# Laplacian changes with it: in place of this chapter's $L = D - W$ comes the random-walk
# $L_{\mathrm{rw}} = I - A$ of [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb#from-data-to-a-graph), whose
# $A = D^{-1} W$ is softmax attention when $W$ is a heat kernel on the latents
# ([two Laplacians, two step sizes](transformer_block.ipynb#two-laplacians-two-step-sizes) compares the two).
# The smoothing step $X - h(I - A)X$ then becomes an attention update. That is the claim of {cite:t}`ravuri2025transformers`: a
# transformer block is one such layer. The next chapters take the claim apart and test each piece.
#
# ## Summary
#
# - **What was shown.** Gradient ascent on the ELBO, from random noise, reaches the closed-form embedding
#   without an eigendecomposition. Each step is a graph-smoothing term plus a push outwards, one $q \times q$
#   matrix computed from the embedding and applied to every point, added to the input, so $T$ steps are a
#   network of $T$ identical residual layers. Steps below $2/\ell$ climb at every step from any start; larger
#   ones converged here up to the divergence threshold and blew up past it; the last phase of a run goes at the
#   rate the spectral gap predicts.
# - **What it rests on.** A graph and a $\beta$ fixed in advance, $\nu = 1$, an embedding kept centred, and
#   the curvature bound $\ell$, which holds from any start. The threshold and the rates come from linearising
#   the step near $X^*$, so they describe the end of a run, not its start.
# - **What it does not show.** That a transformer does this. Here the graph is fixed and the layer's weights
#   are the ELBO's, not learned; whether attention and feed-forward blocks can be read this way is what the
#   next chapters test.
#
# ## Exercises
#
# **Exercise 1.** Run the ascent from two different random seeds. Do the final embeddings have the
# same columns? The same Gram matrix? What does this say about comparing a network's output with
# the closed form?
#
# :::{dropdown} Solution
# The columns differ: different starts end at different rotations $X R$ of the optimum. The Gram matrices, and
# with them the principal-angle cosines to $X^*$, agree to the accuracy of the runs. Any
# comparison of a learned representation with a closed form has to be rotation-invariant in the
# same way.
# :::

# %% tags=["hide-cell"]
runs = [fit_le_elbo(L, q, beta, eta=eta, n_steps=T, seed=s, centre=True).X for s in (0, 1)]
Table(["seeds 0 and 1", "largest difference"], [
    ["the columns", f"{np.abs(runs[0] - runs[1]).max():.2f}"],
    ["the Gram matrices", f"{np.abs(runs[0] @ runs[0].T - runs[1] @ runs[1].T).max():.1e}"],
    ["the principal-angle cosines to $X^*$",
     f"{np.abs(subspace_agreement(runs[0], X_star) - subspace_agreement(runs[1], X_star)).max():.1e}"]])

# %% [markdown]
# **Exercise 2.** Derive the tilt rate used above. Take $X^*$ with columns $s_j u_j$, where
# $s_j^2 = 1/\lambda_j - \beta$, and perturb column $j$ by $\varepsilon u_k$ for an unused eigenvector
# $u_k$. Show that the gradient changes by $-\varepsilon(\lambda_k - \lambda_j)\,u_k e_j^\top$ to first order.
# Then check the divergence threshold by running just below and just above it.
#
# :::{dropdown} Solution
# The gradient is $C^{-1}X - \hat L X$. The trace part changes by $-\varepsilon\lambda_k u_k e_j^\top$.
# For the other part, $C^{-1}X^* = X^*(X^{*\top}X^* + \beta I)^{-1}$ has columns $\lambda_j s_j u_j$,
# because $s_j^2 + \beta = 1/\lambda_j$. Perturbing $X$ changes $C^{-1}X$ by
# $C^{-1}\,dX - C^{-1}\,dC\,C^{-1}X^*$ with $dC = \varepsilon s_j(u_k u_j^\top + u_j u_k^\top)$. Since $u_k$ is
# orthogonal to every column of $X^*$, $C^{-1}u_k = u_k/\beta$ and $u_k^\top C^{-1} X^* = 0$, so the
# change is $\frac{\varepsilon}{\beta}(1 - \lambda_j s_j^2)\,u_k e_j^\top = \varepsilon\lambda_j\,u_k e_j^\top$.
# Adding the two parts gives $-\varepsilon(\lambda_k - \lambda_j)\,u_k e_j^\top$. A step multiplies the tilt
# by $1 - \eta(\lambda_k - \lambda_j)$, which leaves $[-1, 1]$ first for $u_k = u_{\max}$ and $j = 1$. Hence $\eta < 2/(\lambda_{\max} - \lambda_1)$.
# :::

# %% tags=["hide-cell"]
rows = []
for factor in (0.97, 1.03):
    run = fit_le_elbo(L, q, beta, eta=factor * marks["divergent"], n_steps=3000, centre=True)
    gram = np.linalg.norm(run.X @ run.X.T - X_star @ X_star.T) / np.linalg.norm(X_star @ X_star.T)
    rows.append([f"{factor} × threshold = {factor * marks['divergent']:.4f}",
                 str(run.n_steps + 1) if run.diverged else "", "" if run.diverged else f"{gram:.1e}"])
Table(["step size η", "diverged at step", "Gram error after 3000 steps"], rows)

# %% tags=["remove-cell"]
claim(bool(0.9 * marks["divergent"] > 2 * marks["safe"]),
      "Exercise 3: this eta is past 2/ell, so nothing guarantees that the ELBO still rises at every step")

# %% [markdown]
# **Exercise 3.** The divergence threshold describes only the neighbourhood of $X^*$. From the same random
# start, run the layers with $\eta$ at 0.9 times the threshold. Does the ELBO still rise at every step? How many layers does it take to reach a Gram
# error of $10^{-2}$? What does this suggest about the depth and the residual scale of a network built from such
# layers?
#
# :::{dropdown} Solution
# This $\eta$ is past $2/\ell$, twice the $1/\ell$ in the table below, so nothing guarantees that the ELBO
# still rises at every step; on this start it does, and the number of layers needed to bring the Gram
# error below $10^{-2}$ falls. The slow alignment phase contracts by
# $1 - \eta(\lambda_3 - \lambda_2)$ per layer, so the number of layers needed falls roughly in proportion to
# $1/\eta$. For a network this means that a larger residual scale reaches the same accuracy with fewer layers,
# but only up to the point where the tilt towards $u_{\max}$ overshoots. Beyond that, adding layers makes the output
# worse, not better.
# :::

# %% tags=["hide-cell"]
fast = fit_le_elbo(L, q, beta, eta=0.9 * marks["divergent"], n_steps=T, seed=0, centre=True)
Table(["step size η", "steps at which the ELBO fell", "layers to a Gram error below $10^{-2}$"],
      [[f"{name} = {run.eta:.4f}", str(int(np.sum(np.diff(run.elbo) < -1e-9))),
        str(int(np.argmax(run.gram_error < 1e-2)))]
       for name, run in (("1/ℓ", fit), ("0.9 × threshold", fast))])

# %% tags=["remove-cell"]
claim(bool(np.all(np.diff(fast.elbo) >= -1e-9) and (fast.gram_error < 1e-2).any()
           and np.argmax(fast.gram_error < 1e-2) < np.argmax(fit.gram_error < 1e-2)),
      "on this start it does, and the number of layers needed to bring the Gram error below 1e-2 falls")
