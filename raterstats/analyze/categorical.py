"""The categorical section: the latent-class rater models (MACE; Dawid-Skene when asked)
fitted to the nominal ratings (or to the ratings under a collapse), with their rater
quality, label posteriors, fit health and, for sampled fits, the posterior predictive
check of agreement in words."""

from __future__ import annotations

import polars as pl
import xarray as xr

from raterstats.analyze.context import Context, Fit
from raterstats.analyze.fits import fit, how_fitted, model_ratings
from raterstats.analyze.health import POINT_METHODS, banners, health_lines, ppc_lines
from raterstats.analyze.tables import format_interval
from raterstats.formatting import escape_markdown, markdown_table
from raterstats.ratings import Ratings

#: rater-quality summaries of the latent-class models, the first one present is shown
QUALITY = ("competence", "accuracy")
#: above this many raters the report shows the spread of rater quality, the CSV every rater
MAX_RATERS_SHOWN = 30
#: posterior predictive draws of the agreement check
PPC_DRAWS = 100
#: held-out sets of the report's model comparison: one of 10 % of the ratings (a third of
#: the cost of ``choose_model``'s default three; ``raterstats fit --model auto`` runs three)
CHOICE_FOLDS = 1


def _quality(dt: xr.DataTree, ctx: Context, stem: str) -> list[str]:
    from raterstats.posterior import rater_summary

    summ = rater_summary(dt, ci_prob=ctx.ci_prob)
    q = next((q for q in QUALITY if f"{q}_mean" in summ), None)
    if q is None:
        return []
    cols = [f"{q}_mean", f"{q}_low", f"{q}_high", "n_ratings"]
    # cells no rating falls in (a label space a design does not use) are prior only: NaN
    frame = pl.from_pandas(summ[cols].to_dataframe().reset_index()).filter(
        pl.col(f"{q}_mean").is_not_nan()
    )
    ctx.folder.csv(frame, f"{stem}_{q}.csv")
    cell = pl.col("dimension") + pl.lit(" / ") + pl.col("design")
    if frame["design"].n_unique() == 1:
        cell = pl.col("dimension")
    n_raters = frame["rater"].n_unique()
    point = str(dt.attrs.get("method", "nuts")) in POINT_METHODS
    if n_raters <= MAX_RATERS_SHOWN:
        value = format_interval(2, mean=f"{q}_mean", low=f"{q}_low", high=f"{q}_high", point=point)
        tab = (
            frame.with_columns(value.alias("value"), cell.alias("cell"))
            .pivot(on="cell", index="rater", values="value")
            .sort("rater")
        )
        head = f"### Rater {q} " + (
            "(point estimate)" if point else f"(posterior mean, {100 * ctx.ci_prob:g}% interval)"
        )
    else:
        m = pl.col(f"{q}_mean")
        tab = (
            frame.with_columns(cell.alias("cell"))
            .group_by("cell")
            .agg(
                pl.len().alias("raters"),
                m.min().round(2).alias("min"),
                m.quantile(0.25).round(2).alias("q25"),
                m.median().round(2).alias("median"),
                m.quantile(0.75).round(2).alias("q75"),
                m.max().round(2).alias("max"),
            )
            .sort("cell")
        )
        head = (
            f"### Rater {q}: spread over the {n_raters} raters "
            f"({'point estimates' if point else 'posterior means'}; every rater in "
            f"`{stem}_{q}.csv`)"
        )
    return [head, "", *banners(dt), markdown_table(tab), ""]


def _labels(dt: xr.DataTree, ctx: Context, stem: str) -> list[str]:
    from raterstats.posterior import item_posterior

    post = item_posterior(dt)
    labels = pl.from_pandas(
        post[["label", "map_prob", "entropy", "n_ratings"]].to_dataframe().reset_index()
    ).filter(pl.col("n_ratings") > 0)
    keys = ["dimension"]
    if "unit_segment" in labels.columns and (labels["unit_segment"] != "").any():
        labels = labels.with_columns(
            pl.when(pl.col("unit_segment") != "")
            .then(pl.lit("sentence"))
            .otherwise(pl.lit("answer"))
            .alias("unit")
        )
        keys = ["unit", "dimension"]
    ctx.folder.csv(labels, f"{stem}_label_posteriors.csv")
    cats = [str(c) for c in labels["label"].cast(pl.String).unique().sort().to_list()]
    tab = (
        labels.group_by(keys)
        .agg(
            pl.len().alias("units"),
            *[
                (pl.col("label").cast(pl.String) == c).mean().round(3).alias(f"share {c}")
                for c in cats
            ],
            pl.col("map_prob").mean().round(3).alias("mean P(label)"),
            (pl.col("map_prob") < 0.8).mean().round(3).alias("share P(label) < 0.8"),
        )
        .sort(keys)
    )
    return [
        "### Inferred labels",
        "",
        "Share of units by most probable true label, and how certain the labels are "
        f"(every unit in `{stem}_label_posteriors.csv`).",
        "",
        *banners(dt),
        markdown_table(tab),
        "",
    ]


