"""The energies chapter's tables and figures, built from :mod:`probdr_lite.chapters.energies` (every number comes
from there; this module only arranges them), with the labels they use (:data:`NAMES`, defined once; the graphs'
labels come from :data:`probdr_lite.chapters.energies.GRAPHS`; a missing label raises ``KeyError``).

The chapter's sentences are its own Markdown, with the numbers glued and the claims checked beside them; nothing
here writes a sentence, and no cell's words depend on a number: a cell holds numbers and the chapter's labels. Tables
are :class:`probdr_lite.presentation.plotting.Table` objects meant to be shown as Markdown (``table.to_markdown()``),
so that their MathJax renders; each table's ``columns`` and each figure's ``labels`` are the chapter's headers, axis
labels and titles, with numbers and labels pasted into their ``{...}`` slots by ``str.format``. The thresholds that
read the numbers (the identity threshold, the thesis test's tolerance and random level) are defined where the
numbers are computed: :data:`probdr_lite.chapters.objections.THRESHOLDS` and :mod:`probdr_lite.chapters.energies`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_array, check_result, check_scalar
from probdr_lite.chapters.energies import (GRAPHS, SENSE, energy_table, frequency_response, graph_label,
                                           robustness_facts, update_alignment)
from probdr_lite.chapters.objections import THRESHOLDS
from probdr_lite.presentation.plotting import Table
from probdr_lite.presentation.prose import num, sci
from probdr_lite.presentation.style import variant_colour

__all__ = [
    "NAMES",
    "exact_for",
    "closest",
    "gradient_field_table",
    "alignment_table",
    "harness_table",
    "energy_path_figure",
    "spectrum_figure",
    "relation",
    "retention_facts",
    "thesis_table",
    "robustness_table",
    "thesis_figure",
    "step_family_figure",
]

#: How the chapter's tables and figures name each block (MathJax where it is maths), each reading (with the paper it
#: comes from, cited in the text), each reading's energy (A_l, X_l: held at the step's start), each graph of the
#: thesis test (read from :data:`probdr_lite.chapters.energies.GRAPHS`, where the graphs are defined), which way a
#: reading moves its energy, and the marks of the robustness table. Defined once; a missing label raises KeyError.
_VARIANT_NAMES = {"attention": "plain attention", "diffusion": "$A - I$", "paper": "the paper's block",
                  "exact": "the exact block", "symmetric": "the symmetric block",
                  "energy_transformer": r"$(A + A^\top) X$", "sinkformer": "Sinkhorn attention $P X$"}
NAMES = {
    "variant": _VARIANT_NAMES,
    "reading": {"ple": "PLE ELBO, stop-gradient (Ravuri and Lawrence)", "phi": r"$\Phi$ (derived here)",
                "hopfield": "modern Hopfield network (Ramsauer et al.)",
                "energy_transformer": "Energy Transformer (Hoover et al.)",
                "sphere": "tokens on the sphere (Geshkovski et al.)", "crate": "CRATE, coding rate (Yu et al.)",
                "sinkformer": "Sinkformer (Sander et al.)", "grand": "GRAND, Dirichlet energy (Chamberlain et al.)",
                "gfsa": "GFSA, graph filter (Choi et al.)", "diff_transformer": "Differential Transformer (Ye et al.)"},
    "energy": {
        "ple": r"$\log\det C - \operatorname{tr}(X^\top (I - A_l) X)$",
        "phi": r"$\log\det C - \lVert X \rVert_F^2 + \tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}$",
        "hopfield": r"$\tfrac12 \lVert X \rVert_F^2 - \tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}(X, X_l)$",
        "energy_transformer": r"$-\tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}$",
        "sphere": r"$\tfrac{d_q}{2\kappa n^2}\sum_{ij} e^{S_{ij} - \kappa}$",
        "crate": r"$\tfrac12 \log\det(I + X X^\top / \beta)$",
        "sinkformer": r"$\tfrac{d_q}{2\kappa}\min_f \big[\sum_{ij} e^{f_i + S_{ij} + f_j} - 2\sum_i f_i\big]$",
        "grand": r"$\operatorname{tr}(X^\top (I - A_l) X)$",
        "gfsa": r"none: a filter $w_0 I + w_1 A + w_K A^K$",
        "diff_transformer": r"none: a difference $A(\kappa) - \lambda A(\kappa_2)$",
    },
    "graph": {g: graph_label(g) for g in GRAPHS},
    "graph_short": {g: graph_label(g, short=True) for g in GRAPHS},
    "sense": {1: "raised", -1: "lowered"},
    "move": {"towards": "↑", "away": "↓", "still": "·"},
    "closer": {"diffusion": _VARIANT_NAMES["diffusion"], "attention": _VARIANT_NAMES["attention"], "tie": "tie",
               "random": "neither (random level)"},
    "none": "none",  # a table cell's list of no block
}


def _label(names, kind, key):
    """The chapter's name of ``key`` among its ``kind`` ("variant", "reading", "energy", "graph", "graph_short",
    "sense", "move", "closer"), from ``names`` (default :data:`NAMES`); a missing label raises ``KeyError``."""
    return (NAMES if names is None else names)[kind][key]


def _tol(tol):
    return THRESHOLDS["identity"] if tol is None else float(tol)


def _name(u, names=None) -> str:
    return _label(names, "variant", u)


def _names(updates, names) -> str:
    """A table cell's list of updates, separated by commas; an empty list is the chapter's ``names["none"]``."""
    return ", ".join(_name(u, names) for u in updates) or (NAMES if names is None else names)["none"]


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


_ASYMMETRY = "{update: energies.gradient_field_asymmetry(...)}"


def gradient_field_table(asymmetry: dict, columns: dict, names=None, tol=None, caption=None) -> Table:
    """One row per update, from :func:`probdr_lite.chapters.energies.gradient_field_asymmetry`: the size of the
    Jacobian's antisymmetric part, the size of the Jacobian, their ratio, and whether the update is the gradient of
    some energy (ratio below ``tol``). ``columns``: the chapter's headers ``update``, ``antisymmetric``,
    ``jacobian``, ``asymmetry``, ``field`` and the cells ``yes`` and ``no``."""
    t = _tol(tol)
    check_result(asymmetry, "asymmetry", _ASYMMETRY)
    for u, a in asymmetry.items():
        check_result(a, f"asymmetry[{u!r}]", "energies.gradient_field_asymmetry(...)",
                     keys=("asymmetry", "antisymmetric", "jacobian"))

    def size(x):  # a norm that is rounding shows as one, not as a number with a meaningless second digit
        return sci(x) if x < 1e-3 else num(x, 1)

    body = [[_name(u, names), size(a["antisymmetric"]), size(a["jacobian"]), sci(a["asymmetry"]) if
             a["asymmetry"] < 1e-3 else num(a["asymmetry"], 2), columns["yes"] if a["asymmetry"] < t else columns["no"]]
            for u, a in asymmetry.items()]
    return Table([columns[k] for k in ("update", "antisymmetric", "jacobian", "asymmetry", "field")], body,
                 caption=caption)


def closest(alignment: dict, reading: str, tol=None) -> list:
    """The blocks whose step after LayerNorm (tangent parts) is closest to the reading's: the highest tangent
    cosine, and every block within ``tol`` (default the identity threshold) of it, since blocks that differ by a
    multiple of X share one tangent direction. ``alignment`` is
    :func:`probdr_lite.chapters.energies.update_alignment`'s result."""
    t = _tol(tol)
    a = check_result(alignment, "alignment", update_alignment, keys=(reading,))[reading]
    best = max(c["tangent_cosine"] for c in a.values())
    return [u for u, c in a.items() if c["tangent_cosine"] >= best - t]


