"""Loading annotation exports as all-text polars frames, before any validation.

CSV / TSV, Parquet, JSON lines and JSON arrays of records (each optionally gzipped), and
polars / pandas frames. :func:`read_source` returns every column as text (values as
written, nulls kept) with the 1-based ``source_row`` of each record, and lists what it
could not read as :class:`~raterstats.ingest_errors.Problem` s (ragged rows, JSON syntax
errors, duplicate column names) while reading on, so that :func:`raterstats.read_ratings`
reports them together with everything else. A file that cannot be read at all raises
:class:`~raterstats.RatingsError` naming the file and, where known, the row.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
from raterstats.delimited import (
    check_separator,
    duplicate_columns,
    parse_delimited,
    separator_name,
    sniff_separator,
)
from raterstats.ingest_errors import Problem, RatingsError
from raterstats.scales import format_level

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
_ROWS = "__source_row__"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class LoadedSource:
    """A source loaded as text, with what loading found and did.

    Attributes
    ----------
    frame : pl.DataFrame
        Every column as text, plus ``source_row`` (data rows from 1; for JSON lines the
        line, for a JSON array the record). Rows listed in ``problems`` are left out.
    name : str
        How the source is named in errors: the path, or "a polars DataFrame".
    problems : tuple of Problem
        What could not be read (ragged rows, JSON syntax errors, duplicate column names or
        keys); empty for a clean source.
    steps : tuple of str
        What loading did that a summary should say (a sniffed delimiter other than the
        comma, blank lines skipped between rows).
    nested : mapping of str to tuple of int
        Columns holding lists or objects (JSON, Parquet, frames), kept as JSON text, and
        the rows where they do; such a value in a role column is a problem for the caller.
    separator : str or None
        The delimiter used for CSV / TSV, None for other sources.
    separator_note : str or None
        Why the delimiter is uncertain (sniffing was ambiguous, or the header is one
        column), to show when the columns then do not make sense.

    Examples
    --------
    >>> import polars as pl
    >>> loaded = read_source(pl.DataFrame({"item": ["a"], "tags": [["x", "y"]]}))
    >>> loaded.frame.rows(), dict(loaded.nested)
    ([('a', '["x", "y"]', 1)], {'tags': (1,)})
    """

    frame: pl.DataFrame
    name: str
    problems: tuple[Problem, ...] = ()
    steps: tuple[str, ...] = ()
    nested: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    separator: str | None = None
    separator_note: str | None = None


@dataclass
class _Loaded:
    """What one loader returns (mutable while loading)."""

    frame: pl.DataFrame
    problems: list[Problem] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    nested: dict[str, tuple[int, ...]] = field(default_factory=dict)
    separator: str | None = None
    separator_note: str | None = None


def _undecodable_rows(raw: bytes, encoding: str, header: bool) -> list[Problem]:
    problems = []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        try:
            line.decode(encoding)
        except UnicodeDecodeError as err:
            row = lineno - 1 if header else lineno
            bad = line[err.start : err.end]
            where = " of the header" if header and row == 0 else ""
            problems.append(
                Problem(
                    None,
                    "0x" + bad.hex(),
                    f"{encoding} text (byte {err.start + 1} of the line{where} cannot be "
                    "decoded; re-save the file as UTF-8 or pass encoding=...)",
                    (row,) if row > 0 else (),
                )
            )
    return problems


def _read_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RatingsError(str(path), [Problem(None, None, "an existing file")]) from None
    except OSError as err:
        raise RatingsError(str(path), [Problem(None, None, f"a readable file ({err})")]) from None
    if path.suffix.lower() == ".gz":
        import gzip

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise RatingsError(str(path), [Problem(None, None, f"gzip data ({err})")]) from None
    return raw


def _read_text(path: Path, encoding: str, *, what: str, header: bool) -> str:
    """The decoded text of a file; empty files, byte-order marks and bad bytes reported."""
    raw = _read_bytes(path)
    utf8 = encoding.lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    elif utf8 and raw.startswith(_UTF16_BOMS):
        raise RatingsError(
            str(path),
            [
                Problem(
                    None,
                    None,
                    f"{encoding} text (the file starts with a UTF-16 byte-order mark: "
                    "pass encoding='utf-16')",
                )
            ],
        )
    if not raw.strip():
        raise RatingsError(str(path), [Problem(None, None, f"{what} (file is empty)")])
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        raise RatingsError(str(path), _undecodable_rows(raw, encoding, header)) from None


def _load_delimited(path: Path, fmt: FileFormat, separator: str | None, encoding: str) -> _Loaded:
    kind = fmt.upper()
    text = _read_text(path, encoding, what="a header and data rows", header=True)
    steps = []
    note = None
    if separator is None and fmt == "csv":
        guess = sniff_separator(text)
        separator, note = guess.separator, guess.note
        if separator != ",":
            steps.append(
                f"CSV delimiter {separator_name(separator)}, sniffed from the header and "
                f"{guess.n_rows} data row{'' if guess.n_rows == 1 else 's'} (pass separator= "
                "to choose another)"
            )
    elif separator is None:
        separator = "\t"
    table = parse_delimited(text, separator, kind=kind)
    if note is None and table.frame.width == 1:
        note = (
            f"a header of several columns (split on {separator_name(separator)} it is one "
            "column; pass separator= with the file's delimiter)"
        )
    if table.blank_rows:
        rows = ", ".join(map(str, table.blank_rows[:10]))
        more = len(table.blank_rows) - 10
        n = len(table.blank_rows)
        steps.append(
            f"{n} blank line{'' if n == 1 else 's'} between data rows skipped "
            f"(row{'' if n == 1 else 's'} {rows}" + (f" and {more} more" if more > 0 else "") + ")"
        )
    frame = table.frame.with_columns(pl.Series(_ROWS, table.rows, dtype=pl.Int64))
    return _Loaded(frame, table.problems, steps, separator=separator, separator_note=note)


def _scalar_text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_level(v) if v == v else None
    if isinstance(v, dict | list):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


class _JsonObject(dict[str, Any]):
    """A JSON object that remembers the keys it holds twice (json keeps the last)."""

    repeated: list[tuple[str, int, int]]


def _object_pairs(pairs: list[tuple[str, Any]]) -> _JsonObject:
    obj = _JsonObject()
    obj.repeated = []
    first: dict[str, int] = {}
    for pos, (k, v) in enumerate(pairs, start=1):
        if k in first:
            obj.repeated.append((k, first[k], pos))
        else:
            first[k] = pos
            obj[k] = v
    return obj


def _records_to_frame(records: list[tuple[int, Any]], what: str) -> _Loaded:
    """Records (row, parsed JSON) as text columns; records that are no object, or repeat a
    key, are problems and left out; lists and objects are kept as JSON text."""
    problems: list[Problem] = []
    names: dict[str, None] = {}
    kept: list[tuple[int, dict[str, Any]]] = []
    for row, rec in records:
        if not isinstance(rec, dict):
            problems.append(Problem(None, type(rec).__name__, f"a JSON object per {what}", (row,)))
            continue
        repeated = getattr(rec, "repeated", [])
        for k, a, b in repeated:
            problems.append(
                Problem(
                    k,
                    None,
                    f"each key once per JSON object (key {k!r} is key {a} and key {b} of this "
                    f"{what}; a JSON reader keeps only one of them: rename or remove one)",
                    (row,),
                )
            )
        if repeated:
            continue
        names.update(dict.fromkeys(map(str, rec)))
        kept.append((row, rec))
    cols: dict[str, list[str | None]] = {n: [] for n in names}
    nested: dict[str, list[int]] = {}
    for row, rec in kept:
        for n in names:
            v = rec.get(n)
            if isinstance(v, dict | list):
                nested.setdefault(n, []).append(row)
            cols[n].append(_scalar_text(v))
    # the row numbers built with the columns: objects without keys ({}) make rows with no
    # column, which a frame of the columns alone would not count
    frame = pl.DataFrame(
        {**cols, _ROWS: [row for row, _ in kept]},
        schema={**dict.fromkeys(names, pl.String), _ROWS: pl.Int64},
    )
    return _Loaded(frame, problems, nested={k: tuple(v) for k, v in nested.items()})


def _load_jsonl(path: Path, encoding: str) -> _Loaded:
    text = _read_text(path, encoding, what="JSON lines", header=False)
    records: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((lineno, json.loads(line, object_pairs_hook=_object_pairs)))
        except json.JSONDecodeError as err:
            problems.append(
                Problem(
                    None,
                    line[:60],
                    f"a JSON object ({err.msg} at character {err.pos + 1}); the line was not read",
                    (lineno,),
                )
            )
    loaded = _records_to_frame(records, "line")
    loaded.problems[:] = sorted([*problems, *loaded.problems], key=lambda p: p.rows)
    return loaded


def _load_json(path: Path, encoding: str) -> _Loaded:
    text = _read_text(path, encoding, what="a JSON array of records", header=False)
    try:
        doc = json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as err:
        raise RatingsError(
            str(path),
            [
                Problem(
                    None,
                    None,
                    f"a JSON array of records ({err.msg}, line {err.lineno} column {err.colno})",
                )
            ],
        ) from None
    if not isinstance(doc, list):
        raise RatingsError(
            str(path), [Problem(None, type(doc).__name__, "a JSON array of records")]
        )
    return _records_to_frame(list(enumerate(doc, start=1)), "record")


def _load_parquet(path: Path) -> _Loaded:
    raw = _read_bytes(path)  # existence / permission errors with a clear message
    try:
        import pyarrow.parquet as pq

        table = pq.ParquetFile(io.BytesIO(raw)).read()
        keep, problems = duplicate_columns(table.column_names, "Parquet file")
        frame = pl.from_arrow(table.select(keep) if problems else table)
    except (pl.exceptions.PolarsError, OSError, ValueError) as err:
        msg = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise RatingsError(str(path), [Problem(None, None, f"a Parquet file ({msg})")]) from None
    assert isinstance(frame, pl.DataFrame)
    return _Loaded(frame, problems)


def _load_pandas(source: Any, name: str) -> _Loaded:
    names = [str(c) for c in source.columns]
    keep, problems = duplicate_columns(names, "pandas DataFrame")
    if problems:
        source = source.iloc[:, keep]
    try:
        return _Loaded(pl.from_pandas(source), problems)
    except Exception:  # e.g. an object column of mixed types: convert column by column
        pass
    columns = []
    nested: dict[str, tuple[int, ...]] = {}
    for k, n in enumerate(names[k] for k in keep):
        col = source.iloc[:, k]
        try:
            columns.append(pl.Series(n, col))
            continue
        except Exception:  # values as text, each as written
            pass
        values = [None if _is_missing(v) else v for v in col.tolist()]
        at = tuple(j + 1 for j, v in enumerate(values) if isinstance(v, dict | list))
        if at:
            nested[n] = at
        columns.append(pl.Series(n, [_scalar_text(v) for v in values], dtype=pl.String))
    return _Loaded(pl.DataFrame(columns), problems, nested=nested)


def _is_missing(v: Any) -> bool:
    """None, NaN, pandas' NA / NaT (a value that is not a scalar is not missing)."""
    if v is None or (isinstance(v, float) and v != v):
        return True
    try:
        import pandas as pd

        return bool(pd.isna(v)) if pd.api.types.is_scalar(v) else False
    except (TypeError, ValueError):
        return False


