"""The ordinal section: the ordinal rater model, fitted once and shared with the ranking,
design and judge sections; its system fair averages (when there are systems), reliability
by design, length effect (when there is a length) and rater table, with its fit health."""

from __future__ import annotations

import polars as pl
import xarray as xr

from raterstats.analyze.context import Context
from raterstats.analyze.fits import fit, how_fitted, model_ratings
from raterstats.analyze.health import POINT_METHODS, banners, health_lines
from raterstats.analyze.tables import format_interval, interval_frame
from raterstats.formatting import escape_markdown, markdown_table

#: above this many raters the report shows the spread of the rater parameters
MAX_RATERS_SHOWN = 30


def _point(dt: xr.DataTree) -> bool:
    return str(dt.attrs.get("method", "nuts")) in POINT_METHODS


def _pivot_intervals(
    frame: pl.DataFrame, on: str, index: list[str], dt: xr.DataTree
) -> pl.DataFrame:
    return (
        frame.with_columns(format_interval(point=_point(dt)).alias("value"))
        .pivot(on=on, index=index, values="value")
        .sort(index)
    )


def _fair_averages(dt: xr.DataTree, ctx: Context) -> list[str]:
    from raterstats.models.ordinal import system_scores

    post = dt["posterior"].to_dataset()
    if "system_effect" not in post:
        return []
    scores = system_scores(dt)  # its attrs: the fit's health, and what a MAP fit lacks here
    fair = interval_frame(scores["fair_average"], "fair average", ctx.ci_prob)
    ctx.folder.csv(fair.drop("quantity"), "ordinal_fair_averages.csv")
    n_sys = fair["system"].n_unique()
    # few systems: one column per system; many: one row per system, a column per design
    tab = (
        _pivot_intervals(fair, "system", ["dimension", "design"], dt)
        if n_sys <= 6
        else _pivot_intervals(fair, "design", ["dimension", "system"], dt)
    )
    if fair["design"].n_unique() == 1 and n_sys <= 6:
        tab = tab.drop("design")
    return [
        "### System fair averages (expected rating by a typical rater, averaged over the "
        "system's answers)",
        "",
        *banners(scores),
        markdown_table(tab),
        "",
    ]


def _reliability(dt: xr.DataTree, ctx: Context) -> list[str]:
    from raterstats.models.ordinal import prob_more_reliable, reliability

    implied = reliability(dt)  # its attrs: the fit's health, and what a MAP fit lacks here
    rel = interval_frame(implied, "reliability", ctx.ci_prob)
    ctx.folder.csv(rel.drop("quantity"), "ordinal_reliability.csv")
    tab = _pivot_intervals(rel, "design", ["dimension"], dt)
    designs = [str(g) for g in dt["posterior"].to_dataset()["design"].values]
    if len(designs) == 2:
        a, b = sorted(designs, reverse=True)
        p = prob_more_reliable(dt, a, b)
        tab = tab.with_columns(
            pl.col("dimension")
            .replace_strict(
                {str(d): round(float(p.sel(dimension=d)), 3) for d in p.dimension.values}
            )
            .alias(f"P({a} > {b})")
        )
    return [
        "### Model-implied reliability by design",
        "",
        *banners(implied),
        markdown_table(tab),
        "",
    ]


def _length(dt: xr.DataTree, ctx: Context) -> list[str]:
    from raterstats.models.ordinal import length_contrast

    post = dt["posterior"].to_dataset()
    if "length_effect" not in post:
        return []
    designs = [str(g) for g in post["design"].values]
    parts = []
    if len(designs) == 2:
        a, b = designs
        lc = length_contrast(dt, a, b)
        parts.append(
            interval_frame(lc["contrast"], f"{a} - {b}", ctx.ci_prob).with_columns(
                pl.lit(f"{a} - {b}").alias("design")
            )
        )
    effect = interval_frame(post["length_effect"], "length effect", ctx.ci_prob).with_columns(
        pl.col("design").cast(pl.String)
    )
    frame = pl.concat([effect, *parts], how="diagonal_relaxed")
    ctx.folder.csv(frame, "ordinal_length_effect.csv")
    head = "### Length effect (logits per SD of log length)" + (
        f" and the {escape_markdown(designs[0])} - {escape_markdown(designs[1])} contrast"
        if len(designs) == 2
        else ""
    )
    return [
        head,
        "",
        *banners(dt),
        markdown_table(_pivot_intervals(frame, "design", ["dimension"], dt)),
        "",
    ]


