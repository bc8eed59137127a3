"""Read annotation exports (CSV, TSV, Parquet, JSON lines, polars or pandas frames) into a
validated :class:`~raterstats.Ratings`.

The files are loaded by :mod:`raterstats.readers` and the column roles resolved by
:mod:`raterstats.roles`; this module reshapes wide tables (one column per rater) to long
ones and validates every value. Validation lists every problem at once in one
:class:`RatingsError` (:mod:`raterstats.ingest_errors`) — file, 1-based row, column,
offending value and what was expected — and never drops a row silently: the only rows
left out are those the caller asked to exclude, and they are counted.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
from raterstats.ingest_errors import Problem, RatingsError
from raterstats.provenance import ColumnGuess, Exclusion, Provenance
from raterstats.ratings import Ratings
from raterstats.readers import FileFormat, LoadedSource, read_source
from raterstats.repeats import DUPLICATE_POLICIES, number_repeats, parse_repeat_marker
from raterstats.roles import normalize_rater_kinds, resolve_columns
from raterstats.scales import CategoricalScale, Scale, format_level, infer_scale, number_hint

_WIDE_RATING = "__rating"


# ----------------------------------------------------------------------------- columns


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
    duplicates: Literal["error", "first", "last", "repeat"] = "error",
    keep: Sequence[str] = (),
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    separator: str | None = None,
    name: str | None = None,
    where: Mapping[str, str | Sequence[str]] | None = None,
    export: str | None = None,
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
        ``gold``, ``rater_kind``). Roles not given are found by name, stripped and
        case-insensitively. Long format: by the role's own name or a common alias (task /
        worker / label, annotator, judge, score, model, ...); a role found through an
        alias is listed in the summary ("role 'system' taken from column 'model'"), and
        two columns naming one role (``rating`` and ``Rating``, ``label`` and ``score``)
        are an error until ``columns=`` chooses one. Wide format: see ``raters``.
    scale : Scale or mapping of dimension to Scale, optional
        The declared scale(s). When omitted, a scale is inferred per dimension from the
        values (:func:`~raterstats.scales.infer_scale`: numbers however written, ``3`` =
        ``3.0`` = ``+3``; a rating that is not a number among mostly numbers, such as
        ``4,0``, is reported as an error, never read as a label) and the summary says so.
    format : {"long", "wide"}
        ``long``: one rating per row. ``wide``: one item per row and one column per rater
        (empty cells are not-rated and are counted in the summary's steps).
    raters : sequence of str, optional
        Wide format: the rater columns. Default: every column that is not a role, where
        the roles are those mapped with ``columns=``, ``item`` (by its name or an alias),
        the columns of ``keep``, and the other roles found by their own name only
        (``system``, ``question``, ``segment``, ...). A column named like an alias of a
        role (``model``, ``judge``, ``score``, ``source``) is read as a rater, and the
        summary says so, with the ``columns=`` that makes it the role instead. With
        ``raters`` given, the other columns are resolved as in long format (aliases
        included, and reported), except ``rater`` / ``rating``, which a wide table
        cannot have.
    dimension, design : str, optional
        Constant dimension / design for data without such a column.
    missing : {"error", "drop"}
        Long format: an empty rating is an error (default) or is excluded and counted.
    duplicates : {"error", "first", "last", "repeat"}
        Rows with the same item, segment, rater, dimension, design and repeat marker (see
        Notes) are an error listing them (default); ``"first"`` / ``"last"`` keep the
        earliest / latest of them in file order and count the others in the exclusions;
        ``"repeat"`` reads them as repeated ratings, numbered in file order (the summary's
        steps say how many).
    keep : sequence of str
        Extra columns (without a role) to keep in :attr:`Ratings.data`.
    file_format : str, optional
        Override the format implied by the file suffix.
    encoding : str
        Text encoding of CSV / TSV / JSON files.
    separator : str, optional
        The delimiter of a CSV / TSV file. By default a ``.tsv`` file is split on tabs and
        the delimiter of a ``.csv`` file (comma, semicolon, tab or pipe) is sniffed from its
        header and first rows; a sniffed delimiter other than the comma is listed in the
        summary's steps.
    name : str, optional
        How the source is named in errors and summaries (default: the path, or "a polars
        DataFrame").
    where : mapping, optional
        ``{role: value or values}``: keep only the rows whose id in that role (``item``,
        ``rater``, ``dimension``, ``design``, ``system``, ``question``, ``segment``,
        ``group``, ``rater_kind``) is one of the values, compared as stripped text. Rows
        are selected before they are validated, so the rows left out cannot fail
        validation; they are counted as exclusions in the summary. A value that no row has
        is a problem.

    export : {"label-studio", "mturk", "survey"}, optional
        Read an annotation tool's export (Label Studio JSON, Mechanical Turk batch results,
        a wide survey export) instead of a table; ``columns`` then names the export's
        fields or columns (see :func:`raterstats.exports.read_export`).

    Notes
    -----
    Ids (items, raters, systems, ...) are text exactly as written, surrounding white
    space removed: ``1``, ``01`` and ``1.0`` are three raters. ``rater_kind`` is read
    stripped and lower-case (``Human`` is ``human``; the summary's steps say when this
    changed a value); ``human`` and ``llm`` are the kinds analyses know, and any other
    non-empty kind (``crowd``, ``expert``) is kept and listed in the summary, which says
    that it does not count as human.

    Returns
    -------
    Ratings

    Raises
    ------
    RatingsError
        Listing every problem: file, 1-based data row, column, value and what was expected.

    Notes
    -----
    Repeated ratings. A rater may rate an item (x segment, dimension, design: a *key*) any
    number of times; the ``repeat`` column says which rating is which, and
    :attr:`Ratings.data` numbers them in ``repeat_index`` (0 for the first rating, 1, 2, ...
    for the repeats) and ``repeat`` (True for every rating after the first).

    - A column whose non-empty values are all non-negative integers is an *occurrence
      index*: within a key the smallest index is the first rating and the others are
      repeats in index order, so 0/1 and 1/2/3 both work; an empty cell comes before every
      index.
    - Any other column holds *boolean markers*: true/false, yes/no, t/f, y/n, 1/0,
      repeat/first (empty: not a repeat). The unmarked rating of a key is its first rating
      and the marked ones are its repeats, numbered in file order.
    - Two rows of a key with the same index, or two unmarked rows, are duplicates
      (``duplicates=`` says what to do with them); any number of marked rows is not.
    - A key whose ratings are all marked as repeats (a lone ``true`` row, e.g. when the
      first rating was not exported), or whose smallest index is above the column's
      smallest, keeps its ratings: the earliest is read as its first rating, and a step
      of the summary counts such keys and names their rows.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings, OrdinalScale
    >>> frame = pl.DataFrame({"task": ["q1", "q1", "q2"], "worker": ["a", "b", "a"],
    ...                       "label": [5, 4, 2]})
    >>> r = read_ratings(frame, scale=OrdinalScale.likert(5))
    >>> r.data.select("item", "rater", "rating").rows()
    [('q1', 'a', '5'), ('q1', 'b', '4'), ('q2', 'a', '2')]

    A rater who rated ``q1`` three times, with the occurrence in a ``repeat`` column:

    >>> again = pl.DataFrame({"item": ["q1"] * 3, "rater": ["a"] * 3, "label": [5, 4, 5],
    ...                       "repeat": [1, 2, 3]})
    >>> read_ratings(again, scale=OrdinalScale.likert(5)).data["repeat_index"].to_list()
    [0, 1, 2]
    """
    if export is not None:
        from raterstats.exports import read_export

        unused = [
            f"{k}={v!r}"
            for k, v in (("separator", separator), ("where", where), ("duplicates", duplicates))
            if v is not None and not (k == "duplicates" and v == "error")
        ]
        if unused:
            raise ValueError(
                f"not with export={export!r}: {', '.join(unused)} (an export has its own "
                "layout, and a duplicate in it is an error); select rows afterwards with "
                "Ratings.filter"
            )

        return read_export(
            source,
            export,
            columns=columns,
            scale=scale,
            format=format,
            raters=raters,
            dimension=dimension,
            design=design,
            missing=missing,
            keep=keep,
            file_format=file_format,
            encoding=encoding,
            name=name,
        )
    if format not in ("long", "wide"):
        raise ValueError(f"format must be 'long' or 'wide', not {format!r}")
    _check_where(where)
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', not {missing!r}")
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(
            f"duplicates must be one of {', '.join(map(repr, DUPLICATE_POLICIES))}, "
            f"not {duplicates!r}"
        )
    loaded = read_source(source, file_format=file_format, encoding=encoding, separator=separator)
    raw = loaded.frame
    name = name or loaded.name
    problems: list[Problem] = []
    present = [c for c in raw.columns if c != S.ROW]
    guesses: list[ColumnGuess] = []
    mapping = resolve_columns(
        present,
        columns,
        need_rating=(format == "long"),
        problems=problems,
        wide=format == "wide",
        raters_given=raters is not None,
        taken=[*(raters or ()), *keep] if format == "wide" else (),
        guesses=guesses,
    )
    required = [S.ITEM, S.RATER, S.RATING] if format == "long" else [S.ITEM]
    if loaded.separator_note and any(role not in mapping for role in required):
        problems.append(Problem(None, None, loaded.separator_note))
    for k in keep:
        if k not in present:
            problems.append(Problem(k, None, f"a column of the input to keep (has {present})"))
    steps: list[str] = list(loaded.steps)
    rater_cols: list[str] = []
    as_loaded = raw
    if format == "wide":
        try:
            raw, rater_cols, step = _wide_to_long(
                raw,
                name=name,
                present=present,
                mapping=mapping,
                raters=raters,
                keep=keep,
                problems=problems,
            )
        except RatingsError as err:  # with what loading found, all at once
            raise RatingsError(name, [*loaded.problems, *err.problems]) from None
        steps.append(step)
    raw = _drop_nested_in_roles(raw, as_loaded, loaded, [*mapping.values(), *rater_cols], problems)

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

    filtered: list[Exclusion] = []
    if where:
        work, filtered = _select_where(work, where, mapping, name=name, problems=problems)

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

    work = normalize_rater_kinds(work, steps)

    # repeat marker (numbered into repeat / repeat_index with the duplicates check)
    work = parse_repeat_marker(work, column=col_name(S.REPEAT), problems=problems)

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
    excluded: list[Exclusion] = list(filtered)
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

    _check_constant_per(work, mapping, problems)
    work, dup_excluded, dup_steps = number_repeats(
        work, mapping=mapping, problems=problems, duplicates=duplicates
    )
    excluded += dup_excluded
    steps += dup_steps

    if problems or loaded.problems:
        raise RatingsError(name, [*loaded.problems, *problems])

    meta = Provenance(
        source=name,
        exclusions=tuple(excluded),
        steps=tuple(steps),
        ignored_columns=ignored,
        inferred_scales=tuple(inferred),
        extra_columns=tuple(keep),
        guessed_roles=tuple(guesses),
    )
    return Ratings(work, scales, provenance=meta)


