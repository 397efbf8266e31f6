"""The bridge from a fixed graph to attention: two Laplacians, their step-size limits, and the heat-kernel bump.

The unrolled-inference chapter steps on the ELBO with the Laplacian L = D - W of a k-NN graph of the data, whose
eigenvalues reach tens; the transformer-block chapter steps with L = I - A of the attention graph, whose eigenvalues
lie in [0, 2]. An explicit Euler step X - h L X of graph diffusion is stable exactly when h < 2 / lambda_max(L), so the
step sizes of the two chapters are comparable only through the dimensionless h lambda_max. This module computes the
two spectra (with NumPy's dense eigensolvers), draws them, and draws one row of A as a heat-kernel bump on the sphere
with a kappa control, to show what "kappa is an inverse bandwidth" means.
"""

from __future__ import annotations

import numpy as np

from probdr_lite.presentation.style import describe
from probdr_lite._validation import check_array, check_scalar
from probdr_lite.presentation.prose import num
from probdr_lite.presentation.plotting import scrub
from probdr_lite.chapters.transformer_block import BUMP_KAPPAS, TOY_SETTINGS
from probdr_lite.presentation.widgets import Slider, SliderPanel, slider_label

__all__ = ["laplacian_eigenvalues", "euler_limits", "spectra_figure", "fibonacci_sphere",
           "bump_figure", "bump_panel", "bump_scrub"]


def laplacian_eigenvalues(L) -> np.ndarray:
    """All eigenvalues of a graph Laplacian, ascending, as real numbers.

    A symmetric L (such as D - W) uses ``numpy.linalg.eigvalsh``. A random-walk Laplacian I - D^{-1} W' with a
    symmetric W' is not symmetric but is similar to I - D^{-1/2} W' D^{-1/2}, so its eigenvalues are real; they are
    computed with ``numpy.linalg.eigvals`` and the (rounding-level) imaginary parts dropped after a check.

    Parameters
    ----------
    L : array or sparse matrix of shape (n, n)
    """
    if hasattr(L, "toarray"):
        L = L.toarray()
    L = check_array(np.asarray(L, dtype=np.float64), "L", ndim=2, square=True)
    if np.allclose(L, L.T, atol=1e-12, rtol=0):
        return np.linalg.eigvalsh(0.5 * (L + L.T))
    lam = np.linalg.eigvals(L)
    scale = max(1.0, float(np.abs(lam).max()))
    if np.abs(lam.imag).max() > 1e-8 * scale:
        raise ValueError("L must have real eigenvalues (a random-walk Laplacian of a symmetric graph); "
                         f"got imaginary parts up to {np.abs(lam.imag).max():.2e}")
    return np.sort(lam.real)


def euler_limits(eigenvalues) -> dict:
    """Step-size limits of the explicit Euler step X - h L X for a Laplacian with these eigenvalues.

    Along an eigenvector with eigenvalue lambda the step multiplies the component by 1 - h lambda, which stays in
    (-1, 1] for every eigenvalue exactly when 0 <= h < 2 / lambda_max: the stability limit. A random-walk Laplacian
    has lambda_max <= 2, so h <= 1 is sufficient for every one of them; h <= 1 is also where the step
    (1 - h) X + h A X is a convex combination of a point and its neighbours' mean.

    Returns
    -------
    dict with ``lambda_max``, ``h_stable`` = 2 / lambda_max.
    """
    lam = check_array(np.asarray(eigenvalues, dtype=np.float64), "eigenvalues", ndim=1)
    lam_max = float(lam.max())
    if lam_max <= 0:
        raise ValueError(f"eigenvalues must include a positive one (a Laplacian of a graph with edges); max {lam_max}")
    return {"lambda_max": lam_max, "h_stable": 2.0 / lam_max}


