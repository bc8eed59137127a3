"""Inference engines for any PyMC model, returning one consistent ``xr.DataTree`` shape.

:func:`run_inference` runs

* ``method="nuts"``: NUTS by nutpie (default; numba-compiled, chains in parallel threads),
  PyMC's own NUTS (``sampler="pymc"``) or NumPyro (``sampler="numpyro"``, needs the ``jax``
  extra: ``pip install 'raterstats[jax]'``);
* ``method="map"``: the posterior mode by L-BFGS (``pm.find_MAP``);
* ``method="advi"``: a mean-field Gaussian approximation (``pm.fit``), ``draws`` draws of it.

Whatever the engine, the result has a ``posterior`` group with dims ``(chain, draw, ...)``
(MAP: ``chain=1, draw=1``; ADVI: ``chain=1``) carrying the model's coordinates, and a
``sample_stats`` group with harmonised names: ``lp`` (log density), and for NUTS
``diverging``, ``tree_depth``, ``reached_max_treedepth``, ``energy``, ``step_size``,
``acceptance_rate`` and ``n_steps``. Groups are netCDF-safe (no object arrays). Model
fits add the data, log-likelihood and attributes (:meth:`raterstats.models.base.Model.fit`).

Seeds: :func:`resolve_seed` turns ``None`` into a fresh seed that is recorded, so every run
can be repeated; the same seed gives identical draws (for nutpie and PyMC, chains are
seeded from it deterministically).
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.checks import check_arguments, seed_problem
from raterstats.inference_checks import (
    ENGINE_OPTIONS,
    METHODS,
    SAMPLERS,
    chain_process_start,
    sampler_argument_problems,
)
from raterstats.lazy import LazyModule
from raterstats.nutpie_run import nutpie_c_model, nutpie_sample, nutpie_until

if TYPE_CHECKING:
    import nutpie
    import pymc as pm
else:
    nutpie = LazyModule("nutpie")
    pm = LazyModule("pymc")


_NUTPIE_RENAME = {
    "depth": "tree_depth",
    "maxdepth_reached": "reached_max_treedepth",
    "logp": "lp",
    "mean_tree_accept": "acceptance_rate",
}
_KEEP_STATS = (
    "lp",
    "diverging",
    "tree_depth",
    "reached_max_treedepth",
    "energy",
    "energy_error",
    "max_energy_error",
    "step_size",
    "step_size_bar",
    "acceptance_rate",
    "n_steps",
)


def resolve_seed(random_seed: int | None) -> int:
    """The seed to use: ``random_seed`` itself, or a fresh one when None.

    Raises ``ValueError`` unless ``random_seed`` is None or an integer in
    ``[0, 2**63 - 1]`` (:func:`raterstats.checks.seed_problem`).

    Examples
    --------
    >>> resolve_seed(7)
    7
    >>> 0 <= resolve_seed(None) < 2**31
    True
    """
    if random_seed is None:
        return int(np.random.SeedSequence().generate_state(1)[0] % (2**31 - 1))
    check_arguments(seed_problem("random_seed", random_seed))
    return int(random_seed)


def _n_cores(chains: int, cores: int | None) -> int:
    n = cores if cores is not None else (os.cpu_count() or 1)
    return max(1, min(int(n), int(chains)))


def _model_dims(model: pm.Model) -> dict[str, tuple[str, ...]]:
    return {k: tuple(v) for k, v in model.named_vars_to_dims.items() if v is not None}


def _model_coords(model: pm.Model) -> dict[str, Any]:
    return {k: np.asarray(v) for k, v in model.coords.items() if v is not None}


def draws_to_datatree(
    values: Mapping[str, np.ndarray],
    model: pm.Model,
    *,
    sample_stats: Mapping[str, np.ndarray] | None = None,
) -> xr.DataTree:
    """Posterior draws ``{name: array (chain, draw, ...)}`` as a DataTree with the model's
    coordinates (used for MAP and EM results, ``chain=1, draw=1``).

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> with pm.Model(coords={"rater": ["a", "b"]}) as m:
    ...     x = pm.Normal("x", dims="rater")
    >>> dt = draws_to_datatree({"x": np.zeros((1, 1, 2))}, m)
    >>> dt.posterior["x"].dims
    ('chain', 'draw', 'rater')
    """
    dims = _model_dims(model)
    coords = _model_coords(model)
    return assemble_datatree(values, dims, coords, sample_stats)


def assemble_datatree(
    values: Mapping[str, np.ndarray],
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
    sample_stats: Mapping[str, np.ndarray] | None = None,
) -> xr.DataTree:
    """Posterior and sample statistics from arrays ``(chain, draw, ...)``, with each
    variable's dims and the coordinates (an engine-independent result shape).

    Examples
    --------
    >>> import numpy as np
    >>> dt = assemble_datatree({"p": np.full((1, 1, 2), 0.5)}, {"p": ("k",)}, {"k": ["a", "b"]})
    >>> dt.posterior["p"].sel(k="b").item()
    0.5
    """
    post = {}
    for name, arr in values.items():
        arr = np.asarray(arr)
        d = dims.get(name)
        if d is None or len(d) != arr.ndim - 2:
            d = tuple(f"{name}_dim_{i}" for i in range(arr.ndim - 2))
        post[name] = xr.Variable(("chain", "draw", *d), arr)
    n_chain, n_draw = next(iter(values.values())).shape[:2] if values else (1, 1)
    base_coords = {"chain": np.arange(n_chain), "draw": np.arange(n_draw)}
    used = {dim for v in post.values() for dim in v.dims}
    c = {**base_coords, **{k: v for k, v in coords.items() if k in used}}
    posterior = xr.Dataset(post, coords=c)
    out = xr.DataTree()
    out["posterior"] = xr.DataTree(posterior)
    stats = {k: (("chain", "draw"), np.asarray(v)) for k, v in (sample_stats or {}).items()}
    out["sample_stats"] = xr.DataTree(xr.Dataset(stats, coords=base_coords))
    return out


def _clean_stats(ds: xr.Dataset) -> xr.Dataset:
    ds = ds.rename({k: v for k, v in _NUTPIE_RENAME.items() if k in ds and v not in ds})
    keep = [k for k in _KEEP_STATS if k in ds]
    ds = ds[keep]
    for k in list(ds.data_vars):
        if ds[k].dtype.kind == "u":
            ds[k] = ds[k].astype(np.int64)
    if "tree_depth" in ds and "reached_max_treedepth" not in ds:
        ds["reached_max_treedepth"] = ds["tree_depth"] >= ds["tree_depth"].max()
    return ds


def _finish_nuts(dt: xr.DataTree, seconds: float, sampler: str) -> xr.DataTree:
    out = xr.DataTree()
    out["posterior"] = xr.DataTree(dt["posterior"].to_dataset())
    out["sample_stats"] = xr.DataTree(_clean_stats(dt["sample_stats"].to_dataset()))
    out["posterior"].attrs.update({"sampling_time": seconds, "sampler": sampler})
    return out


def _nutpie(
    model: pm.Model,
    *,
    draws: int,
    tune: int,
    chains: int,
    seed: int,
    progress: bool,
    initial_values: Mapping[str, Any] | None,
    target_accept: float | None,
    cores: int | None,
    **kwargs: Any,
) -> xr.DataTree:
    compile_kw: dict[str, Any] = {}
    if initial_values:
        compile_kw["initial_points"] = dict(initial_values)
    compiled = nutpie.compile_pymc_model(model, **compile_kw)
    sample_kw = dict(kwargs)
    if target_accept is not None:
        sample_kw["target_accept"] = target_accept
    t0 = time.perf_counter()
    dt = nutpie_sample(
        compiled,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=_n_cores(chains, cores),
        seed=seed,
        progress_bar=progress,
        save_warmup=False,
        **sample_kw,
    )
    assert isinstance(dt, xr.DataTree)  # blocking=True returns the trace
    return _finish_nuts(dt, time.perf_counter() - t0, "nutpie")


def _pymc_sample(
    model: pm.Model,
    *,
    nuts_sampler: str,
    draws: int,
    tune: int,
    chains: int,
    seed: int,
    progress: bool,
    initial_values: Mapping[str, Any] | None,
    target_accept: float | None,
    cores: int | None,
    **kwargs: Any,
) -> xr.DataTree:
    kw = dict(kwargs)
    if target_accept is not None:
        kw["target_accept"] = target_accept
    n_cores = _n_cores(chains, cores)
    if nuts_sampler == "pymc" and "mp_ctx" not in kw:
        kw["mp_ctx"] = chain_process_start(n_cores)
    t0 = time.perf_counter()
    dt = pm.sample(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=n_cores,
        random_seed=seed,
        progressbar=progress,
        quiet=not progress,
        nuts_sampler=nuts_sampler,
        initvals=dict(initial_values) if initial_values else None,
        compute_convergence_checks=False,
        model=model,
        **kw,
    )
    assert isinstance(dt, xr.DataTree)
    return _finish_nuts(dt, time.perf_counter() - t0, nuts_sampler)


def _map(
    model: pm.Model,
    *,
    seed: int,
    progress: bool,
    initial_values: Mapping[str, Any] | None,
    **kwargs: Any,
) -> xr.DataTree:
    with warnings.catch_warnings():
        # replaced by the warning below, which says why and what to do
        warnings.filterwarnings("ignore", message="The optimizer did not converge")
        res = pm.find_MAP(
            model=model,
            initvals=dict(initial_values) if initial_values else None,
            random_seed=seed,
            progressbar=progress,
            return_inferencedata=True,
            jitter=False,
            **kwargs,
        )
    assert isinstance(res, xr.DataTree)
    post = res["posterior"].to_dataset()
    names = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
    post = post[[n for n in names if n in post]]
    opt = res["optimizer_result"].to_dataset() if "optimizer_result" in res.children else None
    lp = -float(opt["fun"]) if opt is not None and "fun" in opt else np.nan
    out = xr.DataTree()
    out["posterior"] = xr.DataTree(post)
    coords = {"chain": post["chain"].values, "draw": post["draw"].values}
    stats = {"lp": (("chain", "draw"), np.array([[lp]]))}
    if opt is not None and "success" in opt:
        stats["converged"] = (("chain", "draw"), np.array([[bool(opt["success"])]]))
    out["sample_stats"] = xr.DataTree(xr.Dataset(stats, coords=coords))
    failed = opt is not None and "success" in opt and not bool(opt["success"])
    if failed or not np.isfinite(lp):
        message = str(opt["message"].values) if opt is not None and "message" in opt else ""
        _warn_map_failed(message, lp, stacklevel=4)
    return out


def _warn_map_failed(message: str, lp: float, *, stacklevel: int) -> None:
    warnings.warn(
        f"the MAP optimisation did not converge ({message.strip() or 'no optimiser result'}"
        f", log density {lp:g}): the posterior mode may lie on the boundary of the "
        "parameter space (e.g. a rater who is never wrong, a category never used), where "
        "a point estimate is not defined; the reported values are where the optimiser "
        "stopped (sample_stats.converged is False). Use method='nuts' (or 'em' where "
        "the model has it).",
        UserWarning,
        stacklevel=stacklevel,
    )


def _advi(
    model: pm.Model,
    *,
    draws: int,
    seed: int,
    progress: bool,
    initial_values: Mapping[str, Any] | None,
    n: int = 20_000,
    **kwargs: Any,
) -> xr.DataTree:
    fit_kw: dict[str, Any] = {
        "n": n,
        "method": "advi",
        "model": model,
        "random_seed": seed,
        "progressbar": progress,
        "start": dict(initial_values) if initial_values else None,
        **kwargs,
    }
    try:
        approx = pm.fit(**fit_kw)
    except IndexError as e:
        frames = traceback.extract_tb(e.__traceback__)
        if not any("pytensor/link/numba" in f.filename.replace(os.sep, "/") for f in frames):
            raise
        # PyTensor's numba backend fails to compile some ADVI graphs whose variables all
        # have size 1 (a scalar input to a fused elemwise, e.g. a one-coin Dawid-Skene fit
        # of one rater); its Python linker compiles them (the same numbers, more slowly)
        fit_kw["compile_kwargs"] = {**(fit_kw.get("compile_kwargs") or {}), "mode": "FAST_COMPILE"}
        approx = pm.fit(**fit_kw)
    sampled = approx.sample(draws, random_seed=seed + 1, return_inferencedata=True)
    post = sampled["posterior"].to_dataset()
    out = xr.DataTree()
    out["posterior"] = xr.DataTree(post)
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    stats = xr.Dataset(
        coords={"chain": np.arange(n_chain), "draw": np.arange(n_draw)},
    )
    out["sample_stats"] = xr.DataTree(stats)
    hist = np.asarray(approx.hist, dtype=float)
    out["optimization"] = xr.DataTree(
        xr.Dataset({"loss": (("iteration",), hist)}, coords={"iteration": np.arange(hist.size)})
    )
    return out


@dataclass(frozen=True)
class Density:
    """A log density with its gradient on an unconstrained vector, sampled by nutpie
    without PyMC's compilation (models supply one for their fast path).

    ``logp_grad(x) -> (logp, grad)``; ``expand(x) -> {name: array}`` gives the reported
    variables (constrained parameters, derived quantities) with shapes ``var_shapes`` and
    dims ``var_dims``; ``initial_point(rng) -> x`` a starting point.
    """

    ndim: int
    logp_grad: Callable[[np.ndarray], tuple[float, np.ndarray]]
    expand: Callable[[np.ndarray], dict[str, np.ndarray]]
    var_shapes: dict[str, tuple[int, ...]]
    var_dims: dict[str, tuple[str, ...]]
    coords: dict[str, Any]
    initial_point: Callable[[np.random.Generator], np.ndarray]
    #: optional C callback ``int64(uint64 n, double* x, double* grad, double* logp, void*
    #: data)`` (a numba ``cfunc``) computing the same density, and the buffer its ``data``
    #: points to; nutpie then calls it from its threads without the GIL
    c_logp: Any = None
    c_data: np.ndarray | None = None
    #: default keyword arguments of ``nutpie.sample`` for this density (the caller's
    #: keywords win), e.g. ``{"adaptation": "low_rank"}`` for posteriors with strong linear
    #: correlations that a diagonal mass matrix handles badly
    sampler_defaults: Mapping[str, Any] | None = None
    #: optional: the same model in another parametrisation for :func:`map_density` (e.g.
    #: non-centred where NUTS samples a centred form, when L-BFGS converges much faster in
    #: it); the mode on the unconstrained scale then is that form's (the log-Jacobians of
    #: the two forms differ), and ``posterior.attrs["map_form"]`` says so
    map_form: Callable[[], Density] | None = None
    #: optional: ``expand`` of many draws at once, ``(n, ndim) -> {name: (n, *shape)}``
    #: (:func:`run_density` uses it instead of one ``expand`` call per draw)
    expand_draws: Callable[[np.ndarray], dict[str, np.ndarray]] | None = None
    #: what this density integrates out of the model's, if anything (a ``map_form`` whose
    #: mode is that of a marginal density); :func:`map_density` stores it as
    #: ``posterior.attrs["map_integrated"]``
    integrated: str = ""


#: a checkpoint's verdict: why the sample stops there, or None to sample on
Verdict = Callable[[xr.DataTree], "str | None"]


def run_density(
    density: Density,
    *,
    draws: int | Sequence[int] = D.DRAWS,
    tune: int = D.TUNE,
    chains: int = D.CHAINS,
    random_seed: int | None = D.RANDOM_SEED,
    progress: bool = True,
    target_accept: float | None = None,
    cores: int | None = None,
    until: Verdict | None = None,
    **kwargs: Any,
) -> xr.DataTree:
    """NUTS (nutpie) on a :class:`Density`; same result shape as :func:`run_inference`.

    ``draws`` is the number of draws per chain, or a tuple of checkpoints (strictly
    increasing draws per chain) with ``until``: the sample then stops at the first
    checkpoint ``c`` where ``until(fit)`` returns a reason (a string), ``fit`` being this
    function's result for the first ``c`` draws of every chain; the last checkpoint ends
    it in any case. Each chain is then its own nutpie sampler, seeded by
    :func:`raterstats.nutpie_run.chain_seeds` and paused at each checkpoint until the
    others get there (at most ``cores`` at once; default: all chains side by side). The
    result depends on the seed only: the draws kept are the first ``c`` of each chain,
    the same as those of a run with ``draws=(c,)`` (not those of ``draws=c``, whose
    chains nutpie seeds itself). ``posterior.attrs["checkpoints"]`` records each
    checkpoint's verdict (JSON), ``posterior.attrs["checkpoints_planned"]`` the tuple.

    Examples
    --------
    >>> import numpy as np
    >>> d = Density(1, lambda x: (-0.5 * float(x @ x), -x), lambda x: {"x": x[0]},
    ...             {"x": ()}, {"x": ()}, {}, lambda rng: rng.normal(size=1))
    >>> dt = run_density(d, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> dict(dt.posterior.sizes)
    {'chain': 1, 'draw': 50}
    >>> dt = run_density(d, draws=(20, 50), tune=50, chains=2, random_seed=1,
    ...                  progress=False, until=lambda fit: "enough")
    >>> dict(dt.posterior.sizes), dt.posterior.attrs["checkpoints"]
    ({'chain': 2, 'draw': 20}, '[{"draws": 20, "verdict": "enough"}]')
    """
    from nutpie.compiled_pyfunc import from_pyfunc

    check_arguments(
        *sampler_argument_problems(
            method="nuts",
            draws=draws,
            tune=tune,
            chains=chains,
            random_seed=random_seed,
            sampler="nutpie",
            target_accept=target_accept,
            cores=cores,
            progress=progress,
            options=kwargs,
        ),
        None
        if isinstance(draws, int | np.integer) or until is not None
        else "draws as checkpoints needs until= (the verdict at each checkpoint)",
    )
    seed = resolve_seed(random_seed)
    names = list(density.var_shapes)
    sample_kw = {**(density.sampler_defaults or {}), **kwargs}
    if target_accept is not None:
        sample_kw["target_accept"] = target_accept
    checkpoints = None if isinstance(draws, int | np.integer) else tuple(int(d) for d in draws)
    compiled_c = density.c_logp is not None and density.c_data is not None

    def finish(raw: xr.DataTree, n_draw: int, seconds: float) -> xr.DataTree:
        raw = raw.isel(draw=slice(0, n_draw))
        if not compiled_c:
            out = _finish_nuts(raw, seconds, "nutpie")
            pds = out["posterior"].to_dataset()
            pds = pds.assign_coords(
                {k: np.asarray(v) for k, v in density.coords.items() if k in pds.dims}
            )
            out["posterior"] = xr.DataTree(pds)
        else:
            xs = np.asarray(raw["posterior"].to_dataset()["__x"].values)  # (chain, draw, ndim)
            n_chain = xs.shape[0]
            flat = xs.reshape(-1, xs.shape[-1])
            if density.expand_draws is not None:
                batch = density.expand_draws(flat)
            else:
                expanded = [density.expand(v) for v in flat]
                batch = {k: np.stack([np.asarray(e[k], float) for e in expanded]) for k in names}
            values = {
                k: np.asarray(batch[k], float).reshape(n_chain, n_draw, *density.var_shapes[k])
                for k in names
            }
            rp = raw["posterior"].to_dataset()
            post_ds = (
                assemble_datatree(values, density.var_dims, density.coords)["posterior"]
                .to_dataset()
                .assign_coords(chain=rp["chain"].values, draw=rp["draw"].values)
            )
            out = xr.DataTree()
            out["posterior"] = xr.DataTree(post_ds)
            out["sample_stats"] = xr.DataTree(_clean_stats(raw["sample_stats"].to_dataset()))
            out["posterior"].attrs.update({"sampling_time": seconds, "sampler": "nutpie"})
        out["posterior"].attrs.update(
            {
                "adaptation": str(sample_kw.get("adaptation", "diag")),
                "target_accept": float(sample_kw.get("target_accept", 0.8)),
            }
        )
        return out

    def make_model(model_seed: int) -> Any:
        if compiled_c:
            return nutpie_c_model(density, model_seed)

        def make_logp_fn() -> Callable[..., tuple[float, np.ndarray]]:
            def logp(x: np.ndarray, **shared: Any) -> tuple[float, np.ndarray]:
                return density.logp_grad(x)

            return logp

        def make_expand_fn(seed1: int, seed2: int, chain: int) -> Callable[..., dict[str, Any]]:
            def expand(x: np.ndarray, **shared: Any) -> dict[str, Any]:
                vals = density.expand(x)
                return {n: np.asarray(vals[n], dtype="float64", order="C") for n in names}

            return expand

        def make_initial_point(s: int) -> np.ndarray:
            rng = np.random.default_rng([model_seed, int(s)])
            return np.asarray(density.initial_point(rng), float)

        return from_pyfunc(
            ndim=density.ndim,
            make_logp_fn=make_logp_fn,
            make_expand_fn=make_expand_fn,
            expanded_dtypes=[np.dtype("float64")] * len(names),
            expanded_shapes=[tuple(density.var_shapes[n]) for n in names],
            expanded_names=names,
            coords={k: [str(x) for x in v] for k, v in density.coords.items()},
            dims={n: tuple(density.var_dims[n]) for n in names},
            make_initial_point_fn=make_initial_point,
        )

    t0 = time.perf_counter()
    shared = {"save_warmup": False, **sample_kw}
    if checkpoints is None:
        raw = nutpie_sample(
            make_model(seed),
            draws=int(draws),  # type: ignore[arg-type]  # an int here
            tune=int(tune),
            chains=int(chains),
            cores=_n_cores(chains, cores),
            seed=seed,
            progress_bar=progress,
            **shared,
        )
        assert isinstance(raw, xr.DataTree)  # blocking=True returns the trace
        return finish(raw, int(raw["posterior"].sizes["draw"]), time.perf_counter() - t0)
    assert until is not None  # checked above
    verdict = until

    judged: dict[int, xr.DataTree] = {}  # the fit at each checkpoint, kept if it stops there

    def judge(trace: xr.DataTree, c: int) -> str | None:
        judged.clear()
        judged[c] = finish(trace, c, time.perf_counter() - t0)
        return verdict(judged[c])

    raw, n_draw, record = nutpie_until(
        make_model,
        checkpoints=checkpoints,
        tune=int(tune),
        chains=int(chains),
        seed=seed,
        cores=int(cores) if cores is not None else int(chains),
        verdict=judge,
        progress=progress,  # one line of its own: one bar per chain would garble it
        progress_bar=False,
        **shared,
    )
    seconds = time.perf_counter() - t0
    out = judged[n_draw] if n_draw in judged else finish(raw, n_draw, seconds)
    out["posterior"].attrs["sampling_time"] = seconds
    out["posterior"].attrs["checkpoints"] = json.dumps(record)
    out["posterior"].attrs["checkpoints_planned"] = json.dumps(list(checkpoints))
    return out


def map_density(
    density: Density,
    *,
    random_seed: int | None = D.RANDOM_SEED,
    max_iter: int = 2000,
    tol: float = 1e-9,
) -> xr.DataTree:
    """The mode of a :class:`Density` by L-BFGS on its log density and gradient, in the
    same result shape as ``method="map"`` (``chain=1, draw=1``, ``sample_stats.lp`` and
    ``converged``).

    The mode is taken on the density's unconstrained scale, log-Jacobians of the
    transforms included (as Stan's ``optimize(jacobian=True)``): a hierarchical scale
    parameter then has an interior mode where the mode on the constrained scale collapses
    it to 0. ``posterior.attrs["map_scale"]`` says so. When ``density.map_form`` is set the
    mode is that of the density it returns (``posterior.attrs["map_form"]``; what that
    density integrates out, if anything, in ``["map_integrated"]``). A run that
    does not converge warns (as the PyMC MAP does) and records ``converged = False``.
    ``posterior.attrs`` also hold the optimiser's ``iterations``, its
    ``gradient_evaluations`` (log density + gradient calls) and ``gradient_max_abs``, the
    largest absolute gradient component at the returned point (the optimality check).

    Examples
    --------
    >>> import numpy as np
    >>> d = Density(1, lambda x: (-0.5 * float((x - 2) @ (x - 2)), 2 - x),
    ...             lambda x: {"x": x[0]}, {"x": ()}, {"x": ()}, {},
    ...             lambda rng: rng.normal(size=1))
    >>> round(float(map_density(d).posterior["x"].item()), 6)
    2.0
    """
    from scipy.optimize import minimize

    form = "as sampled"
    if density.map_form is not None:
        density, form = density.map_form(), "map_form"
    seed = resolve_seed(random_seed)
    x0 = np.asarray(density.initial_point(np.random.default_rng([seed, 0])), float)

    def neg(x: np.ndarray) -> tuple[float, np.ndarray]:
        lp, grad = density.logp_grad(x)
        if not np.isfinite(lp):
            return np.inf, np.zeros_like(x)
        return -float(lp), -np.asarray(grad, float)

    t0 = time.perf_counter()
    res = minimize(
        neg,
        x0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": int(max_iter), "ftol": tol, "gtol": 1e-6, "maxcor": 30},
    )
    seconds = time.perf_counter() - t0
    lp = -float(res.fun)
    grad_max = float(np.max(np.abs(res.jac))) if np.size(res.jac) else 0.0
    values = {
        k: np.asarray(v, float).reshape(1, 1, *density.var_shapes[k])
        for k, v in density.expand(np.asarray(res.x, float)).items()
        if k in density.var_shapes
    }
    ok = bool(res.success) and np.isfinite(lp)
    out = assemble_datatree(
        values,
        density.var_dims,
        density.coords,
        {"lp": np.array([[lp]]), "converged": np.array([[ok]])},
    )
    out["posterior"].attrs.update(
        {
            "map_scale": "unconstrained (log-Jacobians included)",
            "map_form": form,
            "optimiser": "L-BFGS-B",
            "iterations": int(res.nit),
            "gradient_evaluations": int(res.nfev),
            "gradient_max_abs": grad_max,
            "sampling_time": seconds,
        }
    )
    if density.integrated:
        out["posterior"].attrs["map_integrated"] = density.integrated
    if not ok:
        _warn_map_failed(str(res.message), lp, stacklevel=3)
    return out


def run_inference(
    model: pm.Model,
    *,
    method: str = "nuts",
    draws: int = D.DRAWS,
    tune: int = D.TUNE,
    chains: int = D.CHAINS,
    random_seed: int | None = D.RANDOM_SEED,
    sampler: str = "nutpie",
    progress: bool = True,
    initial_values: Mapping[str, Any] | None = None,
    target_accept: float | None = None,
    cores: int | None = None,
    **kwargs: Any,
) -> xr.DataTree:
    """Run one inference method on a PyMC model.

    Parameters
    ----------
    model : pm.Model
        Any PyMC model with continuous free variables.
    method : {"nuts", "map", "advi"}
        NUTS draws, posterior mode (``chain=1, draw=1``), or ADVI draws (``chain=1``).
    draws, tune, chains : int
        Draws and tuning steps per chain, and chains (NUTS); draws from the approximation
        (ADVI).
    random_seed : int, optional
        Seed (None: a fresh one).
    sampler : {"nutpie", "pymc", "numpyro"}
        NUTS implementation.
    progress : bool
        Progress bar.
    initial_values : mapping, optional
        Starting values of free variables by name (constrained space).
    target_accept : float, optional
        NUTS target acceptance rate.
    cores : int, optional
        Cores for parallel chains (default all, at most ``chains``).
    **kwargs
        Passed to the engine (e.g. ``n`` ADVI iterations, ``maxdepth`` for nutpie).

    Returns
    -------
    xr.DataTree
        ``posterior`` and ``sample_stats`` groups (ADVI adds ``optimization``).

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> with pm.Model() as m:
    ...     mu = pm.Normal("mu")
    ...     y = pm.Normal("y", mu, 1, observed=np.array([0.5, 1.5]))
    >>> dt = run_inference(m, method="map", random_seed=1, progress=False)
    >>> round(float(dt.posterior["mu"].item()), 3), dict(dt.posterior.sizes)
    (0.667, {'chain': 1, 'draw': 1})
    """
    check_arguments(
        *sampler_argument_problems(
            method=method,
            draws=draws,
            tune=tune,
            chains=chains,
            random_seed=random_seed,
            sampler=sampler,
            target_accept=target_accept,
            cores=cores,
            progress=progress,
            options=kwargs,
        )
    )
    seed = resolve_seed(random_seed)
    if method == "map":
        return _map(model, seed=seed, progress=progress, initial_values=initial_values, **kwargs)
    if method == "advi":
        return _advi(
            model,
            draws=draws,
            seed=seed,
            progress=progress,
            initial_values=initial_values,
            **kwargs,
        )
    common: dict[str, Any] = {
        "draws": int(draws),
        "tune": int(tune),
        "chains": int(chains),
        "seed": seed,
        "progress": progress,
        "initial_values": initial_values,
        "target_accept": target_accept,
        "cores": cores,
    }
    if sampler == "nutpie":
        return _nutpie(model, **common, **kwargs)
    if sampler == "pymc":
        return _pymc_sample(model, nuts_sampler="pymc", **common, **kwargs)
    if sampler == "numpyro":
        missing = [m for m in ("jax", "numpyro") if importlib.util.find_spec(m) is None]
        if missing:
            raise ImportError(
                f"sampler='numpyro' needs {' and '.join(missing)}; install the jax extra: "
                "pip install 'raterstats[jax]'"
            )
        with warnings.catch_warnings():
            # numpyro warns about the number of host devices when chains > devices
            warnings.filterwarnings("ignore", message=".*There are not enough devices.*")
            return _pymc_sample(model, nuts_sampler="numpyro", **common, **kwargs)
    raise ValueError(f"sampler must be one of {list(SAMPLERS)}, not {sampler!r}")


__all__ = [
    "ENGINE_OPTIONS",
    "METHODS",
    "SAMPLERS",
    "Density",
    "assemble_datatree",
    "draws_to_datatree",
    "resolve_seed",
    "run_density",
    "run_inference",
    "sampler_argument_problems",
]
