"""Chapter 6, trained transformers: figures, tables and the verdict of the multi-seed comparison.

The paper (Ravuri & Lawrence, arXiv 2507.21040) reports single training runs in which attention ``A - I``
beats plain ``A``. The sweeps of :mod:`probdr_lite.experiments` rerun each arm with several seeds, pairing the
arms by seed (same initial weights, same data order), and commit the rows under ``probdr_lite/results/``. This
module turns those rows into what the chapter shows:

- :func:`load_task_results`  the committed rows of one task, or ``None`` while they are not committed;
- :func:`run_commands`, :func:`readme_commands`, :func:`provenance`  how the rows were made;
- :func:`config_differences`  the run configuration against nanoGPT's CPU recipe (the external anchor);
- :func:`seed_band` / :func:`curves_figure`  validation curves, one mean line and a seed band per arm;
- :func:`paired_differences` / :func:`paired_figure`  arm minus baseline, seed by seed;
- :func:`arms_table` / :func:`paired_table`  the output of :func:`~probdr_lite.experiments.summarise` as tables;
- :func:`verdict`  a stated decision rule applied to the paired statistics;
- :func:`gate_values` / :func:`gates_figure`  the learned g of the gated arm ``A - g I``.

The statistics themselves (means, paired t-test, sign test) are computed by
:func:`probdr_lite.experiments.summarise`; this module only reads and draws them.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_choice, check_scalar
from probdr_lite.experiments.results import TASK_METRICS, TASK_VARIANTS, load_results, validate_results
from probdr_lite.plotting import Table

__all__ = [
    "RESULTS_DIR",
    "RESULTS_FILES",
    "NANOGPT_CPU",
    "NANOGPT_CPU_VAL_LOSS",
    "VARIANT_LABELS",
    "VARIANT_COLOURS",
    "OPERATOR_MATH",
    "OPERATOR_TEXT",
    "Table",
    "Verdict",
    "results_dir",
    "load_task_results",
    "run_commands",
    "readme_commands",
    "provenance",
    "config_differences",
    "seed_band",
    "curves_figure",
    "paired_differences",
    "paired_figure",
    "arms_table",
    "paired_table",
    "verdict",
    "seeds_needed",
    "verdict_text",
    "gate_values",
    "gates_figure",
    "gates_text",
]

#: Where the committed results live (``probdr_lite/results/``).
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"
#: The results file of each task inside :data:`RESULTS_DIR`.
RESULTS_FILES = {"charlm": "charlm_cpu.json", "vit": "vit_mnist.json"}
#: Environment variable that points the chapter at another results folder (a scratch sweep while developing).
RESULTS_ENV = "PROBDR_RESULTS_DIR"

#: nanoGPT's ``shakespeare_char`` recipe run on a CPU (README of karpathy/nanoGPT), field names of CharLMConfig.
NANOGPT_CPU = {
    "n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": 64, "batch_size": 12, "max_iters": 2000,
    "lr": 1e-3, "min_lr": 1e-4, "warmup_iters": 100, "beta2": 0.99, "dropout": 0.0, "weight_decay": 0.1,
    "grad_clip": 1.0, "train_fraction": 0.9,
}
#: The validation loss nanoGPT's README reports for that recipe (about 1.88).
NANOGPT_CPU_VAL_LOSS = 1.88

VARIANT_LABELS = {
    "attention": "attention: A",
    "diffusion": "diffusion: A − I",
    "gated": "gated: A − gI",
    "symmetric": "symmetric: D^(−1/2) E D^(−1/2)",
}
#: The operator alone, as matplotlib mathtext (plots) and as plain text (tables, sentences).
OPERATOR_MATH = {"attention": "$A$", "diffusion": "$A - I$", "gated": "$A - gI$",
                 "symmetric": "$D^{-1/2} E D^{-1/2}$"}
OPERATOR_TEXT = {v: label.split(": ", 1)[1] for v, label in VARIANT_LABELS.items()}
VARIANT_COLOURS = {"attention": "C0", "diffusion": "C3", "gated": "C2", "symmetric": "C4"}
METRIC_LABELS = {"val_loss": "validation loss (cross-entropy, nats)", "train_loss": "training loss (nats)",
                 "val_acc": "validation accuracy"}
QUANTITY_LABELS = {"final_val_loss": "final validation loss", "best_val_loss": "best validation loss",
                   "final_val_acc": "final validation accuracy", "best_val_acc": "best validation accuracy"}
BANDS = ("sd", "minmax")


# ----------------------------------------------------------------------------------------------- reading the rows

def results_dir(directory=None) -> Path:
    """The folder to read results from: ``directory``, else ``$PROBDR_RESULTS_DIR``, else :data:`RESULTS_DIR`."""
    if directory is None:
        directory = os.environ.get(RESULTS_ENV) or RESULTS_DIR
    return Path(directory)


def load_task_results(task: str, directory=None):
    """The validated rows of ``task`` from its results file, or ``None`` if the file is not there.

    Parameters
    ----------
    task : {"charlm", "vit"}
    directory : path, optional
        Folder holding ``charlm_cpu.json`` / ``vit_mnist.json`` (default: :func:`results_dir`).

    A file that exists but breaks the schema raises ``ValueError`` (from
    :func:`~probdr_lite.experiments.load_results`): a damaged file is never read as "no results".
    """
    task = check_choice(task, "task", tuple(RESULTS_FILES))
    path = results_dir(directory) / RESULTS_FILES[task]
    if not path.is_file():
        return None
    rows = [r for r in load_results(path) if r["task"] == task]
    return rows or None


def _task_rows(rows, name: str = "rows") -> tuple[list, str]:
    """Validate ``rows`` and check they are non-empty and of one task; return (rows, task)."""
    if not isinstance(rows, list):
        raise ValueError(f"{name} must be a list of results rows; got {type(rows).__name__}")
    if not rows:
        raise ValueError(f"{name} must hold at least one results row; got an empty list")
    validate_results(rows)
    tasks = sorted({r["task"] for r in rows})
    if len(tasks) != 1:
        raise ValueError(f"{name} must all belong to one task; got tasks {tasks}")
    return rows, tasks[0]


def _variants(rows, task):
    """The variants present in ``rows``, in the book's order."""
    present = {r["variant"] for r in rows}
    return [v for v in TASK_VARIANTS[task] if v in present]


