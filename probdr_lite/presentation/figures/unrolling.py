"""Figures and slider panels of the unrolled-inference chapter.

Gradient ascent on the Laplacian-eigenmaps ELBO, X_{t+1} = X_t + eta dELBO/dX(X_t),
run by :func:`probdr_lite.probdr.fit_le_elbo`, drawn step by step:

- :func:`eta_panel`     an eta slider: the gap to the optimal ELBO and the Gram error
  ||X_t X_t^T - X* X*^T||_F / ||X* X*^T||_F against the step, for slow, stable and
  divergent step sizes, and where the iterate ends up;
- :func:`steps_figure`  snapshots of the embedding after t steps (layers), beside the closed form;
- :func:`steps_scrub`   the embedding moving step by step (kernel-free).

The alt texts are the chapter's: it describes the figure after building it
(:func:`probdr_lite.presentation.style.describe`) and passes the panel's and the scrub's as ``alt``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from scipy.linalg import orthogonal_procrustes

from probdr_lite._validation import check_class_labels, check_result, check_scalar, check_seed, check_square
from probdr_lite._threads import one_thread
from probdr_lite.chapters.probdr_elbo import SETUP
from probdr_lite.chapters.unrolled_inference import ETA_SLIDER, N_STEPS
from probdr_lite.presentation.plotting import class_scatter, fixed_layout, scrub
from probdr_lite.probdr import CONVERGED, LEFit, fit_le_elbo, le_closed_form, le_elbo, step_sizes
from probdr_lite.presentation.widgets import SliderPanel, range_slider, slider_label

__all__ = ["eta_panel", "run_verdict", "steps_figure", "steps_scrub"]

# Fixed y ranges, so that the slow, stable and divergent runs are drawn on the same axes.
GAP_LIMITS = (1e-9, 1e5)
GRAM_LIMITS = (1e-5, 1e2)


def run_verdict(fit: LEFit) -> str:
    """A few words on how the run went: diverged, converged (and when), or too slow."""
    if fit.diverged:
        return f"diverged at step {fit.n_steps + 1}"
    if fit.gram_error[-1] < CONVERGED:
        return f"converged by step {int(np.argmax(fit.gram_error < CONVERGED))}"
    return "too slow"


@one_thread
def _eta_figure(L_hat, labels, beta, n_components, n_steps, seed, centre, alt):
    L = check_square(L_hat, "L_hat")
    labels = check_class_labels(labels, L.shape[0])
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    T = check_scalar(n_steps, "n_steps", low=1, high=100_000, integer=True)
    seed = check_seed(seed)
    X_star = le_closed_form(L, n_components, beta, centre=centre)
    elbo_star = le_elbo(X_star, L, beta)
    marks = step_sizes(L, beta, n_components, centre)

    fig, (ax_f, ax_g, ax_x) = plt.subplots(1, 3, figsize=(10.5, 3.4))
    (gap_line,) = ax_f.plot([], [], color="k")
    ax_f.set_yscale("log")
    ax_f.set_xlim(0, T)
    ax_f.set_ylim(*GAP_LIMITS)
    ax_f.set_xlabel("step t (= layer)", fontsize=8)
    ax_f.set_ylabel(r"ELBO$(X^*)$ $-$ ELBO$(X_t)$", fontsize=8)
    (gram_line,) = ax_g.plot([], [], color="C3")
    ax_g.axhline(CONVERGED, color="0.5", ls=":", lw=1)
    ax_g.set_yscale("log")
    ax_g.set_xlim(0, T)
    ax_g.set_ylim(*GRAM_LIMITS)
    ax_g.set_xlabel("step t (= layer)", fontsize=8)
    ax_g.set_ylabel(r"$\|X_t X_t^\top - X^* X^{*\top}\|_F \,/\, \|X^* X^{*\top}\|_F$", fontsize=8)
    points = class_scatter(ax_x, X_star, labels, s=5)
    ax_x.set_xlabel(r"$x_1$", fontsize=8)
    ax_x.set_ylabel(r"$x_2$", fontsize=8)
    for ax in (ax_f, ax_g, ax_x):
        ax.tick_params(labelsize=7)
    fig.suptitle(rf"always uphill for $\eta \leq 1/\ell$ = {marks['safe']:.3g};   divergent for "
                 rf"$\eta > 2/(\lambda_{{max}} - \lambda_1)$ = {marks['divergent']:.3g}", fontsize=9, y=0.99)

    @one_thread
    def update(eta):
        fit = fit_le_elbo(L, n_components, beta, eta=float(eta), n_steps=T, seed=seed,
                          centre=centre, store_every=T)
        steps = np.arange(len(fit.elbo))
        gap = np.clip(elbo_star - fit.elbo, GAP_LIMITS[0], None)
        gap_line.set_data(steps, gap)
        gram_line.set_data(steps, np.clip(fit.gram_error, GRAM_LIMITS[0], None))
        points.set_offsets(fit.X[:, :2])
        ext = 1.1 * float(np.abs(fit.X[:, :2]).max()) or 1.0
        ax_x.set_xlim(-ext, ext)
        ax_x.set_ylim(-ext, ext)
        ax_f.set_title(rf"$\eta$ = {eta:.3g}: {run_verdict(fit)}", fontsize=9)
        ax_g.set_title(f"distance to $X^*$: {fit.gram_error[-1]:.2g} at t = {fit.n_steps}", fontsize=9)
        ax_x.set_title(f"where it ends: $X_t$ at t = {fit.n_steps}", fontsize=9)

    fixed_layout(fig, alt, left=0.07, right=0.93, top=0.83, bottom=0.15, wspace=0.42)
    return fig, update


@one_thread
def eta_panel(L_hat, labels, *, alt: str, beta=SETUP.beta, eta=None, n_components: int = SETUP.q,
              n_steps: int = N_STEPS, seed: int = 0, centre: bool = True) -> SliderPanel:
    """An eta slider over gradient ascent on the LE-ELBO from a random start.

    Each move runs :func:`probdr_lite.probdr.fit_le_elbo` for ``n_steps`` steps
    with step size eta and draws, against the step t, the gap to the optimal
    ELBO and the Gram error to the closed form X*, and on the right the last
    iterate X_t coloured by class. Small eta is slow, eta up to 1/ell is
    stable, eta beyond 2/(lambda_max - lambda_1) diverges (see :func:`probdr_lite.probdr.step_sizes`).

    Parameters
    ----------
    L_hat : array_like or sparse, shape (n, n)
        A graph Laplacian with ``centre=True``, or an SPD L + gamma I.
    labels : array_like of int, shape (n,)
    alt : str
        The figure's alt text, one sentence (the chapter's words).
    beta : float > 0, default the chapter's (:data:`probdr_lite.chapters.probdr_elbo.SETUP`)
    eta : (low, high, default), default: the chapter's slider
        (:data:`probdr_lite.chapters.unrolled_inference.ETA_SLIDER`). Positive; a logarithmic slider.
    n_components : int, default the chapter's q
    n_steps : int, default :data:`probdr_lite.chapters.unrolled_inference.N_STEPS`
        In [1, 100000].
    seed : int, default 0
    centre : bool, default True

    Returns
    -------
    SliderPanel with the slider ``"eta"``.
    """
    if eta is None:
        eta = (ETA_SLIDER["low"], ETA_SLIDER["high"], ETA_SLIDER["default"])
    slider = range_slider("eta", eta, positive=True, log=True, description=slider_label("eta"))
    fig, update = _eta_figure(L_hat, labels, beta, n_components, n_steps, seed, centre, alt)
    return SliderPanel(fig, update, [slider])


# --- the embedding step by step -----------------------------------------------------

def _check_fit(fit, labels, steps):
    check_result(fit, "fit", fit_le_elbo, kind=LEFit, nonempty=False)
    labels = check_class_labels(labels, fit.X.shape[0])
    stored = {int(s): i for i, s in enumerate(fit.steps)}
    steps = [check_scalar(s, "steps entry", low=0, high=int(fit.steps[-1]), integer=True) for s in steps]
    missing = [s for s in steps if s not in stored]
    if missing:
        raise ValueError(f"steps {missing} were not stored in fit (run fit_le_elbo with a smaller "
                         "store_every)")
    return labels, [stored[s] for s in steps], steps


def _aligned_star(fit):
    """X* rotated onto the last iterate (X* is defined only up to a rotation R)."""
    R, _ = orthogonal_procrustes(fit.X_star, fit.X)
    return fit.X_star @ R


@one_thread
def steps_figure(fit: LEFit, labels, steps=(0, 10, 50, 150, 600)):
    """Snapshots of the embedding X_t after t steps, then the closed form X* (rotated onto X_T).

    Parameters
    ----------
    fit : LEFit
        From :func:`probdr_lite.probdr.fit_le_elbo`, with every step in ``steps`` stored
        (``store_every=1`` stores them all).
    labels : array_like of int, shape (n,)
    steps : sequence of int
        1 to 8 steps to draw.

    Returns
    -------
    matplotlib Figure
    """
    labels, idx, steps = _check_fit(fit, labels, steps)
    check_scalar(len(steps), "len(steps)", low=1, high=8, integer=True)
    star = _aligned_star(fit)
    ext = 1.1 * float(np.abs(star[:, :2]).max())
    fig, axes = plt.subplots(1, len(steps) + 1, figsize=(2.1 * (len(steps) + 1), 2.4))
    for ax, i, t in zip(axes, idx, steps):
        X = fit.iterates[i]
        class_scatter(ax, X, labels, s=2, legend=False)
        ax.set_title(f"layer {t}\nGram error {fit.gram_error[t]:.2g}", fontsize=8)
    class_scatter(axes[-1], star, labels, s=2, legend=False)
    axes[-1].set_title("closed form $X^*$\n(rotated onto the last)", fontsize=8)
    for ax in axes:
        ax.set_xlim(-ext, ext)
        ax.set_ylim(-ext, ext)
        ax.set_xticks([]); ax.set_yticks([])
        ax.set_aspect("equal")
    fig.tight_layout()
    return fig


@one_thread
def steps_scrub(fit: LEFit, labels, steps, *, alt: str, dpi: float = 64, max_bytes: int = 2_000_000):
    """The embedding moving step by step: one frame per stored step in ``steps``.

    Left, the iterate X_t coloured by class on fixed axes (those of X*); right,
    the Gram error against the step with the current step marked. ``alt`` is the frames' alt text, one sentence
    (the chapter's words).
    """
    labels, idx, steps = _check_fit(fit, labels, steps)
    star = _aligned_star(fit)
    ext = 1.3 * float(np.abs(star[:, :2]).max())
    fig, (ax_x, ax_g) = plt.subplots(1, 2, figsize=(7.2, 3.0))
    points = class_scatter(ax_x, fit.iterates[idx[0]], labels, s=4, legend=False)
    ax_x.set_xlim(-ext, ext)
    ax_x.set_ylim(-ext, ext)
    ax_x.set_aspect("equal")
    ax_x.set_xticks([]); ax_x.set_yticks([])
    ax_g.plot(np.arange(len(fit.gram_error)), fit.gram_error, color="C3")
    (marker,) = ax_g.plot([], [], "o", color="k")
    ax_g.set_yscale("log")
    ax_g.set_xlabel("step t (= layer)", fontsize=8)
    ax_g.set_ylabel("Gram error to $X^*$", fontsize=8)
    ax_g.tick_params(labelsize=7)
    frames = list(zip(idx, steps))

    def update(frame):
        i, t = frame
        points.set_offsets(fit.iterates[i][:, :2])
        marker.set_data([t], [fit.gram_error[t]])
        ax_x.set_title(f"$X_t$ after t = {t} steps", fontsize=9)
        ax_g.set_title(f"Gram error {fit.gram_error[t]:.2g}", fontsize=9)

    fixed_layout(fig, alt, left=0.03, right=0.97, top=0.88, bottom=0.16, wspace=0.25)
    return scrub(fig, update, frames, label="step", dpi=dpi, max_bytes=max_bytes)
