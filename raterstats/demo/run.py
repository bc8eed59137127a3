"""The demo analysis of the built-in clinical-QA study (``raterstats demo``).

It reads the shipped study, and writes a report folder with every analysis the package
offers so far: the data summary, the label distributions under the scale maps of the
clinical-QA studies (5-point, collapsed 3-point, fine binary), and the classical agreement
among the physicians per dimension and scheme with bootstrap intervals (table and bar
chart), each as Markdown plus CSV / PNG.
Library code does not print: progress goes through the ``progress`` callback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import xarray as xr
from matplotlib.figure import Figure

from raterstats import schema as S
from raterstats.agreement import agreement, agreement_table
from raterstats.datasets import DATASETS, load_clinical_qa
from raterstats.formatting import markdown_table
from raterstats.plots import (
    agreement_bars,
    budget_curve,
    partial_annotation_curves,
    rank_heatmap,
    scores_by_design,
)
from raterstats.ratings import Ratings
from raterstats.report import methods_paragraph
from raterstats.report import report as write_html_report
from raterstats.version import __version__

#: Fine-binary rule per dimension used by the clinical-QA studies: an answer is correct if no
#: sentence is rated incorrect; relevant / safe (communicates risks) if at least one sentence is.
FINE_BINARY_RULES = {
    "correctness": "any_negative",
    "relevance": "any_positive",
    "safety": "any_positive",
}

Progress = Callable[[str], None]

#: Agreement statistics of the demo (the published study reports Randolph's kappa).
DEMO_STATISTICS = (
    "percent_agreement",
    "randolph_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "intra_rater_agreement",
)


@dataclass
class DemoResult:
    """What the demo wrote: the report folder, its main file and every table file."""

    out: Path
    report: Path
    files: list[Path] = field(default_factory=list)


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
    """Share of each rating per rater kind and dimension (first ratings only)."""
    by = [S.DIMENSION] + ([S.RATER_KIND] if S.RATER_KIND in ratings.data.columns else [])
    d = ratings.data.filter(~pl.col(S.REPEAT))
    counts = d.group_by([*by, S.RATING]).agg(pl.len().alias("n"))
    return (
        counts.with_columns((pl.col("n") / pl.col("n").sum().over(by)).alias("share"))
        .with_columns(pl.lit(scheme).alias("scheme"))
        .select("scheme", *by, S.RATING, "n", "share")
        .sort("scheme", *by, S.RATING)
    )


def _wide_shares(dist: pl.DataFrame) -> pl.DataFrame:
    """Label distribution with one column per rating level (shares in %) for reading."""
    keys = [c for c in dist.columns if c not in (S.RATING, "n", "share", "scheme")]
    levels = sorted(dist.get_column(S.RATING).unique().to_list(), key=float)
    wide = dist.with_columns((100 * pl.col("share")).round(1).alias("pct")).pivot(
        on=S.RATING, index=keys, values="pct"
    )
    # a level nobody used in a cell is 0 %, the levels are those of this scheme's scale
    return wide.select(*keys, *levels).fill_null(0.0)


def _interval_frame(da: xr.DataArray, name: str, prob: float = 0.9) -> pl.DataFrame:
    """Posterior mean and equal-tailed interval of ``da`` (sample dims chain, draw) as a
    tidy frame, one row per remaining coordinate combination."""
    q = (1 - prob) / 2
    stats = xr.Dataset(
        {
            "mean": da.mean(("chain", "draw")),
            "low": da.quantile(q, ("chain", "draw")).drop_vars("quantile"),
            "high": da.quantile(1 - q, ("chain", "draw")).drop_vars("quantile"),
        }
    )
    frame = pl.from_pandas(stats.to_dataframe().reset_index())
    return frame.with_columns(pl.lit(name).alias("quantity"))


def _fmt_interval(
    digits: int | None = 2, *, mean: str = "mean", low: str = "low", high: str = "high"
) -> pl.Expr:
    """The text "mean [low, high]" of three columns, by default those made by
    :func:`_interval_frame`, rounded to ``digits`` (``None``: as they are)."""
    cols = [pl.col(c) for c in (mean, low, high)]
    if digits is not None:
        cols = [c.round(digits) for c in cols]
    return pl.format("{} [{}, {}]", *cols)


def _categorical_section(
    ratings: Ratings, draws: int, random_seed: int, write_csv: Callable[[pl.DataFrame, str], None]
) -> tuple[list[str], xr.DataTree]:
    """Hierarchical MACE on the 3-point ratings (answers coarse, sentences fine): rater
    competence per dimension x design and label posteriors, with diagnostics; the Markdown
    lines and the fit."""
    from raterstats.diagnostics import diagnose
    from raterstats.models import MACE
    from raterstats.posterior import item_posterior, rater_summary

    three = ratings.collapse("likert5_to_3")
    dt = MACE().fit(
        three, draws=draws, tune=draws, chains=4, random_seed=random_seed, progress=False
    )
    diag = diagnose(dt, warn=False)
    summ = rater_summary(dt)
    comp = pl.from_pandas(
        summ[["competence_mean", "competence_low", "competence_high", "n_ratings"]]
        .to_dataframe()
        .reset_index()
    )
    write_csv(comp, "mace_competence.csv")
    comp_tab = (
        comp.with_columns(
            pl.format(
                "{} [{}, {}]",
                pl.col("competence_mean").round(2),
                pl.col("competence_low").round(2),
                pl.col("competence_high").round(2),
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
        pl.when(pl.col("item").str.contains("::"))
        .then(pl.lit("fine (sentence)"))
        .otherwise(pl.lit("coarse (answer)"))
        .alias("unit")
    )
    write_csv(labels, "mace_label_posteriors.csv")
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
    status = "all checks passed" if diag.ok else "; ".join(diag.problems)
    md = [
        "## Categorical rater model (hierarchical MACE, 3-point ratings)",
        "",
        "Ratings collapsed to 3 points; hierarchical MACE (MODELS.md section 1): competence "
        "per rater x dimension x design with partial pooling, spam distributions, label "
        "prior; answers are the units of coarse ratings, sentences of fine ratings. NUTS "
        f"(nutpie), 4 chains x {draws} draws after {draws} tuning steps, seed {random_seed}. "
        f"Diagnostics: {status}.",
        "",
        "```text",
        str(diag),
        "```",
        "",
        "### Rater competence (posterior mean, 90% interval) per dimension / design",
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


def _fit_ordinal(ratings: Ratings, draws: int, random_seed: int) -> xr.DataTree:
    """The ordinal rater model of the demo, fitted once and shared by its sections."""
    from raterstats.models.ordinal import OrdinalRaters

    return OrdinalRaters().fit(
        ratings, draws=draws, tune=draws, chains=4, random_seed=random_seed, progress=False
    )


def _ordinal_section(
    dt: xr.DataTree, draws: int, random_seed: int, write_csv: Callable[[pl.DataFrame, str], None]
) -> list[str]:
    """Lay out the results of the fitted OrdinalRaters model (tables + Markdown)."""
    import arviz_stats as azs

    from raterstats.models.ordinal import (
        DIAGNOSED_PARAMETERS,
        length_contrast,
        prob_more_reliable,
        rater_table,
        reliability,
        system_scores,
    )

    post = dt["posterior"].to_dataset()
    with np.errstate(invalid="ignore", divide="ignore"):
        diag = azs.summary(post[[n for n in DIAGNOSED_PARAMETERS if n in post]], kind="diagnostics")
    n_div = int(dt["sample_stats"]["diverging"].sum())
    fair = _interval_frame(system_scores(dt)["fair_average"], "fair average")
    fair_tab = (
        fair.with_columns(_fmt_interval().alias("value"))
        .pivot(on="system", index=["dimension", "design"], values="value")
        .sort("dimension", "design")
    )
    write_csv(fair.drop("quantity"), "ordinal_fair_averages.csv")
    rel = _interval_frame(reliability(dt), "reliability")
    rel_tab = (
        rel.with_columns(_fmt_interval().alias("value"))
        .pivot(on="design", index="dimension", values="value")
        .sort("dimension")
    )
    p_fine = prob_more_reliable(dt, "fine", "coarse")
    rel_tab = rel_tab.with_columns(
        pl.col("dimension")
        .replace_strict(
            {str(d): round(float(p_fine.sel(dimension=d)), 3) for d in p_fine.dimension.values}
        )
        .alias("P(fine > coarse)")
    )
    write_csv(rel.drop("quantity"), "ordinal_reliability.csv")
    lc = length_contrast(dt)
    len_frame = pl.concat(
        [
            _interval_frame(lc["length_effect"], "length effect").with_columns(
                pl.col("design").cast(pl.String)
            ),
            _interval_frame(lc["contrast"], "coarse - fine").with_columns(
                pl.lit("coarse - fine").alias("design")
            ),
        ],
        how="diagonal_relaxed",
    )
    write_csv(len_frame, "ordinal_length_effect.csv")
    len_tab = (
        len_frame.with_columns(_fmt_interval().alias("value"))
        .pivot(on="design", index="dimension", values="value")
        .sort("dimension")
    )
    rt = rater_table(dt)
    rt_frame = pl.from_pandas(
        rt[
            [
                "severity",
                "severity_low",
                "severity_high",
                "discrimination",
                "discrimination_low",
                "discrimination_high",
                "infit",
                "outfit",
                "n_ratings",
            ]
        ]
        .to_dataframe()
        .reset_index()
    )
    write_csv(rt_frame, "ordinal_rater_table.csv")
    rt_tab = rt_frame.select(
        "rater",
        "dimension",
        "design",
        _fmt_interval(2, mean="severity", low="severity_low", high="severity_high").alias(
            "severity (logits)"
        ),
        _fmt_interval(
            2, mean="discrimination", low="discrimination_low", high="discrimination_high"
        ).alias("discrimination"),
        pl.col("infit").round(2),
        pl.col("outfit").round(2),
        "n_ratings",
    ).sort("dimension", "design", "rater")
    sep = rt[["separation", "separation_reliability"]].to_dataframe().reset_index()
    return [
        "## Ordinal rater model",
        "",
        "`OrdinalRaters()` (MODELS.md section 3: latent answer quality with system and "
        "question effects, sentence deviations for fine ratings, rater severity and "
        "discrimination per dimension x design, length effect per dimension x design, the "
        "LLM judge with its own parameters) fitted by NUTS (nutpie), 4 chains x "
        f"{draws} draws after {draws} tuning steps, seed {random_seed}. Diagnostics over "
        f"{len(diag)} reported parameters: {n_div} divergences, max R-hat "
        f"{float(diag['r_hat'].max()):.3f}, min bulk ESS {float(diag['ess_bulk'].min()):.0f}, "
        f"min tail ESS {float(diag['ess_tail'].min()):.0f}."
        + (
            " These miss the usual thresholds (no divergences, R-hat <= 1.01, bulk ESS >= "
            "400): the demo's run is shortened (`--ordinal-draws`); the model's defaults "
            "(4 chains x 2,000 draws) meet them on this study (benchmarks/RESULTS.md)."
            if n_div > 0 or float(diag["r_hat"].max()) > 1.01 or float(diag["ess_bulk"].min()) < 400
            else ""
        )
        + " Intervals: 90% equal-tailed.",
        "",
        "### System fair averages (expected rating by a typical physician, average question)",
        "",
        markdown_table(fair_tab),
        "",
        "### Model-implied reliability by design",
        "",
        markdown_table(rel_tab),
        "",
        "### Length effect (logits per SD of log length) and the coarse - fine contrast",
        "",
        markdown_table(len_tab),
        "",
        "### Rater table (many-facet Rasch vocabulary)",
        "",
        "Rater separation reliability per dimension and design: "
        + ", ".join(
            f"{r.dimension}/{r.design} {r.separation_reliability:.2f}" for r in sep.itertuples()
        ),
        "",
        markdown_table(rt_tab),
        "",
    ]


SaveFig = Callable[[Figure, str], None]
WriteCsv = Callable[[pl.DataFrame, str], None]

#: Collapsed 3-point scale of the published agreement analysis, as a map of the 5 levels.
LEVELS_5_TO_3 = {1: -1, 2: -1, 3: 0, 4: 1, 5: 1}


def _ranking_section(
    ratings: Ratings,
    dt: xr.DataTree | None,
    n_boot: int,
    random_seed: int,
    write_csv: WriteCsv,
    save_fig: SaveFig,
) -> list[str]:
    """System rankings: the rater model's fair averages (when fitted) and the raw-rating
    baselines (mean score and majority vote of the physicians' whole-answer ratings)."""
    from raterstats.ranking import (
        case_difficulty,
        compare_rankings,
        label_distributions,
        rank_systems,
        ranking_agreement,
    )

    coarse = ratings.filter(design="coarse", rater_kind="human")
    lines = ["## System rankings", ""]
    base = {
        m: rank_systems(coarse, method=m, n_boot=n_boot, random_seed=random_seed)
        for m in ("mean", "majority")
    }
    model = rank_systems(dt, random_seed=random_seed) if dt is not None else None
    sources: dict[str, xr.Dataset] = {} if model is None else {"rater model": model}
    sources.update({f"raw {m} (coarse)": ds for m, ds in base.items()})
    table = compare_rankings(sources, digits=None)  # the CSV unrounded
    write_csv(table, "rankings.csv")
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
        "Scores per system and dimension with 90% intervals and the expected rank. The rater "
        "model ranks by its fair averages (expected rating of a typical physician on an "
        "average question, per design; posterior draws); the baselines rank by the "
        "physicians' whole-answer ratings (mean score, and the score of each answer's "
        f"majority rating) with a bootstrap over questions ({n_boot} replicates).",
        "",
        markdown_table(wide),
        "",
    ]
    if model is not None:
        # the fair averages of both designs are the same increasing function of the
        # latent system effect, so both designs have the same rank probabilities
        save_fig(
            rank_heatmap(
                model.isel(design=0, drop=True),
                title="Rank probabilities (rater model; the same for both designs)",
            ),
            "rank_probabilities.png",
        )
        save_fig(
            scores_by_design(model, title="System fair averages by design"),
            "system_scores_by_design.png",
        )
        verdicts = pl.from_pandas(
            model[["p_better", "diff_mean", "diff_low", "diff_high", "verdict"]]
            .to_dataframe()
            .reset_index()
        )
        systems = [str(s) for s in model["system"].values]
        verdicts = verdicts.filter(
            pl.col("system").replace_strict({s: i for i, s in enumerate(systems)})
            < pl.col("system_b").replace_strict({s: i for i, s in enumerate(systems)})
        )
        write_csv(verdicts, "ranking_pairs.csv")
        agree_rows = []
        for dim in model["dimension"].values:
            for des in model["design"].values:
                ra = ranking_agreement(
                    model.sel(dimension=dim, design=des),
                    base["mean"].sel(dimension=dim),
                    statistics=["kendall_tau_b", "spearman_rho"],
                    max_draws=500,
                    random_seed=random_seed,
                )
                agree_rows.append(
                    {
                        "dimension": str(dim),
                        "design": str(des),
                        "Kendall tau-b": f"{float(ra['mean'][0]):.2f} "
                        f"[{float(ra['low'][0]):.2f}, {float(ra['high'][0]):.2f}]",
                        "Spearman": f"{float(ra['mean'][1]):.2f} "
                        f"[{float(ra['low'][1]):.2f}, {float(ra['high'][1]):.2f}]",
                    }
                )
        lines += [
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
            "bootstrap replicates (mean and 90% interval).",
            "",
            markdown_table(pl.DataFrame(agree_rows)),
            "",
        ]
    dist = label_distributions(coarse.collapse("likert5_to_3"))
    write_csv(dist, "label_distribution_by_system.csv")
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
    write_csv(cases, "case_difficulty.csv")
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


