"""The transformer-block and MNIST chapters: the toy on the LayerNorm sphere, the heat-kernel reading of attention,
the MNIST metrics, the slider panels and the panel benchmark (run small)."""

import importlib.util
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from scipy.linalg import expm  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.metrics import normalized_mutual_info_score, silhouette_score  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

from probdr_lite.presentation.figures import block as B  # noqa: E402
from probdr_lite.chapters import mnist_at_init as MB  # noqa: E402
from probdr_lite.presentation.figures import mnist as M  # noqa: E402
from probdr_lite._threads import single_threaded  # noqa: E402
from probdr_lite.metrics import METRIC_NAMES, layer_metrics  # noqa: E402
from probdr_lite.presentation.plotting import figure_data  # noqa: E402
from probdr_lite.graphs import heat_kernel_attention  # noqa: E402
from probdr_lite.unrolled import CHAPTER_VARIANTS, attention_matrix, euler_diffusion_errors, layer_norm, unroll  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _changed(before, after):
    return len(before) != len(after) or any(
        a.shape != b.shape or not np.allclose(a, b, equal_nan=True) for a, b in zip(before, after)
    )


@pytest.fixture(scope="module")
def toy():
    return B.make_toy(n=120, d_q=8, seed=1)


@pytest.fixture(scope="module")
def small_mnist():
    return MB.mnist_latents(n=300, d_q=32)


# ---------------------------------------------------------------------------------------------------------------------
# The transformer-block chapter: the toy and the checks


def test_lift_puts_the_toy_on_the_layernorm_sphere_and_unlift_recovers_it(toy):
    X0 = toy.X0.numpy()
    np.testing.assert_allclose(X0.sum(1), 0, atol=1e-12)  # 1^T x = 0
    np.testing.assert_allclose((X0**2).sum(1), toy.d_q, rtol=1e-12)  # ||x||^2 = d_q
    np.testing.assert_allclose(layer_norm(toy.X0).numpy(), X0, atol=1e-12)  # a fixed point of Pi
    np.testing.assert_allclose(toy.unlift(X0), toy.Y, atol=1e-12)


@pytest.mark.parametrize("variant", CHAPTER_VARIANTS)
def test_every_variant_keeps_the_latents_in_the_span_of_the_lift(toy, variant):
    """The claim that lets the chapter draw 16-D latents in the plane without distortion."""
    X8 = unroll(toy.X0, 8, 100.0, 0.4, 1.0, variant)[-1].numpy()
    residual = X8 - (X8 @ toy.Q.T) @ toy.Q
    assert np.abs(residual).max() < 1e-10
    assert np.isfinite(toy.unlift(X8)).all()


def test_softmax_attention_is_the_random_walk_of_a_heat_kernel_graph():
    """attention_matrix (softmax of logits) against knn_graph's heat kernel with self-loops (no softmax)."""
    gen = torch.Generator().manual_seed(3)
    X = layer_norm(torch.randn(40, 12, generator=gen, dtype=torch.float64))
    for kappa, beta in [(1.0, 0.0), (30.0, 1.0), (200.0, 5.0)]:
        A = attention_matrix(X, kappa, beta).numpy()
        A_graph = heat_kernel_attention(X, kappa, beta)
        np.testing.assert_allclose(A_graph.sum(1), 1.0, atol=1e-12)
        np.testing.assert_allclose(A_graph, A, atol=1e-12, rtol=1e-9)


def test_euler_errors_are_first_order_and_agree_with_a_direct_recomputation():
    rng = np.random.default_rng(0)
    W = rng.uniform(size=(15, 15))
    A = W / W.sum(1, keepdims=True)
    X = rng.normal(size=(15, 3))
    rows = euler_diffusion_errors(A, X, tau=1.0, n_steps=(1, 4, 16, 64))
    errors = [r["relative_error"] for r in rows]
    assert all(a > b for a, b in zip(errors, errors[1:]))
    assert 3.0 < errors[2] / errors[3] < 5.0  # h divided by 4, error divided by about 4: first order
    exact = expm(-(np.eye(15) - A)) @ X
    one_step = X + (A - np.eye(15)) @ X
    assert errors[0] == pytest.approx(np.linalg.norm(one_step - exact) / np.linalg.norm(exact))


