"""Issue 22: LengthEffect fits on a compiled density (numba, hand-written gradient, C
callback for nutpie): the density equals the PyMC graph's, the sampling form is the same
model, a fit through it has the PyMC fit's variables, dims and coordinates, and the MAP is
the PyMC graph's mode."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
import xarray as xr
from scipy.optimize import minimize

from raterstats import LengthEffect
from raterstats.inference import run_density
from raterstats.intervals import eti
from raterstats.models.kernels_length import KERNEL_SOURCE_SHA256, kernel_source_sha256
from raterstats.models.length_density import (
    SamplingForm,
    answer_log_likelihood,
    from_model_coordinates,
    length_density,
    length_layout,
)
from raterstats.models.ordinal import length_contrast
from raterstats.simulate import clinical_qa_study

pytestmark = pytest.mark.filterwarnings(
    # arviz-stats' tail-ESS helper divides by zero for draws of a short test fit
    "ignore:invalid value encountered in scalar divide:RuntimeWarning"
)


@pytest.fixture(scope="module")
def small():
    model = LengthEffect()
    ratings = clinical_qa_study(n_questions=4, random_seed=1).ratings
    data = model.prepare(ratings)
    return model, ratings, data


@pytest.fixture(scope="module")
def graph(small):
    model, _, data = small
    pm_model = model.build_model(data)
    return pm_model, pm_model.compile_logp(), pm_model.compile_dlogp()


def _point(pm_model, lay, x):
    """The PyMC graph's value variables at the unconstrained vector ``x``."""
    out = {}
    for v in pm_model.value_vars:
        name = v.name.removesuffix("_log__").removesuffix("_ordered__")
        out[v.name] = lay.block(name, x)
    return out


def test_kernel_sources_unchanged():
    """A changed nutpie_callbacks.py must update KERNEL_SOURCE_SHA256 (numba's cache of the
    callback does not see other files change)."""
    assert kernel_source_sha256() == KERNEL_SOURCE_SHA256


def test_log_density_and_gradient_equal_the_pymc_graph(small, graph):
    model, _, data = small
    pm_model, logp, dlogp = graph
    d = length_density(data, model.default_priors, form=None)
    lay = length_layout(data, model.default_priors)
    assert [v.name for v in pm_model.value_vars] == [
        "system_z",
        "sigma_question_log__",
        "question_z",
        "sigma_rater_log__",
        "rater_z",
        "length_effect",
        "cutpoints_ordered__",
    ]
    assert d.ndim == sum(int(np.prod(s)) for s in lay.shapes.values())
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.normal(size=d.ndim) * 0.8
        lp, grad = d.logp_grad(x)
        point = _point(pm_model, lay, x)
        # PyMC computes log(3) of the cut-points' prior scale in single precision (the
        # constant 3 is stored as an integer): 2e-8 per cut-point
        assert lp == pytest.approx(float(logp(point)), rel=1e-9, abs=1e-5)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-8, atol=1e-8)


def test_log_density_far_in_the_tails_equals_the_pymc_graph(small, graph):
    """The kernel multiplies the terms' probabilities (a count's power by repeated
    multiplication) and logs the product now and then; terms counted more than
    PRODUCT_MAX_COUNT times, probabilities under PRODUCT_MIN_FACTOR and the stable form's
    far tails enter as logarithms. Points with latent effects of several logits put
    ratings there; the small study has terms counted up to 12 times."""
    from raterstats.models.kernels_length import PRODUCT_MAX_COUNT, LFloat, LInt

    model, _, data = small
    pm_model, logp, dlogp = graph
    d = length_density(data, model.default_priors, form=None)
    lay = length_layout(data, model.default_priors)
    n, n_item = int(lay.ints[LInt.N_TERMS]), int(lay.ints[LInt.N_ITEM])
    counts = lay.floats[LFloat.BODY + n_item : LFloat.BODY + n_item + n]
    assert counts.max() > PRODUCT_MAX_COUNT and (counts == 1).any()
    rng = np.random.default_rng(5)
    for scale in (3.0, 8.0, 20.0):
        x = rng.normal(size=d.ndim) * scale
        lp, grad = d.logp_grad(x)
        point = _point(pm_model, lay, x)
        want = float(logp(point))
        assert np.isfinite(lp) and lp == pytest.approx(want, rel=1e-9, abs=1e-5), scale
        if scale <= 8.0:  # further out PyMC's own gradient loses digits (1e-4 at 20; ours
            # agrees with the former kernel, a logarithm per term, to 1e-14 there)
            np.testing.assert_allclose(grad, dlogp(point), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=4)))
