"""Benchmark: the Bradley-Terry-Davidson model (issue 20's performance targets).

1. MAP (``method="map"``, L-BFGS on the compiled density) on 100,000 simulated
   comparisons of 20 systems (target: under 5 s on 2 cores);
2. NUTS by nutpie on the compiled density (4 chains x 1,000 draws, default tuning) on
   10,000 comparisons of 20 systems by 50 raters (target: under 60 s, 0 divergences,
   largest R-hat <= 1.01).

With ``--reference``: the reference fit of the model card instead
(``models/bradley_terry/reference.json``: NUTS with default settings on a graded -2..2
study of 8 systems by 20 physicians and 2 LLM judges; summaries beside the truth).

Each fit is timed twice (the first run includes numba's loading of its cached kernels);
the table reports the second. Prints a JSON line per fit; writes nothing.

Run:  .venv/bin/python benchmarks/comparisons.py [--map-only | --nuts-only | --reference]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from raterstats import BradleyTerry  # noqa: E402
from raterstats.simulate_comparisons import simulate_comparisons  # noqa: E402

PARAMETERS = ("theta", "alpha", "beta", "theta_sd", "alpha_sd", "beta_mean", "beta_sd")


def bench_map() -> dict:
    sim = simulate_comparisons(
        n_systems=20, n_raters=50, n_comparisons=100_000, position_bias=0.2, random_seed=1
    )
    out = {}
    for run in ("first", "second"):
        t0 = time.perf_counter()
        dt = BradleyTerry().fit(sim.comparisons, method="map", random_seed=1, progress=False)
        out[f"{run}_wall_s"] = round(time.perf_counter() - t0, 3)
    est = dt.posterior["theta"].values.ravel()
    true = sim.truth["theta"].values.ravel()
    out.update(
        fit="map",
        n_comparisons=sim.comparisons.n_judgments,
        converged=bool(dt["sample_stats"]["converged"].item()),
        iterations=int(dt.posterior.attrs["iterations"]),
        optimiser_s=round(float(dt.posterior.attrs["sampling_time"]), 3),
        spearman=round(float(spearmanr(est, true).statistic), 4),
    )
    return out


def bench_nuts() -> dict:
    import arviz_stats as azs

    sim = simulate_comparisons(
        n_systems=20, n_raters=50, n_comparisons=10_000, position_bias=0.2, random_seed=2
    )
    out: dict = {}
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    dt = BradleyTerry().fit(sim.comparisons, chains=4, draws=1000, random_seed=1, progress=False)
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    out["cpu_s"] = round(time.process_time() - cpu0, 2)
    post = dt["posterior"].to_dataset()
    post = post[[p for p in PARAMETERS if p in post]]
    rhat = azs.rhat(post)
    ess = azs.ess(post, method="bulk")
    out.update(
        fit="nuts",
        n_comparisons=sim.comparisons.n_judgments,
        sampling_s=round(float(dt.posterior.attrs["sampling_time"]), 2),
        divergences=int(dt["sample_stats"]["diverging"].sum()),
        max_rhat=round(max(float(rhat[v].max()) for v in rhat.data_vars), 4),
        min_ess_bulk=round(min(float(ess[v].min()) for v in ess.data_vars), 1),
        mean_tree_steps=round(float(dt["sample_stats"]["n_steps"].mean()), 1),
        health=dt.attrs.get("health", ""),
    )
    return out


REFERENCE_STUDY = {
    "n_systems": 8,
    "n_raters": 20,
    "n_llm_judges": 2,
    "n_comparisons": 3000,
    "max_grade": 2,
    "position_bias": 0.2,
    "llm_bias": 0.8,
    "random_seed": 1,
}


def reference_fit() -> dict:
    """The card's reference fit: settings, diagnostics and summaries with the truth."""
    import arviz_stats as azs

    sim = simulate_comparisons(**REFERENCE_STUDY)
    dt = BradleyTerry().fit(sim.comparisons, random_seed=1, progress=False)
    post = dt["posterior"].to_dataset()
    post = post[[p for p in (*PARAMETERS, "cutpoints") if p in post]]
    rhat, ess = azs.rhat(post), azs.ess(post, method="bulk")
    summary = {}
    for name in post.data_vars:
        da = post[name]
        dims = [d for d in da.dims if d not in ("chain", "draw")]
        entry = {
            "dims": dims,
            "coords": {d: [str(v) for v in da[d].values] for d in dims},
            "mean": np.round(da.mean(("chain", "draw")).values, 4).tolist(),
            "sd": np.round(da.std(("chain", "draw")).values, 4).tolist(),
            "q05": np.round(da.quantile(0.05, ("chain", "draw")).values, 4).tolist(),
            "q95": np.round(da.quantile(0.95, ("chain", "draw")).values, 4).tolist(),
        }
        truth_name = {"cutpoints": "cutpoints"}.get(name, name)
        if truth_name in sim.truth:
            t = sim.truth[truth_name]
            if name in ("alpha", "beta"):
                t = t.sel(rater=entry["coords"]["rater"])
            entry["truth"] = np.round(np.asarray(t.values, float), 4).tolist()
        summary[name] = entry
    return {
        "settings": {
            "model": dt.attrs["model"],
            "method": dt.attrs["method"],
            "sampler": dt.attrs["sampler"],
            "random_seed": dt.attrs["random_seed"],
            "draws": dt.attrs["draws"],
            "tune": dt.attrs["tune"],
            "chains": dt.attrs["chains"],
            "adaptation": str(dt.posterior.attrs.get("adaptation", "")),
            "raterstats_version": dt.attrs["raterstats_version"],
            "data": "simulate_comparisons("
            + ", ".join(f"{k}={v}" for k, v in REFERENCE_STUDY.items())
            + ")",
            "data_fingerprint": dt.attrs["data_fingerprint"],
            "script": "benchmarks/comparisons.py --reference",
        },
        "diagnostics": {
            "divergences": int(dt["sample_stats"]["diverging"].sum()),
            "max_rhat": round(max(float(rhat[v].max()) for v in rhat.data_vars), 4),
            "min_ess_bulk": round(min(float(ess[v].min()) for v in ess.data_vars), 1),
            "fit_seconds": round(float(dt.attrs["fit_seconds"]), 2),
        },
        "summary": summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map-only", action="store_true")
    parser.add_argument("--nuts-only", action="store_true")
    parser.add_argument("--reference", action="store_true")
    args = parser.parse_args()
    if args.reference:
        path = HERE.parent / "models" / "bradley_terry" / "reference.json"
        path.write_text(json.dumps(reference_fit(), indent=1) + "\n")
        print(f"wrote {path}")
        return
    info = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    if not args.nuts_only:
        print(json.dumps({**bench_map(), **info}))
    if not args.map_only:
        print(json.dumps({**bench_nuts(), **info}))


if __name__ == "__main__":
    main()
