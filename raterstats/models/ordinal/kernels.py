"""Compiled log density of the ordinal rater model, with a hand-written gradient (numba).

These kernels override, for speed, the NumPy reference of
:mod:`raterstats.models.ordinal.reference`: :func:`ordinal_logp_grad` computes
:func:`~raterstats.models.ordinal.reference.log_density` (the log density of the PyMC model
:meth:`~raterstats.models.ordinal.OrdinalRaters.build_model` on the same unconstrained
parameters, up to a constant) and its gradient in one pass over the ratings, and
:func:`rating_loglik_logit` the logistic-link
:func:`~raterstats.models.ordinal.reference.rating_log_likelihood`. Compiling the PyTensor
graph costs one to two minutes per fit and its gradient spends most of its time in
scatter-adds; numba compiles these once per installation (``cache=True``). The tests check
both against the NumPy reference, and the log density and its gradient against the PyMC
model.

The kernels read the unconstrained vector ``x`` by block offsets, the integer settings and
the prior constants at the positions named by :class:`~raterstats.models.ordinal.layout.Block`
(which says what each block holds), :class:`~raterstats.models.ordinal.layout.Setting` and
:class:`~raterstats.models.ordinal.layout.PriorConst`;
:class:`~raterstats.models.ordinal.layout.OrdinalLayout` produces the arrays.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr
from numba import njit

from raterstats.models.ordinal.data import OrdinalData
from raterstats.models.ordinal.kernels_interval import (
    GAP_MAX,
    PRODUCT_FLOOR,
    interval_p_grad,
    tail_p_grad,
)
from raterstats.models.ordinal.kernels_marginal import sentence_marginal
from raterstats.models.ordinal.layout import Block, PriorConst, Setting
from raterstats.models.ordinal.reference import length_effects
from raterstats.threads import over_halves

#: SHA-256 of layout.py, whose enum values numba compiles into the kernels below. numba's
#: on-disk cache checks only this file's time stamp and size, not the modules it reads
#: globals from, so a changed layout.py would otherwise leave stale kernels that read the
#: arrays at the old positions. tests/ordinal/test_ordinal_structure.py fails until this
#: value is updated, and updating it invalidates the cache.
LAYOUT_SOURCE_SHA256 = "45d9b210fd9f8a20eeef3caac257fc51ad431eab73aff9834037df9134268d0a"

#: SHA-256 of kernels_interval.py, whose functions numba compiles into the kernels below
#: (the same reason as :data:`LAYOUT_SOURCE_SHA256`; tests/ordinal/test_ordinal_reference.py
#: checks it).
INTERVAL_SOURCE_SHA256 = "3b5df63a7241de621df687338a352ae8af5060db3574752b8ed6be97b235218d"
#: SHA-256 of kernels_marginal.py (likewise; the same test checks it).
MARGINAL_SOURCE_SHA256 = "3e0a34a30e2566e4385b949d1868716de56119917cb420009a90399836b500bf"


@njit(cache=True, nogil=True)
def zero_sum_extend(y: np.ndarray, n: int, width: int, out: np.ndarray) -> None:
    """Map ``y`` ((n - 1) x width, row-major) to the zero-sum ``out`` (n x width) along
    the first axis: PyMC's ``ZeroSumTransform`` (an isometry onto the vectors that sum to
    zero, O(n)), so n - 1 standard normals give a zero-sum normal vector."""
    rn = math.sqrt(n)
    for c in range(width):
        tot = 0.0
        for k in range(n - 1):
            tot += y[k * width + c]
        norm = tot / (rn + n)
        for k in range(n - 1):
            out[k, c] = y[k * width + c] - norm
        out[n - 1, c] = -tot / rn


@njit(cache=True, nogil=True)
def zero_sum_adjoint(g_out: np.ndarray, n: int, width: int, grad: np.ndarray, o: int) -> None:
    """Add the gradient with respect to ``y`` of :func:`zero_sum_extend` into
    ``grad[o:]`` given the gradient ``g_out`` (n x width) with respect to ``out``."""
    rn = math.sqrt(n)
    for c in range(width):
        tot = 0.0
        for k in range(n - 1):
            tot += g_out[k, c]
        for k in range(n - 1):
            grad[o + k * width + c] += g_out[k, c] - tot / (rn + n) - g_out[n - 1, c] / rn


@njit(cache=True, nogil=True)
def _halfnormal_log(x: np.ndarray, j: int, scale: float, grad: np.ndarray) -> tuple[float, float]:
    """HalfNormal(scale) prior of sigma = exp(x[j]) with its log-Jacobian; returns
    (log density up to a constant, sigma) and adds the gradient."""
    u = x[j]
    sig = math.exp(u)
    r = sig / scale
    grad[j] += 1.0 - r * r
    return -0.5 * r * r + u, sig


@njit(cache=True, nogil=True)
def compound_symmetry_prior(
    x: np.ndarray,
    start: int,
    n: int,
    width: int,
    s_rater: float,
    s_cell: float,
    rater_at: int,
    cell_at: int,
    grad: np.ndarray,
) -> float:
    """Prior of the raters' cell totals with the rater-level deviation integrated out.

    ``x[start:]`` holds ``n`` cells x ``width`` zero-sum basis coordinates (row-major);
    for each coordinate ``k`` the totals ``t_ck = r_k + c_ck`` over the cells, with
    ``r_k ~ N(0, s_rater)`` and ``c_ck ~ N(0, s_cell)``, are jointly
    ``N(0, A I + B J)`` (``A = s_cell^2``, ``B = s_rater^2``, ``J`` all ones), whose log
    density is ``-(q / A - B s^2 / (A C)) / 2 - (n - 1) log(s_cell) - log(C) / 2`` with
    ``s`` and ``q`` the sum and sum of squares of the totals and ``C = A + n B``. Returns
    it (up to a constant) and adds its gradient: to the totals, and to ``log s_rater``
    (``x[rater_at]``) and ``log s_cell`` (``x[cell_at]``)."""
    A = s_cell * s_cell
    B = s_rater * s_rater
    C = A + n * B
    total = 0.0
    dA = 0.0
    dB = 0.0
    for k in range(width):
        sm = 0.0
        sq = 0.0
        for c in range(n):
            v = x[start + c * width + k]
            sm += v
            sq += v * v
        total += -0.5 * (sq / A - B * sm * sm / (A * C))
        shared = B * sm / (A * C)
        for c in range(n):
            t = start + c * width + k
            grad[t] -= x[t] / A - shared
        dA += 0.5 * sq / (A * A) - 0.5 * B * sm * sm * (2.0 * A + n * B) / (A * A * C * C)
        dB += 0.5 * sm * sm / (C * C)
    total += width * (-(n - 1) * math.log(s_cell) - 0.5 * math.log(C))
    dA -= width * (0.5 * (n - 1) / A + 0.5 / C)
    dB -= width * 0.5 * n / C
    grad[cell_at] += 2.0 * A * dA  # d / d log s_cell
    grad[rater_at] += 2.0 * B * dB
    return total


@njit(cache=True, nogil=True)
def _latent_prior(
    x: np.ndarray,
    start: int,
    stop: int,
    log_s_at: int,
    s: np.ndarray,
    centred: int,
    grad: np.ndarray,
) -> float:
    """Prior of the zero-sum coordinates ``x[start:stop]`` ((n - 1) x D, row-major) of
    question effects or answer residuals with scale ``s[d]`` (sampled as ``log s`` at
    ``x[log_s_at + d]``): standard normals (non-centred) or ``N(0, s[d])`` (centred);
    returns the log density and adds its gradient."""
    D = s.size
    total = 0.0
    for t in range(start, stop):
        if centred:
            d = (t - start) % D
            z = x[t] / s[d]
            total += -0.5 * z * z - math.log(s[d])
            grad[t] -= z / s[d]
            grad[log_s_at + d] += z * z - 1.0
        else:
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def ordinal_logp_grad(
    x: np.ndarray,
    grad: np.ndarray,
    off: np.ndarray,
    settings: np.ndarray,
    prior: np.ndarray,
    obs_item: np.ndarray,
    obs_dim: np.ndarray,
    obs_design: np.ndarray,
    obs_rater: np.ndarray,
    obs_sent: np.ndarray,
    obs_y: np.ndarray,
    item_sys: np.ndarray,
    item_q: np.ndarray,
    zlen: np.ndarray,
    basis_m: np.ndarray,
    basis_h: np.ndarray,
) -> float:
    """Log density (up to a constant) and its gradient (written into ``grad``).

    ``off`` holds the offsets of the blocks of ``x`` by :class:`Block` (and its length
    last), ``settings`` the sizes and switches by :class:`Setting` and ``prior`` the prior
    constants by :class:`PriorConst` (``OrdinalLayout`` makes all three); then the
    per-rating indices (0-based level ``obs_y``; ``obs_sent`` 1-based, 0 for whole-answer
    ratings), the per-answer system, question and standardised log length, and the
    zero-sum bases of the systems and the human panel.

    Degenerate points (cut-points that coincide after an underflow) give a non-finite
    value, which the sampler rejects, rather than an exception (``error_model="numpy"``).
    """
    D, G, H = settings[Setting.N_DIM], settings[Setting.N_DESIGN], settings[Setting.N_HUMAN]
    J, M, Q = settings[Setting.N_JUDGE], settings[Setting.N_SYSTEM], settings[Setting.N_QUESTION]
    n_item, S, K = (
        settings[Setting.N_ITEM],
        settings[Setting.N_SENTENCE],
        settings[Setting.N_LEVELS],
    )
    use_sys, use_q = settings[Setting.USE_SYSTEM], settings[Setting.USE_QUESTION]
    use_sent, use_len = settings[Setting.USE_SENTENCES], settings[Setting.USE_LENGTH]
    lbr, ref = settings[Setting.LENGTH_BY_RATER], settings[Setting.REFERENCE]
    R = H + J
    # MAP's marginal form: the ratings from MARGINAL_START on have their sentence deviations
    # integrated out by SENTENCE_NODES Gauss-Hermite nodes (kernels_marginal.py), whose
    # nodes and log-weights follow the latent units in ``prior``; WZ is then not read
    n_gh = settings[Setting.SENTENCE_NODES]
    n_joint = settings[Setting.MARGINAL_START] if n_gh > 0 else obs_y.size
    for t in range(grad.size):
        grad[t] = 0.0
    total = 0.0
    # latent units: the priors of UNIT_OF_DIMENSION are stated in the unit of their
    # dimension, those of UNIT_OF_ALL in the largest unit (see layout.py)
    unit = prior[PriorConst.UNIT : PriorConst.UNIT + D]
    umax = prior[PriorConst.UNIT_MAX]

    # ---- latent quality -------------------------------------------------------------------
    sys_eff = np.zeros((D, M))
    o = off[Block.SYS_Z]
    if use_sys:
        for d in range(D):
            sig_s = prior[PriorConst.SYSTEM_SIGMA] * unit[d]
            for m in range(M):
                acc = 0.0
                for k in range(M - 1):
                    acc += basis_m[m, k] * x[o + d * (M - 1) + k]
                sys_eff[d, m] = sig_s * acc
        for t in range(off[Block.SYS_Z], off[Block.SYS_Z + 1]):
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
    # question effects and answer residuals: zero-sum standard normals (Q - 1 and I - 1
    # free coordinates per dimension), so that the cut-points alone carry the location
    # non-centred: x = z ~ N(0, 1), effect = sigma * z; centred (``LATENT_CENTRED``, the
    # better geometry when many ratings pin each answer down): x ~ N(0, sigma), effect = x
    lat_cen = settings[Setting.LATENT_CENTRED]
    q_cen = settings[Setting.QUESTION_CENTRED]
    sq = np.zeros(D)
    qfull = np.zeros((Q, D))
    if use_q:
        for d in range(D):
            lpd, sq[d] = _halfnormal_log(
                x, off[Block.LOG_SQ] + d, prior[PriorConst.SIGMA_QUESTION] * unit[d], grad
            )
            total += lpd
        total += _latent_prior(
            x, off[Block.QZ], off[Block.QZ + 1], off[Block.LOG_SQ], sq, q_cen, grad
        )
        zero_sum_extend(x[off[Block.QZ] : off[Block.QZ + 1]], Q, D, qfull)
    se = np.zeros(D)
    for d in range(D):
        lpd, se[d] = _halfnormal_log(
            x, off[Block.LOG_SE] + d, prior[PriorConst.SIGMA_RESIDUAL] * unit[d], grad
        )
        total += lpd
    total += _latent_prior(
        x, off[Block.EZ], off[Block.EZ + 1], off[Block.LOG_SE], se, lat_cen, grad
    )
    efull = np.empty((n_item, D))
    zero_sum_extend(x[off[Block.EZ] : off[Block.EZ + 1]], n_item, D, efull)
    # the multipliers of the sampled coordinates in eta
    me = np.ones(D) if lat_cen else se
    mq = np.ones(D) if q_cen else sq
    eta = np.empty((n_item, D))
    for i in range(n_item):
        for d in range(D):
            v = sys_eff[d, item_sys[i]] + me[d] * efull[i, d]
            if use_q:
                v += mq[d] * qfull[item_q[i], d]
            eta[i, d] = v

    # ---- raters ---------------------------------------------------------------------------
    lm = np.zeros((D, G))
    for d in range(D):
        c = 0
        for g in range(G):
            if g == ref:
                continue
            t = off[Block.LM] + d * (G - 1) + c
            lm[d, g] = x[t]
            z = (x[t] - prior[PriorConst.LM_MU]) / prior[PriorConst.LM_SD]
            total += -0.5 * z * z
            grad[t] -= z / prior[PriorConst.LM_SD]
            c += 1

    # sentence scale: x holds log tau_d + m_{d, gs} (the scale of sentence deviations in
    # the units of the sentence design's raters, ``gs``; -1: log tau_d itself), a shear
    # with unit Jacobian that takes out the trade-off between the two
    gs = settings[Setting.SENTENCE_DESIGN]
    lm_at = np.full(D, -1)
    if gs >= 0:
        for d in range(D):
            lm_at[d] = off[Block.LM] + d * (G - 1) + (gs if gs < ref else gs - 1)
    tau = np.zeros(D)
    if use_sent:
        for d in range(D):
            t = off[Block.LOG_TAU] + d
            log_tau = x[t] - (lm[d, gs] if gs >= 0 else 0.0)
            tau[d] = math.exp(log_tau)
            r_ = tau[d] / (prior[PriorConst.SIGMA_SENTENCE] * unit[d])
            total += -0.5 * r_ * r_ + log_tau
            gt = 1.0 - r_ * r_
            grad[t] += gt
            if gs >= 0:
                grad[lm_at[d]] -= gt
        for t in range(off[Block.WZ], off[Block.WZ + 1] if n_gh == 0 else 0):
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
    lpd, su = _halfnormal_log(x, off[Block.LOG_SU], prior[PriorConst.SIGMA_DISC_RATER], grad)
    total += lpd
    lpd, sv = _halfnormal_log(x, off[Block.LOG_SV], prior[PriorConst.SIGMA_DISC_CELL], grad)
    total += lpd
    lpd, sa = _halfnormal_log(x, off[Block.LOG_SA], prior[PriorConst.SIGMA_SEV_RATER] * umax, grad)
    total += lpd
    lpd, sb = _halfnormal_log(x, off[Block.LOG_SB], prior[PriorConst.SIGMA_SEV_CELL] * umax, grad)
    total += lpd
    # rater / cell deviations in the zero-sum basis: non-centred (x = z, deviation = s * B z)
    # or centred and marginal (the better geometry when every rater cell holds many
    # ratings): the blocks VZ and BZ hold the cell totals u + v and a + b themselves, the
    # rater-level deviations integrated out (UZ and AZ are empty), see
    # compound_symmetry_prior
    cen = settings[Setting.CENTRED]
    if cen:
        total += compound_symmetry_prior(
            x, off[Block.VZ], D * G, H - 1, su, sv, off[Block.LOG_SU], off[Block.LOG_SV], grad
        )
        total += compound_symmetry_prior(
            x, off[Block.BZ], D * G, H - 1, sa, sb, off[Block.LOG_SA], off[Block.LOG_SB], grad
        )
    else:
        for blk in (Block.UZ, Block.VZ, Block.AZ, Block.BZ):
            for t in range(off[blk], off[blk + 1]):
                total += -0.5 * x[t] * x[t]
                grad[t] -= x[t]
    mu_ = 0.0 if cen else su
    mv = 1.0 if cen else sv
    ma = 0.0 if cen else sa
    mb = 1.0 if cen else sb
    sl = 0.0
    if use_len and lbr:
        lpd, sl = _halfnormal_log(
            x, off[Block.LOG_SL], prior[PriorConst.SIGMA_LENGTH_RATER] * umax, grad
        )
        total += lpd
        for t in range(off[Block.LZ], off[Block.LZ + 1]):
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
    # severity of humans: a = B az (zero-sum over humans), b[d, g] = B bz[d, g]
    a = np.zeros(H)
    if not cen:
        for j in range(H):
            acc = 0.0
            for k in range(H - 1):
                acc += basis_h[j, k] * x[off[Block.AZ] + k]
            a[j] = acc
    b = np.zeros((D, G, H))
    for d in range(D):
        for g in range(G):
            base = off[Block.BZ] + (d * G + g) * (H - 1)
            for j in range(H):
                acc = 0.0
                for k in range(H - 1):
                    acc += basis_h[j, k] * x[base + k]
                b[d, g, j] = acc
    # discrimination deviations of humans, zero-sum over the panel: u = B uz, v[d, g] = B vz
    uu = np.zeros(H)
    if not cen:
        for j in range(H):
            acc = 0.0
            for k in range(H - 1):
                acc += basis_h[j, k] * x[off[Block.UZ] + k]
            uu[j] = acc
    vv = np.zeros((D, G, H))
    for d in range(D):
        for g in range(G):
            base = off[Block.VZ] + (d * G + g) * (H - 1)
            for j in range(H):
                acc = 0.0
                for k in range(H - 1):
                    acc += basis_h[j, k] * x[base + k]
                vv[d, g, j] = acc
    lam = np.empty((R, D, G))
    sev = np.empty((R, D, G))
    bet = np.zeros((R, D, G))
    for j in range(H):
        for d in range(D):
            for g in range(G):
                cell = (j * D + d) * G + g
                lam[j, d, g] = math.exp(lm[d, g] + mu_ * uu[j] + mv * vv[d, g, j])
                sev[j, d, g] = ma * a[j] + mb * b[d, g, j]
                if use_len:
                    bet[j, d, g] = x[off[Block.BETA] + d * G + g]
                    if lbr:
                        bet[j, d, g] += sl * x[off[Block.LZ] + cell]
    if use_len:
        for t in range(off[Block.BETA], off[Block.BETA + 1]):
            u_ = unit[(t - off[Block.BETA]) // G]  # D x G
            sd = prior[PriorConst.BETA_SD] * u_
            z = (x[t] - prior[PriorConst.BETA_MU] * u_) / sd
            total += -0.5 * z * z
            grad[t] -= z / sd
    for jj in range(J):
        for d in range(D):
            for g in range(G):
                cj = (jj * D + d) * G + g
                t = off[Block.JL] + cj
                z = (x[t] - prior[PriorConst.JL_MU]) / prior[PriorConst.JL_SD]
                total += -0.5 * z * z
                grad[t] -= z / prior[PriorConst.JL_SD]
                lam[H + jj, d, g] = math.exp(x[t])
                t = off[Block.JS] + cj
                sd = prior[PriorConst.JS_SD] * unit[d]
                z = (x[t] - prior[PriorConst.JS_MU] * unit[d]) / sd
                total += -0.5 * z * z
                grad[t] -= z / sd
                sev[H + jj, d, g] = x[t]
                if use_len:
                    t = off[Block.JB] + cj
                    sd = prior[PriorConst.JB_SD] * unit[d]
                    z = (x[t] - prior[PriorConst.JB_MU] * unit[d]) / sd
                    total += -0.5 * z * z
                    grad[t] -= z / sd
                    bet[H + jj, d, g] = x[t]

    # ---- cut-points (ordered transform) ---------------------------------------------------
    k1 = K - 1
    cuts = np.empty((D, G, k1))
    # exp and expm1 of each gap between neighbouring cut-points (index k: cut k - gap k-1;
    # 0 unused): an interval term then needs one exponential, see interval_p_grad
    egap = np.zeros((D, G, k1))
    egm1 = np.zeros((D, G, k1))
    for d in range(D):
        for g in range(G):
            base = off[Block.CUTS] + (d * G + g) * k1
            c = x[base]
            cuts[d, g, 0] = c
            for k in range(1, k1):
                gap = math.exp(x[base + k])
                c += gap
                cuts[d, g, k] = c
                egap[d, g, k] = math.exp(gap) if gap < GAP_MAX else np.inf
                egm1[d, g, k] = math.expm1(gap)
                total += x[base + k]  # log-Jacobian
                grad[base + k] += 1.0
    dcuts = np.zeros((D, G, k1))
    for d in range(D):
        sd = prior[PriorConst.CUT_SD] * unit[d]
        for g in range(G):
            for k in range(k1):
                z = (cuts[d, g, k] - prior[PriorConst.CUT_MU] * unit[d]) / sd
                total += -0.5 * z * z
                dcuts[d, g, k] -= z / sd

    # ---- likelihood -----------------------------------------------------------------------
    deta = np.zeros((n_item, D))
    dw = np.zeros((S + 1, D))
    dlam = np.zeros((R, D, G))
    dsev = np.zeros((R, D, G))
    dbet = np.zeros((R, D, G))
    # the ratings' probabilities are multiplied into ``prod``, logged below PRODUCT_FLOOR
    prod = 1.0
    for r in range(n_joint):
        i = obs_item[r]
        d = obs_dim[r]
        g = obs_design[r]
        j = obs_rater[r]
        s = obs_sent[r]
        y = obs_y[r]
        lat = eta[i, d]
        if s > 0:
            lat += tau[d] * x[off[Block.WZ] + (s - 1) * D + d]
        lp = lam[j, d, g] * lat - sev[j, d, g] + bet[j, d, g] * zlen[i]
        if y == 0 or y == K - 1:
            # one tail: F(u) and its derivative F(-u) share one exponential and a division
            u = cuts[d, g, 0] - lp if y == 0 else lp - cuts[d, g, k1 - 1]
            pu, lpu, gu = tail_p_grad(u)
            prod *= pu
            total += lpu
            if y == 0:
                dcuts[d, g, 0] += gu
                glp = -gu
            else:
                dcuts[d, g, k1 - 1] -= gu
                glp = gu
        else:
            hi = cuts[d, g, y] - lp
            lo = cuts[d, g, y - 1] - lp
            pr, lpr, ghi, glo = interval_p_grad(hi, lo, egap[d, g, y], egm1[d, g, y])
            prod *= pr
            total += lpr
            dcuts[d, g, y] += ghi
            dcuts[d, g, y - 1] += glo
            glp = -(ghi + glo)
        if prod < PRODUCT_FLOOR:
            total += math.log(prod)
            prod = 1.0
        dlam[j, d, g] += glp * lat
        dsev[j, d, g] -= glp
        dbet[j, d, g] += glp * zlen[i]
        dl = glp * lam[j, d, g]
        deta[i, d] += dl
        if s > 0:
            dw[s, d] += dl
    total += math.log(prod)
    dtau = np.zeros(D)
    if n_gh > 0:  # grad's WZ block receives the sentences' posterior means of z
        nodes = prior[PriorConst.UNIT + D : PriorConst.UNIT + D + n_gh]
        total += sentence_marginal(
            n_joint, obs_item, obs_dim, obs_design, obs_rater, obs_sent, obs_y, zlen,
            eta, tau, lam, sev, bet, cuts, egap, nodes,
            prior[PriorConst.UNIT + D + n_gh : PriorConst.UNIT + D + 2 * n_gh],
            dcuts, deta, dlam, dsev, dbet, dtau,
            grad[off[Block.WZ] : off[Block.WZ + 1]],
        )  # fmt: skip

    # ---- chain rule back to x -------------------------------------------------------------
    # cut-points: c_0 = x_0, c_k = c_{k-1} + exp(x_k)
    for d in range(D):
        for g in range(G):
            base = off[Block.CUTS] + (d * G + g) * k1
            acc = 0.0
            for k in range(k1 - 1, -1, -1):
                acc += dcuts[d, g, k]
                if k == 0:
                    grad[base] += acc
                else:
                    grad[base + k] += acc * math.exp(x[base + k])
    # sentences
    if use_sent:
        for s in range(1, S + 1 if n_gh == 0 else 1):
            for d in range(D):
                t = off[Block.WZ] + (s - 1) * D + d
                grad[t] += dw[s, d] * tau[d]
                dtau[d] += dw[s, d] * x[t]
        for d in range(D):
            gt = dtau[d] * tau[d]
            grad[off[Block.LOG_TAU] + d] += gt
            if gs >= 0:
                grad[lm_at[d]] -= gt
    # latent quality
    dse = np.zeros(D)
    dsq = np.zeros(D)
    dsys = np.zeros((D, M))
    defull = np.empty((n_item, D))
    dqfull = np.zeros((Q, D))
    for i in range(n_item):
        for d in range(D):
            g_ = deta[i, d]
            defull[i, d] = g_ * me[d]
            dse[d] += g_ * efull[i, d]
            if use_q:
                dqfull[item_q[i], d] += g_ * mq[d]
                dsq[d] += g_ * qfull[item_q[i], d]
            dsys[d, item_sys[i]] += g_
    zero_sum_adjoint(defull, n_item, D, grad, off[Block.EZ])
    if use_q:
        zero_sum_adjoint(dqfull, Q, D, grad, off[Block.QZ])
    for d in range(D):  # the scales enter eta only in the non-centred form
        if not lat_cen:
            grad[off[Block.LOG_SE] + d] += dse[d] * se[d]
        if use_q and not q_cen:
            grad[off[Block.LOG_SQ] + d] += dsq[d] * sq[d]
    if use_sys:
        for d in range(D):
            sig_s = prior[PriorConst.SYSTEM_SIGMA] * unit[d]
            for k in range(M - 1):
                acc = 0.0
                for m in range(M):
                    acc += basis_m[m, k] * dsys[d, m]
                grad[off[Block.SYS_Z] + d * (M - 1) + k] += sig_s * acc
    # human raters
    dsu = 0.0
    dsv = 0.0
    dsa = 0.0
    dsb = 0.0
    dsl = 0.0
    da = np.zeros(H)
    du = np.zeros(H)
    dv = np.zeros((D, G, H))
    for j in range(H):
        for d in range(D):
            for g in range(G):
                cell = (j * D + d) * G + g
                dll = dlam[j, d, g] * lam[j, d, g]  # d / d log lambda
                if g != ref:
                    c = g if g < ref else g - 1
                    grad[off[Block.LM] + d * (G - 1) + c] += dll
                dsu += dll * uu[j]
                du[j] += dll * mu_
                dsv += dll * vv[d, g, j]
                dv[d, g, j] += dll * mv
                ds_ = dsev[j, d, g]
                dsa += ds_ * a[j]
                da[j] += ds_ * ma
                dsb += ds_ * b[d, g, j]
                if use_len:
                    grad[off[Block.BETA] + d * G + g] += dbet[j, d, g]
                    if lbr:
                        dsl += dbet[j, d, g] * x[off[Block.LZ] + cell]
                        grad[off[Block.LZ] + cell] += dbet[j, d, g] * sl
    if not cen:  # the scales enter the likelihood only in the non-centred form
        grad[off[Block.LOG_SU]] += dsu * su
        grad[off[Block.LOG_SV]] += dsv * sv
        grad[off[Block.LOG_SA]] += dsa * sa
        grad[off[Block.LOG_SB]] += dsb * sb
    if use_len and lbr:
        grad[off[Block.LOG_SL]] += dsl * sl
    if not cen:  # the rater-level blocks are empty in the centred (marginal) form
        for k in range(H - 1):
            acc = 0.0
            acc_u = 0.0
            for j in range(H):
                acc += basis_h[j, k] * da[j]
                acc_u += basis_h[j, k] * du[j]
            grad[off[Block.AZ] + k] += acc
            grad[off[Block.UZ] + k] += acc_u
    for d in range(D):
        for g in range(G):
            base = off[Block.VZ] + (d * G + g) * (H - 1)
            for k in range(H - 1):
                acc = 0.0
                for j in range(H):
                    acc += basis_h[j, k] * dv[d, g, j]
                grad[base + k] += acc
    for d in range(D):
        for g in range(G):
            base = off[Block.BZ] + (d * G + g) * (H - 1)
            for k in range(H - 1):
                acc = 0.0
                for j in range(H):
                    acc += basis_h[j, k] * dsev[j, d, g]
                grad[base + k] += acc * mb
    # judges
    for jj in range(J):
        for d in range(D):
            for g in range(G):
                cj = (jj * D + d) * G + g
                grad[off[Block.JL] + cj] += dlam[H + jj, d, g] * lam[H + jj, d, g]
                grad[off[Block.JS] + cj] += dsev[H + jj, d, g]
                if use_len:
                    grad[off[Block.JB] + cj] += dbet[H + jj, d, g]
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def rating_loglik_logit(
    lam: np.ndarray,
    sev: np.ndarray,
    bet: np.ndarray,
    eta: np.ndarray,
    w: np.ndarray,
    cuts: np.ndarray,
    obs_item: np.ndarray,
    obs_dim: np.ndarray,
    obs_design: np.ndarray,
    obs_rater: np.ndarray,
    obs_sent: np.ndarray,
    obs_y: np.ndarray,
    zlen: np.ndarray,
    key: np.ndarray,
    order: np.ndarray,
    out: np.ndarray,
) -> None:
    """Logistic-link log-likelihood of every rating for a block of draws, added into
    ``out[s, key[r]]`` (``key`` = rating index for pointwise values, answer x design for
    sums per answer).

    Per draw ``s``: ``lam``, ``sev``, ``bet`` (rater, dimension, design), ``eta`` (item,
    dimension), ``w`` (sentence + 1, dimension; row 0 is zero: whole-answer ratings),
    ``cuts`` (dimension, design, K - 1). ``obs_y`` holds 0-based levels. The ratings are
    visited in ``order`` (sorted by ``key``) and, as in :func:`ordinal_logp_grad`, a
    rating's probability costs one exponential (:func:`interval_p_grad`, given each
    cut-point gap's exponentials) and is multiplied into its key's product, logged below
    :data:`PRODUCT_FLOOR`: one logarithm per key, not per rating (the stable logarithmic
    forms where the probability is tiny).
    """
    n_draw = lam.shape[0]
    D, G, k1 = cuts.shape[1], cuts.shape[2], cuts.shape[3]
    egap = np.zeros((D, G, k1))
    egm1 = np.zeros((D, G, k1))
    for s in range(n_draw):
        for d in range(D):
            for g in range(G):
                for k in range(1, k1):
                    gap = cuts[s, d, g, k] - cuts[s, d, g, k - 1]
                    egap[d, g, k] = math.exp(gap) if gap < GAP_MAX else np.inf
                    egm1[d, g, k] = math.expm1(gap)
        cur = -1  # the key whose ratings are being summed
        acc = 0.0
        prod = 1.0
        for m in range(order.size):
            r = order[m]
            if key[r] != cur:
                if cur >= 0:
                    out[s, cur] += acc + math.log(prod)
                cur, acc, prod = key[r], 0.0, 1.0
            i = obs_item[r]
            d = obs_dim[r]
            g = obs_design[r]
            j = obs_rater[r]
            y = obs_y[r]
            lat = eta[s, i, d] + w[s, obs_sent[r], d]
            lp = lam[s, j, d, g] * lat - sev[s, j, d, g] + bet[s, j, d, g] * zlen[i]
            if y == 0 or y == k1:
                u = cuts[s, d, g, 0] - lp if y == 0 else lp - cuts[s, d, g, k1 - 1]
                pu, lpu, _ = tail_p_grad(u)
                prod *= pu
                acc += lpu
            else:
                hi = cuts[s, d, g, y] - lp
                lo = cuts[s, d, g, y - 1] - lp
                pr, lpr, _, _ = interval_p_grad(hi, lo, egap[d, g, y], egm1[d, g, y])
                prod *= pr
                acc += lpr
            if prod < PRODUCT_FLOOR:
                acc += math.log(prod)
                prod = 1.0
        if cur >= 0:
            out[s, cur] += acc + math.log(prod)


def summed_loglik_logit(
    post: xr.Dataset, data: OrdinalData, key: np.ndarray, n_out: int
) -> np.ndarray:
    """The logistic-link :func:`~raterstats.models.ordinal.reference.summed_log_likelihood`
    by :func:`rating_loglik_logit`, over blocks of 250 draws on two threads: the
    log-likelihood of the ratings summed by ``key`` (rating -> output index), shape
    (chain, draw, n_out)."""
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    key = np.asarray(key, dtype=np.int64)
    order = np.argsort(key, kind="stable")
    out = np.zeros((n_chain * n_draw, n_out))

    def flat(name: str, *dims: str) -> np.ndarray:
        v = post[name].transpose("chain", "draw", *dims).values
        return np.ascontiguousarray(v.reshape(n_chain * n_draw, *v.shape[2:]), dtype=float)

    cdg = ("rater", "dimension", "design")
    lam, sev = flat("discrimination", *cdg), flat("severity", *cdg)
    eta = flat("eta", "item", "dimension")
    cuts = flat("cutpoints", "dimension", "design", "cut")
    if data.has_length:
        bet = np.ascontiguousarray(length_effects(post, data).reshape(lam.shape), dtype=float)
    else:
        bet = np.zeros_like(lam)
    nd = eta.shape[-1]
    n_sent = len(data.coords["sentence"])
    o_item, o_dim, o_design, o_rater, o_sent = (
        np.ascontiguousarray(a, dtype=np.int64)
        for a in (data.obs_item, data.obs_dim, data.obs_design, data.obs_rater, data.obs_sentence)
    )
    y = np.ascontiguousarray(data.y, dtype=np.int64)
    zlen = np.ascontiguousarray(
        data.z_length if data.has_length else np.zeros(eta.shape[1]), dtype=float
    )

    if data.has_sentences:  # views: the sentence deviations are scaled block by block
        tau = post["sigma_sentence"].transpose("chain", "draw", "dimension").values
        tau = tau.reshape(n_chain * n_draw, nd)
        wz = post["sentence_z"].transpose("chain", "draw", "sentence", "dimension").values
        wz = wz.reshape(n_chain * n_draw, n_sent, nd)

    def run(lo: int, hi: int) -> None:
        for a in range(lo, hi, 250):
            b = min(a + 250, hi)
            w = np.zeros((b - a, n_sent + 1, nd))
            if data.has_sentences:
                w[:, 1:] = wz[a:b] * tau[a:b, None, :]
            rating_loglik_logit(
                lam[a:b], sev[a:b], bet[a:b], eta[a:b], w, cuts[a:b], o_item, o_dim, o_design,
                o_rater, o_sent, y, zlen, key, order, out[a:b],
            )  # fmt: skip

    over_halves(run, n_chain * n_draw)
    return out.reshape(n_chain, n_draw, n_out)
