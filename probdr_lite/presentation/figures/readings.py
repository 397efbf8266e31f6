"""The energies chapter's tables and figures, and the facts behind its computed sentences, built from
:mod:`probdr_lite.chapters.energies` and :mod:`probdr_lite.chapters.energies` (every number comes from there; this module only arranges
them).

The sentences themselves live in the chapter (``book/src/energies.py``), as templates filled by
:func:`probdr_lite.presentation.prose.fill`. What stays here is what makes them honest: the numbers each sentence states
and, as booleans, short lists of names or words, every choice that follows from a number, each decided by a
threshold passed in, taken from :data:`WORDS` or from :data:`probdr_lite.chapters.objections.THRESHOLDS` (so the tests can
feed numbers for which each choice would be false). A template holds no threshold.

Tables are :class:`probdr_lite.presentation.plotting.Table` objects meant to be shown as Markdown (``table.to_markdown()``), so
that their MathJax renders. Their words come from the chapter too: its ``names`` (one dict of dicts, keyed by
``"variant"``, ``"reading"``, ``"energy"``, ``"graph"``, ``"graph_short"``, ``"sense"`` and ``"move"``, plus the
word ``"none"`` and the template ``"where"``) name the blocks, readings, energies and graphs in every table, figure
and fact (without them, a key stands for its own name), and each table's ``columns`` and each figure's ``labels``
give its headers, axis labels, titles and the templates of the cells made from numbers. So do the captions, the
cells that are sentences and the figures' alt texts: the chapter gives each figure built here its sentence with
:func:`probdr_lite.presentation.style.describe`, filled from the facts (the panel counts of :func:`panel_facts`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_array, check_length, check_result, check_scalar
from probdr_lite.chapters.energies import (CEILING, FILTER_READINGS, FROZEN, READINGS, SENSE, energy_table,
                                           frequency_response, random_baseline, robustness_facts, update_alignment)
from probdr_lite.chapters.objections import THRESHOLDS
from probdr_lite.presentation.plotting import Table
from probdr_lite.presentation.prose import fill, listing, num, sci, trend
from probdr_lite.presentation.style import variant_colour

__all__ = [
    "WORDS",
    "exact_for",
    "proposition_facts",
    "gradient_field_table",
    "gradient_field_facts",
    "alignment_table",
    "harness_table",
    "harness_facts",
    "objectives_facts",
    "energy_path_figure",
    "spectrum_figure",
    "relation",
    "retention_facts",
    "differential_facts",
    "readings_facts",
    "energy_readings_table",
    "thesis_table",
    "robustness_table",
    "thesis_facts",
    "constructions_facts",
    "panel_facts",
    "thesis_figure",
    "step_family_figure",
    "step_family_facts",
    "closing_facts",
]

#: The thresholds behind the chapter's choices of words (besides the identity threshold of
#: :data:`probdr_lite.chapters.objections.THRESHOLDS`, which says when a cosine is 1 and an asymmetry 0).
WORDS = {
    # an objective "rises"/"falls" from layer 0 to the last layer only beyond this fraction of its first value
    "objective_trend": 0.01,
    # a principal-angle cosine "moves" only beyond this fraction of its layer-0 value
    # (chapters.energies.robustness_facts' rel_tol, which the chapter passes)
    "move": 0.02,
    # the random level of a subspace agreement: the mean over random subspaces plus this many standard deviations
    # (chapters.energies.robustness_facts' n_sd, which the chapter passes)
    "n_sd": 3.0,
    # a mean principal-angle cosine at or above this is "close" to the embedding, below it "far from 1"
    "close": 0.5,
    # the attention graph is "close to a set of separate points" when its smallest non-trivial generalised
    # eigenvalues are all below this ...
    "isolated_eigenvalue": 0.01,
    # ... and the participation ratios of its LE eigenvectors all below this (1: one image carries a vector)
    "isolated_participation": 5.0,
    # the second attention map "attends only to itself" when the last relative gap is below this
    "second_map_identity": 1e-3,
    # the effective rank "falls" for a block beyond this fraction of its layer-0 value
    "rank_trend": 0.01,
}

def _label(names, kind, key):
    """The chapter's name of ``key`` among its ``kind`` ("variant", "reading", "energy", "graph", "graph_short",
    "sense", "move"); the key itself without ``names``."""
    return key if names is None else names[kind].get(key, key)


def _tol(tol):
    return THRESHOLDS["identity"] if tol is None else float(tol)


def _name(u, names=None) -> str:
    return _label(names, "variant", u)


def _names(updates, names) -> str:
    """A table cell's list of updates, or the chapter's word ``names["none"]``."""
    return listing(_name(u, names) for u in updates) if updates else "none" if names is None else names["none"]


def _check_table(table):
    return check_result(table, "table", energy_table)


def exact_for(alignment: dict, reading: str, tol=None) -> dict:
    """The updates whose direction is the reading's gradient step: cosine 1 to ``tol`` (default the identity
    threshold), in the full space ("full") and after LayerNorm ("tangent"). ``alignment`` is
    :func:`probdr_lite.chapters.energies.update_alignment`'s result."""
    t = _tol(tol)
    a = check_result(alignment, "alignment", update_alignment, keys=(reading,))[reading]
    return {"full": [u for u, c in a.items() if c["cosine"] >= 1.0 - t],
            "tangent": [u for u, c in a.items() if c["tangent_cosine"] >= 1.0 - t]}


