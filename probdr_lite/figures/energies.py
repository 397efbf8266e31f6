"""The energies chapter's tables, figures and computed sentences, built from :mod:`probdr_lite.energies` and
:mod:`probdr_lite.thesis` (every number comes from there; this module only arranges and words them).

Tables are :class:`probdr_lite.plotting.Table` objects meant to be shown as Markdown (``table.to_markdown()``), so
that their MathJax renders. Every comparison word follows from the numbers by a threshold passed in or taken from
:data:`probdr_lite.objections.THRESHOLDS`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite.energies import FROZEN, READINGS, SENSE, frequency_response
from probdr_lite.figures.prose import count_phrase, listing, num, pct, sci, trend
from probdr_lite.figures.style import variant_colour
from probdr_lite.objections import THRESHOLDS
from probdr_lite.plotting import Table, describe

__all__ = [
    "VARIANT_NAMES",
    "READING_NAMES",
    "ENERGY_TEX",
    "PREDICTS",
    "exact_for",
    "proposition_text",
    "gradient_field_table",
    "gradient_field_text",
    "alignment_table",
    "harness_table",
    "harness_text",
    "objectives_text",
    "energy_path_figure",
    "spectrum_figure",
    "spectrum_text",
    "filter_note",
    "differential_text",
    "energy_readings_table",
    "thesis_table",
    "thesis_text",
    "thesis_figure",
    "closing_text",
]

#: How the prose names each update (MathJax where it is maths).
VARIANT_NAMES = {"attention": "plain attention", "diffusion": "$A - I$", "paper": "the paper's block",
                 "exact": "the exact block", "symmetric": "the symmetric block",
                 "energy_transformer": r"$(A + A^\top) X$", "sinkformer": "Sinkhorn attention $P X$"}

#: The reading and the paper it comes from (the chapter cites them in its text).
READING_NAMES = {
    "ple": "PLE ELBO, stop-gradient (Ravuri and Lawrence)",
    "phi": r"$\Phi$ (derived here)",
    "hopfield": "modern Hopfield network (Ramsauer et al.)",
    "energy_transformer": "Energy Transformer (Hoover et al.)",
    "sphere": "tokens on the sphere (Geshkovski et al.)",
    "crate": "CRATE, coding rate (Yu et al.)",
    "sinkformer": "Sinkformer (Sander et al.)",
    "grand": "GRAND, Dirichlet energy (Chamberlain et al.)",
    "gfsa": "GFSA, graph filter (Choi et al.)",
    "diff_transformer": "Differential Transformer (Ye et al.)",
}

#: Each energy in the book's symbols; :data:`probdr_lite.energies.SENSE` says whether its reading raises or
#: lowers it. A_t, X_t: held at the step's start.
ENERGY_TEX = {
    "ple": r"$\log\det C - \operatorname{tr}(X^\top (I - A_t) X)$",
    "phi": r"$\log\det C - \lVert X \rVert_F^2 + \tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}$",
    "hopfield": r"$\tfrac12 \lVert X \rVert_F^2 - \tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}(X, X_t)$",
    "energy_transformer": r"$-\tfrac{d_q}{\kappa}\sum_i \operatorname{lse}_j S_{ij}$",
    "sphere": r"$\tfrac{d_q}{2\kappa n^2}\sum_{ij} e^{S_{ij} - \kappa}$",
    "crate": r"$\tfrac12 \log\det(I + X X^\top / \beta)$",
    "sinkformer": r"$\tfrac{d_q}{2\kappa}\min_f \big[\sum_{ij} e^{f_i + S_{ij} + f_j} - 2\sum_i f_i\big]$",
    "grand": r"$\operatorname{tr}(X^\top (I - A_t) X)$",
    "gfsa": r"none: a filter $w_0 I + w_1 A + w_K A^K$",
    "diff_transformer": r"none: a difference $A(\kappa) - \lambda A(\kappa_2)$",
}

#: What each reading says a block does, in the book's words (the papers' claims, paraphrased; not computed).
PREDICTS = {
    "ple": "its block climbs the ELBO of probabilistic Laplacian Eigenmaps",
    "phi": r"the exact block climbs $\Phi$ (the proposition)",
    "hopfield": "the update lowers the energy and retrieves a stored pattern or a mixture of a few",
    "energy_transformer": r"its update $X + h (A + A^\top) X$ lowers the energy",
    "sphere": "tokens cluster; the unnormalised dynamics raises the energy",
    "crate": "attention compresses: it lowers the coding rate",
    "sinkformer": "doubly stochastic attention is a gradient flow; it raises the energy",
    "grand": "attention diffusion lowers the Dirichlet energy (smoothing)",
    "gfsa": "attention is a low-pass filter; adding $I$ and $A^K$ counters over-smoothing",
    "diff_transformer": "subtracting a second attention map cancels attention spread over irrelevant tokens",
}

SENSE_WORD = {1: "raised", -1: "lowered"}


def _tol(tol):
    return THRESHOLDS["identity"] if tol is None else float(tol)


def exact_for(alignment: dict, reading: str, tol=None) -> dict:
    """The updates whose direction is the reading's gradient step: cosine 1 to ``tol`` (default the identity
    threshold), in the full space ("full") and after LayerNorm ("tangent"). ``alignment`` is
    :func:`probdr_lite.energies.update_alignment`'s result."""
    t = _tol(tol)
    if not isinstance(alignment, dict) or reading not in alignment:
        raise ValueError(f"alignment must be the dict of energies.update_alignment and hold reading {reading!r}")
    a = alignment[reading]
    return {"full": [u for u, c in a.items() if c["cosine"] >= 1.0 - t],
            "tangent": [u for u, c in a.items() if c["tangent_cosine"] >= 1.0 - t]}


