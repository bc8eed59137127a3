"""read_ratings: sources, column roles, validation errors, exclusions."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from raterstats import (
    IntervalScale,
    NominalScale,
    OrdinalScale,
    Ratings,
    RatingsError,
    read_ratings,
)

LIKERT = OrdinalScale.likert(5)
ROWS = [
    {"item": "a1", "rater": "x", "rating": 4, "dimension": "correctness"},
    {"item": "a1", "rater": "y", "rating": 5, "dimension": "correctness"},
    {"item": "a2", "rater": "x", "rating": 2, "dimension": "correctness"},
    {"item": "a2", "rater": "y", "rating": 3, "dimension": "correctness"},
]


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def _problems(err: RatingsError) -> list[tuple[str | None, str | None, tuple[int, ...]]]:
    return [(p.column, p.value, p.rows) for p in err.problems]


# ---------------------------------------------------------------------- acceptance


def test_one_error_names_wrong_column_out_of_scale_rating_and_empty_rater(tmp_path):
    path = _write(
        tmp_path,
        "ratings.csv",
        "answer_id,annotator,score,sytem\na1,r1,4,gpt\na1,r2,7,gpt\na2,,3,gpt\na2,r1,5,gpt\n",
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(
            path,
            columns={
                "item": "answer_id",
                "rater": "annotator",
                "rating": "score",
                "system": "system",
            },
            scale=LIKERT,
        )
    err = info.value
    msg = str(err)
    assert err.source == str(path)
    assert len(err.problems) == 3
    # the wrong column, with a suggestion
    assert "column 'system'" in msg and "did you mean 'sytem'" in msg
    # the rating of 7, with its row number
    assert f"{path}, row 2, column 'score': got '7'; expected one of {{1, 2, 3, 4, 5}}" in msg
    # the empty rater id, with its row number
    assert f"{path}, row 3, column 'annotator': got ''; expected a non-empty rater id" in msg
    assert ("score", "7", (2,)) in _problems(err)
    assert ("annotator", "", (3,)) in _problems(err)


# ---------------------------------------------------------------------- sources


@pytest.mark.parametrize(
    "fmt", ["csv", "tsv", "csv.gz", "parquet", "jsonl", "json", "polars", "pandas"]
)
def test_every_source_reads_the_same(tmp_path, fmt):
    frame = pl.DataFrame(ROWS)
    if fmt == "csv":
        src: object = tmp_path / "r.csv"
        frame.write_csv(src)
    elif fmt == "tsv":
        src = tmp_path / "r.tsv"
        frame.write_csv(src, separator="\t")
    elif fmt == "csv.gz":
        src = tmp_path / "r.csv.gz"
        src.write_bytes(gzip.compress(frame.write_csv().encode()))
    elif fmt == "parquet":
        src = tmp_path / "r.parquet"
        frame.write_parquet(src)
    elif fmt == "jsonl":
        src = tmp_path / "r.jsonl"
        src.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    elif fmt == "json":
        src = tmp_path / "r.json"
        src.write_text(json.dumps(ROWS))
    elif fmt == "polars":
        src = frame
    else:
        src = pd.DataFrame(ROWS)
    r = read_ratings(src, scale=LIKERT)
    assert r.n_ratings == 4
    assert r.data.select("item", "rater", "rating").rows() == [
        ("a1", "x", "4"),
        ("a1", "y", "5"),
        ("a2", "x", "2"),
        ("a2", "y", "3"),
    ]
    assert r.data["value"].to_list() == [4.0, 5.0, 2.0, 3.0]
    assert r.data["code"].to_list() == [3, 4, 1, 2]
    assert r.data["source_row"].to_list() == [1, 2, 3, 4]
    assert r.dimensions == ("correctness",)


def test_aliases_are_recognised_case_insensitively():
    frame = pl.DataFrame({"Task": ["t1", "t1"], "WORKER": ["w1", "w2"], "Label": ["yes", "no"]})
    r = read_ratings(frame, scale=NominalScale(["yes", "no"]))
    assert r.raters == ("w1", "w2")
    assert r.items == ("t1",)


@pytest.mark.parametrize(("rater_col", "rating_col"), [("annotator", "score"), ("judge", "label")])
def test_common_aliases(rater_col, rating_col):
    frame = pl.DataFrame({"item": ["i", "i"], rater_col: ["a", "b"], rating_col: [1, 2]})
    assert read_ratings(frame).n_ratings == 2


def test_two_columns_for_one_role_is_an_error():
    frame = pl.DataFrame({"item": ["i"], "rater": ["a"], "label": [1], "score": [2]})
    with pytest.raises(RatingsError, match="one column for role 'rating'"):
        read_ratings(frame)
    # naming one explicitly resolves it
    r = read_ratings(frame, columns={"rating": "score"}, scale=LIKERT)
    assert r.data["rating"].to_list() == ["2"]
    assert "label" in r.summary().ignored_columns


def test_unknown_role_and_missing_required_role():
    frame = pl.DataFrame({"item": ["i"], "who": ["a"], "rating": [1]})
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, columns={"colour": "who"})
    msg = str(info.value)
    assert "column 'colour'" in msg and "a column role" in msg
    assert "required role 'rater'" in msg


def test_wide_format(tmp_path):
    path = _write(tmp_path, "wide.csv", "item,r1,r2,r3\ni1,1,2,\ni2,2,2,3\ni3,,,\n")
    r = read_ratings(path, format="wide", scale=OrdinalScale([1, 2, 3]))
    assert r.n_ratings == 5
    assert r.raters == ("r1", "r2", "r3")
    assert any("4 empty cells" in s for s in r.steps)
    m = r.to_matrix()
    assert m.sel(unit="i1", rater="r2").item() == 2.0
    # source rows are the wide rows
    assert sorted(set(r.data["source_row"].to_list())) == [1, 2]


def test_wide_format_errors_name_the_rater_column(tmp_path):
    path = _write(tmp_path, "wide.csv", "item,r1,r2\ni1,1,9\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path, format="wide", scale=OrdinalScale([1, 2, 3]))
    assert "row 1, column 'r2': got '9'" in str(info.value)


def test_constant_dimension_and_design():
    r = read_ratings(pl.DataFrame(ROWS).drop("dimension"), dimension="safety", design="coarse")
    assert r.dimensions == ("safety",) and r.designs == ("coarse",)


def test_per_dimension_scales_and_missing_scale():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b"],
            "rater": ["x", "y", "x", "y"],
            "dimension": ["correctness", "correctness", "answers", "answers"],
            "rating": ["5", "4", "yes", "partially"],
        }
    )
    scales = {"correctness": LIKERT, "answers": NominalScale(["yes", "partially", "no"])}
    r = read_ratings(frame, scale=scales)
    assert r.scale_for("answers").kind == "nominal"
    assert r.data.filter(pl.col("dimension") == "answers")["value"].to_list() == [0.0, 1.0]
    with pytest.raises(RatingsError, match="a dimension with a declared scale"):
        read_ratings(frame, scale={"correctness": LIKERT})


def test_inferred_scale_is_reported():
    r = read_ratings(pl.DataFrame(ROWS))
    assert r.scale_for("correctness") == OrdinalScale([2, 3, 4, 5])
    assert r.summary().inferred_scales == ("correctness",)
    assert "(inferred)" in r.report()


# ---------------------------------------------------------------------- validation


def test_all_problems_listed_at_once(tmp_path):
    path = _write(
        tmp_path,
        "bad.csv",
        "item,rater,rating,length,repeat,duration_s\n"
        "a,x,3,100,false,10\n"
        ",x,4,abc,false,10\n"
        "b,y,x,90,maybe,-5\n"
        "c,y,,90,false,12\n",
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT)
    probs = _problems(info.value)
    assert ("item", "", (2,)) in probs
    assert ("length", "abc", (2,)) in probs
    assert ("rating", "x", (3,)) in probs
    assert ("repeat", "maybe", (3,)) in probs
    assert ("duration_s", "-5", (3,)) in probs
    assert ("rating", "", (4,)) in probs
    assert len(probs) == 6


def test_duplicates_without_repeat_marker_and_with_it():
    frame = pl.DataFrame({"item": ["a", "a", "a"], "rater": ["x", "x", "y"], "rating": [1, 2, 2]})
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, scale=LIKERT)
    assert _problems(info.value) == [(None, "item='a', rater='x'", (1, 2))]
    assert "mark repeated ratings in a 'repeat' column" in str(info.value)
    ok = read_ratings(frame.with_columns(pl.Series("repeat", [False, True, False])), scale=LIKERT)
    assert ok.summary().n_repeats == 1
    pairs = ok.repeat_pairs()
    assert pairs.select("first", "repeat").rows() == [(1.0, 2.0)]


def test_repeat_index_column():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "a"],
            "rater": ["x", "x", "x"],
            "rating": [1, 2, 3],
            "repeat": [0, 1, 1],
        }
    )
    with pytest.raises(RatingsError, match="one rating per"):
        read_ratings(frame, scale=LIKERT)


def test_missing_rating_drop_is_counted():
    frame = pl.DataFrame(
        {"item": ["a", "a", "b"], "rater": ["x", "y", "x"], "rating": [1, None, 3]}
    )
    with pytest.raises(RatingsError, match="missing='drop'"):
        read_ratings(frame, scale=LIKERT)
    r = read_ratings(frame, scale=LIKERT, missing="drop")
    assert r.n_ratings == 2
    assert [(e.reason, e.n_rows) for e in r.exclusions] == [("empty rating (missing='drop')", 1)]
    assert "1 rating(s) excluded" in r.report()


@pytest.mark.parametrize("scale", [LIKERT, None])
def test_missing_rating_drop_of_every_rating_is_an_error(scale):
    # dropping every rating leaves nothing to analyse: say so, with the rows, rather than
    # return an empty table
    frame = pl.DataFrame({"item": ["a", "b"], "rater": ["x", "x"], "rating": [None, None]})
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, scale=scale, missing="drop")
    (problem,) = info.value.problems
    assert problem.column == "rating" and problem.rows == (1, 2)
    assert "every rating is empty" in problem.expected


def test_undecodable_bytes_name_the_row(tmp_path):
    path = _write(
        tmp_path,
        "latin.csv",
        b"item,rater,rating\na,x,1\n" + "b,Jos\u00e9,2\n".encode("latin-1"),
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(path)
    (p,) = info.value.problems
    assert p.rows == (2,) and p.value == "0xe9"
    assert "utf-8 text" in p.expected
    r = read_ratings(path, encoding="latin-1")
    assert "Jos\u00e9" in r.raters


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("empty.csv", "", "file is empty"),
        ("header.csv", "item,rater,rating\n", "input is empty"),
        ("empty.jsonl", "\n", "file is empty"),
        ("ragged.csv", "item,rater,rating\na,x,1\nb,y,2,9\n", "row 2: got '4 fields'"),
        ("bad.jsonl", '{"item": "a", "rater": "x", "rating": 1}\n{"item": \n', "row 2"),
        ("nested.jsonl", '{"item": "a", "rater": ["x"], "rating": 1}\n', "a scalar value"),
        ("ratings.xlsx", "x", "a .csv, .tsv, .parquet"),
        ("broken.parquet", "not parquet", "a Parquet file"),
    ],
)
def test_unreadable_inputs_raise_ratings_error(tmp_path, name, text, expected):
    path = _write(tmp_path, name, text)
    with pytest.raises(RatingsError) as info:
        read_ratings(path)
    assert expected in str(info.value)
    assert str(path) in str(info.value)


def test_missing_file():
    with pytest.raises(RatingsError, match="an existing file"):
        read_ratings("/nonexistent/ratings.csv")


def test_empty_frame_and_wrong_type():
    with pytest.raises(RatingsError, match="input is empty"):
        read_ratings(pl.DataFrame({"item": [], "rater": [], "rating": []}))
    with pytest.raises(TypeError, match="path or a polars/pandas DataFrame"):
        read_ratings([1, 2, 3])


def test_item_attributes_must_be_consistent():
    frame = pl.DataFrame(
        {"item": ["a", "a"], "rater": ["x", "y"], "rating": [1, 2], "system": ["s1", "s2"]}
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, scale=LIKERT)
    assert _problems(info.value) == [("system", "s1, s2", (1, 2))]
    assert "one system per item" in str(info.value)


def test_gold_labels_validated_and_mapped():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b"],
            "rater": ["x", "y", "x"],
            "rating": [1, 5, 4],
            "gold": ["1", "1", "9"],
        }
    )
    with pytest.raises(RatingsError, match="a gold label on the scale"):
        read_ratings(frame, scale=LIKERT)
    r = read_ratings(frame.with_columns(pl.Series("gold", ["2", "2", None])), scale=LIKERT)
    assert r.collapse("likert5_to_3").data["gold"].to_list() == ["-1", "-1", None]


def test_interval_scale_ingest():
    frame = pl.DataFrame({"item": ["a", "a"], "rater": ["x", "y"], "rating": ["0.25", "1e3"]})
    with pytest.raises(RatingsError, match=r"a number in \[0, 100\]"):
        read_ratings(frame, scale=IntervalScale(0, 100))
    r = read_ratings(frame, scale=IntervalScale())
    assert r.data["value"].to_list() == [0.25, 1000.0]
    assert r.data["code"].null_count() == 2


def test_segment_empty_string_is_whole_item():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "a"],
            "rater": ["x", "x", "x"],
            "segment": ["", "1", "2"],
            "rating": [1, 2, 3],
            "design": ["coarse", "fine", "fine"],
        }
    )
    r = read_ratings(frame, scale=LIKERT)
    assert r.data["segment"].to_list() == [None, "1", "2"]
    assert r.has_segments


def test_keep_extra_columns_restores_numbers():
    frame = pl.DataFrame(
        {
            "item": ["a", "b"],
            "rater": ["x", "x"],
            "rating": [1, 2],
            "batch": [3, 4],
            "note": ["ok", "7"],
        }
    )
    r = read_ratings(frame, scale=LIKERT, keep=["batch", "note"])
    assert r.data.schema["batch"] == pl.Int64
    assert r.data["note"].to_list() == ["ok", "7"]
    with pytest.raises(RatingsError, match="a column of the input to keep"):
        read_ratings(frame, scale=LIKERT, keep=["nope"])


def test_ratings_error_caps_the_message_but_keeps_every_problem():
    n = 80
    frame = pl.DataFrame(
        {
            "item": [f"i{k}" for k in range(n)],
            "rater": ["x"] * n,
            "rating": [f"bad{k}" for k in range(n)],
        }
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, scale=LIKERT)
    assert len(info.value.problems) == n
    assert "and 30 more" in str(info.value)


def test_result_is_ratings_and_constructor_checks_invariants():
    r = read_ratings(pl.DataFrame(ROWS), scale=LIKERT)
    assert isinstance(r, Ratings)
    with pytest.raises(ValueError, match="canonical columns missing"):
        Ratings(pl.DataFrame({"item": ["a"]}), {})
