"""Sensitivity of Dawid-Skene's gold accuracy and calibration to the confusion prior.

The categorical benchmark (``categorical.py``) compares our default-prior fits with
crowd-kit. On two data sets (zheng2017_product, zheng2017_dog) crowd-kit's DawidSkene is
slightly more accurate. This script asks how much of that is the prior: it refits
Dawid-Skene (unpooled) by EM on every real data set under four confusion priors and
scores P(true label) against gold, beside crowd-kit's figures from
``categorical_results.json`` (run ``categorical.py`` first).

Priors (rows of rater j's confusion matrix, K categories):

* ``fixed``: Dirichlet(2.5 K on the diagonal, 1 elsewhere), prevalence Dirichlet(3): the
  package default before issue 19 (the Stan User's Guide's Dawid-Skene priors;
  ``DawidSkene(confusion_prior="fixed")``);
* ``rater``: Dirichlet(N p on the diagonal, N (1 - p) / (K - 1) elsewhere) with N = 8,
  p = 0.6, prevalence Dirichlet(3): the current default of the R package rater;
* ``laplace``: Dirichlet(1), prevalence Dirichlet(1) (add-one smoothing);
* ``ml``: Dirichlet(0.001), prevalence Dirichlet(0.001): numerically maximum likelihood,
  the estimator crowd-kit's DawidSkene computes;
* ``eb_rows``: the Dirichlet rows learnt from the ratings by this script's own procedure
  (empirical Bayes, as in Kim & Ghahramani's 2012 Bayesian classifier combination with
  learnt hyperparameters): one K-vector of concentrations per true class, shared by all
  raters, fitted by alternating EM at the current prior with the Dirichlet-multinomial
  maximum-likelihood update of the concentrations given the raters' expected confusion
  counts, from the fixed prior until no concentration moves by more than 0.1 %;
* ``eb``: the package's empirical Bayes with learnt mean rows and one concentration per
  dimension x design (``DawidSkene(confusion_prior="empirical_bayes")``);
* ``eb_scale``: the package's default since issue 19, only the concentration learnt, the
  mean rows the fixed prior's (``DawidSkene()``, ``confusion_prior="auto"``; chosen on
  simulated crowds by ``benchmarks/hard_crowds.py``, not on these gold labels).

The priors are fixed in advance (``eb``: its procedure), not chosen on the gold labels;
the script reports every data set whichever way it goes. Run::

    .venv/bin/python benchmarks/ds_prior.py      # updates benchmarks/RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from categorical import (  # noqa: E402
    DATA_ROOT,
    DATASETS,
    fmt_number,
    item_probs,
    label_scores,
    load_dataset,
    update_results,
)

START = "<!-- ds-prior:start -->"
END = "<!-- ds-prior:end -->"
PRIORS = ("fixed", "rater", "laplace", "ml", "eb_rows", "eb", "eb_scale")


def model_for(name: str, K: int) -> Any:
    """Dawid-Skene (unpooled) with prior ``name`` (not ``eb_rows``, a procedure)."""
    from raterstats import DawidSkene

    if name == "eb":
        return DawidSkene(confusion_prior="empirical_bayes")
    if name == "eb_scale":
        return DawidSkene()
    return DawidSkene(priors=priors_for(name, K), confusion_prior="fixed")


def priors_for(name: str, K: int) -> dict[str, Any]:
    """The ``priors=`` argument of :class:`~raterstats.DawidSkene` for a fixed prior."""
    from raterstats.models import Prior

    if name == "fixed":
        return {}
    if name == "rater":
        n, p = 8.0, 0.6
        return {"confusion": Prior("Dirichlet", off_diagonal=n * (1 - p) / (K - 1), diagonal=n * p)}
    a = 1.0 if name == "laplace" else 1e-3
    return {
        "confusion": Prior("Dirichlet", off_diagonal=a, diagonal=a),
        "prevalence": Prior("Dirichlet", a=a),
    }


def expected_confusion_counts(fit: Any, ratings: Any, K: int) -> np.ndarray:
    """``(rater, true, rated)`` expected counts: each rating of rater j with label a adds
    P(true label = t) of its item to ``n[j, t, a]`` (the E-step's sufficient statistics)."""
    from raterstats import item_posterior

    post = item_posterior(fit).isel(dimension=0)
    item_ix = {str(i): j for j, i in enumerate(post["item"].values)}
    label_ix = {str(v): k for k, v in enumerate(post["category_label"].values)}
    raters = sorted(set(ratings["rater"].to_list()))
    rater_ix = {x: j for j, x in enumerate(raters)}
    ii = np.array([item_ix[str(i)] for i in ratings["item"]])
    jj = np.array([rater_ix[x] for x in ratings["rater"]])
    aa = np.array([label_ix[str(x)] for x in ratings["label"]])
    q = post["prob"].values
    n = np.zeros((len(raters), K, K))
    for t in range(K):
        np.add.at(n[:, t, :], (jj, aa), q[ii, t])
    return n


def dirichlet_multinomial_ml(n: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Concentrations ``a[t, :]`` maximising sum_j log DirMult(n[j, t, :] | a[t, :])."""
    from scipy.optimize import minimize
    from scipy.special import gammaln

    K = start.shape[0]

    def nll(x: np.ndarray) -> float:
        a = np.exp(x).reshape(K, K)
        tot = a.sum(axis=1)
        ll = gammaln(tot)[None] - gammaln(n.sum(axis=-1) + tot[None])
        ll = ll + (gammaln(n + a[None]) - gammaln(a)[None]).sum(axis=-1)
        return float(-ll.sum())

    res = minimize(nll, np.log(start).ravel(), method="L-BFGS-B")
    return np.exp(res.x).reshape(K, K)


def empirical_bayes_fit(r: Any, ratings: Any, K: int, max_outer: int = 20) -> tuple[Any, Any, int]:
    """EM at the current Dirichlet rows, then their type-II ML update, until they settle."""
    from raterstats import DawidSkene
    from raterstats.models import Prior

    conc = np.ones((K, K)) + np.eye(K) * (2.5 * K - 1)  # the fixed prior
    for outer in range(1, max_outer + 1):
        fit = DawidSkene(
            priors={"confusion": Prior("Dirichlet", a=conc)}, confusion_prior="fixed"
        ).fit(r, method="em", random_seed=1, progress=False)
        new = dirichlet_multinomial_ml(expected_confusion_counts(fit, ratings, K), conc)
        if np.max(np.abs(np.log(new / conc))) < 1e-3:
            return fit, conc, outer
        conc = new
    return fit, conc, max_outer


def run() -> list[dict[str, Any]]:
    ck_path = HERE / "categorical_results.json"
    ck = {r["dataset"]: r for r in json.loads(ck_path.read_text())["accuracy"]}
    rows = []
    for name, _ in DATASETS:
        if not (DATA_ROOT / name / "data.csv").exists():
            rows.append({"dataset": name, "error": "data not available"})
            continue
        r, gold, ratings, _ = load_dataset(name)
        (K,) = {int(r.scale_for(d).n_levels) for d in r.dimensions}
        row: dict[str, Any] = {"dataset": name, "K": K, "gold": len(gold)}
        for prior in PRIORS:
            t0 = time.perf_counter()
            if prior == "eb_rows":
                fit, conc, n_outer = empirical_bayes_fit(r, ratings, K)
                row["eb_rows_conc"], row["eb_rows_outer"] = conc.tolist(), n_outer
            else:
                fit = model_for(prior, K).fit(r, method="em", random_seed=1, progress=False)
                if prior.startswith("eb"):
                    learnt = json.loads(fit.attrs["options"])["confusion_concentration"]
                    row[f"{prior}_s"] = float(np.sum(learnt[0][0][0]))
            row[f"{prior}_seconds"] = time.perf_counter() - t0
            row[f"{prior}_acc"], row[f"{prior}_ll"] = label_scores(item_probs(fit), gold)
        c = ck.get(name, {})
        row["ck_acc"], row["ck_ll"] = c.get("ck_ds_acc"), c.get("ck_ds_logloss")
        rows.append(row)
        print(name, {k: round(v, 4) for k, v in row.items() if isinstance(v, float)}, flush=True)
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    import raterstats

    ok = [r for r in rows if "error" not in r]
    lines = [
        START,
        "## Dawid-Skene: sensitivity to the confusion prior",
        "",
        "Written by `benchmarks/ds_prior.py` (rerun it; do not edit by hand).",
        "",
        "Reproduce: `python benchmarks/ds_prior.py` (its crowd-kit column comes from "
        "`python benchmarks/categorical.py --parts real`).",
        "",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; raterstats "
        f"{raterstats.__version__}",
        "- Dawid-Skene (unpooled) by EM (5 restarts), seed 1, every prior (for the learnt "
        "ones, their procedure) fixed in advance: "
        "`fixed` Dirichlet(2.5 K diagonal, 1 off), the package default before issue 19 "
        "(Stan User's Guide); "
        "`rater` the R package rater's current default (N = 8 pseudo-counts, prior mean "
        "accuracy 0.6); `laplace` Dirichlet(1); `ml` Dirichlet(0.001) on confusion rows and "
        "prevalence, numerically maximum likelihood (what crowd-kit's DawidSkene computes); "
        "`eb_rows` Dirichlet rows learnt from the ratings by this script (one concentration "
        "vector per true class shared by the raters, alternating EM and the "
        "Dirichlet-multinomial ML update from the fixed prior; no gold); `eb` the package's "
        "empirical Bayes with learnt mean rows; `eb_scale` the package default since issue "
        "19 (only the concentration learnt, chosen on simulated crowds by "
        "`benchmarks/hard_crowds.py`)",
        "- accuracy of the most probable label and log loss of P(true label) on the gold "
        "items; crowd-kit DS from `categorical_results.json` (the categorical benchmark's run)",
        "",
        "| data set | K | gold | " + " | ".join(f"{p} acc" for p in PRIORS)
        + " | crowd-kit DS acc | " + " | ".join(f"{p} log loss" for p in PRIORS)
        + " | crowd-kit DS log loss |",
        "|---|---:|---:|" + "---:|" * (2 * len(PRIORS) + 2),
    ]  # fmt: skip
    for r in ok:
        lines.append(
            f"| {r['dataset']} | {r['K']} | {r['gold']:,} | "
            + " | ".join(fmt_number(r[f"{p}_acc"], ".4f") for p in PRIORS)
            + f" | {fmt_number(r['ck_acc'], '.4f')} | "
            + " | ".join(fmt_number(r[f"{p}_ll"], ".3f") for p in PRIORS)
            + f" | {fmt_number(r['ck_ll'], '.3f')} |"
        )
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['dataset']} | - | - | {r['error']} |")
    n = len(ok)
    lines += ["", "Counts over the data sets with results:", ""]
    for p in PRIORS:
        ge = sum(r["ck_acc"] is not None and r[f"{p}_acc"] >= r["ck_acc"] - 1e-12 for r in ok)
        lower_ll = sum(r[f"{p}_ll"] < r["fixed_ll"] for r in ok) if p != "fixed" else None
        extra = "" if lower_ll is None else f"; log loss below the fixed prior's on {lower_ll}"
        lines.append(f"- `{p}`: accuracy at least crowd-kit DS's on {ge} of {n}{extra}")
    lines += ["", END, ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--print-only", action="store_true")
    args = parser.parse_args()
    rows = run()
    section = report(rows)
    print(section)
    if not args.print_only:
        update_results(args.out, section, START, END)
        (HERE / "ds_prior_results.json").write_text(json.dumps(rows, indent=1, default=float))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
