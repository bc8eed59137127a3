"""A NUTS fit that samples until its checks pass: ``draws`` as checkpoints.

The draws kept at a checkpoint are the first ones of each chain, so a sample that stops
there equals a run to that checkpoint (``draws=(c,)``) with the same seed; the verdict at
each checkpoint is the finished fit's health (R-hat, ESS, divergences, the model's checks).
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings

import numpy as np
import pytest
import xarray as xr

from raterstats import MACE, OrdinalRaters
from raterstats import defaults as D
from raterstats.analyze.fits import how_fitted
from raterstats.health import assess_fit, checkpoints_line
from raterstats.inference import Density, run_density
from raterstats.models import model_class
from raterstats.models.ordinal import CHECKPOINTS as ORDINAL_CHECKPOINTS
from raterstats.models.ordinal import DRAWS as ORDINAL_DRAWS
from raterstats.report import methods_paragraph
from raterstats.simulate import archehr_like_study, clinical_qa_study


def _normal_density() -> Density:
    return Density(
        2,
        lambda x: (-0.5 * float(x @ x), -x),
        lambda x: {"x": x.copy()},
        {"x": (2,)},
        {"x": ("k",)},
        {"k": ["a", "b"]},
        lambda rng: rng.normal(size=2),
    )


def _stop_at(n: int):
    seen: list[int] = []

    def until(fit: xr.DataTree) -> str | None:
        seen.append(int(fit["posterior"].sizes["draw"]))
        return "enough" if seen[-1] == n else None

    return until, seen


def test_a_sample_that_stops_at_a_checkpoint_equals_a_run_to_that_checkpoint():
    until, seen = _stop_at(40)
    dt = run_density(_normal_density(), draws=(20, 40, 400), tune=50, chains=3,
                     random_seed=5, progress=False, until=until)  # fmt: skip
    fixed = run_density(_normal_density(), draws=(40,), tune=50, chains=3, random_seed=5,
                        progress=False, until=lambda fit: None)  # fmt: skip
    assert seen == [20, 40]
    assert dict(dt.posterior.sizes) == {"chain": 3, "draw": 40, "k": 2}
    np.testing.assert_array_equal(dt.posterior["x"].values, fixed.posterior["x"].values)
    np.testing.assert_array_equal(
        dt.sample_stats["diverging"].values, fixed.sample_stats["diverging"].values
    )
    assert json.loads(dt.posterior.attrs["checkpoints"]) == [
        {"draws": 20, "verdict": "sampled on"},
        {"draws": 40, "verdict": "enough"},
    ]
    assert json.loads(dt.posterior.attrs["checkpoints_planned"]) == [20, 40, 400]


def test_chains_run_at_most_cores_at_once_and_draw_the_same(capsys):
    """With ``cores=1`` the chains reach each checkpoint one after the other; their draws
    are those of the chains run side by side (each chain has its own seed). The progress
    line says where the sample is and what each checkpoint found."""
    side_by_side = run_density(_normal_density(), draws=(15, 30), tune=20, chains=3,
                               random_seed=2, progress=False, until=lambda fit: None)  # fmt: skip
    one_core = run_density(_normal_density(), draws=(15, 30), tune=20, chains=3, cores=1,
                           random_seed=2, progress=True, until=lambda fit: None)  # fmt: skip
    np.testing.assert_array_equal(
        one_core.posterior["x"].values, side_by_side.posterior["x"].values
    )
    err = capsys.readouterr().err
    assert "NUTS, 3 chains to 15 draws each: 100%; checked: sampled on" in err
    assert "NUTS, 3 chains to 30 draws each: 100%" in err


def test_no_chain_samples_while_a_checkpoint_is_judged(monkeypatch):
    """The chains that reach a checkpoint last are paused too: while the verdict is
    computed no chain takes a core (found on the built-in study, where the last chain
    sampled on beside the checks and made them 1.5 s slower)."""
    from raterstats import nutpie_run

    running: dict[int, nutpie_run._Chain] = {}
    start, pause = nutpie_run._Chain.start_or_resume, nutpie_run._Chain.pause

    def start_or_resume(self, *args):
        running[id(self)] = self
        return start(self, *args)

    def paused(self):
        running.pop(id(self), None)
        return pause(self)

    monkeypatch.setattr(nutpie_run._Chain, "start_or_resume", start_or_resume)
    monkeypatch.setattr(nutpie_run._Chain, "pause", paused)
    at_verdict: list[int] = []

    def until(fit: xr.DataTree) -> str | None:
        # a chain that drew every draw it was asked for (on a busy machine it can reach the
        # last checkpoint while the watcher sleeps) is finished, not paused: it takes no core
        busy = [ch for ch in running.values() if not nutpie_run.sampler_finished(ch.sampler)]
        at_verdict.append(len(busy))
        return None

    fast = _normal_density()

    def slow_logp_grad(x):  # about 1 s per chain: no chain ends before the checkpoints
        time.sleep(0.003)
        return fast.logp_grad(x)

    slow = dataclasses.replace(fast, logp_grad=slow_logp_grad)
    dt = run_density(slow, draws=(30, 60, 90), tune=20, chains=3, cores=2, random_seed=4,
                     progress=False, until=until)  # fmt: skip
    assert at_verdict == [0, 0] and dt.posterior.sizes["draw"] == 90


def test_the_last_checkpoint_ends_the_sample_whatever_the_verdict():
    until, seen = _stop_at(-1)  # never satisfied
    dt = run_density(_normal_density(), draws=(10, 30), tune=30, chains=2, random_seed=1,
                     progress=False, until=until)  # fmt: skip
    assert seen == [10] and dt.posterior.sizes["draw"] == 30
    assert json.loads(dt.posterior.attrs["checkpoints"])[-1] == {
        "draws": 30,
        "verdict": "the last checkpoint",
    }


def test_compiled_ordinal_density_stops_at_a_checkpoint_with_the_same_draws():
    """The C-callback path (the unconstrained vector stored, expanded afterwards)."""
    r = clinical_qa_study(n_questions=4, random_seed=2).ratings
    model = OrdinalRaters()
    density = model.density(model.prepare(r), start=None)
    assert density.c_logp is not None
    until, seen = _stop_at(30)
    dt = run_density(density, draws=(15, 30, 60), tune=40, chains=2, random_seed=3,
                     progress=False, until=until)  # fmt: skip
    fixed = run_density(density, draws=(30,), tune=40, chains=2, random_seed=3,
                        progress=False, until=lambda fit: None)  # fmt: skip
    assert seen == [15, 30]
    for name in ("system_effect", "cutpoints", "sigma_residual"):
        np.testing.assert_array_equal(dt.posterior[name].values, fixed.posterior[name].values)


def _partial(draws: np.ndarray, diverging: int = 0) -> xr.DataTree:
    """A fit's first draws as a checkpoint sees them: ``draws`` (chain, draw)."""
    post = xr.Dataset({"sigma_residual": (("chain", "draw"), draws)})
    div = np.zeros(draws.shape, bool)
    div.flat[:diverging] = True
    stats = xr.Dataset({"diverging": (("chain", "draw"), div)})
    return xr.DataTree(
        children={"posterior": xr.DataTree(post), "sample_stats": xr.DataTree(stats)}
    )


