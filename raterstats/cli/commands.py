"""The commands of the ``raterstats`` command line: ``validate``, ``agreement``, ``fit``,
``rank``, ``designs``, ``demo`` and ``report``.

Each command reads its options (the command line first, then the study file, then the
library's defaults from :mod:`raterstats.defaults`), calls one library function and prints
its result. No command knows a model by name: models are resolved, listed and described
through the registry (:func:`raterstats.models.model_class`,
:func:`raterstats.models.registered_models`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from raterstats.cli.app import (
    CiOpt,
    CsvOpt,
    JsonOpt,
    SeedOpt,
    app,
    fail,
    open_fit,
    output,
    print_frame,
    spinner,
)
from raterstats.cli.study import (
    DataOptions,
    Study,
    StudyOpt,
    data_command,
    load_ratings,
    parse_value,
)
from raterstats.cli.studyfile import (
    check_choice,
    check_probability,
    did_you_mean,
    fit_methods,
    parse_level_map,
    parse_pairs,
    rank_scores,
)
from raterstats.defaults import (
    AGREEMENT_CONFIDENCE,
    CHAINS,
    DRAWS,
    METHOD,
    N_BOOT,
    RANDOM_SEED,
    SAMPLER,
    TUNE,
    ci_prob,
)
from raterstats.demo import CATEGORICAL_DRAWS, ORDINAL_DRAWS
from raterstats.files import write_atomic
from raterstats.inference import SAMPLERS
from raterstats.models import MACE, registered_models
from raterstats.ranking import rank_methods
from raterstats.scales import SCORE_MAPS

#: the model ``raterstats fit`` fits when none is given
DEFAULT_MODEL = MACE.name


def _listing(names: list[str], default: str) -> str:
    """``a (default), b, c or d``."""
    shown = [f"{n} (default)" if n == default else n for n in names]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def model_names_help() -> str:
    """The ``--model`` choices: every registered model with its command-line aliases."""
    names = [
        name + (f" ({', '.join(cls.cli_names)})" if cls.cli_names else "")
        for name, cls in sorted(registered_models().items())
    ]
    return f"{', '.join(names)} (default {DEFAULT_MODEL})."


# ----------------------------------------------------------------------------- demo


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Report folder to write.")] = Path(
        "raterstats-report"
    ),
    ordinal_draws: Annotated[
        int | None,
        typer.Option(
            "--ordinal-draws",
            min=0,
            help="Draws (and tuning steps) per chain of the ordinal rater model (default: the "
            "model's own); 0 skips it.",
        ),
    ] = ORDINAL_DRAWS,
    categorical_draws: Annotated[
        int,
        typer.Option(
            "--categorical-draws",
            min=0,
            help="Draws (and tuning steps) per chain of the MACE model; 0 skips it.",
        ),
    ] = CATEGORICAL_DRAWS,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Random seed of every step.")
    ] = RANDOM_SEED,
) -> None:
    """Analyse the built-in clinical-QA study and write a report folder.

    The same analysis as `raterstats analyze`, on the built-in study with the rating
    schemes of the published clinical-QA analysis.

    Example: raterstats demo --out raterstats-report
    """
    from raterstats.analyze import fit_health
    from raterstats.demo import run_demo

    output(out, folder=True)
    with spinner("starting") as progress:
        result = run_demo(
            out,
            progress=progress,
            ordinal_draws=ordinal_draws,
            categorical_draws=categorical_draws,
            random_seed=seed,
        )
    for label, dt in result.fits.items():
        if not fit_health(dt)[0]:
            typer.echo(
                f"demo: warning: the {label} fit fails its convergence checks; the report "
                "flags every result computed from it; rerun with more draws "
                "(--ordinal-draws / --categorical-draws)",
                err=True,
            )
    typer.echo(f"Report written to {result.report.resolve()}")
    typer.echo(f"HTML report: {(result.out / 'report.html').resolve()}")
    typer.echo(f"({len(result.files)} files in {result.out.resolve()})")


# ----------------------------------------------------------------------------- validate


@app.command()
@data_command
def validate(data: DataOptions, as_json: JsonOpt = False) -> None:
    """Read and validate a ratings file; print its summary, or every problem found.

    Exits with status 1 when the file has problems, listing each problem
    with its row, column, value and what was expected.

    Example: raterstats validate ratings.csv -c item=answer_id -c rater=annotator -s likert5
    """
    summary = load_ratings(data.to_study()).summary()
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), indent=2, default=str))
    else:
        typer.echo(summary.to_markdown())


# ----------------------------------------------------------------------------- agreement


@app.command()
@data_command
def agreement(
    data: DataOptions,
    statistic: Annotated[
        list[str] | None,
        typer.Option(
            "--statistic",
            "-m",
            help="Statistic (repeatable): percent_agreement, fleiss_kappa, randolph_kappa, "
            "gwet_ac1, krippendorff_alpha, cohen_kappa, icc, ... (default: five common ones).",
        ),
    ] = None,
    by: Annotated[
        list[str] | None,
        typer.Option("--by", help="Split into cells by these columns (default dimension, design)."),
    ] = None,
    n_boot: Annotated[
        int | None,
        typer.Option("--n-boot", min=0, help=f"Bootstrap replicates ({N_BOOT}; 0: no intervals)."),
    ] = None,
    ci: Annotated[
        float | None,
        typer.Option(
            "--ci",
            callback=check_probability,
            help=f"Interval coverage ({AGREEMENT_CONFIDENCE}).",
        ),
    ] = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    csv: CsvOpt = None,
) -> None:
    """Classical agreement per dimension x design with item-bootstrap intervals.

    Prints a Markdown table, or JSON records with --json (statistic, cell,
    estimate, ci_low, ci_high, counts); --csv also writes the table.

    Example: raterstats agreement ratings.csv -s likert5 -m randolph_kappa --json
    """
    from raterstats.agreement import (
        AGREEMENT_STATISTICS,
        DEFAULT_STATISTICS,
        AgreementInputError,
        agreement_table,
    )
    from raterstats.agreement import agreement as compute

    output(csv)
    s = data.to_study()
    stats = list(statistic or s.option("agreement", "statistics", None, DEFAULT_STATISTICS))
    unknown = [x for x in stats if x not in AGREEMENT_STATISTICS]
    if unknown:
        hint = did_you_mean(unknown[0], list(AGREEMENT_STATISTICS))
        raise fail(f"unknown statistic(s) {unknown}{hint}; known: {list(AGREEMENT_STATISTICS)}", 2)
    ratings = load_ratings(s)
    cells = list(by or s.option("agreement", "by", None, ("dimension", "design")))
    replicates = int(s.option("agreement", "n_boot", n_boot, N_BOOT))
    with spinner(f"agreement: {len(stats)} statistics, {replicates} bootstrap replicates"):
        try:
            ds = compute(
                ratings,
                stats,
                by=cells,
                n_boot=replicates,
                ci_prob=float(s.option("agreement", "ci", ci, AGREEMENT_CONFIDENCE)),
                random_seed=int(s.option("agreement", "seed", seed, RANDOM_SEED)),
            )
        except (AgreementInputError, ValueError, KeyError) as err:
            raise fail(f"agreement: {err}") from None
    print_frame(agreement_table(ds), as_json=as_json, csv=csv)


# ----------------------------------------------------------------------------- fit


@app.command()
@data_command
def fit(
    data: DataOptions,
    model: Annotated[str | None, typer.Option("--model", help=model_names_help())] = None,
    method: Annotated[
        str | None, typer.Option("--method", help=_listing(fit_methods(), METHOD) + ".")
    ] = None,
    sampler: Annotated[
        str | None,
        typer.Option("--sampler", help=f"NUTS sampler: {_listing(list(SAMPLERS), SAMPLER)}."),
    ] = None,
    draws: Annotated[
        int | None, typer.Option("--draws", min=1, help=f"Draws per chain ({DRAWS}).")
    ] = None,
    tune: Annotated[
        int | None, typer.Option("--tune", min=1, help=f"Tuning steps per chain ({TUNE}).")
    ] = None,
    chains: Annotated[
        int | None, typer.Option("--chains", min=1, help=f"Chains ({CHAINS}).")
    ] = None,
    seed: SeedOpt = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Model option KEY=VALUE, e.g. hierarchical=false."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="netCDF file to write (fit.nc).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit a rater model and write the posterior (ArviZ DataTree) as netCDF.

    The file reloads with xarray.open_datatree and is analysed like a fresh fit;
    its attrs hold the model, priors, sampler settings, seed and data fingerprint.

    Example: raterstats fit ratings.csv -s yes-partially-no --model mace --method em --out fit.nc
    """
    from raterstats.models import ModelInputError, model_class

    s = data.to_study()
    target = Path(s.option("fit", "out", out, "fit.nc"))
    output(target)
    name = str(s.option("fit", "model", model, DEFAULT_MODEL))
    try:
        cls = model_class(name)
    except ValueError as err:
        raise fail(str(err), 2) from None
    options = dict(s.option("fit", "options", None, {}))
    options.update({k: parse_value(v) for k, v in parse_pairs(option, "--option").items()})
    try:
        spec = cls(**options)
    except (TypeError, ValueError) as err:
        raise fail(f"model {name}: {err}", 2) from None
    settings: dict[str, Any] = {
        "method": check_choice(s.option("fit", "method", method, METHOD), cls.methods, "--method"),
        "sampler": check_choice(
            s.option("fit", "sampler", sampler, SAMPLER), SAMPLERS, "--sampler"
        ),
        "draws": int(s.option("fit", "draws", draws, DRAWS)),
        "tune": int(s.option("fit", "tune", tune, TUNE)),
        "chains": int(s.option("fit", "chains", chains, CHAINS)),
        "random_seed": int(s.option("fit", "seed", seed, RANDOM_SEED)),
    }
    ratings = load_ratings(s)
    with spinner(f"fitting {spec!r} ({settings['method']})") as say:
        try:
            dt = spec.fit(ratings, progress=False, **settings)
        except ModelInputError:
            raise  # bad data: exit 1 with every problem listed (RaterstatsGroup)
        except (ValueError, NotImplementedError) as err:  # bad settings: a usage error
            raise fail(f"fit: {err}", 2) from None
        say(f"writing {target}")
        write_atomic(target, dt.to_netcdf)
    info = {"file": str(target), **{k: dt.attrs[k] for k in dt.attrs}}
    if "diverging" in dt["sample_stats"].data_vars:
        info["divergences"] = int(dt["sample_stats"]["diverging"].sum())
    if as_json:
        typer.echo(json.dumps(info, indent=2, default=str))
    else:
        typer.echo(
            f"{info['model']} fitted by {info['method']} in {float(info['fit_seconds']):.1f} s; "
            f"written to {target}"
        )


