"""The objections chapter's verdicts: the numbers of :mod:`probdr_lite.objections` in, facts out.

Each ``*_facts`` function returns the numbers a verdict states and, as a word or a boolean, every choice that
follows from them, each decided by a threshold of :data:`probdr_lite.objections.THRESHOLDS` (printed by the
chapter next to the verdicts). A verdict is about the objection and is one of the keys of :data:`VERDICTS`:
"holds" means the numbers back it, "fails" that they do not, "depends" that they back it in one regime and not
in another (the chapter says which regime), "untested" that there is nothing to judge yet, and for objection 1
"full_only" or "tangent_only", that only one of its two measures backs it. The words, like the sentences, are the
chapter's (``book/src/objections.py``), templates filled by :func:`probdr_lite.presentation.prose.fill`; a template
chooses only on the booleans returned here, and the chapter writes each verdict's row of the summary table as a
:class:`probdr_lite.presentation.figures.objection_tests.ObjectionVerdict`.

A range of values is stated by three facts, ``<name>_lo``, ``<name>_hi`` and ``<name>_one`` (the two ends print
alike at the digits the chapter prints, so the range is one number). A metric is named by its key in
:data:`probdr_lite.metrics.METRIC_NAMES` and a change by its direction (:func:`probdr_lite.metrics.change_direction`);
their words are presentation's.
"""

from __future__ import annotations

import numpy as np

from probdr_lite._validation import check_result
from probdr_lite.experiments.stats import HEADLINE, lower_is_better
from probdr_lite.metrics import METRIC_NAMES, change_direction
from probdr_lite.objections import THRESHOLDS, asymmetry_along_path, metrics_by_variant, single_run_evidence

__all__ = [
    "VERDICTS",
    "HIGHER_IS_BETTER",
    "training_runs",
    "asymmetry_facts",
    "wishart_facts",
    "stop_gradient_facts",
    "regulariser_facts",
    "single_runs_facts",
    "clustering_facts",
]

#: The keys a verdict (or objection 3's ``stand_in``) may be; the chapter gives each its words.
VERDICTS = ("holds", "fails", "depends", "untested", "full_only", "tangent_only")

#: Whether a larger value of a headline number (the number each training task is judged on, as in the
#: trained-transformers chapter) is better: the paper's direction is A - I better than attention.
HIGHER_IS_BETTER = {q: not lower_is_better(q) for q in HEADLINE.values()}

#: The kappa of the paper's runs, which the stop-gradient verdict names.
PAPER_KAPPA = 30.0


