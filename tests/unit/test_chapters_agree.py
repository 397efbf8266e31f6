"""Chapters 5 (MNIST at initialisation) and 7 (the objections) print the same number for the same quantity.

Both score the paper's block on the same stratified 2,000 MNIST test images with the same W_E; chapter 5 runs
float32 latents through ``mnist_blocks`` and ``metrics.layer_metrics``, chapter 7 float64 latents through
``objections.mnist_paths`` and ``objections.metrics_by_variant`` (which scores through ``metrics.layer_metrics``). One metrics pipeline and one settings object
(``metrics.METRICS``) must make the two agree far below the three decimals the chapters print.
"""

import pytest

from probdr_lite import objections as O
from probdr_lite.data import load_mnist
from probdr_lite.mnist_blocks import PAPER, mnist_latents, run_blocks
from probdr_lite.metrics import METRIC_NAMES, METRICS, layer_metrics


@pytest.fixture(scope="module")
def both_chapters():
    X0, labels5 = mnist_latents(n=2000)
    Xs = run_blocks(X0, PAPER.n_layers, PAPER.kappa, PAPER.eta, PAPER.beta, "paper")
    ch5 = layer_metrics([Xs[0], Xs[-1]], labels5, variant="paper")
    images, labels7 = load_mnist(n=2000, stratified=True)
    paths = O.mnist_paths(images, ("paper",), PAPER.n_layers, PAPER.kappa, PAPER.eta, PAPER.beta, PAPER.d_q)
    ch7 = O.metrics_by_variant(paths, labels7, layers=(0, PAPER.n_layers))
    return ch5, ch7


@pytest.mark.parametrize("metric", METRIC_NAMES)
def test_chapters_5_and_7_print_the_same_numbers(both_chapters, metric):
    ch5, ch7 = both_chapters
    for i in (0, 1):
        assert ch7["paper"][metric][i] == pytest.approx(ch5[i][metric], abs=1e-4), (metric, ch5[i]["layer"])


def test_objections_use_the_book_wide_settings():
    # the k-means restarts were 2 in chapter 7 and 4 in chapter 5 before there was one settings object
    assert METRICS.n_init == 4
    import inspect

    assert inspect.signature(O.metrics_by_variant).parameters["settings"].default is METRICS
