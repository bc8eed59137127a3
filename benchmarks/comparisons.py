"""Benchmark: the comparison models (issue 20's performance and recovery targets).

Part ``speed`` (``--speed``): every engine in a fresh Python process on the same simulated
data, timed as a whole process (interpreter start, imports, simulation, fit) and as the
fit call alone, with the 1-minute load average when the process started:

1. 100,000 binary comparisons of 20 systems by 50 raters: BradleyTerry MAP (target: fit
   under 5 s on 2 cores) beside our maximum-likelihood Bradley-Terry
   (``comparison_baselines.ml_bradley_terry``), choix (``ilsr_pairwise`` and
   ``opt_pairwise``; the data have no ties, so every judgment is one (winner, loser)
   pair) and the Chatbot Arena recipe (ML Bradley-Terry with a 100-replicate bootstrap,
   ``rank_systems(..., method="bradley_terry_ml", n_boot=100)``);
2. 10,000 comparisons of 20 systems by 50 raters: BradleyTerry NUTS with the defaults
   (4 chains x 1,000 draws; target: under 60 s, 0 divergences, max R-hat <= 1.01, min
   bulk ESS >= 400) beside the same alternatives;
3. 2,000 rankings of 5 of 20 systems by 50 raters: PlackettLuce MAP and NUTS (defaults)
   beside choix (``ilsr_rankings``, ``opt_rankings``) and ML Bradley-Terry on the
   rankings broken into pairs.

Part ``recovery`` (``--recovery``): two study designs fixed before any replicate was run
(:data:`DESIGNS`), 50 replicates each (seeds 0..49): the true order of the systems
against the order of BradleyTerry's posterior mean strengths (NUTS at the defaults, 4 x 1,000;
the MAP order is reported too), win rate, ML Bradley-Terry and Elo; P(exact order), mean
Kendall's tau, P(true best first) with 95% intervals, and paired tests of the model
against each baseline (exact McNemar on exact recovery and on best-first, Wilcoxon
signed-rank on tau).

Both parts keep their raw numbers in ``benchmarks/comparisons_results.json`` and write the
section between ``<!-- comparisons:start -->`` and ``<!-- comparisons:end -->`` of
``benchmarks/RESULTS.md`` (a part not rerun is kept from the JSON).

Older modes, which print JSON lines and write nothing: ``--map-only`` / ``--nuts-only``
(the two BradleyTerry fits, each timed twice in one process); ``--reference`` writes the
model card's reference fit (``models/bradley_terry/reference.json``).

Run:  python benchmarks/comparisons.py --speed --recovery
      python benchmarks/comparisons.py [--map-only | --nuts-only | --reference]
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


# ----------------------------------------------------------------------------- speed

START = "<!-- comparisons:start -->"
END = "<!-- comparisons:end -->"
STORE = HERE / "comparisons_results.json"
REPRODUCE_SPEED = "python benchmarks/comparisons.py --speed"
REPRODUCE_RECOVERY = "python benchmarks/comparisons.py --recovery"

#: the simulated data of the speed tables (``simulate_comparisons`` arguments)
SPEED_DATA: dict[str, dict[str, Any]] = {
    "pairs_100k": {"n_systems": 20, "n_raters": 50, "n_comparisons": 100_000,
                   "position_bias": 0.2, "random_seed": 1},
    "pairs_10k": {"n_systems": 20, "n_raters": 50, "n_comparisons": 10_000,
                  "position_bias": 0.2, "random_seed": 2},
    "rankings_2k": {"kind": "rankings", "n_systems": 20, "n_raters": 50, "n_comparisons": 2000,
                    "ranking_size": 5, "random_seed": 3},
}  # fmt: skip
DATA_TITLES = {
    "pairs_100k": "100,000 binary comparisons of 20 systems by 50 raters (a / b, no ties; "
    "human position bias N(0.2, 0.2))",
    "pairs_10k": "10,000 binary comparisons of 20 systems by 50 raters (a / b, no ties; "
    "human position bias N(0.2, 0.2))",
    "rankings_2k": "2,000 rankings of 5 of 20 systems by 50 raters (no ties)",
}
#: (data, engine) in table order
SPEED_RUNS: list[tuple[str, str]] = [
    *(("pairs_100k", e) for e in ("bt_map", "ml_bt", "choix_ilsr", "choix_opt", "arena")),
    *(("pairs_10k", e) for e in ("bt_nuts", "bt_map", "ml_bt", "choix_ilsr", "choix_opt",
                                   "arena")),
    *(("rankings_2k", e) for e in ("pl_nuts", "pl_map", "ml_bt", "choix_ilsr", "choix_opt")),
]  # fmt: skip
ENGINE_TITLES = {
    "bt_map": "raterstats BradleyTerry, MAP (L-BFGS on the compiled density)",
    "bt_nuts": "raterstats BradleyTerry, NUTS (nutpie, 4 x 1,000, defaults)",
    "pl_map": "raterstats PlackettLuce, MAP (L-BFGS on the compiled density)",
    "pl_nuts": "raterstats PlackettLuce, NUTS (nutpie, 4 x 1,000, defaults)",
    "ml_bt": "raterstats ML Bradley-Terry (`comparison_baselines.ml_bradley_terry`)",
    "choix_ilsr": "choix `ilsr_pairwise` / `ilsr_rankings`",
    "choix_opt": "choix `opt_pairwise` / `opt_rankings` (Newton-CG)",
    "arena": "Chatbot Arena recipe: ML Bradley-Terry + 100-replicate bootstrap "
    '(`rank_systems(..., method="bradley_terry_ml", n_boot=100)`)',
}

CHILD = r"""
import json, sys, time, warnings
t_start = time.perf_counter()
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["repo"])
warnings.simplefilter("ignore")
import numpy as np
from scipy.stats import kendalltau, spearmanr
from raterstats.simulate_comparisons import simulate_comparisons
t0 = time.perf_counter()
sim = simulate_comparisons(**spec["data"])
c = sim.comparisons
out = {"data_s": time.perf_counter() - t0, "n_judgments": c.n_judgments, "kind": c.kind}
systems = [str(s) for s in sim.truth["theta"].system.values]
truth = sim.truth["theta"].isel(dimension=0).values
engine = spec["engine"]


