"""The command line: demo and validate."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import polars as pl
import pytest
from typer.testing import CliRunner

from raterstats.cli import app
from raterstats.defaults import CHAINS, CHECKPOINTS, DRAWS, N_BOOT, RANDOM_SEED, TUNE, ci_prob

runner = CliRunner()


def test_demo_writes_the_report(tmp_path):
    out = tmp_path / "report"
    res = runner.invoke(
        app, ["demo", "--out", str(out), "--ordinal-draws", "0", "--categorical-draws", "0"]
    )
    assert res.exit_code == 0, res.output
    assert f"Report written to {(out / 'report.md').resolve()}" in res.output
    assert f"HTML report: {(out / 'report.html').resolve()}" in res.output
    assert (out / "report.html").is_file()
    report = (out / "report.md").read_text()
    assert "## Data summary" in report
    assert "fine binary" in report
    assert "## Agreement among the human raters" in report
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


def test_console_script_entry_point():
    res = subprocess.run(
        [sys.executable, "-m", "raterstats.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert res.stdout.startswith("raterstats ")


# ----------------------------------------------------------------------------- the new commands

COMMANDS = (
    "analyze",
    "demo",
    "validate",
    "agreement",
    "fit",
    "labels",
    "rank",
    "designs",
    "report",
)


def _registered() -> list[str]:
    import typer.main

    group = typer.main.get_command(app)
    return sorted(group.commands)  # type: ignore[attr-defined]


def test_every_command_is_registered_and_its_help_shows_an_example():
    res = runner.invoke(app, ["--help"], terminal_width=200)
    assert res.exit_code == 0 and "Example: raterstats demo" in res.output
    names = _registered()
    assert sorted(COMMANDS) == names
    for cmd in names:
        res = runner.invoke(app, [cmd, "--help"], terminal_width=200)
        assert res.exit_code == 0, res.output
        assert "Example:" in res.output
        assert f"raterstats {cmd}" in res.output


@pytest.fixture
def categorical_file(tmp_path):
    """One categorical dimension (yes / partially / no) of a simulated ArchEHR-like study,
    with the user's own column names."""
    from raterstats.simulate import archehr_like_study

    r = archehr_like_study(n_cases=6, n_systems=3, random_seed=1).ratings
    frame = (
        r.data.filter(pl.col("dimension") == "answers_question")
        .select("item", "rater", "rating", "dimension", "system", "question")
        .rename(
            {
                "item": "answer_id",
                "rater": "annotator",
                "rating": "label",
                "dimension": "aspect",
                "system": "model",
                "question": "case",
            }
        )
    )
    path = tmp_path / "ratings.csv"
    frame.write_csv(path)
    return path


COLUMNS = [
    "-c",
    "item=answer_id",
    "-c",
    "rater=annotator",
    "-c",
    "rating=label",
    "-c",
    "dimension=aspect",
    "-c",
    "system=model",
    "-c",
    "question=case",
]


def _on_categorical(cmd, path, *options):
    """``cmd`` on ``categorical_file`` with its column roles and scale on the command line."""
    return [cmd, str(path), *COLUMNS, "-s", "yes-partially-no", *options]


def _read_categorical(path):
    """The ratings of ``categorical_file`` read by the library with the CLI's COLUMNS."""
    from raterstats import NominalScale, read_ratings

    return read_ratings(
        path,
        columns=dict(c.split("=") for c in COLUMNS[1::2]),
        scale=NominalScale(["yes", "partially", "no"]),
    )


def _study_file(path, data):
    text = f"""
data = "{data.name}"
scale = "yes-partially-no"

[columns]
item = "answer_id"
rater = "annotator"
rating = "label"
dimension = "aspect"
system = "model"
question = "case"

[agreement]
statistics = ["randolph_kappa", "krippendorff_alpha"]
n_boot = 100

[fit]
model = "mace"
method = "em"
"""
    path.write_text(text)
    return path


def test_agreement_json_parses_and_matches_the_library(categorical_file):
    from raterstats.agreement import randolph_kappa

    res = runner.invoke(
        app,
        _on_categorical(
            "agreement",
            categorical_file,
            "-m",
            "randolph_kappa",
            "--n-boot",
            "50",
            "--json",
        ),
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["statistic"] for r in rows] == ["randolph_kappa"]
    r = _read_categorical(categorical_file)
    assert rows[0]["estimate"] == pytest.approx(randolph_kappa(r))
    assert rows[0]["ci_low"] <= rows[0]["estimate"] <= rows[0]["ci_high"]
    assert rows[0]["n_items"] == 18