def _names(updates) -> str:
    return listing(VARIANT_NAMES.get(u, u) for u in updates) if updates else "none"


def _verb(items, singular: str) -> str:
    """'moves' for one item, 'move' for several (regular verbs)."""
    return singular if len(items) == 1 else singular[:-1]


def proposition_text(gaps: dict, tol=None) -> str:
    """The proposition's check: ``gaps`` {case description: relative gap ||autograd grad Phi - closed form|| /
    ||closed form||}."""
    t = _tol(tol)
    if not isinstance(gaps, dict) or not gaps:
        raise ValueError("gaps must be a non-empty dict {case: relative gap}")
    worst = max(gaps.values())
    cases = "; ".join(f"{k}: {sci(v)}" for k, v in gaps.items())
    return (r"Autograd's $\nabla\Phi$ against the closed form $2 C^{-1} X - (L + L^\top) X$ (relative difference, "
            f"float64): {cases}. "
            + (f"Every gap is below {sci(t, 0)}: the two are the same to rounding." if worst < t else
               f"The largest gap, {sci(worst)}, is above {sci(t, 0)}: the check fails."))


def gradient_field_table(asymmetry: dict, tol=None) -> Table:
    """One row per update: the Jacobian asymmetry of :func:`probdr_lite.energies.gradient_field_asymmetry` and
    whether the update is the gradient of some energy (below ``tol``)."""
    t = _tol(tol)
    if not isinstance(asymmetry, dict) or not asymmetry:
        raise ValueError("asymmetry must be a non-empty dict {update: asymmetry}")
    body = [[VARIANT_NAMES.get(u, u), sci(a), "yes" if a < t else "no"] for u, a in asymmetry.items()]
    asym = r"$\max \lvert u^\top J v - v^\top J u \rvert / (\lVert Jv \rVert + \lVert Ju \rVert)$"
    return Table(["update", "Jacobian asymmetry " + asym, "a gradient field?"], body,
                 caption=f"a field is the gradient of an energy exactly when its Jacobian is symmetric; "
                         f"'yes' means below {sci(t, 0)}")


def gradient_field_text(asymmetry: dict, tol=None) -> str:
    t = _tol(tol)
    yes = [u for u, a in asymmetry.items() if a < t]
    no = [u for u, a in asymmetry.items() if a >= t]
    one = len(yes) == 1
    lead = ""
    if yes:
        lead = (f"The direction field{'' if one else 's'} of {_names(yes)} "
                f"{'is a gradient field' if one else 'are gradient fields'}: "
                f"{'its Jacobian is' if one else 'their Jacobians are'} symmetric to "
                f"{sci(max(asymmetry[u] for u in yes))}. ")
    return ((lead if yes else "None of the updates is a gradient field. ")
            + (f"Those of {_names(no)} are not: their asymmetry is {sci(min(asymmetry[u] for u in no))} or more, "
               f"far above rounding, so no energy whatever has them as its gradient (in the Euclidean metric)."
               if no else ""))


def alignment_table(alignment: dict, tol=None) -> Table:
    """Reading by reading: cosine of each block's step with the reading's own step at X_0 (full space, and
    tangent parts after LayerNorm), and which block takes it exactly."""
    if not isinstance(alignment, dict) or not alignment:
        raise ValueError("alignment must be the dict of energies.update_alignment")
    updates = list(next(iter(alignment.values())))
    header = ["reading"] + [VARIANT_NAMES.get(u, u) for u in updates] + ["exact step of"]
    body = []
    for r, a in alignment.items():
        ex = exact_for(alignment, r, tol)
        cells = [f"{num(a[u]['cosine'], 4)} / {num(a[u]['tangent_cosine'], 4)}" for u in updates]
        tangent_only = [u for u in ex["tangent"] if u not in ex["full"]]
        where = _names(ex["full"]) + (f"; after LayerNorm also {_names(tangent_only)}" if tangent_only else "")
        body.append([READING_NAMES[r]] + cells + [where])
    return Table(header, body, caption="each cell: cosine of the block's step with the reading's step "
                 "(sense × gradient) at $X_0$, in the full space / after LayerNorm (tangent parts)")


