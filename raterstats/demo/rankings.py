"""The demo's ranking section: the rater model's fair averages (when fitted) next to the
raw-rating baselines, pairwise verdicts, the agreement of the rankings, label
distributions by system and case difficulty."""

from __future__ import annotations

import polars as pl
import xarray as xr

from raterstats.demo.folder import ReportFolder
from raterstats.formatting import markdown_table
from raterstats.ratings import Ratings

#: posterior draws compared by the ranking-agreement table
AGREEMENT_DRAWS = 500


def _interval_text(ra: xr.Dataset, k: int) -> str:
    return f"{float(ra['mean'][k]):.2f} [{float(ra['low'][k]):.2f}, {float(ra['high'][k]):.2f}]"


def _model_figures_and_tables(
    model: xr.Dataset,
    base_mean: xr.Dataset,
    *,
    random_seed: int,
    ci_prob: float,
    out: ReportFolder,
) -> list[str]:
    """Rank-probability and score figures, pairwise verdicts and ranking agreement of the
    rater model's ranking."""
    from raterstats.plots import rank_heatmap, scores_by_design
    from raterstats.ranking import ranking_agreement

    # the fair averages of both designs are the same increasing function of the
    # latent system effect, so both designs have the same rank probabilities
    out.figure(
        rank_heatmap(
            model.isel(design=0, drop=True),
            title="Rank probabilities (rater model; the same for both designs)",
        ),
        "rank_probabilities.png",
    )
    out.figure(
        scores_by_design(model, title="System fair averages by design"),
        "system_scores_by_design.png",
    )
    verdicts = pl.from_pandas(
        model[["p_better", "diff_mean", "diff_low", "diff_high", "verdict"]]
        .to_dataframe()
        .reset_index()
    )
    order = {str(s): i for i, s in enumerate(model["system"].values)}
    verdicts = verdicts.filter(
        pl.col("system").replace_strict(order) < pl.col("system_b").replace_strict(order)
    )
    out.csv(verdicts, "ranking_pairs.csv")
    agree_rows = []
    for dim in model["dimension"].values:
        for des in model["design"].values:
            ra = ranking_agreement(
                model.sel(dimension=dim, design=des),
                base_mean.sel(dimension=dim),
                statistics=["kendall_tau_b", "spearman_rho"],
                ci_prob=ci_prob,
                max_draws=AGREEMENT_DRAWS,
                random_seed=random_seed,
            )
            agree_rows.append(
                {
                    "dimension": str(dim),
                    "design": str(des),
                    "Kendall tau-b": _interval_text(ra, 0),
                    "Spearman": _interval_text(ra, 1),
                }
            )
    return [
        "![Rank probabilities](rank_probabilities.png)",
        "",
        "![System fair averages by design](system_scores_by_design.png)",
        "",
        "### Pairwise comparisons (rater model)",
        "",
        markdown_table(
            verdicts.select("dimension", "design", "verdict").sort("dimension", "design")
        ),
        "",
        "### Agreement of the rater-model ranking with the raw mean-score ranking",
        "",
        "Kendall tau-b and Spearman between the two rankings over posterior draws and "
        f"bootstrap replicates (mean and {100 * ci_prob:g}% interval).",
        "",
        markdown_table(pl.DataFrame(agree_rows)),
        "",
    ]


def ranking_section(
    ratings: Ratings,
    dt: xr.DataTree | None,
    *,
    n_boot: int,
    random_seed: int,
    ci_prob: float,
    out: ReportFolder,
) -> list[str]:
    """System rankings: the rater model's fair averages (when fitted) and the raw-rating
    baselines (mean score and majority vote of the physicians' whole-answer ratings).

    Parameters
    ----------
    ratings : Ratings
        The built-in study.
    dt : xr.DataTree or None
        The ordinal fit, or ``None`` for the baselines only.
    n_boot : int
        Case-bootstrap replicates of the baselines.
    random_seed : int
        Seed of the bootstraps and tie-breaking.
    ci_prob : float
        Probability of the intervals.
    out : ReportFolder
        Receives the ranking tables and figures.

    Returns
    -------
    list of str
        The section's Markdown lines.
    """
    from raterstats.descriptive import case_difficulty, label_distributions
    from raterstats.ranking import compare_rankings, rank_systems

    coarse = ratings.filter(design="coarse", rater_kind="human")
    lines = ["## System rankings", ""]
    base = {
        m: rank_systems(coarse, method=m, n_boot=n_boot, ci_prob=ci_prob, random_seed=random_seed)
        for m in ("mean", "majority")
    }
    model = None if dt is None else rank_systems(dt, ci_prob=ci_prob, random_seed=random_seed)
    sources: dict[str, xr.Dataset] = {} if model is None else {"rater model": model}
    sources.update({f"raw {m} (coarse)": ds for m, ds in base.items()})
    table = compare_rankings(sources, digits=None)  # the CSV unrounded
    out.csv(table, "rankings.csv")
    wide = (
        table.with_columns(
            pl.format(
                "{} [{}, {}] (E rank {})",
                pl.col("score_mean").round(2),
                pl.col("score_low").round(2),
                pl.col("score_high").round(2),
                pl.col("expected_rank").round(2),
            ).alias("value")
        )
        .pivot(on="system", index=["dimension", "source"], values="value")
        .sort("dimension", "source")
    )
    lines += [
        f"Scores per system and dimension with {100 * ci_prob:g}% intervals and the expected "
        "rank. The rater model ranks by its fair averages (expected rating of a typical "
        "physician on an average question, per design; posterior draws); the baselines rank "
        "by the physicians' whole-answer ratings (mean score, and the score of each answer's "
        f"majority rating) with a bootstrap over questions ({n_boot} replicates).",
        "",
        markdown_table(wide),
        "",
    ]
    if model is not None:
        lines += _model_figures_and_tables(
            model, base["mean"], random_seed=random_seed, ci_prob=ci_prob, out=out
        )
    dist = label_distributions(coarse.collapse("likert5_to_3"))
    out.csv(dist, "label_distribution_by_system.csv")
    dist_wide = (
        dist.with_columns((100 * pl.col("share")).round(1).alias("pct"))
        .pivot(on="rating", index=["dimension", "system", "aggregation"], values="pct")
        .fill_null(0.0)
        .sort("dimension", "system", "aggregation")
    )
    lines += [
        "### Label distributions by system (whole answers, 3-point scale)",
        "",
        "% of labels per system: every physician rating (`all ratings`) and one label per "
        "answer, its most frequent rating (`majority`).",
        "",
        markdown_table(dist_wide.select("dimension", "system", "aggregation", "-1", "0", "1")),
        "",
    ]
    cases = case_difficulty(coarse)
    out.csv(cases, "case_difficulty.csv")
    prof = cases.group_by("dimension").agg(
        pl.col("mean").mean().round(2).alias("mean score"),
        pl.col("mean").std().round(2).alias("sd of case means"),
        pl.col("sd_across_systems").mean().round(2).alias("mean sd across systems"),
        pl.col("question").first().alias("hardest case"),
    )
    lines += [
        "### Case difficulty (whole-answer ratings)",
        "",
        "Per question: mean physician score over the three systems' answers and the spread "
        "across systems (`case_difficulty.csv`).",
        "",
        markdown_table(prof.sort("dimension")),
        "",
    ]
    return lines


__all__ = ["AGREEMENT_DRAWS", "ranking_section"]
