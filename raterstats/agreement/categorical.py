"""Agreement on categorical and ordinal ratings: percent agreement, the kappa family, Gwet's
AC1/AC2, Krippendorff's alpha, and intra-rater (test-retest) agreement.

Every function takes a units x raters matrix (rows = units such as answers or sentences,
columns = raters; ``None``/NaN = not rated; numbers or text labels) or a
:class:`raterstats.Ratings` holding one dimension and design, plus keyword-only options, and
returns a float. Missing ratings follow Gwet (2014): percent agreement is averaged over units
with at least two ratings, category prevalences over units with at least one.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from raterstats.agreement import kernels as K
from raterstats.agreement.data import (
    AgreementInputError,
    Coded,
    DegenerateAgreementWarning,
    encode,
    encode_matrix,
    is_ratings,
    resolve_weights,
    warn_degenerate,
)
from raterstats.agreement.estimator import Direct, Prepared, finish, register

Weights = str | Sequence[Sequence[float]] | np.ndarray
Categories = Sequence[Any] | Mapping[Any, float] | None

#: Largest units x categories table built for one statistic (cells).
_MAX_CELLS = 100_000_000


def _check_ordered(coded: Coded, what: str, need: str) -> None:
    if not coded.ordered and coded.kind == "nominal":
        raise AgreementInputError(
            [
                f"{what}: {need} needs ordered categories, but the scale is nominal "
                f"{list(coded.categories)}; use an OrdinalScale, or Ratings.score(...) for "
                "numeric scores"
            ]
        )
    if not coded.ordered:
        raise AgreementInputError(
            [
                f"{what}: {need} needs an order (and values) for the text labels "
                f"{list(coded.categories)}; pass categories=[...] in order, or a mapping "
                "{label: value}"
            ]
        )


def _check_table(coded: Coded, what: str) -> None:
    cells = coded.n_units * max(coded.n_categories, 1)
    if cells > _MAX_CELLS:
        raise AgreementInputError(
            [
                f"{what}: {coded.n_units} units x {coded.n_categories} categories is too large a "
                "table; declare the categories, or use level='interval' for numeric data"
            ]
        )


def _weights_for(coded: Coded, weights: Weights, what: str) -> np.ndarray:
    if isinstance(weights, str) and K.WEIGHT_ALIASES.get(weights) not in (None, "identity"):
        _check_ordered(coded, what, f"weights={weights!r}")
    return resolve_weights(weights, coded, what=what)


# ----------------------------------------------------------------------------------------
# percent agreement
# ----------------------------------------------------------------------------------------
@register("percent_agreement")
def _prepare_percent(
    coded: Coded,
    *,
    kind: Literal["pairwise", "unanimous"] = "pairwise",
    tolerance: float | None = None,
    weights: Weights | None = None,
    missing: Literal["available", "listwise"] = "available",
) -> Prepared:
    what = "percent_agreement"
    problems = []
    if kind not in ("pairwise", "unanimous"):
        problems.append(f"{what}: kind must be 'pairwise' or 'unanimous', not {kind!r}")
    if missing not in ("available", "listwise"):
        problems.append(f"{what}: missing must be 'available' or 'listwise', not {missing!r}")
    if tolerance is not None and (not np.isfinite(tolerance) or tolerance < 0):
        problems.append(f"{what}: tolerance must be a non-negative number, not {tolerance!r}")
    if weights is not None and tolerance is not None:
        problems.append(f"{what}: give weights or tolerance, not both")
    if kind == "unanimous" and weights is not None:
        problems.append(f"{what}: weights apply to kind='pairwise' only")
    if kind == "pairwise" and missing == "listwise":
        problems.append(f"{what}: missing='listwise' applies to kind='unanimous' only")
    if problems:
        raise AgreementInputError(problems)
    _check_table(coded, what)
    counts = coded.counts()
    if tolerance is not None and tolerance > 0:
        _check_ordered(coded, what, "tolerance")
    if kind == "unanimous":
        return K.unanimous_agreement_parts(
            counts,
            coded.values,
            tolerance=tolerance or 0.0,
            n_raters=coded.n_raters if missing == "listwise" else None,
        )
    if tolerance is not None:
        w = K.tolerance_weights(coded.values, tolerance)
    else:
        w = _weights_for(coded, "identity" if weights is None else weights, what)
    return K.pairwise_agreement_parts(counts, w)


def percent_agreement(
    ratings: Any,
    *,
    kind: Literal["pairwise", "unanimous"] = "pairwise",
    tolerance: float | None = None,
    weights: Weights | None = None,
    categories: Categories = None,
    missing: Literal["available", "listwise"] = "available",
) -> float:
    """Observed percent agreement.

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated) or a ``Ratings`` with one dimension
        and design.
    kind : {"pairwise", "unanimous"}
        ``"pairwise"``: Fleiss' P-bar, the mean over units of the share of agreeing rater
        pairs. ``"unanimous"``: the share of units on which all ratings agree (``irr::agree``).
    tolerance : float, optional
        Ratings whose values differ by at most ``tolerance`` agree (``irr::agree``'s
        ``tolerance``; values are the category numbers, or positions for text labels).
    weights : {"identity", "linear", "quadratic"} or array, optional
        Partial-agreement weights for ``kind="pairwise"`` (Gwet's weighted agreement).
    categories : sequence or mapping, optional
        Declared category domain in order (a mapping gives each label's value).
    missing : {"available", "listwise"}
        For ``kind="unanimous"``: use every unit with two or more ratings, or only units
        rated by every rater (``irr::agree``'s listwise deletion).

    Returns
    -------
    float
        Agreement in [0, 1]; NaN with a :class:`DegenerateAgreementWarning` when no unit has
        two ratings.

    Notes
    -----
    Pairwise, with weights ``w_kl`` (identity by default), ``r_ik`` ratings of unit ``i`` in
    category ``k``, ``r_i`` ratings of unit ``i`` and ``r*_ik = sum_l w_kl r_il``::

        p_a = mean over units with r_i >= 2 of  sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))

    (Gwet 2014, ch. 2 and 3).

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    *Psychological Bulletin*, 76(5), 378-382. https://doi.org/10.1037/h0031619

    Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability* (4th ed.). Advanced Analytics.

    Examples
    --------
    >>> from raterstats.agreement import percent_agreement
    >>> m = [[1, 1, 2], [2, 2, 2], [3, None, 3], [1, 2, 3]]
    >>> round(percent_agreement(m), 4)
    0.5833
    >>> percent_agreement(m, kind="unanimous")
    0.5
    >>> round(percent_agreement(m, kind="unanimous", missing="listwise"), 4)  # R: irr::agree(m)
    0.3333
    >>> percent_agreement(m, kind="unanimous", tolerance=1)
    0.75
    """
    coded = encode(ratings, categories=categories, what="percent_agreement")
    prepared = _prepare_percent(
        coded, kind=kind, tolerance=tolerance, weights=weights, missing=missing
    )
    return finish("percent_agreement", prepared, coded)


# ----------------------------------------------------------------------------------------
# Cohen, Conger, Fleiss, Scott, Brennan-Prediger/Randolph, Gwet
# ----------------------------------------------------------------------------------------
@register("cohen_kappa")
def _prepare_cohen(
    coded: Coded,
    *,
    weights: Weights = "identity",
    weight_scale: Literal["value", "observed_level_index"] = "value",
) -> Prepared:
    what = "cohen_kappa"
    problems = []
    if coded.n_raters != 2:
        problems.append(
            f"{what}: Cohen's kappa compares exactly two raters (columns); got "
            f"{coded.n_raters}. Use conger_kappa (its multi-rater form) or fleiss_kappa"
        )
    if weight_scale not in ("value", "observed_level_index"):
        problems.append(
            f"{what}: weight_scale must be 'value' or 'observed_level_index', not {weight_scale!r}"
        )
    if problems:
        raise AgreementInputError(problems)
    if weight_scale == "observed_level_index":
        coded = coded.with_observed_levels()
    _check_table(coded, what)
    w = _weights_for(coded, weights, what)
    return K.conger_parts(coded.counts(), coded.unit, coded.rater, coded.code, 2, w)


def cohen_kappa(
    ratings: Any,
    *,
    weights: Weights = "identity",
    categories: Categories = None,
    weight_scale: Literal["value", "observed_level_index"] = "value",
) -> float:
    """Cohen's kappa for two raters, unweighted or weighted.

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x 2 matrix (``None``/NaN = not rated) or a ``Ratings`` with two raters.
    weights : {"identity", "linear", "quadratic"} or array
        Agreement weights; ``"equal"`` and ``"squared"`` (R ``irr`` names) are accepted.
    categories : sequence or mapping, optional
        Declared category domain in order; weights use the category values (numbers, or
        positions for text labels).
    weight_scale : {"value", "observed_level_index"}
        ``"value"``: weights on the category values of the declared domain (irrCAC,
        scikit-learn, SAS). ``"observed_level_index"``: weights on the index of the levels
        that occur (R ``irr::kappa2``'s convention, where an unused level is skipped).

    Returns
    -------
    float
        Kappa; NaN with a :class:`DegenerateAgreementWarning` when the expected agreement
        is 1 (e.g. both raters use one category only).

    Notes
    -----
    ``kappa = (p_a - p_e) / (1 - p_e)`` with ``p_a = sum_kl w_kl p_kl`` over units rated by
    both raters and ``p_e = sum_kl w_kl p_1k p_2l`` from each rater's marginal proportions
    over the units that rater rated (Gwet 2014's handling of missing ratings; with complete
    data this is Cohen 1960 / 1968).

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
    Psychological Measurement*, 20(1), 37-46. https://doi.org/10.1177/001316446002000104

    Cohen, J. (1968). Weighted kappa. *Psychological Bulletin*, 70(4), 213-220.
    https://doi.org/10.1037/h0026256

    Examples
    --------
    >>> from raterstats.agreement import cohen_kappa
    >>> m = [[1, 1], [1, 2], [2, 2], [3, 3], [3, 2], [2, 2]]
    >>> round(cohen_kappa(m), 4)  # R: irr::kappa2(m)
    0.5
    >>> round(cohen_kappa(m, weights="quadratic"), 4)  # R: irr::kappa2(m, "squared")
    0.6667
    """
    coded = encode(ratings, categories=categories, what="cohen_kappa")
    prepared = _prepare_cohen(coded, weights=weights, weight_scale=weight_scale)
    return finish("cohen_kappa", prepared, coded)


@register("conger_kappa")
def _prepare_conger(coded: Coded, *, weights: Weights = "identity") -> Prepared:
    what = "conger_kappa"
    _check_table(coded, what)
    w = _weights_for(coded, weights, what)
    return K.conger_parts(coded.counts(), coded.unit, coded.rater, coded.code, coded.n_raters, w)


def conger_kappa(
    ratings: Any, *, weights: Weights = "identity", categories: Categories = None
) -> float:
    """Conger's (1980) multi-rater kappa (Cohen's kappa generalised to many raters).

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix; the column identity matters (rater-specific marginals).
    weights : {"identity", "linear", "quadratic"} or array
        Agreement weights.
    categories : sequence or mapping, optional
        Declared category domain in order.

    Returns
    -------
    float
        Conger's kappa (NaN with a warning when undefined).

    Notes
    -----
    ``p_a`` as for :func:`fleiss_kappa`. With ``p_gk`` the share of rater ``g``'s ratings in
    category ``k`` (over the units rater ``g`` rated), ``pbar_k`` its mean over the ``r``
    raters and ``s2_kl`` the covariance of ``p_gk`` and ``p_gl`` over raters::

        p_e = sum_kl w_kl (pbar_k pbar_l - s2_kl / r)

    (Gwet 2014, ch. 5). For two raters this is Cohen's kappa.

    References
    ----------
    Conger, A. J. (1980). Integration and generalization of kappas for multiple raters.
    *Psychological Bulletin*, 88(2), 322-328. https://doi.org/10.1037/0033-2909.88.2.322

    Examples
    --------
    >>> from raterstats.agreement import conger_kappa
    >>> m = [[1, 1, 1], [1, 2, 2], [2, 2, 2], [3, 3, 2], [3, 3, 3]]
    >>> round(conger_kappa(m), 4)  # R: irr::kappam.fleiss(m, exact = TRUE)
    0.6078
    """
    coded = encode(ratings, categories=categories, what="conger_kappa")
    return finish("conger_kappa", _prepare_conger(coded, weights=weights), coded)


@register("fleiss_kappa")
def _prepare_fleiss(coded: Coded, *, weights: Weights = "identity") -> Prepared:
    what = "fleiss_kappa"
    _check_table(coded, what)
    return K.fleiss_parts(coded.counts(), _weights_for(coded, weights, what))


def fleiss_kappa(
    ratings: Any, *, weights: Weights = "identity", categories: Categories = None
) -> float:
    """Fleiss' (1971) kappa for many raters, with Gwet's (2014) handling of missing ratings.

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated); only the per-unit category counts
        matter, not which column is which rater.
    weights : {"identity", "linear", "quadratic"} or array
        Agreement weights (Gwet's weighted generalisation).
    categories : sequence or mapping, optional
        Declared category domain in order.

    Returns
    -------
    float
        Fleiss' kappa (NaN with a :class:`DegenerateAgreementWarning` when all ratings are
        in one category).

    Notes
    -----
    ``p_a`` as in :func:`percent_agreement`; ``pi_k`` is the mean over units with at least
    one rating of ``r_ik / r_i``; ``p_e = sum_kl w_kl pi_k pi_l``;
    ``kappa = (p_a - p_e) / (1 - p_e)``. With two raters this is Scott's pi.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    *Psychological Bulletin*, 76(5), 378-382. https://doi.org/10.1037/h0031619

    Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability* (4th ed.), ch. 5.

    Examples
    --------
    >>> from raterstats.agreement import fleiss_kappa
    >>> m = [[1, 1, 1], [1, 2, 2], [2, 2, 2], [3, 3, 2], [3, 3, 3]]
    >>> round(fleiss_kappa(m), 4)  # R: irr::kappam.fleiss(m); irrCAC::fleiss.kappa.raw(m)
    0.5946
    """
    coded = encode(ratings, categories=categories, what="fleiss_kappa")
    return finish("fleiss_kappa", _prepare_fleiss(coded, weights=weights), coded)


@register("scott_pi")
def _prepare_scott(coded: Coded, *, weights: Weights = "identity") -> Prepared:
    what = "scott_pi"
    _check_table(coded, what)
    return K.fleiss_parts(coded.counts(), _weights_for(coded, weights, what))


def scott_pi(
    ratings: Any, *, weights: Weights = "identity", categories: Categories = None
) -> float:
    """Scott's (1955) pi; for more than two raters, its generalisation (Fleiss' kappa).

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated).
    weights : {"identity", "linear", "quadratic"} or array
        Agreement weights.
    categories : sequence or mapping, optional
        Declared category domain in order.

    Returns
    -------
    float
        Scott's pi (NaN with a warning when undefined).

    Notes
    -----
    Chance agreement from the pooled category prevalences, ``p_e = sum_kl w_kl pi_k pi_l``,
    with Gwet's (2014) missing-data conventions: ``p_a`` over units rated at least twice,
    ``pi_k`` over units rated at least once.

    References
    ----------
    Scott, W. A. (1955). Reliability of content analysis: the case of nominal scale coding.
    *Public Opinion Quarterly*, 19(3), 321-325. https://doi.org/10.1086/266577

    Examples
    --------
    >>> from raterstats.agreement import scott_pi
    >>> m = [[1, 1], [1, 2], [2, 2], [3, 3], [3, 2], [2, 2]]
    >>> round(scott_pi(m), 4)  # R: irrCAC::fleiss.kappa.raw(m) (two raters)
    0.4667
    """
    coded = encode(ratings, categories=categories, what="scott_pi")
    return finish("scott_pi", _prepare_scott(coded, weights=weights), coded)


@register("randolph_kappa")
def _prepare_randolph(coded: Coded, *, weights: Weights = "identity") -> Prepared:
    what = "randolph_kappa"
    _check_table(coded, what)
    return K.brennan_prediger_parts(coded.counts(), _weights_for(coded, weights, what))


def randolph_kappa(
    ratings: Any, *, weights: Weights = "identity", categories: Categories = None
) -> float:
    """Randolph's free-marginal multirater kappa (= Brennan-Prediger coefficient).

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated).
    weights : {"identity", "linear", "quadratic"} or array
        Agreement weights.
    categories : sequence or mapping, optional
        The declared category domain: its size ``q`` sets chance agreement, so categories
        that nobody used count. Without it, ``q`` is the number of observed categories (for
        a ``Ratings``, the scale's levels).

    Returns
    -------
    float
        Free-marginal kappa (NaN with a warning when fewer than two categories).

    Notes
    -----
    ``p_e = sum_kl w_kl / q**2`` (``1/q`` unweighted) and ``kappa = (p_a - p_e) / (1 - p_e)``,
    ``p_a`` as in :func:`percent_agreement`.

    References
    ----------
    Brennan, R. L., & Prediger, D. J. (1981). Coefficient kappa: some uses, misuses, and
    alternatives. *Educational and Psychological Measurement*, 41(3), 687-699.
    https://doi.org/10.1177/001316448104100307

    Randolph, J. J. (2005). Free-marginal multirater kappa: an alternative to Fleiss'
    fixed-marginal multirater kappa. Joensuu Learning and Instruction Symposium (ERIC
    ED490661).

    Examples
    --------
    >>> from raterstats.agreement import randolph_kappa
    >>> m = [[1, 1, 1], [1, 2, 2], [2, 2, 2], [3, 3, 2], [3, 3, 3]]
    >>> round(randolph_kappa(m), 4)  # R: irrCAC::bp.coeff.raw(m)
    0.6
    >>> round(randolph_kappa(m, categories=[1, 2, 3, 4, 5]), 4)
    0.6667
    """
    coded = encode(ratings, categories=categories, what="randolph_kappa")
    return finish("randolph_kappa", _prepare_randolph(coded, weights=weights), coded)


@register("gwet_ac1")
def _prepare_ac1(coded: Coded, *, weights: Weights = "identity") -> Prepared:
    what = "gwet_ac1"
    _check_table(coded, what)
    return K.gwet_ac_parts(coded.counts(), _weights_for(coded, weights, what))


@register("gwet_ac2")
def _prepare_ac2(coded: Coded, *, weights: Weights = "quadratic") -> Prepared:
    what = "gwet_ac2"
    _check_table(coded, what)
    return K.gwet_ac_parts(coded.counts(), _weights_for(coded, weights, what))


def gwet_ac1(
    ratings: Any, *, weights: Weights = "identity", categories: Categories = None
) -> float:
    """Gwet's AC1 agreement coefficient (AC2 when weighted).

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated).
    weights : {"identity", "linear", "quadratic"} or array
        Agreement weights; anything but identity gives AC2 (see :func:`gwet_ac2`).
    categories : sequence or mapping, optional
        Declared category domain (its size ``q`` enters chance agreement).

    Returns
    -------
    float
        AC1 (NaN with a warning when fewer than two categories).

    Notes
    -----
    ``p_e = (sum_kl w_kl / (q (q - 1))) sum_k pi_k (1 - pi_k)`` with ``pi_k`` as in
    :func:`fleiss_kappa`, and ``AC = (p_a - p_e) / (1 - p_e)`` (Gwet 2014, ch. 4-5).

    References
    ----------
    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence
    of high agreement. *British Journal of Mathematical and Statistical Psychology*, 61(1),
    29-48. https://doi.org/10.1348/000711006X126600

    Examples
    --------
    >>> from raterstats.agreement import gwet_ac1
    >>> m = [[1, 1, 1], [1, 2, 2], [2, 2, 2], [3, 3, 2], [3, 3, 3]]
    >>> round(gwet_ac1(m), 4)  # R: irrCAC::gwet.ac1.raw(m)
    0.6026
    """
    coded = encode(ratings, categories=categories, what="gwet_ac1")
    return finish("gwet_ac1", _prepare_ac1(coded, weights=weights), coded)


def gwet_ac2(
    ratings: Any, *, weights: Weights = "quadratic", categories: Categories = None
) -> float:
    """Gwet's AC2: AC1 with partial-agreement weights (quadratic by default).

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated); ordered categories.
    weights : {"linear", "quadratic", "identity"} or array
        Agreement weights on the category values.
    categories : sequence or mapping, optional
        Declared category domain in order (values for text labels by position).

    Returns
    -------
    float
        AC2 (NaN with a warning when fewer than two categories).

    Notes
    -----
    See :func:`gwet_ac1`; the weights enter both ``p_a`` and ``p_e``.

    References
    ----------
    Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability* (4th ed.), ch. 3-5.

    Examples
    --------
    >>> from raterstats.agreement import gwet_ac2
    >>> m = [[1, 1, 1], [1, 2, 2], [2, 2, 2], [3, 3, 2], [3, 3, 3]]
    >>> round(gwet_ac2(m), 4)  # R: irrCAC::gwet.ac1.raw(m, weights = "quadratic")
    0.8052
    """
    coded = encode(ratings, categories=categories, what="gwet_ac2")
    return finish("gwet_ac2", _prepare_ac2(coded, weights=weights), coded)


def fleiss_kappa_category(ratings: Any, *, categories: Categories = None) -> xr.DataArray:
    """Fleiss' (1971) category-wise kappa: agreement on each category against the rest.

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated).
    categories : sequence or mapping, optional
        Declared category domain in order (the order of the result).

    Returns
    -------
    xarray.DataArray
        One kappa per category, dim ``category``. Categories that nobody (or everybody)
        used are NaN, with a :class:`DegenerateAgreementWarning`.

    Notes
    -----
    ``kappa_j = 1 - [mean_i n_ij (r_i - n_ij) / (r_i (r_i - 1))] / (p_j (1 - p_j))`` over
    units with at least two ratings, ``p_j`` the prevalence of category ``j``; with ``n``
    ratings per unit this is Fleiss' ``1 - sum_i n_ij (n - n_ij) / (N n (n - 1) p_j q_j)``.
    The category-against-the-rest split has no partial agreement, so there are no weights.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    *Psychological Bulletin*, 76(5), 378-382. https://doi.org/10.1037/h0031619

    Examples
    --------
    >>> from raterstats.agreement import fleiss_kappa_category
    >>> m = [[1, 1, 1], [1, 2, 2], [2, 2, 2], [3, 3, 2], [3, 3, 3]]
    >>> fleiss_kappa_category(m).round(4).values.tolist()  # R: irr::kappam.fleiss(m, detail = TRUE)
    [0.6591, 0.4444, 0.7]
    """
    coded = encode(ratings, categories=categories, what="fleiss_kappa_category")
    _check_table(coded, "fleiss_kappa_category")
    counts = coded.counts()
    est, reason = K.fleiss_category(counts)
    if np.any(reason & K.REASON_NO_PAIRS):
        warn_degenerate("fleiss_kappa_category", K.REASON_NO_PAIRS)
    elif np.any(np.isnan(est)):
        used = counts.sum(axis=0)
        total = used.sum()
        never = [c for c, u in zip(coded.categories, used, strict=True) if u == 0]
        always = [c for c, u in zip(coded.categories, used, strict=True) if u == total]
        parts = ([f"no rating uses {never}"] if never else []) + (
            [f"every rating is {always}"] if always else []
        )
        warnings.warn(
            "fleiss_kappa_category is undefined (NaN) for categories whose prevalence is 0 or "
            f"1 (p_j (1 - p_j) = 0): {'; '.join(parts)}.",
            DegenerateAgreementWarning,
            stacklevel=2,
        )
    return xr.DataArray(
        est,
        dims=("category",),
        coords={"category": list(coded.categories)},
        name="fleiss_kappa_category",
    )


# ----------------------------------------------------------------------------------------
# Krippendorff's alpha
# ----------------------------------------------------------------------------------------
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


@register("krippendorff_alpha")
def _prepare_alpha(
    coded: Coded, *, level: Literal["nominal", "ordinal", "interval", "ratio"] | None = None
) -> Prepared:
    what = "krippendorff_alpha"
    if level is None:
        level = coded.kind if coded.kind in _LEVELS else "nominal"  # type: ignore[assignment]
    if level not in _LEVELS:
        raise AgreementInputError([f"{what}: level must be one of {list(_LEVELS)}, not {level!r}"])
    if level != "nominal":
        _check_ordered(coded, what, f"level={level!r}")
    if level == "interval":
        return K.krippendorff_interval_parts(coded.unit, coded.x, coded.n_units)
    if level == "ratio" and np.any(coded.values[np.unique(coded.code)] < 0):
        raise AgreementInputError(
            [
                f"{what}: the ratio metric needs non-negative values; got "
                f"{sorted(set(coded.values[coded.code].tolist()))[:5]}..."
            ]
        )
    if level == "ordinal" and coded.n_categories > 64:

        def direct(c: Coded) -> tuple[float, int]:
            x = K.ordinal_midranks(c.unit, c.x, c.n_units)
            return K.evaluate(K.krippendorff_interval_parts(c.unit, x, c.n_units))

        return Direct(direct)
    _check_table(coded, what)
    return K.krippendorff_parts(coded.counts(), coded.values, level)


def krippendorff_alpha(
    ratings: Any,
    *,
    level: Literal["nominal", "ordinal", "interval", "ratio"] | None = None,
    categories: Categories = None,
) -> float:
    """Krippendorff's alpha for any number of raters, missing ratings and four metrics.

    Parameters
    ----------
    ratings : array-like or Ratings
        Units x raters matrix (``None``/NaN = not rated). Units with fewer than two ratings
        are not pairable and drop out.
    level : {"nominal", "ordinal", "interval", "ratio"}, optional
        Level of measurement (the difference function). Defaults to the scale's kind for a
        ``Ratings``, otherwise ``"nominal"``.
    categories : sequence or mapping, optional
        Declared category domain in order; a mapping gives each label's numeric value (the
        interval and ratio metrics use values; ordinal uses the order).

    Returns
    -------
    float
        Alpha (NaN with a :class:`DegenerateAgreementWarning` when there are no pairable
        values, or all pairable values are identical).

    Notes
    -----
    From the coincidence matrix ``o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)`` over
    units with ``m_u >= 2`` values, marginals ``n_c`` and ``n = sum_c n_c``::

        alpha = 1 - (n - 1) sum_ck o_ck delta_ck / sum_ck n_c n_k delta_ck

    Metrics: nominal ``[c != k]``; interval ``(v_c - v_k)^2``; ratio
    ``((v_c - v_k) / (v_c + v_k))^2``; ordinal ``(sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2``
    (Krippendorff's rank-based metric, which equals the interval metric on the categories'
    mid-ranks). Quadratic-weighted kappa-type coefficients relate to the interval metric.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
    Communication, University of Pennsylvania. https://repository.upenn.edu/asc_papers/43

    Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard reliability
    measure for coding data. *Communication Methods and Measures*, 1(1), 77-89.
    https://doi.org/10.1080/19312450709336664

    Examples
    --------
    >>> from raterstats.agreement import krippendorff_alpha
    >>> m = [[1, 1, None], [1, 2, 2], [2, 2, 2], [3, 3, 2], [3, 3, 3], [None, 4, None]]
    >>> round(krippendorff_alpha(m), 4)  # R: irr::kripp.alpha(t(m), "nominal")
    0.5873
    >>> round(krippendorff_alpha(m, level="interval"), 4)  # R: irr::kripp.alpha(t(m), "interval")
    0.7593
    """
    coded = encode(ratings, categories=categories, what="krippendorff_alpha")
    return finish("krippendorff_alpha", _prepare_alpha(coded, level=level), coded)


# ----------------------------------------------------------------------------------------
# intra-rater agreement
# ----------------------------------------------------------------------------------------
def repeat_pairs_coded(ratings: Any, *, what: str = "intra_rater_agreement") -> Coded:
    """First and repeated ratings of one dimension x design as a two-column :class:`Coded`
    (one unit per rater x item x segment pair, clustered by item)."""
    from raterstats.agreement.data import _single_cell

    dim, _ = _single_cell(ratings, what)
    pairs = ratings.repeat_pairs()
    if pairs.height == 0:
        raise AgreementInputError(
            [f"{what}: the ratings have no repeated ratings (repeat = True) to pair"]
        )
    scale = ratings.scale_for(dim)
    cats: Categories = None
    first = pairs.get_column("first").to_list()
    rep = pairs.get_column("repeat").to_list()
    if len(scale.levels) > 0:
        cats = dict(zip(scale.levels, np.asarray(scale.values).tolist(), strict=True))
        lookup = {float(v): lv for lv, v in zip(scale.levels, scale.values, strict=True)}
        first = [lookup[float(v)] for v in first]
        rep = [lookup[float(v)] for v in rep]
    mat = np.empty((len(first), 2), dtype=object)
    mat[:, 0] = first
    mat[:, 1] = rep
    coded = encode_matrix(mat, categories=cats, what=what)
    items = np.asarray(pairs.get_column("item").to_list())
    _, cluster = np.unique(items, return_inverse=True)
    return dataclasses.replace(
        coded,
        cluster=cluster.astype(np.int64).ravel(),
        n_clusters=int(np.unique(items).shape[0]),
        kind=scale.kind,
        ordered=scale.kind != "nominal",
    )


@register("intra_rater_agreement")
def _prepare_intra(
    coded: Coded,
    *,
    kind: Literal["percent", "kappa"] = "percent",
    weights: Weights = "identity",
    tolerance: float | None = None,
) -> Prepared:
    what = "intra_rater_agreement"
    problems = []
    if kind not in ("percent", "kappa"):
        problems.append(f"{what}: kind must be 'percent' or 'kappa', not {kind!r}")
    if kind == "kappa" and tolerance is not None:
        problems.append(f"{what}: tolerance applies to kind='percent' only")
    if coded.n_raters != 2:
        problems.append(
            f"{what}: expected two columns (first rating, repeated rating), got {coded.n_raters}"
        )
    if problems:
        raise AgreementInputError(problems)
    if kind == "percent":
        pw = None if isinstance(weights, str) and weights == "identity" else weights
        return _prepare_percent(coded, kind="pairwise", tolerance=tolerance, weights=pw)
    return _prepare_cohen(coded, weights=weights)


def intra_rater_agreement(
    ratings: Any,
    *,
    kind: Literal["percent", "kappa"] = "percent",
    weights: Weights = "identity",
    tolerance: float | None = None,
    categories: Categories = None,
) -> float:
    """Intra-rater (test-retest) agreement: each rater's repeated rating against the first.

    Parameters
    ----------
    ratings : Ratings or array-like
        A ``Ratings`` with ratings marked ``repeat`` (paired with the same rater's first
        rating of the same item, segment, dimension and design; one dimension and design),
        or an array of shape ``(n_pairs, 2)``: first rating, repeated rating, one row per
        rater x unit. In :func:`agreement` it is computed per cell from the repeat pairs,
        with the item as bootstrap cluster.
    kind : {"percent", "kappa"}
        ``"percent"``: the share of pairs given the same rating (or within ``tolerance``).
        ``"kappa"``: Cohen's kappa between the first and the repeated ratings, pooled over
        raters.
    weights : {"identity", "linear", "quadratic"} or array
        Weights for ``kind="kappa"`` (and weighted percent agreement for ``"percent"``).
    tolerance : float, optional
        For ``kind="percent"``: values within ``tolerance`` count as the same.
    categories : sequence or mapping, optional
        Declared category domain in order.

    Returns
    -------
    float
        Self-agreement (NaN with a warning when undefined).

    References
    ----------
    Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability* (4th ed.), ch. 1 (intra-rater
    reliability).

    Examples
    --------
    >>> from raterstats.agreement import intra_rater_agreement
    >>> pairs = [["yes", "yes"], ["no", "yes"], ["no", "no"], ["yes", "yes"]]
    >>> intra_rater_agreement(pairs)
    0.75
    >>> round(intra_rater_agreement(pairs, kind="kappa"), 4)  # R: irr::kappa2(pairs)
    0.5
    """
    what = "intra_rater_agreement"
    if is_ratings(ratings):
        if categories is not None:
            raise AgreementInputError(
                [f"{what}: a Ratings' scale declares its categories; leave categories=None"]
            )
        coded = repeat_pairs_coded(ratings)
    else:
        coded = encode_matrix(ratings, categories=categories, what=what)
    prepared = _prepare_intra(coded, kind=kind, weights=weights, tolerance=tolerance)
    return finish(what, prepared, coded)


__all__ = [
    "cohen_kappa",
    "conger_kappa",
    "fleiss_kappa",
    "fleiss_kappa_category",
    "gwet_ac1",
    "gwet_ac2",
    "intra_rater_agreement",
    "krippendorff_alpha",
    "percent_agreement",
    "randolph_kappa",
    "scott_pi",
]
