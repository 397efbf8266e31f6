"""A small vision transformer on MNIST, with A, A - I, A - g I, A_sym or A_sym - I attention.

The experiment behind the paper's second claim (Ravuri & Lawrence, arXiv
2507.21040: validation accuracy is higher with A - I; they used down-sampled
ImageNet), scaled to what runs offline on a laptop CPU. Each 28 x 28 image is
cut into 16 patches of 7 x 7 pixels; each patch is mapped linearly to a
64-wide token, a learned class token is prepended and learned position
embeddings added, and 4 pre-LayerNorm blocks (:class:`.attention.Block`, no
causal mask, 4 heads) follow; the class token's final state, after a
LayerNorm, is mapped to the 10 logits. Without a causal mask the two
symmetric arms (an undirected graph: ``sym-normalised`` A_sym = D^{-1/2} E D^{-1/2}
and ``symmetric`` A_sym - I) are admissible too.

Data. Only the MNIST *test* set (10,000 images) ships with the package, so by
default it is split into 8,000 training and 2,000 validation images by a
stratified random split with a fixed seed (scikit-learn's
``train_test_split(..., stratify=labels, random_state=split_seed)``,
``split_seed`` = 0 whatever the run's seed, so every run sees the same split).
With ``standard_split=True`` (``--standard-split``) the model is trained on the
60,000-image training set and validated on the 10,000-image test set; this
needs torchvision's download and so a network. Pixels are standardised with
the usual MNIST mean 0.1307 and standard deviation 0.3081; no augmentation.
With ``n_test`` > 0 (the confirmatory round, :mod:`.confirmatory`) a test split of
that many images is held out first by the same stratified split, the training
and validation images are drawn from the rest, and the final model is scored on
it once, after training: the row gains ``test_loss``, ``test_acc`` and
``test_predictions`` (each test image's predicted class, in order).

Training: AdamW (weight decay on the 2-D weights only), gradient clipping,
and up to ``epochs`` passes over the training images in an order drawn from
the run's batch stream. The learning-rate schedule (``schedule``) runs over
all ``epochs``: ``"cosine"`` is a linear warm-up over ``warmup_iters`` steps
then a cosine decay to ``min_lr``; ``"onecycle"`` is PyTorch's one-cycle
shape (:func:`.attention.onecycle_lr`, 30 % up, 70 % down, ``min_lr`` unused).
Evaluation (before training and after every epoch): loss and accuracy on the
whole validation set, and the loss on the first ``n_train_eval`` training
images. With ``patience`` > 0 the *plateau rule* (:class:`.plateau.Plateau`)
fires once the validation loss has not improved for ``patience`` epochs.
With ``decay_epochs`` = 0 the run stops there (the rule of results schema
version 2, which stops while the schedule may still be far from its minimum);
with ``decay_epochs`` = d > 0 the learning rate then decays along a half cosine
from its current value to ``min_lr`` over the next d epochs
(:func:`.attention.decay_lr`, fewer if ``epochs`` comes first) and the run
stops after them, at the minimum learning rate. A run whose rule never fires
ends after ``epochs`` epochs, where the schedule itself has reached its end.
``epochs`` is the most it may train, the row's ``epochs_run`` says how many it
did, ``plateau_index`` where the rule fired, and ``checkpoint_*`` where the
validation loss was lowest (the best checkpoint).
The initialisation (``init``) is ``"gpt2"`` (every weight matrix, the class
token and the position embeddings N(0, 0.02^2)) or ``"default"`` (PyTorch's
layer initialisation; see :func:`.attention.init_weights`).

The defaults (10 epochs of batch 128, learning rate 3e-3, warm-up + cosine,
GPT-2 init) are the recipe of the first sweep, a budget choice: every arm was
still improving when it stopped. The recipe grid of :mod:`.sweep` varies them.

Reproducibility: as in :mod:`.charlm`, one seed gives independent streams for
the initial weights, the batch order and dropout, none of which depends on
``variant``.
"""

from __future__ import annotations

import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ._training import StepClock, evaluating, results_row, start_run, train_step
from .attention import BlockStack, configure_optimizer, decay_lr
from .charlm import seed_streams
from .configs import ViTConfig
from .mechanism import MechanismRecorder
from .plateau import Plateau

#: validation images (the first ones) on which :mod:`.mechanism` probes the blocks
PROBE_IMAGES = 256

MNIST_MEAN, MNIST_STD = 0.1307, 0.3081


