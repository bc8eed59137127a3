"""The Ratings container: selections, exclusions, scale maps, conversions, summary."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats import NominalScale, OrdinalScale, concat_ratings, read_ratings
from raterstats.demo import FINE_BINARY_RULES, schemes

LIKERT = OrdinalScale.likert(5)


def _fine_example():
    # one answer, two raters, three sentences; rater x has one negative sentence,
    # rater y has none and one positive sentence
    return read_ratings(
        pl.DataFrame(
            {
                "item": ["a"] * 6,
                "segment": ["1", "2", "3"] * 2,
                "rater": ["x"] * 3 + ["y"] * 3,
                "rating": [4, 2, 5, 3, 3, 4],
                "design": ["fine"] * 6,
                "dimension": ["correctness"] * 6,
            }
        ),
        scale=LIKERT,
    )


def test_filter_and_exclude(small_study):
    r = small_study.ratings
    coarse = r.filter(design="coarse", dimension=["safety", "relevance"])
    assert coarse.designs == ("coarse",)
    assert coarse.dimensions == ("relevance", "safety")
    assert set(coarse.scales) == {"relevance", "safety"}
    assert r.filter(rater_kind="human").raters == tuple(f"p{k}" for k in range(1, 7))
    with pytest.raises(KeyError, match="design"):
        r.filter(design="medium")
    with pytest.raises(TypeError, match="cannot filter"):
        r.filter(colour="red")
    ex = r.exclude(rater="llm-judge", reason="LLM judge analysed apart")
    n_llm = r.data.filter(pl.col("rater") == "llm-judge").height
    assert ex.n_ratings == r.n_ratings - n_llm
    assert ex.exclusions[-1].n_rows == n_llm
    assert f"{n_llm} rating(s) excluded: LLM judge analysed apart" in ex.report()
    # selections are recorded, not reported as exclusions
    assert coarse.exclusions == () and coarse.steps[-1].startswith("filter(")
    with pytest.raises(TypeError, match="at least one filter"):
        r.exclude(reason="nothing")


def test_to_matrix_coordinates_and_values(small_study):
    r = small_study.ratings.filter(dimension="correctness", design="coarse")
    m = r.to_matrix()
    assert m.dims == ("unit", "rater")
    assert m.attrs["level"] == "item"
    d = r.data.filter(~pl.col("repeat"))
    row = d.row(0, named=True)
    assert m.sel(unit=row["item"], rater=row["rater"]).item() == row["value"]
    np.testing.assert_array_equal(m.coords["item"].values, m.coords["unit"].values)
    # every answer has its 3 physicians + the LLM judge
    assert (np.sum(~np.isnan(m.values), axis=1) == 4).all()
    with pytest.raises(ValueError, match="single dimension"):
        small_study.ratings.filter(design="coarse").to_matrix()


def test_segment_level_matrix(small_study):
    r = small_study.ratings.filter(dimension="safety", design="fine")
    m = r.to_matrix()
    assert m.attrs["level"] == "segment"
    assert "segment" in m.coords
    units = r.data.filter(~pl.col("repeat")).select("item", "segment").unique().height
    assert m.sizes["unit"] == units
    assert all("::" in u for u in m.coords["unit"].values)
    with pytest.raises(ValueError, match="mixes whole-item and segment"):
        small_study.ratings.filter(dimension="safety").to_xarray()


def test_row_counts_conserved_through_conversions(study):
    r = study.ratings
    total = 0
    for design in r.designs:
        sub = r.filter(design=design)
        arr = sub.to_xarray()
        first = int(np.sum(~np.isnan(arr.values)))
        assert first + arr.attrs["n_excluded_repeats"] == sub.n_ratings
        reps = sub.to_xarray(repeats="only")
        assert int(np.sum(~np.isnan(reps.values))) == arr.attrs["n_excluded_repeats"]
        total += sub.n_ratings
        for dim in sub.dimensions:
            m = sub.filter(dimension=dim).to_matrix(values="code")
            assert int(np.sum(~np.isnan(m.values))) + m.attrs["n_excluded_repeats"] == (
                sub.filter(dimension=dim).n_ratings
            )
    assert total == r.n_ratings
    s = r.summary()
    assert int(s.cells["ratings"].sum() + s.cells["repeats"].sum()) == r.n_ratings
    assert int(s.raters["ratings"].sum()) == r.n_ratings


def test_values_rating_and_code_views(small_study):
    r = small_study.ratings.filter(dimension="relevance", design="coarse")
    text = r.to_matrix(values="rating")
    code = r.to_matrix(values="code")
    value = r.to_matrix(values="value")
    filled = ~np.isnan(value.values)
    assert np.all(code.values[filled] == value.values[filled] - 1)
    assert all(
        str(int(v)) == t for v, t in zip(value.values[filled], text.values[filled], strict=True)
    )


def test_collapse_5_to_3(study):
    r = study.ratings.filter(design="coarse")
    c = r.collapse("likert5_to_3")
    assert c.scale_for("safety").levels == (-1, 0, 1)
    joined = r.data.select("value").with_columns(c.data["value"].alias("new"))
    mapping = dict(joined.unique().sort("value").iter_rows())
    assert mapping == {1.0: -1.0, 2.0: -1.0, 3.0: 0.0, 4.0: 1.0, 5.0: 1.0}
    assert c.data["code"].to_list() == [int(v) + 1 for v in c.data["value"].to_list()]
    assert c.n_ratings == r.n_ratings
    # only the named dimension changes
    only = r.collapse("likert5_to_3", dimensions="safety")
    assert only.scale_for("correctness") == LIKERT


def test_score_map():
    r = read_ratings(
        pl.DataFrame(
            {
                "item": ["a", "a", "b"],
                "rater": ["x", "y", "x"],
                "rating": ["yes", "partially", "no"],
            }
        ),
        scale=NominalScale(["yes", "partially", "no"]),
    )
    s = r.score("yes_partially_no")
    assert s.data["value"].to_list() == [1.0, 0.5, 0.0]
    assert s.data["rating"].to_list() == ["1", "0.5", "0"]
    assert s.scale_for("default").kind == "interval"
    with pytest.raises(ValueError, match="no score"):
        r.score("yes_no_refutes")


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("any_negative", {"x": 0.0, "y": 1.0}),  # x rated sentence 2 as 2 (negative)
        ("any_positive", {"x": 1.0, "y": 1.0}),
        ("mean", {"x": 11 / 3, "y": 10 / 3}),
        ("min", {"x": 2.0, "y": 3.0}),
        ("max", {"x": 5.0, "y": 4.0}),
    ],
)
def test_segment_rules(rule, expected):
    out = _fine_example().aggregate_segments(rule)
    assert not out.has_segments
    got = dict(out.data.select("rater", "value").iter_rows())
    assert got == pytest.approx(expected)
    assert out.n_ratings == 2


def test_any_positive_on_collapsed_scale():
    r = _fine_example().collapse("likert5_to_3")
    out = r.aggregate_segments("any_positive")
    assert dict(out.data.select("rater", "rating").iter_rows()) == {"x": "1", "y": "1"}
    out = r.aggregate_segments("any_negative")
    assert dict(out.data.select("rater", "rating").iter_rows()) == {"x": "0", "y": "1"}


def test_fine_binary_scheme_on_study(small_study):
    fine = small_study.ratings.filter(design="fine")
    b = fine.aggregate_segments(FINE_BINARY_RULES)
    assert b.scale_for("correctness").levels == (0, 1)
    # one rating per item, rater, dimension, repeat
    n_events = fine.data.select("item", "rater", "dimension", "repeat").unique().height
    assert b.n_ratings == n_events
    # correctness: 0 exactly where some sentence is rated 1 or 2
    neg = (
        fine.data.filter(pl.col("dimension") == "correctness")
        .group_by("item", "rater", "repeat")
        .agg((pl.col("value") <= 2).any().alias("neg"))
    )
    got = b.data.filter(pl.col("dimension") == "correctness").join(
        neg, on=["item", "rater", "repeat"]
    )
    assert (got["value"] == (~got["neg"]).cast(pl.Float64)).all()
    with pytest.raises(ValueError, match="whole-item ratings"):
        small_study.ratings.aggregate_segments("any_negative")
    assert set(schemes(small_study.ratings)) == {"coarse 3-point", "fine 3-point", "fine binary"}


def test_repeat_pairs(small_study):
    pairs = small_study.ratings.repeat_pairs()
    n_rep = int(small_study.ratings.data["repeat"].sum())
    assert pairs.height == n_rep
    assert pairs["first"].null_count() == 0


def test_pattern_counts():
    r = read_ratings(
        pl.DataFrame(
            {"item": list("aabbccdd"), "rater": ["x", "y"] * 4, "rating": [1, 1, 1, 2, 1, 1, 2, 2]}
        ),
        scale=OrdinalScale([1, 2]),
    )
    pc = r.pattern_counts().sort("count", "x", "y")
    assert pc.rows() == [("1", "2", 1), ("2", "2", 1), ("1", "1", 2)]
    assert int(pc["count"].sum()) == 4
    incomplete = read_ratings(
        pl.DataFrame({"item": ["a", "a", "b"], "rater": ["x", "y", "x"], "rating": [1, 2, 1]}),
        scale=OrdinalScale([1, 2]),
    )
    with pytest.raises(ValueError, match="complete design; 1 of 2 units"):
        incomplete.pattern_counts()


def test_summary_counts(study):
    s = study.ratings.summary()
    assert (s.n_items, s.n_raters, s.n_systems, s.n_questions) == (300, 7, 3, 100)
    coarse = s.cells.filter(pl.col("design") == "coarse")
    assert coarse["units"].to_list() == [300, 300, 300]
    assert coarse["ratings_per_unit"].to_list() == [4.0, 4.0, 4.0]
    assert s.cells["panel_coverage"].to_list() == [1.0] * 6
    d = s.to_dict()
    assert d["n_ratings"] == study.ratings.n_ratings
    md = s.to_markdown()
    assert "## Ratings by design and dimension" in md and "| coarse | safety |" in md


def test_concat_and_equality(small_study):
    r = small_study.ratings
    both = concat_ratings([r.filter(design="coarse"), r.filter(design="fine")])
    assert both.n_ratings == r.n_ratings
    assert both.filter(design="coarse") == r.filter(design="coarse")
    c = r.filter(design="coarse").collapse("likert5_to_3")
    with pytest.raises(ValueError, match="different scales"):
        concat_ratings([c, r.filter(design="fine")])
