"""Issue 18, annotation tools' exports: Label Studio JSON, Mechanical Turk batch results and
wide survey exports read as Ratings (raterstats.exports, read_ratings(export=...), the
CLI's --export). Every mapping rule is tested on the synthetic fixtures of
tests/data/exports/ (see its README for the documentation page each follows); every
malformed export lists every problem, each at its place in the export.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from raterstats import (
    NominalScale,
    OrdinalScale,
    RatingsError,
    read_label_studio,
    read_mturk,
    read_ratings,
    read_survey,
)
from raterstats.cli import app
from raterstats.exports import ExportProblem, parse_mturk_time, read_export

DATA = Path(__file__).parent / "data" / "exports"
LS = DATA / "label_studio.json"
MTURK = DATA / "mturk_batch_results.csv"
QUALTRICS = DATA / "qualtrics.csv"
LIKERT = OrdinalScale.likert(5)


def _rows(r, *cols):
    return r.data.select(*cols).rows()


def _lines(err: RatingsError) -> list[str]:
    return [p.describe(err.source) for p in err.problems]


def _reason(r, text: str) -> int:
    """The count of the one exclusion whose reason contains ``text``."""
    (hit,) = [e for e in r.exclusions if text in e.reason]
    return hit.n_rows


# ----------------------------------------------------------------------------- Label Studio


def test_label_studio_maps_task_annotator_control_tag_and_lead_time():
    """https://labelstud.io/guide/task_format: item = task id, rater = completed_by (an id,
    or the user object's email), dimension = from_name, rating = the choice / the rating,
    duration_s = lead_time; source_row = the task's position in the export."""
    r = read_label_studio(LS)
    assert _rows(r.filter(item="101"), "rater", "dimension", "rating", "duration_s") == [
        ("1", "correctness", "yes", 12.5),
        ("1", "fluency", "4", 12.5),
        ("2", "correctness", "partially", 20.25),
        ("2", "fluency", "5", 20.25),
    ]
    assert r.items == ("101", "102", "103")
    assert "carol@example.org" in r.raters  # completed_by as a user object
    assert set(r.filter(item="103").data["source_row"]) == {3}
    assert r.dimensions == ("correctness", "fluency")
    assert r.source == str(LS)


def test_label_studio_counts_what_it_leaves_out():
    """https://labelstud.io/guide/export.html: cancelled annotations, free text (textarea),
    rankings (ranker: no per-item rank model), region labels are left out and counted;
    predictions are not read and the step says how many."""
    r = read_label_studio(LS)
    assert _reason(r, "was_cancelled") == 1  # task 102's cancelled annotation had 1 rating
    assert "2 annotation(s)" in next(e.reason for e in r.exclusions if "cancel" in e.reason)
    assert _reason(r, "'textarea'") == 1
    assert _reason(r, "'ranker'") == 1
    assert _reason(r, "'labels'") == 1
    step = r.steps[0]
    assert "not read: 1 predictions" in step
    assert "1 ground-truth annotation(s) read as ratings" in step
    summary = r.summary().to_markdown()
    assert "was_cancelled" in summary and "textarea" in summary


def test_label_studio_data_fields_for_item_system_question_and_kept_fields():
    """https://labelstud.io/guide/task_format: data fields named by the user become item,
    system and question; kept fields are extra columns."""
    r = read_label_studio(
        LS,
        item_field="answer_id",
        system_field="model",
        question_field="question_id",
        keep=["text"],
    )
    assert r.items == ("a1", "a2", "a3")
    assert _rows(r.filter(dimension="fluency", rater="1"), "item", "system", "question") == [
        ("a1", "sysA", "q1"),
        ("a3", "sysA", "q2"),
    ]
    assert r.data.filter(pl.col("item") == "a3")["text"][0] == "See a doctor if pain persists."
    same = read_ratings(
        LS,
        export="label-studio",
        columns={"item": "answer_id", "system": "model", "question": "question_id"},
        keep=["text"],
    )
    assert same == r


def test_label_studio_ground_truth_kept_or_excluded():
    """https://labelstud.io/guide/task_format (ground_truth): kept as its annotator's
    ratings by default; ground_truth='exclude' leaves them out, counted."""
    kept = read_label_studio(LS)
    assert kept.filter(item="102", rater="2").n_ratings == 2
    out = read_label_studio(LS, ground_truth="exclude")
    assert out.filter(item="102").raters == ("carol@example.org",)
    assert _reason(out, "ground-truth") == 2


