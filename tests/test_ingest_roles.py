"""read_ratings: column roles found by name, scale inference, rater kinds (issue 18).

Item 2 (silent loss): a wide rater column named like an alias of a role (``model``) became
that role. Item 4 (wrong number): one unparsable rating turned an inferred scale nominal.
rater_kind values were not normalised ("Human" missed by filter(rater_kind="human")).
Messages named an internal unit number, did not say that a role was guessed from a
column name, and contradicted themselves for ``rating`` / ``Rating``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raterstats import NominalScale, OrdinalScale, RatingsError, concat_ratings, read_ratings
from raterstats import schema as S
from raterstats.design import judge_agreement
from raterstats.models import ModelInputError
from raterstats.models.latent_class import prepare_latent_class
from raterstats.provenance import ColumnGuess
from raterstats.scales import format_level, infer_scale, number_hint

LIKERT = OrdinalScale.likert(5)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ------------------------------------------------------------- roles in wide format


def test_wide_column_named_like_an_alias_stays_a_rater_and_is_reported(tmp_path):
    """issue 18, item 2: with header item,physician1,physician2,model the judge's ratings
    became a `system` column while the summary said every row was in the data."""
    path = _write(tmp_path, "wide.csv", "item,physician1,physician2,model\na1,4,5,3\na2,2,,1\n")
    r = read_ratings(path, format="wide", scale=LIKERT)
    assert r.raters == ("model", "physician1", "physician2")
    assert r.n_ratings == 5
    assert S.SYSTEM not in r.data.columns
    assert r.data.filter(pl.col("rater") == "model")["rating"].to_list() == ["3", "1"]
    s = r.summary()
    assert s.guessed_roles == (ColumnGuess("model", "system", as_rater=True),)
    text = r.report()
    assert "column 'model' read as a rater (wide format)" in text
    assert "columns={'system': 'model'}" in text
    assert s.to_dict()["guessed_roles"][0]["as_rater"] is True


def test_wide_alias_column_mapped_by_the_user_is_the_role(tmp_path):
    """issue 18, item 2: the user's columns= makes an alias-named column its role."""
    path = _write(tmp_path, "wide.csv", "item,physician1,physician2,model\na1,4,5,gpt\n")
    r = read_ratings(path, format="wide", scale=LIKERT, columns={"system": "model"})
    assert r.raters == ("physician1", "physician2")
    assert r.data["system"].to_list() == ["gpt", "gpt"]
    assert r.summary().guessed_roles == ()


def test_wide_roles_by_their_own_name_and_item_by_alias(tmp_path):
    """issue 18, item 2: `system` named as such is a role (not reported); the item may
    come from an alias (`task`), which the summary reports; judge / score are raters."""
    path = _write(tmp_path, "wide.csv", "task,System,judge,score,p1\nt1,gpt,1,2,3\n")
    r = read_ratings(path, format="wide", scale=LIKERT)
    assert r.items == ("t1",)
    assert r.systems == ("gpt",)
    assert r.raters == ("judge", "p1", "score")
    assert set(r.summary().guessed_roles) == {
        ColumnGuess("task", "item"),
        ColumnGuess("judge", "rater", as_rater=True),
        ColumnGuess("score", "rating", as_rater=True),
    }
    assert "role 'item' taken from column 'task'" in r.report()


def test_wide_item_alias_beside_item_is_a_rater(tmp_path):
    """issue 18, item 2: with an `item` column, a column called `example` is a rater."""
    path = _write(tmp_path, "wide.csv", "item,example,p1\ni1,2,3\n")
    r = read_ratings(path, format="wide", scale=LIKERT)
    assert r.raters == ("example", "p1")
    assert r.summary().guessed_roles == (ColumnGuess("example", "item", as_rater=True),)


def test_wide_with_raters_given_resolves_other_columns_by_alias_and_says_so(tmp_path):
    """issue 18, item 2: with raters=..., the other columns are roles as in long format,
    and a role found through an alias is reported."""
    path = _write(tmp_path, "wide.csv", "item,p1,p2,model,notes\ni1,1,2,gpt,x\n")
    r = read_ratings(path, format="wide", scale=LIKERT, raters=["p1", "p2"])
    assert r.raters == ("p1", "p2")
    assert r.systems == ("gpt",)
    assert r.summary().guessed_roles == (ColumnGuess("model", "system"),)
    assert r.summary().ignored_columns == ("notes",)


