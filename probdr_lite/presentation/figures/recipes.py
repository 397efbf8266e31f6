"""The trained-transformers chapter's recipe grid in tables and pictures, and the facts of its sentences: the table,
the dot plot, the verdict, what is pending.

The numbers come from :mod:`probdr_lite.experiments.stats` (:func:`~probdr_lite.experiments.stats.recipe_table`,
:func:`~probdr_lite.experiments.stats.recipe_verdict`, :func:`~probdr_lite.experiments.stats.nanogpt_gap`) and
:mod:`probdr_lite.experiments.sweep` (:func:`~probdr_lite.experiments.sweep.grid_status`); this module only
formats them. The sentences (captions, alt texts, paragraphs) are the chapter's templates, filled from the facts
returned here.

- :func:`recipe_label`           a recipe's factors in a few words;
- :func:`recipe_results_table`   one row per (recipe, arm): baseline, paired difference, 95 % interval, p, Holm p;
- :func:`table_facts`            the facts of its caption (the model, the Holm family, which way is better);
- :func:`verdict_figure`         the verdict: every model's paired differences, intervals and corrected readings;
- :func:`verdict_facts`          the facts of a model's verdict paragraph;
- :func:`grids_table`            which recipe cells of each grid are complete or not run, and the command;
- :func:`provenance_table`       how the committed rows were made, one row per model;
- :func:`nanogpt_facts`          our baseline against nanoGPT's published loss, 20 batches against 200;
- :func:`plateau_figure`         plateau-rule ViT runs of one arm, with each seed's best epoch and its stop;
- :func:`plateau_facts`          what that figure draws (whether it has the learning-rate panel);
- :func:`plateau_table`          the same runs, seed by seed: best epoch, stop and final accuracy;
- :func:`plateau_cell_facts`     a plateau cell's means where the rule fired, at the best checkpoint, at the end;
- :func:`readings_table`         the same runs read where the plateau rule fired, at the best checkpoint, at the end;
- :func:`readings_facts`         what the reading changes (the sign, whether the interval excludes 0);
- :func:`baseline_facts`         the best baseline, the recipes that reach a practitioner's accuracy, A − I there;
- :func:`scale_table`            the scale the verdicts hold for (models, data, budgets), read from the rows;
- :func:`scale_facts`            the same numbers of one model, which fill the table's templates;
- :func:`compute_facts`          the number of committed runs and their CPU hours;
- :func:`intervention_table` / :func:`intervention_table_facts` / :func:`intervention_facts`  the W_V, W_O
  intervention: its table, its caption's facts, the facts of its sentence.
"""

from __future__ import annotations

import json
import math
import statistics

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_choice, check_length, check_result, check_scalar
from probdr_lite.experiments.stats import ArmVerdict, RecipeTable
from probdr_lite.presentation.plotting import Table

from ..prose import fill, pct, plural, pvalue
from .training import ARM_STYLE, QUANTITY_LABELS, TASK_NAMES, quantity_difference, quantity_level

__all__ = ["recipe_label", "table_facts", "recipe_results_table", "verdict_figure", "verdict_facts", "grids_table",
           "provenance_table", "nanogpt_facts", "plateau_figure", "plateau_facts", "plateau_table",
           "plateau_cell_facts", "readings_table", "readings_facts", "baseline_facts",
           "scale_facts", "scale_table", "difference_text", "compute_facts", "intervention_table", "intervention_table_facts",
           "intervention_facts"]

FACTOR_WORDS = {"init": "init", "lr": "peak lr", "schedule": "schedule", "epochs": "epochs",
                "patience": "plateau rule", "decay_epochs": "decay after the plateau", "max_iters": "iterations"}
SCHEDULE_WORDS = {"cosine": "warm-up + cosine", "onecycle": "one-cycle"}


def recipe_label(recipe: dict) -> str:
    """A recipe's factors in a few words, e.g. ``"gpt2 init, lr 3e-3, warm-up + cosine, 10 epochs"``."""
    if not isinstance(recipe, dict) or "init" not in recipe or "lr" not in recipe:
        raise ValueError(f"recipe must hold 'init' and 'lr'; got {recipe!r}")
    parts = [f"{recipe['init']} init", f"lr {recipe['lr']:.0e}".replace("e-0", "e-")]
    if "schedule" in recipe:
        parts.append(SCHEDULE_WORDS.get(recipe["schedule"], str(recipe["schedule"])))
    if recipe.get("patience"):
        decay = recipe.get("decay_epochs") or 0
        end = f", then {decay} epochs of decay" if decay else ", stop"
        parts.append(f"plateau (≤ {recipe['epochs']} epochs, patience {recipe['patience']}{end})")
    elif "epochs" in recipe:
        parts.append(f"{recipe['epochs']} epochs")
    if "max_iters" in recipe:
        parts.append(f"{recipe['max_iters']:,} iterations")
    return ", ".join(parts)


def _difference_units(quantity):
    """(factor, unit) to draw a quantity's differences: accuracies in percentage points."""
    return (100.0, " pp") if quantity.endswith("acc") else (1.0, "")


def _check_table(table, name="table"):
    from probdr_lite.experiments.stats import recipe_table

    return check_result(table, name, recipe_table, kind=RecipeTable, nonempty=False)


