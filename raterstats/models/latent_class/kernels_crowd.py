"""Compiled log densities with hand-written gradients of the correlated-crowd models:
community Dawid-Skene (:func:`cds_logp_grad`) and the enhanced BCC
(:func:`ebcc_logp_grad`), on the unconstrained vectors of their PyMC models (PyMC's
simplex and log transforms), so that the tests can check them against the PyMC models at
random points.

Why the small helpers (simplex transform, pattern likelihood) are repeated here rather
than imported from :mod:`~raterstats.models.latent_class.kernels_density`: numba's on-disk
cache of a function is keyed on its own source file alone and carries the compiled code
of the functions it calls, so a kernel that called into another file would keep running
that file's old code after an edit there. Everything these kernels call lives in this
file.

The kernels are compiled with numba's NumPy error model: a division by zero far out in the
tails (a concentration or a simplex entry that underflows to 0 during warm-up) gives an
infinite or NaN log density, which nutpie rejects as a divergence, instead of raising (a
raised error would stop the sampler).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def digamma_nb(x: float) -> float:
    """The digamma function for ``x > 0`` (recurrence to ``x >= 6``, then the asymptotic
    series; absolute error below 1e-12)."""
    r = 0.0
    while x < 10.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    t = f * (
        -1.0 / 12.0
        + f * (1.0 / 120.0 + f * (-1.0 / 252.0 + f * (1.0 / 240.0 + f * (-1.0 / 132.0))))
    )
    return r + math.log(x) - 0.5 / x + t


@njit(cache=True, nogil=True, error_model="numpy")
def trigamma_nb(x: float) -> float:
    """The trigamma function (``psi'``) for ``x > 0`` (recurrence to ``x >= 10``, then the
    asymptotic series)."""
    r = 0.0
    while x < 10.0:
        r += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    t = 1.0 / x + 0.5 * f + f / x * (1.0 / 6.0 + f * (-1.0 / 30.0 + f * (1.0 / 42.0 - f / 30.0)))
    return r + t


@njit(cache=True, nogil=True, error_model="numpy")
def tetragamma_nb(x: float) -> float:
    """The tetragamma function (``psi''``) for ``x > 0`` (recurrence to ``x >= 10``, then
    the asymptotic series)."""
    r = 0.0
    while x < 10.0:
        r -= 2.0 / (x * x * x)
        x += 1.0
    f = 1.0 / (x * x)
    t = -f - f / x - f * f * (0.5 + f * (-1.0 / 6.0 + f * (1.0 / 6.0 - f * 0.3)))
    return r + t


@njit(cache=True, nogil=True, error_model="numpy")
def simplex_backward_nb(v: np.ndarray, k: int, out: np.ndarray) -> None:
    """PyMC's simplex transform, backward: ``out[:k] = softmax([v, -sum(v)])``."""
    s = 0.0
    for i in range(k - 1):
        s += v[i]
    m = -s
    for i in range(k - 1):
        if v[i] > m:
            m = v[i]
    tot = 0.0
    for i in range(k - 1):
        out[i] = math.exp(v[i] - m)
        tot += out[i]
    out[k - 1] = math.exp(-s - m)
    tot += out[k - 1]
    for i in range(k):
        out[i] /= tot


@njit(cache=True, nogil=True, error_model="numpy")
def simplex_grad_nb(p: np.ndarray, g: np.ndarray, k: int, out: np.ndarray) -> None:
    """Gradient w.r.t. the simplex-transform values from ``g`` = d/dlog p."""
    sg = 0.0
    for i in range(k):
        sg += g[i]
    last = g[k - 1] - p[k - 1] * sg
    for j in range(k - 1):
        out[j] = (g[j] - p[j] * sg) - last