def choix_input():
    idx = {s: i for i, s in enumerate(systems)}
    d = c.data
    if c.kind == "pairs":
        a = [idx[s] for s in d["system_a"].to_list()]
        b = [idx[s] for s in d["system_b"].to_list()]
        o = d["outcome"].to_list()
        out["ties_dropped"] = sum(v == 0 for v in o)
        return [(x, y) if v > 0 else (y, x) for x, y, v in zip(a, b, o) if v != 0]
    data = []
    tied = 0
    for _, g in d.sort(["ranking", "rank"]).group_by("ranking", maintain_order=True):
        r = g["rank"].to_list()
        tied += len(set(r)) < len(r)
        data.append([idx[s] for s in g["system"].to_list()])
    out["tied_rankings"] = tied
    return data


def fit():
    if engine in ("bt_map", "bt_nuts", "pl_map", "pl_nuts"):
        from raterstats import BradleyTerry, PlackettLuce
        model = BradleyTerry() if engine.startswith("bt") else PlackettLuce()
        kw = {"method": "map"} if engine.endswith("map") else {}
        dt = model.fit(c, random_seed=1, progress=False, **kw)
        est = dt.posterior["theta"].mean(("chain", "draw")).isel(dimension=0)
        return dt, est.sel(system=systems).values
    if engine == "ml_bt":
        from raterstats.comparison_baselines import ml_bradley_terry
        return None, ml_bradley_terry(c).isel(dimension=0).sel(system=systems).values
    if engine == "arena":
        from raterstats import rank_systems
        ds = rank_systems(c, method="bradley_terry_ml", n_boot=100, random_seed=1)
        return None, ds["score_mean"].isel(dimension=0).sel(system=systems).values
    import choix
    data = choix_input()
    n = len(systems)
    if engine == "choix_ilsr":
        f = choix.ilsr_pairwise if c.kind == "pairs" else choix.ilsr_rankings
        return None, f(n, data)
    f = choix.opt_pairwise if c.kind == "pairs" else choix.opt_rankings
    return None, f(n, data)


t1 = time.perf_counter()
dt, est = fit()
out["fit_s"] = time.perf_counter() - t1
if not engine.endswith("nuts"):  # the same fit again in the same process (warm)
    t1 = time.perf_counter()
    fit()
    out["refit_s"] = time.perf_counter() - t1
out["kendall_tau"] = float(kendalltau(est, truth).statistic)
out["spearman"] = float(spearmanr(est, truth).statistic)
if dt is not None:
    out["health_ok"] = bool(dt.attrs.get("health_ok", True))
    out["sampling_s"] = float(dt.posterior.attrs.get("sampling_time", float("nan")))
    if engine.endswith("map"):
        out["converged"] = bool(dt["sample_stats"]["converged"].item())
        out["iterations"] = int(dt.posterior.attrs["iterations"])
    else:
        import arviz_stats as azs
        post = dt["posterior"].to_dataset()
        post = post[[v for v in post.data_vars if not str(v).endswith("_z")]]
        rhat, ess = azs.rhat(post), azs.ess(post, method="bulk")
        out["parameters"] = sorted(str(v) for v in post.data_vars)
        out["divergences"] = int(dt["sample_stats"]["diverging"].sum())
        out["max_rhat"] = max(float(np.nanmax(rhat[v].values)) for v in rhat.data_vars)
        out["min_ess_bulk"] = min(float(np.nanmin(ess[v].values)) for v in ess.data_vars)
        out["draws"] = int(dt.attrs["draws"])
        out["tune"] = int(dt.attrs["tune"])
        out["chains"] = int(dt.attrs["chains"])
