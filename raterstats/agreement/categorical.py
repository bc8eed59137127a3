"""Raw (not chance-corrected) agreement on categorical and ordinal ratings: percent
agreement, and intra-rater (test-retest) agreement as percent agreement or kappa.

Every function takes a units x raters matrix (rows = units such as answers or sentences,
columns = raters; ``None``/NaN = not rated; numbers or text labels) or a
:class:`raterstats.Ratings` holding one dimension and design, plus keyword-only options, and
returns a float. Missing ratings follow Gwet (2014): percent agreement is averaged over units
with at least two ratings. The kappa family is in :mod:`raterstats.agreement.kappa`,
Krippendorff's alpha in :mod:`raterstats.agreement.alpha`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np

from raterstats.agreement import kernels as K
from raterstats.agreement.checks import (
    Categories,
    Weights,
    check_ordered,
    check_table,
    weights_for,
)
from raterstats.agreement.data import (
    AgreementInputError,
    Coded,
    encode,
    encode_matrix,
    is_ratings,
    single_cell,
)
from raterstats.agreement.estimator import Prepared, finish, register
from raterstats.agreement.kappa import prepare_cohen


def percent_option_problems(
    *,
    kind: str = "pairwise",
    tolerance: float | None = None,
    weights: Weights | None = None,
    missing: str = "available",
) -> list[str]:
    """What is wrong with the options of :func:`percent_agreement`, whatever the data.

    Examples
    --------
    >>> percent_option_problems(kind="unanimous", weights="linear")
    ["percent_agreement: weights apply to kind='pairwise' only"]
    """
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
    return problems


@register("percent_agreement", check=percent_option_problems)
def _prepare_percent(
    coded: Coded,
    *,
    kind: Literal["pairwise", "unanimous"] = "pairwise",
    tolerance: float | None = None,
    weights: Weights | None = None,
    missing: Literal["available", "listwise"] = "available",
) -> Prepared:
    what = "percent_agreement"
    problems = percent_option_problems(
        kind=kind, tolerance=tolerance, weights=weights, missing=missing
    )
    if problems:
        raise AgreementInputError(problems)
    check_table(coded, what)
    counts = coded.counts()
    if tolerance is not None and tolerance > 0:
        check_ordered(coded, what, "tolerance")
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
        w = weights_for(coded, "identity" if weights is None else weights, what)
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


def repeat_pairs_coded(ratings: Any, *, what: str = "intra_rater_agreement") -> Coded:
    """The repeat pairs of one dimension x design (:meth:`raterstats.Ratings.repeat_pairs`:
    every pair of ratings of a rater x item x segment, earlier rating first) as a two-column
    :class:`Coded`, one unit per pair, clustered by item."""
    dim, _ = single_cell(ratings, what)
    pairs = ratings.repeat_pairs()
    if pairs.height == 0:
        raise AgreementInputError(
            [
                f"{what}: the ratings have no repeated ratings to pair (no rater rated an "
                "item, segment, dimension and design twice; mark repeats in a 'repeat' column)"
            ]
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


def intra_option_problems(
    *, kind: str = "percent", weights: Weights = "identity", tolerance: float | None = None
) -> list[str]:
    """What is wrong with the options of :func:`intra_rater_agreement`, whatever the data.

    Examples
    --------
    >>> intra_option_problems(kind="kappa", tolerance=1.0)
    ["intra_rater_agreement: tolerance applies to kind='percent' only"]
    """
    what = "intra_rater_agreement"
    problems = []
    if kind not in ("percent", "kappa"):
        problems.append(f"{what}: kind must be 'percent' or 'kappa', not {kind!r}")
    if kind == "kappa" and tolerance is not None:
        problems.append(f"{what}: tolerance applies to kind='percent' only")
    return problems


@register("intra_rater_agreement", check=intra_option_problems)
def _prepare_intra(
    coded: Coded,
    *,
    kind: Literal["percent", "kappa"] = "percent",
    weights: Weights = "identity",
    tolerance: float | None = None,
) -> Prepared:
    what = "intra_rater_agreement"
    problems = intra_option_problems(kind=kind, weights=weights, tolerance=tolerance)
    if coded.n_raters != 2:
        problems.append(
            f"{what}: expected two columns (first rating, repeated rating), got {coded.n_raters}"
        )
    if problems:
        raise AgreementInputError(problems)
    if kind == "percent":
        pw = None if isinstance(weights, str) and weights == "identity" else weights
        return _prepare_percent(coded, kind="pairwise", tolerance=tolerance, weights=pw)
    return prepare_cohen(coded, weights=weights)


def intra_rater_agreement(
    ratings: Any,
    *,
    kind: Literal["percent", "kappa"] = "percent",
    weights: Weights = "identity",
    tolerance: float | None = None,
    categories: Categories = None,
) -> float:
    """Intra-rater (test-retest) agreement: each rater's ratings of the same unit against
    each other.

    Parameters
    ----------
    ratings : Ratings or array-like
        A ``Ratings`` with repeated ratings (one dimension and design), or an array of shape
        ``(n_pairs, 2)``: earlier rating, later rating, one row per pair. From a
        ``Ratings`` the pairs are :meth:`~raterstats.Ratings.repeat_pairs`: every pair of
        ratings one rater gave the same item, segment, dimension and design, so a unit
        rated twice gives one pair (first, repeat) and a unit rated ``m`` times gives
        ``m (m - 1) / 2``. In :func:`agreement` it is computed per cell from these pairs,
        with the item as bootstrap cluster.
    kind : {"percent", "kappa"}
        ``"percent"``: the share of pairs given the same rating (or within ``tolerance``).
        ``"kappa"``: Cohen's kappa between the earlier and the later ratings of the pairs,
        pooled over raters.
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

    Notes
    -----
    With more than two ratings per unit, all pairs of replicates are compared, as in the
    kappa-like intra-rater coefficients for ``m`` replicates (Gwet 2008: the replicates
    take the place of the raters of a pairwise agreement); the percent agreement pools the
    pairs, so with ``m`` ratings on every unit it is the mean over units of the share of
    agreeing replicate pairs. Comparing each repeat with the first rating only would count the
    first rating ``m - 1`` times and leave out the agreement of the repeats with each
    other.

    References
    ----------
    Gwet, K. L. (2008). Intrarater reliability. In R. B. D'Agostino, L. Sullivan and
    J. Massaro (eds.), *Wiley Encyclopedia of Clinical Trials*. Wiley.

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
    "intra_option_problems",
    "intra_rater_agreement",
    "percent_agreement",
    "percent_option_problems",
    "repeat_pairs_coded",
]
