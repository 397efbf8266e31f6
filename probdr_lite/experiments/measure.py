"""Small measurements that support the chapter's readings of the sweeps.

- :func:`eval_spread` trains one character model and measures the loss of each
  of many validation batches, which gives the standard deviation of a loss
  estimated from ``k`` batches (nanoGPT's published figure used 20, our rows 200).

``python -m probdr_lite.experiments eval-spread --out FILE`` runs it and writes
the numbers as JSON (with provenance).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_scalar, check_seed
from ._runtime import provenance, resolve_device, set_threads
from .charlm import CharLMConfig, batch_losses, load_corpus, seed_streams, train_charlm


def k_batch_sd(batch_sd: float, k: int) -> float:
    """Standard deviation of the mean of ``k`` independent batch losses whose sd is ``batch_sd``."""
    batch_sd = check_scalar(batch_sd, "batch_sd", low=0)
    k = check_scalar(k, "k", low=1, integer=True)
    return batch_sd / math.sqrt(k)


def eval_spread(config: CharLMConfig | None = None, seed: int = 0, *, n_batches: int = 1000,
                device: str = "cpu", threads: int | None = 1, command: str | None = None) -> dict:
    """Train the attention arm of ``seed`` and measure the spread of validation-batch losses.

    Returns a dict with ``batch_losses`` (``n_batches`` losses of independent
    random validation batches of the trained model, drawn from a stream that is
    not the run's evaluation stream), ``batch_sd`` (their sd, ddof = 1),
    ``sd_of_mean`` for k = 20 and 200 batches, the run's own ``final_val_loss``
    (its 200-batch estimate), the row of the run and provenance.
    """
    config = CharLMConfig() if config is None else config
    seed = check_seed(seed)
    n_batches = check_scalar(n_batches, "n_batches", low=2, integer=True)
    device = resolve_device(device)
    threads = set_threads(threads)
    row, model = train_charlm(config, "attention", seed, device=device, threads=threads, quiet=True,
                              command=command, return_model=True)
    _, val_data, _ = load_corpus(config.train_fraction)
    stream = seed_streams(seed, 5)[4]  # a fifth stream: not the batches the run evaluated on
    losses = batch_losses(model, val_data, n_batches, config.batch_size, stream, device)
    batch_sd = float(np.std(losses, ddof=1))
    return {
        "what": "validation loss of single batches of the trained attention arm (charlm)",
        "seed": seed,
        "config": config.to_dict(),
        "n_batches": n_batches,
        "batch_losses": losses.tolist(),
        "batch_mean": float(np.mean(losses)),
        "batch_sd": batch_sd,
        "sd_of_mean": {str(k): k_batch_sd(batch_sd, k) for k in (20, 200)},
        "final_val_loss": row["final_val_loss"],
        "row": row,
        **provenance(device, threads, command),
    }
