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
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from raterstats.cli.app import (
    ChainsOpt,
    CiOpt,
    CsvOpt,
    DrawsOpt,
    JsonOpt,
    SamplerOpt,
    SeedOpt,
    TargetAcceptOpt,
    TuneOpt,
    UseGoldOpt,
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
    load_comparisons,
    load_ratings,
)
from raterstats.cli.studyfile import (
    check_choice,
    check_probability,
    fit_methods,
    parse_level_map,
    parse_pairs,
    rank_scores,
)
from raterstats.defaults import (
    AGREEMENT_CONFIDENCE,
    METHOD,
    N_BOOT,
    RANDOM_SEED,
    ci_prob,
)
from raterstats.demo import CATEGORICAL_DRAWS, CATEGORICAL_TUNE, ORDINAL_DRAWS, ORDINAL_TUNE
from raterstats.files import write_atomic
from raterstats.formatting import visible_lines
from raterstats.health import ConvergenceWarning, fit_health
from raterstats.models import MACE, Model, registered_models
from raterstats.ranking import rank_methods
from raterstats.scales import SCORE_MAPS

if TYPE_CHECKING:
    import xarray as xr

#: the model ``raterstats fit`` fits when none is given
DEFAULT_MODEL = MACE.name


def _listing(names: list[str], default: str) -> str:
    """``a (default), b, c or d``."""
    shown = [f"{n} (default)" if n == default else n for n in names]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def model_names_help() -> str:
    """The ``--model`` choices: every registered model with its command-line aliases, and
    ``auto`` (chosen among the models of the true label on the ratings, without gold)."""
    names = [
        name + (f" ({', '.join(cls.cli_names)})" if cls.cli_names else "")
        for name, cls in sorted(registered_models().items())
    ]
    return (
        f"{', '.join(names)}, or auto (the best of the true-label models by held-out "
        f"ratings, no gold) (default {DEFAULT_MODEL})."
    )


