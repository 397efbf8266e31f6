"""The tiled attention kernel: A X (and A^T X) for the block's row softmax A without ever holding the n x n matrix.

One idea: the products with A = sigma(S), S = (kappa / d_q) X X^T - beta I + M, are accumulated from pieces of the
logits small enough to stay in memory (and in cache), two ways:

- row blocks (:func:`logit_blocks`): ``block_size`` rows of S at a time, each row through its own softmax
  (:func:`softmax_rows_`), then multiplied by X; this serves every mask and A^T X as well (:func:`attention_products`);
- symmetric square tiles (``_attention_times_tiled``): without a mask S is symmetric, so each tile of exp(S - c) below
  the diagonal is formed once and used for its rows and, transposed, for its columns. That needs one shift c for
  every row (``_common_shift``), and saves about half of the logits' product and of the exponentials.

A :class:`Workspace` carries the block buffers from one call to the next, so a loop of steps pages them in once.

This is an internal kernel, like :mod:`probdr_lite._elbo`: its arguments are taken as already validated (a
:class:`Mask` is what ``unrolled``'s mask check returns). The maths that calls it, the directions of the block
variants and the public ``attention_times`` that checks its input first, is :mod:`probdr_lite.unrolled`. The same
steps as a torch module, :mod:`probdr_lite.diagonal_transformer`, do not come here: they hold the dense logits
inside ``scaled_dot_product_attention``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["Mask", "Workspace", "logit_blocks", "softmax_rows_", "attention_products"]

_TILE = 1024  # side of the square tiles of the symmetric path (4 MiB in float32: the exponentials stay in cache)
_SHIFT_MARGIN = 30.0  # the symmetric path's common shift may sit at most this far above a row's own maximum


@dataclass(frozen=True)
class Mask:
    """A validated mask: kind is 'none', 'causal', 'bool' (True attends) or 'add' (added to the logits)."""

    kind: str
    value: torch.Tensor | None = None

    def dense(self, n: int, like: torch.Tensor) -> torch.Tensor | None:
        """The additive (n, n) matrix M, or None when there is no mask."""
        if self.kind == "none":
            return None
        if self.kind == "causal":
            blocked = torch.ones(n, n, dtype=torch.bool, device=like.device).triu(1)
            return torch.zeros(n, n, dtype=like.dtype, device=like.device).masked_fill(blocked, -math.inf)
        if self.kind == "bool":
            return torch.zeros(n, n, dtype=like.dtype, device=like.device).masked_fill(~self.value, -math.inf)
        return self.value


class Workspace:
    """Flat buffers for the row blocks, kept for a loop of steps.

    A fresh 64 MiB ``torch.empty`` is new memory that the kernel zeroes and maps page by page on first touch; at
    n = 10,000 that cost about a tenth of an exact-attention step. :func:`probdr_lite.unrolled.unroll` keeps one
    workspace for all its steps, so the block buffers are paged in once.
    """

    def __init__(self):
        self._buffers = {}

    def get(self, name: str, numel: int, like: torch.Tensor) -> torch.Tensor:
        buf = self._buffers.get(name)
        if buf is None or buf.numel() < numel or buf.dtype != like.dtype or buf.device != like.device:
            buf = self._buffers[name] = torch.empty(numel, dtype=like.dtype, device=like.device)
        return buf[:numel]


def logit_blocks(X, kappa, beta, mask: Mask, block_size, keep_gram=False, work: Workspace | None = None):
    """Yield (r0, r1, c, S, K) for consecutive row blocks of the logits.

    S is the (r1 - r0, c) block of S = (kappa / d_q) X X^T - beta I + M restricted to the first c columns
    (c = n, or c = r1 under a causal mask, where the later columns are all blocked). K is the block of X X^T
    when ``keep_gram`` (needed by the "full" gradient), else None. S (and K) live in one preallocated buffer that
    is reused for every block, so the caller may overwrite them but must be done with them before the next block.
    Reusing the buffer keeps the peak at one block and avoids paging in fresh memory for every block; ``work``
    carries the buffers from one call to the next.
    """
    n, d_q = X.shape
    scale = kappa / d_q
    rows = min(block_size, n)
    work = Workspace() if work is None else work
    s_buf = work.get("S", rows * n, X)  # flat, so any (b, c) view is contiguous
    k_buf = work.get("K", rows * n, X) if keep_gram else None
    for r0 in range(0, n, block_size):
        r1 = min(n, r0 + block_size)
        c = r1 if mask.kind == "causal" else n
        S = s_buf[: (r1 - r0) * c].view(r1 - r0, c)  # (b, c)
        if keep_gram:
            K = torch.mm(X[r0:r1], X[:c].T, out=k_buf[: (r1 - r0) * c].view(r1 - r0, c))  # (b, c)
            torch.mul(K, scale, out=S)
        else:
            K = None
            torch.mm(X[r0:r1] * scale, X[:c].T, out=S)  # scaling the (b, d_q) factor is cheaper than the block
        S.diagonal(r0).sub_(beta)  # entries (i, i) of the block: the -beta I term
        if mask.kind == "causal":
            b = r1 - r0
            future = torch.ones(b, b, dtype=torch.bool, device=X.device).triu(1)  # (b, b) j > i in the square part
            S[:, r0:r1].masked_fill_(future, -math.inf)
        elif mask.kind == "bool":
            S.masked_fill_(~mask.value[r0:r1], -math.inf)
        elif mask.kind == "add":
            S.add_(mask.value[r0:r1])
        yield r0, r1, c, S, K


_SYMMETRIC_TILES = True  # False forces the row-block softmax everywhere (the benchmark compares the two)
_INPLACE_SOFTMAX: bool | None = None  # whether torch.softmax(S, out=S) works here (checked once)


def softmax_rows_(S: torch.Tensor) -> torch.Tensor:
    """In place: each row of S becomes its softmax (the row maximum is subtracted first, so no overflow).

    torch's fused softmax writing into its own input is the fastest path on CPU (one kernel, no new memory); where a
    torch version refuses the aliasing, the same result is built from amax, exp_ and a division.
    """
    global _INPLACE_SOFTMAX
    if _INPLACE_SOFTMAX is None:
        probe = torch.tensor([[0.0, 1.0, -math.inf], [3.0, 3.0, 2.0]], dtype=torch.float64)
        expected = torch.softmax(probe, dim=1)
        try:
            torch.softmax(probe, dim=1, out=probe)
            _INPLACE_SOFTMAX = bool(torch.allclose(probe, expected, rtol=0, atol=1e-15))
        except RuntimeError:
            _INPLACE_SOFTMAX = False
    if _INPLACE_SOFTMAX:
        return torch.softmax(S, dim=1, out=S)
    S.sub_(S.amax(1, keepdim=True)).exp_()
    return S.div_(S.sum(1, keepdim=True))


def _common_shift(X: torch.Tensor, kappa: float, beta: float) -> float | None:
    """A constant c >= every logit such that each row's largest logit is at least c - _SHIFT_MARGIN, or None.

    By Cauchy-Schwarz every logit is at most c = (kappa / d_q) max_k ||x_k||^2, and row i's largest logit is at least
    its diagonal entry (kappa / d_q) ||x_i||^2 - beta. When no row falls more than _SHIFT_MARGIN below c (LayerNormed
    rows and beta <= _SHIFT_MARGIN), exp(S - c) holds every row's weights with the same relative precision as
    exp(S - rowmax): a row's largest weight is at least exp(-30) ~ 1e-13, far above the smallest normal float, so
    only weights below about 1e-25 of the row's largest are flushed, and no row sum can vanish.
    """
    sq = X.detach().to(torch.float64).pow(2).sum(1)  # (n,) squared row norms
    scale = kappa / X.shape[1]
    top = scale * float(sq.max())
    if scale * float(sq.min()) - beta < top - _SHIFT_MARGIN:
        return None
    return top


def _attention_times_tiled(X, kappa, beta, shift, block_size, work: Workspace):
    """A X for an unmasked A through square tiles of E = exp(S - shift), each pair of tiles computed once.

    Without a mask S is symmetric (its -beta I term lies on the diagonal), so the tile (J, I) of E is the transpose
    of the tile (I, J): every tile below the diagonal is formed once and used twice, for E X on its rows and E^T X
    on its columns, together with the row sums of E. A X is then (E X) / rowsum. This does the
    logits' matrix product and the exponentials for about half of the matrix instead of all of it; memory is one
    tile, at most block_size x block_size.
    """
    n, d_q = X.shape
    b = min(block_size, _TILE, n)
    Xs = X * (kappa / d_q)  # scaling the (n, d_q) factor is cheaper than scaling each tile
    EX = torch.zeros_like(X)  # (n, d_q)
    rowsum = torch.zeros(n, dtype=X.dtype, device=X.device)
    buf = work.get("E", b * b, X)
    for r0 in range(0, n, b):
        r1 = min(n, r0 + b)
        for c0 in range(0, r0 + 1, b):
            c1 = min(n, c0 + b)
            E = buf[: (r1 - r0) * (c1 - c0)].view(r1 - r0, c1 - c0)
            torch.mm(Xs[r0:r1], X[c0:c1].T, out=E)  # the (I, J) tile of the logits, J <= I
            if c0 == r0:
                E.diagonal().sub_(beta)
            E.sub_(shift).exp_()
            EX[r0:r1].addmm_(E, X[c0:c1])
            rowsum[r0:r1] += E.sum(1)
            if c0 != r0:  # the (J, I) tile is E^T
                EX[c0:c1].addmm_(E.T, X[r0:r1])
                rowsum[c0:c1] += E.sum(0)
    return EX.div_(rowsum[:, None])


def attention_products(X, kappa, beta, mask: Mask, block_size, transpose_too=False, work=None):
    """A X (and A^T X) accumulated over row blocks; memory O(block_size * n).

    Unmasked A X alone goes through the symmetric tiles (:func:`_attention_times_tiled`) when one shift serves every
    row (:func:`_common_shift`); otherwise, and for masks or A^T X, each block of rows gets its own softmax.
    """
    work = Workspace() if work is None else work
    if _SYMMETRIC_TILES and not transpose_too and mask.kind == "none":
        shift = _common_shift(X, kappa, beta)
        if shift is not None:
            return _attention_times_tiled(X, kappa, beta, shift, block_size, work), None
    AX = torch.empty_like(X)  # (n, d_q)
    AtX = torch.zeros_like(X) if transpose_too else None
    for r0, r1, c, P, _ in logit_blocks(X, kappa, beta, mask, block_size, work=work):
        softmax_rows_(P)  # (b, c) rows of A
        torch.mm(P, X[:c], out=AX[r0:r1])  # rows of A X
        if transpose_too:
            AtX[:c].addmm_(P.T, X[r0:r1])  # A^T X = sum over row blocks of A_blk^T X_blk
    return AX, AtX
