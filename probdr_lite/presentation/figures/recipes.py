"""The trained-transformers chapter's grids, families of tests and intervention in tables and pictures.

The numbers come from :mod:`probdr_lite.experiments.families` (the declared families, their simultaneous intervals
and verdicts, the interaction test, the intervention with Fieller's sets), :mod:`probdr_lite.experiments.stats`
(:func:`~probdr_lite.experiments.stats.recipe_table`, :func:`~probdr_lite.experiments.stats.nanogpt_gap`) and
:mod:`probdr_lite.experiments.sweep` (:func:`~probdr_lite.experiments.sweep.grid_status`); this module only
formats them, with labels defined once here. The sentences about them are the chapter's Markdown.

- :func:`recipe_label`               a recipe's factors in a few words;
- :func:`family_results_table`       every test of a family: its two labelled intervals, p values and verdict;
- :func:`exploratory_table`          the exploratory primary family: half-open Holm intervals, Bonferroni's beside,
                                     the verdict with one seed left out;
- :func:`round_table`, :func:`round_figure`  the confirmatory round, as declared;
- :func:`interaction_table`          does A - I's effect depend on the initialisation, per model;
- :func:`intervention_family_table`  the W_V W_O intervention: shifts, shares and Fieller's sets;
- :func:`grids_table`                which recipe cells of each grid are complete or not run, and the command;
- :func:`provenance_table`           how the committed rows were made, one row per model;
- :func:`nanogpt_facts`              our baseline against nanoGPT's published loss, 20 batches against 200;
- :func:`plateau_figure`             plateau-rule ViT runs of one arm, with each seed's best epoch and its stop;
- :func:`plateau_facts`              what that figure draws (whether it has the learning-rate panel);
- :func:`plateau_table`              the same runs, seed by seed: best epoch, stop and final accuracy;
- :func:`plateau_cell_facts`         a plateau cell's means where the rule fired, at the best checkpoint, at the end;
- :func:`readings_table`             the same runs read where the plateau rule fired, at the best checkpoint, at the end;
- :func:`readings_facts`             what the reading changes (the sign, whether the interval excludes 0);
- :func:`scale_table`                the scale the verdicts hold for (models, data, budgets), read from the rows;
- :func:`scale_facts`                the same numbers of one model;
- :func:`compute_facts`              the number of committed runs and their CPU hours.
"""

from __future__ import annotations

import json
import math
import statistics

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite._validation import check_choice, check_length, check_result, check_scalar
from probdr_lite.experiments.stats import RecipeTable
from probdr_lite.presentation.plotting import Table

from ..prose import pct, pvalue
from .training import ARM_STYLE, QUANTITY_LABELS, TASK_NAMES, quantity_difference, quantity_level

__all__ = ["recipe_label", "recipe_name", "recipe_names_table", "cell_label", "interval_text", "set_text", "family_results_table",
           "interaction_table", "intervention_family_table", "exploratory_table", "round_table", "round_figure",
           "round_cell", "paired_seeds_table", "grids_table", "provenance_table", "nanogpt_facts",
           "plateau_figure", "plateau_facts", "plateau_table", "plateau_cell_facts", "readings_table",
           "readings_facts", "scale_facts", "scale_table", "compute_facts"]

SCHEDULE_WORDS = {"cosine": "warm-up + cosine", "onecycle": "one-cycle"}


def recipe_label(recipe: dict) -> str:
    """A recipe's factors in a few words, e.g. ``"gpt2 init, lr 3e-3, warm-up + cosine, 10 epochs"``."""
    if not isinstance(recipe, dict) or "init" not in recipe or "lr" not in recipe:
        raise ValueError(f"recipe must hold 'init' and 'lr'; got {recipe!r}")
    parts = [f"{recipe['init']} init", f"lr {recipe['lr']:.0e}".replace("e-0", "e-")]
    if "schedule" in recipe:
        parts.append(_label(SCHEDULE_WORDS, recipe["schedule"], "schedule"))
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


#: the columns of :func:`grids_table` (the chapter names them, in its ``header``)
GRIDS_COLUMNS = ("model", "grid", "complete", "partial", "empty", "command")