# ---------------------------------------------------------------------------------------------------------------------
# The proposition and the gradient fields


def proposition_facts(gaps: dict, tol=None) -> dict:
    """The proposition's check, from ``gaps`` {case description: relative gap ||autograd grad Phi - closed form|| /
    ||closed form||}: ``cases`` (one {case, gap} each, in order), the largest gap ``worst``, the threshold ``tol``
    (default the identity threshold) and ``same``: every gap is below it."""
    t = _tol(tol)
    check_result(gaps, "gaps", "{case: relative gap}")
    worst = float(max(gaps.values()))
    return {"cases": [{"case": k, "gap": float(v)} for k, v in gaps.items()], "worst": worst, "tol": t,
            "same": bool(worst < t)}


_ASYMMETRY = "{update: energies.gradient_field_asymmetry(...)}"


def gradient_field_table(asymmetry: dict, columns: dict, names=None, tol=None, caption=None) -> Table:
    """One row per update: the Jacobian asymmetry of :func:`probdr_lite.chapters.energies.gradient_field_asymmetry` and
    whether the update is the gradient of some energy (below ``tol``). ``columns``: the chapter's headers
    ``update``, ``asymmetry``, ``field`` and the cells ``yes`` and ``no``."""
    t = _tol(tol)
    check_result(asymmetry, "asymmetry", _ASYMMETRY)
    body = [[_name(u, names), sci(a), columns["yes"] if a < t else columns["no"]] for u, a in asymmetry.items()]
    return Table([columns["update"], columns["asymmetry"], columns["field"]], body, caption=caption)


def gradient_field_facts(asymmetry: dict, names=None, tol=None) -> dict:
    """Which updates are gradient fields (Jacobian asymmetry below ``tol``, default the identity threshold).

    ``fields`` (their names), ``any_field``, ``one_field`` and ``fields_max`` (the largest asymmetry among them);
    ``others`` (the names of the rest), ``any_other`` and ``others_min`` (the smallest asymmetry among those); and
    ``tol``. A maximum or minimum over no update is NaN.
    """
    t = _tol(tol)
    check_result(asymmetry, "asymmetry", _ASYMMETRY)
    yes = [u for u, a in asymmetry.items() if a < t]
    no = [u for u, a in asymmetry.items() if a >= t]
    return {"fields": [_name(u, names) for u in yes], "any_field": bool(yes), "one_field": len(yes) == 1,
            "fields_max": float(max(asymmetry[u] for u in yes)) if yes else float("nan"),
            "others": [_name(u, names) for u in no], "any_other": bool(no),
            "others_min": float(min(asymmetry[u] for u in no)) if no else float("nan"), "tol": t}


def _exact_cell(alignment, r, tol, names, columns) -> str:
    """Which blocks take reading ``r``'s step exactly: the names, then ``columns["also"]`` filled with those that
    take it only after LayerNorm."""
    ex = exact_for(alignment, r, tol) if r in alignment else {"full": [], "tangent": []}
    tangent_only = [u for u in ex["tangent"] if u not in ex["full"]]
    also = fill(columns["also"], names=_names(tangent_only, names)) if tangent_only else ""
    return _names(ex["full"], names) + also


def alignment_table(alignment: dict, columns: dict, names=None, tol=None, caption=None) -> Table:
    """Reading by reading: cosine of each block's step with the reading's own step at X_0 (full space, and
    tangent parts after LayerNorm), and which block takes it exactly. ``columns``: the chapter's headers
    ``reading`` and ``exact`` and the template ``also`` ({names}: the blocks exact only after LayerNorm)."""
    updates = list(next(iter(check_result(alignment, "alignment", update_alignment).values())))
    header = [columns["reading"]] + [_name(u, names) for u in updates] + [columns["exact"]]
    body = [[_label(names, "reading", r)]
            + [f"{num(a[u]['cosine'], 4)} / {num(a[u]['tangent_cosine'], 4)}" for u in updates]
            + [_exact_cell(alignment, r, tol, names, columns)] for r, a in alignment.items()]
    return Table(header, body, caption=caption)


# ---------------------------------------------------------------------------------------------------------------------
# Every energy along the path


def _moves(e: dict, columns: dict) -> str:
    """One energy_path entry's cell: ``columns["rise"]`` when every step raises it, ``"fall"`` when every one
    lowers it, else ``"mixed"``, filled with ``T`` (the steps), ``n_rise`` and ``n_fall``."""
    T = e["deltas"].size
    key = "rise" if e["n_rise"] == T else "fall" if e["n_fall"] == T else "mixed"
    return fill(columns[key], T=T, n_rise=e["n_rise"], n_fall=e["n_fall"])


def harness_table(table: dict, columns: dict, names=None, caption=None) -> Table:
    """Rows readings, columns variants: how many of the steps raise or lower each energy (frozen readings with
    their frozen part held at the step's start). ``columns``: the chapter's headers ``reading``, ``energy``,
    ``sense`` and the cell templates ``rise``, ``fall``, ``mixed`` ({T}, {n_rise}, {n_fall})."""
    variants = list(next(iter(_check_table(table).values())))
    header = [columns["reading"], columns["energy"], columns["sense"]] + [_name(v, names) for v in variants]
    body = [[_label(names, "reading", r), _label(names, "energy", r), _label(names, "sense", SENSE[r])]
            + [_moves(table[r][v], columns) for v in variants] for r in table]
    return Table(header, body, caption=caption)