def _drop_nested_in_roles(
    raw: pl.DataFrame,
    as_loaded: pl.DataFrame,
    loaded: LoadedSource,
    role_cols: Sequence[str],
    problems: list[Problem],
) -> pl.DataFrame:
    """A list or object (JSON, Parquet, frames) where one value is expected is a problem per
    column and value; those rows are left out of further checks (lists in columns without a
    role are kept as JSON text)."""
    bad: set[int] = set()
    for c in dict.fromkeys(role_cols):
        rows = loaded.nested.get(c, ())
        if not rows:
            continue
        mask = as_loaded.get_column(S.ROW).is_in(rows)
        for v, at in _group_rows(as_loaded, mask, c):
            problems.append(Problem(c, v, "a scalar value, not a list or object", at))
        bad.update(rows)
    return raw.filter(~pl.col(S.ROW).is_in(sorted(bad))) if bad else raw


#: the roles ``read_ratings(where=...)`` selects rows by: the id roles
_WHERE_ROLES = tuple(name for name, role in S.ROLES.items() if role.kind == "id")


def _check_where(where: Mapping[str, str | Sequence[str]] | None) -> None:
    """``where`` names id roles and gives text values (a ValueError otherwise)."""
    for role, wanted in (where or {}).items():
        if role not in _WHERE_ROLES:
            close = difflib.get_close_matches(str(role), _WHERE_ROLES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"where: cannot select rows by {role!r}{hint} (id roles: {list(_WHERE_ROLES)})"
            )
        if isinstance(wanted, Sequence) and not isinstance(wanted, str) and not wanted:
            raise ValueError(f"where: {role!r} needs a value or a non-empty list, got {wanted!r}")


