"""GLAD (Whitehill, Ruvolo, Wu, Bergsma & Movellan 2009): rater ability x item difficulty.

Generative story (one latent true label per unit: item, segment, dimension)::

    T_u ~ Categorical(pi_d)                                    pi_d ~ Dirichlet(1)
    P(A_uj = T_u) = sigmoid(alpha_jdg beta_u)                  alpha_jdg ~ Normal(1, 1)
    otherwise A_uj uniform over the other K_d - 1 categories   log beta_u ~ Normal(1, 1)

``alpha`` is the ability of rater j on dimension d under design g (0: the true label no
likelier than each other category taken together; negative: adversarial), ``beta_u > 0``
the easiness (1 / difficulty) of unit u. The priors are crowd-kit's GLAD defaults (prior
mean 1, unit variance for ``alpha`` and ``log beta``); the label prior is estimated. The
true labels are marginalised for NUTS and recovered draw by draw afterwards
(:class:`~raterstats.models.latent_class.base.LatentClassModel`). Every unit has its own
easiness, so units do not share rating patterns (``LatentClassData.one_pattern_per_unit``).
EM: :mod:`~raterstats.models.latent_class.glad_em`; the compiled density for NUTS:
:mod:`~raterstats.models.latent_class.glad_density`. See ``models/glad/card.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr
from scipy.special import expit, log_expit
from threadpoolctl import threadpool_limits

from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Method
from raterstats.models.latent_class.base import LatentClassModel
from raterstats.models.latent_class.data import LatentClassData
from raterstats.models.latent_class.em import (
    RESTART_UNITS,
    em_datatree,
    restart_subsample,
    short_run_restarts,
)
from raterstats.models.latent_class.glad_density import glad_density, glad_var_dims
from raterstats.models.latent_class.glad_em import glad_em_run
from raterstats.models.latent_class.graph import (
    padded_dirichlet,
    padded_log_simplex_pt,
    pattern_loglik_pt,
    segment_sum_pt,
)
from raterstats.models.latent_class.reference import TableLayout
from raterstats.models.priors import Prior
from raterstats.ratings import Ratings

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")


class GLAD(LatentClassModel):
    """GLAD: Generative model of Labels, Abilities and Difficulties.

    Parameters
    ----------
    repeats : {"include", "exclude"}
        Use repeated ratings as further observations (default) or first ratings only.
    use_gold : bool
        Clamp the true label of units with a ``gold`` label (default False: gold is a
        check, :func:`raterstats.posterior.gold_check`).
    priors : mapping, optional
        Override by name: ``ability`` (Normal on alpha, default N(1, 1)), ``easiness``
        (LogNormal on beta, default LogNormal(1, 1), i.e. log beta ~ N(1, 1)),
        ``prevalence`` (Dirichlet concentration of the label prior, default 1). Scalar
        parameters of these families.

    Examples
    --------
    >>> from raterstats.models import GLAD
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    >>> dt = GLAD().fit(r, method="em", random_seed=1)
    >>> dt.posterior["easiness"].dims, dt.posterior["ability"].dims
    (('chain', 'draw', 'unit'), ('chain', 'draw', 'rater', 'dimension', 'design'))
    """

    name = "glad"
    cli_names: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = (
        "GLAD (Whitehill et al. 2009), with an ability per rater, dimension and design and "
        "a difficulty per item"
    )
    references: ClassVar[tuple[str, ...]] = (
        "Whitehill, J., Ruvolo, P., Wu, T., Bergsma, J., & Movellan, J. (2009). Whose vote "
        "should count more: Optimal integration of labels from labelers of unknown "
        "expertise. Advances in Neural Information Processing Systems 22, 2035-2043.",
    )
    rank_fit_method: ClassVar[Method | None] = "em"
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi", "em")
    map_on_density: ClassVar[bool] = True
    advi_on_density: ClassVar[bool] = True
    default_priors: ClassVar[dict[str, Prior]] = {
        "ability": Prior("Normal", mu=1.0, sigma=1.0),
        "easiness": Prior("LogNormal", mu=1.0, sigma=1.0),
        "prevalence": Prior("Dirichlet", a=1.0),
    }
    default_options: ClassVar[dict[str, Any]] = {"repeats": "include", "use_gold": False}
    param_names: ClassVar[tuple[str, ...]] = ("ability", "easiness", "prevalence")

    def check_options(self) -> None:
        super().check_options()  # repeats, use_gold
        problems = []
        for key, dist, names in (
            ("ability", "Normal", ("mu", "sigma")),
            ("easiness", "LogNormal", ("mu", "sigma")),
            ("prevalence", "Dirichlet", ("a",)),
        ):
            p = self._priors[key]
            ok = p.dist == dist and set(p.params) == set(names)
            ok = ok and all(np.ndim(p.params[n]) == 0 for n in names)
            ok = ok and all(float(p.params[n]) > 0 for n in names if n != "mu")
            if not ok:
                problems.append(
                    f"prior {key!r} must be a {dist} with scalar {', '.join(names)}"
                    f"{' (positive sigma)' if 'sigma' in names else ' (positive)'}; got {p!r}"
                )
        if problems:
            raise ValueError("; ".join(problems))

    def prior_values(self) -> tuple[tuple[float, float], tuple[float, float], float]:
        """``((mu, sigma) of ability, (mu, sigma) of log easiness, prevalence
        concentration)``."""
        ab, ea = self._priors["ability"], self._priors["easiness"]
        return (
            (float(ab.params["mu"]), float(ab.params["sigma"])),
            (float(ea.params["mu"]), float(ea.params["sigma"])),
            float(self._priors["prevalence"].params["a"]),
        )

    def prepare(self, ratings: Ratings) -> LatentClassData:
        """The latent-class layout with every unit its own rating pattern (units with the
        same ratings share a likelihood in MACE; here each has its own easiness)."""
        return super().prepare(ratings).one_pattern_per_unit()

    def log_other_categories(self, data: LatentClassData) -> np.ndarray:
        """``log(K_d - 1)`` of every pattern rating: a wrong rating picks one of the other
        categories of its dimension."""
        return np.log(np.maximum(data.n_categories[data.p_dim] - 1, 1))

    # ------------------------------------------------------------------ PyMC model

    def build_model(self, data: LatentClassData) -> pm.Model:
        with pm.Model(coords=data.coords()) as model:
            ability = self._priors["ability"].create(
                "ability", dims=("rater", "dimension", "design")
            )
            easiness = self._priors["easiness"].create("easiness", dims="unit")
            prevalence = padded_dirichlet(
                "prevalence", self._priors["prevalence"].param("a", 1.0), data.n_categories,
                (), (),
            )  # fmt: skip
            x = ability.flatten()[data.p_cell] * easiness[data.p_pattern]
            # log P(rating | class) summed over each unit's ratings: every class counts a
            # rating as wrong, then the rated category's class counts it as right
            right = -pt.softplus(-x)
            wrong = -pt.softplus(x) - self.log_other_categories(data)
            P, K = data.n_patterns, data.K
            hit = pt.zeros((P, K))[data.p_pattern, data.p_code].inc(right - wrong)
            summed = segment_sum_pt(wrong, data.p_pattern, P)[:, None] + hit
            log_prior = padded_log_simplex_pt(prevalence, data.valid)
            ll, _ = pattern_loglik_pt(summed, data, log_prior)
            pm.Potential("marginal_loglik", ll.sum())
        return model

    def initial_values(self, data: LatentClassData) -> dict[str, np.ndarray]:
        (mu_a, _), (mu_b, _), _ = self.prior_values()
        R, D, G = len(data.raters), len(data.dimensions), len(data.designs)
        return {
            "ability": np.full((R, D, G), mu_a),
            "easiness": np.full(data.n_units, np.exp(mu_b)),
        }

    # ------------------------------------------------------------------ compiled density

    def has_density(self, data: LatentClassData) -> bool:
        return True  # check_options admits only the families the density implements

    def density(
        self, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """GLAD's log density with a hand-written gradient (numba, compiled once per
        installation), for NUTS, MAP and ADVI without PyMC's compilation. Chains start at
        ``start`` (an EM estimate's ``ability``, ``easiness`` and ``prevalence``) or else
        at the prior means of ability and log easiness and the majority vote's
        prevalences, jittered by N(0, 0.1) on the unconstrained scale."""
        return glad_density(self, data, start)

    # ------------------------------------------------------------------ NumPy reference

    def table_rows(self, data: LatentClassData) -> np.ndarray:
        """Every rating is its own parameter row (its rater's ability x its unit's
        easiness)."""
        return np.arange(data.p_code.size)

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: TableLayout
    ) -> tuple[np.ndarray, np.ndarray]:
        """``log sigmoid(alpha beta)`` where the true class is the rated category,
        ``log(1 - sigmoid(alpha beta)) - log(K_d - 1)`` elsewhere, for S draws."""
        S, r = params["ability"].shape[0], lay.e_row
        alpha = params["ability"].reshape(S, -1)[:, data.p_cell[r]]
        x = alpha * params["easiness"][:, data.p_pattern[r]]
        wrong = log_expit(-x) - self.log_other_categories(data)[r]
        T = np.repeat(wrong[..., None], data.K, axis=-1)
        T[:, np.arange(r.size), lay.e_code] = log_expit(x)
        with np.errstate(divide="ignore"):
            return T, np.log(params["prevalence"])

    def simulate_ratings(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        true_class: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        S = params["ability"].shape[0]
        alpha = params["ability"].reshape(S, -1)[:, data.cell]
        x = alpha * params["easiness"][:, data.unit]
        t = true_class[:, data.unit]
        k = data.n_categories[data.dim]
        other = (t + rng.integers(1, k, size=t.shape)) % k
        return np.where(rng.random(x.shape) < expit(x), t, other).astype(np.int16)

    def rater_quantities(self, posterior: xr.Dataset) -> dict[str, xr.DataArray]:
        """``ability`` (alpha) per rater x dimension x design, and ``typical_accuracy``:
        the probability of rating the true label of a unit of median easiness (the
        median over the fit's units, draw by draw), ``sigmoid(alpha median(beta))``, which
        the scale of alpha and beta does not change (see the card: Identifiability)."""
        med = posterior["easiness"].median("unit")
        return {
            "ability": posterior["ability"],
            "typical_accuracy": xr.apply_ufunc(expit, posterior["ability"] * med),
        }

    def estimate_problems(self, dt: xr.DataTree) -> list[str]:
        """A labelling in which most ratings come from adversarial raters
        (:func:`adversarial_rating_share` above 1/2), whatever the method: on the gold sets
        of ``../shared/data`` only the EM fit that collapses (``zheng2017_relevance``,
        accuracy 0.27, 61 %) has one; the other nine lie at 0-31 %."""
        problems = super().estimate_problems(dt)
        note = adversarial_note(dt)
        return [*problems, note] if note else problems

    # ------------------------------------------------------------------ EM

    def fit_em(
        self,
        data: LatentClassData,
        *,
        random_seed: int,
        progress: bool,
        restarts: int = 5,
        max_iter: int = 500,
        tol: float = 1e-7,
        short_iter: int = 10,
        restart_units: int = RESTART_UNITS,
        **unused: Any,
    ) -> xr.DataTree:
        """Posterior mode on the sampled scale by EM (Whitehill et al.'s algorithm, with
        the priors as penalties and the prevalences estimated): the E-step computes every
        unit's class posterior, the M-step updates the prevalences in closed form and
        ``alpha``, ``log beta`` by L-BFGS from their current values
        (:mod:`~raterstats.models.latent_class.glad_em`). The objective is the compiled
        density's log density and never decreases; its value at every iteration of the
        kept run is in ``sample_stats.attrs["objective_history"]`` (JSON).

        Restarts as MACE's (:meth:`raterstats.models.latent_class.mace.MACE.fit_em`): the
        first from the majority vote, the others from random abilities and prevalences,
        ``short_iter`` iterations each, the best by objective continued to convergence
        (relative change below ``tol``, at most ``max_iter`` iterations); with more than
        ``2 * restart_units`` units the short runs use a subsample.
        """
        if unused:
            raise TypeError(f"unknown EM options {sorted(unused)}")
        rng = np.random.default_rng(random_seed)
        sub = restart_subsample(data, restart_units, random_seed)

        def on(d: LatentClassData) -> Any:
            return lambda **kw: glad_em_run(self, d, rng=rng, tol=tol, **kw)

        # L-BFGS's small dense products gain nothing from BLAS threads, and on a busy
        # machine the threads cost more than the work (EM of 1,000 ratings: 5 s with the
        # default OpenBLAS threads at load 5 on 2 cores, 0.4 s with one)
        with threadpool_limits(limits=1, user_api="blas"):
            res, runs, best = short_run_restarts(
                on(data),
                restarts=restarts,
                short_iter=short_iter,
                max_iter=max_iter,
                short_run=None if sub is None else on(sub),
                rng=rng,
            )
        units = data.n_units if sub is None else sub.n_units
        dt = em_datatree(res, runs, best, glad_var_dims(), data.coords(), restart_units=units)
        attrs = dt["sample_stats"].attrs
        attrs["objective"] = float(res["objective"])
        attrs["objective_history"] = json.dumps([float(v) for v in res["history"]])
        ability = res["values"]["ability"]
        attrs["adversarial_rating_share"] = negative_share(
            ability, data.rater, data.dim, data.design
        )
        return dt


def negative_share(
    ability: np.ndarray, rater: np.ndarray, dim: np.ndarray, design: np.ndarray
) -> float:
    """The share of ratings (``rater``, ``dim``, ``design`` index arrays) whose
    rater x dimension x design cell has a negative ``ability`` ``(R, D, G)``.

    Examples
    --------
    >>> negative_share(np.array([[[1.0]], [[-0.5]]]), np.array([0, 1, 1]), np.zeros(3, int),
    ...                np.zeros(3, int))
    0.6666666666666666
    """
    return float(np.mean(ability[rater, dim, design] < 0))


def adversarial_rating_share(dt: xr.DataTree) -> float:
    """The share of a GLAD fit's ratings given in rater x dimension x design cells whose
    posterior mean ability is negative: raters the fit reads as adversarial (less likely
    to give the true label than a coin that picks between it and all the others together).
    Needs no gold; above 1/2 the fit explains most ratings as deliberate errors. EM fits
    record it in ``sample_stats.attrs["adversarial_rating_share"]``.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    >>> share = adversarial_rating_share(GLAD().fit(r, method="em", random_seed=1))
    >>> 0 <= share < 0.5
    True
    """
    const = dt["constant_data"].to_dataset()
    return negative_share(
        np.asarray(dt["posterior"]["ability"].mean(("chain", "draw"))),
        const["obs_rater"].values.astype(np.int64),
        const["obs_dimension"].values.astype(np.int64),
        const["obs_design"].values.astype(np.int64),
    )


def adversarial_note(dt: xr.DataTree) -> str | None:
    """The problem, in words, of a fit whose :func:`adversarial_rating_share` is above
    1/2; None otherwise."""
    share = adversarial_rating_share(dt)
    if share <= 0.5:
        return None
    return (
        f"GLAD: {share:.0%} of the ratings come from raters whose ability is negative "
        "(adversarial): the fit explains most ratings as deliberate errors, which usually "
        "means that the model does not describe these data (errors that are not uniform "
        "over the other categories, a rare class) rather than an adversarial crowd; compare "
        "the labels with the majority vote and with MACE or Dawid-Skene"
    )


__all__ = ["GLAD", "adversarial_note", "adversarial_rating_share", "negative_share"]