def _closest_cell(alignment, r, names, tol=None) -> str:
    """The blocks of :func:`closest` with how far their tangent cosine is from 1: ``"the exact block (1.7e-04)"``,
    so that a reading no block takes exactly says how close the nearest one comes after LayerNorm."""
    near = closest(alignment, r, tol)
    return f"{_names(near, names)} ({sci(max(0.0, 1.0 - alignment[r][near[0]]['tangent_cosine']))})"  # no -0


def alignment_table(alignment: dict, columns: dict, names=None, tol=None, caption=None) -> Table:
    """Reading by reading: cosine of each block's step with the reading's own step at X_0 (full space, and
    tangent parts after LayerNorm), the blocks that take it exactly (cosine within ``tol`` of 1: :func:`exact_for`)
    in the full space and after LayerNorm, and the closest blocks after LayerNorm with 1 - their tangent cosine
    (:func:`closest`). ``columns``: the chapter's headers ``reading``, ``exact``, ``tangent`` and ``closest``."""
    updates = list(next(iter(check_result(alignment, "alignment", update_alignment).values())))
    header = ([columns["reading"]] + [_name(u, names) for u in updates]
              + [columns["exact"], columns["tangent"], columns["closest"]])
    body = []
    for r, a in alignment.items():
        ex = exact_for(alignment, r, tol)
        body.append([_label(names, "reading", r)]
                    + [f"{num(a[u]['cosine'], 4)} / {num(a[u]['tangent_cosine'], 4)}" for u in updates]
                    + [_names(ex["full"], names), _names(ex["tangent"], names), _closest_cell(alignment, r, names, tol)])
    return Table(header, body, caption=caption)


# ---------------------------------------------------------------------------------------------------------------------
# Every energy along the path


def _agreeing(e: dict, reading: str) -> str:
    """One energy_path entry's cell: how many of its steps move the energy the way ``reading`` says, out of all
    (``"8/8"``); frozen readings are judged with their frozen part held at each step's start."""
    return f"{e['n_rise'] if SENSE[reading] > 0 else e['n_fall']}/{e['deltas'].size}"


