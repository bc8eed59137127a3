"""``import raterstats`` and the EM fast paths leave PyMC, PyTensor, nutpie, ArviZ and
matplotlib unimported (seconds of start-up); the compiled-density NUTS path needs nutpie
but neither PyMC nor PyTensor. Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("pymc", "pytensor", "nutpie", "arviz", "arviz_plots", "arviz_stats", "matplotlib")

SCRIPT = """
import json, sys
heavy = {heavy!r}
def loaded():
    return sorted({{m.split(".")[0] for m in sys.modules}} & set(heavy))
import raterstats
out = {{"import": loaded()}}
{body}
print(json.dumps(out))
"""

EM_BODY = """
from raterstats.simulate import archehr_like_study
r = archehr_like_study(n_cases=3, n_systems=3, random_seed=1).ratings
for m in (raterstats.MACE(), raterstats.MACE(hierarchical=False), raterstats.DawidSkene()):
    dt = m.fit(r, method="em", random_seed=1)
    raterstats.item_posterior(dt)
    raterstats.rater_summary(dt)
out["em"] = loaded()
"""

NUTS_BODY = """
from raterstats.simulate import archehr_like_study
r = archehr_like_study(n_cases=3, n_systems=3, random_seed=1).ratings
for m in (raterstats.MACE(hierarchical=False), raterstats.DawidSkene()):
    dt = m.fit(r, draws=20, tune=20, chains=1, random_seed=1, progress=False)
    raterstats.item_posterior(dt)
    raterstats.diagnose(dt, warn=False)
    assert dt.attrs["logp_backend"] == "compiled"
out["nuts"] = loaded()
"""


def _run(body: str) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = SCRIPT.format(heavy=HEAVY, body=body)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_and_em_fits_leave_heavy_modules_unimported() -> None:
    out = _run(EM_BODY)
    assert out["import"] == []
    assert out["em"] == []


def test_public_names_resolve_lazily() -> None:
    code = (
        "import raterstats, sys; names = [n for n in raterstats.__all__ "
        "if getattr(raterstats, n) is None]; "
        "print(sorted(set(raterstats.__all__) - set(dir(raterstats))), names, "
        "raterstats.diagnose.__module__, raterstats.report.__module__, "
        "raterstats.compare_designs.__module__)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == [
        "[]",
        "[]",
        "raterstats.diagnostics",
        "raterstats.report",
        "raterstats.design.compare",
    ]


@pytest.mark.slow
def test_compiled_nuts_path_needs_neither_pymc_nor_pytensor() -> None:
    out = _run(NUTS_BODY)
    assert "pymc" not in out["nuts"]
    assert "pytensor" not in out["nuts"]
    assert "nutpie" in out["nuts"]


def test_prior_names_checked_with_or_without_pymc() -> None:
    from raterstats.models import Prior

    assert Prior("Laplace", mu=0.0, b=1.0).dist == "Laplace"  # checked against PyMC itself
    with pytest.raises(ValueError, match="not a PyMC distribution"):
        Prior("NotADistribution")
