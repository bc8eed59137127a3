"""Benchmark (issue 19): the models of the true label and the gold-free choice among them,
against gold on every categorical gold set in ``../shared/data``.

For each data set (gold labels never given to the models):

* our fits, each by EM and by NUTS at the defaults (NUTS: 4 chains after 500 tuning steps,
  started at the EM estimate; draws per chain set by the fit's own checks at the checkpoints
  1,000, 1,500, 2,000, 3,000, 4,000, except community Dawid-Skene's fixed 1,000), each in
  its own process: MACE, Dawid-Skene
  (the default prior), partially pooled Dawid-Skene, GLAD, community Dawid-Skene and EBCC;
  accuracy of the most probable label and log loss of P(gold label), the fit's health
  (R-hat, divergences, its own mode checks);
* the gold-free choice, ``raterstats.choose_model(ratings)`` at its defaults (held-out
  ratings by EM over the default candidates) and its pick; the choice's accuracy is that of
  the picked model's NUTS fit (what ``raterstats.fit(ratings, model="auto")`` returns by
  default), or its EM fit where NUTS was not run; the rule (highest held-out log predictive
  density) was fixed in ``raterstats.choice`` before any of these gold accuracies were
  computed;
* crowd-kit 1.4 DawidSkene (n_iter=100), MACE and GLAD (defaults) on the same ratings, in the
  same environment (``pip install -e .[bench]``), and the published accuracies quoted in each
  data set's README (EBCC, BWA, IBCC: Li, Rubinstein & Cohn 2019's notebooks);
* the acceptance of issue 19: the choice's accuracy is at least max(crowd-kit DS, MACE,
  GLAD, published EBCC / BWA / IBCC) - 0.005, or not significantly below each crowd-kit
  method by an exact McNemar test on the gold items (p >= 0.05; the published numbers have
  no per-item labels, so they are compared by accuracy alone); and NUTS has a lower log loss
  than EM on at least 90% of the (data set, model) pairs.

Run: ``python benchmarks/gold.py`` (all; rows of a rerun replace the old ones:
``--datasets zheng2017_dog --fits glad,ebcc``). Writes ``benchmarks/gold_results.json`` and
the ``gold`` section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from categorical import (
    DATA_ROOT,
    REPO,
    fmt_number,
    label_scores,
    load_dataset,
    machine,
    paired_test,
    run_child,
    update_results,
)

START = "<!-- gold:start -->"
END = "<!-- gold:end -->"
RESULTS_JSON = Path(__file__).with_name("gold_results.json")

#: the categorical gold sets, in table order
DATASETS = (
    "snow2008_rte",
    "snow2008_temporal",
    "snow2008_wsd",
    "zheng2017_product",
    "zheng2017_possent",
    "zheng2017_relevance",
    "zheng2017_adult",
    "zheng2017_dog",
    "zheng2017_face",
    "zheng2017_duck",
)

#: accuracies published with the data (the README of each set quotes them with sources):
#: EBCC / BWA / IBCC from yuan-li/truth-inference-at-scale's notebooks
PUBLISHED: dict[str, dict[str, float]] = {
    "snow2008_rte": {"EBCC": 0.93125, "BWA": 0.9275, "IBCC": 0.9275},
    "zheng2017_product": {"EBCC": 0.934937, "BWA": 0.919423, "IBCC": 0.938304},
    "zheng2017_possent": {"EBCC": 0.961, "BWA": 0.956, "IBCC": 0.96},
    "zheng2017_adult": {"EBCC": 0.747748, "BWA": 0.741742, "IBCC": 0.744745},
    "zheng2017_dog": {"EBCC": 0.840149, "BWA": 0.831475, "IBCC": 0.83891},
    "zheng2017_face": {"EBCC": 0.635274, "BWA": 0.618151, "IBCC": 0.640411},
    "zheng2017_duck": {"EBCC": 0.861111, "BWA": 0.759259, "IBCC": 0.888889},
}

#: our fits: key -> (registry name, options); the default candidates of choose_model are
#: the default specifications of mace, dawid_skene, glad, community_dawid_skene and ebcc
FITS: dict[str, tuple[str, dict[str, Any]]] = {
    "mace": ("mace", {}),
    "ds": ("dawid_skene", {}),
    "dsp": ("dawid_skene", {"pooling": "partial"}),
    "glad": ("glad", {}),
    "cds": ("community_dawid_skene", {}),
    "ebcc": ("ebcc", {}),
}
CROWDKIT = ("ds", "mace", "glad")
MARGIN = 0.005

CHILD_FIT = r"""
import json, sys, time
sys.path.insert(0, "benchmarks")
from gold import fit_one
print("RESULT " + json.dumps(fit_one(**json.loads(sys.argv[1]))))
"""

CHILD_CHOICE = r"""
import json, sys, time
sys.path.insert(0, "benchmarks")
from gold import choose_one
print("RESULT " + json.dumps(choose_one(**json.loads(sys.argv[1]))))
"""

CHILD_CK = r"""
import json, sys, time
import pandas as pd
from crowdkit.aggregation import GLAD, MACE, DawidSkene
spec = json.loads(sys.argv[1])
df = pd.read_parquet(spec["data"]).rename(columns={"item": "task", "rater": "worker"})
model = {"ds": lambda: DawidSkene(n_iter=100), "mace": MACE, "glad": GLAD}[spec["model"]]()
t0 = time.perf_counter()
probas = model.fit(df[["task", "worker", "label"]]).probas_
res = {"fit_s": time.perf_counter() - t0}
res["probas"] = {str(k): {str(c): float(p) for c, p in row.items()}
                 for k, row in probas.iterrows()}
