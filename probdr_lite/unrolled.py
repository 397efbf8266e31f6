"""The ELBO's gradient step as a transformer block: the block maths (notes section 3, objections in section 4).

One idea, the step X <- Pi(X + eta D) of each variant beside its equation, read top to bottom:

1. ``layer_norm`` is Pi, the LayerNorm without affine terms or epsilon: the Euclidean projection of every row onto
   {x : 1^T x = 0, ||x||^2 = d_q} (notes 3.6). ``embed`` maps data to the first latents, Pi(Y W_E).
2. ``attention_matrix`` is the row softmax A = sigma(S) of the logits S = (kappa / d_q) X X^T - beta I + M
   (notes 3.1 and 3.3; M is 0 where a point attends and -inf where it is blocked); ``attention_times`` is A X for
   any n without forming A, and ``regulariser_gradient`` the exact 2 C^{-1} X of the log-det term.
3. ``update_direction`` gives the raw direction D of one step for each ``variant``; ``block_step`` returns
   Pi(X + eta D) and ``unroll`` repeats it. The variants, with L = I - A and C = X X^T + beta I:

   ===========  =============================================  ======================================
   variant      direction D                                     reading
   ===========  =============================================  ======================================
   attention    2 A X                                           a standard block at diagonal init
   diffusion    2 (A - I) X = -2 L X                            the paper's A - I (notes 3.3)
   paper        2 (A - I) X + 2 X / (d_q + beta)                A - I plus the approximated regulariser
                                                                (notes 3.3 + 3.4)
   exact        2 C^{-1} X - (L + L^T) X                        the stop-gradient ELBO gradient
                                                                (notes section 2; objections 1 and 4)
   symmetric    2 (D^{-1/2} E D^{-1/2} - I) X, E = exp(S)       a symmetric-graph diffusion (objection 1)
   full         grad_X [log det C - tr(X^T L(X) X)]             A's dependence on X kept (objection 3)
   ===========  =============================================  ======================================

   "exact" is not re-derived here: it is the ELBO chapter's gradient (nu / 2) [2 C^{-1} X - (L + L^T) X] with
   L = I - A and nu = 2, computed by the same kernel as ``probdr.le_elbo_grad`` (:mod:`probdr_lite._elbo`, which
   also gives log det C and judges C's singularity with a relative tolerance). The variant names are
   :data:`BLOCK_VARIANTS`, distinct from the attention operators of the trained transformers in
   ``probdr_lite.experiments``.
4. ``attention_step``: after Pi, the "diffusion" and "paper" blocks are plain attention at a longer step
   (:data:`STEP_FAMILY`).
5. ``euler_diffusion_errors`` measures how far one block, an explicit Euler step of dX/dt = -L X, is from the flow.
6. ``stop_gradient_objective`` and ``full_objective`` are the dense objectives whose gradients are the "exact" and
   the "full" directions (for autograd checks and the objections chapter).

Two neighbours hold what is not the maths. The attention kernel these functions call (row blocks of the logits,
symmetric tiles, reusable buffers) is :mod:`probdr_lite._tiled_attention`; the same steps as an ordinary torch
transformer with the diagonal weights of notes 3.5, whose forward pass equals ``unroll``, are
:class:`probdr_lite.diagonal_transformer.DiagonalTransformer`.

Memory. No public step ever holds the n x n attention matrix: A X, A^T X and the other n x n products are built from
blocks of rows of the logits (``block_size`` rows at a time, chosen from ``BLOCK_BYTES`` when not given), so 10,000
MNIST images go through 8 blocks at d_q = 128 in a few hundred MB. Unmasked A X uses the symmetry of the logits:
square tiles, each pair formed once (``attention_times``), which saves about half of the logits' product and of the
exponentials. Only the functions that return or differentiate the dense matrix (``attention_matrix``,
``full_objective``) refuse n above ``MAX_DENSE_N``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.linalg import expm

from probdr_lite._elbo import elbo_gradient, inverse_covariance_times, log_det_covariance
from probdr_lite._tiled_attention import Mask, Workspace, attention_products, logit_blocks, softmax_rows_
from probdr_lite._validation import check_array, check_choice, check_scalar, check_seed, check_tensor

__all__ = [
    "BLOCK_VARIANTS",
    "CHAPTER_VARIANTS",
    "check_block_variants",
    "check_kappa",
    "check_eta",
    "check_beta",
    "check_variant",
    "check_mask",
    "check_logit_range",
    "KAPPA_MAX",
    "ETA_MAX",
    "BETA_MAX",
    "N_STEPS_MAX",
    "MAX_DENSE_N",
    "BLOCK_BYTES",
    "layer_norm",
    "embed",
    "attention_matrix",
    "attention_times",
    "regulariser_gradient",
    "update_direction",
    "block_step",
    "unroll",
    "STEP_FAMILY",
    "attention_step",
    "euler_diffusion_errors",
    "stop_gradient_objective",
    "full_objective",
]

#: The update directions D of an untrained block, X <- Pi(X + eta D) (see :func:`update_direction`). Not to be
#: confused with the attention operators of the trained transformers (``probdr_lite.experiments``).
BLOCK_VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric", "full")
#: The block variants the transformer-block and MNIST chapters compare ("full", the objection-3 gradient,
#: belongs to the objections chapter).
CHAPTER_VARIANTS = ("attention", "diffusion", "paper", "exact", "symmetric")

KAPPA_MAX = 1e4  # kappa in (0, KAPPA_MAX]: the attention's sharpness (heat-kernel bandwidth t = 2 / kappa)
ETA_MAX = 10.0  # eta in (0, ETA_MAX]: the step size; the notes use 0.4 (below 0.5 bounds the A - I update)
BETA_MAX = 1e4  # beta in [0, BETA_MAX]: the jitter of C = X X^T + beta I and the self-attention penalty
N_STEPS_MAX = 10_000  # unroll at most this many steps
MAX_DENSE_N = 4096  # the largest n for which a dense (n, n) matrix is formed (64 MiB in float32, 128 MiB in float64)
BLOCK_BYTES = 64 * 2**20  # default budget for one (rows, n) block of logits: 64 MiB
_MAX_AUTO_BLOCK = 2048  # larger blocks stop paying off on CPUs (cache), so the automatic choice stops here


# ---------------------------------------------------------------------------------------------------------------------
# Input checks (every public function calls these first; the public ones also check the arguments of
# probdr_lite.diagonal_transformer.DiagonalTransformer)


def _check_latents(X, name: str = "X") -> torch.Tensor:
    """A finite 2-D float tensor with at least 2 columns (d_q >= 2)."""
    X = check_tensor(X, name, ndim=2, min_rows=1)
    if X.shape[1] < 2:
        raise ValueError(f"{name} must have d_q >= 2 columns (LayerNorm needs two); got shape {tuple(X.shape)}")
    return X


def check_kappa(kappa) -> float:
    """kappa as a float in (0, KAPPA_MAX]."""
    return check_scalar(kappa, "kappa", low=0.0, high=KAPPA_MAX, low_inclusive=False)


def check_eta(eta) -> float:
    """eta as a float in (0, ETA_MAX]."""
    return check_scalar(eta, "eta", low=0.0, high=ETA_MAX, low_inclusive=False)


def check_beta(beta) -> float:
    """beta as a float in [0, BETA_MAX]."""
    return check_scalar(beta, "beta", low=0.0, high=BETA_MAX)


def check_variant(variant, choices=BLOCK_VARIANTS) -> str:
    """A variant name from ``choices`` (by default :data:`BLOCK_VARIANTS`)."""
    return check_choice(variant, "variant", choices)


def check_block_variants(variants) -> tuple:
    """A non-empty list of block variant names, each from :data:`BLOCK_VARIANTS`, as a tuple."""
    if isinstance(variants, str) or not hasattr(variants, "__len__") or len(variants) == 0:
        raise ValueError(f"variants must be a non-empty list of names from {BLOCK_VARIANTS}; got {variants!r}")
    return tuple(check_variant(v) for v in variants)


def _check_block_size(block_size):
    if block_size is None:
        return None
    return check_scalar(block_size, "block_size", low=1, integer=True)


def check_logit_range(X: torch.Tensor, kappa: float, beta: float) -> None:
    """Refuse latents so large that the logits would overflow X's dtype.

    By Cauchy-Schwarz |S_ij| <= (kappa / d_q) max_i ||x_i||^2 + beta; LayerNormed rows give kappa + beta.
    """
    sq = X.detach().to(torch.float64).pow(2).sum(1).max().item()
    bound = kappa / X.shape[1] * sq + beta
    if not math.isfinite(bound) or bound > torch.finfo(X.dtype).max / 16:
        raise ValueError(
            f"X is too large for its dtype {X.dtype}: the logits (kappa / d_q) X X^T would overflow "
            f"(bound {bound:.3g}); pass LayerNormed latents (see layer_norm) or use float64"
        )


def check_mask(mask, n: int, like: torch.Tensor) -> Mask:
    """Validate ``mask`` for n points: None, "causal", a boolean (n, n) array (True = attend) or an additive one."""
    if mask is None:
        return Mask("none")
    if isinstance(mask, str):
        check_choice(mask, "mask", ("causal",))
        return Mask("causal")
    if isinstance(mask, np.ndarray):
        mask = torch.from_numpy(np.ascontiguousarray(mask))
    if not isinstance(mask, torch.Tensor):
        raise TypeError(
            f"mask must be None, 'causal' or an (n, n) boolean or float array; got {type(mask).__name__}"
        )
    if mask.ndim != 2 or tuple(mask.shape) != (n, n):
        raise ValueError(f"mask must have shape (n, n) = ({n}, {n}) to match X; got shape {tuple(mask.shape)}")
    mask = mask.to(like.device)
    if mask.dtype == torch.bool:
        if not bool(mask.any(1).all()):
            raise ValueError("mask must let every row attend to at least one point (a row of False has no softmax)")
        return Mask("bool", mask)
    if not torch.is_floating_point(mask):  # an integer 0/1 mask is ambiguous (attend flags or additive?)
        raise TypeError(
            f"mask must be boolean (True = attend) or floating-point (added to the logits); got {mask.dtype}"
        )
    mask = mask.to(like.dtype)
    if bool(torch.isnan(mask).any()) or bool((mask == math.inf).any()):
        raise ValueError("an additive mask must be finite or -inf (no NaN, no +inf)")
    if not bool((mask > -math.inf).any(1).all()):
        raise ValueError("mask must let every row attend to at least one point (a row of -inf has no softmax)")
    return Mask("add", mask)


# ---------------------------------------------------------------------------------------------------------------------
# Pi: LayerNorm without affine terms or epsilon (notes 3.6)


def _project(Z: torch.Tensor, where: str = "X") -> torch.Tensor:
    """Pi(Z) = sqrt(d_q) (Z - mean) / ||Z - mean|| row by row, overflow-safe (rows are rescaled by their max first)."""
    Zc = Z - Z.mean(1, keepdim=True)  # (n, d_q), rows centred
    peak = Zc.abs().amax(1, keepdim=True)  # (n, 1); Pi is scale-invariant, so dividing by it changes nothing
    # a row whose spread is at rounding level of its own size is constant up to rounding: its direction is noise
    noise = 8 * torch.finfo(Z.dtype).eps * Z.abs().amax(1, keepdim=True)  # (n, 1)
    if bool((peak <= noise).any()) or not bool(torch.isfinite(peak).all()):
        raise ValueError(
            f"{where}: a row is constant (or not finite), so the LayerNorm projection Pi is undefined"
            + ("" if where == "X" else "; try a smaller eta")
        )
    Zc = Zc / peak
    return Zc * (math.sqrt(Z.shape[1]) / Zc.norm(dim=1, keepdim=True))


def layer_norm(X) -> torch.Tensor:
    """Pi: LayerNorm without affine terms or epsilon (notes 3.6).

    Each row is centred and rescaled to squared norm d_q,

        Pi(x) = sqrt(d_q) (x - mean(x) 1) / ||x - mean(x) 1||,

    the Euclidean projection of x onto {x : 1^T x = 0, ||x||^2 = d_q}; it equals
    ``nn.LayerNorm(d_q, elementwise_affine=False, eps=0)``. Pi(c x) = Pi(x) for every c > 0.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), d_q >= 2
        Finite rows, none of them constant.

    Returns
    -------
    torch.Tensor of shape (n, d_q), same dtype as X (numpy input is converted).
    """
    X = _check_latents(X)
    return _project(X, "X")


def embed(Y, d_q: int = 128, seed: int = 0) -> torch.Tensor:
    """The first latents X_0 = Pi(Y W_E) with a seeded Gaussian projection (the notes' default for the MNIST figure).

    W_E has shape (d, d_q) and entries N(0, 1/d), d = Y's number of columns; it is drawn in float64 from a
    ``torch.Generator`` seeded with ``seed`` and cast to Y's dtype, so the same seed gives the same numbers in
    float32 and float64.

    Parameters
    ----------
    Y : array or tensor of shape (n, d)
        The data, e.g. flattened MNIST images (d = 784).
    d_q : int, default 128
        Latent dimension, in [2, 65536].
    seed : int, default 0
        Non-negative seed of the projection.

    Returns
    -------
    torch.Tensor of shape (n, d_q), rows centred with squared norm d_q.
    """
    Y = check_tensor(Y, "Y", ndim=2, min_rows=1)
    d_q = check_scalar(d_q, "d_q", low=2, high=65536, integer=True)
    seed = check_seed(seed)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    d = Y.shape[1]
    W_E = torch.randn(d, d_q, generator=gen, dtype=torch.float64) / math.sqrt(d)  # (d, d_q)
    Z = Y @ W_E.to(dtype=Y.dtype, device=Y.device)  # (n, d_q)
    return _project(Z, "embed: Y W_E")


# ---------------------------------------------------------------------------------------------------------------------
# Attention: the dense matrix (small n) and row blocks of the logits (any n)


def _dense_logits(X: torch.Tensor, kappa: float, beta: float, mask: Mask) -> torch.Tensor:
    """S = (kappa / d_q) X X^T - beta I + M as one (n, n) matrix, differentiable in X."""
    n, d_q = X.shape
    S = (kappa / d_q) * (X @ X.T) - beta * torch.eye(n, dtype=X.dtype, device=X.device)  # (n, n)
    M = mask.dense(n, X)
    return S if M is None else S + M


def attention_matrix(X, kappa, beta=0.0, mask=None) -> torch.Tensor:
    """The attention (adjacency) matrix A = sigma(S), S = (kappa / d_q) X X^T - beta I + M (notes 3.1, 3.3).

    sigma is the row-wise softmax, computed after subtracting each row's maximum, so the result is finite for
    kappa up to 1e4 and any d_q. With LayerNormed rows the logits are kappa cos(x_i, x_j) - beta [i = j]
    (notes 3.5), and A is the random-walk matrix D^{-1} W of the heat-kernel graph
    W_ij = exp(-||x_i - x_j||^2 / t) of the unit rows, bandwidth t = 2 / kappa (notes 3.7). Every row of A sums
    to 1; L = I - A is the random-walk Laplacian.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), n <= MAX_DENSE_N
        Latents (normally LayerNormed). Differentiable if it requires grad.
    kappa : float in (0, 1e4]
    beta : float in [0, 1e4], default 0
        Penalty on self-attention (the -beta I of notes 3.3).
    mask : None, "causal", (n, n) bool (True = attend) or (n, n) float (added to the logits; -inf blocks)
        Every row must attend to at least one point.

    Returns
    -------
    torch.Tensor of shape (n, n), rows summing to 1.

    See Also
    --------
    attention_times : A X for any n without forming A.
    """
    X = _check_latents(X)
    kappa, beta = check_kappa(kappa), check_beta(beta)
    n = X.shape[0]
    if n > MAX_DENSE_N:
        raise ValueError(
            f"X has n = {n} rows, above MAX_DENSE_N = {MAX_DENSE_N} for a dense (n, n) attention matrix; "
            "use attention_times / block_step, which work in row blocks"
        )
    mask = check_mask(mask, n, X)
    check_logit_range(X, kappa, beta)
    return torch.softmax(_dense_logits(X, kappa, beta, mask), dim=1)


def _auto_block_size(n: int, itemsize: int, copies: int) -> int:
    """Rows per block so that ``copies`` (rows, n) buffers fit in BLOCK_BYTES."""
    rows = BLOCK_BYTES // max(1, copies * n * itemsize)
    return int(max(1, min(n, _MAX_AUTO_BLOCK, rows)))


def attention_times(X, kappa, beta=0.0, mask=None, block_size=None) -> torch.Tensor:
    """A X for A = sigma((kappa / d_q) X X^T - beta I + M), without ever holding the (n, n) matrix.

    Without a mask, and when one shift c serves every row (LayerNormed rows and beta <= 30, see
    :mod:`probdr_lite._tiled_attention`, the kernel that computes it), the symmetric logits are cut into square
    tiles: each tile of exp(S - c) below the diagonal is formed once and used for its rows and, transposed, for its
    columns, and A X = (E X) / rowsum. Otherwise the rows are computed ``block_size`` at a time: the (b, n) block of
    logits is formed and each row goes through a softmax with its own maximum before the product with X. Memory is
    O(b n) instead of O(n^2) either way; the answer is that of ``attention_matrix(X, ...) @ X`` to round-off.

    Parameters
    ----------
    X, kappa, beta, mask
        As in :func:`attention_matrix` (any n).
    block_size : int >= 1, optional
        Rows per block; by default as many as fit in BLOCK_BYTES (at most 2048).

    Returns
    -------
    torch.Tensor of shape (n, d_q).
    """
    X = _check_latents(X)
    kappa, beta = check_kappa(kappa), check_beta(beta)
    mask = check_mask(mask, X.shape[0], X)
    block_size = _check_block_size(block_size) or _auto_block_size(X.shape[0], X.element_size(), 1)
    check_logit_range(X, kappa, beta)
    with torch.no_grad():
        return attention_products(X, kappa, beta, mask, block_size)[0]


# ---------------------------------------------------------------------------------------------------------------------
# The regulariser 2 C^{-1} X, C = X X^T + beta I (notes section 2 and objection 4)


def regulariser_gradient(X, beta) -> torch.Tensor:
    """The gradient of the log-det regulariser: d/dX log det(X X^T + beta I) = 2 (X X^T + beta I)^{-1} X.

    The paper replaces it by 2 X / (d_q + beta) (notes 3.4, objection 4); this is the exact term. Computed through
    the smaller Gram matrix by the kernel the ELBO chapter uses (:func:`probdr_lite._elbo.inverse_covariance_times`):
    for n > d_q it needs beta > 0, and a numerically singular C (relative tolerance) raises ``ValueError``.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q)
    beta : float in [0, 1e4]

    Returns
    -------
    torch.Tensor of shape (n, d_q).
    """
    X = _check_latents(X)
    beta = check_beta(beta)
    return 2.0 * inverse_covariance_times(X, beta)


# ---------------------------------------------------------------------------------------------------------------------
# One step: the direction of each variant, then the projection


def _symmetric_scaled(X, kappa, beta, mask: Mask, block_size, work=None):
    """Rows of (D^{-1/2} E D^{-1/2}) X, each divided by exp(g_i), and the log-scales g (n, 1).

    With E = exp(S) and D = diag(E 1), (D^{-1/2} E D^{-1/2})_ij = exp(S_ij - (l_i + l_j) / 2) where
    l_i = logsumexp_j S_ij: exact, and two passes over row blocks (first every l_i, then the product) keep memory
    at O(b n). Without a mask S is symmetric and every exponent is <= 0. With a mask it can be positive (a point
    with few allowed neighbours has a tiny degree), so row i is returned divided by exp(g_i), g_i =
    max(0, max_j exponent): Pi is invariant to that per-row scale.
    """
    n = X.shape[0]
    lse = torch.empty(n, 1, dtype=X.dtype, device=X.device)  # (n, 1) log degrees l_i
    for r0, r1, _, S, _ in logit_blocks(X, kappa, beta, mask, block_size, work=work):
        lse[r0:r1] = torch.logsumexp(S, dim=1, keepdim=True)
    out = torch.empty_like(X)
    g = torch.empty(n, 1, dtype=X.dtype, device=X.device)
    half = 0.5 * lse
    for r0, r1, c, T, _ in logit_blocks(X, kappa, beta, mask, block_size, work=work):
        T.sub_(half[r0:r1]).sub_(half[:c].T)  # (b, c) exponents S_ij - (l_i + l_j) / 2
        g[r0:r1] = T.amax(1, keepdim=True).clamp_min(0.0)
        T.sub_(g[r0:r1]).exp_()
        out[r0:r1] = T @ X[:c]
    return out, g


def _direction(X, kappa, beta, variant, mask: Mask, block_size, work=None):
    """(D, g): the direction is exp(g) * D row-wise; g is None except for "symmetric" (see _symmetric_scaled)."""
    n, d_q = X.shape
    work = Workspace() if work is None else work  # one set of block buffers for every pass of this step
    if variant == "symmetric":
        WX, g = _symmetric_scaled(X, kappa, beta, mask, block_size, work)
        return 2.0 * (WX - torch.exp(-g) * X), g  # 2 (A_sym - I) X, row i divided by exp(g_i)
    if variant in ("attention", "diffusion", "paper"):
        AX, _ = attention_products(X, kappa, beta, mask, block_size, work=work)
        if variant == "attention":
            return 2.0 * AX, None
        D = 2.0 * (AX - X)  # 2 (A - I) X = -2 L X
        if variant == "paper":
            D = D + (2.0 / (d_q + beta)) * X  # the regulariser 2 C^{-1} X approximated by 2 X / (d_q + beta)
        return D, None
    if variant == "exact":
        # The ELBO chapter's gradient (nu / 2) [2 C^{-1} X - (L + L^T) X] with L = I - A and nu = 2, so that
        # D = 2 C^{-1} X - (L + L^T) X; (L + L^T) X = 2 X - A X - A^T X is accumulated over row blocks.
        AX, AtX = attention_products(X, kappa, beta, mask, block_size, transpose_too=True, work=work)
        return elbo_gradient(X, 2.0 * X - AX - AtX, beta, nu=2.0), None
    reg = 2.0 * inverse_covariance_times(X, beta)  # 2 C^{-1} X
    # variant == "full": grad of F(X) = log det C - tr(X^T X) + tr(X^T A(X) X).
    # With K = X X^T, G = sum_ij A_ij K_ij and dA_ij = A_ij (dS_ij - sum_k A_ik dS_ik), dS = (kappa / d_q) dK:
    #   dG = sum_ij H_ij dK_ij,  H = A + (kappa / d_q) A o (K - kbar 1^T),  kbar_i = sum_k A_ik K_ik,
    # so grad G = (H + H^T) X. H X and H^T X are accumulated over row blocks like A X and A^T X.
    scale = kappa / d_q
    HX = torch.empty_like(X)
    HtX = torch.zeros_like(X)
    for r0, r1, c, P, K in logit_blocks(X, kappa, beta, mask, block_size, keep_gram=True, work=work):
        softmax_rows_(P)  # (b, c) rows of A
        kbar = (P * K).sum(1, keepdim=True)  # (b, 1)
        K.sub_(kbar).mul_(P).mul_(scale).add_(P)  # K <- H block = A + scale * A o (K - kbar)
        torch.mm(K, X[:c], out=HX[r0:r1])
        HtX[:c].addmm_(K.T, X[r0:r1])
    return reg - 2.0 * X + HX + HtX, None


def _prepare(X, kappa, beta, variant, mask, block_size, variants=BLOCK_VARIANTS):
    X = _check_latents(X)
    kappa, beta = check_kappa(kappa), check_beta(beta)
    variant = check_variant(variant, variants)
    mask = check_mask(mask, X.shape[0], X)
    block_size = _check_block_size(block_size)
    if block_size is None:
        copies = 2 if variant == "full" else 1  # "full" keeps the Gram block next to the logits
        block_size = _auto_block_size(X.shape[0], X.element_size(), copies)
    if variant in ("exact", "full") and beta == 0 and X.shape[0] > X.shape[1]:
        raise ValueError(
            f"beta must be > 0 for variant {variant!r} when n > d_q (n = {X.shape[0]}, d_q = {X.shape[1]}): "
            "C = X X^T + beta I is singular otherwise"
        )
    check_logit_range(X, kappa, beta)
    return X, kappa, beta, variant, mask, block_size


def update_direction(X, kappa, beta, variant, mask=None, block_size=None) -> torch.Tensor:
    """The raw (pre-projection) direction D of one step, so that ``block_step`` = Pi(X + eta D).

    With A = sigma((kappa / d_q) X X^T - beta I + M), L = I - A and C = X X^T + beta I:

    - "attention": D = 2 A X (a standard block at diagonal initialisation, notes 3.5);
    - "diffusion": D = 2 (A - I) X = -2 L X (the paper's update, notes 3.3);
    - "paper": D = 2 (A - I) X + 2 X / (d_q + beta) (notes 3.3 with the approximation of 3.4);
    - "exact": D = 2 C^{-1} X - (L + L^T) X, the gradient of the stop-gradient objective
      F_sg(X) = log det C - tr(X^T L X) with L held fixed (notes section 2; objections 1 and 4);
    - "symmetric": D = 2 (D_E^{-1/2} E D_E^{-1/2} - I) X, E = exp(S), D_E = diag(E 1) (objection 1);
    - "full": D = grad F(X), F(X) = log det C - tr(X^T L(X) X) with A's dependence on X kept (objection 3),
      = 2 C^{-1} X - 2 X + (H + H^T) X, H = A + (kappa / d_q) A o (X X^T - kbar 1^T), kbar_i = sum_k A_ik (X X^T)_ik.

    Everything is computed in row blocks of the logits (O(block_size n) memory), so every variant works for any n.
    C^{-1} X uses the smaller Gram matrix (X X^T + beta I)^{-1} X = X (X^T X + beta I)^{-1} when n > d_q, which
    needs beta > 0 ("exact" and "full"; LayerNormed rows span at most d_q - 1 dimensions).

    Parameters
    ----------
    X : array or tensor of shape (n, d_q)
    kappa : float in (0, 1e4]
    beta : float in [0, 1e4]
    variant : {"attention", "diffusion", "paper", "exact", "symmetric", "full"}
    mask : None, "causal", (n, n) bool (True = attend) or (n, n) additive float
    block_size : int >= 1, optional
        Rows per block (default from BLOCK_BYTES).

    Returns
    -------
    torch.Tensor of shape (n, d_q), X's dtype. Not differentiable (computed without autograd).

    Raises
    ------
    ValueError
        For out-of-range input, or if the "symmetric" direction itself overflows (possible only with a mask and
        a large beta; ``block_step`` still works there because Pi ignores the scale).
    """
    X, kappa, beta, variant, mask, block_size = _prepare(X, kappa, beta, variant, mask, block_size)
    with torch.no_grad():
        D, g = _direction(X, kappa, beta, variant, mask, block_size)
        if g is not None:
            D = D * torch.exp(g)
            if not bool(torch.isfinite(D).all()):
                raise ValueError(
                    f"the 'symmetric' direction overflows {X.dtype} for this mask and beta = {beta:g} (a masked "
                    "point's degree is tiny); use a smaller beta or float64, or block_step, which is scale-free"
                )
    return D


def _step(X, kappa, eta, beta, variant, mask, block_size, work=None):
    D, g = _direction(X, kappa, beta, variant, mask, block_size, work)
    Z = X + eta * D if g is None else torch.exp(-g) * X + eta * D  # row i of the latter is exp(-g_i) (X + eta D)
    return _project(Z, f"block_step (variant {variant!r}, eta = {eta:g})")


def block_step(X, kappa, eta, beta, variant, mask=None, block_size=None) -> torch.Tensor:
    """One unrolled step: Pi(X + eta D), D the direction of ``variant`` (see :func:`update_direction`).

    - "attention": Pi(X + 2 eta A X);
    - "diffusion": Pi(X + 2 eta (A - I) X), notes 3.3;
    - "paper": Pi(X + 2 eta (A - I) X + 2 eta / (d_q + beta) X), notes 3.3-3.4;
    - "exact": Pi(X + eta [2 C^{-1} X - (L + L^T) X]), L = I - A held fixed;
    - "symmetric": Pi(X + 2 eta (D^{-1/2} E D^{-1/2} - I) X);
    - "full": Pi(X + eta grad F(X)).

    Pi is the LayerNorm projection (notes 3.6), so each step is projected gradient ascent on the corresponding
    objective. Never holds the (n, n) matrix.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q)
    kappa : float in (0, 1e4]
    eta : float in (0, 10]
        Step size (the notes use 0.4).
    beta : float in [0, 1e4]
    variant : {"attention", "diffusion", "paper", "exact", "symmetric", "full"}
    mask : None, "causal", (n, n) bool or (n, n) additive float
    block_size : int >= 1, optional

    Returns
    -------
    torch.Tensor of shape (n, d_q): rows centred with squared norm d_q.
    """
    eta = check_eta(eta)
    X, kappa, beta, variant, mask, block_size = _prepare(X, kappa, beta, variant, mask, block_size)
    with torch.no_grad():
        return _step(X, kappa, eta, beta, variant, mask, block_size)


def unroll(X0, n_steps, kappa, eta, beta, variant, mask=None, block_size=None) -> list:
    """Repeat :func:`block_step` n_steps times with the same (shared) parameters: X_{t+1} = Pi(X_t + eta D(X_t)).

    This is the notes' 8-step MNIST experiment (kappa = 30, eta = 0.4, d_q = 128) and a transformer with weights
    shared across layers at diagonal initialisation (see
    :class:`probdr_lite.diagonal_transformer.DiagonalTransformer`).

    Parameters
    ----------
    X0 : array or tensor of shape (n, d_q)
        First latents (normally ``embed(Y)``); used as given, not projected.
    n_steps : int in [0, 10000]
    kappa, eta, beta, variant, mask, block_size
        As in :func:`block_step`.

    Returns
    -------
    list of n_steps + 1 tensors of shape (n, d_q), X0 first.
    """
    n_steps = check_scalar(n_steps, "n_steps", low=0, high=N_STEPS_MAX, integer=True)
    eta = check_eta(eta)
    X, kappa, beta, variant, mask, block_size = _prepare(X0, kappa, beta, variant, mask, block_size)
    path = [X]
    work = Workspace()  # one set of block buffers for every step
    with torch.no_grad():
        for _ in range(n_steps):
            path.append(_step(path[-1], kappa, eta, beta, variant, mask, block_size, work))
    return path


#: The blocks that are plain attention with another step once LayerNorm has acted (:func:`attention_step`).
STEP_FAMILY = ("attention", "diffusion", "paper")


def attention_step(eta, variant, d_q, beta=0.0) -> float:
    """The step eta' at which the plain-attention block equals ``variant``'s block at step eta, after LayerNorm.

    Pi forgets a positive factor on each row, and each of these blocks adds to X a multiple of X and 2 eta A X:

    - "attention": Pi(X + 2 eta A X), so eta' = eta;
    - "diffusion": Pi((1 - 2 eta) X + 2 eta A X) = Pi(X + 2 eta / (1 - 2 eta) A X), so eta' = eta / (1 - 2 eta);
    - "paper": Pi((1 - 2 eta + 2 eta / (d_q + beta)) X + 2 eta A X), so eta' = eta / (1 - 2 eta + 2 eta / (d_q + beta)).

    Every step of the three is Pi(X + s A X) with s = 2 eta', whatever A (masked or not) and X: at diagonal
    initialisation they are one family, and comparing them compares step lengths.

    Parameters
    ----------
    eta : float in (0, 10]
    variant : {"attention", "diffusion", "paper"}
    d_q : int >= 1, the latents' width
    beta : float in [0, 1e4], default 0

    Returns
    -------
    float eta' > 0. Raises ValueError where the factor on X is not positive (eta >= 1/2 for "diffusion"): there the
    block pushes each point past its neighbours' mean and is no plain-attention step.
    """
    eta = check_eta(eta)
    variant = check_variant(variant, STEP_FAMILY)
    d_q = check_scalar(d_q, "d_q", low=1, integer=True)
    beta = check_beta(beta)
    factor = {"attention": 1.0, "diffusion": 1.0 - 2.0 * eta, "paper": 1.0 - 2.0 * eta + 2.0 * eta / (d_q + beta)}
    if factor[variant] <= 0:
        raise ValueError(f"eta must be below the point where the factor on X, {factor[variant]:.3g}, stops being "
                         f"positive for variant {variant!r} (eta < 1/2 for 'diffusion'); got eta = {eta:g}")
    return eta / factor[variant]


# ---------------------------------------------------------------------------------------------------------------------
# One block as one Euler step of graph diffusion (notes 3.3)


def euler_diffusion_errors(A, X, tau: float = 1.0, n_steps=(1, 2, 4, 8, 16, 32, 64)) -> list:
    """How well k explicit Euler steps of size h = tau / k solve the graph diffusion dX/dtau = -L X, L = I - A.

    The time is tau (the book keeps t for a heat kernel's bandwidth). Euler's method gives
    X_k = (I - h L)^k X_0 = (I + h (A - I))^k X_0; the exact solution is expm(-tau L) X_0 (scipy). Returns a list
    of dicts {"steps": k, "h": h, "relative_error": ||X_k - X(tau)||_F / ||X(tau)||_F}.
    The error shrinks like h (a first-order method); one block with step 2 eta is the k = 1 row with h = 2 eta.
    """
    A = check_array(A, "A", ndim=2, square=True).astype(np.float64)
    X = check_array(X, "X", ndim=2).astype(np.float64)
    if X.shape[0] != A.shape[0]:
        raise ValueError(f"X must have n = {A.shape[0]} rows to match A; got shape {X.shape}")
    tau = check_scalar(tau, "tau", low=0.0, high=100.0, low_inclusive=False)
    L = np.eye(A.shape[0]) - A
    exact = expm(-tau * L) @ X
    rows = []
    for k in n_steps:
        k = check_scalar(k, "n_steps", low=1, high=10_000, integer=True)
        h = tau / k
        Xk = X.copy()
        for _ in range(k):
            Xk = Xk - h * (L @ Xk)
        rows.append({"steps": k, "h": h,
                     "relative_error": float(np.linalg.norm(Xk - exact) / np.linalg.norm(exact))})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# The objectives (dense, differentiable: for autograd checks and for the objections chapter)


def stop_gradient_objective(X, A_fixed, beta) -> torch.Tensor:
    """F_sg(X) = log det(X X^T + beta I) - tr(X^T L X), L = I - A_fixed held fixed (the ELBO of notes section 2
    with q's Laplacian replaced by the attention's, notes 3.2; up to the factor nu / 2 and its sign).

    Its gradient is 2 C^{-1} X - (L + L^T) X, the "exact" direction. Differentiable in X; A_fixed is detached.

    Parameters
    ----------
    X : tensor of shape (n, d_q)
    A_fixed : tensor of shape (n, n)
        E.g. ``attention_matrix(X, kappa, beta, mask)``.
    beta : float in [0, 1e4]; must be > 0 when n > d_q.

    Returns
    -------
    0-d tensor.
    """
    X = _check_latents(X)
    n = X.shape[0]
    A = check_tensor(A_fixed, "A_fixed", ndim=2, square=True)
    if A.shape[0] != n:
        raise ValueError(f"A_fixed must have shape (n, n) = ({n}, {n}) to match X; got {tuple(A.shape)}")
    beta = check_beta(beta)
    A = A.detach().to(dtype=X.dtype, device=X.device)
    trace_LXX = (X * X).sum() - (X * (A @ X)).sum()  # tr(X^T (I - A) X)
    return log_det_covariance(X, beta) - trace_LXX


def full_objective(X, kappa, beta, mask=None) -> torch.Tensor:
    """F(X) = log det(X X^T + beta I) - tr(X^T L(X) X) with L(X) = I - A(X) differentiated through (objection 3).

    Differentiable in X (autograd goes through the softmax); forms the dense (n, n) matrix, so n <= MAX_DENSE_N.

    Parameters
    ----------
    X : tensor of shape (n, d_q)
    kappa : float in (0, 1e4]
    beta : float in [0, 1e4]; must be > 0 when n > d_q.
    mask : None, "causal", (n, n) bool or (n, n) additive float

    Returns
    -------
    0-d tensor.
    """
    X = _check_latents(X)
    kappa, beta = check_kappa(kappa), check_beta(beta)
    n = X.shape[0]
    if n > MAX_DENSE_N:
        raise ValueError(f"X has n = {n} rows, above MAX_DENSE_N = {MAX_DENSE_N} for the dense objective")
    mask = check_mask(mask, n, X)
    check_logit_range(X, kappa, beta)
    A = torch.softmax(_dense_logits(X, kappa, beta, mask), dim=1)  # (n, n), depends on X
    return log_det_covariance(X, beta) - (X * X).sum() + (X * (A @ X)).sum()
