"""Label Studio's JSON export (https://labelstud.io/guide/export.html, task format
https://labelstud.io/guide/task_format) as :class:`~raterstats.Ratings`.

The export is a JSON list of tasks; each task has an ``id``, its ``data`` and a list of
``annotations`` (``completions`` before Label Studio 1.0), one per annotator. An
annotation has ``completed_by`` (a user id, or a user object in some versions),
``result`` (a list of results, one per control tag: ``from_name``, ``to_name``, ``type``
and ``value``), ``was_cancelled``, ``ground_truth`` and ``lead_time`` (seconds).

The mapping:

- item = the task ``id`` (or the data field ``item_field``); system / question = the data
  fields ``system_field`` / ``question_field`` when named;
- rater = ``completed_by``: the user id, or the user object's ``email`` (else its ``id``);
- dimension = ``from_name`` (the control tag's name); rating = the choice of a
  ``choices`` result, the ``rating`` of a ``rating`` result, the ``number`` of a
  ``number`` result; several choices are a problem, or with ``multi_choice="join"`` one
  level, the choices sorted and joined by ``|``;
- duration_s = the annotation's ``lead_time``;
- cancelled annotations (``was_cancelled``), free text (``textarea``), rankings
  (``ranker``: raterstats has no model of per-task rankings), per-region results and other
  result types are left out and counted in the summary; predictions and drafts are not
  read (their number is in the summary's step); ground-truth annotations are ratings of
  their annotator (or left out and counted with ``ground_truth="exclude"``).
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from raterstats import schema as S
from raterstats.exports.common import (
    KEEP_PREFIX,
    ExportProblem,
    ExportTable,
    finish_ratings,
)
from raterstats.ingest_errors import Problem, RatingsError
from raterstats.provenance import Exclusion
from raterstats.ratings import Ratings
from raterstats.scales import Scale, format_level

#: result types read as ratings, and the key of ``value`` holding the rating
RATING_TYPES = {"choices": "choices", "rating": "rating", "number": "number"}
#: keys of a result's ``value`` that make it a per-region result (a span, a box, ...)
REGION_KEYS = ("start", "end", "x", "y", "points", "startOffset", "endOffset", "globalOffsets")

_ABSENT = object()  # a key the JSON object does not have

_WHY = {
    "textarea": "Label Studio 'textarea' results: free text, not a rating",
    "ranker": "Label Studio 'ranker' results: rankings of list items are not supported "
    "(raterstats has no model of per-task rankings)",
    "region": "Label Studio per-region results (value with start/end or x/y): they rate a "
    "region of the task, not the task",
    "cancelled": "cancelled Label Studio annotations (was_cancelled)",
    "ground_truth": "Label Studio ground-truth annotations (ground_truth='exclude')",
}


def _load_tasks(source: Any, encoding: str, name: str | None) -> tuple[list[Any], str]:
    if isinstance(source, list):
        return source, name or "a list of Label Studio tasks"
    if not isinstance(source, str | os.PathLike):
        raise TypeError(
            f"read_label_studio: source must be a path or a list of tasks, not "
            f"{type(source).__name__}"
        )
    path = Path(source)
    label = name or str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RatingsError(label, [Problem(None, None, "an existing file")]) from None
    except OSError as err:
        raise RatingsError(label, [Problem(None, None, f"a readable file ({err})")]) from None
    try:
        doc = json.loads(raw.decode(encoding).removeprefix("\ufeff"))
    except UnicodeDecodeError as err:
        raise RatingsError(
            label, [Problem(None, None, f"{encoding} text (byte {err.start + 1} cannot be read)")]
        ) from None
    except json.JSONDecodeError as err:
        raise RatingsError(
            label,
            [
                Problem(
                    None,
                    None,
                    f"a Label Studio JSON export ({err.msg} at line {err.lineno}, "
                    f"column {err.colno})",
                )
            ],
        ) from None
    if not isinstance(doc, list):
        hint = " (one task: put it in a list)" if isinstance(doc, dict) and "data" in doc else ""
        raise RatingsError(
            label,
            [
                Problem(
                    None,
                    type(doc).__name__,
                    "a JSON list of tasks (Label Studio's JSON export)" + hint,
                )
            ],
        )
    return doc, label


def _id_text(v: Any) -> str | None:
    """An id as text: an integer or a non-empty string; None for anything else."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str) and v.strip():
        return v.strip()
    return None