def spectra_figure(fixed, attention, h_fixed, h_attention, labels=("L = D − W", "L = I − A")):
    """The sorted eigenvalues of two Laplacians side by side, with the Euler limit 2 / h of each chapter's step.

    Parameters
    ----------
    fixed, attention : 1-d arrays of eigenvalues (e.g. from :func:`laplacian_eigenvalues`)
    h_fixed, h_attention : float > 0
        The diffusion step each chapter takes (h = eta for the ELBO step of the unrolled-inference chapter,
        h = 2 eta for the block); an eigenvalue above 2 / h would make that step unstable.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    for ax, lam, h, label, colour in ((axes[0], fixed, h_fixed, labels[0], "tab:blue"),
                                      (axes[1], attention, h_attention, labels[1], "tab:green")):
        lam = np.sort(check_array(np.asarray(lam, dtype=float), "eigenvalues", ndim=1))
        h = check_scalar(h, "h", low=0.0, low_inclusive=False)
        ax.plot(np.arange(lam.size), lam, ".", ms=3, color=colour, label="eigenvalues")
        ax.axhline(2.0 / h, color="tab:red", ls="--", lw=1, label=f"2 / h = {num(2.0 / h, 2)} (stability limit)")
        ax.set(xlabel="index (ascending)", ylabel="eigenvalue",
               title=f"{label}: λ_max = {num(lam.max(), 2)}, h λ_max = {num(h * lam.max(), 2)}")
        ax.set_ylim(bottom=min(0.0, lam.min()) - 0.02 * max(lam.max(), 2.0 / h))
        ax.legend(fontsize="small", loc="upper left")
    fig.tight_layout()
    return fig


def fibonacci_sphere(n: int = 1500) -> np.ndarray:
    """``n`` nearly evenly spread unit vectors in R^3 (a Fibonacci lattice), shape (n, 3)."""
    n = check_scalar(n, "n", low=10, high=100_000, integer=True)
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    phi = np.pi * (1.0 + 5.0 ** 0.5) * k
    r = np.sqrt(1.0 - z ** 2)
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


def _bump(P, kappa):
    """Softmax weights exp(kappa x*.p_j) / sum with x* the north pole, and the heat kernel exp(-|x* - p|^2 / t),
    t = 2 / kappa, normalised the same way."""
    cos = P[:, 2]  # x* = (0, 0, 1)
    w = np.exp(kappa * (cos - 1.0))  # exp(kappa x*.p) / e^kappa, no overflow
    heat = np.exp(-np.sum((P - np.array([0.0, 0.0, 1.0])) ** 2, axis=1) / (2.0 / kappa))
    return w / w.sum(), heat / heat.sum()


def bump_figure(n_points: int = 1500):
    """Figure and ``update(kappa)``: one row of A on the unit sphere, the attention of the north pole x*.

    Left: the weight of each point against its angle to x*, the softmax exp(kappa x*.p) (dots) and the heat kernel
    exp(-||x* - p||^2 / t) with t = 2 / kappa (line), each normalised to sum to 1 over the points; the grey line
    marks the angle where ||x* - p||^2 = t. Right: the sphere seen from the side, coloured by the weight.
    """
    import matplotlib.pyplot as plt

    P = fibonacci_sphere(n_points)
    angle = np.degrees(np.arccos(np.clip(P[:, 2], -1.0, 1.0)))
    order = np.argsort(angle)
    fig = plt.figure(figsize=(10, 3.6))
    ax = fig.add_subplot(1, 2, 1)
    dots = ax.plot(angle, np.zeros_like(angle), ".", ms=3, color="tab:blue", label="softmax of κ x⋆·p")[0]
    line = ax.plot(angle[order], np.zeros_like(angle), "-", lw=1, color="tab:orange",
                   label="heat kernel, t = 2 / κ")[0]
    edge = ax.axvline(0.0, color="0.5", ls="--", lw=1, label="‖x⋆ − p‖² = t")
    ax.set(xlabel="angle between x⋆ and p (degrees)", ylabel="attention weight of p", xlim=(0, 180))
    ax.legend(fontsize="small", loc="upper right")
    ax3 = fig.add_subplot(1, 2, 2, projection="3d")
    sc = ax3.scatter(P[:, 0], P[:, 1], P[:, 2], c=np.zeros(len(P)), cmap="viridis", s=6, vmin=0.0, vmax=1.0)
    ax3.scatter([0], [0], [1.05], marker="*", s=80, color="tab:red")
    ax3.view_init(elev=20, azim=30)
    ax3.set_box_aspect((1, 1, 1))
    ax3.set_axis_off()
    ax3.set_title("the weights on the sphere (★ = x⋆), scaled to the largest", fontsize="small")

    def update(kappa):
        kappa = check_scalar(kappa, "kappa", low=0.0, high=1e4, low_inclusive=False)
        w, heat = _bump(P, kappa)
        dots.set_ydata(w)
        line.set_ydata(heat[order])
        ax.set_ylim(0, 1.1 * w.max())
        edge.set_xdata([np.degrees(np.arccos(max(-1.0, 1.0 - 1.0 / kappa)))] * 2)
        sc.set_array(w / w.max())
        ax.set_title(f"κ = {num(kappa, 1)}: bandwidth t = 2 / κ = {num(2.0 / kappa, 3)}, "
                     f"{num(1.0 / np.sum(w ** 2), 0)} effective neighbours", fontsize="medium")

    fig.tight_layout()
    return fig, update


def bump_panel(kappa=None, n_points: int = 1500, kappas=BUMP_KAPPAS) -> SliderPanel:
    """A kappa slider over :func:`bump_figure`, logarithmic from the first to the last of ``kappas`` (default the
    chapter's :data:`probdr_lite.chapters.transformer_block.BUMP_KAPPAS`), starting at ``kappa`` (default the toy's
    kappa); the chapter describes its figure ``.fig``."""
    kappas = [check_scalar(k, "kappas", low=0.0, high=1e4, low_inclusive=False) for k in kappas]
    low, high = min(kappas), max(kappas)
    kappa = TOY_SETTINGS["kappa"]["default"] if kappa is None else kappa
    kappa = check_scalar(kappa, "kappa", low=low, high=high)
    fig, update = bump_figure(n_points)
    return SliderPanel(fig, update, [Slider("kappa", low, high, kappa, log=True, description=slider_label("kappa"))])


def bump_scrub(kappas=BUMP_KAPPAS, n_points: int = 1500, dpi: float = 60, *, alt: str):
    """Kernel-free twin of :func:`bump_panel`: precomputed frames for the given kappas (default the chapter's
    :data:`probdr_lite.chapters.transformer_block.BUMP_KAPPAS`), each carrying the chapter's sentence ``alt`` as its
    alt text (:func:`~probdr_lite.presentation.style.describe`)."""
    kappas = [check_scalar(k, "kappas", low=0.0, high=1e4, low_inclusive=False) for k in kappas]
    fig, update = bump_figure(n_points)
    describe(fig, alt)
    return scrub(fig, update, kappas, label="κ", dpi=dpi)
