"""Comparing annotation designs by agreement: posterior agreement per design, partial
annotation and intra-rater reliability per design.

:func:`compare_designs` answers "which design is more reliable?" from a fit of
:class:`~raterstats.OrdinalRaters`: the model-implied reliability per dimension x design
(:func:`raterstats.models.ordinal.reliability`), posterior predictive Randolph's kappa and
Krippendorff's alpha per design, and P(design A more reliable than B) for each.
A fit of MACE or Dawid-Skene goes to :mod:`raterstats.design.categorical` (same layout).
:func:`partial_annotation` is the published subsampling analysis (k of an answer's
sentences); :func:`intra_rater_by_design` is the agreement of raters with themselves on
the repeats. :func:`check_ordinal_fit` and :func:`thin_posterior` are shared by the other
modules of :mod:`raterstats.design`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import defaults as D
from raterstats import schema as S
from raterstats.agreement import intra_rater_agreement, krippendorff_alpha, randolph_kappa
from raterstats.checks import check_counts
from raterstats.design.categorical import compare_categorical_designs, is_categorical_fit
from raterstats.health import flag_result
from raterstats.intervals import SAMPLE_DIMS, eti, eti_np
from raterstats.models import OrdinalRaters, is_fit_of
from raterstats.ppc_readout import ppc_readout_text
from raterstats.ratings import Ratings

#: ``attrs["reliability_measure"]`` of an ordinal comparison
RELIABILITY_MEASURE_ORDINAL = (
    "reliability is the ordinal model's share of latent-scale variance due to the rated unit, "
    "lambda^2 Var(unit) / (lambda^2 Var(unit) + Var(link)), averaged over the human raters"
)


def check_ordinal_fit(dt: xr.DataTree, what: str) -> None:
    """Raise ``ValueError`` unless ``dt`` is a fit of :class:`~raterstats.OrdinalRaters`.

    Parameters
    ----------
    dt : xr.DataTree
        A fit.
    what : str
        The caller's name, for the message.

    Examples
    --------
    >>> import xarray as xr
    >>> check_ordinal_fit(xr.DataTree(), "f")
    Traceback (most recent call last):
    ...
    ValueError: f: expected a fit of OrdinalRaters, got a DataTree with model None
    """
    if not is_fit_of(dt, OrdinalRaters):
        raise ValueError(
            f"{what}: expected a fit of OrdinalRaters, got a DataTree with model "
            f"{dt.attrs.get('model')!r}"
        )


def thin_posterior(post: xr.Dataset, n: int, rng: np.random.Generator) -> xr.Dataset:
    """``n`` draws of the posterior, chosen at random (without replacement; all of them when
    there are fewer), as one chain.

    Parameters
    ----------
    post : xr.Dataset
        A posterior with dims ``chain`` and ``draw``.
    n : int
        Draws to keep.
    rng : np.random.Generator
        The source of the choice.

    Returns
    -------
    xr.Dataset
        Dims ``chain`` (size 1), ``draw`` (``min(n, chains x draws)``), then the others.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> post = xr.Dataset({"x": (("chain", "draw"), np.arange(6.0).reshape(2, 3))})
    >>> thin_posterior(post, 4, np.random.default_rng(0))["x"].sizes
    Frozen({'chain': 1, 'draw': 4})
    """
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
    ci_prob: float | None = None,
    random_seed: int = D.RANDOM_SEED,
) -> xr.Dataset:
    """Compare the reliability of annotation designs per dimension, from an ordinal or a
    categorical fit.

    A fit of :class:`~raterstats.MACE` or :class:`~raterstats.DawidSkene` is compared by
    :func:`~raterstats.design.categorical.compare_categorical_designs` (same layout;
    ``reliability`` is then the model-implied Cohen's kappa of a human rater against the
    true label, beside ``accuracy``, and alpha is nominal); ``attrs["reliability_measure"]``
    says which measure a result holds.

    Designs of different kinds of judgment (absolute ratings, pairwise comparisons,
    rankings) are compared by :func:`~raterstats.design.kinds.compare_design_kinds`, by
    simulation from a declared truth and cost per judgment.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of :class:`~raterstats.OrdinalRaters`, :class:`~raterstats.MACE` or
        :class:`~raterstats.DawidSkene` with several designs.
    n_replicates : int
        Posterior predictive replicates of the ratings (posterior draws chosen at random)
        on which Randolph's kappa and Krippendorff's alpha (ordinal) are computed; 0 skips
        the posterior predictive part.
    level_map : mapping, optional
        Map of the 1-based rating levels before computing agreement, e.g.
        ``{1: -1, 2: -1, 3: 0, 4: 1, 5: 1}`` for the collapsed 3-point scale of the
        published clinical-QA analysis; the category domain is the mapped values. Ordinal
        fits only (a categorical fit's labels are its categories already: a ValueError).
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
        with a value at least the observed one), and ``attrs["ppc_readout"]``: that check
        in words, one line per statistic x dimension x design
        (:func:`raterstats.diagnostics.ppc_readout`). ``attrs["fit_warning"]`` /
        ``attrs["uncertainty_note"]``: the fit's health (:func:`raterstats.health.flag_result`);
        ``attrs["reliability_measure"]``: what ``reliability`` is, in one sentence.

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
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
    from raterstats.models.base import model_from_datatree
    from raterstats.models.ordinal import data_from_constants, reliability

    what = "compare_designs"
    check_counts(where=what, n_replicates=(n_replicates, 0))
    if is_categorical_fit(dt):
        if level_map is not None:
            raise ValueError(
                f"{what}: level_map applies to ordinal fits only; this is a fit of "
                f"{dt.attrs.get('model')!r}, whose labels are its categories (collapse the "
                "ratings before fitting, e.g. with a Scheme, instead)"
            )
        return compare_categorical_designs(
            dt, n_replicates=n_replicates, ci_prob=ci_prob, random_seed=random_seed
        )
    check_ordinal_fit(dt, what)
    designs = [str(g) for g in dt["posterior"].to_dataset()["design"].values]
    dims = [str(d) for d in dt["posterior"].to_dataset()["dimension"].values]
    rel = reliability(dt)
    lo, hi = eti(rel, ci_prob)
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
        attrs={
            "ci_prob": ci_prob,
            "n_replicates": n_replicates,
            "reliability_measure": RELIABILITY_MEASURE_ORDINAL,
        },
    )
    flag_result(out, dt)
    if not n_replicates:
        return out
    rng = np.random.default_rng(random_seed)
    model = model_from_datatree(dt)
    data = data_from_constants(dt)
    post = thin_posterior(dt["posterior"].to_dataset(), n_replicates, rng)
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
    for name, arr, obs_v in (("kappa", kap, kap_obs), ("alpha", alp, alp_obs)):
        da = xr.DataArray(
            arr,
            dims=("replicate", "dimension", "design"),
            coords={"replicate": np.arange(n), "dimension": dims, "design": designs},
        )
        out[name] = da
        out[f"{name}_mean"] = da.mean("replicate")
        out[f"{name}_low"], out[f"{name}_high"] = eti(da, ci_prob, dim="replicate")
        out[f"{name}_observed"] = (("dimension", "design"), obs_v)
        out[f"p_{name}_higher"] = (
            (da > da.rename(design="design_b"))
            .mean("replicate")
            .transpose("dimension", "design", "design_b")
        )
        out[f"{name}_ppp"] = (da >= out[f"{name}_observed"]).mean("replicate")
    out.attrs["ppc_readout"] = ppc_readout_text(out, ci_prob=ci_prob)
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
    ratings: Ratings | xr.DataTree,
    fitted_ratings: Ratings | None = None,
    *,
    ks: Iterable[int] = range(1, 7),
    design: str = "fine",
    n_subsets: int = 100,
    ci_prob: float | None = None,
    random_seed: int = D.RANDOM_SEED,
    rule: Any = None,
    n_raters: Iterable[int] | None = None,
    max_workers: int | None = None,
    executor: Any = None,
    client: Any = None,
) -> xr.Dataset:
    """What is lost when raters annotate only ``k`` of an answer's sentences.

    Given a MACE or Dawid-Skene fit and its ratings (``partial_annotation(fit, ratings,
    ...)``), the probability that an answer-level label from ``k`` annotated sentences
    equals the true one, by simulation from the posterior (``n_subsets`` simulated
    studies; ``rule`` the answer rule, default ``"any_negative"``; ``n_raters`` default
    1-5; ``max_workers``, ``executor``, ``client`` where the simulations run): see
    :func:`~raterstats.design.budget_categorical.partial_annotation_categorical`. Given
    ratings, the published subsampling analysis below.

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
    if isinstance(ratings, xr.DataTree):
        if fitted_ratings is None:
            raise ValueError(f"{what}: with a fit, pass the fitted ratings too: (fit, ratings)")
        # imported here: the categorical version builds on the budget's executor
        from raterstats.design.budget_categorical import partial_annotation_categorical

        return partial_annotation_categorical(
            ratings, fitted_ratings, ks=ks, design=design, n_sims=n_subsets, ci_prob=ci_prob,
            random_seed=random_seed, rule="any_negative" if rule is None else rule,
            n_raters=range(1, 6) if n_raters is None else n_raters, max_workers=max_workers,
            executor=executor, client=client,
        )  # fmt: skip
    fit_only = {"fitted_ratings": fitted_ratings, "rule": rule, "n_raters": n_raters,
                "max_workers": max_workers, "executor": executor, "client": client}  # fmt: skip
    extra = [k for k, v in fit_only.items() if v is not None]
    if extra:
        raise TypeError(f"{what}: {extra} apply to a fit only: partial_annotation(fit, ratings)")
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1:
        raise ValueError(f"{what}: ks must be positive integers, got {ks}")
    cube, dims, _items, _raters = _fine_cube(ratings, design, what)
    rng = np.random.default_rng(random_seed)
    present = ~np.isnan(cube).all(axis=2)  # dim, answer, sentence
    vals = np.nan_to_num(cube)
    rated = (~np.isnan(cube)).astype(float)

    def answer_stats(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # mask: (S, dim, answer, sentence) -> per-rater means (S, dim, answer, rater)
        m = mask[:, :, :, None, :] * rated[None]
        n = m.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_rater = (m * vals[None]).sum(-1) / n
        score = np.nanmean(per_rater, axis=-1)
        var = np.nanmean(np.nanvar(per_rater, axis=-1, ddof=1), axis=-1)
        return score, var

    def summary(x: np.ndarray) -> tuple[float, float, float]:
        # mean and interval over the subsets; an undefined subset (NaN) makes all three NaN
        if np.isnan(x).any():
            return np.nan, np.nan, np.nan
        low, high = eti_np(x, ci_prob)
        return float(x.mean()), float(low), float(high)

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
            sp[d, j] = summary(rho)
            va[d, j] = summary(var[:, d])
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


# ---------------------------------------------------------------------------- raters


def intra_rater_by_design(ratings: Ratings) -> pl.DataFrame:
    """Intra-rater reliability from the repeats, per design and dimension: the share of
    repeat pairs given the same rating (``percent``) and Cohen's kappa between the earlier
    and the later rating of the pairs (``kappa``), human raters, with the number of pairs
    (``n_pairs``: a unit a rater rated ``m`` times gives ``m (m - 1) / 2`` pairs, see
    :func:`raterstats.agreement.intra_rater_agreement`).

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
            n = part.repeat_pairs().height
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


__all__ = [
    "check_ordinal_fit",
    "compare_designs",
    "design_table",
    "intra_rater_by_design",
    "partial_annotation",
    "thin_posterior",
]
