"""One latent-quality study evaluated three ways, with known truth: absolute ratings on a
Likert scale, pairwise comparisons and per-question rankings of the same systems' answers.

The generative model (one dimension):

- system ``m`` has strength ``theta_m``; its answer to question ``q`` has quality
  ``eta_qm = theta_m + eps_qm``, ``eps_qm ~ N(0, answer_sd)``; the true order is that of
  ``theta`` (the systems, not the answers of one study);
- rater ``j`` has discrimination ``alpha_j`` (``log alpha_j ~ N(0, alpha_sd)``), severity
  ``delta_j ~ N(0, severity_sd)`` and position bias ``beta_j ~ N(position_bias, beta_sd)``;
  the same panel judges in every kind;
- **absolute**: each answer is rated by ``raters_per_answer`` distinct raters on a
  ``n_levels``-point scale, ordered logistic on ``alpha_j eta_qm - delta_j``:
  ``P(y <= k) = sigmoid(c_k - (alpha_j eta_qm - delta_j))`` with fixed cut-points ``c``
  (as :func:`raterstats.simulate.clinical_qa_study`);
- **pairs**: per question, ``comparisons_per_question`` comparisons of two systems'
  answers (the pairs of systems in a random order, every pair once before any twice), each
  by a random rater with a random shown order ``s = +-1``; ``u = alpha_j (eta_qa - eta_qb)
  + beta_j s`` and the outcome as in :mod:`raterstats.simulate_comparisons` (binary,
  Davidson ties, or graded ``-K..K``);
- **rankings**: per question, ``rankings_per_question`` distinct raters each rank
  ``ranking_size`` random systems' answers, Plackett-Luce with worths
  ``exp(alpha_j eta_qm)`` (drawn by sorting ``alpha_j eta_qm`` plus Gumbel noise).

Each part of the study has its own random stream (spawned from ``random_seed``): the truth,
the answers, the panel, and the judgments of each kind. So the three tables of one seed
share systems, questions, answers and raters, and a kind simulated alone is the same table
as when simulated with the others; more raters per answer add raters to the same answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.checks import (
    check_arguments,
    choice_problem,
    count_problems,
    flag_problem,
    real_problem,
    seed_problem,
)
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
from raterstats.ingest import read_ratings
from raterstats.provenance import Provenance
from raterstats.ratings import Ratings
from raterstats.scales import OrdinalScale
from raterstats.simulate_comparisons import symmetric_cutpoints

#: the kinds of judgment, in the order of the study's tables
KINDS = ("absolute", "pairs", "rankings")


@dataclass(frozen=True)
class SimulatedKinds:
    """A study evaluated by absolute ratings, pairs and rankings, and its truth.

    Attributes
    ----------
    ratings : Ratings or None
        The absolute ratings (``None`` when ``"absolute"`` was not simulated).
    pairs, rankings : Comparisons or None
        The pairwise comparisons and the rankings (``None`` when not simulated).
    truth : xr.Dataset
        ``theta`` (system), ``eta`` (question, system), ``alpha``, ``severity`` and
        ``beta`` (rater), ``cutpoints`` (cut) of the Likert scale, and for graded pairs
        ``pair_cutpoints`` (pair_cut); ``attrs["true_order"]`` the systems best first.
    settings : dict
        The keyword arguments of :func:`simulate_kinds` that made the study (``theta`` as
        ``{system: strength}``): ``simulate_kinds(**settings)`` makes it again.
    """

    ratings: Ratings | None
    pairs: Comparisons | None
    rankings: Comparisons | None
    truth: xr.Dataset
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def true_order(self) -> tuple[str, ...]:
        """The systems by true strength, best first."""
        th = self.truth["theta"]
        order = np.argsort(-th.values, kind="stable")
        return tuple(str(th[S.SYSTEM].values[k]) for k in order)

    def table(self, kind: str) -> Ratings | Comparisons:
        """The table of one kind (``"absolute"``, ``"pairs"`` or ``"rankings"``).

        Raises
        ------
        ValueError
            An unknown kind, or one this study did not simulate.
        """
        if kind not in KINDS:
            raise ValueError(f"SimulatedKinds.table: kind must be one of {KINDS}, not {kind!r}")
        out = {"absolute": self.ratings, "pairs": self.pairs, "rankings": self.rankings}[kind]
        if out is None:
            raise ValueError(f"SimulatedKinds.table: this study has no {kind!r} judgments")
        return out


def draw_pair_outcomes(
    rng: np.random.Generator,
    u: np.ndarray,
    *,
    max_grade: int = 1,
    ties: bool = False,
    nu: float = 0.5,
    cutpoints: np.ndarray | None = None,
) -> np.ndarray:
    """Outcomes of pairwise comparisons with linear predictors ``u`` (positive favours
    system a), in the convention of :mod:`raterstats.simulate_comparisons`.

    Binary: ``+1`` with probability ``sigmoid(u)``, else ``-1``; with ``ties`` (Davidson):
    ``P(+1) : P(-1) : P(0) = e^{u/2} : e^{-u/2} : nu``; graded (``max_grade`` ``K > 1``):
    ordered logistic on ``u`` with ``2K`` cut-points, ``P(outcome <= k - 1 - K) =
    sigmoid(c_k - u)``.

    Parameters
    ----------
    rng : np.random.Generator
        The random stream.
    u : np.ndarray
        Linear predictors, one per comparison.
    max_grade : int
        ``K`` of the outcome scale.
    ties : bool
        Davidson ties (``max_grade=1`` only).
    nu : float
        The tie parameter.
    cutpoints : np.ndarray, optional
        ``2K`` increasing cut-points (graded; default
        :func:`~raterstats.simulate_comparisons.symmetric_cutpoints`).

    Returns
    -------
    np.ndarray
        Integer outcomes in ``-K..K``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> draw_pair_outcomes(rng, np.array([50.0, -50.0])).tolist()
    [1, -1]
    >>> draw_pair_outcomes(rng, np.array([50.0, -50.0]), max_grade=2).tolist()
    [2, -2]
    """
    n = u.size
    if max_grade > 1:
        cuts = symmetric_cutpoints(max_grade) if cutpoints is None else np.asarray(cutpoints)
        cdf = 0.5 * (1.0 + np.tanh(0.5 * (cuts[None, :] - u[:, None])))
        y = (rng.random(n)[:, None] > cdf).sum(axis=1) - max_grade
    elif ties:
        w = np.stack([np.exp(u / 2), np.exp(-u / 2), np.full(n, nu)], axis=1)
        p = w / w.sum(axis=1, keepdims=True)
        pick = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
        y = np.array([1, -1, 0])[np.minimum(pick, 2)]
    else:
        y = np.where(rng.random(n) < 0.5 * (1.0 + np.tanh(0.5 * u)), 1, -1)
    return np.asarray(y, dtype=np.int64)


def _ids(prefix: str, n: int) -> list[str]:
    width = len(str(n))
    return [f"{prefix}{k + 1:0{width}d}" for k in range(n)]


def true_strengths(
    *,
    theta: Sequence[float] | Mapping[str, float] | None = None,
    n_systems: int = 4,
    theta_sd: float = 0.5,
    random_seed: int = 0,
) -> dict[str, float]:
    """The systems' true strengths of :func:`simulate_kinds`: ``theta`` checked (a mapping
    names the systems, a sequence calls them ``s1..``), or ``n_systems`` strengths drawn
    from ``N(0, theta_sd)`` and centred, from the same stream as :func:`simulate_kinds`
    with this seed.

    Raises
    ------
    ValueError
        Fewer than 2 strengths, a value that is not a finite number, equal strengths (no
        true order), or repeated system names.

    Examples
    --------
    >>> true_strengths(theta={"gpt": 0.5, "doc": -0.5})
    {'gpt': 0.5, 'doc': -0.5}
    >>> list(true_strengths(n_systems=3, random_seed=1))
    ['s1', 's2', 's3']
    >>> true_strengths(theta=[1, 1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: simulate_kinds: theta has equal strengths, so there is no true order; ...
    """
    if theta is None:
        check_arguments(
            *count_problems(n_systems=(n_systems, 2)),
            real_problem("theta_sd", theta_sd, low=0.0),
            where="simulate_kinds",
        )
        rng = np.random.default_rng(np.random.SeedSequence(random_seed).spawn(6)[0])
        th = rng.normal(0.0, theta_sd, n_systems)
        return dict(zip(_ids("s", n_systems), (th - th.mean()).tolist(), strict=True))
    if isinstance(theta, Mapping):
        systems = [str(k) for k in theta]
        values = list(theta.values())
    elif isinstance(theta, str) or not isinstance(theta, Sequence | np.ndarray):
        raise ValueError(
            f"simulate_kinds: theta must be a sequence of numbers or a mapping, got {theta!r}"
        )
    else:
        values = list(theta)
        systems = _ids("s", len(values))
    try:
        th = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"simulate_kinds: theta must hold numbers, got {values!r}") from None
    if th.ndim != 1 or th.size < 2 or not np.all(np.isfinite(th)):
        raise ValueError(f"simulate_kinds: theta needs at least 2 finite strengths, got {values!r}")
    if np.unique(th).size != th.size:
        raise ValueError(
            "simulate_kinds: theta has equal strengths, so there is no true order; give "
            f"distinct values, got {values!r}"
        )
    if len(set(systems)) != len(systems) or any(not s for s in systems):
        raise ValueError(f"simulate_kinds: system names must be distinct and non-empty: {systems}")
    return dict(zip(systems, th.tolist(), strict=True))


def _check(kw: dict[str, Any]) -> None:
    problems: list[str | None] = list(
        count_problems(
            n_systems=(kw["n_systems"], 2),
            n_questions=(kw["n_questions"], 1),
            n_raters=(kw["n_raters"], 1),
            n_levels=(kw["n_levels"], 2),
            raters_per_answer=(kw["raters_per_answer"], 1),
            comparisons_per_question=(kw["comparisons_per_question"], 1),
            rankings_per_question=(kw["rankings_per_question"], 1),
            max_grade=(kw["max_grade"], 1),
        )
    )
    for name in ("theta_sd", "answer_sd", "alpha_sd", "severity_sd", "beta_sd"):
        problems.append(real_problem(name, kw[name], low=0.0))
    problems.append(real_problem("position_bias", kw["position_bias"]))
    problems.append(real_problem("nu", kw["nu"], low=0.0))
    problems.append(flag_problem("ties", kw["ties"]))
    problems.append(seed_problem("random_seed", kw["random_seed"], optional=False))
    kinds = kw["kinds"]
    if isinstance(kinds, str) or not kinds:
        problems.append(f"kinds must be a non-empty sequence of {KINDS}, not {kinds!r}")
    else:
        problems.extend(choice_problem("kinds", k, KINDS) for k in kinds)
    if not isinstance(kw["dimension"], str) or not kw["dimension"]:
        problems.append(f"dimension must be a non-empty string, not {kw['dimension']!r}")
    check_arguments(*problems, where="simulate_kinds")


def simulate_kinds(
    *,
    theta: Sequence[float] | Mapping[str, float] | None = None,
    n_systems: int = 4,
    theta_sd: float = 0.5,
    n_questions: int = 20,
    answer_sd: float = 0.5,
    n_raters: int = 10,
    alpha_sd: float = 0.3,
    severity_sd: float = 0.5,
    n_levels: int = 5,
    cutpoints: Sequence[float] | None = None,
    position_bias: float = 0.0,
    beta_sd: float = 0.0,
    raters_per_answer: int = 3,
    comparisons_per_question: int = 6,
    max_grade: int = 1,
    ties: bool = False,
    nu: float = 0.5,
    pair_cutpoints: Sequence[float] | None = None,
    ranking_size: int | None = None,
    rankings_per_question: int = 1,
    kinds: Sequence[str] = KINDS,
    dimension: str = "quality",
    random_seed: int = 0,
) -> SimulatedKinds:
    """Simulate one study judged by absolute ratings, pairs and rankings (module docstring).

    Parameters
    ----------
    theta : sequence of float or mapping of str to float, optional
        The systems' true strengths (distinct), on the latent scale of the Likert
        cut-points; a mapping names the systems, a sequence calls them ``s1..``. Default:
        ``n_systems`` strengths drawn from ``N(0, theta_sd)`` and centred.
    n_systems : int
        Systems when ``theta`` is not given.
    theta_sd, answer_sd : float
        Spread of drawn strengths; spread of an answer's quality around its system's.
    n_questions, n_raters : int
        Questions ``q01..`` (each answered by every system) and raters ``r01..``.
    alpha_sd, severity_sd : float
        Spread of the raters' log-discrimination and severity.
    n_levels : int
        Points of the Likert scale (levels ``1..n_levels``).
    cutpoints : sequence of float, optional
        ``n_levels - 1`` increasing cut-points (default evenly spaced in ``[-2, 2]``).
    position_bias, beta_sd : float
        Mean and spread of the raters' position bias in pairs.
    raters_per_answer : int
        Absolute: distinct raters per answer (at most ``n_raters``).
    comparisons_per_question : int
        Pairs: comparisons per question.
    max_grade, ties, nu, pair_cutpoints
        Pairs: ``K`` of a graded ``-K..K`` outcome (1: binary), Davidson ties
        (``max_grade=1`` only), the tie parameter, the ``2K`` cut-points of a graded
        outcome (default :func:`~raterstats.simulate_comparisons.symmetric_cutpoints`).
    ranking_size : int, optional
        Rankings: systems per ranking, a random subset (default every system).
    rankings_per_question : int
        Rankings: rankings per question, by distinct raters (at most ``n_raters``).
    kinds : sequence of str
        The kinds to simulate (``"absolute"``, ``"pairs"``, ``"rankings"``).
    dimension : str
        The dimension's name in the tables.
    random_seed : int
        Seed.

    Returns
    -------
    SimulatedKinds

    Raises
    ------
    ValueError
        Every bad argument at once.

    Examples
    --------
    >>> sim = simulate_kinds(theta={"gpt": 0.6, "med": 0.0, "doc": -0.6}, n_questions=5,
    ...                      random_seed=1)
    >>> sim.true_order, sim.ratings.n_ratings, sim.pairs.n_judgments, sim.rankings.kind
    (('gpt', 'med', 'doc'), 45, 30, 'rankings')
    >>> sim.pairs.systems == sim.rankings.systems == sim.ratings.systems
    True
    """
    kw = {
        "n_systems": n_systems, "theta_sd": theta_sd, "n_questions": n_questions,
        "answer_sd": answer_sd, "n_raters": n_raters, "alpha_sd": alpha_sd,
        "severity_sd": severity_sd, "n_levels": n_levels, "position_bias": position_bias,
        "beta_sd": beta_sd, "raters_per_answer": raters_per_answer,
        "comparisons_per_question": comparisons_per_question, "max_grade": max_grade,
        "ties": ties, "nu": nu, "rankings_per_question": rankings_per_question,
        "kinds": kinds, "dimension": dimension, "random_seed": random_seed,
    }  # fmt: skip
    _check(kw)
    kinds = tuple(kinds)
    # stream 0 (the drawn strengths) is true_strengths'
    _, rng_ans, rng_panel, rng_abs, rng_pair, rng_rank = (
        np.random.default_rng(s) for s in np.random.SeedSequence(random_seed).spawn(6)
    )
    strengths = true_strengths(
        theta=theta, n_systems=n_systems, theta_sd=theta_sd, random_seed=random_seed
    )
    systems = list(strengths)
    th = np.asarray(list(strengths.values()))
    n_m = th.size
    size = n_m if ranking_size is None else ranking_size
    cuts = (
        np.linspace(-2.0, 2.0, n_levels - 1)
        if cutpoints is None
        else np.asarray(cutpoints, dtype=float)
    )
    pcuts = (
        symmetric_cutpoints(max_grade)
        if pair_cutpoints is None
        else np.asarray(pair_cutpoints, dtype=float)
    )
    problems = []
    if "absolute" in kinds and raters_per_answer > n_raters:
        problems.append(f"raters_per_answer ({raters_per_answer}) exceeds n_raters ({n_raters})")
    if "rankings" in kinds and rankings_per_question > n_raters:
        problems.append(
            f"rankings_per_question ({rankings_per_question}) exceeds n_raters ({n_raters}): "
            "the rankings of a question are by distinct raters"
        )
    if "rankings" in kinds and not (isinstance(size, int) and 2 <= size <= n_m):
        problems.append(f"ranking_size must be an integer in [2, {n_m}], not {ranking_size!r}")
    if cuts.shape != (n_levels - 1,) or np.any(np.diff(cuts) <= 0) or not np.isfinite(cuts).all():
        problems.append(f"cutpoints must be {n_levels - 1} increasing numbers, not {cutpoints!r}")
    bad_p = pcuts.shape != (2 * max_grade,) or np.any(np.diff(pcuts) <= 0)
    if max_grade > 1 and bad_p:
        problems.append(
            f"pair_cutpoints must be {2 * max_grade} increasing numbers, not {pair_cutpoints!r}"
        )
    if ties and max_grade > 1:
        problems.append("ties=True applies to binary pairs (max_grade=1)")
    check_arguments(*problems, where="simulate_kinds")

    questions = _ids("q", n_questions)
    raters = _ids("r", n_raters)
    eta = th[None, :] + rng_ans.normal(0.0, answer_sd, (n_questions, n_m))
    alpha = np.exp(rng_panel.normal(0.0, alpha_sd, n_raters))
    sev = rng_panel.normal(0.0, severity_sd, n_raters)
    beta = rng_panel.normal(position_bias, beta_sd, n_raters)
    settings: dict[str, Any] = {
        **{k: v for k, v in kw.items() if k != "n_systems"},
        "theta": dict(zip(systems, th.tolist(), strict=True)),
        "kinds": list(kinds),
        "cutpoints": cuts.tolist(),
        "pair_cutpoints": pcuts.tolist() if max_grade > 1 else None,
        "ranking_size": ranking_size,
    }
    order = np.argsort(-th, kind="stable")
    truth = xr.Dataset(
        {
            "theta": ((S.SYSTEM,), th),
            "eta": ((S.QUESTION, S.SYSTEM), eta),
            "alpha": ((S.RATER,), alpha),
            "severity": ((S.RATER,), sev),
            "beta": ((S.RATER,), beta),
            "cutpoints": (("cut",), cuts),
        },
        coords={S.SYSTEM: systems, S.QUESTION: questions, S.RATER: raters},
        attrs={
            "true_order": " > ".join(systems[k] for k in order),
            "dimension": dimension,
            "random_seed": random_seed,
        },
    )
    if max_grade > 1:
        truth["pair_cutpoints"] = ("pair_cut", pcuts)
    provenance = Provenance(source="simulate_kinds()")
    ratings = pairs = rankings = None
    if "absolute" in kinds:
        ratings = _absolute(rng_abs, eta, alpha, sev, cuts, raters_per_answer, systems,
                            questions, raters, dimension)  # fmt: skip
    if "pairs" in kinds:
        frame = _pairs(rng_pair, eta, alpha, beta, comparisons_per_question, max_grade, ties,
                       nu, pcuts, systems, questions, raters, dimension)  # fmt: skip
        pairs = Comparisons(frame, kind="pairs", max_grade=max_grade, provenance=provenance)
    if "rankings" in kinds:
        frame = _rankings(rng_rank, eta, alpha, size, rankings_per_question, systems,
                          questions, raters, dimension)  # fmt: skip
        rankings = Comparisons(frame, kind="rankings", provenance=provenance)
    return SimulatedKinds(ratings, pairs, rankings, truth, settings)


def _absolute(
    rng: np.random.Generator,
    eta: np.ndarray,
    alpha: np.ndarray,
    sev: np.ndarray,
    cuts: np.ndarray,
    n: int,
    systems: list[str],
    questions: list[str],
    raters: list[str],
    dimension: str,
) -> Ratings:
    n_q, n_m = eta.shape
    n_a = n_q * n_m
    # the first n of a random order of the panel per answer, and one uniform per (slot,
    # answer) drawn slot-major: more raters per answer add raters to the same answers
    who = np.argsort(rng.random((n_a, len(raters))), axis=1)[:, :n]  # answer, slot
    u = rng.random((n, n_a)).T  # answer, slot
    lat = eta.reshape(-1)[:, None]
    lp = alpha[who] * lat - sev[who]
    cum = 0.5 * (1.0 + np.tanh(0.5 * (cuts[None, None, :] - lp[..., None])))
    y = 1 + (u[..., None] > cum).sum(-1)
    q_idx = np.repeat(np.arange(n_q), n_m)
    m_idx = np.tile(np.arange(n_m), n_q)
    items = [f"{questions[q]}-{systems[m]}" for q, m in zip(q_idx, m_idx, strict=True)]
    frame = pl.DataFrame(
        {
            S.ITEM: np.repeat(items, n),
            S.RATER: [raters[j] for j in who.reshape(-1)],
            S.RATING: y.reshape(-1).astype(np.int64),
            S.SYSTEM: np.repeat([systems[m] for m in m_idx], n),
            S.QUESTION: np.repeat([questions[q] for q in q_idx], n),
            S.DIMENSION: [dimension] * (n_a * n),
        }
    )
    return read_ratings(frame, scale=OrdinalScale.likert(cuts.size + 1), name="simulate_kinds()")


def _pairs(
    rng: np.random.Generator,
    eta: np.ndarray,
    alpha: np.ndarray,
    beta: np.ndarray,
    c: int,
    max_grade: int,
    ties: bool,
    nu: float,
    pcuts: np.ndarray,
    systems: list[str],
    questions: list[str],
    raters: list[str],
    dimension: str,
) -> pl.DataFrame:
    n_q, n_m = eta.shape
    all_pairs = np.array(list(combinations(range(n_m), 2)))  # P, 2
    n_p = all_pairs.shape[0]
    cycles = -(-c // n_p)
    # per question: the pairs in a random order, every pair once before any twice
    keys = rng.random((n_q, cycles, n_p))
    pick = np.argsort(keys, axis=2).reshape(n_q, cycles * n_p)[:, :c]  # q, c
    pq = all_pairs[pick]  # q, c, 2
    flip = rng.random((n_q, c)) < 0.5
    a = np.where(flip, pq[..., 1], pq[..., 0]).reshape(-1)
    b = np.where(flip, pq[..., 0], pq[..., 1]).reshape(-1)
    q = np.repeat(np.arange(n_q), c)
    j = rng.integers(len(raters), size=q.size)
    s = np.where(rng.random(q.size) < 0.5, 1.0, -1.0)
    u = alpha[j] * (eta[q, a] - eta[q, b]) + beta[j] * s
    y = draw_pair_outcomes(rng, u, max_grade=max_grade, ties=ties, nu=nu, cutpoints=pcuts)
    n = q.size
    return pl.DataFrame(
        {
            COMPARISON: [str(k + 1) for k in range(n)],
            S.QUESTION: [questions[k] for k in q],
            SYSTEM_A: [systems[k] for k in a],
            SYSTEM_B: [systems[k] for k in b],
            S.RATER: [raters[k] for k in j],
            S.RATER_KIND: ["human"] * n,
            S.DIMENSION: [dimension] * n,
            OUTCOME: y,
            SHOWN_FIRST: np.where(s > 0, "a", "b"),
            S.ROW: np.arange(1, n + 1),
        }
    ).select(PAIR_COLUMNS)


def _rankings(
    rng: np.random.Generator,
    eta: np.ndarray,
    alpha: np.ndarray,
    size: int,
    per_q: int,
    systems: list[str],
    questions: list[str],
    raters: list[str],
    dimension: str,
) -> pl.DataFrame:
    n_q, n_m = eta.shape
    j = np.argsort(rng.random((n_q, len(raters))), axis=1)[:, :per_q].reshape(-1)
    q = np.repeat(np.arange(n_q), per_q)
    n = q.size
    subset = np.argsort(rng.random((n, n_m)), axis=1)[:, :size]  # ranking, size
    noisy = alpha[j][:, None] * eta[q[:, None], subset] + rng.gumbel(size=subset.shape)
    ranks = np.empty_like(subset)
    np.put_along_axis(
        ranks, np.argsort(-noisy, axis=1), np.arange(1, size + 1)[None, :].repeat(n, 0), axis=1
    )
    return pl.DataFrame(
        {
            RANKING: np.repeat([f"k{k + 1}{S.UNIT_SEP}{dimension}" for k in range(n)], size),
            S.QUESTION: np.repeat([questions[k] for k in q], size),
            S.RATER: np.repeat([raters[k] for k in j], size),
            S.RATER_KIND: ["human"] * (n * size),
            S.DIMENSION: [dimension] * (n * size),
            S.SYSTEM: [systems[k] for k in subset.reshape(-1)],
            RANK: ranks.reshape(-1).astype(float),
            S.ROW: np.arange(1, n * size + 1),
        }
    ).select(RANKING_COLUMNS)


__all__ = ["KINDS", "SimulatedKinds", "draw_pair_outcomes", "simulate_kinds", "true_strengths"]
