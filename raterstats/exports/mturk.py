"""Amazon Mechanical Turk batch results (Requester UI, Manage > Results > "Download CSV":
https://docs.aws.amazon.com/AWSMechTurk/latest/RequesterUI/ReviewingResultsOutsideoftheRUI.html)
as :class:`~raterstats.Ratings`.

The CSV has one row per assignment (one worker's answers to one HIT): the HIT's columns
(``HITId``, ``HITTypeId``, ``Title``, ``Reward``, ...), the assignment's (``AssignmentId``,
``WorkerId``, ``AssignmentStatus``: Submitted / Approved / Rejected, ``AcceptTime``,
``SubmitTime``, ``WorkTimeInSeconds``, ...), one ``Input.<var>`` column per variable of
the HIT's input and one ``Answer.<field>`` column per field of the worker's answer, then
``Approve`` and ``Reject`` (the requester's review, for upload).

The mapping:

- rater = ``WorkerId``; item = ``Input.id``, else the first ``Input.*`` column, else
  ``HITId`` (choose with ``columns={"item": "Input.answer_id"}``); other roles (system,
  question, group, ...) from columns named in ``columns``;
- one dimension per ``Answer.*`` column (or those named in ``answers``), named without the
  ``Answer.`` prefix; columns ``Answer.<q>.<option>`` holding only true / false (the
  radio buttons of a crowd-html form) are one dimension ``<q>`` whose rating is the option
  that is true;
- duration_s = ``WorkTimeInSeconds``, else ``SubmitTime`` - ``AcceptTime``;
- rejected assignments (``AssignmentStatus`` Rejected, or Submitted with a reason in the
  ``Reject`` column) are left out and counted, unless ``keep_rejected=True``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
from raterstats.exports.common import (
    KEEP_PREFIX,
    ExportTable,
    add_grouped,
    check_keep,
    finish_ratings,
)
from raterstats.ingest_errors import Problem, RatingsError
from raterstats.provenance import Exclusion
from raterstats.ratings import Ratings
from raterstats.readers import FileFormat, load_source
from raterstats.scales import Scale, format_level

#: roles ``columns`` may take from a column of the batch results (one value per assignment)
MTURK_ROLES = (
    S.ITEM,
    S.RATER,
    S.SYSTEM,
    S.QUESTION,
    S.SEGMENT,
    S.DESIGN,
    S.GROUP,
    S.RATER_KIND,
    S.LENGTH,
    S.DURATION,
)
STATUSES = ("Submitted", "Approved", "Rejected")
#: offsets (hours) of the time zones MTurk writes in AcceptTime / SubmitTime
TIME_ZONES = {
    "UTC": 0,
    "GMT": 0,
    "PST": -8,
    "PDT": -7,
    "MST": -7,
    "MDT": -6,
    "CST": -6,
    "CDT": -5,
    "EST": -5,
    "EDT": -4,
}
_TIME = re.compile(r"^[A-Za-z]{3} ([A-Za-z]{3}) +(\d{1,2}) (\d{1,2}:\d{2}:\d{2}) ([A-Z]+) (\d{4})$")
_TRUE, _FALSE = "true", "false"


def parse_mturk_time(text: str) -> datetime | None:
    """A time as MTurk writes it (``Sat Sep 07 10:42:30 PDT 2013``, zones of
    :data:`TIME_ZONES`) or ISO 8601 (taken as UTC without a zone); None when neither.

    Examples
    --------
    >>> a = parse_mturk_time("Sat Sep 07 10:42:30 PDT 2013")
    >>> b = parse_mturk_time("2013-09-07T17:43:07Z")
    >>> (b - a).total_seconds()
    37.0
    """
    text = text.strip()
    m = _TIME.match(text)
    if m:
        month, day, clock, zone, year = m.groups()
        if zone not in TIME_ZONES:
            return None
        try:
            t = datetime.strptime(f"{month} {day} {year} {clock}", "%b %d %Y %H:%M:%S")
        except ValueError:
            return None
        return t.replace(tzinfo=timezone(timedelta(hours=TIME_ZONES[zone])))
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _radio_groups(raw: pl.DataFrame, answers: Sequence[str]) -> dict[str, list[str]]:
    """``Answer.<q>.<option>`` columns holding only true/false, by ``Answer.<q>`` (two or
    more options each)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for col in answers:
        prefix, dot, _ = col.rpartition(".")
        if not dot or prefix == "Answer":
            continue
        vals = raw.get_column(col).drop_nulls().str.strip_chars().str.to_lowercase()
        if vals.is_in([_TRUE, _FALSE]).all():
            groups[prefix].append(col)
    return {p: cols for p, cols in groups.items() if len(cols) > 1}


