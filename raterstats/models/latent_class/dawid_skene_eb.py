"""Empirical Bayes for Dawid-Skene's confusion prior: Dirichlet rows learnt from the ratings.

Every confusion row of the raters of one dimension x design has the prior
``beta_j[t, :] ~ Dirichlet(s m_t)``: a mean row ``m_t`` per true class (where the raters'
errors go, on average) and one concentration ``s`` (how alike the raters are), shared by all
rows. ``s`` and ``m`` maximise the Dirichlet-multinomial likelihood of the raters' expected
confusion counts ``n_j[t, a]`` (the E-step's sufficient statistics; type-II maximum
likelihood, Minka 2000), so a rater with few ratings is pulled towards the crowd's typical
confusion by as much as the crowd's spread warrants, where a fixed prior pulls every rater
towards the same diagonal-heavy matrix whatever the crowd.

One concentration for all rows, not one per row: a row of a rare true class holds a few
counts per rater, and its Dirichlet-multinomial likelihood keeps rising as its own
concentration goes to infinity (the counts cannot tell a little spread from none), which
pools that row completely; a shared ``s`` is informed by every row. Measured on simulated
sparse crowds (``benchmarks/hard_crowds.py``), the per-row form was less accurate than the
fixed prior, the shared form more (see ``models/dawid_skene/card.md``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import digamma, gammaln, polygamma

from raterstats.models.latent_class.data import LatentClassData
from raterstats.models.latent_class.dawid_skene_em import cell_counts, ds_em_run
from raterstats.models.latent_class.reference import TableLayout, table_layout

if TYPE_CHECKING:
    from raterstats.models.latent_class.dawid_skene import DawidSkene

#: the empirical-Bayes alternation stops when no mean row's entry (a probability) and no
#: log concentration moves by more than this between two updates ...
EB_TOL = 1e-3
#: ... or after this many updates of the prior
EB_MAX_UPDATES = 100
#: EM iterations between two updates of the prior
EB_INNER_ITER = 20

#: the hyperprior of the learnt concentration: log s ~ Normal(log s_fixed, SCALE_PRIOR_SD),
#: s_fixed the row total of the fixed prior it starts from (3.5 K - 1 for the default)
SCALE_PRIOR_SD = 1.0

#: bounds of the learnt concentration ``s`` (sum of a row's Dirichlet parameters): from
#: nearly no pooling (close to maximum likelihood) to nearly complete pooling
CONCENTRATION_BOUNDS = (0.05, 1.0e4)

#: the smallest Dirichlet parameter of a learnt row (``s m_ta``): below 1 a parameter ``a``
#: gives the entry's log-odds a left tail like ``exp(a z)``, and far below it the prior
#: spreads an error rate over tens of orders of magnitude. On ``snow2008_wsd`` (near-perfect
#: raters) the learnt rows fell to 0.04 off the diagonal and the default NUTS fit stopped in
#: tuning ("bad initial gradient"); at 0.07 and above it ran. 0.15 lies below every
#: parameter learnt on the nine real gold sets of ``benchmarks/ds_prior.py`` (smallest
#: 0.19) and on every seed of ``benchmarks/hard_crowds.py`` (smallest 0.24), so the floor
#: binds only where the learnt rows would say that
MIN_DIRICHLET_PARAMETER = 0.15


def dirichlet_multinomial_loglik(
    counts: np.ndarray, s: float, m: np.ndarray
) -> tuple[float, float, np.ndarray]:
    """Dirichlet-multinomial log-likelihood of confusion counts ``(n_cells, k, k)`` (cell,
    true, rated) with rows ``Dirichlet(s m_t)``, and its gradient in ``log s`` and in the
    logits of ``m`` (``m_t = softmax(theta_t)``, so the gradient is that of ``theta``).

    Examples
    --------
    >>> n = np.array([[[3.0, 1.0], [0.0, 2.0]]])
    >>> m = np.array([[0.8, 0.2], [0.2, 0.8]])
    >>> ll, g_s, g_m = dirichlet_multinomial_loglik(n, 5.0, m)
    >>> round(ll, 4), g_m.shape
    (-3.0445, (2, 2))
    """
    a = s * m  # (k, k)
    n_row = counts.sum(axis=-1)  # (C, k)
    ll = float(
        np.sum(gammaln(s) - gammaln(n_row + s))
        + np.sum(gammaln(counts + a[None]) - gammaln(a)[None])
    )
    g_a = np.sum(digamma(s) - digamma(n_row + s), axis=0)[:, None] + np.sum(
        digamma(counts + a[None]) - digamma(a)[None], axis=0
    )  # (k, k): d ll / d a
    g_log_s = float(np.sum(g_a * a))
    g_theta = a * g_a - m * np.sum(g_a * a, axis=-1, keepdims=True)
    return ll, g_log_s, g_theta


def fit_concentration(
    counts: np.ndarray,
    s0: float,
    m0: np.ndarray,
    *,
    bounds: tuple[float, float] = CONCENTRATION_BOUNDS,
    max_iter: int = 200,
    tol: float = 1e-7,
    learn_mean: bool = True,
    scale_prior: tuple[float, float] | None = None,
    min_parameter: float = MIN_DIRICHLET_PARAMETER,
) -> tuple[float, np.ndarray]:
    """Type-II maximum likelihood ``(s, m)`` of the rows ``Dirichlet(s m_t)`` given confusion
    counts ``(n_cells, k, k)``, by Minka's (2000) iterations from ``(s0, m0)``: each
    Dirichlet parameter ``a_ta = s m_ta`` is multiplied by
    ``sum_c [psi(n_cta + a_ta) - psi(a_ta)] / sum_c [psi(n_ct + s) - psi(s)]`` (the
    fixed point; the rows' means are then the new ``m``), and the shared precision ``s``
    takes a Newton step in ``log s`` (the fixed point where the likelihood is not concave
    in ``log s``). ``s`` stays within
    ``bounds``; rows of a true class no cell has counts for keep their start; iterations
    stop when no ``a_ta`` moves by more than ``tol`` relative to ``s``.
    ``learn_mean=False``: only ``s`` is learnt, the mean rows stay ``m0``.
    ``scale_prior=(s_ref, sd)``: a hyperprior ``log s ~ Normal(log s_ref, sd)`` (the
    estimate is then the posterior mode of ``s``: MAP-II).
    ``min_parameter``: no parameter ``s m_ta`` of a row goes below it (with ``learn_mean=False``
    by a lower bound on ``s``; with learnt means by raising the small entries of ``m`` and
    renormalising), see :data:`MIN_DIRICHLET_PARAMETER`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> m = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    >>> beta = np.stack([[rng.dirichlet(20 * m[t]) for t in range(3)] for _ in range(400)])
    >>> n = np.stack([[rng.multinomial(30, beta[j, t]) for t in range(3)] for j in range(400)])
    >>> s, m_hat = fit_concentration(n.astype(float), 5.0, np.full((3, 3), 1 / 3))
    >>> bool(15 < s < 25), bool(np.abs(m_hat - m).max() < 0.03)
    (True, True)
    """
    counts = counts[counts.sum(axis=(1, 2)) > 0]
    if counts.shape[0] == 0:
        return float(s0), m0
    n_row = counts.sum(axis=-1)  # (C, k)
    seen = n_row.sum(axis=0) > 0  # rows with counts
    m = np.clip(m0, 1e-12, None)
    m = m / m.sum(axis=-1, keepdims=True)
    # the floor on every s m_ta is a floor on s: through the fixed means, or (learnt means,
    # whose rows can at best be uniform) k times the floor
    least = min_parameter / float(m.min()) if not learn_mean else min_parameter * m.shape[-1]
    bounds = (max(bounds[0], min(least, bounds[1])), bounds[1])
    s = float(np.clip(s0, *bounds))
    for _ in range(max_iter):
        a = s * m
        num = np.sum(digamma(counts + a[None]) - digamma(a)[None], axis=0)  # (k, k)
        den = np.sum(digamma(n_row + s) - digamma(s), axis=0)  # (k,)
        with np.errstate(divide="ignore", invalid="ignore"):
            a_new = np.where(seen[:, None], a * num / den[:, None], a)
        # the precision: a Newton step on log s where the likelihood is concave there
        # (Minka 2000, section 3), else the fixed point s * sum(m num) / sum(den)
        grad = s * (np.sum(m * num) - np.sum(den))
        tri = np.sum(polygamma(1, counts + a[None]) - polygamma(1, a)[None], axis=0)
        curv = (
            s * s * (np.sum(m * m * tri) - np.sum(polygamma(1, n_row + s) - polygamma(1, s))) + grad
        )
        if scale_prior is not None:
            grad -= (np.log(s) - np.log(scale_prior[0])) / scale_prior[1] ** 2
            curv -= 1.0 / scale_prior[1] ** 2
        if curv < 0:
            s_new = float(np.clip(s * np.exp(np.clip(-grad / curv, -2.0, 2.0)), *bounds))
        else:
            s_new = float(np.clip(s * np.sum(m * num) / np.sum(den), *bounds))
        a_new = np.clip(a_new, 1e-12 * s, None)
        m_new = diagonal_dominant(a_new / a_new.sum(axis=-1, keepdims=True)) if learn_mean else m
        if learn_mean:
            m_new = floored_rows(m_new, min_parameter / s_new)
        moved = np.max(np.abs(s_new * m_new - s * m)) / s
        s, m = s_new, m_new
        if moved <= tol:
            break
    return s, m


def floored_rows(m: np.ndarray, floor: float) -> np.ndarray:
    """Probability rows ``(k, k)`` whose every entry is at least ``floor`` (``< 1 / k``):
    the entries below it are raised to it and the others scaled down to keep each row's
    sum (repeated until none is below; at most ``k`` rounds).

    Examples
    --------
    >>> floored_rows(np.array([[0.98, 0.01, 0.01]]), 0.05).round(3).tolist()
    [[0.9, 0.05, 0.05]]
    """
    out = m.copy()
    k = m.shape[-1]
    floor = min(float(floor), 1.0 / k)
    for _ in range(k):
        low = out < floor
        if not low.any():
            break
        rest = np.where(low, 0.0, out).sum(axis=-1, keepdims=True)
        free = 1.0 - floor * low.sum(axis=-1, keepdims=True)
        out = np.where(low, floor, out * free / np.maximum(rest, 1e-300))
    return out


def diagonal_dominant(m: np.ndarray) -> np.ndarray:
    """Mean rows ``(k, k)`` made diagonal-dominant: where an error is more likely than the
    correct label (``m_ta > m_tt``), the diagonal and the larger errors are set to their
    mean (the Euclidean projection onto rows whose diagonal is their largest entry; the
    row's sum is kept).

    The constraint says that the crowd, on average, rates each class more often correctly
    than as any one other class. It is what fixes the labelling: the marginal likelihood
    of the learnt rows is the same for every permutation of the classes, and without it
    EM can drift into a permuted labelling (on a simulated sparse binary crowd it did, to
    0.22 accuracy); the fixed prior fixes it by its heavy diagonal.

    Examples
    --------
    >>> diagonal_dominant(np.array([[0.35, 0.65], [0.2, 0.8]])).tolist()
    [[0.5, 0.5], [0.2, 0.8]]
    """
    out = m.copy()
    k = m.shape[0]
    for t in range(k):
        row = out[t]
        order = np.argsort(-row)
        if order[0] == t or row[order[0]] <= row[t]:
            continue
        # pool the diagonal with the errors above it, largest first, while they exceed the
        # pooled value
        pool = [t]
        total = row[t]
        for a in order:
            if a == t:
                continue
            if row[a] > total / len(pool):
                pool.append(int(a))
                total += row[a]
        row[pool] = total / len(pool)
    return out


def empirical_bayes_update(
    counts: np.ndarray,
    state: dict[str, np.ndarray],
    cell_group: np.ndarray,
    group_k: np.ndarray,
    *,
    learn_mean: bool = True,
    scale_ref: np.ndarray | None = None,
    scale_sd: float = SCALE_PRIOR_SD,
) -> dict[str, np.ndarray]:
    """One empirical-Bayes step of every group of cells (dimension x design): ``s`` and
    ``m`` refitted to the expected counts ``(n_cells, K, K)`` of its cells, from the
    current ``state`` (``{"s": (n_groups,), "m": (n_groups, K, K)}``; returns a new one).
    ``group_k`` is each group's number of categories (the rest of ``K`` is padding);
    ``scale_ref`` (per group): the centre of the hyperprior ``log s ~ Normal(log scale_ref,
    scale_sd)`` (None: none, type-II maximum likelihood)."""
    s = state["s"].copy()
    m = state["m"].copy()
    for g in range(s.size):
        k = int(group_k[g])
        sel = cell_group == g
        if not sel.any():
            continue
        prior = None if scale_ref is None else (float(scale_ref[g]), scale_sd)
        s[g], m[g, :k, :k] = fit_concentration(
            counts[sel][:, :k, :k], s[g], m[g, :k, :k], learn_mean=learn_mean, scale_prior=prior
        )
    return {"s": s, "m": m}


def group_concentration(state: dict[str, np.ndarray]) -> np.ndarray:
    """``(n_groups, K, K)`` Dirichlet concentrations ``s m`` of a state.

    Examples
    --------
    >>> st = {"s": np.array([10.0]), "m": np.array([[[0.9, 0.1], [0.2, 0.8]]])}
    >>> group_concentration(st).tolist()
    [[[9.0, 1.0], [2.0, 8.0]]]
    """
    return np.asarray(state["s"][:, None, None] * state["m"])


def empirical_bayes_em(
    model: DawidSkene,
    data: LatentClassData,
    start: dict[str, Any],
    *,
    rng: np.random.Generator,
    tol: float,
    variational: bool,
    max_iter: int,
    eb_tol: float = EB_TOL,
    max_updates: int = EB_MAX_UPDATES,
    inner_iter: int = EB_INNER_ITER,
    lay: TableLayout | None = None,
) -> dict[str, Any]:
    """Learn the confusion prior's rows and the EM estimates together, from an EM run at
    the starting prior (``start``: the best restart of ``DawidSkene.fit_em``, with its
    ``state``).

    Alternates (1) the type-II maximum-likelihood update of every dimension x design's
    ``s`` and ``m`` (:func:`empirical_bayes_update`) from the raters' expected confusion
    counts of the current label posteriors, and (2) up to ``inner_iter`` EM iterations at the
    updated prior, continued from the current state, until neither a mean row's entry nor
    the log concentration moves by more than ``eb_tol`` in an update (or ``max_updates``
    updates); then EM at the last prior runs to convergence. ``lay``: the table layout of
    ``data`` on the model's cells, when the caller has it.

    Starting from the EM fit at the fixed prior matters: from the majority vote, every rater
    agrees with a consensus its own vote helped make, the raters look alike, and the learnt
    concentration goes to its upper bound (complete pooling; on a simulated sparse crowd
    the labels then collapsed to 0.37 accuracy where the fixed prior's EM had 0.72).

    Returns the last EM run (estimates at the learnt prior) with ``concentration``
    ``(dimension, design, K, K)`` and ``empirical_bayes``: attrs for ``sample_stats``
    (``confusion_concentration`` as JSON, ``eb_updates``, ``eb_converged``).
    """
    D, G, K = len(data.dimensions), len(data.designs), data.K
    NC, cell, _, _ = model.cells(data)
    if lay is None:
        lay = table_layout(data, cell)
    n_groups = D * G
    cell_group = np.arange(NC) % n_groups
    group_k = data.n_categories[np.arange(n_groups) // G]
    extra = model.rater_prior_counts(data, NC)
    base = model.with_options(confusion_prior="fixed").confusion_conc(data, NC) - extra
    first = base[:n_groups]  # the starting rows of each group (rater 0's cells)
    state = {
        "s": first.sum(axis=-1).max(axis=-1),
        "m": first / np.maximum(first.sum(axis=-1, keepdims=True), 1e-300),
    }
    learn_mean = model.confusion_prior_mode() != "empirical_bayes_scale"
    scale_ref = state["s"].copy()
    valid = np.zeros((n_groups, K, K), dtype=bool)
    for g in range(n_groups):
        valid[g, : group_k[g], : group_k[g]] = True

    def em_at(
        state: dict[str, np.ndarray], run: dict[str, Any], n_iter: int, finish: bool = False
    ) -> dict[str, Any]:
        """EM iterations at the prior of ``state``, continued from ``run`` (``finish``: with
        the estimates and the log-likelihood at them, which only the last run needs)."""
        conc = group_concentration(state).reshape(D, G, K, K)
        fixed = model.with_options(confusion_concentration=conc.tolist())
        begun = int(run["state"]["n_iter"])
        return ds_em_run(
            fixed, data, lay=lay, rng=rng, random_init=False, tol=tol, variational=variational,
            max_iter=begun + n_iter, state=run["state"], finish=finish,
        )  # fmt: skip

    run = start
    converged = False
    n_updates = 0
    for n_updates in range(1, max_updates + 1):  # noqa: B007 - reported after the loop
        counts = cell_counts(run["state"]["M"], lay, NC, K)
        new = empirical_bayes_update(
            counts, state, cell_group, group_k, learn_mean=learn_mean, scale_ref=scale_ref
        )
        # how far the prior moved: the rows' means and the log concentration
        change = max(
            float(np.max(np.abs(new["m"] - state["m"])[valid])),
            float(np.max(np.abs(np.log(new["s"] / state["s"])))),
        )
        state = new
        if change <= eb_tol:
            converged = True
            break
        run = em_at(state, run, inner_iter)
    run = em_at(state, run, max_iter, finish=True)  # to convergence at the learnt prior
    conc = group_concentration(state).reshape(D, G, K, K)
    run = dict(run)
    run["concentration"] = conc
    run["empirical_bayes"] = {
        "confusion_concentration": json.dumps(np.round(conc, 6).tolist()),
        "eb_updates": int(n_updates),
        "eb_converged": int(converged),
    }
    return run


__all__ = [
    "CONCENTRATION_BOUNDS",
    "EB_INNER_ITER",
    "EB_MAX_UPDATES",
    "EB_TOL",
    "MIN_DIRICHLET_PARAMETER",
    "SCALE_PRIOR_SD",
    "diagonal_dominant",
    "dirichlet_multinomial_loglik",
    "empirical_bayes_em",
    "empirical_bayes_update",
    "fit_concentration",
    "floored_rows",
    "group_concentration",
]
