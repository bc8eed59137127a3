"""The LLM-judge section: each non-human rater (``rater_kind`` other than ``human``)
against the human raters: Randolph's kappa with the rounded mean human rating per unit and,
from the ordinal rater model, the judge's discrimination and severity among the humans'."""

from __future__ import annotations

import polars as pl

from raterstats.analyze.context import Context
from raterstats.analyze.designs import collapse_map
from raterstats.analyze.health import banners
from raterstats.formatting import markdown_table


def judge_section(ctx: Context) -> list[str]:
    """Agreement of each judge with the mean human rating (``judge_agreement.csv``) and,
    with an ordinal fit, judge against humans (``judge_vs_experts.csv``)."""
    from raterstats.design import judge_agreement, judge_vs_experts

    level_map = collapse_map(ctx, by="value")
    parts = []
    for j in ctx.judges:
        t = judge_agreement(ctx.ratings, judge=j, level_map=level_map)
        parts.append(t.with_columns(pl.lit(j).alias("judge")).select("judge", *t.columns))
    table = pl.concat(parts, how="diagonal_relaxed")
    ctx.folder.csv(table, "judge_agreement.csv")
    scale = f" ({ctx.options.collapse} scale)" if level_map else ""
    lines = [
        "## LLM judges",
        "",
        "Randolph's kappa between each judge and the rounded mean human rating per unit"
        f"{scale}, and the share of units where they are equal.",
        "",
        markdown_table(table.with_columns(pl.col("randolph_kappa", "exact_agreement").round(3))),
        "",
    ]
    fit_ = ctx.ordinal_fit
    is_human = None if fit_ is None else fit_.dt["constant_data"].to_dataset()["rater_is_human"]
    if fit_ is not None and is_human is not None and not bool(is_human.values.all()):
        jv = judge_vs_experts(fit_.dt, ci_prob=ctx.ci_prob, raters=ctx.rater_table_of(fit_.dt))
        ctx.folder.csv(jv, "judge_vs_experts.csv")
        judge, human = ~pl.col("is_human"), pl.col("is_human")
        n = int(jv.group_by("dimension", "design").len()["len"].max())  # type: ignore[arg-type]
        summ = (
            jv.filter(judge)
            .join(
                jv.filter(human)
                .group_by("dimension", "design")
                .agg(
                    pl.col("discrimination").min().round(2).alias("humans min"),
                    pl.col("discrimination").max().round(2).alias("humans max"),
                ),
                on=["dimension", "design"],
            )
            .select(
                pl.col("rater").alias("judge"),
                "dimension",
                "design",
                pl.col("discrimination").round(2).alias("judge discrimination"),
                "humans min",
                "humans max",
                pl.col("discrimination_rank").alias("judge rank"),
                pl.col("severity").round(2).alias("judge severity"),
            )
            .sort("judge", "dimension", "design")
        )
        lines += [
            "Rater-model discrimination (reliability) and severity of each judge against "
            f"the human raters' (`judge_vs_experts.csv`; rank 1 = most discriminating of {n}).",
            "",
            *banners(fit_.dt),
            markdown_table(summ),
            "",
        ]
    return lines


def judge_applies(ctx: Context) -> str | None:
    """The judge section needs non-human raters and two human raters."""
    kinds = ctx.rater_kinds
    if not kinds:
        return "the data have no rater_kind column (which raters are humans, which are LLM judges)"
    if not ctx.judges:
        return "every rater is human (rater_kind)"
    if len(kinds.get("human", [])) < 1:
        return (
            f"no human rater to compare the judges with (rater kinds: {', '.join(sorted(kinds))})"
        )
    return None


__all__ = ["judge_applies", "judge_section"]
