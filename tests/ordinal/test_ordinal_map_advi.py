"""issue 22: ordinal MAP and ADVI on the compiled density (no PyMC compilation).

MAP is the mode of the non-centred form (log-Jacobians included): without sentence
ratings it must equal the mode of the PyMC graph of ``OrdinalRaters(centred=False)`` found
by L-BFGS on PyMC's own unconstrained log density; with them, the mode of that density with
the sentence deviations integrated out (Gauss-Hermite), checked against a NumPy reference.
ADVI (mean-field, Adam) must have the result shape of the PyMC path, be seeded, warn when it
does not converge, and agree with PyMC's ADVI on the same density within what two stochastic
optimisers can meet.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pymc as pm
import pytest
import xarray as xr
from scipy.optimize import minimize
from scipy.special import logsumexp
from value_vars import VALUE_VARS  # tests/ordinal/value_vars.py

from raterstats import rank_systems
from raterstats.design import compare_designs
from raterstats.health import assess_fit, fit_health
from raterstats.inference import Density, map_density
from raterstats.inference_vi import advi_density
from raterstats.models.ordinal import (
    BLOCKS,
    Block,
    OrdinalRaters,
    length_contrast,
    prob_more_reliable,
    rater_table,
    reliability,
    sentence_aggregation,
    system_scores,
)
from raterstats.models.ordinal.density import marginal_density
from raterstats.models.ordinal.kernels_marginal import gauss_hermite_normal
from raterstats.models.ordinal.reference import (
    VARIABLE_DIMS,
    constrained_values,
    log_density,
    rating_log_likelihood,
)
from raterstats.simulate import clinical_qa_study

REPO = Path(__file__).resolve().parents[2]

COMPARED = ("system_effect", "severity", "discrimination", "cutpoints", "sigma_residual")


@pytest.fixture(scope="module")
def tiny():
    return clinical_qa_study(n_questions=4, random_seed=5).ratings


@pytest.fixture(scope="module")
def map_fit(tiny):
    return OrdinalRaters().fit(tiny, method="map", random_seed=1, progress=False)


def test_map_runs_on_the_compiled_density_and_says_which_mode(map_fit):
    assert map_fit.attrs["logp_backend"] == "compiled"
    assert map_fit.attrs["method"] == "map"
    post = map_fit["posterior"]
    assert dict(post.sizes)["draw"] == 1 and post.attrs["map_form"] == "map_form"
    assert post.attrs["map_integrated"].startswith("sentence deviations")
    assert bool(map_fit["sample_stats"]["converged"].item())


def _pymc_point(model, x):
    """PyMC's value-variable point of the non-centred density's vector ``x`` (its blocks
    are PyMC's value variables, in the compiled layout's order)."""
    ip = model.initial_point()
    names = {v.name for v in model.value_vars}
    point, pos = {}, 0
    for blk in BLOCKS:
        name = VALUE_VARS[blk]
        if name not in names:
            continue
        n = int(np.prod(np.shape(ip[name])))
        point[name] = x[pos : pos + n].reshape(np.shape(ip[name]))
        pos += n
    assert pos == x.size
    return point


def _tight_mode(dens, seed=1):
    """The mode of ``dens`` to a tight tolerance, from map_density's start for ``seed``
    (map_density's own stops at a relative decrease of 1e-9)."""
    x0 = dens.initial_point(np.random.default_rng([seed, 0]))

    def neg(x):
        lp, g = dens.logp_grad(x)
        return -lp, -g

    options = {"maxiter": 5000, "ftol": 1e-14, "gtol": 1e-7, "maxcor": 30}
    return minimize(neg, x0, jac=True, method="L-BFGS-B", options=options).x


def _assert_values_at(post, vals):
    # the fit stops at a relative decrease of 1e-9: in a flat direction a large value (a
    # discrimination of 16) can stop 0.2 % short of the tight mode (0.03 on 16.4)
    for name in COMPARED:
        np.testing.assert_allclose(
            post[name].values[0, 0], vals[name], rtol=0.005, atol=0.03, err_msg=name
        )


def test_map_without_sentences_equals_the_mode_of_the_pymc_graph(tiny):
    """Without sentence ratings the compiled-density MAP is the mode of PyMC's graph of the
    same (non-centred) form, log-Jacobians included: PyMC's gradient vanishes there and its
    log density is lower around it; the fit's values are those of the mode to map_density's
    tolerance."""
    coarse = tiny.filter(design="coarse")
    fit = OrdinalRaters().fit(coarse, method="map", random_seed=1, progress=False)
    mod = OrdinalRaters()
    dens = mod.mode_form(mod.prepare(coarse))
    x_star = _tight_mode(dens)
    _assert_values_at(fit["posterior"], dens.expand(x_star))
    model = OrdinalRaters(centred=False).build(coarse)
    logp = model.compile_logp(jacobian=True)
    dlogp = model.compile_dlogp(jacobian=True)
    assert np.max(np.abs(dlogp(_pymc_point(model, x_star)))) < 1e-3
    # a maximum, not a saddle: the log density is lower at small steps in any direction
    rng = np.random.default_rng(3)
    at_mode = float(logp(_pymc_point(model, x_star)))
    for _ in range(20):
        step = rng.normal(0, 1, x_star.size)
        step *= 0.01 / np.linalg.norm(step)
        assert float(logp(_pymc_point(model, x_star + step))) < at_mode


def _marginal_reference(xm, lay, data, nodes):
    """NumPy reference of the marginal form at its vector ``xm`` (``lay``'s without the
    sentence block): the joint log density at sentence deviations 0 (reference.py), less the
    sentence ratings' log-likelihood there, plus, per sentence x dimension, the log of the
    Gauss-Hermite sum of its ratings' likelihood at every node (the ratings' log-likelihood
    by reference.py, every sentence's z set to the node). Returns the log density and the
    posterior mean of z per (sentence, dimension)."""
    wz = lay.block(Block.WZ)
    x = np.zeros(lay.ndim)
    x[np.r_[0 : wz.start, wz.stop : lay.ndim]] = xm

    def loglik(xk):
        vals = constrained_values(xk, lay, data)
        post = xr.Dataset(
            {k: (("chain", "draw", *VARIABLE_DIMS[k]), np.asarray(v)[None, None])
             for k, v in vals.items()}
        )  # fmt: skip
        return rating_log_likelihood(post, data, "logit")[0, 0]

    fine = data.obs_sentence > 0
    total = log_density(x, lay, data) - loglik(x)[fine].sum()
    gx, glw = gauss_hermite_normal(nodes)
    per_node = []
    for node in gx:
        xk = x.copy()
        xk[wz] = node
        per_node.append(loglik(xk))
    per_node = np.array(per_node)
    means = {}
    cells = np.unique(np.stack([data.obs_sentence[fine], data.obs_dim[fine]], axis=1), axis=0)
    for s, d in cells.tolist():
        sel = (data.obs_sentence == s) & (data.obs_dim == d)
        ll = glw + per_node[:, sel].sum(axis=1)
        total += logsumexp(ll)
        means[(s, d)] = float(np.exp(ll - logsumexp(ll)) @ gx)
    return total, means


def test_the_marginal_form_equals_its_numpy_reference(tiny):
    """issue 22: MAP's density with the sentence deviations integrated out (Gauss-Hermite,
    kernels_marginal.py) equals a NumPy reference built from reference.py's log density and
    ratings' log-likelihood; its gradient equals central differences in every coordinate;
    the reported sentence_z are the posterior means of z given the other parameters."""
    mod = OrdinalRaters(centred=False, centred_latent=False, scale_coordinate=False)
    data = mod.prepare(tiny)
    lay = mod.layout(data)
    dens = marginal_density(lay, data, 12)
    assert dens.ndim == lay.ndim - lay.block_sizes[Block.WZ]
    rng = np.random.default_rng(0)
    for _ in range(2):
        xm = dens.initial_point(rng) + rng.normal(0, 0.3, dens.ndim)
        lp, grad = dens.logp_grad(xm)
        ref, means = _marginal_reference(xm, lay, data, 12)
        assert lp == pytest.approx(ref, rel=1e-12)
        h = 1e-5
        fd = np.array([
            (dens.logp_grad(xm + h * e)[0] - dens.logp_grad(xm - h * e)[0]) / (2 * h)
            for e in np.eye(dens.ndim)
        ])  # fmt: skip
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5)
        z = dens.expand(xm)["sentence_z"]
        for (s, d), mean in means.items():
            assert z[s - 1, d] == pytest.approx(mean, abs=1e-10)


