"""Compiled log density of :class:`~raterstats.models.length_effect.LengthEffect` (logit
link), with a hand-written gradient (numba), the C callback nutpie calls without the GIL,
and the pointwise log-likelihood of a fit's draws.

:func:`length_logp_grad` computes the log density of the PyMC graph of
:meth:`LengthEffect.build_model <raterstats.models.length_effect.LengthEffect.build_model>`
on the same unconstrained vector (priors, the log-Jacobians of the log and ordered
transforms, and the normalising constants included), and its gradient, in one pass over
the distinct ratings: ratings that agree in answer, dimension, design, rater and level are
the same term of the likelihood (sentence ratings of one answer by one rater often are, as
the model does not nest sentences), so each distinct one is computed once and weighted by
its count. The tests check it against ``model.compile_logp()`` of the PyMC graph.

The data travel packed: one int64 array (:class:`LInt` header, then the per-term and
per-answer indices) and one float64 array (:class:`LFloat` header, then the standardised
log lengths, the term counts and the zero-sum basis of the systems), so the same code
serves the Python entry and the callback :data:`length_logp_cb`. Everything the kernels
run is in this file, except the buffer helpers of :mod:`raterstats.nutpie_callbacks` (see
:data:`KERNEL_SOURCE_SHA256`).

Importing this module compiles (or loads from numba's on-disk cache) the callback, so the
model imports it only when it builds its density.
"""

from __future__ import annotations

import hashlib
import math
from enum import IntEnum
from pathlib import Path

import numpy as np
from numba import carray, cfunc, njit

from raterstats.nutpie_callbacks import LOGP_SIGNATURE, read_user_data, status_code

#: the source file, besides this one, whose code the cached callback compiles in
KERNEL_SOURCES = (Path(__file__).parents[1] / "nutpie_callbacks.py",)

#: SHA-256 of :data:`KERNEL_SOURCES`. numba's on-disk cache checks only this file's time
#: stamp and size, not the modules it calls into, so a changed buffer layout would
#: otherwise leave a stale callback; tests/test_length_effect_density.py fails until this
#: value is updated, and updating it invalidates the cache.
KERNEL_SOURCE_SHA256 = "a98f188938a40843d6b91d07518533f0893f87d0e26b1e47ad34a15465f10e42"


def kernel_source_sha256() -> str:
    """SHA-256 over the :data:`KERNEL_SOURCES` (each file's bytes, in order).

    Examples
    --------
    >>> len(kernel_source_sha256())
    64
    """
    h = hashlib.sha256()
    for path in KERNEL_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()


class LInt(IntEnum):
    """Header of the packed integer array: sizes, switches and the offsets of the blocks
    of the unconstrained vector (in the order of the PyMC model's value variables). The
    body follows at ``BODY``: per term (``N`` each) answer, dimension, design, rater and
    0-based level; per answer (``NI`` each) system and question."""

    N_TERMS = 0
    N_DIM = 1
    N_DESIGN = 2
    N_RATER = 3
    N_QUESTION = 4
    N_SYSTEM = 5
    N_LEVELS = 6
    N_ITEM = 7
    USE_SYSTEM = 8
    USE_QUESTION = 9
    O_SYSTEM_Z = 10
    O_LOG_SIGMA_Q = 11
    O_QUESTION_Z = 12
    O_LOG_SIGMA_R = 13
    O_RATER_Z = 14
    O_BETA = 15
    O_CUTS = 16
    NDIM = 17
    #: 1: the vector holds the rater intercepts themselves (centred), not rater_z
    CENTRED_RATERS = 18
    #: 1: the vector holds the question intercepts themselves (centred), not question_z
    CENTRED_QUESTIONS = 19
    #: 1: the vector holds the first cut-points less the mean question intercept plus the
    #: mean rater intercept of their dimension (the location the likelihood leaves to the
    #: priors)
    SHIFT_CUTS = 20
    #: 1: per dimension, the rater (and question) block holds sqrt(n) x the mean and the
    #: coordinates of the deviations in a zero-sum basis (an orthonormal rotation)
    ROTATE = 21
    BODY = 22


