"""A high-agreement ordinal study simulated from the ordinal rater model, with its truth.

:func:`high_agreement_study` simulates the regime of issue 19: many systems (14 by
default), a few raters per answer (2-4, drawn from a pool), 5-point ratings on which the
raters nearly always agree (Fleiss' kappa about 0.85). Ratings come from the ordinal rater
model of ``models/ordinal/card.md`` (latent answer quality = system + question + residual;
ordered-logistic ratings with rater severity and discrimination), with a latent spread of
many logits: the rating noise is small against the spacing of the cut-points, which is
what high agreement means in this model. The truth holds every parameter, the systems'
true order and their true fair averages (``models/ordinal/card.md``: the expected rating by
a typical rater, averaged over the system's own answers).

It is re-exported by :mod:`raterstats.simulate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import xarray as xr
from scipy.special import expit

from raterstats import schema as S
from raterstats.ingest import read_ratings
from raterstats.scales import OrdinalScale

if TYPE_CHECKING:  # raterstats.simulate re-exports this module's simulator
    from raterstats.simulate import SimulatedStudy

#: Seed of the default high-agreement study (the value of ``raterstats.simulate.DEFAULT_SEED``).
HIGH_AGREEMENT_SEED = 20240611

#: Cut-points of the high-agreement study in units of :data:`HIGH_AGREEMENT_SCALE` logits
#: (ratings of generated text pile up at 4: a wide interval for level 4).
HIGH_AGREEMENT_CUTS = (-2.0, -1.1, -0.2, 1.4)
#: Default logits per unit of the latent scale: the spacing of the cut-points (about one
#: unit) against the logistic rating noise (scale 1); at 20, 2-4 raters per answer agree
#: with Fleiss' kappa 0.82-0.87 on 5 points (seeds 1-4 and the default).
HIGH_AGREEMENT_SCALE = 20.0


def expected_ratings(lp: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Expected 1..K rating under the ordered-logistic model: ``sum_k k P(y = k)`` with
    ``P(y <= k) = logistic(c_k - lp)``; ``cuts`` (.., K - 1) broadcasts against
    ``lp[..., None]``.

    Examples
    --------
    >>> expected_ratings(np.array([0.0, 100.0]), np.array([-1.0, 1.0])).round(3).tolist()
    [2.0, 3.0]
    """
    cum = expit(np.asarray(cuts) - np.asarray(lp)[..., None])
    return np.asarray(cum.shape[-1] + 1 - cum.sum(axis=-1))


