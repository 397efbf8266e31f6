"""What every training run needs besides its model: device, threads, provenance.

Kept apart from the models so that :mod:`.charlm` and :mod:`.vit` read as the
model and its training loop only.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from dataclasses import asdict, fields
from datetime import datetime, timezone
from pathlib import Path

import torch

from .._validation import check_choice, check_scalar

DEVICES = ("auto", "cpu", "cuda")


class ConfigDict:
    """Round trip of a config dataclass through a plain dict (the results rows store configs as dicts)."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict):
        """Build a config from a dict, refusing unknown keys (a typo would otherwise be ignored)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown {cls.__name__} field(s) {unknown}; known fields: {sorted(known)}")
        return cls(**d)

    def check_shared_fields(self) -> None:
        """Check (and normalise) the model and optimiser fields that every training config has."""
        if self.n_embd % self.n_head != 0:
            raise ValueError(f"n_embd must be divisible by n_head; got n_embd={self.n_embd}, n_head={self.n_head}")
        self.dropout = check_scalar(self.dropout, "dropout", low=0, high=1, high_inclusive=False)
        self.init_std = check_scalar(self.init_std, "init_std", low=0, high=10, low_inclusive=False)
        self.lr = check_scalar(self.lr, "lr", low=0, high=10, low_inclusive=False)
        self.min_lr = check_scalar(self.min_lr, "min_lr", low=0, high=self.lr)
        self.beta1 = check_scalar(self.beta1, "beta1", low=0, high=1, high_inclusive=False)
        self.beta2 = check_scalar(self.beta2, "beta2", low=0, high=1, high_inclusive=False)
        self.weight_decay = check_scalar(self.weight_decay, "weight_decay", low=0, high=10)
        self.grad_clip = check_scalar(self.grad_clip, "grad_clip", low=0, high=1e6)


def resolve_device(device: str = "auto") -> str:
    """Return ``"cuda"`` or ``"cpu"``: ``auto`` picks CUDA when torch sees a GPU.

    Asking for ``cuda`` on a machine without one raises ``ValueError`` rather
    than silently training on the CPU.
    """
    check_choice(device, "device", DEVICES)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was requested but torch sees no CUDA GPU; use --device cpu or auto")
    return device


def default_threads() -> int:
    """Intra-op threads for a CPU run: the cores this process may use, at most 8.

    These models are small (128 wide), so more than a handful of threads only
    adds synchronisation overhead.
    """
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS / Windows
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def set_threads(threads: int | None) -> int:
    """Set torch's intra-op thread count (``None`` or 0: :func:`default_threads`); return it."""
    if threads is None or threads == 0:
        threads = default_threads()
    threads = check_scalar(threads, "threads", low=1, high=1024, integer=True)
    torch.set_num_threads(threads)
    return threads


def git_commit() -> str:
    """``git rev-parse HEAD`` of the repository holding this package, or ``"unknown"``."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else "unknown"


def provenance(device: str, threads: int, command: str | None = None) -> dict:
    """Versions, machine, command line and time of a run, for its results row.

    ``command`` defaults to this process's own ``sys.argv``; :func:`main` passes
    the argument list it actually parsed (which differs when called from Python).
    """
    if device == "cuda":
        device_name = f"cuda ({torch.cuda.get_device_name(0)})"
    else:
        device_name = f"cpu ({platform.processor() or platform.machine()}, {threads} threads)"
    return {
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "device": device_name,
        "threads": int(threads),
        "git_commit": git_commit(),
        "command": command if command is not None else shlex.join(sys.argv),
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