class LFloat(IntEnum):
    """Header of the packed float array: prior constants and the log density's constant
    term. The body follows at ``BODY``: per answer (``NI``) the standardised log length,
    per term (``N``) its count, then the ``M x (M - 1)`` zero-sum basis of the systems
    (row-major; empty without system effects)."""

    SIGMA_SYSTEM = 0
    MU_BETA = 1
    SIGMA_BETA = 2
    SIGMA_Q = 3  #: half-normal scale of sigma_question
    SIGMA_R = 4  #: half-normal scale of sigma_rater
    MU_CUT = 5
    SIGMA_CUT = 6
    CONST = 7  #: the normalising constants of every prior term
    BODY = 8


@njit(cache=True, nogil=True, inline="always")
def _log_sigmoid_and_grad(v: float) -> tuple[float, float]:
    """``(log sigmoid(v), sigmoid(-v))``: the log-CDF of the logistic at ``v`` and its
    derivative, from one exp and one log1p."""
    if v >= 0:
        e = math.exp(-v)
        return -math.log1p(e), e / (1.0 + e)
    e = math.exp(v)
    return v - math.log1p(e), 1.0 / (1.0 + e)


@njit(cache=True, nogil=True, inline="always")
def _rating_term(
    lp: float,
    e_lp: float,
    y: int,
    kc: int,
    c_hi: float,
    c_lo: float,
    e_hi: float,
    e_lo: float,
    lgap: float,
    qgap: float,
) -> tuple[float, float, float, float, float]:
    """One rating's likelihood at level ``y`` (0-based) as ``(p, l, d lp, d c_hi, d
    c_lo)``: its log-likelihood is ``log(p) + l`` (``p`` a factor of the running product
    of :func:`length_logp_grad`, which takes its logarithm now and then; ``p = 1`` where
    the stable form gives the logarithm itself), with its derivatives by the linear
    predictor ``lp`` and by the cut-points above and below it, where ``c_hi = cut[y]``
    (not read for the top level) and ``c_lo = cut[y - 1]`` (not read for the lowest).
    ``e_lp = exp(lp)``, ``e_hi = exp(c_hi)`` and ``e_lo = exp(c_lo)`` make it divisions
    only; where they over- or underflow, the stable form of two log-sigmoids is used.
    ``lgap`` and ``qgap``: ``log(1 - exp(-gap))`` and ``1 / expm1(gap)`` of the interval
    ``c_hi - c_lo`` (interval levels only)."""
    if y == 0:
        t = e_lp / e_hi  # exp(-(c_hi - lp))
        if t > 1e-300 and t < 1e300:
            ir = 1.0 / (1.0 + t)
            dv = t * ir
            return ir, 0.0, -dv, dv, 0.0
        ll, dv = _log_sigmoid_and_grad(c_hi - lp)
        return 1.0, ll, -dv, dv, 0.0
    if y == kc:
        t = e_lo / e_lp  # exp(-(lp - c_lo))
        if t > 1e-300 and t < 1e300:
            ir = 1.0 / (1.0 + t)
            dv = t * ir
            return ir, 0.0, dv, 0.0, -dv
        ll, dv = _log_sigmoid_and_grad(lp - c_lo)
        return 1.0, ll, dv, 0.0, -dv
    a = e_lp / e_hi  # exp(-hi), hi = c_hi - lp
    b = e_lo / e_lp  # exp(lo), lo = c_lo - lp
    if a > 1e-300 and a < 1e300 and b > 1e-300 and b < 1e300:
        # F(hi) (1 - F(lo)) (1 - exp(-gap)) = (1 - exp(-gap)) / ((1 + exp(-hi)) (1 + exp(lo)))
        ia = 1.0 / (1.0 + a)
        ib = 1.0 / (1.0 + b)
        ghi = a * ia + qgap
        glo = -b * ib - qgap
        return ia * ib, lgap, -(ghi + glo), ghi, glo
    l_hi, d_hi = _log_sigmoid_and_grad(c_hi - lp)
    l_lo, d_lo = _log_sigmoid_and_grad(lp - c_lo)
    ghi = d_hi + qgap
    glo = -d_lo - qgap
    return 1.0, l_hi + l_lo + lgap, -(ghi + glo), ghi, glo