def test_label_studio_multi_choice_is_a_problem_or_joined():
    """https://labelstud.io/tags/choices: several choices in one result are a problem at
    the task and annotation, or with multi_choice='join' one level 'a|b'."""
    path = DATA / "label_studio_multi_choice.json"
    with pytest.raises(RatingsError) as info:
        read_label_studio(path, scale=NominalScale(["incomplete", "unsafe"]))
    (line,) = _lines(info.value)
    assert "task 7 annotation 1 (result 'issues')" in line
    assert "got 'unsafe, incomplete'" in line and "multi_choice='join'" in line
    r = read_label_studio(path, multi_choice="join")
    assert _rows(r, "rater", "rating") == [("1", "incomplete|unsafe"), ("2", "incomplete")]


def test_label_studio_malformed_export_lists_every_problem_at_its_task_and_annotation():
    """https://labelstud.io/guide/task_format: missing keys and wrong types, and a rating
    off the declared scale, all in one RatingsError, each at its task and annotation."""
    with pytest.raises(RatingsError) as info:
        read_label_studio(DATA / "label_studio_malformed.json", scale={"fluency": LIKERT})
    lines = _lines(info.value)
    expected = [
        "record 1 (key 'id'): expected a task id (an integer or a string) (the key is missing)",
        "task 2 (key 'annotations'): got '{\"completed_by\": 1}'; expected a list",
        "record 3: got 'str'; expected a task",
        "task 4 annotation 1 (key 'completed_by'): expected the annotator",
        "task 4 annotation 2 (key 'lead_time'): got 'fast'",
        "task 4 annotation 2 (key 'from_name' of a result)",
        "task 4 annotation 2 (result 'fluency'): got '\"4\"'; expected value.rating: a finite",
        "task 4 annotation 2 (result 'correctness'): got '\"yes\"'; expected value.choices",
        "task 4 annotation 3 (key 'result'): got 'yes'; expected a list of results",
        "task 5 annotation 1 (result 'fluency'): got '9'",
    ]
    assert len(lines) == len(expected)
    for want, line in zip(expected, lines, strict=True):
        assert want in line, (want, line)
    assert all(line.startswith(str(DATA / "label_studio_malformed.json")) for line in lines)
    assert all(isinstance(p, ExportProblem) for p in info.value.problems)
    assert info.value.problems[-1].rows == (5,)


def test_label_studio_broken_json_and_wrong_top_level(tmp_path):
    """https://labelstud.io/guide/export.html: the JSON export is a list of tasks; broken
    JSON names the line and column, a single object says to put it in a list."""
    with pytest.raises(RatingsError) as info:
        read_label_studio(DATA / "label_studio_broken.json")
    (line,) = _lines(info.value)
    assert "label_studio_broken.json" in line and "line 4, column 1" in line
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads(LS.read_text())[0]))
    with pytest.raises(RatingsError, match="one task: put it in a list"):
        read_label_studio(one)
    with pytest.raises(RatingsError, match="an existing file"):
        read_label_studio(DATA / "missing.json")


def test_label_studio_duplicate_annotation_and_empty_choice_are_located(tmp_path):
    """https://labelstud.io/guide/task_format: one annotator twice on a task is a duplicate
    at both annotations; an empty choice is a missing rating (or dropped and counted)."""
    ann = {"completed_by": 4, "result": [_choice("verdict", ["ok"])]}
    tasks = [
        {"id": "t1", "data": {}, "annotations": [ann, ann]},
        {
            "id": "t2",
            "data": {},
            "annotations": [
                {"completed_by": 4, "result": [_choice("verdict", [])]},
                {"completed_by": 5, "result": [_choice("verdict", ["bad"])]},
            ],
        },
    ]
    with pytest.raises(RatingsError) as info:
        read_label_studio(tasks)
    lines = _lines(info.value)
    assert any("task 't2' annotation 1 (result 'verdict')" in x and "a rating" in x for x in lines)
    assert any(
        "task 't1' annotation 1, task 't1' annotation 2" in x and "one rating per" in x
        for x in lines
    )
    r = read_label_studio(tasks[1:], missing="drop", scale=NominalScale(["ok", "bad"]))
    assert r.n_ratings == 1 and _reason(r, "empty rating") == 1


