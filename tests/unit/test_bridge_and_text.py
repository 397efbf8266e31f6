"""The bridge figures (presentation/figures/bridge.py): maths against NumPy/SciPy written out here, and every word on
numbers for which it is false. The facts of the Laplacian Eigenmaps and unrolled-inference chapters
(probdr_lite/chapters/laplacian_eigenmaps.py, unrolled_inference.py) are tested in test_early_chapters_facts.py, the
MNIST chapter's (probdr_lite/chapters/mnist_at_init.py) in test_mnist_facts.py."""

import inspect

import matplotlib
import numpy as np
import pytest
import scipy.linalg as sla
from scipy.special import softmax

from probdr_lite.presentation.figures import bridge as B
from probdr_lite.graphs import knn_graph, laplacian

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def graph(n=30, seed=0):
    Y = np.random.default_rng(seed).normal(size=(n, 3))
    return knn_graph(Y, n_neighbors=5, mode="heat")


def test_laplacian_eigenvalues_against_scipy():
    W = graph()
    L = laplacian(W).toarray()
    assert np.allclose(B.laplacian_eigenvalues(L), sla.eigh(L, eigvals_only=True), atol=1e-10)
    # the random-walk Laplacian is similar to L_sym: same, real eigenvalues, all in [0, 2]
    lam_rw = B.laplacian_eigenvalues(laplacian(W, "random_walk").toarray())
    lam_sym = sla.eigh(laplacian(W, "symmetric").toarray(), eigvals_only=True)
    assert np.allclose(lam_rw, lam_sym, atol=1e-10) and lam_rw.min() > -1e-10 and lam_rw.max() <= 2 + 1e-10
    with pytest.raises(ValueError, match="real eigenvalues"):
        B.laplacian_eigenvalues(np.array([[0.0, 1.0], [-1.0, 0.0]]))


def test_euler_limit_separates_decay_from_blow_up():
    L = laplacian(graph()).toarray()
    lim = B.euler_limits(B.laplacian_eigenvalues(L))
    assert lim["h_stable"] == pytest.approx(2 / sla.eigh(L, eigvals_only=True).max())
    x = np.random.default_rng(1).normal(size=L.shape[0])
    x -= x.mean()  # off the null space
    for factor, grows in ((0.95, False), (1.05, True)):
        h, y = factor * lim["h_stable"], x.copy()
        for _ in range(2000):
            y = y - h * L @ y
        assert (np.linalg.norm(y) > np.linalg.norm(x)) == grows
    with pytest.raises(ValueError, match="eigenvalues"):
        B.euler_limits([0.0, -1.0])


def test_bump_is_the_softmax_row_and_the_heat_kernel():
    fig, update = B.bump_figure(n_points=400)
    P = B.fibonacci_sphere(400)
    assert np.allclose(np.linalg.norm(P, axis=1), 1.0)
    for kappa in (0.5, 30.0, 500.0):
        update(kappa)
        dots = fig.axes[0].lines[0].get_ydata()
        assert np.allclose(dots, softmax(kappa * P[:, 2]), atol=1e-14)
        heat = np.exp(-np.sum((P - [0, 0, 1]) ** 2, axis=1) * kappa / 2)
        line = fig.axes[0].lines[1].get_ydata()
        order = np.argsort(np.degrees(np.arccos(np.clip(P[:, 2], -1, 1))))
        assert np.allclose(line, (heat / heat.sum())[order], atol=1e-14)
        assert str(round(1 / np.sum(dots ** 2))) in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="kappa"):
        update(0.0)
    assert B.bump_panel(kappa=3.0).n_updates == 1


def test_the_bumps_kappas_are_defined_once():
    """The kernel panel's slider runs over the scrub's frames, from the first to the last of BUMP_KAPPAS, and starts at
    the toy's kappa; a kappa outside that range is refused."""
    from probdr_lite.chapters.transformer_block import BUMP_KAPPAS, TOY_SETTINGS

    spec = B.bump_panel(n_points=200).specs["kappa"]
    assert (spec.low, spec.high, spec.log) == (BUMP_KAPPAS[0], BUMP_KAPPAS[-1], True)
    assert spec.value == TOY_SETTINGS["kappa"]["default"] and spec.label == "κ (sharpness)"
    assert list(inspect.signature(B.bump_scrub).parameters["kappas"].default) == list(BUMP_KAPPAS)
    with pytest.raises(ValueError, match="kappa"):
        B.bump_panel(kappa=2 * BUMP_KAPPAS[-1], n_points=200)
    assert B.bump_scrub([1.0, 10.0], n_points=200, alt="One row of the attention on a sphere.").label == "κ"
