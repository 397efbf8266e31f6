"""A GPT-style character language model on Tiny Shakespeare, with A, A - I or A - g I attention.

The experiment behind the paper's first claim (Ravuri & Lawrence, arXiv
2507.21040: validation loss is lower with A - I), rerun with seeds. The model
and the recipe follow nanoGPT's ``shakespeare_char`` CPU configuration, whose
published validation loss (about 1.88) anchors the baseline arm:

- pre-LayerNorm blocks (:class:`.attention.Block`), causal multi-head attention
  through ``torch.nn.functional.scaled_dot_product_attention``, GELU MLP,
  learned position embeddings, a final LayerNorm, no biases, the token
  embedding tied to the output layer;
- weights ~ N(0, 0.02^2), the residual output projections scaled by
  1 / sqrt(2 n_layer) (``init="gpt2"``; ``init="default"`` keeps PyTorch's own
  layer initialisation instead, a recipe factor of the sweep);
- AdamW (betas 0.9, 0.99; weight decay 0.1 on the 2-D weights only), learning
  rate warmed up linearly for 100 steps then cosine-decayed from 1e-3 to 1e-4,
  gradient norm clipped at 1;
- the first 90 % of the text for training, the last 10 % for validation;
  batches of 12 random windows of 64 characters;
- losses estimated on ``eval_iters`` = 200 random batches of each split every
  ``eval_interval`` = 250 steps and after the last step.

Reproducibility: one seed drives four independent streams (numpy
``SeedSequence(seed).spawn(4)``): the initial weights, the order of the
training batches, the evaluation batches (the same batches at every
evaluation point) and dropout. None of them depends on ``variant``, so the arms
of a comparison start from the same weights and see the same data; the only
difference is the attention operator (and, for ``gated``, the extra per-head
gate, initialised to 0 without touching the weight stream).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .._validation import check_seed
from ._training import StepClock, evaluating, results_row, start_run, train_step
from .attention import BlockStack, configure_optimizer, cosine_lr
from .configs import CharLMConfig
from .mechanism import MechanismRecorder

#: windows of validation text on which :mod:`.mechanism` probes the blocks (drawn from a fifth seed stream)
PROBE_WINDOWS = 16


class CharLM(BlockStack):
    """Decoder-only transformer over characters; ``variant`` picks the attention operator.

    Parameters
    ----------
    config : CharLMConfig
    variant : {"attention", "diffusion", "gated", "gated-from-1"}
        ``"symmetric"`` is refused: the causal mask makes the graph directed.
    generator : torch.Generator, optional
        Source of the initial weights (default: a generator seeded with 0).
    """

    def __init__(self, config: CharLMConfig, variant: str = "attention", generator=None):
        super().__init__(config, variant, causal=True)
        c = config
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)  # token embedding
        self.wpe = nn.Embedding(c.block_size, c.n_embd)  # position embedding
        self.drop = nn.Dropout(c.dropout)
        self.add_blocks(c, variant, causal=True)  # (blocks, ln_f)
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        if c.tie_weights:
            self.lm_head.weight = self.wte.weight  # one matrix reads and writes characters
        self.initialise(c, generator)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        """Logits (B, T, vocab) for character ids ``idx`` (B, T); the mean cross-entropy if ``targets``."""
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError(f"sequence length must be at most block_size={self.config.block_size}; got {T}")
        pos = torch.arange(T, device=idx.device)  # (T,)
        x = self.drop(self.wte(idx) + self.wpe(pos))  # (B, T, C)
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def seed_streams(seed: int, n: int = 4) -> list:
    """``n`` independent 63-bit seeds derived from ``seed`` (numpy ``SeedSequence.spawn``)."""
    seed = check_seed(seed)
    return [int(s.generate_state(1, np.uint64)[0] >> np.uint64(1)) for s in np.random.SeedSequence(seed).spawn(n)]


def get_batch(data: torch.Tensor, block_size: int, batch_size: int, generator: torch.Generator,
              device: str = "cpu"):
    """``batch_size`` random windows of ``data``: inputs (B, T) and next-character targets (B, T)."""
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    offsets = ix.unsqueeze(1) + torch.arange(block_size)  # (B, T)
    x, y = data[offsets], data[offsets + 1]  # (B, T) each
    return x.to(device), y.to(device)


def batch_losses(model: CharLM, data: torch.Tensor, eval_iters: int, batch_size: int, seed: int,
                 device: str) -> np.ndarray:
    """The loss of each of ``eval_iters`` random batches drawn from a generator seeded with ``seed``."""
    g = torch.Generator().manual_seed(seed)
    out = np.empty(eval_iters)
    with evaluating(model):
        for i in range(eval_iters):
            x, y = get_batch(data, model.config.block_size, batch_size, g, device)
            out[i] = model(x, y)[1].item()
    return out


def estimate_loss(model: CharLM, data: torch.Tensor, eval_iters: int, batch_size: int, seed: int,
                  device: str) -> float:
    """Mean loss over ``eval_iters`` random batches drawn from a generator seeded with ``seed``."""
    return float(sum(batch_losses(model, data, eval_iters, batch_size, seed, device).tolist()) / eval_iters)


def load_corpus(train_fraction: float = 0.9):
    """Tiny Shakespeare encoded as int64 tensors: (train, val, vocab)."""
    from ..data import load_shakespeare

    sh = load_shakespeare(train_fraction)
    return torch.from_numpy(sh.encode(sh.train)), torch.from_numpy(sh.encode(sh.val)), list(sh.vocab)


def train_charlm(config: CharLMConfig | None = None, variant: str = "attention", seed: int = 0, *,
                 device: str = "auto", threads: int | None = None, quiet: bool = False,
                 command: str | None = None, return_model: bool = False, measure: bool = True):
    """Train one arm for one seed and return its results row (see :mod:`.results` for the schema).

    Parameters
    ----------
    config : CharLMConfig, optional
        Defaults to nanoGPT's CPU configuration.
    variant : {"attention", "diffusion", "gated", "gated-from-1"}
    seed : int >= 0
    device : {"auto", "cpu", "cuda"}
    threads : int, optional
        Torch intra-op threads (default: the usable cores, at most 8).
    quiet : bool
        No progress bar (nothing is written to stderr).
    command : str, optional
        Command line recorded in the row.
    return_model : bool
        Return ``(row, trained model)`` instead of the row alone.
    measure : bool
        Record :mod:`.mechanism`'s measurements in the row (field ``mechanism``,
        on :data:`PROBE_WINDOWS` validation windows); they do not change training.

    Returns
    -------
    dict
        ``final_val_loss``, ``best_val_loss``, the evaluation ``curve``
        ([iter, train_loss, val_loss] rows), ``throughput`` in tokens per
        second of training (evaluation excluded), timings and provenance.
    """
    from tqdm.auto import tqdm

    config, variant, seed, device, threads, wall_start = start_run(
        config, CharLMConfig, variant, causal=True, seed=seed, device=device, threads=threads)

    train_data, val_data, vocab = load_corpus(config.train_fraction)
    if len(vocab) != config.vocab_size:
        raise ValueError(f"vocab_size must equal the corpus vocabulary ({len(vocab)}); got {config.vocab_size}")
    s_init, s_batch, s_eval, s_dropout = seed_streams(seed)
    torch.manual_seed(s_dropout)  # dropout is the only user of the global generator
    model = CharLM(config, variant, torch.Generator().manual_seed(s_init)).to(device)
    optimizer = configure_optimizer(model, lr=config.lr, weight_decay=config.weight_decay,
                                    betas=(config.beta1, config.beta2), device=device)
    batch_gen = torch.Generator().manual_seed(s_batch)
    recorder = None
    if measure:
        probe_gen = torch.Generator().manual_seed(seed_streams(seed, 5)[4])  # a fifth stream, not used in training
        probe, _ = get_batch(val_data, config.block_size, PROBE_WINDOWS, probe_gen, device)
        recorder = MechanismRecorder(model, probe, f"{PROBE_WINDOWS} random validation windows of "
                                                   f"{config.block_size} characters", config.grad_clip)

    def evaluate(it):
        tr = estimate_loss(model, train_data, config.eval_iters, config.batch_size, s_eval, device)
        va = estimate_loss(model, val_data, config.eval_iters, config.batch_size, s_eval + 1, device)
        curve.append([it, tr, va])
        if recorder is not None:
            recorder.record(it)
        return va

    curve = []
    clock = StepClock(device)
    bar = tqdm(range(config.max_iters), desc=f"charlm {variant} seed {seed}", disable=quiet,
               leave=False, dynamic_ncols=True)
    model.train()
    for it in bar:
        if it % config.eval_interval == 0:
            va = evaluate(it)
            bar.set_postfix(val_loss=f"{va:.4f}")
        clock.start()
        x, y = get_batch(train_data, config.block_size, config.batch_size, batch_gen, device)
        lr = cosine_lr(it, lr=config.lr, min_lr=config.min_lr, warmup_iters=config.warmup_iters,
                       decay_iters=config.decay_iters)
        train_step(model, optimizer, x, y, lr=lr, grad_clip=config.grad_clip,
                   what=f"charlm {variant} seed {seed}", it=it,
                   after_backward=None if recorder is None else recorder.after_backward)
        clock.stop()
    bar.close()
    evaluate(config.max_iters)

    row = results_row("charlm", variant, seed, config, curve,
                       throughput=config.max_iters * config.batch_size * config.block_size / clock.seconds,
                       throughput_unit="tokens/s", n_params=model.num_parameters(), train_seconds=clock.seconds,
                       wall_start=wall_start, device=device, threads=threads, command=command,
                       gates=model.gates(),
                       extra=None if recorder is None else {"mechanism": recorder.finish()})
    return (row, model) if return_model else row
