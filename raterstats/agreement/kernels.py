"""NumPy kernels for classical agreement statistics.

This module imports neither polars nor xarray. Data arrive already encoded:

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
``replicate_weights @ features``, which is how :func:`bootstrap_additive` vectorises all
replicates without a Python loop over units or items.

``reason`` is a bit mask telling why an estimate is NaN (see the ``REASON_*`` constants and
:data:`REASON_TEXT`); it is 0 for a regular value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

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
_ZERO_TOL = 1e-12


def explain(reason: int) -> str:
    """Join the texts of the reasons set in the bit mask ``reason``."""
    parts = [text for bit, text in REASON_TEXT.items() if reason & bit]
    return "; ".join(parts) if parts else "undefined value"


def _divide(
    num: FloatArray, den: FloatArray, scale: FloatArray | float = 1.0
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """``num / den`` with NaN (and a mask) where ``|den| <= _ZERO_TOL * scale``."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    bad = ~(np.abs(den) > _ZERO_TOL * np.asarray(scale, dtype=np.float64))
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
        est, bad = _divide(s[..., 0], s[..., 1])
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
        est, bad = _divide(s[..., 0], s[..., 1])
        return est, np.where(bad, REASON_NO_PAIRS, 0).astype(np.int64)

    return Parts(feats, finalize)


def _kappa(pa: FloatArray, pe: FloatArray, pa_reason: IntArray) -> tuple[FloatArray, IntArray]:
    """``(pa - pe) / (1 - pe)`` with reasons for undefined values."""
    est, bad = _divide(pa - pe, 1.0 - pe)
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
        pa, bad = _divide(s[..., 0], s[..., 1])
        pi, _ = _divide(s[..., 2 : 2 + q], s[..., 2 + q : 3 + q])
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
        pa, bad = _divide(s[..., 0], s[..., 1])
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
        pa, bad = _divide(s[..., 0], s[..., 1])
        if q < 2:
            nan = np.full(pa.shape, np.nan)
            return nan, np.full(pa.shape, REASON_ONE_CATEGORY, dtype=np.int64)
        pi, _ = _divide(s[..., 2 : 2 + q], s[..., 2 + q : 3 + q])
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
        pa, bad = _divide(s[..., 0], s[..., 1])
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
    ratio, bad = _divide(dis_mean, p * (1.0 - p))
    return 1.0 - ratio, np.where(bad, REASON_CHANCE_ONE, 0).astype(np.int64)


# ----------------------------------------------------------------------------------------
# Krippendorff's alpha
# ----------------------------------------------------------------------------------------
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
    ratio, bad = _divide(num, den, scale=np.maximum(np.abs(num), 1e-300))
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


# ----------------------------------------------------------------------------------------
# ICC (Shrout & Fleiss 1979; McGraw & Wong 1996)
# ----------------------------------------------------------------------------------------
ICC_FORMS: dict[str, tuple[int, str]] = {
    "1": (1, "1"),
    "2": (2, "1"),
    "3": (3, "1"),
    "11": (1, "1"),
    "21": (2, "1"),
    "A1": (2, "1"),
    "31": (3, "1"),
    "C1": (3, "1"),
    "K": (1, "k"),
    "1K": (1, "k"),
    "2K": (2, "k"),
    "AK": (2, "k"),
    "3K": (3, "k"),
    "CK": (3, "k"),
}

ICC_NAMES: dict[tuple[int, str], tuple[str, str]] = {
    (1, "1"): ("ICC(1,1)", "ICC(1)"),
    (2, "1"): ("ICC(2,1)", "ICC(A,1)"),
    (3, "1"): ("ICC(3,1)", "ICC(C,1)"),
    (1, "k"): ("ICC(1,k)", "ICC(k)"),
    (2, "k"): ("ICC(2,k)", "ICC(A,k)"),
    (3, "k"): ("ICC(3,k)", "ICC(C,k)"),
}


