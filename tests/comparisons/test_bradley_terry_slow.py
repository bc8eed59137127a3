"""Issue 20 acceptance for raterstats.BradleyTerry (slow): simulation-based calibration,
coverage of 90% intervals over replicated simulated studies, and a planted position bias
recovered by NUTS on the compiled density."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import chisquare

from raterstats import BradleyTerry, Comparisons
from raterstats.models.comparisons.bt_reference import (
    bt_layout,
    constrained_values,
    replicate_outcomes,
    strength_difference,
)
from raterstats.simulate_comparisons import simulate_comparisons

pytestmark = pytest.mark.slow


def _prior_draw(model: BradleyTerry, data, rng: np.random.Generator) -> np.ndarray:
    """An unconstrained point drawn from the model's (default) prior (in the model's own
    parametrisation of the strengths)."""
    lay = model.layout(data)
    p = model.priors
    x = rng.normal(0.0, 1.0, lay.ndim)  # the standard normal blocks

    def log_half_normal(key: str, n: int) -> np.ndarray:
        return np.log(np.abs(rng.normal(0.0, p[key].param("sigma"), n)))

    x[lay.block("log_theta_sd")] = log_half_normal("theta_sd", lay.n_dim)
    if lay.centred:  # the block holds theta's own zero-sum coordinates
        sd = np.exp(x[lay.block("log_theta_sd")])
        tz = x[lay.block("theta_z")].reshape(lay.n_dim, -1)
        x[lay.block("theta_z")] = (tz * sd[:, None]).ravel()
    x[lay.block("log_alpha_sd")] = log_half_normal("alpha_sd", 1)
    x[lay.block("log_beta_sd")] = log_half_normal("beta_sd", 1)
    for block, key in (
        ("beta_mean", "beta_mean"),
        ("judge_log_alpha", "judge_log_alpha"),
        ("judge_beta", "judge_beta"),
        ("outcome", "nu"),
    ):
        sl = lay.block(block)
        x[sl] = rng.normal(p[key].param("mu"), p[key].param("sigma"), sl.stop - sl.start)
    return x


@pytest.mark.parametrize("centred", [False, True])
def test_simulation_based_calibration(centred):
    """Talts et al. (2018): the rank of each prior draw among (thinned) posterior draws of
    the data simulated from it is uniform. 100 replicates of 50 Davidson judgments of 4
    systems by 3 human raters and 1 LLM judge; NUTS 2 chains x 200 draws (every 4th kept:
    100 draws, ranks 0..100, 5 bins). Threshold: the chi-square p-value of every
    parameter is above 0.001 (about 0.01 over the 11 parameters, Bonferroni). Both forms
    of the strengths (non-centred is what ``centred=None`` picks on these data)."""
    design = simulate_comparisons(
        n_systems=4, n_raters=3, n_llm_judges=1, n_comparisons=50, ties=True, random_seed=8
    ).comparisons
    model = BradleyTerry(ties="davidson", centred=centred)
    data = model.prepare(design)
    assert model.is_centred(data) == centred
    lay = bt_layout(data, centred=centred)
    rng = np.random.default_rng(2024)
    names = ["theta[s1]", "theta[s2]", "theta[s3]", "theta[s4]", "alpha[r1]", "alpha[llm1]",
             "beta[llm1]", "beta_mean", "nu", "theta_sd", "alpha_sd"]  # fmt: skip
    ranks: list[list[int]] = []

    def pick(v: dict) -> np.ndarray:
        r = list(data.raters)
        return np.array(
            [
                *np.asarray(v["theta"])[..., 0, :].T,
                np.asarray(v["alpha"])[..., r.index("r1")],
                np.asarray(v["alpha"])[..., r.index("llm1")],
                np.asarray(v["beta"])[..., r.index("llm1")],
                np.asarray(v["beta_mean"]),
                np.asarray(v["nu"])[..., 0],
                np.asarray(v["theta_sd"])[..., 0],
                np.asarray(v["alpha_sd"]),
            ]
        )

    for rep in range(100):
        x = _prior_draw(model, data, rng)
        truth = constrained_values(x, lay, data)
        u = strength_difference(truth["theta"][None], truth["alpha"][None], truth["beta"][None],
                                data)  # fmt: skip
        y = replicate_outcomes(u, data, rng, nu=truth["nu"][None])[0]
        comps = Comparisons(
            design.data.with_columns(pl.Series("outcome", y.astype(np.int64))),
            kind="pairs",
            max_grade=1,
        )
        dt = model.fit(
            comps, draws=200, tune=300, chains=2, random_seed=rep, progress=False,
            log_likelihood=False,
        )  # fmt: skip
        post = dt.posterior.isel(draw=slice(0, None, 4))
        vals = {k: post[k].values.reshape(-1, *post[k].shape[2:]) for k in post.data_vars}
        draws = pick(vals)  # (parameter, draw)
        ranks.append((draws < pick(truth)[:, None]).sum(axis=1).tolist())
    arr = np.array(ranks)  # (replicate, parameter), ranks 0..100
    bins = np.minimum(arr * 5 // 101, 4)
    pvals = [chisquare(np.bincount(bins[:, k], minlength=5)).pvalue for k in range(len(names))]
    print(dict(zip(names, np.round(pvals, 4), strict=True)))
    assert min(pvals) > 0.001, dict(zip(names, pvals, strict=True))


def test_coverage_of_90_percent_intervals():
    """24 replicated studies (6 systems, 8 human raters and 1 LLM judge, 400 binary
    judgments with a human position bias of 0.2); the 90% equal-tailed intervals of theta,
    alpha and beta, pooled over parameters and replicates, cover the truth 80-97% of the
    time (the truth in the model's units: theta times, alpha over, the geometric mean alpha
    of the human raters, whose log alpha sum to zero in the model)."""
    covered, total = 0, 0
    for rep in range(24):
        sim = simulate_comparisons(
            n_systems=6, n_raters=8, n_llm_judges=1, n_comparisons=400, position_bias=0.2,
            random_seed=100 + rep,
        )  # fmt: skip
        dt = BradleyTerry().fit(
            sim.comparisons, draws=300, tune=300, chains=2, random_seed=rep, progress=False,
            log_likelihood=False,
        )  # fmt: skip
        post = dt.posterior
        humans = [r for r in sim.comparisons.raters if r.startswith("r")]
        gm = float(np.exp(np.log(sim.truth["alpha"].sel(rater=humans)).mean()))
        for name in ("theta", "alpha", "beta"):
            lo = post[name].quantile(0.05, dim=("chain", "draw"))
            hi = post[name].quantile(0.95, dim=("chain", "draw"))
            true = sim.truth[name].sel({d: lo[d] for d in lo.dims})
            true = true * gm if name == "theta" else true / gm if name == "alpha" else true
            inside = (lo <= true) & (true <= hi)
            covered += int(inside.sum())
            total += inside.size
    share = covered / total
    print(f"coverage {share:.3f} over {total} intervals")
    assert 0.80 <= share <= 0.97


def test_planted_position_bias_is_recovered():
    """An LLM judge with position bias 0.8 and a human population with mean bias 0.4:
    the 90% intervals of the judge's beta and of beta_mean cover the truth and exclude 0."""
    sim = simulate_comparisons(
        n_systems=8, n_raters=20, n_llm_judges=1, n_comparisons=3000, position_bias=0.4,
        beta_sd=0.2, llm_bias=0.8, random_seed=21,
    )  # fmt: skip
    dt = BradleyTerry().fit(sim.comparisons, draws=500, chains=4, random_seed=3, progress=False)
    assert int(dt["sample_stats"]["diverging"].sum()) == 0
    post = dt.posterior
    for da, true in ((post["beta"].sel(rater="llm1"), 0.8), (post["beta_mean"], 0.4)):
        lo, hi = (float(da.quantile(q)) for q in (0.05, 0.95))
        print(f"truth {true}: 90% interval [{lo:.3f}, {hi:.3f}]")
        assert lo <= true <= hi and lo > 0
