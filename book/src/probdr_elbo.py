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
# # Dimensionality reduction as probabilistic inference
#
# [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb) found an embedding by minimising an energy under two
# constraints imposed by hand. This chapter reaches nearly the same embedding by inference instead: a
# probability model of the *precision* among the points (the inverse of their covariance), fitted to the graph
# Laplacian by variational inference. This is the ProbDR view {cite:p}`ravuri2023probdr,ravuri2024onemodel`.
#
# **What the chapter finds.** The embedding maximises an evidence lower bound (ELBO) whose trace term is half
# the Laplacian energy and whose log-determinant term replaces the scale constraint: it keeps the embedding from
# collapsing. The maximiser has a closed form: the eigenvectors of the Laplacian with the smallest eigenvalues,
# each shrunk by an amount that one new number, $\beta$, sets; $\beta$ also decides how many survive. The rest of
# the constraints' work, the degree weighting and the exclusion of the constant direction, is still done by
# hand. Without the weighting, the ELBO's plane on MNIST digits is close to classical Laplacian Eigenmaps', and
# the normalised Laplacian makes it the same; and a raw Laplacian, with its zero eigenvalue along the constant
# direction, leaves the ELBO without a maximum until the embedding is centred or the Laplacian shifted. PCA is
# the same construction for a covariance. The ELBO is what
# [the next chapter](unrolled_inference.ipynb) climbs by gradient ascent, and
# [the chapter after that](transformer_block.ipynb) reads the climb as a transformer.
#
# **In this chapter you will learn**
#
# - PCA as a Gaussian model of the *covariance* among the $n$ points, and its closed-form maximiser;
# - the Wishart distribution, and the ProbDR model of Laplacian Eigenmaps built on it;
# - how the ELBO's two terms balance, and how to solve for its maximiser;
# - the three jobs of $\beta$ (jitter, threshold, shrinkage);
# - the trap of a raw Laplacian and its two fixes.

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import wishart
from sklearn.decomposition import PCA
from threadpoolctl import threadpool_limits

from probdr_lite.chapters.probdr_elbo import SETUP
from probdr_lite.data import load_mnist
from probdr_lite.eigenmaps import laplacian_eigenmaps
from probdr_lite.presentation.figures.elbo import BETA, N_SHOW, beta_panel, elbo_terms_figure, pca_figure, trap_figure
from probdr_lite.presentation.live.builders import beta_live
from probdr_lite.presentation.plotting import Table
from probdr_lite.presentation.prose import claim, glue, num, sci
from probdr_lite.presentation.style import describe
from probdr_lite.graphs import graph_energy, knn_graph, laplacian
from probdr_lite.metrics import subspace_agreement
from probdr_lite.probdr import (
    le_closed_form,
    le_elbo,
    le_elbo_grad,
    pca_closed_form,
    pca_elbo,
    regularize_laplacian,
    unbounded_direction_demo,
    wishart_kl,
)

blas = threadpool_limits(limits=1)  # a few hundred points: one BLAS thread beats several waiting for each other

