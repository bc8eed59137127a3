"""The EM driver shared by the latent-class models: the choice of E-step kernels, restarts
by the short-runs strategy, and the fit's DataTree with the restarts recorded.

A model's EM run (``mace_em.mace_em_run``, ``dawid_skene_em.ds_em_run``) alternates its own
M-step with the E-step of :mod:`raterstats.models.latent_class.reference` (NumPy) or its
compiled override (:mod:`raterstats.models.latent_class.kernels_em`, for large layouts).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import xarray as xr

from raterstats.inference import assemble_datatree
from raterstats.models.latent_class.reference import (
    TableLayout,
    em_accumulate_np,
    em_estep_accumulate_np,
    em_estep_counts_np,
    em_estep_np,
)

#: Pattern ratings x classes up to which EM runs on the NumPy reference kernels: numba's
#: first use in a process costs about 0.8 s (loading its registries), more than a whole EM
#: fit of a small data set takes in NumPy.
EM_NUMPY_MAX = 200_000


def select_em_kernels(lay: TableLayout) -> tuple[Any, Any, Any]:
    """``(em_estep, em_accumulate, em_estep_accumulate)`` for a layout: the NumPy
    reference for small layouts (up to :data:`EM_NUMPY_MAX` pattern ratings x classes),
    the compiled kernels otherwise (same arguments and results).

    Examples
    --------
    >>> from raterstats.models.latent_class.reference import table_layout
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> select_em_kernels(table_layout(d, d.p_cell))[0].__name__
    'em_estep_np'
    """
    if lay.p_e.size * lay.mask.shape[1] <= EM_NUMPY_MAX:
        return em_estep_np, em_accumulate_np, em_estep_accumulate_np
    from raterstats.models.latent_class.kernels_em import (
        em_accumulate,
        em_estep,
        em_estep_accumulate,
    )

    return em_estep, em_accumulate, em_estep_accumulate


def select_em_step(lay: TableLayout) -> Any:
    """The E-step of a whole EM iteration for a layout, ``em_estep_counts(T, log_prior,
    p_e, p_start, pattern_dim, pattern_w, mask, q, M, cc) -> loglik`` (class posteriors,
    expected counts and class counts in one pass over the pattern ratings): the NumPy
    reference for small layouts, the compiled kernel otherwise (as
    :func:`select_em_kernels`).

    Examples
    --------
    >>> from raterstats.models.latent_class.reference import table_layout
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> select_em_step(table_layout(d, d.p_cell)).__name__
    'em_estep_counts_np'
    """
    if lay.p_e.size * lay.mask.shape[1] <= EM_NUMPY_MAX:
        return em_estep_counts_np
    from raterstats.models.latent_class.kernels_em import em_estep_counts

    return em_estep_counts


def short_run_restarts(
    run: Callable[..., dict[str, Any]], *, restarts: int, short_iter: int, max_iter: int
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """EM restarts by the short-runs strategy (Biernacki, Celeux & Govaert 2003, "emEM").

    ``run(random_init=..., max_iter=..., finish=..., state=...)`` is one EM run returning a
    dict with ``objective``, ``loglik`` and ``state``. Every restart (the first from the
    majority vote, ``random_init=False``) runs ``short_iter`` iterations; the one with the
    highest objective is continued from its ``state`` to convergence. With one restart or
    ``short_iter >= max_iter`` every restart runs to convergence and the best by marginal
    likelihood is kept. Returns (best run, all runs, index of the best).

    Examples
    --------
    >>> calls = []
    >>> def run(random_init, max_iter, finish=True, state=None):
    ...     calls.append((random_init, max_iter, state))
    ...     obj = 1.0 if random_init else 2.0
    ...     return {"objective": obj, "loglik": obj, "state": "s" if state is None else state}
    >>> best, runs, i = short_run_restarts(run, restarts=3, short_iter=10, max_iter=500)
    >>> i, calls[-1]
    (0, (False, 500, 's'))
    """
    if restarts < 1:
        raise ValueError("restarts must be at least 1")
    if short_iter < 1:
        raise ValueError("short_iter must be at least 1")
    short = restarts > 1 and short_iter < max_iter
    runs = [
        run(random_init=r > 0, max_iter=short_iter if short else max_iter, finish=not short)
        for r in range(restarts)
    ]
    key = "objective" if short else "loglik"
    best = max(range(len(runs)), key=lambda i: runs[i][key])
    if short:
        runs[best] = run(random_init=False, max_iter=max_iter, state=runs[best]["state"])
    return runs[best], runs, best


def record_restarts(dt: xr.DataTree, runs: list[dict[str, Any]], best: int) -> None:
    """Store each restart's objective at the end of its run and its iterations (JSON
    lists; the kept restart's continuation included, so their sum is every EM iteration
    of the fit) and the index of the one kept in ``sample_stats.attrs``
    (``restart_loglik``, ``restart_iterations``, ``best_restart``)."""
    dt["sample_stats"].attrs["restart_loglik"] = json.dumps([float(r["objective"]) for r in runs])
    dt["sample_stats"].attrs["restart_iterations"] = json.dumps([int(r["n_iter"]) for r in runs])
    dt["sample_stats"].attrs["best_restart"] = int(best)


def em_datatree(
    best: dict[str, Any],
    runs: list[dict[str, Any]],
    best_index: int,
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
) -> xr.DataTree:
    """The DataTree of an EM fit: the kept run's point estimates as one draw of one chain,
    its plug-in log-likelihood (``lp``), convergence and iterations in ``sample_stats``,
    and the restarts (:func:`record_restarts`).

    Examples
    --------
    >>> best = {"values": {"p": np.array([0.5, 0.5])}, "loglik": -1.0, "converged": True,
    ...         "n_iter": 3, "objective": -1.0}
    >>> dt = em_datatree(best, [best], 0, {"p": ("k",)}, {"k": ["a", "b"]})
    >>> dt.posterior["p"].dims, dt.sample_stats.attrs["best_restart"]
    (('chain', 'draw', 'k'), 0)
    """
    dt = assemble_datatree(
        {k: v[None, None] for k, v in best["values"].items()},
        dims,
        coords,
        sample_stats={
            "lp": np.array([[best["loglik"]]]),
            "converged": np.array([[best["converged"]]]),
            "n_iterations": np.array([[best["n_iter"]]]),
        },
    )
    record_restarts(dt, runs, best_index)
    return dt


__all__ = [
    "EM_NUMPY_MAX",
    "em_datatree",
    "record_restarts",
    "select_em_kernels",
    "select_em_step",
    "short_run_restarts",
]
