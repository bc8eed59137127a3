"""The demo analysis of the built-in clinical-QA study: :func:`run_demo` runs each section
and writes the report folder, its ``report.md`` with the methods paragraph, and the HTML
page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import xarray as xr

from raterstats.defaults import CHAINS, DRAWS, N_BOOT, RANDOM_SEED, ci_prob
from raterstats.demo.categorical import categorical_section
from raterstats.demo.designs import design_section
from raterstats.demo.folder import ReportFolder
from raterstats.demo.ordinal import fit_ordinal, ordinal_section
from raterstats.demo.rankings import ranking_section
from raterstats.demo.study import DEMO_STATISTICS, label_distribution, schemes, wide_shares
from raterstats.demo.tables import agreement_wide
from raterstats.files import write_atomic
from raterstats.formatting import escape_markdown, markdown_table
from raterstats.ratings import Ratings, RatingsSummary
from raterstats.version import __version__

#: draws (and tuning steps) per chain of the demo's ordinal rater model: a shortened run
#: (a few minutes on 2 cores)
ORDINAL_DRAWS = 500
#: draws (and tuning steps) per chain of the demo's hierarchical MACE model
CATEGORICAL_DRAWS = DRAWS
#: title of the demo's report
TITLE = "raterstats demo: the built-in clinical-QA study"

Progress = Callable[[str], None]


@dataclass
class DemoResult:
    """What the demo wrote: the report folder, its main file and every table file."""

    out: Path
    report: Path
    files: list[Path] = field(default_factory=list)


def _agreement(humans: Ratings, *, n_boot: int, random_seed: int, out: ReportFolder) -> xr.Dataset:
    """Agreement among the physicians by dimension and scheme (table and bar chart)."""
    from raterstats.agreement import agreement, agreement_table
    from raterstats.plots import agreement_bars

    ds = agreement(
        schemes(humans),
        list(DEMO_STATISTICS),
        by=["dimension"],
        n_boot=n_boot,
        random_seed=random_seed,
    )
    out.csv(agreement_table(ds), "agreement.csv")
    fig = agreement_bars(
        ds, "randolph_kappa", title="Randolph's kappa among physicians by rating scheme"
    )
    out.figure(fig, "agreement_randolph_kappa.png")
    return ds


def _data_lines(
    summary: RatingsSummary, dist: pl.DataFrame, ds: xr.Dataset, *, n_boot: int, random_seed: int
) -> list[str]:
    """The report's head: the data summary, the label distributions and the agreement."""
    from raterstats.agreement import agreement_table
    from raterstats.datasets import DATASETS

    info = DATASETS["clinical_qa_study"]
    return [
        f"# {TITLE}",
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
            f"**{escape_markdown(name)}** (% of ratings)\n\n"
            + markdown_table(wide_shares(part))
            + "\n"
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
        markdown_table(agreement_wide(agreement_table(ds))),
        "",
    ]


