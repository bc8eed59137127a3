"""The hard-crowd simulator (raterstats.simulate.hard_crowd): the design it promises (sparse,
heavy-tailed raters, distinct raters per item), the truth it returns, and the structure the
ratings show (class frequencies, communities' shared confusions, spammers, difficulty)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from raterstats.checks import ArgumentError
from raterstats.simulate import SimulatedStudy, hard_crowd
from raterstats.simulate_crowds import class_prevalence


@pytest.fixture(scope="module")
def crowd() -> SimulatedStudy:
    return hard_crowd(random_seed=7)


def codes(study: SimulatedStudy) -> pl.DataFrame:
    """The ratings with the true label and the rating as codes, and the rater's truth."""
    t = study.truth
    labels = [str(x) for x in t["category_label"].values]
    d = study.ratings.data.select("item", "rater", "rating")
    true = dict(zip(t["item"].values.tolist(), t["true_label"].values.tolist(), strict=True))
    com = dict(zip(t["rater"].values.tolist(), t["rater_community"].values.tolist(), strict=True))
    kind = dict(zip(t["rater"].values.tolist(), t["spammer_kind"].values.tolist(), strict=True))
    return d.with_columns(
        pl.col("rating").replace_strict({k: i for i, k in enumerate(labels)}).alias("code"),
        pl.col("item").replace_strict(true).alias("true"),
        pl.col("rater").replace_strict(com).alias("community"),
        pl.col("rater").replace_strict(kind).alias("kind"),
    )


def test_design_sparse_heavy_tailed_raters(crowd):
    t = crowd.truth
    d = crowd.ratings.data
    n = t["n_labels"].values
    assert crowd.ratings.n_ratings == 600 * 3
    assert t.sizes == {
        "item": 600, "rater": 150, "community": 3, "true": 5, "rated": 5, "category": 5,
    }  # fmt: skip
    # every rater gives at least one label; most give fewer than 10; a few give very many
    assert n.min() >= 1 and n.sum() == crowd.ratings.n_ratings
    assert np.mean(n < 10) > 0.6
    assert n.max() > 10 * np.median(n)
    counted = d.group_by("rater").len().sort("rater")
    assert counted["len"].to_list() == [
        int(n[list(t["rater"].values).index(r)]) for r in counted["rater"]
    ]
    # every item has 3 distinct raters
    per_item = d.group_by("item").agg(pl.len(), pl.col("rater").n_unique().alias("u"))
    assert per_item["len"].unique().to_list() == [3] and per_item["u"].unique().to_list() == [3]


def test_same_seed_same_data_and_config_records_every_knob():
    a = hard_crowd(n_items=80, n_raters=30, random_seed=3)
    b = hard_crowd(n_items=80, n_raters=30, random_seed=3)
    c = hard_crowd(n_items=80, n_raters=30, random_seed=4)
    assert a.ratings.data.equals(b.ratings.data)
    assert not a.ratings.data.equals(c.ratings.data)
    assert a.config["n_items"] == 80 and a.config["random_seed"] == 3
    assert {"difficulty_sd", "spammer_kinds", "confusion_rate", "activity_shape"} <= set(a.config)


def test_class_frequencies_follow_the_imbalance():
    s = hard_crowd(n_items=4000, n_raters=200, class_imbalance=8.0, random_seed=1)
    prev = class_prevalence(5, 8.0)
    assert prev[0] / prev[-1] == pytest.approx(8.0)
    np.testing.assert_allclose(s.truth["prevalence"].values, prev)
    freq = np.bincount(s.truth["true_label"].values, minlength=5) / 4000
    np.testing.assert_allclose(freq, prev, atol=0.025)


