"""Input forms (arrays, lists, frames, DataArrays, Ratings), labels and options."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
import xarray as xr

from raterstats import NominalScale, OrdinalScale, read_ratings
from raterstats.agreement import (
    AgreementInputError,
    DegenerateAgreementWarning,
    cohen_kappa,
    fleiss_kappa,
    fleiss_kappa_category,
    gwet_ac1,
    icc,
    intra_rater_agreement,
    kendall_tau_b,
    krippendorff_alpha,
    normalized_rank_position,
    percent_agreement,
    randolph_kappa,
    rbo,
    spearman_rho,
)

M = [[1, 1, 2], [2, 2, 2], [3, None, 3], [1, 2, 3], [2, 2, None]]


def as_float(m):
    return np.asarray([[np.nan if v is None else v for v in row] for row in m], dtype=float)


def test_array_forms_agree():
    want = fleiss_kappa(M)
    arr = as_float(M)
    assert fleiss_kappa(arr) == want
    assert fleiss_kappa(pd.DataFrame(arr, columns=["a", "b", "c"])) == want
    assert fleiss_kappa(pl.DataFrame(arr, schema=["a", "b", "c"], orient="row")) == want
    assert fleiss_kappa(xr.DataArray(arr, dims=("unit", "rater"))) == want
    assert fleiss_kappa(arr.astype(object)) == want


def test_text_labels_and_numeric_labels_agree():
    names = {1: "low", 2: "mid", 3: "high"}
    text = [[None if v is None else names[v] for v in row] for row in M]
    order = ["low", "mid", "high"]
    for stat in (fleiss_kappa, randolph_kappa, gwet_ac1, percent_agreement, krippendorff_alpha):
        assert stat(text, categories=order) == pytest.approx(stat(M, categories=[1, 2, 3]))
    # ordered text labels: weights and metrics use positions (equally spaced like 1, 2, 3)
    assert fleiss_kappa(text, weights="quadratic", categories=order) == pytest.approx(
        fleiss_kappa(M, weights="quadratic")
    )
    assert krippendorff_alpha(text, level="ordinal", categories=order) == pytest.approx(
        krippendorff_alpha(M, level="ordinal")
    )
    # a mapping gives values
    values = {"low": 0.0, "mid": 1.0, "high": 5.0}
    assert krippendorff_alpha(text, level="interval", categories=values) == pytest.approx(
        krippendorff_alpha(
            [[None if v is None else {1: 0, 2: 1, 3: 5}[v] for v in r] for r in M], level="interval"
        )
    )


def test_declared_domain_changes_only_what_it_should():
    assert fleiss_kappa(M, categories=[1, 2, 3, 4, 5]) == pytest.approx(fleiss_kappa(M))
    assert randolph_kappa(M, categories=[1, 2, 3, 4, 5]) != pytest.approx(randolph_kappa(M))
    assert krippendorff_alpha(M, categories=[0, 1, 2, 3]) == pytest.approx(krippendorff_alpha(M))


def test_weight_names_and_matrices():
    two = [[1, 1], [1, 2], [2, 3], [3, 3], [3, 2], [1, 3]]
    assert cohen_kappa(two, weights="equal") == cohen_kappa(two, weights="linear")
    assert cohen_kappa(two, weights="squared") == cohen_kappa(two, weights="quadratic")
    assert cohen_kappa(two, weights="unweighted") == cohen_kappa(two)
    w = 1 - np.abs(np.subtract.outer(np.arange(3), np.arange(3))) / 2
    assert cohen_kappa(two, weights=w) == pytest.approx(cohen_kappa(two, weights="linear"))
    with pytest.raises(AgreementInputError, match="unknown weights"):
        cohen_kappa(two, weights="cubic")


def test_observed_level_index_skips_unused_levels():
    two = [[1, 1], [1, 2], [2, 4], [4, 4], [4, 2]]  # 3 never occurs
    by_value = cohen_kappa(two, weights="linear", categories=[1, 2, 3, 4])
    by_index = cohen_kappa(two, weights="linear", weight_scale="observed_level_index")
    assert by_index == pytest.approx(
        cohen_kappa([[{1: 0, 2: 1, 4: 2}[v] for v in r] for r in two], weights="linear")
    )
    assert by_value != pytest.approx(by_index)


def test_ratings_input_uses_the_scale():
    frame = pl.DataFrame(
        {
            "item": [f"i{k}" for k in range(5) for _ in range(3)],
            "rater": ["a", "b", "c"] * 5,
            "rating": [
                "no",
                "no",
                "yes",
                "yes",
                "yes",
                "yes",
                "partly",
                "no",
                "partly",
                "no",
                "partly",
                "yes",
                "yes",
                "yes",
                "no",
            ],
        }
    )
    scale = NominalScale(["yes", "partly", "no", "unsure"])
    r = read_ratings(frame, scale=scale)
    m = frame.pivot(on="rater", index="item", values="rating").drop("item").to_numpy()
    assert fleiss_kappa(r) == pytest.approx(fleiss_kappa(m))
    # the scale's four levels are the declared domain
    assert randolph_kappa(r) == pytest.approx(randolph_kappa(m, categories=scale.levels))
    with pytest.warns(DegenerateAgreementWarning, match=r"no rating uses \['unsure'\]"):
        per_cat = fleiss_kappa_category(r)
    assert per_cat.coords["category"].values.tolist() == ["yes", "partly", "no", "unsure"]
    assert np.isnan(per_cat.sel(category="unsure").item())
    assert np.all(np.isfinite(per_cat.sel(category=["yes", "partly", "no"]).values))


def test_ratings_with_several_dimensions_is_an_error():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b"] * 2,
            "rater": ["x", "y"] * 4,
            "rating": [1, 2, 2, 2, 1, 1, 2, 1],
            "dimension": ["d1"] * 4 + ["d2"] * 4,
        }
    )
    r = read_ratings(frame, scale=OrdinalScale([1, 2]))
    with pytest.raises(AgreementInputError, match="2 dimensions"):
        fleiss_kappa(r)
    assert fleiss_kappa(r.filter(dimension="d1")) == pytest.approx(fleiss_kappa([[1, 2], [2, 2]]))


def test_unanimous_agreement_options():
    assert percent_agreement(M, kind="unanimous") == pytest.approx(3 / 5)
    assert percent_agreement(M, kind="unanimous", missing="listwise") == pytest.approx(1 / 3)
    assert percent_agreement(M, kind="unanimous", tolerance=1) == pytest.approx(4 / 5)
    assert percent_agreement(M, tolerance=1) >= percent_agreement(M)


def test_icc_form_names_are_equivalent():
    m = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    groups = [
        ("ICC(1,1)", "ICC(1)", "ICC1"),
        ("ICC(2,1)", "ICC(A,1)", "ICC2"),
        ("ICC(3,1)", "ICC(C,1)", "icc3"),
        ("ICC(1,k)", "ICC(k)", "ICC1k"),
        ("ICC(2,k)", "ICC(A,k)", "ICC2k"),
        ("ICC(3,k)", "ICC(C,k)", "ICC3K"),
    ]
    for names in groups:
        values = {icc(m, form=f) for f in names}
        assert len(values) == 1, names


def test_rank_inputs():
    x, y = [3.0, 1.0, 2.0, None, 5.0], [2.5, 0.5, 3.0, 1.0, 4.0]
    assert kendall_tau_b(x, y) == pytest.approx(kendall_tau_b([3, 1, 2, 5], [2.5, 0.5, 3, 4]))
    assert spearman_rho(np.column_stack([[3, 1, 2, 5], [2.5, 0.5, 3, 4]])) == pytest.approx(
        spearman_rho([3, 1, 2, 5], [2.5, 0.5, 3, 4])
    )
    with pytest.raises(AgreementInputError, match="entries"):
        kendall_tau_b([1, 2], [1, 2, 3])
    # rbo: uneven lists, depth truncation, average overlap at a given depth
    # extrapolation assumes the shorter list goes on agreeing (Webber et al. 2010, sec. 4.2)
    assert rbo(list("abcdefg"), list("abc"), p=0.9) == pytest.approx(1.0)
    assert rbo(list("abcdefg"), list("abd"), p=0.9) < 1.0
    assert rbo(list("abcdefg"), list("abcxyz"), depth=3) == pytest.approx(1.0)
    assert rbo(list("abcd"), list("dcba"), kind="average_overlap", depth=2) == pytest.approx(0.0)
    # normalized rank position: top-2 of the reference
    assert normalized_rank_position([4, 3, 2, 1], [1, 2, 3, 4], k=2) == pytest.approx(
        (1.0 + 2 / 3) / 2
    )
    assert normalized_rank_position([1, 2, 3, 4], [1, 2, 3, 4], descending=False) == 0.0


def test_intra_rater_from_pairs_and_weights():
    pairs = [[1, 1], [2, 3], [3, 3], [1, 2], [2, 2]]
    assert intra_rater_agreement(pairs) == pytest.approx(3 / 5)
    assert intra_rater_agreement(pairs, tolerance=1) == 1.0
    assert intra_rater_agreement(pairs, kind="kappa") == pytest.approx(cohen_kappa(pairs))
    assert intra_rater_agreement(pairs, kind="kappa", weights="quadratic") == pytest.approx(
        cohen_kappa(pairs, weights="quadratic")
    )
