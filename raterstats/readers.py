"""Loading annotation exports as all-text polars frames, before any validation.

CSV / TSV (optionally gzipped), Parquet, JSON lines and JSON arrays of records, and
polars / pandas frames. :func:`load_source` returns every column as text (values as
written, nulls kept) with the 1-based ``source_row`` of each record; a file that cannot be
read raises :class:`~raterstats.RatingsError` naming the file and, where known, the row.
Column roles and values are checked by :func:`raterstats.read_ratings`.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
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
_JSON_ROW = "__json_line__"


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


def load_source(
    source: Any, *, file_format: FileFormat | None = None, encoding: str = "utf-8"
) -> tuple[pl.DataFrame, str]:
    """Load a file or a frame as an all-text frame with a 1-based ``source_row`` column.

    Parameters
    ----------
    source : path or DataFrame
        A ``.csv``, ``.tsv`` (``.tab``), ``.parquet`` (``.pq``), ``.jsonl`` (``.ndjson``)
        or ``.json`` file, optionally gzipped, or a polars (lazy) / pandas DataFrame.
    file_format : {"csv", "tsv", "parquet", "jsonl", "json"}, optional
        Override the format implied by the file suffix.
    encoding : str
        Text encoding of CSV / TSV / JSON files.

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
        When the source cannot be read, is empty, or has a ``source_row`` column.
    TypeError
        When ``source`` is neither a path nor a frame.

    Examples
    --------
    >>> import polars as pl
    >>> frame, name = load_source(pl.DataFrame({"item": ["a", "b"], "rating": [1.0, 2.0]}))
    >>> frame.rows(), name
    ([('a', '1', 1), ('b', '2', 2)], 'a polars DataFrame')
    """
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


__all__ = ["FileFormat", "load_source"]
