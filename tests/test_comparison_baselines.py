"""Issue 20: the classical baselines for comparative judgments (win rate, the Chatbot Arena's
online Elo, maximum-likelihood Bradley-Terry with a bootstrap) and rank_systems /
compare_rankings on Comparisons."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import xarray as xr

import raterstats.models as models
from raterstats import Comparisons, read_comparisons
from raterstats.comparison_baselines import (
    BASELINE_METHODS,
    baseline_score_draws,
    bt_strengths,
    elo,
    ml_bradley_terry,
    ml_exists,
    win_rate,
)
from raterstats.ranking import compare_rankings, rank_methods, rank_systems, summarize_ranking
from raterstats.simulate_comparisons import simulate_comparisons


def _pairs(a: list[str], b: list[str], outcome: list[str], **extra: list[str]) -> Comparisons:
    frame = {"system_a": a, "system_b": b, "rater": [f"r{i}" for i in range(len(a))]}
    return read_comparisons(pl.DataFrame({**frame, "outcome": outcome, **extra}))


def _sim(**kw: object) -> Comparisons:
    base: dict[str, object] = {"n_systems": 5, "n_comparisons": 300, "random_seed": 4}
    base.update(kw)
    return simulate_comparisons(**base).comparisons  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- win rate


def test_win_rate_by_hand_with_ties_and_two_dimensions() -> None:
    c = _pairs(
        ["x", "x", "y", "x"],
        ["y", "z", "z", "y"],
        ["a", "tie", "b", "b"],
        dimension=["d1", "d1", "d1", "d2"],
    )
    wr = win_rate(c)
    assert wr.dims == ("dimension", "system")
    assert wr["system"].values.tolist() == ["x", "y", "z"]
    # d1: x beat y, tied z -> 1.5 / 2; y lost to x and z -> 0 / 2; z tied x, beat y -> 1.5 / 2
    assert wr.sel(dimension="d1").values.tolist() == [0.75, 0.0, 0.75]
    # d2: y beat x; z is not compared there: NaN, named in attrs
    d2 = wr.sel(dimension="d2").values
    assert d2[:2].tolist() == [0.0, 1.0] and math.isnan(d2[2])
    assert "z (d2)" in wr.attrs["not_compared"]


def test_graded_outcomes_count_by_their_sign_and_rankings_go_through_pairs() -> None:
    graded = read_comparisons(
        pl.DataFrame(
            {
                "system_a": ["x", "x"],
                "system_b": ["y", "y"],
                "rater": ["r1", "r2"],
                "outcome": [2, -1],
            }
        ),
        graded=2,
    )
    assert win_rate(graded).values.tolist() == [[0.5, 0.5]]
    assert "by their sign" in win_rate(graded).attrs["outcomes"]
    rankings = read_comparisons(
        pl.DataFrame(
            {
                "question": ["q1"] * 3,
                "rater": ["r1"] * 3,
                "system": ["a", "b", "c"],
                "rank": [1, 2, 2],
            }
        )
    )
    wr = win_rate(rankings)
    # pairs: a > b, a > c, b = c
    assert wr.sel(dimension="default").values.tolist() == [1.0, 0.25, 0.25]
    assert "to_pairs" in wr.attrs["pairs_from_rankings"]


# ----------------------------------------------------------------------------- Elo


def _elo_by_hand(
    steps: list[tuple[str, str, float]], k: float = 4.0, scale: float = 400.0
) -> dict[str, float]:
    rating = {"x": 1000.0, "y": 1000.0, "z": 1000.0}
    for a, b, s in steps:
        ea = 1 / (1 + 10 ** ((rating[b] - rating[a]) / scale))
        eb = 1 / (1 + 10 ** ((rating[a] - rating[b]) / scale))
        rating[a] += k * (s - ea)
        rating[b] += k * (1 - s - eb)
    return rating


def test_elo_by_hand_in_file_order() -> None:
    c = _pairs(["x", "y", "z"], ["y", "z", "x"], ["a", "tie", "b"])
    # judgment 1: x beats y: x 1002, y 998
    first = _elo_by_hand([("x", "y", 1.0)])
    assert first["x"] == 1002.0 and first["y"] == 998.0
    want = _elo_by_hand([("x", "y", 1.0), ("y", "z", 0.5), ("z", "x", 0.0)])
    got = elo(c).sel(dimension="default")
    assert got.values.tolist() == pytest.approx([want["x"], want["y"], want["z"]], abs=1e-9)
    assert got.attrs["order"] == "source_row" and got.attrs["k"] == 4.0
    # k scales the first step; the order matters for online Elo
    assert float(elo(c, k=32.0).sel(dimension="default", system="x")) == pytest.approx(
        _elo_by_hand([("x", "y", 1.0), ("y", "z", 0.5), ("z", "x", 0.0)], k=32.0)["x"]
    )


def test_elo_shuffled_order_is_reproducible_and_arguments_are_checked() -> None:
    c = _sim(n_comparisons=80)
    a = elo(c, order="shuffled", random_seed=3)
    b = elo(c, order="shuffled", random_seed=3)
    xr.testing.assert_equal(a, b)
    assert not np.allclose(a.values, elo(c).values)
    with pytest.raises(ValueError, match=r"k must be a positive.*order must be one of"):
        elo(c, k=-1.0, order="random")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- Bradley-Terry


def test_ml_bradley_terry_two_systems_by_hand() -> None:
    # x over y: 2 wins, 1 loss, 1 tie -> credit 2.5 : 1.5, theta_x - theta_y = log(2.5 / 1.5)
    c = _pairs(["x", "x", "x", "y"], ["y", "y", "y", "x"], ["a", "a", "b", "tie"])
    theta = ml_bradley_terry(c).sel(dimension="default")
    assert float(theta.sel(system="x") - theta.sel(system="y")) == pytest.approx(
        math.log(2.5 / 1.5), abs=1e-5
    )
    assert float(theta.sum()) == pytest.approx(0.0, abs=1e-12)
    assert theta.attrs["separated"] == "" and theta.attrs["not_converged"] == ""


def test_ml_bradley_terry_matches_choix() -> None:
    choix = pytest.importorskip("choix")
    c = _sim(n_systems=6, n_comparisons=600, ties=True, random_seed=3)
    ours = ml_bradley_terry(c).sel(dimension="d1")
    at = {s: i for i, s in enumerate(c.systems)}
    data = []  # every outcome twice: a tie is one win each way (half a win each)
    for a, b, o in c.data.select("system_a", "system_b", "outcome").rows():
        i, j = at[a], at[b]
        data += [(i, j), (i, j)] if o > 0 else [(j, i), (j, i)] if o < 0 else [(i, j), (j, i)]
    theirs = choix.ilsr_pairwise(len(at), data, alpha=0.0, tol=1e-12)
    theirs = theirs - theirs.mean()
    assert ours.sel(system=list(c.systems)).values == pytest.approx(theirs, abs=1e-5)


def test_disconnected_comparisons_name_the_groups() -> None:
    c = _pairs(["x", "u", "x"], ["y", "v", "y"], ["a", "b", "b"])
    with pytest.raises(ValueError, match=r"2 groups never compared .*\(u, v \| x, y\)"):
        ml_bradley_terry(c)
    with pytest.raises(ValueError, match=r"u, v \| x, y"):
        rank_systems(c, method="bradley_terry_ml", n_boot=10)
    # win rates and Elo ratings exist, but say that the groups are not comparable
    assert "2 groups (u, v | x, y)" in win_rate(c).attrs["split"]
    ds = rank_systems(c, method="elo", n_boot=20)
    assert "never compared with each other" in ds.attrs["method_notes"]


def test_a_system_that_never_loses_is_finite_and_flagged() -> None:
    c = _pairs(
        ["x", "x", "y", "y", "z", "x"],
        ["y", "z", "z", "z", "y", "y"],
        ["a", "a", "a", "b", "tie", "a"],
    )
    theta = ml_bradley_terry(c).sel(dimension="default")
    assert np.isfinite(theta.values).all()
    assert int(np.argmax(theta.values)) == 0  # x first
    assert "never lost nor tied: x" in theta.attrs["separated"]
    wins = np.array([[0.0, 2.0], [0.0, 0.0]])
    assert not ml_exists(wins) and ml_exists(wins + wins.T)
    ds = rank_systems(c, method="bradley_terry_ml", n_boot=50, random_seed=1)
    assert "never lost nor tied: x" in ds.attrs["method_notes"]
    assert "replicates without a maximum-likelihood estimate" in ds.attrs["method_notes"]


def test_bt_strengths_batches_agree_with_single_fits() -> None:
    rng = np.random.default_rng(0)
    wins = rng.integers(0, 6, size=(4, 5, 5)).astype(float)
    wins[:, np.arange(5), np.arange(5)] = 0.0
    batch, ok = bt_strengths(wins)
    assert ok.all()
    for b in range(4):
        single, done = bt_strengths(wins[b])
        assert done and single == pytest.approx(batch[b], abs=1e-8)


# ----------------------------------------------------------------------------- rank_systems


@pytest.mark.parametrize("method", BASELINE_METHODS)
def test_rank_systems_on_comparisons_has_the_ranking_layout(method: str) -> None:
    c = _sim(n_dimensions=2)
    ds = rank_systems(c, method=method, n_boot=200, random_seed=5)
    for v in ("score_mean", "score_low", "score_high", "p_better", "rank_prob",
              "expected_rank", "verdict"):  # fmt: skip
        assert v in ds
    assert ds["rank_prob"].dims == ("dimension", "system", "rank")
    assert np.allclose(ds["rank_prob"].sum("rank"), 1.0)
    assert ds.attrs["source"] == f"comparisons ({method})"
    assert ds.attrs["bootstrap"] == "questions (paired)"
    assert ds.attrs["n_draws"] == 200
    assert "bootstrap percentile intervals" in ds.attrs["uncertainty_note"]
    assert "not posterior" in ds.attrs["uncertainty_note"]
    again = rank_systems(c, method=method, n_boot=200, random_seed=5)
    xr.testing.assert_identical(ds, again)
    other = rank_systems(c, method=method, n_boot=200, random_seed=6)
    assert not np.array_equal(ds["score"].values, other["score"].values)


def test_the_bootstrap_resamples_judgments_or_whole_rankings() -> None:
    data = _sim().data.with_columns(pl.lit(None, dtype=pl.String).alias("question"))
    plain = Comparisons(data, kind="pairs")
    draws = baseline_score_draws(plain, method="win_rate", n_boot=30)
    assert draws.attrs["bootstrap"] == "judgments"
    ranked = _sim(kind="rankings", n_comparisons=60)
    draws = baseline_score_draws(ranked, method="elo", n_boot=30)
    assert draws.attrs["bootstrap"] == "rankings"
    assert "to_pairs" in draws.attrs["method_notes"]


def test_no_bootstrap_gives_the_point_estimate_as_one_draw() -> None:
    c = _sim()
    ds = rank_systems(c, method="bradley_terry_ml", n_boot=0)
    point = ml_bradley_terry(c)
    assert ds["score_mean"].values == pytest.approx(point.values)
    assert ds.attrs["bootstrap"] == "none"
    assert ds.attrs["uncertainty_note"].startswith("one draw")


def test_rank_methods_and_bad_methods() -> None:
    assert rank_methods(kind="comparisons") == BASELINE_METHODS
    assert "win_rate" not in rank_methods()
    c = _sim(n_comparisons=50)
    with pytest.raises(ValueError, match="for Comparisons, method must be one of 'win_rate'"):
        rank_systems(c)
    with pytest.raises(ValueError, match="kind must be"):
        rank_methods(kind="pairs")  # type: ignore[arg-type]


def test_a_system_missing_from_a_dimension_is_not_ranked() -> None:
    c = _pairs(["x", "x", "y"], ["y", "z", "x"], ["a", "b", "a"], dimension=["d1", "d1", "d2"])
    with pytest.raises(ValueError, match=r"z \(d2\).*filter\(dimension"):
        rank_systems(c, method="win_rate", n_boot=10)


def test_compare_rankings_puts_the_baselines_beside_a_posterior_ranking() -> None:
    c = _sim()
    rankings = {m: rank_systems(c, method=m, n_boot=100, random_seed=2) for m in BASELINE_METHODS}
    # a model's ranking: draws (chain, draw, dimension, system), as system_score_draws gives
    rng = np.random.default_rng(0)
    theta = xr.DataArray(
        rng.normal(np.arange(5.0), 0.3, size=(2, 50, 1, 5)),
        dims=("chain", "draw", "dimension", "system"),
        coords={"dimension": ["d1"], "system": list(c.systems)},
    )
    rankings["model"] = summarize_ranking(theta)
    table = compare_rankings(rankings)
    assert table["source"].unique(maintain_order=True).to_list() == [*BASELINE_METHODS, "model"]
    assert table.columns[:3] == ["source", "dimension", "system"]
    assert table.height == 4 * 5


def test_compare_rankings_beside_a_bradley_terry_fit() -> None:
    c = _sim()
    fit = models.BradleyTerry().fit(c, method="map", random_seed=0)
    rankings = {"model": rank_systems(fit), "ml": rank_systems(c, method="bradley_terry_ml")}
    table = compare_rankings(rankings)
    assert set(table["source"].to_list()) == {"model", "ml"}
    assert table.filter(pl.col("source") == "model")["system"].len() == 5


# ----------------------------------------------------------------------------- escaping


def test_user_ids_are_escaped_in_notes_and_errors() -> None:
    odd = "x\nmal\x1b[31m"
    c = _pairs([odd, "u"], ["y", "v"], ["a", "b"])
    with pytest.raises(ValueError, match="groups") as err:
        ml_bradley_terry(c)
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value)
    assert repr(odd) in str(err.value)
    c = _pairs([odd, odd, "y"], ["y", "z", "z"], ["a", "a", "tie"], dimension=["d\n1"] * 3)
    note = ml_bradley_terry(c).attrs["separated"]
    assert repr(odd) in note and "'d\\n1'" in note and "\x1b" not in note
