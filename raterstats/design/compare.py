"""Comparing annotation designs: posterior agreement per design, partial annotation,
design projections (raters per item, sentences per answer) against cost, intra-rater
reliability and the LLM judge.

:func:`compare_designs` answers "which design is more reliable?" from a fit of
:class:`~raterstats.OrdinalRaters`: the model-implied reliability per dimension x design
(:func:`raterstats.models.ordinal.reliability`), posterior predictive Randolph's kappa and
Krippendorff's alpha per design, and P(design A more reliable than B) for each.
:func:`partial_annotation` is the published subsampling analysis (k of an answer's
sentences); :func:`reliability_projection` and :func:`annotation_budget` project
reliability and ranking certainty for other designs from the fitted model (closed forms
and fast simulations, run in parallel on local processes or a Dask cluster);
:func:`cheapest_design` picks the cheapest design that reaches a target.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, Literal

import numpy as np
import polars as pl
import xarray as xr
from scipy.special import expit

from raterstats import schema as S
from raterstats.agreement import (
    DegenerateAgreementWarning,
    intra_rater_agreement,
    krippendorff_alpha,
    randolph_kappa,
)
from raterstats.ranking import SAMPLE_DIMS, RawMethod, _eti
from raterstats.ratings import Ratings


def _check_ordinal(dt: xr.DataTree, what: str) -> None:
    if dt.attrs.get("model") != "ordinal_raters":
        raise ValueError(
            f"{what}: expected a fit of OrdinalRaters (attrs['model'] == 'ordinal_raters'), "
            f"got {dt.attrs.get('model')!r}"
        )


def _thin(post: xr.Dataset, n: int, rng: np.random.Generator) -> xr.Dataset:
    """``n`` draws of the posterior (chosen at random, without replacement when possible),
    as chain = 1."""
    flat = post.stack(sample=SAMPLE_DIMS)
    total = flat.sizes["sample"]
    pick = np.sort(rng.choice(total, size=min(n, total), replace=False))
    out = flat.isel(sample=pick).drop_vars(["sample", "chain", "draw"])
    out = out.rename(sample="draw").expand_dims(chain=[0])
    return out.assign_coords(draw=np.arange(out.sizes["draw"])).transpose("chain", "draw", ...)


# ---------------------------------------------------------------------------- agreement


def _unit_matrices(
    dt: xr.DataTree,
) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, int, int]]:
    """For each (dimension, design): the rating positions of the human first ratings and
    their (unit, rater) indices in a units x raters matrix."""
    const = dt["constant_data"].to_dataset()
    obs = dt["observed_data"].to_dataset()
    dims = [str(d) for d in dt["posterior"].to_dataset()["dimension"].values]
    designs = [str(g) for g in dt["posterior"].to_dataset()["design"].values]
    human = const["rater_is_human"].values
    o_rater = const["obs_rater"].values
    keep = human[o_rater] & ~obs["rating_repeat"].values.astype(bool)
    unit_key = const["obs_item"].values.astype(np.int64) * 100_000 + const["obs_sentence"].values
    out = {}
    for d, dim in enumerate(dims):
        for g, des in enumerate(designs):
            sel = np.flatnonzero(
                keep & (const["obs_dimension"].values == d) & (const["obs_design"].values == g)
            )
            if sel.size == 0:
                continue
            units, u_idx = np.unique(unit_key[sel], return_inverse=True)
            raters, r_idx = np.unique(o_rater[sel], return_inverse=True)
            out[(dim, des)] = (sel, np.stack([u_idx, r_idx]), units.size, raters.size)
    return out


def _agreement_of(
    y: np.ndarray,
    layout: tuple[np.ndarray, np.ndarray, int, int],
    levels: list[Any],
) -> tuple[float, float]:
    sel, idx, n_u, n_r = layout
    mat = np.full((n_u, n_r), np.nan)
    mat[idx[0], idx[1]] = y[sel]
    cats = sorted(set(levels))
    return (
        randolph_kappa(mat, categories=cats),
        krippendorff_alpha(mat, level="ordinal", categories=cats),
    )


def compare_designs(
    dt: xr.DataTree,
    *,
    n_replicates: int = 100,
    level_map: Mapping[int, Any] | None = None,
    ci_prob: float = 0.9,
    random_seed: int = 0,
) -> xr.Dataset:
    """Compare the reliability of annotation designs per dimension, from an ordinal fit.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of :class:`~raterstats.OrdinalRaters` with several designs.
    n_replicates : int
        Posterior predictive replicates of the ratings (posterior draws chosen at random)
        on which Randolph's kappa and Krippendorff's alpha (ordinal) are computed; 0 skips
        the posterior predictive part.
    level_map : mapping, optional
        Map of the 1-based rating levels before computing agreement, e.g.
        ``{1: -1, 2: -1, 3: 0, 4: 1, 5: 1}`` for the collapsed 3-point scale of the
        published clinical-QA analysis; the category domain is the mapped values.
    ci_prob : float
        Probability of the equal-tailed intervals.
    random_seed : int
        Seed of the draw selection and the replicated ratings.

    Returns
    -------
    xr.Dataset
        Dims ``dimension``, ``design`` and ``design_b``: ``reliability`` (posterior mean
        of the model-implied reliability, :func:`~raterstats.models.ordinal.reliability`)
        with ``reliability_low`` / ``reliability_high`` and ``p_more_reliable`` (P(reliability
        of ``design`` > ``design_b``)); with replicates, ``kappa`` / ``alpha`` (replicate x
        dimension x design) and their ``*_mean`` / ``*_low`` / ``*_high``, the observed
        values ``kappa_observed`` / ``alpha_observed``, ``p_kappa_higher`` /
        ``p_alpha_higher`` (share of replicates where ``design`` beats ``design_b``) and the
        posterior predictive p-values ``kappa_ppp`` / ``alpha_ppp`` (share of replicates
        with a value at least the observed one).

    Notes
    -----
    Agreement is computed on the human raters' first ratings, per unit (answers for a
    whole-answer design, sentences for a sentence-level design); each replicate redraws
    every observed rating from the model (same units, raters and designs).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> from raterstats.models import OrdinalRaters
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=30, tune=30, chains=1, random_seed=1, progress=False)
    >>> ds = compare_designs(dt, n_replicates=5, random_seed=1)
    >>> ds["p_more_reliable"].dims
    ('dimension', 'design', 'design_b')
    >>> ds["kappa"].dims
    ('replicate', 'dimension', 'design')
    """
    from raterstats.models.base import model_from_datatree
    from raterstats.models.ordinal import _data_from_constants, reliability

    what = "compare_designs"
    _check_ordinal(dt, what)
    designs = [str(g) for g in dt["posterior"].to_dataset()["design"].values]
    dims = [str(d) for d in dt["posterior"].to_dataset()["dimension"].values]
    rel = reliability(dt)
    lo, hi = _eti(rel, ci_prob)
    rel_b = rel.rename(design="design_b")
    out = xr.Dataset(
        {
            "reliability": rel.mean(SAMPLE_DIMS),
            "reliability_low": lo,
            "reliability_high": hi,
            "p_more_reliable": (rel > rel_b)
            .mean(SAMPLE_DIMS)
            .transpose("dimension", "design", "design_b"),
        },
        coords={"dimension": dims, "design": designs, "design_b": designs},
        attrs={"ci_prob": ci_prob, "n_replicates": n_replicates},
    )
    if not n_replicates:
        return out
    rng = np.random.default_rng(random_seed)
    model = model_from_datatree(dt)
    data = _data_from_constants(dt)
    post = _thin(dt["posterior"].to_dataset(), n_replicates, rng)
    reps = model.posterior_predictive(
        xr.DataTree(children={"posterior": xr.DataTree(post)}), data, None, rng
    )
    y_rep = reps["rating"].values.reshape(-1, data.n_obs).astype(float)
    y_obs = dt["observed_data"].to_dataset()["rating"].values.astype(float)
    k = int(data.n_levels)
    levels: list[Any] = list(range(1, k + 1))
    if level_map is not None:
        missing = [lv for lv in levels if lv not in level_map]
        if missing:
            raise ValueError(f"{what}: level_map has no value for levels {missing}")
        lut = np.asarray([np.nan, *[float(level_map[lv]) for lv in levels]])
        y_rep, y_obs = lut[y_rep.astype(int)], lut[y_obs.astype(int)]
        levels = [float(level_map[lv]) for lv in range(1, k + 1)]
    layouts = _unit_matrices(dt)
    n = y_rep.shape[0]
    kap = np.full((n, len(dims), len(designs)), np.nan)
    alp = np.full_like(kap, np.nan)
    kap_obs = np.full((len(dims), len(designs)), np.nan)
    alp_obs = np.full_like(kap_obs, np.nan)
    for (dim, des), lay in layouts.items():
        d, g = dims.index(dim), designs.index(des)
        kap_obs[d, g], alp_obs[d, g] = _agreement_of(y_obs, lay, levels)
        for s in range(n):
            kap[s, d, g], alp[s, d, g] = _agreement_of(y_rep[s], lay, levels)
    q = (1 - ci_prob) / 2
    for name, arr, obs_v in (("kappa", kap, kap_obs), ("alpha", alp, alp_obs)):
        da = xr.DataArray(
            arr,
            dims=("replicate", "dimension", "design"),
            coords={"replicate": np.arange(n), "dimension": dims, "design": designs},
        )
        out[name] = da
        out[f"{name}_mean"] = da.mean("replicate")
        out[f"{name}_low"] = da.quantile(q, "replicate").drop_vars("quantile")
        out[f"{name}_high"] = da.quantile(1 - q, "replicate").drop_vars("quantile")
        out[f"{name}_observed"] = (("dimension", "design"), obs_v)
        out[f"p_{name}_higher"] = (
            (da > da.rename(design="design_b"))
            .mean("replicate")
            .transpose("dimension", "design", "design_b")
        )
        out[f"{name}_ppp"] = (da >= out[f"{name}_observed"]).mean("replicate")
    return out


def design_table(ds: xr.Dataset, *, digits: int = 3) -> pl.DataFrame:
    """One row per dimension x design of a :func:`compare_designs` result: reliability and,
    when present, posterior predictive kappa / alpha with intervals and the observed values.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"reliability": (("dimension", "design"), [[0.5, 0.6]]),
    ...                  "reliability_low": (("dimension", "design"), [[0.4, 0.5]]),
    ...                  "reliability_high": (("dimension", "design"), [[0.6, 0.7]])},
    ...                 coords={"dimension": ["c"], "design": ["coarse", "fine"]})
    >>> design_table(ds)["reliability"].to_list()
    [0.5, 0.6]
    """
    names = [str(v) for v in ds.data_vars if ds[v].dims == ("dimension", "design")]
    frame = pl.from_pandas(ds[names].to_dataframe().reset_index())
    return frame.with_columns(pl.col(c).round(digits) for c in names).sort("dimension", "design")


# ---------------------------------------------------------------------------- partial


def _fine_cube(
    ratings: Ratings, design: str, what: str
) -> tuple[np.ndarray, list[str], list[str], list[str]]:
    """Human first ratings of a sentence-level design as (dimension, answer, rater,
    sentence) with NaN where not rated."""
    r = ratings.filter(design=design)
    d = r.data.filter(~pl.col(S.REPEAT))
    if S.RATER_KIND in d.columns:
        d = d.filter(pl.col(S.RATER_KIND) == "human")
    d = d.filter(pl.col(S.SEGMENT).is_not_null())
    if d.height == 0:
        raise ValueError(f"{what}: design {design!r} has no sentence-level (segment) ratings")
    dims = sorted(d[S.DIMENSION].unique().to_list())
    items = sorted(d[S.ITEM].unique().to_list())
    raters = sorted(d[S.RATER].unique().to_list())
    seg_rank = (
        d.select(S.ITEM, S.SEGMENT)
        .unique()
        .with_columns(pl.col(S.SEGMENT).rank("dense").over(S.ITEM).cast(pl.Int64).alias("__s") - 1)
    )
    d = d.join(seg_rank, on=[S.ITEM, S.SEGMENT])
    n_s = int(d.select(pl.col("__s").max()).item()) + 1
    cube = np.full((len(dims), len(items), len(raters), n_s), np.nan)
    cube[
        d[S.DIMENSION]
        .replace_strict({v: i for i, v in enumerate(dims)}, return_dtype=pl.Int64)
        .to_numpy(),
        d[S.ITEM]
        .replace_strict({v: i for i, v in enumerate(items)}, return_dtype=pl.Int64)
        .to_numpy(),
        d[S.RATER]
        .replace_strict({v: i for i, v in enumerate(raters)}, return_dtype=pl.Int64)
        .to_numpy(),
        d["__s"].to_numpy(),
    ] = d[S.VALUE].cast(pl.Float64).to_numpy()
    return cube, dims, items, raters


def _spearman_cols(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rho between ``a[s]`` and ``b`` for each row ``s`` (no NaN)."""
    from scipy.stats import rankdata

    ra = rankdata(a, axis=-1)
    rb = rankdata(b)
    ra = ra - ra.mean(axis=-1, keepdims=True)
    rb = rb - rb.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ra @ rb) / np.sqrt((ra**2).sum(-1) * (rb**2).sum())