def test_the_verdict_at_a_checkpoint_is_the_finished_fits_health():
    model = OrdinalRaters()
    data = model.prepare(clinical_qa_study(n_questions=4, random_seed=2).ratings)
    verdict = model._checkpoint_verdict(data, None)
    rng = np.random.default_rng(0)
    mixed = rng.normal(size=(4, 1000))
    assert verdict(_partial(mixed)) == "passed its checks"
    stuck = mixed + np.array([0.0, 0.0, 0.0, 0.5])[:, None]  # one chain elsewhere
    assert verdict(_partial(stuck)) is None  # more draws may help: sample on
    why = verdict(_partial(mixed, diverging=3))
    assert why == "3 divergent transition(s), which more draws do not remove"
    short = rng.normal(size=(4, 60))  # ESS below 400: sample on
    assert verdict(_partial(short)) is None


def test_a_small_variable_that_fails_decides_the_verdict_without_the_rest(monkeypatch):
    """At a checkpoint the variables of few scalars (scales, effects) are checked first:
    where one fails, the full check would fail too and the sample goes on without it (the
    same verdict); where they pass, or a divergence or a model check stops the sample,
    every parameter is checked and the health kept for the finished fit."""
    import raterstats.health as health

    model = OrdinalRaters()
    data = model.prepare(clinical_qa_study(n_questions=4, random_seed=2).ratings)
    rng = np.random.default_rng(0)
    calls: list[list[str]] = []
    real = health.parameter_checks

    def counted(fit, **kw):
        calls.append(list(kw.get("var_names") or health.reported_variables(fit)))
        return real(fit, **kw)

    monkeypatch.setattr(health, "parameter_checks", counted)

    def fit_with(small: np.ndarray, big: np.ndarray, diverging: int = 0) -> xr.DataTree:
        dt = _partial(small, diverging)
        post = dt["posterior"].to_dataset()
        post["eta"] = (("chain", "draw", "item"), big)
        dt["posterior"] = xr.DataTree(post)
        return dt

    mixed = rng.normal(size=(4, 1000))
    big = rng.normal(size=(4, 1000, 150))  # 150 scalars: not a small variable
    stuck = mixed + np.array([0.0, 0.0, 0.0, 0.5])[:, None]
    judged: dict = {}
    verdict = model._checkpoint_verdict(data, None, judged)
    # a small variable fails: sample on, after checking the small variables alone
    assert verdict(fit_with(stuck, big)) is None
    assert calls == [["sigma_residual"]] and judged == {}
    # the small ones pass, a large one fails: every parameter is checked, as before
    calls.clear()
    stuck_big = big + np.array([0.0, 0.0, 0.0, 0.5])[:, None, None]
    assert verdict(fit_with(mixed, stuck_big)) is None
    assert calls[-1] == ["sigma_residual", "eta"] and not judged[1000].ok
    # a divergence stops the sample: its full health is kept for the finished fit
    calls.clear()
    why = verdict(fit_with(stuck, big, diverging=2))
    assert why == "2 divergent transition(s), which more draws do not remove"
    assert calls == [["sigma_residual", "eta"]] and not judged[1000].ok


