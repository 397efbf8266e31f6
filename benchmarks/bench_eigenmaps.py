"""Benchmark: Laplacian Eigenmaps on MNIST against scikit-learn's SpectralEmbedding, on the same graph.

Builds one k-NN graph W of n MNIST test images (``knn_graph(Y, k - 1, symmetrize="mean")``, the graph
scikit-learn's ``affinity="nearest_neighbors"`` builds with k neighbours) and embeds it twice, timing each (best of
``repeats``, both in this one run):

- ours: :func:`probdr_lite.eigenmaps.embed_graph` (shift-invert Lanczos on L_sym);
- scikit-learn: ``SpectralEmbedding(affinity="precomputed").fit_transform(W)``.

It prints the time ratio ours / scikit-learn (target <= 1) and the cosines of the principal angles between the two
embeddings (1 = the same subspace), so that a faster answer is also checked to be the same answer. Never asserts
anything about time.

Usage: ``python benchmarks/bench_eigenmaps.py`` (all 10,000 test images), ``--n 2000`` for a quick run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

try:
    from probdr_lite.eigenmaps import embed_graph
except ImportError:  # run as a script from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from probdr_lite.eigenmaps import embed_graph
from probdr_lite.data import load_mnist  # noqa: E402
from probdr_lite.graphs import knn_graph  # noqa: E402
from probdr_lite.metrics import subspace_agreement  # noqa: E402


def _best(fn, repeats):
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(n: int = 10_000, n_neighbors: int = 10, n_components: int = 2, repeats: int = 3, seed: int = 0) -> dict:
    """Time both embeddings of one graph; print and return the ratio and their agreement."""
    from sklearn.manifold import SpectralEmbedding

    Y = load_mnist(n=None if n >= 10_000 else n, stratified=n < 10_000)[0]
    W = knn_graph(Y, n_neighbors - 1, symmetrize="mean")
    t_ours, ours = _best(lambda: embed_graph(W, n_components=n_components, random_state=seed), repeats)
    sk = SpectralEmbedding(n_components=n_components, affinity="precomputed", random_state=seed)
    t_sk, theirs = _best(lambda: sk.fit_transform(W), repeats)
    cos = subspace_agreement(ours, theirs)
    result = {"n": Y.shape[0], "n_neighbors": n_neighbors, "ours_s": t_ours, "sklearn_s": t_sk,
              "ours_over_sklearn": t_ours / t_sk, "cosines": cos.tolist()}
    print(f"Laplacian Eigenmaps of {Y.shape[0]:,} MNIST images, {n_neighbors}-NN graph "
          f"({W.nnz:,} stored weights), q = {n_components}, best of {repeats}:")
    print(f"  ours (embed_graph) {t_ours:.3f} s, scikit-learn SpectralEmbedding {t_sk:.3f} s")
    print(f"  ours / scikit-learn = {t_ours / t_sk:.2f}   (target <= 1)")
    print(f"  agreement of the two embeddings (cosines of principal angles): {np.round(cos, 6).tolist()}")
    return result


def _parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--n-neighbors", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    return p


if __name__ == "__main__":
    a = _parser().parse_args()
    main(n=a.n, n_neighbors=a.n_neighbors, repeats=a.repeats)
