"""The gold-check section: when the data carry gold labels, they are a check of the
categorical models' labels, never silently the answer (analyze never clamps gold). Per
model and dimension: accuracy and log loss of the model's labels against gold beside the
majority vote's accuracy, and the accuracy of the most confident share of the items (the
coverage / accuracy curve)."""

from __future__ import annotations

import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.analyze.context import Context, Fit
from raterstats.analyze.health import banners, fit_warning
from raterstats.formatting import escape_markdown, markdown_table


def _labelled(ctx: Context) -> list[Fit]:
    """The analysis' fits that give item labels (the latent-class models)."""
    from raterstats.models.latent_class import LatentClassModel

    return [f for f in ctx.fits if issubclass(f.model, LatentClassModel)]


def gold_applies(ctx: Context) -> str | None:
    """The gold check needs a gold column and a categorical model fit to check."""
    if S.GOLD not in ctx.ratings.data.columns:
        return "the data have no gold column"
    if ctx.ratings.data[S.GOLD].is_null().all():
        return "the gold column is empty"
    if not _labelled(ctx):
        return (
            "no categorical model (MACE / Dawid-Skene) was fitted, so there are no model "
            "labels to check against gold"
        )
    return None


def gold_section(ctx: Context) -> list[str]:
    """Accuracy against gold per model and dimension (``gold_check.csv``), and the
    coverage / accuracy curve (``gold_coverage.csv``)."""
    from raterstats.posterior import gold_check, gold_check_summary

    rows: list[pl.DataFrame] = []
    curves: list[pl.DataFrame] = []
    lines = [
        "## Accuracy against the gold labels",
        "",
        "The gold labels were not used in any fit (they would have fixed the labels they "
        "cover): they check the models' labels. Accuracy is the share of gold items whose "
        "most probable label is the gold label, log loss the mean of -log P(gold label); "
        "the majority vote counts a tie among k labels as 1/k correct. `coverage 0.5` is "
        "the accuracy on the half of the gold items whose label posterior is most certain.",
        "",
    ]
    for fit in _labelled(ctx):
        check = gold_check(fit.dt, ratings=fit.ratings)
        warn = fit_warning(fit.dt)
        if warn:  # a point estimate's missing uncertainty does not matter for accuracy
            lines += banners(xr.Dataset(attrs={"fit_warning": f"{fit.label}: {warn}"}))
        lines.append(f"- {escape_markdown(fit.label)}: {gold_check_summary(check)}")
        dims = [str(d) for d in check["dimension"].values]
        rows.append(
            pl.DataFrame(
                {
                    "model": [fit.label] * len(dims),
                    "dimension": dims,
                    "n_gold": check["n_gold"].values.astype(int),
                    "accuracy": check["accuracy"].values,
                    "majority_accuracy": check["majority_accuracy"].values,
                    "log_loss": check["log_loss"].values,
                }
            )
        )
        cov = check["coverage_accuracy"].to_dataframe().reset_index()
        curves.append(
            pl.from_pandas(cov[["dimension", "coverage", "coverage_accuracy"]]).with_columns(
                pl.lit(fit.label).alias("model"), pl.col("dimension").cast(pl.String)
            )
        )
    table = pl.concat(rows)
    curve = pl.concat(curves).select("model", "dimension", "coverage", "coverage_accuracy")
    ctx.folder.csv(table, "gold_check.csv")
    ctx.folder.csv(curve, "gold_coverage.csv")
    wide = curve.filter(pl.col("coverage").is_in([0.2, 0.5, 0.8, 1.0])).pivot(
        on="coverage", index=["model", "dimension"], values="coverage_accuracy"
    )
    wide = wide.rename(
        {c: f"coverage {c}" for c in wide.columns if c not in ("model", "dimension")}
    )
    return [
        *lines,
        "",
        markdown_table(
            table.with_columns(pl.col("accuracy", "majority_accuracy", "log_loss").round(3))
        ),
        "",
        "Accuracy of the most confident share of the gold items:",
        "",
        markdown_table(wide.with_columns(pl.exclude("model", "dimension").round(3))),
        "",
    ]


__all__ = ["gold_applies", "gold_section"]