def test_map_with_sentences_is_the_mode_of_the_marginal_form(tiny, map_fit):
    """With sentence ratings MAP returns the mode of the marginal form: the fit's values are
    those of its tight mode, where the gradient vanishes and the log density is lower
    around it."""
    mod = OrdinalRaters()
    dens = mod.mode_form(mod.prepare(tiny))
    x_star = _tight_mode(dens)
    _assert_values_at(map_fit["posterior"], dens.expand(x_star))
    at_mode, grad = dens.logp_grad(x_star)
    assert np.max(np.abs(grad)) < 1e-3
    rng = np.random.default_rng(3)
    for _ in range(20):
        step = rng.normal(0, 1, x_star.size)
        step *= 0.01 / np.linalg.norm(step)
        assert dens.logp_grad(x_star + step)[0] < at_mode


def test_map_converges_on_the_builtin_study():
    """issue 22: on the built-in study (19,212 sentence ratings, 1,198 of 4,665 sentence x
    dimension cells rated top by every rater) the joint mode ran off (L-BFGS at its
    2,000-iteration cap, still rising after 14,000); the marginal form converges in a few
    hundred iterations, and its system effects order the systems as the reference NUTS fit
    (models/ordinal/reference.json) does, within 0.1 of its posterior means."""
    study = clinical_qa_study()
    fit = OrdinalRaters().fit(study.ratings, method="map", random_seed=1, progress=False)
    post = fit["posterior"]
    assert bool(fit["sample_stats"]["converged"].item()) and fit.attrs["health_ok"] == 1
    assert post.attrs["iterations"] < 1000
    ref = json.loads((REPO / "models" / "ordinal" / "reference.json").read_text())
    nuts = np.array(ref["summary"]["system_effect"]["mean"])
    assert ref["summary"]["system_effect"]["dims"] == ["dimension", "system"]
    ours = post["system_effect"].transpose("chain", "draw", "dimension", "system").values[0, 0]
    np.testing.assert_array_equal(np.argsort(ours, axis=1), np.argsort(nuts, axis=1))
    np.testing.assert_allclose(ours, nuts, atol=0.1)
    # one mode: another start reaches it too (an answer-residual marginal, tried on
    # DialSummEval campus, had several; the model card)
    other = OrdinalRaters().fit(study.ratings, method="map", random_seed=2, progress=False)
    assert float(other["sample_stats"]["lp"].item()) == pytest.approx(
        float(fit["sample_stats"]["lp"].item()), abs=0.05
    )
    np.testing.assert_allclose(
        other["posterior"]["system_effect"], post["system_effect"], atol=0.01
    )