def grids_table(directory=None, grids=None, *, header, caption=None) -> Table:
    """Which recipe cells of each grid are complete, partial or not run, and the command that fills them in.

    ``grids`` maps a task to the name of a grid or a list of names (default: the full factorial of each task).
    The ``header`` (one name per column of :data:`GRIDS_COLUMNS`) and the caption are the chapter's.
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
                missing = [f"{ARM_STYLE[a]['tex']} (seeds: {len(seeds)})"
                           for a, seeds in s["seeds_done"].items()
                           if len(seeds) < s["n_runs"] // len(s["seeds_done"])]
                short.append(f"{recipe_label(s['recipe'])}: {s['n_done']} of {s['n_runs']} runs; {', '.join(missing)}")
            body.append([TASK_NAMES[task], grid_name, f"{len(complete)} of {len(status)}",
                         "; ".join(short) or "none", "; ".join(recipe_label(s["recipe"]) for s in empty) or "none",
                         f"python -m probdr_lite.experiments grid {grid_name} --threads 1" if partial or empty
                         else "—"])
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


#: the learning-rate panel's y-axis label of :func:`plateau_figure`
PLATEAU_LR_LABEL = "learning rate (last step of the epoch)"


def plateau_figure(rows, title=None):
    """ViT runs of one arm with the plateau rule (one row or several seeds): validation loss and accuracy per
    epoch, and the learning rate when the rows record it. Each seed's lowest validation loss (its best checkpoint)
    is a dotted line, the epoch where the rule fired a dashed one (when the run went on to decay), and its end the
    end of its curve; the legend names them with the seed and the epoch. The title is the chapter's (its facts:
    :func:`plateau_facts`). The chapter describes the figure."""
    rows = _plateau_rows(rows)
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
        seed = row["seed"]
        for ax, j in ((axes[0], 2), (axes[1], 3)):
            ax.plot(epochs, curve[:, j], color=colour, ls=styles[k % len(styles)], marker="o", ms=2,
                    label=f"seed {seed}: stopped after epoch {row['epochs_run']}")
            ax.axvline(best, color="0.4", ls=":", lw=1, label=f"seed {seed}: lowest validation loss (epoch {best})")
            if decayed:
                ax.axvline(fired, color="0.6", ls="--", lw=1, label=f"seed {seed}: plateau rule fired (epoch {fired})")
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
        axes[2].set_ylabel(PLATEAU_LR_LABEL)
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


def plateau_table(cells: dict, header, caption=None) -> Table:
    """The plateau-rule runs of one arm per cell, one row per seed: the lowest validation loss and its epoch, where
    the rule fired (with the accuracy there) when a decay followed, the last epoch, the learning rate left at the
    end of a run stopped without the decay, and the final accuracy; then per cell the mean final accuracy (sd) and,
    over the seeds that decayed, the mean accuracy where the rule fired, at the best checkpoint and at the end
    (:func:`plateau_cell_facts`; "—" where no seed decayed).
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
            summary = (f"mean over the {facts['n_decayed']} that decayed: {facts['stop']:.2f} % where it fired, "
                       f"{facts['ckpt']:.2f} % at the best checkpoint, {facts['end']:.2f} % at the end")
            body.append([label, f"{len(rows)} seeds", "", summary if facts["any_decayed"] else "—", "", "",
                         f"{statistics.mean(accs):.2f} % (sd {statistics.stdev(accs):.2f})"])
    return Table(header, body, caption=caption)


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
        header += [f"attention, {words[k]}", f"arm − attention, {words[k]} [95 % interval, unadjusted]"]
    body = []
    for i, e in enumerate(first.entries):
        cells = [recipe_label(e["recipe"]), ARM_STYLE[e["arm"]]["text"]]
        for t in tables.values():
            f = t.entries[i]
            cells += [quantity_level(f["baseline_mean"], q),
                      f"{quantity_difference(f['mean_diff'], t.quantity)} "
                      f"{interval_text((f['ci_low'], f['ci_high']), t.quantity)}"]
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


SCALE_HEADER = ["model", "layers × heads", "width", "input", "parameters", "data", "batch", "budgets",
                "recipe cells (paired seeds each)"]


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


