"""The energies chapter's measurements: which energy does a block descend, and does it perform Laplacian Eigenmaps?

The readings of a transformer block as a gradient method, in one harness.

Several papers read an attention block as one step of a gradient method on an energy. This module writes each
reading's energy for the book's latents, gives its gradient in closed form, and measures, along the MNIST steps,
whether each block variant raises or lowers it. Notation as in the book: latents X (n, d_q) with LayerNormed rows,
logits S = (kappa / d_q) X X^T - beta I + M (M = 0, or -inf above the diagonal for the causal mask), the row
softmax A = sigma(S), L = I - A, C = X X^T + beta I, and the heat-kernel weights E = exp(S).

The proposition (:func:`phi`, :func:`phi_gradient`). The "exact" direction of the book,
2 C^{-1} X - (L + L^T) X with A held fixed, is the full gradient (no stop-gradient anywhere) of

    Phi(X) = log det(X X^T + beta I) - ||X||_F^2 + (d_q / kappa) sum_i logsumexp_j S_ij .

Proof: d log det C = 2 tr(C^{-1} X dX^T); d ||X||^2 = 2 tr(X^T dX); and d logsumexp_j S_ij = sum_j A_ij dS_ij with
dS = (kappa / d_q) (dX X^T + X dX^T) (M and -beta I are constant), so d [(d_q / kappa) sum_i logsumexp_j S_ij]
= tr(X^T (A + A^T) dX). Hence grad Phi = 2 C^{-1} X - 2 X + (A + A^T) X = 2 C^{-1} X - (L + L^T) X.

The readings (:data:`READINGS`; each energy's sign convention is its paper's, stored in :data:`SENSE`):

==================  ====================================================  =======  =====================================
reading             energy                                                sense    gradient (closed form)
==================  ====================================================  =======  =====================================
ple                 F(X; A_ref) = log det C - tr(X^T (I - A_ref) X)       ascent   2 C^{-1} X - (L_ref + L_ref^T) X
phi                 Phi(X) above                                           ascent   2 C^{-1} X - (L + L^T) X
hopfield            (1/2) ||X||^2 - (d_q/kappa) sum_i lse_j S(X, X_ref)    descent  X - A(X; X_ref) X_ref
energy_transformer  -(d_q / kappa) sum_i logsumexp_j S_ij                  descent  -(A + A^T) X
sphere              (d_q / (2 kappa n^2)) sum_ij exp(S_ij - kappa)         ascent   (E' + E'^T) X / (2 n^2),
                                                                                    E' = exp(S - kappa)
crate               R(X) = (1/2) log det(I + X X^T / beta)                 descent  C^{-1} X
sinkformer          (d_q / (2 kappa)) min_f sum_ij e^{f_i + S_ij + f_j}     ascent   P X, P the Sinkhorn (doubly
                    - 2 sum_i f_i                                                   stochastic) attention
grand               tr(X^T (I - A_ref) X), the Dirichlet energy            descent  (L_ref + L_ref^T) X
==================  ====================================================  =======  =====================================

"Frozen" readings (:data:`FROZEN`) hold part of the state at a reference X_ref, as their papers do: the PLE ELBO
and GRAND's Dirichlet energy hold the graph A_ref = A(X_ref) (the paper's stop-gradient), the Hopfield energy holds
the stored patterns (keys and values) X_ref, with S(X, X_ref) = (kappa / d_q) X X_ref^T - beta I + M. A block step
from X_t is judged on E(X_{t+1}; X_t) - E(X_t; X_t).

- :func:`energy`, :func:`energy_gradient`: one reading's value (a differentiable 0-d tensor, for autograd checks)
  and its gradient in closed form;
- :func:`update_alignment`: cosine of each block's direction with the reading's ascent direction (sense times the
  gradient), in the full space and after LayerNorm (tangent parts, :func:`probdr_lite.tangent.tangent_part`);
- :func:`gradient_field_asymmetry`: is a block's direction field the gradient of *any* energy? (its Jacobian must be
  symmetric: ||J - J^T||_F / ||J||_F, estimated with autograd);
- :func:`energy_path`, :func:`energy_table`: the energies along the MNIST paths and the sign of every step;
- :func:`sinkhorn_attention`: the symmetric doubly stochastic attention of the Sinkformer reading;
- :func:`attention_spectrum`, :func:`frequency_response`: the blocks as graph filters on the spectrum of I - A;
- :func:`differential_gap`: A - I as the limit of a difference of two attention maps (Differential Transformer).

Everything is dense and float64 (n <= unrolled.MAX_DENSE_N) and runs on one thread.

Does a block perform Laplacian Eigenmaps? The paper's title claim, measured along the MNIST path.

If a block were one step of Laplacian-eigenmaps inference, the latents X_t would move towards the Laplacian
Eigenmaps (LE) embedding of the graph the inference uses: the top principal subspace of X_t would turn towards the
span of the q smallest non-trivial generalised eigenvectors (L v = lambda D v, the constant one dropped). Two graphs
are candidates:

- the attention graph at X_0: weights E = exp(S), S = (kappa / d_q) X_0 X_0^T - beta I, whose random walk D^{-1} E
  is the first block's attention A (:func:`attention_graph`); its LE embedding is the eigenvectors of smallest
  eigenvalue of I - A, the modes a diffusion step I - h (I - A) damps least;
- the k-nearest-neighbour graph of the pixels, the Laplacian Eigenmaps chapter's graph and settings
  (:func:`probdr_lite.eigenmaps.laplacian_eigenmaps` with its defaults: 10 neighbours, 0/1 weights).

- :func:`principal_subspace`  the top-q principal directions of X (an orthonormal (n, q) basis, X centred);
- :func:`le_targets`          both LE embeddings, q_max columns each;
- :func:`le_alignment`        mean principal-angle cosine between the two, per variant, layer, graph and q
  (:func:`probdr_lite.metrics.subspace_agreement`);
- :func:`random_baseline`     the same number for random q-dimensional subspaces (about sqrt(q / n));
- :func:`participation_ratio` how many points an eigenvector lives on (1: a single point);
- :func:`effective_rank`      exp of the entropy of the normalised singular values (Roy & Vetterli, 2007): 1 for
  a rank-one X (every row the same: the rank collapse of deep attention), d_q for a flat spectrum;
- :func:`robustness_facts`    the test over every graph of :data:`GRAPHS` and several kappas, read by its rules;
- :func:`step_family_facts`   plain attention's step against A - I's, read by the same rules.

The rules, defined once here and used by every comparison of the test: the random level of a construction is the
random subspaces' mean plus :data:`RANDOM_SD` standard deviations, and the test has room there when the latents
start above it and below :data:`CEILING`; two cosines differ (a move "towards" or "away", one block "closer" than
another) only by more than :data:`MOVE_TOL` of the layer-0 cosine (:func:`compare_ends`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import torch

from probdr_lite import unrolled as U
from probdr_lite._elbo import log_det_covariance
from probdr_lite._threads import one_thread
from probdr_lite._validation import check_array, check_choice, check_latents, check_scalar, check_seed
from probdr_lite.eigenmaps import embed_graph, laplacian_eigenmaps
from probdr_lite.metrics import subspace_agreement
from probdr_lite.tangent import cosine, tangent_part
from probdr_lite.unrolled import KAPPA_MAX, BETA_MAX, MAX_DENSE_N

__all__ = ["READINGS", "SENSE", "FROZEN", "UPDATES", "FILTER_VARIANTS", "phi", "phi_gradient",
           "proposition_gaps", "energy", "energy_gradient", "sinkhorn_attention", "update_direction",
           "update_alignment", "gradient_field_asymmetry", "energy_path", "energy_table", "attention_spectrum",
           "frequency_response", "differential_gap", "QS", "principal_subspace", "attention_graph", "le_targets",
           "GRAPHS", "graph_label", "MOVE_TOL", "graph_targets", "le_alignment", "random_baseline", "participation_ratio", "effective_rank",
           "effective_rank_path", "CEILING", "RANDOM_SD", "random_level", "compare_ends", "robustness",
           "robustness_facts", "step_family_facts", "spectrum_facts", "ceiling_facts"]

#: The readings with an energy, in the order of the chapter's table.
READINGS = ("ple", "phi", "hopfield", "energy_transformer", "sphere", "crate", "sinkformer", "grand")
#: +1 if the reading's paper raises its energy (an objective), -1 if it lowers it.
SENSE = {"ple": 1, "phi": 1, "hopfield": -1, "energy_transformer": -1, "sphere": 1, "crate": -1, "sinkformer": 1,
         "grand": -1}
#: The readings that hold part of the state at a reference X_ref (see the module docstring).
FROZEN = ("ple", "hopfield", "grand")
#: The update directions :func:`update_direction` knows: the book's block variants and two readings' own updates.
UPDATES = U.CHAPTER_VARIANTS + ("energy_transformer", "sinkformer")
#: The block variants that are graph filters of A (:func:`frequency_response`), and the flow they discretise.
FILTER_VARIANTS = ("attention", "diffusion", "symmetric", "paper", "flow")
_SINKHORN_TOL = 1e-13
_SINKHORN_MAX_ITER = 100_000

F64 = torch.float64


# ---------------------------------------------------------------------------------------------------------------------
# Input checks


def _latents(X, name="X") -> torch.Tensor:
    X = check_latents(X, name)
    if X.shape[0] > U.MAX_DENSE_N:
        raise ValueError(f"{name} has n = {X.shape[0]} rows, above MAX_DENSE_N = {U.MAX_DENSE_N} for dense (n, n) work")
    return X


def _kappa(kappa) -> float:
    return check_scalar(kappa, "kappa", low=0.0, high=U.KAPPA_MAX, low_inclusive=False)


def _beta(beta, positive=False) -> float:
    return check_scalar(beta, "beta", low=0.0, high=U.BETA_MAX, low_inclusive=not positive)


def _mask(mask) -> bool:
    """True for the causal mask, False for none; anything else is refused with the allowed values."""
    if mask is None:
        return False
    if isinstance(mask, str) and mask == "causal":
        return True
    raise ValueError(f"mask must be None or 'causal'; got {mask!r}")


def _reading(reading) -> str:
    return check_choice(reading, "reading", READINGS)


def _reference(reference, X) -> torch.Tensor:
    if reference is None:
        return X.detach()
    ref = _latents(reference, "reference")
    if ref.shape != X.shape:
        raise ValueError(f"reference must have the shape of X {tuple(X.shape)}; got {tuple(ref.shape)}")
    return ref.detach()


def _check_bound(X, kappa, beta) -> None:
    """exp(S_ij - kappa) stays finite: S_ij - kappa <= (kappa / d_q) max ||x_i||^2 - kappa (Cauchy-Schwarz), which
    is 0 for LayerNormed rows (squared norm d_q); the log-sum-exp and Sinkhorn terms shift their exponents anyway."""
    excess = kappa / X.shape[1] * float(X.detach().pow(2).sum(1).max()) - kappa
    if not math.isfinite(excess) or excess > 600.0:
        raise ValueError(f"X is too large for kappa = {kappa:g}: exp(S - kappa) reaches exp({excess:.3g}) and "
                         "overflows; pass LayerNormed latents (unrolled.layer_norm)")


# ---------------------------------------------------------------------------------------------------------------------
# The building blocks: logits, the log-sum-exp term, Sinkhorn


def _logits(X, keys, kappa, beta, causal) -> torch.Tensor:
    """S_ij = (kappa / d_q) x_i . k_j - beta [i = j] + M_ij, (n, n), differentiable in X (and in keys)."""
    n, d_q = X.shape
    S = (kappa / d_q) * (X @ keys.T)
    S.diagonal().sub_(beta)  # in place: neither product's backward needs S itself
    if causal:
        S = S.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    return S


def _sym_logits(X, kappa, beta) -> torch.Tensor:
    """The unmasked logits of X against itself, symmetric to the last bit (the Sinkhorn and A_sym readings need it)."""
    S = _logits(X, X, kappa, beta, False)
    return 0.5 * (S + S.T)


def _sym_attention(S) -> torch.Tensor:
    """D^{-1/2} E D^{-1/2} of E = exp(S): entries exp(S_ij - (l_i + l_j) / 2) with l the rows' logsumexp."""
    lse = torch.logsumexp(S, dim=1)
    return torch.exp(S - 0.5 * lse[:, None] - 0.5 * lse[None, :])