def test_wide_rater_and_rating_columns_by_name_are_an_error(tmp_path):
    """issue 18, item 2: a long table read as wide says which column and what to do."""
    path = _write(tmp_path, "long.csv", "item,rater,rating\ni1,x,1\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path, format="wide", scale=LIKERT)
    cols = {p.column for p in info.value.problems}
    assert {"rater", "rating"} <= cols
    assert "format='long'" in str(info.value)


# ------------------------------------------------------------- roles in long format


def test_long_roles_found_through_an_alias_are_reported():
    """issue 18, item 4 (b): the summary says that a role was guessed from a column name."""
    frame = pl.DataFrame(
        {"task": ["t"] * 2, "worker": ["a", "b"], "label": ["1", "2"], "model": ["m"] * 2}
    )
    r = read_ratings(frame, scale=LIKERT)
    guesses = {(g.column, g.role, g.as_rater) for g in r.summary().guessed_roles}
    assert guesses == {
        ("task", "item", False),
        ("worker", "rater", False),
        ("label", "rating", False),
        ("model", "system", False),
    }
    text = r.report()
    assert "role 'system' taken from column 'model' (an alias of 'system')" in text
    assert "map it with columns={'system': ...} if that is wrong" in text


def test_long_roles_by_their_own_name_are_not_reported():
    """issue 18, item 4 (b): canonical names, in any case, are not guesses."""
    frame = pl.DataFrame({"Item": ["t"] * 2, " RATER": ["a", "b"], "rating": ["1", "2"]})
    r = read_ratings(frame, scale=LIKERT)
    assert r.summary().guessed_roles == ()
    assert "read from names" not in r.report()


def test_rating_and_Rating_clash_is_one_clear_problem():
    """issue 18, item 4 (c): `rating` and `Rating` gave two contradicting messages ("found
    ['rating', 'Rating']" and "none of [...] is in [... 'rating' ...]")."""
    frame = pl.DataFrame(
        {"item": ["i", "i"], "rater": ["a", "b"], "rating": ["1", "2"], "Rating": ["3", "4"]}
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, scale=LIKERT)
    assert len(info.value.problems) == 1
    msg = info.value.problems[0].expected
    assert "'rating', 'Rating'" in msg and "different case" in msg
    assert "columns={'rating': 'rating'}" in msg
    assert "required role" not in str(info.value)
    r = read_ratings(frame, scale=LIKERT, columns={"rating": "Rating"})
    assert r.data["rating"].to_list() == ["3", "4"]
    assert r.summary().ignored_columns == ("rating",)


# ------------------------------------------------------------- scale inference


def test_decimal_comma_is_a_problem_not_a_nominal_scale(tmp_path):
    """issue 18, item 4: '4,0' among numbers made the inferred scale nominal over
    '3', '3.0', '4', ... and agreement was computed on it."""
    path = _write(
        tmp_path,
        "r.csv",
        'item,rater,rating,dimension\na,x,3,correctness\na,y,"4,0",correctness\n'
        "b,x,3.0,correctness\nb,y,4,correctness\n",
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(path)
    (p,) = info.value.problems
    assert (p.column, p.value, p.rows) == ("rating", "4,0", (2,))
    assert "a number like the other ratings of dimension 'correctness'" in p.expected
    assert "'4,0' has a decimal comma: write 4.0" in p.expected
    assert str(path) in str(info.value)


def test_decimal_comma_in_a_wide_rater_column_names_the_column(tmp_path):
    """issue 18, item 4: in wide format the problem names the rater's column."""
    path = _write(tmp_path, "w.csv", 'item,r1,r2\na,3,"4,5"\nb,2,4\nc,1,3\n')
    with pytest.raises(RatingsError) as info:
        read_ratings(path, format="wide")
    (p,) = info.value.problems
    assert (p.column, p.value, p.rows) == ("r2", "4,5", (1,))
    assert "write 4.5" in p.expected


def test_declared_numeric_scale_gets_the_hint_too():
    """issue 18, item 4: a declared scale's message also explains the decimal comma."""
    frame = pl.DataFrame({"item": ["a", "b"], "rater": ["x", "x"], "rating": ["4,0", "3"]})
    with pytest.raises(RatingsError, match=r"decimal comma: write 4\.0"):
        read_ratings(frame, scale=LIKERT)


def test_numeric_spellings_are_one_level_inferred_and_declared():
    """issue 18, item 4: '3', '3.0', ' 3 ', '+3', '03', '3.00' are the level 3."""
    spellings = ["3", "3.0", " 3 ", "+3", "03", "3.00", "4", "5"]
    frame = pl.DataFrame(
        {"item": [f"i{k}" for k in range(8)], "rater": ["x"] * 8, "rating": spellings}
    )
    inferred = read_ratings(frame)
    assert inferred.scale_for("default") == OrdinalScale([3, 4, 5])
    assert inferred.data["rating"].to_list() == ["3"] * 6 + ["4", "5"]
    declared = read_ratings(frame, scale=OrdinalScale([3, 4, 5]))
    assert inferred.data.equals(declared.data)


def test_categorical_ratings_still_infer_a_nominal_scale():
    """issue 18, item 4: yes / partially / no stays nominal."""
    assert infer_scale(pl.Series(["yes", "no", "partially", "yes"])) == NominalScale(
        ["no", "partially", "yes"]
    )


def test_labels_with_one_number_written_twice_are_refused():
    """issue 18, item 4: among labels, '1' and '1.0' are not two categories silently."""
    frame = pl.DataFrame(
        {
            "item": list("abcdef"),
            "rater": ["x"] * 6,
            "rating": ["yes", "no", "no", "yes", "1", "1.0"],
        }
    )
    with pytest.raises(RatingsError, match="one number written differently"):
        read_ratings(frame)


def test_number_hint():
    """issue 18, item 4: hints for a decimal comma and for non-ASCII digits only."""
    assert number_hint("4,0") == "'4,0' has a decimal comma: write 4.0"
    assert number_hint("３") == "'３' has non-ASCII digits: write 3"
    assert number_hint("n/a") == "" and number_hint("1,2,3") == ""


# ------------------------------------------------------------- rater kinds


def _kinds_frame(kinds):
    n = len(kinds)
    return pl.DataFrame(
        {
            "item": ["a", "b"] * n,
            "rater": [f"r{k}" for k in range(n) for _ in range(2)],
            "rating": ["1", "3", "1", "3", "1", "2"][: 2 * n] + ["2"] * max(0, 2 * n - 6),
            "rater_kind": [k for k in kinds for _ in range(2)],
        }
    )


def test_rater_kind_is_normalised_and_filters_case_insensitively():
    """issue 18 (rater_kind): "Human" was accepted and then missed by
    filter(rater_kind="human")."""
    r = read_ratings(_kinds_frame(["Human", " HUMAN ", "llm"]), scale=OrdinalScale([1, 2, 3]))
    assert r.data["rater_kind"].unique().sort().to_list() == ["human", "llm"]
    assert r.filter(rater_kind="human").raters == ("r0", "r1")
    assert r.filter(rater_kind="Human").raters == ("r0", "r1")
    assert r.exclude(rater_kind="LLM", reason="judge apart").raters == ("r0", "r1")
    assert any("'Human' -> 'human'" in step for step in r.steps)
    s = r.summary()
    assert s.rater_kinds == {"human": 2, "llm": 1}
    assert "- rater kinds: human (2 raters), llm (1 rater)" in r.report()
    # the analyses that compare rater_kind == "human" see the normalised kinds
    table = judge_agreement(r, judge="r2")
    assert table.height > 0


def test_one_rater_written_Human_and_human_is_not_a_clash():
    """issue 18 (rater_kind): the per-rater check compares normalised kinds."""
    frame = pl.DataFrame(
        {
            "item": ["a", "b", "a", "b"],
            "rater": ["x", "x", "y", "y"],
            "rating": ["1", "2", "2", "2"],
            "rater_kind": ["Human", "human", "human", "human "],
        }
    )
    assert read_ratings(frame).filter(rater_kind="human").raters == ("x", "y")


def test_other_rater_kinds_are_kept_and_reported():
    """issue 18 (rater_kind): a kind other than human / llm is kept, and the summary says
    that it does not count as human."""
    r = read_ratings(_kinds_frame(["human", "Crowd"]), scale=OrdinalScale([1, 2, 3]))
    assert r.summary().rater_kinds == {"crowd": 1, "human": 1}
    assert "other than 'human' and 'llm' ('crowd')" in r.report()
    assert r.summary().to_dict()["rater_kinds"] == {"crowd": 1, "human": 1}


# ------------------------------------------------------------- model messages


def test_several_gold_labels_name_item_segment_and_dimension():
    """issue 18, item 4 (a): "unit 3: several gold labels" named an internal index."""
    r = read_ratings(
        pl.DataFrame(
            {
                "item": ["a", "a", "b", "b"],
                "segment": ["s1", "s1", "", ""],
                "rater": ["x", "y", "x", "y"],
                "dimension": ["safety"] * 4,
                "rating": ["yes", "no", "no", "no"],
                "gold": ["yes", "no", "no", "no"],
            }
        ),
        scale=NominalScale(["yes", "no"]),
    )
    with pytest.raises(ModelInputError) as info:
        prepare_latent_class(r)
    msg = str(info.value)
    assert "item 'a', segment 's1', dimension 'safety': several gold labels" in msg
    assert "unit " not in msg


# ------------------------------------------------------------- properties

_ALIAS_NAMES = sorted({a for role in S.ROLES.values() if role.name != S.ITEM for a in role.aliases})
_CANONICAL = {
    S.SYSTEM: "gpt",
    S.QUESTION: "q1",
    S.DIMENSION: "correctness",
    S.DESIGN: "coarse",
    S.GROUP: "panel",
    S.LENGTH: "120",
    S.DURATION: "30",
    S.CONFIDENCE: "0.5",
    S.GOLD: "3",
    S.RATER_KIND: "human",
}
_RATER_LIKE = ["physician1", "r2", "gpt4", "Dr. X", "expert 3", "1", "01"]
_MAPPABLE = [S.SYSTEM, S.QUESTION, S.GROUP, S.DESIGN, S.DIMENSION]


@st.composite
def wide_tables(draw):
    item_col = draw(st.sampled_from(["item", "Item", "task", "answer_id"]))
    pool = _ALIAS_NAMES + sorted(_CANONICAL) + _RATER_LIKE
    if item_col.lower() == "item":  # an item alias beside `item` is a rater
        pool += ["example", "unit_id"]
    others = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=7, unique=True))
    n = draw(st.integers(1, 4))
    mapped = {}
    for col in others:
        role = S.role_of_column(col)
        if role is not None and not role[1] and draw(st.booleans()):
            target = draw(st.sampled_from(_MAPPABLE))
            if target not in mapped and not any(
                S.role_of_column(c) == (target, True) for c in others
            ):
                mapped[target] = col
    data = {item_col: [f"i{k}" for k in range(n)]}
    raters = []
    for col in others:
        role = S.role_of_column(col)
        if col in mapped.values():
            data[col] = [f"{col}-{k}" for k in range(n)]
        elif role is not None and role[1]:
            data[col] = [_CANONICAL[role[0]]] * n
        else:
            raters.append(col)
            data[col] = draw(
                st.lists(st.sampled_from([None, "1", "2", "3", "4", "5"]), min_size=n, max_size=n)
            )
    return pl.DataFrame(data, schema=dict.fromkeys(data, pl.String)), mapped, item_col, raters


