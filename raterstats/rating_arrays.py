"""Ratings as labelled arrays: one cell per unit, rater, dimension and design.

A unit is an item or an item's segment; units are told apart by their (item, segment)
columns and labelled by :func:`raterstats.schema.unit_id` (``"<item>::<segment>"``, with
``:``, ``|`` and ``\\`` escaped where the ids would be ambiguous). :func:`rating_array` backs
:meth:`~raterstats.Ratings.to_xarray` and :meth:`~raterstats.Ratings.to_matrix`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S

Level = Literal["item", "segment"]
Values = Literal["value", "code", "rating"]
Repeats = Literal["exclude", "only", "include"]


def _level_of(data: pl.DataFrame, level: Level | None) -> Level:
    seg_rows = data.height - data.get_column(S.SEGMENT).null_count()
    if level is None:
        if 0 < seg_rows < data.height:
            raise ValueError(
                "the selection mixes whole-item and segment ratings; filter by design "
                "or pass level='item' / level='segment'"
            )
        return "segment" if seg_rows else "item"
    if level not in ("item", "segment"):
        raise ValueError(f"level must be 'item' or 'segment', not {level!r}")
    return level


def _unit_frame(
    data: pl.DataFrame, level: Level | None, repeats: Repeats
) -> tuple[pl.DataFrame, pl.DataFrame, Level, int]:
    """Rows at one level, the rows at that level before the repeat selection, the level
    and the number of ratings the selection left out."""
    lv = _level_of(data, level)
    if lv == "item":
        data = data.filter(pl.col(S.SEGMENT).is_null())
    else:
        data = data.filter(pl.col(S.SEGMENT).is_not_null())
    at_level = data
    if repeats == "exclude":
        n_rep = int(data.get_column(S.REPEAT).sum())
        data = data.filter(~pl.col(S.REPEAT))
    elif repeats == "only":
        n_rep = int((~data.get_column(S.REPEAT)).sum())
        data = data.filter(pl.col(S.REPEAT))
    elif repeats == "include":
        n_rep = 0
    else:
        raise ValueError(f"repeats must be 'exclude', 'only' or 'include', not {repeats!r}")
    if repeats in ("include", "only"):
        dup = data.select(
            pl.struct(S.ITEM, S.SEGMENT, S.RATER, S.DIMENSION, S.DESIGN).is_duplicated().any()
        ).item()
        if dup:
            hint = (
                "use 'exclude' (first ratings) or 'only' (repeats)"
                if repeats == "include"
                else "some are rated more than twice; select one repeat first, e.g. "
                ".filter(repeat_index=1)"
            )
            raise ValueError(f"repeats={repeats!r} puts two ratings in one cell; {hint}")
    return data, at_level, lv, n_rep


def _value_column(values: Values) -> str:
    if values not in ("value", "code", "rating"):
        raise ValueError(f"values must be 'value', 'code' or 'rating', not {values!r}")
    return {"value": S.VALUE, "code": S.CODE, "rating": S.RATING}[values]


def rating_array(
    data: pl.DataFrame,
    *,
    level: Level | None = None,
    values: Values = "value",
    repeats: Repeats = "exclude",
) -> xr.DataArray:
    """The ratings of a canonical frame as an array with dims ``(unit, rater, dimension,
    design)``; see :meth:`raterstats.Ratings.to_xarray` for the options.

    Parameters
    ----------
    data : pl.DataFrame
        Canonical ratings frame (:attr:`raterstats.Ratings.data`).
    level : {"item", "segment"}, optional
        Unit level; by default the one level the data hold (mixed levels raise).
    values : {"value", "code", "rating"}
        Numeric value, level code, or level text (object array, None when missing).
    repeats : {"exclude", "only", "include"}
        First ratings, repeated ratings, or both (when no cell gets two: a ValueError
        otherwise).

    Returns
    -------
    xr.DataArray
        Missing ratings are NaN; ``attrs`` holds ``level``, ``repeats`` and
        ``n_excluded_repeats``.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a", "b"], "rater": ["x", "y", "x"],
    ...                                "rating": [1, 2, 2]}))
    >>> arr = rating_array(r.data)
    >>> arr.dims, arr.shape
    (('unit', 'rater', 'dimension', 'design'), (2, 2, 1, 1))
    >>> arr.values[:, :, 0, 0]
    array([[ 1.,  2.],
           [ 2., nan]])
    """
    rows, at_level, lv, n_rep = _unit_frame(data, level, repeats)
    col = _value_column(values)
    # units are (item, segment) pairs; their ids are unique too (schema.unit_id)
    units = (
        rows.select(S.ITEM, S.SEGMENT)
        .unique()
        .with_columns(S.unit_id_expr())
        .sort("unit")
        .with_row_index("_unit")
    )
    rows = rows.join(units, on=[S.ITEM, S.SEGMENT], how="left", nulls_equal=True)
    unit_ids = units.get_column("unit").to_list()
    # raters, dimensions and designs of the whole selection, so that the first-rating
    # and repeat views of the same data have the same shape
    scope = at_level if at_level.height else data
    raters = sorted(scope.get_column(S.RATER).unique().to_list())
    dims = sorted(scope.get_column(S.DIMENSION).unique().to_list())
    designs = sorted(scope.get_column(S.DESIGN).unique().to_list())
    idx = {
        S.RATER: {u: i for i, u in enumerate(raters)},
        S.DIMENSION: {u: i for i, u in enumerate(dims)},
        S.DESIGN: {u: i for i, u in enumerate(designs)},
    }
    shape = (len(unit_ids), len(raters), len(dims), len(designs))
    pos = [rows.get_column("_unit").to_numpy().astype(np.int64)] + [
        rows.get_column(c).replace_strict(m, return_dtype=pl.Int64).to_numpy().astype(np.int64)
        for c, m in idx.items()
    ]
    arr: np.ndarray
    if values == "rating":
        arr = np.full(shape, None, dtype=object)
        arr[tuple(pos)] = np.asarray(rows.get_column(col).to_list(), dtype=object)
    else:
        arr = np.full(shape, np.nan)
        arr[tuple(pos)] = rows.get_column(col).cast(pl.Float64).fill_null(np.nan).to_numpy()
    coords: dict[str, Any] = {
        "unit": unit_ids,
        S.RATER: raters,
        S.DIMENSION: dims,
        S.DESIGN: designs,
        S.ITEM: ("unit", units.get_column(S.ITEM).to_list()),
    }
    if lv == "segment":
        coords[S.SEGMENT] = ("unit", units.get_column(S.SEGMENT).to_list())
    return xr.DataArray(
        arr,
        dims=("unit", S.RATER, S.DIMENSION, S.DESIGN),
        coords=coords,
        name=values,
        attrs={"level": lv, "n_excluded_repeats": n_rep, "repeats": repeats},
    )


__all__ = ["Level", "Repeats", "Values", "rating_array"]