def test_an_ordinal_fit_with_checkpoints_records_them_in_its_health():
    r = clinical_qa_study(n_questions=4, random_seed=2).ratings
    with warnings.catch_warnings(action="ignore"):  # too few draws to pass
        dt = OrdinalRaters().fit(r, draws=(20, 40), tune=40, chains=2, random_seed=1,
                                 progress=False)  # fmt: skip
    assert dt.attrs["draws"] == 40 == dt.posterior.sizes["draw"]
    assert dt.attrs["health_ok"] == 0
    assert dt.attrs["health"].splitlines()[-1] == checkpoints_line(dt.posterior.attrs)
    assert "20 sampled on; stopped at 40: the last checkpoint" in dt.attrs["health"]
    # what a methods section must say: the draws were set by the checks, and where
    text = methods_paragraph({"ordinal": dt}, references=False)
    assert "2 chains x 40 draws after 40 tuning steps" in text
    assert "set by the fit's own convergence checks" in text and "after 20, 40 draws" in text
    assert "(draws set by the fit's checks)" in how_fitted(dt)


def test_a_latent_class_fit_judges_its_checkpoints_with_the_mode_checks():
    """MACE's chains start at the EM estimate, and the mode checks read the ``em_start``
    and ``constant_data`` groups: the verdict at a checkpoint has them too. The sample goes
    on while a check fails (here R-hat at 500 draws) and stops where they pass."""
    r = archehr_like_study(n_cases=40, n_systems=3, random_seed=1).ratings
    model = MACE(hierarchical=False)
    dt = model.fit(r, draws=(500, 1000, 2000), tune=300, random_seed=1, progress=False)
    assert dt.attrs["health_ok"] == 1, dt.attrs["health"]
    record = json.loads(dt.posterior.attrs["checkpoints"])
    assert record[-1]["verdict"] == "passed its checks"
    assert all(x["verdict"] == "sampled on" for x in record[:-1])
    assert dt.posterior.sizes["draw"] == record[-1]["draws"] == dt.attrs["draws"]
    assert "em_start" in dt.children
    # the health judged at the checkpoint is the finished fit's, recomputed on all its groups
    again = assess_fit(
        dt, model_problems=model.convergence_problems(dt) + model.estimate_problems(dt)
    )
    assert dt.attrs["health"].splitlines()[:-1] == list(again.lines)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"draws": (1500, 1000)}, "strictly increasing"),
        ({"draws": (100, 200), "method": "map"}, "needs method='nuts' and sampler='nutpie'"),
        ({"draws": (100, 200), "sampler": "pymc"}, "needs method='nuts' and sampler='nutpie'"),
        ({"draws": (100, 200), "logp_backend": "pymc"}, "compiled density"),
    ],
)
def test_checkpoints_need_nuts_by_nutpie_on_the_compiled_density(kwargs, match):
    r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    with pytest.raises(ValueError, match=match):
        OrdinalRaters().fit(r, progress=False, **kwargs)


