"""Shared machinery of the latent-class (true-label) models: data layout, marginal
likelihood by log-sum-exp over the true class, in PyTensor (for NUTS / MAP / ADVI) and in
NumPy (item posteriors draw by draw, per-item log-likelihood, EM).

Layout. A *unit* is what has a true label: an (item, segment, dimension) triple (segment
empty for whole-item ratings). A *cell* is a (rater, dimension, design) triple: rater
parameters live on cells. Ratings are sorted by unit. Units with the same *pattern* (same
dimension, gold label and multiset of (cell, rated category)) have the same likelihood and
label posterior, so the likelihood is evaluated once per pattern and weighted by its count
(the vectorised likelihood over rating patterns). Categories are padded to the largest
number of levels ``K`` over dimensions; padded classes get prior mass zero.

The NumPy kernels at the bottom import neither polars nor xarray and put draws first:
per-rating log-probability arrays have shape ``(..., n_ratings, K)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.lazy import LazyModule
from raterstats.models.base import Model, ModelInputError
from raterstats.ratings import Ratings
from raterstats.scales import CategoricalScale, format_level

if TYPE_CHECKING:
    import pytensor.tensor as pt
else:
    pt = LazyModule("pytensor.tensor")

#: Log-probability used for impossible classes in PyTensor graphs (finite, so gradients
#: stay finite; exp of it is exactly 0 in float64).
NEG = -1e10

UNIT_SEP = "::"


@dataclass(frozen=True)
class LatentClassData:
    """Index arrays of categorical ratings for the latent-class models.

    Per rating (sorted by unit): ``unit``, ``cell``, ``rater``, ``dim``, ``design``,
    ``code``; per unit: ``unit_dim``, ``unit_gold`` (-1: none), ``unit_pattern``; per
    pattern: ``pattern_count``, ``pattern_dim``, ``pattern_gold`` and the ratings of one
    representative unit (``p_*`` arrays, sorted by pattern); per cell: ``cell_rater``,
    ``cell_dim``, ``cell_design`` (full rater x dimension x design grid, row-major).
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

    @property
    def n_units(self) -> int:
        return len(self.unit_ids)

    @property
    def n_patterns(self) -> int:
        return int(self.pattern_count.size)

    @property
    def n_ratings(self) -> int:
        return int(self.code.size)

    @property
    def K(self) -> int:
        return int(self.n_categories.max())

    @property
    def n_cells(self) -> int:
        return len(self.raters) * len(self.dimensions) * len(self.designs)

    def cell_of(self, rater: np.ndarray, dim: np.ndarray, design: np.ndarray) -> np.ndarray:
        """Flat cell index of (rater, dimension, design) index arrays."""
        D, G = len(self.dimensions), len(self.designs)
        return (rater * D + dim) * G + design

    @property
    def cell(self) -> np.ndarray:
        return self.cell_of(self.rater, self.dim, self.design)

    @property
    def p_cell(self) -> np.ndarray:
        return self.cell_of(self.p_rater, self.p_dim, self.p_design)

    @property
    def valid(self) -> np.ndarray:
        """``(dimension, K)`` True where the category exists on that dimension's scale."""
        return np.arange(self.K)[None, :] < self.n_categories[:, None]

    def class_mask(self, dims: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """``(n, K)`` True where the true class is possible (valid category, gold clamp)."""
        mask = self.valid[dims].copy()
        has = gold >= 0
        if has.any():
            clamp = np.zeros((int(has.sum()), self.K), dtype=bool)
            clamp[np.arange(clamp.shape[0]), gold[has]] = True
            mask[has] = clamp
        return mask

    def coords(self) -> dict[str, Any]:
        """Coordinates with the user's ids."""
        return {
            "rater": list(self.raters),
            "dimension": list(self.dimensions),
            "design": list(self.designs),
            "category": list(range(self.K)),
            "unit": list(range(self.n_units)),
        }

    def data_groups(self) -> dict[str, xr.Dataset]:
        """``observed_data`` and ``constant_data``: everything needed to recompute item
        posteriors and log-likelihoods from a saved fit."""
        K = self.K
        labels = np.full((len(self.dimensions), K), "", dtype=object)
        for d, cats in enumerate(self.categories):
            labels[d, : len(cats)] = cats
        unit_coords = {
            "unit": np.arange(self.n_units),
            "item": ("unit", np.asarray(self.unit_item, dtype=str)),
            "segment": ("unit", np.asarray(self.unit_segment, dtype=str)),
            "unit_dimension": ("unit", np.asarray(self.dimensions, dtype=str)[self.unit_dim]),
        }
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


def prepare_latent_class(
    ratings: Ratings, *, repeats: str = "include", use_gold: bool = True
) -> LatentClassData:
    """Check categorical ratings and build the :class:`LatentClassData` layout.

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

    gold_col = S.GOLD in data.columns and use_gold
    seg = pl.col(S.SEGMENT).fill_null("")
    frame = data.select(
        pl.col(S.ITEM).cast(pl.String),
        seg.cast(pl.String).alias("_seg"),
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
        (pl.col(S.GOLD) if gold_col else pl.lit(None, dtype=pl.String)).alias("_gold"),
    )
    # units sorted by (item, segment, dimension)
    frame = frame.sort(S.ITEM, "_seg", "_dim", "_rater", "_design", "_code")
    units = frame.select(S.ITEM, "_seg", "_dim").unique(maintain_order=True)
    units = units.with_row_index("_unit")
    frame = frame.join(units, on=[S.ITEM, "_seg", "_dim"], how="left", maintain_order="left")

    # gold per unit: level text -> code on the unit's dimension; disagreeing gold is an error
    unit_gold = np.full(units.height, -1, dtype=np.int64)
    if gold_col:
        g = (
            frame.filter(pl.col("_gold").is_not_null())
            .group_by("_unit", "_dim")
            .agg(pl.col("_gold").unique())
        )
        bad = []
        for u, d, vals in g.iter_rows():
            if len(vals) > 1:
                bad.append(f"unit {u}: several gold labels {vals}")
                continue
            lookup = {c: i for i, c in enumerate(categories[d])}
            if vals[0] not in lookup:
                bad.append(f"gold {vals[0]!r} is not a level of dimension {dims[d]!r}")
                continue
            unit_gold[u] = lookup[vals[0]]
        if bad:
            raise ModelInputError(
                bad[:20] + ([f"... {len(bad) - 20} more"] if len(bad) > 20 else [])
            )

    unit = frame.get_column("_unit").to_numpy().astype(np.int64)
    rater = frame.get_column("_rater").to_numpy()
    dim = frame.get_column("_dim").to_numpy()
    design = frame.get_column("_design").to_numpy()
    code = frame.get_column("_code").to_numpy()
    unit_dim = units.get_column("_dim").to_numpy()

    # rating patterns: (dimension, gold, sorted (cell, code) list)
    D, G = len(dims), len(designs)
    K = int(n_cat.max())
    key = ((rater * D + dim) * G + design) * K + code
    pat = (
        pl.DataFrame({"u": unit, "k": key})
        .group_by("u", maintain_order=True)
        .agg(pl.col("k"))
        .sort("u")
        .with_columns(
            pl.Series("d", unit_dim),
            pl.Series("g", unit_gold),
        )
    )
    groups = (
        pat.group_by("d", "g", "k", maintain_order=True)
        .agg(pl.col("u"))
        .with_row_index("p")
        .select("p", "u")
        .explode("u")
        .sort("u")
    )
    unit_pattern = groups.get_column("p").to_numpy().astype(np.int64)
    n_pat = int(unit_pattern.max()) + 1
    count = np.bincount(unit_pattern, minlength=n_pat)
    first_unit = np.full(n_pat, -1, dtype=np.int64)
    order = np.argsort(unit_pattern, kind="stable")
    first_idx = np.r_[0, np.flatnonzero(np.diff(unit_pattern[order])) + 1]
    first_unit[unit_pattern[order][first_idx]] = order[first_idx]
    # ratings of the representative units, grouped by pattern
    starts = np.r_[0, np.flatnonzero(np.diff(unit)) + 1]
    lengths = np.diff(np.r_[starts, unit.size])
    rep_start = starts[first_unit]
    rep_len = lengths[first_unit]
    sel = np.repeat(rep_start, rep_len) + (
        np.arange(rep_len.sum()) - np.repeat(np.cumsum(rep_len) - rep_len, rep_len)
    )
    p_pattern = np.repeat(np.arange(n_pat), rep_len)
    seg_vals = units.get_column("_seg").to_list()
    items = units.get_column(S.ITEM).to_list()
    unit_ids = tuple(
        (it if not sg else f"{it}{UNIT_SEP}{sg}") + ("" if D == 1 else f"|{dims[d]}")
        for it, sg, d in zip(items, seg_vals, unit_dim, strict=True)
    )
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
        gold_used=bool(gold_col and (unit_gold >= 0).any()),
    )


def data_from_groups(const: xr.Dataset, observed: xr.Dataset) -> LatentClassData:
    """Rebuild :class:`LatentClassData` from a fit's ``constant_data`` and ``observed_data``
    (what downstream functions use on a saved file)."""
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
    D = len(dims)
    unit_ids = tuple(
        (it if not sg else f"{it}{UNIT_SEP}{sg}") + ("" if D == 1 else f"|{dims[d]}")
        for it, sg, d in zip(items, segs, unit_dim, strict=True)
    )
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
    )


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


# ---------------------------------------------------------------------- PyTensor graphs


def segment_sum_pt(values: Any, index: np.ndarray, n: int) -> Any:
    """Sum of ``values`` (first axis) by group ``index`` into ``n`` rows (PyTensor)."""
    shape = (n, *[values.shape[i] for i in range(1, values.ndim)])
    return pt.zeros(shape, dtype=values.dtype)[index].inc(values)


def pattern_loglik_pt(summed: Any, data: LatentClassData, log_prior: Any) -> tuple[Any, Any]:
    """Marginal log-likelihood per pattern and log joint per pattern x class (PyTensor).

    ``summed``: ``(n_patterns, K)`` sum over the pattern's ratings of log P(rating | true
    class); ``log_prior``: ``(n_dimensions, K)`` log class prior. Returns
    ``(loglik (n_patterns,), log_joint (n_patterns, K))``.
    """
    mask = data.class_mask(data.pattern_dim, data.pattern_gold)
    joint = pt.where(mask, log_prior[data.pattern_dim] + summed, NEG)
    return pt.logsumexp(joint, axis=-1), joint


def padded_log_simplex_pt(values: Any, valid: np.ndarray) -> Any:
    """Log of simplex values padded to ``K`` with ``NEG`` where ``valid`` is False."""
    safe = pt.where(valid, values, 1.0)
    return pt.where(valid, pt.log(safe), NEG)


# ---------------------------------------------------------------------- NumPy kernels


def logsumexp_np(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Stable log-sum-exp along ``axis`` (``-inf`` rows stay ``-inf``)."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - m), axis=axis)) + np.squeeze(m, axis=axis)


def segment_sum_np(values: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """Sum ``values`` (..., N, K) over the rating axis by sorted group ``index`` into n."""
    starts = np.r_[0, np.flatnonzero(np.diff(index)) + 1]
    out = np.add.reduceat(values, starts, axis=-2)
    if starts.size == n:
        return out
    full = np.zeros((*values.shape[:-2], n, values.shape[-1]), dtype=values.dtype)
    full[..., index[starts], :] = out
    return full


def log_joint_np(
    per_rating_logp: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    group_dim: np.ndarray,
    group_gold: np.ndarray,
    log_prior: np.ndarray,
    valid: np.ndarray,
) -> np.ndarray:
    """``(..., n_groups, K)`` log P(class) + sum of log P(rating | class), ``-inf`` where
    the class is impossible (invalid category or not the gold label)."""
    summed = segment_sum_np(per_rating_logp, group, n_groups)
    K = valid.shape[1]
    mask = valid[group_dim].copy()
    has = group_gold >= 0
    if has.any():
        clamp = np.zeros((int(has.sum()), K), dtype=bool)
        clamp[np.arange(clamp.shape[0]), group_gold[has]] = True
        mask[has] = clamp
    with np.errstate(divide="ignore", invalid="ignore"):
        joint = np.where(mask, log_prior[..., group_dim, :] + summed, -np.inf)
    return joint


def entropy_np(prob: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy (nats) along ``axis``; 0 log 0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(prob > 0, prob * np.log(prob), 0.0)
    return -np.sum(t, axis=axis)


# ---------------------------------------------------------------------- model base class


class LatentClassModel(Model):
    """Base of the latent-class models (MACE, Dawid-Skene): the data layout, the data
    groups, per-unit log-likelihood marginalised over the true class, label posteriors
    recovered draw by draw, and posterior predictive replicates.

    A subclass implements ``build_model(data)``, ``rating_log_prob(params, data)`` (NumPy:
    ``(S, n_pattern_ratings, K)`` log P(rating | class) for S parameter draws),
    ``simulate_ratings(params, data, true_class, rng)`` and names the posterior variables
    it needs in ``param_names`` (``prevalence`` (dimension, category) among them).
    """

    name = "latent_class"
    abstract = True
    default_options: ClassVar[dict[str, Any]] = {"repeats": "include", "use_gold": True}
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi", "em")
    param_names: ClassVar[tuple[str, ...]] = ("prevalence",)
    _CHUNK = 4_000_000

    def _check_options(self) -> None:
        problems = []
        if self._options["repeats"] not in ("include", "exclude"):
            problems.append(
                f"repeats must be 'include' or 'exclude', not {self._options['repeats']!r}"
            )
        if not isinstance(self._options["use_gold"], bool):
            problems.append("use_gold must be True or False")
        if problems:
            raise ValueError("; ".join(problems))

    def prepare(self, ratings: Ratings) -> LatentClassData:
        return prepare_latent_class(
            ratings, repeats=self._options["repeats"], use_gold=self._options["use_gold"]
        )

    def data_groups(self, data: Any, model: Any) -> dict[str, xr.Dataset]:
        return data.data_groups()

    def nuts_start(self, data: Any, random_seed: int) -> dict[str, np.ndarray] | None:
        """The EM estimate (restarts included, the best by its objective) as constrained
        values by variable name: where NUTS chains start by default."""
        em = self.fit_em(data, random_seed=random_seed, progress=False)
        post = em["posterior"].to_dataset()
        return {str(k): np.asarray(v.values[0, 0], dtype=float) for k, v in post.items()}

    # -- to implement
    def rating_log_prob(self, params: dict[str, np.ndarray], data: LatentClassData) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement rating_log_prob")

    def simulate_ratings(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        true_class: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement simulate_ratings")

    # -- shared
    def params_from_posterior(self, posterior: xr.Dataset) -> dict[str, np.ndarray]:
        """Posterior draws flattened to ``(S, ...)`` arrays of the variables needed."""
        out = {}
        for n in self.param_names:
            v = posterior[n]
            out[n] = v.values.reshape(-1, *v.shape[2:])
        return out

    def pattern_log_joint(self, params: dict[str, np.ndarray], data: LatentClassData) -> np.ndarray:
        """``(S, n_patterns, K)`` log P(class, ratings of the pattern)."""
        per = self.rating_log_prob(params, data)
        with np.errstate(divide="ignore"):
            log_prior = np.log(params["prevalence"])
        return log_joint_np(
            per,
            data.p_pattern,
            data.n_patterns,
            data.pattern_dim,
            data.pattern_gold,
            log_prior,
            data.valid,
        )

    def _chunks(self, n_draws: int, data: LatentClassData) -> list[slice]:
        per = max(1, self._CHUNK // max(1, data.p_code.size * data.K))
        return [slice(i, min(i + per, n_draws)) for i in range(0, n_draws, per)]

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: dict[str, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``T (S, E, K)``: log P(rated category | true class) of every (parameter cell,
        rated category) pair of ``lay`` (:func:`table_layout`) for S draws, and the log class
        prior ``(S, D, K)``; None to use the per-rating path (:meth:`rating_log_prob`)."""
        return None

    def table_rows(self, data: LatentClassData) -> np.ndarray:
        """The parameter cell of every pattern rating (rows of :meth:`draw_tables`)."""
        return data.p_cell

    def draws_summary(
        self, posterior: xr.Dataset, data: LatentClassData, *, loglik: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Label posterior per pattern ``(P, K)`` averaged over draws, and the per-pattern
        log-likelihood per draw ``(S, P)`` (None when ``loglik`` is False)."""
        params = self.params_from_posterior(posterior)
        n = next(iter(params.values())).shape[0]
        prob = np.zeros((data.n_patterns, data.K))
        ll = np.empty((n, data.n_patterns)) if loglik else None
        lay = table_layout(data, self.table_rows(data))
        # few draws of a small layout (EM, MAP): NumPy, without numba's start-up cost
        small = n * data.p_code.size * data.K <= EM_NUMPY_MAX
        for sl in self._chunks(n, data):
            sub = {k: v[sl] for k, v in params.items()}
            tables = None if small else self.draw_tables(sub, data, lay)
            if tables is not None:
                from raterstats.models.latent_class.kernels import pattern_posterior_draws

                T, log_prior = tables
                out = ll[sl] if ll is not None else np.empty((0, 0))
                pattern_posterior_draws(
                    np.ascontiguousarray(T), np.ascontiguousarray(log_prior), lay["p_e"],
                    lay["p_start"], lay["pattern_dim"], lay["mask"], prob, out, ll is not None,
                )  # fmt: skip
                if ll is not None:
                    ll[sl] = out
                continue
            joint = self.pattern_log_joint(sub, data)
            lse = logsumexp_np(joint, axis=-1)
            with np.errstate(invalid="ignore"):
                prob += np.exp(joint - lse[..., None]).sum(axis=0)
            if ll is not None:
                ll[sl] = lse
        return prob / n, ll

    def log_likelihood(self, dt: xr.DataTree, data: Any, model: Any) -> xr.Dataset:
        post = dt["posterior"].to_dataset()
        _, ll = self.draws_summary(post, data, loglik=True)
        assert ll is not None
        n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
        per_unit = ll[:, data.unit_pattern].reshape(n_chain, n_draw, data.n_units)
        coords = data.data_groups()["constant_data"].coords
        return xr.Dataset(
            {"ratings": (("chain", "draw", "unit"), per_unit)},
            coords={
                "chain": post["chain"].values,
                "draw": post["draw"].values,
                "unit": coords["unit"].values,
                "item": ("unit", coords["item"].values),
                "unit_dimension": ("unit", coords["unit_dimension"].values),
            },
        )

    def extra_groups(self, dt: xr.DataTree, data: Any, model: Any) -> dict[str, xr.Dataset]:
        prob, _ = self.draws_summary(dt["posterior"].to_dataset(), data, loglik=False)
        p_unit = prob[data.unit_pattern]
        return {
            "label_posterior": xr.Dataset(
                {"prob": (("unit", "category"), p_unit)},
                coords={"unit": np.arange(data.n_units), "category": np.arange(data.K)},
                attrs={"description": "P(true label = category | data), averaged over draws"},
            )
        }

    def posterior_predictive(
        self, dt: xr.DataTree, data: Any, model: Any, rng: np.random.Generator
    ) -> xr.Dataset:
        post = dt["posterior"].to_dataset()
        reps = replicate_ratings(self, post, data, rng)
        n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
        return xr.Dataset(
            {"rating": (("chain", "draw", "obs"), reps.reshape(n_chain, n_draw, -1))},
            coords={
                "chain": post["chain"].values,
                "draw": post["draw"].values,
                "obs": np.arange(data.n_ratings),
            },
        )


def sample_true_class(
    model: LatentClassModel,
    params: dict[str, np.ndarray],
    data: LatentClassData,
    rng: np.random.Generator,
) -> np.ndarray:
    """``(S, n_units)`` true classes drawn from their conditional posterior, draw by draw."""
    joint = model.pattern_log_joint(params, data)
    lse = logsumexp_np(joint, axis=-1)
    prob = np.exp(joint - lse[..., None])[:, data.unit_pattern]  # (S, U, K)
    cum = np.cumsum(prob, axis=-1)
    u = rng.random((*prob.shape[:-1], 1))
    return np.minimum(np.sum(u > cum, axis=-1), data.K - 1)


def replicate_ratings(
    model: LatentClassModel,
    posterior: xr.Dataset,
    data: LatentClassData,
    rng: np.random.Generator,
    *,
    draw_index: np.ndarray | None = None,
) -> np.ndarray:
    """``(S, n_ratings)`` replicated ratings (category codes): for each posterior draw,
    true labels from their conditional posterior, then every observed rating replicated
    from the rater model (same units, raters, dimensions and designs)."""
    params = model.params_from_posterior(posterior)
    if draw_index is not None:
        params = {k: v[draw_index] for k, v in params.items()}
    n = next(iter(params.values())).shape[0]
    out = np.empty((n, data.n_ratings), dtype=np.int16)
    for sl in model._chunks(n, data):
        p = {k: v[sl] for k, v in params.items()}
        truth = sample_true_class(model, p, data, rng)
        out[sl] = model.simulate_ratings(p, data, truth, rng)
    return out


__all__ = [
    "NEG",
    "LatentClassData",
    "LatentClassModel",
    "class_counts",
    "data_from_groups",
    "entropy_np",
    "log_joint_np",
    "logsumexp_np",
    "majority_vote",
    "padded_log_simplex_pt",
    "pattern_loglik_pt",
    "prepare_latent_class",
    "replicate_ratings",
    "sample_true_class",
    "segment_sum_np",
    "segment_sum_pt",
]


def padded_dirichlet(
    name: str,
    conc: Any,
    n_categories: np.ndarray,
    lead_dims: tuple[str, ...],
    lead_sizes: tuple[int, ...],
) -> Any:
    """A Dirichlet variable with dims ``(*lead_dims, "dimension", "category")`` whose rows
    have each dimension's own number of categories, padded with zeros to ``K``.

    ``conc`` is a scalar concentration or an array over categories. When every dimension
    has ``K`` categories this is one ``pm.Dirichlet`` called ``name``; otherwise one
    Dirichlet per number of categories (``{name}_k{k}``) and ``name`` is a Deterministic.
    """
    import pymc as pm

    D, K = int(n_categories.size), int(n_categories.max())
    dims = (*lead_dims, "dimension", "category")

    def conc_for(k: int, rows: int) -> np.ndarray:
        c = np.asarray(conc, dtype=float)
        if c.ndim == 0:
            c = np.full(k, float(c))
        elif c.shape[-1] != k:
            raise ValueError(f"{name}: concentration of length {c.shape[-1]} for {k} categories")
        return np.broadcast_to(c, (*lead_sizes, rows, k)).copy()

    ks = sorted({int(k) for k in n_categories})
    if len(ks) == 1:
        return pm.Dirichlet(name, a=conc_for(K, D), dims=dims)
    full = pt.zeros((*lead_sizes, D, K))
    for k in ks:
        idx = np.flatnonzero(n_categories == k)
        a = conc_for(k, idx.size)
        v = pm.Dirichlet(f"{name}_k{k}", a=a, shape=a.shape)
        full = pt.set_subtensor(full[..., idx, :k], v)
    return pm.Deterministic(name, full, dims=dims)


def padded_dirichlet_init(
    name: str, value: np.ndarray, n_categories: np.ndarray
) -> dict[str, np.ndarray]:
    """Initial values for :func:`padded_dirichlet` from a padded ``(..., D, K)`` array."""
    ks = sorted({int(k) for k in n_categories})

    def norm(v: np.ndarray) -> np.ndarray:
        v = np.clip(v, 1e-3, None)
        return v / v.sum(axis=-1, keepdims=True)

    if len(ks) == 1:
        return {name: norm(value)}
    out = {}
    for k in ks:
        idx = np.flatnonzero(n_categories == k)
        out[f"{name}_k{k}"] = norm(value[..., idx, :k])
    return out


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


def table_layout(data: LatentClassData, row: np.ndarray) -> dict[str, np.ndarray]:
    """Index arrays of the compiled densities: unique (row, rated category) pairs ``e``
    of the pattern ratings (``e_row``, ``e_code``), each pattern rating's ``p_e``, pattern
    boundaries ``p_start``, class ``mask`` and pattern weights."""
    K = data.K
    key = row.astype(np.int64) * K + data.p_code
    uniq, p_e = np.unique(key, return_inverse=True)
    counts = np.bincount(data.p_pattern, minlength=data.n_patterns)
    return {
        "e_row": (uniq // K).astype(np.int64),
        "e_code": (uniq % K).astype(np.int64),
        "p_e": p_e.astype(np.int64),
        "p_start": np.r_[0, np.cumsum(counts)].astype(np.int64),
        "pattern_dim": data.pattern_dim.astype(np.int64),
        "pattern_w": data.pattern_count.astype(np.float64),
        "mask": data.class_mask(data.pattern_dim, data.pattern_gold),
    }


def simplex_forward_np(p: np.ndarray) -> np.ndarray:
    """PyMC's simplex transform (forward) along the last axis."""
    lp = np.log(np.clip(p, 1e-12, None))
    return lp[..., :-1] - lp.mean(axis=-1, keepdims=True)


def simplex_backward_np(v: np.ndarray) -> np.ndarray:
    """PyMC's simplex transform (backward) along the last axis."""
    full = np.concatenate([v, -v.sum(axis=-1, keepdims=True)], axis=-1)
    e = np.exp(full - full.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def pack_rows(p: np.ndarray, n_cat_rows: np.ndarray) -> np.ndarray:
    """Simplex values of padded probability rows ``(n, K)`` concatenated row by row."""
    return (
        np.concatenate(
            [simplex_forward_np(p[i, :k] / p[i, :k].sum()) for i, k in enumerate(n_cat_rows)]
        )
        if len(n_cat_rows)
        else np.zeros(0)
    )


def unpack_rows(x: np.ndarray, n_cat_rows: np.ndarray, K: int) -> np.ndarray:
    """Inverse of :func:`pack_rows`: padded ``(n, K)`` probability rows."""
    out = np.zeros((n_cat_rows.size, K))
    pos = 0
    ks = np.unique(n_cat_rows)
    if ks.size == 1:
        k = int(ks[0])
        out[:, :k] = simplex_backward_np(x[: n_cat_rows.size * (k - 1)].reshape(-1, k - 1))
        return out
    for i, k in enumerate(n_cat_rows):
        out[i, :k] = simplex_backward_np(x[pos : pos + k - 1])
        pos += k - 1
    return out


def record_restarts(dt: xr.DataTree, runs: list[dict[str, Any]], best: int) -> None:
    """Store each restart's objective at the end of its run (JSON list) and the index of
    the one kept in ``sample_stats.attrs`` (``restart_loglik``, ``best_restart``)."""
    dt["sample_stats"].attrs["restart_loglik"] = json.dumps([float(r["objective"]) for r in runs])
    dt["sample_stats"].attrs["best_restart"] = int(best)


def short_run_restarts(
    run: Callable[..., dict[str, Any]], *, restarts: int, short_iter: int, max_iter: int
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """EM restarts by the short-runs strategy (Biernacki, Celeux & Govaert 2003, "emEM").

    ``run(random_init=..., max_iter=..., finish=..., state=...)`` is one EM run returning a
    dict with ``objective``, ``loglik`` and ``state``. Every restart (the first from the
    majority vote, ``random_init=False``) runs ``short_iter`` iterations; the one with the
    highest objective is continued from its ``state`` to convergence. With one restart or
    ``short_iter >= max_iter`` every restart runs to convergence and the best by marginal
    likelihood is kept. Returns (best run, all runs, index of the best).

    Examples
    --------
    >>> calls = []
    >>> def run(random_init, max_iter, finish=True, state=None):
    ...     calls.append((random_init, max_iter, state))
    ...     obj = 1.0 if random_init else 2.0
    ...     return {"objective": obj, "loglik": obj, "state": "s" if state is None else state}
    >>> best, runs, i = short_run_restarts(run, restarts=3, short_iter=10, max_iter=500)
    >>> i, calls[-1]
    (0, (False, 500, 's'))
    """
    if restarts < 1:
        raise ValueError("restarts must be at least 1")
    if short_iter < 1:
        raise ValueError("short_iter must be at least 1")
    short = restarts > 1 and short_iter < max_iter
    runs = [
        run(random_init=r > 0, max_iter=short_iter if short else max_iter, finish=not short)
        for r in range(restarts)
    ]
    key = "objective" if short else "loglik"
    best = max(range(len(runs)), key=lambda i: runs[i][key])
    if short:
        runs[best] = run(random_init=False, max_iter=max_iter, state=runs[best]["state"])
    return runs[best], runs, best


# ---------------------------------------------------------------------- EM kernels (NumPy)

#: Pattern ratings x classes up to which EM runs on the NumPy kernels below: numba's first
#: use in a process costs about 0.8 s (loading its registries), more than a whole EM fit
#: of a small data set takes in NumPy.
EM_NUMPY_MAX = 200_000


def em_estep_np(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
) -> float:
    """NumPy twin of :func:`~raterstats.models.latent_class.kernels.em_estep`: fills the class
    posteriors ``q (P, K)`` of every pattern and returns the weighted log marginal likelihood."""
    P, K = mask.shape
    pat = np.repeat(np.arange(P), np.diff(p_start))
    s = np.array(log_prior[pattern_dim], dtype=float)
    for t in range(K):
        s[:, t] += np.bincount(pat, weights=T[p_e, t], minlength=P)
    s = np.where(mask, s, -np.inf)
    m = s.max(axis=1)
    ok = m > -np.inf
    m_safe = np.where(ok, m, 0.0)
    e = np.where(mask & ok[:, None], np.exp(s - m_safe[:, None]), 0.0)
    acc = e.sum(axis=1)
    pos = acc > 0.0
    q[:] = np.where(pos[:, None], e / np.where(pos, acc, 1.0)[:, None], 0.0)
    if not pos.all():
        return -np.inf
    return float(np.dot(pattern_w, m + np.log(acc)))


def em_accumulate_np(
    q: np.ndarray, p_e: np.ndarray, p_start: np.ndarray, pattern_w: np.ndarray, n_e: int
) -> np.ndarray:
    """NumPy twin of :func:`raterstats.models.latent_class.kernels.em_accumulate`:
    ``M[e, t] = sum over pattern ratings r with table row e of w_p q[p, t]``."""
    P, K = q.shape
    pat = np.repeat(np.arange(P), np.diff(p_start))
    wq = pattern_w[pat, None] * q[pat]
    return np.stack([np.bincount(p_e, weights=wq[:, t], minlength=n_e) for t in range(K)], axis=1)


def class_counts(data: LatentClassData, q: np.ndarray) -> np.ndarray:
    """Expected class counts per dimension, ``(D, K)``: the pattern counts times the class
    posteriors ``q (P, K)``, summed over each dimension's patterns.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3, random_seed=1).ratings)
    >>> q = np.full((d.n_patterns, d.K), 1.0 / d.K)
    >>> bool(np.allclose(class_counts(d, q).sum(axis=1), np.bincount(d.unit_dim) * 1.0))
    True
    """
    D = len(data.dimensions)
    w = np.asarray(data.pattern_count, dtype=float)
    if D == 1:  # (no BLAS: its threads would compete with the caller's for the cores)
        return (w[:, None] * q).sum(axis=0)[None, :]
    return np.stack(
        [np.bincount(data.pattern_dim, w * q[:, k], minlength=D) for k in range(q.shape[1])],
        axis=1,
    )


def em_estep_accumulate_np(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
    M: np.ndarray,
) -> float:
    """NumPy twin of :func:`raterstats.models.latent_class.kernels.em_estep_accumulate`."""
    ll = em_estep_np(T, log_prior, p_e, p_start, pattern_dim, pattern_w, mask, q)
    M[:] = em_accumulate_np(q, p_e, p_start, pattern_w, M.shape[0])
    return ll


def em_kernels(lay: dict[str, np.ndarray]) -> tuple[Any, Any, Any]:
    """``(em_estep, em_accumulate, em_estep_accumulate)`` for a :func:`table_layout`: the
    NumPy kernels for small layouts (up to :data:`EM_NUMPY_MAX` pattern ratings x
    classes), numba's otherwise."""
    if lay["p_e"].size * lay["mask"].shape[1] <= EM_NUMPY_MAX:
        return em_estep_np, em_accumulate_np, em_estep_accumulate_np
    from raterstats.models.latent_class.kernels import em_accumulate, em_estep, em_estep_accumulate

    return em_estep, em_accumulate, em_estep_accumulate
