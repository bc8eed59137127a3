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

from raterstats import schema as S
from raterstats._version import __version__
from raterstats.agreement import agreement, agreement_table
from raterstats.datasets import DATASETS, load_clinical_qa
from raterstats.plots import agreement_bars
from raterstats.ratings import Ratings, _md_table

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


def _fmt_interval(digits: int = 2) -> pl.Expr:
    """The text "mean [low, high]" of the columns made by :func:`_interval_frame`."""
    return pl.format(
        "{} [{}, {}]",
        pl.col("mean").round(digits),
        pl.col("low").round(digits),
        pl.col("high").round(digits),
    )


def _categorical_section(
    ratings: Ratings, draws: int, random_seed: int, write_csv: Callable[[pl.DataFrame, str], None]
) -> list[str]:
    """Hierarchical MACE on the 3-point ratings (answers coarse, sentences fine): rater
    competence per dimension x design and label posteriors, with diagnostics."""
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
    return [
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
        _md_table(comp_tab),
        "",
        "### Label posteriors",
        "",
        "Share of units by most probable true label, and how certain the labels are.",
        "",
        _md_table(lab_tab),
        "",
    ]


def _ordinal_section(
    ratings: Ratings, draws: int, random_seed: int, write_csv: Callable[[pl.DataFrame, str], None]
) -> list[str]:
    """Fit OrdinalRaters to the study and lay out its results (tables + Markdown)."""
    import arviz_stats as azs

    from raterstats.models.ordinal import (
        OrdinalRaters,
        length_contrast,
        prob_more_reliable,
        rater_table,
        reliability,
        system_scores,
    )

    dt = OrdinalRaters().fit(
        ratings, draws=draws, tune=draws, chains=4, random_seed=random_seed, progress=False
    )
    post = dt["posterior"].to_dataset()
    names = [
        "severity",
        "discrimination",
        "system_effect",
        "cutpoints",
        "length_effect",
        "sigma_question",
        "sigma_residual",
        "sigma_sentence",
        "judge_length_effect",
    ]
    with np.errstate(invalid="ignore", divide="ignore"):
        diag = azs.summary(post[[n for n in names if n in post]], kind="diagnostics")
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
        pl.format(
            "{} [{}, {}]",
            pl.col("severity").round(2),
            pl.col("severity_low").round(2),
            pl.col("severity_high").round(2),
        ).alias("severity (logits)"),
        pl.format(
            "{} [{}, {}]",
            pl.col("discrimination").round(2),
            pl.col("discrimination_low").round(2),
            pl.col("discrimination_high").round(2),
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
        f"min tail ESS {float(diag['ess_tail'].min()):.0f}. Intervals: 90% equal-tailed.",
        "",
        "### System fair averages (expected rating by a typical physician, average question)",
        "",
        _md_table(fair_tab),
        "",
        "### Model-implied reliability by design",
        "",
        _md_table(rel_tab),
        "",
        "### Length effect (logits per SD of log length) and the coarse - fine contrast",
        "",
        _md_table(len_tab),
        "",
        "### Rater table (many-facet Rasch vocabulary)",
        "",
        "Rater separation reliability per dimension and design: "
        + ", ".join(
            f"{r.dimension}/{r.design} {r.separation_reliability:.2f}" for r in sep.itertuples()
        ),
        "",
        _md_table(rt_tab),
        "",
    ]


def _agreement_wide(table: pl.DataFrame) -> pl.DataFrame:
    """Estimates with intervals as text, one column per statistic."""
    cell = pl.format(
        "{} [{}, {}]",
        pl.col("estimate").round(3),
        pl.col("ci_low").round(3),
        pl.col("ci_high").round(3),
    )
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
        the slowest-mixing parameter (about 0.13 effective draws per draw), reaches a bulk
        ESS above 400 (about 30 s on 2 cores).

    Returns
    -------
    DemoResult

    Examples
    --------
    >>> import tempfile
    >>> res = run_demo(tempfile.mkdtemp(), n_boot=100, ordinal_draws=0, categorical_draws=0)
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
    if categorical_draws:
        say(
            f"fitting hierarchical MACE to the 3-point ratings (NUTS, 4 chains x "
            f"{categorical_draws} draws)"
        )
        categorical_md = _categorical_section(ratings, categorical_draws, random_seed, write_csv)

    ordinal_md: list[str] = []
    if ordinal_draws:
        say(f"fitting the ordinal rater model (NUTS, 4 chains x {ordinal_draws} draws)")
        ordinal_md = _ordinal_section(ratings, ordinal_draws, random_seed, write_csv)

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
            f"**{name}** (% of ratings)\n\n" + _md_table(_wide_shares(part)) + "\n"
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
        _md_table(_agreement_wide(table)),
        "",
        *categorical_md,
        *ordinal_md,
        "## Files",
        "",
        *[f"- `{p.name}`" for p in files],
        "",
    ]
    report = folder / "report.md"
    report.write_text("\n".join(sections))
    return DemoResult(out=folder, report=report, files=[report, *files])
