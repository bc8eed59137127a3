"""Benchmark raterstats' categorical annotator models against crowd-kit and plain PyMC.

Part 1 (speed, simulated from MACE): 300 items x 3 raters; 2,800 items x 3 raters from a
pool of 20 on 3 dimensions (hierarchical MACE, the ArchEHR-like study); 50,000 items x 5
raters from a pool of 500; 500,000 items x 3 raters from a pool of 2,000 (EM only). Each
engine runs in a fresh Python process, so NUTS times include imports and compilation (a
cold start; raterstats' compiled densities are numba-cached on disk after the first run
ever, which the first row of each table reports separately). Reported: wall time, label
accuracy, mean absolute competence error, max R-hat, min bulk ESS, divergences, ESS/s.

Part 2 (accuracy, real data in ``../shared/data``): the best of raterstats' MACE and
Dawid-Skene by EM and NUTS against crowd-kit's DawidSkene and MACE, and the log loss of
P(true label) against gold for EM and NUTS (calibration).

crowd-kit is not a dependency of the package: it installs on Python 3.12 beside it, with the
``bench`` extra (``pip install -e .[bench]``), and runs in the same environment by default
(a fresh process of the current interpreter, as for our engines); ``--crowdkit-python``
names another interpreter. Its rows are skipped with a message saying how to install it
when that interpreter cannot import it.

Run (every table in RESULTS.md names the command that reproduces it)::

    python benchmarks/categorical.py                      # full run, updates RESULTS.md
    python benchmarks/categorical.py --quick              # small sizes, prints only
    python benchmarks/categorical.py --parts speed --engines em,crowdkit-ds
                                      # EM and crowd-kit DS rows at every size (merged)
    python benchmarks/categorical.py --parts speed --sizes 500000x3 --engines em,crowdkit-ds

The results go into the ``Categorical models`` section of ``benchmarks/RESULTS.md``
(between markers; the rest of the file is left as it is).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
DATA_ROOT = REPO.parent / "shared" / "data"
START = "<!-- categorical:start -->"
END = "<!-- categorical:end -->"

# ----------------------------------------------------------------------------- simulation


def simulate_mace(
    n_items: int, n_per: int, pool: int, *, K: int = 3, seed: int = 0
) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """Ratings from the MACE generative model: competence ~ Beta(8, 2) (10% spammers with
    Beta(2, 6)), spam distributions ~ Dirichlet(1), prevalence (0.5, 0.3, 0.2)."""
    rng = np.random.default_rng(seed)
    prev = np.array([0.5, 0.3, 0.2])[:K]
    prev = prev / prev.sum()
    truth = rng.choice(K, n_items, p=prev)
    comp = rng.beta(8, 2, pool)
    spam_r = rng.random(pool) < 0.1
    comp[spam_r] = rng.beta(2, 6, spam_r.sum())
    spam = rng.dirichlet(np.ones(K), pool)
    if n_per == pool:
        raters = np.tile(np.arange(pool), (n_items, 1))
    else:  # distinct raters per item
        raters = rng.integers(0, pool, (n_items, n_per))
        for _ in range(50):
            srt = np.sort(raters, axis=1)
            dup = (np.diff(srt, axis=1) == 0).any(axis=1)
            if not dup.any():
                break
            raters[dup] = rng.integers(0, pool, (int(dup.sum()), n_per))
    item = np.repeat(np.arange(n_items), n_per)
    rater = raters.ravel()
    ok = rng.random(item.size) < comp[rater]
    cum = np.cumsum(spam[rater], axis=1)
    draw = np.minimum((rng.random((item.size, 1)) > cum).sum(axis=1), K - 1)
    label = np.where(ok, truth[item], draw)
    frame = pl.DataFrame(
        {
            "item": np.char.add("i", item.astype(str)),
            "rater": np.char.add("r", rater.astype(str)),
            "rating": label.astype(str),
        }
    )
    return frame, truth, comp


# ----------------------------------------------------------------------------- child runs

CHILD_OURS = r"""
import json, sys, time
t0 = time.perf_counter()