@njit(cache=True, nogil=True, error_model="numpy")
def pattern_loglik_grad_nb(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    GT: np.ndarray,
    GP: np.ndarray,
) -> float:
    """Weighted sum over patterns of log sum_s exp(log_prior[d, s] + sum_r T[e_r, s]) over
    the latent states ``s`` (columns); adds d/dT into ``GT`` and d/dlog_prior into ``GP``
    (both zeroed by the caller)."""
    P = pattern_dim.size
    S = T.shape[1]
    v = np.empty(S)
    total = 0.0
    for p in range(P):
        d = pattern_dim[p]
        for t in range(S):
            v[t] = log_prior[d, t]
        for r in range(p_start[p], p_start[p + 1]):
            e = p_e[r]
            for t in range(S):
                v[t] += T[e, t]
        m = -np.inf
        for t in range(S):
            if mask[p, t] and v[t] > m:
                m = v[t]
        acc = 0.0
        for t in range(S):
            if mask[p, t]:
                v[t] = math.exp(v[t] - m)
                acc += v[t]
            else:
                v[t] = 0.0
        w = pattern_w[p]
        total += w * (m + math.log(acc))
        for t in range(S):
            v[t] = w * v[t] / acc
            GP[d, t] += v[t]
        for r in range(p_start[p], p_start[p + 1]):
            e = p_e[r]
            for t in range(S):
                GT[e, t] += v[t]
    return total


@njit(cache=True, nogil=True, error_model="numpy")
def reference_moments(
    C: np.ndarray,
    ref_w: np.ndarray,
    j: int,
    dg: int,
    t: int,
    s: float,
    floor: float,
    cref: np.ndarray,
    ps: np.ndarray,
    p1: np.ndarray,
    p2: np.ndarray,
) -> None:
    """For rater ``j``'s row ``t`` in dimension x design ``dg``: its reference community
    row ``cref = sum_m ref_w[j, m] C[m, dg, t]`` and ``psi``, ``psi'``, ``psi''`` of
    ``alpha = floor + s cref``."""
    K = cref.size
    for a in range(K):
        acc = 0.0
        for m in range(ref_w.shape[1]):
            acc += ref_w[j, m] * C[m, dg, t, a]
        cref[a] = acc
        al = floor + s * acc
        ps[a] = digamma_nb(al)
        p1[a] = trigamma_nb(al)
        p2[a] = tetragamma_nb(al)


