"""One self-attention module whose ``variant`` switches the graph operator.

Ravuri & Lawrence (arXiv 2507.21040) read a transformer block as one unrolled
gradient step of probabilistic Laplacian Eigenmaps: the update is
``X <- X + 2 eta (A - I) X`` with ``A`` the row-stochastic attention matrix, so
the operator a block should apply is the negative graph Laplacian ``A - I``
(book section 3, step 3), where a standard transformer applies ``A``. In a
multi-head model this becomes, per head and before the output projection,

    attention   y = A v                  (the usual transformer)
    diffusion   y = A v - v              (A - I, the paper's proposal)
    gated       y = A v - g v            (A - g I, g one learnable scalar per head,
                                          starting at 0 (plain attention), so training can choose)
    gated-from-1  y = A v - g v          (the same gate, starting at g = 1 (A - I): does
                                          training bring the identity back?)
    sym-normalised  y = A_sym v          (A_sym = D^{-1/2} E D^{-1/2}, the adjacency
                                          of the symmetric normalised Laplacian)
    symmetric   y = A_sym v - v          (A_sym - I, minus the symmetric normalised
                                          Laplacian: the "symmetric" update of the
                                          transformer-block, MNIST and
                                          objections chapters)

``sym-normalised`` was called ``symmetric`` in results schema version 1; the
name now belongs to the (A_sym - I) arm, as in the rest of the book.

For both symmetric arms the logits S = q k^T / sqrt(hs) are first symmetrised,
S_sym = (S + S^T) / 2, so that E = exp(S_sym) is the weight matrix of an
undirected graph (with separate query and key maps S itself is not symmetric,
and D^{-1/2} E D^{-1/2} of a non-symmetric E is not symmetric either, which would
defeat the purpose of the variant; book section 4, objection 1). D = diag(E 1).
It is computed in the log domain,
log A_sym_ij = S_ij - (lse_i + lse_j) / 2 with lse_i = logsumexp_j S_ij, and
because S is symmetric S_ij <= min(lse_i, lse_j), so every exponent is <= 0 and
nothing overflows. A causal mask makes the graph directed, so both symmetric
arms are refused when ``causal=True``: under the mask E is lower-triangular,
and D^{-1/2} E D^{-1/2} of a lower-triangular E is neither symmetric nor
row-stochastic, so neither reading of the arm survives.

The module is shared by the character model (:mod:`.charlm`, causal) and the
vision transformer (:mod:`.vit`, not causal) together with :class:`Block`, a
pre-LayerNorm transformer block. The structure imitates nanoGPT's ``model.py``:
one class, one flag, shape comments.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .._validation import check_choice, check_scalar

#: every attention operator the experiments compare, in the order of the book
VARIANTS = ("attention", "diffusion", "gated", "gated-from-1", "sym-normalised", "symmetric")
#: the variants admissible with a causal mask (language models)
CAUSAL_VARIANTS = ("attention", "diffusion", "gated", "gated-from-1")
#: the variants with a learned gate g per head, and the value g starts from
GATE_START = {"gated": 0.0, "gated-from-1": 1.0}
#: the variants that need an undirected graph (no causal mask)
SYMMETRIC_VARIANTS = ("sym-normalised", "symmetric")
#: initialisation schemes of :func:`init_weights`: the two base schemes, then the two interventions
INIT_SCHEMES = ("gpt2", "default", "gpt2-vo-default", "default-vo-gpt2")
#: the interventions: (base scheme, scheme whose scale the value and output projections W_V, W_O get)
VO_SCALE = {"gpt2-vo-default": ("gpt2", "default"), "default-vo-gpt2": ("default", "gpt2")}


def check_variant(variant: str, causal: bool) -> str:
    """Validate ``variant`` for a model with or without a causal mask.

    Raises ``ValueError`` naming the allowed values; a symmetric arm with a
    causal mask gets its own message, since the symmetric normalisation
    D^{-1/2} E D^{-1/2} needs an undirected graph and a causal mask makes E
    lower-triangular (a directed graph).
    """
    if causal and variant in SYMMETRIC_VARIANTS:
        raise ValueError(
            f"variant {variant!r} is not admissible with a causal mask: D^{{-1/2}} E D^{{-1/2}} "
            "needs an undirected graph (symmetric E) and the causal mask makes E "
            "lower-triangular; use one of " + ", ".join(repr(v) for v in CAUSAL_VARIANTS)
        )
    return check_choice(variant, "variant", CAUSAL_VARIANTS if causal else VARIANTS)


def symmetric_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Return ``D^{-1/2} E D^{-1/2} v`` with ``E = exp((S + S^T) / 2)``, ``S = q k^T / sqrt(hs)``.

    Parameters
    ----------
    q, k, v : tensors of shape (B, nh, T, hs)

    Returns
    -------
    tensor of shape (B, nh, T, hs)

    Computed stably in the log domain (see the module docstring); the matrix
    is symmetric, with largest eigenvalue 1 (eigenvector D^{1/2} 1).
    """
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    scores = 0.5 * (scores + scores.transpose(-2, -1))  # undirected graph
    lse = torch.logsumexp(scores, dim=-1)  # (B, nh, T): log degree
    log_a = scores - 0.5 * lse.unsqueeze(-1) - 0.5 * lse.unsqueeze(-2)  # <= 0 everywhere
    return torch.exp(log_a) @ v  # (B, nh, T, hs)


