"""Read annotation exports (CSV, TSV, Parquet, JSON lines, polars or pandas frames) into a
validated :class:`~raterstats.Ratings`.

The files are loaded by :mod:`raterstats.readers`; this module resolves the column roles,
reshapes wide tables (one column per rater) to long ones, and validates every value.
Validation lists every problem at once in one :class:`RatingsError`
(:mod:`raterstats.ingest_errors`) — file, 1-based row, column, offending value and what was
expected — and never drops a row silently: the only rows left out are those the caller
asked to exclude, and they are counted.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
from raterstats.ingest_errors import Problem, RatingsError
from raterstats.provenance import Exclusion, Provenance
from raterstats.ratings import Ratings
from raterstats.readers import FileFormat, load_source
from raterstats.scales import CategoricalScale, Scale, format_level, infer_scale

_TRUE = {"true", "t", "yes", "y", "1", "repeat", "repeated"}
_FALSE = {"false", "f", "no", "n", "0", "", "first"}
_WIDE_RATING = "__rating"


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
    export : {"label-studio", "mturk", "survey"}, optional
        Read an annotation tool's export (Label Studio JSON, Mechanical Turk batch results,
        a wide survey export) instead of a table; ``columns`` then names the export's
        fields or columns (see :func:`raterstats.exports.read_export`).

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
    if export is not None:
        from raterstats.exports import read_export

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
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', not {missing!r}")
    raw, loaded_as = load_source(source, file_format=file_format, encoding=encoding)
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
        raw, rater_cols, step = _wide_to_long(
            raw,
            name=name,
            present=present,
            mapping=mapping,
            raters=raters,
            keep=keep,
            problems=problems,
        )
        steps.append(step)

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

    _check_constant_per(work, mapping, problems)
    _check_duplicates(work, mapping, problems)

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
    if S.RATER in mapping or S.RATING in mapping:
        problems.append(
            Problem(None, None, "no 'rater'/'rating' roles in wide format (each rater is a column)")
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


def _check_duplicates(
    work: pl.DataFrame, mapping: Mapping[str, str], problems: list[Problem]
) -> None:
    """One rating per (item, segment, rater, dimension, design) unless marked repeated."""
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


__all__ = ["FileFormat", "Problem", "RatingsError", "read_ratings"]
