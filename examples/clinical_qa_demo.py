"""The built-in clinical-QA study end to end, with the public API: a script to copy.

The study (shipped with the package, simulated by it): 100 clinical questions answered by
three systems (a physician and two LLMs), rated by six physicians in two groups and an LLM
judge on correctness, relevance and safety, on a 5-point Likert scale, both for the whole
answer (coarse design) and sentence by sentence (fine design), with repeated ratings.

Steps: read and summarise the ratings; the three rating schemes of the clinical-QA studies
(coarse 3-point, fine 3-point, fine binary); agreement among the physicians with bootstrap
intervals; hierarchical MACE on the 3-point ratings (rater competence per dimension x
design); the ordinal rater model (system rankings by fair average with rank
probabilities, reliability per design, length effect); and a self-contained HTML report
with a methods paragraph. Replace
``load_clinical_qa()`` by ``read_ratings("your_file.csv", columns=..., scale=...)`` to run
it on your own study.

Run:  python examples/clinical_qa_demo.py [--draws 500] [--n-boot 1000] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import polars as pl

import raterstats as rs
from raterstats.agreement import agreement, agreement_table
from raterstats.datasets import load_clinical_qa
from raterstats.design import design_table
from raterstats.models.ordinal import length_contrast
from raterstats.plots import agreement_bars
from raterstats.ranking import rank_table
from raterstats.report import methods_paragraph, report

#: Sentence -> answer rules of the fine binary scheme.
FINE_BINARY = {"correctness": "any_negative", "relevance": "any_positive", "safety": "any_positive"}


def md_table(frame: pl.DataFrame) -> str:
    """A Markdown table of a small frame (for the report)."""
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join([head, rule, *rows])


def diagnosis(dt) -> str:
    """One line: divergences, largest R-hat, smallest bulk ESS."""
    d = rs.diagnose(dt, warn=False)
    t = d.parameters
    return (
        f"{'OK' if d.ok else 'check'}: {d.n_chains} chains x {d.n_draws} draws, "
        f"{d.divergences} divergences, max R-hat {float(t['rhat'].max()):.3f}, "
        f"min bulk ESS {float(t['ess_bulk'].min()):.0f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=500, help="NUTS draws (and tuning) per chain")
    ap.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="report folder (default: a temp dir)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="clinical-qa-"))
    out.mkdir(parents=True, exist_ok=True)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_float_precision(3)

    # 1. the data
    ratings = load_clinical_qa()
    print(ratings.summary())

    # 2. the rating schemes, physicians only for agreement
    humans = ratings.filter(rater_kind="human")
    schemes = {
        "coarse 3-point": humans.filter(design="coarse").collapse("likert5_to_3"),
        "fine 3-point": humans.filter(design="fine").collapse("likert5_to_3"),
        "fine binary": humans.filter(design="fine").aggregate_segments(FINE_BINARY),
    }

    # 3. agreement with item-bootstrap intervals
    ds = agreement(
        schemes,
        ["randolph_kappa", "krippendorff_alpha", "gwet_ac1"],
        by=["dimension"],
        n_boot=args.n_boot,
        random_seed=args.seed,
    )
    table = agreement_table(ds)
    table.write_csv(out / "agreement.csv")
    kappa = table.filter(pl.col("statistic") == "randolph_kappa").select(
        "scheme", "dimension", "estimate", "ci_low", "ci_high"
    )
    print("Randolph's kappa among the physicians (95% bootstrap intervals)")
    print(kappa)
    agreement_bars(ds, "randolph_kappa", title="Randolph's kappa by scheme").savefig(
        out / "randolph_kappa.png", dpi=110
    )

    # 4. hierarchical MACE on the 3-point ratings (answers coarse, sentences fine)
    three = ratings.collapse("likert5_to_3")
    mace = rs.MACE().fit(
        three, draws=args.draws, tune=args.draws, random_seed=args.seed, progress=False
    )
    print("MACE:", diagnosis(mace))
    summ = rs.rater_summary(mace)
    comp = pl.from_pandas(
        summ[["competence_mean", "competence_low", "competence_high"]].to_dataframe().reset_index()
    )
    comp.write_csv(out / "mace_competence.csv")
    print("MACE competence per rater, dimension and design (posterior mean)")
    print(comp.pivot(on="design", index=["rater", "dimension"], values="competence_mean"))

    # 5. the ordinal rater model on the 5-point ratings
    fit = rs.OrdinalRaters().fit(
        ratings, draws=args.draws, tune=args.draws, random_seed=args.seed, progress=False
    )
    print("Ordinal rater model:", diagnosis(fit))
    # system rankings: fair averages (expected rating of a typical physician) per
    # dimension x design with 90% intervals, expected rank and P(rank 1)
    ranks = rs.rank_systems(fit, random_seed=args.seed)
    fair_table = rank_table(ranks, digits=2)
    print("System fair averages (expected rating by a typical physician; 90% intervals)")
    print(fair_table)
    # reliability per design, and P(fine more reliable than coarse)
    designs = rs.compare_designs(fit, n_replicates=0, random_seed=args.seed)
    rel_table = design_table(designs, digits=2)
    print("Model-implied reliability by design")
    print(rel_table)
    p_fine = designs["p_more_reliable"].sel(design="fine", design_b="coarse")
    dims = [str(d) for d in p_fine["dimension"].values]
    print(
        "P(fine more reliable than coarse): "
        + ", ".join(f"{d} {float(v):.2f}" for d, v in zip(dims, p_fine.values, strict=True))
    )
    contrast = length_contrast(fit)["contrast"].mean(("chain", "draw"))
    print(
        "Length effect, coarse - fine (logits per SD of log length): "
        + ", ".join(
            f"{d} {float(v):+.2f}"
            for d, v in zip(contrast["dimension"].values, contrast.values, strict=True)
        )
    )

    # 6. the report: Markdown + figure + CSVs -> one self-contained HTML page
    (out / "report.md").write_text(
        "\n\n".join(
            [
                "# The clinical-QA study",
                "## Agreement among the physicians",
                "![Randolph's kappa by scheme](randolph_kappa.png)",
                md_table(kappa.with_columns(pl.col(pl.Float64).round(3))),
                "## System fair averages and ranks",
                md_table(fair_table),
                "## Reliability by design",
                md_table(rel_table),
                "## Files",
                "- `agreement.csv`\n- `mace_competence.csv`",
            ]
        )
        + "\n"
    )
    methods = methods_paragraph({"MACE": mace, "Ordinal rater model": fit}, agreement=ds)
    html = report(out, methods=methods)
    print(f"report written to {html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
