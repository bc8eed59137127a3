"""Rater subsampling: how well rankings from fewer raters per item agree with the ranking
from all of them (:func:`subsampling_study`, on subsamples from :func:`subsample_raters`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import defaults as D
from raterstats import schema as S
from raterstats.agreement import DegenerateAgreementWarning
from raterstats.checks import check_counts
from raterstats.design.budget import run_tasks
from raterstats.intervals import eti
from raterstats.ranking import RawMethod
from raterstats.ratings import Ratings


def subsample_raters(
    ratings: Ratings, *, n_raters: int, random_seed: int = D.RANDOM_SEED
) -> Ratings:
    """Keep ``n_raters`` randomly chosen raters per item (all their ratings of it: every
    dimension, segment, design and repeat); items with fewer raters keep all of theirs.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings
    >>> sub = subsample_raters(r, n_raters=1, random_seed=2)
    >>> sub.data.group_by("item").agg(pl.col("rater").n_unique())["rater"].max()
    1
    """
    if int(n_raters) != n_raters or n_raters < 1:
        raise ValueError(f"subsample_raters: n_raters must be a positive integer, not {n_raters!r}")
    pairs = ratings.data.select(S.ITEM, S.RATER).unique().sort(S.ITEM, S.RATER)
    u = np.random.default_rng(random_seed).random(pairs.height)
    keep = (
        pairs.with_columns(pl.Series("__u", u))
        .with_columns(pl.col("__u").rank("ordinal").over(S.ITEM).alias("__rk"))
        .filter(pl.col("__rk") <= int(n_raters))
        .select(S.ITEM, S.RATER)
    )
    data = ratings.data.join(keep, on=[S.ITEM, S.RATER], how="semi", maintain_order="left")
    return ratings.derive(data, step=f"subsample_raters({int(n_raters)}, seed={random_seed})")


def _subsample_task(task: dict[str, Any]) -> np.ndarray:
    """One subsample of :func:`subsampling_study` (module level, so that process pools can
    run it): its ranking agreement with the full ranking, (statistic, dimension)."""
    from raterstats.ranking import rank_systems, ranking_agreement

    seed, full, dims = task["seed"], task["full"], task["dims"]
    sub = subsample_raters(task["ratings"], n_raters=task["r"], random_seed=seed)
    ds = rank_systems(
        sub, method=task["method"], score_map=task["score_map"], n_boot=0, random_seed=seed
    )
    out = np.full((len(task["statistics"]), len(dims)), np.nan)
    for d, dim in enumerate(dims):
        with warnings.catch_warnings():
            # a subsample can tie every system (e.g. MACE with one rater per item giving
            # all items one label): undefined, counted in n_undefined
            warnings.simplefilter("ignore", DegenerateAgreementWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            ag = ranking_agreement(
                full.sel(dimension=dim),
                ds["score_mean"].sel(dimension=dim),
                statistics=task["statistics"],
            )
        out[:, d] = ag["mean"].values
    return out


def subsampling_study(
    ratings: Ratings,
    *,
    n_raters: Iterable[int] = (1, 2, 3),
    n_repeats: int = 10,
    method: RawMethod = "mace",
    score_map: Any = None,
    statistics: Sequence[str] = ("kendall_tau_b", "spearman_rho"),
    ci_prob: float | None = None,
    max_workers: int | None = 1,
    executor: Executor | None = None,
    client: Any = None,
    random_seed: int = D.RANDOM_SEED,
) -> xr.Dataset:
    """How well rankings from fewer raters per item agree with the full ranking.

    For every ``r`` in ``n_raters`` and ``n_repeats`` random subsamples
    (:func:`subsample_raters`), the systems are ranked from the subsample with
    :func:`~raterstats.rank_systems` (``method``: ``"mace"`` / ``"dawid_skene"`` EM labels,
    ``"mean"``, ``"majority"`` or ``"pyramid"``; point scores) and compared with the
    ranking from all the ratings by :func:`~raterstats.ranking.ranking_agreement`. The
    subsamples are independent fits (EM for MACE / Dawid-Skene) and run in parallel with
    ``max_workers`` local processes (``None``: one per core), an ``executor`` or a Dask
    ``client`` (as in :func:`annotation_budget`); each has its own seed, so the result
    does not depend on where it ran.

    Returns
    -------
    xr.Dataset
        ``value`` (statistic, n_raters, repeat, dimension), its ``mean`` / ``low`` /
        ``high`` over the repeats where it is defined, and ``n_undefined`` (repeats where
        the subsample ties every system, e.g. MACE with one rater per item).

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=10, n_systems=4, raters_per_response=3,
    ...                        random_seed=1).ratings.filter(dimension="answers_question")
    >>> ds = subsampling_study(r, n_raters=[1, 3], n_repeats=2, method="pyramid",
    ...                        score_map="yes_partially_no")
    >>> float(ds["mean"].sel(statistic="kendall_tau_b", n_raters=3).item())
    1.0
    """
    check_counts(where="subsampling_study", n_repeats=(n_repeats, 1))
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
    from raterstats.ranking import rank_systems

    rs = [int(x) for x in n_raters]
    full = rank_systems(
        ratings, method=method, score_map=score_map, n_boot=0, random_seed=random_seed
    )
    dims = [str(d) for d in full["dimension"].values]
    seeds = np.random.SeedSequence(random_seed).generate_state(len(rs) * n_repeats)
    base = {
        "ratings": ratings,
        "full": full["score_mean"],
        "dims": dims,
        "method": method,
        "score_map": score_map,
        "statistics": list(statistics),
    }
    tasks = [
        {**base, "r": r, "seed": int(seeds[a * n_repeats + rep])}
        for a, r in enumerate(rs)
        for rep in range(n_repeats)
    ]
    results = run_tasks(
        _subsample_task, tasks, max_workers=max_workers, executor=executor, client=client
    )
    # (statistic, n_raters, repeat, dimension)
    vals = np.stack(results).reshape(len(rs), n_repeats, len(statistics), len(dims))
    vals = vals.transpose(2, 0, 1, 3)
    da = xr.DataArray(
        vals,
        dims=("statistic", "n_raters", "repeat", "dimension"),
        coords={
            "statistic": list(statistics),
            "n_raters": rs,
            "repeat": np.arange(n_repeats),
            "dimension": dims,
        },
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells stay NaN
        low, high = eti(da, ci_prob, dim="repeat")
        summary = {"mean": da.mean("repeat"), "low": low, "high": high}
    return xr.Dataset(
        {"value": da, **summary, "n_undefined": da.isnull().sum("repeat")},
        attrs={"method": method, "ci_prob": ci_prob, "n_repeats": n_repeats},
    )


__all__ = ["subsample_raters", "subsampling_study"]