class SelfAttention(nn.Module):
    """Multi-head self-attention with a switchable graph operator.

    Parameters
    ----------
    n_embd : int
        Width of the residual stream; must be divisible by ``n_head``.
    n_head : int
        Number of heads.
    variant : {"attention", "diffusion", "gated", "gated-from-1", "sym-normalised", "symmetric"}
        Which operator each head applies (module docstring).
    causal : bool
        Causal mask (language model) or full attention (vision).
    dropout : float in [0, 1)
        Dropout on the attention weights and on the output.
    bias : bool
        Biases in the query/key/value and output projections.

    The gate of the gated variants is created last and initialised to the
    constant of :data:`GATE_START` (0 or 1), so it draws no random numbers: with
    the same seed the other weights of every variant are identical.
    """

    def __init__(self, n_embd: int, n_head: int, variant: str = "attention", *,
                 causal: bool = False, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        n_embd = check_scalar(n_embd, "n_embd", low=1, integer=True)
        n_head = check_scalar(n_head, "n_head", low=1, integer=True)
        if n_embd % n_head != 0:
            raise ValueError(f"n_embd must be divisible by n_head; got n_embd={n_embd}, n_head={n_head}")
        self.dropout = check_scalar(dropout, "dropout", low=0.0, high=1.0, high_inclusive=False)
        self.variant = check_variant(variant, bool(causal))
        self.causal = bool(causal)
        self.n_head = n_head
        self.n_embd = n_embd
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)  # q, k, v for all heads at once
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)  # output projection
        self.resid_dropout = nn.Dropout(self.dropout)
        if self.variant in GATE_START:
            # one scalar g per head; g = 0 starts as plain attention, g = 1 as A - I
            self.gate = nn.Parameter(torch.full((n_head,), GATE_START[self.variant]))

    def qkv(self, x: torch.Tensor):
        """Split the projection of ``x`` (B, T, C) into q, k, v of shape (B, nh, T, hs)."""
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)  # each (B, T, C)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        return q, k, v

    def mix(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The graph of this arm applied to ``v``, without any identity: A v, or A_sym v for the symmetric arms."""
        if self.variant in SYMMETRIC_VARIANTS:
            return symmetric_attention(q, k, v)  # A_sym v
        p = self.dropout if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal)  # A v

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The per-head graph operator applied to ``v``: (B, nh, T, hs) -> (B, nh, T, hs).

        This is the line the paper changes: ``A v`` becomes ``A v - v``.
        """
        y = self.mix(q, k, v)  # A v (A_sym v for the symmetric arms)
        if self.variant in ("diffusion", "symmetric"):
            y = y - v  # (A - I) v: one explicit Euler step of graph diffusion
        elif self.variant in GATE_START:
            y = y - self.gate.view(1, -1, 1, 1) * v  # (A - g I) v, g per head
        return y

    def heads(self, x: torch.Tensor) -> torch.Tensor:
        """Pre-projection output of every head for input ``x`` (B, T, C): (B, nh, T, hs)."""
        return self.attend(*self.qkv(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        y = self.heads(x)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble the heads side by side
        return self.resid_dropout(self.c_proj(y))  # (B, T, C)


class MLP(nn.Module):
    """The feed-forward half of a block: C -> 4C -> GELU -> C."""

    def __init__(self, n_embd: int, *, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))  # (B, T, C)


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, n_embd: int, n_head: int, variant: str = "attention", *,
                 causal: bool = False, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd, bias=bias)
        self.attn = SelfAttention(n_embd, n_head, variant, causal=causal, dropout=dropout, bias=bias)
        self.ln_2 = nn.LayerNorm(n_embd, bias=bias)
        self.mlp = MLP(n_embd, dropout=dropout, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))  # (B, T, C)
        x = x + self.mlp(self.ln_2(x))  # (B, T, C)
        return x


