"""Read annotation exports (CSV, TSV, Parquet, JSON lines, polars or pandas frames) into a
validated :class:`~raterstats.Ratings`.

Validation lists every problem at once in one :class:`RatingsError` — file, 1-based row,
column, offending value and what was expected — and never drops a row silently: the only
rows left out are those the caller asked to exclude, and they are counted.
"""

from __future__ import annotations

import difflib
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
from raterstats.provenance import Exclusion, Provenance
from raterstats.ratings import Ratings
from raterstats.scales import CategoricalScale, Scale, format_level, infer_scale

FileFormat = Literal["csv", "tsv", "parquet", "jsonl", "json"]

_SUFFIXES: dict[str, FileFormat] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}
_TRUE = {"true", "t", "yes", "y", "1", "repeat", "repeated"}
_FALSE = {"false", "f", "no", "n", "0", "", "first"}
_MAX_ROWS_SHOWN = 10
_MAX_PROBLEMS_SHOWN = 50
_JSON_ROW = "__json_line__"
_WIDE_RATING = "__rating"


@dataclass(frozen=True)
class Problem:
    """One problem found in the input.

    ``rows`` are 1-based data-row numbers (the header is not counted; for JSON lines the
    line number); empty when the problem concerns a column or the whole file.
    """

    column: str | None
    value: str | None
    expected: str
    rows: tuple[int, ...] = ()

    def describe(self, source: str) -> str:
        where = [source]
        if self.rows:
            shown = ", ".join(str(r) for r in self.rows[:_MAX_ROWS_SHOWN])
            more = len(self.rows) - _MAX_ROWS_SHOWN
            label = "row" if len(self.rows) == 1 else "rows"
            where.append(f"{label} {shown}" + (f" (and {more} more)" if more > 0 else ""))
        if self.column is not None:
            where.append(f"column {self.column!r}")
        got = "" if self.value is None else f"got {self.value!r}; "
        return f"{', '.join(where)}: {got}expected {self.expected}"


class RatingsError(ValueError):
    """Every problem found while reading ratings, listed at once.

    Attributes
    ----------
    source : str
        The file (or a description of the frame) that was read.
    problems : list of Problem
        Each with column, value, expectation and the 1-based rows it occurs in.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings, RatingsError, OrdinalScale
    >>> bad = pl.DataFrame({"item": ["a", "b"], "rater": ["x", ""], "rating": [3, 7]})
    >>> try:
    ...     read_ratings(bad, scale=OrdinalScale.likert(5))
    ... except RatingsError as err:
    ...     print(len(err.problems))
    2
    """

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.problems = list(problems)
        n = len(self.problems)
        lines = [
            f"{n} problem{'s' if n != 1 else ''} in ratings from {source} "
            "(rows are data rows numbered from 1, header not counted):"
        ]
        for p in self.problems[:_MAX_PROBLEMS_SHOWN]:
            lines.append("  - " + p.describe(source))
        if n > _MAX_PROBLEMS_SHOWN:
            lines.append(f"  ... and {n - _MAX_PROBLEMS_SHOWN} more (see .problems)")
        super().__init__("\n".join(lines))


# ----------------------------------------------------------------------------- loading


def _undecodable_rows(raw: bytes, encoding: str, header: bool) -> list[Problem]:
    problems = []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        try:
            line.decode(encoding)
        except UnicodeDecodeError as err:
            row = lineno - 1 if header else lineno
            bad = line[err.start : err.end]
            problems.append(
                Problem(
                    None,
                    "0x" + bad.hex(),
                    f"{encoding} text (byte {err.start + 1} of the line cannot be decoded; "
                    "re-save the file as UTF-8 or pass encoding=...)",
                    (row,) if row > 0 else (),
                )
            )
    return problems


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise RatingsError(str(path), [Problem(None, None, "an existing file")]) from None
    except OSError as err:
        raise RatingsError(str(path), [Problem(None, None, f"a readable file ({err})")]) from None


