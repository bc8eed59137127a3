"""Rank-based kernels: mid-ranks, Kendall's W, Kendall's tau-b, Spearman's rho, rank-biased
overlap and normalized rank positions. These are not additive over units; each returns
``(estimate, reason)`` (or plain numbers) for complete data.
"""

from __future__ import annotations

import numpy as np

from raterstats.agreement.kernels.core import (
    REASON_NO_VARIANCE,
    REASON_ONE_RATER,
    REASON_TOO_FEW,
    ZERO_TOL,
    FloatArray,
    IntArray,
)


# ----------------------------------------------------------------------------------------
# ranks, Kendall's W, Kendall's tau-b, Spearman's rho
# ----------------------------------------------------------------------------------------
def midranks(x: FloatArray) -> FloatArray:
    """Mid-ranks (1-based, ties get the mean of their positions) of a 1-d array."""
    ranks, _ = midranks_columns(np.asarray(x, dtype=np.float64)[:, None])
    return ranks[:, 0]


def midranks_columns(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Column-wise mid-ranks of a complete (n, m) matrix and each column's ``sum (t^3 - t)``."""
    x = np.asarray(x, dtype=np.float64)
    n, m = x.shape
    if n == 0:
        return np.zeros((0, m)), np.zeros(m)
    order = np.argsort(x, axis=0, kind="stable")
    xs = np.take_along_axis(x, order, axis=0)
    # run starts within each column (column-major flattening)
    xs_t = xs.T
    new = np.ones((m, n), dtype=bool)
    new[:, 1:] = xs_t[:, 1:] != xs_t[:, :-1]
    run_id = np.cumsum(new.ravel()) - 1
    run_len = np.bincount(run_id)
    pos = np.tile(np.arange(n, dtype=np.float64), m)
    run_start = pos[new.ravel()]
    mid = run_start + (run_len + 1.0) / 2.0
    ranks_sorted = mid[run_id].reshape(m, n).T
    ranks = np.empty_like(ranks_sorted)
    np.put_along_axis(ranks, order, ranks_sorted, axis=0)
    col_of_run = (np.flatnonzero(new.ravel()) // n).astype(np.int64)
    t = run_len.astype(np.float64)
    ties = np.bincount(col_of_run, weights=t**3 - t, minlength=m)
    return ranks, ties


def kendall_w(x: FloatArray, *, tie_correction: bool = True) -> tuple[float, int]:
    """Kendall's coefficient of concordance W for a complete subjects x raters matrix.

    Each rater's column is ranked over subjects (mid-ranks). ``W = 12 S / (m^2 (n^3 - n) - m
    sum_j T_j)`` with ``S = sum_i (R_i - mean R)^2``, ``T_j = sum (t^3 - t)`` over rater j's tie
    groups (``T_j = 0`` without tie correction).
    """
    x = np.asarray(x, dtype=np.float64)
    n, m = x.shape
    if n < 2:
        return float("nan"), REASON_TOO_FEW
    if m < 2:
        return float("nan"), REASON_ONE_RATER
    ranks, ties = midranks_columns(x)
    r_i = ranks.sum(axis=1)
    s = float(((r_i - r_i.mean()) ** 2).sum())
    den = m**2 * (n**3 - n) - (m * float(ties.sum()) if tie_correction else 0.0)
    if den <= ZERO_TOL * m**2 * (n**3 - n):
        return float("nan"), REASON_NO_VARIANCE
    return 12.0 * s / den, 0


def _pairs_tied(keys: IntArray) -> int:
    """Number of pairs sharing a key."""
    if keys.size == 0:
        return 0
    _, cnt = np.unique(keys, return_counts=True)
    return int((cnt * (cnt - 1) // 2).sum())


def count_inversions(y: IntArray) -> int:
    """Number of pairs ``i < j`` with ``y[i] > y[j]``, for non-negative integer codes ``y``.

    Bit-by-bit: at the highest bit where ``y[i]`` and ``y[j]`` differ, an inversion has a 1
    before a 0 within the group of equal higher bits. Each level is a stable sort plus
    cumulative sums, so the whole count is ``O(n log n log K)`` with no Python loop over pairs.

    Parameters
    ----------
    y : array of int
        Non-negative integer codes (e.g. ranks of the second variable, ordered by the first).

    Returns
    -------
    int
        The number of discordant (inverted) pairs.

    Examples
    --------
    >>> count_inversions(np.array([2, 0, 1]))
    2
    """
    y = np.asarray(y, dtype=np.int64)
    if y.size < 2:
        return 0
    nbits = max(1, int(y.max()).bit_length())
    total = 0
    for b in range(nbits - 1, -1, -1):
        prefix = y >> (b + 1)
        order = np.argsort(prefix, kind="stable")
        p = prefix[order]
        bit = (y[order] >> b) & 1
        ones = np.cumsum(bit)
        start = np.ones(p.shape[0], dtype=bool)
        start[1:] = p[1:] != p[:-1]
        group = np.cumsum(start) - 1
        before = (ones - bit)[start]
        ones_before = ones - bit - before[group]
        total += int(ones_before[bit == 0].sum())
    return total


def kendall_tau_b(x: FloatArray, y: FloatArray) -> tuple[float, int]:
    """Kendall's tau-b ``(P - Q) / sqrt((P + Q + T_x)(P + Q + T_y))`` for complete pairs."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.shape[0]
    if n < 2:
        return float("nan"), REASON_TOO_FEW
    _, xk = np.unique(x, return_inverse=True)
    _, yk = np.unique(y, return_inverse=True)
    order = np.lexsort((yk, xk))
    discordant = count_inversions(yk[order])
    n0 = n * (n - 1) // 2
    n1 = _pairs_tied(xk)
    n2 = _pairs_tied(yk)
    n3 = _pairs_tied(xk * (int(yk.max()) + 1) + yk)
    concordant = n0 - n1 - n2 + n3 - discordant
    den = float(n0 - n1) * float(n0 - n2)
    if den <= 0:
        return float("nan"), REASON_NO_VARIANCE
    return float(concordant - discordant) / float(np.sqrt(den)), 0


def spearman_rho(x: FloatArray, y: FloatArray) -> tuple[float, int]:
    """Spearman's rho as the Pearson correlation of mid-ranks (exact with ties)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape[0] < 2:
        return float("nan"), REASON_TOO_FEW
    ranks, _ = midranks_columns(np.column_stack([x, y]))
    rx = ranks[:, 0] - ranks[:, 0].mean()
    ry = ranks[:, 1] - ranks[:, 1].mean()
    den = float(np.sqrt((rx * rx).sum() * (ry * ry).sum()))
    if den <= 0:
        return float("nan"), REASON_NO_VARIANCE
    return float((rx * ry).sum()) / den, 0


# ----------------------------------------------------------------------------------------
# rank-biased overlap and normalized rank position
# ----------------------------------------------------------------------------------------
def overlap_at_depth(rank_s: IntArray, rank_t: IntArray, depth: int) -> FloatArray:
    """``X_d = |S_{:d} & T_{:d}|`` for ``d = 1..depth`` from each shared item's two ranks.

    ``rank_s`` / ``rank_t`` are the 1-based positions of the items that occur in both lists;
    an item joins the overlap at depth ``max(rank_s, rank_t)``.
    """
    joins = np.maximum(np.asarray(rank_s, np.int64), np.asarray(rank_t, np.int64))
    counts = np.bincount(joins[joins <= depth], minlength=depth + 1)[1:]
    return np.cumsum(counts).astype(np.float64)


def rbo_ext(rank_s: IntArray, rank_t: IntArray, len_s: int, len_t: int, p: float) -> float:
    """Extrapolated rank-biased overlap, Webber, Moffat & Zobel (2010) eq. 32.

    With ``l`` the longer and ``s`` the shorter length and ``X_d`` the overlap at depth ``d``
    (the shorter list contributes all its items beyond its end)::

        RBO_ext = (1-p)/p [ sum_{d=1}^{l} X_d p^d / d
                            + sum_{d=s+1}^{l} X_s (d - s) p^d / (s d) ]
                  + [ (X_l - X_s) / l + X_s / s ] p^l
    """
    long_len, short_len = max(len_s, len_t), min(len_s, len_t)
    if short_len == 0:
        return 0.0
    x = overlap_at_depth(rank_s, rank_t, long_len)
    d = np.arange(1, long_len + 1, dtype=np.float64)
    pd = p**d
    x_s = x[short_len - 1]
    x_l = x[long_len - 1]
    tail = d > short_len
    total = (x * pd / d).sum()
    total += (x_s * (d[tail] - short_len) * pd[tail] / (short_len * d[tail])).sum()
    return float((1.0 - p) / p * total + ((x_l - x_s) / long_len + x_s / short_len) * p**long_len)


def average_overlap(rank_s: IntArray, rank_t: IntArray, depth: int) -> float:
    """Average overlap ``(1/k) sum_{d=1}^{k} X_d / d`` at depth ``k`` (RBO's ``p -> 1`` limit
    of the truncated sum, Webber et al. 2010, sec. 4)."""
    if depth < 1:
        return float("nan")
    x = overlap_at_depth(rank_s, rank_t, depth)
    d = np.arange(1, depth + 1, dtype=np.float64)
    return float((x / d).mean())


def normalized_positions(scores: FloatArray, *, descending: bool = True) -> FloatArray:
    """Normalized rank positions ``(rank - 1) / (n - 1)`` in [0, 1], 0 = best, mid-ranks."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.shape[0]
    if n < 2:
        return np.zeros(n)
    r = midranks(-s if descending else s)
    return (r - 1.0) / (n - 1.0)


__all__ = [
    "average_overlap",
    "count_inversions",
    "kendall_tau_b",
    "kendall_w",
    "midranks",
    "midranks_columns",
    "normalized_positions",
    "overlap_at_depth",
    "rbo_ext",
    "spearman_rho",
]
