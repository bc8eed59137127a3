"""issue 17: `raterstats.analyze` and `raterstats analyze FILE`: the demo's whole analysis on
any ratings, each section deciding from the data whether it applies and saying why not;
results from a fit carry its health (warning banners, point-estimate notes, predictive
checks in words). Fast: EM / MAP fits or very short NUTS runs on tiny simulated studies."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import xarray as xr
from typer.testing import CliRunner

from raterstats.analyze import (
    SECTIONS,
    AnalyzeOptions,
    Scheme,
    Section,
    analyze,
    banners,
    plan_models,
    ppc_lines,
)
from raterstats.cli import app
from raterstats.models import MACE, OrdinalRaters
from raterstats.simulate import archehr_like_study, clinical_qa_study

runner = CliRunner()


def headings(report: Path) -> list[str]:
    return re.findall(r"^(#{1,3} .+)$", report.read_text(), flags=re.MULTILINE)


def files_listed(report: Path) -> list[str]:
    files = report.read_text().split("## Files", 1)[1]
    return re.findall(r"^- \[`([^`]+)`\]\(\1\)$", files, flags=re.MULTILINE)


@pytest.fixture(scope="module")
def nominal(tmp_path_factory):
    """A categorical study without systems: one design, no repeats, no rater kinds."""
    r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    r = r.derive(r.data.drop("system", "question"), step="no systems")
    out = tmp_path_factory.mktemp("nominal")
    return analyze(r, out, options=AnalyzeOptions(method="em", n_boot=50))


@pytest.fixture(scope="module")
def ordinal(tmp_path_factory):
    """The tiny clinical-QA study (two designs, repeats, an LLM judge): MAP / EM fits."""
    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    out = tmp_path_factory.mktemp("ordinal")
    options = AnalyzeOptions(
        method="map",
        fit_settings={"mace": {"method": "em"}},
        collapse="likert5_to_3",
        n_boot=50,
        design_projections=False,
    )
    return analyze(r, out, options=options)


def test_nominal_study_without_systems_skips_what_does_not_apply(nominal):
    assert nominal.sections == ["data", "agreement", "categorical"]
    skipped = nominal.skipped
    assert set(skipped) == {"gold", "ordinal", "rankings", "designs", "intra_rater", "judges"}
    assert skipped["gold"] == "the data have no gold column"
    assert "no system column" in skipped["rankings"]
    assert "one annotation design" in skipped["designs"]
    assert "not on an ordinal scale" in skipped["ordinal"]
    assert "no repeated ratings" in skipped["intra_rater"]
    assert "no rater_kind column" in skipped["judges"]
    heads = headings(nominal.report)
    assert "## Categorical rater model: MACE" in heads
    assert "## Ordinal rater model" not in heads and "## System rankings" not in heads
    text = nominal.report.read_text()
    listed = text.split("## Sections not included", 1)[1].split("## Methods", 1)[0]
    for title in ("Ordinal rater model", "System rankings", "Annotation designs"):
        assert f"**{title}**" in listed
    # nominal scale: nominal statistics only, no ordinal alpha
    table = pl.read_csv(nominal.out / "agreement.csv")
    assert "krippendorff_alpha (level=nominal)" in table["statistic"].to_list()
    assert not table["statistic"].str.contains("ordinal").any()
    assert "intra_rater_agreement" not in table["statistic"].to_list()


def test_ordinal_study_runs_every_section(ordinal):
    # every section but the gold check (the study has no gold labels)
    assert ordinal.sections == [s.key for s in SECTIONS if s.key != "gold"]
    assert ordinal.skipped == {"gold": "the data have no gold column"}
    text = ordinal.report.read_text()
    listed = text.split("## Sections not included", 1)[1].split("## Methods", 1)[0]
    assert "the data have no gold column" in listed
    table = pl.read_csv(ordinal.out / "agreement.csv")
    stats = set(table["statistic"].to_list())
    # ordinal 5-point scale: nominal and ordinal / interval versions, and repeats
    assert {"krippendorff_alpha (level=ordinal)", "krippendorff_alpha (level=interval)"} <= stats
    assert {"randolph_kappa", "gwet_ac2", "intra_rater_agreement"} <= stats
    assert set(table["design"].to_list()) == {"coarse", "fine"}
    for part in ("## Ordinal rater model", "## System rankings", "## Annotation designs",
                 "## Intra-rater reliability (repeats)", "## LLM judges"):  # fmt: skip
        assert part in headings(ordinal.report)
    assert pl.read_csv(ordinal.out / "judge_agreement.csv")["judge"].unique().to_list() == [
        "llm-judge"
    ]


def test_point_estimates_say_so_and_never_show_an_interval_as_certainty(ordinal):
    text = ordinal.report.read_text()
    ranking = text.split("## System rankings", 1)[1].split("\n## ", 1)[0]
    assert "> **Note:** Computed from a MAP point estimate" in ranking
    designs = text.split("## Annotation designs", 1)[1].split("\n## ", 1)[0]
    assert "No posterior predictive check of agreement: the fit is a point estimate" in designs
    # the categorical design comparison reuses the categorical section's fit (the designs as
    # rated), whose health that section states: not said twice
    cat = designs.split("### Designs compared by the categorical model", 1)[1].split("###")[0]
    assert "the designs as rated" in cat and "**Fit health:**" not in cat
    mace = text.split("## Categorical rater model", 1)[1].split("\n## ", 1)[0]
    assert "### Rater competence (point estimate)" in mace
    competence = mace.split("### Rater competence", 1)[1].split("###", 1)[0]
    assert "[" not in competence.replace("\\[", "")  # no interval columns
    # the ordinal MAP: the tables that depend on the latent scales say they are inflated at
    # the mode; the rater separation, which needs a posterior variance, is not computed
    ordinal_sec = text.split("## Ordinal rater model", 1)[1].split("\n## ", 1)[0]
    for title in ("### System fair averages", "### Model-implied reliability"):
        part = ordinal_sec.split(title, 1)[1].split("###", 1)[0]
        assert "> **Note:** Computed from a MAP point estimate" in part
        assert "scales at this mode are inflated" in part, title
    length = ordinal_sec.split("### Length effect", 1)[1].split("###", 1)[0]
    assert "inflated" not in length
    raters = ordinal_sec.split("### Rater table", 1)[1].split("###", 1)[0]
    assert "separation reliability per dimension and design: not computed" in raters
    assert "nan" not in raters


def test_report_files_scales_and_links(ordinal, nominal):
    for res in (ordinal, nominal):
        written = sorted(p.name for p in res.out.iterdir() if p.suffix in (".csv", ".png"))
        listed = files_listed(res.report)
        assert sorted(n for n in listed if n.endswith((".csv", ".png"))) == written
        text = res.report.read_text()
        assert "Scale(" not in text  # scales as a person writes them
        assert "MODELS.md" not in text and "ARCHITECTURE.md" not in text
        page = res.html.read_text()
        for name in listed:
            if name.endswith(".csv"):
                assert f'href="{name}"' in page, name
    summary = ordinal.report.read_text().split("### Scales", 1)[1].split("###", 1)[0]
    shown = html.unescape(summary.replace("\\", ""))
    assert "- correctness: ordinal 1-5 (5 levels: 1 = Disagree, 2 = Partially disagree" in shown


def test_a_failing_fit_puts_a_warning_banner_above_its_tables(tmp_path):
    r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    options = AnalyzeOptions(
        draws=20, tune=20, chains=2, n_boot=20, score_map="yes_partially_no",
        skip=("agreement",),
    )  # fmt: skip
    res = analyze(r.filter(dimension="answers_question"), tmp_path, options=options)
    dt = next(iter(res.fits.values()))
    assert dt.attrs["health_ok"] == 0  # 2 x 20 draws cannot pass ESS >= 400
    text = res.report.read_text()
    mace = text.split("## Categorical rater model", 1)[1].split("\n## ", 1)[0]
    assert "**Fit health:** the fit FAILS its checks" in mace
    for part in ("### Rater competence", "### Inferred labels", "### Does the model reproduce"):
        block = mace.split(part, 1)[1]
        assert block.lstrip("\n").split("\n", 2)[1].startswith("> **Warning:**") or (
            "> **Warning:**" in block.split("|", 1)[0]
        ), part
    ranking = text.split("## System rankings", 1)[1].split("\n## ", 1)[0]
    assert "> **Warning:**" in ranking.split("|", 1)[0]
    assert "left out by the options (skip)" in res.skipped["agreement"]
    # the predictive check is read in words, never a bare p-value
    ppc = mace.split("### Does the model reproduce the observed agreement?", 1)[1]
    assert "reproduce" in ppc and "ppp" not in ppc


def test_banners_take_the_results_texts_and_the_fits_health():
    ds = xr.Dataset(attrs={"fit_warning": "74 divergences", "uncertainty_note": "bootstrap"})
    assert banners(ds, ds) == ["> **Warning:** 74 divergences", "", "> **Note:** Bootstrap", ""]
    assert banners(xr.Dataset()) == []
    post = xr.Dataset({"mu": (("chain", "draw"), np.zeros((2, 10)))})
    fit = xr.DataTree(children={"posterior": xr.DataTree(post)})
    fit.attrs.update(health_ok=0, health="FAILS: 3 divergences", method="nuts")
    lines = banners(fit)
    assert lines[0].startswith("> **Warning:** Computed from a fit that failed")
    assert "3 divergences" in lines[0]


@pytest.mark.parametrize(
    ("observed", "words"),
    [
        (0.8, "the model reproduces"),
        (0.96, "the model under-predicts agreement"),
        (0.5, "the model over-predicts agreement"),
    ],
)
def test_predictive_checks_are_read_in_words(observed, words):
    """issue 17: posterior predictive checks are sentences with their direction, never a
    bare p-value."""
    ds = xr.Dataset(
        {
            "kappa_observed": (("dimension", "design"), [[observed]]),
            "kappa": (
                ("replicate", "dimension", "design"),
                np.linspace(0.7, 0.9, 41)[:, None, None],
            ),
        },
        coords={"dimension": ["safety"], "design": ["coarse"]},
    )
    (line,) = ppc_lines(ds, ci_prob=0.9)
    assert line.startswith("- safety, coarse: ") and words in line
    assert "ppp" not in line and "p-value" not in line


def test_options_are_checked_with_every_problem():
    with pytest.raises(ValueError, match="unknown model") as err:
        AnalyzeOptions(models=("mace", "no_such"), draws=0, ci=2.0, collapse="5to3")
    msg = str(err.value)
    assert "draws must be an integer >= 1" in msg and "ci must be a probability" in msg
    assert "unknown collapse '5to3'" in msg
    with pytest.raises(ValueError, match="is not laid out by analyze"):
        AnalyzeOptions(models=("length_effect",))
    with pytest.raises(ValueError, match="unknown setting"):
        AnalyzeOptions(fit_settings={"ordinal": {"draw": 5}})
    with pytest.raises(ValueError, match=r"target_accept must be a number in \(0, 1\)"):
        AnalyzeOptions(fit_settings={"ordinal": {"target_accept": 1.5}})
    with pytest.raises(ValueError, match=r"adaptation 'dense' is not one of"):
        AnalyzeOptions(fit_settings={"mace": {"adaptation": "dense"}})
    assert AnalyzeOptions(fit_settings={"mace": {"adaptation": "diag"}}).settings_for(MACE) == {
        "adaptation": "diag"
    }
    ok = AnalyzeOptions(fit_settings={"ordinal": {"target_accept": 0.95, "tune": 2000}})
    assert ok.settings_for(OrdinalRaters) == {"target_accept": 0.95, "tune": 2000}
    with pytest.raises(ValueError, match="unknown segment rule"):
        AnalyzeOptions(schemes=(Scheme("s", segment_rules="sometimes"),))
    assert AnalyzeOptions(models=("ds", "ordinal")).models == ("dawid_skene", "ordinal_raters")
    given = AnalyzeOptions(model_options={"MACE": {"centred": "raters"}})
    assert (
        given.options_for(MACE) == {"centred": "raters"} and given.options_for(OrdinalRaters) == {}
    )
    with pytest.raises(ValueError, match="model_options") as err:
        AnalyzeOptions(
            model_options={
                "mace": {"centered": True},
                "ordinal": {"link": "cauchit"},
                "dawid_skene": {"use_gold": True},
                "glad": "fast",
            }
        )
    msg = str(err.value)
    assert (
        "model_options['mace']: unknown option(s) ['centered']; MACE takes ['centred', "
        "'hierarchical', 'repeats'] (did you mean 'centred'?)" in msg
    )
    assert "model_options['ordinal']: link must be 'logit' or 'probit'" in msg
    assert "model_options['dawid_skene']: use_gold is not an option of the analysis" in msg
    assert "model_options['glad'] must be a mapping" in msg


def test_analyze_refuses_before_any_work(tmp_path):
    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    with pytest.raises(ValueError, match="ordinal_raters has no method 'em'"):
        analyze(r, tmp_path / "a", options=AnalyzeOptions(method="em"))
    with pytest.raises(ValueError, match=r"unknown section\(s\) \['ranking'\].*'rankings'"):
        analyze(r, tmp_path / "b", options=AnalyzeOptions(skip=("ranking",)))
    with pytest.raises(TypeError, match="expected Ratings"):
        analyze(r.data, tmp_path / "c")  # type: ignore[arg-type]
    assert not (tmp_path / "a").exists()


def test_model_plan_follows_the_scales():
    ordinal = clinical_qa_study(n_questions=4, random_seed=1).ratings
    planned, why = plan_models(ordinal, AnalyzeOptions())
    assert [c.__name__ for c in planned["ordinal"]] == ["OrdinalRaters"]
    assert "collapse" in why["categorical"]
    planned, _ = plan_models(ordinal, AnalyzeOptions(collapse="likert5_to_3"))
    assert [c.__name__ for c in planned["categorical"]] == ["MACE"]
    planned, why = plan_models(ordinal, AnalyzeOptions(models=()))
    assert planned == {} and "no ordinal model among the models asked" in why["ordinal"]


def test_the_section_list_is_extended_by_one_entry(tmp_path):
    r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings

    def extra(ctx):
        ctx.folder.csv(pl.DataFrame({"n": [ctx.ratings.n_ratings]}), "extra.csv")
        return ["## Extra", "", "counted", ""]

    sections = (*SECTIONS, Section("extra", "Extra", lambda ctx: None, extra))
    res = analyze(r, tmp_path, options=AnalyzeOptions(models=(), n_boot=0), sections=sections)
    assert res.sections[-1] == "extra" and "extra.csv" in files_listed(res.report)


def _csv(tmp_path: Path) -> Path:
    r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    frame = (
        r.data.filter(pl.col("dimension") == "answers_question")
        .select("item", "rater", "rating", "system")
        .rename({"item": "answer_id", "rater": "annotator", "rating": "label", "system": "model"})
    )
    path = tmp_path / "ratings.csv"
    frame.write_csv(path)
    return path


def test_cli_analyze_with_options_and_a_study_file(tmp_path):
    path = _csv(tmp_path)
    out = tmp_path / "report"
    res = runner.invoke(
        app,
        ["analyze", str(path), "-c", "item=answer_id", "-c", "system=model",
         "-s", "yes-partially-no", "--method", "em", "--n-boot", "20",
         "--score-map", "yes_partially_no", "--model-option", "mace.hierarchical=false",
         "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    methods = (out / "report.md").read_text().split("## Methods", 1)[1]
    assert "hierarchical=False" in methods and "hierarchical=None" not in methods
    assert f"Report written to {(out / 'report.md').resolve()}" in res.output
    assert "analyze: note: the MACE fit is a point estimate (EM)" in res.output
    assert "Sections: data, agreement, categorical, rankings" in res.output
    assert "Not included: designs:" in res.output
    assert (out / "report.html").is_file()
    study = tmp_path / "study.toml"
    study.write_text(
        'data = "ratings.csv"\nscale = "yes-partially-no"\n'
        '[columns]\nitem = "answer_id"\nsystem = "model"\n'
        '[analyze]\nout = "from-study"\nmodels = ["mace"]\nmethod = "em"\nn_boot = 10\n'
        'skip = ["rankings"]\ntitle = "Study | file"\n'
        "model_options = { mace = { hierarchical = false } }\n"
    )
    res = runner.invoke(app, ["analyze", "--study", str(study)])
    assert res.exit_code == 0, res.output
    report = (tmp_path / "from-study" / "report.md").read_text()
    assert "hierarchical=False" in report.split("## Methods", 1)[1]
    assert report.startswith("# Study \\| file")
    assert "left out by the options (skip)" in report


def test_cli_analyze_says_what_failed_once(tmp_path):
    """issue 17: a fit that fails its checks gives one `analyze: warning:` line naming what
    failed (not a second, Python-warning copy of it), and the report flags the tables."""
    path = _csv(tmp_path)
    out = tmp_path / "report"
    res = runner.invoke(
        app,
        ["analyze", str(path), "-c", "item=answer_id", "-c", "system=model",
         "-s", "yes-partially-no", "--draws", "30", "--tune", "30", "--chains", "2",
         "--n-boot", "10", "--skip", "rankings", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if "convergence checks" in ln]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("analyze: warning: the MACE fit fails its convergence checks (NUTS")
    assert "ConvergenceWarning" not in res.stderr
    assert "> **Warning:**" in (out / "report.md").read_text()


def test_cli_analyze_usage_errors(tmp_path):
    path = _csv(tmp_path)
    base = ["analyze", str(path), "-c", "item=answer_id", "-s", "yes-partially-no"]
    res = runner.invoke(app, [*base, "--skip", "ranking", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "did you mean 'rankings'" in res.output
    res = runner.invoke(app, [*base, "--model", "ordinal", "--method", "em"])
    assert res.exit_code == 2 and "ordinal_raters has no method 'em'" in res.output
    res = runner.invoke(app, [*base, "--model-option", "mace.centred=sometimes"])
    assert res.exit_code == 2 and "model_options['mace']: centred must be" in res.output
    res = runner.invoke(app, [*base, "--model-option", "centred=raters"])
    assert res.exit_code == 2 and "--model-option takes MODEL.OPTION=VALUE" in res.output
    study = tmp_path / "bad.toml"
    study.write_text(
        '[analyze]\nmodels = ["nope"]\nprojections = "yes"\n'
        "model_options = { mace = 3, ordinal = { centred = true } }\n"
    )
    res = runner.invoke(app, [*base, "--study", str(study)])
    assert res.exit_code == 2
    assert "[analyze] models" in res.output and "[analyze] projections" in res.output
    assert "[analyze] model_options" in res.output
    assert "the options of 'mace' must be a table" in " ".join(res.output.split())


def test_user_strings_are_escaped_in_every_section(tmp_path):
    """House rule: every user string escaped (dimension, design, system and rater ids)."""
    from raterstats import OrdinalScale, read_ratings

    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    bad = {"fine": "fi|ne <b>x</b>", "safety": "sa|fe <i>y</i>", "llm-a": "sys|<u>a</u>"}
    frame = r.data.select(
        "item", "segment", "rater", "dimension", "design", "rating", "system", "question",
        "rater_kind", "repeat",
    ).with_columns(pl.col("design", "dimension", "system").replace(bad))  # fmt: skip
    hostile = read_ratings(frame, scale=OrdinalScale.likert(5))
    options = AnalyzeOptions(models=(), n_boot=0, collapse="likert5_to_3")
    res = analyze(hostile, tmp_path, options=options)
    assert "designs" in res.sections and "judges" in res.sections
    text = res.report.read_text()
    for raw in ("<b>", "<i>", "<u>"):
        assert raw not in text
    page = res.html.read_text()
    for raw in ("<b>x</b>", "<i>y</i>", "<u>a</u>"):
        assert raw not in page
    header = 0
    for line in text.splitlines():  # every table row has as many cells as its header
        cells = len(re.split(r"(?<!\\)\|", line)) if line.startswith("|") else 0
        if cells and not header:
            header = cells
        assert cells in (0, header), line
        header = header if cells else 0
    assert all(re.fullmatch(r"[\w.-]+", p.name) for p in res.out.iterdir())


def test_gold_labels_are_a_check_in_the_report(tmp_path):
    """issue 17: a file with a gold column is analysed without clamping gold; the report's
    gold section gives each model's accuracy against gold (below 1 where gold disagrees
    with the raters) beside the majority vote, as the CSV does."""
    from raterstats import NominalScale, read_ratings

    rng = np.random.default_rng(4)
    rows = []
    for i in range(30):
        truth = ["yes", "no"][i % 2]
        for rater in ("r1", "r2", "r3", "r4"):
            label = truth if rng.random() < 0.85 else ["yes", "no"][1 - i % 2]
            # gold contradicts the raters' truth on the first 6 items
            gold = truth if i >= 6 else ["yes", "no"][1 - i % 2]
            rows.append({"item": f"q{i}", "rater": rater, "rating": label, "gold": gold})
    r = read_ratings(pl.DataFrame(rows), scale=NominalScale(["yes", "no"]))
    res = analyze(r, tmp_path, options=AnalyzeOptions(models=("mace",), method="em", n_boot=20))
    assert "gold" in res.sections
    table = pl.read_csv(tmp_path / "gold_check.csv")
    assert table["n_gold"].to_list() == [30]
    acc = table["accuracy"].item()
    assert acc < 1  # gold was not clamped: the labels follow the raters
    assert acc == pytest.approx(24 / 30, abs=0.07)
    text = res.report.read_text()
    gold = text.split("## Accuracy against the gold labels", 1)[1].split("\n## ", 1)[0]
    assert "gold not used in the fit" in gold and "majority vote" in gold
    curve = pl.read_csv(tmp_path / "gold_coverage.csv")
    assert curve["coverage"].max() == 1.0
    assert curve.filter(pl.col("coverage") == 1.0)["coverage_accuracy"].item() == pytest.approx(acc)
