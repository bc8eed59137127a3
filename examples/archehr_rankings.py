"""ArchEHR-like shared task: Pyramid and MACE system rankings, and how many raters a
ranking needs.

Data: :func:`raterstats.simulate.archehr_like_study`, a simulated categorical study shaped
like the ArchEHR-QA shared task (100 clinical cases x 28 systems, three categorical
dimensions: answers the question yes / partially / no, uses the evidence yes / no /
refutes, uses clinical knowledge yes / no / conflicting), generated from the MACE model
with known true labels. Here each response gets 5 raters from a pool of 20, so that
rankings from 1, 2 and 3 raters per response can be compared with the "full" ranking.

The script ranks the systems per dimension by the summed "Pyramid" score of the shared-task
reports (scores summed over a response's raters, averaged over cases; bootstrap over cases)
and by MACE (EM fit; label posteriors mapped to scores, true labels sampled and cases
resampled), reports how concordant the two rankings are (Kendall tau-b, with the
distribution over the MACE draws), how close each is to the true ranking, and the
subsampling study: Kendall tau of MACE rankings from 1, 2 and 3 raters per response with
the full ranking (mean and 90% range over random subsamples). With one rater per response
MACE has no agreement to learn rater competence from; a subsample where it gives every
response the same label has an undefined tau (counted, left out of the mean).

Run:  python examples/archehr_rankings.py [--repeats 5] [--seed 20240611]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

from raterstats import MACE, rank_systems, ranking_agreement
from raterstats.agreement import kendall_tau_b
from raterstats.design import subsampling_study
from raterstats.ranking import compare_rankings
from raterstats.simulate import ARCHEHR_DIMENSIONS, archehr_like_study

#: Scores of the labels (good = 1): yes / partially / no, yes / no / refutes, and
#: yes / no / conflicting.
SCORE_MAP = {
    "answers_question": {"yes": 1.0, "partially": 0.5, "no": 0.0},
    "uses_evidence": {"yes": 1.0, "no": 0.0, "refutes": -1.0},
    "uses_knowledge": {"yes": 1.0, "no": 0.0, "conflicting": -1.0},
}


def true_scores(study) -> dict[str, np.ndarray]:
    """Expected score of each system per dimension under the simulation's label
    probabilities (averaged over the study's cases): the ranking to recover."""
    out = {}
    for dim, labels in ARCHEHR_DIMENSIONS.items():
        sv = np.asarray([SCORE_MAP[dim][lab] for lab in labels])
        out[dim] = study.truth["label_prob"].sel(dimension=dim).values @ sv
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="random subsamples per size")
    ap.add_argument("--seed", type=int, default=20240611)
    args = ap.parse_args()
    t0 = time.perf_counter()
    study = archehr_like_study(raters_per_response=5, random_seed=args.seed)
    r = study.ratings
    print(f"{r.n_ratings} ratings, {len(r.items)} responses, {len(r.systems)} systems")

    pyramid = rank_systems(r, method="pyramid", score_map=SCORE_MAP, n_boot=500, random_seed=1)
    dt = MACE().fit(r, method="em", random_seed=1)
    mace = rank_systems(dt, ratings=r, score_map=SCORE_MAP, n_boot=500, random_seed=1)

    truth = true_scores(study)
    systems = [str(s) for s in mace["system"].values]
    rows = []
    for dim in ARCHEHR_DIMENSIONS:
        true_d = dict(zip(study.truth["system"].values, truth[dim], strict=True))
        t_true = np.asarray([true_d[s] for s in systems])
        pm = ranking_agreement(
            pyramid.sel(dimension=dim), mace.sel(dimension=dim), statistics=["kendall_tau_b"]
        )
        rows.append(
            {
                "dimension": dim,
                "tau Pyramid vs MACE (draws)": f"{float(pm['mean'][0]):.3f} "
                f"[{float(pm['low'][0]):.3f}, {float(pm['high'][0]):.3f}]",
                "tau Pyramid vs truth": round(
                    kendall_tau_b(pyramid["score_mean"].sel(dimension=dim).values, t_true), 3
                ),
                "tau MACE vs truth": round(
                    kendall_tau_b(mace["score_mean"].sel(dimension=dim).values, t_true), 3
                ),
            }
        )
    with pl.Config(tbl_rows=40, tbl_cols=10, fmt_str_lengths=60, tbl_width_chars=160):
        side = compare_rankings({"Pyramid": pyramid, "MACE": mace}).filter(
            pl.col("dimension") == "answers_question"
        )
        top = side.filter(pl.col("source") == "MACE")["system"].head(5).to_list()
        print("\nTop 5 systems by MACE, answers the question: Pyramid and MACE side by side")
        print("(90% intervals):")
        print(side.filter(pl.col("system").is_in(top)))
        print("\nRanking concordance (Kendall tau-b):")
        print(pl.DataFrame(rows))

        sub = subsampling_study(
            r,
            n_raters=[1, 2, 3],
            n_repeats=args.repeats,
            method="mace",
            score_map=SCORE_MAP,
            statistics=["kendall_tau_b"],
            random_seed=2,
        )
        tau = sub.sel(statistic="kendall_tau_b")

        def cell(k: int, dim: str) -> str:
            m, lo, hi = (
                float(tau[v].sel(n_raters=k, dimension=dim)) for v in ("mean", "low", "high")
            )
            n_nan = int(tau["n_undefined"].sel(n_raters=k, dimension=dim))
            return f"{m:.3f} [{lo:.3f}, {hi:.3f}]" + (f" ({n_nan} undefined)" if n_nan else "")

        tab = pl.DataFrame(
            [
                {"raters per response": int(k), **{dim: cell(k, dim) for dim in ARCHEHR_DIMENSIONS}}
                for k in sub["n_raters"].values
            ]
        )
        print(
            f"\nMACE rankings from fewer raters vs the full 5-rater ranking (Kendall tau-b, "
            f"mean [90% range] over {args.repeats} subsamples):"
        )
        print(tab)
    print(f"\ndone in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
