"""The demo's categorical section: hierarchical MACE on the collapsed 3-point ratings, its
rater competences and label posteriors."""

from __future__ import annotations

import polars as pl
import xarray as xr

from raterstats.defaults import CHAINS
from raterstats.demo.folder import ReportFolder
from raterstats.demo.tables import format_interval
from raterstats.formatting import escape_markdown, markdown_code_block, markdown_table
from raterstats.ratings import Ratings


def categorical_section(
    ratings: Ratings, *, draws: int, random_seed: int, ci_prob: float, out: ReportFolder
) -> tuple[list[str], xr.DataTree]:
    """Fit hierarchical MACE to the 3-point ratings (answers coarse, sentences fine) and
    lay out rater competence per dimension x design and the label posteriors, with
    diagnostics.

    Parameters
    ----------
    ratings : Ratings
        The built-in study (5-point ratings; collapsed here).
    draws : int
        Draws and tuning steps per chain.
    random_seed : int
        Seed of the fit.
    ci_prob : float
        Probability of the competence intervals.
    out : ReportFolder
        Receives ``mace_competence.csv`` and ``mace_label_posteriors.csv``.

    Returns
    -------
    (lines, fit)
        The section's Markdown lines and the fit.
    """
    from raterstats.diagnostics import diagnose
    from raterstats.models import MACE
    from raterstats.posterior import item_posterior, rater_summary

    three = ratings.collapse("likert5_to_3")
    dt = MACE().fit(
        three, draws=draws, tune=draws, chains=CHAINS, random_seed=random_seed, progress=False
    )
    diag = diagnose(dt, warn=False)
    summ = rater_summary(dt, ci_prob=ci_prob)
    comp = pl.from_pandas(
        summ[["competence_mean", "competence_low", "competence_high", "n_ratings"]]
        .to_dataframe()
        .reset_index()
    )
    out.csv(comp, "mace_competence.csv")
    comp_tab = (
        comp.with_columns(
            format_interval(
                2, mean="competence_mean", low="competence_low", high="competence_high"
            ).alias("value"),
            (pl.col("dimension") + "/" + pl.col("design")).alias("cell"),
        )
        .pivot(on="cell", index="rater", values="value")
        .sort("rater")
    )
    post = item_posterior(dt)
    labels = pl.from_pandas(
        post[["label", "map_prob", "entropy", "n_ratings"]].to_dataframe().reset_index()
    ).filter(pl.col("n_ratings") > 0)
    labels = labels.with_columns(
        pl.when(pl.col("unit_segment") != "")
        .then(pl.lit("fine (sentence)"))
        .otherwise(pl.lit("coarse (answer)"))
        .alias("unit")
    )
    out.csv(labels, "mace_label_posteriors.csv")
    lab_tab = (
        labels.group_by("unit", "dimension")
        .agg(
            pl.len().alias("units"),
            (pl.col("label") == "-1").mean().round(3).alias("share -1"),
            (pl.col("label") == "0").mean().round(3).alias("share 0"),
            (pl.col("label") == "1").mean().round(3).alias("share +1"),
            pl.col("map_prob").mean().round(3).alias("mean P(MAP label)"),
            (pl.col("map_prob") < 0.8).mean().round(3).alias("share P(MAP) < 0.8"),
        )
        .sort("unit", "dimension")
    )
    status = "all checks passed" if diag.ok else escape_markdown("; ".join(diag.problems))
    a = dt.attrs
    md = [
        "## Categorical rater model (hierarchical MACE, 3-point ratings)",
        "",
        "Ratings collapsed to 3 points; hierarchical MACE (MODELS.md section 1): competence "
        "per rater x dimension x design with partial pooling, spam distributions, label "
        "prior; answers are the units of coarse ratings, sentences of fine ratings. NUTS "
        f"({a['sampler']}), {a['chains']} chains x {a['draws']} draws after {a['tune']} "
        f"tuning steps, seed {a['random_seed']}. Diagnostics: {status}.",
        "",
        markdown_code_block(str(diag)),
        "",
        f"### Rater competence (posterior mean, {100 * ci_prob:g}% interval) per dimension "
        "/ design",
        "",
        markdown_table(comp_tab),
        "",
        "### Label posteriors",
        "",
        "Share of units by most probable true label, and how certain the labels are.",
        "",
        markdown_table(lab_tab),
        "",
    ]
    return md, dt


__all__ = ["categorical_section"]
