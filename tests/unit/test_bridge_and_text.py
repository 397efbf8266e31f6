"""The bridge figures (figures/bridge.py) and the computed sentences of chapters 1, 3 and 5 (figures/chapter_text.py,
figures/mnist_text.py): maths against NumPy/SciPy written out here, and every word on numbers for which it is false."""

import math

import matplotlib
import numpy as np
import pytest
import scipy.linalg as sla
from scipy.special import softmax

from probdr_lite.figures import bridge as B
from probdr_lite.figures import chapter_text as CT
from probdr_lite.figures import mnist_text as MT
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
    assert B.bump_scrub([1.0, 10.0], n_points=200).label == "κ"


def test_bridge_sentence_words_follow_the_numbers():
    s = B.bridge_sentence(36.6, 0.025, 1.05, 0.4)
    assert "both inside the stability limit 2" in s and "is a convex combination" in s and "factor of 16" in s
    s = B.bridge_sentence(36.6, 0.06, 1.05, 0.6)  # 0.06 * 36.6 > 2; h = 1.2 > 1
    assert "the first at or past the stability limit 2, the second inside it" in s
    assert "no longer a convex combination" in s
    assert "above 2" in B.bridge_sentence(10.0, 0.01, 2.5, 0.4)


def test_decimals_and_agreement_sentence():
    assert CT.decimals_of_agreement(1.0) == 15 and CT.decimals_of_agreement(0.9991) == 3
    rows = [{"name": "a", "cosines": np.array([1.0, 0.9991]), "agreement_same_graph": 1.0 - 1e-13},
            {"name": "b", "cosines": np.array([1.0, 0.95]), "agreement_same_graph": 1.0}]
    s = CT.agreement_sentence(rows)
    assert "agree to round-off" in s and "3 (a) and 1 (b)" in s and "fewest on b" in s
    rows[0]["agreement_same_graph"] = 0.999
    assert "not to round-off" in CT.agreement_sentence(rows)
    with pytest.raises(ValueError, match="cosine"):
        CT.decimals_of_agreement(1.5)


def test_order_along_a_curve_and_a_broken_graph():
    t = np.linspace(0, 1, 200)
    Y = np.column_stack([np.cos(3 * t), np.sin(3 * t), t])  # a helix: one sheet, in order along t
    rho = CT.order_along_roll(Y, t, [(8, 1.0), (1, 1.0)])
    assert rho[0] > 0.99 and math.isnan(rho[1])  # one neighbour each: the graph falls apart
    s = CT.unrolling_sentence(Y, t, [(8, 1.0), (1, 1.0)])
    assert "$k = 1$, $t = 1$: apart" in s and "In order: $k = 8$ at $t = 1$" in s
    assert CT.unrolling_sentence(Y, t, [(8, 1.0), (10, 1.0)]).endswith("Every frame keeps the order.")


def test_eta_outcomes_and_sentence():
    L = laplacian(graph(40))
    lam = sla.eigh(L.toarray(), eigvals_only=True)
    out = CT.eta_outcomes(L, 0.3, [1e-4, 3.0 / lam.max()], n_steps=200)
    assert out == ["short", "diverged"]
    marks = {"safe": 0.01, "divergent": 2.0 / lam.max()}
    s = CT.eta_sentence(L, 0.3, [1e-4, 3.0 / lam.max()], n_steps=200, marks=marks)
    assert "diverged" in s and "exactly those past the second" in s
    s = CT.eta_sentence(L, 0.3, [1e-4], n_steps=200, marks={"safe": 0.01, "divergent": 1e-5})
    assert "not exactly those" in s


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 5's sentences


def rows_for(variant, values, n=100):
    """Tidy rows {variant, n, layer, metric...}; ``values`` maps metric -> list over layers."""
    layers = len(next(iter(values.values())))
    return [{"variant": variant, "n": n, "layer": t, **{m: v[t] for m, v in values.items()}} for t in range(layers)]


def paper_rows(knn, bw, sil, nmi):
    return rows_for("paper", {"knn_accuracy": knn, "between_within": bw, "silhouette": sil, "kmeans_nmi": nmi})


def test_numbers_text_words():
    p = MT.paper_numbers(paper_rows([0.9, 0.8, 0.7], [0.7, 1.0, 1.5], [0.04, 0.06, 0.01], [0.43, 0.5, 0.47]), 2)
    s = MT.numbers_text(p)
    assert "rises from 0.70 to 1.50" in s and "falls from 0.900 to 0.700" in s and "*less* pure" in s
    assert "Both peak before the last block" in s and "stays below 0.25" in s
    p = MT.paper_numbers(paper_rows([0.9, 0.9, 0.905], [0.7, 0.7, 0.703], [0.3, 0.4, 0.5], [0.4, 0.5, 0.6]), 2)
    s = MT.numbers_text(p)
    assert "barely changes" in s and "less* pure" not in s and "Both peak" not in s and "stays below" not in s
    assert "the clumping the picture shows" not in s


def test_peaks_premise_and_pixel_text():
    early = MT.paper_numbers(paper_rows([0.9] * 3, [1.0] * 3, [0.04, 0.06, 0.01], [0.43, 0.5, 0.47]), 2)
    assert "peak after 1 and 1 blocks and then fall" in MT.peaks_premise(early)
    late = MT.paper_numbers(paper_rows([0.9] * 3, [1.0] * 3, [0.04, 0.05, 0.06], [0.43, 0.5, 0.6]), 2)
    assert "peak" not in MT.peaks_premise(late) and "largest after 2 blocks" in MT.peaks_premise(late)
    assert "practically the same" in MT.pixel_text(0.970, 0.965)
    assert "practically the same" not in MT.pixel_text(0.970, 0.90)


def test_variants_and_summary_words():
    layers = 3
    var_rows = []
    finals = {"attention": 0.85, "diffusion": 0.80, "paper": 0.805, "exact": 0.82, "symmetric": 0.83}
    for v, k in finals.items():
        var_rows += rows_for(v, {"knn_accuracy": [0.87, 0.86, k], "silhouette": [0.04, 0.05, 0.03],
                                 "between_within": [0.76, 1.0, 1.4], "kmeans_nmi": [0.43, 0.45, 0.47]})
    s = MT.variants_text(var_rows, layers - 1, np.array([0.47, 0.48, 0.46, 0.47, 0.49]), 0.4, 128, 1.0)
    assert "smaller step" in s and "end within 0.01 of each other" in s
    assert "No variant ends with purer" in s and "every variant makes clumps" in s
    assert "does not separate the variants" in s  # the NMIs are all equal
    var_rows[0 * layers + 2]["knn_accuracy"] = 0.95  # attention now ends purer than it started
    s = MT.variants_text(var_rows, layers - 1, np.array([0.47, 0.48, 0.46, 0.47, 0.49]), 0.4, 128, 1.0)
    assert "No variant ends" not in s and "`attention` ends with purer" in s
    p = MT.paper_numbers(paper_rows([0.9, 0.8, 0.7], [0.7, 1.0, 1.5], [0.04, 0.06, 0.01], [0.43, 0.5, 0.47]), 2)
    summary = MT.summary_text(p, var_rows)
    assert "do pull MNIST into clumps" in summary and "plain attention makes clumps too" in summary
    assert "does not group by class better" in summary

