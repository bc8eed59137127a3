"""The health of a fit, computed once after fitting and carried by everything made from it.

:meth:`raterstats.models.Model.fit` stamps every fit with two attributes: ``health_ok``
(1 or 0) and ``health`` (a short multi-line text). For NUTS the text gives the
divergences, the largest R-hat, the smallest bulk and tail ESS, how many parameters fail
and the worst of them grouped by variable (one line per variable, never one per scalar),
and the model's own checks (label switching of latent-class models), tree depth and
E-BFMI; a fit that fails emits one :class:`ConvergenceWarning` with that text. For MAP,
EM and ADVI the text says that the fit is a point estimate (or an approximation) without
sampling diagnostics or posterior uncertainty.

:func:`fit_health` reads the attributes back (computing them for fits saved before they
existed), and :func:`flag_result` puts the contract attributes on a result computed from a
fit: ``fit_warning`` (only when the fit fails its checks: one sentence naming what failed)
and ``uncertainty_note`` (when the fit is a point estimate or an approximation).
:func:`raterstats.diagnostics.diagnose` is built on the same checks
(:func:`parameter_checks`, :func:`variable_lines`).
"""

from __future__ import annotations

import itertools
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats.defaults import ci_prob
from raterstats.lazy import LazyModule

if TYPE_CHECKING:
    import arviz_stats as azs
else:
    azs = LazyModule("arviz_stats")

#: a parameter fails when its rank-normalised split R-hat is above this
RHAT_MAX = 1.01
#: ... or its bulk or tail effective sample size is below this
ESS_MIN = 400.0
#: a chain fails when its estimated Bayesian fraction of missing information is below this
EBFMI_MIN = 0.3
#: variables listed in a fit's health text (``diagnose`` lists them all)
WORST_SHOWN = 5

#: standard-normal auxiliaries of non-centred parameterisations: not reported parameters
AUXILIARY = frozenset(
    {
        "rater_z",
        "cell_z",
        "confusion_z",
        "confusion_logit_centred",
        "rater_effect_basis",
        "cell_effect_basis",
    }
)

_TABLE_SCHEMA = {
    "variable": pl.String,
    "index": pl.String,
    "rhat": pl.Float64,
    "ess_bulk": pl.Float64,
    "ess_tail": pl.Float64,
    "ok": pl.Boolean,
}

_POINT = {
    "map": "MAP point estimate (the posterior mode)",
    "em": "EM point estimate (the posterior mode by expectation-maximisation)",
}
_ARTICLE = {"map": "a", "em": "an"}

#: fit methods that sample the posterior by MCMC (R-hat and ESS apply); divergences, tree
#: depth and E-BFMI are NUTS's own and do not apply to a Gibbs sampler
MCMC_METHODS = ("nuts", "gibbs")


class ConvergenceWarning(UserWarning):
    """The sampler did not converge (R-hat, ESS, divergences, E-BFMI or label switching)."""


