"""Compiled log density of the ordinal rater model, with a hand-written gradient.

The PyTensor graph of :class:`raterstats.models.ordinal.OrdinalRaters` is the
reference;
compiling it costs one to two minutes per fit and its gradient spends most of its time in
scatter-adds. This module computes the same log density on the same unconstrained
parameters in one pass over the ratings, compiled by numba once per installation
(``cache=True``). Tests check the log density and its gradient against the PyMC model.

Unconstrained vector ``x``, blocks in order (a block is empty when its part of the model is
absent): system effects (D x (M-1) standard normals mapped by an orthonormal zero-sum
basis), log sigma_question (D), question z ((Q-1) x D), log sigma_residual (D), residual z
((I-1) x D) (the question and residual z are zero-sum along their first axis through
:func:`zero_sum_extend`), log sigma_sentence (D; plus the sentence design's
log-discrimination mean when ``sizes[16]`` names that design), sentence z (S x D),
log-discrimination design means
(D x (G-1)), log sigma_discrimination_rater, log sigma_discrimination_cell, discrimination
rater z (H-1, zero-sum basis), cell z (D x G x (H-1)), log sigma_severity_rater,
log sigma_severity_cell, severity rater z (H-1, zero-sum basis), cell z (D x G x (H-1))
(these four rater / cell blocks hold standard normals scaled by their sigma or, centred
when ``sizes[15]`` is 1, the basis coordinates themselves with a N(0, sigma) prior),
length effect (D x G), log sigma_length_rater, length rater z (H x D x G), judge
log-discrimination, severity and length effect (J x D x G each), cut-points
(D x G x (K-1), PyMC's ordered transform).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Names of the blocks of ``x``, in order (``offsets`` has one more entry than this).
BLOCKS = (
    "sys_z",
    "log_sq",
    "qz",
    "log_se",
    "ez",
    "log_tau",
    "wz",
    "lm",
    "log_su",
    "log_sv",
    "uz",
    "vz",
    "log_sa",
    "log_sb",
    "az",
    "bz",
    "beta",
    "log_sl",
    "lz",
    "jl",
    "js",
    "jb",
    "cuts",
)
#: Prior constants, in order, in the ``prior`` array.
PRIOR_KEYS = (
    "system_sigma",
    "sigma_question",
    "sigma_residual",
    "sigma_sentence",
    "lm_mu",
    "lm_sd",
    "sigma_disc_rater",
    "sigma_disc_cell",
    "sigma_sev_rater",
    "sigma_sev_cell",
    "beta_mu",
    "beta_sd",
    "sigma_length_rater",
    "cut_mu",
    "cut_sd",
    "jl_mu",
    "jl_sd",
    "js_mu",
    "js_sd",
    "jb_mu",
    "jb_sd",
)


def zero_sum_basis(n: int) -> np.ndarray:
    """An orthonormal basis (n x (n-1)) of the vectors that sum to zero (Helmert).

    ``B @ z`` with ``z ~ N(0, sigma^2 I)`` is a zero-sum normal vector with scale sigma.

    Examples
    --------
    >>> b = zero_sum_basis(4)
    >>> np.allclose(b.T @ b, np.eye(3)), np.allclose(b.sum(axis=0), 0)
    (True, True)
    """
    b = np.zeros((n, max(n - 1, 0)))
    for k in range(1, n):
        b[:k, k - 1] = 1.0 / math.sqrt(k * (k + 1))
        b[k, k - 1] = -k / math.sqrt(k * (k + 1))
    return b


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


@njit(cache=True, nogil=True, inline="always")
def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(cache=True, nogil=True, inline="always")
def _log_sigmoid(x: float) -> float:
    # log(1 / (1 + exp(-x))) = -softplus(-x)
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@njit(cache=True, nogil=True)
def _halfnormal_log(x: np.ndarray, j: int, scale: float, grad: np.ndarray) -> tuple[float, float]:
    """HalfNormal(scale) prior of sigma = exp(x[j]) with its log-Jacobian; returns
    (log density up to a constant, sigma) and adds the gradient."""
    u = x[j]
    sig = math.exp(u)
    r = sig / scale
    grad[j] += 1.0 - r * r
    return -0.5 * r * r + u, sig


@njit(cache=True, nogil=True, error_model="numpy")
def ordinal_logp_grad(
    x: np.ndarray,
    grad: np.ndarray,
    off: np.ndarray,
    sz: np.ndarray,
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

    Degenerate points (cut-points that coincide after an underflow) give a non-finite
    value, which the sampler rejects, rather than an exception (``error_model="numpy"``).
    """
    D, G, H, J, M, Q = sz[0], sz[1], sz[2], sz[3], sz[4], sz[5]
    n_item, S, K = sz[6], sz[7], sz[8]
    use_sys, use_q, use_sent, use_len, lbr, ref = sz[9], sz[10], sz[11], sz[12], sz[13], sz[14]
    R = H + J
    for t in range(grad.size):
        grad[t] = 0.0
    total = 0.0

    # ---- latent quality -------------------------------------------------------------------
    sys_eff = np.zeros((D, M))
    o = off[0]
    if use_sys:
        sig_s = prior[0]
        for d in range(D):
            for m in range(M):
                acc = 0.0
                for k in range(M - 1):
                    acc += basis_m[m, k] * x[o + d * (M - 1) + k]
                sys_eff[d, m] = sig_s * acc
        for t in range(off[0], off[1]):
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
    # question effects and answer residuals: zero-sum standard normals (Q - 1 and I - 1
    # free coordinates per dimension), so that the cut-points alone carry the location
    sq = np.zeros(D)
    qfull = np.zeros((Q, D))
    if use_q:
        for d in range(D):
            lpd, sq[d] = _halfnormal_log(x, off[1] + d, prior[1], grad)
            total += lpd
        for t in range(off[2], off[3]):
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
        zero_sum_extend(x[off[2] : off[3]], Q, D, qfull)
    se = np.zeros(D)
    for d in range(D):
        lpd, se[d] = _halfnormal_log(x, off[3] + d, prior[2], grad)
        total += lpd
    for t in range(off[4], off[5]):
        total += -0.5 * x[t] * x[t]
        grad[t] -= x[t]
    efull = np.empty((n_item, D))
    zero_sum_extend(x[off[4] : off[5]], n_item, D, efull)
    eta = np.empty((n_item, D))
    for i in range(n_item):
        for d in range(D):
            v = sys_eff[d, item_sys[i]] + se[d] * efull[i, d]
            if use_q:
                v += sq[d] * qfull[item_q[i], d]
            eta[i, d] = v

    # ---- raters ---------------------------------------------------------------------------
    lm = np.zeros((D, G))
    for d in range(D):
        c = 0
        for g in range(G):
            if g == ref:
                continue
            t = off[7] + d * (G - 1) + c
            lm[d, g] = x[t]
            z = (x[t] - prior[4]) / prior[5]
            total += -0.5 * z * z
            grad[t] -= z / prior[5]
            c += 1

    # sentence scale: x holds log tau_d + m_{d, gs} (the scale of sentence deviations in
    # the units of the sentence design's raters, ``gs = sz[16]``; -1: log tau_d itself), a
    # shear with unit Jacobian that takes out the trade-off between the two
    gs = sz[16]
    lm_at = np.full(D, -1)
    if gs >= 0:
        for d in range(D):
            lm_at[d] = off[7] + d * (G - 1) + (gs if gs < ref else gs - 1)
    tau = np.zeros(D)
    if use_sent:
        for d in range(D):
            t = off[5] + d
            log_tau = x[t] - (lm[d, gs] if gs >= 0 else 0.0)
            tau[d] = math.exp(log_tau)
            r_ = tau[d] / prior[3]
            total += -0.5 * r_ * r_ + log_tau
            gt = 1.0 - r_ * r_
            grad[t] += gt
            if gs >= 0:
                grad[lm_at[d]] -= gt
        for t in range(off[6], off[7]):
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
    lpd, su = _halfnormal_log(x, off[8], prior[6], grad)
    total += lpd
    lpd, sv = _halfnormal_log(x, off[9], prior[7], grad)
    total += lpd
    lpd, sa = _halfnormal_log(x, off[12], prior[8], grad)
    total += lpd
    lpd, sb = _halfnormal_log(x, off[13], prior[9], grad)
    total += lpd
    # rater / cell deviations in the zero-sum basis: non-centred (x = z, deviation = s * B z)
    # or centred (x ~ N(0, s), deviation = B x; the better geometry when every rater cell
    # holds many ratings)
    cen = sz[15]
    scales = np.array([su, sv, sa, sb])
    log_at = np.array([off[8], off[9], off[12], off[13]])
    blocks = np.array([10, 11, 14, 15])
    for h in range(4):
        blk = blocks[h]
        s_q = scales[h]
        for t in range(off[blk], off[blk + 1]):
            if cen:
                z = x[t] / s_q
                total += -0.5 * z * z - math.log(s_q)
                grad[t] -= z / s_q
                grad[log_at[h]] += z * z - 1.0
            else:
                total += -0.5 * x[t] * x[t]
                grad[t] -= x[t]
    mu_ = 1.0 if cen else su
    mv = 1.0 if cen else sv
    ma = 1.0 if cen else sa
    mb = 1.0 if cen else sb
    sl = 0.0
    if use_len and lbr:
        lpd, sl = _halfnormal_log(x, off[17], prior[12], grad)
        total += lpd
        for t in range(off[18], off[19]):
            total += -0.5 * x[t] * x[t]
            grad[t] -= x[t]
    # severity of humans: a = B az (zero-sum over humans), b[d, g] = B bz[d, g]
    a = np.zeros(H)
    for j in range(H):
        acc = 0.0
        for k in range(H - 1):
            acc += basis_h[j, k] * x[off[14] + k]
        a[j] = acc
    b = np.zeros((D, G, H))
    for d in range(D):
        for g in range(G):
            base = off[15] + (d * G + g) * (H - 1)
            for j in range(H):
                acc = 0.0
                for k in range(H - 1):
                    acc += basis_h[j, k] * x[base + k]
                b[d, g, j] = acc
    # discrimination deviations of humans, zero-sum over the panel: u = B uz, v[d, g] = B vz
    uu = np.zeros(H)
    for j in range(H):
        acc = 0.0
        for k in range(H - 1):
            acc += basis_h[j, k] * x[off[10] + k]
        uu[j] = acc
    vv = np.zeros((D, G, H))
    for d in range(D):
        for g in range(G):
            base = off[11] + (d * G + g) * (H - 1)
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
                    bet[j, d, g] = x[off[16] + d * G + g]
                    if lbr:
                        bet[j, d, g] += sl * x[off[18] + cell]
    if use_len:
        for t in range(off[16], off[17]):
            z = (x[t] - prior[10]) / prior[11]
            total += -0.5 * z * z
            grad[t] -= z / prior[11]
    for jj in range(J):
        for d in range(D):
            for g in range(G):
                cj = (jj * D + d) * G + g
                t = off[19] + cj
                z = (x[t] - prior[15]) / prior[16]
                total += -0.5 * z * z
                grad[t] -= z / prior[16]
                lam[H + jj, d, g] = math.exp(x[t])
                t = off[20] + cj
                z = (x[t] - prior[17]) / prior[18]
                total += -0.5 * z * z
                grad[t] -= z / prior[18]
                sev[H + jj, d, g] = x[t]
                if use_len:
                    t = off[21] + cj
                    z = (x[t] - prior[19]) / prior[20]
                    total += -0.5 * z * z
                    grad[t] -= z / prior[20]
                    bet[H + jj, d, g] = x[t]

    # ---- cut-points (ordered transform) ---------------------------------------------------
    k1 = K - 1
    cuts = np.empty((D, G, k1))
    for d in range(D):
        for g in range(G):
            base = off[22] + (d * G + g) * k1
            c = x[base]
            cuts[d, g, 0] = c
            for k in range(1, k1):
                c += math.exp(x[base + k])
                cuts[d, g, k] = c
                total += x[base + k]  # log-Jacobian
                grad[base + k] += 1.0
    dcuts = np.zeros((D, G, k1))
    for d in range(D):
        for g in range(G):
            for k in range(k1):
                z = (cuts[d, g, k] - prior[13]) / prior[14]
                total += -0.5 * z * z
                dcuts[d, g, k] -= z / prior[14]

    # ---- likelihood -----------------------------------------------------------------------
    deta = np.zeros((n_item, D))
    dw = np.zeros((S + 1, D))
    dlam = np.zeros((R, D, G))
    dsev = np.zeros((R, D, G))
    dbet = np.zeros((R, D, G))
    n = obs_y.size
    for r in range(n):
        i = obs_item[r]
        d = obs_dim[r]
        g = obs_design[r]
        j = obs_rater[r]
        s = obs_sent[r]
        y = obs_y[r]
        lat = eta[i, d]
        if s > 0:
            lat += tau[d] * x[off[6] + (s - 1) * D + d]
        lp = lam[j, d, g] * lat - sev[j, d, g] + bet[j, d, g] * zlen[i]
        if y == 0 or y == K - 1:
            # one tail: log F(u) and its derivative F(-u) share one exponential
            u = cuts[d, g, 0] - lp if y == 0 else lp - cuts[d, g, k1 - 1]
            e = math.exp(-abs(u))
            if u >= 0:
                total += -math.log1p(e)
                gu = e / (1.0 + e)
            else:
                total += u - math.log1p(e)
                gu = 1.0 / (1.0 + e)
            if y == 0:
                dcuts[d, g, 0] += gu
                glp = -gu
            else:
                dcuts[d, g, k1 - 1] -= gu
                glp = gu
        else:
            hi = cuts[d, g, y] - lp
            lo = cuts[d, g, y - 1] - lp
            sh = _sigmoid(hi)
            sl_ = _sigmoid(lo)
            pr = sh - sl_
            if pr > 1e-8:
                total += math.log(pr)
                ghi = sh * (1.0 - sh) / pr
                glo = -sl_ * (1.0 - sl_) / pr
            else:  # far in a tail: the cancellation-free form
                diff = hi - lo
                total += _log_sigmoid(hi) + _log_sigmoid(-lo) + math.log(-math.expm1(-diff))
                q = 1.0 / math.expm1(diff)
                ghi = _sigmoid(-hi) + q
                glo = -_sigmoid(lo) - q
            dcuts[d, g, y] += ghi
            dcuts[d, g, y - 1] += glo
            glp = -(ghi + glo)
        dlam[j, d, g] += glp * lat
        dsev[j, d, g] -= glp
        dbet[j, d, g] += glp * zlen[i]
        dl = glp * lam[j, d, g]
        deta[i, d] += dl
        if s > 0:
            dw[s, d] += dl

    # ---- chain rule back to x -------------------------------------------------------------
    # cut-points: c_0 = x_0, c_k = c_{k-1} + exp(x_k)
    for d in range(D):
        for g in range(G):
            base = off[22] + (d * G + g) * k1
            acc = 0.0
            for k in range(k1 - 1, -1, -1):
                acc += dcuts[d, g, k]
                if k == 0:
                    grad[base] += acc
                else:
                    grad[base + k] += acc * math.exp(x[base + k])
    # sentences
    if use_sent:
        dtau = np.zeros(D)
        for s in range(1, S + 1):
            for d in range(D):
                t = off[6] + (s - 1) * D + d
                grad[t] += dw[s, d] * tau[d]
                dtau[d] += dw[s, d] * x[t]
        for d in range(D):
            gt = dtau[d] * tau[d]
            grad[off[5] + d] += gt
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
            defull[i, d] = g_ * se[d]
            dse[d] += g_ * efull[i, d]
            if use_q:
                dqfull[item_q[i], d] += g_ * sq[d]
                dsq[d] += g_ * qfull[item_q[i], d]
            dsys[d, item_sys[i]] += g_
    zero_sum_adjoint(defull, n_item, D, grad, off[4])
    if use_q:
        zero_sum_adjoint(dqfull, Q, D, grad, off[2])
    for d in range(D):
        grad[off[3] + d] += dse[d] * se[d]
        if use_q:
            grad[off[1] + d] += dsq[d] * sq[d]
    if use_sys:
        sig_s = prior[0]
        for d in range(D):
            for k in range(M - 1):
                acc = 0.0
                for m in range(M):
                    acc += basis_m[m, k] * dsys[d, m]
                grad[off[0] + d * (M - 1) + k] += sig_s * acc
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
                    grad[off[7] + d * (G - 1) + c] += dll
                dsu += dll * uu[j]
                du[j] += dll * mu_
                dsv += dll * vv[d, g, j]
                dv[d, g, j] += dll * mv
                ds_ = dsev[j, d, g]
                dsa += ds_ * a[j]
                da[j] += ds_ * ma
                dsb += ds_ * b[d, g, j]
                if use_len:
                    grad[off[16] + d * G + g] += dbet[j, d, g]
                    if lbr:
                        dsl += dbet[j, d, g] * x[off[18] + cell]
                        grad[off[18] + cell] += dbet[j, d, g] * sl
    if not cen:  # the scales enter the likelihood only in the non-centred form
        grad[off[8]] += dsu * su
        grad[off[9]] += dsv * sv
        grad[off[12]] += dsa * sa
        grad[off[13]] += dsb * sb
    if use_len and lbr:
        grad[off[17]] += dsl * sl
    for k in range(H - 1):
        acc = 0.0
        acc_u = 0.0
        for j in range(H):
            acc += basis_h[j, k] * da[j]
            acc_u += basis_h[j, k] * du[j]
        grad[off[14] + k] += acc
        grad[off[10] + k] += acc_u
    for d in range(D):
        for g in range(G):
            base = off[11] + (d * G + g) * (H - 1)
            for k in range(H - 1):
                acc = 0.0
                for j in range(H):
                    acc += basis_h[j, k] * dv[d, g, j]
                grad[base + k] += acc
    for d in range(D):
        for g in range(G):
            base = off[15] + (d * G + g) * (H - 1)
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
                grad[off[19] + cj] += dlam[H + jj, d, g] * lam[H + jj, d, g]
                grad[off[20] + cj] += dsev[H + jj, d, g]
                if use_len:
                    grad[off[21] + cj] += dbet[H + jj, d, g]
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
    out: np.ndarray,
) -> None:
    """Logistic-link log-likelihood of every rating for a block of draws, added into
    ``out[s, key[r]]`` (``key`` = rating index for pointwise values, answer x design for
    sums per answer).

    Per draw ``s``: ``lam``, ``sev``, ``bet`` (rater, dimension, design), ``eta`` (item,
    dimension), ``w`` (sentence + 1, dimension; row 0 is zero: whole-answer ratings),
    ``cuts`` (dimension, design, K - 1). ``obs_y`` holds 0-based levels. The same stable
    forms as :func:`ordinal_logp_grad`.
    """
    n_draw = lam.shape[0]
    k1 = cuts.shape[3]
    for s in range(n_draw):
        for r in range(obs_y.size):
            i = obs_item[r]
            d = obs_dim[r]
            g = obs_design[r]
            j = obs_rater[r]
            y = obs_y[r]
            lat = eta[s, i, d] + w[s, obs_sent[r], d]
            lp = lam[s, j, d, g] * lat - sev[s, j, d, g] + bet[s, j, d, g] * zlen[i]
            if y == 0 or y == k1:
                u = cuts[s, d, g, 0] - lp if y == 0 else lp - cuts[s, d, g, k1 - 1]
                e = math.exp(-abs(u))
                v = -math.log1p(e) if u >= 0 else u - math.log1p(e)
            else:
                hi = cuts[s, d, g, y] - lp
                lo = cuts[s, d, g, y - 1] - lp
                pr = _sigmoid(hi) - _sigmoid(lo)
                if pr > 1e-8:
                    v = math.log(pr)
                else:
                    v = _log_sigmoid(hi) + _log_sigmoid(-lo) + math.log(-math.expm1(lo - hi))
            out[s, key[r]] += v
