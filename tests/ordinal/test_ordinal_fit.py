"""OrdinalRaters and LengthEffect fits: contract, derived quantities, persistence, recovery."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from raterstats import LengthEffect, OrdinalRaters
from raterstats.health import fit_health
from raterstats.intervals import eti
from raterstats.models import POST_FIT_QUESTIONS
from raterstats.models.ordinal import (
    DIAGNOSED_PARAMETERS,
    length_contrast,
    prob_more_reliable,
    rater_table,
    rating_log_likelihood,
    reliability,
    sentence_aggregation,
    system_scores,
)
from raterstats.simulate import clinical_qa_study

pytestmark = pytest.mark.filterwarnings(
    # arviz-stats' tail-ESS helper divides by a zero variance for parameters fixed by
    # construction (the reference design's log-discrimination mean is exactly 0)
    "ignore:invalid value encountered in scalar divide:RuntimeWarning"
)


def truth_in_model_terms(truth, humans):
    """The simulation's rater parameters under the model's identifying constraints (no
    latent intercept; geometric-mean discrimination 1 for the coarse human panel)."""
    lam = truth["discrimination"].sel(rater=humans)
    sev = truth["severity"].sel(rater=humans) - lam * truth["mu"]
    sev = sev - sev.mean("rater")
    scale = np.exp(np.log(lam.sel(design="coarse")).mean("rater"))
    return sev, lam / scale


@pytest.fixture(scope="module")
def small():
    return clinical_qa_study(n_questions=20, random_seed=4)


@pytest.fixture(scope="module")
def small_fit(small):
    return OrdinalRaters().fit(
        small.ratings, draws=300, tune=300, chains=2, random_seed=5, progress=False
    )


def test_fit_returns_the_datatree_contract(small_fit, small):
    dt = small_fit
    for group in ("posterior", "sample_stats", "observed_data", "constant_data", "log_likelihood"):
        assert group in dt.children
    assert dt.attrs["model"] == "ordinal_raters"
    assert dt.attrs["random_seed"] == 5
    post = dt["posterior"]
    assert post["severity"].dims == ("chain", "draw", "rater", "dimension", "design")
    assert list(post["rater"].values) == [f"p{k}" for k in range(1, 7)] + ["llm-judge"]
    assert post.sizes["draw"] == 300
    assert int(dt["sample_stats"]["diverging"].sum()) == 0
    ll = dt["log_likelihood"]["answer"]
    assert ll.dims == ("chain", "draw", "item", "design")
    assert int(dt["observed_data"]["rating"].size) == small.ratings.n_ratings
    # each answer x design's value is the sum of its ratings' log-likelihoods
    model = OrdinalRaters()
    data = model.prepare(small.ratings)
    per_rating = rating_log_likelihood(post.to_dataset().isel(draw=slice(0, 5)), data, "logit")
    ng = len(data.coords["design"])
    key = data.obs_item * ng + data.obs_design
    k = int(key[0])
    np.testing.assert_allclose(
        ll.isel(draw=slice(0, 5)).values.reshape(2, 5, -1)[..., k],
        per_rating[..., key == k].sum(-1),
        rtol=1e-12,
    )
    # the human panel's severities sum to zero in every draw
    sev = post["severity"].isel(rater=slice(0, 6)).sum("rater")
    np.testing.assert_allclose(sev.values, 0.0, atol=1e-10)


def test_small_fit_recovers_the_truth(small_fit, small):
    truth = small.truth
    humans = [f"p{k}" for k in range(1, 7)]
    ts, _ = truth_in_model_terms(truth, humans)
    sev = small_fit["posterior"]["severity"].mean(("chain", "draw")).sel(rater=humans)
    order = ("rater", "dimension", "design")
    r = np.corrcoef(sev.transpose(*order).values.ravel(), ts.transpose(*order).values.ravel())
    assert r[0, 1] > 0.6
    lc = length_contrast(small_fit)
    # coarse rewards length, fine does not (planted: 0.35-0.6 vs 0)
    assert float(lc["contrast"].mean()) > 0.1


def test_derived_quantities(small_fit):
    sc = system_scores(small_fit)
    fair = sc["fair_average"]
    assert fair.dims == ("chain", "draw", "dimension", "design", "system")
    assert float(fair.min()) >= 1.0 and float(fair.max()) <= 5.0
    rel = reliability(small_fit)
    assert rel.dims == ("chain", "draw", "dimension", "design")
    assert float(rel.min()) > 0.0 and float(rel.max()) < 1.0
    p = prob_more_reliable(small_fit, "fine", "coarse")
    assert set(p.dims) == {"dimension"} and ((p >= 0) & (p <= 1)).all()
    t = rater_table(small_fit)
    assert t["severity"].dims == ("rater", "dimension", "design")
    assert (t["severity_low"] <= t["severity"]).all() and (
        t["severity"] <= t["severity_high"]
    ).all()
    assert bool(t["is_human"].sel(rater="llm-judge")) is False
    assert 0.5 < float(t["infit"].sel(rater="p1").mean()) < 1.5
    assert t["separation_reliability"].dims == ("dimension", "design")
    agg = sentence_aggregation(small_fit, max_draws=50)
    assert agg["p_no_negative"].dims == ("chain", "draw", "item", "dimension", "design")
    assert list(agg["design"].values) == ["fine"]
    v = agg["p_no_negative"].values
    assert np.all((v >= 0) & (v <= 1))


def test_derived_quantities_carry_the_fits_health(small_fit):
    """Every result derived from a fit says where the fit failed its checks, as the
    package's other results do (fit_warning); a NUTS fit's results carry no point-estimate
    note."""
    warning = fit_health(small_fit).fit_warning()
    results = {
        "system_scores": system_scores(small_fit),
        "reliability": reliability(small_fit),
        "prob_more_reliable": prob_more_reliable(small_fit, "fine", "coarse"),
        "length_contrast": length_contrast(small_fit),
        "sentence_aggregation": sentence_aggregation(small_fit, max_draws=20),
        "rater_table": rater_table(small_fit),
    }
    for name, res in results.items():
        assert res.attrs.get("fit_warning") == warning, name
        assert "uncertainty_note" not in res.attrs, name


def test_compiled_fit_statistics_equal_numpy(small_fit):
    """The rater table's infit and outfit by the numba kernel (default for the logit
    link) equal the NumPy form's to rounding; both thin to the same draws."""
    fast = rater_table(small_fit, max_draws=60)
    slow = rater_table(small_fit, max_draws=60, compiled=False)
    for name in ("infit", "outfit"):
        np.testing.assert_allclose(fast[name].values, slow[name].values, rtol=1e-10)
    assert fast.attrs["draws_used_for_fit"] == slow.attrs["draws_used_for_fit"]
    probit = small_fit.copy(deep=True)
    probit["constant_data"].attrs["link"] = "probit"
    with pytest.raises(ValueError, match="logit"):
        rater_table(probit, compiled=True)


