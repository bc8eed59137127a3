"""The design section (two or more annotation designs): reliability by design from the
ordinal rater model with its posterior predictive agreement read out in words, partial
annotation of sentence-level designs and the annotation budget."""

from __future__ import annotations

import itertools
from typing import Any

import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.analyze.context import Context
from raterstats.analyze.designs_categorical import (
    budget_executor,
    categorical_design_lines,
    reliability_figure,
)
from raterstats.analyze.folder import slug
from raterstats.analyze.health import POINT_METHODS, banners, ppc_lines
from raterstats.analyze.tables import format_interval
from raterstats.formatting import escape_markdown, markdown_table, plot_text
from raterstats.ratings import Ratings

#: posterior predictive replicates of the design comparison
N_REPLICATES = 100
#: simulated studies per point of the annotation-budget projection
N_BUDGET_SIMS = 200
#: the most sentences per answer the partial-annotation curves go to
MAX_K = 10


def collapse_map(ctx: Context, *, by: str) -> dict[Any, float] | None:
    """The options' collapse as a map of the ratings' levels (``by="code"``: 1-based level
    numbers, as :func:`raterstats.design.compare_designs` takes them; ``by="value"``: level
    values, as :func:`raterstats.design.judge_agreement` takes them); ``None`` without a
    collapse or when the dimensions' scales differ."""
    from raterstats.scales import COLLAPSES

    if not ctx.options.collapse:
        return None
    scales = list(ctx.ratings.scales.values())
    if any(s != scales[0] for s in scales):
        return None
    col = COLLAPSES[ctx.options.collapse]
    try:
        codes = col.codes_for(scales[0])
    except (ValueError, TypeError):
        return None
    target = [float(v) for v in col.target.values]
    if by == "code":
        return {k + 1: target[c] for k, c in enumerate(codes)}
    return {float(v): target[c] for v, c in zip(scales[0].values, codes, strict=True)}


def _cell(
    mean: str, low: str, high: str, name: str, digits: int | None = None, point: bool = False
) -> pl.Expr:
    return format_interval(digits, mean=mean, low=low, high=high, point=point).alias(name)


def _ppc_words(cmp: xr.Dataset, designs: list[str]) -> list[str]:
    """Whether the model reproduces each design's observed kappa and alpha, in words."""
    return ppc_lines(cmp.sel(design=designs), ci_prob=cmp.attrs.get("ci_prob"))


def _reliability_by_design(dt: xr.DataTree, ctx: Context) -> tuple[list[str], xr.Dataset]:
    from raterstats.design import compare_designs, design_table

    point = str(dt.attrs.get("method", "nuts")) in POINT_METHODS
    level_map = collapse_map(ctx, by="code")
    cmp = compare_designs(
        dt,
        n_replicates=0 if point else N_REPLICATES,
        level_map=level_map,
        ci_prob=ctx.ci_prob,
        random_seed=ctx.seed,
    )
    tab = design_table(cmp)
    ctx.folder.csv(tab, "design_comparison.csv")
    reliability_figure(ctx, cmp, "reliability_by_design.png", "Model-implied reliability by design")
    designs = [str(g) for g in cmp["design"].values]
    p_rows = []
    for dim in cmp["dimension"].values:
        row: dict[str, Any] = {"dimension": str(dim)}
        for a, b in itertools.combinations(sorted(designs, reverse=True), 2):
            sel = {"dimension": dim, "design": a, "design_b": b}
            row[f"P(reliability {a} > {b})"] = round(float(cmp["p_more_reliable"].sel(sel)), 3)
            if not point:
                row[f"P(kappa {a} > {b})"] = round(float(cmp["p_kappa_higher"].sel(sel)), 3)
        p_rows.append(row)
    columns = [
        _cell(
            "reliability", "reliability_low", "reliability_high", "model reliability", point=point
        ),
    ]
    if not point:
        columns += [
            _cell("kappa_mean", "kappa_low", "kappa_high", "predicted kappa"),
            pl.col("kappa_observed").alias("observed kappa"),
            _cell("alpha_mean", "alpha_low", "alpha_high", "predicted alpha"),
            pl.col("alpha_observed").alias("observed alpha"),
        ]
    show = tab.select("dimension", "design", *columns)
    scale = f" on the scale collapsed by {ctx.options.collapse}" if level_map else ""
    if point:
        checked = [
            "No posterior predictive check of agreement: the fit is a point estimate, so "
            "replicated studies would carry no posterior uncertainty.",
            "",
        ]
        what = "Model-implied reliability (share of latent variance due to the rated unit, "
        what += "human raters)."
    else:
        checked = [
            "Does the model reproduce the observed agreement of each design?",
            "",
            *_ppc_words(cmp, designs),
            "",
        ]
        what = (
            "Model-implied reliability (share of latent variance due to the rated unit, human "
            "raters) and posterior predictive Randolph's kappa and Krippendorff's alpha "
            f"(ordinal){scale}, from {N_REPLICATES} replicated studies (units: items for "
            "whole-item designs, sentences for sentence-level ones; "
            f"{100 * float(cmp.attrs['ci_prob']):g}% intervals), next to the observed values."
        )
    return [
        "### Reliability by design",
        "",
        what,
        "",
        *banners(cmp, dt),
        "![Model-implied reliability by design](reliability_by_design.png)",
        "",
        markdown_table(show),
        "",
        markdown_table(pl.DataFrame(p_rows)),
        "",
        *checked,
    ], cmp


