"""The latent-scale coordinate of the ordinal model's compiled density (issue 19), in numba.

The model fixes its latent scale by the reference design's raters (discrimination 1 against
logistic noise of scale 1). When the raters nearly always agree, the data say little about
that scale: stretching every answer's quality, the cut-points, the system effects and the
scales of the effects together changes only the few ratings near a cut-point. In the
coordinates of :func:`~raterstats.models.ordinal.kernels.ordinal_logp_standard` this
stretch moves dozens of coordinates at once (the log of the residual scale, the cut-points,
the system effects; posterior correlations of 0.9), and NUTS explores it slowly (on the
high-agreement simulation: bulk ESS 150-225 per 4,000 draws for the residual scale and the
cut-points, 800-1,500 for the same quantities divided by the residual scale).

The sampler's coordinates therefore hold, per dimension ``d`` of high agreement (latent unit
at least :data:`~raterstats.models.ordinal.layout.HIGH_AGREEMENT_UNIT`; elsewhere the scale
is well identified, and the coordinates stay as they are), the mean log gap
``l_d`` of the reference design's cut-points (the scale of the rating scale in logits) as
one coordinate, and the other scale-carrying quantities relative to it:

- the reference design's log gaps ``y = l_d + B w`` (``B`` the orthonormal zero-sum basis:
  ``l_d`` their mean, ``w`` their spread; a linear map with constant Jacobian);
- shifted by ``l_d`` (a shear of log-scale coordinates, unit Jacobian): ``log sigma_residual``,
  ``log sigma_question``, the sentence scale's coordinate and the other designs' log gaps;
- multiplied by ``exp(l_d)`` (Jacobian ``l_d`` each): the first cut-point of every design,
  the system effects' coordinates, the length effects, the judges' severities and length
  effects, the centred raters' severity totals and, when centred, the question effects or
  answer residuals.

So the stretch is the one coordinate ``l_d``. The model (its priors, likelihood and
parameters) is unchanged: :func:`to_standard` maps the sampler's vector to the standard one,
whose density the kernel computes, and :func:`pull_back` maps its gradient back, adding
the log-Jacobian's. With fewer than 3 levels there are no gaps and nothing is changed.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
from numba import njit

from raterstats.models.ordinal.kernels import ordinal_logp_grad, zero_sum_adjoint, zero_sum_extend
from raterstats.models.ordinal.layout import HIGH_AGREEMENT_UNIT, Block, PriorConst, Setting

#: The sources whose code numba compiles into the cached kernels of this module, besides
#: this one: the standard kernel, its interval and marginal terms and the named positions.
SCALE_SOURCES = (
    Path(__file__).with_name("kernels.py"),
    Path(__file__).with_name("kernels_interval.py"),
    Path(__file__).with_name("kernels_marginal.py"),
    Path(__file__).with_name("layout.py"),
)

#: SHA-256 of :data:`SCALE_SOURCES` (:func:`scale_source_sha256`). numba's on-disk cache
#: checks only this file's time stamp and size, not the functions it calls in other files,
#: so a changed kernel would otherwise stay in the cached :func:`sampler_logp_grad`.
#: tests/ordinal/test_ordinal_reference.py fails until this value is updated, and updating
#: it invalidates the cache.
SCALE_SOURCE_SHA256 = "ae18e9224e0b5e808c3e64df08b69a9d700ef0d97aee366c10355ad274fc5307"


def scale_source_sha256() -> str:
    """SHA-256 over the :data:`SCALE_SOURCES` (each file's bytes, in order)."""
    h = hashlib.sha256()
    for path in SCALE_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()


@njit(cache=True, nogil=True)
def _scaled_dim(t: int, off: np.ndarray, settings: np.ndarray) -> int:
    """The dimension of position ``t`` when it is multiplied by ``exp(l_d)``, else -1."""
    D, G, K = settings[Setting.N_DIM], settings[Setting.N_DESIGN], settings[Setting.N_LEVELS]
    H, M = settings[Setting.N_HUMAN], settings[Setting.N_SYSTEM]
    if off[Block.SYS_Z] <= t < off[Block.SYS_Z + 1]:
        return (t - off[Block.SYS_Z]) // (M - 1)
    if off[Block.CUTS] <= t < off[Block.CUTS + 1]:
        r = t - off[Block.CUTS]
        return r // ((K - 1) * G) if r % (K - 1) == 0 else -1
    if off[Block.BETA] <= t < off[Block.BETA + 1]:
        return (t - off[Block.BETA]) // G
    for b in (Block.JS, Block.JB):
        if off[b] <= t < off[b + 1]:
            return ((t - off[b]) // G) % D
    if settings[Setting.CENTRED] and off[Block.BZ] <= t < off[Block.BZ + 1]:
        return (t - off[Block.BZ]) // (G * (H - 1))
    if settings[Setting.QUESTION_CENTRED] and off[Block.QZ] <= t < off[Block.QZ + 1]:
        return (t - off[Block.QZ]) % D
    if settings[Setting.LATENT_CENTRED] and off[Block.EZ] <= t < off[Block.EZ + 1]:
        return (t - off[Block.EZ]) % D
    return -1


@njit(cache=True, nogil=True)
def _shear_dim(t: int, off: np.ndarray, settings: np.ndarray) -> int:
    """The dimension of position ``t`` when ``l_d`` is added to it, else -1."""
    G, K = settings[Setting.N_DESIGN], settings[Setting.N_LEVELS]
    ref = settings[Setting.REFERENCE]
    for b in (Block.LOG_SE, Block.LOG_SQ, Block.LOG_TAU):
        if off[b] <= t < off[b + 1]:
            return t - off[b]
    if off[Block.CUTS] <= t < off[Block.CUTS + 1]:
        r = t - off[Block.CUTS]
        cell, k = r // (K - 1), r % (K - 1)
        if k > 0 and cell % G != ref:
            return cell // G
    return -1


@njit(cache=True, nogil=True)
def _active(settings: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Per dimension: whether its latent scale is a coordinate (the switch is on, there are
    at least 3 levels, and its latent unit is at least ``HIGH_AGREEMENT_UNIT``)."""
    D = settings[Setting.N_DIM]
    out = np.zeros(D, dtype=np.bool_)
    if settings[Setting.SCALE_COORDINATE] and settings[Setting.N_LEVELS] >= 3:
        for d in range(D):
            out[d] = prior[PriorConst.UNIT + d] >= HIGH_AGREEMENT_UNIT
    return out


@njit(cache=True, nogil=True)
def to_standard(
    x: np.ndarray, off: np.ndarray, settings: np.ndarray, prior: np.ndarray, xs: np.ndarray
) -> float:
    """Write the standard vector of the sampler's ``x`` into ``xs``; return the log-Jacobian
    of the map (module docstring)."""
    for t in range(x.size):
        xs[t] = x[t]
    active = _active(settings, prior)
    if not active.any():
        return 0.0
    D, G, K = settings[Setting.N_DIM], settings[Setting.N_DESIGN], settings[Setting.N_LEVELS]
    ref = settings[Setting.REFERENCE]
    n = K - 2
    ell = np.empty(D)
    y = np.empty((n, 1))
    for d in range(D):
        if not active[d]:
            continue
        base = off[Block.CUTS] + (d * G + ref) * (K - 1)
        ell[d] = x[base + 1]
        zero_sum_extend(x[base + 2 : base + 1 + n], n, 1, y)
        for k in range(n):
            xs[base + 1 + k] = ell[d] + y[k, 0]
    logjac = 0.0
    for t in range(x.size):
        d = _shear_dim(t, off, settings)
        if d >= 0:
            if active[d]:
                xs[t] = x[t] + ell[d]
            continue
        d = _scaled_dim(t, off, settings)
        if d >= 0 and active[d]:
            xs[t] = x[t] * math.exp(ell[d])
            logjac += ell[d]
    return logjac


@njit(cache=True, nogil=True)
def pull_back(
    x: np.ndarray,
    xs: np.ndarray,
    g_std: np.ndarray,
    off: np.ndarray,
    settings: np.ndarray,
    prior: np.ndarray,
    grad: np.ndarray,
) -> None:
    """The gradient with respect to the sampler's ``x`` (into ``grad``), given the gradient
    ``g_std`` with respect to the standard vector ``xs = to_standard(x)``, the log-Jacobian's
    included."""
    for t in range(x.size):
        grad[t] = g_std[t]
    active = _active(settings, prior)
    if not active.any():
        return
    D, G, K = settings[Setting.N_DIM], settings[Setting.N_DESIGN], settings[Setting.N_LEVELS]
    ref = settings[Setting.REFERENCE]
    n = K - 2
    ell_at = np.empty(D, dtype=np.int64)
    gy = np.empty((n, 1))
    for d in range(D):
        base = off[Block.CUTS] + (d * G + ref) * (K - 1)
        ell_at[d] = base + 1
        if not active[d]:
            continue
        tot = 0.0
        for k in range(n):
            gy[k, 0] = g_std[base + 1 + k]
            tot += gy[k, 0]
            grad[base + 1 + k] = 0.0
        grad[base + 1] += tot
        zero_sum_adjoint(gy, n, 1, grad, base + 2)
    for t in range(x.size):
        d = _shear_dim(t, off, settings)
        if d >= 0:
            if active[d]:
                grad[ell_at[d]] += g_std[t]
            continue
        d = _scaled_dim(t, off, settings)
        if d >= 0 and active[d]:
            grad[t] = g_std[t] * math.exp(x[ell_at[d]])
            grad[ell_at[d]] += g_std[t] * xs[t] + 1.0


@njit(cache=True, nogil=True, error_model="numpy")
def sampler_logp_grad(
    x: np.ndarray,
    grad: np.ndarray,
    off: np.ndarray,
    settings: np.ndarray,
    prior: np.ndarray,
    obs_item: np.ndarray,
    obs_dim: np.ndarray,
    obs_design: np.ndarray,
    obs_rater: np.ndarray,
    obs_sent: np.ndarray,
    obs_y: np.ndarray,
    item_sys: np.ndarray,
    item_q: np.ndarray,
    zlen: np.ndarray,
    basis_m: np.ndarray,
    basis_h: np.ndarray,
) -> float:
    """The log density NUTS samples and its gradient: :func:`ordinal_logp_grad` at
    :func:`to_standard` of ``x``, plus the log-Jacobian, with the gradient pulled back to
    ``x`` (arguments as :func:`ordinal_logp_grad`'s). Without the latent-scale coordinate
    (``Setting.SCALE_COORDINATE`` 0) it is :func:`ordinal_logp_grad` itself."""
    if not _active(settings, prior).any():
        return ordinal_logp_grad(
            x, grad, off, settings, prior, obs_item, obs_dim, obs_design, obs_rater,
            obs_sent, obs_y, item_sys, item_q, zlen, basis_m, basis_h,
        )  # fmt: skip
    xs = np.empty(x.size)
    g_std = np.empty(x.size)
    logjac = to_standard(x, off, settings, prior, xs)
    lp = ordinal_logp_grad(
        xs, g_std, off, settings, prior, obs_item, obs_dim, obs_design, obs_rater, obs_sent,
        obs_y, item_sys, item_q, zlen, basis_m, basis_h,
    )  # fmt: skip
    pull_back(x, xs, g_std, off, settings, prior, grad)
    return lp + logjac


__all__ = [
    "SCALE_SOURCES",
    "SCALE_SOURCE_SHA256",
    "pull_back",
    "sampler_logp_grad",
    "scale_source_sha256",
    "to_standard",
]
