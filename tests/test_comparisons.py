"""Issue 20: comparative judgments read and validated like ratings (read_comparisons,
Comparisons, simulate_comparisons)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from raterstats import Comparisons, RatingsError, read_comparisons
from raterstats.simulate_comparisons import simulate_comparisons


def _pairs(**cols: list[object]) -> pl.DataFrame:
    base: dict[str, list[object]] = {
        "system_a": ["gpt", "gpt", "med"],
        "system_b": ["med", "doc", "doc"],
        "rater": ["r1", "r2", "r1"],
        "outcome": ["a", "tie", "b"],
    }
    base.update(cols)
    return pl.DataFrame(base)


def test_pairs_are_read_with_aliases_and_system_names() -> None:
    c = read_comparisons(
        pl.DataFrame(
            {
                "model_a": ["gpt", "gpt", "doc"],
                "model_b": ["doc", "med", "med"],
                "judge": ["j1", "j2", "j1"],
                "winner": ["model_b", "gpt", "tie (bothbad)"],
                "question_id": ["q1", "q1", "q2"],
            }
        )
    )
    assert c.kind == "pairs"
    assert c.data["outcome"].to_list() == [-1, 1, 0]
    assert c.questions == ("q1", "q2")
    assert c.dimensions == ("default",)
    assert c.ties


def test_every_problem_is_listed_at_once_with_rows_and_columns(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    _pairs(
        system_a=["gpt", "doc", ""],
        outcome=["maybe", "a", "b"],
        shown_first=["left", "x", ""],
        rater=["r1", "", "r1"],
    ).write_csv(path)
    with pytest.raises(RatingsError) as err:
        read_comparisons(path)
    msg = str(err.value)
    assert str(path) in msg and "comparisons" in msg
    cols = {(p.column, p.rows) for p in err.value.problems}
    assert ("outcome", (1,)) in cols
    assert ("shown_first", (2,)) in cols
    assert ("rater", (2,)) in cols
    assert ("system_a", (3,)) in cols
    assert ("system_b", (2,)) in cols  # doc vs doc


def test_missing_columns_name_the_accepted_names() -> None:
    with pytest.raises(RatingsError, match="system_b"):
        read_comparisons(pl.DataFrame({"system_a": ["x"], "rater": ["r"], "outcome": ["a"]}))


def test_graded_outcomes_and_outcome_maps() -> None:
    g = read_comparisons(_pairs(outcome=["-2", "+1", "0"]), graded=2)
    assert g.max_grade == 2 and g.graded
    assert g.data["outcome"].to_list() == [-2, 1, 0]
    with pytest.raises(RatingsError, match="integer from -2 to 2"):
        read_comparisons(_pairs(outcome=["3", "1", "0"]), graded=2)
    m = read_comparisons(
        _pairs(outcome=["Response 1", "Same", "Response 2"]),
        outcomes={"Response 1": "a", "Response 2": "b", "Same": "tie"},
    )
    assert m.data["outcome"].to_list() == [1, 0, -1]
    with pytest.raises(ValueError, match="graded"):
        read_comparisons(_pairs(), graded=0)


def test_duplicate_comparison_ids_are_a_problem() -> None:
    with pytest.raises(RatingsError, match="unique comparison id"):
        read_comparisons(_pairs(id=["c1", "c1", "c2"]))


def test_rankings_ties_partial_and_single_system_exclusion() -> None:
    frame = pl.DataFrame(
        {
            "question": ["q1", "q1", "q1", "q2", "q2", "q3"],
            "rater": ["x"] * 6,
            "system": ["a", "b", "c", "a", "c", "b"],
            "rank": [1, 2, 2, 2, 1, 1],
        }
    )
    r = read_comparisons(frame)
    assert r.kind == "rankings" and r.n_judgments == 2 and r.ties
    assert r.exclusions[0].n_rows == 1 and "single system" in r.exclusions[0].reason
    pairs = r.to_pairs().data.sort("comparison")
    assert pairs.select("system_a", "system_b", "outcome").rows() == [
        ("a", "b", 1),
        ("a", "c", 1),
        ("b", "c", 0),
        ("c", "a", 1),
    ]
    with pytest.raises(RatingsError) as err:
        read_comparisons(frame.with_columns(pl.Series("rank", ["1", "x", "2", "0", "1", "1"])))
    assert {p.value for p in err.value.problems} == {"x", "0"}
    with pytest.raises(RatingsError, match="each system once per ranking"):
        read_comparisons(frame.with_columns(pl.Series("system", ["a", "a", "c", "a", "c", "b"])))


def test_filters_exclusions_and_summary_notes() -> None:
    c = read_comparisons(
        _pairs(
            system_a=["a", "c", "a"],
            system_b=["b", "d", "b"],
            rater=["x|y", "x|y", "z"],
            outcome=["a", "b", "a"],
        )
    )
    s = c.summary()
    assert s.cells["components"].to_list() == [2]
    assert any("never compared" in n for n in s.notes)
    md = c.report()
    assert "x\\|y" in md  # user strings escaped
    kept = c.exclude(rater="z", reason="failed the attention check")
    assert kept.n_judgments == 2 and kept.exclusions[0].n_rows == 1
    assert c.filter(system=["a", "b"]).n_judgments == 2
    with pytest.raises(KeyError, match="not in the comparisons"):
        c.filter(rater="nobody")


def test_simulator_truth_and_position_bias_show_in_the_summary() -> None:
    sim = simulate_comparisons(
        n_systems=6, n_comparisons=3000, position_bias=1.0, beta_sd=0.0, random_seed=4
    )
    c = sim.comparisons
    assert isinstance(c, Comparisons) and c.n_judgments == 3000
    assert np.allclose(sim.truth["theta"].sum("system"), 0)
    share = c.summary().cells["first_preferred_share"][0]
    assert share > 0.6  # a strong pull toward the first-shown answer is visible raw
    graded = simulate_comparisons(max_grade=2, n_comparisons=400, random_seed=1).comparisons
    assert set(graded.data["outcome"].unique().to_list()) <= {-2, -1, 0, 1, 2}
    assert graded.max_grade == 2
    ranks = simulate_comparisons(kind="rankings", n_comparisons=20, ranking_size=3).comparisons
    per = ranks.data.group_by("ranking").agg(pl.col("rank").sort())
    assert all(r == [1.0, 2.0, 3.0] for r in per["rank"].to_list())


@pytest.mark.parametrize(
    ("settings", "graded"),
    [
        ({"ties": True, "n_llm_judges": 1}, None),
        ({"max_grade": 2}, 2),
        ({"kind": "rankings"}, None),
    ],
)
def test_a_table_written_from_comparisons_reads_back(
    tmp_path: Path, settings: dict, graded: int | None
) -> None:
    """issue 20: the canonical table (outcomes as -1 / 0 / 1 codes, or -K..K with the scale
    declared; rankings as they are) written to CSV reads back into the same judgments."""
    c = simulate_comparisons(n_systems=4, n_comparisons=80, random_seed=2, **settings).comparisons
    path = tmp_path / "c.csv"
    c.data.drop("source_row").write_csv(path)
    back = read_comparisons(path, graded=graded)
    assert back.kind == c.kind and back.max_grade == c.max_grade
    assert back.data.drop("source_row").equals(c.data.drop("source_row"))


def test_ranking_ids_tell_repeated_rankings_apart() -> None:
    """issue 20: a rater who ranks one question's systems twice needs a ranking id; an id
    that spans two questions (or raters, dimensions) is a problem naming its rows."""
    frame = pl.DataFrame(
        {
            "ranking": ["k1", "k1", "k2", "k2"],
            "question": ["q1"] * 4,
            "rater": ["x"] * 4,
            "system": ["a", "b", "a", "b"],
            "rank": [1, 2, 2, 1],
        }
    )
    r = read_comparisons(frame)
    assert r.n_judgments == 2 and r.data["ranking"].unique().sort().to_list() == ["k1", "k2"]
    with pytest.raises(RatingsError, match="each system once per ranking"):
        read_comparisons(frame.drop("ranking"))
    with pytest.raises(RatingsError) as err:
        read_comparisons(frame.with_columns(pl.Series("question", ["q1", "q2", "q1", "q1"])))
    assert any(p.value == "k1" and p.rows == (1, 2) for p in err.value.problems)
