"""Figure, slider and scrub builders of the Laplacian Eigenmaps, ELBO and unrolled-inference chapters.

Each slider is driven the way a reader's drag drives it (setting the widget's value) and must
change what is drawn; the kernel-free scrub of the steps must hold its frames and its range
control within the 2 MB budget; each builder refuses a bad range with a message that names it. The data are
small so that the file runs in seconds.
"""

import base64
import io
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from PIL import Image

from probdr_lite.data import load_mnist, toy_manifold
from probdr_lite.presentation.figures import elbo as fel
from probdr_lite.presentation.figures import neighbourhoods as feig
from probdr_lite.presentation.figures import unrolling as fun
from probdr_lite._threads import one_thread
from probdr_lite.graphs import default_bandwidth, knn_graph, laplacian
from probdr_lite.presentation.plotting import ScrubFigure, figure_data
from probdr_lite.probdr import fit_le_elbo, le_closed_form, step_sizes
from probdr_lite.presentation.widgets import range_slider

BUDGET = 2_000_000
#: The alt text the tests give a panel or a scrub (the chapters write their own).
ALT = "A figure that the test draws."


def _changed(before, after):
    return len(before) != len(after) or any(
        a.shape != b.shape or not np.allclose(a, b, equal_nan=True) for a, b in zip(before, after)
    )


def _check_scrub(out, n_frames):
    assert isinstance(out, ScrubFigure)
    html = out._repr_html_()
    assert 'type="range"' in html
    assert len(re.findall(r"frames\[\d+\] = \"data:image/png;base64,", html)) == n_frames
    assert 0 < out.n_bytes <= BUDGET


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def roll():
    return toy_manifold("swiss_roll", n=200, seed=0)


@pytest.fixture(scope="module")
def mnist_graph():
    Y, labels = load_mnist(n=80, stratified=True)
    return laplacian(knn_graph(Y.astype(np.float64), 8)), labels


# --- Laplacian Eigenmaps ----------------------------------------------------------

def test_range_slider_validates_the_triple():
    s = range_slider("k", (2, 9, 4), lower=1, upper=10, integer=True)
    assert (s.low, s.high, s.value, s.integer) == (2, 9, 4, True)
    with pytest.raises(TypeError, match=r"k must be a \(low, high, default\) triple"):
        range_slider("k", (2, 9))
    with pytest.raises(ValueError, match="k high must be in"):
        range_slider("k", (2, 11, 4), lower=1, upper=10, integer=True)
    with pytest.raises(ValueError, match="beta low must be in \\(0, inf\\)"):
        range_slider("beta", (0.0, 1.0, 0.5), positive=True)
    with pytest.raises(ValueError, match="low must be below high"):
        range_slider("beta", (1.0, 0.5, 0.7), positive=True)
    with pytest.raises(ValueError, match="value must be in"):
        range_slider("beta", (0.1, 0.5, 0.7), positive=True)


def test_neighbours_panel_sliders_change_the_figure(roll):
    Y, t = roll
    panel = feig.neighbours_panel(Y, t, n_neighbors=(5, 40, 8), alt=ALT)
    assert panel.fig._probdr_alt == ALT
    assert set(panel.sliders) == {"n_neighbors", "bandwidth"}
    t0 = default_bandwidth(Y, 8)
    assert panel.sliders["bandwidth"].value == pytest.approx(t0)
    before = figure_data(panel.fig)
    panel.sliders["n_neighbors"].value = 30
    after = figure_data(panel.fig)
    assert _changed(before, after)
    # the edge count in the title follows k: more neighbours, more edges
    edges = lambda: int(re.search(r"([\d,]+) edges", panel.fig.axes[0].get_title()).group(1).replace(",", ""))
    many = edges()
    panel.sliders["n_neighbors"].value = 5
    assert edges() < many
    before = figure_data(panel.fig)
    panel.sliders["bandwidth"].value = 50 * t0
    assert _changed(before, figure_data(panel.fig))
    assert panel.n_updates == 4


