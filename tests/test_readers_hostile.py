"""Hostile exports into the readers (issue 18): delimiters, duplicate headers, nested values,
problems reported all at once, and the small things real files carry (BOM, CRLF, blank
lines, bad bytes)."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from raterstats import OrdinalScale, RatingsError, read_ratings
from raterstats.delimited import parse_delimited, sniff_separator
from raterstats.readers import load_source, read_source

LIKERT = OrdinalScale.likert(5)


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, newline="")
    return p


def _problems(err: RatingsError) -> list[tuple[str | None, str | None, tuple[int, ...]]]:
    return [(p.column, p.value, p.rows) for p in err.problems]


def _triples(r) -> list[tuple[str, str, str]]:
    return r.data.select("item", "rater", "rating").rows()


# ------------------------------------------------------------ item 1: delimiters


@pytest.mark.parametrize(("sep", "label"), [(";", "semicolon"), ("\t", "tab"), ("|", "pipe")])
def test_csv_delimiter_is_sniffed_and_reported(tmp_path, sep, label):
    """issue 18, item 1: a semicolon (tab, pipe) CSV is read, and the summary says so."""
    text = sep.join(["item", "rater", "rating"]) + "\n"
    text += "".join(sep.join(row) + "\n" for row in [("a", "x", "4"), ("b", "x", "2")])
    r = read_ratings(_write(tmp_path, "r.csv", text), scale=LIKERT)
    assert _triples(r) == [("a", "x", "4"), ("b", "x", "2")]
    (step,) = r.steps
    assert label in step and "sniffed" in step and "separator=" in step
    assert label in r.report()


def test_comma_csv_has_no_delimiter_step(tmp_path):
    """issue 18, item 1: the usual comma needs no note."""
    r = read_ratings(_write(tmp_path, "r.csv", "item,rater,rating\na,x,4\n"), scale=LIKERT)
    assert r.steps == ()


def test_european_export_with_decimal_commas(tmp_path):
    """issue 18, item 1: `item;rater;rating` with `3,5` values is split on semicolons."""
    path = _write(tmp_path, "r.csv", "item;rater;rating\na;x;3,5\nb;x;2,5\n")
    r = read_ratings(path)
    assert r.data["rating"].to_list() == ["3,5", "2,5"]


def test_quoted_field_holding_another_delimiter_does_not_fool_the_sniffer(tmp_path):
    """issue 18, item 1: quotes are respected while sniffing."""
    comma = _write(tmp_path, "c.csv", 'item,rater,rating\n"a;b;c",x,1\n"d;e;f",y,2\n')
    assert _triples(read_ratings(comma, scale=LIKERT)) == [("a;b;c", "x", "1"), ("d;e;f", "y", "2")]
    semi = _write(tmp_path, "s.csv", 'item;rater;rating\n"a,b";x;1\n"c,d,e";y;2\n')
    r = read_ratings(semi, scale=LIKERT)
    assert _triples(r) == [("a,b", "x", "1"), ("c,d,e", "y", "2")]
    assert "semicolon" in r.steps[0]


def test_explicit_separator(tmp_path):
    """issue 18, item 1: separator= is used as given, for read_ratings and load_source."""
    path = _write(tmp_path, "r.txt", "item|rater|rating\na|x|1\n")
    r = read_ratings(path, file_format="csv", separator="|", scale=LIKERT)
    assert _triples(r) == [("a", "x", "1")] and r.steps == ()
    frame, name = load_source(path, file_format="csv", separator="|")
    assert frame.columns == ["item", "rater", "rating", "source_row"] and name == str(path)
    # a .tsv is split on tabs unless told otherwise
    tsv = _write(tmp_path, "r.tsv", "item;rater;rating\na;x;1\n")
    assert _triples(read_ratings(tsv, separator=";", scale=LIKERT)) == [("a", "x", "1")]


def test_wrong_explicit_separator_says_the_header_is_one_column(tmp_path):
    """issue 18, item 1: the missing roles come with a hint at separator=."""
    path = _write(tmp_path, "r.csv", "item,rater,rating\na,x,1\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path, separator=";")
    msg = str(info.value)
    assert "required role 'item'" in msg
    assert "split on ';' (semicolon) it is one column" in msg and "separator=" in msg


def test_ambiguous_sniff_falls_back_to_comma_and_suggests_separator(tmp_path):
    """issue 18, item 1: when two delimiters fit (a comma in the header and one in every
    row), the comma is used and the error says how to choose."""
    path = _write(tmp_path, "r.csv", "item;rater;score (1,5 = half)\na;x;3,5\nb;y;2,5\n")
    guess = sniff_separator(path.read_text())
    assert guess.separator == "," and set(guess.fitting) == {",", ";"}
    with pytest.raises(RatingsError) as info:
        read_ratings(path)
    msg = str(info.value)
    assert "required role 'rater'" in msg
    assert "',' (comma) and ';' (semicolon)" in msg and "pass separator=" in msg
    # choosing resolves it
    r = read_ratings(path, separator=";", columns={"rating": "score (1,5 = half)"})
    assert _triples(r) == [("a", "x", "3,5"), ("b", "y", "2,5")]


def test_unknown_delimiter_suggests_separator(tmp_path):
    """issue 18, item 1: a header that no candidate splits: say so, suggest separator=."""
    path = _write(tmp_path, "r.csv", "item:rater:rating\na:x:1\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path)
    assert "one column on every delimiter tried" in str(info.value)


def test_sniffer_prefers_the_delimiter_most_rows_agree_with(tmp_path):
    """issue 18, items 1 and 4: a semicolon file with one ragged row is still read on
    semicolons, and the ragged row is reported."""
    path = _write(tmp_path, "r.csv", "item;rater;rating\na;x;1\nb;x\nc;x;3\nd;x;4\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT)
    assert _problems(info.value) == [(None, "2 fields", (2,))]


@pytest.mark.parametrize("bad", ["", ";;", '"', "\n", 3])
def test_bad_separator_argument(tmp_path, bad):
    """issue 18, item 1: a separator that cannot delimit is a ValueError."""
    path = _write(tmp_path, "r.csv", "item,rater,rating\na,x,1\n")
    with pytest.raises(ValueError, match="separator must be one character"):
        read_ratings(path, separator=bad)


def test_separator_for_a_source_that_is_not_delimited_text(tmp_path):
    """issue 18, item 1: separator= with a Parquet file or a frame is a ValueError."""
    frame = pl.DataFrame({"item": ["a"], "rater": ["x"], "rating": [1]})
    frame.write_parquet(tmp_path / "r.parquet")
    with pytest.raises(ValueError, match="separator= is for CSV / TSV files"):
        read_ratings(tmp_path / "r.parquet", separator=";")
    with pytest.raises(ValueError, match="separator= is for CSV / TSV files"):
        read_ratings(frame, separator=";")


# ------------------------------------------------------------ item 2: duplicate names


@pytest.mark.parametrize(("name", "sep"), [("r.csv", ","), ("r.tsv", "\t")])
def test_duplicate_header_is_a_problem(tmp_path, name, sep):
    """issue 18, item 2: `item,rater,rating,rating` names the file, the header, both
    positions; the other problems are listed with it."""
    text = sep.join(["item", "rater", "rating", "rating"]) + "\n"
    text += sep.join(["a", "x", "4", "2"]) + "\n" + sep.join(["b", "x", "9", "3"]) + "\n"
    path = _write(tmp_path, name, text)
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT)
    err = info.value
    dup = err.problems[0]
    assert dup.column == "rating" and dup.rows == ()
    assert "header" in dup.expected and "columns 3 and 4" in dup.expected
    assert str(path) in str(err)
    assert ("rating", "9", (2,)) in _problems(err)
    assert "rating_duplicated_0" not in str(err)


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_duplicate_json_key_is_a_problem(tmp_path, fmt):
    """issue 18, item 2: a JSON parser would keep one of two equal keys silently."""
    recs = [
        '{"item": "a", "rater": "x", "rating": 1, "rating": 5}',
        '{"item": "b", "rater": "x", "rating": 7}',
    ]
    text = "\n".join(recs) + "\n" if fmt == "jsonl" else "[" + ",\n".join(recs) + "]"
    path = _write(tmp_path, f"r.{fmt}", text)
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT)
    probs = info.value.problems
    assert probs[0].column == "rating" and probs[0].rows == (1,)
    assert "key 3 and key 4" in probs[0].expected
    assert ("rating", "7", (2,)) in _problems(info.value)


def test_duplicate_column_in_parquet_and_pandas(tmp_path):
    """issue 18, item 2: Parquet files and pandas frames can repeat a name; polars cannot."""
    table = pa.table(
        [pa.array(["a"]), pa.array(["x"]), pa.array([1]), pa.array([2])],
        names=["item", "rater", "rating", "rating"],
    )
    pq.write_table(table, tmp_path / "r.parquet")
    frame = pd.DataFrame([["a", "x", 1, 2]], columns=["item", "rater", "rating", "rating"])
    for src in (tmp_path / "r.parquet", frame):
        with pytest.raises(RatingsError) as info:
            read_ratings(src, scale=LIKERT)
        (p,) = info.value.problems
        assert p.column == "rating" and "columns 3 and 4" in p.expected


def test_case_variant_columns_give_one_clear_message(tmp_path):
    """issue 18, item 2: `rating` and `Rating` both map to the role: one message naming
    both and how to choose, and no contradicting 'missing role' message."""
    path = _write(tmp_path, "r.csv", "item,rater,rating,Rating\na,x,1,2\nb,x,2,3\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT)
    (p,) = info.value.problems
    assert "'rating', 'Rating'" in p.expected
    assert "choose one with columns={'rating': 'rating'}" in p.expected
    assert "required role" not in str(info.value)
    r = read_ratings(path, columns={"rating": "Rating"}, scale=LIKERT)
    assert r.data["rating"].to_list() == ["2", "3"]
    assert r.summary().ignored_columns == ("rating",)


# ------------------------------------------------------------ item 3: nested values


def test_list_column_without_a_role_is_read(tmp_path):
    """issue 18, item 3: a list / struct column with no role is ignored (listed) or kept
    as JSON text, from Parquet, JSON lines, polars and pandas alike."""
    frame = pl.DataFrame(
        {
            "item": ["a", "b"],
            "rater": ["x", "x"],
            "rating": [1, 2],
            "tags": [["p", "q"], None],
            "meta": [{"k": 1}, {"k": 2}],
        }
    )
    frame.write_parquet(tmp_path / "r.parquet")
    lines = [
        '{"item": "a", "rater": "x", "rating": 1, "tags": ["p", "q"], "meta": {"k": 1}}',
        '{"item": "b", "rater": "x", "rating": 2, "tags": null, "meta": {"k": 2}}',
    ]
    jsonl = _write(tmp_path, "r.jsonl", "\n".join(lines) + "\n")
    sources = [tmp_path / "r.parquet", jsonl, frame, frame.to_pandas()]
    for src in sources:
        r = read_ratings(src, scale=LIKERT)
        assert _triples(r) == [("a", "x", "1"), ("b", "x", "2")]
        assert set(r.summary().ignored_columns) == {"tags", "meta"}
        kept = read_ratings(src, scale=LIKERT, keep=["tags"])
        assert json.loads(kept.data["tags"][0]) == ["p", "q"]
        assert kept.data["tags"][1] is None


def test_pandas_object_column_of_mixed_values_is_read_as_text():
    """issue 18, item 3: an object column polars cannot convert (numbers, text, lists
    mixed, as pandas reads spreadsheets) is read value by value, not refused."""
    frame = pd.DataFrame(
        {
            "item": ["a", "b", "c"],
            "rater": ["x", "x", "x"],
            "rating": [1, 2, 3],
            "note": [1, "late", None],
            "tags": [["p"], "q", float("nan")],
        }
    )
    loaded = read_source(frame)
    assert loaded.frame["note"].to_list() == ["1", "late", None]
    assert loaded.frame["tags"].to_list() == ['["p"]', "q", None]
    assert dict(loaded.nested) == {"tags": (1,)}
    r = read_ratings(frame, scale=LIKERT)
    assert r.summary().ignored_columns == ("note", "tags")
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, scale=LIKERT, columns={"rater": "tags"})
    assert ("tags", '["p"]', (1,)) in _problems(info.value)


def test_list_in_a_role_column_is_a_problem(tmp_path):
    """issue 18, item 3: a list where an id or a rating is expected names row and column."""
    frame = pl.DataFrame({"item": ["a", "b"], "rater": [["x"], ["y", "z"]], "rating": [1, 9]})
    frame.write_parquet(tmp_path / "r.parquet")
    with pytest.raises(RatingsError) as info:
        read_ratings(tmp_path / "r.parquet", scale=LIKERT)
    assert _problems(info.value) == [("rater", '["x"]', (1,)), ("rater", '["y", "z"]', (2,))]
    assert "a scalar value, not a list or object" in str(info.value)
    jsonl = _write(
        tmp_path,
        "r.jsonl",
        '{"item": "a", "rater": "x", "rating": [1, 2]}\n{"item": "b", "rater": "x", "rating": 9}\n',
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(jsonl, scale=LIKERT)
    assert _problems(info.value)[0] == ("rating", "[1, 2]", (1,))
    assert ("rating", "9", (2,)) in _problems(info.value)


def test_list_in_a_wide_rater_column_is_a_problem():
    """issue 18, item 3: in wide format the rater columns hold ratings: no lists there."""
    frame = pl.DataFrame({"item": ["a", "b"], "r1": [[1], None], "r2": [1, 2]})
    with pytest.raises(RatingsError) as info:
        read_ratings(frame, format="wide", raters=["r1", "r2"], scale=LIKERT)
    assert _problems(info.value) == [("r1", "[1]", (1,))]


# ------------------------------------------------------------ item 4: every problem at once


def test_jsonl_syntax_error_does_not_hide_other_problems(tmp_path):
    """issue 18, item 4: the syntax errors (line numbers) and the problems of the lines
    that parse, in one RatingsError."""
    path = _write(
        tmp_path,
        "r.jsonl",
        '{"item": "a", "who": "x", "rating": 1}\n'
        '{"item": \n'
        '{"item": "b", "who": "y", "rating": 9}\n'
        "[1, 2]\n"
        '{"item": "c", "who": "y" "rating": 2}\n',
    )
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT)
    err = info.value
    rows = [p.rows for p in err.problems]
    assert (2,) in rows and (4,) in rows and (5,) in rows
    assert "required role 'rater'" in str(err)
    # with the role named, the bad rating of line 3 shows beside the syntax errors
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT, columns={"rater": "who"})
    probs = _problems(info.value)
    assert ("who", None, ()) not in probs
    assert ("rating", "9", (3,)) in probs
    assert [p.rows for p in info.value.problems if p.column is None] == [(2,), (4,), (5,)]


@pytest.mark.parametrize("fmt", ["long", "wide"])
def test_every_ragged_row_is_reported_never_padded(tmp_path, fmt):
    """issue 18, item 4: short and long rows, long and wide format alike, each with its
    row, together with the other problems."""
    if fmt == "long":
        text = "item,rater,rating\na,x,1\nb,y\nc,z,3,4\nd,x,9\ne,x\n"
        kw: dict = {}
    else:
        text = "item,r1,r2\ni1,1\ni2,2,3\ni3,1,2,3\ni4,9,1\n"
        kw = {"format": "wide"}
    with pytest.raises(RatingsError) as info:
        read_ratings(_write(tmp_path, "r.csv", text), scale=LIKERT, **kw)
    probs = _problems(info.value)
    if fmt == "long":
        assert (None, "2 fields", (2, 5)) in probs
        assert (None, "4 fields", (3,)) in probs
        assert ("rating", "9", (4,)) in probs
    else:
        assert (None, "2 fields", (1,)) in probs
        assert (None, "4 fields", (3,)) in probs
        assert ("r1", "9", (4,)) in probs
    assert len(probs) == 3


def test_short_wide_row_alone_is_not_read_as_not_rated(tmp_path):
    """issue 18, item 4: before, a short wide row was padded as 'not rated'."""
    path = _write(tmp_path, "w.csv", "item,r1,r2\ni1,1\ni2,2,3\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path, format="wide", scale=LIKERT)
    assert _problems(info.value) == [(None, "2 fields", (1,))]
    assert "3 fields as in the CSV header" in str(info.value)


def test_unclosed_quote_is_reported_not_swallowed(tmp_path):
    """issue 18, item 4: a quote never closed takes the rest of the file into one field;
    that is named, not read as one long rating."""
    path = _write(tmp_path, "r.csv", 'item,rater,rating\na,x,1\nb,y,"3\nc,z,5\nd,x,2\n')
    with pytest.raises(RatingsError) as info:
        read_ratings(path)
    (p,) = info.value.problems
    assert p.rows == (2,) and "a closing quote" in p.expected


def test_field_over_several_lines_is_one_record(tmp_path):
    """issue 18, item 4: a quoted line break is part of the field; rows are records."""
    path = _write(tmp_path, "r.csv", 'item,rater,note,rating\na,x,"two\nlines",1\nb,x,"",2\n')
    r = read_ratings(path, scale=LIKERT, keep=["note"])
    assert r.data["note"].to_list() == ["two\nlines", None]
    assert r.data["source_row"].to_list() == [1, 2]


# ------------------------------------------------------------ small things real files carry


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.csv", b"", "file is empty"),
        ("spaces.csv", b"  \n\n", "file is empty"),
        ("empty.json", b"", "file is empty"),
        ("empty.jsonl", b"\n \n", "file is empty"),
        ("header.csv", b"item,rater,rating\n", "input is empty"),
        ("header.tsv", b"item\trater\trating\r\n\r\n", "input is empty"),
        ("latin1.csv", "item,rater,rating\na,Jos\u00e9,1\n".encode("latin-1"), "0xe9"),
        ("latin1.jsonl", '{"item": "\u00e9"}\n'.encode("latin-1"), "0xe9"),
        ("utf16.csv", "item,rater,rating\na,x,1\n".encode("utf-16"), "encoding='utf-16'"),
    ],
)
def test_unreadable_files_give_one_clear_message(tmp_path, name, content, expected):
    """issue 18: empty, header-only, undecodable files: one problem, naming the file."""
    path = _write(tmp_path, name, content)
    with pytest.raises(RatingsError) as info:
        read_ratings(path)
    assert len(info.value.problems) == 1
    assert expected in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("bom.csv", b"\xef\xbb\xbfitem,rater,rating\r\na,x,1\r\nb,x,2\r\n"),
        (
            "bom.jsonl",
            b'\xef\xbb\xbf{"item":"a","rater":"x","rating":1}\r\n'
            b'{"item":"b","rater":"x","rating":2}\r\n\r\n',
        ),
        (
            "bom.json",
            b'\xef\xbb\xbf[{"item":"a","rater":"x","rating":1},\r\n'
            b'{"item":"b","rater":"x","rating":2}]\r\n',
        ),
        ("trailing.csv", b"item,rater,rating\na,x,1\nb,x,2\n\n\n  \n"),
        ("semi_crlf.csv", b"\xef\xbb\xbfitem;rater;rating\r\na;x;1\r\nb;x;2\r\n\r\n"),
    ],
)
def test_bom_crlf_and_trailing_blank_lines_read_cleanly(tmp_path, name, content):
    """issue 18: a byte-order mark, CRLF line ends and trailing blank lines are no data."""
    r = read_ratings(_write(tmp_path, name, content), scale=LIKERT)
    assert _triples(r) == [("a", "x", "1"), ("b", "x", "2")]
    assert not any("blank" in s for s in r.steps)


def test_blank_lines_between_rows_are_counted_and_keep_row_numbers(tmp_path):
    """issue 18: a blank line inside the data is skipped, said, and rows keep the numbers
    a spreadsheet shows."""
    path = _write(tmp_path, "r.csv", "item,rater,rating\na,x,1\n\nb,x,9\n")
    with pytest.raises(RatingsError) as info:
        read_ratings(path, scale=LIKERT)
    assert _problems(info.value) == [("rating", "9", (3,))]
    r = read_ratings(_write(tmp_path, "ok.csv", "item,rater,rating\na,x,1\n\nb,x,2\n"))
    assert r.data["source_row"].to_list() == [1, 3]
    assert any("1 blank line between data rows skipped (row 2)" in s for s in r.steps)


def test_gzipped_json_lines(tmp_path):
    """issue 18: `.jsonl.gz` is decompressed like `.csv.gz`."""
    path = _write(tmp_path, "r.jsonl.gz", gzip.compress(b'{"item":"a","rater":"x","rating":3}\n'))
    assert _triples(read_ratings(path, scale=LIKERT)) == [("a", "x", "3")]


def test_read_source_reports_instead_of_raising(tmp_path):
    """issue 18, item 4: read_source lists what it could not read; load_source raises."""
    path = _write(tmp_path, "r.csv", "item;rater;rating\na;x;1\nb;x\n")
    loaded = read_source(path)
    assert loaded.separator == ";" and loaded.frame.height == 1
    assert [p.rows for p in loaded.problems] == [(2,)]
    with pytest.raises(RatingsError, match="row 2: got '2 fields'"):
        load_source(path)


# ------------------------------------------------------------ properties

_FIELD_CHARS = st.sampled_from(list("abXYZ\u00e909 ,;\t|\"'\n-"))
_ids = st.text(_FIELD_CHARS, min_size=1, max_size=6).filter(lambda s: s == s.strip() != "")


@st.composite
def _tables(draw):
    pairs = draw(
        st.lists(st.tuples(_ids, _ids), min_size=1, max_size=12, unique=True),
    )
    ratings = draw(st.lists(st.integers(1, 5), min_size=len(pairs), max_size=len(pairs)))
    notes = draw(st.lists(st.text(_FIELD_CHARS, max_size=5), min_size=len(pairs)))
    return [(i, r, str(v), n) for (i, r), v, n in zip(pairs, ratings, notes, strict=False)]


def _csv_text(rows, sep: str, terminator: str, header=("item", "rater", "rating", "note")):
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator=terminator)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


@settings(max_examples=60, deadline=None)
@given(
    rows=_tables(),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    terminator=st.sampled_from(["\n", "\r\n"]),
)
def test_any_delimiter_round_trips(tmp_path_factory, rows, sep, terminator):
    """issue 18, item 1: random ids and ratings written with a random delimiter (quoted
    where a field holds it) read back the same, sniffed or given."""
    path = tmp_path_factory.mktemp("delim") / "r.csv"
    path.write_text(_csv_text(rows, sep, terminator), newline="")
    want = [(i, r, v) for i, r, v, _ in rows]
    sniffed = read_ratings(path, scale=LIKERT)
    given_ = read_ratings(path, scale=LIKERT, separator=sep)
    for r in (sniffed, given_):
        assert _triples(r) == want
        assert r.data["source_row"].to_list() == list(range(1, len(rows) + 1))
    assert (sep != ",") == bool(sniffed.steps)
    # the column without a role comes through as written (empty as null)
    assert read_source(path).frame["note"].to_list() == [n or None for *_, n in rows]


@settings(max_examples=60, deadline=None)
@given(rows=_tables(), sep=st.sampled_from([",", ";", "\t", "|"]), data=st.data())
def test_every_ragged_row_is_found(rows, sep, data):
    """issue 18, item 4: drop or add a field in random rows: exactly those rows are
    reported, with either reader path (quoted or not)."""
    k = data.draw(st.sets(st.integers(0, len(rows) - 1)))
    fields = [list(row) for row in rows]
    for j in k:
        if data.draw(st.booleans()):
            fields[j].pop()
        else:
            fields[j].append("extra")
    text = _csv_text(fields, sep, "\n")
    table = parse_delimited(text, sep)
    reported = sorted(r for p in table.problems for r in p.rows)
    assert reported == sorted(j + 1 for j in k)
    assert table.rows == [j + 1 for j in range(len(rows)) if j not in k]
    # the quote-free fast path and the csv-module path agree
    quoted = parse_delimited('"item"' + text[len("item") :], sep)
    assert quoted.frame.equals(table.frame) and quoted.rows == table.rows
    assert [(p.value, p.rows) for p in quoted.problems] == [
        (p.value, p.rows) for p in table.problems
    ]


_HOSTILE = st.text(st.sampled_from(list('itemraxg,;\t|"\n\r 12345[]{}:\\\ufeff')), max_size=80)


@settings(max_examples=80, deadline=None)
@given(
    body=_HOSTILE,
    suffix=st.sampled_from(["csv", "tsv", "jsonl", "json"]),
    header=st.sampled_from(["", "item,rater,rating\n", "item;rater;rating\n", '{"item": 1}\n']),
)
# objects without keys: rows without columns, once an InvalidOperationError of polars
@example(body="{}", suffix="jsonl", header="")
@example(body="[{}]", suffix="json", header="")
def test_hostile_text_gives_ratings_or_ratings_error(tmp_path_factory, body, suffix, header):
    """issue 18: whatever the bytes, the readers answer with Ratings or a RatingsError
    (never another exception), and every row they name is a data row of the file."""
    path = tmp_path_factory.mktemp("hostile") / f"r.{suffix}"
    path.write_bytes((header + body).encode())
    n_lines = (header + body).count("\n") + (header + body).count("\r") + 1
    try:
        read_ratings(path)
    except RatingsError as err:
        assert err.problems
        assert all(1 <= r <= n_lines for p in err.problems for r in p.rows)
