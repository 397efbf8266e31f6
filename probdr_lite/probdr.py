"""ProbDR: Laplacian Eigenmaps and PCA as Wishart models (notes section 2).

Following Ravuri, Vargas, Lalchand & Lawrence (ProbDR, arXiv 2304.07658) and
Ravuri & Lawrence (arXiv 2507.21040), a data graph Laplacian L_hat is read as a
noisy estimate of a precision matrix among the n points:

    p(P | X) = W(P | C^{-1} / nu, nu),   C = X X^T + beta I,     (model)
    q(P)     = W(P | L_hat / nu, nu),                             (data)

so that maximising the ELBO in the latents X means minimising KL(q || p), and

    ELBO(X) = (nu/2) [ log det(X X^T + beta I) - tr((X X^T + beta I) L_hat) ] + const.   (LE-ELBO)

Its maximiser is X* = U_q (Lambda_q^{-1} - beta I)^{1/2} R on the q smallest
eigenvalues of L_hat, which is Laplacian Eigenmaps with a shrinkage. PCA is
the covariance twin. Everything here is the closed-form maths the book checks
numerically; shapes are (n, q) for latents and (n, n) for L_hat, S.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp

from probdr_lite._elbo import elbo_gradient, inverse_covariance_times, is_regular, log_det_covariance
from probdr_lite._validation import check_array, check_scalar, check_seed, check_square

__all__ = [
    "wishart_kl",
    "le_elbo",
    "le_elbo_grad",
    "le_elbo_hessian",
    "le_closed_form",
    "le_lipschitz",
    "step_sizes",
    "fit_le_elbo",
    "LEFit",
    "CONVERGED",
    "regularize_laplacian",
    "unbounded_direction_demo",
    "pca_elbo",
    "pca_closed_form",
]

# An eigenvalue of L_hat below this fraction of its scale (max absolute row sum) is
# treated as zero: the ELBO has no maximum along its eigenvector.
_SINGULAR_RTOL = 1e-6

#: A run of :func:`fit_le_elbo` "has converged" when its Gram error is below this (the notes' 1e-2 criterion).
CONVERGED = 1e-2


# --- input helpers -----------------------------------------------------------

def _sym_part(M) -> np.ndarray:
    M = M.toarray() if sp.issparse(M) else M
    return 0.5 * (M + M.T)


def _match_rows(X, M, xname: str, mname: str):
    if M.shape[0] != X.shape[0]:
        raise ValueError(
            f"{mname} must be ({X.shape[0]}, {X.shape[0]}) to match {xname} with "
            f"{X.shape[0]} rows; got shape {M.shape}"
        )


def _check_spd(V: np.ndarray, name: str) -> np.ndarray:
    scale = max(float(np.abs(V).max()), np.finfo(float).tiny)
    if np.abs(V - V.T).max() > 1e-10 * scale:
        raise ValueError(f"{name} must be symmetric positive definite; it is not symmetric")
    try:
        return la.cholesky(V, lower=True)
    except la.LinAlgError:
        raise ValueError(
            f"{name} must be symmetric positive definite; its Cholesky factorisation failed "
            "(an eigenvalue is <= 0)"
        ) from None


def _sign_fix(X: np.ndarray) -> np.ndarray:
    """Make each column's largest-magnitude entry positive (eigenvectors have no sign)."""
    if X.size == 0:
        return X
    idx = np.argmax(np.abs(X), axis=0)
    s = np.sign(X[idx, np.arange(X.shape[1])])
    s[s == 0] = 1.0
    return X * s[None, :]


# --- Wishart KL ------------------------------------------------------------

