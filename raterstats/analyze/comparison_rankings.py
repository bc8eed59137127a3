"""The ranking and rater sections of an analysis of comparative judgments: the comparison
model's ranking (P(a > b), rank probabilities) beside the classical baselines (win rate,
Elo, maximum-likelihood Bradley-Terry, each with a bootstrap) and the agreement of the
model's ranking with each baseline (Kendall tau-b); the raters' discrimination and, for
pairs with the order shown recorded, their position bias."""

from __future__ import annotations

from typing import Any

import polars as pl
import xarray as xr

from raterstats.analyze.comparisons import ComparisonContext, NotApplicable
from raterstats.analyze.health import POINT_METHODS, banners
from raterstats.comparisons import SHOWN_FIRST
from raterstats.formatting import escape_markdown, markdown_table, plot_text

#: posterior draws compared by the ranking-agreement table
AGREEMENT_DRAWS = 500
#: the name of the model's ranking beside the baselines
MODEL_SOURCE = "comparison model"


def _cell(row: dict[str, Any], point: bool) -> str:
    if point:
        return f"{row['score_mean']:.2f} (rank {row['expected_rank']:.2f})"
    return (
        f"{row['score_mean']:.2f} [{row['score_low']:.2f}, {row['score_high']:.2f}] "
        f"(E rank {row['expected_rank']:.2f})"
    )


def _wide(table: pl.DataFrame, point: set[str]) -> pl.DataFrame:
    """One row per dimension and system, one column per source: score [interval] and
    expected rank (a point-estimate source: its value and rank alone)."""
    cells = table.with_columns(
        pl.struct(pl.all())
        .map_elements(lambda r: _cell(r, r["source"] in point), return_dtype=pl.String)
        .alias("value")
    )
    order = table.group_by("dimension", "system").agg(pl.col("expected_rank").mean().alias("__r"))
    return (
        cells.pivot(on="source", index=["dimension", "system"], values="value")
        .join(order, on=["dimension", "system"])
        .sort("dimension", "__r")
        .drop("__r")
    )


def _pairs(model: xr.Dataset) -> pl.DataFrame:
    """P(a > b) and the verdict of every pair of systems (a before b in the order)."""
    frame = pl.from_pandas(
        model[["p_better", "diff_low", "diff_high", "verdict"]].to_dataframe().reset_index()
    )
    order = {str(s): i for i, s in enumerate(model["system"].values)}
    return (
        frame.with_columns(pl.col("system").cast(pl.String), pl.col("system_b").cast(pl.String))
        .filter(pl.col("system").replace_strict(order) < pl.col("system_b").replace_strict(order))
        .rename({"p_better": "P(system > system_b)"})
    )


def _rank_probs(model: xr.Dataset) -> pl.DataFrame:
    """Rank probabilities in %, one column per rank."""
    frame = pl.from_pandas(model["rank_prob"].to_dataframe().reset_index())
    return (
        frame.with_columns(
            (100 * pl.col("rank_prob")).round(1).alias("pct"),
            ("rank " + pl.col("rank").cast(pl.String)).alias("rank"),
        )
        .pivot(on="rank", index=["dimension", "system"], values="pct")
        .sort("dimension", "system")
    )


def _concordance(model: xr.Dataset, base: dict[str, xr.Dataset], ctx: ComparisonContext) -> Any:
    """Kendall tau-b between the model's ranking and each baseline's, per dimension."""
    from raterstats.ranking import ranking_agreement

    rows = []
    for name, ds in base.items():
        for dim in model["dimension"].values:
            ra = ranking_agreement(
                model.sel(dimension=dim),
                ds.sel(dimension=dim),
                statistics=["kendall_tau_b"],
                ci_prob=ctx.ci_prob,
                max_draws=AGREEMENT_DRAWS,
                random_seed=ctx.options.random_seed,
            )
            rows.append(
                {
                    "dimension": str(dim),
                    "baseline": name,
                    "Kendall tau-b": f"{float(ra['mean'][0]):.2f} [{float(ra['low'][0]):.2f}, "
                    f"{float(ra['high'][0]):.2f}]",
                }
            )
    return pl.DataFrame(rows)


