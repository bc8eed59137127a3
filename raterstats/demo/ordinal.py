"""The demo's ordinal section: the ordinal rater model, fitted once and shared with the
ranking and design sections, and its system fair averages, reliability by design, length
effect and rater table."""

from __future__ import annotations

import numpy as np
import polars as pl
import xarray as xr

from raterstats.defaults import CHAINS
from raterstats.demo.folder import ReportFolder
from raterstats.demo.tables import format_interval, interval_frame
from raterstats.formatting import escape_markdown, markdown_table
from raterstats.ratings import Ratings


def fit_ordinal(ratings: Ratings, *, draws: int, random_seed: int) -> xr.DataTree:
    """The ordinal rater model of the demo (``draws`` draws and tuning steps per chain),
    fitted once and shared by its sections."""
    from raterstats.models.ordinal import OrdinalRaters

    return OrdinalRaters().fit(
        ratings, draws=draws, tune=draws, chains=CHAINS, random_seed=random_seed, progress=False
    )


def _diagnostics_sentence(dt: xr.DataTree) -> str:
    import arviz_stats as azs

    from raterstats.models.ordinal import DIAGNOSED_PARAMETERS

    post = dt["posterior"].to_dataset()
    with np.errstate(invalid="ignore", divide="ignore"):
        diag = azs.summary(post[[n for n in DIAGNOSED_PARAMETERS if n in post]], kind="diagnostics")
    n_div = int(dt["sample_stats"]["diverging"].sum())
    r_hat, ess_bulk = float(diag["r_hat"].max()), float(diag["ess_bulk"].min())
    text = (
        f"Diagnostics over {len(diag)} reported parameters: {n_div} divergences, max R-hat "
        f"{r_hat:.3f}, min bulk ESS {ess_bulk:.0f}, "
        f"min tail ESS {float(diag['ess_tail'].min()):.0f}."
    )
    if n_div > 0 or r_hat > 1.01 or ess_bulk < 400:
        text += (
            " These miss the usual thresholds (no divergences, R-hat <= 1.01, bulk ESS >= "
            "400): the demo's run is shortened (`--ordinal-draws`); the model's defaults "
            "(4 chains x 2,000 draws) meet them on this study (benchmarks/RESULTS.md)."
        )
    return text


def _pivot_intervals(frame: pl.DataFrame, on: str, index: list[str]) -> pl.DataFrame:
    return (
        frame.with_columns(format_interval().alias("value"))
        .pivot(on=on, index=index, values="value")
        .sort(index)
    )


def ordinal_section(dt: xr.DataTree, *, ci_prob: float, out: ReportFolder) -> list[str]:
    """Lay out the results of the fitted OrdinalRaters model: tables (written to ``out``)
    and the section's Markdown lines.

    Parameters
    ----------
    dt : xr.DataTree
        The fit of :func:`fit_ordinal`.
    ci_prob : float
        Probability of the intervals.
    out : ReportFolder
        Receives ``ordinal_fair_averages.csv``, ``ordinal_reliability.csv``,
        ``ordinal_length_effect.csv`` and ``ordinal_rater_table.csv``.

    Returns
    -------
    list of str
    """
    from raterstats.models.ordinal import (
        length_contrast,
        prob_more_reliable,
        rater_table,
        reliability,
        system_scores,
    )

    fair = interval_frame(system_scores(dt)["fair_average"], "fair average", ci_prob)
    fair_tab = _pivot_intervals(fair, "system", ["dimension", "design"])
    out.csv(fair.drop("quantity"), "ordinal_fair_averages.csv")
    rel = interval_frame(reliability(dt), "reliability", ci_prob)
    p_fine = prob_more_reliable(dt, "fine", "coarse")
    rel_tab = _pivot_intervals(rel, "design", ["dimension"]).with_columns(
        pl.col("dimension")
        .replace_strict(
            {str(d): round(float(p_fine.sel(dimension=d)), 3) for d in p_fine.dimension.values}
        )
        .alias("P(fine > coarse)")
    )
    out.csv(rel.drop("quantity"), "ordinal_reliability.csv")
    lc = length_contrast(dt)
    len_frame = pl.concat(
        [
            interval_frame(lc["length_effect"], "length effect", ci_prob).with_columns(
                pl.col("design").cast(pl.String)
            ),
            interval_frame(lc["contrast"], "coarse - fine", ci_prob).with_columns(
                pl.lit("coarse - fine").alias("design")
            ),
        ],
        how="diagonal_relaxed",
    )
    out.csv(len_frame, "ordinal_length_effect.csv")
    len_tab = _pivot_intervals(len_frame, "design", ["dimension"])
    rt = rater_table(dt, ci_prob=ci_prob)
    columns = ["severity", "severity_low", "severity_high"]
    columns += ["discrimination", "discrimination_low", "discrimination_high"]
    rt_frame = pl.from_pandas(
        rt[[*columns, "infit", "outfit", "n_ratings"]].to_dataframe().reset_index()
    )
    out.csv(rt_frame, "ordinal_rater_table.csv")
    rt_tab = rt_frame.select(
        "rater",
        "dimension",
        "design",
        format_interval(2, mean="severity", low="severity_low", high="severity_high").alias(
            "severity (logits)"
        ),
        format_interval(
            2, mean="discrimination", low="discrimination_low", high="discrimination_high"
        ).alias("discrimination"),
        pl.col("infit").round(2),
        pl.col("outfit").round(2),
        "n_ratings",
    ).sort("dimension", "design", "rater")
    sep = rt[["separation", "separation_reliability"]].to_dataframe().reset_index()
    a = dt.attrs
    return [
        "## Ordinal rater model",
        "",
        "`OrdinalRaters()` (MODELS.md section 3: latent answer quality with system and "
        "question effects, sentence deviations for fine ratings, rater severity and "
        "discrimination per dimension x design, length effect per dimension x design, the "
        f"LLM judge with its own parameters) fitted by NUTS ({a['sampler']}), {a['chains']} "
        f"chains x {a['draws']} draws after {a['tune']} tuning steps, seed "
        f"{a['random_seed']}. "
        + _diagnostics_sentence(dt)
        + f" Intervals: {100 * ci_prob:g}% equal-tailed.",
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
            f"{escape_markdown(f'{r.dimension}/{r.design}')} {r.separation_reliability:.2f}"
            for r in sep.itertuples()
        ),
        "",
        markdown_table(rt_tab),
        "",
    ]


__all__ = ["fit_ordinal", "ordinal_section"]
