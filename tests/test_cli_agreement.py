"""issue 17, "Agreement on the command line": ``raterstats agreement -m NAME:KEY=VALUE``
with the Python functions' option names, the options used stated in every row, a statistic
that does not apply giving its reason in its row (Markdown, JSON, CSV) while the others are
computed, and a warning for nominal statistics on ordered scales with many levels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from raterstats import IntervalScale, OrdinalScale, read_ratings
from raterstats.agreement import (
    agreement,
    cohen_kappa,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    parse_statistic,
)
from raterstats.cli import app
from raterstats.formatting import format_cell

runner = CliRunner()
VECTORS = {
    e["id"]: e
    for e in json.loads(
        (Path(__file__).parent / "reference" / "agreement_vectors.json").read_text()
    )["entries"]
}


def vector_file(tmp_path: Path, vector_id: str) -> Path:
    """The oracle vector's items x raters matrix as a long CSV (missing ratings left out)."""
    rows = [
        {"item": f"u{i:02d}", "rater": f"r{j}", "rating": v}
        for i, row in enumerate(VECTORS[vector_id]["data"]["ratings"])
        for j, v in enumerate(row)
        if v is not None
    ]
    path = tmp_path / f"{vector_id}.csv"
    pl.DataFrame(rows).write_csv(path)
    return path


#: (option string, oracle vector, scale option, scale, direct Python call)
EXAMPLES = [
    (
        "krippendorff_alpha:level=interval",
        "krippendorff_alpha__krippendorff2011_4x12__interval",
        "ordinal:1,2,3,4,5",
        OrdinalScale([1, 2, 3, 4, 5]),
        lambda r: krippendorff_alpha(r, level="interval"),
    ),
    (
        "cohen_kappa:weights=quadratic",
        "cohen_kappa__irr_diagnoses_r1_r2__quadratic",
        "ordinal:1,2,3,4,5",
        OrdinalScale([1, 2, 3, 4, 5]),
        lambda r: cohen_kappa(r, weights="quadratic"),
    ),
    (
        "icc:form=ICC1",
        "icc__shrout_fleiss_1979__icc1",
        "interval",
        IntervalScale(),
        lambda r: icc(r, form="ICC1"),
    ),
]


@pytest.mark.parametrize(("spec", "vector_id", "scale_text", "scale", "direct"), EXAMPLES)
def test_the_three_option_strings_end_to_end(tmp_path, spec, vector_id, scale_text, scale, direct):
    path = vector_file(tmp_path, vector_id)
    res = runner.invoke(
        app, ["agreement", str(path), "-s", scale_text, "-m", spec, "--n-boot", "0", "--json"]
    )
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    ratings = read_ratings(path, scale=scale)
    assert row["statistic"] == parse_statistic(spec).label
    assert row["estimate"] == pytest.approx(direct(ratings), abs=1e-12)
    entry = VECTORS[vector_id]
    assert row["estimate"] == pytest.approx(
        entry["expected_full_precision"], abs=entry["tolerance_full_precision"]
    )
    assert row["options"] == parse_statistic(spec).label.split("(", 1)[1][:-1]
    assert row["reason"] == ""


def test_options_used_are_stated_defaults_included(tmp_path):
    path = vector_file(tmp_path, "krippendorff_alpha__krippendorff2011_4x12__interval")
    res = runner.invoke(
        app,
        [
            *("agreement", str(path), "-s", "likert5", "--n-boot", "0"),
            *("-m", "krippendorff_alpha", "-m", "fleiss_kappa", "-m", "icc"),
            *("-m", "krippendorff_alpha:level=interval"),
        ],
    )
    assert res.exit_code == 0, res.output
    md = res.stdout
    assert md.splitlines()[0].endswith("| unit_level | options | reason |")
    assert "| krippendorff_alpha | default | default |" in md
    assert "level=ordinal (from the ordinal scale) |" in md
    assert "| krippendorff_alpha (level=interval) | default | default |" in md
    assert "| weights=identity |" in md and "| form=ICC(2,1) |" in md


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "krippendorff_alpha:levl=interval",
            "agreement: statistic 'krippendorff_alpha:levl=interval': krippendorff_alpha has no "
            "option 'levl'; did you mean 'level'? (its options: level)",
        ),
        (
            "cohen_kappa:weights=quadratc",
            "agreement: statistic 'cohen_kappa:weights=quadratc': cohen_kappa: weights takes "
            "identity, linear, quadratic",
        ),
        ("icc:form=ICC7", "icc: form takes ICC(1,1), ICC(2,1), ICC(3,1)"),
        ("fleis_kappa", "unknown statistic 'fleis_kappa'; did you mean 'fleiss_kappa'?"),
    ],
)
def test_bad_option_name_or_value_is_a_usage_error(tmp_path, spec, expected):
    path = vector_file(tmp_path, "krippendorff_alpha__krippendorff2011_4x12__interval")
    res = runner.invoke(app, ["agreement", str(path), "-m", spec])
    assert res.exit_code == 2, res.output
    assert expected in " ".join(res.stderr.split())
    assert res.stdout == ""


def five_raters_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(11)
    rows = [
        {"item": f"i{i}", "rater": f"r{k}", "rating": int(np.clip(b + rng.integers(-1, 2), 1, 5))}
        for i, b in enumerate(rng.integers(1, 6, size=15))
        for k in range(5)
    ]
    path = tmp_path / "five.csv"
    pl.DataFrame(rows).write_csv(path)
    return path


