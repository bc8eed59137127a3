"""Rating scales, scale maps and segment-to-item rules.

A scale says which ratings are valid and how they are coded:

* :class:`OrdinalScale` — ordered levels (a 5-point Likert scale, a collapsed 3-point scale);
* :class:`NominalScale` — unordered categories (yes / partially / no; supports / refutes);
* :class:`IntervalScale` — numbers on a continuum, optionally bounded.

Every valid rating gets a numeric ``value`` (the level itself when the levels are numbers,
otherwise its 0-based position) and, for ordinal and nominal scales, a 0-based ``code``.

Maps change a scale: :class:`Collapse` merges levels (5-point to 3-point Likert),
:class:`ScoreMap` turns labels into numbers (yes = 1, partially = 0.5, no = 0), and a
:class:`SegmentRule` turns the ratings of an item's sentences into one item-level rating
("any sentence rated negative -> 0, else 1", the *fine binary* scheme of clinical-QA studies).
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import polars as pl

Level = str | int | float

LIKERT5_LABELS = ("Disagree", "Partially disagree", "Neutral", "Partially agree", "Agree")


def format_level(level: Level) -> str:
    """Canonical text of a level: ``4`` for 4 and 4.0, ``0.5`` for 0.5, labels unchanged.

    Examples
    --------
    >>> format_level(4.0), format_level(0.5), format_level("yes")
    ('4', '0.5', 'yes')
    """
    if isinstance(level, bool):
        raise TypeError("a boolean is not a scale level; use 0/1 or labels")
    if isinstance(level, int | np.integer):
        return str(int(level))
    if isinstance(level, float | np.floating):
        f = float(level)
        if math.isfinite(f) and f.is_integer():
            return str(int(f))
        return repr(f)
    return str(level)


def _is_number(level: object) -> bool:
    return isinstance(level, int | float | np.integer | np.floating) and not isinstance(level, bool)


def _parse_float(text: pl.Series) -> pl.Series:
    return text.str.strip_chars().cast(pl.Float64, strict=False)


@dataclass(frozen=True)
class Encoded:
    """A column of raw ratings encoded on a scale (all three columns have the input's length).

    ``invalid`` is true where a non-missing raw value is not on the scale.
    """

    rating: pl.Series
    value: pl.Series
    code: pl.Series
    invalid: pl.Series


class Scale(ABC):
    """Base class of rating scales. Use :class:`OrdinalScale`, :class:`NominalScale` or
    :class:`IntervalScale`."""

    kind: ClassVar[str] = "scale"
    name: str | None

    @property
    def levels(self) -> tuple[Level, ...]:
        """The declared levels, in order (empty for an interval scale)."""
        return ()

    @property
    def values(self) -> np.ndarray:
        """Numeric value of each level (the level itself when numeric, else its position)."""
        return np.zeros(0)

    @property
    def n_levels(self) -> int:
        """Number of declared levels (0 for an interval scale)."""
        return len(self.levels)

    @abstractmethod
    def expected(self) -> str:
        """Human description of what a valid rating looks like (used in error messages)."""

    @abstractmethod
    def encode(self, raw: pl.Series) -> Encoded:
        """Encode raw ratings (read as text or numbers) on this scale."""

    @abstractmethod
    def describe(self) -> dict[str, object]:
        """A JSON-serialisable description of the scale (stored in fit attributes)."""


@dataclass(frozen=True)
class CategoricalScale(Scale):
    """Shared implementation of ordinal and nominal scales."""

    levels_: tuple[Level, ...]
    labels: tuple[str, ...] | None = None
    name: str | None = None
    _lookup: dict[str, int] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        levels: Iterable[Level],
        labels: Iterable[str] | None = None,
        *,
        name: str | None = None,
    ) -> None:
        lv = tuple(levels)
        if len(lv) < 2:
            raise ValueError(f"a {self.kind} scale needs at least two levels, got {lv!r}")
        if any(isinstance(v, bool) for v in lv):
            raise TypeError("booleans are not scale levels; use 0/1 or labels")
        numeric = [_is_number(v) for v in lv]
        if any(numeric) and not all(numeric):
            raise TypeError(f"levels mix numbers and labels: {lv!r}")
        canon = [format_level(v) for v in lv]
        if len(set(canon)) != len(canon):
            raise ValueError(f"levels are not distinct: {lv!r}")
        if all(numeric):
            lv = tuple(float(v) if not float(v).is_integer() else int(v) for v in lv)
        lab = None if labels is None else tuple(str(x) for x in labels)
        if lab is not None and len(lab) != len(lv):
            raise ValueError(f"{len(lab)} labels given for {len(lv)} levels")
        object.__setattr__(self, "levels_", lv)
        object.__setattr__(self, "labels", lab)
        object.__setattr__(self, "name", name)
        lookup: dict[str, int] = {}
        for i, c in enumerate(canon):
            lookup[c] = i
        if lab is not None:
            for i, text in enumerate(lab):
                if text in lookup and lookup[text] != i:
                    raise ValueError(f"label {text!r} is also the text of another level")
                lookup[text] = i
        object.__setattr__(self, "_lookup", lookup)

    @property
    def levels(self) -> tuple[Level, ...]:
        return self.levels_

    @property
    def numeric(self) -> bool:
        """True when the levels are numbers."""
        return _is_number(self.levels_[0])

    @property
    def values(self) -> np.ndarray:
        if self.numeric:
            return np.asarray(self.levels_, dtype=float)
        return np.arange(len(self.levels_), dtype=float)

    def code_of(self, level: Level) -> int:
        """0-based code of a level (its text, number or label).

        Examples
        --------
        >>> OrdinalScale.likert(5).code_of("Agree")
        4
        """
        key = format_level(level) if _is_number(level) else str(level)
        try:
            return self._lookup[key]
        except KeyError:
            raise KeyError(f"{level!r} is not a level of {self!r}") from None

    def expected(self) -> str:
        shown = ", ".join(format_level(v) for v in self.levels_)
        text = f"one of {{{shown}}}"
        if self.labels is not None:
            text += " (or the labels " + ", ".join(repr(x) for x in self.labels) + ")"
        return text

    def encode(self, raw: pl.Series) -> Encoded:
        n = raw.len()
        text = raw.str.strip_chars() if raw.dtype == pl.String else raw.cast(pl.String)
        codes: pl.Series
        if self.numeric:
            as_float = _parse_float(text) if text.dtype == pl.String else raw.cast(pl.Float64)
            num_map = {float(v): i for i, v in enumerate(self.levels_)}
            by_number = as_float.replace_strict(num_map, default=None, return_dtype=pl.Int32)
            by_label = text.replace_strict(self._lookup, default=None, return_dtype=pl.Int32)
            codes = by_number.fill_null(by_label)
        else:
            codes = text.replace_strict(self._lookup, default=None, return_dtype=pl.Int32)
        canon = pl.Series([format_level(v) for v in self.levels_], dtype=pl.String)
        vals = pl.Series(self.values.tolist(), dtype=pl.Float64)
        idx = codes.cast(pl.Int64)
        rating = canon.gather(idx) if n else pl.Series([], dtype=pl.String)
        value = vals.gather(idx) if n else pl.Series([], dtype=pl.Float64)
        invalid = text.is_not_null() & codes.is_null()
        return Encoded(
            rating=rating.alias("rating"),
            value=value.alias("value"),
            code=codes.alias("code"),
            invalid=invalid.alias("invalid"),
        )

    def describe(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "levels": list(self.levels_),
            "labels": None if self.labels is None else list(self.labels),
            "name": self.name,
        }

    def __repr__(self) -> str:
        lab = "" if self.labels is None else f", labels={list(self.labels)!r}"
        nm = "" if self.name is None else f", name={self.name!r}"
        return f"{type(self).__name__}({list(self.levels_)!r}{lab}{nm})"


class OrdinalScale(CategoricalScale):
    """Ordered levels, e.g. a 5-point Likert scale.

    Parameters
    ----------
    levels : sequence of int, float or str
        The levels from lowest to highest.
    labels : sequence of str, optional
        Display labels; raw ratings may be given as levels or as labels.
    name : str, optional
        A name shown in summaries.

    Examples
    --------
    >>> from raterstats import OrdinalScale
    >>> s = OrdinalScale.likert(5)
    >>> s.levels
    (1, 2, 3, 4, 5)
    >>> s.negative_levels(), s.positive_levels()
    ((1, 2), (4, 5))
    """

    kind: ClassVar[str] = "ordinal"

    @classmethod
    def likert(cls, k: int = 5, labels: Sequence[str] | None = None) -> OrdinalScale:
        """A ``k``-point Likert scale with levels ``1..k``.

        The 5-point default labels are Disagree, Partially disagree, Neutral, Partially agree,
        Agree (the wording of the clinical-QA studies).
        """
        if labels is None and k == 5:
            labels = LIKERT5_LABELS
        return cls(range(1, k + 1), labels, name=f"likert{k}")

    def _midpoint(self) -> float:
        v = self.values
        return float(v.min() + v.max()) / 2.0

    def negative_levels(self) -> tuple[Level, ...]:
        """Levels below the scale's midpoint (e.g. 1, 2 on 1-5; -1 on -1/0/1)."""
        mid = self._midpoint()
        return tuple(lv for lv, v in zip(self.levels_, self.values, strict=True) if v < mid)

    def positive_levels(self) -> tuple[Level, ...]:
        """Levels above the scale's midpoint (e.g. 4, 5 on 1-5; +1 on -1/0/1)."""
        mid = self._midpoint()
        return tuple(lv for lv, v in zip(self.levels_, self.values, strict=True) if v > mid)


class NominalScale(CategoricalScale):
    """Unordered categories, e.g. ``yes / partially / no``.

    Examples
    --------
    >>> from raterstats import NominalScale
    >>> NominalScale(["yes", "partially", "no"]).values
    array([0., 1., 2.])
    """

    kind: ClassVar[str] = "nominal"


@dataclass(frozen=True, repr=False)
class IntervalScale(Scale):
    """Numeric ratings on a continuum, optionally bounded (inclusive).

    Examples
    --------
    >>> from raterstats import IntervalScale
    >>> IntervalScale(0, 100).expected()
    'a number in [0, 100]'
    """

    low: float | None = None
    high: float | None = None
    name: str | None = None
    kind: ClassVar[str] = "interval"

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"IntervalScale: low={self.low} is above high={self.high}")

    def expected(self) -> str:
        lo = "-inf" if self.low is None else format_level(self.low)
        hi = "inf" if self.high is None else format_level(self.high)
        if self.low is None and self.high is None:
            return "a number"
        return f"a number in [{lo}, {hi}]"

    def encode(self, raw: pl.Series) -> Encoded:
        if raw.dtype == pl.String:
            value = _parse_float(raw)
            present = raw.str.strip_chars().is_not_null()
        else:
            value = raw.cast(pl.Float64, strict=False)
            present = raw.is_not_null()
        ok = value.is_not_null() & value.is_finite()
        if self.low is not None:
            ok = ok & (value >= self.low)
        if self.high is not None:
            ok = ok & (value <= self.high)
        value = pl.select(pl.when(ok).then(value).otherwise(None)).to_series()
        rating = pl.Series(
            [None if v is None else format_level(v) for v in value.to_list()], dtype=pl.String
        )
        return Encoded(
            rating=rating.alias("rating"),
            value=value.alias("value"),
            code=pl.Series([None] * raw.len(), dtype=pl.Int32).alias("code"),
            invalid=(present & ~ok).fill_null(True).alias("invalid"),
        )

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "low": self.low, "high": self.high, "name": self.name}

    def __repr__(self) -> str:
        return f"IntervalScale(low={self.low!r}, high={self.high!r})"