def test_compiled_fair_averages_equal_numpy(small_fit):
    """The fair averages by the numba kernel (default for the logit link) equal the NumPy
    form's to rounding, under the answer design and the sentence design (whose units are
    sentences averaged within their answer), with the same systems left out."""
    assert "sentence_z" in small_fit["posterior"]
    fast = system_scores(small_fit)["fair_average"]
    slow = system_scores(small_fit, compiled=False)["fair_average"]
    assert bool(fast.notnull().any())
    np.testing.assert_allclose(fast.values, slow.values, rtol=1e-12, atol=1e-12)
    probit = small_fit.copy(deep=True)
    probit["constant_data"].attrs["link"] = "probit"
    with pytest.raises(ValueError, match="logit"):
        system_scores(probit, compiled=True)


def test_the_model_answers_rater_summary_and_system_score_draws(small_fit):
    model = OrdinalRaters()
    assert OrdinalRaters.answers("rater_summary") and OrdinalRaters.answers("system_score_draws")
    assert not OrdinalRaters.answers("item_posterior")
    assert not any(LengthEffect.answers(q) for q in POST_FIT_QUESTIONS)
    xr.testing.assert_identical(
        model.rater_summary(small_fit, ci_prob=0.8), rater_table(small_fit, ci_prob=0.8)
    )
    options = {
        "score_map": None,
        "labels": "sample",
        "n_boot": 0,
        "max_draws": 250,
        "rng": np.random.default_rng(0),
    }
    sc = system_scores(small_fit)
    for score, dims in (
        ("fair_average", ("chain", "draw", "dimension", "design", "system")),
        ("latent", ("chain", "draw", "dimension", "system")),
    ):
        draws = model.system_score_draws(small_fit, score=score, **options)
        assert draws.dims == dims
        assert draws.attrs["source"] == f"ordinal_raters ({score})"
        assert list(draws["system"].values) == [str(s) for s in sc["system"].values]
        np.testing.assert_array_equal(draws.values, sc[score].values)
    with pytest.raises(ValueError, match="'fair_average' or 'latent'"):
        model.system_score_draws(small_fit, score="mean", **options)


