"""Parameter recovery over replicates (slow): the 90% posterior intervals of rater
parameters cover the simulated truth in 80-97% of cases over 20 replicates."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats import MACE, DawidSkene, NominalScale, rater_summary, read_ratings
from raterstats.simulate import archehr_like_study

N_REP = 20


def _coverage(hits: list[np.ndarray]) -> float:
    return float(np.mean(np.concatenate([h.ravel() for h in hits])))


@pytest.mark.slow
@pytest.mark.parametrize("hierarchical", [False, True])
def test_mace_competence_coverage(hierarchical):
    hits = []
    for rep in range(N_REP):
        s = archehr_like_study(n_cases=20, n_systems=10, random_seed=1000 + rep)
        dt = MACE(hierarchical=hierarchical).fit(s.ratings, random_seed=rep, progress=False)
        summ = rater_summary(dt, ci_prob=0.9).isel(design=0)
        true = s.truth["competence"].sel(rater=summ["rater"], dimension=summ["dimension"])
        hits.append(((summ["competence_low"] <= true) & (true <= summ["competence_high"])).values)
    cov = _coverage(hits)
    print(f"coverage of the 90% intervals: {cov:.3f} ({sum(h.size for h in hits)} intervals)")
    assert 0.80 <= cov <= 0.97, cov


def _simulate_ds(rng: np.random.Generator, n_items=300, n_raters=12, per_item=4, K=3):
    prev = rng.dirichlet(np.full(K, 3.0))
    conc = np.ones((K, K)) + np.eye(K) * (2.5 * K - 1)
    conf = np.stack([[rng.dirichlet(conc[t]) for t in range(K)] for _ in range(n_raters)])
    truth = rng.choice(K, n_items, p=prev)
    rows = []
    for i in range(n_items):
        for j in rng.choice(n_raters, per_item, replace=False):
            rows.append((f"i{i:03d}", f"r{j:02d}", str(rng.choice(K, p=conf[j, truth[i]]))))
    frame = pl.DataFrame(rows, schema=["item", "rater", "rating"], orient="row")
    r = read_ratings(frame, scale=NominalScale([str(k) for k in range(K)]))
    return r, conf, truth


@pytest.mark.slow
def test_dawid_skene_confusion_coverage():
    hits = []
    for rep in range(N_REP):
        rng = np.random.default_rng(2000 + rep)
        r, conf, _ = _simulate_ds(rng)
        dt = DawidSkene().fit(r, random_seed=rep, progress=False)
        summ = rater_summary(dt, ci_prob=0.9).isel(dimension=0, design=0)
        idx = [int(x[1:]) for x in summ["rater"].values]
        true = conf[idx]
        lo, hi = summ["confusion_low"].values, summ["confusion_high"].values
        hits.append((lo <= true) & (true <= hi))
    cov = _coverage(hits)
    print(f"coverage of the 90% intervals: {cov:.3f} ({sum(h.size for h in hits)} intervals)")
    assert 0.80 <= cov <= 0.97, cov


@pytest.mark.slow
def test_em_recovery_dawid_skene():
    rng = np.random.default_rng(7)
    r, conf, _ = _simulate_ds(rng, n_items=2000)
    dt = DawidSkene().fit(r, method="em", random_seed=1)
    summ = rater_summary(dt).isel(dimension=0, design=0)
    idx = [int(x[1:]) for x in summ["rater"].values]
    assert float(np.abs(summ["confusion_mean"].values - conf[idx]).mean()) < 0.03


def _simulate_partial_ds(rng: np.random.Generator, n_items=300, n_raters=15, per_item=4, K=3):
    """Ratings from partially pooled Dawid-Skene with hyperparameters drawn from its prior
    (error logits' population means below -0.5, so that the correct label stays the most
    likely rating) and raters of uneven activity: some cells sampled centred, some not."""
    ti, ai = np.nonzero(~np.eye(K, dtype=bool))
    zeta = np.minimum(rng.normal(-2.0, 1.5, ti.size), -0.5)
    sigma = abs(rng.normal(0.0, 1.0))
    logits = np.zeros((n_raters, K, K))
    logits[:, ti, ai] = zeta + sigma * rng.normal(size=(n_raters, ti.size))
    conf = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    prev = rng.dirichlet(np.full(K, 3.0))
    activity = rng.dirichlet(np.full(n_raters, 1.0))
    truth = rng.choice(K, n_items, p=prev)
    rows = []
    for i in range(n_items):
        for j in rng.choice(n_raters, per_item, replace=False, p=activity):
            rows.append((f"i{i:03d}", f"r{j:02d}", str(rng.choice(K, p=conf[j, truth[i]]))))
    frame = pl.DataFrame(rows, schema=["item", "rater", "rating"], orient="row")
    r = read_ratings(frame, scale=NominalScale([str(k) for k in range(K)]))
    return r, conf


@pytest.mark.slow
def test_partially_pooled_dawid_skene_confusion_coverage():
    hits, n_centred, n_logits = [], 0, 0
    for rep in range(N_REP):
        rng = np.random.default_rng(3000 + rep)
        r, conf = _simulate_partial_ds(rng)
        model = DawidSkene(pooling="partial")
        cen = model.centred_entries(model.prepare(r))
        n_centred, n_logits = n_centred + int(cen.sum()), n_logits + cen.size
        dt = model.fit(r, random_seed=rep, progress=False)
        summ = rater_summary(dt, ci_prob=0.9).isel(dimension=0, design=0)
        idx = [int(x[1:]) for x in summ["rater"].values]
        lo, hi = summ["confusion_low"].values, summ["confusion_high"].values
        hits.append((lo <= conf[idx]) & (conf[idx] <= hi))
    cov = _coverage(hits)
    print(
        f"coverage of the 90% intervals: {cov:.3f} ({sum(h.size for h in hits)} intervals); "
        f"{n_centred} of {n_logits} logits sampled centred"
    )
    assert 0 < n_centred < n_logits  # both parametrisations were exercised
    assert 0.80 <= cov <= 0.97, cov