@dataclass(frozen=True)
class Health:
    """The health of a fit: whether it passed its checks, and what they found in words.

    ``lines[0]`` is the headline (method, chains x draws, pass or fail and the key
    numbers); the other lines list the worst variables and the other problems.

    Examples
    --------
    >>> h = Health(ok=True, method="em", lines=("EM point estimate",))
    >>> str(h)
    'EM point estimate'
    """

    ok: bool
    method: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The lines, one per line."""
        return "\n".join(self.lines)

    def __str__(self) -> str:
        return self.text

    @property
    def point_estimate(self) -> bool:
        """Whether the fit is a point estimate (MAP or EM: no posterior uncertainty)."""
        return self.method in _POINT

    def fit_warning(self) -> str | None:
        """The ``fit_warning`` of a result computed from this fit (None when it is ok)."""
        if self.ok:
            return None
        checks = "convergence checks" if self.method in MCMC_METHODS else "checks"
        return (
            f"computed from a fit that failed its {checks}, not to be trusted until a refit "
            f"passes: {self.lines[0]}"
        )

    def uncertainty_note(self) -> str | None:
        """The default ``uncertainty_note`` of a result computed from this fit (None for a
        posterior sample)."""
        if self.point_estimate:
            return (
                f"computed from {_ARTICLE[self.method]} {_POINT[self.method]}: there is no "
                "posterior uncertainty; any interval shown is not a posterior interval"
            )
        if self.method == "advi":
            return (
                "computed from an ADVI (mean-field variational) approximation: its intervals "
                "are the approximation's, which tend to understate posterior uncertainty"
            )
        return None


@dataclass(frozen=True)
class ParameterChecks:
    """R-hat and ESS per scalar parameter and the sampler statistics of a NUTS fit.

    ``table`` has one row per scalar (``variable``, ``index``, ``rhat``, ``ess_bulk``,
    ``ess_tail``, ``ok``); ``failing`` names the failing scalars
    (``"competence[a03, safety, fine]"``).
    """

    n_chains: int
    n_draws: int
    table: pl.DataFrame
    failing: tuple[str, ...]
    divergences: int
    max_treedepth_hits: int
    ebfmi: tuple[float, ...]


def reported_variables(dt: xr.DataTree) -> list[str]:
    """The posterior variables whose convergence is checked: all but the standard-normal
    auxiliaries of non-centred parameterisations (:data:`AUXILIARY`).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> post = xr.Dataset({"a": (("chain", "draw"), np.zeros((1, 2))),
    ...                    "rater_z": (("chain", "draw"), np.zeros((1, 2)))})
    >>> reported_variables(xr.DataTree(children={"posterior": xr.DataTree(post)}))
    ['a']
    """
    post = dt["posterior"].to_dataset()
    return [str(v) for v in post.data_vars if v not in AUXILIARY]


def _labels(post: xr.Dataset, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Variable and index label of every scalar parameter, in the order
    :func:`parameter_checks` stacks them (each variable's other dims, row-major)."""
    vnames, idx = [], []
    for v in names:
        da = post[v]
        other = [d for d in da.dims if d not in ("chain", "draw")]
        coord_str = [[str(c) for c in da[d].values] for d in other]
        for parts in itertools.product(*coord_str):
            vnames.append(v)
            idx.append(", ".join(parts))
    return vnames, idx