def scale_table(rows: dict, caption=None) -> Table:
    """The scale the chapter's verdicts hold for, read from the committed rows: per task the model (layers,
    heads, width, context or patches, parameters), the data and the training budgets that were run
    (:func:`scale_facts`). The caption is the chapter's."""
    if not isinstance(rows, dict) or not rows:
        raise ValueError("rows must map tasks to rows")
    body = []
    for task, task_rows_ in rows.items():
        if not task_rows_:
            continue
        f = scale_facts(task_rows_)
        size = ", ".join(f"{p:,}" for p in f["params"]) if f["params"] else "n/a"
        if f["gated_more"]:
            size += f" ({f['n_more']} more in the gated arms, one gate per head)"
        seeds = f["seeds"]
        cells = f"{f['n_cells']} ({seeds[0]}" + ("" if len(seeds) == 1 else f" to {seeds[-1]}") + ")"
        if task == "charlm":
            source = f"a context of {f['block_size']} characters"
            data = (f"Tiny Shakespeare: the first {pct(f['train_fraction'])} of its characters for training, the rest "
                    "for validation")
            budget = ", ".join(f"{b['iters']:,} iterations ({b['chars']:.2f} M characters)" for b in f["budgets"])
        else:
            source = f"{f['n_patches']} patches of {f['patch_size']} × {f['patch_size']} pixels and a class token"
            data = f"MNIST: {f['n_train']:,} training and {f['n_val']:,} validation images from its test set"
            budget = ", ".join(f"{b['epochs']} epochs" for b in f["budgets"])
            if f["any_plateau"]:
                budget += (("; " if f["budgets"] else "") + f"the plateau rule (at most {f['max_epochs']} epochs; the "
                           f"runs took {f['fewest']} to {f['most']})")
        body.append([f["model"], f"{f['n_layer']} × {f['n_head']}", str(f["n_embd"]), source, size, data,
                     str(f["batch_size"]), budget, cells])
    return Table(SCALE_HEADER, body, caption=caption)


def compute_facts(rows: dict) -> dict:
    """The computing time behind the committed rows (``rows`` maps task to its rows): ``n_runs`` and the hours in
    training steps (``train_hours``) and in all (``wall_hours``)."""
    all_rows = [r for task_rows_ in rows.values() for r in task_rows_]
    return {"n_runs": len(all_rows), "train_hours": sum(r["train_seconds"] for r in all_rows) / 3600,
            "wall_hours": sum(r["wall_seconds"] for r in all_rows) / 3600}




# ------------------------------------------------------------------------------------- the declared families
# The tables and the figure of :mod:`probdr_lite.experiments.families`: every test of a family with its two
# labelled intervals (unadjusted; simultaneous for the family, from which alone the verdict word is read).

#: The budgets of the primary family in print.
BUDGET_LABELS = {"early": "early", "plateau": "plateau"}
#: The initialisations in print.
INIT_LABELS = {"gpt2": "GPT-2", "default": "PyTorch default"}
#: The columns of :func:`family_results_table`, each label written once here.
FAMILY_HEADER = {"cell": "cell", "arm": "arm", "seeds": "paired seeds", "baseline": "attention",
                 "difference": "arm − attention", "ci": "95 % interval, unadjusted",
                 "sim_ci": "95 % interval, simultaneous (family)", "adjusted": "$p$, Holm (family)",
                 "tost": "$p$, TOST against the margin, unadjusted", "signs": "seeds better / worse / tied",
                 "verdict": "verdict"}


def _label(labels: dict, key, what: str) -> str:
    """``labels[key]``, or ValueError naming the missing label (nothing falls back to the key)."""
    if key not in labels:
        raise ValueError(f"no {what} label for {key!r}; known: {sorted(labels)}")
    return labels[key]


def cell_label(entry: dict) -> str:
    """A family entry's cell in a few words: its model, budget (primary cells) and initialisation, or its recipe."""
    task = _label(TASK_NAMES, entry["task"], "task")
    if entry.get("budget") is not None:
        return (f"{task}, {_label(BUDGET_LABELS, entry['budget'], 'budget')}, "
                f"{_label(INIT_LABELS, entry['init'], 'initialisation')}")
    return f"{task}, {recipe_label(entry['recipe'])}"