def test_a_converged_map_passes_the_optimality_check(map_fit):
    """issue 22: a MAP that says it converged stopped where the gradient is small, and says
    how many log density + gradient evaluations it took (a count that does not depend on
    the machine's load, unlike its seconds)."""
    post = map_fit["posterior"]
    assert bool(map_fit["sample_stats"]["converged"].item())
    # L-BFGS stops at a relative decrease of 1e-9 per step: the gradient is small, not 0
    # (test_map_equals_the_mode_of_the_pymc_graph checks the values at the tight mode)
    assert post.attrs["gradient_max_abs"] < 0.1
    assert 0 < post.attrs["iterations"] <= post.attrs["gradient_evaluations"]
    assert map_fit.attrs["health_ok"] == 1


def test_a_map_stopped_by_its_iteration_cap_warns_and_fails_its_health_check(tiny):
    """issue 22: a MAP whose optimiser really stopped short (here at 5 iterations, not a
    flag set by hand) warns, records converged = False, keeps its large gradient in the
    attrs, and fails the health check that Model.fit stamps on a fit."""
    mod = OrdinalRaters()
    dens = mod.density(mod.prepare(tiny))
    with pytest.warns(UserWarning, match="MAP optimisation did not converge"):
        dt = map_density(dens, max_iter=5, random_seed=1)
    assert not bool(dt["sample_stats"]["converged"].item())
    assert dt["posterior"].attrs["iterations"] == 5
    assert dt["posterior"].attrs["gradient_max_abs"] > 1.0
    dt.attrs["method"] = "map"
    health = assess_fit(dt)
    assert not health.ok and "did not converge" in health.lines[0]


