"""The :class:`Ratings` container: a validated table of ratings, its scales and its history.

Every analysis in raterstats takes a :class:`Ratings`. It is made by
:func:`raterstats.read_ratings` (or a simulator), never mutated, and every method that
changes the data (filters, exclusions, scale maps, segment aggregation) returns a new
:class:`Ratings` that remembers what was done, so :meth:`Ratings.summary` can report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.formatting import markdown_table
from raterstats.scales import (
    COLLAPSES,
    SCORE_MAPS,
    SEGMENT_RULES,
    CategoricalScale,
    Collapse,
    Scale,
    ScoreMap,
    SegmentRule,
    format_level,
)

Level = Literal["item", "segment"]
Values = Literal["value", "code", "rating"]
Repeats = Literal["exclude", "only", "include"]

_UNIT_SEP = "::"


@dataclass(frozen=True)
class Exclusion:
    """Rows removed at the user's request (or by an explicit ingest option), with the count."""

    reason: str
    n_rows: int

    def __str__(self) -> str:
        return f"{self.n_rows} rating(s) excluded: {self.reason}"


@dataclass(frozen=True)
class _Meta:
    source: str | None = None
    exclusions: tuple[Exclusion, ...] = ()
    steps: tuple[str, ...] = ()
    ignored_columns: tuple[str, ...] = ()
    inferred_scales: tuple[str, ...] = ()
    extra_columns: tuple[str, ...] = ()


def _as_list(v: Any) -> list[Any]:
    if isinstance(v, str) or not isinstance(v, Iterable):
        return [v]
    return list(v)


