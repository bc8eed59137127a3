"""The NumPy reference of the Bradley-Terry-Davidson model: the layout of its unconstrained
vector, the map to the reported variables, the log-likelihood of each judgment, the log
density, and replicated outcomes.

The compiled kernels (:mod:`raterstats.models.comparisons.kernels_bt`) override
:func:`log_density` for speed and are tested against it; :func:`log_density` is the log
density of the PyMC model of
:meth:`~raterstats.models.comparisons.BradleyTerry.build_model` on the same unconstrained
values (:func:`pymc_point` names them), up to a constant.

The unconstrained vector ``x`` holds, in order (``D`` dimensions, ``M`` systems, ``P``
pooled raters, ``J`` LLM judges, ``K`` the outcome scale's maximum grade):

======================  ==============  =====================================================
block                   length          meaning
======================  ==============  =====================================================
``theta_z``             ``D (M - 1)``   zero-sum coordinates of the standardised strengths
                                        (of the strengths themselves when centred)
``log_theta_sd``        ``D``           log scale of the strengths per dimension
``log_alpha_z``         ``P - 1``       zero-sum coordinates of the standardised
                                        log-discriminations of the pooled raters (they
                                        sum to zero, which sets the scale of ``theta``)
``log_alpha_sd``        1               log of their spread
``beta_z``              ``P``           standardised position biases of pooled raters
``beta_mean``           1               mean position bias of pooled raters
``log_beta_sd``         1               log of their spread
``judge_log_alpha``     ``J``           log-discrimination of each LLM judge
``judge_beta``          ``J``           position bias of each LLM judge
outcome                 ``D`` x 0/1/K/2K  none (binary), ``log nu`` (Davidson), log
                                        half-cut-point steps (symmetric) or the ordered
                                        transform of the cut-points (free)
======================  ==============  =====================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from raterstats.models.comparisons.pairs_data import PairsData
from raterstats.models.priors import Prior
from raterstats.models.zerosum import zero_sum_extend_np

#: prior constants in the order the compiled density reads them: (prior name, parameter,
#: default)
PRIOR_CONSTANTS: tuple[tuple[str, str, float], ...] = (
    ("theta_sd", "sigma", 1.0),
    ("alpha_sd", "sigma", 1.0),
    ("beta_mean", "mu", 0.0),
    ("beta_mean", "sigma", 1.0),
    ("beta_sd", "sigma", 1.0),
    ("judge_log_alpha", "mu", 0.0),
    ("judge_log_alpha", "sigma", 1.0),
    ("judge_beta", "mu", 0.0),
    ("judge_beta", "sigma", 1.0),
    ("nu", "mu", 0.0),
    ("nu", "sigma", 1.0),
    ("cut_steps", "mu", 0.0),
    ("cut_steps", "sigma", 1.0),
    ("cutpoints", "mu", 0.0),
    ("cutpoints", "sigma", 1.0),
)

#: the prior family each prior must have for the compiled density
PRIOR_FAMILIES: dict[str, str] = {
    "theta_sd": "HalfNormal",
    "alpha_sd": "HalfNormal",
    "beta_mean": "Normal",
    "beta_sd": "HalfNormal",
    "judge_log_alpha": "Normal",
    "judge_beta": "Normal",
    "nu": "LogNormal",
    "cut_steps": "LogNormal",
    "cutpoints": "Normal",
}

#: dims of the reported variables
VARIABLE_DIMS: dict[str, tuple[str, ...]] = {
    "theta_z": ("dimension", "system"),
    "theta_sd": ("dimension",),
    "theta": ("dimension", "system"),
    "log_alpha_z": ("pooled_rater_free",),
    "alpha_sd": (),
    "beta_z": ("pooled_rater",),
    "beta_mean": (),
    "beta_sd": (),
    "judge_log_alpha": ("judge",),
    "judge_beta": ("judge",),
    "alpha": ("rater",),
    "beta": ("rater",),
    "nu": ("dimension",),
    "cut_steps": ("dimension", "half_cut"),
    "cutpoints": ("dimension", "cut"),
}


def prior_constants(priors: Mapping[str, Prior]) -> np.ndarray:
    """The prior constants of :data:`PRIOR_CONSTANTS` as one float array.

    Examples
    --------
    >>> from raterstats.models.priors import Prior
    >>> prior_constants({"theta_sd": Prior("HalfNormal", sigma=2.0)})[:2].tolist()
    [2.0, 1.0]
    """
    out = []
    for name, key, default in PRIOR_CONSTANTS:
        p = priors.get(name)
        out.append(float(p.param(key, default)) if p is not None else default)
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True)
class BTLayout:
    """Sizes and block offsets of the unconstrained vector (see the module docstring).

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> from raterstats.models.comparisons.pairs_data import prepare_pairs
    >>> c = simulate_comparisons(n_systems=4, n_raters=3, n_comparisons=50).comparisons
    >>> lay = bt_layout(prepare_pairs(c, ties="auto", cutpoints="symmetric"))
    >>> lay.ndim, lay.block("log_alpha_z")
    (12, slice(4, 6, None))
    """

    n_dim: int
    n_sys: int
    n_pooled: int
    n_judge: int
    n_out: int  # outcome parameters per dimension
    offsets: dict[str, int]
    ndim: int
    centred: bool = False  # theta_z holds theta's own zero-sum coordinates

    def block(self, name: str) -> slice:
        """The slice of ``x`` that block ``name`` occupies."""
        names = list(self.offsets)
        i = names.index(name)
        stop = self.offsets[names[i + 1]] if i + 1 < len(names) else self.ndim
        return slice(self.offsets[name], stop)


BLOCKS = (
    "theta_z",
    "log_theta_sd",
    "log_alpha_z",
    "log_alpha_sd",
    "beta_z",
    "beta_mean",
    "log_beta_sd",
    "judge_log_alpha",
    "judge_beta",
    "outcome",
)


def bt_layout(data: PairsData, *, centred: bool = False) -> BTLayout:
    """The :class:`BTLayout` of these data (``centred``: the strengths' block holds the
    zero-sum coordinates of ``theta`` itself, with a zero-sum normal prior of scale
    ``theta_sd``, instead of those of ``theta / theta_sd``)."""
    D, M = len(data.dimensions), len(data.systems)
    P, J = int(data.pooled.sum()), int((~data.pooled).sum())
    K = data.max_grade
    n_out = {"binary": 0, "davidson": 1, "symmetric": K, "free": 2 * K}[data.mode]
    sizes = (D * (M - 1), D, P - 1, 1, P, 1, 1, J, J, D * n_out)
    offsets, o = {}, 0
    for name, n in zip(BLOCKS, sizes, strict=True):
        offsets[name] = o
        o += n
    return BTLayout(D, M, P, J, n_out, offsets, o, centred)


def _log_sigmoid(v: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -v)


def constrained_values(x: np.ndarray, lay: BTLayout, data: PairsData) -> dict[str, np.ndarray]:
    """The reported variables (:data:`VARIABLE_DIMS`) at the unconstrained point ``x``."""
    D, M, P, J = lay.n_dim, lay.n_sys, lay.n_pooled, lay.n_judge
    x = np.asarray(x, dtype=float)
    tz = x[lay.block("theta_z")].reshape(D, M - 1)
    theta_sd = np.exp(x[lay.block("log_theta_sd")])
    theta_z = zero_sum_extend_np(tz.T).T
    if lay.centred:
        theta_z = theta_z / theta_sd[:, None]
    za = x[lay.block("log_alpha_z")]
    alpha_sd = float(np.exp(x[lay.offsets["log_alpha_sd"]]))
    zb = x[lay.block("beta_z")]
    beta_mean = float(x[lay.offsets["beta_mean"]])
    beta_sd = float(np.exp(x[lay.offsets["log_beta_sd"]]))
    jla = x[lay.block("judge_log_alpha")]
    jb = x[lay.block("judge_beta")]
    log_alpha = np.empty(P + J)
    beta = np.empty(P + J)
    log_alpha[data.pooled] = zero_sum_extend_np(alpha_sd * za[:, None])[:, 0]
    log_alpha[~data.pooled] = jla
    beta[data.pooled] = beta_mean + beta_sd * zb
    beta[~data.pooled] = jb
    out: dict[str, np.ndarray] = {
        "theta_z": theta_z,
        "theta_sd": theta_sd,
        "theta": theta_sd[:, None] * theta_z,
        "log_alpha_z": za.copy(),
        "alpha_sd": np.asarray(alpha_sd),
        "beta_z": zb.copy(),
        "beta_mean": np.asarray(beta_mean),
        "beta_sd": np.asarray(beta_sd),
    }
    if J:
        out["judge_log_alpha"] = jla.copy()
        out["judge_beta"] = jb.copy()
    out["alpha"] = np.exp(log_alpha)
    out["beta"] = beta
    raw = x[lay.block("outcome")].reshape(D, lay.n_out)
    if data.mode == "davidson":
        out["nu"] = np.exp(raw[:, 0])
    elif data.mode == "symmetric":
        steps = np.exp(raw)
        half = np.cumsum(steps, axis=1)
        out["cut_steps"] = steps
        out["cutpoints"] = np.concatenate([-half[:, ::-1], half], axis=1)
    elif data.mode == "free":
        out["cutpoints"] = np.cumsum(
            np.concatenate([raw[:, :1], np.exp(raw[:, 1:])], axis=1), axis=1
        )
    return out


def strength_difference(
    theta: np.ndarray, alpha: np.ndarray, beta: np.ndarray, data: PairsData
) -> np.ndarray:
    """``u = alpha_j (theta[d, a] - theta[d, b]) + beta_j s`` per judgment, for draws along
    the leading axis: ``theta`` (S, D, M), ``alpha`` and ``beta`` (S, R) give (S, N)."""
    diff = theta[:, data.obs_dim, data.obs_a] - theta[:, data.obs_dim, data.obs_b]
    return alpha[:, data.obs_rater] * diff + beta[:, data.obs_rater] * data.obs_s[None, :]


def judgment_log_likelihood(
    u: np.ndarray,
    data: PairsData,
    *,
    nu: np.ndarray | None = None,
    cutpoints: np.ndarray | None = None,
) -> np.ndarray:
    """Log-likelihood of each judgment given ``u`` (S, N), with ``nu`` (S, D) for Davidson
    ties and ``cutpoints`` (S, D, 2K) for graded outcomes; (S, N).

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> from raterstats.models.comparisons.pairs_data import prepare_pairs
    >>> c = simulate_comparisons(n_systems=3, n_comparisons=4).comparisons
    >>> d = prepare_pairs(c, ties="auto", cutpoints="symmetric")
    >>> bool(np.allclose(judgment_log_likelihood(np.zeros((1, 4)), d), np.log(0.5)))
    True
    """
    y = data.y
    if data.mode == "binary":
        return _log_sigmoid(np.where(y > 0, 1.0, -1.0)[None, :] * u)
    if data.mode == "davidson":
        assert nu is not None
        lnu = np.log(nu)[:, data.obs_dim]
        h = 0.5 * u
        log_z = np.logaddexp(np.logaddexp(h, -h), lnu)
        num = np.where(y > 0, h, np.where(y < 0, -h, lnu))
        return num - log_z
    assert cutpoints is not None
    S_ = cutpoints.shape[0]
    inf = np.full((S_, cutpoints.shape[1], 1), np.inf)
    cpad = np.concatenate([-inf, cutpoints, inf], axis=2)
    i = y + data.max_grade
    hi = cpad[:, data.obs_dim, i + 1] - u
    lo = cpad[:, data.obs_dim, i] - u
    with np.errstate(invalid="ignore"):
        gap = np.where(np.isinf(hi) | np.isinf(lo), np.inf, hi - lo)
    return _log_sigmoid(hi) + _log_sigmoid(-lo) + np.log(-np.expm1(-gap))


def log_density(x: np.ndarray, lay: BTLayout, data: PairsData, prior: np.ndarray) -> float:
    """The log density (up to a constant) at the unconstrained ``x``: priors with the
    log-Jacobians of the transforms, plus the log-likelihood of every judgment (the
    reference the compiled kernel is tested against)."""
    v = constrained_values(x, lay, data)
    (s_t, s_a, bm_mu, bm_s, s_b, jla_mu, jla_s, jb_mu, jb_s, nu_mu, nu_s, st_mu, st_s, c_mu,
     c_s) = prior  # fmt: skip

    def normal(z: np.ndarray, mu: float, s: float) -> float:
        return float(np.sum(-0.5 * ((np.asarray(z) - mu) / s) ** 2))

    def half_normal_log(log_sigma: np.ndarray, s: float) -> float:
        return float(np.sum(-0.5 * (np.exp(log_sigma) / s) ** 2 + log_sigma))

    lp = half_normal_log(x[lay.block("log_theta_sd")], s_t)
    tz = x[lay.block("theta_z")].reshape(lay.n_dim, lay.n_sys - 1)
    if lay.centred:
        sd = np.exp(x[lay.block("log_theta_sd")])
        lp += float(np.sum(-0.5 * (tz / sd[:, None]) ** 2) - (lay.n_sys - 1) * np.log(sd).sum())
    else:
        lp += normal(tz, 0.0, 1.0)
    lp += normal(x[lay.block("log_alpha_z")], 0.0, 1.0)
    lp += half_normal_log(x[lay.block("log_alpha_sd")], s_a)
    lp += normal(x[lay.block("beta_z")], 0.0, 1.0)
    lp += normal(x[lay.block("beta_mean")], bm_mu, bm_s)
    lp += half_normal_log(x[lay.block("log_beta_sd")], s_b)
    lp += normal(x[lay.block("judge_log_alpha")], jla_mu, jla_s)
    lp += normal(x[lay.block("judge_beta")], jb_mu, jb_s)
    raw = x[lay.block("outcome")].reshape(lay.n_dim, lay.n_out)
    if data.mode == "davidson":
        lp += normal(raw, nu_mu, nu_s)
    elif data.mode == "symmetric":
        lp += normal(raw, st_mu, st_s)
    elif data.mode == "free":
        lp += normal(v["cutpoints"], c_mu, c_s) + float(raw[:, 1:].sum())
    u = strength_difference(v["theta"][None], v["alpha"][None], v["beta"][None], data)
    ll = judgment_log_likelihood(
        u,
        data,
        nu=v["nu"][None] if "nu" in v else None,
        cutpoints=v["cutpoints"][None] if "cutpoints" in v else None,
    )
    return lp + float(ll.sum())


def pymc_point(x: np.ndarray, lay: BTLayout, data: PairsData) -> dict[str, np.ndarray]:
    """The PyMC model's value variables (unconstrained, by name) at ``x``, so that the
    PyMC log density and its gradient can be compared with the compiled density's."""
    D, M = lay.n_dim, lay.n_sys
    theta_name = "theta_zerosum__" if lay.centred else "theta_z_zerosum__"
    pt: dict[str, Any] = {
        theta_name: x[lay.block("theta_z")].reshape(D, M - 1),
        "theta_sd_log__": x[lay.block("log_theta_sd")],
        "alpha_sd_log__": np.asarray(x[lay.offsets["log_alpha_sd"]]),
        "beta_z": x[lay.block("beta_z")],
        "beta_mean": np.asarray(x[lay.offsets["beta_mean"]]),
        "beta_sd_log__": np.asarray(x[lay.offsets["log_beta_sd"]]),
    }
    if lay.n_pooled > 1:  # one pooled rater: no free coordinate (its log alpha is 0)
        pt["log_alpha_z"] = x[lay.block("log_alpha_z")]
    if lay.n_judge:
        pt["judge_log_alpha"] = x[lay.block("judge_log_alpha")]
        pt["judge_beta"] = x[lay.block("judge_beta")]
    raw = x[lay.block("outcome")].reshape(D, lay.n_out)
    if data.mode == "davidson":
        pt["nu_log__"] = raw[:, 0]
    elif data.mode == "symmetric":
        pt["cut_steps_log__"] = raw
    elif data.mode == "free":
        pt["cutpoints_ordered__"] = raw
    return {k: np.asarray(v, dtype=float) for k, v in pt.items()}


