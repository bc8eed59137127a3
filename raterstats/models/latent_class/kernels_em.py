"""Compiled EM and draw-summary kernels of the latent-class models: the E-step (class
posteriors of every pattern and the weighted log marginal likelihood), the expected counts
of the M-step, both in one pass, and label posteriors and per-pattern log-likelihoods over
many posterior draws.

Each is an override of its NumPy reference in
:mod:`raterstats.models.latent_class.reference` (``em_estep_np``, ``em_accumulate_np``,
``pattern_log_joint_np``), used for large layouts only
(:func:`raterstats.models.latent_class.em.select_em_kernels`), and tested against it.
Kept apart from the densities so that EM loads only these.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _pattern_posterior(
    p: int,
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
) -> float:
    """Class posterior ``q[p]`` of pattern ``p`` (normalised in place) and its log
    marginal likelihood (``-inf`` when no allowed class has positive probability)."""
    K = T.shape[1]
    d = pattern_dim[p]
    for t in range(K):
        q[p, t] = log_prior[d, t]
    for r in range(p_start[p], p_start[p + 1]):
        e = p_e[r]
        for t in range(K):
            q[p, t] += T[e, t]
    m = -np.inf
    for t in range(K):
        if mask[p, t] and q[p, t] > m:
            m = q[p, t]
    acc = 0.0
    for t in range(K):
        if mask[p, t] and m > -np.inf:
            q[p, t] = math.exp(q[p, t] - m)
            acc += q[p, t]
        else:
            q[p, t] = 0.0
    if acc <= 0.0:
        return -np.inf
    for t in range(K):
        q[p, t] /= acc
    return m + math.log(acc)


@njit(cache=True, nogil=True)
def em_estep(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
) -> float:
    """Class posteriors ``q (P, K)`` of every pattern and the weighted log marginal
    likelihood, from the table ``T[e, t]`` and the log class prior (``-inf`` allowed)."""
    total = 0.0
    for p in range(pattern_dim.size):
        lp = _pattern_posterior(p, T, log_prior, p_e, p_start, pattern_dim, mask, q)
        total += pattern_w[p] * lp if lp > -np.inf else -np.inf
    return total


@njit(cache=True, nogil=True)
def em_accumulate(
    q: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_w: np.ndarray,
    n_e: int,
) -> np.ndarray:
    """``M[e, t] = sum over pattern ratings r with table row e of w_p q[p, t]``."""
    K = q.shape[1]
    M = np.zeros((n_e, K))
    for p in range(pattern_w.size):
        w = pattern_w[p]
        for r in range(p_start[p], p_start[p + 1]):
            e = p_e[r]
            for t in range(K):
                M[e, t] += w * q[p, t]
    return M


@njit(cache=True, nogil=True)
def em_estep_accumulate(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
    M: np.ndarray,
) -> float:
    """:func:`em_estep` and :func:`em_accumulate` of its ``q`` in one pass over the
    patterns (the next M-step's expected counts ``M (n_e, K)``, overwritten)."""
    K = T.shape[1]
    M[:] = 0.0
    total = 0.0
    for p in range(pattern_dim.size):
        lp = _pattern_posterior(p, T, log_prior, p_e, p_start, pattern_dim, mask, q)
        total += pattern_w[p] * lp if lp > -np.inf else -np.inf
        w = pattern_w[p]
        for r in range(p_start[p], p_start[p + 1]):
            e = p_e[r]
            for t in range(K):
                M[e, t] += w * q[p, t]
    return total


#: A pattern's likelihood (summed over the classes) below which the E-step redoes the
#: pattern in log space (see :func:`em_estep_counts_range`); also the bound below which the
#: running product of likelihoods is moved into the log-likelihood sum.
PROB_MIN = 1e-150


@njit(cache=True, nogil=True)
def em_estep_counts(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
    M: np.ndarray,
    cc: np.ndarray,
) -> float:
    """One pass over the pattern ratings for a whole EM iteration: :func:`em_estep_accumulate`
    (class posteriors ``q``, expected counts ``M (n_e, K)``, the weighted log marginal
    likelihood) and the expected class counts per dimension ``cc (D, K)`` (overwritten;
    :func:`raterstats.models.latent_class.reference.class_counts` of ``q``), by
    :func:`em_estep_counts_range` over all the patterns."""
    return em_estep_counts_range(
        T, log_prior, np.exp(T), np.exp(log_prior), p_e, p_start, pattern_dim, pattern_w,
        mask, q, M, cc, 0, pattern_dim.size,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def em_estep_counts_range(
    T: np.ndarray,
    log_prior: np.ndarray,
    PT: np.ndarray,
    prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
    M: np.ndarray,
    cc: np.ndarray,
    p0: int,
    p1: int,
) -> float:
    """:func:`em_estep_counts` of the patterns ``p0 .. p1 - 1`` only: their rows of ``q``,
    and ``M`` and ``cc`` (overwritten) summed over them alone, so that disjoint ranges run
    at once on threads (the kernel releases the GIL) into buffers of their own. ``PT`` and
    ``prior`` are ``exp(T)`` and ``exp(log_prior)``.

    A pattern's joint is the product of its ratings' probabilities (``PT``) and the prior,
    with no ``exp`` per pattern; when it sums to less than :data:`PROB_MIN` over the classes
    (many ratings, or near-impossible ones) the pattern is redone in log space (max-shifted,
    as :func:`em_estep_counts_np`), where nothing underflows. The log-likelihood of the
    patterns of weight 1 is taken as the log of running products of their likelihoods,
    moved into the sum as soon as the product falls below :data:`PROB_MIN` (both factors
    lie above it, so the product never underflows): one logarithm per few dozen patterns.
    Both agree with the log-space reference to rounding (the tests check 1e-12)."""
    K = T.shape[1]
    M[:] = 0.0
    cc[:] = 0.0
    v = np.empty(K)
    total = 0.0
    prod = 1.0  # running product of the likelihoods of patterns of weight 1
    for p in range(p0, p1):
        d = pattern_dim[p]
        lo, hi = p_start[p], p_start[p + 1]
        w = pattern_w[p]
        acc = 0.0
        for t in range(K):
            v[t] = prior[d, t] if mask[p, t] else 0.0
        for r in range(lo, hi):
            e = p_e[r]
            for t in range(K):
                v[t] *= PT[e, t]
        for t in range(K):
            acc += v[t]
        if PROB_MIN < acc < np.inf:
            lp = 0.0
            if w == 1.0:
                prod *= acc
                if prod < PROB_MIN:
                    total += math.log(prod)
                    prod = 1.0
            else:
                lp = math.log(acc)
        else:  # in log space
            for t in range(K):
                v[t] = log_prior[d, t]
            for r in range(lo, hi):
                e = p_e[r]
                for t in range(K):
                    v[t] += T[e, t]
            m = -np.inf
            top = -1
            for t in range(K):
                if mask[p, t] and v[t] > m:
                    m = v[t]
                    top = t
            if top < 0:  # no possible class of positive probability
                for t in range(K):
                    q[p, t] = 0.0
                total = -np.inf
                continue
            acc = 0.0
            for t in range(K):
                if t == top:
                    v[t] = 1.0
                elif mask[p, t]:
                    v[t] = math.exp(v[t] - m)
                else:
                    v[t] = 0.0
                acc += v[t]
            lp = m + math.log(acc)
        inv = 1.0 / acc
        for t in range(K):
            v[t] = v[t] * inv
            q[p, t] = v[t]
            cc[d, t] += w * v[t]
        for r in range(lo, hi):
            e = p_e[r]
            for t in range(K):
                M[e, t] += w * v[t]
        total += w * lp
    return total + math.log(prod)


@njit(cache=True, nogil=True)
def pattern_posterior_draws(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    mask: np.ndarray,
    prob_sum: np.ndarray,
    loglik: np.ndarray,
    store_loglik: bool,
) -> None:
    """For every draw ``s`` (``T (S, E, K)``, ``log_prior (S, D, K)``): add the class
    posterior of each pattern to ``prob_sum (P, K)`` and, when ``store_loglik``, write each
    pattern's log marginal likelihood to ``loglik (S, P)``."""
    S = T.shape[0]
    P = pattern_dim.size
    K = T.shape[2]
    v = np.empty(K)
    for s in range(S):
        for p in range(P):
            d = pattern_dim[p]
            for t in range(K):
                v[t] = log_prior[s, d, t]
            for r in range(p_start[p], p_start[p + 1]):
                e = p_e[r]
                for t in range(K):
                    v[t] += T[s, e, t]
            m = -np.inf
            for t in range(K):
                if mask[p, t] and v[t] > m:
                    m = v[t]
            acc = 0.0
            for t in range(K):
                if mask[p, t] and m > -np.inf:
                    v[t] = math.exp(v[t] - m)
                    acc += v[t]
                else:
                    v[t] = 0.0
            if acc > 0.0:
                for t in range(K):
                    prob_sum[p, t] += v[t] / acc
                if store_loglik:
                    loglik[s, p] = m + math.log(acc)
            elif store_loglik:
                loglik[s, p] = -np.inf


__all__ = [
    "PROB_MIN",
    "em_accumulate",
    "em_estep",
    "em_estep_accumulate",
    "em_estep_counts",
    "em_estep_counts_range",
    "pattern_posterior_draws",
]
