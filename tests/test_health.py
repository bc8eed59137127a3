"""issue 17, "every result carries its health": the health every fit carries (attrs, one
ConvergenceWarning, the command line), diagnose's one line per variable, the fit_warning /
uncertainty_note of results computed from a fit, and posterior predictive checks in words.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import polars as pl
import pytest
import xarray as xr
from typer.testing import CliRunner

from raterstats import MACE, OrdinalRaters, item_posterior, rank_systems, rater_summary
from raterstats.cli import app
from raterstats.design import compare_designs
from raterstats.diagnostics import (
    ConvergenceWarning,
    Health,
    diagnose,
    fit_health,
    ppc_readout,
    ppc_readout_text,
)
from raterstats.ranking import rank_table
from raterstats.simulate import archehr_like_study

runner = CliRunner()

#: a short NUTS fit (2 chains x 30 draws) that fails its checks by design
SHORT = {"draws": 30, "tune": 30, "chains": 2, "random_seed": 1, "progress": False}


@pytest.fixture(scope="module")
def one_dim():
    """One yes / partially / no dimension of a small simulated ArchEHR-like study."""
    r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
    return r.filter(dimension="answers_question")


@pytest.fixture(scope="module")
def failing_fit(one_dim):
    """A MACE NUTS fit too short to converge, and the warnings its fit emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dt = MACE().fit(one_dim, **SHORT)
    return dt, caught


@pytest.fixture(scope="module")
def em_fit(one_dim):
    return MACE().fit(one_dim, method="em", random_seed=1)


