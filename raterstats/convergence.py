"""Rank-normalised split R-hat and bulk / tail ESS for thousands of parameters at once.

The same statistics as arviz-stats' ``array_stats.rhat(method="rank")`` and
``array_stats.ess(method="bulk" | "tail")`` (Vehtari, Gelman, Simpson, Carpenter & Buerkner
2021), to rounding error, computed for all parameters in one pass: arviz-stats applies its
functions parameter by parameter in a Python loop, about 5 ms each, so checking the 6,000
parameters of an ordinal fit on the built-in study took 20-30 s, as long as the sampling
itself. Here the sorts, normal scores, chain statistics and autocovariances (FFT) are array
operations over the parameters, and the runs of tied values, the order of the distances
from the median (merged from the one sort of the draws) and Geyer's initial positive and
monotone sequences run per parameter, compiled (numba, loaded on first use).
``tests/test_convergence.py`` checks every statistic against arviz-stats on random,
autocorrelated, tied, constant and incomplete draws.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from scipy import special
from scipy.fft import next_fast_len

#: values per block of parameters (:func:`rhat_ess`): a block's arrays stay in cache-sized chunks
BLOCK_VALUES = 1_000_000

#: Blom's fractional offset of the rank back-transformation (arviz-stats' ``c = 3/8``)
BLOM_OFFSET = 3 / 8


def split_chains(x: np.ndarray) -> np.ndarray:
    """``(parameter, chain, draw)`` draws with every chain cut in two halves: ``(parameter,
    2 chain, draw // 2)`` (the first halves, then the second; the middle draw of an odd
    length is left out), as arviz-stats splits them."""
    half = x.shape[-1] // 2
    return np.concatenate([x[:, :, :half], x[:, :, x.shape[-1] - half :]], axis=1)


def _rank_kernels() -> tuple[Any, Any]:
    """The compiled parts of the ranks (numba, loaded on first use): average ranks from a
    sorted row and its order, and the sorted order of a row's distances from its median,
    merged from the sorted row in one pass (no second sort)."""
    from numba import njit

    @njit(cache=True, nogil=True)
    def ranks_from_sorted(srt: np.ndarray, order: np.ndarray, out: np.ndarray) -> None:
        p, n = srt.shape
        for q in range(p):
            i = 0
            while i < n:
                j = i
                v = srt[q, i]
                while j + 1 < n and srt[q, j + 1] == v:
                    j += 1
                r = (i + j) / 2.0 + 1.0  # a run of equal values: its mean position
                for k in range(i, j + 1):
                    out[q, order[q, k]] = r
                i = j + 1

    @njit(cache=True, nogil=True)
    def folded_sorted(
        srt: np.ndarray, order: np.ndarray, med: np.ndarray, f_srt: np.ndarray, f_order: np.ndarray
    ) -> None:
        p, n = srt.shape
        for q in range(p):
            m = med[q]
            k = 0
            while k < n and srt[q, k] < m:
                k += 1
            a = k  # values at or above the median, ascending distance
            b = k - 1  # values below it, ascending distance downwards
            for t in range(n):
                if b < 0 or (a < n and srt[q, a] - m <= m - srt[q, b]):
                    f_srt[q, t] = srt[q, a] - m
                    f_order[q, t] = order[q, a]
                    a += 1
                else:
                    f_srt[q, t] = m - srt[q, b]
                    f_order[q, t] = order[q, b]
                    b -= 1

    return ranks_from_sorted, folded_sorted


rank_kernels = cache(_rank_kernels)


def normal_scores(ranks: np.ndarray) -> np.ndarray:
    """Blom's back-transformation of ``(parameter, value)`` ranks to normal scores.

    The ranks are average positions, so multiples of 1/2 from 1 to ``n``: the scores are
    looked up in a table of the ``2 n - 1`` possible ones (the same ``ndtri`` of the same
    numbers, so the same values), not computed for every rank.

    Examples
    --------
    >>> normal_scores(np.array([[1.0, 2.5, 2.5, 4.0]])).round(3)
    array([[-1.049,  0.   ,  0.   ,  1.049]])
    """
    size = ranks.shape[1]
    half = np.arange(2, 2 * size + 1) / 2.0  # every possible rank
    half -= BLOM_OFFSET
    half /= size - 2 * BLOM_OFFSET + 1
    table = np.asarray(special.ndtri(half))
    return table[(2.0 * ranks).astype(np.intp) - 2]


def sorted_quantiles(srt: np.ndarray, probs: Sequence[float]) -> np.ndarray:
    """``np.quantile(x, probs, axis=1)`` (its default ``"linear"`` method) of the rows of
    ``x`` given sorted (``srt``, shape ``(parameter, value)``), without sorting again: the
    same virtual index, neighbours and interpolation as NumPy's, so the same values.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(3, 101))
    >>> bool(np.array_equal(sorted_quantiles(np.sort(x, axis=1), [0.055, 0.945]),
    ...                     np.quantile(x, [0.055, 0.945], axis=1)))
    True
    """
    n = srt.shape[1]
    out = np.empty((len(probs), srt.shape[0]))
    for k, q in enumerate(probs):
        q = np.float64(q)
        vi = (n - 1) * q  # NumPy's virtual index of its "linear" method
        if vi >= n - 1 or vi < 0:  # beyond the ends: the end value, as NumPy
            out[k] = srt[:, -1] if vi >= n - 1 else srt[:, 0]
            continue
        prev = int(np.floor(vi))
        gamma = vi - prev
        a, b = srt[:, prev], srt[:, prev + 1]
        diff = b - a
        out[k] = b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma
    return out


def _bulk_and_folded_scores(split: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normal scores of the pooled ranks of split draws (average ranks for ties, Blom's
    back-transformation) and of their distances from each parameter's median (the folded
    draws of the tail R-hat), from one sort: the distances' order is merged from the
    sorted draws. Also returns the sorted draws ``(parameter, value)``."""
    ranks_from_sorted, folded_sorted = rank_kernels()
    p = split.shape[0]
    flat = split.reshape(p, -1)
    n = flat.shape[1]
    order = np.argsort(flat, axis=1)
    srt = np.ascontiguousarray(np.take_along_axis(flat, order, axis=1))
    ranks = np.empty(flat.shape)
    ranks_from_sorted(srt, order, ranks)
    # the median as np.median takes it: the middle value, or the mean of the two middle ones
    med = srt[:, n // 2] if n % 2 else (srt[:, n // 2 - 1] + srt[:, n // 2]) / 2.0
    f_srt = np.empty(flat.shape)
    f_order = np.empty(flat.shape, dtype=order.dtype)
    folded_sorted(srt, order, np.ascontiguousarray(med), f_srt, f_order)
    f_ranks = np.empty(flat.shape)
    ranks_from_sorted(f_srt, f_order, f_ranks)
    return (
        normal_scores(ranks).reshape(split.shape),
        normal_scores(f_ranks).reshape(split.shape),
        srt,
    )


def _rhat(z: np.ndarray) -> np.ndarray:
    """Split R-hat of ``(parameter, chain, draw)`` values (already split)."""
    n = z.shape[-1]
    between = n * np.var(z.mean(axis=-1), axis=-1, ddof=1)
    within = np.var(z, axis=-1, ddof=1).mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def _geyer_kernel() -> Any:
    """The compiled per-parameter part of the ESS: Geyer's initial positive and monotone
    sequences over the chain-averaged autocovariances, as arviz-stats' ``_ess`` loops."""
    from numba import njit

    @njit(cache=True, nogil=True)
    def geyer_tau(mean_acov: np.ndarray, mean_var: np.ndarray, var_plus: np.ndarray) -> np.ndarray:
        p, n = mean_acov.shape
        out = np.empty(p)
        rho = np.zeros(n)
        for q in range(p):
            rho[:] = 0.0
            mv = mean_var[q]
            vp = var_plus[q]
            even = 1.0
            rho[0] = even
            odd = 1.0 - (mv - mean_acov[q, 1]) / vp
            rho[1] = odd
            t = 1
            while t < n - 3 and (even + odd) > 0.0:
                even = 1.0 - (mv - mean_acov[q, t + 1]) / vp
                odd = 1.0 - (mv - mean_acov[q, t + 2]) / vp
                if (even + odd) >= 0:
                    rho[t + 1] = even
                    rho[t + 2] = odd
                t += 2
            max_t = t - 2
            if even > 0:
                rho[max_t + 1] = even
            t = 1
            while t <= max_t - 2:
                if (rho[t + 1] + rho[t + 2]) > (rho[t - 1] + rho[t]):
                    rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
                    rho[t + 2] = rho[t + 1]
                t += 2
            tau = -1.0
            for k in range(max_t + 1):
                tau += 2.0 * rho[k]
            if max_t + 1 < n:
                tau += rho[max_t + 1]
            bad = False
            for k in range(n):
                if np.isnan(rho[k]):
                    bad = True
            out[q] = np.nan if bad else tau
        return out

    return geyer_tau


geyer_tau = cache(_geyer_kernel)


def ess(x: np.ndarray) -> np.ndarray:
    """Effective sample size of ``(parameter, chain, draw)`` values (arviz-stats' ``_ess``
    for each parameter: FFT autocovariances, Geyer's truncation; a constant parameter gets
    the number of values)."""
    x = np.asarray(x, dtype=float)
    p, n_chain, n_draw = x.shape
    out = np.full(p, float(n_chain * n_draw))
    flat = x.reshape(p, -1)
    varying = (flat.max(axis=1) - flat.min(axis=1)) >= np.finfo(float).resolution
    if not varying.any():
        return out
    v = x[varying]
    m = next_fast_len(2 * n_draw)
    centred = v - v.mean(axis=-1, keepdims=True)
    f = np.fft.rfft(centred, n=m, axis=-1)
    f *= np.conjugate(f)
    acov = np.fft.irfft(f, n=m, axis=-1)[..., :n_draw] / n_draw
    mean_acov = acov.mean(axis=1)
    mean_var = mean_acov[:, 0] * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus = var_plus + np.var(v.mean(axis=-1), axis=-1, ddof=1)
    tau = geyer_tau()(np.ascontiguousarray(mean_acov), mean_var, var_plus)
    total = n_chain * n_draw
    with np.errstate(invalid="ignore"):
        tau = np.where(np.isnan(tau), np.nan, np.maximum(tau, 1 / np.log10(total)))
        out[varying] = total / tau
    return out


def _rhat_ess_block(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rhat_ess` of one block of parameters."""
    x = np.asarray(draws, dtype=float)
    if x.ndim != 3:
        raise ValueError(f"draws must be (parameter, chain, draw), not shape {x.shape}")
    p, n_chain, n_draw = x.shape
    r = np.full(p, np.nan)
    eb = np.full(p, np.nan)
    et = np.full(p, np.nan)
    ok = ~np.isnan(x).reshape(p, -1).any(axis=1)
    if n_draw < 4 or not ok.any():
        return r, eb, et
    v = x[ok]
    split = split_chains(v)
    zb, zf, srt = _bulk_and_folded_scores(split)
    eb[ok] = ess(zb)
    if n_chain >= 2:
        bulk, tail = _rhat(zb), _rhat(zf)
        r[ok] = np.where(tail > bulk, tail, bulk)
    lo_p, hi_p = sorted((prob, 1 - prob))
    if n_draw % 2 == 0:  # the split draws are all the draws: their sort serves
        q = sorted_quantiles(srt, [lo_p, hi_p])
    else:
        q = np.quantile(v.reshape(v.shape[0], -1), [lo_p, hi_p], axis=1)
    e_lo = ess(split_chains((v <= q[0][:, None, None]).astype(float)))
    e_hi = ess(split_chains((v <= q[1][:, None, None]).astype(float)))
    et[ok] = np.where(e_hi < e_lo, e_hi, e_lo)
    return r, eb, et


def rhat_ess(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank-normalised split R-hat, bulk ESS and tail ESS of every parameter.

    Parameters
    ----------
    draws : ndarray, shape (parameter, chain, draw)
        Posterior draws.
    prob : float
        The tail ESS is the smaller ESS of the indicators of the ``(1 - prob) / 2`` and
        ``(1 + prob) / 2`` quantiles (arviz-stats' ``ess(method="tail", prob=prob)``).

    Returns
    -------
    rhat, ess_bulk, ess_tail : ndarray, shape (parameter,)
        NaN for a parameter with a missing draw, and R-hat NaN with fewer than 2 chains or
        4 draws (ESS: fewer than 4 draws), as arviz-stats.

    Notes
    -----
    The parameters are processed in blocks of :data:`BLOCK_VALUES` values, on as many
    threads as there are cores (NumPy's sorts and FFTs release the GIL).

    Examples
    --------
    >>> x = np.random.default_rng(1).normal(size=(3, 4, 500))
    >>> r, eb, et = rhat_ess(x, 0.94)
    >>> bool((r < 1.01).all()), bool((eb > 1000).all())
    (True, True)
    """
    x = np.asarray(draws, dtype=float)
    if x.ndim != 3:
        raise ValueError(f"draws must be (parameter, chain, draw), not shape {x.shape}")
    p = x.shape[0]
    step = max(1, BLOCK_VALUES // max(1, x.shape[1] * x.shape[2]))
    blocks = [x[i : i + step] for i in range(0, p, step)]
    if len(blocks) <= 1:
        return _rhat_ess_block(x, prob)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(blocks), os.cpu_count() or 1)) as pool:
        parts = list(pool.map(lambda b: _rhat_ess_block(b, prob), blocks))
    return tuple(np.concatenate([part[k] for part in parts]) for k in range(3))  # type: ignore[return-value]


__all__ = [
    "BLOCK_VALUES",
    "BLOM_OFFSET",
    "ess",
    "geyer_tau",
    "normal_scores",
    "rank_kernels",
    "rhat_ess",
    "sorted_quantiles",
    "split_chains",
]
