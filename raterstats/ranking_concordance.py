"""Agreement between two system rankings, either of which may be a posterior (then the result
is a distribution of Kendall's tau-b / Spearman's rho / RBO / NRP over draws), reusing the
point functions of :mod:`raterstats.agreement.ranking`. Re-exported by
:mod:`raterstats.ranking`, where the rankings it compares come from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.agreement.ranking import (
    kendall_tau_b,
    normalized_rank_position,
    rbo,
    spearman_rho,
)
from raterstats.checks import check_counts
from raterstats.intervals import SAMPLE_DIMS, eti_np

#: Ranking-agreement statistics understood by :func:`ranking_agreement`.
RANKING_STATISTICS = ("kendall_tau_b", "spearman_rho", "rbo", "normalized_rank_position")


def _ranking_side(x: Any, what: str) -> xr.DataArray:
    """(sample, system) draws from a rank_systems result, a DataArray or a mapping."""
    if isinstance(x, xr.Dataset):
        if "score" not in x:
            raise ValueError(f"{what}: a Dataset side must be a rank_systems result (with 'score')")
        x = x["score"]
    if isinstance(x, Mapping):
        try:
            values = np.asarray(list(x.values()), dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{what}: a {{system: score}} side needs numeric scores") from None
        x = xr.DataArray(values, dims="system", coords={"system": [str(k) for k in x]})
    if not isinstance(x, xr.DataArray) or "system" not in x.dims:
        raise ValueError(
            f"{what}: each side must be a rank_systems result, a DataArray with a 'system' "
            "dim or a {system: score} mapping"
        )
    left = [d for d in x.dims if d not in (*SAMPLE_DIMS, "system")]
    if left:
        raise ValueError(f"{what}: select one value of {left} first (e.g. ds.sel(dimension=...))")
    x = x.stack(sample=SAMPLE_DIMS) if "chain" in x.dims else x.expand_dims(sample=1)
    x = x.transpose("sample", "system").astype(float)
    x = x.assign_coords(system=[str(s) for s in x["system"].values])
    bad = (~np.isfinite(x.values)).sum(axis=0)
    if bad.any():
        named = [
            f"{s} ({int(c)} of {x.sizes['sample']})"
            for s, c in zip(x["system"].values, bad, strict=True)
            if c
        ]
        raise ValueError(
            f"{what}: scores are NaN or infinite for systems {', '.join(named)}; an undefined "
            "score has no rank (it would be ranked last): leave those systems out"
        )
    return x


def _one_ranking_stat(
    stat: str, a: np.ndarray, b: np.ndarray, systems: list[str], p: float, k: int
) -> float:
    if stat == "kendall_tau_b":
        return kendall_tau_b(a, b)
    if stat == "spearman_rho":
        return spearman_rho(a, b)
    if stat == "normalized_rank_position":
        return normalized_rank_position(a, b, k=k)
    order_a = [systems[i] for i in np.argsort(-a, kind="stable")]
    order_b = [systems[i] for i in np.argsort(-b, kind="stable")]
    return rbo(order_a, order_b, p=p)


def ranking_agreement(
    x: Any,
    y: Any,
    *,
    statistics: Sequence[str] = RANKING_STATISTICS,
    ci_prob: float | None = None,
    p: float = 0.9,
    k: int = 1,
    max_draws: int = 1000,
    random_seed: int = D.RANDOM_SEED,
) -> xr.Dataset:
    """Agreement between two system rankings, either of which may be a posterior.

    Parameters
    ----------
    x, y : rank_systems result, xr.DataArray or mapping
        The reference (``x``, e.g. the human ranking) and the candidate (``y``, e.g. an
        automatic metric or a subsampled study): a :func:`rank_systems` result (its score
        draws) with one dimension / design selected, a DataArray with a ``system`` dim (and
        ``chain`` / ``draw`` for draws) or ``{system: score}``. Higher scores rank first.
        Only systems on both sides are compared.
    statistics : sequence of str
        Any of ``kendall_tau_b``, ``spearman_rho``, ``rbo`` (extrapolated, persistence
        ``p``) and ``normalized_rank_position`` (of the reference's top ``k``).
    ci_prob : float
        Probability of the equal-tailed interval over draws.
    max_draws : int
        Draws compared at most; posterior sides are paired at random (independent fits).
    random_seed : int
        Seed of the pairing.

    Returns
    -------
    xr.Dataset
        ``value`` (statistic x sample; one sample when both sides are point rankings),
        ``mean``, ``low``, ``high`` per statistic over the samples where it is defined, and
        ``n_undefined``: the samples left out because the statistic is undefined there
        (NaN, e.g. a rank correlation when one side ties every system); NaN summaries when
        it is undefined in every sample. A side with a NaN or infinite score is refused
        (ValueError naming the systems): an undefined score has no rank.

    Examples
    --------
    >>> ra = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    >>> rb = {"a": 2.5, "b": 3.0, "c": 1.0, "d": 0.5}
    >>> float(ranking_agreement(ra, rb)["mean"].sel(statistic="kendall_tau_b"))
    0.6666666666666666
    """
    check_counts(where="ranking_agreement", max_draws=(max_draws, 1), k=(k, 1))
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
    unknown = [s for s in statistics if s not in RANKING_STATISTICS]
    if unknown:
        raise ValueError(
            f"ranking_agreement: unknown statistics {unknown}; known: {list(RANKING_STATISTICS)}"
        )
    what = "ranking_agreement"
    a, b = _ranking_side(x, what), _ranking_side(y, what)
    systems = [s for s in a["system"].values if s in set(b["system"].values)]
    if len(systems) < 2:
        raise ValueError(f"{what}: the two rankings share fewer than two systems")
    av = a.sel(system=systems).values
    bv = b.sel(system=systems).values
    rng = np.random.default_rng(random_seed)
    n = max(av.shape[0], bv.shape[0])
    n = min(n, max_draws)
    ia = (
        rng.choice(av.shape[0], n, replace=av.shape[0] < n) if av.shape[0] > 1 else np.zeros(n, int)
    )
    ib = (
        rng.choice(bv.shape[0], n, replace=bv.shape[0] < n) if bv.shape[0] > 1 else np.zeros(n, int)
    )
    vals = np.empty((len(statistics), n))
    for s_i, stat in enumerate(statistics):
        for t in range(n):
            vals[s_i, t] = _one_ranking_stat(stat, av[ia[t]], bv[ib[t]], systems, p, k)
    undefined = np.isnan(vals).sum(axis=1)
    defined = undefined < n
    low = np.full(len(statistics), np.nan)
    high = np.full(len(statistics), np.nan)
    mean = np.full(len(statistics), np.nan)
    if defined.any():
        low[defined], high[defined] = eti_np(vals[defined], ci_prob, axis=1)
        mean[defined] = np.nanmean(vals[defined], axis=1)
    return xr.Dataset(
        {
            "value": (("statistic", "sample"), vals),
            "mean": ("statistic", mean),
            "low": ("statistic", low),
            "high": ("statistic", high),
            "n_undefined": ("statistic", undefined),
        },
        coords={"statistic": list(statistics), "sample": np.arange(n)},
        attrs={"ci_prob": ci_prob, "n_systems": len(systems)},
    )


__all__ = ["RANKING_STATISTICS", "ranking_agreement"]
