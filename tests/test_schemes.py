"""combine_schemes: several rating schemes with different label sets as one table for a
latent-class fit, and the label spaces' base dimensions carried by the fit."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats import MACE, DawidSkene, read_ratings
from raterstats.analyze import Scheme
from raterstats.design.schemes import base_dimensions, combine_schemes
from raterstats.models.latent_class.data import data_from_groups, prepare_latent_class
from raterstats.simulate import clinical_qa_study

SCHEMES = (
    Scheme("coarse 3-point", design="coarse", collapse="likert5_to_3"),
    Scheme("fine 3-point", design="fine", collapse="likert5_to_3"),
    Scheme("fine binary", design="fine", segment_rules="any_negative"),
)


@pytest.fixture(scope="module")
def study():
    r = clinical_qa_study(n_questions=4, random_seed=2).ratings
    return r, {s.name: s.apply(r) for s in SCHEMES}


def test_schemes_become_designs_and_scales_label_spaces(study):
    r, parts = study
    both = combine_schemes(parts)
    assert both.designs == ("coarse 3-point", "fine 3-point", "fine binary")
    # the 3-point scale keeps each dimension's name; the binary scale is a space of its own
    for dim in r.dimensions:
        assert len(both.scale_for(dim).levels) == 3
        assert len(both.scale_for(f"{dim} (fine binary)").levels) == 2
    assert both.n_ratings == sum(p.n_ratings for p in parts.values())
    base = both.data.select("dimension", "base_dimension").unique()
    assert dict(base.iter_rows()) == {
        **{d: d for d in r.dimensions},
        **{f"{d} (fine binary)": d for d in r.dimensions},
    }
    # every rating keeps its item, rater and level text
    fb = both.filter(design="fine binary").data.sort("item", "rater", "base_dimension")
    src = parts["fine binary"].data.sort("item", "rater", "dimension")
    assert fb["rating"].to_list() == src["rating"].to_list()
    assert fb["base_dimension"].to_list() == src["dimension"].to_list()


def test_fit_stores_base_dimensions_and_pools_across_label_sets(study):
    _, parts = study
    both = combine_schemes(parts)
    data = prepare_latent_class(both)
    assert data.base_dimensions is not None
    assert set(data.n_categories.tolist()) == {2, 3}
    g = data.data_groups()
    back = data_from_groups(g["constant_data"], g["observed_data"])
    assert back.base_dimensions == data.base_dimensions
    for model in (MACE(), DawidSkene()):
        dt = model.fit(both, method="em", random_seed=1)
        bd = base_dimensions(dt)
        assert bd["correctness (fine binary)"] == "correctness"
        assert bd["safety"] == "safety"
    # one fit: a rater effect shared by the 3-point and the binary cells
    dt = MACE().fit(both, method="em", random_seed=1)
    assert dt.posterior["competence"].sizes["design"] == 3
    assert "rater_effect" in dt.posterior


def test_plain_ratings_map_each_dimension_to_itself():
    r = clinical_qa_study(n_questions=4, random_seed=2).ratings.collapse("likert5_to_3")
    dt = MACE().fit(r, method="em", random_seed=1)
    assert base_dimensions(dt) == {d: d for d in r.dimensions}
    assert prepare_latent_class(r).base_dimensions is None


def test_bad_parts_are_refused_with_every_problem():
    r = clinical_qa_study(n_questions=4, random_seed=2).ratings
    with pytest.raises(ValueError, match="no schemes"):
        combine_schemes({})
    with pytest.raises(ValueError, match=r"non-empty text.*expected a Ratings, got int"):
        combine_schemes({" ": r, "x": 3})  # type: ignore[dict-item]


def test_a_scheme_with_several_designs_names_each():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b"] * 2,
            "rater": ["x", "y"] * 4,
            "rating": [1, 2, 2, 2, 1, 1, 2, 1],
            "design": ["d1"] * 4 + ["d2"] * 4,
        }
    )
    r = read_ratings(frame)
    both = combine_schemes({"s": r})
    assert both.designs == ("s (d1)", "s (d2)")
    assert np.array_equal(
        both.data.sort("design", "item", "rater")["value"].to_numpy(),
        r.data.sort("design", "item", "rater")["value"].to_numpy(),
    )


def test_a_base_dimension_column_that_disagrees_is_an_error(study):
    _, parts = study
    both = combine_schemes(parts)
    bad = both.derive(
        both.data.with_columns(
            base_dimension=pl.when(pl.col("item") == pl.col("item").first())
            .then(pl.lit("other"))
            .otherwise(pl.col("base_dimension"))
        ),
        step="break",
    )
    with pytest.raises(ValueError, match="has base dimensions"):
        prepare_latent_class(bad)