@settings(max_examples=80, deadline=None)
@given(table=wide_tables())
def test_wide_headers_against_the_aliases(table):
    """issue 18, item 2: every column not mapped by the user is a rater or a role found by
    its own name (the item: also by an alias), every alias-based decision is in the
    summary, and no rating is lost."""
    frame, mapped, item_col, raters = table
    filled = sum(frame[c].drop_nulls().len() for c in raters)
    try:
        r = read_ratings(frame, format="wide", scale=LIKERT, columns=mapped or None)
    except RatingsError as err:
        assert filled == 0
        assert ("all cells empty" if raters else "at least one rater column") in str(err)
        return
    assert r.n_ratings == filled
    assert set(r.raters) <= set(raters)
    rated = {c for c in raters if frame[c].drop_nulls().len()}
    assert set(r.raters) == rated
    named = {c: S.role_of_column(c) for c in raters}
    expected = {ColumnGuess(c, m[0], as_rater=True) for c, m in named.items() if m is not None}
    if item_col.lower() != "item":
        expected.add(ColumnGuess(item_col, S.ITEM))
    assert set(r.summary().guessed_roles) == expected
    text = r.report()
    assert all(str(g) in text for g in expected)
    for col in frame.columns:  # a column named as a role (not item) is that role
        m = S.role_of_column(col)
        if m is not None and m[1] and m[0] != S.ITEM:
            got = [format_level(v) for v in r.data[m[0]].to_list()]
            assert got == [_CANONICAL[m[0]]] * r.n_ratings
    for role, col in mapped.items():  # the user's mapping: the role holds that column
        source = frame[col].to_list()
        assert r.data[role].to_list() == [source[k - 1] for k in r.data["source_row"]]
    assert r.summary().ignored_columns == ()


