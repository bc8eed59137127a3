"""The latent-class models' answers to the post-fit questions (item posteriors, rater
summaries, system scores), dispatched by the registry: the same numbers as the functions
they replace, from the fit alone."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from raterstats import MACE, DawidSkene, item_posterior, rater_summary, read_ratings
from raterstats.defaults import ci_prob
from raterstats.models import model_from_datatree
from raterstats.posterior import coverage_accuracy
from raterstats.ranking import rank_systems, summarize_ranking

SEED = 2


def _score_map(ratings):
    return {
        d: {str(lv): float(i) for i, lv in enumerate(ratings.scale_for(d).levels)}
        for d in ratings.dimensions
    }


@pytest.fixture(scope="module")
def em_fits(small_archehr):
    r = small_archehr.ratings
    return {
        "mace": MACE().fit(r, method="em", random_seed=1),
        "dawid_skene": DawidSkene(pooling="pooled").fit(r, method="em", random_seed=1),
    }


@pytest.mark.parametrize("name", ["mace", "dawid_skene"])
@pytest.mark.parametrize(("labels", "n_boot"), [("sample", 40), ("expected", 0), ("map", 25)])
def test_system_score_draws_equal_the_ranking_of_the_ratings(
    name, labels, n_boot, em_fits, small_archehr
):
    """Scores from the item -> system map the fit stores give exactly the ranking that
    ``rank_systems(fit, ratings=...)`` computes from the ratings."""
    dt, r = em_fits[name], small_archehr.ratings
    sm = _score_map(r)
    draws = model_from_datatree(dt).system_score_draws(
        dt, score="fair_average", score_map=sm, labels=labels, n_boot=n_boot, max_draws=250,
        rng=np.random.default_rng(SEED),
    )  # fmt: skip
    assert draws.dims == ("chain", "draw", "dimension", "system")
    assert draws.attrs["source"] == f"{name} (em fit)"
    assert sorted(draws["system"].values) == sorted(r.data["system"].unique().to_list())
    ours = summarize_ranking(draws, ci_prob=0.9, random_seed=SEED)
    theirs = rank_systems(
        dt,
        ratings=r,
        score_map=sm,
        labels=labels,
        n_boot=n_boot,
        ci_prob=0.9,
        random_seed=SEED,
    )
    for v in theirs.data_vars:
        xr.testing.assert_equal(ours[v], theirs[v])  # exact values; attrs aside


def test_system_scores_survive_a_saved_fit(em_fits, small_archehr, tmp_path):
    dt = em_fits["mace"]
    path = tmp_path / "fit.nc"
    dt.to_netcdf(path)
    back = xr.open_datatree(path)
    kw = {"score": "latent", "score_map": _score_map(small_archehr.ratings), "labels": "sample",
          "n_boot": 30, "max_draws": 250}  # fmt: skip
    a = MACE().system_score_draws(dt, rng=np.random.default_rng(1), **kw)
    b = MACE().system_score_draws(back, rng=np.random.default_rng(1), **kw)
    xr.testing.assert_identical(a, b)


def test_system_scores_need_a_system_column(small_archehr):
    r = small_archehr.ratings
    frame = r.data.select("item", "rater", "dimension", "rating")
    bare = read_ratings(frame, scale=r.scales)
    dt = MACE(hierarchical=False).fit(bare, method="em", random_seed=1)
    assert set(dt["constant_data"]["unit_system"].values) == {""}
    kw = {"score": "latent", "score_map": _score_map(r), "labels": "map", "n_boot": 0,
          "max_draws": 1, "rng": np.random.default_rng(0)}  # fmt: skip
    with pytest.raises(ValueError, match="the fitted ratings had no 'system' column"):
        MACE().system_score_draws(dt, **kw)
    # a fit saved before the map was stored says so (and to fit again)
    old = dt.copy()
    old["constant_data"] = xr.DataTree(
        dt["constant_data"].to_dataset().drop_vars(["unit_system", "unit_question"])
    )
    with pytest.raises(ValueError, match=r"does not store which system.*fit the ratings again"):
        MACE().system_score_draws(old, **kw)
    with pytest.raises(ValueError, match="labels must be"):
        MACE().system_score_draws(dt, **{**kw, "labels": "mode"})


def test_fits_store_each_units_system_and_question(em_fits, small_archehr):
    const = em_fits["mace"]["constant_data"]
    table = small_archehr.ratings.data.select("item", "system", "question").unique()
    want = dict(zip(table["item"].to_list(), table["system"].to_list(), strict=True))
    got = dict(zip(const["item"].values, const["unit_system"].values, strict=True))
    assert got == want
    q = dict(zip(table["item"].to_list(), table["question"].to_list(), strict=True))
    assert dict(zip(const["item"].values, const["unit_question"].values, strict=True)) == q


@pytest.mark.parametrize("name", ["mace", "dawid_skene"])
def test_rater_summary_and_item_posterior_dispatch_to_the_model(name, em_fits):
    dt = em_fits[name]
    from raterstats.diagnostics import flag_result

    model = model_from_datatree(dt)
    # the functions add the fit's health (issue 17) to the model's answer
    xr.testing.assert_identical(
        rater_summary(dt), flag_result(model.rater_summary(dt, ci_prob=ci_prob()), dt)
    )
    xr.testing.assert_identical(
        item_posterior(dt, coverage=0.7), flag_result(model.item_posterior(dt, coverage=0.7), dt)
    )
    assert "EM point estimate" in rater_summary(dt).attrs["uncertainty_note"]
    summ = rater_summary(dt, ci_prob=0.5)
    assert summ.attrs["ci_prob"] == 0.5 and summ.attrs["model"] == name
    quantities = {"mace": ("competence", "spam", "typical_competence"),
                  "dawid_skene": ("confusion", "accuracy")}[name]  # fmt: skip
    for q in quantities:
        for stat in ("mean", "sd", "low", "high"):
            assert f"{q}_{stat}" in summ
    with pytest.raises(ValueError, match="ci_prob must be in"):
        rater_summary(dt, ci_prob=1.5)
    assert rater_summary(dt, ci_prob=None).attrs["ci_prob"] > 0


def test_rater_summary_intervals_are_the_equal_tailed_quantiles(small_archehr):
    # several draws: the interval is the 5% and 95% quantiles (linear), as before
    dt = MACE(hierarchical=False).fit(small_archehr.ratings, method="em", random_seed=1)
    post = dt["posterior"].to_dataset()
    rng = np.random.default_rng(3)
    comp = np.clip(
        np.repeat(post["competence"].values, 50, axis=1) + rng.normal(0, 0.05, (1, 50, 20, 3, 1)),
        0.01,
        0.99,
    )
    fake = dt.copy()
    fake["posterior"] = xr.DataTree(
        post.drop_vars("draw")
        .isel(draw=[0] * 50)
        .assign(competence=(post["competence"].dims, comp))
    )
    summ = rater_summary(fake, ci_prob=0.9)
    q = np.quantile(comp, [0.05, 0.95], axis=(0, 1))
    np.testing.assert_allclose(summ["competence_low"].values, q[0], rtol=1e-12)
    np.testing.assert_allclose(summ["competence_high"].values, q[1], rtol=1e-12)
    np.testing.assert_allclose(summ["competence_mean"].values, comp.mean(axis=(0, 1)))


def test_models_without_true_labels_do_not_answer():
    dt = xr.DataTree()
    dt.attrs.update({"model": "ordinal_raters", "priors": "{}", "options": "{}"})
    with pytest.raises(
        TypeError,
        match=r"models that answer item_posterior: Community\w+, DawidSkene, \w+, GLAD, MACE",
    ):
        item_posterior(dt)
    dt.attrs["model"] = "length_effect"  # answers none of the post-fit questions
    with pytest.raises(TypeError, match=r"models that answer rater_summary: .*MACE"):
        rater_summary(dt)
    for q in ("item_posterior", "rater_summary", "system_score_draws"):
        assert MACE.answers(q) and DawidSkene.answers(q)


def test_coverage_accuracy_uses_the_models_item_posterior(small_archehr):
    r = small_archehr.ratings.filter(dimension="answers_question")
    dt = MACE().fit(r, method="em", random_seed=1)
    levels = r.scale_for("answers_question").levels
    truth = small_archehr.truth["true_label"].sel(dimension="answers_question")
    gold = {i: levels[int(k)] for i, k in zip(truth["item"].values, truth.values, strict=True)}
    curve = coverage_accuracy(dt, gold, coverages=[0.5, 1.0])
    post = item_posterior(dt)
    full = float((post["label"].isel(dimension=0) == [gold[i] for i in post["item"].values]).mean())
    assert float(curve["accuracy"].sel(coverage=1.0)) == pytest.approx(full)
