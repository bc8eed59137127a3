"""Comparative judgments, end to end: the numbers of the tutorial
``docs/tutorials/comparisons.md``.

The page quotes this script's output: each block the script prints under a heading
``### <name>`` is the block of the page marked ``<!-- output: <name> -->``, and
``tests/test_examples.py`` runs the script and checks that the page still says what
the script prints. Parts:

1. Reading comparisons: pairs (a / b / tie with the order shown, graded -2..2, an LLM
   judge) and what ``read_comparisons`` refuses.
2. A real study, SQuALITY (``examples/data/squality_rankings``: summaries by BART,
   BART+DPR and a human writer, ranked per question by 4 expert workers on correctness,
   selection and overall): agreement, a Plackett-Luce fit (NUTS at the defaults) and its
   health, the ranking with P(a > b) and rank probabilities beside
   win rate, Elo and maximum-likelihood Bradley-Terry, and each worker's discrimination.
3. Pairwise judgments on the simulator (``simulate_comparisons``): an LLM judge with a
   position bias that saw one system first; a Bradley-Terry fit (NUTS at the defaults, then
   refitted until its checks pass) recovers the bias, win rate is misled; then the same
   over 20 simulated studies.
4. Which design: absolute ratings, pairs or rankings for the same rater hours
   (``compare_design_kinds``, 40 replicates per design so that it runs in about a minute).

Run:  python examples/comparisons_tutorial.py
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

import raterstats as rs
from raterstats.agreement import comparison_agreement
from raterstats.analyze import comparison_agreement_table
from raterstats.comparison_baselines import ml_bradley_terry, win_rate
from raterstats.comparisons import Comparisons
from raterstats.design import DesignOption, compare_design_kinds, kinds_table
from raterstats.health import ConvergenceWarning
from raterstats.ranking import compare_rankings, rank_table
from raterstats.simulate_comparisons import simulate_comparisons

ROOT = Path(__file__).resolve().parents[1]
SQUALITY = ROOT / "examples" / "data" / "squality_rankings" / "rankings.csv"
BASELINES = ("win_rate", "elo", "bradley_terry_ml")
#: the simulated study of an LLM judge shown in detail (of the 20 of part 3)
JUDGE_SEED = 11
N_STUDIES = 20

TABLE = {
    "tbl_formatting": "ASCII_MARKDOWN",
    "tbl_hide_column_data_types": True,
    "tbl_hide_dataframe_shape": True,
    "tbl_rows": 60,
    "tbl_cols": 20,
    "fmt_str_lengths": 120,
    "tbl_width_chars": 400,
    "float_precision": 3,
}


def show(name: str, *blocks: object) -> None:
    """Print one named output block (the page's ``<!-- output: name -->``)."""
    print(f"### {name}")
    for b in blocks:
        print(str(b).rstrip())
    print()


def interval(mean: float, low: float, high: float) -> str:
    return f"{mean:.2f} [{low:.2f}, {high:.2f}]"


# ---------------------------------------------------------------------------------- part 1


def reading() -> None:
    prefs = pl.DataFrame(
        {
            "question": ["q1", "q1", "q2", "q2", "q3", "q3"],
            "model_a": ["gpt", "gpt", "gpt", "med", "med", "gpt"],
            "model_b": ["med", "med", "doc", "doc", "doc", "doc"],
            "judge": ["dr_lee", "gpt-4-judge", "dr_lee", "dr_kim", "gpt-4-judge", "dr_kim"],
            "rater_kind": ["human", "llm", "human", "human", "llm", "human"],
            "winner": ["model_a", "model_a", "tie", "model_b", "model_a", "model_a"],
            "shown_first": ["a", "a", "b", "a", "b", None],
        }
    )
    c = rs.read_comparisons(prefs)
    show(
        "read-pairs",
        c,
        c.data.select("question", "system_a", "system_b", "rater", "outcome", "shown_first"),
    )
    graded = pl.DataFrame(
        {
            "system_a": ["gpt", "gpt", "med"],
            "system_b": ["doc", "med", "doc"],
            "rater": ["dr_lee", "dr_lee", "dr_kim"],
            "dimension": ["correctness"] * 3,
            "outcome": [2, -1, 0],
        }
    )
    g = rs.read_comparisons(graded, graded=2)
    show("read-graded", g, f"max_grade={g.max_grade}, graded={g.graded}")
    bad = pl.DataFrame(
        {
            "system_a": ["gpt", "med", ""],
            "system_b": ["gpt", "doc", "doc"],
            "rater": ["dr_lee", "dr_lee", "dr_kim"],
            "outcome": ["a", "b", "maybe"],
        }
    )
    try:
        rs.read_comparisons(bad)
    except rs.RatingsError as err:
        show("read-errors", err)


# ---------------------------------------------------------------------------------- part 2


def squality() -> None:
    c = rs.read_comparisons(SQUALITY)
    s = c.summary()
    show(
        "squality-summary",
        c,
        s.cells.select(
            "dimension", "judgments", "raters", "systems", "questions", "components", "tie_share"
        ),
        *(f"note: {n}" for n in s.notes),
    )

    ag = comparison_agreement(c, n_boot=1000, random_seed=1)
    show(
        "squality-agreement",
        comparison_agreement_table(ag)
        .filter(pl.col("estimate").is_not_null())
        .select("dimension", "statistic", "estimate", "ci_low", "ci_high", "n_units"),
    )

    # NUTS at the library's defaults (4 chains x 1000 draws); a fit that failed its checks
    # would say so here and in everything computed from it (attrs["fit_warning"])
    fit = rs.PlackettLuce().fit(c, random_seed=1)
    alpha_draws = fit["posterior"]["alpha"]
    show(
        "squality-fit",
        rs.diagnose(fit, warn=False),
        "rank_systems(...).attrs['fit_warning']: "
        f"{rs.rank_systems(fit, random_seed=1).attrs.get('fit_warning')}",
        "geometric mean of the workers' alpha, per draw: "
        f"{float(np.exp(np.log(alpha_draws).mean('rater')).min()):.3f} to "
        f"{float(np.exp(np.log(alpha_draws).mean('rater')).max()):.3f}",
    )

    pl_rank = rs.rank_systems(fit, random_seed=1)
    pb = pl_rank["p_better"]
    rows = [
        {
            "dimension": str(d),
            "P(human > bart-dpr)": float(pb.sel(dimension=d, system="human", system_b="bart-dpr")),
            "P(bart-dpr > bart)": float(pb.sel(dimension=d, system="bart-dpr", system_b="bart")),
            "P(bart-dpr ranked 2nd)": float(
                pl_rank["rank_prob"].sel(dimension=d, system="bart-dpr", rank=2)
            ),
        }
        for d in pl_rank["dimension"].values
    ]
    show("squality-ranking", rank_table(pl_rank), pl.DataFrame(rows))

    base = {m: rs.rank_systems(c, method=m, n_boot=1000, random_seed=1) for m in BASELINES}
    side = compare_rankings({"Plackett-Luce": pl_rank, **base}, digits=None)
    wide = (
        side.with_columns(pl.col("score_mean").round(2))
        .pivot(on="source", index=["dimension", "system"], values="score_mean")
        .sort("dimension", "system")
    )
    tau = []
    for m, ds in base.items():
        for d in pl_rank["dimension"].values:
            ra = rs.ranking_agreement(
                pl_rank.sel(dimension=d), ds.sel(dimension=d), statistics=["kendall_tau_b"]
            )
            tau.append(
                {
                    "baseline": m,
                    "dimension": str(d),
                    "Kendall tau-b, mean [89% interval]": f"{float(ra['mean'][0]):.3f} "
                    f"[{float(ra['low'][0]):.2f}, {float(ra['high'][0]):.2f}]",
                }
            )
    show("squality-baselines", wide, pl.DataFrame(tau))

    raters = pl.from_pandas(rs.rater_summary(fit).to_dataframe().reset_index())
    # a check that needs no model: each pair of workers' agreement on the preferred side,
    # over the question x system pairs both ranked
    workers = list(c.raters)
    pairs = []
    for i, x in enumerate(workers):
        for y in workers[i + 1 :]:
            a = comparison_agreement(
                c.filter(rater=[x, y]), statistics=["percent_agreement"], n_boot=0
            )
            pairs.append(
                {
                    "workers": f"{x}, {y}",
                    "percent agreement": float(a["estimate"].sel(dimension="overall")[0]),
                    "units": int(a["n_units"].sel(dimension="overall")[0]),
                }
            )
    show(
        "squality-raters",
        raters.select(
            "rater",
            pl.struct("alpha_mean", "alpha_low", "alpha_high")
            .map_elements(
                lambda r: interval(r["alpha_mean"], r["alpha_low"], r["alpha_high"]),
                return_dtype=pl.String,
            )
            .alias("discrimination alpha (89% interval)"),
            "n_rankings",
        ),
        pl.DataFrame(pairs),
    )


# ---------------------------------------------------------------------------------- part 3


def judge_study(seed: int) -> tuple[Comparisons, Comparisons, object, str, str]:
    """Five systems judged -2..2 by three physicians and one LLM judge with a position bias
    (1.5 logits toward the answer shown first) and a low discrimination (0.5). The study as
    simulated shows the two answers in a random order; the deployed design shows the
    second-worst system (``target``) first in every one of the judge's comparisons that
    involve it: the judge's comparisons where it was shown second are removed (a choice of
    design, made on the shown order and never on the outcome)."""
    sim = simulate_comparisons(
        n_systems=5,
        n_raters=3,
        n_llm_judges=1,
        n_comparisons=2000,
        max_grade=2,
        llm_bias=1.5,
        llm_alpha=0.5,
        theta_sd=0.5,
        random_seed=seed,
    )
    balanced = sim.comparisons
    theta = sim.truth["theta"].sel(dimension="d1").to_series().sort_values(ascending=False)
    target, neighbour = str(theta.index[3]), str(theta.index[2])
    second = (
        (pl.col("system_a") == target) & (pl.col("shown_first") == "b")
        | (pl.col("system_b") == target) & (pl.col("shown_first") == "a")
    ) & (pl.col("rater") == "llm1")
    kept = balanced.data.filter(~second)
    shown_first = balanced.derive(
        kept,
        step=f"the LLM judge sees {target} first",
        exclusion=rs.Exclusion(
            f"the LLM judge's comparisons with {target} shown second",
            balanced.data.height - kept.height,
        ),
    )
    return balanced, shown_first, sim.truth, target, neighbour


def _above(scores, x: str, y: str) -> bool:
    s = scores.sel(dimension="d1")
    return bool(float(s.sel(system=x)) > float(s.sel(system=y)))


def llm_judge() -> None:
    balanced, c, truth, target, neighbour = judge_study(JUDGE_SEED)
    theta = truth["theta"].sel(dimension="d1")
    show(
        "judge-data",
        "true strengths: "
        + ", ".join(
            f"{m} {float(theta.sel(system=m)):.2f}"
            for m in theta.to_series().sort_values(ascending=False).index
        ),
        f"the system the judge sees first: {target}; the one truly just above it: {neighbour}",
        c,
        c.summary().raters.select("rater", "rater_kind", "judgments", "first_preferred_share"),
    )
    # NUTS at the defaults: three pooled raters inform the spread of their position biases
    # little, and the sampler diverges where that spread is large; a higher target_accept
    # gets through
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = rs.BradleyTerry().fit(c, random_seed=1)
    diverging = first["sample_stats"]["diverging"].values.ravel().astype(bool)
    spread = first["posterior"]["beta_sd"].values.ravel()
    show(
        "judge-fit-default",
        rs.diagnose(first, warn=False),
        f"beta_sd: median {np.median(spread):.2f} over all draws, "
        f"{np.median(spread[diverging]):.2f} over the divergent ones",
    )
    fit = rs.BradleyTerry().fit(c, random_seed=1, target_accept=0.99)
    bt = rs.rank_systems(fit, random_seed=1)
    wr_boot = rs.rank_systems(c, method="win_rate", n_boot=1000, random_seed=1)
    rows = []
    for name, table in (
        ("win rate, order random", win_rate(balanced)),
        ("win rate, judge sees target first", win_rate(c)),
        ("ML Bradley-Terry, judge sees target first", ml_bradley_terry(c)),
        ("Bradley-Terry model (posterior mean)", bt["score_mean"]),
    ):
        t = table.sel(dimension="d1")
        rows.append(
            {
                "score": name,
                target: round(float(t.sel(system=target)), 3),
                neighbour: round(float(t.sel(system=neighbour)), 3),
                "target ranked above its neighbour": _above(table, target, neighbour),
            }
        )
    p = {
        "Bradley-Terry": float(
            bt["p_better"].sel(dimension="d1", system=target, system_b=neighbour)
        ),
        "win rate (bootstrap)": float(
            wr_boot["p_better"].sel(dimension="d1", system=target, system_b=neighbour)
        ),
    }
    summ = pl.from_pandas(rs.rater_summary(fit).to_dataframe().reset_index())
    # the truth in the model's units: the pooled (human) raters' log alpha sum to zero, so
    # the true alpha are divided by the physicians' true geometric-mean alpha
    humans = [
        str(r)
        for r, k in zip(truth["rater"].values, truth["rater_kind"].values, strict=True)
        if k == "human"
    ]
    g = float(np.exp(np.log(truth["alpha"].sel(rater=humans)).mean()))
    summ = summ.join(
        pl.DataFrame(
            {
                "rater": [str(r) for r in truth["rater"].values],
                "true alpha": truth["alpha"].values / g,
                "true beta": truth["beta"].values,
            }
        ),
        on="rater",
    )
    show(
        "judge-fit",
        f"target_accept=0.99: {rs.diagnose(fit, warn=False)}",
        pl.DataFrame(rows),
        *(f"P({target} > {neighbour}), {k}: {v:.3f}" for k, v in p.items()),
    )
    show(
        "judge-raters",
        f"the physicians' true geometric-mean alpha (the model's unit): {g:.3f}",
        summ.select(
            "rater",
            "rater_kind",
            pl.struct("alpha_mean", "alpha_low", "alpha_high")
            .map_elements(
                lambda r: interval(r["alpha_mean"], r["alpha_low"], r["alpha_high"]),
                return_dtype=pl.String,
            )
            .alias("alpha (89%)"),
            pl.col("true alpha").round(2),
            pl.struct("beta_mean", "beta_low", "beta_high")
            .map_elements(
                lambda r: interval(r["beta_mean"], r["beta_low"], r["beta_high"]),
                return_dtype=pl.String,
            )
            .alias("beta (89%)"),
            pl.col("true beta").round(2),
        ),
    )

    # the same design over 20 simulated studies (Bradley-Terry by MAP: a fraction of a
    # second each): how often does each score put the target above its true neighbour?
    counts = dict.fromkeys(("win rate, order random", "win rate", "ML Bradley-Terry", "BT"), 0)
    for seed in range(1, N_STUDIES + 1):
        balanced, c, _, target, neighbour = judge_study(seed)
        mode = rs.BradleyTerry().fit(c, method="map", random_seed=1)
        counts["win rate, order random"] += _above(win_rate(balanced), target, neighbour)
        counts["win rate"] += _above(win_rate(c), target, neighbour)
        counts["ML Bradley-Terry"] += _above(ml_bradley_terry(c), target, neighbour)
        counts["BT"] += _above(
            mode["posterior"]["theta"].mean(("chain", "draw")), target, neighbour
        )
    show(
        "judge-replicates",
        pl.DataFrame(
            {
                "score": [
                    "win rate, order random (no confound)",
                    "win rate, judge sees target first",
                    "ML Bradley-Terry, judge sees target first",
                    "Bradley-Terry model (MAP), judge sees target first",
                ],
                f"target above its neighbour (of {N_STUDIES} studies)": list(counts.values()),
            }
        ),
    )


# ---------------------------------------------------------------------------------- part 4


def designs() -> None:
    options = [
        DesignOption("absolute", 1, 60),  # 1 rater per answer, 60 s a rating
        DesignOption("absolute", 3, 60),  # 3 raters per answer
        DesignOption("pairs", 6, 45),  # 6 comparisons per question, 45 s each
        DesignOption("pairs", 12, 45),
        DesignOption("rankings", (4, 1), 150),  # 1 ranking of all 4 answers per question
        DesignOption("rankings", (4, 2), 150),  # 2 rankings per question
    ]
    ds = compare_design_kinds(
        options,
        study={"theta": {"gpt": 0.6, "med": 0.2, "doc": -0.2, "base": -0.6}, "n_raters": 12},
        n_questions=20,
        n_replicates=40,
        target=0.8,
        random_seed=1,
    )
    show(
        "designs",
        kinds_table(ds).select(
            "design",
            "n_judgments",
            pl.col("rater_hours").round(2),
            "p_recovered",
            "p_recovered_low",
            "p_recovered_high",
            "p_best_first",
            pl.col("mean_tau").round(2),
        ),
        f"verdict: {ds.attrs['verdict']}",
    )


def main() -> None:
    t0 = time.perf_counter()
    with pl.Config(**TABLE):
        reading()
        squality()
        llm_judge()
        designs()
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