#: :func:`infer_scale` infers a numeric scale when more than this share of the non-empty
#: ratings are finite numbers (the rest are then ratings off the scale, reported at ingest).
NUMERIC_BULK = 0.5

_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]*,[0-9]+")


def number_hint(token: str) -> str:
    """How a rating that is not a number was probably meant, or ``""``.

    A decimal comma (``4,0``) and non-ASCII digits (``３``) are the usual slips of a
    spreadsheet export; the hint says what to write instead.

    Parameters
    ----------
    token : str
        The rating as written.

    Returns
    -------
    str
        The hint, or an empty string when the token does not look like a number.

    Examples
    --------
    >>> number_hint("4,0")
    "'4,0' has a decimal comma: write 4.0"
    >>> number_hint("yes")
    ''
    """
    t = str(token).strip()
    if _DECIMAL_COMMA.fullmatch(t):
        return f"{token!r} has a decimal comma: write {t.replace(',', '.')}"
    if t and not t.isascii():
        try:
            f = float(t)
        except ValueError:
            return ""
        if math.isfinite(f):
            return f"{token!r} has non-ASCII digits: write {format_level(f)}"
    return ""


def infer_scale(raw: pl.Series) -> Scale:
    """Infer a scale from raw ratings.

    Numbers are read as numbers, however written (``3``, ``3.0``, `` 3 ``, ``+3``,
    ``03`` and ``3.00`` are the one level 3, as on a declared scale). When more than half
    of the non-empty ratings (:data:`NUMERIC_BULK`) are finite numbers, the scale is
    numeric: integers with 2 to 11 distinct values give an :class:`OrdinalScale` of the
    observed values, other numbers an :class:`IntervalScale`; the ratings that are not
    numbers (``4,0``, ``n/a``) are then not on the scale, and
    :func:`~raterstats.read_ratings` reports each of them instead of switching to labels.
    Otherwise the ratings are labels: a :class:`NominalScale` of the observed labels
    (sorted, as written).

    Parameters
    ----------
    raw : pl.Series
        The ratings (text or numbers); nulls and empty strings are ignored.

    Returns
    -------
    Scale

    Raises
    ------
    ValueError
        When fewer than two distinct ratings are present (no scale can be inferred), or
        when labels include one number written two ways (``1`` and ``1.0``).

    Examples
    --------
    >>> import polars as pl
    >>> infer_scale(pl.Series(["1", "3", "5", "3.0", " 3", "4,0"]))
    OrdinalScale([1, 3, 5])
    >>> infer_scale(pl.Series(["yes", "partially", "no"]))
    NominalScale(['no', 'partially', 'yes'])
    """
    text = raw.cast(pl.String).str.strip_chars().drop_nulls()
    text = text.filter(text != "")
    if text.len() == 0:
        raise ValueError("no ratings to infer a scale from")
    as_float = text.cast(pl.Float64, strict=False)
    finite = (as_float.is_not_null() & as_float.is_finite()).fill_null(False)
    if int(finite.sum()) > NUMERIC_BULK * text.len():
        distinct = sorted(set(as_float.filter(finite).to_list()))
        if all(float(v).is_integer() for v in distinct) and 2 <= len(distinct) <= 11:
            return OrdinalScale([int(v) for v in distinct])
        return IntervalScale()
    labels = sorted(set(text.to_list()))
    spellings: dict[float, list[str]] = {}
    for label, number in zip(labels, _parse_float(pl.Series(labels)).to_list(), strict=True):
        if number is not None and math.isfinite(number):
            spellings.setdefault(number, []).append(label)
    same = [v for v in spellings.values() if len(v) > 1]
    if same:
        raise ValueError(
            f"the ratings are mostly labels, and {same[0]} are one number written "
            "differently; declare the scale (e.g. scale=NominalScale([...]) with one "
            "spelling, after correcting the data)"
        )
    if len(labels) < 2:
        raise ValueError(f"only one distinct rating ({labels[0]!r}); declare the scale")
    return NominalScale(labels)