def interval_text(interval, quantity: str, *, half_open: bool = False) -> str:
    """An interval of a paired difference in the quantity's units, e.g. ``"[-11.67 pp, -4.45 pp]"``.

    ``half_open=True`` prints an end that is exactly zero as open, ``"(0, +0.0706]"``: Holm's simultaneous interval
    stops at zero on a side whose hypothesis it rejects, so zero itself is excluded, not a value it allows."""
    low, high = interval
    left = "(0" if half_open and low == 0 else f"[{quantity_difference(low, quantity)}"
    right = "0)" if half_open and high == 0 else f"{quantity_difference(high, quantity)}]"
    return f"{left}, {right}"


#: Short names of the recipes, defined once (``recipe_names_table`` lists them): per task, the recipe factors
#: other than the initialisation, and the name. The initialisation is written after the name.
RECIPE_NAMES = {
    "charlm": ((({"lr": 1e-3, "max_iters": 2000}), "LM-2k"), (({"lr": 3e-3, "max_iters": 2000}), "LM-2k-fast"),
               (({"lr": 1e-3, "max_iters": 5000}), "LM-5k")),
    "vit": ((({"lr": 3e-3, "schedule": "cosine", "epochs": 10, "patience": 0, "decay_epochs": 0}), "ViT-10"),
            (({"lr": 1e-3, "schedule": "cosine", "epochs": 10, "patience": 0, "decay_epochs": 0}), "ViT-10-slow"),
            (({"lr": 3e-3, "schedule": "onecycle", "epochs": 10, "patience": 0, "decay_epochs": 0}), "ViT-10-1cycle"),
            (({"lr": 3e-3, "schedule": "cosine", "epochs": 60, "patience": 5, "decay_epochs": 0}), "ViT-stop"),
            (({"lr": 3e-3, "schedule": "cosine", "epochs": 60, "patience": 5, "decay_epochs": 5}), "ViT-plateau")),
}


def recipe_name(task: str, recipe: dict, *, init: bool = True) -> str:
    """A recipe's short name (:data:`RECIPE_NAMES`), with its initialisation (``"LM-2k, GPT-2"``) unless
    ``init=False``; ValueError for a recipe without a name."""
    for factors, name in _label(RECIPE_NAMES, task, "task"):
        if all(recipe.get(k) == v for k, v in factors.items()):
            return f"{name}, {_label(INIT_LABELS, recipe['init'], 'initialisation')}" if init else name
    raise ValueError(f"no short name for the {task} recipe {recipe!r}")


def recipe_names_table(header, descriptions: dict, caption=None) -> Table:
    """The short names of :data:`RECIPE_NAMES`, one row each: the model, the name and the chapter's description of
    the recipe (``descriptions`` maps each name to its words)."""
    check_length(header, "header", 3, "column")
    body = []
    for task, entries in RECIPE_NAMES.items():
        for _, name in entries:
            body.append([_label(TASK_NAMES, task, "task"), name, _label(descriptions, name, "recipe description")])
    return Table(header, body, caption=caption)


def _check_entries(entries, name="entries") -> list:
    needed = ("task", "arm", "quantity", "n", "mean_diff", "ci", "sim_ci", "adjusted_pvalue", "verdict",
              "baseline_mean", "n_better", "n_worse", "n_tied", "tost_pvalue")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ValueError(f"{name} must be a non-empty list of family_table entries")
    missing = sorted({k for e in entries for k in needed if k not in e})
    if missing:
        raise ValueError(f"{name} must be entries of probdr_lite.experiments.families.family_table; missing {missing}")
    return entries


def family_results_table(entries: list, caption=None) -> Table:
    """One row per test of a family (:func:`probdr_lite.experiments.families.family_table`): the cell, the arm, the
    paired seeds, attention's mean, the mean paired difference with its unadjusted and its simultaneous 95 %
    interval (both labelled), Holm's adjusted p, the TOST p against the model's margin, the seeds that point each
    way and the verdict word read from the simultaneous interval. The caption is the chapter's."""
    entries = _check_entries(entries)
    body = []
    for e in entries:
        q = e["quantity"]
        body.append([cell_label(e), ARM_STYLE[e["arm"]]["text"], str(e["n"]), quantity_level(e["baseline_mean"], q),
                     quantity_difference(e["mean_diff"], q), interval_text(e["ci"], q), interval_text(e["sim_ci"], q),
                     pvalue(e["adjusted_pvalue"]), pvalue(e["tost_pvalue"]),
                     f"{e['n_better']} / {e['n_worse']} / {e['n_tied']}", e["verdict"]])
    return Table(list(FAMILY_HEADER.values()), body, caption=caption)


