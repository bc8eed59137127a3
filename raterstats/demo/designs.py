"""The demo's design section: reliability by design (rater model and posterior predictive
agreement), partial annotation, the annotation budget, intra-rater reliability and the LLM
judge."""

from __future__ import annotations

import polars as pl
import xarray as xr

from raterstats.demo.folder import ReportFolder
from raterstats.demo.study import LEVELS_5_TO_3
from raterstats.demo.tables import format_interval
from raterstats.formatting import markdown_table
from raterstats.ratings import Ratings

#: posterior predictive replicates of the design comparison
N_REPLICATES = 100
#: simulated studies per point of the annotation-budget projection
N_BUDGET_SIMS = 200


def _reliability_by_design(
    dt: xr.DataTree, *, random_seed: int, ci_prob: float, out: ReportFolder
) -> list[str]:
    from raterstats.design import compare_designs, design_table
    from raterstats.plots import agreement_bars

    cmp = compare_designs(
        dt,
        n_replicates=N_REPLICATES,
        level_map=LEVELS_5_TO_3,
        ci_prob=ci_prob,
        random_seed=random_seed,
    )
    tab = design_table(cmp)
    out.csv(tab, "design_comparison.csv")
    reliability_bars = xr.Dataset(
        {
            "estimate": cmp["reliability"],
            "ci_low": cmp["reliability_low"],
            "ci_high": cmp["reliability_high"],
        },
        attrs={"ci_prob": cmp.attrs["ci_prob"]},
    ).expand_dims(statistic=["reliability"])
    out.figure(
        agreement_bars(
            reliability_bars,
            "reliability",
            hue="design",
            interval="posterior",
            title="Model-implied reliability by design",
        ),
        "reliability_by_design.png",
    )
    p_rows = []
    for dim in cmp["dimension"].values:
        sel = {"dimension": dim, "design": "fine", "design_b": "coarse"}
        p_rows.append(
            {
                "dimension": str(dim),
                "P(reliability fine > coarse)": round(float(cmp["p_more_reliable"].sel(sel)), 3),
                "P(kappa fine > coarse)": round(float(cmp["p_kappa_higher"].sel(sel)), 3),
                "P(alpha fine > coarse)": round(float(cmp["p_alpha_higher"].sel(sel)), 3),
            }
        )
    show = tab.select(
        "dimension",
        "design",
        format_interval(
            None, mean="reliability", low="reliability_low", high="reliability_high"
        ).alias("model reliability"),
        format_interval(None, mean="kappa_mean", low="kappa_low", high="kappa_high").alias(
            "predicted kappa"
        ),
        pl.col("kappa_observed").alias("observed kappa"),
        format_interval(None, mean="alpha_mean", low="alpha_low", high="alpha_high").alias(
            "predicted alpha"
        ),
        pl.col("alpha_observed").alias("observed alpha"),
    )
    return [
        "### Reliability by design",
        "",
        "Model-implied reliability (share of latent variance due to the rated unit, "
        "physicians) and posterior predictive Randolph's kappa and Krippendorff's alpha "
        f"(ordinal) on the collapsed 3-point scale, from {N_REPLICATES} replicated studies "
        "(units: answers for coarse, sentences for fine; "
        f"{100 * float(cmp.attrs['ci_prob']):g}% intervals), next to the observed values.",
        "",
        "![Model-implied reliability by design](reliability_by_design.png)",
        "",
        markdown_table(show),
        "",
        markdown_table(pl.DataFrame(p_rows)),
        "",
    ]


def _partial_annotation(
    humans: Ratings, dt: xr.DataTree | None, *, random_seed: int, out: ReportFolder
) -> list[str]:
    from raterstats.design import partial_annotation, reliability_projection
    from raterstats.plots import partial_annotation_curves

    part = partial_annotation(humans, random_seed=random_seed)
    pa_frame = pl.from_pandas(part.drop_vars("variance_full").to_dataframe().reset_index())
    out.csv(pa_frame, "partial_annotation.csv")
    proj = None
    if dt is not None:
        proj = reliability_projection(dt, n_raters=[1], n_sentences=part["k"].values).sel(
            design="fine"
        )
    out.figure(
        partial_annotation_curves(part, proj, title="Partial annotation (fine design)"),
        "partial_annotation.png",
    )
    pa_tab = pa_frame.select(
        "dimension",
        "k",
        format_interval(3, mean="spearman_mean", low="spearman_low", high="spearman_high").alias(
            "Spearman with full score"
        ),
        format_interval(3, mean="variance_mean", low="variance_low", high="variance_high").alias(
            "inter-rater variance"
        ),
    ).sort("dimension", "k")
    return [
        "### Partial annotation",
        "",
        "Answer scores from k randomly chosen rated sentences (the same for all raters of "
        f"the answer), {part.attrs['n_subsets']} random subsets: Spearman with the full (all "
        "rated sentences) score and the variance across raters, mean and "
        f"{100 * float(part.attrs['ci_prob']):g}% interval; the right panel is the rater "
        "model's reliability of a one-rater k-sentence answer score.",
        "",
        "![Partial annotation](partial_annotation.png)",
        "",
        markdown_table(pa_tab),
        "",
    ]


