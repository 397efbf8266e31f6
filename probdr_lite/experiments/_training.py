"""What both training loops share: the optimiser step, evaluation mode, the plateau rule and the results row.

:mod:`.charlm` and :mod:`.vit` differ in their data (random windows of text vs
passes over an image set) and in how they evaluate, but one optimiser step,
the timing of training steps, the early-stopping rule and the results row are
the same code. The row is built here from the run's curve, so its summary
numbers (final and best validation metrics) and its schema version are the ones
:mod:`.results` checks.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager

import torch

from .._validation import check_scalar, check_seed
from ._runtime import provenance, resolve_device, set_threads
from .attention import check_variant
from .results import CURVE_COLUMNS, SCHEMA_VERSION, TASK_METRICS, recipe_of


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
               targets: torch.Tensor, *, lr: float, grad_clip: float, what: str, it: int) -> float:
    """One optimiser step at learning rate ``lr``: forward, backward, clip the gradient norm, update.

    Returns the training loss of the batch. Raises ``FloatingPointError`` naming
    the run (``what``) and the step when the loss is not finite.
    """
    for group in optimizer.param_groups:
        group["lr"] = lr
    _, loss = model(inputs, targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    value = loss.item()
    if not math.isfinite(value):
        raise FloatingPointError(f"{what}: training loss is {value} at step {it}")
    return value


class Plateau:
    """The early-stopping rule: stop once the validation loss has not improved for ``patience`` evaluations.

    An evaluation improves when its loss is below the best so far by more than
    ``min_delta``. ``patience`` = 0 never stops (a fixed budget).
    """

    def __init__(self, patience: int, min_delta: float = 0.0):
        self.patience = check_scalar(patience, "patience", low=0, integer=True)
        self.min_delta = check_scalar(min_delta, "min_delta", low=0)
        self.best = math.inf
        self.best_index = -1
        self.count = 0

    def update(self, loss: float) -> bool:
        """Record the next validation loss; return True when training should stop."""
        if loss < self.best - self.min_delta:
            self.best, self.best_index = loss, self.count
        self.count += 1
        return self.patience > 0 and self.count - 1 - self.best_index >= self.patience


def plateau_index(losses, patience: int, min_delta: float = 0.0):
    """Where :class:`Plateau` stops on the sequence ``losses``: (stop index, index of the best loss).

    The stop index is ``None`` when the rule never fires (the loss was still
    improving within the last ``patience`` evaluations).
    """
    rule = Plateau(patience, min_delta)
    for i, loss in enumerate(losses):
        if rule.update(float(loss)):
            return i, rule.best_index
    return None, rule.best_index


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
    row.update(extra or {})
    if variant == "gated" and gates is not None:
        row["gates"] = gates
    row.update(provenance(device, threads, command))
    return row
