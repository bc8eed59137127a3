"""Fitting: engines and result shape, seeds, persistence, downstream functions, EM recovery
on one small replicate, diagnostics and label switching."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import xarray as xr
from scipy.special import logit

from raterstats import MACE, DawidSkene, OrdinalRaters, diagnose, item_posterior, rater_summary
from raterstats.diagnostics import (
    ConvergenceWarning,
    compare,
    label_switching,
    loo,
    ppc_agreement,
)
from raterstats.models import FIT_ATTRS
from raterstats.posterior import coverage_accuracy
from raterstats.simulate import archehr_like_study

FAST = {"draws": 300, "tune": 300, "chains": 2, "progress": False}


@pytest.fixture(scope="module")
def nuts_fit(small_archehr):
    return MACE(hierarchical=False).fit(
        small_archehr.ratings,
        random_seed=7,
        posterior_predictive=True,
        draws=1000,  # with 500, max R-hat over ~200 parameters tops 1.01 by chance
        tune=500,
        chains=4,
        progress=False,
    )


def test_nuts_fit_has_the_arviz_schema_and_attributes(nuts_fit, small_archehr):
    dt = nuts_fit
    for g in (
        "posterior",
        "sample_stats",
        "observed_data",
        "constant_data",
        "log_likelihood",
        "posterior_predictive",
        "label_posterior",
    ):
        assert g in dt.children, g
    for a in FIT_ATTRS:
        assert a in dt.attrs, a
    assert dt.attrs["model"] == "mace" and dt.attrs["method"] == "nuts"
    assert dt.attrs["sampler"] == "nutpie" and dt.attrs["random_seed"] == 7
    assert json.loads(dt.attrs["priors"])["spam"] == {"dist": "Dirichlet", "a": 10.0}
    post = dt.posterior
    assert dict(post.sizes)["chain"] == 4 and dict(post.sizes)["draw"] == 1000
    assert list(post["rater"].values) == list(small_archehr.ratings.raters)
    assert post["competence"].dims == ("chain", "draw", "rater", "dimension", "design")
    assert dt.attrs["logp_backend"] == "compiled"
    ll = dt.log_likelihood["ratings"]
    assert ll.dims == ("chain", "draw", "unit") and ll.sizes["unit"] == 180
    assert dt.posterior_predictive["rating"].shape == (4, 1000, small_archehr.ratings.n_ratings)
    for v in ("diverging", "tree_depth", "reached_max_treedepth", "energy", "lp"):
        assert v in dt.sample_stats


def test_same_seed_same_draws(small_archehr):
    r = small_archehr.ratings.filter(dimension="uses_evidence")
    a = DawidSkene(pooling="one_coin").fit(r, random_seed=3, **FAST)
    b = DawidSkene(pooling="one_coin").fit(r, random_seed=3, **FAST)
    c = DawidSkene(pooling="one_coin").fit(r, random_seed=4, **FAST)
    xr.testing.assert_equal(a.posterior, b.posterior)  # attrs hold the sampling time
    assert not a.posterior["accuracy"].equals(c.posterior["accuracy"])
    em1 = MACE().fit(r, method="em", random_seed=1)
    em2 = MACE().fit(r, method="em", random_seed=1)
    xr.testing.assert_equal(em1.posterior, em2.posterior)


def test_netcdf_round_trip_gives_identical_results(nuts_fit, tmp_path):
    path = tmp_path / "fit.nc"
    nuts_fit.to_netcdf(path)
    back = xr.open_datatree(path)
    xr.testing.assert_identical(item_posterior(nuts_fit), item_posterior(back))
    xr.testing.assert_identical(rater_summary(nuts_fit), rater_summary(back))
    d1, d2 = diagnose(nuts_fit, warn=False), diagnose(back, warn=False)
    assert d1.parameters.equals(d2.parameters) and d1.problems == d2.problems
    p1 = ppc_agreement(nuts_fit, n_draws=20, random_seed=2)
    p2 = ppc_agreement(back, n_draws=20, random_seed=2)
    xr.testing.assert_identical(p1, p2)
    with warnings.catch_warnings():
        # a few items of this small data set have Pareto k > 0.7; loo reports them
        warnings.filterwarnings("ignore", message="Estimated shape parameter of Pareto")
        assert float(loo(nuts_fit).elpd) == pytest.approx(float(loo(back).elpd))
    # label posteriors recomputed from the draws equal the stored ones
    del back["label_posterior"]
    np.testing.assert_allclose(item_posterior(back)["prob"], item_posterior(nuts_fit)["prob"])


def test_item_posterior_and_rater_summary(nuts_fit, small_archehr):
    post = item_posterior(nuts_fit, coverage=0.8)
    assert post["prob"].dims == ("item", "dimension", "category")
    assert set(post["item"].values) == set(small_archehr.ratings.items)
    np.testing.assert_allclose(post["prob"].sum("category"), 1.0)
    truth = small_archehr.truth["true_label"].sel(item=post["item"])
    assert float((post["map_code"] == truth).mean()) > 0.85
    assert float(post["confident"].mean()) == pytest.approx(0.8, abs=0.02)
    assert set(np.unique(post["label"].values)) <= {
        "yes",
        "partially",
        "no",
        "refutes",
        "conflicting",
    }
    summ = rater_summary(nuts_fit, ci_prob=0.9)
    assert (summ["competence_low"] <= summ["competence_mean"]).all()
    assert (summ["competence_mean"] <= summ["competence_high"]).all()
    assert int(summ["n_ratings"].sum()) == small_archehr.ratings.n_ratings


def test_nuts_recovers_competence_on_one_small_replicate(nuts_fit, small_archehr):
    # 60 rater x dimension cells with about 9 ratings each: the 90% intervals cover the
    # simulated competence in most cells (0.93 here; the slow test repeats this 20 times)
    summ = rater_summary(nuts_fit, ci_prob=0.9).isel(design=0)
    true = small_archehr.truth["competence"].sel(rater=summ["rater"], dimension=summ["dimension"])
    hit = (summ["competence_low"] <= true) & (true <= summ["competence_high"])
    assert hit.size == 60
    assert float(hit.mean()) >= 0.8


def test_diagnose_passes_on_a_converged_fit_and_ppc_is_sane(nuts_fit):
    d = diagnose(nuts_fit, ess_min=100)
    assert d.ok, str(d)
    assert d.divergences == 0 and len(d.ebfmi) == 4
    ppc = ppc_agreement(nuts_fit, n_draws=40, random_seed=1)
    assert ppc["observed"].dims == ("statistic", "dimension", "design")
    assert ((ppc["ppp"] >= 0) & (ppc["ppp"] <= 1)).all()
    # the model reproduces the agreement it was simulated from
    assert float(abs(ppc["replicated_mean"] - ppc["observed"]).max()) < 0.15


def test_diagnose_names_every_failing_parameter(nuts_fit):
    """The warning names each failing variable once, with its count and worst scalar
    (issue 17: one line per variable, not per scalar); ``failing`` lists every scalar."""
    bad = nuts_fit.copy()
    post = bad["posterior"].to_dataset()
    shifted = post.copy()
    shifted["prevalence"] = post["prevalence"] + xr.DataArray([0.0, 0.3, 0.0, 0.0], dims="chain")
    bad["posterior"] = xr.DataTree(shifted)
    with pytest.warns(ConvergenceWarning, match=r"\n  prevalence \(9 of 9 fail\): worst \[") as rec:
        d = diagnose(bad, ess_min=100)
    assert "prevalence[" not in str(rec[0].message)
    assert not d.ok
    assert all(f.startswith("prevalence[") for f in d.failing)
    assert len(d.failing) == 9


def test_label_switching_is_detected():
    s = archehr_like_study(n_cases=8, n_systems=10, random_seed=5)
    r = s.ratings.filter(dimension="uses_evidence")
    dt = DawidSkene().fit(r, method="em", random_seed=1)
    assert label_switching(dt) == []
    post = dt["posterior"].to_dataset()
    perm = [1, 0, 2]
    conf = post["confusion"]
    switched = conf.isel(true=perm).assign_coords(true=conf["true"])
    prev = post["prevalence"].isel(category=perm).assign_coords(category=post["category"])
    two = xr.Dataset(
        {
            "confusion": xr.concat([conf, switched], dim="chain"),
            "prevalence": xr.concat([post["prevalence"], prev], dim="chain"),
        }
    ).assign_coords(chain=[0, 1])
    fake = dt.copy()
    fake["posterior"] = xr.DataTree(two)
    msgs = label_switching(fake)
    assert len(msgs) == 1 and "chain 1" in msgs[0] and "uses_evidence" in msgs[0]


@pytest.mark.parametrize("pooling", ["unpooled", "pooled", "partial", "one_coin"])
def test_dawid_skene_nuts_and_em_agree(pooling, small_archehr):
    r = small_archehr.ratings
    em = DawidSkene(pooling=pooling).fit(r, method="em", random_seed=1)
    nuts = DawidSkene(pooling=pooling).fit(r, random_seed=1, **FAST)
    truth = small_archehr.truth["true_label"]
    for dt in (em, nuts):
        post = item_posterior(dt)
        assert float((post["map_code"] == truth.sel(item=post["item"])).mean()) > 0.85
    assert diagnose(nuts, ess_min=100, warn=False).divergences == 0


@pytest.mark.parametrize("centred", [False, True])
def test_hierarchical_mace_effects_sum_to_zero(centred, small_archehr):
    # zero-sum rater effects (over raters) and cell effects (over raters and over the
    # dimension x design cells): the cell mean is the panel's mean logit competence
    m = MACE(hierarchical=True, centred=centred)
    R = len(small_archehr.ratings.raters)
    nuts = m.fit(small_archehr.ratings, random_seed=4, **FAST)
    em = m.fit(small_archehr.ratings, method="em", random_seed=4)
    for dt in (nuts, em):
        post = dt.posterior
        u, v = post["rater_effect"], post["cell_effect"]
        np.testing.assert_allclose(u.sum("rater"), 0.0, atol=1e-10)
        np.testing.assert_allclose(v.sum("rater"), 0.0, atol=1e-10)
        np.testing.assert_allclose(v.sum(("dimension", "design")), 0.0, atol=1e-10)
        assert float(abs(v).max()) > 0.01 and float(abs(u).max()) > 0.01
        eta = logit(post["competence"])
        np.testing.assert_allclose(eta.mean("rater"), post["competence_cell_mean"], atol=1e-8)
        rebuilt = (post["competence_cell_mean"] + u + v).transpose(*eta.dims)
        np.testing.assert_allclose(eta, rebuilt, atol=1e-8)
    coords = "rater_effect_basis" if centred else "rater_z"
    assert nuts.posterior[coords].dims[2:] == ("rater_basis",)
    assert nuts.posterior.sizes["rater_basis"] == R - 1
    assert nuts.posterior["cell_sd"].dims == ("chain", "draw")


def test_em_recovers_mace_parameters_on_one_replicate():
    s = archehr_like_study(random_seed=21)  # 2,800 items, 20 raters, 3 dimensions
    dt = MACE(hierarchical=False).fit(s.ratings, method="em", random_seed=1)
    est = dt.posterior["competence"].isel(chain=0, draw=0, design=0)
    true = s.truth["competence"].sel(rater=est["rater"], dimension=est["dimension"])
    assert float(abs(est - true).mean()) < 0.05
    post = item_posterior(dt)
    acc = float((post["map_code"] == s.truth["true_label"].sel(item=post["item"])).mean())
    assert acc > 0.93
    assert dt.sample_stats["converged"].item()


def test_map_through_pymc(one_dim):
    m = DawidSkene(pooling="one_coin")
    dt = m.fit(one_dim, method="map", random_seed=1, progress=False)
    assert dict(dt.posterior.sizes)["chain"] == 1 and dict(dt.posterior.sizes)["draw"] == 1
    assert "label_posterior" in dt.children
    em = m.fit(one_dim, method="em", random_seed=1)
    # the mode (on the unconstrained scale) and EM's posterior-mean updates differ a little
    same = item_posterior(dt)["map_code"] == item_posterior(em)["map_code"]
    assert float(same.mean()) > 0.9


@pytest.mark.slow
def test_advi_through_pymc(one_dim):
    # slow: compiling PyMC's ADVI graph takes ~40 s here
    m = DawidSkene(pooling="one_coin")
    adv = m.fit(one_dim, method="advi", draws=50, random_seed=1, progress=False, n=3000)
    assert dict(adv.posterior.sizes)["draw"] == 50 and "optimization" in adv.children
    same = (
        item_posterior(adv)["map_code"] == item_posterior(m.fit(one_dim, method="em"))["map_code"]
    )
    assert float(same.mean()) > 0.9


def test_numpyro_needs_the_jax_extra(one_dim, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n in ("jax", "numpyro") else real(n, *a)
    )
    with pytest.raises(ImportError, match=r"raterstats\[jax\]"):
        MACE().fit(one_dim, sampler="numpyro", **FAST)


def test_bad_arguments_are_refused(one_dim):
    with pytest.raises(ValueError, match="method must be one of"):
        MACE().fit(one_dim, method="slice")
    with pytest.raises(ValueError, match="sampler must be one of"):
        MACE().fit(one_dim, sampler="stan")
    with pytest.raises(ValueError, match="unknown EM options"):
        MACE().fit(one_dim, method="em", n=3)


class _NoJitter:
    """Stands in for the generator of a density's ``initial_point``: no jitter."""

    def normal(self, loc: float, scale: float, size: int) -> np.ndarray:
        return np.zeros(size)


