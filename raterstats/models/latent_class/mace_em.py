"""EM for MACE: mean-field variational Bayes (flat, the default) or EM with prior
pseudo-counts, and the penalised generalised M-step of hierarchical competence.

Each iteration's E-step runs on the table of expected log-parameters
(:func:`expected_log_table`) with the shared E-step
(:mod:`raterstats.models.latent_class.em`); at point values that table is MACE's likelihood table
(:func:`raterstats.models.latent_class.reference.mace_rating_table`), computed in log
space.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import digamma, expit

from raterstats.models.latent_class.data import LatentClassData, majority_vote
from raterstats.models.latent_class.em import select_em_kernels, select_em_step
from raterstats.models.latent_class.mace_params import decomposition
from raterstats.models.latent_class.reference import TableLayout, class_counts, table_layout

if TYPE_CHECKING:
    from raterstats.models.latent_class.mace import MACE


def expected_log_table(
    e_log_t: np.ndarray,
    e_log_1mt: np.ndarray,
    e_log_xi: np.ndarray,
    e_cell: np.ndarray,
    e_code: np.ndarray,
    e_rd: np.ndarray,
    e_valid: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """MACE's table ``(E, K)`` in log space from (expected) log competence
    ``e_log_t (C,)``, log incompetence ``e_log_1mt (C,)`` and log spam rows
    ``e_log_xi (R * D, K)``, for table rows of cell ``e_cell``, rated category ``e_code``,
    rater x dimension row ``e_rd`` and valid classes ``e_valid (E, K)`` (0 elsewhere); and
    the share of the rated category's probability that comes from competence,
    ``theta / (theta + (1 - theta) xi)``, per row (the M-step's responsibilities).

    Examples
    --------
    >>> T, ratio = expected_log_table(np.log([0.5]), np.log([0.5]), np.log([[0.5, 0.5]]),
    ...                               np.array([0]), np.array([1]), np.array([0]),
    ...                               np.array([[True, True]]))
    >>> np.exp(T).round(3).tolist(), ratio.round(3).tolist()
    ([[0.25, 0.75]], [0.667])
    """
    E = e_cell.size
    mlog = e_log_1mt[e_cell] + e_log_xi[e_rd, e_code]
    match = np.logaddexp(e_log_t[e_cell], mlog)
    T = np.where(e_valid, mlog[:, None], 0.0)
    T[np.arange(E), e_code] = match
    return T, np.exp(e_log_t[e_cell] - match)


def mace_em_run(
    model: MACE,
    data: LatentClassData,
    *,
    rng: np.random.Generator,
    random_init: bool,
    max_iter: int,
    tol: float,
    variational: bool,
    lay: TableLayout | None = None,
    state: dict[str, Any] | None = None,
    finish: bool = True,
) -> dict[str, Any]:
    """One EM run: from the majority vote, random parameters (``random_init``) or the
    ``state`` of an earlier run (continued, its iterations counted); ``finish=False``
    skips the point estimates and plug-in likelihood (a short run of the restarts)."""
    pri = model.priors
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C = R * D * G
    hier = model.is_hierarchical(data)
    a_c, b_c = model.competence_beta()
    a_spam = np.broadcast_to(pri["spam"].param("a", 10.0), (K,))
    a_prev = np.broadcast_to(pri["prevalence"].param("a", 1.0), (K,))
    if lay is None:
        lay = table_layout(data, data.p_cell)
    _, em_accumulate, _ = select_em_kernels(lay)
    em_step = select_em_step(lay)
    e_cell, e_code = lay.e_row, lay.e_code
    E = e_cell.size
    e_rd = (e_cell // (D * G)) * D + (e_cell // G) % D
    e_dim = (e_cell // G) % D
    e_valid = data.valid[e_dim]  # (E, K)
    P = data.n_patterns
    mask = lay.mask
    valid_rd = np.broadcast_to(data.valid, (R, D, K)).reshape(R * D, K)
    cell_dg = np.arange(C) % (D * G)
    cell_r = np.arange(C) // (D * G)
    m0, s0 = pri["competence_mean"].param("mu", 1.0), pri["competence_mean"].param("sigma", 1.5)
    sig_u = pri["rater_sd"].mean()
    sig_v = pri["cell_sd"].mean()
    n_e = np.bincount(lay.p_e, lay.pattern_w[data.p_pattern], minlength=E)
    n_cnt = np.bincount(e_cell, n_e, minlength=C)
    q = np.empty((P, K))

    def table(
        e_log_t: np.ndarray, e_log_1mt: np.ndarray, e_log_xi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        return expected_log_table(e_log_t, e_log_1mt, e_log_xi, e_cell, e_code, e_rd, e_valid)

    hier_x = np.zeros(D * G + R + (C if D * G > 1 else 0))
    hier_x[: D * G] = m0
    prev_ll = -np.inf
    it0 = 0
    M: np.ndarray | None = None  # expected counts of q (from the E-step)
    M_buf = np.zeros((E, K))
    cc: np.ndarray | None = None  # class counts of q (from the E-step)
    cc_buf = np.zeros((D, K))
    if state is not None:
        q[:] = state["q"]
        hier_x = state["hier_x"].copy()
        prev_ll, it0 = state["objective"], state["n_iter"]
        # the M-step's competence responsibilities use the parameters that gave q
        e_log_t, e_log_1mt, e_log_xi = state["e_log"]
        M, cc = state["M"], state["cc"]
        e_log_prev = np.zeros((D, K))
        have_q = True
    elif random_init:
        theta = rng.uniform(0.3, 0.95, C)
        xi = rng.dirichlet(np.ones(K), R * D) * valid_rd + 1e-12
        xi /= xi.sum(axis=1, keepdims=True)
        prev = rng.dirichlet(np.ones(K), D) * data.valid + 1e-12
        prev /= prev.sum(axis=1, keepdims=True)
        e_log_t, e_log_1mt = np.log(theta), np.log1p(-theta)
        with np.errstate(divide="ignore"):
            e_log_xi = np.where(valid_rd, np.log(xi), -np.inf)
            e_log_prev = np.where(data.valid, np.log(prev), -np.inf)
        have_q = False
    else:
        first = np.zeros(P, dtype=np.int64)
        first[data.unit_pattern[::-1]] = np.arange(data.n_units)[::-1]
        q[:] = majority_vote(data)[first]
        e_log_t = np.full(C, np.log(0.7))
        e_log_1mt = np.full(C, np.log(0.3))
        e_log_xi = np.where(valid_rd, np.log(1.0 / K), -np.inf)
        e_log_prev = np.zeros((D, K))
        have_q = True
    eta = np.zeros(C)
    converged = False
    n_iter = it0
    ll = prev_ll
    s_cnt = np.zeros(C)
    sc = np.zeros((R * D, K))
    pc = np.zeros((D, K))
    for it in range(it0, max_iter):
        n_iter = it + 1
        if have_q:
            # ---- M-step from class posteriors q (P, K)
            _, ratio = table(e_log_t, e_log_1mt, e_log_xi)
            if M is None:  # q given (majority vote), not from an E-step
                M = em_accumulate(q, lay.p_e, lay.p_start, lay.pattern_w, E)
            comp = ratio * M[np.arange(E), e_code]
            s_cnt = np.bincount(e_cell, comp, minlength=C)
            spam_cnt = np.bincount(e_rd * K + e_code, n_e - comp, minlength=R * D * K)
            spam_cnt = spam_cnt.reshape(R * D, K)
            prev_cnt = class_counts(data, q) if cc is None else cc.copy()
            if hier:
                hier_x, eta = hier_mstep(
                    hier_x, s_cnt, n_cnt, cell_dg, cell_r, D * G, R, m0, s0, sig_u, sig_v
                )
                e_log_t, e_log_1mt = -np.logaddexp(0, -eta), -np.logaddexp(0, eta)
            elif variational:
                tot = digamma(a_c + b_c + n_cnt)
                e_log_t = digamma(a_c + s_cnt) - tot
                e_log_1mt = digamma(b_c + n_cnt - s_cnt) - tot
            else:
                th = (a_c + s_cnt) / (a_c + b_c + n_cnt)
                e_log_t, e_log_1mt = np.log(th), np.log1p(-th)
            sc = np.where(valid_rd, spam_cnt + a_spam, 0.0)
            pc = np.where(data.valid, prev_cnt + a_prev, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                if variational:
                    e_log_xi = np.where(
                        valid_rd,
                        digamma(np.where(valid_rd, sc, 1.0))
                        - digamma(sc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
                    e_log_prev = np.where(
                        data.valid,
                        digamma(np.where(data.valid, pc, 1.0))
                        - digamma(pc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
                else:
                    e_log_xi = np.where(
                        valid_rd, np.log(sc / sc.sum(axis=1, keepdims=True)), -np.inf
                    )
                    e_log_prev = np.where(
                        data.valid, np.log(pc / pc.sum(axis=1, keepdims=True)), -np.inf
                    )
        # ---- E-step
        T, _ = table(e_log_t, e_log_1mt, e_log_xi)
        M, cc = M_buf, cc_buf
        ll = em_step(
            T, e_log_prev, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, mask, q, M, cc,
        )  # fmt: skip
        have_q = True
        if abs(ll - prev_ll) <= tol * max(1.0, abs(ll)):
            converged = True
            break
        prev_ll = ll
    run: dict[str, Any] = {"objective": float(ll), "converged": converged, "n_iter": n_iter}
    if not finish:
        run["state"] = {
            "q": q, "hier_x": hier_x, "objective": float(ll), "n_iter": n_iter,
            "e_log": (e_log_t, e_log_1mt, e_log_xi), "M": M, "cc": cc,
        }  # fmt: skip
        return run
    # ---- point estimates (posterior means) and plug-in marginal log-likelihood
    theta = expit(eta) if hier else (a_c + s_cnt) / (a_c + b_c + n_cnt)
    xi = sc / sc.sum(axis=1, keepdims=True)
    prev = pc / pc.sum(axis=1, keepdims=True)
    values: dict[str, np.ndarray] = {
        "competence": theta.reshape(R, D, G),
        "spam": xi.reshape(R, D, K),
        "prevalence": prev,
    }
    if hier:
        beta = hier_x[: D * G].reshape(D, G)
        values["competence_cell_mean"] = beta
        values["rater_effect"] = hier_x[D * G : D * G + R]
        if D * G > 1:
            values["cell_effect"] = hier_x[D * G + R :].reshape(R, D, G)
        values.update(decomposition(beta))
    with np.errstate(divide="ignore"):
        T, _ = table(np.log(theta), np.log1p(-theta), np.log(np.where(valid_rd, xi, 1.0)))
        log_prev = np.where(data.valid, np.log(np.where(data.valid, prev, 1.0)), -np.inf)
    # (the iterations' E-step, threaded on large data; its expected counts are not used)
    ll_plugin = em_step(
        T, log_prev, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, mask,
        np.empty((P, K)), np.empty((lay.e_row.size, K)), np.empty((D, K)),
    )  # fmt: skip
    return {**run, "values": values, "loglik": float(ll_plugin)}


def hier_mstep(
    x0: np.ndarray,
    s: np.ndarray,
    n: np.ndarray,
    cell_dg: np.ndarray,
    cell_r: np.ndarray,
    n_dg: int,
    R: int,
    m0: float,
    s0: float,
    sig_u: float,
    sig_v: float,
    sweeps: int = 5,
) -> tuple[np.ndarray, np.ndarray]:
    """Increase sum_c s log sigmoid(eta) + (n - s) log sigmoid(-eta) + normal log-priors of
    eta_c = beta_dg + u_r (+ v_c), with the zero-sum effects of the sampled model (``u``
    sums to zero over raters, ``v`` over raters and over cells; their log-priors are
    ``-|u|^2 / 2 sigma_u^2`` and ``-|v|^2 / 2 sigma_v^2``), by block-coordinate Newton sweeps
    (beta, u, v) with a diagonal Hessian, each step projected onto the constraints by
    Lagrange multipliers (a generalised M-step)."""
    has_v = x0.size > n_dg + R
    beta = x0[:n_dg].copy()
    u = x0[n_dg : n_dg + R].copy()
    v = x0[n_dg + R :].copy() if has_v else np.zeros(cell_dg.size)
    for _ in range(sweeps):
        for block in ("beta", "u", "v"):
            eta = beta[cell_dg] + u[cell_r] + v
            p = expit(eta)
            g = s - n * p
            h = n * p * (1 - p)
            if block == "beta":
                gb = np.bincount(cell_dg, g, minlength=n_dg) - (beta - m0) / s0**2
                hb = np.bincount(cell_dg, h, minlength=n_dg) + 1 / s0**2
                beta = beta + gb / hb
            elif block == "u":
                gu = np.bincount(cell_r, g, minlength=R) - u / sig_u**2
                hu = np.bincount(cell_r, h, minlength=R) + 1 / sig_u**2
                lam = np.sum(gu / hu) / np.sum(1 / hu)  # keeps sum(u) = 0
                u = u + (gu - lam) / hu
            elif has_v:
                gv = (g - v / sig_v**2).reshape(R, n_dg)
                hv = (h + 1 / sig_v**2).reshape(R, n_dg)
                v = v + two_way_zero_sum_step(gv, hv).reshape(-1)
    x = np.concatenate([beta, u, v]) if has_v else np.concatenate([beta, u])
    return x, beta[cell_dg] + u[cell_r] + v


def two_way_zero_sum_step(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The Newton step ``d`` maximising ``sum(g d - h d^2 / 2)`` subject to zero row and
    column sums: ``d = (g - a_r - b_c) / h`` with multipliers ``a``, ``b`` from the
    (rank-deficient by one) linear system of the constraints."""
    R, M = g.shape
    w = 1.0 / h
    A = np.zeros((R + M, R + M))
    A[:R, :R] = np.diag(w.sum(axis=1))
    A[:R, R:] = w
    A[R:, :R] = w.T
    A[R:, R:] = np.diag(w.sum(axis=0))
    rhs = np.concatenate([(g * w).sum(axis=1), (g * w).sum(axis=0)])
    ab = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return (g - ab[:R, None] - ab[None, R:]) * w


__all__ = ["expected_log_table", "hier_mstep", "mace_em_run", "two_way_zero_sum_step"]
