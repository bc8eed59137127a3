r"""Wide survey exports (Qualtrics, Google Forms, SurveyMonkey, ...) as
:class:`~raterstats.Ratings`: one row per respondent (a rater), one column per item x
question.

Qualtrics' CSV (https://www.qualtrics.com/support/survey-platform/data-and-analysis-module/
data/download-data/understanding-your-dataset/) has three header rows: the column ids
(``StartDate``, ..., ``ResponseId``, ``Q3_correctness``), the question texts, and the
ImportId of each column as JSON (``{"ImportId":"QID3_1"}``); the two extra rows are
detected and skipped (or set ``header_rows``). Google Forms and SurveyMonkey have one header
row.

The mapping:

- rater = the column ``columns["rater"]``, else the first of :data:`RATER_COLUMNS` in the
  export (``ResponseId`` in Qualtrics); group / rater kind / design from columns named in
  ``columns``;
- every other column that is not metadata (:data:`SURVEY_METADATA_COLUMNS`, plus
  ``metadata``) and whose header the ``pattern`` names an item (and a dimension) in holds
  ratings; the default pattern :data:`DEFAULT_SURVEY_PATTERN` reads ``Q3_correctness``
  and ``[item 3] Correctness`` as item ``Q3`` / ``[item 3]`` and dimension
  ``correctness`` / ``Correctness`` (the last word, after ``_`` or a space, without
  brackets: a Google Forms grid header ``Correctness [Answer 1]`` needs its own pattern,
  e.g. ``r"(?P<dimension>.+) \[(?P<item>.+)\]"``); a function of the header may return
  ``(item, dimension)`` instead; headers it does not name, and Qualtrics' text-entry,
  display-order and timing columns (:data:`QUALTRICS_NOT_RATINGS`), are listed as columns
  not used;
- an empty cell is not-rated (counted in the summary's step); ``na_values`` (e.g. Qualtrics'
  ``-99``, seen but unanswered) are left out and counted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from raterstats import schema as S
from raterstats.exports.common import KEEP_PREFIX, ExportTable, check_keep, finish_ratings
from raterstats.ingest_errors import Problem, RatingsError
from raterstats.provenance import Exclusion
from raterstats.ratings import Ratings
from raterstats.readers import FileFormat, load_source
from raterstats.scales import Scale, format_level

#: item and dimension from a column header: the last word (after "_" or " ", without
#: brackets) is the dimension, what comes before it the item
DEFAULT_SURVEY_PATTERN = r"^(?P<item>.+?)[_ ](?P<dimension>[^_ \[\]]+)$"
#: Qualtrics columns beside a question that are not ratings: text entry, display order,
#: timing (first / last click, page submit, click count)
QUALTRICS_NOT_RATINGS = re.compile(r"_(TEXT|DO|First Click|Last Click|Page Submit|Click Count)$")
#: columns of survey tools that are about the response, never ratings
SURVEY_METADATA_COLUMNS = (
    # Qualtrics
    "StartDate",
    "EndDate",
    "Status",
    "IPAddress",
    "Progress",
    "Duration (in seconds)",
    "Finished",
    "RecordedDate",
    "ResponseId",
    "RecipientLastName",
    "RecipientFirstName",
    "RecipientEmail",
    "ExternalReference",
    "LocationLatitude",
    "LocationLongitude",
    "DistributionChannel",
    "UserLanguage",
    "ResponseSet",
    # Google Forms
    "Timestamp",
    "Email Address",
    "Score",
    "Total score",
    # SurveyMonkey
    "Respondent ID",
    "Collector ID",
    "Start Date",
    "End Date",
    "IP Address",
    "First Name",
    "Last Name",
    "Custom Data 1",
)
#: columns taken as the rater, in this order, when ``columns`` names none
RATER_COLUMNS = (
    "ResponseId",
    "Respondent ID",
    "Email Address",
    "RecipientEmail",
    "Email",
    "rater",
    "rater_id",
    "annotator",
    "worker_id",
)
#: roles ``columns`` may take from a column (one value per respondent)
SURVEY_ROLES = (S.RATER, S.GROUP, S.RATER_KIND, S.DESIGN)

HeaderMap = Callable[[str], "tuple[str, str | None] | None"]


def _namer(pattern: str | re.Pattern[str] | HeaderMap) -> tuple[HeaderMap, str]:
    """The header -> (item, dimension) function of ``pattern``, and how the step names it."""
    if callable(pattern) and not isinstance(pattern, re.Pattern):
        described = f"the function {getattr(pattern, '__name__', repr(pattern))}"

        def checked(header: str) -> tuple[str, str | None] | None:
            got = pattern(header)
            ok = got is None or (
                isinstance(got, tuple)
                and len(got) == 2
                and isinstance(got[0], str)
                and bool(got[0].strip())
                and (got[1] is None or (isinstance(got[1], str) and bool(got[1].strip())))
            )
            if not ok:
                raise ValueError(
                    f"{described} must return (item, dimension or None) with non-empty "
                    f"strings, or None; for the header {header!r} it returned {got!r}"
                )
            return None if got is None else (got[0].strip(), got[1] and got[1].strip())

        return checked, described
    rx = re.compile(pattern) if isinstance(pattern, str) else pattern
    if "item" not in rx.groupindex:
        raise ValueError(f"pattern {rx.pattern!r} must have a named group 'item'")

    def name(header: str) -> tuple[str, str | None] | None:
        m = rx.fullmatch(header.strip())
        if m is None or not m["item"]:
            return None
        dim = m["dimension"] if "dimension" in rx.groupindex else None
        return m["item"].strip(), dim.strip() if dim else None

    return name, f"the pattern {rx.pattern!r}"


def _qualtrics_rows(raw: pl.DataFrame) -> bool:
    """Do the first two data rows hold Qualtrics' question texts and ImportIds?"""
    if raw.height < 2:
        return False
    third = [v for v in raw.row(1) if isinstance(v, str)]
    return any(v.lstrip().startswith('{"ImportId"') for v in third)


