"""The ``raterstats`` command line.

Examples::

    raterstats demo --out raterstats-report
    raterstats validate ratings.csv --column item=answer_id --column rater=annotator \\
        --scale likert5
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from raterstats._version import __version__
from raterstats.ingest import RatingsError, read_ratings
from raterstats.scales import IntervalScale, NominalScale, OrdinalScale, Scale

app = typer.Typer(
    name="raterstats",
    help=(
        "Statistics of human and LLM ratings: agreement, Bayesian annotator models, "
        "system rankings and annotation designs.\n\nExample: raterstats demo"
    ),
    no_args_is_help=True,
    add_completion=False,
)
console = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"raterstats {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = None,
) -> None:
    """raterstats command line."""


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Report folder to write.")] = Path(
        "raterstats-report"
    ),
    ordinal_draws: Annotated[
        int,
        typer.Option(
            "--ordinal-draws",
            help="Draws (and tuning steps) per chain of the ordinal rater model; 0 skips it.",
        ),
    ] = 500,
    categorical_draws: Annotated[
        int,
        typer.Option(
            "--categorical-draws",
            help="Draws (and tuning steps) per chain of the MACE model; 0 skips it.",
        ),
    ] = 500,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of every step.")] = 1,
) -> None:
    """Analyse the built-in clinical-QA study and write a report folder.

    Example: raterstats demo --out raterstats-report
    """
    from raterstats.demo import run_demo

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task("starting", total=None)

        def progress(msg: str) -> None:
            bar.update(task, description=msg)
            bar.console.log(msg)

        result = run_demo(
            out,
            progress=progress,
            ordinal_draws=ordinal_draws,
            categorical_draws=categorical_draws,
            random_seed=seed,
        )
        bar.update(task, description="done")
    typer.echo(f"Report written to {result.report.resolve()}")
    typer.echo(f"({len(result.files)} files in {result.out.resolve()})")


_NAMED_SCALES = {
    "likert5": lambda: OrdinalScale.likert(5),
    "likert7": lambda: OrdinalScale.likert(7),
    "likert3": lambda: OrdinalScale([-1, 0, 1], ["disagree", "neutral", "agree"]),
    "binary": lambda: OrdinalScale([0, 1], ["no", "yes"]),
    "yes-partially-no": lambda: NominalScale(["yes", "partially", "no"]),
    "yes-no-refutes": lambda: NominalScale(["yes", "no", "refutes"]),
    "interval": lambda: IntervalScale(),
}


def _parse_scale(text: str) -> Scale:
    if text in _NAMED_SCALES:
        return _NAMED_SCALES[text]()
    kind, _, levels = text.partition(":")
    parts = [p.strip() for p in levels.split(",") if p.strip()]
    if kind in ("ordinal", "nominal") and parts:
        vals: list[str | int | float] = []
        for p in parts:
            try:
                vals.append(int(p))
            except ValueError:
                try:
                    vals.append(float(p))
                except ValueError:
                    vals.append(p)
        return OrdinalScale(vals) if kind == "ordinal" else NominalScale(vals)
    raise typer.BadParameter(
        f"unknown scale {text!r}: use one of {sorted(_NAMED_SCALES)}, "
        "'ordinal:1,2,3' or 'nominal:yes,no'"
    )


@app.command()
def validate(
    source: Annotated[Path, typer.Argument(help="CSV, TSV, Parquet, JSONL or JSON file.")],
    column: Annotated[
        list[str] | None,
        typer.Option("--column", "-c", help="Column role mapping ROLE=COLUMN (repeatable)."),
    ] = None,
    scale: Annotated[
        list[str] | None,
        typer.Option(
            "--scale",
            "-s",
            help="Scale for all dimensions (likert5, yes-partially-no, ordinal:1,2,3, ...) "
            "or per dimension DIMENSION=SCALE (repeatable).",
        ),
    ] = None,
    wide: Annotated[bool, typer.Option("--wide", help="Items x raters (wide) format.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Read and validate a ratings file; print its summary, or every problem found.

    Exits with status 1 when the file has problems.

    Example: raterstats validate ratings.csv -c item=answer_id -c rater=annotator -s likert5
    """
    columns = {}
    for spec in column or []:
        role, sep, col = spec.partition("=")
        if not sep:
            raise typer.BadParameter(f"--column takes ROLE=COLUMN, got {spec!r}")
        columns[role.strip()] = col.strip()
    scales: Scale | dict[str, Scale] | None = None
    for spec in scale or []:
        dim, sep, sc = spec.partition("=")
        if sep:
            if not isinstance(scales, dict):
                scales = {}
            scales[dim.strip()] = _parse_scale(sc.strip())
        else:
            scales = _parse_scale(spec.strip())
    try:
        ratings = read_ratings(
            source, columns=columns or None, scale=scales, format="wide" if wide else "long"
        )
    except RatingsError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(code=1) from None
    summary = ratings.summary()
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), indent=2, default=str))
    else:
        typer.echo(summary.to_markdown())


def main() -> None:
    """Entry point of the ``raterstats`` console script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