def _resolve(
    present: Sequence[str], columns: Mapping[str, str], answers: Sequence[str] | None
) -> tuple[dict[str, str], list[str], list[Problem]]:
    problems: list[Problem] = []
    mapping: dict[str, str] = {}
    for role, col in columns.items():
        if role not in MTURK_ROLES:
            raise ValueError(
                f"columns: role {role!r} cannot come from a batch results column; "
                f"use one of {list(MTURK_ROLES)} (ratings come from the Answer.* columns)"
            )
        if col not in present:
            problems.append(Problem(col, None, f"a column of the batch results for {role!r}"))
        mapping[role] = col
    inputs = [c for c in present if c.startswith("Input.")]
    defaults = {
        S.ITEM: "Input.id" if "Input.id" in present else (inputs or ["HITId"])[0],
        S.RATER: "WorkerId",
    }
    for role, col in defaults.items():
        if role not in mapping:
            if col not in present:
                problems.append(
                    Problem(
                        None,
                        None,
                        f"a column for {role!r} ({col!r} is not in the "
                        f"export; name one with columns={{{role!r}: ...}})",
                    )
                )
            mapping[role] = col
    if S.DURATION not in mapping and "WorkTimeInSeconds" in present:
        mapping[S.DURATION] = "WorkTimeInSeconds"
    if answers is None:
        chosen = [c for c in present if c.startswith("Answer.")]
        if not chosen:
            problems.append(Problem(None, None, "at least one Answer.* column (the answers)"))
    else:
        chosen = []
        for a in answers:
            col = a if a in present or f"Answer.{a}" not in present else f"Answer.{a}"
            if col not in present:
                problems.append(Problem(col, None, "an Answer column of the batch results"))
            else:
                chosen.append(col)
    return mapping, chosen, problems


def _rejected(raw: pl.DataFrame, keep_rejected: bool, problems: list[Problem]) -> list[bool]:
    """Per row: is the assignment rejected (and not kept)?"""
    n = raw.height
    if "AssignmentStatus" not in raw.columns:
        return [False] * n
    status = raw.get_column("AssignmentStatus").str.strip_chars().to_list()
    reject = raw.get_column("Reject").to_list() if "Reject" in raw.columns else [None] * n
    approve = raw.get_column("Approve").to_list() if "Approve" in raw.columns else [None] * n
    found: dict[tuple[str | None, str | None, str], list[int]] = defaultdict(list)
    out = []
    for i, (st, rej, app) in enumerate(zip(status, reject, approve, strict=True), start=1):
        if st not in STATUSES:
            found[("AssignmentStatus", st, f"one of {', '.join(STATUSES)}")].append(i)
        if rej and app:
            found[("Reject", rej, "either an Approve mark or a Reject reason, not both")].append(i)
        out.append(not keep_rejected and (st == "Rejected" or (st == "Submitted" and bool(rej))))
    add_grouped(problems, found)
    return out


def _durations(raw: pl.DataFrame, problems: list[Problem]) -> list[str | None] | None:
    """SubmitTime - AcceptTime in seconds per row, when the export has both."""
    if "AcceptTime" not in raw.columns or "SubmitTime" not in raw.columns:
        return None
    found: dict[tuple[str | None, str | None, str], list[int]] = defaultdict(list)
    expected = (
        f"a time like 'Sat Sep 07 10:42:30 PDT 2013' (zones {', '.join(TIME_ZONES)}) or ISO 8601"
    )
    out: list[str | None] = []
    pairs = zip(raw.get_column("AcceptTime"), raw.get_column("SubmitTime"), strict=True)
    for i, (a, s) in enumerate(pairs, start=1):
        ta = parse_mturk_time(a) if a else None
        ts = parse_mturk_time(s) if s else None
        for col, text, t in (("AcceptTime", a, ta), ("SubmitTime", s, ts)):
            if text and t is None:
                found[(col, text, expected)].append(i)
        out.append(format_level((ts - ta).total_seconds()) if ta and ts else None)
    add_grouped(problems, found)
    return out


