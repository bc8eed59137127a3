"""EM of MACE and Dawid-Skene: the fused E-step kernel, short-run restarts and the
continuation of a run from its state."""

from __future__ import annotations

import json

import numpy as np
import pytest

from raterstats import MACE, DawidSkene, item_posterior
from raterstats.models.latent_class import kernels_em as nb
from raterstats.models.latent_class.data import prepare_latent_class
from raterstats.models.latent_class.dawid_skene_em import ds_em_run
from raterstats.models.latent_class.mace_em import mace_em_run
from raterstats.models.latent_class.reference import (
    class_counts,
    em_accumulate_np,
    em_estep_accumulate_np,
    em_estep_np,
    table_layout,
)

MODELS = [
    MACE(),
    MACE(hierarchical=False),
    DawidSkene(),
    DawidSkene(pooling="pooled"),
    DawidSkene(pooling="partial"),
    DawidSkene(pooling="one_coin"),
]


def _layout(ratings):
    data = prepare_latent_class(ratings)
    lay = table_layout(data, data.p_cell)
    rng = np.random.default_rng(4)
    T = np.log(rng.dirichlet(np.ones(data.K), lay.n_entries))
    log_prior = np.log(rng.dirichlet(np.ones(data.K), len(data.dimensions)))
    args = (T, log_prior, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w)
    return data, lay, args


def test_fused_estep_matches_separate_kernels(small_archehr):
    data, lay, args = _layout(small_archehr.ratings)
    P, K, E = data.n_patterns, data.K, lay.n_entries
    q1, q2, q3 = np.empty((P, K)), np.empty((P, K)), np.empty((P, K))
    M2, M3 = np.full((E, K), 7.0), np.full((E, K), 7.0)  # overwritten, not added to
    ll1 = nb.em_estep(*args, lay.mask, q1)
    M1 = nb.em_accumulate(q1, lay.p_e, lay.p_start, lay.pattern_w, E)
    ll2 = nb.em_estep_accumulate(*args, lay.mask, q2, M2)
    ll3 = em_estep_accumulate_np(*args, lay.mask, q3, M3)
    assert ll2 == pytest.approx(ll1, rel=1e-12) and ll3 == pytest.approx(ll1, rel=1e-12)
    np.testing.assert_allclose(q2, q1, rtol=1e-12)
    np.testing.assert_allclose(q3, q1, rtol=1e-12)
    np.testing.assert_allclose(M2, M1, rtol=1e-12)
    np.testing.assert_allclose(M3, M1, rtol=1e-12)
    # the NumPy twins agree with the kernels too
    q4 = np.empty((P, K))
    assert em_estep_np(*args, lay.mask, q4) == pytest.approx(ll1, rel=1e-12)
    np.testing.assert_allclose(
        em_accumulate_np(q4, lay.p_e, lay.p_start, lay.pattern_w, E), M1, rtol=1e-12
    )
    # expected counts over all patterns = pattern weight x number of ratings
    np.testing.assert_allclose(M1.sum(), float(np.dot(lay.pattern_w, np.diff(lay.p_start))))


def test_class_counts_one_and_several_dimensions(small_archehr, one_dim):
    for r in (small_archehr.ratings, one_dim):
        d = prepare_latent_class(r)
        q = np.random.default_rng(1).dirichlet(np.ones(d.K), d.n_patterns)
        expect = np.zeros((len(d.dimensions), d.K))
        np.add.at(expect, d.pattern_dim, d.pattern_count[:, None] * q)
        np.testing.assert_allclose(class_counts(d, q), expect, rtol=1e-12)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.name}-{m.spec()['options']}")
def test_continued_run_equals_one_long_run(model, small_archehr):
    """A run stopped after 4 iterations and continued from its state gives exactly the
    estimates of an uninterrupted run (what the short-runs restarts rely on)."""
    data = model.prepare(small_archehr.ratings)
    em = mace_em_run if isinstance(model, MACE) else ds_em_run
    kw = {"variational": isinstance(model, MACE), "tol": 0.0, "random_init": False}
    rng = np.random.default_rng(1)
    full = em(model, data, rng=rng, max_iter=12, **kw)
    part = em(model, data, rng=rng, max_iter=4, finish=False, **kw)
    assert part["n_iter"] == 4 and "values" not in part
    cont = em(model, data, rng=rng, max_iter=12, state=part["state"], **kw)
    assert cont["n_iter"] == full["n_iter"] == 12
    assert cont["loglik"] == pytest.approx(full["loglik"], rel=1e-12)
    for k, v in full["values"].items():
        np.testing.assert_allclose(cont["values"][k], v, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.name}-{m.spec()['options']}")
def test_short_run_restarts_match_full_restarts(model, small_archehr):
    r = small_archehr.ratings
    short = model.fit(r, method="em", random_seed=1)
    full = model.fit(r, method="em", random_seed=1, short_iter=500)
    restarts = short["sample_stats"].attrs["restart_loglik"]
    assert len(json.loads(restarts)) == 5
    lab_s, lab_f = item_posterior(short)["map_code"], item_posterior(full)["map_code"]
    assert float((lab_s == lab_f).mean()) > 0.99
    lp_s, lp_f = (float(d.sample_stats["lp"].values.item()) for d in (short, full))
    assert lp_s >= lp_f - 1.0
    for name in ("prevalence",):
        np.testing.assert_allclose(
            short.posterior[name].values, full.posterior[name].values, atol=0.02
        )


def test_short_iter_must_be_positive(one_dim):
    for m in (MACE(), DawidSkene()):
        with pytest.raises(ValueError, match="short_iter"):
            m.fit(one_dim, method="em", short_iter=0)


@pytest.mark.parametrize("model", [MACE(), DawidSkene()], ids=lambda m: m.name)
@pytest.mark.parametrize(
    ("kw", "message"),
    [({"restarts": 0}, "restarts must be at least 1"), ({"short_iter": 0}, "short_iter must be")],
)
def test_em_restart_options_are_checked(model, kw, message, one_dim):
    with pytest.raises(ValueError, match=message):
        model.fit(one_dim, method="em", random_seed=1, **kw)
