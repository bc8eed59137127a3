"""Write ``models/plackett_luce/reference.json``: summaries of a reference NUTS fit of the
default PlackettLuce to a simulated ranking study (``simulate_comparisons(kind="rankings")``:
2,000 rankings of 5 of 20 systems by 50 human raters), with the run settings,
diagnostics, MAP and NUTS wall times and the 90% interval coverage of the truth. The truth
is put in the model's units first: the pooled raters' log alpha sum to zero in the model,
so the simulator's ``alpha`` is divided, and its ``theta`` multiplied, by the geometric
mean of the pooled raters' true ``alpha`` (``truth_in_model_units``).

Run: ``.venv/bin/python benchmarks/plackett_luce_reference.py [--out PATH]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import xarray as xr

from raterstats import PlackettLuce, diagnose
from raterstats.simulate_comparisons import simulate_comparisons

OUT = Path(__file__).resolve().parents[1] / "models" / "plackett_luce" / "reference.json"
STUDY = {
    "kind": "rankings",
    "n_systems": 20,
    "n_raters": 50,
    "n_questions": 100,
    "n_comparisons": 2000,
    "ranking_size": 5,
    "spammer_share": 0.0,
    "random_seed": 20,
}


def summarise(da: xr.DataArray) -> dict:
    x = da.values.reshape(-1, *da.shape[2:])
    return {
        "dims": list(da.dims[2:]),
        "mean": np.round(x.mean(axis=0), 4).tolist(),
        "sd": np.round(x.std(axis=0), 4).tolist(),
        "q05": np.round(np.quantile(x, 0.05, axis=0), 4).tolist(),
        "q95": np.round(np.quantile(x, 0.95, axis=0), 4).tolist(),
    }


def truth_in_model_units(truth: xr.Dataset, pooled: tuple[str, ...]) -> xr.Dataset:
    """The simulator's truth on the model's scale: ``theta * g`` and ``alpha / g`` with
    ``g = exp(mean of the pooled raters' true log alpha)`` (their geometric mean)."""
    g = float(np.exp(np.log(truth["alpha"].sel(rater=list(pooled))).mean()))
    return truth.assign(theta=truth["theta"] * g, alpha=truth["alpha"] / g).assign_attrs(
        scale_factor=g
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    sim = simulate_comparisons(**STUDY)
    model = PlackettLuce()
    truth = truth_in_model_units(sim.truth, model.prepare(sim.comparisons).pooled_raters)
    model.fit(sim.comparisons, method="map", random_seed=1)  # numba cache warm-up
    t0 = time.perf_counter()
    fit_map = model.fit(sim.comparisons, method="map", random_seed=1)
    map_s = time.perf_counter() - t0
    settings = {"method": "nuts", "sampler": "nutpie", "draws": 1000, "tune": 500,
                "chains": 4, "random_seed": 20240611}  # fmt: skip
    t0 = time.perf_counter()
    fit = model.fit(sim.comparisons, progress=False, **settings)
    nuts_s = time.perf_counter() - t0
    d = diagnose(fit, warn=False)
    post = fit.posterior
    cover = {}
    for name in ("theta", "alpha"):
        q = post[name].quantile([0.05, 0.95], dim=("chain", "draw"))
        true = truth[name].sel({k: post[name][k] for k in post[name].dims[2:]})
        cover[name] = round(float(((q[0] <= true) & (true <= q[1])).mean()), 4)
    err = fit_map.posterior["theta"].isel(chain=0, draw=0) - truth["theta"]
    out = {
        "model": "PlackettLuce()",
        "data": f"raterstats.simulate_comparisons.simulate_comparisons(**{STUDY})",
        "settings": settings,
        "options": model.options,
        "raterstats_version": fit.attrs["raterstats_version"],
        "data_fingerprint": fit.attrs["data_fingerprint"],
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "load_average_at_start": list(np.round(os.getloadavg(), 2)),
        "map_seconds": round(map_s, 2),
        "nuts_seconds": round(nuts_s, 1),
        "sampling_seconds": round(float(post.attrs["sampling_time"]), 1),
        "adaptation": post.attrs.get("adaptation"),
        "diagnostics": {
            "ok": d.ok,
            "max_rhat": round(float(d.parameters["rhat"].max()), 4),
            "min_ess_bulk": round(float(d.parameters["ess_bulk"].min()), 0),
            "min_ess_tail": round(float(d.parameters["ess_tail"].min()), 0),
            "divergences": d.divergences,
            "problems": list(d.problems),
        },
        "truth_scale_factor": round(truth.attrs["scale_factor"], 4),
        "coverage_90pct_vs_truth": cover,
        "map_theta_max_abs_error": round(float(abs(err).max()), 4),
        "summaries": {
            v: summarise(post[v]) for v in ("theta", "sigma_theta", "sigma_log_alpha", "alpha")
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "summaries"}, indent=1))


if __name__ == "__main__":
    main()
