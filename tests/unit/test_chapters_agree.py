"""The MNIST chapter and the objections chapter print the same number for the same quantity.

Both score the paper's block on the same stratified 2,000 MNIST test images with the same W_E; the MNIST chapter
runs float32 latents through ``chapters.mnist_at_init`` and ``metrics.layer_metrics``, the objections chapter float64
latents through ``objections.mnist_paths`` and ``objections.metrics_by_variant`` (which scores through
``metrics.layer_metrics``). One metrics pipeline and one settings object (``metrics.METRICS``) must make the two
agree far below the three decimals the chapters print.
"""

import pytest

from probdr_lite.chapters import objections as O
from probdr_lite.data import load_mnist
from probdr_lite.chapters.mnist_at_init import PAPER, layer_rows, mnist_latents, run_blocks
from probdr_lite.metrics import METRIC_NAMES, METRICS


@pytest.fixture(scope="module")
def both_chapters():
    X0, labels_mnist = mnist_latents(n=2000)
    Xs = run_blocks(X0, PAPER.n_layers, PAPER.kappa, PAPER.eta, PAPER.beta, "paper")
    mnist = layer_rows([Xs[0], Xs[-1]], labels_mnist, variant="paper")  # what the MNIST chapter's tables print
    images, labels_objections = load_mnist(n=2000, stratified=True)
    paths = O.mnist_paths(images, ("paper",), PAPER.n_layers, PAPER.kappa, PAPER.eta, PAPER.beta, PAPER.d_q)
    objections = O.metrics_by_variant(paths, labels_objections, layers=(0, PAPER.n_layers))
    return mnist, objections


@pytest.mark.parametrize("metric", METRIC_NAMES)
def test_mnist_and_objections_chapters_print_the_same_numbers(both_chapters, metric):
    mnist, objections = both_chapters
    for i in (0, 1):
        assert objections["paper"][metric][i] == pytest.approx(mnist[i][metric], abs=1e-4), (metric, mnist[i]["layer"])


def test_objections_use_the_book_wide_settings():
    # the k-means restarts were 2 in the objections chapter and 4 in the MNIST chapter before there was one settings
    # object
    assert METRICS.n_init == 4
    import inspect

    assert inspect.signature(O.metrics_by_variant).parameters["settings"].default is METRICS
