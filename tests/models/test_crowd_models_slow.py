"""Community Dawid-Skene and the enhanced BCC, slow (issue 19): recovery and coverage of
90 % intervals on data simulated from each model itself, accuracy against unpooled
Dawid-Skene on crowds with correlated errors, and NUTS on the PyMC models."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from raterstats import DawidSkene, item_posterior, rater_summary
from raterstats.models.latent_class import (
    CommunityDawidSkene,
    EnhancedBCC,
    biased_community_crowd,
    hard_subtype_crowd,
    simulate_community_crowd,
    simulate_subtype_crowd,
)

N_REP = 12


def _rater_index(summ):
    return np.array([int(str(x)[1:]) for x in summ["rater"].values])


def _accuracy(dt, truth):
    post = item_posterior(dt).isel(dimension=0)
    idx = np.array([int(str(i)[1:]) for i in post["item"].values])
    return float((post["map_code"].values == truth[idx]).mean())


def _fit(model, ratings, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the health is read from the fit below
        return model.fit(ratings, progress=False, **kw)


@pytest.mark.slow
def test_community_ds_confusion_coverage():
    """Replicates from the model itself (two communities drawn from the prior, s = 30,
    300 items x 4 ratings from 30 raters): the 90 % intervals of the raters' confusion
    entries cover the truth in 80-97 % of cases; most fits pass their checks."""
    hits, ok = [], 0
    for rep in range(N_REP):
        sim = simulate_community_crowd(
            n_items=300, n_raters=30, per_item=4, K=3, communities=2, concentration=30.0,
            random_seed=4000 + rep,
        )  # fmt: skip
        dt = _fit(CommunityDawidSkene(communities=2), sim.ratings, random_seed=rep)
        ok += int(dt.attrs["health_ok"])
        summ = rater_summary(dt, ci_prob=0.9).isel(dimension=0, design=0)
        true = sim.truth["confusion"][_rater_index(summ)]
        lo, hi = summ["confusion_low"].values, summ["confusion_high"].values
        hits.append(((lo <= true) & (true <= hi)).ravel())
    cov = float(np.mean(np.concatenate(hits)))
    print(f"coverage {cov:.3f} ({sum(h.size for h in hits)} intervals); {ok} of {N_REP} fits ok")
    assert 0.80 <= cov <= 0.97, cov
    assert ok >= N_REP // 2, ok


@pytest.mark.slow
def test_ebcc_confusion_coverage():
    """Replicates from the model itself (2 subtypes per class, every rater's subtype rows
    drawn from the prior, 300 items x 5 ratings from 20 raters): the 90 % intervals of the
    raters' subtype-averaged confusions cover the truth in 80-97 % of cases."""
    hits, ok = [], 0
    for rep in range(N_REP):
        sim = simulate_subtype_crowd(
            n_items=300, n_raters=20, per_item=5, K=2, subtypes=2, random_seed=5000 + rep
        )
        dt = _fit(EnhancedBCC(subtypes=2), sim.ratings, random_seed=rep)
        ok += int(dt.attrs["health_ok"])
        summ = rater_summary(dt, ci_prob=0.9).isel(dimension=0, design=0)
        true = sim.truth["confusion"][_rater_index(summ)]
        lo, hi = summ["confusion_low"].values, summ["confusion_high"].values
        hits.append(((lo <= true) & (true <= hi)).ravel())
    cov = float(np.mean(np.concatenate(hits)))
    print(f"coverage {cov:.3f} ({sum(h.size for h in hits)} intervals); {ok} of {N_REP} fits ok")
    assert 0.80 <= cov <= 0.97, cov
    assert ok >= N_REP // 2, ok


@pytest.mark.slow
def test_em_recovers_the_communities():
    """A large crowd of two distinct communities: the variational fit finds two
    communities (held-out rule), puts every rater in its own, and recovers the community
    confusions within 0.05."""
    C = np.array(
        [
            [[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]],
            [[0.5, 0.45, 0.05], [0.1, 0.8, 0.1], [0.05, 0.45, 0.5]],
        ]
    )
    sim = simulate_community_crowd(
        n_items=3000, n_raters=60, per_item=4, K=3, communities=2, community_confusion=C,
        concentration=100.0, random_seed=7,
    )  # fmt: skip
    dt = CommunityDawidSkene().fit(sim.ratings, method="em", random_seed=1)
    post = dt.posterior.isel(chain=0, draw=0)
    assert post.sizes["community"] == 2
    mem = post["community_membership"].values.argmax(1)
    comm = sim.truth["community"][[int(r[1:]) for r in post["rater"].values]]
    agree = max(np.mean(mem == comm), np.mean(mem == 1 - comm))
    assert agree == 1.0
    est = post["community_confusion"].values[:, 0, 0]
    if np.mean(mem == comm) < 1:
        est = est[::-1]
    assert np.abs(est - C).max() < 0.05


@pytest.mark.slow
def test_community_ds_beats_dawid_skene_on_a_biased_community():
    diffs = []
    for seed in range(3):
        sim = biased_community_crowd(random_seed=seed)
        t = sim.truth["true_label"]
        cds = _accuracy(CommunityDawidSkene().fit(sim.ratings, method="em", random_seed=1), t)
        ds = _accuracy(DawidSkene().fit(sim.ratings, method="em", random_seed=1), t)
        diffs.append(cds - ds)
    print("CDS - DS accuracy:", np.round(diffs, 3))
    assert min(diffs) > 0 and np.mean(diffs) > 0.02


@pytest.mark.slow
def test_ebcc_beats_dawid_skene_on_hard_subtypes():
    diffs = []
    for seed in range(3):
        sim = hard_subtype_crowd(random_seed=seed)
        t = sim.truth["true_label"]
        ebcc = _accuracy(EnhancedBCC().fit(sim.ratings, method="em", random_seed=1), t)
        ds = _accuracy(DawidSkene().fit(sim.ratings, method="em", random_seed=1), t)
        diffs.append(ebcc - ds)
    print("EBCC - DS accuracy:", np.round(diffs, 3))
    assert min(diffs) > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "factory", [lambda: CommunityDawidSkene(communities=2), lambda: EnhancedBCC(subtypes=2)]
)
def test_nuts_on_the_pymc_model(factory):
    """NUTS on the PyMC model (``logp_backend="pymc"``): the same model as the compiled
    density, relabelled after sampling; its label posteriors agree with the compiled
    density's."""
    sim = simulate_community_crowd(n_items=150, n_raters=12, per_item=4, K=2, random_seed=3)
    m = factory()
    kw = {"draws": 300, "tune": 300, "chains": 2, "random_seed": 1}
    a = _fit(m, sim.ratings, logp_backend="pymc", **kw)
    b = _fit(m, sim.ratings, **kw)
    assert a.attrs["logp_backend"] == "pymc" and b.attrs["logp_backend"] == "compiled"
    assert "relabelling" in a.posterior.attrs
    pa = item_posterior(a)["prob"].values
    pb = item_posterior(b)["prob"].values
    assert np.abs(pa - pb).max() < 0.1