def read_mturk(
    source: Any,
    *,
    columns: Mapping[str, str] | None = None,
    answers: Sequence[str] | None = None,
    keep_rejected: bool = False,
    scale: Scale | Mapping[str, Scale] | None = None,
    dimension: str | None = None,
    design: str | None = None,
    missing: Literal["error", "drop"] = "error",
    keep: Sequence[str] = (),
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    name: str | None = None,
) -> Ratings:
    """Read Mechanical Turk batch results (the Requester UI's "Download CSV") as ratings.

    Parameters
    ----------
    source : path or DataFrame
        The batch results CSV, or a frame of it.
    columns : mapping, optional
        ``{role: column}`` for the roles of one value per assignment (:data:`MTURK_ROLES`).
        Defaults: item ``Input.id`` (else the first ``Input.*`` column, else ``HITId``),
        rater ``WorkerId``, duration_s ``WorkTimeInSeconds`` (else ``SubmitTime`` -
        ``AcceptTime``).
    answers : sequence of str, optional
        The answer columns to read, one dimension each (``Answer.quality`` or
        ``quality``); default: every ``Answer.*`` column.
    keep_rejected : bool
        Keep rejected assignments (default: left out and counted).
    scale : Scale or mapping of dimension to Scale, optional
        The scale(s), by dimension (the answer's name without ``Answer.``).
    dimension : str, optional
        The dimension's name when one answer column is read (default: its name).
    design : str, optional
        Constant design of the ratings.
    missing : {"error", "drop"}
        An empty answer: a problem (default) or left out and counted.
    keep : sequence of str
        Columns kept as extra columns (``Input.model``, ``LifetimeApprovalRate``, ...).
    file_format : {"csv", "tsv"}, optional
        Override the format implied by the file suffix.
    encoding : str
        Text encoding of the file.
    name : str, optional
        How the export is named in errors and the summary (default: the path).

    Returns
    -------
    Ratings
        ``source_row`` is the assignment's 1-based data row in the CSV.

    Raises
    ------
    RatingsError
        Every problem, each at its CSV data row (header not counted) and column.

    Examples
    --------
    >>> import polars as pl
    >>> batch = pl.DataFrame({
    ...     "HITId": ["h1", "h1", "h1"], "WorkerId": ["A1", "A2", "A3"],
    ...     "AssignmentStatus": ["Approved", "Submitted", "Rejected"],
    ...     "WorkTimeInSeconds": ["30", "41", "2"], "Input.id": ["q1", "q1", "q1"],
    ...     "Answer.quality": ["4", "5", "1"]})
    >>> r = read_mturk(batch)
    >>> r.data.select("item", "rater", "dimension", "rating", "duration_s").rows()
    [('q1', 'A1', 'quality', '4', 30.0), ('q1', 'A2', 'quality', '5', 41.0)]
    >>> print(r.exclusions[0])
    1 rating(s) excluded: rejected MTurk assignments: 1 assignment(s)
    """
    raw, loaded = load_source(source, file_format=file_format, encoding=encoding)
    name = name or loaded
    present = [c for c in raw.columns if c != S.ROW]
    mapping, chosen, problems = _resolve(present, dict(columns or {}), answers)
    problems += check_keep(keep, present, "column")
    if problems:
        raise RatingsError(name, problems)
    groups = _radio_groups(raw, chosen)
    in_group = {c: g for g, cols in groups.items() for c in cols}
    dims: dict[str, list[str]] = {}  # dimension -> its column(s)
    for col in chosen:
        key = in_group.get(col, col)
        dims.setdefault(key.removeprefix("Answer."), []).append(col)
    clash = [d for d, cols in dims.items() if len(cols) > 1 and not set(cols) <= set(in_group)]
    if clash:
        raise RatingsError(
            name,
            [
                Problem(
                    None,
                    ", ".join(dims[d]),
                    f"answer columns with distinct names ({d!r} "
                    "is both an answer and a radio group; choose with answers=...)",
                )
                for d in clash
            ],
        )
    if dimension is not None and len(dims) != 1:
        raise ValueError(
            f"dimension={dimension!r} names the one dimension of an export with one answer; "
            f"this one has {len(dims)}: {list(dims)} (choose with answers=...)"
        )
    rejected = _rejected(raw, keep_rejected, problems)
    durations = None if S.DURATION in mapping else _durations(raw, problems)
    labels = dict(mapping)
    labels[S.DIMENSION] = "the Answer column"
    labels[S.RATING] = "the Answer columns"
    if durations is not None:
        labels[S.DURATION] = "SubmitTime - AcceptTime"
    table = ExportTable({**labels, **{KEEP_PREFIX + k: k for k in keep}}, located=False)
    cells = {c: raw.get_column(c).to_list() for c in {*mapping.values(), *chosen, *keep}}
    several: dict[tuple[str | None, str | None, str], list[int]] = defaultdict(list)
    n_rejected = n_left = 0
    for i, row in enumerate(raw.get_column(S.ROW).to_list()):
        if rejected[i]:
            n_rejected += 1
            n_left += len(dims)
            continue
        values = {role: cells[col][i] for role, col in mapping.items()}
        if durations is not None:
            values[S.DURATION] = durations[i]
        values |= {KEEP_PREFIX + k: cells[k][i] for k in keep}
        for dim, cols in dims.items():
            if len(cols) == 1 and cols[0] not in in_group:
                rating, where = cells[cols[0]][i], cols[0]
            else:
                where = f"{in_group[cols[0]]}.*"
                on = [c.rpartition(".")[2] for c in cols if (cells[c][i] or "").lower() == _TRUE]
                if len(on) > 1:
                    several[
                        (where, ", ".join(on), f"one option of the radio group {dim!r}")
                    ].append(row)
                    continue
                rating = on[0] if on else None
            table.add(
                row=row,
                rating_column=where,
                **values,
                dimension=dimension or dim,
                rating=rating,
            )
    add_grouped(problems, several)
    if "AssignmentStatus" in raw.columns:
        counts = Counter(raw.get_column("AssignmentStatus").str.strip_chars().to_list())
        order = [*STATUSES, *sorted((k for k in counts if k not in STATUSES), key=str)]
        status = [(s, counts[s]) for s in order if counts[s]]
    else:
        status = [("no AssignmentStatus column: every assignment read", raw.height)]
    used = {*mapping.values(), *chosen, *keep}
    if durations is not None:
        used |= {"AcceptTime", "SubmitTime"}
    step = (
        f"MTurk batch results: {raw.height} assignment(s) ("
        + ", ".join(f"{n} {s}" for s, n in status)
        + f"); item = {mapping[S.ITEM]!r}, rater = {mapping[S.RATER]!r}, "
        + "dimensions = "
        + ", ".join(f"{d!r} ({', '.join(c)})" for d, c in dims.items())
        + f", duration_s = {labels.get(S.DURATION, 'none')!r}"
    )
    exclusions = []
    if n_rejected:
        why = "rejected MTurk assignments"
        if "Reject" in raw.columns and raw.get_column("Reject").drop_nulls().len():
            why += " (AssignmentStatus Rejected, or Submitted with a Reject reason)"
        exclusions.append(Exclusion(f"{why}: {n_rejected} assignment(s)", n_left))
    return finish_ratings(
        table,
        name=name,
        problems=problems,
        step=step,
        exclusions=exclusions,
        ignored=[c for c in present if c not in used],
        keep=keep,
        scale=scale,
        design=design,
        missing=missing,
    )


__all__ = ["MTURK_ROLES", "STATUSES", "TIME_ZONES", "parse_mturk_time", "read_mturk"]
