"""Benchmark: exact attention through 8 unrolled blocks without holding the n x n matrix.

Runs ``probdr_lite.unrolled.unroll`` (exact softmax attention in tiles or row blocks) on n images at d_q = 128 and
prints, all measured in this one run:

- wall time / matmul bound. The bound is the time the two matrix products of every block of the textbook
  algorithm would take at this machine's float32 GEMM rate: per block S = X X^T and A X each cost 2 n^2 d_q flops,
  so bound = n_blocks * 2 * 2 n^2 d_q / rate. The rate is measured here with a large square float32 matmul (best of
  several, before and after the run, so the bound is as strict as the machine allows right now). Unmasked A X
  forms each pair of square tiles of the symmetric logits once (``unrolled.attention_times``), so it does about
  three quarters of those flops and the ratio can fall below 1; the flop fraction is printed, and so is the same
  ratio for the row-block softmax that masks, beta > 30 or rows of unequal norm fall back to.
- peak memory. tracemalloc cannot see torch's allocations, so each computation runs in a fresh subprocess that
  resets the kernel's high-water mark (Linux /proc/self/clear_refs), reads its resident set size just before (VmRSS)
  and its peak afterwards (VmHWM, the mark the reset restarts; ru_maxrss only where /proc is missing, because
  after fork and exec it also holds the parent's peak): "above baseline" is the extra peak caused by the
  computation (where the reset is impossible, an upper bound that may include the peak of loading the data),
  "process" the peak of the process from the reset on (interpreter, torch, whose
  import alone takes about 0.5 GB with the CUDA build, and the data included). The peak expected from the block
  sizes is printed next to it. Both run once on 256 rows first, so that paging in torch's code is not counted.
- the ratio against a naive dense implementation (the full n x n softmax, 8 times) and their largest difference.

Usage: ``python benchmarks/bench_attention.py`` (all 10,000 MNIST test images), ``--n 1000`` for the live-panel size,
``--data random`` for random data of MNIST's shape. Never asserts anything about time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import numpy as np
import torch

try:
    from probdr_lite import _tiled_attention as T
    from probdr_lite import unrolled as U
except ImportError:  # run as a script from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from probdr_lite import _tiled_attention as T
    from probdr_lite import unrolled as U

MIB = 2**20


def load_data(n: int, data: str = "mnist", seed: int = 0):
    """(n, 784) float32 images in [0, 1]: MNIST test images, or uniform random data of the same shape.

    ``data="mnist"`` falls back to random data (with a note) if the loader is unavailable or n > 10,000.
    """
    if data == "mnist":
        try:
            from probdr_lite.data import load_mnist

            if n <= 10_000:
                return load_mnist(n=n)[0], "mnist"
            print(f"note: MNIST has 10,000 test images; using random data for n = {n}")
        except Exception as exc:  # the loader is someone else's module: do not let it stop the benchmark
            print(f"note: MNIST loader unavailable ({exc}); using random data of the same shape")
    gen = np.random.default_rng(seed)
    return gen.random((n, 784), dtype=np.float32), "random"


def gemm_rate(size: int = 2048, repeats: int = 5) -> float:
    """float32 flop/s of a (size x size) @ (size x size) matmul, best of ``repeats``."""
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    a @ b  # warm-up
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * size**3 / best


def naive_unroll(X, n_blocks, kappa, eta, beta):
    """The textbook version: the full (n, n) softmax at every block (the "diffusion" variant)."""
    n, d_q = X.shape
    for _ in range(n_blocks):
        S = (kappa / d_q) * (X @ X.T)  # (n, n)
        S.diagonal().sub_(beta)
        A = torch.softmax(S, dim=1)  # (n, n): a second n x n matrix
        Z = X + 2 * eta * (A @ X - X)
        del S, A
        Z = Z - Z.mean(1, keepdim=True)
        X = Z * (math.sqrt(d_q) / Z.norm(dim=1, keepdim=True))
    return X


def gemm_only_pass(X, n_blocks, rows):
    """Only the two matrix products of every block, in the same row-block layout (no softmax, no LayerNorm):
    the time this layout's GEMMs take here, to separate their shape efficiency from the softmax's cost."""
    n = X.shape[0]
    S = torch.empty(rows, n)
    out = torch.empty_like(X)
    for _ in range(n_blocks):
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            torch.mm(X[r0:r1], X.T, out=S[: r1 - r0])
            torch.mm(S[: r1 - r0], X, out=out[r0:r1])
    return out


def _timed(fn, repeats):
    best, out = math.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _status_bytes(field: str) -> int | None:
    """A size field of /proc/self/status ("VmRSS", "VmHWM") in bytes, or None where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _peak_rss() -> int:
    """This process's peak resident set size since the last reset, in bytes.

    Linux: VmHWM, the high-water mark of this process's own memory, which :func:`_reset_peak_rss` restarts.
    getrusage's ru_maxrss is not used there: exec carries the parent's high-water mark into it, so a child of a
    large benchmark process would report the parent's peak. Elsewhere ru_maxrss (KiB on Linux, bytes on macOS).
    """
    hwm = _status_bytes("VmHWM")
    if hwm is not None:
        return hwm
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


