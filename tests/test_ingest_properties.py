"""Property-based tests: random (often malformed) frames into read_ratings.

read_ratings either returns valid Ratings or raises RatingsError, nothing else; on valid
input no row is lost, through ingest and through every conversion.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from raterstats import NominalScale, OrdinalScale, Ratings, RatingsError, read_ratings

ids = st.one_of(
    st.sampled_from(["a", "b", "c", "d", "x y", "É", "1", "2.0"]),
    st.just(""),
    st.none(),
    st.text(max_size=4),
)
ratings_values = st.one_of(
    st.integers(-2, 8),
    st.sampled_from(
        ["1", "2", "3", "4", "5", "Agree", "yes", "no", "7", "", " 3 ", "NaN", "x", "4.0", "2.5"]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
)
optional_columns = st.sets(
    st.sampled_from(["dimension", "design", "segment", "repeat", "length", "system"])
)


@st.composite
def frames(draw):
    n = draw(st.integers(1, 25))
    cols: dict[str, list] = {
        "item": draw(st.lists(ids, min_size=n, max_size=n)),
        "rater": draw(st.lists(ids, min_size=n, max_size=n)),
        "rating": [
            None if v is None else str(v)
            for v in draw(st.lists(ratings_values, min_size=n, max_size=n))
        ],
    }
    for c in draw(optional_columns):
        if c == "repeat":
            cols[c] = draw(
                st.lists(
                    st.sampled_from(["true", "false", "1", "0", "maybe", None, "2"]),
                    min_size=n,
                    max_size=n,
                )
            )
        elif c == "length":
            cols[c] = draw(
                st.lists(
                    st.sampled_from(["10", "-1", "abc", None, "3.5", "inf"]), min_size=n, max_size=n
                )
            )
        else:
            cols[c] = draw(st.lists(ids, min_size=n, max_size=n))
    frame = pl.DataFrame(cols, schema=dict.fromkeys(cols, pl.String))
    rename = draw(st.sampled_from([None, "item", "rater", "rating"]))
    if rename is not None:  # a typo in a column name
        frame = frame.rename({rename: rename + "x"})
    return frame


scales = st.sampled_from([None, OrdinalScale.likert(5), NominalScale(["yes", "no"])])


def _check_conserved(r: Ratings, n_rows: int, n_dropped: int) -> None:
    assert r.n_ratings + n_dropped == n_rows
    assert sum(e.n_rows for e in r.exclusions) == n_dropped
    s = r.summary()
    assert int(s.cells["ratings"].sum() + s.cells["repeats"].sum()) == r.n_ratings
    total = 0
    for dim in r.dimensions:
        for design in r.designs:
            sub = r.filter(dimension=dim, design=design)
            if sub.n_ratings == 0:
                continue
            for level in ("item", "segment"):
                part = sub.data.filter(
                    pl.col("segment").is_null()
                    if level == "item"
                    else pl.col("segment").is_not_null()
                )
                if part.height == 0:
                    continue
                m = sub.to_matrix(level=level, values="value")
                reps = sub.to_matrix(level=level, values="value", repeats="only")
                got = int(np.sum(~np.isnan(m.values))) + int(np.sum(~np.isnan(reps.values)))
                assert got == part.height
                total += got
    assert total == r.n_ratings


@given(frame=frames(), scale=scales, drop=st.booleans())
def test_read_ratings_returns_ratings_or_raises_ratings_error(frame, scale, drop):
    try:
        r = read_ratings(frame, scale=scale, missing="drop" if drop else "error")
    except RatingsError as err:
        assert err.problems, "a RatingsError lists at least one problem"
        for p in err.problems:
            assert all(isinstance(row, int) and 1 <= row <= frame.height for row in p.rows)
        return
    assert isinstance(r, Ratings)
    n_dropped = sum(e.n_rows for e in r.exclusions)
    assert n_dropped == 0 or drop
    _check_conserved(r, frame.height, n_dropped)
    # every rating is a level of its dimension's scale
    for dim in r.dimensions:
        sc = r.scale_for(dim)
        vals = r.data.filter(pl.col("dimension") == dim)["value"]
        if sc.n_levels:
            assert set(vals.to_list()) <= set(sc.values.tolist())
        assert all(math.isfinite(v) for v in vals.to_list())


@given(frame=frames())
def test_pandas_and_polars_sources_agree(frame):
    def outcome(src):
        try:
            return read_ratings(src, scale=OrdinalScale.likert(5)).data.drop("source_row")
        except RatingsError as err:
            return [(p.column, p.rows) for p in err.problems]

    a = outcome(frame)
    b = outcome(pd.DataFrame(frame.to_dict(as_series=False)))
    if isinstance(a, pl.DataFrame):
        assert isinstance(b, pl.DataFrame) and a.equals(b)
    else:
        assert a == b


@given(
    n_items=st.integers(1, 8),
    n_raters=st.integers(1, 4),
    data=st.data(),
)
def test_valid_wide_frames_conserve_every_filled_cell(n_items, n_raters, data):
    cells = data.draw(
        st.lists(
            st.one_of(st.none(), st.integers(1, 5)),
            min_size=n_items * n_raters,
            max_size=n_items * n_raters,
        )
    )
    cols = {"item": [f"i{k}" for k in range(n_items)]}
    for j in range(n_raters):
        cols[f"r{j}"] = cells[j * n_items : (j + 1) * n_items]
    frame = pl.DataFrame(
        cols, schema={"item": pl.String, **{f"r{j}": pl.Int64 for j in range(n_raters)}}
    )
    filled = sum(v is not None for v in cells)
    try:
        r = read_ratings(frame, format="wide", scale=OrdinalScale.likert(5))
    except RatingsError as err:
        assert filled == 0 and "all cells empty" in str(err)
        return
    assert r.n_ratings == filled
    m = r.to_matrix()
    assert int(np.sum(~np.isnan(m.values))) == filled