def run_commands(rows) -> list:
    """The distinct command lines recorded in ``rows``, in the order they first appear."""
    rows, _ = _task_rows(rows)
    return list(dict.fromkeys(r["command"] for r in rows))


def readme_commands(directory=None) -> list:
    """The ``probdr_lite.experiments`` command lines written in the results folder's ``README.md``.

    Lines ending in a backslash are joined with the next one; leading ``VAR=value``
    assignments are kept. Returns an empty list when there is no README or it names no command.
    """
    path = results_dir(directory) / "README.md"
    if not path.is_file():
        return []
    text = re.sub(r"[ \t]*\\[ \t]*\n\s*", " ", path.read_text(encoding="utf-8"))
    env = r"(?:[A-Z_][A-Z0-9_]*=[^\s`]+\s+)*"  # leading VAR=value assignments belong to the command
    start = re.compile(env + r"(?:[^\s`$=]*python\S*\s+-m\s+probdr_lite\.experiments\b|\bprobdr-experiments\b)")
    out = []
    for line in text.splitlines():
        m = start.search(line)
        if m:
            command = line[m.start():].split("`", 1)[0].strip()  # an inline `code` span ends at its backtick
            out.append(command)
    return list(dict.fromkeys(out))


def provenance(rows) -> dict:
    """What the rows say about how they were made.

    Returns a dict with ``task``, ``n_rows``, ``seeds`` (per variant), the sets of
    ``torch_versions``, ``devices`` and ``git_commits``, the first and last
    ``timestamp``, the total ``train_hours`` and ``wall_hours``, and ``config``
    (the configuration of the first row).
    """
    rows, task = _task_rows(rows)
    stamps = sorted(r["timestamp"] for r in rows)
    return {
        "task": task,
        "n_rows": len(rows),
        "seeds": {v: sorted(r["seed"] for r in rows if r["variant"] == v) for v in _variants(rows, task)},
        "torch_versions": sorted({r["torch_version"] for r in rows}),
        "devices": sorted({r["device"] for r in rows}),
        "git_commits": sorted({r["git_commit"] for r in rows}),
        "first_timestamp": stamps[0],
        "last_timestamp": stamps[-1],
        "train_hours": sum(r["train_seconds"] for r in rows) / 3600,
        "wall_hours": sum(r["wall_seconds"] for r in rows) / 3600,
        "config": dict(rows[0]["config"]),
    }


