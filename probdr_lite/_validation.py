"""Input checks shared by every public function.

Each check raises ``ValueError`` or ``TypeError`` with a message that names the
parameter and the allowed range, so that a reader who moves a slider too far or
passes the wrong array sees what went wrong instead of a traceback from deep
inside torch or SciPy.
"""

from __future__ import annotations

import numbers
from typing import Iterable

import numpy as np

try:  # torch is a hard dependency of the package, but keep this module light
    import torch
except ImportError:  # pragma: no cover - torch is always installed in practice
    torch = None


def _interval(low, high, low_inclusive, high_inclusive) -> str:
    left = "[" if (low_inclusive and low is not None) else "("
    right = "]" if (high_inclusive and high is not None) else ")"
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"{left}{lo}, {hi}{right}"


def check_scalar(
    value,
    name: str,
    *,
    low=None,
    high=None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    integer: bool = False,
):
    """Return ``value`` as a Python number after checking type and range.

    Raises ``TypeError`` for a non-number (bools are refused too) and
    ``ValueError`` for NaN, infinity or a value outside the interval, with a
    message such as ``"kappa must be in (0, 10000]; got -1"``.
    """
    kind = "an integer" if integer else "a real number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if torch is not None and isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        elif isinstance(value, np.ndarray) and value.size == 1 and value.ndim == 0:
            value = value.item()
        else:
            raise TypeError(f"{name} must be {kind}; got {type(value).__name__}")
    if integer:
        if isinstance(value, numbers.Integral):
            value = int(value)
        elif float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be {kind}; got {value!r}")
    else:
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(
                f"{name} must be a finite number in "
                f"{_interval(low, high, low_inclusive, high_inclusive)}; got {value}"
            )
    bad_low = low is not None and (value < low or (value == low and not low_inclusive))
    bad_high = high is not None and (value > high or (value == high and not high_inclusive))
    if bad_low or bad_high:
        raise ValueError(
            f"{name} must be in {_interval(low, high, low_inclusive, high_inclusive)}; got {value!r}"
        )
    return value


def check_choice(value, name: str, choices: Iterable):
    """Return ``value`` if it is one of ``choices`` (strings, or numbers such as a code's 8 or 16 bits; a string
    is never taken for a number or the other way round); otherwise raise ``ValueError``."""
    choices = tuple(choices)
    if isinstance(value, str) != all(isinstance(c, str) for c in choices) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def _shape_message(name, ndim, shape):
    if ndim == 2:
        return f"{name} must be a 2-D array of shape (n, d); got shape {tuple(shape)}"
    if ndim == 1:
        return f"{name} must be a 1-D array of shape (n,); got shape {tuple(shape)}"
    return f"{name} must have {ndim} dimensions; got shape {tuple(shape)}"


_FINITE = "{name} must contain only finite values (no NaN or inf)"


def _check_shape(X, name, ndim, min_rows, square) -> None:
    """Number of dimensions, rows and squareness of an array or tensor, with messages naming ``name``."""
    shape = tuple(X.shape)
    if len(shape) != ndim:
        raise ValueError(_shape_message(name, ndim, shape))
    if shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows; got {shape[0]}")
    if square and shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square (n, n) matrix; got shape {shape}")


def check_array(
    X,
    name: str,
    *,
    ndim: int = 2,
    min_rows: int = 1,
    square: bool = False,
    dtype=None,
) -> np.ndarray:
    """Return ``X`` as a finite floating-point NumPy array.

    Accepts NumPy arrays, torch tensors (moved to the CPU and detached) and
    nested lists. Float32 and float64 are kept; anything else becomes float64
    unless ``dtype`` is given.
    """
    if torch is not None and isinstance(X, torch.Tensor):
        X = X.detach().cpu().numpy()
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"{name} must be an array of numbers; got {type(X).__name__}")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of numbers; got {type(X).__name__}") from exc
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
    ):
        raise TypeError(f"{name} must be an array of numbers; got dtype {arr.dtype}")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    _check_shape(arr, name, ndim, min_rows, square)
    if not np.all(np.isfinite(arr)):
        raise ValueError(_FINITE.format(name=name))
    return arr


