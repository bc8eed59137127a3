"""GLAD's compiled log density with its hand-written gradient, and nutpie's C callback.

The density is the PyMC model of :class:`~raterstats.models.latent_class.glad.GLAD` on the
same unconstrained vector (``x = [alpha (C), log beta (U), prevalence simplex values]``,
PyMC's log and simplex transforms with their Jacobians), compiled once per installation
(``cache=True``). Tests check it against the PyMC graph and the NumPy reference of the
likelihood (``GLAD.draw_tables``) at fixed points, and its gradient by finite differences.

Every unit has its own easiness, so there are no shared rating patterns: one pass over the
ratings, sorted by unit, computes each unit's log joint over the classes, its log-sum-exp,
and the gradient. For a rating ``r`` of unit ``u`` with ``x_r = alpha_c(r) beta_u``, the
derivative of the unit's marginal log-likelihood in ``x_r`` is ``w_r - sigmoid(x_r)``,
``w_r`` the posterior probability that the unit's true label is the rated category (the
same quantity EM's M-step fits).

Self-contained (the simplex transform is written here again rather than called from
``kernels_density``): numba's on-disk cache of a function is keyed on its own source file,
and a cached function carries the code of the functions it calls, so a kernel that called
into another file would keep running that file's old code after it changed. The one
outside dependency, :mod:`raterstats.nutpie_callbacks` (the callback buffer), is checked by
:data:`CALLBACK_SOURCE_SHA256`.
"""

from __future__ import annotations

import hashlib
import math
from enum import IntEnum
from pathlib import Path

import numpy as np
from numba import carray, cfunc, njit

from raterstats.nutpie_callbacks import LOGP_SIGNATURE, read_user_data, status_code

#: The source compiled into the cached callback besides this file.
CALLBACK_SOURCE = Path(__file__).parents[2] / "nutpie_callbacks.py"

#: SHA-256 of :data:`CALLBACK_SOURCE`: numba's cache checks only this file, so a change
#: there would leave a stale callback; tests/models/test_glad.py fails until this value is
#: updated (which also invalidates the cache of this file).
CALLBACK_SOURCE_SHA256 = "a98f188938a40843d6b91d07518533f0893f87d0e26b1e47ad34a15465f10e42"


def callback_source_sha256() -> str:
    """SHA-256 of :data:`CALLBACK_SOURCE`'s bytes."""
    return hashlib.sha256(CALLBACK_SOURCE.read_bytes()).hexdigest()


class GladInt(IntEnum):
    """Segments of GLAD's packed integer array."""

    HEADER = 0  #: :class:`GladHeader`
    N_CATEGORIES = 1  #: categories per dimension (D)
    UNIT_DIM = 2  #: dimension of every unit (U)
    UNIT_START = 3  #: first rating of every unit, ratings sorted by unit (U + 1)
    CELL = 4  #: rater x dimension x design cell of every rating (N)
    CODE = 5  #: rated category of every rating (N)
    MASK = 6  #: possible true classes, (U, K) row-major, 0 / 1


class GladHeader(IntEnum):
    """Entries of GLAD's header segment."""

    N_CELLS = 0  #: C, abilities
    N_UNITS = 1  #: U, easiness values
    N_DIMENSIONS = 2
    N_CLASSES = 3  #: K (padded)


class GladFloat(IntEnum):
    """Segments of GLAD's packed float array."""

    SCALARS = 0  #: :class:`GladScalar`
    PREV_CONC = 1  #: Dirichlet concentrations of the prevalence rows, (D, K)


class GladScalar(IntEnum):
    """Entries of GLAD's scalar segment."""

    ABILITY_MU = 0  #: Normal prior of the abilities
    ABILITY_SD = 1
    EASINESS_MU = 2  #: LogNormal prior of the easiness (Normal on log beta)
    EASINESS_SD = 3
    CONST = 4  #: constant terms of the log density