#: the running product of the ratings' probabilities in :func:`length_logp_grad` is logged
#: and restarted below this value; a term enters the product (its count's power, by
#: repeated multiplication) when its probability is above :data:`PRODUCT_MIN_FACTOR` and
#: its count at most :data:`PRODUCT_MAX_COUNT` (the product stays a normal double), else
#: as its logarithm times the count
PRODUCT_FLOOR = 1e-200
PRODUCT_MIN_FACTOR = 1e-20
PRODUCT_MAX_COUNT = 4


@njit(cache=True, nogil=True, inline="always")
def _multiply_in(prod: float, log_part: float, p: float, w: float) -> tuple[float, float]:
    """A term's probability ``p`` to the power of its count ``w`` in a running product:
    ``(prod, log_part)`` after it, the logarithm of the whole being ``log(prod) +
    log_part``. ``p`` enters ``prod`` by ``w`` multiplications when it is above
    :data:`PRODUCT_MIN_FACTOR` and ``w`` a whole number of at most
    :data:`PRODUCT_MAX_COUNT`, else ``w log(p)`` enters ``log_part``; ``prod`` is logged
    into ``log_part`` and restarted below :data:`PRODUCT_FLOOR`."""
    k = int(w)
    if p > PRODUCT_MIN_FACTOR and k == w and k <= PRODUCT_MAX_COUNT:
        for _ in range(k):
            prod *= p
        if prod < PRODUCT_FLOOR:
            log_part += math.log(prod)
            prod = 1.0
    else:
        log_part += w * math.log(p)
    return prod, log_part


