"""issue 22: the Gibbs (data-augmentation) sampler of flat MACE and unpooled Dawid-Skene
(``fit(method="gibbs")``): same variables as the NUTS fit, agreement with NUTS on small
data, honest diagnostics (no divergences), clear errors for what it does not fit."""

from __future__ import annotations

import numpy as np
import pytest

from raterstats import MACE, DawidSkene, diagnose
from raterstats.simulate import archehr_like_study


@pytest.fixture(scope="module")
def ratings():
    return archehr_like_study(n_cases=12, n_systems=4, random_seed=5).ratings


def _interval(dt, name):
    v = dt.posterior[name]
    return v.quantile([0.05, 0.95], dim=("chain", "draw")).values


@pytest.mark.parametrize("model", [MACE(hierarchical=False), DawidSkene()], ids=["mace", "ds"])
def test_gibbs_agrees_with_nuts(model, ratings):
    """Posterior means and 90% intervals of the Gibbs fit agree with NUTS (nutpie, compiled
    density) on the same data within Monte Carlo error; same variables, dims, coordinates
    and groups."""
    g = model.fit(ratings, method="gibbs", draws=1000, tune=300, random_seed=1, progress=False)
    n = model.fit(ratings, draws=1000, tune=500, random_seed=1, progress=False)
    assert set(g.posterior.data_vars) == set(n.posterior.data_vars)
    for v in n.posterior.data_vars:
        assert g.posterior[v].dims == n.posterior[v].dims
        for d in n.posterior[v].dims[2:]:
            assert list(g.posterior[d].values) == list(n.posterior[d].values)
    assert {"label_posterior", "log_likelihood", "observed_data", "constant_data"} <= set(
        g.children
    )
    assert g["log_likelihood"]["ratings"].shape == n["log_likelihood"]["ratings"].shape
    assert g.attrs["method"] == "gibbs" and g.attrs["sampler"] == "gibbs"
    assert g.posterior.attrs["sampling_time"] > 0
    for v in model.param_names:
        a, b = g.posterior[v], n.posterior[v]
        # Monte Carlo error of a mean with ESS >= 400 per fit: sd / 20; allow 5 of them
        sd = np.maximum(b.std(("chain", "draw")).values, 1e-3)
        diff = np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values)
        assert np.all(diff <= 5 * sd / 20 * np.sqrt(2) + 1e-3), (v, float(np.max(diff / sd)))
        ia, ib = _interval(g, v), _interval(n, v)
        assert np.all(np.abs(ia - ib) <= 0.5 * sd + 0.01), v
    pa = g["label_posterior"]["prob"].values
    pb = n["label_posterior"]["prob"].values
    assert np.max(np.abs(pa - pb)) < 0.08
    # the sampler computes the per-unit log-likelihood itself: the same as the NumPy path
    ll = model.log_likelihood(g.drop_nodes("log_likelihood"), model.prepare(ratings), None)
    np.testing.assert_allclose(ll["ratings"].values, g["log_likelihood"]["ratings"].values)


def test_gibbs_diagnostics_say_not_applicable(ratings):
    """A Gibbs fit is checked by R-hat and ESS; divergences and tree depth read 'not
    applicable', never 0."""
    dt = DawidSkene().fit(ratings, method="gibbs", draws=400, tune=100, random_seed=2,
                          progress=False)  # fmt: skip
    d = diagnose(dt, warn=False)
    assert d.divergences is None and d.max_treedepth_hits is None
    assert d.parameters.height > 0
    assert "not applicable (Gibbs sampler)" in str(d)
    assert dt.attrs["health"].startswith("Gibbs (4 chain(s) x 400 draws)")
    assert "divergences not applicable" in dt.attrs["health"] or not dt.attrs["health_ok"]
    assert dt.attrs["draws"] == 400 and dt.attrs["tune"] == 100 and dt.attrs["chains"] == 4


def test_gibbs_deterministic_and_thin(ratings):
    """The same seed gives the same draws (chains in threads); thin keeps every k-th."""
    kw = {"method": "gibbs", "draws": 50, "tune": 10, "random_seed": 3, "progress": False,
          "log_likelihood": False}  # fmt: skip
    a = MACE(hierarchical=False).fit(ratings, **kw)
    b = MACE(hierarchical=False).fit(ratings, cores=1, **kw)
    np.testing.assert_array_equal(
        a.posterior["competence"].values, b.posterior["competence"].values
    )
    c = MACE(hierarchical=False).fit(ratings, thin=3, **kw)
    assert c.posterior.sizes["draw"] == 50 and c.posterior.attrs["sweeps_per_chain"] == 160
    assert "log_likelihood" not in a.children


def test_gibbs_errors(ratings):
    """Configurations without conjugate full conditionals raise a ValueError that names
    the option and what to use instead; a Gibbs option with NUTS is refused."""
    s = archehr_like_study(n_cases=3, n_systems=3, random_seed=1)
    with pytest.raises(ValueError, match=r"hierarchical=False.*method='nuts'"):
        MACE().fit(s.ratings, method="gibbs")
    with pytest.raises(ValueError, match=r"pooling='partial'.*method='nuts'"):
        DawidSkene(pooling="partial").fit(ratings, method="gibbs")
    with pytest.raises(ValueError, match="thin"):
        DawidSkene().fit(ratings, method="nuts", thin=2)
    with pytest.raises(ValueError, match="thin must be"):
        DawidSkene().fit(ratings, method="gibbs", thin=0)