def wishart_kl(V1, V2, nu) -> float:
    """KL divergence between two Wisharts with the same degrees of freedom (notes section 2).

    KL(W(V1, nu) || W(V2, nu)) = (nu/2) [ tr(V2^{-1} V1) - log det(V2^{-1} V1) - n ],

    where W(V, nu) has scale matrix V and mean nu V. Computed with Cholesky
    factors V_k = L_k L_k^T: tr(V2^{-1} V1) = ||L2^{-1} L1||_F^2.

    Parameters
    ----------
    V1, V2 : array_like, shape (n, n)
        Symmetric positive-definite scale matrices.
    nu : float
        Degrees of freedom, > n - 1 (the Wishart's own condition).

    Returns
    -------
    float
        The KL divergence (>= 0, zero iff V1 = V2).
    """
    V1 = check_square(V1, "V1")
    V2 = check_square(V2, "V2")
    _match_rows(V1, V2, "V1", "V2")
    n = V1.shape[0]
    nu = check_scalar(nu, "nu", low=n - 1, low_inclusive=False)
    L1 = _check_spd(V1, "V1")
    L2 = _check_spd(V2, "V2")
    M = la.solve_triangular(L2, L1, lower=True)  # L2^{-1} L1
    trace = float(np.sum(M * M))
    logdet = 2.0 * float(np.sum(np.log(np.diag(L1))) - np.sum(np.log(np.diag(L2))))
    return 0.5 * nu * (trace - logdet - n)


# --- the Laplacian-eigenmaps ELBO --------------------------------------------

def _check_le(X, L_hat, beta, nu):
    X = check_array(X, "X", ndim=2)
    L = check_square(L_hat, "L_hat", allow_sparse=True)
    _match_rows(X, L, "X", "L_hat")
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    nu = check_scalar(nu, "nu", low=0, low_inclusive=False)
    return X, L, beta, nu


def _elbo(X64, LX, L, beta, nu):
    """ELBO from X (float64) and L X; log det C through the smaller Gram matrix (Sylvester's identity)."""
    logdet_C = log_det_covariance(X64, beta)
    trace_L = float(L.diagonal().sum())
    tr_CL = float(np.sum(X64 * LX)) + beta * trace_L  # tr(X^T L X) + beta tr(L)
    return 0.5 * nu * (logdet_C - tr_CL)


def le_elbo(X, L_hat, beta, nu=1.0) -> float:
    """The ProbDR Laplacian-eigenmaps ELBO (notes section 2, "ELBO in X").

    ELBO(X) = (nu/2) [ log det(X X^T + beta I) - tr((X X^T + beta I) L_hat) ].

    This is -KL(W(L_hat/nu, nu) || W(C^{-1}/nu, nu)) with the X-free constant
    (nu/2)(log det L_hat + n) dropped (Ravuri & Lawrence, arXiv 2507.21040). The
    trace term is the Laplacian-eigenmaps energy tr(X^T L_hat X) (plus
    beta tr L_hat); the log-det term stops the collapse X = 0. Only the symmetric
    part of L_hat matters. The n x n determinant is computed in q x q form,
    log det(X X^T + beta I_n) = (n - q) log beta + log det(X^T X + beta I_q).

    Parameters
    ----------
    X : array_like or torch.Tensor, shape (n, q)
        Latents, one row per point.
    L_hat : array_like or scipy.sparse matrix, shape (n, n)
        Data Laplacian (need not be SPD or symmetric for evaluating the ELBO).
    beta : float > 0
        Jitter / threshold / shrinkage of C = X X^T + beta I.
    nu : float > 0, default 1
        Wishart degrees of freedom; here only an overall scale.

    Returns
    -------
    float
    """
    X, L, beta, nu = _check_le(X, L_hat, beta, nu)
    X64 = X.astype(np.float64)
    return _elbo(X64, L @ X64, L, beta, nu)


