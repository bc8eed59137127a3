"""The Bradley-Terry-Davidson model of pairwise comparisons (:class:`BradleyTerry`): system
strength per dimension, rater discrimination and position bias, binary, a / b / tie or
graded outcomes (``models/bradley_terry/card.md``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Model
from raterstats.models.comparisons.bt_outputs import (
    judgment_loglik_draws,
    outcome_groups,
    replicated_outcomes,
    strength_rater_summary,
    strength_score_draws,
)
from raterstats.models.comparisons.bt_reference import (
    PRIOR_FAMILIES,
    VARIABLE_DIMS,
    BTLayout,
    bt_layout,
    constrained_values,
    prior_constants,
)
from raterstats.models.comparisons.pairs_data import OUTCOME_MODES, PairsData, prepare_pairs
from raterstats.models.priors import Prior
from raterstats.models.zerosum import zero_sum_extend_pt

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")


#: NUTS target acceptance rate of the compiled-density fit (nutpie's default is 0.8): small
#: panels (3 raters and a judge, 400 comparisons) left 0-5 divergent transitions per fit at
#: 0.8 and none at 0.9 in six simulated studies; the caller's ``target_accept`` wins
TARGET_ACCEPT = 0.9


class BradleyTerry(Model):
    """Bradley-Terry-Davidson model of pairwise comparisons with graded outcomes, rater
    discrimination and position bias.

    A judgment of system ``a`` against ``b`` on dimension ``d`` by rater ``j``, with
    ``s = +1`` when ``a`` was shown first, ``-1`` when ``b`` was and ``0`` when not
    recorded, depends on ``u = alpha_j (theta[d, a] - theta[d, b]) + beta_j s``:

    - binary (no tie in the data): ``P(a preferred) = sigmoid(u)``;
    - a / b / tie (Davidson 1970): ``P(a) : P(b) : P(tie) = e^{u/2} : e^{-u/2} : nu_d``;
    - graded ``-K..K``: ordered logistic on ``u``, ``P(outcome <= k - 1 - K) =
      sigmoid(c[d, k] - u)``, with cut-points symmetric about 0 (``cutpoints="symmetric"``:
      ``K`` increasing half-cut-points) or ``2K`` free ordered ones.

    Strengths ``theta`` sum to zero over systems in each dimension (a zero-sum normal with
    a learnt scale ``theta_sd``). Human raters and raters of unrecorded kind (every rater
    when there are none) form one population: their ``log alpha_j`` are a zero-sum normal
    of scale ``alpha_sd`` (they sum to zero, which puts ``theta`` in the units of the
    panel's geometric-mean rater) and ``beta_j ~ N(beta_mean, beta_sd)``; LLM judges
    (``rater_kind`` ``"llm"`` or any kind other than ``"human"``) are not pooled:
    ``log alpha_j ~ judge_log_alpha`` and ``beta_j ~ judge_beta``. The raters'
    hierarchies are non-centred; the strengths are
    centred when many judgments inform each (``centred``). ``models/bradley_terry/card.md``
    gives the priors and their reasons.

    Parameters
    ----------
    priors : mapping, optional
        Overrides of :attr:`default_priors` by name. The compiled density (NUTS by nutpie,
        ``method="map"``) needs the default families with scalar parameters; other
        families are fitted through the PyMC model.
    ties : {"auto", "davidson", "none"}
        a / b / tie outcomes: ``"auto"`` (default) uses Davidson ties when the data hold a
        tie, the binary model otherwise; ``"davidson"`` always; ``"none"`` refuses data
        with ties. Graded outcomes model their middle grade by the cut-points (``"auto"``
        only).
    cutpoints : {"symmetric", "free"}
        Cut-points of graded outcomes: symmetric about 0 (default; a preference for ``a``
        and the same preference for ``b`` are equally likely at equal strength) or free.
    centred : bool or None
        Strengths as ``theta ~ ZeroSumNormal(theta_sd)`` (True) or ``theta_sd * z``
        (False); None (default): centred when the median system is in at least 50
        judgments per dimension (:meth:`is_centred`). ``method="map"`` with None takes
        the mode of the non-centred form (:meth:`density`).

    Examples
    --------
    >>> from raterstats import BradleyTerry
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> sim = simulate_comparisons(n_systems=4, n_comparisons=400, random_seed=3)
    >>> dt = BradleyTerry().fit(sim.comparisons, method="map", random_seed=1)
    >>> dict(dt.posterior["theta"].sizes)
    {'chain': 1, 'draw': 1, 'dimension': 1, 'system': 4}
    >>> est = dt.posterior["theta"].values.ravel()
    >>> bool(np.argmax(est) == np.argmax(sim.truth["theta"].values.ravel()))
    True
    """

    name = "bradley_terry"
    cli_names = ("bradley-terry", "bt", "btd")
    description = (
        "Bradley-Terry-Davidson model of pairwise comparisons: system strength per "
        "dimension, rater discrimination and position bias, ties and graded outcomes"
    )
    references = (
        "Bradley, R. A. & Terry, M. E. (1952). Rank analysis of incomplete block designs: "
        "I. The method of paired comparisons. Biometrika 39, 324-345. "
        "doi:10.1093/biomet/39.3-4.324",
        "Davidson, R. R. (1970). On extending the Bradley-Terry model to accommodate ties "
        "in paired comparison experiments. JASA 65, 317-328. doi:10.1080/01621459.1970.10481082",
        "Agresti, A. (2010). Analysis of Ordinal Categorical Data (2nd ed.). Wiley. "
        "doi:10.1002/9780470594001",
    )
    methods = ("nuts", "map")
    map_on_density = True
    default_priors: ClassVar[dict[str, Prior]] = {
        "theta_sd": Prior("HalfNormal", sigma=1.0),
        "alpha_sd": Prior("HalfNormal", sigma=0.5),
        "beta_mean": Prior("Normal", mu=0.0, sigma=1.0),
        "beta_sd": Prior("HalfNormal", sigma=0.5),
        "judge_log_alpha": Prior("Normal", mu=0.0, sigma=1.0),
        "judge_beta": Prior("Normal", mu=0.0, sigma=1.0),
        "nu": Prior("LogNormal", mu=0.0, sigma=1.0),
        "cut_steps": Prior("LogNormal", mu=0.0, sigma=1.0),
        "cutpoints": Prior("Normal", mu=0.0, sigma=3.0),
    }
    default_options: ClassVar[dict[str, Any]] = {
        "ties": "auto",
        "cutpoints": "symmetric",
        "centred": None,
    }
    #: ``centred=None`` centres the strengths when the median number of judgments per
    #: system and dimension is at least this
    CENTRED_MIN_JUDGMENTS: ClassVar[int] = 50

    def check_options(self) -> None:
        problems = []
        if self._options["ties"] not in ("auto", "davidson", "none"):
            problems.append(
                f"ties must be 'auto', 'davidson' or 'none', not {self._options['ties']!r}"
            )
        if self._options["cutpoints"] not in ("symmetric", "free"):
            problems.append(
                f"cutpoints must be 'symmetric' or 'free', not {self._options['cutpoints']!r}"
            )
        if self._options["centred"] not in (None, True, False):
            problems.append(
                f"centred must be None, True or False, not {self._options['centred']!r}"
            )
        if problems:
            raise ValueError(f"{type(self).__name__}: " + "; ".join(problems))

    def is_centred(self, data: PairsData) -> bool:
        """Whether the strengths are centred (``theta ~ ZeroSumNormal(theta_sd)``) rather
        than non-centred (``theta = theta_sd * z``): the option, or with ``centred=None``
        whether the median system is in at least :attr:`CENTRED_MIN_JUDGMENTS` judgments
        per dimension (many judgments pin each strength down, and the non-centred form then
        ties every ``z`` to ``theta_sd`` along a curved ridge, where NUTS diverges)."""
        if self._options["centred"] is not None:
            return bool(self._options["centred"])
        D, M = len(data.dimensions), len(data.systems)
        counts = np.bincount(data.obs_dim * M + data.obs_a, minlength=D * M) + np.bincount(
            data.obs_dim * M + data.obs_b, minlength=D * M
        )
        return bool(np.median(counts) >= self.CENTRED_MIN_JUDGMENTS)

    # ------------------------------------------------------------------ data and model

    def prepare(self, ratings: Any) -> PairsData:
        """Check the comparisons (:func:`~raterstats.models.comparisons.prepare_pairs`)."""
        return prepare_pairs(
            ratings,
            ties=self._options["ties"],
            cutpoints=self._options["cutpoints"],
            model=type(self).__name__,
        )

    def build_model(self, data: PairsData) -> pm.Model:
        """The PyMC model (dims carry the user's ids; the same unconstrained parameters as
        the compiled density, see :mod:`~raterstats.models.comparisons.bt_reference`)."""
        pri = self._priors
        coords = {k: v for k, v in data.coords().items() if v}
        pooled_idx = np.flatnonzero(data.pooled)
        judge_idx = np.flatnonzero(~data.pooled)
        R, K = len(data.raters), data.max_grade
        with pm.Model(coords=coords) as model:
            theta_sd = pri["theta_sd"].create("theta_sd", dims="dimension")
            if self.is_centred(data):
                theta = pm.ZeroSumNormal(
                    "theta", sigma=theta_sd[:, None], dims=("dimension", "system")
                )
                pm.Deterministic("theta_z", theta / theta_sd[:, None], dims=("dimension", "system"))
            else:
                theta_z = pm.ZeroSumNormal("theta_z", sigma=1.0, dims=("dimension", "system"))
                theta = pm.Deterministic(
                    "theta", theta_sd[:, None] * theta_z, dims=("dimension", "system")
                )
            alpha_sd = pri["alpha_sd"].create("alpha_sd")
            # the pooled raters' log alpha sum to zero: P - 1 free coordinates
            n_pooled = pooled_idx.size
            if n_pooled > 1:
                la_z = pm.Normal("log_alpha_z", 0.0, 1.0, dims="pooled_rater_free")
                la_pooled = zero_sum_extend_pt(alpha_sd * la_z[:, None], n_pooled)[:, 0]
            else:
                la_pooled = pt.zeros(n_pooled)
            b_z = pm.Normal("beta_z", 0.0, 1.0, dims="pooled_rater")
            beta_mean = pri["beta_mean"].create("beta_mean")
            beta_sd = pri["beta_sd"].create("beta_sd")
            log_alpha = pt.zeros(R)
            log_alpha = pt.set_subtensor(log_alpha[pooled_idx], la_pooled)
            beta = pt.zeros(R)
            beta = pt.set_subtensor(beta[pooled_idx], beta_mean + beta_sd * b_z)
            if judge_idx.size:
                jla = pri["judge_log_alpha"].create("judge_log_alpha", dims="judge")
                jb = pri["judge_beta"].create("judge_beta", dims="judge")
                log_alpha = pt.set_subtensor(log_alpha[judge_idx], jla)
                beta = pt.set_subtensor(beta[judge_idx], jb)
            alpha = pm.Deterministic("alpha", pt.exp(log_alpha), dims="rater")
            beta = pm.Deterministic("beta", beta, dims="rater")
            j, d = data.obs_rater, data.obs_dim
            diff = theta[d, data.obs_a] - theta[d, data.obs_b]
            u = alpha[j] * diff + beta[j] * data.obs_s.astype(float)
            if data.mode == "binary":
                pm.Bernoulli(
                    "outcome", logit_p=u, observed=(data.y > 0).astype(np.int64), dims="comparison"
                )
            elif data.mode == "davidson":
                nu = pri["nu"].create("nu", dims="dimension")
                logits = pt.stack([0.5 * u, -0.5 * u, pt.log(nu)[d]], axis=1)
                code = np.where(data.y > 0, 0, np.where(data.y < 0, 1, 2))
                pm.Categorical("outcome", logit_p=logits, observed=code, dims="comparison")
            else:
                if data.mode == "symmetric":
                    steps = pri["cut_steps"].create(
                        "cut_steps",
                        dims=("dimension", "half_cut"),
                        initval=np.exp(self.initial_outcome_raw(data)),
                    )
                    half = pt.cumsum(steps, axis=1)
                    cuts = pm.Deterministic(
                        "cutpoints",
                        pt.concatenate([-half[:, ::-1], half], axis=1),
                        dims=("dimension", "cut"),
                    )
                else:
                    raw = self.initial_outcome_raw(data)
                    init = np.cumsum(np.concatenate([raw[:, :1], np.exp(raw[:, 1:])], 1), 1)
                    cuts = pri["cutpoints"].create(
                        "cutpoints",
                        transform=pm.distributions.transforms.ordered,
                        dims=("dimension", "cut"),
                        initval=init,
                    )
                pm.OrderedLogistic(
                    "outcome", eta=u, cutpoints=cuts[d], observed=data.y + K, dims="comparison"
                )
        return model

    def initial_outcome_raw(self, data: PairsData) -> np.ndarray:
        """Starting values of the outcome block (dimension x parameters, unconstrained):
        ``log nu`` from the share of ties, or the cut-points at the empirical cumulative
        logits of the outcomes (what they are when every strength is equal)."""
        D, K = len(data.dimensions), data.max_grade
        rows: list[np.ndarray] = []
        for d in range(D):
            y = data.y[data.obs_dim == d]
            if data.mode == "davidson":
                t = float(np.clip(np.mean(y == 0), 0.02, 0.8))
                rows.append(np.array([np.log(2 * t / (1 - t))]))
            elif data.mode == "symmetric":
                # P(y >= k) = 1 - sigmoid(h_k) at u = 0, from the share of |y| >= k
                share = np.array([np.mean(np.abs(y) >= k) / 2 for k in range(1, K + 1)])
                h = np.log((1 - np.clip(share, 0.01, 0.49)) / np.clip(share, 0.01, 0.49))
                h = np.maximum.accumulate(np.maximum(h, 0.05) + 0.05 * np.arange(K))
                rows.append(np.log(np.diff(np.concatenate([[0.0], h])).clip(0.05)))
            elif data.mode == "free":
                cum = np.array([np.mean(y <= k - 1 - K) for k in range(1, 2 * K + 1)])
                c = np.log(np.clip(cum, 0.01, 0.99) / (1 - np.clip(cum, 0.01, 0.99)))
                c = np.maximum.accumulate(c + 0.05 * np.arange(2 * K))
                rows.append(np.concatenate([c[:1], np.log(np.diff(c).clip(0.05))]))
        return np.asarray(rows, dtype=float).reshape(D, -1)

    def initial_values(self, data: PairsData) -> dict[str, np.ndarray] | None:
        """Starting values of the PyMC model: equal strengths, moderate spreads."""
        return {
            "theta_sd": np.ones(len(data.dimensions)),
            "alpha_sd": np.asarray(0.3),
            "beta_sd": np.asarray(0.3),
        }

    # ------------------------------------------------------------------ compiled density

    def has_density(self, data: PairsData) -> bool:
        """Whether the priors are the default families with scalar parameters."""
        return all(
            self._priors[k].dist == fam
            and all(np.ndim(v) == 0 for v in self._priors[k].params.values())
            for k, fam in PRIOR_FAMILIES.items()
        )

    def layout(self, data: PairsData, *, centred: bool | None = None) -> BTLayout:
        """The layout of the compiled density's unconstrained vector (strengths centred as
        :meth:`is_centred` says, unless ``centred`` is given)."""
        return bt_layout(data, centred=self.is_centred(data) if centred is None else centred)

    def initial_point(self, data: PairsData, *, centred: bool | None = None) -> np.ndarray:
        """The compiled density's starting point (unconstrained): strengths at the centred
        log-odds of each system's share of wins, every rater at ``alpha = 1`` and
        ``beta = 0`` with spreads 0.3, the outcome parameters at the empirical shares of
        the outcomes."""
        lay = self.layout(data, centred=centred)
        x = np.zeros(lay.ndim)
        # strengths at the centred log-odds of each system's share of wins (ties: half)
        D, M = lay.n_dim, lay.n_sys
        win = np.where(data.y > 0, 1.0, np.where(data.y < 0, 0.0, 0.5))
        wins = np.bincount(data.obs_dim * M + data.obs_a, win, D * M) + np.bincount(
            data.obs_dim * M + data.obs_b, 1.0 - win, D * M
        )
        n = np.bincount(data.obs_dim * M + data.obs_a, minlength=D * M) + np.bincount(
            data.obs_dim * M + data.obs_b, minlength=D * M
        )
        share = ((wins + 0.5) / (n + 1.0)).reshape(D, M)
        theta0 = np.log(share / (1.0 - share))
        theta0 -= theta0.mean(axis=1, keepdims=True)
        sd0 = np.maximum(theta0.std(axis=1), 0.1)
        z0 = theta0 if lay.centred else theta0 / sd0[:, None]
        # the inverse of the zero-sum map (PyMC's ZeroSumTransform.forward)
        x[lay.block("theta_z")] = (z0[:, :-1] - z0[:, -1:] * np.sqrt(M) / (np.sqrt(M) + M)).ravel()
        x[lay.block("log_theta_sd")] = np.log(sd0)
        x[lay.block("log_alpha_sd")] = np.log(0.3)
        x[lay.block("log_beta_sd")] = np.log(0.3)
        x[lay.block("outcome")] = self.initial_outcome_raw(data).reshape(-1)
        return x

    def density(self, data: PairsData, start: Mapping[str, np.ndarray] | None = None) -> Density:
        """The compiled log density (numba, hand-written gradient, and a C callback that
        nutpie calls without the GIL). The model has no EM estimate: ``start`` must be
        None.

        With ``centred=None`` (the default) and centred strengths, the density's
        ``map_form`` is the non-centred form: ``method="map"`` then gives the mode of the
        non-centred density (the parametrisation does not depend on the data, and L-BFGS
        converges in about a fifth of the iterations; the mode on the unconstrained scale
        is that of ``centred=False``, which differs from the centred form's by the
        log-Jacobian ``(M - 1) log theta_sd``)."""
        if start is not None:
            raise ValueError(f"{self.name}: no starting point other than the model's own")
        if not self.has_density(data):
            raise ValueError(
                f"{self.name}: the compiled density needs the default prior families "
                f"{PRIOR_FAMILIES} with scalar parameters"
            )
        centred = self.is_centred(data)
        auto = self._options["centred"] is None and centred
        return self._density(
            data, centred, (lambda: self._density(data, False, None)) if auto else None
        )

    def _density(
        self, data: PairsData, centred: bool, map_form: Callable[[], Density] | None
    ) -> Density:
        """The compiled density with the strengths centred or not (:meth:`density`)."""
        from raterstats.models.comparisons.kernels_bt import bt_logp_cb, bt_logp_grad, pack_bt
        from raterstats.nutpie_callbacks import callback_buffer

        lay = self.layout(data, centred=centred)
        ints = pack_bt(
            (
                data.n_obs,
                lay.n_dim,
                lay.n_sys,
                len(data.raters),
                lay.n_pooled,
                lay.n_judge,
                data.max_grade,
                OUTCOME_MODES[data.mode],
            ),
            tuple(lay.offsets.values()),
            lay.ndim,
            (data.obs_dim, data.obs_a, data.obs_b, data.obs_rater, data.obs_s, data.y),
            data.pooled,
            lay.centred,
        )
        floats = prior_constants(self._priors)
        ndim = lay.ndim

        def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
            g = np.empty(ndim)
            lp = bt_logp_grad(np.ascontiguousarray(x, dtype=np.float64), g, ints, floats)
            return float(lp), g

        def expand(x: np.ndarray) -> dict[str, np.ndarray]:
            return constrained_values(x, lay, data)

        x0 = self.initial_point(data, centred=centred)

        def initial_point(rng: np.random.Generator) -> np.ndarray:
            return x0 + rng.uniform(-0.1, 0.1, ndim)

        probe = expand(x0)
        coords = {k: v for k, v in data.coords().items() if v and k != "comparison"}
        return Density(
            ndim=ndim,
            logp_grad=logp_grad,
            expand=expand,
            var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
            var_dims={k: VARIABLE_DIMS[k] for k in probe},
            coords=coords,
            initial_point=initial_point,
            c_logp=bt_logp_cb,
            c_data=callback_buffer(ints, floats),
            # low-rank mass-matrix adaptation: on 10,000 comparisons of 20 systems by 50
            # raters (centred strengths) max R-hat 1.005 and min bulk ESS 1,373 of 4,000
            # draws, against 1.012 and 485 with a diagonal one, at the same wall time
            # (benchmarks/comparisons.py)
            sampler_defaults={"adaptation": "low_rank", "target_accept": TARGET_ACCEPT},
            map_form=map_form,
        )

    # ------------------------------------------------------------------ stored groups

    def data_groups(self, data: PairsData, model: pm.Model | None) -> dict[str, xr.Dataset]:
        """``observed_data`` (the outcome of each judgment) and ``constant_data`` (the
        indices of each judgment, the raters' kinds and pooling, the outcome family)."""
        return outcome_groups(data)

    def log_likelihood(
        self, dt: xr.DataTree, data: PairsData, model: pm.Model | None
    ) -> xr.Dataset:
        """The log-likelihood of each judgment (dim ``comparison``), for LOO."""
        return judgment_loglik_draws(dt["posterior"].to_dataset(), data)

    def posterior_predictive(
        self, dt: xr.DataTree, data: PairsData, model: pm.Model | None, rng: np.random.Generator
    ) -> xr.Dataset:
        """Replicated outcomes ``-K..K``, one per judgment and draw."""
        return replicated_outcomes(dt["posterior"].to_dataset(), data, rng)

    # ------------------------------------------------------------------ post-fit questions

    def rater_summary(self, dt: xr.DataTree, *, ci_prob: float) -> xr.Dataset:
        """Discrimination ``alpha`` and position bias ``beta`` per rater as ``x_mean``,
        ``x_sd``, ``x_low``, ``x_high`` (equal-tailed ``ci_prob`` intervals), with the
        number of comparisons, the rater kind and whether the rater was pooled."""
        return strength_rater_summary(dt, ci_prob=ci_prob)

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
        """The posterior draws of the strengths ``theta`` (chain, draw, dimension, system)
        for :func:`raterstats.rank_systems`. The strength is the model's only system score,
        so ``score``, ``score_map``, ``labels``, ``n_boot``, ``max_draws`` and ``rng`` do
        not apply."""
        return strength_score_draws(dt)


__all__ = ["BradleyTerry"]
