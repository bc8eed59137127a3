"""The :class:`Ratings` container: a validated table of ratings, its scales and its history.

Every analysis in raterstats takes a :class:`Ratings`. It is made by
:func:`raterstats.read_ratings` (or a simulator), never mutated, and every method that
changes the data (filters, exclusions, scale maps, segment aggregation) returns a new
:class:`Ratings` that remembers what was done, so :meth:`Ratings.summary` can report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.provenance import Exclusion, Provenance
from raterstats.rating_arrays import Level, Repeats, Values, rating_array
from raterstats.ratings_summary import RatingsSummary
from raterstats.recode import aggregate_segment_rows, apply_code_map, map_gold
from raterstats.scales import (
    COLLAPSES,
    SCORE_MAPS,
    SEGMENT_RULES,
    Collapse,
    Scale,
    ScoreMap,
    SegmentRule,
    format_level,
)


def _as_list(v: Any) -> list[Any]:
    if isinstance(v, str) or not isinstance(v, Iterable):
        return [v]
    return list(v)


_RATING_KEY = [S.ITEM, S.SEGMENT, S.RATER, S.DIMENSION, S.DESIGN]


def _checked_repeats(data: pl.DataFrame) -> pl.DataFrame:
    """``data`` with a ``repeat_index`` consistent with ``repeat`` and no two rows sharing
    a key; a frame without ``repeat_index`` gets one (unmarked rows 0, the repeats of a key
    1, 2, ... in row order)."""
    if S.REPEAT_INDEX not in data.columns:
        marked = pl.col(S.REPEAT).fill_null(False)
        number = marked.cast(pl.Int64).cum_sum().over(_RATING_KEY)
        data = data.with_columns(
            pl.when(marked).then(number).otherwise(0).cast(pl.Int64).alias(S.REPEAT_INDEX)
        )
    if data.schema[S.REPEAT_INDEX] != pl.Int64:
        data = data.with_columns(pl.col(S.REPEAT_INDEX).cast(pl.Int64))
    if data.height == 0:
        return data
    bad = data.select(
        (
            pl.col(S.REPEAT_INDEX).is_null()
            | (pl.col(S.REPEAT_INDEX) < 0)
            | pl.col(S.REPEAT).is_null()
            | (pl.col(S.REPEAT) != (pl.col(S.REPEAT_INDEX) > 0))
        ).sum()
    ).item()
    if bad:
        raise ValueError(
            f"Ratings: {bad} row(s) where 'repeat' is not 'repeat_index > 0' (repeat_index: "
            "0 for the first rating, 1, 2, ... for the repeats)"
        )
    dup = data.filter(pl.struct(S.KEY).is_duplicated())
    if dup.height:
        first = dup.row(0, named=True)
        shown = ", ".join(f"{k}={first[k]!r}" for k in S.KEY if first[k] is not None)
        raise ValueError(
            f"Ratings: {dup.height} rows share their (item, segment, rater, dimension, design, "
            f"repeat_index), e.g. {shown}; every rating needs its own key"
        )
    return data


class Ratings:
    """A validated table of ratings with one scale per dimension.

    Build it with :func:`raterstats.read_ratings`; the constructor takes an already
    canonical frame and checks its invariants.

    The frame (:attr:`data`) has one row per rating (no two rows share the key
    :data:`raterstats.schema.KEY`) and the canonical columns of
    :mod:`raterstats.schema`: ``item``, ``segment`` (null for whole-item ratings), ``rater``,
    ``dimension``, ``design``, ``rating`` (the level's canonical text), ``value`` (its
    numeric value), ``code`` (0-based level index; null on interval scales), ``repeat``
    (True for every rating after the first of its item, segment, rater, dimension and
    design), ``repeat_index`` (0 for the first rating, 1, 2, ... for the repeats in order),
    ``source_row`` (1-based row in the source), and any optional roles present
    (``system``, ``question``, ``group``, ``rater_kind``, ``length``, ``duration_s``,
    ``confidence``, ``gold``). ``rater_kind`` is kept stripped and lower-case.

    Parameters
    ----------
    data : pl.DataFrame
        The canonical frame.
    scales : mapping of str to Scale
        The scale of every dimension in ``data``.
    provenance : Provenance, optional
        Source, exclusions and processing steps so far (default: none).

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

    __slots__ = ("_data", "_provenance", "_scales")

    def __init__(
        self,
        data: pl.DataFrame,
        scales: Mapping[str, Scale],
        *,
        provenance: Provenance | None = None,
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
        data = _checked_repeats(data)
        if S.RATER_KIND in data.columns and data.schema[S.RATER_KIND] == pl.String:
            kind = pl.col(S.RATER_KIND)
            data = data.with_columns(kind.str.strip_chars().str.to_lowercase())
        ordered = [c for c in S.COLUMN_ORDER if c in data.columns]
        ordered += [c for c in data.columns if c not in ordered]
        self._data = data.select(ordered)
        self._scales = {d: scales[d] for d in sorted(dims)} if dims else dict(scales)
        self._provenance = provenance or Provenance()

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
    def provenance(self) -> Provenance:
        """Where the ratings came from and what was done to them since (see
        :class:`~raterstats.provenance.Provenance`)."""
        return self._provenance

    @property
    def source(self) -> str | None:
        """File or frame the ratings were read from."""
        return self._provenance.source

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        """Every exclusion made so far, with counts."""
        return self._provenance.exclusions

    @property
    def steps(self) -> tuple[str, ...]:
        """The transformations applied since ingest (filters, maps, aggregations)."""
        return self._provenance.steps

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
            self._provenance,
            steps=(*self._provenance.steps, step),
            exclusions=self._provenance.exclusions + ((exclusion,) if exclusion else ()),
        )
        sc = dict(self._scales if scales is None else scales)
        present = set(data.get_column(S.DIMENSION).unique().to_list())
        sc = {d: s for d, s in sc.items() if d in present} or sc
        return Ratings(data, sc, provenance=meta)

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
        S.REPEAT_INDEX,
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
            if col == S.RATER_KIND:  # stored stripped and lower-case: "Human" finds "human"
                vals = [S.normalize_rater_kind(v) for v in vals]
            present = set(self._data.get_column(col).unique().to_list())
            unknown = [v for v in vals if v not in present]
            if unknown:
                shown = sorted(map(str, present))[:20]
                raise KeyError(f"{col} {unknown} not in the ratings; present: {shown}")
            expr = expr & pl.col(col).is_in(vals)
        return expr

    def filter(self, **filters: Any) -> Ratings:
        """Select ratings by ``dimension``, ``design``, ``group``, ``system``, ``rater``,
        ``item``, ``question``, ``segment``, ``rater_kind``, ``repeat`` or ``repeat_index``
        (a value or a list): ``repeat=False`` keeps the first ratings, ``repeat_index=1``
        the first repeat of every key. ``rater_kind`` is stored stripped and lower-case and
        matched so: ``"Human"`` selects the ``human`` raters.

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
            data = apply_code_map(data, dim, new_codes, canon, target.values.tolist())
            data = map_gold(data, dim, self._scales[dim], new_codes, canon)
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
            data = apply_code_map(
                data, dim, list(range(len(scores))), canon, scores, keep_code=False
            )
            data = map_gold(data, dim, self._scales[dim], None, canon)
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
        first). Each repeat (``repeat_index``) is aggregated apart from the first ratings and
        from the other repeats.

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
        merged, scales = aggregate_segment_rows(
            self._data, self._scales, {d: resolved[d] for d in dims}
        )
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

    def to_xarray(
        self,
        *,
        level: Level | None = None,
        values: Values = "value",
        repeats: Repeats = "exclude",
    ) -> xr.DataArray:
        """All ratings as a labelled array with dims ``(unit, rater, dimension, design)``.

        A unit is an item (``level="item"``) or an item's segment (``level="segment"``,
        unit ids ``"<item>::<segment>"``, escaped by :func:`raterstats.schema.unit_id` so
        that every (item, segment) has its own id); the coordinates ``item`` and ``segment``
        run along ``unit``. Missing ratings are NaN (or None for ``values="rating"``).
        First ratings only by default (``repeats="exclude"``); the number of ratings left
        out is in ``attrs["n_excluded_repeats"]``.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> r.filter(design="coarse").to_xarray().dims
        ('unit', 'rater', 'dimension', 'design')
        """
        return rating_array(self._data, level=level, values=values, repeats=repeats)

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
        """Every pair of ratings a rater gave the same item, segment, dimension and design,
        side by side: the pairs of intra-rater (test-retest) agreement.

        A key rated ``m`` times gives ``m (m - 1) / 2`` pairs, the earlier rating (lower
        ``repeat_index``) first: with two ratings the first against the repeat, with three
        (0, 1, 2) the pairs 0-1, 0-2 and 1-2, as the replicates of Gwet's intra-rater
        coefficients are compared pairwise. Pairs are formed among the ratings present
        (after :meth:`filter`, a key without its first rating pairs its repeats).

        Returns
        -------
        pl.DataFrame
            Columns ``item, segment, rater, dimension, design``, ``first`` and ``repeat``
            (numeric values of the earlier and the later rating), ``first_rating`` /
            ``repeat_rating`` (level text) and ``first_index`` / ``repeat_index``; one row
            per pair, in the order of the later ratings.

        Examples
        --------
        >>> import polars as pl
        >>> from raterstats import read_ratings
        >>> r = read_ratings(pl.DataFrame({"item": ["a"] * 3, "rater": ["x"] * 3,
        ...                                "rating": [1, 2, 2], "repeat": [1, 2, 3]}))
        >>> r.repeat_pairs().select("first_index", "repeat_index", "first", "repeat").rows()
        [(0, 1, 1.0, 2.0), (0, 2, 1.0, 2.0), (1, 2, 2.0, 2.0)]
        """
        key = _RATING_KEY
        d = self._data.filter(pl.col(S.REPEAT).any().over(key))
        d = d.with_row_index("__pos")
        earlier = d.select(
            *key,
            pl.col(S.REPEAT_INDEX).alias("first_index"),
            pl.col(S.VALUE).alias("first"),
            pl.col(S.RATING).alias("first_rating"),
        )
        later = d.select(
            *key,
            "__pos",
            pl.col(S.REPEAT_INDEX).alias("repeat_index"),
            pl.col(S.VALUE).alias("repeat"),
            pl.col(S.RATING).alias("repeat_rating"),
        )
        out = (
            later.join(earlier, on=key, how="inner", nulls_equal=True)
            .filter(pl.col("first_index") < pl.col("repeat_index"))
            .sort("__pos", "first_index")
        )
        return out.select(
            *key,
            "first",
            "repeat",
            "first_rating",
            "repeat_rating",
            "first_index",
            "repeat_index",
        )

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


def concat_ratings(parts: Sequence[Ratings]) -> Ratings:
    """Stack several :class:`Ratings` with the same scale per dimension into one.

    The parts must not share a rating (the same item, segment, rater, dimension, design and
    ``repeat_index``; a ``ValueError`` names one): to read a retest session kept in a file
    of its own as repeats, stack the files and read them with a ``repeat`` column
    (:func:`raterstats.read_ratings`).

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
    meta = Provenance(
        source=parts[0].source,
        exclusions=tuple(e for p in parts for e in p.exclusions),
        steps=(f"concat({len(parts)} parts)",),
        guessed_roles=tuple(dict.fromkeys(g for p in parts for g in p.provenance.guessed_roles)),
    )
    return Ratings(data, scales, provenance=meta)


__all__ = ["Exclusion", "Ratings", "RatingsSummary", "concat_ratings"]