def _budget(dt: xr.DataTree, ratings: Ratings, *, random_seed: int, out: ReportFolder) -> list[str]:
    from raterstats.design import annotation_budget, cheapest_design
    from raterstats.plots import budget_curve

    budget = annotation_budget(
        dt, ratings, n_sims=N_BUDGET_SIMS, max_workers=1, random_seed=random_seed
    )
    bud_frame = pl.from_pandas(
        budget[["reliability", "p_recovered", "expected_tau"]].to_dataframe().reset_index()
    ).join(
        pl.from_pandas(budget["cost_hours"].to_dataframe().reset_index()),
        on=["design", "n_raters", "k"],
    )
    out.csv(bud_frame, "annotation_budget.csv")
    out.figure(budget_curve(budget, on="reliability"), "budget_reliability.png")
    out.figure(budget_curve(budget, on="p_recovered"), "budget_ranking.png")
    cheap = pl.concat(
        [
            cheapest_design(budget, target=0.8, on="reliability"),
            cheapest_design(budget, target=0.9, on="p_recovered"),
        ]
    )
    out.csv(cheap, "cheapest_designs.csv")
    return [
        "### Annotation budget",
        "",
        "Projected from the rater model for 1-5 physicians per answer and, for the fine "
        "design, 1-6 sentences per answer: reliability of the answer score (closed form, "
        f"posterior mean) and, from {budget.attrs['n_sims']} simulated studies per point, "
        "the probability that the study's system ranking is the true one and the expected "
        "Kendall tau with it; cost in physician hours from the measured durations "
        f"(seconds per unit: {budget.attrs['seconds_per_unit']}). The true ranking is "
        "that of the answers' latent quality; coarse ratings also reward longer answers "
        "(the length effect above), so more coarse raters converge on the length-biased "
        "ranking rather than on the true one.",
        "",
        "![Projected reliability against cost](budget_reliability.png)",
        "",
        "![Projected ranking certainty against cost](budget_ranking.png)",
        "",
        "Cheapest design reaching each target (reliability >= 0.8; P(true ranking) >= "
        "0.9; 'all dimensions': the worst dimension reaches it; a dimension is missing "
        "when no projected design reaches the target):",
        "",
        markdown_table(cheap.with_columns(pl.col("value", "cost_hours").round(3))),
        "",
    ]


def _judge_vs_experts(dt: xr.DataTree, *, ci_prob: float, out: ReportFolder) -> list[str]:
    from raterstats.design import judge_vs_experts

    jv = judge_vs_experts(dt, ci_prob=ci_prob)
    out.csv(jv, "judge_vs_experts.csv")
    judge, human = ~pl.col("is_human"), pl.col("is_human")
    summ = (
        jv.group_by("dimension", "design")
        .agg(
            pl.col("discrimination").filter(judge).first().round(2).alias("judge discrimination"),
            pl.col("discrimination").filter(human).min().round(2).alias("physicians min"),
            pl.col("discrimination").filter(human).max().round(2).alias("physicians max"),
            pl.col("discrimination_rank").filter(judge).first().alias("judge rank"),
            pl.col("severity").filter(judge).first().round(2).alias("judge severity"),
        )
        .sort("dimension", "design")
    )
    return [
        "Rater-model discrimination (reliability) and severity of the judge against the "
        "physicians' (`judge_vs_experts.csv`; rank 1 = most discriminating of 7).",
        "",
        markdown_table(summ),
        "",
    ]


def design_section(
    ratings: Ratings,
    dt: xr.DataTree | None,
    *,
    random_seed: int,
    ci_prob: float,
    out: ReportFolder,
    projections: bool,
) -> list[str]:
    """Design comparison: reliability by design (rater model and posterior predictive
    agreement), partial annotation, the annotation budget, intra-rater reliability and
    the LLM judge.

    Parameters
    ----------
    ratings : Ratings
        The built-in study.
    dt : xr.DataTree or None
        The ordinal fit; ``None`` leaves out what needs it.
    random_seed : int
        Seed of the replicated and simulated studies and the random subsets.
    ci_prob : float
        Probability of the posterior intervals.
    out : ReportFolder
        Receives the tables and figures.
    projections : bool
        Add the simulation-based annotation budget (needs ``dt``).

    Returns
    -------
    list of str
        The section's Markdown lines.
    """
    from raterstats.design import intra_rater_by_design, judge_agreement

    lines = ["## Annotation designs", ""]
    humans = ratings.filter(rater_kind="human")
    if dt is not None:
        lines += _reliability_by_design(dt, random_seed=random_seed, ci_prob=ci_prob, out=out)
    lines += _partial_annotation(humans, dt, random_seed=random_seed, out=out)
    if dt is not None and projections:
        lines += _budget(dt, ratings, random_seed=random_seed, out=out)
    intra = intra_rater_by_design(humans)
    out.csv(intra, "intra_rater.csv")
    judge = judge_agreement(ratings, level_map=LEVELS_5_TO_3)
    out.csv(judge, "judge_agreement.csv")
    lines += [
        "### Intra-rater reliability (repeats)",
        "",
        markdown_table(intra.with_columns(pl.col("percent", "kappa").round(3))),
        "",
        "### The LLM judge",
        "",
        "Randolph's kappa between the judge and the rounded mean physician rating per unit "
        "(3-point scale).",
        "",
        markdown_table(judge.with_columns(pl.col("randolph_kappa", "exact_agreement").round(3))),
        "",
    ]
    if dt is not None:
        lines += _judge_vs_experts(dt, ci_prob=ci_prob, out=out)
    return lines


__all__ = ["N_BUDGET_SIMS", "N_REPLICATES", "design_section"]
