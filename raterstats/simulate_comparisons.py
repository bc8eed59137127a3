"""Simulated comparative judgments with known truth: pairwise preferences (binary, with ties,
or graded) and per-question rankings, by raters who differ in reliability and position bias.

The generative model is the one the comparison models fit (``MODELS.md`` section 9), so the
truth it returns is what a fit should recover:

- system strength ``theta[d, m]`` per dimension, centred (sums to 0 over systems);
- optional question effects: system ``m`` on question ``q`` has strength
  ``theta[d, m] + eps[q, m]``, ``eps ~ N(0, question_sd)``;
- rater ``j``: discrimination ``alpha_j > 0`` (how reliably the rater tracks a strength
  difference; ``log alpha_j ~ N(0, alpha_sd)`` for humans, spammers near 0) and position
  bias ``beta_j`` (a pull toward the answer shown first; ``N(position_bias, beta_sd)`` for
  humans, ``llm_bias`` for LLM judges);
- a comparison of ``a`` with ``b`` with ``s = +1`` when ``a`` was shown first and ``-1``
  when ``b`` was: ``u = alpha_j (theta_a - theta_b) + beta_j s``. Binary: ``P(a) =
  sigmoid(u)``; with ties (Davidson 1970): ``P(a) : P(b) : P(tie) = e^{u/2} : e^{-u/2} :
  nu``; graded ``-K..K``: ordered logistic on ``u`` with cut-points symmetric about 0,
  ``P(outcome <= k - 1 - K) = sigmoid(c_k - u)``, ``c_{2K+1-k} = -c_k``;
- a ranking by rater ``j`` of a random subset of systems on a question is Plackett-Luce
  with worths ``exp(alpha_j theta_m)`` (drawn by sorting ``alpha_j theta_m`` plus Gumbel
  noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.comparisons import (
    COMPARISON,
    OUTCOME,
    PAIR_COLUMNS,
    RANK,
    RANKING,
    RANKING_COLUMNS,
    SHOWN_FIRST,
    SYSTEM_A,
    SYSTEM_B,
    Comparisons,
)
from raterstats.provenance import Provenance


@dataclass(frozen=True)
class SimulatedComparisons:
    """Simulated judgments and the truth they were drawn from.

    Attributes
    ----------
    comparisons : Comparisons
        The judgments.
    truth : xr.Dataset
        ``theta`` (dimension, system), ``alpha`` and ``beta`` (rater), ``is_spammer``
        (rater), ``rater_kind`` (rater); for graded pairs ``cutpoints`` (cut), for ties
        ``nu``; with question effects ``eps`` (question, system). ``attrs`` hold the
        settings.
    """

    comparisons: Comparisons
    truth: xr.Dataset


def symmetric_cutpoints(max_grade: int, *, first: float = 0.6, step: float = 1.6) -> np.ndarray:
    """Default cut-points of a graded ``-K..K`` scale: ``2K`` values symmetric about 0,
    the innermost at ``+-first``, then ``step`` apart.

    Examples
    --------
    >>> symmetric_cutpoints(2).tolist()
    [-2.2, -0.6, 0.6, 2.2]
    """
    half = first + step * np.arange(max_grade)
    return np.round(np.concatenate([-half[::-1], half]), 12)


def _ids(prefix: str, n: int) -> list[str]:
    width = len(str(n))
    return [f"{prefix}{k + 1:0{width}d}" for k in range(n)]


def simulate_comparisons(
    *,
    kind: Literal["pairs", "rankings"] = "pairs",
    n_systems: int = 8,
    n_raters: int = 20,
    n_llm_judges: int = 0,
    n_questions: int = 50,
    n_comparisons: int = 2000,
    ranking_size: int = 4,
    n_dimensions: int = 1,
    max_grade: int = 1,
    ties: bool = False,
    nu: float = 0.5,
    cutpoints: np.ndarray | None = None,
    theta_sd: float = 1.0,
    alpha_sd: float = 0.4,
    spammer_share: float = 0.0,
    position_bias: float = 0.0,
    beta_sd: float = 0.2,
    llm_bias: float = 0.8,
    llm_alpha: float = 1.5,
    question_sd: float = 0.0,
    random_seed: int = 0,
) -> SimulatedComparisons:
    """Simulate pairwise comparisons or per-question rankings (see the module docstring).

    Parameters
    ----------
    kind : {"pairs", "rankings"}
        Pairwise judgments or rankings.
    n_systems, n_raters, n_llm_judges, n_questions : int
        Systems ``s1..``, human raters ``r01..``, LLM judges ``llm1..`` (rater kind
        ``"llm"``) and questions ``q01..``.
    n_comparisons : int
        Pairs: the number of judgments, each of a random question, a random pair of
        distinct systems and a random rater, the shown order random. Rankings: the number
        of rankings, each of ``ranking_size`` random systems on a random question.
    ranking_size : int
        Systems per ranking (rankings only).
    n_dimensions : int
        Dimensions ``d1..``, each with its own strengths (the raters keep theirs); each
        judgment is made on every dimension.
    max_grade : int
        ``K`` of a graded -K..K outcome (1: binary, or a / b / tie with ``ties``).
    ties : bool
        Binary outcomes with Davidson ties (``max_grade=1`` only).
    nu : float
        Davidson tie parameter.
    cutpoints : array, optional
        ``2K`` increasing cut-points of a graded outcome (default
        :func:`symmetric_cutpoints`).
    theta_sd, alpha_sd, spammer_share, position_bias, beta_sd, llm_bias, llm_alpha, question_sd
        Spread of strengths; spread of human log-discriminations; share of human raters
        who answer at random (``alpha = 0.05``); mean and spread of human position bias;
        position bias and discrimination of LLM judges; spread of question effects (0:
        none).
    random_seed : int
        Seed.

    Returns
    -------
    SimulatedComparisons

    Examples
    --------
    >>> sim = simulate_comparisons(n_systems=5, n_comparisons=300, ties=True, random_seed=2)
    >>> sim.comparisons.n_judgments, sim.comparisons.ties
    (300, True)
    >>> float(abs(sim.truth["theta"].sum("system")).max()) < 1e-12
    True
    >>> r = simulate_comparisons(kind="rankings", n_comparisons=40, random_seed=2).comparisons
    >>> r.kind, r.n_judgments
    ('rankings', 40)
    """
    if kind not in ("pairs", "rankings"):
        raise ValueError(f"simulate_comparisons: kind must be 'pairs' or 'rankings', not {kind!r}")
    if n_systems < 2 or n_raters + n_llm_judges < 1 or n_comparisons < 1 or n_questions < 1:
        raise ValueError(
            "simulate_comparisons: need n_systems >= 2, at least one rater, one question and "
            "one comparison"
        )
    if max_grade < 1 or (ties and max_grade > 1):
        raise ValueError("simulate_comparisons: max_grade >= 1; ties=True only with max_grade=1")
    if kind == "rankings" and not 2 <= ranking_size <= n_systems:
        raise ValueError("simulate_comparisons: 2 <= ranking_size <= n_systems")
    if not 0 <= spammer_share <= 1:
        raise ValueError("simulate_comparisons: spammer_share must be in [0, 1]")
    rng = np.random.default_rng(random_seed)
    systems = _ids("s", n_systems)
    humans = _ids("r", max(n_raters, 0))
    llms = [f"llm{k + 1}" for k in range(n_llm_judges)]
    raters = humans + llms
    questions = _ids("q", n_questions)
    dims = [f"d{k + 1}" for k in range(n_dimensions)]
    theta = rng.normal(0.0, theta_sd, (n_dimensions, n_systems))
    theta -= theta.mean(axis=1, keepdims=True)
    n_h = len(humans)
    alpha = np.concatenate(
        [np.exp(rng.normal(0.0, alpha_sd, n_h)), np.full(len(llms), float(llm_alpha))]
    )
    spam = np.zeros(len(raters), bool)
    n_spam = round(spammer_share * n_h)
    if n_spam:
        spam[rng.choice(n_h, n_spam, replace=False)] = True
        alpha[spam] = 0.05
    beta = np.concatenate(
        [rng.normal(position_bias, beta_sd, n_h), np.full(len(llms), float(llm_bias))]
    )
    eps = (
        rng.normal(0.0, question_sd, (n_questions, n_systems))
        if question_sd > 0
        else np.zeros((n_questions, n_systems))
    )
    cuts = np.asarray(cutpoints, float) if cutpoints is not None else symmetric_cutpoints(max_grade)
    if max_grade > 1 and (cuts.shape != (2 * max_grade,) or np.any(np.diff(cuts) <= 0)):
        raise ValueError(
            f"simulate_comparisons: cutpoints must be {2 * max_grade} increasing values"
        )
    kinds = ["human"] * n_h + ["llm"] * len(llms)
    if kind == "pairs":
        frame = _pairs(rng, theta, eps, alpha, beta, cuts, n_comparisons, max_grade, ties, nu)
        frame = frame.with_columns(
            pl.col("__q").replace_strict(dict(enumerate(questions))).alias(S.QUESTION),
            pl.col("__a").replace_strict(dict(enumerate(systems))).alias(SYSTEM_A),
            pl.col("__b").replace_strict(dict(enumerate(systems))).alias(SYSTEM_B),
            pl.col("__j").replace_strict(dict(enumerate(raters))).alias(S.RATER),
            pl.col("__j").replace_strict(dict(enumerate(kinds))).alias(S.RATER_KIND),
            pl.col("__d").replace_strict(dict(enumerate(dims))).alias(S.DIMENSION),
        )
        frame = frame.with_columns(
            (pl.col("__n") + 1).cast(pl.String).alias(COMPARISON),
            (pl.col("__n") * n_dimensions + pl.col("__d") + 1).alias(S.ROW),
        ).sort(S.ROW)
        data = frame.select(PAIR_COLUMNS)
    else:
        frame = _rankings(rng, theta, eps, alpha, n_comparisons, ranking_size)
        frame = frame.with_columns(
            pl.col("__q").replace_strict(dict(enumerate(questions))).alias(S.QUESTION),
            pl.col("__m").replace_strict(dict(enumerate(systems))).alias(S.SYSTEM),
            pl.col("__j").replace_strict(dict(enumerate(raters))).alias(S.RATER),
            pl.col("__j").replace_strict(dict(enumerate(kinds))).alias(S.RATER_KIND),
            pl.col("__d").replace_strict(dict(enumerate(dims))).alias(S.DIMENSION),
        ).with_columns(
            pl.concat_str(
                pl.lit("k"),
                (pl.col("__n") + 1).cast(pl.String),
                pl.lit(S.UNIT_SEP),
                pl.col(S.DIMENSION),
            ).alias(RANKING),
            (pl.int_range(pl.len()) + 1).alias(S.ROW),
        )
        data = frame.select(RANKING_COLUMNS)
    comps = Comparisons(
        data,
        kind=kind,
        max_grade=max_grade,
        provenance=Provenance(source="simulate_comparisons()"),
    )
    truth = xr.Dataset(
        {
            "theta": ((S.DIMENSION, S.SYSTEM), theta),
            "alpha": ((S.RATER,), alpha),
            "beta": ((S.RATER,), beta),
            "is_spammer": ((S.RATER,), spam),
            "rater_kind": ((S.RATER,), np.array(kinds)),
        },
        coords={S.DIMENSION: dims, S.SYSTEM: systems, S.RATER: raters},
        attrs={
            "kind": kind,
            "max_grade": max_grade,
            "ties": int(ties),
            "random_seed": random_seed,
            "position_bias": position_bias,
        },
    )
    if kind == "pairs" and max_grade > 1:
        truth["cutpoints"] = ("cut", cuts)
    if kind == "pairs" and ties:
        truth["nu"] = float(nu)
    if question_sd > 0:
        truth["eps"] = ((S.QUESTION, S.SYSTEM), eps)
        truth = truth.assign_coords({S.QUESTION: questions})
    return SimulatedComparisons(comparisons=comps, truth=truth)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _pairs(
    rng: np.random.Generator,
    theta: np.ndarray,
    eps: np.ndarray,
    alpha: np.ndarray,
    beta: np.ndarray,
    cuts: np.ndarray,
    n: int,
    max_grade: int,
    ties: bool,
    nu: float,
) -> pl.DataFrame:
    n_dims, n_sys = theta.shape
    q = rng.integers(eps.shape[0], size=n)
    a = rng.integers(n_sys, size=n)
    b = (a + rng.integers(1, n_sys, size=n)) % n_sys
    j = rng.integers(alpha.size, size=n)
    s = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    rows = []
    for d in range(n_dims):
        diff = theta[d, a] + eps[q, a] - theta[d, b] - eps[q, b]
        u = alpha[j] * diff + beta[j] * s
        if max_grade > 1:
            cdf = _sigmoid(cuts[None, :] - u[:, None])
            y = (rng.random(n)[:, None] > cdf).sum(axis=1) - max_grade
        elif ties:
            w = np.stack([np.exp(u / 2), np.exp(-u / 2), np.full(n, nu)], axis=1)
            p = w / w.sum(axis=1, keepdims=True)
            pick = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
            y = np.array([1, -1, 0])[np.minimum(pick, 2)]
        else:
            y = np.where(rng.random(n) < _sigmoid(u), 1, -1)
        rows.append(
            pl.DataFrame(
                {
                    "__n": np.arange(n),
                    "__d": np.full(n, d),
                    "__q": q,
                    "__a": a,
                    "__b": b,
                    "__j": j,
                    OUTCOME: y.astype(np.int64),
                    SHOWN_FIRST: np.where(s > 0, "a", "b"),
                }
            )
        )
    return pl.concat(rows)


def _rankings(
    rng: np.random.Generator,
    theta: np.ndarray,
    eps: np.ndarray,
    alpha: np.ndarray,
    n: int,
    size: int,
) -> pl.DataFrame:
    n_dims, n_sys = theta.shape
    q = rng.integers(eps.shape[0], size=n)
    j = rng.integers(alpha.size, size=n)
    subset = np.argsort(rng.random((n, n_sys)), axis=1)[:, :size]
    rows = []
    for d in range(n_dims):
        util = alpha[j][:, None] * (theta[d][subset] + eps[q[:, None], subset])
        noisy = util + rng.gumbel(size=util.shape)
        order = np.argsort(-noisy, axis=1)
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.arange(1, size + 1)[None, :].repeat(n, 0), axis=1)
        rows.append(
            pl.DataFrame(
                {
                    "__n": np.repeat(np.arange(n), size),
                    "__d": np.full(n * size, d),
                    "__q": np.repeat(q, size),
                    "__j": np.repeat(j, size),
                    "__m": subset.ravel(),
                    RANK: ranks.ravel().astype(float),
                }
            )
        )
    return pl.concat(rows)


__all__ = ["SimulatedComparisons", "simulate_comparisons", "symmetric_cutpoints"]
