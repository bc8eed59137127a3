"""The Plackett-Luce model of per-question rankings with rater reliability
(:class:`PlackettLuce`; model card ``models/plackett_luce/card.md``).

A ranking by rater ``j`` of the systems it lists on question ``q`` for dimension ``d``,
best first, has probability ``prod_k exp(alpha_j theta[d, r_k]) / sum_{l >= k}
exp(alpha_j theta[d, r_l])``: system strengths ``theta`` (zero-sum per dimension) scaled by
the rater's discrimination ``alpha_j > 0``. Ties enter by Breslow's (default) or Efron's
approximation, partial rankings by their listed systems only. Human raters' ``log alpha``
are partially pooled and sum to zero (their geometric mean ``alpha`` is 1, which sets the
scale of ``theta``); LLM judges' are unpooled. The parametrisation is the simulator's
(:func:`raterstats.simulate_comparisons.simulate_comparisons`, ``kind="rankings"``).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from raterstats import schema as S
from raterstats.comparisons import connected_components
from raterstats.inference import Density
from raterstats.intervals import summarize_draws
from raterstats.lazy import LazyModule
from raterstats.models.base import Model, ModelInputError
from raterstats.models.comparisons.bt_outputs import strength_score_draws
from raterstats.models.comparisons.pl_reference import (
    PriorParams,
    block_slices,
    constrained_values,
    n_unconstrained,
    replicate_ranks,
)
from raterstats.models.comparisons.rankings_data import (
    TIES,
    RankingsData,
    RankingsInputError,
    prepare_rankings,
)
from raterstats.models.priors import Prior
from raterstats.models.zerosum import zero_sum_extend_pt

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")

#: dims of the posterior variables (besides chain, draw)
VARIABLE_DIMS: dict[str, tuple[str, ...]] = {
    "theta": (S.DIMENSION, S.SYSTEM),
    "alpha": (S.RATER,),
    "sigma_theta": (S.DIMENSION,),
    "sigma_log_alpha": (),
    "theta_z": (S.DIMENSION, "system_free"),
    "theta_free": (S.DIMENSION, "system_free"),
    "log_alpha_z": ("pooled_rater_free",),
    "log_alpha_pooled": ("pooled_rater_free",),
    "judge_log_alpha": ("judge",),
}

#: the automatic parametrisation (``centred=None``): the pooled raters'
#: log-discriminations are centred when the median pooled rater gave at least this many
#: rankings
CENTRED_MIN_RANKINGS = 20

#: ``centred=None``: strengths centred when a system is ranked at least this often per
#: dimension on average (at 60, on 3 systems, centred strengths diverged in 1.3% of the
#: draws of the SBC study when the true spread was small, non-centred in 0.2%; model card)
CENTRED_MIN_ENTRIES = 100

#: draws of the posterior handled at once by the log-likelihood and replicates
_CHUNK = 256


def zero_sum_coordinates(v: np.ndarray) -> np.ndarray:
    """The inverse of PyMC's zero-sum map along the last axis: ``(..., n)`` values that sum
    to zero to their ``(..., n - 1)`` free coordinates.

    Examples
    --------
    >>> from raterstats.models.zerosum import zero_sum_extend_np
    >>> y = np.array([0.3, -1.2, 0.5])
    >>> np.allclose(zero_sum_coordinates(zero_sum_extend_np(y[:, None])[:, 0]), y)
    True
    """
    v = np.asarray(v, float)
    n = v.shape[-1]
    rn = np.sqrt(n)
    return v[..., :-1] - rn * v[..., -1:] / (rn + n)


class PlackettLuce(Model):
    """Plackett-Luce model of per-question rankings with a discrimination per rater.

    Parameters
    ----------
    priors : mapping, optional
        Overrides of ``default_priors``: ``sigma_theta`` (scale of the zero-sum system
        strengths per dimension, ``HalfNormal(1)``), ``sigma_log_alpha`` (spread of the
        pooled raters' log-discriminations, ``HalfNormal(0.5)``), ``judge_log_alpha``
        (unpooled LLM judges' log-discrimination, ``Normal(0, 1)``). Other families than
        these use the PyMC model instead of the compiled density.
    ties : {"breslow", "efron"}
        Approximation for systems given the same rank (Breslow 1974, Efron 1977).
    centred : bool or None
        Parametrisation of the strengths and of the pooled raters' log-discriminations:
        ``None`` (default) centres each when the data inform it well
        (:data:`CENTRED_MIN_ENTRIES`, :data:`CENTRED_MIN_RANKINGS`), non-centred
        otherwise; ``True`` / ``False`` force either form for both.

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> sim = simulate_comparisons(kind="rankings", n_systems=4, n_raters=6,
    ...                            n_comparisons=200, random_seed=1)
    >>> dt = PlackettLuce().fit(sim.comparisons, method="map", random_seed=1)
    >>> dt.posterior["theta"].dims
    ('chain', 'draw', 'dimension', 'system')
    >>> est = dt.posterior["theta"].isel(chain=0, draw=0, dimension=0).values
    >>> bool(np.corrcoef(est, sim.truth["theta"].isel(dimension=0).values)[0, 1] > 0.9)
    True
    """

    name = "plackett_luce"
    cli_names = ("plackett-luce", "pl")
    description = (
        "Plackett-Luce model of per-question rankings: system strength per dimension and "
        "a discrimination (reliability) per rater"
    )
    references = (
        "Luce R. D. (1959). Individual Choice Behavior. Wiley.",
        "Plackett R. L. (1975). The analysis of permutations. J. R. Stat. Soc. C 24(2).",
        "Turner H. L., van Etten J., Firth D., Kosmidis I. (2020). Modelling rankings in R: "
        "the PlackettLuce package. Comput. Stat. 35.",
    )
    default_priors: ClassVar[dict[str, Prior]] = {
        "sigma_theta": Prior("HalfNormal", sigma=1.0),
        "sigma_log_alpha": Prior("HalfNormal", sigma=0.5),
        "judge_log_alpha": Prior("Normal", mu=0.0, sigma=1.0),
    }
    default_options: ClassVar[dict[str, Any]] = {"ties": "breslow", "centred": None}
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi")
    map_on_density = True

    def check_options(self) -> None:
        ties = self._options["ties"]
        problems = []
        if ties not in TIES:
            problems.append(f"ties must be one of {TIES}, not {ties!r}")
        if self._options["centred"] not in (None, True, False):
            problems.append(
                f"centred must be None, True or False, not {self._options['centred']!r}"
            )
        if problems:
            raise ValueError("PlackettLuce: " + "; ".join(problems))

    def is_centred(self, data: RankingsData) -> tuple[bool, bool]:
        """Whether the strengths and the pooled log-discriminations are centred for these
        data (option ``centred``; ``None``: see :data:`CENTRED_MIN_ENTRIES` and
        :data:`CENTRED_MIN_RANKINGS`)."""
        forced = self._options["centred"]
        if forced is not None:
            return bool(forced), bool(forced)
        per_system = data.n_entries / (len(data.dimensions) * len(data.systems))
        per_rater = np.bincount(data.rk_rater, minlength=len(data.raters))[data.pooled]
        return (
            bool(per_system >= CENTRED_MIN_ENTRIES),
            bool(np.median(per_rater) >= CENTRED_MIN_RANKINGS),
        )

    # -------------------------------------------------------------- data

    def prepare(self, ratings: Any) -> RankingsData:
        """Check the rankings (:func:`~raterstats.models.comparisons.prepare_rankings`);
        warns when the systems of a dimension fall into groups never ranked together
        (their strengths are then compared only through the prior)."""
        try:
            data = prepare_rankings(ratings, ties=self._options["ties"])
        except RankingsInputError as e:
            raise ModelInputError(str(e)) from e
        for k, dim in enumerate(data.dimensions):
            links = []
            for r in np.flatnonzero(data.rk_dim == k):
                idx = data.entry_system[data.rk_start[r] : data.rk_start[r + 1]]
                links += [(data.systems[a], data.systems[b]) for a, b in itertools.pairwise(idx)]
            ranked = sorted({s for link in links for s in link})
            groups = connected_components(links, ranked)
            unranked = len(data.systems) - len(ranked)
            if len(groups) > 1 or unranked:
                warnings.warn(
                    f"PlackettLuce: on dimension {dim!r} the systems fall into {len(groups)} "
                    f"group(s) never ranked together"
                    + (f" and {unranked} system(s) are never ranked" if unranked else "")
                    + "; strengths across groups are informed by the prior only",
                    stacklevel=3,
                )
        return data

    def prior_params(self, data: RankingsData) -> PriorParams | None:
        """The numbers of the default prior families and the parametrisation, or None
        when a prior was given another family (then there is no compiled density)."""
        p = self._priors
        fams = (
            p["sigma_theta"].dist == "HalfNormal",
            p["sigma_log_alpha"].dist == "HalfNormal",
            p["judge_log_alpha"].dist == "Normal",
        )
        if not all(fams) or any(
            np.ndim(v) != 0 for k in self.default_priors for v in p[k].params.values()
        ):
            return None
        ct, ca = self.is_centred(data)
        return PriorParams(
            centred_theta=ct,
            centred_alpha=ca,
            theta_scale=float(p["sigma_theta"].param("sigma", 1.0)),
            alpha_scale=float(p["sigma_log_alpha"].param("sigma", 1.0)),
            judge_mu=float(p["judge_log_alpha"].param("mu", 0.0)),
            judge_sd=float(p["judge_log_alpha"].param("sigma", 1.0)),
        )

    # -------------------------------------------------------------- PyMC model

    def build_model(self, data: RankingsData) -> pm.Model:
        M = len(data.systems)
        e_rk = data.entry_ranking
        ct, ca = self.is_centred(data)
        free = (S.DIMENSION, "system_free")
        with pm.Model(coords=data.coords()) as model:
            sig_t = self._priors["sigma_theta"].create("sigma_theta", dims=S.DIMENSION)
            if ct:
                y = pm.Normal("theta_free", 0.0, sig_t[:, None], dims=free)
            else:
                y = sig_t[:, None] * pm.Normal("theta_z", 0.0, 1.0, dims=free)
            theta = pm.Deterministic(
                "theta", zero_sum_extend_pt(y.T, M).T, dims=(S.DIMENSION, S.SYSTEM)
            )
            sig_a = self._priors["sigma_log_alpha"].create("sigma_log_alpha")
            if ca:
                v = pm.Normal("log_alpha_pooled", 0.0, sig_a, dims="pooled_rater_free")
            else:
                v = sig_a * pm.Normal("log_alpha_z", 0.0, 1.0, dims="pooled_rater_free")
            lap = zero_sum_extend_pt(v[:, None], int(data.pooled.sum()))[:, 0]
            la = pt.set_subtensor(pt.zeros(len(data.raters))[np.flatnonzero(data.pooled)], lap)
            if data.judges:
                jl = self._priors["judge_log_alpha"].create("judge_log_alpha", dims="judge")
                la = pt.set_subtensor(la[np.flatnonzero(~data.pooled)], jl)
            alpha = pm.Deterministic("alpha", pt.exp(la), dims=S.RATER)
            u = alpha[data.rk_rater[e_rk]] * theta[data.rk_dim[e_rk], data.entry_system]
            pm.Potential("rankings", rankings_log_likelihood_pt(u, data))
        return model

    def initial_values(self, data: RankingsData) -> dict[str, np.ndarray] | None:
        sig, z = self._start_theta(data)
        ct, ca = self.is_centred(data)
        out = {
            "sigma_theta": sig,
            "theta_free" if ct else "theta_z": z * sig[:, None] if ct else z,
            "sigma_log_alpha": np.asarray(0.3),
            "log_alpha_pooled" if ca else "log_alpha_z": np.zeros(int(data.pooled.sum()) - 1),
        }
        if data.judges:
            out["judge_log_alpha"] = np.zeros(len(data.judges))
        return out

    @staticmethod
    def _start_theta(data: RankingsData) -> tuple[np.ndarray, np.ndarray]:
        """Strengths from each system's mean standardised position (a Borda count in
        ``[-1.5, 1.5]``), as the scale and free coordinates of the zero-sum map."""
        D, M = len(data.dimensions), len(data.systems)
        sizes = np.diff(data.rk_start)[data.entry_ranking]
        gsize = np.repeat(data.group_size, data.group_size)
        before = np.repeat(data.g_start[:-1], data.group_size) - data.rk_start[data.entry_ranking]
        pos = before + (gsize + 1) / 2  # mid-position of the entry's tie group, 1 = best
        score = np.where(sizes > 1, (sizes + 1 - 2 * pos) / np.maximum(sizes - 1, 1), 0.0)
        key = data.rk_dim[data.entry_ranking] * M + data.entry_system
        tot = np.bincount(key, weights=1.5 * score, minlength=D * M)
        cnt = np.bincount(key, minlength=D * M)
        theta0 = (tot / np.maximum(cnt, 1)).reshape(D, M)
        theta0 -= theta0.mean(axis=1, keepdims=True)
        sig = np.maximum(np.sqrt((theta0**2).sum(axis=1) / max(M - 1, 1)), 0.2)
        return sig, zero_sum_coordinates(theta0 / sig[:, None])

    # -------------------------------------------------------------- compiled density

    def has_density(self, data: RankingsData) -> bool:
        return self.prior_params(data) is not None

    def density(
        self, data: RankingsData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """The log density with a hand-written gradient (numba, compiled once per
        installation; :mod:`~raterstats.models.comparisons.kernels_pl`) and its C callback
        for nutpie; None for non-default prior families. The model has no EM estimate, so
        ``start`` must be None.

        With ``centred=None`` (the default) and a centred block, the density's ``map_form``
        is the non-centred form: ``method="map"`` then gives the mode of the
        ``centred=False`` density whatever form NUTS samples (the mode on the unconstrained
        scale differs between the forms by their log-Jacobians)."""
        if start is not None:
            raise ValueError(f"{self.name}: no starting point other than the model's own")
        pri = self.prior_params(data)
        if pri is None:
            return None
        plain = replace(pri, centred_theta=False, centred_alpha=False)
        auto = self._options["centred"] is None and pri != plain
        return self._density(
            data, pri, (lambda: self._density(data, plain, None)) if auto else None
        )

    def _density(
        self, data: RankingsData, pri: PriorParams, map_form: Callable[[], Density] | None
    ) -> Density:
        """The compiled density in the parametrisation ``pri`` (:meth:`density`)."""
        from raterstats.models.comparisons.kernels_pl import pack_data, pl_entry, pl_logp_cb
        from raterstats.nutpie_callbacks import callback_buffer

        ints, floats = pack_data(data, pri)
        ndim = n_unconstrained(data)

        def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
            g = np.empty(ndim)
            lp = pl_entry(np.ascontiguousarray(x, dtype=np.float64), ints, floats, g)
            return float(lp), g

        def expand(x: np.ndarray) -> dict[str, np.ndarray]:
            return constrained_values(np.asarray(x, float), data, pri)

        b = block_slices(data)
        sig, z = self._start_theta(data)
        x_start = np.zeros(ndim)
        x_start[b["log_sigma_theta"]] = np.log(sig)
        x_start[b["theta_free"]] = (z * sig[:, None] if pri.centred_theta else z).reshape(-1)
        x_start[b["log_sigma_log_alpha"]] = np.log(0.3)

        def initial_point(rng: np.random.Generator) -> np.ndarray:
            return x_start + rng.uniform(-0.1, 0.1, ndim)

        probe = expand(x_start)
        return Density(
            ndim=ndim,
            logp_grad=logp_grad,
            expand=expand,
            var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
            var_dims={k: VARIABLE_DIMS[k] for k in probe},
            coords=dict(data.coords()),
            initial_point=initial_point,
            c_logp=pl_logp_cb,
            c_data=callback_buffer(ints, floats),
            # a diagonal mass matrix: with the pooled log alpha summing to zero there is no
            # scale ridge left for a low-rank one to follow, and on the SQuALITY rankings
            # low-rank adaptation left 1-6 divergences per 4 x 1,000 draws, diag none
            # (model card, Computation)
            sampler_defaults={"adaptation": "diag"},
            map_form=map_form,
        )

    # -------------------------------------------------------------- stored groups

    def data_groups(self, data: RankingsData, model: pm.Model | None) -> dict[str, xr.Dataset]:
        rk = np.asarray(data.rankings, dtype=str)
        obs = xr.Dataset(
            {"rank": ("entry", data.entry_rank)},
            coords={
                "entry": np.arange(data.n_entries),
                "entry_ranking": ("entry", rk[data.entry_ranking]),
                "entry_system": ("entry", np.asarray(data.systems, str)[data.entry_system]),
                "entry_source_row": ("entry", data.entry_row),
            },
            attrs={"note": "rank given to each ranked system (1 = best; equal ranks: ties)"},
        )
        const = xr.Dataset(
            {
                "ranking_dimension": (
                    "ranking",
                    np.asarray(data.dimensions, str)[data.rk_dim],
                ),
                "ranking_rater": ("ranking", np.asarray(data.raters, str)[data.rk_rater]),
                "ranking_question": ("ranking", data.rk_question),
                "rater_kind": (S.RATER, data.rater_kind.astype(str)),
                "rater_pooled": (S.RATER, data.pooled),
                "rater_n_rankings": (
                    S.RATER,
                    np.bincount(data.rk_rater, minlength=len(data.raters)),
                ),
            },
            coords={"ranking": rk, S.RATER: list(data.raters)},
            attrs={"ties": "efron" if data.efron else "breslow"},
        )
        return {"observed_data": obs, "constant_data": const}

    def log_likelihood(
        self, dt: xr.DataTree, data: RankingsData, model: pm.Model | None
    ) -> xr.Dataset:
        from raterstats.models.comparisons.kernels_pl import loglik_draws

        post = dt["posterior"].to_dataset()
        theta = post["theta"].transpose("chain", "draw", S.DIMENSION, S.SYSTEM).values
        alpha = post["alpha"].transpose("chain", "draw", S.RATER).values
        n_c, n_d = theta.shape[:2]
        ll = loglik_draws(
            np.ascontiguousarray(theta.reshape(n_c * n_d, *theta.shape[2:]), dtype=float),
            np.ascontiguousarray(alpha.reshape(n_c * n_d, -1), dtype=float),
            bool(data.efron),
            data.rk_start,
            data.rk_gstart,
            data.g_start,
            data.rk_dim,
            data.rk_rater,
            data.entry_system,
        )
        return xr.Dataset(
            {"rankings": (("chain", "draw", "ranking"), ll.reshape(n_c, n_d, -1))},
            coords={"ranking": np.asarray(data.rankings, dtype=str)},
            attrs={"note": "log-likelihood of each ranking (question x rater x dimension)"},
        )

    def posterior_predictive(
        self, dt: xr.DataTree, data: RankingsData, model: pm.Model | None, rng: np.random.Generator
    ) -> xr.Dataset:
        post = dt["posterior"].to_dataset()
        theta = post["theta"].transpose("chain", "draw", S.DIMENSION, S.SYSTEM).values
        alpha = post["alpha"].transpose("chain", "draw", S.RATER).values
        n_c, n_d = theta.shape[:2]
        th = theta.reshape(n_c * n_d, *theta.shape[2:])
        al = alpha.reshape(n_c * n_d, -1)
        out = np.empty((n_c * n_d, data.n_entries))
        for lo in range(0, n_c * n_d, _CHUNK):
            out[lo : lo + _CHUNK] = replicate_ranks(
                th[lo : lo + _CHUNK], al[lo : lo + _CHUNK], data, rng
            )
        return xr.Dataset(
            {"rank": (("chain", "draw", "entry"), out.reshape(n_c, n_d, -1))},
            coords={"entry": np.arange(data.n_entries)},
            attrs={"note": "replicated ranks (Gumbel trick); replicates have no ties"},
        )

    # -------------------------------------------------------------- post-fit questions

    def rater_summary(self, dt: xr.DataTree, *, ci_prob: float) -> xr.Dataset:
        """Discrimination ``alpha`` per rater (``alpha_mean``, ``alpha_sd``,
        ``alpha_low``, ``alpha_high``; equal-tailed ``ci_prob`` intervals), with
        ``rater_kind``, whether the rater is pooled and its number of rankings. ``alpha``
        near 0: the rater's rankings barely follow the systems' strengths."""
        alpha = dt["posterior"].to_dataset()["alpha"]
        summ = summarize_draws(alpha, ci_prob)
        const = dt["constant_data"].to_dataset()
        out = xr.Dataset(
            {f"alpha_{k}": v for k, v in summ.items()}
            | {
                "rater_kind": const["rater_kind"],
                "pooled": const["rater_pooled"],
                "n_rankings": const["rater_n_rankings"],
            }
        )
        out.attrs["ci_prob"] = float(ci_prob)
        out.attrs["note"] = (
            "alpha: how closely a rater's rankings follow the strengths (1 = the "
            "geometric mean of the pooled raters; near 0 = random rankings)"
        )
        return out

    def system_score_draws(
        self,
        dt: xr.DataTree,
        *,
        score: str,
        score_map: Any,
        labels: str,
        n_boot: int,
        max_draws: int,
        rng: np.random.Generator,
    ) -> xr.DataArray:
        """Posterior draws of the system strengths ``theta`` (chain, draw, dimension,
        system) for :func:`raterstats.rank_systems`. The draws are the posterior's own, so
        ``score``, ``score_map``, ``labels``, ``n_boot``, ``max_draws`` and ``rng`` do not
        apply."""
        return strength_score_draws(dt, source="Plackett-Luce strength")


def rankings_log_likelihood_pt(u: Any, data: RankingsData) -> Any:
    """The summed log-likelihood of the rankings as a PyTensor expression of the entries'
    utilities ``u`` ``(E,)`` (see
    :func:`~raterstats.models.comparisons.pl_reference.ranking_log_likelihood`): each tie
    group's risk-set sum over the (group, entry) pairs of its risk set, each term of
    Breslow's or Efron's product separately, utilities shifted by their ranking's maximum.
    """
    sizes = np.diff(data.rk_start)
    width = int(sizes.max())
    pos = np.arange(data.n_entries) - data.rk_start[data.entry_ranking]
    pad = np.full((data.n_rankings, width), data.n_entries)
    pad[data.entry_ranking, pos] = np.arange(data.n_entries)
    m = pt.max(pt.concatenate([u, pt.as_tensor([-np.inf])])[pad], axis=1)
    w = pt.exp(u - m[data.entry_ranking])
    n_g = data.n_groups
    g_rk = np.repeat(np.arange(data.n_rankings), np.diff(data.rk_gstart))
    gsize = data.group_size
    entry_group = np.repeat(np.arange(n_g), gsize)
    risk_n = data.rk_start[g_rk + 1] - data.g_start[:-1]
    pair_g = np.repeat(np.arange(n_g), risk_n)
    pair_e = np.concatenate(
        [np.arange(a, b) for a, b in zip(data.g_start[:-1], data.rk_start[g_rk + 1], strict=True)]
    )
    s_r = pt.inc_subtensor(pt.zeros(n_g)[pair_g], w[pair_e])
    s_g = pt.inc_subtensor(pt.zeros(n_g)[entry_group], w)
    term_g = np.repeat(np.arange(n_g), gsize)
    t = np.arange(term_g.size) - np.repeat(np.cumsum(gsize) - gsize, gsize)
    c = t / gsize[term_g] if data.efron else np.zeros(term_g.size)
    dens = s_r[term_g] - c * s_g[term_g]
    return pt.sum(u) - pt.sum(pt.log(dens) + m[g_rk[term_g]])


__all__ = ["VARIABLE_DIMS", "PlackettLuce", "rankings_log_likelihood_pt", "zero_sum_coordinates"]