def ranking_section(ctx: ComparisonContext) -> list[str]:
    """The rankings: model and baselines side by side (``rankings.csv``), the model's
    P(a > b) (``ranking_pairs.csv``) and rank probabilities, and the agreement of the
    rankings."""
    from raterstats.comparison_baselines import BASELINE_METHODS
    from raterstats.plots import rank_heatmap
    from raterstats.ranking import compare_rankings, rank_systems

    o = ctx.options
    base: dict[str, xr.Dataset] = {}
    refused: list[str] = []
    for m in BASELINE_METHODS:
        try:
            base[m] = rank_systems(
                ctx.comparisons, method=m, n_boot=o.n_boot, ci_prob=ctx.ci_prob,
                random_seed=o.random_seed,
            )  # fmt: skip
        except (ValueError, KeyError, TypeError) as err:
            refused.append(f"{m}: {err}")
    model = None
    if ctx.fit is not None:
        try:
            model = rank_systems(ctx.fit, ci_prob=ctx.ci_prob, random_seed=o.random_seed)
        except (ValueError, KeyError, TypeError) as err:
            refused.append(f"{MODEL_SOURCE}: {err}")
    sources = ({MODEL_SOURCE: model} if model is not None else {}) | base
    if not sources:
        raise NotApplicable(f"no ranking could be computed: {refused[0]}")
    table = compare_rankings(sources, digits=None)
    ctx.folder.csv(table, "rankings.csv")
    point = {MODEL_SOURCE} if ctx.fit is not None and _point(ctx.fit) else set()
    notes = sorted(
        {str(ds.attrs["method_notes"]) for ds in base.values() if ds.attrs.get("method_notes")}
    )
    lines = [
        "## System rankings",
        "",
        f"Scores per dimension and system with {100 * ctx.ci_prob:g}% intervals and the "
        "expected rank. "
        + (
            "The comparison model ranks by its strengths theta; "
            if model is not None
            else "No comparison model was fitted; "
        )
        + f"the baselines ({', '.join(base)}) count every judgment the same, whoever gave it, "
        f"with a bootstrap ({o.n_boot} replicates): their intervals are bootstrap intervals.",
        "",
        *banners(*([model, ctx.fit] if model is not None else []), *base.values()),
        markdown_table(_wide(table, point)),
        "",
        *[f"- {escape_markdown(' '.join(n.split()))}" for n in notes],
        "",
    ]
    if model is not None:
        pairs = _pairs(model)
        ctx.folder.csv(pairs, "ranking_pairs.csv")
        ctx.folder.figure(
            rank_heatmap(model, title=plot_text(f"Rank probabilities ({MODEL_SOURCE})")),
            "rank_probabilities.png",
        )
        lines += [
            "### P(a > b) and rank probabilities (comparison model)",
            "",
            *banners(model, ctx.fit),
            markdown_table(
                pairs.select(
                    "dimension",
                    "system",
                    "system_b",
                    pl.col("P(system > system_b)").round(3),
                    "verdict",
                )
            ),
            "",
            markdown_table(_rank_probs(model)),
            "",
            "![Rank probabilities](rank_probabilities.png)",
            "",
        ]
        if base:
            lines += [
                "### Agreement of the model's ranking with each baseline",
                "",
                "Kendall tau-b between the two rankings over posterior draws and bootstrap "
                f"replicates (mean and {100 * ctx.ci_prob:g}% interval).",
                "",
                *banners(model, ctx.fit),
                markdown_table(_concordance(model, base, ctx)),
                "",
            ]
    if refused:
        lines += ["Not ranked:", "", *[f"- {escape_markdown(r)}" for r in refused], ""]
    return lines


def ranking_applies(ctx: ComparisonContext) -> str | None:
    """Rankings need two or more systems."""
    if len(ctx.comparisons.systems) < 2:
        return "one system only: nothing to rank"
    return None


def _point(dt: xr.DataTree) -> bool:
    return str(dt.attrs.get("method", "nuts")) in POINT_METHODS


def _interval(mean: float, low: float, high: float, point: bool) -> str:
    return f"{mean:.2f}" if point else f"{mean:.2f} [{low:.2f}, {high:.2f}]"