def _load_delimited(path: Path, sep: str, encoding: str) -> pl.DataFrame:
    raw = _read_bytes(path)
    if path.suffix.lower() == ".gz":
        import gzip

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise RatingsError(str(path), [Problem(None, None, f"gzip data ({err})")]) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        raise RatingsError(
            str(path), [Problem(None, None, "a header and data rows (file is empty)")]
        )
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        raise RatingsError(str(path), _undecodable_rows(raw, encoding, header=True)) from None
    try:
        return pl.read_csv(
            io.StringIO(text),
            separator=sep,
            infer_schema=False,
            empty_string_is_null=True,
            truncate_ragged_lines=False,
        )
    except (pl.exceptions.PolarsError, ValueError) as err:
        kind = "TSV" if sep == "\t" else "CSV"
        problems = _ragged_rows(text, sep, kind)
        if not problems:
            msg = str(err).splitlines()[0] if str(err) else type(err).__name__
            problems = [Problem(None, None, f"well-formed {kind} ({msg})")]
        raise RatingsError(str(path), problems) from None


def _ragged_rows(text: str, sep: str, kind: str) -> list[Problem]:
    """Rows whose number of fields differs from the header's (polars only says 'ragged')."""
    import csv

    reader = csv.reader(io.StringIO(text), delimiter=sep)
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        return []
    problems = []
    try:
        for row, fields in enumerate(reader, start=1):
            if fields and len(fields) != len(header):
                problems.append(
                    Problem(
                        None,
                        f"{len(fields)} fields",
                        f"{len(header)} fields as in the {kind} header",
                        (row,),
                    )
                )
    except csv.Error as err:
        problems.append(Problem(None, None, f"well-formed {kind} ({err})"))
    return problems


def _scalar_text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_level(v) if v == v else None
    return str(v)


def _records_to_frame(records: list[tuple[int, Any]], source: str) -> pl.DataFrame:
    problems: list[Problem] = []
    names: dict[str, None] = {}
    for row, rec in records:
        if not isinstance(rec, dict):
            problems.append(Problem(None, type(rec).__name__, "a JSON object per record", (row,)))
            continue
        for k, v in rec.items():
            names.setdefault(str(k), None)
            if isinstance(v, dict | list):
                problems.append(Problem(str(k), json.dumps(v)[:60], "a scalar value", (row,)))
    if problems:
        raise RatingsError(source, problems)
    cols: dict[str, list[str | None]] = {n: [] for n in names}
    for _, rec in records:
        for n in names:
            cols[n].append(_scalar_text(rec.get(n)))
    rows = [row for row, _ in records]
    frame = pl.DataFrame(cols, schema=dict.fromkeys(names, pl.String))
    return frame.with_columns(pl.Series(_JSON_ROW, rows, dtype=pl.Int64))


def _load_jsonl(path: Path, encoding: str) -> pl.DataFrame:
    raw = _read_bytes(path)
    if not raw.strip():
        raise RatingsError(str(path), [Problem(None, None, "JSON lines (file is empty)")])
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        raise RatingsError(str(path), _undecodable_rows(raw, encoding, header=False)) from None
    records: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((lineno, json.loads(line)))
        except json.JSONDecodeError as err:
            problems.append(Problem(None, line[:60], f"a JSON object ({err.msg})", (lineno,)))
    if problems:
        raise RatingsError(str(path), problems)
    return _records_to_frame(records, str(path))


def _load_json(path: Path, encoding: str) -> pl.DataFrame:
    raw = _read_bytes(path)
    try:
        doc = json.loads(raw.decode(encoding))
    except UnicodeDecodeError:
        raise RatingsError(str(path), _undecodable_rows(raw, encoding, header=False)) from None
    except json.JSONDecodeError as err:
        raise RatingsError(
            str(path),
            [Problem(None, None, f"a JSON array of records ({err.msg}, line {err.lineno})")],
        ) from None
    if not isinstance(doc, list):
        raise RatingsError(
            str(path), [Problem(None, type(doc).__name__, "a JSON array of records")]
        )
    return _records_to_frame(list(enumerate(doc, start=1)), str(path))


def _load_parquet(path: Path) -> pl.DataFrame:
    _read_bytes(path)  # existence / permission errors with a clear message
    try:
        return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError, ValueError) as err:
        msg = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise RatingsError(str(path), [Problem(None, None, f"a Parquet file ({msg})")]) from None


