"""The data options of the commands that read ratings, defined once: from the command line
and a TOML study file to :class:`~raterstats.Ratings`.

Every such command takes the same seven options (:class:`DataOptions`): the file (or
``data`` of the study file), ``--column ROLE=COLUMN``, ``--scale``, ``--wide/--long``,
``--filter KEY=VALUE``, ``--collapse`` and ``--study``. A command declares them with one
parameter ``data: DataOptions`` and the decorator :func:`data_command`, turns them into a
:class:`Study` with :meth:`DataOptions.to_study` and reads the ratings with
:func:`load_ratings`. Adding a data option means adding one field to :class:`DataOptions`
(and reading it in :meth:`DataOptions.to_study`).
"""

from __future__ import annotations

import functools
import inspect
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

from raterstats.cli.app import fail
from raterstats.exports import EXPORTS
from raterstats.ingest import RatingsError, read_ratings
from raterstats.scales import COLLAPSES, IntervalScale, NominalScale, OrdinalScale, Scale

if TYPE_CHECKING:
    from raterstats.ratings import Ratings

#: the scales ``--scale`` knows by name
NAMED_SCALES: dict[str, Callable[[], Scale]] = {
    "likert5": lambda: OrdinalScale.likert(5),
    "likert7": lambda: OrdinalScale.likert(7),
    "likert3": lambda: OrdinalScale([-1, 0, 1], ["disagree", "neutral", "agree"]),
    "binary": lambda: OrdinalScale([0, 1], ["no", "yes"]),
    "yes-partially-no": lambda: NominalScale(["yes", "partially", "no"]),
    "yes-no-refutes": lambda: NominalScale(["yes", "no", "refutes"]),
    "interval": lambda: IntervalScale(),
}


def parse_scale(text: str) -> Scale:
    """The scale named by ``text``: a name of :data:`NAMED_SCALES`, ``ordinal:1,2,3`` or
    ``nominal:yes,no``.

    Examples
    --------
    >>> parse_scale("ordinal:1,2,3").levels
    (1, 2, 3)
    """
    if text in NAMED_SCALES:
        return NAMED_SCALES[text]()
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
        f"unknown scale {text!r}: use one of {sorted(NAMED_SCALES)}, "
        "'ordinal:1,2,3' or 'nominal:yes,no'"
    )


def parse_pairs(specs: list[str] | None, option: str) -> dict[str, str]:
    """``KEY=VALUE`` specs of a repeatable option as a dict (``option`` names it in the
    error).

    Examples
    --------
    >>> parse_pairs(["item=answer_id", "rater = annotator"], "--column")
    {'item': 'answer_id', 'rater': 'annotator'}
    """
    out: dict[str, str] = {}
    for spec in specs or []:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{option} takes KEY=VALUE, got {spec!r}")
        out[key.strip()] = value.strip()
    return out