@njit(cache=True, nogil=True, error_model="numpy")
def cds_logp_grad(
    x: np.ndarray,
    D: int,
    M: int,
    DG: int,
    K: int,
    R: int,
    cell_rater: np.ndarray,
    cell_dg: np.ndarray,
    ref_w: np.ndarray,
    centred: np.ndarray,
    e_row: np.ndarray,
    e_code: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    conf_conc: np.ndarray,
    a_prev: float,
    a_rho: float,
    s_a: float,
    s_b: float,
    floor: float,
    const: float,
    grad: np.ndarray,
) -> float:
    """Log density and gradient of community Dawid-Skene at unconstrained ``x``.

    Layout of ``x`` (the PyMC model's value variables, in order): prevalence
    ``D (K - 1)``; community weights ``M - 1`` (none when ``M = 1``); community confusions
    ``M DG K (K - 1)`` (community, dimension x design, true class); ``log s``; the raters'
    standardised rows ``z``, ``NC K (K - 1)`` (cell, true class). A rater's row has simplex
    coordinates ``x_i = m_i + sd_i z_i``, with ``m`` and ``sd`` the mean and (nearly) the
    standard deviation of the coordinates under ``Dirichlet(alpha)``, ``alpha = f + s
    sum_m ref_w[j, m] C[m, dg, t]`` (``m_i = psi(alpha_i) - mean_a psi(alpha_a)``,
    ``sd_i = sqrt(psi'(alpha_i))``, from the Gamma representation of the Dirichlet): a
    non-centred parametrisation, exact for any fixed weights ``ref_w``; where
    ``centred[c K + t]`` is 1, ``z`` is the row's coordinates themselves (centred). The
    raters' community is summed out:
    ``sum_j logsumexp_m [log rho_m + sum_(c of j, t) log Dir(pi_c[t]; f + s C_m,dg(c)[t])]``
    (``f``: the rows' ``floor``).
    """
    NC = cell_rater.size
    k1 = K - 1
    for i in range(grad.size):
        grad[i] = 0.0
    lp = const
    pos = 0
    # prevalence
    PI = np.zeros((D, K))
    off_prev = pos
    for d in range(D):
        simplex_backward_nb(x[pos : pos + k1], K, PI[d])
        for a in range(K):
            lp += a_prev * math.log(PI[d, a])
        pos += k1
    # community weights
    RHO = np.ones(M)
    off_rho = pos
    if M > 1:
        simplex_backward_nb(x[pos : pos + M - 1], M, RHO)
        for m in range(M):
            lp += a_rho * math.log(RHO[m])
        pos += M - 1
    # community confusions
    C = np.zeros((M, DG, K, K))
    off_c = pos
    for m in range(M):
        for dg in range(DG):
            for t in range(K):
                simplex_backward_nb(x[pos : pos + k1], K, C[m, dg, t])
                for a in range(K):
                    lp += conf_conc[t, a] * math.log(C[m, dg, t, a])
                pos += k1
    # concentration
    off_s = pos
    ls = x[pos]
    s = math.exp(ls)
    lp += s_a * ls - s_b * s
    pos += 1
    # rater confusions from their offsets
    off_z = pos
    B = np.zeros((NC, K, K))
    LB = np.zeros((NC, K, K))
    xr = np.empty(k1)
    cref = np.empty(K)
    ps = np.empty(K)
    p1 = np.empty(K)
    p2 = np.empty(K)
    for c in range(NC):
        j = cell_rater[c]
        dg = cell_dg[c]
        for t in range(K):
            if centred[c * K + t] == 1:
                for i in range(k1):
                    xr[i] = x[pos + i]
            else:
                reference_moments(C, ref_w, j, dg, t, s, floor, cref, ps, p1, p2)
                mps = 0.0
                for a in range(K):
                    mps += ps[a]
                mps /= K
                for i in range(k1):
                    xr[i] = ps[i] - mps + math.sqrt(p1[i]) * x[pos + i]
                    lp += 0.5 * math.log(p1[i])  # log Jacobian of z -> the coordinates
            simplex_backward_nb(xr, K, B[c, t])
            for a in range(K):
                LB[c, t, a] = math.log(B[c, t, a])
                lp += LB[c, t, a]  # log Jacobian of the simplex transform
            pos += k1
    # the raters' mixture prior
    lgs = math.lgamma(K * floor + s)
    dgs = digamma_nb(K * floor + s)
    LGC = np.zeros((M, DG, K, K))
    DGC = np.zeros((M, DG, K, K))
    for m in range(M):
        for dg in range(DG):
            for t in range(K):
                for a in range(K):
                    LGC[m, dg, t, a] = math.lgamma(floor + s * C[m, dg, t, a])
                    DGC[m, dg, t, a] = digamma_nb(floor + s * C[m, dg, t, a])
    A = np.zeros((R, M))
    for j in range(R):
        for m in range(M):
            A[j, m] = math.log(RHO[m])
    for c in range(NC):
        j = cell_rater[c]
        dg = cell_dg[c]
        for m in range(M):
            acc = 0.0
            for t in range(K):
                acc += lgs
                for a in range(K):
                    acc += -LGC[m, dg, t, a] + (floor + s * C[m, dg, t, a] - 1.0) * LB[c, t, a]
            A[j, m] += acc
    W = np.zeros((R, M))
    for j in range(R):
        mx = -np.inf
        for m in range(M):
            if A[j, m] > mx:
                mx = A[j, m]
        tot = 0.0
        for m in range(M):
            W[j, m] = math.exp(A[j, m] - mx)
            tot += W[j, m]
        lp += mx + math.log(tot)
        for m in range(M):
            W[j, m] /= tot
    # the data
    E = e_row.size
    T = np.zeros((E, K))
    for e in range(E):
        c = e_row[e]
        a = e_code[e]
        for t in range(K):
            T[e, t] = LB[c, t, a]
    log_prior = np.zeros((D, K))
    for d in range(D):
        for t in range(K):
            log_prior[d, t] = math.log(PI[d, t])
    GT = np.zeros((E, K))
    GP = np.zeros((D, K))
    lp += pattern_loglik_grad_nb(T, log_prior, p_e, p_start, pattern_dim, pattern_w, mask, GT, GP)
    # gradients: d/dlog of every simplex entry, then through the transforms
    g = np.empty(max(K, M))
    out = np.empty(max(K, M))
    GB = np.zeros((NC, K, K))
    for e in range(E):
        c = e_row[e]
        a = e_code[e]
        for t in range(K):
            GB[c, t, a] += GT[e, t]
    GC = np.zeros((M, DG, K, K))  # d/dC (mixture part)
    GS = 0.0  # d/ds (mixture part and the offsets)
    GR = np.zeros(M)  # d/dlog rho (mixture part)
    for c in range(NC):
        j = cell_rater[c]
        dg = cell_dg[c]
        for m in range(M):
            w = W[j, m]
            if w == 0.0:
                continue
            for t in range(K):
                GS += w * dgs
                for a in range(K):
                    ca = C[m, dg, t, a]
                    GB[c, t, a] += w * (floor + s * ca - 1.0)
                    GC[m, dg, t, a] += w * s * (LB[c, t, a] - DGC[m, dg, t, a])
                    GS += w * ca * (LB[c, t, a] - DGC[m, dg, t, a])
    for j in range(R):
        for m in range(M):
            GR[m] += W[j, m]
    pos = off_z
    for c in range(NC):
        j = cell_rater[c]
        dg = cell_dg[c]
        for t in range(K):
            for a in range(K):
                g[a] = GB[c, t, a] + 1.0
            simplex_grad_nb(B[c, t], g, K, out)  # d/d(the row's coordinates)
            if centred[c * K + t] == 1:
                for i in range(k1):
                    grad[pos + i] += out[i]
            else:
                reference_moments(C, ref_w, j, dg, t, s, floor, cref, ps, p1, p2)
                sg = 0.0
                for i in range(k1):
                    sg += out[i]
                for a in range(K):
                    # d/dalpha_a through the mean, the spread and the log-Jacobian
                    ga = p1[a] * ((out[a] if a < k1 else 0.0) - sg / K)
                    if a < k1:
                        sd = math.sqrt(p1[a])
                        ga += out[a] * x[pos + a] * p2[a] / (2.0 * sd) + 0.5 * p2[a] / p1[a]
                    GS += ga * cref[a]
                    for m in range(M):
                        GC[m, dg, t, a] += ga * s * ref_w[j, m]
                for i in range(k1):
                    grad[pos + i] += out[i] * math.sqrt(p1[i])
            pos += k1
    grad[off_s] += s * GS + s_a - s_b * s
    pos = off_c
    for m in range(M):
        for dg in range(DG):
            for t in range(K):
                for a in range(K):
                    g[a] = C[m, dg, t, a] * GC[m, dg, t, a] + conf_conc[t, a]
                simplex_grad_nb(C[m, dg, t], g, K, out)
                for i in range(k1):
                    grad[pos + i] += out[i]
                pos += k1
    if M > 1:
        for m in range(M):
            g[m] = GR[m] + a_rho
        simplex_grad_nb(RHO, g, M, out)
        for i in range(M - 1):
            grad[off_rho + i] += out[i]
    pos = off_prev
    for d in range(D):
        for a in range(K):
            g[a] = GP[d, a] + a_prev
        simplex_grad_nb(PI[d], g, K, out)
        for i in range(k1):
            grad[pos + i] += out[i]
        pos += k1
    return lp


