"""The ELBO chapter's set-up, defined once: the data, graph and beta that chapters 3 to 5 share.

The ELBO chapter (``book/src/probdr_elbo.py``) fits the ProbDR model of Laplacian Eigenmaps to 300 MNIST test
digits, 30 of each class, through the Laplacian of their 10-nearest-neighbour graph, with q = 2 latent dimensions and
beta = 0.3. The unrolled-inference chapter climbs the same ELBO from a random start, and the transformer-block
chapter compares its step sizes with that chapter's. All three read :data:`SETUP`, and their prose pastes its values,
so that a change here changes every page that states it. :data:`BETA_SLIDER` is the ELBO chapter's beta slider (its
range and default, the default being ``SETUP.beta``), read by the kernel panel
(:func:`probdr_lite.presentation.figures.elbo.beta_panel`), the live figure
(:func:`probdr_lite.presentation.live.builders.beta_live`, through
:data:`probdr_lite.presentation.figures.elbo.BETA`) and the chapter.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ElboSetup", "SETUP", "BETA_SLIDER"]


@dataclass(frozen=True)
class ElboSetup:
    """The settings of the ELBO chapter and of the two chapters that reuse its graph.

    Attributes
    ----------
    n : int
        MNIST test digits, a class-balanced subset (``load_mnist(n, stratified=True)``: n / 10 per class).
    k : int
        Neighbours of the k-nearest-neighbour graph (0/1 weights) whose Laplacian is L_hat.
    q : int
        Latent dimensions of X.
    beta : float
        The beta of C = X X^T + beta I (jitter, threshold 1/beta, shrinkage).
    gamma : float
        The shift of L_hat = L + gamma I where the chapter needs a positive definite L_hat (the zero-eigenvalue trap).
    """

    n: int = 300
    k: int = 10
    q: int = 2
    beta: float = 0.3
    gamma: float = 0.01


#: The set-up of chapters 3 to 5.
SETUP = ElboSetup()

#: The ELBO chapter's beta slider: a logarithmic range and its default, the set-up's beta.
BETA_SLIDER = {"low": 0.05, "high": 1.0, "default": SETUP.beta}
