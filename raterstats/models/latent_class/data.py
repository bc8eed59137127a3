"""The data layout of the latent-class models: categorical ratings as index arrays by
unit, cell and rating pattern, the groups a fit stores to rebuild it, and the soft
majority vote that starts EM and the samplers.

A *unit* is what has a true label: an (item, segment, dimension) triple (segment empty for
whole-item ratings). A *cell* is a (rater, dimension, design) triple: rater parameters live
on cells. Ratings are sorted by unit. Units with the same *pattern* (same dimension, gold
label and multiset of (cell, rated category)) have the same likelihood and label
posterior, so the likelihood is evaluated once per pattern and weighted by its count (the
vectorised likelihood over rating patterns). Categories are padded to the largest number
of levels ``K`` over dimensions; padded classes get prior mass zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.models.base import ModelInputError
from raterstats.models.latent_class.patterns import group_patterns, sort_order
from raterstats.ratings import Ratings
from raterstats.scales import CategoricalScale, format_level


def class_mask_np(valid: np.ndarray, dims: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """``(n, K)`` True where the true class is possible: a valid category of the dimension
    ``dims`` (``valid``: ``(dimension, K)``) and, where ``gold >= 0``, the gold label.

    Examples
    --------
    >>> valid = np.array([[True, True, False], [True, True, True]])
    >>> class_mask_np(valid, np.array([0, 1, 1]), np.array([-1, -1, 2])).astype(int)
    array([[1, 1, 0],
           [1, 1, 1],
           [0, 0, 1]])
    """
    mask = valid[dims].copy()
    has = gold >= 0
    if has.any():
        clamp = np.zeros((int(has.sum()), valid.shape[1]), dtype=bool)
        clamp[np.arange(clamp.shape[0]), gold[has]] = True
        mask[has] = clamp
    return mask


@dataclass(frozen=True)
class LatentClassData:
    """Index arrays of categorical ratings for the latent-class models.

    Per rating (sorted by unit): ``unit``, ``rater``, ``dim``, ``design``, ``code`` (and
    the derived ``cell``); per unit: ``unit_ids``, ``unit_item``, ``unit_segment``,
    ``unit_dim``, ``unit_gold`` (the gold code that clamps the unit's label; -1: none, and
    -1 everywhere unless ``use_gold``), ``unit_pattern`` and, when the ratings name them,
    ``unit_system`` and ``unit_question`` (``""`` where they had none; None for a fit
    saved before they were stored), ``unit_gold_data`` (the gold code the ratings give the
    unit, -1: none, whether it clamps the label or not: a check, not data of the
    likelihood; None when the ratings have no gold column or the fit was saved before it
    was stored), ``base_dimensions`` (the dimension each of ``dimensions`` measures when the
    ratings have a ``base_dimension`` column, a table of several schemes with different
    label sets, :func:`raterstats.design.combine_schemes`; None otherwise); per rater:
    ``rater_is_human`` (True unless the ratings' ``rater_kind`` says otherwise; None only
    for a layout built by hand; a fit saved without it reads back as all human); per
    rating ``obs_repeat`` (True for a repeated rating of its unit by its rater; None for a
    fit saved before it was stored); per pattern:
    ``pattern_count``, ``pattern_dim``, ``pattern_gold`` and the ratings of one
    representative unit (``p_*`` arrays, sorted by pattern, and the derived ``p_cell``).
    Cells index the full rater x dimension x design grid, row-major (:meth:`cell_of`).
    """

    unit_ids: tuple[str, ...]
    unit_item: tuple[str, ...]
    unit_segment: tuple[str, ...]
    raters: tuple[str, ...]
    dimensions: tuple[str, ...]
    designs: tuple[str, ...]
    categories: tuple[tuple[str, ...], ...]
    n_categories: np.ndarray
    unit: np.ndarray
    rater: np.ndarray
    dim: np.ndarray
    design: np.ndarray
    code: np.ndarray
    unit_dim: np.ndarray
    unit_gold: np.ndarray
    unit_pattern: np.ndarray
    pattern_count: np.ndarray
    pattern_dim: np.ndarray
    pattern_gold: np.ndarray
    p_pattern: np.ndarray
    p_rater: np.ndarray
    p_dim: np.ndarray
    p_design: np.ndarray
    p_code: np.ndarray
    repeats: str
    gold_used: bool
    unit_system: tuple[str, ...] | None = None
    unit_question: tuple[str, ...] | None = None
    unit_gold_data: np.ndarray | None = None
    base_dimensions: tuple[str, ...] | None = None
    rater_is_human: np.ndarray | None = None
    obs_repeat: np.ndarray | None = None

    @property
    def n_units(self) -> int:
        """Number of units (items x segments x dimensions rated)."""
        return len(self.unit_ids)

    @property
    def n_patterns(self) -> int:
        """Number of distinct rating patterns."""
        return int(self.pattern_count.size)

    @property
    def n_ratings(self) -> int:
        """Number of ratings."""
        return int(self.code.size)

    @property
    def K(self) -> int:
        """Largest number of categories over dimensions (the padded class count)."""
        return int(self.n_categories.max())

    @property
    def n_cells(self) -> int:
        """Number of rater x dimension x design cells."""
        return len(self.raters) * len(self.dimensions) * len(self.designs)

    def one_pattern_per_unit(self) -> LatentClassData:
        """This layout with every unit its own rating pattern.

        The latent-class models evaluate the likelihood once per *pattern* (units with the
        same dimension, gold label and ratings), which is exact while the parameters belong
        to raters only (MACE, Dawid-Skene). A model with a parameter per unit (GLAD's item
        easiness) must not share: its ``prepare`` returns this layout. The ratings are
        sorted by unit already, so they are the pattern ratings as they stand; a fit stores
        ``unit_pattern``, so :func:`data_from_groups` rebuilds the same layout.

        Examples
        --------
        >>> from raterstats.simulate import archehr_like_study
        >>> d = prepare_latent_class(archehr_like_study(n_cases=3, n_systems=3,
        ...                          random_seed=1).ratings)
        >>> u = d.one_pattern_per_unit()
        >>> u.n_patterns == u.n_units == d.n_units, bool((u.p_code == d.code).all())
        (True, True)
        """
        n = self.n_units
        return replace(
            self,
            unit_pattern=np.arange(n, dtype=np.int64),
            pattern_count=np.ones(n, dtype=np.int64),
            pattern_dim=self.unit_dim,
            pattern_gold=self.unit_gold,
            p_pattern=self.unit,
            p_rater=self.rater,
            p_dim=self.dim,
            p_design=self.design,
            p_code=self.code,
        )

    def cell_of(self, rater: np.ndarray, dim: np.ndarray, design: np.ndarray) -> np.ndarray:
        """Flat cell index of (rater, dimension, design) index arrays."""
        D, G = len(self.dimensions), len(self.designs)
        return (rater * D + dim) * G + design

    @property
    def cell(self) -> np.ndarray:
        """Cell of every rating."""
        return self.cell_of(self.rater, self.dim, self.design)

    @cached_property
    def p_cell(self) -> np.ndarray:
        """Cell of every pattern rating (computed once: an EM fit of 1.5 million pattern
        ratings asked for it a dozen times, 60 ms in all)."""
        cell = self.cell_of(self.p_rater, self.p_dim, self.p_design)
        cell.flags.writeable = False
        return cell

    @property
    def valid(self) -> np.ndarray:
        """``(dimension, K)`` True where the category exists on that dimension's scale."""
        return np.arange(self.K)[None, :] < self.n_categories[:, None]

    def class_mask(self, dims: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """``(n, K)`` True where the true class is possible (valid category, gold clamp)."""
        return class_mask_np(self.valid, dims, gold)

    def coords(self) -> dict[str, Any]:
        """Coordinates with the user's ids."""
        return {
            "rater": list(self.raters),
            "dimension": list(self.dimensions),
            "design": list(self.designs),
            "category": list(range(self.K)),
            "unit": range(self.n_units),  # (not a list: 500,000 units took 25 ms)
        }

    def data_groups(self) -> dict[str, xr.Dataset]:
        """``observed_data`` and ``constant_data``: everything needed to recompute item
        posteriors, log-likelihoods and system scores from a saved fit (``unit_system``
        and ``unit_question`` hold the system and question of each unit, ``""`` where the
        ratings had none; ``gold`` the gold code of each unit, -1: none, when the ratings
        have a gold column, stored whether or not it clamps the labels: ``unit_gold`` and
        the attribute ``gold_used`` say whether it did)."""
        K = self.K
        labels = np.full((len(self.dimensions), K), "", dtype=object)
        for d, cats in enumerate(self.categories):
            labels[d, : len(cats)] = cats
        unit_coords = {
            "unit": np.arange(self.n_units),
            "item": ("unit", text_array(self.unit_item)),
            "segment": ("unit", text_array(self.unit_segment)),
            "unit_dimension": ("unit", np.asarray(self.dimensions, dtype=str)[self.unit_dim]),
        }
        per_unit = {
            name: (("unit",), text_array(values))
            for name, values in (
                ("unit_system", self.unit_system),
                ("unit_question", self.unit_question),
            )
            if values is not None
        }
        if self.unit_gold_data is not None:
            per_unit["gold"] = (("unit",), self.unit_gold_data.astype(np.int16))
        per_dim = (
            {"base_dimension": (("dimension",), np.asarray(self.base_dimensions, dtype=str))}
            if self.base_dimensions is not None
            else {}
        )
        if self.obs_repeat is not None:
            per_unit["obs_repeat"] = (("obs",), self.obs_repeat.astype(bool))
        per_rater = (
            {"rater_is_human": (("rater",), np.asarray(self.rater_is_human, dtype=bool))}
            if self.rater_is_human is not None
            else {}
        )
        observed = xr.Dataset(
            {"rating": (("obs",), self.code.astype(np.int16))},
            coords={"obs": np.arange(self.n_ratings)},
        )
        const = xr.Dataset(
            {
                "obs_unit": (("obs",), self.unit.astype(np.int64)),
                "obs_rater": (("obs",), self.rater.astype(np.int32)),
                "obs_dimension": (("obs",), self.dim.astype(np.int16)),
                "obs_design": (("obs",), self.design.astype(np.int16)),
                "unit_dim": (("unit",), self.unit_dim.astype(np.int16)),
                "unit_gold": (("unit",), self.unit_gold.astype(np.int16)),
                "unit_pattern": (("unit",), self.unit_pattern.astype(np.int64)),
                "n_categories": (("dimension",), self.n_categories.astype(np.int16)),
                "category_label": (("dimension", "category"), labels.astype(str)),
                **per_unit,
                **per_dim,
                **per_rater,
            },
            coords={
                "obs": np.arange(self.n_ratings),
                "rater": np.asarray(self.raters, dtype=str),
                "dimension": np.asarray(self.dimensions, dtype=str),
                "design": np.asarray(self.designs, dtype=str),
                "category": np.arange(K),
                **unit_coords,
            },
            attrs={"repeats": self.repeats, "gold_used": int(self.gold_used)},
        )
        return {"observed_data": observed, "constant_data": const}


def text_array(values: Sequence[str]) -> np.ndarray:
    """``np.asarray(values, dtype=str)``, without converting every string one by one when
    they are all the same (a column the ratings do not have, such as empty segments: about
    30 ms per 500,000 units saved).

    Examples
    --------
    >>> text_array(("", "")).dtype == np.asarray(("", ""), dtype=str).dtype
    True
    >>> text_array(("ab", "c")).tolist()
    ['ab', 'c']
    """
    if len(values) and values.count(values[0]) == len(values):
        return np.full(len(values), values[0], dtype=f"<U{max(1, len(values[0]))}")
    return np.asarray(values, dtype=str)


def prepare_latent_class(
    ratings: Ratings, *, repeats: str = "include", use_gold: bool = False
) -> LatentClassData:
    """Check categorical ratings and build the :class:`LatentClassData` layout.

    Gold labels (a ``gold`` column) are read and checked (one gold label per unit, a level
    of its scale) whether or not they are used: ``use_gold=True`` clamps the true label of
    the units that have one; by default (False) they stay out of the likelihood and are
    kept as ``unit_gold_data``, to check the fit against
    (:func:`raterstats.posterior.gold_check`).

    ``repeats="include"`` (the models' default) keeps every rating, however many times a
    rater rated a unit (``repeat_index`` 0, 1, 2, ...): each is one more observation from
    the rater's confusion matrix, as in Dawid & Skene's (1979) likelihood, and a unit's
    pattern is the multiset of its (cell, category) ratings, so the order of the repeats
    does not matter. ``repeats="exclude"`` keeps the first ratings only.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=2, n_systems=3, random_seed=1).ratings
    >>> d = prepare_latent_class(r)
    >>> d.n_units, d.n_ratings, d.K, len(d.raters)
    (18, 54, 3, 12)
    """
    problems = []
    if not isinstance(ratings, Ratings):
        raise TypeError(f"fit() takes a raterstats.Ratings, not {type(ratings).__name__}")
    if repeats not in ("include", "exclude"):
        problems.append(f"repeats must be 'include' or 'exclude', not {repeats!r}")
    scales = ratings.scales
    for dname, sc in scales.items():
        if not isinstance(sc, CategoricalScale):
            problems.append(
                f"dimension {dname!r} is on an {type(sc).__name__}; latent-class models need "
                "categorical (nominal or ordinal) ratings"
            )
    data = ratings.data
    if repeats == "exclude":
        data = data.filter(~pl.col(S.REPEAT))
    if data.height == 0:
        problems.append("no ratings to fit")
    if problems:
        raise ModelInputError(problems)
    dims = tuple(sorted(data.get_column(S.DIMENSION).unique().to_list()))
    designs = tuple(sorted(data.get_column(S.DESIGN).unique().to_list()))
    raters = tuple(sorted(data.get_column(S.RATER).unique().to_list()))
    categories = tuple(tuple(format_level(v) for v in scales[d].levels) for d in dims)
    n_cat = np.array([len(c) for c in categories], dtype=np.int64)

    gold_col = S.GOLD in data.columns
    seg = pl.col(S.SEGMENT).fill_null("").cast(pl.String)
    item = pl.col(S.ITEM).cast(pl.String)
    frame = data.select(
        item,
        seg.alias("_seg"),
        (item.rank("dense").cast(pl.Int64) - 1).alias("_item_rank"),
        (seg.rank("dense").cast(pl.Int64) - 1).alias("_seg_rank"),
        pl.col(S.DIMENSION)
        .replace_strict({d: i for i, d in enumerate(dims)}, return_dtype=pl.Int64)
        .alias("_dim"),
        pl.col(S.RATER)
        .replace_strict({r: i for i, r in enumerate(raters)}, return_dtype=pl.Int64)
        .alias("_rater"),
        pl.col(S.DESIGN)
        .replace_strict({g: i for i, g in enumerate(designs)}, return_dtype=pl.Int64)
        .alias("_design"),
        pl.col(S.CODE).cast(pl.Int64).alias("_code"),
        pl.col(S.REPEAT).cast(pl.Boolean).alias("_repeat"),
        (pl.col(S.GOLD) if gold_col else pl.lit(None, dtype=pl.String)).alias("_gold"),
    )
    # ratings sorted by unit (item, segment, dimension), then rater, design, category
    cols = ("_item_rank", "_seg_rank", "_dim", "_rater", "_design", "_code")
    codes = [frame.get_column(c).to_numpy() for c in cols]
    rows = sort_order(codes, [int(c.max()) + 1 for c in codes])
    item_rank, seg_rank, dim, rater, design, code = (c[rows] for c in codes)
    new_unit = np.ones(rows.size, dtype=bool)
    new_unit[1:] = (np.diff(item_rank) != 0) | (np.diff(seg_rank) != 0) | (np.diff(dim) != 0)
    unit = np.cumsum(new_unit) - 1
    starts = np.flatnonzero(new_unit)
    first_rows = pl.Series(rows[starts])
    items = frame.get_column(S.ITEM).gather(first_rows).to_list()
    seg_col = frame.get_column("_seg")
    if seg_rank.size and int(seg_rank.max()) == 0 and seg_col[0] == "":  # no segments
        seg_vals = [""] * starts.size
    else:
        seg_vals = seg_col.gather(first_rows).to_list()
    unit_dim = dim[starts]

    # gold per unit: level text -> code on the unit's dimension; disagreeing gold is an error
    unit_gold = np.full(starts.size, -1, dtype=np.int64)
    if gold_col:
        g = (
            pl.DataFrame({"_unit": unit, "_gold": frame.get_column("_gold").gather(rows)})
            .filter(pl.col("_gold").is_not_null())
            .group_by("_unit", maintain_order=True)
            .agg(pl.col("_gold").unique().sort())
            .sort("_unit")
        )
        bad = []
        for u, vals in g.iter_rows():
            d, it, sg = int(unit_dim[u]), items[u], seg_vals[u]
            where = f"item {it!r}" + (f", segment {sg!r}" if sg else "")
            if len(dims) > 1 or dims[d] != S.DEFAULT_LEVEL:
                where += f", dimension {dims[d]!r}"
            if len(vals) > 1:
                bad.append(f"{where}: several gold labels {vals}; give it one gold label")
                continue
            lookup = {c: i for i, c in enumerate(categories[d])}
            if vals[0] not in lookup:
                bad.append(f"{where}: gold {vals[0]!r} is not a level of the dimension's scale")
                continue
            unit_gold[u] = lookup[vals[0]]
        if bad:
            raise ModelInputError(
                bad[:20] + ([f"... {len(bad) - 20} more"] if len(bad) > 20 else [])
            )

    gold_data = unit_gold.copy() if gold_col else None
    base_dims = _base_dimensions(data, dims)
    if not use_gold:
        unit_gold = np.full(starts.size, -1, dtype=np.int64)

    # rating patterns: (dimension, gold, sorted (cell, code) list)
    D, G = len(dims), len(designs)
    K = int(n_cat.max())
    key = ((rater * D + dim) * G + design) * K + code
    unit_pattern = group_patterns(np.r_[starts, unit.size], key, unit_dim, unit_gold)
    n_pat = int(unit_pattern.max()) + 1
    count = np.bincount(unit_pattern, minlength=n_pat)
    first_unit = np.full(n_pat, -1, dtype=np.int64)
    order = np.argsort(unit_pattern, kind="stable")
    first_idx = np.r_[0, np.flatnonzero(np.diff(unit_pattern[order])) + 1]
    first_unit[unit_pattern[order][first_idx]] = order[first_idx]
    # ratings of the representative units, grouped by pattern
    lengths = np.diff(np.r_[starts, unit.size])
    rep_start = starts[first_unit]
    rep_len = lengths[first_unit]
    sel = np.repeat(rep_start, rep_len) + (
        np.arange(rep_len.sum()) - np.repeat(np.cumsum(rep_len) - rep_len, rep_len)
    )
    p_pattern = np.repeat(np.arange(n_pat), rep_len)
    systems, questions = (_item_values(data, col) for col in (S.SYSTEM, S.QUESTION))
    unit_ids = _unit_ids(items, seg_vals, unit_dim, dims)
    return LatentClassData(
        unit_ids=unit_ids,
        unit_item=tuple(items),
        unit_segment=tuple(seg_vals),
        raters=raters,
        dimensions=dims,
        designs=designs,
        categories=categories,
        n_categories=n_cat,
        unit=unit,
        rater=rater,
        dim=dim,
        design=design,
        code=code,
        unit_dim=unit_dim,
        unit_gold=unit_gold,
        unit_pattern=unit_pattern,
        pattern_count=count,
        pattern_dim=unit_dim[first_unit],
        pattern_gold=unit_gold[first_unit],
        p_pattern=p_pattern,
        p_rater=rater[sel],
        p_dim=dim[sel],
        p_design=design[sel],
        p_code=code[sel],
        repeats=repeats,
        gold_used=bool(use_gold and (unit_gold >= 0).any()),
        unit_system=_per_item(systems, items),
        unit_question=_per_item(questions, items),
        unit_gold_data=gold_data,
        base_dimensions=base_dims,
        rater_is_human=_rater_is_human(data, raters),
        obs_repeat=frame.get_column("_repeat").to_numpy()[rows].astype(bool),
    )


def _rater_is_human(data: pl.DataFrame, raters: tuple[str, ...]) -> np.ndarray:
    """Whether each rater is human: every rating of the rater has ``rater_kind`` "human"
    (all True when the ratings have no ``rater_kind`` column)."""
    if S.RATER_KIND not in data.columns:
        return np.ones(len(raters), dtype=bool)
    human = (
        data.group_by(S.RATER)
        .agg((pl.col(S.RATER_KIND).cast(pl.String) == S.HUMAN).fill_null(False).all())
        .rows()
    )
    kind = {str(r): bool(h) for r, h in human}
    return np.array([kind[r] for r in raters], dtype=bool)


def _base_dimensions(data: pl.DataFrame, dims: tuple[str, ...]) -> tuple[str, ...] | None:
    """The ``base_dimension`` of every dimension (label space) of a table of several
    schemes; None when the ratings have no such column. A dimension with several base
    dimensions is an error."""
    if S.BASE_DIMENSION not in data.columns:
        return None
    pairs = data.select(pl.col(S.DIMENSION), pl.col(S.BASE_DIMENSION).cast(pl.String)).unique()
    found: dict[str, list[str]] = {}
    for dim, base in pairs.iter_rows():
        found.setdefault(str(dim), []).append("" if base is None else str(base))
    bad = [
        f"dimension {d!r} has base dimensions {sorted(b)}" for d, b in found.items() if len(b) > 1
    ]
    empty = [f"dimension {d!r} has no base dimension" for d, b in found.items() if b == [""]]
    if bad or empty:
        raise ModelInputError(
            [*bad, *empty, "column 'base_dimension' must give one dimension per label space"]
        )
    return tuple(found[d][0] for d in dims)


#: characters that :func:`raterstats.schema.unit_id` escapes (and the separators it writes)
_ID_SPECIAL = ["\\", S.DIMENSION_SEP, ":"]


def _unit_ids(
    items: Sequence[str], segments: Sequence[str], unit_dim: np.ndarray, dims: tuple[str, ...]
) -> tuple[str, ...]:
    """:func:`raterstats.schema.unit_id` of every unit (segment ``""``: a whole-item unit;
    the dimension only when there are several), computed as a polars column
    (:func:`raterstats.schema.unit_id_expr`)."""
    if len(dims) == 1 and segments.count("") == len(segments):
        # whole items of one dimension: the ids are the items, unless one needs escaping
        plain = pl.Series(items, dtype=pl.String)
        if not plain.str.contains_any(_ID_SPECIAL).any():
            return tuple(items)
    frame = pl.DataFrame(
        {"item": list(items), "segment": list(segments)},
        schema={"item": pl.String, "segment": pl.String},
    ).with_columns(pl.when(pl.col("segment") != "").then(pl.col("segment")))
    dim = None
    if len(dims) > 1:
        frame = frame.with_columns(
            pl.Series("dim", list(dims), dtype=pl.String).gather(pl.Series(unit_dim))
        )
        dim = "dim"
    parts = [pl.col(c) for c in ("item", "segment", dim) if c is not None]
    special = frame.select(pl.any_horizontal([p.str.contains_any(_ID_SPECIAL) for p in parts]))
    if not special.to_series().any():  # nothing to escape: the parts joined as they are
        seg = pl.concat_str([pl.col("item"), pl.lit(S.UNIT_SEP), pl.col("segment")])
        expr = pl.coalesce(seg, pl.col("item"))
        if dim is not None:
            expr = pl.concat_str([expr, pl.lit(S.DIMENSION_SEP), pl.col(dim)])
    else:
        expr = S.unit_id_expr("item", "segment", dimension=dim)
    return tuple(frame.select(expr).to_series().to_list())


def _per_item(values: dict[str, str], items: Sequence[str]) -> tuple[str, ...]:
    """The value of an item-level column for every unit's item (``""``: none)."""
    if not values:
        return ("",) * len(items)
    return tuple(values.get(it, "") for it in items)


def _item_values(data: pl.DataFrame, column: str) -> dict[str, str]:
    """``{item: value}`` of an item-level column (system, question), skipping missing
    values; empty when the ratings have no such column."""
    if column not in data.columns:
        return {}
    t = (
        data.select(pl.col(S.ITEM).cast(pl.String), pl.col(column).cast(pl.String))
        .drop_nulls()
        .unique(S.ITEM, keep="first", maintain_order=True)
    )
    return {str(k): str(v) for k, v in t.iter_rows()}


def data_from_groups(const: xr.Dataset, observed: xr.Dataset) -> LatentClassData:
    """Rebuild :class:`LatentClassData` from a fit's ``constant_data`` and ``observed_data``
    (what downstream functions use on a saved file).

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> g = d.data_groups()
    >>> back = data_from_groups(g["constant_data"], g["observed_data"])
    >>> back.unit_ids == d.unit_ids, back.unit_system == d.unit_system
    (True, True)
    """
    raters = tuple(str(x) for x in const["rater"].values)
    dims = tuple(str(x) for x in const["dimension"].values)
    designs = tuple(str(x) for x in const["design"].values)
    n_cat = const["n_categories"].values.astype(np.int64)
    labels = const["category_label"].values
    categories = tuple(tuple(str(x) for x in labels[d, : n_cat[d]]) for d in range(len(dims)))
    unit = const["obs_unit"].values.astype(np.int64)
    rater = const["obs_rater"].values.astype(np.int64)
    dim = const["obs_dimension"].values.astype(np.int64)
    design = const["obs_design"].values.astype(np.int64)
    code = observed["rating"].values.astype(np.int64)
    unit_dim = const["unit_dim"].values.astype(np.int64)
    unit_gold = const["unit_gold"].values.astype(np.int64)
    unit_pattern = const["unit_pattern"].values.astype(np.int64)
    n_pat = int(unit_pattern.max()) + 1
    count = np.bincount(unit_pattern, minlength=n_pat)
    first_unit = np.zeros(n_pat, dtype=np.int64)
    first_unit[unit_pattern[::-1]] = np.arange(unit_pattern.size)[::-1]
    starts = np.r_[0, np.flatnonzero(np.diff(unit)) + 1]
    lengths = np.diff(np.r_[starts, unit.size])
    rep_start, rep_len = starts[first_unit], lengths[first_unit]
    sel = np.repeat(rep_start, rep_len) + (
        np.arange(rep_len.sum()) - np.repeat(np.cumsum(rep_len) - rep_len, rep_len)
    )
    items = tuple(str(x) for x in const["item"].values)
    segs = tuple(str(x) for x in const["segment"].values)
    unit_ids = _unit_ids(items, segs, unit_dim, dims)
    return LatentClassData(
        unit_ids=unit_ids,
        unit_item=items,
        unit_segment=segs,
        raters=raters,
        dimensions=dims,
        designs=designs,
        categories=categories,
        n_categories=n_cat,
        unit=unit,
        rater=rater,
        dim=dim,
        design=design,
        code=code,
        unit_dim=unit_dim,
        unit_gold=unit_gold,
        unit_pattern=unit_pattern,
        pattern_count=count,
        pattern_dim=unit_dim[first_unit],
        pattern_gold=unit_gold[first_unit],
        p_pattern=np.repeat(np.arange(n_pat), rep_len),
        p_rater=rater[sel],
        p_dim=dim[sel],
        p_design=design[sel],
        p_code=code[sel],
        repeats=str(const.attrs.get("repeats", "include")),
        gold_used=bool(const.attrs.get("gold_used", 0)),
        unit_system=_unit_strings(const, "unit_system"),
        unit_question=_unit_strings(const, "unit_question"),
        unit_gold_data=const["gold"].values.astype(np.int64) if "gold" in const else None,
        base_dimensions=(
            tuple(str(x) for x in const["base_dimension"].values)
            if "base_dimension" in const
            else None
        ),
        rater_is_human=(
            const["rater_is_human"].values.astype(bool)
            if "rater_is_human" in const
            else np.ones(len(raters), dtype=bool)
        ),
        obs_repeat=const["obs_repeat"].values.astype(bool) if "obs_repeat" in const else None,
    )


def _unit_strings(const: xr.Dataset, name: str) -> tuple[str, ...] | None:
    """A per-unit string variable of ``constant_data`` (None in fits saved before it was
    stored)."""
    if name not in const:
        return None
    return tuple(str(x) for x in const[name].values)


# ---------------------------------------------------------------------- majority vote


def majority_vote(data: LatentClassData, *, smoothing: float = 0.5) -> np.ndarray:
    """``(n_units, K)`` soft majority vote: category counts per unit plus ``smoothing``
    on valid classes, normalised (gold units one-hot).

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> majority_vote(d).shape
    (18, 3)
    """
    K = data.K
    counts = np.bincount(data.unit * K + data.code, minlength=data.n_units * K).reshape(-1, K)
    mask = data.class_mask(data.unit_dim, data.unit_gold)
    q = (counts + smoothing) * mask
    return q / q.sum(axis=1, keepdims=True)


def majority_vote_stats(data: LatentClassData, *, smoothing: float = 0.5) -> dict[str, np.ndarray]:
    """Summaries of the ratings against the soft majority vote, for initial values:
    ``agreement`` per cell (rater x dimension x design, flat), ``confusion`` per cell
    ``(C, K, K)`` (true x rated, row-normalised), ``label_freq`` per rater x dimension
    ``(R, D, K)`` and ``prevalence`` ``(D, K)``."""
    mv = majority_vote(data, smoothing=smoothing)
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C = R * D * G
    cell = data.cell
    q = mv[data.unit]  # (N, K)
    agree = np.bincount(cell, q[np.arange(data.n_ratings), data.code], minlength=C)
    n = np.bincount(cell, minlength=C)
    agreement = (agree + 1.0) / (n + 2.0)
    conf = np.zeros((C * K, K))
    for t in range(K):
        conf[:, t] = np.bincount(cell * K + data.code, q[:, t], minlength=C * K)
    conf = conf.reshape(C, K, K).transpose(0, 2, 1) + 0.5 * np.eye(K) + 0.1
    valid = data.valid[(np.arange(C) // G) % D]
    conf = np.where(valid[:, :, None] & valid[:, None, :], conf, 0.0)
    conf = conf / np.maximum(conf.sum(axis=-1, keepdims=True), 1e-300)
    rd = data.rater * D + data.dim
    freq = np.bincount(rd * K + data.code, minlength=R * D * K).reshape(R, D, K) + 1.0
    freq = np.where(data.valid[None], freq, 0.0)
    freq = freq / freq.sum(axis=-1, keepdims=True)
    prev = np.zeros((D, K))
    np.add.at(prev, data.unit_dim, mv)
    prev = np.where(data.valid, prev + 1.0, 0.0)
    prev = prev / prev.sum(axis=-1, keepdims=True)
    return {"agreement": agreement, "confusion": conf, "label_freq": freq, "prevalence": prev}