@njit(cache=True, nogil=True)
def glad_segment(arr: np.ndarray, i: int) -> np.ndarray:
    """Segment ``i`` of an array packed by
    :func:`raterstats.models.latent_class.layout.pack_segments`."""
    n = int(arr[0])
    start = 1 + n
    for j in range(i):
        start += int(arr[1 + j])
    return arr[start : start + int(arr[1 + i])]


@njit(cache=True, nogil=True)
def glad_simplex_backward(v: np.ndarray, k: int, out: np.ndarray) -> None:
    """PyMC's simplex transform, backward: ``out[:k] = softmax([v, -sum(v)])``."""
    s = 0.0
    for i in range(k - 1):
        s += v[i]
    m = -s
    for i in range(k - 1):
        if v[i] > m:
            m = v[i]
    tot = 0.0
    for i in range(k - 1):
        out[i] = math.exp(v[i] - m)
        tot += out[i]
    out[k - 1] = math.exp(-s - m)
    tot += out[k - 1]
    for i in range(k):
        out[i] /= tot


@njit(cache=True, nogil=True)
def glad_logp_grad(
    x: np.ndarray,
    C: int,
    U: int,
    D: int,
    K: int,
    n_cat: np.ndarray,
    unit_dim: np.ndarray,
    unit_start: np.ndarray,
    cell: np.ndarray,
    code: np.ndarray,
    mask: np.ndarray,
    mu_a: float,
    sd_a: float,
    mu_b: float,
    sd_b: float,
    prev_conc: np.ndarray,
    const: float,
    grad: np.ndarray,
) -> float:
    """Log density and gradient of GLAD at unconstrained ``x``: ``[alpha (C), s = log beta
    (U), prevalence simplex values (K_d - 1 per dimension)]``; ``grad`` is overwritten.

    ``alpha ~ N(mu_a, sd_a)``, ``s ~ N(mu_b, sd_b)`` (LogNormal on beta with the log
    transform's Jacobian), prevalence rows Dirichlet(``prev_conc``) on PyMC's simplex
    transform (Jacobian included), and per unit the log-sum-exp over its possible classes
    of ``log pi[d, t] + sum_r log P(rating r | t)`` with ``P(rating = t) = sigmoid(x_r)``,
    ``P(rating = a != t) = sigmoid(-x_r) / (K_d - 1)``.
    """
    for i in range(grad.size):
        grad[i] = 0.0
    lp = const
    inv_a = 1.0 / (sd_a * sd_a)
    inv_b = 1.0 / (sd_b * sd_b)
    for c in range(C):
        z = x[c] - mu_a
        lp -= 0.5 * z * z * inv_a
        grad[c] = -z * inv_a
    for u in range(U):
        z = x[C + u] - mu_b
        lp -= 0.5 * z * z * inv_b
        grad[C + u] = -z * inv_b
    # prevalence rows: Dirichlet log density + log Jacobian = sum a log p (+ constants)
    off = C + U
    PI = np.zeros((D, K))
    LPI = np.zeros((D, K))
    pos = off
    for d in range(D):
        k = n_cat[d]
        glad_simplex_backward(x[pos : pos + k - 1], k, PI[d])
        for t in range(k):
            LPI[d, t] = math.log(PI[d, t])
            lp += prev_conc[d, t] * LPI[d, t]
        pos += k - 1
    GP = np.zeros((D, K))  # d logp / d log pi
    acc = np.empty(K)
    n_r = int(unit_start[U] - unit_start[0])
    xs = np.empty(n_r)
    sigs = np.empty(n_r)
    for u in range(U):
        d = unit_dim[u]
        k = n_cat[d]
        lk1 = math.log(max(k - 1, 1))
        beta = math.exp(x[C + u])
        base = 0.0
        for t in range(K):
            acc[t] = 0.0
        r0, r1 = unit_start[u], unit_start[u + 1]
        for r in range(r0, r1):
            xr = x[cell[r]] * beta
            # wrong = log sigmoid(-x) - log(K_d - 1) = -softplus(x) - log(K_d - 1), and
            # right - wrong = log sigmoid(x) - log sigmoid(-x) + log(K_d - 1) = x + log(K_d - 1)
            e = math.exp(-abs(xr))
            base -= max(xr, 0.0) + math.log1p(e) + lk1
            acc[code[r]] += xr + lk1
            xs[r - r0] = xr
            sigs[r - r0] = 1.0 / (1.0 + e) if xr >= 0.0 else e / (1.0 + e)
        m = -np.inf
        for t in range(k):
            if mask[u, t]:
                acc[t] += LPI[d, t] + base
                if acc[t] > m:
                    m = acc[t]
        tot = 0.0
        for t in range(k):
            if mask[u, t]:
                acc[t] = math.exp(acc[t] - m)
                tot += acc[t]
            else:
                acc[t] = 0.0
        lp += m + math.log(tot)
        for t in range(k):
            acc[t] /= tot
            GP[d, t] += acc[t]
        g_s = 0.0
        for r in range(r0, r1):
            # d log-likelihood / d x_r = P(true label = rated category) - sigmoid(x_r)
            g = acc[code[r]] - sigs[r - r0]
            grad[cell[r]] += g * beta
            g_s += g * xs[r - r0]
        grad[C + u] += g_s
    # back through the simplex transform: d/dv_j = (g_j - p_j S) - (g_last - p_last S)
    pos = off
    for d in range(D):
        k = n_cat[d]
        sg = 0.0
        for t in range(k):
            sg += GP[d, t] + prev_conc[d, t]
        last = GP[d, k - 1] + prev_conc[d, k - 1] - PI[d, k - 1] * sg
        for j in range(k - 1):
            grad[pos + j] += (GP[d, j] + prev_conc[d, j] - PI[d, j] * sg) - last
        pos += k - 1
    return lp