def test_the_consumers_of_a_map_fit_work_and_say_it_is_a_point_estimate(map_fit):
    health = fit_health(map_fit)
    assert health.ok and health.point_estimate
    assert "no posterior uncertainty" in map_fit.attrs["health"]
    assert np.isfinite(map_fit["log_likelihood"]["answer"]).any()
    scores = system_scores(map_fit)
    assert scores["fair_average"].sizes["draw"] == 1
    assert np.isfinite(scores["fair_average"].values).all()
    assert reliability(map_fit).sizes["draw"] == 1
    table = rater_table(map_fit)
    assert table.sizes["rater"] == map_fit["posterior"].sizes["rater"]
    assert sentence_aggregation(map_fit).sizes["draw"] == 1
    # the results say what a MAP fit lacks; those that depend on the latent scales say the
    # mode's scales are inflated (they are not posterior estimates there)
    for res in (scores, reliability(map_fit), prob_more_reliable(map_fit, "fine", "coarse")):
        assert res.attrs["uncertainty_note"].startswith("computed from a MAP point estimate")
        assert "inflated" in res.attrs["uncertainty_note"]
    for res in (table, sentence_aggregation(map_fit), length_contrast(map_fit)):
        assert res.attrs["uncertainty_note"].startswith("computed from a MAP point estimate")
        assert "inflated" not in res.attrs["uncertainty_note"]
    # separation needs the severities' posterior variance, which a point estimate lacks
    assert np.isnan(table["separation"]).all() and np.isnan(table["separation_reliability"]).all()
    assert "a point estimate does not have" in table.attrs["separation_note"]
    ranked = rank_systems(map_fit)
    assert "MAP point estimate" in ranked.attrs["uncertainty_note"]
    designs = compare_designs(map_fit, n_replicates=10, random_seed=1)
    assert "MAP point estimate" in designs.attrs["uncertainty_note"]


def test_a_map_whose_optimiser_stopped_fails_its_health_check(map_fit):
    dt = map_fit.copy()
    dt["sample_stats"] = xr.DataTree(
        dt["sample_stats"].to_dataset().assign(converged=(("chain", "draw"), [[False]]))
    )
    health = assess_fit(dt)
    assert not health.ok and health.point_estimate
    assert "did not converge" in health.lines[0]
    assert health.fit_warning() is not None


@pytest.fixture(scope="module")
def advi_fit(tiny):
    return OrdinalRaters().fit(tiny, method="advi", draws=40, random_seed=3, progress=False)


def test_advi_on_the_compiled_density_has_the_pymc_result_shape(advi_fit):
    assert advi_fit.attrs["logp_backend"] == "compiled" and advi_fit.attrs["method"] == "advi"
    post = advi_fit["posterior"]
    assert (post.sizes["chain"], post.sizes["draw"]) == (1, 40)
    assert post["severity"].dims == ("chain", "draw", "rater", "dimension", "design")
    assert post.attrs["converged"] == 1 and np.isfinite(post.attrs["elbo"])
    assert bool(advi_fit["sample_stats"]["converged"].all())
    opt = advi_fit["optimization"]
    assert opt["loss"].sizes["iteration"] == post.attrs["iterations"]
    assert float(opt["elbo"][-1]) == pytest.approx(post.attrs["elbo"])
    assert advi_fit.attrs["health_ok"] == 1
    assert np.isfinite(advi_fit["log_likelihood"]["answer"]).any()
    assert system_scores(advi_fit)["fair_average"].sizes["draw"] == 40
    # mean-field ADVI may shrink the scales (built-in study: sigma_residual 0.05-0.6 against
    # NUTS's 0.8): the results that depend on them say so, the others do not
    for res in (system_scores(advi_fit), reliability(advi_fit)):
        assert res.attrs["uncertainty_note"].startswith("computed from an ADVI")
        assert "can shrink the scales" in res.attrs["uncertainty_note"]
    assert "shrink" not in rater_table(advi_fit).attrs["uncertainty_note"]


def test_advi_is_seeded(tiny, advi_fit):
    again = OrdinalRaters().fit(tiny, method="advi", draws=40, random_seed=3, progress=False)
    xr.testing.assert_equal(again["posterior"].to_dataset(), advi_fit["posterior"].to_dataset())
    other = OrdinalRaters().fit(tiny, method="advi", draws=40, random_seed=4, progress=False)
    assert not np.allclose(other["posterior"]["severity"], advi_fit["posterior"]["severity"])


def test_advi_warns_and_fails_its_check_when_it_does_not_converge(tiny):
    with pytest.warns(UserWarning, match="ADVI did not converge in 300 steps"):
        dt = OrdinalRaters().fit(tiny, method="advi", draws=10, n=300, random_seed=1,
                                 progress=False)  # fmt: skip
    assert not bool(dt["sample_stats"]["converged"].any())
    assert dt.attrs["health_ok"] == 0 and "did not converge" in dt.attrs["health"]
    assert "understate" in dt.attrs["health"]


