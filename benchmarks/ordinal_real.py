"""Benchmark: the ordinal rater model at its defaults on high-agreement and real data (issue 19),
run by ``benchmarks/ordinal.py --real``.

Fits ``OrdinalRaters()`` with default settings (NUTS, 4 chains, draws set by the fit's
checks at the model's checkpoints, 1,000 to 4,000 per chain) in a fresh
Python process per study, after a warm-up process has filled numba's disk cache, on the
high-agreement simulation (``raterstats.simulate.high_agreement_study()``) and on the real
ordinal sets found in the data folder (``../shared/data`` beside the repository by default:
DialSummEval campus and AMT, SummEval-OP; a set that is absent is listed as such), and
reports per study: the latent units the priors are stated in, time, divergences, the largest
R-hat and smallest bulk ESS over the diagnosed parameters (rater facets, system effects,
cut-points, scales), gradient evaluations of the kept draws, and, per dimension, Kendall's
tau-b between the ranking of the systems by their fair averages (posterior means) and by
their mean ratings, the range of the fair averages against that of the mean ratings, and the
posterior predictive Randolph's kappa (90% interval of 100 replicates,
``raterstats.design.compare_designs``) against the observed one. On the simulation also
Spearman's correlation of the fair averages with the true system order. Writes its own
marked section of ``benchmarks/RESULTS.md``.

Run:  python benchmarks/ordinal.py --real [--data-dir DIR]
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
MARK = "ordinal-real"
STUDIES = ("high_agreement", "dialsummeval_campus", "summeval_op", "dialsummeval_amt")
PPC_REPLICATES = 100


def load(study: str, data_dir: Path):
    """(ratings, truth or None) of a study."""
    if study == "high_agreement":
        from raterstats.simulate import high_agreement_study

        s = high_agreement_study()
        return s.ratings, s.truth
    from ordinal_map_advi import load as load_real

    return load_real(study, data_dir), None


def child(study: str, data_dir: Path) -> None:
    """One default fit in this (fresh) process; prints one JSON line."""
    t_start = time.perf_counter()
    import warnings

    import arviz_stats as azs
    import numpy as np
    import polars as pl
    from scipy.stats import kendalltau, spearmanr

    from raterstats import schema as S
    from raterstats.design import compare_designs
    from raterstats.models.ordinal import DIAGNOSED_PARAMETERS, OrdinalRaters, system_scores

    r, truth = load(study, data_dir)
    model = OrdinalRaters()
    units = model.latent_units(model.prepare(r))
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a failed check is in the fit's health, reported
        dt = model.fit(r, random_seed=1, progress=False)
    fit_s = time.perf_counter() - t0
    load1 = os.getloadavg()[0]
    post = dt["posterior"].to_dataset()
    names = [v for v in DIAGNOSED_PARAMETERS if v in post]
    summ = azs.summary(post[names], kind="diagnostics")
    fa = system_scores(dt)["fair_average"].mean(("chain", "draw")).isel(design=0)
    means = (
        r.data.group_by(S.DIMENSION, S.SYSTEM)
        .agg(pl.col(S.CODE).mean() + 1)
        .sort(S.DIMENSION, S.SYSTEM)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ppc = compare_designs(dt, n_replicates=PPC_REPLICATES, ci_prob=0.9, random_seed=1)
    dims = []
    for d in [str(v) for v in fa["dimension"].values]:
        m = means.filter(pl.col(S.DIMENSION) == d)
        systems = [str(s) for s in m[S.SYSTEM].to_list()]
        raw = m[S.CODE].to_numpy()
        f = fa.sel(dimension=d).sel(system=systems).values
        row = {
            "dimension": d,
            "kendall_tau": float(kendalltau(f, raw).statistic),
            "fa_range": float(f.max() - f.min()),
            "raw_range": float(raw.max() - raw.min()),
            "kappa_observed": float(ppc["kappa_observed"].sel(dimension=d).isel(design=0)),
            "kappa_low": float(ppc["kappa_low"].sel(dimension=d).isel(design=0)),
            "kappa_high": float(ppc["kappa_high"].sel(dimension=d).isel(design=0)),
        }
        if truth is not None:
            true_effect = truth["system_effect"].sel(dimension=d).sel(system=systems).values
            row["spearman_truth"] = float(spearmanr(f, true_effect).statistic)
        dims.append(row)
    out = {
        "study": study,
        "ratings": int(r.n_ratings),
        "systems": int(fa.sizes["system"]),
        "units": [round(float(u), 2) for u in units],
        "load": f"{load0:.1f} / {load1:.1f}",
        "fit_s": fit_s,
        "process_s": time.perf_counter() - t_start,
        "divergences": int(dt["sample_stats"]["diverging"].sum()),
        "max_rhat": float(np.nanmax(summ["r_hat"].to_numpy(dtype=float))),
        "min_ess_bulk": float(np.nanmin(summ["ess_bulk"].to_numpy(dtype=float))),
        "draw_gradients": int(dt["sample_stats"]["n_steps"].sum()),
        "draws": int(dt.attrs["draws"]),
        "checkpoints": json.loads(dt["posterior"].attrs.get("checkpoints", "[]")),
        "health_ok": bool(dt.attrs.get("health_ok")),
        "dimensions": dims,
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


def main(
    data_dir: Path | None = None, write: bool = True, studies: list[str] | None = None
) -> list[dict[str, object]]:
    """Warm the numba cache, fit every study in a fresh process, write the table."""
    data_dir = Path(data_dir) if data_dir is not None else DEFAULT_DATA
    wanted = list(studies or STUDIES)
    found = [s for s in wanted if s == "high_agreement" or (data_dir / s / "data.csv").is_file()]
    missing = [s for s in wanted if s not in found]
    subprocess.run(  # fills numba's disk cache (a tiny fit)
        [
            sys.executable,
            "-c",
            "from raterstats import OrdinalRaters; from raterstats.simulate import "
            "high_agreement_study as h; OrdinalRaters().fit(h(n_questions=3).ratings, "
            "draws=5, tune=5, chains=1, progress=False)",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        capture_output=True,
    )
    results = []
    for study in found:
        res = _run(["--child", study, "--data-dir", str(data_dir)])
        print(res, flush=True)
        results.append(res)
    if write:
        write_section(results, missing)
    return results


def write_section(results: list[dict[str, object]], missing: list[str]) -> None:
    import nutpie

    import raterstats
    from raterstats.models.ordinal import CHECKPOINTS, TUNE

    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"<!-- {MARK}:start -->",
        "## Ordinal rater model: high agreement and real data (issue 19)",
        "",
        "Written by `benchmarks/ordinal.py --real` (`benchmarks/ordinal_real.py`; do not edit "
        "by hand).",
        "",
        f"- date: {now}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; raterstats {raterstats.__version__}, nutpie "
        f"{nutpie.__version__}",
        f"- fit: `OrdinalRaters()` at its defaults (NUTS, 4 chains, {TUNE} tuning steps, "
        "nutpie, compiled density; draws per chain set by the fit's own checks at the "
        f"checkpoints {', '.join(f'{c:,}' for c in CHECKPOINTS)}: the sample stops at the "
        "first where it passes, or where divergences appear; `draws` below), each in a "
        "fresh process after a "
        "warm-up process filled numba's cache; `fit` is the fit call; load = 1-minute load "
        "average at the start / end of the fit (2 cores; the fit's own 4 chain threads "
        "count in it, so up to 4 at the end is the fit itself, and the start shows what ran "
        "before: the previous fit's threads); R-hat and bulk ESS over the diagnosed "
        "parameters (rater facets, system effects, cut-points, scales); `units`: the latent "
        "unit of each dimension, in logits, that the priors are stated in",
        "- per dimension: Kendall's tau-b between the systems' fair averages (posterior means) "
        "and their mean ratings; the range of the fair averages over that of the mean "
        "ratings; Randolph's kappa observed and the 90% interval of "
        f"{PPC_REPLICATES} posterior predictive replicates "
        "(`raterstats.design.compare_designs`); on the simulation, Spearman's rho of the fair "
        "averages with the true system effects",
        "- data: `high_agreement` = `raterstats.simulate.high_agreement_study()` (14 systems x "
        "50 questions, 2-4 of 8 raters per answer, 2 dimensions, Fleiss' kappa 0.84-0.86); "
        "`dialsummeval_campus`, `summeval_op`, `dialsummeval_amt` from `../shared/data`",
        "- reproduce: `python benchmarks/ordinal.py --real` (or `--data-dir DIR`)",
        "",
        "| study | ratings | systems | units | load | fit (s) | draws | divergences | "
        "max R-hat | min bulk ESS | draw gradients | passes its checks |",
        "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        units = ", ".join(f"{u:g}" for u in r["units"])  # type: ignore[attr-defined]
        lines.append(
            f"| `{r['study']}` | {r['ratings']:,} | {r['systems']} | {units} | {r['load']} | "
            f"{float(r['fit_s']):.0f} | {int(r.get('draws', 0)):,} | "  # type: ignore[call-overload]
            f"{r['divergences']} | {float(r['max_rhat']):.3f} | "  # type: ignore[arg-type]
            f"{float(r['min_ess_bulk']):.0f} | {int(r['draw_gradients']):,} | "  # type: ignore[call-overload]
            f"{'yes' if r['health_ok'] else 'no'} |"
        )
    lines += [""] + [
        f"- `{r['study']}`, checkpoints: "
        + "; ".join(f"{x['draws']:,} {x['verdict']}" for x in r.get("checkpoints") or [])  # type: ignore[attr-defined]
        for r in results
    ]
    lines += [
        "",
        "| study | dimension | Kendall tau (fair avg. vs mean rating) | range fair / raw | "
        "kappa observed | kappa predicted (90%) | covers | Spearman vs truth |",
        "|---|---|---:|---:|---:|---|---|---:|",
    ]
    for r in results:
        for d in r["dimensions"]:  # type: ignore[attr-defined]
            cover = d["kappa_low"] <= d["kappa_observed"] <= d["kappa_high"]
            sp = f"{d['spearman_truth']:.3f}" if "spearman_truth" in d else ""
            lines.append(
                f"| `{r['study']}` | {d['dimension']} | {d['kendall_tau']:.3f} | "
                f"{d['fa_range'] / d['raw_range']:.2f} | {d['kappa_observed']:.3f} | "
                f"{d['kappa_low']:.3f}-{d['kappa_high']:.3f} | {'yes' if cover else 'no'} | "
                f"{sp} |"
            )
    if missing:
        lines += ["", "Not found (not run): " + ", ".join(f"`{m}`" for m in missing)]
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
        sys.path.insert(0, str(HERE))
        child(sys.argv[2], Path(sys.argv[4]))
    else:
        sys.exit("run: python benchmarks/ordinal.py --real [--data-dir DIR]")
