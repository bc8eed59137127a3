"""Every compiled latent-class kernel against its NumPy reference
(:mod:`raterstats.models.latent_class.reference`) at random points: the pattern likelihood
and its gradient, the draw summaries, the simplex transform, and the likelihood part of
each model's compiled density (value and gradient), for MACE (flat, hierarchical centred,
non-centred and with the rater effects alone centred) and Dawid-Skene (every pooling)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats import MACE, DawidSkene, read_ratings
from raterstats.models.latent_class import callbacks, kernels_density, kernels_em
from raterstats.models.latent_class.dawid_skene_density import ds_packed_fields
from raterstats.models.latent_class.layout import DsFloat, MaceFloat, pack_fields
from raterstats.models.latent_class.mace_density import mace_packed_fields
from raterstats.models.latent_class.mace_em import expected_log_table
from raterstats.models.latent_class.reference import (
    em_accumulate_np,
    em_estep_np,
    logsumexp_np,
    mace_rating_table,
    pattern_log_joint_np,
    simplex_backward_np,
    table_layout,
)
from raterstats.simulate import archehr_like_study


@pytest.fixture(scope="module")
def design_gold():
    """Ratings with a design factor and a gold label, so that every index path counts (the
    tests clamp it: use_gold=True; issue 17 made False the default)."""
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
    return read_ratings(frame, scale=s.ratings.scales)


def _random_table(data, lay, rng, S=None):
    shape = (lay.n_entries,) if S is None else (S, lay.n_entries)
    lead = () if S is None else (S,)
    T = np.log(rng.dirichlet(np.ones(data.K), shape))
    log_prior = np.log(rng.dirichlet(np.ones(data.K), (*lead, len(data.dimensions))))
    return T, log_prior


def test_pattern_loglik_grad_equals_the_reference(design_gold):
    data = MACE(use_gold=True).prepare(design_gold)
    assert data.gold_used
    lay = table_layout(data, data.p_cell)
    rng = np.random.default_rng(0)
    for _ in range(3):
        T, log_prior = _random_table(data, lay, rng)
        GT, GP = np.zeros_like(T), np.zeros_like(log_prior)
        args = (T, log_prior, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, lay.mask)
        lp = kernels_density.pattern_loglik_grad(*args, GT, GP)
        q = np.empty((lay.n_patterns, data.K))
        # value: the E-step's weighted log marginal likelihood; gradient with respect to
        # the table: the expected counts; with respect to the log prior: w q per dimension
        assert lp == pytest.approx(em_estep_np(*args, q), rel=1e-12)
        want_GT = em_accumulate_np(q, lay.p_e, lay.p_start, lay.pattern_w, lay.n_entries)
        np.testing.assert_allclose(GT, want_GT, rtol=1e-12, atol=1e-12)
        want_GP = np.zeros_like(log_prior)
        np.add.at(want_GP, lay.pattern_dim, lay.pattern_w[:, None] * q)
        np.testing.assert_allclose(GP, want_GP, rtol=1e-12, atol=1e-12)


def test_estep_equals_the_pattern_log_joint(design_gold):
    data = MACE(use_gold=True).prepare(design_gold)
    lay = table_layout(data, data.p_cell)
    T, log_prior = _random_table(data, lay, np.random.default_rng(1))
    q = np.empty((lay.n_patterns, data.K))
    args = (T, log_prior, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, lay.mask)
    ll = em_estep_np(*args, q)
    joint = pattern_log_joint_np(T, log_prior, lay)
    lse = logsumexp_np(joint, axis=-1)
    assert ll == pytest.approx(float(np.dot(lay.pattern_w, lse)), rel=1e-12)
    np.testing.assert_allclose(q, np.exp(joint - lse[:, None]), rtol=1e-12, atol=1e-15)


def test_pattern_posterior_draws_equals_the_reference(design_gold):
    data = MACE(use_gold=True).prepare(design_gold)
    lay = table_layout(data, data.p_cell)
    T, log_prior = _random_table(data, lay, np.random.default_rng(2), S=4)
    prob, ll = np.zeros((lay.n_patterns, data.K)), np.empty((4, lay.n_patterns))
    kernels_em.pattern_posterior_draws(
        T, log_prior, lay.p_e, lay.p_start, lay.pattern_dim, lay.mask, prob, ll, True
    )
    joint = pattern_log_joint_np(T, log_prior, lay)
    lse = logsumexp_np(joint, axis=-1)
    np.testing.assert_allclose(ll, lse, rtol=1e-12)
    np.testing.assert_allclose(prob, np.exp(joint - lse[..., None]).sum(axis=0), atol=1e-12)


def test_em_kernels_equal_the_reference(design_gold):
    data = MACE(use_gold=True).prepare(design_gold)
    lay = table_layout(data, data.p_cell)
    T, log_prior = _random_table(data, lay, np.random.default_rng(3))
    args = (T, log_prior, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, lay.mask)
    q1, q2 = np.empty((lay.n_patterns, data.K)), np.empty((lay.n_patterns, data.K))
    assert kernels_em.em_estep(*args, q1) == pytest.approx(em_estep_np(*args, q2), rel=1e-12)
    np.testing.assert_allclose(q1, q2, rtol=1e-12, atol=1e-15)
    M1 = kernels_em.em_accumulate(q1, lay.p_e, lay.p_start, lay.pattern_w, lay.n_entries)
    M2 = em_accumulate_np(q2, lay.p_e, lay.p_start, lay.pattern_w, lay.n_entries)
    np.testing.assert_allclose(M1, M2, rtol=1e-12, atol=1e-15)


def test_simplex_backward_equals_the_reference():
    rng = np.random.default_rng(4)
    for k in (2, 3, 5):
        v = rng.normal(0, 2, k - 1)
        out = np.empty(k)
        kernels_density.simplex_backward(v, k, out)
        np.testing.assert_allclose(out, simplex_backward_np(v), rtol=1e-13)


def test_mace_em_table_is_the_reference_table_at_point_values(design_gold):
    data = MACE(use_gold=True).prepare(design_gold)
    lay = table_layout(data, data.p_cell)
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    rng = np.random.default_rng(5)
    theta = rng.uniform(0.1, 0.9, (R, D, G))
    spam = rng.dirichlet(np.ones(K), (R, D))
    e_rd = (lay.e_row // (D * G)) * D + (lay.e_row // G) % D
    e_valid = data.valid[(lay.e_row // G) % D]
    T, _ = expected_log_table(
        np.log(theta).ravel(), np.log1p(-theta).ravel(), np.log(spam.reshape(R * D, K)),
        lay.e_row, lay.e_code, e_rd, e_valid,
    )  # fmt: skip
    np.testing.assert_allclose(T, mace_rating_table(theta[None], spam[None], lay)[0], rtol=1e-12)


# ---------------------------------------------------------------------- compiled densities

MODELS = [
    ("mace_flat", lambda: MACE(hierarchical=False)),
    ("mace_hier", lambda: MACE(hierarchical=True, centred=False)),
    ("mace_hier_centred", lambda: MACE(hierarchical=True, centred=True)),
    ("mace_hier_raters_centred", lambda: MACE(hierarchical=True, centred="raters")),
    ("unpooled", lambda: DawidSkene()),
    ("pooled", lambda: DawidSkene(pooling="pooled")),
    ("partial_centred", lambda: DawidSkene(pooling="partial", centred=True)),
    ("partial_noncentred", lambda: DawidSkene(pooling="partial", centred=False)),
    ("one_coin", lambda: DawidSkene(pooling="one_coin")),
]


@pytest.mark.parametrize(("label", "factory"), MODELS, ids=[m[0] for m in MODELS])
def test_compiled_likelihood_equals_the_reference(label, factory, design_gold):
    """The compiled density with every pattern weight at zero is the prior alone; the
    difference to the full density is the likelihood, which must equal the NumPy
    reference at the density's constrained values, and whose gradient must equal the
    reference's directional derivatives (central differences)."""
    m = factory()
    m = type(m)(priors=m.priors, **{**m.options, "use_gold": True})  # gold clamps: ask for it
    data = m.prepare(design_gold)
    assert data.gold_used
    dens = m.density(data)
    assert dens is not None
    mace = label.startswith("mace")
    ints, floats = (mace_packed_fields if mace else ds_packed_fields)(m, data)
    weights = MaceFloat.PATTERN_W if mace else DsFloat.PATTERN_W
    entry = callbacks.mace_entry if mace else callbacks.ds_entry
    packed_ints = pack_fields(ints, np.int64)
    prior_only = pack_fields({**floats, weights: np.zeros_like(floats[weights])}, np.float64)
    lay = m.table_layout(data)

    def reference_loglik(x):
        values = dens.expand(x)
        params = {k: np.asarray(values[k])[None] for k in m.param_names}
        lse = logsumexp_np(m.pattern_log_joint(params, data, lay)[0], axis=-1)
        return float(np.dot(data.pattern_count, lse))

    rng = np.random.default_rng(6)
    for _ in range(2):
        x = rng.normal(0, 0.8, dens.ndim)
        lp, g = dens.logp_grad(x)
        g0 = np.empty(dens.ndim)
        lp0 = entry(x, packed_ints, prior_only, g0)
        assert lp - lp0 == pytest.approx(reference_loglik(x), rel=1e-9)
        h = 1e-5
        for _ in range(3):
            v = rng.normal(size=dens.ndim)
            v /= np.linalg.norm(v)
            fd = (reference_loglik(x + h * v) - reference_loglik(x - h * v)) / (2 * h)
            assert float(np.dot(g - g0, v)) == pytest.approx(fd, rel=1e-5, abs=1e-6)