def run_demo(
    out: str | Path,
    *,
    progress: Progress | None = None,
    n_boot: int = N_BOOT,
    random_seed: int = RANDOM_SEED,
    ordinal_draws: int = ORDINAL_DRAWS,
    categorical_draws: int = CATEGORICAL_DRAWS,
    rankings: bool = True,
    designs: bool = True,
    design_projections: bool = True,
) -> DemoResult:
    """Run the demo analysis of the built-in study and write the report folder.

    Posterior intervals have ArviZ's probability (:func:`raterstats.defaults.ci_prob`), the
    agreement intervals the library's confidence level.

    Parameters
    ----------
    out : path
        Report folder (created if needed).
    progress : callable, optional
        Called with a short message before each step.
    n_boot : int
        Bootstrap replicates for the agreement intervals and the raw-rating rankings.
    random_seed : int
        Seed of every stochastic step (the same seed gives the same report).
    ordinal_draws : int
        Draws (and tuning steps) per chain of the ordinal rater model; 0 leaves the model
        out (a few minutes on 2 cores at the default).
    categorical_draws : int
        Draws (and tuning steps) per chain of the hierarchical MACE model of the collapsed
        3-point ratings; 0 leaves it out. At 1000 draws the cell-effect scale ``cell_sd``,
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
    from raterstats.datasets import load_clinical_qa
    from raterstats.report import methods_paragraph
    from raterstats.report import report as write_html_report

    say = progress or (lambda _msg: None)
    folder = ReportFolder(Path(out))
    ci = ci_prob()

    say("reading the built-in clinical-QA study")
    ratings = load_clinical_qa()
    summary = ratings.summary()

    say("summarising the data")
    folder.csv(summary.cells, "summary_cells.csv")
    folder.csv(summary.raters, "summary_raters.csv")
    folder.json(summary.to_dict(), "summary.json")

    say("applying the scale maps (5-point, collapsed 3-point, fine binary)")
    dists = [label_distribution(ratings, "5-point")]
    dists += [label_distribution(r, name) for name, r in schemes(ratings).items()]
    dist = pl.concat(dists)
    folder.csv(dist, "label_distribution.csv")

    say("agreement by dimension and scheme, with item-bootstrap intervals")
    humans = ratings.filter(rater_kind="human")
    ds = _agreement(humans, n_boot=n_boot, random_seed=random_seed, out=folder)

    categorical_md: list[str] = []
    categorical_dt: xr.DataTree | None = None
    if categorical_draws:
        say(
            f"fitting hierarchical MACE to the 3-point ratings (NUTS, {CHAINS} chains x "
            f"{categorical_draws} draws)"
        )
        categorical_md, categorical_dt = categorical_section(
            ratings, draws=categorical_draws, random_seed=random_seed, ci_prob=ci, out=folder
        )

    ordinal_md: list[str] = []
    ordinal_dt: xr.DataTree | None = None
    if ordinal_draws:
        say(f"fitting the ordinal rater model (NUTS, {CHAINS} chains x {ordinal_draws} draws)")
        ordinal_dt = fit_ordinal(ratings, draws=ordinal_draws, random_seed=random_seed)
        ordinal_md = ordinal_section(ordinal_dt, ci_prob=ci, out=folder)

    ranking_md: list[str] = []
    if rankings:
        say("ranking the systems (rater model and raw-rating baselines)")
        ranking_md = ranking_section(
            ratings, ordinal_dt, n_boot=n_boot, random_seed=random_seed, ci_prob=ci, out=folder
        )
    design_md: list[str] = []
    if designs:
        say("comparing the annotation designs")
        design_md = design_section(
            ratings,
            ordinal_dt,
            random_seed=random_seed,
            ci_prob=ci,
            out=folder,
            projections=design_projections,
        )

    say("writing the report")
    fits = {
        label: fit
        for label, fit in (
            ("hierarchical MACE (3-point ratings)", categorical_dt),
            ("ordinal rater model", ordinal_dt),
        )
        if fit is not None
    }
    methods = methods_paragraph(fits, agreement=ds)
    sections = [
        *_data_lines(summary, dist, ds, n_boot=n_boot, random_seed=random_seed),
        *categorical_md,
        *ordinal_md,
        *ranking_md,
        *design_md,
        "## Methods",
        "",
        methods.strip(),
        "",
        "## Files",
        "",
        *[f"- `{p.name}`" for p in folder.files],
        "",
    ]
    report = folder.path / "report.md"
    write_atomic(report, lambda tmp: tmp.write_text("\n".join(sections)))
    html = write_html_report(folder.path, title=TITLE)
    return DemoResult(out=folder.path, report=report, files=[report, html, *folder.files])


__all__ = ["CATEGORICAL_DRAWS", "ORDINAL_DRAWS", "TITLE", "DemoResult", "Progress", "run_demo"]
