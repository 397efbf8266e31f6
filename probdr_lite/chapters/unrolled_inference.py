"""The unrolled-inference chapter's measurements: the facts its computed sentences state.

:func:`eta_outcomes` runs gradient ascent on the LE-ELBO at each step size and says whether it diverged, converged or
fell short; :func:`eta_facts` groups the step sizes by that and sets them beside the step-size thresholds. The
chapter (``book/src/unrolled_inference.py``) holds the sentence, a template filled by
:func:`probdr_lite.presentation.prose.fill`.

Every choice a sentence makes is a boolean here, decided by a threshold that is an argument with a default, and
the tests feed numbers on both sides of it.
"""

from __future__ import annotations

from probdr_lite.probdr import CONVERGED, fit_le_elbo

__all__ = ["eta_outcomes", "eta_facts"]


def eta_outcomes(L_hat, beta, etas, *, n_components=2, n_steps=600, seed=0, converged=CONVERGED) -> list:
    """For each step size, what the unrolled-inference chapter's run does in ``n_steps`` steps (the eta figure's runs):
    ``"diverged"``, ``"converged"`` (Gram error below ``converged``) or ``"short"`` (neither)."""
    out = []
    for eta in etas:
        fit = fit_le_elbo(L_hat, n_components, beta, eta=float(eta), n_steps=n_steps, seed=seed, centre=True,
                          store_every=n_steps)
        if fit.diverged:
            out.append("diverged")
        elif fit.gram_error[-1] < converged:
            out.append("converged")
        else:
            out.append("short")
    return out


def eta_facts(L_hat, beta, etas, marks, *, n_components=2, n_steps=600, seed=0, converged=CONVERGED) -> dict:
    """The eta figure's step sizes ``etas`` grouped by what the run does (:func:`eta_outcomes`), beside the
    thresholds of :func:`probdr_lite.probdr.step_sizes` (``marks``).

    ``groups``: for each outcome that some step size has, in the order short, converged, diverged, a dict with the
    ``etas`` (in the given order) and the booleans ``short``, ``converged`` and ``diverged`` (which outcome it is);
    ``gram_below`` (the Gram error a converged run ends below) and ``n_steps``; ``safe`` and ``divergent`` from
    ``marks``; ``diverged_past_threshold``: the runs that diverged are exactly those with ``eta`` above
    ``divergent``.
    """
    outcomes = eta_outcomes(L_hat, beta, etas, n_components=n_components, n_steps=n_steps, seed=seed,
                            converged=converged)
    groups = []
    for kind in ("short", "converged", "diverged"):
        group = [float(e) for e, o in zip(etas, outcomes) if o == kind]
        if group:
            groups.append({"etas": group, **{k: k == kind for k in ("short", "converged", "diverged")}})
    diverged = {float(e) for e, o in zip(etas, outcomes) if o == "diverged"}
    return {"groups": groups, "gram_below": float(converged), "n_steps": int(n_steps),
            "safe": float(marks["safe"]), "divergent": float(marks["divergent"]),
            "diverged_past_threshold": {float(e) for e in etas if e > marks["divergent"]} == diverged}
