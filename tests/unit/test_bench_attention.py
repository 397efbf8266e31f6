"""The attention benchmark at a reduced size: it runs, its numbers are consistent, and it computes the right thing.

Nothing here asserts a time: the benchmark only prints ratios measured in one run.
"""

import importlib.util
import math
from pathlib import Path

import pytest
import torch

from probdr_lite import _tiled_attention as T
from probdr_lite import unrolled as U

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_attention.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_attention", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_main_small_random(bench, capsys):
    threads_before = torch.get_num_threads()
    r = bench.main(n=300, d_q=32, n_blocks=3, data="random", block_size=128, repeats=1, memory=False, gemm_size=256,
                   threads=1)
    printed = capsys.readouterr().out
    assert "wall time / matmul bound" in printed and "naive dense" in printed
    # the bound is the formula of the docstring at the measured rate
    assert math.isclose(r["matmul_bound_s"], 3 * 2 * 2 * 300**2 * 32 / (r["gemm_gflops"] * 1e9), rel_tol=1e-9)
    assert math.isclose(r["time_over_bound"], r["blocked_s"] / r["matmul_bound_s"], rel_tol=1e-9)
    # the row-blocked unroll and the naive dense one compute the same latents (float32)
    assert r["max_abs_diff_vs_naive"] < 1e-4
    assert r["block_rows"] == 128 and r["data"] == "random"
    # the tiled path (tiles of 128, 128 and 44 rows) forms the logits of each pair once: (n^2 + sum b^2) / 2 of the
    # first product's n^2, all of the second's; the row-block softmax it is compared with gives the same latents
    assert math.isclose(r["tiled_flop_fraction"], ((300**2 + 2 * 128**2 + 44**2) / 2 + 300**2) / (2 * 300**2))
    assert "row-block softmax instead" in printed and r["max_abs_diff_tiles_vs_rows"] < 1e-4
    assert T._SYMMETRIC_TILES  # main restores the switch it turns off
    assert torch.get_num_threads() == threads_before  # main restores torch's thread count


def test_naive_unroll_matches_the_package_in_float64(bench):
    X = U.layer_norm(torch.randn(50, 8, dtype=torch.float64))
    ref = U.unroll(X, 4, 30.0, 0.4, 1.0, "diffusion", block_size=16)[-1]
    assert torch.allclose(bench.naive_unroll(X, 4, 30.0, 0.4, 1.0), ref, atol=1e-12)


def test_gemm_only_pass_is_the_unnormalised_product(bench):
    X = torch.randn(70, 6)
    assert torch.allclose(bench.gemm_only_pass(X, 1, 32), (X @ X.T) @ X, rtol=1e-4, atol=1e-3)


def test_mnist_data_and_memory_probe(bench):
    Y, source = bench.load_data(64, "mnist")
    assert Y.shape == (64, 784) and source in ("mnist", "random")
    extra, total = bench.measure_peak(
        "blocked", n=200, d_q=16, n_blocks=2, kappa=30.0, eta=0.4, beta=1.0, variant="diffusion", data="random",
        block_size=None, seed=0,
    )
    assert extra >= 0 and total > extra


def test_memory_probe_does_not_report_its_parents_peak(bench):
    """The probe's child is started by a process that may be much larger (the benchmark itself holds the data and
    the naive run's matrices). Its reading must be its own peak: with 1 GiB touched here first, a 200-point
    computation still reads far less than that above its baseline (ru_maxrss would carry this process's peak)."""
    ballast = torch.ones(2**28)  # 1 GiB of float32, written, so resident
    extra, total = bench.measure_peak(
        "blocked", n=200, d_q=16, n_blocks=2, kappa=30.0, eta=0.4, beta=1.0, variant="diffusion", data="random",
        block_size=None, seed=0,
    )
    assert float(ballast[-1]) == 1.0
    assert 0 <= extra < 256 * 2**20 and total > extra
