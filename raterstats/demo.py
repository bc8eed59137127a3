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

import polars as pl

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

    Returns
    -------
    DemoResult

    Examples
    --------
    >>> import tempfile
    >>> res = run_demo(tempfile.mkdtemp(), n_boot=100)
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
        "## Files",
        "",
        *[f"- `{p.name}`" for p in files],
        "",
    ]
    report = folder / "report.md"
    report.write_text("\n".join(sections))
    return DemoResult(out=folder, report=report, files=[report, *files])