def _text_column(col: pl.Series) -> tuple[pl.Series, tuple[int, ...]]:
    """A column as text (nulls kept) and, for lists / structs, the positions holding one."""
    dtype = col.dtype
    if dtype.is_nested():
        values = col.to_list()
        text = [
            None if v is None else json.dumps(v, ensure_ascii=False, default=str) for v in values
        ]
        return pl.Series(col.name, text, dtype=pl.String), tuple(
            k for k, v in enumerate(values) if v is not None
        )
    if dtype.is_float():
        col = col.fill_nan(None)
        vals = col.drop_nulls()
        integral = bool((vals == vals.floor()).all()) and bool((vals.abs() < 2**53).all())
        if vals.len() and integral:
            col = col.cast(pl.Int64)
    elif dtype == pl.Boolean:
        col = col.replace_strict({True: "true", False: "false"}, return_dtype=pl.String)
    try:
        return col.cast(pl.String), ()
    except pl.exceptions.PolarsError:  # e.g. binary or object columns
        return pl.Series(col.name, [None if v is None else str(v) for v in col], pl.String), ()


def read_source(
    source: Any,
    *,
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    separator: str | None = None,
) -> LoadedSource:
    """Load a file or a frame as an all-text frame, listing what could not be read.

    Parameters
    ----------
    source : path or DataFrame
        A ``.csv``, ``.tsv`` (``.tab``), ``.parquet`` (``.pq``), ``.jsonl`` (``.ndjson``)
        or ``.json`` file, optionally gzipped, or a polars (lazy) / pandas DataFrame.
    file_format : {"csv", "tsv", "parquet", "jsonl", "json"}, optional
        Override the format implied by the file suffix.
    encoding : str
        Text encoding of CSV / TSV / JSON files.
    separator : str, optional
        The delimiter of a CSV / TSV file. By default a ``.tsv`` file is split on tabs and
        the delimiter of a ``.csv`` file (comma, semicolon, tab or pipe) is sniffed from its
        header and first rows; a sniffed delimiter other than the comma is listed in
        :attr:`LoadedSource.steps`.

    Returns
    -------
    LoadedSource

    Raises
    ------
    RatingsError
        When the source cannot be read at all, has no data row, or has a ``source_row``
        column.
    ValueError
        When ``separator`` is not one character, or is given for a source that is not
        delimited text.
    TypeError
        When ``source`` is neither a path nor a frame.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "r.csv"
    ...     _ = path.write_text("item;rater;rating\\na;x;4\\nb;x\\n")
    ...     loaded = read_source(path)
    >>> loaded.frame.rows(), loaded.separator
    ([('a', 'x', '4', 1)], ';')
    >>> print(loaded.problems[0].describe("r.csv"))
    r.csv, row 2: got '2 fields'; expected 3 fields as in the CSV header
    """
    if separator is not None:
        check_separator(separator)
        if not isinstance(source, str | os.PathLike):
            raise ValueError(
                f"separator= is for CSV / TSV files, not a {type(source).__name__} source"
            )
    if isinstance(source, pl.LazyFrame):
        source = source.collect()
    if isinstance(source, pl.DataFrame):
        name = "a polars DataFrame"
        loaded = _Loaded(source)
    elif type(source).__module__.startswith("pandas") and hasattr(source, "columns"):
        name = "a pandas DataFrame"
        loaded = _load_pandas(source, name)
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
        if separator is not None and fmt not in ("csv", "tsv"):
            raise ValueError(f"separator= is for CSV / TSV files; {name} is read as {fmt}")
        if fmt in ("csv", "tsv"):
            loaded = _load_delimited(path, fmt, separator, encoding)
        elif fmt == "parquet":
            loaded = _load_parquet(path)
        elif fmt == "jsonl":
            loaded = _load_jsonl(path, encoding)
        else:
            loaded = _load_json(path, encoding)
    else:
        raise TypeError(
            f"read_ratings: source must be a path or a polars/pandas DataFrame, not "
            f"{type(source).__name__}"
        )
    return _finish(loaded, name)


