"""The NumPy reference of the Plackett-Luce model: the unconstrained parameter vector, its
map to the reported variables, the per-ranking log-likelihood written out term by term, the
log density, and replicated rankings (Gumbel trick).

The compiled density (``kernels_pl``) and the PyMC graph compute the same quantities; the
tests check all three against each other. Written for clarity, not speed.

Unconstrained vector ``x`` (:func:`block_slices`), with ``D`` dimensions, ``M`` systems,
``P`` pooled raters and ``J`` judges:

``log_sigma_theta`` (D)
    log of the strength scale per dimension;
``theta_free`` (D x (M - 1), row-major)
    free coordinates ``y`` of the zero-sum strengths, ``theta[d] = Z(y_d)`` with ``Z``
    PyMC's zero-sum map (an isometry): non-centred, ``y = sigma_theta[d] * z`` with
    ``z ~ N(0, 1)`` stored (variable ``theta_z``); centred, ``y ~ N(0, sigma_theta[d])``
    stored (variable ``theta_free``);
``log_sigma_log_alpha`` (1)
    log of the spread of the pooled raters' log-discriminations;
``log_alpha_free`` (P - 1)
    free coordinates ``v`` of the pooled raters' log-discriminations, which sum to zero
    (``log alpha_pooled = Z(v)``, a zero-sum normal: their sample mean is fixed at 0, which
    sets the scale of ``theta``): non-centred, ``v = sigma_log_alpha * z`` (variable
    ``log_alpha_z``); centred, ``v ~ N(0, sigma_log_alpha)`` (variable
    ``log_alpha_pooled``);
``judge_log_alpha`` (J)
    the judges' own ``log alpha_j``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from raterstats.models.comparisons.rankings_data import RankingsData
from raterstats.models.zerosum import zero_sum_extend_np

_LOG_2PI = math.log(2 * math.pi)


@dataclass(frozen=True)
class PriorParams:
    """The numbers of the default prior families, ``sigma_theta ~ HalfNormal(theta_scale)``,
    ``sigma_log_alpha ~ HalfNormal(alpha_scale)``, judges' ``log alpha ~ Normal(judge_mu,
    judge_sd)``, and the parametrisation of the strengths and of the pooled
    log-discriminations (centred or not)."""

    theta_scale: float = 1.0
    alpha_scale: float = 0.5
    judge_mu: float = 0.0
    judge_sd: float = 1.0
    centred_theta: bool = False
    centred_alpha: bool = False


def block_slices(data: RankingsData) -> dict[str, slice]:
    """Where each block of the unconstrained vector lies (see the module docstring).

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> from raterstats.models.comparisons.rankings_data import prepare_rankings
    >>> d = prepare_rankings(simulate_comparisons(kind="rankings", n_systems=4, n_raters=3,
    ...                      n_llm_judges=1, n_comparisons=40, random_seed=1).comparisons)
    >>> {k: (s.start, s.stop) for k, s in block_slices(d).items()}  # doctest: +NORMALIZE_WHITESPACE
    {'log_sigma_theta': (0, 1), 'theta_free': (1, 4), 'log_sigma_log_alpha': (4, 5),
     'log_alpha_free': (5, 7), 'judge_log_alpha': (7, 8)}
    """
    D, M = len(data.dimensions), len(data.systems)
    P, J = int(data.pooled.sum()), int((~data.pooled).sum())
    sizes = {
        "log_sigma_theta": D,
        "theta_free": D * (M - 1),
        "log_sigma_log_alpha": 1,
        "log_alpha_free": P - 1,
        "judge_log_alpha": J,
    }
    out, pos = {}, 0
    for k, n in sizes.items():
        out[k] = slice(pos, pos + n)
        pos += n
    return out


def n_unconstrained(data: RankingsData) -> int:
    """Length of the unconstrained vector."""
    return block_slices(data)["judge_log_alpha"].stop


def constrained_values(
    x: np.ndarray, data: RankingsData, params: PriorParams
) -> dict[str, np.ndarray]:
    """The reported variables at the unconstrained vector ``x``: ``theta`` (dimension,
    system), ``alpha`` (rater), ``sigma_theta`` (dimension), ``sigma_log_alpha``,
    ``theta_z`` or ``theta_free`` (dimension, system_free), ``log_alpha_z`` or
    ``log_alpha_pooled`` (pooled_rater_free) and, with judges, ``judge_log_alpha`` (judge)."""
    b = block_slices(data)
    D, M = len(data.dimensions), len(data.systems)
    sig_t = np.exp(x[b["log_sigma_theta"]])
    z = x[b["theta_free"]].reshape(D, M - 1)
    y = z if params.centred_theta else sig_t[:, None] * z
    theta = zero_sum_extend_np(y.T).T
    sig_a = float(np.exp(x[b["log_sigma_log_alpha"]][0]))
    za = x[b["log_alpha_free"]]
    la = np.empty(len(data.raters))
    v = za if params.centred_alpha else sig_a * za
    la[data.pooled] = zero_sum_extend_np(v[:, None])[:, 0]
    la[~data.pooled] = x[b["judge_log_alpha"]]
    out = {
        "theta": theta,
        "alpha": np.exp(la),
        "sigma_theta": sig_t,
        "sigma_log_alpha": np.asarray(sig_a),
        "theta_free" if params.centred_theta else "theta_z": z,
        "log_alpha_pooled" if params.centred_alpha else "log_alpha_z": za,
    }
    if (~data.pooled).any():
        out["judge_log_alpha"] = x[b["judge_log_alpha"]]
    return out


def ranking_log_likelihood(theta: np.ndarray, alpha: np.ndarray, data: RankingsData) -> np.ndarray:
    """Log-likelihood of each ranking ``(N,)`` at strengths ``theta`` (dimension, system)
    and discriminations ``alpha`` (rater).

    Utility ``u = alpha_j theta[d, m]``. Each tie group ``G`` (systems sharing a rank),
    chosen from its risk set ``R`` (the systems not yet placed), contributes
    ``sum_{i in G} u_i - sum_{t=0}^{|G|-1} log(S_R - c_t S_G)`` with ``S_X = sum_{l in X}
    exp(u_l)``; Breslow: ``c_t = 0``, Efron: ``c_t = t / |G|``. Without ties this is the
    Plackett-Luce probability ``prod_k exp(u_k) / sum_{l >= k} exp(u_l)``.
    """
    out = np.zeros(data.n_rankings)
    for r in range(data.n_rankings):
        d, j = data.rk_dim[r], data.rk_rater[r]
        end = data.rk_start[r + 1]
        for g in range(data.rk_gstart[r], data.rk_gstart[r + 1]):
            lo, hi = data.g_start[g], data.g_start[g + 1]
            u_group = alpha[j] * theta[d, data.entry_system[lo:hi]]
            u_risk = alpha[j] * theta[d, data.entry_system[lo:end]]
            s_r = np.sum(np.exp(u_risk))
            s_g = np.sum(np.exp(u_group))
            n = hi - lo
            c = np.arange(n) / n if data.efron else np.zeros(n)
            out[r] += np.sum(u_group) - np.sum(np.log(s_r - c * s_g))
    return out


def log_prior(x: np.ndarray, data: RankingsData, priors: PriorParams) -> float:
    """The log prior density at ``x`` on the unconstrained scale (log-Jacobians of the
    scales included), with all normalising constants: the PyMC model's."""
    b = block_slices(data)

    def halfnormal_log(u: np.ndarray, scale: float) -> float:
        s = np.exp(u)
        return float(
            np.sum(math.log(2.0) - 0.5 * _LOG_2PI - math.log(scale) - 0.5 * (s / scale) ** 2 + u)
        )

    def normal_log(v: np.ndarray, mu: float, sd: np.ndarray | float) -> float:
        sd = np.broadcast_to(sd, np.shape(v))
        return float(np.sum(-0.5 * _LOG_2PI - np.log(sd) - 0.5 * ((v - mu) / sd) ** 2))

    M = len(data.systems)
    sig_t = np.exp(x[b["log_sigma_theta"]])
    sd_t = np.repeat(sig_t, M - 1) if priors.centred_theta else 1.0
    sd_a = float(np.exp(x[b["log_sigma_log_alpha"]][0])) if priors.centred_alpha else 1.0
    return (
        halfnormal_log(x[b["log_sigma_theta"]], priors.theta_scale)
        + normal_log(x[b["theta_free"]], 0.0, sd_t)
        + halfnormal_log(x[b["log_sigma_log_alpha"]], priors.alpha_scale)
        + normal_log(x[b["log_alpha_free"]], 0.0, sd_a)
        + normal_log(x[b["judge_log_alpha"]], priors.judge_mu, priors.judge_sd)
    )