def partial_annotation(
    ratings: Ratings,
    *,
    ks: Iterable[int] = range(1, 7),
    design: str = "fine",
    n_subsets: int = 100,
    ci_prob: float = 0.95,
    random_seed: int = 0,
) -> xr.Dataset:
    """What is lost when raters annotate only ``k`` of an answer's sentences.

    For each ``k`` and each of ``n_subsets`` random subsets (``k`` sentences per answer,
    the same for all its raters; all of them when the answer has fewer), the answer score
    is the mean over raters of each rater's mean rating on the subset. Reported per
    dimension: Spearman's rho between the ``k``-sentence and the full answer scores
    (all rated sentences), and the inter-rater variance (variance across raters of their
    ``k``-sentence means, averaged over answers), as mean and ``ci_prob`` interval over
    the subsets (the published analysis). Human raters' first ratings.

    Returns
    -------
    xr.Dataset
        Dims ``dimension`` and ``k``: ``spearman_mean`` / ``spearman_low`` /
        ``spearman_high`` and ``variance_mean`` / ``variance_low`` / ``variance_high``,
        and ``variance_full`` (per dimension, all sentences).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> rows = [(f"a{i}", str(s), r, 1 + (i + s + (r == "y")) % 5)
    ...         for i in range(6) for s in (1, 2, 3) for r in ("x", "y")]
    >>> r = read_ratings(pl.DataFrame(rows, orient="row",
    ...                  schema=["item", "segment", "rater", "rating"]), design="fine")
    >>> ds = partial_annotation(r, ks=[3], n_subsets=5)
    >>> float(ds["spearman_mean"].sel(k=3, dimension="default"))
    1.0
    """
    what = "partial_annotation"
    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1:
        raise ValueError(f"{what}: ks must be positive integers, got {ks}")
    cube, dims, _items, _raters = _fine_cube(ratings, design, what)
    rng = np.random.default_rng(random_seed)
    present = ~np.isnan(cube).all(axis=2)  # dim, answer, sentence
    vals = np.nan_to_num(cube)
    rated = (~np.isnan(cube)).astype(float)
    q = (1 - ci_prob) / 2

    def answer_stats(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # mask: (S, dim, answer, sentence) -> per-rater means (S, dim, answer, rater)
        m = mask[:, :, :, None, :] * rated[None]
        n = m.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_rater = (m * vals[None]).sum(-1) / n
        score = np.nanmean(per_rater, axis=-1)
        var = np.nanmean(np.nanvar(per_rater, axis=-1, ddof=1), axis=-1)
        return score, var

    full_score, full_var = answer_stats(present[None].astype(float))
    sp = np.empty((len(dims), len(ks), 3))
    va = np.empty((len(dims), len(ks), 3))
    for j, k in enumerate(ks):
        keys = np.where(present[None], rng.random((n_subsets, *present.shape)), np.inf)
        order = np.argsort(np.argsort(keys, axis=-1), axis=-1)
        mask = (order < k) & present[None]
        score, var = answer_stats(mask.astype(float))
        for d in range(len(dims)):
            ok = ~np.isnan(full_score[0, d])
            rho = _spearman_cols(score[:, d][:, ok], full_score[0, d][ok])
            sp[d, j] = (rho.mean(), np.quantile(rho, q), np.quantile(rho, 1 - q))
            v = var[:, d]
            va[d, j] = (v.mean(), np.quantile(v, q), np.quantile(v, 1 - q))
    coords = {"dimension": dims, "k": ks}
    dd = ("dimension", "k")
    return xr.Dataset(
        {
            "spearman_mean": (dd, sp[..., 0]),
            "spearman_low": (dd, sp[..., 1]),
            "spearman_high": (dd, sp[..., 2]),
            "variance_mean": (dd, va[..., 0]),
            "variance_low": (dd, va[..., 1]),
            "variance_high": (dd, va[..., 2]),
            "variance_full": ("dimension", full_var[0]),
        },
        coords=coords,
        attrs={"ci_prob": ci_prob, "n_subsets": n_subsets, "design": design},
    )


# ---------------------------------------------------------------------------- projections


def _projection_parts(dt: xr.DataTree) -> dict[str, xr.DataArray]:
    """Latent answer variance, sentence variance and per-rating error variance (on the
    latent scale) per draw, dimension and design."""
    post = dt["posterior"].to_dataset()
    const = dt["constant_data"].to_dataset()
    var_link = np.pi**2 / 3 if const.attrs["link"] == "logit" else 1.0
    human = np.flatnonzero(const["rater_is_human"].values)
    lam2 = post["discrimination"].isel(rater=human) ** 2
    err = (var_link / lam2).mean("rater")  # chain, draw, dimension, design
    tau2 = (
        post["sigma_sentence"] ** 2
        if "sigma_sentence" in post
        else xr.zeros_like(post["eta"].isel(item=0, drop=True))
    )
    has_sent = xr.DataArray(
        const["design_has_sentences"].values,
        dims="design",
        coords={"design": post["design"].values},
    )
    return {
        "var_eta": post["eta"].var("item"),
        "tau2": tau2 * has_sent,
        "err": err,
        "has_sent": has_sent,
    }


def reliability_projection(
    dt: xr.DataTree,
    *,
    n_raters: Iterable[int] = range(1, 6),
    n_sentences: Iterable[int] = range(1, 7),
) -> xr.DataArray:
    """Model-based reliability of an answer's score for ``r`` raters and ``k`` sentences.

    The answer score is the mean of ``r`` raters' ratings (sentence-level designs: of
    ``k`` sentences, the same for every rater) on the latent scale; its reliability is
    ``Var(eta) / (Var(eta) + tau^2 / k + E_j[Var(link) / lambda_j^2] / (r k))`` per draw,
    dimension and design (``k = 1`` and no ``tau`` term for whole-answer designs), the
    Spearman-Brown logic of generalizability theory applied to the fitted rater model.

    Returns
    -------
    xr.DataArray
        Dims ``chain, draw, dimension, design, n_raters, k`` (a posterior).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> post = xr.Dataset({
    ...     "eta": (("chain", "draw", "item", "dimension"), [[[[0.0], [2.0]]]]),
    ...     "discrimination": (("chain", "draw", "rater", "dimension", "design"),
    ...                        np.full((1, 1, 1, 1, 1), np.pi / np.sqrt(3)))},
    ...     coords={"design": ["coarse"], "dimension": ["c"]})
    >>> const = xr.Dataset({"rater_is_human": ("rater", [True]),
    ...                     "design_has_sentences": ("design", [False])},
    ...                    attrs={"link": "logit"})
    >>> dt = xr.DataTree.from_dict({"posterior": post, "constant_data": const})
    >>> dt.attrs["model"] = "ordinal_raters"
    >>> rel = reliability_projection(dt, n_raters=[1, 3], n_sentences=[1])
    >>> rel.sel(n_raters=3, k=1).values.ravel().tolist()  # Var(eta) = 1, error 1 / 3
    [0.75]
    """
    _check_ordinal(dt, "reliability_projection")
    parts = _projection_parts(dt)
    r = xr.DataArray(np.asarray(list(n_raters), dtype=float), dims="n_raters")
    k = xr.DataArray(np.asarray(list(n_sentences), dtype=float), dims="k")
    k_eff = xr.where(parts["has_sent"], k, 1.0)
    noise = parts["tau2"] / k_eff + parts["err"] / (r * k_eff)
    rel = parts["var_eta"] / (parts["var_eta"] + noise)
    return (
        rel.assign_coords(n_raters=r.values.astype(int), k=k.values.astype(int))
        .transpose("chain", "draw", "dimension", "design", "n_raters", "k")
        .rename("reliability")
    )


def rating_costs(ratings: Ratings) -> dict[str, float]:
    """Seconds of a human rater per answer (whole-answer designs) or per sentence
    (sentence-level designs), from ``duration_s`` (one duration per rater x answer x
    design, repeated on the answer's rows).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a", "b"], "segment": ["1", "2", None],
    ...     "rater": ["x", "x", "x"], "rating": [1, 2, 3], "duration_s": [60.0, 60.0, 40.0],
    ...     "design": ["fine", "fine", "coarse"]}))
    >>> rating_costs(r)
    {'coarse': 40.0, 'fine': 30.0}
    """
    d = ratings.data
    if S.DURATION not in d.columns:
        raise ValueError("rating_costs: the ratings have no 'duration_s' column")
    if S.RATER_KIND in d.columns:
        d = d.filter(pl.col(S.RATER_KIND) == "human")
    ev = (
        d.filter(~pl.col(S.REPEAT), pl.col(S.DURATION).is_not_null())
        .group_by(S.DESIGN, S.ITEM, S.RATER)
        .agg(
            pl.col(S.DURATION).first().alias("t"),
            pl.col(S.SEGMENT).n_unique().alias("ns"),
            pl.col(S.SEGMENT).null_count().alias("nn"),
        )
        .sort(S.DESIGN, S.ITEM, S.RATER)  # a fixed order: the same mean to the last bit
    )
    out = {}
    for (des,), part in ev.group_by(S.DESIGN, maintain_order=True):  # sorted above
        segmented = bool((part["nn"] == 0).all())
        unit_t = part["t"] / part["ns"].cast(pl.Float64) if segmented else part["t"]
        out[str(des)] = float(np.mean(unit_t.to_numpy()))
    return dict(sorted(out.items()))


def _simulate_ranking_task(task: dict[str, Any]) -> tuple[int, np.ndarray, np.ndarray]:
    """One projection task (module level, so that process pools can run it): for every
    posterior draw given, simulate a study with ``r`` raters per answer and ``k``
    sentences and compare its system ranking with the draw's true one. Returns
    (task id, recovered (draws, dimension), Kendall tau (draws, dimension))."""
    from raterstats.agreement.kernels import kendall_tau_b as tau_kernel

    rng = np.random.default_rng(task["seed"])
    eta = task["eta"]  # S, item, dim
    lam, sev = task["lam"], task["sev"]  # S, rater, dim
    cuts = task["cuts"]  # S, dim, K-1
    tau_s = task["tau"]  # S, dim
    beta = task["beta"]  # S, rater, dim
    z = task["z"]  # item
    item_sys = task["item_system"]
    n_sys = int(item_sys.max()) + 1
    r, k, sent = task["r"], task["k"], task["sentences"]
    n_s, n_i, n_d = eta.shape
    n_raters = lam.shape[1]
    levels = np.arange(1, cuts.shape[-1] + 2, dtype=float)
    onehot = (item_sys[:, None] == np.arange(n_sys)).astype(float) / np.bincount(item_sys)
    true = eta.transpose(0, 2, 1) @ onehot  # S, dim, system
    rec = np.empty((n_s, n_d))
    taus = np.empty((n_s, n_d))
    kk = k if sent else 1
    for s in range(n_s):
        who = np.argsort(rng.random((n_i, n_raters)), axis=1)[:, :r]  # item, r
        w = rng.normal(size=(n_i, kk, n_d)) * tau_s[s] if sent else np.zeros((n_i, 1, n_d))
        lat = eta[s][:, None, :] + w  # item, k, dim
        lp = (
            lam[s][who][:, :, None, :] * lat[:, None]
            - sev[s][who][:, :, None, :]
            + beta[s][who][:, :, None, :] * z[:, None, None, None]
        )  # item, r, k, dim
        cum = expit(cuts[s][None, None, None] - lp[..., None])
        u = rng.random((*lp.shape, 1))
        y = levels[(u > cum).sum(-1)]
        item_score = y.mean(axis=(1, 2))  # item, dim
        est = item_score.T @ onehot  # dim, system
        for d in range(n_d):
            t, _ = tau_kernel(true[s, d], est[d])
            # a study that ties every system orders no pair: tau 0 (tau-b is undefined)
            taus[s, d] = t if np.isfinite(t) else 0.0
            # recovered: every pair ordered as in the truth (a tie is not recovered)
            order_true = np.sign(true[s, d][:, None] - true[s, d][None, :])
            order_est = np.sign(est[d][:, None] - est[d][None, :])
            rec[s, d] = float(np.array_equal(order_true, order_est))
    return task["id"], rec, taus


def _executor(max_workers: int | None, client: Any) -> Executor | None:
    if client is not None:
        get = getattr(client, "get_executor", None)
        if get is None:
            raise TypeError(
                "client must be a dask.distributed.Client (an object with get_executor()); "
                "pass a concurrent.futures executor as executor= instead"
            )
        return get()
    workers = (os.cpu_count() or 1) if max_workers is None else int(max_workers)
    if workers <= 1:
        return None
    return ProcessPoolExecutor(max_workers=workers)


def _run_tasks(
    fn: Callable[[Any], Any],
    tasks: list[Any],
    *,
    max_workers: int | None,
    executor: Executor | None,
    client: Any,
) -> list[Any]:
    """``fn`` over ``tasks`` in order: on ``executor``, on the Dask ``client``, on
    ``max_workers`` local processes, or here (one worker)."""
    own = None
    ex = executor
    if ex is None:
        ex = own = _executor(max_workers, client)
    try:
        return list(ex.map(fn, tasks)) if ex is not None else [fn(t) for t in tasks]
    finally:
        if own is not None:
            own.shutdown()


def annotation_budget(
    dt: xr.DataTree,
    ratings: Ratings,
    *,
    n_raters: Iterable[int] = range(1, 6),
    n_sentences: Iterable[int] = range(1, 7),
    n_sims: int = 100,
    max_workers: int | None = None,
    executor: Executor | None = None,
    client: Any = None,
    random_seed: int = 0,
) -> xr.Dataset:
    """Projected reliability, ranking certainty and cost of other annotation designs.

    For every design of the fit, ``r`` raters per answer (``n_raters``) and, for
    sentence-level designs, ``k`` sentences per answer (``n_sentences``): the model-based
    reliability of the answer score (:func:`reliability_projection`, posterior mean), and
    from ``n_sims`` simulated studies (one posterior draw each: the fitted answers'
    latent quality, rater parameters drawn from the fitted human panel, new sentence
    deviations, ordered-logistic ratings) the probability that the study's system ranking
    (by mean rating) equals the true one (by mean latent quality of the same answers;
    every pair ordered as in the truth, so a tie is not a recovery) and the expected
    Kendall tau-b between the two (0 for a simulated study that ties every system, where
    tau-b is undefined); and the cost in rater hours,
    ``answers x r x`` seconds per answer (whole-answer designs) or ``k x`` seconds per
    sentence (:func:`rating_costs` of ``ratings``).

    Parameters
    ----------
    dt : xr.DataTree
        An :class:`~raterstats.OrdinalRaters` fit with system effects.
    ratings : Ratings
        The fitted ratings (for the costs, from ``duration_s``).
    n_sims : int
        Simulated studies per design point (0: reliability and cost only).
    max_workers : int, optional
        Local worker processes (default: the number of cores; 1 runs in this process).
    executor : concurrent.futures.Executor, optional
        Run the simulations on this executor instead.
    client : dask.distributed.Client, optional
        Spread the sweep over a Dask cluster (``client.get_executor()``); dask is optional.
    random_seed : int
        Seed; every task gets its own stream, so results do not depend on the executor.

    Returns
    -------
    xr.Dataset
        Dims ``dimension``, ``design``, ``n_raters``, ``k``: ``reliability``,
        ``reliability_low`` / ``reliability_high`` (90%), ``p_recovered``,
        ``expected_tau``, and ``cost_hours`` (``design, n_raters, k``); the coordinate
        ``has_sentences`` marks sentence-level designs. Whole-answer designs repeat their
        values along ``k``. Sentence-level projections assume answers with at least ``k``
        sentences.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> from raterstats.models import OrdinalRaters
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=30, tune=30, chains=1, random_seed=1, progress=False)
    >>> b = annotation_budget(dt, r, n_raters=[1, 3], n_sentences=[2], n_sims=5,
    ...                       max_workers=1, random_seed=1)
    >>> b["p_recovered"].dims
    ('dimension', 'design', 'n_raters', 'k')
    """
    what = "annotation_budget"
    _check_ordinal(dt, what)
    post = dt["posterior"].to_dataset()
    const = dt["constant_data"].to_dataset()
    if "system_effect" not in post:
        raise ValueError(f"{what}: the fit has no system effects (no 'system' column)")
    rs = [int(x) for x in n_raters]
    ks = [int(x) for x in n_sentences]
    human = np.flatnonzero(const["rater_is_human"].values)
    if not rs or min(rs) < 1 or max(rs) > human.size:
        raise ValueError(
            f"{what}: n_raters must lie in 1..{human.size} (the fitted panel), got {rs}"
        )
    if not ks or min(ks) < 1:
        raise ValueError(f"{what}: n_sentences must be positive, got {ks}")
    dims = [str(d) for d in post["dimension"].values]
    designs = [str(g) for g in post["design"].values]
    rel = reliability_projection(dt, n_raters=rs, n_sentences=ks)
    r_lo, r_hi = _eti(rel, 0.9)
    costs = rating_costs(ratings)
    n_items = post.sizes["item"]
    has_sent = dict(zip(designs, const["design_has_sentences"].values.astype(bool), strict=True))
    cost = np.zeros((len(designs), len(rs), len(ks)))
    for g, des in enumerate(designs):
        if des not in costs:
            raise ValueError(f"{what}: no durations for design {des!r} in ratings")
        per = np.asarray(ks, dtype=float) if has_sent[des] else np.ones(len(ks))
        cost[g] = n_items * np.asarray(rs, dtype=float)[:, None] * per[None, :] * costs[des] / 3600
    shape = (len(dims), len(designs), len(rs), len(ks))
    p_rec = np.full(shape, np.nan)
    e_tau = np.full(shape, np.nan)
    if n_sims:
        rng = np.random.default_rng(random_seed)
        thin = _thin(post, n_sims, rng)
        sq = lambda v, *d: thin[v].transpose("chain", "draw", *d).values[0]  # noqa: E731
        item_sys_names = const["item_system"].values.astype(str)
        systems = [str(s) for s in post["system"].values]
        item_system = np.asarray([systems.index(s) for s in item_sys_names])
        z = const["z_length"].values.astype(float)
        has_len = "length_effect" in thin
        tasks = []
        seeds = np.random.SeedSequence(random_seed).spawn(len(designs) * len(rs) * len(ks))
        tid = 0
        for g, des in enumerate(designs):
            lam = sq("discrimination", "rater", "dimension", "design")[..., g][:, human]
            sev = sq("severity", "rater", "dimension", "design")[..., g][:, human]
            beta = (
                np.broadcast_to(
                    sq("length_effect", "dimension", "design")[..., g][:, None, :], lam.shape
                ).copy()
                if has_len
                else np.zeros_like(lam)
            )
            base = {
                "eta": sq("eta", "item", "dimension"),
                "lam": lam,
                "sev": sev,
                "beta": beta,
                "cuts": sq("cutpoints", "dimension", "design", "cut")[:, :, g],
                "tau": sq("sigma_sentence", "dimension")
                if "sigma_sentence" in thin
                else np.zeros((thin.sizes["draw"], len(dims))),
                "z": z,
                "item_system": item_system,
                "sentences": bool(has_sent[des]),
            }
            for a, r in enumerate(rs):
                for b, k in enumerate(ks):
                    if not has_sent[des] and b > 0:
                        tid += 1
                        continue
                    tasks.append(
                        {**base, "r": r, "k": k, "id": tid, "seed": seeds[tid], "where": (g, a, b)}
                    )
                    tid += 1
        results = _run_tasks(
            _simulate_ranking_task,
            tasks,
            max_workers=max_workers,
            executor=executor,
            client=client,
        )
        where = {t["id"]: t["where"] for t in tasks}
        for task_id, rec, taus in results:
            g, a, b = where[task_id]
            p_rec[:, g, a, b] = rec.mean(axis=0)
            e_tau[:, g, a, b] = taus.mean(axis=0)
        for g, des in enumerate(designs):
            if not has_sent[des]:
                p_rec[:, g] = p_rec[:, g, :, :1]
                e_tau[:, g] = e_tau[:, g, :, :1]
    dd = ("dimension", "design", "n_raters", "k")
    return xr.Dataset(
        {
            "reliability": rel.mean(SAMPLE_DIMS).transpose(*dd),
            "reliability_low": r_lo.transpose(*dd),
            "reliability_high": r_hi.transpose(*dd),
            "p_recovered": (dd, p_rec),
            "expected_tau": (dd, e_tau),
            "cost_hours": (("design", "n_raters", "k"), cost),
        },
        coords={
            "dimension": dims,
            "design": designs,
            "n_raters": rs,
            "k": ks,
            "has_sentences": ("design", [bool(has_sent[g]) for g in designs]),
        },
        attrs={
            "n_sims": n_sims,
            "n_items": n_items,
            "seconds_per_unit": ", ".join(f"{g} {v:.1f}" for g, v in costs.items()),
        },
    )


def cheapest_design(
    budget: xr.Dataset,
    *,
    target: float,
    on: Literal["reliability", "p_recovered", "expected_tau"] = "reliability",
) -> pl.DataFrame:
    """The cheapest design point of :func:`annotation_budget` that reaches ``target`` on
    ``on``, per dimension and for all dimensions at once (the worst dimension must reach
    it). Columns ``dimension, design, n_raters, k, criterion, target, value, cost_hours``;
    dimensions without a design that reaches the target are left out.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> b = xr.Dataset({"reliability": (("dimension", "design", "n_raters", "k"),
    ...                                 np.array([[[[0.5], [0.8]]], [[[0.76], [0.9]]]])),
    ...                 "cost_hours": (("design", "n_raters", "k"), [[[1.0], [2.0]]])},
    ...                coords={"dimension": ["a", "b"], "design": ["coarse"],
    ...                        "n_raters": [1, 2], "k": [1]})
    >>> cheapest_design(b, target=0.75)["n_raters"].to_list()
    [2, 1, 2]
    """
    if on not in budget:
        raise ValueError(f"cheapest_design: {on!r} is not in the budget result")
    val = budget[on]
    cost = budget["cost_hours"]
    rows = []
    groups = [(str(d), val.sel(dimension=d)) for d in val["dimension"].values]
    groups.append(("all dimensions", val.min("dimension")))
    for name, v in groups:
        ok = (v >= target).values
        if not ok.any():
            continue
        c = np.where(ok, np.broadcast_to(cost.transpose(*v.dims).values, ok.shape), np.inf)
        g, a, b = np.unravel_index(np.argmin(c), c.shape)
        rows.append(
            {
                "dimension": name,
                "design": str(v["design"].values[g]),
                "n_raters": int(v["n_raters"].values[a]),
                "k": int(v["k"].values[b]),
                "criterion": on,
                "target": float(target),
                "value": float(v.values[g, a, b]),
                "cost_hours": float(c[g, a, b]),
            }
        )
    schema = {"dimension": pl.String, "design": pl.String, "n_raters": pl.Int64, "k": pl.Int64,
              "criterion": pl.String, "target": pl.Float64, "value": pl.Float64,
              "cost_hours": pl.Float64}  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


# ---------------------------------------------------------------------------- raters


def intra_rater_by_design(ratings: Ratings) -> pl.DataFrame:
    """Intra-rater reliability from the repeats, per design and dimension: the share of
    repeated ratings equal to the first (``percent``) and Cohen's kappa between first and
    repeated ratings (``kappa``), human raters, with the number of pairs.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "b", "a", "b"], "rater": ["x"] * 4,
    ...     "rating": [1, 2, 1, 1], "repeat": [False, False, True, True]}))
    >>> intra_rater_by_design(r)["percent"].to_list()
    [0.5]
    """
    d = ratings
    if S.RATER_KIND in ratings.data.columns:
        d = ratings.filter(rater_kind="human")
    rows = []
    for des in d.designs:
        for dim in d.dimensions:
            part = d.filter(design=des, dimension=dim)
            n = int(part.data[S.REPEAT].sum())
            if n == 0:
                continue
            rows.append(
                {
                    "design": des,
                    "dimension": dim,
                    "n_pairs": n,
                    "percent": intra_rater_agreement(part),
                    "kappa": intra_rater_agreement(part, kind="kappa"),
                }
            )
    return pl.DataFrame(rows)


def judge_agreement(
    ratings: Ratings,
    *,
    judge: str = "llm-judge",
    level_map: Mapping[Any, Any] | None = None,
) -> pl.DataFrame:
    """Agreement of an automatic judge with the mean expert, per dimension and design.

    Per unit (answer or sentence), the experts' (human raters') first ratings are
    averaged and rounded to the nearest level; Randolph's kappa is computed between the
    judge's rating and that mean-expert rating (as in the published clinical-QA study).
    ``level_map`` maps the levels first (e.g. the collapsed 3-point scale).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import OrdinalScale, read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a"] * 3 + ["b"] * 3,
    ...     "rater": ["x", "y", "j"] * 2, "rating": [1, 1, 1, 3, 3, 2],
    ...     "rater_kind": ["human", "human", "llm"] * 2}), scale=OrdinalScale([1, 2, 3]))
    >>> judge_agreement(r, judge="j")["randolph_kappa"].to_list()
    [0.25]
    """
    what = "judge_agreement"
    if judge not in ratings.raters:
        raise ValueError(f"{what}: rater {judge!r} is not in the ratings")
    d = ratings.data.filter(~pl.col(S.REPEAT))
    kind = (
        pl.col(S.RATER_KIND) == "human" if S.RATER_KIND in d.columns else pl.col(S.RATER) != judge
    )
    rows = []
    for dim in ratings.dimensions:
        levels = [float(v) for v in ratings.scale_for(dim).values]
        for des in ratings.designs:
            part = d.filter(pl.col(S.DIMENSION) == dim, pl.col(S.DESIGN) == des)
            if level_map is not None:
                lut = {float(k): float(v) for k, v in level_map.items()}
                part = part.with_columns(
                    pl.col(S.VALUE).replace_strict(lut, return_dtype=pl.Float64)
                )
                cats = sorted(set(lut.values()))
            else:
                cats = levels
            unit = [S.ITEM, S.SEGMENT]
            expert = part.filter(kind).group_by(unit).agg(pl.col(S.VALUE).mean().alias("expert"))
            jj = part.filter(pl.col(S.RATER) == judge).select(*unit, pl.col(S.VALUE).alias("judge"))
            both = expert.join(jj, on=unit, nulls_equal=True)
            if both.height == 0:
                continue
            grid = np.asarray(cats)
            e = both["expert"].to_numpy()
            rounded = grid[np.argmin(np.abs(e[:, None] - grid[None, :]), axis=1)]
            mat = np.column_stack([rounded, both["judge"].to_numpy()])
            rows.append(
                {
                    "dimension": dim,
                    "design": des,
                    "n_units": both.height,
                    "randolph_kappa": randolph_kappa(mat, categories=list(cats)),
                    "exact_agreement": float(np.mean(mat[:, 0] == mat[:, 1])),
                }
            )
    return pl.DataFrame(rows)


def judge_vs_experts(dt: xr.DataTree, *, ci_prob: float = 0.9) -> pl.DataFrame:
    """The judge's severity and discrimination (reliability) from the ordinal rater
    model next to each expert's, per dimension x design, with the judge's rank among all
    raters on discrimination (1 = most discriminating).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> from raterstats.models import OrdinalRaters
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=30, tune=30, chains=1, random_seed=1, progress=False)
    >>> judge_vs_experts(dt).columns[:4]
    ['rater', 'dimension', 'design', 'is_human']
    """
    from raterstats.models.ordinal import rater_table

    _check_ordinal(dt, "judge_vs_experts")
    rt = rater_table(dt, ci_prob=ci_prob)
    cols = ["is_human", "severity", "severity_low", "severity_high", "discrimination",
            "discrimination_low", "discrimination_high", "infit"]  # fmt: skip
    frame = pl.from_pandas(rt[cols].to_dataframe().reset_index())
    frame = frame.with_columns(
        pl.col("discrimination")
        .rank("ordinal", descending=True)
        .over("dimension", "design")
        .alias("discrimination_rank")
    )
    return frame.select("rater", "dimension", "design", *cols, "discrimination_rank").sort(
        "dimension", "design", "is_human", "rater"
    )


# ---------------------------------------------------------------------------- subsampling


def subsample_raters(ratings: Ratings, *, n_raters: int, random_seed: int = 0) -> Ratings:
    """Keep ``n_raters`` randomly chosen raters per item (all their ratings of it: every
    dimension, segment, design and repeat); items with fewer raters keep all of theirs.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings
    >>> sub = subsample_raters(r, n_raters=1, random_seed=2)
    >>> sub.data.group_by("item").agg(pl.col("rater").n_unique())["rater"].max()
    1
    """
    if int(n_raters) != n_raters or n_raters < 1:
        raise ValueError(f"subsample_raters: n_raters must be a positive integer, not {n_raters!r}")
    pairs = ratings.data.select(S.ITEM, S.RATER).unique().sort(S.ITEM, S.RATER)
    u = np.random.default_rng(random_seed).random(pairs.height)
    keep = (
        pairs.with_columns(pl.Series("__u", u))
        .with_columns(pl.col("__u").rank("ordinal").over(S.ITEM).alias("__rk"))
        .filter(pl.col("__rk") <= int(n_raters))
        .select(S.ITEM, S.RATER)
    )
    data = ratings.data.join(keep, on=[S.ITEM, S.RATER], how="semi", maintain_order="left")
    return ratings.derive(data, step=f"subsample_raters({int(n_raters)}, seed={random_seed})")


def _subsample_task(task: dict[str, Any]) -> np.ndarray:
    """One subsample of :func:`subsampling_study` (module level, so that process pools can
    run it): its ranking agreement with the full ranking, (statistic, dimension)."""
    from raterstats.ranking import rank_systems, ranking_agreement

    seed, full, dims = task["seed"], task["full"], task["dims"]
    sub = subsample_raters(task["ratings"], n_raters=task["r"], random_seed=seed)
    ds = rank_systems(
        sub, method=task["method"], score_map=task["score_map"], n_boot=0, random_seed=seed
    )
    out = np.full((len(task["statistics"]), len(dims)), np.nan)
    for d, dim in enumerate(dims):
        with warnings.catch_warnings():
            # a subsample can tie every system (e.g. MACE with one rater per item giving
            # all items one label): undefined, counted in n_undefined
            warnings.simplefilter("ignore", DegenerateAgreementWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            ag = ranking_agreement(
                full.sel(dimension=dim),
                ds["score_mean"].sel(dimension=dim),
                statistics=task["statistics"],
            )
        out[:, d] = ag["mean"].values
    return out


def subsampling_study(
    ratings: Ratings,
    *,
    n_raters: Iterable[int] = (1, 2, 3),
    n_repeats: int = 10,
    method: RawMethod = "mace",
    score_map: Any = None,
    statistics: Sequence[str] = ("kendall_tau_b", "spearman_rho"),
    ci_prob: float = 0.9,
    max_workers: int | None = 1,
    executor: Executor | None = None,
    client: Any = None,
    random_seed: int = 0,
) -> xr.Dataset:
    """How well rankings from fewer raters per item agree with the full ranking.

    For every ``r`` in ``n_raters`` and ``n_repeats`` random subsamples
    (:func:`subsample_raters`), the systems are ranked from the subsample with
    :func:`~raterstats.rank_systems` (``method``: ``"mace"`` / ``"dawid_skene"`` EM labels,
    ``"mean"``, ``"majority"`` or ``"pyramid"``; point scores) and compared with the
    ranking from all the ratings by :func:`~raterstats.ranking.ranking_agreement`. The
    subsamples are independent fits (EM for MACE / Dawid-Skene) and run in parallel with
    ``max_workers`` local processes (``None``: one per core), an ``executor`` or a Dask
    ``client`` (as in :func:`annotation_budget`); each has its own seed, so the result
    does not depend on where it ran.

    Returns
    -------
    xr.Dataset
        ``value`` (statistic, n_raters, repeat, dimension), its ``mean`` / ``low`` /
        ``high`` over the repeats where it is defined, and ``n_undefined`` (repeats where
        the subsample ties every system, e.g. MACE with one rater per item).

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=10, n_systems=4, raters_per_response=3,
    ...                        random_seed=1).ratings.filter(dimension="answers_question")
    >>> ds = subsampling_study(r, n_raters=[1, 3], n_repeats=2, method="pyramid",
    ...                        score_map="yes_partially_no")
    >>> float(ds["mean"].sel(statistic="kendall_tau_b", n_raters=3).item())
    1.0
    """
    from raterstats.ranking import rank_systems

    rs = [int(x) for x in n_raters]
    full = rank_systems(
        ratings, method=method, score_map=score_map, n_boot=0, random_seed=random_seed
    )
    dims = [str(d) for d in full["dimension"].values]
    seeds = np.random.SeedSequence(random_seed).generate_state(len(rs) * n_repeats)
    base = {
        "ratings": ratings,
        "full": full["score_mean"],
        "dims": dims,
        "method": method,
        "score_map": score_map,
        "statistics": list(statistics),
    }
    tasks = [
        {**base, "r": r, "seed": int(seeds[a * n_repeats + rep])}
        for a, r in enumerate(rs)
        for rep in range(n_repeats)
    ]
    results = _run_tasks(
        _subsample_task, tasks, max_workers=max_workers, executor=executor, client=client
    )
    # (statistic, n_raters, repeat, dimension)
    vals = np.stack(results).reshape(len(rs), n_repeats, len(statistics), len(dims))
    vals = vals.transpose(2, 0, 1, 3)
    q = (1 - ci_prob) / 2
    da = xr.DataArray(
        vals,
        dims=("statistic", "n_raters", "repeat", "dimension"),
        coords={
            "statistic": list(statistics),
            "n_raters": rs,
            "repeat": np.arange(n_repeats),
            "dimension": dims,
        },
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells stay NaN
        summary = {
            "mean": da.mean("repeat"),
            "low": da.quantile(q, "repeat").drop_vars("quantile"),
            "high": da.quantile(1 - q, "repeat").drop_vars("quantile"),
        }
    return xr.Dataset(
        {"value": da, **summary, "n_undefined": da.isnull().sum("repeat")},
        attrs={"method": method, "ci_prob": ci_prob, "n_repeats": n_repeats},
    )


__all__ = [
    "annotation_budget",
    "cheapest_design",
    "compare_designs",
    "design_table",
    "intra_rater_by_design",
    "judge_agreement",
    "judge_vs_experts",
    "partial_annotation",
    "rating_costs",
    "reliability_projection",
    "subsample_raters",
    "subsampling_study",
]
