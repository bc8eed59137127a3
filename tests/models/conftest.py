"""Fixtures of the model tests: small simulated studies and the real data sets (read from
``../shared/data`` relative to the repository root; never copied into the repository)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from raterstats import NominalScale, Ratings, read_ratings
from raterstats.simulate import SimulatedStudy, archehr_like_study

DATA_ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="session")
def small_archehr() -> SimulatedStudy:
    """60 items x 3 dimensions, 3 raters each from a pool of 20 (MACE generative model)."""
    return archehr_like_study(n_cases=6, n_systems=10, random_seed=3)


@pytest.fixture(scope="session")
def one_dim(small_archehr: SimulatedStudy) -> Ratings:
    return small_archehr.ratings.filter(dimension="answers_question")


@pytest.fixture(scope="session")
def mixed_k() -> Ratings:
    """30 items rated by the same 3 raters on a yes / no and a yes / partially / no
    dimension (dimensions with different numbers of categories)."""
    frame = pl.DataFrame(
        {
            "item": [f"i{i}" for i in range(30) for _ in range(3)] * 2,
            "rater": ["a", "b", "c"] * 60,
            "dimension": ["yn"] * 90 + ["ypn"] * 90,
            "rating": (["yes", "yes", "no"] * 30) + (["yes", "partially", "no"] * 30),
        }
    )
    return read_ratings(
        frame,
        scale={"yn": NominalScale(["yes", "no"]), "ypn": NominalScale(["yes", "partially", "no"])},
    )


def load_dataset(name: str) -> tuple[Ratings, dict[str, str]]:
    """A converted data set as Ratings (gold column left out) and its gold labels.

    Ratings can hold one repeat per (item, rater); third and later ratings of the same
    pair are dropped (the count is in the Ratings' exclusions of the caller's choice).
    """
    path = DATA_ROOT / name / "data.csv"
    if not path.exists():
        pytest.skip(f"real data not available: {path} (the data live outside the repository)")
    f = pl.read_csv(path, infer_schema_length=0)
    gold_vals = f["gold"].drop_nulls().to_list() if "gold" in f.columns else []
    labels = set(f["label"].drop_nulls().to_list()) | set(gold_vals)
    levels = sorted(labels, key=lambda x: (len(x), x))
    f = f.with_columns(pl.int_range(pl.len()).over("item", "annotator").alias("_occ")).filter(
        pl.col("_occ") < 2
    )
    frame = pl.DataFrame(
        {"item": f["item"], "rater": f["annotator"], "rating": f["label"], "repeat": f["_occ"] == 1}
    )
    r = read_ratings(frame, scale=NominalScale(levels), name=name)
    gold: dict[str, str] = {}
    if "gold" in f.columns:
        g = f.filter(pl.col("gold").is_not_null() & (pl.col("gold") != ""))
        gold = dict(g.select("item", "gold").unique("item").iter_rows())
    return r, gold


@pytest.fixture(scope="session")
def load():
    """The :func:`load_dataset` function (skips when the data are absent)."""
    return load_dataset


@pytest.fixture(scope="session")
def data_root() -> Path:
    return DATA_ROOT
