"""The ranking section: system rankings from the rater model (when one was fitted) next to
the raw-rating baselines (mean score and majority vote), pairwise verdicts, the agreement
of the rankings, label distributions by system and case difficulty."""

from __future__ import annotations

from typing import Any

import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.analyze.agreement import scale_kind
from raterstats.analyze.context import Context, Fit, SectionSkipped
from raterstats.analyze.data import MAX_LEVELS_SHOWN, level_order
from raterstats.analyze.health import POINT_METHODS, banners
from raterstats.formatting import escape_markdown, markdown_table, plot_text
from raterstats.ratings import Ratings

#: posterior draws compared by the ranking-agreement table
AGREEMENT_DRAWS = 500
#: up to this many systems, one column per system; more: one row per system
MAX_SYSTEM_COLUMNS = 6


def _interval_text(ra: xr.Dataset, k: int) -> str:
    return f"{float(ra['mean'][k]):.2f} [{float(ra['low'][k]):.2f}, {float(ra['high'][k]):.2f}]"


def _verdicts(model: xr.Dataset, ctx: Context) -> tuple[pl.DataFrame, str]:
    """Pairwise verdicts (all pairs in the CSV; in the report all pairs of a few systems,
    or the pairs adjacent in expected rank)."""
    verdicts = pl.from_pandas(
        model[["p_better", "diff_mean", "diff_low", "diff_high", "verdict"]]
        .to_dataframe()
        .reset_index()
    )
    order = {str(s): i for i, s in enumerate(model["system"].values)}
    verdicts = verdicts.filter(
        pl.col("system").replace_strict(order) < pl.col("system_b").replace_strict(order)
    )
    ctx.folder.csv(verdicts, "ranking_pairs.csv")
    keys = [k for k in ("dimension", "design") if k in verdicts.columns]
    if len(order) <= MAX_SYSTEM_COLUMNS:
        return verdicts.select(*keys, "verdict").sort(keys), ""
    rank = pl.from_pandas(model["expected_rank"].to_dataframe().reset_index())
    rank = rank.with_columns(
        pl.col("expected_rank").rank("ordinal").over(keys).alias("__pos")
    ).select(*keys, "system", "__pos")
    nxt = rank.with_columns((pl.col("__pos") - 1).alias("__pos")).rename({"system": "system_b"})
    adjacent = rank.join(nxt, on=[*keys, "__pos"]).select(*keys, "system", "system_b")
    flipped = adjacent.rename({"system": "system_b", "system_b": "system"})
    shown = verdicts.join(
        pl.concat([adjacent, flipped.select(adjacent.columns)]), on=[*keys, "system", "system_b"]
    )
    return shown.select(*keys, "verdict").sort(keys), (
        " Systems next to each other in expected rank; every pair is in `ranking_pairs.csv`."
    )


def _model_part(
    model: xr.Dataset, fit_: Fit, base_mean: xr.Dataset | None, ctx: Context
) -> list[str]:
    """Rank-probability and score figures, pairwise verdicts and ranking agreement of the
    rater model's ranking."""
    from raterstats.plots import rank_heatmap, scores_by_design
    from raterstats.ranking import ranking_agreement

    dt = fit_.dt
    ordinal = fit_ in ctx.fits_of("ordinal")
    lines: list[str] = []
    multi = "design" in model.dims and model.sizes["design"] > 1
    heat = model.isel(design=0, drop=True) if "design" in model.dims else model
    # the ordinal model's fair averages average over each system's own answers with every
    # design's typical rater (issue 19), so the designs' rank probabilities may differ: the
    # figure shows the first design's
    same = f" (design {model['design'].values[0]})" if multi and ordinal else ""
    ctx.folder.figure(
        rank_heatmap(heat, title=plot_text(f"Rank probabilities ({fit_.label}){same}")),
        "rank_probabilities.png",
    )
    lines += ["![Rank probabilities](rank_probabilities.png)", ""]
    if multi:
        ctx.folder.figure(
            scores_by_design(model, title="System fair averages by design"),
            "system_scores_by_design.png",
        )
        lines += ["![System fair averages by design](system_scores_by_design.png)", ""]
    shown, note = _verdicts(model, ctx)
    lines += [
        f"### Pairwise comparisons ({escape_markdown(fit_.label)})",
        "",
        *([note.strip(), ""] if note else []),
        *banners(model, dt),
        markdown_table(shown),
        "",
    ]
    if base_mean is None:
        return lines
    rows = []
    designs = model["design"].values if "design" in model.dims else [None]
    for dim in model["dimension"].values:
        if dim not in base_mean["dimension"].values:
            continue
        for des in designs:
            sel = {"dimension": dim} | ({} if des is None else {"design": des})
            ra = ranking_agreement(
                model.sel(sel),
                base_mean.sel(dimension=dim),
                statistics=["kendall_tau_b", "spearman_rho"],
                ci_prob=ctx.ci_prob,
                max_draws=AGREEMENT_DRAWS,
                random_seed=ctx.seed,
            )
            rows.append(
                {"dimension": str(dim)}
                | ({} if des is None else {"design": str(des)})
                | {"Kendall tau-b": _interval_text(ra, 0), "Spearman": _interval_text(ra, 1)}
            )
    if rows:
        lines += [
            "### Agreement of the rater-model ranking with the raw mean-score ranking",
            "",
            "Kendall tau-b and Spearman between the two rankings over posterior draws and "
            f"bootstrap replicates (mean and {100 * ctx.ci_prob:g}% interval).",
            "",
            *banners(model, dt),
            markdown_table(pl.DataFrame(rows)),
            "",
        ]
    return lines


