"""Issue 18, item "Crashes and unclear errors": sampler arguments and degenerate inputs.

Every argument of ``Model.fit`` (and of the engines, and the counts of the functions that
resample a fit: ``n_boot``, ``max_draws``, ``n_replicates``, ``n_sims``, ...) is checked
before any data preparation, compilation or sampling, with one ``ValueError`` that names
every bad argument, its value and what is allowed (``tune=0`` with nutpie used to end in a
Rust panic that escapes ``except Exception``). Degenerate but valid ratings (one item, one
rater, one rating, one level used, all raters agreeing) either fit, with finite numbers, or
raise a :class:`~raterstats.models.ModelInputError` that says what the model needs (the
ordinal model's MAP on one item used to raise a ``KeyError``).
"""

from __future__ import annotations

import inspect
import math
import warnings
from unittest import mock

import numpy as np
import polars as pl
import pytest
import xarray as xr
from hypothesis import example, given
from hypothesis import strategies as st

from raterstats import (
    MACE,
    DawidSkene,
    LengthEffect,
    NominalScale,
    OrdinalRaters,
    OrdinalScale,
    Ratings,
    item_posterior,
    rater_summary,
    read_ratings,
)
from raterstats.agreement import agreement
from raterstats.checks import SEED_MAX, ArgumentError
from raterstats.design import annotation_budget, compare_designs, subsampling_study
from raterstats.diagnostics import ppc_agreement
from raterstats.health import ConvergenceWarning
from raterstats.inference import Density, run_density, run_inference
from raterstats.models import Model, ModelInputError, registered_models
from raterstats.models.ordinal import rater_table, sentence_aggregation
from raterstats.ranking import rank_systems, ranking_agreement

MODELS = sorted(registered_models().items())


class Reached(Exception):
    """Raised by a patched ``prepare``: the arguments were accepted."""


@pytest.fixture
def no_prepare(monkeypatch):
    """``Model.prepare`` of every registered model raises :class:`Reached`, so that a test
    sees whether ``fit`` checked its arguments before touching the data."""

    def reached(self, ratings):
        raise Reached

    for _, cls in MODELS:
        monkeypatch.setattr(cls, "prepare", reached)


@pytest.fixture(scope="module")
def nominal() -> Ratings:
    return read_ratings(
        pl.DataFrame(
            {
                "item": ["i1", "i1", "i2", "i2", "i3", "i3"],
                "rater": ["a", "b"] * 3,
                "rating": ["yes", "no", "no", "no", "yes", "yes"],
            }
        ),
        scale=NominalScale(["yes", "partially", "no"]),
    )


# (arguments, names the message must contain); each set is bad for every model
BAD = [
    ({"draws": 0}, ["draws"]),
    ({"draws": -5}, ["draws"]),
    ({"draws": 2.5}, ["draws"]),
    ({"draws": "100"}, ["draws"]),
    ({"draws": (5, 3)}, ["draws"]),
    ({"draws": []}, ["draws"]),
    ({"draws": (0, 10)}, ["draws"]),
    ({"draws": (10, 20.5)}, ["draws"]),
    ({"draws": True}, ["draws"]),
    ({"chains": 0}, ["chains"]),
    ({"chains": -1}, ["chains"]),
    ({"chains": 2.0}, ["chains"]),
    ({"tune": -1}, ["tune"]),
    ({"tune": 0.5}, ["tune"]),
    ({"tune": 0}, ["tune", "nutpie"]),  # NUTS by nutpie cannot run without tuning
    ({"cores": 0}, ["cores"]),
    ({"cores": 1.5}, ["cores"]),
    ({"random_seed": -1}, ["random_seed"]),
    ({"random_seed": "1"}, ["random_seed"]),
    ({"random_seed": 1.0}, ["random_seed"]),
    ({"random_seed": 2**64}, ["random_seed"]),
    ({"method": "slice"}, ["method"]),
    ({"method": None}, ["method"]),
    ({"sampler": "stan"}, ["sampler"]),
    ({"target_accept": 0}, ["target_accept"]),
    ({"target_accept": 1.0}, ["target_accept"]),
    ({"target_accept": -0.2}, ["target_accept"]),
    ({"target_accept": float("nan")}, ["target_accept"]),
    ({"target_accept": "0.9"}, ["target_accept"]),
    ({"init": "random"}, ["init"]),
    ({"logp_backend": "jax"}, ["logp_backend"]),
    ({"progress": "yes"}, ["progress"]),
    ({"posterior_predictive": 1}, ["posterior_predictive"]),
    ({"log_likelihood": None}, ["log_likelihood"]),
    ({"method": "advi", "n": 0}, ["n"]),
    ({"method": "advi", "n": 10.5}, ["n"]),
    ({"maxdepth": 0}, ["maxdepth"]),
    ({"adaptation": "magic"}, ["adaptation"]),
    ({"restarts": 3}, ["restarts", "method='em'"]),  # an EM option with NUTS
    ({"method": "map", "tol": 1e-3}, ["tol", "method='em'"]),
    # several at once: every one is named
    ({"draws": 0, "chains": 0, "target_accept": 2, "random_seed": -3},
     ["draws", "chains", "target_accept", "random_seed"]),
]  # fmt: skip

