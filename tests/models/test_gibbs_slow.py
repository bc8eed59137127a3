"""issue 22: simulation-based calibration and interval coverage of the Gibbs sampler
(``fit(method="gibbs")``) of flat MACE and unpooled Dawid-Skene.

Parameters are drawn from each model's default prior, ratings from the model's own
generative story (:meth:`simulate_ratings`), and the truth is ranked among thinned draws.
The statistics are invariant to a relabelling of the classes (competence per rater, the
mean diagonal of each rater's confusion matrix, the largest prevalence), so a chain that
sits in one of the K! symmetric modes is checked fairly.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from raterstats import MACE, DawidSkene, read_ratings
from raterstats.scales import NominalScale

K, N_ITEMS, N_RATERS = 3, 40, 4


def design_frame(codes: np.ndarray | None = None) -> pl.DataFrame:
    item = np.repeat(np.arange(N_ITEMS), N_RATERS)
    rater = np.tile(np.arange(N_RATERS), N_ITEMS)
    codes = np.zeros(item.size, dtype=int) if codes is None else codes
    return pl.DataFrame(
        {
            "item": [f"i{i:03d}" for i in item],
            "rater": [f"r{j}" for j in rater],
            "rating": [str(c) for c in codes],
        }
    )


SCALE = NominalScale([str(k) for k in range(K)])


def prior_draw(model, rng: np.random.Generator) -> dict[str, np.ndarray]:
    prev = rng.dirichlet(np.full(K, float(model.priors["prevalence"].param("a"))))[None, None]
    if isinstance(model, MACE):
        a, b = model.competence_beta()
        comp = rng.beta(a, b, (1, N_RATERS, 1, 1))
        spam = rng.dirichlet(np.full(K, 10.0), (1, N_RATERS, 1))
        return {"competence": comp, "spam": spam, "prevalence": prev}
    data = model.prepare(read_ratings(design_frame(), scale=SCALE))
    conc = model.confusion_conc(data, data.n_cells)
    conf = np.stack([[rng.dirichlet(row) for row in cell] for cell in conc])
    return {"confusion": conf.reshape(1, N_RATERS, 1, 1, K, K), "prevalence": prev}


def simulate(model, rng: np.random.Generator):
    params = prior_draw(model, rng)
    data = model.prepare(read_ratings(design_frame(), scale=SCALE))
    truth = rng.choice(K, size=(1, data.n_units), p=params["prevalence"][0, 0])
    codes = model.simulate_ratings(params, data, truth, rng)[0]
    # data.unit / data.rater index the prepared (sorted) ratings: rebuild the frame in that order
    order = np.lexsort((data.rater, data.unit))
    frame = pl.DataFrame(
        {
            "item": [data.unit_item[u] for u in data.unit[order]],
            "rater": [data.raters[j] for j in data.rater[order]],
            "rating": [str(c) for c in codes[order]],
        }
    )
    return params, read_ratings(frame, scale=SCALE)


def statistics(model, params_or_post) -> dict[str, np.ndarray]:
    """Relabelling-invariant statistics, ``(S, n)`` per name."""
    p = params_or_post
    if isinstance(model, MACE):
        comp = np.asarray(p["competence"]).reshape(-1, N_RATERS)
        out = {"competence": comp}
    else:
        conf = np.asarray(p["confusion"]).reshape(-1, N_RATERS, K, K)
        out = {"mean_diagonal": np.diagonal(conf, axis1=-2, axis2=-1).mean(axis=-1)}
    out["max_prevalence"] = np.asarray(p["prevalence"]).reshape(-1, K).max(axis=-1)[:, None]
    return out


def posterior_arrays(model, dt) -> dict[str, np.ndarray]:
    post = dt.posterior
    return {n: post[n].transpose("chain", "draw", ...).values.reshape(-1, *post[n].shape[2:])
            for n in model.param_names}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    "model", [MACE(hierarchical=False), DawidSkene(confusion_prior="fixed")], ids=["mace", "ds"]
)
def test_gibbs_sbc(model):
    """SBC, 100 replicates: rank of the truth among 99 thinned draws (one chain, 200
    burn-in sweeps, thin 4), chi-square uniformity over 10 bins per statistic, p > 0.001."""
    rng = np.random.default_rng(2022)
    n_rep, n_draws, bins = 100, 99, 10
    ranks: dict[str, list[np.ndarray]] = {}
    for rep in range(n_rep):
        params, ratings = simulate(model, rng)
        dt = model.fit(ratings, method="gibbs", draws=n_draws, tune=200, chains=1, thin=4,
                       random_seed=rep, progress=False, log_likelihood=False)  # fmt: skip
        truth = statistics(model, params)
        draws = statistics(model, posterior_arrays(model, dt))
        for name, t in truth.items():
            ranks.setdefault(name, []).append((draws[name] < t).sum(axis=0))
    for name, rs in ranks.items():
        r = np.stack(rs)  # (n_rep, n)
        for j in range(r.shape[1]):
            counts = np.bincount(r[:, j] * bins // (n_draws + 1), minlength=bins)
            p = stats.chisquare(counts).pvalue
            assert p > 0.001, (name, j, counts.tolist(), p)


@pytest.mark.slow
@pytest.mark.parametrize(
    "model", [MACE(hierarchical=False), DawidSkene(confusion_prior="fixed")], ids=["mace", "ds"]
)
def test_gibbs_coverage(model):
    """Coverage of 90% equal-tailed intervals over 30 simulated studies (4 chains, the
    default burn-in): between 80% and 97% for every statistic pooled over raters."""
    rng = np.random.default_rng(7)
    hits: dict[str, list[np.ndarray]] = {}
    for rep in range(30):
        params, ratings = simulate(model, rng)
        dt = model.fit(ratings, method="gibbs", draws=300, random_seed=rep, progress=False,
                       log_likelihood=False)  # fmt: skip
        truth = statistics(model, params)
        draws = statistics(model, posterior_arrays(model, dt))
        for name, t in truth.items():
            lo, hi = np.quantile(draws[name], [0.05, 0.95], axis=0)
            hits.setdefault(name, []).append((lo <= t[0]) & (t[0] <= hi))
    for name, h in hits.items():
        cov = float(np.mean(np.concatenate(h)))
        assert 0.80 <= cov <= 0.97, (name, cov)