@njit(cache=True, nogil=True, error_model="numpy")
def ebcc_logp_grad(
    x: np.ndarray,
    D: int,
    M: int,
    K: int,
    NC: int,
    e_row: np.ndarray,
    e_code: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    conf_conc: np.ndarray,
    a_prev: float,
    a_nu: float,
    const: float,
    grad: np.ndarray,
) -> float:
    """Log density and gradient of the enhanced BCC at unconstrained ``x``.

    Layout of ``x`` (the PyMC model's value variables, in order): prevalence
    ``D (K - 1)``; subtype weights ``D K (M - 1)`` (none when ``M = 1``); subtype
    confusions ``NC K M (K - 1)`` (cell, true class, subtype). The latent state of a unit
    is the pair (class ``t``, subtype ``m``), column ``t M + m`` of the table and of
    ``mask (P, K M)``; both are summed out per pattern.
    """
    S = K * M
    for i in range(grad.size):
        grad[i] = 0.0
    lp = const
    pos = 0
    PI = np.zeros((D, K))
    off_prev = pos
    for d in range(D):
        simplex_backward_nb(x[pos : pos + K - 1], K, PI[d])
        for a in range(K):
            lp += a_prev * math.log(PI[d, a])
        pos += K - 1
    NU = np.ones((D, K, M))
    off_nu = pos
    if M > 1:
        for d in range(D):
            for t in range(K):
                simplex_backward_nb(x[pos : pos + M - 1], M, NU[d, t])
                for m in range(M):
                    lp += a_nu * math.log(NU[d, t, m])
                pos += M - 1
    off_pi = pos
    B = np.zeros((NC, K, M, K))
    LB = np.zeros((NC, K, M, K))
    for c in range(NC):
        for t in range(K):
            for m in range(M):
                simplex_backward_nb(x[pos : pos + K - 1], K, B[c, t, m])
                for a in range(K):
                    LB[c, t, m, a] = math.log(B[c, t, m, a])
                    lp += conf_conc[t, a] * LB[c, t, m, a]
                pos += K - 1
    E = e_row.size
    T = np.zeros((E, S))
    for e in range(E):
        c = e_row[e]
        a = e_code[e]
        for t in range(K):
            for m in range(M):
                T[e, t * M + m] = LB[c, t, m, a]
    log_prior = np.zeros((D, S))
    for d in range(D):
        for t in range(K):
            for m in range(M):
                log_prior[d, t * M + m] = math.log(PI[d, t]) + math.log(NU[d, t, m])
    GT = np.zeros((E, S))
    GP = np.zeros((D, S))
    lp += pattern_loglik_grad_nb(T, log_prior, p_e, p_start, pattern_dim, pattern_w, mask, GT, GP)
    g = np.empty(max(K, M))
    out = np.empty(max(K, M))
    GB = np.zeros((NC, K, M, K))
    for e in range(E):
        c = e_row[e]
        a = e_code[e]
        for t in range(K):
            for m in range(M):
                GB[c, t, m, a] += GT[e, t * M + m]
    pos = off_pi
    for c in range(NC):
        for t in range(K):
            for m in range(M):
                for a in range(K):
                    g[a] = GB[c, t, m, a] + conf_conc[t, a]
                simplex_grad_nb(B[c, t, m], g, K, out)
                for i in range(K - 1):
                    grad[pos + i] += out[i]
                pos += K - 1
    if M > 1:
        pos = off_nu
        for d in range(D):
            for t in range(K):
                for m in range(M):
                    g[m] = GP[d, t * M + m] + a_nu
                simplex_grad_nb(NU[d, t], g, M, out)
                for i in range(M - 1):
                    grad[pos + i] += out[i]
                pos += M - 1
    pos = off_prev
    for d in range(D):
        for t in range(K):
            acc = a_prev
            for m in range(M):
                acc += GP[d, t * M + m]
            g[t] = acc
        simplex_grad_nb(PI[d], g, K, out)
        for i in range(K - 1):
            grad[pos + i] += out[i]
        pos += K - 1
    return lp