class Ratings:
    """A validated table of ratings with one scale per dimension.

    Build it with :func:`raterstats.read_ratings`; the constructor takes an already
    canonical frame and checks its invariants.

    The frame (:attr:`data`) has one row per rating and the canonical columns of
    :mod:`raterstats.schema`: ``item``, ``segment`` (null for whole-item ratings), ``rater``,
    ``dimension``, ``design``, ``rating`` (the level's canonical text), ``value`` (its
    numeric value), ``code`` (0-based level index; null on interval scales), ``repeat``,
    ``source_row`` (1-based row in the source), and any optional roles present
    (``system``, ``question``, ``group``, ``rater_kind``, ``length``, ``duration_s``,
    ``confidence``, ``gold``).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a", "b", "b"],
    ...                                "rater": ["x", "y", "x", "y"],
    ...                                "rating": [1, 2, 2, 2]}))
    >>> r.n_ratings, r.raters
    (4, ('x', 'y'))
    >>> r.to_matrix().values
    array([[1., 2.],
           [2., 2.]])
    """

    __slots__ = ("_data", "_meta", "_scales")

    def __init__(
        self,
        data: pl.DataFrame,
        scales: Mapping[str, Scale],
        *,
        _meta: _Meta | None = None,
    ) -> None:
        missing = [
            c
            for c in (
                S.ITEM,
                S.SEGMENT,
                S.RATER,
                S.DIMENSION,
                S.DESIGN,
                S.RATING,
                S.VALUE,
                S.CODE,
                S.REPEAT,
                S.ROW,
            )
            if c not in data.columns
        ]
        if missing:
            raise ValueError(f"Ratings: canonical columns missing: {missing}; use read_ratings()")
        dims = set(data.get_column(S.DIMENSION).unique().to_list())
        no_scale = sorted(d for d in dims if d not in scales)
        if no_scale:
            raise ValueError(f"Ratings: no scale for dimension(s) {no_scale}")
        for col in (S.ITEM, S.RATER, S.DIMENSION, S.DESIGN):
            if data.get_column(col).null_count():
                raise ValueError(f"Ratings: column {col!r} has nulls")
        ordered = [c for c in S.COLUMN_ORDER if c in data.columns]
        ordered += [c for c in data.columns if c not in ordered]
        self._data = data.select(ordered)
        self._scales = {d: scales[d] for d in sorted(dims)} if dims else dict(scales)
        self._meta = _meta or _Meta()

    # ------------------------------------------------------------------ basic views

    @property
    def data(self) -> pl.DataFrame:
        """The canonical polars frame, one row per rating (read-only by convention)."""
        return self._data

    @property
    def scales(self) -> dict[str, Scale]:
        """Scale of each dimension."""
        return dict(self._scales)

    def scale_for(self, dimension: str) -> Scale:
        """The scale of one dimension.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> clinical_qa_study(n_questions=4, random_seed=1).ratings.scale_for("safety").levels
        (1, 2, 3, 4, 5)
        """
        try:
            return self._scales[dimension]
        except KeyError:
            raise KeyError(
                f"no dimension {dimension!r}; dimensions are {list(self._scales)}"
            ) from None

    @property
    def source(self) -> str | None:
        """File or frame the ratings were read from."""
        return self._meta.source

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        """Every exclusion made so far, with counts."""
        return self._meta.exclusions

    @property
    def steps(self) -> tuple[str, ...]:
        """The transformations applied since ingest (filters, maps, aggregations)."""
        return self._meta.steps

    def _unique(self, col: str) -> tuple[Any, ...]:
        if col not in self._data.columns:
            return ()
        return tuple(sorted(self._data.get_column(col).drop_nulls().unique().to_list()))

    @property
    def n_ratings(self) -> int:
        """Number of ratings (rows)."""
        return self._data.height

    def __len__(self) -> int:
        return self._data.height

    @property
    def items(self) -> tuple[str, ...]:
        """Item ids, sorted."""
        return self._unique(S.ITEM)

    @property
    def raters(self) -> tuple[str, ...]:
        """Rater ids, sorted."""
        return self._unique(S.RATER)

    @property
    def dimensions(self) -> tuple[str, ...]:
        """Dimensions present, sorted."""
        return self._unique(S.DIMENSION)

    @property
    def designs(self) -> tuple[str, ...]:
        """Designs present, sorted."""
        return self._unique(S.DESIGN)

    @property
    def systems(self) -> tuple[str, ...]:
        """Systems present (empty when the data have no ``system`` column)."""
        return self._unique(S.SYSTEM)

    @property
    def has_segments(self) -> bool:
        """True when some ratings are of segments (sentences)."""
        return self._data.get_column(S.SEGMENT).null_count() < self._data.height

    def __repr__(self) -> str:
        return (
            f"<Ratings: {self.n_ratings} ratings, {len(self.items)} items, "
            f"{len(self.raters)} raters, dimensions={list(self.dimensions)}, "
            f"designs={list(self.designs)}>"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ratings):
            return NotImplemented
        return self._scales == other._scales and self._data.equals(other._data)

    __hash__ = None  # type: ignore[assignment]

    def derive(
        self,
        data: pl.DataFrame,
        *,
        step: str,
        scales: Mapping[str, Scale] | None = None,
        exclusion: Exclusion | None = None,
    ) -> Ratings:
        """A new :class:`Ratings` holding ``data`` (already validated, in this table's
        columns), with ``step`` appended to the processing history and ``exclusion``, if
        any, to the counted exclusions; the scales are this table's unless ``scales``
        replaces some. For code that builds a changed table from this one (subsampling,
        collapsing): the history shows how every table was made."""
        meta = replace(
            self._meta,
            steps=(*self._meta.steps, step),
            exclusions=self._meta.exclusions + ((exclusion,) if exclusion else ()),
        )
        sc = dict(self._scales if scales is None else scales)
        present = set(data.get_column(S.DIMENSION).unique().to_list())
        sc = {d: s for d, s in sc.items() if d in present} or sc
        return Ratings(data, sc, _meta=meta)

    # ------------------------------------------------------------------ selection

    _FILTERABLE = (
        S.ITEM,
        S.SEGMENT,
        S.RATER,
        S.DIMENSION,
        S.DESIGN,
        S.SYSTEM,
        S.QUESTION,
        S.GROUP,
        S.RATER_KIND,
        S.REPEAT,
    )

    def _mask(self, filters: Mapping[str, Any]) -> pl.Expr:
        expr = pl.lit(True)
        for col, wanted in filters.items():
            if wanted is None:
                continue
            if col not in self._FILTERABLE:
                raise TypeError(f"cannot filter on {col!r}; filterable: {list(self._FILTERABLE)}")
            if col not in self._data.columns:
                raise KeyError(f"the ratings have no {col!r} column")
            vals = _as_list(wanted)
            present = set(self._data.get_column(col).unique().to_list())
            unknown = [v for v in vals if v not in present]
            if unknown:
                shown = sorted(map(str, present))[:20]
                raise KeyError(f"{col} {unknown} not in the ratings; present: {shown}")
            expr = expr & pl.col(col).is_in(vals)
        return expr

    def filter(self, **filters: Any) -> Ratings:
        """Select ratings by ``dimension``, ``design``, ``group``, ``system``, ``rater``,
        ``item``, ``question``, ``segment``, ``rater_kind`` or ``repeat`` (a value or a list).

        Selecting is not excluding: use :meth:`exclude` to remove data for a reason that the
        summary should report.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> r.filter(dimension="safety", design="coarse").dimensions
        ('safety',)
        """
        data = self._data.filter(self._mask(filters))
        desc = ", ".join(f"{k}={v!r}" for k, v in filters.items() if v is not None)
        return self.derive(data, step=f"filter({desc})")

    def exclude(self, *, reason: str, **filters: Any) -> Ratings:
        """Remove the ratings matching ``filters``, recording ``reason`` and the count.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> r2 = r.exclude(rater="llm-judge", reason="automatic judge analysed apart")
        >>> r2.exclusions[0].reason
        'automatic judge analysed apart'
        """
        if not filters:
            raise TypeError("exclude() needs at least one filter, e.g. rater='r7'")
        mask = self._mask(filters)
        n = int(self._data.select(mask.sum()).item())
        data = self._data.filter(~mask)
        return self.derive(data, step=f"exclude({reason})", exclusion=Exclusion(reason, n))

    def _dims_arg(self, dimensions: str | Sequence[str] | None) -> list[str]:
        if dimensions is None:
            return list(self.dimensions)
        dims = _as_list(dimensions)
        unknown = [d for d in dims if d not in self._scales]
        if unknown:
            raise KeyError(f"dimensions {unknown} not in the ratings {list(self.dimensions)}")
        return dims

    # ------------------------------------------------------------------ scale maps

    def collapse(
        self, collapse: Collapse | str, *, dimensions: str | Sequence[str] | None = None
    ) -> Ratings:
        """Merge scale levels, e.g. 5-point Likert to 3 points (``"likert5_to_3"``).

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> r.collapse("likert5_to_3").scale_for("correctness").levels
        (-1, 0, 1)
        """
        col = COLLAPSES[collapse] if isinstance(collapse, str) else collapse
        data = self._data
        scales = dict(self._scales)
        target = col.target
        canon = [format_level(v) for v in target.levels]
        for dim in self._dims_arg(dimensions):
            new_codes = col.codes_for(self._scales[dim])
            data = _apply_code_map(data, dim, new_codes, canon, target.values.tolist())
            data = _map_gold(data, dim, self._scales[dim], new_codes, canon)
            scales[dim] = target
        return self.derive(data, step=f"collapse({col.name})", scales=scales)

    def score(
        self, score_map: ScoreMap | str, *, dimensions: str | Sequence[str] | None = None
    ) -> Ratings:
        """Turn categorical ratings into numeric scores (``"yes_partially_no"``: yes = 1,
        partially = 0.5, no = 0). The result is on an :class:`~raterstats.IntervalScale`.

        Examples
        --------
        >>> import polars as pl
        >>> from raterstats import read_ratings, NominalScale
        >>> r = read_ratings(pl.DataFrame({"item": ["a", "a"], "rater": ["x", "y"],
        ...                                "rating": ["yes", "partially"]}),
        ...                  scale=NominalScale(["yes", "partially", "no"]))
        >>> r.score("yes_partially_no").data["value"].to_list()
        [1.0, 0.5]
        """
        sm = SCORE_MAPS[score_map] if isinstance(score_map, str) else score_map
        data = self._data
        scales = dict(self._scales)
        for dim in self._dims_arg(dimensions):
            scores = sm.scores_for(self._scales[dim])
            canon = [format_level(v) for v in scores]
            data = _apply_code_map(
                data, dim, list(range(len(scores))), canon, scores, keep_code=False
            )
            data = _map_gold(data, dim, self._scales[dim], None, canon)
            scales[dim] = sm.target
        return self.derive(data, step=f"score({sm.name})", scales=scales)

    def aggregate_segments(
        self,
        rule: str | SegmentRule | Mapping[str, str | SegmentRule],
        *,
        dimensions: str | Sequence[str] | None = None,
    ) -> Ratings:
        """Turn segment (sentence) ratings into one rating per item, rater, dimension and
        design, by a named rule per dimension.

        Rules: ``"any_negative"`` (0 if any sentence is rated negative, else 1),
        ``"any_positive"`` (1 if at least one sentence is rated positive, else 0),
        ``"mean"``, ``"min"``, ``"max"``. A mapping gives one rule per dimension (the
        "fine binary" scheme: ``{"correctness": "any_negative", "relevance": "any_positive",
        "safety": "any_positive"}``). Only segment-level rows are aggregated; the selection
        must not also hold whole-item ratings of the same dimension (filter by design
        first). Repeated ratings are aggregated separately from first ratings.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings.filter(design="fine")
        >>> b = r.aggregate_segments({"correctness": "any_negative",
        ...                           "relevance": "any_positive", "safety": "any_positive"})
        >>> b.has_segments, b.scale_for("safety").levels
        (False, (0, 1))
        """
        dims = self._dims_arg(dimensions)
        if isinstance(rule, str | SegmentRule):
            rules = dict.fromkeys(dims, rule)
        else:
            unknown = [d for d in rule if d not in self._scales]
            if unknown:
                raise KeyError(f"rules given for unknown dimensions {unknown}")
            rules = dict(rule)
            dims = [d for d in dims if d in rules]
        resolved: dict[str, SegmentRule] = {}
        for d, r in rules.items():
            if isinstance(r, str):
                if r not in SEGMENT_RULES:
                    raise KeyError(f"unknown segment rule {r!r}; known: {list(SEGMENT_RULES)}")
                r = SEGMENT_RULES[r]
            resolved[d] = r
        data = self._data
        in_dims = pl.col(S.DIMENSION).is_in(dims)
        mixed = data.filter(in_dims & pl.col(S.SEGMENT).is_null()).height
        if mixed:
            raise ValueError(
                f"{mixed} whole-item ratings are in the dimensions being aggregated "
                f"{dims}; select the segment-level design first, e.g. filter(design='fine')"
            )
        keep = data.filter(~in_dims)
        group_cols = [S.ITEM, S.RATER, S.DIMENSION, S.DESIGN, S.REPEAT]
        own = {*group_cols, S.VALUE, S.CODE, S.RATING, S.SEGMENT, S.ROW, S.GOLD}
        carry = [c for c in data.columns if c not in own]  # item-level attributes, extras
        pieces = []
        scales = dict(self._scales)
        for d in dims:
            r = resolved[d]
            src = self._scales[d]
            target = r.target_scale(src)
            sub = data.filter(pl.col(S.DIMENSION) == d)
            if r.kind in ("any_negative", "any_positive"):
                flagged = r.flagged_codes(src)
                hit = pl.col(S.CODE).is_in(flagged).any()
                val = (1 - hit.cast(pl.Int32)) if r.kind == "any_negative" else hit.cast(pl.Int32)
                agg_val = val.cast(pl.Float64)
            elif r.kind == "mean":
                agg_val = pl.col(S.VALUE).mean()
            elif r.kind == "min":
                agg_val = pl.col(S.VALUE).min()
            else:
                agg_val = pl.col(S.VALUE).max()
            out = sub.group_by(group_cols, maintain_order=True).agg(
                agg_val.alias(S.VALUE),
                pl.col(S.ROW).min().alias(S.ROW),
                *[pl.col(c).first() for c in carry],
            )
            if isinstance(target, CategoricalScale):
                to_code = {float(v): i for i, v in enumerate(target.values)}
                to_text = {
                    float(v): format_level(lv)
                    for v, lv in zip(target.values, target.levels, strict=True)
                }
                out = out.with_columns(
                    pl.col(S.VALUE).replace_strict(to_code, return_dtype=pl.Int32).alias(S.CODE),
                    pl.col(S.VALUE).replace_strict(to_text, return_dtype=pl.String).alias(S.RATING),
                )
            else:
                out = out.with_columns(
                    pl.lit(None, dtype=pl.Int32).alias(S.CODE),
                    pl.col(S.VALUE)
                    .map_elements(format_level, return_dtype=pl.String)
                    .alias(S.RATING),
                )
            out = out.with_columns(pl.lit(None, dtype=pl.String).alias(S.SEGMENT))
            pieces.append(out)
            scales[d] = target
        cols = [c for c in data.columns if c != S.GOLD]
        keep = keep.select(cols) if S.GOLD in data.columns else keep
        merged = pl.concat([keep, *[p.select(cols) for p in pieces]], how="vertical_relaxed")
        names = ", ".join(f"{d}:{resolved[d].name}" for d in dims)
        return self.derive(merged, step=f"aggregate_segments({names})", scales=scales)

    # ------------------------------------------------------------------ conversions

    def _single(self, col: str) -> str:
        vals = self._unique(col)
        if len(vals) != 1:
            raise ValueError(
                f"this needs a single {col}, the selection has {list(vals)}; use .filter({col}=...)"
            )
        return str(vals[0])

    def _level_of(self, level: Level | None) -> Level:
        seg_rows = self._data.height - self._data.get_column(S.SEGMENT).null_count()
        if level is None:
            if 0 < seg_rows < self._data.height:
                raise ValueError(
                    "the selection mixes whole-item and segment ratings; filter by design "
                    "or pass level='item' / level='segment'"
                )
            return "segment" if seg_rows else "item"
        if level not in ("item", "segment"):
            raise ValueError(f"level must be 'item' or 'segment', not {level!r}")
        return level

    def _unit_frame(
        self, level: Level | None, repeats: Repeats
    ) -> tuple[pl.DataFrame, pl.DataFrame, Level, int]:
        lv = self._level_of(level)
        data = self._data
        if lv == "item":
            data = data.filter(pl.col(S.SEGMENT).is_null())
        else:
            data = data.filter(pl.col(S.SEGMENT).is_not_null())
        at_level = data
        if repeats == "exclude":
            n_rep = int(data.get_column(S.REPEAT).sum())
            data = data.filter(~pl.col(S.REPEAT))
        elif repeats == "only":
            n_rep = int((~data.get_column(S.REPEAT)).sum())
            data = data.filter(pl.col(S.REPEAT))
        elif repeats == "include":
            n_rep = 0
        else:
            raise ValueError(f"repeats must be 'exclude', 'only' or 'include', not {repeats!r}")
        if lv == "item":
            unit = pl.col(S.ITEM)
        else:
            unit = pl.concat_str([pl.col(S.ITEM), pl.lit(_UNIT_SEP), pl.col(S.SEGMENT)])
        data = data.with_columns(unit.alias("unit"))
        if repeats == "include":
            dup = data.select(
                pl.struct("unit", S.RATER, S.DIMENSION, S.DESIGN).is_duplicated().any()
            ).item()
            if dup:
                raise ValueError(
                    "repeats='include' puts two ratings in one cell; "
                    "use 'exclude' (first ratings) or 'only' (repeats)"
                )
        return data, at_level, lv, n_rep

    def _value_column(self, values: Values) -> str:
        if values not in ("value", "code", "rating"):
            raise ValueError(f"values must be 'value', 'code' or 'rating', not {values!r}")
        return {"value": S.VALUE, "code": S.CODE, "rating": S.RATING}[values]

    def to_xarray(
        self,
        *,
        level: Level | None = None,
        values: Values = "value",
        repeats: Repeats = "exclude",
    ) -> xr.DataArray:
        """All ratings as a labelled array with dims ``(unit, rater, dimension, design)``.

        A unit is an item (``level="item"``) or an item's segment (``level="segment"``,
        unit ids ``"<item>::<segment>"``); the coordinates ``item`` and ``segment`` run
        along ``unit``. Missing ratings are NaN (or None for ``values="rating"``).
        First ratings only by default (``repeats="exclude"``); the number of ratings left
        out is in ``attrs["n_excluded_repeats"]``.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> r.filter(design="coarse").to_xarray().dims
        ('unit', 'rater', 'dimension', 'design')
        """
        data, at_level, lv, n_rep = self._unit_frame(level, repeats)
        col = self._value_column(values)
        units = data.select("unit", S.ITEM, S.SEGMENT).unique(subset="unit").sort("unit")
        unit_ids = units.get_column("unit").to_list()
        # raters, dimensions and designs of the whole selection, so that the first-rating
        # and repeat views of the same data have the same shape
        scope = at_level if at_level.height else self._data
        raters = sorted(scope.get_column(S.RATER).unique().to_list())
        dims = sorted(scope.get_column(S.DIMENSION).unique().to_list())
        designs = sorted(scope.get_column(S.DESIGN).unique().to_list())
        idx = {
            "unit": {u: i for i, u in enumerate(unit_ids)},
            S.RATER: {u: i for i, u in enumerate(raters)},
            S.DIMENSION: {u: i for i, u in enumerate(dims)},
            S.DESIGN: {u: i for i, u in enumerate(designs)},
        }
        shape = (len(unit_ids), len(raters), len(dims), len(designs))
        pos = [
            data.get_column(c).replace_strict(m, return_dtype=pl.Int64).to_numpy().astype(np.int64)
            for c, m in idx.items()
        ]
        arr: np.ndarray
        if values == "rating":
            arr = np.full(shape, None, dtype=object)
            arr[tuple(pos)] = np.asarray(data.get_column(col).to_list(), dtype=object)
        else:
            arr = np.full(shape, np.nan)
            arr[tuple(pos)] = data.get_column(col).cast(pl.Float64).fill_null(np.nan).to_numpy()
        coords: dict[str, Any] = {
            "unit": unit_ids,
            S.RATER: raters,
            S.DIMENSION: dims,
            S.DESIGN: designs,
            S.ITEM: ("unit", units.get_column(S.ITEM).to_list()),
        }
        if lv == "segment":
            coords[S.SEGMENT] = ("unit", units.get_column(S.SEGMENT).to_list())
        return xr.DataArray(
            arr,
            dims=("unit", S.RATER, S.DIMENSION, S.DESIGN),
            coords=coords,
            name=values,
            attrs={"level": lv, "n_excluded_repeats": n_rep, "repeats": repeats},
        )

    def to_matrix(
        self,
        *,
        level: Level | None = None,
        values: Values = "value",
        repeats: Repeats = "exclude",
    ) -> xr.DataArray:
        """Units x raters matrix of one dimension and design (missing as NaN).

        Returns an ``xr.DataArray`` with dims ``("unit", "rater")``; ``.values`` is the plain
        NumPy matrix. The ``item`` coordinate along ``unit`` is the cluster for bootstrap
        intervals. Raises when the selection has several dimensions or designs.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> m = r.filter(dimension="safety", design="fine", rater_kind="human").to_matrix()
        >>> m.dims, m.attrs["level"]
        (('unit', 'rater'), 'segment')
        """
        self._single(S.DIMENSION)
        self._single(S.DESIGN)
        arr = self.to_xarray(level=level, values=values, repeats=repeats)
        return arr.squeeze(("dimension", "design"), drop=False)

    def repeat_pairs(self) -> pl.DataFrame:
        """First and repeated rating side by side, one row per repeated rating.

        Columns: ``item, segment, rater, dimension, design, first, repeat`` (numeric values)
        and ``first_rating`` / ``repeat_rating`` (level text).

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> r.repeat_pairs().columns[:5]
        ['item', 'segment', 'rater', 'dimension', 'design']
        """
        key = [S.ITEM, S.SEGMENT, S.RATER, S.DIMENSION, S.DESIGN]
        first = self._data.filter(~pl.col(S.REPEAT)).select(
            *key, pl.col(S.VALUE).alias("first"), pl.col(S.RATING).alias("first_rating")
        )
        rep = self._data.filter(pl.col(S.REPEAT)).select(
            *key, pl.col(S.VALUE).alias("repeat"), pl.col(S.RATING).alias("repeat_rating")
        )
        out = rep.join(first, on=key, how="left", nulls_equal=True)
        orphan = out.get_column("first").null_count()
        if orphan:
            raise ValueError(f"{orphan} repeated rating(s) have no first rating to pair with")
        return out.select(*key, "first", "repeat", "first_rating", "repeat_rating")

    def pattern_counts(self) -> pl.DataFrame:
        """Counts of each response pattern for a complete design (every unit rated once by
        every rater), one dimension and design: a column per rater (level text) and
        ``count``. This is the compact input of the classical latent-class models.

        Examples
        --------
        >>> import polars as pl
        >>> from raterstats import read_ratings
        >>> r = read_ratings(pl.DataFrame({"item": ["a", "a", "b", "b", "c", "c"],
        ...                                "rater": ["x", "y"] * 3,
        ...                                "rating": [1, 2, 1, 2, 2, 2]}))
        >>> r.pattern_counts().sort("count")["count"].to_list()
        [1, 2]
        """
        mat = self.to_matrix(values="rating")
        arr = mat.values
        incomplete = int(np.sum(np.any(np.isnan(self.to_matrix().values), axis=1)))
        if incomplete:
            raise ValueError(
                f"pattern counts need a complete design; {incomplete} of {arr.shape[0]} units "
                "lack a rating from some rater"
            )
        raters = [str(x) for x in mat.coords[S.RATER].values]
        frame = pl.DataFrame({r: arr[:, j].astype(str).tolist() for j, r in enumerate(raters)})
        return frame.group_by(raters, maintain_order=True).agg(
            pl.len().alias("count").cast(pl.Int64)
        )

    # ------------------------------------------------------------------ reporting

    def summary(self) -> RatingsSummary:
        """Counts that describe the data: items, raters, systems, ratings per item, per
        design and dimension, coverage, repeats, scales, and every exclusion.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> s = clinical_qa_study(n_questions=4, random_seed=1).ratings.summary()
        >>> s.n_items, s.n_raters
        (12, 7)
        """
        return RatingsSummary.of(self)

    def report(self) -> str:
        """The summary as text (Markdown)."""
        return self.summary().to_markdown()


