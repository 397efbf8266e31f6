"""The recipe grids of the trained-transformers chapter and a resumable runner for them.

A verdict about an architecture should not be a verdict about one optimiser
setting. A *grid* crosses the recipe factors (:data:`.results.RECIPE_FACTORS`)
with every arm and several paired seeds; each (recipe, arm, seed) is one run
and one results row. The grids:

``vit``
    initialisation (``gpt2``, ``default``) x peak learning rate (1e-3, 3e-3)
    x schedule (warm-up + cosine, one-cycle) x budget (10 epochs; the plateau
    rule: at most 60 epochs, stopped when the 2,000-image validation loss has not
    improved for 5 epochs) = 16 recipes, x 5 arms x 5 seeds. The recipes are
    ordered one factor at a time first (the first sweep's recipe, then each
    factor changed alone); runs go seed by seed across the recipes, so a sweep
    cut short leaves every cell with the same number of paired seeds.
``vit-ofat``
    only those first 5 recipes; the plateau cell, the largest, with 3 seeds.
``charlm``
    initialisation x learning rate (1e-3, 3e-3) with nanoGPT's 2,000 iterations,
    and nanoGPT's recipe run for 5,000 iterations: 5 recipes x 3 arms x 5 seeds
    (3 seeds for 5,000 iterations).
``charlm-ofat``
    only nanoGPT's recipe and each of initialisation and learning rate changed alone.
``vit-plateau``
    both initialisations trained to the plateau under the rule that ends its
    schedule (:data:`PLATEAU_DECAY`: once the validation loss has not improved
    for 5 epochs, the learning rate decays to its minimum over 5 more), with
    every arm including both gated arms; 5 seeds for PyTorch's default
    initialisation, 3 for the GPT-2 one.
``charlm-5k``
    the character model for 5,000 iterations with PyTorch's default
    initialisation and with the GPT-2 one (nanoGPT's recipe run longer), every
    arm including both gated arms, 3 seeds.
``charlm-vo`` and ``vit-vo``
    the intervention on the scale of W_V W_O (:data:`.attention.VO_SCALE`): the
    GPT-2 initialisation with only W_V and W_O drawn at PyTorch's default scale,
    and PyTorch's default with W_V and W_O drawn at GPT-2's, in each model's
    first recipe (2,000 iterations; 10 epochs), attention and A - I, 3 paired
    seeds. Their rows go to their own files (:data:`.files.INTERVENTION_FILES`),
    so the recipe tables and their multiple-testing family stay as they were.
``tiny``
    2 recipes x 2 arms of a few steps (the unit tests run it).

:func:`run_grid` skips every (recipe, arm, seed) already present in the
results files (the committed first sweep counts: it is the first cell of each
grid), so the command can be stopped and restarted. :func:`estimate_hours`
turns measured seconds per epoch / iteration into the CPU hours a grid needs.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validation import check_choice
from .attention import CAUSAL_VARIANTS, VARIANTS, VO_SCALE
from .charlm import train_charlm
from .configs import CharLMConfig, ViTConfig
from .files import INTERVENTION_FILES, RECIPE_FILES, results_dir, task_rows
from .results import LOCK_TIMEOUT, load_results, recipe_of, save_rows
from .vit import train_vit

#: The plateau budget of the ViT grid: the most epochs and the patience of the early-stopping rule.
PLATEAU = {"epochs": 60, "patience": 5}
#: The plateau rule that ends its schedule: as PLATEAU, then the learning rate decays to its minimum over 5 epochs.
PLATEAU_DECAY = {**PLATEAU, "decay_epochs": 5}
FIXED_BUDGET = {"epochs": 10, "patience": 0}
#: The arms the first grids were planned with (before the gated arm that starts at g = 1).
FIRST_VIT_ARMS = ("attention", "diffusion", "gated", "sym-normalised", "symmetric")
FIRST_LM_ARMS = ("attention", "diffusion", "gated")


@dataclass(frozen=True)
class Grid:
    """A named recipe grid: the task, the recipes (config overrides), the arms and the seeds."""

    name: str
    task: str
    recipes: tuple  # of dicts of config overrides
    arms: tuple
    seeds: tuple = (0, 1, 2, 3, 4)
    base: dict = field(default_factory=dict)  # overrides shared by every recipe (the tiny grid's small model)
    description: str = ""
    large_seeds: tuple = ()  # seeds of the largest cells (the plateau rule, 5,000 iterations); () = ``seeds``
    cell_seeds: tuple = ()  # the seeds of each recipe, in the order of ``recipes``; () = the rule above
    file: str = ""  # the results file its rows go to; "" = the task's recipe file (:data:`.files.RECIPE_FILES`)
    study: str = ""  # written into every row as its ``study`` (:data:`.results.STUDIES`); "" = no field (exploratory)

    def config(self, recipe: dict):
        cls = CharLMConfig if self.task == "charlm" else ViTConfig
        return cls(**{**self.base, **recipe})

    def seeds_of(self, recipe: dict) -> tuple:
        """The seeds of one recipe cell: its ``cell_seeds`` entry if given; else ``large_seeds`` for the largest
        cells when set, and ``seeds`` for the others."""
        if self.cell_seeds:
            return tuple(self.cell_seeds[self.recipes.index(recipe)])
        large = recipe.get("patience", 0) > 0 or recipe.get("max_iters", 0) >= 5000
        return self.large_seeds if (large and self.large_seeds) else self.seeds

    def runs(self):
        """Every (config, arm, seed) of the grid: seed-major, then recipe, then arm.

        Seed-major order means a sweep stopped early leaves every recipe cell
        with the same number of complete paired seeds, and the arms of one
        (recipe, seed) pair run together.
        """
        configs = [(recipe, self.config(recipe)) for recipe in self.recipes]
        for seed in sorted(set(self.seeds) | set(self.large_seeds) | {s for c in self.cell_seeds for s in c}):
            for recipe, config in configs:
                if seed in self.seeds_of(recipe):
                    for arm in self.arms:
                        yield config, arm, seed


def _ofat_first(base: dict, levels: dict) -> tuple:
    """The full factorial of ``levels``, ordered: ``base``, each factor changed alone, then the rest."""
    names = list(levels)
    combos = [dict(zip(names, values)) for values in itertools.product(*levels.values())]
    base_key = {n: base[n] for n in names}

    def changed(c):
        return sum(c[n] != base_key[n] for n in names)

    ordered = sorted(combos, key=lambda c: (changed(c), [levels[n].index(c[n]) for n in names]))
    out = []
    for c in ordered:
        flat = {}
        for n, v in c.items():
            flat.update(v if isinstance(v, dict) else {n: v})
        out.append(flat)
    return tuple(out)


_VIT_LEVELS = {"init": ["gpt2", "default"], "lr": [3e-3, 1e-3], "schedule": ["cosine", "onecycle"],
               "budget": [FIXED_BUDGET, PLATEAU]}
_VIT_BASE = {"init": "gpt2", "lr": 3e-3, "schedule": "cosine", "budget": FIXED_BUDGET}
_VIT_RECIPES = _ofat_first(_VIT_BASE, _VIT_LEVELS)
_LM_LEVELS = {"init": ["gpt2", "default"], "lr": [1e-3, 3e-3]}
_LM_RECIPES = (*_ofat_first({"init": "gpt2", "lr": 1e-3}, _LM_LEVELS), {"max_iters": 5000})

#: The arms of the primary family: A - I against plain attention.
PRIMARY_ARMS = ("attention", "diffusion")
#: Paired seeds of a primary early cell (the character model at 2,000 iterations, the ViT at 10 epochs) ...
SEEDS_EARLY = tuple(range(8))
#: ... and of a primary plateau cell and of the intervention.
SEEDS_PLATEAU = tuple(range(5))
_LM_5K = ({"init": "default", "max_iters": 5000}, {"init": "gpt2", "max_iters": 5000})
#: nanoGPT's recipe with PyTorch's default initialisation (found by its factors: _LM_RECIPES[1] is lr 3e-3 with GPT-2's)
_LM_DEFAULT_2K = next(r for r in _LM_RECIPES if r == {"init": "default", "lr": 1e-3})
_VIT_DEFAULT_10 = next(r for r in _VIT_RECIPES if r["init"] == "default" and r["lr"] == 3e-3
                       and r["schedule"] == "cosine" and r["patience"] == 0)
_VIT_PLATEAU_DECAY = ({"init": "default", **PLATEAU_DECAY}, {"init": "gpt2", **PLATEAU_DECAY})

GRIDS = {
    "vit": Grid("vit", "vit", _VIT_RECIPES, FIRST_VIT_ARMS,
                description="ViT: init x lr x schedule x budget (10 epochs, plateau), 5 arms, 5 seeds"),
    "vit-ofat": Grid("vit-ofat", "vit", _VIT_RECIPES[:5], FIRST_VIT_ARMS, large_seeds=(0, 1, 2),
                     description="ViT: the first sweep's recipe and each factor changed alone, 5 arms, 5 seeds "
                                 "(3 for the plateau cell)"),
    "vit-plateau": Grid("vit-plateau", "vit", _VIT_PLATEAU_DECAY,
                        VARIANTS, cell_seeds=((0, 1, 2, 3, 4), (0, 1, 2)),
                        description="ViT: both initialisations under the plateau rule that ends its schedule "
                                    "(decay to the minimum over 5 epochs), 6 arms (both gated arms), 5 seeds "
                                    "(default init) and 3 (gpt2 init)"),
    "charlm": Grid("charlm", "charlm", _LM_RECIPES, FIRST_LM_ARMS, large_seeds=(0, 1, 2),
                   description="character model: init x lr at 2,000 iterations, and 5,000 iterations; "
                               "3 arms, 5 seeds (3 for 5,000 iterations)"),
    "charlm-ofat": Grid("charlm-ofat", "charlm", _LM_RECIPES[:3], FIRST_LM_ARMS,
                        description="character model: nanoGPT's recipe and init or lr changed alone, 3 arms, 5 seeds"),
    "charlm-5k": Grid("charlm-5k", "charlm", _LM_5K,
                      CAUSAL_VARIANTS, seeds=(0, 1, 2),
                      description="character model: both initialisations for 5,000 iterations, 4 arms (both "
                                  "gated arms), 3 seeds"),
    "charlm-vo": Grid("charlm-vo", "charlm", tuple({"init": s} for s in VO_SCALE), ("attention", "diffusion"),
                      seeds=(0, 1, 2), file=INTERVENTION_FILES["charlm"],
                      description="character model, nanoGPT's recipe: W_V and W_O drawn at the other "
                                  "initialisation's scale, attention and A - I, 3 seeds"),
    "vit-vo": Grid("vit-vo", "vit", tuple({"init": s} for s in VO_SCALE), ("attention", "diffusion"),
                   seeds=(0, 1, 2), file=INTERVENTION_FILES["vit"],
                   description="ViT, the first sweep's recipe: W_V and W_O drawn at the other "
                               "initialisation's scale, attention and A - I, 3 seeds"),
    # The power of the primary family (A - I against plain attention): 8 paired seeds in each early cell and 5 in
    # each plateau cell, and 5 for the intervention. Seeds already committed are skipped; "*-rerun" grids repeat the
    # intervention's base cells on the machine that runs the intervention (run with --results-dir pointing at a
    # folder without the committed rows, so none is skipped).
    "charlm-power": Grid("charlm-power", "charlm", (_LM_RECIPES[0], _LM_DEFAULT_2K, *_LM_5K),
                         PRIMARY_ARMS, cell_seeds=(SEEDS_EARLY, SEEDS_EARLY, SEEDS_PLATEAU, SEEDS_PLATEAU),
                         description="character model, the primary cells: both initialisations at 2,000 "
                                     "iterations (8 seeds) and 5,000 (5 seeds), attention and A - I"),
    "vit-power": Grid("vit-power", "vit", (_VIT_RECIPES[0], _VIT_DEFAULT_10, *_VIT_PLATEAU_DECAY), PRIMARY_ARMS,
                      cell_seeds=(SEEDS_EARLY, SEEDS_EARLY, SEEDS_PLATEAU, SEEDS_PLATEAU),
                      description="ViT, the primary cells: both initialisations at 10 epochs (8 seeds) and "
                                  "under the plateau rule that ends its schedule (5 seeds), attention and A - I"),
    "charlm-vo-power": Grid("charlm-vo-power", "charlm", tuple({"init": s} for s in VO_SCALE), PRIMARY_ARMS,
                            seeds=SEEDS_PLATEAU, file=INTERVENTION_FILES["charlm"],
                            description="the charlm-vo intervention with 5 paired seeds"),
    "vit-vo-power": Grid("vit-vo-power", "vit", tuple({"init": s} for s in VO_SCALE), PRIMARY_ARMS,
                         seeds=SEEDS_PLATEAU, file=INTERVENTION_FILES["vit"],
                         description="the vit-vo intervention with 5 paired seeds"),
    "charlm-vo-rerun": Grid("charlm-vo-rerun", "charlm", (_LM_RECIPES[0], _LM_DEFAULT_2K), PRIMARY_ARMS,
                            seeds=SEEDS_PLATEAU,
                            description="the intervention's base cells (both initialisations, nanoGPT's recipe), "
                                        "attention and A - I, 5 seeds, rerun on the intervention's machine"),
    "vit-vo-rerun": Grid("vit-vo-rerun", "vit", (_VIT_RECIPES[0], _VIT_DEFAULT_10), PRIMARY_ARMS,
                         seeds=SEEDS_PLATEAU,
                         description="the intervention's base cells (both initialisations, the first sweep's "
                                     "recipe), attention and A - I, 5 seeds, rerun on the intervention's machine"),
    "tiny": Grid("tiny", "charlm", ({"init": "gpt2"}, {"init": "default"}), ("attention", "diffusion"), (0, 1),
                 base=dict(n_layer=1, n_head=2, n_embd=16, block_size=8, batch_size=4, max_iters=6,
                           warmup_iters=2, eval_interval=3, eval_iters=2),
                 description="test grid: 2 recipes x 2 arms x 2 seeds of a 6-step character model"),
}


def get_grid(name: str) -> Grid:
    return GRIDS[check_choice(name, "grid", tuple(GRIDS))]


def _key(config: dict, arm: str, seed: int) -> tuple:
    return json.dumps(config, sort_keys=True), arm, seed


def done_runs(grid: Grid, out=None, directory=None) -> set:
    """(config json, arm, seed) of every run of ``grid``'s task already in the results files or ``out``."""
    rows = task_rows(grid.task, directory)
    if out is not None and Path(out).is_file() and Path(out).resolve() not in {
            (results_dir(directory) / n).resolve() for n in RECIPE_FILES.values()}:
        rows += [r for r in load_results(out) if r["task"] == grid.task]
    return {_key(r["config"], r["variant"], r["seed"]) for r in rows}


