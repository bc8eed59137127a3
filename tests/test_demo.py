"""The demo analysis: every number in its tables comes from the library functions."""

from __future__ import annotations

import polars as pl
import pytest

from raterstats.agreement import randolph_kappa
from raterstats.datasets import load_clinical_qa
from raterstats.demo import DEMO_STATISTICS, run_demo, schemes


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return run_demo(
        tmp_path_factory.mktemp("demo"),
        n_boot=200,
        random_seed=3,
        ordinal_draws=100,
        categorical_draws=100,
    )


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
    again = run_demo(tmp_path, n_boot=200, random_seed=3, ordinal_draws=0, categorical_draws=0)
    assert (again.out / "agreement.csv").read_text() == (demo.out / "agreement.csv").read_text()


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
    assert "## Categorical rater model (hierarchical MACE, 3-point ratings)" in report
    assert "### Rater competence" in report and "### Label posteriors" in report
    comp = pl.read_csv(demo.out / "mace_competence.csv")
    assert comp.height == 7 * 3 * 2
    assert (
        (comp["competence_low"] <= comp["competence_mean"])
        & (comp["competence_mean"] <= comp["competence_high"])
    ).all()
    labels = pl.read_csv(demo.out / "mace_label_posteriors.csv")
    assert set(labels["label"].cast(pl.String).unique().to_list()) <= {"-1", "0", "1"}
    assert labels.filter(pl.col("item").str.contains("::")).height == 1555 * 3