def read_survey(
    source: Any,
    *,
    columns: Mapping[str, str] | None = None,
    pattern: str | re.Pattern[str] | HeaderMap = DEFAULT_SURVEY_PATTERN,
    rating_columns: Sequence[str] | None = None,
    metadata: Sequence[str] = (),
    header_rows: int | None = None,
    na_values: Sequence[str | float] = (),
    scale: Scale | Mapping[str, Scale] | None = None,
    dimension: str | None = None,
    design: str | None = None,
    keep: Sequence[str] = (),
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    name: str | None = None,
) -> Ratings:
    """Read a wide survey export (one row per rater, one column per item x question).

    Parameters
    ----------
    source : path or DataFrame
        The survey's CSV / TSV export, or a frame of it.
    columns : mapping, optional
        ``{role: column}`` for the roles of one value per respondent (:data:`SURVEY_ROLES`);
        default rater: the first of :data:`RATER_COLUMNS` in the export.
    pattern : str, compiled regex or callable
        Names item and dimension in a rating column's header: a regular expression with
        the groups ``item`` and (optionally) ``dimension``, matching the whole header, or a
        function of the header returning ``(item, dimension)`` (dimension may be None) or
        None for a column without ratings. Default :data:`DEFAULT_SURVEY_PATTERN`.
    rating_columns : sequence of str, optional
        The columns holding ratings (each must match ``pattern``); default: every column
        that is not metadata and matches.
    metadata : sequence of str
        More columns that are not ratings (besides :data:`SURVEY_METADATA_COLUMNS`).
    header_rows : int, optional
        Rows of header (default: 3 for a Qualtrics export, whose third row holds the
        ImportIds; else 1). Data rows are numbered from 1 after them.
    na_values : sequence of str or number
        Cell values meaning "no rating" (e.g. ``-99``), left out and counted.
    scale : Scale or mapping of dimension to Scale, optional
        The scale(s), by dimension; inferred when omitted.
    dimension : str, optional
        The dimension, when the pattern names none.
    design : str, optional
        Constant design of the ratings.
    keep : sequence of str
        Columns kept as extra columns (``Duration (in seconds)``, ...).
    file_format : {"csv", "tsv"}, optional
        Override the format implied by the file suffix.
    encoding : str
        Text encoding of the file (Qualtrics' TSV export is UTF-16).
    name : str, optional
        How the export is named in errors and the summary (default: the path).

    Returns
    -------
    Ratings
        ``source_row`` is the respondent's 1-based data row.

    Raises
    ------
    RatingsError
        Every problem, each at its data row and column header.

    Examples
    --------
    >>> import polars as pl
    >>> survey = pl.DataFrame({"Email Address": ["a@x.org", "b@x.org"],
    ...                        "Q1_correctness": ["4", "5"], "Q2_correctness": ["2", None]})
    >>> r = read_survey(survey)
    >>> r.data.select("item", "rater", "rating").rows()
    [('Q1', 'a@x.org', '4'), ('Q2', 'a@x.org', '2'), ('Q1', 'b@x.org', '5')]
    >>> r.dimensions, r.steps[0].split(";")[-1]
    (('correctness',), ' 1 empty cell(s) are not-rated')
    """
    header_of, described = _namer(pattern)
    raw, loaded = load_source(source, file_format=file_format, encoding=encoding)
    name = name or loaded
    if header_rows is not None and (isinstance(header_rows, bool) or header_rows < 1):
        raise ValueError(f"header_rows must be 1 or more, not {header_rows!r}")
    notes = []
    qualtrics = header_rows is None and _qualtrics_rows(raw)
    skip = 2 if qualtrics else (header_rows or 1) - 1
    if qualtrics:
        notes.append(
            "Qualtrics export: the 2 header rows under the column ids (question "
            "texts, ImportIds) skipped; data rows are numbered after them"
        )
    elif skip:
        notes.append(
            f"{skip} header row(s) under the column names skipped (header_rows="
            f"{header_rows}); data rows are numbered after them"
        )
    raw = raw.slice(skip).with_columns(pl.col(S.ROW) - skip)
    present = [c for c in raw.columns if c != S.ROW]
    problems: list[Problem] = []
    mapping: dict[str, str] = {}
    for role, col in (columns or {}).items():
        if role not in SURVEY_ROLES:
            raise ValueError(
                f"columns: role {role!r} cannot come from a survey column (one value per "
                f"respondent): use one of {list(SURVEY_ROLES)}"
            )
        if col not in present:
            problems.append(Problem(col, None, f"a column of the survey for {role!r}"))
        mapping[role] = col
    if S.RATER not in mapping:
        found = [c for c in RATER_COLUMNS if c in present]
        if not found:
            problems.append(
                Problem(
                    None,
                    None,
                    f"a rater column (none of {list(RATER_COLUMNS)}; name "
                    "one with columns={'rater': ...})",
                )
            )
        else:
            mapping[S.RATER] = found[0]
    problems += check_keep(keep, present, "column")
    if raw.height == 0:
        problems.append(Problem(None, None, "at least one response under the header rows"))
    not_rating = {*SURVEY_METADATA_COLUMNS, *metadata, *mapping.values(), *keep}
    candidates = (
        list(rating_columns)
        if rating_columns is not None
        else [c for c in present if c not in not_rating and not QUALTRICS_NOT_RATINGS.search(c)]
    )
    named: dict[str, tuple[str, str | None]] = {}
    for col in candidates:
        if col not in present:
            problems.append(Problem(col, None, "a rating column of the survey"))
            continue
        got = header_of(col)
        if got is None:
            if rating_columns is not None:
                problems.append(Problem(col, None, f"a header {described} names an item in"))
            continue
        named[col] = got
    dims = {d for _, d in named.values()}
    if dimension is not None and dims != {None}:
        raise ValueError(f"dimension={dimension!r}: {described} names the dimensions already")
    by_key: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    for col, key in named.items():
        by_key[key].append(col)
    if not named:
        problems.append(
            Problem(
                None,
                None,
                f"at least one rating column ({described} names an item in none of {present})",
            )
        )
    if problems:
        raise RatingsError(name, problems)
    for (item, dim), cols in by_key.items():  # raised with the problems of the values
        if len(cols) > 1:
            problems.append(
                Problem(
                    None,
                    ", ".join(cols),
                    f"one column per item and dimension ({described} "
                    f"names item {item!r}, dimension {dim!r} in each)",
                )
            )
            for c in cols:
                del named[c]
    labels = {**mapping, **{KEEP_PREFIX + k: k for k in keep}}
    labels[S.ITEM] = labels[S.DIMENSION] = "the column header"
    labels[S.RATING] = "the rating columns"
    table = ExportTable(labels, located=False)
    na = {
        format_level(v)
        if isinstance(v, int | float) and not isinstance(v, bool)
        else str(v).strip()
        for v in na_values
    }
    n_empty = n_na = n_nothing = 0
    cells = {c: raw.get_column(c).to_list() for c in {*named, *mapping.values(), *keep}}
    for i, row in enumerate(raw.get_column(S.ROW).to_list()):
        values = {role: cells[col][i] for role, col in mapping.items()}
        values |= {KEEP_PREFIX + k: cells[k][i] for k in keep}
        before = len(table)
        for col, (item, dim) in named.items():
            v = cells[col][i]
            if v is None or not v.strip():
                n_empty += 1
                continue
            if v.strip() in na:
                n_na += 1
                continue
            extra = {S.DIMENSION: dim} if dim is not None else {}
            table.add(row=row, rating_column=col, **values, item=item, rating=v, **extra)
        n_nothing += len(table) == before
    step = (
        f"survey export: {raw.height} response(s), one per rater (rater = "
        f"{mapping[S.RATER]!r}); {len(named)} rating column(s), item and dimension from the "
        f"header by {described}; {n_empty} empty cell(s) are not-rated"
        + (f"; {n_nothing} response(s) rated nothing" if n_nothing else "")
    )
    if "Finished" in raw.columns:
        unfinished = raw.get_column("Finished").str.strip_chars().str.to_lowercase()
        n_open = int(unfinished.is_in(["0", "false"]).sum())
        if n_open:
            notes.append(f"{n_open} unfinished response(s) (Finished false) read as they are")
    exclusions = (
        [Exclusion(f"survey cells with a value of na_values {sorted(na)}", n_na)] if (n_na) else []
    )
    return finish_ratings(
        table,
        name=name,
        problems=problems,
        step="; ".join([step, *notes]),
        exclusions=exclusions,
        ignored=[
            c for c in present if c not in named and c not in mapping.values() and c not in keep
        ],
        keep=keep,
        scale=scale,
        dimension=dimension,
        design=design,
    )


__all__ = [
    "DEFAULT_SURVEY_PATTERN",
    "QUALTRICS_NOT_RATINGS",
    "RATER_COLUMNS",
    "SURVEY_METADATA_COLUMNS",
    "SURVEY_ROLES",
    "read_survey",
]