# %% tags=["remove-cell"]
glue("n_digits", str(SETUP.n))
glue("per_class", str(SETUP.n // 10))
glue("beta_value", f"{SETUP.beta:g}")
glue("k_value", str(SETUP.k))

# %% [markdown]
# Throughout, the data are {glue:text}`n_digits` MNIST digits, {glue:text}`per_class` of each class, as rows of
# $Y \in \mathbb{R}^{n \times d}$ with $n = 300$ and $d = 784$. Three settings are fixed here: $q = 2$ latent
# dimensions, $k$ = {glue:text}`k_value` neighbours in the graph, and $\beta$ = {glue:text}`beta_value`, a
# positive number that the model below adds to $X X^\top$.

# %%
Y, labels = load_mnist(n=SETUP.n, stratified=True)  # SETUP: the settings this chapter and the next two share
Y = Y.astype(np.float64)
n, d = Y.shape
q = SETUP.q  # latent dimensions
k = SETUP.k  # neighbours of the k-NN graph
beta = SETUP.beta  # the beta slider's default

# %% tags=["remove-cell"]
claim(n == 300 and d == 784 and q == 2 and len(np.unique(labels)) == 10 and k == SETUP.k and beta == SETUP.beta,
      "Y in R^{n x d} with n = 300 and d = 784. Three settings are fixed here: q = 2 latent dimensions, k neighbours "
      "and beta")

# %% [markdown]
# ## PCA as a model of the covariance among points
#
# Usually PCA is described through the $d \times d$ covariance of the pixels. Turn it around: look
# at one pixel across all $n$ images, a column of the centred data $Y$. Model each of the $d$
# columns as an independent draw from a Gaussian over the *points*,
#
# $$
# y_{:,j} \sim \mathcal{N}(0, C), \qquad C = X X^\top + \sigma^2 I \in \mathbb{R}^{n \times n},
# $$
#
# so that two images whose latent rows $x_i, x_{i'}$ point the same way have correlated pixels. The
# log-likelihood of all $d$ columns is a sum of $d$ terms, hence the factor $d$ below, and it depends on the
# data only through the $n \times n$ sample covariance $\hat C = Y Y^\top / d$, the data's estimate of $C$:
#
# $$
# F_{\mathrm{PCA}}(X) = -\frac{d}{2}\left[\log\det C + \operatorname{tr}(C^{-1} \hat C)\right] + \text{const}.
# $$
#
# This *dual* form, a Gaussian over the $n$ points with the latent coordinates in its covariance rather than
# over the $d$ pixels, is Lawrence's {cite:p}`lawrence2005gplvm`, who showed that its maximiser is the same
# eigenvector solution as Tipping and Bishop's probabilistic PCA {cite:p}`tipping1999ppca`: with
# $(\Lambda_q, U_q)$ the $q$ largest eigenpairs of $\hat C$,
#
# $$
# X^* = U_q \left(\Lambda_q - \sigma^2 I\right)^{1/2}.
# $$
#
# A direction survives only if its eigenvalue is above the noise level $\sigma^2$, and it is
# shrunk by it. We take $\sigma^2$ at its maximum-likelihood value, the mean of the eigenvalues that are not
# kept, and compare $X^*$ with scikit-learn's PCA and with five small random perturbations of it.

# %%
Yc = Y - Y.mean(axis=0)  # centre every pixel
C_hat = Yc @ Yc.T / d  # C_hat = Y Y^T / d, an n x n covariance among the points
lam_C = np.linalg.eigvalsh(C_hat)[::-1]  # eigenvalues, largest first
sigma2 = lam_C[q:].mean()  # maximum-likelihood sigma^2: the mean of the discarded eigenvalues
X_pca = pca_closed_form(C_hat, q, sigma2)  # X* = U_q (Lambda_q - sigma^2 I)^{1/2}

rng = np.random.default_rng(0)
worse = [pca_elbo(X_pca + 0.01 * rng.normal(size=X_pca.shape), C_hat, sigma2, d) for _ in range(5)]  # F_PCA nearby
pca_scores = PCA(n_components=q, svd_solver="full").fit_transform(Y)  # exact SVD, not the randomised default

# %%
n_show = 80  # eigenvalues drawn
fig = pca_figure(C_hat, labels, sigma2, n_components=q, n_show=n_show)
describe(fig, f"Left, the {n_show} largest eigenvalues of the sample covariance on a log scale with the noise level σ² "
              f"dashed and the {q} kept in red; right, the PCA embedding X* coloured by class.")
plt.show()

# %% tags=["remove-cell"]
pca_cosines = subspace_agreement(X_pca, pca_scores)
claim(bool(np.all(np.array(worse) < pca_elbo(X_pca, C_hat, sigma2, d))), "every nearby X scores lower")
claim(bool(np.all(np.abs(pca_cosines - 1) < 1e-8)), "the subspace is exactly that of ordinary PCA")
pca_drops = pca_elbo(X_pca, C_hat, sigma2, d) - np.array(worse)  # how much lower each nearby X scores
glue("sigma2", num(sigma2, 4))
glue("pca_drop_min", num(pca_drops.min(), 1))
glue("pca_drop_max", num(pca_drops.max(), 1))

# %% [markdown]
# Here $\sigma^2$ = {glue:text}`sigma2`. The subspace is exactly that of ordinary PCA, and every nearby $X$
# scores lower: the five perturbations (0.01 times a standard normal per entry) lose between
# {glue:text}`pca_drop_min` and {glue:text}`pca_drop_max` in $F_{\mathrm{PCA}}$. The spectrum on the left has
# the pattern to remember. Directions above the line $\sigma^2$ could be kept, those below are noise, and a kept
# one has squared length $\lambda - \sigma^2$.
#
# ## Laplacian Eigenmaps as a model of the precision
#
# A covariance says which points vary *together*; its inverse, the precision, says which points are
# tied together once the rest are known. A graph Laplacian looks
# like one, except that it is singular ($L\mathbf{1} = 0$), so shift it by a small $\gamma > 0$ (the last
# section returns to this). For a Gaussian with precision
# $L + \gamma I$ the log-density of a coordinate vector $f$ is, up to a constant,
#
# $$
# -\tfrac{1}{2} f^\top (L + \gamma I) f = -\tfrac{1}{4}\sum_{ij} W_{ij}\,(f_i - f_j)^2 - \tfrac{\gamma}{2}\lVert f\rVert^2 ,
# $$
#
# so coordinates that differ across heavy edges are improbable: the Laplacian energy of
# [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb), read as a prior. ProbDR takes this literally, with a
# distribution over precision matrices.
#
# ### The Wishart distribution
#
# The Wishart distribution $\mathcal{W}(V, \nu)$ is a distribution over symmetric positive-definite
# $n \times n$ matrices, as the Gamma distribution is one over positive numbers. Its scale $V$ is itself a
# symmetric positive-definite $n \times n$ matrix, and its degrees of freedom $\nu$ are a number. For a whole
# number $\nu$ a draw is a sum of outer products, $P = \sum_{m=1}^{\nu} g_m g_m^\top$ with independent
# $g_m \sim \mathcal{N}(0, V)$; so its mean is $\nu V$, and a larger $\nu$ holds it closer to that mean. Its
# log-density is
#
# $$
# \begin{aligned}
# \log \mathcal{W}(P \mid V, \nu) = {} & \frac{\nu - n - 1}{2}\log\det P - \frac{1}{2}\operatorname{tr}(V^{-1} P) \\
# & - \frac{\nu}{2}\log\det V - \log Z_n(\nu),
# \end{aligned}
# $$
#
# where the normaliser $Z_n(\nu)$ depends on $n$ and $\nu$ only. This is a density for every real
# $\nu > n - 1$. For $\nu \le n - 1$ there is none: a whole-number $\nu$ then gives a sum of fewer than $n$
# outer products, a singular matrix. PCA fits this frame: under its model $d \hat C = Y Y^\top$ is a draw from
# $\mathcal{W}(C, d)$, with $\nu = d = 784 > n - 1$, and $F_{\mathrm{PCA}}$ is its log-density as a function
# of $X$.
#
# Between two Wisharts with the same $\nu$ the KL divergence has a closed form,
#
# $$
# \mathrm{KL}\big(\mathcal{W}(V_1, \nu)\,\|\,\mathcal{W}(V_2, \nu)\big)
# = \frac{\nu}{2}\left[\operatorname{tr}(V_2^{-1} V_1) - \log\det(V_2^{-1} V_1) - n\right].
# $$
#
# A Monte-Carlo estimate, the average of $\log \mathcal{W}(P \mid V_1) - \log \mathcal{W}(P \mid V_2)$ over
# samples $P$ from the first, checks it independently on small matrices, with SciPy's Wishart distribution.

# %%
V1 = np.array([[1.0, 0.3, 0.0], [0.3, 2.0, 0.1], [0.0, 0.1, 0.5]])
V2 = 0.8 * np.eye(3)
nu = 5
P = wishart(df=nu, scale=V1).rvs(20_000, random_state=0)  # (20000, 3, 3) samples from W(V1, nu)
log_ratio = wishart(df=nu, scale=V1).logpdf(P.transpose(1, 2, 0)) - wishart(df=nu, scale=V2).logpdf(P.transpose(1, 2, 0))
kl_closed = wishart_kl(V1, V2, nu)  # the closed form
kl_mc, kl_se = log_ratio.mean(), log_ratio.std() / np.sqrt(len(log_ratio))  # Monte Carlo, with its standard error

# %% tags=["remove-cell"]
claim(bool(abs(kl_mc - kl_closed) < 3 * kl_se),
      "A Monte-Carlo estimate ... checks it independently: the two agree within three standard errors")
glue("n_small", str(V1.shape[0]))
glue("nu_small", str(nu))
glue("n_samples", f"{len(log_ratio):,}")
glue("kl_closed", num(kl_closed, 4))
glue("kl_mc", num(kl_mc, 4))
glue("kl_se", num(kl_se, 4))

# %% [markdown]
# On {glue:text}`n_small` × {glue:text}`n_small` matrices with $\nu$ = {glue:text}`nu_small`, the closed form
# gives {glue:text}`kl_closed` and the estimate from {glue:text}`n_samples` samples {glue:text}`kl_mc` ±
# {glue:text}`kl_se` (one standard error): the two agree within three standard errors.
#
# ### The model
#
# ProbDR's unobserved quantity is a matrix: $P$, an $n \times n$ symmetric positive-definite matrix, the
# precision among the $n$ points. $P$ is the *latent variable*, the one that inference averages over. The
# coordinates $X \in \mathbb{R}^{n \times q}$ are parameters of its prior, fitted by maximisation; they are
# called latent coordinates, but no distribution over them is formed.
#
# - **The prior.** $P$ scatters around $C^{-1}$, with $C = X X^\top + \beta I$ and $\beta > 0$ the number set
#   at the start: $p(P \mid X) = \mathcal{W}(P \mid C^{-1}/\nu,\ \nu)$, whose mean is $C^{-1}$.
# - **The data, in place of a likelihood.** A Bayesian model would next say how the data depend on $P$, a
#   likelihood, and infer the posterior of $P$ from it. ProbDR writes no likelihood. The data enter as one
#   summary, the graph Laplacian $\hat L$ of their $k$-nearest-neighbour graph (0/1 weights), read as a noisy
#   estimate of $P$, and it goes where the posterior would go: the *variational
#   distribution* $\hat p$, variational inference's stand-in for the posterior, is a Wishart centred on $\hat L$,
#   $\hat p(P) = \mathcal{W}(P \mid \hat L/\nu,\ \nu)$.
#
# In a model with a likelihood, Jensen's inequality bounds the log-evidence, the log-probability of the data
# given $X$ with $P$ integrated out, for any distribution $\hat p$ over $P$:
#
# $$
# \log p(\text{data} \mid X) \;\ge\; \mathbb{E}_{\hat p(P)}\big[\log p(\text{data} \mid P)\big]
# - \mathrm{KL}\big(\hat p(P)\,\|\,p(P \mid X)\big) .
# $$
#
# The right-hand side is the *evidence lower bound*, the ELBO. ProbDR keeps its form without the likelihood:
# the first term is then a constant, the left-hand side is no quantity the model defines, and the ELBO is
# $-\mathrm{KL}(\hat p \,\|\, p)$ up to a constant, an objective in its own right. Variational inference
# would also fit $\hat p$, by maximising the bound over it; here that would lose the data, since the best
# $\hat p$ would be the prior itself, with a KL divergence of zero for every $X$. Pinning $\hat p$ at $\hat L$
# is how the data enter. Only $X$ is left to fit: maximising the ELBO makes the model's distribution of
# precisions as close as it can be to the one the graph suggests.
#
# Put $V_1 = \hat L/\nu$ and $V_2 = C^{-1}/\nu$ in the KL divergence. Then $V_2^{-1} V_1 = C \hat L$ for
# every $\nu$, and dropping all that does not involve $X$ leaves the objective of this chapter and the next two,
#
# $$
# \mathrm{ELBO}(X) = \frac{\nu}{2}\left[\log\det(X X^\top + \beta I) - \operatorname{tr}\!\big((X X^\top + \beta I)\,\hat L\big)\right] + \text{const}.
# $$ (elbo)
#
# $\nu$ only multiplies the whole objective, so it changes neither the maximiser nor the direction of the
# gradient, only its length. The book takes $\nu = 1$, and that is formal: with $n$ = {glue:text}`n_digits`
# points no Wishart with one degree of freedom has a density, and the ELBO at $\nu = 1$ stands for the ELBO
# of any proper $\nu > n - 1$, divided by $\nu$. Its difference from $-\mathrm{KL}$ must not depend on $X$; we
# check that at two random $X$, with a proper $\nu = n + 1$ and the positive-definite $\hat L = L + \gamma I$.

# %%
W = knn_graph(Y, n_neighbors=k)  # the k-NN graph of Laplacian Eigenmaps
L = laplacian(W)  # L = D - W
L_hat = regularize_laplacian(L, gamma=SETUP.gamma).toarray()  # L + gamma I: positive definite
nu_big = n + 1  # a Wishart on n x n matrices has a density only for nu > n - 1
elbo_plus_kl = []
for seed in (0, 1):
    X = np.random.default_rng(seed).normal(size=(n, 2))
    C = X @ X.T + beta * np.eye(n)  # C = X X^T + beta I
    kl = wishart_kl(L_hat / nu_big, np.linalg.inv(C) / nu_big, nu_big)
    elbo_plus_kl.append(le_elbo(X, L_hat, beta, nu=nu_big) + kl)

# %% tags=["remove-cell"]
claim(bool(abs(elbo_plus_kl[0] - elbo_plus_kl[1]) <= 1e-9 * abs(elbo_plus_kl[0])),
      "Its difference from -KL must not depend on X; we check that on two random X")

# %% tags=["remove-cell"]
glue("gap_to_kl", sci(abs(elbo_plus_kl[0] - elbo_plus_kl[1]) / abs(elbo_plus_kl[0])))

# %% [markdown]
# At the two, ELBO + KL takes the same value to within {glue:text}`gap_to_kl` of its size, which is round-off.
# The two terms of the ELBO pull in opposite directions.
#
# - The **trace term** expands to $\operatorname{tr}(X^\top \hat L X) + \beta \operatorname{tr}\hat L$,
#   and for $\hat L = L$ the first part is half the Laplacian energy
#   $\tfrac{1}{2}\sum_{ij} W_{ij}\lVert x_i - x_j\rVert^2$ of Laplacian Eigenmaps (on a random $X$ the two
#   agree to round-off). On its own it would put every point at the same place.
# - The **log-determinant term** $\log\det(X X^\top + \beta I)$ grows as the columns of $X$ grow
#   and point in different directions. It does the job of the scale constraint $X^\top D X = I$ of
#   Laplacian Eigenmaps, ruling out collapse without a constraint. It does not weight the points by
#   their degrees, nor exclude the constant direction; both come back below, once the maximiser is known.

# %%
X = np.random.default_rng(2).normal(size=(n, 2))
trace_part = np.trace(X.T @ (L @ X))  # tr(X^T L X)
half_energy = graph_energy(X, W) / 2  # half the graph energy of Laplacian Eigenmaps

# %% tags=["remove-cell"]
claim(bool(abs(trace_part - half_energy) < 1e-10 * graph_energy(X, W)),
      "for L_hat = L the first part is half the Laplacian energy of Laplacian Eigenmaps")

# %% [markdown]
# Along a single unit eigenvector $u$ of $\hat L$, $\hat L u = \lambda u$, the balance is easy to
# see. For $X = s\,u$, with $\nu = 1$ and everything that does not depend on $s$ dropped,
#
# $$
# \begin{aligned}
# \mathrm{ELBO}(s\,u) &= \tfrac{1}{2}\log(\beta + s^2) - \tfrac{1}{2}\lambda s^2 + \text{const}, \\
# \frac{d}{ds}\,\mathrm{ELBO}(s\,u) &= \frac{s}{\beta + s^2} - \lambda s ,
# \end{aligned}
# $$
#
# and the derivative vanishes at $s > 0$ only where
#
# $$
# s^2 = \frac{1}{\lambda} - \beta ,
# $$ (shrinkage)
#
# which needs $\lambda < 1/\beta$; otherwise the best scale is 0. The figure draws the two terms and their sum
# for a direction with $\lambda < 1/\beta$, which settles at $s^* > 0$, and for one with $\lambda > 1/\beta$,
# where the trace term wins everywhere.

# %%
directions = (1, 12)  # eigen-directions on 1^T x = 0
fig = elbo_terms_figure(L, beta, directions=directions)
describe(fig, f"The change of the ELBO along {len(directions)} eigen-directions of L̂ against the scale s, split "
              "into its log-determinant and trace terms and their sum.")
plt.show()

# %% tags=["remove-cell"]
lam_directions = le_closed_form(L, max(directions), beta, centre=True, return_eigenvalues=True)[1]
claim(bool(lam_directions[directions[0] - 1] < 1 / beta < lam_directions[directions[1] - 1]),
      "for a direction with lambda < 1/beta, which settles at s* > 0, and for one with lambda > 1/beta, where the "
      "trace term wins everywhere")

# %% [markdown]
# ### All directions at once
#
# The same balance holds for every direction together. Take $\hat L$ symmetric positive definite. The raw
# $L = D - W$ is not ($L\mathbf{1} = 0$): it is used below on centred $X$, $\mathbf{1}^\top X = 0$, where the
# Laplacian of a connected graph is positive definite, and the last section shows why that is needed. The gradient of {eq}`elbo` is
#
# $$
# \frac{\partial\,\mathrm{ELBO}}{\partial X} = \frac{\nu}{2}\left[2\,C^{-1} X - (\hat L + \hat L^\top) X\right]
# = \nu \left[C^{-1} X - \hat L X\right],
# $$
#
# from $\partial_X \log\det(X X^\top + \beta I) = 2 C^{-1} X$ and
# $\partial_X \operatorname{tr}(X X^\top \hat L) = (\hat L + \hat L^\top) X$. At a maximum it vanishes:
# $\hat L X = C^{-1} X$. Moving $C^{-1}$ past $X$ uses $(X X^\top + \beta I) X = X (X^\top X + \beta I)$,
# so $C^{-1} X = X (X^\top X + \beta I)^{-1}$. Write the thin singular value decomposition
# $X = U S R^\top$ ($U$ with $q$ orthonormal columns $u_j$, $S = \operatorname{diag}(s_j)$, $R$ a
# $q \times q$ rotation). Then $(X^\top X + \beta I)^{-1} = R (S^2 + \beta I)^{-1} R^\top$, and the
# condition becomes, column by column,
#
# $$
# s_j\, \hat L u_j = \frac{s_j}{s_j^2 + \beta}\, u_j .
# $$
#
# Every column with $s_j > 0$ is an eigenvector of $\hat L$, with eigenvalue $\lambda_j = 1/(s_j^2 + \beta)$:
# the scale of {eq}`shrinkage` again. So every stationary point keeps some eigenvectors of $\hat L$ with those
# scales (and columns with $s_j = 0$). Which ones? To compare them, let
#
# $$
# g(x) = x - 1 - \log x \qquad (x > 0),
# $$
#
# which is zero at $x = 1$, positive elsewhere, and grows as $x$ falls below 1. Put such an $X$ back into
# {eq}`elbo`. $C$ has the eigenvalue $s_j^2 + \beta = 1/\lambda_j$ along each kept $u_j$ and $\beta$ elsewhere,
# and $\operatorname{tr}(X X^\top \hat L) = \sum_j s_j^2 \lambda_j = \sum_j (1 - \beta\lambda_j)$, so
#
# $$
# \mathrm{ELBO}(X) - \mathrm{ELBO}(0) = \frac{\nu}{2} \sum_{j \text{ kept}} g(\beta \lambda_j) .
# $$
#
# Each kept direction ($\beta\lambda_j < 1$) therefore adds to the ELBO, and the smaller its eigenvalue the more.
# Since the ELBO falls to $-\infty$ as $X$ grows (the trace term is quadratic in $X$, the log-determinant only
# logarithmic), its maximum is a stationary point, the best one: with $(\Lambda_q, U_q)$ the $q$ **smallest**
# eigenpairs of $\hat L$,
#
# $$
# X^* = U_q\left(\Lambda_q^{-1} - \beta I\right)^{1/2} R ,
# $$
#
# for any rotation $R$, and directions with $\lambda \ge 1/\beta$ get scale 0. Compare PCA: the
# same formula, with the largest eigenvalues of a covariance in place of the smallest of a
# precision, and $1/\lambda$ in place of $\lambda$. On the digits, with $X$ centred:

# %%
X_star, lam = le_closed_form(L, q, beta, centre=True, return_eigenvalues=True)  # U_q (Lambda_q^{-1} - beta I)^{1/2}
grad = le_elbo_grad(X_star, L, beta)  # (nu/2)[2 C^{-1} X - (L + L^T) X], zero at a maximum

# %% tags=["remove-cell"]
claim(bool(np.allclose(np.sum(X_star**2, axis=0), 1 / lam - beta, rtol=1e-10, atol=0)),
      "The squared column lengths match (shrinkage)")
claim(bool(np.abs(grad).max() < 1e-8 * np.abs(le_elbo_grad(np.ones_like(X_star), L, beta)).max()),
      "the gradient vanishes there")
le_cosines = subspace_agreement(X_star, laplacian_eigenmaps(Y, q, n_neighbors=k))
claim(bool(le_cosines.min() > 0.9 and le_cosines.min() < 1 - 1e-6),
      "the two subspaces are close but not equal")

# %% tags=["remove-cell"]
for j in range(q):
    glue(f"lam_{j + 1}", num(lam[j], 4))
    glue(f"length_{j + 1}", num(np.sum(X_star[:, j] ** 2), 4))
    glue(f"shrunk_{j + 1}", num(1 / lam[j] - beta, 4))
    glue(f"le_cosine_{j + 1}", num(le_cosines[j], 4))

# %% [markdown]
# | column $j$ of $X^*$ | $\lambda_j$ | squared length | $1/\lambda_j - \beta$ |
# | --- | --- | --- | --- |
# | 1 | {glue:text}`lam_1` | {glue:text}`length_1` | {glue:text}`shrunk_1` |
# | 2 | {glue:text}`lam_2` | {glue:text}`length_2` | {glue:text}`shrunk_2` |
#
# The squared column lengths match {eq}`shrinkage`, and the gradient vanishes there to round-off. Classical
# [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb) spans a nearby plane: the principal-angle cosines between the
# two are {glue:text}`le_cosine_1` and {glue:text}`le_cosine_2`, so the two subspaces are close but not equal.
# The difference is the constraint the log-determinant does not supply. With $\hat L = D - W$ the columns solve
# the ordinary eigenproblem $\hat L u = \lambda u$, the unweighted case $X^\top X = I$ that
# [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb#what-the-laplacian-measures) warned about, while classical
# Laplacian Eigenmaps solves $L v = \lambda D v$, which weights each point by its degree; the two coincide only
# when all degrees are equal. The weighting has to be put into $\hat L$ by hand: with
# $\hat L = L_{\mathrm{sym}} + \gamma I$ the columns are eigenvectors $u$ of $L_{\mathrm{sym}}$, and $v = D^{-1/2} u$
# solves $L v = \lambda D v$ (Exercise 1 of [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb#exercises)). The
# constant direction needs a hand too: the null vector of $L_{\mathrm{sym}}$ is $D^{1/2}\mathbf{1}$, which
# centring does not remove, so we add $\gamma I$, take $q + 1 = 3$ columns of the closed form, drop the first
# (the one along $D^{1/2}\mathbf{1}$) and map the other two back.

# %%
degrees = np.asarray(W.sum(axis=1)).ravel()
X_sym = le_closed_form(regularize_laplacian(laplacian(W, kind="symmetric"), SETUP.gamma), q + 1, beta)
V_sym = X_sym[:, 1:] / np.sqrt(degrees)[:, None]  # drop the D^{1/2} 1 column, then v = D^{-1/2} u
sym_cosines = subspace_agreement(V_sym, laplacian_eigenmaps(Y, q, n_neighbors=k))  # against classical LE's 2 columns

# %% tags=["remove-cell"]
claim(bool(np.all(np.abs(1 - sym_cosines) < 1e-10)),
      "This recovers the degree-weighted version exactly: the two principal-angle cosines are 1 to ten decimals")

# %% [markdown]
# This recovers the degree-weighted version exactly: the two principal-angle cosines between these columns and
# those of classical Laplacian Eigenmaps are 1 to ten decimals.

# %% tags=["remove-cell"]
glue("n_show", str(N_SHOW))
claim(q == 2 and BETA[0] < 1 / lam[1] < 1 / lam[0] < BETA[1],
      "As beta grows, the embedding shrinks, then loses its second coordinate (a line) and finally its first (a point)"
      "; red marks the q = 2 directions the embedding uses")

# %% [markdown]
# ## What $\beta$ does
#
# $\beta$ looks like a small technical addition to $X X^\top$, but it does three jobs.
#
# 1. **Jitter.** $X X^\top$ has rank $q \ll n$, so it has no inverse and $\log\det(X X^\top) = -\infty$.
#    Adding $\beta I$ makes $C$ positive definite, so the model's precision $C^{-1}$ exists.
# 2. **Threshold.** A direction survives only if $\lambda < 1/\beta$. A large $\beta$ keeps only
#    the very smoothest directions of the graph.
# 3. **Shrinkage.** A surviving direction gets the squared scale of {eq}`shrinkage`, less than the $1/\lambda$
#    it would get without $\beta$.
#
# The figure below is drawn for a range of $\beta$. Its left plot shows the {glue:text}`n_show` smallest
# eigenvalues of $\hat L$ (on $\mathbf{1}^\top x = 0$) against the threshold $1/\beta$. Red marks the $q = 2$ directions the embedding uses, blue
# those that would survive with a larger $q$, grey those that are dropped. The middle plot shows
# their squared scales, read off the columns of the closed form; the right one shows $X^*$ on
# fixed axes. As $\beta$ grows, the embedding shrinks, then loses its second coordinate (a line)
# and finally its first (a point).

# %% tags=["remove-output"]
panel = beta_panel(L, labels, beta=BETA, n_components=q, n_show=N_SHOW)
describe(panel.fig, "The smallest eigenvalues of L̂ with the threshold 1/β, the squared scales sᵢ² of the closed "
         "form, and the embedding X* coloured by class on fixed axes.")
panel.show()

# %% tags=["hide-input"]
beta_live(L, labels, n_components=q, n_show=N_SHOW, text={
    "caption": "Vermilion: the $q = {q}$ directions the embedding uses; blue: would survive with a larger $q$; "
               "grey: dropped. The right panel's axes stay fixed at the widest embedding (the smallest $\\beta$) "
               "so that the shrinkage shows.",
    "alt_eigenvalues": "The {n_show} smallest eigenvalues and the threshold 1/β = {=threshold}; {=below} lie below "
                       "it",
    "alt_scales": "Squared scales sᵢ² at β = {beta}",
    "alt_points": "X* at β = {beta}, on axes fixed at the widest embedding",
    "title_eigenvalues": "threshold 1/β = {=threshold}: {=below} of {n_show} below",
    "title_scales": "shrinkage at β = {beta}",
    "title_points": "X*: {=kept} of q = {q} directions kept",
})

# %% [markdown]
# ## The zero-eigenvalue trap
#
# So far $X$ was kept centred. Drop that, and a raw Laplacian breaks the model. $L\mathbf{1} = 0$,
# so along the constant direction $X_t = t\,\mathbf{1}/\sqrt{n}$ the trace term never changes,
# while the log-determinant keeps growing:
#
# $$
# \mathrm{ELBO}(X_t) = \tfrac{1}{2}\log(\beta + t^2) + \text{const} \;\longrightarrow\; \infty .
# $$
#
# There is no maximiser. In {eq}`shrinkage` this is $\lambda = 0$ giving $s = \infty$; in the Wishart model,
# $\mathcal{W}(L/\nu, \nu)$ is not even a proper distribution, since its scale matrix is singular. With a raw
# Laplacian, then, the closed form exists only for centred $X$.

# %% tags=["remove-cell"]
try:
    le_closed_form(L, q, beta)
    refused = False
except ValueError:
    refused = True
claim(refused, "With a raw Laplacian, then, the closed form exists only for centred X")

# %% tags=["remove-cell"]
glue("gamma", f"{SETUP.gamma:g}")
glue("constant_length", num(np.sqrt(1 / SETUP.gamma - beta), 2))

# %% [markdown]
# There are two fixes.
#
# - **Regularise**: use $\hat L = L + \gamma I$ with a small $\gamma > 0$. Every eigenvalue moves
#   up by $\gamma$, and the constant vector, now with eigenvalue $\gamma$, gets the finite squared scale
#   $1/\gamma - \beta$ and becomes the first coordinate of $X^*$. All points share it, so it moves the cloud
#   without changing its shape. With $\gamma$ = {glue:text}`gamma` the closed form's first column is constant,
#   of length $\sqrt{1/\gamma - \beta}$ ≈ {glue:text}`constant_length`.
# - **Centre**: require $\mathbf{1}^\top X = 0$, which removes the constant direction from the
#   problem. The closed form then uses the eigenvectors $u_1, \dots, u_q$ of $L$ orthogonal to
#   $\mathbf{1}$, leaving the constant one out as classical [Laplacian Eigenmaps](laplacian_eigenmaps.ipynb)
#   does; that is what the closed form above did.

# %%
gamma = SETUP.gamma  # the shift of L + gamma I
X_reg = le_closed_form(regularize_laplacian(L, gamma), q + 1, beta)  # first column: the constant vector

# %% tags=["remove-cell"]
claim(bool(np.ptp(X_reg[:, 0]) < 1e-10 * np.abs(X_reg[:, 0]).max()
           and abs(np.linalg.norm(X_reg[:, 0]) - np.sqrt(1 / gamma - beta)) < 1e-8),
      "With gamma the closed form's first column is constant, of length sqrt(1/gamma - beta)")

# %%
gammas = (gamma, 0.1)
fig = trap_figure(L, beta, gammas=gammas, title="The constant direction: a raw Laplacian has no optimum")
describe(fig, f"The ELBO along the constant direction against t on a log axis: for the raw Laplacian it rises "
              f"without end, for L + γI with γ = {gammas[0]} and {gammas[1]} it peaks.")
plt.show()

# %% tags=["remove-cell"]
ts = np.logspace(-2, 4, 4001)  # the figure's range of t, finely
raw_trap = unbounded_direction_demo(L, beta, ts)
peaks = [ts[np.argmax(unbounded_direction_demo(regularize_laplacian(L, g), beta, ts))] for g in gammas]
claim(bool(np.all(np.diff(raw_trap) > 0)), "Along the constant direction the raw Laplacian's ELBO climbs without end")
claim(all(abs(t / np.sqrt(1 / g - beta) - 1) < 0.01 for t, g in zip(peaks, gammas)),
      "With gamma I added it peaks where t^2 = 1/gamma - beta (dotted lines) and then falls")

# %% [markdown]
# Along the constant direction the raw Laplacian's ELBO climbs without end (black). With
# $\gamma I$ added it peaks where $t^2 = 1/\gamma - \beta$ (dotted lines) and then falls.
#
# ## Summary
#
# - **What was shown.** PCA and Laplacian Eigenmaps are two fits of one kind of model. PCA matches a
#   *covariance* $X X^\top + \sigma^2 I$ to the sample covariance; ProbDR's Laplacian Eigenmaps matches a
#   *precision* $(X X^\top + \beta I)^{-1}$ to the graph Laplacian through a KL divergence between Wisharts,
#   which gives the ELBO {eq}`elbo`. Its trace term is half the Laplacian energy, and its log-determinant
#   prevents collapse in place of the scale constraint. The maximiser is $U_q(\Lambda_q^{-1} - \beta I)^{1/2}$,
#   with $\beta$ as jitter, threshold and shrinkage at once. With $\hat L = D - W$ it spans a plane close to
#   classical Laplacian Eigenmaps' on the digits; the same plane takes two steps by hand: the degree weighting,
#   through $\hat L = L_{\mathrm{sym}} + \gamma I$, and dropping the column along $D^{1/2}\mathbf{1}$.
# - **What it rests on.** The data enter only through the $k$-nearest-neighbour Laplacian, pinned as the
#   variational distribution instead of a likelihood; $\hat L$ must be positive definite (a raw Laplacian is
#   shifted by $\gamma I$ or the embedding centred); and $\nu = 1$, which is formal.
# - **What it does not show.** That the Wishart model describes the digits well, or that its embedding is a
#   better one: it reproduces Laplacian Eigenmaps with a probabilistic reading, nothing more. Nor does it say how
#   to find $X^*$ without an eigendecomposition; [the next chapter](unrolled_inference.ipynb) climbs
#   {eq}`elbo` step by step, which is where layers come from.
#
# ## Exercises
#
# **Exercise 1.** The PCA objective along $X = s\,u$, where $u$ is a unit eigenvector of $\hat C$ with
# eigenvalue $\lambda$, is $-\frac{d}{2}\left[\log(\sigma^2 + s^2) + \frac{\lambda}{\sigma^2 + s^2}\right]$
# plus a constant. Find the best $s$. Which directions survive?
#
# :::{dropdown} Solution
# Write $c = \sigma^2 + s^2$. The derivative of $\log c + \lambda / c$ in $c$ is $1/c - \lambda/c^2$,
# zero at $c = \lambda$. So $s^2 = \lambda - \sigma^2$ if $\lambda > \sigma^2$, and otherwise the
# constraint $s^2 \ge 0$ binds and $s = 0$: only the directions above the noise level survive.
# :::

# %% tags=["hide-cell"]
u = pca_closed_form(C_hat, 1, 1e-12)  # the top eigenvector, scale sqrt(lambda_1)
lam1 = float(np.sum(u**2))
u = u / np.sqrt(lam1)
grid = np.linspace(0.0, 2.0, 401)
F_pca = [pca_elbo(s * u, C_hat, sigma2, d) for s in grid]
s_best = grid[np.argmax(F_pca)]
claim(bool(abs(s_best - np.sqrt(lam1 - sigma2)) <= grid[1]),
      "Exercise 1: along the top eigenvector the grid's best s is sqrt(lambda_1 - sigma^2), to the grid's step")
print(f"On the digits, along the top eigenvector, the best s on a grid of step {grid[1]:.3f} is {s_best:.3f}, "
      f"and sqrt(lambda_1 - sigma^2) = {np.sqrt(lam1 - sigma2):.3f}.")

# %% [markdown]
# **Exercise 2.** Show that the gradient of the ELBO at $X = 0$ is zero, yet $X = 0$ is not a
# maximum as long as $\lambda_1 < 1/\beta$. What does that mean for gradient ascent started at
# exactly zero, and why does [the next chapter](unrolled_inference.ipynb) start from a random $X$
# (with small entries) rather than from zero?
#
# :::{dropdown} Solution
# The gradient $\frac{\nu}{2}[2C^{-1}X - (\hat L + \hat L^\top)X]$ is linear in $X$ up to the factor
# $C^{-1}$, so it is zero at $X = 0$. Along $X = s\,u_1$ the ELBO is
# $\frac{1}{2}\log(\beta + s^2) - \frac{1}{2}\lambda_1 s^2 + \text{const}$, whose second
# derivative at $s = 0$ is $1/\beta - \lambda_1 > 0$: $X = 0$ is a minimum along that direction.
# Along an eigenvector with $\lambda > 1/\beta$ it is a maximum, so where such eigenvalues exist, as
# on the digits, $X = 0$ is a saddle point. Gradient ascent started exactly at zero never moves;
# any random start has a component along $u_1$, and the ascent makes it grow.
# :::

# %% tags=["remove-cell"]
claim(bool(np.linalg.eigvalsh(L.toarray()).max() > 1 / beta),
      "Exercise 2: on the digits some eigenvalue exceeds 1/beta, so X = 0 is a saddle point")

# %% [markdown]
# **Exercise 3.** Run the closed form with $\hat L = L + \gamma I$, for $\gamma = 0.01$ and
# $\gamma = 0.1$, with $q + 1 = 3$ columns, the first of which is the constant one. Compare the other
# two with the centred solution. Why are they (almost) the same, and what changes with $\gamma$?
#
# :::{dropdown} Solution
# $L$ and $L + \gamma I$ have the same eigenvectors, and the constant vector is an eigenvector of
# $L$, so the others all lie in $\mathbf{1}^\perp$: the non-constant columns are the eigenvectors
# $u_1$ and $u_2$ of $L$, exactly those of the centred problem. Their eigenvalues move from $\lambda$ to
# $\lambda + \gamma$, so their scales shrink slightly, $s^2 = 1/(\lambda + \gamma) - \beta$, and the
# constant column's length $\sqrt{1/\gamma - \beta}$ falls as $\gamma$ grows.
# :::

# %% tags=["hide-cell"]
claim(gammas == (0.01, 0.1), "Exercise 3: the closed form with gamma = 0.01 and gamma = 0.1")
rows = []
for g in gammas:
    Xg = le_closed_form(regularize_laplacian(L, g), q + 1, beta)
    cos_g, sq_g = subspace_agreement(Xg[:, 1:], X_star), np.sum(Xg[:, 1:] ** 2, axis=0)
    rows.append([f"{g}", f"{cos_g[0]:.6f}, {cos_g[1]:.6f}", f"{sq_g[0]:.6f}, {sq_g[1]:.6f}",
                 f"{1 / (lam[0] + g) - beta:.6f}, {1 / (lam[1] + g) - beta:.6f}"])
Table(["$\\gamma$", "cosines to the centred $X^*$", "squared scales of columns 2 and 3",
       "$1/(\\lambda + \\gamma) - \\beta$"], rows)
