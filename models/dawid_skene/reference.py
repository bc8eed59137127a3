"""Write models/dawid_skene/reference.json: summaries of a reference fit of the default
Dawid-Skene (unpooled) to the ArchEHR-like simulated study, with run settings.

Run: ``.venv/bin/python models/dawid_skene/reference.py``
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import time
from pathlib import Path

import numpy as np

from raterstats import DawidSkene, diagnose, item_posterior, rater_summary
from raterstats.simulate import DEFAULT_SEED, archehr_like_study


def summarise(da) -> dict:
    x = da.values.reshape(-1, *da.shape[2:])
    return {
        "dims": list(da.dims[2:]),
        "mean": np.round(x.mean(axis=0), 4).tolist(),
        "sd": np.round(x.std(axis=0), 4).tolist(),
        "q05": np.round(np.quantile(x, 0.05, axis=0), 4).tolist(),
        "q95": np.round(np.quantile(x, 0.95, axis=0), 4).tolist(),
    }


def main() -> None:
    s = archehr_like_study(random_seed=DEFAULT_SEED)
    settings = {"method": "nuts", "sampler": "nutpie", "draws": 1000, "tune": 1000, "chains": 4,
                "random_seed": 20240611}  # fmt: skip
    t0 = time.perf_counter()
    fit = DawidSkene().fit(s.ratings, progress=False, **settings)
    secs = time.perf_counter() - t0
    d = diagnose(fit, warn=False)
    post = item_posterior(fit)
    truth = s.truth["true_label"].sel(item=post["item"], dimension=post["dimension"])
    summ = rater_summary(fit).isel(design=0)
    # MACE truth as a confusion matrix: theta 1[a = t] + (1 - theta) xi[a]
    th = s.truth["competence"].sel(rater=summ["rater"], dimension=summ["dimension"]).values
    xi = s.truth["spam"].sel(rater=summ["rater"], dimension=summ["dimension"]).values
    conf = th[..., None, None] * np.eye(3) + (1 - th)[..., None, None] * xi[..., None, :]
    inside = (summ["confusion_low"].values <= conf) & (conf <= summ["confusion_high"].values)
    out = {
        "model": "DawidSkene()",
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
        "confusion_90pct_interval_coverage": round(float(inside.mean()), 4),
        "summaries": {v: summarise(fit.posterior[v]) for v in ("prevalence",)},
    }
    path = Path(__file__).with_name("reference.json")
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
