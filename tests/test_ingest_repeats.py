"""Repeated ratings, duplicates and filters (issue 18, item "Repeats, duplicates and filters").

Class 1: any number of repeated ratings per item x rater (x segment, dimension, design),
marked by an occurrence index or a boolean marker, through ingest, :class:`Ratings`,
intra-rater agreement and the models' data preparation; Dawid & Skene's anaesthesia data
read with its ``repeat`` column. Class 2: the ``duplicates=`` policy of ``read_ratings``.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raterstats import (
    NominalScale,
    OrdinalScale,
    Ratings,
    RatingsError,
    concat_ratings,
    read_ratings,
)
from raterstats.agreement import cohen_kappa, intra_rater_agreement
from raterstats.datasets import read_anaesthesia
from raterstats.design import intra_rater_by_design
from raterstats.models.latent_class import prepare_latent_class
from raterstats.models.ordinal import prepare_ordinal

LIKERT = OrdinalScale.likert(5)
DATA_ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _problems(err: RatingsError) -> list[tuple]:
    return [(p.column, p.value, p.rows) for p in err.problems]


def _frame(ratings, repeat, *, item=None, rater=None) -> pl.DataFrame:
    n = len(ratings)
    return pl.DataFrame(
        {
            "item": item or ["a"] * n,
            "rater": rater or ["x"] * n,
            "rating": ratings,
            "repeat": repeat,
        },
        schema_overrides={"repeat": pl.String},
    )


# ----------------------------------------------------------------- markers and indices


@pytest.mark.parametrize(
    "repeat",
    [
        ["false", "true", "true"],
        ["", "yes", "Y"],
        ["first", "repeat", "repeated"],
        ["0", "1", "2"],
        ["1", "2", "3"],
        ["1.0", "2.0", "3.0"],
    ],
)
def test_three_ratings_of_one_item_by_one_rater(repeat):
    """issue 18, item 1: a third rating is read, boolean-marked or indexed (0- or 1-based)."""
    r = read_ratings(_frame([3, 4, 5], repeat), scale=LIKERT)
    assert r.n_ratings == 3
    assert r.data["repeat_index"].to_list() == [0, 1, 2]
    assert r.data["repeat"].to_list() == [False, True, True]
    assert r.summary().n_repeats == 2
    assert r.steps == ()


def test_index_order_not_file_order():
    """issue 18, item 1: an occurrence index orders the ratings whatever the row order."""
    r = read_ratings(_frame([5, 3, 4], ["3", "1", "2"]), scale=LIKERT)
    assert r.data.select("rating", "repeat_index").rows() == [("5", 2), ("3", 0), ("4", 1)]
    assert r.filter(repeat=False).data["rating"].to_list() == ["3"]
    # an empty index cell is the first rating; gaps in the index are kept in order
    r = read_ratings(_frame([5, 3, 4], ["7", "", "2"]), scale=LIKERT)
    assert r.data["repeat_index"].to_list() == [2, 0, 1]


def test_boolean_markers_number_repeats_in_file_order():
    """issue 18, item 1: marked rows are repeats numbered in file order after the unmarked
    rating, wherever it is in the file."""
    frame = _frame([4, 5, 3, 2], ["true", "true", "false", "true"])
    r = read_ratings(frame, scale=LIKERT)
    assert r.data.select("rating", "repeat_index").rows() == [
        ("4", 1),
        ("5", 2),
        ("3", 0),
        ("2", 3),
    ]


def test_duplicate_index_or_two_unmarked_rows_are_duplicates():
    """issue 18, item 1: the same index twice (or two unmarked rows) in a key is an error
    naming the rows and the index."""
    with pytest.raises(RatingsError) as info:
        read_ratings(_frame([1, 2, 3], ["0", "1", "1"]), scale=LIKERT)
    assert _problems(info.value) == [(None, "item='a', rater='x', repeat='1'", (2, 3))]
    assert "duplicates='first', 'last' or 'repeat'" in str(info.value)
    with pytest.raises(RatingsError) as info:
        read_ratings(_frame([1, 2, 3], ["false", "", "true"]), scale=LIKERT)
    assert [p.rows for p in info.value.problems] == [(1, 2)]
    # without a repeat column: the duplicate rows, nothing about a marker
    with pytest.raises(RatingsError) as info:
        read_ratings(_frame([1, 2, 3], ["0", "1", "1"]).drop("repeat"), scale=LIKERT)
    assert _problems(info.value) == [(None, "item='a', rater='x'", (1, 2, 3))]


def test_markers_are_checked_against_the_column_kind():
    """issue 18, item 1: a column of boolean markers holding another integer is an error
    (one kind per column), as is a negative index."""
    with pytest.raises(RatingsError) as info:
        read_ratings(_frame([1, 2, 3], ["false", "true", "2"]), scale=LIKERT)
    assert _problems(info.value) == [("repeat", "2", (3,))]
    assert "occurrence index" in str(info.value)
    with pytest.raises(RatingsError) as info:
        read_ratings(_frame([1, 2], ["1", "-1"]), scale=LIKERT)
    assert _problems(info.value) == [("repeat", "-1", (2,))]


def test_a_key_with_only_repeat_marked_rows_keeps_them_and_says_so():
    """issue 18, item 1 (decision): a lone 'true' row (its first rating not in the data) is
    kept and read as the key's first rating; the summary's steps count such keys and name
    their rows. The same for an index above the column's smallest."""
    frame = _frame(
        [1, 2, 3, 4],
        ["false", "true", "true", "true"],
        item=["a", "a", "b", "b"],
    )
    r = read_ratings(frame, scale=LIKERT)
    assert r.data.select("item", "repeat_index").rows() == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert r.n_ratings == 4
    (step,) = r.steps
    assert "1 item x rater key(s) have only ratings marked as repeats" in step
    assert "(rows 3)" in step
    assert step in r.summary().to_markdown()
    r = read_ratings(_frame([1, 2, 3], ["0", "1", "1"], item=["a", "a", "b"]), scale=LIKERT)
    assert r.data["repeat_index"].to_list() == [0, 1, 0]
    assert "smallest index of the column (0)" in r.steps[0]
    assert "(rows 3)" in r.steps[0]
    # a 1-based index with no repeats at all is no orphan
    r = read_ratings(_frame([1, 2], ["1", "1"], item=["a", "b"]), scale=LIKERT)
    assert r.steps == () and not r.data["repeat"].any()


