"""The model contract: a specification of priors and options that fits to a DataTree.

A raterstats model is a *specification*: ``__init__`` stores named priors and options and
nothing else; :meth:`Model.fit` takes :class:`~raterstats.Ratings` and returns a new
``xr.DataTree`` in the ArviZ schema; the model object is never mutated, so one
specification can be fitted to many data sets.

Writing a model (the subclass contract)
---------------------------------------
A subclass sets the class attributes

``name``
    a short unique name (``"mace"``); it is written to ``dt.attrs["model"]`` and used by
    :func:`model_from_datatree` to re-create the specification from a saved file;
``default_priors``
    ``{name: Prior}``, every prior the model uses, overridable by key
    (``Model(priors={"competence": Prior("Beta", alpha=1, beta=1)})``);
``default_options``
    ``{name: value}``, JSON-serialisable keyword options of ``__init__`` with defaults;
``methods``
    the ``fit`` methods it supports (``("nuts", "map", "advi")`` unless it adds ``"em"``);
``cli_names``, ``description``, ``references``, ``rank_fit_method``
    what the registry tells the command line (other accepted names), the report (what the
    model is, what to cite) and :func:`~raterstats.rank_systems` (the fit method that
    ranks raw ratings by the model's labels; ``None``: not offered);

and implements

``build_model(data) -> pm.Model`` (required)
    the PyMC model, with coordinates that carry the user's ids (``dims=`` on every variable);
``check_options()`` (optional)
    check ``self._options`` / ``self._priors`` after ``__init__`` merged them with the
    defaults; raise ``ValueError`` listing every problem;
``prepare(ratings) -> data`` (optional)
    check the ratings and turn them into whatever ``build_model`` and the hooks need (index
    arrays, coordinates); the default returns the ratings unchanged. Raise
    :class:`ModelInputError` listing every problem at once.

The registry: a concrete subclass registers itself when its module is imported (an
abstract family base sets ``abstract = True`` in its own body and is skipped), and
:func:`discover_models` imports every model module of :mod:`raterstats.models` on the
first look-up, so a new model touches no ``__init__``, list or table. Everything after
fitting asks the fit's class (:func:`model_from_datatree`, :func:`model_class`): a model
answers the post-fit questions (:data:`POST_FIT_QUESTIONS`) it can by overriding
:meth:`Model.rater_summary`, :meth:`Model.item_posterior` and
:meth:`Model.system_score_draws`; the defaults raise a ``TypeError`` naming the models
that answer. ``docs/contributing.md`` walks through adding a model.

Optional hooks, each with a default that works for any ``pm.Model`` whose likelihood is
made of observed random variables:

``initial_values(data) -> dict | None``
    starting values of free variables (e.g. majority-vote initialisation);
``data_groups(data, model) -> {"observed_data": Dataset, "constant_data": Dataset}``
    default: the model's observed variables and ``pm.Data`` containers;
``log_likelihood(dt, data, model) -> Dataset``
    pointwise log-likelihood with ``(chain, draw, ...)`` dims; default
    ``pm.compute_log_likelihood`` (one value per observed element). Latent-class models
    override it to give one value per item, marginalised over the true class;
``extra_groups(dt, data, model) -> {name: Dataset}``
    more groups to store (e.g. ``label_posterior``);
``posterior_predictive(dt, data, model, rng) -> Dataset``
    replicated data; default ``pm.sample_posterior_predictive``;
``fit_em(data, *, random_seed, progress, **options) -> DataTree``
    a point-estimate fast path (only when ``"em"`` is in ``methods``); it returns the same
    shape as ``method="map"``: posterior with ``chain=1, draw=1`` plus ``sample_stats``.

:meth:`Model.fit` then runs the engine of :mod:`raterstats.inference`, adds the data
groups, log-likelihood and extra groups, and stamps the attributes listed in
:data:`FIT_ATTRS` (model name, priors and options as JSON, package version, data
fingerprint, method, sampler, seed, draws, tune, chains), so that a saved file
(``dt.to_netcdf``) reloads and is analysed exactly like a fresh fit.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, cast

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.checks import check_arguments, choice_problem, flag_problem
from raterstats.comparisons import Comparisons
from raterstats.health import Health, assess_fit, checkpoints_line, stamp_health
from raterstats.inference import Density, map_density, resolve_seed, run_density, run_inference
from raterstats.inference_checks import keyword_names, sampler_argument_problems
from raterstats.inference_vi import advi_density
from raterstats.lazy import LazyModule
from raterstats.models.fingerprint import data_fingerprint, fingerprint_later
from raterstats.models.priors import Prior, as_prior, jsonable
from raterstats.models.registry import (
    COMPILED_MODULE_PREFIXES,
    REGISTRY,
    discover_models,
    is_fit_of,
    model_class,
    model_from_datatree,
    models_answering,
    norm_name,
    registered_models,
)
from raterstats.ratings import Ratings
from raterstats.version import __version__

if TYPE_CHECKING:
    import pymc as pm
else:
    pm = LazyModule("pymc")

Method = Literal["nuts", "map", "advi", "em", "gibbs"]
Sampler = Literal["nutpie", "pymc", "numpyro"]

#: Attributes every fit carries in ``dt.attrs`` (all strings or numbers, netCDF-safe).
FIT_ATTRS = (
    "model",
    "priors",
    "options",
    "raterstats_version",
    "data_fingerprint",
    "method",
    "sampler",
    "random_seed",
    "draws",
    "tune",
    "chains",
    "fit_seconds",
)

#: the post-fit questions a model may answer itself (methods of :class:`Model`)
POST_FIT_QUESTIONS = ("rater_summary", "item_posterior", "system_score_draws")


class ModelInputError(ValueError):
    """The ratings cannot be fitted by this model; the message lists every problem."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class Model:
    """Base class of raterstats models (see the module docstring for the subclass contract).

    Parameters
    ----------
    priors : mapping, optional
        ``{name: Prior}`` overriding some of the model's ``default_priors``.
    **options
        Model options (keyword-only; the subclass lists them in ``default_options``).
    """

    name: ClassVar[str] = "model"
    default_priors: ClassVar[dict[str, Prior]] = {}
    default_options: ClassVar[dict[str, Any]] = {}
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi")
    #: an abstract base (``LatentClassModel``) sets this in its own body: it is not
    #: registered, and its subclasses are unless they set it too
    abstract: ClassVar[bool] = True
    #: other names the command line accepts (``--model dawid-skene``); ``name`` always works
    #: and ``-`` / ``_`` are interchangeable
    cli_names: ClassVar[tuple[str, ...]] = ()
    #: one line: what the model infers (command-line help, report)
    description: ClassVar[str] = ""
    #: references of the model, cited by the report's methods paragraph
    references: ClassVar[tuple[str, ...]] = ()
    #: the fit method used when :func:`~raterstats.rank_systems` is asked to rank raw
    #: ratings by this model's labels (``method="mace"``); ``None``: not offered
    rank_fit_method: ClassVar[Method | None] = None
    #: ``method="map"`` takes the mode of the compiled density (``map_density``)
    map_on_density: ClassVar[bool] = False
    #: ``method="advi"`` runs on the compiled density (``inference_vi.advi_density``)
    advi_on_density: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "abstract" not in cls.__dict__:
            cls.abstract = False
        if cls.abstract:
            return
        if "name" not in cls.__dict__:
            raise TypeError(f"{cls.__qualname__}: a registered model sets its own `name`")
        taken = {alias: other for other in REGISTRY.values() for alias in other.all_names()}
        for alias in cls.all_names():
            if alias in taken and taken[alias].__qualname__ != cls.__qualname__:
                raise TypeError(
                    f"{cls.__qualname__}: the name {alias!r} is already taken by "
                    f"{taken[alias].__qualname__}"
                )
        REGISTRY[cls.name] = cls

    @classmethod
    def all_names(cls) -> tuple[str, ...]:
        """``name`` and the ``cli_names``, normalised (``-`` read as ``_``)."""
        return tuple(dict.fromkeys(norm_name(n) for n in (cls.name, *cls.cli_names)))

    @classmethod
    def answers(cls, question: str) -> bool:
        """Whether the model answers a post-fit question itself: ``"rater_summary"``,
        ``"item_posterior"`` or ``"system_score_draws"``.

        Examples
        --------
        >>> from raterstats import MACE, LengthEffect
        >>> MACE.answers("item_posterior"), LengthEffect.answers("item_posterior")
        (True, False)
        """
        if question not in POST_FIT_QUESTIONS:
            raise ValueError(f"unknown question {question!r}; known: {POST_FIT_QUESTIONS}")
        return getattr(cls, question) is not getattr(Model, question)

    # ------------------------------------------------------------------ post-fit questions
    # Each takes a fit of this model (a DataTree, fresh or reloaded) and computes nothing
    # the tree does not hold. The functions raterstats.rater_summary, item_posterior and
    # rank_systems dispatch here; a model that cannot answer keeps the default, which
    # names the models that can.

    def rater_summary(self, dt: xr.DataTree, *, ci_prob: float) -> xr.Dataset:
        """Rater reliability of a fit: one row of summaries per rater (and dimension,
        design), each quantity ``x`` as ``x_mean``, ``x_sd``, ``x_low`` and ``x_high``
        (equal-tailed ``ci_prob`` intervals)."""
        raise _unanswered(self, "rater_summary", "rater summaries")

    def item_posterior(self, dt: xr.DataTree, *, coverage: float | None) -> xr.Dataset:
        """Posterior probability of each true label per item and dimension (see
        :func:`raterstats.item_posterior`)."""
        raise _unanswered(self, "item_posterior", "latent true labels per item")

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
        """Draws of a score per system, dims ``(chain, draw, ..., system)``, for
        :func:`raterstats.rank_systems`; ``attrs["source"]`` says what was ranked. A model
        reads the options that apply to it (see :func:`~raterstats.rank_systems`) and
        ignores the others."""
        raise _unanswered(self, "system_score_draws", "system scores")

    def convergence_problems(self, dt: xr.DataTree) -> list[str]:
        """The model's own convergence checks of a NUTS fit beyond R-hat / ESS (e.g. label
        switching of latent-class models), each problem in words; default: none."""
        return []

    def default_draws(self, *, watched: bool) -> int | tuple[int, ...]:
        """NUTS draws per chain when ``fit`` is given ``draws=None``: an int, or checkpoints
        (a tuple) where ``watched`` (NUTS by nutpie on the compiled density, which can
        stop once the fit passes its checks); default :data:`raterstats.defaults.DRAWS`."""
        return D.DRAWS

    def estimate_problems(self, dt: xr.DataTree) -> list[str]:
        """The model's own checks of its estimates, whatever the method (EM and MAP fits
        too; e.g. GLAD's labelling in which most ratings come from adversarial raters),
        each problem in words; default: none."""
        return []

    def __init__(self, *, priors: Mapping[str, Any] | None = None, **options: Any) -> None:
        problems = []
        merged = dict(self.default_priors)
        for k, v in (priors or {}).items():
            if k not in self.default_priors:
                problems.append(f"unknown prior {k!r}; {self.name} priors: {list(merged)}")
                continue
            merged[k] = as_prior(k, v)
        opts = dict(self.default_options)
        for k, v in options.items():
            if k not in self.default_options:
                problems.append(
                    f"unknown option {k!r}; {self.name} options: {list(self.default_options)}"
                )
                continue
            opts[k] = v
        if problems:
            raise TypeError("; ".join(problems))
        self._priors = merged
        self._options = opts
        self.check_options()

    # ------------------------------------------------------------------ specification

    def check_options(self) -> None:
        """Check the options and priors once ``__init__`` has merged them with the
        defaults: a subclass overrides this (calling ``super().check_options()``) and raises
        ``ValueError`` listing every problem at once."""

    @property
    def priors(self) -> dict[str, Prior]:
        """The priors in use (defaults overridden by the user's), by name."""
        return dict(self._priors)

    @property
    def options(self) -> dict[str, Any]:
        """The options in use, by name."""
        return dict(self._options)

    def spec(self) -> dict[str, Any]:
        """JSON-serialisable specification: model name, priors and options."""
        return {
            "model": self.name,
            "priors": {k: p.to_dict() for k, p in self._priors.items()},
            "options": jsonable(self._options),
        }

    def __repr__(self) -> str:
        changed = {k: v for k, v in self._options.items() if self.default_options.get(k) != v}
        pri = {k: p for k, p in self._priors.items() if self.default_priors.get(k) != p}
        parts = [f"{k}={v!r}" for k, v in changed.items()]
        if pri:
            parts.append(f"priors={pri!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model):
            return NotImplemented
        return self.spec() == other.spec()

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ subclass hooks

    def prepare(self, ratings: Any) -> Any:
        """Check the ratings and make the data ``build_model`` needs (default: as is).
        The comparison models override it to take :class:`~raterstats.Comparisons`."""
        if isinstance(ratings, Comparisons):
            raise TypeError(
                f"{type(self).__name__} fits ratings, not comparative judgments: fit "
                "Comparisons with BradleyTerry (pairs) or PlackettLuce (rankings)"
            )
        if not isinstance(ratings, Ratings):
            raise TypeError(f"fit() takes a raterstats.Ratings, not {type(ratings).__name__}")
        if ratings.n_ratings == 0:
            raise ModelInputError("no ratings to fit")
        return ratings

    def build_model(self, data: Any) -> pm.Model:
        """The PyMC model for prepared data (required in subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} must implement build_model(data)")

    def build(self, ratings: Ratings | Comparisons) -> pm.Model:
        """The PyMC model of these ratings (``build_model(prepare(ratings))``)."""
        return self.build_model(self.prepare(ratings))

    def initial_values(self, data: Any) -> dict[str, np.ndarray] | None:
        """Starting values of free variables by name (default: PyMC's)."""
        return None

    def density(self, data: Any, start: Mapping[str, np.ndarray] | None = None) -> Density | None:
        """A hand-written log density for nutpie's fast path (default: None, so NUTS
        compiles the PyMC model). ``start``: a point (constrained values by variable name,
        as in a ``method="em"`` fit's posterior) for the chains to start from, jittered."""
        return None

    def has_density(self, data: Any) -> bool:
        """Whether :meth:`density` gives a compiled density for these data (checked before
        the EM start of the chains is computed, which only the compiled density uses)."""
        return False

    def learn_priors(self, data: Any, *, random_seed: int, em_options: Mapping[str, Any]) -> Self:
        """Empirical Bayes: a new model whose data-dependent priors are learnt from the
        prepared data and fixed (default: ``self``, the model has none). :meth:`fit` uses
        the model returned for everything (EM, NUTS start and density, Gibbs) and records
        its specification in the fit's attrs, so a reloaded fit re-creates the learnt prior.
        ``em_options``: the ``fit(method="em")`` options (restarts, tolerance...), empty for
        the other methods."""
        return self

    def start_groups(self, data: Any, start: Mapping[str, np.ndarray]) -> dict[str, xr.Dataset]:
        """Groups stored with a fit whose chains started at ``start`` (:meth:`nuts_start`),
        for checks of the fit against it (default: none)."""
        return {}

    def nuts_start(self, data: Any, random_seed: int) -> dict[str, np.ndarray] | None:
        """A point estimate to start NUTS chains from (``fit(init="em")``; default: None,
        the model has none)."""
        return None

    def data_groups(self, data: Any, model: pm.Model | None) -> dict[str, xr.Dataset]:
        """``observed_data`` and ``constant_data`` groups (default: from the PyMC model;
        ``model`` is None for ``method="em"``)."""
        if model is None:
            return {}
        from pymc.backends.arviz import (
            coords_and_dims_for_inferencedata,
            dict_to_dataset,
            find_constants,
            find_observations,
        )

        coords, dims = coords_and_dims_for_inferencedata(model)
        out = {}
        for group, found in (
            ("observed_data", find_observations(model)),
            ("constant_data", find_constants(model)),
        ):
            if found:
                out[group] = dict_to_dataset(
                    found,
                    inference_library=pm,
                    coords=coords,
                    dims=dims,
                    sample_dims=[],
                )
        return out

    def log_likelihood(
        self, dt: xr.DataTree, data: Any, model: pm.Model | None
    ) -> xr.Dataset | None:
        """Pointwise log-likelihood (default: ``pm.compute_log_likelihood``)."""
        if model is None or not model.observed_RVs:
            return None
        ll = pm.compute_log_likelihood(
            dt, model=model, extend_inferencedata=False, progressbar=False
        )
        ds = ll.to_dataset() if isinstance(ll, xr.DataTree) else ll
        return ds

    def extra_groups(
        self, dt: xr.DataTree, data: Any, model: pm.Model | None
    ) -> dict[str, xr.Dataset]:
        """More groups to store with the fit (default: none)."""
        return {}

    def posterior_predictive(
        self, dt: xr.DataTree, data: Any, model: pm.Model | None, rng: np.random.Generator
    ) -> xr.Dataset:
        """Replicated data, one replicate per posterior draw (default: PyMC's)."""
        if model is None:
            raise NotImplementedError(f"{self.name}: no posterior predictive for this method")
        seed = int(rng.integers(2**31 - 1))
        pp = pm.sample_posterior_predictive(dt, model=model, random_seed=seed, progressbar=False)
        return pp["posterior_predictive"].to_dataset()

    def fit_em(self, data: Any, *, random_seed: int, progress: bool, **options: Any) -> xr.DataTree:
        """Point estimates by EM (only models with ``"em"`` in ``methods``)."""
        raise NotImplementedError(f"{self.name} has no EM fast path")

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        ratings: Ratings | Comparisons,
        *,
        method: Method = D.METHOD,
        draws: int | Sequence[int] | None = None,
        tune: int = D.TUNE,
        chains: int = D.CHAINS,
        random_seed: int | None = D.RANDOM_SEED,
        sampler: Sampler = D.SAMPLER,
        progress: bool = True,
        posterior_predictive: bool = False,
        log_likelihood: bool = True,
        target_accept: float | None = None,
        cores: int | None = None,
        logp_backend: Literal["auto", "pymc"] = "auto",
        init: Literal["auto", "em", "default"] = "auto",
        **method_options: Any,
    ) -> xr.DataTree:
        """Fit the model and return a new ``xr.DataTree`` (ArviZ schema).

        Parameters
        ----------
        ratings : Ratings or Comparisons
            The data (comparative judgments for the comparison models).
        method : {"nuts", "map", "advi", "em", "gibbs"}
            Full posterior by NUTS (default), posterior mode by optimisation, mean-field
            variational approximation, the model's EM fast path (point estimates), or the
            full posterior by the model's Gibbs sampler (flat MACE, unpooled Dawid-Skene:
            ``fit_gibbs``; ``draws`` and ``tune`` are its kept draws and burn-in sweeps).
        draws : int, tuple of int or None
            NUTS draws per chain (also the number of draws taken from the ADVI
            approximation). A tuple of checkpoints (strictly increasing draws per chain;
            NUTS by nutpie on the compiled density only) samples until the fit passes its
            checks: at each checkpoint the first that many draws of every chain are checked
            as the finished fit would be (R-hat, ESS, divergences and the model's own
            checks), and the sample stops at the first checkpoint where they pass, where
            divergences appear (more draws do not remove them) or where the model's own
            checks fail (of its estimates; of its chains' modes, for the latent-class
            models); the last checkpoint ends it in any case. The draws kept
            are the first that many of each chain, so the result depends on the seed only.
            ``posterior.attrs["checkpoints"]`` and the fit's health record what each
            checkpoint found. ``None`` (default): the model's :meth:`default_draws`
            (:data:`raterstats.defaults.DRAWS` unless the model sets its own: the
            latent-class models but community Dawid-Skene take
            :data:`raterstats.defaults.CHECKPOINTS`, the ordinal model its own).
        tune, chains : int
            NUTS tuning steps per chain, and number of chains; defaults
            :data:`~raterstats.defaults.TUNE` (500:
            nutpie's step-size and mass-matrix adaptation settles well within it; its own
            default is 300; ``benchmarks/RESULTS.md`` records R-hat, ESS and divergences of
            the default settings on every benchmark study) and
            :data:`~raterstats.defaults.CHAINS`.
        random_seed : int or None
            Seed (default :data:`raterstats.defaults.RANDOM_SEED`); the same seed gives the
            same numbers. ``None``: a fresh seed is drawn and recorded in
            ``dt.attrs["random_seed"]``.
        sampler : {"nutpie", "pymc", "numpyro"}
            NUTS implementation (numpyro needs the ``jax`` extra).
        progress : bool
            Show a progress bar.
        posterior_predictive : bool
            Also store replicated ratings (one replicate per draw).
        log_likelihood : bool
            Store the pointwise log-likelihood (for LOO).
        target_accept : float, optional
            NUTS target acceptance rate (default: the sampler's).
        cores : int, optional
            Chains run in parallel on this many cores (default: all).
        logp_backend : {"auto", "pymc"}
            ``"auto"``: NUTS by nutpie uses the model's compiled density when it has one
            (:meth:`density`; no per-fit compilation); ``"pymc"``: always compile the PyMC
            model.
        init : {"auto", "em", "default"}
            Where NUTS chains on the compiled density start. ``"em"``: at the model's EM
            estimate (restarts included; each chain jittered by N(0, 0.1) on the
            unconstrained scale), so that every chain starts in the main mode of a
            multimodal posterior (a latent-class posterior has local modes where a
            cluster of items and their raters swap two labels, and a chain that falls into
            one during warm-up stays there); ``"default"``: the model's own starting point
            (the majority vote for latent-class models); ``"auto"`` (default): ``"em"``
            for models with an EM fast path, ``"default"`` otherwise. The PyMC path
            (``logp_backend="pymc"``, other samplers, a model without a compiled density)
            starts at the model's initial values; ``init="em"`` there is an error.
            ``dt.posterior.attrs["init"]`` records the start of a compiled-density fit.
        **method_options
            Passed to the engine: ``n`` (ADVI iterations), ``restarts``, ``max_iter``,
            ``tol`` (EM), or sampler keywords.

        Returns
        -------
        xr.DataTree
            Groups ``posterior``, ``sample_stats``, ``observed_data``, ``constant_data``,
            ``log_likelihood`` (unless disabled), ``posterior_predictive`` (on request) and
            model-specific groups; ``attrs`` hold :data:`FIT_ATTRS`.

        Raises
        ------
        ValueError
            Before any data preparation, compilation or sampling, listing every bad
            argument (wrong types included: ``draws=2.5``, ``random_seed="1"``); the rules
            are those of :func:`raterstats.inference_checks.sampler_argument_problems` (``tune=0``
            needs ``sampler="pymc"``: nutpie cannot sample without tuning). Then
            :class:`ModelInputError` (a ``ValueError``) when the ratings cannot be fitted.
        """
        check_arguments(
            *sampler_argument_problems(
                method=method,
                draws=D.DRAWS if draws is None else draws,  # None: the model's default
                tune=tune,
                chains=chains,
                random_seed=random_seed,
                sampler=sampler,
                target_accept=target_accept,
                cores=cores,
                progress=progress,
                methods=self.methods,
                options=method_options,
                em_options=keyword_names(self.fit_em, ("random_seed", "progress")),
            ),
            choice_problem("init", init, ("auto", "em", "default")),
            None
            if init != "em" or "em" in self.methods
            else f"{self.name} has no EM estimate to start from (init='em')",
            choice_problem("logp_backend", logp_backend, ("auto", "pymc")),
            flag_problem("posterior_predictive", posterior_predictive),
            flag_problem("log_likelihood", log_likelihood),
            where=f"{type(self).__name__}.fit",
        )
        seed = resolve_seed(random_seed)
        t0 = time.perf_counter()
        fingerprint = fingerprint_later(ratings)  # beside the fit: 0.5 s at 1.5 M ratings
        data = self.prepare(ratings)
        # empirical Bayes: the model with its data-dependent priors learnt and fixed (a new
        # model; ``self`` is never changed), used for everything below and recorded in attrs
        em_options = method_options if method == "em" else {}
        self = self.learn_priors(data, random_seed=seed, em_options=em_options)
        model: pm.Model | None = None
        density = None
        start: dict[str, np.ndarray] | None = None
        compiled = method == "nuts" and sampler == "nutpie" and logp_backend == "auto"
        on_density = logp_backend == "auto" and (
            (method == "map" and self.map_on_density) or (method == "advi" and self.advi_on_density)
        )
        if on_density and self.has_density(data):
            density = self.density(data, start=None)
        elif compiled and self.has_density(data):
            if init == "em" or (init == "auto" and "em" in self.methods):
                start = self.nuts_start(data, seed)
            density = self.density(data, start=start)
        watched = density is not None and method == "nuts"
        judged: dict[int, Health] = {}  # health at the checkpoint where a sample stopped
        if draws is None:
            draws = self.default_draws(watched=watched)
        checkpoints = None if isinstance(draws, int | np.integer) else tuple(int(d) for d in draws)
        n_draws = int(cast(int, draws)) if checkpoints is None else checkpoints[-1]
        if checkpoints is not None and not watched:
            raise ValueError(
                "draws as checkpoints (a sample that stops once its checks pass) needs NUTS "
                f"by nutpie on the model's compiled density; {type(self).__name__} has none "
                "for these data and options (or logp_backend='pymc'): give draws as an int"
            )
        if init == "em" and density is None and method != "gibbs":
            raise ValueError(
                "init='em' starts NUTS chains on the compiled density (method='nuts', "
                "sampler='nutpie', logp_backend='auto'); this fit "
                + (
                    f"uses method={method!r}"
                    if method != "nuts"
                    else "uses the PyMC model, which starts at the model's initial values"
                )
            )
        if method in ("em", "gibbs"):  # gibbs: LatentClassModel.fit_gibbs
            kw = {"draws": n_draws, "tune": tune, "chains": chains, "cores": cores, "init": init}
            kw = kw | {"log_likelihood": log_likelihood} if method == "gibbs" else {}
            dt = getattr(self, f"fit_{method}")(
                data, random_seed=seed, progress=progress, **kw, **method_options
            )
        elif density is not None and method == "map":
            dt = map_density(density, random_seed=seed, **method_options)
        elif density is not None and method == "advi":
            dt = advi_density(density, draws=n_draws, random_seed=seed, **method_options)
        elif density is not None:
            dt = run_density(
                density,
                draws=checkpoints or n_draws,
                until=None
                if checkpoints is None
                else self._checkpoint_verdict(data, start, judged),
                tune=tune,
                chains=chains,
                random_seed=seed,
                progress=progress,
                target_accept=target_accept,
                cores=cores,
                **method_options,
            )
            dt["posterior"].attrs["init"] = "em" if start is not None else "default"
            if start is not None:
                for name, ds in self.start_groups(data, start).items():
                    dt[name] = xr.DataTree(ds)
        else:
            model = self.build_model(data)
            dt = run_inference(
                model,
                method=method,
                draws=n_draws,
                tune=tune,
                chains=chains,
                random_seed=seed,
                sampler=sampler,
                progress=progress,
                initial_values=self.initial_values(data),
                target_accept=target_accept,
                cores=cores,
                **method_options,
            )
        groups: dict[str, xr.Dataset] = dict(self.data_groups(data, model))
        if log_likelihood:
            ll = self.log_likelihood(dt, data, model)
            if ll is not None:
                groups["log_likelihood"] = ll
        groups.update(self.extra_groups(dt, data, model))
        for name, ds in groups.items():
            dt[name] = xr.DataTree(ds)
        if posterior_predictive:
            rng = np.random.default_rng([seed, 1])
            dt["posterior_predictive"] = xr.DataTree(
                self.posterior_predictive(dt, data, model, rng)
            )
        spec = self.spec()
        n_draw = int(dt["posterior"].sizes["draw"])  # a sample with checkpoints: where it stopped
        dt.attrs.update(
            {
                "model": self.name,
                "priors": json.dumps(spec["priors"], sort_keys=True),
                "options": json.dumps(spec["options"], sort_keys=True),
                "raterstats_version": __version__,
                "data_fingerprint": fingerprint.result(),
                "method": method,
                "sampler": sampler if method == "nuts" else method,
                "logp_backend": "compiled" if density is not None or method == "gibbs" else "pymc",
                "random_seed": int(seed),
                "draws": n_draw if method in ("nuts", "advi", "gibbs") else 1,
                "tune": int(tune) if method in ("nuts", "gibbs") else 0,
                "chains": int(chains) if method in ("nuts", "gibbs") else 1,
                "fit_seconds": float(time.perf_counter() - t0),
            }
        )
        if n_draw in judged:  # the sample stopped at a checkpoint: judged on these draws
            health = judged[n_draw]
        else:
            extra = self.convergence_problems(dt) if method in ("nuts", "gibbs") else []
            extra += self.estimate_problems(dt)
            health = assess_fit(dt, model_problems=extra)
        if "checkpoints" in dt["posterior"].attrs:
            line = checkpoints_line(dt["posterior"].attrs)
            health = dataclasses.replace(health, lines=(*health.lines, line))
        stamp_health(dt, health)
        return dt

    def _checkpoint_verdict(
        self,
        data: Any,
        start: Mapping[str, np.ndarray] | None,
        judged: dict[int, Health] | None = None,
    ) -> Callable[[xr.DataTree], str | None]:
        """The verdict of a NUTS fit at a checkpoint (``draws`` as a tuple) on its first
        draws, ``fit`` (posterior and sample statistics): why the sample stops there, or
        None to sample on. The health it computed is put in ``judged`` under the number
        of draws (the finished fit's health, when the sample stops there)."""
        groups = dict(self.data_groups(data, None))  # the model's checks may read them
        groups.update(self.start_groups(data, start) if start is not None else {})

        def verdict(fit: xr.DataTree) -> str | None:
            groups_in = ("posterior", "sample_stats")
            partial = xr.DataTree(children={g: xr.DataTree(fit[g].to_dataset()) for g in groups_in})
            partial.attrs["method"] = "nuts"
            for name, ds in groups.items():
                partial[name] = xr.DataTree(ds)
            estimate = self.estimate_problems(partial)
            modes = self.convergence_problems(partial)
            n_div = int(np.asarray(partial["sample_stats"]["diverging"]).sum())
            if not (estimate or modes or n_div) and _small_variables_fail(partial):
                # the full check would fail too, and with no reason to stop the sample goes
                # on: the same verdict, without checking the thousands of other parameters
                # (this checkpoint's health is not kept: the next one judges anew)
                if judged is not None:
                    judged.clear()
                return None
            health = assess_fit(partial, model_problems=modes + estimate)  # as fit() orders
            if judged is not None:
                judged.clear()
                judged[int(partial["posterior"].sizes["draw"])] = health
            if health.ok:
                return "passed its checks"
            if estimate:  # a problem of the model's estimates: more draws keep it
                return "the model's checks of its estimates fail: " + "; ".join(estimate)
            if modes:  # chains in other modes (latent-class models) stay there
                return "the model's own checks of its chains fail: " + "; ".join(modes)
            if n_div:
                return f"{n_div} divergent transition(s), which more draws do not remove"
            return None

        return verdict


#: variables of at most this many scalars (scales, system effects, cut-points, rater
#: parameters) are checked first at a checkpoint (:func:`_small_variables_fail`)
QUICK_CHECK_MAX_SIZE = 100


def _small_variables_fail(fit: xr.DataTree) -> bool:
    """Whether a variable of at most :data:`QUICK_CHECK_MAX_SIZE` scalars among those a
    fit's health checks (:func:`raterstats.health.reported_variables`) already fails R-hat or
    ESS: then the fit fails its checks whatever its other parameters show. The hyperparameters
    are where a sample mixes slowest (the ordinal model on the built-in study at 1,000 draws:
    ``sigma_residual``), and checking them takes a fraction of checking all 6,000."""
    from raterstats.health import parameter_checks, reported_variables

    post = fit["posterior"].to_dataset()
    per_scalar = post.sizes["chain"] * post.sizes["draw"]
    small = [
        v for v in reported_variables(fit) if post[v].size <= QUICK_CHECK_MAX_SIZE * per_scalar
    ]
    return bool(small) and bool(parameter_checks(fit, var_names=small).failing)


def _unanswered(model: Model, question: str, what: str) -> TypeError:
    names = ", ".join(cls.__name__ for cls in models_answering(question)) or "none"
    return TypeError(
        f"{type(model).__name__} fits have no {what}; models that answer {question}: {names}"
    )


__all__ = [
    "COMPILED_MODULE_PREFIXES",
    "FIT_ATTRS",
    "POST_FIT_QUESTIONS",
    "Method",
    "Model",
    "ModelInputError",
    "Prior",
    "data_fingerprint",
    "discover_models",
    "is_fit_of",
    "model_class",
    "model_from_datatree",
    "models_answering",
    "registered_models",
]
