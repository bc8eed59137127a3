"""Dawid & Skene (1979): anaesthetists' ratings of pre-operative health — class prevalences
and each rater's confusion matrix.

Data: 45 patients rated by 5 anaesthetists on a 4-point scale; anaesthetist 1 rated every
patient three times, weeks apart (Dawid & Skene 1979, Applied Statistics 28(1):20-28, the
data of the original paper), as shipped in the R package ``rater`` (jeffreypullin/rater,
GPL-2) and converted in the project's shared data folder
(``../shared/data/dawid_skene1979_anaesthesia``). The package (MIT) does not redistribute
the GPL-2 file: the data are read from there.

Ratings hold one repeat per (patient, rater), so the second rating of anaesthetist 1 is a
repeated rating (same confusion matrix) and the third is entered as rater "1 (3rd)".

The script fits :class:`raterstats.DawidSkene` by EM (the 1979 paper's estimator) and by
NUTS, and prints the class prevalences next to the posterior means published by the R
package rater (README of jeffreypullin/rater: 0.3756, 0.4073, 0.1432, 0.0738), each
rater's accuracy and confusion matrix, and the patients whose true class is least certain.

Run:  python examples/anaesthesia.py [--draws 1000] [--data PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

from raterstats import (
    DawidSkene,
    diagnose,
    item_posterior,
    rater_summary,
)
from raterstats.datasets import read_anaesthesia

DEFAULT = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dawid_skene1979_anaesthesia"
)
#: Posterior means of the prevalences under rater's Bayesian Dawid-Skene model (its README).
PUBLISHED_PREVALENCE = (0.3756, 0.4073, 0.1432, 0.0738)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not (args.data / "data.csv").exists():
        print(
            f"skipped: {args.data / 'data.csv'} is not here (the shared data folder is "
            "beside the repository in CI and on the project's machines)"
        )
        return 0
    ratings = read_anaesthesia(args.data / "data.csv")
    print(ratings)
    em = DawidSkene().fit(ratings, method="em", random_seed=args.seed)
    nuts = DawidSkene().fit(
        ratings, draws=args.draws, tune=args.draws, random_seed=args.seed, progress=False
    )
    diag = diagnose(nuts, warn=False)
    rhat = float(diag.parameters["rhat"].max())
    print(f"NUTS: {diag.divergences} divergences, max R-hat {rhat:.3f}")

    prev_em = em["posterior"]["prevalence"].isel(chain=0, draw=0, dimension=0).values
    prev_nuts = nuts["posterior"]["prevalence"].isel(dimension=0)
    mean = prev_nuts.mean(("chain", "draw")).values
    low = prev_nuts.quantile(0.05, ("chain", "draw")).values
    high = prev_nuts.quantile(0.95, ("chain", "draw")).values
    prev = pl.DataFrame(
        {
            "class": [1, 2, 3, 4],
            "EM": prev_em,
            "NUTS mean": mean,
            "NUTS 5%": low,
            "NUTS 95%": high,
            "rater (R) published": PUBLISHED_PREVALENCE,
        }
    )
    with pl.Config(float_precision=3, tbl_hide_dataframe_shape=True):
        print("Class prevalences")
        print(prev)
        summ = rater_summary(nuts).isel(dimension=0, design=0)
        acc = pl.DataFrame(
            {
                "anaesthetist": [str(r) for r in summ["rater"].values],
                "accuracy": summ["accuracy_mean"].values,
                "5%": summ["accuracy_low"].values,
                "95%": summ["accuracy_high"].values,
                "ratings": summ["n_ratings"].values,
            }
        )
        print("Rater accuracy (P(rating = true class), prevalence-weighted; NUTS)")
        print(acc)
        for r in summ["rater"].values:
            m = summ["confusion_mean"].sel(rater=r).values
            print(f"Confusion matrix of anaesthetist {r} (rows: true class 1-4, cols: rated)")
            print(np.array2string(m, precision=2, suppress_small=True))
        post = item_posterior(nuts).isel(dimension=0)
        order = np.argsort(-post["entropy"].values)[:5]
        print("Least certain patients (posterior class probabilities, NUTS)")
        for i in order:
            probs = ", ".join(f"{p:.2f}" for p in post["prob"].values[i])
            print(f"  patient {post['item'].values[i]}: {probs}")
    gap = float(np.max(np.abs(mean - np.array(PUBLISHED_PREVALENCE))))
    print(f"largest difference from the published prevalences: {gap:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
