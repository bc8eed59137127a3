"""Benchmark: LengthEffect on the built-in study (issue 22: fits under 10 s on a compiled
density, converged at the defaults).

Every fit runs in a fresh Python process on ``clinical_qa_study().ratings`` (22,920
ratings of 300 answers by 7 raters on 3 dimensions x 2 designs), after one warm-up
process that fills numba's on-disk cache:

1. NUTS at the defaults (4 chains x 1,000 draws after 500 tuning steps) on the compiled
   density: the whole fit call's wall time, ``fit_seconds``, the sampling time,
   divergences, max R-hat and min bulk ESS over every posterior variable, and the floor:
   the gradient evaluations of the kept draws (``n_steps``; tuning is not stored) x the
   cost of one log density + gradient (best of 7 x 500 calls at the starting point, the
   kernel alone and through ``Density.logp_grad``), over the 2 cores the chains share;
2. ``method="map"`` on the compiled density (L-BFGS, log-Jacobians included);
3. the peers, the same fits on the PyMC graph (``logp_backend="pymc"``: NUTS by nutpie on
   the compiled PyMC model, and PyMC's ``find_MAP``, the mode without Jacobians), each
   capped by ``--peer-timeout`` seconds (a process that runs past it is killed and
   reported as such).

Each row records the 1-minute load average when its process started and ended (the
machine may be shared). The raw numbers go to ``benchmarks/length_effect_results.json``
and the section between ``<!-- length-effect:start -->`` and ``<!-- length-effect:end -->``
of ``benchmarks/RESULTS.md``.

Run:  python benchmarks/length_effect.py [--peer-timeout 600] [--no-peers] [--rewrite]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
START = "<!-- length-effect:start -->"
END = "<!-- length-effect:end -->"
REPRODUCE = "python benchmarks/length_effect.py"
#: issue 22: LengthEffect fits on the built-in study under this many seconds
TARGET_S = 10.0


def _child(kind: str) -> dict[str, Any]:
    """One fit (or the cost of one evaluation) in this process; returns its numbers."""
    import warnings

    import numpy as np

    load0 = os.getloadavg()[0]
    t_proc = time.perf_counter()
    from raterstats import LengthEffect
    from raterstats.health import parameter_checks
    from raterstats.simulate import clinical_qa_study

    ratings = clinical_qa_study().ratings
    model = LengthEffect()
    out: dict[str, Any] = {"kind": kind, "load_start": load0}
    if kind == "cost":
        from raterstats.models.kernels_length import length_form_logp_grad

        data = model.prepare(ratings)
        d = model.density(data)
        assert d is not None
        x = d.initial_point(np.random.default_rng(0))
        from raterstats.models.length_density import SAMPLING_FORM, length_layout

        lay = length_layout(data, model.default_priors, form=SAMPLING_FORM)
        g = np.empty(d.ndim)
        length_form_logp_grad(x, g, lay.ints, lay.floats)
        d.logp_grad(x)

        def best(fn: Any) -> float:
            times = []
            for _ in range(7):
                t = time.perf_counter()
                for _ in range(500):
                    fn()
                times.append((time.perf_counter() - t) / 500)
            return min(times)

        out["kernel_ms"] = 1e3 * best(lambda: length_form_logp_grad(x, g, lay.ints, lay.floats))
        out["python_ms"] = 1e3 * best(lambda: d.logp_grad(x))
        out["ndim"] = d.ndim
        out["n_terms"] = int(lay.ints[0])
        out["n_ratings"] = int(data.n_obs)
    else:
        method = "map" if kind.endswith("map") else "nuts"
        backend = "pymc" if kind.startswith("pymc") else "auto"
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dt = model.fit(
                ratings, method=method, logp_backend=backend, random_seed=0, progress=False
            )
        out["wall_s"] = time.perf_counter() - t
        out["fit_seconds"] = float(dt.attrs["fit_seconds"])
        out["tune"] = int(dt.attrs.get("tune", 0))
        out["logp_backend"] = dt.attrs["logp_backend"]
        out["warnings"] = [str(w.message)[:200] for w in caught]
        post = dt["posterior"]
        out["sampling_s"] = float(post.attrs.get("sampling_time", float("nan")))
        if method == "nuts":
            ss = dt["sample_stats"]
            pc = parameter_checks(dt, var_names=list(post.data_vars))
            table = pc.table
            out["divergences"] = int(ss["diverging"].sum())
            out["max_rhat"] = float(table["rhat"].max())
            out["min_ess_bulk"] = float(table["ess_bulk"].min())
            out["n_steps_draws"] = int(ss["n_steps"].sum())
            out["mean_tree_depth"] = float(ss["tree_depth"].mean())
            out["health"] = str(dt.attrs.get("health", ""))[:200]
        else:
            out["lp"] = float(dt["sample_stats"]["lp"].item())
            out["converged"] = bool(dt["sample_stats"]["converged"].all())
            out["iterations"] = post.attrs.get("iterations")
        le = post["length_effect"].mean(("chain", "draw"))
        out["length_effect_mean"] = {
            f"{d}/{g}": round(float(le.sel(dimension=d, design=g)), 4)
            for d in le["dimension"].values
            for g in le["design"].values
        }
    out["process_s"] = time.perf_counter() - t_proc
    out["load_end"] = os.getloadavg()[0]
    return out


def _run(kind: str, timeout: float | None) -> dict[str, Any]:
    """``_child(kind)`` in a fresh interpreter (killed after ``timeout`` seconds)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", kind],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return {
            "kind": kind,
            "timed_out": True,
            "timeout_s": timeout,
            "load_start": load0,
            "load_end": os.getloadavg()[0],
        }
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} failed:\n{proc.stderr[-3000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_wall_s"] = time.perf_counter() - t
    return res


def _fmt(v: Any, spec: str = ".1f") -> str:
    return "n/a" if v is None or v != v else format(v, spec)


def section(results: dict[str, Any]) -> str:
    """The RESULTS.md section from the stored results."""
    rows = results["rows"]
    cost = rows.get("cost", {})
    info = results["info"]
    lines = [
        START,
        "## LengthEffect on the built-in study (issue 22)",
        "",
        f"Reproduce: `{REPRODUCE}` (every fit in a fresh process after a warm-up that fills "
        f"numba's cache; peers capped at {results['peer_timeout']} s). Run "
        f"{info['date']} on {info['cpus']} CPUs ({info['machine']}), Python "
        f"{info['python']}.",
        "",
        f"Data: `clinical_qa_study().ratings`, {cost.get('n_ratings', 'n/a')} ratings; the "
        f"compiled density has {cost.get('ndim', 'n/a')} parameters and "
        f"{cost.get('n_terms', 'n/a')} distinct rating terms. One log density + gradient: "
        f"{_fmt(cost.get('kernel_ms'), '.3f')} ms (kernel), "
        f"{_fmt(cost.get('python_ms'), '.3f')} ms through `Density.logp_grad` (load "
        f"{_fmt(cost.get('load_start'), '.2f')}).",
        "",
        "| fit | wall (fit call) s | sampling / optimiser s | divergences | max R-hat | "
        "min bulk ESS | floor s | load start / end |",
        "|---|---|---|---|---|---|---|---|",
    ]
    names = {
        "nuts": "NUTS, compiled density (defaults)",
        "map": "MAP, compiled density",
        "pymc-nuts": "NUTS, PyMC graph (peer)",
        "pymc-map": "MAP, PyMC graph (peer, find_MAP)",
    }
    for kind, label in names.items():
        r = rows.get(kind)
        if r is None:
            continue
        load = f"{_fmt(r.get('load_start'), '.2f')} / {_fmt(r.get('load_end'), '.2f')}"
        if r.get("date", info["date"]) != info["date"]:
            label = f"{label}, run {r['date']}"
        if r.get("timed_out"):
            lines.append(
                f"| {label} | killed after {r['timeout_s']:.0f} s (did not finish) | | | | | "
                f"| {load} |"
            )
            continue
        floor = None
        if kind == "nuts" and cost.get("kernel_ms"):
            floor = r["n_steps_draws"] * cost["kernel_ms"] / 1e3 / 2
        rhat = _fmt(r["max_rhat"], ".3f") if "max_rhat" in r else ""
        ess = _fmt(r["min_ess_bulk"], ".0f") if "min_ess_bulk" in r else ""
        lines.append(
            f"| {label} | {_fmt(r['wall_s'])} | {_fmt(r.get('sampling_s'))} | "
            f"{r.get('divergences', '')} | {rhat} | {ess} | "
            f"{_fmt(floor) if floor is not None else ''} | {load} |"
        )
    nuts = rows.get("nuts", {})
    lines += ["", *targets(rows)]
    lines += [
        "",
        "Floor: gradient evaluations of the kept draws "
        f"({nuts.get('n_steps_draws', 'n/a')}, mean tree depth "
        f"{_fmt(nuts.get('mean_tree_depth'), '.2f')}; the 4 x {nuts.get('tune', 'n/a')} "
        "tuning steps are not "
        "stored and not counted) x the kernel's cost, over 2 cores (compiled density only). "
        "R-hat and ESS are over "
        "every posterior variable. NUTS samples the density's sampling form (centred rater "
        "and question intercepts in a rotated zero-sum basis, cut-points shifted by the "
        "mean intercepts: the same model, see `raterstats.models.length_density."
        "SamplingForm`); the MAP is the mode of the PyMC graph's form on its unconstrained "
        "scale (log-Jacobians included), where PyMC's `find_MAP` takes the mode without "
        "them.",
        "",
        END,
        "",
    ]
    return "\n".join(lines)


def targets(rows: dict[str, Any]) -> list[str]:
    """Issue 22's target, per fit on the compiled density: the fit call under
    :data:`TARGET_S` seconds in a fresh process, converged (NUTS: no divergences, max
    R-hat <= 1.01, min bulk ESS >= 400)."""
    out = []
    for kind, label in (("nuts", "NUTS at the defaults"), ("map", "MAP")):
        r = rows.get(kind)
        if r is None or r.get("timed_out") or "wall_s" not in r:
            out.append(f"- LengthEffect {label} under {TARGET_S:.0f} s: not measured")
            continue
        ok = float(r["wall_s"]) < TARGET_S
        if kind == "nuts":
            ok = ok and (
                int(r.get("divergences", 1)) == 0
                and float(r.get("max_rhat", float("inf"))) <= 1.01
                and float(r.get("min_ess_bulk", 0)) >= 400
            )
        out.append(
            f"- LengthEffect {label} under {TARGET_S:.0f} s (fit call, fresh process"
            + (", converged" if kind == "nuts" else "")
            + f"): {float(r['wall_s']):.1f} s: "
            + ("**met**" if ok else "**NOT met**")
        )
    return out


def update_results(path: Path, text: str) -> None:
    """Replace this benchmark's section of RESULTS.md (or append it)."""
    old = path.read_text() if path.exists() else ""
    if START in old and END in old:
        head, rest = old.split(START, 1)
        _, tail = rest.split(END, 1)
        new = head + text.strip("\n") + tail
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--peer-timeout", type=float, default=600.0)
    parser.add_argument(
        "--no-peers",
        action="store_true",
        help="skip the PyMC peers (minutes); their rows of the last run that had them are "
        "kept, with that run's date",
    )
    parser.add_argument(
        "--rewrite", action="store_true", help="rewrite the RESULTS.md section from the JSON"
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--json", type=Path, default=HERE / "length_effect_results.json")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child)))
        return
    if args.rewrite:
        update_results(args.out, section(json.loads(args.json.read_text())))
        return
    _run("cost", None)  # warm-up: fills numba's cache
    rows: dict[str, Any] = {}
    today = _dt.date.today().isoformat()
    for kind in ("cost", "nuts", "map"):
        rows[kind] = {**_run(kind, None), "date": today}
        print(json.dumps(rows[kind]), flush=True)
    peers = ("pymc-map", "pymc-nuts")
    if not args.no_peers:
        for kind in peers:
            rows[kind] = {**_run(kind, args.peer_timeout), "date": today}
            print(json.dumps(rows[kind]), flush=True)
    elif args.json.exists():  # the peers' rows of the last run that had them, dated
        old = json.loads(args.json.read_text())
        for kind in peers:
            if kind in old["rows"]:
                rows[kind] = {"date": old["info"]["date"], **old["rows"][kind]}
    results = {
        "rows": rows,
        "peer_timeout": args.peer_timeout,
        "info": {
            "date": _dt.date.today().isoformat(),
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
            "python": platform.python_version(),
        },
    }
    args.json.write_text(json.dumps(results, indent=1))
    update_results(args.out, section(results))


if __name__ == "__main__":
    main()
