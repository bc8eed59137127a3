"""The high-agreement regime of issue 19: the simulator, and the ordinal model on it.

The fast tests check the simulator (Fleiss' kappa about 0.85 on 5 points, 14 systems, 2-4
raters per answer, a known system order) and the latent unit measured from its ratings; the
slow test fits ``OrdinalRaters()`` at its defaults and checks convergence (0 divergences,
R-hat <= 1.01), the system scores (Spearman >= 0.9 with the true order, range at least half
the raw means' range) and the posterior predictive Randolph's kappa (covers the observed).
"""

from __future__ import annotations

import arviz_stats as azs
import numpy as np
import polars as pl
import pytest
from scipy.stats import spearmanr

from raterstats import OrdinalRaters
from raterstats import schema as S
from raterstats.agreement import fleiss_kappa
from raterstats.models.ordinal import DIAGNOSED_PARAMETERS, latent_units, system_scores
from raterstats.simulate import high_agreement_study
from raterstats.simulate_ordinal import expected_ratings


@pytest.fixture(scope="module")
def study():
    return high_agreement_study()


def _matrix(r, dim):
    sub = r.data.filter(pl.col(S.DIMENSION) == dim)
    return sub.pivot(on=S.RATER, index=S.ITEM, values=S.CODE).drop(S.ITEM).to_numpy()


def test_the_simulator_has_high_agreement_and_a_known_order(study):
    r, truth = study.ratings, study.truth
    assert len(r.data[S.SYSTEM].unique()) == 14
    per_answer = r.data.group_by(S.ITEM, S.DIMENSION).len()["len"]
    assert per_answer.min() == 2 and per_answer.max() == 4
    for d in r.dimensions:
        kappa = fleiss_kappa(_matrix(r, d).astype(float))
        assert 0.8 <= kappa <= 0.9, (d, kappa)
        ranks = truth["system_rank"].sel(dimension=d).values
        assert sorted(ranks.tolist()) == list(range(1, 15))
    # the truth's fair averages: a typical rater's expected rating averaged over the answers
    d0, m0 = "coherence", truth["system"].values[0]
    eta = truth["eta"].sel(dimension=d0).values[truth["item_system"].values == m0]
    want = expected_ratings(eta, truth["cutpoints"].sel(dimension=d0).values).mean()
    assert float(truth["fair_average"].sel(system=m0, dimension=d0)) == pytest.approx(want)
    again = high_agreement_study()
    assert again.ratings.data.equals(r.data)


def test_the_latent_unit_of_high_agreement_is_many_logits(study):
    """The priors' unit follows the data: about 15-17 logits here (the truth: a latent
    spread of about 18), 1 for the built-in study's moderate agreement (at least 1)."""
    units = latent_units(OrdinalRaters().prepare(study.ratings))
    assert (units > 10).all() and (units < 30).all()


@pytest.mark.slow
def test_the_default_fit_converges_and_keeps_the_system_scores(study):
    from raterstats.design import compare_designs

    r, truth = study.ratings, study.truth
    dt = OrdinalRaters().fit(r, random_seed=1, progress=False)
    post = dt["posterior"].to_dataset()
    summ = azs.summary(post[[v for v in DIAGNOSED_PARAMETERS if v in post]], kind="diagnostics")
    assert int(dt["sample_stats"]["diverging"].sum()) == 0
    assert float(np.nanmax(summ["r_hat"].to_numpy(dtype=float))) <= 1.01
    fa = system_scores(dt)["fair_average"].mean(("chain", "draw")).isel(design=0)
    ppc = compare_designs(dt, n_replicates=100, ci_prob=0.9, random_seed=1)
    for d in r.dimensions:
        f = fa.sel(dimension=d).sel(system=truth["system"].values).values
        raw = truth["mean_rating"].sel(dimension=d).values
        assert spearmanr(f, truth["system_effect"].sel(dimension=d).values).statistic >= 0.9
        assert np.ptp(f) >= 0.5 * np.ptp(raw)
        obs = float(ppc["kappa_observed"].sel(dimension=d).isel(design=0))
        lo = float(ppc["kappa_low"].sel(dimension=d).isel(design=0))
        hi = float(ppc["kappa_high"].sel(dimension=d).isel(design=0))
        assert lo <= obs <= hi, (d, lo, obs, hi)
    # recovery of the system effects and of the residual scale (the truth's latent scale is
    # the model's: the raters' discriminations scatter around 1)
    s = post["system_effect"].mean(("chain", "draw"))
    for d in r.dimensions:
        t = truth["system_effect"].sel(dimension=d).sel(system=s["system"].values).values
        assert np.corrcoef(s.sel(dimension=d).values, t)[0, 1] > 0.95
    se = post["sigma_residual"]
    lo, hi = se.quantile(0.01, ("chain", "draw")), se.quantile(0.99, ("chain", "draw"))
    assert bool(((lo <= truth["sigma_residual"]) & (truth["sigma_residual"] <= hi)).all())
