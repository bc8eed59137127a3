"""The base class of the latent-class (true-label) models: what MACE and Dawid-Skene share
after their likelihood. The true label of every unit is marginalised by log-sum-exp over
the classes (:mod:`~raterstats.models.latent_class.reference`); label posteriors,
per-unit log-likelihoods and posterior predictive replicates are recovered draw by draw;
and the post-fit questions of the registry (item posteriors, rater summaries, system
scores) are answered from the fit alone (:mod:`~raterstats.models.latent_class.summaries`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.models.base import Model
from raterstats.models.latent_class import modes, summaries
from raterstats.models.latent_class.data import LatentClassData, prepare_latent_class
from raterstats.models.latent_class.em import EM_NUMPY_MAX, load_em_kernels_later
from raterstats.models.latent_class.gibbs import (
    DEFAULT_INNER,
    DEFAULT_THIN,
    gibbs_problem,
    run_gibbs,
)
from raterstats.models.latent_class.reference import (
    TableLayout,
    logsumexp_np,
    pattern_log_joint_np,
    table_layout,
)
from raterstats.ratings import Ratings


class LatentClassModel(Model):
    """Base of the latent-class models (MACE, Dawid-Skene): the data layout, the data
    groups, per-unit log-likelihood marginalised over the true class, label posteriors
    recovered draw by draw, posterior predictive replicates, and the answers to the
    post-fit questions (:meth:`item_posterior`, :meth:`rater_summary`,
    :meth:`system_score_draws`).

    A subclass implements ``build_model(data)``, :meth:`draw_tables` (the NumPy reference
    of its likelihood: the table of log P(rated category | true class) over parameter
    draws), :meth:`table_rows` when its parameter rows are not the rater x dimension x
    design cells, :meth:`simulate_ratings` and :meth:`rater_quantities`, and names the
    posterior variables it needs in ``param_names`` (``prevalence`` (dimension, category)
    among them).
    """

    name = "latent_class"
    abstract = True
    default_options: ClassVar[dict[str, Any]] = {"repeats": "include", "use_gold": False}
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi", "em")
    param_names: ClassVar[tuple[str, ...]] = ("prevalence",)
    #: pattern ratings x classes x draws evaluated at once by the NumPy paths
    draw_chunk_size: ClassVar[int] = 4_000_000

    def check_options(self) -> None:
        problems = []
        if self._options["repeats"] not in ("include", "exclude"):
            problems.append(
                f"repeats must be 'include' or 'exclude', not {self._options['repeats']!r}"
            )
        if not isinstance(self._options["use_gold"], bool):
            problems.append("use_gold must be True or False")
        if problems:
            raise ValueError("; ".join(problems))

    def prepare(self, ratings: Ratings) -> LatentClassData:
        if isinstance(ratings, Ratings):  # a large fit: numba starts beside the preparation
            levels = [len(getattr(s, "levels", ())) for s in ratings.scales.values()]
            load_em_kernels_later(ratings.n_ratings * max(levels, default=0))
        return prepare_latent_class(
            ratings, repeats=self._options["repeats"], use_gold=self._options["use_gold"]
        )

    def data_groups(self, data: Any, model: Any) -> dict[str, xr.Dataset]:
        return data.data_groups()

    def fit_gibbs(
        self,
        data: LatentClassData,
        *,
        random_seed: int,
        progress: bool,
        draws: int,
        tune: int,
        chains: int,
        cores: int | None,
        init: str,
        log_likelihood: bool,
        thin: int = DEFAULT_THIN,
        inner: int = DEFAULT_INNER,
        **unused: Any,
    ) -> xr.DataTree:
        """Full posterior by the data-augmentation (Gibbs) sampler
        (``fit(method="gibbs")``; flat MACE and unpooled Dawid-Skene, see
        :mod:`~raterstats.models.latent_class.gibbs`).

        ``draws`` states are kept per chain, every ``thin``-th sweep after ``tune``
        burn-in sweeps (``fit``'s ``draws`` and ``tune``: 1,000 and 500 by default, so
        1,500 sweeps per chain; ``thin`` 1); MACE runs ``inner`` rounds of its knows /
        guesses augmentation on the counts of each sweep (default 5). Measured at 50,000
        items x 5 ratings (``benchmarks/gibbs.py``): the slowest parameter gets about 0.15
        effective draws per sweep (MACE; Dawid-Skene 0.44), so 4 x 1,000 draws give a
        smallest bulk ESS near 600 (MACE) and 1,750 (Dawid-Skene), above the 400 that the
        checks ask for, without thinning. Chains start at the
        EM estimate (``init="auto"`` or ``"em"``; ``"default"``: the majority vote),
        jittered.
        """
        if unused:
            raise TypeError(
                f"unknown Gibbs options {sorted(unused)}; Gibbs options: ['inner', 'thin']"
            )
        problem = gibbs_problem(self, data)
        if problem is not None:
            raise ValueError(problem)
        start = self.nuts_start(data, random_seed) if init != "default" else None
        dt = run_gibbs(
            self, data, draws=draws, tune=tune, chains=chains, random_seed=random_seed,
            cores=cores, thin=thin, inner=inner, start=start, log_likelihood=log_likelihood,
        )  # fmt: skip
        if start is not None:
            for name, ds in self.start_groups(data, start).items():
                dt[name] = xr.DataTree(ds)
        return dt

    def nuts_start(self, data: Any, random_seed: int) -> dict[str, np.ndarray] | None:
        """The EM estimate (restarts included, the best by its objective) as constrained
        values by variable name: where NUTS chains start by default."""
        em = self.fit_em(data, random_seed=random_seed, progress=False)
        post = em["posterior"].to_dataset()
        return {str(k): np.asarray(v.values[0, 0], dtype=float) for k, v in post.items()}

    # -- to implement
    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: TableLayout
    ) -> tuple[np.ndarray, np.ndarray]:
        """``T (S, E, K)``: log P(rated category | true class) of every (parameter row,
        rated category) pair of ``lay`` (:meth:`table_layout`, rows of
        :meth:`table_rows`) for S parameter draws, and the log class prior ``(S, D, K)``:
        the NumPy reference of the model's likelihood."""
        raise NotImplementedError(f"{type(self).__name__} must implement draw_tables")

    def table_rows(self, data: LatentClassData) -> np.ndarray:
        """The parameter row of every pattern rating (rows of :meth:`draw_tables`; default
        the rater x dimension x design cell)."""
        return data.p_cell

    def simulate_ratings(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        true_class: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """``(S, n_ratings)`` ratings drawn from the rater model given the true class of
        every unit ``(S, n_units)``, for S parameter draws."""
        raise NotImplementedError(f"{type(self).__name__} must implement simulate_ratings")

    def rater_quantities(self, posterior: xr.Dataset) -> dict[str, xr.DataArray]:
        """The per-rater quantities :meth:`rater_summary` summarises, as draws with dims
        ``(chain, draw, rater, ...)``, by name."""
        raise NotImplementedError(f"{type(self).__name__} must implement rater_quantities")

    # -- shared
    def params_from_posterior(self, posterior: xr.Dataset) -> dict[str, np.ndarray]:
        """Posterior draws flattened to ``(S, ...)`` arrays of the variables needed."""
        out = {}
        for n in self.param_names:
            v = posterior[n]
            out[n] = v.values.reshape(-1, *v.shape[2:])
        return out

    def table_layout(self, data: LatentClassData) -> TableLayout:
        """The table layout of :meth:`draw_tables` for these data."""
        return table_layout(data, self.table_rows(data))

    def rating_log_prob(self, params: dict[str, np.ndarray], data: LatentClassData) -> np.ndarray:
        """``(S, n_pattern_ratings, K)`` log P(rating | class) of every pattern rating for S
        parameter draws (rows of :meth:`draw_tables`)."""
        lay = self.table_layout(data)
        T, _ = self.draw_tables(params, data, lay)
        return T[:, lay.p_e]

    def pattern_log_joint(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        lay: TableLayout | None = None,
    ) -> np.ndarray:
        """``(S, n_patterns, K)`` log P(class, ratings of the pattern) for S parameter
        draws (``lay``: :meth:`table_layout`, computed when not given)."""
        if lay is None:
            lay = self.table_layout(data)
        T, log_prior = self.draw_tables(params, data, lay)
        return pattern_log_joint_np(T, log_prior, lay)

    def draw_chunks(self, n_draws: int, data: LatentClassData) -> list[slice]:
        """Slices of ``n_draws`` draws small enough to evaluate at once
        (:attr:`draw_chunk_size` pattern ratings x classes x draws)."""
        per = max(1, self.draw_chunk_size // max(1, data.p_code.size * data.K))
        return [slice(i, min(i + per, n_draws)) for i in range(0, n_draws, per)]

    def draws_summary(
        self, posterior: xr.Dataset, data: LatentClassData, *, loglik: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Label posterior per pattern ``(P, K)`` averaged over draws, and the per-pattern
        log-likelihood per draw ``(S, P)`` (None when ``loglik`` is False)."""
        params = self.params_from_posterior(posterior)
        n = next(iter(params.values())).shape[0]
        prob = np.zeros((data.n_patterns, data.K))
        ll = np.empty((n, data.n_patterns)) if loglik else None
        lay = self.table_layout(data)
        # few draws of a small layout (EM, MAP): NumPy, without numba's start-up cost
        small = n * data.p_code.size * data.K <= EM_NUMPY_MAX
        for sl in self.draw_chunks(n, data):
            sub = {k: v[sl] for k, v in params.items()}
            if not small:
                from raterstats.models.latent_class.kernels_em import pattern_posterior_draws

                T, log_prior = self.draw_tables(sub, data, lay)
                out = ll[sl] if ll is not None else np.empty((0, 0))
                pattern_posterior_draws(
                    np.ascontiguousarray(T), np.ascontiguousarray(log_prior), lay.p_e,
                    lay.p_start, lay.pattern_dim, lay.mask, prob, out, ll is not None,
                )  # fmt: skip
                if ll is not None:
                    ll[sl] = out
                continue
            joint = self.pattern_log_joint(sub, data, lay)
            lse = logsumexp_np(joint, axis=-1)
            with np.errstate(invalid="ignore"):
                prob += np.exp(joint - lse[..., None]).sum(axis=0)
            if ll is not None:
                ll[sl] = lse
        return prob / n, ll

    def log_likelihood(self, dt: xr.DataTree, data: Any, model: Any) -> xr.Dataset:
        if "log_likelihood" in dt.children:  # computed by the sampler (method="gibbs")
            return dt["log_likelihood"].to_dataset()
        post = dt["posterior"].to_dataset()
        _, ll = self.draws_summary(post, data, loglik=True)
        assert ll is not None
        n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
        # np.take gathers whole columns into a C-ordered array: ll[:, idx] is about 9x
        # slower at 4,000 draws x thousands of units (and not C-contiguous)
        per_unit = np.take(ll, data.unit_pattern, axis=1).reshape(n_chain, n_draw, data.n_units)
        coords = data.data_groups()["constant_data"].coords
        return xr.Dataset(
            {"ratings": (("chain", "draw", "unit"), per_unit)},
            coords={
                "chain": post["chain"].values,
                "draw": post["draw"].values,
                "unit": coords["unit"].values,
                "item": ("unit", coords["item"].values),
                "unit_dimension": ("unit", coords["unit_dimension"].values),
            },
        )

    def extra_groups(self, dt: xr.DataTree, data: Any, model: Any) -> dict[str, xr.Dataset]:
        if "label_posterior" in dt.children:  # computed by the sampler (method="gibbs")
            return {"label_posterior": dt["label_posterior"].to_dataset()}
        prob, _ = self.draws_summary(dt["posterior"].to_dataset(), data, loglik=False)
        p_unit = prob[data.unit_pattern]
        return {
            "label_posterior": xr.Dataset(
                {"prob": (("unit", "category"), p_unit)},
                coords={"unit": np.arange(data.n_units), "category": np.arange(data.K)},
                attrs={"description": "P(true label = category | data), averaged over draws"},
            )
        }

    def posterior_predictive(
        self, dt: xr.DataTree, data: Any, model: Any, rng: np.random.Generator
    ) -> xr.Dataset:
        post = dt["posterior"].to_dataset()
        reps = replicate_ratings(self, post, data, rng)
        n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
        return xr.Dataset(
            {"rating": (("chain", "draw", "obs"), reps.reshape(n_chain, n_draw, -1))},
            coords={
                "chain": post["chain"].values,
                "draw": post["draw"].values,
                "obs": np.arange(data.n_ratings),
            },
        )

    def default_draws(self, *, watched: bool) -> int | tuple[int, ...]:
        """:data:`raterstats.defaults.CHECKPOINTS` for NUTS by nutpie on the compiled
        density (the sample stops at the first checkpoint where the fit passes its checks,
        where divergences appear or where the mode checks fail: more draws do not fix
        those), else :data:`raterstats.defaults.DRAWS`. At a fixed 1,000 draws a sixth of
        the gold benchmark's NUTS fits (other than community Dawid-Skene's) failed their
        checks by a small margin (R-hat 1.011-1.026 or bulk / tail ESS 136-369; the cards)."""
        return D.CHECKPOINTS if watched else D.DRAWS

    def convergence_problems(self, dt: xr.DataTree) -> list[str]:
        """The mode checks (:mod:`~raterstats.models.latent_class.modes`): chains that
        converged to a permuted labelling of a dimension (see
        :func:`raterstats.diagnostics.label_switching`), chains that left the mode of the EM
        estimate they started from, and chains whose log density sits far below the
        others."""
        return modes.mode_problems(self, dt)

    def start_groups(self, data: Any, start: Mapping[str, np.ndarray]) -> dict[str, xr.Dataset]:
        """The EM start's label posterior per unit (group ``em_start``), which the mode checks
        compare each chain with."""
        return {modes.EM_GROUP: modes.em_start_group(self, data, dict(start))}

    # -- post-fit questions (the registry's; see raterstats.models.base.Model)
    def item_posterior(self, dt: xr.DataTree, *, coverage: float | None) -> xr.Dataset:
        """Posterior probability of each true label per item and dimension (see
        :func:`raterstats.item_posterior`)."""
        return summaries.item_posterior(self, dt, coverage=coverage)

    def rater_summary(self, dt: xr.DataTree, *, ci_prob: float) -> xr.Dataset:
        """``n_ratings`` per rater x dimension x design and each of
        :meth:`rater_quantities` ``x`` as ``x_mean``, ``x_sd``, ``x_low``, ``x_high``
        (equal-tailed ``ci_prob`` intervals; see :func:`raterstats.rater_summary`)."""
        return summaries.rater_summary(self, dt, ci_prob=ci_prob)

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
        """Draws of each system's mean item score from the label posteriors, dims
        ``(chain, draw, dimension, system)`` (``score`` does not apply: an item's score is
        that of its true label through ``score_map``; see
        :func:`raterstats.rank_systems`). The fit must come from ratings with a ``system``
        column."""
        return summaries.system_score_draws(
            self, dt, score_map=score_map, labels=labels, n_boot=n_boot, max_draws=max_draws,
            rng=rng,
        )  # fmt: skip


def sample_true_class(
    model: LatentClassModel,
    params: dict[str, np.ndarray],
    data: LatentClassData,
    rng: np.random.Generator,
) -> np.ndarray:
    """``(S, n_units)`` true classes drawn from their conditional posterior, draw by draw."""
    joint = model.pattern_log_joint(params, data)
    lse = logsumexp_np(joint, axis=-1)
    prob = np.take(np.exp(joint - lse[..., None]), data.unit_pattern, axis=1)  # (S, U, K)
    cum = np.cumsum(prob, axis=-1)
    u = rng.random((*prob.shape[:-1], 1))
    return np.minimum(np.sum(u > cum, axis=-1), data.K - 1)


def replicate_ratings(
    model: LatentClassModel,
    posterior: xr.Dataset,
    data: LatentClassData,
    rng: np.random.Generator,
    *,
    draw_index: np.ndarray | None = None,
) -> np.ndarray:
    """``(S, n_ratings)`` replicated ratings (category codes): for each posterior draw,
    true labels from their conditional posterior, then every observed rating replicated
    from the rater model (same units, raters, dimensions and designs)."""
    params = model.params_from_posterior(posterior)
    if draw_index is not None:
        params = {k: v[draw_index] for k, v in params.items()}
    n = next(iter(params.values())).shape[0]
    out = np.empty((n, data.n_ratings), dtype=np.int16)
    for sl in model.draw_chunks(n, data):
        p = {k: v[sl] for k, v in params.items()}
        truth = sample_true_class(model, p, data, rng)
        out[sl] = model.simulate_ratings(p, data, truth, rng)
    return out


__all__ = ["LatentClassModel", "replicate_ratings", "sample_true_class"]