def le_elbo_grad(X, L_hat, beta, nu=1.0) -> np.ndarray:
    """Gradient of :func:`le_elbo` in X (notes section 2, "Gradient").

    dELBO/dX = (nu/2) [ 2 C^{-1} X - (L_hat + L_hat^T) X ],  C = X X^T + beta I,

    with C^{-1} X = X (X^T X + beta I)^{-1} so that no n x n inverse is formed. This is the one implementation
    of the gradient in the package (:func:`probdr_lite._elbo.elbo_gradient`): the "exact" transformer-block
    direction of :func:`probdr_lite.unrolled.update_direction` is the same call with L = I - A and nu = 2.
    For a symmetric L_hat the second term is 2 L_hat X; the paper's transformer
    update uses 2 L~ X also for a non-symmetric L~ (objection 1 of the notes).

    Parameters
    ----------
    X, L_hat, beta, nu : as in :func:`le_elbo`.

    Returns
    -------
    ndarray, shape (n, q), same dtype as ``X``.
    """
    X, L, beta, nu = _check_le(X, L_hat, beta, nu)
    X64 = X.astype(np.float64)
    return elbo_gradient(X64, L @ X64 + L.T @ X64, beta, nu).astype(X.dtype, copy=False)


def le_elbo_hessian(X, L_hat, beta, nu=1.0, centre=False, term="elbo") -> np.ndarray:
    """Hessian of :func:`le_elbo` in X: a symmetric matrix acting on X's entries in row-major order (entry
    (i, a) of X at index i q + a).

    Along a direction V, with C = X X^T + beta I and S = X V^T + V X^T, the second derivative of the ELBO is

        nu [ tr(C^{-1} V V^T) - 1/2 tr(C^{-1} S C^{-1} S) ]  -  nu tr(V^T L_sym V),

    the log-det term's part, then the trace term's (L_sym the symmetric part of L_hat). ``term`` picks one part
    ("logdet" or "trace") or their sum ("elbo"). The log-det part's eigenvalues lie in [-nu/(8 beta), nu/beta]
    for every X: in the singular bases of X it splits into pieces with values 1/(sigma_i^2 + beta) and
    (beta -+ sigma_i sigma_j) / ((sigma_i^2 + beta)(sigma_j^2 + beta)), and (beta - u)/(beta + u)^2 >= -1/(8 beta)
    (its minimum, at u = 3 beta). :func:`le_lipschitz` adds the two parts' norms.

    With ``centre=True`` the Hessian is restricted to the centred directions, 1^T V = 0, in an orthonormal basis
    of them: shape ((n - 1) q, (n - 1) q). The matrix is dense, (n q)^2 numbers: meant for a few hundred points.

    Parameters
    ----------
    X, L_hat, beta, nu : as in :func:`le_elbo`.
    centre : bool, default False
    term : "elbo", "logdet" or "trace", default "elbo"

    Returns
    -------
    ndarray, float64, shape (n q, n q), or ((n - 1) q, (n - 1) q) with ``centre``.
    """
    X, L, beta, nu = _check_le(X, L_hat, beta, nu)
    if term not in ("elbo", "logdet", "trace"):
        raise ValueError(f"term must be 'elbo', 'logdet' or 'trace', got {term!r}")
    X64 = X.astype(np.float64)
    n, q = X64.shape
    Q = la.null_space(np.ones((1, n))) if centre else np.eye(n)  # orthonormal basis of the directions kept
    H = np.zeros((Q.shape[1] * q,) * 2)
    if term in ("elbo", "logdet"):
        Y = inverse_covariance_times(X64, beta)  # C^{-1} X
        G = Q.T @ ((np.eye(n) - X64 @ Y.T) / beta) @ Q  # C^{-1} = (I - X (X^T X + beta I)^{-1} X^T) / beta
        Z = Q.T @ Y
        # d(C^{-1} X)[V] = C^{-1} V - C^{-1} V (X^T C^{-1} X) - C^{-1} X V^T C^{-1} X, entry by entry
        H += nu * (np.kron(G, np.eye(q)) - np.kron(G, X64.T @ Y)
                   - np.einsum("ib,ja->iajb", Z, Z).reshape(H.shape))
    if term in ("elbo", "trace"):
        H -= nu * np.kron(Q.T @ _sym_part(L) @ Q, np.eye(q))
    return 0.5 * (H + H.T)


