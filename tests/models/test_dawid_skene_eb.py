"""Dawid-Skene's empirical-Bayes confusion prior (issue 19): the type-II maximum-likelihood
update, the alternation with EM, what a fit records and how every method uses the learnt
rows."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from raterstats import DawidSkene
from raterstats.models import Prior, model_from_datatree
from raterstats.models.latent_class.data import prepare_latent_class
from raterstats.models.latent_class.dawid_skene import AUTO_CONFUSION_PRIOR
from raterstats.models.latent_class.dawid_skene_density import ds_packed_fields
from raterstats.models.latent_class.dawid_skene_eb import (
    CONCENTRATION_BOUNDS,
    MIN_DIRICHLET_PARAMETER,
    diagonal_dominant,
    dirichlet_multinomial_loglik,
    fit_concentration,
    floored_rows,
)
from raterstats.models.latent_class.layout import DsFloat
from raterstats.simulate import hard_crowd


@pytest.fixture(scope="module")
def crowd():
    return hard_crowd(n_items=150, n_raters=40, random_seed=4)


def concentration(dt: xr.DataTree) -> np.ndarray:
    return np.asarray(json.loads(dt.attrs["options"])["confusion_concentration"])


def test_fixed_point_increases_the_dirichlet_multinomial_likelihood():
    rng = np.random.default_rng(3)
    mean = (np.ones((4, 4)) + 3 * np.eye(4)) / 7
    # 30 raters whose rows scatter around the mean rows with concentration 10
    counts = np.stack(
        [[rng.multinomial(8, rng.dirichlet(10 * mean[t])) for t in range(4)] for _ in range(30)]
    ).astype(float)
    m0 = np.full((4, 4), 0.25)
    prev = dirichlet_multinomial_loglik(counts, 2.0, m0)[0]
    for n_iter in (1, 2, 5, 20, 200):
        s, m = fit_concentration(counts, 2.0, m0, max_iter=n_iter)
        ll = dirichlet_multinomial_loglik(counts, s, m)[0]
        assert ll >= prev - 1e-9
        prev = ll
    # at the optimum (inside the bounds) the gradient in log s and the mean logits vanishes
    _, g_s, g_m = dirichlet_multinomial_loglik(counts, s, m)
    assert 2 < s < 50
    assert abs(g_s) < 1e-3 and np.abs(g_m).max() < 1e-3
    # only the scale: the mean rows stay where they started
    s2, m2 = fit_concentration(counts, 2.0, m0, learn_mean=False)
    np.testing.assert_allclose(m2, m0)
    assert CONCENTRATION_BOUNDS[0] <= s2 <= CONCENTRATION_BOUNDS[1]


def test_learnt_rows_keep_every_dirichlet_parameter_above_the_floor():
    # near-perfect raters (snow2008_wsd's regime): every count on the diagonal, so the
    # likelihood wants the rows ever more extreme and the concentration towards 0
    counts = np.stack([10.0 * np.eye(3) for _ in range(30)])
    fixed_mean = (np.ones((3, 3)) + 6.5 * np.eye(3)) / 9.5
    s_free, _ = fit_concentration(counts, 9.5, fixed_mean, learn_mean=False, min_parameter=0.0)
    assert s_free * fixed_mean.min() < 0.05  # what the fit did before the floor
    s, m = fit_concentration(counts, 9.5, fixed_mean, learn_mean=False)
    np.testing.assert_allclose(m, fixed_mean)
    assert (s * m).min() == pytest.approx(MIN_DIRICHLET_PARAMETER)
    s2, m2 = fit_concentration(counts, 9.5, fixed_mean)
    assert (s2 * m2).min() >= MIN_DIRICHLET_PARAMETER * (1 - 1e-9)
    np.testing.assert_allclose(m2.sum(axis=-1), 1.0)
    # where the learnt rows stay above the floor it changes nothing
    rng = np.random.default_rng(0)
    spread = np.stack(
        [
            [rng.multinomial(12, rng.dirichlet(8 * fixed_mean[t])) for t in range(3)]
            for _ in range(40)
        ]
    ).astype(float)
    free = fit_concentration(spread, 9.5, fixed_mean, learn_mean=False, min_parameter=0.0)
    assert free[0] * fixed_mean.min() > MIN_DIRICHLET_PARAMETER
    assert fit_concentration(spread, 9.5, fixed_mean, learn_mean=False)[0] == free[0]


def test_floored_rows_keep_their_sums():
    m = np.array([[0.97, 0.02, 0.01], [0.2, 0.7, 0.1], [0.001, 0.001, 0.998]])
    out = floored_rows(m, 0.05)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0)
    assert out.min() == pytest.approx(0.05)
    np.testing.assert_allclose(out[1], m[1])  # a row above the floor is untouched
    # the entries below the floor are raised to it, the others keep their ratios
    np.testing.assert_allclose(out[0], [0.9, 0.05, 0.05])
    np.testing.assert_allclose(out[2], [0.05, 0.05, 0.9])


def test_gradient_of_the_dirichlet_multinomial_likelihood():
    rng = np.random.default_rng(1)
    counts = rng.poisson(2.0, (6, 3, 3)).astype(float)
    theta = rng.normal(size=(3, 3))
    m = np.exp(theta) / np.exp(theta).sum(axis=1, keepdims=True)
    s = 4.0
    _, g_s, g_t = dirichlet_multinomial_loglik(counts, s, m)
    h = 1e-6

    def ll(log_s: float, th: np.ndarray) -> float:
        mm = np.exp(th) / np.exp(th).sum(axis=1, keepdims=True)
        return dirichlet_multinomial_loglik(counts, float(np.exp(log_s)), mm)[0]

    num_s = (ll(np.log(s) + h, theta) - ll(np.log(s) - h, theta)) / (2 * h)
    assert g_s == pytest.approx(num_s, rel=1e-5)
    for t, a in [(0, 1), (2, 2)]:
        e = np.zeros((3, 3))
        e[t, a] = h
        num = (ll(np.log(s), theta + e) - ll(np.log(s), theta - e)) / (2 * h)
        assert g_t[t, a] == pytest.approx(num, rel=1e-5, abs=1e-8)


def test_mean_rows_stay_diagonal_dominant():
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = rng.dirichlet(np.ones(4), 4)
        d = diagonal_dominant(m)
        np.testing.assert_allclose(d.sum(axis=1), 1.0)
        assert (np.diagonal(d)[:, None] >= d - 1e-12).all()
        ok = np.argmax(m, axis=1) == np.arange(4)
        np.testing.assert_allclose(d[ok], m[ok])  # dominant rows are left alone


def test_default_learns_the_prior_and_records_it(crowd):
    assert DawidSkene().confusion_prior_mode() == AUTO_CONFUSION_PRIOR
    assert AUTO_CONFUSION_PRIOR != "fixed"
    fit = DawidSkene().fit(crowd.ratings, method="em", random_seed=1)
    conc = concentration(fit)
    assert conc.shape == (1, 1, 5, 5)
    ss = fit["sample_stats"].attrs
    assert ss["eb_converged"] == 1 and ss["eb_updates"] >= 1
    np.testing.assert_allclose(
        conc, np.asarray(json.loads(ss["confusion_concentration"])), rtol=1e-5
    )
    # the scale-only form keeps the fixed prior's mean rows: 2.5 K on the diagonal, 1 off
    rows = conc[0, 0] / conc[0, 0].sum(axis=1, keepdims=True)
    fixed = (np.ones((5, 5)) + 11.5 * np.eye(5)) / 16.5
    np.testing.assert_allclose(rows, fixed, atol=1e-6)
    # a reloaded fit re-creates the learnt prior: its model learns nothing more
    model = model_from_datatree(fit)
    assert not model.learns_concentration()
    again = model.fit(crowd.ratings, method="em", random_seed=1)
    np.testing.assert_allclose(
        again.posterior["confusion"].values, fit.posterior["confusion"].values, atol=2e-3
    )


def test_rows_and_scale_form_and_fixed_prior(crowd):
    eb = DawidSkene(confusion_prior="empirical_bayes").fit(
        crowd.ratings, method="em", random_seed=1
    )
    rows = concentration(eb)[0, 0]
    assert (np.diagonal(rows)[:, None] >= rows - 1e-9).all()
    fixed = DawidSkene(confusion_prior="fixed").fit(crowd.ratings, method="em", random_seed=1)
    assert json.loads(fixed.attrs["options"])["confusion_concentration"] is None
    assert "eb_updates" not in fixed["sample_stats"].attrs
    # a confusion prior given by the user is kept fixed under "auto"
    given = DawidSkene(priors={"confusion": Prior("Dirichlet", a=2.0)})
    assert given.confusion_prior_mode() == "fixed" and not given.learns_concentration()
    # other poolings have their own priors
    assert not DawidSkene(pooling="partial").learns_concentration()


def test_nuts_and_gibbs_use_the_learnt_rows(crowd):
    data = prepare_latent_class(crowd.ratings)
    learnt = DawidSkene().learn_priors(data, random_seed=1, em_options={})
    conc = np.asarray(learnt.options["confusion_concentration"])
    _, floats = ds_packed_fields(learnt, data)
    packed = floats[DsFloat.CONF_CONC].reshape(-1, 5, 5)
    np.testing.assert_allclose(packed, np.broadcast_to(conc[0, 0], packed.shape))
    # the EM fit that learnt them is reused for the NUTS start, not run again
    start = learnt.nuts_start(data, 1)
    em = learnt.fit_em(data, random_seed=1, progress=False)
    np.testing.assert_allclose(start["confusion"], em.posterior["confusion"].values[0, 0])
    assert learnt._em_cache is not None and learnt._em_cache[0] is data


@pytest.mark.slow
def test_sampled_fits_record_the_learnt_rows(crowd):
    em = DawidSkene().fit(crowd.ratings, method="em", random_seed=1)
    for method in ("gibbs", "nuts"):
        fit = DawidSkene().fit(
            crowd.ratings, method=method, draws=50, tune=50, chains=2, random_seed=1,
            progress=False,
        )  # fmt: skip
        np.testing.assert_allclose(concentration(fit), concentration(em))
        assert "em_start" in fit.children


def test_confusion_prior_options_are_checked():
    with pytest.raises(ValueError, match="confusion_prior must be one of"):
        DawidSkene(confusion_prior="learnt")
    with pytest.raises(ValueError, match=r"\(dimension, design, K, K\)"):
        DawidSkene(confusion_concentration=[1.0, 2.0])
    with pytest.raises(ValueError, match="needs pooling='unpooled'"):
        DawidSkene(pooling="pooled", confusion_concentration=np.ones((1, 1, 3, 3)))
    r = hard_crowd(n_items=30, n_raters=10, n_classes=3, random_seed=1).ratings
    with pytest.raises(ValueError, match="these data need"):
        DawidSkene(confusion_concentration=np.ones((1, 1, 2, 2))).fit(r, method="em")