def _convergence(caught):
    return [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def test_a_failing_nuts_fit_carries_its_health_and_warns_once(failing_fit):
    dt, caught = failing_fit
    assert dt.attrs["health_ok"] == 0
    health = fit_health(dt)
    assert isinstance(health, Health) and not health.ok and health.method == "nuts"
    assert str(health) == dt.attrs["health"] == health.text
    head = health.lines[0]
    assert head.startswith("NUTS (2 chain(s) x 30 draws) failed its convergence checks")
    for part in ("parameters fail R-hat <= 1.01 or ESS >= 400", "max R-hat", "min bulk ESS"):
        assert part in head
    # the worst variables, one line each, at most five (then a count of the others)
    shown = [line.strip() for line in health.lines if line.startswith("  ")]
    assert 1 <= len([s for s in shown if not s.startswith("...")]) <= 5
    variables = [s.split(" ")[0].rstrip(":") for s in shown if not s.startswith("...")]
    assert len(variables) == len(set(variables))
    # exactly one ConvergenceWarning, with the same text, pointing at the caller's fit
    (w,) = _convergence(caught)
    assert str(w.message) == health.text
    assert w.filename == __file__


def test_pytest_warns_catches_the_warning_despite_the_ignore_filter(one_dim):
    """The suite ignores ConvergenceWarning (pyproject: short fits do not converge by
    design); pytest.warns records it regardless."""
    with pytest.warns(ConvergenceWarning, match="failed its convergence checks") as rec:
        MACE().fit(one_dim, **SHORT)
    assert len([w for w in rec if issubclass(w.category, ConvergenceWarning)]) == 1


def test_ordinal_fit_warning_points_at_the_caller(tiny_study):
    """OrdinalRaters overrides fit: the warning still names the user's line."""
    with pytest.warns(ConvergenceWarning) as rec:
        dt = OrdinalRaters().fit(tiny_study.ratings, **SHORT)
    (w,) = [w for w in rec if issubclass(w.category, ConvergenceWarning)]
    assert w.filename == __file__
    assert dt.attrs["health_ok"] == 0


def test_point_estimates_and_approximations_say_what_they_are(em_fit, one_dim):
    h = fit_health(em_fit)
    assert h.ok and em_fit.attrs["health_ok"] == 1
    assert h.lines[0].startswith("EM point estimate")
    assert "no posterior uncertainty" in h.text
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a point estimate never warns
        dt = MACE().fit(one_dim, method="map", random_seed=1, progress=False)
    assert fit_health(dt).lines[0].startswith("MAP point estimate")


def test_fit_health_recomputes_for_fits_saved_without_it(failing_fit, em_fit, tmp_path):
    dt, _ = failing_fit
    for fit in (dt, em_fit):
        old = fit.copy()
        del old.attrs["health_ok"], old.attrs["health"]
        again = fit_health(old)
        assert again == fit_health(fit)
    # a reloaded file reads its attrs back
    path = tmp_path / "fit.nc"
    dt.to_netcdf(path)
    assert fit_health(xr.open_datatree(path)) == fit_health(dt)


def test_diagnose_lists_one_line_per_variable(failing_fit):
    dt, _ = failing_fit
    d = diagnose(dt, warn=False)
    failing_vars = d.parameters.filter(~pl.col("ok"))["variable"].unique().to_list()
    assert len(d.failing) > len(failing_vars) > 1  # many scalars in fewer variables
    var_lines = [p for p in d.problems if p.startswith("  ")]
    assert len(var_lines) == len(failing_vars)
    assert sorted(line.split()[0].rstrip(":") for line in var_lines) == sorted(failing_vars)
    text = str(d)
    # no scalar is named in the text: the failing list stays programmatic
    assert not any(name in text for name in d.failing if "[" in name)
    assert len(text.splitlines()) == len(d.problems) + 2  # heading, problems, extremes
    with pytest.warns(ConvergenceWarning) as rec:
        diagnose(dt)
    (w,) = [w for w in rec if issubclass(w.category, ConvergenceWarning)]
    message = str(w.message)
    assert len(message.splitlines()) == len(d.problems) + 1
    for v in failing_vars:
        assert len(re.findall(rf"^  {re.escape(v)}[ :]", message, flags=re.M)) == 1


def test_ranking_from_a_failing_fit_is_flagged(failing_fit, em_fit):
    dt, _ = failing_fit
    ds = rank_systems(dt, score_map="yes_partially_no", n_boot=0, random_seed=1)
    assert ds.attrs["fit_warning"].startswith("computed from a fit that failed")
    assert fit_health(dt).lines[0] in ds.attrs["fit_warning"]
    assert "uncertainty_note" not in ds.attrs  # posterior draws
    assert "fit_warning" not in rank_systems(em_fit, score_map="yes_partially_no").attrs
    # the other post-fit results carry it too
    assert "fit_warning" in item_posterior(dt).attrs
    assert "fit_warning" in rater_summary(dt).attrs


def test_point_estimate_rankings_say_they_have_no_posterior_uncertainty(em_fit, one_dim):
    one = rank_systems(em_fit, score_map="yes_partially_no", n_boot=0)
    assert one.attrs["n_draws"] == 1
    note = one.attrs["uncertainty_note"]
    assert "one draw of an EM point estimate" in note and "not certainty" in note
    # its zero-width intervals are never left as certainty: the verdicts say so too
    table = rank_table(one)
    assert (table["score_low"] == table["score_high"]).all()
    verdicts = one["verdict"].values.ravel()
    assert all("no uncertainty was estimated" in v for v in verdicts if v)
    boot = rank_systems(em_fit, score_map="yes_partially_no", n_boot=200, random_seed=1)
    note = boot.attrs["uncertainty_note"]
    assert "case-bootstrap percentile intervals (200 replicates" in note
    assert "EM point estimate" in note and "narrower than posterior intervals" in note
    assert (boot["score_high"] > boot["score_low"]).all()
    raw = rank_systems(one_dim, method="mean", score_map="yes_partially_no", n_boot=50)
    assert raw.attrs["uncertainty_note"].startswith("intervals are case-bootstrap percentile")
    assert "uncertainty_note" in item_posterior(em_fit).attrs


def test_compare_designs_is_flagged_and_reads_out_its_checks(tiny_ordinal_fit):
    ds = compare_designs(tiny_ordinal_fit, n_replicates=8, random_seed=1)
    assert "fit_warning" in ds.attrs  # one chain x 40 draws fails its checks
    lines = ds.attrs["ppc_readout"].splitlines()
    assert len(lines) == 2 * ds.sizes["dimension"] * ds.sizes["design"]
    assert all(
        re.search(r"the model (reproduces|under-predicts|over-predicts)", line)
        or line.split(": ", 1)[1].startswith("no check")
        for line in lines
    )


def _ppc(observed: float, replicates: np.ndarray) -> xr.Dataset:
    return xr.Dataset(
        {
            "observed": (("statistic", "dimension", "design"), [[[observed]]]),
            "replicated": (
                ("statistic", "dimension", "design", "replicate"),
                replicates[None, None, None],
            ),
        },
        coords={"statistic": ["randolph_kappa"], "dimension": ["safety"], "design": ["coarse"]},
        attrs={"ci_prob": 0.9},
    )


def test_ppc_readout_in_both_directions_and_when_reproduced():
    reps = np.linspace(0.51, 0.66, 31)
    ok = str(ppc_readout(_ppc(0.6, reps)).item())
    assert ok.startswith("the model reproduces Randolph's kappa (observed 0.60, predicted 0.59")
    assert "90% interval 0.52 to 0.65" in ok
    under = str(ppc_readout(_ppc(0.96, reps)).item())
    assert under.startswith(
        "the model under-predicts agreement: observed Randolph's kappa 0.96 lies above every "
        "replicate (predicted 0.59"
    )
    assert "too noisy for these data" in under
    over = str(ppc_readout(_ppc(0.2, reps)).item())
    assert over.startswith(
        "the model over-predicts agreement: observed Randolph's kappa 0.20 lies below every "
        "replicate"
    )
    assert "disagree more than its rater model allows" in over
    # outside the interval but not beyond every replicate
    edge = str(ppc_readout(_ppc(0.655, reps)).item())
    assert "lies above the 90% interval" in edge
    assert str(ppc_readout(_ppc(np.nan, reps)).item()).startswith("no check of Randolph's")
    # compare_designs' layout, as lines
    ds = xr.Dataset(
        {
            "kappa_observed": (("dimension", "design"), [[0.96, 0.6]]),
            "kappa": (("replicate", "dimension", "design"), np.stack([reps, reps], -1)[:, None]),
        },
        coords={"dimension": ["safety"], "design": ["coarse", "fine"]},
    )
    text = ppc_readout_text(ds, ci_prob=0.9).splitlines()
    assert text[0].startswith("safety, coarse: the model under-predicts agreement")
    assert text[1].startswith("safety, fine: the model reproduces Randolph's kappa")
    with pytest.raises(ValueError, match="expected a posterior predictive check"):
        ppc_readout(xr.Dataset({"x": ("a", [1.0])}))


# ------------------------------------------------------------------------ command line


@pytest.fixture(scope="module")
def cli_data(tmp_path_factory, one_dim):
    path = tmp_path_factory.mktemp("health") / "ratings.csv"
    one_dim.data.select("item", "rater", "rating", "dimension", "system", "question").write_csv(
        path
    )
    return path


def _fit_cli(data, out, *options):
    return runner.invoke(
        app, ["fit", str(data), "-s", "yes-partially-no", "--model", "mace", "--out", str(out),
              *options],
    )  # fmt: skip


def test_cli_fit_prints_the_health_and_rank_flags_the_ranking(cli_data, tmp_path):
    out = tmp_path / "short.nc"
    res = _fit_cli(cli_data, out, "--draws", "30", "--tune", "30", "--chains", "2")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("mace fitted by nuts in")
    assert lines[1].startswith("health: FAILED: NUTS (2 chain(s) x 30 draws) failed")
    assert "worst parameters, by variable:" in res.stdout
    assert "ConvergenceWarning" not in res.output  # printed as lines, not as a warning
    res = _fit_cli(cli_data, tmp_path / "again.nc", "--draws", "30", "--tune", "30", "--json")
    info = json.loads(res.stdout)
    assert info["health_ok"] == 0 and info["health_lines"][0].startswith("NUTS (4 chain(s)")
    res = runner.invoke(app, ["rank", "--fit", str(out), "--score-map", "yes_partially_no"])
    assert res.exit_code == 0, res.output
    assert "rank: warning: computed from a fit that failed its convergence checks" in res.stderr


def test_cli_rank_from_an_em_fit_notes_its_uncertainty(cli_data, tmp_path):
    out = tmp_path / "em.nc"
    res = _fit_cli(cli_data, out, "--method", "em")
    assert res.exit_code == 0, res.output
    assert "health: EM point estimate" in res.stdout
    res = runner.invoke(
        app, ["rank", "--fit", str(out), "--score-map", "yes_partially_no", "--n-boot", "0"]
    )
    assert res.exit_code == 0, res.output
    assert "rank: note: one draw of an EM point estimate" in res.stderr
    assert "rank: warning" not in res.stderr


def test_cli_designs_prints_the_readout_and_the_warning(tiny_ordinal_fit, tmp_path):
    path = tmp_path / "ordinal.nc"
    tiny_ordinal_fit.to_netcdf(path)
    res = runner.invoke(app, ["designs", "--fit", str(path), "--n-replicates", "5"])
    assert res.exit_code == 0, res.output
    assert "Posterior predictive checks:" in res.stdout
    assert re.search(r"the model (reproduces|under-predicts|over-predicts)", res.stdout)
    assert "designs: warning: computed from a fit that failed" in res.stderr
    res = runner.invoke(app, ["designs", "--fit", str(path), "--n-replicates", "5", "--json"])
    assert res.exit_code == 0, res.output
    json.loads(res.stdout)  # the readout goes to stderr with --json
    assert "Posterior predictive checks:" in res.stderr


def test_parameter_checks_are_arviz_stats_numbers_in_the_right_rows():
    """The health check stacks every scalar parameter into one array for arviz-stats'
    array functions; each row of its table holds arviz-stats' own R-hat and ESS of that
    parameter (several variables and shapes, ties, a constant, an indicator)."""
    import arviz_stats as azs

    from raterstats.health import parameter_checks

    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 300, 6)).cumsum(axis=1) * 0.05 + rng.normal(size=(4, 300, 6))
    x[..., 0] = 1.0  # constant
    x[..., 2] = np.round(x[..., 2])  # ties
    x[..., 3] = x[..., 3] > 0  # an indicator
    post = xr.Dataset(
        {
            "a": (("chain", "draw", "k"), x),
            "b": (("chain", "draw"), rng.normal(size=(4, 300))),
            "c": (("chain", "draw", "i", "j"), x[..., :4].reshape(4, 300, 2, 2)),
        },
        coords={"k": list("uvwxyz")},
    )
    table = parameter_checks(xr.DataTree(children={"posterior": xr.DataTree(post)})).table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = {
            "rhat": azs.rhat(post),
            "ess_bulk": azs.ess(post, method="bulk"),
            "ess_tail": azs.ess(post, method="tail"),
        }
    for col, ds in ref.items():
        expected = np.concatenate([ds[v].values.ravel() for v in ("a", "b", "c")])
        np.testing.assert_allclose(table[col].to_numpy(), expected, rtol=1e-9, equal_nan=True)
    assert table["variable"].to_list() == ["a"] * 6 + ["b"] + ["c"] * 4
