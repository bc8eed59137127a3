"""GLAD on the real categorical data sets with gold labels: raterstats' EM and NUTS against
crowd-kit's GLAD.

For each data set in ``../shared/data`` read as ``categorical.py --parts real`` reads it
(``categorical.load_dataset``), every fit in a child process of its own (seed 1, default
priors and settings):

* ``em``: ``GLAD().fit(ratings, method="em")`` (MAP-EM, five restarts);
* ``nuts``: ``GLAD().fit(ratings)`` (nutpie on the compiled density, chains started at the
  EM estimate), on data sets with at most ``--nuts-max-ratings`` ratings and stopped after
  ``--timeout`` seconds;
* ``em_uniform``: EM with the label prior held uniform (``Dirichlet(a=1e6)``), the choice
  crowd-kit and Whitehill et al. make; reported to explain the difference between the two
  EMs, not a default (the default was fixed before any of these figures were seen, and
  none of them changes it);
* ``crowd-kit``: ``crowdkit.aggregation.GLAD()`` with its defaults (the same environment).

Scores: accuracy of the most probable label and log loss of P(gold label) over the items
with gold (``categorical.label_scores``), and seconds. Run::

    python benchmarks/glad.py                      # updates benchmarks/RESULTS.md
    python benchmarks/glad.py --datasets snow2008_rte --fits em,crowdkit
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from categorical import (  # noqa: E402
    DATA_ROOT,
    fmt_number,
    label_scores,
    load_dataset,
    machine,
    run_child,
    update_results,
)

START = "<!-- glad:start -->"
END = "<!-- glad:end -->"
RESULTS = HERE / "glad_results.json"
REPRODUCE = "python benchmarks/glad.py"

DATASETS = [
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
]
FITS = ("em", "em_uniform", "nuts", "crowdkit")

#: crowd-kit's GLAD accuracy published in the data sets' READMEs (Ustalov et al. 2024)
PUBLISHED = {
    "zheng2017_product": 0.928,
    "zheng2017_possent": 0.948,
    "zheng2017_relevance": 0.511,
    "zheng2017_adult": 0.760,
}

CHILD_OURS = r"""
import json, sys, time
sys.path.insert(0, "benchmarks")
import numpy as np
from categorical import item_probs, load_dataset
from raterstats import diagnose
from raterstats.models import GLAD, Prior
from raterstats.models.latent_class import adversarial_rating_share
spec = json.loads(sys.argv[1])
r, gold, _, _ = load_dataset(spec["name"])
fit = spec["fit"]
model = GLAD(priors={"prevalence": Prior("Dirichlet", a=1e6)}) if fit == "em_uniform" else GLAD()
# NUTS at a fixed 1,000 draws (the default before checkpoints; benchmarks/gold.py fits at those)
kw = {"progress": False, "draws": 1000} if fit == "nuts" else {"method": "em"}
t0 = time.perf_counter()
dtree = model.fit(r, random_seed=1, log_likelihood=False, **kw)
out = {"s": time.perf_counter() - t0, "probas": item_probs(dtree)}
prev = dtree.posterior["prevalence"].mean(("chain", "draw")).values[0]
out["prevalence"] = [float(v) for v in prev]
out["adversarial"] = adversarial_rating_share(dtree)
if fit == "nuts":
    d = diagnose(dtree, warn=False)
    out["rhat"] = float(np.nanmax(d.parameters["rhat"].to_numpy()))
    out["ess_bulk"] = float(np.nanmin(d.parameters["ess_bulk"].to_numpy()))
    out["div"] = int(d.divergences)
    out["steps"] = float(dtree.sample_stats["n_steps"].mean())
else:
    st = dtree.sample_stats.attrs
    out["iterations"] = int(sum(json.loads(st["restart_iterations"])))
