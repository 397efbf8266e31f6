"""The plateau rule: when has the validation loss stopped improving?

One small piece shared by the ViT's training loop (:mod:`.vit`, which acts on
it) and the results schema (:mod:`.results`, which checks that a row's recorded
plateau is where the rule, applied to the row's own curve, says it is).
"""

from __future__ import annotations

import math

from .._validation import check_scalar


class Plateau:
    """The plateau rule: fires once the validation loss has not improved for ``patience`` evaluations.

    An evaluation improves when its loss is below the best so far by more than
    ``min_delta``. ``patience`` = 0 never fires (a fixed budget).
    """

    def __init__(self, patience: int, min_delta: float = 0.0):
        self.patience = check_scalar(patience, "patience", low=0, integer=True)
        self.min_delta = check_scalar(min_delta, "min_delta", low=0)
        self.best = math.inf
        self.best_index = -1
        self.count = 0

    def update(self, loss: float) -> bool:
        """Record the next validation loss; return True when the rule fires (training should stop or decay)."""
        if loss < self.best - self.min_delta:
            self.best, self.best_index = loss, self.count
        self.count += 1
        return self.patience > 0 and self.count - 1 - self.best_index >= self.patience


def plateau_index(losses, patience: int, min_delta: float = 0.0):
    """Where :class:`Plateau` first fires on the sequence ``losses``: (index, index of the best loss so far).

    The index is ``None`` when the rule never fires (the loss was still
    improving within the last ``patience`` evaluations); the best index is then
    that of the whole sequence.
    """
    rule = Plateau(patience, min_delta)
    for i, loss in enumerate(losses):
        if rule.update(float(loss)):
            return i, rule.best_index
    return None, rule.best_index