def _agrees(e, sense) -> bool:
    T = e["deltas"].size
    return (e["n_rise"] == T) if sense > 0 else (e["n_fall"] == T)


def harness_facts(table: dict, names=None) -> dict:
    """Which blocks move each energy the reading's way at every step, from the counts of
    :func:`probdr_lite.chapters.energies.energy_table`.

    ``n_steps``, ``n_blocks``, ``n_energies``; ``uniform`` (every block moves every energy its reading's way at
    every step); ``all_agree`` (the names of the readings every block follows), ``n_all_agree`` and
    ``none_all_agree``; and ``others``, one dict per other reading: its name ``reading``, ``agree`` (the names of the
    blocks that follow it at every step), ``some_agree`` and ``one_agrees``.
    """
    _check_table(table)
    variants = list(next(iter(table.values())))
    T = next(iter(next(iter(table.values())).values()))["deltas"].size
    agree = {r: [v for v in variants if _agrees(table[r][v], SENSE[r])] for r in table}
    all_agree = [r for r in table if len(agree[r]) == len(variants)]
    others = [r for r in table if r not in all_agree]
    return {"n_steps": int(T), "n_blocks": len(variants), "n_energies": len(table), "uniform": not others,
            "all_agree": [_label(names, "reading", r) for r in all_agree], "n_all_agree": len(all_agree),
            "none_all_agree": not all_agree,
            "others": [{"reading": _label(names, "reading", r), "agree": [_name(v, names) for v in agree[r]],
                        "some_agree": bool(agree[r]), "one_agrees": len(agree[r]) == 1} for r in others]}


def objectives_facts(table: dict, names=None, readings=("ple", "phi"), rel_tol=None) -> dict:
    """The PLE ELBO and Phi at the first and last layer of every block's path, and, for a frozen reading, whether
    the value with each layer's own graph follows the per-step changes (a move counts beyond ``rel_tol``, default
    ``WORDS["objective_trend"]``, of the first value).

    ``readings``: one dict each with the reading's name ``reading``, ``n_steps``, ``raised`` (its reading raises
    it), ``ends`` (one {variant, first, last, trend} per block, ``trend`` being the word of
    :func:`~probdr_lite.presentation.prose.trend`), and ``undone`` (the names of the blocks whose every step moves the
    frozen energy the reading's way while the value with each layer's own graph does not end moved that way; empty
    for a reading that is not frozen) with ``any_undone``.
    """
    rel_tol = WORDS["objective_trend"] if rel_tol is None else float(rel_tol)
    check_result(table, "table", energy_table, keys=readings)
    out = []
    for r in readings:
        rows = table[r]
        T = next(iter(rows.values()))["deltas"].size
        ends = [{"variant": _name(v, names), "first": float(e["values"][0]), "last": float(e["values"][-1]),
                 "trend": trend(e["values"][0], e["values"][-1], rel_tol)} for v, e in rows.items()]
        undone = []
        if r in FROZEN:
            undone = [v for v, e in rows.items() if _agrees(e, SENSE[r]) and
                      trend(e["values"][0], e["values"][-1], rel_tol) != ("rises" if SENSE[r] > 0 else "falls")]
        out.append({"reading": _label(names, "reading", r), "n_steps": int(T), "raised": SENSE[r] > 0, "ends": ends,
                    "undone": [_name(v, names) for v in undone], "any_undone": bool(undone)})
    return {"readings": out}


