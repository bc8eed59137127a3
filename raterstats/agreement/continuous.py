"""Agreement on numeric ratings: intraclass correlations and Kendall's W.

Both need complete units (every rater rates every unit); units with a missing rating are
left out with an :class:`IncompleteDataWarning` that says how many.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from raterstats.agreement import kernels as K
from raterstats.agreement.checks import Categories, check_ordered
from raterstats.agreement.data import (
    AgreementInputError,
    Coded,
    IncompleteDataWarning,
    encode,
)
from raterstats.agreement.estimator import Direct, Prepared, finish, register


def _complete_rows(coded: Coded) -> np.ndarray:
    return coded.ratings_per_unit() == coded.n_raters


def _warn_incomplete(name: str, coded: Coded) -> None:
    keep = _complete_rows(coded)
    dropped = int((~keep).sum())
    if dropped:
        warnings.warn(
            f"{name}: {dropped} of {coded.n_units} units lack a rating from some of the "
            f"{coded.n_raters} raters and were left out (listwise deletion); "
            f"{int(keep.sum())} complete units remain.",
            IncompleteDataWarning,
            stacklevel=3,
        )


def _check_form(form: str) -> tuple[int, str]:
    try:
        return K.parse_icc_form(form)
    except (KeyError, AttributeError):
        names = sorted({n for pair in K.ICC_NAMES.values() for n in pair})
        raise AgreementInputError(
            [f"icc: unknown form {form!r}; use one of {names} (or ICC1, ICC2k, ... )"]
        ) from None


@register("icc")
def _prepare_icc(coded: Coded, *, form: str = "ICC(2,1)") -> Prepared:
    model, unit = _check_form(form)
    check_ordered(coded, "icc", "an intraclass correlation")
    keep = _complete_rows(coded)
    x = np.where(np.isnan(coded.dense()), 0.0, coded.dense())
    return K.icc_parts(x, model, unit, keep=keep)


def icc(ratings: Any, *, form: str = "ICC(2,1)", categories: Categories = None) -> float:
    """Intraclass correlation coefficient, any of the six Shrout-Fleiss / McGraw-Wong forms.

    Parameters
    ----------
    ratings : array-like or Ratings
        Units (targets) x raters matrix of numeric ratings. Units with a missing rating are
        left out with an :class:`IncompleteDataWarning`.
    form : str
        Which ICC. Both naming schemes are accepted:

        ============  ============  ==========================================
        Shrout-Fleiss McGraw-Wong   model
        ============  ============  ==========================================
        ICC(1,1)      ICC(1)        one-way random, single rater
        ICC(2,1)      ICC(A,1)      two-way random, absolute agreement, single
        ICC(3,1)      ICC(C,1)      two-way mixed, consistency, single
        ICC(1,k)      ICC(k)        one-way random, mean of k raters
        ICC(2,k)      ICC(A,k)      two-way random, absolute agreement, mean
        ICC(3,k)      ICC(C,k)      two-way mixed, consistency, mean
        ============  ============  ==========================================

        pingouin's ``ICC1``, ``ICC2``, ``ICC3``, ``ICC1k``, ``ICC2k``, ``ICC3k`` also work.
    categories : sequence or mapping, optional
        Values for text labels (a mapping ``{label: value}``) or their order.

    Returns
    -------
    float
        The ICC (NaN with a :class:`DegenerateAgreementWarning` when fewer than two complete
        units or no variance).

    Notes
    -----
    With mean squares for units ``MSR``, raters ``MSC``, residual ``MSE`` and within units
    ``MSW`` from ``n`` units and ``k`` raters::

        ICC(1,1) = (MSR - MSW) / (MSR + (k - 1) MSW)
        ICC(2,1) = (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n)
        ICC(3,1) = (MSR - MSE) / (MSR + (k - 1) MSE)
        ICC(1,k) = (MSR - MSW) / MSR
        ICC(2,k) = (MSR - MSE) / (MSR + (MSC - MSE) / n)
        ICC(3,k) = (MSR - MSE) / MSR

    References
    ----------
    Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
    reliability. *Psychological Bulletin*, 86(2), 420-428.
    https://doi.org/10.1037/0033-2909.86.2.420

    McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass
    correlation coefficients. *Psychological Methods*, 1(1), 30-46.
    https://doi.org/10.1037/1082-989X.1.1.30

    Examples
    --------
    >>> from raterstats.agreement import icc
    >>> m = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> round(icc(m, form="ICC(2,1)"), 4)  # R: irr::icc(m, "twoway", "agreement")
    0.2898
    >>> round(icc(m, form="ICC(C,k)"), 4)  # R: irr::icc(m, "twoway", "consistency", "average")
    0.9093
    """
    coded = encode(ratings, categories=categories, what="icc")
    prepared = _prepare_icc(coded, form=form)
    _warn_incomplete("icc", coded)
    return finish("icc", prepared, coded)


@register("kendall_w")
def _prepare_kendall_w(coded: Coded, *, tie_correction: bool = True) -> Prepared:
    check_ordered(coded, "kendall_w", "Kendall's W")

    def direct(c: Coded) -> tuple[float, int]:
        keep = _complete_rows(c)
        return K.kendall_w(c.dense()[keep], tie_correction=tie_correction)

    return Direct(direct)


def kendall_w(ratings: Any, *, tie_correction: bool = True, categories: Categories = None) -> float:
    """Kendall's coefficient of concordance W.

    Parameters
    ----------
    ratings : array-like or Ratings
        Subjects x raters matrix of scores or ranks; each rater's column is ranked over the
        subjects (mid-ranks for ties). Subjects with a missing rating are left out with an
        :class:`IncompleteDataWarning`.
    tie_correction : bool
        Apply the correction for tied ranks (R ``irr::kendall(..., correct = TRUE)``).
    categories : sequence or mapping, optional
        Order (or values) for text labels.

    Returns
    -------
    float
        W in [0, 1] (NaN with a warning when undefined).

    Notes
    -----
    With ``n`` subjects, ``m`` raters, rank sums ``R_i`` and ``S = sum_i (R_i - mean R)^2``::

        W = 12 S / (m^2 (n^3 - n) - m sum_j T_j),   T_j = sum_t (t^3 - t)

    over the tie groups of rater ``j`` (``T_j = 0`` without correction). The corrected W
    equals Friedman's chi-squared / (m (n - 1)).

    References
    ----------
    Kendall, M. G., & Babington Smith, B. (1939). The problem of m rankings. *Annals of
    Mathematical Statistics*, 10(3), 275-287. https://doi.org/10.1214/aoms/1177732186

    Examples
    --------
    >>> from raterstats.agreement import kendall_w
    >>> m = [[1, 1, 2], [2, 3, 1], [3, 2, 3], [4, 4, 4], [5, 6, 6], [6, 5, 5]]
    >>> round(kendall_w(m), 4)  # R: irr::kendall(m, correct = TRUE)
    0.9111
    """
    coded = encode(ratings, categories=categories, what="kendall_w")
    prepared = _prepare_kendall_w(coded, tie_correction=tie_correction)
    _warn_incomplete("kendall_w", coded)
    return finish("kendall_w", prepared, coded)


__all__ = ["icc", "kendall_w"]
