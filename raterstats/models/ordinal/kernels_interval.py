"""The interval term of the ordinal likelihood, ``log(F(hi) - F(lo))`` for the logistic
``F``, and its derivatives, compiled (numba) for
:func:`raterstats.models.ordinal.kernels.ordinal_logp_grad` (moved out of
:mod:`raterstats.models.ordinal.kernels`, which is long enough).

:func:`interval_p_grad` gives the probability itself, so that the kernel multiplies the
probabilities of many ratings and takes one logarithm of the product now and then (below
:data:`PRODUCT_FLOOR`); :func:`interval_logp_grad` gives the logarithm, for the far tails
and the widest gaps, where the probability is too small a factor.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(cache=True, nogil=True, inline="always")
def log_sigmoid(x: float) -> float:
    # log(1 / (1 + exp(-x))) = -softplus(-x)
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


#: Above this gap between neighbouring cut-points the interval term does not use the
#: exponential of the gap (it would overflow): it computes both sigmoids instead.
GAP_MAX = 30.0


@njit(cache=True, nogil=True, inline="always")
def interval_logp_grad(hi: float, lo: float, eg: float) -> tuple[float, float, float]:
    """``log(F(hi) - F(lo))`` for the logistic ``F`` and its derivatives with respect to
    ``hi`` and ``lo``, given ``eg = exp(hi - lo)`` (the exponential of the cut-point gap,
    computed once per gap).

    One exponential per rating: with ``E = exp(-|t|)`` at the end ``t`` nearer to 0, the
    other end's exponential is ``E * eg`` or ``E / eg``. Far in a tail (probability under
    1e-8), or with a gap of :data:`GAP_MAX` or more, the cancellation-free form with two
    sigmoids."""
    if eg < np.inf:
        if lo >= 0.0:  # both ends above 0: F(t) = 1 / (1 + exp(-t))
            a = math.exp(-hi)  # exp(-hi) <= exp(-lo) = a * eg
            b = a * eg
            sh = 1.0 / (1.0 + a)
            sl_ = 1.0 / (1.0 + b)
        else:  # lo < 0: F(lo) = e / (1 + e) with e = exp(lo), exp(hi) = e * eg
            e = math.exp(lo)
            sl_ = e / (1.0 + e)
            f = e * eg
            sh = f / (1.0 + f) if f < 1e300 else 1.0
        pr = sh - sl_
        if pr > 1e-8:
            return math.log(pr), sh * (1.0 - sh) / pr, -sl_ * (1.0 - sl_) / pr
    diff = hi - lo
    lpr = log_sigmoid(hi) + log_sigmoid(-lo) + math.log(-math.expm1(-diff))
    q = 1.0 / math.expm1(diff)
    return lpr, sigmoid(-hi) + q, -sigmoid(lo) - q


@njit(cache=True, nogil=True, inline="always")
def tail_p_grad(u: float) -> tuple[float, float, float]:
    """``F(u)`` for the logistic ``F`` (a rating in the lowest or the highest level) as
    ``(p, log_part, d log F / du)`` of ``log F(u) = log(p) + log_part``, from one
    exponential and one division: ``p`` is a factor of the kernels' running product (at
    least about 1e-87); below ``u = -200`` the logarithm is ``log_part`` and ``p = 1``."""
    e = math.exp(-abs(u))
    ir = 1.0 / (1.0 + e)
    if u >= 0:
        return ir, 0.0, e * ir
    if u > -200.0:
        return e * ir, 0.0, ir
    return 1.0, u - math.log1p(e), ir


@njit(cache=True, nogil=True, inline="always")
def interval_p_grad(
    hi: float, lo: float, eg: float, egm1: float
) -> tuple[float, float, float, float]:
    """``F(hi) - F(lo)`` for the logistic ``F`` as ``(p, log_part, d/dhi, d/dlo)`` of
    ``log(F(hi) - F(lo)) = log(p) + log_part``, given the cut-point gap's ``eg = exp(hi -
    lo)`` and ``egm1 = expm1(hi - lo)`` (computed once per gap).

    The likelihood multiplies the ``p`` of many ratings and takes one logarithm of the
    product now and then (:func:`ordinal_logp_grad`), so that a rating costs one
    exponential and one division, no logarithm. With ``E`` the exponential of the end
    nearer to 0 (``a = exp(-hi)`` when both ends are above 0, ``e = exp(lo)`` otherwise),
    ``p = E egm1 / ((1 + E)(1 + E eg))`` has no cancellation, and the derivatives are
    ``(1 + a eg) / ((1 + a) egm1)`` and ``-eg (1 + a) / ((1 + a eg) egm1)`` (``e``: their
    mirror images). Where ``p`` is under 1e-8 or the gap is :data:`GAP_MAX` or more, the
    logarithm comes from :func:`interval_logp_grad` (``p = 1``)."""
    if eg < np.inf:
        if lo >= 0.0:
            a = math.exp(-hi)
            p_lo = 1.0 + a
            p_hi = 1.0 + a * eg
            inv = 1.0 / (p_lo * p_hi * egm1)
            pr = a * egm1 * egm1 * inv
            if pr > 1e-8:
                return pr, 0.0, p_hi * p_hi * inv, -eg * p_lo * p_lo * inv
        else:
            e = math.exp(lo)
            f = e * eg
            if f < 1e300:
                p_lo = 1.0 + e
                p_hi = 1.0 + f
                inv = 1.0 / (p_lo * p_hi * egm1)
                pr = e * egm1 * egm1 * inv
                if pr > 1e-8:
                    return pr, 0.0, eg * p_lo * p_lo * inv, -p_hi * p_hi * inv
    lpr, ghi, glo = interval_logp_grad(hi, lo, eg)
    return 1.0, lpr, ghi, glo


#: the running product of the ratings' probabilities in :func:`ordinal_logp_grad` is
#: logged and restarted below this value; each factor is at least 1e-87 (a tail
#: probability under exp(-200) is added as its logarithm instead), so the product stays a
#: normal double
PRODUCT_FLOOR = 1e-200


__all__ = [
    "GAP_MAX",
    "PRODUCT_FLOOR",
    "interval_logp_grad",
    "interval_p_grad",
    "log_sigmoid",
    "sigmoid",
    "tail_p_grad",
]