def test_missing_drop_then_repeats_are_numbered_on_what_is_read():
    """issue 18, item 1: an empty first rating dropped by missing='drop' is counted, and its
    repeats are numbered from the ratings read (the orphan note says so)."""
    frame = _frame([None, 2, 3], ["1", "2", "3"])
    r = read_ratings(frame, scale=LIKERT, missing="drop")
    assert r.data["repeat_index"].to_list() == [0, 1]
    assert r.exclusions[0].n_rows == 1
    assert "smallest index of the column (1)" in r.steps[0]


def test_wide_format_with_a_repeat_column():
    """issue 18, item 1: in wide format the row's marker applies to each rater's cell."""
    frame = pl.DataFrame(
        {"item": ["a", "a", "a"], "x": [1, 2, 2], "y": [3, 3, None], "repeat": [1, 2, 3]}
    )
    r = read_ratings(frame, scale=LIKERT, format="wide")
    got = r.data.sort("rater", "repeat_index").select("rater", "repeat_index", "rating").rows()
    assert got == [("x", 0, "1"), ("x", 1, "2"), ("x", 2, "2"), ("y", 0, "3"), ("y", 1, "3")]


# ---------------------------------------------------------------------- duplicates policy


DUPS = pl.DataFrame(
    {
        "item": ["a", "a", "b", "a", "b", "c"],
        "rater": ["x", "x", "x", "x", "x", "x"],
        "rating": [1, 2, 3, 4, 5, 1],
    }
)


def test_duplicates_error_is_the_default():
    """issue 18, item 2: duplicates are an error unless a policy is chosen."""
    with pytest.raises(RatingsError) as info:
        read_ratings(DUPS, scale=LIKERT)
    assert [p.rows for p in info.value.problems] == [(1, 2, 4), (3, 5)]
    with pytest.raises(RatingsError):
        read_ratings(DUPS, scale=LIKERT, duplicates="error")


@pytest.mark.parametrize(
    ("policy", "kept_rows", "word"),
    [("first", [1, 3, 6], "earliest"), ("last", [4, 5, 6], "latest")],
)
def test_duplicates_first_and_last_keep_one_and_count_the_others(policy, kept_rows, word):
    """issue 18, item 2: 'first' / 'last' keep one rating per key in file order; the others
    are an exclusion naming the policy, with its count, in the summary."""
    r = read_ratings(DUPS, scale=LIKERT, duplicates=policy)
    assert sorted(r.data["source_row"].to_list()) == kept_rows
    (exc,) = r.exclusions
    assert exc.n_rows == 3
    assert f"duplicates={policy!r}" in exc.reason and word in exc.reason
    assert r.n_ratings + exc.n_rows == DUPS.height  # nothing dropped silently
    s = r.summary()
    assert s.exclusions == (exc,)
    assert str(exc) in s.to_markdown()
    assert not r.data["repeat"].any()


