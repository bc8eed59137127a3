"""Chance-corrected agreement on categorical and ordinal ratings: the kappa family.

Cohen's and Conger's kappa (rater-specific marginals), Fleiss' kappa and Scott's pi (pooled
marginals), Randolph's free-marginal kappa (Brennan-Prediger), Gwet's AC1/AC2, and Fleiss'
category-wise kappa. Every function takes a units x raters matrix (``None``/NaN = not rated;
numbers or text labels) or a :class:`raterstats.Ratings` holding one dimension and design,
plus keyword-only options. Missing ratings follow Gwet (2014): percent agreement is averaged
over units with at least two ratings, category prevalences over units with at least one.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import xarray as xr

from raterstats.agreement import kernels as K
from raterstats.agreement.checks import Categories, Weights, check_table, weights_for
from raterstats.agreement.data import (
    AgreementInputError,
    Coded,
    DegenerateAgreementWarning,
    encode,
    warn_degenerate,
)
from raterstats.agreement.estimator import Prepared, finish, register


@register("cohen_kappa")
def prepare_cohen(
    coded: Coded,
    *,
    weights: Weights = "identity",
    weight_scale: Literal["value", "observed_level_index"] = "value",
) -> Prepared:
    """Validate the options of :func:`cohen_kappa` and prepare its additive parts.

    The registered estimator of ``"cohen_kappa"``;
    :func:`raterstats.agreement.intra_rater_agreement` with ``kind="kappa"`` uses it on the
    (first, repeat) pairs.

    Parameters
    ----------
    coded : Coded
        Encoded ratings with exactly two raters.
    weights, weight_scale
        As in :func:`cohen_kappa`.

    Returns
    -------
    Prepared
        The additive parts (Conger's kappa of two raters, which is Cohen's).

    Examples
    --------
    >>> from raterstats.agreement.data import encode_matrix
    >>> from raterstats.agreement.kernels import evaluate
    >>> est, reason = evaluate(prepare_cohen(encode_matrix([[1, 1], [1, 2], [2, 2]])))
    >>> round(est, 4), reason
    (0.4, 0)
    """
    what = "cohen_kappa"
    problems = []
    if coded.n_raters != 2:
        problems.append(
            f"{what}: Cohen's kappa needs exactly two raters, found {coded.n_raters}; use "
            "conger_kappa (its multi-rater form) or fleiss_kappa"
        )
    if weight_scale not in ("value", "observed_level_index"):
        problems.append(
            f"{what}: weight_scale must be 'value' or 'observed_level_index', not {weight_scale!r}"
        )
    if problems:
        raise AgreementInputError(problems)
    if weight_scale == "observed_level_index":
        coded = coded.with_observed_levels()
    check_table(coded, what)
    w = weights_for(coded, weights, what)
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
    prepared = prepare_cohen(coded, weights=weights, weight_scale=weight_scale)
    return finish("cohen_kappa", prepared, coded)


@register("conger_kappa")
def _prepare_conger(coded: Coded, *, weights: Weights = "identity") -> Prepared:
    what = "conger_kappa"
    check_table(coded, what)
    w = weights_for(coded, weights, what)
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
    check_table(coded, what)
    return K.fleiss_parts(coded.counts(), weights_for(coded, weights, what))


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
    check_table(coded, what)
    return K.fleiss_parts(coded.counts(), weights_for(coded, weights, what))


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
    check_table(coded, what)
    return K.brennan_prediger_parts(coded.counts(), weights_for(coded, weights, what))


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
    check_table(coded, what)
    return K.gwet_ac_parts(coded.counts(), weights_for(coded, weights, what))


@register("gwet_ac2")
def _prepare_ac2(coded: Coded, *, weights: Weights = "quadratic") -> Prepared:
    what = "gwet_ac2"
    check_table(coded, what)
    return K.gwet_ac_parts(coded.counts(), weights_for(coded, weights, what))


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
    check_table(coded, "fleiss_kappa_category")
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


__all__ = [
    "cohen_kappa",
    "conger_kappa",
    "fleiss_kappa",
    "fleiss_kappa_category",
    "gwet_ac1",
    "gwet_ac2",
    "prepare_cohen",
    "randolph_kappa",
    "scott_pi",
]
