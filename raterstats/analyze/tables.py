"""Formatting helpers of the analysis' tables: posterior intervals as tidy frames and
"mean [low, high]" text cells. Intervals come from :mod:`raterstats.intervals`, tables are
written with :func:`raterstats.formatting.markdown_table` by the sections."""

from __future__ import annotations

import polars as pl
import xarray as xr

from raterstats.intervals import SAMPLE_DIMS, eti


def interval_frame(da: xr.DataArray, name: str, prob: float | None = None) -> pl.DataFrame:
    """Posterior mean and equal-tailed interval of ``da`` (sample dims chain, draw) as a
    tidy frame, one row per remaining coordinate combination.

    Parameters
    ----------
    da : xr.DataArray
        Draws with dims ``(chain, draw, ...)``.
    name : str
        Written to the column ``quantity``.
    prob : float, optional
        Probability of the interval (default :func:`raterstats.defaults.ci_prob`).

    Returns
    -------
    pl.DataFrame
        One column per other dim, then ``mean``, ``low``, ``high`` and ``quantity``.

    Examples
    --------
    >>> import numpy as np
    >>> da = xr.DataArray(np.arange(101.0)[None], dims=("chain", "draw"))
    >>> interval_frame(da.expand_dims(system=["a"], axis=2), "score", 0.5).row(0)
    ('a', 50.0, 25.0, 75.0, 'score')
    """
    low, high = eti(da, prob, dim=SAMPLE_DIMS)
    stats = xr.Dataset({"mean": da.mean(SAMPLE_DIMS), "low": low, "high": high})
    frame = pl.from_pandas(stats.to_dataframe().reset_index())
    return frame.with_columns(pl.lit(name).alias("quantity"))


def format_interval(
    digits: int | None = 2,
    *,
    mean: str = "mean",
    low: str = "low",
    high: str = "high",
    point: bool = False,
) -> pl.Expr:
    """The text "mean [low, high]" of three columns, by default those made by
    :func:`interval_frame`, rounded to ``digits`` (``None``: as they are); with
    ``point=True`` (a point estimate: MAP, EM) the value alone, never a zero-width interval.

    Examples
    --------
    >>> f = pl.DataFrame({"mean": [0.514], "low": [0.2], "high": [0.81]})
    >>> f.select(format_interval(1).alias("value")).item()
    '0.5 [0.2, 0.8]'
    """
    cols = [pl.col(c) for c in (mean, low, high)]
    if digits is not None:
        cols = [c.round(digits) for c in cols]
    if point:
        return cols[0].cast(pl.String)
    return pl.format("{} [{}, {}]", *cols)


def agreement_wide(table: pl.DataFrame) -> pl.DataFrame:
    """An :func:`~raterstats.agreement.agreement_table` with the estimates and intervals as
    text, one row per cell (its keys: the columns between ``statistic`` and ``estimate``,
    e.g. scheme and dimension), one column per statistic.

    Examples
    --------
    >>> t = pl.DataFrame({"statistic": ["kappa"], "scheme": ["s"], "dimension": ["x"],
    ...                   "estimate": [0.5], "ci_low": [0.4], "ci_high": [0.6]})
    >>> agreement_wide(t).row(0)
    ('s', 'x', '0.5 [0.4, 0.6]')
    """
    cols = table.columns
    keys = [c for c in cols[: cols.index("estimate")] if c != "statistic"]
    cell = format_interval(3, mean="estimate", low="ci_low", high="ci_high")
    return (
        table.with_columns(cell.fill_null("undefined").alias("value"))
        .pivot(on="statistic", index=keys, values="value")
        .sort(keys)
    )


__all__ = ["agreement_wide", "format_interval", "interval_frame"]
