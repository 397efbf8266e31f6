"""The unrolled-inference chapter's measurements and its settings, defined once.

:data:`ETA_SLIDER` is the step-size slider of the chapter (its range and default), read by the kernel panel
(:func:`probdr_lite.presentation.figures.unrolling.eta_panel`), the live figure
(:func:`probdr_lite.presentation.live.builders.eta_live`), the chapter's text and the tests. :data:`ETAS_SHOWN` are
the step sizes of the chapter's table, and :data:`N_STEPS` the length of every run it shows. :func:`eta_runs` runs
gradient ascent on the LE-ELBO at each step size and returns what each run does, as numbers and booleans; the
chapter's sentences are its own Markdown, checked by ``claim`` cells against these facts. :func:`curvature_facts`
measures the ELBO's curvature along a run, to check the bound ell of :func:`probdr_lite.probdr.le_lipschitz`. The
data, graph and beta
are the ELBO chapter's (:data:`probdr_lite.chapters.probdr_elbo.SETUP`).
"""

from __future__ import annotations

import numpy as np

from probdr_lite.probdr import CONVERGED, fit_le_elbo, le_elbo_hessian

__all__ = ["ETA_SLIDER", "ETAS_SHOWN", "N_STEPS", "curvature_facts", "eta_runs"]

#: The chapter's step-size slider: a logarithmic range and its default (the default is close to 1/ell of the
#: chapter's graph, 0.0251).
ETA_SLIDER = {"low": 0.002, "high": 0.08, "default": 0.025}

#: The step sizes of the chapter's table, from slow to divergent.
ETAS_SHOWN = (0.002, 0.005, 0.01, 0.025, 0.04, 0.05, 0.056, 0.06, 0.07)

#: The steps of gradient ascent in every run of the chapter (its panel, live figure, table and watched run).
N_STEPS = 600


def eta_runs(L_hat, beta, etas, marks, *, n_components=2, n_steps=N_STEPS, seed=0, converged=CONVERGED) -> dict:
    """Gradient ascent on the LE-ELBO for ``n_steps`` steps at each step size in ``etas`` (the eta figure's runs),
    beside the thresholds of :func:`probdr_lite.probdr.step_sizes` (``marks``).

    Returns a dict with, per step size in the given order, ``etas``, ``diverged`` (bool), ``diverged_at`` (the step
    at which the run left every bound, or None), ``gram`` (the Gram error of the last iterate; NaN for a run that
    diverged) and ``converged`` (below ``converged`` after ``n_steps`` steps, bool); and ``n_steps``, ``gram_below``
    (= ``converged``), ``safe`` and ``divergent`` from ``marks``.
    """
    out = {"etas": [], "diverged": [], "diverged_at": [], "gram": [], "converged": []}
    for eta in etas:
        fit = fit_le_elbo(L_hat, n_components, beta, eta=float(eta), n_steps=n_steps, seed=seed, centre=True,
                          store_every=n_steps)
        gram = float("nan") if fit.diverged else float(fit.gram_error[-1])
        out["etas"].append(float(eta))
        out["diverged"].append(bool(fit.diverged))
        out["diverged_at"].append(int(fit.n_steps) + 1 if fit.diverged else None)
        out["gram"].append(gram)
        out["converged"].append(bool(not fit.diverged and gram < converged))
    out.update(n_steps=int(n_steps), gram_below=float(converged), safe=float(marks["safe"]),
               divergent=float(marks["divergent"]))
    return out


def curvature_facts(L_hat, beta, iterates) -> dict:
    """The curvatures of the LE-ELBO (nu = 1) met at the given iterates: the eigenvalues of its Hessian
    (:func:`probdr_lite.probdr.le_elbo_hessian`) over the centred directions, 1^T V = 0.

    Returns a dict of floats: ``largest``, the largest absolute eigenvalue at any of the iterates (the curvature the
    bound ell must cover); ``lowest`` and ``highest``, the extreme eigenvalues; ``logdet_low`` and ``logdet_high``,
    the extreme eigenvalues of the log-det term's part alone, which theory keeps in [-1/(8 beta), 1/beta].
    """
    whole, logdet = [], []
    for X in iterates:
        whole.append(np.linalg.eigvalsh(le_elbo_hessian(X, L_hat, beta, centre=True)))
        logdet.append(np.linalg.eigvalsh(le_elbo_hessian(X, L_hat, beta, centre=True, term="logdet")))
    whole, logdet = np.concatenate(whole), np.concatenate(logdet)
    return {"largest": float(np.abs(whole).max()), "lowest": float(whole.min()), "highest": float(whole.max()),
            "logdet_low": float(logdet.min()), "logdet_high": float(logdet.max())}