def regularize_laplacian(L, gamma=1e-2):
    """Return L + gamma I, the SPD Laplacian the Wishart model needs (notes section 2).

    A graph Laplacian has L 1 = 0, so W(L/nu, nu) is degenerate and the ELBO
    has no maximum along the constant vector. Adding gamma I makes every
    eigenvalue >= gamma; the constant vector then becomes the first coordinate
    of the closed-form optimum, with scale^2 = 1/gamma - beta.

    Parameters
    ----------
    L : array_like or scipy.sparse matrix, shape (n, n)
    gamma : float > 0, default 1e-2

    Returns
    -------
    Same kind as ``L`` (sparse CSR or dense float64).
    """
    M = check_square(L, "L", allow_sparse=True)
    gamma = check_scalar(gamma, "gamma", low=0, low_inclusive=False)
    n = M.shape[0]
    if sp.issparse(M):
        return sp.csr_matrix(M + gamma * sp.identity(n, format="csr"))
    return M + gamma * np.eye(n)


def _smallest_eigs(S: np.ndarray, q: int, centre: bool):
    """q smallest eigenpairs of S, or of S restricted to {x : 1^T x = 0} when centring."""
    n = S.shape[0]
    bound = float(np.abs(S).sum(axis=1).max())  # Gershgorin: every |eigenvalue| <= bound
    if centre:
        # P S P with P = I - 11^T/n, plus c 11^T/n with c > bound: the constant vector is
        # pushed above the spectrum, so the q smallest eigenvectors lie in 1^perp.
        B = S - S.mean(axis=0, keepdims=True) - S.mean(axis=1, keepdims=True) + S.mean()
        B = B + (bound + 1.0) / n
        lam, U = la.eigh(B, subset_by_index=[0, q - 1])
        U = U - U.mean(axis=0, keepdims=True)  # remove round-off along 1
    else:
        lam, U = la.eigh(S, subset_by_index=[0, q - 1])
    return lam, U, bound


def le_closed_form(L_hat, n_components, beta, centre=False, return_eigenvalues=False):
    """Closed-form maximiser of the LE-ELBO (notes section 2, "Closed-form optimum").

    X* = U_q (Lambda_q^{-1} - beta I)^{1/2},

    with (Lambda_q, U_q) the q smallest eigenpairs of the symmetric part of
    L_hat. Directions with lambda >= 1/beta get zero scale (beta thresholds and
    shrinks: s^2 = max(1/lambda - beta, 0)). Any X* R with R orthogonal is
    optimal too; X* X*^T is unique when lambda_q < lambda_{q+1}.

    With ``centre=True`` X is constrained to 1^T X = 0 and U_q are the smallest
    eigenvectors on that subspace; for a connected graph's raw Laplacian these
    are eigenvectors 2..q+1, as in classical Laplacian Eigenmaps. Centring only
    removes the null direction of a Laplacian with L 1 = 0 (L = D - W); the
    null vector of L_sym is D^{1/2} 1, so L_sym needs :func:`regularize_laplacian`.

    Parameters
    ----------
    L_hat : array_like or scipy.sparse matrix, shape (n, n)
        Must be positive definite (on 1^perp when centring): a raw Laplacian
        needs :func:`regularize_laplacian` or ``centre=True``.
    n_components : int
        q, in [1, n] (in [1, n - 1] when centring).
    beta : float > 0
    centre : bool, default False
    return_eigenvalues : bool, default False
        Also return the q eigenvalues used.

    Returns
    -------
    X_star : ndarray, shape (n, q), float64; columns sign-fixed.
    eigenvalues : ndarray, shape (q,), only if ``return_eigenvalues``.

    Raises
    ------
    ValueError
        If the smallest eigenvalue is <= 0 (up to round-off): the ELBO is then
        unbounded along that eigenvector.
    """
    S = _sym_part(check_square(L_hat, "L_hat", allow_sparse=True))
    n = S.shape[0]
    q = check_scalar(n_components, "n_components", low=1, high=n - 1 if centre else n,
                     integer=True)
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    lam, U, bound = _smallest_eigs(S, q, bool(centre))
    if lam[0] <= _SINGULAR_RTOL * bound:
        where = " on the centred subspace 1^T x = 0" if centre else ""
        fix = ("add gamma I with regularize_laplacian(L, gamma=1e-2)" if centre else
               "add gamma I with regularize_laplacian(L, gamma=1e-2), or use centre=True to "
               "project out the constant vector (classical Laplacian eigenmaps)")
        raise ValueError(
            f"L_hat is singular or indefinite{where}: smallest eigenvalue {lam[0]:.3g} <= 0 up "
            f"to round-off, so the ELBO is unbounded along its eigenvector (scale^2 = "
            f"1/lambda - beta is infinite). A raw graph Laplacian has L 1 = 0; {fix}."
        )
    scale = np.sqrt(np.clip(1.0 / lam - beta, 0.0, None))
    X = _sign_fix(U * scale[None, :])
    return (X, lam) if return_eigenvalues else X