def _rhat_ess(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank-normalised split R-hat, bulk ESS and tail ESS (at ArviZ's ``ci_prob``, as
    ``arviz_stats.ess(method="tail")``) of each row of a ``(parameter, chain, draw)`` array:
    :func:`raterstats.convergence.rhat_ess`, arviz-stats' statistics computed for all
    parameters at once (arviz-stats loops over them in Python: 20-30 s for the 6,000
    parameters of an ordinal fit)."""
    from raterstats.convergence import rhat_ess

    return rhat_ess(flat, ci_prob())


def parameter_checks(
    dt: xr.DataTree,
    *,
    var_names: Sequence[str] | None = None,
    rhat_max: float = RHAT_MAX,
    ess_min: float = ESS_MIN,
) -> ParameterChecks:
    """R-hat, bulk and tail ESS (arviz-stats' array functions, one call each on every
    scalar parameter stacked into one ``(parameter, chain, draw)`` array) of a NUTS fit,
    and its divergences, tree-depth hits and E-BFMI per chain.

    A parameter that is constant over all draws (padding of categories absent from a
    dimension) is not counted as failing.

    Parameters
    ----------
    dt : xr.DataTree
        A fit with at least 4 draws per chain.
    var_names : sequence of str, optional
        Variables to check (default :func:`reported_variables`).
    rhat_max, ess_min : float
        Thresholds.

    Returns
    -------
    ParameterChecks

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> rng = np.random.default_rng(0)
    >>> post = xr.Dataset({"mu": (("chain", "draw"), rng.normal(size=(2, 500)))})
    >>> c = parameter_checks(xr.DataTree(children={"posterior": xr.DataTree(post)}))
    >>> c.failing, c.divergences
    ((), 0)
    """
    post = dt["posterior"].to_dataset()
    names = list(var_names) if var_names is not None else reported_variables(dt)
    missing = [v for v in names if v not in post]
    if missing:
        raise KeyError(f"no posterior variables {missing}; present: {list(post.data_vars)}")
    n_chain, n_draw = int(post.sizes["chain"]), int(post.sizes["draw"])
    if n_draw < 4:
        raise ValueError(f"{n_draw} draw(s) per chain: too few to check convergence")
    parts: list[np.ndarray] = []
    for v in names:
        other = [d for d in post[v].dims if d not in ("chain", "draw")]
        arr = post[v].transpose("chain", "draw", *other).values
        parts.append(np.moveaxis(arr.reshape(n_chain, n_draw, -1), -1, 0))
    stacked = np.concatenate(parts, axis=0).astype(float, copy=False)
    r, eb, et = _rhat_ess(stacked)
    vnames, idx = _labels(post, names)
    const = np.ptp(stacked.reshape(stacked.shape[0], -1), axis=1) == 0.0
    bad = ~const & (~(r <= rhat_max) | ~(eb >= ess_min) | ~(et >= ess_min))
    table = pl.DataFrame(
        {"variable": vnames, "index": idx, "rhat": r, "ess_bulk": eb, "ess_tail": et, "ok": ~bad},
        schema=_TABLE_SCHEMA,
    )
    failing = tuple(f"{v}[{i}]" if i else v for v, i, b in zip(vnames, idx, bad, strict=True) if b)
    ss = dt["sample_stats"].to_dataset() if "sample_stats" in dt.children else xr.Dataset()
    n_div = int(ss["diverging"].sum()) if "diverging" in ss else 0
    n_tree = int(ss["reached_max_treedepth"].sum()) if "reached_max_treedepth" in ss else 0
    ebfmi: tuple[float, ...] = ()
    if "energy" in ss:
        ebfmi = tuple(float(x) for x in np.atleast_1d(azs.bfmi(ss["energy"]).values))
    return ParameterChecks(n_chain, n_draw, table, failing, n_div, n_tree, ebfmi)


def empty_parameter_table() -> pl.DataFrame:
    """The parameter table of a fit without sampling diagnostics (no rows)."""
    return pl.DataFrame(schema=_TABLE_SCHEMA)


def sampler_problems(
    checks: ParameterChecks, *, ebfmi_min: float = EBFMI_MIN, divergences: bool = True
) -> list[str]:
    """Divergences (unless ``divergences=False``), maximum-tree-depth hits and low E-BFMI,
    each in words (empty: none)."""
    out = []
    if checks.divergences and divergences:
        n = checks.n_chains * checks.n_draws
        out.append(f"{checks.divergences} divergent transition(s) of {n}")
    if checks.max_treedepth_hits:
        out.append(f"{checks.max_treedepth_hits} transition(s) hit the maximum tree depth")
    low = [i for i, e in enumerate(checks.ebfmi) if e < ebfmi_min]
    if low:
        out.append(f"E-BFMI below {ebfmi_min:g} in chain(s) {low}")
    return out


def _badness(t: pl.DataFrame, rhat_max: float, ess_min: float) -> pl.Expr:
    """How far a scalar is from passing (1: at a threshold; NaN R-hat is the worst)."""
    rhat = ((pl.col("rhat") - 1.0) / (rhat_max - 1.0)).fill_nan(float("inf"))
    ess_b = (ess_min / pl.col("ess_bulk")).fill_nan(float("inf"))
    ess_t = (ess_min / pl.col("ess_tail")).fill_nan(float("inf"))
    return pl.max_horizontal(rhat, ess_b, ess_t).alias("badness")


def variable_lines(
    table: pl.DataFrame,
    *,
    rhat_max: float = RHAT_MAX,
    ess_min: float = ESS_MIN,
    limit: int | None = None,
) -> list[str]:
    """One line per variable with failing scalars, worst variable first: how many of its
    scalars fail and the worst one's R-hat and ESS (a scalar variable: its own numbers).

    Parameters
    ----------
    table : pl.DataFrame
        :attr:`ParameterChecks.table`.
    rhat_max, ess_min : float
        The thresholds (they rank how far each scalar is from passing).
    limit : int, optional
        At most this many variables, then one line saying how many more fail.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"variable": ["s", "b", "b"], "index": ["", "x", "y"],
    ...                   "rhat": [1.02, 1.0, 1.05], "ess_bulk": [300.0, 900.0, 50.0],
    ...                   "ess_tail": [500.0, 900.0, 80.0], "ok": [False, True, False]})
    >>> for line in variable_lines(t):
    ...     print(line)
    b (1 of 2 fail): worst [y] R-hat 1.050, bulk ESS 50, tail ESS 80
    s: R-hat 1.020, bulk ESS 300, tail ESS 500
    """
    if table.height == 0:
        return []
    scored = table.with_columns(_badness(table, rhat_max, ess_min))
    counts = scored.group_by("variable", maintain_order=True).agg(
        pl.len().alias("n"), (~pl.col("ok")).sum().alias("n_fail")
    )
    worst = (
        scored.filter(~pl.col("ok"))
        .sort("badness", descending=True, nulls_last=True)
        .unique("variable", keep="first", maintain_order=True)
        .join(counts, on="variable")
        .sort("badness", descending=True, nulls_last=True)
    )
    lines = []
    for row in worst.iter_rows(named=True):
        rhat = "n/a" if np.isnan(row["rhat"]) else f"{row['rhat']:.3f}"
        nums = f"R-hat {rhat}, bulk ESS {row['ess_bulk']:.0f}, tail ESS {row['ess_tail']:.0f}"
        if row["n"] == 1 and not row["index"]:
            lines.append(f"{row['variable']}: {nums}")
        else:
            lines.append(
                f"{row['variable']} ({row['n_fail']} of {row['n']} fail): "
                f"worst [{row['index']}] {nums}"
            )
    if limit is not None and len(lines) > limit:
        rest = len(lines) - limit
        lines = [*lines[:limit], f"... and {rest} more variable(s) (diagnose(fit) lists them)"]
    return lines


def assess_fit(
    dt: xr.DataTree,
    *,
    model_problems: Sequence[str] = (),
    rhat_max: float = RHAT_MAX,
    ess_min: float = ESS_MIN,
    ebfmi_min: float = EBFMI_MIN,
) -> Health:
    """Compute the health of a fit (what :meth:`~raterstats.models.Model.fit` stamps).

    Parameters
    ----------
    dt : xr.DataTree
        A fit (``attrs["method"]``: ``"nuts"`` when absent).
    model_problems : sequence of str
        Problems the model's own checks found, in words: label switching of a sampled fit,
        or a problem of the estimates whatever the method (GLAD's adversarial labelling);
        a point estimate or an approximation with one fails too.
    rhat_max, ess_min, ebfmi_min : float
        Thresholds.

    Returns
    -------
    Health

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> post = xr.Dataset({"mu": (("chain", "draw"), np.zeros((1, 1)))})
    >>> dt = xr.DataTree(children={"posterior": xr.DataTree(post)})
    >>> dt.attrs["method"] = "map"
    >>> h = assess_fit(dt)
    >>> h.ok, h.lines[0].startswith("MAP point estimate")
    (True, True)
    """
    method = str(dt.attrs.get("method", "nuts"))
    post = dt["posterior"].to_dataset()
    n_chain, n_draw = int(post.sizes["chain"]), int(post.sizes["draw"])
    stats = dt["sample_stats"].to_dataset() if "sample_stats" in dt.children else None
    optimiser_stopped = (  # a MAP or ADVI optimiser that did not converge
        method in ("map", "advi")
        and stats is not None
        and "converged" in stats
        and not bool(np.all(stats["converged"].values))
    )
    if optimiser_stopped:
        what = _POINT.get(method, f"{method.upper()} approximation")
        return Health(
            False,
            method,
            (
                f"{what} failed its check: the optimiser did not converge, so the values "
                "are where it stopped, not the optimum",
                "no posterior sampling either: "
                + (
                    "no posterior uncertainty"
                    if method in _POINT
                    else "its spread is the approximation's, which tends to understate "
                    "posterior uncertainty"
                )
                + "; use method='nuts' for posterior statements",
            ),
        )
    if model_problems and method not in MCMC_METHODS:  # e.g. GLAD's adversarial labelling
        what = _POINT.get(method, f"{method.upper()} approximation")
        return Health(
            False,
            method,
            (
                f"{what} failed the model's own checks: {'; '.join(model_problems)}",
                "results computed from this fit are flagged",
            ),
        )
    if method in _POINT:
        return Health(
            True,
            method,
            (
                f"{_POINT[method]}: no posterior sampling, so no convergence diagnostics and "
                "no posterior uncertainty; intervals and rank probabilities computed from it "
                "are not posterior statements",
            ),
        )
    if method not in MCMC_METHODS:
        return Health(
            True,
            method,
            (
                f"{method.upper()} approximation ({n_draw} draws of a mean-field variational "
                "approximation): no sampling diagnostics; its spread is the approximation's, "
                "which tends to understate posterior uncertainty",
            ),
        )
    nuts = method == "nuts"
    where = f"{'NUTS' if nuts else 'Gibbs'} ({n_chain} chain(s) x {n_draw} draws)"
    # Gibbs draws are never rejected: divergences and tree depth do not apply
    no_div = "no divergences" if nuts else "divergences not applicable (Gibbs sampler)"
    if n_draw < 4:
        return Health(
            False, method, (f"{where} failed its convergence checks: too few draws to check",)
        )
    checks = parameter_checks(dt, rhat_max=rhat_max, ess_min=ess_min)
    # R-hat is undefined (NaN) for constant padding entries and with one chain
    t = checks.table
    r = t["rhat"].to_numpy()
    r = r[~np.isnan(r)]
    eb, et = (t[c].to_numpy() for c in ("ess_bulk", "ess_tail"))
    eb, et = eb[~np.isnan(eb)], et[~np.isnan(et)]
    nums = (
        f"max R-hat {f'{np.max(r):.3f}' if r.size else 'n/a'}, "
        f"min bulk ESS {f'{np.min(eb):.0f}' if eb.size else 'n/a'}, "
        f"min tail ESS {f'{np.min(et):.0f}' if et.size else 'n/a'}"
    )
    problems = [
        *sampler_problems(checks, ebfmi_min=ebfmi_min, divergences=False),
        *model_problems,
    ]
    if n_chain < 2:
        problems.insert(0, "one chain: R-hat needs two or more chains, so mixing is unchecked")
    n_fail, n_all = len(checks.failing), checks.table.height
    if not problems and not n_fail and not checks.divergences:
        return Health(
            True,
            method,
            (
                f"{where} passed its convergence checks: {no_div}, {nums} "
                f"(R-hat <= {rhat_max:g}, ESS >= {ess_min:g})",
            ),
        )
    parts = []
    if checks.divergences:
        parts.append(f"{checks.divergences} divergent transition(s)")
    if n_fail:
        parts.append(
            f"{n_fail} of {n_all} parameters fail R-hat <= {rhat_max:g} or ESS >= {ess_min:g}"
        )
    if problems:
        parts.append(f"{len(problems)} other problem(s) listed below")
    lines = [f"{where} failed its convergence checks: {'; '.join(parts)} ({nums})"]
    worst = variable_lines(checks.table, rhat_max=rhat_max, ess_min=ess_min, limit=WORST_SHOWN)
    if worst:
        lines.append("worst parameters, by variable:")
        lines += [f"  {w}" for w in worst]
    lines += [f"- {p}" for p in problems]
    lines.append(
        "results computed from this fit are flagged; refit with more draws and tuning "
        + ("(a higher target_accept against divergences)" if nuts else "(or a larger thin)")
        + " until diagnose(fit) passes"
    )
    return Health(False, method, tuple(lines))


def checkpoints_line(attrs: Mapping[str, Any]) -> str:
    """The line of a fit's health that says where a sample with checkpoints stopped and
    why (``posterior.attrs`` of :func:`raterstats.inference.run_density`).

    Examples
    --------
    >>> checkpoints_line({"checkpoints_planned": "[1000, 1500, 4000]", "checkpoints":
    ...     '[{"draws": 1000, "verdict": "sampled on"}, '
    ...     '{"draws": 1500, "verdict": "passed its checks"}]'})  # doctest: +NORMALIZE_WHITESPACE
    'draws per chain set by checkpoints (1,000, 1,500, 4,000): 1,000 sampled on;
    stopped at 1,500: passed its checks'
    """
    planned = ", ".join(f"{int(d):,}" for d in json.loads(str(attrs["checkpoints_planned"])))
    record = json.loads(str(attrs["checkpoints"]))
    steps = [f"{int(r['draws']):,} {r['verdict']}" for r in record[:-1]]
    last = record[-1]
    steps.append(f"stopped at {int(last['draws']):,}: {last['verdict']}")
    return f"draws per chain set by checkpoints ({planned}): " + "; ".join(steps)


#: the package's folder: a fit's warning points at the first caller outside it
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def stamp_health(dt: xr.DataTree, health: Health) -> None:
    """Write ``health_ok`` / ``health`` into ``dt.attrs`` and, when the fit fails, emit one
    :class:`ConvergenceWarning` with the health text, attributed to the first caller
    outside raterstats (the user's ``fit`` call, whichever model class overrides it)."""
    dt.attrs["health_ok"] = int(health.ok)
    dt.attrs["health"] = health.text
    if not health.ok:
        warnings.warn(
            health.text, ConvergenceWarning, stacklevel=2, skip_file_prefixes=(_PACKAGE_DIR,)
        )


def fit_health(dt: xr.DataTree) -> Health:
    """The health of a fit: read from its ``health_ok`` / ``health`` attributes, or computed
    (with the model's own checks, e.g. label switching) for a fit saved before they existed.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of a raterstats model (fresh or reloaded).

    Returns
    -------
    Health

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    >>> h = fit_health(MACE().fit(r, method="em", random_seed=1))
    >>> h.ok, h.method
    (True, 'em')
    """
    if not isinstance(dt, xr.DataTree) or "posterior" not in dt.children:
        raise ValueError("fit_health: expected a fit (an xr.DataTree with a posterior group)")
    method = str(dt.attrs.get("method", "nuts"))
    if "health_ok" in dt.attrs and "health" in dt.attrs:
        lines = tuple(str(dt.attrs["health"]).splitlines())
        return Health(bool(int(dt.attrs["health_ok"])), method, lines)
    from raterstats.models.base import model_from_datatree

    try:
        model = model_from_datatree(dt)
    except ValueError:
        extra: list[str] = []
    else:
        extra = model.convergence_problems(dt) if method in MCMC_METHODS else []
        extra += model.estimate_problems(dt)
    return assess_fit(dt, model_problems=extra)


def flag_result[R: (xr.Dataset, xr.DataArray)](
    result: R, dt: xr.DataTree, *, note: str | None = None, addendum: str | None = None
) -> R:
    """Put the health of the fit ``dt`` on a result computed from it (in place; returned).

    ``result.attrs["fit_warning"]``: set when the fit fails its checks (one sentence naming
    what failed); ``result.attrs["uncertainty_note"]``: ``note``, or by default a sentence
    when the fit is a point estimate (MAP, EM) or an ADVI approximation, followed by
    ``addendum`` (what this result lacks besides, e.g. a scale the method biases) when
    there is such a note. Whatever shows the result (command line, report) shows these
    texts beside it.

    Examples
    --------
    >>> import xarray as xr
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    >>> ds = flag_result(xr.Dataset(), MACE().fit(r, method="em", random_seed=1))
    >>> "fit_warning" in ds.attrs, ds.attrs["uncertainty_note"][:27]
    (False, 'computed from an EM point e')
    """
    health = fit_health(dt)
    warning = health.fit_warning()
    if warning is not None:
        result.attrs["fit_warning"] = warning
    text = note if note is not None else health.uncertainty_note()
    if text:
        result.attrs["uncertainty_note"] = f"{text}; {addendum}" if addendum else text
    return result


def interval_note(health: Health | None, *, n_draws: int, bootstrap: str) -> str | None:
    """What the intervals of a result (a ranking) are, when they are not posterior
    intervals: its ``uncertainty_note`` (None for posterior draws of a healthy sample).

    Parameters
    ----------
    health : Health or None
        The health of the fit the result comes from; None for raw ratings.
    n_draws : int
        Draws (or bootstrap replicates) behind the result.
    bootstrap : str
        How the cases were resampled (``attrs["bootstrap"]`` of a ranking; ``"none..."``:
        not resampled).

    Examples
    --------
    >>> interval_note(None, n_draws=1000, bootstrap="stratified by system")[:49]
    'intervals are case-bootstrap percentile intervals'
    >>> interval_note(None, n_draws=1, bootstrap="none")[:36]
    'one draw: no uncertainty was estimat'
    """
    resampled = not bootstrap.startswith("none")
    if n_draws == 1:
        what = (
            f" of {_ARTICLE[health.method]} {_POINT[health.method]}"
            if (health is not None and health.point_estimate)
            else ""
        )
        return (
            f"one draw{what}: no uncertainty was estimated: the intervals have zero width and "
            "each rank probability is 0 or 1 by construction, which is not certainty; rank "
            "from a NUTS fit for posterior intervals, or from the ratings with a case "
            "bootstrap (n_boot > 0)"
        )
    boot = f"case-bootstrap percentile intervals ({n_draws} replicates, {bootstrap})"
    if health is None:
        return f"intervals are {boot}, not posterior intervals" if resampled else None
    if health.point_estimate:
        return (
            f"computed from {_ARTICLE[health.method]} {_POINT[health.method]}: the intervals are "
            f"{boot} with the true labels drawn from its label posterior; they leave out the "
            "uncertainty of the model's parameters, so they are narrower than posterior "
            "intervals would be"
        )
    if resampled:
        return f"intervals combine the posterior draws with {boot}"
    return health.uncertainty_note()


__all__ = [
    "AUXILIARY",
    "EBFMI_MIN",
    "ESS_MIN",
    "MCMC_METHODS",
    "RHAT_MAX",
    "WORST_SHOWN",
    "ConvergenceWarning",
    "Health",
    "ParameterChecks",
    "assess_fit",
    "checkpoints_line",
    "empty_parameter_table",
    "fit_health",
    "flag_result",
    "interval_note",
    "parameter_checks",
    "reported_variables",
    "sampler_problems",
    "stamp_health",
    "variable_lines",
]
