"""EM for Dawid-Skene: posterior-mean (or mean-field variational) updates of the confusion
rows for unpooled, pooled and one-coin confusion, and the generalised M-step of partial
pooling with an empirical-Bayes spread.

Each iteration's E-step runs on Dawid-Skene's likelihood table
(:func:`raterstats.models.latent_class.reference.ds_rating_table`) of the current log
confusion rows, with the shared E-step
(:func:`raterstats.models.latent_class.em.select_em_kernels`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import digamma, logsumexp

from raterstats.models.latent_class.data import LatentClassData, majority_vote
from raterstats.models.latent_class.em import select_em_kernels, select_em_step
from raterstats.models.latent_class.reference import (
    TableLayout,
    class_counts,
    ds_rating_table,
    table_layout,
)

if TYPE_CHECKING:
    from raterstats.models.latent_class.dawid_skene import DawidSkene


def ds_em_run(
    model: DawidSkene,
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
    pooling = model.options["pooling"]
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    NC, cell, cell_dim, _ = model.cells(data)
    P = data.n_patterns
    if lay is None:
        lay = table_layout(data, cell)
    _, em_accumulate, _ = select_em_kernels(lay)
    em_step = select_em_step(lay)
    e_cell = lay.e_row
    E = e_cell.size
    mask = lay.mask
    q = np.empty((P, K))
    valid_c = data.valid[cell_dim]  # (NC, K)
    vmat = valid_c[:, :, None] & valid_c[:, None, :]
    a_prev = float(model.priors["prevalence"].param("a", 1.0))
    if pooling in ("unpooled", "pooled"):
        conc = model.confusion_conc(data, NC)
    else:
        conc = np.ones((NC, K, K))
    acc_pr = model.priors["accuracy"]
    a_acc, b_acc = float(acc_pr.param("alpha", 2.0)), float(acc_pr.param("beta", 1.0))
    pr_logit = model.priors["confusion_logit"]
    z_mu, z_sd = float(pr_logit.param("mu", -2.0)), float(pr_logit.param("sigma", 1.5))
    sig = model.priors["rater_sd"].mean()
    kd = data.n_categories[cell_dim].astype(float)
    ti, ai = np.nonzero(~np.eye(K, dtype=bool))
    # partial pooling: [zeta (D x E), sigma (D x E), omega - zeta (cell x E)]
    logit_state = np.concatenate(
        [np.full(D * ti.size, z_mu), np.full(D * ti.size, sig), np.zeros(NC * ti.size)]
    )
    by_error = model.options["spread"] == "error"

    M: np.ndarray | None = None  # expected counts of q (from the E-step)
    M_buf = np.zeros((E, K))
    cc: np.ndarray | None = None  # class counts of q (from the E-step)
    cc_buf = np.zeros((D, K))
    prev_ll = -np.inf
    it0 = 0
    if state is not None:
        q[:] = state["q"]
        M, cc, logit_state = state["M"], state["cc"], state["logit_state"].copy()
        prev_ll, it0 = state["objective"], state["n_iter"]
        have_q = True
    elif random_init:
        conf = rng.dirichlet(np.ones(K), (NC, K)) + np.eye(K) * rng.uniform(0.5, 3.0, (NC, 1, 1))
        conf = np.where(vmat, conf, 0.0)
        conf = conf / np.maximum(conf.sum(axis=-1, keepdims=True), 1e-300)
        prev = rng.dirichlet(np.ones(K), D) * data.valid
        prev = prev / prev.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            log_conf = np.where(vmat, np.log(np.where(vmat, conf, 1.0)), -np.inf)
            log_prev = np.where(data.valid, np.log(np.where(data.valid, prev, 1.0)), -np.inf)
        have_q = False
    else:
        first = np.zeros(P, dtype=np.int64)
        first[data.unit_pattern[::-1]] = np.arange(data.n_units)[::-1]
        q[:] = majority_vote(data)[first]
        have_q = True
    ll = prev_ll
    penalty = 0.0  # partial pooling: the log-prior part of the objective (see partial_mstep)
    converged = False
    n_iter = it0
    counts = np.zeros((NC, K, K))
    prev_cnt = np.zeros((D, K))
    for it in range(it0, max_iter):
        n_iter = it + 1
        if have_q:
            # M-step: expected counts n[c, t, a]
            if M is None:  # q given (majority vote), not from an E-step
                M = em_accumulate(q, lay.p_e, lay.p_start, lay.pattern_w, E)
            counts = cell_counts(M, lay, NC, K)
            prev_cnt = class_counts(data, q) if cc is None else cc.copy()
            if pooling in ("unpooled", "pooled"):
                post = np.where(vmat, counts + conc, 0.0)
                tot = post.sum(axis=-1, keepdims=True)
                with np.errstate(divide="ignore", invalid="ignore"):
                    if variational:
                        log_conf = np.where(
                            vmat, digamma(np.where(vmat, post, 1.0)) - digamma(tot), -np.inf
                        )
                    else:
                        log_conf = np.where(vmat, np.log(np.where(vmat, post, 1.0) / tot), -np.inf)
            elif pooling == "one_coin":
                correct = np.einsum("ctt->c", counts)
                total = counts.sum(axis=(1, 2))
                pa = (correct + a_acc) / (total + a_acc + b_acc)
                log_conf = np.where(
                    np.eye(K, dtype=bool), np.log(pa)[:, None, None],
                    (np.log1p(-pa) - np.log(np.maximum(kd - 1, 1)))[:, None, None],
                )  # fmt: skip
                log_conf = np.where(vmat, log_conf, -np.inf)
            else:
                logit_state, log_conf, penalty = partial_mstep(
                    logit_state, counts, NC, D, K, cell_dim, ti, ai, z_mu, z_sd, by_error,
                    valid=vmat[:, ti, ai],
                )  # fmt: skip
            pc = np.where(data.valid, prev_cnt + a_prev, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                if variational:
                    log_prev = np.where(
                        data.valid,
                        digamma(np.where(data.valid, pc, 1.0))
                        - digamma(pc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
                else:
                    log_prev = np.where(
                        data.valid,
                        np.log(np.where(data.valid, pc, 1.0) / pc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
        # E-step
        rows = ds_rating_table(log_conf, lay)
        T = np.where(np.isfinite(rows), rows, 0.0)
        M, cc = M_buf, cc_buf
        ll = em_step(
            T, log_prev, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, mask, q, M, cc,
        )  # fmt: skip
        have_q = True
        ll += penalty
        if abs(ll - prev_ll) <= tol * max(1.0, abs(ll)):
            converged = True
            break
        prev_ll = ll
    run: dict[str, Any] = {"objective": float(ll), "converged": converged, "n_iter": n_iter}
    run["state"] = {
        "q": q, "M": M, "cc": cc, "logit_state": logit_state, "objective": float(ll),
        "n_iter": n_iter,
    }  # fmt: skip
    if not finish:
        return run
    # point estimates
    if pooling in ("unpooled", "pooled"):
        post = np.where(vmat, counts + conc, 0.0)
        conf = post / np.maximum(post.sum(axis=-1, keepdims=True), 1e-300)
    else:
        conf = np.where(vmat, np.exp(log_conf), 0.0)
    pc = np.where(data.valid, prev_cnt + a_prev, 0.0)
    prev = pc / pc.sum(axis=1, keepdims=True)
    lead = (D, G) if pooling == "pooled" else (R, D, G)
    values: dict[str, np.ndarray] = {"confusion": conf.reshape(*lead, K, K), "prevalence": prev}
    if pooling == "one_coin":
        values["accuracy"] = np.exp(log_conf[:, 0, 0]).reshape(R, D, G)
    if pooling == "partial":
        E = ti.size
        values["confusion_logit_mean"] = logit_state[: D * E].reshape(D, E)
        sd = logit_state[D * E : 2 * D * E].reshape(D, E)
        values["rater_sd"] = sd if by_error else sd[:, 0]
    # the marginal log-likelihood at the estimates: one E-step pass on their table
    params = {"confusion": values["confusion"][None], "prevalence": prev[None]}
    T_hat, log_prior_hat = model.draw_tables(params, data, lay)
    # (the iterations' E-step, threaded on large data; its expected counts are not used)
    ll_plugin = em_step(
        np.where(np.isfinite(T_hat[0]), T_hat[0], 0.0), log_prior_hat[0], lay.p_e, lay.p_start,
        lay.pattern_dim, lay.pattern_w, mask, np.empty((P, K)), np.empty((lay.e_row.size, K)),
        np.empty((D, K)),
    )  # fmt: skip
    return {**run, "values": values, "loglik": float(ll_plugin)}


def cell_counts(M: np.ndarray, lay: TableLayout, n_cells: int, K: int) -> np.ndarray:
    """``(n_cells, K, K)`` expected confusion counts ``n[c, t, a]`` (cell, true, rated) from
    the E-step's expected counts ``M`` (one row per (parameter row, rated category) pair of
    ``lay``, one column per true class)."""
    counts = np.zeros((n_cells * K, K))
    idx = lay.e_row * K + lay.e_code
    for t in range(K):
        counts[:, t] = np.bincount(idx, M[:, t], minlength=n_cells * K)
    return np.asarray(counts.reshape(n_cells, K, K).transpose(0, 2, 1))


def partial_mstep(
    x0: np.ndarray,
    counts: np.ndarray,
    NC: int,
    D: int,
    K: int,
    cell_dim: np.ndarray,
    ti: np.ndarray,
    ai: np.ndarray,
    z_mu: float,
    z_sd: float,
    by_error: bool,
    sweeps: int = 5,
    valid: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Generalised M-step of partial pooling.

    Increases sum n[c,t,a] log softmax(L[c,t])[a] - (zeta - mu)^2 / 2 s^2 - omega^2 / 2
    sigma^2 over zeta (D, E) and the deviations omega (NC, E) by block-coordinate steps with
    Boehning's bound on the softmax curvature (each step cannot decrease the objective),
    then updates the spread sigma by the empirical-Bayes (Laplace) rule
    ``sigma^2 = mean(omega^2 + v)``, ``v = 1 / (h + 1 / sigma^2)`` with ``h`` the
    likelihood's curvature at omega, over the cells that hold ratings: the spread is
    estimated from the data, and ``v > 0`` keeps it from collapsing to 0 as the joint mode
    would. ``x0`` and the result hold ``[zeta, sigma, omega]``; sigma is per dimension
    (``by_error=False``, stored repeated over the errors) or per dimension and error. The
    third result is the log-prior part of the EM objective at the new values: the
    deviations' Laplace-approximate marginal terms and zeta's normal log density (up to
    constants); the E-step's log-likelihood plus it is what the restarts compare.

    ``valid`` (``(NC, E)`` bool, default all): the errors that exist in each cell, both
    categories on its dimension's scale (dimensions with fewer categories than ``K``, e.g.
    a binary label space beside 3-point ones); the others have logit ``-inf`` (no mass in
    the softmax), stay at 0 and are left out of the spread and the penalty.
    """
    E = ti.size
    ok = np.ones((NC, E), dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    zeta = x0[: D * E].reshape(D, E).copy()
    sig_d = x0[D * E : 2 * D * E].reshape(D, E).copy()
    om = x0[2 * D * E :].reshape(NC, E).copy()
    sig = sig_d[cell_dim]  # (NC, E)
    n_row = counts.sum(axis=-1)  # (NC, K)
    h_off = 0.5 * n_row[:, ti]  # bound on the curvature, (NC, E)

    def logits() -> np.ndarray:
        L = np.zeros((NC, K, K))
        L[:, ti, ai] = np.where(ok, zeta[cell_dim] + om, -np.inf)
        return L

    def probs() -> np.ndarray:
        L = logits()
        return np.exp(L - logsumexp(L, axis=-1, keepdims=True))

    def grad_off() -> np.ndarray:
        return (counts - n_row[..., None] * probs())[:, ti, ai]

    for _ in range(sweeps):
        g = grad_off()
        gz = np.zeros((D, E))
        hz = np.zeros((D, E))
        np.add.at(gz, cell_dim, g)
        np.add.at(hz, cell_dim, h_off)
        zeta = zeta + (gz - (zeta - z_mu) / z_sd**2) / (hz + 1 / z_sd**2)
        g = grad_off()
        om = om + (g - om / sig**2) / (h_off + 1 / sig**2)
    p = probs()[:, ti, ai]
    v = 1.0 / (n_row[:, ti] * p * (1.0 - p) + 1.0 / sig**2)
    om = np.where(ok, om, 0.0)
    used = (n_row.sum(axis=-1) > 0)[:, None] & ok  # cells with ratings, errors that exist
    sq = np.zeros((D, E))
    n_used = np.zeros((D, E))
    np.add.at(sq, cell_dim, used * (om**2 + v))
    np.add.at(n_used, cell_dim, used.astype(float))
    if not by_error:
        sq = np.broadcast_to(sq.sum(axis=1, keepdims=True), (D, E))
        n_used = np.broadcast_to(n_used.sum(axis=1, keepdims=True), (D, E))
    sig_d = np.where(n_used > 0, np.sqrt(sq / np.maximum(n_used, 1.0)), sig_d)
    # Laplace approximation of log N(omega; 0, sigma) integrated against the likelihood,
    # relative to the likelihood at the mode: bounded as sigma -> 0, unlike the joint mode
    sig = sig_d[cell_dim]
    v = 1.0 / (n_row[:, ti] * p * (1.0 - p) + 1.0 / sig**2)
    penalty = float(np.sum(used * (0.5 * np.log(v / sig**2) - 0.5 * om**2 / sig**2)))
    penalty -= float(np.sum(0.5 * ((zeta - z_mu) / z_sd) ** 2))
    L = logits()
    x = np.concatenate([zeta.ravel(), sig_d.ravel(), om.ravel()])
    return x, L - logsumexp(L, axis=-1, keepdims=True), penalty


__all__ = ["cell_counts", "ds_em_run", "partial_mstep"]