def _pymc_density(model):
    """A Density on a PyMC model's unconstrained log density (log-Jacobians included)."""
    logp = model.compile_logp(jacobian=True)
    dlogp = model.compile_dlogp(jacobian=True)
    ip = model.initial_point()
    names = [v.name for v in model.value_vars]
    shapes = {n: np.shape(ip[n]) for n in names}
    sizes = [int(np.prod(shapes[n])) for n in names]

    def point(x):
        parts = np.split(np.asarray(x, float), np.cumsum(sizes)[:-1])
        return {n: p.reshape(shapes[n]) for n, p in zip(names, parts, strict=True)}

    def logp_grad(x):
        p = point(x)
        return float(logp(p)), np.asarray(dlogp(p), float)

    return Density(
        ndim=sum(sizes),
        logp_grad=logp_grad,
        expand=point,
        var_shapes=shapes,
        var_dims={n: tuple(f"{n}_dim_{i}" for i in range(len(shapes[n]))) for n in names},
        coords={},
        initial_point=lambda rng: np.concatenate([np.ravel(ip[n]) for n in names]),
    )


def test_advi_agrees_with_pymc_advi():
    """Eight schools (non-centred): the same mean-field family on the same unconstrained
    density, fitted by two stochastic optimisers: means within a tenth of a standard
    deviation, standard deviations within 20 % (the ELBO is flat along them: converged runs
    of either optimiser with other seeds differ by as much)."""
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    s = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        z = pm.Normal("z", 0, 1, shape=8)
        pm.Normal("obs", mu + tau * z, s, observed=y)
    ours = advi_density(_pymc_density(model), draws=4000, random_seed=1, n=30_000)
    assert ours["posterior"].attrs["converged"] == 1
    # PyMC's default step size (adagrad_window, 1e-3) has not converged in 30,000 steps
    # here (mu 4.0 against 4.4 after 100,000); 1e-2 has
    approx = pm.fit(
        n=30_000,
        method="advi",
        model=model,
        random_seed=1,
        progressbar=False,
        obj_optimizer=pm.adagrad_window(learning_rate=1e-2),
    )
    theirs = approx.sample(4000, random_seed=2, return_inferencedata=True)["posterior"]
    for name in ("mu", "z"):
        a = ours["posterior"][name].values.reshape(4000, -1)
        b = theirs[name].values.reshape(4000, -1)
        np.testing.assert_allclose(a.mean(0), b.mean(0), atol=0.1 * max(1.0, b.std(0).max()))
        np.testing.assert_allclose(a.std(0), b.std(0), rtol=0.2)
    log_tau_ours = ours["posterior"]["tau_log__"].values.ravel()
    log_tau_theirs = np.log(theirs["tau"].values.ravel())
    assert abs(log_tau_ours.mean() - log_tau_theirs.mean()) < 0.1


@pytest.mark.slow  # PyMC compiles the ordinal graph for its ADVI
def test_ordinal_advi_agrees_with_pymc_advi_on_the_graph(tiny, advi_fit):
    """The compiled-density ADVI and PyMC's ADVI of the same graph (same parametrisation,
    same mean-field family): means of system effects, cut-points and severities agree within
    one standard deviation of the approximation. Measured (issue 22, seed 3): ours and
    PyMC's differ by up to 0.44 (system effects), 0.73 (cut-points) and 0.58 (severities)
    standard deviations, and the gap does not close with 5x longer runs of ours, while our
    runs with seeds 3, 4 and 5 differ by up to 0.23 and the eight-schools check above
    agrees within 0.1: an open difference between the two fits, not optimiser noise alone.
    """
    from raterstats.inference import run_inference

    # the graph's coordinates (issue 19: NUTS and ADVI sample the latent scale as one
    # coordinate by default, another mean-field family)
    ours = OrdinalRaters(scale_coordinate=False).fit(
        tiny, method="advi", draws=2000, random_seed=3, progress=False
    )
    theirs = run_inference(
        OrdinalRaters().build(tiny),
        method="advi",
        draws=2000,
        random_seed=3,
        progress=False,
        n=30_000,
        obj_optimizer=pm.adagrad_window(learning_rate=1e-2),
    )
    for name in ("system_effect", "cutpoints", "severity"):
        a, b = ours["posterior"][name], theirs["posterior"][name]
        sd = b.std(("chain", "draw")).values
        diff = np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values)
        assert np.all(diff <= sd), (name, float(np.max(diff / sd)))