def _lse(S, kappa, d_q) -> torch.Tensor:
    """(d_q / kappa) sum_i logsumexp_j S_ij (masked entries are -inf and drop out)."""
    return (d_q / kappa) * torch.logsumexp(S, dim=1).sum()


def _sinkhorn_potentials(S, P=None, m=None) -> torch.Tensor:
    """f (n,) with sum_j exp(f_i + S_ij + f_j) = 1 for every i, for a symmetric S (no mask).

    Damped symmetric Sinkhorn in the scaling form u = e^f: u <- sqrt(u / (K u)), K = exp(S - s) with s = max S
    (so K <= 1; the shift is put back as f = log u - s / 2). Its first iterate from u = 1 is u = D^{-1/2} (up to the
    shift): the book's "symmetric" normalisation D^{-1/2} E D^{-1/2} is one damped Sinkhorn step. ``P`` and ``m``
    (from :func:`_row_exp`) save the exponential: K = P * exp(m - s).
    """
    s = float(S.max())
    K = torch.exp(S - s) if P is None else P * torch.exp(m - s)
    u = torch.ones(S.shape[0], dtype=F64)
    for _ in range(_SINKHORN_MAX_ITER):
        Ku = K @ u
        if float((u * Ku - 1.0).abs().max()) < _SINKHORN_TOL:
            break
        u = torch.sqrt(u / Ku)
    else:  # pragma: no cover - not reached for LayerNormed latents and kappa <= 1e3
        raise RuntimeError(f"Sinkhorn did not converge to {_SINKHORN_TOL:g} in {_SINKHORN_MAX_ITER} iterations")
    return torch.log(u) - 0.5 * s


@one_thread
def sinkhorn_attention(X, kappa, beta=1.0) -> torch.Tensor:
    """The Sinkformer's attention: the symmetric doubly stochastic matrix P = diag(e^f) E diag(e^f), E = exp(S).

    Sinkhorn's algorithm rescales the rows and columns of E until both sum to 1 (Sander et al., 2022); for a
    symmetric E (no mask) one vector f does both, found by the damped iteration of :func:`_sinkhorn_potentials`
    to a row-sum error below 1e-13. A causal E has no doubly stochastic rescaling at all (rescaling keeps its
    entries below the diagonal positive; the identity, the only lower-triangular doubly stochastic matrix, is
    only the limit of Sinkhorn's iteration on it), so this reading is defined without a mask only.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), LayerNormed rows
    kappa : float in (0, 1e4]
    beta : float in [0, 1e4], default 1

    Returns
    -------
    torch.Tensor (n, n), float64, symmetric, rows and columns summing to 1.
    """
    X = _latents(X)
    kappa, beta = _kappa(kappa), _beta(beta)
    _check_bound(X, kappa, beta)
    S = _sym_logits(X, kappa, beta)
    f = _sinkhorn_potentials(S)
    return torch.exp(f[:, None] + S + f[None, :])


# ---------------------------------------------------------------------------------------------------------------------
# The proposition


def phi(X, kappa, beta=1.0, mask=None) -> torch.Tensor:
    """Phi(X) = log det(X X^T + beta I) - ||X||_F^2 + (d_q / kappa) sum_i logsumexp_j S_ij (the proposition).

    Its full gradient is the book's "exact" direction 2 C^{-1} X - (L + L^T) X (:func:`phi_gradient`; proof in the
    module docstring). Differentiable in X; dense (n, n) logits; float64.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), 2 <= n <= unrolled.MAX_DENSE_N
    kappa : float in (0, 1e4]
    beta : float in (0, 1e4], default 1
    mask : None or "causal"

    Returns
    -------
    0-d torch.Tensor (float64).
    """
    return energy(X, "phi", kappa, beta, mask)


@one_thread
def phi_gradient(X, kappa, beta=1.0, mask=None) -> torch.Tensor:
    """grad Phi(X) in closed form: the "exact" direction of :func:`probdr_lite.unrolled.update_direction`.

    2 C^{-1} X - (L + L^T) X with L = I - A held fixed is, by the proposition, also the gradient of Phi with nothing
    held fixed. Computed by the block's own row-block kernel, not by autograd (the tests compare the two).

    Returns
    -------
    torch.Tensor of X's shape, float64.
    """
    return energy_gradient(X, "phi", kappa, beta, mask)


@one_thread
def proposition_gaps(X, kappas=(1.0, 3.0, 10.0, 30.0, 100.0), betas=(0.1, 1.0, 10.0), masks=(None, "causal")):
    """The proposition checked at X: ||autograd grad Phi - phi_gradient|| / ||phi_gradient|| for every kappa,
    beta and mask. Returns an array of shape (len(masks), len(kappas), len(betas)), float64."""
    X = _latents(X)
    for name, seq in (("kappas", kappas), ("betas", betas), ("masks", masks)):
        if isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__") or len(seq) == 0:
            raise ValueError(f"{name} must be a non-empty list; got {seq!r}")
    out = np.zeros((len(masks), len(kappas), len(betas)))
    for i, m in enumerate(masks):
        for j, k in enumerate(kappas):
            for l, b in enumerate(betas):
                Z = X.detach().clone().requires_grad_(True)
                (g,) = torch.autograd.grad(phi(Z, k, b, m), Z)
                closed = phi_gradient(X, k, b, m)
                out[i, j, l] = float((g - closed).norm() / closed.norm())
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Energies and their gradients