class ViT(BlockStack):
    """Vision transformer over image patches; ``variant`` picks the attention operator.

    Parameters
    ----------
    config : ViTConfig
    variant : {"attention", "diffusion", "gated", "gated-from-1", "sym-normalised", "symmetric"}
    generator : torch.Generator, optional
        Source of the initial weights (default: a generator seeded with 0).
    """

    def __init__(self, config: ViTConfig, variant: str = "attention", generator=None):
        super().__init__(config, variant, causal=False)
        c = config
        self.patch_embed = nn.Linear(c.patch_size * c.patch_size, c.n_embd, bias=c.bias)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c.n_embd))
        self.pos_emb = nn.Parameter(torch.zeros(1, c.n_patches + 1, c.n_embd))
        self.drop = nn.Dropout(c.dropout)
        self.add_blocks(c, variant, causal=False)  # (blocks, ln_f)
        self.head = nn.Linear(c.n_embd, c.n_classes, bias=c.bias)
        self.initialise(c, generator)

    def patchify(self, images: torch.Tensor) -> torch.Tensor:
        """Flattened images (B, H*W) -> non-overlapping patches (B, n_patches, p*p), row-major."""
        B = images.shape[0]
        s, p = self.config.image_size, self.config.patch_size
        g = s // p
        x = images.view(B, g, p, g, p)  # (B, row block, row in patch, col block, col in patch)
        return x.permute(0, 1, 3, 2, 4).reshape(B, g * g, p * p)  # (B, N, p*p)

    def forward(self, images: torch.Tensor, labels: torch.Tensor | None = None):
        """Logits (B, n_classes) for standardised images (B, H*W); mean cross-entropy if ``labels``."""
        x = self.patch_embed(self.patchify(images))  # (B, N, C)
        cls = self.cls_token.expand(x.shape[0], -1, -1)  # (B, 1, C)
        x = self.drop(torch.cat([cls, x], dim=1) + self.pos_emb)  # (B, N+1, C)
        for block in self.blocks:
            x = block(x)  # (B, N+1, C)
        logits = self.head(self.ln_f(x[:, 0]))  # (B, n_classes): read out the class token
        if labels is None:
            return logits, None
        return logits, F.cross_entropy(logits, labels)


def load_split(config: ViTConfig):
    """Standardised (train_x, train_y, val_x, val_y) tensors as described in the module docstring.

    With ``config.n_test`` > 0 a test split of that many images is held out first (stratified, ``split_seed``),
    and the training and validation images are drawn from the rest; :func:`load_test_split` returns it.
    """
    return _split(config)[:4]


def load_test_split(config: ViTConfig):
    """Standardised (test_x, test_y) of the held-out test split (``config.n_test`` > 0; else ValueError)."""
    if not config.n_test:
        raise ValueError("config.n_test must be > 0 for a test split; got 0")
    return _split(config)[4:]


def _split(config: ViTConfig):
    from ..data import load_mnist

    test = None
    if config.standard_split:
        train_x, train_y = load_mnist(split="train")
        val_x, val_y = load_mnist(split="test")
    else:
        from sklearn.model_selection import train_test_split

        images, labels = load_mnist(split="test")
        pool = np.arange(len(labels))
        if config.n_test:
            # the test images first, so that no choice of n_train or n_val can move one of them into training
            pool, idx_test = train_test_split(pool, test_size=config.n_test, stratify=labels,
                                              random_state=config.split_seed)
            test = (images[idx_test], labels[idx_test])
        idx_train, idx_val = train_test_split(pool, train_size=config.n_train, test_size=config.n_val,
                                              stratify=labels[pool], random_state=config.split_seed)
        train_x, train_y = images[idx_train], labels[idx_train]
        val_x, val_y = images[idx_val], labels[idx_val]

    def prep(x, y):
        return torch.from_numpy((x - MNIST_MEAN) / MNIST_STD).float(), torch.from_numpy(y).long()

    out = (*prep(train_x, train_y), *prep(val_x, val_y))
    return out if test is None else (*out, *prep(*test))


def evaluate(model: ViT, x: torch.Tensor, y: torch.Tensor, device: str, batch_size: int = 1000,
             predictions: list | None = None):
    """Mean cross-entropy and accuracy of ``model`` on (x, y); the predicted classes are appended to
    ``predictions`` when a list is given."""
    loss_sum, correct = 0.0, 0
    with evaluating(model):
        for i in range(0, len(y), batch_size):
            xb, yb = x[i:i + batch_size].to(device), y[i:i + batch_size].to(device)
            logits, _ = model(xb)
            loss_sum += F.cross_entropy(logits, yb, reduction="sum").item()
            predicted = logits.argmax(dim=1)
            correct += (predicted == yb).sum().item()
            if predictions is not None:
                predictions.extend(int(c) for c in predicted.tolist())
    return loss_sum / len(y), correct / len(y)


