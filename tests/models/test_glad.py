"""GLAD (issue 19): structure, the compiled density against the PyMC model and the NumPy
reference, EM (its objective never decreases and it ends at a mode of the density NUTS
samples), the post-fit questions and a netCDF round trip; slow: recovery, coverage of 90%
intervals and NUTS against EM in log loss on data simulated from GLAD itself."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
import xarray as xr
from scipy.special import expit

import raterstats
from raterstats import NominalScale, read_ratings
from raterstats.diagnostics import ppc_agreement
from raterstats.models import GLAD, Prior, model_from_datatree
from raterstats.models.latent_class import logsumexp_np
from raterstats.models.latent_class.glad_density import glad_to_unconstrained
from raterstats.models.latent_class.glad_em import GladEM, objective_check
from raterstats.report import methods_paragraph
from raterstats.simulate import archehr_like_study


def simulate_glad(
    *,
    n_items: int = 60,
    n_raters: int = 12,
    per_item: int = 4,
    K: int = 3,
    seed: int = 0,
    ability: np.ndarray | None = None,
):
    """Ratings drawn from GLAD's generative story with parameters drawn from its default
    prior (abilities N(1, 1) unless given, log easiness N(1, 1), label prior Dirichlet(1));
    each item is rated by ``per_item`` raters drawn from ``n_raters``. Returns the ratings
    and the truth (``ability``, ``easiness``, ``prevalence``, ``truth``: true codes)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(1.0, 1.0, n_raters) if ability is None else np.asarray(ability, float)
    b = np.exp(rng.normal(1.0, 1.0, n_items))
    pi = rng.dirichlet(np.ones(K))
    z = rng.choice(K, n_items, p=pi)
    rows = []
    for i in range(n_items):
        for j in rng.choice(a.size, per_item, replace=False):
            right = rng.random() < expit(a[j] * b[i])
            code = z[i] if right else (z[i] + rng.integers(1, K)) % K
            rows.append((f"i{i:04d}", f"s{i % 3}", f"r{j:03d}", str(code)))
    frame = pl.DataFrame(rows, schema=["item", "system", "rater", "rating"], orient="row")
    ratings = read_ratings(frame, scale=NominalScale([str(k) for k in range(K)]))
    return ratings, {"ability": a, "easiness": b, "prevalence": pi, "truth": z}


@pytest.fixture(scope="module")
def study():
    return simulate_glad(seed=3)


@pytest.fixture(scope="module")
def rich():
    """Three dimensions, two designs and a gold label that clamps (every index path)."""
    s = archehr_like_study(n_cases=3, n_systems=6, random_seed=11)
    frame = s.ratings.data.with_columns(
        pl.when(pl.col("rater") < "a10").then(pl.lit("fine")).otherwise(pl.lit("coarse"))
        .alias("design")
    )  # fmt: skip
    gold_item = frame["item"][0]
    frame = frame.with_columns(
        pl.when(pl.col("item") == gold_item).then(pl.lit("yes")).otherwise(None).alias("gold")
    ).select("item", "rater", "dimension", "design", "rating", "gold")
    model = GLAD(use_gold=True)
    return model, model.prepare(read_ratings(frame, scale=s.ratings.scales))


@pytest.fixture(scope="module")
def mixed(mixed_k):
    """Dimensions with 2 and 3 categories."""
    return GLAD(), GLAD().prepare(mixed_k)


def test_variables_dims_and_one_pattern_per_unit(study):
    ratings, _ = study
    data = GLAD().prepare(ratings)
    assert data.n_patterns == data.n_units  # each unit has its own easiness
    dims = GLAD().build_model(data).named_vars_to_dims
    assert dims["ability"] == ("rater", "dimension", "design")
    assert dims["easiness"] == ("unit",)
    assert dims["prevalence"] == ("dimension", "category")


