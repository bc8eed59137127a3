"""Benchmark ``fit(method="gibbs")``: the full posterior of flat MACE and unpooled
Dawid-Skene at 50,000 items x 5 ratings (raters from a pool of 500) by the
data-augmentation sampler, beside NUTS on the same data and the floor (one sweep against
one pass over the labels).

The data are those of the ``50,000 x 5 (pool 500)`` row of ``benchmarks/categorical.py``
(its ``simulate_mace``, seed 0). Each fit runs in a fresh Python process (wall time
includes import, ingest, the EM start of the chains and the sampler; numba kernels cached
after the first run). The NUTS figure is cited from ``categorical_results.json`` (the
last run of ``benchmarks/categorical.py``; 580 s, not rerun here).

Run::

    .venv/bin/python benchmarks/gibbs.py            # writes the gibbs section of RESULTS.md
    .venv/bin/python benchmarks/gibbs.py --quick    # 5,000 items, prints only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
START = "<!-- gibbs:start -->"
END = "<!-- gibbs:end -->"
NUTS_ROW = "50,000 x 5 (pool 500)"

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np, polars as pl
from raterstats import DawidSkene, MACE, diagnose, item_posterior, read_ratings
from raterstats.scales import NominalScale
spec = json.loads(sys.argv[1])
out = {"import_s": time.perf_counter() - t0}
t1 = time.perf_counter()
r = read_ratings(pl.read_parquet(spec["data"]), scale=NominalScale(["0", "1", "2"]))
truth = np.load(spec["truth"]); comp_true = np.load(spec["competence"])
out["ingest_s"] = time.perf_counter() - t1
model = MACE(hierarchical=False) if spec["model"] == "MACE" else DawidSkene()
kw = {k: spec[k] for k in ("draws", "tune", "chains") if spec.get(k) is not None}
if spec.get("thin"):
    kw["thin"] = spec["thin"]
t2 = time.perf_counter()
fit = model.fit(r, method="gibbs", random_seed=spec["seed"], progress=False,
                log_likelihood=False, **kw)
out["fit_s"] = time.perf_counter() - t2
pa = fit.posterior.attrs
out["sampling_s"] = float(pa["sampling_time"])
out["seconds_per_sweep"] = float(pa["seconds_per_sweep"])
out["sweeps_per_chain"] = int(pa["sweeps_per_chain"])
out["thin"] = int(pa["thin"])
out["chains"] = int(fit.attrs["chains"]); out["draws"] = int(fit.attrs["draws"])
post = item_posterior(fit)
lab = post["map_code"].isel(dimension=0).values
idx = np.array([int(x[1:]) for x in post["item"].values])
out["accuracy"] = float(np.mean(lab == truth[idx]))
if spec["model"] == "MACE":
    c = fit.posterior["competence"].mean(("chain", "draw")).isel(design=0, dimension=0)
    ridx = np.array([int(x[1:]) for x in c["rater"].values])
    out["competence_mae"] = float(np.mean(np.abs(c.values - comp_true[ridx])))
d = diagnose(fit, warn=False)
out["rhat_max"] = float(d.parameters["rhat"].max())
out["ess_bulk_min"] = float(d.parameters["ess_bulk"].min())
out["ess_tail_min"] = float(d.parameters["ess_tail"].min())
out["ok"] = bool(d.ok)
out["health"] = fit.attrs["health"].splitlines()[0]
# the floor: one pass over the labels (the label step alone: K table look-ups per rating
# and one categorical draw per unit) and one plain read of the rating codes
from raterstats.models.latent_class import kernels_gibbs as kg
data = model.prepare(r)
U, K = data.n_units, data.K
start = np.searchsorted(data.unit, np.arange(U + 1)).astype(np.int64)
cell = data.cell.astype(np.int64); code = data.code.astype(np.int64)
table = np.log(np.full((data.n_cells, K, K), 1.0 / K)); lp = np.log(np.full((1, K), 1.0 / K))
args = (table, lp, start, cell, code, data.unit_dim.astype(np.int64),
        data.unit_gold.astype(np.int64), data.n_categories.astype(np.int64),
        np.zeros(U, dtype=np.int64), np.zeros((U, K)), np.empty(0), False,
        np.zeros((data.n_cells, K, K)), np.zeros((len(data.dimensions), K)))
kg.label_pass(*args)
n = 20
t3 = time.perf_counter()
for _ in range(n):
    kg.label_pass(*args)
out["label_pass_s"] = (time.perf_counter() - t3) / n
t4 = time.perf_counter()
for _ in range(n):
    int(code.sum())
out["read_codes_s"] = (time.perf_counter() - t4) / n
out["n_ratings"] = int(data.n_ratings)
out["total_in_process_s"] = time.perf_counter() - t0
print("RESULT " + json.dumps(out))
"""


def load() -> str:
    """The 1-minute load average (the machine may be shared)."""
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "n/a"


def make_data(tmp: Path, n_items: int) -> dict[str, str]:
    """The categorical benchmark's MACE simulation (50,000 x 5, pool 500 at full size)."""
    sys.path.insert(0, str(HERE))
    from categorical import simulate_mace

    frame, truth, comp = simulate_mace(n_items, 5, 500 if n_items >= 50_000 else 50, seed=0)
    paths = {"data": tmp / "ratings.parquet", "truth": tmp / "t.npy", "competence": tmp / "c.npy"}
    frame.write_parquet(paths["data"])
    np.save(paths["truth"], truth)
    np.save(paths["competence"], comp)
    return {k: str(v) for k, v in paths.items()}