def pending_runs(grid: Grid, out=None, directory=None) -> list:
    """The (config, arm, seed) of ``grid`` that no results file holds yet, in the order they would run."""
    done = done_runs(grid, out, directory)
    return [(c, a, s) for c, a, s in grid.runs() if _key(c.to_dict(), a, s) not in done]


def unit_seconds(rows) -> dict:
    """Measured wall seconds per unit of training from results rows: per arm, the median and the minimum.

    The unit is one epoch (vit, counting ``epochs_run``; evaluation included) or
    one iteration (charlm, evaluation included, at the rows' evaluation
    settings). Returns ``{arm: (median, minimum)}``.
    """
    per = {}
    for r in rows:
        units = r["epochs_run"] if r["task"] == "vit" else r["config"]["max_iters"]
        per.setdefault(r["variant"], []).append(r["wall_seconds"] / units)
    return {arm: (float(np.median(v)), float(np.min(v))) for arm, v in per.items()}


def estimate_hours(runs, seconds: dict, plateau_epochs: float) -> tuple:
    """CPU hours (one thread) of ``runs`` at ``seconds`` per unit: (at the median, at the fastest rate).

    ``seconds`` is :func:`unit_seconds`' output; an arm without measurements
    takes the slowest measured arm's rate. A ViT run with the plateau rule
    counts ``plateau_epochs`` epochs (a measured stop, or its most).
    """
    slowest = max(seconds.values())
    med = fast = 0.0
    for config, arm, _ in runs:
        rate = seconds.get(arm, slowest)
        if isinstance(config, ViTConfig):
            units = plateau_epochs if config.patience else config.epochs
        else:
            units = config.max_iters
        med += units * rate[0]
        fast += units * rate[1]
    return med / 3600, fast / 3600


