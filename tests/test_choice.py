"""Gold-free model choice (raterstats.choice): the held-out split, the held-out score against
a hand computation, the choice on data where one model is clearly right, the fit that
carries its comparison, and the argument checks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import xarray as xr

import raterstats as rs
from raterstats import schema as S
from raterstats.choice import RULE, choose_model, fit, heldout_folds
from raterstats.simulate import archehr_like_study


def _systematic(n_items: int = 240, seed: int = 0) -> rs.Ratings:
    """Five raters label every item (K = 3): three are right 85% of the time, two
    systematically answer the next class (t + 1 mod 3) 80% of the time, a confusion that
    Dawid-Skene describes and MACE (right, or a guess from one spam distribution) cannot."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=n_items, p=[0.5, 0.3, 0.2])
    rows = []
    for i, t in enumerate(truth):
        for j in range(5):
            if j < 3:
                y = t if rng.random() < 0.85 else rng.choice([k for k in range(3) if k != t])
            else:
                y = (t + 1) % 3 if rng.random() < 0.8 else rng.integers(3)
            rows.append((f"i{i:03d}", f"r{j}", ["a", "b", "c"][int(y)]))
    frame = pl.DataFrame(rows, schema=["item", "rater", "rating"], orient="row")
    return rs.read_ratings(frame, scale=rs.NominalScale(["a", "b", "c"]))


def test_heldout_folds_keep_every_unit_and_rater_in_the_fit() -> None:
    r = archehr_like_study(n_cases=5, n_systems=6, random_seed=2).ratings
    fold = heldout_folds(r, folds=3, fraction=0.1, random_seed=7)
    d = r.data.with_columns(pl.Series("fold", fold))
    target = round(0.1 * r.n_ratings)
    assert [int((fold == f).sum()) for f in range(3)] == [target] * 3
    for f in range(3):
        train = d.filter(pl.col("fold") != f)
        # every unit and every rater cell of the data keeps a rating in the fit
        assert train.select(pl.struct(S.ITEM, S.SEGMENT, S.DIMENSION).n_unique()).item() == (
            d.select(pl.struct(S.ITEM, S.SEGMENT, S.DIMENSION).n_unique()).item()
        )
        assert train.select(pl.struct(S.RATER, S.DIMENSION, S.DESIGN).n_unique()).item() == (
            d.select(pl.struct(S.RATER, S.DIMENSION, S.DESIGN).n_unique()).item()
        )
    # seeded: the same split again, another seed another split
    assert np.array_equal(fold, heldout_folds(r, folds=3, fraction=0.1, random_seed=7))
    assert not np.array_equal(fold, heldout_folds(r, folds=3, fraction=0.1, random_seed=8))


def test_singly_rated_units_are_never_held_out() -> None:
    frame = pl.DataFrame(
        {
            "item": ["a", "b", "b", "c", "c", "c"],
            "rater": ["x", "x", "y", "x", "y", "z"],
            "rating": ["p", "p", "q", "q", "q", "p"],
        }
    )
    r = rs.read_ratings(frame, scale=rs.NominalScale(["p", "q"]))
    fold = heldout_folds(r, folds=1, fraction=1.0, random_seed=0)
    assert fold[0] == -1  # item a has one rating
    assert (fold >= 0).sum() >= 1


