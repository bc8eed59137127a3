"""The compiled kernels of OrdinalRaters against the NumPy reference, on several data shapes.

The numba log density and its hand-written gradient (``kernels.ordinal_logp_grad``) must
equal the NumPy reference ``reference.log_density`` and its derivatives (central
differences, Richardson-extrapolated, along random directions within every block of the
unconstrained vector); the compiled rating log-likelihood must equal the NumPy one. The
layout's named positions are checked against the arrays the kernel reads.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from raterstats.models.ordinal import (
    VARIABLE_DIMS,
    Block,
    OrdinalLayout,
    OrdinalRaters,
    PriorConst,
    Setting,
    constrained_values,
    log_density,
    summed_log_likelihood,
)
from raterstats.models.ordinal import layout as layout_module
from raterstats.models.ordinal.kernels import (
    LAYOUT_SOURCE_SHA256,
    zero_sum_adjoint,
    zero_sum_extend,
)
from raterstats.models.ordinal.layout import HIGH_AGREEMENT_UNIT
from raterstats.models.zerosum import zero_sum_extend_np
from raterstats.ratings import Ratings
from raterstats.simulate import clinical_qa_study, high_agreement_study


@pytest.fixture(scope="module")
def tiny():
    return clinical_qa_study(n_questions=4, random_seed=11).ratings


def _drop(r, *cols):
    return Ratings(r.data.drop(*cols), r.scales)


# (model options, ratings) per data shape: systems, questions, sentences, length, judges
SHAPES = {
    "full": ({}, lambda r: r),
    "length_by_rater": ({"length_by_rater": True}, lambda r: r),
    "centred": ({"centred": True, "length_by_rater": True}, lambda r: r),
    "non_centred": ({"centred": False}, lambda r: r),
    "latent_centred": ({"centred_latent": True}, lambda r: r),
    "latent_non_centred": ({"centred_latent": False, "centred": True}, lambda r: r),
    "coarse_no_length": ({}, lambda r: _drop(r.filter(design="coarse"), "length")),
    "no_system_no_question": ({}, lambda r: _drop(r, "system", "question")),
    "fine_only": ({}, lambda r: r.filter(design="fine")),
    "humans_only": ({}, lambda r: r.filter(rater_kind="human")),
    "plain_coordinates": ({"scale_coordinate": False}, lambda r: r),
    # issue 19: priors stated in latent units, one for all dimensions or one per dimension
    "unit_2_5": ({"latent_unit": 2.5, "length_by_rater": True}, lambda r: r),
    "units_by_dimension": (
        {"centred_latent": True},
        lambda r: high_agreement_study(n_questions=3, n_systems=4, random_seed=2).ratings,
    ),
    # high agreement at the defaults: question effects centred, residuals not
    "question_centred": (
        {},
        lambda r: high_agreement_study(n_questions=3, n_systems=4, random_seed=2).ratings,
    ),
}


@pytest.fixture(scope="module", params=list(SHAPES))
def shape(request, tiny):
    options, make = SHAPES[request.param]
    model = OrdinalRaters(**options)
    data = model.prepare(make(tiny))
    return model, data, model.layout(data), model.density(data)


def _points(dens, n, seed):
    rng = np.random.default_rng(seed)
    return [dens.initial_point(rng) + rng.normal(0, 0.4, dens.ndim) for _ in range(n)]


def test_shapes_cover_the_model(shape):
    _, _, lay, dens = shape
    assert lay.ndim == dens.ndim
    assert sum(lay.block_sizes.values()) == lay.ndim


def test_the_latent_scale_coordinate_maps_back_and_forth(shape):
    """issue 19: the sampler's vector (one latent-scale coordinate per dimension) and the
    standard one are one-to-one; the kernel's map equals the NumPy reference's."""
    from raterstats.models.ordinal.kernels_scale import to_standard
    from raterstats.models.ordinal.reference import sampler_vector, standard_vector

    _, _, lay, dens = shape
    for x in _points(dens, 2, 3):
        xs, logjac = standard_vector(x, lay)
        np.testing.assert_allclose(sampler_vector(xs, lay), x, rtol=1e-12, atol=1e-12)
        out = np.empty_like(x)
        lj = to_standard(x, lay.offsets, lay.settings, lay.prior, out)
        assert lj == pytest.approx(logjac, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(out, xs, rtol=1e-12, atol=1e-12)
    active = lay.scale_coordinate and lay.n_levels >= 3
    high = lay.units >= HIGH_AGREEMENT_UNIT
    assert lay.scale_plan["ell"].size == (int(high.sum()) if active else 0)
    if lay.n_system == 4:  # the high-agreement shapes (see SHAPES)
        assert high.all() and lay.question_centred and lay.scale_plan["ell"].size == 2


def test_the_shapes_cover_latent_units_other_than_one(tiny):
    for name in ("unit_2_5", "units_by_dimension"):
        options, make = SHAPES[name]
        model = OrdinalRaters(**options)
        units = model.layout(model.prepare(make(tiny))).units
        assert (units > 1.5).all(), (name, units)
    units = OrdinalRaters().latent_units(
        OrdinalRaters().prepare(SHAPES["units_by_dimension"][1](tiny))
    )
    assert np.ptp(units) > 1.0  # a unit per dimension


def test_kernel_log_density_equals_the_reference(shape):
    _, data, lay, dens = shape
    for x in _points(dens, 3, 1):
        lp, _ = dens.logp_grad(x)
        assert lp == pytest.approx(log_density(x, lay, data), rel=1e-10, abs=1e-9)


def _directional(f, x, v, h=1e-4):
    """d/dt f(x + t v) at 0: central differences at h and h / 2, Richardson-extrapolated."""

    def central(e):
        return (f(x + e * v) - f(x - e * v)) / (2 * e)

    return (4 * central(h / 2) - central(h)) / 3


def test_kernel_gradient_equals_the_reference_derivatives(shape):
    _, data, lay, dens = shape
    rng = np.random.default_rng(2)

    def f(x):
        return log_density(x, lay, data)

    for x in _points(dens, 2, 3):
        _, grad = dens.logp_grad(x)
        directions = []
        for b in Block:  # one random direction within every non-empty block
            sl = lay.block(b)
            if sl.stop > sl.start:
                v = np.zeros(lay.ndim)
                v[sl] = rng.normal(size=sl.stop - sl.start)
                directions.append((b.name, v / np.linalg.norm(v)))
        full = rng.normal(size=lay.ndim)
        directions.append(("all", full / np.linalg.norm(full)))
        for name, v in directions:
            want = _directional(f, x, v)
            assert grad @ v == pytest.approx(want, rel=1e-7, abs=1e-7), name


def test_compiled_log_likelihood_equals_the_reference(shape):
    _, data, lay, dens = shape
    vals = [constrained_values(x, lay, data) for x in _points(dens, 3, 4)]
    post = xr.Dataset(
        {
            k: (("chain", "draw", *VARIABLE_DIMS[k]), np.stack([v[k] for v in vals])[None])
            for k in vals[0]
        }
    )
    ng = lay.n_design
    for key, n_out in (
        (np.arange(data.n_obs), data.n_obs),
        (data.obs_item * ng + data.obs_design, lay.n_item * ng),
    ):
        fast = summed_log_likelihood(post, data, "logit", key, n_out)
        ref = summed_log_likelihood(post, data, "logit", key, n_out, compiled=False)
        assert fast.shape == (1, 3, n_out)
        # the kernel takes F(hi) - F(lo) directly down to 1e-8 (relative error up to
        # 1e-16 / 1e-8): reached by the wide latent scales of the high-agreement shape
        np.testing.assert_allclose(fast, ref, rtol=5e-8, atol=1e-12)


def test_density_expands_to_the_reference_values(shape):
    _, data, lay, dens = shape
    x = _points(dens, 1, 5)[0]
    got, want = dens.expand(x), constrained_values(x, lay, data)
    assert got.keys() == want.keys() == dens.var_shapes.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
        assert np.shape(want[k]) == tuple(dens.var_shapes[k])


def test_zero_sum_kernels_equal_the_numpy_map():
    rng = np.random.default_rng(6)
    for n, width in ((2, 1), (5, 3), (9, 2)):
        y = rng.normal(size=(n - 1, width))
        out = np.empty((n, width))
        zero_sum_extend(y.reshape(-1), n, width, out)
        np.testing.assert_allclose(out, zero_sum_extend_np(y), rtol=1e-13, atol=1e-14)
        # the adjoint: the gradient of <g, extend(y)> with respect to y is J^T g
        g = rng.normal(size=(n, width))
        grad = np.zeros((n - 1) * width + 2)
        zero_sum_adjoint(g, n, width, grad, 2)
        jac = np.stack(
            [zero_sum_extend_np(e.reshape(n - 1, width)).ravel() for e in np.eye((n - 1) * width)]
        )
        np.testing.assert_allclose(grad[2:], jac @ g.ravel(), rtol=1e-12, atol=1e-13)


def test_layout_positions_are_named_once(tiny):
    model = OrdinalRaters(length_by_rater=True)
    data = model.prepare(tiny)
    lay = model.layout(data)
    assert isinstance(lay, OrdinalLayout)
    # every position of each array is a member, in order, and names its field
    for enum in (Block, Setting, PriorConst):
        assert [int(m) for m in enum] == list(range(len(enum)))
    # the prior array ends with the latent units (the largest, then one per dimension)
    units = {PriorConst.UNIT_MAX, PriorConst.UNIT}
    assert set(layout_module.PRIOR_SOURCES) == set(PriorConst) - units
    assert lay.prior.size == len(PriorConst) - 1 + lay.n_dim
    np.testing.assert_array_equal(lay.units, model.latent_units(data))
    assert lay.prior[PriorConst.UNIT_MAX] == lay.units.max()
    for s in Setting:
        assert lay.settings[s] == int(getattr(lay, s.name.lower()))
    assert lay.settings[Setting.N_DIM] == len(data.coords["dimension"])
    assert lay.settings[Setting.REFERENCE] == data.coords["design"].index(data.reference_design)
    assert lay.prior[PriorConst.JS_SD] == 1.5 and lay.prior[PriorConst.SIGMA_LENGTH_RATER] == 0.25
    off = lay.offsets
    assert off.size == len(Block) + 1 and off[-1] == lay.ndim
    for b in Block:
        assert off[b + 1] - off[b] == lay.block_sizes[b]
        assert lay.block(b) == lay.block(b.name.lower()) == slice(off[b], off[b + 1])
    assert lay.block_sizes[Block.LZ] == lay.n_human * lay.n_dim * lay.n_design
    np.testing.assert_allclose(lay.prior_scale["log_sl"], [0.25 * lay.units.max()])
    np.testing.assert_allclose(lay.prior_scale["log_se"], lay.units)  # half-normal 1 x unit
    np.testing.assert_allclose(lay.prior_scale["log_su"], [0.5])  # discrimination: no unit


def test_kernels_name_the_interval_and_scale_sources_they_were_compiled_with():
    # numba checks only a cached function's own file for changes; kernels.py compiles in
    # kernels_interval.py and kernels_marginal.py, kernels_scale.py compiles in kernels.py,
    # those two and layout.py: their hashes must change whenever those files do
    from raterstats.models.ordinal import kernels_interval, kernels_marginal, kernels_scale
    from raterstats.models.ordinal.kernels import INTERVAL_SOURCE_SHA256, MARGINAL_SOURCE_SHA256

    for module, expected, name in (
        (kernels_interval, INTERVAL_SOURCE_SHA256, "INTERVAL_SOURCE_SHA256"),
        (kernels_marginal, MARGINAL_SOURCE_SHA256, "MARGINAL_SOURCE_SHA256"),
    ):
        src = Path(module.__file__).read_bytes()
        assert hashlib.sha256(src).hexdigest() == expected, (
            f"{module.__file__} changed: set {name} in raterstats/models/ordinal/kernels.py "
            "to its new SHA-256"
        )
    assert kernels_scale.scale_source_sha256() == kernels_scale.SCALE_SOURCE_SHA256, (
        "a source of raterstats/models/ordinal/kernels_scale.py's kernels changed: set "
        "SCALE_SOURCE_SHA256 there to kernels_scale.scale_source_sha256()"
    )


def test_kernels_name_the_layout_source_they_were_compiled_with():
    # numba compiles layout.py's enum values into the cached kernels and checks only
    # kernels.py for changes: the hash there must change whenever layout.py does
    src = Path(layout_module.__file__).read_bytes()
    assert hashlib.sha256(src).hexdigest() == LAYOUT_SOURCE_SHA256, (
        "raterstats/models/ordinal/layout.py changed: set LAYOUT_SOURCE_SHA256 in "
        "raterstats/models/ordinal/kernels.py to its new SHA-256 (this also invalidates "
        "numba's cached kernels)"
    )


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_rating_moments_equal_the_moments_of_the_category_probabilities(link):
    """issue 22: the rater table's expected rating and variance come from the cumulative
    probabilities; they equal the moments of the category probabilities."""
    from raterstats.models.ordinal.reference import category_probs, rating_moments

    rng = np.random.default_rng(4)
    lp = rng.normal(0, 2, (3, 5, 40))
    cuts = np.sort(rng.normal(0, 2, (3, 5, 40, 4)), axis=-1)
    values = np.array([1.0, 2.0, 3.0, 4.5, 5.0])
    probs = category_probs(lp, cuts, link)
    mean, var = rating_moments(lp, cuts, link, values)
    np.testing.assert_allclose(mean, probs @ values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, probs @ values**2 - (probs @ values) ** 2, atol=1e-10)
    assert (var > 0).all()


@pytest.mark.parametrize(
    "options",
    [{}, {"centred": False, "centred_latent": True}, {"length_by_rater": True}],
)
def test_constrained_values_of_a_batch_equal_those_of_each_vector(options):
    """The compiled density's ``expand_draws`` expands every draw at once: the variables of
    a batch of vectors equal those of each vector (to rounding: the zero-sum bases are
    applied as one product over the batch)."""
    model = OrdinalRaters(**options)
    data = model.prepare(clinical_qa_study(n_questions=4, random_seed=2).ratings)
    lay = model.layout(data)
    xs = np.random.default_rng(5).normal(0, 0.5, size=(2, 3, lay.ndim))
    batch = constrained_values(xs, lay, data)
    for i in range(2):
        for j in range(3):
            one = constrained_values(xs[i, j], lay, data)
            assert one.keys() == batch.keys()
            for name, value in one.items():
                np.testing.assert_allclose(batch[name][i, j], value, rtol=0, atol=1e-12)
    dens = model.density(data)
    assert dens.expand_draws is not None
    np.testing.assert_array_equal(dens.expand_draws(xs[0])["eta"], batch["eta"][0])
