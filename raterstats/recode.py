"""Recoding the rating columns of a canonical ratings frame.

The level maps behind :meth:`~raterstats.Ratings.collapse` and
:meth:`~raterstats.Ratings.score` (old code -> new code, level text and value, with gold
labels mapped alike) and the segment-to-item aggregation behind
:meth:`~raterstats.Ratings.aggregate_segments`. Each takes and returns a polars frame in
the canonical columns of :mod:`raterstats.schema`; the :class:`~raterstats.Ratings`
methods check their arguments and record the step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from raterstats import schema as S
from raterstats.scales import CategoricalScale, Scale, SegmentRule, format_level


def apply_code_map(
    data: pl.DataFrame,
    dim: str,
    new_codes: Sequence[int],
    canon: Sequence[str],
    values: Sequence[float],
    *,
    keep_code: bool = True,
) -> pl.DataFrame:
    """Recode the rows of one dimension: old code -> new code, level text and value.

    Parameters
    ----------
    data : pl.DataFrame
        Canonical ratings frame (``dimension``, ``code``, ``rating``, ``value`` columns).
    dim : str
        The dimension whose rows are recoded; other rows are left as they are.
    new_codes : sequence of int
        New code of each old code (position = old code).
    canon, values : sequence
        Canonical level text and numeric value of each new code.
    keep_code : bool
        Store the new code; when False the code becomes null (interval target scales).

    Returns
    -------
    pl.DataFrame

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"dimension": ["d", "d"], "code": [0, 2], "rating": ["1", "3"],
    ...                       "value": [1.0, 3.0]}, schema_overrides={"code": pl.Int32})
    >>> apply_code_map(frame, "d", [0, 0, 1], ["lo", "hi"], [0.0, 1.0]).rows()
    [('d', 0, 'lo', 0.0), ('d', 1, 'hi', 1.0)]
    """
    is_dim = pl.col(S.DIMENSION) == dim
    old = pl.col(S.CODE)
    to_code = {o: int(n) for o, n in enumerate(new_codes)}
    to_text = {o: canon[n] for o, n in enumerate(new_codes)}
    to_value = {o: float(values[n]) for o, n in enumerate(new_codes)}
    code_expr = (
        old.replace_strict(to_code, default=None, return_dtype=pl.Int32)
        if keep_code
        else pl.lit(None, dtype=pl.Int32)
    )
    return data.with_columns(
        pl.when(is_dim).then(code_expr).otherwise(old).alias(S.CODE),
        pl.when(is_dim)
        .then(old.replace_strict(to_text, default=None, return_dtype=pl.String))
        .otherwise(pl.col(S.RATING))
        .alias(S.RATING),
        pl.when(is_dim)
        .then(old.replace_strict(to_value, default=None, return_dtype=pl.Float64))
        .otherwise(pl.col(S.VALUE))
        .alias(S.VALUE),
    )


def map_gold(
    data: pl.DataFrame,
    dim: str,
    source: Scale,
    new_codes: Sequence[int] | None,
    canon: Sequence[str],
) -> pl.DataFrame:
    """Map the gold labels of one dimension through the same level map as the ratings.

    Parameters
    ----------
    data : pl.DataFrame
        Canonical ratings frame; returned unchanged without a ``gold`` column or when
        ``source`` is not categorical.
    dim : str
        The dimension whose gold labels are mapped.
    source : Scale
        The dimension's scale before the map.
    new_codes : sequence of int or None
        New code of each old code (None: codes are kept, only the text changes).
    canon : sequence of str
        Canonical level text of each new code.

    Returns
    -------
    pl.DataFrame

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import NominalScale
    >>> frame = pl.DataFrame({"dimension": ["d", "d"], "gold": ["yes", "no"]})
    >>> map_gold(frame, "d", NominalScale(["yes", "no"]), None, ["1", "0"])["gold"].to_list()
    ['1', '0']
    """
    if S.GOLD not in data.columns or not isinstance(source, CategoricalScale):
        return data
    mapping = {}
    for i, lv in enumerate(source.levels):
        j = i if new_codes is None else new_codes[i]
        mapping[format_level(lv)] = canon[j]
    is_dim = pl.col(S.DIMENSION) == dim
    return data.with_columns(
        pl.when(is_dim)
        .then(pl.col(S.GOLD).replace_strict(mapping, default=None, return_dtype=pl.String))
        .otherwise(pl.col(S.GOLD))
        .alias(S.GOLD)
    )


def aggregate_segment_rows(
    data: pl.DataFrame,
    scales: Mapping[str, Scale],
    rules: Mapping[str, SegmentRule],
) -> tuple[pl.DataFrame, dict[str, Scale]]:
    """One rating per item, rater, dimension, design and repeat flag from segment ratings.

    Parameters
    ----------
    data : pl.DataFrame
        Canonical ratings frame.
    scales : mapping of str to Scale
        Scale of every dimension of ``data``.
    rules : mapping of str to SegmentRule
        The rule of each dimension to aggregate, in output order; rows of other dimensions
        are kept as they are. The ``gold`` column, if any, is dropped.

    Returns
    -------
    frame : pl.DataFrame
        Rows of the other dimensions, then the aggregated rows (``segment`` null).
    scales : dict of str to Scale
        ``scales`` with each aggregated dimension on its rule's target scale.

    Raises
    ------
    ValueError
        When whole-item ratings are in a dimension being aggregated.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import OrdinalScale, read_ratings
    >>> from raterstats.scales import SEGMENT_RULES
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a"], "segment": ["s1", "s2"],
    ...                                "rater": ["x", "x"], "rating": [2, 3]}),
    ...                  scale=OrdinalScale.likert(3))
    >>> frame, _ = aggregate_segment_rows(r.data, r.scales, {"default": SEGMENT_RULES["min"]})
    >>> frame.select("item", "segment", "rating").rows()
    [('a', None, '2')]
    """
    dims = list(rules)
    in_dims = pl.col(S.DIMENSION).is_in(dims)
    mixed = data.filter(in_dims & pl.col(S.SEGMENT).is_null()).height
    if mixed:
        raise ValueError(
            f"{mixed} whole-item ratings are in the dimensions being aggregated "
            f"{dims}; select the segment-level design first, e.g. filter(design='fine')"
        )
    keep = data.filter(~in_dims)
    group_cols = [
        c
        for c in (S.ITEM, S.RATER, S.DIMENSION, S.DESIGN, S.REPEAT, S.REPEAT_INDEX)
        if c in data.columns
    ]
    own = {*group_cols, S.VALUE, S.CODE, S.RATING, S.SEGMENT, S.ROW, S.GOLD}
    carry = [c for c in data.columns if c not in own]  # item-level attributes, extras
    pieces = []
    out_scales = dict(scales)
    for d in dims:
        r = rules[d]
        src = scales[d]
        target = r.target_scale(src)
        sub = data.filter(pl.col(S.DIMENSION) == d)
        if r.kind in ("any_negative", "any_positive"):
            flagged = r.flagged_codes(src)
            hit = pl.col(S.CODE).is_in(flagged).any()
            val = (1 - hit.cast(pl.Int32)) if r.kind == "any_negative" else hit.cast(pl.Int32)
            agg_val = val.cast(pl.Float64)
        elif r.kind == "mean":
            agg_val = pl.col(S.VALUE).mean()
        elif r.kind == "min":
            agg_val = pl.col(S.VALUE).min()
        else:
            agg_val = pl.col(S.VALUE).max()
        out = sub.group_by(group_cols, maintain_order=True).agg(
            agg_val.alias(S.VALUE),
            pl.col(S.ROW).min().alias(S.ROW),
            *[pl.col(c).first() for c in carry],
        )
        if isinstance(target, CategoricalScale):
            to_code = {float(v): i for i, v in enumerate(target.values)}
            to_text = {
                float(v): format_level(lv)
                for v, lv in zip(target.values, target.levels, strict=True)
            }
            out = out.with_columns(
                pl.col(S.VALUE).replace_strict(to_code, return_dtype=pl.Int32).alias(S.CODE),
                pl.col(S.VALUE).replace_strict(to_text, return_dtype=pl.String).alias(S.RATING),
            )
        else:
            out = out.with_columns(
                pl.lit(None, dtype=pl.Int32).alias(S.CODE),
                pl.col(S.VALUE).map_elements(format_level, return_dtype=pl.String).alias(S.RATING),
            )
        out = out.with_columns(pl.lit(None, dtype=pl.String).alias(S.SEGMENT))
        pieces.append(out)
        out_scales[d] = target
    cols = [c for c in data.columns if c != S.GOLD]
    keep = keep.select(cols) if S.GOLD in data.columns else keep
    merged = pl.concat([keep, *[p.select(cols) for p in pieces]], how="vertical_relaxed")
    return merged, out_scales


__all__ = ["aggregate_segment_rows", "apply_code_map", "map_gold"]