def test_variant_panel_sliders_redraw_the_figure(toy):
    panel = B.variant_panel(toy)
    before = figure_data(panel.fig)
    panel.sliders["kappa"].value = 20.0  # inside TOY_SETTINGS' range (14.1 to 1000)
    assert panel.n_updates == 2
    middle = figure_data(panel.fig)
    assert _changed(before, middle)
    panel.sliders["depth"].value = 0
    # at depth 0 every variant shows the toy itself
    for pts in [ax.collections[1] for ax in panel.fig.axes]:
        np.testing.assert_allclose(pts.get_offsets(), toy.Y, atol=1e-12)
    plt.close(panel.fig)


def test_variant_panel_works_at_every_corner_of_its_sliders(toy):
    """Finite below eta = 1/2; above it a step can overshoot past the equator, and the title then says so."""
    fig, update = B.variant_figure(toy, n_steps=4)
    for kappa in (1.0, 1000.0):
        for eta in (0.02, 0.5, 1.0):
            for beta in (0.1, 10.0):
                update(kappa, eta, beta, 16)
                lost = sum(int(np.isnan(np.asarray(ax.collections[1].get_offsets())[:, 0]).sum()) for ax in fig.axes)
                if eta <= 0.5:
                    assert lost == 0, (kappa, eta, beta)
                assert (f"{lost} points overshot" in fig._suptitle.get_text()) == (lost > 0)
    plt.close(fig)


def test_causal_mask_makes_A_lower_triangular_and_pins_the_first_point(toy):
    A = attention_matrix(toy.X0, 100.0, 1.0, mask="causal").numpy()
    assert np.all(np.triu(A, 1) == 0) and A[0, 0] == 1.0
    path = B.toy_paths(toy, 6, 100.0, 0.4, 1.0, variants=("diffusion",), mask="causal")["diffusion"]
    np.testing.assert_allclose(path[:, 0], np.broadcast_to(path[0, 0], (7, 2)), atol=1e-12)  # only itself
    fig = B.mask_figure(toy, n_steps=3)
    masked = np.asarray(fig.axes[1].get_images()[0].get_array())
    assert np.all(np.triu(masked, 1) <= 1e-6)  # the floor of the log colour scale
    assert np.any(np.triu(np.asarray(fig.axes[0].get_images()[0].get_array()), 1) > 1e-3)
    plt.close(fig)


def test_toy_bad_input_raises_clear_errors(toy):
    with pytest.raises(ValueError, match="Y must have 2 columns"):
        B.lift_toy(np.zeros((5, 3)), np.zeros(5, dtype=int))
    with pytest.raises(ValueError, match="labels must be 5 non-negative integers"):
        B.lift_toy(np.ones((5, 2)), np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="d_q must be in"):
        B.lift_toy(np.ones((5, 2)), np.zeros(5, dtype=int), d_q=3)
    with pytest.raises(ValueError, match="variant must be one of"):
        B.toy_paths(toy, 2, 30.0, 0.4, 1.0, variants=("plain",))
    with pytest.raises(ValueError, match="non-empty list"):
        B.toy_paths(toy, 2, 30.0, 0.4, 1.0, variants=())
    with pytest.raises(TypeError, match=r"toy must be the LiftedToy returned by probdr_lite\.chapters\.transformer_block\.make_toy; "
                                        r"got Tensor"):
        B.toy_paths(toy.X0, 2, 30.0, 0.4, 1.0)
    with pytest.raises(ValueError, match="d_q = 8 columns"):
        toy.unlift(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="no zero rows"):
        heat_kernel_attention(np.zeros((3, 2)), 1.0)
    with pytest.raises(ValueError, match="X must have n = 3 rows"):
        euler_diffusion_errors(np.eye(3), np.ones((4, 2)))
    with pytest.raises(ValueError, match="kappa must be in"):
        B.variant_figure(toy)[1](-1.0, 0.4, 1.0)


# ---------------------------------------------------------------------------------------------------------------------
# The MNIST chapter: metrics per layer against sklearn directly, tables, panels, sweeps


