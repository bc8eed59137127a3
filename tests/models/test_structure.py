"""Model structure: specifications, variables and dims, the data layout, and log densities
at fixed points (compiled densities against the PyMC models, NumPy marginal likelihood
against brute-force enumeration)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import polars as pl
import pytest

from raterstats import MACE, DawidSkene, NominalScale, read_ratings
from raterstats.models import ModelInputError, Prior, model_from_datatree
from raterstats.models.latent_class import data_from_groups, prepare_latent_class
from raterstats.simulate import archehr_like_study

# ---------------------------------------------------------------------------- specification


def test_priors_override_by_name_and_unknown_names_listed():
    m = MACE(priors={"competence": Prior("Beta", alpha=1, beta=1)})
    assert m.priors["competence"] == Prior("Beta", alpha=1, beta=1)
    assert m.priors["spam"] == MACE.default_priors["spam"]
    with pytest.raises(TypeError, match=r"unknown prior 'nope'.*unknown option 'x'"):
        MACE(priors={"nope": Prior("Normal")}, x=1)
    with pytest.raises(ValueError, match="must be a Beta"):
        MACE(priors={"competence": Prior("Normal", mu=0, sigma=1)})
    with pytest.raises(ValueError, match="pooling must be one of"):
        DawidSkene(pooling="some")


def test_spec_is_json_and_round_trips():
    m = DawidSkene(pooling="one_coin", priors={"accuracy": Prior("Beta", alpha=3, beta=1)})
    spec = json.loads(json.dumps(m.spec()))
    assert spec["model"] == "dawid_skene"
    assert spec["options"]["pooling"] == "one_coin"
    assert repr(m) == (
        "DawidSkene(pooling='one_coin', priors={'accuracy': Prior('Beta', alpha=3, beta=1)})"
    )


def test_fit_does_not_mutate_the_model(one_dim):
    m = MACE()
    before = m.spec()
    m.fit(one_dim, method="em", random_seed=1)
    assert m.spec() == before


def test_interval_scale_is_refused_with_every_problem():
    frame = pl.DataFrame({"item": ["a", "a"], "rater": ["x", "y"], "rating": [0.3, 0.5]})
    from raterstats import IntervalScale

    r = read_ratings(frame, scale=IntervalScale())
    with pytest.raises(ModelInputError, match="categorical"):
        MACE().fit(r, method="em")


# ---------------------------------------------------------------------------- layout


def test_layout_patterns_reproduce_every_unit(small_archehr):
    d = prepare_latent_class(small_archehr.ratings)
    assert d.n_units == 60 * 3
    assert d.pattern_count.sum() == d.n_units
    for u in range(0, d.n_units, 7):
        p = d.unit_pattern[u]
        in_u, in_p = d.unit == u, d.p_pattern == p
        a = sorted(zip(d.cell[in_u].tolist(), d.code[in_u].tolist(), strict=True))
        b = sorted(zip(d.p_cell[in_p].tolist(), d.p_code[in_p].tolist(), strict=True))
        assert a == b
        assert d.pattern_dim[p] == d.unit_dim[u]


def test_layout_rebuilds_from_data_groups(small_archehr):
    d = prepare_latent_class(small_archehr.ratings)
    g = d.data_groups()
    d2 = data_from_groups(g["constant_data"], g["observed_data"])
    for f in ("unit", "rater", "dim", "design", "code", "unit_pattern", "pattern_count", "p_code"):
        np.testing.assert_array_equal(getattr(d, f), getattr(d2, f))
    assert d.unit_ids == d2.unit_ids and d.categories == d2.categories


# ---------------------------------------------------------------------------- log densities


def _brute_force_loglik(model, params, data):
    """log P(ratings of each unit) by enumerating the true class explicitly."""
    out = []
    comp = params.get("competence")
    for u in range(data.n_units):
        d = data.unit_dim[u]
        k = int(data.n_categories[d])
        sel = data.unit == u
        total = 0.0
        for t in range(k):
            if data.unit_gold[u] >= 0 and t != data.unit_gold[u]:
                continue
            p = params["prevalence"][0, d, t]
            for j, g, a in zip(data.rater[sel], data.design[sel], data.code[sel], strict=True):
                if comp is not None:
                    th = comp[0, j, d, g]
                    p *= th * (a == t) + (1 - th) * params["spam"][0, j, d, a]
                else:
                    p *= params["confusion"][0, j, d, g, t, a]
            total += p
        out.append(np.log(total))
    return np.array(out)


def test_numpy_marginal_matches_enumeration(small_archehr):
    r = small_archehr.ratings
    rng = np.random.default_rng(0)
    m = MACE()
    d = m.prepare(r)
    R, D, G, K = len(d.raters), len(d.dimensions), len(d.designs), d.K
    params = {
        "competence": rng.uniform(0.2, 0.9, (1, R, D, G)),
        "spam": rng.dirichlet(np.ones(K), (1, R, D)),
        "prevalence": rng.dirichlet(np.ones(K), (1, D)),
    }
    joint = m.pattern_log_joint(params, d)[0]
    ll = np.logaddexp.reduce(joint, axis=-1)[d.unit_pattern]
    np.testing.assert_allclose(ll, _brute_force_loglik(m, params, d), rtol=1e-10)
    ds = DawidSkene()
    conf = rng.dirichlet(np.ones(K), (1, R, D, G, K))
    p2 = {"confusion": conf, "prevalence": params["prevalence"]}
    joint = ds.pattern_log_joint(p2, d)[0]
    ll = np.logaddexp.reduce(joint, axis=-1)[d.unit_pattern]
    np.testing.assert_allclose(ll, _brute_force_loglik(ds, p2, d), rtol=1e-10)


class _AlternatingCentred(DawidSkene):
    """Partial pooling with every other error logit centred: both parametrisations in one
    model, whatever the default rule picks for these data (a test variant: not registered)."""

    abstract = True

    def centred_entries(self, data):
        e = data.K * (data.K - 1)
        return (np.arange(data.n_cells * e) % 2 == 0).reshape(data.n_cells, e)


def _pymc_point(model, data, pooling, x, model_obj):
    """Map a compiled density's unconstrained vector to the PyMC model's value variables."""
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C = R * D * G
    pt, pos = {}, 0

    def take(name, shape):
        nonlocal pos
        n = int(np.prod(shape))
        pt[name] = x[pos : pos + n].reshape(shape)
        pos += n

    if pooling == "mace_flat":
        take("competence_arcsine", (R, D, G))
    elif pooling in ("mace_hier", "mace_hier_centred", "mace_hier_raters_centred"):
        cen_u, cen_v = model_obj.is_centred(data)
        assert (cen_u, cen_v) == {
            "mace_hier": (False, False),
            "mace_hier_centred": (True, True),
            "mace_hier_raters_centred": (True, False),
        }[pooling]
        take("competence_cell_mean", (D, G))
        take("rater_sd_log__", ())
        take("rater_effect_basis" if cen_u else "rater_z", (R - 1,))
        take("cell_sd_log__", ())
        take("cell_effect_basis" if cen_v else "cell_z", (R - 1, D * G - 1))
    elif pooling in ("unpooled", "pooled"):
        nc = (R, D, G) if pooling == "unpooled" else (D, G)
        take("confusion_simplex__", (*nc, K, K - 1))
    elif pooling.startswith("partial"):
        e = K * (K - 1)
        take("confusion_logit_mean", (D, e))
        take("rater_sd_log__", (D,) if model_obj.options["spread"] == "dimension" else (D, e))
        w = x[pos : pos + C * e]
        pos += C * e
        cen = model_obj.centred_entries(data).ravel()
        for flag, name in ((True, "confusion_logit_centred"), (False, "confusion_z")):
            if (cen == flag).any():
                pt[name] = w[cen == flag]
    else:
        take("accuracy_logodds__", (R, D, G))
    if pooling.startswith("mace"):
        take("spam_simplex__", (R, D, K - 1))
    take("prevalence_simplex__", (D, K - 1))
    assert pos == x.size
    del C
    return pt


@pytest.mark.parametrize(
    ("label", "factory"),
    [
        ("mace_flat", lambda: MACE(hierarchical=False)),
        ("mace_hier", lambda: MACE(hierarchical=True, centred=False)),
        ("mace_hier_centred", lambda: MACE(hierarchical=True, centred=True)),
        ("mace_hier_raters_centred", lambda: MACE(hierarchical=True, centred="raters")),
        ("unpooled", lambda: DawidSkene()),
        ("pooled", lambda: DawidSkene(pooling="pooled")),
        ("partial", lambda: DawidSkene(pooling="partial")),
        ("partial_centred", lambda: DawidSkene(pooling="partial", centred=True)),
        ("partial_noncentred", lambda: DawidSkene(pooling="partial", centred=False)),
        ("partial_mixed", lambda: _AlternatingCentred(pooling="partial")),
        (
            "partial_by_dimension",
            lambda: _AlternatingCentred(pooling="partial", spread="dimension"),
        ),
        ("one_coin", lambda: DawidSkene(pooling="one_coin")),
    ],
)
def test_compiled_density_equals_pymc_logp_and_gradient(label, factory):
    # a design factor and gold labels make every index path count
    s = archehr_like_study(n_cases=3, n_systems=6, random_seed=11)
    frame = s.ratings.data.with_columns(
        pl.when(pl.col("rater") < "a10")
        .then(pl.lit("fine"))
        .otherwise(pl.lit("coarse"))
        .alias("design")
    )
    gold_item = frame["item"][0]
    frame = frame.with_columns(
        pl.when(pl.col("item") == gold_item).then(pl.lit("yes")).otherwise(None).alias("gold")
    )
    frame = frame.select("item", "rater", "dimension", "design", "rating", "gold")
    r = read_ratings(frame, scale=s.ratings.scales)
    m = factory()
    m = type(m)(priors=m.priors, **{**m.options, "use_gold": True})  # gold clamps: ask for it
    data = m.prepare(r)
    assert data.gold_used
    dens = m.density(data)
    assert dens is not None
    pm_model = m.build_model(data)
    # the Python linker compiles in a fraction of a second (numba would take ~20 s)
    logp = pm_model.compile_logp(mode="FAST_COMPILE")
    dlogp = pm_model.compile_dlogp(mode="FAST_COMPILE")
    names = [v.name for v in pm_model.value_vars]
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.normal(0, 0.8, dens.ndim)
        lp, g = dens.logp_grad(x)
        pt = _pymc_point(pm_model, data, label, x, m)
        assert lp == pytest.approx(float(logp(pt)), rel=1e-8)
        order = _pymc_point(pm_model, data, label, np.arange(dens.ndim, dtype=float), m)
        perm = np.concatenate([np.asarray(order[n]).ravel() for n in names]).astype(int)
        np.testing.assert_allclose(g[perm], dlogp(pt), atol=1e-8)


@pytest.mark.parametrize("centred", [False, True])
def test_hierarchical_mace_with_one_cell_has_only_zero_sum_rater_effects(centred, one_dim):
    # one dimension and one design: no cell effects; the R - 1 rater coordinates follow
    # the cell mean and the rater scale in the unconstrained vector, as in the PyMC model
    m = MACE(hierarchical=True, centred=centred)
    data = m.prepare(one_dim)
    R = len(data.raters)
    dens = m.density(data)
    assert dens is not None
    pm_model = m.build_model(data)
    assert "cell_sd" not in pm_model.named_vars and "cell_effect" not in pm_model.named_vars
    logp = pm_model.compile_logp(mode="FAST_COMPILE")
    dlogp = pm_model.compile_dlogp(mode="FAST_COMPILE")
    shapes = [pm_model.initial_point()[v.name].shape for v in pm_model.value_vars]
    assert shapes[2] == (R - 1,)
    x = np.random.default_rng(2).normal(0, 0.8, dens.ndim)
    point, pos = {}, 0
    for v, shape in zip(pm_model.value_vars, shapes, strict=True):
        n = int(np.prod(shape))
        point[v.name] = x[pos : pos + n].reshape(shape)
        pos += n
    assert pos == dens.ndim
    lp, g = dens.logp_grad(x)
    assert lp == pytest.approx(float(logp(point)), rel=1e-8)
    np.testing.assert_allclose(g, dlogp(point), atol=1e-8)
    u = dens.expand(x)["rater_effect"]
    assert u.shape == (R,) and abs(u.sum()) < 1e-12


def test_pymc_model_variables_and_dims(small_archehr):
    m = MACE()
    model = m.build(small_archehr.ratings)
    assert m.is_hierarchical(m.prepare(small_archehr.ratings))  # 3 dimensions
    assert model.named_vars_to_dims["competence"] == ("rater", "dimension", "design")
    assert model.named_vars_to_dims["spam"] == ("rater", "dimension", "category")
    assert list(model.coords["rater"])[:2] == ["a01", "a02"]
    flat = MACE().build(small_archehr.ratings.filter(dimension="uses_evidence"))
    assert "rater_sd" not in flat.named_vars  # one dimension and design: flat by default
    ds = DawidSkene(pooling="pooled").build(small_archehr.ratings)
    assert ds.named_vars_to_dims["confusion"] == ("dimension", "design", "true", "rated")


def test_dimensions_with_different_numbers_of_categories(mixed_k):
    r = mixed_k
    for m in (MACE(), DawidSkene()):
        dt = m.fit(r, method="em", random_seed=1)
        prob = dt["label_posterior"]["prob"].values
        unit_dim = dt["constant_data"]["unit_dim"].values
        yn = list(dt["constant_data"]["dimension"].values).index("yn")
        assert np.all(prob[unit_dim == yn, 2] == 0)
        np.testing.assert_allclose(prob.sum(axis=1), 1)
        assert m.build(r) is not None  # PyMC model with padded categories builds
    assert DawidSkene().density(DawidSkene().prepare(r)) is None  # PyMC path instead


def test_gold_clamps_the_latent_label(one_dim):
    item = one_dim.items[0]
    frame = one_dim.data.with_columns(
        pl.when(pl.col("item") == item).then(pl.lit("no")).otherwise(None).alias("gold")
    ).select("item", "rater", "dimension", "rating", "gold")
    r = read_ratings(frame, scale=one_dim.scales)
    code = r.scale_for("answers_question").code_of("no")
    dt = MACE(use_gold=True).fit(r, method="em", random_seed=1)
    from raterstats import item_posterior

    p = item_posterior(dt).sel(item=item, dimension="answers_question")
    assert float(p["prob"].sel(category=code)) == 1.0
    free = MACE().fit(r, method="em", random_seed=1)  # issue 17: gold is not used by default
    assert float(item_posterior(free)["prob"].sel(item=item).isel(dimension=0).max()) < 1.0
    assert free.attrs["options"] == MACE().fit(r, method="em", random_seed=1).attrs["options"]
    assert free["constant_data"].attrs["gold_used"] == 0
    assert int(free["constant_data"]["gold"].sel(unit=0)) == code  # kept as a check


def test_model_from_datatree_recreates_the_specification(one_dim):
    m = DawidSkene(pooling="one_coin", priors={"accuracy": Prior("Beta", alpha=3, beta=1)})
    dt = m.fit(one_dim, method="em", random_seed=2)
    assert model_from_datatree(dt) == m


def test_patterns_compress_a_full_panel():
    rows = list(itertools.product(range(200), ["a", "b", "c"]))
    rng = np.random.default_rng(1)
    frame = pl.DataFrame(
        {
            "item": [f"i{i}" for i, _ in rows],
            "rater": [j for _, j in rows],
            "rating": rng.choice(["x", "y"], len(rows)).tolist(),
        }
    )
    d = prepare_latent_class(read_ratings(frame, scale=NominalScale(["x", "y"])))
    assert d.n_units == 200 and d.n_patterns <= 8


@pytest.mark.parametrize("factory", [MACE, DawidSkene])
def test_c_callback_equals_the_python_density(factory, small_archehr):
    import ctypes

    m = factory()
    dens = m.density(m.prepare(small_archehr.ratings))
    assert dens.c_logp is not None and dens.c_data is not None
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


@pytest.mark.parametrize("factory", [MACE, DawidSkene, lambda: DawidSkene(pooling="pooled")])
def test_compiled_draw_summaries_equal_the_numpy_path(factory, small_archehr, monkeypatch):
    import xarray as xr

    from raterstats.models.latent_class import base as latent_base

    # three draws of a small layout would take the NumPy path: force the compiled one
    monkeypatch.setattr(latent_base, "EM_NUMPY_MAX", 0)
    m = factory()
    data = m.prepare(small_archehr.ratings)
    fit = m.fit(small_archehr.ratings, method="em", random_seed=1)
    post = fit["posterior"].to_dataset()
    rng = np.random.default_rng(0)
    # several "draws": jitter the point estimate on the simplex / probability scale
    draws = {}
    for v in m.param_names:
        x = np.repeat(post[v].values, 3, axis=1)
        x = x * rng.uniform(0.8, 1.2, x.shape)
        if v != "competence":
            x = x / x.sum(axis=-1, keepdims=True)
        draws[v] = (post[v].dims, np.clip(x, 1e-9, 1 - 1e-9))
    ds = xr.Dataset(draws, coords=post.drop_vars(["draw"]).coords)
    prob, ll = m.draws_summary(ds, data)
    params = m.params_from_posterior(ds)
    joint = m.pattern_log_joint(params, data)
    lse = np.logaddexp.reduce(joint, axis=-1)
    np.testing.assert_allclose(ll, lse, rtol=1e-10)
    np.testing.assert_allclose(prob, np.exp(joint - lse[..., None]).mean(axis=0), atol=1e-12)


def test_callback_module_names_the_kernel_source_it_was_compiled_with():
    # numba's cache of the C callbacks is keyed on callbacks.py alone; the hash there must
    # change whenever a file they compile in does, so that the cached callbacks are rebuilt
    from raterstats.models.latent_class import callbacks

    names = sorted(p.name for p in callbacks.KERNEL_SOURCES)
    assert names == ["kernels_density.py", "layout.py", "nutpie_callbacks.py"]
    assert all(p.exists() for p in callbacks.KERNEL_SOURCES)
    assert callbacks.kernel_source_sha256() == callbacks.KERNEL_SOURCE_SHA256, (
        "a source of the compiled callbacks changed: set KERNEL_SOURCE_SHA256 in "
        "raterstats/models/latent_class/callbacks.py to kernel_source_sha256() (this also "
        "invalidates numba's cached callbacks)"
    )


def test_flat_mace_competence_is_standard_logistic_on_the_arcsine_scale():
    # Beta(1/2, 1/2) is the arcsine law: theta = sin^2(pi/2 logistic(u)) makes u standard
    # logistic (Jacobian included); the PyMC graph and the compiled kernel use these formulas
    from scipy.stats import beta, logistic

    from raterstats.models.latent_class.kernels_density import arcsine_log_sin
    from raterstats.models.latent_class.mace_params import (
        arcsine_beta_logp_pt,
        arcsine_to_unit,
        unit_to_arcsine,
    )

    u = np.array([-200.0, -25.0, -6.0, -1.0, 0.0, 0.7, 4.0, 25.0, 200.0])
    lp, log_t, log_1mt = (t.eval() for t in arcsine_beta_logp_pt(u, 0.5, 0.5))
    np.testing.assert_allclose(lp, logistic.logpdf(u), rtol=1e-10)
    assert np.isfinite(log_t).all() and np.isfinite(log_1mt).all()
    # another Beta: density of theta times |d theta / du|, by finite differences
    mid = np.array([-3.0, 0.2, 2.5])
    h = 1e-6
    jac = (arcsine_to_unit(mid + h) - arcsine_to_unit(mid - h)) / (2 * h)
    want = beta(2.0, 3.0).logpdf(arcsine_to_unit(mid)) + np.log(jac)
    np.testing.assert_allclose(arcsine_beta_logp_pt(mid, 2.0, 3.0)[0].eval(), want, rtol=1e-7)
    theta = np.array([1e-9, 0.02, 0.5, 0.93, 1 - 1e-9])
    np.testing.assert_allclose(arcsine_to_unit(unit_to_arcsine(theta)), theta, rtol=1e-6)
    # the kernel's half log competence and its derivative, far into both tails
    for v in (-200.0, -31.0, -29.0, -3.0, 0.0, 2.0, 29.0, 200.0):
        val, der = arcsine_log_sin(v)
        fd = (arcsine_log_sin(v + h)[0] - arcsine_log_sin(v - h)[0]) / (2 * h)
        assert np.isfinite(val) and der == pytest.approx(fd, rel=1e-5, abs=1e-9)
    for k, v in enumerate(u):  # the two implementations agree
        assert 2 * arcsine_log_sin(v)[0] == pytest.approx(log_t[k], rel=1e-12)
        assert 2 * arcsine_log_sin(-v)[0] == pytest.approx(log_1mt[k], rel=1e-12)


def test_flat_mace_competence_prior_needs_alpha_and_beta():
    with pytest.raises(ValueError, match="positive scalar alpha and beta"):
        MACE(priors={"competence": Prior("Beta", mu=0.7, sigma=0.1)})
    with pytest.raises(ValueError, match="positive scalar alpha and beta"):
        MACE(priors={"competence": Prior("Beta", alpha=0.0, beta=1.0)})
