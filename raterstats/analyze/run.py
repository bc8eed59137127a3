"""The whole analysis of any ratings: :func:`analyze` runs each section that applies,
lists the others with their reasons, and writes the report folder (``report.md`` with the
methods paragraph and the file list, the HTML page, every table and figure)."""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import xarray as xr

from raterstats.analyze.context import Context, Progress, Section, SectionSkipped
from raterstats.analyze.fits import method_problems, plan_models
from raterstats.analyze.folder import ReportFolder
from raterstats.analyze.options import AnalyzeOptions
from raterstats.analyze.sections import SECTIONS
from raterstats.comparisons import Comparisons
from raterstats.files import write_atomic
from raterstats.formatting import escape_markdown
from raterstats.ratings import Ratings
from raterstats.version import __version__


@dataclass
class AnalysisResult:
    """What :func:`analyze` did and wrote.

    ``sections`` are the keys of the sections in the report, in order; ``skipped`` maps
    the key of each section left out to the reason; ``fits`` maps a fit's label to the
    fit; ``files`` are every file written (``report.md`` and ``report.html`` first).
    """

    out: Path
    report: Path
    html: Path
    sections: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    fits: dict[str, xr.DataTree] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


def _check_skip(skip: Sequence[str], sections: Sequence[Section]) -> None:
    keys = [s.key for s in sections]
    bad = [k for k in skip if k not in keys]
    if bad:
        hints = "".join(
            f"; {k!r}: did you mean {m[0]!r}?"
            for k in bad
            if (m := difflib.get_close_matches(str(k), keys, n=1))
        )
        raise ValueError(f"analyze: unknown section(s) {bad} in skip{hints}; sections: {keys}")


def _raterstats_warning(w: warnings.WarningMessage) -> bool:
    return issubclass(w.category, UserWarning) and "raterstats" in str(w.filename)


