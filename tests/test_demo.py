"""The demo analysis (analyze on the built-in study, issue 17): every number in its tables
comes from the library functions."""

from __future__ import annotations

import polars as pl
import pytest

from raterstats.agreement import randolph_kappa
from raterstats.datasets import load_clinical_qa
from raterstats.demo import DEMO_STATISTICS, run_demo, schemes
from raterstats.ranking import rank_systems


@pytest.fixture(scope="module")
def demo(demo_run):
    return demo_run


def test_agreement_table_covers_every_scheme_dimension_and_statistic(demo):
    table = pl.read_csv(demo.out / "agreement.csv")
    assert table.height == 3 * 3 * len(DEMO_STATISTICS)
    assert sorted(table["scheme"].unique().to_list()) == [
        "coarse 3-point",
        "fine 3-point",
        "fine binary",
    ]
    assert (table["ci_low"] <= table["estimate"]).all()
    assert (table["estimate"] <= table["ci_high"]).all()


@pytest.mark.parametrize("scheme", ["coarse 3-point", "fine 3-point", "fine binary"])
def test_demo_randolph_kappa_equals_the_direct_computation(demo, scheme):
    humans = load_clinical_qa().filter(rater_kind="human")
    r = schemes(humans)[scheme].filter(dimension="correctness")
    direct = randolph_kappa(r)
    table = pl.read_csv(demo.out / "agreement.csv").filter(
        pl.col("scheme") == scheme,
        pl.col("dimension") == "correctness",
        pl.col("statistic") == "randolph_kappa",
    )
    assert table["estimate"].item() == pytest.approx(direct, abs=1e-12)
    assert table["n_raters"].item() == 6


def test_demo_is_reproducible(demo, tmp_path):
    # the model-free part again with the same seed: every table it writes is the same
    again = run_demo(
        tmp_path,
        n_boot=200,
        random_seed=3,
        ordinal_draws=0,
        categorical_draws=0,
        rankings=False,
        designs=False,
    )
    tables = [p.name for p in again.files if p.suffix in (".csv", ".json")]
    assert "agreement.csv" in tables and "label_distribution.csv" in tables
    for name in tables:
        assert (again.out / name).read_text() == (demo.out / name).read_text(), name


def test_demo_has_the_ordinal_part(demo):
    report = (demo.out / "report.md").read_text()
    assert "## Ordinal rater model" in report
    for part in (
        "### System fair averages",
        "### Model-implied reliability by design",
        "coarse - fine",
        "### Rater table",
    ):
        assert part in report
    fair = pl.read_csv(demo.out / "ordinal_fair_averages.csv")
    assert fair.height == 3 * 2 * 3  # dimensions x designs x systems
    assert ((fair["low"] <= fair["mean"]) & (fair["mean"] <= fair["high"])).all()
    raters = pl.read_csv(demo.out / "ordinal_rater_table.csv")
    assert raters.height == 7 * 3 * 2


def test_demo_has_the_categorical_part(demo):
    report = (demo.out / "report.md").read_text()
    assert "## Categorical rater model: MACE (scale collapsed by likert5_to_3)" in report
    assert "### Rater competence" in report and "### Inferred labels" in report
    comp = pl.read_csv(demo.out / "mace_competence.csv")
    assert comp.height == 7 * 3 * 2
    assert (
        (comp["competence_low"] <= comp["competence_mean"])
        & (comp["competence_mean"] <= comp["competence_high"])
    ).all()
    labels = pl.read_csv(demo.out / "mace_label_posteriors.csv")
    assert set(labels["label"].cast(pl.String).unique().to_list()) <= {"-1", "0", "1"}
    assert labels.filter(pl.col("item").str.contains("::")).height == 1555 * 3