def _segment_designs(r: Ratings) -> list[str]:
    return [g for g in r.designs if r.filter(design=g).has_segments]


def _partial_annotation(ctx: Context, design: str) -> list[str]:
    from raterstats.design import partial_annotation, reliability_projection
    from raterstats.plots import partial_annotation_curves

    humans = ctx.humans
    per = (
        humans.data.filter(pl.col(S.DESIGN) == design, pl.col(S.SEGMENT).is_not_null())
        .group_by(S.ITEM)
        .agg(pl.col(S.SEGMENT).n_unique())
    )
    k_max = min(int(per[S.SEGMENT].max() or 1), MAX_K)  # type: ignore[arg-type]
    part = partial_annotation(humans, ks=range(1, k_max + 1), design=design, random_seed=ctx.seed)
    frame = pl.from_pandas(part.drop_vars("variance_full").to_dataframe().reset_index())
    name = (
        "partial_annotation.csv"
        if len(_segment_designs(humans)) == 1
        else f"partial_annotation_{slug(design)}.csv"
    )
    ctx.folder.csv(frame, name)
    proj = None
    fit_ = ctx.ordinal_fit
    fitted: Any = [] if fit_ is None else fit_.dt["posterior"].to_dataset()["design"].values
    if fit_ is not None and design in [str(g) for g in fitted]:
        proj = reliability_projection(fit_.dt, n_raters=[1], n_sentences=part["k"].values).sel(
            design=design
        )
    fig = name.replace(".csv", ".png")
    ctx.folder.figure(
        partial_annotation_curves(
            part, proj, title=plot_text(f"Partial annotation ({design} design)")
        ),
        fig,
    )
    tab = frame.select(
        "dimension",
        "k",
        _cell("spearman_mean", "spearman_low", "spearman_high", "Spearman with full score", 3),
        _cell("variance_mean", "variance_low", "variance_high", "inter-rater variance", 3),
    ).sort("dimension", "k")
    return [
        "### Partial annotation"
        + ("" if name == "partial_annotation.csv" else f" ({escape_markdown(design)})"),
        "",
        "Item scores from k randomly chosen rated sentences (the same for all raters of "
        f"the item), {part.attrs['n_subsets']} random subsets: Spearman with the full (all "
        "rated sentences) score and the variance across raters, mean and "
        f"{100 * float(part.attrs['ci_prob']):g}% interval"
        + (
            "; the right panel is the rater model's reliability of a one-rater k-sentence score."
            if proj is not None
            else "."
        ),
        "",
        *([] if proj is None else banners(fit_.dt if fit_ else None)),
        f"![Partial annotation]({fig})",
        "",
        markdown_table(tab),
        "",
    ]


