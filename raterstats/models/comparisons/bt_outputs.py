"""What a Bradley-Terry fit stores and answers: the data groups, the log-likelihood of each
judgment, replicated outcomes, the rater table and the strength draws that
:func:`raterstats.rank_systems` ranks."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import xarray as xr

from raterstats import schema as S
from raterstats.intervals import summarize_draws
from raterstats.models.comparisons.bt_reference import (
    judgment_log_likelihood,
    replicate_outcomes,
    strength_difference,
)
from raterstats.models.comparisons.pairs_data import PairsData, comparison_coords

#: draws per block when computing per-judgment quantities (bounds the temporaries)
DRAW_BLOCK = 200


def outcome_groups(data: PairsData) -> dict[str, xr.Dataset]:
    """``observed_data`` (``outcome`` per comparison) and ``constant_data`` (indices of
    each judgment, shown-first sign, the raters' kinds and pooling, the outcome family)."""
    cc = comparison_coords(data)
    obs = xr.Dataset(
        {"outcome": ("comparison", data.y)},
        coords={"comparison": np.arange(data.n_obs), **cc},
        attrs={
            "note": "outcome -K..K from the side of system_a (positive: system_a preferred, "
            "0: a tie)",
            "max_grade": data.max_grade,
        },
    )
    const = xr.Dataset(
        {
            "obs_dimension": ("comparison", data.obs_dim),
            "obs_system_a": ("comparison", data.obs_a),
            "obs_system_b": ("comparison", data.obs_b),
            "obs_rater": ("comparison", data.obs_rater),
            "shown_first_sign": ("comparison", data.obs_s),
            "rater_kind": (S.RATER, np.asarray(data.rater_kind, dtype=str)),
            "rater_pooled": (S.RATER, data.pooled),
        },
        coords={
            "comparison": np.arange(data.n_obs),
            S.DIMENSION: list(data.dimensions),
            S.SYSTEM: list(data.systems),
            S.RATER: list(data.raters),
        },
        attrs={"outcome_model": data.mode, "max_grade": data.max_grade},
    )
    return {"observed_data": obs, "constant_data": const}


def _blocks(post: xr.Dataset) -> Iterator[tuple[slice, dict[str, np.ndarray]]]:
    """Blocks of flattened draws of the variables the likelihood needs."""
    n = post.sizes["chain"] * post.sizes["draw"]

    def flat(name: str, *dims: str) -> np.ndarray:
        v = post[name].transpose("chain", "draw", *dims).values
        return v.reshape(n, *v.shape[2:])

    arrays = {
        "theta": flat("theta", S.DIMENSION, S.SYSTEM),
        "alpha": flat("alpha", S.RATER),
        "beta": flat("beta", S.RATER),
    }
    if "nu" in post:
        arrays["nu"] = flat("nu", S.DIMENSION)
    if "cutpoints" in post:
        arrays["cutpoints"] = flat("cutpoints", S.DIMENSION, "cut")
    for lo in range(0, n, DRAW_BLOCK):
        sl = slice(lo, min(lo + DRAW_BLOCK, n))
        yield sl, {k: v[sl] for k, v in arrays.items()}


def judgment_loglik_draws(post: xr.Dataset, data: PairsData) -> xr.Dataset:
    """The log-likelihood of each judgment per draw: ``outcome`` (chain, draw,
    comparison)."""
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    out = np.empty((n_chain * n_draw, data.n_obs))
    for sl, v in _blocks(post):
        u = strength_difference(v["theta"], v["alpha"], v["beta"], data)
        out[sl] = judgment_log_likelihood(u, data, nu=v.get("nu"), cutpoints=v.get("cutpoints"))
    return xr.Dataset(
        {"outcome": (("chain", "draw", "comparison"), out.reshape(n_chain, n_draw, -1))},
        coords={
            "chain": post["chain"].values,
            "draw": post["draw"].values,
            "comparison": np.arange(data.n_obs),
        },
    )


def replicated_outcomes(post: xr.Dataset, data: PairsData, rng: np.random.Generator) -> xr.Dataset:
    """One replicated outcome ``-K..K`` per judgment and draw."""
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    out = np.empty((n_chain * n_draw, data.n_obs), dtype=np.int8)
    for sl, v in _blocks(post):
        u = strength_difference(v["theta"], v["alpha"], v["beta"], data)
        out[sl] = replicate_outcomes(u, data, rng, nu=v.get("nu"), cutpoints=v.get("cutpoints"))
    return xr.Dataset(
        {"outcome": (("chain", "draw", "comparison"), out.reshape(n_chain, n_draw, -1))},
        coords={
            "chain": post["chain"].values,
            "draw": post["draw"].values,
            "comparison": np.arange(data.n_obs),
        },
        attrs={"note": "replicated outcomes -K..K from the side of system_a"},
    )


def strength_rater_summary(dt: xr.DataTree, *, ci_prob: float) -> xr.Dataset:
    """Rater table of a Bradley-Terry fit: ``alpha_*`` (discrimination) and ``beta_*``
    (position bias) as mean, sd and equal-tailed ``ci_prob`` interval per rater, with
    ``n_comparisons``, ``n_shown_order`` (comparisons whose shown order was recorded: the
    data on ``beta``), ``rater_kind`` and ``pooled``."""
    post = dt["posterior"].to_dataset()
    const = dt["constant_data"].to_dataset()
    raters = [str(r) for r in const[S.RATER].values]
    R = len(raters)
    j = const["obs_rater"].values.astype(np.int64)
    shown = const["shown_first_sign"].values != 0
    out = xr.Dataset(coords={S.RATER: raters})
    for name in ("alpha", "beta"):
        da = post[name].assign_coords({S.RATER: raters})
        for stat, v in summarize_draws(da, ci_prob).items():
            out[f"{name}_{stat}"] = v
    out["n_comparisons"] = (S.RATER, np.bincount(j, minlength=R))
    out["n_shown_order"] = (S.RATER, np.bincount(j[shown], minlength=R))
    out["rater_kind"] = (S.RATER, const["rater_kind"].values.astype(str))
    out["pooled"] = (S.RATER, const["rater_pooled"].values.astype(bool))
    out.attrs.update(
        {
            "ci_prob": float(ci_prob),
            "note": "alpha: discrimination (how strongly a rater's judgments follow the "
            "strength difference; pooled raters' log alpha have mean 0); beta: position bias "
            "(pull toward the answer shown first, logits); pooled = False: an LLM judge with "
            "its own priors; with n_shown_order = 0, beta is the prior's",
        }
    )
    return out


def strength_score_draws(
    dt: xr.DataTree, *, source: str = "Bradley-Terry strength (dimension)"
) -> xr.DataArray:
    """Draws of the strengths ``theta`` (chain, draw, dimension, system) of a comparison
    model's fit (Bradley-Terry or Plackett-Luce), with ``attrs["source"] = source``."""
    th = dt["posterior"].to_dataset()["theta"]
    draws = th.transpose("chain", "draw", S.DIMENSION, S.SYSTEM).astype(float)
    draws = draws.assign_coords(
        {
            S.SYSTEM: [str(s) for s in th[S.SYSTEM].values],
            S.DIMENSION: [str(d) for d in th[S.DIMENSION].values],
        }
    )
    draws.attrs["source"] = source
    return draws.rename("theta")


__all__ = [
    "DRAW_BLOCK",
    "judgment_loglik_draws",
    "outcome_groups",
    "replicated_outcomes",
    "strength_rater_summary",
    "strength_score_draws",
]
