"""issue 17, acceptance: `raterstats analyze` completes on real exports the project has never
been tuned on (``../shared/data``: DialSummEval campus and AMT, SummEval-OP, Snow et al.'s
RTE) and on the built-in study, run as a user would (the command line, column options or
a study file), each writing report.html whose sections match the data: the sections that
apply are there, the others are listed with their reason.

Slow (real data, model fits); the real data are read from ``../shared/data`` beside the
repository, not copied (no licence stated), and each test is skipped with that reason when
they are absent. Fits use EM / MAP or short NUTS runs (a few minutes in all on 2 cores).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from raterstats.cli import app
from raterstats.datasets import clinical_qa_path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
runner = CliRunner()

pytestmark = pytest.mark.slow


def data_file(name: str) -> Path:
    path = SHARED / name / "data.csv"
    if not path.is_file():
        pytest.skip(f"real data set {name} not found at {path} (../shared/data is not here)")
    return path


def run(args: list[str], out: Path) -> tuple[str, str]:
    res = runner.invoke(app, ["analyze", *args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "report.html").is_file()
    return res.output, (out / "report.md").read_text()


def sections(report: str) -> list[str]:
    return re.findall(r"^## (.+)$", report, flags=re.MULTILINE)


def not_included(report: str) -> dict[str, str]:
    part = report.split("## Sections not included", 1)[1].split("## Methods", 1)[0]
    return dict(re.findall(r"^- \*\*(.+?)\*\*: (.+)$", part, flags=re.MULTILINE))


SUMMARY_LIKERT = ["-c", "rater=annotator", "-c", "rating=label", "-c", "question=document"]


def test_dialsummeval_campus_ordinal_with_rankings(tmp_path):
    """14 systems x 4 dimensions, 3 experts, 1-5: the ordinal model (MAP) and rankings."""
    path = data_file("dialsummeval_campus")
    args = [str(path), *SUMMARY_LIKERT, "-s", "likert5", "--method", "map"]
    output, report = run(args, tmp_path)
    heads = sections(report)
    for h in ("Data summary", "Agreement", "Ordinal rater model", "System rankings"):
        assert h in heads
    assert not any(h.startswith("Categorical rater model") for h in heads)
    assert "Annotation designs" not in heads and "LLM judges" not in heads
    skipped = not_included(report)
    assert set(skipped) == {
        "Categorical rater model",
        "Accuracy against the gold labels",
        "Annotation designs",
        "Intra-rater reliability",
        "LLM judges",
    }
    assert "one annotation design" in skipped["Annotation designs"]
    assert "analyze: note: the ordinal rater model fit is a point estimate (MAP)" in output
    ranking = report.split("## System rankings", 1)[1].split("\n## ", 1)[0]
    assert "> **Note:** Computed from a MAP point estimate" in ranking
    # 14 systems: one row per system, a column per source (no column hidden by a scroll bar)
    assert "| dimension | system | rater model | raw mean | raw majority |" in ranking


def test_dialsummeval_amt_crowd_categorical(tmp_path):
    """283 crowd workers, agreement near chance: MACE (EM) on the 3-point collapse, the
    spread of worker competence rather than 283 rows."""
    path = data_file("dialsummeval_amt")
    args = [str(path), *SUMMARY_LIKERT, "-s", "likert5", "--model", "mace",
            "--categorical-collapse", "likert5_to_3", "--method", "em"]  # fmt: skip
    _, report = run(args, tmp_path)
    heads = sections(report)
    assert any(h.startswith("Categorical rater model: MACE (scale collapsed by") for h in heads)
    assert "System rankings" in heads and "Ordinal rater model" not in heads
    skipped = not_included(report)
    assert "no ordinal model among the models asked" in skipped["Ordinal rater model"]
    assert "### Rater competence: spread over the 283 raters" in report


def test_summeval_op_short_nuts_fit_is_flagged(tmp_path):
    """13 systems x 7 dimensions: a short NUTS run of the ordinal model fails its checks,
    and every table from it says so."""
    path = data_file("summeval_op")
    args = [str(path), *SUMMARY_LIKERT, "-s", "likert5", "--draws", "300", "--tune", "300",
            "--chains", "2"]  # fmt: skip
    output, report = run(args, tmp_path)
    heads = sections(report)
    assert "Ordinal rater model" in heads and "System rankings" in heads
    assert "analyze: warning: the ordinal rater model fit fails its convergence checks" in output
    ordinal = report.split("## Ordinal rater model", 1)[1].split("\n## ", 1)[0]
    assert "**Fit health:** the fit FAILS its checks" in ordinal
    assert ordinal.count("> **Warning:**") >= 3  # fair averages, reliability, raters
    ranking = report.split("## System rankings", 1)[1].split("\n## ", 1)[0]
    assert "> **Warning:**" in ranking


def test_snow_rte_binary_crowd_labels_from_a_study_file(tmp_path):
    """800 items x 10 workers, binary, with gold: MACE and Dawid-Skene by EM; no systems."""
    path = data_file("snow2008_rte")
    study = tmp_path / "study.toml"
    study.write_text(
        f'data = "{path}"\nscale = "binary"\n[columns]\nrater = "annotator"\nrating = "label"\n'
        '[analyze]\nmodels = ["mace", "dawid-skene"]\nmethod = "em"\nn_boot = 200\n'
    )
    res = runner.invoke(app, ["analyze", "--study", str(study), "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    report = (tmp_path / "r" / "report.md").read_text()
    heads = sections(report)
    assert "Categorical rater model: MACE" in heads
    assert "Categorical rater model: DawidSkene" in heads
    skipped = not_included(report)
    assert "no system column" in skipped["System rankings"]
    assert "no ordinal model among the models asked" in skipped["Ordinal rater model"]
    assert "Gold labels, when the data have them, are not used by the fit." in report
    assert "Accuracy against the gold labels" in heads
    gold = pl.read_csv(tmp_path / "r" / "gold_check.csv")
    assert gold["n_gold"].to_list() == [800, 800]
    assert (gold["accuracy"] > 0.9).all() and (gold["accuracy"] < 1).all()
    methods = report.split("## Methods", 1)[1]
    assert methods.count("use\\_gold=False") + methods.count("use_gold=False") == 2


def test_the_built_in_study_as_a_user_would_analyse_it(tmp_path):
    """The shipped file read like any export: every section applies (two designs, repeats,
    an LLM judge, systems)."""
    path = clinical_qa_path()
    args = [str(path), "-s", "likert5", "--categorical-collapse", "likert5_to_3",
            "--fit-setting", "ordinal.method=map", "--fit-setting", "mace.method=em",
            "--no-projections"]  # fmt: skip
    _, report = run(args, tmp_path)
    heads = sections(report)
    for h in ("Agreement among the human raters", "Ordinal rater model", "System rankings",
              "Annotation designs", "Intra-rater reliability (repeats)", "LLM judges"):  # fmt: skip
        assert h in heads
    assert list(not_included(report)) == ["Accuracy against the gold labels"]  # no gold
    assert "No annotation-budget projection" not in report
