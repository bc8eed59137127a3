"""System rankings with uncertainty, ranking agreement, label-distribution tables and
case-difficulty profiles.

:func:`rank_systems` turns a fitted model (``OrdinalRaters``: the system effects / fair
averages; ``MACE`` / ``DawidSkene``: item label posteriors mapped through a score map and
averaged per system) or raw :class:`~raterstats.Ratings` (mean score, majority vote, the
summed "Pyramid" score, EM labels of MACE / Dawid-Skene, all with a case bootstrap) into
draws of a score per system, and summarises them in one labelled ``xr.Dataset``: score
summaries, pairwise ``P(a > b)``, credible intervals of the differences, rank
probabilities, expected ranks and a plain-language verdict per pair.

:func:`ranking_agreement` compares two rankings where either side may be a posterior (then
the result is a distribution of Kendall's tau-b / Spearman's rho / RBO / NRP over draws),
reusing the point functions of :mod:`raterstats.agreement.ranking`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.agreement.ranking import (
    kendall_tau_b,
    normalized_rank_position,
    rbo,
    spearman_rho,
)
from raterstats.ratings import Ratings
from raterstats.scales import CategoricalScale
from raterstats.scoring import (
    ScoreMapArg,
    as_draws,
    item_system_table,
    score_vector,
    system_means,
)

SAMPLE_DIMS = ("chain", "draw")
RawMethod = Literal["mean", "majority", "pyramid", "mace", "dawid_skene"]

#: Ranking-agreement statistics understood by :func:`ranking_agreement`.
RANKING_STATISTICS = ("kendall_tau_b", "spearman_rho", "rbo", "normalized_rank_position")


# ---------------------------------------------------------------------------- kernels


def rank_draws(
    scores: np.ndarray, rng: np.random.Generator, *, descending: bool = True
) -> np.ndarray:
    """Ranks (1 = best) of the last axis of ``scores`` for every leading index, ties broken
    at random so that every draw is a permutation.

    Examples
    --------
    >>> import numpy as np
    >>> rank_draws(np.array([[0.2, 0.9, 0.5]]), np.random.default_rng(0))
    array([[3, 1, 2]])
    """
    x = -scores if descending else scores
    jitter = rng.random(x.shape)
    order = np.lexsort((jitter, x), axis=-1)  # primary key x, ties by jitter
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, x.shape[-1] + 1), axis=-1)
    return ranks


# ---------------------------------------------------------------------------- summaries


def _eti(da: xr.DataArray, prob: float) -> tuple[xr.DataArray, xr.DataArray]:
    """Lower and upper bounds of the equal-tailed interval over the sample dims (also used
    by :mod:`raterstats.design`)."""
    import arviz_stats as azs

    ci = azs.eti(da, prob=prob, dim=list(SAMPLE_DIMS))
    return ci.isel(ci_bound=0, drop=True), ci.isel(ci_bound=1, drop=True)


def _verdict(
    a: str, b: str, low: float, high: float, p_better: float, ci_prob: float, rope: float | None
) -> str:
    level = f"{100 * ci_prob:.0f}%"
    if a == b:
        return ""
    if rope is not None and -rope <= low and high <= rope:
        return (
            f"{a} and {b} are practically equivalent (the {level} interval of the "
            f"difference lies within +/-{rope:g})"
        )
    margin = rope or 0.0
    if low > margin:
        return f"{a} is better than {b} (credible at {level}; P(a > b) = {p_better:.2f})"
    if high < -margin:
        return f"{a} is worse than {b} (credible at {level}; P(a > b) = {p_better:.2f})"
    extra = f" beyond +/-{rope:g}" if rope is not None else ""
    return (
        f"no credible difference{extra} between {a} and {b} at {level} (P(a > b) = {p_better:.2f})"
    )


def summarize_ranking(
    scores: xr.DataArray,
    *,
    ci_prob: float = 0.9,
    rope: float | None = None,
    higher_is_better: bool = True,
    random_seed: int = 0,
) -> xr.Dataset:
    """Summarise draws of one score per system into a ranking with uncertainty.

    Parameters
    ----------
    scores : xr.DataArray
        Draws with dims ``chain``, ``draw``, ``system`` and optionally others (e.g.
        ``dimension``, ``design``), summarised separately.
    ci_prob : float
        Probability of the equal-tailed intervals (arviz-stats ``eti``).
    rope : float, optional
        Half-width of a region of practical equivalence around a zero difference.
    higher_is_better : bool
        Rank 1 goes to the highest score (False: to the lowest).
    random_seed : int
        Seed for breaking ties between equal scores in a draw.

    Returns
    -------
    xr.Dataset
        ``score`` (the draws), ``score_mean`` / ``score_sd`` / ``score_low`` /
        ``score_high``; per pair (``system`` x ``system_b``) ``p_better`` (P(score_a >
        score_b), or lower when ``higher_is_better`` is False), ``diff_mean`` /
        ``diff_low`` / ``diff_high`` (score_a - score_b), ``p_rope`` (with ``rope``) and the
        text ``verdict``; ``rank_prob`` (``system`` x ``rank``; sums to 1 over ranks and over
        systems) and ``expected_rank``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> draws = xr.DataArray(np.array([[[1.0, 0.0], [2.0, 0.5], [0.0, 1.0], [3.0, 0.0]]]),
    ...                      dims=("chain", "draw", "system"), coords={"system": ["a", "b"]})
    >>> ds = summarize_ranking(draws)
    >>> float(ds["p_better"].sel(system="a", system_b="b"))
    0.75
    >>> ds["rank_prob"].sel(system="a").values.tolist()
    [0.75, 0.25]
    >>> ds["expected_rank"].values.tolist()
    [1.25, 1.75]
    """
    problems = [f"scores need dims {d!r}" for d in (*SAMPLE_DIMS, "system") if d not in scores.dims]
    if not 0 < ci_prob < 1:
        problems.append(f"ci_prob must lie in (0, 1), not {ci_prob!r}")
    if rope is not None and not rope > 0:
        problems.append(f"rope must be a positive number, not {rope!r}")
    if problems:
        raise ValueError("; ".join(problems))
    if scores.sizes["system"] < 2:
        raise ValueError(f"a ranking needs at least two systems, got {scores.sizes['system']}")
    extra = [d for d in scores.dims if d not in (*SAMPLE_DIMS, "system")]
    scores = scores.transpose(*SAMPLE_DIMS, *extra, "system").astype(float).rename("score")
    systems = [str(s) for s in scores["system"].values]
    other = scores.rename(system="system_b")
    diff = scores - other
    sign = 1.0 if higher_is_better else -1.0
    p_better = (sign * diff > 0).mean(SAMPLE_DIMS)
    d_low, d_high = _eti(diff, ci_prob)
    s_low, s_high = _eti(scores, ci_prob)
    rng = np.random.default_rng(random_seed)
    ranks = rank_draws(scores.values, rng, descending=higher_is_better)
    m = len(systems)
    onehot = ranks[..., None] == np.arange(1, m + 1)  # chain, draw, *extra, system, rank
    rank_prob = onehot.mean(axis=(0, 1))
    ext_coords = {d: scores[d].values for d in extra}
    ds = xr.Dataset(
        {
            "score": scores,
            "score_mean": scores.mean(SAMPLE_DIMS),
            "score_sd": scores.std(SAMPLE_DIMS),
            "score_low": s_low,
            "score_high": s_high,
            "p_better": p_better,
            "diff_mean": diff.mean(SAMPLE_DIMS),
            "diff_low": d_low,
            "diff_high": d_high,
            "rank_prob": ((*extra, "system", "rank"), rank_prob),
            "expected_rank": ((*extra, "system"), ranks.mean(axis=(0, 1))),
        },
        coords={**ext_coords, "system": systems, "system_b": systems, "rank": np.arange(1, m + 1)},
    )
    if rope is not None:
        ds["p_rope"] = (abs(diff) <= rope).mean(SAMPLE_DIMS)
    pair = ds[["diff_low", "diff_high", "p_better"]].transpose(*extra, "system", "system_b")
    lo, hi, pb = (pair[v].values for v in ("diff_low", "diff_high", "p_better"))
    if not higher_is_better:
        lo, hi = -hi, -lo
    text = np.empty(lo.shape, dtype=object)
    for idx in np.ndindex(lo.shape):
        a, b = systems[idx[-2]], systems[idx[-1]]
        text[idx] = _verdict(a, b, float(lo[idx]), float(hi[idx]), float(pb[idx]), ci_prob, rope)
    ds["verdict"] = ((*extra, "system", "system_b"), text.astype(str))
    ds.attrs.update(
        {
            "ci_prob": ci_prob,
            "rope": float("nan") if rope is None else float(rope),
            "higher_is_better": int(higher_is_better),
            "n_draws": int(scores.sizes["chain"] * scores.sizes["draw"]),
        }
    )
    return ds


# ---------------------------------------------------------------------------- score maps


# ---------------------------------------------------------------------------- sources


def _ordinal_scores(dt: xr.DataTree, score: str) -> xr.DataArray:
    from raterstats.models.ordinal import system_scores

    sc = system_scores(dt)
    if score not in ("fair_average", "latent"):
        raise ValueError(
            f"score must be 'fair_average' or 'latent' for an OrdinalRaters fit, not {score!r}"
        )
    return (
        sc[score]
        .astype(str(sc[score].dtype))
        .assign_coords(system=[str(s) for s in sc["system"].values])
    )


def _label_prob_draws(
    dt: xr.DataTree, *, max_draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, Any]:
    """Per-draw label posteriors ``(S, n_units, K)`` of a MACE / Dawid-Skene fit."""
    from raterstats.models.base import model_from_datatree
    from raterstats.models.latent_class import LatentClassModel, data_from_groups, logsumexp_np

    model = model_from_datatree(dt)
    if not isinstance(model, LatentClassModel):
        raise TypeError(f"{dt.attrs.get('model')!r} fits have no item label posteriors")
    data = data_from_groups(dt["constant_data"].to_dataset(), dt["observed_data"].to_dataset())
    params = model.params_from_posterior(dt["posterior"].to_dataset())
    n = next(iter(params.values())).shape[0]
    keep = np.sort(rng.choice(n, size=min(n, max_draws), replace=False))
    params = {k: v[keep] for k, v in params.items()}
    joint = model.pattern_log_joint(params, data)
    prob = np.exp(joint - logsumexp_np(joint, axis=-1)[..., None])
    return np.nan_to_num(prob[:, data.unit_pattern]), data


def _categorical_scores(
    dt: xr.DataTree,
    ratings: Ratings | None,
    score_map: ScoreMapArg,
    *,
    labels: str,
    n_boot: int,
    max_draws: int,
    rng: np.random.Generator,
) -> xr.DataArray:
    what = "rank_systems"
    if labels not in ("sample", "expected", "map"):
        raise ValueError(f"{what}: labels must be 'sample', 'expected' or 'map', not {labels!r}")
    if ratings is None:
        raise ValueError(
            f"{what}: a {dt.attrs.get('model')} fit does not store which system produced each "
            "item; pass ratings= (the ratings that were fitted, with a 'system' column)"
        )
    table = item_system_table(ratings, what)
    prob, data = _label_prob_draws(dt, max_draws=max_draws, rng=rng)
    seg = np.asarray(data.unit_segment)
    if (seg != "").any():
        raise ValueError(
            f"{what}: the fit has segment-level units; rank systems from whole-item ratings "
            "(aggregate segments first)"
        )
    items = sorted(set(data.unit_item))
    known = set(table[S.ITEM].to_list())
    unknown = [i for i in items if i not in known]
    if unknown:
        raise ValueError(f"{what}: items {unknown[:5]} of the fit are not in ratings=")
    pos = {it: k for k, it in enumerate(items)}
    unit_item = np.asarray([pos[i] for i in data.unit_item])
    n_rep = n_boot if n_boot else prob.shape[0]
    rows = np.arange(n_rep) % prob.shape[0]
    out = []
    for d, dim in enumerate(data.dimensions):
        levels = data.categories[d]
        sv = score_vector(dim, levels, score_map, what)
        sel = np.flatnonzero(data.unit_dim == d)
        p = prob[:, sel, : len(levels)]
        if labels == "sample":
            u = rng.random((n_rep, sel.size, 1))
            code = np.minimum((u > np.cumsum(p[rows], axis=-1)).sum(-1), len(levels) - 1)
            val = sv[code]
        elif labels == "map":
            val = sv[np.argmax(p, axis=-1)]
        else:
            val = p @ sv
        item_scores = np.full((val.shape[0], len(items)), np.nan)
        item_scores[:, unit_item[sel]] = val
        arr, systems = system_means(item_scores, table, items, n_boot=n_boot, rng=rng)
        out.append(arr)
    return as_draws(np.stack(out, axis=1), systems, {"dimension": list(data.dimensions)})


def _raw_scores(
    ratings: Ratings,
    method: str,
    score_map: ScoreMapArg,
    *,
    n_boot: int,
    rng: np.random.Generator,
    random_seed: int,
) -> xr.DataArray:
    what = "rank_systems"
    if method in ("mace", "dawid_skene"):
        from raterstats.models import MACE, DawidSkene

        model = MACE() if method == "mace" else DawidSkene()
        dt = model.fit(ratings, method="em", random_seed=random_seed)
        return _categorical_scores(
            dt, ratings, score_map, labels="map", n_boot=n_boot, max_draws=1, rng=rng
        )
    if method not in ("mean", "majority", "pyramid"):
        raise ValueError(
            f"{what}: method must be one of 'mean', 'majority', 'pyramid', 'mace', "
            f"'dawid_skene' for raw ratings, not {method!r}"
        )
    if ratings.has_segments:
        raise ValueError(
            f"{what}: rank from whole-item ratings (filter a design or aggregate segments first)"
        )
    table = item_system_table(ratings, what)
    d = ratings.data.filter(~pl.col(S.REPEAT))
    items = sorted(d[S.ITEM].unique().to_list())
    pos = {it: k for k, it in enumerate(items)}
    dims = list(ratings.dimensions)
    out = []
    for dim in dims:
        part = d.filter(pl.col(S.DIMENSION) == dim)
        scale = ratings.scale_for(dim)
        if isinstance(scale, CategoricalScale):
            labels = [str(lv) for lv in scale.levels]
            sv = score_vector(dim, labels, score_map, what)
            part = part.with_columns(
                pl.col(S.CODE)
                .replace_strict(dict(enumerate(sv.tolist())), return_dtype=pl.Float64)
                .alias("__s")
            )
        else:
            part = part.with_columns(pl.col(S.VALUE).cast(pl.Float64).alias("__s"))
        if method == "mean":
            per = part.group_by(S.ITEM).agg(pl.col("__s").mean())
        elif method == "pyramid":
            per = part.group_by(S.ITEM).agg(pl.col("__s").sum())
        else:
            if not isinstance(scale, CategoricalScale):
                raise ValueError(f"{what}: majority vote needs a categorical scale on {dim!r}")
            # most frequent category; ties go to the lower score (a conservative vote)
            per = (
                part.group_by(S.ITEM, "__s")
                .agg(pl.len().alias("n"))
                .sort(S.ITEM, "n", "__s", descending=[False, True, False])
                .group_by(S.ITEM, maintain_order=True)
                .first()
                .select(S.ITEM, "__s")
            )
        scores = np.full((1, len(items)), np.nan)
        scores[0, [pos[i] for i in per[S.ITEM].to_list()]] = per["__s"].to_numpy()
        arr, systems = system_means(scores, table, items, n_boot=n_boot, rng=rng)
        out.append(arr)
    return as_draws(np.stack(out, axis=1), systems, {"dimension": dims})


def rank_systems(
    source: xr.DataTree | Ratings,
    *,
    method: RawMethod = "mean",
    ratings: Ratings | None = None,
    score: Literal["fair_average", "latent"] = "fair_average",
    score_map: ScoreMapArg = None,
    ci_prob: float = 0.9,
    rope: float | None = None,
    n_boot: int = 1000,
    labels: Literal["sample", "expected", "map"] = "sample",
    max_draws: int = 250,
    random_seed: int = 0,
) -> xr.Dataset:
    """Rank systems with uncertainty, from a fitted model or from raw ratings.

    Parameters
    ----------
    source : xr.DataTree or Ratings
        A fit of :class:`~raterstats.OrdinalRaters` (system scores per dimension and
        design), :class:`~raterstats.MACE` or :class:`~raterstats.DawidSkene` (label
        posteriors mapped through ``score_map``, averaged per system; needs ``ratings``),
        or raw ratings (then ``method`` says how to score them).
    method : {"mean", "majority", "pyramid", "mace", "dawid_skene"}
        For raw ratings: mean score over raters; the score of the majority label (ties:
        the lower score); the summed "Pyramid" score (scores summed over an item's raters,
        averaged over the system's cases, as in shared-task reports); or the labels of a
        MACE / Dawid-Skene EM fit. Each gets a bootstrap over cases (questions; items when
        there is no question column) with ``n_boot`` replicates.
    ratings : Ratings, optional
        The fitted ratings, for a MACE / Dawid-Skene fit: the item -> system map (the
        fit's DataTree does not store it).
    score : {"fair_average", "latent"}
        For an ordinal fit: the expected rating of a typical rater per design, or the
        latent system effect (one per dimension).
    score_map : ScoreMap, str or mapping, optional
        Scores of categorical labels: a :class:`~raterstats.ScoreMap`, its name
        (``"yes_partially_no"``), ``{dimension: ScoreMap | name | {label: score}}`` or one
        ``{label: score}`` for all dimensions. Numeric labels score as their value.
    ci_prob, rope
        Interval probability and optional region of practical equivalence (in score units)
        for the verdicts.
    n_boot : int
        Case-bootstrap replicates for raw ratings. For a MACE / Dawid-Skene fit: the number
        of replicates, each taking a posterior draw in turn, its own sample of the true
        labels and its own bootstrap of the cases (so that an EM fit, with one draw, still
        carries label and case-sampling uncertainty); 0: one replicate per draw, no
        bootstrap.
    labels : {"sample", "expected", "map"}
        For a MACE / Dawid-Skene fit, the item score: the score of a true label sampled from
        its posterior, the posterior expected score, or the score of the most probable
        label.
    max_draws : int
        Posterior draws used for a MACE / Dawid-Skene fit (chosen at random).
    random_seed : int
        Seed of the bootstrap, the label samples and tie-breaking.

    Returns
    -------
    xr.Dataset
        See :func:`summarize_ranking`; ``attrs["source"]`` says what was ranked.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=8, n_systems=4, random_seed=1).ratings
    >>> ds = rank_systems(r.filter(dimension="answers_question"), method="pyramid",
    ...                   score_map="yes_partially_no", n_boot=200, random_seed=1)
    >>> ds["rank_prob"].dims
    ('dimension', 'system', 'rank')
    >>> bool(abs(ds["rank_prob"].sum("rank") - 1).max() < 1e-12)
    True
    """
    rng = np.random.default_rng(random_seed)
    if isinstance(source, Ratings):
        draws = _raw_scores(
            source, method, score_map, n_boot=n_boot, rng=rng, random_seed=random_seed
        )
        label = f"ratings ({method})"
    elif isinstance(source, xr.DataTree):
        model = source.attrs.get("model")
        if model == "ordinal_raters":
            draws = _ordinal_scores(source, score)
            label = f"ordinal_raters ({score})"
        elif model in ("mace", "dawid_skene"):
            draws = _categorical_scores(
                source,
                ratings,
                score_map,
                labels=labels,
                n_boot=n_boot,
                max_draws=max_draws,
                rng=rng,
            )
            label = f"{model} ({source.attrs.get('method', '')} fit)"
        else:
            raise ValueError(
                f"rank_systems: expected an OrdinalRaters, MACE or DawidSkene fit, got "
                f"model {model!r}"
            )
    else:
        raise TypeError(f"rank_systems: expected an xr.DataTree or Ratings, got {type(source)!r}")
    ds = summarize_ranking(draws, ci_prob=ci_prob, rope=rope, random_seed=random_seed)
    ds.attrs["source"] = label
    return ds


def rank_table(ds: xr.Dataset, *, digits: int | None = 3) -> pl.DataFrame:
    """One row per system (and dimension / design) of a :func:`rank_systems` result, best
    first: score mean and interval, expected rank, P(rank 1), rounded to ``digits``
    (``None``: unrounded, e.g. for a CSV file).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> draws = xr.DataArray(np.array([[[1.0, 0.0], [2.0, 0.5], [0.0, 1.0]]]),
    ...                      dims=("chain", "draw", "system"), coords={"system": ["a", "b"]})
    >>> rank_table(summarize_ranking(draws))["system"].to_list()
    ['a', 'b']
    """
    cols = ["score_mean", "score_low", "score_high", "expected_rank"]
    frame = pl.from_pandas(ds[cols].to_dataframe().reset_index())
    p1 = pl.from_pandas(
        ds["rank_prob"].sel(rank=1, drop=True).rename("p_rank_1").to_dataframe().reset_index()
    )
    keys = [c for c in frame.columns if c not in cols]
    frame = frame.join(p1, on=keys)
    if digits is not None:
        frame = frame.with_columns(pl.col(c).round(digits) for c in (*cols, "p_rank_1"))
    groups = [k for k in keys if k != "system"]
    return frame.select(*groups, "system", *cols, "p_rank_1").sort([*groups, "expected_rank"])


def compare_rankings(rankings: Mapping[str, xr.Dataset], *, digits: int | None = 3) -> pl.DataFrame:
    """Several rankings of the same systems side by side, as in shared-task reports (e.g.
    mean score, majority vote, Pyramid and MACE): the :func:`rank_table` rows of each,
    with a first column ``source``.

    Parameters
    ----------
    rankings : mapping of str to xr.Dataset
        ``{source name: rank_systems result}``. Dims other than ``dimension`` and
        ``system`` (e.g. the ``design`` of an ordinal fit) are folded into the source name
        (``"name, value"``) so that every source ranks per dimension.
    digits : int, optional
        Rounding of the numbers (``None``: unrounded).

    Returns
    -------
    polars.DataFrame
        Columns ``source, [dimension,] system, score_mean, score_low, score_high,
        expected_rank, p_rank_1``; per source and dimension, best first.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> draws = xr.DataArray(np.array([[[1.0, 0.0], [2.0, 0.5], [0.0, 1.0]]]),
    ...                      dims=("chain", "draw", "system"), coords={"system": ["a", "b"]})
    >>> t = compare_rankings({"mean": summarize_ranking(draws),
    ...                       "reversed": summarize_ranking(-draws)})
    >>> t.select("source", "system").rows()
    [('mean', 'a'), ('mean', 'b'), ('reversed', 'b'), ('reversed', 'a')]
    """
    if not rankings:
        raise ValueError("compare_rankings: give at least one {source: rank_systems result}")
    frames = []
    for name, ds in rankings.items():
        table = rank_table(ds, digits=digits)
        folded = [str(d) for d in ds["expected_rank"].dims if d not in (S.DIMENSION, S.SYSTEM)]
        label: pl.Expr = pl.lit(str(name))
        for d in folded:
            label = pl.concat_str(label, pl.lit(", "), pl.col(d).cast(pl.String))
        frames.append(table.with_columns(label.alias("source")).drop(folded))
    out = pl.concat(frames, how="diagonal_relaxed")
    return out.select("source", *(c for c in out.columns if c != "source"))


# ---------------------------------------------------------------------------- agreement


def _ranking_side(x: Any, what: str) -> xr.DataArray:
    """(sample, system) draws from a rank_systems result, a DataArray or a mapping."""
    if isinstance(x, xr.Dataset):
        if "score" not in x:
            raise ValueError(f"{what}: a Dataset side must be a rank_systems result (with 'score')")
        x = x["score"]
    if isinstance(x, Mapping):
        x = xr.DataArray(
            np.asarray(list(x.values()), dtype=float),
            dims="system",
            coords={"system": [str(k) for k in x]},
        )
    if not isinstance(x, xr.DataArray) or "system" not in x.dims:
        raise ValueError(
            f"{what}: each side must be a rank_systems result, a DataArray with a 'system' "
            "dim or a {system: score} mapping"
        )
    left = [d for d in x.dims if d not in (*SAMPLE_DIMS, "system")]
    if left:
        raise ValueError(f"{what}: select one value of {left} first (e.g. ds.sel(dimension=...))")
    x = x.stack(sample=SAMPLE_DIMS) if "chain" in x.dims else x.expand_dims(sample=1)
    x = x.transpose("sample", "system")
    return x.assign_coords(system=[str(s) for s in x["system"].values])


def _one_ranking_stat(
    stat: str, a: np.ndarray, b: np.ndarray, systems: list[str], p: float, k: int
) -> float:
    if stat == "kendall_tau_b":
        return kendall_tau_b(a, b)
    if stat == "spearman_rho":
        return spearman_rho(a, b)
    if stat == "normalized_rank_position":
        return normalized_rank_position(a, b, k=k)
    order_a = [systems[i] for i in np.argsort(-a, kind="stable")]
    order_b = [systems[i] for i in np.argsort(-b, kind="stable")]
    return rbo(order_a, order_b, p=p)


def ranking_agreement(
    x: Any,
    y: Any,
    *,
    statistics: Sequence[str] = RANKING_STATISTICS,
    ci_prob: float = 0.9,
    p: float = 0.9,
    k: int = 1,
    max_draws: int = 1000,
    random_seed: int = 0,
) -> xr.Dataset:
    """Agreement between two system rankings, either of which may be a posterior.

    Parameters
    ----------
    x, y : rank_systems result, xr.DataArray or mapping
        The reference (``x``, e.g. the human ranking) and the candidate (``y``, e.g. an
        automatic metric or a subsampled study): a :func:`rank_systems` result (its score
        draws) with one dimension / design selected, a DataArray with a ``system`` dim (and
        ``chain`` / ``draw`` for draws) or ``{system: score}``. Higher scores rank first.
        Only systems on both sides are compared.
    statistics : sequence of str
        Any of ``kendall_tau_b``, ``spearman_rho``, ``rbo`` (extrapolated, persistence
        ``p``) and ``normalized_rank_position`` (of the reference's top ``k``).
    ci_prob : float
        Probability of the equal-tailed interval over draws.
    max_draws : int
        Draws compared at most; posterior sides are paired at random (independent fits).
    random_seed : int
        Seed of the pairing.

    Returns
    -------
    xr.Dataset
        ``value`` (statistic x sample; one sample when both sides are point rankings),
        ``mean``, ``low``, ``high`` per statistic.

    Examples
    --------
    >>> ra = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    >>> rb = {"a": 2.5, "b": 3.0, "c": 1.0, "d": 0.5}
    >>> float(ranking_agreement(ra, rb)["mean"].sel(statistic="kendall_tau_b"))
    0.6666666666666666
    """
    unknown = [s for s in statistics if s not in RANKING_STATISTICS]
    if unknown:
        raise ValueError(
            f"ranking_agreement: unknown statistics {unknown}; known: {list(RANKING_STATISTICS)}"
        )
    what = "ranking_agreement"
    a, b = _ranking_side(x, what), _ranking_side(y, what)
    systems = [s for s in a["system"].values if s in set(b["system"].values)]
    if len(systems) < 2:
        raise ValueError(f"{what}: the two rankings share fewer than two systems")
    av = a.sel(system=systems).values
    bv = b.sel(system=systems).values
    rng = np.random.default_rng(random_seed)
    n = max(av.shape[0], bv.shape[0])
    n = min(n, max_draws)
    ia = (
        rng.choice(av.shape[0], n, replace=av.shape[0] < n) if av.shape[0] > 1 else np.zeros(n, int)
    )
    ib = (
        rng.choice(bv.shape[0], n, replace=bv.shape[0] < n) if bv.shape[0] > 1 else np.zeros(n, int)
    )
    vals = np.empty((len(statistics), n))
    for s_i, stat in enumerate(statistics):
        for t in range(n):
            vals[s_i, t] = _one_ranking_stat(stat, av[ia[t]], bv[ib[t]], systems, p, k)
    q = (1 - ci_prob) / 2
    return xr.Dataset(
        {
            "value": (("statistic", "sample"), vals),
            "mean": ("statistic", np.nanmean(vals, axis=1)),
            "low": ("statistic", np.nanquantile(vals, q, axis=1)),
            "high": ("statistic", np.nanquantile(vals, 1 - q, axis=1)),
        },
        coords={"statistic": list(statistics), "sample": np.arange(n)},
        attrs={"ci_prob": ci_prob, "n_systems": len(systems)},
    )


# ---------------------------------------------------------------------------- tables


def label_distributions(
    ratings: Ratings,
    *,
    fit: xr.DataTree | None = None,
    by: Sequence[str] = (S.SYSTEM,),
) -> pl.DataFrame:
    """Share of each label per dimension (and ``by``) under three aggregations.

    ``all ratings``: every first rating counts once; ``majority``: one label per item, the
    most frequent (ties: the first level of the scale); ``model``: the most probable label
    of each item under a MACE / Dawid-Skene ``fit`` of the same ratings.

    Returns
    -------
    polars.DataFrame
        Columns ``aggregation, dimension, *by, rating, n, share``.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["i1"] * 3 + ["i2"] * 3,
    ...     "rater": ["x", "y", "z"] * 2, "rating": ["yes", "yes", "no", "no", "no", "yes"],
    ...     "system": ["s"] * 6}))
    >>> t = label_distributions(r)
    >>> t.filter(pl.col("aggregation") == "majority")["share"].to_list()
    [0.5, 0.5]
    """
    d = ratings.data.filter(~pl.col(S.REPEAT))
    by = [c for c in by if c in d.columns]
    base = [S.DIMENSION, *by]
    parts = [
        d.select(*base, S.ITEM, S.SEGMENT, S.RATING, S.CODE).with_columns(
            pl.lit("all ratings").alias("aggregation")
        )
    ]
    unit = [S.ITEM, S.SEGMENT, S.DIMENSION]
    maj = (
        d.group_by(*unit, *by, S.RATING, S.CODE)
        .agg(pl.len().alias("__n"))
        .sort(*unit, "__n", S.CODE, descending=[False, False, False, True, False], nulls_last=True)
        .group_by(unit, maintain_order=True)
        .first()
        .with_columns(pl.lit("majority").alias("aggregation"))
    )
    parts.append(maj.select(parts[0].columns))
    if fit is not None:
        from raterstats.posterior import item_posterior

        post = item_posterior(fit)
        lab = pl.from_pandas(post[["label", "n_ratings"]].to_dataframe().reset_index()).filter(
            pl.col("n_ratings") > 0
        )
        attrs = d.select(S.ITEM, *by).unique(subset=S.ITEM)
        lab = lab.join(attrs, on=S.ITEM, how="left").rename({"label": S.RATING})
        parts.append(
            lab.select(
                *base,
                S.ITEM,
                pl.lit(None, dtype=pl.String).alias(S.SEGMENT),
                pl.col(S.RATING).cast(pl.String),
                pl.lit(None, dtype=pl.Int64).alias(S.CODE),
                pl.lit("model").alias("aggregation"),
            )
        )
    allp = pl.concat(
        [
            p.with_columns(pl.col(S.CODE).cast(pl.Int64), pl.col(S.RATING).cast(pl.String))
            for p in parts
        ],
        how="diagonal_relaxed",
    )
    keys = ["aggregation", *base]
    counts = allp.group_by(*keys, S.RATING).agg(pl.len().alias("n"))
    return (
        counts.with_columns((pl.col("n") / pl.col("n").sum().over(keys)).alias("share"))
        .select(*keys, S.RATING, "n", "share")
        .sort(*keys, S.RATING)
    )


def case_difficulty(ratings: Ratings, *, score_map: ScoreMapArg = None) -> pl.DataFrame:
    """Case-difficulty profile: per case (question) and dimension, the mean score over
    the systems' answers and the dispersion across systems.

    An item's score is its mean rating (``score_map`` for categorical labels); a case's
    ``mean`` is the mean over its systems' item scores and ``sd_across_systems`` their
    standard deviation: hard cases have a low mean, discriminating cases a large spread.

    Returns
    -------
    polars.DataFrame
        Columns ``question, dimension, n_systems, mean, sd_across_systems, min, max``,
        hardest case first per dimension.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["q1-a", "q1-b", "q2-a", "q2-b"],
    ...     "rater": ["x"] * 4, "rating": [1, 3, 4, 4], "system": ["a", "b", "a", "b"],
    ...     "question": ["q1", "q1", "q2", "q2"]}))
    >>> case_difficulty(r)["mean"].to_list()
    [2.0, 4.0]
    """
    what = "case_difficulty"
    item_system_table(ratings, what)
    d = ratings.data.filter(~pl.col(S.REPEAT))
    if S.QUESTION not in d.columns:
        raise ValueError(f"{what}: the ratings need a 'question' (case) column")
    frames = []
    for dim in ratings.dimensions:
        part = d.filter(pl.col(S.DIMENSION) == dim)
        scale = ratings.scale_for(dim)
        if isinstance(scale, CategoricalScale) and score_map is not None:
            sv = score_vector(dim, [str(v) for v in scale.levels], score_map, what)
            s = pl.col(S.CODE).replace_strict(dict(enumerate(sv.tolist())), return_dtype=pl.Float64)
        else:
            s = pl.col(S.VALUE).cast(pl.Float64)
        if part[S.VALUE].null_count() and not (
            isinstance(scale, CategoricalScale) and score_map is not None
        ):
            raise ValueError(f"{what}: dimension {dim!r} has non-numeric labels; pass score_map=")
        item = part.group_by(S.ITEM, S.SYSTEM, S.QUESTION).agg(s.mean().alias("__s"))
        frames.append(
            item.group_by(S.QUESTION)
            .agg(
                pl.col(S.SYSTEM).n_unique().alias("n_systems"),
                pl.col("__s").mean().alias("mean"),
                pl.col("__s").std().alias("sd_across_systems"),
                pl.col("__s").min().alias("min"),
                pl.col("__s").max().alias("max"),
            )
            .with_columns(pl.lit(dim).alias(S.DIMENSION))
        )
    out = pl.concat(frames)
    return out.select(
        S.QUESTION, S.DIMENSION, "n_systems", "mean", "sd_across_systems", "min", "max"
    ).sort(S.DIMENSION, "mean", S.QUESTION)


__all__ = [
    "RANKING_STATISTICS",
    "case_difficulty",
    "compare_rankings",
    "label_distributions",
    "rank_draws",
    "rank_systems",
    "rank_table",
    "ranking_agreement",
    "summarize_ranking",
]
