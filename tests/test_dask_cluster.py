"""issue 22: design sweeps on a real Dask cluster.

A ``distributed.LocalCluster`` of two worker processes runs an annotation budget (ordinal
and categorical fits), the rater subsampling study and simulation-based calibration; each
result must equal the local run with the same seed. Skipped only when dask.distributed is
not installed (the ``test`` extra installs it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import raterstats
from raterstats import MACE, DawidSkene
from raterstats.design import (
    DesignOption,
    annotation_budget,
    compare_design_kinds,
    prior_simulator,
    simulation_based_calibration,
    subsampling_study,
)
from raterstats.design.budget import run_tasks
from raterstats.design.cluster import DASK_EXTRA, check_client, shared_values
from raterstats.simulate import archehr_like_study

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install raterstats[dask])"
)


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each; the workers import this raterstats (its
    folder first on their PYTHONPATH, so a checkout that is not installed works too)."""
    root = str(Path(raterstats.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env={"PYTHONPATH": path},
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def labels():
    return archehr_like_study(n_cases=6, n_systems=3, random_seed=4).ratings


def _count_scatters(client, monkeypatch) -> list[int]:
    """Record the number of objects of every scatter call of ``client``."""
    calls: list[int] = []
    real = client.scatter

    def counting(data, **kw):
        calls.append(len(data))
        return real(data, **kw)

    monkeypatch.setattr(client, "scatter", counting)
    return calls


def test_workers_are_separate_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2 and os.getpid() not in pids.values()


def test_annotation_budget_on_the_cluster_equals_the_local_run(client, labels, monkeypatch):
    """A categorical (MACE EM) budget: each (dimension, design) cell's draws are shared by
    its tasks and scattered once."""
    fit = MACE().fit(labels, method="em", random_seed=1)
    kw = {"n_raters": [1, 2, 3], "n_sims": 5, "random_seed": 2, "seconds_per_unit": {"single": 30}}
    local = annotation_budget(fit, labels, max_workers=1, **kw)
    calls = _count_scatters(client, monkeypatch)
    remote = annotation_budget(fit, labels, client=client, **kw)
    xr.testing.assert_identical(local, remote)
    assert len(calls) == 1 and calls[0] >= 3 * 4  # 3 cells x 4 arrays, in one scatter
    assert np.isfinite(remote["p_correct_model"]).all()


def test_ordinal_budget_on_the_cluster_equals_the_local_run(
    client, tiny_ordinal_fit, tiny_study, monkeypatch
):
    kw = {"n_raters": [1, 2], "n_sentences": [1, 3], "n_sims": 6, "random_seed": 5}
    local = annotation_budget(tiny_ordinal_fit, tiny_study.ratings, max_workers=1, **kw)
    calls = _count_scatters(client, monkeypatch)
    remote = annotation_budget(tiny_ordinal_fit, tiny_study.ratings, client=client, **kw)
    xr.testing.assert_identical(local, remote)
    assert len(calls) == 1 and calls[0] >= 4  # eta, tau, z, item_system and per design
    assert np.isfinite(remote["p_recovered"]).any()


def test_subsampling_study_on_the_cluster_equals_the_local_run(client, labels):
    r = labels.filter(dimension="answers_question")
    kw = {"n_raters": [1, 2], "n_repeats": 3, "method": "mace", "random_seed": 3,
          "score_map": "yes_partially_no"}  # fmt: skip
    local = subsampling_study(r, max_workers=1, **kw)
    remote = subsampling_study(r, client=client, **kw)
    xr.testing.assert_identical(local, remote)
    assert np.isfinite(remote["value"]).any()


def test_design_kinds_on_the_cluster_equal_the_local_run(client):
    opts = [DesignOption("absolute", 1, 30), DesignOption("absolute", 3, 30)]
    kw = {"study": {"theta": [1.0, 0.0, -1.0]}, "n_questions": 8, "n_replicates": 12,
          "random_seed": 1}  # fmt: skip
    local = compare_design_kinds(opts, max_workers=1, **kw)
    remote = compare_design_kinds(opts, client=client, **kw)
    xr.testing.assert_identical(local, remote)


def test_calibration_on_the_cluster_equals_the_local_run(client, labels):
    r = labels.filter(dimension="answers_question")
    for model in (DawidSkene(confusion_prior="fixed"), MACE(hierarchical=False)):
        kw = {"n_replicates": 6, "method": "em", "random_seed": 7}
        local = simulation_based_calibration(model, prior_simulator(model, r), **kw)
        remote = simulation_based_calibration(model, prior_simulator(model, r), client=client, **kw)
        xr.testing.assert_identical(local, remote)
        assert remote.attrs["n_failed"] == 0
        assert remote["rank"].sizes["replicate"] == 6
        assert set(np.unique(remote["rank"])) <= {0.0, 1.0}  # one draw per EM fit
        assert "median-unbiased" in remote.attrs["uncertainty_note"]


def test_a_failing_task_raises_on_the_caller(client):
    with pytest.raises(TypeError):
        run_tasks(abs, ["x"], max_workers=1, executor=None, client=client)


def test_client_checks():
    with pytest.raises(TypeError, match=r"dask\.distributed\.Client"):
        check_client(object(), "annotation_budget")
    with pytest.raises(ValueError, match="not both"):
        run_tasks(abs, [1], max_workers=1, executor=object(), client=object())
    a = np.zeros(3)
    assert list(shared_values([{"x": a, "n": 1}, {"x": a, "n": 1}, {"y": a}]).values()) == [a]


def test_missing_dask_names_the_extra(monkeypatch, tiny_ordinal_fit, tiny_study):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(ImportError, match=r"raterstats\[dask\]") as info:
        annotation_budget(tiny_ordinal_fit, tiny_study.ratings, n_sims=2, client=object())
    assert DASK_EXTRA in str(info.value)


def test_the_docs_quote_the_benchmark():
    """docs/cluster.md quotes the figures of the cluster section of benchmarks/RESULTS.md
    (benchmarks/cluster.py writes both)."""
    root = Path(__file__).resolve().parents[1]
    results = (root / "benchmarks" / "RESULTS.md").read_text()
    section = results.split("<!-- cluster:start -->", 1)[1].split("<!-- cluster:end -->")[0]
    docs = (root / "docs" / "cluster.md").read_text()
    quoted = docs.split("<!-- cluster-figures:start -->", 1)[1]
    quoted = quoted.split("<!-- cluster-figures:end -->")[0]
    rows = [line.split("|")[2].strip() for line in quoted.splitlines() if line.startswith("| ")]
    walls = [line.split("|")[2].strip() for line in section.splitlines() if line.startswith("| ")]
    assert rows[1:] == walls[1:] and len(rows) == 5  # header, then the four wall times
    date = section.split("- date: ", 1)[1].splitlines()[0]
    assert date in quoted
