"""The MNIST chapter's per-layer tables are unchanged by the move of the metrics pipeline into probdr_lite.metrics.

``tests/fixtures/mnist_tables.json`` holds the numbers the MNIST chapter prints (``layer_table`` of the paper's
block on all 10,000 images and ``metrics_table`` of the five variants on 2,000), computed by
``tests/fixtures/mnist_tables.py`` on main before the move (commit 03b59d8, as ``chapter5_table.py``), and
recomputed when the chapter's NMI of k-means became its mean over the k-means seeds 0-4 (issue 36): that changed
the ``variants`` rows' NMI only (the other numbers equal to 1e-4); the ``full`` rows are still
``metrics.layer_metrics`` with seed 0, whose NMI the chapter now prints as a mean over seeds instead. The same
script, run on this code, must give the same numbers: the settings (5 neighbours, 5 folds, at most 2,000 points for
the silhouette, 4 k-means restarts) and the seeds are the chapter's.

"The same" is as far as the numbers are defined on another CPU. The latents are float32 after up to eight blocks,
whose rounding follows the CPU's vector path (MKL, oneDNN and OpenBLAS pick their kernels by CPU), so:

- the silhouette and the between/within ratio are continuous in the latents. The ratio, of two positive sums, is
  equal to a relative 1e-5 (about 80 float32 units in the last place, for eight blocks that each round every
  coordinate; seen here: at most 1.2e-6 between the default and AVX-512 paths and float64). The silhouette is a
  mean of (b - a) / max(a, b) over distances, so its round-off is relative to the distances, not to its own value,
  which can be near 0 (5e-4 for the diffusion block at layer 8): equal to 1e-5 absolute (seen: 1.2e-7);
- k-NN accuracy and k-means NMI count images: an image whose k-th and (k+1)-th neighbours, or whose two nearest
  centres, tie within round-off can change sides, and one image moves the accuracy by 1/n and the NMI by about
  log(n)/n. Up to three such images are allowed (seen: one image of 10,000 on an AVX-512 CPU).
"""

import importlib.util
import json
import math
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _script():
    spec = importlib.util.spec_from_file_location("mnist_tables", FIXTURES / "mnist_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mnist_chapter_tables_are_unchanged():
    before = json.loads((FIXTURES / "mnist_tables.json").read_text())
    after = _script().mnist_chapter_rows()
    assert set(after) == set(before) == {"full", "variants"}
    for table in before:
        assert len(after[table]) == len(before[table])
        for old, new in zip(before[table], after[table]):
            assert {k: new[k] for k in ("variant", "n", "layer")} == {k: old[k] for k in ("variant", "n", "layer")}
            n = old["n"]
            tolerance = {"knn_accuracy": pytest.approx(old["knn_accuracy"], abs=3 / n + 1e-12),
                         "kmeans_nmi": pytest.approx(old["kmeans_nmi"], abs=3 * math.log(n) / n),
                         "silhouette": pytest.approx(old["silhouette"], abs=1e-5),
                         "between_within": pytest.approx(old["between_within"], rel=1e-5)}
            for metric, expected in tolerance.items():
                assert new[metric] == expected, (table, old["variant"], old["layer"], metric)
