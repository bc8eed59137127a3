"""The rating schemes of the clinical-QA studies and the label distributions under them:
what the demo reads from the built-in study before any statistic."""

from __future__ import annotations

import polars as pl

from raterstats import schema as S
from raterstats.ratings import Ratings

#: Fine-binary rule per dimension used by the clinical-QA studies: an answer is correct if no
#: sentence is rated incorrect; relevant / safe (communicates risks) if at least one sentence is.
FINE_BINARY_RULES = {
    "correctness": "any_negative",
    "relevance": "any_positive",
    "safety": "any_positive",
}

#: Agreement statistics of the demo (the published study reports Randolph's kappa).
DEMO_STATISTICS = (
    "percent_agreement",
    "randolph_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "intra_rater_agreement",
)

#: Collapsed 3-point scale of the published agreement analysis, as a map of the 5 levels.
LEVELS_5_TO_3 = {1: -1, 2: -1, 3: 0, 4: 1, 5: 1}


def schemes(ratings: Ratings) -> dict[str, Ratings]:
    """The three rating schemes of the clinical-QA studies, from the raw study.

    ``coarse 3-point``: whole-answer ratings collapsed to 3 points; ``fine 3-point``:
    sentence ratings collapsed to 3 points; ``fine binary``: sentence ratings aggregated to
    one 0/1 rating per answer by :data:`FINE_BINARY_RULES`.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> sorted(schemes(clinical_qa_study(n_questions=4, random_seed=1).ratings))
    ['coarse 3-point', 'fine 3-point', 'fine binary']
    """
    coarse = ratings.filter(design="coarse")
    fine = ratings.filter(design="fine")
    return {
        "coarse 3-point": coarse.collapse("likert5_to_3"),
        "fine 3-point": fine.collapse("likert5_to_3"),
        "fine binary": fine.aggregate_segments(FINE_BINARY_RULES),
    }


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


def wide_shares(dist: pl.DataFrame) -> pl.DataFrame:
    """A :func:`label_distribution` with one column per rating level (shares in %), for
    reading; a level nobody used in a cell is 0 %.

    Examples
    --------
    >>> d = pl.DataFrame({"scheme": ["s"] * 2, "dimension": ["x"] * 2, "rating": ["1", "2"],
    ...                   "n": [1, 3], "share": [0.25, 0.75]})
    >>> wide_shares(d).row(0)
    ('x', 25.0, 75.0)
    """
    keys = [c for c in dist.columns if c not in (S.RATING, "n", "share", "scheme")]
    levels = sorted(dist.get_column(S.RATING).unique().to_list(), key=float)
    wide = dist.with_columns((100 * pl.col("share")).round(1).alias("pct")).pivot(
        on=S.RATING, index=keys, values="pct"
    )
    # the levels are those of this scheme's scale
    return wide.select(*keys, *levels).fill_null(0.0)


__all__ = [
    "DEMO_STATISTICS",
    "FINE_BINARY_RULES",
    "LEVELS_5_TO_3",
    "label_distribution",
    "schemes",
    "wide_shares",
]
