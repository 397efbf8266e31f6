"""Data the book runs on: the vendored MNIST test set, Tiny Shakespeare and toy manifolds.

Everything here works offline. The MNIST *test* set (10,000 images) and Tiny
Shakespeare ship inside the package (see ``NOTICE.md`` beside this file for
their sources and licences) and are checked against their published SHA-256
digests every time they are read. The 60,000-image MNIST *training* set is
not vendored: ``load_mnist(split="train")`` goes through torchvision's real
download path, which needs a network.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import check_choice, check_scalar, check_seed

__all__ = [
    "DATA_DIR",
    "MNIST_SHA256",
    "SHAKESPEARE_SHA256",
    "DataIntegrityError",
    "Shakespeare",
    "load_mnist",
    "load_shakespeare",
    "read_idx",
    "toy_manifold",
    "TOY_MANIFOLDS",
]

DATA_DIR = Path(__file__).resolve().parent

#: SHA-256 of the *decompressed* vendored files (values published with the data).
MNIST_SHA256 = {
    "t10k-images-idx3-ubyte": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
    "t10k-labels-idx1-ubyte": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
}
SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"

MNIST_N_TEST = 10_000
MNIST_N_TRAIN = 60_000


class DataIntegrityError(ValueError):
    """A vendored data file is missing, truncated or does not match its digest."""


def _default_cache() -> Path:
    """Where torchvision's download goes: ``$PROBDR_LITE_CACHE`` or ``~/.cache/probdr_lite``."""
    return Path(os.environ.get("PROBDR_LITE_CACHE", Path.home() / ".cache" / "probdr_lite"))


def _read_verified(path: Path, sha256: str) -> bytes:
    """Decompress a vendored ``.gz`` file and check its SHA-256, naming the file on failure."""
    if not path.is_file():
        raise DataIntegrityError(
            f"vendored data file {path} is missing; reinstall probdr-lite or restore it from the repository"
        )
    try:
        raw = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:  # truncated or not gzip at all
        raise DataIntegrityError(
            f"vendored data file {path} is corrupted or truncated ({exc}); "
            "restore it from the repository"
        ) from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != sha256:
        raise DataIntegrityError(
            f"vendored data file {path} does not match its published SHA-256 "
            f"(expected {sha256}, got {digest}); restore it from the repository"
        )
    return raw


def read_idx(raw: bytes, name: str = "IDX data") -> np.ndarray:
    """Parse the bytes of an IDX file (the MNIST format) into a uint8 array.

    The header is two zero bytes, a type code (``0x08`` = unsigned byte) and the
    number of dimensions, followed by one big-endian 32-bit size per dimension.
    """
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise DataIntegrityError(f"{name} is not an unsigned-byte IDX file")
    ndim = raw[3]
    header = 4 + 4 * ndim
    dims = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = header + int(np.prod(dims))
    if len(raw) != expected:
        raise DataIntegrityError(f"{name} has {len(raw)} bytes; its header promises {expected}")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)


def _stratified_first(labels: np.ndarray, n: int) -> np.ndarray:
    """Indices of ``n`` images with classes as balanced as the data allow, in file order.

    Classes take turns: the first image of each class, then the second, and so
    on, so that any prefix is balanced; the chosen indices are returned sorted.
    """
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=10)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty_like(order)
    for c in range(10):  # position of each image within its own class
        rank[order[starts[c] : starts[c] + counts[c]]] = np.arange(counts[c])
    by_turn = np.lexsort((labels, rank))  # turn first, then class
    return np.sort(by_turn[:n])


def load_mnist(split="test", n=None, root=None, download=False, stratified=False):
    """Load MNIST as ``(images, labels)``: float32 ``[n, 784]`` in ``[0, 1]`` and int64 ``[n]``.

    Parameters
    ----------
    split : {"test", "train"}
        ``"test"`` reads the 10,000-image test set vendored in this package
        (offline, checked against its SHA-256). ``"train"`` uses torchvision's
        ``MNIST`` download into ``root``; it needs a network.
    n : int, optional
        Keep only ``n`` images: the first ``n`` in file order, or, with
        ``stratified=True``, ``n`` images with the classes as balanced as
        possible (still a deterministic choice).
    root : str or Path, optional
        Cache directory for torchvision's download (default
        ``$PROBDR_LITE_CACHE`` or ``~/.cache/probdr_lite``).
    download : bool
        Use torchvision's download path even for ``split="test"`` (to check
        the vendored copy against the real one, or on a machine without it).
    stratified : bool
        See ``n``.

    Returns
    -------
    images : numpy.ndarray, float32, shape (n, 784), values in [0, 1]
    labels : numpy.ndarray, int64, shape (n,)
    """
    check_choice(split, "split", ("test", "train"))
    if not isinstance(download, bool):
        raise TypeError(f"download must be True or False; got {download!r}")
    total = MNIST_N_TEST if split == "test" else MNIST_N_TRAIN
    if n is not None:
        n = check_scalar(n, "n", low=1, high=total, integer=True)

    if split == "test" and not download:
        images = read_idx(
            _read_verified(DATA_DIR / "mnist" / "t10k-images-idx3-ubyte.gz", MNIST_SHA256["t10k-images-idx3-ubyte"]),
            "t10k-images-idx3-ubyte",
        )
        labels = read_idx(
            _read_verified(DATA_DIR / "mnist" / "t10k-labels-idx1-ubyte.gz", MNIST_SHA256["t10k-labels-idx1-ubyte"]),
            "t10k-labels-idx1-ubyte",
        )
    else:
        images, labels = _torchvision_mnist(split, root)

    images = images.reshape(len(images), -1)
    labels = labels.astype(np.int64)
    if n is not None:
        idx = _stratified_first(labels, n) if stratified else np.arange(n)
        images, labels = images[idx], labels[idx]
    return (images.astype(np.float32) / np.float32(255.0)), labels