def _choice(tag: str, choices: list[str]) -> dict:
    return {"from_name": tag, "to_name": "text", "type": "choices", "value": {"choices": choices}}


def test_label_studio_per_region_and_unknown_results_are_counted():
    """https://labelstud.io/tags/choices (perRegion): a result whose value has start/end
    rates a region, not the task; unknown types are counted by type, never dropped."""
    res = [
        {
            "from_name": "q",
            "to_name": "t",
            "type": "choices",
            "value": {"start": 0, "end": 3, "choices": ["a"]},
        },
        {
            "from_name": "tax",
            "to_name": "t",
            "type": "taxonomy",
            "value": {"taxonomy": [["a", "b"]]},
        },
        {"from_name": "q", "to_name": "t", "type": "rating", "value": {"rating": 3}},
    ]
    r = read_label_studio(
        [
            {
                "id": 1,
                "data": {},
                "annotations": [
                    {"completed_by": 1, "result": res},
                    {"completed_by": 2, "result": res},
                ],
            }
        ]
    )
    assert r.n_ratings == 2
    assert _reason(r, "per-region") == 2 and _reason(r, "'taxonomy'") == 2


def test_label_studio_non_finite_rating_and_missing_data_field():
    """https://labelstud.io/tags/rating.html: a rating is a finite number (Python's json
    reads NaN and Infinity); a named data field missing from a task is a problem there."""
    tasks = json.loads(
        '[{"id": 1, "data": {}, "annotations": [{"completed_by": 1, "result": [{"from_name":'
        ' "q", "type": "rating", "value": {"rating": NaN}}]}]}]'
    )
    with pytest.raises(RatingsError) as info:
        read_label_studio(tasks, system_field="model")
    lines = _lines(info.value)
    assert (
        "task 1 (data field 'model'): expected a field of the data (the key is missing)"
        in (lines[0])
    )
    assert (
        "task 1 annotation 1 (result 'q'): got 'NaN'; expected value.rating: a finite" in (lines[1])
    )


# ----------------------------------------------------------------------------- MTurk


def test_mturk_maps_workers_items_answers_and_work_time():
    """https://docs.aws.amazon.com/AWSMechTurk/latest/RequesterUI/ReviewingResultsOutsideoftheRUI.html:
    rater = WorkerId, item = Input.id, one dimension per Answer column, duration_s =
    WorkTimeInSeconds, source_row = the CSV data row."""
    r = read_mturk(MTURK)
    assert r.dimensions == ("correctness", "fluency")
    assert _rows(
        r.filter(dimension="fluency"), "item", "rater", "rating", "duration_s", "source_row"
    ) == [
        ("a1", "A1EXAMPLEWORKER", "4", 35.0, 1),
        ("a1", "A2EXAMPLEWORKER", "5", 52.0, 2),
        ("a2", "A1EXAMPLEWORKER", "2", 40.0, 4),
        ("a2", "A4EXAMPLEWORKER", "3", 61.0, 6),
        ("a3", "A1EXAMPLEWORKER", "4", 28.0, 7),
    ]
    assert "HITTypeId" in r.provenance.ignored_columns
    assert "7 assignment(s) (3 Submitted, 3 Approved, 1 Rejected)" in r.steps[0]


def test_mturk_rejected_assignments_excluded_and_counted_or_kept():
    """https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_AssignmentDataStructureArticle.html:
    AssignmentStatus Rejected (and Submitted with a Reject reason, pending rejection) is
    left out and counted; keep_rejected=True keeps them."""
    r = read_mturk(MTURK)
    assert "A3EXAMPLEWORKER" not in r.raters
    assert r.filter(item="a2", rater="A2EXAMPLEWORKER").n_ratings == 0
    assert _reason(r, "rejected MTurk assignments") == 4  # 2 assignments x 2 answers
    kept = read_mturk(MTURK, keep_rejected=True)
    assert kept.n_ratings == r.n_ratings + 4 and not kept.exclusions