def _stringify(frame: pl.DataFrame) -> pl.DataFrame:
    """Every column as text (nulls kept), so that validation sees values as written."""
    out = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if dtype.is_float():
            col = col.fill_nan(None)
            vals = frame.get_column(name).fill_nan(None).drop_nulls()
            integral = bool((vals == vals.floor()).all()) and bool((vals.abs() < 2**53).all())
            if vals.len() and integral:
                col = col.cast(pl.Int64)
        elif dtype == pl.Boolean:
            col = pl.when(col).then(pl.lit("true")).when(~col).then(pl.lit("false"))
        elif dtype.is_nested():
            col = col.cast(pl.String, strict=False)
        out.append(col.cast(pl.String).alias(name))
    return frame.select(out) if out else frame


def _load(source: Any, file_format: FileFormat | None, encoding: str) -> tuple[pl.DataFrame, str]:
    """Load a source as an all-text frame with a 1-based ``source_row`` column."""
    if isinstance(source, pl.LazyFrame):
        source = source.collect()
    if isinstance(source, pl.DataFrame):
        frame, name = source, "a polars DataFrame"
    elif type(source).__module__.startswith("pandas") and hasattr(source, "columns"):
        name = "a pandas DataFrame"
        try:
            frame = pl.from_pandas(source)
        except Exception as err:  # pandas objects polars cannot convert
            raise RatingsError(
                name, [Problem(None, None, f"a convertible frame ({err})")]
            ) from None
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        suffix = path.suffix.lower()
        if suffix == ".gz":
            suffix = Path(path.stem).suffix.lower()
        fmt = file_format or _SUFFIXES.get(suffix)
        if fmt is None:
            raise RatingsError(
                str(path),
                [
                    Problem(
                        None,
                        path.suffix,
                        "a .csv, .tsv, .parquet, .jsonl or .json file (or pass file_format=)",
                    )
                ],
            )
        name = str(path)
        if fmt in ("csv", "tsv"):
            frame = _load_delimited(path, "," if fmt == "csv" else "\t", encoding)
        elif fmt == "parquet":
            frame = _load_parquet(path)
        elif fmt == "jsonl":
            frame = _load_jsonl(path, encoding)
        else:
            frame = _load_json(path, encoding)
    else:
        raise TypeError(
            f"read_ratings: source must be a path or a polars/pandas DataFrame, not "
            f"{type(source).__name__}"
        )
    if frame.height == 0:
        raise RatingsError(name, [Problem(None, None, "at least one data row (input is empty)")])
    # JSON loaders number records by their line; other sources by position
    rows = (
        frame.get_column(_JSON_ROW)
        if _JSON_ROW in frame.columns
        else pl.Series(range(1, frame.height + 1), dtype=pl.Int64)
    )
    frame = _stringify(frame.drop(_JSON_ROW, strict=False))
    if S.ROW in frame.columns:
        raise RatingsError(
            name,
            [
                Problem(
                    S.ROW, None, f"no column named {S.ROW!r} (reserved for row numbers; rename it)"
                )
            ],
        )
    return frame.with_columns(rows.alias(S.ROW)), name


# ----------------------------------------------------------------------------- columns


def _resolve_columns(
    present: Sequence[str],
    columns: Mapping[str, str] | None,
    *,
    need_rating: bool,
    problems: list[Problem],
) -> dict[str, str]:
    aliases = S.alias_table()
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for key, user_col in (columns or {}).items():
        role = aliases.get(str(key).lower())
        if role is None:
            problems.append(Problem(str(key), None, f"a column role, one of {sorted(S.ROLES)}"))
            continue
        if user_col not in present:
            close = difflib.get_close_matches(str(user_col), list(present), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                Problem(
                    str(user_col),
                    None,
                    f"a column of the input for role {role!r} (unknown column; the input has "
                    f"{list(present)}{hint})",
                )
            )
            mapping[role] = ""  # known role, column missing: do not auto-detect it
            continue
        mapping[role] = user_col
        used.add(user_col)
    for role in S.ROLES:
        if role in mapping:
            continue
        hits = [c for c in present if c not in used and aliases.get(c.strip().lower()) == role]
        if len(hits) > 1:
            problems.append(
                Problem(
                    None,
                    None,
                    f"one column for role {role!r}, found {hits}; "
                    f"choose with columns={{{role!r}: ...}}",
                )
            )
        elif hits:
            mapping[role] = hits[0]
            used.add(hits[0])
    required = [S.ITEM, S.RATER, S.RATING] if need_rating else [S.ITEM]
    for role in required:
        if role not in mapping:
            looked = [role, *S.ROLES[role].aliases]
            close = difflib.get_close_matches(role, [c.lower() for c in present], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                Problem(
                    None,
                    None,
                    f"a column for the required role {role!r} (none of {looked} is in "
                    f"{list(present)}{hint}; name it with columns={{{role!r}: ...}})",
                )
            )
    return {r: c for r, c in mapping.items() if c}