# --------------------------------------------------------------------------- scale maps


@dataclass(frozen=True)
class Collapse:
    """Merge the levels of a categorical scale into the levels of another.

    Parameters
    ----------
    mapping : mapping
        Old level (or its label) -> new level. Every old level must be mapped.
    target : OrdinalScale or NominalScale
        The scale of the new levels.
    name : str
        Name used in summaries.

    Examples
    --------
    >>> from raterstats.scales import LIKERT5_TO_3
    >>> LIKERT5_TO_3.mapping[2], LIKERT5_TO_3.mapping[4]
    (-1, 1)
    """

    mapping: Mapping[Hashable, Level]
    target: CategoricalScale
    name: str = "collapse"

    def codes_for(self, source: Scale) -> list[int]:
        """New code for every code of ``source`` (raises if a level is unmapped)."""
        if not isinstance(source, CategoricalScale):
            raise TypeError(f"{self.name}: can only collapse a categorical scale, not {source!r}")
        targets = _per_level(self.mapping, source, self.name, "no target; map every level")
        return [self.target.code_of(t) for t in targets]


def _key_text(key: Hashable) -> str:
    return format_level(key) if _is_number(key) else str(key)  # type: ignore[arg-type]


def _per_level(
    mapping: Mapping[Hashable, Any], source: CategoricalScale, name: str, missing_msg: str
) -> list[Any]:
    """The mapping's value for each level of ``source`` (keys: levels, their text or labels)."""
    by_text = {_key_text(k): v for k, v in mapping.items()}
    out: list[Any] = []
    missing = []
    for i, lv in enumerate(source.levels):
        keys = [format_level(lv)]
        if source.labels is not None:
            keys.append(source.labels[i])
        hit = next((by_text[k] for k in keys if k in by_text), _MISSING)
        if hit is _MISSING:
            missing.append(format_level(lv))
        out.append(hit)
    if missing:
        raise ValueError(f"{name}: levels {missing} of {source!r} have {missing_msg}")
    return out