@njit(cache=True, nogil=True, error_model="numpy")
def length_logp_grad(x: np.ndarray, grad: np.ndarray, ints: np.ndarray, fl: np.ndarray) -> float:
    """Log density at ``x`` and its gradient (written into ``grad``); ``ints`` and ``fl``
    packed as :class:`LInt` and :class:`LFloat` describe."""
    N, D, G = ints[LInt.N_TERMS], ints[LInt.N_DIM], ints[LInt.N_DESIGN]
    R, Q, M = ints[LInt.N_RATER], ints[LInt.N_QUESTION], ints[LInt.N_SYSTEM]
    K, NI = ints[LInt.N_LEVELS], ints[LInt.N_ITEM]
    use_s, use_q = ints[LInt.USE_SYSTEM], ints[LInt.USE_QUESTION]
    o_sz, o_lsq, o_qz = ints[LInt.O_SYSTEM_Z], ints[LInt.O_LOG_SIGMA_Q], ints[LInt.O_QUESTION_Z]
    o_lsr, o_rz = ints[LInt.O_LOG_SIGMA_R], ints[LInt.O_RATER_Z]
    o_b, o_c = ints[LInt.O_BETA], ints[LInt.O_CUTS]
    b0 = LInt.BODY
    t_item = ints[b0 : b0 + N]
    t_dim = ints[b0 + N : b0 + 2 * N]
    t_des = ints[b0 + 2 * N : b0 + 3 * N]
    t_rat = ints[b0 + 3 * N : b0 + 4 * N]
    t_y = ints[b0 + 4 * N : b0 + 5 * N]
    i_sys = ints[b0 + 5 * N : b0 + 5 * N + NI]
    i_q = ints[b0 + 5 * N + NI : b0 + 5 * N + 2 * NI]
    f0 = LFloat.BODY
    zlen = fl[f0 : f0 + NI]
    wt = fl[f0 + NI : f0 + NI + N]
    m1 = M - 1
    basis = fl[f0 + NI + N : f0 + NI + N + M * m1]
    sig_s, mu_b, sig_b = fl[LFloat.SIGMA_SYSTEM], fl[LFloat.MU_BETA], fl[LFloat.SIGMA_BETA]
    hq, hr = fl[LFloat.SIGMA_Q], fl[LFloat.SIGMA_R]
    mu_c, sig_c = fl[LFloat.MU_CUT], fl[LFloat.SIGMA_CUT]
    KC = K - 1
    for t in range(grad.size):
        grad[t] = 0.0
    total = fl[LFloat.CONST]
    # system effects: s[d] = sigma * B z[d], z standard normal
    sys_eff = np.zeros((D, M))
    if use_s:
        for d in range(D):
            for k in range(m1):
                v = x[o_sz + d * m1 + k]
                total -= 0.5 * v * v
                grad[o_sz + d * m1 + k] -= v
            for m in range(M):
                acc = 0.0
                for k in range(m1):
                    acc += basis[m * m1 + k] * x[o_sz + d * m1 + k]
                sys_eff[d, m] = sig_s * acc
    # question effects: q[q, d] = sigma_q[d] z[q, d]; sigma_q half-normal on the log scale
    sq = np.zeros(D)
    q_eff = np.zeros((Q, D))
    if use_q:
        for d in range(D):
            lv = x[o_lsq + d]
            sq[d] = math.exp(lv)
            r = sq[d] / hq
            total += -0.5 * r * r + lv
            grad[o_lsq + d] += 1.0 - r * r
        for j in range(Q):
            for d in range(D):
                t = o_qz + j * D + d
                total -= 0.5 * x[t] * x[t]
                grad[t] -= x[t]
                q_eff[j, d] = x[t] * sq[d]
    # rater intercepts: sev[r, d] = sigma_r[d] z[r, d]
    sr = np.empty(D)
    for d in range(D):
        lv = x[o_lsr + d]
        sr[d] = math.exp(lv)
        r = sr[d] / hr
        total += -0.5 * r * r + lv
        grad[o_lsr + d] += 1.0 - r * r
    sev = np.empty((R, D))
    for j in range(R):
        for d in range(D):
            t = o_rz + j * D + d
            total -= 0.5 * x[t] * x[t]
            grad[t] -= x[t]
            sev[j, d] = x[t] * sr[d]
    # length effects
    beta = np.empty((D, G))
    for d in range(D):
        for g in range(G):
            t = o_b + d * G + g
            beta[d, g] = x[t]
            z = (x[t] - mu_b) / sig_b
            total -= 0.5 * z * z
            grad[t] -= z / sig_b
    # ordered cut-points: c_0 = raw_0, c_k = c_{k-1} + exp(raw_k) (log-Jacobian raw_k);
    # per gap, log(1 - exp(-gap)) and its derivative 1 / expm1(gap) of the interval terms
    cuts = np.empty((D, G, KC))
    dcuts = np.zeros((D, G, KC))
    lgap = np.zeros((D, G, K))
    qgap = np.zeros((D, G, K))
    for d in range(D):
        for g in range(G):
            base = o_c + (d * G + g) * KC
            c = x[base]
            cuts[d, g, 0] = c
            for k in range(1, KC):
                gap = math.exp(x[base + k])
                c += gap
                cuts[d, g, k] = c
                total += x[base + k]
                grad[base + k] += 1.0
                lgap[d, g, k] = math.log(-math.expm1(-gap))
                qgap[d, g, k] = 1.0 / math.expm1(gap)
            for k in range(KC):
                z = (cuts[d, g, k] - mu_c) / sig_c
                total -= 0.5 * z * z
                dcuts[d, g, k] -= z / sig_c
    # answer intercepts: eta[i, d] = s[d, system(i)] + q[question(i), d]
    eta = np.zeros((NI, D))
    for i in range(NI):
        for d in range(D):
            v = 0.0
            if use_s:
                v += sys_eff[d, i_sys[i]]
            if use_q:
                v += q_eff[i_q[i], d]
            eta[i, d] = v
    # likelihood: one pass over the distinct ratings
    deta = np.zeros((NI, D))
    dbeta = np.zeros((D, G))
    dsev = np.zeros((R, D))
    # exp of every piece of the linear predictor, so that a rating costs one log: its
    # exp(lp) is a product of these, exp(+-(cut - lp)) a quotient
    e_eta = np.empty((NI, D))
    e_bz = np.empty((D, G, NI))
    for i in range(NI):
        for d in range(D):
            e_eta[i, d] = math.exp(eta[i, d])
            for g in range(G):
                e_bz[d, g, i] = math.exp(beta[d, g] * zlen[i])
    e_sev = np.empty((R, D))
    for j in range(R):
        for d in range(D):
            e_sev[j, d] = math.exp(-sev[j, d])
    e_cut = np.exp(cuts)
    prod = 1.0  # the terms' probabilities, logged below PRODUCT_FLOOR (no log per term)
    # terms of one answer x dimension x design x rater (its levels; the layout keeps them
    # next to each other) share the linear predictor and its exponential, and their
    # derivatives by it are summed before they go to the answer, length and rater
    ci, cd, cg, cj = -1, 0, 0, 0
    lp = 0.0
    e_lp = 0.0
    gsum = 0.0
    for n in range(N):
        i, d, g, j, y = t_item[n], t_dim[n], t_des[n], t_rat[n], t_y[n]
        w = wt[n]
        if i != ci or d != cd or g != cg or j != cj:
            if ci >= 0:
                deta[ci, cd] += gsum
                dbeta[cd, cg] += gsum * zlen[ci]
                dsev[cj, cd] -= gsum
            ci, cd, cg, cj = i, d, g, j
            gsum = 0.0
            lp = eta[i, d] + beta[d, g] * zlen[i] - sev[j, d]
            e_lp = e_eta[i, d] * e_bz[d, g, i] * e_sev[j, d]
        yh = min(y, KC - 1)
        yl = max(y - 1, 0)
        p, ll, glp, g_hi, g_lo = _rating_term(
            lp,
            e_lp,
            y,
            KC,
            cuts[d, g, yh],
            cuts[d, g, yl],
            e_cut[d, g, yh],
            e_cut[d, g, yl],
            lgap[d, g, y],
            qgap[d, g, y],
        )
        dcuts[d, g, yh] += w * g_hi
        dcuts[d, g, yl] += w * g_lo
        prod, total = _multiply_in(prod, total + w * ll, p, w)
        gsum += w * glp
    if ci >= 0:
        deta[ci, cd] += gsum
        dbeta[cd, cg] += gsum * zlen[ci]
        dsev[cj, cd] -= gsum
    # chain rule back to the unconstrained vector
    for d in range(D):
        for g in range(G):
            grad[o_b + d * G + g] += dbeta[d, g]
    for j in range(R):
        for d in range(D):
            grad[o_rz + j * D + d] += dsev[j, d] * sr[d]
            grad[o_lsr + d] += dsev[j, d] * sev[j, d]
    dsys = np.zeros((D, M))
    dq = np.zeros((Q, D))
    for i in range(NI):
        for d in range(D):
            if use_s:
                dsys[d, i_sys[i]] += deta[i, d]
            if use_q:
                dq[i_q[i], d] += deta[i, d]
    if use_q:
        for j in range(Q):
            for d in range(D):
                grad[o_qz + j * D + d] += dq[j, d] * sq[d]
                grad[o_lsq + d] += dq[j, d] * q_eff[j, d]
    if use_s:
        for d in range(D):
            for k in range(m1):
                acc = 0.0
                for m in range(M):
                    acc += basis[m * m1 + k] * dsys[d, m]
                grad[o_sz + d * m1 + k] += sig_s * acc
    for d in range(D):
        for g in range(G):
            base = o_c + (d * G + g) * KC
            acc = 0.0
            for k in range(KC - 1, -1, -1):
                acc += dcuts[d, g, k]
                if k == 0:
                    grad[base] += acc
                else:
                    grad[base + k] += acc * math.exp(x[base + k])
    return total + math.log(prod)