print("RESULT " + json.dumps(out))
"""

CHILD_WARMUP = r"""
import json, sys, warnings
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["repo"])
warnings.simplefilter("ignore")
from raterstats import BradleyTerry, PlackettLuce
from raterstats.simulate_comparisons import simulate_comparisons
p = simulate_comparisons(n_systems=4, n_raters=5, n_comparisons=200, random_seed=1).comparisons
r = simulate_comparisons(kind="rankings", n_systems=5, n_raters=5, n_comparisons=60,
                         ranking_size=3, random_seed=1).comparisons
for model, data in ((BradleyTerry(), p), (PlackettLuce(), r)):
    model.fit(data, method="map", random_seed=1, progress=False)
    model.fit(data, chains=2, draws=30, tune=30, random_seed=1, progress=False)
print("RESULT {}")
"""


def run_child(code: str, spec: dict[str, Any], timeout: int) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; its ``RESULT`` line, the whole process's wall
    time and the 1-minute load average when it started."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    spec = {**spec, "repo": str(HERE.parent)}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=HERE.parent,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"stopped after {timeout} s", "wall_s": float(timeout), "load": load}
    wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return {**json.loads(line[7:]), "wall_s": wall, "load": load}
    return {"error": (proc.stderr or proc.stdout)[-600:], "wall_s": wall, "load": load}


def part_speed(timeout: int, only: set[str] | None = None) -> dict[str, Any]:
    """Every (data, engine) of :data:`SPEED_RUNS` in its own process (after a warm-up process
    that makes sure the numba kernels are compiled and cached)."""
    warm = run_child(CHILD_WARMUP, {}, timeout)
    rows = []
    for data, engine in SPEED_RUNS:
        if only and engine not in only:
            continue
        spec = {"data": SPEED_DATA[data], "engine": engine}
        row = {"data": data, "engine": engine, **run_child(CHILD, spec, timeout)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return {"date": now(), "machine": machine(), "versions": versions(),
            "warmup_s": warm.get("wall_s"), "warmup_error": warm.get("error"),
            "rows": rows}  # fmt: skip


def merge_speed(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Speed rows: a new row replaces the old row of the same (data, engine); rows not rerun
    are kept; the result is in :data:`SPEED_RUNS` order."""
    rows = {(r["data"], r["engine"]): r for r in old}
    rows.update({(r["data"], r["engine"]): r for r in new})
    order = {k: i for i, k in enumerate(SPEED_RUNS)}
    return sorted(rows.values(), key=lambda r: order.get((r["data"], r["engine"]), 999))


# ----------------------------------------------------------------------------- recovery

#: The two recovery designs, fixed before any replicate was run (not tuned on results).
#: "unequal": raters differ in reliability (log-discrimination sd 0.8, 20% of the humans
#: answer at random) and 2 LLM judges with a strong bias toward the answer shown first;
#: "equal": every rater equally reliable (discrimination 1), no spammers, no position bias.
#: Both: 10 systems (strengths N(0, 1)), 50 questions, 1,500 judgments (a / b / tie,
#: Davidson nu = 0.5), each of a random pair by a random rater, shown order random.
DESIGNS: dict[str, dict[str, Any]] = {
    "unequal": {"n_systems": 10, "n_raters": 30, "n_llm_judges": 2, "n_questions": 50,
                "n_comparisons": 1500, "ties": True, "alpha_sd": 0.8, "spammer_share": 0.2,
                "position_bias": 0.2, "beta_sd": 0.2, "llm_bias": 1.5, "llm_alpha": 1.5},
    "equal": {"n_systems": 10, "n_raters": 32, "n_llm_judges": 0, "n_questions": 50,
              "n_comparisons": 1500, "ties": True, "alpha_sd": 0.0, "spammer_share": 0.0,
              "position_bias": 0.0, "beta_sd": 0.0},
}  # fmt: skip
DESIGN_TITLES = {
    "unequal": "raters differ in reliability: 30 humans (log-discrimination N(0, 0.8), 20% "
    "spammers answering at random, position bias N(0.2, 0.2)) + 2 LLM judges "
    "(discrimination 1.5, position bias 1.5)",
    "equal": "equally reliable raters: 32 humans with discrimination 1, no spammers, no "
    "position bias",
}
#: the orders compared with the truth; the model first
METHODS = ("bt_nuts", "bt_map", "win_rate", "ml_bt", "elo")
METHOD_TITLES = {
    "bt_nuts": "BradleyTerry, posterior mean (NUTS 4 x 1,000, defaults)",
    "bt_map": "BradleyTerry, MAP",
    "win_rate": "win rate",
    "ml_bt": "ML Bradley-Terry",
    "elo": "Elo (k = 4, file order)",
}
BASELINES = ("win_rate", "ml_bt", "elo")
#: the library's defaults (4 chains x 1,000 draws after 500 tuning steps), so that the
#: recovery study ranks with the fits a user gets
NUTS_RECOVERY = {"chains": 4, "draws": 1000, "tune": 500}


