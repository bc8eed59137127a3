"""Running nutpie: a panic of its Rust code turned into a ``RuntimeError``
(:func:`nutpie_sample`), and a sample that stops once the fit passes its checks
(:func:`nutpie_until`: draws as checkpoints, one nutpie sampler per chain, each paused at a
checkpoint until the others get there). :func:`raterstats.inference.run_density` and the
PyMC path of :mod:`raterstats.inference` call them."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from raterstats.lazy import LazyModule

if TYPE_CHECKING:
    import nutpie

    from raterstats.inference import Density
else:
    nutpie = LazyModule("nutpie")


def nutpie_sample(model: Any, **kwargs: Any) -> Any:
    """``nutpie.sample(model, **kwargs)``, with a panic of nutpie's Rust code (a
    ``pyo3_runtime.PanicException``, which derives from ``BaseException`` and so escapes
    ``except Exception``) raised again as a ``RuntimeError`` that names the settings."""
    try:
        return nutpie.sample(model, **kwargs)
    except BaseException as e:
        if type(e).__name__ != "PanicException":
            raise
        settings = {k: v for k, v in kwargs.items() if k in ("draws", "tune", "chains", "cores")}
        raise RuntimeError(
            f"the nutpie sampler stopped with an internal error ({e}); settings: {settings}"
        ) from e


#: seconds between looks at the chains' progress while a sample waits for a checkpoint
WATCH_SECONDS = 0.2


def nutpie_c_model(density: Density, seed: int) -> Any:
    """A nutpie model calling ``density.c_logp`` directly (the unconstrained vector is
    stored as ``__x``; :func:`run_density` expands the draws afterwards)."""
    from nutpie.compile_pymc import CompiledPyMCModel

    from raterstats.nutpie_callbacks import copy_expand_cb

    n = int(density.ndim)

    def initial_point(s: int) -> np.ndarray:
        return np.asarray(density.initial_point(np.random.default_rng([seed, int(s)])), float)

    return CompiledPyMCModel(
        compiled_logp_func=density.c_logp,
        compiled_expand_func=copy_expand_cb,
        initial_point_func=initial_point,
        shared_data={},
        shared_var_keys={},
        user_data=density.c_data,
        n_expanded=n,
        shape_info=(["__x"], [slice(0, n)], [(n,)]),
        logp_func=None,
        expand_func=None,
        _n_dim=n,
        _shapes={"__x": (n,)},
        _coords={"__x_dim": [str(i) for i in range(n)]},
        dims={"__x": ("__x_dim",)},
    )


def sampler_finished(sampler: Any) -> bool:
    """Whether a non-blocking nutpie sampler has finished; its error, if it failed, is
    raised (nutpie's ``is_finished`` raises ``TimeoutError`` while the chain still runs)."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def chain_seeds(seed: int, chains: int) -> list[int]:
    """The seed of each chain of a sample with checkpoints (one nutpie sampler per chain).

    Examples
    --------
    >>> chain_seeds(1, 2) == chain_seeds(1, 2) != chain_seeds(2, 2)
    True
    """
    return [int(x) for x in np.random.SeedSequence([int(seed), 8]).generate_state(chains)]


class _Chain:
    """One chain of a watched sample: its seed, its own non-blocking nutpie sampler
    (started on demand), and its progress, which nutpie's callback (:meth:`watch`, on
    nutpie's thread) keeps up to date."""

    def __init__(self, seed: int, tune: int) -> None:
        self.seed = seed
        self.tune = tune
        self.sampler: Any = None
        self.steps = 0  # tuning steps and draws so far
        self.done = 0  # draws so far
        self.running = False
        self.finished = False
        self.trace: Any = None

    def watch(self, progress: Any) -> None:
        """nutpie's progress callback (its ``finished_draws`` counts tuning steps)."""
        self.steps = int(progress[0].finished_draws)
        self.done = max(0, self.steps - self.tune)

    def start_or_resume(self, start: Callable[[_Chain], Any]) -> None:
        if self.sampler is None:
            self.sampler = start(self)
        else:
            self.sampler.resume()
        self.running = True

    def pause(self) -> None:
        self.sampler.pause()
        self.running = False


def nutpie_until(
    make_model: Callable[[int], Any],
    *,
    checkpoints: Sequence[int],
    tune: int,
    chains: int,
    seed: int,
    cores: int,
    verdict: Callable[[xr.DataTree, int], str | None],
    progress: bool,
    **kwargs: Any,
) -> tuple[xr.DataTree, int, list[dict[str, Any]]]:
    """NUTS by nutpie up to ``checkpoints[-1]`` draws per chain, stopping at the first
    checkpoint ``c`` where ``verdict(trace, c)`` gives a reason.

    Each chain is its own nutpie sampler (``make_model(chain_seed)``, one chain, seeded by
    :func:`chain_seeds`), paused when it reaches a checkpoint, so that a chain that is
    ahead never takes the cores from one still on its way; at most ``cores`` chains run at
    once. The verdict at ``c`` reads the first ``c`` draws of every chain, and a chain's
    draws do not depend on when it is paused, so the result depends on the seed alone,
    never on the timing. Returns the trace (``posterior`` and ``sample_stats``, chains
    ``0..chains-1``, all draws so far), the draws to keep per chain, and what each
    checkpoint found."""

    def start(chain: _Chain) -> Any:
        return nutpie_sample(
            make_model(chain.seed),
            draws=int(checkpoints[-1]),
            tune=int(tune),
            chains=1,
            cores=1,
            seed=chain.seed,
            blocking=False,
            progress_callback=chain.watch,
            progress_rate=int(WATCH_SECONDS * 1000),
            **kwargs,
        )

    run = [_Chain(s, int(tune)) for s in chain_seeds(seed, chains)]
    last = int(checkpoints[-1])

    shown = [0.0]

    def show(c: int, end: str = "", *, now: bool = False, tail: str = "") -> None:
        """The sample's progress towards checkpoint ``c`` on one line of stderr (at most
        once a second unless ``now``)."""
        if not progress or (not now and time.perf_counter() - shown[0] < 1.0):
            return
        shown[0] = time.perf_counter()
        goal = int(tune) + c
        share = sum(min(ch.steps, goal) for ch in run) / (len(run) * goal)
        tuning = sum(ch.steps < int(tune) for ch in run)
        print(
            f"\rNUTS, {len(run)} chains to {c:,} draws each: {share:.0%}"
            + (f" ({tuning} tuning)" if tuning else "")
            + tail
            + " " * 8,
            end=end,
            file=sys.stderr,
            flush=True,
        )

    def reach(c: int) -> None:
        """Run the chains, at most ``cores`` at once, until each has ``c`` draws."""
        while any(ch.done < c for ch in run):
            show(c)
            for ch in run:
                if not ch.running:
                    continue
                if sampler_finished(ch.sampler):  # every draw it was asked for
                    ch.running, ch.finished, ch.done = False, True, last
                    ch.steps = int(tune) + last
                elif ch.done >= c:
                    ch.pause()
            waiting = [ch for ch in run if not ch.running and ch.done < c]
            for ch in waiting[: max(0, int(cores) - sum(ch.running for ch in run))]:
                ch.start_or_resume(start)
            if any(ch.done < c for ch in run):
                time.sleep(WATCH_SECONDS)
        # the last chains to get there crossed c while the loop slept: paused too, so that
        # they do not take a core from the checks at c (or sample on in vain where the
        # sample stops there)
        for ch in run:
            if c < last and ch.running and not sampler_finished(ch.sampler):
                ch.pause()

    def traces(c: int, stop: bool) -> xr.DataTree:
        parts = []
        for ch in run:
            if ch.finished:  # its results can be taken once
                ch.trace = ch.trace if ch.trace is not None else ch.sampler.wait()
                parts.append(ch.trace)
            else:
                parts.append(ch.sampler.wait() if stop else ch.sampler.inspect())
        groups = {}
        for g in ("posterior", "sample_stats"):
            ds = [p[g].to_dataset().isel(draw=slice(0, c)) for p in parts]
            ds = [d.assign_coords(chain=[i]) for i, d in enumerate(ds)]
            groups[g] = xr.DataTree(xr.concat(ds, dim="chain"))
        return xr.DataTree(children=groups)

    record: list[dict[str, Any]] = []
    try:
        for c in checkpoints[:-1]:
            reach(int(c))
            trace = traces(int(c), stop=False)
            why = verdict(trace, int(c))
            record.append({"draws": int(c), "verdict": why or "sampled on"})
            show(int(c), "\n", now=True, tail=f"; checked: {why or 'sampled on'}")
            if why:  # the chains' first c draws are in hand: the rest are not needed
                for ch in run:
                    if not ch.finished:
                        ch.sampler.cancel()
                return trace, int(c), record
        reach(last)
        show(last, end="\n", now=True)
        record.append({"draws": last, "verdict": "the last checkpoint"})
        return traces(last, stop=True), last, record
    except BaseException as e:
        for ch in run:
            if ch.sampler is not None:
                with contextlib.suppress(BaseException):  # it may have stopped already
                    ch.sampler.cancel()
        if type(e).__name__ == "PanicException":
            raise RuntimeError(f"the nutpie sampler stopped with an internal error ({e})") from e
        raise


__all__ = [
    "WATCH_SECONDS",
    "chain_seeds",
    "nutpie_c_model",
    "nutpie_sample",
    "nutpie_until",
    "sampler_finished",
]
