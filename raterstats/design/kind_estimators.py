"""The default estimators of :func:`~raterstats.design.kinds.compare_design_kinds`: a
score per system from one simulated study of each kind of judgment (absolute ratings:
the mean rating; pairs: Bradley-Terry; rankings: Plackett-Luce, both by MAP).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.comparisons import Comparisons
from raterstats.models import BradleyTerry, Model, PlackettLuce
from raterstats.ratings import Ratings

#: a function of one study's table (Ratings or Comparisons) to scores by system
Estimator = Callable[[Any], xr.DataArray]


def mean_rating_scores(ratings: Ratings) -> xr.DataArray:
    """The default estimator of absolute designs: the mean rating (its numeric value) of
    each system over all its ratings.

    Examples
    --------
    >>> from raterstats.simulate_kinds import simulate_kinds
    >>> r = simulate_kinds(theta=[1.0, -1.0], n_questions=30, kinds=["absolute"]).ratings
    >>> s = mean_rating_scores(r)
    >>> s.dims, bool(s.sel(system="s1") > s.sel(system="s2"))
    (('system',), True)
    """
    d = ratings.data
    if S.SYSTEM not in d.columns:
        raise ValueError("mean_rating_scores: the ratings have no 'system' column")
    m = d.group_by(S.SYSTEM).agg(pl.col(S.VALUE).mean()).sort(S.SYSTEM)
    return xr.DataArray(
        m[S.VALUE].to_numpy().astype(float),
        dims=S.SYSTEM,
        coords={S.SYSTEM: m[S.SYSTEM].to_list()},
        name="mean_rating",
    )


def map_strengths(cls: type[Model], comparisons: Comparisons) -> xr.DataArray:
    """System strengths ``theta`` (posterior mode) of the comparison model ``cls``, fitted
    with ``method="map"`` to one-dimension ``comparisons``; ``attrs["fit_warning"]`` says
    when the optimisation did not converge.

    Parameters
    ----------
    cls : type
        :class:`~raterstats.BradleyTerry` or :class:`~raterstats.PlackettLuce`.
    comparisons : Comparisons
        The judgments (one dimension).

    Returns
    -------
    xr.DataArray
        Dims ``system``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a failed optimisation is recorded below instead
        dt = cls().fit(comparisons, method="map", random_seed=0, progress=False)
    theta = dt["posterior"]["theta"]
    theta = theta.mean([d for d in ("chain", "draw") if d in theta.dims])
    if S.DIMENSION in theta.dims:
        theta = theta.squeeze(S.DIMENSION, drop=True)
    out = theta.rename("theta")
    stats = dt["sample_stats"].to_dataset() if "sample_stats" in dt.children else xr.Dataset()
    if "converged" in stats and not bool(stats["converged"].values.all()):
        out.attrs["fit_warning"] = f"the {cls.__name__} MAP optimisation did not converge"
    return out


def bradley_terry_scores(comparisons: Comparisons) -> xr.DataArray:
    """The default estimator of pair designs: Bradley-Terry MAP strengths
    (``raterstats.models.BradleyTerry``, :func:`map_strengths`)."""
    return map_strengths(BradleyTerry, comparisons)


def plackett_luce_scores(comparisons: Comparisons) -> xr.DataArray:
    """The default estimator of ranking designs: Plackett-Luce MAP strengths
    (``raterstats.models.PlackettLuce``, :func:`map_strengths`)."""
    return map_strengths(PlackettLuce, comparisons)


#: the default estimator and its description, per kind
DEFAULT_ESTIMATORS: dict[str, tuple[Estimator, str]] = {
    "absolute": (mean_rating_scores, "the mean rating of each system"),
    "pairs": (
        bradley_terry_scores,
        "Bradley-Terry strengths, posterior mode (BradleyTerry, method='map')",
    ),
    "rankings": (
        plackett_luce_scores,
        "Plackett-Luce strengths, posterior mode (PlackettLuce, method='map')",
    ),
}


__all__ = [
    "DEFAULT_ESTIMATORS",
    "Estimator",
    "bradley_terry_scores",
    "map_strengths",
    "mean_rating_scores",
    "plackett_luce_scores",
]
