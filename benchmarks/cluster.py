"""Time an annotation-budget sweep on a Dask LocalCluster of two workers against one process.

The sweep: :func:`raterstats.design.annotation_budget` of a MACE fit (EM) of the built-in
clinical-QA study (300 answers, 3 dimensions, a whole-answer and a sentence-level design),
1-5 raters per unit, 1-6 sentences, ``--n-sims`` simulated studies per design point (30
tasks). It runs in this process (``max_workers=1``, the best of ``--repeats`` runs) and on
a ``distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``: the
first call (the workers import raterstats) and the best of ``--repeats`` warm calls. The results
must be identical. It also measures what is shipped to the workers (the pickled tasks, and
the arrays shared by several tasks, which the client scatters once) and the memory of one
task: the peak of its allocations (tracemalloc) and the peak resident set of a fresh
process that runs the largest task. Writes the ``cluster`` section of
``benchmarks/RESULTS.md`` with the machine's load, and the figures that ``docs/cluster.md``
quotes.

Run (needs the ``dask`` extra, which the ``test`` extra includes)::

    .venv/bin/python benchmarks/cluster.py            # full run, writes RESULTS.md
    .venv/bin/python benchmarks/cluster.py --quick    # fewer simulations, prints only
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pickle
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Executor
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from raterstats import MACE
from raterstats.design import annotation_budget, shared_values
from raterstats.simulate import clinical_qa_study

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
START, END = "<!-- cluster:start -->", "<!-- cluster:end -->"
DOCS = HERE.parent / "docs" / "cluster.md"
DOCS_START, DOCS_END = "<!-- cluster-figures:start -->", "<!-- cluster-figures:end -->"

#: run in a fresh process: peak RSS of one task (kB on Linux) before and after it runs
MEMORY_CHILD = """
import pickle, resource, sys, json, tracemalloc
from raterstats.design.budget_sim import simulate_labels_task
task = pickle.load(open(sys.argv[1], "rb"))
simulate_labels_task(task)  # warm-up: lazy imports and caches
tracemalloc.start()
simulate_labels_task(task)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"peak_bytes": peak, "rss_kb": rss}))
"""


class Recorder(Executor):
    """An executor that runs the tasks here and keeps them (to measure what a cluster
    would be sent)."""

    def __init__(self) -> None:
        self.fn: Any = None
        self.tasks: list[Any] = []

    def map(self, fn: Any, *iterables: Any, **kw: Any) -> Any:  # type: ignore[override]
        self.fn = fn
        self.tasks = list(iterables[0])
        return [fn(t) for t in self.tasks]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def shipped(tasks: list[dict[str, Any]]) -> dict[str, float]:
    """Bytes sent to the workers: every task pickled whole (what an executor sends) and,
    on a Dask client, the tasks without the shared values plus those values once."""
    shared = shared_values(tasks)
    whole = [len(pickle.dumps(t)) for t in tasks]
    slim = [len(pickle.dumps({k: v for k, v in t.items() if id(v) not in shared})) for t in tasks]
    once = sum(len(pickle.dumps(v)) for v in shared.values())
    return {
        "n_tasks": len(tasks),
        "n_shared": len(shared),
        "whole_total": sum(whole),
        "slim_median": float(np.median(slim)),
        "slim_total": sum(slim),
        "shared_once": once,
    }


def task_memory(tasks: list[dict[str, Any]]) -> dict[str, float]:
    """Peak RSS of the largest task in a fresh process, and of that process before it."""
    big = max(tasks, key=lambda t: len(pickle.dumps(t)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "task.pkl"
        path.write_bytes(pickle.dumps(big))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), *sys.path])}
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, str(path)],
            capture_output=True, text=True, check=True, env=env,
        )  # fmt: skip
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "rss_mib": res["rss_kb"] / 1024,
        "task_mib": res["peak_bytes"] / 2**20,
        "task_pickle_mib": len(pickle.dumps(big)) / 2**20,
    }


def run(n_sims: int, repeats: int) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    res: dict[str, Any] = {"load_start": load(), "n_sims": n_sims}
    study = clinical_qa_study()
    ratings = study.ratings
    fit = MACE().fit(ratings, method="em", random_seed=1)
    kw = {"n_sims": n_sims, "random_seed": 1}
    rec = Recorder()
    annotation_budget(fit, ratings, executor=rec, **kw)
    res["shipped"] = shipped(rec.tasks)
    res["memory"] = task_memory(rec.tasks)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        local = annotation_budget(fit, ratings, max_workers=1, **kw)
        times.append(time.perf_counter() - t0)
    res["local_s"] = min(times)
    root = str(HERE.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    t0 = time.perf_counter()
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            env={"PYTHONPATH": path},
        ) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        res["startup_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        first = annotation_budget(fit, ratings, client=client, **kw)
        res["first_s"] = time.perf_counter() - t0
        warm = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            again = annotation_budget(fit, ratings, client=client, **kw)
            warm.append(time.perf_counter() - t0)
            xr.testing.assert_identical(local, again)
        res["warm_s"] = min(warm)
    xr.testing.assert_identical(local, first)
    res["identical"] = True
    res["load_end"] = load()
    res["date"] = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    return res


def to_markdown(r: dict[str, Any], repeats: int) -> str:
    sh, mem = r["shipped"], r["memory"]
    mib = 2**20
    versions = ", ".join(
        f"{p} {metadata.version(p)}" for p in ("raterstats", "dask", "distributed", "numpy")
    )
    lines = [
        START,
        "## Design sweeps on a Dask cluster",
        "",
        "Written by `benchmarks/cluster.py` (do not edit by hand; rerun it). Reproduce: "
        "`.venv/bin/python benchmarks/cluster.py` (the `test` extra installs the `dask` extra).",
        "",
        f"- date: {r['date']}",
        f"- machine: {machine()}; Python {platform.python_version()}; {versions}",
        f"- load average (1 / 5 / 15 min) at the start {r['load_start']}, at the end "
        f"{r['load_end']} (a shared machine: other processes used the cores during the run)",
        f"- sweep: `annotation_budget` of a MACE EM fit of the built-in clinical-QA study "
        f"(`clinical_qa_study()`), 1-5 raters, 1-6 sentences, n_sims={r['n_sims']}: "
        f"{sh['n_tasks']} tasks",
        "- cluster: `LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`; "
        f"results identical to the one-process run: {'yes' if r['identical'] else 'NO'}",
        "",
        "| run | wall (s) | speed-up vs one process |",
        "|---|---:|---:|",
        f"| one process (`max_workers=1`, best of {repeats}) | {r['local_s']:.2f} | 1.00x |",
        f"| LocalCluster, 2 workers, first call (workers import raterstats) | "
        f"{r['first_s']:.2f} | {r['local_s'] / r['first_s']:.2f}x |",
        f"| LocalCluster, 2 workers, warm (best of {repeats}) | {r['warm_s']:.2f} | "
        f"{r['local_s'] / r['warm_s']:.2f}x |",
        f"| cluster start-up (scheduler and 2 worker processes) | {r['startup_s']:.2f} | |",
        "",
        f"Shipped to the workers: the task function by name, {sh['n_tasks']} task dicts of "
        f"{sh['slim_median'] / 1024:.1f} KiB each (median; seeds, r, k and the cell's "
        f"indices) and {sh['n_shared']} arrays shared by several tasks, scattered once: "
        f"{sh['shared_once'] / mib:.2f} MiB in all; {(sh['slim_total'] + sh['shared_once']) / mib:.2f} "  # noqa: E501
        f"MiB sent, where pickling every task whole would send {sh['whole_total'] / mib:.2f} MiB.",
        "",
        f"Memory of one task (the largest, {mem['task_pickle_mib']:.2f} MiB pickled): "
        f"{mem['task_mib']:.1f} MiB allocated at its peak (tracemalloc, NumPy arrays "
        f"included); the process that runs it (raterstats imported) peaks at "
        f"{mem['rss_mib']:.0f} MiB resident.",
        END,
    ]
    return "\n".join(lines) + "\n"


def docs_figures(r: dict[str, Any]) -> str:
    """The table that ``docs/cluster.md`` quotes (between its ``cluster-figures`` markers)."""
    return "\n".join(
        [
            DOCS_START,
            "| run | wall (s) | speed-up |",
            "|---|---:|---:|",
            f"| one process | {r['local_s']:.2f} | 1.00x |",
            f"| 2 workers, first call (workers import raterstats) | {r['first_s']:.2f} | "
            f"{r['local_s'] / r['first_s']:.2f}x |",
            f"| 2 workers, warm | {r['warm_s']:.2f} | {r['local_s'] / r['warm_s']:.2f}x |",
            f"| cluster start-up | {r['startup_s']:.2f} | |",
            "",
            f"Load average (1 / 5 / 15 min) at the start {r['load_start']}, at the end "
            f"{r['load_end']} ({r['date']}; {os.cpu_count()} cores).",
            DOCS_END,
        ]
    )


def update_section(path: Path, section: str, start: str, end: str) -> None:
    """Replace the text between the markers ``start`` and ``end`` of ``path`` (markers
    included in ``section``), or append ``section`` when they are missing."""
    text = path.read_text() if path.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + section.strip("\n") + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-sims", type=int, default=200, help="simulated studies per point")
    ap.add_argument("--repeats", type=int, default=3, help="warm cluster runs (best taken)")
    ap.add_argument("--quick", action="store_true", help="n_sims=20, one repeat, print only")
    args = ap.parse_args()
    n_sims, repeats = (20, 1) if args.quick else (args.n_sims, args.repeats)
    res = run(n_sims, repeats)
    md = to_markdown(res, repeats)
    print(md)
    if not args.quick:
        update_section(RESULTS, md, START, END)
        update_section(DOCS, docs_figures(res), DOCS_START, DOCS_END)
        print(f"wrote the cluster section of {RESULTS} and the figures of {DOCS}")


if __name__ == "__main__":
    main()