@njit(cache=True, nogil=True, error_model="numpy")
def _cs_f_s(
    sv: float, C: np.ndarray, W: np.ndarray, CL: float, K: int, f: float, a_s: float, b_s: float
) -> float:
    """The part of the community ELBO that depends on ``s``, at ``sv`` (``CL = sum C L``)."""
    val = 0.0
    M, G = W.shape
    for m in range(M):
        for dg in range(G):
            acc = K * math.lgamma(K * f + sv)
            for t in range(K):
                for a in range(K):
                    acc -= math.lgamma(f + sv * C[m, dg, t, a])
            val += W[m, dg] * acc
    return val + sv * CL + (a_s - 1.0) * math.log(sv) - b_s * sv


@njit(cache=True, nogil=True, error_model="numpy")
def _cs_f_row(
    row: np.ndarray, w: float, s: float, L_row: np.ndarray, alpha_row: np.ndarray, f: float
) -> float:
    """The part of the community ELBO that depends on one confusion row of ``C``."""
    val = 0.0
    for a in range(row.size):
        val += -w * math.lgamma(f + s * row[a]) + s * row[a] * L_row[a]
        val += (alpha_row[a] - 1.0) * math.log(row[a])
    return val


@njit(cache=True, nogil=True, error_model="numpy")
def optimise_cs_nb(
    C: np.ndarray,
    s: float,
    W: np.ndarray,
    L: np.ndarray,
    alpha: np.ndarray,
    a_s: float,
    b_s: float,
    f: float,
    sweeps: int,
    steps: int,
    row_step_min: float,
    row_halvings: int,
) -> float:
    """:func:`raterstats.models.latent_class.community_ds_vb.optimise_cs` compiled: block
    Newton steps with backtracking on ``s`` and on every row of ``C`` (``(M, DG, K, K)``,
    changed in place; ``alpha``: the rows' Dirichlet prior, full shape). Returns ``s``."""
    M, G, K = C.shape[0], C.shape[1], C.shape[2]
    cand = np.empty(K)
    gc = np.empty(K)
    hc = np.empty(K)
    delta = np.empty(K)
    for _ in range(sweeps):
        # s: Newton with backtracking
        for _ in range(steps):
            g = 0.0
            h = 0.0
            CL = 0.0
            for m in range(M):
                for dg in range(G):
                    gs = K * digamma_nb(K * f + s)
                    hs = K * trigamma_nb(K * f + s)
                    for t in range(K):
                        for a in range(K):
                            c = C[m, dg, t, a]
                            gs -= c * digamma_nb(f + s * c)
                            hs -= c * c * trigamma_nb(f + s * c)
                            CL += c * L[m, dg, t, a]
                    g += W[m, dg] * gs
                    h += W[m, dg] * hs
            g += CL + (a_s - 1.0) / s - b_s
            h -= (a_s - 1.0) / (s * s)
            step = -g / h if h < 0 else g * s / max(abs(g), 1.0)
            f0 = _cs_f_s(s, C, W, CL, K, f, a_s, b_s)
            tt = 1.0
            while tt > 1e-6:
                s1 = s + tt * step
                if s1 > 0 and _cs_f_s(s1, C, W, CL, K, f, a_s, b_s) >= f0:
                    s = s1
                    break
                tt *= 0.5
            if abs(step) < 1e-10 * s:
                break
        # C rows: Newton on the simplex with backtracking, each row on its own
        for m in range(M):
            for dg in range(G):
                w = W[m, dg]
                for t in range(K):
                    row = C[m, dg, t]
                    for _ in range(steps):
                        sum_g_h = 0.0
                        sum_1_h = 0.0
                        for a in range(K):
                            c = row[a]
                            al = alpha[m, dg, t, a]
                            gc[a] = -s * w * digamma_nb(f + s * c) + s * L[m, dg, t, a]
                            gc[a] += (al - 1.0) / c
                            hv = -(s * s) * w * trigamma_nb(f + s * c) - (al - 1.0) / (c * c)
                            hc[a] = min(hv, -1e-8)
                            sum_g_h += gc[a] / hc[a]
                            sum_1_h += 1.0 / hc[a]
                        lam = sum_g_h / sum_1_h
                        big = 0.0
                        for a in range(K):
                            delta[a] = -(gc[a] - lam) / hc[a]
                            big = max(big, abs(delta[a]))
                        if big <= row_step_min:
                            continue  # at its optimum to rounding: as the NumPy form
                        f0r = _cs_f_row(row, w, s, L[m, dg, t], alpha[m, dg, t], f)
                        tr = 1.0
                        for _ in range(row_halvings):
                            inside = True
                            tot = 0.0
                            for a in range(K):
                                cand[a] = row[a] + tr * delta[a]
                                inside = inside and cand[a] > 0
                                tot += cand[a]
                            if inside:
                                val = _cs_f_row(cand, w, s, L[m, dg, t], alpha[m, dg, t], f)
                                if val >= f0r:
                                    for a in range(K):
                                        row[a] = cand[a] / tot
                                    break
                            tr *= 0.5
    return s


__all__ = [
    "cds_logp_grad",
    "digamma_nb",
    "ebcc_logp_grad",
    "optimise_cs_nb",
    "pattern_loglik_grad_nb",
    "reference_moments",
    "simplex_backward_nb",
    "simplex_grad_nb",
    "tetragamma_nb",
    "trigamma_nb",
]
