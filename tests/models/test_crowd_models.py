"""Community Dawid-Skene and the enhanced BCC (issue 19): the compiled densities against
the PyMC models and against an independent NumPy / scipy reference, gradients against
finite differences, the variational fits' monotone bound, the held-out rule, the pivotal
relabelling, and the post-fit answers of a fit (fresh and reloaded)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
import xarray as xr
from scipy import stats
from scipy.special import logsumexp, polygamma

from raterstats import NominalScale, item_posterior, rater_summary, read_ratings
from raterstats.health import reported_variables
from raterstats.models import model_from_datatree
from raterstats.models.latent_class import CommunityDawidSkene, EnhancedBCC
from raterstats.models.latent_class.crowd_base import layout_majority_vote
from raterstats.models.latent_class.crowd_density import cds_density
from raterstats.models.latent_class.crowd_sim import (
    simulate_community_crowd,
    simulate_subtype_crowd,
)
from raterstats.models.latent_class.crowd_vb import (
    choose_size,
    heldout_folds,
    pivot_permutations,
    vb_layout,
)
from raterstats.ranking import rank_systems
from raterstats.simulate import archehr_like_study


@pytest.fixture(scope="module")
def study():
    """3 dimensions (3 categories each), a design factor and a gold label, so that every
    index path of the densities counts."""
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
    frame = frame.select("item", "rater", "dimension", "design", "rating", "gold", "system")
    return read_ratings(frame, scale=s.ratings.scales)


@pytest.fixture(scope="module")
def tiny():
    """8 items, 4 raters, 2 categories: small enough to enumerate every latent state."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(8):
        for j in rng.choice(4, 3, replace=False):
            rows.append((f"i{i}", f"r{j}", str(int(rng.random() < 0.4 + 0.1 * j))))
    frame = pl.DataFrame(rows, schema=["item", "rater", "rating"], orient="row")
    return read_ratings(frame, scale=NominalScale(["0", "1"]))


def _pymc_point(pm_model, x):
    ip = pm_model.initial_point()
    out, pos = {}, 0
    for v in pm_model.value_vars:
        shape = ip[v.name].shape
        n = int(np.prod(shape))
        out[v.name] = x[pos : pos + n].reshape(shape)
        pos += n
    assert pos == x.size
    return out


def _random_centring(model, data, seed):
    cen = np.random.default_rng(seed).random((data.n_cells, data.K)) < 0.5
    return cen


@pytest.mark.parametrize(
    ("label", "factory"),
    [
        ("cds_m1", lambda: CommunityDawidSkene(communities=1, use_gold=True)),
        ("cds_m3", lambda: CommunityDawidSkene(communities=3, use_gold=True)),
        ("ebcc_m1", lambda: EnhancedBCC(subtypes=1, use_gold=True)),
        ("ebcc_m2", lambda: EnhancedBCC(subtypes=2, use_gold=True)),
    ],
)
def test_compiled_density_equals_pymc_logp_and_gradient(label, factory, study):
    m = factory()
    data = m.prepare(study)
    assert data.gold_used
    M = m.model_size(data)
    extra = {}
    if label.startswith("cds"):
        # mixed centring and uneven reference weights: every path of the rows' map
        cen = _random_centring(m, data, 1)
        w = np.random.default_rng(2).dirichlet(np.ones(M), len(data.raters))
        m.centred_rows = lambda d, start=None: cen  # type: ignore[method-assign]
        dens = cds_density(m, data, M, None, ref_weight=w)
        extra = {"ref_weight": w, "centred": cen}
    else:
        dens = m.density(data)
    pm_model = m.build_model(data, **extra)
    logp = pm_model.compile_logp(mode="FAST_COMPILE")
    dlogp = pm_model.compile_dlogp(mode="FAST_COMPILE")
    det = pm_model.compile_fn(
        pm_model.replace_rvs_by_values([pm_model[n] for n in ("confusion", "prevalence")]),
        inputs=pm_model.value_vars,
        on_unused_input="ignore",
        mode="FAST_COMPILE",
    )
    rng = np.random.default_rng(5)
    for _ in range(2):
        x = rng.normal(0, 0.8, dens.ndim)
        lp, g = dens.logp_grad(x)
        pt = _pymc_point(pm_model, x)
        assert lp == pytest.approx(float(logp(pt)), rel=1e-9)
        np.testing.assert_allclose(g, dlogp(pt), atol=1e-7)
        conf, prev = det(pt)
        e = dens.expand(x)
        np.testing.assert_allclose(e["confusion"], conf, atol=1e-12)
        np.testing.assert_allclose(e["prevalence"], prev, atol=1e-12)


