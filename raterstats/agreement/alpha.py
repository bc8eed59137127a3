"""Krippendorff's alpha for any number of raters, missing ratings and four levels of
measurement (nominal, ordinal, interval, ratio).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from raterstats.agreement import kernels as K
from raterstats.agreement.checks import Categories, check_ordered, check_table
from raterstats.agreement.data import AgreementInputError, Coded, encode
from raterstats.agreement.estimator import Direct, Prepared, finish, register

_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def resolve_alpha_level(
    coded: Coded, options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The level of measurement alpha uses on ``coded``: the one given, or the scale's kind
    (nominal for data without a scale), with a note saying where a default came from.

    Examples
    --------
    >>> from raterstats.agreement.data import encode_matrix
    >>> resolve_alpha_level(encode_matrix([[1, 2]]), {"level": None})
    ({'level': 'nominal'}, {'level': 'default for data without a scale'})
    """
    if options.get("level") is not None:
        return dict(options), {}
    if coded.kind in _LEVELS:
        note = f"from the {coded.kind} scale"
        level = coded.kind
    else:
        note = "default for data without a scale"
        level = "nominal"
    return {**options, "level": level}, {"level": note}


@register("krippendorff_alpha", resolve=resolve_alpha_level)
def _prepare_alpha(
    coded: Coded, *, level: Literal["nominal", "ordinal", "interval", "ratio"] | None = None
) -> Prepared:
    what = "krippendorff_alpha"
    if level is None:
        level = resolve_alpha_level(coded, {"level": None})[0]["level"]
    if level not in _LEVELS:
        raise AgreementInputError([f"{what}: level must be one of {list(_LEVELS)}, not {level!r}"])
    if level != "nominal":
        check_ordered(coded, what, f"level={level!r}")
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
    check_table(coded, what)
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


__all__ = ["krippendorff_alpha", "resolve_alpha_level"]