@pytest.mark.parametrize(
    "model",
    [
        MACE(hierarchical=False),
        MACE(centred=False),
        MACE(centred=True),
        DawidSkene(),
        DawidSkene(pooling="pooled"),
        DawidSkene(pooling="partial"),
        DawidSkene(pooling="partial", spread="error", centred=False),
        DawidSkene(pooling="one_coin"),
    ],
    ids=lambda m: f"{m.name}-{json.dumps(m.spec()['options'], sort_keys=True)}",
)
def test_nuts_chains_start_at_the_em_estimate(model, small_archehr):
    data = model.prepare(small_archehr.ratings)
    start = model.nuts_start(data, 3)
    em = model.fit(small_archehr.ratings, method="em", random_seed=3).posterior
    density = model.density(data, start=start)
    point = density.expand(density.initial_point(_NoJitter()))
    # the unjittered start maps back to the EM estimate itself
    for name in ("competence", "confusion", "prevalence", "rater_sd", "confusion_logit_mean"):
        if name in point and name in em:
            np.testing.assert_allclose(point[name], em[name].values[0, 0], atol=1e-9, err_msg=name)
    x1 = density.initial_point(np.random.default_rng(1))
    x2 = density.initial_point(np.random.default_rng(2))
    assert not np.allclose(x1, x2)  # chains are jittered around it
    assert np.isfinite(density.logp_grad(x1)[0])


