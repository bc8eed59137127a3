"""Shared core of the agreement kernels: reasons for undefined values, safe division and the
additive-statistic record :class:`Parts`.

The kernels (this subpackage) import neither polars nor xarray. Data arrive already encoded:

* long arrays ``unit`` (which unit a rating belongs to, ``0 .. n_units - 1``), ``code``
  (its category, ``0 .. q - 1``) and, where rater identity matters, ``rater``
  (``0 .. n_raters - 1``);
* a vector ``values`` with the numeric value of each category (weights and metrics use it).

Most statistics are *additive over units*: they are a smooth function of sums of per-unit
"sufficient statistics". Each such statistic is exposed as a ``*_parts`` function returning
``Parts(features, finalize)``: ``features`` has shape ``(n_units, f)`` and
``finalize(sums)`` maps sums of shape ``(..., f)`` (leading batch axes such as bootstrap
replicates; the feature axis, the new one, last) to
``(estimate, reason)`` arrays of shape ``(...)``. The point estimate is
``finalize(features.sum(axis=0))``; a cluster bootstrap only needs weighted sums
``replicate_weights @ features``, which is how
:func:`raterstats.agreement.kernels.bootstrap.bootstrap_additive` vectorises all replicates
without a Python loop over units or items.

``reason`` is a bit mask telling why an estimate is NaN (see the ``REASON_*`` constants and
:data:`REASON_TEXT`); it is 0 for a regular value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# ----------------------------------------------------------------------------------------
# reasons for undefined values
# ----------------------------------------------------------------------------------------
REASON_NO_PAIRS = 1
REASON_CHANCE_ONE = 2
REASON_ONE_CATEGORY = 4
REASON_NO_VARIANCE = 8
REASON_TOO_FEW = 16
REASON_ONE_RATER = 32

REASON_TEXT: dict[int, str] = {
    REASON_NO_PAIRS: ("no unit has two or more ratings, so there is no pair of ratings to compare"),
    REASON_CHANCE_ONE: (
        "the expected (chance) agreement is 1 (equivalently, the expected disagreement is 0): "
        "all ratings fall into a single category or value, so the coefficient is 0/0"
    ),
    REASON_ONE_CATEGORY: "the category domain has fewer than two categories",
    REASON_NO_VARIANCE: "the ratings have no variance, so the coefficient is 0/0",
    REASON_TOO_FEW: (
        "fewer than two complete units remain (ICC and Kendall's W need every rater to rate "
        "every unit; for separate rater panels split the data, e.g. by=[..., 'group'])"
    ),
    REASON_ONE_RATER: "fewer than two raters have ratings",
}

#: Relative tolerance under which a denominator such as ``1 - p_e`` counts as zero.
ZERO_TOL = 1e-12


def explain(reason: int) -> str:
    """Join the texts of the reasons set in the bit mask ``reason``."""
    parts = [text for bit, text in REASON_TEXT.items() if reason & bit]
    return "; ".join(parts) if parts else "undefined value"


def safe_divide(
    num: FloatArray, den: FloatArray, scale: FloatArray | float = 1.0
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """``num / den`` with NaN where the denominator counts as zero, and that mask.

    Parameters
    ----------
    num, den : array-like
        Numerator and denominator (broadcast together).
    scale : array-like or float
        ``den`` counts as zero where ``|den| <= ZERO_TOL * scale``.

    Returns
    -------
    (ratio, bad) : tuple of arrays
        The quotient (NaN where ``bad``) and the mask of zero denominators; no
        division warning is raised.

    Examples
    --------
    >>> ratio, bad = safe_divide(np.array([1.0, 1.0]), np.array([2.0, 0.0]))
    >>> ratio.tolist(), bad.tolist()
    ([0.5, nan], [False, True])
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    bad = ~(np.abs(den) > ZERO_TOL * np.asarray(scale, dtype=np.float64))
    # where ``bad``, divide by 1 instead (no warning) and put NaN
    return np.where(bad, np.nan, num / np.where(bad, 1.0, den)), bad


class Parts(NamedTuple):
    """An additive statistic: per-unit features and the map from their sums to estimates.

    ``features`` is a dense ``(n_units, f)`` array or a SciPy sparse array of that shape.
    """

    features: FloatArray | sparse.sparray
    finalize: Callable[[FloatArray], tuple[FloatArray, IntArray]]


def feature_sums(features: FloatArray | sparse.sparray) -> FloatArray:
    """Column sums of a dense or sparse feature matrix, as a 1-d float array."""
    return np.asarray(features.sum(axis=0), dtype=np.float64).ravel()


def evaluate(parts: Parts) -> tuple[float, int]:
    """Point estimate and reason mask of an additive statistic."""
    est, reason = parts.finalize(feature_sums(parts.features))
    return float(est), int(reason)


__all__ = [
    "REASON_CHANCE_ONE",
    "REASON_NO_PAIRS",
    "REASON_NO_VARIANCE",
    "REASON_ONE_CATEGORY",
    "REASON_ONE_RATER",
    "REASON_TEXT",
    "REASON_TOO_FEW",
    "ZERO_TOL",
    "FloatArray",
    "IntArray",
    "Parts",
    "evaluate",
    "explain",
    "feature_sums",
    "safe_divide",
]
