"""Simulation-based calibration (Talts et al. 2018) of a raterstats model.

:func:`simulation_based_calibration` draws data from the model's prior predictive (a
user's ``simulate(seed) -> (data, truth)``, e.g. :func:`~raterstats.design.prior_simulator`
on the user's own design), fits the model to every replicate and records the rank of each
true parameter value among the posterior draws; with a correct model implementation and
sampler the ranks are uniform. The replicates are independent tasks on
:func:`~raterstats.design.budget.run_tasks` (here, local processes, an executor or a Dask
cluster), each with its own seeds, so the result does not depend on where it ran.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
import xarray as xr
from scipy.stats import chisquare

from raterstats import defaults as D
from raterstats.checks import check_counts
from raterstats.design.budget import run_tasks
from raterstats.models import Method, Model

#: Model.fit keywords that simulation_based_calibration sets itself
_OWN = ("method", "draws", "tune", "chains", "random_seed", "progress")

#: a p-value below this is counted in the summary
P_FLAG = 0.01


def _element_labels(name: str, var: xr.DataArray, full_dims: tuple[Any, ...]) -> list[str]:
    """``name[coord, ...]`` of every element of ``var`` (dims after chain, draw), with the
    coordinates of the dims that a selection made scalar, in the variable's dim order."""
    edims = [d for d in var.dims if d not in ("chain", "draw")]
    values = {
        d: (var[d].values if d in var.coords else np.arange(var.sizes[d])).tolist() for d in edims
    }
    labels = []
    for idx in itertools.product(*(range(var.sizes[d]) for d in edims)):
        at = dict(zip(edims, idx, strict=True))
        parts = []
        for d in full_dims:
            if d in at:
                parts.append(str(values[d][at[d]]))
            elif d in var.coords and var.coords[d].ndim == 0:
                parts.append(str(var.coords[d].item()))
        labels.append(f"{name}[{', '.join(parts)}]" if parts else name)
    return labels