def _ppc(dt: xr.DataTree, ctx: Context) -> list[str]:
    """The posterior predictive check of agreement, in words (sampled fits only)."""
    from raterstats.diagnostics import ppc_agreement

    if str(dt.attrs.get("method", "nuts")) not in ("nuts", "gibbs"):
        return []
    ppc = ppc_agreement(dt, n_draws=PPC_DRAWS, random_seed=ctx.seed)
    lines = ppc_lines(ppc, ci_prob=ctx.ci_prob)
    return [
        "### Does the model reproduce the observed agreement?",
        "",
        f"Agreement of ratings replicated from {PPC_DRAWS} posterior draws against the "
        "observed agreement (first ratings per unit and rater):",
        "",
        *banners(dt),
        *lines,
        "",
    ]


def _one(ctx: Context, done: Fit, reading: str) -> list[str]:
    dt = done.dt
    a = dt.attrs
    stem = str(a.get("model", done.model.name))
    how = how_fitted(dt)
    return [
        f"## Categorical rater model: {escape_markdown(done.label)}",
        "",
        f"{escape_markdown(done.model.description or done.model.__name__)}; fitted to "
        f"{escape_markdown(reading)} by {how}, seed {a.get('random_seed')}. Gold labels, "
        "when the data have them, are not used by the fit.",
        "",
        *health_lines(dt),
        *_quality(dt, ctx, stem),
        *_labels(dt, ctx, stem),
        *_ppc(dt, ctx),
    ]


def _choice(ctx: Context, ratings: Ratings, reading: str) -> list[str]:
    """The gold-free comparison of the models of the true label on these ratings
    (:func:`raterstats.choose_model`, held-out ratings by EM), and whether the model the
    report fits is the one it prefers."""
    from raterstats.choice import RULE, choose_model

    try:
        choice = choose_model(ratings, folds=CHOICE_FOLDS, random_seed=ctx.seed)
    except ValueError as err:
        return [
            "## Which model of the true label describes these ratings?",
            "",
            f"Not compared: {escape_markdown(str(err))}",
            "",
        ]
    frame = choice.frame()
    ctx.folder.csv(frame, "model_choice.csv")
    t = choice.table
    tab = frame.select(
        "model",
        pl.col("per_rating").round(4).alias("log score per held-out rating"),
        pl.col("elpd").round(1).alias("elpd"),
        pl.format("{} (se {})", pl.col("elpd_diff").round(1), pl.col("se_diff").round(1)).alias(
            "difference to the best"
        ),
        "note",
    )
    fitted = [cls.name for cls in ctx.models["categorical"]]
    best = choice.chosen
    if best in fitted:
        verdict = f"The model fitted below, {escape_markdown(best)}, is the one preferred."
    else:
        gap = -float(t["elpd_diff"].sel(model=fitted[0])) if fitted[0] in t["model"] else None
        verdict = (
            f"The held-out ratings prefer **{escape_markdown(best)}**"
            + (
                f" (by {gap:.1f} in log score over {escape_markdown(fitted[0])}, se "
                f"{float(t['se_diff'].sel(model=fitted[0])):.1f})"
                if gap is not None
                else ""
            )
            + f" to the model fitted below ({escape_markdown(', '.join(fitted))}); fit it "
            f"with `raterstats fit --model {escape_markdown(best)}` (or `--model auto`), or "
            f"name it in the analysis options (`models`)."
        )
    folds = int(t.attrs["folds"])
    return [
        "## Which model of the true label describes these ratings?",
        "",
        f"Each candidate fitted by EM to {escape_markdown(reading)} without about "
        f"{100 * float(t.attrs['fraction']):g}% of the ratings ({folds} held-out "
        f"set{'s' if folds != 1 else ''}, {int(t.attrs['n_scored']):,} ratings in all) and "
        "scored by the "
        "log-probability of each held-out rating given the other ratings of its unit; no "
        f"gold label is used. Rule: {RULE}. {verdict} Every figure in `model_choice.csv`; "
        "`raterstats fit --model auto` repeats the comparison over three held-out sets.",
        "",
        markdown_table(tab),
        "",
    ]


def categorical_section(ctx: Context) -> list[str]:
    """Compare the models of the true label on the ratings (held out, no gold), then fit
    each planned categorical model and lay out its results (``<model>_*.csv``)."""
    ratings, reading = model_ratings(ctx, "categorical")
    lines: list[str] = _choice(ctx, ratings, reading)
    for cls in ctx.models["categorical"]:
        label = cls.__name__ + (f" ({reading})" if reading != "the ratings as they are" else "")
        lines += _one(ctx, fit(ctx, cls, ratings, label), reading)
    return lines


def categorical_applies(ctx: Context) -> str | None:
    """A categorical model applies when one is planned (:func:`plan_models`)."""
    if "categorical" in ctx.models:
        return None
    return ctx.not_planned.get("categorical", "no categorical model was planned")


__all__ = [
    "CHOICE_FOLDS",
    "MAX_RATERS_SHOWN",
    "PPC_DRAWS",
    "QUALITY",
    "categorical_applies",
    "categorical_section",
]