def energy(X, reading, kappa=30.0, beta=1.0, mask=None, reference=None) -> torch.Tensor:
    """The energy of one reading at X (table in the module docstring), as a differentiable 0-d tensor.

    Parameters
    ----------
    X : array or tensor of shape (n, d_q), LayerNormed rows, 2 <= n <= unrolled.MAX_DENSE_N
        Differentiable if it requires grad.
    reading : one of :data:`READINGS`
    kappa : float in (0, 1e4], default 30
    beta : float, default 1; in (0, 1e4] for the readings with a log-determinant ("ple", "phi", "crate"), in
        [0, 1e4] otherwise
    mask : None or "causal" (not for "sinkformer", which has no masked form)
    reference : array or tensor of X's shape, optional
        X_ref of the frozen readings (:data:`FROZEN`); default X itself (detached). Ignored by the others.

    Returns
    -------
    0-d torch.Tensor, float64. For "sinkformer" the Sinkhorn potentials are solved at X and held (the envelope
    theorem makes the gradient of the value the gradient with the potentials held at their optimum).
    """
    X, reading, kappa, beta, causal, ref = _prepare(X, reading, kappa, beta, mask, reference)
    return _energies(X, (reading,), kappa, beta, causal, ref)[reading]


def _row_exp(S):
    """(P, m, lse): P = exp(S - m) with m the (detached) row maxima, and lse = m + log P 1 (differentiable)."""
    m = S.max(1, keepdim=True).values.detach()  # (n, 1), finite: every row attends somewhere
    P = torch.exp(S - m)  # (n, n), entries in [0, 1]: the one exponential every reading shares
    return P, m, m.squeeze(1) + torch.log(P.sum(1))


def _energies(X, readings, kappa, beta, causal, ref, A_ref=None, keep=None) -> dict:
    """{reading: 0-d tensor} for several readings at once, sharing the logits, one exponential and log det C.

    ``ref is X`` (the values along a path, no autograd) lets the Hopfield energy and the frozen graph reuse X's own
    logits; ``A_ref`` passes A(X_ref) when it is already known, and a dict ``keep`` receives X's own attention
    under "A" (for the next step's frozen graph). Differentiable in X where X requires grad.
    """
    n, d_q = X.shape
    cache = {} if keep is None else keep

    def own():  # (S, P, m, lse) of X's own logits
        if "own" not in cache:
            S = _logits(X, X, kappa, beta, True) if causal else _sym_logits(X, kappa, beta)
            cache["own"] = (S, *_row_exp(S))
        return cache["own"]

    def logdet():
        if "logdet" not in cache:
            cache["logdet"] = log_det_covariance(X, beta)
        return cache["logdet"]

    def trace():  # tr(X^T (I - A_ref) X)
        if "trace" not in cache:
            if A_ref is None and ref is X:  # tr(X^T A X) = sum_ij A_ij (X X^T)_ij, X X^T read off the logits
                S, P, _, _ = own()
                A = cache["A"] = P / P.sum(1, keepdim=True)
                AK = (d_q / kappa) * ((A * S.masked_fill(A == 0, 0.0)).sum() + beta * A.diagonal().sum())
                cache["trace"] = (X * X).sum() - AK
            else:
                A = A_ref if A_ref is not None else torch.softmax(_logits(ref, ref, kappa, beta, causal), dim=1)
                cache["trace"] = (X * X).sum() - (X * (A @ X)).sum()
        return cache["trace"]

    out = {}
    for r in readings:
        if r == "ple":
            out[r] = logdet() - trace()
        elif r == "grand":
            out[r] = trace()
        elif r == "phi":
            out[r] = logdet() - (X * X).sum() + (d_q / kappa) * own()[3].sum()
        elif r == "hopfield":
            lse = own()[3] if ref is X else _row_exp(_logits(X, ref, kappa, beta, causal))[2]
            out[r] = 0.5 * (X * X).sum() - (d_q / kappa) * lse.sum()
        elif r == "energy_transformer":
            out[r] = -(d_q / kappa) * own()[3].sum()
        elif r == "sphere":  # sum_ij exp(S_ij - kappa) = sum_i exp(m_i - kappa) sum_j P_ij
            _, P, m, _ = own()
            out[r] = d_q / (2.0 * kappa * n * n) * (torch.exp(m.squeeze(1) - kappa) * P.sum(1)).sum()
        elif r == "crate":
            out[r] = 0.5 * (logdet() - n * math.log(beta))
        else:  # sinkformer: sum_ij exp(f_i + S_ij + f_j) = sum_i e^{f_i + m_i} (P e^f)_i, f held at its optimum
            S, P, m, _ = own()
            with torch.no_grad():
                f = _sinkhorn_potentials(S.detach(), P.detach(), m)
            ef = torch.exp(f)
            out[r] = d_q / (2.0 * kappa) * ((torch.exp(f + m.squeeze(1)) * (P @ ef)).sum() - 2.0 * f.sum())
    return out


@one_thread
def energy_gradient(X, reading, kappa=30.0, beta=1.0, mask=None, reference=None) -> torch.Tensor:
    """The gradient in X of :func:`energy`, in closed form (no autograd): the last column of the module's table.

    Same parameters as :func:`energy`. Returns a float64 tensor of X's shape.
    """
    X, reading, kappa, beta, causal, ref = _prepare(X, reading, kappa, beta, mask, reference)
    X = X.detach()
    n = X.shape[0]
    with torch.no_grad():
        if reading == "phi":
            return U.update_direction(X, kappa, beta, "exact", mask="causal" if causal else None)
        if reading in ("ple", "grand"):
            A_ref = torch.softmax(_logits(ref, ref, kappa, beta, causal), dim=1)
            sym = 2.0 * X - A_ref @ X - A_ref.T @ X  # (L_ref + L_ref^T) X
            return U.regulariser_gradient(X, beta) - sym if reading == "ple" else sym
        if reading == "hopfield":
            return X - torch.softmax(_logits(X, ref, kappa, beta, causal), dim=1) @ ref
        if reading == "energy_transformer":
            A = torch.softmax(_logits(X, X, kappa, beta, causal), dim=1)
            return -(A @ X + A.T @ X)
        if reading == "sphere":
            Ep = torch.exp(_logits(X, X, kappa, beta, causal) - kappa)
            return (Ep @ X + Ep.T @ X) / (2.0 * n * n)
        if reading == "crate":
            return 0.5 * U.regulariser_gradient(X, beta)
        return sinkhorn_attention(X, kappa, beta) @ X  # sinkformer


def _prepare(X, reading, kappa, beta, mask, reference):
    X = _latents(X)
    reading = _reading(reading)
    kappa = _kappa(kappa)
    beta = _beta(beta, positive=reading in ("ple", "phi", "crate"))
    causal = _mask(mask)
    if causal and reading == "sinkformer":
        raise ValueError("mask must be None for reading 'sinkformer': a causal (triangular) attention has no doubly "
                         "stochastic rescaling other than the identity")
    ref = _reference(reference, X)
    _check_bound(X, kappa, beta)
    _check_bound(ref, kappa, beta)
    return X, reading, kappa, beta, causal, ref


# ---------------------------------------------------------------------------------------------------------------------
# Which block is a gradient step of which energy?


def _dense_direction(X, update, kappa, beta, causal) -> torch.Tensor:
    """The direction of ``update`` at X, differentiable in X (autograd goes through the softmax): for the Jacobian."""
    n, d_q = X.shape
    if update == "sinkformer":
        S = _sym_logits(X, kappa, beta)
        with torch.no_grad():
            f0 = _sinkhorn_potentials(S.detach())
        f = f0
        # the potentials' dependence on X, to first order: a few differentiable Sinkhorn sweeps started at the
        # converged f0 (each is a contraction, so the derivative converges with the sweeps)
        for _ in range(200):
            f = 0.5 * (f - torch.logsumexp(S + f[None, :], dim=1))
        return torch.exp(f[:, None] + S + f[None, :]) @ X
    S = _logits(X, X, kappa, beta, causal)
    A = torch.softmax(S, dim=1)
    if update == "attention":
        return 2.0 * A @ X
    if update == "diffusion":
        return 2.0 * (A @ X - X)
    if update == "paper":
        return 2.0 * (A @ X - X) + 2.0 / (d_q + beta) * X
    if update == "exact":
        G = X.T @ X + beta * torch.eye(d_q, dtype=F64)  # C^{-1} X = X (X^T X + beta I)^{-1}
        return 2.0 * torch.linalg.solve(G, X.T).T - 2.0 * X + A @ X + A.T @ X
    if update == "energy_transformer":
        return A @ X + A.T @ X
    return 2.0 * (_sym_attention(S) @ X - X)  # symmetric: 2 (D^{-1/2} E D^{-1/2} - I) X