def test_every_sampling_form_is_the_same_model(small, flags):
    """The sampled vector y of a form maps to the model's x; the density of y is the
    model's at x plus the log-Jacobian, its gradient matches finite differences, and the
    reported variables are the model's."""
    model, _, data = small
    form = SamplingForm(*flags)
    d0 = length_density(data, model.default_priors, form=None)
    d = length_density(data, model.default_priors, form=form)
    lay = length_layout(data, model.default_priors, form=form)
    rng = np.random.default_rng(int(np.packbits(flags)[0]))
    x = rng.normal(size=d.ndim) * 0.7
    y = from_model_coordinates(x, lay, form)
    log_jac = 0.0
    if form.centred_raters:
        log_jac -= len(data.coords["rater"]) * lay.block("sigma_rater", x).sum()
    if form.centred_questions:
        log_jac -= len(data.coords["question"]) * lay.block("sigma_question", x).sum()
    lp, grad = d.logp_grad(y)
    assert lp == pytest.approx(d0.logp_grad(x)[0] + log_jac, abs=1e-8)
    eps = 1e-6
    fd = np.array(
        [
            (d.logp_grad(y + eps * e)[0] - d.logp_grad(y - eps * e)[0]) / (2 * eps)
            for e in np.eye(d.ndim)
        ]
    )
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-5)
    a, b = d.expand(y), d0.expand(x)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], atol=1e-12)
    # the batch expansion a fit uses equals the expansion of each draw
    ys = y + rng.normal(size=(3, d.ndim)) * 0.2
    batch = d.expand_draws(ys)
    assert batch.keys() == a.keys()
    for k in batch:
        one = np.stack([d.expand(v)[k] for v in ys])
        np.testing.assert_allclose(batch[k], one, rtol=1e-13, atol=1e-13)


def test_probit_and_other_prior_families_fall_back_with_a_reason(small):
    _, _, data = small
    probit = LengthEffect(link="probit")
    assert not probit.has_density(data) and probit.density(data) is None
    assert "logit link" in str(probit.density_problem())
    student = LengthEffect(priors={"sigma_rater": {"dist": "HalfStudentT", "nu": 3, "sigma": 1}})
    assert "sigma_rater" in str(student.density_problem())
    assert LengthEffect().density_problem() is None and LengthEffect().has_density(data)


@pytest.fixture(scope="module")
def nuts_fit(small):
    model, ratings, _ = small
    return model.fit(ratings, draws=60, tune=100, chains=2, random_seed=3, progress=False)


def test_a_fit_on_the_density_has_the_pymc_graphs_variables_dims_and_coords(small, graph, nuts_fit):
    _, _, data = small
    pm_model = graph[0]
    dt = nuts_fit
    assert dt.attrs["logp_backend"] == "compiled" and "logp_backend_note" not in dt.attrs
    post = dt["posterior"].to_dataset()
    expected = {v.name for v in pm_model.free_RVs} | {v.name for v in pm_model.deterministics}
    assert set(post.data_vars) == expected
    for name in expected:
        assert post[name].dims == ("chain", "draw", *pm_model.named_vars_to_dims[name])
        for dim in pm_model.named_vars_to_dims[name]:
            assert [str(c) for c in post[dim].values] == [str(c) for c in pm_model.coords[dim]]
    assert np.all(np.diff(post["cutpoints"].values, axis=-1) > 0)
    np.testing.assert_allclose(
        post["severity"].values, post["rater_z"].values * post["sigma_rater"].values[..., None, :]
    )
    ll = dt["log_likelihood"]["answer"]
    assert ll.dims == ("chain", "draw", "item", "design")
    rated = np.zeros(ll.shape[2:], bool)
    ng = len(data.coords["design"])
    rated.reshape(-1)[data.obs_item * ng + data.obs_design] = True
    assert bool(np.isfinite(ll.values[..., rated]).all()) and bool(
        np.isnan(ll.values[..., ~rated]).all()
    )
    lc = length_contrast(dt)
    assert lc["length_effect"].dims == ("chain", "draw", "dimension", "design")
    for group in ("observed_data", "constant_data", "sample_stats"):
        assert group in dt.children


def test_compiled_log_likelihood_equals_numpy(small, nuts_fit):
    _, _, data = small
    post = nuts_fit["posterior"].to_dataset()
    fast = answer_log_likelihood(post, data, "logit")["answer"].values
    slow = answer_log_likelihood(post, data, "logit", compiled=False)["answer"].values
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-9, equal_nan=True)
    with pytest.raises(ValueError, match="logit link"):
        answer_log_likelihood(post, data, "probit", compiled=True)