def parse_icc_form(form: str) -> tuple[int, str]:
    """Map a Shrout-Fleiss or McGraw-Wong name (or pingouin's ``ICC2k`` style) to a form."""
    token = form.upper().replace(" ", "").replace("_", "")
    if token.startswith("ICC"):
        token = token[3:]
    token = token.replace("(", "").replace(")", "").replace(",", "")
    if token not in ICC_FORMS:
        raise KeyError(form)
    return ICC_FORMS[token]


def icc_parts(x: FloatArray, model: int, unit: str, keep: NDArray[np.bool_] | None = None) -> Parts:
    """Intraclass correlation from a complete units x raters matrix via ANOVA mean squares.

    Rows where ``keep`` is false (incomplete units) contribute nothing.

    ``MSR`` (units), ``MSC`` (raters), ``MSE`` (residual) and ``MSW`` (within units):
    ICC(1,1) = (MSR - MSW) / (MSR + (k-1) MSW); ICC(2,1) = (MSR - MSE) / (MSR + (k-1) MSE +
    k (MSC - MSE) / n); ICC(3,1) = (MSR - MSE) / (MSR + (k-1) MSE); the average-measure forms
    ICC(1,k) = (MSR - MSW) / MSR, ICC(2,k) = (MSR - MSE) / (MSR + (MSC - MSE) / n),
    ICC(3,k) = (MSR - MSE) / MSR.
    """
    x = np.asarray(x, dtype=np.float64)
    k = x.shape[1]
    keep = np.ones(x.shape[0], dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    x = np.where(keep[:, None], x, 0.0)
    if keep.any():
        x = np.where(keep[:, None], x - x[keep][0, 0], 0.0)
    rows = x.sum(axis=1)
    feats = np.column_stack([keep.astype(np.float64), rows, rows**2, (x**2).sum(axis=1), x])

    def finalize(s: FloatArray) -> tuple[FloatArray, IntArray]:
        n = s[..., 0]
        total = s[..., 1]
        nk = n * k
        with np.errstate(divide="ignore", invalid="ignore"):
            corr = total**2 / nk
            sst = s[..., 3] - corr
            ssr = s[..., 2] / k - corr
            ssc = (s[..., 4:] ** 2).sum(axis=-1) / n - corr
            sse = sst - ssr - ssc
            msr = ssr / (n - 1.0)
            msc = ssc / (k - 1.0) if k > 1 else np.full(n.shape, np.nan)
            mse = sse / ((n - 1.0) * (k - 1.0))
            msw = (sst - ssr) / (n * (k - 1.0))
        if model == 1:
            num = msr - msw
            den = msr + (k - 1.0) * msw if unit == "1" else msr
        elif model == 2:
            num = msr - mse
            den = (
                msr + (k - 1.0) * mse + k * (msc - mse) / n
                if unit == "1"
                else (msr + (msc - mse) / n)
            )
        else:
            num = msr - mse
            den = msr + (k - 1.0) * mse if unit == "1" else msr
        too_few = ~(n >= 2) | (k < 2)
        est, bad = _divide(num, den, scale=np.maximum(np.abs(sst), 1e-300))
        est = np.where(too_few, np.nan, est)
        few = REASON_ONE_RATER if k < 2 else REASON_TOO_FEW
        reason = np.where(too_few, few, np.where(bad, REASON_NO_VARIANCE, 0))
        return est, reason.astype(np.int64)

    return Parts(feats, finalize)


# ----------------------------------------------------------------------------------------
# ranks, Kendall's W, Kendall's tau-b, Spearman's rho
# ----------------------------------------------------------------------------------------
def midranks(x: FloatArray) -> FloatArray:
    """Mid-ranks (1-based, ties get the mean of their positions) of a 1-d array."""
    ranks, _ = midranks_columns(np.asarray(x, dtype=np.float64)[:, None])
    return ranks[:, 0]


def midranks_columns(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Column-wise mid-ranks of a complete (n, m) matrix and each column's ``sum (t^3 - t)``."""
    x = np.asarray(x, dtype=np.float64)
    n, m = x.shape
    if n == 0:
        return np.zeros((0, m)), np.zeros(m)
    order = np.argsort(x, axis=0, kind="stable")
    xs = np.take_along_axis(x, order, axis=0)
    # run starts within each column (column-major flattening)
    xs_t = xs.T
    new = np.ones((m, n), dtype=bool)
    new[:, 1:] = xs_t[:, 1:] != xs_t[:, :-1]
    run_id = np.cumsum(new.ravel()) - 1
    run_len = np.bincount(run_id)
    pos = np.tile(np.arange(n, dtype=np.float64), m)
    run_start = pos[new.ravel()]
    mid = run_start + (run_len + 1.0) / 2.0
    ranks_sorted = mid[run_id].reshape(m, n).T
    ranks = np.empty_like(ranks_sorted)
    np.put_along_axis(ranks, order, ranks_sorted, axis=0)
    col_of_run = (np.flatnonzero(new.ravel()) // n).astype(np.int64)
    t = run_len.astype(np.float64)
    ties = np.bincount(col_of_run, weights=t**3 - t, minlength=m)
    return ranks, ties


def kendall_w(x: FloatArray, *, tie_correction: bool = True) -> tuple[float, int]:
    """Kendall's coefficient of concordance W for a complete subjects x raters matrix.

    Each rater's column is ranked over subjects (mid-ranks). ``W = 12 S / (m^2 (n^3 - n) - m
    sum_j T_j)`` with ``S = sum_i (R_i - mean R)^2``, ``T_j = sum (t^3 - t)`` over rater j's tie
    groups (``T_j = 0`` without tie correction).
    """
    x = np.asarray(x, dtype=np.float64)
    n, m = x.shape
    if n < 2:
        return float("nan"), REASON_TOO_FEW
    if m < 2:
        return float("nan"), REASON_ONE_RATER
    ranks, ties = midranks_columns(x)
    r_i = ranks.sum(axis=1)
    s = float(((r_i - r_i.mean()) ** 2).sum())
    den = m**2 * (n**3 - n) - (m * float(ties.sum()) if tie_correction else 0.0)
    if den <= _ZERO_TOL * m**2 * (n**3 - n):
        return float("nan"), REASON_NO_VARIANCE
    return 12.0 * s / den, 0


def _pairs_tied(keys: IntArray) -> int:
    """Number of pairs sharing a key."""
    if keys.size == 0:
        return 0
    _, cnt = np.unique(keys, return_counts=True)
    return int((cnt * (cnt - 1) // 2).sum())


def _count_inversions(y: IntArray) -> int:
    """Number of pairs i < j with y[i] > y[j], for non-negative integer codes ``y``.

    Bit-by-bit: at the highest bit where ``y[i]`` and ``y[j]`` differ, an inversion has a 1
    before a 0 within the group of equal higher bits. Each level is a stable sort plus
    cumulative sums, so the whole count is ``O(n log n log K)`` with no Python loop over pairs.
    """
    y = np.asarray(y, dtype=np.int64)
    if y.size < 2:
        return 0
    nbits = max(1, int(y.max()).bit_length())
    total = 0
    for b in range(nbits - 1, -1, -1):
        prefix = y >> (b + 1)
        order = np.argsort(prefix, kind="stable")
        p = prefix[order]
        bit = (y[order] >> b) & 1
        ones = np.cumsum(bit)
        start = np.ones(p.shape[0], dtype=bool)
        start[1:] = p[1:] != p[:-1]
        group = np.cumsum(start) - 1
        before = (ones - bit)[start]
        ones_before = ones - bit - before[group]
        total += int(ones_before[bit == 0].sum())
    return total


def kendall_tau_b(x: FloatArray, y: FloatArray) -> tuple[float, int]:
    """Kendall's tau-b ``(P - Q) / sqrt((P + Q + T_x)(P + Q + T_y))`` for complete pairs."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.shape[0]
    if n < 2:
        return float("nan"), REASON_TOO_FEW
    _, xk = np.unique(x, return_inverse=True)
    _, yk = np.unique(y, return_inverse=True)
    order = np.lexsort((yk, xk))
    discordant = _count_inversions(yk[order])
    n0 = n * (n - 1) // 2
    n1 = _pairs_tied(xk)
    n2 = _pairs_tied(yk)
    n3 = _pairs_tied(xk * (int(yk.max()) + 1) + yk)
    concordant = n0 - n1 - n2 + n3 - discordant
    den = float(n0 - n1) * float(n0 - n2)
    if den <= 0:
        return float("nan"), REASON_NO_VARIANCE
    return float(concordant - discordant) / float(np.sqrt(den)), 0


def spearman_rho(x: FloatArray, y: FloatArray) -> tuple[float, int]:
    """Spearman's rho as the Pearson correlation of mid-ranks (exact with ties)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape[0] < 2:
        return float("nan"), REASON_TOO_FEW
    ranks, _ = midranks_columns(np.column_stack([x, y]))
    rx = ranks[:, 0] - ranks[:, 0].mean()
    ry = ranks[:, 1] - ranks[:, 1].mean()
    den = float(np.sqrt((rx * rx).sum() * (ry * ry).sum()))
    if den <= 0:
        return float("nan"), REASON_NO_VARIANCE
    return float((rx * ry).sum()) / den, 0


# ----------------------------------------------------------------------------------------
# rank-biased overlap and normalized rank position
# ----------------------------------------------------------------------------------------
def overlap_at_depth(rank_s: IntArray, rank_t: IntArray, depth: int) -> FloatArray:
    """``X_d = |S_{:d} & T_{:d}|`` for ``d = 1..depth`` from each shared item's two ranks.

    ``rank_s`` / ``rank_t`` are the 1-based positions of the items that occur in both lists;
    an item joins the overlap at depth ``max(rank_s, rank_t)``.
    """
    joins = np.maximum(np.asarray(rank_s, np.int64), np.asarray(rank_t, np.int64))
    counts = np.bincount(joins[joins <= depth], minlength=depth + 1)[1:]
    return np.cumsum(counts).astype(np.float64)


def rbo_ext(rank_s: IntArray, rank_t: IntArray, len_s: int, len_t: int, p: float) -> float:
    """Extrapolated rank-biased overlap, Webber, Moffat & Zobel (2010) eq. 32.

    With ``l`` the longer and ``s`` the shorter length and ``X_d`` the overlap at depth ``d``
    (the shorter list contributes all its items beyond its end)::

        RBO_ext = (1-p)/p [ sum_{d=1}^{l} X_d p^d / d
                            + sum_{d=s+1}^{l} X_s (d - s) p^d / (s d) ]
                  + [ (X_l - X_s) / l + X_s / s ] p^l
    """
    long_len, short_len = max(len_s, len_t), min(len_s, len_t)
    if short_len == 0:
        return 0.0
    x = overlap_at_depth(rank_s, rank_t, long_len)
    d = np.arange(1, long_len + 1, dtype=np.float64)
    pd = p**d
    x_s = x[short_len - 1]
    x_l = x[long_len - 1]
    tail = d > short_len
    total = (x * pd / d).sum()
    total += (x_s * (d[tail] - short_len) * pd[tail] / (short_len * d[tail])).sum()
    return float((1.0 - p) / p * total + ((x_l - x_s) / long_len + x_s / short_len) * p**long_len)


def average_overlap(rank_s: IntArray, rank_t: IntArray, depth: int) -> float:
    """Average overlap ``(1/k) sum_{d=1}^{k} X_d / d`` at depth ``k`` (RBO's ``p -> 1`` limit
    of the truncated sum, Webber et al. 2010, sec. 4)."""
    if depth < 1:
        return float("nan")
    x = overlap_at_depth(rank_s, rank_t, depth)
    d = np.arange(1, depth + 1, dtype=np.float64)
    return float((x / d).mean())


def normalized_positions(scores: FloatArray, *, descending: bool = True) -> FloatArray:
    """Normalized rank positions ``(rank - 1) / (n - 1)`` in [0, 1], 0 = best, mid-ranks."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.shape[0]
    if n < 2:
        return np.zeros(n)
    r = midranks(-s if descending else s)
    return (r - 1.0) / (n - 1.0)


# ----------------------------------------------------------------------------------------
# bootstrap over clusters
# ----------------------------------------------------------------------------------------
def group_index(groups: IntArray, n_groups: int) -> tuple[IntArray, IntArray]:
    """``(order, starts)``: members of group ``g`` are ``order[starts[g]:starts[g + 1]]``."""
    groups = np.asarray(groups, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[order], np.arange(n_groups + 1))
    return order, starts


def take_groups(order: IntArray, starts: IntArray, chosen: IntArray) -> IntArray:
    """Members of the ``chosen`` groups (repeats allowed), group after group, no Python loop."""
    chosen = np.asarray(chosen, dtype=np.int64)
    lens = (starts[1:] - starts[:-1])[chosen]
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    block_start = np.cumsum(lens) - lens
    offs = np.repeat(starts[:-1][chosen] - block_start, lens)
    return order[offs + np.arange(total)]


# ----------------------------------------------------------------------------------------
# (cluster sums and resampling)
# ----------------------------------------------------------------------------------------
def cluster_sums(
    features: FloatArray | sparse.sparray, cluster: IntArray, n_clusters: int
) -> FloatArray | sparse.sparray:
    """Sum unit-level features within clusters (e.g. sentences within their answer)."""
    cluster = np.asarray(cluster, dtype=np.int64)
    n_units = features.shape[0]
    member = sparse.csr_array(
        (np.ones(n_units), (cluster, np.arange(n_units))), shape=(n_clusters, n_units)
    )
    out = member @ features
    return out if sparse.issparse(out) else np.asarray(out)


def resample_counts(
    rng: np.random.Generator, n_clusters: int, n_boot: int, chunk: int
) -> list[FloatArray]:
    """Cluster multiplicities of ``n_boot`` bootstrap resamples, in chunks of rows.

    Row ``b`` counts how often each cluster was drawn in a with-replacement sample of
    ``n_clusters`` clusters. ``chunk`` rows are drawn at a time (keep ``chunk * n_clusters``
    around a few million for cache-friendly sizes).
    """
    out = []
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        small = b * n_clusters < 2**31 - 1
        draws: NDArray[np.integer[Any]] = rng.integers(
            0, n_clusters, size=(b, n_clusters), dtype=np.int32 if small else np.int64
        )
        draws = draws + (np.arange(b, dtype=draws.dtype) * n_clusters)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n_clusters)
        out.append(counts.reshape(b, n_clusters).astype(np.float64))
        done += b
    return out


def bootstrap_additive(
    parts: Parts, resamples: list[FloatArray], cluster: IntArray, n_clusters: int
) -> tuple[FloatArray, IntArray]:
    """Bootstrap replicates of an additive statistic: ``finalize(counts @ cluster_features)``."""
    feats = cluster_sums(parts.features, cluster, n_clusters)
    ests = []
    reasons = []
    for counts in resamples:
        sums = (feats.T @ counts.T).T if sparse.issparse(feats) else counts @ feats
        e, r = parts.finalize(np.asarray(sums, dtype=np.float64))
        ests.append(np.atleast_1d(e))
        reasons.append(np.atleast_1d(r))
    if not ests:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    return np.concatenate(ests), np.concatenate(reasons)
