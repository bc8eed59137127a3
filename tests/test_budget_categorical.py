"""issue 23: annotation budgets and partial annotation from categorical (MACE, Dawid-Skene)
fits: label accuracy by majority vote and by the model, kappa with the truth, ranking
recovery and cost per design, raters and sentences, by simulation from the posterior."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from functools import cache

import numpy as np
import polars as pl
import pytest
import xarray as xr

from raterstats import MACE, DawidSkene, OrdinalScale, read_ratings
from raterstats.demo.run import schemes
from raterstats.design import (
    annotation_budget,
    cheapest_design,
    combine_schemes,
    partial_annotation,
)
from raterstats.ratings import Ratings
from raterstats.simulate import clinical_qa_study

RATERS = ("Dr. Ä", "Dr. B", "Dr. C", "Dr. D")
SYSTEMS = ("sys a", "sys b", "sys c")


@cache
def _study() -> tuple[Ratings, xr.DataTree]:
    """The built-in study's three demo schemes in one table, and its MACE EM fit."""
    both = combine_schemes(schemes(clinical_qa_study(n_questions=8, random_seed=3).ratings))
    return both, MACE().fit(both, method="em", random_seed=1)


@cache
def _planted() -> tuple[Ratings, xr.DataTree]:
    """A panel of four raters who always give the true label, a whole-answer and a
    sentence-level design, three systems of different quality; a Dawid-Skene fit whose
    confusion matrices are set to the identity (the planted perfect panel)."""
    rng = np.random.default_rng(5)
    rows = []
    probs = ([0.5, 0.3, 0.2], [0.3, 0.4, 0.3], [0.1, 0.3, 0.6])
    for i in range(36):
        m = i % 3
        item = f"answer {i:02d} / {SYSTEMS[m]}"
        labels = [("coarse", None, rng.choice(3, p=probs[m]))]
        labels += [("fine", f"s{s}", rng.choice(3, p=probs[m])) for s in range(1 + i % 4)]
        for design, seg, lab in labels:
            for rater in RATERS:
                rows.append((item, seg, rater, int(lab) + 1, design, SYSTEMS[m]))
    frame = pl.DataFrame(
        rows, orient="row", schema=["item", "segment", "rater", "rating", "design", "system"]
    )
    r = read_ratings(frame, scale=OrdinalScale.likert(3))
    dt = DawidSkene().fit(r, method="em", random_seed=1)
    post = dt["posterior"].to_dataset()
    post["confusion"] = xr.zeros_like(post["confusion"]) + np.eye(3)
    dt["posterior"] = xr.DataTree(post)
    return r, dt


def _spammer_crowd() -> tuple[Ratings, xr.DataTree]:
    """Three raters right 70% of the time and one who labels at random; a Dawid-Skene
    fit."""
    rng = np.random.default_rng(11)
    truth = rng.choice(3, size=300)
    rows = []
    for i, t in enumerate(truth):
        for j, rater in enumerate(("a", "b", "c", "spam")):
            if j < 3:
                lab = t if rng.random() < 0.7 else rng.choice([c for c in range(3) if c != t])
            else:
                lab = rng.choice(3)
            rows.append((f"item-{i}", rater, int(lab) + 1, SYSTEMS[i % 3]))
    frame = pl.DataFrame(rows, orient="row", schema=["item", "rater", "rating", "system"])
    r = read_ratings(frame, scale=OrdinalScale.likert(3))
    return r, DawidSkene().fit(r, method="em", random_seed=1)


