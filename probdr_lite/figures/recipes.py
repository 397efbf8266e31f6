"""Chapter 6's recipe grid in words and pictures: the table, the dot plot, the verdict, what is pending.

The numbers come from :mod:`probdr_lite.experiments.stats` (:func:`~probdr_lite.experiments.stats.recipe_table`,
:func:`~probdr_lite.experiments.stats.recipe_verdict`, :func:`~probdr_lite.experiments.stats.nanogpt_gap`) and
:mod:`probdr_lite.experiments.sweep` (:func:`~probdr_lite.experiments.sweep.grid_status`); this module only
formats them, so every sentence follows from the table it is given.

- :func:`recipe_label`           a recipe's factors in a few words;
- :func:`recipe_results_table`   one row per (recipe, arm): baseline, paired difference, 95 % interval, p, Holm p;
- :func:`recipe_figure`          the dot plot of the paired differences with their intervals;
- :func:`recipe_verdict_text`    the verdict paragraph, per arm, with the count of tests;
- :func:`pending_text`           which recipe cells of a grid are not run yet, and the command that runs them;
- :func:`provenance_text`        how the committed rows were made;
- :func:`nanogpt_text`           our baseline against nanoGPT's published loss, 20 batches against 200;
- :func:`overview_markdown`      what is committed and what is pending, for the chapter's first results cell;
- :func:`nanogpt_markdown`       the nanoGPT sentence from the rows and the measured batch spread;
- :func:`plateau_figure`         plateau-rule ViT runs of one arm, with each seed's best epoch and its stop;
- :func:`plateau_text`           the same runs in words: best epoch, stop and final accuracy per seed;
- :func:`last_epoch_text`        whether the curves were still improving when training stopped;
- :func:`closing_note`           per recipe, the baseline and the A − I difference with its interval; CPU hours.
"""

from __future__ import annotations

import json
import math
import statistics

import matplotlib.pyplot as plt
import numpy as np

from probdr_lite.figures.style import describe
from probdr_lite.experiments.stats import OUTCOMES, ArmVerdict, RecipeTable
from probdr_lite.plotting import Table

from .prose import plural
from .training import ARM_STYLE, QUANTITY_LABELS, TASK_NAMES

__all__ = ["recipe_label", "recipe_results_table", "recipe_figure", "recipe_verdict_text", "pending_text",
           "provenance_text", "nanogpt_text", "overview_markdown", "nanogpt_markdown", "plateau_figure",
           "plateau_text",
           "last_epoch_text", "closing_note"]

FACTOR_WORDS = {"init": "init", "lr": "peak lr", "schedule": "schedule", "epochs": "epochs",
                "patience": "plateau rule", "max_iters": "iterations"}
SCHEDULE_WORDS = {"cosine": "warm-up + cosine", "onecycle": "one-cycle"}


def recipe_label(recipe: dict) -> str:
    """A recipe's factors in a few words, e.g. ``"gpt2 init, lr 3e-3, warm-up + cosine, 10 epochs"``."""
    if not isinstance(recipe, dict) or "init" not in recipe or "lr" not in recipe:
        raise ValueError(f"recipe must be a dict of recipe factors with 'init' and 'lr'; got {recipe!r}")
    parts = [f"{recipe['init']} init", f"lr {recipe['lr']:.0e}".replace("e-0", "e-")]
    if "schedule" in recipe:
        parts.append(SCHEDULE_WORDS.get(recipe["schedule"], str(recipe["schedule"])))
    if recipe.get("patience"):
        parts.append(f"plateau (≤ {recipe['epochs']} epochs, patience {recipe['patience']})")
    elif "epochs" in recipe:
        parts.append(f"{recipe['epochs']} epochs")
    if "max_iters" in recipe:
        parts.append(f"{recipe['max_iters']:,} iterations")
    return ", ".join(parts)


