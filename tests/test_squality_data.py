"""The shipped SQuALITY per-question rankings (issue 20: comparative judgments).

``examples/data/squality_rankings/rankings.csv`` holds the human evaluation of SQuALITY
(Wang et al. 2022): 4 expert workers ranked and rated, per question, the summaries of BART,
BART+DPR and a human writer on correctness, selection and overall. The counts below were
computed from the source file by ``convert.py`` and are documented in the data set's
README; the same rows are also read as absolute 0-100 ratings, so the study can be compared
across kinds of judgment.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from raterstats import IntervalScale, read_comparisons, read_ratings

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "squality_rankings"
CSV = DATA / "rankings.csv"
DIMENSIONS = ("correctness", "overall", "selection")


@pytest.fixture(scope="module")
def rankings():
    return read_comparisons(CSV)


def test_reads_as_rankings_with_the_documented_counts(rankings):
    assert rankings.kind == "rankings"
    assert rankings.n_judgments == 900  # 100 questions x 3 workers x 3 dimensions
    assert rankings.data.height == 2700  # every ranking orders all 3 systems
    assert rankings.systems == ("bart", "bart-dpr", "human")
    assert rankings.dimensions == DIMENSIONS
    assert rankings.raters == ("w2", "w3", "w6", "w8")
    assert len(rankings.questions) == 100
    assert len({q.split("/")[0] for q in rankings.questions}) == 20  # passages
    assert rankings.exclusions == ()
    assert rankings.provenance.ignored_columns == ("rating",)
    assert rankings.data.group_by("ranking").len()["len"].to_list() == [3] * 900
    assert rankings.data["rank"].is_in([1.0, 2.0, 3.0]).all()


def test_summary_links_every_system_in_each_dimension(rankings):
    cells = rankings.summary().cells
    assert cells["dimension"].to_list() == list(DIMENSIONS)
    assert cells["components"].to_list() == [1, 1, 1]
    assert cells["judgments"].to_list() == [300, 300, 300]
    assert cells["pairs"].to_list() == [3, 3, 3]
    assert cells["tie_share"].to_list() == [0.0, 0.0, 0.0]  # no tied ranks in the source


def test_to_pairs_gives_three_pairs_per_ranking(rankings):
    pairs = rankings.to_pairs()
    assert pairs.kind == "pairs"
    assert pairs.n_judgments == 2700
    assert (pairs.data["outcome"] != 0).all()


def test_ranks_never_contradict_the_same_workers_ratings():
    """Documented in the README: 0 pairs ranked against their ratings, 77 rating ties
    broken by the rank."""
    f = pl.read_csv(CSV)
    a = f.join(f, on=["question", "rater", "dimension"]).filter(
        pl.col("system") < pl.col("system_right")
    )
    against = a.filter(
        (pl.col("rank") < pl.col("rank_right")) & (pl.col("rating") < pl.col("rating_right"))
        | (pl.col("rank") > pl.col("rank_right")) & (pl.col("rating") > pl.col("rating_right"))
    )
    assert a.height == 2700
    assert against.height == 0
    assert a.filter(pl.col("rating") == pl.col("rating_right")).height == 77


def test_reads_as_absolute_ratings_on_a_0_100_interval_scale():
    f = pl.read_csv(CSV).with_columns(
        pl.concat_str("question", pl.lit("|"), "system").alias("item")
    )
    r = read_ratings(f.drop("rank"), scale=IntervalScale(0, 100), name="squality")
    assert r.n_ratings == 2700
    assert len(r.items) == 300  # question x system
    assert r.raters == ("w2", "w3", "w6", "w8")
    assert r.dimensions == DIMENSIONS
    assert r.systems == ("bart", "bart-dpr", "human")
    assert r.data["question"].n_unique() == 100
    assert all(isinstance(s, IntervalScale) for s in r.scales.values())
