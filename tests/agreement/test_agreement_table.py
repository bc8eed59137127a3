"""agreement(): per dimension x design estimates with item-cluster bootstrap intervals, on the
real Ratings of the built-in study; and agreement_table()'s tidy frame."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest
import xarray as xr

from raterstats import read_ratings
from raterstats.agreement import (
    AGREEMENT_STATISTICS,
    AgreementInputError,
    DegenerateAgreementWarning,
    NotApplicableWarning,
    agreement,
    agreement_table,
    fleiss_kappa,
    icc,
    intra_rater_agreement,
    kendall_w,
    krippendorff_alpha,
    percent_agreement,
    randolph_kappa,
)
from raterstats.agreement import kernels as K
from raterstats.agreement.data import encode_matrix, encode_ratings
from raterstats.agreement.estimator import REGISTRY, evaluate
from raterstats.agreement.table import bootstrap_replicates
from raterstats.simulate import clinical_qa_study

FINE_BINARY = {"correctness": "any_negative", "relevance": "any_positive", "safety": "any_positive"}


@pytest.fixture(scope="module")
def study():
    return clinical_qa_study(n_questions=12, random_seed=7).ratings.filter(rater_kind="human")


@pytest.fixture(scope="module")
def result(study):
    return agreement(
        study,
        ["percent_agreement", "fleiss_kappa", "randolph_kappa", "krippendorff_alpha"],
        n_boot=200,
        random_seed=11,
    )


def test_dims_variables_and_coordinates(result, study):
    assert isinstance(result, xr.Dataset)
    assert result["estimate"].dims == ("statistic", "dimension", "design")
    for var in ("estimate", "ci_low", "ci_high", "n_items", "n_raters"):
        assert var in result
    assert result.coords["dimension"].values.tolist() == list(study.dimensions)
    assert result.coords["design"].values.tolist() == list(study.designs)
    assert np.all(np.isfinite(result["estimate"].values))
    assert np.all(result["ci_low"].values <= result["ci_high"].values)
    assert np.all(result["n_boot_valid"].values == 200)
    assert result.attrs["n_boot"] == 200


def test_estimates_equal_the_functions_on_each_cell(result, study):
    for dim in study.dimensions:
        for design in study.designs:
            cell = study.filter(dimension=dim, design=design)
            got = result["estimate"].sel(dimension=dim, design=design)
            assert got.sel(statistic="fleiss_kappa").item() == pytest.approx(fleiss_kappa(cell))
            assert got.sel(statistic="randolph_kappa").item() == pytest.approx(randolph_kappa(cell))
            assert got.sel(statistic="percent_agreement").item() == pytest.approx(
                percent_agreement(cell)
            )
            # the scale is ordinal, so alpha defaults to the ordinal metric
            assert got.sel(statistic="krippendorff_alpha").item() == pytest.approx(
                krippendorff_alpha(cell, level="ordinal")
            )


def test_counts_and_unit_level(result, study):
    coarse = study.filter(design="coarse", dimension="safety")
    fine = study.filter(design="fine", dimension="safety")
    n_items_coarse = coarse.data.get_column("item").n_unique()
    assert result["unit_level"].sel(dimension="safety", design="coarse").item() == "item"
    assert result["unit_level"].sel(dimension="safety", design="fine").item() == "segment"
    cell = result.sel(dimension="safety", statistic="fleiss_kappa")
    assert cell["n_items"].sel(design="coarse").item() == n_items_coarse
    # sentence-level: units are segments, clusters (items) are answers
    n_seg = fine.data.filter(~pl.col("repeat")).select("item", "segment").unique().height
    assert cell["n_units"].sel(design="fine").item() == n_seg
    assert cell["n_items"].sel(design="fine").item() == fine.data.get_column("item").n_unique()
    first = study.filter(design="coarse", dimension="safety").data.filter(~pl.col("repeat"))
    assert cell["n_ratings"].sel(design="coarse").item() == first.height
    assert cell["n_raters"].sel(design="coarse").item() == first.get_column("rater").n_unique()


def test_same_seed_same_numbers_and_table_matches(study, result):
    again = agreement(
        study,
        ["percent_agreement", "fleiss_kappa", "randolph_kappa", "krippendorff_alpha"],
        n_boot=200,
        random_seed=11,
    )
    xr.testing.assert_identical(result, again)
    table = agreement_table(result)
    assert table.columns[:3] == ["statistic", "dimension", "design"]
    assert table.height == result["estimate"].size
    for row in table.iter_rows(named=True):
        at = result.sel(
            statistic=row["statistic"], dimension=row["dimension"], design=row["design"]
        )
        for var in ("estimate", "ci_low", "ci_high", "n_items", "n_raters"):
            assert row[var] == at[var].item()


def test_three_schemes_in_one_call(study):
    schemes = {
        "coarse 3-point": study.filter(design="coarse").collapse("likert5_to_3"),
        "fine 3-point": study.filter(design="fine").collapse("likert5_to_3"),
        "fine binary": study.filter(design="fine").aggregate_segments(FINE_BINARY),
    }
    ds = agreement(
        schemes, ["randolph_kappa", "fleiss_kappa"], by=["dimension"], n_boot=50, random_seed=3
    )
    assert ds["estimate"].dims == ("statistic", "scheme", "dimension")
    assert ds.coords["scheme"].values.tolist() == list(schemes)
    assert ds["unit_level"].sel(scheme="fine 3-point").values.tolist() == ["segment"] * 3
    assert ds["unit_level"].sel(scheme="fine binary").values.tolist() == ["item"] * 3
    for name, r in schemes.items():
        for dim in r.dimensions:
            want = randolph_kappa(r.filter(dimension=dim))
            got = ds["estimate"].sel(statistic="randolph_kappa", scheme=name, dimension=dim)
            assert got.item() == pytest.approx(want)
    # binary scale: q = 2 categories
    cell = schemes["fine binary"].filter(dimension="safety")
    assert randolph_kappa(cell) == pytest.approx(
        randolph_kappa(encode_ratings(cell).dense(), categories=[0, 1])
    )


def test_statistic_options_labels_and_errors(study):
    ds = agreement(
        study.filter(design="coarse"),
        {
            "alpha (nominal)": ("krippendorff_alpha", {"level": "nominal"}),
            "AC2": ("gwet_ac2", {"weights": "linear"}),
        },
        n_boot=0,
    )
    assert ds.coords["statistic"].values.tolist() == ["alpha (nominal)", "AC2"]
    assert np.all(np.isnan(ds["ci_low"].values))
    with pytest.raises(AgreementInputError) as err:
        agreement(study, ["no_such", ("fleiss_kappa", {"level": "x"})], n_boot=0)
    assert len(err.value.problems) == 2
    with pytest.raises(AgreementInputError, match="no 'shift' column"):
        agreement(study, ["fleiss_kappa"], by=["shift"], n_boot=0)
    # issue 17: a statistic that does not apply is a reason in its rows, not an error
    with pytest.warns(NotApplicableWarning, match="exactly two raters"):
        ds = agreement(study, ["cohen_kappa", "fleiss_kappa"], n_boot=0)
    assert np.all(np.isnan(ds["estimate"].sel(statistic="cohen_kappa").values))
    assert np.all(np.isfinite(ds["estimate"].sel(statistic="fleiss_kappa").values))
    assert "exactly two raters" in str(ds["reason"].sel(statistic="cohen_kappa")[0, 0].item())
    with pytest.raises(AgreementInputError, match="ci_prob"):
        agreement(study, ["fleiss_kappa"], ci_prob=1.5)


def test_group_split_gives_icc_and_w(study):
    # each group's three physicians rate all of the group's answers: complete per group
    coarse = study.filter(design="coarse", dimension="correctness")
    ds = agreement(
        coarse,
        ["icc", "kendall_w", ("icc", {"form": "ICC(3,k)"})],
        by=["group"],
        n_boot=30,
        random_seed=1,
    )
    assert ds["estimate"].dims == ("statistic", "group")
    for g in ds.coords["group"].values:
        cell = coarse.filter(group=str(g))
        assert ds["estimate"].sel(statistic="icc", group=g).item() == pytest.approx(icc(cell))
        assert ds["estimate"].sel(statistic="kendall_w", group=g).item() == pytest.approx(
            kendall_w(cell)
        )
        assert ds["n_boot_valid"].sel(statistic="kendall_w", group=g).item() == 30


def test_degenerate_cells_are_reported_once():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b", "c", "c", "d", "d"],
            "rater": ["x", "y"] * 4,
            "rating": [1, 1, 1, 1, 2, 1, 2, 2],
            "design": ["flat"] * 4 + ["varied"] * 4,
        }
    )
    r = read_ratings(frame)
    with pytest.warns(DegenerateAgreementWarning, match="design=flat"):
        ds = agreement(r, ["fleiss_kappa", "percent_agreement"], n_boot=20, random_seed=1)
    est = ds["estimate"].sel(dimension=ds.coords["dimension"].values[0])
    assert np.isnan(est.sel(statistic="fleiss_kappa", design="flat").item())
    assert est.sel(statistic="percent_agreement", design="flat").item() == 1.0
    assert "expected (chance) agreement is 1" in ds.attrs["undefined"]


def test_matrix_input_is_one_cell():
    ds = agreement(
        [[1, 1], [2, 2], [1, 2], [2, 2]],
        ["percent_agreement", "cohen_kappa"],
        n_boot=100,
        random_seed=0,
    )
    assert ds["estimate"].dims == ("statistic",)
    assert ds["estimate"].sel(statistic="percent_agreement").item() == 0.75


@pytest.mark.parametrize("name", AGREEMENT_STATISTICS)
def test_vectorised_bootstrap_equals_resampling_the_data(name):
    """Replicates from weighted per-item sums equal the statistic recomputed on resampled
    items (with segments: all sentences of a drawn answer come along)."""
    rng = np.random.default_rng(5)
    n_items, seg_per_item, raters = 9, 3, 3
    units = n_items * seg_per_item
    m = rng.integers(1, 4, size=(units, raters)).astype(float)
    m[rng.random(m.shape) < 0.15] = np.nan
    if name in ("icc", "kendall_w"):
        m = rng.integers(1, 6, size=(units, raters)).astype(float)
    if name in ("cohen_kappa", "intra_rater_agreement"):
        m = m[:, :2]
    coded = encode_matrix(m)
    cluster = np.repeat(np.arange(n_items), seg_per_item)
    coded = dataclasses.replace(coded, cluster=cluster, n_clusters=n_items)
    prepared = REGISTRY[name].prepare(coded)
    resamples = K.resample_counts(np.random.default_rng(1), n_items, 25, 10)
    fast = bootstrap_replicates(prepared, coded, resamples)
    order, starts = K.group_index(cluster, n_items)
    slow = []
    for block in resamples:
        for row in block:
            chosen = np.repeat(np.arange(n_items), row.astype(int))
            sub = coded.select_units(K.take_groups(order, starts, chosen))
            prepared_sub = REGISTRY[name].prepare(sub)
            slow.append(evaluate(prepared_sub, sub)[0])
    np.testing.assert_allclose(fast, np.asarray(slow), rtol=1e-9, atol=1e-12)


def test_intra_rater_agreement_from_ratings(study):
    cell = study.filter(dimension="safety", design="coarse")
    pairs = cell.repeat_pairs()
    same = (pairs.get_column("first") == pairs.get_column("repeat")).mean()
    assert intra_rater_agreement(cell) == pytest.approx(same)
    kappa = intra_rater_agreement(cell, kind="kappa")
    assert -1.0 <= kappa <= 1.0
    with pytest.raises(AgreementInputError, match="dimensions"):
        intra_rater_agreement(study.filter(design="coarse"))


def test_intra_rater_agreement_per_cell(study):
    stats = ["fleiss_kappa", "intra_rater_agreement", ("intra_rater_agreement", {"kind": "kappa"})]
    ds = agreement(study, stats, n_boot=100, random_seed=4)
    for dim in study.dimensions:
        for design in study.designs:
            cell = study.filter(dimension=dim, design=design)
            at = ds.sel(dimension=dim, design=design)
            assert at["estimate"].sel(statistic="intra_rater_agreement").item() == pytest.approx(
                intra_rater_agreement(cell)
            )
            assert at["estimate"].sel(
                statistic="intra_rater_agreement (kind=kappa)"
            ).item() == pytest.approx(intra_rater_agreement(cell, kind="kappa"))
            pairs = cell.repeat_pairs()
            intra = at.sel(statistic="intra_rater_agreement")
            assert intra["n_units"].item() == pairs.height
            assert intra["n_items"].item() == pairs.get_column("item").n_unique()
            assert intra["n_raters"].item() == pairs.get_column("rater").n_unique()
    # the intra-rater resamples are an independent stream: other intervals do not move
    alone = agreement(study, ["fleiss_kappa"], n_boot=100, random_seed=4)
    xr.testing.assert_equal(
        alone["ci_low"].sel(statistic="fleiss_kappa"),
        ds["ci_low"].sel(statistic="fleiss_kappa"),
    )


def test_nominal_scales_refuse_weights_and_categories_come_from_the_scale():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b", "c", "c"],
            "rater": ["x", "y"] * 3,
            "rating": ["yes", "no", "no", "no", "yes", "yes"],
        }
    )
    from raterstats import NominalScale

    r = read_ratings(frame, scale=NominalScale(["yes", "no"]))
    assert np.isfinite(fleiss_kappa(r))
    with pytest.raises(AgreementInputError, match="scale is nominal"):
        fleiss_kappa(r, weights="quadratic")
    with pytest.raises(AgreementInputError, match="scale is nominal"):
        krippendorff_alpha(r, level="interval")
    with pytest.raises(AgreementInputError, match="declares its categories"):
        fleiss_kappa(r, categories=["yes", "no", "maybe"])
    with pytest.raises(AgreementInputError, match="by:"):
        agreement(r, ["fleiss_kappa"], by=["source_row"], n_boot=0)


def test_items_with_a_single_rating_are_counted():
    frame = pl.DataFrame(
        {
            "item": ["a", "a", "b", "b", "c", "d", "d", "e"],
            "rater": ["x", "y", "x", "y", "x", "x", "y", "y"],
            "rating": [1, 1, 2, 1, 2, 2, 2, 1],
        }
    )
    ds = agreement(read_ratings(frame), ["fleiss_kappa", "icc"], n_boot=0)
    cell = ds.isel(dimension=0, design=0)
    assert cell["n_items"].sel(statistic="fleiss_kappa").item() == 3
    assert cell["n_items_excluded"].sel(statistic="fleiss_kappa").item() == 2
    assert cell["n_items_excluded"].sel(statistic="icc").item() == 2
    assert cell["n_ratings"].sel(statistic="fleiss_kappa").item() == 8