def _rater(completed_by: Any) -> str | None:
    """``completed_by``: a user id, or a user object (its e-mail, else its id)."""
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and email.strip():
            return email.strip()
        return _id_text(completed_by.get("id"))
    return _id_text(completed_by)


def _scalar(v: Any) -> str | None:
    if v is None or isinstance(v, dict | list):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return format_level(v)
    return str(v)


def _rating(
    kind: str, value: dict[str, Any], multi_choice: str
) -> tuple[str | None, str | None, str | None]:
    """(rating, problem value, expectation) of a rating result's ``value``."""
    key = RATING_TYPES[kind]
    if key not in value:
        return None, None, f"a {kind} result with value.{key}"
    v = value[key]
    if kind == "choices":
        if not isinstance(v, list) or not all(isinstance(c, str | int | float) for c in v):
            return None, json.dumps(v)[:60], "value.choices: a list of choices"
        if len(v) > 1 and multi_choice == "error":
            return (
                None,
                ", ".join(map(str, v)),
                "one choice (several were chosen; multi_choice='join' reads them as one "
                "level, sorted and joined by '|')",
            )
        texts = sorted(_scalar(c) or "" for c in v)
        return ("|".join(texts) if texts else None), None, None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None, json.dumps(v)[:60], f"value.{key}: a finite number"
    return format_level(v), None, None