def _design_section(
    ratings: Ratings,
    dt: xr.DataTree | None,
    random_seed: int,
    write_csv: WriteCsv,
    save_fig: SaveFig,
    *,
    projections: bool,
) -> list[str]:
    """Design comparison: reliability by design (rater model and posterior predictive
    agreement), partial annotation, the annotation budget, intra-rater reliability and
    the LLM judge."""
    from raterstats.design import (
        annotation_budget,
        cheapest_design,
        compare_designs,
        design_table,
        intra_rater_by_design,
        judge_agreement,
        judge_vs_experts,
        partial_annotation,
        reliability_projection,
    )

    lines = ["## Annotation designs", ""]
    humans = ratings.filter(rater_kind="human")
    if dt is not None:
        cmp = compare_designs(
            dt, n_replicates=100, level_map=LEVELS_5_TO_3, random_seed=random_seed
        )
        tab = design_table(cmp)
        write_csv(tab, "design_comparison.csv")
        reliability_bars = xr.Dataset(
            {
                "estimate": cmp["reliability"],
                "ci_low": cmp["reliability_low"],
                "ci_high": cmp["reliability_high"],
            },
            attrs={"ci_prob": cmp.attrs["ci_prob"]},
        ).expand_dims(statistic=["reliability"])
        save_fig(
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
                    "P(reliability fine > coarse)": round(
                        float(cmp["p_more_reliable"].sel(sel)), 3
                    ),
                    "P(kappa fine > coarse)": round(float(cmp["p_kappa_higher"].sel(sel)), 3),
                    "P(alpha fine > coarse)": round(float(cmp["p_alpha_higher"].sel(sel)), 3),
                }
            )
        show = tab.select(
            "dimension",
            "design",
            _fmt_interval(
                None, mean="reliability", low="reliability_low", high="reliability_high"
            ).alias("model reliability"),
            _fmt_interval(None, mean="kappa_mean", low="kappa_low", high="kappa_high").alias(
                "predicted kappa"
            ),
            pl.col("kappa_observed").alias("observed kappa"),
            _fmt_interval(None, mean="alpha_mean", low="alpha_low", high="alpha_high").alias(
                "predicted alpha"
            ),
            pl.col("alpha_observed").alias("observed alpha"),
        )
        lines += [
            "### Reliability by design",
            "",
            "Model-implied reliability (share of latent variance due to the rated unit, "
            "physicians) and posterior predictive Randolph's kappa and Krippendorff's alpha "
            "(ordinal) on the collapsed 3-point scale, from 100 replicated studies "
            "(units: answers for coarse, sentences for fine; 90% intervals), next to the "
            "observed values.",
            "",
            "![Model-implied reliability by design](reliability_by_design.png)",
            "",
            markdown_table(show),
            "",
            markdown_table(pl.DataFrame(p_rows)),
            "",
        ]
    part = partial_annotation(humans, random_seed=random_seed)
    pa_frame = pl.from_pandas(part.drop_vars("variance_full").to_dataframe().reset_index())
    write_csv(pa_frame, "partial_annotation.csv")
    proj = None
    if dt is not None:
        proj = reliability_projection(dt, n_raters=[1], n_sentences=part["k"].values).sel(
            design="fine"
        )
    save_fig(
        partial_annotation_curves(part, proj, title="Partial annotation (fine design)"),
        "partial_annotation.png",
    )
    pa_tab = pa_frame.select(
        "dimension",
        "k",
        _fmt_interval(3, mean="spearman_mean", low="spearman_low", high="spearman_high").alias(
            "Spearman with full score"
        ),
        _fmt_interval(3, mean="variance_mean", low="variance_low", high="variance_high").alias(
            "inter-rater variance"
        ),
    ).sort("dimension", "k")
    lines += [
        "### Partial annotation",
        "",
        "Answer scores from k randomly chosen rated sentences (the same for all raters of "
        "the answer), 100 random subsets: Spearman with the full (all rated sentences) "
        "score and the variance across raters, mean and 95% interval; the right panel is "
        "the rater model's reliability of a one-rater k-sentence answer score.",
        "",
        "![Partial annotation](partial_annotation.png)",
        "",
        markdown_table(pa_tab),
        "",
    ]
    if dt is not None and projections:
        budget = annotation_budget(dt, ratings, n_sims=200, max_workers=1, random_seed=random_seed)
        bud_frame = pl.from_pandas(
            budget[["reliability", "p_recovered", "expected_tau"]].to_dataframe().reset_index()
        ).join(
            pl.from_pandas(budget["cost_hours"].to_dataframe().reset_index()),
            on=["design", "n_raters", "k"],
        )
        write_csv(bud_frame, "annotation_budget.csv")
        save_fig(budget_curve(budget, on="reliability"), "budget_reliability.png")
        save_fig(budget_curve(budget, on="p_recovered"), "budget_ranking.png")
        cheap = pl.concat(
            [
                cheapest_design(budget, target=0.8, on="reliability"),
                cheapest_design(budget, target=0.9, on="p_recovered"),
            ]
        )
        write_csv(cheap, "cheapest_designs.csv")
        lines += [
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
    intra = intra_rater_by_design(humans)
    write_csv(intra, "intra_rater.csv")
    judge = judge_agreement(ratings, level_map=LEVELS_5_TO_3)
    write_csv(judge, "judge_agreement.csv")
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
        jv = judge_vs_experts(dt)
        write_csv(jv, "judge_vs_experts.csv")
        summ = (
            jv.group_by("dimension", "design")
            .agg(
                pl.col("discrimination")
                .filter(~pl.col("is_human"))
                .first()
                .round(2)
                .alias("judge discrimination"),
                pl.col("discrimination")
                .filter(pl.col("is_human"))
                .min()
                .round(2)
                .alias("physicians min"),
                pl.col("discrimination")
                .filter(pl.col("is_human"))
                .max()
                .round(2)
                .alias("physicians max"),
                pl.col("discrimination_rank")
                .filter(~pl.col("is_human"))
                .first()
                .alias("judge rank"),
                pl.col("severity")
                .filter(~pl.col("is_human"))
                .first()
                .round(2)
                .alias("judge severity"),
            )
            .sort("dimension", "design")
        )
        lines += [
            "Rater-model discrimination (reliability) and severity of the judge against the "
            "physicians' (`judge_vs_experts.csv`; rank 1 = most discriminating of 7).",
            "",
            markdown_table(summ),
            "",
        ]
    return lines


def _agreement_wide(table: pl.DataFrame) -> pl.DataFrame:
    """Estimates with intervals as text, one column per statistic."""
    cell = _fmt_interval(3, mean="estimate", low="ci_low", high="ci_high")
    return (
        table.with_columns(cell.alias("value"))
        .pivot(on="statistic", index=["scheme", "dimension"], values="value")
        .sort("scheme", "dimension")
    )


def run_demo(
    out: str | Path,
    *,
    progress: Progress | None = None,
    n_boot: int = 1000,
    random_seed: int = 1,
    ordinal_draws: int = 500,
    categorical_draws: int = 1000,
    rankings: bool = True,
    designs: bool = True,
    design_projections: bool = True,
) -> DemoResult:
    """Run the demo analysis of the built-in study and write the report folder.

    Parameters
    ----------
    out : path
        Report folder (created if needed).
    progress : callable, optional
        Called with a short message before each step.
    n_boot : int
        Bootstrap replicates for the agreement intervals.
    random_seed : int
        Seed of every stochastic step (the same seed gives the same report).
    ordinal_draws : int
        Draws (and tuning steps) per chain of the ordinal rater model; 0 leaves the model
        out (a few minutes on 2 cores at the default).
    categorical_draws : int
        Draws (and tuning steps) per chain of the hierarchical MACE model of the collapsed
        3-point ratings; 0 leaves it out. At the default the cell-effect scale ``cell_sd``,
        the slowest-mixing parameter (about 0.24 effective draws per draw), reaches a bulk
        ESS above 900 (about 13 s of CPU time).
    rankings : bool
        Add the system rankings (rater model when fitted, raw-rating baselines).
    designs : bool
        Add the design comparison (reliability by design, partial annotation, intra-rater
        reliability, the LLM judge).
    design_projections : bool
        Add the simulation-based annotation-budget projection (the slowest design step;
        needs the ordinal model); False for fast runs.

    Returns
    -------
    DemoResult

    Examples
    --------
    >>> import tempfile
    >>> res = run_demo(tempfile.mkdtemp(), n_boot=100, ordinal_draws=0, categorical_draws=0,
    ...                rankings=False, designs=False)
    >>> res.report.name
    'report.md'
    """
    say = progress or (lambda _msg: None)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []

    def write_csv(frame: pl.DataFrame, name: str) -> None:
        path = folder / name
        frame.write_csv(path)
        files.append(path)

    say("reading the built-in clinical-QA study")
    ratings = load_clinical_qa()
    info = DATASETS["clinical_qa_study"]
    summary = ratings.summary()

    say("summarising the data")
    write_csv(summary.cells, "summary_cells.csv")
    write_csv(summary.raters, "summary_raters.csv")
    summary_json = folder / "summary.json"
    summary_json.write_text(json.dumps(summary.to_dict(), indent=2, default=str))
    files.append(summary_json)

    say("applying the scale maps (5-point, collapsed 3-point, fine binary)")
    dists = [label_distribution(ratings, "5-point")]
    for name, r in schemes(ratings).items():
        dists.append(label_distribution(r, name))
    dist = pl.concat(dists)
    write_csv(dist, "label_distribution.csv")

    say("agreement by dimension and scheme, with item-bootstrap intervals")
    humans = ratings.filter(rater_kind="human")
    ds = agreement(
        schemes(humans),
        list(DEMO_STATISTICS),
        by=["dimension"],
        n_boot=n_boot,
        random_seed=random_seed,
    )
    table = agreement_table(ds)
    write_csv(table, "agreement.csv")
    fig = agreement_bars(
        ds, "randolph_kappa", title="Randolph's kappa among physicians by rating scheme"
    )
    chart = folder / "agreement_randolph_kappa.png"
    fig.savefig(chart, dpi=120)
    files.append(chart)

    categorical_md: list[str] = []
    categorical_dt: xr.DataTree | None = None
    if categorical_draws:
        say(
            f"fitting hierarchical MACE to the 3-point ratings (NUTS, 4 chains x "
            f"{categorical_draws} draws)"
        )
        categorical_md, categorical_dt = _categorical_section(
            ratings, categorical_draws, random_seed, write_csv
        )

    ordinal_md: list[str] = []
    ordinal_dt: xr.DataTree | None = None
    if ordinal_draws:
        say(f"fitting the ordinal rater model (NUTS, 4 chains x {ordinal_draws} draws)")
        ordinal_dt = _fit_ordinal(ratings, ordinal_draws, random_seed)
        ordinal_md = _ordinal_section(ordinal_dt, ordinal_draws, random_seed, write_csv)

    def save_fig(fig: Figure, name: str) -> None:
        path = folder / name
        fig.savefig(path, dpi=120)
        files.append(path)

    ranking_md: list[str] = []
    if rankings:
        say("ranking the systems (rater model and raw-rating baselines)")
        ranking_md = _ranking_section(ratings, ordinal_dt, n_boot, random_seed, write_csv, save_fig)
    design_md: list[str] = []
    if designs:
        say("comparing the annotation designs")
        design_md = _design_section(
            ratings, ordinal_dt, random_seed, write_csv, save_fig, projections=design_projections
        )

    say("writing the report")
    sections = [
        "# raterstats demo: the built-in clinical-QA study",
        "",
        f"raterstats {__version__}. Data: {info.description}",
        f"Source: `{info.source}`; file `{info.file}` shipped with the package.",
        "",
        summary.to_markdown()
        .replace("# Data summary", "## Data summary", 1)
        .replace("\n## ", "\n### "),
        "## Label distributions under the clinical-QA rating schemes",
        "",
        "5-point Likert ratings; collapsed to 3 points (Disagree / Partially disagree -> -1, "
        "Neutral -> 0, Partially agree / Agree -> +1) for the coarse and the fine design; "
        "and the fine binary scheme (correctness: 0 if any sentence is rated negative; "
        "relevance and safety: 1 if at least one sentence is rated positive). First ratings "
        "only; shares within dimension and rater kind.",
        "",
        *[
            f"**{name}** (% of ratings)\n\n" + markdown_table(_wide_shares(part)) + "\n"
            for (name,), part in dist.group_by("scheme", maintain_order=True)
        ],
        "",
        "## Agreement among the physicians",
        "",
        f"Item-level (cluster) bootstrap, {n_boot} replicates, {100 * ds.attrs['ci_prob']:.0f}% "
        f"percentile intervals, seed {random_seed}; sentence ratings resample whole answers. "
        "Intra-rater agreement is the share of repeated ratings equal to the first rating. "
        "The LLM judge is left out here.",
        "",
        "![Randolph's kappa by dimension and scheme](agreement_randolph_kappa.png)",
        "",
        markdown_table(_agreement_wide(table)),
        "",
        *categorical_md,
        *ordinal_md,
        *ranking_md,
        *design_md,
        "## Files",
        "",
        *[f"- `{p.name}`" for p in files],
        "",
    ]
    report = folder / "report.md"
    fits = {
        label: fit
        for label, fit in (
            ("hierarchical MACE (3-point ratings)", categorical_dt),
            ("ordinal rater model", ordinal_dt),
        )
        if fit is not None
    }
    methods = methods_paragraph(fits, agreement=ds)
    end = sections.index("## Files")
    sections[end:end] = ["## Methods", "", methods.strip(), ""]
    report.write_text("\n".join(sections))
    html = write_html_report(folder, title="raterstats demo: the built-in clinical-QA study")
    return DemoResult(out=folder, report=report, files=[report, html, *files])