_SPELLINGS = [
    lambda n: str(n),
    lambda n: f"{n}.0",
    lambda n: f" {n} ",
    lambda n: f"+{n}",
    lambda n: f"0{n}",
    lambda n: f"{n}.00",
    lambda n: f"{n}.",
]


@settings(max_examples=60, deadline=None)
@given(
    levels=st.lists(st.integers(1, 5), min_size=2, max_size=12),
    spelling=st.data(),
    comma_at=st.one_of(st.none(), st.integers(0, 11)),
)
def test_numeric_tokens_are_their_number(levels, spelling, comma_at):
    """issue 18, item 4: a number is one level however written, on an inferred and on a
    declared scale alike; a decimal comma is a problem with its row, never a label."""
    tokens = [spelling.draw(st.sampled_from(_SPELLINGS))(n) for n in levels]
    bad_row = None
    if comma_at is not None and comma_at < len(tokens) and len(tokens) >= 3:
        tokens[comma_at] = f"{levels[comma_at]},0"
        bad_row = comma_at + 1
    n = len(tokens)
    frame = pl.DataFrame(
        {"item": [f"i{k}" for k in range(n)], "rater": ["x"] * n, "rating": tokens}
    )
    good = [lv for k, lv in enumerate(levels) if k + 1 != bad_row]
    try:
        inferred = read_ratings(frame)
    except RatingsError as err:
        assert bad_row is not None, str(err)
        assert [(p.value, p.rows) for p in err.problems] == [(tokens[bad_row - 1], (bad_row,))]
        assert "a number like the other ratings" in err.problems[0].expected
        assert "decimal comma" in err.problems[0].expected
        return
    assert bad_row is None
    if len(set(levels)) >= 2:
        assert inferred.scale_for("default") == OrdinalScale(sorted(set(good)))
    assert inferred.data["rating"].to_list() == [format_level(v) for v in levels]
    assert inferred.data["value"].to_list() == [float(v) for v in levels]
    declared = read_ratings(frame, scale=LIKERT)
    assert declared.data["rating"].to_list() == inferred.data["rating"].to_list()


