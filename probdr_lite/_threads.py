"""Run small computations on one thread (core: used by the measurements and by the figures).

The chapters' figures work on a few hundred to a few thousand points: one block is then a few (n, n) and (n, d_q)
products of well under a millisecond of work per thread, and OpenMP's synchronisation between threads costs more
than it saves. On a machine that other jobs share (a CI runner, a laptop with a browser open, Binder) it costs far
more: a thread that waits at a barrier for a descheduled sibling makes an 8-step unroll of 1,000 MNIST latents ten
times slower. One thread is also what makes k-means (and so the NMI the chapters print) repeat exactly from run to
run, since its sums are then always added in the same order.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import torch


@contextmanager
def single_threaded():
    """Limit torch and the native libraries (BLAS, OpenMP: scikit-learn's k-means and k-NN) to one thread."""
    from threadpoolctl import threadpool_limits

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(old)


def one_thread(func):
    """Decorator form of :func:`single_threaded`: every figure builder and slider callback runs under it."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with single_threaded():
            return func(*args, **kwargs)

    return wrapper
