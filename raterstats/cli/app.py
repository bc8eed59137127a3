"""The ``raterstats`` Typer application and what its commands share to talk to the user:
the progress line on stderr, exits with a message, tables on stdout and reading a fit file.

Commands print results on stdout (a Markdown table, or JSON with ``--json``) and everything
else (progress, messages) on stderr, so that ``--json`` output can be piped.

No input gives a user a traceback: :class:`RaterstatsGroup` turns every exception that
leaves a command into a message and an exit status (:func:`describe_error`): 1 for bad data
(every problem listed), 2 for bad usage (options, study file, paths), 130 for Ctrl-C, and 1
with a one-line message for an unexpected error; ``RATERSTATS_DEBUG=1`` shows its traceback.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from typer.core import TyperGroup
from typer.exceptions import TyperException

from raterstats.cli.studyfile import check_probability
from raterstats.defaults import CHAINS, CHECKPOINTS, DRAWS, RANDOM_SEED, SAMPLER, TUNE, ci_prob
from raterstats.files import OutputPathError, check_output, write_atomic
from raterstats.formatting import markdown_table, visible_lines
from raterstats.inference_checks import SAMPLERS
from raterstats.ingest_errors import RatingsError
from raterstats.version import __version__

if TYPE_CHECKING:
    import polars as pl
    import xarray as xr

#: set (to anything but "" or "0") to see the traceback of an unexpected error
DEBUG_ENV = "RATERSTATS_DEBUG"
#: the exit status of a command interrupted by Ctrl-C (128 + SIGINT)
EXIT_INTERRUPTED = 130


def describe_error(err: BaseException) -> tuple[int, str] | None:
    """The exit status and message for an exception that left a command, or ``None`` for
    an unexpected one (a bug, or an input not yet handled).

    Bad data (:class:`~raterstats.RatingsError`, ``ModelInputError``,
    ``AgreementInputError``) exit 1 with every problem listed; a bad study file, output
    path, a file that cannot be read or written, or an ``AgreementUsageError`` (an unknown
    statistic or option) exit 2.

    Examples
    --------
    >>> from raterstats.ingest_errors import Problem
    >>> describe_error(RatingsError("r.csv", [Problem("rating", "9", "1 to 5", (2,))]))[0]
    1
    >>> describe_error(OutputPathError("out is a folder"))
    (2, 'out is a folder')
    >>> describe_error(ZeroDivisionError("x")) is None
    True
    """
    from raterstats.agreement import AgreementInputError, AgreementUsageError
    from raterstats.cli.studyfile import StudyFileError
    from raterstats.models import ModelInputError

    if isinstance(err, AgreementUsageError):  # an unknown statistic, option or by column
        return 2, str(err)
    if isinstance(err, RatingsError | AgreementInputError):
        return 1, str(err)
    if isinstance(err, ModelInputError):
        return 1, "the model cannot fit these data:\n  - " + "\n  - ".join(err.problems)
    if isinstance(err, StudyFileError | OutputPathError):
        return 2, str(err)
    if isinstance(err, OSError):
        where = f": {err.filename}" if err.filename else ""
        return 2, f"{err.strerror or err}{where}"
    return None


class RaterstatsGroup(TyperGroup):
    """The ``raterstats`` command group: runs a command and answers every exception that
    leaves it with a message on stderr and an exit status (see :func:`describe_error`).

    Usage errors (``typer.BadParameter``) are Click's: exit 2 with the usage line.
    """

    def invoke(self, ctx: Any) -> Any:
        """Run the command; translate what it raises."""
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, TyperException):  # exits and usage errors
            raise
        except KeyboardInterrupt:
            typer.echo("\ninterrupted: no output file was left half-written", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except (SystemExit, GeneratorExit):
            raise
        except BaseException as err:
            known = describe_error(err)
            if known is None:
                if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
                    raise
                line = " ".join(str(err).split())[:300]
                typer.echo(
                    f"unexpected error: {type(err).__name__}: {line}\n"
                    f"(run with {DEBUG_ENV}=1 for the traceback, and please report it)",
                    err=True,
                )
                raise typer.Exit(1) from None
            code, message = known
            typer.echo(message, err=True)
            raise typer.Exit(code) from None


app = typer.Typer(
    name="raterstats",
    cls=RaterstatsGroup,
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
    int | None, typer.Option("--seed", min=0, help=f"Random seed (default {RANDOM_SEED}).")
]

#: ``--draws``, ``--tune``, ``--chains`` of the commands that fit a model (``fit``, ``labels``)
DrawsOpt = Annotated[
    int | None,
    typer.Option(
        "--draws",
        min=1,
        help=(
            "Draws per chain (default: the model's own; the true-label and ordinal models "
            f"sample on from {CHECKPOINTS[0]} until the fit passes its checks, up to "
            f"{CHECKPOINTS[-1]}; {DRAWS} for the others)."
        ),
    ),
]
TuneOpt = Annotated[
    int | None,
    typer.Option(
        "--tune", min=1, help=f"Tuning steps per chain (default: the model's own; {TUNE} for most)."
    ),
]
ChainsOpt = Annotated[
    int | None,
    typer.Option("--chains", min=1, help=f"Chains (default: the model's own; {CHAINS})."),
]
TargetAcceptOpt = Annotated[
    float | None,
    typer.Option(
        "--target-accept",
        help="NUTS target acceptance rate, e.g. 0.95 or 0.99 against divergences (default: "
        "the sampler's).",
    ),
]
#: ``--sampler`` of the commands that fit a model
SamplerOpt = Annotated[
    str | None,
    typer.Option("--sampler", help=f"NUTS sampler: {', '.join(SAMPLERS)} (default {SAMPLER})."),
]

#: ``--use-gold``: gold labels clamp a latent-class model's labels (default: they are a check)
UseGoldOpt = Annotated[
    bool | None,
    typer.Option(
        "--use-gold/--no-use-gold",
        help="Clamp the latent labels of items with a gold label (default: no; gold is then "
        "a check: accuracy and log loss against it are printed).",
    ),
]


#: ``--ci``: the probability of posterior intervals (default :func:`raterstats.defaults.ci_prob`)
CiOpt = Annotated[
    float | None,
    typer.Option(
        "--ci",
        callback=check_probability,
        help=f"Interval probability ({ci_prob():g}: ArviZ's stats.ci_prob).",
    ),
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
    as CSV too when ``csv`` is a path (all at once: :func:`raterstats.files.write_atomic`;
    check the path with :func:`output` before the work)."""
    if csv is not None:
        write_atomic(csv, frame.write_csv)
        console.log(f"wrote {csv}", markup=False)
    if as_json:
        typer.echo(json.dumps(json_records(frame), indent=2, default=str))
    else:
        typer.echo(markdown_table(frame))


