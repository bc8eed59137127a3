"""Convergence diagnostics, label switching, model comparison and posterior predictive
agreement checks of a fit.

:func:`diagnose` wraps arviz-stats (rank-normalised split R-hat, bulk and tail ESS,
divergences, tree depth, E-BFMI) and, for latent-class models, detects chains that
converged to a permuted labelling of the categories; it warns with a
:class:`ConvergenceWarning` that lists the failing parameters one line per variable.
:func:`fit_health` is the health every fit carries (``dt.attrs["health"]``, see
:mod:`raterstats.health`) and :func:`flag_result` puts it on a result computed from a fit.
:func:`loo` and
:func:`compare` run PSIS-LOO on the per-item log-likelihood stored with a fit.
:func:`ppc_agreement` replicates the ratings from the posterior and compares Randolph's
kappa and Krippendorff's alpha of the replicates with the observed values (computed by
:func:`agreement_replicates`, which the categorical design comparison shares), and
:func:`ppc_readout` says in words what that check found.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import defaults as D
from raterstats.checks import check_counts
from raterstats.health import (
    MCMC_METHODS,
    ConvergenceWarning,
    Health,
    empty_parameter_table,
    fit_health,
    flag_result,
    parameter_checks,
    sampler_problems,
    variable_lines,
)
from raterstats.lazy import LazyModule
from raterstats.models.base import model_from_datatree
from raterstats.models.latent_class import (
    LatentClassModel,
    data_from_groups,
    mode_report,
    replicate_ratings,
)
from raterstats.models.latent_class import label_switching as latent_class_switching
from raterstats.ppc_readout import ppc_readout, ppc_readout_text

if TYPE_CHECKING:
    import arviz_stats as azs
else:
    azs = LazyModule("arviz_stats")


@dataclass(frozen=True)
class Diagnosis:
    """What :func:`diagnose` found.

    ``ok`` is True when every check passed. ``parameters`` has one row per scalar
    parameter (``variable``, ``index``, ``rhat``, ``ess_bulk``, ``ess_tail``, ``ok``);
    ``failing`` names every failing scalar (``"competence[a03, safety, fine]"``), for
    programmatic use; ``problems`` says in words what failed, one line per variable with
    failing parameters (how many of its scalars fail, the worst one's R-hat and ESS) and
    one per other problem (divergences, tree depth, E-BFMI, label switching, the mode
    checks); ``label_switching`` per chain and dimension; ``modes``: chains that left the
    mode of the EM estimate they started from, or whose log density sits far below the
    others (latent-class models, :mod:`raterstats.models.latent_class.modes`), and
    ``chain_modes`` the numbers behind them per chain and dimension (``em_disagree``: the
    share of the units the EM labels with probability >= 0.9 that the chain labels
    otherwise; ``lost_class``; ``lp_gap`` and ``lp_gap_z``: nats and Monte Carlo standard
    errors below the best other chain's mean log density). ``divergences`` and
    ``max_treedepth_hits`` are None where they do not apply (a Gibbs fit).
    """

    ok: bool
    method: str
    n_chains: int
    n_draws: int
    divergences: int | None
    max_treedepth_hits: int | None
    ebfmi: tuple[float, ...]
    parameters: pl.DataFrame
    failing: tuple[str, ...]
    label_switching: tuple[str, ...]
    problems: tuple[str, ...] = field(default=())
    modes: tuple[str, ...] = field(default=())
    chain_modes: pl.DataFrame = field(default_factory=pl.DataFrame)

    def __str__(self) -> str:
        head = f"{'OK' if self.ok else 'PROBLEMS'}: {self.n_chains} chain(s) x {self.n_draws} draws"
        if self.method not in MCMC_METHODS:
            head += f" ({self.method}: point estimate, no sampling diagnostics)"
        lines = [head]
        # a variable's line is indented under the count of failing parameters
        lines += [p if p.startswith("  ") else f"- {p}" for p in self.problems]
        if self.method in MCMC_METHODS and self.parameters.height:
            t = self.parameters.filter(pl.col("rhat").is_not_nan() | ~pl.col("ok"))
            rhat = float(t["rhat"].max())  # type: ignore[arg-type]
            eb = float(t["ess_bulk"].min())  # type: ignore[arg-type]
            et = float(t["ess_tail"].min())  # type: ignore[arg-type]
            lines.append(
                f"- max R-hat {rhat:.4f}, min bulk ESS {eb:.0f}, min tail ESS {et:.0f}"
                + (
                    ", divergences and tree depth: not applicable (Gibbs sampler)"
                    if self.divergences is None
                    else ("" if self.divergences else ", no divergences")
                )
            )
        return "\n".join(lines)


def label_switching(dt: xr.DataTree, *, threshold: float = 0.5) -> list[str]:
    """Chains whose label posterior is a permutation of chain 0's, per dimension.

    For each chain the most probable label of every unit is computed from that chain's
    draws alone; the categories of chain ``c`` are matched to chain 0's by the assignment
    that maximises agreement (Hungarian algorithm on the confusion between the two label
    vectors). A chain is reported when the best matching is not the identity and agrees
    with chain 0 on at least ``threshold`` more of the units than the identity does.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> label_switching(MACE().fit(s.ratings, method="em", random_seed=1))
    []
    """
    model = model_from_datatree(dt)
    if not isinstance(model, LatentClassModel):
        return []
    return latent_class_switching(model, dt, threshold=threshold)


def diagnose(
    dt: xr.DataTree,
    *,
    var_names: Sequence[str] | None = None,
    rhat_max: float = 1.01,
    ess_min: float = 400,
    ebfmi_min: float = 0.3,
    warn: bool = True,
) -> Diagnosis:
    """Check a fit: R-hat, bulk / tail ESS, divergences, tree depth, E-BFMI (arviz-stats),
    and for latent-class models the mode checks: label switching, chains that left the EM
    mode they started from, chains whose log density sits far below the others.

    Parameters
    ----------
    dt : xr.DataTree
        A fit.
    var_names : sequence of str, optional
        Parameters to check (default: every reported parameter, not the standard-normal
        auxiliaries of non-centred parameterisations).
    rhat_max, ess_min, ebfmi_min : float
        Thresholds (defaults: R-hat <= 1.01, ESS >= 400, E-BFMI >= 0.3).
    warn : bool
        Emit one :class:`ConvergenceWarning` listing the problems, one line per variable.

    Returns
    -------
    Diagnosis
        Its text (``str``) and ``problems`` have one line per variable with failing
        parameters, never one per scalar; ``failing`` and ``parameters`` list every scalar.

    Examples
    --------
    >>> from raterstats import MACE, diagnose
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> d = diagnose(MACE().fit(s.ratings, method="em", random_seed=1))
    >>> d.ok, d.method
    (True, 'em')
    """
    post = dt["posterior"].to_dataset()
    method = str(dt.attrs.get("method", "nuts"))
    n_chain, n_draw = int(post.sizes["chain"]), int(post.sizes["draw"])
    if var_names is not None:
        missing = [v for v in var_names if v not in post]
        if missing:
            raise KeyError(f"no posterior variables {missing}; present: {list(post.data_vars)}")
    if method not in MCMC_METHODS or n_draw < 4:
        empty = empty_parameter_table()
        return Diagnosis(True, method, n_chain, n_draw, 0, 0, (), empty, (), ())
    checks = parameter_checks(dt, var_names=var_names, rhat_max=rhat_max, ess_min=ess_min)
    problems = sampler_problems(checks, ebfmi_min=ebfmi_min)
    if checks.failing:
        n_vars = checks.table.filter(~pl.col("ok"))["variable"].n_unique()
        problems.append(
            f"{len(checks.failing)} of {checks.table.height} parameters in {n_vars} "
            f"variable(s) fail R-hat <= {rhat_max:g} or ESS >= {ess_min:g}:"
        )
        problems += [
            f"  {line}" for line in variable_lines(checks.table, rhat_max=rhat_max, ess_min=ess_min)
        ]
    model = model_from_datatree(dt)
    if isinstance(model, LatentClassModel):
        switch_lines, mode_lines, chain_modes = mode_report(model, dt)
    else:
        switch_lines, mode_lines, chain_modes = [], [], pl.DataFrame()
    switching = tuple(switch_lines)
    problems.extend(switching)
    problems.extend(mode_lines)
    diag = Diagnosis(
        ok=not problems,
        method=method,
        n_chains=n_chain,
        n_draws=n_draw,
        divergences=checks.divergences if method == "nuts" else None,
        max_treedepth_hits=checks.max_treedepth_hits if method == "nuts" else None,
        ebfmi=checks.ebfmi,
        parameters=checks.table,
        failing=checks.failing,
        label_switching=switching,
        problems=tuple(problems),
        modes=tuple(mode_lines),
        chain_modes=chain_modes,
    )
    if warn and problems:
        text = "\n".join(["the fit fails its convergence checks:", *problems])
        warnings.warn(text, ConvergenceWarning, stacklevel=2)
    return diag


def loo(dt: xr.DataTree, **kwargs: Any) -> Any:
    """PSIS-LOO (``arviz_stats.loo``) on the fit's pointwise log-likelihood (per item for
    the latent-class models, marginalised over the true label)."""
    if "log_likelihood" not in dt.children:
        raise ValueError("the fit has no log_likelihood group (fit(..., log_likelihood=True))")
    return azs.loo(dt, **kwargs)


def compare(fits: Mapping[str, xr.DataTree], **kwargs: Any) -> Any:
    """Compare fits of the same ratings by PSIS-LOO (``arviz_stats.compare``).

    The fits must share the data fingerprint (same ratings) and the pointwise unit.

    Examples
    --------
    >>> from raterstats import MACE, DawidSkene
    >>> from raterstats.diagnostics import compare
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=4, n_systems=5, random_seed=3).ratings
    >>> fits = {"mace": MACE().fit(r, draws=200, tune=200, chains=2, random_seed=1,
    ...                            progress=False),
    ...         "ds": DawidSkene(pooling="one_coin").fit(r, draws=200, tune=200, chains=2,
    ...                                                 random_seed=1, progress=False)}
    >>> sorted(compare(fits).index)
    ['ds', 'mace']
    """
    prints = {k: v.attrs.get("data_fingerprint") for k, v in fits.items()}
    if len(set(prints.values())) > 1:
        raise ValueError(f"the fits are of different data: {prints}")
    with warnings.catch_warnings():
        # arviz-stats warns when Pareto k is high for a few items; that is in its output
        warnings.filterwarnings("ignore", message=".*Pareto k.*")
        warnings.filterwarnings("ignore", message=".*[Ee]stimated shape parameter.*")
        return azs.compare(dict(fits), **kwargs)


def agreement_replicates(
    dt: xr.DataTree,
    *,
    n_draws: int = 200,
    random_seed: int | None = D.RANDOM_SEED,
    human_only: bool = False,
) -> xr.Dataset:
    """Randolph's kappa and Krippendorff's alpha (nominal) of the observed ratings of a
    latent-class fit and of ratings replicated from its posterior, per dimension x design
    (the computation behind :func:`ppc_agreement` and the categorical
    :func:`raterstats.design.compare_designs`).

    ``n_draws`` posterior draws are chosen at random (with replacement when the fit has
    fewer, so a point estimate gives ``n_draws`` replicates of its one draw); for each,
    true labels are drawn from their conditional posterior and every observed rating is
    replicated from the rater model
    (:func:`raterstats.models.latent_class.replicate_ratings`). The statistics use the
    first rating of each unit x rater pair (repeats left out), per dimension x design.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of a latent-class model (MACE, Dawid-Skene).
    n_draws : int
        Replicates.
    random_seed : int or None
        Seed of the draw choice and the replicates.
    human_only : bool
        Use the human raters' ratings only (``rater_is_human`` of the fit; a fit saved
        without it counts every rater as human).

    Returns
    -------
    xr.Dataset
        ``observed`` (statistic, dimension, design) and ``replicated`` (statistic,
        dimension, design, replicate); ``statistic`` is ``randolph_kappa`` /
        ``krippendorff_alpha``; NaN where a cell has no ratings (or the statistic is
        undefined, e.g. a replicate with one category only).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> dt = MACE().fit(s.ratings, method="em", random_seed=1)
    >>> agreement_replicates(dt, n_draws=5, random_seed=1)["replicated"].sizes["replicate"]
    5
    """
    from raterstats.agreement import krippendorff_alpha, randolph_kappa

    check_counts(where="agreement_replicates", n_draws=(n_draws, 1))
    model = model_from_datatree(dt)
    if not isinstance(model, LatentClassModel):
        raise TypeError(
            "agreement_replicates needs a MACE or DawidSkene fit, got a fit of "
            f"{dt.attrs.get('model')!r}"
        )
    data = data_from_groups(dt["constant_data"].to_dataset(), dt["observed_data"].to_dataset())
    post = dt["posterior"].to_dataset()
    n_total = post.sizes["chain"] * post.sizes["draw"]
    rng = np.random.default_rng(random_seed)
    take = rng.choice(n_total, size=n_draws, replace=n_total < n_draws)
    reps = replicate_ratings(model, post, data, rng, draw_index=np.sort(take))
    # first rating of each unit x rater pair (not a repeat; a fit saved before repeats
    # were stored: the rating stored first)
    key = data.unit * len(data.raters) + data.rater
    order = np.arange(key.size) if data.obs_repeat is None else np.lexsort((data.obs_repeat, key))
    _, pos = np.unique(key[order], return_index=True)
    first = np.sort(order[pos])
    if human_only and data.rater_is_human is not None:
        first = first[data.rater_is_human[data.rater[first]]]
    stats = ("randolph_kappa", "krippendorff_alpha")
    D, G = len(data.dimensions), len(data.designs)
    obs = np.full((2, D, G), np.nan)
    rep = np.full((2, D, G, reps.shape[0]), np.nan)
    for d in range(D):
        for g in range(G):
            sel = first[(data.dim[first] == d) & (data.design[first] == g)]
            if sel.size == 0:
                continue
            u_ids, u_loc = np.unique(data.unit[sel], return_inverse=True)
            r_ids, r_loc = np.unique(data.rater[sel], return_inverse=True)
            cats = list(range(int(data.n_categories[d])))

            def both(
                codes: np.ndarray,
                shape: tuple[int, int] = (u_ids.size, r_ids.size),
                u_loc: np.ndarray = u_loc,
                r_loc: np.ndarray = r_loc,
                cats: list[int] = cats,
            ) -> tuple[float, float]:
                m = np.full(shape, np.nan)
                m[u_loc, r_loc] = codes
                with warnings.catch_warnings():
                    # degenerate replicates (one category only) are NaN by design
                    warnings.simplefilter("ignore")
                    return (
                        randolph_kappa(m, categories=cats),
                        krippendorff_alpha(m, level="nominal", categories=cats),
                    )

            obs[:, d, g] = both(data.code[sel].astype(float))
            for s in range(reps.shape[0]):
                rep[:, d, g, s] = both(reps[s, sel].astype(float))
    return xr.Dataset(
        {
            "observed": (("statistic", "dimension", "design"), obs),
            "replicated": (("statistic", "dimension", "design", "replicate"), rep),
        },
        coords={
            "statistic": list(stats),
            "dimension": list(data.dimensions),
            "design": list(data.designs),
            "replicate": np.arange(reps.shape[0]),
        },
    )


def ppc_agreement(
    dt: xr.DataTree,
    *,
    n_draws: int = 200,
    random_seed: int | None = D.RANDOM_SEED,
) -> xr.Dataset:
    """Posterior predictive check of agreement: Randolph's kappa and Krippendorff's alpha
    (nominal) of the observed ratings against the same statistics of ratings replicated
    from the posterior, per dimension x design.

    For ``n_draws`` posterior draws, true labels are drawn from their conditional posterior
    and every observed rating is replicated from the rater model (same units, raters,
    dimensions and designs); first ratings of each unit x rater pair are used
    (:func:`agreement_replicates`). The
    replicated values are a model-based agreement estimate; ``ppp`` is the posterior
    predictive p-value P(replicated >= observed) (near 0 or 1 means misfit).
    ``attrs["ppc_readout"]`` says in words, per statistic x dimension x design, whether
    the model reproduces the observed value (:func:`ppc_readout`); ``fit_warning`` /
    ``uncertainty_note`` carry the fit's health (:func:`flag_result`).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> dt = MACE().fit(s.ratings, draws=100, tune=200, chains=2, random_seed=1,
    ...                 progress=False)
    >>> ppc = ppc_agreement(dt, n_draws=50, random_seed=1)
    >>> ppc["observed"].dims, ppc["replicated"].dims
    (('statistic', 'dimension', 'design'), ('statistic', 'dimension', 'design', 'replicate'))
    """
    check_counts(where="ppc_agreement", n_draws=(n_draws, 1))
    if not isinstance(model_from_datatree(dt), LatentClassModel):
        raise TypeError("ppc_agreement needs a MACE or DawidSkene fit")
    out = agreement_replicates(dt, n_draws=n_draws, random_seed=random_seed)
    obs, rep = out["observed"].values, out["replicated"].values
    with warnings.catch_warnings():
        # cells without any defined replicate give NaN, not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        ppp = np.where(
            np.isnan(rep).all(axis=-1),
            np.nan,
            np.nanmean(np.where(np.isnan(rep), np.nan, rep >= obs[..., None]), axis=-1),
        )
        rep_mean = np.nanmean(rep, axis=-1)
    cell = ("statistic", "dimension", "design")
    out["replicated_mean"] = (cell, rep_mean)
    out["ppp"] = (cell, ppp)
    out.attrs["ppc_readout"] = ppc_readout_text(out)
    return flag_result(out, dt)


__all__ = [
    "ConvergenceWarning",
    "Diagnosis",
    "Health",
    "agreement_replicates",
    "compare",
    "diagnose",
    "fit_health",
    "flag_result",
    "label_switching",
    "loo",
    "ppc_agreement",
    "ppc_readout",
    "ppc_readout_text",
]