def _raters(dt: xr.DataTree, ctx: Context) -> list[str]:
    rt = ctx.rater_table_of(dt)
    columns = ["severity", "severity_low", "severity_high"]
    columns += ["discrimination", "discrimination_low", "discrimination_high"]
    frame = pl.from_pandas(
        rt[[*columns, "infit", "outfit", "n_ratings"]].to_dataframe().reset_index()
    )
    ctx.folder.csv(frame, "ordinal_rater_table.csv")
    sep = rt[["separation", "separation_reliability"]].to_dataframe().reset_index()
    one_design = frame["design"].n_unique() == 1
    cells = ", ".join(
        f"{escape_markdown(str(r.dimension) + ('' if one_design else f'/{r.design}'))} "
        f"{r.separation_reliability:.2f}"
        for r in sep.itertuples()
    )
    if "separation_note" in rt.attrs:  # a point estimate: not computed
        cells = f"not computed ({rt.attrs['separation_note']})"
    if frame["rater"].n_unique() <= MAX_RATERS_SHOWN:
        tab = frame.select(
            "rater",
            "dimension",
            *([] if one_design else ["design"]),
            format_interval(
                2, mean="severity", low="severity_low", high="severity_high", point=_point(dt)
            ).alias("severity (logits)"),
            format_interval(
                2,
                mean="discrimination",
                low="discrimination_low",
                high="discrimination_high",
                point=_point(dt),
            ).alias("discrimination"),
            pl.col("infit").round(2),
            pl.col("outfit").round(2),
            "n_ratings",
        ).sort("dimension", *([] if one_design else ["design"]), "rater")
        note = ""
    else:
        keys = ["dimension", *([] if one_design else ["design"])]
        tab = (
            frame.group_by(keys)
            .agg(
                pl.len().alias("raters"),
                pl.col("severity").median().round(2).alias("median severity"),
                pl.col("discrimination").median().round(2).alias("median discrimination"),
                (pl.col("infit") > 1.3).sum().alias("raters with infit > 1.3"),
                (pl.col("discrimination") < 0.5).sum().alias("raters with discrimination < 0.5"),
            )
            .sort(keys)
        )
        note = (
            f" The spread over {frame['rater'].n_unique()} raters is shown; every rater is in "
            "`ordinal_rater_table.csv`."
        )
    return [
        "### Rater table (many-facet Rasch vocabulary)",
        "",
        f"Rater separation reliability per dimension{'' if one_design else ' and design'}: "
        f"{cells}. Infit / outfit near 1 mean the rater is as noisy as the model expects "
        f"(above about 1.3: noisier).{note}",
        "",
        *banners(dt),
        markdown_table(tab),
        "",
    ]


def ordinal_section(ctx: Context) -> list[str]:
    """Fit the ordinal rater model (the options' settings, else its defaults) and lay out
    its results (``ordinal_*.csv``)."""
    ratings, reading = model_ratings(ctx, "ordinal")
    cls = ctx.models["ordinal"][0]
    label = "ordinal rater model" + (
        f" ({reading})" if reading != "the ratings as they are" else ""
    )
    dt = fit(ctx, cls, ratings, label).dt
    a = dt.attrs
    how = how_fitted(dt)
    return [
        "## Ordinal rater model",
        "",
        f"`{cls.__name__}()`: {escape_markdown(cls.description)}; latent item quality (with "
        "system and question effects when the data have them), rater severity and "
        "discrimination per dimension x design, non-human raters with their own parameters. "
        f"Fitted to {escape_markdown(reading)} by {how}, seed {a.get('random_seed')}. "
        f"Intervals: {100 * ctx.ci_prob:g}% equal-tailed.",
        "",
        *health_lines(dt),
        *_fair_averages(dt, ctx),
        *_reliability(dt, ctx),
        *_length(dt, ctx),
        *_raters(dt, ctx),
    ]


def ordinal_applies(ctx: Context) -> str | None:
    """The ordinal model applies when it is planned (:func:`plan_models`)."""
    if "ordinal" in ctx.models:
        return None
    return ctx.not_planned.get("ordinal", "the ordinal rater model was not planned")


__all__ = ["MAX_RATERS_SHOWN", "ordinal_applies", "ordinal_section"]
