"""Input handling shared by the agreement statistics: warnings and encoding.

Everything the public functions accept (a units x raters matrix as a NumPy array, nested
lists, a pandas / polars frame, an ``xr.DataArray``, or a :class:`raterstats.Ratings`) is
turned into one :class:`Coded` record of long arrays for the kernels.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Number
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from raterstats.agreement import kernels as K

if TYPE_CHECKING:
    from raterstats.ratings import Ratings


class DegenerateAgreementWarning(UserWarning):
    """A statistic is undefined for the data given (returned as NaN); the message says why.

    Typical causes: every rating falls into one category (the expected agreement is 1, so a
    kappa is 0/0), a single rater, or no unit with two or more ratings.
    """


class IncompleteDataWarning(UserWarning):
    """A statistic that needs complete rows (ICC, Kendall's W, listwise percent agreement)
    left out units with missing ratings; the message says how many."""


class AgreementInputError(ValueError):
    """The input cannot be used; the message lists every problem found."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        text = (
            "; ".join(self.problems)
            if len(self.problems) == 1
            else "\n  - " + "\n  - ".join(self.problems)
        )
        super().__init__(text)


class AgreementUsageError(AgreementInputError):
    """The call as a whole is wrong, whatever the cell: an unknown statistic, option or
    option value, a ``by`` column that does not exist, a bad ``ci_prob`` or ``n_boot``.
    (A statistic that does not apply to one cell's data is no error: :func:`agreement`
    gives its reason in that cell's row.) The command line exits 2 on it."""


class NotApplicableWarning(UserWarning):
    """:func:`raterstats.agreement.agreement` left statistics out of some cells because they
    do not apply to the cell's data (e.g. Cohen's kappa with five raters, an ICC on a
    nominal scale, intra-rater agreement without repeated ratings); the result's ``reason``
    says why, row by row, and the other statistics are computed."""


class ManyLevelsWarning(UserWarning):
    """Statistics that treat the levels as unordered categories (unweighted kappas, percent
    agreement, nominal alpha) were computed on an ordered scale with many levels (e.g.
    0-100), where 49 against 50 counts as the same disagreement as 0 against 100; the message
    names them and the ordinal / interval options to use instead."""


def warn_degenerate(name: str, reason: int, *, stacklevel: int = 3) -> None:
    """Emit a :class:`DegenerateAgreementWarning` for statistic ``name``."""
    warnings.warn(
        f"{name} is undefined (NaN): {K.explain(reason)}.",
        DegenerateAgreementWarning,
        stacklevel=stacklevel,
    )


@dataclass(frozen=True)
class Coded:
    """Ratings encoded for the kernels.

    ``unit``, ``rater`` and ``code`` have one entry per rating; ``categories`` are the
    category labels (declared domain, in order) and ``values`` their numeric values.
    ``cluster`` maps each unit to its bootstrap cluster (the item of a segment).
    """

    unit: NDArray[np.int64]
    rater: NDArray[np.int64]
    code: NDArray[np.int64]
    n_units: int
    n_raters: int
    categories: tuple[Any, ...]
    values: NDArray[np.float64]
    numeric: bool
    cluster: NDArray[np.int64]
    n_clusters: int
    kind: str | None = None
    rater_labels: tuple[Any, ...] | None = None
    ordered: bool = True

    @property
    def n_categories(self) -> int:
        """Number of categories in the domain."""
        return len(self.categories)

    @property
    def x(self) -> NDArray[np.float64]:
        """Numeric value of each rating."""
        return self.values[self.code]

    def counts(self) -> NDArray[np.int64]:
        """Units x categories count matrix."""
        return K.category_counts(self.unit, self.code, self.n_units, self.n_categories)

    def ratings_per_unit(self) -> NDArray[np.int64]:
        """Number of ratings of each unit."""
        return np.bincount(self.unit, minlength=self.n_units)

    def n_active_raters(self) -> int:
        """Number of raters with at least one rating."""
        return int(np.unique(self.rater).shape[0])

    def dense(self) -> NDArray[np.float64]:
        """Units x raters matrix of numeric values (NaN where missing)."""
        out = np.full((self.n_units, self.n_raters), np.nan)
        out[self.unit, self.rater] = self.x
        return out

    def select_units(self, units: NDArray[np.int64]) -> Coded:
        """A new record with the given units, in order (repeats allowed: bootstrap)."""
        units = np.asarray(units, dtype=np.int64)
        order, starts = K.group_index(self.unit, self.n_units)
        new_unit = np.repeat(
            np.arange(units.shape[0], dtype=np.int64), (starts[1:] - starts[:-1])[units]
        )
        idx = K.take_groups(order, starts, units)
        return Coded(
            unit=new_unit,
            rater=self.rater[idx],
            code=self.code[idx],
            n_units=int(units.shape[0]),
            n_raters=self.n_raters,
            categories=self.categories,
            values=self.values,
            numeric=self.numeric,
            cluster=self.cluster[units],
            n_clusters=self.n_clusters,
            kind=self.kind,
            rater_labels=self.rater_labels,
            ordered=self.ordered,
        )

    def with_observed_levels(self) -> Coded:
        """Restrict the domain to the categories that occur, valued by their index.

        This is R ``irr``'s convention for weighted kappa (``weight_scale=
        "observed_level_index"``): the levels are the sorted union of observed values.
        """
        used = np.flatnonzero(np.bincount(self.code, minlength=self.n_categories))
        lut = np.full(self.n_categories, -1, dtype=np.int64)
        lut[used] = np.arange(used.shape[0])
        return Coded(
            unit=self.unit,
            rater=self.rater,
            code=lut[self.code],
            n_units=self.n_units,
            n_raters=self.n_raters,
            categories=tuple(self.categories[i] for i in used),
            values=np.arange(used.shape[0], dtype=np.float64),
            numeric=self.numeric,
            cluster=self.cluster,
            n_clusters=self.n_clusters,
            kind=self.kind,
            rater_labels=self.rater_labels,
            ordered=self.ordered,
        )


# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------
def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float | np.floating):
        return bool(np.isnan(v))
    return type(v).__name__ in ("NAType", "NaTType")


def _is_number(v: Any) -> bool:
    return isinstance(v, Number | np.number) and not isinstance(v, bool | np.bool_)


def _nice_label(v: float) -> Any:
    """Integral floats become ints so that labels read ``1`` rather than ``1.0``."""
    f = float(v)
    return int(f) if math.isfinite(f) and f.is_integer() else f


def is_ratings(obj: Any) -> bool:
    """True for a :class:`raterstats.Ratings` (checked without importing it eagerly)."""
    try:
        from raterstats.ratings import Ratings
    except ImportError:  # pragma: no cover - the foundation module is part of the package
        return False
    return isinstance(obj, Ratings)


def as_matrix(data: Any, *, what: str = "ratings") -> tuple[np.ndarray, tuple[Any, ...] | None]:
    """A 2-d NumPy array from array-likes and frames, plus column labels when known."""
    labels: tuple[Any, ...] | None = None
    mod = type(data).__module__
    if mod.startswith("polars") or mod.startswith("pandas"):
        labels = tuple(data.columns)
        arr = data.to_numpy()
    elif mod.startswith("xarray"):
        if data.ndim == 2:
            labels = (
                tuple(data.coords[data.dims[1]].values.tolist())
                if data.dims[1] in (data.coords)
                else None
            )
        arr = np.asarray(data.values)
    else:
        try:
            # nested lists keep their Python types (NumPy would turn [1, "a"] into text)
            arr = np.asarray(data, dtype=object if isinstance(data, list | tuple) else None)
        except ValueError as err:
            raise AgreementInputError(
                [
                    f"{what}: cannot read as a units x raters matrix ({err}); rows must have the "
                    "same length, with None/NaN for missing ratings"
                ]
            ) from None
    if arr.ndim == 1 and arr.dtype == object and any(isinstance(r, list | tuple) for r in arr):
        raise AgreementInputError(
            [f"{what}: rows have different lengths; use None/NaN for missing ratings"]
        )
    if arr.ndim != 2:
        raise AgreementInputError(
            [f"{what}: expected a 2-d units x raters matrix, got an array with shape {arr.shape}"]
        )
    return arr, labels


