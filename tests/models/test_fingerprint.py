"""The data fingerprint of a fit: order-independent, sensitive to every rating, one to one
where ids hold the characters it joins fields with, and the fingerprints of fits saved
before the encoding changed still match their ratings."""

import numpy as np
import polars as pl
import pytest

from raterstats import NominalScale, Ratings, read_ratings
from raterstats.models.fingerprint import (
    csv_fingerprint,
    data_fingerprint,
    fingerprint_later,
    fingerprint_matches,
)
from raterstats.simulate import archehr_like_study
from raterstats.simulate_comparisons import simulate_comparisons

SCALE = NominalScale(["0", "1"])


def frame(items, raters, ratings):
    return read_ratings(
        pl.DataFrame({"item": items, "rater": raters, "rating": ratings}), scale=SCALE
    )


@pytest.fixture(scope="module")
def study():
    return archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings


def test_fingerprint_ignores_row_order_and_sees_every_rating(study):
    fp = data_fingerprint(study)
    shuffled = Ratings(study.data.sample(fraction=1.0, shuffle=True, seed=4), study.scales)
    assert data_fingerprint(shuffled) == fp
    assert fingerprint_later(study).result() == fp
    first = pl.int_range(pl.len()) == 0
    changed = study.data.with_columns(
        pl.when(first).then(pl.col("rater") + "x").otherwise(pl.col("rater")).alias("rater")
    )
    assert data_fingerprint(Ratings(changed, study.scales)) != fp
    assert data_fingerprint(study.filter(dimension=study.dimensions[0])) != fp


def test_fingerprint_is_one_to_one_where_ids_hold_its_separators():
    base = data_fingerprint(frame(["a", "x"], ["bc", "r"], ["0", "1"]))
    # naive joining with the unit separator would make these two tables the same rows
    left = data_fingerprint(frame(["a\x1fb", "x"], ["c", "r"], ["0", "1"]))
    right = data_fingerprint(frame(["a", "x"], ["b\x1fc", "r"], ["0", "1"]))
    nul = data_fingerprint(frame(["a\x00", "x"], ["bc", "r"], ["0", "1"]))
    assert len({base, left, right, nul}) == 4
    swapped = data_fingerprint(frame(["x", "a\x1fb"], ["r", "c"], ["1", "0"]))
    assert swapped == left


def test_fits_saved_with_the_csv_fingerprint_still_match(study):
    old = csv_fingerprint(study)
    assert old != data_fingerprint(study)
    assert fingerprint_matches(old, study)
    assert fingerprint_matches(data_fingerprint(study), study)
    other = study.filter(dimension=study.dimensions[0])
    assert not fingerprint_matches(old, other)


def test_comparisons_fingerprint_ignores_row_order():
    c = simulate_comparisons(n_systems=4, n_raters=3, n_comparisons=40, random_seed=2).comparisons
    fp = data_fingerprint(c)
    assert fingerprint_matches(csv_fingerprint(c), c)
    assert fingerprint_matches(fp, c) and len(fp) == 64


def test_labels_accepts_a_fit_saved_with_the_csv_fingerprint(tmp_path):
    """`labels --fit` warns that the ratings differ only when they do: a fit saved before
    the encoding changed (its attrs hold the CSV fingerprint) matches its ratings."""
    import xarray as xr
    from typer.testing import CliRunner

    from raterstats.cli import app
    from raterstats.cli.study import Study, load_ratings

    runner = CliRunner()
    rng = np.random.default_rng(3)
    rows = [(f"i{i}", f"r{j}", str(int(rng.random() < 0.7))) for i in range(30) for j in range(3)]
    path = tmp_path / "r.csv"
    pl.DataFrame(rows, schema=["item", "rater", "rating"], orient="row").write_csv(path)
    scale = ["-s", "nominal:0,1"]
    fit_nc = tmp_path / "fit.nc"
    res = runner.invoke(app, ["fit", str(path), *scale, "--method", "em", "--out", str(fit_nc)])
    assert res.exit_code == 0, res.output
    ratings = load_ratings(Study(data=path, scale="nominal:0,1"))  # as the CLI reads them
    dt = xr.open_datatree(fit_nc).load()
    assert dt.attrs["data_fingerprint"] == data_fingerprint(ratings)  # the CLI's ratings
    dt.attrs["data_fingerprint"] = csv_fingerprint(ratings)
    old_nc = tmp_path / "old.nc"
    dt.to_netcdf(old_nc)
    out = ["--out", str(tmp_path / "labels.csv")]  # not into the working directory
    res = runner.invoke(app, ["labels", str(path), *scale, "--fit", str(old_nc), *out])
    assert res.exit_code == 0, res.output
    assert "differ from those the fit was made from" not in res.stderr
    other = tmp_path / "other.csv"
    pl.read_csv(path).with_columns(pl.lit("1").alias("rating")).write_csv(other)
    res = runner.invoke(app, ["labels", str(other), *scale, "--fit", str(old_nc), *out])
    assert "differ from those the fit was made from" in res.stderr