def _group_rows(
    frame: pl.DataFrame, mask: pl.Series, value_col: str
) -> list[tuple[str | None, tuple[int, ...]]]:
    """Group the rows where `mask` holds by their value in `value_col`."""
    bad = frame.filter(mask)
    if bad.height == 0:
        return []
    grouped = (
        bad.group_by(value_col, maintain_order=True)
        .agg(pl.col(S.ROW).sort())
        .sort(pl.col(S.ROW).list.first())
    )
    return [(v, tuple(rows)) for v, rows in grouped.iter_rows()]


def _parse_bool(col: pl.Expr) -> pl.Expr:
    low = col.str.strip_chars().str.to_lowercase()
    as_num = low.cast(pl.Float64, strict=False)
    return (
        pl.when(low.is_null())
        .then(pl.lit(False))
        .when(low.is_in(sorted(_TRUE)))
        .then(pl.lit(True))
        .when(low.is_in(sorted(_FALSE)))
        .then(pl.lit(False))
        .when(as_num.is_not_null() & (as_num >= 0) & (as_num == as_num.floor()))
        .then(as_num > 0)
        .otherwise(pl.lit(None, dtype=pl.Boolean))
    )


def _restore_type(col: pl.Series) -> pl.Series:
    """A kept extra column back as integers or floats when every value parses as one."""
    text = col.str.strip_chars()
    for dtype in (pl.Int64, pl.Float64):
        cast = text.cast(dtype, strict=False)
        if cast.null_count() == text.null_count():
            return cast
    return col


# ----------------------------------------------------------------------------- public