def _moves(e: dict) -> str:
    """'raises at 8/8 steps' and the like, from one energy_path entry."""
    T = e["deltas"].size
    if e["n_rise"] == T:
        return f"raised {T}/{T}"
    if e["n_fall"] == T:
        return f"lowered {T}/{T}"
    return f"raised {e['n_rise']}/{T}, lowered {e['n_fall']}/{T}"


def harness_table(table: dict) -> Table:
    """Rows readings, columns variants: how many of the steps raise or lower each energy (frozen readings with
    their frozen part held at the step's start)."""
    if not isinstance(table, dict) or not table:
        raise ValueError("table must be the dict of energies.energy_table")
    variants = list(next(iter(table.values())))
    header = ["reading", "energy", "its reading"] + [VARIANT_NAMES.get(v, v) for v in variants]
    body = [[READING_NAMES[r], ENERGY_TEX[r], SENSE_WORD[SENSE[r]]] + [_moves(table[r][v]) for v in variants]
            for r in table]
    return Table(header, body, caption="how many of the steps along the MNIST path raise or lower each energy; "
                 "the third column says which way the reading itself moves it")


def _agrees(e, sense) -> bool:
    T = e["deltas"].size
    return (e["n_rise"] == T) if sense > 0 else (e["n_fall"] == T)


def harness_text(table: dict) -> str:
    """Which blocks move each energy the reading's way at every step, worded from the counts."""
    variants = list(next(iter(table.values())))
    T = next(iter(next(iter(table.values())).values()))["deltas"].size
    agree = {r: [v for v in variants if _agrees(table[r][v], SENSE[r])] for r in table}
    all_agree = [r for r in table if len(agree[r]) == len(variants)]
    others = [r for r in table if r not in all_agree]
    if not others:
        text = (f"Along the {T} steps, each of the {len(variants)} blocks moves each of the {len(table)} energies "
                "the way its reading says, at every step. ")
    else:
        text = (f"Along the {T} steps, every block moves {count_phrase(len(all_agree), len(table), 'energies')} the "
                "way their readings say at every step"
                + (f" ({listing(READING_NAMES[r] for r in all_agree)})" if all_agree else "") + ". ")
    for r in others:
        text += (f"{READING_NAMES[r]}: " + (f"only {_names(agree[r])} {_verb(agree[r], 'moves')} it the reading's "
                                            "way at every step. " if agree[r] else
                                            "no block moves it the reading's way at every step. "))
    if not others:
        text += ("Monotonicity along the path therefore cannot tell these readings apart, nor the blocks: each "
                 "block raises every energy whose reading raises it and lowers every one whose reading lowers it. "
                 "What separates them is which block takes each reading's gradient step exactly (the table "
                 "above).")
    return text


def objectives_text(table: dict, readings=("ple", "phi"), rel_tol=0.01) -> str:
    """The PLE ELBO and Phi at the first and last layer of every block's path, and, for a frozen reading, whether
    the value with each layer's own graph follows the per-step changes (a move counts beyond ``rel_tol``)."""
    out = []
    for r in readings:
        if r not in table:
            raise ValueError(f"table must hold reading {r!r}")
        rows = table[r]
        T = next(iter(rows.values()))["deltas"].size
        ends = "; ".join(f"{VARIANT_NAMES[v]} {num(e['values'][0], 0)} → {num(e['values'][-1], 0)} "
                         f"({trend(e['values'][0], e['values'][-1], rel_tol)})" for v, e in rows.items())
        text = f"{READING_NAMES[r]}, layer 0 → layer {T}: {ends}."
        if r in FROZEN:
            undone = [v for v, e in rows.items() if _agrees(e, SENSE[r]) and
                      trend(e["values"][0], e["values"][-1], rel_tol) != ("rises" if SENSE[r] > 0 else "falls")]
            if undone:
                verb = "raises" if SENSE[r] > 0 else "lowers"
                text += (f" For {_names(undone)} every step {verb} the value computed with the "
                         "graph it started from, yet the value with each layer's own graph does not follow: the "
                         "change of graph between steps undoes what the steps gain.")
        out.append(text)
    return " ".join(out)


