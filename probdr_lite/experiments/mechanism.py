"""What the attention blocks do along training: the measurements behind "why does the initialisation decide the sign?".

In a pre-LN block the attention sub-layer adds ``W_O (M_h v)`` to the residual
stream ``x``, with ``v = W_V LN(x)`` per head and ``M_h`` the head's graph
operator (``A``, ``A - I``, ``A - g I``, ...). The ``- v`` of ``A - I`` therefore
subtracts ``LN(x) W_V^T W_O^T`` from the stream: a linear map of the token's own
state, learned through the product of the value and output weights. Whether
that term matters depends on how large the attention update is against the
stream, how large ``v`` is against ``A v``, and on ``W_V W_O`` itself. Per layer,
on a fixed probe batch (the same inputs for every arm and seed), at every
evaluation point of a run:

``update_ratio``
    ||attention update|| / ||x||: the size of what the sub-layer adds (the arm's
    own operator, output projection and bias included) relative to the stream it
    is added to (Frobenius norms over the probe's tokens).
``v_over_av``
    ||v|| / ||A v|| (all heads together): how large the term that ``A - I``
    subtracts is against the term attention keeps. Near 1 with ``v`` close to
    ``A v`` the two nearly cancel; much larger than 1, ``- v`` dominates.
``shrink``
    1 - ||W_O (A v - v)|| / ||W_O A v||: by which fraction subtracting ``v``
    (with this arm's current weights) shrinks the head outputs after the output
    projection. Positive: the ``- v`` cancels part of the update; negative: it
    enlarges it.
``wvwo_top_sv``, ``wvwo_mean_eig``
    the largest singular value of ``M = W_V^T W_O^T`` (the map the ``- v`` term
    applies to ``LN(x)``, all heads together), and its mean eigenvalue
    trace(M) / C. The whole singular spectrum is kept at the first and the last
    evaluation point (``wvwo_sv_first``, ``wvwo_sv_last``: per layer, descending).
``gates``
    (gated arms) the gate g of every layer and head.

and, per interval between evaluation points, averaged over its training steps
(the gradients before clipping):

``grad_norm``, ``clipped``, ``attn_grad_norm``
    the norm of the whole gradient, the fraction of steps whose gradient was
    clipped, and per layer the norm of the gradient of the attention weights
    (``c_attn`` and ``c_proj``);
``lr``
    the learning rate of the interval's last step.

For plain attention, ``shrink`` is what ``A - I`` *would* do to its weights (at
initialisation every arm of a seed has the same weights, so there it is what
``A - I`` does). The probe is evaluated in evaluation mode without gradients and
draws no random numbers, and the gradient norms only read the gradients, so
measuring does not change training (:mod:`tests.unit.test_experiments` checks
that a measured run's curve is bit for bit the unmeasured one's).
"""

from __future__ import annotations

import math

import torch

from ._training import evaluating
from .attention import BlockStack
from .results import INTERVAL_SERIES, LAYER_SERIES  # what the schema checks: one list of each

#: significant digits kept in the results rows
DIGITS = 6


def _round(x: float) -> float:
    return float(f"{x:.{DIGITS}g}")


def _norm(t: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(t.double()))


def _merge(y: torch.Tensor) -> torch.Tensor:
    """Heads side by side: (B, nh, T, hs) -> (B, T, nh * hs)."""
    B, nh, T, hs = y.shape
    return y.transpose(1, 2).reshape(B, T, nh * hs)


def value_output_map(attn) -> torch.Tensor:
    """``M = W_V^T W_O^T`` (C x C, float64) of a :class:`.attention.SelfAttention`: ``v W_O^T = LN(x) M`` + biases."""
    C = attn.n_embd
    w_v = attn.c_attn.weight[2 * C:3 * C].detach().double()  # (C out, C in): v = h w_v^T
    w_o = attn.c_proj.weight.detach().double()  # (C out, C in): out = y w_o^T
    return w_v.T @ w_o.T


def spectrum(model: BlockStack) -> list:
    """Singular values (descending) of :func:`value_output_map` for every layer of ``model``."""
    return [[_round(s) for s in torch.linalg.svdvals(value_output_map(b.attn)).tolist()] for b in model.blocks]