print("RESULT " + json.dumps(out))
"""

CHILD_CROWDKIT = r"""
import json, sys, time
import pandas as pd
from crowdkit.aggregation import GLAD
spec = json.loads(sys.argv[1])
df = pd.read_parquet(spec["data"]).rename(columns={"item": "task", "rater": "worker"})
t0 = time.perf_counter()
model = GLAD().fit(df[["task", "worker", "label"]])
out = {"s": time.perf_counter() - t0, "iterations": len(model.loss_history_)}
out["probas"] = {
    str(k): {str(c): float(p) for c, p in row.items()} for k, row in model.probas_.iterrows()
}
print("RESULT " + json.dumps(out))
"""


def run_dataset(name: str, fits: set[str], args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    r, gold, ck, dropped = load_dataset(name)
    row: dict[str, Any] = {
        "dataset": name,
        "K": len(r.scales[next(iter(r.scales))].levels),
        "ratings": r.n_ratings,
        "items": int(r.data["item"].n_unique()),
        "gold": len(gold),
        "dropped_third_repeats": dropped,
        "published_crowdkit": PUBLISHED.get(name),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    labels: dict[str, dict[str, str]] = {}
    for fit in FITS:
        if fit not in fits:
            continue
        if fit == "nuts" and r.n_ratings > args.nuts_max_ratings:
            row["nuts_skipped"] = (
                f"{r.n_ratings:,} ratings > --nuts-max-ratings {args.nuts_max_ratings:,}"
            )
            continue
        if fit == "crowdkit":
            path = tmp / f"{name}.parquet"
            ck.write_parquet(path)
            res = run_child(sys.executable, CHILD_CROWDKIT, {"data": str(path)}, args.timeout)
        else:
            res = run_child(sys.executable, CHILD_OURS, {"name": name, "fit": fit}, args.timeout)
        if "error" in res:
            row[f"{fit}_skipped"] = " ".join(str(res["error"]).split())[-200:]
            continue
        probas = res.pop("probas")
        labels[fit] = {i: max(p, key=lambda k: p[k]) for i, p in probas.items()}
        acc, ll = label_scores(probas, gold)
        row[f"{fit}_acc"], row[f"{fit}_logloss"] = acc, ll
        row[f"{fit}_load"] = res.pop("load")
        for k, v in res.items():
            row[f"{fit}_{k}"] = v
        print(f"{name} {fit}: acc {acc:.4f} log loss {ll:.3f} ({res['s']:.1f} s)", flush=True)
    for ours in ("em", "em_uniform"):  # the same label as crowd-kit's, over all items
        if ours in labels and "crowdkit" in labels:
            theirs = labels["crowdkit"]
            same = [labels[ours][i] == theirs[i] for i in labels[ours] if i in theirs]
            row[f"{ours}_same_as_crowdkit"] = float(sum(same) / len(same))
    return row


def owner(key: str) -> str | None:
    """The fit a result key belongs to (the longest of :data:`FITS` that prefixes it with
    ``_``: ``em_uniform_acc`` is ``em_uniform``'s, ``em_acc`` ``em``'s); None: the data
    set's own."""
    found = [f for f in FITS if key.startswith(f + "_")]
    return max(found, key=len) if found else None


