"""The ``raterstats`` Typer application and what its commands share to talk to the user:
the progress line on stderr, exits with a message, tables on stdout and reading a fit file.

Commands print results on stdout (a Markdown table, or JSON with ``--json``) and everything
else (progress, messages) on stderr, so that ``--json`` output can be piped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from raterstats.defaults import RANDOM_SEED, ci_prob
from raterstats.formatting import markdown_table, visible_lines
from raterstats.version import __version__

if TYPE_CHECKING:
    import polars as pl
    import xarray as xr

app = typer.Typer(
    name="raterstats",
    help=(
        "Statistics of human and LLM ratings: agreement, Bayesian annotator models, "
        "system rankings and annotation designs.\n\n"
        "Example: raterstats demo\n\n"
        "Example: raterstats agreement ratings.csv -s likert5 --json"
    ),
    no_args_is_help=True,
    add_completion=False,
)
#: messages and progress go to stderr, so that stdout holds only the result
console = Console(stderr=True, log_path=False)

#: ``--json``: print the result as JSON
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
#: ``--csv FILE``: also write the result table as CSV
CsvOpt = Annotated[Path | None, typer.Option("--csv", help="Also write the table as CSV here.")]
#: ``--seed``: the random seed of a command (default :data:`raterstats.defaults.RANDOM_SEED`)
SeedOpt = Annotated[
    int | None, typer.Option("--seed", help=f"Random seed (default {RANDOM_SEED}).")
]
#: ``--ci``: the probability of posterior intervals (default :func:`raterstats.defaults.ci_prob`)
CiOpt = Annotated[
    float | None,
    typer.Option("--ci", help=f"Interval probability ({ci_prob():g}: ArviZ's stats.ci_prob)."),
]


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


@contextmanager
def spinner(start: str) -> Iterator[Callable[[str], None]]:
    """A progress line with a spinner and the elapsed time, on stderr.

    Parameters
    ----------
    start : str
        The first message.

    Yields
    ------
    callable
        ``say(message)``: show ``message`` on the progress line and log it.
    """
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),  # messages may hold file names
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task(start, total=None)

        def say(msg: str) -> None:
            bar.update(task, description=msg)
            bar.console.log(msg, markup=False)

        yield say
        bar.update(task, description="done")


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``message`` on stderr and return the exit to raise (``raise fail(...)``).

    Parameters
    ----------
    message : str
        What went wrong, for the user.
    code : int
        Exit status: 1 for bad data, 2 for bad options or files.

    Returns
    -------
    typer.Exit
    """
    typer.echo(visible_lines(message), err=True)  # ids in it cannot drive the terminal
    return typer.Exit(code=code)


def json_records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``frame`` as JSON-safe dicts (NaN and infinities become ``None``).

    Examples
    --------
    >>> import polars as pl
    >>> json_records(pl.DataFrame({"a": [1.0, float("nan")]}))
    [{'a': 1.0}, {'a': None}]
    """
    return [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
        for row in frame.to_dicts()
    ]


def print_frame(frame: pl.DataFrame, *, as_json: bool, csv: Path | None) -> None:
    """Print a result table on stdout: Markdown, or JSON records when ``as_json``; write it
    as CSV too when ``csv`` is a path."""
    if csv is not None:
        csv.parent.mkdir(parents=True, exist_ok=True)
        frame.write_csv(csv)
        console.log(f"wrote {csv}", markup=False)
    if as_json:
        typer.echo(json.dumps(json_records(frame), indent=2, default=str))
    else:
        typer.echo(markdown_table(frame))


def open_fit(path: Path) -> xr.DataTree:
    """The fit written by ``raterstats fit`` at ``path``; exit 2 when it is missing or not
    a netCDF DataTree."""
    import xarray as xr

    if not path.is_file():
        raise fail(f"fit file {path} does not exist (write one with `raterstats fit`)", 2)
    try:
        return xr.open_datatree(path)
    except (OSError, ValueError) as err:
        raise fail(f"cannot read {path} as a netCDF DataTree: {err}", 2) from None


__all__ = [
    "CsvOpt",
    "JsonOpt",
    "SeedOpt",
    "app",
    "console",
    "fail",
    "json_records",
    "open_fit",
    "print_frame",
    "spinner",
]