def order_metrics(est: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    """How well the order of ``est`` recovers the order of ``truth`` (higher = better):
    exact order, Kendall's tau, true best ranked first.

    Examples
    --------
    >>> order_metrics(np.array([3.0, 1.0, 2.0]), np.array([0.9, 0.1, 0.5]))
    {'exact': True, 'tau': 1.0, 'best_first': True}
    >>> order_metrics(np.array([1.0, 3.0, 2.0]), np.array([0.9, 0.1, 0.5]))["best_first"]
    False
    """
    from scipy.stats import kendalltau

    return {
        "exact": bool(np.array_equal(np.argsort(-est), np.argsort(-truth))),
        "tau": round(float(kendalltau(est, truth).statistic), 6),
        "best_first": bool(np.argmax(est) == np.argmax(truth)),
    }


def recovery_replicate(design: str, seed: int, *, nuts: dict[str, int] | None = None) -> dict:
    """One replicate of a recovery design: the metrics of every order in :data:`METHODS`
    (``nuts=None``: the NUTS settings of :data:`NUTS_RECOVERY`; ``{}``: MAP only)."""
    import warnings

    from raterstats import BradleyTerry
    from raterstats.comparison_baselines import elo, ml_bradley_terry, win_rate
    from raterstats.simulate_comparisons import simulate_comparisons

    nuts = NUTS_RECOVERY if nuts is None else nuts
    sim = simulate_comparisons(**DESIGNS[design], random_seed=seed)
    c = sim.comparisons
    systems = [str(s) for s in sim.truth["theta"].system.values]
    truth = sim.truth["theta"].isel(dimension=0).values

    def values(da: Any) -> np.ndarray:
        return np.asarray(da.isel(dimension=0).sel(system=systems).values, float)

    out: dict[str, Any] = {"design": design, "seed": seed}
    scores: dict[str, np.ndarray] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a flagged fit is recorded below, not hidden
        if nuts:
            t0 = time.perf_counter()
            dt = BradleyTerry().fit(c, random_seed=seed, progress=False, **nuts)
            out["nuts_s"] = round(time.perf_counter() - t0, 2)
            out["divergences"] = int(dt["sample_stats"]["diverging"].sum())
            out["health_ok"] = bool(dt.attrs.get("health_ok", True))
            scores["bt_nuts"] = values(dt.posterior["theta"].mean(("chain", "draw")))
        dm = BradleyTerry().fit(c, method="map", random_seed=seed, progress=False)
        out["map_converged"] = bool(dm["sample_stats"]["converged"].item())
    scores["bt_map"] = values(dm.posterior["theta"].isel(chain=0, draw=0))
    scores["win_rate"] = values(win_rate(c))
    scores["ml_bt"] = values(ml_bradley_terry(c))
    scores["elo"] = values(elo(c))
    for name, est in scores.items():
        out[name] = order_metrics(est, truth)
    return out


def binomial_ci(k: int, n: int) -> tuple[float, float]:
    """The 95% Clopper-Pearson interval of a proportion ``k / n``.

    Examples
    --------
    >>> [round(x, 3) for x in binomial_ci(5, 10)]
    [0.187, 0.813]
    """
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    return float(ci.low), float(ci.high)


def mcnemar(ours: list[bool], theirs: list[bool]) -> dict[str, Any]:
    """Exact McNemar test (a two-sided sign test on the discordant replicates).

    Examples
    --------
    >>> r = mcnemar([True] * 8 + [False] * 2, [False] * 8 + [True] * 2)
    >>> r["ours_only"], r["theirs_only"], round(r["p"], 4)
    (8, 2, 0.1094)
    """
    from scipy.stats import binomtest

    b = sum(o and not t for o, t in zip(ours, theirs, strict=True))
    c = sum(t and not o for o, t in zip(ours, theirs, strict=True))
    p = float(binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0
    return {"ours_only": b, "theirs_only": c, "p": p}


def wilcoxon_tau(ours: list[float], theirs: list[float]) -> dict[str, Any]:
    """Wilcoxon signed-rank test of paired Kendall's tau (zero differences dropped; p = 1
    when every difference is zero).

    Examples
    --------
    >>> r = wilcoxon_tau([0.9, 0.8, 0.7, 0.9, 0.8, 0.6], [0.7, 0.7, 0.5, 0.8, 0.6, 0.5])
    >>> r["mean_diff"], r["p"] < 0.05
    (0.15, True)
    """
    from scipy.stats import wilcoxon

    d = np.asarray(ours, float) - np.asarray(theirs, float)
    p = float(wilcoxon(d).pvalue) if np.any(d != 0) else 1.0
    return {"mean_diff": round(float(d.mean()), 6), "p": p}


def summarize_recovery(reps: list[dict[str, Any]]) -> dict[str, Any]:
    """Per design: each method's P(exact), mean tau, P(best first) with 95% intervals, and
    the model (NUTS and MAP) against each baseline, paired over replicates."""
    from scipy.stats import t as student_t

    out: dict[str, Any] = {}
    for design in DESIGNS:
        rs = [r for r in reps if r["design"] == design]
        if not rs:
            continue
        methods = [m for m in METHODS if all(m in r for r in rs)]
        n = len(rs)
        summ: dict[str, Any] = {"n": n, "methods": {}, "paired": {}}
        for m in methods:
            ex = sum(r[m]["exact"] for r in rs)
            be = sum(r[m]["best_first"] for r in rs)
            tau = np.array([r[m]["tau"] for r in rs])
            half = (
                float(student_t.ppf(0.975, n - 1) * tau.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
            )
            summ["methods"][m] = {
                "exact": ex, "p_exact": ex / n, "exact_ci": binomial_ci(ex, n),
                "tau_mean": float(tau.mean()), "tau_ci": (tau.mean() - half, tau.mean() + half),
                "best": be, "p_best": be / n, "best_ci": binomial_ci(be, n),
            }  # fmt: skip
        for model in ("bt_nuts", "bt_map"):
            if model not in methods:
                continue
            for base in BASELINES:
                summ["paired"][f"{model}|{base}"] = {
                    "exact": mcnemar([r[model]["exact"] for r in rs],
                                     [r[base]["exact"] for r in rs]),
                    "best": mcnemar([r[model]["best_first"] for r in rs],
                                    [r[base]["best_first"] for r in rs]),
                    "tau": wilcoxon_tau([r[model]["tau"] for r in rs],
                                        [r[base]["tau"] for r in rs]),
                }  # fmt: skip
        if "bt_nuts" in methods:
            summ["nuts_flagged"] = sum(not r.get("health_ok", True) for r in rs)
            summ["nuts_divergent"] = sum(r.get("divergences", 0) > 0 for r in rs)
            summ["nuts_s_mean"] = float(np.mean([r["nuts_s"] for r in rs]))
        out[design] = summ
    return out


def part_recovery(replicates: int, *, nuts: bool = True) -> dict[str, Any]:
    """Every design of :data:`DESIGNS` over seeds ``0..replicates-1``."""
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    reps = []
    for design in DESIGNS:
        for seed in range(replicates):
            r = recovery_replicate(design, seed, nuts=None if nuts else {})
            reps.append(r)
            print(json.dumps(r), flush=True)
    return {
        "date": now(), "machine": machine(), "versions": versions(), "load_start": load0,
        "load_end": os.getloadavg()[0], "wall_s": time.perf_counter() - t0,
        "replicates": replicates, "nuts": NUTS_RECOVERY if nuts else None,
        "designs": DESIGNS, "reps": reps,
    }  # fmt: skip


# ----------------------------------------------------------------------------- report


def now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def machine() -> str:
    """CPU model, cores and operating system."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def versions() -> str:
    """Python and the versions of the packages the benchmark runs."""
    import importlib.metadata as md

    parts = [f"Python {platform.python_version()}"]
    for pkg in ("raterstats", "numpy", "scipy", "numba", "pymc", "nutpie", "choix"):
        try:
            parts.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            if pkg == "raterstats":
                import raterstats

                parts.append(f"raterstats {raterstats.__version__}")
            else:
                parts.append(f"{pkg} not installed")
    return ", ".join(parts)


def _f(v: Any, fmt: str = ".2f") -> str:
    """``v`` formatted, ``-`` when missing or not finite."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    return format(v, fmt)


def _notes(r: dict[str, Any]) -> str:
    if "error" in r:
        return "failed: " + " ".join(str(r["error"]).split())[-200:].replace("|", "/")
    notes = []
    if "divergences" in r:
        notes.append(
            f"{r['chains']} x {r['draws']} draws after {r['tune']} tuning; "
            f"{r['divergences']} divergences, max R-hat {r['max_rhat']:.4f}, min bulk ESS "
            f"{r['min_ess_bulk']:.0f}; sampling {r['sampling_s']:.1f} s"
        )
    if "iterations" in r:
        notes.append(f"{'converged' if r['converged'] else 'NOT converged'}, "
                     f"{r['iterations']} iterations")  # fmt: skip
    if "health_ok" in r and not r["health_ok"]:
        notes.append("fit flagged by its checks")
    if "ties_dropped" in r:
        notes.append(f"{r['ties_dropped']} ties dropped")
    if "tied_rankings" in r:
        notes.append(f"{r['tied_rankings']} rankings with ties")
    return "; ".join(notes)


def process_wall(r: dict[str, Any]) -> float | None:
    """The whole process's wall time without the repeated fit (``refit``) that the process
    ran after the timed one: the time a user's fresh process takes for one fit."""
    if "wall_s" not in r:
        return None
    return float(r["wall_s"]) - float(r.get("refit_s", 0.0))


def _speed_row(rows: list[dict[str, Any]], data: str, engine: str) -> dict[str, Any]:
    return next((r for r in rows if r["data"] == data and r["engine"] == engine), {})


def speed_targets(rows: list[dict[str, Any]]) -> list[str]:
    """The issue's two performance targets, each stated as met or NOT met."""
    out = []
    m = _speed_row(rows, "pairs_100k", "bt_map")
    if not m or "error" in m:
        out.append("- BradleyTerry MAP on 100,000 comparisons under 5 s: **not measured** "
                   f"({m.get('error', 'not run') if m else 'not run'})")  # fmt: skip
    else:
        ok = m["fit_s"] < 5 and m["converged"]
        out.append(
            f"- BradleyTerry MAP on 100,000 comparisons under 5 s: fit {m['fit_s']:.1f} s in a "
            f"fresh process (repeated in the same process {m['refit_s']:.1f} s; whole process "
            f"{process_wall(m):.1f} s; load {m['load']:.1f}; optimiser "
            f"{'converged' if m['converged'] else 'NOT converged'}): "
            f"**{'met' if ok else 'NOT met'}**"
        )
    n = _speed_row(rows, "pairs_10k", "bt_nuts")
    if not n or "error" in n:
        out.append("- BradleyTerry NUTS on 10,000 comparisons under 60 s, converged: **not "
                   f"measured** ({n.get('error', 'not run') if n else 'not run'})")  # fmt: skip
    else:
        fails = []
        if n["fit_s"] >= 60:
            fails.append("time")
        if n["divergences"] > 0:
            fails.append("divergences")
        if n["max_rhat"] > 1.01:
            fails.append("R-hat")
        if n["min_ess_bulk"] < 400:
            fails.append("ESS")
        out.append(
            f"- BradleyTerry NUTS (4 x 1,000, defaults) on 10,000 comparisons of 20 systems by "
            f"50 raters under 60 s, converged (0 divergences, max R-hat <= 1.01, min bulk ESS "
            f">= 400): fit {n['fit_s']:.1f} s (whole process {process_wall(n):.1f} s; load "
            f"{n['load']:.1f}), {n['divergences']} divergences, max R-hat {n['max_rhat']:.4f}, "
            f"min bulk ESS {n['min_ess_bulk']:.0f}: "
            + ("**met**" if not fails else f"**NOT met** ({', '.join(fails)})")
        )
    return out


def speed_markdown(sp: dict[str, Any]) -> list[str]:
    rows = sp["rows"]
    lines = [
        "## Speed",
        "",
        f"- date: {sp['date']}",
        f"- machine: {sp['machine']}",
        f"- {sp['versions']}",
        "- every engine runs in a fresh Python process on the same simulated data "
        "(`simulate_comparisons`, arguments below); `wall` is the whole process (interpreter "
        "start, imports, simulation, fit, summaries; without the repeated fit); `fit` is the "
        "fit call alone (for "
        "raterstats' models it includes loading the numba kernels from the disk cache, which a "
        f"warm-up process filled first: {_f(sp.get('warmup_s'), '.1f')} s); `refit` is the "
        "same fit repeated in the same process; `load` is the 1-minute load average when the "
        "process started (2 cores: above 2 means other processes competed for the CPU, so "
        "the times are pessimistic)",
        "- tau / rho: Kendall's / Spearman's correlation of the estimated strengths with the "
        "simulated truth; choix's estimates are its own (ML, no rater or position terms)",
        f'- reproduce (from a clone, `pip install -e ".[test]"` brings choix): `{REPRODUCE_SPEED}`',
        "",
        "### Targets",
        "",
        *speed_targets(rows),
        "",
    ]
    for data in SPEED_DATA:
        sub = [r for r in rows if r["data"] == data]
        if not sub:
            continue
        args = ", ".join(f"{k}={v!r}" for k, v in SPEED_DATA[data].items())
        lines += [
            f"### {DATA_TITLES[data]}",
            "",
            f"`simulate_comparisons({args})`",
            "",
            "| engine | load | wall (s) | fit (s) | refit (s) | tau | rho | notes |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in sub:
            lines.append(
                f"| {ENGINE_TITLES[r['engine']]} | {_f(r.get('load'), '.1f')} | "
                f"{_f(process_wall(r), '.1f')} | {_f(r.get('fit_s'), '.2f')} | "
                f"{_f(r.get('refit_s'), '.2f')} | {_f(r.get('kendall_tau'), '.3f')} | "
                f"{_f(r.get('spearman'), '.4f')} | {_notes(r)} |"
            )
        lines.append("")
    return lines


def _ci(lo_hi: Any, fmt: str = ".2f") -> str:
    return f"[{format(lo_hi[0], fmt)}, {format(lo_hi[1], fmt)}]"


def recovery_verdicts(summary: dict[str, Any]) -> list[str]:
    """The acceptance point (the model recovers the true order more often than win rate and
    ML Bradley-Terry where raters differ in reliability) and the check that the model is not
    worse where they do not, stated as met or NOT met."""
    out = []

    def model_of(d: dict[str, Any]) -> str:
        return "bt_nuts" if "bt_nuts" in d["methods"] else "bt_map"

    u = summary.get("unequal")
    if u:
        model = model_of(u)
        mm = u["methods"][model]
        parts, better, signif = [], True, True
        for base in ("win_rate", "ml_bt"):
            bm = u["methods"][base]
            p = u["paired"][f"{model}|{base}"]["exact"]["p"]
            parts.append(f"{METHOD_TITLES[base]} {bm['exact']}/{u['n']} (McNemar p = {p:.3g})")
            better &= mm["exact"] > bm["exact"]
            signif &= p < 0.05
        verdict = (
            "**met**" if better and signif
            else "**met in the point estimates, not significant at 5%**" if better
            else "**NOT met**"
        )  # fmt: skip
        out.append(
            f"- raters differ in reliability: exact true order recovered by "
            f"{METHOD_TITLES[model]} in {mm['exact']}/{u['n']} replicates vs "
            + ", ".join(parts)
            + f": {verdict}"
        )
        taus = []
        for base in ("win_rate", "ml_bt"):
            t = u["paired"][f"{model}|{base}"]["tau"]
            taus.append(f"{METHOD_TITLES[base]} {t['mean_diff']:+.3f} (Wilcoxon p = {t['p']:.3g})")
        out.append(
            f"- raters differ in reliability, Kendall's tau with the true order: "
            f"{METHOD_TITLES[model]} {mm['tau_mean']:.3f}; mean paired difference against "
            + ", ".join(taus)
        )
    e = summary.get("equal")
    if e:
        model = model_of(e)
        worse = []
        for base in BASELINES:
            pr = e["paired"][f"{model}|{base}"]
            if pr["tau"]["mean_diff"] < 0 and pr["tau"]["p"] < 0.05:
                worse.append(f"tau below {METHOD_TITLES[base]}")
            if pr["exact"]["theirs_only"] > pr["exact"]["ours_only"] and pr["exact"]["p"] < 0.05:
                worse.append(f"exact order less often than {METHOD_TITLES[base]}")
        out.append(
            "- equally reliable raters, the model not worse than the baselines (no baseline "
            "significantly better at 5% on tau or exact order): "
            + ("**met**" if not worse else f"**NOT met** ({'; '.join(worse)})")
        )
    return out


def recovery_markdown(rc: dict[str, Any]) -> list[str]:
    summary = summarize_recovery(rc["reps"])
    nuts = rc.get("nuts")
    lines = [
        "## Recovery of the true order over replicates",
        "",
        f"- date: {rc['date']}",
        f"- machine: {rc['machine']}; 1-minute load average {rc['load_start']:.1f} at the "
        f"start, {rc['load_end']:.1f} at the end; {rc['wall_s'] / 60:.1f} min in all",
        f"- {rc['versions']}",
        "- designs, fixed before any replicate was run (not tuned on the results), each "
        f"simulated with seeds 0..{rc['replicates'] - 1}: "
        + "; ".join(
            f"**{d}**: {DESIGN_TITLES[d]} (`simulate_comparisons("
            + ", ".join(f"{k}={v!r}" for k, v in rc["designs"][d].items())
            + ", random_seed=seed)`)"
            for d in rc["designs"]
        ),
        "- orders compared with the true order of the strengths: BradleyTerry() with its "
        + (
            f"default priors, posterior mean strengths by NUTS ({nuts['chains']} chains x "
            f"{nuts['draws']} draws after {nuts['tune']} tuning steps) and the MAP strengths; "
            if nuts
            else "default priors, MAP strengths (NUTS not run); "
        )
        + "win rate and ML Bradley-Terry (ties as half a win each), Elo (`elo()`: the Chatbot "
        "Arena's online Elo, k = 4, judgments in file order)",
        "- P(exact order): all 10 systems in the true order; P(best first): the truly best "
        "system ranked first; 95% Clopper-Pearson intervals; mean Kendall's tau with a 95% "
        "t interval; paired tests of the model against each baseline over the same "
        "replicates: exact McNemar (two-sided sign test on the replicates where exactly one "
        "of the two succeeds) and Wilcoxon signed-rank on tau (zero differences dropped)",
        f"- reproduce: `{REPRODUCE_RECOVERY}` (`--replicates N` for fewer; "
        "`--recovery-map-only` without NUTS)",
        "",
        "### Acceptance",
        "",
        *recovery_verdicts(summary),
        "",
    ]
    for design, s in summary.items():
        lines += [f'### Design "{design}": {DESIGN_TITLES[design]}', ""]
        if "nuts_flagged" in s:
            lines += [
                f"NUTS fits: {s['nuts_flagged']} of {s['n']} flagged by the model's convergence "
                f"checks (0 divergences, R-hat <= 1.01, bulk / tail ESS >= 400), "
                f"{s['nuts_divergent']} with divergences; {s['nuts_s_mean']:.1f} s per fit on "
                "average.",
                "",
            ]
        lines += [
            "| order from | P(exact order) [95% CI] | mean Kendall's tau [95% CI] | "
            "P(true best first) [95% CI] |",
            "|---|---|---|---|",
        ]
        for m, v in s["methods"].items():
            lines.append(
                f"| {METHOD_TITLES[m]} | {v['exact']}/{s['n']} = {v['p_exact']:.2f} "
                f"{_ci(v['exact_ci'])} | {v['tau_mean']:.3f} {_ci(v['tau_ci'], '.3f')} | "
                f"{v['best']}/{s['n']} = {v['p_best']:.2f} {_ci(v['best_ci'])} |"
            )
        lines += [
            "",
            "| model vs baseline | exact order: model only / baseline only, McNemar p | "
            "best first: model only / baseline only, McNemar p | tau: mean difference, "
            "Wilcoxon p |",
            "|---|---|---|---|",
        ]
        for key, pr in s["paired"].items():
            model, base = key.split("|")
            ex, be, ta = pr["exact"], pr["best"], pr["tau"]
            lines.append(
                f"| {METHOD_TITLES[model]} vs {METHOD_TITLES[base]} | {ex['ours_only']} / "
                f"{ex['theirs_only']}, p = {ex['p']:.3g} | {be['ours_only']} / "
                f"{be['theirs_only']}, p = {be['p']:.3g} | {ta['mean_diff']:+.3f}, "
                f"p = {ta['p']:.3g} |"
            )
        lines.append("")
    return lines


def to_markdown(res: dict[str, Any]) -> str:
    """The section of RESULTS.md, between its markers, from the stored results."""
    lines = [
        START,
        "# Comparison models (BradleyTerry, PlackettLuce)",
        "",
        "Written by `benchmarks/comparisons.py` from `benchmarks/comparisons_results.json` "
        "(do not edit by hand; rerun it).",
        "",
    ]
    if "speed" in res:
        lines += speed_markdown(res["speed"])
    if "recovery" in res:
        lines += recovery_markdown(res["recovery"])
    lines += [END, ""]
    return "\n".join(lines)


def update_results(path: Path, section: str, start: str = START, end: str = END) -> None:
    """Replace the text between ``start`` and ``end`` in ``path`` (markers included) by
    ``section``, or append it; the rest of the file is left as it is."""
    text = path.read_text() if path.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + section.strip("\n") + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", action="store_true", help="the speed tables")
    parser.add_argument("--engines", default="", help="speed engines to rerun (default all)")
    parser.add_argument("--recovery", action="store_true", help="the recovery study")
    parser.add_argument("--replicates", type=int, default=50)
    parser.add_argument("--recovery-map-only", action="store_true",
                        help="recovery without NUTS (MAP orders only)")  # fmt: skip
    parser.add_argument("--timeout", type=int, default=600, help="limit (s) per process")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--write-only", action="store_true",
                        help="rewrite the RESULTS.md section from the JSON")  # fmt: skip
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--map-only", action="store_true")
    parser.add_argument("--nuts-only", action="store_true")
    parser.add_argument("--reference", action="store_true")
    args = parser.parse_args()
    if args.reference:
        path = HERE.parent / "models" / "bradley_terry" / "reference.json"
        path.write_text(json.dumps(reference_fit(), indent=1) + "\n")
        print(f"wrote {path}")
        return
    if args.map_only or args.nuts_only:
        info = {"cpus": os.cpu_count(), "load": os.getloadavg()}
        if not args.nuts_only:
            print(json.dumps({**bench_map(), **info}))
        if not args.map_only:
            print(json.dumps({**bench_nuts(), **info}))
        return
    if not (args.speed or args.recovery or args.write_only):
        parser.error("say what to run: --speed, --recovery, --write-only (or --map-only ...)")
    store = args.out.parent / STORE.name
    res: dict[str, Any] = json.loads(store.read_text()) if store.exists() else {}
    if args.speed:
        only = {e.strip() for e in args.engines.split(",") if e.strip()} or None
        new = part_speed(args.timeout, only)
        if only and "speed" in res:
            new["rows"] = merge_speed(res["speed"]["rows"], new["rows"])
        res["speed"] = new
    if args.recovery:
        res["recovery"] = part_recovery(args.replicates, nuts=not args.recovery_map_only)
    md = to_markdown(res)
    print(md)
    if not args.no_write:
        store.write_text(json.dumps(res, indent=1, default=float) + "\n")
        update_results(args.out, md)


if __name__ == "__main__":
    main()
