"""Command line: ``python -m probdr_lite.experiments {charlm,vit,sweep} ...`` (or ``probdr-experiments``).

Examples::

    python -m probdr_lite.experiments charlm --variant diffusion --seed 3 --out runs.json
    python -m probdr_lite.experiments vit --variant symmetric --epochs 2
    python -m probdr_lite.experiments sweep --task charlm --variants attention,diffusion,gated \\
        --seeds 0,1,2,3,4 --out probdr_lite/results/charlm_cpu.json --threads 1 --quiet

Every field of :class:`.charlm.CharLMConfig` / :class:`.vit.ViTConfig` is an
option (``--max-iters``, ``--n-embd``, ``--epochs``, ``--standard-split``...);
``--iters`` is a short name for charlm's ``--max-iters``. A sweep runs
every variant for each seed in turn (seed-major, so a sweep cut short leaves
complete pairs), appending one row per run to ``--out`` (a JSON list, schema in
:mod:`.results`). Bad input exits with status 2 and a message naming the
option and the allowed values.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import MISSING, fields

from ._runtime import DEVICES, resolve_device
from .attention import check_variant
from .charlm import CharLMConfig, train_charlm
from .results import append_results, load_results
from .vit import ViTConfig, train_vit

TASKS = {"charlm": (CharLMConfig, train_charlm, "max_iters"), "vit": (ViTConfig, train_vit, None)}


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m probdr_lite.experiments",
        description="Train the character LM or the MNIST ViT with A, A - I, A - gI (or symmetric) attention.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{charlm,vit,sweep}")
    for task, (config_cls, _, iters_field) in TASKS.items():
        sp = sub.add_parser(task, help=f"one {task} run", description=f"Train one {task} arm for one seed.")
        sp.add_argument("--variant", default="attention",
                        help="attention, diffusion, gated" + (" or symmetric" if task == "vit" else "")
                        + " [attention]")
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
    return parser


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


def main(argv=None) -> int:
    """Entry point of ``python -m probdr_lite.experiments`` and ``probdr-experiments``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = "python -m probdr_lite.experiments " + shlex.join(argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
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
        if args.threads < 0:
            raise ValueError(f"--threads must be >= 0; got {args.threads}")
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
                n = append_results(args.out, [row])
                _say(args.quiet, _describe(row) + f" -> {args.out} ({n} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
