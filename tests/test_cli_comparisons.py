"""issue 20, "Into the existing machinery": the command line on comparative judgments
(``--comparisons pairs|rankings``, ``--graded K``): validate, agreement, rank (baselines and
``--fit``), fit (bradley-terry / plackett-luce), designs, and the usage errors (exit 2) and
data errors (exit 1) they give."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import xarray as xr
from typer.testing import CliRunner

from raterstats.cli import app
from raterstats.cli.studyfile import check_study
from raterstats.simulate_comparisons import simulate_comparisons

REPO = Path(__file__).resolve().parents[1]
SQUALITY = REPO / "examples/data/squality_rankings/rankings.csv"
runner = CliRunner()
WORDS = {1: "a", -1: "b", 0: "tie"}


def run(*args: object) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of the command line (stderr on one line, without the
    borders of a usage error's box)."""
    res = runner.invoke(app, [str(a) for a in args], terminal_width=200)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.exit_code, res.stdout, " ".join(res.stderr.replace("│", " ").split())


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Simulated pairs (a / b / tie words, the order shown, an LLM judge), graded pairs and
    rankings, written as CSV the way users have them."""
    out = tmp_path_factory.mktemp("comparisons")
    pairs = simulate_comparisons(
        n_systems=3, n_raters=4, n_llm_judges=1, n_comparisons=150, n_questions=10,
        position_bias=0.8, ties=True, random_seed=1,
    ).comparisons.data  # fmt: skip
    words = pairs.with_columns(pl.col("outcome").replace_strict(WORDS, return_dtype=pl.String))
    words.drop("source_row", "comparison").write_csv(out / "pairs.csv")
    graded = simulate_comparisons(
        n_systems=3, n_raters=3, n_comparisons=90, n_questions=6, max_grade=2, random_seed=2
    ).comparisons.data
    graded.drop("source_row").write_csv(out / "graded.csv")
    rankings = simulate_comparisons(
        kind="rankings", n_systems=4, n_raters=3, n_questions=8, n_comparisons=60, random_seed=3
    ).comparisons.data  # a rater may rank a question twice: the ranking id is the question
    rankings = rankings.with_columns(pl.col("ranking").str.replace("::d1", "").alias("question"))
    rankings.drop("source_row", "ranking").write_csv(out / "rankings.csv")
    return {
        "pairs": out / "pairs.csv",
        "graded": out / "graded.csv",
        "rankings": out / "rankings.csv",
    }


def test_validate_prints_the_comparisons_summary(files):
    """issue 20: validate --comparisons prints the Comparisons summary (text and JSON)."""
    code, out, _ = run("validate", files["pairs"], "--comparisons", "pairs")
    assert code == 0
    assert "150 pairwise comparisons (a / b / tie) of 3 systems by 5 raters" in out
    assert "first_preferred_share" in out and "components" in out
    code, out, _ = run("validate", files["rankings"], "--comparisons", "rankings", "--json")
    info = json.loads(out)
    assert code == 0 and info["kind"] == "rankings" and info["n_systems"] == 4
    code, out, _ = run("validate", files["graded"], "--comparisons", "pairs", "--graded", "2")
    assert code == 0 and "outcomes -2..2" in out


def test_validate_squality_rankings():
    """issue 20: the real SQuALITY rankings read with --comparisons rankings (the rating
    column is ignored and said so)."""
    code, out, _ = run("validate", SQUALITY, "--comparisons", "rankings", "--json")
    info = json.loads(out)
    assert code == 0
    assert (info["n_judgments"], info["n_systems"], info["n_raters"]) == (900, 3, 4)
    assert info["ignored_columns"] == ["rating"]


def test_bad_comparison_data_exit_1_with_every_problem(tmp_path, files):
    """issue 20: bad data exit 1 listing every problem (here an integer outcome beyond the
    a / b / tie codes 1 / -1 / 0 without a graded scale, an unknown word, and a system
    compared with itself)."""
    bad = tmp_path / "bad.csv"
    bad.write_text("system_a,system_b,rater,outcome\nx,y,r1,2\nx,x,r1,a\ny,x,r2,maybe\n")
    code, _, err = run("validate", bad, "--comparisons", "pairs")
    assert code == 1
    assert "problems in comparisons" in err
    assert "'2'" in err and "'maybe'" in err and "row 2, column 'system_b'" in err


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--scale", "likert5"], "--scale / scale applies to ratings only"),
        (["--collapse", "likert5_to_3"], "--collapse / collapse applies to ratings only"),
        (["--column", "item=question"], "'item' is not a column role of pairs"),
        (["--comparisons", "triples"], "is not one of pairs, rankings"),
        (["--filter", "item=x"], "cannot filter on 'item'"),
        (["--filter", "rater=nobody"], "rater ['nobody'] not in the comparisons"),
    ],
)
def test_options_of_ratings_with_comparisons_exit_2(files, extra, expected):
    """issue 20: options that do not apply to comparative judgments are usage errors."""
    args = [
        "validate",
        files["pairs"],
        *(["--comparisons", "pairs"] if "--comparisons" not in extra else []),
        *extra,
    ]
    code, _, err = run(*args)
    assert code == 2
    assert expected in err


def test_graded_with_rankings_and_comparison_roles_without_comparisons_exit_2(files):
    """issue 20: --graded belongs to pairs; a comparison role needs --comparisons."""
    code, _, err = run("validate", files["rankings"], "--comparisons", "rankings", "--graded", "2")
    assert code == 2 and "--graded applies to pairs" in err
    code, _, err = run("validate", files["pairs"], "--column", "outcome=outcome")
    assert code == 2 and "add --comparisons pairs" in err


def test_missing_file_exits_2(tmp_path):
    code, _, err = run("validate", tmp_path / "nope.csv", "--comparisons", "pairs")
    assert code == 2 and "does not exist" in err


def test_filter_counts_what_it_leaves_out(files):
    """issue 20: --filter selects judgments and the summary counts those left out."""
    code, out, _ = run(
        "validate", files["pairs"], "--comparisons", "pairs", "--filter", "rater_kind=human",
        "--json",
    )  # fmt: skip
    info = json.loads(out)
    assert code == 0 and info["n_raters"] == 4
    assert info["exclusions"][0]["reason"] == "left out by --filter rater_kind=human"
    assert info["n_judgments"] + info["exclusions"][0]["n_rows"] == 150


def test_study_file_keys(tmp_path, files):
    """issue 20: `comparisons` and `graded` are study-file keys, checked by the schema."""
    study = tmp_path / "study.toml"
    study.write_text(f'data = "{files["graded"]}"\ncomparisons = "pairs"\ngraded = 2\n')
    code, out, _ = run("validate", "--study", study)
    assert code == 0 and "outcomes -2..2" in out
    assert check_study({"comparisons": "triples", "graded": 0}) == [
        "comparisons = \"triples\": 'triples' is not one of pairs, rankings",
        "graded = 0: expected an integer >= 1",
    ]


def test_agreement_table_json_and_csv(tmp_path, files):
    """issue 20: agreement --comparisons runs comparison_agreement per dimension with
    intervals; the graded alpha only for graded pairs (by default)."""
    csv = tmp_path / "agreement.csv"
    code, out, _ = run(
        "agreement", files["graded"], "--comparisons", "pairs", "--graded", "2", "--n-boot",
        "50", "--json", "--csv", csv,
    )  # fmt: skip
    rows = json.loads(out)
    assert code == 0
    stats = {r["statistic"] for r in rows}
    assert "krippendorff_alpha_ordinal" in stats and "side_agreement" in stats
    assert all(r["ci_low"] is not None for r in rows if r["estimate"] is not None)
    assert pl.read_csv(csv).height == len(rows)
    code, out, _ = run("agreement", files["pairs"], "--comparisons", "pairs", "--n-boot", "20")
    assert code == 0 and "percent_agreement" in out and "krippendorff_alpha_ordinal " not in out
    code, _, err = run("agreement", files["pairs"], "--comparisons", "pairs", "-m", "fleiss_kapa")
    assert code == 2 and "did you mean 'fleiss_kappa'" in err
    code, _, err = run("agreement", files["pairs"], "--comparisons", "pairs", "--by", "design")
    assert code == 2 and "--by applies to ratings only" in err


@pytest.mark.parametrize("method", ["win_rate", "elo", "bradley_terry_ml"])
def test_rank_with_the_baselines(files, method):
    """issue 20: rank --comparisons --method win_rate|elo|bradley_terry_ml."""
    code, out, err = run(
        "rank", files["rankings"], "--comparisons", "rankings", "--method", method,
        "--n-boot", "30", "--json",
    )  # fmt: skip
    rows = json.loads(out)
    assert code == 0 and len(rows) == 4
    assert {r["system"] for r in rows} == {"s1", "s2", "s3", "s4"}
    assert "bootstrap" in err  # the intervals are said to be bootstrap intervals


def test_rank_method_choices_and_defaults(files):
    code, _, err = run("rank", files["pairs"], "--comparisons", "pairs", "--method", "mean")
    assert code == 2 and "win_rate, elo, bradley_terry_ml" in err
    code, out, err = run("rank", files["pairs"], "--comparisons", "pairs", "--n-boot", "20")
    assert code == 0 and "maximum-likelihood Bradley-Terry" in err and "| d1 | s" in out
    code, _, err = run("rank", files["pairs"], "--comparisons", "pairs", "--score", "latent")
    assert code == 2 and "--score applies to ratings only" in err


def test_rank_squality_win_rate():
    """issue 20: the real rankings: the human summaries rank first on every dimension."""
    code, out, _ = run(
        "rank", SQUALITY, "--comparisons", "rankings", "--method", "win_rate", "--n-boot", "50",
        "--json",
    )  # fmt: skip
    rows = json.loads(out)
    assert code == 0
    best = {r["dimension"]: r["system"] for r in rows if r["expected_rank"] < 1.5}
    assert best == {"correctness": "human", "selection": "human", "overall": "human"}


def test_fit_map_then_rank_and_designs(tmp_path, files):
    """issue 20: fit --comparisons (default model of the kind; MAP for speed) writes the
    netCDF and health lines; rank --fit ranks from it; designs --fit says where design
    comparisons of comparison studies are done."""
    fit = tmp_path / "bt.nc"
    code, out, _ = run(
        "fit", files["pairs"], "--comparisons", "pairs", "--method", "map", "--out", fit
    )
    assert code == 0
    assert out.startswith("bradley_terry fitted by map") and "health: MAP point estimate" in out
    assert xr.open_datatree(fit).attrs["model"] == "bradley_terry"
    code, out, err = run("rank", "--fit", fit, "--json")
    assert code == 0 and len(json.loads(out)) == 3 and "MAP point estimate" in err
    code, out, err = run("rank", files["pairs"], "--comparisons", "pairs", "--fit", fit)
    assert code == 0 and "differ" not in err
    code, out, err = run("rank", files["rankings"], "--comparisons", "rankings", "--fit", fit)
    assert "differ from those the fit was made from" in err
    code, _, err = run("rank", files["pairs"], "--fit", fit)
    assert code == 2 and "--comparisons" in err
    code, _, err = run("designs", "--fit", fit)
    assert code == 2 and "compare_design_kinds" in err


def test_fit_json_of_rankings(tmp_path, files):
    """issue 20: plackett-luce is the default model of rankings."""
    fit = tmp_path / "pl.nc"
    code, out, _ = run(
        "fit", files["rankings"], "--comparisons", "rankings", "--method", "map", "--out", fit,
        "--json",
    )  # fmt: skip
    info = json.loads(out)
    assert code == 0 and info["model"] == "plackett_luce" and info["health_lines"]


@pytest.mark.parametrize(
    ("data", "model", "expected"),
    [
        (
            ["--comparisons", "pairs"],
            "mace",
            "the mace model fits ratings, and the file holds pairs",
        ),
        (["--comparisons", "pairs"], "plackett-luce", "fit pairs with --model bradley-terry"),
        (["--comparisons", "rankings"], "bt", "fit rankings with --model plackett-luce"),
        (["-s", "likert5"], "bradley-terry", "read the file with --comparisons pairs"),
    ],
)
def test_a_model_of_the_other_kind_of_data_exits_2(tmp_path, files, data, model, expected):
    """issue 20: a model of ratings given comparisons, or the reverse, exits 2."""
    src = files["rankings"] if "rankings" in data else files["pairs"]
    code, _, err = run("fit", src, *data, "--model", model, "--out", tmp_path / "x.nc")
    assert code == 2
    assert expected in err
    assert not (tmp_path / "x.nc").exists()


def test_fit_nuts_with_few_draws(tmp_path, files):
    """issue 20: one NUTS fit from the command line (few draws: the health lines say
    whether it passed its checks, whatever the answer)."""
    fit = tmp_path / "bt_nuts.nc"
    code, out, _ = run(
        "fit", files["pairs"], "--comparisons", "pairs", "--draws", "100", "--tune", "100",
        "--chains", "2", "--out", fit,
    )  # fmt: skip
    assert code == 0
    assert out.startswith("bradley_terry fitted by nuts")
    assert "health: " in out
    dt = xr.open_datatree(fit)
    assert dict(dt.posterior["theta"].sizes) == {
        "chain": 2,
        "draw": 100,
        "dimension": 1,
        "system": 3,
    }


def test_labels_reads_ratings_only(tmp_path, files):
    """issue 20: labels (item labels of ratings) refuses comparative judgments."""
    code, _, err = run(
        "labels", files["pairs"], "--comparisons", "pairs", "--out", tmp_path / "l.csv"
    )
    assert code == 2 and "this command reads ratings only" in err


def test_fit_target_accept_reaches_the_sampler_and_is_checked(tmp_path, files):
    """issue 20: small panels need a higher NUTS target acceptance rate against
    divergences; `fit --target-accept` passes it to the sampler (recorded in the fit) and
    a value outside (0, 1) is a usage error."""
    fit = tmp_path / "bt_ta.nc"
    code, _, _ = run(
        "fit", files["pairs"], "--comparisons", "pairs", "--draws", "50", "--tune", "50",
        "--chains", "1", "--target-accept", "0.95", "--out", fit,
    )  # fmt: skip
    assert code == 0
    assert xr.open_datatree(fit).posterior.attrs["target_accept"] == 0.95
    code, _, err = run(
        "fit", files["pairs"], "--comparisons", "pairs", "--target-accept", "1.5",
        "--out", tmp_path / "x.nc",
    )  # fmt: skip
    assert code == 2 and "target acceptance rate is between 0 and 1" in err
