"""issue 20, "Into the existing machinery": ``analyze`` on comparative judgments (library
``raterstats.analyze(comparisons, out)`` and ``raterstats analyze FILE --comparisons``):
every section or the reason it is left out, the fit's health and banners, and user strings
escaped in the Markdown and HTML reports."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from raterstats import read_comparisons
from raterstats.analyze import COMPARISON_SECTIONS, RATINGS_ONLY, AnalyzeOptions, analyze
from raterstats.cli import app
from raterstats.comparisons import Comparisons
from raterstats.simulate import archehr_like_study
from raterstats.simulate_comparisons import simulate_comparisons

REPO = Path(__file__).resolve().parents[1]
SQUALITY = REPO / "examples/data/squality_rankings/rankings.csv"
FAST = AnalyzeOptions(method="map", n_boot=30)


def _pairs(names: dict[str, str] | None = None) -> Comparisons:
    """Simulated pairs of 3 systems by 4 raters and an LLM judge with a position bias,
    the order shown recorded; ``names`` renames systems."""
    c = simulate_comparisons(
        n_systems=3, n_raters=4, n_llm_judges=1, n_comparisons=150, n_questions=10,
        position_bias=0.8, llm_bias=1.5, random_seed=1,
    ).comparisons  # fmt: skip
    if not names:
        return c
    d = c.data.with_columns(
        pl.col("system_a").replace(names), pl.col("system_b").replace(names)
    ).drop("source_row", "comparison")
    return read_comparisons(d.with_columns(pl.col("outcome").cast(pl.Int64)), graded=1)


@pytest.fixture(scope="module")
def pairs_report(tmp_path_factory: pytest.TempPathFactory):
    return analyze(_pairs(), tmp_path_factory.mktemp("pairs"), options=FAST)


def test_every_section_of_pairs(pairs_report):
    """issue 20: data, agreement, model, rankings and raters apply to simulated pairs; the
    sections of ratings are listed with the reason."""
    res = pairs_report
    assert res.sections == list(COMPARISON_SECTIONS)
    assert set(res.skipped) == set(RATINGS_ONLY)
    assert all(r.startswith("ratings only: ") for r in res.skipped.values())
    text = res.report.read_text()
    for head in (
        "## Data summary",
        "## Agreement",
        "## Comparison model (BradleyTerry)",
        "## System rankings",
        "### P(a > b) and rank probabilities (comparison model)",
        "### Agreement of the model's ranking with each baseline",
        "## Rater reliability and position bias",
        "## Sections not included",
    ):
        assert head in text, head
    names = {p.name for p in res.files}
    assert {"agreement.csv", "rankings.csv", "ranking_pairs.csv", "raters.csv"} <= names
    assert {"summary_cells.csv", "model_strengths.csv", "rank_probabilities.png"} <= names
    rankings = pl.read_csv(res.out / "rankings.csv")
    assert set(rankings["source"]) == {"comparison model", "win_rate", "elo", "bradley_terry_ml"}
    # a MAP fit: a note above every table from it, never intervals of zero width as such
    assert "**Fit health:** a point estimate" in text
    assert "> **Note:** Computed from a MAP point estimate" in text
    assert "position bias (beta)" in text and "LLM judge llm1: position bias" in text
    assert list(res.fits) == ["BradleyTerry"]


def test_nuts_fit_of_rankings_with_health_lines_and_position_bias_not_applicable(tmp_path):
    """issue 20: rankings get Plackett-Luce by NUTS (few draws here): the fit-health lines
    and, when the fit fails its checks, the warning banner above its tables; no position
    bias (rankings carry no order of presentation)."""
    c = simulate_comparisons(
        kind="rankings", n_systems=4, n_raters=3, n_questions=20, n_comparisons=40,
        random_seed=3,
    ).comparisons  # fmt: skip
    opts = AnalyzeOptions(draws=10, tune=10, chains=2, n_boot=20)
    res = analyze(c, tmp_path, options=opts)
    text = res.report.read_text()
    assert "## Comparison model (PlackettLuce)" in text
    assert "NUTS (nutpie), 2 chains x 10 draws" in text
    # 20 draws cannot pass the ESS checks: the fit says so, and every table from it too
    assert "**Fit health:** the fit FAILS its checks" in text
    model_part = text.split("## Comparison model")[1]
    assert model_part.count("> **Warning:**") >= 3
    assert "Position bias is not estimated: rankings carry no order of presentation" in text
    assert "position bias (beta)" not in text


def test_no_model_leaves_out_model_and_raters(tmp_path):
    """issue 20: models=() fits nothing; the rankings are the baselines alone."""
    res = analyze(_pairs(), tmp_path, options=AnalyzeOptions(models=(), n_boot=20))
    assert res.sections == ["data", "agreement", "rankings"]
    assert res.skipped["model"] == "no model among the models asked (none)"
    assert res.skipped["raters"].startswith("no comparison model")
    assert "### P(a > b)" not in res.report.read_text()


def test_agreement_needs_two_raters(tmp_path):
    """issue 20: one rater: agreement is left out with the reason."""
    one = _pairs().filter(rater="r1")
    res = analyze(one, tmp_path, options=AnalyzeOptions(models=(), n_boot=10))
    assert res.skipped["agreement"] == "one rater only (r1): no agreement between raters"


def test_options_that_do_not_apply(tmp_path):
    """issue 20: a model of the other kind, or options of ratings, are errors before any
    work; a comparison model asked for ratings too."""
    with pytest.raises(ValueError, match=r"mace do.* not fit pairs: the model of pairs is"):
        analyze(_pairs(), tmp_path, options=AnalyzeOptions(models=("mace",)))
    with pytest.raises(ValueError, match="score_map apply to ratings only"):
        analyze(_pairs(), tmp_path, options=AnalyzeOptions(score_map="yes_partially_no"))
    with pytest.raises(ValueError, match="unknown section"):
        analyze(_pairs(), tmp_path, options=AnalyzeOptions(skip=("nope",)))
    r = archehr_like_study(n_cases=3, n_systems=3, random_seed=1).ratings
    with pytest.raises(ValueError, match="bradley_terry fits comparative judgments"):
        analyze(r, tmp_path, options=AnalyzeOptions(models=("bradley-terry",)))
    with pytest.raises(TypeError, match=r"Ratings .* or Comparisons"):
        analyze(object(), tmp_path)  # type: ignore[arg-type]


def test_hostile_system_names_are_escaped(tmp_path):
    """issue 20: user strings (system names with markup and table pipes) are escaped in
    the Markdown and the HTML."""
    bad = {"s1": "<script>alert(1)</script>", "s2": "a|b"}
    res = analyze(_pairs(bad), tmp_path, options=FAST)
    md = res.report.read_text()
    html = res.html.read_text()
    assert "<script>alert(1)</script>" not in md and "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;" in md
    assert "a\\|b" in md
    # every table row keeps its number of cells (no pipe breaks one)
    for table in re.findall(r"((?:^\|.*\|\n)+)", md, flags=re.M):
        widths = {len(re.split(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(widths) == 1, table


def test_cli_analyze_on_a_simulated_file(tmp_path):
    """issue 20: raterstats analyze FILE --comparisons pairs writes the report and says
    what it left out."""
    c = _pairs()
    src = tmp_path / "pairs.csv"
    words = {1: "a", -1: "b", 0: "tie"}
    c.data.with_columns(pl.col("outcome").replace_strict(words, return_dtype=pl.String)).drop(
        "source_row"
    ).write_csv(src)
    res = CliRunner().invoke(
        app,
        ["analyze", str(src), "--comparisons", "pairs", "--method", "map", "--n-boot", "20",
         "-o", str(tmp_path / "report")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Sections: data, agreement, model, rankings, raters" in res.stdout
    assert "Not included: ordinal: ratings only" in res.stdout
    assert "analyze: note: the BradleyTerry fit is a point estimate" in res.stderr
    bad = CliRunner().invoke(
        app, ["analyze", str(src), "--comparisons", "pairs", "--score-map", "yes_partially_no"]
    )
    assert bad.exit_code == 2 and "apply to ratings only" in bad.stderr


@pytest.mark.slow
def test_squality_at_default_settings(tmp_path):
    """issue 20: the real SQuALITY rankings at the library's defaults (Plackett-Luce by
    NUTS, 4 chains x 1000 draws; 1000 bootstrap replicates): every section that applies;
    the human summaries first on every dimension."""
    res = CliRunner().invoke(
        app, ["analyze", str(SQUALITY), "--comparisons", "rankings", "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert "Sections: data, agreement, model, rankings, raters" in res.stdout
    table = pl.read_csv(tmp_path / "rankings.csv")
    best = table.filter(pl.col("source") == "comparison model").sort("expected_rank")
    assert set(best.group_by("dimension").first()["system"]) == {"human"}