def high_agreement_study(
    *,
    random_seed: int | None = HIGH_AGREEMENT_SEED,
    n_systems: int = 14,
    n_questions: int = 50,
    n_raters: int = 8,
    raters_per_answer: tuple[int, int] = (2, 4),
    dimensions: Sequence[str] = ("coherence", "relevance"),
    scale: float = HIGH_AGREEMENT_SCALE,
    system_range: tuple[float, float] = (-1.1, 0.9),
    sigma_question: float = 0.35,
    sigma_residual: float = 0.6,
    sigma_severity: float = 0.02,
    sigma_log_discrimination: float = 0.05,
) -> SimulatedStudy:
    """Simulate a high-agreement ordinal study (issue 19), with its ground truth.

    Every question is answered by every system; each answer is rated on every dimension
    by 2-4 raters drawn at random from a pool, on a 5-point scale. The latent quality of
    answer ``i`` on dimension ``d`` is ``eta_id = s_m(i)d + q_q(i)d + e_id`` (logits); a
    rating is ordered-logistic with linear predictor ``lambda_jd * eta_id - delta_jd`` and
    cut-points ``c_d``. Quality spreads and cut-points are given in units of ``scale``
    logits, so ``scale`` sets the agreement: the rating noise (logistic, scale 1) is small
    against a cut-point spacing of about ``scale`` logits. The defaults give Fleiss' kappa
    0.82-0.87 per dimension (Randolph's 0.86-0.89), ratings piled up at 3 and 4, and system
    mean ratings from about 2.5 to 4.3.

    Parameters
    ----------
    random_seed : int or None
        Seed; the same seed gives identical data.
    n_systems, n_questions : int
        Systems, and questions each system answers.
    n_raters : int
        Raters in the pool.
    raters_per_answer : (int, int)
        Smallest and largest number of raters of an answer (uniform in between; the same
        raters rate every dimension of the answer).
    dimensions : sequence of str
        Rated dimensions.
    scale : float
        Logits per unit of the latent scale (see above).
    system_range : (float, float)
        System effects are evenly spaced over this range (units of ``scale``), in an order
        drawn per dimension, then centred.
    sigma_question, sigma_residual : float
        SD of question effects and answer residuals (units of ``scale``).
    sigma_severity : float
        SD of rater severities (units of ``scale``).
    sigma_log_discrimination : float
        SD of the raters' log-discrimination (around 0).

    Returns
    -------
    SimulatedStudy
        ``ratings`` (columns ``item, rater, dimension, rating, system, question``) and
        ``truth``: ``system_effect`` (system x dimension), ``system_rank`` (1 = best),
        ``question_effect``, ``residual`` and ``eta`` (item x dimension), rater
        ``severity`` and ``discrimination`` (rater x dimension), ``cutpoints`` (dimension x
        cut), ``fair_average`` (system x dimension: the expected rating by a typical rater,
        severity 0 and discrimination 1, averaged over the system's answers),
        ``mean_rating`` (system x dimension, observed), and the scales.

    Examples
    --------
    >>> from raterstats.simulate import high_agreement_study
    >>> s = high_agreement_study(n_questions=10, random_seed=1)
    >>> s.ratings.dimensions, s.truth["system_effect"].dims
    (('coherence', 'relevance'), ('system', 'dimension'))
    """
    from raterstats.simulate import SimulatedStudy

    lo_k, hi_k = raters_per_answer
    if not 2 <= lo_k <= hi_k <= n_raters:
        raise ValueError(
            f"raters_per_answer={raters_per_answer} must satisfy 2 <= low <= high <= "
            f"n_raters={n_raters}"
        )
    if n_systems < 2 or n_questions < 2:
        raise ValueError("n_systems and n_questions must be at least 2")
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    ss = np.random.SeedSequence(random_seed)
    rng_sys, rng_lat, rng_raters, rng_assign, rng_rate = (
        np.random.default_rng(s) for s in ss.spawn(5)
    )
    dims = tuple(dimensions)
    n_d, n_m = len(dims), n_systems
    systems = [f"sys{m + 1:02d}" for m in range(n_m)]
    questions = [f"q{q + 1:03d}" for q in range(n_questions)]
    q_idx = np.repeat(np.arange(n_questions), n_m)
    m_idx = np.tile(np.arange(n_m), n_questions)
    items = [f"{questions[q]}-{systems[m]}" for q, m in zip(q_idx, m_idx, strict=True)]
    n_i = len(items)

    # latent quality (logits) ---------------------------------------------------------------
    grid = np.linspace(system_range[0], system_range[1], n_m)
    sys_eff = np.stack([grid[rng_sys.permutation(n_m)] for _ in range(n_d)], axis=1) * scale
    sys_eff -= sys_eff.mean(axis=0)
    offset = np.mean(system_range) * scale  # the system mean, carried by the cut-points
    q_eff = rng_lat.normal(0.0, sigma_question * scale, (n_questions, n_d))
    e_eff = rng_lat.normal(0.0, sigma_residual * scale, (n_i, n_d))
    eta = sys_eff[m_idx] + q_eff[q_idx] + e_eff

    # raters ----------------------------------------------------------------------------------
    raters = [f"r{j + 1}" for j in range(n_raters)]
    sev = rng_raters.normal(0.0, sigma_severity * scale, (n_raters, n_d))
    disc = np.exp(rng_raters.normal(0.0, sigma_log_discrimination, (n_raters, n_d)))
    cuts = np.tile(np.asarray(HIGH_AGREEMENT_CUTS) * scale - offset, (n_d, 1))

    # who rates what ----------------------------------------------------------------------------
    n_per = rng_assign.integers(lo_k, hi_k + 1, n_i)
    ev_item = np.repeat(np.arange(n_i), n_per)
    ev_rater = np.concatenate([rng_assign.choice(n_raters, size=k, replace=False) for k in n_per])
    row_item = np.repeat(ev_item, n_d)
    row_rater = np.repeat(ev_rater, n_d)
    row_dim = np.tile(np.arange(n_d), ev_item.size)
    lp = disc[row_rater, row_dim] * eta[row_item, row_dim] - sev[row_rater, row_dim]
    cum = expit(cuts[row_dim] - lp[:, None])
    y = 1 + np.sum(rng_rate.random(lp.size)[:, None] > cum, axis=1)

    frame = pl.DataFrame(
        {
            S.ITEM: [items[i] for i in row_item],
            S.RATER: [raters[j] for j in row_rater],
            S.DIMENSION: [dims[d] for d in row_dim],
            S.RATING: y.astype(np.int64),
            S.SYSTEM: [systems[m_idx[i]] for i in row_item],
            S.QUESTION: [questions[q_idx[i]] for i in row_item],
        }
    )
    ratings = read_ratings(
        frame,
        scale=dict.fromkeys(dims, OrdinalScale.likert(5)),
        name=f"high_agreement_study(random_seed={random_seed})",
    )

    # truth -----------------------------------------------------------------------------------
    expected = expected_ratings(eta, cuts[None, :, :])  # typical rater: severity 0, lambda 1
    fair = np.stack([expected[m_idx == m].mean(axis=0) for m in range(n_m)])
    mean_rating = np.zeros((n_m, n_d))
    for d in range(n_d):
        sel = row_dim == d
        mean_rating[:, d] = np.bincount(
            m_idx[row_item[sel]], weights=y[sel], minlength=n_m
        ) / np.bincount(m_idx[row_item[sel]], minlength=n_m)
    rank = np.argsort(np.argsort(-sys_eff, axis=0), axis=0) + 1
    truth = xr.Dataset(
        {
            "system_effect": (("system", "dimension"), sys_eff),
            "system_rank": (("system", "dimension"), rank),
            "question_effect": (("question", "dimension"), q_eff),
            "residual": (("item", "dimension"), e_eff),
            "eta": (("item", "dimension"), eta),
            "severity": (("rater", "dimension"), sev),
            "discrimination": (("rater", "dimension"), disc),
            "cutpoints": (("dimension", "cut"), cuts),
            "fair_average": (("system", "dimension"), fair),
            "mean_rating": (("system", "dimension"), mean_rating),
            "sigma_question": ((), sigma_question * scale),
            "sigma_residual": ((), sigma_residual * scale),
            "scale": ((), scale),
        },
        coords={
            "system": systems,
            "dimension": list(dims),
            "question": questions,
            "item": items,
            "rater": raters,
            "cut": [1, 2, 3, 4],
            "item_system": ("item", [systems[m] for m in m_idx]),
            "item_question": ("item", [questions[q] for q in q_idx]),
        },
        attrs={
            "study": "high_agreement",
            "random_seed": -1 if random_seed is None else random_seed,
            "link": "logit",
        },
    )
    config = {
        "random_seed": random_seed,
        "n_systems": n_systems,
        "n_questions": n_questions,
        "n_raters": n_raters,
        "raters_per_answer": list(raters_per_answer),
        "dimensions": list(dims),
        "scale": scale,
        "system_range": list(system_range),
        "sigma_question": sigma_question,
        "sigma_residual": sigma_residual,
        "sigma_severity": sigma_severity,
        "sigma_log_discrimination": sigma_log_discrimination,
    }
    return SimulatedStudy(ratings=ratings, truth=truth, config=config)


__all__ = [
    "HIGH_AGREEMENT_CUTS",
    "HIGH_AGREEMENT_SCALE",
    "expected_ratings",
    "high_agreement_study",
]