class BlockStack(nn.Module):
    """What both trained models share: ``n_layer`` blocks of one attention variant and a final LayerNorm,
    the book's initialisation, the parameter count and the gates of the gated variants.

    A model calls :meth:`add_blocks` where the blocks belong in its registration order (the order
    :func:`init_weights` draws in) and :meth:`initialise` once every module exists.
    """

    def __init__(self, config, variant: str, *, causal: bool):
        super().__init__()
        self.config = config
        self.variant = check_variant(variant, causal=causal)

    def add_blocks(self, config, variant: str, causal: bool) -> None:
        c = config
        self.blocks = nn.ModuleList(
            Block(c.n_embd, c.n_head, variant, causal=causal, dropout=c.dropout, bias=c.bias)
            for _ in range(c.n_layer)
        )
        self.ln_f = nn.LayerNorm(c.n_embd, bias=c.bias)

    def initialise(self, config, generator=None) -> None:
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        init_weights(self, generator, std=config.init_std, n_layer=config.n_layer, scheme=config.init)

    def num_parameters(self) -> int:
        """Number of trainable numbers (a tied matrix counted once)."""
        return sum(p.numel() for p in self.parameters())

    def gates(self) -> list:
        """The per-head gates g of every layer (the gated arms only; empty list otherwise)."""
        return [blk.attn.gate.detach().cpu().tolist() for blk in self.blocks if hasattr(blk.attn, "gate")]


def _gate_start(model: nn.Module, name: str) -> float:
    """The start value of the gate parameter ``name`` (``blocks.i.attn.gate``): that of its module's variant."""
    return GATE_START[model.get_submodule(name.rsplit(".", 1)[0]).variant]


def init_weights(model: nn.Module, generator: torch.Generator, *, std: float = 0.02,
                 n_layer: int = 1, scheme: str = "gpt2") -> None:
    """Re-initialise ``model`` in place from ``generator``, in a fixed order.

    ``scheme="gpt2"`` (GPT-2 / nanoGPT): every parameter with two or more
    dimensions (Linear and Embedding weights, and the ViT's class token and
    position embeddings) ~ N(0, std^2), biases 0, LayerNorm weight 1; the two
    residual output projections (``*.c_proj.weight``) get std / sqrt(2 n_layer)
    so the residual stream's variance does not grow with depth.

    ``scheme="default"``: every module gets PyTorch's own initialisation
    (``reset_parameters()``: Linear weights and biases U(-1/sqrt(fan_in),
    1/sqrt(fan_in)), Embedding N(0, 1), LayerNorm 1 and 0), drawn from a torch
    seed taken from ``generator``; parameters that belong to no such module
    (the ViT's class token and position embeddings) ~ N(0, std^2) as in
    ``gpt2``. With tied embeddings the shared matrix ends with the output
    Linear's initialisation (it is reset after the Embedding).

    The two interventions (:data:`VO_SCALE`) first initialise as their base
    scheme, drawing exactly what it draws, and then redraw only the value
    projection W_V (the last third of every ``attn.c_attn.weight``) and the
    attention output projection W_O (``attn.c_proj.weight``) at the other
    scheme's scale, from ``generator``: ``"gpt2-vo-default"`` draws them from
    PyTorch's U(-1/sqrt(n_embd), 1/sqrt(n_embd)), ``"default-vo-gpt2"`` from
    N(0, std^2) and N(0, std^2 / (2 n_layer)). Every other weight (biases
    included) is the base scheme's for the same generator state, so a run
    under an intervention is paired with the base run of the same seed.

    In every scheme the gates of the gated variants are set to their start
    (:data:`GATE_START`) without drawing from ``generator``, so the same generator state gives the same
    weights to every variant. Parameters are visited in ``named_parameters()``
    order; a parameter shared by two modules (tied embeddings) is visited once.
    """
    scheme = check_choice(scheme, "init", INIT_SCHEMES)
    base, vo_scale = VO_SCALE.get(scheme, (scheme, None))
    _init_base(model, generator, std=std, n_layer=n_layer, scheme=base)
    if vo_scale is not None:
        _redraw_value_output(model, generator, std=std, n_layer=n_layer, scale=vo_scale)


def _redraw_value_output(model: nn.Module, generator: torch.Generator, *, std: float, n_layer: int,
                         scale: str) -> None:
    """Redraw W_V and W_O of every attention module of ``model`` at ``scale``'s scale (:func:`init_weights`)."""
    with torch.no_grad():
        for module in model.modules():
            if not isinstance(module, SelfAttention):
                continue
            c = module.n_embd
            w_v = module.c_attn.weight[2 * c:]  # a view: rows of v in the q, k, v projection
            w_o = module.c_proj.weight
            for w, gpt2_std in ((w_v, std), (w_o, std / math.sqrt(2 * n_layer))):
                if scale == "default":  # nn.Linear's kaiming_uniform(a=sqrt(5)): bound 1/sqrt(fan_in)
                    draw = (torch.rand(w.shape, generator=generator, dtype=w.dtype) * 2 - 1) / math.sqrt(c)
                else:
                    draw = torch.randn(w.shape, generator=generator, dtype=w.dtype) * gpt2_std
                w.copy_(draw)