def test_mturk_item_and_role_columns_answers_and_kept_columns():
    """https://docs.aws.amazon.com/AWSMechTurk/latest/RequesterUI/ReviewingResultsOutsideoftheRUI.html:
    the item column and other roles from named columns; a chosen Answer column is one
    dimension (renamed with dimension=); kept columns are extra columns."""
    r = read_mturk(
        MTURK,
        columns={"system": "Input.model", "question": "Input.question"},
        answers=["fluency"],
        dimension="fluency_1to5",
        keep=["LifetimeApprovalRate"],
    )
    assert r.dimensions == ("fluency_1to5",)
    assert r.systems == ("sysA", "sysB")
    assert r.data["LifetimeApprovalRate"].unique().to_list() == ["100% (12/12)"]
    via = read_ratings(
        MTURK,
        export="mturk",
        columns={"system": "Input.model", "question": "Input.question"},
        keep=["LifetimeApprovalRate"],
    )
    assert via.filter(dimension="fluency").n_ratings == r.n_ratings
    with pytest.raises(ValueError, match="one dimension of an export with one answer"):
        read_mturk(MTURK, dimension="x")
    with pytest.raises(ValueError, match="cannot come from a batch results column"):
        read_mturk(MTURK, columns={"rating": "Answer.fluency"})


def test_mturk_first_input_column_radio_groups_and_accept_submit_durations(tmp_path):
    """https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMechanicalTurkRequester/RetrievingResults.html:
    without Input.id the first Input.* column is the item; crowd-html radio buttons
    (Answer.q.option = true/false) are one dimension; without WorkTimeInSeconds the
    duration is SubmitTime - AcceptTime across time zones (PDT -> PST) and ISO times; two
    options checked and an unknown zone are problems at their row."""
    with pytest.raises(RatingsError) as info:
        read_mturk(DATA / "mturk_radio_groups.csv")
    lines = _lines(info.value)
    assert any("row 5, column 'AcceptTime': got 'Mon Nov 04 10:02:00 XYZ 2024'" in x for x in lines)
    assert any("row 4, column 'Answer.sentiment.*': got 'negative, neutral'" in x for x in lines)
    assert any("row 5, column 'Answer.sentiment.*'" in x and "a rating" in x for x in lines)
    good = tmp_path / "batch.csv"  # the fixture without its two broken assignments
    good.write_text("".join((DATA / "mturk_radio_groups.csv").read_text().splitlines(True)[:4]))
    r = read_mturk(good)
    assert r.dimensions == ("sentiment",)
    assert _rows(r, "item", "rater", "rating", "duration_s") == [
        ("s1", "W1", "positive", 40.0),
        ("s1", "W2", "neutral", 25.0),
        ("s2", "W1", "neutral", 12.0),
    ]


@settings(max_examples=60, deadline=None)
@given(
    t=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 12, 31)),
    zone=st.sampled_from(["PST", "PDT", "GMT", "UTC", "EST", "EDT"]),
    secs=st.integers(0, 10**6),
)
def test_mturk_times_round_trip(t, zone, secs):
    """https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMechanicalTurkRequester/RetrievingResults.html:
    any time written as MTurk writes it parses, and a difference of two times in one zone
    is the seconds between them (property-based)."""
    t = t.replace(microsecond=0)
    fmt = "%a %b %d %H:%M:%S {} %Y".format
    a = parse_mturk_time(t.strftime(fmt(zone)))
    b = parse_mturk_time((t + timedelta(seconds=secs)).strftime(fmt(zone)))
    assert a is not None and b is not None
    assert (b - a).total_seconds() == secs
    assert parse_mturk_time(t.strftime(fmt("XYZ"))) is None


def test_mturk_malformed_batch_lists_every_problem_at_its_row_and_column():
    """https://docs.aws.amazon.com/AWSMechTurk/latest/RequesterUI/ReviewingResultsOutsideoftheRUI.html:
    a bad status, an Approve and a Reject on one assignment, an empty WorkerId, a text
    WorkTimeInSeconds, an empty answer, a rating off the scale and a duplicate, all in one
    RatingsError at CSV data rows and columns."""
    path = DATA / "mturk_malformed.csv"
    with pytest.raises(RatingsError) as info:
        read_mturk(path, scale={"fluency": LIKERT, "correctness": NominalScale(["yes", "no"])})
    lines = _lines(info.value)
    for want in [
        "row 1, column 'AssignmentStatus': got 'Pending'",
        "row 5, column 'Reject': got 'Too fast'; expected either an Approve mark",
        "row 2, column 'WorkerId': got ''; expected a non-empty rater id",
        "row 3, column 'WorkTimeInSeconds': got 'abc'; expected a number",
        "row 6, column 'Answer.correctness': got ''; expected a rating",
        "row 4, column 'Answer.fluency': got '9'",
        "rows 1, 7: got \"item='a1', rater='A1EXAMPLEWORKER', dimension='correctness'\"",
    ]:
        assert sum(want in x for x in lines) == 1, (want, lines)
    assert all(x.startswith(str(path)) for x in lines)


