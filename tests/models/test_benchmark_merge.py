"""benchmarks/categorical.py keeps the rows (and columns) it does not rerun."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "categorical.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("categorical_benchmark", PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_speed_rows_replaced_per_size_engine_and_model(bench):
    size = bench.SIZE_ORDER[0]
    old = [
        {"size": size, "engine": "crowd-kit 1.4", "model": "MACE", "wall_s": 22.0},
        {"size": size, "engine": "raterstats EM", "model": "MACE", "wall_s": 6.6},
        {"size": bench.SIZE_ORDER[3], "engine": "raterstats EM", "model": "DS", "wall_s": 63.7},
    ]
    new = [{"size": size, "engine": "raterstats EM", "model": "MACE", "wall_s": 3.7}]
    out = bench.merge_speed(old, new)
    assert [(r["engine"], r["wall_s"]) for r in out] == [
        ("raterstats EM", 3.7),
        ("crowd-kit 1.4", 22.0),
        ("raterstats EM", 63.7),
    ]


def test_accuracy_rows_merged_by_data_set_and_column(bench):
    old = [
        {"dataset": "zheng2017_dog", "ds_em_acc": 0.835, "ck_ds_acc": 0.843},
        {"dataset": "zheng2017_adult", "error": "not run"},
        {"dataset": "snow2008_rte", "ds_em_acc": 0.927},
    ]
    new = [
        {"dataset": "zheng2017_dog", "dsp_em_acc": 0.835},
        {"dataset": "zheng2017_adult", "ds_em_acc": 0.76},
    ]
    out = bench.merge_accuracy(old, new)
    assert [r["dataset"] for r in out] == ["snow2008_rte", "zheng2017_adult", "zheng2017_dog"]
    assert out[2] == {"dataset": "zheng2017_dog", "ds_em_acc": 0.835, "ck_ds_acc": 0.843,
                      "dsp_em_acc": 0.835}  # fmt: skip
    assert out[1] == {"dataset": "zheng2017_adult", "ds_em_acc": 0.76}  # the error is gone
    # a failed rerun replaces the row instead of mixing old values with the error
    err = bench.merge_accuracy(old, [{"dataset": "snow2008_rte", "error": "data not available"}])
    assert err[0] == {"dataset": "snow2008_rte", "error": "data not available"}


def test_skipped_note_dropped_when_nuts_values_present(bench):
    old = [{"dataset": "zheng2017_adult", "mace_nuts_skipped": "too big", "ds_nuts_skipped": "x"}]
    out = bench.merge_accuracy(old, [{"dataset": "zheng2017_adult", "mace_nuts_acc": 0.74}])
    assert out == [{"dataset": "zheng2017_adult", "ds_nuts_skipped": "x", "mace_nuts_acc": 0.74}]
