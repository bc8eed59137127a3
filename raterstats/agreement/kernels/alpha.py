"""Kernels of Krippendorff's alpha: the coincidence-matrix form for the nominal, ordinal,
interval and ratio metrics, and a table-free interval form for raw numeric values.
"""

from __future__ import annotations

import numpy as np

from raterstats.agreement.kernels.core import (
    REASON_CHANCE_ONE,
    REASON_NO_PAIRS,
    FloatArray,
    IntArray,
    Parts,
    safe_divide,
)
from raterstats.agreement.kernels.ranks import midranks


def _metric_matrix(level: str, values: FloatArray) -> FloatArray:
    v = np.asarray(values, dtype=np.float64)
    if level == "nominal":
        return 1.0 - np.eye(v.shape[0])
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        tot = v[:, None] + v[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where(tot == 0, 0.0, ((v[:, None] - v[None, :]) / np.where(tot == 0, 1, tot)))
        return d**2
    raise ValueError(f"no fixed metric matrix for level {level!r}")


def _ordinal_midpoints(n_c: FloatArray) -> FloatArray:
    """Krippendorff's ordinal metric as an interval metric on mid-rank positions.

    ``delta_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)**2 = (M_k - M_c)**2`` with
    ``M_c = sum_{g<c} n_g + n_c / 2`` (the mid-rank of category c among pairable values).
    """
    cum = np.cumsum(n_c, axis=-1)
    return cum - n_c / 2.0


def krippendorff_parts(counts: IntArray, values: FloatArray, level: str) -> Parts:
    """Krippendorff's alpha from a units x categories count matrix (pairable values only).

    The coincidence matrix is ``o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)`` over units
    with ``m_u >= 2`` values; ``alpha = 1 - (n - 1) sum_ck o_ck delta_ck / sum_ck n_c n_k
    delta_ck`` (Krippendorff 2011). ``level`` is ``nominal``, ``ordinal`` (rank-based metric
    on the marginal frequencies), ``interval`` or ``ratio``.
    """
    c = counts.astype(np.float64)
    m = c.sum(axis=1)
    pairable = m >= 2
    cp = np.where(pairable[:, None], c, 0.0)
    inv = np.where(pairable, 1.0 / np.where(pairable, m - 1.0, 1.0), 0.0)
    q = c.shape[1]
    if level == "ordinal":
        # per-unit coincidence contributions (q * q columns) and pairable marginals
        coinc = np.einsum("uk,ul->ukl", cp, cp) * inv[:, None, None]
        coinc[:, np.arange(q), np.arange(q)] -= cp * inv[:, None]
        feats = np.column_stack([coinc.reshape(-1, q * q), cp])

        def finalize_ord(s: FloatArray) -> tuple[FloatArray, IntArray]:
            o = s[..., : q * q].reshape(*s.shape[:-1], q, q)
            n_c = s[..., q * q :]
            mid = _ordinal_midpoints(n_c)
            delta = (mid[..., :, None] - mid[..., None, :]) ** 2
            n = n_c.sum(axis=-1)
            num = (o * delta).sum(axis=(-2, -1))
            den = np.einsum("...k,...kl,...l->...", n_c, delta, n_c)
            return _alpha(num, den, n)

        return Parts(feats, finalize_ord)

    delta = _metric_matrix(level, values)
    if level == "nominal":  # n_u' (1 - I) n_u = m_u^2 - sum_k n_uk^2
        d_u = ((m * m) - (cp * cp).sum(axis=1)) * inv
    else:
        d_u = ((cp @ delta) * cp).sum(axis=1) * inv
    feats = np.empty((c.shape[0], q + 1))
    feats[:, 0] = d_u
    feats[:, 1:] = cp

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        n_c = s[..., 1:]
        n = n_c.sum(axis=-1)
        den = np.einsum("...k,kl,...l->...", n_c, delta, n_c)
        return _alpha(s[..., 0], den, n)

    return Parts(feats, finalize)


def _alpha(num: FloatArray, den: FloatArray, n: FloatArray) -> tuple[FloatArray, IntArray]:
    """``1 - (n - 1) num / den`` with reasons (no pairable values; zero expected disagreement)."""
    no_pairs = ~(n >= 2)
    ratio, bad = safe_divide(num, den, scale=np.maximum(np.abs(num), 1e-300))
    est = np.where(no_pairs | bad, np.nan, 1.0 - (n - 1.0) * np.where(bad, 0.0, ratio))
    reason = np.where(no_pairs, REASON_NO_PAIRS, np.where(bad, REASON_CHANCE_ONE, 0))
    return est, reason.astype(np.int64)


def krippendorff_interval_parts(unit: IntArray, x: FloatArray, n_units: int) -> Parts:
    """Krippendorff's interval alpha from raw numeric values, without a category table.

    Uses ``sum_{i != j in u} (x_i - x_j)**2 = 2 m_u S2_u - 2 S1_u**2`` per unit and the same
    identity over all pairable values for the expected disagreement. Values are shifted by an
    observed value first (alpha is shift invariant), which keeps the moments numerically
    stable.
    """
    unit = np.asarray(unit, dtype=np.int64)
    x = np.asarray(x, dtype=np.float64)
    m = np.bincount(unit, minlength=n_units).astype(np.float64)
    pairable = m >= 2
    keep = pairable[unit]
    if keep.any():
        # shift by one observed value: identical values become exactly 0 (so the expected
        # disagreement of constant data is exactly 0), spread stays at data scale
        x = x - x[keep][0]
    xs = np.where(keep, x, 0.0)
    s1 = np.bincount(unit, weights=xs, minlength=n_units)
    s2 = np.bincount(unit, weights=xs * xs, minlength=n_units)
    mp = np.where(pairable, m, 0.0)
    inv = np.where(pairable, 1.0 / np.where(pairable, m - 1.0, 1.0), 0.0)
    d_u = (2.0 * mp * s2 - 2.0 * s1 * s1) * inv
    feats = np.column_stack([d_u, mp, s1, s2])

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        n = s[..., 1]
        den = 2.0 * n * s[..., 3] - 2.0 * s[..., 2] ** 2
        return _alpha(s[..., 0], den, n)

    return Parts(feats, finalize)


def ordinal_midranks(unit: IntArray, x: FloatArray, n_units: int) -> FloatArray:
    """Replace each pairable value by its mid-rank among all pairable values.

    With these values, Krippendorff's ordinal alpha equals the interval alpha (see
    :func:`_ordinal_midpoints`). Unpairable values are returned unchanged (they are dropped).
    """
    unit = np.asarray(unit, dtype=np.int64)
    x = np.asarray(x, dtype=np.float64)
    m = np.bincount(unit, minlength=n_units)
    keep = m[unit] >= 2
    out = x.copy()
    if keep.any():
        out[keep] = midranks(x[keep])
    return out


__all__ = [
    "krippendorff_interval_parts",
    "krippendorff_parts",
    "ordinal_midranks",
]
