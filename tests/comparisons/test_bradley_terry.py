"""Issue 20: the Bradley-Terry-Davidson model (raterstats.BradleyTerry): the compiled density
equals its NumPy reference and the PyMC model (log density and gradient), MAP recovers the
simulated strengths, binary / tie / graded fits have the documented groups and shapes, and
bad input is refused with a clear message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy.stats import spearmanr

from raterstats import BradleyTerry, read_comparisons
from raterstats.models.base import ModelInputError
from raterstats.models.comparisons.bt_reference import (
    BLOCKS,
    bt_layout,
    log_density,
    prior_constants,
    pymc_block,
    pymc_point,
)
from raterstats.models.comparisons.kernels_bt import KERNEL_SOURCE_SHA256, kernel_source_sha256
from raterstats.ranking import rank_systems
from raterstats.simulate import clinical_qa_study
from raterstats.simulate_comparisons import simulate_comparisons

# (simulator settings, model options) of every outcome family
FAMILIES = {
    "binary": ({}, {}),
    "davidson": ({"ties": True}, {}),
    "symmetric": ({"max_grade": 2}, {}),
    "free": ({"max_grade": 3}, {"cutpoints": "free"}),
}
# the families again with centred strengths (the others run non-centred on these data)
VARIANTS = [(f, False) for f in FAMILIES] + [("davidson", True), ("free", True)]


def _sim(family: str, **kw):
    sim_kw, _ = FAMILIES[family]
    base = {"n_systems": 5, "n_raters": 4, "n_llm_judges": 1, "n_comparisons": 240,
            "n_dimensions": 2}  # fmt: skip
    return simulate_comparisons(**{**base, **sim_kw, **kw, "random_seed": 4})


def _unrecorded_order(comparisons):
    """Forget the shown order of every third judgment (s = 0 in the model)."""
    data = comparisons.data.with_columns(
        pl.when(pl.int_range(pl.len()) % 3 == 0)
        .then(None)
        .otherwise(pl.col("shown_first"))
        .alias("shown_first")
    )
    return comparisons.derive(data, step="forget some shown orders")


def test_kernel_source_hash_is_current():
    assert kernel_source_sha256() == KERNEL_SOURCE_SHA256


@pytest.mark.parametrize(("family", "centred"), VARIANTS)
def test_compiled_density_equals_reference_and_finite_differences(family, centred):
    model = BradleyTerry(**FAMILIES[family][1], centred=centred)
    data = model.prepare(_unrecorded_order(_sim(family).comparisons))
    assert data.mode == family
    assert set(data.obs_s.tolist()) == {-1, 0, 1}
    dens = model.density(data)
    lay, prior = bt_layout(data, centred=centred), prior_constants(model.priors)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = dens.initial_point(rng) + rng.normal(0, 0.5, dens.ndim)
        lp, g = dens.logp_grad(x)
        assert lp == pytest.approx(log_density(x, lay, data, prior), rel=1e-10, abs=1e-9)
        eye = np.eye(dens.ndim) * 1e-6
        num = [
            (log_density(x + e, lay, data, prior) - log_density(x - e, lay, data, prior)) / 2e-6
            for e in eye
        ]
        np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("family", "centred"), VARIANTS)
def test_compiled_density_equals_the_pymc_model(family, centred):
    model = BradleyTerry(**FAMILIES[family][1], centred=centred)
    data = model.prepare(_unrecorded_order(_sim(family).comparisons))
    pm_model = model.build_model(data)
    dens = model.density(data)
    lay = bt_layout(data, centred=centred)
    logp, dlogp = pm_model.compile_logp(), pm_model.compile_dlogp()
    order = [v.name for v in pm_model.value_vars]
    rng = np.random.default_rng(6)
    diffs = []
    for _ in range(3):
        x = dens.initial_point(rng) + rng.normal(0, 0.4, dens.ndim)
        point = pymc_point(x, lay, data)
        assert set(point) == set(order)
        lp, g = dens.logp_grad(x)
        diffs.append(lp - float(logp(point)))
        tg, pos, mine = dlogp(point), 0, np.empty(dens.ndim)
        for name in order:
            n = point[name].size
            mine[lay.block(pymc_block(name))] = tg[pos : pos + n]
            pos += n
        np.testing.assert_allclose(g, mine, rtol=1e-7, atol=1e-7)
    assert np.ptp(diffs) < 1e-7  # the same density up to a constant
    assert next(b for b in BLOCKS if lay.block(b).stop > lay.block(b).start) == "theta_z"


def test_pooled_log_alpha_sum_to_zero_also_with_one_pooled_rater():
    """issue 20: the pooled raters' log alpha sum to zero (P - 1 free coordinates), which
    sets the unit of theta; with one pooled rater its alpha is 1, and the compiled density,
    the reference and the PyMC model still agree."""
    for n_raters, n_judges in ((5, 1), (1, 2)):
        sim = simulate_comparisons(
            n_systems=4, n_raters=n_raters, n_llm_judges=n_judges, n_comparisons=120,
            random_seed=4,
        )  # fmt: skip
        model = BradleyTerry()
        data = model.prepare(sim.comparisons)
        dens, lay = model.density(data), model.layout(data)
        assert lay.block("log_alpha_z").stop - lay.block("log_alpha_z").start == n_raters - 1
        pm_model = model.build_model(data)
        logp = pm_model.compile_logp()
        rng = np.random.default_rng(3)
        diffs = []
        for _ in range(3):
            x = dens.initial_point(rng) + rng.normal(0, 0.5, dens.ndim)
            v = dens.expand(x)
            assert np.log(v["alpha"][data.pooled]).sum() == pytest.approx(0.0, abs=1e-12)
            lp, _ = dens.logp_grad(x)
            ref = log_density(x, lay, data, prior_constants(model.priors))
            assert lp == pytest.approx(ref, rel=1e-10)
            diffs.append(lp - float(logp(pymc_point(x, lay, data))))
        assert np.ptp(diffs) < 1e-7


def test_map_recovers_the_strengths_and_the_llm_position_bias():
    sim = simulate_comparisons(
        n_systems=10, n_raters=15, n_llm_judges=1, n_comparisons=6000, llm_bias=0.8,
        random_seed=11,
    )  # fmt: skip
    model = BradleyTerry()
    assert model.is_centred(model.prepare(sim.comparisons))  # about 1,200 judgments a system
    dt = model.fit(sim.comparisons, method="map", random_seed=1)
    assert bool(dt["sample_stats"]["converged"].item())
    assert dt.attrs["logp_backend"] == "compiled"
    post, truth = dt.posterior, sim.truth
    humans = [r for r in sim.comparisons.raters if r.startswith("r")]
    # the scale of theta is that of the panel's geometric-mean human rater (their log
    # alpha sum to zero in the model): compare strengths in the units of the sample's humans
    est = post["theta"].sel(dimension="d1").values.ravel()
    est = est * np.exp(np.log(post["alpha"].sel(rater=humans).values).mean())
    true = truth["theta"].sel(dimension="d1").values
    true = true * np.exp(np.log(truth["alpha"].sel(rater=humans).values).mean())
    # tolerance: rank correlation >= 0.95, every strength within 0.25 (logits) of the truth
    assert spearmanr(est, true).statistic >= 0.95
    assert np.abs(est - true).max() < 0.25
    # the LLM judge's position bias (0.8; standard error about 0.1 on ~375 judgments)
    assert abs(post["beta"].sel(rater="llm1").item() - 0.8) < 0.35


def test_map_does_not_depend_on_the_centring_chosen_for_nuts():
    """issue 20: with centred=None, MAP takes the mode of the non-centred form (L-BFGS
    converges in far fewer iterations there), whatever form NUTS would sample."""
    sim = simulate_comparisons(n_systems=4, n_raters=6, n_comparisons=400, random_seed=5)
    model = BradleyTerry()
    assert model.is_centred(model.prepare(sim.comparisons))  # 200 judgments a system
    auto = model.fit(sim.comparisons, method="map", random_seed=1, progress=False)
    plain = BradleyTerry(centred=False).fit(
        sim.comparisons, method="map", random_seed=1, progress=False
    )
    assert auto.posterior.attrs["map_form"] == "map_form"
    assert plain.posterior.attrs["map_form"] == "as sampled"
    for name in ("theta", "alpha", "beta", "theta_sd", "alpha_sd"):
        np.testing.assert_allclose(auto.posterior[name], plain.posterior[name], rtol=1e-6)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_fit_groups_and_shapes(family):
    sim = _sim(family, n_comparisons=150)
    model = BradleyTerry(**FAMILIES[family][1])
    dt = model.fit(sim.comparisons, method="map", random_seed=2, posterior_predictive=True)
    n = sim.comparisons.n_judgments
    post = dt.posterior
    assert post["theta"].dims == ("chain", "draw", "dimension", "system")
    assert list(post["alpha"]["rater"].values) == list(sim.comparisons.raters)
    assert ("nu" in post) == (family == "davidson")
    assert ("cutpoints" in post) == (family in ("symmetric", "free"))
    if family in ("symmetric", "free"):
        K = sim.comparisons.max_grade
        cuts = post["cutpoints"].values[0, 0]
        assert cuts.shape == (2, 2 * K) and np.all(np.diff(cuts, axis=1) > 0)
        if family == "symmetric":
            np.testing.assert_allclose(cuts, -cuts[:, ::-1])
    ll = dt["log_likelihood"]["outcome"]
    assert ll.dims == ("chain", "draw", "comparison") and ll.sizes["comparison"] == n
    assert np.all(ll.values < 0)
    pp = dt["posterior_predictive"]["outcome"].values
    K = sim.comparisons.max_grade
    assert pp.shape == (1, 1, n) and set(np.unique(pp)) <= set(range(-K, K + 1))
    if family == "binary":
        assert 0 not in set(np.unique(pp))
    obs = dt["observed_data"]
    assert list(obs["comparison_rater"].values) == sim.comparisons.data["rater"].to_list()
    kinds = dt["constant_data"]["rater_kind"]
    assert kinds.sel(rater="llm1").item() == "llm"
    rs = model.rater_summary(dt, ci_prob=0.9)
    for v in ("alpha_mean", "alpha_low", "beta_sd", "beta_high", "n_comparisons", "pooled"):
        assert v in rs
    assert not bool(rs["pooled"].sel(rater="llm1")) and rs["rater_kind"].sel(rater="llm1") == "llm"
    draws = model.system_score_draws(
        dt, score="", score_map=None, labels="", n_boot=0, max_draws=0, rng=None
    )
    assert draws.dims == ("chain", "draw", "dimension", "system")
    assert draws.attrs["source"] == "Bradley-Terry strength (dimension)"


def test_a_pymc_fallback_fit_for_other_prior_families():
    sim = _sim("davidson", n_comparisons=120)
    model = BradleyTerry(priors={"theta_sd": {"dist": "HalfCauchy", "beta": 1.0}})
    assert not model.has_density(model.prepare(sim.comparisons))
    dt = model.fit(sim.comparisons, method="map", random_seed=1, progress=False)
    assert dt.attrs["logp_backend"] == "pymc"
    assert dt["log_likelihood"]["outcome"].sizes["comparison"] == sim.comparisons.n_judgments


def test_nuts_on_the_compiled_density_and_rank_systems():
    sim = simulate_comparisons(n_systems=4, n_raters=3, n_comparisons=200, random_seed=5)
    dt = BradleyTerry().fit(
        sim.comparisons, draws=100, tune=100, chains=2, random_seed=3, progress=False
    )
    assert dt.attrs["logp_backend"] == "compiled"
    assert dt.posterior.sizes["draw"] == 100 and dt.posterior.sizes["chain"] == 2
    np.testing.assert_allclose(dt.posterior["theta"].sum("system"), 0.0, atol=1e-10)
    ranking = rank_systems(dt)
    assert "p_better" in ranking or "expected_rank" in ranking
    assert ranking["expected_rank"].sizes["system"] == 4


def test_only_human_raters_pool_unless_there_are_none():
    sim = _sim("binary")
    data = BradleyTerry().prepare(sim.comparisons)
    assert data.judges == ("llm1",) and len(data.pooled_raters) == 4
    only = simulate_comparisons(n_raters=0, n_llm_judges=3, n_comparisons=60, random_seed=1)
    d2 = BradleyTerry().prepare(only.comparisons)
    assert d2.judges == () and d2.pooled_raters == ("llm1", "llm2", "llm3")


def test_errors_name_the_problem():
    rankings = simulate_comparisons(kind="rankings", n_comparisons=20).comparisons
    with pytest.raises(ModelInputError, match="PlackettLuce"):
        BradleyTerry().fit(rankings, method="map")
    ties = simulate_comparisons(n_comparisons=300, ties=True, random_seed=2).comparisons
    n_ties = int((ties.data["outcome"] == 0).sum())
    with pytest.raises(ModelInputError, match=f"ties='none' but {n_ties} of 300"):
        BradleyTerry(ties="none").fit(ties, method="map")
    graded = _sim("symmetric").comparisons
    with pytest.raises(ModelInputError, match="middle grade 0"):
        BradleyTerry(ties="davidson").fit(graded, method="map")
    # a system compared on one dimension only: alone on the other, its strength unidentified
    frame = pl.DataFrame(
        {
            "system_a": ["x", "x", "y", "x"],
            "system_b": ["y", "z", "z", "w"],
            "rater": ["r1", "r2", "r1", "r1"],
            "dimension": ["acc", "acc", "acc", "style"],
            "outcome": ["a", "b", "a", "a"],
        }
    )
    comps = read_comparisons(frame)
    with pytest.raises(ModelInputError, match=r"dimension acc: the systems form 2 groups") as e:
        BradleyTerry().fit(comps, method="map")
    assert "dimension style: the systems form 3 groups" in str(e.value)
    with pytest.raises(TypeError, match="not ratings"):
        BradleyTerry().fit(clinical_qa_study(n_questions=4, random_seed=1).ratings, method="map")
    with pytest.raises(ValueError, match="ties must be"):
        BradleyTerry(ties="maybe")
    with pytest.raises(ValueError, match="cutpoints must be"):
        BradleyTerry(cutpoints="loose")


def test_card_front_matter_matches_the_code():
    yaml = pytest.importorskip("yaml", reason="PyYAML reads the cards' front matter")
    folder = Path(__file__).resolve().parents[2] / "models" / "bradley_terry"
    _, head, _ = (folder / "card.md").read_text().split("---", 2)
    fm = yaml.safe_load(head)
    assert fm["model"] == BradleyTerry.name
    assert fm["priors"] == {k: p.to_dict() for k, p in BradleyTerry.default_priors.items()}
    assert fm["options"] == BradleyTerry.default_options
    assert tuple(fm["methods"]) == BradleyTerry.methods
    names: set[str] = set()
    for family, (_, opts) in FAMILIES.items():
        model = BradleyTerry(**opts)
        data = model.prepare(_sim(family).comparisons)
        names |= set(model.density(data).var_shapes) | set(model.build_model(data).named_vars)
    assert set(fm["parameters"]) <= names
    assert set(fm["priors"]) <= set(BradleyTerry.default_priors)
    ref = json.loads((folder / "reference.json").read_text())
    assert ref["settings"]["model"] == BradleyTerry.name
    assert ref["diagnostics"]["divergences"] == 0


def test_nuts_targets_an_acceptance_rate_of_0_9_unless_told_otherwise():
    """issue 20: small panels diverged at nutpie's 0.8; the compiled-density fit targets 0.9
    by default (recorded in the fit) and the caller's target_accept wins."""
    from raterstats.models.comparisons.bradley_terry import TARGET_ACCEPT

    c = simulate_comparisons(n_systems=3, n_raters=3, n_comparisons=60, random_seed=1).comparisons
    short = {"draws": 30, "tune": 30, "chains": 1, "progress": False, "log_likelihood": False}
    dt = BradleyTerry().fit(c, **short)
    assert dt.posterior.attrs["target_accept"] == TARGET_ACCEPT == 0.9
    dt = BradleyTerry().fit(c, target_accept=0.97, **short)
    assert dt.posterior.attrs["target_accept"] == 0.97