_MISSING = object()


@dataclass(frozen=True)
class ScoreMap:
    """Turn categorical ratings into numeric scores (yes = 1, partially = 0.5, no = 0).

    Examples
    --------
    >>> from raterstats.scales import YES_PARTIALLY_NO
    >>> YES_PARTIALLY_NO.target.low, YES_PARTIALLY_NO.target.high
    (0.0, 1.0)
    """

    mapping: Mapping[Hashable, float]
    name: str = "score"

    @property
    def target(self) -> IntervalScale:
        """The interval scale spanned by the scores."""
        vals = [float(v) for v in self.mapping.values()]
        return IntervalScale(min(vals), max(vals), name=self.name)

    def scores_for(self, source: Scale) -> list[float]:
        """Score for every code of ``source`` (raises if a level has no score)."""
        if not isinstance(source, CategoricalScale):
            raise TypeError(f"{self.name}: can only score a categorical scale, not {source!r}")
        return [float(v) for v in _per_level(self.mapping, source, self.name, "no score")]


#: 5-point Likert to 3 points: Disagree / Partially disagree -> -1, Neutral -> 0,
#: Partially agree / Agree -> +1.
LIKERT5_TO_3 = Collapse(
    {1: -1, 2: -1, 3: 0, 4: 1, 5: 1},
    OrdinalScale([-1, 0, 1], ["disagree", "neutral", "agree"], name="likert3"),
    name="likert5_to_3",
)
#: yes = 1, partially = 0.5, no = 0.
YES_PARTIALLY_NO = ScoreMap({"yes": 1.0, "partially": 0.5, "no": 0.0}, name="yes_partially_no")
#: yes = 1, no = 0, refutes = -1.
YES_NO_REFUTES = ScoreMap({"yes": 1.0, "no": 0.0, "refutes": -1.0}, name="yes_no_refutes")

