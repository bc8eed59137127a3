"""Degenerate input: defined answers (NaN with a reason, or an error listing problems),
never a ZeroDivisionError or a bare traceback."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

from raterstats.agreement import (
    AgreementInputError,
    DegenerateAgreementWarning,
    IncompleteDataWarning,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    fleiss_kappa_category,
    gwet_ac1,
    gwet_ac2,
    icc,
    intra_rater_agreement,
    kendall_tau_b,
    kendall_w,
    krippendorff_alpha,
    normalized_rank_position,
    percent_agreement,
    randolph_kappa,
    rbo,
    scott_pi,
    spearman_rho,
)

KAPPAS = [fleiss_kappa, scott_pi, conger_kappa, cohen_kappa]

ONE_CATEGORY = [[2, 2], [2, 2], [2, 2]]


@pytest.mark.parametrize("stat", KAPPAS, ids=lambda f: f.__name__)
def test_expected_agreement_one_is_nan_with_reason(stat):
    with pytest.warns(DegenerateAgreementWarning, match="expected \\(chance\\) agreement is 1"):
        value = stat(ONE_CATEGORY)
    assert math.isnan(value)


def test_alpha_with_identical_values_is_nan_with_reason():
    for level in ("nominal", "ordinal", "interval", "ratio"):
        with pytest.warns(DegenerateAgreementWarning, match="expected disagreement is 0"):
            assert math.isnan(krippendorff_alpha(ONE_CATEGORY, level=level))
    # a float value that is not exactly representable is still recognised as constant
    with pytest.warns(DegenerateAgreementWarning):
        assert math.isnan(krippendorff_alpha([[0.1, 0.1]] * 4, level="interval"))


def test_single_observed_category_with_declared_domain():
    # with a declared domain of two categories, free-marginal and AC1 are defined (= 1)
    assert randolph_kappa(ONE_CATEGORY, categories=[1, 2]) == 1.0
    assert gwet_ac1(ONE_CATEGORY, categories=[1, 2]) == 1.0
    # without it the domain has one category and the statistics are undefined
    with pytest.warns(DegenerateAgreementWarning, match="fewer than two categories"):
        assert math.isnan(gwet_ac1(ONE_CATEGORY))
    with pytest.warns(DegenerateAgreementWarning, match="fewer than two categories"):
        assert math.isnan(randolph_kappa(ONE_CATEGORY))
    assert percent_agreement(ONE_CATEGORY) == 1.0


ALL_MATRIX_STATS = [
    percent_agreement,
    fleiss_kappa,
    scott_pi,
    conger_kappa,
    randolph_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
]


@pytest.mark.parametrize("stat", ALL_MATRIX_STATS, ids=lambda f: f.__name__)
def test_one_rater_is_reported(stat):
    with pytest.warns(DegenerateAgreementWarning, match="fewer than two raters"):
        assert math.isnan(stat([[1], [2], [3]]))


@pytest.mark.parametrize("stat", ALL_MATRIX_STATS, ids=lambda f: f.__name__)
def test_no_unit_with_two_ratings(stat):
    with pytest.warns(DegenerateAgreementWarning, match="no unit has two or more ratings"):
        assert math.isnan(stat([[1, None], [None, 2], [3, None]]))


@pytest.mark.parametrize("stat", ALL_MATRIX_STATS, ids=lambda f: f.__name__)
def test_empty_and_all_missing_inputs(stat):
    for data in (np.zeros((0, 3)), [[None, None], [None, None]], np.full((3, 2), np.nan)):
        with pytest.warns(DegenerateAgreementWarning):
            assert math.isnan(stat(data))


def test_units_rated_once_do_not_break_anything():
    m = [[1, 1, None], [2, 2, 1], [3, None, None], [None, None, 2]]
    for stat in ALL_MATRIX_STATS:
        assert np.isfinite(stat(m))


def test_icc_and_w_report_listwise_deletion():
    m = [[1, 2, 3], [2, 3, 4], [5, 5, None], [4, 6, 7], [3, 3, 3]]
    with pytest.warns(IncompleteDataWarning, match="1 of 5 units"):
        value = icc(m, form="ICC(3,1)")
    assert value == pytest.approx(icc([r for r in m if None not in r], form="ICC(3,1)"))
    with pytest.warns(IncompleteDataWarning, match="1 of 5 units"):
        assert np.isfinite(kendall_w(m))


def test_icc_degenerate():
    with pytest.warns(DegenerateAgreementWarning, match="no variance"):
        assert math.isnan(icc([[3, 3], [3, 3], [3, 3]]))
    with pytest.warns(DegenerateAgreementWarning, match="fewer than two complete units"):
        assert math.isnan(icc([[3, 4]]))
    with pytest.warns(DegenerateAgreementWarning, match="fewer than two raters"):
        assert math.isnan(icc([[3], [4], [5]]))


def test_kendall_w_all_tied():
    with pytest.warns(DegenerateAgreementWarning, match="no variance"):
        assert math.isnan(kendall_w([[1, 1], [1, 1], [1, 1]]))
    assert kendall_w([[1, 1], [1, 1], [1, 1]], tie_correction=False) == 0.0


def test_rank_correlations_with_a_constant_side():
    with pytest.warns(DegenerateAgreementWarning):
        assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))
    with pytest.warns(DegenerateAgreementWarning):
        assert math.isnan(spearman_rho([1, 1, 1], [1, 2, 3]))
    with pytest.warns(DegenerateAgreementWarning):
        assert math.isnan(kendall_tau_b([1], [2]))
    with pytest.warns(DegenerateAgreementWarning):
        assert math.isnan(normalized_rank_position([1.0], [2.0]))
    with pytest.warns(DegenerateAgreementWarning):
        assert math.isnan(rbo([], ["a"]))


def test_fleiss_category_unused_category():
    with pytest.warns(DegenerateAgreementWarning, match=r"no rating uses \[3\]"):
        out = fleiss_kappa_category([[1, 1, 2], [2, 2, 2], [1, 2, 1]], categories=[1, 2, 3])
    assert isinstance(out, xr.DataArray)
    assert np.isnan(out.sel(category=3).item())
    assert np.all(np.isfinite(out.sel(category=[1, 2]).values))


def test_errors_list_every_problem():
    with pytest.raises(AgreementInputError) as err:
        percent_agreement([[1, 2]], kind="both", missing="some", tolerance=-1)
    assert len(err.value.problems) == 3
    with pytest.raises(AgreementInputError, match="exactly two raters"):
        cohen_kappa([[1, 2, 3], [1, 2, 2]])
    with pytest.raises(AgreementInputError, match="not among the declared categories"):
        fleiss_kappa([[1, 7], [2, 9]], categories=[1, 2, 3])
    with pytest.raises(AgreementInputError, match="mix kinds"):
        fleiss_kappa([[1, "a"], [2, "b"]])
    with pytest.raises(AgreementInputError, match="2-d"):
        fleiss_kappa([1, 2, 3])
    with pytest.raises(AgreementInputError, match="needs an order"):
        krippendorff_alpha([["a", "b"], ["b", "b"]], level="interval")
    with pytest.raises(AgreementInputError, match="needs an order"):
        cohen_kappa([["a", "b"], ["b", "b"]], weights="linear")
    with pytest.raises(AgreementInputError, match="shape"):
        fleiss_kappa([[1, 2], [2, 2]], weights=np.eye(3))
    with pytest.raises(AgreementInputError, match="ones on the diagonal"):
        fleiss_kappa([[1, 2], [2, 2]], weights=np.zeros((2, 2)))
    with pytest.raises(AgreementInputError, match="unknown form"):
        icc([[1, 2], [2, 3]], form="ICC(4,1)")
    with pytest.raises(AgreementInputError, match="p must lie in"):
        rbo(["a"], ["a"], p=1.0)
    with pytest.raises(AgreementInputError, match="more than once"):
        rbo(["a", "a"], ["a"])
    with pytest.raises(AgreementInputError, match="two columns"):
        intra_rater_agreement([[1, 2, 3]])
    with pytest.raises(AgreementInputError, match="non-negative"):
        krippendorff_alpha([[-1, 1], [2, 2]], level="ratio")