def test_shapes_and_coords_on_the_built_in_study() -> None:
    """issue 23: the budget of a fit of the combined demo schemes has the ordinal layout,
    with base dimensions and the user's design names as coordinates."""
    both, dt = _study()
    b = annotation_budget(dt, both, n_raters=[1, 3, 5], n_sentences=[1, 4], n_sims=20,
                          max_workers=1, random_seed=2)  # fmt: skip
    assert b["p_correct_majority"].dims == ("dimension", "design", "n_raters", "k")
    assert list(b["dimension"].values) == ["correctness", "relevance", "safety"]
    assert list(b["design"].values) == list(both.designs)
    assert b["has_sentences"].values.tolist() == [False, True, False]
    assert b["cost_hours"].dims == ("design", "n_raters", "k")
    ls = b["label_space"].sel(dimension="correctness")
    assert ls.values.tolist() == ["correctness", "correctness", "correctness (fine binary)"]
    for v in ("p_correct_majority", "p_correct_model", "p_recovered"):
        x = b[v].values
        assert np.isfinite(x).all() and (x >= 0).all() and (x <= 1).all(), v
    # kappa is undefined where the truth is one category in every simulated study: said
    rel = b["reliability"]
    assert (rel.fillna(0) <= 1).all()
    for dim, des in zip(*np.nonzero(np.isnan(rel.values).all(axis=(2, 3))), strict=True):
        space = str(b["label_space"].values[dim, des])
        assert repr(space) in b.attrs["reliability_note"]
    # whole-answer designs and per-sentence accuracy repeat along k; cost grows with k
    assert (b["p_correct_model"].isel(k=0) == b["p_correct_model"].isel(k=1)).all()
    assert (b["p_recovered"].sel(design="coarse 3-point").diff("k") == 0).all()
    fine = b["cost_hours"].sel(design="fine 3-point")
    assert (fine.diff("k") > 0).all() and (fine.diff("n_raters") > 0).all()
    assert b.attrs["n_sims"] == 20 and b.attrs["n_draws"] == 1
    assert "EM point estimate" in b.attrs["uncertainty_note"]
    assert "reliability_measure" in b.attrs
    # cheapest_design on the categorical criteria
    for on in ("p_correct_majority", "p_correct_model", "reliability"):
        cheap = cheapest_design(b, target=0.8, on=on)
        assert cheap.height >= 1 and (cheap["value"] >= 0.8).all()


def test_p_correct_increases_with_raters() -> None:
    """issue 23: more raters per unit give more correct labels, by majority vote (odd r:
    with two raters a tie is broken at random) and by the model."""
    both, dt = _study()
    b = annotation_budget(dt, both, n_raters=[1, 3, 5], n_sentences=[1], n_sims=60,
                          max_workers=1, random_seed=3)  # fmt: skip
    maj = b["p_correct_majority"].isel(k=0)
    mod = b["p_correct_model"].isel(k=0)
    assert (maj.diff("n_raters") >= 0).all()
    assert (mod.diff("n_raters") > -0.01).all()
    for p in (maj, mod):  # strictly, where one rater is not always right already
        gain = p.sel(n_raters=5) - p.sel(n_raters=1)
        assert ((gain > 0) | (p.sel(n_raters=1) > 0.995)).all()
    assert (maj.sel(n_raters=5) - maj.sel(n_raters=1)).max() > 0.1
    # kappa: on the sentences (126 units; 24 answers make a noisy kappa)
    rel = b["reliability"].isel(k=0).sel(design="fine 3-point")
    assert (rel.diff("n_raters") > 0).all()


def test_planted_perfect_panel_gives_one_everywhere() -> None:
    """issue 23: raters who always give the true label: every label correct, kappa 1 and
    the system ranking recovered (sentence-level: with every sentence rated)."""
    r, dt = _planted()
    b = annotation_budget(dt, r, n_raters=[1, 2, 4], n_sentences=[1, 4], n_sims=10,
                          max_workers=1, random_seed=1, seconds_per_unit={"coarse": 60,
                          "fine": 20})  # fmt: skip
    for v in ("p_correct_majority", "p_correct_model", "reliability"):
        assert (b[v] == 1).all(), v
    whole = b.sel(design="coarse")
    assert (whole["p_recovered"] == 1).all() and (whole["expected_tau"] == 1).all()
    every = b.sel(design="fine", k=4)  # the longest answer has 4 sentences
    assert (every["p_recovered"] == 1).all() and (every["expected_tau"] == 1).all()
    # cost: 36 answers x r x 60 s; sentences: min(k, n_sentences) per answer x 20 s
    assert b["cost_hours"].sel(design="coarse", n_raters=2, k=1) == pytest.approx(36 * 2 / 60)
    n_sent = np.array([1 + i % 4 for i in range(36)])
    assert b["cost_hours"].sel(design="fine", n_raters=1, k=1) == pytest.approx(36 * 20 / 3600)
    assert b["cost_hours"].sel(design="fine", n_raters=1, k=4) == pytest.approx(
        n_sent.sum() * 20 / 3600
    )
    assert "per sentence" in b.attrs["unit_note"]
    # with a rule, sentence-level designs report the answer's label from k sentences
    a = annotation_budget(dt, r, n_raters=[1, 4], n_sentences=[1, 2, 4], n_sims=20,
                          max_workers=1, random_seed=1, rule="any_negative",
                          seconds_per_unit={"coarse": 60, "fine": 20})  # fmt: skip
    fine = a["p_correct_majority"].sel(design="fine")
    assert (fine.diff("k") > 0).all() and (fine.sel(k=4) == 1).all()
    assert (a["reliability"].sel(design="fine", k=4) == 1).all()
    assert (a["p_correct_model"].sel(design="coarse") == 1).all()
    assert "any_negative" in a.attrs["unit_note"]


