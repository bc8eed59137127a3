"""Repeated ratings at ingest: the ``repeat`` marker column, the numbering of the ratings
of every key into ``repeat`` / ``repeat_index``, and the duplicates policy.

A *key* is an (item, segment, rater, dimension, design): one rater's rating of one unit.
A rater may rate a key any number of times. :func:`parse_repeat_marker` reads the
``repeat`` column: a column whose non-empty values are all non-negative integers is an
occurrence index (within a key the smallest is the first rating, so 0/1 and 1/2/3 both
work); any other column holds boolean markers (the unmarked rating is the first, the
marked ones are repeats numbered in file order). :func:`number_repeats` then numbers the
ratings of every key (``repeat_index`` 0, 1, 2, ...; ``repeat`` is ``repeat_index > 0``)
and applies the duplicates policy to rows that share a key and a marker.
:func:`raterstats.read_ratings` uses both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from raterstats import schema as S
from raterstats.ingest_errors import Problem
from raterstats.provenance import Exclusion

#: Text read as "a repeated rating" in a column of boolean markers (lower case).
TRUE_MARKERS = frozenset({"true", "t", "yes", "y", "1", "repeat", "repeated"})
#: Text read as "not a repeated rating" (lower case; an empty cell is not one either).
FALSE_MARKERS = frozenset({"false", "f", "no", "n", "0", "", "first"})
#: The choices of ``read_ratings(duplicates=...)``.
DUPLICATE_POLICIES = ("error", "first", "last", "repeat")

_ORDER = "__repeat_order"  # rank of a row's marker within its key (before file order)
_MARKED = "__repeat_marked"  # a boolean 'repeat' mark: such rows are never duplicates
_BASE = "__repeat_base"  # an index column's smallest index (null: boolean markers)
_INDEX_TEXT = r"^\+?[0-9]{1,15}(\.0*)?$"  # an occurrence index: 0, 1, 2, ... (or 1.0, ...)
_MARKER_EXPECTED = (
    "a repeat marker: true/false, yes/no, 1/0 (empty: not a repeat), or, in a column of "
    "integers only, an occurrence index 0, 1, 2, ..."
)


def _as_bool(col: pl.Expr) -> pl.Expr:
    """A boolean marker: True / False (False for an empty cell), null for other text."""
    low = col.str.strip_chars().str.to_lowercase()
    return (
        pl.when(low.is_null())
        .then(pl.lit(False))
        .when(low.is_in(sorted(TRUE_MARKERS)))
        .then(pl.lit(True))
        .when(low.is_in(sorted(FALSE_MARKERS)))
        .then(pl.lit(False))
        .otherwise(pl.lit(None, dtype=pl.Boolean))
    )


def parse_repeat_marker(
    work: pl.DataFrame, *, column: str, problems: list[Problem]
) -> pl.DataFrame:
    """Read the ``repeat`` column of an ingest frame into the order of each row's rating
    within its key (temporary columns that :func:`number_repeats` consumes).

    Parameters
    ----------
    work : pl.DataFrame
        The frame being read, with ``source_row`` and, when the data have one, the
        ``repeat`` column as text.
    column : str
        The user's name of the ``repeat`` column (for the problems).
    problems : list of Problem
        Appended to: one problem per invalid marker value, with its rows.

    Returns
    -------
    pl.DataFrame
        ``work`` with the temporary columns (and a null ``repeat`` when it had none).

    Examples
    --------
    >>> from raterstats.schema import REPEAT, ROW
    >>> work = pl.DataFrame({ROW: [1, 2], REPEAT: ["yes", "maybe"]})
    >>> problems = []
    >>> _ = parse_repeat_marker(work, column="again", problems=problems)
    >>> [(p.column, p.value, p.rows) for p in problems]
    [('again', 'maybe', (2,))]
    """
    if S.REPEAT not in work.columns:
        return work.with_columns(
            pl.lit(None, dtype=pl.String).alias(S.REPEAT),
            pl.lit(0, dtype=pl.Int64).alias(_ORDER),
            pl.lit(False).alias(_MARKED),
            pl.lit(None, dtype=pl.Int64).alias(_BASE),
        )
    text = pl.col(S.REPEAT).str.strip_chars()
    empty = text.is_null() | (text == "")
    is_index = text.str.contains(_INDEX_TEXT).fill_null(False)
    index_mode = work.height > 0 and bool(
        work.select((empty | is_index).all() & (~empty).any()).item()
    )
    if index_mode:
        index = text.cast(pl.Float64, strict=False).cast(pl.Int64)
        base = int(work.select(index.min()).item())
        return work.with_columns(
            pl.when(empty).then(-1).otherwise(index - base).alias(_ORDER),
            pl.lit(False).alias(_MARKED),
            pl.lit(base, dtype=pl.Int64).alias(_BASE),
        )
    parsed = work.select(_as_bool(pl.col(S.REPEAT)).alias("__rep")).get_column("__rep")
    bad = (
        work.filter(parsed.is_null())
        .group_by(S.REPEAT, maintain_order=True)
        .agg(pl.col(S.ROW).sort())
        .sort(pl.col(S.ROW).list.first())
    )
    for value, rows in bad.iter_rows():
        problems.append(Problem(column, value, _MARKER_EXPECTED, tuple(rows)))
    # a row with a bad marker is reported once, not again as a duplicate: it counts as marked
    return work.with_columns(
        parsed.fill_null(False).cast(pl.Int64).alias(_ORDER),
        parsed.fill_null(True).alias(_MARKED),
        pl.lit(None, dtype=pl.Int64).alias(_BASE),
    )


def number_repeats(
    work: pl.DataFrame,
    *,
    mapping: Mapping[str, str],
    problems: list[Problem],
    duplicates: str = "error",
) -> tuple[pl.DataFrame, list[Exclusion], list[str]]:
    """Number the ratings of every key into ``repeat_index`` (0: the first rating) and
    ``repeat``, applying the ``duplicates`` policy to rows that share a key and a marker.

    Within a key, rows are ordered by their marker (an index; or unmarked before marked),
    then by file order. A key without a rating at the smallest marker (only marked rows, or
    an index above the column's smallest) keeps its ratings, the earliest read as its first;
    a processing step says so.

    Parameters
    ----------
    work : pl.DataFrame
        The frame being read, after :func:`parse_repeat_marker`.
    mapping : mapping of str to str
        ``{role: user column}`` (to name the columns in problems).
    problems : list of Problem
        Appended to with ``duplicates="error"``: one problem per group of duplicate rows.
    duplicates : {"error", "first", "last", "repeat"}
        See :func:`raterstats.read_ratings`.

    Returns
    -------
    frame : pl.DataFrame
        ``work`` with ``repeat`` (bool) and ``repeat_index`` (int) and without the
        temporary columns (and without the rows a ``first`` / ``last`` policy left out).
    exclusions : list of Exclusion
        The rows ``first`` / ``last`` left out, counted.
    steps : list of str
        Processing steps for the summary (duplicates read as repeats, keys without a
        first rating).

    Examples
    --------
    >>> from raterstats.schema import ITEM, RATER, RATING, REPEAT, ROW
    >>> work = pl.DataFrame({ROW: [1, 2, 3], ITEM: ["a"] * 3, RATER: ["x"] * 3,
    ...                      RATING: ["1", "2", "2"], REPEAT: ["1", "3", "2"]})
    >>> work = parse_repeat_marker(work, column="repeat", problems=[])
    >>> frame, _, _ = number_repeats(work, mapping={}, problems=[])
    >>> frame["repeat_index"].to_list(), frame["repeat"].to_list()
    ([0, 2, 1], [False, True, True])
    """
    key = [c for c in (S.ITEM, S.SEGMENT, S.RATER, S.DIMENSION, S.DESIGN) if c in work.columns]
    excluded: list[Exclusion] = []
    steps: list[str] = []
    work = work.with_columns(pl.col(_ORDER).fill_null(0))
    if S.ITEM in work.columns and S.RATER in work.columns and S.RATING in work.columns:
        work = work.with_row_index("__pos")
        group = [*key, _ORDER, _MARKED]
        clash = ~pl.col(_MARKED) & (pl.len().over(group) > 1)
        dups = (
            work.filter(clash)
            .group_by(group)
            .agg(pl.col(S.ROW).sort().alias("rows"), pl.col(S.REPEAT).first().alias("mark"))
            .sort(pl.col("rows").list.first())
        )
        n_extra = int(dups.get_column("rows").list.len().sum()) - dups.height
        if duplicates == "error":
            for rec in dups.iter_rows(named=True):
                problems.append(_duplicate_problem(rec, key, mapping))
        elif duplicates in ("first", "last") and dups.height:
            pos = pl.col("__pos")
            keep_pos = pos.min() if duplicates == "first" else pos.max()
            drop = work.filter(clash).filter(pos != keep_pos.over(group))
            work = work.join(drop.select("__pos"), on="__pos", how="anti", maintain_order="left")
            which = "earliest" if duplicates == "first" else "latest"
            excluded.append(
                Exclusion(
                    f"duplicate rating (duplicates={duplicates!r}: {dups.height} rating(s) "
                    f"given more than once, the {which} row of each kept)",
                    n_extra,
                )
            )
        elif duplicates == "repeat" and dups.height:
            steps.append(
                f"duplicates='repeat': {n_extra} duplicate rating(s) of {dups.height} "
                "key(s) read as repeated ratings, numbered in file order"
            )
        steps += _orphan_steps(work, key)
        work = (
            work.sort(_ORDER, S.ROW, "__pos", maintain_order=True)
            .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over(key).alias(S.REPEAT_INDEX))
            .sort("__pos")
            .drop("__pos")
        )
    else:
        work = work.with_columns(pl.lit(0, dtype=pl.Int64).alias(S.REPEAT_INDEX))
    work = work.with_columns((pl.col(S.REPEAT_INDEX) > 0).alias(S.REPEAT))
    return work.drop(_ORDER, _MARKED, _BASE), excluded, steps


def _duplicate_problem(rec: dict[str, Any], key: list[str], mapping: Mapping[str, str]) -> Problem:
    """The problem of one group of duplicate rows (``rec``: the key, ``mark`` and ``rows``)."""
    parts = [
        f"{k}={rec[k]!r}"
        for k in key
        if rec[k] is not None and (k in mapping or k not in (S.DIMENSION, S.DESIGN))
    ]
    if S.REPEAT in mapping and rec["mark"] not in (None, ""):
        parts.append(f"{mapping[S.REPEAT]}={rec['mark']!r}")
    return Problem(
        None,
        ", ".join(parts),
        "one rating per (item, segment, rater, dimension, design) and repeat marker; mark "
        "repeated ratings in a 'repeat' column (true/false, or an occurrence index 1, 2, "
        "3, ...), or pass duplicates='first', 'last' or 'repeat'",
        tuple(rec["rows"]),
    )


def _orphan_steps(work: pl.DataFrame, key: list[str]) -> list[str]:
    """The note on keys whose rows are all marked as repeats (boolean markers) or whose
    smallest index is above the column's smallest (indices, as read before any row was
    left out): their earliest rating is read as the first, and the summary says so."""
    if work.height == 0:
        return []
    lead = work.group_by(key).agg(pl.col(_ORDER).min().alias("o"), pl.col(S.ROW).min().alias("r"))
    orphans = lead.filter(pl.col("o") > 0)
    if orphans.height == 0:
        return []
    base = work.get_column(_BASE)[0]
    if base is None:
        how = "have only ratings marked as repeats"
    else:
        how = f"have no rating with the smallest index of the column ({base})"
    rows = sorted(orphans.get_column("r").to_list())
    shown = ", ".join(map(str, rows[:10])) + (", ..." if len(rows) > 10 else "")
    return [
        f"repeat: {orphans.height} item x rater key(s) {how}; the earliest rating of each is "
        f"read as its first rating (rows {shown})"
    ]


__all__ = [
    "DUPLICATE_POLICIES",
    "FALSE_MARKERS",
    "TRUE_MARKERS",
    "number_repeats",
    "parse_repeat_marker",
]