def run(spec: dict[str, Any], timeout: int) -> dict[str, Any]:
    """One fit in a fresh process; wall time measured around it."""
    import time

    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(spec)],
        capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    lines = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if not lines:
        return {"model": spec["model"], "error": (p.stderr or p.stdout)[-2000:], "wall_s": wall}
    out = json.loads(lines[-1][7:])
    out.update(model=spec["model"], wall_s=wall, load=load())
    return out


def nuts_rows() -> list[dict[str, Any]]:
    """The NUTS rows of the same data from the categorical benchmark's stored results."""
    store = HERE / "categorical_results.json"
    if not store.exists():
        return []
    speed = json.loads(store.read_text()).get("speed", [])
    return [r for r in speed if r.get("size") == NUTS_ROW and "NUTS (nutpie" in r.get("engine", "")]


def fmt(v: Any, f: str) -> str:
    return "-" if v is None else format(v, f)


def to_markdown(rows: list[dict[str, Any]], nuts: list[dict[str, Any]], label: str) -> str:
    cmd = "`.venv/bin/python benchmarks/gibbs.py`"
    out = [
        START,
        "## Gibbs sampler (flat MACE, unpooled Dawid-Skene) at 50,000 x 5",
        "",
        f"Data: {label} (benchmarks/categorical.py's MACE simulation, seed 0). Gibbs: "
        "`fit(method='gibbs')` with its defaults (4 chains, 500 burn-in sweeps, 1,000 kept "
        "draws per chain), started at the EM estimate, each fit in a fresh process (wall "
        "includes import, ingest, the EM start and the sampler). ESS/s: min bulk ESS per "
        "second of fit. NUTS: cited from `categorical_results.json` (the last run of "
        "`benchmarks/categorical.py`, same data; not rerun here).",
        "",
        "| model | engine | wall s | fit s | sampler s | draws | max R-hat | min bulk ESS "
        "| ESS/s | accuracy | competence error | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['model']} | Gibbs | failed: {r['error'][-200:]!r} |")
            continue
        ess_s = r["ess_bulk_min"] / r["fit_s"]
        out.append(
            f"| {r['model']} | Gibbs | {r['wall_s']:.1f} | {r['fit_s']:.1f} | "
            f"{r['sampling_s']:.1f} | {r['chains']} x {r['draws']} | {r['rhat_max']:.4f} | "
            f"{r['ess_bulk_min']:.0f} | {ess_s:.1f} | {r['accuracy']:.3f} | "
            f"{fmt(r.get('competence_mae'), '.3f')} | {r['load']} |"
        )
    for r in nuts:
        ess_s = r["ess_bulk_min"] / r["fit_s"] if r.get("fit_s") else None
        out.append(
            f"| {r['model']} | NUTS (nutpie, compiled density; cited) | {r['wall_s']:.1f} | "
            f"{r['fit_s']:.1f} | - | 4 x 1000 | {r['rhat_max']:.4f} | "
            f"{r['ess_bulk_min']:.0f} | {fmt(ess_s, '.1f')} | {r['accuracy']:.3f} | "
            f"{fmt(r.get('competence_mae'), '.3f')} | {fmt(r.get('load'), '.1f')} |"
        )
    out += ["", f"Reproduce: {cmd}", "", "Floor: one sweep against one pass over the labels.", ""]
    out += [
        "| model | ratings | s per sweep (per chain) | label pass s | read of the codes s "
        "| sweep / label pass | sweeps per chain |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            continue
        out.append(
            f"| {r['model']} | {r['n_ratings']:,} | {r['seconds_per_sweep'] * 1e3:.2f} ms | "
            f"{r['label_pass_s'] * 1e3:.2f} ms | {r['read_codes_s'] * 1e3:.3f} ms | "
            f"{r['seconds_per_sweep'] / r['label_pass_s']:.2f} | {r['sweeps_per_chain']} |"
        )
    out += [
        "",
        "The label pass is the sampler's own label step alone (K log-table look-ups per "
        "rating, one categorical draw per unit, the complete-data counts); a sweep adds the "
        "Dirichlet / Beta draws from the counts (MACE: and its knows / guesses rounds on "
        "the counts). Seconds per "
        "sweep: sampler time x threads / sweeps of all chains (on a shared machine, load in "
        "the table).",
        "",
        f"Reproduce: {cmd}",
        "",
        END,
        "",
    ]
    return "\n".join(out)


def update_results(path: Path, section: str) -> None:
    """Replace the gibbs section of RESULTS.md (or append it)."""
    text = path.read_text() if path.exists() else ""
    if START in text and END in text:
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        text = head + section.strip("\n") + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5,000 items, print only")
    parser.add_argument("--models", default="MACE,DS")
    parser.add_argument("--draws", type=int, default=None)
    parser.add_argument("--tune", type=int, default=None)
    parser.add_argument("--thin", type=int, default=None)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    n_items = 5_000 if args.quick else 50_000
    label = f"{n_items:,} items x 5 ratings (pool {500 if n_items >= 50_000 else 50})"
    rows = []
    with tempfile.TemporaryDirectory() as d:
        paths = make_data(Path(d), n_items)
        for m in args.models.split(","):
            spec = {
                **paths, "model": m, "seed": 1, "draws": args.draws, "tune": args.tune,
                "chains": None, "thin": args.thin,
            }  # fmt: skip
            r = run(spec, args.timeout)
            print(json.dumps(r), flush=True)
            rows.append(r)
    md = to_markdown(rows, [] if args.quick else nuts_rows(), label)
    print(md)
    if not args.quick:
        update_results(args.out, md)
        (HERE / "gibbs_results.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