def test_model_label_beats_majority_vote_with_a_spammer() -> None:
    """issue 23: with a spammer in the panel, the model's label (which knows the spammer's
    labels carry nothing) is right more often than the majority vote of the same raters."""
    r, dt = _spammer_crowd()
    b = annotation_budget(dt, r, n_raters=[4], n_sentences=[1], n_sims=40, max_workers=1,
                          random_seed=1, seconds_per_unit={"default": 30})  # fmt: skip
    maj = float(b["p_correct_majority"].squeeze())
    mod = float(b["p_correct_model"].squeeze())
    assert mod > maj + 0.03, (maj, mod)
    assert b["panel_size"].item() == 4
    # a fifth rater is more than the panel: NaN, said in the attrs
    b5 = annotation_budget(dt, r, n_raters=[4, 5], n_sentences=[1], n_sims=5, max_workers=1,
                           random_seed=1, seconds_per_unit={"default": 30})  # fmt: skip
    assert np.isnan(b5["p_correct_model"].sel(n_raters=5)).all()
    assert "panel" in b5.attrs["panel_note"]


def test_results_do_not_depend_on_the_executor() -> None:
    """issue 23: every task has its own seed stream: one worker, threads and processes
    give identical results for the same seed."""
    both, dt = _study()
    kw = {"n_raters": [1, 2], "n_sentences": [1, 3], "n_sims": 8, "random_seed": 7}
    one = annotation_budget(dt, both, max_workers=1, **kw)
    with ThreadPoolExecutor(2) as ex:
        threads = annotation_budget(dt, both, executor=ex, **kw)
    with ProcessPoolExecutor(2) as ex:
        procs = annotation_budget(dt, both, executor=ex, **kw)
    xr.testing.assert_identical(one, threads)
    xr.testing.assert_identical(one, procs)
    p_one = partial_annotation(dt, both, design="fine 3-point", ks=[1, 2], n_raters=[3],
                               n_subsets=8, max_workers=1, random_seed=7)  # fmt: skip
    with ThreadPoolExecutor(2) as ex:
        p_thr = partial_annotation(dt, both, design="fine 3-point", ks=[1, 2], n_raters=[3],
                                   n_subsets=8, executor=ex, random_seed=7)  # fmt: skip
    xr.testing.assert_identical(p_one, p_thr)


def test_partial_annotation_increases_with_k_and_reaches_the_full_value() -> None:
    """issue 23: the answer label from k sentences (any_negative) is right more often as k
    grows, and with k = every sentence it equals the full-annotation value."""
    r, dt = _planted()
    p = partial_annotation(dt, r, ks=range(1, 5), n_raters=[1, 3], n_subsets=50,
                           max_workers=1, random_seed=1)  # fmt: skip
    maj = p["p_correct_majority_mean"].sel(dimension="default")
    assert (maj.diff("k") > 0).all()
    assert (maj.sel(k=4) == 1).all() and (maj.sel(k=1) < 0.95).all()
    assert p["rule"].values.tolist() == ["any_negative"]
    assert int(p["max_sentences"].item()) == 4
    # the built-in study: k = 6 is every sentence; same simulated labels as the full value
    both, fit = _study()
    q = partial_annotation(fit, both, design="fine 3-point", ks=[1, 3, 6], n_raters=[5],
                           n_subsets=30, max_workers=1, random_seed=4,
                           rule={"correctness": "any_negative", "relevance": "any_positive",
                                 "safety": "any_positive"})  # fmt: skip
    assert q["p_correct_majority_mean"].dims == ("dimension", "n_raters", "k")
    assert q["rule"].values.tolist() == ["any_negative", "any_positive", "any_positive"]
    assert (q["max_sentences"] == 6).all()
    for m in ("majority", "model"):
        np.testing.assert_array_equal(
            q[f"p_correct_{m}_mean"].sel(k=6).values, q[f"p_correct_{m}_full"].values
        )
    low, high = q["p_correct_model_low"], q["p_correct_model_high"]
    assert ((low <= high) & (low >= 0) & (high <= 1)).all()


