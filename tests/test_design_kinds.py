"""issue 20: design comparison across kinds of judgment — one latent-quality study judged by
absolute ratings, pairs and rankings (simulate_kinds), and compare_design_kinds answering
"which design recovers the true ranking with probability 0.9 for the fewest rater hours".

The estimators of pairs and rankings used here are written in this file (a win rate and a
mean normalised rank), so that the tests do not depend on the comparison models; the test
of the default estimators (Bradley-Terry and Plackett-Luce MAP) runs when those models are
registered.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import pytest
import xarray as xr

from raterstats import Comparisons, Ratings
from raterstats.checks import ArgumentError
from raterstats.design import (
    DesignOption,
    cheapest_design,
    cheapest_kind,
    compare_design_kinds,
    kinds_table,
    mean_rating_scores,
)
from raterstats.simulate_kinds import SimulatedKinds, simulate_kinds, true_strengths

THETA = {"gpt": 0.6, "med": 0.2, "doc": -0.2, "base": -0.6}


def win_rate(c: Comparisons) -> xr.DataArray:
    """Share of its comparisons each system won (a tie counts half)."""
    d = c.data
    a = d.select(pl.col("system_a").alias("system"), (pl.col("outcome").sign() + 1) / 2)
    b = d.select(
        pl.col("system_b").alias("system"), ((1 - pl.col("outcome").sign()) / 2).alias("outcome")
    )
    m = pl.concat([a, b]).group_by("system").agg(pl.col("outcome").mean()).sort("system")
    return xr.DataArray(
        m["outcome"].to_numpy(), dims="system", coords={"system": m["system"].to_list()}
    )


def mean_position(c: Comparisons) -> xr.DataArray:
    """Mean normalised position in the rankings (1 = ranked first, 0 = last)."""
    d = c.data.with_columns(pl.len().over("ranking").alias("n"))
    d = d.with_columns(((pl.col("n") - pl.col("rank")) / (pl.col("n") - 1)).alias("pos"))
    m = d.group_by("system").agg(pl.col("pos").mean()).sort("system")
    return xr.DataArray(
        m["pos"].to_numpy(), dims="system", coords={"system": m["system"].to_list()}
    )


def drop_med(r: Ratings) -> xr.DataArray:
    """Mean ratings without the second-best system (a system left unscored)."""
    return mean_rating_scores(r).drop_sel(system="med")


def flagged_mean(r: Ratings) -> xr.DataArray:
    out = mean_rating_scores(r)
    out.attrs["fit_warning"] = "the test's fit did not converge"
    return out


def broken(r: Ratings) -> xr.DataArray:
    raise KeyError("no such column")


def two_dims(r: Ratings) -> xr.DataArray:
    return mean_rating_scores(r).expand_dims(other=2)


def stranger(r: Ratings) -> xr.DataArray:
    return mean_rating_scores(r).assign_coords(system=["x1", "x2", "x3", "x4"])


ESTIMATORS = {"pairs": win_rate, "rankings": mean_position}


# ----------------------------------------------------------------------------- simulator


def test_three_tables_share_systems_questions_raters_and_truth() -> None:
    sim = simulate_kinds(theta=THETA, n_questions=6, n_raters=5, random_seed=3)
    systems = tuple(sorted(THETA))
    assert sim.ratings is not None and sim.pairs is not None and sim.rankings is not None
    assert sim.ratings.systems == sim.pairs.systems == sim.rankings.systems == systems
    questions = {f"q{k}" for k in range(1, 7)}
    assert set(sim.ratings.data["question"].unique()) == questions
    assert set(sim.pairs.data["question"].unique()) == questions
    assert set(sim.rankings.data["question"].unique()) == questions
    panel = set(sim.truth["rater"].values.tolist())
    for t in (sim.ratings.data, sim.pairs.data, sim.rankings.data):
        assert set(t["rater"].unique()) <= panel
    assert sim.true_order == ("gpt", "med", "doc", "base")
    assert sim.truth.attrs["true_order"] == "gpt > med > doc > base"
    np.testing.assert_allclose(
        sim.truth["theta"].sel(system=list(THETA)).values, list(THETA.values())
    )
    assert sim.truth["eta"].dims == ("question", "system")
    # sizes: every answer by 3 raters, 6 comparisons and 1 full ranking per question
    assert sim.ratings.n_ratings == 6 * 4 * 3
    assert sim.pairs.n_judgments == 6 * 6
    assert sim.rankings.n_judgments == 6
    assert set(sim.rankings.data.group_by("ranking").len()["len"].to_list()) == {4}
    # a kind simulated alone is the same table; settings make the study again
    alone = simulate_kinds(theta=THETA, n_questions=6, n_raters=5, kinds=["pairs"], random_seed=3)
    assert alone.ratings is None and alone.pairs is not None
    assert alone.pairs.data.equals(sim.pairs.data)
    again = simulate_kinds(**sim.settings)
    assert again.ratings is not None and again.ratings.data.equals(sim.ratings.data)
    xr.testing.assert_identical(again.truth, sim.truth)
    assert sim.table("rankings") is sim.rankings
    with pytest.raises(ValueError, match="no 'absolute' judgments"):
        alone.table("absolute")


def test_more_raters_per_answer_add_raters_to_the_same_answers() -> None:
    small = simulate_kinds(theta=THETA, raters_per_answer=2, kinds=["absolute"], random_seed=5)
    large = simulate_kinds(theta=THETA, raters_per_answer=4, kinds=["absolute"], random_seed=5)
    assert small.ratings is not None and large.ratings is not None
    cols = ["item", "rater", "rating"]
    got = small.ratings.data.select(cols).join(large.ratings.data.select(cols), on=cols)
    assert got.height == small.ratings.n_ratings


def test_judgments_follow_the_truth() -> None:
    """Strong raters order the answers as the truth does in every kind, and a planted
    position bias shows in pairs."""
    sim = simulate_kinds(
        theta=[2.0, 0.0, -2.0], n_questions=60, answer_sd=0.1, alpha_sd=0.0, random_seed=7
    )
    assert sim.ratings is not None and sim.pairs is not None and sim.rankings is not None
    means = mean_rating_scores(sim.ratings)
    assert list(means.sortby(-means)["system"].values) == ["s1", "s2", "s3"]
    wins = win_rate(sim.pairs)
    assert list(wins.sortby(-wins)["system"].values) == ["s1", "s2", "s3"]
    pos = mean_position(sim.rankings)
    assert list(pos.sortby(-pos)["system"].values) == ["s1", "s2", "s3"]
    biased = simulate_kinds(
        theta=[0.01, 0.0], n_questions=200, position_bias=3.0, kinds=["pairs"], random_seed=7
    )
    assert biased.pairs is not None
    d = biased.pairs.data
    first_won = ((d["shown_first"] == "a") == (d["outcome"] > 0)).mean()
    assert first_won > 0.85


def test_graded_pairs_ties_and_partial_rankings() -> None:
    graded = simulate_kinds(theta=THETA, max_grade=2, kinds=["pairs"], random_seed=1).pairs
    assert graded is not None and graded.max_grade == 2
    assert set(graded.data["outcome"].unique()) <= {-2, -1, 0, 1, 2}
    tied = simulate_kinds(theta=THETA, ties=True, nu=2.0, kinds=["pairs"], random_seed=1).pairs
    assert tied is not None and tied.ties
    part = simulate_kinds(
        theta=THETA, ranking_size=2, rankings_per_question=3, kinds=["rankings"], random_seed=1
    ).rankings
    assert part is not None and part.n_judgments == 20 * 3
    assert set(part.data.group_by("ranking").len()["len"].to_list()) == {2}
    per_q = part.data.group_by("question").agg(pl.col("rater").n_unique())["rater"]
    assert set(per_q.to_list()) == {3}  # distinct raters per question


def test_simulator_input_errors() -> None:
    with pytest.raises(ValueError, match="no true order"):
        simulate_kinds(theta=[0.5, 0.5])
    with pytest.raises(ValueError, match="raters_per_answer \\(4\\) exceeds n_raters \\(3\\)"):
        simulate_kinds(n_raters=3, raters_per_answer=4)
    with pytest.raises(ValueError, match="ranking_size must be an integer in \\[2, 4\\]"):
        simulate_kinds(ranking_size=5)
    with pytest.raises(ArgumentError) as err:
        simulate_kinds(kinds=["votes"], n_questions=0, answer_sd=-1)
    text = str(err.value)
    assert "kinds" in text and "n_questions" in text and "answer_sd" in text
    with pytest.raises(ValueError, match="ties=True applies to binary pairs"):
        simulate_kinds(max_grade=2, ties=True)
    with pytest.raises(ValueError, match="cutpoints must be 4 increasing"):
        simulate_kinds(cutpoints=[1.0, 0.0, 2.0, 3.0])
    assert true_strengths(theta=THETA) == THETA
    drawn = true_strengths(n_systems=3, random_seed=4)
    sim = simulate_kinds(n_systems=3, random_seed=4, kinds=["absolute"])
    assert dict(zip(sim.truth["system"].values, sim.truth["theta"].values, strict=True)) == drawn


# ----------------------------------------------------------------------------- options


def test_design_option_labels_sizes_and_costs() -> None:
    a = DesignOption("absolute", 3, 60)
    p = DesignOption("pairs", 6, 30, max_grade=2)
    t = DesignOption("pairs", 6, 30, ties=True)
    r = DesignOption("rankings", [3, 2], 90, label="three of four")
    assert (a.label, p.label, t.label, r.label) == (
        "absolute x3",
        "pairs x6 graded 2",
        "pairs x6 with ties",
        "three of four",
    )
    assert r.size == (3, 2)
    assert a.describe_size() == "3 raters per answer"
    assert DesignOption("absolute", 1, 60).describe_size() == "1 rater per answer"
    assert p.describe_size() == "6 comparisons per question, graded -2..2"
    assert a.n_judgments(n_systems=4, n_questions=10) == 120
    assert p.n_judgments(n_systems=4, n_questions=10) == 60
    assert r.n_judgments(n_systems=4, n_questions=10) == 20


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kind": "votes", "size": 2, "seconds_per_judgment": 1}, "kind must be one of"),
        ({"kind": "rankings", "size": 3, "seconds_per_judgment": 1}, "rankings size must be"),
        ({"kind": "rankings", "size": (1, 2), "seconds_per_judgment": 1}, "rankings size"),
        ({"kind": "pairs", "size": 2.5, "seconds_per_judgment": 1}, "comparisons per question"),
        ({"kind": "pairs", "size": True, "seconds_per_judgment": 1}, "must be an integer"),
        ({"kind": "pairs", "size": 2, "seconds_per_judgment": 0}, "seconds_per_judgment"),
        ({"kind": "pairs", "size": 2, "seconds_per_judgment": "x"}, "seconds_per_judgment"),
        ({"kind": "absolute", "size": 2, "seconds_per_judgment": 1, "ties": True}, "pairs only"),
        ({"kind": "pairs", "size": 2, "seconds_per_judgment": 1, "label": ""}, "label"),
    ],
)
def test_design_option_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ArgumentError, match=match):
        DesignOption(**kwargs)


# ----------------------------------------------------------------------------- comparison


def test_recovery_increases_with_size_and_costs_add_up() -> None:
    opts = [
        DesignOption("absolute", 1, 40),
        DesignOption("absolute", 5, 40),
        DesignOption("pairs", 2, 30),
        DesignOption("pairs", 18, 30),
        DesignOption("rankings", (2, 1), 45),
        DesignOption("rankings", (4, 4), 120),
    ]
    ds = compare_design_kinds(
        opts,
        study={"theta": THETA, "n_raters": 8},
        n_questions=12,
        n_replicates=60,
        estimators=ESTIMATORS,
        max_workers=1,
        random_seed=11,
    )
    assert ds.sizes == {"design": 6}
    assert list(ds["design"].values) == [o.label for o in opts]
    assert list(ds["kind"].values) == ["absolute"] * 2 + ["pairs"] * 2 + ["rankings"] * 2
    p = ds["p_recovered"].values
    tau = ds["mean_tau"].values
    for small, large in ((0, 1), (2, 3), (4, 5)):
        assert p[large] > p[small] + 0.15, (small, p)
        assert tau[large] > tau[small]
    assert np.all(ds["p_recovered_low"].values <= p) and np.all(p <= ds["p_recovered_high"].values)
    assert np.all(ds["p_best_first"].values >= p)  # the whole order right puts the best first
    np.testing.assert_array_equal(ds["n_judgments"].values, [48, 240, 24, 216, 12, 48])
    np.testing.assert_allclose(
        ds["rater_hours"].values,
        ds["n_judgments"].values * ds["seconds_per_judgment"].values / 3600,
    )
    np.testing.assert_allclose(ds["rater_hours"].values[:2], [48 * 40 / 3600, 240 * 40 / 3600])
    assert ds.attrs["n_replicates"] == 60 and ds.attrs["n_questions"] == 12
    assert ds.attrs["true_order"] == "gpt > med > doc > base"
    assert "absolute: the mean rating of each system" in ds.attrs["estimators"]
    assert "win_rate (given)" in ds.attrs["estimators"]
    table = kinds_table(ds)
    assert table["design"].to_list() == [o.label for o in opts]
    assert table.columns[:6] == [
        "design", "kind", "size", "n_judgments", "seconds_per_judgment", "rater_hours",
    ]  # fmt: skip


def test_cheapest_design_reaching_the_target() -> None:
    opts = [
        DesignOption("absolute", 1, 10, label="cheap"),
        DesignOption("absolute", 4, 10, label="mid"),
        DesignOption("absolute", 8, 10, label="dear"),
    ]
    ds = compare_design_kinds(
        opts, study={"theta": [1.0, 0.0, -1.0]}, n_questions=10, n_replicates=40,
        target=0.9, max_workers=1, random_seed=2,
    )  # fmt: skip
    reach = ds["reaches_target"].values
    assert not reach[0] and reach[1] and reach[2], ds["p_recovered"].values
    assert ds.attrs["cheapest"] == "mid"
    assert ds.attrs["verdict"].startswith("mid (4 raters per answer) is the cheapest design")
    row = cheapest_design(ds, target=0.9, on="p_recovered")
    assert row["design"].to_list() == ["mid"] and row["criterion"].to_list() == ["p_recovered"]
    assert row["rater_hours"].to_list() == [pytest.approx(10 * 3 * 4 * 10 / 3600)]
    assert cheapest_kind(ds, target=0.0)["design"].to_list() == ["cheap"]
    with pytest.raises(ValueError, match="on must be one of"):
        cheapest_design(ds, target=0.9)  # "reliability" is a budget's criterion
    # no design reaches the target: a sentence says so, and no row
    none = compare_design_kinds(
        opts[:1], study={"theta": [0.2, 0.0, -0.2]}, n_questions=3, n_replicates=20,
        target=0.99, max_workers=1, random_seed=2,
    )  # fmt: skip
    assert not none["reaches_target"].values.any()
    assert none.attrs["cheapest"].startswith("no design recovers the true order")
    assert "cheap" in none.attrs["cheapest"]
    assert cheapest_design(none, target=0.99, on="p_recovered").height == 0


def test_cheapest_kind_prefers_lower_cost_then_higher_value() -> None:
    ds = xr.Dataset(
        {
            "p_recovered": ("design", [0.95, 0.97, 0.92, 0.99]),
            "p_best_first": ("design", [1.0, 1.0, 1.0, 1.0]),
            "mean_tau": ("design", [0.8, 0.9, 0.7, 0.95]),
            "rater_hours": ("design", [2.0, 2.0, 2.0, 5.0]),
        },
        coords={
            "design": ["a", "b", "c", "d"],
            "kind": ("design", ["absolute", "pairs", "rankings", "pairs"]),
            "size": ("design", ["1", "2", "3", "4"]),
        },
        attrs={"analysis": "design_kinds"},
    )
    assert cheapest_kind(ds, target=0.9)["design"].to_list() == ["b"]
    assert cheapest_kind(ds, target=0.93, on="mean_tau")["design"].to_list() == ["d"]
    with pytest.raises(ValueError, match="expected a result of compare_design_kinds"):
        cheapest_kind(xr.Dataset(), target=0.9)
    with pytest.raises(ValueError, match="expected a result of compare_design_kinds"):
        kinds_table(xr.Dataset())


def test_reproducible_and_the_same_on_every_executor() -> None:
    opts = [DesignOption("absolute", 2, 30), DesignOption("pairs", 4, 20)]
    kw = {
        "study": {"theta": THETA},
        "n_questions": 5,
        "n_replicates": 25,  # two tasks per option
        "estimators": ESTIMATORS,
        "random_seed": 9,
    }
    one = compare_design_kinds(opts, max_workers=1, **kw)
    xr.testing.assert_identical(one, compare_design_kinds(opts, max_workers=1, **kw))
    xr.testing.assert_identical(one, compare_design_kinds(opts, max_workers=2, **kw))
    with ThreadPoolExecutor(2) as ex:
        xr.testing.assert_identical(one, compare_design_kinds(opts, executor=ex, **kw))
    other = compare_design_kinds(opts, max_workers=1, **{**kw, "random_seed": 10})
    assert not one["mean_tau"].equals(other["mean_tau"])


def test_a_simulated_study_is_the_truth() -> None:
    study = simulate_kinds(n_systems=3, theta_sd=1.0, n_raters=6, random_seed=4)
    assert isinstance(study, SimulatedKinds)
    ds = compare_design_kinds(
        [DesignOption("rankings", (3, 1), 60)], study=study, n_replicates=5,
        estimators=ESTIMATORS, max_workers=1,
    )  # fmt: skip
    assert ds.attrs["true_order"] == " > ".join(study.true_order)
    assert ds.attrs["n_questions"] == 20  # the study's
    assert ds["n_judgments"].item() == 20


def test_unscored_systems_and_fit_warnings_are_reported() -> None:
    opts = [DesignOption("absolute", 2, 30)]
    kw = {"study": {"theta": THETA}, "n_questions": 4, "n_replicates": 6, "max_workers": 1}
    ds = compare_design_kinds(opts, estimators={"absolute": drop_med}, **kw)
    assert ds["n_incomplete"].item() == 6
    assert ds["p_recovered"].item() == 0.0  # "med" left unscored ranks last: order broken
    flagged = compare_design_kinds(opts, estimators={"absolute": flagged_mean}, **kw)
    assert flagged["n_flagged"].item() == 6
    assert "6 of 6 replicates (the test's fit did not converge)" in flagged.attrs["fit_warning"]
    assert "fit_warning" not in compare_design_kinds(opts, **kw).attrs


@pytest.mark.parametrize(
    ("options", "kwargs", "match"),
    [
        ([], {}, "non-empty list of DesignOption"),
        (["absolute"], {}, "non-empty list of DesignOption"),
        (
            [DesignOption("pairs", 2, 1), DesignOption("pairs", 2, 5)],
            {"estimators": ESTIMATORS},
            "labels must differ",
        ),
        ([DesignOption("absolute", 2, 1)], {"study": {"raters_per_answer": 3}}, "decided by"),
        ([DesignOption("absolute", 2, 1)], {"study": {"n_judges": 3}}, "not simulate_kinds"),
        ([DesignOption("absolute", 12, 1)], {}, "raters_per_answer \\(12\\) exceeds"),
        ([DesignOption("rankings", (5, 1), 1)], {"estimators": ESTIMATORS}, "ranking_size"),
        ([DesignOption("absolute", 2, 1)], {"estimators": {"votes": win_rate}}, "unknown kinds"),
        ([DesignOption("absolute", 2, 1)], {"estimators": {"absolute": 3}}, "not callable"),
        ([DesignOption("absolute", 2, 1)], {"target": 1.5}, "target"),
        ([DesignOption("absolute", 2, 1)], {"n_replicates": 0}, "n_replicates"),
        ([DesignOption("absolute", 2, 1)], {"estimators": {"absolute": two_dims}}, "one dim"),
        ([DesignOption("absolute", 2, 1)], {"estimators": {"absolute": stranger}}, "not distinct"),
        (
            [DesignOption("absolute", 2, 1)],
            {"estimators": {"absolute": lambda r: 1.0}},
            "not an xr.DataArray",
        ),
        (
            [DesignOption("absolute", 2, 1)],
            {"estimators": {"absolute": broken}},
            "design absolute x2, replicate 1: the estimator failed \\(KeyError",
        ),
    ],
)
def test_comparison_input_errors(options: list, kwargs: dict, match: str) -> None:
    base = {"study": {"theta": THETA}, "n_questions": 3, "n_replicates": 2, "max_workers": 1}
    with pytest.raises(ValueError, match=match):
        compare_design_kinds(options, **{**base, **kwargs})


def test_default_estimators_rank_pairs_and_rankings() -> None:
    opts = [DesignOption("pairs", 12, 20), DesignOption("rankings", (3, 2), 60)]
    ds = compare_design_kinds(
        opts, study={"theta": [1.0, 0.0, -1.0]}, n_questions=10, n_replicates=10,
        max_workers=1, random_seed=3,
    )  # fmt: skip
    assert "Bradley-Terry" in ds.attrs["estimators"]
    assert "Plackett-Luce" in ds.attrs["estimators"]
    assert np.all(ds["mean_tau"].values > 0.5), ds["mean_tau"].values
