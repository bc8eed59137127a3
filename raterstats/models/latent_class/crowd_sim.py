"""Simulated crowds with correlated errors, from the generative stories of community
Dawid-Skene (:func:`simulate_community_crowd`: raters in communities that share a
confusion) and of the enhanced BCC (:func:`simulate_subtype_crowd`: items of subtypes on
which raters err together). The recovery and coverage tests and
``benchmarks/crowd_models.py`` fit the models to these.

Every item is rated by ``per_item`` different raters drawn at random (in proportion to
``activity``, even by default); parameters not given are drawn from the model's default
priors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from raterstats.ingest import read_ratings
from raterstats.ratings import Ratings
from raterstats.scales import NominalScale


@dataclass(frozen=True)
class CrowdSimulation:
    """Simulated ratings and the truth they were drawn from (``truth``: arrays by name,
    raters in the order of ``r00, r01, ...``, items ``i0000, i0001, ...``)."""

    ratings: Ratings
    truth: dict[str, np.ndarray]


def diagonal_prior(K: int, per_category: float = 2.5) -> np.ndarray:
    """``(K, K)`` Dirichlet concentrations: ``per_category K`` on the diagonal, 1 elsewhere
    (the models' default confusion prior).

    Examples
    --------
    >>> diagonal_prior(2).tolist()
    [[5.0, 1.0], [1.0, 5.0]]
    """
    return np.ones((K, K)) + np.eye(K) * (per_category * K - 1.0)


def _ratings(
    rng: np.random.Generator,
    n_items: int,
    n_raters: int,
    per_item: int,
    activity: np.ndarray | None,
    K: int,
    rate: object,
) -> Ratings:
    """Ratings of ``n_items`` items, each by ``per_item`` raters; ``rate(i, j)`` gives the
    category rater ``j`` gives item ``i``."""
    if per_item > n_raters:
        raise ValueError("per_item must be at most n_raters")
    p = None if activity is None else np.asarray(activity, float) / np.sum(activity)
    rows = []
    for i in range(n_items):
        for j in rng.choice(n_raters, per_item, replace=False, p=p):
            rows.append((f"i{i:04d}", f"r{j:02d}", str(rate(i, int(j)))))  # type: ignore[operator]
    frame = pl.DataFrame(rows, schema=["item", "rater", "rating"], orient="row")
    return read_ratings(frame, scale=NominalScale([str(k) for k in range(K)]))


def simulate_community_crowd(
    *,
    n_items: int = 300,
    n_raters: int = 30,
    per_item: int = 4,
    K: int = 3,
    communities: int = 2,
    community_confusion: np.ndarray | None = None,
    community_weight: np.ndarray | None = None,
    concentration: float | None = None,
    rater_floor: float = 1.0,
    prevalence: np.ndarray | None = None,
    activity: np.ndarray | None = None,
    random_seed: int = 0,
) -> CrowdSimulation:
    """Ratings from community Dawid-Skene: communities' confusions ``(M, K, K)``, each
    rater's community ``c_j ~ Categorical(rho)`` and confusion rows
    ``~ Dirichlet(f + s C_(c_j)[t])`` (``f``: ``rater_floor``), true labels
    ``~ Categorical(prevalence)``.

    Examples
    --------
    >>> sim = simulate_community_crowd(n_items=20, n_raters=6, per_item=3, random_seed=1)
    >>> sim.ratings.n_ratings, sim.truth["confusion"].shape
    (60, (6, 3, 3))
    """
    rng = np.random.default_rng(random_seed)
    M = communities
    if community_confusion is None:
        prior = diagonal_prior(K)
        community_confusion = np.stack(
            [[rng.dirichlet(prior[t]) for t in range(K)] for _ in range(M)]
        )
    C = np.asarray(community_confusion, float)
    rho = np.full(M, 1.0 / M) if community_weight is None else np.asarray(community_weight)
    s = float(rng.gamma(2.0, 1 / 0.1)) if concentration is None else float(concentration)
    prev = rng.dirichlet(np.full(K, 3.0)) if prevalence is None else np.asarray(prevalence)
    comm = rng.choice(M, n_raters, p=rho)
    conf = np.stack(
        [
            [rng.dirichlet(np.maximum(rater_floor + s * C[comm[j], t], 1e-3)) for t in range(K)]
            for j in range(n_raters)
        ]
    )
    truth = rng.choice(K, n_items, p=prev)

    def rate(i: int, j: int) -> int:
        return int(rng.choice(K, p=conf[j, truth[i]]))

    r = _ratings(rng, n_items, n_raters, per_item, activity, K, rate)
    return CrowdSimulation(
        r,
        {
            "true_label": truth,
            "community": comm,
            "confusion": conf,
            "community_confusion": C,
            "community_weight": rho,
            "concentration": np.asarray(s),
            "prevalence": prev,
        },
    )


def simulate_subtype_crowd(
    *,
    n_items: int = 300,
    n_raters: int = 30,
    per_item: int = 4,
    K: int = 2,
    subtypes: int = 2,
    subtype_confusion: np.ndarray | None = None,
    subtype_weight: np.ndarray | None = None,
    prevalence: np.ndarray | None = None,
    activity: np.ndarray | None = None,
    random_seed: int = 0,
) -> CrowdSimulation:
    """Ratings from the enhanced BCC: true label ``t ~ Categorical(prevalence)``, subtype
    ``g ~ Categorical(nu[t])``, and rater ``j``'s rating from ``pi_j[t, g, :]``
    (``subtype_confusion (R, K, M, K)``; drawn from the default prior when not given).

    Examples
    --------
    >>> sim = simulate_subtype_crowd(n_items=20, n_raters=6, per_item=3, random_seed=1)
    >>> sim.truth["subtype_confusion"].shape
    (6, 2, 2, 2)
    """
    rng = np.random.default_rng(random_seed)
    M = subtypes
    if subtype_confusion is None:
        prior = diagonal_prior(K)
        subtype_confusion = np.stack(
            [
                [[rng.dirichlet(prior[t]) for _ in range(M)] for t in range(K)]
                for _ in range(n_raters)
            ]
        )
    pi = np.asarray(subtype_confusion, float)
    nu = (
        np.stack([rng.dirichlet(np.ones(M)) for _ in range(K)])
        if subtype_weight is None
        else np.asarray(subtype_weight, float)
    )
    prev = rng.dirichlet(np.full(K, 3.0)) if prevalence is None else np.asarray(prevalence)
    truth = rng.choice(K, n_items, p=prev)
    sub = np.array([rng.choice(M, p=nu[t]) for t in truth])

    def rate(i: int, j: int) -> int:
        return int(rng.choice(K, p=pi[j, truth[i], sub[i]]))

    r = _ratings(rng, n_items, n_raters, per_item, activity, K, rate)
    return CrowdSimulation(
        r,
        {
            "true_label": truth,
            "subtype": sub,
            "subtype_confusion": pi,
            "subtype_weight": nu,
            "prevalence": prev,
            "confusion": np.einsum("tm,jtma->jta", nu, pi),
        },
    )


def biased_community_crowd(
    *, n_items: int = 600, n_raters: int = 200, per_item: int = 5, random_seed: int = 0
) -> CrowdSimulation:
    """A sparse binary crowd whose errors are shared within communities: 40 % of the raters
    are accurate (``P(correct) = 0.9`` on both classes), 60 % lean to the positive class
    (``P(1 | 0) = 0.55``, ``P(1 | 1) = 0.9``); every rater's own confusion is drawn around
    its community's (``Dirichlet(1 + 50 C)``), and each rater gives about
    ``n_items per_item / n_raters`` ratings (15 by default), too few to learn its own bias.
    Prevalence 0.5.

    Examples
    --------
    >>> sim = biased_community_crowd(n_items=20, n_raters=10, random_seed=1)
    >>> sim.truth["community_confusion"].shape
    (2, 2, 2)
    """
    C = np.array([[[0.9, 0.1], [0.1, 0.9]], [[0.45, 0.55], [0.1, 0.9]]])
    return simulate_community_crowd(
        n_items=n_items, n_raters=n_raters, per_item=per_item, K=2, communities=2,
        community_confusion=C, community_weight=np.array([0.4, 0.6]), concentration=50.0,
        prevalence=np.array([0.5, 0.5]), random_seed=random_seed,
    )  # fmt: skip


def hard_subtype_crowd(
    *,
    n_items: int = 600,
    n_raters: int = 40,
    per_item: int = 15,
    miss: float = 0.4,
    random_seed: int = 0,
) -> CrowdSimulation:
    """A binary crowd that errs together on a subtype of items: 40 % of the positives are
    *hard*, and on them every rater says negative with probability ``miss``; on easy
    positives and on negatives (whose two subtypes behave alike) every rater is right with
    probability 0.95. Given the class, the ratings of a hard item are correlated (they
    share its subtype), which Dawid-Skene's likelihood ignores: it counts each negative
    vote on a hard positive as independent evidence of a negative, and with 15 ratings per
    item a hard positive with 8 or 9 negative votes comes out negative, where a model of
    the subtype sees a hard positive. Prevalence 0.5.

    Examples
    --------
    >>> sim = hard_subtype_crowd(n_items=20, n_raters=10, per_item=5, random_seed=1)
    >>> sim.truth["subtype_confusion"].shape
    (10, 2, 2, 2)
    """
    pi = np.empty((n_raters, 2, 2, 2))
    easy = np.array([[0.95, 0.05], [0.05, 0.95]])
    pi[:, :, 0] = easy
    pi[:, 0, 1] = easy[0]
    pi[:, 1, 1] = [miss, 1.0 - miss]
    return simulate_subtype_crowd(
        n_items=n_items, n_raters=n_raters, per_item=per_item, K=2, subtypes=2,
        subtype_confusion=pi, subtype_weight=np.array([[0.5, 0.5], [0.6, 0.4]]),
        prevalence=np.array([0.5, 0.5]), random_seed=random_seed,
    )  # fmt: skip


__all__ = [
    "CrowdSimulation",
    "biased_community_crowd",
    "diagonal_prior",
    "hard_subtype_crowd",
    "simulate_community_crowd",
    "simulate_subtype_crowd",
]
