"""The unrolled block as an ordinary torch transformer: ``DiagonalTransformer`` and its layers (notes 3.5).

One idea: a single-head post-LayerNorm transformer built from nn.Linear query, key, value and output weights, an
nn.Linear feed-forward in parallel with attention (for "paper") and nn.LayerNorm, whose weights are set to the
diagonal values of notes 3.5,

    W_Q = W_K = a I (a^2 = kappa / sqrt(d_q)),  W_V = I,  W_O = 2 eta I,  W_ff = 2 eta / (d_q + beta) I,

so that its forward pass equals :func:`probdr_lite.unrolled.unroll` for the variants in
:data:`TRANSFORMER_VARIANTS`. The block maths it reproduces, and the checks it validates its arguments with, are
:mod:`probdr_lite.unrolled`; the row-block attention kernel that ``unroll`` runs on (and this module does not:
it uses ``scaled_dot_product_attention`` on the dense (n, n) logits) is :mod:`probdr_lite._tiled_attention`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from probdr_lite._validation import check_scalar, check_tensor
from probdr_lite.unrolled import (
    BLOCK_VARIANTS,
    N_STEPS_MAX,
    check_beta,
    check_eta,
    check_kappa,
    check_logit_range,
    check_mask,
    check_variant,
)

__all__ = [
    "TRANSFORMER_VARIANTS",
    "DiagonalConfig",
    "DiagonalAttention",
    "DiagonalFeedForward",
    "DiagonalBlock",
    "DiagonalTransformer",
]

#: The block variants with a fixed-weight transformer form (:class:`DiagonalTransformer`).
TRANSFORMER_VARIANTS = ("attention", "diffusion", "paper")


@dataclass
class DiagonalConfig:
    """Settings of the diagonal-weight transformer (defaults: the notes' MNIST figure, beta = 1, shared weights).

    Not validated here; :class:`DiagonalTransformer` validates its arguments before building one.
    """

    d_q: int = 128
    n_layers: int = 8
    kappa: float = 30.0
    eta: float = 0.4
    beta: float = 1.0
    variant: str = "diffusion"
    dtype: torch.dtype | None = None  # of the weights; None: torch's default dtype


class DiagonalAttention(nn.Module):
    """Single-head self-attention with diagonal weights (notes 3.5).

    W_Q = W_K = a I with a^2 = kappa / sqrt(d_q), so with the usual 1 / sqrt(d_q) scaling the logits are
    kappa X X^T / d_q; W_V = I and W_O = 2 eta I, so W_V W_O = 2 eta I. For the A - I variants the value is
    subtracted from the attention output before the output projection (y = A V - V, the one-line change of the
    paper), giving 2 eta (A - I) X.
    """

    def __init__(self, config: DiagonalConfig):
        super().__init__()
        d, dtype = config.d_q, config.dtype
        self.q_proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.k_proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.v_proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.o_proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.subtract_value = config.variant in ("diffusion", "paper")  # A - I instead of A
        self.beta = config.beta
        eye = torch.eye(d, dtype=dtype)  # the diagonal values are computed in the weights' own precision
        a = math.sqrt(config.kappa / math.sqrt(d))
        with torch.no_grad():
            self.q_proj.weight.copy_(a * eye)
            self.k_proj.weight.copy_(a * eye)
            self.v_proj.weight.copy_(eye)
            self.o_proj.weight.copy_(2.0 * config.eta * eye)

    def extra_repr(self) -> str:
        return f"beta={self.beta:g}, residual={'A - I' if self.subtract_value else 'A'}"

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)  # (B, n, d_q) each
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)  # (B, n, d_q) = A V
        if self.subtract_value:
            y = y - v  # (A - I) V
        return self.o_proj(y)


class DiagonalFeedForward(nn.Module):
    """The feed-forward block of the "paper" variant: a linear map 2 eta / (d_q + beta) I (ReLU ignored, notes 3.4)."""

    def __init__(self, config: DiagonalConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.d_q, config.d_q, bias=False, dtype=config.dtype)
        with torch.no_grad():
            eye = torch.eye(config.d_q, dtype=config.dtype)
            self.c_fc.weight.copy_(2.0 * config.eta / (config.d_q + config.beta) * eye)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_fc(x)


class DiagonalBlock(nn.Module):
    """x <- LayerNorm(x + attn(x) + mlp(x)): post-LayerNorm, attention and feed-forward in parallel (as in GPT-J).

    The parallel form is what the paper's update needs: both terms act on the same X. (A feed-forward after the
    attention would multiply X + 2 eta (A - I) X by 1 + 2 eta / (d_q + beta), which Pi then removes.)
    """

    def __init__(self, config: DiagonalConfig):
        super().__init__()
        self.attn = DiagonalAttention(config)
        self.mlp = DiagonalFeedForward(config) if config.variant == "paper" else None
        self.ln = nn.LayerNorm(config.d_q, eps=0.0, elementwise_affine=False)  # Pi

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        update = self.attn(x, attn_mask)
        if self.mlp is not None:
            update = update + self.mlp(x)
        return self.ln(x + update)


def _check_dtype(dtype):
    if dtype is None or dtype in (torch.float32, torch.float64):
        return dtype
    raise TypeError(f"dtype must be None, torch.float32 or torch.float64; got {dtype!r}")


class DiagonalTransformer(nn.Module):
    """A single-head transformer at the paper's diagonal initialisation; its forward pass equals ``unroll``.

    Built from ordinary layers: nn.Linear query/key/value/output weights, an nn.Linear feed-forward (for "paper"),
    nn.LayerNorm(eps=0, elementwise_affine=False). The weights are set as in notes 3.5 (see DiagonalAttention);
    the additive attention mask carries -beta I plus the user's mask M. The n_layers blocks share one set of
    weights (the notes' default reading of "8 steps through a block"): ``self.h`` lists the same block n_layers
    times, so ``parameters()`` yields it once.

    forward(X) = unroll(X, n_layers, kappa, eta, beta, variant)[-1]. It holds the dense (n, n) attention inside
    scaled_dot_product_attention, so it is meant for n up to a few thousand; use
    :func:`probdr_lite.unrolled.unroll` beyond that.

    Parameters
    ----------
    d_q : int >= 2
    n_layers : int in [0, 10000]
    kappa : float in (0, 1e4]
    eta : float in (0, 10]
    beta : float in [0, 1e4]
    variant : {"attention", "diffusion", "paper"}
        The others are not a fixed linear-plus-softmax block and are refused.
    dtype : torch.float32 or torch.float64, optional
        Precision of the weights (default: torch's default dtype). Build in float64 to compare with ``unroll``
        in float64: converting a float32 model with ``.double()`` keeps the float32 rounding of its weights.
    """

    def __init__(self, d_q=128, n_layers=8, kappa=30.0, eta=0.4, beta=1.0, variant="diffusion", dtype=None):
        super().__init__()
        variant_ok = isinstance(variant, str) and variant in TRANSFORMER_VARIANTS
        if isinstance(variant, str) and variant in BLOCK_VARIANTS and not variant_ok:
            raise ValueError(
                f"variant {variant!r} has no fixed-weight transformer form; DiagonalTransformer supports "
                f"{', '.join(map(repr, TRANSFORMER_VARIANTS))} (use unroll for the others)"
            )
        self.config = DiagonalConfig(
            d_q=check_scalar(d_q, "d_q", low=2, high=65536, integer=True),
            n_layers=check_scalar(n_layers, "n_layers", low=0, high=N_STEPS_MAX, integer=True),
            kappa=check_kappa(kappa),
            eta=check_eta(eta),
            beta=check_beta(beta),
            variant=check_variant(variant, TRANSFORMER_VARIANTS),
            dtype=_check_dtype(dtype),
        )
        block = DiagonalBlock(self.config)
        self.h = nn.ModuleList([block] * self.config.n_layers)  # one block, shared by every layer

    def extra_repr(self) -> str:
        c = self.config
        return (
            f"variant={c.variant!r}, d_q={c.d_q}, kappa={c.kappa:g}, eta={c.eta:g}, beta={c.beta:g}, "
            f"n_layers={c.n_layers} (weights shared)"
        )

    def forward(self, X, mask=None) -> torch.Tensor:
        """X of shape (n, d_q) or (B, n, d_q), dtype matching the model (call .double() for float64 input)."""
        if not isinstance(X, torch.Tensor) or X.ndim not in (2, 3):
            X = check_tensor(X, "X", ndim=2)
        d_q = self.config.d_q
        squeeze = X.ndim == 2
        X = check_tensor(X[None] if squeeze else X, "X", ndim=3)  # (B, n, d_q)
        if X.shape[-1] != d_q:
            raise ValueError(f"X must have d_q = {d_q} columns; got shape {tuple(X.shape)}")
        dtype = self.h[0].attn.q_proj.weight.dtype if len(self.h) else X.dtype
        if X.dtype != dtype:
            raise TypeError(f"X has dtype {X.dtype} but the model is {dtype}; convert one (e.g. model.double())")
        n = X.shape[1]
        c = self.config
        mask = check_mask(mask, n, X)
        check_logit_range(X.reshape(-1, d_q), c.kappa, c.beta)
        M = mask.dense(n, X)
        attn_mask = -c.beta * torch.eye(n, dtype=X.dtype, device=X.device)  # (n, n): -beta I + M
        if M is not None:
            attn_mask = attn_mask + M
        for block in self.h:
            X = block(X, attn_mask)
        return X[0] if squeeze else X
