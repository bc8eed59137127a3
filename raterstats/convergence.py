"""Rank-normalised split R-hat and bulk / tail ESS of many parameters at once.

The same numbers as ``arviz_stats.rhat`` (method ``"rank"``) and ``arviz_stats.ess``
(methods ``"bulk"`` and ``"tail"``, Vehtari et al. 2021), computed for every scalar
parameter in one vectorised pass over a ``(parameter, chain, draw)`` array instead of one
Python call per scalar: checking the thousands of parameters of a rater model costs a small
fraction of the fit (``tests/test_health.py`` compares the two on random chains). A
parameter with a NaN or infinite draw gives NaN, as in arviz-stats.
"""

from __future__ import annotations

import numpy as np
from scipy.fft import irfft, next_fast_len, rfft
from scipy.special import ndtri
from scipy.stats import rankdata

from raterstats.defaults import ci_prob


def _checked(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` as float ``(P, C, D)`` with invalid parameters zeroed, and their mask."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 3:
        raise ValueError(f"expected a (parameter, chain, draw) array, got shape {x.shape}")
    bad = ~np.isfinite(x).all(axis=(1, 2))
    return np.where(bad[:, None, None], 0.0, x), bad


def _split(x: np.ndarray) -> np.ndarray:
    """Each chain cut in two halves (the middle draw of an odd chain dropped)."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, -half:]], axis=1)


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled ranks of each parameter (Blom's offset 3/8)."""
    flat = x.reshape(x.shape[0], -1)
    ranks = rankdata(flat, method="average", axis=1)
    n = flat.shape[1]
    return np.asarray(ndtri((ranks - 3 / 8) / (n - 2 * 3 / 8 + 1))).reshape(x.shape)


def _rhat(x: np.ndarray) -> np.ndarray:
    n = x.shape[2]
    between = n * np.var(x.mean(axis=2), axis=1, ddof=1)
    within = np.var(x, axis=2, ddof=1).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def rhat_rank(x: np.ndarray) -> np.ndarray:
    """Rank-normalised split R-hat (the larger of the bulk and the folded value) per
    parameter of a ``(parameter, chain, draw)`` array; NaN with fewer than 2 chains or 4
    draws.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(2, 4, 500))
    >>> x[1, 0] += 3  # one chain elsewhere
    >>> (rhat_rank(x) > 1.01).tolist()
    [False, True]
    """
    return convergence_stats(x, tail=False)[0]


def convergence_stats(
    x: np.ndarray, *, prob: float | None = None, tail: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rhat, ess_bulk, ess_tail)`` per parameter of a ``(parameter, chain, draw)``
    array in one pass (the normal scores of the split chains are shared); see
    :func:`rhat_rank`, :func:`ess_bulk`, :func:`ess_tail`. ``tail=False`` skips the tail
    ESS (NaN).

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(3, 4, 200))
    >>> [a.shape for a in convergence_stats(x)]
    [(3,), (3,), (3,)]
    """
    x, bad = _checked(x)
    nan = np.full(x.shape[0], np.nan)
    if x.shape[2] < 4:
        return nan, nan, nan.copy()
    split = _split(x)
    z = _z_scale(split)
    bulk = np.where(bad, np.nan, _ess(z))
    if x.shape[1] < 2:
        rhat = nan
    else:
        med = np.median(split.reshape(split.shape[0], -1), axis=1)[:, None, None]
        bulk_rhat, folded = _rhat(z), _rhat(_z_scale(np.abs(split - med)))
        # Python's max, as arviz-stats: an undefined folded value (a constant fold) leaves
        # the bulk value
        rhat = np.where(folded > bulk_rhat, folded, bulk_rhat)
        rhat = np.where(bad, np.nan, rhat)
    if not tail:
        return rhat, bulk, nan.copy()
    p = ci_prob() if prob is None else float(prob)
    low = np.full(x.shape[0], np.inf)
    flat = x.reshape(x.shape[0], -1)
    for q in sorted((p, 1 - p)):
        cut = np.quantile(flat, q, axis=1)[:, None, None]
        low = np.minimum(low, _ess(_split((x <= cut).astype(float))))
    return rhat, bulk, np.where(bad, np.nan, low)


def _ess(x: np.ndarray) -> np.ndarray:
    """Effective sample size of each parameter of ``(P, M, N)`` chains (Geyer's initial
    positive and monotone sequences on the FFT autocovariance), as arviz-stats."""
    p, m, n = x.shape
    const = (x.max(axis=(1, 2)) - x.min(axis=(1, 2))) < np.finfo(float).resolution
    centred = x - x.mean(axis=2, keepdims=True)
    size = next_fast_len(2 * n)
    spec = rfft(centred, n=size, axis=2)
    acov = irfft(spec * np.conjugate(spec), n=size, axis=2)[:, :, :n] / n
    mean_var = acov[:, :, 0].mean(axis=1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + np.var(x.mean(axis=2), axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]
    rows = np.arange(p)
    # initial positive sequence: pairs (t + 1, t + 2) for t = 1, 3, ... while t < n - 3,
    # each iteration run while every earlier pair summed to more than 0
    ts = np.arange(1, max(n - 3, 1), 2)
    pair = rho[:, ts + 1] + rho[:, ts + 2] if ts.size else np.zeros((p, 0))
    first = (1.0 + rho[:, 1]) > 0
    runs = np.concatenate([first[:, None], pair[:, :-1] > 0], axis=1) if ts.size else pair > 0
    executed = np.cumprod(runs, axis=1).astype(bool) if ts.size else runs
    n_exec = executed.sum(axis=1)
    rho_t = np.zeros((p, n))
    rho_t[:, 0] = 1.0
    rho_t[:, 1] = rho[:, 1]
    keep = executed & (pair >= 0)
    for off in (1, 2):
        cols = ts + off
        rho_t[:, cols] = np.where(keep, rho[:, cols], rho_t[:, cols])
    max_t = 2 * n_exec - 1
    last_even = np.where(n_exec > 0, rho[rows, np.minimum(2 * n_exec, n - 1)], 1.0)
    improve = last_even > 0
    rho_t[rows[improve], (max_t + 1)[improve]] = last_even[improve]
    # initial monotone sequence
    for t in range(1, int(max_t.max(initial=0)) - 1, 2):
        act = t <= max_t - 2
        prev = rho_t[:, t - 1] + rho_t[:, t]
        lower = act & ((rho_t[:, t + 1] + rho_t[:, t + 2]) > prev)
        rho_t[lower, t + 1] = prev[lower] / 2.0
        rho_t[lower, t + 2] = prev[lower] / 2.0
    idx = np.arange(n)
    head = np.where(idx[None, :] <= max_t[:, None], rho_t, 0.0).sum(axis=1)
    tail = np.where(max_t + 1 < n, rho_t[rows, np.minimum(max_t + 1, n - 1)], 0.0)
    total = m * n
    tau = np.maximum(-1.0 + 2.0 * head + tail, 1 / np.log10(total))
    ess = total / tau
    ess = np.where(np.isnan(rho_t).any(axis=1), np.nan, ess)
    return np.where(const, float(total), ess)


def ess_bulk(x: np.ndarray) -> np.ndarray:
    """Bulk effective sample size (of the rank-normalised split chains) per parameter of
    a ``(parameter, chain, draw)`` array; NaN with fewer than 4 draws.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(1, 4, 500))
    >>> bool(1500 < ess_bulk(x)[0] < 2500)
    True
    """
    return convergence_stats(x, tail=False)[1]


def ess_tail(x: np.ndarray, prob: float | None = None) -> np.ndarray:
    """Tail effective sample size per parameter of a ``(parameter, chain, draw)`` array:
    the smaller ESS of the indicators of the ``1 - prob`` and ``prob`` quantiles
    (default ``prob``: ArviZ's ``stats.ci_prob``, as ``arviz_stats.ess(method="tail")``).

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(1, 4, 500))
    >>> bool(1000 < ess_tail(x)[0] < 2500)
    True
    """
    return convergence_stats(x, prob=prob)[2]


__all__ = ["convergence_stats", "ess_bulk", "ess_tail", "rhat_rank"]
