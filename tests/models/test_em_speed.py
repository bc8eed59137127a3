"""issue 22: EM near the floor. The fused EM pass (class posteriors, expected counts and
class counts in one kernel) against its NumPy reference and the separate kernels; the
pattern grouping by hash against the exact polars grouping (collisions included); the
vectorised data preparation; the restarts' short runs on a subsample; and the categorical
benchmark's subset options, EM target and reproduce lines."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from raterstats import MACE, DawidSkene, NominalScale, item_posterior, read_ratings
from raterstats.models.latent_class import em as em_mod
from raterstats.models.latent_class import kernels_em as nb
from raterstats.models.latent_class import patterns
from raterstats.models.latent_class.data import prepare_latent_class
from raterstats.models.latent_class.reference import (
    class_counts,
    em_estep_counts_np,
    table_layout,
    unique_inverse,
)
from raterstats.schema import unit_id

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "categorical.py"


def _random_ratings(seed: int, n_items: int = 60, with_gold: bool = False) -> pl.DataFrame:
    """Ratings of 3 dimensions (one binary) by raters drawn from a pool, 1 to 4 ratings per
    item and dimension, ids with characters unit ids escape, some segments."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        item = ["a", "x:y", "b::c", ":z", "p|q", "w\\v", "plain"][i % 7] + f"{i}"
        seg = None if i % 3 else f"s{i % 2}:"
        for dim, k in (("d1", 3), ("d|2", 3), ("d3", 2)):
            for rater in rng.choice(8, size=int(rng.integers(1, 5)), replace=False):
                row = {"item": item, "segment": seg, "rater": f"r{rater}", "dimension": dim,
                       "rating": str(int(rng.integers(0, k)))}  # fmt: skip
                if with_gold:
                    row["gold"] = str(i % k) if i % 4 == 0 else None
                rows.append(row)
    return pl.DataFrame(rows)


def _read(frame: pl.DataFrame):
    scales = {"d1": NominalScale(["0", "1", "2"]), "d|2": NominalScale(["0", "1", "2"]),
              "d3": NominalScale(["0", "1"])}  # fmt: skip
    return read_ratings(frame, scale=scales)


@pytest.fixture(scope="module")
def mixed_data():
    return prepare_latent_class(_read(_random_ratings(1, with_gold=True)), use_gold=True)


def _step_args(data, seed: int = 3):
    lay = table_layout(data, data.p_cell)
    rng = np.random.default_rng(seed)
    T = np.log(rng.dirichlet(np.ones(data.K), lay.n_entries))
    log_prior = np.log(rng.dirichlet(np.ones(data.K), len(data.dimensions)))
    log_prior[data.dimensions.index("d3"), 2] = -np.inf  # the binary dimension's padded class
    return lay, (T, log_prior, lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, lay.mask)


def test_fused_em_pass_matches_numpy_reference_and_separate_kernels(mixed_data):
    data = mixed_data
    lay, args = _step_args(data)
    P, K, E, D = data.n_patterns, data.K, lay.n_entries, len(data.dimensions)
    assert (~lay.mask).any()  # gold clamps and the binary dimension mask classes
    q1, q2, q3 = np.empty((P, K)), np.empty((P, K)), np.empty((P, K))
    M1, M2, M3 = (np.full((E, K), 7.0) for _ in range(3))  # overwritten, not added to
    cc1, cc2 = np.full((D, K), 7.0), np.full((D, K), 7.0)
    ll1 = nb.em_estep_counts(*args, q1, M1, cc1)
    ll2 = em_estep_counts_np(*args, q2, M2, cc2)
    ll3 = nb.em_estep_accumulate(*args, q3, M3)
    assert np.isfinite(ll1)
    assert ll1 == pytest.approx(ll2, rel=1e-12) and ll1 == pytest.approx(ll3, rel=1e-12)
    for a, b in ((q1, q2), (q1, q3), (M1, M2), (M1, M3), (cc1, cc2)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cc1, class_counts(data, q1), rtol=1e-12)
    np.testing.assert_allclose(q1.sum(axis=1), 1.0, rtol=1e-12)
    assert (q1[~lay.mask] == 0).all()