COLLAPSES: dict[str, Collapse] = {LIKERT5_TO_3.name: LIKERT5_TO_3}
SCORE_MAPS: dict[str, ScoreMap] = {m.name: m for m in (YES_PARTIALLY_NO, YES_NO_REFUTES)}


# --------------------------------------------------------------------------- segment rules

RuleKind = Literal["any_negative", "any_positive", "mean", "min", "max"]

BINARY = OrdinalScale([0, 1], ["no", "yes"], name="binary")


@dataclass(frozen=True)
class SegmentRule:
    """How the ratings of an item's segments (sentences) become one item-level rating.

    ``any_negative``: 0 if any segment is rated negative, else 1 (e.g. "an answer is correct
    only if no sentence is incorrect"). ``any_positive``: 1 if at least one segment is rated
    positive, else 0 (e.g. "the answer communicates risks if one sentence does").
    ``mean`` / ``min`` / ``max`` aggregate the numeric values. Negative / positive default
    to the levels below / above the midpoint of an ordinal scale (1-2 and 4-5 on a
    5-point Likert scale) and can be given explicitly.

    Examples
    --------
    >>> from raterstats.scales import SEGMENT_RULES
    >>> SEGMENT_RULES["any_negative"].kind
    'any_negative'
    """

    kind: RuleKind
    negative: tuple[Level, ...] | None = None
    positive: tuple[Level, ...] | None = None

    @property
    def name(self) -> str:
        """Rule name."""
        return self.kind

    def target_scale(self, source: Scale) -> Scale:
        """The scale of the item-level ratings the rule produces."""
        if self.kind in ("any_negative", "any_positive"):
            return BINARY
        if self.kind == "mean":
            v = source.values
            if isinstance(source, IntervalScale):
                return IntervalScale(source.low, source.high, name="mean")
            if isinstance(source, NominalScale):
                raise TypeError("the mean of nominal ratings is not defined")
            return IntervalScale(float(v.min()), float(v.max()), name="mean")
        if isinstance(source, NominalScale):
            raise TypeError(f"{self.kind} of nominal ratings is not defined")
        return source

    def flagged_codes(self, source: Scale) -> list[int]:
        """Codes counted as negative (``any_negative``) or positive (``any_positive``)."""
        if not isinstance(source, CategoricalScale):
            raise TypeError(f"rule {self.kind} needs a categorical scale, got {source!r}")
        if self.kind == "any_negative":
            chosen = self.negative
            if chosen is None:
                if not isinstance(source, OrdinalScale):
                    raise TypeError("give `negative=` levels for a nominal scale")
                chosen = source.negative_levels()
        else:
            chosen = self.positive
            if chosen is None:
                if not isinstance(source, OrdinalScale):
                    raise TypeError("give `positive=` levels for a nominal scale")
                chosen = source.positive_levels()
        return [source.code_of(lv) for lv in chosen]


