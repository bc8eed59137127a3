"""issue 20: the Plackett-Luce model of per-question rankings with rater reliability.

The compiled density (numba, and its C callback) equals the NumPy reference and the PyMC
model's log density and gradient at random points; ties (Breslow, Efron) and partial
rankings against a hand-computed case; MAP recovers the strengths of a simulated study;
bad input gets clear errors; a short NUTS fit stores every group the other functions read.
"""

from __future__ import annotations

import ctypes
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from raterstats import Comparisons, PlackettLuce, rank_systems, rater_summary
from raterstats.comparisons import RANKING_COLUMNS
from raterstats.models import ModelInputError
from raterstats.models.comparisons import kernels_pl as K
from raterstats.models.comparisons import pl_reference as ref
from raterstats.models.comparisons.rankings_data import prepare_rankings, with_ranks
from raterstats.simulate import archehr_like_study
from raterstats.simulate_comparisons import simulate_comparisons

yaml = pytest.importorskip("yaml")

CARD = Path(__file__).resolve().parents[2] / "models" / "plackett_luce" / "card.md"


@pytest.fixture(scope="module")
def tied_data():
    """Two dimensions, an LLM judge, rankings of 4 of 5 systems with ties put in at
    random (ranks drawn from 1..3, so some rankings are partial orders with gaps)."""
    c = simulate_comparisons(
        kind="rankings",
        n_systems=5,
        n_raters=4,
        n_llm_judges=1,
        n_comparisons=30,
        ranking_size=4,
        n_dimensions=2,
        random_seed=3,
    ).comparisons
    rng = np.random.default_rng(1)
    out = {}
    for ties in ("breslow", "efron"):
        d = prepare_rankings(c, ties=ties)
        out[ties] = with_ranks(d, np.ceil(rng.random(d.n_entries) * 3))
    return out


def small_rankings(rows: list[tuple[str, str, str, float]]) -> Comparisons:
    """Rankings from (ranking, rater, system, rank) rows, one question and dimension."""
    frame = pl.DataFrame(
        {
            "ranking": [r[0] for r in rows],
            "question": ["q1"] * len(rows),
            "rater": [r[1] for r in rows],
            "rater_kind": ["human"] * len(rows),
            "dimension": ["overall"] * len(rows),
            "system": [r[2] for r in rows],
            "rank": [r[3] for r in rows],
            "source_row": list(range(1, len(rows) + 1)),
        }
    ).select(RANKING_COLUMNS)
    return Comparisons(frame, kind="rankings")


@pytest.mark.parametrize("ties", ["breslow", "efron"])
@pytest.mark.parametrize("centred", [False, True])
def test_compiled_density_equals_the_reference_with_its_gradient(tied_data, ties, centred):
    d = tied_data[ties]
    pri = ref.PriorParams(1.3, 0.7, 0.2, 1.1, centred_theta=centred, centred_alpha=centred)
    ints, floats = K.pack_data(d, pri)
    n = ref.n_unconstrained(d)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.normal(0.0, 0.7, n)
        g = np.empty(n)
        lp = K.pl_entry(x, ints, floats, g)
        assert lp == pytest.approx(ref.log_density(x, d, pri), rel=1e-12, abs=1e-9)
        eps = 1e-6
        num = [
            (ref.log_density(x + eps * e, d, pri) - ref.log_density(x - eps * e, d, pri))
            / (2 * eps)
            for e in np.eye(n)
        ]
        np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-6)
        # the C callback nutpie calls, through its user-data buffer
        from raterstats.nutpie_callbacks import callback_buffer

        buf = callback_buffer(ints, floats)
        out, lp_c = np.empty(n), np.empty(1)
        dbl = ctypes.POINTER(ctypes.c_double)
        code = K.pl_logp_cb.ctypes(
            n,
            x.ctypes.data_as(dbl),
            out.ctypes.data_as(dbl),
            lp_c.ctypes.data_as(dbl),
            buf.ctypes.data_as(ctypes.c_void_p),
        )
        assert code == 0 and lp_c[0] == lp and np.array_equal(out, g)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