def train_vit(config: ViTConfig | None = None, variant: str = "attention", seed: int = 0, *,
              device: str = "auto", threads: int | None = None, quiet: bool = False,
              command: str | None = None, measure: bool = True) -> dict:
    """Train one arm for one seed and return its results row (see :mod:`.results` for the schema).

    Parameters as :func:`.charlm.train_charlm` (``measure`` probes the first
    :data:`PROBE_IMAGES` validation images); ``variant`` may also be
    ``"sym-normalised"`` or ``"symmetric"``. The row's ``curve`` has columns [iter, train_loss,
    val_loss, val_acc]; ``final_val_acc``/``best_val_acc`` and
    ``final_val_loss``/``best_val_loss`` summarise it; ``throughput`` is
    training images per second (evaluation excluded).
    """
    from tqdm.auto import tqdm

    config, variant, seed, device, threads, wall_start = start_run(
        config, ViTConfig, variant, causal=False, seed=seed, device=device, threads=threads)

    split = _split(config)
    train_x, train_y, val_x, val_y = split[:4]
    n_train = len(train_y)
    steps_per_epoch = math.ceil(n_train / config.batch_size)
    total_steps = steps_per_epoch * config.epochs
    s_init, s_batch, _, s_dropout = seed_streams(seed)
    torch.manual_seed(s_dropout)
    model = ViT(config, variant, torch.Generator().manual_seed(s_init)).to(device)
    optimizer = configure_optimizer(model, lr=config.lr, weight_decay=config.weight_decay,
                                    betas=(config.beta1, config.beta2), device=device)
    batch_gen = torch.Generator().manual_seed(s_batch)
    n_te = min(config.n_train_eval, n_train)

    curve = []
    recorder = None
    if measure:
        recorder = MechanismRecorder(model, val_x[:PROBE_IMAGES].to(device),
                                     f"the first {min(PROBE_IMAGES, len(val_y))} validation images", config.grad_clip)

    def record(it):
        tr_loss, _ = evaluate(model, train_x[:n_te], train_y[:n_te], device)
        va_loss, va_acc = evaluate(model, val_x, val_y, device)
        curve.append([it, tr_loss, va_loss, va_acc])
        if recorder is not None:
            recorder.record(it)
        return va_acc

    record(0)
    clock, it, epochs_run = StepClock(device), 0, 0
    plateau = Plateau(config.patience)
    plateau.update(curve[0][2])
    decay = None  # (first step, steps, start lr, last epoch) once the plateau rule has fired
    what = f"vit {variant} seed {seed}"
    bar = tqdm(total=total_steps, desc=what, disable=quiet, leave=False, dynamic_ncols=True)
    model.train()
    while epochs_run < config.epochs:
        order = torch.randperm(n_train, generator=batch_gen)
        for b in range(steps_per_epoch):
            clock.start()
            idx = order[b * config.batch_size:(b + 1) * config.batch_size]
            xb, yb = train_x[idx].to(device), train_y[idx].to(device)
            lr = (config.lr_at(it, total_steps) if decay is None else
                  decay_lr(it - decay[0], start=decay[2], end=config.min_lr, steps=decay[1]))
            train_step(model, optimizer, xb, yb, lr=lr, grad_clip=config.grad_clip, what=what, it=it,
                       after_backward=None if recorder is None else recorder.after_backward)
            clock.stop()
            it += 1
            bar.update(1)
        epochs_run += 1
        acc = record(it)
        bar.set_postfix(val_acc=f"{acc:.4f}")
        if decay is None and plateau.update(curve[-1][2]):
            n_decay = min(config.decay_epochs, config.epochs - epochs_run)
            if n_decay == 0:
                break
            decay = (it, n_decay * steps_per_epoch, config.lr_at(it, total_steps), epochs_run + n_decay)
        elif decay is not None and epochs_run >= decay[3]:
            break
    bar.close()
    test = {}
    if config.n_test:
        # scored once, on the final model: nothing in training or in the plateau rule ever saw these images
        test_x, test_y = split[4:]
        predicted = []
        test["test_loss"], test["test_acc"] = evaluate(model, test_x, test_y, device, predictions=predicted)
        test["test_predictions"] = "".join(str(c) for c in predicted)

    return results_row("vit", variant, seed, config, curve, throughput=n_train * epochs_run / clock.seconds,
                       throughput_unit="images/s", n_params=model.num_parameters(), train_seconds=clock.seconds,
                       wall_start=wall_start, device=device, threads=threads, command=command,
                       gates=model.gates(), extra={"epochs_run": epochs_run, **test, **(
                           {} if recorder is None else {"mechanism": recorder.finish()})})