# ----------------------------------------------------------------------------- surveys


def test_qualtrics_header_rows_skipped_metadata_not_items():
    """https://www.qualtrics.com/support/survey-platform/data-and-analysis-module/data/download-data/understanding-your-dataset/:
    the question-text and ImportId rows are skipped (noted); ResponseId is the rater;
    metadata, comment and text-entry columns are not items; Q1_correctness is item Q1,
    dimension correctness; empty cells are not-rated, -99 (na_values) left out, counted."""
    r = read_survey(QUALTRICS, na_values=[-99])
    assert r.items == ("Q1", "Q2", "Q3")
    assert r.dimensions == ("correctness", "fluency")
    assert r.raters == ("R_1a2B3c4D5e6F7g8", "R_2h3I4j5K6l7M8n9", "R_3o4P5q6R7s8T9u0")
    assert _rows(
        r.filter(rater="R_3o4P5q6R7s8T9u0"), "item", "dimension", "rating", "source_row"
    ) == [("Q1", "correctness", "2", 3), ("Q1", "fluency", "4", 3)]
    step = r.steps[0]
    assert "Qualtrics export: the 2 header rows" in step
    assert "4 empty cell(s) are not-rated" in step
    assert "1 unfinished response(s)" in step
    assert _reason(r, "na_values") == 1
    ignored = r.provenance.ignored_columns
    assert {"Comments", "Q4_TEXT", "StartDate", "Duration (in seconds)"} <= set(ignored)
    assert r.n_ratings == 13


def test_survey_pattern_function_and_explicit_columns():
    """Google Forms grids (`Question [Row]`) need their own pattern; a function of the
    header names item and dimension; the default pattern reads '[item 3] Correctness'."""
    forms = DATA / "google_forms.csv"
    with pytest.raises(RatingsError, match="at least one rating column"):
        read_survey(forms)  # the default pattern names nothing in 'Correctness [Answer 1]'
    r = read_survey(forms, pattern=r"(?P<dimension>.+?) \[(?P<item>.+)\]")
    assert r.items == ("Answer 1", "Answer 2") and r.dimensions == ("Correctness", "Fluency")
    assert r.raters == ("ana@example.org", "ben@example.org", "chen@example.org")

    def by_function(header: str) -> tuple[str, str | None] | None:
        if "[" not in header:
            return None
        dim, _, item = header.rstrip("]").partition(" [")
        return item.replace("Answer ", "a"), dim.lower()

    f = read_survey(forms, pattern=by_function)
    assert f.items == ("a1", "a2") and f.dimensions == ("correctness", "fluency")
    assert f.n_ratings == r.n_ratings == 10
    frame = pl.DataFrame({"Email": ["x@y.z"], "[item 3] Correctness": ["yes"]})
    yes_no = NominalScale(["yes", "no"])
    got = read_survey(frame, scale=yes_no)
    assert _rows(got, "item", "dimension") == [("[item 3]", "Correctness")]
    one = read_survey(frame, pattern=r"\[item (?P<item>\d+)\].*", dimension="correct", scale=yes_no)
    assert _rows(one, "item", "dimension") == [("3", "correct")]
    with pytest.raises(RatingsError, match="a header the pattern"):
        read_survey(frame, rating_columns=["Email"])
    with pytest.raises(ValueError, match="named group 'item'"):
        read_survey(frame, pattern=r"(?P<x>.+)")
    with pytest.raises(ValueError, match=r"<lambda> must return \(item, dimension or None\)"):
        read_survey(frame, pattern=lambda h: h)


