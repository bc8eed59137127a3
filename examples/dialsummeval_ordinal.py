"""DialSummEval expert ratings: the ordinal rater model and system rankings with intervals.

Data: DialSummEval (Gao & Wan 2022, NAACL), the three expert annotators' 1-5 ratings of 14
dialogue summarisers on 100 SAMSum dialogues and four dimensions (coherence, consistency,
fluency, relevance), as converted in the project's shared data folder
(``../shared/data/dialsummeval_campus``; the repository states no licence, so the data are
read from there and not copied into this package).

The script fits :class:`raterstats.OrdinalRaters` (one design, no length covariate: the
summaries' lengths are not in the data), ranks the systems per dimension by their latent
effect with 90% intervals and rank probabilities, and compares that ranking with the ranking
by mean rating (Kendall's tau-b).

Run:  python examples/dialsummeval_ordinal.py [--draws 500] [--data PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from raterstats import OrdinalRaters, OrdinalScale, read_ratings
from raterstats.agreement import kendall_tau_b

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dialsummeval_campus"


def load(folder: Path):
    return read_ratings(
        folder / "data.csv",
        columns={
            "rater": "annotator",
            "rating": "label",
            "dimension": "dimension",
            "system": "system_name",
            "question": "document",
        },
        scale=OrdinalScale.likert(5),
        design="expert",
    )


def rankings(dt, ratings) -> pl.DataFrame:
    """Per dimension and system: latent effect (mean, 90% interval), P(best), expected rank
    and mean rating, with the rank under each."""
    s = dt["posterior"]["system_effect"]  # chain, draw, dimension, system
    draws = s.stack(sample=("chain", "draw")).transpose("dimension", "system", "sample").values
    ranks = (-draws).argsort(axis=1).argsort(axis=1) + 1  # rank 1 = best, per draw
    systems = list(s["system"].values)
    means = ratings.data.group_by("dimension", "system").agg(
        pl.col("value").mean().alias("mean_rating")
    )
    rows = []
    for di, d in enumerate(s["dimension"].values):
        for mi, m in enumerate(systems):
            x = draws[di, mi]
            rows.append(
                {
                    "dimension": str(d),
                    "system": m,
                    "latent": float(x.mean()),
                    "low": float(np.quantile(x, 0.05)),
                    "high": float(np.quantile(x, 0.95)),
                    "p_best": float(np.mean(ranks[di, mi] == 1)),
                    "expected_rank": float(ranks[di, mi].mean()),
                }
            )
    out = pl.DataFrame(rows).join(means, on=["dimension", "system"])
    return out.with_columns(
        pl.col("latent").rank(descending=True).over("dimension").alias("rank_model"),
        pl.col("mean_rating").rank(descending=True).over("dimension").alias("rank_mean"),
    ).sort("dimension", "rank_model")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not (args.data / "data.csv").exists():
        print(
            f"skipped: {args.data / 'data.csv'} is not here (the shared data folder is "
            "beside the repository in CI and on the project's machines)"
        )
        return 0
    ratings = load(args.data)
    print(ratings)
    t0 = time.perf_counter()
    dt = OrdinalRaters(length=False).fit(
        ratings, draws=args.draws, tune=args.draws, chains=4, random_seed=args.seed, progress=False
    )
    print(
        f"fitted in {time.perf_counter() - t0:.0f} s; divergences: "
        f"{int(dt['sample_stats']['diverging'].sum())}"
    )
    table = rankings(dt, ratings)
    with pl.Config(tbl_rows=100, tbl_cols=20, float_precision=3):
        print(table)
    for d in table["dimension"].unique(maintain_order=True):
        part = table.filter(pl.col("dimension") == d)
        tau = kendall_tau_b(part["latent"].to_numpy(), part["mean_rating"].to_numpy())
        print(f"{d}: Kendall tau-b (model latent score vs mean rating) = {tau:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
