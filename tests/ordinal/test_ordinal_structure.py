"""OrdinalRaters: input checks, model structure, log density and gradient at fixed points."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytensor
import pytest
import xarray as xr
from value_vars import VALUE_VARS  # tests/ordinal/value_vars.py

from raterstats import NominalScale, OrdinalScale, read_ratings
from raterstats.models.base import ModelInputError
from raterstats.models.ordinal import BLOCKS, OrdinalRaters, rating_log_likelihood
from raterstats.models.zerosum import zero_sum_basis
from raterstats.simulate import clinical_qa_study, high_agreement_study


@pytest.fixture(scope="module")
def tiny():
    return clinical_qa_study(n_questions=4, random_seed=11).ratings


#: the value variables of the centred question effects and residuals (``centred_latent``)
CENTRED_LATENT = {"question_z": "question_basis_effect", "residual_z": "residual_basis"}


def _value_var(blk, names):
    """The value variable behind a block: ``*_z`` non-centred, ``*_basis`` centred."""
    name = VALUE_VARS[blk]
    if name in CENTRED_LATENT and name not in names and CENTRED_LATENT[name] in names:
        return CENTRED_LATENT[name]
    if name.endswith("_z") and name not in names and name.replace("_z", "_basis") in names:
        return name.replace("_z", "_basis")
    return name


def _point(model, density, x):
    """The PyMC value-variable point that corresponds to the density's vector x."""
    names = {v.name for v in model.value_vars}
    point, pos = {}, 0
    for blk in BLOCKS:
        name = _value_var(blk, names)
        if name not in names:
            continue
        shape = model.initial_point()[name].shape
        n = int(np.prod(shape))
        point[name] = x[pos : pos + n].reshape(shape)
        pos += n
    assert pos == density.ndim
    return point


def test_zero_sum_basis():
    for n in (2, 3, 7):
        b = zero_sum_basis(n)
        np.testing.assert_allclose(b.T @ b, np.eye(n - 1), atol=1e-12)
        np.testing.assert_allclose(b.sum(axis=0), 0.0, atol=1e-12)