@njit(cache=True, nogil=True, inline="always")
def _block_to_model(
    y: np.ndarray, x: np.ndarray, o: int, n: int, stride: int, cen: int, rot: int, sig: float
) -> float:
    """One dimension's intercepts (``n`` entries from ``o``, ``stride`` apart) of the
    sampling form ``y`` into the model's standard normal coordinates ``x``; returns their
    mean intercept. Rotated: entry 0 holds ``sqrt(n)`` x the mean, entries 1.. the
    coordinates of the deviations in the zero-sum basis; centred: intercepts, not
    standard normal coordinates."""
    rn = math.sqrt(n)
    if rot:
        v0 = y[o]
        tot = 0.0
        for k in range(1, n):
            tot += y[o + k * stride]
        norm = tot / (rn + n)
        # e_j = v0 / sqrt(n) + A(w)_j, A PyMC's zero-sum isometry (zero_sum_extend_np)
        for k in range(n - 1):
            x[o + k * stride] = v0 / rn + y[o + (k + 1) * stride] - norm
        x[o + (n - 1) * stride] = v0 / rn - tot / rn
        mean = v0 / rn
    else:
        mean = 0.0
        for k in range(n):
            x[o + k * stride] = y[o + k * stride]
            mean += y[o + k * stride]
        mean /= n
    if cen:
        for k in range(n):
            x[o + k * stride] /= sig
        return mean
    return mean * sig