def _scale(quantity):
    """(factor, unit) to show a quantity: accuracies in percentage points."""
    return (100.0, " pp") if quantity.endswith("acc") else (1.0, "")


def _num(x, quantity, signed=True):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    k, unit = _scale(quantity)
    digits = 2 if unit else 4
    return f"{k * x:{'+' if signed else ''}.{digits}f}{unit}"


def _p(p):
    return "n/a" if p is None or (isinstance(p, float) and math.isnan(p)) else f"{p:.3g}"


def _check_table(table):
    if not isinstance(table, RecipeTable):
        raise ValueError(f"table must be a RecipeTable from probdr_lite.experiments.stats.recipe_table(); "
                         f"got {type(table).__name__}")
    return table


def recipe_results_table(table: RecipeTable) -> Table:
    """One row per (recipe, arm): attention's mean, the paired difference with its interval, p, Holm p, reading."""
    table = _check_table(table)
    q = table.quantity
    level = f"{100 * (1 - table.alpha):g} %"
    header = ["recipe", "arm", "pairs", f"attention ({QUANTITY_LABELS[q]})", "arm − attention",
              f"{level} interval", "better / worse", "p", f"Holm p ({table.n_tests} tests)", "reading"]
    own = table.extra.get("tests_in_table", table.n_tests)
    family = (f"all {table.n_tests} (recipe, arm) tests of this table" if own == table.n_tests else
              f"all {table.n_tests} (recipe, arm) tests of both models ({own} in this table)")
    body = []
    for e in table.entries:
        mean_base = _num(e["baseline_mean"], q, signed=False)
        if q.endswith("acc") and mean_base != "n/a":
            mean_base = f"{100 * e['baseline_mean']:.2f} %"
        body.append([recipe_label(e["recipe"]), ARM_STYLE[e["arm"]]["text"], str(e["n"]), mean_base,
                     _num(e["mean_diff"], q), f"[{_num(e['ci_low'], q)}, {_num(e['ci_high'], q)}]",
                     f"{e['n_better']} / {e['n_worse']}", _p(e["t_pvalue"]), _p(e["holm_pvalue"]),
                     e["outcome"] or "pending"])
    better = "lower" if not q.endswith("acc") else "higher"
    caption = (f"{TASK_NAMES[table.task]}: paired by seed, arm minus attention ({better} is better); "
               f"two-sided paired t-tests, Holm-adjusted over {family}")
    return Table(header, body, caption=caption)


def recipe_figure(table: RecipeTable, title: str | None = None):
    """Dot plot: one row per (recipe, arm), the mean paired difference and its interval; 0 is "no difference".

    Rows are grouped by recipe, each group headed by the recipe's label; the dot
    is filled when the Holm-adjusted test is below alpha. Returns the Figure; its
    axes' k-th errorbar container belongs to the k-th entry of ``table.entries``.
    """
    table = _check_table(table)
    if not table.entries:
        raise ValueError("table must hold at least one (recipe, arm) entry")
    q = table.quantity
    k, unit = _scale(q)
    groups = list(dict.fromkeys(recipe_label(e["recipe"]) for e in table.entries))
    n_rows = len(table.entries) + len(groups)
    fig, ax = plt.subplots(figsize=(7.0, 0.3 * n_rows + 1.3))
    y, ticks, labels, previous = n_rows - 1, [], [], None
    for e in table.entries:
        recipe = recipe_label(e["recipe"])
        if recipe != previous:  # a header row for the recipe
            ax.text(0.01, y, recipe, transform=ax.get_yaxis_transform(), fontsize=8, va="center",
                    fontweight="bold")
            ax.axhline(y + 0.5, color="0.85", lw=0.8)
            y -= 1
            previous = recipe
        style = ARM_STYLE[e["arm"]]
        x, lo, hi = k * e["mean_diff"], k * e["ci_low"], k * e["ci_high"]
        err = None if math.isnan(lo) else [[x - lo], [hi - x]]
        filled = e["outcome"] in ("helps", "hurts")
        ax.errorbar([x], [y], xerr=err, fmt="o", color=style["colour"], ms=5, capsize=2,
                    mfc=style["colour"] if filled else "white")
        ticks.append(y)
        labels.append(style["text"])
        y -= 1
    ax.axvline(0.0, color="0.3", ls="--", lw=1)
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(-0.7, n_rows - 0.3)
    better = "left" if not q.endswith("acc") else "right"
    in_unit = f" ({unit.strip()})" if unit else ""
    ax.set_xlabel(f"{QUANTITY_LABELS[q]}, arm − attention{in_unit}; better: {better} of 0", fontsize=9)
    ax.set_title(title or f"{TASK_NAMES[table.task]}: paired difference and {100 * (1 - table.alpha):g} % interval\n"
                          f"(filled: Holm-adjusted p < {table.alpha:g} over {table.n_tests} tests)", fontsize=9)
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return describe(fig, "One row per recipe and arm: the mean paired difference from attention with its "
                    "interval, filled where the adjusted test is significant, against a line at no difference.")