def _bias_sentences(frame: pl.DataFrame, dt: xr.DataTree, ctx: ComparisonContext) -> list[str]:
    """Whether the population and each LLM judge show a position bias (interval excludes 0)."""
    from raterstats.intervals import eti

    point = _point(dt)
    out = []
    post = dt["posterior"].to_dataset()
    if "beta_mean" in post.data_vars and not point:
        low, high = eti(post["beta_mean"], ctx.ci_prob, dim=("chain", "draw"))
        lo, hi, mean = float(low), float(high), float(post["beta_mean"].mean())
        verdict = (
            f"a position bias toward the answer {'shown first' if lo > 0 else 'shown second'} "
            "(the interval excludes 0)"
            if lo > 0 or hi < 0
            else "no position bias that the data can tell from none (the interval includes 0)"
        )
        out.append(
            f"The population of raters (pooled) shows {verdict}: mean bias {mean:.2f} "
            f"[{lo:.2f}, {hi:.2f}] on the log-odds scale."
        )
    judges = frame.filter(pl.col("rater_kind") == "llm")
    for row in judges.iter_rows(named=True):
        if point:
            out.append(
                f"LLM judge {escape_markdown(str(row['rater']))}: position bias "
                f"{row['beta_mean']:.2f} (a point estimate: no interval to tell it from 0)."
            )
            continue
        lo, hi = row["beta_low"], row["beta_high"]
        side = "shown first" if lo > 0 else "shown second"
        verdict = (
            f"shows a position bias toward the answer {side}"
            if lo > 0 or hi < 0
            else "shows no position bias that the data can tell from none"
        )
        out.append(
            f"LLM judge {escape_markdown(str(row['rater']))} {verdict}: "
            f"{row['beta_mean']:.2f} [{lo:.2f}, {hi:.2f}]."
        )
    others = frame.filter(
        (pl.col("rater_kind") != "llm") & ((pl.col("beta_low") > 0) | (pl.col("beta_high") < 0))
    )
    if not point and others.height:
        names = ", ".join(escape_markdown(str(r)) for r in others["rater"].to_list())
        out.append(f"Raters whose own interval excludes 0: {names}.")
    return out


def rater_section(ctx: ComparisonContext) -> list[str]:
    """Each rater's discrimination (alpha) and, for pairs with the order shown recorded,
    position bias (beta) with intervals (``raters.csv``), and the position-bias sentences."""
    from raterstats.models import model_from_datatree

    dt = ctx.fit
    if dt is None:
        raise NotApplicable("no comparison model was fitted")
    summary = model_from_datatree(dt).rater_summary(dt, ci_prob=ctx.ci_prob)
    frame = pl.from_pandas(summary.to_dataframe().reset_index())
    frame = frame.with_columns(pl.col("rater").cast(pl.String))
    if "rater_kind" in frame.columns:
        frame = frame.with_columns(pl.col("rater_kind").cast(pl.String))
    else:
        frame = frame.with_columns(pl.lit("").alias("rater_kind"))
    ctx.folder.csv(frame, "raters.csv")
    point = _point(dt)
    known = ctx.comparisons.kind == "pairs" and bool(
        ctx.comparisons.data[SHOWN_FIRST].is_not_null().any()
    )
    bias = known and "beta_mean" in frame.columns
    n = "n_comparisons" if "n_comparisons" in frame.columns else None
    cols: list[Any] = [
        "rater",
        "rater_kind",
        *([pl.col(n).alias("judgments")] if n else []),
        pl.struct("alpha_mean", "alpha_low", "alpha_high")
        .map_elements(
            lambda r: _interval(r["alpha_mean"], r["alpha_low"], r["alpha_high"], point),
            return_dtype=pl.String,
        )
        .alias("discrimination (alpha)"),
    ]
    if bias:
        cols.append(
            pl.struct("beta_mean", "beta_low", "beta_high")
            .map_elements(
                lambda r: _interval(r["beta_mean"], r["beta_low"], r["beta_high"], point),
                return_dtype=pl.String,
            )
            .alias("position bias (beta)")
        )
    why = (
        "rankings carry no order of presentation"
        if ctx.comparisons.kind == "rankings"
        else "the data do not record which answer was shown first (shown_first)"
    )
    lines = [
        "## Rater reliability and position bias",
        "",
        "Discrimination alpha: how sharply a rater's judgments follow the strength difference "
        "(1: a typical rater; near 0: judgments unrelated to the strengths). "
        + (
            "Position bias beta: the rater's log-odds in favour of the answer shown first "
            "(0: none)."
            if bias
            else f"Position bias is not estimated: {why}."
        ),
        "",
        *banners(dt),
        markdown_table(frame.select(cols).sort("rater")),
        "",
    ]
    if bias:
        lines += [*[f"- {s}" for s in _bias_sentences(frame, dt, ctx)], ""]
    return lines


def rater_applies(ctx: ComparisonContext) -> str | None:
    """The rater section needs the comparison model."""
    return None if ctx.model is not None else f"no comparison model: {ctx.not_planned}"


__all__ = [
    "AGREEMENT_DRAWS",
    "MODEL_SOURCE",
    "ranking_applies",
    "ranking_section",
    "rater_applies",
    "rater_section",
]
