"""The analysis of comparative judgments (``raterstats analyze FILE --comparisons ...``;
:func:`raterstats.analyze.analyze` given :class:`~raterstats.Comparisons`).

Its sections (:data:`COMPARISON_SECTIONS`), each deciding from the data whether it
applies: the data summary (per dimension: judgments, raters, pairs compared, groups of
linked systems, ties, the share won by the answer shown first), agreement
(:func:`~raterstats.agreement.comparison_agreement` per dimension with bootstrap
intervals), the comparison model (:class:`~raterstats.models.BradleyTerry` for pairs,
:class:`~raterstats.models.PlackettLuce` for rankings, at the library's defaults unless the
options say otherwise) with its health, the system rankings
(:mod:`~raterstats.analyze.comparison_rankings`) and the raters' reliability and position
bias. The sections of ratings that do not apply to comparative judgments are listed under
"Sections not included" with the reason (:data:`RATINGS_ONLY`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import xarray as xr

from raterstats.analyze.fits import how_fitted
from raterstats.analyze.folder import ReportFolder
from raterstats.analyze.health import banners, health_lines, record_health
from raterstats.analyze.options import AnalyzeOptions
from raterstats.analyze.tables import agreement_wide, format_interval, interval_frame
from raterstats.comparisons import Comparisons
from raterstats.formatting import escape_markdown, markdown_table

if TYPE_CHECKING:
    from raterstats.analyze.run import AnalysisResult
    from raterstats.models import Model

#: the sections of a ratings analysis that do not apply to comparative judgments, with why
RATINGS_ONLY: dict[str, str] = {
    "categorical": "a model of labels on a scale; comparative judgments are modelled by the "
    "comparison model above",
    "gold": "gold labels belong to ratings; comparative judgments have none",
    "ordinal": "a model of ratings on an ordinal scale; comparative judgments are modelled by "
    "the comparison model above",
    "designs": "annotation designs of ratings; whether pairs, rankings or absolute ratings "
    "recover the true ranking for fewer rater hours is simulated by "
    "raterstats.design.compare_design_kinds",
    "intra_rater": "repeated ratings; repeated comparative judgments of one unit by one rater "
    "are counted in the agreement notes",
    "judges": "LLM judges of ratings; LLM judges of comparisons are raters of the comparison "
    "model, in the rater reliability and position bias section",
}


def comparison_statistics(comparisons: Comparisons) -> list[str]:
    """The agreement statistics of :func:`~raterstats.agreement.comparison_agreement` that
    apply to the judgments: all of them for graded pairs; without the graded alpha for
    a / b / tie outcomes and rankings.

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(n_systems=3, n_comparisons=30, random_seed=1).comparisons
    >>> "krippendorff_alpha_ordinal" in comparison_statistics(c)
    False
    """
    from raterstats.agreement import COMPARISON_AGREEMENT_STATISTICS

    graded = comparisons.kind == "pairs" and comparisons.max_grade > 1
    return [
        s for s in COMPARISON_AGREEMENT_STATISTICS if graded or s != "krippendorff_alpha_ordinal"
    ]


def comparison_agreement_table(ds: xr.Dataset) -> pl.DataFrame:
    """A :func:`~raterstats.agreement.comparison_agreement` result as a tidy frame: one row
    per statistic and dimension with ``estimate``, ``ci_low``, ``ci_high``, ``n_units``,
    ``outcomes`` (what the statistic reads) and ``reason`` (why an estimate is NaN).

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> from raterstats.agreement import comparison_agreement
    >>> c = simulate_comparisons(n_systems=3, n_raters=3, n_comparisons=90, n_questions=5,
    ...                          random_seed=1).comparisons
    >>> t = comparison_agreement_table(comparison_agreement(c, n_boot=0))
    >>> t.columns[:4]
    ['statistic', 'dimension', 'estimate', 'ci_low']
    """
    cols = ["estimate", "ci_low", "ci_high", "n_units", "reason"]
    frame = pl.from_pandas(ds[cols].to_dataframe().reset_index())
    outcomes = pl.DataFrame(
        {
            "statistic": [str(s) for s in ds["statistic"].values],
            "outcomes": [str(o) for o in ds["outcomes"].values],
        }
    )
    return (
        frame.with_columns(pl.col("statistic").cast(pl.String), pl.col("dimension").cast(pl.String))
        .join(outcomes, on="statistic", how="left")
        .select("statistic", "dimension", *cols[:4], "outcomes", "reason")
    )


@dataclass
class ComparisonContext:
    """What the sections of an analysis of comparative judgments share: the judgments,
    the options, the report folder, the model planned (or why none) and its fit."""

    comparisons: Comparisons
    options: AnalyzeOptions
    folder: ReportFolder
    say: Callable[[str], None]
    model: type[Model] | None = None
    not_planned: str = ""
    fit: xr.DataTree | None = None
    agreement: xr.Dataset | None = None
    fits: dict[str, xr.DataTree] = field(default_factory=dict)

    @property
    def ci_prob(self) -> float:
        """Probability of the posterior intervals."""
        from raterstats.defaults import ci_prob

        return self.options.ci if self.options.ci is not None else ci_prob()

    @property
    def agreement_ci(self) -> float:
        """Coverage of the bootstrap intervals of agreement."""
        from raterstats.defaults import AGREEMENT_CONFIDENCE

        return self.options.ci if self.options.ci is not None else AGREEMENT_CONFIDENCE


class NotApplicable(Exception):
    """Raised by a section that finds, on trying, that it does not apply (the reason)."""


@dataclass(frozen=True)
class ComparisonSection:
    """One section of the report of comparative judgments: ``applies(ctx)`` returns
    ``None`` or the reason it does not apply, ``run(ctx)`` its Markdown lines."""

    key: str
    title: str
    applies: Callable[[ComparisonContext], str | None]
    run: Callable[[ComparisonContext], list[str]]


def plan_comparison_model(
    comparisons: Comparisons, options: AnalyzeOptions
) -> tuple[type[Model] | None, str]:
    """The comparison model to fit (``BradleyTerry`` for pairs, ``PlackettLuce`` for
    rankings, with ``models="auto"``) and, when none, why; a ``ValueError`` when a model
    asked for does not fit this kind of judgment.

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(n_systems=3, n_comparisons=30, random_seed=1).comparisons
    >>> plan_comparison_model(c, AnalyzeOptions())[0].__name__
    'BradleyTerry'
    >>> plan_comparison_model(c, AnalyzeOptions(models=()))[1]
    'no model among the models asked (none)'
    """
    from raterstats.models import BradleyTerry, PlackettLuce, model_class

    right: type[Model] = BradleyTerry if comparisons.kind == "pairs" else PlackettLuce
    if options.models == "auto":
        return right, ""
    classes = [model_class(n) for n in options.models]
    wrong = [c.name for c in classes if c is not right]
    if wrong:
        raise ValueError(
            f"analyze: {', '.join(wrong)} do(es) not fit {comparisons.kind}: the model of "
            f"{comparisons.kind} is {right.name} (models='auto' chooses it)"
        )
    if not classes:
        return None, "no model among the models asked (none)"
    return right, ""


# ----------------------------------------------------------------------------- sections


def data_section(ctx: ComparisonContext) -> list[str]:
    """The summary of the judgments (``summary_*.csv``, ``summary.json``)."""
    summary = ctx.comparisons.summary()
    ctx.folder.csv(summary.cells, "summary_cells.csv")
    ctx.folder.csv(summary.raters, "summary_raters.csv")
    ctx.folder.json(summary.to_dict(), "summary.json")
    return [
        summary.to_markdown().replace("## Comparisons", "## Data summary", 1),
        "Per dimension: `pairs` compared of `possible_pairs`; `components` are the groups of "
        "systems linked by comparisons (above 1, strengths of different groups are not "
        "comparable); `tie_share`; `position_known_share` and `first_preferred_share` (among "
        "untied judgments with the order shown recorded, the share won by the answer shown "
        "first).",
        "",
    ]


def agreement_section(ctx: ComparisonContext) -> list[str]:
    """Agreement between raters per dimension with bootstrap intervals
    (``agreement.csv``)."""
    from raterstats.agreement import comparison_agreement

    o = ctx.options
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # every NaN carries its reason in the table
        ds = comparison_agreement(
            ctx.comparisons,
            statistics=comparison_statistics(ctx.comparisons),
            n_boot=o.n_boot,
            ci_prob=ctx.agreement_ci,
            random_seed=o.random_seed,
        )
    if bool((ds["n_units_total"] - ds["n_units_single"] == 0).all()):
        raise NotApplicable(
            "every unit (question x system pair) was judged by one rater only: no agreement "
            "to measure"
        )
    ctx.agreement = ds
    table = comparison_agreement_table(ds)
    ctx.folder.csv(table, "agreement.csv")
    a = ds.attrs
    notes = [
        str(a[k])
        for k in ("single_rater_units", "repeats", "not_applicable", "undefined")
        if a.get(k)
    ]
    return [
        "## Agreement",
        "",
        f"Units: {escape_markdown(str(a['unit']))}; outcomes {escape_markdown(a['categories'])}"
        f", oriented {escape_markdown(str(a['orientation']))}. Estimates with "
        f"{100 * ctx.agreement_ci:g}% {escape_markdown(str(a['interval']))} intervals "
        f"({o.n_boot} replicates); `undefined` where a statistic has no estimate (the reason is "
        "in `agreement.csv`).",
        "",
        markdown_table(agreement_wide(table.drop("n_units", "outcomes", "reason"))),
        "",
        *[f"- {escape_markdown(' '.join(n.split()))}" for n in notes],
        "",
    ]


def agreement_applies(ctx: ComparisonContext) -> str | None:
    """Agreement needs two or more raters."""
    if len(ctx.comparisons.raters) < 2:
        return f"one rater only ({ctx.comparisons.raters[0]}): no agreement between raters"
    return None


def model_section(ctx: ComparisonContext) -> list[str]:
    """Fit the comparison model and lay out the system strengths with the fit's health
    (``model_strengths.csv``)."""
    from raterstats.models import ModelInputError

    cls = ctx.model
    assert cls is not None  # applies() said so
    settings = ctx.options.settings_for(cls)
    shown = ", ".join(f"{k} {v}" for k, v in settings.items()) or "the model's defaults"
    ctx.say(f"fitting {cls.__name__} ({shown})")
    try:
        dt = cls().fit(
            ctx.comparisons, random_seed=ctx.options.random_seed, progress=False, **settings
        )
    except ModelInputError as err:
        raise NotApplicable(f"{cls.__name__} cannot fit these judgments: {err}") from None
    record_health(dt)
    ctx.fit = dt
    ctx.fits[cls.__name__] = dt
    theta = interval_frame(dt["posterior"].to_dataset()["theta"], "strength", ctx.ci_prob)
    ctx.folder.csv(theta.drop("quantity"), "model_strengths.csv")
    point = str(dt.attrs.get("method", "nuts")) in ("map", "em")
    tab = (
        theta.with_columns(format_interval(point=point).alias("strength"))
        .select("dimension", "system", "strength", "mean")
        .sort("dimension", "mean", descending=[False, True])
        .drop("mean")
    )
    return [
        f"## Comparison model ({escape_markdown(cls.__name__)})",
        "",
        f"`{cls.__name__}()`: {escape_markdown(cls.description)}. Fitted by "
        f"{escape_markdown(how_fitted(dt))}, seed {dt.attrs.get('random_seed')}. Intervals: "
        f"{100 * ctx.ci_prob:g}% equal-tailed.",
        "",
        *health_lines(dt),
        "### System strengths (theta, log-odds scale, zero-sum per dimension)",
        "",
        *banners(dt),
        markdown_table(tab),
        "",
    ]


def model_applies(ctx: ComparisonContext) -> str | None:
    """The model applies when one is planned (:func:`plan_comparison_model`)."""
    return None if ctx.model is not None else ctx.not_planned


def _sections() -> tuple[ComparisonSection, ...]:
    from raterstats.analyze.comparison_rankings import (
        ranking_applies,
        ranking_section,
        rater_applies,
        rater_section,
    )

    return (
        ComparisonSection("data", "Data summary", lambda _c: None, data_section),
        ComparisonSection("agreement", "Agreement", agreement_applies, agreement_section),
        ComparisonSection("model", "Comparison model", model_applies, model_section),
        ComparisonSection("rankings", "System rankings", ranking_applies, ranking_section),
        ComparisonSection(
            "raters", "Rater reliability and position bias", rater_applies, rater_section
        ),
    )


#: the keys of the sections of an analysis of comparative judgments, in report order
COMPARISON_SECTIONS = ("data", "agreement", "model", "rankings", "raters")


def _check_options(options: AnalyzeOptions) -> None:
    """Options of ratings that do not apply to comparative judgments: a ValueError."""
    given = {
        "statistics": options.statistics is not None,
        "schemes": bool(options.schemes),
        "collapse": options.collapse is not None,
        "score_map": options.score_map is not None,
    }
    wrong = [k for k, v in given.items() if v]
    keys = (*COMPARISON_SECTIONS, *RATINGS_ONLY)
    bad = [k for k in options.skip if k not in keys]
    problems = []
    if wrong:
        problems.append(
            f"{', '.join(wrong)} apply to ratings only, not to comparative judgments (the "
            "agreement statistics of comparisons are those of comparison_agreement)"
        )
    if bad:
        problems.append(f"unknown section(s) {bad} in skip; sections: {list(keys)}")
    if problems:
        raise ValueError("analyze: " + "; ".join(problems))


def analyze_comparisons(
    comparisons: Comparisons,
    out: str | Path,
    *,
    options: AnalyzeOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> AnalysisResult:
    """The whole analysis of comparative judgments, written as a report folder
    (:func:`raterstats.analyze.analyze` calls it for :class:`~raterstats.Comparisons`).

    Parameters
    ----------
    comparisons : Comparisons
        Pairs or rankings (:func:`raterstats.read_comparisons`).
    out : path
        Report folder (created if needed).
    options : AnalyzeOptions, optional
        ``models`` (``"auto"``: the model of the kind; ``()``: none), the fit settings,
        ``n_boot``, ``random_seed``, ``ci``, ``skip``, ``title``; the options of ratings
        (``statistics``, ``schemes``, ``collapse``, ``score_map``) are a ``ValueError``.
    progress : callable, optional
        Called with a short message before each step.

    Returns
    -------
    AnalysisResult

    Examples
    --------
    >>> import tempfile
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(n_systems=3, n_raters=3, n_comparisons=90, n_questions=5,
    ...                          random_seed=1).comparisons
    >>> res = analyze_comparisons(c, tempfile.mkdtemp(), options=AnalyzeOptions(models=(),
    ...                           n_boot=20))
    >>> res.sections, res.skipped["model"]
    (['data', 'agreement', 'rankings'], 'no model among the models asked (none)')
    >>> res.skipped["ordinal"][:13]
    'ratings only:'
    """
    from raterstats.analyze.run import AnalysisResult, write_report
    from raterstats.report import methods_paragraph
    from raterstats.version import __version__

    options = options if options is not None else AnalyzeOptions()
    _check_options(options)
    model, why = plan_comparison_model(comparisons, options)
    say = progress or (lambda _msg: None)
    folder = ReportFolder(Path(out))
    ctx = ComparisonContext(comparisons, options, folder, say, model=model, not_planned=why)
    result = AnalysisResult(out=folder.path, report=folder.path / "report.md", html=folder.path)
    body: list[str] = []
    for section in _sections():
        reason = (
            "left out by the options (skip)"
            if section.key in options.skip
            else section.applies(ctx)
        )
        if reason is None:
            say(section.title.lower())
            try:
                body += section.run(ctx)
                result.sections.append(section.key)
                continue
            except NotApplicable as err:
                reason = str(err)
        result.skipped[section.key] = reason
    from raterstats.analyze.sections import SECTIONS

    result.skipped.update({k: f"ratings only: {r}" for k, r in RATINGS_ONLY.items()})
    titles = {s.key: s.title for s in SECTIONS} | {s.key: s.title for s in _sections()}
    title = options.title or (
        "raterstats analysis"
        + (f" of {Path(comparisons.source).name}" if comparisons.source else "")
    )
    say("writing the report")
    write_report(
        result,
        folder,
        title=title,
        intro=f"raterstats {__version__}. Comparative judgments ({comparisons.kind}).",
        description=options.description,
        body=body,
        titles=titles,
        methods=methods_paragraph(ctx.fits) if ctx.fits else "No model was fitted.",
    )
    result.fits = dict(ctx.fits)
    return result


__all__ = [
    "COMPARISON_SECTIONS",
    "RATINGS_ONLY",
    "ComparisonContext",
    "ComparisonSection",
    "NotApplicable",
    "analyze_comparisons",
    "comparison_agreement_table",
    "comparison_statistics",
    "plan_comparison_model",
]