def _init_base(model: nn.Module, generator: torch.Generator, *, std: float, n_layer: int, scheme: str) -> None:
    """One of the two base schemes of :func:`init_weights`."""
    with torch.no_grad():
        if scheme == "default":
            torch_seed = int(torch.randint(0, 2**62, (1,), generator=generator).item())
            owned = set()
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(torch_seed)
                for module in model.modules():
                    if isinstance(module, (nn.Linear, nn.Embedding, nn.LayerNorm)):
                        module.reset_parameters()
                        owned.update(id(p) for p in module.parameters(recurse=False))
            for name, p in model.named_parameters():
                if name.rsplit(".", 1)[-1] == "gate":
                    p.fill_(_gate_start(model, name))
                elif id(p) not in owned:
                    p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * std)
            return
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "gate":
                p.fill_(_gate_start(model, name))
            elif leaf == "bias":
                p.zero_()
            elif p.ndim == 1:  # LayerNorm weight
                p.fill_(1.0)
            else:
                s = std / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else std
                p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * s)


def configure_optimizer(model: nn.Module, *, lr: float, weight_decay: float,
                        betas=(0.9, 0.99), device: str = "cpu") -> torch.optim.AdamW:
    """AdamW with weight decay on the 2-D (and larger) weights only.

    Matrices (linear maps, embeddings) are decayed; biases, LayerNorm gains and
    the per-head gates are not, since shrinking them toward 0 has no
    regularising meaning.
    """
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.ndim < 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    fused = device.startswith("cuda")
    return torch.optim.AdamW(groups, lr=lr, betas=betas, fused=fused) if fused else \
        torch.optim.AdamW(groups, lr=lr, betas=betas)


def cosine_lr(it: int, *, lr: float, min_lr: float, warmup_iters: int, decay_iters: int) -> float:
    """Learning rate at step ``it``: linear warm-up, cosine decay to ``min_lr``, then flat.

    Warm-up goes from lr/(warmup+1) to lr over ``warmup_iters`` steps; the
    cosine runs from the end of warm-up to ``decay_iters``.
    """
    if it < warmup_iters:
        return lr * (it + 1) / (warmup_iters + 1)
    if it >= decay_iters:
        return min_lr
    ratio = (it - warmup_iters) / max(1, decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def onecycle_lr(it: int, *, lr: float, total_iters: int, pct_start: float = 0.3, div_factor: float = 25.0,
                final_div_factor: float = 1e4) -> float:
    """One-cycle learning rate at step ``it`` (Smith & Topin), PyTorch ``OneCycleLR``'s cosine form.

    From lr / div_factor up to ``lr`` along a half cosine over the first
    ``pct_start`` of ``total_iters`` steps, then down along a half cosine to
    lr / (div_factor * final_div_factor) at the last step. Momentum is not
    cycled (the experiments keep AdamW's betas fixed).
    """
    start, peak, end = lr / div_factor, lr, lr / (div_factor * final_div_factor)
    up = float(pct_start * total_iters) - 1.0
    down = float(total_iters) - 1.0
    if it <= up:
        pct = it / up if up > 0 else 1.0
        lo, hi = start, peak
    else:
        pct = (it - up) / (down - up) if down > up else 1.0
        lo, hi = peak, end
    pct = min(max(pct, 0.0), 1.0)
    return hi + 0.5 * (1.0 + math.cos(math.pi * pct)) * (lo - hi)


def decay_lr(step: int, *, start: float, end: float, steps: int) -> float:
    """Learning rate at ``step`` (0, 1, ..., steps - 1) of a half cosine from just below ``start`` down to ``end``.

    The decay of the plateau rule (:class:`.configs.ViTConfig` ``decay_epochs``):
    the last step, ``steps - 1``, is taken at exactly ``end``, so a run that stops
    after the decay has reached its minimum learning rate.
    """
    steps = check_scalar(steps, "steps", low=1, integer=True)
    step = check_scalar(step, "step", low=0, high=steps - 1, integer=True)
    return end + 0.5 * (1.0 + math.cos(math.pi * (step + 1) / steps)) * (start - end)


#: learning-rate schedules of the experiments
SCHEDULES = ("cosine", "onecycle")