def read_ratings(
    source: Any,
    *,
    columns: Mapping[str, str] | None = None,
    scale: Scale | Mapping[str, Scale] | None = None,
    format: Literal["long", "wide"] = "long",
    raters: Sequence[str] | None = None,
    dimension: str | None = None,
    design: str | None = None,
    missing: Literal["error", "drop"] = "error",
    keep: Sequence[str] = (),
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    name: str | None = None,
) -> Ratings:
    """Read ratings from a file or a frame and validate them.

    Parameters
    ----------
    source : path or DataFrame
        A ``.csv``, ``.tsv``, ``.parquet``, ``.jsonl`` (``.ndjson``) or ``.json`` file, or a
        polars / pandas DataFrame.
    columns : mapping, optional
        ``{role: user_column}`` for the roles of :mod:`raterstats.schema` (``item``,
        ``rater``, ``rating``, ``segment``, ``dimension``, ``design``, ``system``,
        ``question``, ``length``, ``group``, ``duration_s``, ``confidence``, ``repeat``,
        ``gold``, ``rater_kind``). Roles not given are found by name, with common aliases
        (task / worker / label, annotator, judge, score, ...), case-insensitively.
    scale : Scale or mapping of dimension to Scale, optional
        The declared scale(s). When omitted, a scale is inferred per dimension from the
        values and the summary says so.
    format : {"long", "wide"}
        ``long``: one rating per row. ``wide``: one item per row and one column per rater
        (empty cells are not-rated and are counted in the summary's steps).
    raters : sequence of str, optional
        Wide format: the rater columns (default: every column without a role).
    dimension, design : str, optional
        Constant dimension / design for data without such a column.
    missing : {"error", "drop"}
        Long format: an empty rating is an error (default) or is excluded and counted.
    keep : sequence of str
        Extra columns (without a role) to keep in :attr:`Ratings.data`.
    file_format : str, optional
        Override the format implied by the file suffix.
    encoding : str
        Text encoding of CSV / TSV / JSON files.
    name : str, optional
        How the source is named in errors and summaries (default: the path, or "a polars
        DataFrame").

    Returns
    -------
    Ratings

    Raises
    ------
    RatingsError
        Listing every problem: file, 1-based data row, column, value and what was expected.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings, OrdinalScale
    >>> frame = pl.DataFrame({"task": ["q1", "q1", "q2"], "worker": ["a", "b", "a"],
    ...                       "label": [5, 4, 2]})
    >>> r = read_ratings(frame, scale=OrdinalScale.likert(5))
    >>> r.data.select("item", "rater", "rating").rows()
    [('q1', 'a', '5'), ('q1', 'b', '4'), ('q2', 'a', '2')]
    """
    if format not in ("long", "wide"):
        raise ValueError(f"format must be 'long' or 'wide', not {format!r}")
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', not {missing!r}")
    raw, loaded_as = _load(source, file_format, encoding)
    name = name or loaded_as
    problems: list[Problem] = []
    present = [c for c in raw.columns if c != S.ROW]
    mapping = _resolve_columns(present, columns, need_rating=(format == "long"), problems=problems)
    for k in keep:
        if k not in present:
            problems.append(Problem(k, None, f"a column of the input to keep (has {present})"))
    steps: list[str] = []
    rater_cols: list[str] = []
    if format == "wide":
        role_cols = set(mapping.values()) | set(keep)
        rater_cols = (
            list(raters) if raters is not None else [c for c in present if c not in role_cols]
        )
        for c in rater_cols:
            if c not in present:
                problems.append(Problem(c, None, f"a rater column of the input (has {present})"))
        rater_cols = [c for c in rater_cols if c in present]
        if S.RATER in mapping or S.RATING in mapping:
            problems.append(
                Problem(
                    None, None, "no 'rater'/'rating' roles in wide format (each rater is a column)"
                )
            )
        if not rater_cols:
            problems.append(Problem(None, None, "at least one rater column in wide format"))
        if problems:
            raise RatingsError(name, problems)
        id_cols = [c for c in raw.columns if c not in rater_cols]
        long = raw.unpivot(
            index=id_cols, on=rater_cols, variable_name="__rater", value_name=_WIDE_RATING
        )
        n_empty = int(long.get_column(_WIDE_RATING).is_null().sum())
        long = long.filter(pl.col(_WIDE_RATING).is_not_null())
        steps.append(
            f"wide format: {len(rater_cols)} rater columns; {n_empty} empty cells are not-rated"
        )
        mapping[S.RATER] = "__rater"
        mapping[S.RATING] = _WIDE_RATING
        raw = long.sort(S.ROW, "__rater", maintain_order=True)
        if raw.height == 0:
            raise RatingsError(name, [Problem(None, None, "at least one rating (all cells empty)")])

    used = set(mapping.values()) | set(keep) | set(rater_cols if format == "wide" else ())
    ignored = tuple(c for c in present if c not in used)
    work = raw.select(
        pl.col(S.ROW),
        *[pl.col(c).str.strip_chars().alias(role) for role, c in mapping.items()],
        *[
            _restore_type(raw.get_column(k))
            for k in keep
            if k in raw.columns and k not in mapping.values()
        ],
    )
    # constant dimension / design
    for role, const in ((S.DIMENSION, dimension), (S.DESIGN, design)):
        if const is not None:
            if role in mapping:
                problems.append(
                    Problem(mapping[role], None, f"either a {role} column or {role}=..., not both")
                )
            work = work.with_columns(pl.lit(str(const)).alias(role))
        elif role not in work.columns:
            work = work.with_columns(pl.lit(S.DEFAULT_LEVEL).alias(role))
    if S.SEGMENT not in work.columns:
        work = work.with_columns(pl.lit(None, dtype=pl.String).alias(S.SEGMENT))
    else:
        work = work.with_columns(
            pl.when(pl.col(S.SEGMENT) == "")
            .then(None)
            .otherwise(pl.col(S.SEGMENT))
            .alias(S.SEGMENT)
        )

    def col_name(role: str) -> str:
        return mapping.get(role, role)

    # ids that must be present
    for role in (
        S.ITEM,
        S.RATER,
        S.DIMENSION,
        S.DESIGN,
        S.SYSTEM,
        S.QUESTION,
        S.GROUP,
        S.RATER_KIND,
    ):
        if role not in work.columns:
            continue
        if role in (S.DIMENSION, S.DESIGN) and role not in mapping:
            continue
        empty = work.get_column(role).is_null() | (work.get_column(role) == "")
        empty = empty.fill_null(True)
        if empty.any():
            rows = tuple(work.filter(empty).get_column(S.ROW).to_list())
            problems.append(Problem(col_name(role), "", f"a non-empty {role} id", rows))

    # repeat marker
    if S.REPEAT in work.columns:
        parsed = work.select(_parse_bool(pl.col(S.REPEAT)).alias("__rep")).get_column("__rep")
        bad = parsed.is_null() & work.get_column(S.REPEAT).is_not_null()
        for v, rows in _group_rows(work, bad, S.REPEAT):
            problems.append(
                Problem(
                    col_name(S.REPEAT),
                    v,
                    "a repeat marker (true/false, yes/no, 1/0, or a repeat index 0, 1, 2, ...)",
                    rows,
                )
            )
        work = work.with_columns(parsed.fill_null(False).alias(S.REPEAT))
    else:
        work = work.with_columns(pl.lit(False).alias(S.REPEAT))

    # numeric covariates
    for role in S.NUMERIC_ROLES:
        if role not in work.columns:
            continue
        num = work.get_column(role).cast(pl.Float64, strict=False)
        bad = (num.is_null() & work.get_column(role).is_not_null()) | ~num.is_finite().fill_null(
            True
        )
        for v, rows in _group_rows(work, bad, role):
            problems.append(Problem(col_name(role), v, "a number", rows))
        if role in (S.LENGTH, S.DURATION):
            neg = (num < 0).fill_null(False)
            for v, rows in _group_rows(work, neg, role):
                problems.append(Problem(col_name(role), v, "a non-negative number", rows))
        work = work.with_columns(num.alias(role))

    # ratings on scales, per dimension
    excluded: list[Exclusion] = []
    if S.RATING in work.columns:
        null_rating = work.get_column(S.RATING).is_null() | (work.get_column(S.RATING) == "")
        null_rating = null_rating.fill_null(True)
        if null_rating.any():
            if missing == "drop" and null_rating.all():
                rows = tuple(work.get_column(S.ROW).to_list())
                problems.append(
                    Problem(
                        col_name(S.RATING),
                        "",
                        "at least one non-empty rating (every rating is empty, nothing is "
                        "left after missing='drop')",
                        rows,
                    )
                )
                work = work.filter(~null_rating)
            elif missing == "drop":
                n = int(null_rating.sum())
                work = work.filter(~null_rating)
                excluded.append(Exclusion("empty rating (missing='drop')", n))
            else:
                rows = tuple(work.filter(null_rating).get_column(S.ROW).to_list())
                problems.append(
                    Problem(
                        col_name(S.RATING),
                        "",
                        "a rating (pass missing='drop' to exclude empty "
                        "ratings, counted in the summary)",
                        rows,
                    )
                )
                work = work.filter(~null_rating)
    scales, inferred, work = _encode_ratings(work, scale, mapping, problems)

    # item-level attributes must be constant per item; rater kind per rater
    for role, per in (
        (S.SYSTEM, S.ITEM),
        (S.QUESTION, S.ITEM),
        (S.LENGTH, S.ITEM),
        (S.RATER_KIND, S.RATER),
    ):
        if role not in work.columns or per not in work.columns:
            continue
        clash = (
            work.filter(pl.col(role).is_not_null() & pl.col(per).is_not_null())
            .group_by(per)
            .agg(
                pl.col(role).n_unique().alias("n"),
                pl.col(role).unique().sort().alias("vals"),
                pl.col(S.ROW).sort().alias("rows"),
            )
            .filter(pl.col("n") > 1)
            .sort(pl.col("rows").list.first())
        )
        for key, _, vals, rows in clash.iter_rows():
            problems.append(
                Problem(
                    col_name(role),
                    ", ".join(map(format_level, vals)),
                    f"one {role} per {per} ({per} {key!r} has several)",
                    tuple(rows),
                )
            )

    # duplicates
    if S.ITEM in work.columns and S.RATER in work.columns and S.RATING in work.columns:
        key = [c for c in S.KEY if c in work.columns]
        dups = (
            work.filter(pl.struct(key).is_duplicated())
            .group_by(key)
            .agg(pl.col(S.ROW).sort().alias("rows"))
            .sort(pl.col("rows").list.first())
        )
        for rec in dups.iter_rows(named=True):
            desc = ", ".join(
                f"{k}={rec[k]!r}"
                for k in key
                if k != S.REPEAT
                and rec[k] is not None
                and (k in mapping or k not in (S.DIMENSION, S.DESIGN))
            )
            problems.append(
                Problem(
                    None,
                    desc,
                    "one rating per (item, segment, rater, dimension, design); mark repeated "
                    "ratings in a 'repeat' column",
                    tuple(rec["rows"]),
                )
            )

    if problems:
        raise RatingsError(name, problems)

    meta = Provenance(
        source=name,
        exclusions=tuple(excluded),
        steps=tuple(steps),
        ignored_columns=ignored,
        inferred_scales=tuple(inferred),
        extra_columns=tuple(keep),
    )
    return Ratings(work, scales, provenance=meta)