_NUMERIC_IDS = ["1", "01", "1.0", "001", "+1", "1e0", "1.00", "2"]


@settings(max_examples=50, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from(_NUMERIC_IDS), st.sampled_from(_NUMERIC_IDS)),
        min_size=1,
        max_size=10,
        unique=True,
    ),
    via_file=st.booleans(),
)
def test_numeric_looking_ids_stay_distinct_strings(pairs, via_file):
    """issue 18, item 4: ids '1', '01', '1.0' are three ids, exactly as written."""
    items = [i for i, _ in pairs]
    raters = [r for _, r in pairs]
    ratings = [str(1 + k % 2) for k in range(len(pairs))]
    frame = pl.DataFrame({"item": items, "rater": raters, "rating": ratings})
    if via_file:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "ids.csv"
            frame.write_csv(path)
            r = read_ratings(path, scale=OrdinalScale([1, 2]))
    else:
        r = read_ratings(frame, scale=OrdinalScale([1, 2]))
    assert r.data.select("item", "rater").rows() == pairs
    assert set(r.raters) == set(raters) and set(r.items) == set(items)
    m = r.to_matrix()
    assert set(m.coords["rater"].values.tolist()) == set(raters)


def test_concatenated_ratings_keep_the_guessed_roles():
    """issue 18, item 4 (b): the note survives concat_ratings."""
    frame = pl.DataFrame({"item": ["a", "a"], "rater": ["x", "y"], "score": ["1", "2"]})
    r = read_ratings(frame, scale=LIKERT)
    both = concat_ratings([r.filter(rater="x"), r.filter(rater="y")])
    assert both.summary().guessed_roles == (ColumnGuess("score", "rating"),)