def energy_path_figure(table: dict):
    """One panel per reading: E(X_t) - E(X_0) along the layers, one line per variant."""
    if not isinstance(table, dict) or not table:
        raise ValueError("table must be the dict of energies.energy_table")
    readings = list(table)
    cols = 2  # two panels a row, so that the ticks stay readable at the page's width
    rows = int(np.ceil(len(readings) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(10.2, 2.9 * rows), squeeze=False)
    for ax, r in zip(axes.flat, readings):
        for v, e in table[r].items():
            vals = np.asarray(e["values"], dtype=float)
            ax.plot(np.arange(vals.size), vals - vals[0], "o-", ms=3, color=variant_colour(v),
                    label=VARIANT_NAMES[v])
        ax.axhline(0.0, color="0.5", lw=0.6)
        arrow = "↑" if SENSE[r] > 0 else "↓"
        title = READING_NAMES[r]
        ax.set_title(f"{title}\n(its reading: {arrow}{', frozen per step' if r in FROZEN else ''})",
                     fontsize="small")
        ax.set_xlabel("layer $t$")
        ax.set_ylabel(r"$E(X_t) - E(X_0)$", fontsize="small")
    for ax in list(axes.flat)[len(readings):]:
        ax.set_axis_off()
    axes.flat[0].legend(fontsize="x-small")
    fig.tight_layout()
    return describe(fig, f"{len(readings)} panels, one per energy reading, each showing how far every block's "
                         "steps move that energy from its value at layer 0, layer by layer.")


def spectrum_figure(lam, eta=0.4, d_q=128, beta=1.0, n_steps=8):
    """The blocks as filters on the spectrum of I - A: the response per step (left) and after ``n_steps``
    (right), relative to the constant mode, over a histogram of the eigenvalues at X_0."""
    lam = np.asarray(lam, dtype=float)
    if lam.ndim != 1 or lam.size == 0:
        raise ValueError("lam must be a non-empty 1-D array of eigenvalues of I - A")
    grid = np.linspace(0.0, max(1.0, float(lam.max())) * 1.05, 300)
    curves = (("attention", "plain attention", variant_colour("attention"), "-"),
              ("diffusion", "A − I and symmetric", variant_colour("diffusion"), "-"),
              ("paper", "the paper's block", variant_colour("paper"), "--"),
              ("flow", r"the diffusion flow $e^{-h\lambda}$", "0.4", ":"))
    fig, axes = plt.subplots(1, 2, figsize=(10.2, 3.8))
    for k, ax in enumerate(axes):
        twin = ax.twinx()
        twin.hist(lam, bins=60, color="0.85", zorder=0)
        twin.set_ylabel(r"eigenvalues of $I - A$ at $X_0$ (count)", color="0.45", fontsize="small")
        ax.set_zorder(twin.get_zorder() + 1)
        ax.patch.set_visible(False)
        for variant, label, colour, ls in curves:
            r = frequency_response(grid, variant, eta, d_q, beta)
            ax.plot(grid, r if k == 0 else np.abs(r) ** n_steps, ls, color=colour, lw=1.8, label=label)
        ax.axhline(0.0, color="0.5", lw=0.6)
        ax.set_xlabel(r"eigenvalue $\lambda$ of $I - A$ (graph frequency)")
    axes[0].set(ylabel=r"response of one step, relative to $\lambda = 0$",
                title=rf"one step ($\eta$ = {num(eta, 2)}, $h = 2\eta$)")
    axes[1].set(ylabel=rf"$|\mathrm{{response}}|^{{{n_steps}}}$", yscale="log", title=f"after {n_steps} steps",
                ylim=(1e-8, 1.5))
    axes[0].legend(fontsize="x-small", loc="lower left")
    fig.tight_layout()
    return describe(fig, "Two panels: the response of plain attention, A − I and the paper's block to each graph "
                         f"frequency after one step and after {n_steps} steps, relative to the constant mode, "
                         "over a histogram of the eigenvalues of I − A.")


def spectrum_text(lam, eta=0.4, d_q=128, beta=1.0, n_steps=8) -> str:
    """What the filters do to the middle and the top of the spectrum at X_0, worded from the numbers."""
    lam = np.asarray(lam, dtype=float)
    mid, top = float(np.median(lam)), float(lam.max())
    h = 2.0 * eta

    def after(v, x):
        return float(abs(frequency_response(x, v, eta, d_q, beta)) ** n_steps)

    return (f"The eigenvalues of $I - A$ at $X_0$ have median {num(mid, 3)} and reach {num(top, 3)}. For the graph "
            f"frozen at $X_0$, and without LayerNorm (which rescales each token by a factor of its own, so it is "
            f"not one factor common to every mode), after {n_steps} steps a mode at the median keeps {pct(after('diffusion', mid))} of its size relative to "
            f"the constant mode under $A - I$ ({pct(after('attention', mid))} under plain attention, "
            f"{pct(after('flow', mid))} under the flow $e^{{-\\tau L}}$ it discretises), and a mode at the top "
            f"keeps {sci(after('diffusion', top))} ({sci(after('attention', top))}; flow "
            f"{sci(after('flow', top))}). Since $1 - h\\lambda < e^{{-h\\lambda}}$ for every $\\lambda > 0$, each "
            f"Euler step damps every mode more than the diffusion over the same time $h = {num(h, 2)}$ would, and "
            f"most at the top of the spectrum, where $1 - h\\lambda$ "
            + ("reaches 0 at $\\lambda = 1/h$: such a mode is removed in one step." if top >= 1.0 / h else
               f"is smallest ({num(1.0 - h * top, 3)}).")
            + " That is the over-smoothing: the block keeps only the slowest modes of the graph.")


#: How far apart two retentions must be (as a ratio) before a sentence calls one above or below the other.
RETENTION_FACTOR = 2.0


def relation(a, b, factor=RETENTION_FACTOR) -> str:
    """``"above"``, ``"below"`` or ``"within a factor of 2 of"``: ``a`` against ``b``, both positive."""
    a, b = float(a), float(b)
    if not (a > 0 and b > 0):
        raise ValueError(f"a and b must be positive; got {a!r}, {b!r}")
    if a > factor * b:
        return "above"
    if b > factor * a:
        return "below"
    return f"within a factor of {factor:g} of"


def retention_facts(retention: dict) -> dict:
    """The facts of the real-path sentence, from {variant: :func:`probdr_lite.energies.mode_retention`}.

    For each variant v and part p ("top", "middle"): ``v_p`` (measured), ``v_p_pred`` (frozen-graph prediction),
    ``v_p_rel`` (:func:`relation` of the two) and ``v_p_ratio``; and ``top_rel``, the relation of A - I's measured
    top retention to plain attention's, ``n_modes`` and ``n_steps``.
    """
    if not {"attention", "diffusion"} <= set(retention):
        raise ValueError(f"retention must hold 'attention' and 'diffusion'; got {sorted(retention)}")
    facts = {}
    for v, r in retention.items():
        for part in ("top", "middle"):
            m, p = r[part]["measured"], r[part]["predicted"]
            facts.update({f"{v}_{part}": m, f"{v}_{part}_pred": p, f"{v}_{part}_rel": relation(m, p),
                          f"{v}_{part}_ratio": m / p})
    d, a = retention["diffusion"], retention["attention"]
    facts["top_rel"] = relation(d["top"]["measured"], a["top"]["measured"])
    facts["n_modes"], facts["n_steps"] = d["n_modes"], d["n_steps"]
    return facts


def filter_note(lam, eta=0.4, d_q=128, beta=1.0, n_steps=8) -> str:
    """One line for the closing table: what each filter leaves of the top of the spectrum after ``n_steps``."""
    top = float(np.max(np.asarray(lam, dtype=float)))

    def after(v):
        return sci(float(abs(frequency_response(top, v, eta, d_q, beta)) ** n_steps))

    return (f"for the graph frozen at $X_0$, without LayerNorm: after {n_steps} steps the top eigenmode of "
            f"$I - A$ ($\\lambda = {num(top, 2)}$) keeps "
            f"{after('diffusion')} of its size under $A - I$, {after('paper')} under the paper's block and "
            f"{after('attention')} under plain attention, against {after('flow')} under the flow (spectral figure)")


def differential_text(gaps, kappas2, kappa=30.0) -> str:
    """A - I as the limit of a difference of two attention maps, from :func:`probdr_lite.energies.differential_gap`."""
    gaps = np.asarray(gaps, dtype=float)
    kappas2 = np.asarray(kappas2, dtype=float)
    if gaps.shape != kappas2.shape or gaps.size == 0:
        raise ValueError("gaps must have one value per kappa_2")
    parts = ", ".join(f"{sci(g)} at $\\kappa_2 = {k:g}$" for g, k in zip(gaps, kappas2))
    return (r"$\lVert (A(\kappa) - A(\kappa_2)) X - (A - I) X \rVert / \lVert (A - I) X \rVert$ at $X_0$ "
            f"($\\kappa = {kappa:g}$): {parts}"
            + (": $A - I$ is the difference of two attention maps whose second map attends only to itself."
               if gaps[-1] < 1e-3 else ": the second map is not yet the identity at these sharpnesses."))


def energy_readings_table(table: dict, alignment: dict, asymmetry: dict, filter_note_text: str, differential_note: str,
                   tol=None) -> Table:
    """The chapter's closing table, reading by reading: the energy, the block whose step is its exact gradient
    step, what the reading predicts, and what this book measured (all but the third column computed)."""
    body = []
    variants = list(next(iter(table.values())))
    for r in READINGS:
        if r not in table:
            continue
        ex = exact_for(alignment, r, tol) if r in alignment else {"full": [], "tangent": []}
        tangent_only = [u for u in ex["tangent"] if u not in ex["full"]]
        exact = _names(ex["full"]) + (f" (after LayerNorm also {_names(tangent_only)})" if tangent_only else "")
        agree = [v for v in variants if _agrees(table[r][v], SENSE[r])]
        measured = (f"{SENSE_WORD[SENSE[r]]} at every step by "
                    + ("every block" if len(agree) == len(variants) else _names(agree) if agree else "no block"))
        body.append([READING_NAMES[r], f"{ENERGY_TEX[r]} ({SENSE_WORD[SENSE[r]]})", exact, PREDICTS[r], measured])
    grads = [u for u, a in asymmetry.items() if a < _tol(tol)]
    body.append([READING_NAMES["gfsa"], ENERGY_TEX["gfsa"],
                 "every block but the exact one is such a filter (with $w_K = 0$)", PREDICTS["gfsa"],
                 filter_note_text])
    body.append([READING_NAMES["diff_transformer"], ENERGY_TEX["diff_transformer"],
                 "$A - I$ is its limit $\\kappa_2 \\to \\infty$, $\\lambda = 1$", PREDICTS["diff_transformer"],
                 differential_note])
    return Table(["reading", "energy (its reading)", "exact gradient step of", "what it predicts",
                  "what this book measured"], body,
                 caption=f"of the updates tested, the gradient fields are {_names(grads)}; exact means a cosine "
                         f"within {sci(_tol(tol), 0)} of 1 at $X_0$")


# ---------------------------------------------------------------------------------------------------------------------
# The thesis: does a block move towards the Laplacian Eigenmaps embedding?

GRAPH_NAMES = {"attention": "LE of the attention graph at $X_0$", "pixels": "LE of the pixels' k-NN graph",
               "attention_no_loops": "LE of the attention graph at $X_0$ without self-loops",
               "latents_knn": "LE of the latents' k-NN graph at $X_0$"}
#: Short names of the graphs, for table cells.
GRAPH_SHORT = {"attention": "$W = e^S$", "attention_no_loops": "$W$ without self-loops",
               "latents_knn": "k-NN of $X_0$", "pixels": "k-NN of the pixels"}
MOVE_MARK = {"towards": "↑", "away": "↓", "still": "·"}


def thesis_table(alignment: dict, baseline: dict, erank: dict, qs=(2, 10)) -> Table:
    """Per variant: mean principal-angle cosine at layer 0 and the last layer, each graph and q, with the random
    baseline, and the effective rank."""
    variants = list(alignment)
    graphs = list(baseline)
    header = ["block"] + [f"{GRAPH_NAMES[g]}, $q = {q}$" for g in graphs for q in qs] + ["effective rank of $X_t$"]
    body = []
    for v in variants:
        cells = []
        for g in graphs:
            for q in qs:
                a = alignment[v][g][q]
                cells.append(f"{num(a[0])} → {num(a[-1])}")
        e = erank[v]
        body.append([VARIANT_NAMES.get(v, v)] + cells + [f"{num(e[0], 1)} → {num(e[-1], 1)}"])
    body.append(["random subspace"] + [f"{num(baseline[g][q]['mean'])} ± {num(baseline[g][q]['sd'])}"
                                        for g in graphs for q in qs] + [""])
    T = next(iter(alignment[variants[0]].values()))[qs[0]].size - 1
    return Table(header, body, caption=f"layer 0 → layer {T}: mean cosine of the principal angles between the "
                 "top-$q$ principal subspace of $X_t$ and the LE embedding (1: the same subspace); random: mean ± "
                 "sd over random subspaces")


def robustness_table(facts: list) -> Table:
    """The thesis test over every graph and kappa (:func:`probdr_lite.thesis.robustness_facts`): one row each."""
    variants = list(facts[0]["ends"])
    header = (["$\\kappa$", "graph", "$q$", "layer 0", "random"]
              + [f"{VARIANT_NAMES.get(v, v)}, last layer" for v in variants])
    body = [[num(f["kappa"], 0), GRAPH_SHORT.get(f["graph"], f["graph"]), str(f["q"]), num(f["start"]),
             f"{num(f['random'])} ± {num(f['random_sd'])}"]
            + [f"{num(f['ends'][v])} {MOVE_MARK[f['moves'][v]]}" for v in variants] for f in facts]
    return Table(header, body, caption="mean principal-angle cosine between the top-$q$ principal subspace of "
                 "$X_t$ and each graph's LE embedding; ↑ towards it, ↓ away, · neither (within 2 % of the start, "
                 "or at the random level: mean + 3 sd)")


def thesis_text(alignment: dict, baseline: dict, erank: dict, eigenvalues: dict, participation=None,
                qs=(2, 10), n_sd=3.0, rel_tol=0.02) -> str:
    """The thesis test in words: whether each block turns X_t's principal subspace towards each LE embedding,
    against the random baseline (within ``n_sd`` standard deviations counts as random level) and the layer-0 value
    (a change beyond ``rel_tol`` of it counts as a move)."""
    variants = list(alignment)
    out = []
    for g in baseline:
        sents = []
        for q in qs:
            b = baseline[g][q]
            hi = b["mean"] + n_sd * b["sd"]
            vals = np.concatenate([alignment[v][g][q] for v in variants])
            if vals.max() <= hi:
                sents.append(f"for $q = {q}$ every block stays at the level of a random subspace at every layer "
                             f"({num(vals.min())} to {num(vals.max())}, against {num(b['mean'])} ± {num(b['sd'])})")
                continue
            start = alignment[variants[0]][g][q][0]
            moves = {v: trend(start, alignment[v][g][q][-1], rel_tol) for v in variants}
            up = [v for v in variants if moves[v] == "rises"]
            down = [v for v in variants if moves[v] == "falls"]
            best = max(variants, key=lambda v: alignment[v][g][q][-1])
            ends = ", ".join(f"{VARIANT_NAMES[v]} {num(alignment[v][g][q][-1])}" for v in variants)
            far = max(alignment[v][g][q][-1] for v in variants) < 0.5
            sents.append(f"for $q = {q}$ the latents start at {num(start)} (random: {num(b['mean'])} ± "
                         f"{num(b['sd'])}) and end at {ends}"
                         + (" (above the random level, but far from 1, which would mean the same subspace)"
                            if far else "") + "; "
                         + (f"{_names(up)} {_verb(up, 'moves')} towards it" if up else
                            f"no block moves towards it by more than {pct(rel_tol)}")
                         + (f", {_names(down)} away from it" if down else "")
                         + f", and the closest at the end is {VARIANT_NAMES[best]}")
        out.append(f"**{GRAPH_NAMES[g]}:** " + "; ".join(sents) + ".")
    if "attention" in eigenvalues:
        lam = np.asarray(eigenvalues["attention"], dtype=float)[:max(qs)]
        p = None if participation is None else np.asarray(participation, dtype=float)[:max(qs)]
        isolated = bool(lam.max() < 0.01 and (p is None or p.max() < 5.0))
        note = (f"The attention graph's smallest non-trivial generalised eigenvalues are {sci(lam.min())} to "
                f"{sci(lam.max())}"
                + (f", and its LE eigenvectors have participation ratios {num(p.min(), 1)} to {num(p.max(), 1)} "
                   "(1 means a single image carries the whole vector)" if p is not None else ""))
        out.append(note + (": the graph is close to a set of separate points, and its Laplacian Eigenmaps "
                           "embedding picks out isolated images, which no principal subspace of the latents comes "
                           "near." if isolated else
                           ": the graph is connected, and its eigenvectors spread over many images."))
    first = {v: erank[v][0] for v in variants}
    last = {v: erank[v][-1] for v in variants}
    order = sorted(variants, key=lambda v: last[v])
    out.append(f"The effective rank of $X_t$ falls from {num(first[variants[0]], 1)} to "
               + ", ".join(f"{num(last[v], 1)} ({VARIANT_NAMES[v]})" for v in order)
               + f": every block pushes the latents towards the rank collapse of deep attention, "
               f"{VARIANT_NAMES[order[0]]} fastest.")
    return "\n\n".join(out)


def thesis_figure(alignment: dict, baseline: dict, qs=(2, 5, 10)):
    """Mean principal-angle cosine per layer: one panel per graph and q, one line per variant, the random level
    dashed."""
    graphs = list(baseline)
    fig, axes = plt.subplots(len(graphs), len(qs), figsize=(3.4 * len(qs), 2.9 * len(graphs)), squeeze=False)
    for i, g in enumerate(graphs):
        for j, q in enumerate(qs):
            ax = axes[i, j]
            for v, a in alignment.items():
                vals = a[g][q]
                ax.plot(np.arange(vals.size), vals, "o-", ms=3, color=variant_colour(v),
                        label=VARIANT_NAMES[v])
            ax.axhline(baseline[g][q]["mean"], color="0.4", ls="--", lw=1, label="random subspace")
            ax.set(ylim=(0, 1), xlabel="layer $t$")
            ax.set_title(f"{GRAPH_NAMES[g]}, $q$ = {q}", fontsize="small")
            if j == 0:
                ax.set_ylabel("mean principal-angle cosine", fontsize="small")
    axes[0, 0].legend(fontsize="x-small")
    fig.tight_layout()
    return describe(fig, f"{len(graphs) * len(qs)} panels, one per graph and subspace dimension q, each showing "
                         "per layer how closely every block's principal subspace matches the Laplacian Eigenmaps "
                         "embedding, against the level of a random subspace.")


def step_family_figure(family_le: dict, steps: dict, baseline: dict, qs=(2, 10)):
    """The thesis measure after the last block of plain attention, as a function of its step s = 2 eta'.

    ``family_le`` is :func:`probdr_lite.thesis.le_alignment` of plain-attention paths keyed by s; ``steps`` maps
    each block of the family to its s (:func:`probdr_lite.unrolled.attention_step`, times 2), each one of the
    keys, marked on the curves.
    """
    graphs = list(baseline)
    s_grid = np.array(sorted(family_le))
    fig, axes = plt.subplots(1, len(graphs), figsize=(5.1 * len(graphs), 3.2), squeeze=False)
    for ax, g in zip(axes[0], graphs):
        for q, style in zip(qs, ("-", "--")):
            vals = np.array([family_le[s][g][q][-1] for s in s_grid])
            ax.plot(s_grid, vals, style, color="0.25", lw=1.2, label=f"plain attention at step $s$, $q$ = {q}")
            ax.axhline(baseline[g][q]["mean"], color="0.55", ls=":", lw=1)
            for v, s in steps.items():
                ax.plot([s], [family_le[s][g][q][-1]], "o", ms=6, color=variant_colour(v),
                        label=VARIANT_NAMES[v] if q == qs[0] else None)
        ax.set(xscale="log", ylim=(0, 1), xlabel="step $s$ of $\\Pi(X + s A X)$")
        ax.set_title(GRAPH_NAMES[g], fontsize="small")
    axes[0, 0].set_ylabel("mean principal-angle cosine, last layer", fontsize="small")
    axes[0, 0].legend(fontsize="x-small")
    fig.tight_layout()
    return describe(fig, f"{len(graphs)} panels, one per graph: how closely the latents after the last block of "
                         "plain attention match the graph's Laplacian Eigenmaps embedding, as its step grows, with "
                         "plain attention, A - I and the paper's block marked at their own steps, and the random "
                         "level dotted.")


def closing_text(harness: dict, asymmetry: dict, alignment: dict, le: dict, baseline: dict, tol=None,
                 n_sd=3.0) -> str:
    """Where the numbers leave the paper's reading among the others, each clause conditional on the numbers."""
    t = _tol(tol)
    variants = list(next(iter(harness.values())))
    uniform = all(_agrees(harness[r][v], SENSE[r]) for r in harness for v in variants)
    grads = [u for u in variants if u in asymmetry and asymmetry[u] < t]
    ple_exact = exact_for(alignment, "ple", tol)["full"] if "ple" in alignment else []
    g = "attention"
    lifted = [v for v in le if g in baseline and any(
        le[v][g][q][-1] > baseline[g][q]["mean"] + n_sd * baseline[g][q]["sd"] and le[v][g][q][-1] >= 0.5
        for q in baseline[g])]
    return (
        "The paper's block, as the paper writes it, is "
        + ("not an exact gradient step of its own objective; its correction, the exact block, is the exact step "
           r"of the stop-gradient ELBO and of $\Phi$, a Hopfield-type log-sum-exp energy plus ProbDR's "
           "log-determinant" if "paper" not in ple_exact and "exact" in ple_exact else
           "an exact gradient step of the stop-gradient ELBO")
        + (f". Of the {len(variants)} blocks, only {_names(grads)} {'is' if len(grads) == 1 else 'are'} a "
           "gradient field at all" if grads else f". None of the {len(variants)} blocks is a gradient field")
        + ". "
        + ("At the level of which energy goes which way the readings cannot be told apart here: along the MNIST "
           "path every block moves every energy the way each reading predicts. " if uniform else
           "Along the MNIST path the blocks do not all move every energy the way the readings predict (table "
           "above). ")
        + "What the probabilistic Laplacian Eigenmaps reading adds to the others is the log-determinant, the term "
          "that expands the coding rate CRATE's attention compresses. "
        + ("Its title claim, that a block performs Laplacian Eigenmaps on its attention graph, is not borne out at "
           "the paper's settings: no block brings the latents' principal subspace near that graph's Laplacian "
           "Eigenmaps embedding." if not lifted else
           f"{_names(lifted)} {_verb(lifted, 'brings')} the latents' principal subspace close to the attention "
           "graph's Laplacian Eigenmaps embedding, as the title claims.")
        + _control_clause(le)
    )


def _control_clause(le: dict) -> str:
    """Plain attention (the control) against A - I on the pixels' graph, at the largest q."""
    if not {"attention", "diffusion"} <= set(le) or "pixels" not in le["attention"]:
        return ""
    q = max(le["attention"]["pixels"])
    a, d = le["attention"]["pixels"][q], le["diffusion"]["pixels"][q]
    gain_a, gain_d = a[-1] - a[0], d[-1] - d[0]
    return (f" Towards the pixels' graph ($q = {q}$), plain attention, which has no Laplacian in it, "
            + ("moves at least as far as $A - I$" if gain_a >= gain_d else "moves less than $A - I$")
            + f" ({num(a[0])} → {num(a[-1])} against {num(d[0])} → {num(d[-1])}).")
