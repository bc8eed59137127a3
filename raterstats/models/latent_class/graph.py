"""PyTensor pieces of the latent-class models' PyMC graphs: segment sums over rating
patterns, the masked pattern log-likelihood, padded log simplexes and Dirichlet variables
whose rows have each dimension's own number of categories.

The graphs are the models themselves (for NUTS on the PyMC model, MAP and ADVI, and for
non-default priors); the compiled densities are tested against them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from raterstats.lazy import LazyModule
from raterstats.models.latent_class.data import LatentClassData

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")

#: Log-probability used for impossible classes in PyTensor graphs (finite, so gradients
#: stay finite; exp of it is exactly 0 in float64).
NEG = -1e10


def segment_sum_pt(values: Any, index: np.ndarray, n: int) -> Any:
    """Sum of ``values`` (first axis) by group ``index`` into ``n`` rows (PyTensor)."""
    shape = (n, *[values.shape[i] for i in range(1, values.ndim)])
    return pt.zeros(shape, dtype=values.dtype)[index].inc(values)


def pattern_loglik_pt(summed: Any, data: LatentClassData, log_prior: Any) -> tuple[Any, Any]:
    """Marginal log-likelihood per pattern and log joint per pattern x class (PyTensor).

    ``summed``: ``(n_patterns, K)`` sum over the pattern's ratings of log P(rating | true
    class); ``log_prior``: ``(n_dimensions, K)`` log class prior. Returns
    ``(loglik (n_patterns,), log_joint (n_patterns, K))``.
    """
    mask = data.class_mask(data.pattern_dim, data.pattern_gold)
    joint = pt.where(mask, log_prior[data.pattern_dim] + summed, NEG)
    return pt.logsumexp(joint, axis=-1), joint


def padded_log_simplex_pt(values: Any, valid: np.ndarray) -> Any:
    """Log of simplex values padded to ``K`` with ``NEG`` where ``valid`` is False."""
    safe = pt.where(valid, values, 1.0)
    return pt.where(valid, pt.log(safe), NEG)


def padded_dirichlet(
    name: str,
    conc: Any,
    n_categories: np.ndarray,
    lead_dims: tuple[str, ...],
    lead_sizes: tuple[int, ...],
) -> Any:
    """A Dirichlet variable with dims ``(*lead_dims, "dimension", "category")`` whose rows
    have each dimension's own number of categories, padded with zeros to ``K``.

    ``conc`` is a scalar concentration or an array over categories. When every dimension
    has ``K`` categories this is one ``pm.Dirichlet`` called ``name``; otherwise one
    Dirichlet per number of categories (``{name}_k{k}``) and ``name`` is a Deterministic.
    """
    D, K = int(n_categories.size), int(n_categories.max())
    dims = (*lead_dims, "dimension", "category")

    def conc_for(k: int, rows: int) -> np.ndarray:
        c = np.asarray(conc, dtype=float)
        if c.ndim == 0:
            c = np.full(k, float(c))
        elif c.shape[-1] != k:
            raise ValueError(f"{name}: concentration of length {c.shape[-1]} for {k} categories")
        return np.broadcast_to(c, (*lead_sizes, rows, k)).copy()

    ks = sorted({int(k) for k in n_categories})
    if len(ks) == 1:
        return pm.Dirichlet(name, a=conc_for(K, D), dims=dims)
    full = pt.zeros((*lead_sizes, D, K))
    for k in ks:
        idx = np.flatnonzero(n_categories == k)
        a = conc_for(k, idx.size)
        v = pm.Dirichlet(f"{name}_k{k}", a=a, shape=a.shape)
        full = pt.set_subtensor(full[..., idx, :k], v)
    return pm.Deterministic(name, full, dims=dims)


def padded_dirichlet_init(
    name: str, value: np.ndarray, n_categories: np.ndarray
) -> dict[str, np.ndarray]:
    """Initial values for :func:`padded_dirichlet` from a padded ``(..., D, K)`` array."""
    ks = sorted({int(k) for k in n_categories})

    def norm(v: np.ndarray) -> np.ndarray:
        v = np.clip(v, 1e-3, None)
        return v / v.sum(axis=-1, keepdims=True)

    if len(ks) == 1:
        return {name: norm(value)}
    out = {}
    for k in ks:
        idx = np.flatnonzero(n_categories == k)
        out[f"{name}_k{k}"] = norm(value[..., idx, :k])
    return out


__all__ = [
    "NEG",
    "padded_dirichlet",
    "padded_dirichlet_init",
    "padded_log_simplex_pt",
    "pattern_loglik_pt",
    "segment_sum_pt",
]