@njit(cache=True, nogil=True)
def glad_entry(x: np.ndarray, ints: np.ndarray, floats: np.ndarray, grad: np.ndarray) -> float:
    """:func:`glad_logp_grad` with packed data (:class:`GladInt`, :class:`GladFloat`)."""
    h = glad_segment(ints, GladInt.HEADER)
    C, U, D, K = (
        h[GladHeader.N_CELLS],
        h[GladHeader.N_UNITS],
        h[GladHeader.N_DIMENSIONS],
        h[GladHeader.N_CLASSES],
    )
    sc = glad_segment(floats, GladFloat.SCALARS)
    return glad_logp_grad(
        x,
        C,
        U,
        D,
        K,
        glad_segment(ints, GladInt.N_CATEGORIES),
        glad_segment(ints, GladInt.UNIT_DIM),
        glad_segment(ints, GladInt.UNIT_START),
        glad_segment(ints, GladInt.CELL),
        glad_segment(ints, GladInt.CODE),
        glad_segment(ints, GladInt.MASK).reshape((U, K)),
        sc[GladScalar.ABILITY_MU],
        sc[GladScalar.ABILITY_SD],
        sc[GladScalar.EASINESS_MU],
        sc[GladScalar.EASINESS_SD],
        glad_segment(floats, GladFloat.PREV_CONC).reshape((D, K)),
        sc[GladScalar.CONST],
        grad,
    )


@cfunc(LOGP_SIGNATURE, cache=True)
def glad_logp_cb(dim, x_, out_, logp_, user_data):
    """nutpie's log-density callback of GLAD (user data: ints and floats of
    :func:`glad_entry`)."""
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = read_user_data(user_data)
    lp = glad_entry(x, ints, floats, out)
    logp[0] = lp
    return status_code(lp, out)


__all__ = [
    "CALLBACK_SOURCE",
    "CALLBACK_SOURCE_SHA256",
    "GladFloat",
    "GladHeader",
    "GladInt",
    "GladScalar",
    "callback_source_sha256",
    "glad_entry",
    "glad_logp_cb",
    "glad_logp_grad",
    "glad_segment",
    "glad_simplex_backward",
]
