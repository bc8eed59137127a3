"""The intra-rater section: how often raters give a repeated unit the same rating again
(and Cohen's kappa between first and repeated ratings), per design and dimension."""

from __future__ import annotations

import polars as pl

from raterstats.analyze.context import Context
from raterstats.formatting import markdown_table


def intra_rater_section(ctx: Context) -> list[str]:
    """Intra-rater reliability from the repeats (``intra_rater.csv``)."""
    from raterstats.design import intra_rater_by_design

    intra = intra_rater_by_design(ctx.ratings)
    ctx.folder.csv(intra, "intra_rater.csv")
    who = "human raters" if "human" in ctx.rater_kinds else "raters"
    return [
        "## Intra-rater reliability (repeats)",
        "",
        f"Repeated ratings of the {who}: the share of repeat pairs given the same rating "
        "(`percent`) and Cohen's kappa between the earlier and the later rating (`kappa`), "
        "with the number of pairs.",
        "",
        markdown_table(intra.with_columns(pl.col("percent", "kappa").round(3))),
        "",
    ]


def intra_rater_applies(ctx: Context) -> str | None:
    """Intra-rater reliability needs repeated ratings."""
    if ctx.n_repeats == 0:
        return (
            "the data have no repeated ratings (a rater rating the same unit again; a "
            "repeat column, or --duplicates repeat)"
        )
    return None


__all__ = ["intra_rater_applies", "intra_rater_section"]