@pytest.mark.parametrize(
    ("length_by_rater", "centred", "centred_latent"),
    [
        (False, False, False),
        (False, True, True),
        # each compiles the PyMC graph (about 20 s): two forms in the default run, the
        # other two with the slow tests
        pytest.param(True, False, True, marks=pytest.mark.slow),
        pytest.param(False, True, False, marks=pytest.mark.slow),
    ],
)
def test_compiled_density_matches_pymc_model(tiny, length_by_rater, centred, centred_latent):
    """issue 22: also with the question effects and residuals centred (``centred_latent``)."""
    mod = OrdinalRaters(
        length_by_rater=length_by_rater,
        centred=centred,
        centred_latent=centred_latent,
        scale_coordinate=False,  # the PyMC graph's coordinates (kernels_scale: tested apart)
    )
    data = mod.prepare(tiny)
    model = mod.build_model(data)
    dens = mod.density(data)
    assert dens is not None
    logp = model.compile_logp()
    dlogp = model.compile_dlogp()
    rng = np.random.default_rng(1)
    xs = [dens.initial_point(rng) + rng.normal(0, 0.4, dens.ndim) for _ in range(3)]
    ours = [dens.logp_grad(x) for x in xs]
    theirs = [(float(logp(_point(model, dens, x))), dlogp(_point(model, dens, x))) for x in xs]
    # same density up to a constant; same gradient (PyMC orders value variables as built)
    diffs = [o[0] - t[0] for o, t in zip(ours, theirs, strict=True)]
    assert np.ptp(diffs) < 1e-8
    order = [v.name for v in model.value_vars]
    for (_, g), (_, tg), x in zip(ours, theirs, xs, strict=True):
        point = _point(model, dens, x)
        pieces, pos = {}, 0
        for name in order:
            n = point[name].size
            pieces[name] = tg[pos : pos + n]
            pos += n
        names = [_value_var(b, set(pieces)) for b in BLOCKS]
        mine = np.concatenate([pieces[n] for n in names if n in pieces])
        np.testing.assert_allclose(g, mine, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("source", ["built_in", "high_agreement"])
def test_compiled_density_matches_pymc_model_in_latent_units(source):
    """issue 19: the priors in the latent unit of each dimension (different units per
    dimension here), in the PyMC graph as in the compiled density."""
    r = (
        clinical_qa_study(n_questions=4, random_seed=4).ratings
        if source == "built_in"
        else high_agreement_study(n_questions=3, n_systems=4, random_seed=2).ratings
    )
    mod = OrdinalRaters(length_by_rater=source == "built_in", scale_coordinate=False)
    data = mod.prepare(r)
    units = mod.latent_units(data)
    assert np.ptp(units) > 0.1, units  # distinct units per dimension
    model = mod.build_model(data)
    dens = mod.density(data)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    rng = np.random.default_rng(2)
    xs = [dens.initial_point(rng) + rng.normal(0, 0.4, dens.ndim) for _ in range(3)]
    diffs = [dens.logp_grad(x)[0] - float(logp(_point(model, dens, x))) for x in xs]
    assert np.ptp(diffs) < 1e-8
    order = [v.name for v in model.value_vars]
    for x in xs:
        point = _point(model, dens, x)
        tg, pieces, pos = dlogp(point), {}, 0
        for name in order:
            pieces[name] = tg[pos : pos + point[name].size]
            pos += point[name].size
        mine = np.concatenate(
            [pieces[n] for n in (_value_var(b, set(pieces)) for b in BLOCKS) if n in pieces]
        )
        np.testing.assert_allclose(dens.logp_grad(x)[1], mine, rtol=1e-8, atol=1e-8)


def test_numpy_log_likelihood_equals_the_model_potential(tiny):
    mod = OrdinalRaters(scale_coordinate=False)  # the PyMC graph's coordinates
    data = mod.prepare(tiny)
    model = mod.build_model(data)
    dens = mod.density(data)
    rng = np.random.default_rng(2)
    x = dens.initial_point(rng) + rng.normal(0, 0.3, dens.ndim)
    point = _point(model, dens, x)
    pot = model.replace_rvs_by_values([model["ratings_loglik"]])[0]
    f = pytensor.function(model.value_vars, pot, on_unused_input="ignore")
    potential = float(f(*[point[v.name] for v in model.value_vars]))
    vals = dens.expand(x)
    post = xr.Dataset(
        {
            k: (("chain", "draw", *dens.var_dims[k]), np.asarray(v)[None, None])
            for k, v in vals.items()
        },
        coords=dens.coords,
    )
    ll = rating_log_likelihood(post, data, "logit")
    assert ll.shape == (1, 1, data.n_obs)
    assert ll.sum() == pytest.approx(potential, rel=1e-10)


def test_structure_dims_and_coordinates(tiny):
    m = OrdinalRaters().build(tiny)
    assert m.named_vars_to_dims["severity"] == ("rater", "dimension", "design")
    assert list(m.coords["rater"])[-1] == "llm-judge"
    assert m.named_vars_to_dims["length_effect"] == ("dimension", "design")
    assert "judge_length_effect" in m.named_vars
    # without a length column there is no length effect
    no_len = tiny.filter(design="coarse")
    data = no_len.data.drop("length")
    from raterstats.ratings import Ratings

    m2 = OrdinalRaters().build(Ratings(data, no_len.scales))
    assert "length_effect" not in m2.named_vars
    assert "sentence_z" not in m2.named_vars


def test_probit_link_has_no_compiled_density(tiny):
    mod = OrdinalRaters(link="probit")
    assert mod.density(mod.prepare(tiny)) is None
    m = mod.build(tiny)
    assert np.isfinite(m.compile_logp()(m.initial_point()))


def test_input_problems_listed():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b"],
            "rater": ["x", "y", "x", "y"],
            "rating": ["yes", "no", "no", "no"],
        }
    )
    r = read_ratings(frame, scale=NominalScale(["yes", "no"]))
    with pytest.raises(ModelInputError, match="needs an OrdinalScale"):
        OrdinalRaters().prepare(r)
    one = read_ratings(
        frame.filter(pl.col("rater") == "x").with_columns(pl.Series("rating", [1, 2])),
        scale=OrdinalScale([1, 2]),
    )
    with pytest.raises(ModelInputError, match="two human raters"):
        OrdinalRaters().prepare(one)
    two = read_ratings(
        frame.with_columns(pl.Series("rating", [1, 2, 2, 1])), scale=OrdinalScale([1, 2])
    )
    with pytest.raises(ModelInputError, match="no 'length' column"):
        OrdinalRaters(length=True).prepare(two)
    with pytest.raises(TypeError, match="unknown option"):
        OrdinalRaters(links="logit")
    with pytest.raises(ValueError, match="link must be"):
        OrdinalRaters(link="cloglog")


def test_centred_by_default_when_rater_cells_are_large(tiny):
    """The default parametrisation follows the data: centred when the median human
    rater x dimension x design cell holds at least 20 ratings, non-centred otherwise."""
    data = OrdinalRaters().prepare(tiny)
    human = data.obs_rater < data.n_humans
    D, G = len(data.coords["dimension"]), len(data.coords["design"])
    cell = (data.obs_rater[human] * D + data.obs_dim[human]) * G + data.obs_design[human]
    median = np.median(np.bincount(cell, minlength=data.n_humans * D * G))
    assert OrdinalRaters().is_centred(data) == (median >= 20)
    assert OrdinalRaters(centred=True).is_centred(data)
    assert not OrdinalRaters(centred=False).is_centred(data)
    small = OrdinalRaters().prepare(tiny.filter(dimension="correctness", design="coarse"))
    assert not OrdinalRaters().is_centred(small)  # 4 questions x 3 systems: 12 per cell
    names = {v.name for v in OrdinalRaters(centred=True).build(tiny).value_vars}
    # centred: each cell's total deviation, the rater level integrated out
    assert {"severity_cell_basis", "discrimination_cell_basis"} <= names
    assert not {"severity_rater_z", "severity_cell_z", "severity_rater_basis"} & names
    with pytest.raises(ValueError, match="centred must be"):
        OrdinalRaters(centred="yes")
