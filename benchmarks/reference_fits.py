"""Write ``models/mace/reference.json`` and ``models/dawid_skene/reference.json``: summaries
of a reference fit of the default MACE (hierarchical, 3 dimensions) and the default
Dawid-Skene (unpooled) to the ArchEHR-like simulated study, with run settings, label
accuracy and the 90% interval coverage of the simulation's truth.

Run: ``.venv/bin/python benchmarks/reference_fits.py [mace|dawid_skene ...]``
(``--draws N --out-dir DIR`` for a quick look elsewhere).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import time
from pathlib import Path

import numpy as np
import xarray as xr

from raterstats import MACE, DawidSkene, diagnose, item_posterior, rater_summary
from raterstats.simulate import DEFAULT_SEED, SimulatedStudy, archehr_like_study

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"


def summarise(da: xr.DataArray) -> dict:
    x = da.values.reshape(-1, *da.shape[2:])
    return {
        "dims": list(da.dims[2:]),
        "mean": np.round(x.mean(axis=0), 4).tolist(),
        "sd": np.round(x.std(axis=0), 4).tolist(),
        "q05": np.round(np.quantile(x, 0.05, axis=0), 4).tolist(),
        "q95": np.round(np.quantile(x, 0.95, axis=0), 4).tolist(),
    }


def mace_coverage(summ: xr.Dataset, s: SimulatedStudy) -> tuple[str, float]:
    """Share of competence 90% intervals that cover the simulated competence."""
    comp_true = s.truth["competence"].sel(rater=summ["rater"], dimension=summ["dimension"])
    inside = (summ["competence_low"] <= comp_true) & (comp_true <= summ["competence_high"])
    return "competence_90pct_interval_coverage", float(inside.mean())


def ds_coverage(summ: xr.Dataset, s: SimulatedStudy) -> tuple[str, float]:
    """Share of confusion-entry 90% intervals that cover the simulated MACE rater written
    as a confusion matrix, ``theta 1[a = t] + (1 - theta) xi[a]``."""
    th = s.truth["competence"].sel(rater=summ["rater"], dimension=summ["dimension"]).values
    xi = s.truth["spam"].sel(rater=summ["rater"], dimension=summ["dimension"]).values
    conf = th[..., None, None] * np.eye(3) + (1 - th)[..., None, None] * xi[..., None, :]
    inside = (summ["confusion_low"].values <= conf) & (conf <= summ["confusion_high"].values)
    return "confusion_90pct_interval_coverage", float(inside.mean())


#: folder name -> (model, its name in the file, truth coverage, summarised variables)
REFERENCE = {
    "mace": (
        MACE,
        "MACE()",
        mace_coverage,
        ("competence_cell_mean", "rater_sd", "cell_sd", "prevalence"),
    ),
    "dawid_skene": (DawidSkene, "DawidSkene()", ds_coverage, ("prevalence",)),
}


def reference_fit(name: str, s: SimulatedStudy, draws: int) -> dict:
    model, label, coverage, summarised = REFERENCE[name]
    settings = {"method": "nuts", "sampler": "nutpie", "draws": draws, "tune": draws,
                "chains": 4, "random_seed": 20240611, "init": "em"}  # fmt: skip
    t0 = time.perf_counter()
    fit = model().fit(s.ratings, progress=False, **settings)
    secs = time.perf_counter() - t0
    d = diagnose(fit, warn=False)
    post = item_posterior(fit)
    truth = s.truth["true_label"].sel(item=post["item"], dimension=post["dimension"])
    cov_name, cov = coverage(rater_summary(fit, ci_prob=0.9).isel(design=0), s)
    return {
        "model": label,
        "data": f"raterstats.simulate.archehr_like_study(random_seed={DEFAULT_SEED}): "
        f"{s.ratings.n_ratings} ratings, {len(s.ratings.items)} items, "
        f"{len(s.ratings.raters)} raters, dimensions {list(s.ratings.dimensions)}",
        "settings": settings,
        "raterstats_version": fit.attrs["raterstats_version"],
        "data_fingerprint": fit.attrs["data_fingerprint"],
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "fit_seconds": round(secs, 1),
        "diagnostics": {
            "ok": d.ok,
            "max_rhat": round(float(d.parameters["rhat"].max()), 4),
            "min_ess_bulk": round(float(d.parameters["ess_bulk"].min()), 0),
            "min_ess_tail": round(float(d.parameters["ess_tail"].min()), 0),
            "divergences": d.divergences,
            "problems": list(d.problems),
        },
        "label_accuracy_vs_truth": round(float((post["map_code"] == truth).mean()), 4),
        # a prior learnt from the ratings (Dawid-Skene's empirical Bayes), as the fit records it
        "learnt_prior": {
            k: v
            for k, v in json.loads(fit.attrs["options"]).items()
            if k == "confusion_concentration" and v is not None
        },
        cov_name: round(cov, 4),
        "summaries": {v: summarise(fit.posterior[v]) for v in summarised},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("models", nargs="*", help=f"any of {list(REFERENCE)} (default: all)")
    ap.add_argument("--draws", type=int, default=1000, help="draws and tuning steps per chain")
    ap.add_argument("--out-dir", type=Path, default=MODELS_DIR)
    args = ap.parse_args()
    unknown = [m for m in args.models if m not in REFERENCE]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; choose from {list(REFERENCE)}")
    s = archehr_like_study(random_seed=DEFAULT_SEED)
    for name in args.models or list(REFERENCE):
        path = args.out_dir / name / "reference.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(reference_fit(name, s, args.draws), indent=1) + "\n")


if __name__ == "__main__":
    main()