def config_differences(config: dict, reference: dict = NANOGPT_CPU) -> dict:
    """Fields where ``config`` differs from ``reference``: ``{field: (config value, reference value)}``.

    A field of ``reference`` missing from ``config`` counts as a difference (value ``None``).
    """
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict of configuration fields; got {type(config).__name__}")
    out = {}
    for name, ref in reference.items():
        value = config.get(name)
        same = value is not None and (value == ref or (isinstance(value, float) and isinstance(ref, float)
                                                       and math.isclose(value, ref, rel_tol=1e-12)))
        if not same:
            out[name] = (value, ref)
    return out


# ------------------------------------------------------------------------------------------------------- curves

def seed_band(rows, variant: str, metric: str = "val_loss", band: str = "sd"):
    """One arm's curves over seeds, their mean and a band around it.

    Parameters
    ----------
    rows : list of results rows (one task)
    variant : str
        The arm (it must have rows).
    metric : str
        A curve column other than ``iter`` (``val_loss``, ``train_loss``; ``val_acc`` for the ViT).
    band : {"sd", "minmax"}
        ``sd``: mean -+ sample standard deviation over seeds (ddof = 1; zero width with one seed);
        ``minmax``: the smallest and largest seed at each evaluation point.

    Returns
    -------
    iters : (m,) array, mean, lower, upper : (m,) arrays, curves : (n_seeds, m) array (rows in seed order)
    """
    rows, task = _task_rows(rows)
    variant = check_choice(variant, "variant", _variants(rows, task))
    columns = rows[0]["curve_columns"]
    metric = check_choice(metric, "metric", [c for c in columns if c != "iter"])
    band = check_choice(band, "band", BANDS)
    arm = sorted((r for r in rows if r["variant"] == variant), key=lambda r: r["seed"])
    curves = [np.asarray(r["curve"], dtype=float) for r in arm]
    iters = curves[0][:, 0]
    for r, c in zip(arm, curves):
        if c.shape[0] != iters.shape[0] or not np.array_equal(c[:, 0], iters):
            raise ValueError(f"rows of variant {variant!r} must share their evaluation iterations; "
                             f"seed {r['seed']} differs from seed {arm[0]['seed']}")
    values = np.stack([c[:, columns.index(metric)] for c in curves])  # (n_seeds, m)
    mean = values.mean(axis=0)
    if band == "sd":
        sd = values.std(axis=0, ddof=1) if len(values) > 1 else np.zeros_like(mean)
        lower, upper = mean - sd, mean + sd
    else:
        lower, upper = values.min(axis=0), values.max(axis=0)
    return iters, mean, lower, upper, values