def test_communities_confusions_show_in_the_ratings():
    # no difficulty and raters at their community's matrix: the ratings of each community
    # show its own mistakes (true t rated b), and the other communities do not make them
    s = hard_crowd(
        n_items=3000, n_raters=60, labels_per_item=4, difficulty_sd=0.0,
        rater_concentration=None, spammer_fraction=0.0, random_seed=2,
    )  # fmt: skip
    t = s.truth
    c = codes(s)
    confused = t["confused_with"].values
    assert (confused >= 0).sum(axis=1).tolist() == [2, 2, 2]
    for m in range(3):
        for true, b in enumerate(confused[m]):
            if b < 0:
                continue
            rate = (
                c.filter((pl.col("true") == true) & (pl.col("community") == m))["code"] == b
            ).mean()
            expected = t["community_confusion"].values[m, true, b]
            assert rate == pytest.approx(expected, abs=0.05)
            others = [o for o in range(3) if confused[o, true] != b]
            rest = (
                c.filter((pl.col("true") == true) & pl.col("community").is_in(others))["code"] == b
            ).mean()
            assert rate > rest + 0.25  # a community's own mistake, not the crowd's


def test_spammers_uniform_and_constant():
    s = hard_crowd(n_items=3000, n_raters=40, spammer_fraction=0.5, random_seed=5)
    t = s.truth
    c = codes(s)
    kinds = t["spammer_kind"].values
    assert t["spammer"].values.sum() == 20
    assert set(kinds[t["spammer"].values]) == {"uniform", "constant"}
    assert (t["rater_community"].values[t["spammer"].values] == -1).all()
    # a constant spammer always gives the same label
    const = c.filter(pl.col("kind") == "constant").group_by("rater").agg(pl.col("code").n_unique())
    assert const["code"].to_list() == [1] * const.height
    # uniform spammers' labels are independent of the truth and spread evenly
    uni = c.filter(pl.col("kind") == "uniform")
    agree = (uni["code"] == uni["true"]).mean()
    assert agree == pytest.approx(0.2, abs=0.04)
    np.testing.assert_allclose(
        np.bincount(uni["code"].to_numpy(), minlength=5) / uni.height, 0.2, atol=0.04
    )


def test_difficulty_lowers_accuracy_on_hard_items():
    s = hard_crowd(
        n_items=3000, n_raters=50, difficulty_sd=1.0, spammer_fraction=0.0,
        confusions_per_community=0, random_seed=6,
    )  # fmt: skip
    t = s.truth
    c = codes(s)
    ease = dict(zip(t["item"].values.tolist(), t["item_easiness"].values.tolist(), strict=True))
    c = c.with_columns(pl.col("item").replace_strict(ease).alias("ease"))
    lo, hi = np.quantile(t["item_easiness"].values, [0.25, 0.75])
    hard = c.filter(pl.col("ease") < lo)
    easy = c.filter(pl.col("ease") > hi)
    assert (easy["code"] == easy["true"]).mean() > (hard["code"] == hard["true"]).mean() + 0.15
    np.testing.assert_allclose(t["item_difficulty"].values, 1.0 / t["item_easiness"].values)
    flat = hard_crowd(n_items=50, n_raters=20, difficulty_sd=0.0, random_seed=1)
    assert (flat.truth["item_easiness"].values == 1.0).all()


def test_dense_design_and_rater_confusions_are_rows():
    s = hard_crowd(n_items=40, n_raters=6, labels_per_item=6, activity_shape=None, random_seed=2)
    assert (s.truth["n_labels"].values == 40).all()
    conf = s.truth["rater_confusion"].values
    np.testing.assert_allclose(conf.sum(axis=-1), 1.0)
    acc = s.truth["rater_accuracy"].values
    assert ((acc > 0) & (acc < 1)).all()


def test_bad_arguments_are_listed_at_once():
    with pytest.raises(ArgumentError) as e:
        hard_crowd(
            n_classes=11, labels_per_item=0, accuracy=1.5, spammer_kinds=("bots",),
            prevalence=[0.5, 0.5], random_seed=-1,
        )  # fmt: skip
    text = str(e.value)
    for part in ("n_classes", "labels_per_item", "accuracy", "spammer_kinds", "random_seed"):
        assert part in text
    with pytest.raises(ArgumentError, match=r"labels_per_item .* exceeds n_raters"):
        hard_crowd(n_raters=3, labels_per_item=4)
    with pytest.raises(ArgumentError, match="prevalence must be 5 positive numbers"):
        hard_crowd(prevalence=[1, 2])
    with pytest.raises(ArgumentError, match="every rater gives at least one label"):
        hard_crowd(n_items=10, n_raters=50, labels_per_item=2)
