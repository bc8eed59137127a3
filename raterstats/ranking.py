"""System rankings with uncertainty and ranking agreement (the descriptive tables of
ratings are in :mod:`raterstats.descriptive`).

:func:`rank_systems` turns a fitted model (through the model registry: each model answers
``system_score_draws`` itself; ``OrdinalRaters``: the system effects / fair averages;
``MACE`` / ``DawidSkene``: item label posteriors mapped through a score map and averaged per
system) or raw :class:`~raterstats.Ratings` (mean score, majority vote, the
summed "Pyramid" score, EM labels of MACE / Dawid-Skene, all with a case bootstrap) into
draws of a score per system, and summarises them in one labelled ``xr.Dataset``: score
summaries, pairwise ``P(a > b)``, credible intervals of the differences, rank
probabilities, expected ranks and a plain-language verdict per pair.

:func:`ranking_agreement` compares two rankings where either side may be a posterior (then
the result is a distribution of Kendall's tau-b / Spearman's rho / RBO / NRP over draws),
reusing the point functions of :mod:`raterstats.agreement.ranking`; it lives in
:mod:`raterstats.ranking_concordance` and is re-exported here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Literal

import numpy as np
import polars as pl
import xarray as xr

from raterstats import defaults as D
from raterstats import schema as S
from raterstats.checks import check_counts
from raterstats.comparison_baselines import BASELINE_METHODS, baseline_score_draws
from raterstats.comparisons import Comparisons
from raterstats.health import ConvergenceWarning, fit_health, flag_result, interval_note
from raterstats.intervals import SAMPLE_DIMS, eti
from raterstats.models import Method, Model, model_class, model_from_datatree, registered_models
from raterstats.ranking_concordance import RANKING_STATISTICS, ranking_agreement
from raterstats.ratings import Ratings
from raterstats.scales import CategoricalScale
from raterstats.scoring import (
    ScoreMapArg,
    as_draws,
    describe_bootstrap,
    item_system_table,
    score_vector,
    system_means,
)

#: ways to score raw ratings without a model; a registered model with a
#: ``rank_fit_method`` (MACE, Dawid-Skene: EM labels) is accepted by name as well
RAW_METHODS = ("mean", "majority", "pyramid")
#: ``method`` of :func:`rank_systems` on raw ratings: one of :data:`RAW_METHODS` or a model
#: name (see :func:`rank_methods`)
RawMethod = Literal["mean", "majority", "pyramid"] | str


# ---------------------------------------------------------------------------- kernels


def rank_draws(
    scores: np.ndarray, rng: np.random.Generator, *, descending: bool = True
) -> np.ndarray:
    """Ranks (1 = best) of the last axis of ``scores`` for every leading index, ties broken
    at random so that every draw is a permutation. A NaN score has no rank: ValueError
    (sorting would rank it last).

    Examples
    --------
    >>> import numpy as np
    >>> rank_draws(np.array([[0.2, 0.9, 0.5]]), np.random.default_rng(0))
    array([[3, 1, 2]])
    """
    scores = np.asarray(scores, dtype=float)
    if np.isnan(scores).any():
        raise ValueError(
            f"rank_draws: {int(np.isnan(scores).sum())} scores are NaN; a score that is "
            "undefined cannot be ranked"
        )
    x = -scores if descending else scores
    jitter = rng.random(x.shape)
    order = np.lexsort((jitter, x), axis=-1)  # primary key x, ties by jitter
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, x.shape[-1] + 1), axis=-1)
    return ranks


# ---------------------------------------------------------------------------- summaries


def _verdict(
    a: str,
    b: str,
    low: float,
    high: float,
    p_better: float,
    ci_prob: float,
    rope: float | None,
    same_in: int = 0,
    p_tie: float = 0.0,
) -> str:
    """The verdict on one pair; ``p_tie`` > 0: the share of draws with equal scores (not
    counted in P(a > b)); ``same_in`` > 0: the difference is the same in all of that many
    draws, which the text says (no uncertainty was estimated, not certainty)."""
    if a == b:
        return ""
    text = _verdict_text(a, b, low, high, p_better, ci_prob, rope)
    if p_tie > 0:
        text = f"{text}; tied in {p_tie:.0%} of the draws"
    if same_in == 1:
        return f"{text}; one draw: no uncertainty was estimated"
    if same_in:
        return (
            f"{text}; but the difference is the same in all {same_in} draws: no uncertainty "
            "could be estimated, which is not certainty"
        )
    return text


def _verdict_text(
    a: str, b: str, low: float, high: float, p_better: float, ci_prob: float, rope: float | None
) -> str:
    level = f"{100 * ci_prob:.0f}%"
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
    ci_prob: float | None = None,
    rope: float | None = None,
    higher_is_better: bool = True,
    random_seed: int = D.RANDOM_SEED,
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
        score_b), or lower when ``higher_is_better`` is False), ``p_tie`` (P(score_a =
        score_b): ties count for neither side, and the verdict gives their share),
        ``diff_mean`` / ``diff_low`` / ``diff_high`` (score_a - score_b), ``p_rope`` (with
        ``rope``) and the text ``verdict``; ``rank_prob`` (``system`` x ``rank``; sums to 1
        over ranks and over systems) and ``expected_rank``; ``score_constant`` (the score
        is the same in every draw, as for a system with one case in a bootstrap: its null
        interval is no uncertainty estimated, not certainty; ``attrs["constant_scores"]``
        names those systems, and the verdict on a pair whose difference never varies says
        so).

    Raises
    ------
    ValueError
        When a score is NaN or infinite in some draw (naming the system and draws): an
        undefined score is never ranked (sorting would put it last).

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
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
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
    _undefined_scores(scores, "summarize_ranking")
    n_draws = int(scores.sizes["chain"] * scores.sizes["draw"])
    systems = [str(s) for s in scores["system"].values]
    other = scores.rename(system="system_b")
    diff = scores - other
    sign = 1.0 if higher_is_better else -1.0
    p_better = (sign * diff > 0).mean(SAMPLE_DIMS)
    p_tie = (diff == 0).mean(SAMPLE_DIMS)
    d_low, d_high = eti(diff, ci_prob)
    s_low, s_high = eti(scores, ci_prob)
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
            "p_tie": p_tie,
            "diff_mean": diff.mean(SAMPLE_DIMS),
            "diff_low": d_low,
            "diff_high": d_high,
            "rank_prob": ((*extra, "system", "rank"), rank_prob),
            "expected_rank": ((*extra, "system"), ranks.mean(axis=(0, 1))),
            "score_constant": _is_constant(scores),
        },
        coords={**ext_coords, "system": systems, "system_b": systems, "rank": np.arange(1, m + 1)},
    )
    if rope is not None:
        ds["p_rope"] = (abs(diff) <= rope).mean(SAMPLE_DIMS)
    pair = ds[["diff_low", "diff_high", "p_better", "p_tie"]]
    pair = pair.transpose(*extra, "system", "system_b")
    lo, hi, pb, pt = (pair[v].values for v in ("diff_low", "diff_high", "p_better", "p_tie"))
    same = _is_constant(diff).transpose(*extra, "system", "system_b")
    if not higher_is_better:
        lo, hi = -hi, -lo
    text = np.empty(lo.shape, dtype=object)
    for idx in np.ndindex(lo.shape):
        a, b = systems[idx[-2]], systems[idx[-1]]
        text[idx] = _verdict(
            a, b, float(lo[idx]), float(hi[idx]), float(pb[idx]), ci_prob, rope,
            n_draws if same.values[idx] else 0, float(pt[idx]),
        )  # fmt: skip
    ds["verdict"] = ((*extra, "system", "system_b"), text.astype(str))
    ds.attrs.update(
        {
            "ci_prob": ci_prob,
            "rope": float("nan") if rope is None else float(rope),
            "higher_is_better": int(higher_is_better),
            "n_draws": n_draws,
            "constant_scores": _constant_note(ds["score_constant"], n_draws),
        }
    )
    return ds


def _is_constant(x: xr.DataArray) -> xr.DataArray:
    """Whether ``x`` takes one value (up to rounding) in every draw."""
    spread = x.max(SAMPLE_DIMS) - x.min(SAMPLE_DIMS)
    return spread <= 1e-9 * (1.0 + abs(x).max(SAMPLE_DIMS))


def _constant_note(constant: xr.DataArray, n_draws: int) -> str:
    """The systems (with their dimension / design) whose score is the same in every draw,
    as a sentence; empty when every score varies."""
    if not constant.any():
        return ""
    names = []
    for idx in zip(*np.nonzero(constant.values), strict=True):
        labels = [str(constant[d].values[i]) for d, i in zip(constant.dims, idx, strict=True)]
        names.append(labels[-1] + (f" ({', '.join(labels[:-1])})" if labels[:-1] else ""))
    if n_draws == 1:
        return "one draw: no uncertainty was estimated for any score"
    return (
        f"the score of {', '.join(names)} is the same in all {n_draws} draws (e.g. a system "
        "with a single case in a bootstrap): its interval shows no uncertainty, not certainty"
    )


# ---------------------------------------------------------------------------- score maps


# ---------------------------------------------------------------------------- sources


def rank_methods(*, kind: Literal["ratings", "comparisons"] = "ratings") -> tuple[str, ...]:
    """The ``method`` values :func:`rank_systems` accepts for raw ratings (the
    :data:`RAW_METHODS` and the registered models that declare a ``rank_fit_method``) or,
    with ``kind="comparisons"``, for a :class:`~raterstats.Comparisons` table (the classical
    baselines of :mod:`raterstats.comparison_baselines`).

    Examples
    --------
    >>> rank_methods()
    ('mean', 'majority', 'pyramid', 'community_dawid_skene', 'dawid_skene', 'ebcc', 'glad', 'mace')
    >>> rank_methods(kind="comparisons")
    ('win_rate', 'elo', 'bradley_terry_ml')
    """
    if kind not in ("ratings", "comparisons"):
        raise ValueError(f"rank_methods: kind must be 'ratings' or 'comparisons', not {kind!r}")
    if kind == "comparisons":
        return BASELINE_METHODS
    fitted = sorted(n for n, c in registered_models().items() if c.rank_fit_method is not None)
    return (*RAW_METHODS, *fitted)


def _rank_model(method: str) -> tuple[type[Model], Method]:
    """The model class named by ``method`` and the fit method it ranks raw ratings with."""
    try:
        cls = model_class(method)
    except ValueError:
        cls = None
    fit_method = None if cls is None else cls.rank_fit_method
    if cls is None or fit_method is None:
        raise ValueError(
            f"rank_systems: method must be one of {', '.join(map(repr, rank_methods()))} for "
            f"raw ratings, not {method!r}"
        )
    return cls, fit_method


def _raw_scores(
    ratings: Ratings,
    method: str,
    score_map: ScoreMapArg,
    *,
    n_boot: int,
    rng: np.random.Generator,
    random_seed: int,
) -> tuple[xr.DataArray, xr.DataTree | None]:
    """The score draws of raw ratings by ``method``, and the fit behind them (None for the
    raw methods)."""
    what = "rank_systems"
    if method not in RAW_METHODS:
        cls, fit_method = _rank_model(method)
        spec = cls()
        with warnings.catch_warnings():  # a failed check is the result's fit_warning
            warnings.simplefilter("ignore", ConvergenceWarning)
            dt = spec.fit(ratings, method=fit_method, random_seed=random_seed)
        draws = spec.system_score_draws(
            dt, score="", score_map=score_map, labels="map", n_boot=n_boot, max_draws=1, rng=rng
        )
        return draws, dt
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
    schemes: dict[str, str] = {}
    redrawn = 0
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
        res = system_means(scores, table, items, n_boot=n_boot, rng=rng, what=f"{what} ({dim})")
        out.append(res.scores)
        schemes[dim], redrawn = res.bootstrap, redrawn + res.redrawn
    draws = as_draws(np.stack(out, axis=1), res.systems, {"dimension": dims})
    draws.attrs.update(bootstrap=describe_bootstrap(schemes), bootstrap_redrawn=redrawn)
    return draws, None


def _undefined_scores(scores: xr.DataArray, what: str) -> None:
    """ValueError naming each system (and dimension / design) whose score is NaN or
    infinite in some draw: it has no place in a ranking (sorting would put it last)."""
    bad = scores.isnull() | np.isinf(scores)
    if not bad.any():
        return
    counts = bad.sum(SAMPLE_DIMS)
    n = int(scores.sizes["chain"] * scores.sizes["draw"])
    where = []
    for idx in zip(*np.nonzero(counts.values), strict=True):
        labels = [f"{d}={counts[d].values[i]}" for d, i in zip(counts.dims, idx, strict=True)]
        where.append(f"{', '.join(labels)} ({int(counts.values[idx])} of {n} draws)")
    raise ValueError(
        f"{what}: the score is undefined (NaN) or infinite for {'; '.join(where)}; a system "
        "without a score cannot be ranked: check the fit or the score map, or leave it out"
    )


def _check_systems(draws: xr.DataArray, ratings: Ratings) -> None:
    """The systems a fit ranks must be those of ``ratings`` (the optional cross-check)."""
    fitted = sorted(str(x) for x in draws["system"].values)
    given = sorted(str(x) for x in ratings.systems)
    if fitted != given:
        raise ValueError(
            f"rank_systems: ratings= has systems {given} but the fit ranks {fitted}: pass the "
            "ratings that were fitted (or leave ratings= out: the fit stores its item -> "
            "system map)"
        )


def rank_systems(
    source: xr.DataTree | Ratings | Comparisons,
    *,
    method: RawMethod = "mean",
    ratings: Ratings | None = None,
    score: Literal["fair_average", "latent"] = "fair_average",
    score_map: ScoreMapArg = None,
    ci_prob: float | None = None,
    rope: float | None = None,
    n_boot: int = D.N_BOOT,
    labels: Literal["sample", "expected", "map"] = "sample",
    max_draws: int = D.MAX_DRAWS,
    random_seed: int = D.RANDOM_SEED,
) -> xr.Dataset:
    """Rank systems with uncertainty, from a fitted model, raw ratings or comparisons.

    Parameters
    ----------
    source : xr.DataTree or Ratings
        A fit of a model that answers ``system_score_draws`` (dispatched through the
        model registry: :class:`~raterstats.OrdinalRaters` gives system scores per
        dimension and design; :class:`~raterstats.MACE` and :class:`~raterstats.DawidSkene`
        map their item label posteriors through ``score_map`` and average them per
        system, using the item -> system (and question) map the fit stores), raw ratings
        (then ``method`` says how to score them) or a :class:`~raterstats.Comparisons`
        table, scored by a classical baseline (``method`` ``"win_rate"``, ``"elo"`` or
        ``"bradley_terry_ml"``, :mod:`raterstats.comparison_baselines`, with a bootstrap of
        questions, judgments or rankings: see ``baseline_score_draws`` there).
    method : str
        For raw ratings (:func:`rank_methods` lists them): ``"mean"`` (mean score over
        raters); ``"majority"`` (the score of the majority label; ties: the lower score);
        ``"pyramid"`` (scores summed over an item's raters, averaged over the system's
        cases, as in shared-task reports); or the name of a model with a
        ``rank_fit_method`` (``"mace"``, ``"dawid_skene"``: the labels of an EM fit). Each
        gets a case bootstrap with ``n_boot`` replicates in which every system keeps data
        (:func:`raterstats.scoring.system_means`): when systems answer the same questions
        (a ``question`` column with several systems per question, the paired design) the
        shared questions are resampled, each system keeping its answers to the drawn
        questions, and a replicate that leaves a system without an item is redrawn; the
        other cases (questions; items when there is no question column) are resampled
        within each system (stratified by system). ``attrs["bootstrap"]`` names the scheme
        (``"questions (paired)"``, ``"stratified by system"`` or ``"none"``) and
        ``attrs["bootstrap_redrawn"]`` counts the redrawn replicates. For
        :class:`~raterstats.Comparisons` (``rank_methods(kind="comparisons")``):
        ``"win_rate"``, ``"elo"`` or ``"bradley_terry_ml"``
        (:mod:`raterstats.comparison_baselines`), with a bootstrap of the questions (the
        paired design), the judgments or whole rankings
        (:func:`~raterstats.comparison_baselines.baseline_score_draws`);
        ``attrs["method_notes"]`` says how the scores were computed; the intervals are
        bootstrap intervals, not posterior intervals (``attrs["uncertainty_note"]``).
    ratings : Ratings, optional
        For a fit: the ratings that were fitted, as a cross-check (their systems must be
        those the fit ranks). Not needed: the fit stores its item -> system map.
    score : {"fair_average", "latent"}
        For an ordinal fit: the expected rating by a typical rater of each design,
        averaged over the system's own answers (the fair average), or the latent system
        effect (one per dimension).
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
        See :func:`summarize_ranking`; ``attrs["source"]`` says what was ranked,
        ``attrs["bootstrap"]`` how its draws were resampled (``"none (posterior draws)"``
        for an ordinal fit). A system whose score is undefined in some draw is never
        ranked: ValueError naming it. A system whose score is the same in every draw
        (e.g. one with a single case) shows in ``score_constant`` /
        ``attrs["constant_scores"]`` and in the verdicts on its pairs. From a fit that fails
        its checks (one given, or the one a model ``method`` fits to raw ratings):
        ``attrs["fit_warning"]``; ``attrs["uncertainty_note"]`` says
        what the intervals are when they are not posterior intervals (a bootstrap, a point
        estimate, a single draw), see :func:`raterstats.health.interval_note`.

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
    check_counts(where="rank_systems", n_boot=(n_boot, 0), max_draws=(max_draws, 1))
    rng = np.random.default_rng(random_seed)
    fitted = None  # the fit behind a ranking of raw ratings by a model
    if isinstance(source, Ratings):
        draws, fitted = _raw_scores(
            source, method, score_map, n_boot=n_boot, rng=rng, random_seed=random_seed
        )
        label = f"ratings ({method})"
    elif isinstance(source, xr.DataTree):
        draws = model_from_datatree(source).system_score_draws(
            source,
            score=score,
            score_map=score_map,
            labels=labels,
            n_boot=n_boot,
            max_draws=max_draws,
            rng=rng,
        )
        label = str(draws.attrs.get("source", source.attrs.get("model", "")))
        if ratings is not None:
            _check_systems(draws, ratings)
    elif isinstance(source, Comparisons):
        draws = baseline_score_draws(source, method=method, n_boot=n_boot, rng=rng)
        label = str(draws.attrs["source"])
    else:
        raise TypeError(
            f"rank_systems: expected an xr.DataTree or Ratings (or Comparisons), got {type(source)}"
        )
    ds = summarize_ranking(draws, ci_prob=ci_prob, rope=rope, random_seed=random_seed)
    ds.attrs["source"] = label
    ds.attrs["bootstrap"] = str(draws.attrs.get("bootstrap", "none (posterior draws)"))
    ds.attrs["bootstrap_redrawn"] = int(draws.attrs.get("bootstrap_redrawn", 0))
    if "method_notes" in draws.attrs:  # how a comparison baseline scored
        ds.attrs["method_notes"] = draws.attrs["method_notes"]
    n, boot = int(ds.attrs["n_draws"]), str(ds.attrs["bootstrap"])
    if isinstance(source, xr.DataTree):  # fit_warning and uncertainty_note (raterstats.health)
        note = interval_note(fit_health(source), n_draws=n, bootstrap=boot)
        return flag_result(ds, source, note=note)
    note = interval_note(None, n_draws=n, bootstrap=boot)
    if note:
        ds.attrs["uncertainty_note"] = note
    warning = None if fitted is None else fit_health(fitted).fit_warning()
    if warning is not None:  # e.g. a GLAD fit in an adversarial labelling
        ds.attrs["fit_warning"] = warning
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
    nan = ds["expected_rank"].isnull()
    if nan.any():
        bad = sorted({str(s) for s in nan.where(nan, drop=True)["system"].values})
        raise ValueError(
            f"rank_table: the expected ranks of systems {bad} are NaN (an undefined score has "
            "no rank); rank with rank_systems / summarize_ranking"
        )
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


__all__ = [
    "RANKING_STATISTICS",
    "RAW_METHODS",
    "RawMethod",
    "compare_rankings",
    "rank_draws",
    "rank_methods",
    "rank_systems",
    "rank_table",
    "ranking_agreement",
    "summarize_ranking",
]