EM_BAD = [
    ({"restarts": 0}, ["restarts"]),
    ({"max_iter": 0}, ["max_iter"]),
    ({"max_iter": 2.5}, ["max_iter"]),
    ({"short_iter": 0}, ["short_iter"]),
    ({"tol": -1e-3}, ["tol"]),
    ({"tol": float("inf")}, ["tol"]),
    ({"variational": "yes"}, ["variational"]),
    ({"n": 100}, ["unknown EM options", "'n'"]),
]


@pytest.mark.parametrize(("kwargs", "names"), BAD, ids=lambda v: repr(v)[:60])
@pytest.mark.parametrize("cls", [c for _, c in MODELS], ids=lambda c: c.name)
def test_bad_sampler_arguments_are_refused_before_prepare(cls, kwargs, names, nominal, no_prepare):
    with pytest.raises(ArgumentError) as err:
        cls().fit(nominal, **kwargs)
    assert isinstance(err.value, ValueError)
    message = str(err.value)
    assert message.startswith(f"{cls.__name__}.fit: ")
    for name in names:
        assert name in message, (name, message)
    # one problem per bad argument (a valid ``method`` that selects an engine is not one)
    bad = [k for k in kwargs if k != "method" or kwargs[k] not in cls.methods]
    assert len(err.value.problems) == len(bad), err.value.problems


@pytest.mark.parametrize(("kwargs", "names"), EM_BAD, ids=lambda v: repr(v)[:60])
@pytest.mark.parametrize("cls", [c for _, c in MODELS if "em" in c.methods], ids=lambda c: c.name)
def test_bad_em_options_are_refused_before_prepare(cls, kwargs, names, nominal, no_prepare):
    with pytest.raises(ArgumentError) as err:
        cls().fit(nominal, method="em", **kwargs)
    for name in names:
        assert name in str(err.value), (name, str(err.value))


@pytest.mark.parametrize("cls", [c for _, c in MODELS], ids=lambda c: c.name)
def test_a_method_the_model_lacks_is_refused(cls, nominal, no_prepare):
    lacking = [m for m in ("nuts", "map", "advi", "em") if m not in cls.methods]
    for method in lacking:
        with pytest.raises(ArgumentError, match=r"method must be one of \[.*\], not"):
            cls().fit(nominal, method=method)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tune": 0, "sampler": "pymc"},  # PyMC's NUTS runs without tuning
        {"tune": 0, "method": "map"},
        {"draws": np.int64(10), "chains": np.int32(2), "cores": 1, "random_seed": None},
        {"random_seed": SEED_MAX, "target_accept": 0.95},
        {"method": "advi", "n": 500},
        {"maxdepth": 8, "adaptation": "low_rank", "max_energy_error": 500.0},
    ],
    ids=repr,
)
def test_good_arguments_reach_the_data(kwargs, nominal, no_prepare):
    with pytest.raises(Reached):
        MACE().fit(nominal, **kwargs)


@given(
    name=st.sampled_from(["draws", "tune", "chains", "cores", "random_seed", "target_accept"]),
    value=st.one_of(
        st.integers(-3, 12),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=3),
        st.none(),
        st.booleans(),
    ),
    cls=st.sampled_from([c for _, c in MODELS]),
)
@example(name="tune", value=None, cls=LengthEffect)  # its documented default
@example(name="tune", value=None, cls=MACE)  # refused: MACE's fit takes an integer
def test_any_argument_value_is_accepted_or_refused_by_name(name, value, cls):
    """Issue 18: a random value of one argument is accepted exactly when the documented
    rule allows it; otherwise the ValueError names the argument."""
    is_int = isinstance(value, int) and not isinstance(value, bool)
    is_num = isinstance(value, int | float) and not isinstance(value, bool)
    ok = {
        "draws": value is None or (is_int and value >= 1),  # None: the model's default
        "chains": is_int and value >= 1,
        # default method='nuts', sampler='nutpie'; None where the model's own fit takes it
        # (its default: LengthEffect's shorter tuning on the compiled density)
        "tune": (is_int and value >= 1)
        or (value is None and inspect.signature(cls.fit).parameters["tune"].default is None),
        "cores": value is None or (is_int and value >= 1),
        "random_seed": value is None or (is_int and 0 <= value <= SEED_MAX),
        "target_accept": value is None or (is_num and math.isfinite(value) and 0 < value < 1),
    }[name]
    with (
        mock.patch.object(cls, "prepare", side_effect=Reached),
        pytest.raises(Reached if ok else ArgumentError) as err,
    ):
        cls().fit(None, **{name: value})
    if not ok:
        assert err.value.problems and all(p.startswith(name) for p in err.value.problems)