def test_duplicates_repeat_turns_them_into_repeats():
    """issue 18, item 2: 'repeat' keeps every row, numbered in file order; the summary
    counts the repeats and says how they were made."""
    r = read_ratings(DUPS, scale=LIKERT, duplicates="repeat")
    assert r.n_ratings == DUPS.height and r.exclusions == ()
    assert r.data.select("item", "repeat_index").rows() == [
        ("a", 0),
        ("a", 1),
        ("b", 0),
        ("a", 2),
        ("b", 1),
        ("c", 0),
    ]
    s = r.summary()
    assert s.n_repeats == 3
    assert "3 duplicate rating(s) of 2 key(s) read as repeated ratings" in s.to_markdown()


def test_duplicates_policy_with_an_index_column():
    """issue 18, item 2: with an occurrence index, duplicates are rows with the same index;
    rows with other indices are kept as they are."""
    frame = _frame([1, 2, 3], ["1", "1", "2"])
    first = read_ratings(frame, scale=LIKERT, duplicates="first")
    assert first.data.select("source_row", "repeat_index").rows() == [(1, 0), (3, 1)]
    last = read_ratings(frame, scale=LIKERT, duplicates="last")
    assert last.data.select("source_row", "repeat_index").rows() == [(2, 0), (3, 1)]
    rep = read_ratings(frame, scale=LIKERT, duplicates="repeat")
    assert rep.data["repeat_index"].to_list() == [0, 1, 2]
    # marked repeats are never duplicates: 'first' keeps every marked row
    marked = read_ratings(
        _frame([1, 2, 3, 4], ["false", "false", "true", "true"]), scale=LIKERT, duplicates="first"
    )
    assert marked.data.select("source_row", "repeat_index").rows() == [(1, 0), (3, 1), (4, 2)]
    assert marked.exclusions[0].n_rows == 1


@pytest.mark.parametrize("bad", ["drop", "keep", None, "First"])
def test_duplicates_invalid_value(bad):
    """issue 18, item 2: an unknown policy is a ValueError listing the choices."""
    with pytest.raises(ValueError, match="duplicates must be one of 'error', 'first'"):
        read_ratings(DUPS, scale=LIKERT, duplicates=bad)


# ----------------------------------------------------------------- the Ratings table


def three_times() -> Ratings:
    """Two raters x four items; rater x rates every item three times, y twice."""
    rows = []
    ratings_x = {"a": [1, 1, 1], "b": [2, 3, 2], "c": [3, 3, 4], "d": [4, 1, 1]}
    ratings_y = {"a": [1, 1], "b": [2, 2], "c": [4, 3], "d": [4, 4]}
    for rater, table in (("x", ratings_x), ("y", ratings_y)):
        for item, values in table.items():
            rows += [(item, rater, v, str(k + 1)) for k, v in enumerate(values)]
    frame = pl.DataFrame(rows, schema=["item", "rater", "rating", "repeat"], orient="row")
    return read_ratings(frame, scale=OrdinalScale([1, 2, 3, 4]))


def test_repeat_pairs_are_all_pairs_within_a_key():
    """issue 18, item 1: m ratings of a key give m (m - 1) / 2 pairs, earlier rating first."""
    r = three_times()
    pairs = r.repeat_pairs()
    assert pairs.height == 4 * 3 + 4 * 1
    x_b = pairs.filter(pl.col("rater") == "x", pl.col("item") == "b")
    assert x_b.select("first_index", "repeat_index", "first", "repeat").rows() == [
        (0, 1, 2.0, 3.0),
        (0, 2, 2.0, 2.0),
        (1, 2, 3.0, 2.0),
    ]
    # filtering repeats away leaves no pairs; a selection of repeats pairs them
    assert r.filter(repeat=False).repeat_pairs().height == 0
    assert r.filter(repeat_index=[1, 2]).repeat_pairs().height == 4