def test_cohen_with_five_raters_beside_fleiss_in_every_format(tmp_path):
    path = five_raters_file(tmp_path)
    ratings = read_ratings(path, scale=OrdinalScale.likert(5))
    base = ["agreement", str(path), "-s", "likert5", "-m", "fleiss_kappa", "-m", "cohen_kappa"]
    base += ["--n-boot", "30"]
    reason = "Cohen's kappa needs exactly two raters, found 5"

    md = runner.invoke(app, base)
    assert md.exit_code == 0, md.output
    (fleiss_line,) = [x for x in md.stdout.splitlines() if x.startswith("| fleiss_kappa |")]
    (cohen_line,) = [x for x in md.stdout.splitlines() if x.startswith("| cohen_kappa |")]
    assert f"| {format_cell(fleiss_kappa(ratings))} |" in fleiss_line
    assert reason in cohen_line and "| NaN | NaN | NaN |" in cohen_line
    assert (
        "agreement: warning: cohen_kappa has no estimate in 1 of 1 cells; the reason column "
        "says why" in md.stderr
    )

    js = runner.invoke(app, [*base, "--json"])
    assert js.exit_code == 0, js.output
    rows = {r["statistic"]: r for r in json.loads(js.stdout)}
    assert rows["fleiss_kappa"]["estimate"] == pytest.approx(fleiss_kappa(ratings))
    assert rows["fleiss_kappa"]["reason"] == ""
    assert rows["fleiss_kappa"]["ci_low"] < rows["fleiss_kappa"]["ci_high"]
    assert rows["cohen_kappa"]["estimate"] is None
    assert rows["cohen_kappa"]["reason"].startswith(reason)
    assert rows["cohen_kappa"]["options"] == "weights=identity"
    assert rows["cohen_kappa"]["n_raters"] == 5

    out = tmp_path / "agreement.csv"
    csv = runner.invoke(app, [*base, "--csv", str(out)])
    assert csv.exit_code == 0, csv.output
    table = pl.read_csv(out)
    cohen = table.filter(pl.col("statistic") == "cohen_kappa").row(0, named=True)
    assert cohen["reason"].startswith(reason)
    assert cohen["estimate"] is None or np.isnan(cohen["estimate"])
    fleiss = table.filter(pl.col("statistic") == "fleiss_kappa").row(0, named=True)
    assert fleiss["estimate"] == pytest.approx(fleiss_kappa(ratings))


def test_nominal_statistics_on_a_0_to_100_scale_warn(tmp_path):
    rng = np.random.default_rng(2)
    rows = [
        {"item": f"i{i}", "rater": f"r{k}", "rating": int(np.clip(b + rng.integers(-6, 7), 0, 100))}
        for i, b in enumerate(rng.integers(0, 101, size=30))
        for k in range(3)
    ]
    path = tmp_path / "vas.csv"
    pl.DataFrame(rows).write_csv(path)
    res = runner.invoke(
        app,
        [
            *("agreement", str(path), "-m", "fleiss_kappa", "-m", "krippendorff_alpha"),
            *("-m", "icc", "--n-boot", "0"),
        ],
    )
    assert res.exit_code == 0, res.output
    lines = [x for x in res.stderr.splitlines() if x.startswith("agreement: warning: ")]
    (line,) = lines
    assert line.startswith("agreement: warning: fleiss_kappa treats the levels of an ordered scale")
    assert "as unordered categories" in line
    assert "krippendorff_alpha:level=interval" in line
    # alpha follows the (inferred) interval scale: no warning for it, and the row says so
    assert "level=interval (from the interval scale)" in res.stdout
    # with the suggested option the warning goes away
    res = runner.invoke(
        app, ["agreement", str(path), "-m", "fleiss_kappa:weights=quadratic", "--n-boot", "0"]
    )
    assert res.exit_code == 0 and "warning" not in res.stderr


def test_the_study_file_takes_the_same_strings(tmp_path):
    path = vector_file(tmp_path, "krippendorff_alpha__krippendorff2011_4x12__interval")
    study = tmp_path / "study.toml"
    study.write_text(
        f'data = "{path.name}"\nscale = "likert5"\n\n[agreement]\n'
        'statistics = ["krippendorff_alpha", "krippendorff_alpha:level=interval"]\nn_boot = 0\n'
    )
    res = runner.invoke(app, ["agreement", "-S", str(study), "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    ratings = read_ratings(path, scale=OrdinalScale.likert(5))
    direct = agreement(
        ratings, ["krippendorff_alpha", "krippendorff_alpha:level=interval"], n_boot=0
    )
    assert [r["estimate"] for r in rows] == direct["estimate"].squeeze().values.tolist()
    study.write_text(
        f'data = "{path.name}"\n\n[agreement]\n'
        'statistics = ["krippendorff_alpha:level=intervall"]\n'
    )
    res = runner.invoke(app, ["agreement", "-S", str(study)])
    assert res.exit_code == 2, res.output
    assert "[agreement] statistics" in res.stderr
    assert "did you mean 'interval'?" in res.stderr


def test_a_bad_by_column_is_a_usage_error(tmp_path):
    path = five_raters_file(tmp_path)
    res = runner.invoke(app, ["agreement", str(path), "--by", "shift", "-m", "fleiss_kappa"])
    assert res.exit_code == 2, res.output
    assert "by: the ratings have no 'shift' column" in res.stderr
