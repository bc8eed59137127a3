"""The EM driver shared by the latent-class models: the choice of E-step kernels, restarts
by the short-runs strategy, and the fit's DataTree with the restarts recorded.

A model's EM run (``mace_em.mace_em_run``, ``dawid_skene_em.ds_em_run``) alternates its own
M-step with the E-step of :mod:`raterstats.models.latent_class.reference` (NumPy) or its
compiled override (:mod:`raterstats.models.latent_class.kernels_em`, for large layouts).
"""

from __future__ import annotations

import copy
import json
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from operator import itemgetter
from typing import Any

import numpy as np
import xarray as xr

from raterstats.inference import assemble_datatree
from raterstats.models.latent_class.data import LatentClassData
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

#: The same bound for the variational fits of the correlated-crowd models
#: (``community_ds_vb``, ``ebcc_vb``), which run the E-step hundreds of times per run and
#: dozens of runs per fit (restarts, the held-out rule of their size): on the built-in
#: study's categorical ratings the NumPy E-step took 100 of 255 s of ``choose_model``.
VB_NUMPY_MAX = 2_000

#: Pattern ratings x classes from which a whole EM iteration's E-step runs in
#: :data:`EM_CHUNKS` ranges of patterns on threads (:class:`ChunkedEStep`). Measured on 2
#: cores (3 ratings per pattern, 6,000 table rows, the pool of :func:`em_pool` kept):
#: 450,000 take 1.55 ms on one thread and 1.6 ms on two, 4,500,000 (500,000 x 3) 15.5 ms
#: and 8.2 ms; below this bound handing the ranges to the threads eats what they save.
EM_THREADED_MIN = 600_000

#: Ranges of patterns of the threaded E-step, fixed whatever the number of cores: each range
#: sums its own expected counts and the ranges' sums are added in order, so a fit gives the
#: same numbers on any machine.
EM_CHUNKS = 4

#: Default ``restart_units`` of the EM fits: with more than twice this many units, the
#: restarts' short runs use a random subsample of this many units, and only the start they
#: pick runs on all the data (:func:`short_run_restarts`).
RESTART_UNITS = 50_000


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


def select_em_step(lay: TableLayout, numpy_max: int = EM_NUMPY_MAX) -> Any:
    """The E-step of a whole EM iteration for a layout, ``em_estep_counts(T, log_prior,
    p_e, p_start, pattern_dim, pattern_w, mask, q, M, cc) -> loglik`` (class posteriors,
    expected counts and class counts in one pass over the pattern ratings): the NumPy
    reference for layouts of up to ``numpy_max`` pattern ratings x classes, the compiled
    kernel otherwise (as :func:`select_em_kernels`).

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
    size = lay.p_e.size * lay.mask.shape[1]
    if size <= numpy_max:
        return em_estep_counts_np
    if size >= EM_THREADED_MIN:
        return ChunkedEStep(lay.p_start)
    from raterstats.models.latent_class.kernels_em import em_estep_counts

    return em_estep_counts


_KERNELS_REQUESTED = threading.Event()


def load_em_kernels_later(size: int) -> bool:
    """Load the compiled EM kernels on a background thread, once per process, when a fit
    of ``size`` pattern ratings x classes (an upper bound, e.g. ratings x categories) may
    take the compiled path (more than :data:`EM_NUMPY_MAX`): numba's import and the first
    kernel read from its cache take about 0.4 s, which then overlap the data preparation
    instead of following it. Returns whether a load was started. A failure is left for
    the fit itself to raise, when it needs the kernels.

    Examples
    --------
    >>> load_em_kernels_later(10)  # a small fit runs the NumPy reference
    False
    """
    if size <= EM_NUMPY_MAX or _KERNELS_REQUESTED.is_set():
        return False
    _KERNELS_REQUESTED.set()

    def work() -> None:
        try:
            from raterstats.models.latent_class.kernels_em import em_estep_counts

            one = np.ones(1)
            em_estep_counts(
                np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1, dtype=np.int64),
                np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64), one,
                np.ones((1, 1), dtype=bool), np.empty((1, 1)), np.empty((1, 1)),
                np.empty((1, 1)),
            )  # fmt: skip
        except Exception:  # the fit raises it again when it needs the kernels
            return

    # not a daemon: a process that ends sooner waits for the load (under a second) rather
    # than stopping numba in the middle of it
    threading.Thread(target=work, name="raterstats-em-kernels", daemon=False).start()
    return True


_POOL: tuple[int, ThreadPoolExecutor] | None = None  # (workers, pool)
_POOL_LOCK = threading.Lock()


def em_pool(workers: int) -> ThreadPoolExecutor:
    """The process's thread pool of the threaded E-step (:class:`ChunkedEStep`), started
    on first use and kept: a pool per iteration cost its threads' start and join every
    time (about 1.5 ms of a 9 ms iteration at 500,000 x 3, 2 cores). Its tasks never wait
    on one another, so fits on several threads can share it; a forked process starts its
    own.

    Examples
    --------
    >>> em_pool(2) is em_pool(2)
    True
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] < workers:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="raterstats-em")
            _POOL = (workers, pool)
        return _POOL[1]