def test_neighbours_panel_reports_a_disconnected_graph_instead_of_warning(roll, recwarn):
    Y, t = roll
    panel = feig.neighbours_panel(Y, t, n_neighbors=(1, 20, 10), alt=ALT)
    panel.sliders["n_neighbors"].value = 1  # one neighbour each: the graph falls apart
    ax = panel.fig.axes[1]
    assert "falls apart" in ax.texts[0].get_text()
    assert ax.collections[0].get_offsets().shape[0] == 0
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_neighbours_panel_validates_its_ranges(roll):
    Y, t = roll
    with pytest.raises(ValueError, match=r"n_neighbors high must be in \[1, 199\]"):
        feig.neighbours_panel(Y, t, n_neighbors=(5, 400, 10), alt=ALT)
    with pytest.raises(ValueError, match="bandwidth low must be in"):
        feig.neighbours_panel(Y, t, bandwidth=(-1.0, 10.0, 1.0), alt=ALT)
    with pytest.raises(ValueError, match="t must have 200 entries, one per row of Y; got 199"):
        feig.neighbours_panel(Y, t[:-1], alt=ALT)
    with pytest.raises(ValueError, match="alt must be one sentence"):
        feig.neighbours_panel(Y, t, alt="no full stop")


def test_energy_figure_shows_energy_two_lambda(roll):
    Y, _ = roll
    W = knn_graph(Y[:, [0, 2]], 8)
    fig = feig.energy_figure(Y[:, [0, 2]], W, colour_index=5)
    titles = [ax.get_title() for ax in fig.axes]
    lam = float(re.search(r"= ([\d.]+)\n", titles[0]).group(1))
    energy = float(titles[0].rsplit("= ", 1)[1])
    assert energy == pytest.approx(2 * lam, rel=1e-2, abs=1e-4)  # E(v) = 2 lambda for an eigenvector
    with pytest.raises(ValueError, match="colour_index must be in"):
        feig.energy_figure(Y[:, [0, 2]], W, colour_index=1)
    with pytest.raises(ValueError, match="W must be a connected graph; it has 3 components"):
        feig.energy_figure(Y[:, [0, 2]], knn_graph(Y[:, [0, 2]], 6))


def test_laplacians_figure_validates(roll):
    Y, _ = roll
    fig = feig.laplacians_figure(Y[:12], knn_graph(Y[:12], 3))
    assert len(fig.axes) == 7  # the graph, three matrices and their colour bars
    with pytest.raises(ValueError, match=r"len\(Y\) must be in \[3, 40\]"):
        feig.laplacians_figure(Y, knn_graph(Y, 3))
    with pytest.raises(ValueError, match=r"W must be \(12, 12\) to match Y; got shape \(13, 13\)"):
        feig.laplacians_figure(Y[:12], knn_graph(Y[:13], 3))
    with pytest.raises(ValueError, match=r"Y\.shape\[1\] must be one of 2, 3; got 4"):
        feig.side_view(np.ones((5, 4)))


def test_compare_figure_agrees_with_sklearn(roll):
    Y, t = roll
    fig, rows = feig.compare_figure({"roll": (Y, t, False)}, n_neighbors=10)
    (row,) = rows
    assert row["agreement_same_graph"] > 0.999999  # same graph: the same eigenproblem
    assert row["agreement"] > 0.95  # the Belkin-Niyogi graph differs slightly from scikit-learn's
    assert row["cosines"].shape == (2,)
    with pytest.raises(TypeError, match="datasets must be a non-empty dict"):
        feig.compare_figure({})


# --- the ELBO --------------------------------------------------------------------