def test_priors_must_be_the_families_the_density_implements():
    with pytest.raises(ValueError, match="'ability' must be a Normal"):
        GLAD(priors={"ability": Prior("StudentT", nu=3, mu=1.0, sigma=1.0)})
    with pytest.raises(ValueError, match="'easiness' must be a LogNormal"):
        GLAD(priors={"easiness": Prior("LogNormal", mu=1.0, sigma=-1.0)})
    with pytest.raises(ValueError, match="'prevalence' must be a Dirichlet"):
        GLAD(priors={"prevalence": Prior("Dirichlet", a=[1.0, 2.0])})
    assert GLAD(priors={"ability": Prior("Normal", mu=0.0, sigma=2.0)}).prior_values()[0] == (
        0.0,
        2.0,
    )


def test_compiled_density_equals_the_pymc_model(rich):
    # value and gradient at random points, with designs and a gold clamp
    model, data = rich
    assert data.gold_used
    dens = model.density(data)
    pm_model = model.build_model(data)
    assert [v.name for v in pm_model.value_vars] == [
        "ability",
        "easiness_log__",
        "prevalence_simplex__",
    ]
    logp = pm_model.compile_logp(mode="FAST_COMPILE")
    dlogp = pm_model.compile_dlogp(mode="FAST_COMPILE")
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C, U = data.n_cells, data.n_units
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.normal(0, 0.8, dens.ndim)
        lp, g = dens.logp_grad(x)
        point = {
            "ability": x[:C].reshape(R, D, G),
            "easiness_log__": x[C : C + U],
            "prevalence_simplex__": x[C + U :].reshape(D, K - 1),
        }
        assert lp == pytest.approx(float(logp(point)), rel=1e-10)
        np.testing.assert_allclose(g, dlogp(point), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("which", ["rich", "mixed"])
def test_density_gradient_by_finite_differences(which, request):
    model, data = request.getfixturevalue(which)
    dens = model.density(data)
    rng = np.random.default_rng(2)
    x = rng.normal(0, 0.7, dens.ndim)
    _, g = dens.logp_grad(x)
    h = 1e-6
    for i in rng.choice(dens.ndim, size=min(25, dens.ndim), replace=False):
        e = np.zeros(dens.ndim)
        e[i] = h
        fd = (dens.logp_grad(x + e)[0] - dens.logp_grad(x - e)[0]) / (2 * h)
        assert g[i] == pytest.approx(fd, rel=1e-5, abs=1e-6), i


@pytest.mark.parametrize("which", ["rich", "mixed"])
def test_density_likelihood_equals_the_numpy_reference(which, request):
    # the compiled density = marginal likelihood of draw_tables (the reference every
    # post-fit answer uses) + the log prior that EM adds to it
    model, data = request.getfixturevalue(which)
    dens = model.density(data)
    em = GladEM(model, data)
    x = np.random.default_rng(7).normal(0, 0.6, dens.ndim)
    values = dens.expand(x)
    params = {k: np.asarray(v)[None] for k, v in values.items()}
    reference = float(logsumexp_np(model.pattern_log_joint(params, data), axis=-1).sum())
    C, U = data.n_cells, data.n_units
    alpha, s = x[:C], x[C : C + U]
    with np.errstate(divide="ignore"):
        log_pi = np.where(
            data.valid, np.log(np.where(data.valid, values["prevalence"], 1)), -np.inf
        )
    _, ll = em.estep(alpha, s, log_pi)
    assert ll == pytest.approx(reference, rel=1e-10)
    assert dens.logp_grad(x)[0] == pytest.approx(ll + em.log_prior(alpha, s, log_pi), rel=1e-10)


def test_c_callback_equals_the_python_density(rich):
    import ctypes

    model, data = rich
    dens = model.density(data)
    x = np.random.default_rng(3).normal(0, 0.5, dens.ndim)
    lp, g = dens.logp_grad(x)
    out, logp = np.zeros(dens.ndim), np.zeros(1)
    dp = ctypes.POINTER(ctypes.c_double)
    rc = dens.c_logp.ctypes(
        dens.ndim,
        x.ctypes.data_as(dp),
        out.ctypes.data_as(dp),
        logp.ctypes.data_as(dp),
        dens.c_data.ctypes.data_as(ctypes.c_void_p),
    )
    assert rc == 0
    assert logp[0] == lp
    np.testing.assert_array_equal(out, g)


def test_callback_names_the_source_it_was_compiled_with():
    from raterstats.models.latent_class import kernels_glad

    assert kernels_glad.callback_source_sha256() == kernels_glad.CALLBACK_SOURCE_SHA256, (
        "raterstats/nutpie_callbacks.py changed: set CALLBACK_SOURCE_SHA256 in "
        "raterstats/models/latent_class/kernels_glad.py to callback_source_sha256() (this "
        "also invalidates numba's cached GLAD callback)"
    )


@pytest.fixture(scope="module")
def em_fit(study):
    ratings, _ = study
    return GLAD().fit(ratings, method="em", random_seed=1)


def test_em_objective_never_decreases_and_ends_at_a_mode(study, em_fit):
    ratings, _ = study
    st = em_fit["sample_stats"].attrs
    history = json.loads(st["objective_history"])
    assert len(history) >= 3 and bool(em_fit.sample_stats["converged"].item())
    assert objective_check(history) <= 1e-9 * abs(history[-1])
    for restart in range(5):  # each restart's short run is monotone too
        run = GLAD().fit(ratings, method="em", random_seed=restart, restarts=1, max_iter=15)
        assert objective_check(json.loads(run.sample_stats.attrs["objective_history"])) <= 1e-8
    # the EM estimate is a mode of the density NUTS samples, and the objective is its value
    model = GLAD()
    data = model.prepare(ratings)
    dens = model.density(data)
    point = {k: em_fit.posterior[k].values[0, 0] for k in GLAD.param_names}
    lp, g = dens.logp_grad(glad_to_unconstrained(point, data))
    assert lp == pytest.approx(st["objective"], rel=1e-9)
    assert np.abs(g).max() < 0.05


def test_em_recovers_labels_better_than_the_majority_vote(study, em_fit):
    _, truth = study
    post = raterstats.item_posterior(em_fit)
    codes = post["map_code"].isel(dimension=0).values
    assert (codes == truth["truth"]).mean() >= (
        post["votes"].isel(dimension=0).values.argmax(-1) == truth["truth"]
    ).mean()


def test_post_fit_questions_and_a_saved_fit(study, tmp_path):
    ratings, _ = study
    dt = GLAD().fit(ratings, draws=100, tune=100, chains=2, random_seed=1, progress=False)
    assert dt.attrs["logp_backend"] == "compiled" and dt.posterior.attrs["init"] == "em"
    assert dt.posterior["easiness"].sizes["unit"] == dt["constant_data"].sizes["unit"]
    assert dt.log_likelihood["ratings"].dims == ("chain", "draw", "unit")
    assert model_from_datatree(dt) == GLAD()
    post = raterstats.item_posterior(dt)
    np.testing.assert_allclose(post["prob"].sum("category"), 1.0)
    summary = raterstats.rater_summary(dt)
    for name in ("ability", "typical_accuracy"):
        assert summary[f"{name}_low"].dims == ("rater", "dimension", "design")
        assert (summary[f"{name}_low"] <= summary[f"{name}_high"]).all()
    assert ((summary["typical_accuracy_mean"] > 0) & (summary["typical_accuracy_mean"] < 1)).all()
    ranking = raterstats.rank_systems(dt, score_map={str(k): float(k) for k in range(3)}, n_boot=20)
    assert set(ranking["system"].values) == {"s0", "s1", "s2"}
    assert "Whitehill" in methods_paragraph([dt])
    assert raterstats.diagnose(dt, warn=False).label_switching == ()
    ppc = ppc_agreement(dt, n_draws=10, random_seed=1)  # simulate_ratings
    assert ppc["replicated"].sizes["replicate"] == 10
    dt.to_netcdf(tmp_path / "glad.nc")
    back = xr.open_datatree(tmp_path / "glad.nc")
    xr.testing.assert_equal(raterstats.item_posterior(back), post)
    xr.testing.assert_equal(raterstats.rater_summary(back), summary)


def test_a_labelling_with_mostly_adversarial_raters_is_reported(em_fit):
    from raterstats.models.latent_class.glad import adversarial_note, adversarial_rating_share

    dt = em_fit
    share = adversarial_rating_share(dt)
    assert share == pytest.approx(dt.sample_stats.attrs["adversarial_rating_share"])
    assert share < 0.5 and adversarial_note(dt) is None
    flipped = dt.copy()
    flipped["posterior"]["ability"] = -dt.posterior["ability"]
    assert adversarial_rating_share(flipped) == pytest.approx(1 - share)
    assert "adversarial" in adversarial_note(flipped)
    assert any("adversarial" in p for p in GLAD().estimate_problems(flipped))


def test_card_names_the_posterior_variables(em_fit):
    from pathlib import Path

    yaml = pytest.importorskip("yaml")
    card = Path(__file__).resolve().parents[2] / "models" / "glad" / "card.md"
    front = yaml.safe_load(card.read_text().split("---", 2)[1])
    assert set(front["parameters"]) == set(em_fit.posterior.data_vars)


def test_em_with_mixed_categories_and_map_on_the_density(mixed_k):
    em = GLAD().fit(mixed_k, method="em", random_seed=1)
    prev = em.posterior["prevalence"].values[0, 0]
    np.testing.assert_allclose(prev.sum(axis=-1), 1.0)
    assert prev[list(em.posterior["dimension"].values).index("yn"), 2] == 0.0  # padded class
    mode = GLAD().fit(mixed_k, method="map", random_seed=1)
    # MAP (L-BFGS on the compiled density) and EM find the same mode
    assert mode.sample_stats["lp"].item() == pytest.approx(
        em.sample_stats.attrs["objective"], abs=1e-3
    )


# ------------------------------------------------- slow: data simulated from GLAD itself


def unit_order(dt: xr.DataTree) -> np.ndarray:
    """The simulated item index of every unit of a fit (items are ``i0000``, ...)."""
    return np.array([int(str(i)[1:]) for i in dt["constant_data"]["item"].values])


def rater_order(dt: xr.DataTree) -> np.ndarray:
    """The simulated rater index of every rater of a fit (raters are ``r000``, ...)."""
    return np.array([int(str(r)[1:]) for r in dt.posterior["rater"].values])


def true_label_log_loss(dt: xr.DataTree, truth: np.ndarray) -> float:
    """Mean log loss of the fit's label posteriors against the simulated true labels."""
    prob = dt["label_posterior"]["prob"].values
    p = prob[np.arange(prob.shape[0]), truth[unit_order(dt)]]
    return float(-np.mean(np.log(np.clip(p, 1e-12, None))))


@pytest.mark.slow
def test_nuts_recovers_the_simulated_parameters():
    ratings, truth = simulate_glad(n_items=400, n_raters=20, per_item=5, K=3, seed=21)
    dt = GLAD().fit(ratings, random_seed=1, progress=False)
    d = raterstats.diagnose(dt, warn=False)
    assert float(np.nanmax(d.parameters["rhat"].to_numpy())) <= 1.01
    assert d.divergences == 0
    post = dt.posterior.mean(("chain", "draw"))
    ability = post["ability"].values[:, 0, 0]
    assert np.corrcoef(ability, truth["ability"][rater_order(dt)])[0, 1] > 0.95
    log_b = np.log(dt.posterior["easiness"]).mean(("chain", "draw")).values
    assert np.corrcoef(log_b, np.log(truth["easiness"][unit_order(dt)]))[0, 1] > 0.4
    np.testing.assert_allclose(post["prevalence"].values[0], truth["prevalence"], atol=0.06)
    codes = raterstats.item_posterior(dt)["map_code"].isel(dimension=0).values
    assert (codes == truth["truth"][unit_order(dt)]).mean() >= 0.9


@pytest.mark.slow
def test_90_percent_intervals_cover_the_simulated_truth():
    # parameters drawn from the default prior, so the posterior's intervals are calibrated
    # on average over replicates (the argument of simulation-based calibration)
    hits: dict[str, list[np.ndarray]] = {"ability": [], "log easiness": [], "prevalence": []}
    for rep in range(20):
        ratings, truth = simulate_glad(n_items=60, n_raters=10, per_item=4, K=3, seed=1000 + rep)
        dt = GLAD().fit(ratings, random_seed=rep, progress=False, log_likelihood=False)
        post = dt.posterior
        draws = {
            "ability": post["ability"].values[..., 0, 0],
            "log easiness": np.log(post["easiness"].values),
            "prevalence": post["prevalence"].values[..., 0, :],
        }
        true = {
            "ability": truth["ability"][rater_order(dt)],
            "log easiness": np.log(truth["easiness"][unit_order(dt)]),
            "prevalence": truth["prevalence"],
        }
        for name, x in draws.items():
            lo, hi = np.quantile(x.reshape(-1, *x.shape[2:]), [0.05, 0.95], axis=0)
            hits[name].append((lo <= true[name]) & (true[name] <= hi))
    coverage = {k: float(np.concatenate(v).mean()) for k, v in hits.items()}
    assert all(0.80 <= c <= 0.97 for c in coverage.values()), coverage


@pytest.mark.slow
def test_nuts_has_a_lower_log_loss_than_em_on_a_sparse_crowd():
    # the regime where the spread of the parameters matters: 150 items x 3 ratings from 50
    # raters (about 9 ratings each), two classes; log loss against the simulated labels
    em_loss, nuts_loss = [], []
    for rep in range(8):
        ratings, truth = simulate_glad(n_items=150, n_raters=50, per_item=3, K=2, seed=200 + rep)
        em = GLAD().fit(ratings, method="em", random_seed=1)
        nuts = GLAD().fit(ratings, random_seed=1, progress=False)
        em_loss.append(true_label_log_loss(em, truth["truth"]))
        nuts_loss.append(true_label_log_loss(nuts, truth["truth"]))
    em_loss, nuts_loss = np.array(em_loss), np.array(nuts_loss)
    assert nuts_loss.mean() < em_loss.mean(), (nuts_loss, em_loss)
    assert (nuts_loss < em_loss).mean() >= 0.75, (nuts_loss, em_loss)


@pytest.mark.slow
def test_em_estimates_a_rare_class_from_data_simulated_from_glad():
    # why the label prior is estimated (the card: real data): on GLAD's own data with one
    # class at 12 %, EM's estimated prevalence is close to the truth, and the labels are
    # better than with crowd-kit's fixed uniform label prior
    rng = np.random.default_rng(5)
    n_items, n_raters = 3000, 100
    ability, easiness = rng.normal(1, 1, n_raters), np.exp(rng.normal(1, 1, n_items))
    truth = (rng.random(n_items) < 0.12).astype(int)
    item = np.repeat(np.arange(n_items), 3)
    rater = np.concatenate([rng.choice(n_raters, 3, replace=False) for _ in range(n_items)])
    right = rng.random(item.size) < expit(ability[rater] * easiness[item])
    code = np.where(right, truth[item], 1 - truth[item])
    frame = pl.DataFrame(
        {
            "item": [f"i{i:04d}" for i in item],
            "rater": [f"r{j:03d}" for j in rater],
            "rating": code.astype(str),
        }
    )
    ratings = read_ratings(frame, scale=NominalScale(["0", "1"]))
    uniform = GLAD(priors={"prevalence": Prior("Dirichlet", a=1e6)})
    accuracy = {}
    for name, model in (("estimated", GLAD()), ("uniform", uniform)):
        dt = model.fit(ratings, method="em", random_seed=1, log_likelihood=False)
        prob = dt["label_posterior"]["prob"].values
        accuracy[name] = float((prob.argmax(axis=1) == truth[unit_order(dt)]).mean())
        if name == "estimated":
            rare = float(dt.posterior["prevalence"].values[0, 0, 0, 1])
            assert rare == pytest.approx(truth.mean(), abs=0.02)
    assert accuracy["estimated"] > accuracy["uniform"], accuracy
