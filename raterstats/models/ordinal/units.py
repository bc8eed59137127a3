"""The data's latent unit: how many logits the spread of answer quality spans, from the ratings.

The ordinal rater model fixes its latent scale by the reference design's human raters
(geometric-mean discrimination 1, logistic rating noise of scale 1), so the spread of
answer quality in logits is set by the data's agreement: raters who nearly always agree
on a 5-point scale need a latent spread of many logits (the cut-points far apart against
the noise), raters who rarely agree a spread under one logit. Priors written in logits
(half-normal 1 on the residual scale, normal 3 on the cut-points) are weakly informative
in the second case and in strong conflict with the data in the first (issue 19: the
residual scale pushed to 5-8 logits against a half-normal 1, divergences, collapsed fair
averages). :func:`latent_units` measures the spread per dimension from the ratings before
the fit, so that :class:`~raterstats.models.ordinal.OrdinalRaters` can state its priors in
that unit (``models/ordinal/card.md``, "Priors and why").

The measure: the polychoric correlation ``rho`` of two ratings of one answer by different
raters (Pearson 1900; Olsson 1979) is the model's single-rating reliability, the share of
the latent response's variance due to the answer, ``lambda^2 Var(eta) / (lambda^2 Var(eta)
+ pi^2/3)``; with the reference panel's ``lambda = 1`` the latent spread is
``sd(eta) = (pi / sqrt 3) sqrt(rho / (1 - rho))``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import ndtr, ndtri

from raterstats.models.ordinal.data import OrdinalData

#: Gauss-Legendre nodes and weights on [0, 1] for :func:`bivariate_normal_cdf`.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)
_GL_X, _GL_W = (_GL_X + 1.0) / 2.0, _GL_W / 2.0
#: Largest polychoric correlation used (a latent spread of 25.6 logits): beyond it the
#: ratings of two raters differ too rarely to say more.
RHO_MAX = 0.995
#: Smallest latent unit: below one logit the priors stay as they were written (in logits).
UNIT_MIN = 1.0
#: Thresholds beyond this many SDs are infinite for the bivariate normal (Phi(8) = 1 - 6e-16).
_INF = 8.0


def bivariate_normal_cdf(h: np.ndarray, k: np.ndarray, rho: float) -> np.ndarray:
    """``P(X <= h, Y <= k)`` for standard normals with correlation ``rho`` (``|rho| < 1``),
    by Sheppard's formula in the angle: ``Phi(h) Phi(k) + (1 / 2 pi) int_0^asin(rho)
    exp(-(h^2 - 2 h k sin t + k^2) / (2 cos^2 t)) dt``, whose integrand is smooth for
    ``rho`` up to 1 (24-point Gauss-Legendre; error under 1e-10 for ``|rho| <= 0.999``).

    Examples
    --------
    >>> # 1/4 + asin(1/2) / (2 pi) = 1/3
    >>> float(bivariate_normal_cdf(np.array(0.0), np.array(0.0), 0.5).round(6))
    0.333333
    """
    h = np.clip(np.asarray(h, float), -_INF, _INF)[..., None]
    k = np.clip(np.asarray(k, float), -_INF, _INF)[..., None]
    a = float(np.arcsin(rho))
    t = a * _GL_X
    s, c2 = np.sin(t), np.cos(t) ** 2
    f = np.exp(-(h * h - 2.0 * h * k * s + k * k) / (2.0 * c2))
    return np.asarray(ndtr(h[..., 0]) * ndtr(k[..., 0]) + a / (2 * np.pi) * (f @ _GL_W))


def polychoric(table: np.ndarray) -> float:
    """The polychoric correlation of a symmetric K x K table of rating pairs: thresholds
    from the margins, then the correlation of the bivariate normal that maximises the
    table's likelihood (bounded to [-0.95, :data:`RHO_MAX`]).

    Examples
    --------
    >>> t = np.array([[40.0, 10.0], [10.0, 40.0]])  # 80 % agreement on a median split
    >>> round(polychoric(t), 3)  # sin(pi/2 * (0.8 - 0.2)) = 0.809
    0.809
    """
    t = np.asarray(table, float)
    t = (t + t.T) / 2.0
    marg = t.sum(axis=1) / t.sum()
    cum = np.clip(np.cumsum(marg)[:-1], 1e-12, 1 - 1e-12)
    tau = np.concatenate([[-_INF], ndtri(cum), [_INF]])
    hh, kk = np.meshgrid(tau, tau, indexing="ij")

    def nll(rho: float) -> float:
        cdf = bivariate_normal_cdf(hh, kk, rho)
        p = cdf[1:, 1:] - cdf[:-1, 1:] - cdf[1:, :-1] + cdf[:-1, :-1]
        return float(-np.sum(t * np.log(np.maximum(p, 1e-300))))

    res = minimize_scalar(nll, bounds=(-0.95, RHO_MAX), method="bounded", options={"xatol": 1e-6})
    return float(res.x)


def pair_table(units: np.ndarray, raters: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """The K x K table of ordered pairs of ratings of one unit by different raters, each
    unit with ``n`` such ratings weighted ``1 / (n - 1)`` (so every rating counts once).

    Examples
    --------
    >>> pair_table(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([0, 0, 0, 1]), 2)
    array([[2., 1.],
           [1., 0.]])
    """
    out = np.zeros((k, k))
    order = np.lexsort((raters, units))
    units, raters, y = units[order], raters[order], y[order]
    # one rating per unit x rater (the first)
    keep = np.ones(units.size, bool)
    keep[1:] = (units[1:] != units[:-1]) | (raters[1:] != raters[:-1])
    units, y = units[keep], y[keep]
    starts = np.flatnonzero(np.r_[True, units[1:] != units[:-1]])
    counts = np.diff(np.r_[starts, units.size])
    for s, n in zip(starts, counts, strict=True):
        if n < 2:
            continue
        c = np.bincount(y[s : s + n], minlength=k).astype(float)
        out += (np.outer(c, c) - np.diag(c)) / (n - 1)
    return out


def latent_units(data: OrdinalData) -> np.ndarray:
    """The latent unit of every dimension: ``max(1, sd(eta))`` logits, with ``sd(eta)``
    from the polychoric correlation of the reference design's human ratings of whole
    answers (module docstring); 1 for a dimension without two such ratings of one answer.
    Measured once per ``data`` (kept in ``data.measured_units``).

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import high_agreement_study
    >>> data = OrdinalRaters().prepare(high_agreement_study(n_questions=10, random_seed=1).ratings)
    >>> bool((latent_units(data) > 8).all())  # a spread of about 18 logits
    True
    """
    if data.measured_units is not None:
        return data.measured_units.copy()
    n_dim = len(data.coords["dimension"])
    ref = data.coords["design"].index(data.reference_design)
    sel = (data.obs_design == ref) & (data.obs_sentence == 0) & (data.obs_rater < data.n_humans)
    out = np.full(n_dim, UNIT_MIN)
    for d in range(n_dim):
        s = sel & (data.obs_dim == d)
        table = pair_table(data.obs_item[s], data.obs_rater[s], data.y[s], data.n_levels)
        if table.sum() <= 0 or np.count_nonzero(table.sum(axis=1)) < 2:
            continue
        rho = max(polychoric(table), 0.0)
        out[d] = max(UNIT_MIN, float(np.pi / np.sqrt(3.0) * np.sqrt(rho / (1.0 - rho))))
    data.measured_units = out.copy()
    return out


__all__ = [
    "RHO_MAX",
    "UNIT_MIN",
    "bivariate_normal_cdf",
    "latent_units",
    "pair_table",
    "polychoric",
]