class _Walk:
    """One pass over the tasks: the ratings read, the problems found (each at its task and
    annotation) and the counts of what was left out or not read."""

    def __init__(
        self,
        fields: dict[str, str | None],
        keep: Sequence[str],
        multi_choice: str,
        ground_truth: str,
    ) -> None:
        item_field = fields[S.ITEM]
        labels = {
            S.ITEM: f"data field {item_field!r}" if item_field else "key 'id'",
            S.RATER: "key 'completed_by'",
            S.DIMENSION: "key 'from_name'",
            S.RATING: "the results' values",
            S.DURATION: "key 'lead_time'",
            **{r: f"data field {f!r}" for r, f in fields.items() if f and r != S.ITEM},
            **{KEEP_PREFIX + k: f"data field {k!r}" for k in keep},
        }
        self.fields = [
            *((r, f) for r, f in fields.items() if f is not None),
            *((KEEP_PREFIX + k, k) for k in keep),
        ]
        self.item_field = item_field
        self.multi_choice = multi_choice
        self.ground_truth = ground_truth
        self.table = ExportTable(labels, located=True)
        self.problems: list[Problem] = []
        self.left_out: Counter[str] = Counter()
        self.n_ann: Counter[str] = Counter()

    def bad(self, rec: int, place: str, what: str | None, value: Any, expected: str) -> None:
        """A problem at ``place`` (task ``rec`` of the export); ``value`` as written."""
        if value is _ABSENT:
            shown, expected = None, f"{expected} (the key is missing)"
        else:
            shown = value if isinstance(value, str) else json.dumps(value)[:60]
        self.problems.append(ExportProblem(what, shown, expected, (rec,), (place,)))

    def task(self, rec: int, task: Any) -> None:
        """Read one task; the ratings of a task with a problem are not kept (its problems
        and those of its annotations are)."""
        if not isinstance(task, dict):
            self.bad(rec, f"record {rec}", None, type(task).__name__, "a task (a JSON object)")
            return
        n_before = len(self.problems)
        tid = _id_text(task.get("id"))
        place = f"task {task['id']!r}" if tid is not None else f"record {rec}"
        if tid is None and self.item_field is None:
            expected = "a task id (an integer or a string)"
            self.bad(rec, place, "key 'id'", task.get("id", _ABSENT), expected)
        data = task.get("data", {} if not self.fields else None)  # needed for fields only
        if not isinstance(data, dict):
            expected = "the task's data (a JSON object)"
            self.bad(rec, place, "key 'data'", task.get("data", _ABSENT), expected)
            data = {}
        row: dict[str, str | None] = {S.ITEM: tid}
        for role, fld in self.fields:
            v = _scalar(data.get(fld))
            kept_null = role.startswith(KEEP_PREFIX) and fld in data and data[fld] is None
            if v is None and not kept_null:
                what = "a value (a string or a number)" if fld in data else "a field of the data"
                self.bad(rec, place, f"data field {fld!r}", data.get(fld, _ABSENT), what)
            row[role] = v
        anns = task.get("annotations", task.get("completions"))
        if not isinstance(anns, list):
            expected = "a list of annotations"
            self.bad(rec, place, "key 'annotations'", task.get("annotations", _ABSENT), expected)
            return
        for key in ("predictions", "drafts"):
            extra = task.get(key)
            self.n_ann[key] += len(extra) if isinstance(extra, list) else 0
        task_ok = len(self.problems) == n_before
        for j, ann in enumerate(anns, start=1):
            self.annotation(rec, f"{place} annotation {j}", ann, row if task_ok else None)

    def annotation(self, rec: int, place: str, ann: Any, row: dict[str, str | None] | None) -> None:
        """Read one annotation (its ratings kept when ``row``, the task's roles, is given)."""
        if not isinstance(ann, dict):
            self.bad(rec, place, None, type(ann).__name__, "an annotation (a JSON object)")
            return
        results = ann.get("result")
        if not isinstance(results, list):
            self.bad(rec, place, "key 'result'", ann.get("result", _ABSENT), "a list of results")
            return
        n_rated = sum(
            isinstance(x, dict) and isinstance(x.get("type"), str) and x["type"] in RATING_TYPES
            for x in results
        )
        if ann.get("was_cancelled") is True:
            self.n_ann["cancelled"] += 1
            self.left_out["cancelled"] += n_rated
            return
        if ann.get("ground_truth") is True:
            self.n_ann["ground_truth"] += 1
            if self.ground_truth == "exclude":
                self.left_out["ground_truth"] += n_rated
                return
        self.n_ann["read"] += 1
        rater = _rater(ann.get("completed_by"))
        if rater is None:
            expected = "the annotator: a user id, or a user object with an email or an id"
            self.bad(rec, place, "key 'completed_by'", ann.get("completed_by", _ABSENT), expected)
        lead = ann.get("lead_time")
        if lead is not None and (isinstance(lead, bool) or not isinstance(lead, int | float)):
            self.bad(rec, place, "key 'lead_time'", lead, "seconds (a number) or null")
            lead = None
        for res in results:
            got = self.result(rec, place, res)
            if got is None or row is None or rater is None:
                continue
            tag, rating = got
            self.table.add(
                row=rec,
                rating_column=f"result {tag!r}",
                place=place,
                **row,
                rater=rater,
                dimension=tag,
                rating=rating,
                duration_s=None if lead is None else format_level(lead),
            )

    def result(self, rec: int, place: str, res: Any) -> tuple[str, str | None] | None:
        """``(control tag, rating)`` of one result; None for a result left out (counted) or
        with a problem (reported)."""
        if not isinstance(res, dict):
            self.bad(rec, place, "key 'result'", res, "results that are JSON objects")
            return None
        kind, tag, value = res.get("type"), res.get("from_name"), res.get("value")
        if not isinstance(kind, str):
            expected = "a result type (a string)"
            self.bad(rec, place, "key 'type' of a result", res.get("type", _ABSENT), expected)
            return None
        if kind not in RATING_TYPES:
            self.left_out["ranker" if kind in ("ranker", "ranking") else kind] += 1
            return None
        if not isinstance(tag, str) or not tag.strip():
            expected = "the control tag's name (a non-empty string)"
            got = res.get("from_name", _ABSENT)
            self.bad(rec, place, "key 'from_name' of a result", got, expected)
            return None
        what = f"result {tag.strip()!r}"
        if not isinstance(value, dict):
            self.bad(rec, place, what, res.get("value", _ABSENT), "key 'value': a JSON object")
            return None
        if any(k in value for k in REGION_KEYS):
            self.left_out["region"] += 1
            return None
        rating, shown, why = _rating(kind, value, self.multi_choice)
        if why is not None:
            self.bad(rec, place, what, shown, why)
            return None
        return tag.strip(), rating


