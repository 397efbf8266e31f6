"""The Laplacian-Eigenmaps benchmark runs small and embeds the same subspace as scikit-learn (no timing asserted)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_runs_small_and_both_embeddings_agree(capsys):
    spec = importlib.util.spec_from_file_location("bench_eigenmaps", ROOT / "benchmarks" / "bench_eigenmaps.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    r = bench.main(n=600, repeats=1)
    assert r["n"] == 600 and r["ours_s"] > 0 and r["sklearn_s"] > 0
    assert min(r["cosines"]) > 1 - 1e-8  # the same subspace as SpectralEmbedding on the same graph
    assert "ours / scikit-learn" in capsys.readouterr().out
