"""Delimited text (CSV / TSV) as all-text columns: the delimiter, the header, every record.

:func:`sniff_separator` tells the delimiter of a ``.csv`` file (comma, semicolon, tab or
pipe) from its header and first rows, quoted fields respected; :func:`parse_delimited`
reads every record and reports, rather than pads or drops, what does not fit: duplicate
header names, rows with too few or too many fields, an unclosed quote. Blank lines are
skipped (and counted when they sit between data rows). :mod:`raterstats.readers` builds on
both.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

import polars as pl

from raterstats.ingest_errors import Problem

#: The delimiters :func:`sniff_separator` considers, in order of preference.
SEPARATORS: tuple[str, ...] = (",", ";", "\t", "|")
_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", " ": "space"}
#: Characters of a file the sniffer looks at, at most.
_SAMPLE_CHARS = 1 << 16
#: Share of the sampled rows that must agree with the header when no delimiter fits all.
_MIN_AGREEING = 0.5


def separator_name(separator: str) -> str:
    """How a delimiter is named in messages: the character and its name.

    Parameters
    ----------
    separator : str
        One character.

    Returns
    -------
    str

    Examples
    --------
    >>> separator_name(";"), separator_name("\\t")
    ("';' (semicolon)", "'\\\\t' (tab)")
    """
    name = _NAMES.get(separator)
    return repr(separator) + (f" ({name})" if name else "")


def check_separator(separator: object) -> str:
    """The ``separator=`` argument, checked: one character that can delimit fields.

    Parameters
    ----------
    separator : object
        What the caller passed.

    Returns
    -------
    str
        The separator.

    Raises
    ------
    ValueError
        When it is not one character, or is a quote or a line break.

    Examples
    --------
    >>> check_separator(";")
    ';'
    >>> check_separator(";;")
    Traceback (most recent call last):
    ...
    ValueError: separator must be one character such as ',', ';', '\\t' or '|', not ';;'
    """
    if not isinstance(separator, str) or len(separator) != 1 or separator in '"\r\n':
        raise ValueError(
            f"separator must be one character such as ',', ';', '\\t' or '|', not {separator!r}"
        )
    return separator


@dataclass(frozen=True)
class SeparatorGuess:
    """What :func:`sniff_separator` concluded.

    Attributes
    ----------
    separator : str
        The delimiter to use (a comma when the sample does not decide).
    fitting : tuple of str
        The candidates that split the header into more than one column and every sampled
        row into as many fields.
    n_rows : int
        Data rows sampled (after the header).
    note : str or None
        Why the choice is uncertain (several or no candidates fit), to show when the
        columns then do not make sense; None when one delimiter fits.

    Examples
    --------
    >>> g = sniff_separator("item;rater;rating\\na;x;3,5\\n")
    >>> g.separator, g.fitting, g.n_rows, g.note
    (';', (';',), 1, None)
    """

    separator: str
    fitting: tuple[str, ...]
    n_rows: int
    note: str | None = None


def _is_blank(fields: list[str]) -> bool:
    return not fields or (len(fields) == 1 and not fields[0].strip())


def _field_counts(sample: str, separator: str, truncated: bool, max_rows: int) -> list[int]:
    """Field counts of the first non-blank records (header first) of ``sample``."""
    counts: list[int] = []
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=separator)
    try:
        for fields in reader:
            if not _is_blank(fields):
                counts.append(len(fields))
                if len(counts) > max_rows + 1:
                    return counts[:-1]
    except csv.Error:
        return counts
    # the last record of a cut sample may be cut too (a quoted field across the cut)
    return counts[:-1] if truncated and len(counts) > 1 else counts


def sniff_separator(text: str, *, max_rows: int = 100) -> SeparatorGuess:
    """Tell the delimiter of CSV text from its header and first rows.

    Each of :data:`SEPARATORS` splits the sample with the usual quoting rules (so a quoted
    field holding another delimiter does not count). A candidate *fits* when it splits the
    header into more than one column and every sampled row into as many fields. One fitting
    candidate is chosen; with several, or none, the comma is used (unless no candidate fits
    and one agrees with most rows, ragged rows aside) and :attr:`SeparatorGuess.note` says
    why the choice is uncertain.

    Parameters
    ----------
    text : str
        The file's text (only its first 64 KiB and ``max_rows`` rows are read).
    max_rows : int
        Data rows to sample after the header.

    Returns
    -------
    SeparatorGuess

    Examples
    --------
    >>> sniff_separator('item|rater|rating\\na|"x|y"|1\\n').separator
    '|'
    >>> sniff_separator('item,rater,rating\\na,"x;y",1\\n').separator
    ','
    >>> guess = sniff_separator("item:rater:rating\\na:x:1\\n")
    >>> print(guess.note)  # doctest: +NORMALIZE_WHITESPACE
    a header of several columns (it is one column on every delimiter tried: ',', ';', '\\t',
    '|'; pass separator= with the file's delimiter)
    """
    truncated = len(text) > _SAMPLE_CHARS
    sample = text[:_SAMPLE_CHARS]
    if truncated:
        sample = sample[: sample.rfind("\n") + 1] or sample
    counts = {s: _field_counts(sample, s, truncated, max_rows) for s in SEPARATORS}
    n_rows = max(len(c) for c in counts.values()) - 1
    multi = [s for s, c in counts.items() if c and c[0] > 1]
    fitting = tuple(s for s in multi if all(n == counts[s][0] for n in counts[s][1:]))
    if len(fitting) == 1:
        return SeparatorGuess(fitting[0], fitting, max(n_rows, 0))
    named = [separator_name(s) for s in (fitting or multi)]
    listed = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else "".join(named)
    if len(fitting) > 1:
        note = (
            f"one delimiter that fits (the header and first rows split evenly on {listed}; "
            "the comma was used: pass separator= with the file's delimiter)"
        )
        return SeparatorGuess(",", fitting, max(n_rows, 0), note)
    if not multi:
        tried = ", ".join(repr(s) for s in SEPARATORS)
        note = (
            f"a header of several columns (it is one column on every delimiter tried: "
            f"{tried}; pass separator= with the file's delimiter)"
        )
        return SeparatorGuess(",", (), max(n_rows, 0), note)
    agree = {
        s: sum(n == counts[s][0] for n in counts[s][1:]) / max(len(counts[s]) - 1, 1) for s in multi
    }
    best = max(agree.values())
    winners = [s for s in multi if agree[s] == best]
    if len(winners) == 1 and best >= _MIN_AGREEING:
        return SeparatorGuess(winners[0], (), max(n_rows, 0))
    note = (
        f"one delimiter that fits (no delimiter splits every row as the header: tried "
        f"{listed}; the comma was used: pass separator= with the file's delimiter)"
    )
    return SeparatorGuess(",", (), max(n_rows, 0), note)


@dataclass(frozen=True)
class DelimitedTable:
    """The records of a CSV / TSV text that fit its header, and what did not.

    Attributes
    ----------
    frame : pl.DataFrame
        One text column per header name (first occurrence of a duplicate name; an empty
        name becomes ``unnamed_<position>``), empty fields as null.
    rows : list of int
        The 1-based data-row number of each record of ``frame`` (header not counted; blank
        lines counted, so that row *n* is line *n + 1* of a file without line breaks in
        its fields).
    problems : list of Problem
        Duplicate header names, rows with too few or too many fields, an unclosed quote;
        rows reported here are not in ``frame``.
    blank_rows : tuple of int
        Blank lines skipped between data rows (trailing blank lines are not listed).

    Examples
    --------
    >>> t = parse_delimited("item,rater,rating\\na,x,1\\n\\nb,y\\nc,z,3\\n", ",")
    >>> t.frame.rows(), t.rows, t.blank_rows
    ([('a', 'x', '1'), ('c', 'z', '3')], [1, 4], (2,))
    >>> print(t.problems[0].describe("r.csv"))
    r.csv, row 3: got '2 fields'; expected 3 fields as in the CSV header
    """

    frame: pl.DataFrame
    rows: list[int]
    problems: list[Problem] = field(default_factory=list)
    blank_rows: tuple[int, ...] = ()


def duplicate_columns(names: list[str], where: str) -> tuple[list[int], list[Problem]]:
    """The position of the first column of each name, and one problem per repeated name.

    Parameters
    ----------
    names : list of str
        Column names in order.
    where : str
        Where the names are, for the message ("CSV header", "Parquet file", ...).

    Returns
    -------
    keep : list of int
        0-based positions of the columns to read (the first of each name).
    problems : list of Problem
        One per later column with a name seen before, naming both positions (1-based).

    Examples
    --------
    >>> keep, problems = duplicate_columns(["item", "rating", "rating"], "CSV header")
    >>> keep
    [0, 1]
    >>> print(problems[0].describe("r.csv"))  # doctest: +NORMALIZE_WHITESPACE
    r.csv, column 'rating': expected one column named 'rating' in the CSV header (columns 2
    and 3 both have this name; only column 2 was read: rename or remove the other)
    """
    first: dict[str, int] = {}
    keep: list[int] = []
    problems = []
    for k, n in enumerate(names):
        if n in first:
            problems.append(
                Problem(
                    n,
                    None,
                    f"one column named {n!r} in the {where} (columns {first[n] + 1} and "
                    f"{k + 1} both have this name; only column {first[n] + 1} was read: "
                    "rename or remove the other)",
                )
            )
        else:
            first[n] = k
            keep.append(k)
    return keep, problems


def _unclosed_quote(text: str, separator: str) -> bool:
    """Whether a quoted field runs to the end of ``text`` (a strict re-read says so)."""
    try:
        for _ in csv.reader(io.StringIO(text, newline=""), delimiter=separator, strict=True):
            pass
    except csv.Error as err:
        return "unexpected end of data" in str(err)
    return False


def parse_delimited(text: str, separator: str, *, kind: str = "CSV") -> DelimitedTable:
    """Read every record of delimited text against its header (the first non-blank line).

    Parameters
    ----------
    text : str
        The decoded file (byte-order mark removed).
    separator : str
        The delimiter (one character); fields may be quoted with ``"``.
    kind : str
        How the format is named in messages ("CSV", "TSV").

    Returns
    -------
    DelimitedTable
        Records with as many fields as the header; every other record, duplicate header
        name and unclosed quote as a :class:`~raterstats.ingest_errors.Problem`.

    Examples
    --------
    >>> t = parse_delimited('item;rater;rating\\n"a;1";x;4\\n', ";")
    >>> t.frame.to_dicts(), t.problems
    ([{'item': 'a;1', 'rater': 'x', 'rating': '4'}], [])
    """
    if '"' in text or text.count("\r") != text.count("\r\n"):
        scan = _scan_records(text, separator, kind)
    else:  # one record per line: split in polars, same result as the csv module, faster
        scan = _scan_lines(text, separator)
    header = scan.header
    problems = scan.problems
    all_names = [h if h != "" else f"unnamed_{k}" for k, h in enumerate(header, start=1)]
    keep, problems_header = duplicate_columns(all_names, f"{kind} header")
    names = [all_names[k] for k in keep]
    problems[:0] = problems_header
    for (n, spans), bad in sorted(scan.ragged.items(), key=lambda kv: kv[1][0]):
        hint = " (a record over several lines: a quote left open?)" if spans else ""
        problems.append(
            Problem(
                None,
                f"{n} field" + ("" if n == 1 else "s"),
                f"{len(header)} fields as in the {kind} header{hint}",
                tuple(bad),
            )
        )
    frame = scan.data.select(scan.data.columns[k] for k in keep)
    frame = frame.rename(dict(zip(frame.columns, names, strict=True)))
    if frame.width:
        frame = frame.with_columns(
            pl.when(pl.col(n) == "").then(None).otherwise(pl.col(n)).alias(n) for n in names
        )
    last_data = max([*scan.rows, *(r for v in scan.ragged.values() for r in v), 0])
    blank = tuple(b for b in scan.blank if b < last_data)
    return DelimitedTable(frame, scan.rows, problems, blank)


@dataclass
class _Scan:
    """Records split into fields: the header, the fitting records as text columns named by
    position, their rows, blank rows, ragged rows by (field count, over several lines)."""

    header: list[str]
    data: pl.DataFrame
    rows: list[int]
    blank: list[int]
    ragged: dict[tuple[int, bool], list[int]]
    problems: list[Problem]


def _scan_lines(text: str, separator: str) -> _Scan:
    """Text without quotes or lone carriage returns: one record per line."""
    lines = pl.Series([text.replace("\r\n", "\n")]).str.split("\n").explode()
    if text.endswith("\n"):  # the end of the last line, not a line
        lines = lines.head(-1)
    counts = lines.str.count_matches(separator, literal=True) + 1
    blank = (counts == 1) & (lines.str.strip_chars() == "")
    filled = (~blank).arg_true()
    if filled.len() == 0:
        return _Scan([], pl.DataFrame(), [], [], {}, [])
    at = int(filled[0])
    header = str(lines[at]).split(separator)
    lines, counts, blank = lines[at + 1 :], counts[at + 1 :], blank[at + 1 :]
    fits = ~blank & (counts == len(header))
    data = lines.filter(fits).str.split_exact(separator, len(header) - 1).struct.unnest()
    data.columns = [str(k) for k in range(len(header))]
    ragged: dict[tuple[int, bool], list[int]] = {}
    bad = ~blank & ~fits
    for k, n in zip(bad.arg_true().to_list(), counts.filter(bad).to_list(), strict=True):
        ragged.setdefault((n, False), []).append(k + 1)
    rows = (fits.arg_true() + 1).to_list()
    return _Scan(header, data, rows, (blank.arg_true() + 1).to_list(), ragged, [])


def _scan_records(text: str, separator: str, kind: str) -> _Scan:
    """Any delimited text, quotes and line breaks in fields included (the csv module)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    header: list[str] | None = None
    records: list[list[str]] = []
    rows: list[int] = []
    blank: list[int] = []
    ragged: dict[tuple[int, bool], list[int]] = {}
    problems: list[Problem] = []
    row = 0
    last: tuple[int, bool] = (0, False)  # the last non-blank record: row, over several lines
    line = 0
    try:
        for fields in reader:
            lines, line = reader.line_num - line, reader.line_num
            if header is None:
                if not _is_blank(fields):
                    header = fields
                continue
            row += 1
            if _is_blank(fields):
                blank.append(row)
                continue
            last = (row, lines > 1)
            if len(fields) == len(header):
                records.append(fields)
                rows.append(row)
            else:
                ragged.setdefault((len(fields), lines > 1), []).append(row)
    except csv.Error as err:
        problems.append(
            Problem(
                None,
                None,
                f"well-formed {kind} ({err}; an unclosed quote that swallows the lines after "
                "it?); the rest of the file was not read",
                (row + 1,),
            )
        )
    header = header or []
    end_row, multiline = last
    if multiline and not text.rstrip("\r\n").endswith('"') and _unclosed_quote(text, separator):
        problems.append(
            Problem(
                None,
                None,
                "a closing quote (the quoted field that starts in this row runs to the end of "
                "the file, taking the lines after it in)",
                (end_row,),
            )
        )
        if rows and rows[-1] == end_row:
            rows.pop()
            records.pop()
        ragged = {
            k: v for k, v in ((k, [r for r in v if r != end_row]) for k, v in ragged.items()) if v
        }
    columns = list(zip(*records, strict=True)) if records else [() for _ in header]
    data = pl.DataFrame(
        {str(k): pl.Series(str(k), list(c), dtype=pl.String) for k, c in enumerate(columns)}
    )
    return _Scan(header, data, rows, blank, ragged, problems)


__all__ = [
    "SEPARATORS",
    "DelimitedTable",
    "SeparatorGuess",
    "check_separator",
    "duplicate_columns",
    "parse_delimited",
    "separator_name",
    "sniff_separator",
]