def le_lipschitz(L_hat, beta, nu=1.0) -> float:
    """Curvature bound of the LE-ELBO, ell = nu (max(lambda_max(S), 0) + 1/beta).

    The Hessian in X is the sum of two parts (:func:`le_elbo_hessian`): the
    trace term's, -nu S acting on each column (S the symmetric part of L_hat),
    of norm nu max|lambda(S)|, and the log-det term's, whose eigenvalues lie in
    [-nu/(8 beta), nu/beta] at every X (nu/beta is reached at X = 0), so of
    norm at most nu/beta. The norm of the sum is at most the sum of the norms,
    so the gradient is ell-Lipschitz (for the positive semi-definite Laplacians
    of the book, max(lambda_max(S), 0) is that norm). Gradient ascent with step
    eta <= 1/ell then increases the ELBO every step; :func:`fit_le_elbo` uses
    eta = 1/ell by default.
    Near the optimum the iteration diverges for steps beyond about
    2/(nu (lambda_max - lambda_1)), lambda_1 the smallest eigenvalue
    (:func:`step_sizes` computes it, and its tests check it against runs).

    Returns
    -------
    float
    """
    L = check_square(L_hat, "L_hat", allow_sparse=True)
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    nu = check_scalar(nu, "nu", low=0, low_inclusive=False)
    return _le_lipschitz(L, beta, nu)


def _le_lipschitz(L, beta: float, nu: float) -> float:
    """:func:`le_lipschitz` of a checked L (float64, dense or CSR)."""
    S = _sym_part(L)
    n = S.shape[0]
    lam_max = float(la.eigvalsh(S, subset_by_index=[n - 1, n - 1])[0])
    return nu * (max(lam_max, 0.0) + 1.0 / beta)


def step_sizes(L_hat, beta, n_components: int = 2, centre: bool = True) -> dict:
    """The step sizes and the rate that mark the regimes of gradient ascent on the LE-ELBO (nu = 1).

    Linearise one step X -> X + eta dELBO/dX around the optimum X* (all q columns
    kept, eigenvalues lambda_1 <= lambda_2 <= ... of L_hat, on 1^T x = 0 when
    ``centre``). Tilting column j of X* towards an unused eigenvector u_k
    changes the gradient by -(lambda_k - lambda_j) times the tilt, so each step
    multiplies that tilt by 1 - eta (lambda_k - lambda_j). Hence:

    - ``"safe"``: 1/ell with ell = lambda_max + 1/beta (:func:`le_lipschitz`);
      steps up to it raise the ELBO every time, from any start;
    - ``"divergent"``: 2 / (lambda_max - min(lambda_1, 1/beta)); above it the
      fastest tilt overshoots by more than it corrects and the iterates blow up
      (with no column kept the factor is 1 - eta (lambda_max - 1/beta));
    - ``"slowest"``: the slowest mode near X*, min(lambda_{q+1} - lambda_q,
      min_j 2 lambda_j (1 - beta lambda_j)): the smallest tilt, or the smallest
      curvature of a column's length (the ELBO along s u_j has second derivative
      -2 lambda_j (1 - beta lambda_j) at s*). Near X* the error shrinks by about
      1 - eta * slowest per step, once the start has excited that mode. Rotations
      of X* among themselves (X* R) cost
      nothing and do not shrink, which is why the error is measured on X X^T.

    Returns
    -------
    dict with float values ``safe``, ``divergent``, ``slowest``, ``lambda_max``.
    """
    L = check_square(L_hat, "L_hat", allow_sparse=True)
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    q = check_scalar(n_components, "n_components", low=1, integer=True)
    ell = _le_lipschitz(L, beta, 1.0)
    lam_max = ell - 1.0 / beta
    _, lam = le_closed_form(L, q + 1, beta, centre=centre, return_eigenvalues=True)
    low = min(float(lam[0]), 1.0 / beta)
    kept = lam[:q][lam[:q] < 1.0 / beta]
    lengths = 2.0 * kept * (1.0 - beta * kept)  # curvature of each kept column's length
    slowest = min([float(lam[q] - lam[q - 1])] + lengths.tolist())
    return {"safe": 1.0 / ell, "divergent": 2.0 / (lam_max - low), "slowest": slowest,
            "lambda_max": lam_max}