def _baseline_ratings(ctx: Context) -> tuple[Ratings | None, str]:
    """The whole-item first ratings the baselines rank from (human raters when the data
    say who is human), and the design they come from."""
    r = ctx.humans
    designs = [g for g in r.designs if not r.filter(design=g).has_segments]
    if not designs:
        return None, ""
    if len(r.designs) == 1:
        return r, ""
    return r.filter(design=designs[0]), designs[0]


def _wide(table: pl.DataFrame, point: set[str]) -> pl.DataFrame:
    """Scores with intervals and expected ranks, one column per system (few systems) or per
    source (many); a point-estimate source (``point``: names of sources; its folded design
    suffix included) shows its value and rank alone."""
    is_point = (
        pl.any_horizontal([pl.col("source").str.starts_with(p) for p in sorted(point)])
        if point
        else pl.lit(False)
    )
    cell = (
        pl.when(is_point)
        .then(
            pl.format(
                "{} (rank {})", pl.col("score_mean").round(2), pl.col("expected_rank").round(2)
            )
        )
        .otherwise(
            pl.format(
                "{} [{}, {}] (E rank {})",
                pl.col("score_mean").round(2),
                pl.col("score_low").round(2),
                pl.col("score_high").round(2),
                pl.col("expected_rank").round(2),
            )
        )
        .alias("value")
    )
    keys = [c for c in ("dimension",) if c in table.columns]
    if table["system"].n_unique() <= MAX_SYSTEM_COLUMNS:
        return (
            table.with_columns(cell)
            .pivot(on="system", index=[*keys, "source"], values="value")
            .sort(*keys, "source")
        )
    order = table.group_by(*keys, "system").agg(pl.col("expected_rank").mean().alias("__r"))
    return (
        table.with_columns(cell)
        .pivot(on="source", index=[*keys, "system"], values="value")
        .join(order, on=[*keys, "system"])
        .sort(*keys, "__r")
        .drop("__r")
    )