def _jacobian_simplex(p):
    """log-Jacobian of PyMC's simplex transform, summed over rows."""
    return float(np.sum(np.log(p)) + p[..., 0].size * math.log(p.shape[-1]))


def test_community_density_equals_an_independent_reference(tiny):
    """The log density at a point: scipy's Dirichlet and Gamma log densities, the mixture
    over communities summed rater by rater, the likelihood by enumerating every unit's
    class, and the transforms' log-Jacobians written out."""
    m = CommunityDawidSkene(communities=2, centred=False)
    data = m.prepare(tiny)
    R, K, M = len(data.raters), data.K, 2
    dens = m.density(data)
    x = np.random.default_rng(7).normal(0, 0.7, dens.ndim)
    v = dens.expand(x)
    conf = v["confusion"][:, 0, 0]  # (R, K, K)
    comm = v["community_confusion"][:, 0, 0]  # (M, K, K)
    rho, s, prev = v["community_weight"], float(v["concentration"]), v["prevalence"][0]
    alpha = m.community_conc(K)
    ref = stats.dirichlet.logpdf(prev, np.full(K, 3.0))
    ref += stats.dirichlet.logpdf(rho, np.ones(M))
    ref += sum(stats.dirichlet.logpdf(comm[c, t], alpha[t]) for c in range(M) for t in range(K))
    ref += stats.gamma.logpdf(s, 2.0, scale=10.0)
    for j in range(R):
        ref += logsumexp(
            [
                np.log(rho[c])
                + sum(stats.dirichlet.logpdf(conf[j, t], 1.0 + s * comm[c, t]) for t in range(K))
                for c in range(M)
            ]
        )
    for u in range(data.n_units):
        sel = data.unit == u
        per_class = [
            np.log(prev[t]) + np.sum(np.log(conf[data.rater[sel], t, data.code[sel]]))
            for t in range(K)
        ]
        ref += logsumexp(per_class)
    # log-Jacobians: simplexes (prevalence, weights, community rows, rater rows), log s,
    # and z -> the rater rows' coordinates (sd = sqrt(psi'(alpha)) of the first K - 1
    # entries, alpha = 1 + s times the communities' even mean: no start, even weights)
    jac = _jacobian_simplex(prev[None]) + _jacobian_simplex(rho[None])
    jac += _jacobian_simplex(comm) + _jacobian_simplex(conf) + math.log(s)
    alpha = 1.0 + s * comm.mean(axis=0)  # (K, K), the same for every rater
    jac += R * 0.5 * float(np.sum(np.log(polygamma(1, alpha[:, :-1]))))
    assert dens.logp_grad(x)[0] == pytest.approx(ref + jac, rel=1e-10)


def test_ebcc_density_equals_an_independent_reference(tiny):
    m = EnhancedBCC(subtypes=2)
    data = m.prepare(tiny)
    R, K, M = len(data.raters), data.K, 2
    dens = m.density(data)
    x = np.random.default_rng(8).normal(0, 0.7, dens.ndim)
    v = dens.expand(x)
    sub = v["subtype_confusion"][:, 0, 0]  # (R, K, M, K)
    nu, prev = v["subtype_weight"][0], v["prevalence"][0]
    alpha = m.confusion_conc(K)
    ref = stats.dirichlet.logpdf(prev, np.full(K, 3.0))
    ref += sum(stats.dirichlet.logpdf(nu[t], np.ones(M)) for t in range(K))
    ref += sum(
        stats.dirichlet.logpdf(sub[j, t, g], alpha[t])
        for j in range(R)
        for t in range(K)
        for g in range(M)
    )
    for u in range(data.n_units):
        sel = data.unit == u
        states = [
            np.log(prev[t] * nu[t, g]) + np.sum(np.log(sub[data.rater[sel], t, g, data.code[sel]]))
            for t in range(K)
            for g in range(M)
        ]
        ref += logsumexp(states)
    jac = _jacobian_simplex(prev[None]) + _jacobian_simplex(nu) + _jacobian_simplex(sub)
    assert dens.logp_grad(x)[0] == pytest.approx(ref + jac, rel=1e-10)
    # the family's NumPy reference of the label posteriors sums the subtypes out
    params = {k: v[k][None] for k in ("subtype_confusion", "subtype_weight", "prevalence")}
    joint = m.pattern_log_joint(params, data)[0]  # (P, K)
    u = 0
    sel = data.unit == u
    by_class = [
        logsumexp(
            [
                np.log(prev[t] * nu[t, g])
                + np.sum(np.log(sub[data.rater[sel], t, g, data.code[sel]]))
                for g in range(M)
            ]
        )
        for t in range(K)
    ]
    np.testing.assert_allclose(joint[data.unit_pattern[u]], by_class, rtol=1e-12)


