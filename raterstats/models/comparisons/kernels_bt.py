"""Compiled log density of the Bradley-Terry-Davidson model, with a hand-written gradient
(numba), and the C callback nutpie calls without the GIL.

:func:`bt_logp_grad` computes :func:`~raterstats.models.comparisons.bt_reference.log_density`
(the log density of the PyMC model on the same unconstrained vector, up to a constant) and
its gradient in one pass over the judgments; the tests check it against the NumPy reference
and against the PyMC model. :func:`pack_bt` puts the sizes, block offsets and per-judgment
indices into one integer array at the positions named by :class:`BTInt` (kept in this
module, so that numba's cache, which checks only this file, sees every constant the kernel
compiles in); the floats are the prior constants of
:data:`~raterstats.models.comparisons.bt_reference.PRIOR_CONSTANTS`.

Importing this module compiles (or loads from numba's on-disk cache) :data:`bt_logp_cb`, so
the model imports it only when it builds its density.
"""

from __future__ import annotations

import hashlib
import math
from enum import IntEnum
from pathlib import Path

import numpy as np
from numba import carray, cfunc, njit

from raterstats.nutpie_callbacks import LOGP_SIGNATURE, read_user_data, status_code

#: the other source whose code the cached callback compiles in (nutpie's buffer helpers)
KERNEL_SOURCES = (Path(__file__).parents[2] / "nutpie_callbacks.py",)

#: SHA-256 of :data:`KERNEL_SOURCES`: numba's on-disk cache checks only this file's time
#: stamp and size, so a changed buffer layout would otherwise leave a stale callback;
#: tests/comparisons/test_bradley_terry.py fails until this value is updated, and updating
#: it invalidates the cache.
KERNEL_SOURCE_SHA256 = "a98f188938a40843d6b91d07518533f0893f87d0e26b1e47ad34a15465f10e42"


def kernel_source_sha256() -> str:
    """SHA-256 over the :data:`KERNEL_SOURCES` (each file's bytes, in order)."""
    h = hashlib.sha256()
    for path in KERNEL_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()


class BTInt(IntEnum):
    """Positions of the header of the packed integer array (:func:`pack_bt`); the
    per-judgment arrays follow it (dimension, system a, system b, rater, shown-first sign,
    outcome; ``N`` each), then per rater whether it is pooled and its position in its
    group."""

    N_OBS = 0
    N_DIM = 1
    N_SYS = 2
    N_RATER = 3
    N_POOLED = 4
    N_JUDGE = 5
    MAX_GRADE = 6
    MODE = 7  #: 0 binary, 1 Davidson, 2 symmetric cut-points, 3 free cut-points
    O_THETA_Z = 8
    O_LOG_THETA_SD = 9
    O_LOG_ALPHA_Z = 10
    O_LOG_ALPHA_SD = 11
    O_BETA_Z = 12
    O_BETA_MEAN = 13
    O_LOG_BETA_SD = 14
    O_JUDGE_LOG_ALPHA = 15
    O_JUDGE_BETA = 16
    O_OUTCOME = 17
    NDIM = 18
    CENTRED = 19  #: 1: the theta block holds theta itself (centred), 0: theta / theta_sd
    BODY = 20


def pack_bt(
    sizes: tuple[int, int, int, int, int, int, int, int],
    offsets: tuple[int, ...],
    ndim: int,
    obs: tuple[np.ndarray, ...],
    pooled: np.ndarray,
    centred: bool = False,
) -> np.ndarray:
    """The packed integer array: ``sizes`` (N, D, M, R, P, J, K, mode), the 10 block
    offsets, ``ndim``, whether the strengths are centred, the six per-judgment arrays
    ``obs`` and the raters' pooling.

    Examples
    --------
    >>> ints = pack_bt((1, 1, 2, 1, 1, 0, 1, 0), tuple(range(10)), 4,
    ...                tuple(np.zeros(1, np.int64) for _ in range(6)), np.array([True]))
    >>> int(ints[BTInt.NDIM]), ints.size
    (4, 28)
    """
    pooled = np.asarray(pooled, bool)
    pos = np.empty(pooled.size, np.int64)
    pos[pooled] = np.arange(int(pooled.sum()))
    pos[~pooled] = np.arange(int((~pooled).sum()))
    parts = [
        np.asarray(sizes, np.int64),
        np.asarray(offsets, np.int64),
        np.array([ndim, int(centred)]),
    ]
    parts += [np.asarray(a, np.int64) for a in obs]
    parts += [pooled.astype(np.int64), pos]
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.int64)