def pymc_block(name: str) -> str:
    """The block of ``x`` (:data:`BLOCKS`) that a PyMC value variable holds."""
    return {
        "theta_z_zerosum__": "theta_z",
        "theta_zerosum__": "theta_z",
        "theta_sd_log__": "log_theta_sd",
        "log_alpha_z": "log_alpha_z",
        "alpha_sd_log__": "log_alpha_sd",
        "beta_z": "beta_z",
        "beta_mean": "beta_mean",
        "beta_sd_log__": "log_beta_sd",
        "judge_log_alpha": "judge_log_alpha",
        "judge_beta": "judge_beta",
        "nu_log__": "outcome",
        "cut_steps_log__": "outcome",
        "cutpoints_ordered__": "outcome",
    }[name]


def replicate_outcomes(
    u: np.ndarray,
    data: PairsData,
    rng: np.random.Generator,
    *,
    nu: np.ndarray | None = None,
    cutpoints: np.ndarray | None = None,
) -> np.ndarray:
    """Outcomes ``-K..K`` drawn from the model given ``u`` (S, N) (and ``nu`` (S, D) or
    ``cutpoints`` (S, D, 2K)); the simulator's own draws
    (:func:`raterstats.simulate_comparisons.simulate_comparisons`)."""
    r = rng.random(u.shape)
    if data.mode == "binary":
        return np.where(r < 1.0 / (1.0 + np.exp(-u)), 1, -1).astype(np.int8)
    if data.mode == "davidson":
        assert nu is not None
        h = 0.5 * u
        w_a, w_b, w_t = np.exp(h), np.exp(-h), nu[:, data.obs_dim]
        tot = w_a + w_b + w_t
        return np.where(r < w_a / tot, 1, np.where(r < (w_a + w_b) / tot, -1, 0)).astype(np.int8)
    assert cutpoints is not None
    cum = 1.0 / (1.0 + np.exp(-(cutpoints[:, data.obs_dim, :] - u[..., None])))
    return (np.sum(r[..., None] > cum, axis=-1) - data.max_grade).astype(np.int8)


__all__ = [
    "BLOCKS",
    "PRIOR_CONSTANTS",
    "PRIOR_FAMILIES",
    "VARIABLE_DIMS",
    "BTLayout",
    "bt_layout",
    "constrained_values",
    "judgment_log_likelihood",
    "log_density",
    "prior_constants",
    "pymc_block",
    "pymc_point",
    "replicate_outcomes",
    "strength_difference",
]