@one_thread
def update_direction(X, update, kappa=30.0, beta=1.0, mask=None) -> torch.Tensor:
    """The step direction Delta of a block variant or of a reading's own update, X <- Pi(X + eta Delta).

    For the block variants ("attention", "diffusion", "paper", "exact", "symmetric") this equals
    :func:`probdr_lite.unrolled.update_direction` (the tests compare them); two more updates:
    "energy_transformer", (A + A^T) X (the descent direction of its energy), and "sinkformer", P X with P the
    Sinkhorn attention (:func:`sinkhorn_attention`).

    Parameters
    ----------
    X : array or tensor (n, d_q); update : one of :data:`UPDATES`; kappa, beta, mask : as in :func:`energy`

    Returns
    -------
    torch.Tensor of X's shape, float64.
    """
    X, update, kappa, beta, causal = _prepare_update(X, update, kappa, beta, mask)
    with torch.no_grad():
        return _dense_direction(X, update, kappa, beta, causal)


def _prepare_update(X, update, kappa, beta, mask):
    X = _latents(X)
    update = check_choice(update, "update", UPDATES)
    kappa, beta = _kappa(kappa), _beta(beta, positive=update == "exact")
    causal = _mask(mask)
    if causal and update == "sinkformer":
        raise ValueError("mask must be None for update 'sinkformer' (a causal attention matrix has no doubly "
                         "stochastic rescaling)")
    _check_bound(X, kappa, beta)
    return X, update, kappa, beta, causal


@one_thread
def update_alignment(X, readings=READINGS, updates=U.CHAPTER_VARIANTS, kappa=30.0, beta=1.0, mask=None) -> dict:
    """Is a block's step a reading's gradient step? Cosines of each direction with sense * grad E at X.

    The reading's own step is X + h * sense * grad E (ascent of an objective, descent of an energy), h > 0. A block
    whose direction Delta has cosine 1 with sense * grad E takes exactly that step, up to its length; after
    LayerNorm only the tangent parts count (:func:`probdr_lite.tangent.tangent_part`), and a term along X (such
    as the paper's 2 X / (d_q + beta)) drops out. Frozen readings are evaluated with X_ref = X.

    Parameters
    ----------
    X : array or tensor (n, d_q)
    readings : sequence of names from :data:`READINGS`, default all
    updates : sequence of names from :data:`UPDATES`, default the book's five block variants
    kappa, beta, mask : as in :func:`energy`

    Returns
    -------
    dict {reading: {update: {"cosine": float, "tangent_cosine": float}}}.
    """
    X = _latents(X)
    for name, seq, allowed in (("readings", readings, READINGS), ("updates", updates, UPDATES)):
        if isinstance(seq, str) or not hasattr(seq, "__len__") or len(seq) == 0:
            raise ValueError(f"{name} must be a non-empty list of names from {allowed}; got {seq!r}")
    readings = [_reading(r) for r in readings]
    updates = [check_choice(u, "updates", UPDATES) for u in updates]
    directions = {u: update_direction(X, u, kappa, beta, mask) for u in updates}
    tangents = {u: tangent_part(D, X) for u, D in directions.items()}
    out = {}
    for r in readings:
        g = SENSE[r] * energy_gradient(X, r, kappa, beta, mask)
        tg = tangent_part(g, X)
        out[r] = {u: {"cosine": cosine(directions[u], g), "tangent_cosine": cosine(tangents[u], tg)}
                  for u in updates}
    return out


@one_thread
def gradient_field_asymmetry(X, update, kappa=30.0, beta=1.0, mask=None, n_probes=8, seed=0) -> dict:
    """Is the direction field X -> Delta(X) of an update the gradient of some energy? (Euclidean metric)

    A smooth field is a gradient exactly when its Jacobian J is symmetric (then J is the energy's Hessian). The
    measure is the size of J's antisymmetric part against the size of J,

        ||J - J^T||_F / ||J||_F ,

    0 for a gradient field, sqrt(2) for a Jacobian with independent random entries and 2 for an antisymmetric one
    (a pure rotation field). J has (n d_q)^2 entries, so both norms are estimated from ``n_probes`` seeded standard
    normal probes v (Hutchinson): E ||M v||^2 = ||M||_F^2 for any matrix M, with J v by autograd's
    Jacobian-vector product and J^T v by its vector-Jacobian product, both exact. Two fields whose Jacobians differ
    by a multiple of the identity (plain attention, A - I and the paper's block) have the same J - J^T: with the
    same probes their "antisymmetric" estimates agree to rounding, and only "jacobian" differs.

    Parameters
    ----------
    X : array or tensor (n, d_q); update : one of :data:`UPDATES`; kappa, beta, mask : as in :func:`energy`
    n_probes : int in [1, 100], default 8
    seed : int >= 0, default 0

    Returns
    -------
    dict {"asymmetry": ||J - J^T||_F / ||J||_F, "antisymmetric": ||J - J^T||_F, "jacobian": ||J||_F}, the norms
    estimated from the same probes (floats >= 0).
    """
    X, update, kappa, beta, causal = _prepare_update(X, update, kappa, beta, mask)
    n_probes = check_scalar(n_probes, "n_probes", low=1, high=100, integer=True)
    gen = torch.Generator().manual_seed(check_seed(seed))

    def field(Z):
        return _dense_direction(Z, update, kappa, beta, causal)

    Z = X.detach().clone().requires_grad_(True)
    out = field(Z)
    anti = size = 0.0
    for k in range(n_probes):
        v = torch.randn(X.shape, generator=gen, dtype=F64)
        _, Jv = torch.autograd.functional.jvp(field, X, v)
        (JTv,) = torch.autograd.grad(out, Z, v, retain_graph=k + 1 < n_probes)
        anti += float((Jv - JTv).pow(2).sum())
        size += float(Jv.pow(2).sum())
    anti, size = math.sqrt(anti / n_probes), math.sqrt(size / n_probes)
    return {"asymmetry": anti / size, "antisymmetric": anti, "jacobian": size}


# ---------------------------------------------------------------------------------------------------------------------
# The harness: every energy along the MNIST paths


def _path(path, name="path") -> list:
    if isinstance(path, (torch.Tensor, np.ndarray)) or not hasattr(path, "__len__") or len(path) < 2:
        raise ValueError(f"{name} must be a list of at least two (n, d_q) latents X_0, X_1, ..., e.g. from "
                         "unrolled.unroll")
    path = [_latents(X, f"{name}[{t}]") for t, X in enumerate(path)]
    if len({tuple(X.shape) for X in path}) != 1:
        raise ValueError(f"every layer of {name} must have the shape of layer 0, {tuple(path[0].shape)}")
    return path


@one_thread
def energy_path(path, readings=READINGS, kappa=30.0, beta=1.0, mask=None) -> dict:
    """Each reading's energy along a path X_0, ..., X_T, and the change each step makes.

    values[t] = E(X_t) (frozen readings: E(X_t; X_t)); deltas[t] = E(X_{t+1}; X_t) - E(X_t; X_t), the change the
    step from X_t makes with the frozen part held at X_t (for the other readings simply values[t+1] - values[t]).

    Parameters
    ----------
    path : list of (n, d_q) latents X_0, ..., X_T (T >= 1), e.g. one variant of
        :func:`probdr_lite.chapters.objections.mnist_paths`
    readings : sequence of names from :data:`READINGS`, default all
    kappa, beta, mask : as in :func:`energy` (beta > 0)

    Returns
    -------
    dict {reading: {"values": (T + 1,) array, "deltas": (T,) array, "n_rise": int, "n_fall": int}}, n_rise and
    n_fall counting the steps that raise and lower the energy.
    """
    path = _path(path)
    if isinstance(readings, str) or not hasattr(readings, "__len__") or len(readings) == 0:
        raise ValueError(f"readings must be a non-empty list of names from {READINGS}; got {readings!r}")
    readings = tuple(_reading(r) for r in readings)
    for r in readings:
        _prepare(path[0], r, kappa, beta, mask, None)  # validates kappa, beta (per reading) and the mask
    causal = _mask(mask)
    for X in path:
        _check_bound(X, kappa, beta)
    frozen = tuple(r for r in readings if r in FROZEN)
    values, held = [], []
    with torch.no_grad():
        for t, X in enumerate(path):
            keep = {}
            values.append(_energies(X, tuple(dict.fromkeys(readings + ("grand",))), kappa, beta, causal, X,
                                    keep=keep))
            if t + 1 < len(path) and frozen:
                held.append(_energies(path[t + 1], frozen, kappa, beta, causal, X, A_ref=keep["A"]))
    out = {}
    for r in readings:
        v = np.array([float(e[r]) for e in values])
        d = (np.array([float(held[t][r]) for t in range(len(held))]) - v[:-1]) if r in FROZEN else np.diff(v)
        out[r] = {"values": v, "deltas": d, "n_rise": int((d > 0).sum()), "n_fall": int((d < 0).sum())}
    return out