_RULE_KINDS: tuple[RuleKind, ...] = ("any_negative", "any_positive", "mean", "min", "max")
SEGMENT_RULES: dict[str, SegmentRule] = {k: SegmentRule(k) for k in _RULE_KINDS}


def scale_text(scale: Scale) -> str:
    """A scale as a person writes it (for reports and summaries), not its Python form.

    Examples
    --------
    >>> print(scale_text(OrdinalScale.likert(5)))  # doctest: +NORMALIZE_WHITESPACE
    ordinal, 5 levels (likert5): 1 Disagree < 2 Partially disagree < 3 Neutral
    < 4 Partially agree < 5 Agree
    >>> scale_text(NominalScale(["yes", "no"])), scale_text(IntervalScale(0, 100))
    ('nominal, 2 categories: yes, no', 'interval: a number in [0, 100]')
    """
    if isinstance(scale, CategoricalScale):
        labels = scale.labels or (None,) * scale.n_levels
        shown = [
            format_level(lv) + (f" {lab}" if lab and lab != format_level(lv) else "")
            for lv, lab in zip(scale.levels, labels, strict=True)
        ]
        named = f" ({scale.name})" if scale.name else ""
        if isinstance(scale, OrdinalScale):
            return f"ordinal, {scale.n_levels} levels{named}: " + " < ".join(shown)
        return f"nominal, {scale.n_levels} categories{named}: " + ", ".join(shown)
    return f"{scale.kind}: {scale.expected()}"
