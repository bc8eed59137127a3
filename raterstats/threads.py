"""Compiled kernels over the draws of a fit on two threads (:func:`over_halves`): the
numba kernels release the GIL, so the two halves of the draws run at once."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


def over_halves[T](run: Callable[[int, int], T], n: int) -> list[T]:
    """``[run(0, n // 2), run(n // 2, n)]``, the two calls on two threads (an error in
    either is raised). Each call must write only its own range of rows (draws), or return
    what it computed for the caller to combine in this order, so that the result does not
    depend on the threads.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.zeros(5)
    >>> def fill(lo, hi):
    ...     out[lo:hi] = np.arange(lo, hi)
    ...     return hi - lo
    >>> over_halves(fill, 5), out.tolist()
    ([2, 3], [0.0, 1.0, 2.0, 3.0, 4.0])
    """
    half = n // 2
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="raterstats-halves") as pool:
        futures = [pool.submit(run, 0, half), pool.submit(run, half, n)]
        return [f.result() for f in futures]


__all__ = ["over_halves"]