def _current_rss() -> int:
    """The resident set size now (Linux /proc), or the peak so far where /proc is missing."""
    rss = _status_bytes("VmRSS")
    return _peak_rss() if rss is None else rss


def _reset_peak_rss() -> bool:
    """Restart the kernel's high-water mark at the current RSS (Linux >= 4.0: write 5 to /proc/self/clear_refs),
    so that a peak reached earlier (loading the data) is not counted. Returns False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _memory_probe(kind, n, d_q, n_blocks, kappa, eta, beta, variant, data, block_size, seed):
    """Run one computation in this (fresh) process and print its RSS before and its peak after, in bytes, as JSON."""
    Y, _ = load_data(n, data, seed)
    X0 = U.embed(torch.from_numpy(Y), d_q=d_q, seed=seed)  # (n, d_q)
    del Y
    # warm up on a few rows first: the first call of each torch kernel pages in library code and starts thread
    # pools, which the resident set counts; that is not memory the computation needs
    if kind == "blocked":
        U.unroll(X0[:256], n_blocks, kappa, eta, beta, variant, block_size=block_size)
    else:
        naive_unroll(X0[:256], n_blocks, kappa, eta, beta)
    _reset_peak_rss()
    before = _current_rss()
    if kind == "blocked":
        U.unroll(X0, n_blocks, kappa, eta, beta, variant, block_size=block_size)
    else:
        naive_unroll(X0, n_blocks, kappa, eta, beta)
    after = _peak_rss()
    print(json.dumps({"before": before, "after": after}))


def measure_peak(kind, **kw):
    """Peak RSS of ``kind`` ("blocked" or "naive") in a subprocess: (bytes above its baseline, process peak)."""
    args = [sys.executable, os.path.abspath(__file__), "--_probe", kind]
    for key, value in kw.items():
        if value is not None:
            args += [f"--{key.replace('_', '-')}", str(value)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_repo_root(), os.environ.get("PYTHONPATH")])))
    res = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    return out["after"] - out["before"], out["after"]


def _repo_root():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def main(
    n: int = 10_000,
    d_q: int = 128,
    n_blocks: int = 8,
    kappa: float = 30.0,
    eta: float = 0.4,
    beta: float = 1.0,
    variant: str = "diffusion",
    data: str = "mnist",
    block_size: int | None = None,
    repeats: int = 2,
    naive: bool = True,
    memory: bool = True,
    seed: int = 0,
    gemm_size: int = 2048,
    threads: int | None = None,
) -> dict:
    """Run the benchmark, print its ratios and return them as a dict (nothing is asserted)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _run(n, d_q, n_blocks, kappa, eta, beta, variant, data, block_size, repeats, naive, memory, seed,
                    gemm_size)
    finally:
        torch.set_num_threads(before)


