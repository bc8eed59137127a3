"""issue 23: the design section compares the rating schemes as designs of one categorical
fit and says where that comparison agrees with the ordinal model's."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from raterstats.analyze.designs_categorical import (
    DECISIVE,
    agreement_with_ordinal,
    design_origin,
    verdict,
)


def _cmp(designs: list[str], p: dict[tuple[str, str], float], dims=("safety",)) -> xr.Dataset:
    arr = np.full((len(dims), len(designs), len(designs)), np.nan)
    for (a, b), v in p.items():
        arr[:, designs.index(a), designs.index(b)] = v
        arr[:, designs.index(b), designs.index(a)] = 1 - v
    return xr.Dataset(
        {"p_more_reliable": (("dimension", "design", "design_b"), arr)},
        coords={"dimension": list(dims), "design": designs, "design_b": designs},
    )


ORIGIN = {"coarse 3-point": "coarse", "fine 3-point": "fine", "fine binary": "fine"}
CAT = ["coarse 3-point", "fine 3-point", "fine binary"]


@pytest.mark.parametrize(
    ("p_ord", "p_cat", "expect"),
    [
        (0.97, 0.95, "agree: both favour the fine design"),
        (0.02, 0.03, "agree: both favour the coarse design"),
        (0.97, 0.04, "differ: the ordinal model favours fine, the categorical model coarse"),
        (0.60, 0.95, "no clear preference from the ordinal comparison"),
        (0.97, 0.50, "no clear preference from the categorical comparison"),
        (0.5, 0.5, "no clear preference from the ordinal and the categorical comparison"),
    ],
)
def test_verdicts_of_the_two_comparisons(p_ord: float, p_cat: float, expect: str) -> None:
    ordinal = _cmp(["coarse", "fine"], {("fine", "coarse"): p_ord})
    pairs = {
        ("fine 3-point", "coarse 3-point"): p_cat,
        ("fine binary", "fine 3-point"): 0.5,
        ("fine binary", "coarse 3-point"): p_cat,
    }
    cat = _cmp(CAT, pairs)
    lines = agreement_with_ordinal(ordinal, cat, ORIGIN)
    # the two pairs of categorical designs from different rated designs; fine 3-point vs
    # fine binary come from one rated design and are not set beside the ordinal model
    assert len(lines) == 2
    assert all(expect in line for line in lines), lines
    assert all(
        f"ordinal P(coarse more reliable than fine) = {1 - p_ord:.2f}" in line for line in lines
    )
    assert not any("fine 3-point vs fine binary" in line for line in lines)


def test_a_dimension_or_design_the_ordinal_model_lacks_is_left_out() -> None:
    ordinal = _cmp(["coarse", "fine"], {("fine", "coarse"): 0.99}, dims=("relevance",))
    cat = _cmp(CAT, {("fine 3-point", "coarse 3-point"): 0.99})
    assert agreement_with_ordinal(ordinal, cat, ORIGIN) == []
    ordinal = _cmp(["coarse", "other"], {("other", "coarse"): 0.99})
    assert agreement_with_ordinal(ordinal, cat, ORIGIN) == []


def test_user_strings_are_escaped_in_the_verdict() -> None:
    designs = ["*a*", "b|c"]
    ordinal = _cmp(designs, {("*a*", "b|c"): 0.99})
    lines = agreement_with_ordinal(ordinal, ordinal, {d: d for d in designs})
    assert "\\*a\\*" in lines[0] and "b\\|c" in lines[0]


def test_verdict_threshold() -> None:
    assert verdict(DECISIVE, "a", "b") == "a"
    assert verdict(1 - DECISIVE, "a", "b") == "b"
    assert verdict(0.5, "a", "b") is None
    assert verdict(float("nan"), "a", "b") is None


def test_design_origin_follows_the_schemes() -> None:
    from types import SimpleNamespace

    from raterstats.analyze import Scheme

    ctx = SimpleNamespace(options=SimpleNamespace(schemes=(
        Scheme("coarse 3-point", design="coarse"), Scheme("fine binary", design="fine"),
        Scheme("pooled", design=None))))  # fmt: skip
    got = design_origin(ctx, ["coarse 3-point", "fine binary", "pooled", "as rated"])  # type: ignore[arg-type]
    assert got == {"coarse 3-point": "coarse", "fine binary": "fine", "as rated": "as rated"}


@pytest.fixture(scope="module")
def schemes_report(tmp_path_factory):
    """The tiny clinical-QA study read under the demo's three schemes, MACE by EM and the
    ordinal model by MAP (point estimates), with the design projections."""
    from raterstats.analyze import AnalyzeOptions, analyze
    from raterstats.demo.run import DEMO_SCHEMES
    from raterstats.simulate import clinical_qa_study

    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    options = AnalyzeOptions(
        method="map",
        fit_settings={"mace": {"method": "em"}},
        collapse="likert5_to_3",
        schemes=DEMO_SCHEMES,
        n_boot=20,
        skip=("rankings", "intra_rater", "judges"),
    )
    return analyze(r, tmp_path_factory.mktemp("schemes"), options=options)


def test_the_schemes_are_compared_as_designs_of_one_categorical_fit(schemes_report):
    import polars as pl

    text = schemes_report.report.read_text()
    designs = text.split("## Annotation designs", 1)[1].split("\n## ", 1)[0]
    part = designs.split("### Designs compared by the categorical model", 1)[1]
    assert "MACE (schemes: coarse 3-point, fine 3-point, fine binary)" in part
    # a point estimate: no intervals, no predictive check, no side-by-side verdicts
    assert "point estimates: no posterior uncertainty" in part
    assert "not set side by side: the categorical fit is a point estimate" in part
    # a fit of its own: its health is said here, as under each model section
    intro = part.split("![Rater kappa", 1)[0]
    assert "**Fit health:** a point estimate" in intro and "EM" in intro.split("```", 2)[1]
    table = pl.read_csv(schemes_report.out / "design_comparison_categorical.csv")
    cells = {(d, g): k for d, g, k in table.select("dimension", "design", "n_categories").rows()}
    for dim in ("correctness", "relevance", "safety"):
        assert cells[(dim, "coarse 3-point")] == 3
        assert cells[(dim, "fine 3-point")] == 3
        assert cells[(dim, "fine binary")] == 2
    assert table["reliability"].is_between(-1, 1).all()
    # the combined fit is one of the analysis's fits (methods, warnings)
    assert "MACE (schemes: coarse 3-point, fine 3-point, fine binary)" in schemes_report.fits
    budget = pl.read_csv(schemes_report.out / "annotation_budget_categorical.csv")
    assert set(budget["design"].unique().to_list()) == {
        "coarse 3-point",
        "fine 3-point",
        "fine binary",
    }
    assert "#### Annotation budget from the categorical model" in part
    assert (schemes_report.out / "reliability_by_design_categorical.png").is_file()


def test_without_a_categorical_model_the_section_says_why(tmp_path):
    from raterstats.analyze import AnalyzeOptions, analyze
    from raterstats.simulate import clinical_qa_study

    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    options = AnalyzeOptions(
        method="map",
        n_boot=20,
        design_projections=False,
        skip=("rankings", "intra_rater", "judges"),
    )
    res = analyze(r, tmp_path, options=options)
    designs = res.report.read_text().split("## Annotation designs", 1)[1].split("\n## ", 1)[0]
    part = designs.split("### Designs compared by the categorical model", 1)[1]
    assert "No categorical comparison of the designs:" in part
    assert "collapse" in part  # the reason names how to get a categorical model


def test_rater_table_of_a_schemes_fit_leaves_out_cells_without_ratings(tmp_path):
    """A fit of combine_schemes' table has (label space, design) cells no rating falls in
    (prior only): the rater table and its CSV leave them out rather than show NaN or prior
    values as results."""
    import polars as pl

    from raterstats.analyze import AnalyzeOptions, analyze
    from raterstats.demo.run import DEMO_SCHEMES
    from raterstats.design import combine_schemes
    from raterstats.simulate import clinical_qa_study

    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    both = combine_schemes({s.name: s.apply(r) for s in DEMO_SCHEMES})
    options = AnalyzeOptions(
        models=("mace",),
        method="em",
        n_boot=20,
        skip=("agreement", "rankings", "designs", "intra_rater", "judges"),
    )
    res = analyze(both, tmp_path, options=options)
    table = pl.read_csv(tmp_path / "mace_competence.csv")
    cells = set(table.select("dimension", "design").unique().iter_rows())
    assert ("correctness (fine binary)", "fine binary") in cells
    assert ("correctness (fine binary)", "coarse 3-point") not in cells
    assert ("correctness", "fine binary") not in cells
    section = res.report.read_text().split("### Rater competence", 1)[1].split("###", 1)[0]
    assert "nan" not in section.lower()
