"""System rankings with uncertainty: exact values on small inputs, and (slow) calibration
over replicated simulations and the ArchEHR-like subsampling study."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import xarray as xr

from raterstats import MACE, NominalScale, OrdinalScale, read_ratings
from raterstats.agreement import kendall_tau_b, rbo, spearman_rho
from raterstats.descriptive import case_difficulty, label_distributions
from raterstats.ranking import (
    compare_rankings,
    rank_draws,
    rank_systems,
    rank_table,
    ranking_agreement,
    summarize_ranking,
)
from raterstats.ratings import Ratings


def _draws(values, systems=("a", "b", "c")):
    arr = np.asarray(values, dtype=float)[None]
    return xr.DataArray(arr, dims=("chain", "draw", "system"), coords={"system": list(systems)})


# ---------------------------------------------------------------------------- summaries


def test_summary_by_hand():
    # draws: a > b > c, a > c > b, b > a > c, a > b > c
    d = _draws([[3, 2, 1], [3, 1, 2], [2, 3, 1], [5, 4, 0]])
    ds = summarize_ranking(d)
    pb = ds["p_better"]
    assert float(pb.sel(system="a", system_b="b")) == 0.75
    assert float(pb.sel(system="a", system_b="c")) == 1.0
    assert float(pb.sel(system="c", system_b="b")) == 0.25
    assert float(pb.sel(system="a", system_b="a")) == 0.0
    rp = ds["rank_prob"].sel(system=["a", "b", "c"]).values
    np.testing.assert_allclose(rp, [[0.75, 0.25, 0.0], [0.25, 0.5, 0.25], [0.0, 0.25, 0.75]])
    np.testing.assert_allclose(ds["expected_rank"].values, [1.25, 2.0, 2.75])
    np.testing.assert_allclose(ds["score_mean"].values, [13 / 4, 10 / 4, 4 / 4])
    np.testing.assert_allclose(
        float(ds["diff_mean"].sel(system="a", system_b="c")), (2 + 1 + 1 + 5) / 4
    )
    assert ds.attrs["n_draws"] == 4


def test_rank_probabilities_sum_to_one_with_ties_and_extra_dims():
    rng = np.random.default_rng(1)
    vals = rng.integers(0, 3, size=(2, 50, 2, 5)).astype(float)  # many ties
    d = xr.DataArray(
        vals,
        dims=("chain", "draw", "dimension", "system"),
        coords={"dimension": ["x", "y"], "system": list("pqrst")},
    )
    ds = summarize_ranking(d, random_seed=3)
    np.testing.assert_allclose(ds["rank_prob"].sum("rank"), 1.0)
    np.testing.assert_allclose(ds["rank_prob"].sum("system"), 1.0)
    np.testing.assert_allclose(ds["expected_rank"].sum("system"), 15.0)
    assert ds["rank_prob"].dims == ("dimension", "system", "rank")


def test_rank_draws_is_a_permutation_and_breaks_ties_at_random():
    rng = np.random.default_rng(0)
    r = rank_draws(np.zeros((2000, 3)), rng)
    assert (np.sort(r, axis=1) == [1, 2, 3]).all()
    # every system gets rank 1 about a third of the time
    np.testing.assert_allclose((r == 1).mean(axis=0), 1 / 3, atol=0.04)
    assert rank_draws(np.array([[1.0, 5.0, 3.0]]), rng, descending=False).tolist() == [[1, 3, 2]]


def test_lower_is_better():
    ds = summarize_ranking(_draws([[1, 2, 3], [1, 3, 2]]), higher_is_better=False)
    assert float(ds["rank_prob"].sel(system="a", rank=1)) == 1.0
    assert float(ds["p_better"].sel(system="a", system_b="b")) == 1.0


def test_verdicts_and_rope():
    d = _draws([[10.0, 0.0, 0.01], [11.0, 0.02, 0.0], [12.0, 0.0, 0.02]])
    ds = summarize_ranking(d, rope=0.1, ci_prob=0.9)
    v = ds["verdict"]
    assert v.sel(system="a", system_b="b").item().startswith("a is better than b (credible at 90%")
    assert v.sel(system="b", system_b="a").item().startswith("b is worse than a")
    assert "practically equivalent" in v.sel(system="b", system_b="c").item()
    assert v.sel(system="a", system_b="a").item() == ""
    assert float(ds["p_rope"].sel(system="b", system_b="c")) == 1.0
    no_rope = summarize_ranking(d)
    assert "no credible difference" in no_rope["verdict"].sel(system="b", system_b="c").item()
    assert "p_rope" not in no_rope


def test_summary_input_errors():
    with pytest.raises(ValueError, match="at least two systems"):
        summarize_ranking(_draws([[1.0]], systems=("a",)))
    with pytest.raises(ValueError, match="dims 'chain'"):
        summarize_ranking(xr.DataArray([1.0, 2.0], dims="system"))
    with pytest.raises(ValueError, match="rope"):
        summarize_ranking(_draws([[1, 2, 3]]), rope=-1)


# ---------------------------------------------------------------------------- raw ratings


@pytest.fixture
def small():
    """Two questions x two systems, three raters; yes / partially / no."""
    rows = [
        # item, system, question, rater, rating
        ("q1-A", "A", "q1", "x", "yes"),
        ("q1-A", "A", "q1", "y", "yes"),
        ("q1-A", "A", "q1", "z", "no"),
        ("q1-B", "B", "q1", "x", "no"),
        ("q1-B", "B", "q1", "y", "partially"),
        ("q1-B", "B", "q1", "z", "no"),
        ("q2-A", "A", "q2", "x", "partially"),
        ("q2-A", "A", "q2", "y", "partially"),
        ("q2-A", "A", "q2", "z", "yes"),
        ("q2-B", "B", "q2", "x", "yes"),
        ("q2-B", "B", "q2", "y", "no"),
        ("q2-B", "B", "q2", "z", "no"),
    ]
    frame = pl.DataFrame(
        rows, orient="row", schema=["item", "system", "question", "rater", "rating"]
    )
    return read_ratings(frame, scale=NominalScale(["yes", "partially", "no"]))


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        # item scores (yes 1, partially .5, no 0): q1-A 2/3, q2-A 2/3; q1-B 1/6, q2-B 1/3
        ("mean", {"A": 2 / 3, "B": 0.25}),
        # sums: q1-A 2, q2-A 2; q1-B 0.5, q2-B 1
        ("pyramid", {"A": 2.0, "B": 0.75}),
        # majority: q1-A yes, q2-A partially; q1-B no, q2-B no
        ("majority", {"A": 0.75, "B": 0.0}),
    ],
)
def test_raw_baselines_by_hand(small, method, expected):
    ds = rank_systems(small, method=method, score_map="yes_partially_no", n_boot=0)
    got = ds["score_mean"].sel(dimension="default")
    for s, v in expected.items():
        assert float(got.sel(system=s)) == pytest.approx(v)
    assert float(ds["rank_prob"].sel(dimension="default", system="A", rank=1)) == 1.0


def test_raw_bootstrap_resamples_cases_and_is_reproducible(small):
    a = rank_systems(small, method="mean", score_map="yes_partially_no", n_boot=300, random_seed=4)
    b = rank_systems(small, method="mean", score_map="yes_partially_no", n_boot=300, random_seed=4)
    xr.testing.assert_identical(a, b)
    # resampling the two questions: system A's mean is 2/3 in every replicate (both its
    # items score 2/3), system B's is 1/6, 1/4 or 1/3 with probabilities 1/4, 1/2, 1/4
    sa = a["score"].sel(dimension="default", system="A").values
    np.testing.assert_allclose(sa, 2 / 3)
    sb = a["score"].sel(dimension="default", system="B").values.ravel()
    assert set(np.round(sb, 6)) <= {round(1 / 6, 6), 0.25, round(1 / 3, 6)}
    assert abs(np.mean(np.isclose(sb, 0.25)) - 0.5) < 0.1


def test_raw_input_errors(small):
    with pytest.raises(ValueError, match="non-numeric categories"):
        rank_systems(small, method="mean", n_boot=0)
    with pytest.raises(ValueError, match="method must be one of"):
        rank_systems(small, method="median", score_map="yes_partially_no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no score to"):
        rank_systems(small, method="mean", score_map={"yes": 1.0, "no": 0.0})
    no_system = read_ratings(
        pl.DataFrame({"item": ["a", "b"], "rater": ["x", "x"], "rating": [1, 2]})
    )
    with pytest.raises(ValueError, match="'system' column"):
        rank_systems(no_system, method="mean")
    with pytest.raises(TypeError, match="DataTree or Ratings"):
        rank_systems([1, 2, 3])  # type: ignore[arg-type]


def test_mace_fit_ranks_from_its_own_item_map_and_matches_unanimous_labels():
    # unanimous raters: the label posteriors are (nearly) certain, so the system scores are
    # those of the raw labels
    rows = []
    truth = {"s1": ["yes", "yes", "partially"], "s2": ["no", "partially", "no"]}
    for sys_name, labels in truth.items():
        for q, lab in enumerate(labels):
            for rater in ("x", "y", "z"):
                rows.append((f"q{q}-{sys_name}", sys_name, f"q{q}", rater, lab))
    frame = pl.DataFrame(
        rows, orient="row", schema=["item", "system", "question", "rater", "rating"]
    )
    r = read_ratings(frame, scale=NominalScale(["yes", "partially", "no"]))
    dt = MACE(hierarchical=False).fit(r, method="em", random_seed=1)
    # the fit stores its item -> system map: no ratings needed; ratings= only cross-checks
    ds = rank_systems(dt, score_map="yes_partially_no", labels="map", n_boot=0)
    checked = rank_systems(dt, ratings=r, score_map="yes_partially_no", labels="map", n_boot=0)
    xr.testing.assert_identical(ds["score_mean"], checked["score_mean"])
    with pytest.raises(ValueError, match="ratings= has systems"):
        rank_systems(dt, ratings=r.filter(system="s1"), score_map="yes_partially_no")
    got = ds["score_mean"].sel(dimension="default")
    assert float(got.sel(system="s1")) == pytest.approx(2.5 / 3)
    assert float(got.sel(system="s2")) == pytest.approx(0.5 / 3)
    expected = rank_systems(r, method="majority", score_map="yes_partially_no", n_boot=0)
    np.testing.assert_allclose(
        ds["score_mean"].values, expected["score_mean"].values, rtol=0, atol=1e-12
    )

    # every raw-rating baseline side by side: on unanimous labels mean, majority and the EM
    # labels of MACE / Dawid-Skene give the label scores, Pyramid three times them (3 raters)
    sources = {
        m: rank_systems(r, method=m, score_map="yes_partially_no", n_boot=0)
        for m in ("mean", "majority", "pyramid", "mace", "dawid_skene")
    }
    side = compare_rankings({**sources, "MACE fit": ds})
    assert side.columns == [
        "source", "dimension", "system", "score_mean", "score_low", "score_high",
        "expected_rank", "p_rank_1",
    ]  # fmt: skip
    assert side["source"].to_list() == [m for m in (*sources, "MACE fit") for _ in (1, 2)]
    assert side["system"].to_list() == ["s1", "s2"] * 6
    scale = [3.0 if m == "pyramid" else 1.0 for m in (*sources, "MACE fit") for _ in (1, 2)]
    np.testing.assert_allclose(
        side["score_mean"].to_numpy(), np.array(scale) * np.tile([2.5 / 3, 0.5 / 3], 6), atol=1e-3
    )
    assert side["p_rank_1"].to_list() == [1.0, 0.0] * 6


def test_compare_rankings_folds_extra_dims_into_the_source():
    d = xr.DataArray(
        np.array([[[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]], [[3.0, 1.0], [1.5, 1.0]]]]),
        dims=("chain", "draw", "design", "system"),
        coords={"design": ["coarse", "fine"], "system": ["a", "b"]},
    )
    model = summarize_ranking(d)
    flat = summarize_ranking(d.sel(design="coarse", drop=True))
    side = compare_rankings({"model": model, "raw": flat}, digits=2)
    assert side["source"].to_list() == ["model, coarse"] * 2 + ["model, fine"] * 2 + ["raw"] * 2
    assert "design" not in side.columns
    assert side["system"].to_list() == ["a", "b", "b", "a", "a", "b"]
    # fine: b > a in 2 of 3 draws
    fine_b = side.filter(pl.col("source") == "model, fine", pl.col("system") == "b")
    assert fine_b["p_rank_1"].item() == pytest.approx(0.67)
    with pytest.raises(ValueError, match="at least one"):
        compare_rankings({})


def test_ordinal_scores_numeric_levels_need_no_score_map():
    frame = pl.DataFrame(
        {
            "item": ["i1", "i1", "i2", "i2"],
            "rater": ["x", "y", "x", "y"],
            "rating": [1, 3, 5, 4],
            "system": ["s", "s", "t", "t"],
        }
    )
    r = read_ratings(frame, scale=OrdinalScale.likert(5))
    ds = rank_systems(r, method="mean", n_boot=0)
    assert ds["score_mean"].sel(dimension="default").values.tolist() == [2.0, 4.5]
    t = rank_table(ds)
    assert t["system"].to_list() == ["t", "s"]
    assert t["p_rank_1"].to_list() == [1.0, 0.0]


# ---------------------------------------------------------------------------- agreement


def test_ranking_agreement_points_equal_the_point_functions():
    x = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0, "e": 0.0}
    y = {"a": 3.0, "b": 4.0, "c": 2.0, "d": 0.0, "e": 1.0}
    ds = ranking_agreement(x, y, p=0.8)
    xs, ys = list(x.values()), list(y.values())
    assert ds.sizes["sample"] == 1
    assert float(ds["mean"].sel(statistic="kendall_tau_b")) == pytest.approx(kendall_tau_b(xs, ys))
    assert float(ds["mean"].sel(statistic="kendall_tau_b")) == pytest.approx(0.6)
    assert float(ds["mean"].sel(statistic="spearman_rho")) == pytest.approx(spearman_rho(xs, ys))
    assert float(ds["mean"].sel(statistic="rbo")) == pytest.approx(
        rbo(list("abcde"), list("baced"), p=0.8)
    )
    # the reference's best (a) is second of five in the candidate: (2 - 1) / 4
    assert float(ds["mean"].sel(statistic="normalized_rank_position")) == pytest.approx(0.25)


def test_ranking_agreement_with_a_posterior_side():
    post = _draws([[3, 2, 1], [1, 2, 3], [3, 1, 2]])
    ds = ranking_agreement({"a": 3, "b": 2, "c": 1}, post, statistics=["kendall_tau_b"])
    vals = np.sort(ds["value"].sel(statistic="kendall_tau_b").values)
    # three draws paired with the point ranking: tau 1, -1 and 1/3
    np.testing.assert_allclose(np.unique(vals), np.unique([-1.0, 1 / 3, 1.0]))
    assert ds.sizes["sample"] == 3
    summary = summarize_ranking(post)
    same = ranking_agreement(summary, {"a": 3, "b": 2, "c": 1}, statistics=["kendall_tau_b"])
    np.testing.assert_allclose(np.sort(same["value"].values.ravel()), vals)


def test_ranking_agreement_errors():
    post = summarize_ranking(
        xr.DataArray(
            np.zeros((1, 2, 2, 2)),
            dims=("chain", "draw", "dimension", "system"),
            coords={"dimension": ["p", "q"], "system": ["a", "b"]},
        )
    )
    with pytest.raises(ValueError, match=r"select one value of \['dimension'\]"):
        ranking_agreement(post, {"a": 1, "b": 2})
    with pytest.raises(ValueError, match="unknown statistics"):
        ranking_agreement({"a": 1, "b": 2}, {"a": 1, "b": 2}, statistics=["pearson"])
    with pytest.raises(ValueError, match="fewer than two systems"):
        ranking_agreement({"a": 1, "b": 2}, {"a": 1, "c": 2})


# ---------------------------------------------------------------------------- tables


def test_label_distributions_by_hand(small):
    t = label_distributions(small)
    allr = t.filter(pl.col("aggregation") == "all ratings", pl.col("system") == "A")
    assert dict(zip(allr["rating"], allr["n"], strict=True)) == {"no": 1, "partially": 2, "yes": 3}
    maj = t.filter(pl.col("aggregation") == "majority", pl.col("system") == "B")
    assert dict(zip(maj["rating"], maj["share"], strict=True)) == {"no": 1.0}
    dt = MACE(hierarchical=False).fit(small, method="em", random_seed=1)
    with_model = label_distributions(small, fit=dt)
    model = with_model.filter(pl.col("aggregation") == "model")
    assert model["n"].sum() == 4
    assert set(model["rating"].to_list()) <= {"yes", "partially", "no"}


def test_case_difficulty_by_hand(small):
    t = case_difficulty(small, score_map="yes_partially_no")
    # q1: A 2/3, B 1/6 -> mean 5/12; q2: A 2/3, B 1/3 -> mean 1/2
    assert t["question"].to_list() == ["q1", "q2"]
    np.testing.assert_allclose(t["mean"].to_numpy(), [5 / 12, 0.5])
    np.testing.assert_allclose(
        t["sd_across_systems"].to_numpy(),
        [np.std([2 / 3, 1 / 6], ddof=1), np.std([2 / 3, 1 / 3], ddof=1)],
    )
    assert t["n_systems"].to_list() == [2, 2]


# ---------------------------------------------------------------------------- ordinal fits


def test_rank_systems_from_an_ordinal_fit(tiny_ordinal_fit):
    from raterstats.models.ordinal import system_scores

    ds = rank_systems(tiny_ordinal_fit)
    assert ds["rank_prob"].dims == ("dimension", "design", "system", "rank")
    np.testing.assert_allclose(ds["rank_prob"].sum("rank"), 1.0)
    np.testing.assert_allclose(ds["rank_prob"].sum("system"), 1.0)
    fair = system_scores(tiny_ordinal_fit)["fair_average"]
    np.testing.assert_allclose(
        ds["score_mean"].transpose("dimension", "design", "system").values,
        fair.mean(("chain", "draw")).transpose("dimension", "design", "system").values,
    )
    latent = rank_systems(tiny_ordinal_fit, score="latent")
    assert latent["rank_prob"].dims == ("dimension", "system", "rank")
    assert latent.attrs["source"] == "ordinal_raters (latent)"


# ---------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_archehr_mace_subsampled_rankings_agree_with_the_full_ranking():
    """MACE rankings with 1, 2 and 3 raters per response against the full (5-rater)
    ranking; Pyramid and MACE rankings are concordant."""
    from raterstats.simulate import archehr_like_study

    study = archehr_like_study(raters_per_response=5, random_seed=11)
    r = study.ratings.filter(dimension="answers_question")
    sm = "yes_partially_no"
    full = rank_systems(
        MACE().fit(r, method="em", random_seed=1), ratings=r, score_map=sm, labels="expected",
        n_boot=0,
    )  # fmt: skip
    full_scores = full["score_mean"].sel(dimension="answers_question")
    rng = np.random.default_rng(5)
    taus = {}
    for k in (1, 2, 3):
        keep = (
            r.data.select("item", "rater")
            .unique()
            .with_columns(
                pl.lit(rng.random(r.data.select("item", "rater").unique().height)).alias("u")
            )
            .with_columns(pl.col("u").rank("ordinal").over("item").alias("rk"))
            .filter(pl.col("rk") <= k)
        )
        sub_frame = r.data.join(keep.select("item", "rater"), on=["item", "rater"])
        sub_r = Ratings(sub_frame, r.scales)
        dt = MACE().fit(sub_r, method="em", random_seed=1)
        ds = rank_systems(dt, ratings=sub_r, score_map=sm, labels="expected", n_boot=0)
        taus[k] = kendall_tau_b(
            full_scores.values, ds["score_mean"].sel(dimension="answers_question").values
        )
    assert taus[1] < taus[3]
    assert taus[3] > 0.8, taus
    pyr = rank_systems(r, method="pyramid", score_map=sm, n_boot=0)
    tau_pm = kendall_tau_b(pyr["score_mean"].values.ravel(), full_scores.values)
    assert tau_pm > 0.8, tau_pm


@pytest.mark.slow
def test_ranking_probabilities_are_calibrated_over_replicated_studies():
    """Confidence against accuracy over replicated clinical-QA studies: the posterior
    probability of the most probable ranking (and of the favoured order of each pair)
    matches how often it is the true one."""
    from raterstats.models import OrdinalRaters
    from raterstats.simulate import clinical_qa_study

    conf_rank, hit_rank, conf_pair, hit_pair, p_true = [], [], [], [], []
    for rep in range(14):
        study = clinical_qa_study(n_questions=12, random_seed=100 + rep, llm_judge=False)
        dt = OrdinalRaters().fit(
            study.ratings, draws=250, tune=250, chains=2, random_seed=rep, progress=False
        )
        ds = rank_systems(dt, score="latent", random_seed=rep)
        truth = study.truth["system_effect"]
        for dim in ds["dimension"].values:
            true_s = truth.sel(dimension=dim).sel(system=ds["system"].values).values
            true_rank = np.argsort(np.argsort(-true_s)) + 1
            ranks = rank_draws(
                ds["score"].sel(dimension=dim).transpose("chain", "draw", "system").values,
                np.random.default_rng(rep),
            ).reshape(-1, true_s.size)
            keys, counts = np.unique(ranks, axis=0, return_counts=True)
            best = keys[np.argmax(counts)]
            conf_rank.append(counts.max() / counts.sum())
            hit_rank.append(float((best == true_rank).all()))
            p_true.append(float((ranks == true_rank).all(axis=1).mean()))
            pb = ds["p_better"].sel(dimension=dim).values
            m = true_s.size
            for a in range(m):
                for b in range(a + 1, m):
                    fav_a = pb[a, b] >= 0.5
                    conf_pair.append(max(pb[a, b], 1 - pb[a, b]))
                    hit_pair.append(float(fav_a == (true_s[a] > true_s[b])))
    n_r, n_p = len(conf_rank), len(conf_pair)
    # calibration within about two binomial standard errors (+ a small allowance)
    assert abs(np.mean(conf_rank) - np.mean(hit_rank)) < 2 * np.sqrt(0.25 / n_r) + 0.03
    assert abs(np.mean(conf_pair) - np.mean(hit_pair)) < 2 * np.sqrt(0.25 / n_p) + 0.03
    assert np.mean(p_true) > 0.2


def test_rank_systems_from_a_mace_posterior_uses_its_draws():
    from raterstats.simulate import archehr_like_study

    r = archehr_like_study(n_cases=10, n_systems=4, random_seed=1).ratings.filter(
        dimension="answers_question"
    )
    dt = MACE().fit(r, draws=60, tune=60, chains=2, random_seed=1, progress=False)
    ds = rank_systems(dt, ratings=r, score_map="yes_partially_no", n_boot=0, max_draws=100)
    assert ds.attrs["n_draws"] == 100  # 100 of the 120 posterior draws, one label set each
    np.testing.assert_allclose(ds["rank_prob"].sum("rank"), 1.0)
    np.testing.assert_allclose(ds["rank_prob"].sum("system"), 1.0)
    boot = rank_systems(dt, ratings=r, score_map="yes_partially_no", n_boot=300)
    assert boot.attrs["n_draws"] == 300
    # expected scores average the label samples: same mean up to Monte Carlo error
    exp = rank_systems(dt, ratings=r, score_map="yes_partially_no", labels="expected", n_boot=0)
    np.testing.assert_allclose(exp["score_mean"], ds["score_mean"], atol=0.05)