def test_map_on_the_density_is_the_mode_of_the_pymc_graph(small, graph):
    model, ratings, data = small
    pm_model, logp, dlogp = graph
    dt = model.fit(ratings, method="map", random_seed=1, progress=False)
    assert dt.attrs["logp_backend"] == "compiled" and bool(dt["sample_stats"]["converged"].all())
    assert dt["posterior"].attrs["map_form"] == "map_form"
    lay = length_layout(data, model.default_priors)
    d0 = length_density(data, model.default_priors, form=None)
    x0 = d0.initial_point(np.random.default_rng(0))

    def neg(x):
        p = _point(pm_model, lay, x)
        return -float(logp(p)), -np.asarray(dlogp(p))

    res = minimize(
        neg, x0, jac=True, method="L-BFGS-B", options={"maxiter": 5000, "ftol": 1e-13, "gtol": 1e-9}
    )
    post = dt["posterior"].to_dataset()
    # the density's mode, as the PyMC graph's value variables: a stationary point of the
    # graph's log density (Jacobians included), as high as L-BFGS on the graph reaches
    x_map = np.zeros(lay.ndim)
    for name, shape in lay.shapes.items():
        o, n = lay.offsets[name], int(np.prod(shape))
        v = post[name].values[0, 0]
        if name in ("sigma_rater", "sigma_question"):
            v = np.log(v)
        elif name == "cutpoints":
            v = np.concatenate([v[..., :1], np.log(np.diff(v, axis=-1))], axis=-1)
        x_map[o : o + n] = np.reshape(v, -1)
    lp_map, grad_map = neg(x_map)
    assert float(dt["sample_stats"]["lp"].item()) == pytest.approx(-lp_map, abs=1e-5)
    # stationary up to map_density's stopping rule (relative change of the log density
    # below 1e-9)
    assert np.abs(grad_map).max() < 0.05
    assert -lp_map == pytest.approx(-res.fun, abs=1e-4)
    ref = d0.expand(res.x)
    # the location the likelihood leaves to the priors is a flat ridge: the two optimisers
    # stop a little apart along it
    for name in ("length_effect", "cutpoints", "severity", "sigma_rater", "question_effect"):
        np.testing.assert_allclose(post[name].values[0, 0], ref[name], atol=5e-3)


def _simulate_ratings(data, truth, rng):
    """Ratings of the LengthEffect model at ``truth`` on the design of ``data``."""
    lay = length_layout(data, None)
    vals = length_density(data, LengthEffect.default_priors, form=None).expand(truth)
    eta = np.zeros((len(data.coords["item"]), len(data.coords["dimension"])))
    eta += vals["system_effect"].T[data.item_system]
    eta += vals["question_effect"][data.item_question]
    lp = (
        eta[data.obs_item, data.obs_dim]
        + vals["length_effect"][data.obs_dim, data.obs_design] * data.z_length[data.obs_item]
        - vals["severity"][data.obs_rater, data.obs_dim]
    )
    cum = 1.0 / (1.0 + np.exp(-(vals["cutpoints"][data.obs_dim, data.obs_design] - lp[:, None])))
    y = np.sum(rng.random(lp.size)[:, None] > cum, axis=1)
    assert lay.ndim == truth.size
    return dataclasses.replace(data, y=y.astype(np.int64)), vals


@pytest.mark.slow  # 24 NUTS fits of simulated studies (about 2 minutes on 2 busy cores)
def test_length_coefficients_90_percent_intervals_cover_over_simulated_studies():
    """Coverage of the 90% intervals of the length coefficients (dimension x design) over
    24 studies simulated from the model with parameters drawn from its priors, fitted
    through the compiled density: 80-97% (each interval covers with probability 0.9 when
    the density is the model's)."""
    model = LengthEffect()
    covered, total = 0, 0
    for seed in range(24):
        rng = np.random.default_rng([22, seed])
        data = model.prepare(clinical_qa_study(n_questions=12, random_seed=seed).ratings)
        lay = length_layout(data, model.default_priors)
        truth = np.zeros(lay.ndim)
        for name, shape in lay.shapes.items():
            o, n = lay.offsets[name], int(np.prod(shape))
            if name in ("sigma_rater", "sigma_question"):
                truth[o : o + n] = np.log(np.abs(rng.normal(size=n)))
            elif name == "cutpoints":
                cuts = np.sort(rng.normal(0.0, 3.0, size=shape), axis=-1)
                raw = np.concatenate([cuts[..., :1], np.log(np.diff(cuts, axis=-1))], axis=-1)
                truth[o : o + n] = raw.reshape(-1)
            else:
                truth[o : o + n] = rng.normal(size=n)
        sim, vals = _simulate_ratings(data, truth, rng)
        dt = run_density(
            model.density(sim), draws=500, tune=500, chains=2, random_seed=seed, progress=False
        )
        lo, hi = eti(dt["posterior"]["length_effect"], 0.9)
        t = vals["length_effect"]
        covered += int(((lo.values <= t) & (t <= hi.values)).sum())
        total += t.size
    assert 0.80 <= covered / total <= 0.97, (covered, total)


def test_default_tuning_is_shorter_on_the_compiled_density_only(small, monkeypatch):
    """``tune=None``: 300 steps for NUTS by nutpie on the compiled density, the package's
    500 where the PyMC graph or another sampler runs; a given ``tune`` is kept."""
    from raterstats import defaults
    from raterstats.models import length_effect
    from raterstats.models.base import Model

    _, ratings, _ = small
    seen = []

    def record(self, ratings, *, tune, **options):
        seen.append(tune)
        return xr.DataTree()

    monkeypatch.setattr(Model, "fit", record)
    LengthEffect().fit(ratings)
    LengthEffect().fit(ratings, logp_backend="pymc")
    LengthEffect().fit(ratings, sampler="numpyro")
    LengthEffect(link="probit").fit(ratings)
    LengthEffect().fit(ratings, tune=123)
    assert seen == [length_effect.TUNE, *[defaults.TUNE] * 3, 123]
    assert length_effect.TUNE == 300 and defaults.TUNE == 500
