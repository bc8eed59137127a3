"""Prior simulators for simulation-based calibration on the user's own design.

:func:`prior_simulator` turns a latent-class model (flat MACE, unpooled Dawid-Skene) and
a table of ratings into a simulator for
:func:`~raterstats.design.calibration.simulation_based_calibration`: each call keeps the
design of the ratings (who rated which unit, in which dimension and design, repeats
included), draws the model's parameters from its priors, the true label of every unit
from the drawn prevalence, and every rating from the rater model
(:meth:`~raterstats.models.latent_class.LatentClassModel.simulate_ratings`).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.models import MACE, DawidSkene, Model
from raterstats.ratings import Ratings
from raterstats.scales import format_level


def _dirichlet_padded(
    rng: np.random.Generator, conc: np.ndarray, k: int, size: tuple[int, ...], K: int
) -> np.ndarray:
    """``size + (K,)`` Dirichlet draws on the first ``k`` categories (concentration
    ``conc`` of length ``k``), zeros beyond (the models' padding)."""
    out = np.zeros((*size, K))
    out[..., :k] = rng.dirichlet(conc, size=size)
    return out


class PriorSimulator:
    """A simulator ``seed -> (ratings, truth)`` for
    :func:`~raterstats.design.calibration.simulation_based_calibration` (made by
    :func:`prior_simulator`; module level, so that process pools and Dask workers can
    run it).

    Parameters
    ----------
    model : MACE or DawidSkene
        Flat MACE (``hierarchical=False``, or data with one dimension and one design) or
        ``DawidSkene(pooling="unpooled", confusion_prior="fixed")`` (or with a
        ``confusion_concentration`` given: a prior fixed before the data), without
        ``use_gold``.
    ratings : Ratings
        The design to keep: its units, raters, dimensions, designs and scales.

    Examples
    --------
    >>> from raterstats import DawidSkene
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=2, n_systems=2, random_seed=1).ratings
    >>> sim = PriorSimulator(DawidSkene(confusion_prior="fixed"), r)
    >>> data, truth = sim(3)
    >>> data.data.height == r.data.height, truth["confusion"].dims
    (True, ('rater', 'dimension', 'design', 'true', 'rated'))
    """

    def __init__(self, model: Model, ratings: Ratings) -> None:
        what = "prior_simulator"
        if not isinstance(ratings, Ratings):
            raise TypeError(f"{what}: ratings must be a raterstats.Ratings, not {type(ratings)}")
        if not isinstance(model, MACE | DawidSkene):
            raise TypeError(
                f"{what}: prior simulators exist for MACE and DawidSkene, not "
                f"{type(model).__name__}; write a simulate(seed) -> (data, truth) function "
                "for other models"
            )
        if model.options.get("use_gold"):
            raise ValueError(
                f"{what}: use_gold=True clamps true labels to the gold labels, which a prior "
                "draw does not respect; calibrate the model without use_gold"
            )
        data = model.prepare(ratings)
        if isinstance(model, MACE) and model.is_hierarchical(data):
            raise ValueError(
                f"{what}: hierarchical MACE (the default for several dimensions or designs) "
                "has no prior simulator; calibrate MACE(hierarchical=False)"
            )
        if isinstance(model, DawidSkene) and model.options["pooling"] != "unpooled":
            raise ValueError(
                f"{what}: Dawid-Skene with pooling={model.options['pooling']!r} has no prior "
                "simulator; calibrate DawidSkene(pooling='unpooled')"
            )
        if isinstance(model, DawidSkene) and model.learns_concentration():
            raise ValueError(
                f"{what}: this DawidSkene learns its confusion prior from the ratings "
                f"(confusion_prior={model.options['confusion_prior']!r}: empirical Bayes), so "
                "there is no prior to draw parameters from before the data; calibrate "
                "DawidSkene(confusion_prior='fixed'), or a model with a learnt "
                "confusion_concentration given"
            )
        frame = ratings.data
        if data.repeats == "exclude":
            frame = frame.filter(~pl.col(S.REPEAT))
        dims, raters, designs = data.dimensions, data.raters, data.designs
        # the layout's order of the ratings (prepare_latent_class): rows with equal keys
        # are interchangeable (same unit, same cell)
        frame = (
            frame.with_columns(
                pl.col(S.SEGMENT).fill_null("").cast(pl.String).alias("__seg"),
                pl.col(S.DIMENSION).replace_strict({d: i for i, d in enumerate(dims)}).alias("__d"),
                pl.col(S.RATER).replace_strict({r: i for i, r in enumerate(raters)}).alias("__r"),
                pl.col(S.DESIGN).replace_strict({g: i for i, g in enumerate(designs)}).alias("__g"),
            )
            .sort(S.ITEM, "__seg", "__d", "__r", "__g", S.CODE, maintain_order=True)
            .drop("__seg", "__d", "__r", "__g")
        )
        same = (
            frame[S.ITEM].to_list() == [data.unit_item[u] for u in data.unit]
            and frame[S.RATER].to_list() == [raters[j] for j in data.rater]
            and frame[S.DIMENSION].to_list() == [dims[d] for d in data.dim]
        )
        if not same:  # pragma: no cover - guards the layout's order
            raise RuntimeError(f"{what}: the ratings' order differs from the model's layout")
        K = data.K
        self.model = model
        self.ratings = ratings
        self.frame = frame
        self.data = data
        self.coords = {k: v for k, v in data.coords().items() if k != "unit"}
        self.text = np.full((len(dims), K), "", dtype=object)
        self.value = np.full((len(dims), K), np.nan)
        for d, name in enumerate(dims):
            scale = ratings.scale_for(name)
            vals = np.asarray(scale.values, dtype=float)
            for c, level in enumerate(scale.levels):
                self.text[d, c] = format_level(level)
                self.value[d, c] = vals[c]

    def draw_parameters(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """One draw of the model's parameters from its priors (constrained, as the fit's
        posterior variables, with a leading axis of one draw)."""
        data, model = self.data, self.model
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        pri = model.priors
        kd = [int(k) for k in data.n_categories]
        if np.ndim(pri["prevalence"].param("a", 1.0)):
            raise ValueError("prior_simulator: the prevalence prior must have a scalar 'a'")
        prev_a = float(pri["prevalence"].param("a", 1.0))
        prev = np.stack([_dirichlet_padded(rng, np.full(k, prev_a), k, (), K) for k in kd])
        if isinstance(model, MACE):
            a, b = model.competence_beta()
            spam_a = pri["spam"].param("a", 10.0)
            if np.ndim(spam_a):
                raise ValueError("prior_simulator: MACE's spam prior must have a scalar 'a'")
            comp = rng.beta(a, b, size=(R, D, G))
            spam = np.stack(
                [_dirichlet_padded(rng, np.full(k, float(spam_a)), k, (R,), K) for k in kd], axis=1
            )
            return {"competence": comp[None], "spam": spam[None], "prevalence": prev[None]}
        conc = model.confusion_conc(data, R * D * G).reshape(R, D, G, K, K)
        conf = np.zeros((R, D, G, K, K))
        for d, k in enumerate(kd):
            for t in range(k):
                for j in range(R):
                    conf[j, d, :, t, :k] = rng.dirichlet(conc[j, d, 0, t, :k], size=G)
        return {"confusion": conf[None], "prevalence": prev[None]}

    def __call__(self, seed: int) -> tuple[Ratings, dict[str, xr.DataArray]]:
        """Ratings on the design simulated from a prior draw, and the draw.

        Parameters
        ----------
        seed : int
            Seed of this replicate.

        Returns
        -------
        (Ratings, dict of xr.DataArray)
            The simulated ratings and the drawn parameters by posterior variable name,
            with the posterior's dims and coordinates.
        """
        rng = np.random.default_rng(seed)
        data = self.data
        params = self.draw_parameters(rng)
        prev = params["prevalence"][0]  # D, K
        cum = np.cumsum(prev[data.unit_dim], axis=-1)
        truth_class = np.minimum((rng.random((data.n_units, 1)) > cum).sum(-1), data.K - 1)
        codes = self.model.simulate_ratings(params, data, truth_class[None], rng)[0]
        frame = self.frame.with_columns(
            pl.Series(S.CODE, codes, dtype=pl.Int32),
            pl.Series(S.RATING, self.text[data.dim, codes].tolist(), dtype=pl.String),
            pl.Series(S.VALUE, self.value[data.dim, codes], dtype=pl.Float64),
        )
        sim = self.ratings.derive(frame, step=f"prior_simulator(seed={seed})")
        dims = {
            "competence": ("rater", "dimension", "design"),
            "spam": ("rater", "dimension", "category"),
            "prevalence": ("dimension", "category"),
            "confusion": ("rater", "dimension", "design", "true", "rated"),
        }
        coords = {**self.coords, "true": self.coords["category"], "rated": self.coords["category"]}
        truth = {
            name: xr.DataArray(v[0], dims=dims[name], coords={d: coords[d] for d in dims[name]})
            for name, v in params.items()
        }
        return sim, truth


def prior_simulator(model: Model, ratings: Ratings) -> PriorSimulator:
    """A simulator of ratings on the design of ``ratings`` from the priors of ``model``,
    for :func:`~raterstats.design.calibration.simulation_based_calibration`.

    Each call ``sim(seed)`` keeps who rated which unit (item, segment, dimension; design
    and repeats as in ``ratings``), draws the parameters from the model's priors (its own,
    including overrides), the true label of every unit from the drawn prevalence of its
    dimension, and every rating from the rater model; it returns the simulated
    :class:`~raterstats.Ratings` and the drawn parameters (``{name: xr.DataArray}`` with the
    posterior's dims and the user's ids). Flat MACE: ``competence`` ~ Beta, ``spam`` and
    ``prevalence`` ~ Dirichlet; unpooled Dawid-Skene: every row of ``confusion`` ~
    Dirichlet (with the diagonal mass and ``rater_prior`` of the model), ``prevalence`` ~
    Dirichlet. Categories beyond a dimension's own are zero, as in the fits.

    Parameters
    ----------
    model : MACE or DawidSkene
        Flat MACE (``MACE(hierarchical=False)``; the default is flat for one dimension and
        design) or ``DawidSkene(confusion_prior="fixed")`` (``pooling="unpooled"``, a
        prior fixed before the data: the default learns it from the ratings), without
        ``use_gold``.
    ratings : Ratings
        The design to keep (categorical ratings the model can fit).

    Returns
    -------
    PriorSimulator
        A picklable callable ``seed -> (Ratings, truth)``.

    Raises
    ------
    TypeError
        Another model, or ratings that are not a :class:`~raterstats.Ratings`.
    ValueError
        Hierarchical MACE, pooled Dawid-Skene, ``use_gold=True``, or ratings the model
        cannot fit.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=2, n_systems=2, random_seed=1).ratings
    >>> sim = prior_simulator(MACE(hierarchical=False), r)
    >>> data, truth = sim(1)
    >>> sorted(truth), truth["competence"].dims
    (['competence', 'prevalence', 'spam'], ('rater', 'dimension', 'design'))
    """
    return PriorSimulator(model, ratings)


__all__ = ["PriorSimulator", "prior_simulator"]