def _recipes_words(recipes):
    return "; ".join(recipe_label(r) for r in recipes)


def recipe_verdict_text(table: RecipeTable, verdicts: dict, expected_arms=None) -> str:
    """The verdict, one paragraph (Markdown bullet) per arm, written from ``table`` and :func:`recipe_verdict`.

    Says where the arm helps, hurts or cannot be told apart from attention after
    Holm's correction over the table's tests (their number is stated), which
    recipe factor decides the sign when the sign depends on the recipe, and, for
    an arm whose unadjusted p is below alpha but whose adjusted p is not, that the
    nominal result does not survive the correction. Arms of ``expected_arms`` with no
    committed runs are named as not run yet.
    """
    table = _check_table(table)
    if not isinstance(verdicts, dict) or not all(isinstance(v, ArmVerdict) for v in verdicts.values()):
        raise ValueError("verdicts must be the dict returned by probdr_lite.experiments.stats.recipe_verdict()")
    name = TASK_NAMES[table.task]
    n_recipes = len({recipe_label(e["recipe"]) for e in table.entries if e["outcome"] is not None})
    own = table.extra.get("tests_in_table", table.n_tests)
    family = (f"Holm-corrected at {table.alpha:g} over these {table.n_tests}" if own == table.n_tests else
              f"Holm-corrected at {table.alpha:g} together with the other model's tests, {table.n_tests} in all")
    lines = [f"{name.capitalize()}: {own} paired tests ({QUANTITY_LABELS[table.quantity]}, every "
             f"(recipe, arm) against attention over {plural(n_recipes, 'recipe')}), "
             f"{family}."
             + (" With one recipe tested, the data cannot say whether the recipe decides any arm's sign."
                if n_recipes == 1 else "")]
    for arm, v in verdicts.items():
        op = ARM_STYLE[arm]["math"]
        es = [e for e in table.entries if e["arm"] == arm and e["outcome"] is not None]
        if not es:
            lines.append(f"- **{op}**: no recipe has two or more paired seeds yet.")
            continue
        counts = {o: len(getattr(v, o.replace(" ", "_"))) for o in OUTCOMES}
        tested = sum(counts.values())
        if v.sign_depends_on_recipe:
            head = f"**{op}: the sign depends on the recipe.** It helps in {_recipes_words(v.helps)} and hurts in " \
                   f"{_recipes_words(v.hurts)}."
            if v.deciding_factors:
                head += " The factor that separates them: " + ", ".join(FACTOR_WORDS[f] for f in v.deciding_factors) + "."
            else:
                head += " No single recipe factor separates the two groups."
        elif tested == 1:
            outcome = {"hurts": "hurts", "helps": "helps", "cannot tell": "cannot be told from attention"}[
                next(o for o in OUTCOMES if counts[o])]
            head = f"**{op} {outcome} in the one recipe tested so far** ({recipe_label(es[0]['recipe'])})."
        elif counts["hurts"] == tested:
            head = f"**{op} hurts in every tested recipe** ({tested} of {tested})."
        elif counts["helps"] == tested:
            head = f"**{op} helps in every tested recipe** ({tested} of {tested})."
        elif counts["cannot tell"] == tested:
            head = f"**{op}: the data cannot tell it from attention in any tested recipe** ({tested})."
        else:
            parts = [f"{o} in {counts[o]}" for o in OUTCOMES if counts[o]]
            head = f"**{op}: {', '.join(parts)} of {tested} tested recipes.**"
            if v.hurts:
                head += f" Hurts: {_recipes_words(v.hurts)}."
            if v.helps:
                head += f" Helps: {_recipes_words(v.helps)}."
        if tested == 1 and n_recipes > 1:
            head += " With one recipe tested, the data cannot say whether the recipe decides its sign."
        elif tested > 1 and not v.sign_depends_on_recipe:
            signs = v.mean_signs
            if signs["better"] and signs["worse"]:
                factor = (" Among the mean differences, " + ", ".join(FACTOR_WORDS[f] for f in v.mean_sign_factors)
                          + " separates better from worse." if v.mean_sign_factors else "")
                head += (f" Its mean difference is better than attention's in {signs['better']} and worse in "
                         f"{signs['worse']} of {tested} recipes; that the sign changes with the recipe is not "
                         f"confirmed by any test that survives the correction.{factor}")
            else:
                direction = "better" if signs["better"] else "worse"
                head += f" Its mean difference is {direction} than attention's in all {tested}."
        nominal = [e for e in es if e["t_pvalue"] < table.alpha and e["holm_pvalue"] >= table.alpha]
        for e in nominal:
            where = "Its" if tested == 1 else f"In {recipe_label(e['recipe'])} its"
            head += (f" {where} unadjusted p = {_p(e['t_pvalue'])} "
                     f"({_num(e['mean_diff'], table.quantity)}) would read as "
                     f"{'helps' if e['n_better'] > e['n_worse'] else 'hurts'}, but it is one of "
                     f"{table.n_tests} tests: Holm's adjusted p = {_p(e['holm_pvalue'])}, so it is not a finding.")
        helped = [e for e in es if e["outcome"] == "helps"]
        if helped and table.n_tests > 1:
            head += (f" (Its \"helps\" survives Holm's correction over {table.n_tests} tests: adjusted p = "
                     + ", ".join(_p(e["holm_pvalue"]) for e in helped) + ".)")
        if v.pending:
            head += f" Pending: {_recipes_words(v.pending)}."
        lines.append("- " + head)
    for arm in expected_arms or ():
        if arm not in verdicts and arm != table.baseline:
            lines.append(f"- **{ARM_STYLE[arm]['math']}**: not run yet, so there is no verdict.")
    return "\n".join(lines)