def _normal_density() -> Density:
    return Density(
        1,
        lambda x: (-0.5 * float(x @ x), -x),
        lambda x: {"x": x[0]},
        {"x": ()},
        {"x": ()},
        {},
        lambda rng: rng.normal(size=1),
    )


def test_run_density_refuses_tune_0_instead_of_a_rust_panic():
    with pytest.raises(ValueError, match=r"tune must be at least 1 .*nutpie.*sampler='pymc'"):
        run_density(_normal_density(), draws=10, tune=0, chains=1, progress=False)
    with pytest.raises(ValueError, match="draws") as err:
        run_density(_normal_density(), draws=0, chains=-1, cores=0, progress=False)
    assert len(err.value.problems) == 3


def test_a_nutpie_panic_becomes_a_runtime_error(monkeypatch):
    import nutpie

    PanicException = type("PanicException", (BaseException,), {})

    def panic(*args, **kwargs):
        raise PanicException("assertion failed: early_end < num_tune")

    monkeypatch.setattr(nutpie, "sample", panic)
    with pytest.raises(RuntimeError, match="nutpie sampler stopped") as err:
        run_density(_normal_density(), draws=10, tune=10, chains=1, progress=False)
    assert isinstance(err.value.__cause__, PanicException)


def test_run_inference_checks_its_arguments_before_sampling():
    import pymc as pm

    with pm.Model() as m:
        pm.Normal("mu")
    with pytest.raises(ValueError, match="draws") as err:
        run_inference(m, draws=1.5, tune=-2, method="nuts", random_seed="x", progress=False)
    assert [p.split()[0] for p in err.value.problems] == ["draws", "tune", "random_seed"]
    dt = run_inference(m, method="nuts", sampler="pymc", draws=5, tune=0, chains=1,
                       random_seed=1, progress=False)  # fmt: skip
    assert dict(dt.posterior.sizes) == {"chain": 1, "draw": 5}


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda r: rank_systems(r, method="mean", n_boot=-1), "n_boot"),
        (lambda r: rank_systems(xr.DataTree(), max_draws=0), "max_draws"),
        (lambda r: rank_systems(r, method="mean", n_boot=2.5), "n_boot"),
        (
            lambda r: ranking_agreement({"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}, max_draws=0),
            "max_draws",
        ),
        (lambda r: ranking_agreement({"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}, k=0), "k"),
        (lambda r: agreement(r, n_boot=-1), "n_boot"),
        (lambda r: agreement(r, n_boot="many"), "n_boot"),
        (lambda r: compare_designs(xr.DataTree(), n_replicates=-1), "n_replicates"),
        (lambda r: annotation_budget(xr.DataTree(), r, n_sims=1.5), "n_sims"),
        (lambda r: subsampling_study(r, n_repeats=0), "n_repeats"),
        (lambda r: ppc_agreement(xr.DataTree(), n_draws=0), "n_draws"),
        (lambda r: rater_table(xr.DataTree(), max_draws=0), "max_draws"),
        (lambda r: sentence_aggregation(xr.DataTree(), max_draws=-1), "max_draws"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_resampling_counts_are_checked_everywhere(call, name, nominal):
    with pytest.raises(ValueError, match=rf"{name} must be") as err:
        call(nominal)
    assert name in str(err.value) and "not " in str(err.value)


# ------------------------------------------------------------------ degenerate inputs


def _ordinal(frame: dict, levels: int = 5) -> Ratings:
    return read_ratings(pl.DataFrame(frame), scale=OrdinalScale(list(range(1, levels + 1))))


def _finite(dt: xr.DataTree) -> list[str]:
    """Names of float variables of any group that hold a NaN."""
    return [
        f"{g}/{v}"
        for g in dt.children
        for v in dt[g].data_vars
        if dt[g][v].dtype.kind == "f" and np.isnan(dt[g][v].values).any()
    ]


TINY_NUTS = {"draws": 20, "tune": 20, "chains": 1, "progress": False, "random_seed": 1}


@pytest.mark.parametrize("method", ["map", "nuts"])
def test_ordinal_model_on_one_item_says_what_it_needs(method):
    """Issue 18: the ordinal model's MAP on a single item raised a KeyError (its empty
    zero-sum residual basis); a single rated unit cannot separate quality from severity."""
    r = _ordinal({"item": ["i1"] * 3, "rater": ["a", "b", "c"], "rating": [2, 3, 4]})
    kw = TINY_NUTS if method == "nuts" else {"progress": False}
    with pytest.raises(ModelInputError, match="at least 2 units") as err:
        OrdinalRaters().fit(r, method=method, **kw)
    assert "item 'i1'" in str(err.value)


def test_ordinal_model_fits_one_item_rated_sentence_by_sentence():
    """One answer rated sentence by sentence: the sentences are the units; the answer's own
    residual is zero (it sums to zero alone), and MAP and NUTS fit it."""
    r = _ordinal(
        {
            "item": ["i1"] * 6,
            "segment": ["1", "1", "2", "2", "3", "3"],
            "rater": ["a", "b"] * 3,
            "rating": [1, 2, 4, 5, 3, 3],
        }
    )
    dm = OrdinalRaters().fit(r, method="map", progress=False, random_seed=1)
    dn = OrdinalRaters().fit(r, **TINY_NUTS)
    for dt in (dm, dn):
        assert _finite(dt) == []
        assert float(np.abs(dt.posterior["eta"]).max()) == 0.0
        assert dt.posterior.sizes["item"] == 1


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"item": ["i1", "i2", "i3"], "rater": ["a"] * 3, "rating": [2, 3, 4]}, "two human"),
        ({"item": ["i1"], "rater": ["a"], "rating": [2]}, "two human"),
        (
            {
                "item": ["i1", "i1", "i2", "i2"] * 2,
                "rater": ["a", "b"] * 4,
                "dimension": ["d1"] * 4 + ["d2"] * 4,
                "rating": [1, 2, 4, 5, 3, 3, 3, 3],
                "design": ["g"] * 4 + ["g", "g", "h", "h"],
            },
            "dimension 'd2', design 'h'",
        ),
    ],
    ids=["one rater", "one rating", "one unit in one cell"],
)
def test_ordinal_models_refuse_with_every_problem(frame, message):
    r = _ordinal(frame)
    for model in (OrdinalRaters(), LengthEffect()):
        with pytest.raises(ModelInputError, match=message):
            model.fit(r, method="map", progress=False)


def test_a_constant_length_is_refused_not_fitted_as_its_prior():
    """Issue 18: answers of one length leave the length effect to its prior; the models
    say so (and OrdinalRaters, using the column by default, says how to leave it out)."""
    frame = {
        "item": ["i1", "i1", "i2", "i2"],
        "rater": ["a", "b"] * 2,
        "rating": [1, 2, 4, 5],
        "length": [7, 7, 7, 7],
    }
    r = _ordinal(frame)
    with pytest.raises(ModelInputError, match="all 2 rated answers have length 7"):
        LengthEffect().fit(r, method="map", progress=False)
    with pytest.raises(ModelInputError, match="length=False fits without it"):
        OrdinalRaters().fit(r, method="map", progress=False)
    dt = OrdinalRaters(length=False).fit(r, method="map", progress=False, random_seed=1)
    assert "length_effect" not in dt.posterior and _finite(dt) == []


@pytest.mark.parametrize(
    ("cls", "ratings"),
    [(OrdinalRaters, [3, 3, 3, 3]), (OrdinalRaters, [1, 1, 1, 1]), (LengthEffect, [5, 5, 5, 5])],
    ids=["middle level only", "lowest level only", "highest level only"],
)
def test_ordinal_models_fit_a_single_level_used(cls, ratings):
    r = _ordinal(
        {
            "item": ["i1", "i1", "i2", "i2"],
            "rater": ["a", "b"] * 2,
            "rating": ratings,
            "length": [10, 10, 20, 20],
        }
    )
    dt = cls().fit(r, method="map", progress=False, random_seed=1)
    assert _finite(dt) == []
    assert bool(dt.sample_stats["converged"].all())


def _nominal(frame: dict, levels=("yes", "partially", "no")) -> Ratings:
    return read_ratings(pl.DataFrame(frame), scale=NominalScale(list(levels)))


TINY_NOMINAL = {
    "one item": {"item": ["i1"] * 3, "rater": ["a", "b", "c"], "rating": ["yes", "no", "yes"]},
    "one rater": {"item": ["i1", "i2", "i3"], "rater": ["a"] * 3, "rating": ["yes", "no", "yes"]},
    "one rating": {"item": ["i1"], "rater": ["a"], "rating": ["yes"]},
    "one category used": {"item": ["i1", "i1", "i2", "i2"], "rater": ["a", "b"] * 2,
                          "rating": ["yes"] * 4},
    "all agree": {"item": ["i1", "i1", "i2", "i2", "i3", "i3"], "rater": ["a", "b"] * 3,
                  "rating": ["yes", "yes", "no", "no", "yes", "yes"]},
}  # fmt: skip

LATENT_CLASS = [
    MACE(hierarchical=False),
    MACE(hierarchical=True),
    DawidSkene(),
    DawidSkene(pooling="pooled"),
    DawidSkene(pooling="partial"),
    DawidSkene(pooling="one_coin"),
]


def _check_latent_class_fit(dt: xr.DataTree) -> None:
    assert _finite(dt) == []
    for summary in (rater_summary(dt), item_posterior(dt)):
        bad = [
            v
            for v in summary.data_vars
            if summary[v].dtype.kind == "f" and np.isnan(summary[v].values).any()
        ]
        assert bad == []
    probs = item_posterior(dt)["prob"]
    np.testing.assert_allclose(probs.sum("category"), 1.0, atol=1e-9)


@pytest.mark.parametrize("case", list(TINY_NOMINAL), ids=str)
@pytest.mark.parametrize("model", LATENT_CLASS, ids=repr)
def test_latent_class_models_fit_tiny_inputs_by_em(model: Model, case: str):
    dt = model.fit(_nominal(TINY_NOMINAL[case]), method="em", random_seed=1, progress=False)
    _check_latent_class_fit(dt)


@pytest.mark.parametrize("case", list(TINY_NOMINAL), ids=str)
@pytest.mark.parametrize("model", [MACE(), DawidSkene()], ids=repr)
def test_latent_class_models_fit_tiny_inputs_by_map(model: Model, case: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dt = model.fit(_nominal(TINY_NOMINAL[case]), method="map", random_seed=1, progress=False)
    _check_latent_class_fit(dt)


@pytest.mark.parametrize("model", [MACE(), DawidSkene()], ids=repr)
def test_latent_class_models_fit_one_item_by_nuts(model: Model):
    dt = model.fit(_nominal(TINY_NOMINAL["one item"]), **TINY_NUTS)
    _check_latent_class_fit(dt)


def test_a_map_that_does_not_converge_warns_instead_of_a_silent_nan():
    """Issue 18: a posterior mode on the boundary (a one-coin rater never wrong under a
    Beta(2, 1) accuracy prior) left ``lp`` NaN with no word; the fit now warns and records
    ``converged = False``."""
    r = read_ratings(
        pl.DataFrame(
            {
                "item": ["i1"] * 4,
                "rater": ["a", "b"] * 2,
                "dimension": ["d1", "d1", "d2", "d2"],
                "rating": ["yes", "no", "no", "no"],
            }
        ),
        scale=NominalScale(["yes", "no"]),
    )
    with pytest.warns(UserWarning, match="MAP optimisation did not converge") as record:
        dt = DawidSkene(pooling="one_coin").fit(r, method="map", random_seed=1, progress=False)
    assert not bool(dt.sample_stats["converged"].item())
    # one warning that says why, not PyMC's as well; and (issue 22) the fit fails its health
    # check, which warns once more (a ConvergenceWarning)
    why = [w for w in record if not issubclass(w.category, ConvergenceWarning)]
    assert len(why) == 1 and len(record) == 2
    assert dt.attrs["health_ok"] == 0 and "did not converge" in dt.attrs["health"]


def test_advi_fits_a_one_coin_model_of_one_rater():
    """Issue 18: ADVI of a one-coin Dawid-Skene fit of one rater raised an IndexError from
    PyTensor's numba backend (a graph whose variables all have size 1); it now fits."""
    r = _nominal(TINY_NOMINAL["one rater"])
    dt = DawidSkene(pooling="one_coin").fit(
        r, method="advi", n=200, draws=20, random_seed=1, progress=False
    )
    assert dict(dt.posterior.sizes)["draw"] == 20
    _check_latent_class_fit(dt)
