"""Compiled Plackett-Luce log density with a hand-written gradient (numba), the
per-ranking log-likelihood over posterior draws, and nutpie's C callback.

These kernels override, for speed, the NumPy reference
:mod:`raterstats.models.comparisons.pl_reference`: :func:`pl_logp_grad` computes its
``log_density`` (the log density of the PyMC model of
:meth:`~raterstats.models.comparisons.PlackettLuce.build_model` on the same unconstrained
vector, normalising constants included) and the gradient in one pass over the rankings;
the tests check both against the reference and the PyMC model at random points.

One ranking costs O(its length): utilities ``u = alpha_j theta[d, m]`` are shifted by their
maximum, the risk-set sums ``S_R`` of the tie groups are suffix sums, and the gradient with
respect to ``u_e`` is ``1[e in G] (1 + w_e B_G) - w_e sum_{G' <= G(e)} A_G'`` with
``A_G = sum_t 1 / (S_R - c_t S_G)``, ``B_G = sum_t c_t / (S_R - c_t S_G)`` (``c_t = t / |G|``
for Efron's ties, 0 for Breslow's) and ``w = exp(u - max u)``.

The data travel packed (:func:`pack_data`): one int64 and one float64 array of segments,
read at the positions named by the constants below, so the same code serves the Python
entry (:func:`pl_entry`) and the C callback (:data:`pl_logp_cb`) that nutpie calls from its
threads without the GIL. Everything the kernels run is in this file, except the buffer
helpers of :mod:`raterstats.nutpie_callbacks` (see :data:`KERNEL_SOURCE_SHA256`).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
from numba import carray, cfunc, njit

from raterstats.models.comparisons.pl_reference import PriorParams
from raterstats.models.comparisons.rankings_data import RankingsData
from raterstats.nutpie_callbacks import LOGP_SIGNATURE, read_user_data, status_code

#: the source file, besides this one, whose code the cached callback compiles in
KERNEL_SOURCES = (Path(__file__).parents[2] / "nutpie_callbacks.py",)

#: SHA-256 of :data:`KERNEL_SOURCES`. numba's on-disk cache checks only this file's time
#: stamp and size, not the modules it calls into, so a changed buffer layout would
#: otherwise leave a stale callback; tests/comparisons/test_plackett_luce.py fails until
#: this value is updated, and updating it invalidates the cache.
KERNEL_SOURCE_SHA256 = "a98f188938a40843d6b91d07518533f0893f87d0e26b1e47ad34a15465f10e42"

_LOG_2PI = math.log(2 * math.pi)

# integer segments
I_HEADER, I_RK_START, I_RK_GSTART, I_G_START, I_RK_DIM, I_RK_RATER, I_ENTRY_SYS = range(7)
I_POOLED, I_RATER_SLOT = 7, 8
# header fields
H_D, H_M, H_R, H_N, H_EFRON, H_P, H_J, H_WIDTH, H_CT, H_CA = range(10)
# float segment 0: scalars
F_THETA_SCALE, F_ALPHA_SCALE, F_JUDGE_MU, F_JUDGE_SD, F_CONST = range(5)


def kernel_source_sha256() -> str:
    """SHA-256 over the :data:`KERNEL_SOURCES` (each file's bytes, in order)."""
    h = hashlib.sha256()
    for path in KERNEL_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()


def pack_segments(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    """``[n, len_0, ..., len_{n-1}, *part_0, ..., *part_{n-1}]`` as one array."""
    flat = [np.asarray(p, dtype=dtype).reshape(-1) for p in parts]
    head: np.ndarray = np.array([len(flat), *(p.size for p in flat)], dtype=dtype)
    return np.concatenate([head, *flat])


def prior_constant(data: RankingsData, priors: PriorParams) -> float:
    """The normalising constants of the prior densities (those the kernel leaves out of
    its loop), so that the compiled log density equals the PyMC model's."""
    D, M = len(data.dimensions), len(data.systems)
    P, J = int(data.pooled.sum()), int((~data.pooled).sum())
    half = math.log(2.0) - 0.5 * _LOG_2PI
    return (
        D * (half - math.log(priors.theta_scale))
        + (half - math.log(priors.alpha_scale))
        - 0.5 * _LOG_2PI * (D * (M - 1) + P - 1)
        + J * (-0.5 * _LOG_2PI - math.log(priors.judge_sd))
    )


def pack_data(data: RankingsData, priors: PriorParams) -> tuple[np.ndarray, np.ndarray]:
    """The integer and float arrays :func:`pl_entry` reads."""
    D, M, R = len(data.dimensions), len(data.systems), len(data.raters)
    P = int(data.pooled.sum())
    J = R - P
    width = int(np.diff(data.rk_start).max())
    o_az = D + D * (M - 1) + 1
    # pooled raters: their position among the pooled; judges: their entry of x
    slot = np.empty(R, dtype=np.int64)
    slot[data.pooled] = np.arange(P)
    slot[~data.pooled] = o_az + P - 1 + np.arange(J)
    header = [
        D, M, R, data.n_rankings, int(data.efron), P, J, width,
        int(priors.centred_theta), int(priors.centred_alpha),
    ]  # fmt: skip
    ints = pack_segments(
        [
            np.array(header),
            data.rk_start,
            data.rk_gstart,
            data.g_start,
            data.rk_dim,
            data.rk_rater,
            data.entry_system,
            data.pooled.astype(np.int64),
            slot,
        ],
        np.int64,
    )
    scalars = [
        priors.theta_scale,
        priors.alpha_scale,
        priors.judge_mu,
        priors.judge_sd,
        prior_constant(data, priors),
    ]
    return ints, pack_segments([np.array(scalars, dtype=float)], np.float64)


@njit(cache=True, nogil=True)
def segment(arr: np.ndarray, i: int) -> np.ndarray:
    """Segment ``i`` of an array packed by :func:`pack_segments`."""
    n = int(arr[0])
    start = 1 + n
    for k in range(i):
        start += int(arr[1 + k])
    return arr[start : start + int(arr[1 + i])]


@njit(cache=True, nogil=True, error_model="numpy")
def one_ranking(
    a: float,
    theta_d: np.ndarray,
    lo: int,
    hi: int,
    g0: int,
    g1: int,
    g_start: np.ndarray,
    entry_sys: np.ndarray,
    efron: bool,
    u: np.ndarray,
    w: np.ndarray,
    suf: np.ndarray,
    gu: np.ndarray,
) -> float:
    """Log-likelihood of one ranking (entries ``lo:hi``, tie groups ``g0:g1``) at
    discrimination ``a`` and strengths ``theta_d``; fills ``u[:n]`` with the utilities and
    ``gu[:n]`` with the gradient with respect to them (``w``, ``suf``: work space)."""
    n = hi - lo
    m = -np.inf
    for k in range(n):
        u[k] = a * theta_d[entry_sys[lo + k]]
        if u[k] > m:
            m = u[k]
    for k in range(n):
        w[k] = math.exp(u[k] - m)
    suf[n] = 0.0
    for k in range(n - 1, -1, -1):
        suf[k] = suf[k + 1] + w[k]
    ll = 0.0
    cum_a = 0.0
    for g in range(g0, g1):
        glo = g_start[g] - lo
        ghi = g_start[g + 1] - lo
        ng = ghi - glo
        s_r = suf[glo]
        s_g = s_r - suf[ghi]
        a_g = 0.0
        b_g = 0.0
        for t in range(ng):
            c = t / ng if efron else 0.0
            den = s_r - c * s_g
            ll -= math.log(den) + m
            a_g += 1.0 / den
            b_g += c / den
        cum_a += a_g
        for k in range(glo, ghi):
            ll += u[k]
            gu[k] = 1.0 + w[k] * (b_g - cum_a)
    return ll


@njit(cache=True, nogil=True, error_model="numpy")
def pl_entry(x: np.ndarray, ints: np.ndarray, floats: np.ndarray, grad: np.ndarray) -> float:
    """Log density at the unconstrained vector ``x`` (layout of
    :func:`~raterstats.models.comparisons.pl_reference.block_slices`); writes its gradient
    into ``grad``."""
    h = segment(ints, I_HEADER)
    D, M, R, N = h[H_D], h[H_M], h[H_R], h[H_N]
    efron = h[H_EFRON] == 1
    ct = h[H_CT] == 1
    ca = h[H_CA] == 1
    width = h[H_WIDTH]
    rk_start = segment(ints, I_RK_START)
    rk_gstart = segment(ints, I_RK_GSTART)
    g_start = segment(ints, I_G_START)
    rk_dim = segment(ints, I_RK_DIM)
    rk_rater = segment(ints, I_RK_RATER)
    entry_sys = segment(ints, I_ENTRY_SYS)
    pooled = segment(ints, I_POOLED)
    slot = segment(ints, I_RATER_SLOT)
    sc = segment(floats, 0)
    t_scale, a_scale = sc[F_THETA_SCALE], sc[F_ALPHA_SCALE]
    j_mu, j_sd = sc[F_JUDGE_MU], sc[F_JUDGE_SD]
    n_x = x.size
    for i in range(n_x):
        grad[i] = 0.0
    lp = sc[F_CONST]
    o_tz = D
    o_sa = D + D * (M - 1)
    # strengths: theta[d] = Z(y_d); non-centred y = sigma_d z, z ~ N(0, 1); centred
    # y ~ N(0, sigma_d); sigma_d ~ HalfNormal
    theta = np.empty((D, M))
    rn = math.sqrt(M)
    for d in range(D):
        s = math.exp(x[d])
        r = s / t_scale
        lp += -0.5 * r * r + x[d]
        grad[d] += 1.0 - r * r
        off = o_tz + d * (M - 1)
        tot = 0.0
        for k in range(M - 1):
            z = x[off + k]
            tot += z
            if ct:
                q = z / s
                lp -= 0.5 * q * q + x[d]
                grad[off + k] -= q / s
                grad[d] += q * q - 1.0
            else:
                lp -= 0.5 * z * z
                grad[off + k] -= z
        mult = 1.0 if ct else s
        norm = tot / (rn + M)
        for k in range(M - 1):
            theta[d, k] = mult * (x[off + k] - norm)
        theta[d, M - 1] = -mult * tot / rn
    # discriminations: the pooled raters' log alpha = Z(v) (zero-sum; non-centred
    # v = sigma_a z, z ~ N(0, 1); centred v ~ N(0, sigma_a)); judges' their own value
    sa = math.exp(x[o_sa])
    ra = sa / a_scale
    lp += -0.5 * ra * ra + x[o_sa]
    grad[o_sa] += 1.0 - ra * ra
    P = h[H_P]
    o_az = o_sa + 1
    tot_a = 0.0
    for k in range(P - 1):
        v = x[o_az + k]
        tot_a += v
        if ca:
            q = v / sa
            lp -= 0.5 * q * q + x[o_sa]
            grad[o_az + k] -= q / sa
            grad[o_sa] += q * q - 1.0
        else:
            lp -= 0.5 * v * v
            grad[o_az + k] -= v
    mult_a = 1.0 if ca else sa
    rp = math.sqrt(P)
    lap = np.empty(P)
    for k in range(P - 1):
        lap[k] = mult_a * (x[o_az + k] - tot_a / (rp + P))
    lap[P - 1] = -mult_a * tot_a / rp
    la = np.empty(R)
    alpha = np.empty(R)
    for j in range(R):
        if pooled[j] == 1:
            la[j] = lap[slot[j]]
        else:
            v = x[slot[j]]
            la[j] = v
            q = (v - j_mu) / j_sd
            lp -= 0.5 * q * q
            grad[slot[j]] -= q / j_sd
        alpha[j] = math.exp(la[j])
    # rankings
    g_theta = np.zeros((D, M))
    g_la = np.zeros(R)
    u = np.empty(width)
    w = np.empty(width)
    suf = np.empty(width + 1)
    gu = np.empty(width)
    for r in range(N):
        lo, hi = rk_start[r], rk_start[r + 1]
        d, j = rk_dim[r], rk_rater[r]
        a = alpha[j]
        lp += one_ranking(
            a, theta[d], lo, hi, rk_gstart[r], rk_gstart[r + 1], g_start, entry_sys, efron,
            u, w, suf, gu,
        )  # fmt: skip
        for k in range(hi - lo):
            g_theta[d, entry_sys[lo + k]] += a * gu[k]
            g_la[j] += u[k] * gu[k]
    # chain rule back to x
    for d in range(D):
        s = 1.0 if ct else math.exp(x[d])
        if not ct:
            acc = 0.0
            for m in range(M):
                acc += g_theta[d, m] * theta[d, m]
            grad[d] += acc
        off = o_tz + d * (M - 1)
        tot = 0.0
        for k in range(M - 1):
            tot += g_theta[d, k]
        for k in range(M - 1):
            grad[off + k] += s * (g_theta[d, k] - tot / (rn + M) - g_theta[d, M - 1] / rn)
    g_lap = np.zeros(P)
    for j in range(R):
        if pooled[j] == 1:
            g_lap[slot[j]] += g_la[j]
        else:
            grad[slot[j]] += g_la[j]
    if not ca:
        for k in range(P):
            grad[o_sa] += g_lap[k] * lap[k]
    tot_g = 0.0
    for k in range(P - 1):
        tot_g += g_lap[k]
    for k in range(P - 1):
        grad[o_az + k] += mult_a * (g_lap[k] - tot_g / (rp + P) - g_lap[P - 1] / rp)
    return lp


@njit(cache=True, nogil=True, error_model="numpy")
def loglik_draws(
    theta: np.ndarray,
    alpha: np.ndarray,
    efron: bool,
    rk_start: np.ndarray,
    rk_gstart: np.ndarray,
    g_start: np.ndarray,
    rk_dim: np.ndarray,
    rk_rater: np.ndarray,
    entry_sys: np.ndarray,
) -> np.ndarray:
    """Log-likelihood of every ranking ``(S, N)`` at draws ``theta`` ``(S, D, M)`` and
    ``alpha`` ``(S, R)``."""
    S = theta.shape[0]
    N = rk_dim.size
    width = 1
    for r in range(N):
        width = max(width, rk_start[r + 1] - rk_start[r])
    out = np.empty((S, N))
    u = np.empty(width)
    w = np.empty(width)
    suf = np.empty(width + 1)
    gu = np.empty(width)
    for s in range(S):
        for r in range(N):
            out[s, r] = one_ranking(
                alpha[s, rk_rater[r]], theta[s, rk_dim[r]], rk_start[r], rk_start[r + 1],
                rk_gstart[r], rk_gstart[r + 1], g_start, entry_sys, efron, u, w, suf, gu,
            )  # fmt: skip
    return out


@cfunc(LOGP_SIGNATURE, cache=True)
def pl_logp_cb(dim, x_, out_, logp_, user_data):
    """nutpie's log-density callback of the Plackett-Luce model (user data: the ints and
    floats of :func:`pl_entry`)."""
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = read_user_data(user_data)
    lp = pl_entry(x, ints, floats, out)
    logp[0] = lp
    return status_code(lp, out)


__all__ = [
    "KERNEL_SOURCES",
    "KERNEL_SOURCE_SHA256",
    "kernel_source_sha256",
    "loglik_draws",
    "one_ranking",
    "pack_data",
    "pack_segments",
    "pl_entry",
    "pl_logp_cb",
    "prior_constant",
    "segment",
]
