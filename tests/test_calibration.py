"""issue 22: the public simulation_based_calibration and prior_simulator (fast checks; the
calibration itself runs in tests/ordinal/test_ordinal_sbc.py, slow)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats import MACE, DawidSkene, OrdinalRaters, read_ratings
from raterstats.design import PriorSimulator, prior_simulator, simulation_based_calibration


@pytest.fixture(scope="module")
def design():
    """12 items x 3 raters, two labels, one dimension and design."""
    return read_ratings(
        pl.DataFrame(
            {
                "item": [f"i{k}" for k in range(12) for _ in "xyz"],
                "rater": list("xyz") * 12,
                "rating": ["a", "b", "a"] * 12,
            }
        )
    )


class FailingOnOddSeeds:
    """A simulator whose odd seeds give data the model cannot fit (a failed fit)."""

    def __init__(self, sim: PriorSimulator) -> None:
        self.sim = sim

    def __call__(self, seed: int):
        data, truth = self.sim(seed)
        return (data if seed % 2 == 0 else "not ratings"), truth


def test_failed_fits_are_counted_not_dropped(design):
    model = DawidSkene(confusion_prior="fixed")
    sim = FailingOnOddSeeds(prior_simulator(model, design))
    ds = simulation_based_calibration(model, sim, n_replicates=8, method="em", random_seed=3)
    odd = ds["seed"].values % 2 == 1
    assert odd.any() and (~odd).any()
    np.testing.assert_array_equal(ds["fit_failed"].values, odd)
    assert ds.attrs["n_failed"] == int(odd.sum())
    assert np.isnan(ds["rank"].values[odd]).all()
    assert not np.isnan(ds["rank"].values[~odd]).any()
    assert "TypeError" in ds["fit_error"].values[odd][0]
    assert f"{int(odd.sum())} of 8 fits failed" in ds.attrs["fit_warning"]
    assert (
        ds["rank_histogram"].sum("bin").values.tolist()
        == [int((~odd).sum())] * ds.sizes["parameter"]
    )


def test_labels_use_the_users_ids_and_a_truth_subset(design):
    model = MACE(hierarchical=False)
    sim = prior_simulator(model, design)

    def subset(seed: int):
        data, truth = sim(seed)
        return data, {"competence": truth["competence"].sel(rater="y"), "spam": truth["spam"]}

    ds = simulation_based_calibration(
        model, subset, parameters=["competence"], n_replicates=3, method="em", random_seed=1
    )
    assert ds["parameter"].values.tolist() == ["competence[y, default, default]"]
    assert set(ds["variable"].values) == {"competence"}
    assert ds.attrs["n_draws"] == 1 and "median-unbiased" in ds.attrs["uncertainty_note"]
    again = simulation_based_calibration(
        model, subset, parameters=["competence"], n_replicates=3, method="em", random_seed=1
    )
    assert ds.identical(again)


def test_bad_calibration_arguments(design):
    model = DawidSkene(confusion_prior="fixed")
    sim = prior_simulator(model, design)
    kw = {"n_replicates": 2, "method": "em"}
    with pytest.raises(ValueError, match="truth has no"):
        simulation_based_calibration(model, sim, parameters=["nope"], **kw)
    with pytest.raises(ValueError, match="no posterior variable 'extra'"):
        simulation_based_calibration(model, lambda s: (sim(s)[0], {"extra": np.zeros(2)}), **kw)
    with pytest.raises(ValueError, match="shape"):
        simulation_based_calibration(
            model, lambda s: (sim(s)[0], {"prevalence": np.zeros(5)}), **kw
        )
    with pytest.raises(ValueError, match="not in fit_options"):
        simulation_based_calibration(model, sim, fit_options={"draws": 5}, **kw)
    with pytest.raises(ValueError, match="n_replicates"):
        simulation_based_calibration(model, sim, n_replicates=1, method="em")
    with pytest.raises(TypeError, match="model must be"):
        simulation_based_calibration("DawidSkene", sim, **kw)  # type: ignore[arg-type]


def test_prior_simulator_keeps_the_design_and_rejects_other_models(design):
    sim = prior_simulator(DawidSkene(confusion_prior="fixed"), design)
    data, truth = sim(5)
    cols = ["item", "rater", "dimension", "design"]
    assert data.data.select(cols).sort(cols).equals(design.data.select(cols).sort(cols))
    conf = truth["confusion"].values
    np.testing.assert_allclose(conf.sum(-1), 1.0)  # every row a distribution
    assert truth["prevalence"].dims == ("dimension", "category")
    data2, _ = sim(5)
    assert data.data.equals(data2.data)  # a seed gives the same data
    several = design.derive(
        pl.concat([design.data, design.data.with_columns(pl.lit("fine").alias("design"))]),
        step="two designs",
    )
    with pytest.raises(ValueError, match="hierarchical MACE"):
        prior_simulator(MACE(), several)
    with pytest.raises(ValueError, match="pooling='unpooled'"):
        prior_simulator(DawidSkene(pooling="pooled"), design)
    # the default learns its confusion prior from the ratings: nothing to draw from before
    with pytest.raises(ValueError, match="confusion_prior='fixed'"):
        prior_simulator(DawidSkene(), design)
    with pytest.raises(TypeError, match="MACE and DawidSkene"):
        prior_simulator(OrdinalRaters(), design)