def table_facts(table: RecipeTable) -> dict:
    """The facts of a recipe table's caption: ``model``; ``n_own`` tests of this table in a Holm family of
    ``n_tests`` (``joint``: the family holds the other model's tests too); ``lower_better`` (a loss, not an
    accuracy)."""
    table = _check_table(table)
    own = table.extra.get("tests_in_table", table.n_tests)
    return {"model": TASK_NAMES[table.task], "n_own": own, "n_tests": table.n_tests, "joint": own != table.n_tests,
            "lower_better": not table.quantity.endswith("acc")}


def recipe_results_table(table: RecipeTable, caption=None) -> Table:
    """One row per (recipe, arm): attention's mean, the paired difference with its interval, p, Holm p, reading;
    the caption is the chapter's (its facts: :func:`table_facts`)."""
    table = _check_table(table)
    q = table.quantity
    level = f"{100 * (1 - table.alpha):g} %"
    header = ["recipe", "arm", "pairs", f"attention ({QUANTITY_LABELS[q]})", "arm − attention",
              f"{level} interval", "better / worse", "p", f"Holm p ({table.n_tests} tests)", "reading"]
    body = []
    for e in table.entries:
        mean_base = quantity_level(e["baseline_mean"], q)
        body.append([recipe_label(e["recipe"]), ARM_STYLE[e["arm"]]["text"], str(e["n"]), mean_base,
                     quantity_difference(e["mean_diff"], q),
                     f"[{quantity_difference(e['ci_low'], q)}, {quantity_difference(e['ci_high'], q)}]",
                     f"{e['n_better']} / {e['n_worse']}", pvalue(e["t_pvalue"]), pvalue(e["holm_pvalue"]),
                     e["outcome"] or "pending"])
    return Table(header, body, caption=caption)


OUTCOME_MARKS = {"helps": ("o", True), "hurts": ("X", True), "cannot tell": ("o", False)}


#: the chapter's templates :func:`verdict_figure` needs in its ``text``: each panel's title, and its x-axis label for a
#: quantity where lower is better (a loss) and where higher is (an accuracy, in percentage points)
VERDICT_TEXT = ("title", "lower", "higher")


