"""Mean-field variational Bayes for community Dawid-Skene, with the community confusions
and the concentration as point estimates (variational EM).

Factors: ``q(T_u)`` per unit (categorical), ``q(pi_c[t, :])`` per confusion row of every
rater x dimension x design cell (Dirichlet), ``q(c_j)`` per rater (categorical over the
``M`` communities), ``q(rho)`` and ``q(prevalence_d)`` (Dirichlet); the community
confusions ``C`` and the concentration ``s`` are maximised (their priors included: a
posterior mode, type-II). Every update maximises the evidence lower bound (ELBO) in its
block, so the bound never decreases (the tests check it); ``C`` and ``s`` are maximised
together by L-BFGS from their current values, and kept when it does not improve.

Updates (``N_c[t, a]``: expected counts of rating ``a`` by cell ``c`` on units of class
``t``; ``r_jm = q(c_j = m)``; ``j(c)``, ``dg(c)``: the cell's rater and dimension x
design)::

    q(pi_c[t]) = Dirichlet(N_c[t] + f + s sum_m r_j(c)m C_m,dg(c)[t])
    log r_jm   = E log rho_m + sum_(c of j, t) [lgamma(K f + s) - sum_a lgamma(f + s C[a])
                                               + sum_a (f + s C[a] - 1) E log pi_c[t, a]]
                 + const
    q(rho)     = Dirichlet(a_rho + sum_j r_j)
    C, s       = argmax sum_(j, m) r_jm sum_(c of j, t) E log Dir(pi_c[t]; f + s C_m,dg(c)[t])
                 + log p(C) + log p(s)

(``f``: the rater rows' floor, option ``rater_floor``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import digamma, gammaln, logsumexp, zeta

from raterstats.models.latent_class.crowd_vb import (
    VBLayout,
    dirichlet_elog,
    dirichlet_kl,
    dirichlet_log_norm,
    dirichlet_mean,
)
from raterstats.models.latent_class.em import VB_NUMPY_MAX, select_em_step

if TYPE_CHECKING:
    from raterstats.models.latent_class.community_ds import CommunityDawidSkene

#: A confusion row whose Newton step is at most this large in every entry is left as it
#: is (:func:`optimise_cs`): it sits at its optimum to rounding.
ROW_STEP_MIN = 1e-12

#: Step halvings per Newton step of a confusion row before it is left as it is: a row
#: pressed against the simplex's edge (its Newton step leaves the simplex at every length
#: that still raises the objective) was halved 30 times per step, most of a fit's time;
#: the steps given up are below 1/4,096 of the Newton step.
ROW_HALVINGS = 12


def trigamma(x: np.ndarray | float) -> np.ndarray:
    """psi'(x) = zeta(2, x) (scipy's ``polygamma(1, x)`` without its Python wrapper)."""
    return zeta(2.0, x)


def expected_counts(Mc: np.ndarray, vl: VBLayout) -> np.ndarray:
    """``(n_cells, K, K)`` expected counts ``N[c, t, a]`` from the E-step's per-row counts
    ``Mc (E, K)`` (rows: the layout's (cell, rated category) pairs)."""
    K, NC = vl.K, vl.n_cells
    idx = vl.lay.e_row * K + vl.lay.e_code
    N = np.empty((NC, K, K))
    for t in range(K):
        N[:, t, :] = np.bincount(idx, Mc[:, t], minlength=NC * K).reshape(NC, K)
    return N


def community_terms(
    elog_pi: np.ndarray, C: np.ndarray, s: float, vl: VBLayout, floor: float
) -> np.ndarray:
    """``A0[j, m] = sum over the cells c of rater j and rows t of E log Dir(pi_c[t];
    floor + s C[m, dg(c), t])`` under ``q(pi)`` (``elog_pi (n_cells, K, K)``, ``C (M, DG,
    K, K)``)."""
    M, K = C.shape[0], C.shape[-1]
    sc = floor + s * C
    norm = gammaln(K * floor + s) - gammaln(sc).sum(-1)  # (M, DG, K)
    # per cell and community: sum_t [norm + sum_a (sC - 1) E log pi]
    per = norm[:, vl.cell_dg].sum(-1) + np.einsum(
        "mcta,cta->mc", sc[:, vl.cell_dg] - 1.0, elog_pi
    )  # (M, NC)
    out = np.zeros((vl.n_raters, M))
    for m in range(M):
        out[:, m] = np.bincount(vl.cell_rater, per[m], minlength=vl.n_raters)
    return out


def community_stats(
    r: np.ndarray, elog_pi: np.ndarray, vl: VBLayout
) -> tuple[np.ndarray, np.ndarray]:
    """Sufficient statistics of ``C`` and ``s``: ``W[m, dg] = sum_j r_jm`` (each rater has
    one cell per dimension x design) and ``L[m, dg, t, a] = sum_c r_j(c)m E log pi_c[t,
    a]``."""
    M = r.shape[1]
    rc = r[vl.cell_rater]  # (NC, M)
    W = np.zeros((M, vl.n_dg))
    L = np.zeros((M, vl.n_dg, vl.K, vl.K))
    for dg in range(vl.n_dg):
        sel = vl.cell_dg == dg
        W[:, dg] = rc[sel].sum(0)
        L[:, dg] = np.einsum("cm,cta->mta", rc[sel], elog_pi[sel])
    return W, L


def cs_objective(
    C: np.ndarray,
    s: float,
    W: np.ndarray,
    L: np.ndarray,
    conf_conc: np.ndarray,
    s_prior: tuple[float, float],
    floor: float,
) -> float:
    """The part of the ELBO that depends on ``C`` and ``s``: ``sum W (K lgamma(K f + s)
    - sum lgamma(f + s C)) + sum (f + s C - 1) L`` (``f``: the floor) plus the Dirichlet
    log prior of ``C`` and the Gamma log prior of ``s``."""
    a_s, b_s = s_prior
    K = C.shape[-1]
    val = float(
        np.sum(W * (K * gammaln(K * floor + s) - gammaln(floor + s * C).sum(axis=(-1, -2))))
    )
    val += float(np.sum((floor + s * C - 1.0) * L))
    val += c_log_prior(C, conf_conc)
    val += a_s * np.log(b_s) - gammaln(a_s) + (a_s - 1.0) * np.log(s) - b_s * s
    return val


def c_log_prior(C: np.ndarray, conf_conc: np.ndarray) -> float:
    """Dirichlet log prior of the community confusion rows ``C (M, DG, K, K)``, every row
    ``t`` with concentration ``conf_conc[t]``."""
    a = np.broadcast_to(conf_conc, C.shape)
    return float(np.sum(dirichlet_log_norm(a) + ((a - 1.0) * np.log(C)).sum(-1)))


def optimise_cs(
    C: np.ndarray,
    s: float,
    W: np.ndarray,
    L: np.ndarray,
    conf_conc: np.ndarray,
    s_prior: tuple[float, float],
    floor: float,
    sweeps: int = 1,
    steps: int = 3,
) -> tuple[np.ndarray, float, float]:
    """Increase :func:`cs_objective` over ``C`` and ``s`` by block-coordinate Newton steps
    with backtracking (no step lowers it): ``s`` by Newton on the concave ``F(s)``, each
    row of ``C`` by Newton on the simplex (the objective is separable and concave in the
    row's entries: the diagonal Hessian ``-W s^2 psi'(s C) - (alpha - 1) / C^2``, the step
    projected on ``sum = 0``). Returns ``(C, s, objective)``.

    Compiled (:func:`~raterstats.models.latent_class.kernels_crowd.optimise_cs_nb`): the
    arrays are tiny (communities x designs x K x K), so the NumPy form
    (:func:`optimise_cs_np`, the reference the tests compare with) spent its time in
    the overhead of its calls: 1.2 ms per VB iteration, 4.8 s of the 8.9 s model choice
    on the built-in study's 3-point ratings.

    No general-purpose optimiser on purpose: scipy's L-BFGS-B calls BLAS for its tiny
    vectors, and OpenBLAS's threads made each call cost milliseconds on a loaded machine
    (8 s of a 9 s fit)."""
    from raterstats.models.latent_class.kernels_crowd import optimise_cs_nb

    a_s, b_s = s_prior
    C = np.array(C, dtype=np.float64, order="C")  # changed in place by the kernel
    alpha = np.ascontiguousarray(np.broadcast_to(conf_conc, C.shape), dtype=np.float64)
    s = optimise_cs_nb(
        C, float(s), np.ascontiguousarray(W, dtype=np.float64),
        np.ascontiguousarray(L, dtype=np.float64), alpha, float(a_s), float(b_s),
        float(floor), int(sweeps), int(steps), ROW_STEP_MIN, ROW_HALVINGS,
    )  # fmt: skip
    return C, float(s), cs_objective(C, s, W, L, conf_conc, s_prior, floor)


def optimise_cs_np(
    C: np.ndarray,
    s: float,
    W: np.ndarray,
    L: np.ndarray,
    conf_conc: np.ndarray,
    s_prior: tuple[float, float],
    floor: float,
    sweeps: int = 1,
    steps: int = 3,
) -> tuple[np.ndarray, float, float]:
    """:func:`optimise_cs` in NumPy: the reference of the compiled form (same steps)."""
    a_s, b_s = s_prior
    K = C.shape[-1]
    Wr = W[..., None]  # (M, DG, 1): the weight of every row t
    Wc = W[..., None, None]  # (M, DG, 1, 1): of every entry
    alpha = np.broadcast_to(conf_conc, C.shape)

    f = floor

    def f_s(sv: float) -> float:
        val = float(np.sum(W * (K * gammaln(K * f + sv) - gammaln(f + sv * C).sum(axis=(-1, -2)))))
        return val + sv * float(np.sum(C * L)) + (a_s - 1.0) * np.log(sv) - b_s * sv

    def f_rows(Cx: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (
                -Wr * gammaln(f + s * Cx).sum(-1)
                + s * (Cx * L).sum(-1)
                + ((alpha - 1.0) * np.log(Cx)).sum(-1)
            )

    for _ in range(sweeps):
        # s: Newton with backtracking
        for _ in range(steps):
            g = float(
                np.sum(W * (K * digamma(K * f + s) - (C * digamma(f + s * C)).sum(axis=(-1, -2))))
            )
            g += float(np.sum(C * L)) + (a_s - 1.0) / s - b_s
            h = float(
                np.sum(
                    W * (K * trigamma(K * f + s) - (C**2 * trigamma(f + s * C)).sum(axis=(-1, -2)))
                )
            )
            h -= (a_s - 1.0) / s**2
            step = -g / h if h < 0 else g * s / max(abs(g), 1.0)
            f0, t = f_s(s), 1.0
            while t > 1e-6:
                s1 = s + t * step
                if s1 > 0 and f_s(s1) >= f0:
                    s = s1
                    break
                t *= 0.5
            if abs(step) < 1e-10 * s:
                break
        # C rows: Newton on the simplex with backtracking, row by row (vectorised)
        for _ in range(steps):
            gc = -s * Wc * digamma(f + s * C) + s * L + (alpha - 1.0) / C
            hc = -(s**2) * Wc * trigamma(f + s * C) - (alpha - 1.0) / C**2
            hc = np.minimum(hc, -1e-8)
            lam = (gc / hc).sum(-1, keepdims=True) / (1.0 / hc).sum(-1, keepdims=True)
            delta = -(gc - lam) / hc
            f0r = f_rows(C)
            tr = np.ones((*C.shape[:-1], 1))
            done = np.abs(delta).max(-1) <= ROW_STEP_MIN
            Cn = C.copy()
            for _ in range(ROW_HALVINGS):
                cand = C + tr * delta
                ok = (cand > 0).all(-1) & ~done
                if ok.any():
                    better = ok & (f_rows(np.where(ok[..., None], cand, C)) >= f0r)
                    Cn[better] = cand[better] / cand[better].sum(-1, keepdims=True)
                    done |= better
                if done.all():
                    break
                tr = np.where(done[..., None], tr, 0.5 * tr)
            C = Cn
    return C, s, cs_objective(C, s, W, L, conf_conc, s_prior, floor)


def agreement_start(vl: VBLayout, N: np.ndarray, M: int) -> np.ndarray:
    """Deterministic start of the communities: raters ranked by their expected agreement
    with the (soft) majority vote, cut into ``M`` groups of equal size; ``(R, M)``
    one-hot (nearly: 0.9 on the group)."""
    R = vl.n_raters
    agree = np.einsum("ctt->c", N)
    total = N.sum(axis=(1, 2))
    a = np.bincount(vl.cell_rater, agree, minlength=R)
    n = np.bincount(vl.cell_rater, total, minlength=R)
    acc = (a + 1.0) / (n + 2.0)
    order = np.argsort(-acc, kind="stable")
    group = np.empty(R, dtype=np.int64)
    group[order] = (np.arange(R) * M) // max(R, 1)
    r = np.full((R, M), 0.1 / max(M - 1, 1) if M > 1 else 0.0)
    r[np.arange(R), group] = 0.9 if M > 1 else 1.0
    return r


def cds_vb_run(
    model: CommunityDawidSkene,
    vl: VBLayout,
    q0: np.ndarray,
    M: int,
    *,
    rng: np.random.Generator,
    random_init: bool,
    max_iter: int,
    tol: float,
    state: dict[str, Any] | None = None,
    finish: bool = True,
    trace: list[float] | None = None,
) -> dict[str, Any]:
    """One variational run with ``M`` communities on the layout ``vl``, from the class
    posteriors ``q0 (P, K)`` (the soft majority vote) with communities by agreement
    (:func:`agreement_start`) or at random (``random_init``: responsibilities drawn from
    Dirichlet(1)), or from an earlier run's ``state``. ``trace`` (a list) collects the
    ELBO after every iteration. Returns ``objective`` (the ELBO), ``loglik`` (the plug-in
    marginal log-likelihood at the posterior means, ``finish=True``), ``converged``,
    ``n_iter``, ``state`` and ``values`` (posterior means and point estimates)."""
    lay = vl.lay
    K, R, DG = vl.K, vl.n_raters, vl.n_dg
    D = vl.n_dims
    pri = model.priors
    conf_conc = model.community_conc(K)  # (K, K)
    a_prev = float(pri["prevalence"].param("a", 3.0))
    a_rho = float(pri["community_weight"].param("a", 1.0))
    floor = float(model.options["rater_floor"])
    s_prior = (
        float(pri["concentration"].param("alpha")),
        float(pri["concentration"].param("beta")),
    )
    em_step = select_em_step(lay, VB_NUMPY_MAX)
    E = lay.e_row.size
    Mc = np.zeros((E, K))
    cc = np.zeros((D, K))
    it0 = 0
    prev_obj = -np.inf
    if state is not None:
        q = state["q"].copy()
        conc_pi, r, rho_conc = state["conc_pi"], state["r"], state["rho_conc"]
        C, s, prev_conc = state["C"], state["s"], state["prev_conc"]
        it0, prev_obj = state["n_iter"], state["objective"]
    else:
        q = np.array(q0, dtype=float)
        from raterstats.models.latent_class.reference import em_accumulate_np

        Mc = em_accumulate_np(q, lay.p_e, lay.p_start, lay.pattern_w, E)
        N = expected_counts(Mc, vl)
        r = rng.dirichlet(np.ones(M), R) if random_init else agreement_start(vl, N, M)
        # communities' confusions: their raters' pooled counts plus the prior
        C = np.empty((M, DG, K, K))
        rc = r[vl.cell_rater]
        for dg in range(DG):
            sel = vl.cell_dg == dg
            C[:, dg] = np.einsum("cm,cta->mta", rc[sel], N[sel]) + conf_conc
        C = dirichlet_mean(C)
        s = float(s_prior[0] / s_prior[1])  # the prior mean
        rho_conc = a_rho + r.sum(0)
        cc = np.zeros((D, K))
        np.add.at(cc, lay.pattern_dim, lay.pattern_w[:, None] * q)
        prev_conc = a_prev + cc
        conc_pi = N + floor + s * np.einsum("cm,mcta->cta", rc, C[:, vl.cell_dg])
    n_iter = it0
    converged = False
    obj = prev_obj
    for it in range(it0, max_iter):
        n_iter = it + 1
        elog_pi = dirichlet_elog(conc_pi)
        # q(c): community responsibilities
        A = community_terms(elog_pi, C, s, vl, floor) + dirichlet_elog(rho_conc)[None, :]
        r = np.exp(A - logsumexp(A, axis=1, keepdims=True))
        rho_conc = a_rho + r.sum(0)
        # C, s
        W, L = community_stats(r, elog_pi, vl)
        C, s, _ = optimise_cs(C, s, W, L, conf_conc, s_prior, floor)
        # E-step: q(T) from E log pi (conc_pi unchanged since the top of the iteration)
        # and E log prevalence
        T = elog_pi[lay.e_row, :, lay.e_code]  # (E, K)
        ll = em_step(
            np.ascontiguousarray(T), dirichlet_elog(prev_conc), lay.p_e, lay.p_start,
            lay.pattern_dim, lay.pattern_w, lay.mask, q, Mc, cc,
        )  # fmt: skip
        obj = ll + elbo_rest(conc_pi, elog_pi, r, rho_conc, C, s, prev_conc, vl, model)
        if trace is not None:
            trace.append(float(obj))
        # q(prevalence), q(pi) from the new q(T)
        prev_conc = a_prev + cc
        N = expected_counts(Mc, vl)
        conc_pi = N + floor + s * np.einsum("cm,mcta->cta", r[vl.cell_rater], C[:, vl.cell_dg])
        if abs(obj - prev_obj) <= tol * max(1.0, abs(obj)):
            converged = True
            break
        prev_obj = obj
    run: dict[str, Any] = {"objective": float(obj), "converged": converged, "n_iter": n_iter}
    st = {
        "q": q, "conc_pi": conc_pi, "r": r, "rho_conc": rho_conc, "C": C, "s": s,
        "prev_conc": prev_conc, "n_iter": n_iter, "objective": float(obj),
    }  # fmt: skip
    run["state"] = st
    if not finish:
        return run
    values = {
        "confusion": dirichlet_mean(conc_pi),
        "prevalence": dirichlet_mean(prev_conc),
        "community_confusion": C,
        "community_weight": dirichlet_mean(rho_conc),
        "concentration": np.asarray(s),
        "community_membership": r,
    }
    run["values"] = values
    run["q"] = q
    run["loglik"] = plugin_loglik(values["confusion"], values["prevalence"], vl)
    return run


def elbo_rest(
    conc_pi: np.ndarray,
    elog_pi: np.ndarray,
    r: np.ndarray,
    rho_conc: np.ndarray,
    C: np.ndarray,
    s: float,
    prev_conc: np.ndarray,
    vl: VBLayout,
    model: CommunityDawidSkene,
) -> float:
    """The ELBO less its E-step part (which :func:`cds_vb_run` takes from the E-step):
    ``E log p(pi | c, C, s) - E log q(pi) + E log p(c | rho) - E log q(c) - KL(q(rho))
    - KL(q(prevalence)) + log p(C) + log p(s)``."""
    pri = model.priors
    K = vl.K
    conf_conc = model.community_conc(K)
    a_prev = float(pri["prevalence"].param("a", 3.0))
    a_rho = float(pri["community_weight"].param("a", 1.0))
    a_s = float(pri["concentration"].param("alpha"))
    b_s = float(pri["concentration"].param("beta"))
    A0 = community_terms(elog_pi, C, s, vl, float(model.options["rater_floor"]))
    val = float(np.sum(r * A0))
    val -= float(
        np.sum(dirichlet_log_norm(conc_pi) + ((conc_pi - 1.0) * elog_pi).sum(-1))
    )  # E log q(pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(r > 0, r * np.log(r), 0.0)
    val += float(np.sum(r * dirichlet_elog(rho_conc)[None, :]) - np.sum(ent))
    if rho_conc.size > 1:
        val -= dirichlet_kl(rho_conc, np.full(rho_conc.size, a_rho))
    val -= dirichlet_kl(prev_conc, np.full(K, a_prev))
    val += c_log_prior(C, conf_conc)
    val += a_s * np.log(b_s) - gammaln(a_s) + (a_s - 1.0) * np.log(s) - b_s * s
    return val


def plugin_loglik(conf: np.ndarray, prev: np.ndarray, vl: VBLayout) -> float:
    """Marginal log-likelihood of the ratings at point values of the rater confusions
    ``(n_cells, K, K)`` and prevalence ``(D, K)``."""
    from raterstats.models.latent_class.reference import logsumexp_np, pattern_log_joint_np

    lay = vl.lay
    with np.errstate(divide="ignore"):
        T = np.log(conf)[lay.e_row, :, lay.e_code]
        joint = pattern_log_joint_np(T[None], np.log(prev)[None], lay)[0]
    return float(np.dot(lay.pattern_w, logsumexp_np(joint, axis=-1)))


__all__ = [
    "agreement_start",
    "cds_vb_run",
    "community_stats",
    "community_terms",
    "cs_objective",
    "elbo_rest",
    "expected_counts",
    "optimise_cs",
    "optimise_cs_np",
    "plugin_loglik",
]
