"""What the export readers share: the long table they build, the problem located in an
export, and the last step (:func:`finish_ratings`), which validates the table with
:func:`raterstats.read_ratings` and names every problem by its place in the export.

An export reader walks the export, adds one row per rating to an :class:`ExportTable` with
the place it came from (a CSV row and column, or a Label Studio task and annotation), and
hands the table to :func:`finish_ratings`. Problems found in the walk (missing keys, wrong
types) and problems found by validation (ratings off the scale, duplicates, empty ids) are
raised together, in one :class:`~raterstats.RatingsError` naming the export file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from raterstats import schema as S
from raterstats.ingest import read_ratings
from raterstats.ingest_errors import MAX_ROWS_SHOWN, Problem, RatingsError
from raterstats.provenance import Exclusion, Provenance
from raterstats.ratings import Ratings
from raterstats.scales import Scale

#: prefix of the kept extra columns in the long table (so that a kept column named like a
#: role alias, e.g. "model", is never taken for that role)
KEEP_PREFIX = "__export_keep__"


@dataclass(frozen=True)
class ExportProblem(Problem):
    """A problem at places of an export that rows and columns do not name: a task and an
    annotation of a Label Studio export.

    ``rows`` holds the 1-based positions of the tasks in the export's list, ``places`` the
    places themselves (``"task 12 annotation 2"``), ``column`` what is wrong there (``"key
    'completed_by'"``, ``"result 'quality'"``).

    Examples
    --------
    >>> p = ExportProblem("result 'quality'", "7", "a level of likert5", (3,), ("task 12 "
    ...                   "annotation 2",))
    >>> p.describe("export.json")
    "export.json, task 12 annotation 2 (result 'quality'): got '7'; expected a level of likert5"
    """

    places: tuple[str, ...] = ()

    def describe(self, source: str) -> str:
        """One line naming ``source``, the places, what is wrong there and the expectation."""
        where = source
        if self.places:
            shown = ", ".join(self.places[:MAX_ROWS_SHOWN])
            more = len(self.places) - MAX_ROWS_SHOWN
            where += ", " + shown + (f" (and {more} more)" if more > 0 else "")
        if self.column is not None:
            where += f" ({self.column})"
        got = "" if self.value is None else f"got {self.value!r}; "
        return f"{where}: {got}expected {self.expected}"


class ExportTable:
    """The long table an export reader builds: one rating per row, with its origin.

    Parameters
    ----------
    labels : mapping of str to str
        Where each role comes from in the export, as errors name it (``{"rater":
        "WorkerId"}``); the rating's own column is given row by row.
    located : bool
        True when places are named by text (Label Studio); False when by CSV row and
        column.

    Examples
    --------
    >>> t = ExportTable({"item": "Input.id", "rater": "WorkerId"}, located=False)
    >>> t.add(row=1, rating_column="Answer.quality", item="q1", rater="w1", rating="4")
    >>> t.add(row=2, rating_column="Answer.quality", item="q1", rater="w2", rating="5")
    >>> t.frame().rows()
    [('q1', 'w1', '4'), ('q1', 'w2', '5')]
    """

    def __init__(self, labels: Mapping[str, str], *, located: bool) -> None:
        self.labels = dict(labels)
        self.located = located
        self.values: dict[str, list[str | None]] = {}
        self.rows: list[int] = []
        self.places: list[str] = []
        self.rating_columns: list[str] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, *, row: int, rating_column: str, place: str = "", **values: str | None) -> None:
        """One rating: its export row (or task record), the column (or control tag) it was
        read from, its place (located exports) and its values by role (or kept column)."""
        n = len(self.rows)
        for key, v in values.items():
            self.values.setdefault(key, [None] * n).append(v)
        for col in self.values.values():
            if len(col) == n:
                col.append(None)
        self.rows.append(row)
        self.places.append(place)
        self.rating_columns.append(rating_column)

    def frame(self) -> pl.DataFrame:
        """The table as an all-text frame, one column per role or kept column."""
        return pl.DataFrame(self.values, schema=dict.fromkeys(self.values, pl.String))

    def problem(
        self, column: str | None, value: str | None, expected: str, long_rows: Iterable[int]
    ) -> Problem:
        """A problem at the export places of the (1-based) rows ``long_rows`` of the table."""
        idx = [r - 1 for r in long_rows]
        rows = tuple(sorted({self.rows[i] for i in idx}))
        if not self.located:
            return Problem(column, value, expected, rows)
        places = tuple(dict.fromkeys(self.places[i] for i in idx))
        return ExportProblem(column, value, expected, rows, places)

    def relocate(self, p: Problem) -> list[Problem]:
        """A problem of :func:`read_ratings` on :meth:`frame`, placed in the export: its rows
        become export rows (or places), its column the export's column (the rating's own
        column, one problem per column, for problems of the rating or its dimension)."""
        col = p.column
        label = self.labels.get(col, col) if col is not None else None
        if label is not None and label.startswith(KEEP_PREFIX):
            label = label.removeprefix(KEEP_PREFIX)
        if not p.rows:
            return [Problem(label, p.value, p.expected)]
        if col not in (S.RATING, S.DIMENSION):  # both come from the rating's own column
            return [self.problem(label, p.value, p.expected, p.rows)]
        by_col: dict[str, list[int]] = {}
        for r in p.rows:
            by_col.setdefault(self.rating_columns[r - 1], []).append(r)
        return [self.problem(c, p.value, p.expected, rows) for c, rows in by_col.items()]


def add_grouped(
    problems: list[Problem], found: Mapping[tuple[str | None, str | None, str], list[int]]
) -> None:
    """Append one :class:`Problem` per ``(column, value, expected)`` with its rows."""
    for (column, value, expected), rows in found.items():
        problems.append(Problem(column, value, expected, tuple(sorted(set(rows)))))


def finish_ratings(
    table: ExportTable,
    *,
    name: str,
    problems: Sequence[Problem],
    step: str,
    exclusions: Sequence[Exclusion] = (),
    ignored: Sequence[str] = (),
    keep: Sequence[str] = (),
    scale: Scale | Mapping[str, Scale] | None = None,
    dimension: str | None = None,
    design: str | None = None,
    missing: Literal["error", "drop"] = "error",
) -> Ratings:
    """Validate the export's long table with :func:`raterstats.read_ratings` and return its
    :class:`~raterstats.Ratings`, with the export's exclusions and step in the summary and
    ``source_row`` the export's row (or task record).

    Parameters
    ----------
    table : ExportTable
        The ratings read from the export.
    name : str
        The export, as errors and the summary name it.
    problems : sequence of Problem
        Problems found while reading the export; raised with those of validation.
    step : str
        What was read and how (the summary's first step).
    exclusions : sequence of Exclusion
        What the reader left out, counted.
    ignored : sequence of str
        Columns (fields) of the export that were not used.
    keep : sequence of str
        Kept extra columns (in the table as ``KEEP_PREFIX + name``).
    scale, dimension, design, missing
        As for :func:`raterstats.read_ratings`.

    Returns
    -------
    Ratings

    Raises
    ------
    RatingsError
        Every problem of the reader and of validation, each placed in the export.

    Examples
    --------
    >>> t = ExportTable({"item": "Input.id", "rater": "WorkerId"}, located=False)
    >>> t.add(row=1, rating_column="Answer.q", item="q1", rater="w1", rating="4")
    >>> t.add(row=2, rating_column="Answer.q", item="q1", rater="w2", rating="x")
    >>> from raterstats import OrdinalScale
    >>> try:
    ...     finish_ratings(t, name="batch.csv", problems=[], step="read",
    ...                    scale=OrdinalScale.likert(5))
    ... except RatingsError as err:
    ...     print(err.problems[0].describe(err.source).split(";")[0])
    batch.csv, row 2, column 'Answer.q': got 'x'
    """
    found = list(problems)
    ratings = None
    if len(table) == 0:
        found.append(
            Problem(None, None, "at least one rating (none was read; see the problems above)")
            if found
            else Problem(None, None, f"at least one rating ({step})")
        )
    else:
        try:
            ratings = read_ratings(
                table.frame(),
                scale=scale,
                dimension=dimension,
                design=design,
                missing=missing,
                keep=[KEEP_PREFIX + k for k in keep],
                name=name,
            )
        except RatingsError as err:
            for p in err.problems:
                found.extend(table.relocate(p))
    if found or ratings is None:
        raise RatingsError(name, found)
    origin = pl.Series(S.ROW, table.rows, dtype=pl.Int64)
    data = ratings.data.with_columns(origin.gather(ratings.data.get_column(S.ROW) - 1))
    data = data.rename({KEEP_PREFIX + k: k for k in keep})
    meta = Provenance(
        source=name,
        exclusions=(*exclusions, *ratings.exclusions),
        steps=(step, *ratings.steps),
        ignored_columns=tuple(ignored),
        inferred_scales=ratings.provenance.inferred_scales,
        extra_columns=tuple(keep),
    )
    return Ratings(data, ratings.scales, provenance=meta)


def check_keep(keep: Sequence[str], present: Sequence[str], what: str) -> list[Problem]:
    """Problems of ``keep``: a name of a canonical column, or not in the export."""
    out = []
    for k in keep:
        if k in S.COLUMN_ORDER:
            out.append(Problem(k, None, f"a kept {what} not named like a canonical column"))
        elif k not in present:
            out.append(Problem(k, None, f"a {what} of the export to keep (has {list(present)})"))
    return out


__all__ = [
    "KEEP_PREFIX",
    "ExportProblem",
    "ExportTable",
    "add_grouped",
    "check_keep",
    "finish_ratings",
]