def parse_value(text: str) -> Any:
    """A command-line value: JSON when it parses (numbers, true/false, lists), else text.

    Examples
    --------
    >>> parse_value("3"), parse_value("false"), parse_value("none"), parse_value("red")
    (3, False, None, 'red')
    """
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass
class Study:
    """The settings of a study, from a TOML study file and the command line.

    ``sections`` holds the per-command tables of the study file (``[agreement]``,
    ``[fit]``, ``[rank]``, ``[designs]``), read by :meth:`option`.
    """

    data: Path | None = None
    columns: dict[str, str] = field(default_factory=dict)
    scale: str | dict[str, str] | None = None
    wide: bool = False
    filter: dict[str, Any] = field(default_factory=dict)
    collapse: str | None = None
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    export: str | None = None

    @classmethod
    def read(cls, path: Path) -> Study:
        """The study file at ``path``; exit 2 when it is missing, not TOML or has unknown
        keys."""
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise fail(f"study file {path} does not exist", 2) from None
        except tomllib.TOMLDecodeError as err:
            raise fail(f"study file {path}: not valid TOML ({err})", 2) from None
        known = {"data", "columns", "scale", "format", "filter", "collapse", "export"}
        sections = {"agreement", "fit", "rank", "designs"}
        unknown = sorted(set(raw) - known - sections)
        if unknown:
            raise fail(
                f"study file {path}: unknown keys {unknown}; expected {sorted(known | sections)}",
                2,
            )
        data = raw.get("data")
        scale = raw.get("scale")
        if scale is not None and not isinstance(scale, str | dict):
            raise fail(f"study file {path}: 'scale' must be a string or a table", 2)
        return cls(
            data=(path.parent / data) if data else None,
            columns={str(k): str(v) for k, v in raw.get("columns", {}).items()},
            scale=scale,
            wide=raw.get("format", "long") == "wide",
            filter=dict(raw.get("filter", {})),
            collapse=raw.get("collapse"),
            sections={k: dict(raw.get(k, {})) for k in sections},
            export=raw.get("export"),
        )

    def option(self, section: str, key: str, given: Any, default: Any) -> Any:
        """The command-line value when given, else the study file's, else the default.

        Examples
        --------
        >>> s = Study(sections={"fit": {"draws": 500}})
        >>> s.option("fit", "draws", None, 1000), s.option("fit", "draws", 20, 1000)
        (500, 20)
        """
        if given is not None:
            return given
        return self.sections.get(section, {}).get(key, default)


StudyOpt = Annotated[
    Path | None,
    typer.Option(
        "--study",
        "-S",
        help="TOML study file with data, \\[columns], scale, \\[filter], collapse and "
        "per-command defaults (\\[agreement], \\[fit], \\[rank], \\[designs]).",
    ),
]
SourceArg = Annotated[
    Path | None,
    typer.Argument(
        help="CSV, TSV, Parquet, JSONL or JSON file (default: `data` of the study file)."
    ),
]
ColumnOpt = Annotated[
    list[str] | None,
    typer.Option("--column", "-c", help="Column role mapping ROLE=COLUMN (repeatable)."),
]
ScaleOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scale",
        "-s",
        help="Scale for all dimensions (likert5, likert7, binary, yes-partially-no, "
        "ordinal:1,2,3, nominal:a,b, interval) or per dimension DIMENSION=SCALE (repeatable).",
    ),
]
WideOpt = Annotated[
    bool | None, typer.Option("--wide/--long", help="Items x raters (wide) or long format.")
]
FilterOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        "-f",
        help="Keep ratings with KEY=VALUE (dimension, design, rater_kind, system, ...; "
        "repeatable; VALUE may be a,b for several).",
    ),
]
CollapseOpt = Annotated[
    str | None, typer.Option("--collapse", help="Collapse the scale, e.g. likert5_to_3.")
]
ExportOpt = Annotated[
    str | None,
    typer.Option(
        "--export",
        help=f"Read an annotation tool's export: {', '.join(EXPORTS)} (Label Studio JSON, "
        "MTurk batch results CSV, wide survey CSV); --column names its fields.",
    ),
]


@dataclass
class DataOptions:
    """The data options of a command, as given on the command line (``None``: not given).

    Each field is one option; its annotation carries the option's name and help, so the
    commands that read ratings share one definition (see :func:`data_command`).
    """

    source: SourceArg = None
    column: ColumnOpt = None
    scale: ScaleOpt = None
    wide: WideOpt = None
    filters: FilterOpt = None
    collapse: CollapseOpt = None
    study: StudyOpt = None
    export: ExportOpt = None

    def to_study(self) -> Study:
        """The study file (when given) overridden by the options given on the command line.

        Examples
        --------
        >>> s = DataOptions(source=Path("r.csv"), scale=["likert5", "safety=binary"],
        ...                 filters=["system=a,b"]).to_study()
        >>> s.data, s.scale, s.filter
        (PosixPath('r.csv'), {'safety': 'binary'}, {'system': ['a', 'b']})
        """
        s = Study.read(self.study) if self.study is not None else Study()
        if self.source is not None:
            s.data = self.source
        s.columns.update(parse_pairs(self.column, "--column"))
        scales_cli: dict[str, str] = {}
        for spec in self.scale or []:
            dim, sep, sc = spec.partition("=")
            if sep:
                scales_cli[dim.strip()] = sc.strip()
            else:
                s.scale = spec.strip()
        if scales_cli:
            base = s.scale if isinstance(s.scale, dict) else {}
            s.scale = {**base, **scales_cli}
        if self.wide is not None:
            s.wide = self.wide
        for key, value in parse_pairs(self.filters, "--filter").items():
            parts = [parse_value(v) for v in value.split(",")]
            s.filter[key] = parts if len(parts) > 1 else parts[0]
        if self.collapse is not None:
            s.collapse = self.collapse
        if self.export is not None:
            s.export = self.export
        return s