def test_survey_rater_role_columns_and_header_rows():
    """Per-respondent roles from named columns; header_rows skips extra header rows (e.g.
    SurveyMonkey's second header row) and rows are numbered after them."""
    text = "Respondent ID,Panel,Q1_clarity,Q2_clarity\n,,Response,Response\n9001,a,4,5\n"
    frame = pl.read_csv(io.StringIO(text), infer_schema=False)
    r = read_survey(frame, header_rows=2, columns={"group": "Panel"})
    assert _rows(r, "item", "rater", "group", "source_row") == [
        ("Q1", "9001", "a", 1),
        ("Q2", "9001", "a", 1),
    ]
    assert "1 header row(s) under the column names skipped" in r.steps[0]
    with pytest.raises(RatingsError, match="a rater column"):
        read_survey(pl.DataFrame({"Q1_x": ["1"]}))
    with pytest.raises(ValueError, match="cannot come from a survey column"):
        read_survey(frame, columns={"system": "Panel"})


def test_survey_malformed_lists_every_problem_at_row_and_header():
    """A survey export with an empty rater id, ratings off the scale, a respondent twice
    and two headers naming one item and dimension: every problem in one RatingsError, at
    its data row and column header."""
    path = DATA / "survey_malformed.csv"
    with pytest.raises(RatingsError) as info:
        read_survey(path, scale=LIKERT)
    lines = _lines(info.value)
    for want in [
        "got 'Q3_fluency, Q3 fluency'; expected one column per item and dimension",
        "row 2, column 'ResponseId': got ''; expected a non-empty rater id",
        "row 1, column 'Q2_fluency': got '6'",
        "row 3, column 'Q1_fluency': got 'abc'",
        "rows 3, 4: got \"item='Q1', rater='R_c', dimension='fluency'\"",
    ]:
        assert sum(want in x for x in lines) == 1, (want, lines)


# ----------------------------------------------------------------------------- dispatch, CLI


def test_read_ratings_export_dispatch_and_options_that_do_not_apply():
    """read_ratings(path, export=...) reads each export as its reader does; options that do
    not apply to an export are refused with a precise ValueError."""
    assert read_ratings(LS, export="label-studio") == read_label_studio(LS)
    assert read_ratings(MTURK, export="MTurk") == read_mturk(MTURK)
    assert read_ratings(QUALTRICS, export="survey") == read_survey(QUALTRICS)
    with pytest.raises(ValueError, match="export must be one of"):
        read_ratings(LS, export="prodigy")
    with pytest.raises(ValueError, match="format='wide' does not apply"):
        read_ratings(MTURK, export="mturk", format="wide")
    with pytest.raises(ValueError, match="names data fields for"):
        read_ratings(LS, export="label-studio", columns={"rater": "user"})
    with pytest.raises(ValueError, match="each control tag"):
        read_ratings(LS, export="label-studio", dimension="x")
    with pytest.raises(ValueError, match="missing= does not apply to a survey"):
        read_export(QUALTRICS, "survey", missing="drop")


runner = CliRunner()


@pytest.mark.parametrize(
    ("kind", "path"),
    [("label-studio", LS), ("mturk", MTURK), ("survey", QUALTRICS)],
)
def test_cli_validate_export_prints_the_summary(kind, path):
    """`raterstats validate FILE --export KIND` prints the summary, exclusions included."""
    res = runner.invoke(app, ["validate", str(path), "--export", kind])
    assert res.exit_code == 0, res.output
    assert "# Data summary" in res.output and "## Steps since ingest" in res.output
    res = runner.invoke(app, ["validate", str(path), "--export", kind, "--json"])
    assert json.loads(res.output)["source"] == str(path)


