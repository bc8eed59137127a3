"""Kernel of the intraclass correlations (Shrout & Fleiss 1979; McGraw & Wong 1996) from
ANOVA mean squares, and the names of their six forms.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from raterstats.agreement.kernels.core import (
    REASON_NO_VARIANCE,
    REASON_ONE_RATER,
    REASON_TOO_FEW,
    FloatArray,
    IntArray,
    Parts,
    safe_divide,
)

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
        est, bad = safe_divide(num, den, scale=np.maximum(np.abs(sst), 1e-300))
        est = np.where(too_few, np.nan, est)
        few = REASON_ONE_RATER if k < 2 else REASON_TOO_FEW
        reason = np.where(too_few, few, np.where(bad, REASON_NO_VARIANCE, 0))
        return est, reason.astype(np.int64)

    return Parts(feats, finalize)


__all__ = [
    "ICC_FORMS",
    "ICC_NAMES",
    "icc_parts",
    "parse_icc_form",
]
