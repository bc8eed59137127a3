"""The sentence-level ratings of the ordinal rater model with the sentence deviations
integrated out (Gauss-Hermite), compiled (numba) for
:func:`raterstats.models.ordinal.kernels.ordinal_logp_grad`, whose mode ``method="map"``
returns (:meth:`raterstats.models.ordinal.OrdinalRaters.mode_form`).

A sentence deviation ``w_sd = tau_d z_sd`` (``z ~ N(0, 1)``) enters only the ratings of its
own sentence and dimension, so given the other parameters the marginal likelihood of a
sentence's ratings is a one-dimensional integral,

``L_sd = int prod_r P(y_r | eta_i(s)d + tau_d z) phi(z) dz``
``~ sum_k w_k prod_r P(y_r | eta_i(s)d + tau_d x_k)``

with the nodes ``x_k`` and weights ``w_k`` of Gauss-Hermite quadrature for the standard
normal. Its gradient is the expected gradient of the ratings' log-likelihood under the
nodes' posterior weights ``p_k = w_k L_k / sum_j w_j L_j`` (the derivative of a
log-sum-exp), and ``tau_d`` takes ``sum_k p_k x_k`` times the derivative in the latent
value. Kept apart from :mod:`raterstats.models.ordinal.kernels` (long enough); its source
hash is checked there, as that of ``kernels_interval.py``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from raterstats.models.ordinal.kernels_interval import (
    interval_logp_grad,
    log_sigmoid,
    sigmoid,
)


@njit(cache=True, nogil=True)
def sentence_marginal(
    start: int,
    obs_item: np.ndarray,
    obs_dim: np.ndarray,
    obs_design: np.ndarray,
    obs_rater: np.ndarray,
    obs_sent: np.ndarray,
    obs_y: np.ndarray,
    zlen: np.ndarray,
    eta: np.ndarray,
    tau: np.ndarray,
    lam: np.ndarray,
    sev: np.ndarray,
    bet: np.ndarray,
    cuts: np.ndarray,
    egap: np.ndarray,
    nodes: np.ndarray,
    log_weights: np.ndarray,
    dcuts: np.ndarray,
    deta: np.ndarray,
    dlam: np.ndarray,
    dsev: np.ndarray,
    dbet: np.ndarray,
    dtau: np.ndarray,
    z_mean: np.ndarray,
) -> float:
    """The summed log marginal likelihood of the ratings ``start:`` (each with a sentence:
    ``obs_sent`` 1-based), which come grouped by sentence x dimension (the ratings of one
    group adjacent); adds its derivatives to ``dcuts``, ``deta``, ``dlam``, ``dsev``,
    ``dbet`` (arrays of :func:`~raterstats.models.ordinal.kernels.ordinal_logp_grad`) and
    ``dtau`` (per dimension), and writes each group's posterior mean of ``z``
    (``sum_k p_k x_k``) into ``z_mean[(s - 1) * D + d]`` (``D = dtau.size``, the layout of
    the sentence block ``WZ``).

    ``nodes`` and ``log_weights`` are the Gauss-Hermite nodes and log-weights for the
    standard normal (weights summing to 1). Each term is in log form
    (:func:`~raterstats.models.ordinal.kernels_interval.interval_logp_grad` and the logistic
    tails), so a node far in a group's tail gives a finite log-likelihood, not an underflow.
    """
    n = obs_y.size
    k1 = cuts.shape[2]
    nk = nodes.size
    ll = np.empty(nk)
    total = 0.0
    r0 = start
    while r0 < n:
        s = obs_sent[r0]
        d = obs_dim[r0]
        r1 = r0 + 1
        while r1 < n and obs_sent[r1] == s and obs_dim[r1] == d:
            r1 += 1
        m = r1 - r0
        # per rating and node: the derivatives of log P in the upper and lower cut-point (a
        # tail: the one cut-point's, in ghi); the derivative in the linear predictor is
        # -(ghi + glo)
        ghi = np.empty((m, nk))
        glo = np.empty((m, nk))
        for k in range(nk):
            w = tau[d] * nodes[k]
            acc = log_weights[k]
            for t in range(m):
                r = r0 + t
                i = obs_item[r]
                g = obs_design[r]
                j = obs_rater[r]
                y = obs_y[r]
                lp = lam[j, d, g] * (eta[i, d] + w) - sev[j, d, g] + bet[j, d, g] * zlen[i]
                if y == 0:
                    u = cuts[d, g, 0] - lp
                    acc += log_sigmoid(u)
                    ghi[t, k] = sigmoid(-u)
                    glo[t, k] = 0.0
                elif y == k1:
                    u = lp - cuts[d, g, k1 - 1]
                    acc += log_sigmoid(u)
                    ghi[t, k] = -sigmoid(-u)
                    glo[t, k] = 0.0
                else:
                    lpr, gh, gl = interval_logp_grad(
                        cuts[d, g, y] - lp, cuts[d, g, y - 1] - lp, egap[d, g, y]
                    )
                    acc += lpr
                    ghi[t, k] = gh
                    glo[t, k] = gl
            ll[k] = acc
        top = ll[0]
        for k in range(1, nk):
            if ll[k] > top:
                top = ll[k]
        norm = 0.0
        for k in range(nk):
            ll[k] = math.exp(ll[k] - top)
            norm += ll[k]
        total += top + math.log(norm)
        zm = 0.0
        for k in range(nk):
            ll[k] /= norm  # the node's posterior weight
            zm += ll[k] * nodes[k]
        # each rating's derivatives averaged over the nodes' weights, then added once
        for t in range(m):
            r = r0 + t
            i = obs_item[r]
            g = obs_design[r]
            j = obs_rater[r]
            y = obs_y[r]
            sh = 0.0
            sl = 0.0
            sx = 0.0  # of the linear predictor's derivative times the node
            for k in range(nk):
                sh += ll[k] * ghi[t, k]
                sl += ll[k] * glo[t, k]
                sx -= ll[k] * (ghi[t, k] + glo[t, k]) * nodes[k]
            if y == 0:
                dcuts[d, g, 0] += sh
            elif y == k1:
                dcuts[d, g, k1 - 1] += sh
            else:
                dcuts[d, g, y] += sh
                dcuts[d, g, y - 1] += sl
            sg = -(sh + sl)  # the linear predictor's derivative, averaged
            dlam[j, d, g] += sg * eta[i, d] + sx * tau[d]
            dsev[j, d, g] -= sg
            dbet[j, d, g] += sg * zlen[i]
            deta[i, d] += sg * lam[j, d, g]
            dtau[d] += sx * lam[j, d, g]
        z_mean[(s - 1) * dtau.size + d] = zm
        r0 = r1
    return total


def gauss_hermite_normal(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` nodes and log-weights of Gauss-Hermite quadrature for the standard normal
    (``E f(z) ~ sum_k exp(log_weights[k]) f(nodes[k])``; the weights sum to 1).

    Examples
    --------
    >>> x, lw = gauss_hermite_normal(5)
    >>> round(float(np.exp(lw).sum()), 12), round(float(np.exp(lw) @ x**2), 12)
    (1.0, 1.0)
    """
    t, w = np.polynomial.hermite.hermgauss(int(n))
    return np.sqrt(2.0) * t, np.log(w) - 0.5 * np.log(np.pi)


__all__ = ["gauss_hermite_normal", "sentence_marginal"]
