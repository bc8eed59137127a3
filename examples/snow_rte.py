"""Snow et al. (2008) RTE: accuracy against gold of MACE and Dawid-Skene vs majority vote.

Data: 800 recognising-textual-entailment pairs (RTE-1), 10 Mechanical Turk labels each from
164 workers, with the expert gold label (Snow, O'Connor, Jurafsky & Ng 2008, "Cheap and
fast - but is it good?", EMNLP), as distributed with the MACE tool (dirkhovy/MACE) and
converted in the project's shared data folder (``../shared/data/snow2008_rte``). The MACE
repository states no licence for the data files ("all rights reserved" for the software),
so the data are read from there and not copied into this package.

The gold labels are kept out of the fits (``use_gold=False``): they are only used to score
the inferred labels. Majority-vote ties are credited 1/k (the expected accuracy under random
tie-breaking). Published reference accuracies on these data: Dawid-Skene / MACE in
crowd-kit 0.928 (Ustalov et al. 2024, JOSS); EBCC 0.931, BWA 0.928, IBCC 0.928 (Li et al.,
truth-inference-at-scale; see the data folder's README).

Run:  python examples/snow_rte.py [--nuts DRAWS] [--data PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from raterstats import MACE, DawidSkene, NominalScale, item_posterior, read_ratings

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "snow2008_rte"


def load(folder: Path):
    """The ratings (gold left out) and the gold label of each item."""
    frame = pl.read_csv(folder / "data.csv", infer_schema_length=0)
    ratings = read_ratings(
        frame.select("item", "annotator", "label"),
        columns={"rater": "annotator", "rating": "label"},
        scale=NominalScale(["0", "1"]),
        name="snow2008_rte",
    )
    gold = dict(frame.select("item", "gold").unique("item").iter_rows())
    return ratings, gold


def majority_accuracy(ratings, gold: dict[str, str]) -> float:
    """Majority vote; an item whose vote is tied among k labels counts 1/k if gold is one."""
    counts = ratings.data.group_by("item", "rating").agg(pl.len().alias("n"))
    top = counts.filter(pl.col("n") == pl.col("n").max().over("item"))
    per_item = top.group_by("item").agg(
        (pl.col("rating") == pl.col("item").replace_strict(gold)).mean().alias("credit")
    )
    return float(per_item["credit"].mean())


def model_accuracy(dt, gold: dict[str, str]) -> float:
    post = item_posterior(dt).isel(dimension=0)
    items = [str(i) for i in post["item"].values]
    labels = post["label"].values
    return float(np.mean([lab == gold[i] for lab, i in zip(labels, items, strict=True)]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--nuts", type=int, default=0, help="also fit by NUTS with this many draws")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not (args.data / "data.csv").exists():
        print(
            f"skipped: {args.data / 'data.csv'} is not here (the shared data folder is "
            "beside the repository in CI and on the project's machines)"
        )
        return 0
    ratings, gold = load(args.data)
    print(ratings)
    rows = [("majority vote", "-", majority_accuracy(ratings, gold), 0.0)]
    models = (("MACE", MACE(use_gold=False)), ("Dawid-Skene", DawidSkene(use_gold=False)))
    methods = ["em"] + (["nuts"] if args.nuts else [])
    for name, model in models:
        for method in methods:
            t0 = time.perf_counter()
            dt = model.fit(
                ratings,
                method=method,
                draws=args.nuts or 1000,
                tune=args.nuts or 1000,
                random_seed=args.seed,
                progress=False,
            )
            rows.append((name, method, model_accuracy(dt, gold), time.perf_counter() - t0))
    table = pl.DataFrame(
        rows, schema=["labels from", "method", "accuracy", "seconds"], orient="row"
    )
    with pl.Config(float_precision=4, tbl_hide_dataframe_shape=True):
        print(table)
    best = table.filter(pl.col("method") != "-")["accuracy"].max()
    print(
        f"gold accuracy: majority vote {rows[0][2]:.4f}, best model {best:.4f} "
        "(published: Dawid-Skene / MACE 0.928 in crowd-kit)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