def _finish(loaded: _Loaded, name: str) -> LoadedSource:
    """Text columns, ``source_row`` and the checks every source shares."""
    frame = loaded.frame
    if frame.height == 0:
        if loaded.problems:  # every record was unreadable: say why, not "empty"
            raise RatingsError(name, loaded.problems)
        raise RatingsError(name, [Problem(None, None, "at least one data row (input is empty)")])
    if S.ROW in frame.columns:
        raise RatingsError(
            name,
            [
                *loaded.problems,
                Problem(
                    S.ROW, None, f"no column named {S.ROW!r} (reserved for row numbers; rename it)"
                ),
            ],
        )
    # JSON and delimited loaders number records themselves; frames by position
    rows = (
        frame.get_column(_ROWS)
        if _ROWS in frame.columns
        else pl.Series(range(1, frame.height + 1), dtype=pl.Int64)
    )
    nested = dict(loaded.nested)
    out = []
    for col in frame.drop(_ROWS, strict=False).iter_columns():
        text, where = _text_column(col)
        if where:
            nested[col.name] = tuple(rows.gather(list(where)).to_list())
        out.append(text)
    return LoadedSource(
        frame=pl.DataFrame([*out, rows.alias(S.ROW)]),  # height from the rows: {} has none
        name=name,
        problems=tuple(loaded.problems),
        steps=tuple(loaded.steps),
        nested=nested,
        separator=loaded.separator,
        separator_note=loaded.separator_note,
    )