def verdict_figure(tables, text: dict):
    """The chapter's verdict in one figure: one panel per model, one row per (recipe, arm) of its table.

    ``tables`` maps task to :class:`~probdr_lite.experiments.stats.RecipeTable` (one Holm family, as
    :func:`~probdr_lite.experiments.stats.joint_holm` makes it). Each row shows the mean paired difference (arm −
    attention) with its interval, coloured by arm, filled when the Holm-adjusted test says "helps" (a dot) or
    "hurts" (a cross), hollow for "cannot tell"; the reading is written at the row's right. Rows are grouped by
    recipe under the recipe's label. The k-th errorbar container of a panel belongs to the k-th tested entry of its
    table (entries without a test are not drawn). ``text`` holds the chapter's templates (:data:`VERDICT_TEXT`),
    filled with the panel's :func:`table_facts` and ``level`` (of the interval, in %); the figure is widened until
    every recipe's label fits its panel. The chapter describes the figure (its alt text).
    """
    if not isinstance(tables, dict) or not tables:
        raise ValueError("tables must map tasks to tables")
    missing = [k for k in VERDICT_TEXT if k not in (text or {})]
    if missing:
        raise ValueError(f"text must hold {missing}")
    tables = {task: _check_table(t, f"tables[{task!r}]") for task, t in tables.items()}
    tested = {task: [e for e in t.entries if e["outcome"] is not None] for task, t in tables.items()}
    if not any(tested.values()):
        raise ValueError("tables must hold a tested entry")
    sizes = {task: len(es) + len({recipe_label(e["recipe"]) for e in es}) for task, es in tested.items()}
    fig, axes = plt.subplots(len(tables), 1, squeeze=False,
                             figsize=(7.5, 0.28 * sum(sizes.values()) + 1.4 * len(tables)),
                             gridspec_kw={"height_ratios": [max(n, 1) + 2 for n in sizes.values()]})
    headers = []
    for ax, (task, table) in zip(axes[:, 0], tables.items()):
        q = table.quantity
        k, _ = _difference_units(q)
        n_rows = sizes[task]
        y, ticks, labels, previous = n_rows - 1, [], [], None
        for e in tested[task]:
            recipe = recipe_label(e["recipe"])
            if recipe != previous:  # a header row for the recipe
                headers.append(ax.text(0.01, y, recipe, transform=ax.get_yaxis_transform(), fontsize=8,
                                       va="center", fontweight="bold"))
                ax.axhline(y + 0.5, color="0.85", lw=0.8)
                y -= 1
                previous = recipe
            style = ARM_STYLE[e["arm"]]
            x, lo, hi = k * e["mean_diff"], k * e["ci_low"], k * e["ci_high"]
            err = None if math.isnan(lo) else [[x - lo], [hi - x]]
            marker, filled = OUTCOME_MARKS[e["outcome"]]
            ax.errorbar([x], [y], xerr=err, fmt=marker, color=style["colour"], ms=6, capsize=2,
                        mfc=style["colour"] if filled else "white")
            ax.text(1.01, y, e["outcome"], transform=ax.get_yaxis_transform(), fontsize=8, va="center",
                    fontweight="bold" if filled else "normal")
            ticks.append(y)
            labels.append(style["text"])
            y -= 1
        ax.axvline(0.0, color="0.3", ls="--", lw=1)
        ax.set_yticks(ticks)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_ylim(-0.7, n_rows - 0.3)
        facts = {**table_facts(table), "quantity": QUANTITY_LABELS[q], "level": 100 * (1 - table.alpha)}
        ax.set_xlabel(fill(text["lower" if facts["lower_better"] else "higher"], facts), fontsize=9)
        ax.set_title(fill(text["title"], facts), fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    _fit_width(fig, headers)
    return fig


def _fit_width(fig, texts, pad: float = 0.1):
    """Widen ``fig`` (and lay it out again) until each text ends inside its axes, ``pad`` inches before the edge."""
    for _ in range(3):
        renderer = fig.canvas.get_renderer()
        over = max((t.get_window_extent(renderer).x1 - t.axes.get_window_extent(renderer).x1 for t in texts),
                   default=0.0) / fig.dpi + pad
        if over <= 0:
            return
        fig.set_size_inches(fig.get_figwidth() + over, fig.get_figheight())
        fig.tight_layout()


def verdict_facts(table: RecipeTable, verdicts: dict, expected_arms=None) -> dict:
    """The facts of one model's verdict paragraph, from ``table`` and
    :func:`~probdr_lite.experiments.stats.recipe_verdict`; the sentence is the chapter's.

    ``model``, ``quantity``; ``n_own`` tests of this table in a family of ``n_tests`` (``joint``: the family holds
    the other model's tests too), at level ``alpha``, over ``n_recipes`` tested recipes (``one_recipe``). Lists of
    arms (as maths), each with its count of recipes: ``helps`` and ``hurts`` (where the corrected test says so),
    ``depends`` (the sign depends on the recipe, with the factor that separates the recipes, or none),
    ``never_told`` (cannot be told from attention in any tested recipe), ``mixed_means`` (no surviving test
    confirms a sign change, but the means point both ways: how many each way, and the factor that separates them);
    ``n_nominal`` tests whose unadjusted p is below ``alpha`` and whose Holm p is not; ``not_run`` (arms of
    ``expected_arms`` without runs); ``n_pending`` (recipe, arm) cells without two paired seeds. Each list has a
    boolean ``any_*``.
    """
    from probdr_lite.experiments.stats import recipe_verdict

    table = _check_table(table)
    check_result(verdicts, "verdicts", recipe_verdict, nonempty=False)
    for arm, v in verdicts.items():
        check_result(v, f"verdicts[{arm!r}]", recipe_verdict, kind=ArmVerdict, nonempty=False)
    f = {**table_facts(table), "quantity": QUANTITY_LABELS[table.quantity], "alpha": table.alpha,
         "n_recipes": len({recipe_label(e["recipe"]) for e in table.entries if e["outcome"] is not None}),
         "helps": [], "hurts": [], "depends": [], "never_told": [], "mixed_means": []}
    f["one_recipe"] = f["n_recipes"] == 1
    for arm, v in verdicts.items():
        op = ARM_STYLE[arm]["tex"]
        tested = len(v.helps) + len(v.hurts) + len(v.cannot_tell)
        if not tested:
            continue
        if v.helps:
            f["helps"].append(f"{op} ({len(v.helps)} of {tested})")
        if v.hurts:
            f["hurts"].append(f"{op} ({len(v.hurts)} of {tested})")
        if v.sign_depends_on_recipe:
            f["depends"].append(f"{op} ({', '.join(FACTOR_WORDS[x] for x in v.deciding_factors) or 'no single factor'})")
        if len(v.cannot_tell) == tested:
            f["never_told"].append(f"{op} ({tested})")
        signs = v.mean_signs
        if tested > 1 and not v.sign_depends_on_recipe and signs["better"] and signs["worse"]:
            factor = ", ".join(FACTOR_WORDS[x] for x in v.mean_sign_factors) or "no single factor"
            f["mixed_means"].append(f"{op} ({signs['better']} better, {signs['worse']} worse; {factor})")
    f["n_nominal"] = sum(1 for e in table.entries if e["outcome"] is not None
                         and e["t_pvalue"] < table.alpha and e["holm_pvalue"] >= table.alpha)
    f["not_run"] = [ARM_STYLE[a]["tex"] for a in expected_arms or () if a not in verdicts and a != table.baseline]
    f["n_pending"] = sum(1 for e in table.entries if e["outcome"] is None)
    for key in ("helps", "hurts", "depends", "never_told", "mixed_means", "not_run"):
        f["any_" + key] = bool(f[key])
    f["any_nominal"], f["any_pending"] = f["n_nominal"] > 0, f["n_pending"] > 0
    return f


#: the columns of :func:`grids_table` (the chapter names them, in its ``header``)
GRIDS_COLUMNS = ("model", "grid", "complete", "partial", "empty", "command")


def grids_table(directory=None, grids=None, *, header, command: str, caption=None) -> Table:
    """Which recipe cells of each grid are complete, partial or not run, and the command that fills them in.

    ``grids`` maps a task to the name of a grid or a list of names (default: the full factorial of each task).
    The ``header`` (one name per column of :data:`GRIDS_COLUMNS`), the ``command`` (a template filled with
    ``grid``) and the caption are the chapter's.
    """
    check_length(header, "header", len(GRIDS_COLUMNS), "column")
    from probdr_lite.experiments.sweep import get_grid, grid_status

    grids = {"charlm": "charlm", "vit": "vit"} if grids is None else grids
    body = []
    for task, grid_names in grids.items():
        for grid_name in [grid_names] if isinstance(grid_names, str) else grid_names:
            status = grid_status(get_grid(grid_name), directory)
            complete = [s for s in status if s["complete"]]
            partial = [s for s in status if 0 < s["n_done"] < s["n_runs"]]
            empty = [s for s in status if s["n_done"] == 0]
            short = []
            for s in partial:
                missing = [f"{ARM_STYLE[a]['tex']} ({plural(len(seeds), 'seed')})"
                           for a, seeds in s["seeds_done"].items()
                           if len(seeds) < s["n_runs"] // len(s["seeds_done"])]
                short.append(f"{recipe_label(s['recipe'])}: {s['n_done']} of {s['n_runs']} runs; {', '.join(missing)}")
            body.append([TASK_NAMES[task], grid_name, f"{len(complete)} of {len(status)}",
                         "; ".join(short) or "none", "; ".join(recipe_label(s["recipe"]) for s in empty) or "none",
                         fill(command, grid=grid_name) if partial or empty else "—"])
    return Table(header, body, caption=caption)


#: the columns of :func:`provenance_table` (the chapter names them, in its ``header``)
PROVENANCE_COLUMNS = ("model", "runs", "recipes", "seeds", "torch", "commits", "from", "to", "train_hours",
                      "wall_hours")


def provenance_table(infos: list, header, caption=None) -> Table:
    """How the rows summarised by :func:`probdr_lite.experiments.files.rows_provenance` were made, one row per task;
    the ``header`` (one name per column of :data:`PROVENANCE_COLUMNS`) and the caption are the chapter's."""
    from probdr_lite.experiments.files import rows_provenance

    check_length(header, "header", len(PROVENANCE_COLUMNS), "column")
    body = []
    for k, info in enumerate(infos):
        check_result(info, f"infos[{k}]", rows_provenance, keys=("n_rows",))
        body.append([TASK_NAMES[info["task"]], str(info["n_rows"]), str(len(info["recipes"])),
                     "; ".join(f"{ARM_STYLE[a]['tex']}: {', '.join(map(str, s))}" for a, s in info["seeds"].items()),
                     f"torch {', '.join(info['torch_versions'])} on {'; '.join(info['devices'])}",
                     ", ".join(c[:10] for c in info["git_commits"]), info["first_timestamp"], info["last_timestamp"],
                     f"{info['train_hours']:.1f}", f"{info['wall_hours']:.1f}"])
    return Table(header, body, caption=caption)


def nanogpt_facts(charlm_rows, spread, published: float = 1.88) -> dict:
    """The facts of the nanoGPT comparison for the base recipe's attention arm, from the rows and the measured batch
    spread: ``gap`` (our mean minus ``published``), ``gap_in_seed_sd``, ``n_seeds``; ``judged`` (the spread is
    committed) and then :func:`~probdr_lite.experiments.stats.nanogpt_gap`'s numbers, its ``within`` (the gap is
    within what one nanoGPT-style run produces), and the spread's ``n_batches`` and ``spread_seed``."""
    from probdr_lite.experiments.stats import nanogpt_gap

    base = [r for r in charlm_rows if r["variant"] == "attention"]
    if len({json.dumps(r["config"], sort_keys=True) for r in base}) != 1:
        raise ValueError("charlm_rows must hold one attention recipe")
    vals = [r["final_val_loss"] for r in base]
    mean, sd = float(sum(vals) / len(vals)), float(statistics.stdev(vals)) if len(vals) > 1 else float("nan")
    facts = {"gap": mean - published, "gap_in_seed_sd": (mean - published) / sd, "seed_sd": sd,
             "n_seeds": len(vals), "published": published, "judged": spread is not None}
    if spread is None:
        return facts
    g = nanogpt_gap(mean, sd, len(vals), spread["batch_sd"], our_eval_iters=base[0]["config"]["eval_iters"],
                    published=published)
    return {**facts, **g, "within": bool(g["within"]), "n_batches": spread["n_batches"],
            "spread_seed": spread["seed"]}


def _plateau_rows(rows) -> list:
    rows = [rows] if isinstance(rows, dict) else list(rows)
    if not rows or not all(isinstance(row, dict) and row.get("task") == "vit" and row.get("config", {}).get("patience")
                           for row in rows):
        raise ValueError("rows must be plateau-rule ViT rows")
    if len({r["variant"] for r in rows}) != 1:
        raise ValueError("rows must be of one arm")
    return sorted(rows, key=lambda r: r["seed"])


#: the chapter's templates :func:`plateau_figure` needs in its ``labels``: each seed's curve (``stopped``), its best
#: checkpoint (``best``) and where the rule fired (``fired``), filled with ``seed``, ``epochs_run``, ``best`` and
#: ``fired``; and the learning-rate panel's y-axis label (``lr``)
PLATEAU_LABELS = ("stopped", "best", "fired", "lr")


def plateau_figure(rows, labels: dict, title=None):
    """ViT runs of one arm with the plateau rule (one row or several seeds): validation loss and accuracy per
    epoch, and the learning rate when the rows record it. Each seed's lowest validation loss (its best checkpoint)
    is a dotted line, the epoch where the rule fired a dashed one (when the run went on to decay), and its end the
    end of its curve. The legend's ``labels`` (:data:`PLATEAU_LABELS`) and the title are the chapter's (its facts:
    :func:`plateau_facts`). The chapter describes the figure."""
    rows = _plateau_rows(rows)
    missing = [k for k in PLATEAU_LABELS if k not in (labels or {})]
    if missing:
        raise ValueError(f"labels must hold {missing}")
    with_lr = plateau_facts(rows)["with_lr"]
    fig, axes = plt.subplots(1, 3 if with_lr else 2, figsize=(10.2 if with_lr else 9.5, 3.3))
    colour = ARM_STYLE[rows[0]["variant"]]["colour"]
    styles = ("-", "--", "-.", ":")
    for k, row in enumerate(rows):
        curve = np.asarray(row["curve"], dtype=float)
        epochs = np.arange(len(curve))
        best = int(row.get("checkpoint_index", np.argmin(curve[:, 2])))
        fired = row.get("plateau_index")
        decayed = fired is not None and fired < len(curve) - 1
        facts = {"seed": row["seed"], "epochs_run": row["epochs_run"], "best": best, "fired": fired}
        for ax, j in ((axes[0], 2), (axes[1], 3)):
            ax.plot(epochs, curve[:, j], color=colour, ls=styles[k % len(styles)], marker="o", ms=2,
                    label=fill(labels["stopped"], facts))
            ax.axvline(best, color="0.4", ls=":", lw=1, label=fill(labels["best"], facts))
            if decayed:
                ax.axvline(fired, color="0.6", ls="--", lw=1, label=fill(labels["fired"], facts))
        if with_lr:
            axes[2].plot(epochs[1:], row["mechanism"]["lr"], color=colour, ls=styles[k % len(styles)],
                         label=f"seed {row['seed']}")
    for ax, label in ((axes[0], "validation loss"), (axes[1], "validation accuracy")):
        ax.set_xlabel("epoch")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    if with_lr:
        axes[2].set_yscale("log")
        axes[2].set_xlabel("epoch")
        axes[2].set_ylabel(labels["lr"])
        axes[2].grid(alpha=0.3)
    if min(r["curve"][-1][3] for r in rows) > 0.9:
        axes[1].set_ylim(0.9, 1.0)
    axes[0].legend(fontsize="xx-small", frameon=False)
    if title is not None:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def plateau_facts(rows) -> dict:
    """What :func:`plateau_figure` draws for these rows: ``with_lr`` (every row records its learning rate, so the
    figure has the learning-rate panel), ``n_seeds`` (``one_seed``; the first is ``seed``), the ``arm``'s label, and
    the rule: ``init``, at most ``epochs``, ``patience``, ``decay`` epochs after it fires (``decays``: more than 0)."""
    rows = _plateau_rows(rows)
    config = rows[0]["config"]
    decay = config.get("decay_epochs") or 0
    return {"with_lr": all("mechanism" in r for r in rows), "n_seeds": len(rows), "one_seed": len(rows) == 1,
            "seed": rows[0]["seed"], "arm": ARM_STYLE[rows[0]["variant"]]["label"], "init": config.get("init"),
            "epochs": config["epochs"], "patience": config["patience"], "decay": decay, "decays": decay > 0}


def _lr_share_at_end(row):
    """The learning rate of a ViT row's last step as a fraction of its peak (None if the config cannot say)."""
    from probdr_lite.experiments import ViTConfig

    try:
        config = ViTConfig.from_dict(row["config"])
    except (TypeError, ValueError, KeyError):
        return None
    steps = row["curve"][-1][0]
    if not isinstance(steps, (int, float)) or steps < 1 or row["curve"][1][0] <= 0:
        return None
    per_epoch = row["curve"][1][0]
    return config.lr_at(int(steps) - 1, int(per_epoch) * config.epochs) / config.lr


#: the columns of :func:`plateau_table` (the chapter names them, in its ``header``)
PLATEAU_COLUMNS = ("cell", "seed", "best", "fired", "last", "lr_left", "final")


def _decayed(row) -> bool:
    """Whether the plateau rule fired before a row's last epoch (a decay followed)."""
    fired = row.get("plateau_index")
    return fired is not None and fired < len(row["curve"]) - 1


def plateau_cell_facts(rows) -> dict:
    """The facts of a plateau cell's summary (one arm, its seeds): ``n_seeds``; ``n_decayed`` seeds on which the
    rule fired before the end (``any_decayed``) and, over those, the mean accuracy in % where it fired (``stop``),
    at the best checkpoint (``ckpt``) and at the end (``end``); NaN without such a seed."""
    rows = _plateau_rows(rows)
    decayed = [r for r in rows if _decayed(r)]

    def mean(key):
        return statistics.mean(100 * r[key] for r in decayed) if decayed else float("nan")

    return {"n_seeds": len(rows), "n_decayed": len(decayed), "any_decayed": bool(decayed),
            "stop": mean("plateau_val_acc"), "ckpt": mean("checkpoint_val_acc"), "end": mean("final_val_acc")}


def plateau_table(cells: dict, fired: str, header, caption=None) -> Table:
    """The plateau-rule runs of one arm per cell, one row per seed: the lowest validation loss and its epoch, where
    the rule fired (with the accuracy there) when a decay followed, the last epoch, the learning rate left at the
    end of a run stopped without the decay, and the final accuracy; then per cell the mean final accuracy (sd) and,
    over the seeds that decayed, the mean accuracy where the rule fired, at the best checkpoint and at the end: the
    chapter's template ``fired`` filled with the cell's :func:`plateau_cell_facts` ("—" where no seed decayed).
    ``cells`` maps a cell's label to its rows (one arm); the ``header`` (one name per column of
    :data:`PLATEAU_COLUMNS`) and the caption are the chapter's."""
    check_length(header, "header", len(PLATEAU_COLUMNS), "column")
    if not isinstance(cells, dict) or not cells:
        raise ValueError("cells must map labels to rows")
    body = []
    for label, rows in cells.items():
        rows = _plateau_rows(rows)
        for row in rows:
            curve = row["curve"]
            best = min(range(len(curve)), key=lambda i: curve[i][2])
            at = row.get("plateau_index")
            decayed = _decayed(row)
            share = None if decayed else _lr_share_at_end(row)
            body.append([label, str(row["seed"]), f"{curve[best][2]:.3f} ({best})",
                         f"{at} ({100 * curve[at][3]:.2f} %)" if decayed else "—", str(row["epochs_run"]),
                         "—" if share is None else f"{100 * share:.0f} %", f"{100 * row['final_val_acc']:.2f} %"])
        if len(rows) > 1:
            accs = [100 * r["final_val_acc"] for r in rows]
            facts = plateau_cell_facts(rows)
            body.append([label, f"{len(rows)} seeds", "", fill(fired, facts) if facts["any_decayed"] else "—", "", "",
                         f"{statistics.mean(accs):.2f} % (sd {statistics.stdev(accs):.2f})"])
    return Table(header, body, caption=caption)


def difference_text(entry: dict, quantity: str) -> str:
    """A table entry's paired difference with its interval, e.g. ``"+0.0597 [+0.0456, +0.0739]"``."""
    low, mean, high = (quantity_difference(entry[k], quantity) for k in ("ci_low", "mean_diff", "ci_high"))
    return f"{mean} [{low}, {high}]"


#: the points a run can be read at, in order: where the plateau rule fired, the best checkpoint, the end
READINGS = ("stop", "checkpoint", "final")


def _reading_tables(tables: dict, words: dict) -> dict:
    if not isinstance(tables, dict) or not tables:
        raise ValueError("tables must map readings to tables")
    for k, t in tables.items():
        check_choice(k, "tables' keys", READINGS)
        _check_table(t, f"tables[{k!r}]")
    missing = [k for k in tables if k not in (words or {})]
    if missing:
        raise ValueError(f"words must hold {missing}")
    keys = {k: [(json.dumps(e["recipe"], sort_keys=True), e["arm"]) for e in t.entries] for k, t in tables.items()}
    if len({json.dumps(v) for v in keys.values()}) != 1:
        raise ValueError("tables must hold the same entries")
    return {k: tables[k] for k in READINGS if k in tables}


def readings_table(tables: dict, words: dict, caption=None) -> Table:
    """Per (recipe, arm): attention's value and the paired difference [95 % interval] at each reading of the runs.

    ``tables`` maps each reading (``"stop"``, ``"checkpoint"``, ``"final"``) to the
    :func:`~probdr_lite.experiments.stats.recipe_table` of the same rows read there; the chapter's ``words`` name
    each reading (in the header), and the caption is the chapter's.
    """
    tables = _reading_tables(tables, words)
    first = next(iter(tables.values()))
    q = first.quantity.split("_", 1)[1]
    header = ["recipe", "arm"]
    for k in tables:
        header += [f"attention, {words[k]}", f"arm − attention, {words[k]} [95 % interval]"]
    body = []
    for i, e in enumerate(first.entries):
        cells = [recipe_label(e["recipe"]), ARM_STYLE[e["arm"]]["text"]]
        for t in tables.values():
            f = t.entries[i]
            cells += [quantity_level(f["baseline_mean"], q), difference_text(f, t.quantity)]
        body.append(cells)
    return Table(header, body, caption=caption)


def readings_facts(tables: dict, words: dict) -> list:
    """What reading the runs elsewhere than at their end changes, one dict per recipe: ``recipe``; ``flips``, the
    arms whose mean paired difference changes sign between the readings (``any_flips``); ``excl``, the arms for
    which whether the 95 % interval excludes 0 depends on the reading, each with the readings where it does
    (``any_excl``), named by the chapter's ``words``; ``n_readings``. Attention's value at each reading is
    :func:`readings_table`'s."""
    tables = _reading_tables(tables, words)
    first = next(iter(tables.values()))
    out = []
    for recipe_json in dict.fromkeys(json.dumps(e["recipe"], sort_keys=True) for e in first.entries):
        idx = [i for i, e in enumerate(first.entries) if json.dumps(e["recipe"], sort_keys=True) == recipe_json]
        flips, excl = [], []
        for i in idx:
            arm = first.entries[i]["arm"]
            signs = {k: np.sign(t.entries[i]["mean_diff"]) for k, t in tables.items()}
            clear = {k: t.entries[i]["ci_low"] > 0 or t.entries[i]["ci_high"] < 0 for k, t in tables.items()}
            if len(set(signs.values())) > 1:
                flips.append(ARM_STYLE[arm]["tex"])
            if len(set(clear.values())) > 1:
                excl.append(f"{ARM_STYLE[arm]['tex']} (excludes 0 " + ", ".join(
                    words[k] for k, c in clear.items() if c) + ")")
        out.append({"recipe": recipe_label(first.entries[idx[0]]["recipe"]), "flips": flips, "excl": excl,
                    "any_flips": bool(flips), "any_excl": bool(excl), "n_readings": len(tables)})
    return out


def baseline_facts(table: RecipeTable, target: float = 0.96, arm: str = "diffusion") -> dict:
    """The facts of the sentence on the vision baseline: the best attention baseline (``best_acc`` and ``best_sd``
    in %, ``best_n`` seeds, ``best_recipe``), the ``target`` accuracy (in %), and ``reach``: each recipe whose
    attention mean reaches it, with ``arm``'s reading there (``any_reach``)."""
    table = _check_table(table)
    if not table.quantity.endswith("acc"):
        raise ValueError(f"table must be of an accuracy; got {table.quantity!r}")
    target = check_scalar(target, "target", low=0, high=1)
    cells = [b for b in table.baselines if b["n"]]
    best = max(cells, key=lambda b: b["mean"])
    reach = []
    for b in (b for b in cells if b["mean"] >= target):
        e = next((e for e in table.entries if e["recipe"] == b["recipe"] and e["arm"] == arm), None)
        reach.append(f"{recipe_label(b['recipe'])} ({ARM_STYLE[arm]['tex']}: {e['outcome'] if e else 'not run'})")
    return {"best_acc": 100 * best["mean"], "best_sd": 100 * best["sd"], "best_n": best["n"],
            "best_recipe": recipe_label(best["recipe"]), "target": 100 * target, "reach": reach,
            "any_reach": bool(reach)}


SCALE_HEADER = ["model", "layers × heads", "width", "input", "parameters", "data", "batch", "budgets",
                "recipe cells (paired seeds each)"]


#: the templates :func:`scale_table` needs in its ``text``: each task's input, data and budget cells, the vision
#: model's plateau budget, and the parameters' note on the gated arms
SCALE_TEXT = ("charlm_input", "charlm_data", "charlm_budget", "vit_input", "vit_data", "vit_budget", "vit_plateau",
              "gated")


def scale_facts(task_rows: list) -> dict:
    """The scale of one task's committed rows (one task, as the first row's config gives it): ``task``, ``model``,
    ``n_layer``, ``n_head``, ``n_embd``, ``batch_size``; ``params`` (the attention arm's parameter counts),
    ``n_more`` (how many more the largest model has, the gated arms' gates) and ``gated_more`` (``n_more`` > 0);
    ``n_cells`` recipe cells with ``seeds`` paired seeds (the distinct counts, in increasing order). The character
    model adds ``block_size``, ``train_fraction`` and ``budgets`` (per iteration budget: ``iters`` and ``chars``, in
    millions of characters); the vision model ``n_patches``, ``patch_size``, ``n_train``, ``n_val``, ``budgets`` (each
    fixed budget's ``epochs``), ``any_plateau`` and, over the plateau-rule runs, ``max_epochs`` (the most a run may
    take), ``fewest`` and ``most`` (the epochs the runs took)."""
    from probdr_lite.experiments.files import task_rows as rows_of_task

    check_result(task_rows, "task_rows", rows_of_task, kind=list)
    task, c = task_rows[0]["task"], task_rows[0]["config"]
    plain = sorted({r["n_params"] for r in task_rows if "n_params" in r and r["variant"] == "attention"})
    params = sorted({r["n_params"] for r in task_rows if "n_params" in r})
    configs = {json.dumps(r["config"], sort_keys=True) for r in task_rows}
    seeds = sorted({len({r["seed"] for r in task_rows if json.dumps(r["config"], sort_keys=True) == k})
                    for k in configs})
    n_more = params[-1] - plain[-1] if plain and params else 0
    f = {"task": task, "model": TASK_NAMES[task], "n_layer": c["n_layer"], "n_head": c["n_head"], "n_embd": c["n_embd"],
         "batch_size": c["batch_size"], "params": plain, "n_more": n_more, "gated_more": n_more > 0,
         "n_cells": len(configs), "seeds": seeds}
    if task == "charlm":
        iters = sorted({r["config"]["max_iters"] for r in task_rows})
        return {**f, "block_size": c["block_size"], "train_fraction": c["train_fraction"],
                "budgets": [{"iters": i, "chars": i * c["batch_size"] * c["block_size"] / 1e6} for i in iters]}
    plateau = [r["epochs_run"] for r in task_rows if r["config"]["patience"]]
    return {**f, "n_patches": (c["image_size"] // c["patch_size"]) ** 2, "patch_size": c["patch_size"],
            "n_train": c["n_train"], "n_val": c["n_val"],
            "budgets": [{"epochs": e} for e in sorted({r["config"]["epochs"] for r in task_rows
                                                       if not r["config"]["patience"]})],
            "any_plateau": bool(plateau), "max_epochs": max(r["config"]["epochs"] for r in task_rows),
            "fewest": min(plateau) if plateau else None, "most": max(plateau) if plateau else None}


def scale_table(rows: dict, text: dict, caption=None) -> Table:
    """The scale the chapter's verdicts hold for, read from the committed rows: per task the model (layers,
    heads, width, context or patches, parameters), the data and the training budgets that were run.

    ``text`` holds the chapter's templates (the keys of :data:`SCALE_TEXT`), filled from each task's
    :func:`scale_facts`: ``{task}_input`` and ``{task}_data`` once, ``{task}_budget`` once per budget, the vision
    model's ``vit_plateau`` when it has plateau-rule runs, and ``gated`` after the parameter count when the gated
    arms have more parameters. The caption is the chapter's.
    """
    if not isinstance(rows, dict) or not rows:
        raise ValueError("rows must map tasks to rows")
    missing = [k for k in SCALE_TEXT if k not in (text or {})]
    if missing:
        raise ValueError(f"text must hold {missing}")
    body = []
    for task, task_rows_ in rows.items():
        if not task_rows_:
            continue
        f = scale_facts(task_rows_)
        size = ", ".join(f"{p:,}" for p in f["params"]) if f["params"] else "n/a"
        if f["gated_more"]:
            size += fill(text["gated"], f)
        seeds = f["seeds"]
        cells = f"{f['n_cells']} ({seeds[0]}" + ("" if len(seeds) == 1 else f" to {seeds[-1]}") + ")"
        prefix = "charlm" if task == "charlm" else "vit"
        budget = ", ".join(fill(text[f"{prefix}_budget"], {**f, **b}) for b in f["budgets"])
        if task != "charlm" and f["any_plateau"]:
            budget += ("; " if f["budgets"] else "") + fill(text["vit_plateau"], f)
        body.append([f["model"], f"{f['n_layer']} × {f['n_head']}", str(f["n_embd"]), fill(text[f"{prefix}_input"], f),
                     size, fill(text[f"{prefix}_data"], f), str(f["batch_size"]), budget, cells])
    return Table(SCALE_HEADER, body, caption=caption)


def compute_facts(rows: dict) -> dict:
    """The computing time behind the committed rows (``rows`` maps task to its rows): ``n_runs`` and the hours in
    training steps (``train_hours``) and in all (``wall_hours``)."""
    all_rows = [r for task_rows_ in rows.values() for r in task_rows_]
    return {"n_runs": len(all_rows), "train_hours": sum(r["train_seconds"] for r in all_rows) / 3600,
            "wall_hours": sum(r["wall_seconds"] for r in all_rows) / 3600}


INTERVENTION_HEADER = ["model", "initialisation", "$A - I$ − attention: base", "other initialisation",
                       "intervention [95 % CI]", "shift [95 % CI]", "$p$ (Holm)", "share"]


def intervention_table(effects: dict, row: str, caption=None) -> Table:
    """One row per model and intervention of :func:`probdr_lite.experiments.intervention.vo_scale_effects`: its
    initialisation cell is the chapter's template ``row`` filled from the entry (``{base}``, ``{vo_scale}``); the
    caption is the chapter's (its facts: :func:`intervention_table_facts`)."""
    body = []
    for task, per in effects.items():
        for e in per.values():
            def diff(mean, ci=None, q=e["quantity"]):
                text = difference_text({"mean_diff": mean, "ci_low": (ci or (mean, mean))[0],
                                        "ci_high": (ci or (mean, mean))[1]}, q)
                return text if ci else text.split(" [")[0]

            body.append([TASK_NAMES[task], fill(row, e),
                         diff(e["d_base"]), diff(e["d_other"]), diff(e["d_vo"], e["d_vo_ci"]),
                         diff(e["shift"], e["shift_ci"]), f"{pvalue(e['shift_pvalue'])} ({pvalue(e['shift_holm'])})",
                         pct(e["share"])])
    return Table(INTERVENTION_HEADER, body, caption=caption)


def intervention_table_facts(effects: dict) -> dict:
    """The facts of :func:`intervention_table`'s caption: ``n_seeds``, the numbers of paired seeds its rows have
    (each once, in increasing order)."""
    return {"n_seeds": sorted({len(e["seeds"]) for per in effects.values() for e in per.values()})}


def intervention_facts(per_task: dict, task: str, follows: bool) -> dict:
    """The facts of the intervention's sentence for one model: entries of ``vo_scale_effects(...)[task]``.

    ``g_towards`` / ``d_towards``: whether giving GPT-2's initialisation the default's W_V, W_O (``g``), or the
    default GPT-2's (``d``), moved A - I's effect significantly towards the other initialisation's (the entry's
    ``towards``); ``share_g`` / ``share_d`` the share of the way; ``follows`` (from
    :func:`probdr_lite.experiments.intervention.follows_scale`), ``g_only`` and ``d_only`` (only that one moved).
    """
    g, d = per_task["gpt2-vo-default"], per_task["default-vo-gpt2"]
    return {"model": TASK_NAMES[task], "share_g": g["share"], "share_d": d["share"],
            "g_towards": bool(g["towards"]), "d_towards": bool(d["towards"]), "follows": bool(follows),
            "g_only": bool(g["towards"]) and not d["towards"], "d_only": bool(d["towards"]) and not g["towards"],
            "shift_g": g["shift"], "shift_d": d["shift"], "holm_g": g["shift_holm"], "holm_d": d["shift_holm"]}