#: The marker of each verdict word in :func:`round_figure`: (marker, filled).
VERDICT_MARKS = {"better": ("o", True), "worse": ("X", True), "equivalent": ("D", True), "cannot tell": ("o", False)}


#: The columns of :func:`interaction_table`.
INTERACTION_HEADER = {"cells": "recipes", "pairs": "paired seeds (distinct seeds)",
                      "gpt2": "$A - I$ − attention, GPT-2", "default": "$A - I$ − attention, PyTorch default",
                      "estimate": "default − GPT-2 [95 % interval]", "p": "$p$",
                      "signs_gpt2": "seeds better / worse / tied, GPT-2",
                      "signs_default": "seeds better / worse / tied, PyTorch default"}


def interaction_table(effects: list, caption=None) -> Table:
    """One row per effect of :func:`probdr_lite.experiments.families.initialisation_effect` (e.g. one per model and
    budget): the recipes that entered (their short names), the paired seeds and how many distinct seeds they come
    from, the mean paired difference under each initialisation, the initialisation's effect on it with its interval
    and p, and the seeds that point each way."""
    if not isinstance(effects, list) or not effects:
        raise ValueError("effects must be a non-empty list of initialisation_effect results")
    body = []
    for e in effects:
        q = e["quantity"]
        signs = {i: "{better} / {worse} / {tied}".format(**e["signs"][i]) for i in ("gpt2", "default")}
        names = ", ".join(dict.fromkeys(recipe_name(e["task"], r, init=False) for r in e["recipes"]))
        body.append([names, f"{e['n']} ({len(e['seeds'])})", quantity_difference(e["means"]["gpt2"], q),
                     quantity_difference(e["means"]["default"], q),
                     f"{quantity_difference(e['estimate'], q)} {interval_text(e['ci'], q)}", pvalue(e["pvalue"]),
                     signs["gpt2"], signs["default"]])
    return Table(list(INTERACTION_HEADER.values()), body, caption=caption)


def set_text(pieces, digits: int = 0) -> str:
    """A confidence set given as closed pieces (Fieller's, :func:`~probdr_lite.experiments.families.fieller_ratio`)
    in percent, in interval notation: ``"[45 %, 124 %]"``, ``"(-∞, -199 %] ∪ [124 %, ∞)"``, ``"(-∞, ∞)"``."""
    def end(v):
        return "∞" if v == math.inf else "-∞" if v == -math.inf else pct(v, digits)

    parts = []
    for low, high in pieces:
        left = "(" if low == -math.inf else "["
        right = ")" if high == math.inf else "]"
        parts.append(f"{left}{end(low)}, {end(high)}{right}")
    return " ∪ ".join(parts)


#: The columns of :func:`intervention_family_table`.
INTERVENTION_FAMILY_HEADER = {
    "model": "model", "scheme": "initialisation", "seeds": "paired seeds",
    "base": "$A - I$ − attention: base", "other": "other initialisation", "vo": "intervention",
    "shift": "shift (intervention − base)", "ci": "95 % interval, unadjusted",
    "sim_ci": "95 % interval, simultaneous (family)", "adjusted": "$p$, Holm (family)",
    "share": "share of the initialisation's effect", "share_set": "95 % set (Fieller), unadjusted",
    "share_sim": "95 % set (Fieller), simultaneous (Bonferroni)"}
#: How each intervention's initialisation is written in :func:`intervention_family_table`.
SCHEME_LABELS = {"gpt2-vo-default": "GPT-2, $W_V$ and $W_O$ at the default's scale",
                 "default-vo-gpt2": "PyTorch default, $W_V$ and $W_O$ at GPT-2's scale"}


