"""Compiled log densities with hand-written gradients for the latent-class models.

The PyTensor graphs of :mod:`raterstats.models.latent_class.mace` / ``dawid_skene`` are the
models; compiling them with numba costs 20-30 s per fit (the graph's constants differ with
every data set, so nothing is cached). Here the same densities, on the same unconstrained
parameters (PyMC's log-odds, log and simplex transforms), are written as numba functions
compiled once per installation (``cache=True``), so a fresh process starts sampling in
about a second. Tests check the log densities and gradients against the PyMC models, and
their likelihood part against the NumPy reference
(:mod:`raterstats.models.latent_class.reference`), at random points.

Structure: a model maps its parameters to a table ``T[e, t] = log P(rating | true class t)``
for every (cell, rated category) pair ``e`` present in the data, plus a log class prior
``(D, K)``; :func:`pattern_loglik_grad` sums over rating patterns with log-sum-exp over
the true class and returns the gradients with respect to the table and the prior; each
model then applies the chain rule back to its unconstrained parameters.

Why one file of about 700 lines: numba's on-disk cache of a function is keyed on its own
source file alone, and a cached function carries the compiled code of the functions it
calls. The two densities call the shared pieces (pattern likelihood, simplex transform,
Dirichlet rows), so they live in one file with them: an edit to a shared piece then
recompiles its callers too.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_HALF_PI = 0.5 * math.pi
_LOG_HALF_PI = math.log(0.5 * math.pi)
_LOG_PI = math.log(math.pi)


@njit(cache=True, nogil=True)
def pattern_loglik_grad(
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
    """Weighted sum over patterns of log sum_t exp(log_prior[d, t] + sum_r T[e_r, t]);
    adds d/dT into ``GT`` and d/dlog_prior into ``GP`` (both zeroed by the caller)."""
    P = pattern_dim.size
    K = T.shape[1]
    s = np.empty(K)
    total = 0.0
    for p in range(P):
        d = pattern_dim[p]
        for t in range(K):
            s[t] = log_prior[d, t]
        for r in range(p_start[p], p_start[p + 1]):
            e = p_e[r]
            for t in range(K):
                s[t] += T[e, t]
        m = -np.inf
        for t in range(K):
            if mask[p, t] and s[t] > m:
                m = s[t]
        acc = 0.0
        for t in range(K):
            if mask[p, t]:
                s[t] = math.exp(s[t] - m)
                acc += s[t]
            else:
                s[t] = 0.0
        w = pattern_w[p]
        total += w * (m + math.log(acc))
        for t in range(K):
            s[t] = w * s[t] / acc
            GP[d, t] += s[t]
        for r in range(p_start[p], p_start[p + 1]):
            e = p_e[r]
            for t in range(K):
                GT[e, t] += s[t]
    return total


@njit(cache=True, nogil=True)
def simplex_backward(v: np.ndarray, k: int, out: np.ndarray) -> None:
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


@njit(cache=True, nogil=True)
def simplex_grad(p: np.ndarray, g: np.ndarray, k: int, out: np.ndarray) -> None:
    """Gradient w.r.t. the simplex-transform values from ``g`` = d/dlog p (first ``k``)."""
    sg = 0.0
    for i in range(k):
        sg += g[i]
    last = g[k - 1] - p[k - 1] * sg
    for j in range(k - 1):
        out[j] = (g[j] - p[j] * sg) - last


@njit(cache=True, nogil=True)
def dirichlet_rows(
    x: np.ndarray,
    off: int,
    n_cat_rows: np.ndarray,
    conc: np.ndarray,
    P: np.ndarray,
) -> float:
    """Fill simplex rows ``P[i, :k_i]`` from ``x[off:]`` and return the sum of Dirichlet
    log densities plus log Jacobians (PyMC's simplex transform), without the constant
    normalisers (:func:`dirichlet_const`)."""
    lp = 0.0
    pos = off
    for i in range(n_cat_rows.size):
        k = n_cat_rows[i]
        simplex_backward(x[pos : pos + k - 1], k, P[i])
        for c in range(k):
            lp += conc[i, c] * math.log(P[i, c])
        pos += k - 1
    return lp


def dirichlet_const(n_cat_rows: np.ndarray, conc: np.ndarray) -> float:
    """Sum over rows of lgamma(sum a) - sum lgamma(a) + log k (normaliser and the
    constant of the simplex Jacobian)."""
    total = 0.0
    for i, k in enumerate(n_cat_rows):
        a = conc[i, :k]
        total += math.lgamma(float(a.sum())) - sum(math.lgamma(float(v)) for v in a) + math.log(k)
    return total


@njit(cache=True, nogil=True)
def dirichlet_rows_grad(
    off: int,
    n_cat_rows: np.ndarray,
    conc: np.ndarray,
    P: np.ndarray,
    G_logp: np.ndarray,
    grad: np.ndarray,
) -> None:
    """Add to ``grad[off:]`` the gradient of (data term with d/dlog p = ``G_logp``) +
    Dirichlet log density + log Jacobian."""
    pos = off
    K = P.shape[1]
    g = np.empty(K)
    out = np.empty(K)
    for i in range(n_cat_rows.size):
        k = n_cat_rows[i]
        for c in range(k):
            g[c] = G_logp[i, c] + conc[i, c]
        simplex_grad(P[i], g, k, out)
        for j in range(k - 1):
            grad[pos + j] += out[j]
        pos += k - 1


@njit(cache=True, nogil=True)
def _softplus(x: float) -> float:
    if x > 30.0:
        return x
    return math.log1p(math.exp(x))


@njit(cache=True, nogil=True)
def arcsine_log_sin(u: float) -> tuple[float, float]:
    """``log sin(pi/2 sigmoid(u))`` and its derivative in ``u``: half the log competence
    under the arcsine map ``theta = sin^2(pi/2 sigmoid(u))`` (``log(1 - theta)`` is twice
    the value at ``-u``). Stable far into the left tail, where ``sin z = z``."""
    if u < -30.0:
        return _LOG_HALF_PI + u, 1.0
    s = 1.0 / (1.0 + math.exp(-u))
    phi = _HALF_PI * s
    return math.log(math.sin(phi)), _HALF_PI * s * (1.0 - s) * math.cos(phi) / math.sin(phi)


@njit(cache=True, nogil=True)
def mace_logp_grad(
    x: np.ndarray,
    hier: bool,
    has_v: bool,
    centred_u: bool,
    centred_v: bool,
    R: int,
    D: int,
    G: int,
    K: int,
    n_cat: np.ndarray,
    e_cell: np.ndarray,
    e_code: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    beta_a: float,
    beta_b: float,
    mean_mu: np.ndarray,
    mean_sd: np.ndarray,
    sd_u: float,
    sd_v: float,
    spam_conc: np.ndarray,
    prev_conc: np.ndarray,
    basis_r: np.ndarray,
    basis_c: np.ndarray,
    const: float,
    grad: np.ndarray,
) -> float:
    """Log density and gradient of MACE (flat or hierarchical) at unconstrained ``x``.

    Layout of ``x``: flat ``[u (C)]`` with competence ``theta = sin^2(pi/2 sigmoid(u))``
    (the arcsine map: under the default Beta(0.5, 0.5) prior ``u`` is standard logistic a
    priori; see :func:`arcsine_log_sin`); hierarchical ``[beta (D*G), log sigma_u,
    a_u (R-1), (log sigma_v, a_v ((R-1) x (D*G-1), row-major))]``: zero-sum rater effects
    ``u = basis_r a_u`` and cell effects ``v = basis_r a_v basis_c^T`` (summing to zero over
    raters and over cells; ``basis_r (R, R-1)``, ``basis_c (D*G, D*G-1)`` orthonormal), whose
    basis coordinates are ``N(0, sigma)`` (centred, ``centred_u`` for the rater effects and
    ``centred_v`` for the cell effects: ``a`` holds them; otherwise ``a = sigma z`` and ``x``
    holds ``z``); then spam simplex rows (rater-major, ``K_d - 1`` each), then prevalence
    rows (``K_d - 1`` each).
    """
    C = R * D * G
    DG = D * G
    nb = R - 1
    mc = DG - 1
    for i in range(grad.size):
        grad[i] = 0.0
    lp = const
    eta = np.empty(C)
    u = np.zeros(R)
    V = np.zeros(C)
    pos = 0
    pos_u = 0
    pos_sv = 0
    pos_v = 0
    s_u = 0.0
    s_v = 0.0
    f_u = 0.0
    f_v = 0.0
    if hier:
        for c in range(C):
            eta[c] = x[c % DG]
        for dg in range(DG):
            z = (x[dg] - mean_mu[dg]) / mean_sd[dg]
            lp += -0.5 * z * z - math.log(mean_sd[dg]) - _LOG_SQRT_2PI
        pos = DG
        y_u = x[pos]
        s_u = math.exp(y_u)
        lp += math.log(2.0) - _LOG_SQRT_2PI - math.log(sd_u) - 0.5 * (s_u / sd_u) ** 2 + y_u
        pos += 1
        f_u = 1.0 if centred_u else s_u
        pos_u = pos
        for k in range(nb):
            zu = x[pos + k]
            if centred_u:
                lp += -0.5 * (zu / s_u) ** 2 - y_u - _LOG_SQRT_2PI
            else:
                lp += -0.5 * zu * zu - _LOG_SQRT_2PI
            for j in range(R):
                u[j] += basis_r[j, k] * zu
        for j in range(R):
            for dg in range(DG):
                eta[j * DG + dg] += f_u * u[j]
        pos += nb
        if has_v:
            pos_sv = pos
            y_v = x[pos]
            s_v = math.exp(y_v)
            f_v = 1.0 if centred_v else s_v
            lp += math.log(2.0) - _LOG_SQRT_2PI - math.log(sd_v) - 0.5 * (s_v / sd_v) ** 2 + y_v
            pos += 1
            pos_v = pos
            W = np.zeros((R, mc))
            for k in range(nb):
                for m in range(mc):
                    zv = x[pos + k * mc + m]
                    if centred_v:
                        lp += -0.5 * (zv / s_v) ** 2 - y_v - _LOG_SQRT_2PI
                    else:
                        lp += -0.5 * zv * zv - _LOG_SQRT_2PI
                    for j in range(R):
                        W[j, m] += basis_r[j, k] * zv
            for j in range(R):
                for dg in range(DG):
                    acc = 0.0
                    for m in range(mc):
                        acc += W[j, m] * basis_c[dg, m]
                    V[j * DG + dg] = acc
                    eta[j * DG + dg] += f_v * acc
            pos += nb * mc
    else:
        pos = C
    # spam rows (R*D) and prevalence rows (D)
    n_rows = np.empty(R * D, dtype=np.int64)
    for j in range(R):
        for d in range(D):
            n_rows[j * D + d] = n_cat[d]
    XI = np.zeros((R * D, K))
    off_spam = pos
    lp += dirichlet_rows(x, off_spam, n_rows, spam_conc, XI)
    for i in range(R * D):
        pos += n_rows[i] - 1
    PI = np.zeros((D, K))
    off_prev = pos
    lp += dirichlet_rows(x, off_prev, n_cat, prev_conc, PI)
    # table: per cell theta, log theta, log(1 - theta); per entry one log
    th_c = np.empty(C)
    lt_c = np.empty(C)
    l1mt_c = np.empty(C)
    ds_c = np.empty(C)  # flat: d log sin(phi) / du and d log cos(phi) / du
    dc_c = np.empty(C)
    for c in range(C):
        if hier:
            lt = -_softplus(-eta[c])
            l1mt = lt - eta[c]
        else:
            # arcsine map: log theta = 2 log sin(phi), log(1 - theta) = 2 log cos(phi);
            # Beta(a, b) prior times the Jacobian pi sin(phi) cos(phi) s (1 - s)
            u_c = x[c]
            ls, ds = arcsine_log_sin(u_c)
            lc, dcm = arcsine_log_sin(-u_c)
            ds_c[c] = ds
            dc_c[c] = -dcm
            lt = 2.0 * ls
            l1mt = 2.0 * lc
            lp += (2.0 * beta_a - 1.0) * ls + (2.0 * beta_b - 1.0) * lc
            lp += _LOG_PI - _softplus(-u_c) - _softplus(u_c)
        th_c[c] = math.exp(lt)
        lt_c[c] = lt
        l1mt_c[c] = l1mt
    E = e_cell.size
    T = np.zeros((E, K))
    ratio = np.empty(E)
    for e in range(E):
        c = e_cell[e]
        a = e_code[e]
        j = c // (D * G)
        d = (c // G) % D
        xi = XI[j * D + d, a]
        mlog = l1mt_c[c] + math.log(xi)
        tot = th_c[c] + (1.0 - th_c[c]) * xi
        match = math.log(tot)
        ratio[e] = th_c[c] / tot
        for t in range(n_cat[d]):
            T[e, t] = mlog
        T[e, a] = match
    log_prior = np.zeros((D, K))
    for d in range(D):
        for t in range(n_cat[d]):
            log_prior[d, t] = math.log(PI[d, t])
    GT = np.zeros((E, K))
    GP = np.zeros((D, K))
    lp += pattern_loglik_grad(T, log_prior, p_e, p_start, pattern_dim, pattern_w, mask, GT, GP)
    # chain rule
    d_lt = np.zeros(C)
    d_l1mt = np.zeros(C)
    G_logxi = np.zeros((R * D, K))
    for e in range(E):
        c = e_cell[e]
        a = e_code[e]
        j = c // (D * G)
        d = (c // G) % D
        dm = 0.0
        for t in range(n_cat[d]):
            if t != a:
                dm += GT[e, t]
        dm += GT[e, a] * (1.0 - ratio[e])
        d_lt[c] += GT[e, a] * ratio[e]
        d_l1mt[c] += dm
        G_logxi[j * D + d, a] += dm
    d_eta = np.empty(C)
    for c in range(C):
        if hier:
            th = 1.0 / (1.0 + math.exp(-eta[c]))
            d_eta[c] = (1.0 - th) * d_lt[c] - th * d_l1mt[c]
        else:
            s = 1.0 / (1.0 + math.exp(-x[c]))
            ds, dc = ds_c[c], dc_c[c]
            grad[c] += 2.0 * ds * d_lt[c] + 2.0 * dc * d_l1mt[c]
            grad[c] += (2.0 * beta_a - 1.0) * ds + (2.0 * beta_b - 1.0) * dc + 1.0 - 2.0 * s
    if hier:
        for dg in range(DG):
            grad[dg] += -(x[dg] - mean_mu[dg]) / mean_sd[dg] ** 2
        du = np.zeros(R)
        for c in range(C):
            grad[c % DG] += d_eta[c]
            du[c // DG] += d_eta[c]
        # rater effects: d/da_u = f_u basis_r^T du; non-centred d/dlog sigma_u = s_u u . du
        g_s = 0.0
        for j in range(R):
            g_s += u[j] * du[j]
        for k in range(nb):
            acc = 0.0
            for j in range(R):
                acc += basis_r[j, k] * du[j]
            grad[pos_u + k] += f_u * acc
        grad[DG] += -((s_u / sd_u) ** 2) + 1.0
        if not centred_u:
            grad[DG] += s_u * g_s
        for k in range(nb):
            zu = x[pos_u + k]
            if centred_u:
                grad[pos_u + k] += -zu / s_u**2
                grad[DG] += (zu / s_u) ** 2 - 1.0
            else:
                grad[pos_u + k] += -zu
        if has_v:
            # d/da_v = f_v basis_r^T dV basis_c
            Wg = np.zeros((R, mc))
            g_s = 0.0
            for j in range(R):
                for dg in range(DG):
                    dv = d_eta[j * DG + dg]
                    g_s += V[j * DG + dg] * dv
                    for m in range(mc):
                        Wg[j, m] += dv * basis_c[dg, m]
            for k in range(nb):
                for m in range(mc):
                    acc = 0.0
                    for j in range(R):
                        acc += basis_r[j, k] * Wg[j, m]
                    grad[pos_v + k * mc + m] += f_v * acc
            grad[pos_sv] += -((s_v / sd_v) ** 2) + 1.0
            if not centred_v:
                grad[pos_sv] += s_v * g_s
            for i in range(nb * mc):
                zv = x[pos_v + i]
                if centred_v:
                    grad[pos_v + i] += -zv / s_v**2
                    grad[pos_sv] += (zv / s_v) ** 2 - 1.0
                else:
                    grad[pos_v + i] += -zv
    dirichlet_rows_grad(off_spam, n_rows, spam_conc, XI, G_logxi, grad)
    dirichlet_rows_grad(off_prev, n_cat, prev_conc, PI, GP, grad)
    return lp


@njit(cache=True, nogil=True)
def ds_logp_grad(
    x: np.ndarray,
    dirichlet: bool,
    partial: bool,
    n_rows_cells: int,
    D: int,
    G: int,
    K: int,
    n_cat: np.ndarray,
    row_dim: np.ndarray,
    e_row: np.ndarray,
    e_code: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    conf_conc: np.ndarray,
    zeta_mu: np.ndarray,
    zeta_sd: float,
    sd_omega: float,
    coin_a: float,
    coin_b: float,
    prev_conc: np.ndarray,
    const: float,
    centred: np.ndarray,
    sig_of: np.ndarray,
    grad: np.ndarray,
) -> float:
    """Log density and gradient of Dawid-Skene at unconstrained ``x``.

    ``dirichlet``: unpooled / pooled (Dirichlet confusion rows of each of ``n_rows_cells``
    parameter cells; ``row_dim`` gives each cell's dimension); ``partial``: partially
    pooled (softmax over the off-diagonal logits ``omega``, diagonal logit 0); neither:
    one-coin (``logit p`` per cell). Table rows ``e`` are (cell, rated category) pairs:
    ``e_row`` the cell, ``e_code`` the category.

    Layout of ``x``: Dirichlet: per cell, per true class t < K_d, ``K_d - 1`` simplex
    values; partial: ``zeta`` per dimension (``K_d (K_d - 1)`` off-diagonal values,
    row-major), ``log sigma`` values (``sig_of[i]``: the one of ``zeta``'s entry ``i``),
    then per cell ``K_d (K_d - 1)`` values ``w``: the logit ``omega ~ N(zeta, sigma)``
    itself where ``centred[i]`` is 1 (``i`` counts these values), else ``z ~ N(0, 1)``
    with ``omega = zeta + sigma z``; one-coin: ``logit p`` per cell. Then prevalence
    rows.
    """
    NC = n_rows_cells
    for i in range(grad.size):
        grad[i] = 0.0
    lp = const
    # confusion log-probabilities per cell: LB[c, t, a]
    LB = np.zeros((NC, K, K))
    B = np.zeros((NC, K, K))
    pos = 0
    zpos = 0
    zeta_off = np.zeros(D, dtype=np.int64)
    if dirichlet:
        for c in range(NC):
            k = n_cat[row_dim[c]]
            for t in range(k):
                simplex_backward(x[pos : pos + k - 1], k, B[c, t])
                for a in range(k):
                    LB[c, t, a] = math.log(B[c, t, a])
                    lp += conf_conc[c, t, a] * LB[c, t, a]
                pos += k - 1
    elif partial:
        for d in range(D):
            zeta_off[d] = pos
            k = n_cat[d]
            for t in range(k):
                for a in range(k):
                    if a != t:
                        z = (x[pos] - zeta_mu[t, a]) / zeta_sd
                        lp += -0.5 * z * z - math.log(zeta_sd) - _LOG_SQRT_2PI
                        pos += 1
        n_off = pos
        n_sig = 0
        for i in range(n_off):
            if sig_of[i] + 1 > n_sig:
                n_sig = sig_of[i] + 1
        for _ in range(n_sig):  # log sigma, HalfNormal(sd_omega) with its Jacobian
            y = x[pos]
            s = math.exp(y)
            lp += math.log(2.0) - _LOG_SQRT_2PI - math.log(sd_omega) - 0.5 * (s / sd_omega) ** 2 + y
            pos += 1
        zpos = pos
        logits = np.zeros(K)
        for c in range(NC):
            d = row_dim[c]
            k = n_cat[d]
            zi = zeta_off[d]
            for t in range(k):
                for a in range(k):
                    if a == t:
                        logits[a] = 0.0
                    else:
                        w = x[pos]
                        si = n_off + sig_of[zi]
                        s = math.exp(x[si])
                        if centred[pos - zpos] == 1:
                            u = (w - x[zi]) / s
                            lp += -0.5 * u * u - x[si] - _LOG_SQRT_2PI
                            logits[a] = w
                        else:
                            lp += -0.5 * w * w - _LOG_SQRT_2PI
                            logits[a] = x[zi] + s * w
                        zi += 1
                        pos += 1
                m = -np.inf
                for a in range(k):
                    if logits[a] > m:
                        m = logits[a]
                tot = 0.0
                for a in range(k):
                    tot += math.exp(logits[a] - m)
                lse = m + math.log(tot)
                for a in range(k):
                    LB[c, t, a] = logits[a] - lse
                    B[c, t, a] = math.exp(LB[c, t, a])
    else:
        for c in range(NC):
            d = row_dim[c]
            k = n_cat[d]
            eta = x[pos]
            lt = -_softplus(-eta)
            l1mt = lt - eta
            lp += coin_a * lt + coin_b * l1mt
            for t in range(k):
                for a in range(k):
                    LB[c, t, a] = lt if a == t else l1mt - math.log(k - 1.0)
                    B[c, t, a] = math.exp(LB[c, t, a])
            pos += 1
    PI = np.zeros((D, K))
    off_prev = pos
    lp += dirichlet_rows(x, off_prev, n_cat, prev_conc, PI)
    E = e_row.size
    T = np.zeros((E, K))
    for e in range(E):
        c = e_row[e]
        a = e_code[e]
        k = n_cat[row_dim[c]]
        for t in range(k):
            T[e, t] = LB[c, t, a]
    log_prior = np.zeros((D, K))
    for d in range(D):
        for t in range(n_cat[d]):
            log_prior[d, t] = math.log(PI[d, t])
    GT = np.zeros((E, K))
    GP = np.zeros((D, K))
    lp += pattern_loglik_grad(T, log_prior, p_e, p_start, pattern_dim, pattern_w, mask, GT, GP)
    # gradient w.r.t. log B[c, t, a]
    GB = np.zeros((NC, K, K))
    for e in range(E):
        c = e_row[e]
        a = e_code[e]
        k = n_cat[row_dim[c]]
        for t in range(k):
            GB[c, t, a] += GT[e, t]
    g = np.empty(K)
    out = np.empty(K)
    if dirichlet:
        pos = 0
        for c in range(NC):
            k = n_cat[row_dim[c]]
            for t in range(k):
                for a in range(k):
                    ca = conf_conc[c, t, a]
                    g[a] = GB[c, t, a] + ca
                simplex_grad(B[c, t], g, k, out)
                for j in range(k - 1):
                    grad[pos + j] += out[j]
                pos += k - 1
    elif partial:
        pos = zpos
        n_off = zeta_off[D - 1] + n_cat[D - 1] * (n_cat[D - 1] - 1)
        for d in range(D):
            k = n_cat[d]
            zi = zeta_off[d]
            for t in range(k):
                for a in range(k):
                    if a != t:
                        grad[zi] += -(x[zi] - zeta_mu[t, a]) / zeta_sd**2
                        zi += 1
        for i in range(zpos - n_off):
            s = math.exp(x[n_off + i])
            grad[n_off + i] += -((s / sd_omega) ** 2) + 1.0
        for c in range(NC):
            d = row_dim[c]
            k = n_cat[d]
            zi = zeta_off[d]
            for t in range(k):
                sg = 0.0
                for a in range(k):
                    sg += GB[c, t, a]
                for a in range(k):
                    if a != t:
                        dl = GB[c, t, a] - B[c, t, a] * sg
                        w = x[pos]
                        si = n_off + sig_of[zi]
                        s = math.exp(x[si])
                        if centred[pos - zpos] == 1:
                            u = (w - x[zi]) / s
                            grad[pos] += dl - u / s
                            grad[zi] += u / s
                            grad[si] += u * u - 1.0
                        else:
                            grad[zi] += dl
                            grad[si] += dl * s * w
                            grad[pos] += dl * s - w
                        zi += 1
                        pos += 1
    else:
        for c in range(NC):
            pos = c
            d = row_dim[c]
            k = n_cat[d]
            eta = x[pos]
            th = 1.0 / (1.0 + math.exp(-eta))
            d_lt = 0.0
            d_l1mt = 0.0
            for t in range(k):
                for a in range(k):
                    if a == t:
                        d_lt += GB[c, t, a]
                    else:
                        d_l1mt += GB[c, t, a]
            grad[pos] += (1.0 - th) * (d_lt + coin_a) - th * (d_l1mt + coin_b)
    dirichlet_rows_grad(off_prev, n_cat, prev_conc, PI, GP, grad)
    return lp


__all__ = [
    "arcsine_log_sin",
    "dirichlet_const",
    "dirichlet_rows",
    "dirichlet_rows_grad",
    "ds_logp_grad",
    "mace_logp_grad",
    "pattern_loglik_grad",
    "simplex_backward",
    "simplex_grad",
]
