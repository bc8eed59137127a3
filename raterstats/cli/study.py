"""The data options of the commands that read ratings, defined once: from the command line
and a TOML study file to :class:`~raterstats.Ratings`.

Every such command takes the same eight options (:class:`DataOptions`): the file (or
``data`` of the study file), ``--column ROLE=COLUMN``, ``--scale``, ``--wide/--long``,
``--filter KEY=VALUE``, ``--collapse``, ``--duplicates`` and ``--study``. The study file
is checked against :data:`raterstats.cli.studyfile.STUDY_FILE`. A command declares them with one
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

from raterstats import schema as S
from raterstats.cli.app import fail
from raterstats.cli.studyfile import (
    COMPARISON_KINDS,
    DUPLICATES,
    NAMED_SCALES,
    PATH,
    SECTIONS,
    STUDY_FILE,
    TOP,
    StudyFileError,
    check_choice,
    check_columns,
    check_study,
    did_you_mean,
    parse_filter,
    parse_pairs,
    parse_scale,
)
from raterstats.exports import EXPORTS
from raterstats.ingest import read_ratings
from raterstats.ingest_errors import RatingsError
from raterstats.scales import COLLAPSES, Scale

if TYPE_CHECKING:
    from raterstats.comparisons import Comparisons
    from raterstats.ratings import Ratings


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
    ``[fit]``, ``[labels]``, ``[rank]``, ``[designs]``, ``[analyze]``), read by
    :meth:`option`; ``filter`` maps an id role to its values (a list of text) and
    ``repeat`` to a bool.
    """

    data: Path | None = None
    columns: dict[str, str] = field(default_factory=dict)
    scale: str | dict[str, str] | None = None
    wide: bool = False
    filter: dict[str, list[str] | bool] = field(default_factory=dict)
    collapse: str | None = None
    duplicates: str = "error"
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    export: str | None = None
    separator: str | None = None
    comparisons: str | None = None
    graded: int | None = None

    @classmethod
    def read(cls, path: Path) -> Study:
        """The study file at ``path``, checked against
        :data:`~raterstats.cli.studyfile.STUDY_FILE`; exit 2 when it is missing or not TOML,
        :class:`~raterstats.cli.studyfile.StudyFileError` (every problem) when a table or
        key is unknown or a value has the wrong type. Paths are relative to the study file.
        """
        if path.is_dir():
            raise fail(f"study file {path} is a folder, not a TOML file", 2)
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise fail(f"study file {path} does not exist", 2) from None
        except UnicodeDecodeError as err:
            raise fail(f"study file {path}: not UTF-8 text ({err})", 2) from None
        except tomllib.TOMLDecodeError as err:
            raise fail(f"study file {path}: not valid TOML ({err})", 2) from None
        problems = check_study(raw)
        if problems:
            raise StudyFileError(path, problems)
        for section, keys in STUDY_FILE.items():  # paths: relative to the study file
            table = raw if section == TOP else raw.get(section, {})
            for name, key in keys.items():
                if key.kind is PATH and name in table:
                    table[name] = path.parent / table[name]
        filters = {
            k: parse_filter(k, [str(x) for x in v] if isinstance(v, list) else v)
            for k, v in raw.get("filter", {}).items()
        }
        return cls(
            data=raw.get("data"),
            columns=dict(raw.get("columns", {})),
            scale=raw.get("scale"),
            wide=raw.get("format", "long") == "wide",
            filter=filters,
            collapse=raw.get("collapse"),
            duplicates=raw.get("duplicates", "error"),
            sections={k: dict(raw.get(k, {})) for k in SECTIONS},
            export=raw.get("export"),
            separator=raw.get("separator"),
            comparisons=raw.get("comparisons"),
            graded=raw.get("graded"),
        )

    def option(self, section: str, key: str, given: Any, default: Any) -> Any:
        """The command-line value when given, else the study file's, else the default.

        ``key`` must be a key of ``[section]`` in
        :data:`~raterstats.cli.studyfile.STUDY_FILE` (a ``KeyError`` otherwise: what a
        command reads from the study file is declared there).

        Examples
        --------
        >>> s = Study(sections={"fit": {"draws": 500}})
        >>> s.option("fit", "draws", None, 1000), s.option("fit", "draws", 20, 1000)
        (500, 20)
        """
        if key not in STUDY_FILE.get(section, {}) or section == TOP:
            raise KeyError(f"[{section}] {key} is not a key of the study file schema")
        if given is not None:
            return given
        return self.sections.get(section, {}).get(key, default)