def log_density(x: np.ndarray, data: RankingsData, priors: PriorParams) -> float:
    """Log posterior density (up to the evidence) at the unconstrained vector ``x``:
    :func:`log_prior` plus the summed :func:`ranking_log_likelihood`."""
    v = constrained_values(x, data, priors)
    return log_prior(x, data, priors) + float(
        ranking_log_likelihood(v["theta"], v["alpha"], data).sum()
    )


def prior_draw(
    data: RankingsData, priors: PriorParams, rng: np.random.Generator
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One draw of the unconstrained vector from the prior, and its constrained values
    (for simulation-based calibration)."""
    b = block_slices(data)
    x = np.empty(n_unconstrained(data))
    x[b["log_sigma_theta"]] = np.log(
        np.abs(rng.normal(0.0, priors.theta_scale, len(data.dimensions)))
    )
    n_t = b["theta_free"].stop - b["theta_free"].start
    M = len(data.systems)
    x[b["theta_free"]] = rng.normal(size=n_t) * (
        np.repeat(np.exp(x[b["log_sigma_theta"]]), M - 1) if priors.centred_theta else 1.0
    )
    x[b["log_sigma_log_alpha"]] = np.log(abs(rng.normal(0.0, priors.alpha_scale)))
    n_a = b["log_alpha_free"].stop - b["log_alpha_free"].start
    x[b["log_alpha_free"]] = rng.normal(size=n_a) * (
        np.exp(x[b["log_sigma_log_alpha"]][0]) if priors.centred_alpha else 1.0
    )
    n_j = b["judge_log_alpha"].stop - b["judge_log_alpha"].start
    x[b["judge_log_alpha"]] = rng.normal(priors.judge_mu, priors.judge_sd, n_j)
    return x, constrained_values(x, data, priors)


def replicate_ranks(
    theta: np.ndarray, alpha: np.ndarray, data: RankingsData, rng: np.random.Generator
) -> np.ndarray:
    """Replicated ranks ``(..., E)`` of every entry given draws of ``theta`` ``(..., D, M)``
    and ``alpha`` ``(..., R)``: each ranking re-drawn from Plackett-Luce by sorting ``u``
    plus standard Gumbel noise (Luce's choice axiom: the argmax of Gumbel-perturbed
    utilities is a draw of the multinomial logit). Replicates have no ties.

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> from raterstats.models.comparisons.rankings_data import prepare_rankings
    >>> d = prepare_rankings(simulate_comparisons(kind="rankings", n_systems=4, n_raters=2,
    ...                      n_comparisons=3, ranking_size=3, random_seed=1).comparisons)
    >>> r = replicate_ranks(np.zeros((1, 4)), np.ones(2), d, np.random.default_rng(0))
    >>> sorted(r[:3].tolist())
    [1.0, 2.0, 3.0]
    """
    theta = np.asarray(theta, float)
    alpha = np.asarray(alpha, float)
    lead = theta.shape[:-2]
    sizes = np.diff(data.rk_start)
    width = int(sizes.max())
    pos = np.arange(data.n_entries) - data.rk_start[data.entry_ranking]
    u = (
        alpha[..., data.rk_rater[data.entry_ranking]]
        * theta[..., data.rk_dim[data.entry_ranking], data.entry_system]
    )
    padded = np.full((*lead, data.n_rankings, width), -np.inf)
    padded[..., data.entry_ranking, pos] = u + rng.gumbel(size=u.shape)
    order = np.argsort(-padded, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, width + 1), axis=-1)
    return ranks[..., data.entry_ranking, pos].astype(float)


__all__ = [
    "PriorParams",
    "block_slices",
    "constrained_values",
    "log_density",
    "log_prior",
    "n_unconstrained",
    "prior_draw",
    "ranking_log_likelihood",
    "replicate_ranks",
]