def test_init_option(one_dim):
    em_start = MACE().fit(one_dim, random_seed=2, **FAST)
    own = MACE().fit(one_dim, random_seed=2, init="default", **FAST)
    assert em_start.posterior.attrs["init"] == "em"
    assert own.posterior.attrs["init"] == "default"
    assert not em_start.posterior["competence"].equals(own.posterior["competence"])
    with pytest.raises(ValueError, match="init must be"):
        MACE().fit(one_dim, init="random", **FAST)
    with pytest.raises(ValueError, match="no EM estimate"):
        OrdinalRaters().fit(one_dim, init="em", **FAST)
    with pytest.raises(ValueError, match="uses method='map'"):
        MACE().fit(one_dim, method="map", init="em")
    with pytest.raises(ValueError, match="uses the PyMC model"):
        MACE().fit(one_dim, init="em", logp_backend="pymc", **FAST)


def test_no_em_start_without_a_compiled_density(monkeypatch, mixed_k):
    # dimensions with 2 and 3 categories: Dawid-Skene has no compiled density for them, so
    # the EM start (used only by the compiled density) is not computed at all
    r = mixed_k
    m = DawidSkene()
    assert not m.has_density(m.prepare(r)) and MACE().has_density(MACE().prepare(r))

    def no_start(*args, **kwargs):
        raise AssertionError("EM start computed for the PyMC path")

    monkeypatch.setattr(DawidSkene, "nuts_start", no_start)
    with pytest.raises(ValueError, match="uses the PyMC model"):
        m.fit(r, init="em", **FAST)