StudyOpt = Annotated[
    Path | None,
    typer.Option(
        "--study",
        "-S",
        help="TOML study file with data, \\[columns], scale, \\[filter], collapse and "
        "per-command defaults (\\[agreement], \\[fit], \\[labels], \\[rank], \\[designs], "
        "\\[analyze]).",
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
DuplicatesOpt = Annotated[
    str | None,
    typer.Option(
        "--duplicates",
        help="Several ratings of one (item, segment, rater, dimension, design): "
        f"{', '.join(DUPLICATES)} (default error).",
    ),
]
ExportOpt = Annotated[
    str | None,
    typer.Option(
        "--export",
        help=f"Read an annotation tool's export: {', '.join(EXPORTS)} (Label Studio JSON, "
        "MTurk batch results CSV, wide survey CSV); --column names its fields.",
    ),
]
SeparatorOpt = Annotated[
    str | None,
    typer.Option(
        "--separator",
        help="The delimiter of a CSV file (default: sniffed among , ; tab |).",
    ),
]

ComparisonsOpt = Annotated[
    str | None,
    typer.Option(
        "--comparisons",
        help="The file holds comparative judgments: pairs (system_a, system_b, outcome a / b / "
        "tie or graded) or rankings (question, system, rank); --column names their roles.",
    ),
]
GradedOpt = Annotated[
    int | None,
    typer.Option(
        "--graded",
        min=1,
        help="--comparisons pairs: the outcomes are integers -K..K (positive: system_a "
        "preferred); default a / b / tie.",
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
    duplicates: DuplicatesOpt = None
    study: StudyOpt = None
    export: ExportOpt = None
    separator: SeparatorOpt = None
    comparisons: ComparisonsOpt = None
    graded: GradedOpt = None

    def to_study(self) -> Study:
        """The study file (when given) overridden by the options given on the command line.

        Examples
        --------
        >>> s = DataOptions(source=Path("r.csv"), scale=["likert5", "safety=binary"],
        ...                 filters=["system=a,b", "rater=1"]).to_study()
        >>> s.data, s.scale, s.filter
        (PosixPath('r.csv'), {'safety': 'binary'}, {'system': ['a', 'b'], 'rater': ['1']})
        """
        s = Study.read(self.study) if self.study is not None else Study()
        if self.source is not None:
            s.data = self.source
        columns = parse_pairs(self.column, "--column")
        check_columns(columns)
        if self.comparisons is not None:
            s.comparisons = check_choice(self.comparisons, COMPARISON_KINDS, "--comparisons")
        if self.graded is not None:
            s.graded = self.graded
        s.columns.update(columns)
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
            s.filter[key] = parse_filter(key, value)
        if self.collapse is not None:
            s.collapse = self.collapse
        if self.duplicates is not None:
            if self.duplicates not in DUPLICATES:
                raise typer.BadParameter(
                    f"--duplicates {self.duplicates!r}{did_you_mean(self.duplicates, DUPLICATES)}"
                    f": use one of {', '.join(DUPLICATES)}"
                )
            s.duplicates = self.duplicates
        if self.export is not None:
            s.export = self.export
        if self.separator is not None:
            s.separator = self.separator
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
    ...      collapse=None, duplicates=None, study=None, export=None,
    ...      separator=None, comparisons=None, graded=None, as_json=True)
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


def check_source(path: Path) -> Path:
    """The ratings file at ``path``; exit 2 when it does not exist (naming a close file of
    its folder) or is a folder."""
    if path.is_dir():
        raise fail(f"ratings file {path} is a folder, not a file", 2)
    if not path.exists():
        siblings = sorted(p.name for p in path.parent.iterdir()) if path.parent.is_dir() else []
        raise fail(f"ratings file {path} does not exist{did_you_mean(path.name, siblings)}", 2)
    return path


def _scales(s: Study) -> Scale | dict[str, Scale] | None:
    """The study's scale(s); per-dimension scales of dimensions that ``--filter`` leaves
    out are not asked for."""
    if isinstance(s.scale, str):
        return parse_scale(s.scale)
    if s.scale is None:
        return None
    dims = s.filter.get("dimension")
    return {
        str(k): parse_scale(str(v))
        for k, v in s.scale.items()
        if not isinstance(dims, list) or str(k) in dims
    }


def load_data(s: Study) -> Ratings | Comparisons:
    """The study's data: :func:`load_comparisons` when it says the file holds comparative
    judgments (``--comparisons``, ``comparisons`` of the study file), else
    :func:`load_ratings`."""
    return load_comparisons(s) if s.comparisons is not None else load_ratings(s)


def _ratings_only(s: Study) -> list[str]:
    """The options given that apply to ratings only."""
    given = {
        "--scale / scale": s.scale is not None,
        "--wide / format": s.wide,
        "--collapse / collapse": s.collapse is not None,
        "--duplicates / duplicates": s.duplicates != "error",
        "--export / export": s.export is not None,
        "--filter repeat": S.REPEAT in s.filter,
    }
    return [k for k, v in given.items() if v]


def comparison_columns(columns: dict[str, str], kind: str) -> dict[str, str]:
    """``--column`` roles for comparative judgments of ``kind``: a role of that kind, or a
    ratings alias of one (``worker`` for ``rater``); a usage error (exit 2) naming the
    roles of the kind otherwise.

    Examples
    --------
    >>> comparison_columns({"worker": "judge_id", "outcome": "winner"}, "pairs")
    {'rater': 'judge_id', 'outcome': 'winner'}
    """
    from raterstats.comparisons_ingest import PAIR_ROLES, RANKING_ROLES

    roles = PAIR_ROLES if kind == "pairs" else RANKING_ROLES
    aliases = S.alias_table()
    out, bad = {}, []
    for key, col in columns.items():
        role = key if key in roles else aliases.get(key.lower())
        if role not in roles:
            bad.append(key)
        else:
            out[str(role)] = col
    if bad:
        raise typer.BadParameter(
            "; ".join(f"--comparisons {kind}: {k!r} is not a column role of {kind}" for k in bad)
            + f" (roles: {', '.join(roles)})"
        )
    return out


def load_comparisons(s: Study) -> Comparisons:
    """Read the study's comparative judgments (``read_comparisons``), filtered as it says.

    The filters (``dimension``, ``rater``, ``rater_kind``, ``question``, ``system``) select
    after validation; what they leave out is counted under the summary's exclusions. Bad
    data raise :class:`~raterstats.RatingsError` (exit 1, every problem listed); options
    that apply to ratings only, a role that is not one of the kind's or ``--graded`` with
    rankings exit 2.
    """
    from raterstats.comparisons_ingest import read_comparisons
    from raterstats.provenance import Exclusion

    kind = str(s.comparisons)
    if s.data is None:
        raise fail("no data file: give one as the argument or as `data` in --study", 2)
    check_source(Path(s.data))
    wrong = _ratings_only(s)
    if wrong:
        raise fail(
            f"--comparisons {kind}: {', '.join(wrong)} appl{'ies' if len(wrong) == 1 else 'y'} "
            "to ratings only (comparative judgments have no scale to declare); leave "
            f"{'it' if len(wrong) == 1 else 'them'} out",
            2,
        )
    if kind == "rankings" and s.graded is not None:
        raise fail("--graded applies to pairs (outcomes -K..K), not to rankings", 2)
    try:
        comparisons = read_comparisons(
            s.data,
            columns=comparison_columns(s.columns, kind) or None,
            kind=kind,  # type: ignore[arg-type]
            graded=s.graded,
            separator=s.separator,
        )
    except RatingsError:
        raise
    except ValueError as err:  # an option that does not apply
        raise fail(str(err), 2) from None
    where = {k: v for k, v in s.filter.items() if isinstance(v, list)}
    if where:
        try:
            kept = comparisons.filter(**where)
        except (KeyError, TypeError) as err:
            raise fail(f"--filter: {err.args[0]}", 2) from None
        removed = comparisons.data.height - kept.data.height
        desc = ", ".join(f"{k}={','.join(v)}" for k, v in where.items())
        comparisons = comparisons.derive(
            kept.data,
            step=f"filter({desc})",
            exclusion=Exclusion(f"left out by --filter {desc}", removed) if removed else None,
        )
        if comparisons.n_judgments == 0:
            raise fail(f"no judgments left after --filter {desc}")
    return comparisons


def _no_comparison_roles(s: Study) -> None:
    """Exit 2 when ratings are read with a role or option of comparative judgments."""
    aliases = S.alias_table()
    roles = [k for k in s.columns if k.lower() not in aliases]
    given = [f"--column {k}" for k in roles] + (["--graded"] if s.graded is not None else [])
    if given:
        raise fail(
            f"{', '.join(given)}: a role or option of comparative judgments; add "
            "--comparisons pairs (or rankings) to read the file as such",
            2,
        )


def load_ratings(s: Study) -> Ratings:
    """Read the study's ratings, filtered and collapsed as it says.

    The filters on ids select rows before validation (``read_ratings(where=...)``), so
    the ratings filtered out cannot fail it; ``repeat`` selects after. Bad data raise
    :class:`~raterstats.RatingsError` (exit 1, every problem listed by the command line's
    error handler); bad options exit 2.
    """
    if s.data is None:
        raise fail("no ratings file: give one as the argument or as `data` in --study", 2)
    check_source(Path(s.data))
    if s.comparisons is not None:
        raise fail(
            f"--comparisons {s.comparisons}: this command reads ratings only (comparative "
            "judgments are read by validate, agreement, rank, fit and analyze)",
            2,
        )
    _no_comparison_roles(s)
    if s.collapse and s.collapse not in COLLAPSES:
        raise fail(
            f"unknown collapse {s.collapse!r}{did_you_mean(s.collapse, list(COLLAPSES))}; "
            f"known: {sorted(COLLAPSES)}",
            2,
        )
    where = {k: v for k, v in s.filter.items() if isinstance(v, list)}
    extra: dict[str, Any] = {}
    if s.duplicates != "error":  # read_ratings(duplicates=...): "error" is its default
        extra["duplicates"] = s.duplicates
    try:
        ratings = read_ratings(
            s.data,
            columns=s.columns or None,
            scale=_scales(s),
            format="wide" if s.wide else "long",
            where=(where or None) if s.export is None else None,
            export=s.export,
            separator=s.separator,
            **extra,
        )
    except RatingsError:
        raise
    except ValueError as err:  # an option that does not apply (e.g. to the export)
        raise fail(str(err), 2) from None
    if s.export is not None and where:  # an export's rows are selected after reading
        ratings = ratings.filter(**where)
        if ratings.n_ratings == 0:
            raise fail(f"no ratings left after --filter {where}")
    repeat = s.filter.get("repeat")
    if isinstance(repeat, bool):
        try:
            ratings = ratings.filter(repeat=repeat)
        except KeyError as err:
            raise fail(f"--filter repeat={str(repeat).lower()}: {err.args[0]}") from None
    if s.collapse:
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
    "check_source",
    "comparison_columns",
    "data_command",
    "load_comparisons",
    "load_data",
    "load_ratings",
    "parse_pairs",
    "parse_scale",
    "parse_value",
]