def intervention_family_table(entries: list, caption=None) -> Table:
    """One row per test of the intervention family (:func:`probdr_lite.experiments.families.intervention_table`):
    the three mean paired differences, the shift with its two labelled intervals and Holm's p, and the share of the
    initialisation's effect with Fieller's sets, unadjusted and simultaneous."""
    if not isinstance(entries, list) or not entries:
        raise ValueError("entries must be the non-empty list of probdr_lite.experiments.families.intervention_table")
    body = []
    for e in entries:
        q = e["quantity"]
        body.append([_label(TASK_NAMES, e["task"], "task"), _label(SCHEME_LABELS, e["scheme"], "scheme"), str(e["n"]),
                     quantity_difference(e["d_base"], q), quantity_difference(e["d_other"], q),
                     quantity_difference(e["d_vo"], q), quantity_difference(e["shift"], q), interval_text(e["ci"], q),
                     interval_text(e["sim_ci"], q), pvalue(e["adjusted_pvalue"]), pct(e["share"]),
                     set_text(e["share_pieces"]), set_text(e["share_sim_pieces"])])
    return Table(list(INTERVENTION_FAMILY_HEADER.values()), body, caption=caption)


# ------------------------------------------------------------------------------ the exploratory primary family

#: The columns of :func:`exploratory_table`.
EXPLORATORY_HEADER = {"cell": "cell", "seeds": "paired seeds (run before the families were declared)",
                      "difference": "$A - I$ − attention", "holm": "95 % simultaneous (Holm)",
                      "bonferroni": "95 % simultaneous (Bonferroni)", "p": "$p$, Holm over 16 one-sided",
                      "signs": "seeds better / worse", "verdict": "verdict (Holm)",
                      "loo": "verdict with one seed left out"}


def exploratory_table(entries: list, bonferroni: list, history: list, loo: list, caption=None) -> Table:
    """The exploratory primary family, one row per cell: its paired seeds (and how many were run before the families
    were declared, :func:`probdr_lite.experiments.families.exploratory_history`), the mean paired difference, Holm's
    simultaneous interval printed half-open where it ends at zero, Bonferroni's beside it for the size, Holm's
    adjusted p (over the family's 2m one-sided p values), the seeds each way, the verdict and how it fares with each
    seed left out (:func:`probdr_lite.experiments.families.leave_one_out`). The four lists are in the family's
    order."""
    entries = _check_entries(entries)
    if not (len(bonferroni) == len(history) == len(loo) == len(entries)):
        raise ValueError("entries, bonferroni, history and loo must describe the same cells, in one order")
    body = []
    for e, b, h, out in zip(entries, bonferroni, history, loo):
        if len({(x["task"], x["init"], x["budget"]) for x in (e, b, h, out)}) != 1:
            raise ValueError("entries, bonferroni, history and loo must describe the same cells, in one order")
        q = e["quantity"]
        others = [v for v in out["without"].values() if v != out["verdict"]]
        stable = "unchanged" if not others else f"{len(others)} of {len(out['without'])}: " + ", ".join(
            sorted(set(others)))
        body.append([recipe_name(e["task"], e["recipe"]), f"{e['n']} ({len(h['before'])})",
                     quantity_difference(e["mean_diff"], q), interval_text(e["sim_ci"], q, half_open=True),
                     interval_text(b["sim_ci"], q), pvalue(e["adjusted_pvalue"]),
                     f"{e['n_better']} / {e['n_worse']}" + (f" ({e['n_tied']} tied)" if e.get("n_tied") else ""),
                     e["verdict"], stable])
    return Table(list(EXPLORATORY_HEADER.values()), body, caption=caption)


# ------------------------------------------------------------------------------ the confirmatory round

#: The columns of :func:`round_table`.
ROUND_HEADER = {"cell": "cell", "pairs": "paired seeds", "attention": "attention", "difference": "$A - I$ − attention",
                "interval": "98.75 % interval (family: 95 %)", "p": "$p$, t × 4", "perm": "$p$, sign-flip × 4",
                "signs": "seeds better / worse", "verdict": "verdict", "margin": "inside the margin"}


def _check_round(entries) -> list:
    needed = ("task", "init", "n", "attention_mean", "mean_diff", "interval", "adjusted_pvalue", "perm_adjusted",
              "n_better", "n_worse", "verdict", "equivalent", "metric")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ValueError("entries must be the non-empty list of probdr_lite.experiments.confirmatory."
                         "confirmatory_table")
    missing = sorted({k for e in entries for k in needed if k not in e})
    if missing:
        raise ValueError(f"entries must be complete cells of confirmatory_table; missing {missing}")
    return entries


def _round_quantity(e) -> str:
    return "final_val_acc" if e["metric"].endswith("acc") else "final_val_loss"