def test_cli_validate_malformed_export_exits_1_with_every_problem():
    """A malformed export: exit 1, every problem with its place, no traceback; an unknown
    export or an option that does not apply: exit 2."""
    res = runner.invoke(
        app,
        [
            "validate",
            str(DATA / "label_studio_malformed.json"),
            "--export",
            "label-studio",
            "-s",
            "likert5",
        ],
    )
    assert res.exit_code == 1
    assert "10 problems" in res.output and "task 4 annotation 2" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(
        app,
        ["validate", str(DATA / "mturk_malformed.csv"), "--export", "mturk", "-s", "likert5"],
    )
    assert res.exit_code == 1 and "row 1, column 'AssignmentStatus'" in res.output
    res = runner.invoke(app, ["validate", str(MTURK), "--export", "prodigy"])
    assert res.exit_code == 2 and "export must be one of" in res.output
    res = runner.invoke(app, ["validate", str(MTURK), "--export", "mturk", "--wide"])
    assert res.exit_code == 2 and "does not apply" in res.output
    res = runner.invoke(app, ["validate", str(MTURK), "--export", "mturk", "-c", "item=HITId"])
    assert res.exit_code == 0 and "item = 'HITId'" in res.output
    res = runner.invoke(
        app, ["validate", str(MTURK), "--export", "mturk", "-c", "item=Input.question"]
    )  # a question is rated by a worker in two HITs: duplicates, at their CSV rows
    assert res.exit_code == 1 and "rows 1, 4: got \"item='q1'" in res.output


# ----------------------------------------------------------------------------- hostile input

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_PATHS = [
    (),
    (0,),
    (0, "id"),
    (0, "data"),
    (0, "annotations"),
    (0, "annotations", 0),
    (0, "annotations", 0, "completed_by"),
    (0, "annotations", 0, "lead_time"),
    (0, "annotations", 0, "result"),
    (0, "annotations", 0, "result", 0),
    (0, "annotations", 0, "result", 0, "type"),
    (0, "annotations", 0, "result", 0, "value"),
    (0, "annotations", 0, "result", 0, "from_name"),
    (0, "annotations", 0, "was_cancelled"),
    (0, "annotations", 0, "result", 0, "value", "choices"),
]


@settings(max_examples=80, deadline=None)
@given(where=st.sampled_from(_PATHS), junk=_JSON)
def test_label_studio_hostile_values_raise_ratings_error_only(where, junk):
    """Any JSON value anywhere in a valid export gives Ratings or a RatingsError whose
    problems each name the export, never another exception (property-based)."""
    tasks = [
        {
            "id": 1,
            "data": {"m": "s"},
            "annotations": [
                {"completed_by": 1, "result": [_choice("v", ["a"])]},
                {"completed_by": 2, "result": [_choice("v", ["b"])]},
            ],
        }
    ]
    if where:
        node = tasks
        for key in where[:-1]:
            node = node[key]
        node[where[-1]] = junk
    else:
        tasks = junk
    try:
        read_label_studio(tasks if isinstance(tasks, list) else [tasks], system_field="m")
    except RatingsError as err:
        assert err.problems
        assert all(p.describe("x.json").startswith("x.json") for p in err.problems)


@settings(max_examples=60, deadline=None)
@given(
    cells=st.lists(
        st.tuples(
            st.sampled_from(["A1", "A2", "", " "]),
            st.sampled_from(["Approved", "Submitted", "Rejected", "", "Pending"]),
            st.sampled_from(["30", "", "x", "-4", "1e400"]),
            st.sampled_from(["1", "5", "", "true", "x"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_mturk_hostile_cells_raise_ratings_error_with_rows(cells, tmp_path_factory):
    """Arbitrary cells in a batch results CSV give Ratings or a RatingsError whose value
    problems each name a data row in the file (property-based)."""
    path = tmp_path_factory.mktemp("mturk") / "batch.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.id", "Answer.q"])
        for i, (worker, status, secs, answer) in enumerate(cells):
            w.writerow([worker, status, secs, f"i{i % 2}", answer])
    try:
        r = read_mturk(path)
    except RatingsError as err:
        assert err.source == str(path)
        for p in err.problems:
            assert all(1 <= row <= len(cells) for row in p.rows)
    else:
        assert r.n_ratings <= len(cells)


@pytest.mark.parametrize(
    "option", [{"separator": ";"}, {"where": {"rater": "w1"}}, {"duplicates": "first"}]
)
def test_read_ratings_options_that_do_not_apply_to_an_export_are_refused(option):
    """issue 18: an option read_ratings would ignore for an export is an error naming it,
    never silently unused."""
    batch = pl.DataFrame(
        {"WorkerId": ["A1", "A2"], "Input.id": ["a1", "a1"], "Answer.q": ["3", "4"]}
    )
    with pytest.raises(ValueError, match=f"not with export='mturk': {next(iter(option))}="):
        read_ratings(batch, export="mturk", **option)