def _torchvision_mnist(split, root):
    """The real download path (torchvision), with an offline failure that says what to do."""
    from torchvision.datasets import MNIST  # heavy import, only when asked for

    root = Path(root) if root is not None else _default_cache()
    train = split == "train"
    try:
        dataset = MNIST(str(root), train=train, download=True)
    except Exception as exc:  # URLError, socket errors, HTTP errors: all mean "no network"
        raise RuntimeError(
            f"could not download the MNIST {split} set into {root} ({type(exc).__name__}: {exc}). "
            "This machine seems to be offline. The MNIST test set ships with probdr-lite and "
            "works offline: use load_mnist(split='test')."
        ) from exc
    return dataset.data.numpy(), dataset.targets.numpy()


@dataclass(frozen=True)
class Shakespeare:
    """Tiny Shakespeare as a character-level corpus.

    Attributes
    ----------
    text : str
        All 1,115,394 characters.
    vocab : list of str
        The sorted distinct characters (65 of them).
    train, val : str
        The first 90 % and the last 10 % of ``text`` (the usual split).
    """

    text: str
    vocab: list
    train: str
    val: str

    def encode(self, s: str) -> np.ndarray:
        """Map characters to their index in ``vocab`` (int64)."""
        index = {c: i for i, c in enumerate(self.vocab)}
        try:
            return np.fromiter((index[c] for c in s), dtype=np.int64, count=len(s))
        except KeyError as exc:
            raise ValueError(f"s contains a character outside the vocabulary: {exc.args[0]!r}") from None

    def decode(self, ids) -> str:
        """Map indices back to characters."""
        return "".join(self.vocab[int(i)] for i in ids)

    def __iter__(self):  # allows ``text, vocab, (train, val) = load_shakespeare()``
        return iter((self.text, self.vocab, (self.train, self.val)))


def load_shakespeare(train_fraction=0.9) -> Shakespeare:
    """Load the vendored Tiny Shakespeare text, its vocabulary and a train/validation split.

    Parameters
    ----------
    train_fraction : float in (0, 1)
        Fraction of characters (from the start) used for training; 0.9 is the
        usual split.
    """
    train_fraction = check_scalar(train_fraction, "train_fraction", low=0, high=1,
                                  low_inclusive=False, high_inclusive=False)
    raw = _read_verified(DATA_DIR / "tinyshakespeare" / "input.txt.gz", SHAKESPEARE_SHA256)
    text = raw.decode("utf-8")
    cut = int(len(text) * train_fraction)
    return Shakespeare(text=text, vocab=sorted(set(text)), train=text[:cut], val=text[cut:])


TOY_MANIFOLDS = ("swiss_roll", "s_curve", "moons", "circles")


def toy_manifold(name="swiss_roll", n=1000, noise=0.0, seed=0):
    """A seeded toy data set from scikit-learn's generators.

    Parameters
    ----------
    name : {"swiss_roll", "s_curve", "moons", "circles"}
    n : int >= 10
    noise : float >= 0
        Standard deviation of Gaussian noise added by the generator.
    seed : int >= 0

    Returns
    -------
    Y : numpy.ndarray, shape (n, 3) for the swiss roll and S-curve, (n, 2) otherwise
    t : numpy.ndarray, shape (n,)
        The position along the manifold (swiss roll, S-curve) or the class label
        (moons, circles): what a good embedding should reveal.
    """
    from sklearn import datasets

    check_choice(name, "name", TOY_MANIFOLDS)
    n = check_scalar(n, "n", low=10, high=1_000_000, integer=True)
    noise = check_scalar(noise, "noise", low=0, high=10)
    seed = check_seed(seed)
    if name == "swiss_roll":
        Y, t = datasets.make_swiss_roll(n, noise=noise, random_state=seed)
    elif name == "s_curve":
        Y, t = datasets.make_s_curve(n, noise=noise, random_state=seed)
    elif name == "moons":
        Y, t = datasets.make_moons(n, noise=noise, random_state=seed)
    else:
        Y, t = datasets.make_circles(n, noise=noise, factor=0.5, random_state=seed)
    return Y, t
