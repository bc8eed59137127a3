"""Checks that the agreement statistics share once their input is encoded: does the statistic
need ordered categories, is the units x categories table affordable, and the validated weight
matrix; plus the types of the ``weights`` and ``categories`` options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from raterstats.agreement import kernels as K
from raterstats.agreement.data import AgreementInputError, Coded, resolve_weights

#: ``weights=``: a name (``"identity"``, ``"linear"``, ``"quadratic"`` and their R aliases)
#: or an explicit ``q x q`` matrix.
Weights = str | Sequence[Sequence[float]] | np.ndarray
#: ``categories=``: the declared category domain in order, or a mapping ``{label: value}``.
Categories = Sequence[Any] | Mapping[Any, float] | None

#: Largest units x categories table built for one statistic (cells).
MAX_CELLS = 100_000_000


def check_ordered(coded: Coded, what: str, need: str) -> None:
    """Raise an :class:`AgreementInputError` unless the categories of ``coded`` are ordered.

    Parameters
    ----------
    coded : Coded
        The encoded ratings.
    what : str
        Name of the statistic, for the message.
    need : str
        What needs the order (e.g. ``"weights='quadratic'"``), for the message.

    Examples
    --------
    >>> from raterstats.agreement.data import encode_matrix
    >>> check_ordered(encode_matrix([[1, 2]]), "cohen_kappa", "weights='linear'")  # numbers
    >>> check_ordered(encode_matrix([["a", "b"]]), "cohen_kappa", "weights='linear'")
    ... # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    AgreementInputError: cohen_kappa: weights='linear' needs an order (and values) ...
    """
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


def check_table(coded: Coded, what: str) -> None:
    """Raise an :class:`AgreementInputError` when the units x categories table of ``coded``
    would exceed :data:`MAX_CELLS` cells.

    Examples
    --------
    >>> from raterstats.agreement.data import encode_matrix
    >>> check_table(encode_matrix([[1, 2], [2, 2]]), "fleiss_kappa")  # small: passes
    """
    cells = coded.n_units * max(coded.n_categories, 1)
    if cells > MAX_CELLS:
        raise AgreementInputError(
            [
                f"{what}: {coded.n_units} units x {coded.n_categories} categories is too large a "
                "table; declare the categories, or use level='interval' for numeric data"
            ]
        )


def weights_for(coded: Coded, weights: Weights, what: str) -> np.ndarray:
    """The validated ``q x q`` weight matrix for ``coded``; partial-agreement weights given by
    name need ordered categories (:func:`check_ordered`).

    Examples
    --------
    >>> from raterstats.agreement.data import encode_matrix
    >>> weights_for(encode_matrix([[1, 2], [3, 3]]), "linear", "cohen_kappa").tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    """
    if isinstance(weights, str) and K.WEIGHT_ALIASES.get(weights) not in (None, "identity"):
        check_ordered(coded, what, f"weights={weights!r}")
    return resolve_weights(weights, coded, what=what)


__all__ = [
    "MAX_CELLS",
    "Categories",
    "Weights",
    "check_ordered",
    "check_table",
    "weights_for",
]