def test_intra_rater_agreement_with_three_ratings():
    """issue 18, item 1: percent agreement and Cohen's kappa over all repeat pairs."""
    r = three_times()
    pairs = r.repeat_pairs()
    same = float((pairs["first"] == pairs["repeat"]).mean())
    assert intra_rater_agreement(r) == pytest.approx(same)
    # by hand: x: a 3/3, b 1/3, c 1/3, d 1/3 agreeing pairs; y: a, b, d agree, c not
    assert same == pytest.approx((3 + 1 + 1 + 1 + 3) / 16)
    kappa_by_hand = cohen_kappa(pairs.select("first", "repeat").to_numpy())
    assert intra_rater_agreement(r, kind="kappa") == pytest.approx(kappa_by_hand)
    table = intra_rater_by_design(r)
    assert table["n_pairs"].to_list() == [16]
    assert table["percent"].to_list() == pytest.approx([same])


def test_filter_and_arrays_by_repeat_index():
    """issue 18, item 1: filter by repeat_index; repeats='only' with two repeats in a cell
    is refused instead of keeping one of them silently."""
    r = three_times()
    assert r.filter(repeat=False).n_ratings == 8
    assert r.filter(repeat_index=2).n_ratings == 4
    assert r.to_matrix().shape == (4, 2)
    with pytest.raises(ValueError, match=r"repeats='only' puts two ratings in one cell"):
        r.to_matrix(repeats="only")
    rep1 = r.filter(repeat_index=[0, 1]).to_matrix(repeats="only")
    assert int(np.isfinite(rep1.values).sum()) == 8
    with pytest.raises(KeyError, match="repeat_index"):
        r.filter(repeat_index=3)


def test_ratings_invariants_on_repeats():
    """issue 18, item 1: a Ratings frame gets a repeat_index when it has none, refuses an
    inconsistent one and refuses two rows with one key (concat of overlapping parts)."""
    r = three_times()
    plain = Ratings(r.data.drop("repeat_index"), r.scales)
    assert plain.data["repeat_index"].to_list() == r.data["repeat_index"].to_list()
    with pytest.raises(ValueError, match="'repeat' is not 'repeat_index > 0'"):
        Ratings(r.data.with_columns(pl.lit(False).alias("repeat")), r.scales)
    with pytest.raises(ValueError, match="share their"):
        concat_ratings([r, r.filter(rater="x")])
    both = concat_ratings([r.filter(repeat=False), r.filter(repeat=True)])
    assert both.n_ratings == r.n_ratings


def test_aggregate_segments_keeps_each_repeat_apart():
    """issue 18, item 1: segment ratings rated three times aggregate to three ratings."""
    frame = pl.DataFrame(
        {
            "item": ["a"] * 6,
            "segment": ["s1", "s2"] * 3,
            "rater": ["x"] * 6,
            "rating": [2, 3, 1, 3, 2, 2],
            "repeat": ["1", "1", "2", "2", "3", "3"],
        }
    )
    r = read_ratings(frame, scale=OrdinalScale.likert(3)).aggregate_segments("min")
    assert r.data.sort("repeat_index").select("repeat_index", "rating").rows() == [
        (0, "2"),
        (1, "1"),
        (2, "2"),
    ]


# ----------------------------------------------------------------------------- models


def test_latent_class_data_counts_every_repeat():
    """issue 18, item 1: repeats='include' keeps all three ratings of a unit by one rater,
    and units with the same multiset of ratings share a pattern whatever their order."""
    frame = pl.DataFrame(
        {
            "item": ["u1"] * 4 + ["u2"] * 4,
            "rater": ["x", "x", "x", "y"] * 2,
            "rating": [1, 2, 2, 1, 2, 2, 1, 1],
            "repeat": ["1", "2", "3", "1"] * 2,
        }
    )
    r = read_ratings(frame, scale=NominalScale([1, 2]))
    d = prepare_latent_class(r, repeats="include")
    assert d.n_ratings == 8
    assert d.n_patterns == 1 and d.pattern_count.tolist() == [2]
    assert sorted(d.p_code.tolist()) == [0, 0, 1, 1]
    first = prepare_latent_class(r, repeats="exclude")
    assert first.n_ratings == 4 and first.n_patterns == 2