def _encode_ratings(
    work: pl.DataFrame,
    scale: Scale | Mapping[str, Scale] | None,
    mapping: Mapping[str, str],
    problems: list[Problem],
) -> tuple[dict[str, Scale], list[str], pl.DataFrame]:
    """Validate and encode the ``rating`` (and ``gold``) column, dimension by dimension."""
    scales: dict[str, Scale] = {}
    inferred: list[str] = []
    rating_col = mapping.get(S.RATING, S.RATING)
    if S.RATING not in work.columns or S.DIMENSION not in work.columns:
        return scales, inferred, work
    dims = [
        d
        for d in work.get_column(S.DIMENSION).unique(maintain_order=True).to_list()
        if d is not None and d != ""
    ]
    if isinstance(scale, Mapping):
        unknown = [d for d in scale if d not in dims]
        if unknown:
            problems.append(
                Problem(
                    mapping.get(S.DIMENSION, S.DIMENSION),
                    ", ".join(map(str, unknown)),
                    f"scales only for dimensions in the data {dims}",
                )
            )
    pieces = []
    for d in dims:
        sub = work.filter(pl.col(S.DIMENSION) == d)
        sc: Scale
        if isinstance(scale, Scale):
            sc = scale
        elif isinstance(scale, Mapping):
            found = scale.get(d)
            if found is None:
                rows = tuple(sub.get_column(S.ROW).to_list())
                problems.append(
                    Problem(
                        mapping.get(S.DIMENSION, S.DIMENSION),
                        str(d),
                        f"a dimension with a declared scale {sorted(scale)}",
                        rows,
                    )
                )
                continue
            sc = found
        elif scale is None:
            try:
                sc = infer_scale(sub.get_column(S.RATING))
            except ValueError as err:
                problems.append(Problem(rating_col, None, f"a scale for dimension {d!r}: {err}"))
                continue
            inferred.append(str(d))
        else:
            raise TypeError(
                f"scale must be a Scale or a mapping of dimension to Scale, "
                f"not {type(scale).__name__}"
            )
        enc = sc.encode(sub.get_column(S.RATING))
        where = f" (dimension {d!r})" if len(dims) > 1 or d != S.DEFAULT_LEVEL else ""
        if rating_col == _WIDE_RATING:  # wide format: the rating sits in the rater's column
            bad = sub.filter(enc.invalid)
            for rater in bad.get_column(S.RATER).unique(maintain_order=True).to_list():
                in_col = bad.filter(pl.col(S.RATER) == rater)
                for v, rows in _group_rows(in_col, pl.Series([True] * in_col.height), S.RATING):
                    problems.append(Problem(rater, v, sc.expected() + where, rows))
        else:
            for v, rows in _group_rows(sub, enc.invalid, S.RATING):
                problems.append(Problem(rating_col, v, sc.expected() + where, rows))
        sub = sub.with_columns(enc.rating.alias(S.RATING), enc.value, enc.code)
        if S.GOLD in sub.columns:
            genc = sc.encode(sub.get_column(S.GOLD))
            for v, rows in _group_rows(sub, genc.invalid, S.GOLD):
                problems.append(
                    Problem(
                        mapping.get(S.GOLD, S.GOLD),
                        v,
                        "a gold label on the scale: " + sc.expected() + where,
                        rows,
                    )
                )
            sub = sub.with_columns(genc.rating.alias(S.GOLD))
        scales[str(d)] = sc
        pieces.append(sub)
    if not pieces:
        return scales, inferred, work
    out = pl.concat(pieces, how="vertical_relaxed").sort(S.ROW, maintain_order=True)
    if (
        not isinstance(next(iter(scales.values())), CategoricalScale)
        and out.schema[S.CODE] != pl.Int32
    ):
        out = out.with_columns(pl.col(S.CODE).cast(pl.Int32))
    return scales, inferred, out