def _rounded(x: float, digits: int) -> str:
    """``x`` rounded to ``digits`` decimals as the chapter prints it, a rounded zero without its sign."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def _span(name, values, digits: int, scale: float = 1.0) -> dict:
    """``<name>_lo``, ``<name>_hi`` and ``<name>_one``: both ends, times ``scale`` (100 for a percentage), round
    alike to the ``digits`` decimals the chapter prints."""
    a = np.asarray(values, dtype=float)
    lo, hi = float(a.min()), float(a.max())
    one = _rounded(scale * lo, digits) == _rounded(scale * hi, digits)
    return {f"{name}_lo": lo, f"{name}_hi": hi, f"{name}_one": one}


def _degrees(cos):
    return np.degrees(np.arccos(np.clip(np.asarray(cos, dtype=float), -1.0, 1.0)))


_PATH_KEYS = ("relative_difference", "tangent_cosine", "cosine", "tangent_remainder_share")


def _path_dict(d, name):
    check_result(d, name, asymmetry_along_path, keys=_PATH_KEYS)
    return {k: np.asarray(d[k], dtype=float) for k in _PATH_KEYS}


# ---------------------------------------------------------------------------------------------------------------------
# Objection 1


def asymmetry_facts(mnist: dict, causal: dict, random_by_kappa, kappas, threshold=None,
                    tangent_threshold=None) -> dict:
    """Objection 1 from :func:`~probdr_lite.objections.asymmetry_along_path` on the MNIST path without (``m``) and
    with (``c``) the causal mask, and :func:`~probdr_lite.objections.asymmetry_by_kappa` on random latents.

    In the full space two directions count as the same when their relative difference is at most ``threshold``
    (``full``: some step is past it); in the tangent space of the LayerNorm sphere when the cosine of their tangent
    parts is at least ``tangent_threshold`` (``tangent``: some step is below it). ``verdict`` follows from both
    ("holds", "full_only", "tangent_only" or "fails"), and ``both``, ``full_only`` and ``tangent_only`` say which. Ranges (``_lo``, ``_hi``, ``_one``): ``rel_m``,
    ``rel_c`` (relative differences, printed as percentages), ``deg_m``, ``deg_c`` (their angles, whole degrees),
    ``tan_m``, ``tan_c`` (tangent cosines, three decimals), ``tdeg_m``, ``tdeg_c`` (their angles), ``rem_m``,
    ``rem_c`` (the antisymmetric remainder's share of plain attention's step after LayerNorm). ``radial``: the
    largest tangent angle is below the largest full-space one. ``random_max`` is the largest difference on random
    latents over ``kappa_min`` to ``kappa_max``, and ``random_below`` says it is within the threshold.
    """
    t = THRESHOLDS["asymmetry"] if threshold is None else float(threshold)
    tc = THRESHOLDS["tangent_cosine"] if tangent_threshold is None else float(tangent_threshold)
    m, c = _path_dict(mnist, "mnist"), _path_dict(causal, "causal")
    rnd = np.asarray(random_by_kappa, dtype=float)
    kappas = np.asarray(kappas, dtype=float)
    if rnd.shape != kappas.shape or rnd.size == 0:
        raise ValueError("random_by_kappa must have one value per kappa")
    full = bool(max(m["relative_difference"].max(), c["relative_difference"].max()) > t)
    tangent = bool(min(m["tangent_cosine"].min(), c["tangent_cosine"].min()) < tc)
    word = "holds" if full and tangent else "full_only" if full else "tangent_only" if tangent else "fails"
    full_angles = _degrees(np.concatenate([m["cosine"], c["cosine"]]))
    tangent_angles = _degrees(np.concatenate([m["tangent_cosine"], c["tangent_cosine"]]))
    return {
        "verdict": word, "full": full, "tangent": tangent, "both": full and tangent,
        "full_only": full and not tangent, "tangent_only": tangent and not full,
        "threshold": t, "tangent_threshold": tc,
        # printed as whole percentages, whole degrees and cosines with three decimals
        **_span("rel_m", m["relative_difference"], 0, 100), **_span("rel_c", c["relative_difference"], 0, 100),
        **_span("deg_m", _degrees(m["cosine"]), 0), **_span("deg_c", _degrees(c["cosine"]), 0),
        **_span("tan_m", m["tangent_cosine"], 3), **_span("tan_c", c["tangent_cosine"], 3),
        **_span("tdeg_m", _degrees(m["tangent_cosine"]), 0), **_span("tdeg_c", _degrees(c["tangent_cosine"]), 0),
        **_span("rem_m", m["tangent_remainder_share"], 0, 100),
        **_span("rem_c", c["tangent_remainder_share"], 0, 100),
        "radial": bool(tangent_angles.max() < full_angles.max()),
        "kappa_min": float(kappas.min()), "kappa_max": float(kappas.max()),
        "random_max": float(rnd.max()), "random_below": bool(rnd.max() <= t),
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 2


def wishart_facts(min_eig_rw, null_rw, min_eig_sym, gamma, tol=None) -> dict:
    """Objection 2 from the smallest eigenvalues of sym(I - A) and of L_sym + gamma I along a path.

    ``n_negative`` of the ``n_steps`` steps have an eigenvalue below ``-tol`` (``any_negative``, ``all_negative``),
    and at ``n_singular`` of the ``n_null`` steps ``||(I - A) 1||`` is below ``tol`` (``any_singular``,
    ``all_singular``); the objection ``holds`` if either happens. ``valid_sym``: every step's ``L_sym + gamma I``
    has its smallest eigenvalue (at least ``sym_min``) above ``tol``. ``min_rw`` and ``null_max`` are the smallest
    eigenvalue and the largest residual of the paper's scale.
    """
    tol = THRESHOLDS["eigen_tol"] if tol is None else float(tol)
    lo = np.asarray(min_eig_rw, dtype=float)
    null = np.asarray(null_rw, dtype=float)
    sym = np.asarray(min_eig_sym, dtype=float)
    if lo.size == 0 or null.size == 0 or sym.size == 0:
        raise ValueError("min_eig_rw, null_rw and min_eig_sym must each hold at least one step")
    negative = int((lo < -tol).sum())
    singular = int((null < tol).sum())
    return {
        "verdict": "holds" if (negative or singular) else "fails",
        "n_steps": int(lo.size), "n_null": int(null.size), "n_negative": negative, "n_singular": singular,
        "any_negative": negative > 0, "all_negative": negative == lo.size,
        "any_singular": singular > 0, "all_singular": singular == null.size,
        "min_rw": float(lo.min()), "null_max": float(null.max()), "tol": tol,
        "gamma": float(gamma), "sym_min": float(sym.min()), "valid_sym": bool((sym > tol).all()),
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 3


def stop_gradient_facts(kappas, cos_sg, delta_small, phi_gap, threshold=None, identity=None) -> dict:
    """Objection 3 from the cosine of the stop-gradient direction with grad F_full, the sign of the change in
    F_full, and (``phi_gap``) the proposition of :mod:`probdr_lite.energies`, checked at the same latents.

    kappas (k,); cos_sg, delta_small and phi_gap of shape (k, seeds). As a stand-in for grad F_full a kappa passes
    if the mean cosine is at least the threshold and the small step raised F_full for every seed; ``stand_in`` is
    "fails" (every kappa passes), "holds" (none does) or "depends" on kappa (``depends``), with the kappas
    that pass (``good``) and fail (``bad``; ``good_one``, ``bad_one``: a single one) and whether the paper's kappa
    (``paper_kappa``) passes (``paper_passes``) or fails (``paper_fails``). ``exact_phi``: every
    ||grad Phi - g_sg|| / ||g_sg|| (largest ``gap_max``) is below the ``identity`` threshold, so the stop-gradient
    step is the exact gradient step of Phi and the objection turns into a choice of objective. ``per_kappa``: one
    dict per kappa with its ``kappa``, ``mean`` and ``sd`` cosine and the number of seeds whose step raised F_full
    (``rises``).
    """
    t = THRESHOLDS["cosine"] if threshold is None else float(threshold)
    ident = THRESHOLDS["identity"] if identity is None else float(identity)
    kappas = np.asarray(kappas, dtype=float)
    cos_sg, delta_small = np.atleast_2d(cos_sg), np.atleast_2d(delta_small)
    if cos_sg.shape != (kappas.size, cos_sg.shape[1]) or delta_small.shape != cos_sg.shape:
        raise ValueError("cos_sg and delta_small must have shape (len(kappas), n_seeds)")
    gap = np.atleast_2d(np.asarray(phi_gap, dtype=float))
    if gap.shape != cos_sg.shape:
        raise ValueError("phi_gap must have the shape of cos_sg, (len(kappas), n_seeds)")
    mean = cos_sg.mean(1)
    sd = cos_sg.std(1, ddof=1) if cos_sg.shape[1] > 1 else np.zeros(kappas.size)
    ok = (mean >= t) & (delta_small > 0).all(1)
    n_seeds = int(cos_sg.shape[1])
    good, bad = [float(k) for k in kappas[ok]], [float(k) for k in kappas[~ok]]
    return {
        "stand_in": "fails" if ok.all() else "holds" if not ok.any() else "depends",
        "depends": bool(ok.any() and not ok.all()),
        "exact_phi": bool((gap < ident).all()), "gap_max": float(gap.max()), "identity": ident,
        "threshold": t, "n_seeds": n_seeds,
        "per_kappa": [{"kappa": float(k), "mean": float(mu), "sd": float(s), "rises": int((d > 0).sum()),
                       "n_seeds": n_seeds} for k, mu, s, d in zip(kappas, mean, sd, delta_small)],
        "good": good, "bad": bad, "good_one": len(good) == 1, "bad_one": len(bad) == 1,
        "paper_kappa": PAPER_KAPPA, "paper_passes": PAPER_KAPPA in good, "paper_fails": PAPER_KAPPA in bad,
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 4


def regulariser_facts(ns, rel_err, d_q, mnist_rel_err, mnist_cos, mnist_n, beta=1.0, threshold=None) -> dict:
    """Objection 4 from the relative error over n (random latents, mean over seeds) and on MNIST latents.

    ``verdict``: "fails" if every n and the MNIST latents are below the threshold, "holds" if none is, else
    "depends" (on n / d_q). ``per_n``: one dict per n with its ``n`` and ``error``; ``good`` and ``bad`` the n below
    and not below the threshold (``any_good``, ``both_sides``: some of each). ``n_ok`` is the n at which the
    small-n asymptote of :func:`~probdr_lite.objections.regulariser_prediction` reaches the threshold, and
    ``dq_per_n`` the d_q per (n - 1) that keeps it below in general.
    """
    t = THRESHOLDS["approx_error"] if threshold is None else float(threshold)
    ns = np.asarray(ns)
    err = np.asarray(rel_err, dtype=float)
    err = err.mean(1) if err.ndim == 2 else err
    if err.shape != ns.shape or ns.size == 0:
        raise ValueError("rel_err must have one value (or one row of seeds) per n")
    good, bad = [int(n) for n in ns[err < t]], [int(n) for n in ns[err >= t]]
    if not bad and mnist_rel_err < t:
        word = "fails"
    elif not good and mnist_rel_err >= t:
        word = "holds"
    else:
        word = "depends"
    return {
        "verdict": word, "d_q": int(d_q), "threshold": t,
        "per_n": [{"n": int(n), "error": float(e)} for n, e in zip(ns, err)],
        "good": good, "bad": bad, "any_good": bool(good), "both_sides": bool(good and bad),
        "error_min": float(err.min()), "error_max": float(err.max()),
        "mnist_n": int(mnist_n), "mnist_error": float(mnist_rel_err), "mnist_cosine": float(mnist_cos),
        # the small-n asymptote of regulariser_prediction, solved for the n at which it reaches the threshold
        "n_ok": 1 + (t * (d_q + beta) / d_q) ** 2 * (d_q - 1),
        "dq_per_n": 1 / t ** 2,
    }


# ---------------------------------------------------------------------------------------------------------------------
# Objection 5


def training_runs(directory=None) -> dict:
    """The trained-transformers chapter's committed results, read as evidence about single runs (objection 5).

    For each task of ``HEADLINE``, the rows of :func:`probdr_lite.experiments.files.load_task_results` and
    :func:`probdr_lite.objections.single_run_evidence` of the A − I arm ("diffusion") against plain attention on
    the headline number. Whether A − I *helps* is that chapter's question and is not judged here.

    Returns
    -------
    dict {task: None while its results are not committed or pair fewer than 2 seeds, else
    {"rows": list, "quantity": str, "evidence": dict}}.
    """
    from probdr_lite.experiments.files import load_task_results

    out = {}
    for task, quantity in HEADLINE.items():
        rows = load_task_results(task, directory)
        paired = rows is not None and len({r["seed"] for r in rows if r["variant"] == "diffusion"}
                                          & {r["seed"] for r in rows if r["variant"] == "attention"}) >= 2
        out[task] = ({"rows": rows, "quantity": quantity, "evidence": single_run_evidence(rows, quantity)}
                     if paired else None)
    return out


def _scale(rows) -> dict:
    """The model size and training length of a task's runs, read off the first row: the scale a verdict holds for."""
    cfg = rows[0].get("config", {})
    shape = "n_layer" in cfg and "n_embd" in cfg
    params = "n_params" in rows[0]
    iters, epochs = "max_iters" in cfg, "max_iters" not in cfg and "epochs" in cfg
    return {"has_shape": shape, "n_layer": cfg.get("n_layer"), "n_embd": cfg.get("n_embd"),
            "has_params": params, "n_params_m": rows[0]["n_params"] / 1e6 if params else float("nan"),
            "shape_and_params": shape and params, "by_iters": iters, "by_epochs": epochs,
            "length": cfg["max_iters"] if iters else cfg.get("epochs"),
            "length_after": (iters or epochs) and (shape or params), "no_scale": not (shape or params or iters
                                                                                     or epochs)}