def test_coverage_accuracy_curve(small_archehr):
    r = small_archehr.ratings.filter(dimension="answers_question")
    dt = MACE().fit(r, method="em", random_seed=1)
    levels = r.scale_for("answers_question").levels
    truth = small_archehr.truth["true_label"].sel(dimension="answers_question")
    gold = {i: levels[int(k)] for i, k in zip(truth["item"].values, truth.values, strict=True)}
    curve = coverage_accuracy(dt, gold)
    assert curve["accuracy"].dims == ("coverage",)
    assert float(curve["accuracy"].isel(coverage=0)) >= float(curve["accuracy"].isel(coverage=-1))


def test_compare_by_loo(small_archehr):
    r = small_archehr.ratings.filter(dimension="uses_knowledge")
    fits = {
        "mace": MACE().fit(r, random_seed=1, **FAST),
        "one_coin": DawidSkene(pooling="one_coin").fit(r, random_seed=1, **FAST),
    }
    table = compare(fits)
    assert sorted(table.index) == ["mace", "one_coin"]
    with pytest.raises(ValueError, match="different data"):
        compare({"a": fits["mace"], "b": MACE().fit(small_archehr.ratings, method="em")})


def test_rater_prior_pulls_that_raters_confusion(one_dim):
    rater = one_dim.raters[0]
    strong = np.full((3, 3), 200.0)  # earlier studies: this rater rates at random
    # the rater prior adds to a fixed confusion prior (to a learnt one too: see
    # test_dawid_skene_eb.py)
    base = DawidSkene(confusion_prior="fixed").fit(one_dim, method="em", random_seed=1)
    pri = DawidSkene(confusion_prior="fixed", rater_prior={rater: strong.tolist()}).fit(
        one_dim, method="em", random_seed=1
    )

    def diag(dt: xr.DataTree) -> float:
        conf = dt.posterior["confusion"].sel(rater=rater).isel(chain=0, draw=0)
        return float(np.diagonal(conf.isel(dimension=0, design=0).values).mean())

    assert diag(pri) < 0.45 < diag(base)
    with pytest.raises(ValueError, match="not in the data"):
        DawidSkene(rater_prior={"nobody": strong.tolist()}).fit(one_dim, method="em")


def test_pymc_chains_are_not_forked_from_a_process_running_jax():
    """After a NumPyro fit JAX's threads run in the process; PyMC's chain processes are
    then started by a fork server (a fork of a JAX process may deadlock, and JAX warns
    at the fork); without JAX, or on one core, PyMC's own default. In a subprocess, so
    that this test process does not load JAX."""
    pytest.importorskip("jax")
    code = (
        "from raterstats.inference_checks import chain_process_start as f\n"
        "before = (f(1), f(4))\n"
        "import jax\n"
        "print(before, (f(1), f(4)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "(None, None) (None, 'forkserver')"


@pytest.mark.slow
def test_numpyro_and_pymc_samplers_agree_with_nutpie(one_dim):
    pytest.importorskip("numpyro")
    m = DawidSkene(pooling="one_coin")
    fits = {
        s: m.fit(one_dim, sampler=s, random_seed=1, **FAST) for s in ("nutpie", "numpyro", "pymc")
    }
    means = {s: float(f.posterior["accuracy"].mean()) for s, f in fits.items()}
    assert max(means.values()) - min(means.values()) < 0.02
    assert fits["numpyro"].attrs["logp_backend"] == "pymc"
