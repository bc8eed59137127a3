"""``raterstats analyze``: the whole analysis of a ratings file, written as a report folder
(:func:`raterstats.analyze.analyze`), with the data options of every data command and the
``[analyze]`` table of the study file."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from raterstats.cli.app import CiOpt, SeedOpt, app, fail, output, spinner
from raterstats.cli.study import DataOptions, Study, data_command, load_data, parse_value
from raterstats.cli.studyfile import check_choice, fit_methods, parse_pairs, scheme_of
from raterstats.defaults import METHOD, N_BOOT, RANDOM_SEED, SAMPLER
from raterstats.formatting import visible_lines
from raterstats.inference import SAMPLERS
from raterstats.scales import COLLAPSES, SCORE_MAPS

#: the report folder ``raterstats analyze`` writes when none is given
DEFAULT_OUT = Path("raterstats-report")


def _section_keys() -> str:
    from raterstats.analyze import COMPARISON_SECTIONS, SECTIONS

    return (
        ", ".join(s.key for s in SECTIONS)
        + f"; with --comparisons: {', '.join(COMPARISON_SECTIONS)}"
    )


def _per_model(
    table: Any, pairs: list[str] | None, flag: str, what: str, example: str
) -> dict[str, dict[str, Any]]:
    """One table per model: the study file's ``table`` with the command line's ``flag``
    pairs ``MODEL.KEY=VALUE`` over it; a usage error (exit 2) for a pair without a model."""
    out: dict[str, dict[str, Any]] = {str(k): dict(v) for k, v in dict(table).items()}
    for spec, value in parse_pairs(pairs, flag).items():
        model, sep, key = spec.partition(".")
        if not sep:
            raise typer.BadParameter(
                f"{flag} takes MODEL.{what}=VALUE (e.g. {example}), got {spec!r}"
            )
        out.setdefault(model, {})[key] = parse_value(value)
    return out


def analyze_options(s: Study, given: dict[str, Any]) -> Any:
    """The :class:`~raterstats.analyze.AnalyzeOptions` of the command line (``given``: the
    options given, ``None`` when not) over the study file's ``[analyze]`` table; a usage
    error (exit 2) naming what is wrong."""
    from raterstats.analyze import AnalyzeOptions

    g = given.get
    # each key read by name, so that the schema test sees every key the command reads
    values = {
        "title": s.option("analyze", "title", g("title"), None),
        "models": s.option("analyze", "models", g("models"), ["auto"]),
        "method": s.option("analyze", "method", g("method"), None),
        "sampler": s.option("analyze", "sampler", g("sampler"), None),
        "draws": s.option("analyze", "draws", g("draws"), None),
        "tune": s.option("analyze", "tune", g("tune"), None),
        "chains": s.option("analyze", "chains", g("chains"), None),
        "n_boot": s.option("analyze", "n_boot", g("n_boot"), N_BOOT),
        "seed": s.option("analyze", "seed", g("seed"), RANDOM_SEED),
        "ci": s.option("analyze", "ci", g("ci"), None),
        "statistics": s.option("analyze", "statistics", None, None),
        "categorical_collapse": s.option(
            "analyze", "categorical_collapse", g("categorical_collapse"), None
        ),
        "score_map": s.option("analyze", "score_map", g("score_map"), None),
        "schemes": s.option("analyze", "schemes", None, {}),
        "skip": s.option("analyze", "skip", g("skip"), ()),
        "projections": s.option("analyze", "projections", g("projections"), True),
    }

    def opt(key: str, default: Any = None) -> Any:
        return values[key] if values[key] is not None else default

    models: Any = opt("models", ["auto"])
    models = [m for m in models if m != "none"]
    models = "auto" if list(models) == ["auto"] else tuple(models)
    if models != "auto" and "auto" in models:
        raise typer.BadParameter("--model auto chooses the models itself: give it alone")
    settings = _per_model(
        s.option("analyze", "fit", None, {}), given.get("model_settings"), "--fit-setting",
        "SETTING", "ordinal.method=map",
    )  # fmt: skip
    model_options = _per_model(
        s.option("analyze", "model_options", None, {}), given.get("model_options"),
        "--model-option", "OPTION", "mace.centred=raters",
    )  # fmt: skip
    method = opt("method")
    if method is not None:
        check_choice(method, fit_methods(), "--method")
    sampler = opt("sampler")
    if sampler is not None:
        check_choice(sampler, list(SAMPLERS), "--sampler")
    collapse = opt("categorical_collapse")
    if collapse is not None:
        check_choice(collapse, sorted(COLLAPSES), "--categorical-collapse")
    score_map = opt("score_map")
    if isinstance(score_map, str):
        check_choice(score_map, sorted(SCORE_MAPS), "--score-map")
    schemes = tuple(scheme_of(k, v) for k, v in dict(opt("schemes", {})).items())
    try:
        return AnalyzeOptions(
            title=opt("title"),
            models=models,
            method=method,
            draws=opt("draws"),
            tune=opt("tune"),
            chains=opt("chains"),
            sampler=sampler,
            fit_settings=settings,
            model_options=model_options,
            n_boot=int(opt("n_boot", N_BOOT)),
            random_seed=int(opt("seed", RANDOM_SEED)),
            ci=opt("ci"),
            statistics=opt("statistics"),
            schemes=schemes,
            collapse=collapse,
            score_map=score_map,
            skip=tuple(opt("skip", ())),
            design_projections=bool(opt("projections", True)),
        )
    except ValueError as err:
        raise typer.BadParameter(str(err).removeprefix("AnalyzeOptions: ")) from None


@app.command()
@data_command
def analyze(
    data: DataOptions,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help=f"Report folder to write (default {DEFAULT_OUT})."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="Rater model (repeatable): auto (default: chosen by the scales; for "
            "--comparisons the model of their kind), none, or a registered name or alias "
            "(mace, dawid-skene, ordinal, bradley-terry, plackett-luce).",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option("--method", help=f"How to fit every model (each model's default: {METHOD})."),
    ] = None,
    sampler: Annotated[
        str | None,
        typer.Option("--sampler", help=f"NUTS sampler: {', '.join(SAMPLERS)} ({SAMPLER})."),
    ] = None,
    draws: Annotated[
        int | None,
        typer.Option("--draws", min=1, help="Draws per chain (default: each model's own)."),
    ] = None,
    tune: Annotated[
        int | None,
        typer.Option("--tune", min=1, help="Tuning steps per chain (default: each model's own)."),
    ] = None,
    chains: Annotated[
        int | None, typer.Option("--chains", min=1, help="Chains (default: each model's own).")
    ] = None,
    fit_setting: Annotated[
        list[str] | None,
        typer.Option(
            "--fit-setting",
            help="One model's setting MODEL.SETTING=VALUE (repeatable): method, draws, tune, "
            "chains, sampler or target_accept, e.g. ordinal.method=map or "
            "ordinal.target_accept=0.95.",
        ),
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(
            "--model-option",
            help="One model's option MODEL.OPTION=VALUE (repeatable), as `raterstats fit "
            "--option` takes it, e.g. mace.centred=raters or mace.hierarchical=false.",
        ),
    ] = None,
    n_boot: Annotated[
        int | None,
        typer.Option("--n-boot", min=0, help=f"Bootstrap replicates ({N_BOOT})."),
    ] = None,
    ci: CiOpt = None,
    seed: SeedOpt = None,
    categorical_collapse: Annotated[
        str | None,
        typer.Option(
            "--categorical-collapse",
            help="Fit the categorical models on the ratings collapsed by this name "
            f"({', '.join(sorted(COLLAPSES))}); asking for it fits them to ordinal ratings.",
        ),
    ] = None,
    score_map: Annotated[
        str | None,
        typer.Option("--score-map", help="Scores of categorical labels for the rankings."),
    ] = None,
    skip: Annotated[
        list[str] | None,
        typer.Option("--skip", help="Leave a section out (repeatable); sections: see below."),
    ] = None,
    projections: Annotated[
        bool | None,
        typer.Option(
            "--projections/--no-projections",
            help="Add the simulated annotation-budget projection (needs durations; slow).",
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Title of the report.")] = None,
) -> None:
    """The whole analysis of a ratings file, written as a report folder.

    Data summary, label distributions, agreement with intervals, the rater models the
    scales call for, rankings (with a system column), design comparison (two or more
    designs), intra-rater reliability (repeats) and LLM judges (rater_kind): each section
    that applies; the others are listed with the reason. Every result from a fit carries
    the fit's health.

    With --comparisons pairs|rankings: data summary, agreement, the comparison model
    (bradley-terry for pairs, plackett-luce for rankings), rankings beside win rate, Elo
    and maximum-likelihood Bradley-Terry, rater reliability and position bias.

    Example: raterstats analyze ratings.csv -c rater=annotator -s likert5 --out report

    Example: raterstats analyze rankings.csv --comparisons rankings --out report
    """
    from raterstats.analyze import analyze as run_analysis
    from raterstats.analyze import fit_health
    from raterstats.health import ConvergenceWarning

    s = data.to_study()
    given = {
        "models": model,
        "method": method,
        "sampler": sampler,
        "draws": draws,
        "tune": tune,
        "chains": chains,
        "model_settings": fit_setting,
        "model_options": model_option,
        "n_boot": n_boot,
        "ci": ci,
        "seed": seed,
        "categorical_collapse": categorical_collapse,
        "score_map": score_map,
        "skip": skip,
        "projections": projections,
        "title": title,
    }
    options = analyze_options(s, given)
    target = Path(s.option("analyze", "out", out, DEFAULT_OUT))
    output(target, folder=True)
    ratings = load_data(s)  # Ratings, or Comparisons with --comparisons
    with spinner("starting") as progress, warnings.catch_warnings():
        # a failing fit's ConvergenceWarning is said below, with what failed, as a
        # `analyze: warning:` line (and in the report): not twice
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            result = run_analysis(ratings, target, options=options, progress=progress)
        except ValueError as err:
            if "analyze:" not in str(err):
                raise
            raise fail(str(err), 2) from None
    for label, dt in result.fits.items():
        ok, text = fit_health(dt)
        if not ok:
            what = text.splitlines()[0] if text else ""
            typer.echo(
                visible_lines(
                    f"analyze: warning: the {label} fit fails its convergence checks"
                    + (f" ({what})" if what else "")
                    + "; the report flags every result computed from it"
                ),
                err=True,
            )
        if str(dt.attrs.get("method", "nuts")) in ("map", "em"):
            typer.echo(
                f"analyze: note: the {label} fit is a point estimate "
                f"({str(dt.attrs['method']).upper()}): its results have no posterior uncertainty",
                err=True,
            )
    typer.echo(f"Report written to {result.report.resolve()}")
    typer.echo(f"HTML report: {result.html.resolve()}")
    typer.echo(f"Sections: {', '.join(result.sections)}")
    for key, reason in result.skipped.items():
        typer.echo(f"Not included: {key}: {reason}")
    typer.echo(f"({len(result.files)} files in {result.out.resolve()})")


analyze.__doc__ = inspect.cleandoc(analyze.__doc__ or "") + f"\n\nSections: {_section_keys()}."

__all__ = ["DEFAULT_OUT", "analyze", "analyze_options"]