def test_heldout_score_equals_the_hand_computation() -> None:
    """The held-out score of a unit is log p(all its ratings) - log p(its fitted ratings)
    under the parameters fitted without the held-out ratings: computed here from the EM
    fit's confusion matrices and prevalence by hand."""
    r = _systematic(n_items=60, seed=3)
    choice = choose_model(r, ["dawid_skene", "mace"], folds=1, fraction=0.1, random_seed=5)
    fold = heldout_folds(r, folds=1, fraction=0.1, random_seed=5)
    train = r.derive(r.data.filter(pl.Series(fold != 0)), step="train")
    dt = rs.DawidSkene().fit(train, method="em", random_seed=5)
    conf = dt.posterior["confusion"].isel(chain=0, draw=0, dimension=0, design=0)
    prev = dt.posterior["prevalence"].isel(chain=0, draw=0, dimension=0).values
    raters = list(conf["rater"].values)
    log_conf = np.log(conf.values)  # (rater, true, rated)
    d = r.data.with_columns(pl.Series("fold", fold))
    total = 0.0
    for _, g in d.group_by("item"):
        j = np.array([raters.index(x) for x in g["rater"]])
        y = g["code"].to_numpy()
        held = g["fold"].to_numpy() == 0
        full = np.log(prev) + log_conf[j, :, y].sum(axis=0)
        kept = np.log(prev) + log_conf[j[~held], :, y[~held]].sum(axis=0)
        total += np.logaddexp.reduce(full) - np.logaddexp.reduce(kept)
    got = float(choice.table["elpd"].sel(model="dawid_skene"))
    assert got == pytest.approx(total, rel=1e-9, abs=1e-9)
    assert int(choice.table.attrs["n_scored"]) == int((fold == 0).sum())


def test_systematic_confusions_choose_dawid_skene_clearly() -> None:
    choice = choose_model(_systematic(), ["mace", "dawid_skene"], random_seed=1)
    t = choice.table
    assert choice.chosen == "dawid_skene"
    assert list(t["model"].values) == ["dawid_skene", "mace"]
    diff = float(t["elpd_diff"].sel(model="mace"))
    assert diff < -4 * float(t["se_diff"].sel(model="mace"))
    assert t.attrs["criterion"] == "heldout" and t.attrs["rule"] == RULE
    text = str(choice)
    assert "chosen: dawid_skene" in text and "from the best" in text


def test_auto_fit_carries_its_comparison_and_reloads(tmp_path) -> None:
    r = _systematic(n_items=120, seed=4)
    dt = fit(r, "auto", candidates=["mace", "dawid_skene"], method="em", random_seed=2)
    assert dt.attrs["model"] == "dawid_skene"
    assert dt.attrs["model_choice"].startswith("dawid_skene chosen by heldout")
    assert "model_choice" in dt.children
    path = tmp_path / "auto.nc"
    dt.to_netcdf(path)
    back = xr.open_datatree(path)
    assert str(back["model_choice"].attrs["chosen"]) == "dawid_skene"
    assert list(back["model_choice"]["model"].values) == ["dawid_skene", "mace"]
    # the same as choosing, then fitting the chosen model
    again = rs.DawidSkene().fit(r, method="em", random_seed=2)
    assert np.allclose(dt.posterior["confusion"], again.posterior["confusion"])


def test_fit_by_name_class_or_instance() -> None:
    r = archehr_like_study(n_cases=3, n_systems=4, random_seed=1).ratings
    a = fit(r, "ds", method="em", random_seed=1)
    b = fit(r, rs.DawidSkene, method="em", random_seed=1)
    c = fit(r, rs.DawidSkene(), method="em", random_seed=1)
    assert a.attrs["model"] == b.attrs["model"] == c.attrs["model"] == "dawid_skene"
    with pytest.raises(ValueError, match="candidates apply to model='auto'"):
        fit(r, "mace", candidates=["mace"])
    with pytest.raises(TypeError, match="model is 'auto'"):
        fit(r, 3)