def output(path: Path | None, *, folder: bool = False) -> Path | None:
    """Check an output path before the work that writes it (``None`` passes); an
    :class:`~raterstats.files.OutputPathError` (exit 2) says what is wrong."""
    return None if path is None else check_output(path, folder=folder)


def open_fit(path: Path) -> xr.DataTree:
    """The fit written by ``raterstats fit`` at ``path``; exit 2 when it is missing or not
    a netCDF DataTree."""
    import xarray as xr

    if path.is_dir():
        raise fail(f"fit file {path} is a folder, not a netCDF file", 2)
    if not path.is_file():
        raise fail(f"fit file {path} does not exist (write one with `raterstats fit`)", 2)
    try:
        return xr.open_datatree(path)
    except Exception as err:
        raise fail(f"cannot read {path} as a netCDF DataTree: {err}", 2) from None


__all__ = [
    "DEBUG_ENV",
    "EXIT_INTERRUPTED",
    "ChainsOpt",
    "CiOpt",
    "CsvOpt",
    "DrawsOpt",
    "JsonOpt",
    "RaterstatsGroup",
    "SamplerOpt",
    "SeedOpt",
    "TuneOpt",
    "UseGoldOpt",
    "app",
    "console",
    "describe_error",
    "fail",
    "json_records",
    "open_fit",
    "output",
    "print_frame",
    "spinner",
]