@dataclass
class LEFit:
    """Trajectory of gradient ascent on the LE-ELBO (see :func:`fit_le_elbo`).

    Attributes
    ----------
    X : ndarray (n, q)            the last iterate
    iterates : ndarray (m, n, q)  stored iterates X_t, at the steps in ``steps``
    steps : ndarray (m,)          step index t of each stored iterate
    elbo : ndarray (T + 1,)       ELBO(X_t) for t = 0..T
    gram_error : ndarray (T + 1,) ||X_t X_t^T - X* X*^T||_F / ||X* X*^T||_F
    X_star : ndarray (n, q)       the closed form it is compared with
    eta : float                   step size used
    diverged : bool               True if the iterates blew up and the run was stopped
    """

    X: np.ndarray
    iterates: np.ndarray
    steps: np.ndarray
    elbo: np.ndarray
    gram_error: np.ndarray
    X_star: np.ndarray
    eta: float
    diverged: bool

    @property
    def n_steps(self) -> int:
        """Number of gradient steps actually taken."""
        return len(self.elbo) - 1


def _gram_error(X, X_star, ref_sq):
    """||X X^T - X* X*^T||_F / ||X* X*^T||_F in O(n q^2), without n x n matrices."""
    sq = (np.sum((X.T @ X) ** 2) - 2.0 * np.sum((X.T @ X_star) ** 2) + ref_sq)
    return float(np.sqrt(max(sq, 0.0) / ref_sq)) if ref_sq > 0 else float(np.sqrt(max(sq, 0.0)))