def _forget_pool_in_child() -> None:
    """A forked process has none of its parent's threads, but a copy of the pool that
    believes it has: the child starts a pool of its own (its tasks would wait forever)."""
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


class ChunkedEStep:
    """The compiled E-step of a whole EM iteration (``em_estep_counts``, same arguments and
    results) over :data:`EM_CHUNKS` ranges of patterns with about as many pattern ratings
    each, run on up to that many threads (at most the machine's cores): each range writes
    its rows of ``q`` and sums its expected counts and class counts into buffers of its own,
    added in range order afterwards, so the result does not depend on the number of threads.

    Examples
    --------
    >>> import numpy as np
    >>> from raterstats.models.latent_class.reference import em_estep_counts_np
    >>> rng = np.random.default_rng(1)
    >>> p_start = np.arange(0, 31, 3)  # 10 patterns of 3 ratings
    >>> p_e = rng.integers(0, 4, 30)
    >>> T, lp = np.log(rng.dirichlet(np.ones(2), 4)), np.log([[0.6, 0.4]])
    >>> args = (T, lp, p_e, p_start, np.zeros(10, dtype=np.int64), np.ones(10),
    ...         np.ones((10, 2), dtype=bool))
    >>> out = [np.empty((10, 2)), np.empty((4, 2)), np.empty((1, 2))]
    >>> ref = [np.empty((10, 2)), np.empty((4, 2)), np.empty((1, 2))]
    >>> ll = ChunkedEStep(p_start)(*args, *out)
    >>> bool(np.isclose(ll, em_estep_counts_np(*args, *ref)))
    True
    >>> all(np.allclose(a, b) for a, b in zip(out, ref))
    True
    """

    __name__ = "em_estep_counts_chunked"

    def __init__(self, p_start: np.ndarray, chunks: int = EM_CHUNKS) -> None:
        P = p_start.size - 1
        cut = np.searchsorted(p_start, np.linspace(0, p_start[-1], chunks + 1)[1:-1])
        self.bounds = [int(b) for b in np.clip(np.r_[0, cut, P], 0, P)]
        self.workers = max(1, min(chunks, os.cpu_count() or 1))
        self._buffers: list[tuple[np.ndarray, np.ndarray]] = []

    def __call__(
        self,
        T: np.ndarray,
        log_prior: np.ndarray,
        p_e: np.ndarray,
        p_start: np.ndarray,
        pattern_dim: np.ndarray,
        pattern_w: np.ndarray,
        mask: np.ndarray,
        q: np.ndarray,
        M: np.ndarray,
        cc: np.ndarray,
    ) -> float:
        from raterstats.models.latent_class.kernels_em import em_estep_counts_range

        n = len(self.bounds) - 1
        if len(self._buffers) != n or self._buffers[0][0].shape != M.shape:
            self._buffers = [(np.empty_like(M), np.empty_like(cc)) for _ in range(n)]

        with np.errstate(over="ignore"):
            PT, prior = np.exp(T), np.exp(log_prior)

        def run(i: int) -> float:
            Mi, cci = self._buffers[i]
            lo, hi = self.bounds[i], self.bounds[i + 1]
            return float(
                em_estep_counts_range(
                    T, log_prior, PT, prior, p_e, p_start, pattern_dim, pattern_w, mask, q,
                    Mi, cci, lo, hi,
                )
            )  # fmt: skip

        if self.workers == 1:
            totals = [run(i) for i in range(n)]
        else:
            totals = list(em_pool(self.workers).map(run, range(n)))
        M[:] = self._buffers[0][0]
        cc[:] = self._buffers[0][1]
        for Mi, cci in self._buffers[1:]:
            M += Mi
            cc += cci
        return float(sum(totals))


