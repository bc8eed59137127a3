"""The simulated studies: exact design, reproducibility, truth."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats.simulate import (
    CLINICAL_DIMENSIONS,
    CLINICAL_SYSTEMS,
    archehr_like_study,
    clinical_qa_study,
)


def _events(d: pl.DataFrame) -> pl.DataFrame:
    """One row per (rater, answer, design, repeat) rating event."""
    return d.select("rater", "item", "design", "repeat", "batch", "phase", "order").unique()


def test_clinical_design_exact(study):
    d = study.ratings.data
    humans = d.filter(pl.col("rater_kind") == "human")
    llm = d.filter(pl.col("rater_kind") == "llm")
    assert study.ratings.items == tuple(
        sorted(f"q{q:03d}-{s}" for q in range(1, 101) for s in CLINICAL_SYSTEMS)
    )
    assert study.ratings.dimensions == tuple(sorted(CLINICAL_DIMENSIONS))
    assert sorted(humans["rater"].unique().to_list()) == [f"p{k}" for k in range(1, 7)]
    # groups of 3, each rating all 3 answers to its 50 questions
    groups = humans.group_by("group").agg(
        pl.col("rater").n_unique().alias("raters"),
        pl.col("question").n_unique().alias("questions"),
        pl.col("item").n_unique().alias("items"),
    )
    assert sorted(groups.rows()) == [("A", 3, 50, 150), ("B", 3, 50, 150)]
    ev = _events(humans)
    first = ev.filter(~pl.col("repeat"))
    # every physician rates each of its 150 answers exactly once coarse and once fine
    per = first.group_by("rater", "design").agg(
        pl.len().alias("n"), pl.col("item").n_unique().alias("u")
    )
    assert per["n"].to_list() == [150] * 12 and per["u"].to_list() == [150] * 12
    # every answer gets 3 physicians per design (first ratings)
    per_item = first.group_by("item", "design").agg(pl.col("rater").n_unique().alias("n"))
    assert per_item["n"].unique().to_list() == [3] and per_item.height == 600
    # batches: 10 coarse, 8 fine (new), 10 fine (seen coarse), 8 coarse (seen fine), 2 repeat
    for rater in ("p1", "p4"):
        mine = ev.filter(pl.col("rater") == rater)
        phases = (
            mine.group_by("phase")
            .agg(pl.col("batch").n_unique().alias("b"), pl.len().alias("n"))
            .sort("phase")
        )
        assert dict(phases.select("phase", "b").iter_rows()) == {
            "coarse-new": 10,
            "fine-new": 8,
            "fine-seen": 10,
            "coarse-seen": 8,
            "repeat": 2,
        }
        assert dict(phases.select("phase", "n").iter_rows()) == {
            "coarse-new": 90,
            "fine-new": 60,
            "fine-seen": 90,
            "coarse-seen": 60,
            "repeat": 12,
        }
        sizes = mine.filter(pl.col("phase") == "coarse-new").group_by("batch").len()
        assert sizes["len"].unique().to_list() == [9]
        # answers seen coarse first are the ones rated fine in the third phase
        cn = set(mine.filter(pl.col("phase") == "coarse-new")["item"].to_list())
        fs = set(mine.filter(pl.col("phase") == "fine-seen")["item"].to_list())
        assert cn == fs
        # order runs 1..312 without gaps, batches in sequence
        assert sorted(mine["order"].to_list()) == list(range(1, 313))
        # the repeats: 6 early answers, in both designs, at the end
        rep = mine.filter(pl.col("repeat"))
        assert rep.height == 12
        assert rep.group_by("design").len().sort("design")["len"].to_list() == [6, 6]
        first_batch = set(mine.filter(pl.col("batch") == 1)["item"].to_list())
        assert set(rep["item"].to_list()) <= first_batch
        assert rep["order"].min() > mine.filter(~pl.col("repeat"))["order"].max()
    # fine: up to 6 sentences per answer, the same sentences for every rater
    fine = d.filter(pl.col("design") == "fine", ~pl.col("repeat"), pl.col("dimension") == "safety")
    segs = fine.group_by("item").agg(pl.col("segment").n_unique().alias("n"))
    assert segs["n"].max() == 6 and segs["n"].min() >= 1
    per_rater = fine.group_by("item", "rater").agg(pl.col("segment").sort().alias("s"))
    assert per_rater.group_by("item").agg(pl.col("s").n_unique())["s"].max() == 1
    # the LLM judge rates every answer in both designs, no repeats
    llm_ev = _events(llm)
    assert llm_ev.group_by("design").len()["len"].to_list() == [300, 300]
    assert not llm["repeat"].any()
    # every rating event has all 3 dimensions
    counts = d.group_by("rater", "item", "segment", "design", "repeat").len()
    assert counts["len"].unique().to_list() == [3]


def test_clinical_lengths_durations_and_truth(study):
    d = study.ratings.data
    lengths = d.select("item", "system", "length").unique()
    means = dict(lengths.group_by("system").agg(pl.col("length").mean()).iter_rows())
    assert 85 < means["physician"] < 130
    assert 100 < means["llm-a"] < 150
    assert 145 < means["llm-b"] < 195
    per_answer = (
        d.filter(pl.col("rater_kind") == "human")
        .select("rater", "item", "design", "repeat", "duration_s")
        .unique()
    )
    dur = dict(per_answer.group_by("design").agg(pl.col("duration_s").mean()).iter_rows())
    assert 190 < dur["coarse"] < 290 and 380 < dur["fine"] < 540
    conf = d["confidence"].drop_nulls()
    assert conf.min() >= 1 and conf.max() <= 5
    t = study.truth
    assert t["severity"].dims == ("rater", "dimension", "design")
    assert t["eta"].sizes == {"item": 300, "dimension": 3}
    assert list(t["rater"].values) == [f"p{k}" for k in range(1, 7)] + ["llm-judge"]
    # the planted length bias: coarse only (physicians)
    lb = t["length_bias"]
    assert (lb.sel(design="coarse") > 0.3).all() and (lb.sel(design="fine") == 0).all()
    # fine is more reliable than coarse by construction
    rel = t["reliability"]
    assert (rel.sel(design="fine") > rel.sel(design="coarse")).all()
    # latent quality is the sum of its parts
    recon = (
        t["mu"]
        + t["system_effect"].sel(system=t["item_system"])
        + t["question_effect"].sel(question=t["item_question"])
        + t["residual"]
    )
    np.testing.assert_allclose(recon.transpose("item", "dimension").values, t["eta"].values)


def test_clinical_length_bias_is_visible_in_coarse_ratings(study):
    """Raw check of the planted effect: longer answers get higher coarse ratings than fine."""
    d = study.ratings.data.filter(pl.col("rater_kind") == "human", ~pl.col("repeat"))
    corr = {}
    for design in ("coarse", "fine"):
        x = (
            d.filter(pl.col("design") == design)
            .group_by("item")
            .agg(pl.col("value").mean(), pl.col("length").first().log())
        )
        corr[design] = np.corrcoef(x["value"], x["length"])[0, 1]
    assert corr["coarse"] > corr["fine"]


def test_same_seed_same_data_other_seed_other_data():
    a = clinical_qa_study(n_questions=10, random_seed=5)
    b = clinical_qa_study(n_questions=10, random_seed=5)
    c = clinical_qa_study(n_questions=10, random_seed=6)
    assert a.ratings == b.ratings
    assert a.truth.identical(b.truth)
    assert not a.ratings.data["rating"].equals(c.ratings.data["rating"])


def test_small_configurations_and_errors():
    s = clinical_qa_study(
        n_questions=4, n_groups=2, raters_per_group=2, llm_judge=False, n_repeats=2, random_seed=1
    )
    assert s.ratings.raters == ("p1", "p2", "p3", "p4")
    assert int(s.ratings.data["repeat"].sum()) > 0
    with pytest.raises(ValueError, match="split evenly"):
        clinical_qa_study(n_questions=5)
    with pytest.raises(ValueError, match="one value per dimension"):
        clinical_qa_study(length_bias=(0.1,))


def test_archehr_like_design():
    s = archehr_like_study(random_seed=3)
    r = s.ratings
    assert len(r.items) == 2800 and len(r.systems) == 28 and len(r.raters) == 20
    assert r.n_ratings == 2800 * 3 * 3
    per = r.data.group_by("item", "dimension").agg(pl.col("rater").n_unique().alias("n"))
    assert per["n"].unique().to_list() == [3]
    assert r.scale_for("uses_evidence").levels == ("yes", "no", "refutes")
    assert r.scale_for("uses_knowledge").levels == ("yes", "no", "conflicting")
    t = s.truth
    assert t["true_label"].sizes == {"item": 2800, "dimension": 3}
    assert int(t["spammer"].sum()) == 2
    # competent raters agree with the truth far more often than spammers
    d = r.data.with_columns(pl.col("code").cast(pl.Int64))
    truth = pl.DataFrame(
        {
            "item": np.repeat(t["item"].values, 3).tolist(),
            "dimension": np.tile(t["dimension"].values, 2800).tolist(),
            "true": t["true_label"].values.reshape(-1).tolist(),
        }
    )
    acc = (
        d.join(truth, on=["item", "dimension"])
        .group_by("rater")
        .agg((pl.col("code") == pl.col("true")).mean().alias("acc"))
    )
    spam = set(t["rater"].values[t["spammer"].values].tolist())
    good = acc.filter(~pl.col("rater").is_in(spam))["acc"]
    bad = acc.filter(pl.col("rater").is_in(spam))["acc"]
    assert good.min() > bad.max()
    assert archehr_like_study(random_seed=3).ratings == r