def _apply_code_map(
    data: pl.DataFrame,
    dim: str,
    new_codes: Sequence[int],
    canon: Sequence[str],
    values: Sequence[float],
    *,
    keep_code: bool = True,
) -> pl.DataFrame:
    """Recode the rows of one dimension: old code -> new code, text and value."""
    is_dim = pl.col(S.DIMENSION) == dim
    old = pl.col(S.CODE)
    to_code = {o: int(n) for o, n in enumerate(new_codes)}
    to_text = {o: canon[n] for o, n in enumerate(new_codes)}
    to_value = {o: float(values[n]) for o, n in enumerate(new_codes)}
    code_expr = (
        old.replace_strict(to_code, default=None, return_dtype=pl.Int32)
        if keep_code
        else pl.lit(None, dtype=pl.Int32)
    )
    return data.with_columns(
        pl.when(is_dim).then(code_expr).otherwise(old).alias(S.CODE),
        pl.when(is_dim)
        .then(old.replace_strict(to_text, default=None, return_dtype=pl.String))
        .otherwise(pl.col(S.RATING))
        .alias(S.RATING),
        pl.when(is_dim)
        .then(old.replace_strict(to_value, default=None, return_dtype=pl.Float64))
        .otherwise(pl.col(S.VALUE))
        .alias(S.VALUE),
    )