print("RESULT " + json.dumps(res))
"""


def _probs(dtree: Any) -> dict[str, dict[str, float]]:
    from raterstats import item_posterior

    post = item_posterior(dtree).isel(dimension=0)
    labels = [str(v) for v in post["category_label"].values]
    pr = post["prob"].values
    return {
        str(i): {labels[k]: float(pr[j, k]) for k in range(len(labels))}
        for j, i in enumerate(post["item"].values)
    }


def _correct(prob: dict[str, dict[str, float]], gold: dict[str, str]) -> dict[str, bool]:
    return {i: max(prob[i], key=lambda k: prob[i][k]) == gold[i] for i in prob if i in gold}


def fit_one(name: str, fit: str, method: str) -> dict[str, Any]:
    """One of our fits (:data:`FITS`) to a gold set: accuracy, log loss, time, health."""
    from raterstats import diagnose
    from raterstats.models import model_class

    r, gold, _, _ = load_dataset(name)
    model_name, options = FITS[fit]
    model = model_class(model_name)(**options)
    t0 = time.perf_counter()
    kw = {"method": "em"} if method == "em" else {"progress": False}
    dtree = model.fit(r, random_seed=1, log_likelihood=False, **kw)
    out: dict[str, Any] = {"s": time.perf_counter() - t0}
    prob = _probs(dtree)
    out["acc"], out["logloss"] = label_scores(prob, gold)
    out["correct"] = _correct(prob, gold)
    if method == "nuts":
        d = diagnose(dtree, warn=False)
        out["rhat"] = float(np.nanmax(d.parameters["rhat"].to_numpy()))
        out["div"] = int(d.divergences)
        out["health_ok"] = bool(dtree.attrs.get("health_ok"))
        out["problems"] = [str(p) for p in d.problems][:5]
        out["draws"] = int(dtree["posterior"].sizes["draw"])  # set by its checkpoints
    return out


def choose_one(name: str) -> dict[str, Any]:
    """``choose_model`` at its defaults on a gold set (no gold involved)."""
    from raterstats import choose_model

    r, _, _, _ = load_dataset(name)
    t0 = time.perf_counter()
    choice = choose_model(r)
    rows = choice.frame().to_dicts()
    return {"chosen": choice.chosen, "s": time.perf_counter() - t0, "table": rows}


def pack_correct(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with its per-item correctness (``correct``: fit -> item -> bool, for the
    McNemar tests) as one string of 0 / 1 per fit over the gold items listed once: the
    results file stays small (the per-item mapping took 4.7 MB)."""
    correct = row.get("correct") or {}
    items = sorted({i for per in correct.values() for i in per})
    packed = {
        key: "".join("1" if per.get(i) else ("0" if i in per else "-") for i in items)
        for key, per in correct.items()
    }
    return {**row, "correct": {"items": items, "fits": packed}}


