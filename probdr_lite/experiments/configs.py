"""The configurations of the two trained models: every setting of a run, validated at the boundary.

:class:`CharLMConfig` (the character model of :mod:`.charlm`) and
:class:`ViTConfig` (the vision transformer of :mod:`.vit`) live here, apart from
the models, so that the results schema (:mod:`.results`, which fills in the
defaults of old rows) can read them without importing the training code: the
imports of the package go one way, configs -> training -> results -> sweeps.
A results row stores its config as a dict (:meth:`ConfigDict.to_dict`), and
``Config.from_dict(row["config"])`` rebuilds the exact configuration of that run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_choice, check_scalar
from ._runtime import ConfigDict
from .attention import INIT_SCHEMES, SCHEDULES, cosine_lr, onecycle_lr


@dataclass
class CharLMConfig(ConfigDict):
    """Model, optimiser and evaluation settings; the defaults are nanoGPT's CPU configuration."""

    # model
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64  # context length T
    vocab_size: int = 65  # the 65 characters of Tiny Shakespeare
    dropout: float = 0.0
    bias: bool = False  # biases in Linear and LayerNorm (nanoGPT's train.py default)
    tie_weights: bool = True  # output layer shares the token embedding
    init_std: float = 0.02
    init: str = "gpt2"  # "gpt2" (N(0, init_std^2), scaled residual projections), "default" (PyTorch's), or an
    # intervention that draws only W_V and W_O at the other one's scale (attention.VO_SCALE)
    # optimisation
    batch_size: int = 12
    max_iters: int = 2000
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    lr_decay_iters: int = 0  # end of the cosine; 0 means max_iters
    beta1: float = 0.9
    beta2: float = 0.99
    weight_decay: float = 0.1
    grad_clip: float = 1.0  # 0 disables clipping
    # evaluation
    eval_interval: int = 250
    eval_iters: int = 200  # batches per split per evaluation
    train_fraction: float = 0.9

    def __post_init__(self):
        self.validate()

    def validate(self) -> "CharLMConfig":
        """Check every field; raise ``ValueError``/``TypeError`` naming the field and its range."""
        ints = {"n_layer": (1, 64), "n_head": (1, 64), "n_embd": (1, 8192), "block_size": (1, 8192),
                "vocab_size": (2, 1_000_000), "batch_size": (1, 1_000_000), "max_iters": (1, 10_000_000),
                "warmup_iters": (0, 10_000_000), "lr_decay_iters": (0, 10_000_000),
                "eval_interval": (1, 10_000_000), "eval_iters": (1, 1_000_000)}
        for name, (lo, hi) in ints.items():
            setattr(self, name, check_scalar(getattr(self, name), name, low=lo, high=hi, integer=True))
        self.check_shared_fields()
        self.train_fraction = check_scalar(self.train_fraction, "train_fraction", low=0, high=1,
                                           low_inclusive=False, high_inclusive=False)
        for name in ("bias", "tie_weights"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False; got {getattr(self, name)!r}")
        self.init = check_choice(self.init, "init", INIT_SCHEMES)
        return self

    @property
    def decay_iters(self) -> int:
        """Where the cosine reaches ``min_lr``."""
        return self.lr_decay_iters or self.max_iters



@dataclass
class ViTConfig(ConfigDict):
    """Model, optimiser, data and evaluation settings of the MNIST vision transformer."""

    # model
    image_size: int = 28
    patch_size: int = 7  # 28 / 7 = 4, so 16 patch tokens plus the class token
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 64
    n_classes: int = 10
    dropout: float = 0.0
    bias: bool = True
    init_std: float = 0.02
    init: str = "gpt2"  # "gpt2" (N(0, init_std^2)), "default" (PyTorch's layer initialisation), or an
    # intervention that draws only W_V and W_O at the other one's scale (attention.VO_SCALE)
    # optimisation
    batch_size: int = 128
    epochs: int = 10  # 630 steps on 8,000 images; with patience > 0 the most it may train
    patience: int = 0  # the plateau rule: fires when the validation loss has not improved for this many epochs
    decay_epochs: int = 0  # once the rule fires, decay the learning rate to min_lr over this many epochs; 0: stop
    schedule: str = "cosine"  # "cosine" (warm-up + cosine) or "onecycle"
    lr: float = 3e-3
    min_lr: float = 1e-5
    warmup_iters: int = 50
    beta1: float = 0.9
    beta2: float = 0.99
    weight_decay: float = 0.05
    grad_clip: float = 1.0  # 0 disables clipping
    # data and evaluation
    n_train: int = 8000  # ignored with standard_split
    n_val: int = 2000  # ignored with standard_split
    n_test: int = 0  # a test split held out before train/validation (0: none); scored once, at the end of a run
    split_seed: int = 0  # the train/validation(/test) split, the same for every run
    standard_split: bool = False  # 60,000 train / 10,000 test (needs a network)
    n_train_eval: int = 2000  # training images whose loss is tracked in the curve

    def __post_init__(self):
        self.validate()

    def validate(self) -> "ViTConfig":
        """Check every field; raise ``ValueError``/``TypeError`` naming the field and its range."""
        ints = {"image_size": (1, 4096), "patch_size": (1, 4096), "n_layer": (1, 64), "n_head": (1, 64),
                "n_embd": (1, 8192), "n_classes": (2, 100_000), "batch_size": (1, 1_000_000),
                "epochs": (1, 100_000), "patience": (0, 100_000), "decay_epochs": (0, 100_000), "warmup_iters": (0, 10_000_000), "n_train": (1, 9_999),
                "n_val": (1, 9_999), "n_test": (0, 9_998), "split_seed": (0, 2**32 - 1), "n_train_eval": (1, 60_000)}
        for name, (lo, hi) in ints.items():
            setattr(self, name, check_scalar(getattr(self, name), name, low=lo, high=hi, integer=True))
        if self.image_size % self.patch_size != 0:
            raise ValueError(f"patch_size must divide image_size={self.image_size}; got {self.patch_size}")
        if self.n_train + self.n_val + self.n_test > 10_000:
            raise ValueError(f"n_train + n_val + n_test must be at most 10000 (the vendored MNIST test set); "
                             f"got {self.n_train} + {self.n_val} + {self.n_test}")
        if self.decay_epochs and not self.patience:
            raise ValueError(f"decay_epochs must be 0 when patience is 0 (no plateau rule, nothing to decay "
                             f"after); got decay_epochs={self.decay_epochs}")
        self.check_shared_fields()
        for name in ("bias", "standard_split"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False; got {getattr(self, name)!r}")
        if self.standard_split and self.n_test:
            raise ValueError(f"n_test must be 0 with standard_split (its 10,000 test images are the validation "
                             f"set); got n_test={self.n_test}")
        self.init = check_choice(self.init, "init", INIT_SCHEMES)
        self.schedule = check_choice(self.schedule, "schedule", SCHEDULES)
        return self

    def to_dict(self) -> dict:
        """The config as a dict; ``n_test`` only when a test split is used (it came after the exploratory rows,
        whose stored configs, and so their identity in the grids, stay what they were)."""
        d = super().to_dict()
        if not d["n_test"]:
            del d["n_test"]
        return d

    def lr_at(self, it: int, total_iters: int) -> float:
        """Learning rate at step ``it`` of ``total_iters`` under this config's schedule (before any plateau)."""
        if self.schedule == "onecycle":
            return onecycle_lr(it, lr=self.lr, total_iters=total_iters)
        return cosine_lr(it, lr=self.lr, min_lr=self.min_lr, warmup_iters=self.warmup_iters,
                         decay_iters=total_iters)

    @property
    def n_patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2