@njit(cache=True, nogil=True)
def model_coordinates(y: np.ndarray, ints: np.ndarray, x: np.ndarray) -> None:
    """The PyMC graph's unconstrained vector ``x`` (written) of a vector ``y`` of the
    sampling form the header's ``CENTRED_*``, ``ROTATE`` and ``SHIFT_CUTS`` switches
    describe (all 0: the same vector)."""
    D, G, R, Q = ints[LInt.N_DIM], ints[LInt.N_DESIGN], ints[LInt.N_RATER], ints[LInt.N_QUESTION]
    KC = ints[LInt.N_LEVELS] - 1
    use_q = ints[LInt.USE_QUESTION]
    o_lsq, o_qz = ints[LInt.O_LOG_SIGMA_Q], ints[LInt.O_QUESTION_Z]
    o_lsr, o_rz, o_c = ints[LInt.O_LOG_SIGMA_R], ints[LInt.O_RATER_Z], ints[LInt.O_CUTS]
    cen_r, cen_q = ints[LInt.CENTRED_RATERS], ints[LInt.CENTRED_QUESTIONS]
    rot = ints[LInt.ROTATE]
    for t in range(y.size):
        x[t] = y[t]
    for d in range(D):
        mean_r = _block_to_model(y, x, o_rz + d, R, D, cen_r, rot, math.exp(y[o_lsr + d]))
        mean_q = 0.0
        if use_q:
            mean_q = _block_to_model(y, x, o_qz + d, Q, D, cen_q, rot, math.exp(y[o_lsq + d]))
        if ints[LInt.SHIFT_CUTS]:
            for g in range(G):
                x[o_c + (d * G + g) * KC] += mean_q - mean_r


