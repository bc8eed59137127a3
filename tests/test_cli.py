"""The command line: demo and validate."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from raterstats.cli import app

runner = CliRunner()


def test_demo_writes_the_report(tmp_path):
    out = tmp_path / "report"
    res = runner.invoke(
        app, ["demo", "--out", str(out), "--ordinal-draws", "0", "--categorical-draws", "0"]
    )
    assert res.exit_code == 0, res.output
    assert f"Report written to {(out / 'report.md').resolve()}" in res.output
    report = (out / "report.md").read_text()
    assert "## Data summary" in report
    assert "fine binary" in report
    assert "## Agreement among the physicians" in report
    assert "![Randolph's kappa by dimension and scheme](agreement_randolph_kappa.png)" in report
    for name in (
        "agreement.csv",
        "agreement_randolph_kappa.png",
        "summary_cells.csv",
        "summary_raters.csv",
        "summary.json",
        "label_distribution.csv",
    ):
        assert (out / name).exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_items"] == 300 and summary["n_raters"] == 7


def test_validate_ok_and_json(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("answer,annotator,score\na,x,1\na,y,2\n")
    res = runner.invoke(app, ["validate", str(path), "-c", "item=answer", "-s", "likert5"])
    assert res.exit_code == 0, res.output
    assert "ratings: 2" in res.output
    res = runner.invoke(app, ["validate", str(path), "--json", "-s", "ordinal:1,2"])
    assert res.exit_code == 0
    assert json.loads(res.output)["n_ratings"] == 2


def test_validate_reports_every_problem_and_fails(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("item,rater,rating\na,,1\nb,y,9\n")
    res = runner.invoke(app, ["validate", str(path), "-s", "likert5"])
    assert res.exit_code == 1
    assert "row 1, column 'rater'" in res.output
    assert "row 2, column 'rating': got '9'" in res.output


def test_validate_bad_scale_name(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("item,rater,rating\na,x,1\n")
    res = runner.invoke(app, ["validate", str(path), "-s", "likert99"])
    assert res.exit_code == 2
    assert "unknown scale" in res.output


def test_help_shows_examples():
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0 and "raterstats demo" in res.output
    for cmd in ("demo", "validate"):
        res = runner.invoke(app, [cmd, "--help"])
        assert res.exit_code == 0 and "Example:" in res.output


def test_console_script_entry_point():
    res = subprocess.run(
        [sys.executable, "-m", "raterstats.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert res.stdout.startswith("raterstats ")