@njit(cache=True, nogil=True, inline="always")
def _sigmoid(v: float) -> float:
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


@njit(cache=True, nogil=True, inline="always")
def _log_sigmoid(v: float) -> float:
    if v >= 0:
        return -math.log1p(math.exp(-v))
    return v - math.log1p(math.exp(v))


@njit(cache=True, nogil=True, error_model="numpy")
def bt_logp_grad(x: np.ndarray, grad: np.ndarray, ints: np.ndarray, prior: np.ndarray) -> float:
    """Log density (up to a constant) at ``x`` and its gradient (written into ``grad``);
    ``ints`` from :func:`pack_bt`, ``prior`` the prior constants."""
    N, D, M = ints[BTInt.N_OBS], ints[BTInt.N_DIM], ints[BTInt.N_SYS]
    R, K, mode = ints[BTInt.N_RATER], ints[BTInt.MAX_GRADE], ints[BTInt.MODE]
    o_tz, o_lts = ints[BTInt.O_THETA_Z], ints[BTInt.O_LOG_THETA_SD]
    o_za, o_las = ints[BTInt.O_LOG_ALPHA_Z], ints[BTInt.O_LOG_ALPHA_SD]
    o_zb, o_bm, o_lbs = ints[BTInt.O_BETA_Z], ints[BTInt.O_BETA_MEAN], ints[BTInt.O_LOG_BETA_SD]
    o_jla, o_jb, o_out = (
        ints[BTInt.O_JUDGE_LOG_ALPHA],
        ints[BTInt.O_JUDGE_BETA],
        ints[BTInt.O_OUTCOME],
    )
    centred = ints[BTInt.CENTRED]
    b0 = BTInt.BODY
    obs_d = ints[b0 : b0 + N]
    obs_a = ints[b0 + N : b0 + 2 * N]
    obs_b = ints[b0 + 2 * N : b0 + 3 * N]
    obs_r = ints[b0 + 3 * N : b0 + 4 * N]
    obs_s = ints[b0 + 4 * N : b0 + 5 * N]
    obs_y = ints[b0 + 5 * N : b0 + 6 * N]
    pooled = ints[b0 + 6 * N : b0 + 6 * N + R]
    rpos = ints[b0 + 6 * N + R : b0 + 6 * N + 2 * R]
    for t in range(grad.size):
        grad[t] = 0.0
    total = 0.0
    # standard normal coordinates: log_alpha_z, beta_z (and theta_z, non-centred)
    for lo, hi in ((o_za, o_las), (o_zb, o_bm)):
        for t in range(lo, hi):
            total -= 0.5 * x[t] * x[t]
            grad[t] -= x[t]
    # strengths: theta[d] = theta_sd[d] * zero_sum_extend(z[d]) (non-centred), or
    # theta[d] = zero_sum_extend(x[d]) with a zero-sum normal prior of scale theta_sd[d]
    m1 = M - 1
    rn = math.sqrt(M)
    theta = np.empty((D, M))
    tsd = np.empty(D)
    for d in range(D):
        lsd = x[o_lts + d]
        s = math.exp(lsd)
        r = s / prior[0]
        total += -0.5 * r * r + lsd
        grad[o_lts + d] += 1.0 - r * r
        tsd[d] = s
        o = o_tz + d * m1
        tot = 0.0
        ss = 0.0
        for k in range(m1):
            tot += x[o + k]
            ss += x[o + k] * x[o + k]
        if centred:
            total += -0.5 * ss / (s * s) - m1 * lsd
            grad[o_lts + d] += ss / (s * s) - m1
            for k in range(m1):
                grad[o + k] -= x[o + k] / (s * s)
        else:
            total -= 0.5 * ss
            for k in range(m1):
                grad[o + k] -= x[o + k]
        scale = 1.0 if centred else s
        norm = tot / (rn + M)
        for k in range(m1):
            theta[d, k] = scale * (x[o + k] - norm)
        theta[d, M - 1] = -scale * tot / rn
    # raters
    sa = math.exp(x[o_las])
    r = sa / prior[1]
    total += -0.5 * r * r + x[o_las]
    grad[o_las] += 1.0 - r * r
    bm = x[o_bm]
    z = (bm - prior[2]) / prior[3]
    total -= 0.5 * z * z
    grad[o_bm] -= z / prior[3]
    sb = math.exp(x[o_lbs])
    r = sb / prior[4]
    total += -0.5 * r * r + x[o_lbs]
    grad[o_lbs] += 1.0 - r * r
    for t in range(o_jla, o_jb):
        z = (x[t] - prior[5]) / prior[6]
        total -= 0.5 * z * z
        grad[t] -= z / prior[6]
    for t in range(o_jb, o_out):
        z = (x[t] - prior[7]) / prior[8]
        total -= 0.5 * z * z
        grad[t] -= z / prior[8]
    # pooled raters' log alpha: sum to zero, lap = alpha_sd * zero_sum_extend(z)
    P = ints[BTInt.N_POOLED]
    rp = math.sqrt(P)
    tot_a = 0.0
    for k in range(P - 1):
        tot_a += x[o_za + k]
    lap = np.empty(P)
    for k in range(P - 1):
        lap[k] = sa * (x[o_za + k] - tot_a / (rp + P))
    lap[P - 1] = -sa * tot_a / rp
    alpha = np.empty(R)
    beta = np.empty(R)
    for j in range(R):
        p = rpos[j]
        if pooled[j]:
            alpha[j] = math.exp(lap[p])
            beta[j] = bm + sb * x[o_zb + p]
        else:
            alpha[j] = math.exp(x[o_jla + p])
            beta[j] = x[o_jb + p]
    # outcome parameters
    nc = 2 * K
    nu = np.zeros(D)
    lnu = np.zeros(D)
    cuts = np.zeros((D, nc))
    dcuts = np.zeros((D, nc))
    dlnu = np.zeros(D)
    if mode == 1:
        for d in range(D):
            lnu[d] = x[o_out + d]
            nu[d] = math.exp(lnu[d])
            z = (lnu[d] - prior[9]) / prior[10]
            total -= 0.5 * z * z
            grad[o_out + d] -= z / prior[10]
    elif mode == 2:
        for d in range(D):
            acc = 0.0
            for k in range(K):
                t = o_out + d * K + k
                z = (x[t] - prior[11]) / prior[12]
                total -= 0.5 * z * z
                grad[t] -= z / prior[12]
                acc += math.exp(x[t])
                cuts[d, K + k] = acc
                cuts[d, K - 1 - k] = -acc
    elif mode == 3:
        for d in range(D):
            base = o_out + d * nc
            c = x[base]
            cuts[d, 0] = c
            for k in range(1, nc):
                c += math.exp(x[base + k])
                cuts[d, k] = c
                total += x[base + k]  # log-Jacobian of the ordered transform
                grad[base + k] += 1.0
            for k in range(nc):
                z = (cuts[d, k] - prior[13]) / prior[14]
                total -= 0.5 * z * z
                dcuts[d, k] -= z / prior[14]
    # likelihood: one pass over the judgments
    dtheta = np.zeros((D, M))
    dalpha = np.zeros(R)
    dbeta = np.zeros(R)
    for n in range(N):
        d, a, b, j = obs_d[n], obs_a[n], obs_b[n], obs_r[n]
        s_ = float(obs_s[n])
        y = obs_y[n]
        diff = theta[d, a] - theta[d, b]
        u = alpha[j] * diff + beta[j] * s_
        if mode == 0:
            v = u if y > 0 else -u
            total += _log_sigmoid(v)
            g = _sigmoid(-v) if y > 0 else -_sigmoid(-v)
        elif mode == 1:
            h = 0.5 * u
            m = abs(h)
            e2 = math.exp(-2.0 * m)
            en = nu[d] * math.exp(-m)
            den = 1.0 + e2 + en
            log_z = m + math.log(den)
            dz_du = (0.5 if h >= 0 else -0.5) * (1.0 - e2) / den
            if y > 0:
                total += h - log_z
                g = 0.5 - dz_du
            elif y < 0:
                total += -h - log_z
                g = -0.5 - dz_du
            else:
                total += lnu[d] - log_z
                g = -dz_du
                dlnu[d] += 1.0
            dlnu[d] -= en / den
        else:
            i = y + K
            if i == 0:
                hi = cuts[d, 0] - u
                total += _log_sigmoid(hi)
                ghi = _sigmoid(-hi)
                dcuts[d, 0] += ghi
                g = -ghi
            elif i == nc:
                lo = cuts[d, nc - 1] - u
                total += _log_sigmoid(-lo)
                glo = -_sigmoid(lo)
                dcuts[d, nc - 1] += glo
                g = -glo
            else:
                hi = cuts[d, i] - u
                lo = cuts[d, i - 1] - u
                gap = hi - lo
                total += _log_sigmoid(hi) + _log_sigmoid(-lo) + math.log(-math.expm1(-gap))
                q = 1.0 / math.expm1(gap)
                ghi = _sigmoid(-hi) + q
                glo = -_sigmoid(lo) - q
                dcuts[d, i] += ghi
                dcuts[d, i - 1] += glo
                g = -(ghi + glo)
        ga = g * alpha[j]
        dtheta[d, a] += ga
        dtheta[d, b] -= ga
        dalpha[j] += g * diff
        dbeta[j] += g * s_
    # chain rule back to x: strengths
    for d in range(D):
        o = o_tz + d * m1
        s = 1.0 if centred else tsd[d]
        dls = 0.0
        tot = 0.0
        for m in range(M):
            dls += dtheta[d, m] * theta[d, m]
        for k in range(m1):
            tot += dtheta[d, k] * s
        last = dtheta[d, M - 1] * s
        for k in range(m1):
            grad[o + k] += dtheta[d, k] * s - tot / (rn + M) - last / rn
        if not centred:
            grad[o_lts + d] += dls
    # raters
    g_lap = np.zeros(P)
    for j in range(R):
        p = rpos[j]
        dla = dalpha[j] * alpha[j]
        if pooled[j]:
            g_lap[p] += dla
            grad[o_zb + p] += dbeta[j] * sb
            grad[o_bm] += dbeta[j]
            grad[o_lbs] += dbeta[j] * sb * x[o_zb + p]
        else:
            grad[o_jla + p] += dla
            grad[o_jb + p] += dbeta[j]
    tot_g = 0.0
    for k in range(P):
        grad[o_las] += g_lap[k] * lap[k]
    for k in range(P - 1):
        tot_g += g_lap[k]
    for k in range(P - 1):
        grad[o_za + k] += sa * (g_lap[k] - tot_g / (rp + P) - g_lap[P - 1] / rp)
    # outcome parameters
    if mode == 1:
        for d in range(D):
            grad[o_out + d] += dlnu[d]
    elif mode == 2:
        for d in range(D):
            acc = 0.0
            for k in range(K - 1, -1, -1):
                acc += dcuts[d, K + k] - dcuts[d, K - 1 - k]
                t = o_out + d * K + k
                grad[t] += acc * math.exp(x[t])
    elif mode == 3:
        for d in range(D):
            base = o_out + d * nc
            acc = 0.0
            for k in range(nc - 1, -1, -1):
                acc += dcuts[d, k]
                if k == 0:
                    grad[base] += acc
                else:
                    grad[base + k] += acc * math.exp(x[base + k])
    return total


@cfunc(LOGP_SIGNATURE, cache=True)
def bt_logp_cb(dim, x_, out_, logp_, user_data):
    """nutpie's log-density callback of the Bradley-Terry model (user data: the packed
    integers of :func:`pack_bt` and the prior constants)."""
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = read_user_data(user_data)
    lp = bt_logp_grad(x, out, ints, floats)
    logp[0] = lp
    return status_code(lp, out)


__all__ = [
    "KERNEL_SOURCES",
    "KERNEL_SOURCE_SHA256",
    "BTInt",
    "bt_logp_cb",
    "bt_logp_grad",
    "kernel_source_sha256",
    "pack_bt",
]