@njit(cache=True, nogil=True, inline="always")
def _block_grad(
    y: np.ndarray,
    x: np.ndarray,
    grad: np.ndarray,
    o: int,
    n: int,
    stride: int,
    cen: int,
    rot: int,
    o_ls: int,
    gmean: float,
) -> float:
    """Carry the gradient of one dimension's intercepts from the model's coordinates
    (``grad`` at ``x``) to the sampling form ``y`` (in place), given ``gmean``, the
    derivative by their mean intercept (the shift of the cut-points); returns the
    log-Jacobian of the block (``-n log sigma`` when centred)."""
    lsig = y[o_ls]
    sig = math.exp(lsig)
    rn = math.sqrt(n)
    g_ls = 0.0
    # derivative by the block's values before the rotation (e_j), into grad
    for k in range(n):
        t = o + k * stride
        if cen:
            g_ls -= grad[t] * x[t]
            grad[t] = grad[t] / sig
    if cen:
        mscale = 1.0
    else:
        mscale = sig
        mean = 0.0
        if rot:
            mean = y[o] / rn
        else:
            for k in range(n):
                mean += y[o + k * stride]
            mean /= n
        g_ls += gmean * sig * mean
    if rot:
        tot_g = 0.0
        for k in range(n - 1):
            tot_g += grad[o + k * stride]
        last = grad[o + (n - 1) * stride]
        g0 = (tot_g + last) / rn + gmean * mscale / rn
        norm = tot_g / (rn + n)
        lastc = last / rn
        for k in range(n - 1, 0, -1):
            grad[o + k * stride] = grad[o + (k - 1) * stride] - norm - lastc
        grad[o] = g0
    else:
        for k in range(n):
            grad[o + k * stride] += gmean * mscale / n
    grad[o_ls] += g_ls
    if cen:
        grad[o_ls] -= n
        return -n * lsig
    return 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def length_form_logp_grad(
    y: np.ndarray, grad: np.ndarray, ints: np.ndarray, fl: np.ndarray
) -> float:
    """Log density and gradient (into ``grad``) of the sampling form ``y``
    (:func:`model_coordinates`): :func:`length_logp_grad` at the model's vector, plus the
    log-Jacobian of the change of variables (``-R log sigma_r[d]`` for centred rater
    intercepts, ``-Q log sigma_q[d]`` for centred question intercepts; the rotation and
    the shift of the cut-points have unit Jacobians)."""
    D, G, R, Q = ints[LInt.N_DIM], ints[LInt.N_DESIGN], ints[LInt.N_RATER], ints[LInt.N_QUESTION]
    KC = ints[LInt.N_LEVELS] - 1
    use_q = ints[LInt.USE_QUESTION]
    o_lsq, o_qz = ints[LInt.O_LOG_SIGMA_Q], ints[LInt.O_QUESTION_Z]
    o_lsr, o_rz, o_c = ints[LInt.O_LOG_SIGMA_R], ints[LInt.O_RATER_Z], ints[LInt.O_CUTS]
    cen_r, cen_q = ints[LInt.CENTRED_RATERS], ints[LInt.CENTRED_QUESTIONS]
    rot, shift = ints[LInt.ROTATE], ints[LInt.SHIFT_CUTS]
    if cen_r == 0 and cen_q == 0 and shift == 0 and rot == 0:
        return length_logp_grad(y, grad, ints, fl)
    x = np.empty(y.size)
    model_coordinates(y, ints, x)
    total = length_logp_grad(x, grad, ints, fl)
    # grad holds d/dx; carry it to y (x's rater and question blocks depend on y's and on
    # the scales, the first cut-points on the mean intercepts; the rest is the same)
    for d in range(D):
        gshift = 0.0
        if shift:
            for g in range(G):
                gshift += grad[o_c + (d * G + g) * KC]
        total += _block_grad(y, x, grad, o_rz + d, R, D, cen_r, rot, o_lsr + d, -gshift)
        if use_q:
            total += _block_grad(y, x, grad, o_qz + d, Q, D, cen_q, rot, o_lsq + d, gshift)
    return total


@cfunc(LOGP_SIGNATURE, cache=True)
def length_logp_cb(dim, x_, out_, logp_, user_data):
    """nutpie's log-density callback of :class:`LengthEffect` (user data: the packed
    integers and floats of :func:`length_form_logp_grad`)."""
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = read_user_data(user_data)
    lp = length_form_logp_grad(x, out, ints, floats)
    logp[0] = lp
    return status_code(lp, out)