@pytest.mark.parametrize(
    "factory", [lambda: CommunityDawidSkene(communities=2), lambda: EnhancedBCC(subtypes=2)]
)
def test_gradient_matches_finite_differences(factory, tiny):
    m = factory()
    dens = m.density(m.prepare(tiny))
    x = np.random.default_rng(4).normal(0, 0.5, dens.ndim)
    _, g = dens.logp_grad(x)
    h = 1e-6
    fd = np.array(
        [
            (dens.logp_grad(x + h * e)[0] - dens.logp_grad(x - h * e)[0]) / (2 * h)
            for e in np.eye(dens.ndim)
        ]
    )
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("factory", "size"), [(lambda: CommunityDawidSkene(), 2), (lambda: EnhancedBCC(), 3)]
)
def test_variational_bound_never_decreases(factory, size):
    sim = simulate_community_crowd(n_items=60, n_raters=8, per_item=3, random_seed=2)
    m = factory()
    data = m.prepare(sim.ratings)
    vl = vb_layout(data)
    trace: list[float] = []
    run = m.vb_run(
        vl, layout_majority_vote(vl), size, rng=np.random.default_rng(0), random_init=True,
        max_iter=300, tol=1e-10, trace=trace,
    )  # fmt: skip
    assert len(trace) > 20
    steps = np.diff(trace)
    assert steps.min() >= -1e-8 * abs(trace[-1]), steps.min()
    assert trace[-1] > trace[0]
    assert np.isfinite(run["loglik"])


@pytest.mark.parametrize(
    ("M", "DG", "K", "floor"), [(1, 1, 2, 1.0), (3, 2, 3, 1.0), (2, 1, 4, 0.0)]
)
def test_compiled_community_update_equals_the_numpy_reference(M, DG, K, floor):
    """optimise_cs (compiled) takes the same Newton steps as optimise_cs_np: the same C,
    s and objective, which no step lowers; rows pressed against the simplex's edge (an
    entry near 0) included."""
    from raterstats.models.latent_class.community_ds_vb import (
        cs_objective,
        optimise_cs,
        optimise_cs_np,
    )

    rng = np.random.default_rng(M * 100 + K)
    for rep in range(5):
        C = rng.dirichlet(np.ones(K), size=(M, DG, K))
        if rep == 0:
            C[..., 0] = 1e-9  # at the edge
            C /= C.sum(-1, keepdims=True)
        W = rng.uniform(0.5, 20.0, (M, DG))
        L = -rng.gamma(2.0, 1.0, (M, DG, K, K)) * W[..., None, None]
        conc = np.ones((K, K)) + np.eye(K) * 2.5 * K
        s0 = float(rng.uniform(1.0, 40.0))
        start = cs_objective(C, s0, W, L, conc, (2.0, 0.1), floor)
        got = optimise_cs(C.copy(), s0, W, L, conc, (2.0, 0.1), floor, sweeps=2)
        ref = optimise_cs_np(C.copy(), s0, W, L, conc, (2.0, 0.1), floor, sweeps=2)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-7, atol=1e-10)
        assert got[1] == pytest.approx(ref[1], rel=1e-8)
        assert got[2] == pytest.approx(ref[2], rel=1e-9, abs=1e-8)  # digamma: 1e-12 apart
        assert got[2] >= start - 1e-9 * abs(start)
        np.testing.assert_allclose(got[0].sum(-1), 1.0)


def test_held_out_rule_is_fixed_by_the_ratings():
    sim = simulate_subtype_crowd(n_items=40, n_raters=6, per_item=3, random_seed=1)
    m = EnhancedBCC()
    data = m.prepare(sim.ratings)
    folds = heldout_folds(data)
    held = np.concatenate([f.rating_index for f in folds])
    assert np.array_equal(np.sort(held), np.arange(data.n_ratings))  # every rating once
    for f in folds:  # a fold's training layout holds none of its held-out ratings
        assert f.train.lay.p_e.size == data.n_ratings - f.rating_index.size
    a, b = m.choose_size(data), m.choose_size(data)
    assert a == b
    size, table = a
    assert size == table["chosen"] and table["sizes"] == [1, 2, 3, 4]
    assert EnhancedBCC(subtypes=2).choose_size(data) == (2, {"rule": "fixed", "chosen": 2})