def test_layer_metrics_match_an_independent_recomputation(small_mnist):
    X0, labels = small_mnist
    rows = layer_metrics(MB.run_blocks(X0, n_layers=3), labels, variant="paper")
    assert [r["layer"] for r in rows] == [0, 1, 2, 3] and all(r["n"] == 300 for r in rows)
    with single_threaded():  # k-means is sensitive to the last bit of X, and one thread fixes the summation order
        path = unroll(X0, 3, 30.0, 0.4, 1.0, "paper")  # straight from unrolled, not through the figures module
        for row, X in zip(rows, path):
            X = X.numpy().astype(np.float64)
            folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
            knn = cross_val_score(KNeighborsClassifier(n_neighbors=5), X, labels, cv=folds).mean()
            pred = KMeans(n_clusters=10, n_init=4, random_state=0).fit_predict(X)
            nmi = normalized_mutual_info_score(labels, pred)
            centroids = np.stack([X[labels == c].mean(0) for c in range(10)])
            within = np.mean([np.linalg.norm(X[i] - centroids[labels[i]]) for i in range(len(X))])
            between = np.mean([np.linalg.norm(centroids[a] - centroids[b]) for a in range(10) for b in range(a + 1, 10)])
            assert row["knn_accuracy"] == pytest.approx(knn, abs=1e-12)
            assert row["kmeans_nmi"] == pytest.approx(nmi, abs=1e-6)
            assert row["silhouette"] == pytest.approx(silhouette_score(X, labels), abs=1e-5)
            assert row["between_within"] == pytest.approx(between / within, rel=1e-6)


