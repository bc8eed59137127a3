"""Kernels of percent agreement and the chance-corrected kappa family (Cohen/Conger, Fleiss/
Scott, Brennan-Prediger/Randolph, Gwet's AC1/AC2, Fleiss' category-wise kappa), in Gwet's
(2014) raw-data form with missing ratings; plus the category counts and agreement weights
they share.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from raterstats.agreement.kernels.core import (
    REASON_CHANCE_ONE,
    REASON_NO_PAIRS,
    REASON_ONE_CATEGORY,
    REASON_ONE_RATER,
    FloatArray,
    IntArray,
    Parts,
    safe_divide,
)


# ----------------------------------------------------------------------------------------
# counts and weights
# ----------------------------------------------------------------------------------------
def category_counts(unit: IntArray, code: IntArray, n_units: int, n_categories: int) -> IntArray:
    """Units x categories count matrix ``r_ik`` (number of ratings of unit i in category k)."""
    flat = np.bincount(
        np.asarray(unit, dtype=np.int64) * n_categories + np.asarray(code, dtype=np.int64),
        minlength=n_units * n_categories,
    )
    return flat.reshape(n_units, n_categories)


WEIGHT_ALIASES: dict[str, str] = {
    "identity": "identity",
    "unweighted": "identity",
    "nominal": "identity",
    "linear": "linear",
    "equal": "linear",
    "quadratic": "quadratic",
    "squared": "quadratic",
}


def weight_matrix(kind: str, values: FloatArray) -> FloatArray:
    """Agreement weights ``w_kl`` on category values (Gwet 2014, ch. 3).

    ``identity``: ``w_kl = [k == l]``; ``linear``: ``1 - |x_k - x_l| / (x_max - x_min)``;
    ``quadratic``: ``1 - ((x_k - x_l) / (x_max - x_min))**2``.
    """
    values = np.asarray(values, dtype=np.float64)
    q = values.shape[0]
    name = WEIGHT_ALIASES[kind]
    if name == "identity" or q < 2:
        return np.eye(q)
    span = float(values.max() - values.min())
    if span <= 0:
        return np.eye(q)
    diff = np.abs(values[:, None] - values[None, :]) / span
    if name == "linear":
        return 1.0 - diff
    return 1.0 - diff**2


def tolerance_weights(values: FloatArray, tolerance: float) -> FloatArray:
    """0/1 weights: categories whose values differ by at most ``tolerance`` agree."""
    values = np.asarray(values, dtype=np.float64)
    diff = np.abs(values[:, None] - values[None, :])
    return (diff <= tolerance + 1e-9 * max(1.0, abs(tolerance))).astype(np.float64)


# ----------------------------------------------------------------------------------------
# percent agreement and the kappa family (Gwet 2014 raw-data formulas)
# ----------------------------------------------------------------------------------------
def _pairwise_agreement_columns(counts: IntArray, w: FloatArray) -> FloatArray:
    """Per-unit ``[pa_i * [r_i >= 2], [r_i >= 2]]`` with Gwet's weighted ``pa_i``.

    ``pa_i = sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` and ``r*_ik = sum_l w_kl r_il``.
    """
    c = counts.astype(np.float64)
    r = c.sum(axis=1)
    valid = r >= 2
    w = np.asarray(w, dtype=np.float64)
    if np.array_equal(w, np.eye(w.shape[0])):
        num = (c * c).sum(axis=1) - r  # sum_k r_ik (r_ik - 1)
    else:
        num = (c * (c @ w.T)).sum(axis=1) - r
    out = np.empty((c.shape[0], 2))
    out[:, 0] = np.where(valid, num / np.where(valid, r * (r - 1.0), 1.0), 0.0)
    out[:, 1] = valid
    return out


def _prevalence_columns(counts: IntArray) -> FloatArray:
    """Per-unit ``[r_ik / r_i for each k] + [[r_i >= 1]]`` (Gwet's ``pi_k`` numerators)."""
    c = counts.astype(np.float64)
    r = c.sum(axis=1)
    valid = r >= 1
    out = np.empty((c.shape[0], c.shape[1] + 1))
    np.divide(c, np.where(valid, r, 1.0)[:, None], out=out[:, :-1])
    out[:, -1] = valid
    return out


def pairwise_agreement_parts(counts: IntArray, w: FloatArray) -> Parts:
    """Percent agreement over rater pairs (Fleiss' P-bar; Gwet's weighted form).

    Mean over units with at least two ratings of the share of agreeing (weighted) pairs.
    """
    feats = _pairwise_agreement_columns(counts, w)

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        est, bad = safe_divide(s[..., 0], s[..., 1])
        return est, np.where(bad, REASON_NO_PAIRS, 0).astype(np.int64)

    return Parts(feats, finalize)


def unanimous_agreement_parts(
    counts: IntArray,
    values: FloatArray,
    *,
    tolerance: float = 0.0,
    n_raters: int | None = None,
) -> Parts:
    """Share of units on which all ratings agree (``max - min <= tolerance`` on values).

    With ``n_raters`` given only units rated by all ``n_raters`` raters count (listwise
    deletion, as ``irr::agree``); otherwise every unit with at least two ratings counts.
    """
    c = counts
    r = c.sum(axis=1)
    present = c > 0
    vals = np.asarray(values, dtype=np.float64)[None, :]
    hi = np.where(present, vals, -np.inf).max(axis=1, initial=-np.inf)
    lo = np.where(present, vals, np.inf).min(axis=1, initial=np.inf)
    eligible = r >= 2 if n_raters is None else (r == n_raters) & (n_raters >= 2)
    tol = tolerance + 1e-9 * max(1.0, abs(tolerance))
    with np.errstate(invalid="ignore"):
        agree = eligible & ((hi - lo) <= tol)
    feats = np.column_stack([agree.astype(np.float64), eligible.astype(np.float64)])

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        est, bad = safe_divide(s[..., 0], s[..., 1])
        return est, np.where(bad, REASON_NO_PAIRS, 0).astype(np.int64)

    return Parts(feats, finalize)


def _kappa(pa: FloatArray, pe: FloatArray, pa_reason: IntArray) -> tuple[FloatArray, IntArray]:
    """``(pa - pe) / (1 - pe)`` with reasons for undefined values."""
    est, bad = safe_divide(pa - pe, 1.0 - pe)
    reason = pa_reason | np.where(bad & (pa_reason == 0), REASON_CHANCE_ONE, 0)
    est = np.where(pa_reason != 0, np.nan, est)
    return est, reason.astype(np.int64)


def fleiss_parts(counts: IntArray, w: FloatArray) -> Parts:
    """Fleiss' kappa (= Scott's pi for two raters), Gwet's (2014) form with missing data.

    ``pa``: mean over units with ``r_i >= 2`` of ``sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))``;
    ``pi_k``: mean over units with ``r_i >= 1`` of ``r_ik / r_i``;
    ``pe = sum_kl w_kl pi_k pi_l``.
    """
    q = counts.shape[1]
    feats = np.column_stack([_pairwise_agreement_columns(counts, w), _prevalence_columns(counts)])
    w = np.asarray(w, dtype=np.float64)

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        pa, bad = safe_divide(s[..., 0], s[..., 1])
        pi, _ = safe_divide(s[..., 2 : 2 + q], s[..., 2 + q : 3 + q])
        pe = np.einsum("...k,kl,...l->...", pi, w, pi)
        return _kappa(pa, pe, np.where(bad, REASON_NO_PAIRS, 0))

    return Parts(feats, finalize)


def brennan_prediger_parts(counts: IntArray, w: FloatArray) -> Parts:
    """Brennan-Prediger / Randolph free-marginal kappa: ``pe = sum_kl w_kl / q**2``.

    ``q`` is the number of categories in the declared domain (the columns of ``counts``).
    """
    q = counts.shape[1]
    feats = _pairwise_agreement_columns(counts, w)
    pe_const = float(np.asarray(w, dtype=np.float64).sum()) / q**2 if q else 1.0

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        pa, bad = safe_divide(s[..., 0], s[..., 1])
        pe = np.full(pa.shape, pe_const)
        est, reason = _kappa(pa, pe, np.where(bad, REASON_NO_PAIRS, 0))
        if q < 2:
            est = np.full(pa.shape, np.nan)
            reason = reason | REASON_ONE_CATEGORY
        return est, reason

    return Parts(feats, finalize)


def gwet_ac_parts(counts: IntArray, w: FloatArray) -> Parts:
    """Gwet's AC1 (identity weights) / AC2 (other weights), Gwet (2014) raw-data form.

    ``pe = (sum_kl w_kl / (q (q - 1))) sum_k pi_k (1 - pi_k)``.
    """
    q = counts.shape[1]
    feats = np.column_stack([_pairwise_agreement_columns(counts, w), _prevalence_columns(counts)])
    t_w = float(np.asarray(w, dtype=np.float64).sum())

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        pa, bad = safe_divide(s[..., 0], s[..., 1])
        if q < 2:
            nan = np.full(pa.shape, np.nan)
            return nan, np.full(pa.shape, REASON_ONE_CATEGORY, dtype=np.int64)
        pi, _ = safe_divide(s[..., 2 : 2 + q], s[..., 2 + q : 3 + q])
        pe = t_w / (q * (q - 1.0)) * (pi * (1.0 - pi)).sum(axis=-1)
        return _kappa(pa, pe, np.where(bad, REASON_NO_PAIRS, 0))

    return Parts(feats, finalize)


def conger_parts(
    counts: IntArray,
    unit: IntArray,
    rater: IntArray,
    code: IntArray,
    n_raters: int,
    w: FloatArray,
) -> Parts:
    """Conger's (1980) kappa (= Cohen's kappa for two raters), Gwet (2014) missing-data form.

    ``pa`` as for Fleiss. Rater-specific marginals ``p_gk = n_gk / n_g`` over the units rater
    ``g`` rated; ``pbar_k`` their mean over raters, ``s2_kl`` their covariance over raters
    (denominator ``r - 1``), ``pe = sum_kl w_kl (pbar_k pbar_l - s2_kl / r)``. Raters without
    any rating are left out of ``r``.
    """
    n_units, q = counts.shape
    agree = _pairwise_agreement_columns(counts, w)
    # per-unit, per-rater one-hot codes (n_raters * q sparse columns)
    idx_rk = np.asarray(rater, dtype=np.int64) * q + np.asarray(code, dtype=np.int64)
    unit = np.asarray(unit, dtype=np.int64)
    onehot = sparse.csr_array(
        (np.ones(unit.shape[0]), (unit, idx_rk)), shape=(n_units, n_raters * q)
    )
    feats = sparse.hstack([sparse.csr_array(agree), onehot], format="csr")
    w = np.asarray(w, dtype=np.float64)

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        pa, bad = safe_divide(s[..., 0], s[..., 1])
        n_gk = s[..., 2:].reshape(*s.shape[:-1], n_raters, q)
        n_g = n_gk.sum(axis=-1)
        active = n_g > 0
        r = active.sum(axis=-1).astype(np.float64)
        p_gk = n_gk / np.where(active, n_g, 1.0)[..., None]
        r_safe = np.where(r > 0, r, 1.0)
        pbar = p_gk.sum(axis=-2) / r_safe[..., None]
        dev = np.where(active[..., None], p_gk - pbar[..., None, :], 0.0)
        cov = (
            np.einsum("...gk,...gl->...kl", dev, dev)
            / np.where(r > 1, r - 1.0, 1.0)[..., None, None]
        )
        outer = pbar[..., :, None] * pbar[..., None, :]
        pe = (w * (outer - cov / r_safe[..., None, None])).sum(axis=(-2, -1))
        flags = np.where(bad, REASON_NO_PAIRS, 0) | np.where(r < 2, REASON_ONE_RATER, 0)
        return _kappa(pa, pe, flags.astype(np.int64))

    return Parts(feats, finalize)


def fleiss_category(counts: IntArray) -> tuple[FloatArray, IntArray]:
    """Fleiss' (1971) category-wise kappa, generalised to unequal numbers of ratings.

    ``kappa_j = 1 - [mean_i n_ij (r_i - n_ij) / (r_i (r_i - 1))] / (p_j (1 - p_j))`` over units
    with ``r_i >= 2``; ``p_j`` as Gwet's ``pi_j``. With ``n`` ratings per unit this is Fleiss'
    ``1 - sum_i n_ij (n - n_ij) / (N n (n - 1) p_j q_j)``.
    """
    c = counts.astype(np.float64)
    r = c.sum(axis=1)
    valid2 = r >= 2
    valid1 = r >= 1
    if not valid2.any():
        q = c.shape[1]
        return np.full(q, np.nan), np.full(q, REASON_NO_PAIRS, dtype=np.int64)
    dis = (c[valid2] * (r[valid2, None] - c[valid2])) / (r[valid2] * (r[valid2] - 1.0))[:, None]
    dis_mean = dis.mean(axis=0)
    p = (c[valid1] / r[valid1, None]).mean(axis=0)
    ratio, bad = safe_divide(dis_mean, p * (1.0 - p))
    return 1.0 - ratio, np.where(bad, REASON_CHANCE_ONE, 0).astype(np.int64)


__all__ = [
    "WEIGHT_ALIASES",
    "brennan_prediger_parts",
    "category_counts",
    "conger_parts",
    "fleiss_category",
    "fleiss_parts",
    "gwet_ac_parts",
    "pairwise_agreement_parts",
    "tolerance_weights",
    "unanimous_agreement_parts",
    "weight_matrix",
]