def plain_pymc_mace(data, hierarchical):
    # MACE as a PyMC user writes it: one likelihood term per rating and true class,
    # summed into items, log-sum-exp over the class; same priors and parametrisation
    # (non-centred zero-sum rater and cell effects) as raterstats' MACE, no pattern
    # compression
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C = R * D * G
    coords = {"rater": list(data.raters), "dimension": list(data.dimensions),
              "design": list(data.designs), "category": list(range(K))}
    with pm.Model(coords=coords) as m:
        if hierarchical:
            beta = pm.Normal("competence_cell_mean", 1.0, 1.5, shape=D * G)
            s_u = pm.HalfNormal("rater_sd", 1.0)
            z_u = pm.ZeroSumNormal("rater_z", 1.0, shape=R)
            eta = beta[np.arange(C) % (D * G)] + s_u * z_u[np.arange(C) // (D * G)]
            if D * G > 1:
                s_v = pm.HalfNormal("cell_sd", 0.5)
                z_v = pm.ZeroSumNormal("cell_z", 1.0, n_zerosum_axes=2, shape=(R, D * G))
                eta = eta + s_v * z_v.reshape((C,))
            theta = pm.math.sigmoid(eta)
        else:
            theta = pm.Beta("theta", 0.5, 0.5, shape=C)
        cdims = ("rater", "dimension", "design")
        pm.Deterministic("competence", theta.reshape((R, D, G)), dims=cdims)
        sdims = ("rater", "dimension", "category")
        spam = pm.Dirichlet("spam", a=np.full((R, D, K), 10.0), dims=sdims)
        prev = pm.Dirichlet("prevalence", a=np.ones((D, K)), dims=("dimension", "category"))
        th = theta[data.cell][:, None]
        xi = spam[data.rater, data.dim, data.code][:, None]
        hit = (data.code[:, None] == np.arange(K)[None, :]).astype(float)
        lp = pt.log(th * hit + (1.0 - th) * xi)  # (ratings, K)
        per_unit = pt.zeros((data.n_units, K))[data.unit].inc(lp)
        joint = per_unit + pt.log(prev)[data.unit_dim]
        pm.Potential("loglik", pm.math.logsumexp(joint, axis=1).sum())
    return m
import numpy as np, polars as pl
import raterstats
from raterstats import MACE, DawidSkene, NominalScale, read_ratings, item_posterior, diagnose
t_import = time.perf_counter() - t0
spec = json.loads(sys.argv[1])
out = {"import_s": t_import}
t1 = time.perf_counter()
if spec["data"] == "archehr":
    from raterstats.simulate import archehr_like_study
    s = archehr_like_study(random_seed=spec["seed"])
    r = s.ratings
    truth_lab = s.truth["true_label"]
    truth_comp = s.truth["competence"]
else:
    frame = pl.read_parquet(spec["data"])
    r = read_ratings(frame, scale=NominalScale([str(k) for k in range(spec["K"])]))
    truth = np.load(spec["truth"])
    comp_true = np.load(spec["competence"])
out["ingest_s"] = time.perf_counter() - t1
model = {"mace": MACE, "ds": DawidSkene}[spec["model"]](**spec.get("options", {}))
t2 = time.perf_counter()
if spec["engine"] == "pymc_default":
    import pymc as pm
    pmodel = plain_pymc_mace(model.prepare(r), hierarchical=model.is_hierarchical(model.prepare(r)))
    raw = pm.sample(model=pmodel, chains=4, random_seed=spec["seed"], progressbar=False,
                    compute_convergence_checks=False)
    dtree = model.fit(r, method="em", random_seed=1)  # only for the data groups
    data = model.prepare(r)
    post = raw["posterior"].to_dataset()
    prob, _ = model.draws_summary(post, data, loglik=False)
    p_unit = prob[data.unit_pattern]
    out["fit_s"] = time.perf_counter() - t2
    import xarray as xr
    dtree["posterior"] = xr.DataTree(post)
    dtree["sample_stats"] = xr.DataTree(raw["sample_stats"].to_dataset())
    dtree.attrs["method"] = "nuts"
    dtree["label_posterior"]["prob"].values[:] = p_unit
    fit = dtree
else:
    kw = {"random_seed": spec["seed"], "progress": False}
    if spec["engine"] == "em":
        kw["method"] = "em"
    else:
        kw.update(sampler=spec["engine"], draws=1000, tune=500, chains=4)
    fit = model.fit(r, log_likelihood=False, **kw)
    out["fit_s"] = time.perf_counter() - t2
post = item_posterior(fit)
if spec["data"] == "archehr":
    lab = post["map_code"]
    tl = truth_lab.sel(item=lab["item"], dimension=lab["dimension"])
    out["accuracy"] = float((lab == tl).mean())
else:
    lab = post["map_code"].isel(dimension=0).values
    idx = np.array([int(x[1:]) for x in post["item"].values])
    out["accuracy"] = float(np.mean(lab == truth[idx]))
if spec["model"] == "mace":
    c = fit.posterior["competence"].mean(("chain", "draw")).isel(design=0)
    if spec["data"] == "archehr":
        ct = truth_comp.sel(rater=c["rater"], dimension=c["dimension"])
        out["competence_mae"] = float(abs(c - ct).mean())
    else:
        ridx = np.array([int(x[1:]) for x in c["rater"].values])
        out["competence_mae"] = float(np.mean(np.abs(c.isel(dimension=0).values - comp_true[ridx])))
if spec["engine"] != "em":
    d = diagnose(fit, warn=False)
    out["rhat_max"] = float(d.parameters["rhat"].max())
    out["ess_bulk_min"] = float(d.parameters["ess_bulk"].min())
    out["divergences"] = int(d.divergences)
out["total_in_process_s"] = time.perf_counter() - t0
print("RESULT " + json.dumps(out))
"""

CHILD_CROWDKIT = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np, pandas as pd
from crowdkit.aggregation import DawidSkene, MACE
t_import = time.perf_counter() - t0
spec = json.loads(sys.argv[1])
df = pd.read_parquet(spec["data"]).rename(columns={"item": "task", "rater": "worker"})
res = {"import_s": t_import}
from importlib import metadata
res["version"] = metadata.version("crowd-kit")
t1 = time.perf_counter()
model = DawidSkene(n_iter=100) if spec["model"] == "ds" else MACE()
probas = model.fit(df[["task", "worker", "label"]]).probas_
res["fit_s"] = time.perf_counter() - t1
labels = probas.idxmax(axis=1)
res["labels"] = {str(k): str(v) for k, v in labels.items()}
res["probas"] = None
if spec.get("probas"):
    res["probas"] = {
        str(k): {str(c): float(p) for c, p in row.items()} for k, row in probas.iterrows()
    }
print("RESULT " + json.dumps(res))
"""


CHILD_EM_DETAIL = r"""
import json, sys, time
import numpy as np, polars as pl
from raterstats import MACE, DawidSkene, NominalScale, read_ratings
spec = json.loads(sys.argv[1])
r = read_ratings(pl.read_parquet(spec["data"]),
                 scale=NominalScale([str(k) for k in range(spec["K"])]))
model = {"mace": MACE, "ds": DawidSkene}[spec["model"]]()
data = model.prepare(r)
model.fit_em(data, random_seed=spec["seed"], progress=False)  # numba loaded, kernels cached
t0 = time.perf_counter()
fit = model.fit_em(data, random_seed=spec["seed"], progress=False)
em_s = time.perf_counter() - t0
st = fit["sample_stats"].attrs
iters = json.loads(st["restart_iterations"])
t0 = time.perf_counter()  # one run from the majority vote on all the data: its iterations
one = model.fit_em(data, random_seed=spec["seed"], progress=False, restarts=1)
one_s = time.perf_counter() - t0
n_one = int(one["sample_stats"]["n_iterations"].item())
lay = model.table_layout(data)
q = np.full((data.n_patterns, data.K), 0.5)
arrays = (lay.p_e, lay.p_start, lay.pattern_dim, lay.pattern_w, lay.mask, q)
best = float("inf")
for _ in range(20):  # one memory pass: every array an EM iteration reads, summed once
    t0 = time.perf_counter()
    for a in arrays:
        a.sum()
    best = min(best, time.perf_counter() - t0)
out = {"em_loop_s": em_s, "em_iterations": iters[st["best_restart"]],
       "sub_iterations": sum(iters) - iters[st["best_restart"]],
       "restart_units": st["restart_units"], "s_per_iter": one_s / (n_one + 1),
       "pass_s": best, "pass_mb": sum(a.nbytes for a in arrays) / 1e6,
       "pattern_ratings": int(lay.p_e.size), "patterns": int(data.n_patterns)}
print("RESULT " + json.dumps(out))
"""


def run_child(python: str, code: str, spec: dict[str, Any], timeout: int) -> dict[str, Any]:
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    env = dict(os.environ)
    try:
        proc = subprocess.run(
            [python, "-c", code, json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"stopped after {timeout} s", "wall_s": float(timeout), "load": load}
    wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
            res["wall_s"] = wall
            res["load"] = load
            return res
    return {"error": (proc.stderr or proc.stdout)[-600:], "wall_s": wall, "load": load}


# ----------------------------------------------------------------------------- part 1


SIZE_ORDER = [
    "300 x 3",
    "2,800 x 3 x 3 dims (pool 20)",
    "50,000 x 5 (pool 500)",
    "500,000 x 3 (pool 2,000)",
]

#: row order of the speed table within a size
ENGINE_ORDER = [
    "raterstats EM",
    "raterstats NUTS (nutpie",
    "raterstats NUTS (numpyro",
    "same MACE written in plain PyMC",
    "crowd-kit",
]

CHILD_WARMUP = r"""
from raterstats import MACE, DawidSkene
from raterstats.simulate import archehr_like_study
r = archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings
for m in (MACE(), MACE(hierarchical=False), DawidSkene()):
    m.fit(r, method="em", random_seed=1)
    m.fit(r, draws=20, tune=20, chains=2, random_seed=1, progress=False)
print("RESULT {}")
"""


def part_speed(args: argparse.Namespace, tmp: Path) -> list[dict[str, Any]]:
    py = sys.executable
    # make sure every numba kernel is compiled and cached before anything is timed
    run_child(py, CHILD_WARMUP, {}, timeout=args.timeout)
    sizes = [
        ("300 x 3", {"n_items": 300, "n_per": 3, "pool": 3}),
        ("2,800 x 3 x 3 dims (pool 20)", "archehr"),
        ("50,000 x 5 (pool 500)", {"n_items": 50_000, "n_per": 5, "pool": 500}),
        ("500,000 x 3 (pool 2,000)", {"n_items": 500_000, "n_per": 3, "pool": 2000}),
    ]
    if args.quick:
        sizes = [sizes[0], ("5,000 x 3 (pool 50)", {"n_items": 5000, "n_per": 3, "pool": 50})]
    elif args.sizes:
        keep = {k.strip().split("x")[0] for k in args.sizes.split(",")}
        sizes = [sz for sz in sizes if sz[0].split()[0].replace(",", "") in keep]
    run_id = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    rows = []
    for label, cfg in sizes:
        big = label.startswith("500,000")
        # the slow comparators (PyMC-compiled graphs) get a shorter limit at 50,000 items
        slow_timeout = args.slow_timeout if label.startswith("50,000") else args.timeout
        if cfg == "archehr":
            data_spec: dict[str, Any] = {"data": "archehr", "K": 3}
            from raterstats.simulate import archehr_like_study

            s = archehr_like_study(random_seed=1)
            frames = {
                d: s.ratings.filter(dimension=d).data.select("item", "rater", "rating")
                for d in s.ratings.dimensions
            }
            level_maps = {d: list(s.ratings.scale_for(d).levels) for d in s.ratings.dimensions}
            truth_ck = {
                d: dict(
                    zip(
                        s.truth["item"].values.tolist(),
                        [
                            str(level_maps[d][k])
                            for k in s.truth["true_label"].sel(dimension=d).values
                        ],
                        strict=True,
                    )
                )
                for d in s.ratings.dimensions
            }
        else:
            frame, truth, comp = simulate_mace(seed=1, **cfg)  # type: ignore[arg-type]
            path = tmp / f"{label.split()[0].replace(',', '')}.parquet"
            frame.write_parquet(path)
            np.save(tmp / "truth.npy", truth)
            np.save(tmp / "comp.npy", comp)
            data_spec = {
                "data": str(path),
                "K": 3,
                "truth": str(tmp / "truth.npy"),
                "competence": str(tmp / "comp.npy"),
            }
            frames = {"single": frame}
            truth_ck = {"single": {f"i{i}": str(t) for i, t in enumerate(truth)}}
        engines: list[tuple[str, str, str, dict[str, Any]]] = [
            ("raterstats EM", "mace", "em", {}),
            ("raterstats EM", "ds", "em", {}),
        ]
        if not big:
            engines += [
                ("raterstats NUTS (nutpie, compiled density)", "mace", "nutpie", {}),
            ]
            engines += [
                ("raterstats NUTS (numpyro via PyMC graph)", "mace", "numpyro", {}),
                ("same MACE written in plain PyMC, pm.sample", "mace", "pymc_default", {}),
            ]
        keep_e = engine_filter(args.engines)
        if keep_e:
            engines = [e for e in engines if e[2] in keep_e]
        for name, model, engine, opts in engines:
            spec = {**data_spec, "model": model, "engine": engine, "seed": 1, "options": opts}
            limit = slow_timeout if engine in ("numpyro", "pymc_default") else args.timeout
            res = run_child(py, CHILD_OURS, spec, timeout=limit)
            if big and engine == "em" and "error" not in res:  # EM near the floor
                detail = run_child(py, CHILD_EM_DETAIL, spec, timeout=args.timeout)
                res["em_detail"] = {k: v for k, v in detail.items() if k not in ("wall_s",)}
            rows.append({"size": label, "engine": name, "model": model.upper(), "run": run_id,
                         **res})  # fmt: skip
            print(json.dumps(rows[-1])[:300], flush=True)
        # crowd-kit, one dimension at a time
        ck_models = ["ds", "mace"]
        if keep_e:
            ck_models = [m for m in ck_models if {"crowdkit", f"crowdkit_{m}"} & keep_e]
        if not ck_models:
            continue
        if _has_crowdkit(args):
            for model in ck_models:
                tot_fit, tot_wall, correct, n = 0.0, 0.0, 0, 0
                ck_version = None
                err = None
                load0: float | None = None
                for d, fr in frames.items():
                    p = tmp / f"ck_{d}.parquet"
                    fr.rename({"rating": "label"}).write_parquet(p)
                    res = run_child(
                        args.crowdkit_python, CHILD_CROWDKIT, {"data": str(p), "model": model},
                        timeout=args.ck_timeout,
                    )  # fmt: skip
                    load0 = res.get("load") if load0 is None else load0
                    if "error" in res:
                        err = res["error"]
                        tot_wall += res["wall_s"]
                        break
                    tot_fit += res["fit_s"]
                    tot_wall += res["wall_s"]
                    ck_version = res.get("version")
                    tr = truth_ck[d]
                    correct += sum(res["labels"][k] == tr[k] for k in res["labels"])
                    n += len(res["labels"])
                row: dict[str, Any] = {
                    "size": label,
                    "engine": "crowd-kit 1.4",
                    "model": model.upper(),
                    "run": run_id,
                    "load": load0,
                }
                if err:
                    row.update({"error": err, "wall_s": tot_wall})
                else:
                    row.update({"fit_s": tot_fit, "wall_s": tot_wall, "accuracy": correct / n,
                                "version": ck_version})  # fmt: skip
                rows.append(row)
                print(json.dumps(row)[:300], flush=True)
        else:
            for model in ck_models:
                rows.append({"size": label, "engine": "crowd-kit 1.4", "model": model.upper(),
                             "run": run_id, "error": crowdkit_missing(args)})  # fmt: skip
    return rows


def engine_filter(engines: str) -> set[str]:
    """The engines named by ``--engines`` (comma-separated; ``-`` and ``_`` alike, e.g.
    ``em,crowdkit-ds``); empty: all."""
    return {e.strip().replace("-", "_") for e in engines.split(",") if e.strip()}


# ----------------------------------------------------------------------------- part 2

DATASETS = [
    ("snow2008_rte", 0.928),
    ("snow2008_temporal", None),
    ("zheng2017_product", 0.940),
    ("zheng2017_possent", 0.960),
    ("zheng2017_relevance", 0.615),
    ("zheng2017_adult", 0.763),
    ("zheng2017_dog", None),
    ("zheng2017_face", None),
    ("zheng2017_duck", None),
]


#: our fits on real data: MACE, Dawid-Skene (unpooled) and partially pooled Dawid-Skene
#: (Paun et al. 2018, for sparse raters), each by EM and NUTS, default priors
OUR_FITS = ("mace", "ds", "dsp")


def load_dataset(name: str) -> tuple[Any, dict[str, str], pl.DataFrame, int]:
    from raterstats import NominalScale, read_ratings

    f = pl.read_csv(DATA_ROOT / name / "data.csv", infer_schema_length=0)
    gold_vals = f["gold"].drop_nulls().to_list() if "gold" in f.columns else []
    levels = sorted(
        set(f["label"].drop_nulls().to_list()) | set(gold_vals), key=lambda x: (len(x), x)
    )
    f = f.with_columns(pl.int_range(pl.len()).over("item", "annotator").alias("_occ"))
    dropped = int((f["_occ"] >= 2).sum())
    f = f.filter(pl.col("_occ") < 2)
    frame = pl.DataFrame(
        {"item": f["item"], "rater": f["annotator"], "rating": f["label"], "repeat": f["_occ"] == 1}
    )
    r = read_ratings(frame, scale=NominalScale(levels), name=name)
    g = f.filter(pl.col("gold").is_not_null() & (pl.col("gold") != ""))
    gold = dict(g.select("item", "gold").unique("item").iter_rows())
    ck = f.select(pl.col("item"), pl.col("annotator").alias("rater"), pl.col("label"))
    return r, gold, ck, dropped


def item_probs(dtree: Any) -> dict[str, dict[str, float]]:
    """``{item: {label: P(true label)}}`` of a fit's first dimension."""
    from raterstats import item_posterior

    post = item_posterior(dtree).isel(dimension=0)
    labels = post["category_label"].values
    pr = post["prob"].values
    return {
        str(i): {str(labels[k]): float(pr[j, k]) for k in range(len(labels))}
        for j, i in enumerate(post["item"].values)
    }


def _map_label(p: dict[str, float]) -> str:
    """The most probable label (the first of ties, in the dict's order)."""
    return max(p, key=lambda k: p[k])


def label_scores(prob: dict[str, dict[str, float]], gold: dict[str, str]) -> tuple[float, float]:
    """Accuracy of the most probable labels and log loss of the gold labels, over the
    items with gold labels."""
    items = [i for i in prob if i in gold]
    acc = np.mean([_map_label(prob[i]) == gold[i] for i in items])
    ll = -np.mean([np.log(max(prob[i].get(gold[i], 0.0), 1e-12)) for i in items])
    return float(acc), float(ll)


def _correct(prob: dict[str, dict[str, float]], gold: dict[str, str]) -> dict[str, bool]:
    return {i: _map_label(prob[i]) == gold[i] for i in prob if i in gold}


def paired_test(ours: dict[str, bool], theirs: dict[str, bool]) -> dict[str, Any]:
    """Exact McNemar test on the gold items both label: items only ours get right, items
    only theirs get right, two-sided p-value (binomial, 1/2)."""
    from scipy.stats import binomtest

    items = sorted(set(ours) & set(theirs))
    b = sum(ours[i] and not theirs[i] for i in items)
    c = sum(theirs[i] and not ours[i] for i in items)
    p = binomtest(min(b, c), b + c, 0.5).pvalue if b + c else 1.0
    return {"ours_only": b, "theirs_only": c, "p": float(p)}


def fit_real(name: str, fit: str, method: str) -> dict[str, Any]:
    """One of our fits (``OUR_FITS``) to a real data set by EM or NUTS (default settings):
    accuracy and log loss against gold, fit time, NUTS diagnostics, per-item correctness."""
    from raterstats import MACE, DawidSkene, diagnose

    r, gold, _, _ = load_dataset(name)
    model = {
        "mace": MACE(),
        "ds": DawidSkene(),
        "dsp": DawidSkene(pooling="partial"),
    }[fit]
    t0 = time.perf_counter()
    # NUTS at a fixed 1,000 draws: the table's settings (the default before draws were set
    # by checkpoints, raterstats.defaults.CHECKPOINTS; benchmarks/gold.py fits at those)
    kw = {"method": "em"} if method == "em" else {"progress": False, "draws": 1000}
    dtree = model.fit(r, random_seed=1, log_likelihood=False, **kw)
    out: dict[str, Any] = {"s": time.perf_counter() - t0}
    prob = item_probs(dtree)
    out["acc"], out["logloss"] = label_scores(prob, gold)
    out["correct"] = _correct(prob, gold)
    if method == "nuts":
        d = diagnose(dtree, warn=False)
        out["rhat"] = float(np.nanmax(d.parameters["rhat"].to_numpy()))
        out["div"] = int(d.divergences)
    return out


CHILD_REAL = r"""
import json, sys
sys.path.insert(0, "benchmarks")
from categorical import fit_real
print("RESULT " + json.dumps(fit_real(**json.loads(sys.argv[1]))))
"""


def part_accuracy(args: argparse.Namespace, tmp: Path) -> list[dict[str, Any]]:
    rows = []
    sets = DATASETS[:2] if args.quick else DATASETS
    if args.datasets:
        keep = {k.strip() for k in args.datasets.split(",")}
        sets = [d for d in sets if d[0] in keep]
    for name, published in sets:
        if not (DATA_ROOT / name / "data.csv").exists():
            rows.append({"dataset": name, "error": "data not available"})
            continue
        r, gold, ck, dropped = load_dataset(name)
        row: dict[str, Any] = {
            "dataset": name,
            "published": published,
            "ratings": r.n_ratings,
            "gold": len(gold),
            "dropped_third_repeats": dropped,
        }
        correct: dict[str, dict[str, bool]] = {}
        fits = [f for f in OUR_FITS if not args.real_fits or f in args.real_fits.split(",")]
        row["rerun"] = [f"{m}_{k}" for m in fits for k in ("em", "nuts")]
        for mname in fits:
            for method in ("em", "nuts"):
                key = f"{mname}_{method}"
                if method == "nuts" and r.n_ratings > args.real_nuts_max_ratings:
                    row[f"{key}_skipped"] = (
                        f"{r.n_ratings:,} ratings > --real-nuts-max-ratings "
                        f"{args.real_nuts_max_ratings:,}"
                    )
                    continue
                res = run_child(
                    sys.executable, CHILD_REAL, {"name": name, "fit": mname, "method": method},
                    timeout=args.real_timeout,
                )  # fmt: skip
                if "error" in res:
                    row[f"{key}_skipped"] = " ".join(res["error"].split())[-200:]
                    continue
                correct[key] = res.pop("correct")
                for k in ("acc", "logloss", "s", "rhat", "div"):
                    if k in res:
                        row[f"{key}_{k}"] = res[k]
        if _has_crowdkit(args) and not args.real_fits:
            p = tmp / f"{name}.parquet"
            ck.write_parquet(p)
            for model in ("ds", "mace"):
                res = run_child(
                    args.crowdkit_python, CHILD_CROWDKIT,
                    {"data": str(p), "model": model, "probas": True}, timeout=args.timeout,
                )  # fmt: skip
                if "error" in res:
                    row[f"ck_{model}_error"] = res["error"][-200:]
                    continue
                acc, ll = label_scores(res["probas"], gold)
                row[f"ck_{model}_acc"], row[f"ck_{model}_logloss"] = acc, ll
                row[f"ck_{model}_s"] = res["fit_s"]
                ours = [k for k in correct if k.split("_")[0] in OUR_FITS]
                if ours:  # our most accurate fit of this run against crowd-kit, item by item
                    best = max(ours, key=lambda k: row[f"{k}_acc"])
                    row[f"paired_ck_{model}"] = {
                        "ours": best,
                        **paired_test(correct[best], _correct(res["probas"], gold)),
                    }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


ANAESTHESIA_PUBLISHED = (0.376, 0.408, 0.141, 0.075)


def part_anaesthesia() -> dict[str, Any]:
    """Class prevalences of Dawid & Skene's (1979) anaesthesia data under Dawid-Skene (NUTS
    and EM) against the Bayesian estimates published with the R package rater."""
    from raterstats import DawidSkene, diagnose
    from raterstats.datasets import read_anaesthesia

    path = DATA_ROOT / "dawid_skene1979_anaesthesia" / "data.csv"
    if not path.exists():
        return {"error": "data not available"}
    r = read_anaesthesia(path)  # anaesthetist 1: a first rating and two repeats per patient
    out: dict[str, Any] = {"published": list(ANAESTHESIA_PUBLISHED)}
    for method in ("nuts", "em"):
        t0 = time.perf_counter()
        kw = {"method": "em"} if method == "em" else {"progress": False, "draws": 1000}
        dt_ = DawidSkene().fit(r, random_seed=1, **kw)
        out[f"{method}_s"] = time.perf_counter() - t0
        prev = dt_.posterior["prevalence"].mean(("chain", "draw")).isel(dimension=0).values
        out[method] = [float(v) for v in prev]
        out[f"{method}_maxdiff"] = float(np.max(np.abs(prev - np.array(ANAESTHESIA_PUBLISHED))))
        if method == "nuts":
            d = diagnose(dt_, warn=False)
            out["nuts_rhat"] = float(np.nanmax(d.parameters["rhat"].to_numpy()))
            out["nuts_div"] = int(d.divergences)
    return out


# ----------------------------------------------------------------------------- report


def fmt_number(v: Any, fmt: str = ".3f") -> str:
    """``v`` formatted by ``fmt``; ``-`` for a missing or non-finite value."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    return format(v, fmt)


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (np.nan,) * 3
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        "(the machine is shared: other processes used CPU during the run)"
    )


#: the command that reruns this benchmark from a fresh clone (after `pip install -e .[bench]`)
REPRODUCE = "python benchmarks/categorical.py"


def em_floor_table(speed: list[dict[str, Any]]) -> list[str]:
    """The table of EM's cost per iteration against one memory pass over the data (the
    500,000-item EM rows' ``em_detail``)."""
    rows = [r for r in speed if r.get("em_detail") and "error" not in r["em_detail"]]
    if not rows:
        return []
    out = [
        "",
        "## EM near the floor",
        "",
        f"Reproduce: `{REPRODUCE} --parts speed --sizes 500000x3 --engines em,crowdkit-ds`.",
        "",
        "The EM fit alone (`fit_em` on prepared data, second call in the process: the "
        "restarts' short runs on their subsample and the kept start's run on all the data; "
        "data preparation, the DataTree and the label summary excluded) and its iterations "
        "(on all the data / on the subsample); the cost of one EM iteration on all the data "
        "(a run from the majority vote alone, `restarts=1`, divided by its iterations plus "
        "the final plug-in pass: one pass over the pattern ratings for class posteriors, "
        "expected counts and class counts, plus the M-step); and one memory pass: the time "
        "to sum once every array an iteration reads or writes (table rows of the pattern "
        "ratings, pattern boundaries, dimensions, weights, class mask, class posteriors), "
        "best of 20.",
        "",
        "| size | model | pattern ratings | EM loop (s) | iterations (all data / subsample "
        "of units) | ms per iteration | memory pass (MB) | memory pass (ms) "
        "| iteration / memory pass | load |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        d = r["em_detail"]
        sub = f"{d.get('sub_iterations', 0)} ({d.get('restart_units', 0):,} units)"
        out.append(
            f"| {r['size']} | {r['model']} | {d['pattern_ratings']:,} | {d['em_loop_s']:.2f} | "
            f"{d['em_iterations']} / {sub} | {1e3 * d['s_per_iter']:.1f} | "
            f"{d['pass_mb']:.0f} | {1e3 * d['pass_s']:.2f} | "
            f"{d['s_per_iter'] / d['pass_s']:.0f}x | {fmt_number(d.get('load'), '.1f')} |"
        )
    return out


def _row(speed: list[dict[str, Any]], size: str, engine: str, model: str) -> dict[str, Any]:
    for r in speed:
        if r["size"] == size and r["engine"].startswith(engine) and r.get("model") == model:
            return r
    return {}


def targets(res: dict[str, Any]) -> list[str]:
    """The issue's targets, each with the figure measured and met / not met."""
    speed, acc = res.get("speed", []), res.get("accuracy", [])
    cold, an = res.get("cold", {}), res.get("anaesthesia", {})
    out = []

    def say(ok: bool | None, text: str) -> None:
        out.append(
            f"- {text}: **{'met' if ok else ('not measured' if ok is None else 'NOT met')}**"
        )

    c = cold.get("cached_run", {})
    if c:
        ok = c["wall_s"] < 10 and c.get("rhat_max", 9) <= 1.01 and c.get("divergences", 1) == 0
        say(
            ok,
            f"300 x 3 full posterior (4 x 1,000 draws) from a cold process start < 10 s: "
            f"{c['wall_s']:.1f} s (numba cache warm; first use after installation "
            f"{cold['first_s']:.1f} s), max R-hat {c.get('rhat_max', float('nan')):.4f}, "
            f"{c.get('divergences')} divergences, load {c.get('load', float('nan')):.1f}",
        )
    h = _row(speed, SIZE_ORDER[1], "raterstats NUTS (nutpie", "MACE")
    if h and "error" not in h:
        say(
            h["wall_s"] < 60,
            f"2,800 x 3 x 3-dimension hierarchical MACE < 60 s: "
            f"{h['wall_s']:.1f} s wall (max R-hat {h['rhat_max']:.4f}, "
            f"{h['divergences']} divergences, load {h.get('load', float('nan')):.1f})",
        )
    for model in ("MACE", "DS"):
        e = _row(speed, SIZE_ORDER[3], "raterstats EM", model)
        if e and "error" not in e:
            say(
                e["wall_s"] < 30,
                f"EM ({model}) at 500,000 items < 30 s: {e['wall_s']:.1f} s "
                f"wall incl. start-up and data ({e['fit_s']:.1f} s fit)",
            )
    ck_ds = _row(speed, SIZE_ORDER[3], "crowd-kit", "DS")
    for model in ("MACE", "DS"):
        e = _row(speed, SIZE_ORDER[3], "raterstats EM", model)
        if not e or "error" in e:
            continue
        if not ck_ds or "error" in ck_ds or ck_ds.get("run") != e.get("run"):
            say(None, f"EM ({model}) at 500,000 x 3: fit < 3 s and >= 15x faster than "
                "crowd-kit's DawidSkene in the same run: crowd-kit DS not measured in the "
                f"same run (EM fit {e['fit_s']:.2f} s)")  # fmt: skip
            continue
        ratio = ck_ds["fit_s"] / e["fit_s"]
        say(
            e["fit_s"] < 3 and ratio >= 15,
            f"EM ({model}) at 500,000 x 3: fit < 3 s and >= 15x faster than crowd-kit's "
            f"DawidSkene in the same run: {e['fit_s']:.2f} s fit vs {ck_ds['fit_s']:.1f} s "
            f"({ratio:.1f}x; whole process {e['wall_s']:.1f} s vs {ck_ds['wall_s']:.1f} s; "
            f"load {fmt_number(e.get('load'), '.1f')})",
        )
    slower = []
    n_cmp = 0
    for size in SIZE_ORDER:
        for model in ("MACE", "DS"):
            ours = _row(speed, size, "raterstats EM", model)
            ck = _row(speed, size, "crowd-kit", model)
            if ours and ck and "error" not in ours and "error" not in ck:
                n_cmp += 1
                if ours["fit_s"] >= ck["fit_s"] or ours["wall_s"] >= ck["wall_s"]:
                    slower.append(
                        f"{size} {model}: {ours['fit_s']:.2f} s vs {ck['fit_s']:.2f} s fit, "
                        f"{ours['wall_s']:.1f} vs {ck['wall_s']:.1f} s wall"
                    )
    if n_cmp:
        say(
            not slower,
            "EM faster than crowd-kit (same model, fit time and whole-process "
            f"wall) at every size: {n_cmp} comparisons"
            + (f"; slower: {'; '.join(slower)}" if slower else ""),
        )
    worse, n_ds = [], 0
    better_cal, n_cal = [], 0
    for r in acc:
        if "error" in r or "ck_ds_acc" not in r:
            continue
        n_ds += 1
        ours = max(
            r[f"{m}_{k}_acc"] for m in OUR_FITS for k in ("em", "nuts") if f"{m}_{k}_acc" in r
        )
        ck = max(r.get("ck_ds_acc", 0), r.get("ck_mace_acc", 0))
        if ours < ck:
            worse.append(f"{r['dataset']} {ours:.3f} < {ck:.3f}")
        for m in OUR_FITS:
            if f"{m}_nuts_logloss" not in r or f"{m}_em_logloss" not in r:
                continue
            n_cal += 1
            if r[f"{m}_nuts_logloss"] < r[f"{m}_em_logloss"]:
                better_cal.append(f"{r['dataset']} {m}")
    not_run = [
        f"{r['dataset']} ({', '.join(_missing_fits(r))})"
        for r in acc
        if "error" not in r
        and any(f"{m}_{k}_acc" not in r for m in OUR_FITS for k in ("em", "nuts"))
    ]
    if not_run:
        out.append(f"- real data sets where some of our fits were not run: {'; '.join(not_run)}")
    unconverged = [
        f"{r['dataset']} {m} ({r[f'{m}_nuts_rhat']:.3f})"
        for r in acc
        for m in OUR_FITS
        if r.get(f"{m}_nuts_rhat", 0.0) > 1.01
    ]
    if unconverged:
        out.append(
            "- NUTS fits with max R-hat above 1.01 (not a converged posterior; their figures "
            f"are shown but do not count as met): {'; '.join(unconverged)}"
        )
    missing = [r["dataset"] for r in acc if "error" in r or "ck_ds_acc" not in r]
    if missing:
        out.append(f"- real data sets without a complete comparison: {', '.join(missing)}")
    if n_ds:
        say(
            not worse,
            f"best of our fits (MACE, Dawid-Skene, partially pooled Dawid-Skene; EM and "
            f"NUTS) at least as accurate as crowd-kit DS and MACE "
            f"on every real data set ({n_ds} data sets)"
            + (f"; below: {', '.join(worse)}" if worse else ""),
        )
        say(
            len(better_cal) == n_cal and not not_run and not unconverged,
            f"NUTS better calibrated than EM (lower log loss against "
            f"gold): {len(better_cal)} of {n_cal} (data set, model) pairs"
            + ("; some NUTS fits not run" if not_run else "")
            + ("; some NUTS fits not converged" if unconverged else ""),
        )
    if an and "error" not in an:
        say(
            an["nuts_maxdiff"] <= 0.03,
            "Dawid & Skene anaesthesia prevalences within 0.03 of "
            f"(0.376, 0.408, 0.141, 0.075): NUTS {', '.join(f'{v:.3f}' for v in an['nuts'])} "
            f"(max difference {an['nuts_maxdiff']:.3f}); EM "
            f"{', '.join(f'{v:.3f}' for v in an['em'])} (max difference {an['em_maxdiff']:.3f})",
        )
    return out


def _missing_fits(r: dict[str, Any]) -> list[str]:
    return [f"{m} {k}" for m in OUR_FITS for k in ("em", "nuts") if f"{m}_{k}_acc" not in r]


def run_header() -> dict[str, str]:
    """Date, machine and versions of the run now (stored with the results, so that a
    render from ``categorical_results.json`` alone keeps those of the last measurement)."""
    from importlib import metadata

    vers = ", ".join(
        f"{p} {metadata.version(p)}" for p in ("raterstats", "pymc", "nutpie", "numpy", "numba")
    )
    with contextlib.suppress(metadata.PackageNotFoundError):
        vers += ", " + ", ".join(f"{p} {metadata.version(p)}" for p in ("jax", "numpyro"))
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "versions": f"Python {platform.python_version()}; {vers}",
    }


def to_markdown(res: dict[str, Any]) -> str:
    speed, acc, cold = res.get("speed", []), res.get("accuracy", []), res.get("cold", {})
    ck_version = next((r["version"] for r in speed if r.get("version")), "1.4")
    head = res.get("header") or run_header()
    lines = [
        START,
        "# Categorical models (MACE, Dawid-Skene)",
        "",
        "Written by `benchmarks/categorical.py` (do not edit by hand; rerun it).",
        "",
        f"- date: {head['date']} (the latest measurement)",
        f"- machine: {head['machine']}",
        f"- {head['versions']}; crowd-kit {ck_version} (run by "
        "`--crowdkit-python`, default the same environment: `pip install -e .[bench]`)",
        f"- reproduce the whole section: `{REPRODUCE}` (each table below names the command "
        "that reruns it alone)",
        "- every engine runs in a fresh process; `wall` is the whole process (interpreter start, "
        "imports, data, compilation, fit, summaries); `fit` is the fit call alone; `load` is "
        "the 1-minute load average when the process started (2 cores: above 2 means other "
        "processes competed for the CPU, so times are pessimistic)",
        "- NUTS: 4 chains x 1,000 draws after 500 tuning steps, started at the EM estimate "
        "(the package defaults for a fixed number of draws); accuracy "
        "against the simulated "
        "true labels; competence error = mean |posterior mean - true competence|; ESS/s = min bulk "
        "ESS / wall",
        "- engines: raterstats EM (variational EM; 5 restarts of 10 iterations, the best "
        "continued to convergence; above 100,000 units the 10-iteration runs use a random "
        "subsample of 50,000 units and the start they pick runs on all the data); raterstats "
        "NUTS by nutpie on the "
        "compiled density (numba, cached on disk; no per-fit compilation); raterstats' PyMC "
        "graph (vectorised over rating patterns) sampled by NumPyro; the same MACE written as a "
        "PyMC user would (one term per rating and class, log-sum-exp per item, same priors) "
        "sampled by PyMC's default NUTS (`pm.sample(chains=4)`, otherwise defaults); crowd-kit "
        "1.4.2 `DawidSkene(n_iter=100)` and `MACE()` (one dimension at a time)",
        "- the 300 x 3 data have 3 raters rating every item; the others draw distinct raters "
        "from the pool for each item; 10% of raters are spammers",
        "- compiled densities: first use after installation "
        f"{fmt_number(cold.get('first_s'), '.1f')} s "
        f"in a fresh process (compiles and caches the kernels), "
        f"{fmt_number(cold.get('cached_s'), '.1f')} s once cached (300 x 3 MACE, 4 x 1,000 draws, "
        f"whole process; reproduce: `{REPRODUCE} --parts cold`)",
        "",
        "## Targets",
        "",
        *targets(res),
        "",
        "## Speed and accuracy on simulated data",
        "",
        f"Reproduce: `{REPRODUCE} --parts speed` (rows of a subset: e.g. `{REPRODUCE} --parts "
        "speed --sizes 500000x3 --engines em,crowdkit-ds`; rerun rows replace their old ones, "
        "the others are kept, so rows may come from different runs and machines: `run` is "
        "when a row was measured, the machine line above is that of the latest run; compare the "
        "load column too).",
        "",
        "| size | engine | model | wall (s) | fit (s) | accuracy | competence error | max R-hat "
        "| min bulk ESS | divergences | ESS/s | load | run |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in speed:
        if "error" in r:
            lines.append(
                f"| {r['size']} | {r['engine']} | {r.get('model', '')} | "
                f"{fmt_number(r.get('wall_s'), '.1f')} | - | - | - | - | - | - | - | "
                f"{fmt_number(r.get('load'), '.1f')} | {_run_date(r)} |"
            )
            continue
        ess_s = r["ess_bulk_min"] / r["wall_s"] if "ess_bulk_min" in r else None
        lines.append(
            f"| {r['size']} | {r['engine']} | {r['model']} | {fmt_number(r['wall_s'], '.1f')} | "
            f"{fmt_number(r.get('fit_s'), '.2f')} | {fmt_number(r.get('accuracy'))} | "
            f"{fmt_number(r.get('competence_mae'))} | {fmt_number(r.get('rhat_max'), '.4f')} | "
            f"{fmt_number(r.get('ess_bulk_min'), '.0f')} | {r.get('divergences', '-')} | "
            f"{fmt_number(ess_s, '.0f')} | {fmt_number(r.get('load'), '.1f')} | "
            f"{_run_date(r)} |"
        )
    errors = [r for r in speed if "error" in r]
    if errors:
        lines += ["", "Failed or stopped runs:", ""]
        lines += [
            f"- {r['size']}, {r['engine']} {r.get('model', '')}: "
            + " ".join(str(r["error"]).split())[-300:]
            for r in errors
        ]
    lines += em_floor_table(speed)
    lines += [
        "",
        "## Accuracy against gold on real data",
        "",
        f"Reproduce: `{REPRODUCE} --parts real` (one data set or fit: `--datasets NAME`, "
        "`--real-fits mace,ds,dsp`).",
        "",
        "Gold labels are not given to the models. raterstats: MACE, Dawid-Skene (unpooled) "
        "and partially pooled Dawid-Skene (Paun et al. 2018; `DS partial`), default priors, "
        "each by EM and by NUTS (posterior mean of P(true label)); crowd-kit 1.4.2 DawidSkene "
        "(n_iter=100) and MACE (defaults) on the same ratings. `best` is the best of our "
        "fits; log loss is -mean log P(gold label) (lower = better calibrated). Each of our "
        "fits runs in its own process, stopped after `--real-timeout` seconds (NUTS: 4 "
        "chains x 1,000 draws after 500 tuning steps, started at the EM estimate: the "
        "defaults before the draws were set by the fit's checks (the gold table below fits at "
        "today's); times are the fit call (EM start included) "
        "on the shared 2-core machine); data sets with more than `--real-nuts-max-ratings` "
        "ratings are fitted by EM only. Ratings keep "
        "at most two per item x rater (Ratings hold one repeat), third and later repeats "
        "dropped (counted in the last column).",
        "",
        "| data set | ratings | gold items | published crowd-kit | crowd-kit DS | crowd-kit MACE | "
        "MACE EM | DS EM | DS partial EM | MACE NUTS | DS NUTS | DS partial NUTS | best ours | "
        "log loss EM (MACE / DS / DS partial) | log loss NUTS (MACE / DS / DS partial) | "
        "log loss crowd-kit (DS / MACE) | NUTS max R-hat (MACE / DS / DS partial) "
        "| NUTS time (MACE / DS / DS partial, s) | dropped |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|---|---:|",
    ]
    for r in acc:
        if "error" in r:
            lines.append(f"| {r['dataset']} | {r['error']} |" + " |" * 17)
            continue
        ours = [r.get(f"{m}_{k}_acc") for k in ("em", "nuts") for m in OUR_FITS]
        best = max((v for v in ours if v is not None), default=None)

        def trio(key: str, fmt: str = ".3f", r: dict[str, Any] = r) -> str:
            return " / ".join(fmt_number(r.get(key.format(m)), fmt) for m in OUR_FITS)

        lines.append(
            f"| {r['dataset']} | {r['ratings']:,} | {r['gold']:,} | {fmt_number(r['published'])} | "
            f"{fmt_number(r.get('ck_ds_acc'))} | {fmt_number(r.get('ck_mace_acc'))} | "
            + " | ".join(fmt_number(v) for v in ours)
            + f" | **{fmt_number(best)}** | {trio('{}_em_logloss')} | {trio('{}_nuts_logloss')} | "
            f"{fmt_number(r.get('ck_ds_logloss'))} / {fmt_number(r.get('ck_mace_logloss'))} | "
            f"{trio('{}_nuts_rhat')} | {trio('{}_nuts_s', '.0f')} | "
            f"{r['dropped_third_repeats']} |"
        )
    skipped = [
        f"{r['dataset']} {m} {k.upper() if k == 'em' else 'NUTS'} ({r[f'{m}_{k}_skipped']})"
        for r in acc
        for m in OUR_FITS
        for k in ("em", "nuts")
        if f"{m}_{k}_skipped" in r
    ]
    if skipped:
        lines += ["", "Fits not run or stopped: " + "; ".join(skipped) + "."]
    paired = [
        f"{r['dataset']} vs crowd-kit {name}: our {pr['ours'].replace('_', ' ')} alone right "
        f"on {pr['ours_only']}, crowd-kit alone on {pr['theirs_only']} (p = {pr['p']:.2f})"
        for r in acc
        for m, name in (("ds", "DS"), ("mace", "MACE"))
        if (pr := r.get(f"paired_ck_{m}"))
    ]
    if paired:
        lines += [
            "",
            "Item by item on the gold items (exact McNemar test of our most accurate fit "
            "against crowd-kit; p is two-sided): " + "; ".join(paired) + ".",
        ]
    an = res.get("anaesthesia", {})
    if an and "error" not in an:
        lines += [
            "",
            "## Dawid & Skene (1979) anaesthesia data",
            "",
            f"Reproduce: `{REPRODUCE} --parts anaesthesia`.",
            "",
            "Class prevalences under Dawid-Skene (default priors) against the Bayesian "
            "estimates published with the R package rater (Pullin et al.).",
            "",
            "| | class 1 | class 2 | class 3 | class 4 | max abs. difference | time (s) |",
            "|---|---:|---:|---:|---:|---:|---:|",
            "| published (rater) | " + " | ".join(f"{v:.3f}" for v in an["published"]) + " | | |",
        ]
        for m, name in (("nuts", "raterstats NUTS (posterior mean)"), ("em", "raterstats EM")):
            lines.append(
                f"| {name} | "
                + " | ".join(f"{v:.3f}" for v in an[m])
                + f" | {an[f'{m}_maxdiff']:.3f} | {an[f'{m}_s']:.1f} |"
            )
        lines.append("")
        lines.append(f"NUTS: max R-hat {an['nuts_rhat']:.4f}, {an['nuts_div']} divergences.")
    lines += ["", END, ""]
    return "\n".join(lines)


def _run_date(row: dict[str, Any]) -> str:
    """The day a speed row was measured (``-`` for rows stored before runs were dated)."""
    run = row.get("run")
    return str(run).split()[0] if run else "-"


def update_results(path: Path, section: str, start: str = START, end: str = END) -> None:
    """Replace a section of RESULTS.md (between the markers ``start`` and ``end``; default
    the categorical section's) or append it."""
    text = path.read_text() if path.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + section.strip("\n") + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def cold_start(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The 300 x 3 MACE NUTS fit in a fresh process, first with an empty numba cache (the
    first use after installation compiles and caches the kernels), then twice cached."""
    frame, truth, comp = simulate_mace(300, 3, 3, seed=1)
    p = tmp / "cold.parquet"
    frame.write_parquet(p)
    np.save(tmp / "truth.npy", truth)
    np.save(tmp / "comp.npy", comp)
    spec = {"data": str(p), "K": 3, "truth": str(tmp / "truth.npy"),
            "competence": str(tmp / "comp.npy"), "model": "mace", "engine": "nutpie",
            "seed": 1}  # fmt: skip
    # numba's cache of the compiled latent-class code (kernels_*.py, callbacks.py and the
    # nutpie callbacks beside the package's modules)
    for cache in (REPO / "raterstats" / "models" / "latent_class" / "__pycache__",
                  REPO / "raterstats" / "__pycache__"):  # fmt: skip
        for pattern in ("kernels*.nb*", "callbacks*.nb*", "nutpie_callbacks*.nb*"):
            for f in cache.glob(pattern):
                f.unlink()
    first = run_child(sys.executable, CHILD_OURS, spec, args.timeout)
    cached = [run_child(sys.executable, CHILD_OURS, spec, args.timeout) for _ in range(2)]
    best = min(cached, key=lambda r: r["wall_s"])
    return {"first_s": first["wall_s"], "cached_s": best["wall_s"], "cached_run": best,
            "cached_all_s": [r["wall_s"] for r in cached], "load": best.get("load")}  # fmt: skip


def merge_speed(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Speed rows: the new ones replace old rows of the same (size, engine, model); rows
    not rerun are kept; sorted by size, then engine."""
    done = {(r["size"], r["engine"], r.get("model")) for r in new}
    kept = [r for r in old if (r["size"], r["engine"], r.get("model")) not in done]

    def key(r: dict[str, Any]) -> tuple[int, int, str]:
        eng = [i for i, e in enumerate(ENGINE_ORDER) if r["engine"].startswith(e)]
        size = SIZE_ORDER.index(r["size"]) if r["size"] in SIZE_ORDER else 99
        return size, eng[0] if eng else 99, str(r.get("model"))

    return sorted(kept + new, key=key)


def merge_accuracy(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Real-data rows by data set: a rerun data set's new values replace the old ones, the
    old values of every fit attempted now go (a fit that failed now keeps no stale figures),
    columns not rerun (``--real-fits``) are kept unless the new row is an error, and a note
    that NUTS was skipped goes when NUTS values are present; data sets not rerun are kept;
    sorted in :data:`DATASETS` order."""
    rows = {r["dataset"]: r for r in old}
    for r in new:
        prev = rows.get(r["dataset"], {})
        r = dict(r)
        rerun = tuple(r.pop("rerun", ()))  # fits attempted now: none of their old values stay
        keep = (
            {}
            if "error" in r
            else {k: v for k, v in prev.items() if k != "error" and not k.startswith(rerun)}
        )
        row = {**keep, **r}
        for m in OUR_FITS:  # a NUTS fit kept or rerun outranks a note that it was skipped
            if f"{m}_nuts_acc" in row:
                row.pop(f"{m}_nuts_skipped", None)
        rows[r["dataset"]] = row
    order = [d for d, _ in DATASETS]
    return sorted(
        rows.values(), key=lambda r: order.index(r["dataset"]) if r["dataset"] in order else 99
    )


_CROWDKIT_OK: dict[str, bool] = {}


def _has_crowdkit(args: argparse.Namespace) -> bool:
    """Whether the crowd-kit interpreter (``--crowdkit-python``, default this one) imports
    crowd-kit (checked once per interpreter, in a fresh process)."""
    py = args.crowdkit_python
    if py not in _CROWDKIT_OK:
        try:
            ok = (
                subprocess.run(
                    [py, "-c", "import crowdkit.aggregation"], capture_output=True, timeout=300
                ).returncode
                == 0
            )
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        _CROWDKIT_OK[py] = ok
    return _CROWDKIT_OK[py]


def crowdkit_missing(args: argparse.Namespace) -> str:
    """Why the crowd-kit rows are skipped, and how to install it."""
    return (
        f"crowd-kit is not importable by {args.crowdkit_python} (--crowdkit-python); "
        "install it beside raterstats with `pip install -e .[bench]` (Python 3.12), or "
        "name an interpreter that has it with --crowdkit-python"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, print only")
    parser.add_argument(
        "--crowdkit-python",
        default=sys.executable,
        help="python of an environment with crowd-kit 1.4 (default: this interpreter; "
        "install crowd-kit beside raterstats with `pip install -e .[bench]`)",
    )
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--slow-timeout", type=int, default=180,
                        help="limit for numpyro / plain PyMC at 50,000 items")  # fmt: skip
    parser.add_argument("--ck-timeout", type=int, default=600, help="limit for crowd-kit runs")
    parser.add_argument(
        "--parts",
        default="cold,speed,real,anaesthesia",
        help="comma-separated parts to run; the others are kept from the last full run's "
        "categorical_results.json",
    )
    parser.add_argument("--datasets", default="", help="real data sets to run (default all)")
    parser.add_argument(
        "--sizes",
        default="",
        help="speed sizes to rerun, by item count, comma-separated without thousands "
        "separators, e.g. 300,2800 or 500000x3 (default all); rows of the others are kept",
    )
    parser.add_argument(
        "--engines",
        default="",
        help="speed engines to rerun (em, nutpie, numpyro, pymc_default, crowdkit, "
        "crowdkit-ds, crowdkit-mace; default all); rows of the others are kept",
    )
    parser.add_argument(
        "--real-fits",
        default="",
        help="our real-data fits to rerun (mace, ds, dsp; default all, with crowd-kit); the "
        "other columns are kept",
    )
    parser.add_argument(
        "--real-nuts-max-ratings",
        type=int,
        default=60_000,
        help="real data sets with more ratings are fitted by EM only (NUTS time)",
    )
    parser.add_argument(
        "--real-timeout",
        type=int,
        default=1200,
        help="limit (s) for each of our fits to a real data set (each runs in its own process)",
    )
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args()
    if not _has_crowdkit(args):
        print(f"crowd-kit rows skipped: {crowdkit_missing(args)}", flush=True)
    parts = {p.strip() for p in args.parts.split(",")}
    if args.skip_real:
        parts.discard("real")
    store = args.out.parent / "categorical_results.json"
    res: dict[str, Any] = {}
    if not args.quick and store.exists():
        res = json.loads(store.read_text())
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "cold" in parts:
            res["cold"] = cold_start(tmp, args)
            print("cold start", res["cold"], flush=True)
        if "speed" in parts:
            res["speed"] = merge_speed(res.get("speed", []), part_speed(args, tmp))
        if "real" in parts:
            res["accuracy"] = merge_accuracy(res.get("accuracy", []), part_accuracy(args, tmp))
        if "anaesthesia" in parts:
            res["anaesthesia"] = part_anaesthesia()
            print("anaesthesia", res["anaesthesia"], flush=True)
    if parts & {"cold", "speed", "real", "anaesthesia"}:
        res["header"] = run_header()
    md = to_markdown(res)
    print(textwrap.indent(md, ""))
    if not args.quick:
        update_results(args.out, md)
        store.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