def layer_measures(model: BlockStack, inputs: torch.Tensor) -> dict:
    """The :data:`LAYER_SERIES` of every layer of ``model`` on the probe ``inputs`` (module docstring).

    ``model`` is a :class:`.charlm.CharLM` or :class:`.vit.ViT`; ``inputs`` what
    its forward takes (character ids or standardised images). Returns
    ``{series: [value per layer]}``.
    """
    if not isinstance(model, BlockStack):
        raise ValueError(f"model must be a CharLM or ViT (a BlockStack); got {type(model).__name__}")
    streams = []
    hooks = [b.register_forward_pre_hook(lambda _m, args: streams.append(args[0])) for b in model.blocks]
    try:
        with evaluating(model):
            model(inputs)
            out = {name: [] for name in LAYER_SERIES}
            for block, x in zip(model.blocks, streams):
                attn = block.attn
                h = block.ln_1(x)
                q, k, v = attn.qkv(h)
                av = attn.mix(q, k, v)  # A v (A_sym v for the symmetric arms)
                update = attn(h)  # this arm's own update, output projection and bias included
                w_o = attn.c_proj.weight
                kept = _norm(_merge(av) @ w_o.T)
                diffused = _norm(_merge(av - v) @ w_o.T)
                m = value_output_map(attn)
                out["update_ratio"].append(_norm(update) / _norm(x))
                out["v_over_av"].append(_norm(v) / _norm(av))
                out["shrink"].append(1.0 - diffused / kept)
                out["wvwo_top_sv"].append(float(torch.linalg.matrix_norm(m, ord=2)))
                out["wvwo_mean_eig"].append(float(torch.trace(m)) / m.shape[0])
    finally:
        for hook in hooks:
            hook.remove()
    return {name: [_round(x) for x in values] for name, values in out.items()}


class MechanismRecorder:
    """Collects the mechanism record of one run (module docstring), for its results row.

    The training loop calls :meth:`after_backward` inside every training step
    (:func:`._training.train_step`'s hook), :meth:`record` at every evaluation
    point and :meth:`finish` at the end.
    """

    def __init__(self, model: BlockStack, probe: torch.Tensor, probe_text: str, grad_clip: float):
        self.model, self.probe, self.grad_clip = model, probe, float(grad_clip)
        self.data = {"probe": probe_text, "iters": [], **{name: [] for name in LAYER_SERIES + INTERVAL_SERIES}}
        if model.gates():
            self.data["gates"] = []
        self._reset()

    def _reset(self):
        self._steps, self._total, self._clipped, self._lr = 0, 0.0, 0, None
        self._layers = [0.0] * len(self.model.blocks)

    def after_backward(self, model: BlockStack, lr: float) -> None:
        """Add this step's gradient norms (before clipping) to the running interval."""
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        total = math.sqrt(sum(float(torch.linalg.vector_norm(g)) ** 2 for g in grads))
        self._steps += 1
        self._total += total
        self._clipped += int(self.grad_clip > 0 and total > self.grad_clip)
        self._lr = lr
        for i, block in enumerate(model.blocks):
            attn = block.attn
            sq = sum(float(torch.linalg.vector_norm(w.grad)) ** 2
                     for w in (attn.c_attn.weight, attn.c_proj.weight) if w.grad is not None)
            self._layers[i] += math.sqrt(sq)

    def record(self, it: int) -> None:
        """Measure at evaluation point ``it``; close the interval of training steps since the previous point."""
        d = self.data
        if d["iters"]:
            if not self._steps:
                raise RuntimeError(f"no training step was recorded between evaluation points {d['iters'][-1]} "
                                   f"and {it}")
            n = self._steps
            d["lr"].append(_round(self._lr))
            d["grad_norm"].append(_round(self._total / n))
            d["clipped"].append(_round(self._clipped / n))
            d["attn_grad_norm"].append([_round(x / n) for x in self._layers])
        else:
            d["wvwo_sv_first"] = spectrum(self.model)
        self._reset()
        d["iters"].append(it)
        for name, values in layer_measures(self.model, self.probe).items():
            d[name].append(values)
        if "gates" in d:
            d["gates"].append([[_round(g) for g in layer] for layer in self.model.gates()])

    def finish(self) -> dict:
        """The record, with the final spectrum of ``W_V W_O``."""
        self.data["wvwo_sv_last"] = spectrum(self.model)
        return self.data
