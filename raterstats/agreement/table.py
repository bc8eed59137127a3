"""Many agreement statistics per dimension x design, with cluster-bootstrap intervals.

:func:`agreement` returns one ``xr.Dataset``; :func:`agreement_table` turns it into a tidy
polars frame with exactly the same numbers (it reads the Dataset, it computes nothing).
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl
import xarray as xr

# importing the statistic modules registers their estimators
from raterstats import defaults as D
from raterstats.agreement import alpha, categorical, continuous, kappa  # noqa: F401
from raterstats.agreement import kernels as K
from raterstats.agreement.categorical import repeat_pairs_coded
from raterstats.agreement.data import (
    AgreementInputError,
    AgreementUsageError,
    Coded,
    DegenerateAgreementWarning,
    ManyLevelsWarning,
    NotApplicableWarning,
    encode_matrix,
    encode_ratings,
    is_ratings,
)
from raterstats.agreement.estimator import REGISTRY, Direct, Prepared, evaluate
from raterstats.agreement.specs import (
    MAX_UNORDERED_LEVELS,
    ParsedStatistic,
    StatisticSpec,
    parse_statistics,
    resolve_options,
    treats_levels_as_unordered,
)
from raterstats.checks import count_problems
from raterstats.defaults import AGREEMENT_CONFIDENCE, N_BOOT
from raterstats.intervals import eti_np

#: Names usable in ``agreement(statistics=...)``.
AGREEMENT_STATISTICS: tuple[str, ...] = tuple(sorted(REGISTRY))

#: What :func:`agreement` computes when not told.
DEFAULT_STATISTICS: tuple[str, ...] = (
    "percent_agreement",
    "fleiss_kappa",
    "randolph_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
)

_VARIABLES = (
    "estimate",
    "ci_low",
    "ci_high",
    "n_items",
    "n_items_excluded",
    "n_units",
    "n_raters",
    "n_ratings",
    "n_boot_valid",
)
#: the text variables of a result, per statistic and cell (after ``unit_level``)
_TEXTS = ("options", "reason")


def _usable_units(coded: Coded, name: str, opts: Mapping[str, Any]) -> np.ndarray:
    """Units whose ratings enter the statistic (for the reported counts)."""
    per_unit = coded.ratings_per_unit()
    complete = per_unit == coded.n_raters
    if name in ("icc", "kendall_w"):
        return complete
    if name == "percent_agreement" and opts.get("missing") == "listwise":
        return complete & (coded.n_raters >= 2)
    return per_unit >= 2


def bootstrap_replicates(
    prepared: Prepared, coded: Coded, resamples: list[np.ndarray]
) -> np.ndarray:
    """Bootstrap replicates of a prepared statistic, one per row of ``resamples``.

    Parameters
    ----------
    prepared : Prepared
        Additive parts (every replicate from one matrix product per chunk) or a
        :class:`~raterstats.agreement.estimator.Direct` function (evaluated on the units of
        each resample).
    coded : Coded
        The encoded ratings; ``coded.cluster`` maps units to the resampled clusters.
    resamples : list of array
        Chunks of cluster multiplicities, ``(n_replicates, n_clusters)`` each, from
        :func:`raterstats.agreement.kernels.resample_counts`.

    Returns
    -------
    numpy.ndarray
        The replicate estimates (NaN where undefined).

    Examples
    --------
    >>> import numpy as np
    >>> from raterstats.agreement import kernels as K
    >>> from raterstats.agreement.data import encode_matrix
    >>> coded = encode_matrix([[1, 1], [2, 2], [1, 2]])
    >>> whole = [np.ones((1, 3))]  # one "replicate" that draws every unit once
    >>> reps = bootstrap_replicates(K.pairwise_agreement_parts(coded.counts(), np.eye(2)),
    ...                             coded, whole)
    >>> reps.round(4).tolist()
    [0.6667]
    """
    if not isinstance(prepared, Direct):
        est, _ = K.bootstrap_additive(prepared, resamples, coded.cluster, coded.n_clusters)
        return est
    # non-additive statistic: evaluate on each resample's units (one call per replicate)
    order, starts = K.group_index(coded.cluster, coded.n_clusters)
    out: list[float] = []
    for block in resamples:
        for row in block:
            clusters = np.repeat(np.arange(coded.n_clusters), row.astype(np.int64))
            units = K.take_groups(order, starts, clusters)
            value, _ = prepared.fn(coded.select_units(units))
            out.append(value)
    return np.asarray(out, dtype=np.float64)


def _cells(
    ratings: Any, by: Sequence[str], scheme_key: str | None
) -> tuple[dict[str, list[Any]], list[tuple[tuple[Any, ...], Any]]]:
    """Coordinates of each ``by`` key and the (key values, sub-ratings) of each cell."""
    sources: list[tuple[tuple[Any, ...], Any]]
    if scheme_key is not None:
        sources = [((name,), r) for name, r in ratings.items()]
    else:
        sources = [((), ratings)]
    coords: dict[str, list[Any]] = {}
    if scheme_key is not None:
        coords[scheme_key] = [name for (name,), _ in sources]
    problems = []
    for key in by:
        vals: set[Any] = set()
        for _, r in [(k, r) for k, r in sources]:
            if key not in r.data.columns:
                problems.append(f"by: the ratings have no {key!r} column")
                break
            vals.update(r.data.get_column(key).drop_nulls().unique().to_list())
        coords[key] = sorted(vals, key=str)
    for key in ("dimension", "design"):
        several = [r for _, r in sources if len(getattr(r, f"{key}s")) > 1]
        if key not in by and several:
            problems.append(
                f"by: the ratings hold {len(getattr(several[0], f'{key}s'))} {key}s and every "
                f"statistic needs one; add {key!r} to by (or filter the ratings to one {key})"
            )
    if problems:
        raise AgreementUsageError(sorted(set(problems)))
    cells = []
    for prefix, r in sources:
        present = r.data.select(list(by)).unique() if by else None
        combos = [tuple(row) for row in present.iter_rows()] if present is not None else [()]
        for combo in sorted(combos, key=lambda c: tuple(str(v) for v in c)):
            if any(v is None for v in combo):
                continue
            try:
                sub = r.filter(**dict(zip(by, combo, strict=True))) if by else r
            except (TypeError, KeyError) as err:
                raise AgreementUsageError([f"by: {err}"]) from None
            cells.append(((*prefix, *combo), sub))
    return coords, cells


def agreement(
    ratings: Any,
    statistics: Sequence[StatisticSpec] | Mapping[str, StatisticSpec] = DEFAULT_STATISTICS,
    *,
    by: Sequence[str] = ("dimension", "design"),
    level: Literal["item", "segment"] | None = None,
    ci_prob: float | None = None,
    n_boot: int | None = None,
    random_seed: int | np.random.Generator | None = D.RANDOM_SEED,
    scheme_dim: str = "scheme",
) -> xr.Dataset:
    """Agreement statistics per dimension x design (or any ``by``), with bootstrap intervals.

    Parameters
    ----------
    ratings : Ratings, mapping of str to Ratings, or array-like
        The ratings. A mapping ``{scheme name: Ratings}`` computes several coding schemes in
        one call (e.g. coarse 3-point, fine 3-point at sentence level, fine binary), each with
        its own scales; the scheme becomes a dimension of the result (``scheme_dim``). A plain
        units x raters matrix is one cell (``by`` is then ignored).
    statistics : sequence or mapping
        Statistic names from :data:`AGREEMENT_STATISTICS`, with options as text
        (``"krippendorff_alpha:level=interval"``, ``"cohen_kappa:weights=quadratic"``,
        ``"icc:form=ICC1"``; several as ``"name:key=value,key=value"``) or as
        ``(name, {option: value})`` pairs; a mapping ``{label: spec}`` sets the labels
        (:func:`~raterstats.agreement.specs.parse_statistics` reads them all). Options are
        the keyword arguments of the function of that name. A statistic given with options
        is labelled with them (``"krippendorff_alpha (level=interval)"``), so one statistic
        can be computed with several options. Without options, the scale decides:
        Krippendorff's level follows the scale's kind and the category domain is the
        scale's levels. ``"intra_rater_agreement"`` is computed from each cell's repeated
        ratings (first vs repeat, clustered by item); all other statistics use the first
        ratings only.
    by : sequence of str
        Columns that split the ratings into cells (each must be a ``Ratings`` column:
        ``dimension``, ``design``, ``group``, ``system``, ``question``, ``rater_kind``).
    level : {"item", "segment"}, optional
        Unit of analysis; by default each cell uses what it holds (segment ratings of a fine
        design are analysed per segment, whole-item ratings per item).
    ci_prob : float, optional
        Coverage of the percentile intervals; ``None`` (the default) reads
        :data:`raterstats.defaults.AGREEMENT_CONFIDENCE` (0.95) when called.
    n_boot : int, optional
        Bootstrap replicates (0 for no intervals); ``None`` (the default) reads
        :data:`raterstats.defaults.N_BOOT` (1000) when called.
    random_seed : int or numpy.random.Generator, optional
        Seed; the same seed gives the same intervals. ``None`` (the default) draws fresh
        entropy, so intervals differ from call to call (it does not read
        :data:`raterstats.defaults.RANDOM_SEED`).
    scheme_dim : str
        Name of the dimension for a mapping of schemes.

    Returns
    -------
    xarray.Dataset
        Dims ``statistic`` then the ``by`` keys (``scheme_dim`` first for a mapping).
        Variables: ``estimate``, ``ci_low``, ``ci_high``, ``n_items`` (items whose ratings
        enter the statistic: with two or more ratings, or complete for ICC and Kendall's W),
        ``n_items_excluded`` (rated items that do not: a single rating, or incomplete),
        ``n_units`` (the same count of units, which are segments at sentence level),
        ``n_raters``, ``n_ratings`` (all ratings in the cell) and ``n_boot_valid``
        (replicates where the statistic was defined); text variables ``options`` (the
        options each statistic was computed with in each cell, defaults included, e.g.
        ``"level=ordinal (from the ordinal scale)"``, ``"weights=identity"``,
        ``"form=ICC(2,1)"``) and ``reason`` (why the estimate is NaN: the statistic does
        not apply to the cell's data, e.g. Cohen's kappa with five raters, or it is
        undefined there; empty when there is an estimate). Cells absent from the data have
        ``n_ratings = 0``, NaN estimates and the reason ``"no ratings"``. ``attrs`` record
        the interval method, seed, statistic options and the reasons for undefined values.

    Raises
    ------
    AgreementUsageError
        The call as a whole is wrong: an unknown statistic, option or option value, a
        ``by`` column that does not exist, several dimensions or designs not split by
        ``by``, a bad ``ci_prob``, ``n_boot`` or ``level``.

    Warns
    -----
    NotApplicableWarning
        Statistics that do not apply to some cells (their ``reason`` says why).
    DegenerateAgreementWarning
        Estimates that are undefined (NaN) for the cell's data.
    ManyLevelsWarning
        Statistics that treat the levels as unordered categories on an ordered scale with
        more than :data:`~raterstats.agreement.specs.MAX_UNORDERED_LEVELS` levels (e.g.
        0-100); the message suggests the ordinal / interval options.

    Notes
    -----
    Intervals are percentile (equal-tailed, :func:`raterstats.intervals.eti_np`) intervals of
    an item-level cluster bootstrap: items are drawn with replacement and carry all their
    ratings (all sentences of an answer, when the units are sentences). Within a cell every
    statistic uses the same resamples. For the statistics that are smooth functions of
    per-item sums (all but Kendall's W and high-cardinality ordinal alpha) every replicate is
    a weighted sum computed for all replicates at once by one matrix product. Undefined
    estimates are reported with one :class:`DegenerateAgreementWarning` listing the cells.

    References
    ----------
    Davison, A. C., & Hinkley, D. V. (1997). *Bootstrap Methods and their Application*,
    sec. 3.8 (resampling clusters). Cambridge University Press.
    https://doi.org/10.1017/CBO9780511802843

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> from raterstats.agreement import agreement, agreement_table
    >>> frame = pl.DataFrame({
    ...     "item": [f"q{i}" for i in range(6) for _ in range(3)],
    ...     "rater": ["a", "b", "c"] * 6,
    ...     "rating": [1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 2, 3, 3, 3, 1, 1, 2],
    ... })
    >>> ds = agreement(read_ratings(frame), ["fleiss_kappa", "krippendorff_alpha"],
    ...                n_boot=200, random_seed=1)
    >>> ds.estimate.sel(statistic="fleiss_kappa").round(4).item()
    0.4953
    >>> agreement_table(ds).columns[:5]
    ['statistic', 'dimension', 'design', 'estimate', 'ci_low']
    """
    specs = parse_statistics(statistics)
    ci_prob = AGREEMENT_CONFIDENCE if ci_prob is None else ci_prob
    n_boot = N_BOOT if n_boot is None else n_boot
    problems = []
    if not 0.0 < float(ci_prob) < 1.0:
        problems.append(f"ci_prob must lie in (0, 1), not {ci_prob!r}")
    problems += count_problems(n_boot=(n_boot, 0))
    if level not in (None, "item", "segment"):
        problems.append(f"level must be 'item', 'segment' or None, not {level!r}")
    by = [by] if isinstance(by, str) else list(by)
    if problems:
        raise AgreementUsageError(problems)

    scheme_key: str | None = None
    if isinstance(ratings, Mapping):
        bad = [k for k, v in ratings.items() if not is_ratings(v)]
        if bad or not ratings:
            raise AgreementUsageError(
                [f"a mapping of schemes must map names to Ratings; not Ratings: {bad}"]
            )
        scheme_key = scheme_dim
        coords, cells = _cells(ratings, by, scheme_key)
    elif is_ratings(ratings):
        coords, cells = _cells(ratings, by, None)
    else:
        by = []
        coords, cells = {}, [((), ratings)]
    dims = ["statistic", *coords]
    shape = (len(specs), *[len(v) for v in coords.values()])
    arrays = {v: np.full(shape, np.nan) for v in _VARIABLES}
    for v in _VARIABLES[3:]:
        arrays[v] = np.zeros(shape, dtype=np.int64)
    texts = {v: np.full(shape, "", dtype=object) for v in _TEXTS}
    texts["reason"][...] = "no ratings"
    unit_level = np.full(shape[1:], "", dtype=object)
    index = {k: {val: i for i, val in enumerate(vals)} for k, vals in coords.items()}

    seed_seq = (
        np.random.SeedSequence(random_seed)
        if not isinstance(random_seed, np.random.Generator)
        else np.random.SeedSequence(int(random_seed.integers(2**63)))
    )
    cell_seeds = seed_seq.spawn(max(len(cells), 1))
    notes = _Notes()

    for (key, sub), cell_seed in zip(cells, cell_seeds, strict=False):
        pos = tuple(index[k][v] for k, v in zip(coords, key, strict=True))
        where = ", ".join(f"{k}={v}" for k, v in zip(coords, key, strict=True)) or "all"
        cell = _Cell(sub, level, where, cell_seed, int(n_boot))
        if is_ratings(sub):
            unit_level[pos] = "segment" if _is_segment(sub, level) else "item"
        else:
            unit_level[pos] = "unit"
        for s, stat in enumerate(specs):
            at = (s, *pos)
            name = stat.name
            try:
                coded, resamples, n_raters = cell.source(
                    "pairs" if name == "intra_rater_agreement" else "ratings"
                )
                opts, texts["options"][at] = resolve_options(stat, coded)
                prepared = REGISTRY[name].prepare(coded, **opts)
            except AgreementInputError as err:
                reason = _reason(err, name, cell.what)
                texts["reason"][at] = reason
                texts["options"][at] = texts["options"][at] or _options_text(stat, cell)
                notes.inapplicable.append(f"{stat.label} [{where}]: {reason}")
                _fill_counts(arrays, at, cell)
                continue
            many = coded.ordered and coded.n_categories > MAX_UNORDERED_LEVELS
            if many and treats_levels_as_unordered(name, opts):
                notes.many_levels.setdefault(stat.label, []).append(
                    f"{where}: {coded.n_categories} levels"
                )
            est, why = evaluate(prepared, coded)
            usable = _usable_units(coded, name, opts)
            arrays["estimate"][at] = est
            arrays["n_units"][at] = int(usable.sum())
            arrays["n_items"][at] = int(np.unique(coded.cluster[usable]).shape[0])
            rated = coded.ratings_per_unit() > 0
            arrays["n_items_excluded"][at] = (
                int(np.unique(coded.cluster[rated]).shape[0]) - arrays["n_items"][at]
            )
            arrays["n_raters"][at] = n_raters
            arrays["n_ratings"][at] = int(coded.unit.shape[0])
            texts["reason"][at] = ""
            if np.isnan(est):
                if n_raters < 2 and name != "intra_rater_agreement":
                    why |= K.REASON_ONE_RATER
                texts["reason"][at] = K.explain(why or 1)
                notes.undefined.append(f"{stat.label} [{where}]: {texts['reason'][at]}")
            if resamples:
                reps = bootstrap_replicates(prepared, coded, resamples)
                ok = ~np.isnan(reps)
                arrays["n_boot_valid"][at] = int(ok.sum())
                if ok.any() and not np.isnan(est):
                    low, high = eti_np(reps[ok], float(ci_prob))
                    arrays["ci_low"][at] = float(low)
                    arrays["ci_high"][at] = float(high)
    notes.warn()
    data_vars: dict[str, Any] = {v: (dims, arrays[v]) for v in _VARIABLES}
    data_vars["unit_level"] = (dims[1:], unit_level.astype(str))
    for v in _TEXTS:
        data_vars[v] = (dims, texts[v].astype(str))
    ds = xr.Dataset(
        data_vars,
        coords={"statistic": [stat.label for stat in specs], **coords},
        attrs={
            "interval": "percentile, item-level cluster bootstrap"
            if n_boot
            else "none (n_boot = 0)",
            "ci_prob": float(ci_prob),
            "n_boot": int(n_boot),
            "random_seed": "none" if random_seed is None else str(random_seed),
            "statistic_options": json.dumps(
                {stat.label: {"name": stat.name, **stat.options} for stat in specs},
                default=_json_option,
            ),
            "undefined": "\n".join(notes.undefined),
            "not_applicable": "\n".join(notes.inapplicable),
        },
    )
    ds["estimate"].attrs["description"] = "point estimate on all data of the cell"
    ds["ci_low"].attrs["description"] = f"{ci_prob:.0%} percentile bootstrap lower bound"
    ds["ci_high"].attrs["description"] = f"{ci_prob:.0%} percentile bootstrap upper bound"
    ds["options"].attrs["description"] = "the options the statistic was computed with"
    ds["reason"].attrs["description"] = "why the estimate is NaN (empty when it is not)"
    return ds


def _json_option(value: Any) -> Any:
    """A weight matrix as nested lists in the ``statistic_options`` attribute."""
    return np.asarray(value).tolist() if isinstance(value, np.ndarray) else str(value)


def _reason(err: AgreementInputError, name: str, what: str) -> str:
    """The problems of a statistic that does not apply, without the prefixes that repeat
    the statistic's name or the cell (the row says both)."""
    out = []
    for problem in err.problems:
        for prefix in (f"{name}: ", f"{what}: "):
            problem = problem.removeprefix(prefix)
        out.append(problem)
    return "; ".join(out)


def _options_text(stat: ParsedStatistic, cell: _Cell) -> str:
    """The options of a statistic whose own data could not be encoded (intra-rater
    agreement without repeats), stated from the cell's ratings."""
    try:
        coded, _, _ = cell.source("ratings")
    except AgreementInputError:
        return ""
    return resolve_options(stat, coded)[1]


def _fill_counts(arrays: dict[str, np.ndarray], at: tuple[int, ...], cell: _Cell) -> None:
    """The counts of a row whose statistic does not apply: the cell's ratings and raters,
    no item entering the statistic (every rated item excluded)."""
    try:
        coded, _, n_raters = cell.source("ratings")
    except AgreementInputError:
        if not is_ratings(cell.sub):
            raise  # a matrix that cannot be read: nothing is computed from it
        arrays["n_ratings"][at] = cell.sub.data.height
        return
    arrays["n_ratings"][at] = int(coded.unit.shape[0])
    arrays["n_raters"][at] = n_raters
    rated = coded.ratings_per_unit() > 0
    arrays["n_items_excluded"][at] = int(np.unique(coded.cluster[rated]).shape[0])


class _Notes:
    """What :func:`agreement` warns about once, after every cell."""

    def __init__(self) -> None:
        self.undefined: list[str] = []
        self.inapplicable: list[str] = []
        self.many_levels: dict[str, list[str]] = {}

    def warn(self) -> None:
        if self.inapplicable:
            warnings.warn(
                "agreement: statistics that do not apply (NaN, with this reason in the "
                "result's `reason`):\n  " + "\n  ".join(self.inapplicable),
                NotApplicableWarning,
                stacklevel=3,
            )
        if self.undefined:
            warnings.warn(
                "agreement: undefined (NaN) estimates:\n  " + "\n  ".join(self.undefined),
                DegenerateAgreementWarning,
                stacklevel=3,
            )
        if self.many_levels:
            where = sorted({w for ws in self.many_levels.values() for w in ws})
            names = list(self.many_levels)
            verb = "treats" if len(names) == 1 else "treat"
            warnings.warn(
                f"agreement: {', '.join(names)} {verb} the levels of an ordered "
                f"scale with more than {MAX_UNORDERED_LEVELS} levels ({'; '.join(where[:5])}"
                f"{'; ...' if len(where) > 5 else ''}) as unordered categories: two ratings "
                "one level apart disagree as much as the two ends of the scale. For ordered "
                "ratings use krippendorff_alpha:level=interval (or level=ordinal), weights "
                "(e.g. fleiss_kappa:weights=quadratic, cohen_kappa:weights=quadratic, "
                "gwet_ac2), percent_agreement:tolerance=..., or icc.",
                ManyLevelsWarning,
                stacklevel=3,
            )


class _Cell:
    """One cell of the result: its data encoded on demand (all first ratings, or the repeat
    pairs for intra-rater agreement), with the bootstrap resamples of its items. Every
    statistic of the cell uses the same resamples of the same encoding."""

    _KINDS = ("ratings", "pairs")

    def __init__(
        self, sub: Any, level: str | None, where: str, seed: np.random.SeedSequence, n_boot: int
    ) -> None:
        self.sub = sub
        self.level = level
        self.what = f"agreement [{where}]"
        self.seed = seed
        self.n_boot = n_boot
        self._cache: dict[str, tuple[Coded, list[np.ndarray], int] | AgreementInputError] = {}

    def source(self, kind: str) -> tuple[Coded, list[np.ndarray], int]:
        """``(coded, resamples, n_raters)``; raises the (cached) input error if any."""
        if kind not in self._cache:
            try:
                coded, n_raters = self._encode(kind)
            except AgreementInputError as err:
                self._cache[kind] = err
            else:
                chunk = max(1, min(self.n_boot, 2_000_000 // max(coded.n_clusters, 1)))
                # one independent stream per kind: adding a statistic of the other kind does
                # not change these resamples
                rng = np.random.default_rng(
                    np.random.SeedSequence(
                        self.seed.entropy,
                        spawn_key=(*self.seed.spawn_key, self._KINDS.index(kind)),
                    )
                )
                resamples = (
                    K.resample_counts(rng, coded.n_clusters, self.n_boot, chunk)
                    if (self.n_boot and coded.n_clusters)
                    else []
                )
                self._cache[kind] = (coded, resamples, n_raters)
        got = self._cache[kind]
        if isinstance(got, AgreementInputError):
            raise got
        return got

    def _encode(self, kind: str) -> tuple[Coded, int]:
        sub = self.sub
        if kind == "pairs":
            if not is_ratings(sub):
                raise AgreementInputError(
                    [f"{self.what}: intra_rater_agreement needs a Ratings with repeated ratings"]
                )
            coded = repeat_pairs_coded(sub, what=self.what)
            return coded, int(sub.repeat_pairs().get_column("rater").n_unique())
        if is_ratings(sub):
            coded = encode_ratings(sub, level=self.level, what=self.what)
        else:
            coded = encode_matrix(sub, what="agreement")
        return coded, coded.n_active_raters()


def _is_segment(sub: Any, level: str | None) -> bool:
    if level is not None:
        return level == "segment"
    return bool(sub.has_segments)


def agreement_table(result: xr.Dataset) -> pl.DataFrame:
    """A tidy polars frame of an :func:`agreement` result: one row per statistic and cell.

    Parameters
    ----------
    result : xarray.Dataset
        The output of :func:`agreement`.

    Returns
    -------
    polars.DataFrame
        Columns: ``statistic``, the ``by`` keys, ``estimate``, ``ci_low``, ``ci_high``,
        ``n_items``, ``n_items_excluded``, ``n_units``, ``n_raters``, ``n_ratings``,
        ``n_boot_valid``, ``unit_level``, ``options`` (what the statistic was computed with)
        and ``reason`` (why the estimate is missing; empty when it is not); cells without
        ratings are left out. The numbers are those of the Dataset, not recomputed.

    Examples
    --------
    >>> from raterstats.agreement import agreement, agreement_table
    >>> ds = agreement([[1, 1], [2, 2], [1, 2], [2, 2]], ["percent_agreement"], n_boot=0)
    >>> agreement_table(ds).select("statistic", "estimate").row(0)
    ('percent_agreement', 0.75)
    """
    keys = [str(d) for d in result["estimate"].dims]
    cols: dict[str, list[Any]] = {k: [] for k in keys}
    values: dict[str, list[Any]] = {v: [] for v in (*_VARIABLES, "unit_level", *_TEXTS)}
    texts = [v for v in _TEXTS if v in result]  # results saved before these variables
    coords = {k: result.coords[k].values.tolist() for k in keys}
    for combo in itertools.product(*(range(len(coords[k])) for k in keys)):
        at = dict(zip(keys, combo, strict=True))
        if int(result["n_ratings"].isel(at).item()) == 0:
            continue
        for k, i in at.items():
            cols[k].append(coords[k][i])
        for v in _VARIABLES:
            values[v].append(result[v].isel(at).item())
        values["unit_level"].append(
            str(result["unit_level"].isel({k: i for k, i in at.items() if k != "statistic"}).item())
        )
        for v in texts:
            values[v].append(str(result[v].isel(at).item()))
    schema: dict[str, Any] = dict.fromkeys(keys, pl.String)
    schema.update(dict.fromkeys(_VARIABLES[:3], pl.Float64))
    schema.update(dict.fromkeys(_VARIABLES[3:], pl.Int64))
    schema["unit_level"] = pl.String
    schema.update(dict.fromkeys(texts, pl.String))
    frame = {k: [str(x) for x in cols[k]] for k in keys}
    frame.update({k: v for k, v in values.items() if k in schema})
    return pl.DataFrame(frame, schema=schema)


__all__ = [
    "AGREEMENT_STATISTICS",
    "DEFAULT_STATISTICS",
    "agreement",
    "agreement_table",
    "bootstrap_replicates",
]