def single_runs_facts(runs: dict, snr=None, min_seeds=None) -> dict:
    """Objection 5, one question only: is one training run per arm enough evidence?

    A task with at least ``min_seeds`` paired seeds is judged (``judged``: some task is; ``missing``: the others,
    ``some_missing`` when some are judged). One pair of runs is enough on a task if the mean paired difference is
    at least ``snr`` standard deviations of the paired differences (then one pair rarely points the other way):
    ``verdict`` is "holds" where it is enough on no task (``all_noisy``), "fails" where it is on every one
    (``none_noisy``, and then ``all_help`` / ``none_help``: $A - I$ is better on average on every / no task),
    "depends" (on the task) otherwise, and "untested" with no task judged. ``tasks``: one dict per judged
    task, with its scale (:func:`_scale`'s facts), ``quantity``, evidence (``mean_diff``, ``sd_diff``, ``n``,
    ``snr``, ``n_opposite``, with ``opp_all``, ``opp_none`` and ``opp_several``: more than one seed but not all
    point the other way) and ``better`` ($A - I$ better on average).
    """
    snr_t = THRESHOLDS["single_run_snr"] if snr is None else float(snr)
    min_seeds = THRESHOLDS["min_seeds"] if min_seeds is None else int(min_seeds)
    check_result(runs, "runs", training_runs)
    judged = {t: r for t, r in runs.items() if r is not None and r["evidence"]["n"] >= min_seeds}
    missing = [t for t in runs if t not in judged]
    noisy = [r["evidence"]["snr"] < snr_t for r in judged.values()]
    tasks = []
    for t, r in judged.items():
        e = r["evidence"]
        k, n = int(e["n_opposite"]), int(e["n"])
        tasks.append({"task": t, "quantity": r["quantity"], **_scale(r["rows"]),
                      "mean_diff": float(e["mean_diff"]), "sd_diff": float(e["sd_diff"]), "n": n,
                      "snr": float(e["snr"]), "n_opposite": k, "opp_all": k == n, "opp_none": k == 0,
                      "opp_several": 1 < k < n,
                      "better": bool((e["mean_diff"] > 0) == HIGHER_IS_BETTER[r["quantity"]])})
    if not judged:
        word = "untested"
    else:
        word = "holds" if all(noisy) else "fails" if not any(noisy) else "depends"
    return {
        "verdict": word, "judged": bool(judged), "min_seeds": min_seeds, "snr_threshold": snr_t,
        "all_noisy": bool(judged) and all(noisy), "none_noisy": bool(judged) and not any(noisy),
        "all_help": bool(judged) and all(x["better"] for x in tasks),
        "none_help": bool(judged) and not any(x["better"] for x in tasks),
        "missing": missing, "some_missing": bool(judged) and bool(missing), "tasks": tasks,
    }