@pytest.mark.parametrize("centred", [False, True])
def test_compiled_density_equals_the_pymc_model(tied_data, ties, centred):
    d = tied_data[ties]
    model = PlackettLuce(ties=ties, centred=centred)
    dens = model.density(d)
    pm_model = model.build_model(d)
    logp = pm_model.compile_logp()
    dlogp = pm_model.compile_dlogp()
    b = ref.block_slices(d)
    D, M = len(d.dimensions), len(d.systems)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.normal(0.0, 0.6, dens.ndim)
        point = {
            "sigma_theta_log__": x[b["log_sigma_theta"]],
            ("theta_free" if centred else "theta_z"): x[b["theta_free"]].reshape(D, M - 1),
            "sigma_log_alpha_log__": x[b["log_sigma_log_alpha"]][0],
            ("log_alpha_pooled" if centred else "log_alpha_z"): x[b["log_alpha_free"]],
            "judge_log_alpha": x[b["judge_log_alpha"]],
        }
        lp, g = dens.logp_grad(x)
        assert lp == pytest.approx(float(logp(point)), rel=1e-9)
        grads = dict(
            zip(
                [v.name for v in pm_model.value_vars],
                np.split(
                    dlogp(point), np.cumsum([point[v.name].size for v in pm_model.value_vars])
                ),
                strict=False,
            )
        )
        for name, block in (
            ("sigma_theta_log__", "log_sigma_theta"),
            ("theta_free" if centred else "theta_z", "theta_free"),
            ("sigma_log_alpha_log__", "log_sigma_log_alpha"),
            ("log_alpha_pooled" if centred else "log_alpha_z", "log_alpha_free"),
            ("judge_log_alpha", "judge_log_alpha"),
        ):
            np.testing.assert_allclose(grads[name], g[b[block]], rtol=1e-7, atol=1e-8)


def test_ties_and_partial_rankings_by_hand():
    # one rater ranks A first, B and C tied second; D is not listed (partial ranking)
    c = small_rankings([("k1", "r1", "A", 1), ("k1", "r1", "B", 2), ("k1", "r1", "C", 2)])
    theta = np.array([[1.0, 0.0, -1.5, 0.5]])  # A, B, C, D (D must not enter)
    alpha = np.array([2.0])
    eA, eB, eC = math.exp(2.0), math.exp(0.0), math.exp(-3.0)
    breslow = 2.0 - math.log(eA + eB + eC) + (0.0 - 3.0) - 2 * math.log(eB + eC)
    efron = (
        2.0
        - math.log(eA + eB + eC)
        + (0.0 - 3.0)
        - math.log(eB + eC)
        - math.log(eB + eC - 0.5 * (eB + eC))
    )
    c4 = c.data.vstack(
        small_rankings([("k2", "r1", "D", 1), ("k2", "r1", "A", 2)]).data
    )  # D enters the system ids
    comps = Comparisons(c4, kind="rankings")
    for ties, want in (("breslow", breslow), ("efron", efron)):
        d = prepare_rankings(comps, ties=ties)
        assert d.systems == ("A", "B", "C", "D")
        ll = ref.ranking_log_likelihood(theta, alpha, d)
        assert ll[0] == pytest.approx(want, rel=1e-12)
        assert ll[1] == pytest.approx(1.0 - math.log(math.exp(1.0) + eA), rel=1e-12)
        fast = K.loglik_draws(
            theta[None], alpha[None], d.efron, d.rk_start, d.rk_gstart, d.g_start,
            d.rk_dim, d.rk_rater, d.entry_system,
        )  # fmt: skip
        np.testing.assert_allclose(fast[0], ll, rtol=1e-12)
    # without ties both are the Plackett-Luce probability of the order
    d = prepare_rankings(small_rankings([("k1", "r1", "A", 1), ("k1", "r1", "C", 2)]))
    t2 = np.array([[1.0, -1.0]])
    assert ref.ranking_log_likelihood(t2, np.array([1.0]), d)[0] == pytest.approx(
        1.0 - math.log(math.e + math.exp(-1.0))
    )


def test_map_does_not_depend_on_the_centring_chosen_for_nuts():
    """issue 20: with centred=None, MAP takes the mode of the non-centred form, whatever
    form NUTS would sample."""
    sim = simulate_comparisons(
        kind="rankings", n_systems=4, n_raters=6, n_comparisons=400, random_seed=5
    )
    model = PlackettLuce()
    assert model.is_centred(model.prepare(sim.comparisons)) == (True, True)
    auto = model.fit(sim.comparisons, method="map", random_seed=1, progress=False)
    plain = PlackettLuce(centred=False).fit(
        sim.comparisons, method="map", random_seed=1, progress=False
    )
    assert auto.posterior.attrs["map_form"] == "map_form"
    for name in ("theta", "alpha", "sigma_theta", "sigma_log_alpha"):
        np.testing.assert_allclose(auto.posterior[name], plain.posterior[name], rtol=1e-6)


def test_map_recovers_the_strengths():
    """MAP on 1,500 rankings of 4 of 8 systems by 25 raters: every strength within 0.25 of
    the truth (posterior sd here is about 0.08) and the true order recovered."""
    sim = simulate_comparisons(
        kind="rankings", n_systems=8, n_raters=25, n_comparisons=1500, random_seed=11
    )
    dt = PlackettLuce().fit(sim.comparisons, method="map", random_seed=1)
    assert dt.attrs["logp_backend"] == "compiled"
    est = dt.posterior["theta"].isel(chain=0, draw=0)
    truth = sim.truth["theta"].sel(system=est["system"])
    assert float(abs(est - truth).max()) < 0.25
    assert (est.argsort().values == truth.argsort().values).all()
    alpha = dt.posterior["alpha"].isel(chain=0, draw=0)
    corr = np.corrcoef(np.log(alpha), np.log(sim.truth["alpha"].sel(rater=alpha["rater"])))
    assert corr[0, 1] > 0.5