def _map_gold(
    data: pl.DataFrame,
    dim: str,
    source: Scale,
    new_codes: Sequence[int] | None,
    canon: Sequence[str],
) -> pl.DataFrame:
    """Map gold labels of a dimension through the same level map as the ratings."""
    if S.GOLD not in data.columns or not isinstance(source, CategoricalScale):
        return data
    mapping = {}
    for i, lv in enumerate(source.levels):
        j = i if new_codes is None else new_codes[i]
        mapping[format_level(lv)] = canon[j]
    is_dim = pl.col(S.DIMENSION) == dim
    return data.with_columns(
        pl.when(is_dim)
        .then(pl.col(S.GOLD).replace_strict(mapping, default=None, return_dtype=pl.String))
        .otherwise(pl.col(S.GOLD))
        .alias(S.GOLD)
    )


@dataclass(frozen=True)
class RatingsSummary:
    """What a methodologist checks first: counts, coverage, repeats, scales, exclusions.

    ``cells`` has one row per design x dimension: first ratings and repeats, items, units
    (items or segments) and units per item, raters, ratings per unit (mean / min / max),
    ``panel_coverage`` (share of the unit x rater cells of each item's own raters that
    hold a rating: 1 when every rater of an item rated all its units) and ``matrix_fill``
    (share of the full units x raters matrix that holds a rating).
    ``raters`` has ratings per rater.
    """

    source: str | None
    n_ratings: int
    n_items: int
    n_raters: int
    n_systems: int
    n_questions: int
    n_segments: int
    n_repeats: int
    dimensions: tuple[str, ...]
    designs: tuple[str, ...]
    systems: tuple[str, ...]
    scales: dict[str, str]
    cells: pl.DataFrame
    raters: pl.DataFrame
    exclusions: tuple[Exclusion, ...]
    steps: tuple[str, ...]
    ignored_columns: tuple[str, ...]
    inferred_scales: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def of(cls, r: Ratings) -> RatingsSummary:
        d = r.data
        first = d.filter(~pl.col(S.REPEAT))
        unit = (
            pl.when(pl.col(S.SEGMENT).is_null())
            .then(pl.col(S.ITEM))
            .otherwise(pl.concat_str([pl.col(S.ITEM), pl.lit(_UNIT_SEP), pl.col(S.SEGMENT)]))
        )
        f = first.with_columns(unit.alias("unit"))
        per_unit = f.group_by(S.DESIGN, S.DIMENSION, "unit").agg(
            pl.len().alias("n"), pl.col(S.ITEM).first()
        )
        cells = (
            per_unit.group_by(S.DESIGN, S.DIMENSION)
            .agg(
                pl.col("n").sum().alias("ratings"),
                pl.len().alias("units"),
                pl.col(S.ITEM).n_unique().alias("items"),
                pl.col("n").mean().alias("ratings_per_unit"),
                pl.col("n").min().alias("min_per_unit"),
                pl.col("n").max().alias("max_per_unit"),
            )
            .sort(S.DESIGN, S.DIMENSION)
        )
        # raters who rated any unit of an item are its panel; coverage = filled / possible
        panel = f.group_by(S.DESIGN, S.DIMENSION, S.ITEM).agg(
            pl.col(S.RATER).n_unique().alias("panel"),
            pl.col("unit").n_unique().alias("units_in_item"),
            pl.len().alias("filled"),
        )
        cov = panel.group_by(S.DESIGN, S.DIMENSION).agg(
            (pl.col("filled").sum() / (pl.col("panel") * pl.col("units_in_item")).sum()).alias(
                "panel_coverage"
            ),
            pl.col("units_in_item").mean().alias("units_per_item"),
        )
        raters_n = f.group_by(S.DESIGN, S.DIMENSION).agg(pl.col(S.RATER).n_unique().alias("raters"))
        reps = (
            d.filter(pl.col(S.REPEAT))
            .group_by(S.DESIGN, S.DIMENSION)
            .agg(pl.len().alias("repeats"))
        )
        cells = (
            cells.join(raters_n, on=[S.DESIGN, S.DIMENSION])
            .join(cov, on=[S.DESIGN, S.DIMENSION])
            .join(reps, on=[S.DESIGN, S.DIMENSION], how="left")
            .with_columns(
                pl.col("repeats").fill_null(0),
                (pl.col("ratings") / (pl.col("units") * pl.col("raters"))).alias("matrix_fill"),
            )
            .select(
                S.DESIGN,
                S.DIMENSION,
                "ratings",
                "repeats",
                "items",
                "units",
                "units_per_item",
                "raters",
                "ratings_per_unit",
                "min_per_unit",
                "max_per_unit",
                "panel_coverage",
                "matrix_fill",
            )
            .sort(S.DESIGN, S.DIMENSION)
        )
        rater_cols = [S.RATER] + [c for c in (S.GROUP, S.RATER_KIND) if c in d.columns]
        raters = (
            d.group_by(rater_cols)
            .agg(
                pl.len().alias("ratings"),
                pl.col(S.REPEAT).sum().alias("repeats"),
                pl.col(S.ITEM).n_unique().alias("items"),
            )
            .sort(S.RATER)
        )
        seg = d.filter(pl.col(S.SEGMENT).is_not_null()).select(S.ITEM, S.SEGMENT).unique()
        meta = r._meta
        return cls(
            source=meta.source,
            n_ratings=d.height,
            n_items=d.get_column(S.ITEM).n_unique(),
            n_raters=d.get_column(S.RATER).n_unique(),
            n_systems=len(r.systems),
            n_questions=d.get_column(S.QUESTION).n_unique() if S.QUESTION in d.columns else 0,
            n_segments=seg.height,
            n_repeats=int(d.get_column(S.REPEAT).sum()),
            dimensions=r.dimensions,
            designs=r.designs,
            systems=r.systems,
            scales={k: repr(v) for k, v in r.scales.items()},
            cells=cells,
            raters=raters,
            exclusions=meta.exclusions,
            steps=meta.steps,
            ignored_columns=meta.ignored_columns,
            inferred_scales=meta.inferred_scales,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (tables as lists of records)."""
        return {
            "source": self.source,
            "n_ratings": self.n_ratings,
            "n_items": self.n_items,
            "n_raters": self.n_raters,
            "n_systems": self.n_systems,
            "n_questions": self.n_questions,
            "n_segments": self.n_segments,
            "n_repeats": self.n_repeats,
            "dimensions": list(self.dimensions),
            "designs": list(self.designs),
            "systems": list(self.systems),
            "scales": self.scales,
            "cells": self.cells.to_dicts(),
            "raters": self.raters.to_dicts(),
            "exclusions": [{"reason": e.reason, "n_rows": e.n_rows} for e in self.exclusions],
            "steps": list(self.steps),
            "ignored_columns": list(self.ignored_columns),
            "inferred_scales": list(self.inferred_scales),
        }

    def to_markdown(self) -> str:
        """The summary as a Markdown document."""
        lines = ["# Data summary", ""]
        if self.source:
            lines += [f"Source: `{self.source}`", ""]
        lines += [
            f"- ratings: {self.n_ratings} ({self.n_repeats} repeated ratings)",
            f"- items: {self.n_items}"
            + (f" ({self.n_segments} rated segments)" if self.n_segments else ""),
            f"- raters: {self.n_raters}",
        ]
        if self.n_systems:
            lines.append(f"- systems: {self.n_systems} ({', '.join(map(str, self.systems))})")
        if self.n_questions:
            lines.append(f"- questions: {self.n_questions}")
        lines.append(f"- dimensions: {', '.join(self.dimensions)}")
        lines.append(f"- designs: {', '.join(self.designs)}")
        lines += ["", "## Scales", ""]
        lines += [
            f"- {k}: `{v}`" + (" (inferred)" if k in self.inferred_scales else "")
            for k, v in self.scales.items()
        ]
        lines += ["", "## Ratings by design and dimension", "", markdown_table(self.cells)]
        lines += ["", "## Raters", "", markdown_table(self.raters)]
        lines += ["", "## Exclusions", ""]
        if self.exclusions:
            lines += [f"- {e}" for e in self.exclusions]
        else:
            lines.append("- none: every row of the source is in the data")
        if self.ignored_columns:
            lines += ["", "Columns not used (no role): " + ", ".join(self.ignored_columns)]
        if self.steps:
            lines += ["", "## Steps since ingest", ""] + [f"1. {s}" for s in self.steps]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_markdown()


def concat_ratings(parts: Sequence[Ratings]) -> Ratings:
    """Stack several :class:`Ratings` with the same scale per dimension into one.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> both = concat_ratings([r.filter(design="coarse"), r.filter(design="fine")])
    >>> both.n_ratings == r.n_ratings
    True
    """
    if not parts:
        raise ValueError("nothing to concatenate")
    scales: dict[str, Scale] = {}
    for p in parts:
        for d, s in p.scales.items():
            if d in scales and scales[d] != s:
                raise ValueError(f"dimension {d!r} has different scales: {scales[d]} vs {s}")
            scales[d] = s
    data = pl.concat([p.data for p in parts], how="diagonal_relaxed")
    meta = _Meta(
        source=parts[0].source,
        exclusions=tuple(e for p in parts for e in p.exclusions),
        steps=(f"concat({len(parts)} parts)",),
    )
    return Ratings(data, scales, _meta=meta)


__all__ = ["Exclusion", "Ratings", "RatingsSummary", "concat_ratings"]