def _factorize(
    vals: np.ndarray, categories: Sequence[Any] | Mapping[Any, float] | None, *, what: str
) -> tuple[NDArray[np.int64], tuple[Any, ...], NDArray[np.float64], bool]:
    """Codes of the non-missing values ``vals`` (1-d) and the category domain."""
    problems: list[str] = []
    numeric_data = vals.dtype.kind in "biuf"
    if vals.dtype.kind == "O":
        kinds = {
            (
                "number"
                if _is_number(v)
                else "bool"
                if isinstance(v, bool | np.bool_)
                else "text"
                if isinstance(v, str)
                else type(v).__name__
            )
            for v in vals
        }
        if kinds <= {"number", "bool"}:
            vals = vals.astype(np.float64)
            numeric_data = True
        elif kinds == {"text"}:
            vals = vals.astype(str)
        else:
            raise AgreementInputError(
                [
                    f"{what}: ratings mix kinds {sorted(kinds)}; use numbers or text labels, "
                    "with None/NaN for missing"
                ]
            )
    if vals.dtype.kind == "b":
        vals = vals.astype(np.int64)
    uniq, inverse = _unique(vals)
    if categories is None:
        if numeric_data:
            labels = tuple(_nice_label(u) for u in uniq.tolist())
            values = np.asarray(uniq, dtype=np.float64)
        else:
            labels = tuple(uniq.tolist())
            values = np.arange(len(labels), dtype=np.float64)
        return inverse, labels, values, numeric_data
    if isinstance(categories, Mapping):
        labels = tuple(categories.keys())
        try:
            values = np.asarray([float(v) for v in categories.values()], dtype=np.float64)
        except (TypeError, ValueError):
            raise AgreementInputError(
                [f"{what}: the values of the categories mapping must be numbers"]
            ) from None
        cat_numeric = all(_is_number(c) for c in labels)
    else:
        labels = tuple(categories)
        cat_numeric = all(_is_number(c) for c in labels) and len(labels) > 0
        values = (
            np.asarray([float(c) for c in labels], dtype=np.float64)
            if cat_numeric
            else np.arange(len(labels), dtype=np.float64)
        )
    keys = [float(c) if _is_number(c) else c for c in labels]
    if len(set(keys)) != len(keys):
        problems.append(f"{what}: categories are not distinct: {list(labels)}")
    if len(labels) == 0:
        problems.append(f"{what}: categories is empty")
    index = {k: i for i, k in enumerate(keys)}
    lut = np.empty(uniq.shape[0], dtype=np.int64)
    unknown = []
    for j, u in enumerate(uniq.tolist()):
        key = float(u) if numeric_data else u
        if key not in index:
            unknown.append(_nice_label(u) if numeric_data else u)
            lut[j] = -1
        else:
            lut[j] = index[key]
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:10])
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        problems.append(
            f"{what}: rating(s) {shown}{more} are not among the declared categories {list(labels)}"
        )
    if problems:
        raise AgreementInputError(problems)
    return lut[inverse], labels, values, cat_numeric


def _unique(vals: np.ndarray) -> tuple[np.ndarray, NDArray[np.int64]]:
    """``np.unique(vals, return_inverse=True)`` with a fast path for small integer ranges."""
    if vals.size and vals.dtype.kind in "iuf":
        lo = vals.min()
        hi = vals.max()
        if np.isfinite(lo) and np.isfinite(hi) and hi - lo < 1_000_000:
            diff = vals - lo
            shifted = diff.astype(np.int64)
            if vals.dtype.kind in "iu" or np.array_equal(shifted, diff):
                present = np.bincount(shifted) > 0
                lut = np.cumsum(present) - 1
                uniq = np.flatnonzero(present) + lo
                return uniq.astype(vals.dtype), lut[shifted]
    uniq, inverse = np.unique(vals, return_inverse=True)
    return uniq, inverse.astype(np.int64).ravel()


def _missing_mask(arr: np.ndarray) -> NDArray[np.bool_]:
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    if arr.dtype.kind == "O":
        return np.frompyfunc(_is_missing, 1, 1)(arr).astype(bool)
    return np.zeros(arr.shape, dtype=bool)


def encode_matrix(
    data: Any,
    *,
    categories: Sequence[Any] | Mapping[Any, float] | None = None,
    what: str = "ratings",
) -> Coded:
    """Encode a units x raters matrix (rows = units, columns = raters, None/NaN missing)."""
    arr, labels = as_matrix(data, what=what)
    missing = _missing_mask(arr)
    rows, cols = np.nonzero(~missing)
    vals = arr[rows, cols]
    code, cats, values, numeric = _factorize(vals, categories, what=what)
    n_units = arr.shape[0]
    return Coded(
        unit=rows.astype(np.int64),
        rater=cols.astype(np.int64),
        code=code,
        n_units=n_units,
        n_raters=arr.shape[1],
        categories=cats,
        values=values,
        numeric=numeric,
        cluster=np.arange(n_units, dtype=np.int64),
        n_clusters=n_units,
        rater_labels=labels,
        ordered=numeric or categories is not None,
    )