def test_run_density_needs_a_verdict_for_checkpoints():
    with pytest.raises(ValueError, match="needs until="):
        run_density(_normal_density(), draws=(10, 20), tune=10, chains=1, progress=False)


@pytest.mark.parametrize(
    ("name", "watched_default"),
    [
        ("mace", D.CHECKPOINTS),
        ("dawid_skene", D.CHECKPOINTS),
        ("glad", D.CHECKPOINTS),
        ("ebcc", D.CHECKPOINTS),
        ("community_dawid_skene", D.DRAWS),
        ("ordinal_raters", ORDINAL_CHECKPOINTS),
    ],
)
def test_default_draws_are_checkpoints_where_the_fit_can_stop(name, watched_default):
    """``draws=None``: checkpoints for NUTS by nutpie on the compiled density (the latent-
    class models but community Dawid-Skene, whose communities swap within chains whatever
    the draws, and the ordinal model), a fixed count on the other paths."""
    model = model_class(name)()
    assert model.default_draws(watched=True) == watched_default
    assert model.default_draws(watched=False) == (
        ORDINAL_DRAWS if name == "ordinal_raters" else D.DRAWS
    )


def test_a_latent_class_fit_at_its_defaults_samples_to_checkpoints():
    """``fit()`` without ``draws``: MACE by nutpie on its compiled density looks at the
    package's checkpoints, stops at one of them and records them in its health."""
    r = archehr_like_study(n_cases=20, n_systems=3, random_seed=3).ratings
    dt = MACE(hierarchical=False).fit(r, tune=200, chains=2, random_seed=1, progress=False)
    record = json.loads(dt.posterior.attrs["checkpoints"])
    assert tuple(json.loads(dt.posterior.attrs["checkpoints_planned"])) == D.CHECKPOINTS
    assert record[-1]["draws"] == dt.posterior.sizes["draw"] == dt.attrs["draws"]
    assert record[-1]["draws"] in D.CHECKPOINTS
    assert dt.attrs["health"].splitlines()[-1] == checkpoints_line(dt.posterior.attrs)