def curves_figure(rows, metric: str = "val_loss", *, band: str = "sd", zoom_after=None, reference=None,
                  reference_label: str = "reference", variants=None, title=None):
    """Validation curves of every arm: the mean over seeds as a line and a shaded seed band.

    Parameters
    ----------
    rows : list of results rows (one task)
    metric, band : see :func:`seed_band`
    zoom_after : number, optional
        Add a second panel showing only evaluation points at iterations >= ``zoom_after``,
        with the y-axis fitted to them (the arms differ little at the end of training).
    reference : number, optional
        Draw a dashed horizontal line at this value (e.g. nanoGPT's published 1.88).
    reference_label : str
        Legend text of the reference line.
    variants : list of str, optional
        The arms to draw (default: every arm in ``rows``).
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib Figure. In each panel the k-th line is the mean of the k-th arm and the
    k-th ``PolyCollection`` its band.
    """
    rows, task = _task_rows(rows)
    band = check_choice(band, "band", BANDS)
    present = _variants(rows, task)
    if variants is None:
        variants = present
    else:
        variants = [check_choice(v, "variants", present) for v in variants]
        if not variants:
            raise ValueError("variants must name at least one arm present in rows")
    if reference is not None:
        reference = check_scalar(reference, "reference")
    data = {v: seed_band(rows, v, metric, band) for v in variants}
    max_iter = max(float(d[0][-1]) for d in data.values())
    if zoom_after is not None:
        zoom_after = check_scalar(zoom_after, "zoom_after", low=0, high=max_iter)
    n_panels = 1 if zoom_after is None else 2
    fig, axes = plt.subplots(1, n_panels, figsize=(5.2 * n_panels, 3.6), squeeze=False)
    axes = axes[0]
    band_text = "mean ± sd over seeds" if band == "sd" else "mean, band from lowest to highest seed"
    for k, ax in enumerate(axes):
        zoomed = k == 1
        for v, (iters, mean, lower, upper, values) in data.items():
            keep = iters >= zoom_after if zoomed else np.ones_like(iters, dtype=bool)
            colour = VARIANT_COLOURS[v]
            ax.plot(iters[keep], mean[keep], color=colour, lw=1.8, marker="o" if keep.sum() < 15 else None,
                    ms=3, label=f"{v}: {OPERATOR_MATH[v]} (n = {len(values)})")
            ax.fill_between(iters[keep], lower[keep], upper[keep], color=colour, alpha=0.2, linewidth=0)
        if reference is not None:
            ax.axhline(reference, color="0.3", ls="--", lw=1, label=reference_label)
        if zoomed:
            lo = min(float(d[2][d[0] >= zoom_after].min()) for d in data.values())
            hi = max(float(d[3][d[0] >= zoom_after].max()) for d in data.values())
            pad = 0.08 * (hi - lo) if hi > lo else 0.01 * max(abs(hi), 1.0)
            ax.set_xlim(zoom_after, max_iter + 0.02 * max_iter)
            ax.set_ylim(lo - pad, hi + pad)
            ax.set_title(f"zoom: from {'iteration' if task == 'charlm' else 'step'} {zoom_after:g}", fontsize=10)
        else:
            ax.set_title(band_text, fontsize=10)
        ax.set_xlabel("training iteration" if task == "charlm" else "training step (batches)")
        ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small", frameon=False)
    if title is not None:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------ paired numbers

def _quantity(task, quantity):
    allowed = [f"{kind}_{m}" for m in TASK_METRICS[task] for kind in ("final", "best")]
    return check_choice(quantity, "quantity", allowed)


def paired_differences(rows, quantity: str = "final_val_loss", baseline: str = "attention") -> dict:
    """Per arm, the seeds shared with ``baseline`` and the differences ``arm - baseline`` of ``quantity``.

    Returns ``{variant: (seeds, differences)}`` (two 1-D arrays, seeds ascending) for every
    arm other than the baseline. The same pairing as :func:`~probdr_lite.experiments.summarise`.
    """
    rows, task = _task_rows(rows)
    quantity = _quantity(task, quantity)
    present = _variants(rows, task)
    baseline = check_choice(baseline, "baseline", present)
    by = {(r["variant"], r["seed"]): r[quantity] for r in rows}
    out = {}
    for v in present:
        if v == baseline:
            continue
        seeds = sorted(s for (vv, s) in by if vv == v and (baseline, s) in by)
        out[v] = (np.array(seeds, dtype=int),
                  np.array([by[(v, s)] - by[(baseline, s)] for s in seeds], dtype=float))
    return out