def test_ordinal_data_takes_every_rating():
    """issue 18, item 1: the ordinal model's data hold every rating, repeats included (any
    number per key), each an observation of the item's quality."""
    rows = []
    for item, rater in itertools.product(["a", "b", "c"], ["h1", "h2"]):
        n = 3 if rater == "h1" else 1
        rows += [(item, rater, 1 + (k + len(item)) % 5, str(k)) for k in range(n)]
    frame = pl.DataFrame(rows, schema=["item", "rater", "rating", "repeat"], orient="row")
    r = read_ratings(frame, scale=LIKERT)
    data = prepare_ordinal(r)
    assert data.n_obs == r.n_ratings == 12
    assert data.frame is not None and int(data.frame["repeat"].sum()) == 6


# ---------------------------------------------------------------- anaesthesia data


def test_anaesthesia_read_with_its_repeat_column_fits_dawid_skene():
    """issue 18, item 1 (acceptance): the canonical anaesthesia file, read with ``repeat``
    mapped (no pseudo-rater), fits Dawid-Skene by EM with every repeat counted; the class
    prevalences are within 0.03 of the rater package's published posterior means."""
    from raterstats import DawidSkene

    path = DATA_ROOT / "dawid_skene1979_anaesthesia" / "data.csv"
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    r = read_anaesthesia(path)
    assert r.raters == ("1", "2", "3", "4", "5")
    assert r.n_ratings == 315 and r.summary().n_repeats == 90
    assert r.filter(rater="1").data["repeat_index"].value_counts().sort("repeat_index")[
        "count"
    ].to_list() == [45, 45, 45]
    dt = DawidSkene().fit(r, method="em", random_seed=1)
    prev = dt.posterior["prevalence"].mean(("chain", "draw")).isel(dimension=0).values
    np.testing.assert_allclose(prev, [0.376, 0.408, 0.141, 0.075], atol=0.03)


# ------------------------------------------------------------------------- property


TRUE_WORDS = ["true", "yes", "Y", "repeat", "T", "1"]
FALSE_WORDS = ["false", "no", "", "first", "F", "0"]


@st.composite
def repeated_exports(draw):
    """A long export of 1..4 items x 1..3 raters, each pair rated 1..5 times (0..4
    repeats), marked by boolean words or a 0- / 1-based index, rows shuffled. The rating is
    the occurrence number (1 = first), so the numbering can be checked."""
    style = draw(st.sampled_from(["bool", "index0", "index1"]))
    n_items = draw(st.integers(1, 4))
    n_raters = draw(st.integers(1, 3))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    rows = []
    for i, j in itertools.product(range(n_items), range(n_raters)):
        m = draw(st.integers(1, 5))
        for k in range(m):
            if style == "bool":
                mark = rng.choice(TRUE_WORDS if k else FALSE_WORDS)
            else:
                mark = str(k + (style == "index1"))
            rows.append((f"i{i}", f"r{j}", k + 1, mark))
    rng.shuffle(rows)
    if style == "bool":  # one word, so the column is not read as an index
        item, rater, rating, mark = rows[0]
        rows[0] = (item, rater, rating, "yes" if rating > 1 else "no")
    frame = pl.DataFrame(
        rows, schema=["item", "rater", "rating", "repeat"], orient="row"
    ).with_columns(pl.col("repeat").cast(pl.String))
    return style, frame


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repeated_exports())
def test_any_number_of_repeats_in_any_order(case):
    """issue 18, item 1 (property): every rating is kept, repeat_index numbers each key
    0..m-1 (by index, or unmarked first then marked rows in file order), and the first
    ratings are unique per key."""
    style, frame = case
    r = read_ratings(frame, scale=LIKERT)
    assert r.n_ratings == frame.height
    d = r.data
    per_key = d.group_by("item", "rater").agg(
        pl.col("repeat_index").sort().alias("idx"), pl.len().alias("m")
    )
    for idx, m in per_key.select("idx", "m").iter_rows():
        assert idx == list(range(m))
    first = d.filter(~pl.col("repeat"))
    assert first.height == per_key.height
    assert first.select("item", "rater").is_unique().all()
    assert (d["repeat"] == (d["repeat_index"] > 0)).all()
    if style == "bool":
        # the unmarked rating first, then the marked ones in file order
        assert (first["rating"] == "1").all()
        marked = d.filter(pl.col("repeat")).sort("source_row")
        order = marked.with_columns(
            pl.col("repeat_index").diff().over("item", "rater").alias("step")
        )
        assert (order["step"].drop_nulls() == 1).all()
    else:
        # the index order is the occurrence order: rating k has repeat_index k - 1
        assert (d["rating"].cast(pl.Int64) == d["repeat_index"] + 1).all()
    assert r.summary().n_repeats == frame.height - per_key.height
    assert r.steps == ()
