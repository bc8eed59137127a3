"""Canonical column roles, their types and the aliases accepted at ingest.

Every analysis in raterstats reads one vocabulary: ``item`` (the rated object, e.g. an
answer), ``segment`` (a sentence within the item), ``rater``, ``rating``, ``dimension``
(correctness, relevance, ...), ``design`` (coarse, fine, ...), ``system``, ``question``,
and the optional covariates below. Column roles are named once, at ingest
(:func:`raterstats.read_ratings`), and never again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["id", "rating", "float", "bool", "label"]

ITEM = "item"
SEGMENT = "segment"
RATER = "rater"
RATING = "rating"
DIMENSION = "dimension"
DESIGN = "design"
SYSTEM = "system"
QUESTION = "question"
LENGTH = "length"
GROUP = "group"
DURATION = "duration_s"
CONFIDENCE = "confidence"
REPEAT = "repeat"
GOLD = "gold"
RATER_KIND = "rater_kind"

#: Derived columns that :class:`raterstats.Ratings` adds to the canonical frame.
VALUE = "value"
CODE = "code"
ROW = "source_row"
#: 0 for the first rating of an item x segment x rater x dimension x design, 1, 2, ... for
#: its repeats in order (``repeat`` is ``repeat_index > 0``).
REPEAT_INDEX = "repeat_index"

#: Value used for ``dimension`` / ``design`` when the data do not have that column.
DEFAULT_LEVEL = "default"

#: Separator between item and segment in the id of a segment unit (``"<item>::<segment>"``).
UNIT_SEP = "::"


@dataclass(frozen=True)
class Role:
    """One column role: its canonical name, kind, whether it is required, and aliases."""

    name: str
    kind: Kind
    required: bool
    aliases: tuple[str, ...]
    description: str


ROLES: dict[str, Role] = {
    r.name: r
    for r in (
        Role(
            ITEM,
            "id",
            True,
            ("task", "item_id", "task_id", "unit", "unit_id", "answer", "answer_id", "example"),
            "the rated object (an answer); the cluster for bootstrap intervals",
        ),
        Role(
            RATER,
            "id",
            True,
            (
                "worker",
                "worker_id",
                "annotator",
                "annotator_id",
                "judge",
                "coder",
                "rater_id",
                "observer",
            ),
            "who gave the rating (a person or an automatic judge)",
        ),
        Role(
            RATING,
            "rating",
            True,
            ("label", "score", "response", "annotation", "judgement", "judgment"),
            "the rating itself, on the scale declared for its dimension",
        ),
        Role(
            SEGMENT,
            "id",
            False,
            ("sentence", "sentence_id", "segment_id", "span"),
            "part of the item that was rated (a sentence); empty for whole-item ratings",
        ),
        Role(
            DIMENSION,
            "id",
            False,
            ("aspect", "criterion", "criteria", "metric", "question_type"),
            "what was rated (correctness, relevance, safety, ...)",
        ),
        Role(
            DESIGN,
            "id",
            False,
            ("granularity", "condition", "protocol"),
            "annotation design the rating was given under (coarse, fine, ...)",
        ),
        Role(
            SYSTEM, "id", False, ("model", "system_id", "source"), "system that produced the item"
        ),
        Role(
            QUESTION,
            "id",
            False,
            ("question_id", "prompt", "prompt_id", "case", "case_id"),
            "question or case the item answers",
        ),
        Role(
            LENGTH,
            "float",
            False,
            ("n_tokens", "tokens", "num_tokens", "answer_length"),
            "item length (tokens)",
        ),
        Role(GROUP, "id", False, ("rater_group", "batch_group"), "rater group / panel"),
        Role(
            DURATION,
            "float",
            False,
            ("duration", "seconds", "time_s", "time"),
            "seconds the rater spent on the item under this design",
        ),
        Role(CONFIDENCE, "float", False, ("rater_confidence",), "rater's confidence in the rating"),
        Role(
            REPEAT,
            "bool",
            False,
            ("is_repeat", "repeated", "retest"),
            "marks repeated ratings of an item x segment x rater x dimension x design "
            "(intra-rater reliability): boolean markers (true/false, yes/no; empty = not a "
            "repeat) number the marked rows in file order after the unmarked one; a column "
            "of integers is an occurrence index (0, 1, 2 or 1, 2, 3: the smallest of a key "
            "is the first rating); any number of repeats per key",
        ),
        Role(
            GOLD,
            "label",
            False,
            ("gold_label", "truth", "true_label", "reference"),
            "known true rating of a control item",
        ),
        Role(
            RATER_KIND,
            "id",
            False,
            ("rater_type", "annotator_type"),
            "kind of rater: 'human' or 'llm' (any other non-empty kind, e.g. 'crowd', is "
            "kept); read stripped and lower-case",
        ),
    )
}

#: The rater kinds analyses know: human-only analyses (design comparisons, budgets, the
#: ordinal model's pooled raters) keep ``rater_kind == HUMAN``; every other kind, ``LLM``
#: included, is treated as an automatic judge there.
HUMAN = "human"
LLM = "llm"
RATER_KINDS = (HUMAN, LLM)

#: Columns that identify one rating of :attr:`raterstats.Ratings.data`; no two rows share a
#: key (at ingest, two rows that would are duplicates: see ``read_ratings(duplicates=...)``).
KEY = (ITEM, SEGMENT, RATER, DIMENSION, DESIGN, REPEAT_INDEX)

#: Roles that are numeric covariates.
NUMERIC_ROLES = tuple(name for name, r in ROLES.items() if r.kind == "float")

#: Canonical column order of :attr:`raterstats.Ratings.data`.
COLUMN_ORDER = (
    ITEM,
    SEGMENT,
    RATER,
    DIMENSION,
    DESIGN,
    RATING,
    VALUE,
    CODE,
    REPEAT,
    REPEAT_INDEX,
    SYSTEM,
    QUESTION,
    GROUP,
    RATER_KIND,
    LENGTH,
    DURATION,
    CONFIDENCE,
    GOLD,
    ROW,
)


def alias_table() -> dict[str, str]:
    """Map every accepted column name (lower case) to its canonical role.

    Returns
    -------
    dict
        ``{alias: role}``, canonical names included.

    Examples
    --------
    >>> from raterstats.schema import alias_table
    >>> alias_table()["worker"]
    'rater'
    """
    table: dict[str, str] = {}
    for role in ROLES.values():
        table[role.name] = role.name
        for alias in role.aliases:
            table[alias] = role.name
    return table


def role_of_column(name: str) -> tuple[str, bool] | None:
    """The role a column name stands for, and whether it is the role's own name.

    Names are compared stripped and case-insensitively.

    Parameters
    ----------
    name : str
        A column name of the input.

    Returns
    -------
    tuple of (str, bool) or None
        ``(role, True)`` for the canonical name (``Rater``), ``(role, False)`` for an alias
        (``worker``), None for a name that is no role.

    Examples
    --------
    >>> from raterstats.schema import role_of_column
    >>> role_of_column(" Item"), role_of_column("model"), role_of_column("physician1")
    (('item', True), ('system', False), None)
    """
    key = str(name).strip().lower()
    role = alias_table().get(key)
    if role is None:
        return None
    return role, key == role


def normalize_rater_kind(kind: str) -> str:
    """A rater kind as stored: stripped and lower-case (``" Human"`` -> ``"human"``).

    Parameters
    ----------
    kind : str
        The kind as written.

    Returns
    -------
    str

    Examples
    --------
    >>> from raterstats.schema import normalize_rater_kind
    >>> normalize_rater_kind(" LLM ")
    'llm'
    """
    return str(kind).strip().lower()
