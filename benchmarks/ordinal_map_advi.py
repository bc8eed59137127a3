"""Benchmark: ordinal MAP and ADVI on the compiled density (issue 22), run by
``benchmarks/ordinal.py --map-advi``.

Times ``OrdinalRaters().fit(ratings, method=...)`` for ``method="map"`` (L-BFGS on the
non-centred compiled density) and ``method="advi"`` (mean-field ADVI, Adam, on the compiled
density; 1,000 draws), each in a fresh Python process, after a warm-up process has filled
numba's disk cache, on the built-in study and on the real ordinal sets found in the data
folder (``../shared/data`` beside the repository by default: DialSummEval campus and AMT,
SummEval-OP; a set that is absent is listed as such). Writes its own marked section of
``benchmarks/RESULTS.md``.

Run:  python benchmarks/ordinal.py --map-advi [--data-dir DIR]
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"
#: the real ordinal sets: folder name -> what it is
REAL = {
    "dialsummeval_campus": "DialSummEval, 3 experts (14 systems x 100 dialogues x 4 dimensions)",
    "summeval_op": "SummEval-OP, 3 annotators (13 systems x 32 products x 7 dimensions)",
    "dialsummeval_amt": "DialSummEval, 283 crowd workers (14 systems x 100 dialogues x 4 dims)",
}
COLUMNS = {"rater": "annotator", "rating": "label", "question": "document"}
ADVI_DRAWS = 1000
MARK = "ordinal-map-advi"
#: issue 22: the ordinal MAP on the built-in study in under this many seconds
MAP_TARGET_S = 5.0


def load(study: str, data_dir: Path):
    """The ratings of a study (``builtin`` or a folder of ``data_dir``)."""
    if study == "builtin":
        from raterstats.simulate import clinical_qa_study

        return clinical_qa_study().ratings
    if study == "high_agreement":
        from raterstats.simulate import high_agreement_study

        return high_agreement_study().ratings
    from raterstats import read_ratings
    from raterstats.scales import OrdinalScale

    path = data_dir / study / "data.csv"
    return read_ratings(path, columns=COLUMNS, scale=OrdinalScale.likert(5))


def child(study: str, method: str, data_dir: Path) -> None:
    """One fit in this (fresh) process; prints one JSON line."""
    t_start = time.perf_counter()
    import warnings

    import numpy as np

    from raterstats.models.ordinal import OrdinalRaters

    r = load(study, data_dir)
    m = OrdinalRaters()
    data = m.prepare(r)
    # MAP: the form whose mode it returns (sentence deviations integrated out)
    dens = m.mode_form(data) if method == "map" else m.density(data)
    assert dens is not None
    ndim = dens.ndim
    load0 = os.getloadavg()[0]
    kw = {"draws": ADVI_DRAWS} if method == "advi" else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dt = m.fit(r, method=method, random_seed=1, progress=False, **kw)
    fit = time.perf_counter() - t0
    post = dt["posterior"]
    out = {
        "study": study,
        "method": method,
        "ratings": int(r.n_ratings),
        "params": int(ndim),
        "load": load0,
        "fit_s": fit,
        "optimiser_s": float(post.attrs["sampling_time"]),
        "process_s": time.perf_counter() - t_start,
        "converged": bool(np.all(dt["sample_stats"]["converged"].values)),
        "iterations": int(post.attrs["iterations"]),
        "gradient_evaluations": int(post.attrs.get("gradient_evaluations", 0)),
        "gradient_max_abs": float(post.attrs.get("gradient_max_abs", float("nan"))),
        "objective": float(
            dt["sample_stats"]["lp"].item() if method == "map" else post.attrs["elbo"]
        ),
        "backend": str(dt.attrs["logp_backend"]),
        "health_ok": int(dt.attrs["health_ok"]),
        "warnings": len(caught),
    }
    print(json.dumps(out), flush=True)


def _run(args: list[str]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if res.returncode:
        raise RuntimeError(f"{args}: exit {res.returncode}\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(data_dir: Path | None = None, write: bool = True) -> list[dict[str, object]]:
    """Warm the numba cache, run every study x method in a fresh process, write the table."""
    data_dir = Path(data_dir) if data_dir is not None else DEFAULT_DATA
    studies = ["builtin", "high_agreement"] + [
        s for s in REAL if (data_dir / s / "data.csv").is_file()
    ]
    missing = [s for s in REAL if s not in studies]
    t0 = time.perf_counter()
    _run(["--child", "builtin", "map", "--data-dir", str(data_dir)])  # fills numba's cache
    warm = time.perf_counter() - t0
    results = []
    for study in studies:
        for method in ("map", "advi"):
            res = _run(["--child", study, method, "--data-dir", str(data_dir)])
            print(res, flush=True)
            results.append(res)
    if write:
        write_section(results, missing, warm)
    return results


def _count(r: dict[str, object], key: str) -> str:
    """A count of a MAP row (ADVI's gradient evaluations are its steps x draws: not shown)."""
    return f"{int(r[key]):,}" if r["method"] == "map" else ""  # type: ignore[call-overload]


def _gmax(r: dict[str, object]) -> str:
    """The largest absolute gradient component where a MAP stopped (its optimality check)."""
    return f"{float(r['gradient_max_abs']):.2g}" if r["method"] == "map" else ""  # type: ignore[arg-type]


def write_section(results: list[dict[str, object]], missing: list[str], warm: float) -> None:
    import numpy as np
    import scipy

    import raterstats

    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    what = {
        "builtin": "built-in `clinical_qa_study()`",
        "high_agreement": "`high_agreement_study()` (issue 19: 14 systems, Fleiss' kappa 0.85)",
        **{k: f"`{k}`: {v}" for k, v in REAL.items()},
    }
    lines = [
        f"<!-- {MARK}:start -->",
        "## Ordinal MAP and ADVI on the compiled density",
        "",
        "Written by `benchmarks/ordinal.py --map-advi` (`benchmarks/ordinal_map_advi.py`; do "
        "not edit by hand).",
        "",
        f"- date: {now}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; raterstats {raterstats.__version__}, numpy "
        f"{np.__version__}, scipy {scipy.__version__}",
        "- each fit runs in a fresh process after a warm-up process filled numba's disk cache "
        f"({warm:.1f} s); `fit` is the `OrdinalRaters().fit(...)` call (preparation, the "
        "optimisation, expanding the draws, the log-likelihood, the health check); "
        "`optimiser` the optimisation alone; `load` the 1-minute load average when the fit "
        "started (2 cores: above 2 means other processes competed for them)",
        "- MAP: L-BFGS on the non-centred compiled density (its mode on the unconstrained "
        "scale, log-Jacobians included; at most 2,000 iterations), with the sentence "
        "deviations integrated out by Gauss-Hermite quadrature where the study has sentence "
        "ratings (the built-in study; `params` counts the optimised coordinates); gradient "
        "evaluations = "
        "log density + gradient calls (independent of the load); max abs gradient = the "
        "largest gradient component where it stopped; objective = log density "
        f"at the mode. ADVI: mean-field, Adam, {ADVI_DRAWS:,} draws; objective = final ELBO",
        "- reproduce: `python benchmarks/ordinal.py --map-advi` (real sets read from "
        "`../shared/data` beside the repository, or `--data-dir DIR`)",
        "",
        "| study | ratings | params | method | load | fit (s) | optimiser (s) | converged | "
        "iterations | gradient evaluations | max abs gradient | objective | health |",
        "|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        lines.append(
            f"| {what[str(r['study'])]} | {r['ratings']:,} | {r['params']:,} | {r['method']} | "
            f"{float(r['load']):.1f} | {float(r['fit_s']):.1f} | {float(r['optimiser_s']):.1f} "
            f"| {'yes' if r['converged'] else 'no'} | {r['iterations']:,} | "
            f"{_count(r, 'gradient_evaluations')} | {_gmax(r)} | "
            f"{float(r['objective']):.1f} | {'ok' if r['health_ok'] else 'fails'} |"
        )
    if missing:
        lines += ["", "Not found (not run): " + ", ".join(f"`{m}`" for m in missing)]
    built_in = [r for r in results if r["method"] == "map" and r["study"] == "builtin"]
    for r in built_in:  # issue 22: ordinal MAP under 5 s on the built-in study
        fast = float(r["fit_s"]) < MAP_TARGET_S  # type: ignore[arg-type]
        ok = fast and bool(r["converged"]) and bool(r["health_ok"])
        lines += [
            "",
            f"Target (issue 22): ordinal MAP on the built-in study under {MAP_TARGET_S:.0f} s "
            f"(a mode found: the optimiser converged and the fit passes its checks): "
            f"{float(r['fit_s']):.1f} s, "  # type: ignore[arg-type]
            + ("converged" if r["converged"] else "not converged")
            + ": "
            + ("met" if ok else "**NOT met**"),
        ]
    lines.append(f"<!-- {MARK}:end -->")
    from categorical import update_results

    update_results(
        HERE / "RESULTS.md",
        "\n".join(lines) + "\n",
        f"<!-- {MARK}:start -->",
        f"<!-- {MARK}:end -->",
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        child(sys.argv[2], sys.argv[3], Path(sys.argv[5]))
    else:
        sys.exit("run: python benchmarks/ordinal.py --map-advi [--data-dir DIR]")