def test_netcdf_round_trip_gives_identical_results(small_fit, tmp_path):
    path = tmp_path / "fit.nc"
    small_fit.to_netcdf(path)
    back = xr.open_datatree(path)
    assert back.attrs["model"] == "ordinal_raters"
    xr.testing.assert_allclose(system_scores(back), system_scores(small_fit))
    xr.testing.assert_allclose(reliability(back), reliability(small_fit))
    a, b = rater_table(back), rater_table(small_fit)
    xr.testing.assert_allclose(a, b)


@pytest.fixture(scope="module")
def tiny():
    return clinical_qa_study(n_questions=4, random_seed=4).ratings


def test_map_and_advi_run(tiny):
    """issue 22: MAP and ADVI run on the compiled density (seconds, no PyMC compilation);
    an ADVI run cut short warns."""
    dt = OrdinalRaters().fit(tiny, method="map", random_seed=1, progress=False)
    assert dt["posterior"].sizes["draw"] == 1 and dt.attrs["logp_backend"] == "compiled"
    assert np.isfinite(dt["log_likelihood"]["answer"]).any()
    with pytest.warns(UserWarning, match="ADVI did not converge"):
        dt = OrdinalRaters().fit(tiny, method="advi", draws=50, random_seed=1, progress=False,
                                 n=200)  # fmt: skip
    assert dt["posterior"].sizes["draw"] == 50


def test_length_effect_model(tiny):
    """The MAP runs on the compiled density (issue 22: no PyMC compilation)."""
    r = tiny.filter(rater_kind="human")
    dt = LengthEffect().fit(r, method="map", random_seed=2, progress=False)
    lc = length_contrast(dt)
    assert lc["length_effect"].dims == ("chain", "draw", "dimension", "design")
    assert dt["log_likelihood"]["answer"].dims == ("chain", "draw", "item", "design")
    assert dt["posterior"]["severity"].dims == ("chain", "draw", "rater", "dimension")
    with pytest.raises(ValueError, match="OrdinalRaters"):
        system_scores(dt)


@pytest.mark.slow
def test_recovery_and_convergence_on_the_built_in_study():
    """The issue's validation: default settings on clinical_qa_study converge and recover
    rater parameters (r >= 0.9), the coarse length bias (90% interval covers the truth and
    excludes 0; the fine one covers 0) and the system ordering."""
    import arviz_stats as azs

    study = clinical_qa_study()
    dt = OrdinalRaters().fit(study.ratings, random_seed=1, progress=False)
    post = dt["posterior"].to_dataset()
    summ = azs.summary(post[list(DIAGNOSED_PARAMETERS)], kind="diagnostics")
    assert int(dt["sample_stats"]["diverging"].sum()) == 0
    assert float(summ["r_hat"].max()) <= 1.01
    assert float(summ["ess_bulk"].min()) >= 400
    truth = study.truth
    humans = [f"p{k}" for k in range(1, 7)]
    ts, td = truth_in_model_terms(truth, humans)
    order = ("rater", "dimension", "design")
    sev = post["severity"].mean(("chain", "draw")).sel(rater=humans)
    disc = post["discrimination"].mean(("chain", "draw")).sel(rater=humans)
    assert (
        np.corrcoef(sev.transpose(*order).values.ravel(), ts.transpose(*order).values.ravel())[0, 1]
        >= 0.9
    )
    assert (
        np.corrcoef(disc.transpose(*order).values.ravel(), td.transpose(*order).values.ravel())[
            0, 1
        ]
        >= 0.9
    )
    beta = post["length_effect"]
    lo, hi = eti(beta, 0.9)
    tb = truth["length_bias"]
    assert bool(((lo <= tb) & (tb <= hi)).all())
    assert bool((lo.sel(design="coarse") > 0).all())
    assert bool(((lo.sel(design="fine") <= 0) & (hi.sel(design="fine") >= 0)).all())
    s = post["system_effect"].mean(("chain", "draw"))
    for d in truth["dimension"].values:
        assert list(s.sel(dimension=d).to_series().sort_values().index) == list(
            truth["system_effect"].sel(dimension=d).to_series().sort_values().index
        )