def pending_text(status: list, grid_name: str, task: str) -> str:
    """Which recipe cells of a grid are complete, partial or not run, and the command that fills them in."""
    if not isinstance(status, list):
        raise ValueError("status must be the list returned by probdr_lite.experiments.sweep.grid_status()")
    complete = [s for s in status if s["complete"]]
    partial = [s for s in status if 0 < s["n_done"] < s["n_runs"]]
    empty = [s for s in status if s["n_done"] == 0]
    name = TASK_NAMES[task]
    text = (f"**{name.capitalize()}, grid `{grid_name}`:** {len(complete)} of {len(status)} recipe cells "
            f"complete")
    if complete:
        text += " (" + "; ".join(recipe_label(s["recipe"]) for s in complete) + ")"
    text += "."
    for s in partial:
        missing = [f"{ARM_STYLE[a]['math']} ({plural(len(seeds), 'seed')})" for a, seeds in s["seeds_done"].items()
                   if len(seeds) < s["n_runs"] // len(s["seeds_done"])]
        text += f" Partial: {recipe_label(s['recipe'])}, {s['n_done']} of {s['n_runs']} runs; short: {', '.join(missing)}."
    if empty:
        text += f" Pending (not run yet): {plural(len(empty), 'recipe cell')}, " + "; ".join(
            recipe_label(s["recipe"]) for s in empty) + "."
    if partial or empty:
        text += (f" They run with `python -m probdr_lite.experiments grid {grid_name} --threads 1` "
                 f"(resumable; `--estimate` prints the CPU hours first).")
    return text


def provenance_text(info: dict) -> str:
    """How the rows summarised by :func:`probdr_lite.experiments.files.rows_provenance` were made."""
    if not isinstance(info, dict) or "n_rows" not in info:
        raise ValueError("info must be the dict returned by probdr_lite.experiments.files.rows_provenance()")
    commits = ", ".join(c[:10] for c in info["git_commits"])
    seeds = "; ".join(f"{ARM_STYLE[a]['math']}: {', '.join(map(str, s))}" for a, s in info["seeds"].items())
    return (f"{info['n_rows']} runs of the {TASK_NAMES[info['task']]} in {plural(len(info['recipes']), 'recipe')}; "
            f"seeds per arm {seeds}; "
            f"torch {', '.join(info['torch_versions'])} on {'; '.join(info['devices'])}; "
            f"git commit{'s' if len(info['git_commits']) != 1 else ''} {commits}; from {info['first_timestamp']} "
            f"to {info['last_timestamp']}; {info['train_hours']:.1f} CPU hours in training steps, "
            f"{info['wall_hours']:.1f} in all.")


def nanogpt_text(gap: dict, n_seeds: int, published: float = 1.88) -> str:
    """Our baseline against nanoGPT's published loss, worded from :func:`~probdr_lite.experiments.stats.nanogpt_gap`."""
    if not isinstance(gap, dict) or "sd_one_run" not in gap:
        raise ValueError("gap must be the dict returned by probdr_lite.experiments.stats.nanogpt_gap()")
    text = (f"Our attention arm ends {gap['gap']:+.3f} nats from nanoGPT's published {published:.2f}, "
            f"{gap['gap_in_seed_sd']:.1f} times our seed-to-seed sd ({gap['seed_sd']:.4f}, {n_seeds} seeds). "
            f"But the two numbers are not measured alike: nanoGPT's comes from one seed and "
            f"{gap['their_eval_iters']} validation batches, ours are means over {gap['our_eval_iters']} batches. "
            f"One batch's loss has sd {gap['batch_sd']:.3f} (measured), so a {gap['their_eval_iters']}-batch "
            f"estimate has sd {gap['their_batch_sd']:.4f} against {gap['our_batch_sd']:.4f} for ours, and one "
            f"nanoGPT-style number scatters by sd {gap['sd_one_run']:.4f} around the recipe's mean. ")
    if gap["within"]:
        text += (f"After the rounding to two decimals the gap is {gap['z']:.1f} such standard deviations "
                 f"(our mean's own uncertainty included): within what one run evaluated on "
                 f"{gap['their_eval_iters']} batches can produce.")
    else:
        text += (f"After the rounding to two decimals the gap is still {gap['z']:.1f} such standard deviations "
                 f"(our mean's own uncertainty included), more than one run evaluated on "
                 f"{gap['their_eval_iters']} batches plausibly produces: a real difference between the two "
                 f"implementations or setups, not noise.")
    return text


def overview_markdown(directory=None, grids=None) -> str:
    """What is committed, how it was made, and which recipe cells of each grid are still pending (Markdown)."""
    from probdr_lite.experiments.files import rows_provenance, task_rows
    from probdr_lite.experiments.sweep import get_grid, grid_status

    grids = {"charlm": "charlm", "vit": "vit"} if grids is None else grids
    parts = []
    for task, grid_name in grids.items():
        rows = task_rows(task, directory)
        name = TASK_NAMES[task].capitalize()
        if rows:
            parts.append(f"**{name}.** " + provenance_text(rows_provenance(rows)))
        else:
            parts.append(f"**{name}.** No results are committed yet; nothing is estimated in their place.")
        parts.append(pending_text(grid_status(get_grid(grid_name), directory), grid_name, task))
    return "\n\n".join(parts)


def nanogpt_markdown(charlm_rows, spread, published: float = 1.88) -> str:
    """The nanoGPT comparison for the base recipe's attention arm, from the rows and the measured batch spread."""
    from probdr_lite.experiments.stats import nanogpt_gap

    base = [r for r in charlm_rows if r["variant"] == "attention"]
    if len({json.dumps(r["config"], sort_keys=True) for r in base}) != 1:
        raise ValueError("charlm_rows must hold the attention arm of exactly one recipe")
    vals = [r["final_val_loss"] for r in base]
    mean, sd = float(sum(vals) / len(vals)), float(statistics.stdev(vals)) if len(vals) > 1 else float("nan")
    if spread is None:
        gap = mean - published
        return (f"Our attention arm ends {gap:+.3f} nats from nanoGPT's published {published:.2f} "
                f"({gap / sd:.1f} seed sd over {len(vals)} seeds). Whether that is noise depends on how much a "
                f"20-batch estimate (nanoGPT's) scatters, and that measurement "
                f"(`python -m probdr_lite.experiments eval-spread`) is not committed yet, so this page does not "
                f"judge the gap.")
    g = nanogpt_gap(mean, sd, len(vals), spread["batch_sd"],
                    our_eval_iters=base[0]["config"]["eval_iters"], published=published)
    return nanogpt_text(g, len(vals), published) + (
        f" (Batch spread measured on {spread['n_batches']:,} validation batches of a trained seed-{spread['seed']} "
        f"model.)")


def _plateau_rows(rows) -> list:
    rows = [rows] if isinstance(rows, dict) else list(rows)
    if not rows:
        raise ValueError("rows must hold at least one ViT results row trained with the plateau rule")
    for row in rows:
        if not (isinstance(row, dict) and row.get("task") == "vit" and row.get("config", {}).get("patience")):
            raise ValueError("rows must be ViT results rows trained with the plateau rule (patience > 0)")
    if len({r["variant"] for r in rows}) != 1:
        raise ValueError("rows must all be of one arm")
    return sorted(rows, key=lambda r: r["seed"])


def plateau_figure(rows):
    """ViT runs of one arm with the plateau rule (one row or several seeds): validation loss and accuracy per
    epoch, each seed's lowest validation loss marked with a dotted line and its stop as the end of its curve."""
    rows = _plateau_rows(rows)
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.3))
    colour = ARM_STYLE[rows[0]["variant"]]["colour"]
    styles = ("-", "--", "-.", ":")
    for k, row in enumerate(rows):
        curve = np.asarray(row["curve"], dtype=float)
        epochs = np.arange(len(curve))
        best = int(np.argmin(curve[:, 2]))
        for ax, j in ((axes[0], 2), (axes[1], 3)):
            ax.plot(epochs, curve[:, j], color=colour, ls=styles[k % len(styles)], marker="o", ms=2,
                    label=f"seed {row['seed']}: stopped after epoch {row['epochs_run']}")
            ax.axvline(best, color="0.4", ls=":", lw=1,
                       label=f"seed {row['seed']}: lowest validation loss (epoch {best})")
    for ax, label in ((axes[0], "validation loss"), (axes[1], "validation accuracy")):
        ax.set_xlabel("epoch")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    if min(r["curve"][-1][3] for r in rows) > 0.9:
        axes[1].set_ylim(0.9, 1.0)
    axes[0].legend(fontsize="x-small", frameon=False)
    config = rows[0]["config"]
    seeds = "seed " + str(rows[0]["seed"]) if len(rows) == 1 else f"{len(rows)} seeds"
    fig.suptitle(f"{ARM_STYLE[rows[0]['variant']]['label']}, {seeds}: the plateau rule (at most "
                 f"{config['epochs']} epochs, patience {config['patience']})", fontsize=10)
    fig.tight_layout()
    return describe(fig, "Validation loss and accuracy per epoch of each seed's run under the plateau rule, each "
                    "seed's lowest validation loss marked with a dotted line.")