def _run(section: Section, ctx: Context) -> tuple[list[str] | None, str]:
    """The section's lines with its warnings as notes, or ``None`` and the reason it was
    found not to apply."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            lines = section.run(ctx)
        except SectionSkipped as why:
            return None, str(why)
    notes: list[str] = []
    for w in caught:
        if not _raterstats_warning(w):  # not ours to lay out: passed on as it came
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
            continue
        text = f"> **Note:** {escape_markdown(' '.join(str(w.message).split()))}"
        if text not in notes:
            notes += [text]
    if notes and lines:
        lines[2:2] = [*[n + "\n" for n in notes], ""]
    return lines, ""


def _methods(ctx: Context) -> str:
    from raterstats.report import methods_paragraph

    fits = {f.label: f.dt for f in ctx.fits}
    parts = []
    if fits or ctx.agreement:
        parts.append(methods_paragraph(fits, agreement=ctx.agreement[0] if ctx.agreement else None))
    for ds in ctx.agreement[1:]:
        parts.append(methods_paragraph((), agreement=ds, references=False))
    return "\n\n".join(parts) or "No model was fitted and no agreement statistic computed."


def analyze(
    ratings: Ratings | Comparisons,
    out: str | Path,
    *,
    options: AnalyzeOptions | None = None,
    progress: Progress | None = None,
    sections: Sequence[Section] = SECTIONS,
) -> AnalysisResult:
    """The whole analysis of ``ratings``, written as a report folder.

    Every section of ``sections`` (default :data:`~raterstats.analyze.SECTIONS`: the data
    summary and label distributions, agreement, the categorical and ordinal rater models,
    rankings, design comparison, intra-rater reliability, LLM judges) decides from the data
    and options whether it applies; a section that does not is listed under "Sections not
    included" with the reason. Whatever is computed from a fit carries the fit's health: a
    warning banner when the fit fails its checks, a note when it is a point estimate.

    Comparative judgments (:class:`~raterstats.Comparisons`) get their own sections
    (:func:`~raterstats.analyze.comparisons.analyze_comparisons`): data summary, agreement,
    the comparison model, rankings beside the classical baselines, rater reliability and
    position bias.

    Parameters
    ----------
    ratings : Ratings or Comparisons
        The ratings (:func:`raterstats.read_ratings`) or comparative judgments
        (:func:`raterstats.read_comparisons`).
    out : path
        Report folder (created if needed).
    options : AnalyzeOptions, optional
        Models, fit settings, schemes, sections to skip, ... (default: ``AnalyzeOptions()``).
    progress : callable, optional
        Called with a short message before each step.
    sections : sequence of Section
        The sections, in report order.

    Returns
    -------
    AnalysisResult

    Raises
    ------
    TypeError
        When ``ratings`` is neither :class:`~raterstats.Ratings` nor
        :class:`~raterstats.Comparisons`.
    ValueError
        Before any work, when ``skip`` names an unknown section or a model planned for the
        data does not take the fit method asked for.

    Examples
    --------
    >>> import tempfile
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    >>> res = analyze(r, tempfile.mkdtemp(), options=AnalyzeOptions(method="em", n_boot=50))
    >>> res.sections
    ['data', 'agreement', 'categorical']
    >>> print(res.skipped["designs"])  # doctest: +NORMALIZE_WHITESPACE
    the data have one annotation design (single); a design column with two or more designs
    is needed to compare them
    """
    if isinstance(ratings, Comparisons):  # pairs or rankings: their own sections
        from raterstats.analyze.comparisons import analyze_comparisons

        return analyze_comparisons(ratings, out, options=options, progress=progress)
    if not isinstance(ratings, Ratings):
        raise TypeError(
            f"analyze: expected Ratings (raterstats.read_ratings) or Comparisons "
            f"(raterstats.read_comparisons), got {type(ratings).__name__}"
        )
    options = options if options is not None else AnalyzeOptions()
    if not isinstance(options, AnalyzeOptions):
        raise TypeError(f"analyze: options must be AnalyzeOptions, got {type(options).__name__}")
    _check_skip(options.skip, sections)
    planned, why = plan_models(ratings, options)
    problems = method_problems(planned, options)
    if problems:
        raise ValueError("analyze: " + "; ".join(problems))
    say = progress or (lambda _msg: None)
    folder = ReportFolder(Path(out))
    ctx = Context(ratings, options, folder, say, models=planned, not_planned=why)
    body: list[str] = []
    result = AnalysisResult(out=folder.path, report=folder.path / "report.md", html=folder.path)
    for section in sections:
        reason = (
            "left out by the options (skip)"
            if section.key in options.skip
            else section.applies(ctx)
        )
        if reason is None:
            say(section.title.lower())
            lines, reason = _run(section, ctx)
            if lines is not None:
                body += lines
                result.sections.append(section.key)
                continue
        result.skipped[section.key] = reason
    title = options.title or (
        "raterstats analysis" + (f" of {Path(ratings.source).name}" if ratings.source else "")
    )
    say("writing the report")
    write_report(
        result,
        folder,
        title=title,
        intro=f"raterstats {__version__}.",
        description=options.description,
        body=body,
        titles={s.key: s.title for s in sections},
        methods=_methods(ctx),
    )
    result.fits = {f.label: f.dt for f in ctx.fits}
    return result


def write_report(
    result: AnalysisResult,
    folder: ReportFolder,
    *,
    title: str,
    intro: str,
    description: str | None,
    body: Sequence[str],
    titles: dict[str, str],
    methods: str,
) -> None:
    """Write ``report.md`` (title, ``intro`` and the description, the sections' ``body``,
    the sections not included with their reasons from ``result.skipped``, the methods
    paragraph and the files) and the HTML report of ``folder``; set ``result.html`` and
    ``result.files``. Every user string is escaped (``title``, ``description``, reasons).
    Shared by the analyses of ratings and of comparative judgments."""
    skipped = [
        f"- **{escape_markdown(titles[k])}**: {escape_markdown(r)}."
        for k, r in result.skipped.items()
    ]
    text = [
        f"# {escape_markdown(title)}",
        "",
        intro + (f" Data: {escape_markdown(description)}" if description else ""),
        "",
        *body,
        "## Sections not included",
        "",
        *(skipped or ["Every section applies to these data."]),
        "",
        "## Methods",
        "",
        methods.strip(),
        "",
        "## Files",
        "",
        *[f"- [`{p.name}`]({p.name})" for p in folder.files],
        "",
    ]
    from raterstats.report import report as write_html_report

    write_atomic(result.report, lambda tmp: tmp.write_text("\n".join(text), encoding="utf-8"))
    result.html = write_html_report(folder.path, title=title)
    result.files = [result.report, result.html, *folder.files]


__all__ = ["AnalysisResult", "analyze", "write_report"]