def ranking_section(ctx: Context) -> list[str]:
    """System rankings: the rater model's scores (when fitted) and the raw-rating baselines
    (mean score and majority vote of whole-item ratings) with a case bootstrap."""
    from raterstats.descriptive import case_difficulty, label_distributions
    from raterstats.ranking import compare_rankings, rank_systems

    o = ctx.options
    lines = ["## System rankings", ""]
    refused: list[str] = []
    base_r, design = _baseline_ratings(ctx)
    raw_suffix = f" ({design})" if design else ""  # in the source names (data)
    suffix = f" ({escape_markdown(design)})" if design else ""  # in the text
    base: dict[str, xr.Dataset] = {}
    if base_r is None:
        refused.append("raw-rating baselines: every design is rated sentence by sentence")
    else:
        for m in ("mean", "majority"):
            try:
                base[m] = rank_systems(
                    base_r, method=m, n_boot=o.n_boot, ci_prob=ctx.ci_prob,
                    random_seed=ctx.seed, score_map=o.score_map,
                )  # fmt: skip
            except (ValueError, KeyError, TypeError) as err:
                refused.append(f"raw {m}: {err}")
    fits = [ctx.ordinal_fit] if ctx.ordinal_fit is not None else ctx.fits_of("categorical")
    models: list[tuple[Fit, xr.Dataset]] = []
    for f in fits:
        if f is None:
            continue
        try:
            kw: dict[str, Any] = {} if f in ctx.fits_of("ordinal") else {"score_map": o.score_map}
            models.append((f, rank_systems(f.dt, ci_prob=ctx.ci_prob, random_seed=ctx.seed, **kw)))
        except (ValueError, KeyError, TypeError) as err:
            refused.append(f"{f.label}: {err}")

    def one_design(ds: xr.Dataset) -> xr.Dataset:
        return ds.isel(design=0, drop=True) if ds.sizes.get("design", 0) == 1 else ds

    sources = {
        ("rater model" if f in ctx.fits_of("ordinal") else f.label): one_design(ds)
        for f, ds in models
    }
    point = {
        ("rater model" if f in ctx.fits_of("ordinal") else f.label)
        for f, _ in models
        if str(f.dt.attrs.get("method", "nuts")) in POINT_METHODS
    }
    sources.update({f"raw {m}{raw_suffix}": ds for m, ds in base.items()})
    if not sources:
        more = f" (and {len(refused) - 1} more like it)" if len(refused) > 1 else ""
        raise SectionSkipped(f"no ranking could be computed: {refused[0]}{more}")
    table = compare_rankings(sources, digits=None)  # the CSV unrounded
    ctx.folder.csv(table, "rankings.csv")
    model_text = (
        "The rater model ranks by its scores (for the ordinal model its fair averages: the "
        "expected rating by a typical rater of the design, averaged over the system's own "
        "answers); "
        if models
        else ""
    )
    base_text = (
        f"the baselines rank by the whole-item ratings{suffix} (mean score, and the score of "
        f"each item's majority rating) with a case bootstrap ({o.n_boot} replicates)."
        if base
        else ""
    )
    lines += [
        f"Scores per system and dimension with {100 * ctx.ci_prob:g}% intervals and the "
        f"expected rank. {model_text}{base_text}",
        "",
        *banners(*[ds for _, ds in models], *[f.dt for f, _ in models], *base.values()),
        markdown_table(_wide(table, point)),
        "",
    ]
    for f, ds in models[:1]:
        lines += _model_part(ds, f, base.get("mean"), ctx)
    if refused:
        lines += ["Not ranked:", "", *[f"- {escape_markdown(r)}" for r in refused], ""]
    if base_r is not None:
        lines += _by_system(base_r, suffix, ctx, label_distributions, case_difficulty)
    return lines


def _by_system(
    base_r: Ratings, suffix: str, ctx: Context, label_distributions: Any, case_difficulty: Any
) -> list[str]:
    lines: list[str] = []
    r = base_r
    if ctx.options.collapse:
        try:
            r = r.collapse(ctx.options.collapse)
        except (ValueError, KeyError, TypeError):
            r = base_r
    if all(
        scale_kind(s) != "interval" and s.n_levels <= MAX_LEVELS_SHOWN for s in r.scales.values()
    ):
        dist = label_distributions(r)
        ctx.folder.csv(dist, "label_distribution_by_system.csv")
        levels = level_order(r)
        wide = (
            dist.with_columns((100 * pl.col("share")).round(1).alias("pct"))
            .pivot(on="rating", index=["dimension", "system", "aggregation"], values="pct")
            .fill_null(0.0)
            .sort("dimension", "system", "aggregation")
        )
        scale = f", {ctx.options.collapse}" if r is not base_r else ""
        lines += [
            f"### Label distributions by system (whole items{suffix}{scale})",
            "",
            "% of labels per system: every rating (`all ratings`) and one label per item, its "
            "most frequent rating (`majority`).",
            "",
            markdown_table(wide.select("dimension", "system", "aggregation", *levels)),
            "",
        ]
    if S.QUESTION in base_r.data.columns:
        try:
            cases = case_difficulty(base_r, score_map=ctx.options.score_map)
        except (ValueError, KeyError, TypeError) as err:
            return [*lines, f"Case difficulty not computed: {escape_markdown(str(err))}", ""]
        ctx.folder.csv(cases, "case_difficulty.csv")
        prof = cases.group_by("dimension").agg(
            pl.col("mean").mean().round(2).alias("mean score"),
            pl.col("mean").std().round(2).alias("sd of case means"),
            pl.col("sd_across_systems").mean().round(2).alias("mean sd across systems"),
            pl.col("question").first().alias("hardest case"),
        )
        lines += [
            f"### Case difficulty (whole items{suffix})",
            "",
            "Per question: mean score over the systems' items and the spread across systems "
            "(`case_difficulty.csv`).",
            "",
            markdown_table(prof.sort("dimension")),
            "",
        ]
    return lines


def ranking_applies(ctx: Context) -> str | None:
    """Rankings need a ``system`` column with at least two systems."""
    systems = ctx.ratings.systems
    if not systems:
        return "the data have no system column (which system produced each item)"
    if len(systems) < 2:
        return f"the data have one system only ({systems[0]}): nothing to rank"
    return None


__all__ = ["AGREEMENT_DRAWS", "MAX_SYSTEM_COLUMNS", "ranking_applies", "ranking_section"]
