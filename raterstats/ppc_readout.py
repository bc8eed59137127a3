"""Posterior predictive checks read out in words.

A posterior predictive check compares a statistic of the observed ratings with the same
statistic of ratings replicated from the fitted model. :func:`ppc_readout` turns the
result of :func:`raterstats.diagnostics.ppc_agreement` (variables ``observed``,
``replicated``, ``ppp`` over ``statistic``) or the predictive part of
:func:`raterstats.compare_designs` (``kappa`` / ``kappa_observed`` / ``kappa_ppp``,
``alpha`` / ...) into one sentence per statistic x dimension x design: whether the model
reproduces the observed value, and when it does not, in which direction it misses and what
that means for the rater model. :func:`ppc_readout_text` joins them into lines.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from raterstats.defaults import resolve_ci_prob

#: how each statistic is named in the sentences
STATISTIC_NAMES = {
    "randolph_kappa": "Randolph's kappa",
    "krippendorff_alpha": "Krippendorff's alpha (nominal)",
    "kappa": "Randolph's kappa",
    "alpha": "Krippendorff's alpha (ordinal)",
}


def _as_long(ds: xr.Dataset) -> tuple[xr.DataArray, xr.DataArray]:
    """``(observed, replicated)`` with a ``statistic`` dim, from either layout."""
    if "observed" in ds and "replicated" in ds:
        return ds["observed"], ds["replicated"]
    names = [
        str(v)[: -len("_observed")]
        for v in ds.data_vars
        if str(v).endswith("_observed") and str(v)[: -len("_observed")] in ds
    ]
    names = [n for n in names if "replicate" in ds[n].dims]
    if not names:
        raise ValueError(
            "ppc_readout: expected a posterior predictive check: variables observed / "
            "replicated (ppc_agreement) or NAME / NAME_observed with a replicate dim "
            f"(compare_designs); got {sorted(map(str, ds.data_vars))}"
        )
    obs = xr.concat([ds[f"{n}_observed"] for n in names], dim="statistic")
    rep = xr.concat([ds[n] for n in names], dim="statistic")
    return obs.assign_coords(statistic=names), rep.assign_coords(statistic=names)


def _num(x: float) -> str:
    return f"{x:.2f}"


def ppc_sentence(name: str, observed: float, replicates: np.ndarray, prob: float) -> str:
    """One statistic's check in words: reproduced, under-predicted or over-predicted.

    Parameters
    ----------
    name : str
        The statistic, as a reader would name it ("Randolph's kappa").
    observed : float
        Its value on the observed ratings.
    replicates : np.ndarray
        Its values on the replicated ratings (NaN: undefined replicate, skipped).
    prob : float
        Probability of the predictive interval.

    Examples
    --------
    >>> import numpy as np
    >>> print(ppc_sentence("Randolph's kappa", 0.96, np.linspace(0.7, 0.9, 50), 0.9))
    ... # doctest: +NORMALIZE_WHITESPACE
    the model under-predicts agreement: observed Randolph's kappa 0.96 lies above every
    replicate (predicted 0.80, 90% interval 0.71 to 0.89, 50 replicates, P(replicate >=
    observed) = 0.00); its rater model is too noisy for these data (the raters agree more
    than it allows)
    """
    reps = np.asarray(replicates, dtype=float)
    reps = reps[~np.isnan(reps)]
    if np.isnan(observed):
        return f"no check of {name}: it is undefined for the observed ratings"
    if reps.size == 0:
        return f"no check of {name}: it is undefined in every replicate"
    lo, hi = np.quantile(reps, [(1 - prob) / 2, 1 - (1 - prob) / 2])
    mean = float(reps.mean())
    level = f"{100 * prob:.0f}%"
    ppp = float((reps >= observed).mean())
    numbers = (
        f"predicted {_num(mean)}, {level} interval {_num(lo)} to {_num(hi)}, "
        f"{reps.size} replicates, P(replicate >= observed) = {ppp:.2f}"
    )
    if lo <= observed <= hi:
        return (
            f"the model reproduces {name} (observed {_num(observed)}, predicted "
            f"{_num(mean)}, {level} interval {_num(lo)} to {_num(hi)})"
        )
    if observed > hi:
        where = "every replicate" if observed > reps.max() else f"the {level} interval"
        return (
            f"the model under-predicts agreement: observed {name} {_num(observed)} lies above "
            f"{where} ({numbers}); its rater model is too noisy for these data (the raters "
            "agree more than it allows)"
        )
    where = "every replicate" if observed < reps.min() else f"the {level} interval"
    return (
        f"the model over-predicts agreement: observed {name} {_num(observed)} lies below "
        f"{where} ({numbers}); the raters disagree more than its rater model allows "
        "(rater or item differences it does not capture)"
    )


def ppc_readout(ds: xr.Dataset, *, ci_prob: float | None = None) -> xr.DataArray:
    """Sentences reading out a posterior predictive check of agreement, per statistic x
    dimension x design.

    Parameters
    ----------
    ds : xr.Dataset
        The output of :func:`raterstats.diagnostics.ppc_agreement` (``observed``,
        ``replicated``) or of :func:`raterstats.compare_designs` with replicates
        (``kappa`` / ``kappa_observed``, ``alpha`` / ``alpha_observed``); a statistic's
        ``long_name`` attribute, when set, names it in the sentences (else
        :data:`STATISTIC_NAMES`).
    ci_prob : float, optional
        Probability of the predictive interval (default: ``ds.attrs["ci_prob"]``, else
        :func:`raterstats.defaults.ci_prob`).

    Returns
    -------
    xr.DataArray
        Strings with dims ``statistic`` and the others of the observed values
        (``dimension``, ``design``).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset(
    ...     {"observed": (("statistic", "dimension", "design"), [[[0.62]]]),
    ...      "replicated": (("statistic", "dimension", "design", "replicate"),
    ...                     np.linspace(0.5, 0.7, 21)[None, None, None])},
    ...     coords={"statistic": ["randolph_kappa"], "dimension": ["safety"],
    ...             "design": ["coarse"]})
    >>> print(ppc_readout(ds, ci_prob=0.9).item())
    the model reproduces Randolph's kappa (observed 0.62, predicted 0.60, 90% interval 0.51 to 0.69)
    """
    prob = resolve_ci_prob(ci_prob if ci_prob is not None else ds.attrs.get("ci_prob"))
    obs, rep = _as_long(ds)
    rep = rep.transpose(*obs.dims, "replicate")
    text = np.empty(obs.shape, dtype=object)
    for idx in np.ndindex(obs.shape):
        stat = str(obs["statistic"].values[idx[obs.dims.index("statistic")]])
        # a result may name its statistic itself (compare_designs' nominal alpha)
        label = ds[stat].attrs.get("long_name") if stat in ds.data_vars else None
        name = str(label) if label else STATISTIC_NAMES.get(stat, stat)
        text[idx] = ppc_sentence(name, float(obs.values[idx]), rep.values[idx], prob)
    return xr.DataArray(text.astype(str), dims=obs.dims, coords=obs.coords, name="ppc_readout")


def ppc_readout_text(ds: xr.Dataset, *, ci_prob: float | None = None) -> str:
    """:func:`ppc_readout` as lines ``dimension, design: sentence`` (one per statistic x
    dimension x design; what a command line or report prints).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"kappa_observed": (("dimension", "design"), [[0.3]]),
    ...                  "kappa": (("replicate", "dimension", "design"),
    ...                            np.linspace(0.5, 0.7, 21)[:, None, None])},
    ...                 coords={"dimension": ["safety"], "design": ["fine"]})
    >>> ppc_readout_text(ds, ci_prob=0.9)[:56]
    'safety, fine: the model over-predicts agreement: observe'
    """
    da = ppc_readout(ds, ci_prob=ci_prob)
    other = [d for d in da.dims if d != "statistic"]
    da = da.transpose(*other, "statistic")
    lines = []
    for idx in np.ndindex(da.shape):
        where = ", ".join(str(da[d].values[i]) for d, i in zip(other, idx, strict=False))
        lines.append(f"{where}: {da.values[idx]}" if where else str(da.values[idx]))
    return "\n".join(lines)


__all__ = ["STATISTIC_NAMES", "ppc_readout", "ppc_readout_text", "ppc_sentence"]