def check_tensor(
    X,
    name: str,
    *,
    ndim: int = 2,
    min_rows: int = 1,
    square: bool = False,
):
    """Return ``X`` as a finite floating-point torch tensor.

    NumPy arrays and lists are converted (float64 stays float64, float32 stays
    float32, integers become the default torch dtype); tensors keep their
    device and dtype.
    """
    if not isinstance(X, torch.Tensor):
        arr = check_array(X, name, ndim=ndim, min_rows=min_rows, square=square)
        return torch.from_numpy(np.ascontiguousarray(arr))
    if not torch.is_floating_point(X):
        if X.dtype == torch.bool or X.is_complex():
            raise TypeError(f"{name} must be a real floating-point tensor; got {X.dtype}")
        X = X.to(torch.get_default_dtype())
    _check_shape(X, name, ndim, min_rows, square)
    if not bool(torch.isfinite(X).all()):
        raise ValueError(_FINITE.format(name=name))
    return X


def check_latents(X, name: str = "X"):
    """Return ``X`` as a finite float64 torch tensor of latents: shape (n, d_q) with n >= 2 and d_q >= 2."""
    X = check_tensor(X, name, ndim=2, min_rows=2)
    if X.shape[1] < 2:
        raise ValueError(f"{name} must have d_q >= 2 columns; got shape {tuple(X.shape)}")
    return X.to(torch.float64)


def check_seed(seed, name: str = "seed") -> int:
    """Return ``seed`` as a non-negative integer."""
    return check_scalar(seed, name, low=0, integer=True)


def check_square(M, name: str, *, allow_sparse: bool = False):
    """Return ``M`` as a finite float64 (n, n) matrix; a SciPy sparse M stays sparse (CSR) if ``allow_sparse``,
    else it is densified."""
    import scipy.sparse as sp

    if sp.issparse(M):
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ValueError(f"{name} must be a square (n, n) matrix; got shape {M.shape}")
        if not np.issubdtype(M.dtype, np.number):
            raise TypeError(f"{name} must hold numbers; got dtype {M.dtype}")
        M = sp.csr_matrix(M, dtype=np.float64)
        if not np.all(np.isfinite(M.data)):
            raise ValueError(_FINITE.format(name=name))
        return M if allow_sparse else M.toarray()
    return check_array(M, name, ndim=2, square=True).astype(np.float64)


def check_class_labels(labels, n: int, what: str = "the matrix") -> np.ndarray:
    """Return ``labels`` as an (n,) integer array: one class per row of ``what``."""
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"labels must have shape ({n},) to match {what}; got {labels.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integer class labels; got dtype {labels.dtype}")
    return labels


def _producer_name(producer) -> str:
    """``module.function`` of the function whose return value a check expects, read from the function itself so
    that the message follows a rename."""
    if isinstance(producer, str):
        return producer
    return f"{producer.__module__}.{producer.__qualname__}"


def check_result(value, name: str, producer, *, kind: type = dict, keys: Iterable = (), nonempty: bool = True):
    """Return ``value`` if it looks like what ``producer`` (a function, or its dotted name) returns: an instance of
    ``kind``, non-empty unless ``nonempty`` is false, holding every one of ``keys``. Otherwise ``TypeError`` (wrong
    kind) or ``ValueError`` (empty, or keys missing), each naming ``name`` and the producer."""
    expected = f"{name} must be the {kind.__name__} returned by {_producer_name(producer)}"
    if not isinstance(value, kind):
        raise TypeError(f"{expected}; got {type(value).__name__}")
    if nonempty and len(value) == 0:
        raise ValueError(f"{expected}; got an empty {kind.__name__}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{expected}; it lacks {missing}")
    return value


def check_length(values, name: str, n: int, what: str):
    """Return ``values`` if it has exactly ``n`` entries (one per entry of ``what``); else ``ValueError``."""
    if len(values) != n:
        raise ValueError(f"{name} must have {n} {'entry' if n == 1 else 'entries'}, one per {what}; got {len(values)}")
    return values


def check_text(value, name: str, keys: Iterable[str]) -> dict:
    """Return ``value`` if it is a dict of strings with exactly the keys ``keys`` (a chapter's words for the
    builder that fills them: none missing, none unknown); else ``ValueError`` naming ``name`` and the keys."""
    keys = list(keys)
    if not isinstance(value, dict) or set(value) != set(keys) or not all(isinstance(v, str) for v in value.values()):
        got = sorted(value) if isinstance(value, dict) else type(value).__name__
        if isinstance(value, dict) and set(value) == set(keys):
            got = f"a value that is not a string ({[k for k, v in value.items() if not isinstance(v, str)]})"
        raise ValueError(f"{name} must be a dict of strings with exactly the keys {keys}; got {got}")
    return value