def test_bad_input_gets_clear_errors():
    pairs = simulate_comparisons(n_systems=4, n_comparisons=20, random_seed=1).comparisons
    with pytest.raises(ModelInputError, match="BradleyTerry"):
        PlackettLuce().fit(pairs, method="map")
    ratings = archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings
    with pytest.raises(ModelInputError, match="read_comparisons"):
        PlackettLuce().fit(ratings, method="map")
    with pytest.raises(ValueError, match="ties must be one of"):
        PlackettLuce(ties="davidson")
    with pytest.raises(ValueError, match="centred must be"):
        PlackettLuce(centred="yes")
    with pytest.raises(TypeError, match="unknown option"):
        PlackettLuce(tie="efron")
    two_raters = small_rankings(
        [("k1", "r1", "A", 1), ("k1", "r2", "B", 2), ("k2", "r1", "A", 1), ("k2", "r1", "B", 2)]
    )
    with pytest.raises(ModelInputError, match="more than one rater"):
        PlackettLuce().fit(two_raters, method="map")
    apart = small_rankings(
        [("k1", "r1", "A", 1), ("k1", "r1", "B", 2), ("k2", "r1", "C", 1), ("k2", "r1", "D", 2)]
    )
    with pytest.warns(UserWarning, match="2 group"):
        PlackettLuce().prepare(apart)


def test_a_short_nuts_fit_stores_what_the_other_functions_read():
    sim = simulate_comparisons(
        kind="rankings", n_systems=5, n_raters=6, n_llm_judges=1, n_comparisons=150,
        ranking_size=3, n_dimensions=2, random_seed=4,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 x 100 draws do not pass the ESS check
        dt = PlackettLuce().fit(
            sim.comparisons, draws=100, tune=150, chains=2, random_seed=3, progress=False,
            posterior_predictive=True,
        )  # fmt: skip
    assert dt.attrs["logp_backend"] == "compiled"
    assert dt["posterior"].attrs["adaptation"] == "diag"
    ll = dt["log_likelihood"]["rankings"]
    assert ll.dims == ("chain", "draw", "ranking") and ll.sizes["ranking"] == 300
    assert bool((ll < 0).all())
    pp = dt["posterior_predictive"]["rank"]
    obs = dt["observed_data"]
    rk = obs["entry_ranking"].values
    draw = pp.isel(chain=0, draw=0).values
    for r in np.unique(rk)[:20]:
        assert sorted(draw[rk == r].tolist()) == [1.0, 2.0, 3.0]
    summ = rater_summary(dt, ci_prob=0.9)
    assert set(summ["rater_kind"].values) == {"human", "llm"}
    assert not bool(summ["pooled"].sel(rater="llm1"))
    assert bool((summ["alpha_low"] <= summ["alpha_high"]).all())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranking = rank_systems(dt)
    assert set(ranking["system"].values) == set(sim.comparisons.systems)
    draws = PlackettLuce().system_score_draws(
        dt, score="", score_map=None, labels="", n_boot=0, max_draws=0,
        rng=np.random.default_rng(0),
    )  # fmt: skip
    assert draws.dims == ("chain", "draw", "dimension", "system")
    assert draws.attrs["source"] == "Plackett-Luce strength"


def test_kernel_sources_unchanged():
    """A changed nutpie_callbacks.py must update KERNEL_SOURCE_SHA256 (numba's cache of the
    callback would not notice the change)."""
    assert K.kernel_source_sha256() == K.KERNEL_SOURCE_SHA256


def test_card_front_matter_matches_the_code():
    _, head, _ = CARD.read_text().split("---", 2)
    fm = yaml.safe_load(head)
    assert fm["model"] == PlackettLuce.name
    assert fm["class"] == "raterstats.PlackettLuce"
    assert fm["priors"] == {k: p.to_dict() for k, p in PlackettLuce.default_priors.items()}
    assert fm["options"] == PlackettLuce.default_options
    assert tuple(fm["methods"]) == PlackettLuce.methods
    sim = simulate_comparisons(kind="rankings", n_llm_judges=1, n_comparisons=40)
    seen: set[str] = set()
    for centred in (False, True):
        m = PlackettLuce(centred=centred)
        seen |= set(m.density(m.prepare(sim.comparisons)).var_shapes)
    assert set(fm["parameters"]) == seen
    assert (CARD.parent / "reference.json").exists()