def to_markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        START,
        "## GLAD on the real data sets (issue 19)",
        "",
        "Written by `benchmarks/glad.py` (rerun it; do not edit by hand). Reproduce: "
        f"`{REPRODUCE}` (one data set or fit: `--datasets NAME`, `--fits em,crowdkit`).",
        "",
        f"- fits run {meta['first']} to {meta['last']} (a rerun of some fits keeps the "
        f"others); raterstats {meta['version']}; crowd-kit {meta['crowdkit']}",
        f"- machine: {meta['machine']}; each fit's load average is in the second table",
        "- seed 1, default priors and settings; every fit in a process of its own, its seconds "
        "measured inside it (NUTS: EM start, sampling, label posteriors and diagnostics; "
        "4 chains x 1,000 draws after 500 tuning steps, a fixed count: the default before "
        "the draws were set by the fit's checks); `load` is the 1-minute load average "
        "when the fit started",
        "- `EM (uniform pi)`: EM with the label prior held uniform (crowd-kit's and Whitehill "
        "et al.'s choice), shown to explain the difference between the two EMs; not the "
        "default, and not chosen on these figures",
        f"- NUTS only on data sets with at most {meta['nuts_max_ratings']:,} ratings (a fit "
        "of the larger ones takes well over the benchmark's budget on this 2-core machine)",
        "- accuracy of the most probable label and log loss of P(gold label) on the items "
        "with gold; `published`: crowd-kit's GLAD accuracy in the data set's README "
        "(Ustalov et al. 2024)",
        "",
        "| data set | K | ratings | gold | EM acc | EM (uniform pi) acc | NUTS acc "
        "| crowd-kit acc | published | EM log loss | EM (uniform pi) log loss "
        "| NUTS log loss | crowd-kit log loss |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['K']} | {r['ratings']:,} | {r['gold']:,} "
            f"| {fmt_number(r.get('em_acc'), '.4f')} "
            f"| {fmt_number(r.get('em_uniform_acc'), '.4f')} "
            f"| {fmt_number(r.get('nuts_acc'), '.4f')} "
            f"| {fmt_number(r.get('crowdkit_acc'), '.4f')} "
            f"| {fmt_number(r.get('published_crowdkit'), '.3f')} "
            f"| {fmt_number(r.get('em_logloss'))} | {fmt_number(r.get('em_uniform_logloss'))} "
            f"| {fmt_number(r.get('nuts_logloss'))} | {fmt_number(r.get('crowdkit_logloss'))} |"
        )
    lines += [
        "",
        "| data set | EM s (load) | EM iterations | NUTS s (load) | NUTS max R-hat / div / min "
        "bulk ESS | EM pi_1 | NUTS pi_1 | EM adversarial | crowd-kit s (iterations) "
        "| EM = crowd-kit label | EM (uniform pi) = crowd-kit label |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:

        def timed(fit: str, r: dict[str, Any] = r) -> str:
            if f"{fit}_s" not in r:
                return "skipped" if f"{fit}_skipped" in r else "-"
            return f"{r[f'{fit}_s']:.1f} ({r[f'{fit}_load']:.1f})"

        diag = (
            f"{r['nuts_rhat']:.3f} / {r['nuts_div']} / {r['nuts_ess_bulk']:.0f}"
            if "nuts_rhat" in r
            else "-"
        )
        ck = f"{r['crowdkit_s']:.1f} ({r['crowdkit_iterations']})" if "crowdkit_s" in r else "-"
        lines.append(
            f"| {r['dataset']} | {timed('em')} | {r.get('em_iterations', '-')} "
            f"| {timed('nuts')} | {diag} "
            f"| {fmt_number(r.get('em_prevalence', [None])[0])} "
            f"| {fmt_number(r.get('nuts_prevalence', [None])[0])} "
            f"| {fmt_number(r.get('em_adversarial'), '.2f')} | {ck} "
            f"| {fmt_number(r.get('em_same_as_crowdkit'))} "
            f"| {fmt_number(r.get('em_uniform_same_as_crowdkit'))} |"
        )
    both = [r for r in rows if "em_acc" in r and "crowdkit_acc" in r]
    nuts = [r for r in rows if "nuts_logloss" in r and "em_logloss" in r]
    lines += [
        "",
        f"- EM at least as accurate as crowd-kit's GLAD on "
        f"{sum(r['em_acc'] >= r['crowdkit_acc'] for r in both)} of {len(both)} data sets; "
        f"lower log loss on {sum(r['em_logloss'] < r['crowdkit_logloss'] for r in both)}",
        f"- NUTS lower log loss than EM on "
        f"{sum(r['nuts_logloss'] < r['em_logloss'] for r in nuts)} of {len(nuts)} data sets "
        "with a NUTS fit",
        "- `pi_1`: estimated prevalence of the first category (the posterior mean for NUTS); "
        "`EM adversarial`: the share of ratings from raters with negative ability in the EM "
        "fit (`adversarial_rating_share`, no gold used; above 0.5 a NUTS fit reports it as a "
        "problem); `= crowd-kit label`: the share of all items (gold or not) given the same "
        "most probable label as crowd-kit's GLAD",
        "",
        END,
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default="", help="comma-separated data sets (default: all)")
    p.add_argument("--fits", default=",".join(FITS), help=f"comma-separated of {FITS}")
    p.add_argument("--nuts-max-ratings", type=int, default=30_000)
    p.add_argument("--timeout", type=int, default=1800, help="seconds per fit")
    p.add_argument("--no-write", action="store_true", help="print, do not update RESULTS.md")
    p.add_argument(
        "--render-only",
        action="store_true",
        help="fit nothing: rewrite the RESULTS.md section from glad_results.json",
    )
    args = p.parse_args()
    fits = {f.strip() for f in args.fits.split(",") if f.strip()}
    names = [d for d in DATASETS if not args.datasets or d in args.datasets.split(",")]
    old = {r["dataset"]: r for r in json.loads(RESULTS.read_text())} if RESULTS.exists() else {}
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"glad_bench_{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    for name in [] if args.render_only else names:
        if not (DATA_ROOT / name / "data.csv").exists():
            old[name] = {"dataset": name, "error": "data not available"}
            continue
        row = run_dataset(name, fits, args, tmp)
        kept = {k: v for k, v in old.get(name, {}).items() if owner(k) not in fits}
        old[name] = kept | row
    rows = [old[d] for d in DATASETS if d in old and "error" not in old[d]]
    RESULTS.write_text(json.dumps(rows, indent=1) + "\n")
    from importlib import metadata

    import raterstats

    meta = {
        "first": min((r["date"] for r in rows if "date" in r), default="-"),
        "last": max((r["date"] for r in rows if "date" in r), default="-"),
        "version": raterstats.__version__,
        "crowdkit": metadata.version("crowd-kit"),
        "machine": machine(),
        "nuts_max_ratings": args.nuts_max_ratings,
    }
    section = to_markdown(rows, meta)
    if args.no_write:
        print(section)
    else:
        update_results(HERE / "RESULTS.md", section, START, END)


if __name__ == "__main__":
    main()
