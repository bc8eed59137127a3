"""LLM judges against experts: the agreement of an automatic judge with the mean expert
(:func:`judge_agreement`) and its severity and discrimination in the ordinal rater model
next to each expert's (:func:`judge_vs_experts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import defaults as D
from raterstats import schema as S
from raterstats.agreement import randolph_kappa
from raterstats.design.compare import check_ordinal_fit
from raterstats.ratings import Ratings


def judge_agreement(
    ratings: Ratings,
    *,
    judge: str = "llm-judge",
    level_map: Mapping[Any, Any] | None = None,
) -> pl.DataFrame:
    """Agreement of an automatic judge with the mean expert, per dimension and design.

    Per unit (answer or sentence), the experts' (human raters') first ratings are
    averaged and rounded to the nearest level; Randolph's kappa is computed between the
    judge's rating and that mean-expert rating (as in the published clinical-QA study).
    ``level_map`` maps the levels first (e.g. the collapsed 3-point scale).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import OrdinalScale, read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a"] * 3 + ["b"] * 3,
    ...     "rater": ["x", "y", "j"] * 2, "rating": [1, 1, 1, 3, 3, 2],
    ...     "rater_kind": ["human", "human", "llm"] * 2}), scale=OrdinalScale([1, 2, 3]))
    >>> judge_agreement(r, judge="j")["randolph_kappa"].to_list()
    [0.25]
    """
    what = "judge_agreement"
    if judge not in ratings.raters:
        raise ValueError(f"{what}: rater {judge!r} is not in the ratings")
    d = ratings.data.filter(~pl.col(S.REPEAT))
    kind = (
        pl.col(S.RATER_KIND) == "human" if S.RATER_KIND in d.columns else pl.col(S.RATER) != judge
    )
    rows = []
    for dim in ratings.dimensions:
        levels = [float(v) for v in ratings.scale_for(dim).values]
        for des in ratings.designs:
            part = d.filter(pl.col(S.DIMENSION) == dim, pl.col(S.DESIGN) == des)
            if level_map is not None:
                lut = {float(k): float(v) for k, v in level_map.items()}
                part = part.with_columns(
                    pl.col(S.VALUE).replace_strict(lut, return_dtype=pl.Float64)
                )
                cats = sorted(set(lut.values()))
            else:
                cats = levels
            unit = [S.ITEM, S.SEGMENT]
            expert = part.filter(kind).group_by(unit).agg(pl.col(S.VALUE).mean().alias("expert"))
            jj = part.filter(pl.col(S.RATER) == judge).select(*unit, pl.col(S.VALUE).alias("judge"))
            both = expert.join(jj, on=unit, nulls_equal=True)
            if both.height == 0:
                continue
            grid = np.asarray(cats)
            e = both["expert"].to_numpy()
            rounded = grid[np.argmin(np.abs(e[:, None] - grid[None, :]), axis=1)]
            mat = np.column_stack([rounded, both["judge"].to_numpy()])
            rows.append(
                {
                    "dimension": dim,
                    "design": des,
                    "n_units": both.height,
                    "randolph_kappa": randolph_kappa(mat, categories=list(cats)),
                    "exact_agreement": float(np.mean(mat[:, 0] == mat[:, 1])),
                }
            )
    return pl.DataFrame(rows)


def judge_vs_experts(
    dt: xr.DataTree, *, ci_prob: float | None = None, raters: xr.Dataset | None = None
) -> pl.DataFrame:
    """The judge's severity and discrimination (reliability) from the ordinal rater
    model next to each expert's, per dimension x design, with the judge's rank among all
    raters on discrimination (1 = most discriminating).

    ``raters``: the fit's :func:`~raterstats.models.ordinal.rater_table` at ``ci_prob``
    when the caller has it already (computed here otherwise).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> from raterstats.models import OrdinalRaters
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=30, tune=30, chains=1, random_seed=1, progress=False)
    >>> judge_vs_experts(dt).columns[:4]
    ['rater', 'dimension', 'design', 'is_human']
    """
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
    from raterstats.models.ordinal import rater_table

    check_ordinal_fit(dt, "judge_vs_experts")
    rt = rater_table(dt, ci_prob=ci_prob) if raters is None else raters
    cols = ["is_human", "severity", "severity_low", "severity_high", "discrimination",
            "discrimination_low", "discrimination_high", "infit"]  # fmt: skip
    frame = pl.from_pandas(rt[cols].to_dataframe().reset_index())
    frame = frame.with_columns(
        pl.col("discrimination")
        .rank("ordinal", descending=True)
        .over("dimension", "design")
        .alias("discrimination_rank")
    )
    return frame.select("rater", "dimension", "design", *cols, "discrimination_rank").sort(
        "dimension", "design", "is_human", "rater"
    )


__all__ = ["judge_agreement", "judge_vs_experts"]
