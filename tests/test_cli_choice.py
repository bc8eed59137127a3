"""``raterstats fit --model auto`` and ``labels --model auto``: the choice among the models
of the true label, printed before the fit's health and stored in the fit; the options that
do not apply to a choice are usage errors."""

from __future__ import annotations

import json

import pytest
import xarray as xr
from typer.testing import CliRunner

from raterstats.cli import app
from raterstats.simulate import archehr_like_study

runner = CliRunner()


@pytest.fixture(scope="module")
def ratings_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("auto") / "ratings.csv"
    r = archehr_like_study(n_cases=8, n_systems=6, random_seed=3).ratings
    r.data.select("item", "rater", "dimension", "rating").write_csv(path)
    return path


def test_fit_auto_prints_and_stores_the_choice(ratings_csv, tmp_path):
    out = tmp_path / "auto.nc"
    args = ["fit", str(ratings_csv), "-c", "dimension=dimension", "--model", "auto"]
    res = runner.invoke(app, [*args, "--method", "em", "--out", str(out)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model choice by"))
    chosen = next(line for line in lines if line.startswith("chosen: "))
    name = chosen.split()[1]
    assert f"{name} fitted by em" in res.output
    assert lines.index(chosen) > start
    dt = xr.open_datatree(out)
    assert dt.attrs["model"] == name == str(dt["model_choice"].attrs["chosen"])


def test_labels_auto(ratings_csv, tmp_path):
    out = tmp_path / "labels.csv"
    args = ["labels", str(ratings_csv), "-c", "dimension=dimension", "--model", "auto"]
    res = runner.invoke(app, [*args, "--method", "em", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("unit,item,")
    lines = res.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model choice by"))
    chosen = next(line for line in lines if line.startswith("chosen: "))
    assert lines.index(chosen) > start
    res = runner.invoke(app, [*args, "--method", "em", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    table = info["model_choice"]
    assert table[0]["model"] == chosen.split()[1]
    assert table[0]["rank"] == 0
    assert info["fit"].startswith(table[0]["model"] + " ")  # the labels: the chosen model's
    assert sorted(row["rank"] for row in table) == list(range(len(table)))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-O", "hierarchical=false"], "--option does not apply"),
        (["--use-gold"], "--use-gold does not apply"),
        (["--method", "nope"], "--method"),
    ],
)
def test_auto_refuses_what_does_not_apply(ratings_csv, tmp_path, extra, message):
    res = runner.invoke(
        app,
        ["fit", str(ratings_csv), "-c", "dimension=dimension", "--model", "auto",
         "--out", str(tmp_path / "x.nc"), *extra],
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert message in res.output
