"""Command line: ``python -m probdr_lite.experiments {charlm,vit,sweep,grid,append,families,confirmatory,eval-spread}``.

Examples::

    python -m probdr_lite.experiments charlm --variant diffusion --seed 3 --out runs.json
    python -m probdr_lite.experiments vit --variant symmetric --epochs 2 --schedule onecycle --init default
    python -m probdr_lite.experiments grid vit --estimate      # the recipe grid: what is pending, CPU hours
    python -m probdr_lite.experiments grid vit --threads 1     # run it (resumable: done rows are skipped)
    python -m probdr_lite.experiments append saved-row.json --out probdr_lite/results/vit_recipes.json
    python -m probdr_lite.experiments families                # the chapter's tests, from the committed rows
    python -m probdr_lite.experiments confirmatory --declare  # the confirmatory round's declaration (Markdown)
    python -m probdr_lite.experiments confirmatory            # its table, once every declared row is in
    python -m probdr_lite.experiments eval-spread --out probdr_lite/results/charlm_eval_spread.json
    python -m probdr_lite.experiments sweep --task charlm --variants attention,diffusion,gated \\
        --seeds 0,1,2,3,4 --out probdr_lite/results/charlm_cpu.json --threads 1 --quiet

Every field of :class:`.charlm.CharLMConfig` / :class:`.vit.ViTConfig` is an
option (``--max-iters``, ``--n-embd``, ``--epochs``, ``--standard-split``...);
``--iters`` is a short name for charlm's ``--max-iters``. A sweep runs
every variant for each seed in turn (seed-major, so a sweep cut short leaves
complete pairs), appending one row per run to ``--out`` (a JSON list, schema in
:mod:`.results`). Bad input exits with status 2 and a message naming the
option and the allowed values.

Nothing computed is lost: before any training, every command that writes a
results file checks that the file is readable and valid, its folder writable
and its lock obtainable (:func:`.results.check_results_file`; exit status 2
and one line if not). If the append fails anyway after a run (the file was
damaged or the folder made read-only meanwhile, or another process held the
lock for longer than ``--lock-timeout``), the row is saved in a file of its own
beside the results file (else in the working directory, else the temporary
folder), one line says where and how to append it later (``append``), the
sweep goes on, and the command exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import MISSING, fields

from ._runtime import DEVICES, resolve_device
from .attention import check_variant
from .charlm import train_charlm
from .configs import CharLMConfig, ViTConfig
from .results import LOCK_TIMEOUT, append_results, check_results_file, load_results, save_rows
from .confirmatory import GRIDS as CONFIRMATORY_GRIDS
from .sweep import GRIDS as RECIPE_GRIDS, PLATEAU, estimate_hours, pending_runs, run_grid, unit_seconds
from .vit import train_vit

TASKS = {"charlm": (CharLMConfig, train_charlm, "max_iters"), "vit": (ViTConfig, train_vit, None)}
#: Every grid the ``grid`` command runs: the exploratory recipe grids and the confirmatory round's.
GRIDS = {**RECIPE_GRIDS, **CONFIRMATORY_GRIDS}


def _add_config_options(parser: argparse.ArgumentParser, config_cls, iters_field: str) -> None:
    """One ``--field-name`` option per config field; unset options keep the dataclass default."""
    group = parser.add_argument_group(f"{config_cls.__name__} overrides (default in brackets)")
    for f in fields(config_cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not MISSING else None
        names = [flag, "--iters"] if f.name == iters_field else [flag]
        if f.type in (bool, "bool"):
            group.add_argument(*names, dest=f.name, action=argparse.BooleanOptionalAction,
                               default=argparse.SUPPRESS, help=f"[{default}]")
        elif f.type in (str, "str"):
            group.add_argument(*names, dest=f.name, type=str, default=argparse.SUPPRESS,
                               metavar="NAME", help=f"[{default}]")
        else:
            typ = int if f.type in (int, "int") else float
            group.add_argument(*names, dest=f.name, type=typ, default=argparse.SUPPRESS,
                               metavar=typ.__name__.upper(), help=f"[{default}]")


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="auto: CUDA when available, else the CPU [auto]")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch CPU threads; 0: the usable cores, at most 8 [0]")
    parser.add_argument("--quiet", action="store_true", help="no progress bars and no messages")
    parser.add_argument("--lock-timeout", type=float, default=LOCK_TIMEOUT,
                        help="seconds to wait for the results file's lock before saving a row elsewhere "
                             "[%(default)s]")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m probdr_lite.experiments",
        description="Train the character LM or the MNIST ViT with A, A - I, A - gI (or, ViT, A_sym, A_sym - I) "
                    "attention; run or estimate a recipe grid; measure the spread of a k-batch loss.")
    sub = parser.add_subparsers(dest="command", required=True,
                                metavar="{charlm,vit,sweep,grid,append,families,confirmatory,eval-spread}")
    for task, (config_cls, _, iters_field) in TASKS.items():
        sp = sub.add_parser(task, help=f"one {task} run", description=f"Train one {task} arm for one seed.")
        sp.add_argument("--variant", default="attention",
                        help="attention, diffusion, gated, gated-from-1"
                        + (", sym-normalised or symmetric" if task == "vit" else "") + " [attention]")
        sp.add_argument("--seed", type=int, default=0, help="[0]")
        sp.add_argument("--out", default=None,
                        help="results file (JSON list) to append the row to; default: print the row as JSON")
        _add_run_options(sp)
        _add_config_options(sp, config_cls, iters_field)
    sp = sub.add_parser("sweep", help="arms x seeds, appended to a results file",
                        description="Run every variant for every seed; config overrides follow the task's options.")
    sp.add_argument("--task", choices=tuple(TASKS), required=True)
    sp.add_argument("--variants", default="attention,diffusion,gated", help="comma-separated [%(default)s]")
    sp.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated, ranges like 0-4 allowed [%(default)s]")
    sp.add_argument("--out", required=True, help="results file (JSON list), created or appended to")
    sp.add_argument("--skip-existing", action="store_true",
                    help="skip (variant, seed) pairs already in --out with the same configuration")
    _add_run_options(sp)
    sp = sub.add_parser("grid", help="a recipe grid x arms x seeds (resumable)",
                        description="Run a named recipe grid; rows already in the results files are skipped.")
    sp.add_argument("name", choices=tuple(GRIDS), help="; ".join(f"{g.name}: {g.description}" for g in GRIDS.values()))
    sp.add_argument("--out", default=None,
                    help="results file to append to [the grid's own file, else probdr_lite/results/<task>_recipes.json]")
    sp.add_argument("--estimate", action="store_true", help="print what is pending and its CPU hours, run nothing")
    sp.add_argument("--limit", type=int, default=None, help="stop after this many runs")
    sp.add_argument("--shard", default="0/1",
                    help="I/N: run only the (recipe, seed) pairs with index I modulo N, so N processes can share "
                         "the grid [0/1]")
    sp.add_argument("--results-dir", default=None, help="folder of the results files [probdr_lite/results]")
    _add_run_options(sp)
    sp = sub.add_parser("append", help="append saved rows (a row file a failed write left) to a results file",
                        description="Append the rows of results files (e.g. the '.unsaved-...' file a run saved "
                                    "when its results file could not be written) to --out.")
    sp.add_argument("rows", nargs="+", help="results files whose rows to append")
    sp.add_argument("--out", required=True, help="results file to append to")
    sp.add_argument("--lock-timeout", type=float, default=LOCK_TIMEOUT, help="[%(default)s]")
    sp = sub.add_parser("families", help="the chapter's families of tests, from the committed rows, as Markdown",
                        description="Print the interaction test, the primary family and the intervention family of "
                                    "the trained-transformers chapter, computed from the committed results files.")
    sp.add_argument("--results-dir", default=None, help="folder of the results files [probdr_lite/results]")
    sp = sub.add_parser("confirmatory", help="the confirmatory round: its declaration, or its table once complete",
                        description="Print the confirmatory round's declaration (--declare), or, once every declared "
                                    "run is in, its table of verdicts.")
    sp.add_argument("--declare", action="store_true", help="print the declaration as Markdown")
    sp.add_argument("--results-dir", default=None, help="folder of the results files [probdr_lite/results]")
    sp = sub.add_parser("eval-spread", help="spread of a k-batch validation loss (nanoGPT's 20 vs our 200)",
                        description="Train charlm's attention arm and measure the loss of many single batches.")
    sp.add_argument("--seed", type=int, default=0, help="[0]")
    sp.add_argument("--n-batches", type=int, default=1000, help="[1000]")
    sp.add_argument("--out", required=True, help="JSON file to write")
    _add_run_options(sp)
    return parser


def grid_estimate(grid, out=None, directory=None) -> dict:
    """Pending runs of ``grid`` and their CPU hours from the seconds per epoch / iteration of committed rows."""
    from .files import task_rows

    rows = task_rows(grid.task, directory)
    pending = pending_runs(grid, out, directory)
    total = list(grid.runs())
    plateau = [r["epochs_run"] for r in rows if r["task"] == "vit" and r["config"].get("patience")]
    plateau_epochs = float(sum(plateau) / len(plateau)) if plateau else float(PLATEAU["epochs"])
    seconds = unit_seconds(rows) if rows else {}
    hours = estimate_hours(pending, seconds, plateau_epochs) if seconds else (float("nan"), float("nan"))
    all_hours = estimate_hours(total, seconds, plateau_epochs) if seconds else (float("nan"), float("nan"))
    return {"grid": grid.name, "task": grid.task, "recipes": len(grid.recipes), "runs": len(total),
            "pending": len(pending), "hours_pending": hours, "hours_all": all_hours,
            "plateau_epochs": plateau_epochs, "plateau_measured": bool(plateau), "unit_seconds": seconds}


def _print_estimate(e: dict) -> None:
    unit = "epoch" if e["task"] == "vit" else "iteration"
    print(f"grid {e['grid']}: {e['recipes']} recipes, {e['runs']} runs, {e['pending']} pending")
    for arm, (med, fast) in e["unit_seconds"].items():
        print(f"  measured {arm}: {med:.3g} s per {unit} (median; fastest {fast:.3g} s), evaluation included")
    if e["task"] == "vit":
        src = "measured" if e["plateau_measured"] else "its most, not yet measured"
        print(f"  a plateau-rule ViT run counted as {e['plateau_epochs']:.0f} epochs ({src})")
    if not e["unit_seconds"]:
        print("  no committed rows of this task to time it by; CPU hours unknown", flush=True)
        return
    print(f"  CPU hours (one thread per run): pending {e['hours_pending'][0]:.1f} at the median rate "
          f"({e['hours_pending'][1]:.1f} at the fastest); the whole grid {e['hours_all'][0]:.1f} "
          f"({e['hours_all'][1]:.1f})", flush=True)


def _config_parser(task: str) -> argparse.ArgumentParser:
    config_cls, _, iters_field = TASKS[task]
    p = argparse.ArgumentParser(prog=f"python -m probdr_lite.experiments sweep --task {task}", add_help=False)
    _add_config_options(p, config_cls, iters_field)
    return p


def _parse_seeds(text: str) -> list:
    seeds = []
    for item in text.split(","):
        item = item.strip()
        lo, sep, hi = item.partition("-")
        if not (lo.isdigit() and (not sep or hi.isdigit())):
            raise ValueError(f"--seeds must be non-negative integers or ranges like 0-4, comma-separated; got {text!r}")
        seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds must list each seed once; got {text!r}")
    return seeds


def _say(quiet: bool, msg: str) -> None:
    if not quiet:
        print(msg, flush=True)


def _describe(row: dict) -> str:
    msg = (f"{row['task']} {row['variant']} seed {row['seed']}: final val loss {row['final_val_loss']:.4f}, "
           f"best {row['best_val_loss']:.4f}")
    if row["task"] == "vit":
        msg += f", final val acc {row['final_val_acc']:.4f}"
    return msg + f", {row['throughput']:.0f} {row['throughput_unit']}, {row['wall_seconds']:.0f} s"


def _save(out, row, args, unsaved: list) -> None:
    """Append ``row`` to ``out``, or save it elsewhere and say where (:func:`.results.save_rows`)."""
    n, saved = save_rows(out, [row], lock_timeout=args.lock_timeout, say=print)
    if n is None:
        unsaved.append(saved)
    else:
        _say(args.quiet, _describe(row) + f" -> {out} ({n} rows)")


def _finish(unsaved: list) -> int:
    """Exit status 1 (and one line) when some rows could not be appended, else 0."""
    if unsaved:
        print(f"{len(unsaved)} row(s) could not be appended to their results file; see the lines above",
              flush=True)
        return 1
    return 0


def _check_common(args) -> None:
    if args.threads < 0:
        raise ValueError(f"--threads must be >= 0; got {args.threads}")
    if not args.lock_timeout >= 0:
        raise ValueError(f"--lock-timeout must be >= 0 seconds; got {args.lock_timeout}")


def main(argv=None) -> int:
    """Entry point of ``python -m probdr_lite.experiments`` and ``probdr-experiments``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = "python -m probdr_lite.experiments " + shlex.join(argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command in ("grid", "eval-spread", "append", "families", "confirmatory") and extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "families":
        from .families import format_families
        from .files import intervention_rows, task_rows

        try:
            rows = {task: task_rows(task, args.results_dir) for task in TASKS}
            vo = {task: intervention_rows(task, args.results_dir) for task in TASKS}  # with their base cells
            print(format_families(rows, {task: (r, r) for task, r in vo.items() if r}))
        except ValueError as exc:
            parser.error(str(exc))
        return 0
    if args.command == "confirmatory":
        from . import confirmatory
        from .files import task_rows

        try:
            if args.declare:
                print(confirmatory.declaration({task: task_rows(task, args.results_dir) for task in TASKS}))
            else:
                print(confirmatory.format_table(confirmatory.confirmatory_table(
                    confirmatory.load_rows(args.results_dir))))
        except ValueError as exc:
            parser.error(str(exc))
        return 0
    if args.command == "append":
        try:
            if not args.lock_timeout >= 0:
                raise ValueError(f"--lock-timeout must be >= 0 seconds; got {args.lock_timeout}")
            rows = [r for name in args.rows for r in load_results(name)]
            check_results_file(args.out, lock_timeout=args.lock_timeout)
            n = append_results(args.out, rows, lock_timeout=args.lock_timeout)
        except (ValueError, OSError) as exc:
            parser.error(str(exc))
        print(f"appended {len(rows)} row(s) to {args.out} ({n} rows)", flush=True)
        return 0
    if args.command in ("grid", "eval-spread"):
        try:
            _check_common(args)
            if args.command == "grid" and args.limit is not None and args.limit < 1:
                raise ValueError(f"--limit must be >= 1; got {args.limit}")
            device = resolve_device(args.device)
            shard = (0, 1)
            if args.command == "grid":
                i, sep, n = args.shard.partition("/")
                if not (sep and i.isdigit() and n.isdigit() and 0 <= int(i) < int(n)):
                    raise ValueError(f"--shard must be I/N with 0 <= I < N; got {args.shard!r}")
                shard = (int(i), int(n))
        except ValueError as exc:
            parser.error(str(exc))
        if args.command == "eval-spread":
            from .measure import eval_spread

            try:
                res = eval_spread(seed=args.seed, n_batches=args.n_batches, device=device,
                                  threads=args.threads or None, command=command)
            except (ValueError, TypeError) as exc:
                parser.error(str(exc))
            with open(args.out, "w") as f:
                json.dump(res, f, indent=1)
            _say(args.quiet, f"batch sd {res['batch_sd']:.4f}; sd of a 20-batch mean {res['sd_of_mean']['20']:.4f}, "
                             f"of a 200-batch mean {res['sd_of_mean']['200']:.4f} -> {args.out}")
            return 0
        from .files import RECIPE_FILES, results_dir

        grid = GRIDS[args.name]
        out = args.out or str(results_dir(args.results_dir) / (grid.file or RECIPE_FILES[grid.task]))
        try:
            if not args.estimate:
                check_results_file(out, lock_timeout=args.lock_timeout)
            estimate = grid_estimate(grid, out, args.results_dir)
        except ValueError as exc:
            parser.error(str(exc))
        if not args.quiet or args.estimate:
            _print_estimate(estimate)
        if args.estimate:
            return 0
        unsaved = []
        run_grid(grid, out, device=device, threads=args.threads or None, quiet=True, command=command,
                 directory=args.results_dir, limit=args.limit, shard=shard, say=lambda m: _say(args.quiet, m),
                 lock_timeout=args.lock_timeout, unsaved=unsaved)
        return _finish(unsaved)
    if args.command == "sweep":
        task = args.task
        overrides = vars(_config_parser(task).parse_args(extra))
    else:
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        task = args.command
        overrides = {k: v for k, v in vars(args).items() if k in {f.name for f in fields(TASKS[task][0])}}
    config_cls, train, _ = TASKS[task]
    try:
        _check_common(args)
        config = config_cls(**overrides)
        device = resolve_device(args.device)
        if args.command == "sweep":
            variants = [v.strip() for v in args.variants.split(",")]
            for v in variants:
                check_variant(v, causal=(task == "charlm"))
            if len(set(variants)) != len(variants):
                raise ValueError(f"--variants must list each variant once; got {args.variants!r}")
            seeds = _parse_seeds(args.seeds)
        else:
            variants = [check_variant(args.variant, causal=(task == "charlm"))]
            if args.seed < 0:
                raise ValueError(f"--seed must be >= 0; got {args.seed}")
            seeds = [args.seed]
        if args.out is not None:
            check_results_file(args.out, lock_timeout=args.lock_timeout)  # before any training
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))

    done = set()
    if args.command == "sweep" and args.skip_existing:
        try:
            existing = load_results(args.out)
        except ValueError:
            existing = []
        done = {(r["variant"], r["seed"]) for r in existing
                if r["task"] == task and r["config"] == config.to_dict()}

    unsaved = []
    for seed in seeds:
        for variant in variants:
            if (variant, seed) in done:
                _say(args.quiet, f"{task} {variant} seed {seed}: already in {args.out}, skipped")
                continue
            row = train(config, variant, seed, device=device, threads=args.threads,
                        quiet=args.quiet, command=command)
            if args.out is None:
                print(json.dumps(row))
            else:
                _save(args.out, row, args, unsaved)
    return _finish(unsaved)


if __name__ == "__main__":
    sys.exit(main())