def test_agreement_csv_output(categorical_file, tmp_path):
    out = tmp_path / "agreement.csv"
    res = runner.invoke(
        app,
        ["agreement", str(categorical_file), *COLUMNS, "--n-boot", "0", "--csv", str(out)],
    )
    assert res.exit_code == 0, res.output
    table = pl.read_csv(out)
    assert set(table["statistic"]) == {
        "percent_agreement",
        "fleiss_kappa",
        "randolph_kappa",
        "gwet_ac1",
        "krippendorff_alpha",
    }
    assert "| statistic |" in res.stdout  # the Markdown table on stdout


def test_study_file_sets_columns_scale_and_defaults(categorical_file, tmp_path):
    study = _study_file(tmp_path / "study.toml", categorical_file)
    res = runner.invoke(app, ["agreement", "--study", str(study), "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["statistic"] for r in rows] == ["randolph_kappa", "krippendorff_alpha"]
    assert all(r["n_boot_valid"] == 100 for r in rows)
    # the same numbers as with every option on the command line
    res2 = runner.invoke(
        app,
        _on_categorical(
            "agreement",
            categorical_file,
            "-m",
            "randolph_kappa",
            "-m",
            "krippendorff_alpha",
            "--n-boot",
            "100",
            "--json",
        ),
    )
    assert json.loads(res2.stdout) == rows
    # the command line wins over the study file
    res3 = runner.invoke(app, ["agreement", "-S", str(study), "-m", "fleiss_kappa", "--json"])
    assert [r["statistic"] for r in json.loads(res3.stdout)] == ["fleiss_kappa"]
    res4 = runner.invoke(app, ["validate", "-S", str(study), "--json"])
    assert res4.exit_code == 0, res4.output
    assert json.loads(res4.stdout)["n_ratings"] == 54


def test_study_file_errors_are_reported(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('data = "x.csv"\n[colums]\nitem = "a"\n')
    res = runner.invoke(app, ["validate", "--study", str(bad)])
    assert res.exit_code == 2
    assert "colums: unknown table or key; did you mean 'columns'?" in res.output
    bad.write_text("data = \n")
    res = runner.invoke(app, ["validate", "--study", str(bad)])
    assert res.exit_code == 2 and "not valid TOML" in res.output
    res = runner.invoke(app, ["validate"])
    assert res.exit_code == 2 and "no ratings file" in res.output


def test_bad_data_fails_every_data_command_with_the_problem_list(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("item,rater,rating\na,,1\nb,y,9\nc,z,2\n")
    for cmd in ("validate", "agreement", "fit", "labels"):
        res = runner.invoke(app, [cmd, str(path), "-s", "likert5"])
        assert res.exit_code == 1, (cmd, res.output)
        assert "2 problems in ratings" in res.output
        assert "row 1, column 'rater'" in res.output
        assert "row 2, column 'rating': got '9'" in res.output


def test_fit_writes_a_netcdf_that_reloads(categorical_file, tmp_path):
    import xarray as xr

    from raterstats import MACE

    out = tmp_path / "fit.nc"
    study = _study_file(tmp_path / "study.toml", categorical_file)
    res = runner.invoke(app, ["fit", "-S", str(study), "--seed", "3", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["model"] == "mace" and info["method"] == "em" and info["random_seed"] == 3
    back = xr.open_datatree(out)
    assert back.attrs["data_fingerprint"] == info["data_fingerprint"]
    r = _read_categorical(categorical_file)
    direct = MACE().fit(r, method="em", random_seed=3, progress=False)
    xr.testing.assert_allclose(
        back["posterior"]["competence"].load(), direct["posterior"]["competence"]
    )


def test_fit_rejects_unknown_model_and_options(categorical_file, tmp_path):
    res = runner.invoke(app, ["fit", str(categorical_file), *COLUMNS, "--model", "nosuchmodel"])
    assert res.exit_code == 2 and "unknown model 'nosuchmodel'" in res.output
    res = runner.invoke(
        app, ["fit", str(categorical_file), *COLUMNS, "--method", "em", "-O", "colour=red"]
    )
    assert res.exit_code == 2 and "colour" in res.output


def test_report_command_writes_html_with_methods(tmp_path, categorical_file):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "report.md").write_text("# My study\n\n## Files\n\n- `t.csv`\n")
    (folder / "t.csv").write_text("a,b\n1,2\n")
    fit_nc = tmp_path / "fit.nc"
    study = _study_file(tmp_path / "study.toml", categorical_file)
    assert runner.invoke(app, ["fit", "-S", str(study), "--out", str(fit_nc)]).exit_code == 0
    res = runner.invoke(app, ["report", str(folder), "--fit", f"MACE={fit_nc}"])
    assert res.exit_code == 0, res.output
    page = (folder / "report.html").read_text()
    assert "<title>My study</title>" in page
    assert 'id="methods"' in page and "Hovy et al. 2013" in page
    assert '<a href="t.csv">' in page
    res = runner.invoke(app, ["report", str(tmp_path / "nowhere")])
    assert res.exit_code == 1 and "report.md" in res.output


def test_rank_from_ratings_matches_the_library(categorical_file, tmp_path):
    from raterstats import ranking

    csv = tmp_path / "rank.csv"
    res = runner.invoke(
        app,
        _on_categorical(
            "rank",
            categorical_file,
            "--method",
            "pyramid",
            "--score-map",
            "yes_partially_no",
            "--n-boot",
            "100",
            "--seed",
            "2",
            "--json",
            "--csv",
            str(csv),
        ),
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    r = _read_categorical(categorical_file)
    direct = ranking.rank_table(
        ranking.rank_systems(
            r,
            method="pyramid",
            score_map="yes_partially_no",
            n_boot=100,
            ci_prob=ci_prob(),
            random_seed=2,
        )
    )
    assert rows == direct.to_dicts()
    assert sorted(row["system"] for row in rows) == ["sys01", "sys02", "sys03"]
    assert pl.read_csv(csv).equals(direct)


@pytest.fixture(scope="module")
def ordinal_fit_file(tmp_path_factory):
    """A short ordinal fit written by `raterstats fit` (and its data file)."""
    from raterstats.simulate import clinical_qa_study

    tmp_path = tmp_path_factory.mktemp("ordinal")
    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    data = tmp_path / "study.csv"
    r.data.drop("value", "code", "source_row").write_csv(data)
    fit_nc = tmp_path / "ordinal.nc"
    res = runner.invoke(
        app,
        [
            "fit",
            str(data),
            "-s",
            "likert5",
            "--model",
            "ordinal",
            "--draws",
            "30",
            "--tune",
            "30",
            "--chains",
            "1",
            "--out",
            str(fit_nc),
        ],
    )
    assert res.exit_code == 0, res.output
    return fit_nc


def test_designs_from_an_ordinal_fit_matches_the_library(ordinal_fit_file):
    import xarray as xr

    from raterstats import design

    fit_nc = ordinal_fit_file
    level_map = "1=-1,2=-1,3=0,4=1,5=1"
    res = runner.invoke(
        app,
        [
            "designs",
            "--fit",
            str(fit_nc),
            "--n-replicates",
            "5",
            "--level-map",
            level_map,
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    direct = design.design_table(
        design.compare_designs(
            xr.open_datatree(fit_nc),
            n_replicates=5,
            level_map={1: -1, 2: -1, 3: 0, 4: 1, 5: 1},
            ci_prob=ci_prob(),
            random_seed=RANDOM_SEED,
        )
    )
    assert [(x["dimension"], x["design"]) for x in rows] == list(
        zip(direct["dimension"], direct["design"], strict=True)
    )
    assert [x["reliability"] for x in rows] == direct["reliability"].to_list()
    assert [x["kappa_mean"] for x in rows] == direct["kappa_mean"].to_list()
    res = runner.invoke(app, ["designs", "--fit", str(fit_nc), "--level-map", "a=b"])
    assert res.exit_code == 2 and "--level-map takes" in res.output


def test_filter_and_collapse_options(categorical_file, tmp_path):
    from raterstats.simulate import clinical_qa_study

    study = _study_file(tmp_path / "study.toml", categorical_file)
    res = runner.invoke(app, ["validate", "-S", str(study), "-f", "system=sys01,sys02", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_ratings"] == 36  # 2 of 3 systems x 6 cases x 3 raters
    res = runner.invoke(app, ["validate", "-S", str(study), "-f", "colour=red"])
    assert res.exit_code == 2 and "cannot filter on 'colour'" in res.output

    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    data = tmp_path / "likert.csv"
    r.data.drop("value", "code", "source_row").write_csv(data)
    res = runner.invoke(
        app,
        [
            "agreement",
            str(data),
            "-s",
            "likert5",
            "--collapse",
            "likert5_to_3",
            "-f",
            "design=coarse",
            "-f",
            "rater_kind=human",
            "-m",
            "randolph_kappa",
            "--n-boot",
            "0",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    from raterstats.agreement import randolph_kappa

    three = r.filter(design="coarse", rater_kind="human").collapse("likert5_to_3")
    rows = {x["dimension"]: x["estimate"] for x in json.loads(res.stdout)}
    for dim in ("correctness", "relevance", "safety"):
        assert rows[dim] == pytest.approx(randolph_kappa(three.filter(dimension=dim)))


# ----------------------------------------------------------------------------- one definition


def _params(cmd: str) -> dict:
    import typer.main

    group = typer.main.get_command(app)
    return {p.name: p for p in group.commands[cmd].params}  # type: ignore[attr-defined]


DATA_OPTIONS = (
    "source",
    "column",
    "scale",
    "wide",
    "filters",
    "collapse",
    "duplicates",
    "study",
    "export",
    "separator",
    "comparisons",
    "graded",
)


def test_the_data_options_are_one_definition_shared_by_every_data_command():
    from dataclasses import fields

    from raterstats.cli.study import DataOptions

    assert tuple(f.name for f in fields(DataOptions)) == DATA_OPTIONS
    reference = _params("validate")
    for cmd in ("validate", "agreement", "fit", "labels", "rank", "analyze"):  # issue 17
        params = _params(cmd)
        assert list(params)[: len(DATA_OPTIONS)] == list(DATA_OPTIONS), cmd
        for name in DATA_OPTIONS:
            a, b = params[name], reference[name]
            assert (a.opts, a.secondary_opts, a.help if hasattr(a, "help") else None) == (
                b.opts,
                b.secondary_opts,
                b.help if hasattr(b, "help") else None,
            ), (cmd, name)
    assert "study" in _params("designs") and "source" not in _params("designs")


def test_help_lists_the_registered_models_and_the_defaults():
    from raterstats.models import registered_models

    def help_of(cmd: str, option: str) -> str:
        return str(_params(cmd)[option].help)

    model_help = help_of("fit", "model")
    for name, cls in registered_models().items():
        assert name in model_help
        for alias in cls.cli_names:
            assert alias in model_help
    rank_help = help_of("rank", "method")
    for name, cls in registered_models().items():
        # a whole word: "bradley_terry" is in "bradley_terry_ml", a comparison baseline
        listed = re.search(rf"\b{name}\b", rank_help) is not None
        assert listed == (cls.rank_fit_method is not None), name
    for raw in ("mean", "majority", "pyramid"):
        assert raw in rank_help
    draws = help_of("fit", "draws")
    assert (
        f"from {CHECKPOINTS[0]} until the fit passes its checks, up to {CHECKPOINTS[-1]}" in draws
    )
    assert f"{DRAWS} for the others" in draws
    assert f"the model's own; {TUNE} for most" in help_of("fit", "tune")
    assert f"the model's own; {CHAINS}" in help_of("fit", "chains")
    assert f"({N_BOOT})" in help_of("rank", "n_boot")
    assert f"{ci_prob():g}" in help_of("rank", "ci") and f"{ci_prob():g}" in help_of(
        "designs", "ci"
    )
    for cmd in ("agreement", "fit", "labels", "rank", "designs"):
        assert f"default {RANDOM_SEED}" in help_of(cmd, "seed")


def test_rank_from_an_ordinal_fit_alone_matches_the_library(ordinal_fit_file):
    import xarray as xr

    from raterstats import ranking

    res = runner.invoke(app, ["rank", "--fit", str(ordinal_fit_file), "--json"])
    assert res.exit_code == 0, res.output
    direct = ranking.rank_table(
        ranking.rank_systems(
            xr.open_datatree(ordinal_fit_file), ci_prob=ci_prob(), random_seed=RANDOM_SEED
        )
    )
    assert json.loads(res.stdout) == direct.to_dicts()


def test_rank_from_a_categorical_fit_with_its_ratings_matches_the_library(
    categorical_file, tmp_path
):
    import xarray as xr

    from raterstats import ranking

    fit_nc = tmp_path / "mace.nc"
    study = _study_file(tmp_path / "study.toml", categorical_file)
    assert runner.invoke(app, ["fit", "-S", str(study), "--out", str(fit_nc)]).exit_code == 0
    res = runner.invoke(
        app,
        _on_categorical(
            "rank",
            categorical_file,
            "--fit",
            str(fit_nc),
            "--score-map",
            "yes_partially_no",
            "--n-boot",
            "50",
            "--json",
        ),
    )
    assert res.exit_code == 0, res.output
    direct = ranking.rank_table(
        ranking.rank_systems(
            xr.open_datatree(fit_nc),
            ratings=_read_categorical(categorical_file),
            score_map="yes_partially_no",
            n_boot=50,
            ci_prob=ci_prob(),
            random_seed=RANDOM_SEED,
        )
    )
    assert json.loads(res.stdout) == direct.to_dicts()
    # the fit holds its items' systems: without the ratings, the same ranking
    alone = runner.invoke(
        app,
        [
            "rank",
            "--fit",
            str(fit_nc),
            "--score-map",
            "yes_partially_no",
            "--n-boot",
            "50",
            "--json",
        ],
    )
    assert alone.exit_code == 0, alone.output
    assert json.loads(alone.stdout) == json.loads(res.stdout)


def test_designs_from_a_categorical_fit_matches_the_library(tmp_path):
    """issue 23: `raterstats designs --fit` takes a MACE fit of rating schemes with
    different label sets (combine_schemes) and prints what its reliability is."""
    import xarray as xr

    from raterstats import MACE, design
    from raterstats.demo.run import DEMO_SCHEMES
    from raterstats.simulate import clinical_qa_study

    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    both = design.combine_schemes({s.name: s.apply(r) for s in DEMO_SCHEMES})
    fit_nc = tmp_path / "mace.nc"
    MACE().fit(both, method="em", random_seed=1).to_netcdf(fit_nc)
    res = runner.invoke(app, ["designs", "--fit", str(fit_nc), "--n-replicates", "5", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    direct = design.design_table(
        design.compare_designs(
            xr.open_datatree(fit_nc), n_replicates=5, ci_prob=ci_prob(), random_seed=RANDOM_SEED
        )
    )
    assert [(x["dimension"], x["design"]) for x in rows] == list(
        zip(direct["dimension"], direct["design"], strict=True)
    )
    assert {x["design"] for x in rows} == {"coarse 3-point", "fine 3-point", "fine binary"}
    assert [x["reliability"] for x in rows] == direct["reliability"].to_list()
    assert "kappa of a human rater's label against the true label" in res.stderr
    assert "designs: note: " in res.stderr  # an EM fit: no posterior uncertainty
    res = runner.invoke(app, ["designs", "--fit", str(fit_nc), "--level-map", "1=-1,2=0,3=1"])
    assert res.exit_code == 1 and "ordinal fits only" in res.output, res.output


def test_fit_settings_leave_draws_to_the_model_unless_given():
    """``fit`` / ``labels`` pass draws, tuning steps and chains only when the command line or
    the study file gives them, so that a model's own defaults apply (the ordinal model's
    draws set by its checkpoints after 400 tuning steps, not the package's 1,000 / 500)."""
    from raterstats.cli.labels_command import settings_from_study
    from raterstats.cli.study import Study
    from raterstats.models.ordinal import CHECKPOINTS as ORDINAL_CHECKPOINTS
    from raterstats.models.ordinal import DRAWS as ORDINAL_DRAWS
    from raterstats.models.ordinal import TUNE as ORDINAL_TUNE

    none = {"method": None, "sampler": None, "seed": None, "target_accept": None}
    bare = settings_from_study(
        Study(), "fit", ("nuts",), draws=None, tune=None, chains=None, **none
    )
    assert not {"draws", "tune", "chains"} & set(bare)
    assert bare["random_seed"] == RANDOM_SEED
    given = settings_from_study(Study(), "fit", ("nuts",), draws=7, tune=8, chains=2, **none)
    assert (given["draws"], given["tune"], given["chains"]) == (7, 8, 2)
    from_file = settings_from_study(
        Study(sections={"fit": {"draws": 300}}), "fit", ("nuts",), draws=None, tune=None,
        chains=None, **none,
    )  # fmt: skip
    assert from_file["draws"] == 300 and "tune" not in from_file
    # what the ordinal model then uses
    import inspect

    from raterstats import OrdinalRaters

    sig = inspect.signature(OrdinalRaters.fit).parameters
    assert (sig["draws"].default, sig["tune"].default) == (None, ORDINAL_TUNE)
    assert OrdinalRaters().default_draws(watched=True) == ORDINAL_CHECKPOINTS
    assert OrdinalRaters().default_draws(watched=False) == ORDINAL_DRAWS
    assert (ORDINAL_DRAWS, ORDINAL_TUNE) != (DRAWS, TUNE)