def _budget(dt: xr.DataTree, ratings: Ratings, ctx: Context) -> list[str]:
    from raterstats.design import annotation_budget, cheapest_design
    from raterstats.plots import budget_curve

    with budget_executor() as pool:
        budget = annotation_budget(
            dt, ratings, n_sims=N_BUDGET_SIMS, executor=pool, random_seed=ctx.seed
        )
    frame = pl.from_pandas(
        budget[["reliability", "p_recovered", "expected_tau"]].to_dataframe().reset_index()
    ).join(
        pl.from_pandas(budget["cost_hours"].to_dataframe().reset_index()),
        on=["design", "n_raters", "k"],
    )
    ctx.folder.csv(frame, "annotation_budget.csv")
    ctx.folder.figure(budget_curve(budget, on="reliability"), "budget_reliability.png")
    ctx.folder.figure(budget_curve(budget, on="p_recovered"), "budget_ranking.png")
    cheap = pl.concat(
        [
            cheapest_design(budget, target=0.8, on="reliability"),
            cheapest_design(budget, target=0.9, on="p_recovered"),
        ]
    )
    ctx.folder.csv(cheap, "cheapest_designs.csv")
    return [
        "### Annotation budget",
        "",
        "Projected from the rater model for 1-5 raters per item and, for sentence-level "
        "designs, 1-6 sentences per item: reliability of the item score (closed form, "
        f"posterior mean) and, from {budget.attrs['n_sims']} simulated studies per point, "
        "the probability that the study's system ranking is the true one (that of the "
        "items' latent quality) and the expected Kendall tau with it; cost in rater hours "
        f"from the measured durations (seconds per unit: {budget.attrs['seconds_per_unit']}).",
        "",
        *banners(dt),
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


def design_section(ctx: Context) -> list[str]:
    """Reliability by design (ordinal fit), the designs compared by the categorical model
    (the rating schemes as designs of one latent-class fit, and where the two comparisons
    agree), partial annotation (sentence-level designs) and the annotation budget (ordinal
    fit with systems and durations)."""
    lines = ["## Annotation designs", ""]
    fit_ = ctx.ordinal_fit
    multi = fit_ is not None and fit_.dt["posterior"].sizes.get("design", 1) > 1
    ordinal_cmp = None
    if fit_ is not None and multi:
        ordinal_lines, ordinal_cmp = _reliability_by_design(fit_.dt, ctx)
        lines += ordinal_lines
    else:
        why = (
            ctx.not_planned.get("ordinal", "the ordinal model was not fitted")
            if fit_ is None
            else "the ordinal fit has one design"
        )
        lines += [
            "The ordinal comparison of the designs needs the ordinal rater model "
            f"({escape_markdown(why)}); the observed agreement of each design is in the "
            "agreement table above.",
            "",
        ]
    lines += categorical_design_lines(ctx, ordinal_cmp)
    for design in _segment_designs(ctx.humans):
        lines += _partial_annotation(ctx, design)
    if ctx.options.design_projections:
        if fit_ is None:
            reason = "it projects from the ordinal rater model, which was not fitted"
        elif S.DURATION not in ctx.ratings.data.columns:
            reason = "the data have no duration_s column to cost the designs"
        elif "system_effect" not in fit_.dt["posterior"]:
            reason = "it projects system rankings and the data have no systems"
        else:
            reason = ""
            lines += _budget(fit_.dt, fit_.ratings, ctx)
        if reason:
            lines += [f"No annotation-budget projection: {reason}.", ""]
    return lines


def design_applies(ctx: Context) -> str | None:
    """Design comparison needs two or more designs."""
    designs = ctx.ratings.designs
    if len(designs) < 2:
        return (
            f"the data have one annotation design ({designs[0]}); a design "
            "column with two or more designs is needed to compare them"
        )
    return None


__all__ = [
    "MAX_K",
    "N_BUDGET_SIMS",
    "N_REPLICATES",
    "collapse_map",
    "design_applies",
    "design_section",
]