def short_run_restarts(
    run: Callable[..., dict[str, Any]],
    *,
    restarts: int,
    short_iter: int,
    max_iter: int,
    short_run: Callable[..., dict[str, Any]] | None = None,
    rng: np.random.Generator | None = None,
    finish_best: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """EM restarts by the short-runs strategy (Biernacki, Celeux & Govaert 2003, "emEM").

    ``run(random_init=..., max_iter=..., finish=..., state=...)`` is one EM run returning a
    dict with ``objective``, ``loglik`` and ``state``. Every restart (the first from the
    majority vote, ``random_init=False``) runs ``short_iter`` iterations; the one with the
    highest objective is continued from its ``state`` to convergence. With one restart or
    ``short_iter >= max_iter`` every restart runs to convergence and the best by marginal
    likelihood is kept. Returns (best run, all runs, index of the best).

    ``short_run`` (with ``rng``, the generator the runs draw their random starts from):
    the same run on a subsample of the data (:func:`restart_subsample`). The short runs
    then run on the subsample, and the start they pick runs on all the data from the
    beginning to convergence: the majority vote of all the data, or the same random
    parameters (``rng`` is put back to its state before that short run), so the estimate
    is a full EM run from one of the restarts' starts.

    ``finish_best=False``: the run continued to convergence skips its point estimates
    (``finish=False``), for a caller that continues it further (Dawid-Skene's empirical
    Bayes); the restarts that all run to convergence finish regardless, since the best of
    them is chosen by its log-likelihood at the estimates.

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
    sub = short and short_run is not None and rng is not None
    starts: list[Any] = []
    runs = []
    for r in range(restarts):
        if sub:
            assert rng is not None
            starts.append(copy.deepcopy(rng.bit_generator.state))
        runs.append(
            (short_run if sub and short_run is not None else run)(
                random_init=r > 0, max_iter=short_iter if short else max_iter, finish=not short
            )
        )
    key = "objective" if short else "loglik"
    best = max(range(len(runs)), key=lambda i: runs[i][key])
    if sub:
        assert rng is not None
        rng.bit_generator.state = starts[best]
        runs[best] = run(random_init=best > 0, max_iter=max_iter, finish=finish_best)
    elif short:
        runs[best] = run(
            random_init=False, max_iter=max_iter, state=runs[best]["state"], finish=finish_best
        )
    return runs[best], runs, best


def restart_subsample(
    data: LatentClassData, restart_units: int, random_seed: int
) -> LatentClassData | None:
    """The subsample the restarts' short runs use: ``restart_units`` units drawn at random
    (seeded by ``random_seed``) when the data have more than twice as many, else None
    (``restart_units=0``: never).

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=4, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> restart_subsample(d, 5, 1).n_units, restart_subsample(d, 50, 1)
    (5, None)
    """
    if isinstance(restart_units, bool) or not isinstance(restart_units, int | np.integer):
        raise ValueError(f"restart_units must be a whole number, not {restart_units!r}")
    if restart_units < 0:
        raise ValueError(f"restart_units must be at least 0, not {restart_units}")
    if restart_units == 0 or data.n_units <= 2 * restart_units:
        return None
    rng = np.random.default_rng([random_seed, 2])
    keep = np.zeros(data.n_units, dtype=bool)
    keep[rng.choice(data.n_units, int(restart_units), replace=False)] = True
    return subset_units(data, keep)


def subset_units(data: LatentClassData, keep: np.ndarray) -> LatentClassData:
    """The layout of the units where ``keep`` (bool per unit) is True: their ratings,
    their patterns (numbered in the order of the patterns of ``data``) and counts.

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> s = subset_units(d, np.arange(d.n_units) < 4)
    >>> s.n_units, s.n_ratings == int((d.unit < 4).sum()), int(s.pattern_count.sum())
    (4, True, 4)
    """
    idx = np.flatnonzero(keep)
    # index arrays, taken once: faster than a boolean mask per array on large data
    on_rating = np.flatnonzero(keep[data.unit])
    unit_pattern = data.unit_pattern[idx]
    used = np.zeros(data.n_patterns, dtype=bool)
    used[unit_pattern] = True
    new_pattern = np.cumsum(used) - 1
    on_p = np.flatnonzero(used[data.p_pattern])
    take = itemgetter(*idx.tolist()) if idx.size > 1 else None

    def units(values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(take(values)) if take is not None else tuple(values[i] for i in idx)

    def pick(values: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if values is None else units(values)

    def rows(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else values[on_rating]

    return replace(
        data,
        unit_ids=units(data.unit_ids),
        unit_item=units(data.unit_item),
        unit_segment=units(data.unit_segment),
        unit=(np.cumsum(keep) - 1)[data.unit[on_rating]],
        rater=data.rater[on_rating],
        dim=data.dim[on_rating],
        design=data.design[on_rating],
        code=data.code[on_rating],
        unit_dim=data.unit_dim[idx],
        unit_gold=data.unit_gold[idx],
        unit_pattern=new_pattern[unit_pattern],
        pattern_count=np.bincount(new_pattern[unit_pattern], minlength=int(used.sum())),
        pattern_dim=data.pattern_dim[used],
        pattern_gold=data.pattern_gold[used],
        p_pattern=new_pattern[data.p_pattern[on_p]],
        p_rater=data.p_rater[on_p],
        p_dim=data.p_dim[on_p],
        p_design=data.p_design[on_p],
        p_code=data.p_code[on_p],
        unit_system=pick(data.unit_system),
        unit_question=pick(data.unit_question),
        unit_gold_data=None if data.unit_gold_data is None else data.unit_gold_data[idx],
        obs_repeat=rows(data.obs_repeat),
    )


def record_restarts(
    dt: xr.DataTree, runs: list[dict[str, Any]], best: int, restart_units: int | None = None
) -> None:
    """Store each restart's objective at the end of its run and its iterations (JSON
    lists; the kept restart's final run included, so their sum is every EM iteration of
    the fit), the index of the one kept and the number of units the short runs used
    (``restart_units``; all the units when not given) in ``sample_stats.attrs``
    (``restart_loglik``, ``restart_iterations``, ``best_restart``, ``restart_units``).
    With a subsample, the short runs' objectives are on the subsample; the kept
    restart's is that of its run on all the data."""
    attrs = dt["sample_stats"].attrs
    attrs["restart_loglik"] = json.dumps([float(r["objective"]) for r in runs])
    attrs["restart_iterations"] = json.dumps([int(r["n_iter"]) for r in runs])
    attrs["best_restart"] = int(best)
    if restart_units is not None:
        attrs["restart_units"] = int(restart_units)


def em_datatree(
    best: dict[str, Any],
    runs: list[dict[str, Any]],
    best_index: int,
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
    restart_units: int | None = None,
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
    record_restarts(dt, runs, best_index, restart_units)
    return dt


__all__ = [
    "EM_CHUNKS",
    "EM_NUMPY_MAX",
    "EM_THREADED_MIN",
    "RESTART_UNITS",
    "ChunkedEStep",
    "em_datatree",
    "load_em_kernels_later",
    "record_restarts",
    "restart_subsample",
    "select_em_kernels",
    "select_em_step",
    "short_run_restarts",
    "subset_units",
]
