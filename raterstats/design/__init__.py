"""Comparing annotation designs: posterior agreement per design, reliability projections
and annotation budgets, LLM judges against experts, rater subsampling.

Modules: :mod:`~raterstats.design.compare` (agreement per design: posterior, partial
annotation, intra-rater), :mod:`~raterstats.design.categorical` (the comparison from MACE /
Dawid-Skene fits), :mod:`~raterstats.design.budget` (reliability projections, costs,
annotation budgets and the executor they run on), :mod:`~raterstats.design.budget_categorical`
and :mod:`~raterstats.design.budget_sim` (budgets and partial annotation from MACE /
Dawid-Skene fits, by simulation from the posterior), :mod:`~raterstats.design.judges` (LLM
judges against experts), :mod:`~raterstats.design.subsampling` (rankings from fewer
raters), :mod:`~raterstats.design.schemes` (schemes with different label sets as one
table for a categorical fit), :mod:`~raterstats.design.kinds` (absolute ratings, pairs and
rankings compared by simulation: which recovers the true ranking for the fewest hours;
:mod:`~raterstats.design.kind_estimators`, its default estimators),
:mod:`~raterstats.design.calibration` (simulation-based calibration of a model;
:mod:`~raterstats.design.calibration_priors`, prior simulators on the user's design) and
:mod:`~raterstats.design.cluster` (running these sweeps on a Dask cluster).
Code outside this package imports from here, never from its modules.
"""

from raterstats.design.budget import (
    annotation_budget,
    cheapest_design,
    rating_costs,
    reliability_projection,
    simulate_ranking_task,
    unit_costs,
)
from raterstats.design.budget_categorical import (
    annotation_budget_categorical,
    partial_annotation_categorical,
)
from raterstats.design.calibration import simulation_based_calibration
from raterstats.design.calibration_priors import PriorSimulator, prior_simulator
from raterstats.design.categorical import cell_confusion, rater_agreement_draws
from raterstats.design.cluster import run_on_client, shared_values
from raterstats.design.compare import (
    compare_designs,
    design_table,
    intra_rater_by_design,
    partial_annotation,
)
from raterstats.design.judges import judge_agreement, judge_vs_experts
from raterstats.design.kind_estimators import (
    bradley_terry_scores,
    mean_rating_scores,
    plackett_luce_scores,
)
from raterstats.design.kinds import (
    DesignOption,
    cheapest_kind,
    compare_design_kinds,
    kinds_table,
)
from raterstats.design.schemes import base_dimensions, combine_schemes
from raterstats.design.subsampling import subsample_raters, subsampling_study

__all__ = [
    "DesignOption",
    "PriorSimulator",
    "annotation_budget",
    "annotation_budget_categorical",
    "base_dimensions",
    "bradley_terry_scores",
    "cell_confusion",
    "cheapest_design",
    "cheapest_kind",
    "combine_schemes",
    "compare_design_kinds",
    "compare_designs",
    "design_table",
    "intra_rater_by_design",
    "judge_agreement",
    "judge_vs_experts",
    "kinds_table",
    "mean_rating_scores",
    "partial_annotation",
    "partial_annotation_categorical",
    "plackett_luce_scores",
    "prior_simulator",
    "rater_agreement_draws",
    "rating_costs",
    "reliability_projection",
    "run_on_client",
    "shared_values",
    "simulate_ranking_task",
    "simulation_based_calibration",
    "subsample_raters",
    "subsampling_study",
    "unit_costs",
]