def load_source(
    source: Any,
    *,
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    separator: str | None = None,
) -> tuple[pl.DataFrame, str]:
    """Load a file or a frame as an all-text frame with a 1-based ``source_row`` column.

    The strict form of :func:`read_source`: any problem found while loading raises.

    Parameters
    ----------
    source : path or DataFrame
        A ``.csv``, ``.tsv`` (``.tab``), ``.parquet`` (``.pq``), ``.jsonl`` (``.ndjson``)
        or ``.json`` file, optionally gzipped, or a polars (lazy) / pandas DataFrame.
    file_format : {"csv", "tsv", "parquet", "jsonl", "json"}, optional
        Override the format implied by the file suffix.
    encoding : str
        Text encoding of CSV / TSV / JSON files.
    separator : str, optional
        The delimiter of a CSV / TSV file (default: sniffed for ``.csv``, tab for ``.tsv``).

    Returns
    -------
    frame : pl.DataFrame
        Every column as text, plus ``source_row`` (data rows from 1; for JSON the line or
        record number).
    name : str
        How the source is named in errors: the path, or "a polars DataFrame".

    Raises
    ------
    RatingsError
        When the source cannot be read, is empty, has a row or column that cannot be read,
        or has a ``source_row`` column.
    ValueError
        When ``separator`` is not one character, or is given for a source that is not
        delimited text.
    TypeError
        When ``source`` is neither a path nor a frame.

    Examples
    --------
    >>> import polars as pl
    >>> frame, name = load_source(pl.DataFrame({"item": ["a", "b"], "rating": [1.0, 2.0]}))
    >>> frame.rows(), name
    ([('a', '1', 1), ('b', '2', 2)], 'a polars DataFrame')
    """
    loaded = read_source(source, file_format=file_format, encoding=encoding, separator=separator)
    if loaded.problems:
        raise RatingsError(loaded.name, loaded.problems)
    return loaded.frame, loaded.name


__all__ = ["FileFormat", "LoadedSource", "load_source", "read_source"]