def test_choose_size_takes_the_smallest_within_one_standard_error():
    rng = np.random.default_rng(0)
    base = rng.normal(-0.7, 0.3, 500)
    scores = {1: base, 2: base + 0.002 + rng.normal(0, 0.3, 500), 3: base + 0.2}
    chosen, table = choose_size([1, 2, 3], lambda m: scores[m])
    assert table["best"] == 3 and chosen == 3  # clearly better: the larger size
    e = rng.normal(0, 0.3, 500)
    close = {1: base, 2: base + 0.001 + e - e.mean()}  # better by 0.5 in all, SE about 7
    assert choose_size([1, 2], lambda m: close[m])[0] == 1  # within noise: the smaller


def test_pivot_permutations_undo_a_relabelling():
    rng = np.random.default_rng(1)
    pivot = rng.random((3, 5))
    perms = np.array([rng.permutation(3) for _ in range(50)])
    feats = np.stack([pivot[np.argsort(p)] for p in perms]) + rng.normal(0, 0.01, (50, 3, 5))
    found = pivot_permutations(feats, pivot)
    # draw s's component perms[s, k] is the pivot's k
    np.testing.assert_array_equal(found, perms)


CD = ("chain", "draw")


@pytest.mark.parametrize("kind", ["cds", "ebcc"])
def test_relabelling_aligns_permuted_chains_and_keeps_the_rest(kind):
    """Two chains that differ only in the order of the components: after relabelling the
    order-dependent variables agree; the order-free ones are untouched."""
    rng = np.random.default_rng(0)
    S, R, K, M = 200, 4, 2, 2
    prev = rng.dirichlet([5, 5], (2, S, 1))
    cell = ("dimension", "design")
    if kind == "cds":
        m = CommunityDawidSkene(communities=M)
        comm = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.6, 0.4], [0.5, 0.5]]])
        c = np.broadcast_to(comm[:, None, None], (2, S, M, 1, 1, K, K)).copy()
        c += rng.normal(0, 0.005, c.shape)
        one = np.array([[0.9, 0.1]] * 2 + [[0.2, 0.8]] * 2)
        mem = np.broadcast_to(one, (2, S, R, M)).copy()
        w = np.full((2, S, M), 0.5)
        c[1], mem[1], w[1] = c[1][:, ::-1], mem[1][..., ::-1], w[1][..., ::-1]
        post = xr.Dataset(
            {
                "community_confusion": ((*CD, "community", *cell, "true", "rated"), c),
                "community_membership": ((*CD, "rater", "community"), mem),
                "community_weight": ((*CD, "community"), w),
                "prevalence": ((*CD, "dimension", "category"), prev),
            }
        )
        order_dependent = "community_confusion"
    else:
        m = EnhancedBCC(subtypes=M)
        sub = np.array([[[0.9, 0.1], [0.3, 0.7]], [[0.2, 0.8], [0.6, 0.4]]])  # (K, M, K)
        shape = (2, S, R, 1, 1, K, M, K)
        s_ = np.broadcast_to(sub, shape).copy() + rng.normal(0, 0.005, shape)
        nu = np.broadcast_to(np.array([[0.7, 0.3], [0.4, 0.6]]), (2, S, 1, K, M)).copy()
        s_[1] = s_[1][..., ::-1, :]
        nu[1] = nu[1][..., ::-1]
        post = xr.Dataset(
            {
                "subtype_confusion": ((*CD, "rater", *cell, "true", "subtype", "rated"), s_),
                "subtype_weight": ((*CD, "dimension", "true", "subtype"), nu),
                "prevalence": ((*CD, "dimension", "category"), prev),
            }
        )
        order_dependent = "subtype_confusion"
    lp = rng.normal(size=(2, S))
    out = m.relabel(post, lp)
    a = out[order_dependent].isel(chain=0).mean("draw")
    b = out[order_dependent].isel(chain=1).mean("draw")
    np.testing.assert_allclose(a, b, atol=0.01)
    xr.testing.assert_equal(out["prevalence"], post["prevalence"])
    assert "draws permuted" in out.attrs["relabelling"]


@pytest.fixture(scope="module")
def em_fits(study):
    r = study.filter(dimension="answers_question")
    return {
        "cds": CommunityDawidSkene(communities=2).fit(r, method="em", random_seed=1),
        "ebcc": EnhancedBCC(subtypes=2).fit(r, method="em", random_seed=1),
    }


