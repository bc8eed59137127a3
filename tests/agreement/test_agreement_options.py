"""issue 17, "Agreement on the command line", in the Python API: statistic options as text
(``"krippendorff_alpha:level=interval"``), one parser (:func:`parse_statistics`) for
``agreement()``, the command line and the study file; every row states the options it was
computed with; a statistic that does not apply gives its reason in its rows while the others
are computed; nominal statistics on ordered scales with many levels warn."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from raterstats import IntervalScale, NominalScale, OrdinalScale, read_ratings
from raterstats.agreement import (
    AGREEMENT_STATISTICS,
    AgreementUsageError,
    ManyLevelsWarning,
    NotApplicableWarning,
    agreement,
    agreement_table,
    cohen_kappa,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    parse_statistic,
    parse_statistics,
)
from raterstats.agreement.specs import option_rules

VECTORS = {
    e["id"]: e
    for e in json.loads(
        (Path(__file__).parents[1] / "reference" / "agreement_vectors.json").read_text()
    )["entries"]
}
#: the three examples of the issue, each with its oracle vector and the direct Python call
EXAMPLES = [
    (
        "krippendorff_alpha:level=interval",
        "krippendorff_alpha__krippendorff2011_4x12__interval",
        lambda r: krippendorff_alpha(r, level="interval"),
    ),
    (
        "cohen_kappa:weights=quadratic",
        "cohen_kappa__irr_diagnoses_r1_r2__quadratic",
        lambda r: cohen_kappa(r, weights="quadratic"),
    ),
    (
        "icc:form=ICC1",
        "icc__shrout_fleiss_1979__icc1",
        lambda r: icc(r, form="ICC1"),
    ),
]


def vector_ratings(vector_id: str):
    """The vector's items x raters matrix as Ratings (long rows, missing ratings left out),
    on an ordinal scale of its declared categories (or an interval scale)."""
    entry = VECTORS[vector_id]
    cats = entry["data"].get("categories")
    rows = [
        {"item": f"u{i:02d}", "rater": f"r{j}", "rating": v}
        for i, row in enumerate(entry["data"]["ratings"])
        for j, v in enumerate(row)
        if v is not None
    ]
    scale = OrdinalScale(cats) if cats else IntervalScale()
    return read_ratings(pl.DataFrame(rows), scale=scale)


def five_raters(n_items: int = 12, seed: int = 3):
    rng = np.random.default_rng(seed)
    rows = [
        {"item": f"i{i}", "rater": f"r{k}", "rating": int(np.clip(b + rng.integers(-1, 2), 1, 5))}
        for i, b in enumerate(rng.integers(1, 6, size=n_items))
        for k in range(5)
    ]
    return read_ratings(pl.DataFrame(rows), scale=OrdinalScale.likert(5))


# ----------------------------------------------------------------------------- the parser


def test_text_pair_and_mapping_forms_are_one_statistic():
    text = parse_statistic("cohen_kappa:weights=squared,weight_scale=observed_level_index")
    pair = parse_statistic(
        ("cohen_kappa", {"weights": "quadratic", "weight_scale": "observed_level_index"})
    )
    assert text == pair
    assert text.options == {"weights": "quadratic", "weight_scale": "observed_level_index"}
    assert text.label == "cohen_kappa (weights=quadratic, weight_scale=observed_level_index)"
    # a comma inside parentheses belongs to the value; every ICC naming reads the same form
    assert parse_statistic("icc:form=ICC(3,k)").options == {"form": "ICC(3,k)"}
    for form in ("ICC1", "ICC(1)", "icc(1,1)"):
        assert parse_statistic(f"icc:form={form}").options == {"form": "ICC(1,1)"}
    # values take the type the function expects
    assert parse_statistic("kendall_w:tie_correction=false").options == {"tie_correction": False}
    pa = parse_statistic("percent_agreement:kind=unanimous,tolerance=1")
    assert pa.options == {"kind": "unanimous", "tolerance": 1.0}
    mapped = parse_statistics({"alpha": "krippendorff_alpha:level=ordinal"})
    assert [(s.label, s.name, s.options) for s in mapped] == [
        ("alpha", "krippendorff_alpha", {"level": "ordinal"})
    ]


def test_every_registered_option_has_a_rule_that_reads_its_default():
    for name in AGREEMENT_STATISTICS:
        rules = option_rules(name)
        assert rules, name
        for key, rule in rules.items():
            default = rule.default
            text = {None: "none", True: "true", False: "false"}.get(default, str(default))
            assert rule.parse(default) == default, (name, key)  # Python value
            assert rule.parse(text) == default, (name, key)  # the same value as text
            assert rule.allowed(), (name, key)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "krippendorff_alpha:levl=interval",
            "krippendorff_alpha has no option 'levl'; did you mean 'level'? (its options: level)",
        ),
        (
            "krippendorff_alpha:level=intervall",
            "level takes nominal, ordinal, interval, ratio, or none (its default), not "
            "'intervall'; did you mean 'interval'?",
        ),
        ("cohen_kappa:weights=quadratc", "did you mean 'quadratic'?"),
        ("icc:form=ICC9", "form takes ICC(1,1), ICC(2,1)"),
        ("kendall_w:tie_correction=maybe", "tie_correction takes true or false, not 'maybe'"),
        (
            "percent_agreement:tolerance=-1",
            "tolerance takes a number >= 0, or none (its default), not '-1'",
        ),
        ("percent_agreement:weights=linear,tolerance=1", "give weights or tolerance, not both"),
        ("intra_rater_agreement:kind=kappa,tolerance=1", "tolerance applies to kind='percent'"),
        ("fleis_kappa", "unknown statistic 'fleis_kappa'; did you mean 'fleiss_kappa'?"),
        ("cohen_kappa:", "no options after ':'"),
        ("cohen_kappa:weights", "option 'weights' is not key=value"),
        ("cohen_kappa:weights=linear,weights=quadratic", "option 'weights' is given twice"),
    ],
)
def test_bad_statistics_are_usage_errors_that_say_what_is_allowed(spec, expected):
    with pytest.raises(AgreementUsageError) as err:
        agreement([[1, 2], [2, 2]], [spec], n_boot=0)
    assert expected in str(err.value)
    assert f"statistic {spec!r}" in str(err.value)


def test_every_problem_is_listed_and_duplicates_are_refused():
    with pytest.raises(AgreementUsageError) as err:
        parse_statistics(["icc:form=x", "no_such", "fleiss_kappa:weights=cubic"])
    assert len(err.value.problems) == 3
    with pytest.raises(AgreementUsageError, match="occur more than once"):
        parse_statistics(["icc:form=ICC1", "icc:form=ICC(1,1)"])
    with pytest.raises(AgreementUsageError, match="nothing to compute"):
        parse_statistics([])


# ----------------------------------------------------------------------------- the numbers


@pytest.mark.parametrize(("spec", "vector_id", "direct"), EXAMPLES)
def test_option_strings_give_the_direct_call_and_the_oracle(spec, vector_id, direct):
    ratings = vector_ratings(vector_id)
    ds = agreement(ratings, [spec], n_boot=0)
    stat = parse_statistic(spec).label
    got = float(ds["estimate"].sel(statistic=stat).squeeze())
    assert got == pytest.approx(direct(ratings), abs=1e-12)
    entry = VECTORS[vector_id]
    assert got == pytest.approx(
        entry["expected_full_precision"], abs=entry["tolerance_full_precision"]
    )
    # the pair form is the same statistic
    name, _, option = spec.partition(":")
    key, _, value = option.partition("=")
    pair = agreement(ratings, [(name, {key: value})], n_boot=0)
    assert float(pair["estimate"].squeeze()) == got


def test_one_statistic_twice_with_different_options():
    r = five_raters()
    ds = agreement(
        r, ["krippendorff_alpha:level=nominal", "krippendorff_alpha:level=interval"], n_boot=0
    )
    est = ds["estimate"].squeeze()
    assert ds.coords["statistic"].values.tolist() == [
        "krippendorff_alpha (level=nominal)",
        "krippendorff_alpha (level=interval)",
    ]
    assert est.values.tolist() == pytest.approx(
        [krippendorff_alpha(r, level="nominal"), krippendorff_alpha(r, level="interval")]
    )
    options = json.loads(ds.attrs["statistic_options"])
    assert options["krippendorff_alpha (level=interval)"] == {
        "name": "krippendorff_alpha",
        "level": "interval",
    }


# ----------------------------------------------------------------------------- options stated


def test_every_row_states_its_options_defaults_included():
    ordinal = five_raters()
    ds = agreement(
        ordinal,
        ["krippendorff_alpha", "fleiss_kappa", "icc", "gwet_ac2", "percent_agreement"],
        n_boot=0,
    )
    table = agreement_table(ds)
    stated = dict(zip(table["statistic"], table["options"], strict=True))
    assert stated == {
        "krippendorff_alpha": "level=ordinal (from the ordinal scale)",
        "fleiss_kappa": "weights=identity",
        "icc": "form=ICC(2,1)",
        "gwet_ac2": "weights=quadratic",
        "percent_agreement": "kind=pairwise",
    }
    # the ordinal default is the ordinal metric: the same number as level="ordinal"
    alpha = float(ds["estimate"].sel(statistic="krippendorff_alpha").squeeze())
    assert alpha == pytest.approx(krippendorff_alpha(ordinal, level="ordinal"))
    nominal = read_ratings(
        pl.DataFrame({"item": list("aabbcc"), "rater": list("xyxyxy"), "rating": list("ppqqpq")}),
        scale=NominalScale(["p", "q"]),
    )
    ds = agreement(nominal, ["krippendorff_alpha"], n_boot=0)
    assert ds["options"].squeeze().item() == "level=nominal (from the nominal scale)"
    ds = agreement([[1, 2], [2, 2], [1, 1]], ["krippendorff_alpha", "cohen_kappa"], n_boot=0)
    assert ds["options"].values.tolist() == [
        "level=nominal (default for data without a scale)",
        "weights=identity",
    ]


# ----------------------------------------------------------------------------- not applicable


def test_cohen_with_five_raters_has_its_reason_and_fleiss_is_computed():
    r = five_raters()
    with pytest.warns(NotApplicableWarning, match="cohen_kappa"):
        ds = agreement(r, ["fleiss_kappa", "cohen_kappa"], n_boot=20, random_seed=1)
    assert ds["reason"].dims == ds["estimate"].dims == ("statistic", "dimension", "design")
    fleiss = ds.sel(statistic="fleiss_kappa").squeeze()
    cohen = ds.sel(statistic="cohen_kappa").squeeze()
    assert float(fleiss["estimate"]) == pytest.approx(fleiss_kappa(r))
    assert fleiss["reason"].item() == ""
    assert np.isnan(float(cohen["estimate"])) and np.isnan(float(cohen["ci_low"]))
    assert cohen["reason"].item().startswith("Cohen's kappa needs exactly two raters, found 5")
    assert (int(cohen["n_ratings"]), int(cohen["n_raters"]), int(cohen["n_items"])) == (60, 5, 0)
    assert int(cohen["n_items_excluded"]) == 12
    table = agreement_table(ds)
    assert table["statistic"].to_list() == ["fleiss_kappa", "cohen_kappa"]
    assert table.columns[-2:] == ["options", "reason"]
    assert "cohen_kappa" in ds.attrs["not_applicable"]


def test_icc_on_a_nominal_scale_and_intra_rater_without_repeats_give_reasons():
    frame = pl.DataFrame(
        {
            "item": [f"i{i}" for i in range(6) for _ in range(3)],
            "rater": ["x", "y", "z"] * 6,
            "rating": list("pqppqqpppqqqppqpqq"),
        }
    )
    r = read_ratings(frame, scale=NominalScale(["p", "q"]))
    with pytest.warns(NotApplicableWarning):
        ds = agreement(r, ["icc", "intra_rater_agreement", "fleiss_kappa"], n_boot=0)
    reason = {s: ds["reason"].sel(statistic=s).squeeze().item() for s in ds.statistic.values}
    assert "needs ordered categories, but the scale is nominal" in reason["icc"]
    assert "no repeated ratings" in reason["intra_rater_agreement"]
    assert ds["options"].sel(statistic="intra_rater_agreement").squeeze().item() == "kind=percent"
    assert reason["fleiss_kappa"] == ""
    assert np.isfinite(ds["estimate"].sel(statistic="fleiss_kappa")).all()


def test_the_reason_of_an_undefined_estimate_is_in_its_row():
    frame = pl.DataFrame({"item": list("aabb"), "rater": list("xyxy"), "rating": [1, 1, 1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = agreement(read_ratings(frame, scale=OrdinalScale([1, 2])), ["fleiss_kappa"], n_boot=0)
    assert "expected (chance) agreement is 1" in ds["reason"].squeeze().item()


def test_usage_errors_stay_errors_for_the_whole_call():
    r = five_raters()
    two = pl.concat([r.data.with_columns(pl.lit(d).alias("dimension")) for d in ("a", "b")])
    both = read_ratings(
        two.select("item", "rater", "rating", "dimension"), scale=OrdinalScale.likert(5)
    )
    with pytest.raises(AgreementUsageError, match="add 'dimension' to by"):
        agreement(both, ["fleiss_kappa"], by=["design"], n_boot=0)
    with pytest.raises(AgreementUsageError, match="no 'shift' column"):
        agreement(r, ["fleiss_kappa"], by=["shift"], n_boot=0)
    with pytest.raises(AgreementUsageError, match="ci_prob"):
        agreement(r, ["fleiss_kappa"], ci_prob=2.0)


# ----------------------------------------------------------------------------- many levels


def hundred_point(nominal: bool = False):
    rng = np.random.default_rng(4)
    rows: list[dict[str, Any]] = [
        {"item": f"i{i}", "rater": f"r{k}", "rating": int(np.clip(b + rng.integers(-5, 6), 0, 100))}
        for i, b in enumerate(rng.integers(0, 101, size=25))
        for k in range(3)
    ]
    if nominal:
        rows = [{**row, "rating": f"c{row['rating'] % 12}"} for row in rows]
        return read_ratings(pl.DataFrame(rows))
    return read_ratings(pl.DataFrame(rows), scale=IntervalScale(0, 100))


def test_nominal_statistics_on_a_many_level_scale_warn():
    r = hundred_point()
    stats = [
        "percent_agreement",
        "fleiss_kappa",
        "krippendorff_alpha",
        "fleiss_kappa:weights=quadratic",
        "icc",
        "krippendorff_alpha:level=nominal",
    ]
    with pytest.warns(ManyLevelsWarning) as got:
        agreement(r, stats, n_boot=0)
    (message,) = [str(w.message) for w in got if w.category is ManyLevelsWarning]
    named = message.split(" treat ")[0].removeprefix("agreement: ")
    assert named.split(", ") == [
        "percent_agreement",
        "fleiss_kappa",
        "krippendorff_alpha (level=nominal)",
    ]
    assert "krippendorff_alpha:level=interval" in message
    assert "weights=quadratic" in message


@pytest.mark.parametrize("case", ["five levels", "weighted", "nominal labels"])
def test_no_many_levels_warning_where_it_does_not_apply(case):
    if case == "five levels":
        r, stats = five_raters(), ["fleiss_kappa", "percent_agreement"]
    elif case == "weighted":
        r, stats = hundred_point(), ["fleiss_kappa:weights=linear", "krippendorff_alpha", "icc"]
    else:  # twelve unordered categories really are unordered
        r, stats = hundred_point(nominal=True), ["fleiss_kappa", "percent_agreement"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ManyLevelsWarning)
        agreement(r, stats, n_boot=0)