def energy_path_figure(table: dict, labels: dict, names=None):
    """One panel per reading: E(X_t) - E(X_0) along the layers, one line per variant. ``labels``: the chapter's
    ``title`` template ({reading}, {arrow}: ``labels["arrow"]`` of the reading's sense, {frozen}: ``labels["frozen"]``
    for a frozen reading, else nothing), ``xlabel`` and ``ylabel``."""
    readings = list(_check_table(table))
    cols = 2  # two panels a row, so that the ticks stay readable at the page's width
    rows = int(np.ceil(len(readings) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(10.2, 2.9 * rows), squeeze=False)
    for ax, r in zip(axes.flat, readings):
        for v, e in table[r].items():
            vals = np.asarray(e["values"], dtype=float)
            ax.plot(np.arange(vals.size), vals - vals[0], "o-", ms=3, color=variant_colour(v),
                    label=_name(v, names))
        ax.axhline(0.0, color="0.5", lw=0.6)
        ax.set_title(fill(labels["title"], reading=_label(names, "reading", r), arrow=labels["arrow"][SENSE[r]],
                          frozen=labels["frozen"] if r in FROZEN else ""), fontsize="small")
        ax.set_xlabel(labels["xlabel"])
        ax.set_ylabel(labels["ylabel"], fontsize="small")
    for ax in list(axes.flat)[len(readings):]:
        ax.set_axis_off()
    axes.flat[0].legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def spectrum_figure(lam, labels: dict, eta=0.4, d_q=128, beta=1.0, n_steps=8):
    """The blocks as filters on the spectrum of I - A: the response per step (left) and after ``n_steps``
    (right), relative to the constant mode, over a histogram of the eigenvalues at X_0. ``labels``: the chapter's
    names of the curves ``attention``, ``diffusion``, ``paper``, ``flow``, the axes' ``count``, ``xlabel``,
    ``ylabel_one`` and ``ylabel_n`` ({n_steps}), and the titles ``title_one`` ({eta}) and ``title_n`` ({n_steps})."""
    lam = check_array(lam, "lam", ndim=1).astype(float)
    grid = np.linspace(0.0, max(1.0, float(lam.max())) * 1.05, 300)
    curves = (("attention", variant_colour("attention"), "-"), ("diffusion", variant_colour("diffusion"), "-"),
              ("paper", variant_colour("paper"), "--"), ("flow", "0.4", ":"))
    fig, axes = plt.subplots(1, 2, figsize=(10.2, 3.8))
    for k, ax in enumerate(axes):
        twin = ax.twinx()
        twin.hist(lam, bins=60, color="0.85", zorder=0)
        twin.set_ylabel(labels["count"], color="0.45", fontsize="small")
        ax.set_zorder(twin.get_zorder() + 1)
        ax.patch.set_visible(False)
        for variant, colour, ls in curves:
            r = frequency_response(grid, variant, eta, d_q, beta)
            ax.plot(grid, r if k == 0 else np.abs(r) ** n_steps, ls, color=colour, lw=1.8, label=labels[variant])
        ax.axhline(0.0, color="0.5", lw=0.6)
        ax.set_xlabel(labels["xlabel"])
    axes[0].set(ylabel=labels["ylabel_one"], title=fill(labels["title_one"], eta=eta))
    axes[1].set(ylabel=fill(labels["ylabel_n"], n_steps=n_steps), yscale="log",
                title=fill(labels["title_n"], n_steps=n_steps), ylim=(1e-8, 1.5))
    axes[0].legend(fontsize="x-small", loc="lower left")
    fig.tight_layout()
    return fig


#: How far apart two retentions must be (as a ratio) before a sentence calls one above or below the other.
RETENTION_FACTOR = 2.0


def relation(a, b, factor=RETENTION_FACTOR) -> dict:
    """``a`` against ``b``, both positive: ``above`` (``a`` is more than ``factor`` times ``b``) and ``below``
    (``b`` is more than ``factor`` times ``a``); neither means within the factor."""
    a = check_scalar(a, "a", low=0.0, low_inclusive=False)
    b = check_scalar(b, "b", low=0.0, low_inclusive=False)
    return {"above": bool(a > factor * b), "below": bool(b > factor * a)}


def retention_facts(retention: dict) -> dict:
    """The facts of the real-path sentence, from {variant: :func:`probdr_lite.chapters.energies.mode_retention`}.

    For each variant v and part p ("top", "middle"): ``v_p`` (measured), ``v_p_pred`` (frozen-graph prediction),
    ``v_p_above`` and ``v_p_below`` (:func:`relation` of the two) and ``v_p_ratio``; ``top_above`` and
    ``top_below``, the relation of A - I's measured top retention to plain attention's; ``factor`` (the relation's
    :data:`RETENTION_FACTOR`), ``filter_ratio``, plain attention's predicted top retention over A - I's (how far
    apart the frozen filters are there), ``n_modes`` and ``n_steps``.
    """
    check_result(retention, "retention", "{variant: energies.mode_retention(...)}", keys=("attention", "diffusion"))
    facts = {"factor": RETENTION_FACTOR}
    for v, r in retention.items():
        for part in ("top", "middle"):
            m, p = r[part]["measured"], r[part]["predicted"]
            rel = relation(m, p)
            facts.update({f"{v}_{part}": m, f"{v}_{part}_pred": p, f"{v}_{part}_above": rel["above"],
                          f"{v}_{part}_below": rel["below"], f"{v}_{part}_ratio": m / p})
    d, a = retention["diffusion"], retention["attention"]
    rel = relation(d["top"]["measured"], a["top"]["measured"])
    facts["top_above"], facts["top_below"] = rel["above"], rel["below"]
    facts["filter_ratio"] = a["top"]["predicted"] / d["top"]["predicted"]
    facts["n_modes"], facts["n_steps"] = d["n_modes"], d["n_steps"]
    return facts


def differential_facts(gaps, kappas2, kappa=30.0) -> dict:
    """A - I as the limit of a difference of two attention maps, from :func:`probdr_lite.chapters.energies.differential_gap`:
    ``kappa``, ``gaps`` (one {gap, kappa2} per sharpness of the second map, in order) and ``identity``: the gap at
    the sharpest second map is below ``WORDS["second_map_identity"]`` (``identity_tol``)."""
    gaps = check_array(gaps, "gaps", ndim=1).astype(float)
    kappas2 = check_length(check_array(kappas2, "kappas2", ndim=1).astype(float), "kappas2", gaps.size, "gap")
    return {"kappa": float(kappa), "gaps": [{"gap": float(g), "kappa2": float(k)} for g, k in zip(gaps, kappas2)],
            "identity_tol": WORDS["second_map_identity"], "identity": bool(gaps[-1] < WORDS["second_map_identity"])}


# ---------------------------------------------------------------------------------------------------------------------
# All the readings in one table


def readings_facts(table: dict, names=None) -> dict:
    """The facts of the closing table's last column for each reading of :data:`~probdr_lite.chapters.energies.READINGS` in
    ``table`` (:func:`probdr_lite.chapters.energies.energy_table`): ``readings``, one dict each with the key ``reading``,
    ``sense`` (the chapter's name of :data:`~probdr_lite.chapters.energies.SENSE`, which way the reading moves its energy),
    ``agree`` (the names of the blocks that move it so at every step), ``every_block`` and ``no_block``."""
    _check_table(table)
    variants = list(next(iter(table.values())))
    out = []
    for r in READINGS:
        if r not in table:
            continue
        agree = [v for v in variants if _agrees(table[r][v], SENSE[r])]
        out.append({"reading": r, "sense": _label(names, "sense", SENSE[r]), "agree": [_name(v, names) for v in agree],
                    "every_block": len(agree) == len(variants), "no_block": not agree})
    return {"readings": out}


def energy_readings_table(table: dict, alignment: dict, predicts: dict, measured: dict, exact_notes: dict,
                          columns: dict, names=None, tol=None, caption=None) -> Table:
    """The chapter's closing table, reading by reading: the energy, the block whose step is its exact gradient
    step, what the reading predicts, and what this book measured.

    The first three columns are computed here (:func:`exact_for`); the chapter writes the rest: ``predicts`` and
    ``measured`` map every reading of the table (each of :data:`~probdr_lite.chapters.energies.READINGS` in ``table``, then
    :data:`~probdr_lite.chapters.energies.FILTER_READINGS`) to its cell, and ``exact_notes`` the readings that name no energy
    to their "exact gradient step of" cell. ``columns``: the chapter's five headers (``reading``, ``energy``,
    ``exact``, ``predicts``, ``measured``), the energy cell's template ``energy_cell`` ({energy}, {sense}) and the
    template ``also`` of :func:`alignment_table`.
    """
    _check_table(table)
    rows = [r for r in READINGS if r in table] + list(FILTER_READINGS)
    for name, cells, need in (("predicts", predicts, rows), ("measured", measured, rows),
                              ("exact_notes", exact_notes, FILTER_READINGS)):
        check_result(cells, name, "{reading: cell}", keys=need)
    body = []
    for r in rows:
        energy = _label(names, "energy", r)
        if r in FILTER_READINGS:
            body.append([_label(names, "reading", r), energy, exact_notes[r], predicts[r], measured[r]])
            continue
        body.append([_label(names, "reading", r),
                     fill(columns["energy_cell"], energy=energy, sense=_label(names, "sense", SENSE[r])),
                     _exact_cell(alignment, r, tol, names, columns), predicts[r], measured[r]])
    return Table([columns[k] for k in ("reading", "energy", "exact", "predicts", "measured")], body, caption=caption)


# ---------------------------------------------------------------------------------------------------------------------
# The thesis: does a block move towards the Laplacian Eigenmaps embedding?


def thesis_table(alignment: dict, baseline: dict, erank: dict, columns: dict, names=None, qs=(2, 10),
                 caption=None) -> Table:
    """Per variant: mean principal-angle cosine at layer 0 and the last layer, each graph and q, with the random
    baseline, and the effective rank. ``columns``: the chapter's headers ``block``, ``graph`` (a template: {graph},
    {q}) and ``rank``, and the last row's name ``random``."""
    variants = list(alignment)
    graphs = list(baseline)
    header = ([columns["block"]] + [fill(columns["graph"], graph=_label(names, "graph", g), q=q)
                                    for g in graphs for q in qs] + [columns["rank"]])
    body = []
    for v in variants:
        cells = []
        for g in graphs:
            for q in qs:
                a = alignment[v][g][q]
                cells.append(f"{num(a[0])} → {num(a[-1])}")
        e = erank[v]
        body.append([_name(v, names)] + cells + [f"{num(e[0], 1)} → {num(e[-1], 1)}"])
    body.append([columns["random"]] + [f"{num(baseline[g][q]['mean'])} ± {num(baseline[g][q]['sd'])}"
                                        for g in graphs for q in qs] + [""])
    return Table(header, body, caption=caption)


def robustness_table(facts: list, columns: dict, names=None, caption=None) -> Table:
    """The thesis test over every graph and kappa (:func:`probdr_lite.chapters.energies.robustness_facts`): one row each.
    ``columns``: the chapter's headers ``kappa``, ``graph``, ``q``, ``start``, ``random`` and ``end`` (a template:
    {variant}); ``names["move"]`` marks each move."""
    variants = list(check_result(facts, "facts", robustness_facts, kind=list)[0]["ends"])
    header = ([columns[k] for k in ("kappa", "graph", "q", "start", "random")]
              + [fill(columns["end"], variant=_name(v, names)) for v in variants])
    body = [[num(f["kappa"], 0), _label(names, "graph_short", f["graph"]), str(f["q"]), num(f["start"]),
             f"{num(f['random'])} ± {num(f['random_sd'])}"]
            + [f"{num(f['ends'][v])} {_label(names, 'move', f['moves'][v])}" for v in variants] for f in facts]
    return Table(header, body, caption=caption)


def thesis_facts(alignment: dict, baseline: dict, erank: dict, eigenvalues, participation=None, names=None,
                 qs=(2, 10), n_sd=None, rel_tol=None) -> dict:
    """The thesis test: whether each block turns X_t's principal subspace towards each LE embedding, against the
    random baseline (within ``n_sd``, default ``WORDS["n_sd"]``, standard deviations of its mean counts as the random
    level) and the layer-0 value (a change beyond ``rel_tol``, default ``WORDS["move"]``, of it counts as a move).

    ``graphs``: one dict per graph of ``baseline`` with its name ``graph`` and ``qs``, one dict per q with ``q``,
    ``random`` (every block stays at the random level at every layer), ``low`` and ``high`` (the range over blocks
    and layers), the random level's ``mean`` and ``sd``, ``start``, ``ends`` (one {variant, end} per block),
    ``far`` (every end below ``WORDS["close"]``), ``up`` and ``down`` (the names of the blocks that move towards it
    or away) with ``any_up``, ``one_up``, ``any_down``, ``best`` (the closest at the end) and ``rel_tol``.

    ``eigenvalues`` are the attention graph's smallest non-trivial generalised eigenvalues
    (:func:`probdr_lite.chapters.energies.le_targets`' ``"attention_eigenvalues"``) and ``participation`` its LE eigenvectors'
    participation ratios (or None), both cut to the largest q: ``lam_min``, ``lam_max``, ``has_participation``,
    ``p_min``, ``p_max`` (NaN without them) and ``isolated`` (every eigenvalue below ``WORDS["isolated_eigenvalue"]``
    and every participation ratio below ``WORDS["isolated_participation"]``). The effective rank: ``rank_first`` (at
    layer 0), ``ranks`` (one {variant, rank} per block at the last layer, lowest first), ``fastest`` (the lowest)
    and ``rank_falls`` (every block lowers it by more than ``WORDS["rank_trend"]`` of its start).
    """
    n_sd = WORDS["n_sd"] if n_sd is None else float(n_sd)
    rel_tol = WORDS["move"] if rel_tol is None else float(rel_tol)
    variants = list(alignment)
    graphs = []
    for g in baseline:
        rows = []
        for q in qs:
            b = baseline[g][q]
            vals = np.concatenate([alignment[v][g][q] for v in variants])
            start = float(alignment[variants[0]][g][q][0])
            ends = {v: float(alignment[v][g][q][-1]) for v in variants}
            moves = {v: trend(start, ends[v], rel_tol) for v in variants}
            up = [v for v in variants if moves[v] == "rises"]
            down = [v for v in variants if moves[v] == "falls"]
            rows.append({"q": int(q), "random": bool(vals.max() <= b["mean"] + n_sd * b["sd"]),
                         "low": float(vals.min()), "high": float(vals.max()), "mean": float(b["mean"]),
                         "sd": float(b["sd"]), "start": start,
                         "ends": [{"variant": _name(v, names), "end": ends[v]} for v in variants],
                         "far": bool(max(ends.values()) < WORDS["close"]),
                         "up": [_name(v, names) for v in up], "any_up": bool(up), "one_up": len(up) == 1,
                         "down": [_name(v, names) for v in down], "any_down": bool(down),
                         "best": _name(max(variants, key=lambda v: ends[v]), names), "rel_tol": rel_tol})
        graphs.append({"graph": _label(names, "graph", g), "qs": rows})
    lam = np.asarray(eigenvalues, dtype=float)[:max(qs)]
    p = None if participation is None else np.asarray(participation, dtype=float)[:max(qs)]
    first = float(erank[variants[0]][0])
    last = {v: float(erank[v][-1]) for v in variants}
    order = sorted(variants, key=lambda v: last[v])
    return {
        "graphs": graphs,
        "lam_min": float(lam.min()), "lam_max": float(lam.max()), "has_participation": p is not None,
        "p_min": float("nan") if p is None else float(p.min()), "p_max": float("nan") if p is None else float(p.max()),
        "isolated": bool(lam.max() < WORDS["isolated_eigenvalue"]
                         and (p is None or p.max() < WORDS["isolated_participation"])),
        "rank_first": first, "ranks": [{"variant": _name(v, names), "rank": last[v]} for v in order],
        "fastest": _name(order[0], names),
        "rank_falls": all(trend(erank[v][0], last[v], WORDS["rank_trend"]) == "falls" for v in variants),
    }


def _where(rows, names) -> list:
    """The graphs and kappas of some rows of :func:`probdr_lite.chapters.energies.robustness_facts`, as short labels: each
    filled into ``names["where"]`` ({graph}: its short name, {kappa}), each label once, sorted; without ``names``,
    one {graph, kappa} each."""
    if names is None:
        return [{"graph": f["graph"], "kappa": f["kappa"]} for f in rows]
    return sorted({fill(names["where"], graph=_label(names, "graph_short", f["graph"]), kappa=f["kappa"])
                   for f in rows})


def constructions_facts(facts: list, variants=("attention", "diffusion", "paper"), names=None,
                        ceiling=CEILING) -> dict:
    """What holds over the thesis test's constructions (:func:`probdr_lite.chapters.energies.robustness_facts`' rows, with
    their ``ceiling``) and what depends on the graph, kappa and q.

    The rows themselves: ``room`` (the constructions whose start is above the random level and below the ceiling,
    where the test can show a move), ``flat`` (start at the random level), ``at_ceiling`` and ``closer`` (those of
    ``room`` where A - I ends closer to the embedding than plain attention), and ``moves`` {variant: its move in each
    of ``room``}. Their counts: ``n``, ``n_kappas``, ``n_graphs``, ``n_flat``, ``n_ceiling``, ``n_room``,
    ``n_closer``; where they are (short labels): ``flat_where``, ``ceiling_where``, ``closer_where``, with
    ``any_flat`` and ``any_ceiling``. ``held``: one {variant, towards, away} per block that moves the same way in
    every one of ``room``; ``varied``: one {variant, n_towards, n_away, n_still} per other block; ``closer_held``
    (A - I ends closer in all of them or in none: ``always_closer`` says which), ``closer_varies``; ``any_holds`` and
    ``any_depends``.
    """
    check_result(facts, "facts", robustness_facts, kind=list)
    room = [f for f in facts if f["start_above_random"] and not f["at_ceiling"]]
    flat = [f for f in facts if not f["start_above_random"]]
    ceil = [f for f in facts if f["at_ceiling"]]
    moves = {v: [f["moves"][v] for f in room] for v in variants}
    held = [v for v in variants if moves[v] and len(set(moves[v])) == 1]
    varied = [v for v in variants if moves[v] and v not in held]
    closer = [f for f in room if f["ends"]["diffusion"] > f["ends"]["attention"]]
    closer_held = bool(room) and len(closer) in (0, len(room))
    closer_varies = bool(room) and not closer_held
    return {
        "room": room, "flat": flat, "at_ceiling": ceil, "closer": closer, "moves": moves,
        "n": len(facts), "n_kappas": len({f["kappa"] for f in facts}), "n_graphs": len({f["graph"] for f in facts}),
        "n_flat": len(flat), "any_flat": bool(flat), "flat_where": _where(flat, names),
        "n_ceiling": len(ceil), "any_ceiling": bool(ceil), "ceiling_where": _where(ceil, names),
        "ceiling": float(ceiling),
        "n_room": len(room),
        "held": [{"variant": _name(v, names), "towards": moves[v][0] == "towards", "away": moves[v][0] == "away"}
                 for v in held],
        "varied": [{"variant": _name(v, names), "n_towards": moves[v].count("towards"),
                    "n_away": moves[v].count("away"), "n_still": moves[v].count("still")} for v in varied],
        "closer_held": closer_held, "always_closer": bool(closer), "closer_varies": closer_varies,
        "n_closer": len(closer), "closer_where": _where(closer, names),
        "any_holds": bool(held) or closer_held, "any_depends": bool(varied) or closer_varies,
    }


def panel_facts(baseline: dict, qs=(2, 5, 10)) -> dict:
    """How many panels the thesis figures draw, for their alt texts: ``n_graphs`` (one panel per graph of
    ``baseline`` in :func:`step_family_figure`), ``n_qs`` and ``n_panels`` (one per graph and q in
    :func:`thesis_figure`, with the same ``qs``)."""
    check_result(baseline, "baseline", random_baseline)
    return {"n_graphs": len(baseline), "n_qs": len(qs), "n_panels": len(baseline) * len(qs)}


def thesis_figure(alignment: dict, baseline: dict, labels: dict, names=None, qs=(2, 5, 10)):
    """Mean principal-angle cosine per layer: one panel per graph and q, one line per variant, the random level
    dashed. ``labels``: the chapter's ``random`` (the dashed line's name), ``title`` ({graph}, {q}), ``xlabel`` and
    ``ylabel``."""
    graphs = list(baseline)
    fig, axes = plt.subplots(len(graphs), len(qs), figsize=(3.4 * len(qs), 2.9 * len(graphs)), squeeze=False)
    for i, g in enumerate(graphs):
        for j, q in enumerate(qs):
            ax = axes[i, j]
            for v, a in alignment.items():
                vals = a[g][q]
                ax.plot(np.arange(vals.size), vals, "o-", ms=3, color=variant_colour(v),
                        label=_name(v, names))
            ax.axhline(baseline[g][q]["mean"], color="0.4", ls="--", lw=1, label=labels["random"])
            ax.set(ylim=(0, 1), xlabel=labels["xlabel"])
            ax.set_title(fill(labels["title"], graph=_label(names, "graph", g), q=q), fontsize="small")
            if j == 0:
                ax.set_ylabel(labels["ylabel"], fontsize="small")
    axes[0, 0].legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def step_family_figure(family_le: dict, steps: dict, baseline: dict, labels: dict, names=None, qs=(2, 10)):
    """The thesis measure after the last block of plain attention, as a function of its step s = 2 eta'.

    ``family_le`` is :func:`probdr_lite.chapters.energies.le_alignment` of plain-attention paths keyed by s; ``steps`` maps
    each block of the family to its s (:func:`probdr_lite.unrolled.attention_step`, times 2), each one of the
    keys, marked on the curves. ``labels``: the chapter's ``curve`` ({q}), ``xlabel`` and ``ylabel``.
    """
    graphs = list(baseline)
    s_grid = np.array(sorted(family_le))
    fig, axes = plt.subplots(1, len(graphs), figsize=(5.1 * len(graphs), 3.2), squeeze=False)
    for ax, g in zip(axes[0], graphs):
        for q, style in zip(qs, ("-", "--")):
            vals = np.array([family_le[s][g][q][-1] for s in s_grid])
            ax.plot(s_grid, vals, style, color="0.25", lw=1.2, label=fill(labels["curve"], q=q))
            ax.axhline(baseline[g][q]["mean"], color="0.55", ls=":", lw=1)
            for v, s in steps.items():
                ax.plot([s], [family_le[s][g][q][-1]], "o", ms=6, color=variant_colour(v),
                        label=_name(v, names) if q == qs[0] else None)
        ax.set(xscale="log", ylim=(0, 1), xlabel=labels["xlabel"])
        ax.set_title(_label(names, "graph", g), fontsize="small")
    axes[0, 0].set_ylabel(labels["ylabel"], fontsize="small")
    axes[0, 0].legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def step_family_facts(family_le: dict, steps: dict, family_gap: dict, baseline: dict, graphs=("attention", "pixels"),
                      qs=(2, 10), n_sd=None) -> dict:
    """The step-size family against the blocks: the facts of its paragraph.

    ``family_le`` is :func:`probdr_lite.chapters.energies.le_alignment` of plain-attention paths keyed by the step s,
    ``steps`` maps each block of the family to its s, ``family_gap`` maps "diffusion" and "paper" to the largest
    difference between that block's path and plain attention's at its step. Facts: ``s_attention``,
    ``s_diffusion``, ``s_paper``, ``gap_diffusion``, ``gap_paper`` and, for each graph g and q, ``<g>_q<q>_change``
    (the thesis measure after the last block at A - I's step minus at plain attention's), ``<g>_q<q>_higher`` and
    ``<g>_q<q>_lower`` (neither: no different), a difference counting beyond ``n_sd`` (default ``WORDS["n_sd"]``)
    standard deviations of the random level.
    """
    n_sd = WORDS["n_sd"] if n_sd is None else float(n_sd)
    facts = {"s_attention": steps["attention"], "s_diffusion": steps["diffusion"], "s_paper": steps["paper"],
             "gap_diffusion": float(family_gap["diffusion"]), "gap_paper": float(family_gap["paper"])}
    for g in graphs:
        for q in qs:
            d = float(family_le[steps["diffusion"]][g][q][-1]) - float(family_le[steps["attention"]][g][q][-1])
            noise = n_sd * baseline[g][q]["sd"]
            facts[f"{g}_q{q}_change"] = d
            facts[f"{g}_q{q}_higher"], facts[f"{g}_q{q}_lower"] = bool(d > noise), bool(d < -noise)
    return facts


def closing_facts(harness: dict, asymmetry: dict, alignment: dict, le: dict, baseline: dict, names=None, tol=None,
                  n_sd=None) -> dict:
    """Where the numbers leave the paper's reading among the others.

    ``paper_exact`` and ``correction_exact``: the paper's block, and the exact block, is the exact gradient step of
    the stop-gradient ELBO (:func:`exact_for`, to ``tol``); ``n_blocks``; ``grads`` (the names of the blocks that are
    gradient fields, asymmetry below ``tol``) with ``any_grad`` and ``one_grad``; ``uniform`` (every block moves
    every energy its reading's way at every step); ``lifted`` (the blocks that end, at some q, above the random
    level of the attention graph's LE embedding, ``n_sd`` standard deviations, and at or above ``WORDS["close"]``)
    with ``any_lifted`` and ``one_lifted``. The control, plain attention against A - I towards the pixels' graph at
    the largest q: ``has_control``, ``control_q``, ``attention_start``, ``attention_end``, ``diffusion_start``,
    ``diffusion_end`` (NaN without it) and ``attention_at_least`` (plain attention gains at least as much).
    """
    t = _tol(tol)
    n_sd = WORDS["n_sd"] if n_sd is None else float(n_sd)
    variants = list(next(iter(check_result(harness, "harness", energy_table).values())))
    grads = [u for u in variants if u in asymmetry and asymmetry[u] < t]
    ple_exact = exact_for(alignment, "ple", tol)["full"] if "ple" in alignment else []
    g = "attention"
    lifted = [v for v in le if g in baseline and any(
        le[v][g][q][-1] > baseline[g][q]["mean"] + n_sd * baseline[g][q]["sd"] and le[v][g][q][-1] >= WORDS["close"]
        for q in baseline[g])]
    facts = {
        "paper_exact": "paper" in ple_exact, "correction_exact": "exact" in ple_exact,
        "n_blocks": len(variants), "grads": [_name(u, names) for u in grads], "any_grad": bool(grads),
        "one_grad": len(grads) == 1,
        "uniform": all(_agrees(harness[r][v], SENSE[r]) for r in harness for v in variants),
        "lifted": [_name(v, names) for v in lifted], "any_lifted": bool(lifted), "one_lifted": len(lifted) == 1,
    }
    has_control = {"attention", "diffusion"} <= set(le) and "pixels" in le["attention"]
    nan = float("nan")
    facts.update(has_control=has_control, control_q=0, attention_start=nan, attention_end=nan, diffusion_start=nan,
                 diffusion_end=nan, attention_at_least=False)
    if has_control:
        q = max(le["attention"]["pixels"])
        a, d = le["attention"]["pixels"][q], le["diffusion"]["pixels"][q]
        facts.update(control_q=int(q), attention_start=float(a[0]), attention_end=float(a[-1]),
                     diffusion_start=float(d[0]), diffusion_end=float(d[-1]),
                     attention_at_least=bool(a[-1] - a[0] >= d[-1] - d[0]))
    return facts
