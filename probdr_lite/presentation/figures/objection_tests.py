"""The objections chapter: one figure per test, drawn from the numbers :mod:`probdr_lite.chapters.objections` computes.

Every builder takes the arrays the chapter has already computed (so nothing is computed twice) and returns a
matplotlib figure; the threshold a verdict uses is drawn as a grey dashed line, so the reader can see which side of
it each number falls on. The figures' descriptions (alt texts, :func:`probdr_lite.presentation.style.describe`), the
tables' captions are the chapter's words: the chapter describes each figure after building it and passes the rest
in. The labels of this chapter's tables (what each threshold decides, the tasks and the numbers of objection 5, the
updates) are defined once, here or in the modules they are imported from, and a missing one raises ``KeyError``
naming it: nothing falls back to a key. The verdicts and the summary table are the chapter's own Markdown, checked
by the facts of :mod:`probdr_lite.chapters.objections`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_array, check_length, check_result, check_scalar
from probdr_lite.presentation.prose import num
from probdr_lite.presentation.style import METRIC_LABELS as METRICS
from probdr_lite.presentation.style import variant_style
from probdr_lite.chapters.objections import (THRESHOLDS, asymmetry_along_path, metrics_by_variant,
                                             regulariser_prediction, regulariser_sweep, stop_gradient_sweep)
from probdr_lite.presentation.plotting import Table
from probdr_lite.chapters.objections import training_runs
from probdr_lite.presentation.figures.training import QUANTITY_LABELS, TASK_NAMES

#: The two numbers that measure clustering *by class* (the claim of the MNIST figure); the other two are local.
CLASS_LEVEL = ("between_within", "kmeans_nmi")

__all__ = [
    "THRESHOLD_DECIDES",
    "THRESHOLD_NAMES",
    "thresholds_table",
    "regulariser_table",
    "asymmetry_figure",
    "spectrum_figure",
    "stop_gradient_figure",
    "regulariser_figure",
    "layer_metrics_figure",
    "single_runs_table",
]

_GUIDE = dict(color="0.5", ls="--", lw=1)


def _vector(x, name, length=None, what="step"):
    x = check_array(x, name, ndim=1)
    return x if length is None else check_length(x, name, length, what)


def _metrics(metrics) -> dict:
    """``metrics`` from :func:`probdr_lite.chapters.objections.metrics_by_variant`, with ``layers`` and at least one variant."""
    check_result(metrics, "metrics", metrics_by_variant, keys=("layers",))
    if len(metrics) < 2:
        raise ValueError("metrics must hold at least one variant besides 'layers'")
    return metrics


def _style(variant):
    """(label, colour) of a block variant from the book-wide :data:`probdr_lite.presentation.style.VARIANT_STYLE`;
    a variant without a style raises (no label falls back to the key)."""
    return tuple(variant_style(variant, "block"))


#: The name of each threshold of :data:`probdr_lite.chapters.objections.THRESHOLDS` in the chapter's table of
#: thresholds: words, not the package's keys.
THRESHOLD_NAMES = {
    "asymmetry": "relative difference",
    "tangent_cosine": "cosine of the tangent parts",
    "eigen_tol": "eigenvalue tolerance",
    "cosine": "mean cosine",
    "approx_error": "relative error",
    "identity": "identity tolerance",
}

#: What each threshold of :data:`probdr_lite.chapters.objections.THRESHOLDS` decides: the labels of the chapter's
#: table of thresholds, defined once.
THRESHOLD_DECIDES = {
    "asymmetry": "1: largest relative difference still counted as 'the same direction' (full space)",
    "tangent_cosine": "1: smallest cosine of the tangent parts still counted as 'the same direction'",
    "eigen_tol": "2: an eigenvalue below minus this is negative; a residual below it is zero",
    "cosine": "3: smallest mean cosine for stop-gradient to pass (and F_full must rise for every seed)",
    "approx_error": "4: largest relative error for the approximation to pass",
    "identity": "3 and 4: largest difference for an identity to hold to rounding",
}


def _label(labels: dict, key: str, what: str) -> str:
    """``labels[key]``, or ``KeyError`` naming the missing label (never the key itself)."""
    try:
        return labels[key]
    except KeyError:
        raise KeyError(f"the {what} {key!r} has no label; labels defined: {sorted(labels)}") from None


def thresholds_table(thresholds: dict | None = None) -> Table:
    """The thresholds behind the verdicts (default :data:`probdr_lite.chapters.objections.THRESHOLDS`), each by its
    name (:data:`THRESHOLD_NAMES`) with what it decides (:data:`THRESHOLD_DECIDES`); a threshold without a name or
    a label raises ``KeyError`` naming it."""
    thresholds = THRESHOLDS if thresholds is None else thresholds
    return Table(["threshold", "value", "decides"],
                 [[_label(THRESHOLD_NAMES, k, "threshold"), f"{v:g}", _label(THRESHOLD_DECIDES, k, "threshold")]
                  for k, v in thresholds.items()])


def regulariser_table(points) -> Table:
    """Objection 4 on MNIST latents: one row per (label, n, result) of
    :func:`probdr_lite.chapters.objections.regulariser_approximation`, the points the regulariser figure draws."""
    body = []
    for label, n, r in points:
        body.append([label, str(n), num(r["cosine"]), num(r["relative_error"], 2), num(r["norm_ratio"])])
    return Table(["latents", "n", "cosine", "relative error", "||exact|| / ||approx||"], body)


def asymmetry_figure(mnist: dict, causal: dict, kappas, random_values):
    """Objection 1: the relative difference of 2 L X from (L + L^T) X per step, and why.

    Parameters
    ----------
    mnist, causal : dicts from :func:`probdr_lite.chapters.objections.asymmetry_along_path` (no mask / causal mask)
    kappas, random_values : the kappas and :func:`probdr_lite.chapters.objections.asymmetry_by_kappa` for random latents
    """
    for name, d in (("mnist", mnist), ("causal", causal)):
        check_result(d, name, asymmetry_along_path, keys=("relative_difference",))
    rel = _vector(mnist["relative_difference"], "mnist['relative_difference']")
    rel_c = _vector(causal["relative_difference"], "causal['relative_difference']")
    kappas = _vector(kappas, "kappas")
    random_values = _vector(random_values, "random_values", kappas.shape[0], "kappa")
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.6))  # 2 x 2: readable at the width of the book's column
    axes = axes.ravel()
    ax = axes[0]
    ax.plot(np.arange(rel.size), rel, "o-", color="tab:blue", label="no mask")
    ax.plot(np.arange(rel_c.size), rel_c, "s-", color="tab:purple", label="causal mask")
    ax.axhline(THRESHOLDS["asymmetry"], **_GUIDE, label="threshold")
    ax.set(xlabel="step t", ylabel="||2 L X - (L + Lᵀ) X|| / ||(L + Lᵀ) X||", ylim=(0, 1.05),
           title="full space: relative difference")
    ax.legend(fontsize="small")
    ax = axes[1]
    if "tangent_cosine" in mnist and "tangent_cosine" in causal:
        ax.plot(np.arange(rel.size), _vector(mnist["tangent_cosine"], "mnist['tangent_cosine']", rel.size), "o-",
                color="tab:blue", label="no mask")
        ax.plot(np.arange(rel_c.size), _vector(causal["tangent_cosine"], "causal['tangent_cosine']", rel_c.size),
                "s-", color="tab:purple", label="causal mask")
        ax.axhline(THRESHOLDS["tangent_cosine"], **_GUIDE, label="threshold")
        ax.legend(fontsize="small")
    ax.set(xlabel="step t", ylabel="cosine of the tangent parts", ylim=(0.5, 1.01),
           title="what LayerNorm keeps: cosine")
    ax = axes[2]
    steps = np.arange(rel.size)
    ax.fill_between(steps, _vector(mnist["column_sum_min"], "column_sum_min", rel.size),
                    _vector(mnist["column_sum_max"], "column_sum_max", rel.size), color="tab:blue", alpha=0.3,
                    label="range over points")
    ax.axhline(1.0, **_GUIDE, label="1 (A symmetric)")
    ax.set(xlabel="step t", ylabel="column sum of A (attention received)", title="why: unequal in-degrees")
    ax.legend(fontsize="small")
    ax = axes[3]
    ax.semilogy(kappas, np.maximum(random_values, 1e-17), "o-", color="tab:gray")
    ax.axhline(THRESHOLDS["asymmetry"], **_GUIDE)
    ax.set_xscale("log")
    ax.set(xlabel="κ", ylabel="relative difference", title="random latents (equal degrees)")
    fig.tight_layout()
    return fig


def spectrum_figure(min_eig_rw, min_eig_sym, gamma):
    """Objection 2: the smallest eigenvalue of the symmetric part of I - A and of L_sym + gamma I per step."""
    rw = _vector(min_eig_rw, "min_eig_rw")
    sym = _vector(min_eig_sym, "min_eig_sym")
    gamma = check_scalar(gamma, "gamma", low=0.0)
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.plot(np.arange(rw.size), rw, "o-", color="tab:blue", label="(I - A + (I - A)ᵀ) / 2, the paper's run")
    ax.plot(np.arange(sym.size), sym, "s-", color="tab:green", label=f"L_sym + γ I (γ = {gamma:g}), symmetric run")
    ax.axhline(0.0, **_GUIDE)
    ax.set(xlabel="step t", ylabel="smallest eigenvalue", title="is the Wishart scale positive definite?")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def stop_gradient_figure(sweep: dict):
    """Objection 3: cosine with the gradient of F_full over kappa (mean +- sd over seeds) and the change in F_full.

    ``sweep`` is the dict returned by :func:`probdr_lite.chapters.objections.stop_gradient_sweep`; the right panel's title
    names the step ``sweep["eta"]`` that its block took.
    """
    check_result(sweep, "sweep", stop_gradient_sweep,
                 keys=("kappas", "eta", "cosine_stop_gradient", "cosine_paper", "delta_F_block"))
    eta = check_scalar(sweep["eta"], "sweep['eta']", low=0.0, low_inclusive=False)
    kappas = _vector(sweep["kappas"], "sweep['kappas']")
    fig, axes = plt.subplots(1, 2, figsize=(10.2, 3.6))
    ax = axes[0]
    for key, label, colour, shift in (("cosine_stop_gradient", "stop-gradient direction", "tab:orange", 0.97),
                                      ("cosine_paper", "the paper's direction", "tab:blue", 1.03)):
        c = check_array(sweep[key], f"sweep[{key!r}]", ndim=2)
        ax.errorbar(kappas * shift, c.mean(1), yerr=c.std(1, ddof=1) if c.shape[1] > 1 else None, fmt="o-",
                    color=colour, capsize=3, label=label)
    ax.axhline(THRESHOLDS["cosine"], **_GUIDE, label="threshold")
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xscale("log")
    ax.set(xlabel="κ", ylabel="cosine with autograd ∇F_full", ylim=(-1.05, 1.05),
           title="direction (mean ± sd over seeds)")
    ax.legend(fontsize="small", loc="lower left")
    ax = axes[1]
    dF = check_array(sweep["delta_F_block"], "sweep['delta_F_block']", ndim=2)
    for j in range(dF.shape[1]):
        ax.plot(kappas * (1 + 0.04 * (j - dF.shape[1] / 2)), dF[:, j], "o", color="tab:blue", alpha=0.7,
                label="one seed" if j == 0 else None)
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set(xlabel="κ", ylabel="F_full(after) − F_full(before)",
           title=f"one paper block step (η = {eta:g}): does F_full rise?")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def regulariser_figure(sweep: dict, mnist_points=None, d_q=128, beta=1.0):
    """Objection 4: relative error and cosine of 2 X / (d_q + beta) against 2 C^{-1} X over n.

    Parameters
    ----------
    sweep : dict from :func:`probdr_lite.chapters.objections.regulariser_sweep`
    mnist_points : list of (label, n, result) with result a dict from
        :func:`probdr_lite.chapters.objections.regulariser_approximation`, drawn as stars; optional
    d_q : int, the latent dimension (a vertical line at n = d_q)
    beta : float, for the dotted asymptotes of :func:`probdr_lite.chapters.objections.regulariser_prediction`
    """
    check_result(sweep, "sweep", regulariser_sweep, keys=("ns", "relative_error", "cosine"))
    ns = _vector(sweep["ns"], "sweep['ns']")
    d_q = check_scalar(d_q, "d_q", low=2, integer=True)
    err = check_array(sweep["relative_error"], "sweep['relative_error']", ndim=2)
    cos = check_array(sweep["cosine"], "sweep['cosine']", ndim=2)
    fig, axes = plt.subplots(1, 2, figsize=(10.2, 3.6))
    for ax, vals, ylabel in ((axes[0], err, "relative error"), (axes[1], cos, "cosine")):
        ax.plot(ns, vals.mean(1), "o-", color="tab:blue", label="random LayerNormed latents")
        ax.fill_between(ns, vals.min(1), vals.max(1), color="tab:blue", alpha=0.2)
        for k, (label, n, res) in enumerate(mnist_points or []):
            key = "relative_error" if ylabel == "relative error" else "cosine"
            ax.plot([n], [res[key]], "*", ms=12, color=("tab:red", "tab:purple", "tab:brown")[k % 3], label=label)
        ax.axvline(d_q, **_GUIDE)
        ax.set_xscale("log")
        ax.set(xlabel="n (points)", ylabel=ylabel)
    grid = np.unique(np.geomspace(2, max(ns.max(), 4 * d_q), 80).astype(int))
    pred = np.array([regulariser_prediction(int(n), d_q, beta) for n in grid])
    for k, part in enumerate((grid <= d_q, grid > d_q)):
        ok = part & np.isfinite(pred)
        axes[0].plot(grid[ok], pred[ok], "k:", label="asymptotes (n ≪ d_q, n ≫ d_q)" if k == 0 else None)
    axes[0].axhline(THRESHOLDS["approx_error"], color="0.5", ls="-.", lw=1, label="threshold")
    axes[0].set_yscale("log")
    axes[0].set_title(f"||approx - exact|| / ||exact||  (dashed: n = d_q = {d_q})")
    axes[1].set_title("direction: cosine(approx, exact)")
    axes[1].set_ylim(0, 1.02)
    axes[0].legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def layer_metrics_figure(metrics: dict):
    """The minor objection: the four clustering numbers per layer, one line per variant; the NMI of k-means as its
    mean with error bars of ± one standard deviation over the k-means seeds.

    ``metrics`` is the dict returned by :func:`probdr_lite.chapters.objections.metrics_by_variant`.
    """
    layers = _vector(_metrics(metrics)["layers"], "metrics['layers']")
    fig, axes = plt.subplots(2, (len(METRICS) + 1) // 2, figsize=(10, 6.6))  # readable at the column's width
    axes = axes.ravel()
    for ax, (key, label) in zip(axes, METRICS.items()):
        for variant, m in metrics.items():
            if variant == "layers":
                continue
            name, colour = _style(variant)
            values = _vector(m[key], f"metrics[{variant!r}][{key!r}]", layers.size, "layer")
            spread = (_vector(m["kmeans_nmi_sd"], f"metrics[{variant!r}]['kmeans_nmi_sd']", layers.size, "layer")
                      if key == "kmeans_nmi" else None)
            ax.errorbar(layers, values, yerr=spread, fmt="o-", ms=3, capsize=2, color=colour, label=name)
        ax.set(xlabel="layer")
        kind = "class level" if key in CLASS_LEVEL else "local"
        ax.set_title(f"{label}\n({kind}; mean ± sd over the k-means seeds)" if key == "kmeans_nmi"
                     else f"{label}\n({kind})", fontsize="medium")
    axes[0].legend(fontsize="x-small")
    fig.tight_layout()
    return fig


#: The columns of :func:`single_runs_table`, each label written once.
SINGLE_RUNS_HEADER = ("cell", "initialisation", "paired seeds", "A − I − attention, seed by seed",
                      "seeds better / worse", "the round's verdict")


def single_runs_table(runs: dict, caption=None) -> Table:
    """Objection 5: each cell of the trained-transformers chapter's confirmatory round, its paired differences (A − I
    minus attention) seed by seed, how many point each way, and the round's verdict (read from the family interval).
    ``runs`` is the dict returned by :func:`probdr_lite.chapters.objections.training_runs`."""
    from probdr_lite.presentation.figures.recipes import INIT_LABELS, ROUND_NAMES
    from probdr_lite.presentation.figures.training import quantity_difference

    check_result(runs, "runs", training_runs, keys=("round", "interaction"))
    body = []
    for e in runs["round"]:
        q = "final_val_acc" if e["metric"].endswith("acc") else "final_val_loss"
        body.append([_label(ROUND_NAMES, e["task"], "task"), _label(INIT_LABELS, e["init"], "initialisation"),
                     str(e["n"]), ", ".join(quantity_difference(float(d), q, 3 if q.endswith("loss") else 2)
                                            for d in e["differences"]),
                     f"{e['n_better']} / {e['n_worse']}", e["verdict"]])
    return Table(list(SINGLE_RUNS_HEADER), body, caption=caption)
