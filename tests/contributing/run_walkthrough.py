"""Run the ZenCrowd walkthrough of docs/contributing.md in a fresh process.

``tests/test_contributing.py`` extracts the page's three files into a folder and runs this
script on it, in a subprocess: registering a model is global (the registry of
``raterstats.models.base``), so ZenCrowd must never be registered in the test process.

Usage: ``python run_walkthrough.py FOLDER MODULE``. ``FOLDER`` holds the
page's blocks as ``model.py``, ``card.md`` and ``test_model.py``; ``MODULE`` is the dotted
name the model file would have in the package
(``raterstats.models.latent_class.zencrowd``).
The script

1. imports ``model.py`` under ``MODULE`` (a module outside ``raterstats/models`` is not
   discovered: it registers its class when imported, as the page says) and runs its
   doctests;
2. checks the registry: ``model_class("zencrowd")``, ``raterstats.models.ZenCrowd``, the
   command line's ``--model`` listing, the card's front matter against the class (the rule of
   ``tests/test_registry.py``);
3. fits a small simulated study (three dimensions) by NUTS and asks every post-fit
   question through the package's functions (no ratings passed), the methods paragraph
   and ``raterstats fit --model zencrowd``;
4. runs the page's test file with pytest under the repository's configuration (warnings
   are errors there).

It prints one line per step and exits non-zero at the first failure.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
T0 = time.perf_counter()


def step(message: str) -> None:
    print(f"[{time.perf_counter() - T0:6.1f} s] {message}", flush=True)


def load_model(folder: Path, module: str) -> type:
    """Import ``folder/model.py`` as ``module`` and return the class it registers."""
    spec = importlib.util.spec_from_file_location(module, folder / "model.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return mod.ZenCrowd


def check_registry(cls: type, card: Path) -> None:
    import yaml

    import raterstats.models
    from raterstats.models import model_class, registered_models

    assert model_class("zencrowd") is cls
    assert model_class("ZenCrowd") is cls
    assert registered_models()["zencrowd"] is cls
    assert raterstats.models.ZenCrowd is cls  # discovery's __getattr__, no edit of __init__
    assert cls.answers("item_posterior") and cls.answers("system_score_draws")
    assert cls.answers("rater_summary")
    assert cls.description and any("Demartini" in r for r in cls.references)

    _, head, _ = card.read_text().split("---", 2)
    fm = yaml.safe_load(head)
    assert fm["model"] == cls.name, fm["model"]
    module, _, attr = fm["class"].rpartition(".")
    assert getattr(importlib.import_module(module), attr) is cls, fm["class"]
    assert fm["priors"] == {k: p.to_dict() for k, p in cls.default_priors.items()}
    assert fm["options"] == cls.default_options
    assert tuple(fm["methods"]) == cls.methods
    step("registry, card front matter: ok")

    from typer.testing import CliRunner

    from raterstats.cli import app

    help_text = CliRunner().invoke(app, ["fit", "--help"], terminal_width=200).output
    assert "zencrowd" in help_text, help_text
    step("command line lists --model zencrowd: ok")


def check_fit(cls: type, card: Path, tmp: Path) -> None:
    import numpy as np
    import xarray as xr
    import yaml

    import raterstats
    from raterstats import MACE
    from raterstats.diagnostics import diagnose, ppc_agreement
    from raterstats.models import model_from_datatree
    from raterstats.report import methods_paragraph
    from raterstats.simulate import archehr_like_study

    study = archehr_like_study(n_cases=3, n_systems=4, random_seed=1)
    ratings = study.ratings  # three dimensions: one reliability per rater across them
    model = cls().build(ratings)
    assert np.isfinite(model.compile_logp()(model.initial_point()))
    dt = cls().fit(
        ratings, draws=150, tune=150, chains=2, random_seed=1, progress=False,
        posterior_predictive=True,
    )  # fmt: skip
    step(f"NUTS fit ({dt.attrs['fit_seconds']:.1f} s): ok")
    assert dt.posterior_predictive["rating"].shape == (2, 150, ratings.n_ratings)
    assert dt.log_likelihood["ratings"].sizes["unit"] == dt["constant_data"].sizes["unit"]

    assert model_from_datatree(dt) == cls()
    const = dt["constant_data"]
    assert {"unit_system", "unit_question", "obs_unit", "obs_rater"} <= set(const.data_vars)
    _, head, _ = card.read_text().split("---", 2)
    assert set(yaml.safe_load(head)["parameters"]) <= set(dt.posterior.data_vars)

    post = raterstats.item_posterior(dt)
    mace = raterstats.item_posterior(MACE().fit(ratings, method="em", random_seed=1))
    assert set(post.data_vars) == set(mace.data_vars), set(post.data_vars) ^ set(mace.data_vars)
    assert all(post[v].dims == mace[v].dims for v in post.data_vars)
    assert post.sizes == mace.sizes
    np.testing.assert_allclose(post["prob"].sum("category"), 1.0)
    summary = raterstats.rater_summary(dt)
    for stat in ("mean", "sd", "low", "high"):
        assert summary[f"reliability_{stat}"].dims == ("rater",)
    assert (summary["reliability_low"] <= summary["reliability_high"]).all()
    binary = {"yes": 1.0, "no": 0.0}
    score_map = {
        "answers_question": "yes_partially_no",
        "uses_evidence": binary | {"refutes": 0.0},
        "uses_knowledge": binary | {"conflicting": 0.0},
    }
    ranking = raterstats.rank_systems(dt, score_map=score_map, n_boot=50)
    assert sorted(ranking["system"].values) == sorted(set(ratings.data["system"]))
    text = methods_paragraph({"ZenCrowd": dt})
    assert "Demartini" in text and "random seed 1" in text, text
    dt.to_netcdf(tmp / "fit.nc")
    back = xr.open_datatree(tmp / "fit.nc")
    xr.testing.assert_equal(raterstats.item_posterior(back), post)
    step("item_posterior, rater_summary, rank_systems, methods paragraph, reload: ok")
    assert diagnose(dt).label_switching == ()
    assert ppc_agreement(dt, n_draws=20, random_seed=1)["replicated"].sizes["replicate"] == 20
    step("diagnose, ppc_agreement (the latent-class family's): ok")

    from typer.testing import CliRunner

    from raterstats.cli import app

    csv = tmp / "ratings.csv"
    one = ratings.filter(dimension="answers_question")
    one.data.select("item", "rater", "rating", "system").write_csv(csv)
    args = ["fit", str(csv), "-s", "yes-partially-no", "--model", "zencrowd", "--draws", "50"]
    args += ["--tune", "50", "--chains", "1", "--out", str(tmp / "cli.nc"), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert xr.open_datatree(tmp / "cli.nc").attrs["model"] == "zencrowd"
    step("raterstats fit --model zencrowd: ok")


def run_page_tests(folder: Path) -> None:
    import pytest

    args = ["-q", "-x", "-p", "no:cacheprovider", "-c", str(REPO / "pyproject.toml")]
    args += ["--rootdir", str(folder), str(folder / "test_model.py")]
    code = pytest.main(args)
    assert code == 0, f"the page's tests failed (pytest exit code {code})"
    step("the page's tests: ok")


def main() -> None:
    folder, module = Path(sys.argv[1]), sys.argv[2]
    cls = load_model(folder, module)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, attempted = doctest.testmod(sys.modules[module], optionflags=flags)
    assert attempted and not failed, f"doctests of {module}: {failed} of {attempted} failed"
    step(f"imported {module}, its doctests: ok")
    check_registry(cls, folder / "card.md")
    check_fit(cls, folder / "card.md", folder)
    run_page_tests(folder)


if __name__ == "__main__":
    main()