def choice_report(dt: xr.DataTree) -> tuple[list[str], list[dict[str, Any]]] | None:
    """A ``--model auto`` fit's comparison: its lines (escaped for the terminal) and its
    rows (for ``--json``); ``None`` for a fit of a named model."""
    from raterstats.choice import choice_lines

    if "model_choice" not in dt.children:
        return None
    table = dt["model_choice"].to_dataset()
    rows = [
        {"model": str(m)} | {str(v): table[v].values[i].item() for v in table.data_vars}
        for i, m in enumerate(table["model"].values)
    ]
    return [visible_lines(line) for line in choice_lines(table)], rows


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
            help="Draws per chain of the ordinal rater model (tuning steps: as many, at most "
            f"{ORDINAL_TUNE}; default: the model's own); 0 skips it.",
        ),
    ] = ORDINAL_DRAWS,
    categorical_draws: Annotated[
        int | None,
        typer.Option(
            "--categorical-draws",
            min=0,
            help="Draws per chain of the MACE fits (tuning steps: as many, at most "
            f"{CATEGORICAL_TUNE}; default: MACE's own, set by the fit's checks); "
            "0 skips it.",
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

    With --comparisons pairs|rankings: the summary of the comparative judgments (per
    dimension: judgments, raters, pairs compared, groups of linked systems, ties, the share
    won by the answer shown first).

    Example: raterstats validate ratings.csv -c item=answer_id -c rater=annotator -s likert5

    Example: raterstats validate rankings.csv --comparisons rankings
    """
    s = data.to_study()
    if s.comparisons is not None:
        from raterstats.cli.comparison_commands import validate_comparisons

        validate_comparisons(load_comparisons(s), as_json=as_json)
        return
    summary = load_ratings(s).summary()
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
            "gwet_ac1, krippendorff_alpha, cohen_kappa, icc, ... (default: five common ones), "
            "with its function's options as NAME:KEY=VALUE,KEY=VALUE, e.g. "
            "krippendorff_alpha:level=interval, cohen_kappa:weights=quadratic, icc:form=ICC1.",
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
    estimate, ci_low, ci_high, counts, the options used, and the reason where a
    statistic does not apply); --csv also writes the table.

    With --comparisons: agreement on the comparative judgments per dimension
    (raterstats.agreement.comparison_agreement; units: question x system pair; statistics
    percent_agreement, side_agreement, fleiss_kappa, randolph_kappa,
    krippendorff_alpha_ordinal (graded), krippendorff_alpha_ordinal_sign,
    krippendorff_alpha_interval_sign).

    Example: raterstats agreement ratings.csv -s likert5 -m krippendorff_alpha:level=interval

    Example: raterstats agreement pairs.csv --comparisons pairs --graded 2 --json
    """
    import warnings

    from raterstats.agreement import (
        DEFAULT_STATISTICS,
        AgreementInputError,
        AgreementUsageError,
        agreement_table,
        parse_statistics,
    )
    from raterstats.agreement import agreement as compute

    output(csv)
    s = data.to_study()
    if s.comparisons is not None:
        from raterstats.cli.comparison_commands import agreement_comparisons, refuse

        refuse("agreement", {"--by": by or s.option("agreement", "by", None, None)})
        table, said = agreement_comparisons(
            load_comparisons(s),
            statistics=statistic or s.option("agreement", "statistics", None, None),
            n_boot=int(s.option("agreement", "n_boot", n_boot, N_BOOT)),
            ci=float(s.option("agreement", "ci", ci, AGREEMENT_CONFIDENCE)),
            seed=int(s.option("agreement", "seed", seed, RANDOM_SEED)),
            as_json=as_json,
            csv=csv,
        )
        for line in _agreement_messages(table, said):
            typer.echo(line, err=True)
        return
    stats = list(statistic or s.option("agreement", "statistics", None, DEFAULT_STATISTICS))
    try:
        specs = parse_statistics(stats)
    except AgreementUsageError as err:
        raise fail(f"agreement: {err}", 2) from None
    ratings = load_ratings(s)
    cells = list(by or s.option("agreement", "by", None, ("dimension", "design")))
    replicates = int(s.option("agreement", "n_boot", n_boot, N_BOOT))
    with (
        spinner(f"agreement: {len(specs)} statistics, {replicates} bootstrap replicates"),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        try:
            ds = compute(
                ratings,
                specs,
                by=cells,
                n_boot=replicates,
                ci_prob=float(s.option("agreement", "ci", ci, AGREEMENT_CONFIDENCE)),
                random_seed=int(s.option("agreement", "seed", seed, RANDOM_SEED)),
            )
        except AgreementUsageError as err:
            raise fail(f"agreement: {err}", 2) from None
        except (AgreementInputError, ValueError, KeyError) as err:
            raise fail(f"agreement: {err}") from None
    table = agreement_table(ds)
    print_frame(table, as_json=as_json, csv=csv)
    for line in _agreement_messages(table, [w.message for w in caught]):
        typer.echo(line, err=True)


def _agreement_messages(table: Any, caught: list[Warning | str]) -> list[str]:
    """The lines ``raterstats agreement`` prints on stderr below its table: a warning per
    statistic that does not apply (or is undefined) in some cells, pointing to the
    ``reason`` column, and every other warning the computation gave (e.g. a nominal
    statistic on a scale with many levels), each ``agreement: warning: ...``.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"statistic": ["cohen_kappa", "fleiss_kappa"], "reason": ["2 raters", ""]})
    >>> _agreement_messages(t, [])
    ['agreement: warning: cohen_kappa has no estimate in 1 of 1 cells; the reason column says why']
    """
    from raterstats.agreement import DegenerateAgreementWarning, NotApplicableWarning
    from raterstats.formatting import visible_lines

    lines = []
    for label in dict.fromkeys(table.get_column("statistic").to_list()):
        rows = table.filter(table.get_column("statistic") == label)
        missing = int((rows.get_column("reason") != "").sum())
        if missing:
            lines.append(
                f"agreement: warning: {label} has no estimate in {missing} of {rows.height} "
                "cells; the reason column says why"
            )
    for message in caught:
        if isinstance(message, NotApplicableWarning | DegenerateAgreementWarning):
            continue  # summarised above, from the table
        lines.append(f"agreement: warning: {str(message).removeprefix('agreement: ')}")
    return [visible_lines(line) for line in lines]


# ----------------------------------------------------------------------------- fit


@app.command()
@data_command
def fit(
    data: DataOptions,
    model: Annotated[str | None, typer.Option("--model", help=model_names_help())] = None,
    method: Annotated[
        str | None, typer.Option("--method", help=_listing(fit_methods(), METHOD) + ".")
    ] = None,
    sampler: SamplerOpt = None,
    draws: DrawsOpt = None,
    tune: TuneOpt = None,
    chains: ChainsOpt = None,
    target_accept: TargetAcceptOpt = None,
    seed: SeedOpt = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Model option KEY=VALUE, e.g. hierarchical=false."),
    ] = None,
    use_gold: UseGoldOpt = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="netCDF file to write (fit.nc).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit a rater model and write the posterior (ArviZ DataTree) as netCDF.

    The file reloads with xarray.open_datatree and is analysed like a fresh fit;
    its attrs hold the model, priors, sampler settings, seed and data fingerprint.
    Gold labels in the ratings clamp the model's labels only with --use-gold; otherwise
    the labels' accuracy and log loss against them are printed.

    With --comparisons the model is bradley-terry for pairs and plackett-luce for rankings
    (the default); a model of ratings given comparative judgments, or the reverse, is a
    usage error.

    Example: raterstats fit ratings.csv -s yes-partially-no --model mace --method em --out fit.nc

    Example: raterstats fit pairs.csv --comparisons pairs --model bradley-terry --out bt.nc
    """
    from raterstats.cli.comparison_commands import check_model_data, echo_fit, fit_model
    from raterstats.cli.labels_command import echo_gold, gold_report, model_spec
    from raterstats.comparisons import Comparisons
    from raterstats.models import ModelInputError

    s = data.to_study()
    target = Path(s.option("fit", "out", out, "fit.nc"))
    output(target)
    asked = fit_model(model or s.option("fit", "model", None, None), s.comparisons)
    spec, settings = model_spec(
        s, "fit", model=asked, method=method, sampler=sampler, draws=draws, tune=tune,
        chains=chains, seed=seed, option=option, use_gold=use_gold, target_accept=target_accept,
    )  # fmt: skip
    if isinstance(spec, Model):
        check_model_data(type(spec), s.comparisons, "fit")
    elif s.comparisons is not None:
        raise fail("fit: --model auto chooses among models of ratings, not comparisons", 2)
    ratings = load_comparisons(s) if s.comparisons is not None else load_ratings(s)
    with spinner(f"fitting {spec!r} ({settings['method']})") as say, warnings.catch_warnings():
        # the fit's health is printed below, line by line, instead of as a Python warning
        warnings.simplefilter("ignore", ConvergenceWarning)
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
    health = fit_health(dt)
    info["health_lines"] = list(health.lines)
    # gold labels are a check unless --use-gold; comparative judgments have none
    gold = None if isinstance(ratings, Comparisons) else gold_report(dt, ratings)
    if gold is not None:
        info["gold_check"] = gold[1]
    choice = choice_report(dt)
    if choice is not None:
        info["model_choice"] = choice[1]
    if as_json:
        typer.echo(json.dumps(info, indent=2, default=str))
    else:
        if choice is not None:
            typer.echo("\n".join(choice[0]))
        echo_fit(info, health, target)
        if gold is not None:
            echo_gold("fit", *gold)


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
        typer.Option(
            "--method",
            help=f"Without --fit: {_listing(list(rank_methods()), 'mean')}; with --comparisons "
            + _listing(list(rank_methods(kind="comparisons")), "bradley_terry_ml")
            + ".",
        ),
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

    With --comparisons: a classical baseline with a bootstrap (--method win_rate, elo or
    bradley_terry_ml), or --fit of a bradley-terry / plackett-luce fit (its strengths).

    Example: raterstats rank ratings.csv --method pyramid --score-map yes_partially_no

    Example: raterstats rank rankings.csv --comparisons rankings --method win_rate
    """
    from raterstats.ranking import rank_systems, rank_table

    output(csv)
    s = data.to_study()
    if s.comparisons is not None or _comparison_fit(s.option("rank", "fit", fit_file, None)):
        _rank_comparisons(s, fit_file, method, score, score_map, n_boot, ci, seed, as_json, csv)
        return
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
    # null intervals that are not certainty (one draw: the uncertainty note says it)
    if ds.attrs.get("constant_scores") and ds.attrs.get("n_draws") != 1:
        typer.echo(f"rank: note: {ds.attrs['constant_scores']}", err=True)
    result_notes("rank", ds)


def _comparison_fit(path: Any) -> bool:
    """Whether ``path`` is a fit of comparative judgments (``False`` for no path, or a
    file that is not a fit: the ratings path then says what is wrong, after its options)."""
    import xarray as xr

    from raterstats.cli.comparison_commands import comparison_model
    from raterstats.models import model_class

    if path is None or not Path(path).is_file():
        return False
    try:
        with xr.open_datatree(Path(path)) as dt:
            cls = model_class(str(dt.attrs.get("model")))
    except Exception:  # not a netCDF fit: open_fit says so on the ratings path
        return False
    return comparison_model(cls) is not None


def _rank_comparisons(
    s: Study, fit_file: Any, method: Any, score: Any, score_map: Any, n_boot: Any, ci: Any,
    seed: Any, as_json: bool, csv: Path | None,
) -> None:  # fmt: skip
    """``rank`` of comparative judgments: a baseline with a bootstrap, or a comparison fit."""
    from raterstats.cli.comparison_commands import rank_source, refuse
    from raterstats.ranking import rank_systems, rank_table

    fit_path = s.option("rank", "fit", fit_file, None)
    refuse(
        "rank",
        {
            "--score": s.option("rank", "score", score, None),
            "--score-map": s.option("rank", "score_map", score_map, None),
            "--method (with --fit)": method if fit_path is not None else None,
        },
    )
    dt = open_fit(Path(fit_path)) if fit_path is not None else None
    if dt is not None and s.data is not None and s.comparisons is None:
        raise fail(
            f"rank: {fit_path} is a fit of comparative judgments: read the data file beside "
            "it with --comparisons pairs|rankings (or leave it out: the fit ranks alone)",
            2,
        )
    comparisons = load_comparisons(s) if s.data is not None else None
    if dt is None and comparisons is None:
        raise fail("rank: no data file and no --fit", 2)
    kwargs = rank_source(comparisons, dt, s.option("rank", "method", method, None))
    src: Any = dt if dt is not None else comparisons
    with spinner("ranking the systems"):
        try:
            ds = rank_systems(
                src,
                ci_prob=float(s.option("rank", "ci", ci, ci_prob())),
                n_boot=int(s.option("rank", "n_boot", n_boot, N_BOOT)),
                random_seed=int(s.option("rank", "seed", seed, RANDOM_SEED)),
                **kwargs,
            )
        except (ValueError, KeyError, TypeError) as err:
            raise fail(f"rank: {err}") from None
    print_frame(rank_table(ds), as_json=as_json, csv=csv)
    if ds.attrs.get("method_notes"):
        typer.echo(visible_lines(f"rank: note: {ds.attrs['method_notes']}"), err=True)
    result_notes("rank", ds)


# ----------------------------------------------------------------------------- designs


@app.command()
def designs(
    fit_file: Annotated[
        Path | None,
        typer.Option(
            "--fit",
            help="A fit of the ordinal model, MACE or Dawid-Skene (raterstats fit --model ...).",
        ),
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
            help="Ordinal fits: map rating levels before agreement, e.g. 1=-1,2=-1,3=0,4=1,5=1.",
        ),
    ] = None,
    ci: CiOpt = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
    csv: CsvOpt = None,
) -> None:
    """Compare annotation designs: reliability per dimension x design from a fit.

    Ordinal fits: the share of latent variance due to the rated unit; MACE / Dawid-Skene fits:
    the raters' kappa against the true label (comparable across label sets) and accuracy.
    With posterior predictive Randolph's kappa and Krippendorff's alpha per design.

    Example: raterstats designs --fit ordinal.nc --level-map 1=-1,2=-1,3=0,4=1,5=1 --json
    """
    from raterstats.design import compare_designs, design_table

    output(csv)
    s = Study.read(study) if study is not None else Study()
    path = s.option("designs", "fit", fit_file, None)
    if path is None:
        raise fail("designs needs --fit FIT.nc (an ordinal, MACE or Dawid-Skene fit)", 2)
    levels = parse_level_map(s.option("designs", "level_map", level_map, None))
    dt = open_fit(Path(path))
    from raterstats.cli.comparison_commands import designs_refusal

    refusal = designs_refusal(dt)
    if refusal is not None:
        raise fail(refusal, 2)
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
    if ds.attrs.get("reliability_measure"):  # what "reliability" is, for this model
        typer.echo(visible_lines(f"reliability: {ds.attrs['reliability_measure']}"), err=as_json)
    if ds.attrs.get("ppc_readout"):  # stdout holds only the JSON with --json
        readout = "Posterior predictive checks:\n" + str(ds.attrs["ppc_readout"])
        typer.echo(visible_lines(readout), err=as_json)
    result_notes("designs", ds)


def result_notes(command: str, ds: Any) -> None:
    """Print a result's ``fit_warning`` and ``uncertainty_note`` (see
    :func:`raterstats.health.flag_result`) on stderr as ``COMMAND: warning: ...`` and
    ``COMMAND: note: ...``."""
    for key, kind in (("fit_warning", "warning"), ("uncertainty_note", "note")):
        if ds.attrs.get(key):
            typer.echo(visible_lines(f"{command}: {kind}: {ds.attrs[key]}"), err=True)


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