def plateau_text(rows) -> str:
    """One sentence per plateau-rule run of one arm (best epoch, stop, accuracy), then the mean final accuracy."""
    rows = _plateau_rows(rows)
    parts = []
    for row in rows:
        best = min(range(len(row["curve"])), key=lambda i: row["curve"][i][2])
        parts.append(f"seed {row['seed']}: lowest validation loss {row['curve'][best][2]:.3f} after epoch {best}, "
                     f"stopped after epoch {row['epochs_run']}, final accuracy {100 * row['final_val_acc']:.2f} %")
    accs = [100 * r["final_val_acc"] for r in rows]
    text = f"{ARM_STYLE[rows[0]['variant']]['math']} with the plateau rule: " + "; ".join(parts) + "."
    if len(rows) > 1:
        text += (f" Final accuracy {statistics.mean(accs):.2f} % (sd {statistics.stdev(accs):.2f}, "
                 f"{len(rows)} seeds).")
    return text


def last_epoch_text(changes: dict, metric: str = "val_acc") -> str:
    """One sentence from :func:`~probdr_lite.experiments.stats.last_epoch_change`: still improving or not."""
    if not changes:
        raise ValueError("changes must name at least one arm")
    unit = "points" if metric == "val_acc" else "nats"
    k = 100.0 if metric == "val_acc" else 1.0
    parts = [f"{ARM_STYLE[v]['math']} {k * c:+.2f}" for v, c in changes.items()]
    better = [v for v, c in changes.items() if (c > 0 if metric == "val_acc" else c < 0)]
    verdict = ("every arm was still improving when training stopped" if len(better) == len(changes) else
               f"{len(better)} of {len(changes)} arms were still improving when training stopped")
    return f"Change over the last epoch ({unit}): {', '.join(parts)}; {verdict}."