def single_cell(ratings: Ratings, what: str) -> tuple[str, str]:
    """The one dimension and design of ``ratings``, or an :class:`AgreementInputError` that
    says how to select one.

    Parameters
    ----------
    ratings : Ratings
        The ratings.
    what : str
        Name of the statistic, for the message.

    Returns
    -------
    (dimension, design) : tuple of str

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a"], "rater": ["x", "y"], "rating": [1, 2]}))
    >>> single_cell(r, "fleiss_kappa")
    ('default', 'default')
    """
    problems = []
    dims = ratings.dimensions
    designs = ratings.designs
    if len(dims) != 1:
        problems.append(
            f"{what}: the ratings hold {len(dims)} dimensions {list(dims)}; select one with "
            "ratings.filter(dimension=...) or use agreement(..., by=['dimension', 'design'])"
        )
    if len(designs) != 1:
        problems.append(
            f"{what}: the ratings hold {len(designs)} designs {list(designs)}; select one with "
            "ratings.filter(design=...) or use agreement(..., by=['dimension', 'design'])"
        )
    if problems:
        raise AgreementInputError(problems)
    return str(dims[0]), str(designs[0])


def encode_ratings(
    ratings: Ratings,
    *,
    categories: Sequence[Any] | Mapping[Any, float] | None = None,
    level: str | None = None,
    repeats: str = "exclude",
    what: str = "ratings",
) -> Coded:
    """Encode one dimension x design of a :class:`raterstats.Ratings`.

    The scale's levels are the category domain (unless ``categories`` is given) and the
    scale's values their numbers; units are items, or segments with ``level="segment"``
    (the default picks what the data hold), and the bootstrap cluster is the item.
    """
    dim, _ = single_cell(ratings, what)
    if categories is not None:
        raise AgreementInputError(
            [
                f"{what}: a Ratings' scale declares its categories; leave categories=None (map "
                "the scale with Ratings.collapse / Ratings.score to change them)"
            ]
        )
    scale = ratings.scale_for(dim)
    has_levels = len(scale.levels) > 0
    mat = ratings.to_matrix(
        level=level,  # type: ignore[arg-type]
        values="code" if has_levels else "value",
        repeats=repeats,  # type: ignore[arg-type]
    )
    arr = np.asarray(mat.values, dtype=np.float64)
    items = np.asarray(mat.coords["item"].values)
    _, cluster = np.unique(items, return_inverse=True)
    raters = tuple(mat.coords["rater"].values.tolist())
    missing = np.isnan(arr)
    rows, cols = np.nonzero(~missing)
    vals = arr[rows, cols]
    if has_levels:
        code = vals.astype(np.int64)
        cats = tuple(scale.levels)
        values = np.asarray(scale.values, dtype=np.float64)
        numeric = bool(getattr(scale, "numeric", all(_is_number(c) for c in cats)))
    else:
        code, cats, values, numeric = _factorize(vals, None, what=what)
    return Coded(
        unit=rows.astype(np.int64),
        rater=cols.astype(np.int64),
        code=code,
        n_units=arr.shape[0],
        n_raters=arr.shape[1],
        categories=cats,
        values=values,
        numeric=numeric,
        cluster=cluster.astype(np.int64).ravel(),
        n_clusters=int(np.unique(items).shape[0]),
        kind=scale.kind,
        rater_labels=raters,
        # a nominal scale's level order carries no distance: no weights, no ordinal metric
        ordered=scale.kind != "nominal",
    )


def encode(
    data: Any,
    *,
    categories: Sequence[Any] | Mapping[Any, float] | None = None,
    what: str = "ratings",
) -> Coded:
    """Encode a matrix-like or a :class:`raterstats.Ratings`."""
    if is_ratings(data):
        return encode_ratings(data, categories=categories, what=what)
    return encode_matrix(data, categories=categories, what=what)


def resolve_weights(
    weights: str | Iterable[Iterable[float]] | np.ndarray, coded: Coded, *, what: str
) -> NDArray[np.float64]:
    """A validated ``q x q`` weight matrix from a name or an explicit matrix."""
    q = coded.n_categories
    if isinstance(weights, str):
        if weights not in K.WEIGHT_ALIASES:
            raise AgreementInputError(
                [
                    f"{what}: unknown weights {weights!r}; use one of "
                    f"{sorted(K.WEIGHT_ALIASES)} or a {q} x {q} matrix"
                ]
            )
        return K.weight_matrix(weights, coded.values)
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise AgreementInputError(
            [f"{what}: weights must be a name or a numeric {q} x {q} matrix"]
        ) from None
    problems = []
    if w.shape != (q, q):
        problems.append(
            f"{what}: weights matrix has shape {w.shape}, expected ({q}, {q}) for the "
            f"categories {list(coded.categories)}"
        )
    else:
        if not np.all(np.isfinite(w)):
            problems.append(f"{what}: weights matrix has non-finite entries")
        elif not np.allclose(np.diag(w), 1.0):
            problems.append(f"{what}: weights matrix must have ones on the diagonal")
        elif np.any(w < 0) or np.any(w > 1):
            problems.append(f"{what}: weights must lie in [0, 1]")
    if problems:
        raise AgreementInputError(problems)
    return w
