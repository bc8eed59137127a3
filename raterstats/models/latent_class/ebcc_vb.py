"""Mean-field variational Bayes for the enhanced BCC (Li, Rubinstein & Cohn 2019), as in
the authors' ``ebcc.py``: a factor ``q(T_u, g_u)`` per unit over its (class, subtype)
pairs and Dirichlet factors of the subtype confusions, the subtype weights and the
prevalence. Every update is exact coordinate ascent on the evidence lower bound (ELBO),
so the bound never decreases (the tests check it).

Updates (``N_c[t, m, a]``: expected counts of rating ``a`` by cell ``c`` on units of
class ``t`` and subtype ``m``)::

    log q(T_u = t, g_u = m) = E log tau_d[t] + E log nu_d[t, m]
                              + sum over the unit's ratings E log pi_c[t, m, a] + const
    q(pi_c[t, m]) = Dirichlet(alpha_t + N_c[t, m])
    q(nu_d[t])    = Dirichlet(a_nu + sum_u q(T_u = t, g_u = m))
    q(tau_d)      = Dirichlet(a_tau + sum_u q(T_u = t))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from raterstats.models.latent_class.crowd_vb import (
    VBLayout,
    dirichlet_elog,
    dirichlet_kl,
    dirichlet_mean,
)
from raterstats.models.latent_class.em import VB_NUMPY_MAX, select_em_step
from raterstats.models.latent_class.reference import em_accumulate_np

if TYPE_CHECKING:
    from raterstats.models.latent_class.ebcc import EnhancedBCC


def state_mask(mask: np.ndarray, M: int) -> np.ndarray:
    """``(P, K M)`` possible (class, subtype) states from the possible classes ``(P, K)``
    (column ``t M + m``).

    Examples
    --------
    >>> state_mask(np.array([[True, False]]), 2).tolist()
    [[True, True, False, False]]
    """
    return np.repeat(mask, M, axis=1)


def subtype_counts(Mc: np.ndarray, vl: VBLayout, M: int) -> np.ndarray:
    """``(n_cells, K, M, K)`` expected counts ``N[c, t, m, a]`` from the E-step's counts
    ``Mc (E, K M)``."""
    K, NC = vl.K, vl.n_cells
    idx = vl.lay.e_row * K + vl.lay.e_code
    N = np.empty((NC, K, M, K))
    for s in range(K * M):
        t, m = divmod(s, M)
        N[:, t, m, :] = np.bincount(idx, Mc[:, s], minlength=NC * K).reshape(NC, K)
    return N


def ebcc_vb_run(
    model: EnhancedBCC,
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
    """One variational run with ``M`` subtypes per class from the class posteriors
    ``q0 (P, K)`` (the soft majority vote), each unit's class split over the subtypes by
    Dirichlet(1) draws (the authors' start; every restart draws its own), or from an
    earlier run's ``state``. ``random_init`` is accepted for the restart driver and changes
    nothing (every start is random in its subtypes). ``trace`` collects the ELBO after
    every iteration. Returns ``objective`` (the ELBO), ``loglik`` (plug-in marginal
    log-likelihood at the posterior means), ``converged``, ``n_iter``, ``state`` and
    ``values``."""
    lay = vl.lay
    K, D = vl.K, vl.n_dims
    S = K * M
    pri = model.priors
    conf_conc = model.confusion_conc(K)  # (K, K)
    a_prev = float(pri["prevalence"].param("a", 3.0))
    a_nu = float(pri["subtype_weight"].param("a", 1.0))
    em_step = select_em_step(lay, VB_NUMPY_MAX)
    mask = state_mask(lay.mask, M)
    E = lay.e_row.size
    P = lay.n_patterns
    Mc = np.zeros((E, S))
    cc = np.zeros((D, S))
    it0, prev_obj = 0, -np.inf
    if state is not None:
        q = state["q"].copy()
        it0, prev_obj = state["n_iter"], state["objective"]
    else:
        split = rng.dirichlet(np.ones(M), (P, K)) if M > 1 else np.ones((P, K, 1))
        q = (q0[:, :, None] * split).reshape(P, S)
    Mc = em_accumulate_np(q, lay.p_e, lay.p_start, lay.pattern_w, E)
    np.add.at(cc, lay.pattern_dim, lay.pattern_w[:, None] * q)
    n_iter, converged, obj = it0, False, prev_obj
    conc_pi = nu_conc = tau_conc = np.zeros(0)
    for it in range(it0, max_iter):
        n_iter = it + 1
        # M-type updates of the Dirichlet factors from q(T, g)
        conc_pi = conf_conc[None, :, None, :] + subtype_counts(Mc, vl, M)
        ccr = cc.reshape(D, K, M)
        nu_conc = a_nu + ccr
        tau_conc = a_prev + ccr.sum(-1)
        # E-step
        elog_pi = dirichlet_elog(conc_pi)  # (NC, K, M, K)
        T = elog_pi[lay.e_row, :, :, lay.e_code].reshape(E, S)
        log_prior = (dirichlet_elog(tau_conc)[:, :, None] + dirichlet_elog(nu_conc)).reshape(D, S)
        ll = em_step(
            np.ascontiguousarray(T), np.ascontiguousarray(log_prior), lay.p_e, lay.p_start,
            lay.pattern_dim, lay.pattern_w, mask, q, Mc, cc,
        )  # fmt: skip
        obj = ll - dirichlet_kl(conc_pi, conf_conc[None, :, None, :])
        obj -= dirichlet_kl(tau_conc, np.full(K, a_prev))
        if M > 1:
            obj -= dirichlet_kl(nu_conc, np.full(M, a_nu))
        if trace is not None:
            trace.append(float(obj))
        if abs(obj - prev_obj) <= tol * max(1.0, abs(obj)):
            converged = True
            break
        prev_obj = obj
    run: dict[str, Any] = {"objective": float(obj), "converged": converged, "n_iter": n_iter}
    run["state"] = {"q": q.copy(), "n_iter": n_iter, "objective": float(obj)}
    if not finish:
        return run
    # the factors of the final q
    conc_pi = conf_conc[None, :, None, :] + subtype_counts(Mc, vl, M)
    ccr = cc.reshape(D, K, M)
    values = {
        "subtype_confusion": dirichlet_mean(conc_pi),
        "subtype_weight": dirichlet_mean(a_nu + ccr),
        "prevalence": dirichlet_mean(a_prev + ccr.sum(-1)),
    }
    values["confusion"] = marginal_confusion(
        values["subtype_confusion"], values["subtype_weight"], vl.cell_dim
    )
    run["values"] = values
    run["q"] = q
    run["loglik"] = plugin_loglik(values, vl, M)
    return run


def marginal_confusion(sub: np.ndarray, nu: np.ndarray, cell_dim: np.ndarray) -> np.ndarray:
    """Each cell's confusion averaged over the subtypes, ``sum_m nu_d[t, m] pi_c[t, m, :]``:
    ``sub (..., NC, K, M, K)``, ``nu (..., D, K, M)`` -> ``(..., NC, K, K)``.

    Examples
    --------
    >>> sub = np.array([[[[0.9, 0.1], [0.5, 0.5]], [[0.2, 0.8], [0.2, 0.8]]]])
    >>> nu = np.array([[[0.5, 0.5], [1.0, 0.0]]])
    >>> marginal_confusion(sub, nu, np.array([0])).round(2).tolist()
    [[[0.7, 0.3], [0.2, 0.8]]]
    """
    w = nu[..., cell_dim, :, :]  # (..., NC, K, M)
    return np.einsum("...ctm,...ctma->...cta", w, sub)


def plugin_loglik(values: dict[str, np.ndarray], vl: VBLayout, M: int) -> float:
    """Marginal log-likelihood of the ratings at point values (``subtype_confusion``
    ``(NC, K, M, K)``, ``subtype_weight`` ``(D, K, M)``, ``prevalence`` ``(D, K)``)."""
    from raterstats.models.latent_class.reference import logsumexp_np, pattern_log_joint_np

    lay = vl.lay
    K, D = vl.K, vl.n_dims
    with np.errstate(divide="ignore"):
        T = np.log(values["subtype_confusion"])[lay.e_row, :, :, lay.e_code].reshape(-1, K * M)
        lpri = np.log(values["prevalence"])[:, :, None] + np.log(values["subtype_weight"])
    joint = pattern_log_joint_np(
        T[None], lpri.reshape(1, D, K * M), lay._replace(mask=state_mask(lay.mask, M))
    )[0]
    return float(np.dot(lay.pattern_w, logsumexp_np(joint, axis=-1)))


__all__ = ["ebcc_vb_run", "marginal_confusion", "plugin_loglik", "state_mask", "subtype_counts"]
