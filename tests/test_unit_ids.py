"""Issue 18, item 3: units are (item, segment) pairs, never their joined text.

Item ``a::b`` with segment ``c`` and item ``a`` with segment ``b::c`` once merged into one
unit ``a::b::c``. Units are now grouped by the (item, segment) columns everywhere and
labelled by :func:`raterstats.schema.unit_id`, which escapes the parts so that every pair
(and every (item, segment, dimension) triple) has its own id.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raterstats import MACE, OrdinalScale, item_posterior, read_ratings
from raterstats.agreement import percent_agreement
from raterstats.models.latent_class import prepare_latent_class
from raterstats.models.ordinal import prepare_ordinal
from raterstats.schema import unit_id, unit_id_expr

#: the issue's example: two different units whose ids used to be the same text
MERGING = pl.DataFrame(
    {
        "item": ["a::b", "a::b", "a", "a"],
        "segment": ["c", "c", "b::c", "b::c"],
        "rater": ["r1", "r2", "r1", "r2"],
        "rating": [1, 1, 2, 1],
    }
)

_TOKEN = re.compile(r"\\.|::|\||.", re.DOTALL)


def parse_unit_id(text: str) -> tuple[str, str | None, str | None]:
    """Split a unit id back into (item, segment, dimension): the inverse of unit_id, so
    unit_id is injective."""
    parts: list[str] = [""]
    seps: list[str] = []
    for tok in _TOKEN.findall(text):
        if tok in ("::", "|"):
            seps.append(tok)
            parts.append("")
        else:
            parts[-1] += tok[1] if tok.startswith("\\") else tok
    item, segment, dimension = parts[0], None, None
    rest = list(zip(seps, parts[1:], strict=True))
    if rest and rest[0][0] == "::":
        segment = rest.pop(0)[1]
    if rest and rest[0][0] == "|":
        dimension = rest.pop(0)[1]
    assert not rest, f"{text!r} has more than one segment or dimension part"
    return item, segment, dimension


def test_the_issue_example_stays_two_units_in_arrays_and_agreement() -> None:
    r = read_ratings(MERGING)
    arr = r.to_xarray()
    assert arr.sizes["unit"] == 2
    assert set(arr["unit"].values) == {"a\\:\\:b::c", "a::b\\:\\:c"}
    assert sorted(zip(arr["item"].values, arr["segment"].values, strict=True)) == [
        ("a", "b::c"),
        ("a::b", "c"),
    ]
    m = r.to_matrix()
    assert m.shape == (2, 2)
    # the cell of each unit keeps its own rating (a merge would have overwritten one)
    assert m.sel(unit=unit_id("a", "b::c"), rater="r1").item() == 2.0
    assert m.sel(unit=unit_id("a::b", "c"), rater="r1").item() == 1.0
    assert percent_agreement(r, kind="unanimous") == 0.5


def test_the_issue_example_stays_two_units_in_summary_mace_and_ordinal_prep() -> None:
    r = read_ratings(MERGING, scale=OrdinalScale.likert(5))
    cells = r.summary().cells
    assert cells["units"].to_list() == [2] and cells["ratings_per_unit"].to_list() == [2.0]
    assert prepare_latent_class(r).n_units == 2
    dt = MACE(hierarchical=False).fit(r, method="em", random_seed=1)
    post = item_posterior(dt)
    assert post.sizes["item"] == 2
    assert list(post["n_ratings"].values[:, 0]) == [2, 2]
    assert sorted(zip(post["unit_item"].values, post["unit_segment"].values, strict=True)) == [
        ("a", "b::c"),
        ("a::b", "c"),
    ]
    data = prepare_ordinal(r)
    assert len(data.coords["sentence"]) == len(set(data.coords["sentence"])) == 2
    assert sorted(set(data.obs_sentence.tolist())) == [1, 2]


def test_unit_ids_look_unchanged_for_common_ids() -> None:
    assert unit_id("q1_sysA") == "q1_sysA"
    assert unit_id("doc:12", "s:3") == "doc:12::s:3"
    assert unit_id("https://x.org/1") == "https://x.org/1"
    assert unit_id("a", "s1", dimension="safety") == "a::s1|safety"
    # an id made of a dimension separator is escaped, as are the latent-class units
    assert unit_id("a|b") != unit_id("a", dimension="b")


def test_latent_class_unit_ids_with_dimensions_are_distinct() -> None:
    frame = pl.DataFrame(
        {
            "item": ["x|y", "x|y", "x", "x"],
            "rater": ["r1", "r2", "r1", "r2"],
            "dimension": ["z", "z", "y|z", "y|z"],
            "rating": [1, 2, 1, 1],
        }
    )
    d = prepare_latent_class(read_ratings(frame, scale=OrdinalScale.likert(3)))
    assert len(set(d.unit_ids)) == d.n_units == 2
    assert {parse_unit_id(u) for u in d.unit_ids} == {("x|y", None, "z"), ("x", None, "y|z")}


#: pieces of ids: separators, backslashes, spaces, unicode, a line break
PIECE = st.sampled_from([":", "::", "|", "\\", " ", "a", "é", "日", "\n"])
PART = st.lists(PIECE, max_size=5).map("".join)


@settings(max_examples=300, deadline=None)
@given(item=PART, segment=st.none() | PART, dimension=st.none() | PART)
def test_unit_id_round_trips(item: str, segment: str | None, dimension: str | None) -> None:
    assert parse_unit_id(unit_id(item, segment, dimension=dimension)) == (
        item,
        segment,
        dimension,
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(PART, st.none() | PART, PART), min_size=1, max_size=12))
def test_unit_id_expr_is_unit_id(rows: list[tuple[str, str | None, str]]) -> None:
    frame = pl.DataFrame(rows, schema=["item", "segment", "dimension"], orient="row")
    assert frame.select(unit_id_expr()).to_series().to_list() == [unit_id(i, s) for i, s, _ in rows]
    assert frame.select(unit_id_expr(dimension="dimension")).to_series().to_list() == [
        unit_id(i, s, dimension=d) for i, s, d in rows
    ]


ID = (
    st.lists(
        st.sampled_from([":", "::", "|", "\\", " ", "\n", "a", "b", "é", "日"]),
        min_size=1,
        max_size=6,
    )
    .map("".join)
    .filter(lambda s: s.strip() != "")
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ID, ID), min_size=1, max_size=8, unique=True), st.data())
def test_units_are_the_distinct_pairs_everywhere(
    pairs: list[tuple[str, str]], data: st.DataObject
) -> None:
    """Random (item, segment) pairs with separators, backslashes, spaces and unicode:
    every path that identifies units finds one unit per distinct pair."""
    ratings = data.draw(
        st.lists(st.integers(1, 3), min_size=2 * len(pairs), max_size=2 * len(pairs))
    )
    frame = pl.DataFrame(
        {
            "item": [i for i, _ in pairs for _r in range(2)],
            "segment": [s for _, s in pairs for _r in range(2)],
            "rater": ["r1", "r2"] * len(pairs),
            "rating": ratings,
        }
    )
    r = read_ratings(frame, scale=OrdinalScale.likert(3))
    n = len(set(r.data.select("item", "segment").rows()))  # ingest may normalise ids
    arr = r.to_xarray()
    assert arr.sizes["unit"] == len(set(arr["unit"].values.tolist())) == n
    cells = np.asarray(arr.values[:, :, 0, 0])
    assert int((~np.isnan(cells)).sum()) == r.n_ratings  # no rating overwritten
    assert r.summary().cells["units"].to_list() == [n]
    lc = prepare_latent_class(r)
    assert lc.n_units == len(set(lc.unit_ids)) == n
    if n >= 2:  # the ordinal model needs two rated units (it says so for one)
        sentences = prepare_ordinal(r).coords["sentence"]
        assert len(sentences) == len(set(sentences)) == n
    post = item_posterior(MACE(hierarchical=False).fit(r, method="em", random_seed=1))
    assert post.sizes["item"] == len(set(post["item"].values.tolist())) == n
    assert int(post["n_ratings"].sum()) == r.n_ratings


@pytest.mark.parametrize("level", ["item", "segment"])
def test_units_in_agreement_follow_the_pairs(level: str) -> None:
    frame = MERGING if level == "segment" else MERGING.drop("segment")
    if level == "item":
        frame = frame.with_columns(pl.Series("item", ["a::b", "a::b", "a\\:\\:b", "a\\:\\:b"]))
    r = read_ratings(frame)
    assert r.to_matrix().sizes["unit"] == 2
    assert percent_agreement(r, kind="unanimous") == 0.5