def harness_table(table: dict, columns: dict, names=None, caption=None) -> Table:
    """Rows readings, columns variants: how many of the steps move each energy the way its reading says (the
    reading's sense, raised or lowered, is the third column). ``columns``: the chapter's headers ``reading``,
    ``energy`` and ``sense``."""
    variants = list(next(iter(_check_table(table).values())))
    header = [columns["reading"], columns["energy"], columns["sense"]] + [_name(v, names) for v in variants]
    body = [[_label(names, "reading", r), _label(names, "energy", r), _label(names, "sense", SENSE[r])]
            + [_agreeing(table[r][v], r) for v in variants] for r in table]
    return Table(header, body, caption=caption)


def energy_path_figure(table: dict, labels: dict, names=None):
    """One panel per reading: E(X_l) - E(X_0) along the layers, one line per variant. ``labels``: the chapter's
    ``title`` ({reading}, {arrow}: ``labels["arrow"]`` of the reading's sense), ``xlabel`` and ``ylabel``."""
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
        ax.set_title(labels["title"].format(reading=_label(names, "reading", r), arrow=labels["arrow"][SENSE[r]]),
                     fontsize="small")
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
    axes[0].set(ylabel=labels["ylabel_one"], title=labels["title_one"].format(eta=eta))
    axes[1].set(ylabel=labels["ylabel_n"].format(n_steps=n_steps), yscale="log",
                title=labels["title_n"].format(n_steps=n_steps), ylim=(1e-8, 1.5))
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
    apart the frozen filters are there), each as :func:`~probdr_lite.presentation.prose.sci` prints it, so that the
    ratio of the printed numbers is the ratio stated, ``n_modes`` and ``n_steps``.
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
    facts["filter_ratio"] = float(sci(a["top"]["predicted"])) / float(sci(d["top"]["predicted"]))
    facts["n_modes"], facts["n_steps"] = d["n_modes"], d["n_steps"]
    return facts


# ---------------------------------------------------------------------------------------------------------------------
# The thesis: does a block move towards the Laplacian Eigenmaps embedding?


def thesis_table(alignment: dict, baseline: dict, erank: dict, columns: dict, names=None, qs=(2, 10),
                 caption=None) -> Table:
    """Per variant: mean principal-angle cosine at layer 0 and the last layer, with the highest and the layer where it
    is reached in brackets, each graph and q, with the random baseline, and the effective rank. ``columns``: the
    chapter's headers ``block``, ``graph`` ({graph}, {q}) and ``rank``, and the last row's name ``random``."""
    variants = list(alignment)
    graphs = list(baseline)
    header = ([columns["block"]] + [columns["graph"].format(graph=_label(names, "graph", g), q=q)
                                    for g in graphs for q in qs] + [columns["rank"]])
    body = []
    for v in variants:
        cells = []
        for g in graphs:
            for q in qs:
                a = np.asarray(alignment[v][g][q])
                cells.append(f"{num(a[0])} → {num(a[-1])} ({num(a.max())} at {int(np.argmax(a))})")
        e = erank[v]
        body.append([_name(v, names)] + cells + [f"{num(e[0], 1)} → {num(e[-1], 1)}"])
    body.append([columns["random"]] + [f"{num(baseline[g][q]['mean'])} ± {num(baseline[g][q]['sd'])}"
                                        for g in graphs for q in qs] + [""])
    return Table(header, body, caption=caption)


def robustness_table(facts: list, columns: dict, names=None, caption=None) -> Table:
    """The thesis test over every graph and kappa (:func:`probdr_lite.chapters.energies.robustness_facts`): one row each.
    ``columns``: the chapter's headers ``kappa``, ``graph``, ``q``, ``start``, ``random``, ``end`` ({variant}; each
    cell the last layer's cosine, its move mark from ``names["move"]``, and the peak and its layer in brackets) and
    ``closer`` (which of plain attention and A - I ends closer, from ``names["closer"]``)."""
    variants = list(check_result(facts, "facts", robustness_facts, kind=list)[0]["ends"])
    header = ([columns[k] for k in ("kappa", "graph", "q", "start", "random")]
              + [columns["end"].format(variant=_name(v, names)) for v in variants] + [columns["closer"]])
    body = [[num(f["kappa"], 0), _label(names, "graph_short", f["graph"]), str(f["q"]), num(f["start"]),
             f"{num(f['random'])} ± {num(f['random_sd'])}"]
            + [f"{num(f['ends'][v])} {_label(names, 'move', f['moves'][v])} "
               f"({num(f['peak_values'][v])} at {f['peaks'][v]})" for v in variants]
            + [_label(names, "closer", f["closer"])] for f in facts]
    return Table(header, body, caption=caption)


def thesis_figure(alignment: dict, baseline: dict, labels: dict, names=None, qs=(2, 10)):
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
            ax.set_title(labels["title"].format(graph=_label(names, "graph", g), q=q), fontsize="small")
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
            ax.plot(s_grid, vals, style, color="0.25", lw=1.2, label=labels["curve"].format(q=q))
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