def data_command(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the data options: its first parameter ``data: DataOptions`` becomes
    the fields of :class:`DataOptions` on the command line, in their order.

    Use it below ``@app.command()``; the command receives one :class:`DataOptions`.

    Examples
    --------
    >>> @data_command
    ... def show(data: DataOptions, as_json: bool = False) -> None:
    ...     print(data.source, data.wide, as_json)
    >>> list(inspect.signature(show).parameters)[:3]
    ['source', 'column', 'scale']
    >>> show(source=Path("r.csv"), column=None, scale=None, wide=True, filters=None,
    ...      collapse=None, study=None, export=None, as_json=True)
    r.csv True True
    """
    sig = inspect.signature(command, eval_str=True)
    first, *rest = sig.parameters.values()
    if first.name != "data" or first.annotation is not DataOptions:
        raise TypeError(f"{command.__name__}: the first parameter must be `data: DataOptions`")
    hints = get_type_hints(DataOptions, include_extras=True)
    names = [f.name for f in fields(DataOptions)]
    options = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=f.default,
            annotation=hints[f.name],
        )
        for f in fields(DataOptions)
    ]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        data = DataOptions(**{n: kwargs.pop(n) for n in names})
        command(data, **kwargs)

    params = [*options, *rest]
    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


def load_ratings(s: Study) -> Ratings:
    """Read the study's ratings, filtered and collapsed as it says; exit 1 with the list of
    problems on bad data, 2 on bad options or no data file."""
    if s.data is None:
        raise fail("no ratings file: give one as the argument or as `data` in --study", 2)
    scales: Scale | dict[str, Scale] | None
    if isinstance(s.scale, dict):
        scales = {str(k): parse_scale(str(v)) for k, v in s.scale.items()}
    elif isinstance(s.scale, str):
        scales = parse_scale(s.scale)
    else:
        scales = None
    try:
        ratings = read_ratings(
            s.data,
            columns=s.columns or None,
            scale=scales,
            format="wide" if s.wide else "long",
            export=s.export,
        )
    except RatingsError as err:
        raise fail(str(err)) from None
    except ValueError as err:  # an option that does not apply to the export
        raise fail(str(err), 2) from None
    if s.filter:
        try:
            ratings = ratings.filter(**s.filter)
        except (KeyError, ValueError, TypeError) as err:
            raise fail(f"--filter {s.filter}: {err}", 2) from None
        if ratings.n_ratings == 0:
            raise fail(f"no ratings left after --filter {s.filter}")
    if s.collapse:
        if s.collapse not in COLLAPSES:
            raise fail(f"unknown collapse {s.collapse!r}; known: {sorted(COLLAPSES)}", 2)
        try:
            ratings = ratings.collapse(s.collapse)
        except (ValueError, KeyError) as err:
            raise fail(f"--collapse {s.collapse}: {err}") from None
    return ratings


__all__ = [
    "NAMED_SCALES",
    "DataOptions",
    "Study",
    "StudyOpt",
    "data_command",
    "load_ratings",
    "parse_pairs",
    "parse_scale",
    "parse_value",
]