def test_beta_panel_threshold_and_shrinkage(mnist_graph):
    L, labels = mnist_graph
    panel = fel.beta_panel(L, labels, beta=(0.05, 2.0, 0.1), n_show=8)
    ax_spec, ax_bars, ax_x = panel.fig.axes[:3]
    _, lam = le_closed_form(L, 8, 0.1, centre=True, return_eigenvalues=True)
    heights = np.array([b.get_height() for b in ax_bars.patches])
    np.testing.assert_allclose(heights, np.clip(1 / lam - 0.1, 0, None), rtol=1e-8)  # s^2 = 1/lambda - beta
    before = figure_data(panel.fig)
    beta = float(np.sqrt(1 / lam[0] * 1 / lam[1]))  # threshold 1/beta between lambda_1 and lambda_2
    panel.sliders["beta"].value = beta
    assert _changed(before, figure_data(panel.fig))
    heights = np.array([b.get_height() for b in ax_bars.patches])
    assert heights[0] > 0 and np.all(heights[1:] == 0)  # only the first direction survives
    assert ax_spec.get_lines()[0].get_ydata()[0] == pytest.approx(1 / panel.sliders["beta"].value)
    assert np.allclose(ax_x.collections[0].get_offsets()[:, 1], 0)  # the second coordinate collapsed


def test_beta_panel_validates(mnist_graph):
    L, labels = mnist_graph
    with pytest.raises(ValueError, match="beta low must be in"):
        fel.beta_panel(L, labels, beta=(0.0, 1.0, 0.5))
    with pytest.raises(ValueError, match="value must be in"):
        fel.beta_panel(L, labels, beta=(0.1, 1.0, 2.0))
    with pytest.raises(ValueError, match="labels must have shape"):
        fel.beta_panel(L, labels[:-1])


def test_static_elbo_figures(mnist_graph):
    L, labels = mnist_graph
    fig = fel.elbo_terms_figure(L, 0.3, directions=(1, 6))
    assert len(fig.axes) == 2
    # the ELBO curve (black) peaks at s* = sqrt(1/lambda - beta) for a surviving direction
    _, lam = le_closed_form(L, 1, 0.3, centre=True, return_eigenvalues=True)
    s, elbo = fig.axes[0].get_lines()[2].get_data()
    assert s[np.argmax(elbo)] == pytest.approx(np.sqrt(1 / lam[0] - 0.3), abs=2 * (s[1] - s[0]))
    fig = fel.trap_figure(L, 0.3, gammas=(0.01,), title="A raw Laplacian: no optimum")
    raw = fig.axes[0].get_lines()[0].get_ydata()
    assert np.all(np.diff(raw) > 0)  # a raw Laplacian: the ELBO keeps growing along 1
    assert fig.axes[0].get_title() == "A raw Laplacian: no optimum"  # the caller's title
    with pytest.raises(ValueError, match="gammas entry must be in"):
        fel.trap_figure(L, 0.3, gammas=(5.0,), title="A raw Laplacian: no optimum")
    with pytest.raises(ValueError, match=r"len\(directions\) must be in \[1, 4\]"):
        fel.elbo_terms_figure(L, 0.3, directions=())
    Y, _ = load_mnist(n=80, stratified=True)
    Yc = Y - Y.mean(axis=0)
    fig = fel.pca_figure(Yc @ Yc.T / Y.shape[1], labels, sigma2=0.5)
    assert fig.axes[1].collections[0].get_offsets().shape == (80, 2)
    with pytest.raises(ValueError, match="sigma2 must be in"):
        fel.pca_figure(Yc @ Yc.T, labels, sigma2=0.0)


# --- unrolled inference ----------------------------------------------------------