def unpack_correct(row: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`pack_correct` (rows written before it pass unchanged)."""
    correct = row.get("correct") or {}
    if "items" not in correct or "fits" not in correct:
        return row
    items = correct["items"]
    per = {
        key: {i: c == "1" for i, c in zip(items, bits, strict=True) if c != "-"}
        for key, bits in correct["fits"].items()
    }
    return {**row, "correct": per}


def write_results(rows: dict[str, dict[str, Any]]) -> None:
    """Write :data:`RESULTS_JSON` (the rows in table order, correctness packed)."""
    RESULTS_JSON.write_text(
        json.dumps([pack_correct(rows[d]) for d in DATASETS if d in rows], indent=1)
    )


def last_error(text: Any) -> str:
    """The last line of a child process's error output (the exception itself, without the
    traceback's file paths), at most 300 characters."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return (lines[-1] if lines else "failed")[:300]


def _fit_key(model_name: str) -> str | None:
    """Our fit key of a default candidate (a registry name)."""
    for key, (name, options) in FITS.items():
        if name == model_name and not options:
            return key
    return None


def run_dataset(name: str, args: argparse.Namespace, tmp: Path, old: dict[str, Any]) -> dict:
    r, gold, ck, dropped = load_dataset(name)
    row: dict[str, Any] = dict(old)
    row.update({"dataset": name, "ratings": r.n_ratings, "gold": len(gold), "dropped": dropped})
    correct: dict[str, dict[str, bool]] = row.pop("correct", {}) or {}
    fits = [f for f in FITS if not args.fits or f in args.fits.split(",")]
    methods = args.methods.split(",")
    for fit in fits:
        for method in methods:
            key = f"{fit}_{method}"
            for k in [k for k in row if k.startswith(key + "_")]:
                del row[k]
            if method == "nuts" and r.n_ratings > args.nuts_max_ratings:
                row[f"{key}_skipped"] = f"{r.n_ratings:,} ratings > {args.nuts_max_ratings:,}"
                continue
            res = run_child(
                sys.executable, CHILD_FIT, {"name": name, "fit": fit, "method": method},
                timeout=args.timeout,
            )  # fmt: skip
            if "error" in res:
                row[f"{key}_skipped"] = last_error(res["error"])
                continue
            correct[key] = res.pop("correct")
            keys = ("acc", "logloss", "s", "rhat", "div", "health_ok", "problems", "load", "draws")
            for k in keys:
                if k in res:
                    row[f"{key}_{k}"] = res[k]
            print(f"{name} {key}: {res.get('acc')}", flush=True)
    if not args.fits or "choice" in args.fits.split(","):
        res = run_child(sys.executable, CHILD_CHOICE, {"name": name}, timeout=args.timeout)
        row["choice"] = res
    if not args.fits or "crowdkit" in args.fits.split(","):
        p = tmp / f"{name}.parquet"
        ck.write_parquet(p)
        for m in CROWDKIT:
            res = run_child(
                sys.executable, CHILD_CK, {"data": str(p), "model": m}, timeout=args.timeout
            )
            if "error" in res:
                row[f"ck_{m}_error"] = last_error(res["error"])
                continue
            row[f"ck_{m}_acc"], row[f"ck_{m}_logloss"] = label_scores(res["probas"], gold)
            row[f"ck_{m}_s"] = res["fit_s"]
            correct[f"ck_{m}"] = _correct(res["probas"], gold)
    row["correct"] = correct
    return row


def verdict(row: dict[str, Any]) -> dict[str, Any]:
    """The choice's accuracy against issue 19's bar for one data set."""
    choice = row.get("choice") or {}
    chosen = choice.get("chosen")
    key = _fit_key(str(chosen)) if chosen else None
    out: dict[str, Any] = {"chosen": chosen, "fit": None, "acc": None}
    if key is None:
        return out
    for method in ("nuts", "em"):
        if f"{key}_{method}_acc" in row:
            out["fit"] = f"{key}_{method}"
            out["acc"] = row[f"{key}_{method}_acc"]
            break
    refs = {f"crowd-kit {m.upper()}": row.get(f"ck_{m}_acc") for m in CROWDKIT}
    refs.update(PUBLISHED.get(row["dataset"], {}))
    refs = {k: v for k, v in refs.items() if v is not None}
    out["bar"] = max(refs.values()) - MARGIN if refs else None
    out["best_ref"] = max(refs, key=lambda k: refs[k]) if refs else None
    correct = row.get("correct", {})
    tests = {}
    if out["fit"] in correct:
        for m in CROWDKIT:
            if f"ck_{m}" in correct:
                tests[m] = paired_test(correct[out["fit"]], correct[f"ck_{m}"])
    out["mcnemar"] = tests
    acc = out["acc"]
    if acc is None or out["bar"] is None:
        out["met"] = None
    elif acc >= out["bar"]:
        out["met"] = True
    else:
        # below the bar: no reference with per-item labels may be significantly better,
        # and no published accuracy (no per-item labels to test) may be above the bar
        below_published = [
            k for k, v in PUBLISHED.get(row["dataset"], {}).items() if acc < v - MARGIN
        ]
        worse = [m for m, t in tests.items() if t["theirs_only"] > t["ours_only"] and t["p"] < 0.05]
        out["met"] = not below_published and not worse and len(tests) == len(CROWDKIT)
        out["below_published"] = below_published
    best = [
        (row[k], k[: -len("_acc")])
        for k in row
        if k.endswith("_acc") and not k.startswith("ck_") and isinstance(row[k], float)
    ]
    out["best_by_gold"] = max(best)[1] if best else None
    out["best_by_gold_acc"] = max(best)[0] if best else None
    return out


def to_markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    fits = list(FITS)
    lines = [
        START,
        "## Models of the true label against gold, and the gold-free choice (issue 19)",
        "",
        "Written by `benchmarks/gold.py` (do not edit by hand; rerun it). Reproduce: "
        "`python benchmarks/gold.py` (one data set or fit: `--datasets NAME --fits glad,choice`).",
        "",
        f"- date: {meta['date']}; machine: {meta['machine']}",
        f"- {meta['versions']}",
        "- gold labels are never given to the models; each of our fits runs in its own "
        "process, at the defaults, seed 1 (NUTS: 4 chains after 500 tuning steps, started at "
        "the EM estimate; draws per chain set by the fit's own checks: the sample stops at the "
        "first of 1,000, 1,500, 2,000, 3,000, 4,000 where the fit passes them, or where "
        "divergences or failed mode checks appear; community Dawid-Skene: a fixed 1,000; the "
        "draws are in the last table); accuracy of the most probable label on the gold "
        "items; `h` after a NUTS figure: the fit fails its own health checks (R-hat, ESS, "
        "divergences, label switching, mode checks)",
        "- choice: `raterstats.choose_model(ratings)` at its defaults (held-out ratings, 3 x "
        "10%, EM fits of MACE, Dawid-Skene, GLAD, community Dawid-Skene, EBCC); its rule "
        "(highest held-out log predictive density) was fixed before any gold accuracy was "
        "computed; its accuracy is the picked model's NUTS fit (else EM)",
        "",
        "### Accuracy (EM / NUTS)",
        "",
        "| data set | ratings | gold | "
        + " | ".join(fits)
        + " | crowd-kit DS | crowd-kit MACE | crowd-kit GLAD | published EBCC / BWA / IBCC |",
        "|---|---:|---:|" + "---|" * len(fits) + "---:|---:|---:|---|",
    ]
    for r in rows:
        cells = []
        for f in fits:
            em = fmt_number(r.get(f"{f}_em_acc"))
            nuts = fmt_number(r.get(f"{f}_nuts_acc"))
            if f"{f}_nuts_acc" in r and not r.get(f"{f}_nuts_health_ok", True):
                nuts += " h"
            cells.append(f"{em} / {nuts}")
        pub = PUBLISHED.get(r["dataset"], {})
        lines.append(
            f"| {r['dataset']} | {r['ratings']:,} | {r['gold']:,} | "
            + " | ".join(cells)
            + " | "
            + " | ".join(fmt_number(r.get(f"ck_{m}_acc")) for m in CROWDKIT)
            + " | "
            + (" / ".join(fmt_number(pub.get(k)) for k in ("EBCC", "BWA", "IBCC")) if pub else "-")
            + " |"
        )
    lines += [
        "",
        "### The gold-free choice against the bar",
        "",
        "Bar: max(crowd-kit DS, MACE, GLAD, published EBCC / BWA / IBCC) - 0.005. McNemar: "
        "exact two-sided test on the gold items, the choice's fit against each crowd-kit "
        "method (items only ours right / only theirs right, p).",
        "",
        "| data set | pick | its fit | accuracy | bar (best reference) | McNemar vs DS | vs MACE "
        "| vs GLAD | met | best by gold |",
        "|---|---|---|---:|---|---|---|---|---|---|",
    ]
    met_all = []
    for r in rows:
        v = verdict(r)
        met_all.append(v["met"])
        mc = []
        for m in CROWDKIT:
            t = v["mcnemar"].get(m)
            mc.append(f"{t['ours_only']} / {t['theirs_only']}, p = {t['p']:.2f}" if t else "-")
        bar = f"{v['bar']:.3f} ({v['best_ref']})" if v.get("bar") is not None else "-"
        lines.append(
            f"| {r['dataset']} | {v['chosen'] or '-'} | {v['fit'] or '-'} | "
            f"{fmt_number(v['acc'])} | {bar} | "
            + " | ".join(mc)
            + f" | {'yes' if v['met'] else ('**no**' if v['met'] is False else '-')} | "
            f"{v['best_by_gold'] or '-'} ({fmt_number(v['best_by_gold_acc'])}) |"
        )
    lines += ["", "Held-out comparison of each choice (elpd per held-out rating, best first):", ""]
    for r in rows:
        c = r.get("choice") or {}
        if "table" not in c:
            lines.append(f"- {r['dataset']}: {c.get('error', 'not run')}")
            continue
        parts = [
            f"{t['model']} {t['per_rating']:.4f}"
            + (f" ({t['elpd_diff']:+.1f}, se {t['se_diff']:.1f})" if t["rank"] > 0 else "")
            if t["elpd"] == t["elpd"]
            else f"{t['model']} not compared ({t['note']})"
            for t in c["table"]
        ]
        lines.append(f"- {r['dataset']} ({c['s']:.0f} s): " + "; ".join(parts))
    # log loss: NUTS vs EM
    pairs = [
        (r["dataset"], f, r[f"{f}_nuts_logloss"] < r[f"{f}_em_logloss"])
        for r in rows
        for f in fits
        if f"{f}_nuts_logloss" in r and f"{f}_em_logloss" in r
    ]
    better = sum(b for *_, b in pairs)

    def log_loss(r: dict[str, Any], f: str) -> str:
        return f"{fmt_number(r.get(f'{f}_em_logloss'))} / {fmt_number(r.get(f'{f}_nuts_logloss'))}"

    def draws(r: dict[str, Any], f: str) -> str:
        n = r.get(f"{f}_nuts_draws")
        ok = r.get(f"{f}_nuts_health_ok", True)
        return "-" if n is None else f"{n:,}" + ("" if ok else " h")

    title = "Calibration: log loss of P(gold label), EM / NUTS"
    lines += per_fit_table(title, rows, fits, log_loss)
    lines += per_fit_table(
        "NUTS: draws per chain (`h`: the fit fails its checks at the last)",
        rows,
        fits,
        draws,
        align="---:|",
    )
    worse = [f"{d} {f}" for d, f, b in pairs if not b]
    n_met = sum(m is True for m in met_all)
    lines += [
        "",
        "### Acceptance (issue 19)",
        "",
        f"- the choice at the bar or not significantly below it on every gold set: "
        f"{n_met} of {len(met_all)} data sets: "
        + ("**met**" if met_all and all(m is True for m in met_all) else "**NOT met**"),
        f"- NUTS log loss below EM's on at least 90% of the (data set, model) pairs: "
        f"{better} of {len(pairs)}"
        + (f" ({100 * better / len(pairs):.0f}%)" if pairs else "")
        + (f"; not on: {', '.join(worse)}" if worse else "")
        + ": "
        + ("**met**" if pairs and better >= 0.9 * len(pairs) else "**NOT met**"),
    ]
    skipped = [
        f"{r['dataset']} {k[: -len('_skipped')]}: {r[k]}"
        for r in rows
        for k in r
        if k.endswith("_skipped") or (k.startswith("ck_") and k.endswith("_error"))
    ]
    if skipped:
        lines += ["", "Not run or failed:", ""] + [f"- {s}" for s in skipped]
    lines.append(END)
    return "\n".join(lines)


def stored_meta(path: Path) -> dict[str, str] | None:
    """The date, machine and versions lines of the gold section in ``path`` (what a render
    from the results file keeps), or None where there is no such section."""
    text = path.read_text() if path.exists() else ""
    if START not in text:
        return None
    found = re.search(r"^- date: (.*?); machine: (.*)\n- (.*)$", text.split(START, 1)[1], re.M)
    if found is None:
        return None
    return dict(zip(("date", "machine", "versions"), found.groups(), strict=True))


def per_fit_table(
    title: str, rows: list[dict[str, Any]], fits: list[str], cell: Any, align: str = "---|"
) -> list[str]:
    """A markdown section: one row per data set, one column per fit, ``cell(row, fit)``."""
    lines = ["", f"### {title}", "", "| data set | " + " | ".join(fits) + " |"]
    lines.append("|---|" + align * len(fits))
    for r in rows:
        lines.append(f"| {r['dataset']} | " + " | ".join(cell(r, f) for f in fits) + " |")
    return lines


def versions() -> str:
    from importlib import metadata

    parts = [f"Python {platform.python_version()}"]
    for pkg in ("raterstats", "pymc", "nutpie", "numpy", "crowd-kit"):
        try:
            parts.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{pkg} not installed")
    return ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="", help="data sets (default all)")
    parser.add_argument(
        "--fits", default="", help="our fits, 'choice', 'crowdkit' (default all): " + ",".join(FITS)
    )
    parser.add_argument("--methods", default="em,nuts")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per process")
    parser.add_argument("--nuts-max-ratings", type=int, default=120_000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if not DATA_ROOT.exists():
        sys.exit(f"gold.py: {DATA_ROOT} not found (the shared data sets beside the repository)")
    old = (
        {r["dataset"]: unpack_correct(r) for r in json.loads(RESULTS_JSON.read_text())}
        if (RESULTS_JSON.exists())
        else {}
    )
    names = [d for d in DATASETS if not args.datasets or d in args.datasets.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if not (DATA_ROOT / name / "data.csv").exists():
                continue
            old[name] = run_dataset(name, args, Path(tmp), old.get(name, {}))
            if not args.no_write:
                write_results(old)
    rows = [old[d] for d in DATASETS if d in old]
    if not args.no_write and not names:  # a render only: the file in its current form
        write_results(old)
    meta = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "versions": versions(),
    }
    if not names:  # a render: the date, machine and versions of the last measurement
        meta = stored_meta(Path(__file__).with_name("RESULTS.md")) or meta
    text = to_markdown(rows, meta)
    print(text)
    if not args.no_write:
        update_results(Path(__file__).with_name("RESULTS.md"), text, START, END)


if __name__ == "__main__":
    os.chdir(REPO)
    main()