@pytest.mark.parametrize("kind", ["cds", "ebcc"])
def test_post_fit_questions_and_a_saved_fit(kind, em_fits, study, tmp_path):
    dt = em_fits[kind]
    post = item_posterior(dt)
    assert post["prob"].dims == ("item", "dimension", "category")
    np.testing.assert_allclose(post["prob"].sum("category"), 1.0)
    summ = rater_summary(dt)
    assert {"confusion_mean", "accuracy_mean", "accuracy_low"} <= set(summ.data_vars)
    assert summ["confusion_mean"].dims == ("rater", "dimension", "design", "true", "rated")
    score_map = {
        d: {str(lv): float(i) for i, lv in enumerate(study.scale_for(d).levels)}
        for d in ["answers_question"]
    }
    draws = model_from_datatree(dt).system_score_draws(
        dt, score="fair_average", score_map=score_map, labels="expected", n_boot=20,
        max_draws=10, rng=np.random.default_rng(1),
    )  # fmt: skip
    assert draws.dims == ("chain", "draw", "dimension", "system")
    ranking = rank_systems(dt, score_map=score_map, n_boot=20, random_seed=1)
    assert set(ranking["system"].values) == set(study.data["system"].unique().to_list())
    path = tmp_path / "fit.nc"
    dt.to_netcdf(path)
    back = xr.open_datatree(path)
    assert model_from_datatree(back) == model_from_datatree(dt)
    xr.testing.assert_identical(item_posterior(dt), item_posterior(back))
    xr.testing.assert_identical(rater_summary(dt), rater_summary(back))
    del back["label_posterior"]  # recomputed from the draws: the same
    np.testing.assert_allclose(item_posterior(back)["prob"], post["prob"], atol=1e-12)


@pytest.mark.parametrize(
    "factory",
    [lambda: CommunityDawidSkene(communities=2), lambda: EnhancedBCC(subtypes=2)],
)
def test_a_short_nuts_fit_is_relabelled_and_carries_its_health(factory, tiny):
    m = factory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run: its health may fail, it must say so
        dt = m.fit(tiny, draws=60, tune=60, chains=2, random_seed=1, progress=False)
    assert dt.posterior.attrs["init"] == "em"
    assert "draws permuted" in dt.posterior.attrs["relabelling"]
    assert dt.attrs["health"] and dt.attrs["health_ok"] in (0, 1)
    assert "label_posterior" in dt.children and "log_likelihood" in dt.children
    size = m.options[m.size_option]
    assert dt.posterior.sizes[m.size_dim] == size
    assert set(reported_variables(dt)) >= {"confusion", "prevalence"}


def test_models_refuse_dimensions_with_different_numbers_of_categories(mixed_k):
    for m in (CommunityDawidSkene(), EnhancedBCC()):
        with pytest.raises(ValueError, match="same number of categories"):
            m.fit(mixed_k, method="em")


def test_size_option_is_checked():
    with pytest.raises(ValueError, match="communities must be 'auto' or a whole number"):
        CommunityDawidSkene(communities=0)
    with pytest.raises(ValueError, match="subtypes must be 'auto' or a whole number"):
        EnhancedBCC(subtypes="two")


@pytest.mark.parametrize("kind", ["cds", "ebcc"])
def test_label_switching_of_the_true_classes_is_reported(kind, em_fits):
    """A two-chain posterior whose second chain is the first with the true classes
    relabelled (confusion rows and the prevalence rolled by one class; the rated
    categories are data and stay): the family's check names it. Each chain repeats its
    one draw (the checks apply to sampled fits, of at least two draws)."""
    dt = em_fits[kind]
    post = dt.posterior.to_dataset().isel(draw=[0, 0]).assign_coords(draw=[0, 1])
    swapped = post.copy()
    for name in ("confusion", "subtype_confusion"):
        if name in post:
            v = post[name]
            swapped[name] = v.roll(true=1, roll_coords=False)
    if "subtype_weight" in post:
        swapped["subtype_weight"] = post["subtype_weight"].roll(true=1, roll_coords=False)
    swapped["prevalence"] = post["prevalence"].roll(category=1, roll_coords=False)
    both = xr.concat([post, swapped.assign_coords(chain=[1])], dim="chain")
    fake = dt.copy()
    fake["posterior"] = xr.DataTree(both)
    del fake["label_posterior"]
    problems = model_from_datatree(fake).convergence_problems(fake)
    assert any("permuted labelling" in p for p in problems), problems
    fake["posterior"] = xr.DataTree(xr.concat([post, post.assign_coords(chain=[1])], "chain"))
    assert model_from_datatree(fake).convergence_problems(fake) == []
