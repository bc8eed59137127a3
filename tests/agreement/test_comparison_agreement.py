"""Issue 20: agreement for comparative judgments (comparison_agreement): units are
(question, unordered system pair), outcomes oriented to the sorted pair, the statistics of
raterstats.agreement on that units x raters table, with bootstrap intervals."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from raterstats import Comparisons, read_comparisons, read_ratings
from raterstats.agreement import (
    COMPARISON_AGREEMENT_STATISTICS,
    AgreementUsageError,
    DegenerateAgreementWarning,
    NotApplicableWarning,
    agreement,
    comparison_agreement,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
    randolph_kappa,
)
from raterstats.simulate_comparisons import simulate_comparisons


def _hand() -> Comparisons:
    # q1: both raters prefer x; q2: x vs a tie; q3: both prefer y (r2 lists y first)
    return read_comparisons(
        pl.DataFrame(
            {
                "question": ["q1", "q1", "q2", "q2", "q3", "q3"],
                "system_a": ["x", "y", "x", "x", "x", "y"],
                "system_b": ["y", "x", "y", "y", "y", "x"],
                "rater": ["r1", "r2"] * 3,
                "outcome": ["a", "b", "a", "tie", "b", "a"],
            }
        )
    )


def test_hand_computed_case() -> None:
    ds = comparison_agreement(_hand(), n_boot=0)
    est = ds["estimate"].sel(dimension="default")
    # pairwise agreement per unit: 1, 0, 1
    assert float(est.sel(statistic="percent_agreement")) == pytest.approx(2 / 3)
    # ties left out: q2 keeps one judgment and drops out; q1 and q3 agree
    assert float(est.sel(statistic="side_agreement")) == 1.0
    assert int(ds["n_units"].sel(dimension="default", statistic="side_agreement")) == 2
    # Fleiss: pi(+1) = (1 + 1/2 + 0) / 3, pi(0) = 1/6, pi(-1) = 1/3
    pe = 0.5**2 + (1 / 6) ** 2 + (1 / 3) ** 2
    assert float(est.sel(statistic="fleiss_kappa")) == pytest.approx((2 / 3 - pe) / (1 - pe))
    # Randolph: chance 1/3 with three categories (ties occur)
    assert float(est.sel(statistic="randolph_kappa")) == pytest.approx(0.5)
    assert ds.attrs["categories"] == "a / b / tie (3 categories)"
    assert ds.attrs["unit"] == "question x unordered system pair"
    # a / b / tie data: the graded alpha does not apply, and says why
    assert math.isnan(float(est.sel(statistic="krippendorff_alpha_ordinal")))
    why = str(ds["reason"].sel(dimension="default", statistic="krippendorff_alpha_ordinal"))
    assert "not graded" in why and "not graded" in ds.attrs["not_applicable"]
    assert int(ds["n_units_total"].item()) == 3 and int(ds["n_units_single"].item()) == 0


def _table(c: Comparisons) -> np.ndarray:
    """The units x raters table built independently: first judgment of each rater per
    (question, sorted pair), sign flipped when system_a is the later name."""
    raters = sorted(set(c.data["rater"].to_list()))
    cells: dict[tuple[str, str, str], dict[str, float]] = {}
    for q, a, b, r, o in (
        c.data.sort("source_row")
        .select("question", "system_a", "system_b", "rater", "outcome")
        .rows()
    ):
        unit = (q, min(a, b), max(a, b))
        cells.setdefault(unit, {}).setdefault(r, float(o if a < b else -o))
    rows = [[v.get(r, np.nan) for r in raters] for _, v in sorted(cells.items()) if len(v) >= 2]
    return np.asarray(rows)


def test_matches_the_ratings_statistics_on_the_equivalent_table() -> None:
    sim = simulate_comparisons(
        n_systems=4, n_raters=5, n_questions=12, n_comparisons=400, max_grade=2, random_seed=8
    )
    c = sim.comparisons
    ds = comparison_agreement(c, n_boot=0)
    est = ds["estimate"].sel(dimension="d1")
    mat = _table(c)
    sign = np.sign(mat)
    assert int(ds["n_units_total"].item()) - int(ds["n_units_single"].item()) == mat.shape[0]
    want = {
        "percent_agreement": percent_agreement(sign),
        "side_agreement": percent_agreement(np.where(sign == 0, np.nan, sign)),
        "fleiss_kappa": fleiss_kappa(sign),
        "randolph_kappa": randolph_kappa(sign, categories=[-1, 0, 1]),
        "krippendorff_alpha_ordinal": krippendorff_alpha(mat, level="ordinal"),
        "krippendorff_alpha_ordinal_sign": krippendorff_alpha(sign, level="ordinal"),
        "krippendorff_alpha_interval_sign": krippendorff_alpha(sign, level="interval"),
    }
    for stat, value in want.items():
        assert float(est.sel(statistic=stat)) == pytest.approx(value, abs=1e-12), stat
    # and through agreement() on a Ratings table of the same a / b / tie outcomes
    units, raters = np.nonzero(~np.isnan(sign))
    frame = pl.DataFrame(
        {
            "item": [f"u{u}" for u in units],
            "rater": [f"r{r}" for r in raters],
            "rating": sign[units, raters].astype(int).tolist(),
        }
    )
    res = agreement(read_ratings(frame), ["percent_agreement", "fleiss_kappa"], n_boot=0)
    for stat in ("percent_agreement", "fleiss_kappa"):
        got = float(res["estimate"].sel(statistic=stat).item())
        assert got == pytest.approx(float(est.sel(statistic=stat)), abs=1e-12), stat


def test_bootstrap_intervals_are_reproducible_and_bracket_the_estimate() -> None:
    c = simulate_comparisons(
        n_systems=4, n_raters=4, n_questions=10, n_comparisons=300, ties=True, random_seed=1
    ).comparisons
    a = comparison_agreement(c, n_boot=300, random_seed=2)
    b = comparison_agreement(c, n_boot=300, random_seed=2)
    assert a.equals(b)
    ok = np.isfinite(a["estimate"].values)
    assert (a["ci_low"].values[ok] <= a["estimate"].values[ok] + 1e-12).all()
    assert (a["estimate"].values[ok] <= a["ci_high"].values[ok] + 1e-12).all()
    assert (a["n_boot_valid"].values[ok] == 300).all()
    assert a.attrs["interval"] == "percentile, bootstrap of the units"
    none = comparison_agreement(c, n_boot=0)
    assert np.isnan(none["ci_low"].values).all()
    assert none.attrs["interval"] == "none (n_boot = 0)"


def test_single_rater_units_and_repeats_are_counted_not_used() -> None:
    c = read_comparisons(
        pl.DataFrame(
            {
                "question": ["q1", "q1", "q1", "q2"],
                "system_a": ["x", "x", "y", "x"],
                "system_b": ["y", "y", "x", "y"],
                "rater": ["r1", "r2", "r1", "r1"],
                # r1 judges q1 twice (swapped order): the first judgment counts
                "outcome": ["a", "a", "a", "a"],
            }
        )
    )
    with pytest.warns(DegenerateAgreementWarning):  # one unit, one side: no kappa
        ds = comparison_agreement(c, n_boot=0)
    assert int(ds["n_units_single"].item()) == 1 and int(ds["n_repeats"].item()) == 1
    assert "default 1" in ds.attrs["single_rater_units"] and "first counts" in ds.attrs["repeats"]
    assert float(ds["estimate"].sel(statistic="percent_agreement").item()) == 1.0


def test_one_rater_per_unit_is_nan_with_a_reason() -> None:
    c = read_comparisons(
        pl.DataFrame(
            {
                "system_a": ["x", "y"],
                "system_b": ["y", "z"],
                "rater": ["r1", "r2"],
                "outcome": ["a", "b"],
            }
        )
    )
    with pytest.warns(NotApplicableWarning, match="judged by one rater"):
        ds = comparison_agreement(c, n_boot=10)
    assert np.isnan(ds["estimate"].values).all()
    assert all("judged by one rater" in str(r) for r in ds["reason"].values.ravel())
    assert ds.attrs["unit"].startswith("unordered system pair")
    assert ds.attrs["categories"] == "a / b (no ties possible)"


def test_undefined_statistics_say_why() -> None:
    c = read_comparisons(
        pl.DataFrame(
            {
                "question": ["q1", "q1", "q2", "q2"],
                "system_a": ["x"] * 4,
                "system_b": ["y"] * 4,
                "rater": ["r1", "r2"] * 2,
                "outcome": ["a"] * 4,
            }
        )
    )
    with pytest.warns(DegenerateAgreementWarning, match="fleiss_kappa"):
        ds = comparison_agreement(c, n_boot=20)
    est = ds["estimate"].sel(dimension="default")
    assert float(est.sel(statistic="percent_agreement")) == 1.0
    assert math.isnan(float(est.sel(statistic="fleiss_kappa")))
    assert str(ds["reason"].sel(dimension="default", statistic="fleiss_kappa")) != ""
    assert "fleiss_kappa" in ds.attrs["undefined"]


def test_rankings_become_pairs_per_question() -> None:
    c = read_comparisons(
        pl.DataFrame(
            {
                "question": ["q1"] * 6,
                "rater": ["r1"] * 3 + ["r2"] * 3,
                "system": ["a", "b", "c"] * 2,
                "rank": [1, 2, 3, 1, 3, 2],
            }
        )
    )
    ds = comparison_agreement(c, n_boot=0)
    # pairs (a, b), (a, c) agree; (b, c) disagree
    assert float(ds["estimate"].sel(statistic="percent_agreement").item()) == pytest.approx(2 / 3)
    assert "to_pairs" in ds.attrs["pairs_from_rankings"]


def test_bad_calls_list_every_problem() -> None:
    with pytest.raises(AgreementUsageError) as err:
        comparison_agreement(_hand(), statistics=["nope"], ci_prob=2.0, n_boot=-1)
    text = str(err.value)
    assert "unknown statistic 'nope'" in text and "ci_prob" in text and "n_boot" in text
    with pytest.raises(AgreementUsageError, match="ties=False"):
        comparison_agreement(_hand(), ties=False)
    assert set(COMPARISON_AGREEMENT_STATISTICS) >= {"percent_agreement", "side_agreement"}


def test_ids_are_escaped_in_the_notes() -> None:
    c = read_comparisons(
        pl.DataFrame(
            {
                "question": ["q1", "q1"],
                "system_a": ["x", "x"],
                "system_b": ["y", "y"],
                "rater": ["r1", "r1"],
                "outcome": ["a", "b"],
                "dimension": ["d\n\x1b[2J"] * 2,
            }
        )
    )
    with pytest.warns(NotApplicableWarning) as rec:
        ds = comparison_agreement(c, n_boot=0)
    for text in (ds.attrs["repeats"], ds.attrs["not_applicable"], str(rec[0].message)):
        assert "\x1b" not in text and repr("d\n\x1b[2J") in text
