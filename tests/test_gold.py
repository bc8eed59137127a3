"""issue 17, "Gold labels are never used silently": latent-class models clamp their labels to
gold only when asked (``use_gold=True``, ``--use-gold``); otherwise gold is a check
(:func:`raterstats.posterior.gold_check`), and :func:`raterstats.posterior.item_labels` /
``raterstats labels`` write each item's label beside the majority vote and gold."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import xarray as xr
from typer.testing import CliRunner

from raterstats import MACE, DawidSkene, NominalScale, read_ratings
from raterstats.cli import app
from raterstats.health import fit_health
from raterstats.posterior import (
    GOLD_COVERAGES,
    LOG_LOSS_FLOOR,
    TIE_SEPARATOR,
    coverage_accuracy,
    gold_check,
    item_labels,
    item_posterior,
)

runner = CliRunner()
LEVELS = ["yes", "no", "unsure"]
#: item ids that need escaping somewhere (colons, the unit-id separators, text)
ODD = ["doc:1", "a|b", "x::y", "ü item"]
#: items whose gold label contradicts their unanimous raters
WRONG_GOLD = 5


def gold_frame(*, n_items: int = 60, seed: int = 0, dims: tuple[str, ...] = ("q",)):
    """Ratings of 5 raters (three good, one fair, one spammer) on ``n_items`` items with a
    ``gold`` column equal to the truth, except on the first ``WRONG_GOLD`` items, where
    every rater gives the truth and gold says otherwise; also returns the truth."""
    rng = np.random.default_rng(seed)
    items = ODD + [f"i{k:03d}" for k in range(n_items - len(ODD))]
    acc = [0.9, 0.85, 0.85, 0.7, 0.34]
    rows, truth = [], {}
    for dim in dims:
        for n, item in enumerate(items):
            t = int(rng.integers(0, 3))
            truth[(item, dim)] = LEVELS[t]
            gold = LEVELS[(t + 1) % 3] if n < WRONG_GOLD else LEVELS[t]
            for j, a in enumerate(acc):
                ok = n < WRONG_GOLD or rng.random() < a
                code = t if ok else int(rng.choice([k for k in range(3) if k != t]))
                rows.append((item, f"r{j}", dim, LEVELS[code], gold))
    frame = pl.DataFrame(
        rows, schema=["item", "rater", "dimension", "rating", "gold"], orient="row"
    )
    return frame, truth


def ratings_of(frame: pl.DataFrame):
    return read_ratings(frame, scale=NominalScale(LEVELS))


@pytest.fixture(scope="module")
def frame():
    return gold_frame()[0]


@pytest.fixture(scope="module")
def ratings(frame):
    return ratings_of(frame)


@pytest.fixture(scope="module")
def em_fit(ratings):
    return MACE().fit(ratings, method="em", random_seed=1)


def direct_check(dt, gold: dict[str, str]):
    """Accuracy, log loss, majority accuracy (ties: 1/k) and the coverage curve computed
    directly from item_posterior and a {item: gold level} map (one dimension)."""
    post = item_posterior(dt).isel(dimension=0)
    labels = list(post["category_label"].values.astype(str))
    keep = [str(i) in gold for i in post["unit_item"].values]  # the user's ids
    sel = post.isel(item=np.flatnonzero(keep))
    items = [str(i) for i in sel["unit_item"].values]
    g = np.array([labels.index(gold[i]) for i in items])
    correct = sel["map_code"].values == g
    p = sel["prob"].values[np.arange(len(items)), g]
    loss = -np.log(np.maximum(p, LOG_LOSS_FLOOR))
    votes = sel["votes"].values
    top = votes == votes.max(axis=1, keepdims=True)
    mv = top[np.arange(len(items)), g] / top.sum(axis=1)
    order = np.argsort(sel["entropy"].values, kind="stable")
    curve = [correct[order[: max(1, int(np.ceil(c * len(items) - 1e-9)))]].mean()
             for c in GOLD_COVERAGES]  # fmt: skip
    return correct.mean(), loss.mean(), mv.mean(), np.array(curve), len(items)


# ----------------------------------------------------------------------------- the default


def test_gold_does_not_clamp_by_default_and_is_checked(em_fit, frame):
    """issue 17 acceptance: fitted with the defaults, gold that contradicts the raters does
    not move the labels (they follow the raters), and accuracy against it is below 1."""
    assert MACE().options["use_gold"] is False and DawidSkene().options["use_gold"] is False
    assert em_fit["constant_data"].attrs["gold_used"] == 0
    table = item_labels(em_fit)
    wrong = table.filter(pl.col("item").is_in([*ODD[:WRONG_GOLD], "i000"]))
    assert (wrong["label"] == wrong["majority_vote"]).all()  # the raters, unanimous
    assert not wrong["gold_match"].any()
    check = gold_check(em_fit)
    assert check.attrs["gold_used"] == 0 and "note" not in check.attrs
    assert int(check["overall_n_gold"]) == 60
    assert 0.5 < float(check["overall_accuracy"]) < 1
    assert float(check["overall_accuracy"]) <= 1 - WRONG_GOLD / 60
    assert "gold not used in the fit" in check.attrs["summary"]
    assert check.attrs["uncertainty_note"].startswith("a point estimate (em)")


def test_gold_check_numbers_equal_a_direct_computation(em_fit, frame):
    """issue 17: accuracy, log loss, majority-vote accuracy and the coverage curve."""
    gold = dict(frame.select("item", "gold").unique().iter_rows())
    acc, loss, mv, curve, n = direct_check(em_fit, gold)
    check = gold_check(em_fit)
    assert int(check["n_gold"].sel(dimension="q")) == n
    assert float(check["accuracy"].sel(dimension="q")) == pytest.approx(acc)
    assert float(check["log_loss"].sel(dimension="q")) == pytest.approx(loss)
    assert float(check["majority_accuracy"].sel(dimension="q")) == pytest.approx(mv)
    np.testing.assert_allclose(check["coverage_accuracy"].sel(dimension="q").values, curve)
    assert check["coverage_accuracy"].dims == ("dimension", "coverage")
    np.testing.assert_allclose(check["coverage"].values, GOLD_COVERAGES)
    assert check["coverage_n"].sel(dimension="q").values[-1] == n
    assert float(check["overall_accuracy"]) == pytest.approx(acc)


def test_use_gold_clamps_and_the_check_says_it_is_not_independent(ratings):
    """issue 17: with use_gold=True gold clamps the labels, and gold_check says so."""
    dt = DawidSkene(use_gold=True).fit(ratings, method="em", random_seed=1)
    assert dt["constant_data"].attrs["gold_used"] == 1
    check = gold_check(dt)
    assert check.attrs["gold_used"] == 1
    assert "not an independent check" in check.attrs["note"]
    assert "not an independent check" in check.attrs["summary"]
    assert float(check["overall_accuracy"]) == 1.0
    assert float(check["overall_log_loss"]) == pytest.approx(0.0, abs=1e-12)
    table = item_labels(dt)
    assert table["gold_match"].all()


def test_gold_check_per_dimension_and_overall():
    """issue 17: per dimension and pooled; a dimension without gold holds NaN."""
    frame, _ = gold_frame(n_items=30, dims=("d1", "d2"))
    frame = frame.with_columns(
        pl.when(pl.col("dimension") == "d2").then(None).otherwise(pl.col("gold")).alias("gold")
    )
    dt = MACE().fit(ratings_of(frame), method="em", random_seed=1)
    check = gold_check(dt)
    assert list(check["dimension"].values) == ["d1", "d2"]
    assert int(check["n_gold"].sel(dimension="d2")) == 0
    assert np.isnan(float(check["accuracy"].sel(dimension="d2")))
    assert int(check["overall_n_gold"]) == 30
    assert float(check["overall_accuracy"]) == float(check["accuracy"].sel(dimension="d1"))
    table = item_labels(dt)
    assert table.filter(pl.col("dimension") == "d2")["gold"].null_count() == 30


# ----------------------------------------------------------------------------- item_labels


def test_item_labels_of_an_em_fit_with_the_users_ids(em_fit, frame):
    """issue 17: one row per unit with the user's own ids, the label, its probability and
    entropy, the majority vote, the number of ratings, gold and whether they match."""
    table = item_labels(em_fit)
    assert table.columns == [
        "unit", "item", "segment", "dimension", "label", "probability", "entropy",
        "majority_vote", "majority_tie", "majority_labels", "agrees_with_majority",
        "n_ratings", "gold", "gold_match",
    ]  # fmt: skip
    assert set(ODD) <= set(table["item"].to_list())
    assert table.height == 60 and (table["n_ratings"] == 5).all()
    post = item_posterior(em_fit).isel(dimension=0)
    row = table.filter(pl.col("item") == "a|b").row(0, named=True)
    p = post.sel(item=row["unit"])
    assert row["label"] == str(p["label"].values)
    assert row["probability"] == pytest.approx(float(p["map_prob"]))
    assert row["entropy"] == pytest.approx(float(p["entropy"]))
    gold = dict(frame.select("item", "gold").unique().iter_rows())
    assert table["gold"].to_list() == [gold[i] for i in table["item"].to_list()]
    assert (table["gold_match"] == (table["label"] == table["gold"])).all()


def test_segment_units_keep_the_users_ids(frame):
    """issue 17: a fit of segment ratings gives one row per (item, segment), with the ids as
    they are beside the unit id, and the check counts segments."""
    seg = pl.concat([frame.with_columns(pl.lit(s).alias("segment")) for s in ("s1", "s:2")]).select(
        "item", "segment", "rater", "dimension", "rating", "gold"
    )
    dt = MACE().fit(ratings_of(seg), method="em", random_seed=1)
    table = item_labels(dt)
    assert table.height == 120
    row = table.filter((pl.col("item") == "x::y") & (pl.col("segment") == "s:2")).row(0, named=True)
    assert (
        row["unit"] == "x\\:\\:y::s:2"
        and row["gold"] == frame.filter(pl.col("item") == "x::y")["gold"][0]
    )
    check = gold_check(dt)
    assert check.attrs["units"] == "segments" and int(check["overall_n_gold"]) == 120
    assert check.attrs["summary"].startswith("gold: 120 segments, accuracy")


def test_majority_ties_are_stated():
    """issue 17: a tied majority vote is stated, never broken silently."""
    frame = pl.DataFrame(
        {
            "item": ["t"] * 2 + ["u"] * 3 + ["v"] * 3,
            "rater": ["a", "b", "a", "b", "c", "a", "b", "c"],
            "rating": ["yes", "no", "no", "no", "yes", "yes", "yes", "yes"],
        }
    )
    dt = MACE().fit(ratings_of(frame), method="em", random_seed=1)
    rows = {r["item"]: r for r in item_labels(dt).iter_rows(named=True)}
    assert rows["t"]["majority_tie"] and rows["t"]["majority_vote"] is None
    assert set(rows["t"]["majority_labels"].split(TIE_SEPARATOR)) == {"yes", "no"}
    assert rows["u"]["majority_vote"] == "no" and not rows["u"]["majority_tie"]
    assert "gold" not in item_labels(dt).columns  # no gold column in the ratings


def test_item_labels_and_gold_check_of_a_nuts_fit(ratings, tmp_path):
    """issue 17: NUTS fits too (probabilities averaged over draws), the same after a
    netCDF round trip."""
    dt = DawidSkene().fit(ratings, draws=40, tune=40, chains=1, random_seed=2, progress=False)
    table = item_labels(dt)
    assert table.height == 60 and set(ODD) <= set(table["item"].to_list())
    assert ((table["probability"] > 0.3) & (table["probability"] <= 1)).all()
    check = gold_check(dt)
    assert 0.5 < float(check["overall_accuracy"]) < 1
    assert "uncertainty_note" not in check.attrs  # a posterior, not a point estimate
    # 40 draws of one chain cannot reach the ESS the checks ask for: the check says the fit
    # fails them, in its attrs and its summary line (it said nothing before)
    warning = fit_health(dt).fit_warning()
    assert warning is not None and check.attrs["fit_warning"] == warning
    assert check.attrs["summary"].endswith("the fit FAILS its checks (fit_warning)")
    gold = dict(ratings.data.select("item", "gold").unique().iter_rows())
    assert coverage_accuracy(dt, gold).attrs["fit_warning"] == warning
    dt.to_netcdf(tmp_path / "ds.nc")
    back = xr.open_datatree(tmp_path / "ds.nc")
    assert item_labels(back).equals(table)
    xr.testing.assert_allclose(gold_check(back), check)


def test_gold_from_the_ratings_for_a_fit_that_does_not_keep_it(frame, em_fit):
    """issue 17: a fit of ratings without gold (or saved before gold was kept) is checked
    against the gold column of ratings passed beside it; ratings of other items are an
    error, not a silent partial check."""
    plain = MACE().fit(ratings_of(frame.drop("gold")), method="em", random_seed=1)
    with pytest.raises(ValueError, match="no unit of the fit has a gold label"):
        gold_check(plain)
    with_gold = gold_check(plain, ratings_of(frame))
    assert float(with_gold["overall_accuracy"]) == float(gold_check(em_fit)["overall_accuracy"])
    assert item_labels(plain, ratings_of(frame))["gold"].null_count() == 0
    other = frame.with_columns(pl.col("item").replace({"doc:1": "elsewhere"}))
    with pytest.raises(ValueError, match=r"'elsewhere'.*not a unit of the fit"):
        gold_check(plain, ratings_of(other))


def test_a_model_without_item_labels_is_named():
    """issue 17: the ordinal rater model has no item labels; the error names those that
    have them."""
    dt = xr.DataTree()
    dt.attrs.update({"model": "ordinal_raters", "priors": "{}", "options": "{}"})
    for fn in (item_labels, gold_check):
        with pytest.raises(
            TypeError,
            match=r"no latent true labels.*DawidSkene, EnhancedBCC, GLAD, MACE",
        ):
            fn(dt)


# ----------------------------------------------------------------------------- the CLI


@pytest.fixture(scope="module")
def gold_csv(frame, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gold") / "ratings.csv"
    frame.write_csv(path)
    return path


SCALE = ["-s", "nominal:" + ",".join(LEVELS)]


def test_fit_prints_the_gold_check(gold_csv, tmp_path, em_fit):
    """issue 17: `fit` with gold in the data says how its labels do against gold and that
    gold was not used; with --use-gold, that it was."""
    res = runner.invoke(
        app, ["fit", str(gold_csv), *SCALE, "--method", "em", "--seed", "1",
              "--out", str(tmp_path / "f.nc")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    acc = float(gold_check(em_fit)["overall_accuracy"])
    assert f"gold: 60 items, accuracy {acc:.2f} (majority vote" in res.stdout
    assert "gold not used in the fit (--use-gold to clamp)" in res.stdout
    res = runner.invoke(
        app, ["fit", str(gold_csv), *SCALE, "--method", "em", "--use-gold", "--json",
              "--out", str(tmp_path / "g.nc")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert json.loads(info["options"])["use_gold"] is True
    assert info["gold_check"]["gold_used"] and info["gold_check"]["accuracy"] == 1.0
    assert "not an independent check" in info["gold_check"]["note"]


def test_use_gold_in_the_study_file_and_for_a_model_without_labels(gold_csv, tmp_path):
    """issue 17: `use_gold = true` under [fit]; --use-gold for the ordinal model is a usage
    error that names the models with labels."""
    study = tmp_path / "study.toml"
    study.write_text(
        f'data = "{gold_csv}"\nscale = "nominal:{",".join(LEVELS)}"\n'
        '[fit]\nmethod = "em"\nuse_gold = true\n'
    )
    res = runner.invoke(app, ["fit", "-S", str(study), "--out", str(tmp_path / "s.nc")])
    assert res.exit_code == 0, res.output
    assert "clamped the labels" in res.stdout
    res = runner.invoke(
        app, ["fit", "-S", str(study), "--no-use-gold", "--out", str(tmp_path / "s.nc")]
    )
    assert "gold not used in the fit" in res.stdout  # the command line wins
    res = runner.invoke(
        app, ["fit", str(gold_csv), "-s", "ordinal:yes,no,unsure", "--model", "ordinal",
              "--use-gold", "--out", str(tmp_path / "o.nc")],
    )  # fmt: skip
    assert res.exit_code == 2
    assert "no latent labels to clamp" in res.output and "mace" in res.output


def test_labels_command_end_to_end(gold_csv, tmp_path, em_fit):
    """issue 17: `raterstats labels FILE --model mace --out labels.csv`: the CSV has
    item_labels' table, the summary its numbers and the accuracy against gold."""
    out = tmp_path / "labels.csv"
    res = runner.invoke(
        app, ["labels", str(gold_csv), *SCALE, "--model", "mace", "--method", "em",
              "--seed", "1", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    written = pl.read_csv(out, infer_schema_length=0)
    expected = item_labels(em_fit)
    assert written.columns == expected.columns
    assert written["item"].to_list() == expected["item"].to_list()
    assert written["label"].to_list() == expected["label"].to_list()
    mean_p = float(expected["probability"].mean())
    disagree = int((~expected["agrees_with_majority"]).sum())
    assert f"labels: 60 units (60 items x 1 dimension) from mace (em), written to {out}" in (
        res.stdout
    )
    assert f"mean label probability {mean_p:.2f}" in res.stdout
    assert f"not the majority vote on {disagree} unit" in res.stdout
    acc = float(gold_check(em_fit)["overall_accuracy"])
    assert f"gold: 60 items, accuracy {acc:.2f}" in res.stdout
    assert "labels: note: a point estimate (em)" in res.stderr


def test_labels_from_a_saved_fit_and_json(gold_csv, tmp_path):
    """issue 17: --fit reads a saved fit (alone, or with the file for gold it does not
    keep); fit options beside --fit are refused; --json gives the summary's numbers."""
    fit_nc = tmp_path / "fit.nc"
    plain = tmp_path / "plain.csv"
    pl.read_csv(gold_csv).drop("gold").write_csv(plain)
    res = runner.invoke(app, ["fit", str(plain), *SCALE, "--method", "em", "--out", str(fit_nc)])
    assert res.exit_code == 0 and "gold:" not in res.stdout
    out = tmp_path / "l.csv"
    res = runner.invoke(app, ["labels", "--fit", str(fit_nc), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["units"] == 60 and info["gold"] is None and info["fit"] == "mace (em)"
    assert "gold" not in pl.read_csv(out).columns
    res = runner.invoke(
        app, ["labels", str(gold_csv), *SCALE, "--fit", str(fit_nc), "--out", str(out),
              "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["gold"]["n_gold"] == 60 and info["gold"]["accuracy"] < 1
    assert "differ from those the fit was made from" in res.stderr
    res = runner.invoke(app, ["labels", "--fit", str(fit_nc), "--method", "nuts"])
    assert res.exit_code == 2 and "--method" in res.output


def test_labels_study_table_and_models_without_labels(gold_csv, tmp_path):
    """issue 17: the [labels] table of the study file; a model without labels is a usage
    error naming those with labels."""
    study = tmp_path / "study.toml"
    out = tmp_path / "from_study.csv"
    study.write_text(
        f'data = "{gold_csv}"\nscale = "nominal:{",".join(LEVELS)}"\n'
        f'[labels]\nmodel = "ds"\nmethod = "em"\nout = "{out.name}"\nuse_gold = true\n'
    )
    res = runner.invoke(app, ["labels", "-S", str(study)])
    assert res.exit_code == 0, res.output
    assert "dawid_skene (em)" in res.stdout and "clamped the labels" in res.stdout
    assert pl.read_csv(out)["gold_match"].all()
    res = runner.invoke(app, ["labels", str(gold_csv), "-s", "likert5", "--model", "ordinal"])
    assert res.exit_code == 2 and "no item labels" in res.output and "mace" in res.output


# ----------------------------------------------------------------------------- real data


@pytest.mark.slow
def test_real_gold_set_by_em():
    """issue 17: a real gold set (Snow et al. 2008 RTE, expert gold) by EM, gold kept out of
    the fit: the labels' accuracy against it is that of the published benchmark range."""
    root = Path(__file__).resolve().parents[2] / "shared" / "data" / "snow2008_rte"
    if not (root / "data.csv").is_file():
        pytest.skip(f"real data set snow2008_rte not found at {root} (../shared/data is not here)")
    f = pl.read_csv(root / "data.csv", infer_schema_length=0)
    frame = f.select("item", pl.col("annotator").alias("rater"), pl.col("label").alias("rating"),
                     "gold")  # fmt: skip
    r = read_ratings(frame, scale=NominalScale(sorted(f["label"].unique().to_list())))
    t0 = time.perf_counter()
    dt = MACE().fit(r, method="em", random_seed=1)
    seconds = time.perf_counter() - t0
    check = gold_check(dt)
    assert check.attrs["gold_used"] == 0
    assert int(check["overall_n_gold"]) == 800
    assert 0.88 < float(check["overall_accuracy"]) < 0.96
    assert float(check["overall_accuracy"]) > float(check["overall_majority_accuracy"])
    print(check.attrs["summary"], f"({seconds:.1f} s)")