# ---------------------------------------------------------------------------------------------------------------------
# Minor objection: clustering shown only as a picture


def clustering_facts(metrics: dict, variant="paper", rel_tol=0.01) -> dict:
    """The minor objection from :func:`probdr_lite.objections.metrics_by_variant`: do the numbers back 'the block
    clusters MNIST'?

    A number rises (falls) if it changes by more than ``rel_tol`` of its first value
    (:func:`~probdr_lite.metrics.change_direction`). ``verdict`` is 'fails' if all four rise from the ``first`` to
    the ``last`` scored layer (the picture told the truth), 'holds' if none rises, 'depends' (on the metric)
    otherwise. ``metrics``: one dict per number with its key ``metric``, ``first`` and ``last`` values and
    ``direction`` ("up", "down" or "flat"); ``up``: the keys of those that rise (``any_up``); ``others``: the
    dicts of the rest (``any_others``).
    """
    check_result(metrics, "metrics", metrics_by_variant, keys=("layers",))
    if variant not in metrics or variant == "layers":
        raise ValueError(f"variant {variant!r} is not in metrics (has {[k for k in metrics if k != 'layers']})")
    layers = metrics["layers"]
    m = metrics[variant]
    rows = [{"metric": k, "first": float(m[k][0]), "last": float(m[k][-1]),
             "direction": change_direction(m[k][0], m[k][-1], rel_tol)} for k in METRIC_NAMES]
    up = [r["metric"] for r in rows if r["direction"] == "up"]
    others = [r for r in rows if r["direction"] != "up"]
    return {
        "verdict": "fails" if len(up) == len(rows) else "holds" if not up else "depends",
        "variant": variant, "first": int(layers[0]), "last": int(layers[-1]), "rel_tol": float(rel_tol),
        "metrics": rows, "up": up, "any_up": bool(up), "others": others, "any_others": bool(others),
        "knn_first": float(m["knn_accuracy"][0]), "knn_last": float(m["knn_accuracy"][-1]),
        "bw_first": float(m["between_within"][0]), "bw_last": float(m["between_within"][-1]),
    }