def _select_where(
    work: pl.DataFrame,
    where: Mapping[str, str | Sequence[str]],
    mapping: Mapping[str, str],
    *,
    name: str,
    problems: list[Problem],
) -> tuple[pl.DataFrame, list[Exclusion]]:
    """Keep the rows whose ids are among ``where``'s values (stripped text), before any
    validation; one exclusion per role counts the rows it left out. A value that no row
    has is a problem; no row left raises at once (there is nothing left to validate)."""
    excluded: list[Exclusion] = []
    kept = work
    for role, wanted in where.items():
        many = isinstance(wanted, Sequence) and not isinstance(wanted, str)
        values = [str(v).strip() for v in (wanted if many else [wanted])]
        column = mapping.get(role, role)
        if role not in work.columns:
            problems.append(
                Problem(None, None, f"a column for role {role!r} to select rows by {values}")
            )
            continue
        present = [str(v) for v in work.get_column(role).drop_nulls().unique().sort().to_list()]
        for v in values:
            if v not in present:
                close = [p for p in present if p.lower() == v.lower()]
                close = close or difflib.get_close_matches(v, present, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                shown = ", ".join(map(repr, present[:20])) + (" ..." if len(present) > 20 else "")
                problems.append(Problem(column, v, f"a {role} in the data ({shown}){hint}"))
        before = kept.height
        kept = kept.filter(pl.col(role).is_in(values).fill_null(False))
        if before > kept.height:
            excluded.append(
                Exclusion(f"filtered by {role}={','.join(values)}", before - kept.height)
            )
    if kept.height == 0:
        problems.append(Problem(None, None, f"at least one row left after selecting {dict(where)}"))
        raise RatingsError(name, problems)
    return kept, excluded


def _wide_to_long(
    raw: pl.DataFrame,
    *,
    name: str,
    present: Sequence[str],
    mapping: dict[str, str],
    raters: Sequence[str] | None,
    keep: Sequence[str],
    problems: list[Problem],
) -> tuple[pl.DataFrame, list[str], str]:
    """Unpivot one-column-per-rater data to one rating per row (empty cells: not rated).

    Adds the ``rater`` / ``rating`` roles to ``mapping``; returns the long frame, the rater
    columns and the processing step; raises with every problem found so far.
    """
    role_cols = set(mapping.values()) | set(keep)
    rater_cols = list(raters) if raters is not None else [c for c in present if c not in role_cols]
    for c in rater_cols:
        if c not in present:
            problems.append(Problem(c, None, f"a rater column of the input (has {present})"))
    rater_cols = [c for c in rater_cols if c in present]
    for role in (S.RATER, S.RATING):
        if role in mapping:
            problems.append(
                Problem(
                    mapping[role],
                    None,
                    f"no {role!r} role in wide format (each rater is a column; read a table "
                    "with rater and rating columns with format='long')",
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
    step = f"wide format: {len(rater_cols)} rater columns; {n_empty} empty cells are not-rated"
    mapping[S.RATER] = "__rater"
    mapping[S.RATING] = _WIDE_RATING
    raw = long.sort(S.ROW, "__rater", maintain_order=True)
    if raw.height == 0:
        raise RatingsError(name, [Problem(None, None, "at least one rating (all cells empty)")])
    return raw, rater_cols, step


def _check_constant_per(
    work: pl.DataFrame, mapping: Mapping[str, str], problems: list[Problem]
) -> None:
    """Item-level attributes must be constant per item, the rater kind per rater."""
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
                    mapping.get(role, role),
                    ", ".join(map(format_level, vals)),
                    f"one {role} per {per} ({per} {key!r} has several)",
                    tuple(rows),
                )
            )


def _expected_rating(sc: Scale, dim: str, where: str, *, inferred: bool) -> str:
    """What a valid rating is: the declared scale's levels, or for a numeric scale inferred
    from the ratings, a number like the others."""
    if not inferred or (isinstance(sc, CategoricalScale) and not sc.numeric):
        return sc.expected() + where
    of = f" of dimension {dim!r}" if where else ""
    return (
        f"a number like the other ratings{of} (scale inferred from them: {sc!r}; declare "
        "scale=NominalScale([...]) if the ratings are labels)"
    )


def _with_hint(expected: str, value: str | None) -> str:
    hint = "" if value is None else number_hint(value)
    return f"{expected}; {hint}" if hint else expected


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
        expected = _expected_rating(sc, str(d), where, inferred=scale is None)
        if rating_col == _WIDE_RATING:  # wide format: the rating sits in the rater's column
            bad = sub.filter(enc.invalid)
            for rater in bad.get_column(S.RATER).unique(maintain_order=True).to_list():
                in_col = bad.filter(pl.col(S.RATER) == rater)
                for v, rows in _group_rows(in_col, pl.Series([True] * in_col.height), S.RATING):
                    problems.append(Problem(rater, v, _with_hint(expected, v), rows))
        else:
            for v, rows in _group_rows(sub, enc.invalid, S.RATING):
                problems.append(Problem(rating_col, v, _with_hint(expected, v), rows))
        sub = sub.with_columns(enc.rating.alias(S.RATING), enc.value, enc.code)
        if S.GOLD in sub.columns:
            genc = sc.encode(sub.get_column(S.GOLD))
            for v, rows in _group_rows(sub, genc.invalid, S.GOLD):
                problems.append(
                    Problem(
                        mapping.get(S.GOLD, S.GOLD),
                        v,
                        _with_hint("a gold label on the scale: " + sc.expected() + where, v),
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


__all__ = ["FileFormat", "Problem", "RatingsError", "read_ratings"]