# ----------------------------------------------------------------------------- rank


@app.command()
@data_command
def rank(
    data: DataOptions,
    fit_file: Annotated[
        Path | None,
        typer.Option(
            "--fit",
            help="A fit written by `raterstats fit`: ranks from the fit alone, or with the "
            "ratings when a data source is given too.",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option("--method", help=f"Without --fit: {_listing(list(rank_methods()), 'mean')}."),
    ] = None,
    score: Annotated[
        str | None,
        typer.Option("--score", help="Ordinal fit: fair_average (default) or latent."),
    ] = None,
    score_map: Annotated[
        str | None,
        typer.Option("--score-map", help="Scores of categorical labels, e.g. yes_partially_no."),
    ] = None,
    n_boot: Annotated[
        int | None,
        typer.Option("--n-boot", min=0, help=f"Case-bootstrap replicates ({N_BOOT})."),
    ] = None,
    ci: CiOpt = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    csv: CsvOpt = None,
) -> None:
    """Rank the systems with uncertainty: score interval, expected rank, P(best).

    From raw ratings (mean, majority or Pyramid score with a case bootstrap)
    or from a fit (--fit fit.nc).

    Example: raterstats rank ratings.csv --method pyramid --score-map yes_partially_no
    """
    from raterstats.ranking import rank_systems, rank_table

    output(csv)
    s = data.to_study()
    kwargs: dict[str, Any] = {
        "ci_prob": float(s.option("rank", "ci", ci, ci_prob())),
        "n_boot": int(s.option("rank", "n_boot", n_boot, N_BOOT)),
        "random_seed": int(s.option("rank", "seed", seed, RANDOM_SEED)),
    }
    sm = s.option("rank", "score_map", score_map, None)
    if sm is not None:
        if isinstance(sm, str):
            check_choice(sm, list(SCORE_MAPS), "--score-map")
        kwargs["score_map"] = sm
    fit_path = s.option("rank", "fit", fit_file, None)
    src: Any
    if fit_path is not None:
        scores = rank_scores()
        kwargs["score"] = check_choice(
            s.option("rank", "score", score, scores[0]), scores, "--score"
        )
        src = open_fit(Path(fit_path))
        if s.data is not None:
            kwargs["ratings"] = load_ratings(s)
    else:
        chosen = s.option("rank", "method", method, "mean")
        kwargs["method"] = check_choice(chosen, list(rank_methods()), "--method")
        src = load_ratings(s)
    with spinner("ranking the systems"):
        try:
            ds = rank_systems(src, **kwargs)
        except (ValueError, KeyError, TypeError) as err:
            raise fail(f"rank: {err}") from None
    print_frame(rank_table(ds), as_json=as_json, csv=csv)
    if ds.attrs.get("constant_scores"):  # null intervals that are not certainty
        typer.echo(f"rank: note: {ds.attrs['constant_scores']}", err=True)


# ----------------------------------------------------------------------------- designs


@app.command()
def designs(
    fit_file: Annotated[
        Path | None,
        typer.Option("--fit", help="A fit of the ordinal model (raterstats fit --model ordinal)."),
    ] = None,
    study: StudyOpt = None,
    n_replicates: Annotated[
        int | None,
        typer.Option(
            "--n-replicates",
            min=0,
            help="Posterior predictive replicates for kappa / alpha per design (100; 0 skips).",
        ),
    ] = None,
    level_map: Annotated[
        str | None,
        typer.Option(
            "--level-map",
            help="Map rating levels before agreement, e.g. 1=-1,2=-1,3=0,4=1,5=1 (3-point).",
        ),
    ] = None,
    ci: CiOpt = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    csv: CsvOpt = None,
) -> None:
    """Compare annotation designs: reliability per dimension x design from an ordinal fit.

    With posterior predictive Randolph's kappa and Krippendorff's alpha per design.

    Example: raterstats designs --fit ordinal.nc --level-map 1=-1,2=-1,3=0,4=1,5=1 --json
    """
    from raterstats.design import compare_designs, design_table

    output(csv)
    s = Study.read(study) if study is not None else Study()
    path = s.option("designs", "fit", fit_file, None)
    if path is None:
        raise fail("designs needs --fit FIT.nc (an OrdinalRaters fit)", 2)
    levels = parse_level_map(s.option("designs", "level_map", level_map, None))
    dt = open_fit(Path(path))
    with spinner("comparing designs"):
        try:
            ds = compare_designs(
                dt,
                n_replicates=int(s.option("designs", "n_replicates", n_replicates, 100)),
                level_map=levels,
                ci_prob=float(s.option("designs", "ci", ci, ci_prob())),
                random_seed=int(s.option("designs", "seed", seed, RANDOM_SEED)),
            )
        except (ValueError, KeyError) as err:
            raise fail(f"designs: {err}") from None
    print_frame(design_table(ds), as_json=as_json, csv=csv)


# ----------------------------------------------------------------------------- report


@app.command()
def report(
    folder: Annotated[
        Path, typer.Argument(help="Results folder with a report.md (e.g. from `demo`).")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="HTML file to write (default FOLDER/report.html)."),
    ] = None,
    fit_files: Annotated[
        list[str] | None,
        typer.Option(
            "--fit",
            help="LABEL=FIT.nc (repeatable): fits whose models, priors, sampler settings, "
            "versions and seeds the Methods section states.",
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Page title.")] = None,
) -> None:
    """Write one self-contained HTML report of a results folder.

    Figures embedded, tables rendered, a table of contents; the CSV tables stay beside it.

    Example: raterstats report raterstats-report --fit MACE=fit.nc
    """
    from raterstats.report import methods_paragraph
    from raterstats.report import report as write_report

    output(out)
    methods = None
    if fit_files:
        fits = {k: open_fit(Path(v)) for k, v in parse_pairs(fit_files, "--fit").items()}
        try:
            methods = methods_paragraph(fits)
        except (ValueError, TypeError) as err:
            raise fail(f"report: {err}", 2) from None
    try:
        path = write_report(folder, out=out, title=title, methods=methods)
    except (FileNotFoundError, ValueError) as err:
        raise fail(str(err)) from None
    typer.echo(f"Report written to {path.resolve()}")


__all__ = [
    "DEFAULT_MODEL",
    "agreement",
    "demo",
    "designs",
    "fit",
    "fit_methods",
    "model_names_help",
    "parse_level_map",
    "rank",
    "report",
    "validate",
]