def test_bad_input_and_missing_columns_are_said() -> None:
    """issue 23: no durations, a whole-answer design for partial annotation, a rule that
    gives no label, fit options with ratings: clear errors; no system column: the ranking
    is NaN and the attrs say why."""
    r, dt = _spammer_crowd()
    with pytest.raises(ValueError, match=r"duration_s.*seconds_per_unit"):
        annotation_budget(dt, r, n_sims=2, max_workers=1)
    with pytest.raises(ValueError, match="positive number"):
        annotation_budget(dt, r, n_sims=2, max_workers=1, seconds_per_unit={"default": -1})
    with pytest.raises(ValueError, match="no durations for designs"):
        annotation_budget(dt, r, n_sims=2, max_workers=1, seconds_per_unit={"other": 1})
    with pytest.raises(ValueError, match="rates whole answers"):
        partial_annotation(dt, r, design="default", n_subsets=2)
    pr, pdt = _planted()
    with pytest.raises(ValueError, match="does not give the answer a label"):
        partial_annotation(pdt, pr, rule="mean", n_subsets=2)
    with pytest.raises(ValueError, match="no design 'coarse 3-point'"):
        partial_annotation(pdt, pr, design="coarse 3-point", n_subsets=2)
    with pytest.raises(TypeError, match="apply to a fit"):
        partial_annotation(pr, rule="any_negative")
    with pytest.raises(ValueError, match="fitted ratings too"):
        partial_annotation(pdt)
    no_sys = read_ratings(r.data.drop("system").select("item", "rater", "rating"),
                          scale=OrdinalScale.likert(3))  # fmt: skip
    fit = DawidSkene().fit(no_sys, method="em", random_seed=1)
    b = annotation_budget(fit, no_sys, n_raters=[2], n_sentences=[1], n_sims=3, max_workers=1,
                          seconds_per_unit={"default": 5})  # fmt: skip
    assert np.isnan(b["p_recovered"]).all() and np.isfinite(b["p_correct_model"]).all()
    assert "'system' column" in b.attrs["ranking_note"]


def test_short_nuts_fit_draws_from_the_posterior_and_carries_its_health() -> None:
    """issue 23: from a (short, failing) NUTS fit, each simulated study uses its own
    posterior draw, and the result carries the fit's warning."""
    r = clinical_qa_study(n_questions=4, random_seed=2).ratings.filter(design="coarse")
    dt = MACE().fit(r, draws=30, tune=30, chains=1, random_seed=1, progress=False)
    b = annotation_budget(dt, r, n_raters=[1, 3], n_sentences=[1], n_sims=20, max_workers=1,
                          random_seed=1)  # fmt: skip
    assert b.attrs["n_draws"] == 20
    assert "fit_warning" in b.attrs
    lo, hi = b["p_correct_model_low"], b["p_correct_model_high"]
    assert (lo <= hi).all() and (hi > lo).any()


def test_ordinal_budget_carries_the_fits_health() -> None:
    """issue 23 (noticed while building the categorical budget): the ordinal budget of a
    fit that fails its checks says so, like every other result computed from a fit."""
    import warnings

    from raterstats.design import annotation_budget
    from raterstats.models import OrdinalRaters
    from raterstats.simulate import clinical_qa_study

    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dt = OrdinalRaters().fit(r, draws=30, tune=30, chains=1, random_seed=1, progress=False)
    b = annotation_budget(dt, r, n_raters=[1], n_sentences=[2], n_sims=2, max_workers=1)
    assert dt.attrs["health_ok"] == 0
    assert "failed its convergence checks" in b.attrs["fit_warning"]