def run_grid(grid: Grid, out, *, device: str = "cpu", threads: int = 1, quiet: bool = True, command: str = "",
             directory=None, limit: int | None = None, shard: tuple = (0, 1), say=print,
             lock_timeout: float | None = LOCK_TIMEOUT, unsaved: list | None = None) -> list:
    """Run every pending (recipe, arm, seed) of ``grid``, appending each row to ``out`` as it finishes.

    Returns the rows trained. ``limit`` stops after that many runs (None: all).
    ``shard=(i, n)`` runs only the pending runs whose (recipe, seed) pair has
    index i modulo n, so n processes can share a grid without running a cell
    twice and each keeps the arms of a seed together (appends are locked).
    A row that cannot be appended is saved in a file of its own
    (:func:`.results.save_rows`, which prints where, even when ``say`` is
    quiet); its path is added to ``unsaved`` and the grid goes on.
    """
    train = train_charlm if grid.task == "charlm" else train_vit
    i, n = shard
    if not (isinstance(n, int) and isinstance(i, int) and n >= 1 and 0 <= i < n):
        raise ValueError(f"shard must be (i, n) with n >= 1 and 0 <= i < n; got {shard!r}")
    pairs = {}
    for config, _, seed in grid.runs():
        pairs.setdefault((json.dumps(config.to_dict(), sort_keys=True), seed), len(pairs))
    written = []
    for config, arm, seed in pending_runs(grid, out, directory):
        if pairs[(json.dumps(config.to_dict(), sort_keys=True), seed)] % n != i:
            continue
        if limit is not None and len(written) >= limit:
            break
        row = train(config, arm, seed, device=device, threads=threads, quiet=quiet, command=command)
        if grid.study:
            row["study"] = grid.study
        n_rows, saved = save_rows(out, [row], lock_timeout=lock_timeout, say=print)
        written.append(row)
        if n_rows is None:
            if unsaved is not None:
                unsaved.append(saved)
            continue
        say(f"{grid.task} {json.dumps(row['recipe'])} {arm} seed {seed}: final val loss "
            f"{row['final_val_loss']:.4f} ({row['wall_seconds']:.0f} s) -> {out} ({n_rows} rows)")
    return written


def grid_status(grid: Grid, directory=None) -> list:
    """Per recipe of ``grid``: its factors, the seeds done per arm, and whether every (arm, seed) is done.

    Returns a list (in the grid's order) of dicts ``{"recipe", "seeds_done": {arm: [seeds]},
    "complete", "n_done", "n_runs"}``, read from the committed results files.
    """
    rows = task_rows(grid.task, directory)
    by_config = {}
    for r in rows:
        by_config.setdefault(json.dumps(r["config"], sort_keys=True), set()).add((r["variant"], r["seed"]))
    out = []
    for recipe in grid.recipes:
        config = grid.config(recipe)
        have = by_config.get(json.dumps(config.to_dict(), sort_keys=True), set())
        seeds = grid.seeds_of(recipe)
        seeds_done = {arm: sorted(s for a, s in have if a == arm and s in seeds) for arm in grid.arms}
        n_done = sum(len(v) for v in seeds_done.values())
        n_runs = len(grid.arms) * len(seeds)
        out.append({"recipe": recipe_of(grid.task, config.to_dict()), "seeds_done": seeds_done,
                    "complete": n_done == n_runs, "n_done": n_done, "n_runs": n_runs})
    return out