def closing_note(tables: dict, rows: dict, arm: str = "diffusion") -> str:
    """Per recipe, the attention baseline and the paired ``arm`` difference with its interval; the CPU hours used.

    ``tables`` maps task to :class:`~probdr_lite.experiments.stats.RecipeTable`, ``rows`` task to its rows.
    """
    lines = []
    for task, table in tables.items():
        _check_table(table)
        q = table.quantity
        for e in table.entries:
            if e["arm"] != arm:
                continue
            base = (f"{100 * e['baseline_mean']:.2f} %" if q.endswith("acc") else f"{e['baseline_mean']:.4f}")
            lines.append(f"- {TASK_NAMES[task]}, {recipe_label(e['recipe'])}: attention {QUANTITY_LABELS[q]} {base}; "
                         f"{ARM_STYLE[arm]['math']} − attention {_num(e['mean_diff'], q)} "
                         f"[{_num(e['ci_low'], q)}, {_num(e['ci_high'], q)}] over {plural(e['n'], 'paired seed')}")
    all_rows = [r for task_rows_ in rows.values() for r in task_rows_]
    train = sum(r["train_seconds"] for r in all_rows) / 3600
    wall = sum(r["wall_seconds"] for r in all_rows) / 3600
    lines.append(f"- CPU time of the {len(all_rows)} committed runs: {train:.1f} hours in training steps, "
                 f"{wall:.1f} hours in all (one thread each, on a shared 2-core machine).")
    return "\n".join(lines)