def test_eta_panel_shows_slow_stable_and_divergent_steps(mnist_graph):
    L, labels = mnist_graph
    marks = step_sizes(L, 0.3)
    assert marks["safe"] < marks["divergent"]
    panel = fun.eta_panel(L, labels, beta=0.3, eta=(1e-3, 0.2, 0.8 * marks["divergent"]), n_steps=300, alt=ALT)
    assert panel.fig._probdr_alt == ALT
    title = lambda: panel.fig.axes[0].get_title()
    assert "converged" in title()
    before = figure_data(panel.fig)
    panel.sliders["eta"].value = 1.5 * marks["divergent"]
    assert _changed(before, figure_data(panel.fig))
    assert "diverged at step" in title()
    panel.sliders["eta"].value = 1.2e-3
    assert "too slow" in title()
    gram = panel.fig.axes[1].get_lines()[0].get_ydata()
    assert np.all(np.isfinite(gram)) and gram[-1] > 1e-2


def test_step_sizes_predict_where_gradient_ascent_diverges(mnist_graph):
    """The linearised threshold 2 / (lambda_max - lambda_1) splits converging from diverging runs."""
    L, _ = mnist_graph
    marks = step_sizes(L, 0.3)
    assert marks["safe"] < 2 / marks["lambda_max"] < marks["divergent"]
    below = fit_le_elbo(L, 2, 0.3, eta=0.97 * marks["divergent"], n_steps=3000, centre=True)
    above = fit_le_elbo(L, 2, 0.3, eta=1.03 * marks["divergent"], n_steps=3000, centre=True)
    assert not below.diverged and below.gram_error[-1] < 1e-6
    assert above.diverged
    # near X*, the error shrinks by 1 - eta * slowest per step; with beta = 0.2 the slowest mode
    # is the tilt of column 2 towards eigenvector 3, which a random start excites
    marks = step_sizes(L, 0.2)
    eta = marks["safe"]
    gram = fit_le_elbo(L, 2, 0.2, eta=eta, n_steps=1200, centre=True).gram_error
    window = np.flatnonzero((gram < 1e-3) & (gram > 1e-6))
    rate = -np.polyfit(window, np.log(gram[window]), 1)[0]
    assert rate == pytest.approx(-np.log(1 - eta * marks["slowest"]), rel=1e-3)


def test_eta_panel_validates(mnist_graph):
    L, labels = mnist_graph
    with pytest.raises(ValueError, match="eta low must be in"):
        fun.eta_panel(L, labels, eta=(-0.1, 0.1, 0.01), alt=ALT)
    with pytest.raises(ValueError, match="low must be below high"):
        fun.eta_panel(L, labels, eta=(0.1, 0.01, 0.05), alt=ALT)
    with pytest.raises(ValueError, match="n_steps must be in"):
        fun.eta_panel(L, labels, n_steps=0, alt=ALT)


def test_steps_figure_and_scrub(mnist_graph):
    L, labels = mnist_graph
    fit = fit_le_elbo(L, 2, 0.3, eta=0.02, n_steps=60, centre=True, store_every=1)
    fig = fun.steps_figure(fit, labels, steps=(0, 10, 60))
    assert len(fig.axes) == 4
    np.testing.assert_allclose(fig.axes[2].collections[0].get_offsets(), fit.iterates[60])
    out = fun.steps_scrub(fit, labels, [0, 5, 30, 60], dpi=40, alt=ALT)
    _check_scrub(out, 4)
    first = re.search(r'frames\[0\] = "data:image/png;base64,([^"]+)"', out._repr_html_()).group(1)
    assert Image.open(io.BytesIO(base64.b64decode(first))).text["Description"] == ALT  # the frames' alt text
    coarse = fit_le_elbo(L, 2, 0.3, eta=0.02, n_steps=60, centre=True, store_every=20)
    with pytest.raises(ValueError, match=r"steps \[10\] were not stored"):
        fun.steps_figure(coarse, labels, steps=(0, 10, 60))
    with pytest.raises(TypeError, match="fit must be the LEFit"):
        fun.steps_scrub(fit.X, labels, [0, 1], alt=ALT)


def test_builders_run_on_one_blas_thread():
    from threadpoolctl import threadpool_info

    seen = one_thread(lambda: [p["num_threads"] for p in threadpool_info()])()
    assert seen and all(k == 1 for k in seen)
