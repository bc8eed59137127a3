"""PyMC pieces of the ordinal rater model's graph, shared with
:class:`~raterstats.models.length_effect.LengthEffect`: the interval probability, the
ordered cut-points, the ratings' log-likelihood potential, and the priors stated in latent
units (:mod:`raterstats.models.ordinal.units`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from raterstats.lazy import LazyModule
from raterstats.models.ordinal.data import OrdinalData
from raterstats.models.priors import Prior

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")


def interval_logp_pt(lo: Any, hi: Any, link: str) -> Any:
    """The PyTensor form of :func:`~raterstats.models.ordinal.reference.interval_logp`:
    ``log P(lo < latent <= hi)`` for a standard logistic or normal latent variable."""
    if link == "logit":
        # log(F(hi) - F(lo)) = log F(hi) + log(1 - F(lo)) + log(1 - exp(lo - hi))
        return -pt.softplus(-hi) - pt.softplus(lo) + pt.log1mexp(lo - hi)
    from pymc.distributions.dist_math import normal_lcdf

    a, b = normal_lcdf(0.0, 1.0, hi), normal_lcdf(0.0, 1.0, lo)
    return a + pt.log1mexp(b - a)


def _log_cdf(x: Any, link: str) -> Any:
    """log F(x) in PyTensor (logistic: -softplus(-x); normal: log Phi(x))."""
    if link == "logit":
        return -pt.softplus(-x)
    from pymc.distributions.dist_math import normal_lcdf

    return normal_lcdf(0.0, 1.0, x)


def ordered_cutpoints(
    prior: Prior,
    data: OrdinalData,
    units: np.ndarray | None = None,
    initval: np.ndarray | None = None,
) -> Any:
    """Cut-points ``c[dimension, design, cut]``, ordered within each dimension x design,
    normal prior (its ``mu`` and ``sigma`` times the latent unit of the dimension, when
    ``units`` are given), started at ``initval`` (default: the empirical cumulative
    logits), in the current pm.Model."""
    u = np.ones(len(data.coords["dimension"])) if units is None else np.asarray(units, float)
    return pm.Normal(
        "cutpoints",
        mu=float(prior.param("mu", 0.0)) * u[:, None, None],
        sigma=float(prior.param("sigma", 3.0)) * u[:, None, None],
        transform=pm.distributions.transforms.ordered,
        dims=("dimension", "design", "cut"),
        initval=data.initial_cuts if initval is None else initval,
    )


#: The parameters of a prior that the latent unit multiplies (location and scale).
UNIT_PARAMETERS = ("mu", "sigma", "beta")


def in_units(prior: Prior, unit: Any) -> Prior:
    """``prior`` stated in ``unit``: its location and scale parameters
    (:data:`UNIT_PARAMETERS`; ``beta`` is HalfCauchy's scale) multiplied by ``unit`` (a
    number or an array that broadcasts against the variable); other parameters as written.

    Examples
    --------
    >>> in_units(Prior("HalfNormal", sigma=1.0), 2.5)
    Prior('HalfNormal', sigma=2.5)
    """
    params = {
        k: (np.asarray(v, float) * unit if k in UNIT_PARAMETERS else v)
        for k, v in prior.params.items()
    }
    return Prior(prior.dist, **params)


def stretched_cuts(initial_cuts: np.ndarray, units: np.ndarray) -> np.ndarray:
    """Starting cut-points for latent units ``units``: the empirical cumulative logits
    (``OrdinalData.initial_cuts``, dimension x design x cut) stretched by
    ``sqrt(1 + 3 u^2 / pi^2)``, the SD of the latent response ``eta + logistic noise``
    (``sd(eta) = u``) over that of the logistic noise alone."""
    u = np.asarray(units, float)[:, None, None]
    return np.asarray(initial_cuts) * np.sqrt(1.0 + 3.0 * u**2 / np.pi**2)


def ratings_potential(lp: Any, cuts: Any, data: OrdinalData, link: str) -> None:
    """Add the ratings' cumulative-link log-likelihood to the current pm.Model.

    Ratings in the lowest or highest level need one tail probability, the others an
    interval: computing them apart saves most transcendental calls (ratings of generated
    text pile up in the top level). :func:`prepare_ordinal` sorted the ratings into these
    three contiguous blocks.
    """
    ng = len(data.coords["design"])
    k = data.n_levels
    flat = cuts.reshape((-1,))
    base = (data.obs_dim * ng + data.obs_design) * (k - 1)
    nb = int(np.sum(data.y == 0))
    nt = int(np.sum(data.y == k - 1))
    bottom, top, mid = slice(0, nb), slice(nb, nb + nt), slice(nb + nt, data.n_obs)
    terms = []
    if nb:
        terms.append(_log_cdf(flat[base[bottom]] - lp[bottom], link).sum())
    if nt:
        terms.append(_log_cdf(lp[top] - flat[base[top] + k - 2], link).sum())
    if data.n_obs > nb + nt:
        y = data.y[mid]
        hi = flat[base[mid] + y] - lp[mid]
        lo = flat[base[mid] + y - 1] - lp[mid]
        terms.append(interval_logp_pt(lo, hi, link).sum())
    pm.Potential("ratings_loglik", pt.add(*terms) if len(terms) > 1 else terms[0])


__all__ = [
    "UNIT_PARAMETERS",
    "in_units",
    "interval_logp_pt",
    "ordered_cutpoints",
    "ratings_potential",
    "stretched_cuts",
]