def paired_figure(rows, quantities=("final_val_loss",), baseline: str = "attention"):
    """Seed-by-seed differences ``arm - baseline``, one panel per quantity.

    Each arm is a column of points (one per seed, labelled with the seed) with its mean as
    a short bar (a line); the dashed line at 0 is "no difference". The title says which
    direction is better. In each panel the k-th collection holds the k-th arm's points
    (x = column index, y = difference).
    """
    rows, task = _task_rows(rows)
    if isinstance(quantities, str):
        quantities = (quantities,)
    quantities = [_quantity(task, q) for q in quantities]
    if not quantities:
        raise ValueError("quantities must name at least one quantity")
    fig, axes = plt.subplots(1, len(quantities), figsize=(4.6 * len(quantities), 3.6), squeeze=False)
    for ax, q in zip(axes[0], quantities):
        diffs = paired_differences(rows, q, baseline)
        for k, (v, (seeds, d)) in enumerate(diffs.items()):
            x = np.full(len(d), float(k)) + np.linspace(-0.12, 0.12, len(d)) if len(d) > 1 else np.full(len(d), k)
            ax.scatter(x, d, color=VARIANT_COLOURS[v], s=22, zorder=3)
            for xi, di, s in zip(x, d, seeds):
                ax.annotate(str(s), (xi, di), textcoords="offset points", xytext=(4, 0), fontsize=6,
                            va="center", color="0.35")
            if len(d):
                ax.plot([k - 0.25, k + 0.25], [d.mean()] * 2, color=VARIANT_COLOURS[v], lw=2.5)
        ax.axhline(0.0, color="0.3", ls="--", lw=1)
        ax.set_xticks(range(len(diffs)))
        ax.set_xticklabels([OPERATOR_MATH[v] for v in diffs])
        ax.set_xlim(-0.6, len(diffs) - 0.4)
        better = "below 0" if TASK_METRICS[task][q.split("_", 1)[1]] else "above 0"
        ax.set_ylabel(f"{QUANTITY_LABELS[q]}: arm − {baseline}", fontsize=9)
        ax.set_title(f"better than {baseline}: {better}", fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------- tables
# (Table lives in probdr_lite.plotting, shared with the other chapters.)


def _fmt(value, quantity, digits=4):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if quantity.endswith("acc"):
        return f"{100 * value:.2f} %"
    return f"{value:.{digits}f}"


def _fmt_diff(value, quantity, digits=4):
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if quantity.endswith("acc"):
        return f"{100 * value:+.2f} pp"
    return f"{value:+.{digits}f}"


def _fmt_p(p):
    return "n/a" if p is None or (isinstance(p, float) and math.isnan(p)) else f"{p:.3g}"


def _check_summary(summary, task):
    if not (isinstance(summary, dict) and "arms" in summary and "paired" in summary):
        raise ValueError("summary must be the dict returned by probdr_lite.experiments.summarise "
                         "(keys 'arms' and 'paired')")
    task = check_choice(task, "task", tuple(TASK_METRICS))
    if not any(a["task"] == task for a in summary["arms"]):
        raise ValueError(f"summary holds no arms of task {task!r}")
    return task


def arms_table(summary: dict, task: str, digits: int = 4) -> Table:
    """Per arm: number of seeds, mean ± sd over seeds of every final and best metric, throughput."""
    task = _check_summary(summary, task)
    quantities = [f"{kind}_{m}" for m in TASK_METRICS[task] for kind in ("final", "best")]
    header = ["arm", "seeds"] + [QUANTITY_LABELS[q] for q in quantities] + ["throughput"]
    body = []
    for a in summary["arms"]:
        if a["task"] != task:
            continue
        cells = [VARIANT_LABELS[a["variant"]], str(a["n"])]
        cells += [f"{_fmt(a[q + '_mean'], q, digits)} ± {_fmt_diff(a[q + '_sd'], q, digits).lstrip('+')}"
                  for q in quantities]
        cells.append(f"{a['throughput']:,.0f} {a['throughput_unit']}")
        body.append(cells)
    return Table(header, body, caption="mean ± standard deviation over seeds")


def paired_table(summary: dict, task: str, digits: int = 4) -> Table:
    """Per arm and quantity: the paired difference from the baseline, seeds better/worse, both p-values."""
    task = _check_summary(summary, task)
    header = ["arm − baseline", "quantity", "pairs", "mean difference ± sd", "seeds better / worse",
              "paired t-test p", "sign test p"]
    body = []
    for p in summary["paired"]:
        if p["task"] != task:
            continue
        q = p["quantity"]
        body.append([f"{p['variant']} − {p['baseline']}", QUANTITY_LABELS[q], str(p["n"]),
                     f"{_fmt_diff(p['mean_diff'], q, digits)} ± {_fmt_diff(p['sd_diff'], q, digits).lstrip('+')}",
                     f"{p['n_better']} / {p['n_worse']}", _fmt_p(p["t_pvalue"]), _fmt_p(p["sign_pvalue"])])
    return Table(header, body, caption="differences are arm minus baseline, paired by seed")


# ------------------------------------------------------------------------------------------------------ verdict

@dataclass
class Verdict:
    """The outcome of :func:`verdict` for one arm, task and quantity."""

    task: str
    variant: str
    baseline: str
    quantity: str
    outcome: str  # "helps", "hurts" or "no detectable difference"
    n: int
    mean_diff: float
    sd_diff: float
    n_better: int
    n_worse: int
    t_pvalue: float
    sign_pvalue: float
    alpha: float
    max_disagree: int

    def __str__(self) -> str:
        q = self.quantity
        label, base = OPERATOR_TEXT[self.variant], OPERATOR_TEXT[self.baseline]
        if self.outcome == "helps":
            head = f"{label} helps"
        elif self.outcome == "hurts":
            head = f"{label} hurts"
        else:
            head = f"no detectable difference between {label} and {base} at {self.n} seeds"
        return (f"{self.task}, {QUANTITY_LABELS[q]}: {head} "
                f"(mean difference {_fmt_diff(self.mean_diff, q)} ± {_fmt_diff(self.sd_diff, q).lstrip('+')}, "
                f"better on {self.n_better} of {self.n} seeds, worse on {self.n_worse}, "
                f"paired t-test p = {_fmt_p(self.t_pvalue)}, sign test p = {_fmt_p(self.sign_pvalue)})")


def verdict(summary: dict, task: str, variant: str = "diffusion", quantity: str = "final_val_loss", *,
            alpha: float = 0.05, max_disagree: int = 1) -> Verdict:
    """Apply the chapter's decision rule to one paired comparison of ``summarise``'s output.

    The rule: the arm **helps** if its mean paired difference from the baseline is in the better
    direction, the two-sided paired t-test gives p < ``alpha``, and at most ``max_disagree`` of the
    paired seeds go the other way (better counts ``n_better``); it **hurts** under the mirror
    conditions; anything else is **no detectable difference** at this number of seeds. Ties
    (a difference of exactly 0) count as disagreeing.

    Parameters
    ----------
    summary : dict from :func:`probdr_lite.experiments.summarise`
    task : {"charlm", "vit"}
    variant : str
        The arm compared with the baseline (an entry of ``summary["paired"]``).
    quantity : str
        ``final_val_loss``, ``best_val_loss`` (both tasks), ``final_val_acc``, ``best_val_acc`` (vit).
    alpha : float in (0, 1)
    max_disagree : int >= 0
    """
    task = _check_summary(summary, task)
    quantity = _quantity(task, quantity)
    alpha = check_scalar(alpha, "alpha", low=0, high=1, low_inclusive=False, high_inclusive=False)
    max_disagree = check_scalar(max_disagree, "max_disagree", low=0, integer=True)
    matches = [p for p in summary["paired"]
               if p["task"] == task and p["variant"] == variant and p["quantity"] == quantity]
    if not matches:
        arms = sorted({p["variant"] for p in summary["paired"] if p["task"] == task})
        raise ValueError(f"variant must be an arm compared with the baseline in summary for task {task!r} "
                         f"(one of {arms}); got {variant!r}")
    p = matches[0]
    n, d, t_p = p["n"], p["mean_diff"], p["t_pvalue"]
    better_direction = -1.0 if p["lower_is_better"] else 1.0
    significant = n >= 2 and not math.isnan(t_p) and t_p < alpha
    outcome = "no detectable difference"
    if significant and d * better_direction > 0 and n - p["n_better"] <= max_disagree:
        outcome = "helps"
    elif significant and d * better_direction < 0 and n - p["n_worse"] <= max_disagree:
        outcome = "hurts"
    return Verdict(task=task, variant=variant, baseline=p["baseline"], quantity=quantity, outcome=outcome, n=n,
                   mean_diff=d, sd_diff=p["sd_diff"], n_better=p["n_better"], n_worse=p["n_worse"],
                   t_pvalue=t_p, sign_pvalue=p["sign_pvalue"], alpha=alpha, max_disagree=max_disagree)


def seeds_needed(mean_diff: float, sd_diff: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Paired seeds a two-sided test at level ``alpha`` needs to detect ``mean_diff`` with probability ``power``.

    Normal approximation, n = ((z_{1 - alpha/2} + z_{power}) sd_diff / |mean_diff|)^2 rounded up, with
    ``sd_diff`` the standard deviation of the paired differences (a t-test at small n needs a
    seed or two more).
    """
    from scipy import stats

    mean_diff = check_scalar(mean_diff, "mean_diff")
    sd_diff = check_scalar(sd_diff, "sd_diff", low=0, low_inclusive=False)
    alpha = check_scalar(alpha, "alpha", low=0, high=1, low_inclusive=False, high_inclusive=False)
    power = check_scalar(power, "power", low=0, high=1, low_inclusive=False, high_inclusive=False)
    if mean_diff == 0:
        raise ValueError("mean_diff must be non-zero: no number of seeds detects a difference of 0")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return max(2, math.ceil((z * sd_diff / abs(mean_diff)) ** 2))


def verdict_text(v: Verdict, paper_claim: str | None = None) -> str:
    """One paragraph (Markdown) saying what a :class:`Verdict` means, and for the paper's claim if given.

    ``paper_claim`` describes the paper's single-run result in a few words, e.g.
    "a lower validation loss with A − I"; ``None`` for an arm the paper did not try.
    """
    if not isinstance(v, Verdict):
        raise ValueError(f"v must be a Verdict from verdict(); got {type(v).__name__}")
    if paper_claim is not None and (not isinstance(paper_claim, str) or not paper_claim.strip()):
        raise ValueError("paper_claim must be None or a non-empty description of the paper's result")
    q, op, base = v.quantity, OPERATOR_TEXT[v.variant], OPERATOR_TEXT[v.baseline]
    numbers = (f"mean paired difference in {QUANTITY_LABELS[q]} {_fmt_diff(v.mean_diff, q)} "
               f"(sd {_fmt_diff(v.sd_diff, q).lstrip('+')}), paired t-test p = {_fmt_p(v.t_pvalue)}")
    task = {"charlm": "character model", "vit": "vision transformer"}[v.task]
    if v.outcome == "helps":
        return (f"**{task.capitalize()}: {op} helps.** It beat {base} on {v.n_better} of {v.n} paired seeds "
                f"({numbers})." + ("" if paper_claim is None else
                                   f" This is the direction of the paper's single run ({paper_claim}), now "
                                   f"with a measured spread."))
    if v.outcome == "hurts":
        return (f"**{task.capitalize()}: {op} hurts.** It did worse than {base} on {v.n_worse} of {v.n} paired "
                f"seeds ({numbers})." + ("" if paper_claim is None else
                                         f" The paper's single run reported the opposite ({paper_claim}); with "
                                         f"this recipe and at this scale the change costs more than "
                                         f"seed-to-seed noise can explain."))
    more = ""
    if v.mean_diff != 0 and v.sd_diff > 0:
        more = (f" A true difference of this size would need about {seeds_needed(v.mean_diff, v.sd_diff)} "
                f"paired seeds to be detected four times in five.")
    paper = ("" if paper_claim is None else
             f" The paper's single run ({paper_claim}) is neither confirmed nor contradicted.")
    return (f"**{task.capitalize()}: no detectable difference between {op} and {base} at {v.n} seeds.** "
            f"{op} was better on {v.n_better} seeds and worse on {v.n_worse} ({numbers}).{paper}{more}")


# -------------------------------------------------------------------------------------------------------- gates

def gate_values(rows):
    """The learned gates g of the gated arm: (seeds, array of shape (n_seeds, n_layer, n_head)).

    Returns ``None`` when no row of the gated arm records its gates.
    """
    rows, _ = _task_rows(rows)
    gated = sorted((r for r in rows if r["variant"] == "gated" and r.get("gates")), key=lambda r: r["seed"])
    if not gated:
        return None
    shapes = {np.shape(r["gates"]) for r in gated}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"rows' 'gates' must all be lists of n_layer lists of n_head numbers; got shapes {shapes}")
    return np.array([r["seed"] for r in gated]), np.array([r["gates"] for r in gated], dtype=float)


def gates_figure(rows):
    """The learned g of every head, layer by layer: one dot per seed, the mean over seeds as a bar.

    Dashed lines mark g = 0 (plain attention A) and g = 1 (the paper's A − I). The collection
    of layer l, head h holds the points (x, g) of every seed for that head, in the order
    layer-major, head-minor.
    """
    got = gate_values(rows)
    if got is None:
        raise ValueError("rows must contain rows of the 'gated' arm that record their 'gates'")
    seeds, g = got  # (n_seeds, n_layer, n_head)
    _, n_layer, n_head = g.shape
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * n_layer + 2), 3.4))
    width = 0.7
    offsets = np.linspace(-width / 2, width / 2, n_head) if n_head > 1 else np.zeros(1)
    for layer in range(n_layer):
        for h in range(n_head):
            x = np.full(len(seeds), layer + offsets[h])
            ax.scatter(x, g[:, layer, h], s=14, color=f"C{h % 10}", alpha=0.8, zorder=3,
                       label=f"head {h}" if layer == 0 else None)
            ax.plot([x[0] - 0.06, x[0] + 0.06], [g[:, layer, h].mean()] * 2, color="k", lw=1.5, zorder=4)
    ax.axhline(0.0, color="C0", ls="--", lw=1)
    ax.axhline(1.0, color="C3", ls="--", lw=1)
    ax.text(-0.55, 0.0, "g = 0: $A$", va="bottom", ha="left", fontsize=8, color="C0")
    ax.text(-0.55, 1.0, "g = 1: $A - I$", va="bottom", ha="left", fontsize=8, color="C3")
    ax.set_xticks(range(n_layer))
    ax.set_xticklabels([f"layer {i}" for i in range(n_layer)])
    ax.set_xlim(-0.6, n_layer - 0.4)
    ax.set_ylabel("learned gate g")
    ax.set_title(f"gated arm A − gI after training ({len(seeds)} seeds; bar: mean)", fontsize=10)
    ax.legend(fontsize="x-small", frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def gates_text(rows) -> str:
    """One sentence on where the learned gates ended, relative to g = 0 (A) and g = 1 (A − I)."""
    got = gate_values(rows)
    if got is None:
        return "The rows of the gated arm do not record their gates."
    seeds, g = got
    far = int((g > 0.5).sum())
    where = ("every head stayed closer to plain attention (g = 0) than to A − I (g = 1)" if far == 0 else
             f"{far} of {g.size} heads moved past g = 0.5, towards A − I (g = 1)")
    return (f"Over {len(seeds)} seeds, {g.shape[1]} layers and {g.shape[2]} heads the learned g ended between "
            f"{g.min():.2f} and {g.max():.2f} (mean {g.mean():.2f}): {where}.")
