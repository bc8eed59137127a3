"""Descriptive tables of ratings beside the rankings: the share of each label per system
under three aggregations (all ratings, majority vote, a model's labels) and the
case-difficulty profile (how hard each question is across systems).

They rank nothing and fit nothing: they describe the ratings (and, for
:func:`label_distributions`, an existing fit's labels).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.ratings import Ratings
from raterstats.scales import CategoricalScale
from raterstats.scoring import ScoreMapArg, item_system_table, score_vector


def label_distributions(
    ratings: Ratings,
    *,
    fit: xr.DataTree | None = None,
    by: Sequence[str] = (S.SYSTEM,),
) -> pl.DataFrame:
    """Share of each label per dimension (and ``by``) under three aggregations.

    ``all ratings``: every first rating counts once; ``majority``: one label per item, the
    most frequent (ties: the first level of the scale); ``model``: the most probable label
    of each item under a MACE / Dawid-Skene ``fit`` of the same ratings.

    Returns
    -------
    polars.DataFrame
        Columns ``aggregation, dimension, *by, rating, n, share``.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["i1"] * 3 + ["i2"] * 3,
    ...     "rater": ["x", "y", "z"] * 2, "rating": ["yes", "yes", "no", "no", "no", "yes"],
    ...     "system": ["s"] * 6}))
    >>> t = label_distributions(r)
    >>> t.filter(pl.col("aggregation") == "majority")["share"].to_list()
    [0.5, 0.5]
    """
    d = ratings.data.filter(~pl.col(S.REPEAT))
    by = [c for c in by if c in d.columns]
    base = [S.DIMENSION, *by]
    parts = [
        d.select(*base, S.ITEM, S.SEGMENT, S.RATING, S.CODE).with_columns(
            pl.lit("all ratings").alias("aggregation")
        )
    ]
    unit = [S.ITEM, S.SEGMENT, S.DIMENSION]
    maj = (
        d.group_by(*unit, *by, S.RATING, S.CODE)
        .agg(pl.len().alias("__n"))
        .sort(*unit, "__n", S.CODE, descending=[False, False, False, True, False], nulls_last=True)
        .group_by(unit, maintain_order=True)
        .first()
        .with_columns(pl.lit("majority").alias("aggregation"))
    )
    parts.append(maj.select(parts[0].columns))
    if fit is not None:
        from raterstats.posterior import item_posterior

        post = item_posterior(fit)
        lab = pl.from_pandas(post[["label", "n_ratings"]].to_dataframe().reset_index()).filter(
            pl.col("n_ratings") > 0
        )
        if "unit_item" in lab.columns:  # the item of each unit id, as it is in the data
            lab = lab.with_columns(pl.col("unit_item").alias(S.ITEM))
        attrs = d.select(S.ITEM, *by).unique(subset=S.ITEM)
        lab = lab.join(attrs, on=S.ITEM, how="left").rename({"label": S.RATING})
        parts.append(
            lab.select(
                *base,
                S.ITEM,
                pl.lit(None, dtype=pl.String).alias(S.SEGMENT),
                pl.col(S.RATING).cast(pl.String),
                pl.lit(None, dtype=pl.Int64).alias(S.CODE),
                pl.lit("model").alias("aggregation"),
            )
        )
    allp = pl.concat(
        [
            p.with_columns(pl.col(S.CODE).cast(pl.Int64), pl.col(S.RATING).cast(pl.String))
            for p in parts
        ],
        how="diagonal_relaxed",
    )
    keys = ["aggregation", *base]
    counts = allp.group_by(*keys, S.RATING).agg(pl.len().alias("n"))
    return (
        counts.with_columns((pl.col("n") / pl.col("n").sum().over(keys)).alias("share"))
        .select(*keys, S.RATING, "n", "share")
        .sort(*keys, S.RATING)
    )


def case_difficulty(ratings: Ratings, *, score_map: ScoreMapArg = None) -> pl.DataFrame:
    """Case-difficulty profile: per case (question) and dimension, the mean score over
    the systems' answers and the dispersion across systems.

    An item's score is its mean rating (``score_map`` for categorical labels); a case's
    ``mean`` is the mean over its systems' item scores and ``sd_across_systems`` their
    standard deviation: hard cases have a low mean, discriminating cases a large spread.

    Returns
    -------
    polars.DataFrame
        Columns ``question, dimension, n_systems, mean, sd_across_systems, min, max``,
        hardest case first per dimension.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["q1-a", "q1-b", "q2-a", "q2-b"],
    ...     "rater": ["x"] * 4, "rating": [1, 3, 4, 4], "system": ["a", "b", "a", "b"],
    ...     "question": ["q1", "q1", "q2", "q2"]}))
    >>> case_difficulty(r)["mean"].to_list()
    [2.0, 4.0]
    """
    what = "case_difficulty"
    item_system_table(ratings, what)
    d = ratings.data.filter(~pl.col(S.REPEAT))
    if S.QUESTION not in d.columns:
        raise ValueError(f"{what}: the ratings need a 'question' (case) column")
    frames = []
    for dim in ratings.dimensions:
        part = d.filter(pl.col(S.DIMENSION) == dim)
        scale = ratings.scale_for(dim)
        if isinstance(scale, CategoricalScale) and score_map is not None:
            sv = score_vector(dim, [str(v) for v in scale.levels], score_map, what)
            s = pl.col(S.CODE).replace_strict(dict(enumerate(sv.tolist())), return_dtype=pl.Float64)
        else:
            s = pl.col(S.VALUE).cast(pl.Float64)
        if part[S.VALUE].null_count() and not (
            isinstance(scale, CategoricalScale) and score_map is not None
        ):
            raise ValueError(f"{what}: dimension {dim!r} has non-numeric labels; pass score_map=")
        # sorted so that the case statistics sum in one order: the same input gives the
        # same floats on every call (group_by's output order is not fixed)
        item = (
            part.group_by(S.ITEM, S.SYSTEM, S.QUESTION)
            .agg(s.mean().alias("__s"))
            .sort(S.QUESTION, S.SYSTEM, S.ITEM)
        )
        frames.append(
            item.group_by(S.QUESTION)
            .agg(
                pl.col(S.SYSTEM).n_unique().alias("n_systems"),
                pl.col("__s").mean().alias("mean"),
                pl.col("__s").std().alias("sd_across_systems"),
                pl.col("__s").min().alias("min"),
                pl.col("__s").max().alias("max"),
            )
            .with_columns(pl.lit(dim).alias(S.DIMENSION))
        )
    out = pl.concat(frames)
    return out.select(
        S.QUESTION, S.DIMENSION, "n_systems", "mean", "sd_across_systems", "min", "max"
    ).sort(S.DIMENSION, "mean", S.QUESTION)


__all__ = ["case_difficulty", "label_distributions"]