def test_loo_choice_reuses_its_nuts_fits() -> None:
    r = _systematic(n_items=60, seed=6)
    choice = choose_model(
        r, ["mace", "dawid_skene"], criterion="loo", draws=150, tune=150, chains=2,
        random_seed=3,
    )  # fmt: skip
    t = choice.table
    assert t.attrs["criterion"] == "loo" and set(choice.fits) == {"mace", "dawid_skene"}
    assert int(t.attrs["n_scored"]) == r.n_ratings
    assert np.isfinite(t["elpd"]).all() and float(t["elpd_diff"].isel(model=0)) == 0.0
    dt = choice.fit(r)
    assert dt.attrs["model"] == choice.chosen and "model_choice" in dt.children
    assert dt.posterior.sizes["draw"] == 150  # the comparison's fit, not a new one


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"criterion": "bic"}, "criterion must be one of"),
        ({"folds": 0}, "folds must be 1..10"),
        ({"fraction": 0.6, "folds": 2}, r"fraction must be in \(0, 1 / folds\]"),
        ({"draws": 100}, "apply to criterion='loo'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message) -> None:
    r = archehr_like_study(n_cases=2, n_systems=3, random_seed=1).ratings
    with pytest.raises(ValueError, match=message):
        choose_model(r, ["mace", "dawid_skene"], **kwargs)


def test_bad_candidates_are_named() -> None:
    r = archehr_like_study(n_cases=2, n_systems=3, random_seed=1).ratings
    with pytest.raises(ValueError, match="at least two candidates"):
        choose_model(r, ["mace"])
    with pytest.raises(ValueError, match="unknown model 'nope'"):
        choose_model(r, ["mace", "nope"])
    with pytest.raises(ValueError, match="given twice"):
        choose_model(r, ["ds", "dawid_skene"])
    # the same class with other options is another candidate, named by its options
    choice = choose_model(r, ["dawid_skene", rs.DawidSkene(pooling="one_coin")], folds=1)
    assert set(choice.table["model"].values) == {
        "dawid_skene",
        "DawidSkene(pooling='one_coin')",
    }


def test_the_analysis_reports_the_choice_beside_its_fit(tmp_path) -> None:
    """analyze() compares the models of the true label before its categorical fit, says
    whether the fitted model is the one preferred, and writes the table as CSV."""
    out = tmp_path / "report"
    rs.analyze(
        _systematic(n_items=120, seed=8),
        out,
        options=rs.AnalyzeOptions(fit_settings={"mace": {"method": "em"}}),
    )
    text = (out / "report.md").read_text()
    head = "## Which model of the true label describes these ratings?"
    assert text.index(head) < text.index("## Categorical rater model: MACE")
    section = text[text.index(head) : text.index("## Categorical rater model: MACE")]
    assert "The held-out ratings prefer **dawid_skene** (by " in section
    table = pl.read_csv(out / "model_choice.csv")
    assert table["model"].to_list()[0] == "dawid_skene" and table["rank"].to_list()[0] == 0


def test_a_candidate_whose_training_fits_fail_their_checks_is_noted() -> None:
    """Held-out comparison: GLAD's EM fits of the training sets land in a labelling with
    mostly adversarial raters (two copies of a 7-rating design where the raters disagree on
    every item they share), fail their own check, and the comparison's note says so instead
    of warnings from inside it; MACE's fits pass and carry no note."""
    import warnings

    from raterstats.diagnostics import ConvergenceWarning

    base = [("0", "s0", "r0", 5), ("1", "s1", "r0", 1), ("2", "s1", "r0", 2),
            ("2", "s1", "r1", 1), ("3", "s2", "r0", 1), ("4", "s3", "r0", 2),
            ("4", "s3", "r1", 1)]  # fmt: skip
    rows = [(f"{b}-{i}", s, rater, v) for b in range(2) for (i, s, rater, v) in base]
    frame = pl.DataFrame(rows, orient="row", schema=["item", "system", "rater", "rating"])
    r = rs.read_ratings(frame, scale=rs.OrdinalScale.likert(5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        choice = choose_model(r, candidates=["glad", "mace"], random_seed=0)
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    notes = dict(choice.frame().select("model", "note").rows())
    assert notes["mace"] == ""
    assert notes["glad"].startswith("its fit fails its checks on 2 of 3 training set(s): ")
    assert "ratings come from raters whose ability is negative (adversarial)" in notes["glad"]