def fit_le_elbo(L_hat, n_components, beta, eta=None, n_steps=3000, seed=0, centre=False,
                nu=1.0, init_scale=0.1, store_every=None, max_norm=1e6) -> LEFit:
    """Gradient ascent on the LE-ELBO from a random start (notes section 2, last item).

    X_{t+1} = X_t + eta * dELBO/dX (X_t),  X_0 = init_scale * N(0, 1)^{n x q},

    and, with ``centre=True``, each iterate is projected onto 1^T X = 0. The run
    is compared step by step with the closed form X* of :func:`le_closed_form`
    through the Gram error ||X_t X_t^T - X* X*^T||_F / ||X* X*^T||_F (X* is
    defined up to rotation, X X^T is not).

    The default step eta = 1 / :func:`le_lipschitz` is stable. Larger steps
    can diverge: as soon as an iterate leaves the ball ||X||_F <= max_norm *
    max(1, ||X*||_F, ||X_0||_F), stops being finite, or makes C = X X^T + beta I
    numerically singular (see :mod:`probdr_lite._elbo`), the run stops and
    ``diverged`` is True; every number returned is finite.

    Parameters
    ----------
    L_hat : array_like or scipy.sparse matrix, shape (n, n)
        Positive definite (e.g. :func:`regularize_laplacian` of a graph
        Laplacian), or a raw Laplacian with ``centre=True``.
    n_components : int
        q, as in :func:`le_closed_form`.
    beta : float > 0
    eta : float > 0 or None
        Step size; None means 1 / le_lipschitz(L_hat, beta, nu).
    n_steps : int, default 3000
        Number of steps T, in [0, 10^7].
    seed : int, default 0
    centre : bool, default False
    nu : float > 0, default 1
    init_scale : float > 0, default 0.1
    store_every : int >= 1 or None, default None
        Keep every ``store_every``-th iterate (the first and last are always
        kept). None keeps about 100: store_every = max(1, n_steps // 100), so
        that memory stays O(100 n q) however long the run.
    max_norm : float > 1, default 1e6
        Divergence threshold, relative (see above).

    Returns
    -------
    LEFit
    """
    L = check_square(L_hat, "L_hat", allow_sparse=True)
    n = L.shape[0]
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    nu = check_scalar(nu, "nu", low=0, low_inclusive=False)
    X_star = le_closed_form(L, n_components, beta, centre=centre)  # validates q, singular L
    q = X_star.shape[1]
    if eta is None:
        eta = 1.0 / _le_lipschitz(L, beta, nu)
    eta = check_scalar(eta, "eta", low=0, low_inclusive=False)
    T = check_scalar(n_steps, "n_steps", low=0, high=10**7, integer=True)
    seed = check_seed(seed)
    init_scale = check_scalar(init_scale, "init_scale", low=0, low_inclusive=False)
    if store_every is None:
        store_every = max(1, T // 100)
    store_every = check_scalar(store_every, "store_every", low=1, integer=True)
    max_norm = check_scalar(max_norm, "max_norm", low=1, low_inclusive=False)

    X = init_scale * np.random.default_rng(seed).standard_normal((n, q))
    if centre:
        X -= X.mean(axis=0, keepdims=True)
    ref_sq = float(np.sum((X_star.T @ X_star) ** 2))
    limit = max_norm * max(1.0, float(np.linalg.norm(X_star)), float(np.linalg.norm(X)))

    elbo, gram, stored, steps = [], [], [X.copy()], [0]
    diverged = False
    for t in range(T + 1):
        LX = L @ X
        elbo.append(_elbo(X, LX, L, beta, nu))
        gram.append(_gram_error(X, X_star, ref_sq))
        if t == T:
            break
        X_new = X + eta * elbo_gradient(X, LX + L.T @ X, beta, nu)
        if centre:
            X_new -= X_new.mean(axis=0, keepdims=True)
        norm = float(np.linalg.norm(X_new))
        if not np.isfinite(norm) or norm > limit or not is_regular(X_new, beta):
            diverged = True  # blown up (C = X X^T + beta I is then numerically singular too)
            break
        X = X_new
        if (t + 1) % store_every == 0:
            stored.append(X.copy())
            steps.append(t + 1)
    if steps[-1] != len(elbo) - 1:
        stored.append(X.copy())
        steps.append(len(elbo) - 1)
    return LEFit(X=X, iterates=np.stack(stored), steps=np.asarray(steps), elbo=np.asarray(elbo),
                 gram_error=np.asarray(gram), X_star=X_star, eta=float(eta), diverged=diverged)


def unbounded_direction_demo(L, beta, ts, nu=1.0, v=None) -> np.ndarray:
    """ELBO along X_t = t 1 v^T / sqrt(n): the warning example of notes section 2.

    For a raw Laplacian (L 1 = 0) the trace term does not see the constant
    vector, and with ||v|| = 1

        ELBO(X_t) = (nu/2) [ log(beta + t^2) + (n - 1) log beta - beta tr L ],

    which grows like nu log t without bound: no maximum exists. For
    L + gamma I the extra -(nu/2) gamma t^2 turns it back down.

    Parameters
    ----------
    L : array_like or scipy.sparse matrix, shape (n, n)
    beta : float > 0
    ts : array_like, shape (m,)
        Values of t.
    nu : float > 0, default 1
    v : array_like, shape (q,), optional
        Direction in latent space (normalised here); default the single
        coordinate v = [1].

    Returns
    -------
    ndarray, shape (m,)
        ELBO(X_t) for each t.
    """
    M = check_square(L, "L", allow_sparse=True)
    beta = check_scalar(beta, "beta", low=0, low_inclusive=False)
    nu = check_scalar(nu, "nu", low=0, low_inclusive=False)
    ts = check_array(ts, "ts", ndim=1).astype(np.float64)
    v = np.ones(1) if v is None else check_array(v, "v", ndim=1).astype(np.float64)
    norm_v = float(np.linalg.norm(v))
    if norm_v == 0:
        raise ValueError("v must be a non-zero vector")
    n = M.shape[0]
    base = np.outer(np.ones(n) / np.sqrt(n), v / norm_v)  # (n, q), unit Frobenius norm
    L1 = M @ base
    return np.array([_elbo(t * base, t * L1, M, beta, nu) for t in ts])


# --- the PCA twin ------------------------------------------------------------

def _check_pca(S, sigma2):
    S = _sym_part(check_square(S, "S"))
    sigma2 = check_scalar(sigma2, "sigma2", low=0, low_inclusive=False)
    return S, sigma2


def pca_elbo(X, S, sigma2, d) -> float:
    """Probabilistic-PCA objective, the covariance twin (notes section 2, last item).

    F(X) = -(d/2) [ log det C + tr(C^{-1} S) ],  C = X X^T + sigma^2 I,

    the Gaussian log-likelihood of d columns y_j ~ N(0, C) with S = Y Y^T / d,
    up to the constant -(n d / 2) log(2 pi). Computed in q x q form with
    C^{-1} = (I - X (X^T X + sigma^2 I)^{-1} X^T) / sigma^2 (Woodbury).

    Parameters
    ----------
    X : array_like, shape (n, q)
    S : array_like, shape (n, n)
        Sample covariance (its symmetric part is used).
    sigma2 : float > 0
        Noise variance sigma^2.
    d : float > 0
        Number of observed columns (a scale of the objective).

    Returns
    -------
    float
    """
    X = check_array(X, "X", ndim=2).astype(np.float64)
    S, sigma2 = _check_pca(S, sigma2)
    _match_rows(X, S, "X", "S")
    d = check_scalar(d, "d", low=0, low_inclusive=False)
    n, q = X.shape
    K = X.T @ X + sigma2 * np.eye(q)
    logdet_C = log_det_covariance(X, sigma2)
    XtSX = X.T @ S @ X
    tr_CinvS = (np.trace(S) - np.trace(la.solve(K, XtSX, assume_a="pos"))) / sigma2
    return -0.5 * d * (logdet_C + tr_CinvS)


def pca_closed_form(S, n_components, sigma2, return_eigenvalues=False):
    """Maximiser of :func:`pca_elbo` (Tipping & Bishop's PPCA; notes section 2).

    X* = U_q (Lambda_q - sigma^2 I)^{1/2},

    with (Lambda_q, U_q) the q largest eigenpairs of S, in decreasing order;
    directions with lambda <= sigma^2 get zero scale. Compare
    :func:`le_closed_form`: the same shape on the *smallest* eigenvalues of a
    precision, with 1/lambda in place of lambda.

    Parameters
    ----------
    S : array_like, shape (n, n)
    n_components : int
        q, in [1, n].
    sigma2 : float > 0
    return_eigenvalues : bool, default False

    Returns
    -------
    X_star : ndarray, shape (n, q), float64; columns sign-fixed.
    eigenvalues : ndarray, shape (q,), decreasing; only if ``return_eigenvalues``.
    """
    S, sigma2 = _check_pca(S, sigma2)
    n = S.shape[0]
    q = check_scalar(n_components, "n_components", low=1, high=n, integer=True)
    lam, U = la.eigh(S, subset_by_index=[n - q, n - 1])
    lam, U = lam[::-1], U[:, ::-1]
    X = _sign_fix(U * np.sqrt(np.clip(lam - sigma2, 0.0, None))[None, :])
    return (X, lam) if return_eigenvalues else X