def test_demo_has_the_rankings(demo):
    report = (demo.out / "report.md").read_text()
    assert "## System rankings" in report
    assert "![Rank probabilities](rank_probabilities.png)" in report
    assert "![System fair averages by design](system_scores_by_design.png)" in report
    for name in ("rank_probabilities.png", "system_scores_by_design.png", "ranking_pairs.csv"):
        assert (demo.out / name).exists()
    t = pl.read_csv(demo.out / "rankings.csv")
    sources = set(t["source"].to_list())
    assert sources == {
        "rater model, coarse",
        "rater model, fine",
        "raw mean (coarse)",
        "raw majority (coarse)",
    }
    per = t.group_by("source", "dimension").agg(
        pl.col("expected_rank").sum(), pl.col("p_rank_1").sum()
    )
    assert per.height == 4 * 3
    assert ((per["expected_rank"] - 6).abs() < 1e-9).all()  # ranks 1 + 2 + 3
    assert ((per["p_rank_1"] - 1).abs() < 1e-9).all()
    dist = pl.read_csv(demo.out / "label_distribution_by_system.csv")
    shares = dist.group_by("aggregation", "dimension", "system").agg(pl.col("share").sum())
    assert shares.height == 2 * 3 * 3
    assert ((shares["share"] - 1).abs() < 1e-9).all()
    majority = dist.filter(pl.col("aggregation") == "majority")["n"].sum()
    assert majority == 300 * 3  # one label per answer and dimension
    # the baseline equals the direct computation with the demo's seed
    direct = rank_systems(
        load_clinical_qa().filter(design="coarse", rater_kind="human"),
        method="mean",
        n_boot=200,
        random_seed=3,
    )
    row = t.filter(
        pl.col("source") == "raw mean (coarse)",
        pl.col("dimension") == "safety",
        pl.col("system") == "llm-a",
    )
    want = float(direct["score_mean"].sel(dimension="safety", system="llm-a"))
    assert row["score_mean"].item() == pytest.approx(want, rel=1e-9)


def test_demo_has_the_design_comparison(demo):
    report = (demo.out / "report.md").read_text()
    for part in (
        "## Annotation designs",
        "### Reliability by design",
        "![Model-implied reliability by design](reliability_by_design.png)",
        "### Partial annotation",
        "![Partial annotation](partial_annotation.png)",
        "## Intra-rater reliability",
        "## LLM judges",
    ):
        assert part in report
    assert "### Annotation budget" not in report  # design_projections=False
    cmp = pl.read_csv(demo.out / "design_comparison.csv")
    assert cmp.height == 3 * 2
    assert (
        (cmp["reliability_low"] <= cmp["reliability"])
        & (cmp["reliability"] <= cmp["reliability_high"])
    ).all()
    part = pl.read_csv(demo.out / "partial_annotation.csv")
    assert part.height == 3 * 6
    # at most 6 sentences were rated per answer: k = 6 is the full score
    assert (part.filter(pl.col("k") == 6)["spearman_mean"] == 1.0).all()
    intra = pl.read_csv(demo.out / "intra_rater.csv")
    assert intra.height == 3 * 2


@pytest.mark.slow
def test_demo_budget_projection(tmp_path):
    res = run_demo(tmp_path, n_boot=100, random_seed=2, ordinal_draws=60, categorical_draws=0)
    report = (res.out / "report.md").read_text()
    assert "### Annotation budget" in report
    assert "![Projected reliability against cost](budget_reliability.png)" in report
    # both budget curves are embedded in the HTML page
    page = (res.out / "report.html").read_text()
    for alt in ("Projected reliability against cost", "Projected ranking certainty against cost"):
        assert f'alt="{alt}"' in page
    b = pl.read_csv(res.out / "annotation_budget.csv")
    assert b.height == 3 * 2 * 5 * 6  # dimensions x designs x raters x sentences
    assert b["p_recovered"].is_between(0, 1).all()
    # more raters never lower the projected reliability
    mono = (
        b.sort("n_raters")
        .group_by("dimension", "design", "k")
        .agg(pl.col("reliability").diff().drop_nulls().min().alias("step"))
    )
    assert (mono["step"] >= 0).all()


def test_demo_report_states_its_methods_and_has_the_html_page(demo):
    report = (demo.out / "report.md").read_text()
    methods = report.split("## Methods", 1)[1].split("## Files", 1)[0]
    assert "ordinal rater model" in methods
    assert "MACE (scale collapsed by likert5_to_3)" in methods and "Hovy" in methods
    assert "seed 3" in methods or "seed: 3" in methods or "random_seed=3" in methods
    page = (demo.out / "report.html").read_text()
    assert 'id="methods"' in page
