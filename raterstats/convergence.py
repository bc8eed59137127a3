"""Rank-normalised split R-hat and bulk / tail ESS for thousands of parameters at once.

The same statistics as arviz-stats' ``array_stats.rhat(method="rank")`` and
``array_stats.ess(method="bulk" | "tail")`` (Vehtari, Gelman, Simpson, Carpenter & Buerkner
2021), to rounding error, computed for all parameters in one pass: arviz-stats applies its
functions parameter by parameter in a Python loop, about 5 ms each, so checking the 6,000
parameters of an ordinal fit on the built-in study took 20-30 s, as long as the sampling
itself. Here the ranks, normal scores, chain statistics and autocovariances (FFT) are array
operations over the parameters, and only Geyer's initial positive and monotone sequences
run per parameter, compiled (numba, loaded on first use). ``tests/test_convergence.py``
checks every statistic against arviz-stats on random, autocorrelated, tied, constant and
incomplete draws.
"""

from __future__ import annotations

import os
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


def average_ranks(flat: np.ndarray) -> np.ndarray:
    """Ranks (1-based, ties get their average rank) along the last axis of a 2-d array, as
    ``scipy.stats.rankdata(method="average", axis=1)``: one argsort per row, and each run
    of equal values gets the mean of its positions."""
    p, n = flat.shape
    order = np.argsort(flat, axis=1)
    srt = np.take_along_axis(flat, order, axis=1)
    pos = np.broadcast_to(np.arange(n), (p, n))
    new = np.ones((p, n), dtype=bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    # first and last position of the run of equal values each sorted value belongs to
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    end = np.ones((p, n), dtype=bool)
    end[:, :-1] = new[:, 1:]
    last = np.minimum.accumulate(np.where(end, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((p, n))
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


def z_scale(x: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled ranks of each parameter's draws (average ranks for
    ties, Blom's back-transformation)."""
    p = x.shape[0]
    flat = x.reshape(p, -1)
    rank = average_ranks(flat)
    size = flat.shape[1]
    rank -= BLOM_OFFSET
    rank /= size - 2 * BLOM_OFFSET + 1
    return np.asarray(special.ndtri(rank)).reshape(x.shape)


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
    zb = z_scale(split)
    eb[ok] = ess(zb)
    if n_chain >= 2:
        folded = np.abs(split - np.median(split.reshape(split.shape[0], -1), axis=1)[:, None, None])
        bulk, tail = _rhat(zb), _rhat(z_scale(folded))
        r[ok] = np.where(tail > bulk, tail, bulk)
    flat = v.reshape(v.shape[0], -1)
    lo_p, hi_p = sorted((prob, 1 - prob))
    q = np.quantile(flat, [lo_p, hi_p], axis=1)
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
    "average_ranks",
    "ess",
    "geyer_tau",
    "rhat_ess",
    "split_chains",
    "z_scale",
]
