"""Mean-field Gaussian ADVI on a compiled :class:`~raterstats.inference.Density`.

:func:`advi_density` fits ``q(x) = N(mu, diag(exp(omega))^2)`` on the density's
unconstrained scale (Kucukelbir et al. 2017, "Automatic differentiation variational
inference", JMLR 18(14)) by stochastic gradient ascent on the evidence lower bound

    ELBO(mu, omega) = E_q[log p(x)] + sum(omega) + const,

with the reparametrisation gradient (``x = mu + exp(omega) * eps``, ``eps ~ N(0, I)``; a
fixed number of draws of ``eps`` per step) and Adam's adaptive step size (Kingma & Ba 2015).
Every ``eval_every`` steps the mean of the per-step ELBO estimates over the window is
compared with that of the window :data:`STABLE_WINDOWS` before; a check passes when the
ELBO rose by no more than ``tol`` of itself or than twice the standard error of the
difference (the gain is lost in the noise of the estimates: no detectable progress over
``STABLE_WINDOWS * eval_every`` steps), and the run has converged when
``STABLE_WINDOWS`` checks in a row pass. The returned mean and scale are the average of
the iterates over the last two windows (Adam's iterates jitter around the optimum at a
fixed step size; their average does not). The result has the shape of
:func:`raterstats.inference.run_inference` with ``method="advi"``: ``draws`` draws from
the approximation in a ``posterior`` of one chain, expanded through ``Density.expand``, an
``optimization`` group with the loss (minus the ELBO estimate) per step, and
``sample_stats.converged``; a run that does not converge warns. Everything is seeded: the
same seed gives the same numbers.

It costs one log density and gradient per step and MC draw, and no compilation: where a
model has a compiled density, :meth:`raterstats.models.Model.fit` routes ``method="advi"``
here (class attribute ``advi_on_density``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.checks import check_arguments, integer_problem, real_problem
from raterstats.inference import Density, assemble_datatree, resolve_seed

#: the convergence check compares a window's mean ELBO with that of this many windows
#: before, and this many checks in a row must pass
STABLE_WINDOWS = 3


def advi_density(
    density: Density,
    *,
    draws: int = D.DRAWS,
    random_seed: int | None = D.RANDOM_SEED,
    n: int = 20_000,
    learning_rate: float = 0.02,
    mc_samples: int = 1,
    eval_every: int = 200,
    tol: float = 1e-4,
    init_sd: float = 0.1,
) -> xr.DataTree:
    """Mean-field Gaussian ADVI on a :class:`~raterstats.inference.Density` (see the module
    docstring for the algorithm and the convergence check).

    Parameters
    ----------
    density : Density
        The log density and its gradient on the unconstrained scale.
    draws : int
        Draws taken from the fitted approximation.
    random_seed : int, optional
        Seed of the starting point, the gradient noise and the draws (None: a fresh one).
    n : int
        Most optimisation steps (as ``n`` of ``pm.fit``).
    learning_rate : float
        Adam's step size.
    mc_samples : int
        Draws of ``eps`` per step for the gradient.
    eval_every : int
        Steps per window of the convergence check.
    tol : float
        Relative rise of the window-mean ELBO over :data:`STABLE_WINDOWS` windows below
        which a check passes (a rise within twice its standard error passes too).
    init_sd : float
        Starting standard deviation of every coordinate (the mean starts at the density's
        initial point).

    Returns
    -------
    xr.DataTree
        ``posterior`` (chain=1, ``draws`` draws), ``sample_stats`` (``converged``),
        ``optimization`` (``loss`` per step, ``elbo`` per window); ``posterior.attrs`` hold
        ``elbo`` (the last window's mean), ``converged``, ``iterations`` and
        ``sampling_time``.

    Examples
    --------
    >>> import numpy as np
    >>> from raterstats.inference import Density
    >>> d = Density(2, lambda x: (-0.5 * float((x - 1) @ (x - 1) / 0.25), -(x - 1) / 0.25),
    ...             lambda x: {"x": x}, {"x": (2,)}, {"x": ("k",)}, {"k": ["a", "b"]},
    ...             lambda rng: np.zeros(2))
    >>> dt = advi_density(d, draws=4000, random_seed=1)
    >>> dict(dt.posterior.sizes)
    {'chain': 1, 'draw': 4000, 'k': 2}
    >>> np.round(dt.posterior["x"].mean(("chain", "draw")).values, 1).tolist()
    [1.0, 1.0]
    >>> np.round(dt.posterior["x"].std(("chain", "draw")).values, 1).tolist()
    [0.5, 0.5]
    """
    check_arguments(
        integer_problem("draws", draws, minimum=1),
        integer_problem("n", n, minimum=1),
        integer_problem("mc_samples", mc_samples, minimum=1),
        integer_problem("eval_every", eval_every, minimum=2),
        real_problem("learning_rate", learning_rate, low=0, open_low=True),
        real_problem("tol", tol, low=0, open_low=True),
        real_problem("init_sd", init_sd, low=0, open_low=True),
        where="advi_density",
    )
    seed = resolve_seed(random_seed)
    ndim = int(density.ndim)
    rng = np.random.default_rng([seed, 2])
    mu = np.asarray(density.initial_point(np.random.default_rng([seed, 0])), float).copy()
    omega = np.full(ndim, np.log(float(init_sd)))
    b1, b2, eps_adam = 0.9, 0.999, 1e-8
    m = np.zeros((2, ndim))
    v = np.zeros((2, ndim))
    losses = np.full(int(n), np.nan)
    window_elbo: list[float] = []
    window_se: list[float] = []
    mean_sum, omega_sum = np.zeros(ndim), np.zeros(ndim)
    window_mu: list[np.ndarray] = []
    stable = 0
    window_omega: list[np.ndarray] = []
    converged = False
    rejected = 0
    t0 = time.perf_counter()
    it = 0
    for it in range(1, int(n) + 1):
        sd = np.exp(omega)
        g_mu = np.zeros(ndim)
        g_om = np.zeros(ndim)
        lp_sum = 0.0
        finite = True
        for _ in range(int(mc_samples)):
            e = rng.standard_normal(ndim)
            lp, g = density.logp_grad(mu + sd * e)
            if not np.isfinite(lp) or not np.all(np.isfinite(g)):
                finite = False
                break
            lp_sum += float(lp)
            g_mu += g
            g_om += g * e
        if not finite:  # a draw outside the support: no step
            rejected += 1
            if rejected > max(50, int(n) // 10):
                raise FloatingPointError(
                    f"ADVI: the log density was not finite at {rejected} of {it} steps' "
                    "draws; the approximation cannot be fitted from this starting point"
                )
            continue
        k = float(mc_samples)
        grads = (g_mu / k, g_om / k * sd + 1.0)
        losses[it - 1] = -(lp_sum / k + float(omega.sum()))
        for j, gj in enumerate(grads):
            m[j] = b1 * m[j] + (1 - b1) * gj
            v[j] = b2 * v[j] + (1 - b2) * gj * gj
            step = learning_rate * (m[j] / (1 - b1**it)) / (np.sqrt(v[j] / (1 - b2**it)) + eps_adam)
            if j == 0:
                mu = mu + step
            else:
                omega = omega + step
        mean_sum += mu
        omega_sum += omega
        if it % eval_every == 0:
            window = losses[it - eval_every : it]
            window = window[np.isfinite(window)]
            window_elbo.append(-float(window.mean()) if window.size else float("nan"))
            window_se.append(float(window.std() / np.sqrt(max(window.size, 1))))
            window_mu.append(mean_sum / eval_every)
            window_omega.append(omega_sum / eval_every)
            mean_sum, omega_sum = np.zeros(ndim), np.zeros(ndim)
            if len(window_elbo) > STABLE_WINDOWS:
                new, old = window_elbo[-1], window_elbo[-1 - STABLE_WINDOWS]
                noise = 2.0 * float(np.hypot(window_se[-1], window_se[-1 - STABLE_WINDOWS]))
                stable = stable + 1 if new - old <= max(tol * abs(new), noise) else 0
                if stable >= STABLE_WINDOWS:
                    converged = True
                    break
    seconds = time.perf_counter() - t0
    if window_mu:  # the plateau's iterates: the last two windows
        mu = np.mean(window_mu[-2:], axis=0)
        omega = np.mean(window_omega[-2:], axis=0)
    elbo = window_elbo[-1] if window_elbo else float("nan")
    if not converged:
        warnings.warn(
            f"ADVI did not converge in {it} steps (the window-mean ELBO, last {elbo:.6g}, "
            f"still rose by more than its noise and {tol:g} of itself over "
            f"{STABLE_WINDOWS} windows of {eval_every} steps): the approximation is where "
            "the optimiser stopped (sample_stats.converged is False). Raise n=, or use "
            "method='nuts'.",
            UserWarning,
            stacklevel=2,
        )
    sd = np.exp(omega)
    x = mu + sd * np.random.default_rng([seed, 1]).standard_normal((int(draws), ndim))
    expanded = [density.expand(row) for row in x]
    values = {
        k: np.stack([np.asarray(e[k], float) for e in expanded]).reshape(
            1, int(draws), *density.var_shapes[k]
        )
        for k in density.var_shapes
    }
    out = assemble_datatree(
        values,
        density.var_dims,
        density.coords,
        {"converged": np.full((1, int(draws)), converged)},
    )
    out["posterior"].attrs.update(
        {
            "elbo": elbo,
            "converged": int(converged),
            "iterations": int(it),
            "optimiser": f"Adam (learning rate {learning_rate:g}), {mc_samples} MC draw(s)/step",
            "sampling_time": seconds,
        }
    )
    used = losses[:it]
    out["optimization"] = xr.DataTree(
        xr.Dataset(
            {
                "loss": (("iteration",), used),
                "elbo": (("window",), np.asarray(window_elbo, float)),
            },
            coords={"iteration": np.arange(used.size), "window": np.arange(len(window_elbo))},
            attrs={
                "note": "loss: minus the ELBO estimate of each step (NaN: a rejected "
                "step); elbo: its mean over each window of the convergence check"
            },
        )
    )
    return out


__all__ = ["STABLE_WINDOWS", "advi_density"]
