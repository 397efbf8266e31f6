"""What both training loops share: the optimiser step, evaluation mode, the plateau rule and the results row.

:mod:`.charlm` and :mod:`.vit` differ in their data (random windows of text vs
passes over an image set) and in how they evaluate, but one optimiser step,
the timing of training steps, the early-stopping rule and the results row are
the same code (the plateau rule itself is :mod:`.plateau`). The row is built
here from the run's curve, so its summary numbers (final, best, best-checkpoint
and at-plateau validation metrics) and its schema version are the ones
:mod:`.results` checks.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager

import torch

from .._validation import check_seed
from ._runtime import provenance, resolve_device, set_threads
from .attention import GATE_START, check_variant
from .plateau import Plateau, plateau_index  # noqa: F401  (the loops' early-stopping rule, re-exported)
from .results import CURVE_COLUMNS, SCHEMA_VERSION, TASK_METRICS, derived_fields, recipe_of


def start_run(config, config_class, variant: str, *, causal: bool, seed, device, threads):
    """Check one training run's arguments at the boundary and set its thread count.

    Returns ``(config, variant, seed, device, threads, wall_start)``; ``config=None`` means
    ``config_class()``.
    """
    config = config_class() if config is None else config
    if not isinstance(config, config_class):
        raise TypeError(f"config must be a {config_class.__name__}; got {type(config).__name__}")
    config.validate()
    return (config, check_variant(variant, causal=causal), check_seed(seed), resolve_device(device),
            set_threads(threads), time.perf_counter())


@contextmanager
def evaluating(model: torch.nn.Module):
    """Evaluation mode and no gradients inside the block; the model's previous mode afterwards."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was_training)


class StepClock:
    """Adds up the time spent in training steps only (CUDA is synchronised at both ends of a step)."""

    def __init__(self, device: str):
        self.device = device
        self.seconds = 0.0
        self._t0 = None

    def _sync(self):
        if self.device == "cuda":
            torch.cuda.synchronize()

    def start(self):
        self._sync()
        self._t0 = time.perf_counter()

    def stop(self):
        self._sync()
        self.seconds += time.perf_counter() - self._t0


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor,
               targets: torch.Tensor, *, lr: float, grad_clip: float, what: str, it: int,
               after_backward=None) -> float:
    """One optimiser step at learning rate ``lr``: forward, backward, clip the gradient norm, update.

    ``after_backward(model, lr)``, if given, is called between the backward pass
    and the clipping (it may read the gradients, not change them). Returns the
    training loss of the batch. Raises ``FloatingPointError`` naming the run
    (``what``) and the step when the loss is not finite.
    """
    for group in optimizer.param_groups:
        group["lr"] = lr
    _, loss = model(inputs, targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if after_backward is not None:
        after_backward(model, lr)
    if grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    value = loss.item()
    if not math.isfinite(value):
        raise FloatingPointError(f"{what}: training loss is {value} at step {it}")
    return value


def results_row(task: str, variant: str, seed: int, config, curve: list, *, throughput: float,
                throughput_unit: str, n_params: int, train_seconds: float, wall_start: float,
                device: str, threads: int, command: str | None, gates=None, extra: dict | None = None) -> dict:
    """The results row of one run (schema in :mod:`.results`), its summary numbers taken from ``curve``."""
    columns = CURVE_COLUMNS[task]
    row = {"schema_version": SCHEMA_VERSION, "task": task, "variant": variant, "seed": seed,
           "config": config.to_dict()}
    row["recipe"] = recipe_of(task, row["config"])
    for metric, lower_better in TASK_METRICS[task].items():
        values = [point[columns.index(metric)] for point in curve]
        row[f"final_{metric}"] = values[-1]
        row[f"best_{metric}"] = min(values) if lower_better else max(values)
    row.update({
        "curve_columns": list(columns),
        "curve": curve,
        "throughput": throughput,
        "throughput_unit": throughput_unit,
        "n_params": int(n_params),
        "train_seconds": train_seconds,
        "wall_seconds": time.perf_counter() - wall_start,
    })
    row.update(derived_fields(task, curve, row["config"]))
    row.update(extra or {})
    if variant in GATE_START and gates is not None:
        row["gates"] = gates
    row.update(provenance(device, threads, command))
    return row