def _run(n, d_q, n_blocks, kappa, eta, beta, variant, data, block_size, repeats, naive, memory, seed, gemm_size):
    if data not in ("mnist", "random"):
        raise ValueError(f"data must be 'mnist' or 'random'; got {data!r}")
    Y, source = load_data(n, data, seed)
    X0 = U.embed(torch.from_numpy(Y), d_q=d_q, seed=seed)  # (n, d_q) float32
    rows = block_size or U._auto_block_size(n, X0.element_size(), 1)
    print(f"exact attention, {n_blocks} blocks, variant {variant!r}: n = {n} {source} images, d_q = {d_q}, "
          f"kappa = {kappa:g}, eta = {eta:g}, beta = {beta:g}, {rows} rows per block, "
          f"{torch.get_num_threads()} torch threads")

    rate_before = gemm_rate(gemm_size)
    t_blocked, path = _timed(lambda: U.unroll(X0, n_blocks, kappa, eta, beta, variant, block_size=block_size),
                             repeats)
    rate = max(rate_before, gemm_rate(gemm_size))
    bound = n_blocks * 2 * 2 * n**2 * d_q / rate
    result = {
        "n": n, "d_q": d_q, "n_blocks": n_blocks, "data": source, "block_rows": rows,
        "gemm_gflops": rate / 1e9, "matmul_bound_s": bound, "blocked_s": t_blocked,
        "time_over_bound": t_blocked / bound,
    }
    print(f"float32 GEMM rate ({gemm_size}^3 matmul, best of before/after): {rate / 1e9:.1f} GFLOP/s")
    print(f"matmul bound {n_blocks} x 2 x 2 n^2 d_q / rate = {bound:.3f} s; exact attention "
          f"{t_blocked:.3f} s (best of {repeats})")
    print(f"  wall time / matmul bound = {t_blocked / bound:.2f}   (target <= 1.3)")
    tiled = variant in ("attention", "diffusion", "paper") and T._common_shift(X0, kappa, beta) is not None
    b = min(rows, T._TILE, n)  # the tiles' side on the tiled path
    if tiled:
        sides = [min(b, n - r0) for r0 in range(0, n, b)]
        fraction = ((n**2 + sum(s * s for s in sides)) / 2 + n**2) / (2 * n**2)
        result["tiled_flop_fraction"] = fraction
        print(f"  symmetric tiles of side {b}: each pair formed once, {fraction:.2f} of the bound's flops")
    before = T._SYMMETRIC_TILES
    T._SYMMETRIC_TILES = False  # the row-block softmax every step: the path masks and large beta take
    try:
        t_rows, path_rows = _timed(lambda: U.unroll(X0, n_blocks, kappa, eta, beta, variant, block_size=block_size),
                                   repeats)
    finally:
        T._SYMMETRIC_TILES = before
    t_gemm, _ = _timed(lambda: gemm_only_pass(X0, n_blocks, rows), repeats)
    diff_rows = float((path_rows[-1] - path[-1]).abs().max())
    result.update(rows_s=t_rows, rows_over_bound=t_rows / bound, gemm_only_s=t_gemm,
                  rows_over_gemm_only=t_rows / t_gemm, max_abs_diff_tiles_vs_rows=diff_rows)
    print(f"  row-block softmax instead (masks, beta > 30): {t_rows:.3f} s = {t_rows / bound:.2f} x the bound; "
          f"its two GEMMs alone in this layout {t_gemm / bound:.2f} x the bound, so the softmax, LayerNorm and "
          f"checks take {t_rows / t_gemm:.2f} x the GEMMs; largest difference of the final latents from the "
          f"tiled path {diff_rows:.1e}")

    # the peak expected from the sizes: one logits buffer (a (b, b) tile on the tiled path, else a (rows, n) block),
    # the n_blocks + 1 latents unroll returns, and about ten (n, d_q) temporaries of a step (A X, the direction, the
    # centred rows, a float64 copy in the checks)
    itemsize = X0.element_size()
    logits_bytes = (b * b if tiled else rows * n) * itemsize
    expected = logits_bytes + (n_blocks + 1 + 10) * n * d_q * itemsize
    result["expected_block_bytes"] = expected
    probe = dict(n=n, d_q=d_q, n_blocks=n_blocks, kappa=kappa, eta=eta, beta=beta, variant=variant, data=data,
                 block_size=block_size, seed=seed)
    if memory:
        extra, total = measure_peak("blocked", **probe)
        result.update(blocked_peak_extra_bytes=extra, blocked_peak_process_bytes=total)
        print(f"  peak memory (VmHWM, subprocess): {extra / MIB:.0f} MiB above baseline, "
              f"{total / MIB:.0f} MiB for the whole process   (target <= 1024 MiB; "
              f"sizes predict {expected / MIB:.0f} MiB: {logits_bytes / MIB:.0f} MiB logits buffer + "
              f"{(n_blocks + 11) * n * d_q * itemsize / MIB:.0f} MiB latents)")

    if naive:
        t_naive, X_naive = _timed(lambda: naive_unroll(X0, n_blocks, kappa, eta, beta), 1)
        result.update(naive_s=t_naive, naive_over_blocked=t_naive / t_blocked)
        line = f"  naive dense (full n x n softmax): {t_naive:.3f} s = {t_naive / t_blocked:.2f} x the blocked time"
        if variant == "diffusion":
            diff = float((X_naive - path[-1]).abs().max())
            result["max_abs_diff_vs_naive"] = diff
            line += f"; largest difference of the final latents {diff:.1e}"
        print(line)
        if memory:
            extra_n, total_n = measure_peak("naive", **probe)
            result.update(naive_peak_extra_bytes=extra_n, naive_peak_process_bytes=total_n)
            print(f"  naive peak memory: {extra_n / MIB:.0f} MiB above baseline, {total_n / MIB:.0f} MiB process "
                  f"(two n x n float32 matrices = {2 * n * n * 4 / MIB:.0f} MiB)")
    return result


def _parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000, help="number of images (10,000 = the whole MNIST test set)")
    p.add_argument("--d-q", type=int, default=128)
    p.add_argument("--n-blocks", type=int, default=8)
    p.add_argument("--kappa", type=float, default=30.0)
    p.add_argument("--eta", type=float, default=0.4)
    p.add_argument("--beta", type=float, default=1.0)
    p.add_argument("--variant", default="diffusion", choices=U.BLOCK_VARIANTS)
    p.add_argument("--data", default="mnist", choices=("mnist", "random"))
    p.add_argument("--block-size", type=int, default=None, help="rows per block (default: from a 64 MiB budget)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    p.add_argument("--no-naive", action="store_true", help="skip the dense n x n comparison")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    p.add_argument("--_probe", choices=("blocked", "naive"), help=argparse.SUPPRESS)
    return p


if __name__ == "__main__":
    a = _parser().parse_args()
    if a._probe:
        _memory_probe(a._probe, a.n, a.d_q, a.n_blocks, a.kappa, a.eta, a.beta, a.variant, a.data, a.block_size,
                      a.seed)
    else:
        main(n=a.n, d_q=a.d_q, n_blocks=a.n_blocks, kappa=a.kappa, eta=a.eta, beta=a.beta, variant=a.variant,
             data=a.data, block_size=a.block_size, repeats=a.repeats, naive=not a.no_naive,
             memory=not a.no_memory, seed=a.seed, threads=a.threads)