def _draws_and_truth(
    post: xr.Dataset, name: str, value: Any
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(S, E)`` posterior draws and ``(E,)`` true values of parameter ``name``, and the
    element labels. A DataArray truth selects the posterior at its coordinates (a subset
    of elements); an array must have the variable's shape."""
    if name not in post:
        raise ValueError(
            f"simulation_based_calibration: the fit has no posterior variable {name!r}; it "
            f"has {sorted(str(v) for v in post.data_vars)}"
        )
    var = post[name]
    full_dims = tuple(var.dims[2:])
    if isinstance(value, xr.DataArray):
        unknown = [d for d in value.dims if d not in full_dims]
        if unknown:
            raise ValueError(
                f"simulation_based_calibration: truth[{name!r}] has dims {unknown} that the "
                f"posterior variable (dims {list(full_dims)}) does not have"
            )
        sel = {c: value[c].values for c in value.coords if c in full_dims}
        try:
            var = var.sel(sel)
        except KeyError as err:
            raise ValueError(
                f"simulation_based_calibration: truth[{name!r}] names coordinates the fit "
                f"does not have: {err}"
            ) from err
        left = [str(d) for d in var.dims if d not in ("chain", "draw")]
        if sorted(left) != sorted(str(d) for d in value.dims):
            raise ValueError(
                f"simulation_based_calibration: truth[{name!r}] has dims {list(value.dims)}; "
                f"select the posterior dims {left} by coordinate or give them"
            )
        var = var.transpose("chain", "draw", *value.dims)
        true = np.asarray(value.values, dtype=float)
    else:
        true = np.asarray(value, dtype=float)
        if true.shape != var.shape[2:]:
            raise ValueError(
                f"simulation_based_calibration: truth[{name!r}] has shape {true.shape}; the "
                f"posterior variable has {var.shape[2:]} (dims {list(full_dims)})"
            )
    if true.shape != var.shape[2:]:
        raise ValueError(
            f"simulation_based_calibration: truth[{name!r}] has shape {true.shape}, its "
            f"selection of the posterior {var.shape[2:]}"
        )
    draws = var.values.reshape(var.shape[0] * var.shape[1], -1)
    return draws, true.reshape(-1), _element_labels(name, var, full_dims)


def calibration_task(task: dict[str, Any]) -> dict[str, Any]:
    """One replicate of :func:`simulation_based_calibration` (module level, so that
    process pools and Dask workers can run it): simulate, fit, rank.

    Parameters
    ----------
    task : dict
        ``model``, ``simulate``, ``parameters`` (None: every parameter of the truth),
        ``fit`` (Model.fit keywords), ``thin``, ``seeds`` (simulation, fit, ties) and
        ``id``.

    Returns
    -------
    dict
        ``id``; ``error`` (``""``, or the failed fit's exception in words); ``ranks``
        ``(E,)`` (number of thinned draws below the truth, ties broken at random),
        ``labels`` and ``names`` (parameter of each element) and ``n_draws``; ``healthy``
        (the fit passed its checks), ``n_divergent`` and ``warnings`` (distinct messages).

    Examples
    --------
    >>> import numpy as np, polars as pl, xarray as xr
    >>> from raterstats import DawidSkene, read_ratings
    >>> from raterstats.design import prior_simulator
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a", "b", "b"], "rater": ["x", "y"] * 2,
    ...                                "rating": ["1", "2", "2", "2"]}))
    >>> m = DawidSkene(confusion_prior="fixed")
    >>> task = {"model": m, "simulate": prior_simulator(m, r),
    ...         "parameters": ["prevalence"], "fit": {"method": "em"}, "thin": 1,
    ...         "seeds": (1, 2, 3), "id": 0}
    >>> out = calibration_task(task)
    >>> out["labels"], out["n_draws"], out["error"]
    (['prevalence[default, 0]', 'prevalence[default, 1]'], 1, '')
    """
    sim_seed, fit_seed, tie_seed = (int(s) for s in task["seeds"])
    data, truth = task["simulate"](sim_seed)
    if not isinstance(truth, Mapping):
        raise TypeError(
            "simulation_based_calibration: simulate(seed) must return (data, truth) with truth "
            f"a mapping {{parameter: value}}, not {type(truth).__name__}"
        )
    names = list(truth) if task["parameters"] is None else list(task["parameters"])
    missing = [n for n in names if n not in truth]
    if missing:
        raise ValueError(
            f"simulation_based_calibration: the simulator's truth has no {missing}; it has "
            f"{sorted(truth)}"
        )
    out: dict[str, Any] = {"id": task["id"], "error": "", "healthy": False, "n_divergent": 0}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            dt = task["model"].fit(data, random_seed=fit_seed, progress=False, **task["fit"])
        except Exception as err:  # a failed fit is counted and reported, never dropped
            out.update(error=f"{type(err).__name__}: {err}", warnings="")
            return out
    out["warnings"] = "; ".join(dict.fromkeys(str(w.message).splitlines()[0] for w in caught))
    out["healthy"] = bool(int(dt.attrs.get("health_ok", 0)))
    if "sample_stats" in dt.children and "diverging" in dt["sample_stats"]:
        out["n_divergent"] = int(dt["sample_stats"]["diverging"].values.sum())
    post = dt["posterior"].to_dataset()
    rng = np.random.default_rng(tie_seed)
    ranks, labels, owners = [], [], []
    n_draws = 0
    for name in names:
        draws, true, lab = _draws_and_truth(post, name, truth[name])
        draws = draws[:: task["thin"]]
        n_draws = draws.shape[0]
        below = (draws < true).sum(axis=0)
        ties = (draws == true).sum(axis=0)
        ranks.append(below + rng.integers(0, ties + 1))
        labels += lab
        owners += [name] * len(lab)
    out.update(ranks=np.concatenate(ranks), labels=labels, names=owners, n_draws=n_draws)
    return out


def _pvalues(ranks: np.ndarray, n_draws: int, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Chi-square p-value of uniform ranks ``0..n_draws`` per column of ``ranks``
    (replicate, element; NaN rows skipped) in ``n_bins`` bins, and the bin counts; the
    expected count of a bin is proportional to the rank values it holds."""
    width = np.bincount(np.arange(n_draws + 1) * n_bins // (n_draws + 1), minlength=n_bins)
    counts = np.zeros((ranks.shape[1], n_bins), dtype=np.int64)
    p = np.full(ranks.shape[1], np.nan)
    ok = ~np.isnan(ranks).any(axis=1)
    n = int(ok.sum())
    for e in range(ranks.shape[1]):
        bins = ranks[ok, e].astype(np.int64) * n_bins // (n_draws + 1)
        counts[e] = np.bincount(bins, minlength=n_bins)
        if n >= 2:
            p[e] = float(chisquare(counts[e], n * width / width.sum()).pvalue)
    return p, counts


def simulation_based_calibration(
    model: Model,
    simulate: Callable[[int], tuple[Any, Mapping[str, Any]]],
    *,
    parameters: Sequence[str] | None = None,
    n_replicates: int = 100,
    method: Method = "nuts",
    draws: int = D.DRAWS,
    tune: int = D.TUNE,
    chains: int = D.CHAINS,
    thin: int = 1,
    n_bins: int | None = None,
    fit_options: Mapping[str, Any] | None = None,
    max_workers: int | None = 1,
    executor: Executor | None = None,
    client: Any = None,
    random_seed: int = D.RANDOM_SEED,
) -> xr.Dataset:
    """Simulation-based calibration: ranks of true parameters among posterior draws.

    For each of ``n_replicates`` replicates, ``simulate(seed)`` returns data and the
    parameter values they were simulated from (drawn from the model's prior), ``model`` is
    fitted to the data, and for every element of every parameter the rank of the true
    value among the (thinned) posterior draws is recorded: the number of draws below it,
    ties broken at random (Talts et al. 2018). With a correct implementation of the model
    and a sampler that explores the posterior the ranks are uniform on ``0..n_draws``;
    a chi-square test of uniformity per element (``n_bins`` bins) summarises each.

    Parameters
    ----------
    model : Model
        The model to calibrate (a raterstats model instance, e.g.
        ``DawidSkene(confusion_prior="fixed")``; a model whose prior is learnt from the
        data has no prior to simulate from).
    simulate : callable
        ``simulate(seed: int) -> (data, truth)``: data the model fits (Ratings or
        Comparisons) and ``{parameter: value}``, the value an array of the posterior
        variable's shape or an ``xr.DataArray`` with its dims (or a subset of its
        elements, selected by coordinate). Draw the parameters from the model's priors,
        e.g. :func:`~raterstats.design.prior_simulator`. A module-level function or a
        picklable object when running on processes or a cluster.
    parameters : sequence of str, optional
        The parameters to rank (default: every one of the truth).
    n_replicates : int
        Simulated data sets (at least 2).
    method : {"nuts", "map", "advi", "em"}
        How each replicate is fitted. SBC needs posterior draws: a point estimate
        (``"map"``, ``"em"``) gives ranks 0 / 1, which test only whether the estimate is
        median-unbiased (said in ``attrs["uncertainty_note"]``).
    draws, tune, chains : int
        NUTS settings of each fit (``draws`` also ADVI's).
    thin : int
        Keep every ``thin``-th posterior draw (chains stacked), to make the draws
        closer to independent.
    n_bins : int, optional
        Bins of the uniformity test (default: 10, fewer when there are fewer rank values
        or fewer than 5 fits per bin).
    fit_options : mapping, optional
        Further :meth:`Model.fit` keywords (default ``log_likelihood=False``).
    max_workers, executor, client
        Where the replicates run (:func:`~raterstats.design.budget.run_tasks`): here
        (``max_workers=1``, the default), on local processes, a ``concurrent.futures``
        executor or a Dask cluster (``pip install raterstats[dask]``; the model and
        simulator are scattered once).
    random_seed : int
        Seed; replicate ``i`` simulates, fits and breaks ties with its own seeds, so the
        result does not depend on where it ran.

    Returns
    -------
    xr.Dataset
        ``rank`` (replicate, parameter; NaN for a failed fit), ``pvalue`` (parameter),
        ``rank_histogram`` (parameter, bin), and per replicate ``fit_failed``,
        ``fit_error`` (the exception in words), ``fit_healthy`` (the fit passed its own
        checks), ``n_divergent`` and ``fit_warnings``. Coordinates: ``parameter`` (labels
        ``name[coordinates]`` in the user's ids), ``variable`` (each element's
        parameter), ``seed`` (each replicate's simulation seed). ``attrs``: ``n_draws``
        (ranks lie in ``0..n_draws``), ``n_bins``, ``n_failed``, ``n_unhealthy``,
        ``summary`` (a sentence), ``fit_warning`` when fits failed (they are never
        dropped silently: counted, and NaN in ``rank``), the fit settings and seed.

    Raises
    ------
    ValueError
        Bad arguments, a truth that does not match the fit's posterior, or labels that
        change between replicates.

    References
    ----------
    Talts, S., Betancourt, M., Simpson, D., Vehtari, A., & Gelman, A. (2018). Validating
    Bayesian inference algorithms with simulation-based calibration. arXiv:1804.06788.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import DawidSkene, read_ratings
    >>> from raterstats.design import prior_simulator
    >>> r = read_ratings(pl.DataFrame({"item": [f"i{k}" for k in range(10) for _ in "xyz"],
    ...     "rater": list("xyz") * 10, "rating": ["1", "2"] * 15}))
    >>> model = DawidSkene(confusion_prior="fixed")
    >>> ds = simulation_based_calibration(model, prior_simulator(model, r),
    ...     parameters=["prevalence"], n_replicates=4, method="em", random_seed=1)
    >>> ds["rank"].dims, int(ds.attrs["n_failed"])
    (('replicate', 'parameter'), 0)
    """
    what = "simulation_based_calibration"
    check_counts(where=what, n_replicates=(n_replicates, 2), thin=(thin, 1))
    if not isinstance(model, Model):
        raise TypeError(f"{what}: model must be a raterstats model instance, not {type(model)}")
    if not callable(simulate):
        raise TypeError(f"{what}: simulate must be a callable simulate(seed) -> (data, truth)")
    if parameters is not None:
        if isinstance(parameters, str) or not all(isinstance(p, str) for p in parameters):
            raise TypeError(f"{what}: parameters must be a list of names, not {parameters!r}")
        if not parameters:
            raise ValueError(f"{what}: parameters is empty")
    opts = {"log_likelihood": False, **dict(fit_options or {})}
    clash = sorted(set(opts) & set(_OWN))
    if clash:
        raise ValueError(f"{what}: pass {clash} as arguments of {what}, not in fit_options")
    fit = {"method": method, "draws": draws, "tune": tune, "chains": chains, **opts}
    state = np.random.SeedSequence(random_seed).generate_state(3 * n_replicates)
    seeds: list[list[int]] = state.reshape(n_replicates, 3).tolist()
    plist = None if parameters is None else list(parameters)
    tasks = [
        {"model": model, "simulate": simulate, "parameters": plist, "fit": fit, "thin": thin,
         "seeds": seeds[i], "id": i}
        for i in range(n_replicates)
    ]  # fmt: skip
    results = sorted(
        run_tasks(calibration_task, tasks, max_workers=max_workers, executor=executor,
                  client=client),
        key=lambda r: r["id"],
    )  # fmt: skip
    return _assemble(results, seeds, n_bins, fit, thin, random_seed, model, what)


def _assemble(
    results: list[dict[str, Any]],
    seeds: list[list[int]],
    n_bins: int | None,
    fit: dict[str, Any],
    thin: int,
    random_seed: int,
    model: Model,
    what: str,
) -> xr.Dataset:
    ok = [r for r in results if not r["error"]]
    n_rep, n_ok = len(results), len(ok)
    if not ok:
        raise ValueError(
            f"{what}: every one of the {n_rep} fits failed; the first: {results[0]['error']}"
        )
    labels, names, n_draws = ok[0]["labels"], ok[0]["names"], ok[0]["n_draws"]
    for r in ok[1:]:
        if r["labels"] != labels or r["n_draws"] != n_draws:
            raise ValueError(
                f"{what}: replicate {r['id']} has other parameter elements or draws than "
                f"replicate {ok[0]['id']}; the simulator must keep the design fixed"
            )
    ranks = np.full((n_rep, len(labels)), np.nan)
    for r in ok:
        ranks[r["id"]] = r["ranks"]
    if n_bins is None:
        n_bins = max(2, min(10, n_draws + 1, n_ok // 5))
    if int(n_bins) != n_bins or not 2 <= n_bins <= n_draws + 1:
        raise ValueError(f"{what}: n_bins must lie in 2..{n_draws + 1} (rank values), not {n_bins}")
    p, counts = _pvalues(ranks, n_draws, int(n_bins))
    failed = np.array([bool(r["error"]) for r in results])
    healthy = np.array([bool(r["healthy"]) for r in results])
    low = int(np.sum(p < P_FLAG))
    worst = int(np.nanargmin(p)) if np.isfinite(p).any() else None
    summary = (
        f"{n_ok} of {n_rep} fits; {len(labels)} parameter elements ranked among {n_draws} "
        f"draws; {low} with a uniformity p-value below {P_FLAG}"
        + (f"; smallest p = {p[worst]:.3g} ({labels[worst]})" if worst is not None else "")
    )
    attrs: dict[str, Any] = {
        "analysis": "simulation_based_calibration",
        "model": model.name,
        "n_replicates": n_rep,
        "n_failed": int(failed.sum()),
        "n_unhealthy": int((~healthy & ~failed).sum()),
        "n_draws": int(n_draws),
        "n_bins": int(n_bins),
        "thin": int(thin),
        "random_seed": int(random_seed),
        "method": str(fit["method"]),
        "draws": int(fit["draws"]),
        "tune": int(fit["tune"]),
        "chains": int(fit["chains"]),
        "fit_options": repr({k: v for k, v in fit.items() if k not in _OWN}),
        "summary": summary,
    }
    if failed.any():
        first = next(r for r in results if r["error"])
        attrs["fit_warning"] = (
            f"{int(failed.sum())} of {n_rep} fits failed (rank NaN, left out of the p-values); "
            f"first: replicate {first['id']}: {first['error']}"
        )
    if n_draws <= 1:
        attrs["uncertainty_note"] = (
            f"method={fit['method']!r} gives one estimate per fit: ranks are 0 / 1 and the "
            "p-values test only whether the estimate is median-unbiased, not calibration"
        )
    return xr.Dataset(
        {
            "rank": (("replicate", "parameter"), ranks),
            "pvalue": ("parameter", p),
            "rank_histogram": (("parameter", "bin"), counts),
            "fit_failed": ("replicate", failed),
            "fit_error": ("replicate", [r["error"] for r in results]),
            "fit_healthy": ("replicate", healthy),
            "n_divergent": ("replicate", [int(r["n_divergent"]) for r in results]),
            "fit_warnings": ("replicate", [r.get("warnings", "") for r in results]),
        },
        coords={
            "replicate": np.arange(n_rep),
            "parameter": labels,
            "variable": ("parameter", names),
            "seed": ("replicate", [int(s[0]) for s in seeds]),
            "bin": np.arange(int(n_bins)),
        },
        attrs=attrs,
    )


__all__ = ["calibration_task", "simulation_based_calibration"]