def test_fused_em_pass_with_a_pattern_of_no_possible_class(mixed_data):
    lay, args = _step_args(mixed_data)
    T, log_prior = args[0], args[1].copy()
    log_prior[:] = -np.inf  # no class has positive prior probability
    P, K, E, D = mixed_data.n_patterns, mixed_data.K, lay.n_entries, len(mixed_data.dimensions)
    q, M, cc = np.full((P, K), 5.0), np.empty((E, K)), np.empty((D, K))
    ll = nb.em_estep_counts(T, log_prior, *args[2:], q, M, cc)
    q_np, M_np, cc_np = np.empty((P, K)), np.empty((E, K)), np.empty((D, K))
    ll_np = em_estep_counts_np(T, log_prior, *args[2:], q_np, M_np, cc_np)
    assert ll == ll_np == -np.inf
    assert (q == 0).all() and (M == 0).all() and (cc == 0).all()


@pytest.mark.parametrize("chunks", [1, 3, 4, 7])
def test_chunked_em_pass_equals_the_whole_pass(mixed_data, chunks, monkeypatch):
    """The threaded E-step over ranges of patterns gives the one-pass kernel's result (to
    rounding: the expected counts are summed per range), gold and masked classes
    included; with one core it runs the ranges in turn and gives the same numbers as
    with several."""
    data = mixed_data
    lay, args = _step_args(data)
    P, K, E, D = data.n_patterns, data.K, lay.n_entries, len(data.dimensions)
    step = em_mod.ChunkedEStep(lay.p_start, chunks=chunks)
    b = step.bounds
    assert b[0] == 0 and b[-1] == P and bool(np.all(np.diff(b) >= 0))
    out = [np.full((P, K), 5.0), np.full((E, K), 7.0), np.full((D, K), 7.0)]
    ref = [np.empty((P, K)), np.empty((E, K)), np.empty((D, K))]
    ll = step(*args, *out)
    ll_ref = nb.em_estep_counts(*args, *ref)
    assert ll == pytest.approx(ll_ref, rel=1e-12)
    for a, r in zip(out, ref, strict=True):
        np.testing.assert_allclose(a, r, rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(em_mod.os, "cpu_count", lambda: 1)
    serial = em_mod.ChunkedEStep(lay.p_start, chunks=chunks)
    assert serial.workers == 1
    again = [np.empty((P, K)), np.empty((E, K)), np.empty((D, K))]
    assert serial(*args, *again) == ll
    for a, r in zip(again, out, strict=True):
        np.testing.assert_array_equal(a, r)


def test_large_layouts_take_the_threaded_em_pass(mixed_data, monkeypatch):
    lay, _ = _step_args(mixed_data)
    size = lay.p_e.size * lay.mask.shape[1]
    assert em_mod.select_em_step(lay, numpy_max=size - 1) is nb.em_estep_counts
    monkeypatch.setattr(em_mod, "EM_THREADED_MIN", size)
    step = em_mod.select_em_step(lay, numpy_max=size - 1)
    assert isinstance(step, em_mod.ChunkedEStep)
    assert len(step.bounds) == em_mod.EM_CHUNKS + 1


@pytest.mark.parametrize("factory", [MACE, DawidSkene])
def test_em_fit_on_the_threaded_pass_equals_the_numpy_fit(factory, monkeypatch):
    """A whole EM fit (restarts, empirical Bayes for Dawid-Skene) on the threaded E-step
    lands on the estimates of the NumPy reference pass."""
    from raterstats.models.latent_class import dawid_skene_em, mace_em

    r = _read(_random_ratings(4, n_items=120))
    ref = factory().fit(r, method="em", random_seed=2)
    calls = []

    def threaded(lay, numpy_max=0):
        calls.append(lay)
        return em_mod.ChunkedEStep(lay.p_start)

    for mod in (dawid_skene_em, mace_em):
        monkeypatch.setattr(mod, "select_em_step", threaded)
    fit = factory().fit(r, method="em", random_seed=2)
    assert calls
    for v in ref.posterior.data_vars:
        np.testing.assert_allclose(fit.posterior[v], ref.posterior[v], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        item_posterior(fit)["prob"], item_posterior(ref)["prob"], rtol=1e-7, atol=1e-9
    )


@pytest.mark.parametrize("items", [("a", "b2", "c 3"), ("a", "x:y", "w\\v"), ("p|q", "plain", "z")])
def test_unit_ids_of_whole_items_on_one_dimension(items):
    """One dimension, no segments: the ids are the items themselves unless one needs
    escaping; either way they equal ``unit_id``."""
    from raterstats.models.latent_class.data import text_array

    frame = pl.DataFrame(
        {"item": [i for i in items for _ in range(2)], "rater": ["r1", "r2"] * len(items),
         "rating": ["0", "1"] * len(items)}
    )  # fmt: skip
    data = prepare_latent_class(read_ratings(frame, scale=NominalScale(["0", "1"])))
    assert list(data.unit_ids) == [unit_id(i, None) for i in sorted(items)]
    assert text_array(("", "")).tolist() == ["", ""]
    assert text_array(items).tolist() == list(items)
    assert text_array(items).dtype == np.asarray(items, dtype=str).dtype


@pytest.mark.parametrize("shift", [0.0, -60.0, -800.0])
def test_em_pass_in_probability_space_matches_log_space(shift):
    """The compiled pass multiplies probabilities and takes one logarithm per run of
    patterns; where a pattern's likelihood is tiny (``shift``: every log-probability
    lowered, so that 3 ratings give 1e-78 or underflow) it redoes the pattern in log
    space. Either way it equals the log-space NumPy reference, patterns of weight 1 and
    above, a masked class and an impossible pattern included."""
    rng = np.random.default_rng(7)
    P, K, E = 400, 3, 30
    p_start = np.r_[0, np.cumsum(rng.integers(1, 6, P))].astype(np.int64)
    p_e = rng.integers(0, E, p_start[-1]).astype(np.int64)
    T = np.log(rng.dirichlet(np.ones(K), E)) + shift
    log_prior = np.log([[0.5, 0.3, 0.2]])
    mask = np.ones((P, K), dtype=bool)
    mask[::7, 1] = False
    mask[5] = False  # a pattern with no possible class: the log-likelihood is -inf
    w = rng.integers(1, 4, P).astype(float)
    w[rng.random(P) < 0.6] = 1.0
    args = (T, log_prior, p_e, p_start, np.zeros(P, dtype=np.int64), w, mask)
    for m in (mask, np.ones((P, K), dtype=bool)):
        a = (*args[:6], m)
        out = [np.empty((P, K)), np.empty((E, K)), np.empty((1, K))]
        ref = [np.empty((P, K)), np.empty((E, K)), np.empty((1, K))]
        ll, ll_ref = nb.em_estep_counts(*a, *out), em_estep_counts_np(*a, *ref)
        if m is mask:
            assert ll == ll_ref == -np.inf
        else:
            assert np.isfinite(ll) and ll == pytest.approx(ll_ref, rel=1e-12)
        for x, r in zip(out, ref, strict=True):
            np.testing.assert_allclose(x, r, rtol=1e-10, atol=1e-13)


def test_em_kernels_load_in_the_background_once(monkeypatch):
    """A fit whose layout may take the compiled path starts loading numba's kernels on a
    thread while its data are prepared, once per process; a small one does not."""
    import sys
    import threading

    started = []

    class Spy(threading.Thread):
        def start(self) -> None:
            started.append(self)
            super().start()

    monkeypatch.setattr(em_mod.threading, "Thread", Spy)
    monkeypatch.setattr(em_mod, "_KERNELS_REQUESTED", threading.Event())
    assert em_mod.load_em_kernels_later(em_mod.EM_NUMPY_MAX) is False
    assert not started
    assert em_mod.load_em_kernels_later(em_mod.EM_NUMPY_MAX + 1) is True
    assert em_mod.load_em_kernels_later(10 * em_mod.EM_NUMPY_MAX) is False  # started already
    assert [t.name for t in started] == ["raterstats-em-kernels"]
    assert not started[0].daemon  # the interpreter waits for it at exit
    started[0].join(timeout=120)
    assert not started[0].is_alive()
    assert "raterstats.models.latent_class.kernels_em" in sys.modules


def _old_order_units(frame: pl.DataFrame) -> list[str]:
    """Units in the order the exact string sort gives (item, segment, dimension)."""
    f = frame.with_columns(pl.col("segment").fill_null("")).sort("item", "segment", "dimension")
    units = f.select("item", "segment", "dimension").unique(maintain_order=True)
    return [unit_id(i, s or None, dimension=d) for i, s, d in units.iter_rows()]


@pytest.mark.parametrize("seed", [1, 2])
def test_prepare_orders_units_and_writes_ids_as_before(seed):
    frame = _random_ratings(seed)
    data = prepare_latent_class(_read(frame))
    assert list(data.unit_ids) == _old_order_units(frame)
    # ratings sorted by unit, then cell and category; patterns exact
    key = (data.unit * data.n_cells + data.cell) * data.K + data.code
    assert (np.diff(key) >= 0).all()
    starts = np.r_[np.flatnonzero(np.r_[True, np.diff(data.unit) != 0]), data.unit.size]
    exact = patterns.group_patterns_exact(
        data.unit, data.cell * data.K + data.code, data.unit_dim, data.unit_gold
    )
    np.testing.assert_array_equal(data.unit_pattern, exact)
    assert patterns.same_as_first_unit(
        data.unit_pattern, starts, data.cell * data.K + data.code, data.unit_dim, data.unit_gold
    )


def test_pattern_grouping_by_hash_equals_exact_grouping_and_survives_collisions(monkeypatch):
    rng = np.random.default_rng(5)
    n_units = 400
    length = rng.integers(1, 4, n_units)
    start = np.r_[0, np.cumsum(length)]
    key = np.concatenate([np.sort(rng.integers(0, 6, n)) for n in length])
    dims = rng.integers(0, 2, n_units)
    gold = np.where(rng.random(n_units) < 0.2, rng.integers(0, 3, n_units), -1)
    unit = np.repeat(np.arange(n_units), length)
    exact = patterns.group_patterns_exact(unit, key, dims, gold)
    np.testing.assert_array_equal(patterns.group_patterns(start, key, dims, gold), exact)
    assert exact.max() + 1 < n_units  # units do share patterns
    # a hash that collides everywhere: the exact check fails, the exact grouping is used
    assert not patterns.same_as_first_unit(np.zeros(n_units, dtype=np.int64), start, key,
                                           dims, gold)  # fmt: skip
    monkeypatch.setattr(patterns, "unit_hashes", lambda *a: np.zeros(n_units, dtype=np.uint64))
    np.testing.assert_array_equal(patterns.group_patterns(start, key, dims, gold), exact)


def test_sort_order_and_unique_inverse_match_numpy():
    rng = np.random.default_rng(2)
    cols = [rng.integers(0, 5, 300), rng.integers(0, 3, 300), rng.integers(0, 7, 300)]
    ref = np.lexsort(tuple(reversed(cols)))
    np.testing.assert_array_equal(patterns.sort_order(cols, [5, 3, 7]), ref)
    # sizes whose product does not fit in 62 bits: lexsort
    np.testing.assert_array_equal(patterns.sort_order(cols, [2**40, 2**20, 7]), ref)
    for key in (rng.integers(0, 50, 200), rng.integers(0, 2**40, 200), np.zeros(0, int)):
        u, inv = unique_inverse(key)
        u_ref, inv_ref = np.unique(key, return_inverse=True)
        np.testing.assert_array_equal(u, u_ref)
        np.testing.assert_array_equal(inv, inv_ref.ravel())


def _pool_answers(queue):
    queue.put(em_mod.em_pool(2).submit(abs, -3).result(timeout=20))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_the_kept_em_pool_works_in_a_forked_process():
    """The threaded E-step's pool is kept for the process; a forked child (a process pool's
    default start on Linux) has none of its threads and must start its own instead of
    queueing work for threads that do not exist."""
    import multiprocessing

    assert em_mod.em_pool(2).submit(abs, -2).result() == 2  # the parent's pool exists
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_pool_answers, args=(queue,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == 3


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_patterns_from_hashes_numbers_groups_by_their_first_unit(n):
    """Equal hashes share a group; groups are numbered 0, 1, ... in the order of their
    first unit (checked against ``np.unique`` and a stable sort of the first indices)."""
    rng = np.random.default_rng(n)
    h = rng.integers(0, max(1, n // 3), n).astype(np.uint64) * np.uint64(2**40 + 7)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    got = patterns.patterns_from_hashes(h)
    np.testing.assert_array_equal(got, rank[inverse.ravel()])
    assert got.dtype == np.int64


def test_subset_units_keeps_each_units_likelihood(mixed_data):
    data = mixed_data
    keep = np.random.default_rng(0).random(data.n_units) < 0.4
    sub = em_mod.subset_units(data, keep)
    assert sub.n_units == keep.sum() and int(sub.pattern_count.sum()) == keep.sum()
    assert sub.unit_ids == tuple(np.asarray(data.unit_ids, dtype=object)[keep])
    model = MACE()
    fit = model.fit(_read(_random_ratings(1, with_gold=True)), method="em", random_seed=1)
    params = model.params_from_posterior(fit["posterior"].to_dataset())
    full = model.pattern_log_joint(params, data)[:, data.unit_pattern][:, keep]
    part = model.pattern_log_joint(params, sub)[:, sub.unit_pattern]
    np.testing.assert_allclose(part, full, rtol=1e-12)


@pytest.mark.parametrize("model", [MACE(), DawidSkene()], ids=lambda m: m.name)
def test_restarts_on_a_subsample_reach_the_full_data_estimate(model):
    r = _read(_random_ratings(3, n_items=150))
    full = model.fit(r, method="em", random_seed=1, restart_units=0)
    sub = model.fit(r, method="em", random_seed=1, restart_units=60)
    st_full, st_sub = full["sample_stats"].attrs, sub["sample_stats"].attrs
    n_units = full["constant_data"].sizes["unit"]
    assert st_full["restart_units"] == n_units and st_sub["restart_units"] == 60
    iters = json.loads(st_sub["restart_iterations"])
    assert len(iters) == 5 and iters[st_sub["best_restart"]] == int(
        sub["sample_stats"]["n_iterations"].item()
    )
    assert bool(sub["sample_stats"]["converged"].item())
    lab_f, lab_s = item_posterior(full)["map_code"], item_posterior(sub)["map_code"]
    assert float((lab_f == lab_s).mean()) > 0.97
    lp_f, lp_s = (float(d["sample_stats"]["lp"].item()) for d in (full, sub))
    assert lp_s == pytest.approx(lp_f, abs=2.0)


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_restart_units_is_checked(bad, one_dim):
    with pytest.raises(ValueError, match="restart_units"):
        MACE().fit(one_dim, method="em", random_seed=1, restart_units=bad)


# ---------------------------------------------------------------------- benchmark


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("categorical_benchmark_em", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_engine_filter_takes_hyphens(bench):
    assert bench.engine_filter("em, crowdkit-ds") == {"em", "crowdkit_ds"}
    assert bench.engine_filter("") == set()


def _speed_rows(bench, ck_run: str) -> list[dict]:
    size = bench.SIZE_ORDER[3]
    detail = {
        "em_loop_s": 0.8,
        "em_iterations": 30,
        "sub_iterations": 40,
        "restart_units": 50_000,
        "s_per_iter": 0.8 / 31,
        "pass_s": 0.004,
        "pass_mb": 40.0,
        "pattern_ratings": 1_500_000,
        "patterns": 500_000,
        "load": 1.0,
    }
    return [
        {"size": size, "engine": "raterstats EM", "model": "MACE", "run": "a", "fit_s": 2.5,
         "wall_s": 6.0, "load": 1.0, "em_detail": detail},
        {"size": size, "engine": "raterstats EM", "model": "DS", "run": "a", "fit_s": 4.0,
         "wall_s": 7.0, "load": 1.0},
        {"size": size, "engine": "crowd-kit 1.4", "model": "DS", "run": ck_run, "fit_s": 50.0,
         "wall_s": 55.0, "load": 1.0},
    ]  # fmt: skip


def test_benchmark_em_target_needs_the_same_run(bench):
    lines = bench.targets({"speed": _speed_rows(bench, "a")})
    em = [x for x in lines if "15x" in x]
    assert len(em) == 2
    assert "(MACE)" in em[0] and em[0].endswith("**met**") and "20.0x" in em[0]
    assert "(DS)" in em[1] and em[1].endswith("**NOT met**")  # 4.0 s > 3 s
    other = [x for x in bench.targets({"speed": _speed_rows(bench, "b")}) if "15x" in x]
    assert all(x.endswith("**not measured**") and "same run" in x for x in other)


def test_benchmark_tables_say_how_to_reproduce_them(bench):
    md = bench.to_markdown({"speed": _speed_rows(bench, "a")})
    lines = md.splitlines()
    heads = [i for i, x in enumerate(lines) if x.startswith("## ") and x != "## Targets"]
    assert heads
    for i in heads:
        assert lines[i + 2].startswith("Reproduce: `python benchmarks/categorical.py"), lines[i]
    floor = lines.index("## EM near the floor")
    row = "| 500,000 x 3 (pool 2,000) | MACE | 1,500,000 | 0.80 | 30 / 40 (50,000 units) |"
    assert any(x.startswith(row) for x in lines[floor:])
