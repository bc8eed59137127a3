"""Comparing annotation designs: posterior agreement per design, reliability projections
and annotation budgets, LLM judges against experts, rater subsampling.

Code outside this package imports from here, never from its modules.
"""

from raterstats.design.compare import (
    annotation_budget,
    cheapest_design,
    compare_designs,
    design_table,
    intra_rater_by_design,
    judge_agreement,
    judge_vs_experts,
    partial_annotation,
    rating_costs,
    reliability_projection,
    subsample_raters,
    subsampling_study,
)

__all__ = [
    "annotation_budget",
    "cheapest_design",
    "compare_designs",
    "design_table",
    "intra_rater_by_design",
    "judge_agreement",
    "judge_vs_experts",
    "partial_annotation",
    "rating_costs",
    "reliability_projection",
    "subsample_raters",
    "subsampling_study",
]
