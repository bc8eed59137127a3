"""Canonical column roles, their types and the aliases accepted at ingest.

Every analysis in raterstats reads one vocabulary: ``item`` (the rated object, e.g. an
answer), ``segment`` (a sentence within the item), ``rater``, ``rating``, ``dimension``
(correctness, relevance, ...), ``design`` (coarse, fine, ...), ``system``, ``question``,
and the optional covariates below. Column roles are named once, at ingest
(:func:`raterstats.read_ratings`), and never again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import polars as pl

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

#: Optional column of a table made of several rating schemes
#: (:func:`raterstats.design.combine_schemes`): the dimension a row measures, where
#: ``dimension`` names its label space (one dimension on one scale).
BASE_DIMENSION = "base_dimension"

#: Value used for ``dimension`` / ``design`` when the data do not have that column.
DEFAULT_LEVEL = "default"

#: Separator between item and segment in the id of a segment unit (``"<item>::<segment>"``,
#: see :func:`unit_id` for how the parts are escaped).
UNIT_SEP = "::"

#: Separator before the dimension in the id of a latent-class unit
#: (``"<item>::<segment>|<dimension>"``, see :func:`unit_id`).
DIMENSION_SEP = "|"


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


# ------------------------------------------------------------------------------ unit ids

_COLON_RUN = re.compile(r":{2,}|\A:|:\Z")


def _escape_id_part(text: str) -> str:
    """One part of a unit id, escaped (see :func:`unit_id`)."""
    text = str(text).replace("\\", "\\\\").replace(DIMENSION_SEP, "\\" + DIMENSION_SEP)
    return _COLON_RUN.sub(lambda m: m.group(0).replace(":", "\\:"), text)


def unit_id(item: str, segment: str | None = None, *, dimension: str | None = None) -> str:
    r"""The id of a unit: an item, an item's segment (``"<item>::<segment>"``), and for the
    latent-class models also the dimension (``"<item>::<segment>|<dimension>"``).

    The id is different for every different (item, segment, dimension), whatever the ids
    hold, so it can label a unit in an output (an xarray coordinate, a CSV column) and be
    selected by. In each part a backslash is written ``\\``, a ``|`` is written ``\|``, and
    a ``:`` is written ``\:`` where it is next to another ``:`` or at either end of the part;
    every other character is as it is, so ids such as ``q1_a``, ``doc:12`` or
    ``https://x/1`` look unchanged. Then every unescaped ``|`` is the dimension separator
    and the first two unescaped ``::`` in a row are the segment separator. Units are
    *grouped* by their (item, segment) columns, never by this text; use
    :func:`unit_id_expr` for a polars column.

    Parameters
    ----------
    item : str
        The item id.
    segment : str, optional
        The segment id; None for a whole-item unit (an empty segment is a segment).
    dimension : str, optional
        The dimension, for units that are (item, segment, dimension) triples.

    Returns
    -------
    str

    Examples
    --------
    >>> unit_id("a"), unit_id("a", "s1"), unit_id("a", "s1", dimension="safety")
    ('a', 'a::s1', 'a::s1|safety')
    >>> unit_id("a::b", "c"), unit_id("a", "b::c")
    ('a\\:\\:b::c', 'a::b\\:\\:c')
    >>> unit_id("doc:12"), unit_id("x|y"), unit_id("C:\\tmp")
    ('doc:12', 'x\\|y', 'C:\\\\tmp')
    """
    out = _escape_id_part(item)
    if segment is not None:
        out += UNIT_SEP + _escape_id_part(segment)
    if dimension is not None:
        out += DIMENSION_SEP + _escape_id_part(dimension)
    return out


def _escape_id_expr(part: pl.Expr) -> pl.Expr:
    """:func:`_escape_id_part` as a polars expression (no look-around in polars' regex:
    runs of colons are escaped pairwise, then the odd one left; then a colon at the start
    and an unescaped colon at the end, i.e. after an even run of backslashes)."""
    s = part.cast(pl.String).str
    e = s.replace_all("\\", "\\\\", literal=True).str.replace_all("|", "\\|", literal=True)
    e = e.str.replace_all("::", "\\:\\:", literal=True).str.replace_all(
        "\\::", "\\:\\:", literal=True
    )
    e = e.str.replace(r"^:", r"\:")
    return e.str.replace(r"(^|[^\\])((?:\\\\)*):$", r"${1}${2}\:")


def unit_id_expr(
    item: str | pl.Expr = ITEM,
    segment: str | pl.Expr | None = SEGMENT,
    *,
    dimension: str | pl.Expr | None = None,
) -> pl.Expr:
    r""":func:`unit_id` of every row as a polars expression (named ``unit``): a null
    segment makes a whole-item unit.

    Parameters
    ----------
    item, segment, dimension : str or pl.Expr, optional
        Columns (names or expressions) of the item, segment (None: whole-item units only)
        and dimension (None: no dimension part).

    Returns
    -------
    pl.Expr

    Examples
    --------
    >>> df = pl.DataFrame({"item": ["a", "a::b", "a", "doc:1"],
    ...                    "segment": [None, "c", "b::c", "x:"]})
    >>> df.select(unit_id_expr()).to_series().to_list()
    ['a', 'a\\:\\:b::c', 'a::b\\:\\:c', 'doc:1::x\\:']
    """
    out = _escape_id_expr(pl.col(item) if isinstance(item, str) else item)
    if segment is not None:
        seg = pl.col(segment) if isinstance(segment, str) else segment
        out = (
            pl.when(seg.is_null())
            .then(out)
            .otherwise(pl.concat_str([out, pl.lit(UNIT_SEP), _escape_id_expr(seg)]))
        )
    if dimension is not None:
        dim = pl.col(dimension) if isinstance(dimension, str) else dimension
        out = pl.concat_str([out, pl.lit(DIMENSION_SEP), _escape_id_expr(dim)])
    return out.alias("unit")