#: How the round's cells are named: the model's recipe in the round.
ROUND_NAMES = {"vit": "ViT-plateau, test split", "charlm": "LM-2k"}


def round_cell(entry: dict) -> str:
    """A cell of the confirmatory round in a few words: ``"ViT-plateau, test split, GPT-2"``."""
    return f"{_label(ROUND_NAMES, entry['task'], 'task')}, {_label(INIT_LABELS, entry['init'], 'initialisation')}"


def round_table(entries: list, caption=None) -> Table:
    """One row per cell of the confirmatory round (:func:`probdr_lite.experiments.confirmatory.confirmatory_table`):
    the pairs, attention's mean, the mean paired difference, the family interval, the t-test's and the sign-flip
    check's p values times the family size, the seeds each way, the verdict word and whether the interval lies inside
    the margin."""
    body = []
    for e in _check_round(entries):
        q = _round_quantity(e)
        body.append([round_cell(e), str(e["n"]), quantity_level(e["attention_mean"], q),
                     quantity_difference(e["mean_diff"], q), interval_text(e["interval"], q),
                     pvalue(e["adjusted_pvalue"]), pvalue(e["perm_adjusted"]), f"{e['n_better']} / {e['n_worse']}",
                     e["verdict"], "yes" if e["equivalent"] else "no"])
    return Table(list(ROUND_HEADER.values()), body, caption=caption)


def round_figure(entries: list, *, titles: dict, xlabels: dict, margins: dict):
    """The confirmatory round in one figure: one panel per model, one row per initialisation, the mean paired
    difference with its family interval, the margin shaded (``margins`` per task, in the quantity's units) and the
    verdict written at the right. ``titles`` and ``xlabels`` are the chapter's words per task."""
    entries = _check_round(entries)
    tasks = list(dict.fromkeys(e["task"] for e in entries))
    fig, axes = plt.subplots(len(tasks), 1, squeeze=False, figsize=(8.5, 1.6 * len(tasks) + 0.6))
    for ax, task in zip(axes[:, 0], tasks):
        mine = [e for e in entries if e["task"] == task]
        k, _ = _difference_units(_round_quantity(mine[0]))
        m = _label(margins, task, "margin")
        ax.axvspan(-k * m, k * m, color="0.92", zorder=0)
        for y, e in zip(range(len(mine) - 1, -1, -1), mine):
            marker, filled = VERDICT_MARKS[e["verdict"]]
            colour = ARM_STYLE["diffusion"]["colour"]
            ax.plot([k * e["interval"][0], k * e["interval"][1]], [y, y], color=colour, lw=3.5, alpha=0.7)
            ax.plot([k * e["mean_diff"]], [y], marker=marker, color=colour, ms=8, ls="none",
                    mfc=colour if filled else "white")
            ax.text(1.01, y, e["verdict"], transform=ax.get_yaxis_transform(), fontsize=10, va="center")
        ax.axvline(0.0, color="0.3", ls="--", lw=1)
        ax.set_yticks(range(len(mine) - 1, -1, -1))
        ax.set_yticklabels([_label(INIT_LABELS, e["init"], "initialisation") for e in mine], fontsize=10)
        ax.set_ylim(-0.6, len(mine) - 0.4)
        ax.set_xlabel(_label(xlabels, task, "xlabel"), fontsize=10)
        ax.set_title(_label(titles, task, "title"), fontsize=10)
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def paired_seeds_table(cells: list, header, caption=None) -> Table:
    """Paired runs seed by seed: ``cells`` is a list of ``(label, quantity, pairs)`` with ``pairs`` a list of
    ``(seed, attention value, arm value, note)``; one row per seed: the cell's label, the seed, both values, the
    difference (arm - attention) and the note (the chapter's words, e.g. when the pair was run). The ``header`` (five
    names, or six with notes) and the caption are the chapter's."""
    body = []
    for label, quantity, pairs in cells:
        for seed, a, b, note in pairs:
            row = [label, str(seed), quantity_level(a, quantity), quantity_level(b, quantity),
                   quantity_difference(b - a, quantity)]
            body.append(row + ([note] if len(header) == 6 else []))
    check_length(header, "header", len(body[0]) if body else len(header), "column")
    return Table(header, body, caption=caption)
