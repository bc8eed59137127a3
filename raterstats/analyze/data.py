"""The data section: what the ratings hold (the data summary) and how the labels are
distributed, per dimension and rater kind, as rated and under each scheme."""

from __future__ import annotations

import polars as pl

from raterstats import schema as S
from raterstats.analyze.context import Context
from raterstats.formatting import escape_markdown, markdown_table
from raterstats.ratings import Ratings
from raterstats.scales import CategoricalScale

#: scales with more levels than this are summarised by their mean and quantiles, not shares
MAX_LEVELS_SHOWN = 11
#: the name of the ratings as they are, beside the schemes
AS_RATED = "as rated"


def label_distribution(ratings: Ratings, scheme: str) -> pl.DataFrame:
    """Share of each rating per rater kind and dimension (first ratings only).

    Parameters
    ----------
    ratings : Ratings
        The ratings of one scheme.
    scheme : str
        Its name, written to the column ``scheme``.

    Returns
    -------
    pl.DataFrame
        Columns ``scheme``, ``dimension``, ``rater_kind`` (when the ratings have it),
        ``rating``, ``n`` and ``share`` (within dimension and rater kind).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> d = label_distribution(r, "5-point")
    >>> d.columns
    ['scheme', 'dimension', 'rater_kind', 'rating', 'n', 'share']
    """
    by = [S.DIMENSION] + ([S.RATER_KIND] if S.RATER_KIND in ratings.data.columns else [])
    d = ratings.data.filter(~pl.col(S.REPEAT))
    counts = d.group_by([*by, S.RATING]).agg(pl.len().alias("n"))
    return (
        counts.with_columns((pl.col("n") / pl.col("n").sum().over(by)).alias("share"))
        .with_columns(pl.lit(scheme).alias("scheme"))
        .select("scheme", *by, S.RATING, "n", "share")
        .sort("scheme", *by, S.RATING)
    )


def level_order(ratings: Ratings) -> list[str]:
    """The levels of the ratings' scales as text, in scale order (dimensions in turn; a
    level shared by two scales once).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> level_order(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    ['1', '2', '3', '4', '5']
    """
    from raterstats.scales import format_level

    out: list[str] = []
    for scale in ratings.scales.values():
        for lv in scale.levels:
            text = format_level(lv)
            if text not in out:
                out.append(text)
    return out


def wide_shares(dist: pl.DataFrame, levels: list[str] | None = None) -> pl.DataFrame:
    """A :func:`label_distribution` with one column per rating level (shares in %), for
    reading; a level nobody used in a cell is 0 %. ``levels`` gives the column order
    (default: numeric order when every level is a number, else as found).

    Examples
    --------
    >>> d = pl.DataFrame({"scheme": ["s"] * 2, "dimension": ["x"] * 2, "rating": ["1", "2"],
    ...                   "n": [1, 3], "share": [0.25, 0.75]})
    >>> wide_shares(d).row(0)
    ('x', 25.0, 75.0)
    """
    keys = [c for c in dist.columns if c not in (S.RATING, "n", "share", "scheme")]
    found = dist.get_column(S.RATING).unique(maintain_order=True).to_list()
    if levels is None:
        try:
            levels = sorted(found, key=float)
        except ValueError:
            levels = found
    levels = [lv for lv in levels if lv in found]
    wide = dist.with_columns((100 * pl.col("share")).round(1).alias("pct")).pivot(
        on=S.RATING, index=keys, values="pct"
    )
    return wide.select(*keys, *levels).fill_null(0.0)


def numeric_summary(ratings: Ratings) -> pl.DataFrame:
    """Per dimension (and rater kind): count, mean, SD and quantiles of the ratings'
    values (first ratings), for scales with many levels or interval scales.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings, IntervalScale
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a"], "rater": ["x", "y"],
    ...                                "rating": [10, 30]}), scale=IntervalScale(0, 100))
    >>> numeric_summary(r).select("n", "mean").row(0)
    (2, 20.0)
    """
    by = [S.DIMENSION] + ([S.RATER_KIND] if S.RATER_KIND in ratings.data.columns else [])
    v = pl.col(S.VALUE)
    return (
        ratings.data.filter(~pl.col(S.REPEAT))
        .group_by(by)
        .agg(
            pl.len().alias("n"),
            v.mean().round(3).alias("mean"),
            v.std().round(3).alias("sd"),
            v.min().alias("min"),
            v.quantile(0.25).alias("q25"),
            v.median().alias("median"),
            v.quantile(0.75).alias("q75"),
            v.max().alias("max"),
        )
        .sort(by)
    )


def _few_levels(ratings: Ratings) -> bool:
    return all(
        isinstance(s, CategoricalScale) and s.n_levels <= MAX_LEVELS_SHOWN
        for s in ratings.scales.values()
    )


def readings(ctx: Context) -> dict[str, Ratings]:
    """The ratings as rated and under each scheme of the options (applied once, kept in
    ``ctx.schemes``)."""
    if not ctx.schemes:
        for s in ctx.options.schemes:
            ctx.schemes[s.name] = s.apply(ctx.ratings)
    return {AS_RATED: ctx.ratings, **ctx.schemes}


def data_section(ctx: Context) -> list[str]:
    """The data summary (counts, scales, cells, raters, exclusions; ``summary_*.csv`` and
    ``summary.json``) and the label distributions (``label_distribution.csv``)."""
    summary = ctx.ratings.summary()
    ctx.folder.csv(summary.cells, "summary_cells.csv")
    ctx.folder.csv(summary.raters, "summary_raters.csv")
    ctx.folder.json(summary.to_dict(), "summary.json")
    lines = [
        summary.to_markdown()
        .replace("# Data summary", "## Data summary", 1)
        .replace("\n## ", "\n### "),
    ]
    views = readings(ctx)
    by_kind = " and rater kind" if S.RATER_KIND in ctx.ratings.data.columns else ""
    dists, blocks = [], []
    for name, r in views.items():
        if _few_levels(r):
            dist = label_distribution(r, name)
            dists.append(dist)
            table = markdown_table(wide_shares(dist, level_order(r)))
            blocks.append(f"**{escape_markdown(name)}** (% of ratings)\n\n{table}\n")
        else:
            table = markdown_table(numeric_summary(r))
            blocks.append(
                f"**{escape_markdown(name)}** (values: more than {MAX_LEVELS_SHOWN} levels or "
                f"an interval scale)\n\n{table}\n"
            )
    if dists:
        ctx.folder.csv(pl.concat(dists, how="diagonal_relaxed"), "label_distribution.csv")
    schemes = "".join(
        f"- **{escape_markdown(s.name)}**: {escape_markdown(s.describe())}\n"
        for s in ctx.options.schemes
    )
    lines += [
        "## Label distributions",
        "",
        f"First ratings only; shares within dimension{by_kind}."
        + (" The rating schemes:" if schemes else ""),
        "",
        *([schemes] if schemes else []),
        *blocks,
        "",
    ]
    return lines


def data_applies(ctx: Context) -> str | None:
    """The data section always applies."""
    return None


__all__ = [
    "AS_RATED",
    "MAX_LEVELS_SHOWN",
    "data_applies",
    "data_section",
    "label_distribution",
    "level_order",
    "numeric_summary",
    "readings",
    "wide_shares",
]
