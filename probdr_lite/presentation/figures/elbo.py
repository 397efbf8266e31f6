"""Figures and slider panels of the ELBO chapter, dimensionality reduction as probabilistic inference.

- :func:`pca_figure`        PCA as a Wishart covariance model: which eigen-directions of the
  sample covariance S survive the noise sigma^2, and the embedding they give;
- :func:`elbo_terms_figure` the two terms of the Laplacian-eigenmaps ELBO along one
  eigen-direction: the trace term pulls towards collapse, the log-det term pushes out;
- :func:`trap_figure`       the ELBO along the constant vector, unbounded for a raw Laplacian
  and bounded once gamma I is added;
- :func:`beta_panel`        a beta slider: beta as jitter, threshold (lambda < 1/beta survives)
  and shrinkage (s^2 = 1/lambda - beta) of the closed-form optimum.

The maths is :mod:`probdr_lite.probdr`; this module only draws it. The sentences about the figures (their alt
texts) are the chapter's: it describes each figure after building it.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import ticker

from probdr_lite._validation import check_array, check_class_labels, check_scalar, check_square
from probdr_lite._threads import one_thread
from probdr_lite.presentation.plotting import class_scatter
from probdr_lite.probdr import (
    le_closed_form,
    le_elbo,
    pca_closed_form,
    regularize_laplacian,
    unbounded_direction_demo,
)
from probdr_lite.chapters.probdr_elbo import BETA_SLIDER
from probdr_lite.presentation.widgets import SliderPanel, range_slider, slider_label

__all__ = ["pca_figure", "elbo_terms_figure", "trap_figure", "beta_panel", "BETA", "N_SHOW"]

#: The beta slider as (low, high, default), for the kernel panel and the live figure: the chapter's
#: :data:`probdr_lite.chapters.probdr_elbo.BETA_SLIDER`, whose default is the chapter's beta.
BETA = (BETA_SLIDER["low"], BETA_SLIDER["high"], BETA_SLIDER["default"])

#: How many of the smallest eigenvalues of L_hat the beta figure draws (the kernel panel and the live figure).
N_SHOW = 15

KEPT, SURVIVES, DROPPED = "C3", "C0", "0.6"


def _plain_log_axis(axis):
    """Log-scale ticks at 1, 2, 5 x 10^k written as plain numbers (0.5, 2, 20), not 2 x 10^0."""
    axis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    axis.set_minor_formatter(ticker.NullFormatter())


# --- PCA, the covariance twin -------------------------------------------------------

@one_thread
def pca_figure(S, labels, sigma2, n_components: int = 2, n_show: int = 20):
    """Spectrum of the sample covariance S with the noise level sigma^2, and the PCA embedding.

    Left: the ``n_show`` largest eigenvalues lambda of S (log scale) and the line
    sigma^2; the first q = ``n_components`` are used, each with scale
    s^2 = lambda - sigma^2 (only directions above the line survive). Right: the
    closed form X* = U_q (Lambda_q - sigma^2 I)^{1/2} of
    :func:`probdr_lite.probdr.pca_closed_form`, coloured by class.

    Parameters
    ----------
    S : array_like, shape (n, n)
    labels : array_like of int, shape (n,)
    sigma2 : float > 0
    n_components : int, default 2
        q, in [2, n_show].
    n_show : int, default 20
        In [2, n].

    Returns
    -------
    matplotlib Figure, without its alt text (the chapter gives it, with :func:`~probdr_lite.presentation.style.describe`)
    """
    S = check_square(S, "S")
    n = S.shape[0]
    labels = check_class_labels(labels, n)
    sigma2 = check_scalar(sigma2, "sigma2", low=0, low_inclusive=False)
    n_show = check_scalar(n_show, "n_show", low=2, high=n, integer=True)
    q = check_scalar(n_components, "n_components", low=2, high=n_show, integer=True)
    _, lam = pca_closed_form(S, n_show, sigma2, return_eigenvalues=True)
    X = pca_closed_form(S, q, sigma2)
    fig, (ax_s, ax_x) = plt.subplots(1, 2, figsize=(9, 3.4))
    idx = np.arange(1, n_show + 1)
    colours = [KEPT if i < q and lam[i] > sigma2 else (SURVIVES if lam[i] > sigma2 else DROPPED)
               for i in range(n_show)]
    ax_s.scatter(idx, lam, c=colours, s=25, zorder=3)
    ax_s.axhline(sigma2, color="k", lw=1, ls="--")
    ax_s.text(n_show, sigma2, r" $\sigma^2$", va="bottom", ha="right", fontsize=9)
    ax_s.set_yscale("log")
    _plain_log_axis(ax_s.yaxis)
    ax_s.set_xlabel("eigen-direction i (largest first)", fontsize=8)
    ax_s.set_ylabel(r"eigenvalue $\lambda_i$ of $\hat C$", fontsize=8)
    ax_s.set_title(rf"kept: the first $q$ = {q} (red), scale $s^2 = \lambda - \sigma^2$", fontsize=9)
    class_scatter(ax_x, X, labels, s=6)
    ax_x.set_xlabel(r"$x_1$", fontsize=8)
    ax_x.set_ylabel(r"$x_2$", fontsize=8)
    ax_x.set_title(r"PCA as inference: $X^* = U_q (\Lambda_q - \sigma^2 I)^{1/2}$", fontsize=9)
    fig.tight_layout()
    return fig


# --- the two terms of the LE-ELBO ------------------------------------------------------

@one_thread
def elbo_terms_figure(L_hat, beta, directions=(1, 12), centre: bool = True, n_grid: int = 200):
    """The ELBO along X = s u for unit eigenvectors u of L_hat, split into its two terms.

    Along X = s u (u a unit eigenvector, L_hat u = lambda u), with the values at
    s = 0 subtracted,

        log-det term  (1/2) log det(s^2 u u^T + beta I) = (1/2) log(1 + s^2 / beta) + const,
        trace term   -(1/2) tr((s^2 u u^T + beta I) L_hat) = -(1/2) lambda s^2 + const,

    and their sum, the ELBO, is computed with :func:`probdr_lite.probdr.le_elbo`.
    It peaks at s^2 = 1/lambda - beta when lambda < 1/beta and at s = 0
    otherwise. One panel per direction.

    Parameters
    ----------
    L_hat : array_like or sparse, shape (n, n)
        Symmetric; positive definite on the subspace used (see ``centre``).
    beta : float > 0
    directions : sequence of int
        1-based indices of the eigenvectors (smallest eigenvalue first, on
        1^T x = 0 when ``centre``), 1 to 4 of them, each in [1, min(n - 1, 100)].
    centre : bool, default True
    n_grid : int, default 200
        Points along s, in [10, 2000].

    Returns
    -------
    matplotlib Figure, without its alt text (the chapter gives it, with :func:`~probdr_lite.presentation.style.describe`)
    """
    L = check_square(L_hat, "L_hat")
    n = L.shape[0]
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    n_grid = check_scalar(n_grid, "n_grid", low=10, high=2000, integer=True)
    directions = list(directions)
    check_scalar(len(directions), "len(directions)", low=1, high=4, integer=True)
    top = min(n - 1, 100)
    directions = [check_scalar(i, "directions entry", low=1, high=top, integer=True) for i in directions]
    U, lam = le_closed_form(L, max(directions), 1e-12, centre=centre, return_eigenvalues=True)
    U = U / np.linalg.norm(U, axis=0, keepdims=True)  # tiny beta: columns are ~unscaled; make them unit
    fig, axes = plt.subplots(1, len(directions), figsize=(4.2 * len(directions), 3.2), squeeze=False)
    for ax, i in zip(axes[0], directions):
        u, lam_i = U[:, i - 1:i], lam[i - 1]
        s_star2 = max(1.0 / lam_i - beta, 0.0)
        s = np.linspace(0, 2.2 * max(np.sqrt(s_star2), np.sqrt(beta)), n_grid)
        elbo = np.array([le_elbo(si * u, L, beta) for si in s])
        elbo -= elbo[0]
        logdet = 0.5 * np.log1p(s ** 2 / beta)
        trace = -0.5 * lam_i * s ** 2
        ax.plot(s, logdet, color="C2", label="log-det term")
        ax.plot(s, trace, color="C1", label="trace term (energy)")
        ax.plot(s, elbo, color="k", lw=2, label="ELBO (their sum)")
        ax.axvline(np.sqrt(s_star2), color="C3", ls="--", lw=1,
                   label=r"$s^* = \sqrt{\max(1/\lambda - \beta, 0)}$")
        lo = min(elbo.min(), -0.5)
        ax.set_ylim(lo, max(logdet.max(), 0.5) * 1.1)
        ax.set_xlabel(r"scale $s$ of $X = s\,u$", fontsize=8)
        ax.set_ylabel("change from s = 0", fontsize=8)
        verdict = "survives" if lam_i < 1.0 / beta else "is dropped"
        ax.set_title(rf"direction {i}: $\lambda$ = {lam_i:.3g}, $1/\beta$ = {1 / beta:.3g}: {verdict}",
                     fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


# --- the zero-eigenvalue trap ---------------------------------------------------------

@one_thread
def trap_figure(L, beta, gammas=(1e-2, 1e-1), ts=None, *, title: str):
    """The ELBO along X_t = t 1 / sqrt(n) for a raw Laplacian and for L + gamma I.

    With L 1 = 0 the trace term does not see the constant vector, so the ELBO
    grows like log t without end (:func:`probdr_lite.probdr.unbounded_direction_demo`).
    Adding gamma I turns it back down, with its peak at t^2 = 1/gamma - beta.

    Parameters
    ----------
    L : array_like or sparse, shape (n, n)
        A graph Laplacian (L 1 = 0).
    beta : float > 0
    gammas : sequence of float > 0
        1 to 4 values, each below 1/beta (so that the peak exists).
    ts : array_like, optional
        Positive values of t; default 100 log-spaced values from 1e-2 to 1e4.
    title : str
        The chapter's title for the figure (what it shows of the raw Laplacian).

    Returns
    -------
    matplotlib Figure, without its alt text (the chapter gives it, with :func:`~probdr_lite.presentation.style.describe`)
    """
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    gammas = [check_scalar(g, "gammas entry", low=0, high=1.0 / beta, low_inclusive=False,
                           high_inclusive=False) for g in gammas]
    check_scalar(len(gammas), "len(gammas)", low=1, high=4, integer=True)
    ts = np.logspace(-2, 4, 100) if ts is None else check_array(ts, "ts", ndim=1, min_rows=2)
    check_scalar(float(ts.min()), "ts entry", low=0, low_inclusive=False)
    fig, ax = plt.subplots(figsize=(6, 3.4))
    raw = unbounded_direction_demo(L, beta, ts)
    ax.plot(ts, raw - raw[0], color="k", lw=2, label="raw L (L 1 = 0): no maximum")
    for j, g in enumerate(gammas):
        vals = unbounded_direction_demo(regularize_laplacian(L, g), beta, ts)
        (line,) = ax.plot(ts, vals - vals[0], color=f"C{j}", label=rf"$L + \gamma I$, $\gamma$ = {g:g}")
        ax.axvline(np.sqrt(1.0 / g - beta), color=line.get_color(), ls=":", lw=1)
    ax.set_xscale("log")
    span = float(np.ptp(raw))
    ax.set_ylim(-1.5 * span, 1.3 * span)
    ax.set_xlabel(r"$t$ in $X_t = t\,\mathbf{1}/\sqrt{n}$", fontsize=8)
    ax.set_ylabel("ELBO change from the smallest t", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


# --- the beta panel --------------------------------------------------------------

@one_thread
def _beta_figure(L_hat, labels, beta_min, n_components, n_show, centre):
    L = check_square(L_hat, "L_hat")
    n = L.shape[0]
    labels = check_class_labels(labels, n)
    n_show = check_scalar(n_show, "n_show", low=2, high=n - 1 if centre else n, integer=True)
    q = check_scalar(n_components, "n_components", low=2, high=n_show, integer=True)
    # The eigenvalues do not depend on beta; the widest embedding is at the smallest beta.
    X_wide, lam = le_closed_form(L, n_show, beta_min, centre=centre, return_eigenvalues=True)
    idx = np.arange(1, n_show + 1)

    fig, (ax_l, ax_s, ax_x) = plt.subplots(1, 3, figsize=(10.5, 3.4))
    dots = ax_l.scatter(idx, lam, s=28, zorder=3)
    threshold = ax_l.axhline(1.0, color="k", ls="--", lw=1)
    ax_l.set_yscale("log")
    _plain_log_axis(ax_l.yaxis)
    ax_l.set_ylim(0.8 * lam[0], 1.3 * max(lam[-1], 1.0 / beta_min))
    ax_l.set_xlabel(r"eigen-direction $i$ (smallest $\lambda$ first)", fontsize=8)
    ax_l.set_ylabel(r"eigenvalue $\lambda_i$ of $\hat L$", fontsize=8)
    bars = ax_s.bar(idx, np.zeros(n_show), color=DROPPED)
    ax_s.set_ylim(0, 1.05 * (1.0 / lam[0] - beta_min))
    ax_s.set_xlabel(r"eigen-direction $i$", fontsize=8)
    ax_s.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax_l.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax_s.set_ylabel(r"scale$^2$  $s_i^2 = \max(1/\lambda_i - \beta, 0)$", fontsize=8)
    points = class_scatter(ax_x, X_wide[:, :2], labels, s=5)
    ext = 1.1 * float(np.abs(X_wide[:, :2]).max())
    ax_x.set_xlim(-ext, ext)
    ax_x.set_ylim(-ext, ext)
    ax_x.set_xlabel(r"$x_1$", fontsize=8)
    ax_x.set_ylabel(r"$x_2$", fontsize=8)
    ax_x.tick_params(labelsize=7)
    ax_l.tick_params(labelsize=7)
    ax_s.tick_params(labelsize=7)

    @one_thread
    def update(beta):
        X = le_closed_form(L, n_show, float(beta), centre=centre)
        s2 = np.sum(X * X, axis=0)  # squared column norms = 1/lambda - beta, or 0
        alive = lam < 1.0 / beta
        colours = [KEPT if alive[i] and i < q else (SURVIVES if alive[i] else DROPPED)
                   for i in range(n_show)]
        dots.set_color(colours)
        threshold.set_ydata([1.0 / beta, 1.0 / beta])
        for bar, h, c in zip(bars, s2, colours):
            bar.set_height(h)
            bar.set_color(c)
        points.set_offsets(X[:, :2])
        n_kept = int(np.sum(alive[:q]))
        ax_l.set_title(rf"threshold $1/\beta$ = {1 / beta:.3g}: {int(alive.sum())} of {n_show} below",
                       fontsize=9)
        ax_s.set_title(rf"shrinkage at $\beta$ = {beta:.3g}", fontsize=9)
        ax_x.set_title(rf"$X^*$: {n_kept} of $q$ = {q} directions kept", fontsize=9)

    # fixed margins: tight_layout would refit the axes around each frame's titles, so they would jump
    fig.subplots_adjust(left=0.06, right=0.93, top=0.88, bottom=0.15, wspace=0.38)
    return fig, update


@one_thread
def beta_panel(L_hat, labels, *, beta=BETA, n_components: int = 2, n_show: int = N_SHOW,
               centre: bool = True) -> SliderPanel:
    """A beta slider over the closed-form optimum of the Laplacian-eigenmaps ELBO.

    Left: the ``n_show`` smallest eigenvalues lambda of L_hat and the threshold
    1/beta; directions below it survive (red: the q used, blue: would survive
    with a larger q, grey: dropped). Middle: their squared scales
    s^2 = 1/lambda - beta, read off the columns of
    :func:`probdr_lite.probdr.le_closed_form`. Right: the first two coordinates
    of X*, on fixed axes, so the shrinkage as beta grows is visible.

    Parameters
    ----------
    L_hat : array_like or sparse, shape (n, n)
        A graph Laplacian (with ``centre=True``) or an SPD L + gamma I.
    labels : array_like of int, shape (n,)
    beta : (low, high, default), default :data:`BETA`
        Positive; a logarithmic slider.
    n_components : int, default 2
        q, in [2, n_show].
    n_show : int, default :data:`N_SHOW`
    centre : bool, default True
        Work on 1^T X = 0 (classical Laplacian Eigenmaps); see ``le_closed_form``.

    Returns
    -------
    SliderPanel with the slider ``"beta"``; its figure ``.fig`` has no alt text yet (the chapter describes it).
    """
    slider = range_slider("beta", beta, positive=True, log=True, description=slider_label("beta"))
    fig, update = _beta_figure(L_hat, labels, slider.low, n_components, n_show, centre)
    return SliderPanel(fig, update, [slider])