@njit(cache=True, nogil=True, error_model="numpy")
def length_answer_loglik(
    eta: np.ndarray,
    beta: np.ndarray,
    sev: np.ndarray,
    cuts: np.ndarray,
    ints: np.ndarray,
    fl: np.ndarray,
    out: np.ndarray,
) -> None:
    """Log-likelihood of every answer x design, summed over its ratings, per draw: ``eta``
    (S, NI, D) answer intercepts, ``beta`` (S, D, G), ``sev`` (S, R, D), ``cuts``
    (S, D, G, K - 1); written into ``out`` (S, NI * G, zeroed first); the data packed as
    for :func:`length_logp_grad`. The terms are visited answer x design by answer x design,
    their probabilities multiplied into one product per answer x design (logged below
    :data:`PRODUCT_FLOOR`, as in :func:`length_logp_grad`): a logarithm per answer, not
    per term."""
    N, G, K = ints[LInt.N_TERMS], ints[LInt.N_DESIGN], ints[LInt.N_LEVELS]
    NI = ints[LInt.N_ITEM]
    b0 = LInt.BODY
    t_item = ints[b0 : b0 + N]
    t_dim = ints[b0 + N : b0 + 2 * N]
    t_des = ints[b0 + 2 * N : b0 + 3 * N]
    t_rat = ints[b0 + 3 * N : b0 + 4 * N]
    t_y = ints[b0 + 4 * N : b0 + 5 * N]
    f0 = LFloat.BODY
    zlen = fl[f0 : f0 + NI]
    wt = fl[f0 + NI : f0 + NI + N]
    KC = K - 1
    R, D, NIt = sev.shape[1], sev.shape[2], eta.shape[1]
    e_eta = np.empty((NIt, D))
    e_bz = np.empty((D, G, NIt))
    e_sev = np.empty((R, D))
    e_cut = np.empty((D, G, KC))
    lgap = np.zeros((D, G, K))
    group = t_item * G + t_des
    order = np.argsort(group, kind="mergesort")
    for s in range(out.shape[0]):
        for t in range(out.shape[1]):
            out[s, t] = 0.0
        for i in range(NIt):
            for d in range(D):
                e_eta[i, d] = math.exp(eta[s, i, d])
                for g in range(G):
                    e_bz[d, g, i] = math.exp(beta[s, d, g] * zlen[i])
        for j in range(R):
            for d in range(D):
                e_sev[j, d] = math.exp(-sev[s, j, d])
        for d in range(D):
            for g in range(G):
                for k in range(KC):
                    e_cut[d, g, k] = math.exp(cuts[s, d, g, k])
                for k in range(1, KC):
                    lgap[d, g, k] = math.log(
                        -math.expm1(-(cuts[s, d, g, k] - cuts[s, d, g, k - 1]))
                    )
        cur = -1  # the answer x design whose terms are being summed
        acc = 0.0
        prod = 1.0
        for m in range(N):
            n = order[m]
            if group[n] != cur:
                if cur >= 0:
                    out[s, cur] += acc + math.log(prod)
                cur, acc, prod = group[n], 0.0, 1.0
            i, d, g, j, y = t_item[n], t_dim[n], t_des[n], t_rat[n], t_y[n]
            lp = eta[s, i, d] + beta[s, d, g] * zlen[i] - sev[s, j, d]
            yh = min(y, KC - 1)
            yl = max(y - 1, 0)
            term = _rating_term(
                lp,
                e_eta[i, d] * e_bz[d, g, i] * e_sev[j, d],
                y,
                KC,
                cuts[s, d, g, yh],
                cuts[s, d, g, yl],
                e_cut[d, g, yh],
                e_cut[d, g, yl],
                lgap[d, g, y],
                0.0,
            )
            w = wt[n]
            prod, acc = _multiply_in(prod, acc + w * term[1], term[0], w)
        if cur >= 0:
            out[s, cur] += acc + math.log(prod)


__all__ = [
    "KERNEL_SOURCES",
    "KERNEL_SOURCE_SHA256",
    "PRODUCT_FLOOR",
    "PRODUCT_MAX_COUNT",
    "PRODUCT_MIN_FACTOR",
    "LFloat",
    "LInt",
    "kernel_source_sha256",
    "length_answer_loglik",
    "length_form_logp_grad",
    "length_logp_cb",
    "length_logp_grad",
    "model_coordinates",
]
