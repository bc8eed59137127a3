"""Zero-sum parametrisations shared by the rater models.

Effects that sum to zero over a facet (systems, questions, the human panel) are sampled as
``n - 1`` free coordinates and mapped onto the vectors that sum to zero by an isometry, so
that standard normal coordinates give a zero-sum normal vector with the prior's scale:
either by an explicit orthonormal basis (:func:`zero_sum_basis`, Helmert) or by PyMC's
``ZeroSumTransform`` map (:func:`zero_sum_extend_np`, :func:`zero_sum_extend_pt`), which
needs O(n) operations instead of O(n^2) and suits long facets (answers, questions).

The compiled densities carry their own numba forms of these maps (a cached numba function
must not call into another module's code: numba's on-disk cache would not notice that
code changing); their tests check them against the functions here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from raterstats.lazy import LazyModule

if TYPE_CHECKING:
    import pytensor.tensor as pt
else:
    pt = LazyModule("pytensor.tensor")


def zero_sum_basis(n: int) -> np.ndarray:
    """An orthonormal basis (n x (n-1)) of the vectors that sum to zero (Helmert).

    ``B @ z`` with ``z ~ N(0, sigma^2 I)`` is a zero-sum normal vector with scale sigma.

    Parameters
    ----------
    n : int
        Length of the vectors (``n = 1`` gives an empty ``1 x 0`` basis).

    Returns
    -------
    np.ndarray
        Shape ``(n, n - 1)``; column ``k - 1`` is ``(1, ..., 1, -k, 0, ...) / sqrt(k (k + 1))``.

    Examples
    --------
    >>> b = zero_sum_basis(4)
    >>> np.allclose(b.T @ b, np.eye(3)), np.allclose(b.sum(axis=0), 0)
    (True, True)
    """
    b = np.zeros((n, max(n - 1, 0)))
    for k in range(1, n):
        b[:k, k - 1] = 1.0 / math.sqrt(k * (k + 1))
        b[k, k - 1] = -k / math.sqrt(k * (k + 1))
    return b


def zero_sum_extend_np(y: np.ndarray, axis: int = 0) -> np.ndarray:
    """PyMC's zero-sum map along ``axis`` (the first by default): ``n - 1`` coordinates to
    ``n`` values that sum to zero over that axis (an isometry; the NumPy form of the
    compiled densities' ``zero_sum_extend``).

    Parameters
    ----------
    y : np.ndarray
        Free coordinates, ``n - 1`` along ``axis``.
    axis : int
        The axis of the coordinates (e.g. ``-2`` for a batch of ``(n - 1, width)``
        blocks).

    Returns
    -------
    np.ndarray
        ``n`` along ``axis``, summing to zero over it.

    Examples
    --------
    >>> v = zero_sum_extend_np(np.array([[1.0], [2.0]]))
    >>> v.shape, bool(np.isclose(v.sum(), 0.0)), bool(np.isclose((v**2).sum(), 5.0))
    ((3, 1), True, True)
    """
    n = y.shape[axis] + 1
    tot = y.sum(axis=axis, keepdims=True)
    norm = tot / (np.sqrt(n) + n)
    return np.concatenate([y - norm, -tot / np.sqrt(n)], axis=axis)


def zero_sum_extend_pt(y: Any, n: int) -> Any:
    """The PyTensor form of :func:`zero_sum_extend_np` (``y`` has ``n - 1`` rows).

    Parameters
    ----------
    y : pytensor tensor
        Free coordinates, ``n - 1`` along the first axis.
    n : int
        Length of the zero-sum axis of the result.

    Returns
    -------
    pytensor tensor
        ``n`` along the first axis, summing to zero over it.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([[1.0], [2.0]])
    >>> np.allclose(zero_sum_extend_pt(y, 3).eval(), zero_sum_extend_np(y))
    True
    """
    tot = y.sum(axis=0, keepdims=True)
    norm = tot / (np.sqrt(n) + n)
    return pt.concatenate([y - norm, -tot / np.sqrt(n)], axis=0)


__all__ = ["zero_sum_basis", "zero_sum_extend_np", "zero_sum_extend_pt"]