def read_label_studio(
    source: Any,
    *,
    item_field: str | None = None,
    system_field: str | None = None,
    question_field: str | None = None,
    multi_choice: Literal["error", "join"] = "error",
    ground_truth: Literal["keep", "exclude"] = "keep",
    scale: Scale | Mapping[str, Scale] | None = None,
    design: str | None = None,
    missing: Literal["error", "drop"] = "error",
    keep: Sequence[str] = (),
    encoding: str = "utf-8",
    name: str | None = None,
) -> Ratings:
    """Read a Label Studio JSON export (a list of tasks) as ratings.

    Parameters
    ----------
    source : path or list
        The ``.json`` export (Export > JSON), or its tasks already loaded.
    item_field : str, optional
        A ``data`` field naming the item (default: the task ``id``).
    system_field, question_field : str, optional
        ``data`` fields naming the item's system / question.
    multi_choice : {"error", "join"}
        Several choices in one ``choices`` result: a problem (default), or one level, the
        choices sorted and joined by ``|``.
    ground_truth : {"keep", "exclude"}
        Annotations marked ``ground_truth``: ratings of their annotator (default), or left
        out and counted.
    scale : Scale or mapping of dimension to Scale, optional
        The scale(s), by control tag name (``from_name``); inferred when omitted.
    design : str, optional
        Constant design of the ratings.
    missing : {"error", "drop"}
        A ``choices`` result with no choice: a problem (default) or left out and counted.
    keep : sequence of str
        ``data`` fields kept as extra columns.
    encoding : str
        Text encoding of the file.
    name : str, optional
        How the export is named in errors and the summary (default: the path).

    Returns
    -------
    Ratings
        ``source_row`` is the task's 1-based position in the export.

    Raises
    ------
    RatingsError
        Every problem, each at its task and annotation (``task 12 annotation 2``).

    Examples
    --------
    >>> tasks = [{"id": 1, "data": {"text": "a"}, "annotations": [
    ...     {"completed_by": 7, "lead_time": 4.5, "was_cancelled": False, "result": [
    ...         {"from_name": "quality", "to_name": "text", "type": "rating",
    ...          "value": {"rating": 4}}]},
    ...     {"completed_by": {"id": 8, "email": "b@x.org"}, "result": [
    ...         {"from_name": "quality", "to_name": "text", "type": "rating",
    ...          "value": {"rating": 5}}]}]}]
    >>> r = read_label_studio(tasks)
    >>> r.data.select("item", "rater", "dimension", "rating", "duration_s").rows()
    [('1', '7', 'quality', '4', 4.5), ('1', 'b@x.org', 'quality', '5', None)]
    """
    if multi_choice not in ("error", "join"):
        raise ValueError(f"multi_choice must be 'error' or 'join', not {multi_choice!r}")
    if ground_truth not in ("keep", "exclude"):
        raise ValueError(f"ground_truth must be 'keep' or 'exclude', not {ground_truth!r}")
    tasks, name = _load_tasks(source, encoding, name)
    walk = _Walk(
        {S.ITEM: item_field, S.SYSTEM: system_field, S.QUESTION: question_field},
        keep,
        multi_choice,
        ground_truth,
    )
    for rec, task in enumerate(tasks, start=1):
        walk.task(rec, task)
    left_out, n_ann = walk.left_out, walk.n_ann
    exclusions = [
        Exclusion(
            _WHY.get(
                key,
                f"Label Studio {key!r} results: not a rating of the task (read: "
                f"{', '.join(RATING_TYPES)})",
            )
            + (f": {n_ann[key]} annotation(s)" if key in ("cancelled", "ground_truth") else ""),
            n,
        )
        for key, n in sorted(left_out.items())
    ]
    return finish_ratings(
        walk.table,
        name=name,
        problems=walk.problems,
        step=_step(len(tasks), n_ann, walk.table.labels, ground_truth),
        exclusions=exclusions,
        keep=keep,
        scale=scale,
        design=design,
        missing=missing,
    )


def _step(n_tasks: int, n_ann: Counter[str], labels: dict[str, str], ground_truth: str) -> str:
    parts = [
        f"Label Studio JSON export: {n_tasks} task(s), {n_ann['read']} annotation(s) read; "
        f"item = {labels[S.ITEM]}, rater = completed_by, dimension = from_name (the control "
        "tag), rating = the choice / rating / number, duration_s = lead_time"
    ]
    for role in (S.SYSTEM, S.QUESTION):
        if role in labels:
            parts.append(f"{role} = {labels[role]}")
    if n_ann["ground_truth"] and ground_truth == "keep":
        parts.append(
            f"{n_ann['ground_truth']} ground-truth annotation(s) read as ratings of their annotator"
        )
    not_read = [f"{n_ann[k]} {k}" for k in ("predictions", "drafts") if n_ann[k]]
    if not_read:
        parts.append("not read: " + ", ".join(not_read))
    return "; ".join(parts)


__all__ = ["RATING_TYPES", "REGION_KEYS", "read_label_studio"]
