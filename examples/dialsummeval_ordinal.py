"""DialSummEval expert ratings: the ordinal rater model and system rankings with intervals.

Data: DialSummEval (Gao & Wan 2022, NAACL), the three expert annotators' 1-5 ratings of 14
dialogue summarisers on 100 SAMSum dialogues and four dimensions (coherence, consistency,
fluency, relevance), as converted in the project's shared data folder
(``../shared/data/dialsummeval_campus``; the repository states no licence, so the data are
read from there and not copied into this package).

The script fits :class:`raterstats.OrdinalRaters` (one design, no length covariate: the
summaries' lengths are not in the data), ranks the systems per dimension by their latent
effect with 90% intervals, P(rank 1) and expected ranks (:func:`raterstats.rank_systems`),
and compares that ranking with the ranking by mean rating (Kendall's tau-b over posterior
and bootstrap draws, :func:`raterstats.ranking_agreement`).

Run:  python examples/dialsummeval_ordinal.py [--draws 500] [--data PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import polars as pl

from raterstats import OrdinalRaters, OrdinalScale, rank_systems, ranking_agreement, read_ratings
from raterstats.ranking import rank_table

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


def rankings(dt, ratings, *, seed: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per dimension and system: the model ranking (latent effect with 90% interval, P(rank
    1), expected rank) next to the ranking by mean rating (with a case bootstrap); and per
    dimension the distribution of Kendall's tau-b between the two rankings."""
    model = rank_systems(dt, score="latent", random_seed=seed)
    mean = rank_systems(ratings, method="mean", n_boot=500, random_seed=seed)
    latent = {"score_mean": "latent", "score_low": "latent_low", "score_high": "latent_high"}
    table = (
        rank_table(model)
        .rename({**latent, "p_rank_1": "p_best"})
        .join(
            rank_table(mean).select(
                "dimension",
                "system",
                pl.col("score_mean").alias("mean_rating"),
                pl.col("expected_rank").alias("expected_rank_mean"),
            ),
            on=["dimension", "system"],
        )
    )
    taus = []
    for d in model["dimension"].values:
        tau = ranking_agreement(
            model.sel(dimension=d), mean.sel(dimension=d), statistics=["kendall_tau_b"]
        ).sel(statistic="kendall_tau_b")
        taus.append(
            {
                "dimension": str(d),
                "tau_mean": float(tau["mean"]),
                "tau_low": float(tau["low"]),
                "tau_high": float(tau["high"]),
            }
        )
    return table, pl.DataFrame(taus)


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
    table, taus = rankings(dt, ratings, seed=args.seed)
    with pl.Config(tbl_rows=100, tbl_cols=20, float_precision=3):
        print(table)
    for row in taus.iter_rows(named=True):
        print(
            f"{row['dimension']}: Kendall tau-b (model ranking vs mean-rating ranking) = "
            f"{row['tau_mean']:.3f} [90%: {row['tau_low']:.3f}, {row['tau_high']:.3f}]"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