def energy_table(paths: dict, readings=READINGS, kappa=30.0, beta=1.0, mask=None) -> dict:
    """:func:`energy_path` of every variant's path, rearranged as {reading: {variant: dict}}."""
    if not isinstance(paths, dict) or not paths:
        raise ValueError("paths must be a non-empty dict {variant: list of latents}, e.g. from "
                         "objections.mnist_paths")
    per_variant = {v: energy_path(p, readings, kappa, beta, mask) for v, p in paths.items()}
    first = next(iter(per_variant.values()))
    return {r: {v: per_variant[v][r] for v in paths} for r in first}


# ---------------------------------------------------------------------------------------------------------------------
# The blocks as graph filters


@one_thread
def attention_spectrum(X, kappa=30.0, beta=1.0) -> np.ndarray:
    """The eigenvalues lambda of L = I - A at X (no mask), ascending, in [0, 2].

    A = D^{-1} E with E = exp(S) symmetric, so A is similar to D^{-1/2} E D^{-1/2} (A = D^{-1/2} (D^{-1/2} E
    D^{-1/2}) D^{1/2}): its eigenvalues are real, and those of the book's symmetric variant are the same numbers.
    Computed with ``scipy.linalg.eigh`` on I - D^{-1/2} E D^{-1/2} in float64.
    """
    X = _latents(X)
    kappa, beta = _kappa(kappa), _beta(beta)
    _check_bound(X, kappa, beta)
    Asym = _sym_attention(_sym_logits(X, kappa, beta)).numpy()
    lam = sla.eigvalsh(np.eye(X.shape[0]) - Asym, driver="evd")
    return np.clip(lam, 0.0, 2.0)


def frequency_response(lam, variant, eta=0.4, d_q=128, beta=1.0, relative=True) -> np.ndarray:
    """What one block does to an eigenvector of L = I - A with eigenvalue lambda: the factor it is multiplied by.

    On an eigenvector v of A (A v = (1 - lambda) v), a block Pi(X + eta Delta) before its LayerNorm multiplies the
    component along v by

    - "attention" (Delta = 2 A X): 1 + 2 eta (1 - lambda);
    - "diffusion", "symmetric" (2 (A - I) X; A_sym has A's eigenvalues): 1 - h lambda with h = 2 eta, the explicit
      Euler step;
    - "paper": 1 - h lambda + 2 eta / (d_q + beta);
    - "flow": exp(-h lambda), the exact graph diffusion dX/dtau = -L X over the time tau = h that the Euler step
      stands for (1 - h lambda < exp(-h lambda) for every lambda > 0: the step damps every mode more than the flow).

    With ``relative`` (default) the factor is divided by its value at lambda = 0, the constant mode, so that a
    factor common to every mode (the overall scale) drops out. LayerNorm is not in this picture: it rescales each
    token by its own factor, not every mode by one (:func:`mode_retention` measures the real path). The "exact"
    variant is not a filter of A alone
    (its 2 C^{-1} X depends on X), so it has no response here.

    Parameters
    ----------
    lam : float or array of eigenvalues in [0, 2]
    variant : one of "attention", "diffusion", "symmetric", "paper", "flow"
    eta : float in (0, 10], default 0.4; d_q : int >= 2, default 128; beta : float in [0, 1e4], default 1

    Returns
    -------
    ndarray of lam's shape.
    """
    lam = np.asarray(lam, dtype=float)
    if not np.all(np.isfinite(lam)) or np.any(lam < -1e-12) or np.any(lam > 2.0 + 1e-12):
        raise ValueError("lam must hold eigenvalues of I - A, finite and in [0, 2]")
    variant = check_choice(variant, "variant", FILTER_VARIANTS)
    eta = check_scalar(eta, "eta", low=0.0, high=U.ETA_MAX, low_inclusive=False)
    d_q = check_scalar(d_q, "d_q", low=2, integer=True)
    beta = check_scalar(beta, "beta", low=0.0, high=U.BETA_MAX)
    h = 2.0 * eta
    c = 2.0 * eta / (d_q + beta)

    def r(x):
        if variant == "attention":
            return 1.0 + h * (1.0 - x)
        if variant in ("diffusion", "symmetric"):
            return 1.0 - h * x
        if variant == "paper":
            return 1.0 - h * x + c
        return np.exp(-h * x)

    out = r(lam)
    return out / r(0.0) if relative else out


@one_thread
def graph_modes(X, kappa=30.0, beta=1.0):
    """The eigenmodes of L = I - A at X (no mask): eigenvalues lambda ascending and the matrix that reads modes off.

    With M = D^{-1/2} E D^{-1/2} = U diag(1 - lambda) U^T (``scipy.linalg.eigh``, float64), A = D^{-1/2} M D^{1/2}
    has right eigenvectors D^{-1/2} u_j and left eigenvectors u_j^T D^{1/2}. The component of latents Z along mode
    j is the row u_j^T D^{1/2} Z: A multiplies it by 1 - lambda_j exactly. Returns ``(lam, R)`` with
    ``R = U^T D^{1/2}`` (n, n), so ``R @ Z`` holds every mode's component of Z; mode 0 is the constant one.
    """
    X = _latents(X)
    kappa, beta = _kappa(kappa), _beta(beta)
    _check_bound(X, kappa, beta)
    S = _sym_logits(X, kappa, beta)
    M = _sym_attention(S).numpy()
    w, vecs = sla.eigh(M, driver="evd")
    order = np.argsort(-w)  # descending 1 - lambda: ascending lambda
    lam = np.clip(1.0 - w[order], 0.0, 2.0)
    sqrt_d = np.exp(0.5 * torch.logsumexp(S, dim=1).numpy())  # D^{1/2}, D = row sums of exp(S)
    return lam, vecs[:, order].T * sqrt_d[None, :]