def test_variant_metrics_is_a_tidy_table_that_starts_from_one_X0(small_mnist):
    X0, labels = small_mnist
    rows, paths = MB.variant_metrics(X0, labels, variants=("attention", "diffusion", "exact"), n_layers=2,
                                    return_latents=True)
    assert len(rows) == 3 * 3
    assert {tuple(sorted(r)) for r in rows} == {tuple(sorted(("variant", "n", "layer", *METRIC_NAMES, *MB.NMI_KEYS)))}
    first = [r["between_within"] for r in rows if r["layer"] == 0]
    assert max(first) == min(first)  # the same X_0 for every variant
    np.testing.assert_allclose(paths["exact"][2], unroll(X0, 2, 30.0, 0.4, 1.0, "exact")[-1].numpy(), atol=1e-5)
    assert MB.pick(rows, "between_within", variant="exact", layer=2) == rows[8]["between_within"]
    assert MB.pick(rows, "between_within", variant="exact") == [r["between_within"] for r in rows[6:9]]
    with pytest.raises(ValueError, match="no rows for variant 'paper'"):
        MB.pick(rows, "between_within", variant="paper", layer=0)
    with pytest.raises(ValueError, match="several n"):
        MB.pick(rows + [dict(rows[0], n=10)], "between_within", variant="attention", layer=0)
    table = M.metrics_table(rows, layers=(0, 2), metrics=("between_within",))
    html = table._repr_html_()
    assert html.count("<tr>") == 4 and "exact (n = 300)" in html
    value = next(r["between_within"] for r in rows if r["variant"] == "exact" and r["layer"] == 2)
    assert f"{value:.3f}" in html and f"{value:.3f}" in str(table)
    assert str(table).startswith("| variant |")
    per_layer = M.layer_table([r for r in rows if r["variant"] == "exact"], metrics=("between_within",))
    assert str(per_layer).splitlines()[-1] == f"| 2 | {value:.3f} |"
    with pytest.raises(ValueError, match="one variant and one n"):
        M.layer_table(rows)
    # the NMI's range over the k-means seeds, the two numbers the chapter's rule compares, as a last column
    exact = [r for r in rows if r["variant"] == "exact"]
    ranged = M.layer_table(exact, metrics=("kmeans_nmi",), nmi_range=True)
    assert ranged.header[-1] == "NMI runs, lowest to highest"
    assert ranged.body[2][-1] == f"{exact[2]['kmeans_nmi_min']:.3f} to {exact[2]['kmeans_nmi_max']:.3f}"
    with pytest.raises(ValueError, match="nmi_range needs rows that hold the NMI's range"):
        M.layer_table([{k: v for k, v in r.items() if k not in MB.NMI_KEYS} for r in exact], nmi_range=True)
    for builder in (M.metrics_table, M.layer_table, M.metric_lines_figure):
        with pytest.raises(ValueError, match=r"rows must be the list returned by probdr_lite\.metrics\.layer_metrics; "
                                             r"got an empty list"):
            builder([], metrics=("between_within",))
    fig = M.metric_lines_figure(rows, metrics=("between_within",))
    assert len(fig.axes[0].get_lines()) == 3
    plt.close(fig)
    # the NMI with its spread over the k-means seeds: one error bar of one standard deviation per layer and variant
    fig = M.metric_lines_figure(rows, metrics=("kmeans_nmi",))
    bars = [c for c in fig.axes[0].containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    assert len(bars) == 3
    exact = [r for r in rows if r["variant"] == "exact"]
    segments = bars[-1].lines[2][0].get_segments()
    np.testing.assert_allclose([seg[1, 1] - seg[0, 1] for seg in segments], [2 * r["kmeans_nmi_sd"] for r in exact])
    np.testing.assert_allclose([seg[:, 1].mean() for seg in segments], [r["kmeans_nmi"] for r in exact])
    plt.close(fig)


def test_step_family_figure_marks_each_block_at_its_step():
    steps = {"attention": 0.8, "diffusion": 4.0, "paper": 3.88}
    grid = sorted({0.1, 1.0, 10.0} | set(steps.values()))
    rows = {s: {"knn_accuracy": 0.9 + s / 100, "between_within": 1 + s} for s in grid}
    fig = M.step_family_figure(rows, steps, metrics=("knn_accuracy", "between_within"))
    assert len(fig.axes) == 2
    ax = fig.axes[1]
    curve = ax.get_lines()[0]
    assert list(curve.get_xdata()) == grid and list(curve.get_ydata()) == [1 + s for s in grid]
    markers = {float(line.get_xdata()[0]): float(line.get_ydata()[0]) for line in ax.get_lines()[1:]}
    assert markers == {s: 1 + s for s in steps.values()}
    plt.close(fig)
    for r in rows.values():  # the NMI of each step with its spread over the k-means seeds
        r.update(kmeans_nmi=0.5, kmeans_nmi_sd=0.01 * len(r))
    fig = M.step_family_figure(rows, steps, metrics=("kmeans_nmi",))
    bars = [c for c in fig.axes[0].containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    assert len(bars) == 1 + len(steps)  # the curve and each block's marker
    plt.close(fig)


def test_mnist_panel_sliders_change_what_is_drawn(small_mnist):
    X0, labels = small_mnist
    panel = M.mnist_panel(X0, labels, n_layers=4, depth=4)
    before = figure_data(panel.fig)
    panel.sliders["kappa"].value = 300.0
    after_kappa = figure_data(panel.fig)
    assert _changed(before, after_kappa)
    panel.sliders["depth"].value = 0
    np.testing.assert_allclose(panel.view.points.get_offsets(), X0.numpy()[:, :2], atol=1e-6)
    assert _changed(after_kappa, figure_data(panel.fig))
    ratios = panel.view.ratio_line.get_ydata()
    assert len(ratios) == 5 and ratios[0] == pytest.approx(panel.view.ratio_at_0, rel=1e-6)
    assert panel.n_updates == 3
    for name, s in MB.SLIDERS.items():  # the ranges defined once in the chapter's settings
        assert (panel.specs[name].low, panel.specs[name].high, panel.specs[name].log) == (s["low"], s["high"], s["log"])
    for name in ("eta", "beta"):
        spec = panel.specs[name]
        for value in (spec.low, spec.high):
            panel.sliders[name].value = value
            assert np.isfinite(panel.view.points.get_offsets()).all()
    plt.close(panel.fig)


def test_sweep_cells_equal_a_direct_run(small_mnist):
    from probdr_lite.metrics import kmeans_nmi, knn_accuracy

    X0, labels = small_mnist
    kappas, etas = (3.0, 30.0), (0.2,)
    result = MB.sweep(X0, labels, kappas, etas, n_layers=2)
    assert result["knn_accuracy"].shape == (1, 2)
    with single_threaded():
        X = unroll(X0.double(), 2, 30.0, 0.2, 1.0, "paper")[-1].numpy()  # the sweep runs in float64
        assert result["knn_accuracy"][0, 1] == pytest.approx(knn_accuracy(X, labels, n_neighbors=5, cv=5))
        nmis = [kmeans_nmi(X, labels, seed=s, n_init=4) for s in range(5)]  # over 5 k-means seeds
        assert result["kmeans_nmi"][0, 1] == pytest.approx(np.mean(nmis))
        assert result["kmeans_nmi_sd"][0, 1] == pytest.approx(np.std(nmis, ddof=1))
        assert result["knn_accuracy@0"] == pytest.approx(knn_accuracy(X0.numpy(), labels, n_neighbors=5, cv=5))
        nmi0 = [kmeans_nmi(X0.double().numpy(), labels, seed=s, n_init=4) for s in range(5)]
        assert result["kmeans_nmi_sd@0"] == pytest.approx(np.std(nmi0, ddof=1))
    fig = M.sweep_figure(result, kappas, etas, n_layers=2)
    assert len(fig.axes) == 4  # two heat maps and their colour bars
    knn_cells = [t.get_text() for t in fig.axes[0].texts]
    nmi_cells = [t.get_text() for t in fig.axes[1].texts]  # the axes: two heat maps, then their colour bars
    assert knn_cells[1] == f"{result['knn_accuracy'][0, 1]:.2f}"
    assert nmi_cells[1] == f"{result['kmeans_nmi'][0, 1]:.2f}\n±{result['kmeans_nmi_sd'][0, 1]:.2f}"
    assert f"{result['kmeans_nmi@0']:.2f} ± {result['kmeans_nmi_sd@0']:.2f}" in fig.axes[1].get_title()
    plt.close(fig)


def test_settings_table_says_which_settings_the_paper_left_open():
    from dataclasses import fields

    names = [f.name for f in fields(MB.PAPER)]
    md = str(M.settings_table(meanings={k: f"meaning of {k}" for k in names}))
    assert "| kappa | 30.0 | meaning of kappa |" in md and "| beta | 1.0 | meaning of beta |" in md
    sources = [line.rsplit("|", 2)[-2].strip() for line in md.splitlines()[2:]]
    assert sources.count("paper") == 4 and sources.count("chosen here") == 4
    with pytest.raises(ValueError, match="meanings must be a dict of strings with exactly the keys"):
        M.settings_table(meanings={k: "x" for k in names[1:]})


def test_mnist_bad_input_raises_clear_errors(small_mnist):
    X0, labels = small_mnist
    with pytest.raises(ValueError, match="n must be in"):
        MB.mnist_latents(n=20_000)
    with pytest.raises(ValueError, match="labels must be a 1-D array of length n = 300"):
        layer_metrics([X0], labels[:10])
    with pytest.raises(ValueError, match="every layer must have the shape"):
        layer_metrics([X0, X0[:10]], labels)
    with pytest.raises(ValueError, match="non-empty list of"):
        layer_metrics(X0, labels)
    with pytest.raises(ValueError, match="metric must be one of"):
        layer_metrics([X0], labels, metrics=("accuracy",))
    with pytest.raises(ValueError, match="variant must be one of"):
        MB.variant_metrics(X0, labels, variants=("softmax",))
    with pytest.raises(ValueError, match="no layer 8"):
        M.metrics_table(layer_metrics([X0], labels, metrics=("between_within",)), metrics=("between_within",))
    with pytest.raises(ValueError, match="at least one value"):
        MB.sweep(X0, labels, (), (0.4,))
    with pytest.raises(ValueError, match="depth must be in"):
        M.MnistPanel(X0, labels, n_layers=2).update(depth=5)
    with pytest.raises(ValueError, match="Xn must have the shape of X0"):
        M.before_after_figure(X0, X0[:5], labels)
    plt.close("all")


# ---------------------------------------------------------------------------------------------------------------------
# The panel benchmark, run small (no timing assertions)


def test_panel_benchmark_runs_small():
    spec = importlib.util.spec_from_file_location("bench_panel", ROOT / "benchmarks" / "bench_panel.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.main(n=200, n_updates=5, n_layers=2, quiet=True)
    assert result["updates_run"] == 5  # every move changed a value, so every move ran the update
    assert result["ratio"] == pytest.approx(result["median_ms"] / 150.0)
    assert math.isfinite(result["matmul_floor_ms"]) and result["matmul_floor_ms"] > 0
    with pytest.raises(ValueError, match="n_updates must be at least 1"):
        bench.main(n=200, n_updates=0, quiet=True)