def mode_retention(path, eta=0.4, d_q=128, beta=1.0, kappa=30.0, variant="diffusion", n_modes=50,
                   modes=None) -> dict:
    """What a real path keeps of X_0's graph modes, beside what the graph frozen at X_0 predicts.

    Each mode's size is the norm of its component (:func:`graph_modes` at X_0), taken relative to the constant
    mode, so a factor common to every mode drops out: kept_j = (s_j(X_T) / s_0(X_T)) / (s_j(X_0) / s_0(X_0)).
    The prediction is :func:`frequency_response` of ``variant`` (relative) to the power T = len(path) - 1: exact
    for T steps of X <- X + 2 eta Delta(X) on the graph of X_0 without LayerNorm. Along the real path the graph
    moves with X_t and LayerNorm rescales each token by its own factor, so the two may differ.

    Returns {"top": ..., "middle": ...}, each {"measured": median kept_j, "predicted": median prediction} over
    the ``n_modes`` modes with the largest eigenvalues ("top") and the ``n_modes`` around the median eigenvalue
    ("middle"), plus "n_modes", "n_steps" and "lam" (the eigenvalues at X_0), and "steps": the same medians after
    each number of steps t = 0, ..., T, {"top": {"measured": (T + 1,), "predicted": (T + 1,)}, "middle": ...}
    (the prediction after t steps being the response to the power t), to show where a path leaves its prediction.
    ``modes``: the ``graph_modes(path[0], kappa, beta)`` of an earlier call on the same X_0, to save the
    eigendecomposition.
    """
    if not isinstance(path, (list, tuple)) or len(path) < 2:
        raise ValueError("path must be a list of at least two latents [X_0, ..., X_T], e.g. from unrolled.unroll")
    variant = check_choice(variant, "variant", FILTER_VARIANTS)
    X0 = _latents(path[0])
    n = X0.shape[0]
    n_modes = check_scalar(n_modes, "n_modes", low=1, high=max(1, (n - 1) // 2), integer=True)
    lam, R = graph_modes(X0, kappa, beta) if modes is None else modes
    if R.shape != (n, n) or lam.shape != (n,):
        raise ValueError(f"modes must be graph_modes of path[0], with n = {n} modes; got R of shape {R.shape}")

    def sizes(Z):
        s = np.linalg.norm(R @ _latents(Z).numpy(), axis=1)
        return s / s[0]

    first = sizes(path[0])
    kept = [sizes(Z) / first for Z in path]  # kept[t]: every mode after t steps
    n_steps = len(path) - 1
    response = np.abs(frequency_response(lam, variant, eta, d_q, beta))
    mid = n // 2
    picks = {"top": slice(n - n_modes, n), "middle": slice(mid - n_modes // 2, mid - n_modes // 2 + n_modes)}
    steps = {k: {"measured": np.array([np.median(kept[t][sl]) for t in range(n_steps + 1)]),
                 "predicted": np.array([np.median(response[sl] ** t) for t in range(n_steps + 1)])}
             for k, sl in picks.items()}
    out = {k: {"measured": float(v["measured"][-1]), "predicted": float(v["predicted"][-1])} for k, v in steps.items()}
    return {**out, "n_modes": n_modes, "n_steps": n_steps, "lam": lam, "steps": steps}


def frozen_graph_path(X0, n_steps, kappa=30.0, eta=0.4, beta=1.0, variant="diffusion") -> list:
    """The blocks with their LayerNorm but with the graph held at X_0: [X_0, ..., X_T], X_{t+1} = Pi(X_t + eta Delta).

    Delta is the direction of ``variant`` with A = A(X_0) throughout: 2 A X ("attention"), 2 (A - I) X
    ("diffusion"), 2 (A - I) X + 2 X / (d_q + beta) ("paper"); Pi is :func:`probdr_lite.unrolled.layer_norm`. The
    first step is the real block's; after it only the graph differs from :func:`probdr_lite.unrolled.unroll`, so
    the two paths, read with :func:`mode_retention`, separate what the moving graph does from what LayerNorm does.
    """
    X0 = _latents(X0, "X0")
    n_steps = check_scalar(n_steps, "n_steps", low=1, high=1000, integer=True)
    kappa, beta = _kappa(kappa), _beta(beta)
    eta = check_scalar(eta, "eta", low=0.0, high=U.ETA_MAX, low_inclusive=False)
    variant = check_choice(variant, "variant", U.STEP_FAMILY)
    d_q = X0.shape[1]
    with torch.no_grad():
        A = U.attention_matrix(X0, kappa, beta)
        shift = {"attention": 0.0, "diffusion": 2.0, "paper": 2.0 - 2.0 / (d_q + beta)}[variant]
        path = [X0]
        for _ in range(n_steps):
            Z = path[-1]
            path.append(U.layer_norm(Z + eta * (2.0 * (A @ Z) - shift * Z)))
    return path


@one_thread
def differential_gap(X, kappa=30.0, kappas2=(100.0, 1000.0, 10000.0), beta=1.0) -> np.ndarray:
    """How close a difference of two attention maps comes to A - I: the Differential Transformer's reading.

    Differential attention subtracts a second softmax map from the first, (A(kappa) - lambda A(kappa_2)) V. With
    lambda = 1, V = X and a second map so sharp that every point attends only to itself (A(kappa_2) -> I as
    kappa_2 -> infinity, for distinct points and beta < kappa_2 (1 - cos) for every pair), it becomes the paper's
    (A - I) X. Returns, for each kappa_2, ||(A(kappa) - A(kappa_2)) X - (A(kappa) - I) X|| / ||(A(kappa) - I) X||.
    """
    X = _latents(X)
    kappa, beta = _kappa(kappa), _beta(beta)
    if isinstance(kappas2, (str, bytes)) or not hasattr(kappas2, "__len__") or len(kappas2) == 0:
        raise ValueError(f"kappas2 must be a non-empty list of numbers in (0, 1e4]; got {kappas2!r}")
    kappas2 = [_kappa(k) for k in kappas2]
    with torch.no_grad():
        A = U.attention_matrix(X, kappa, beta)
        target = A @ X - X
        return np.array([float((X - U.attention_matrix(X, k2, beta) @ X).norm() / target.norm()) for k2 in kappas2])


#: The subspace dimensions q of the book's test.
QS = (2, 10)

#: The one tolerance of every comparison the thesis test makes: a block moves "towards" (or "away from") an LE
#: embedding, and one block ends "closer" than another, only when the two cosines differ by more than this fraction
#: of the layer-0 cosine; a smaller difference is a tie.
MOVE_TOL = 0.02


def _qs(qs, n) -> list:
    if isinstance(qs, (str, bytes)) or not hasattr(qs, "__len__") or len(qs) == 0:
        raise ValueError(f"qs must be a non-empty list of integers in [1, {n - 2}]; got {qs!r}")
    return [check_scalar(q, "qs", low=1, high=n - 2, integer=True) for q in qs]


def principal_subspace(X, q) -> np.ndarray:
    """An orthonormal basis (n, q) of the top-q principal subspace of X: left singular vectors of X - 1 mean(X).

    Centring removes the direction 1 that every row shares (the trivial, constant LE eigenvector has no
    counterpart among principal directions).

    Parameters
    ----------
    X : array or tensor of shape (n, d), n >= 3
    q : int in [1, min(n - 1, d)]
    """
    X = check_array(X, "X", ndim=2, min_rows=3).astype(np.float64)
    q = check_scalar(q, "q", low=1, high=min(X.shape[0] - 1, X.shape[1]), integer=True)
    U, _, _ = np.linalg.svd(X - X.mean(0, keepdims=True), full_matrices=False)
    return U[:, :q]


def attention_graph(X, kappa, beta=1.0) -> np.ndarray:
    """The attention's weight matrix W = exp(S - max S), S = (kappa / d_q) X X^T - beta I (no mask), dense float64.

    Symmetric (S is symmetrised to the last bit), so D^{-1} W is the attention A = softmax(S) and
    (D - W) v = lambda D v has the eigenvectors of I - A. The common factor exp(-max S) changes neither.
    """
    X = check_array(X, "X", ndim=2, min_rows=3).astype(np.float64)
    if X.shape[0] > MAX_DENSE_N:
        raise ValueError(f"X has n = {X.shape[0]} rows, above MAX_DENSE_N = {MAX_DENSE_N} for a dense graph")
    kappa = check_scalar(kappa, "kappa", low=0.0, high=KAPPA_MAX, low_inclusive=False)
    beta = check_scalar(beta, "beta", low=0.0, high=BETA_MAX)
    S = (kappa / X.shape[1]) * (X @ X.T) - beta * np.eye(X.shape[0])
    S = 0.5 * (S + S.T)
    return np.exp(S - S.max())


@one_thread
def le_targets(images, X0, kappa, beta=1.0, q_max=max(QS)) -> dict:
    """The two LE embeddings the test compares with: {"attention": (n, q_max), "pixels": (n, q_max)}.

    "attention": :func:`probdr_lite.eigenmaps.embed_graph` of :func:`attention_graph` (X0, kappa, beta);
    "pixels": :func:`probdr_lite.eigenmaps.laplacian_eigenmaps` (images, q_max) with the book's defaults.
    Columns are eigenvectors 2, ..., q_max + 1 in order, so the first q columns are the q-dimensional embedding.
    Also returns their generalised eigenvalues under "attention_eigenvalues" and "pixels_eigenvalues".
    """
    images = check_array(images, "images", ndim=2, min_rows=3)
    X0 = check_array(X0, "X0", ndim=2, min_rows=3)
    if images.shape[0] != X0.shape[0]:
        raise ValueError(f"X0 must have one row per image ({images.shape[0]}); got {X0.shape[0]}")
    q_max = check_scalar(q_max, "q_max", low=1, high=X0.shape[0] - 2, integer=True)
    V_att, lam_att = embed_graph(attention_graph(X0, kappa, beta), n_components=q_max, return_eigenvalues=True)
    V_pix, lam_pix = laplacian_eigenmaps(images, q_max, return_eigenvalues=True)
    return {"attention": V_att, "pixels": V_pix, "attention_eigenvalues": lam_att, "pixels_eigenvalues": lam_pix}


def _le_attention(images, X0, kappa, beta, q_max):
    return embed_graph(attention_graph(X0, kappa, beta), n_components=q_max)


def _le_attention_no_loops(images, X0, kappa, beta, q_max):
    W = attention_graph(X0, kappa, beta)
    np.fill_diagonal(W, 0.0)
    return embed_graph(W, n_components=q_max)


def _le_latents_knn(images, X0, kappa, beta, q_max):
    return laplacian_eigenmaps(X0, q_max)


def _le_pixels(images, X0, kappa, beta, q_max):
    return laplacian_eigenmaps(images, q_max)


#: The graphs of the thesis test, in one place: each with its LE embedding (``build(images, X0, kappa, beta,
#: q_max)``), its name in tables and figure titles (``label``) and its short name in the robustness table
#: (``short``). The chapter's attention graph W = exp(S) at X_0; the same without its self-loops (as scikit-learn's
#: spectral embedding and the Laplacian Eigenmaps chapter build graphs: at kappa = 30 the diagonal of W dominates,
#: so its LE vectors sit on single images); the k-NN graph of the latents X_0; the pixels' k-NN graph (both with the
#: Laplacian Eigenmaps chapter's 10 neighbours, 0/1 weights). Adding a graph is adding an entry here.
GRAPHS = {
    "attention": {"build": _le_attention, "label": "LE of the attention graph at $X_0$", "short": "$W = e^S$"},
    "attention_no_loops": {"build": _le_attention_no_loops,
                           "label": "LE of the attention graph at $X_0$ without self-loops",
                           "short": "$W$ without self-loops"},
    "latents_knn": {"build": _le_latents_knn, "label": "LE of the latents' k-NN graph at $X_0$",
                    "short": "k-NN of $X_0$"},
    "pixels": {"build": _le_pixels, "label": "LE of the pixels' k-NN graph", "short": "k-NN of the pixels"},
}
for _g, _entry in GRAPHS.items():  # a graph without its builder or a label is an error now, not a printed key
    _missing = {"build", "label", "short"} - set(_entry)
    if _missing:
        raise KeyError(f"GRAPHS[{_g!r}] lacks {sorted(_missing)}")


def graph_label(graph, short=False) -> str:
    """The name of a graph of :data:`GRAPHS` (``short``: its short name); an unknown graph raises ``KeyError``."""
    return GRAPHS[graph]["short" if short else "label"]


def graph_targets(images, X0, kappa, beta=1.0, q_max=max(QS)) -> dict:
    """The LE embedding of each graph of :data:`GRAPHS`: {graph: (n, q_max) array}, eigenvectors 2, ..., q_max + 1."""
    images = check_array(images, "images", ndim=2, min_rows=3)
    X0 = check_array(X0, "X0", ndim=2, min_rows=3).astype(np.float64)
    if images.shape[0] != X0.shape[0]:
        raise ValueError(f"X0 must have one row per image ({images.shape[0]}); got {X0.shape[0]}")
    q_max = check_scalar(q_max, "q_max", low=1, high=X0.shape[0] - 2, integer=True)
    return {g: entry["build"](images, X0, kappa, beta, q_max) for g, entry in GRAPHS.items()}


def _targets(targets: dict) -> dict:
    if not isinstance(targets, dict):
        raise ValueError("targets must be a dict {graph: (n, q_max) embedding}, e.g. from le_targets")
    out = {k: check_array(v, f"targets[{k!r}]", ndim=2, min_rows=3) for k, v in targets.items()
           if not k.endswith("_eigenvalues")}
    if not out:
        raise ValueError("targets must hold at least one embedding")
    return out


def _mean_cosine(basis, V) -> float:
    return float(subspace_agreement(basis, V).mean())


def _centred(V, centre):
    """``V`` with each column's mean removed (``centre``), so that it lies in the space a centred principal subspace
    spans: LE vectors are D-orthogonal to the constant vector, not orthogonal to it."""
    return V - V.mean(0, keepdims=True) if centre else V


@one_thread
def le_alignment(paths: dict, targets: dict, qs=QS, centre=True) -> dict:
    """Mean principal-angle cosine between the top-q principal subspace of X_t and each LE embedding's first q.

    1 means X_t's q leading principal directions span the LE embedding; a random subspace gives about
    sqrt(q / n) (:func:`random_baseline`).

    Parameters
    ----------
    paths : dict {variant: [X_0, ..., X_T]}, e.g. from :func:`probdr_lite.chapters.objections.mnist_paths`
    targets : dict {graph: (n, q_max) array}, from :func:`le_targets`
    qs : sequence of ints, default :data:`QS`
    centre : bool, default True
        Centre the LE vectors first. The principal subspace of X_t is centred (:func:`principal_subspace`), so it
        cannot hold the constant direction; an LE vector of L v = lambda D v is D-orthogonal to 1, not orthogonal to
        it, and its constant part would count against every block alike. False compares the raw vectors.

    Returns
    -------
    dict {variant: {graph: {q: float array over the layers}}}.
    """
    targets = _targets(targets)
    if not isinstance(paths, dict) or not paths:
        raise ValueError("paths must be a non-empty dict {variant: list of latents}")
    n = next(iter(targets.values())).shape[0]
    qs = _qs(qs, n)
    for k, V in targets.items():
        if V.shape[0] != n or V.shape[1] < max(qs):
            raise ValueError(f"targets[{k!r}] must have shape ({n}, >= {max(qs)}); got {V.shape}")
    out = {}
    for variant, path in paths.items():
        rows = {k: {q: [] for q in qs} for k in targets}
        for t, X in enumerate(path):
            X = check_array(X, f"paths[{variant!r}][{t}]", ndim=2, min_rows=3)
            if X.shape[0] != n:
                raise ValueError(f"paths[{variant!r}][{t}] must have n = {n} rows like the targets; got {X.shape[0]}")
            for q in qs:
                B = principal_subspace(X, q)
                for k, V in targets.items():
                    rows[k][q].append(_mean_cosine(B, _centred(V[:, :q], centre)))
        out[variant] = {k: {q: np.array(v) for q, v in r.items()} for k, r in rows.items()}
    return out


@one_thread
def random_baseline(targets: dict, qs=QS, n_draws=20, seed=0, centre=True) -> dict:
    """The mean principal-angle cosine of random q-dimensional subspaces (Gaussian bases, seeded) with each target.

    For a uniformly random subspace the sum of squared cosines with a fixed q-dimensional one has mean q^2 / n, so
    the mean cosine is about sqrt(q / n) (a little less: the mean of a root is below the root of the mean). Every
    target is compared with the same draws (the generator restarts from ``seed`` for each), so a target's level does
    not depend on which other targets are measured with it.

    Returns
    -------
    dict {graph: {q: {"mean": float, "sd": float}}} over ``n_draws`` draws.
    """
    targets = _targets(targets)
    n = next(iter(targets.values())).shape[0]
    qs = _qs(qs, n)
    n_draws = check_scalar(n_draws, "n_draws", low=2, high=10_000, integer=True)
    seed = check_seed(seed)
    out = {}
    for k, V in targets.items():
        rng = np.random.default_rng(seed)
        out[k] = {}
        for q in qs:
            Vq = _centred(V[:, :q], centre)
            vals = np.array([_mean_cosine(rng.standard_normal((n, q)), Vq) for _ in range(n_draws)])
            out[k][q] = {"mean": float(vals.mean()), "sd": float(vals.std(ddof=1))}
    return out


def participation_ratio(V) -> np.ndarray:
    """How many points carry each column v of V: (sum_i v_i^2)^2 / sum_i v_i^4, from 1 (one point) to n (all equal).

    An LE eigenvector of a nearly disconnected graph lives on one small component; its ratio is then close to the
    size of that component.
    """
    V = check_array(V, "V", ndim=2, min_rows=1).astype(np.float64)
    sq = V ** 2
    den = (sq ** 2).sum(0)
    if np.any(den == 0):
        raise ValueError("V must have no zero column")
    return sq.sum(0) ** 2 / den


def effective_rank(X) -> float:
    """exp(H(p)), p_i = s_i / sum_j s_j the normalised singular values of X (Roy & Vetterli, 2007).

    Between 1 (rank one: every row a multiple of one vector) and min(n, d) (all singular values equal). X is not
    centred: LayerNormed rows that all become the same vector, the rank collapse of deep attention (Dong et al.,
    2021), give 1.
    """
    X = check_array(X, "X", ndim=2, min_rows=1).astype(np.float64)
    s = np.linalg.svd(X, compute_uv=False)
    if s.sum() == 0:
        raise ValueError("X must not be all zeros (its effective rank is undefined)")
    p = s[s > 0] / s.sum()
    return float(math.exp(-(p * np.log(p)).sum()))


@one_thread
def effective_rank_path(paths: dict) -> dict:
    """{variant: float array of :func:`effective_rank` over the layers}."""
    if not isinstance(paths, dict) or not paths:
        raise ValueError("paths must be a non-empty dict {variant: list of latents}")
    return {v: np.array([effective_rank(X.numpy() if isinstance(X, torch.Tensor) else X) for X in p])
            for v, p in paths.items()}


#: A start at or above this mean cosine leaves the test no headroom: it cannot show a block moving towards the target.
CEILING = 0.95

#: The random level of the test: the mean over random subspaces plus this many of their standard deviations. A
#: start at or below it leaves the test no room to show a move either.
RANDOM_SD = 3.0


def compare_ends(a, b, start, rel_tol=MOVE_TOL) -> str:
    """Which of two cosines is higher by the test's one tolerance: ``"first"`` when ``a`` is above ``b`` by more
    than ``rel_tol`` of ``|start|`` (the layer-0 cosine), ``"second"`` when ``b`` is, else ``"tie"``. A block's move
    is the same comparison of its last layer (``a``) with its start (``b = start``)."""
    margin = check_scalar(rel_tol, "rel_tol", low=0.0) * abs(float(start))
    d = float(a) - float(b)
    return "first" if d > margin else "second" if d < -margin else "tie"


def robustness(images, paths_by_kappa: dict, beta=1.0, qs=(2, 10), n_draws=20) -> dict:
    """The thesis test for every graph of :data:`GRAPHS` at every kappa: {kappa: {"le": ..., "baseline": ...}}.

    ``paths_by_kappa`` maps each kappa to {variant: [X_0, ..., X_T]} (e.g. from
    :func:`probdr_lite.chapters.objections.mnist_paths` at that kappa, one X_0 for all); the targets are built at that
    kappa from X_0 (:func:`graph_targets`), "le" is :func:`le_alignment` and "baseline" :func:`random_baseline`.
    """
    if not isinstance(paths_by_kappa, dict) or not paths_by_kappa:
        raise ValueError("paths_by_kappa must be a non-empty dict {kappa: {variant: list of latents}}")
    out = {}
    for kappa, paths in paths_by_kappa.items():
        X0 = next(iter(paths.values()))[0]
        X0 = X0.numpy() if isinstance(X0, torch.Tensor) else X0
        targets = graph_targets(images, X0, kappa, beta, q_max=max(qs))
        out[kappa] = {"le": le_alignment(paths, targets, qs), "baseline": random_baseline(targets, qs, n_draws)}
    return out


def random_level(baseline_entry: dict, n_sd=RANDOM_SD) -> float:
    """The random level of one graph and q: the random subspaces' mean cosine plus ``n_sd`` standard deviations
    (``baseline_entry`` is one ``{"mean", "sd"}`` of :func:`random_baseline`)."""
    return baseline_entry["mean"] + n_sd * baseline_entry["sd"]


def _closer(end_diffusion, end_attention, start, level, rel_tol) -> str:
    """Which of A - I and plain attention ends closer: "diffusion", "attention", "tie" (within the tolerance) or
    "random" (both end at or below the random level ``level``)."""
    if max(end_diffusion, end_attention) <= level:
        return "random"
    return {"first": "diffusion", "second": "attention", "tie": "tie"}[
        compare_ends(end_diffusion, end_attention, start, rel_tol)]


def robustness_facts(robust: dict, n_sd=RANDOM_SD, rel_tol=MOVE_TOL, ceiling=CEILING) -> list:
    """One dict per (kappa, graph, q) of :func:`robustness`: where the latents start, the random level, how each
    block moves, where it peaks, and which of plain attention and A - I ends closer.

    One tolerance serves every comparison (:func:`compare_ends`): two cosines differ only when they are more than
    ``rel_tol`` of the start apart. A block "moves towards" the LE embedding when its last layer is above its start
    by more than that and the run leaves the random level (more than ``n_sd`` standard deviations of the random
    subspaces above their mean), "away" likewise below, else "still". ``closer`` is "diffusion" or "attention" when
    that block's last layer is above the other's by more than the same margin, "random" when both end at or below
    the random level (neither is closer than a random subspace), else "tie". ``peaks`` {variant: layer of its highest cosine} and
    ``peak_values`` beside ``ends`` (the last layer). ``start_above_random`` and ``at_ceiling`` (start >=
    ``ceiling``) say whether the test has room to show a move.
    """
    rows = []
    for kappa, r in robust.items():
        le, base = r["le"], r["baseline"]
        variants = list(le)
        for g in base:
            for q in base[g]:
                b = base[g][q]
                level = random_level(b, n_sd)
                start = float(le[variants[0]][g][q][0])
                ends = {v: float(le[v][g][q][-1]) for v in variants}
                margin = rel_tol * abs(start)
                informative = max([start] + list(ends.values())) > level
                moves = {v: "still" if not informative else
                         {"first": "towards", "second": "away", "tie": "still"}[compare_ends(end, start, start, rel_tol)]
                         for v, end in ends.items()}
                closer = "tie"
                if {"attention", "diffusion"} <= set(ends):
                    closer = _closer(ends["diffusion"], ends["attention"], start, level, rel_tol)
                rows.append({"kappa": float(kappa), "graph": g, "q": int(q), "start": start, "ends": ends,
                             "moves": moves, "closer": closer, "margin": margin,
                             "peaks": {v: int(np.argmax(le[v][g][q])) for v in variants},
                             "peak_values": {v: float(np.max(le[v][g][q])) for v in variants},
                             "random": b["mean"], "random_sd": b["sd"],
                             "start_above_random": start > level, "at_ceiling": start >= ceiling})
    return rows


def step_family_facts(family_le: dict, steps: dict, baseline: dict, qs=QS, n_sd=RANDOM_SD, rel_tol=MOVE_TOL,
                      ceiling=CEILING) -> dict:
    """Plain attention at A - I's step against plain attention at its own, read by the rules of
    :func:`robustness_facts`.

    ``family_le`` is :func:`le_alignment` of plain-attention paths from one X_0, keyed by the step s; ``steps`` maps
    "attention" and "diffusion" (and any other block of the family) to its s, each one of the keys; ``baseline`` is
    :func:`random_baseline` of the graphs compared. For each graph g of ``baseline`` and each q, ``"<g>_q<q>"``
    holds ``start`` (the layer-0 cosine), ``change`` (the last layer's cosine at A - I's step minus at plain
    attention's), ``closer`` ("diffusion", "attention", "tie" by :func:`compare_ends`, or "random" when both end
    at or below the random level), ``margin`` (the
    tolerance, ``rel_tol`` of the start) and ``room`` (the start is above the random level and below ``ceiling``).
    """
    a, d = family_le[steps["attention"]], family_le[steps["diffusion"]]
    facts = {}
    for g, by_q in baseline.items():
        for q in qs:
            b = by_q[q]
            start = float(a[g][q][0])
            end_a, end_d = float(a[g][q][-1]), float(d[g][q][-1])
            facts[f"{g}_q{q}"] = {
                "start": start, "change": end_d - end_a, "margin": rel_tol * abs(start),
                "closer": _closer(end_d, end_a, start, random_level(b, n_sd), rel_tol),
                "room": bool(random_level(b, n_sd) < start < ceiling)}
    return facts


def spectrum_facts(lam, eta=0.4, d_q=128, beta=1.0, n_steps=8) -> dict:
    """What the filters do to the middle and the top of the spectrum at X_0, for the graph frozen there and without
    LayerNorm: the facts of the spectral paragraph and of the closing table's GFSA cell.

    ``mid`` (the median eigenvalue of I - A) and ``top`` (the largest), ``h`` = 2 eta, ``n_steps``; for each of
    "diffusion", "attention", "paper" and "flow", ``mid_<v>`` and ``top_<v>``: the size a mode at the median or at the
    top keeps after ``n_steps`` steps, relative to the constant mode (:func:`frequency_response`);
    ``removed`` (the top reaches 1/h, where the Euler step's factor 1 - h lambda reaches 0) and ``top_response``
    (1 - h lambda at the top).
    """
    lam = check_array(lam, "lam", ndim=1).astype(float)
    mid, top = float(np.median(lam)), float(lam.max())
    h = 2.0 * eta

    def after(v, x):
        return float(abs(frequency_response(x, v, eta, d_q, beta)) ** n_steps)

    facts = {"mid": mid, "top": top, "h": h, "n_steps": int(n_steps), "removed": bool(top >= 1.0 / h),
             "top_response": 1.0 - h * top}
    for v in ("diffusion", "attention", "paper", "flow"):
        facts[f"mid_{v}"], facts[f"top_{v}"] = after(v, mid), after(v, top)
    return facts


def ceiling_facts(le: dict, graph="attention", variant="attention", qs=(2, 10), ceiling=CEILING) -> dict:
    """Where the latents start on one graph's thesis measure (:func:`le_alignment`) against the test's
    ``ceiling``: ``start_q<q>`` for each q, ``at_ceiling`` (the qs whose start is at or above it),
    ``any_at_ceiling`` and ``ceiling``."""
    starts = {q: float(le[variant][graph][q][0]) for q in qs}
    at = [q for q, v in starts.items() if v >= ceiling]
    return {**{f"start_q{q}": v for q, v in starts.items()}, "at_ceiling": at, "any_at_ceiling": bool(at),
            "ceiling": float(ceiling)}
