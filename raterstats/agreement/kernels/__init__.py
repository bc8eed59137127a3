"""NumPy kernels for classical agreement statistics (no polars, no xarray).

One module per job: :mod:`~raterstats.agreement.kernels.core` (reasons for undefined values,
safe division, the additive-statistic record :class:`Parts`),
:mod:`~raterstats.agreement.kernels.kappa` (percent agreement and the chance-corrected kappa
family), :mod:`~raterstats.agreement.kernels.alpha` (Krippendorff's alpha),
:mod:`~raterstats.agreement.kernels.icc` (intraclass correlations),
:mod:`~raterstats.agreement.kernels.ranks` (rank statistics: Kendall's W and tau-b, Spearman's
rho, rank-biased overlap) and :mod:`~raterstats.agreement.kernels.bootstrap` (the cluster
bootstrap). Every public name is re-exported here; the labelled wrappers use them as
``from raterstats.agreement import kernels as K``.
"""

from raterstats.agreement.kernels.alpha import (
    krippendorff_interval_parts,
    krippendorff_parts,
    ordinal_midranks,
)
from raterstats.agreement.kernels.bootstrap import (
    bootstrap_additive,
    cluster_sums,
    group_index,
    resample_counts,
    take_groups,
)
from raterstats.agreement.kernels.core import (
    REASON_CHANCE_ONE,
    REASON_NO_PAIRS,
    REASON_NO_VARIANCE,
    REASON_ONE_CATEGORY,
    REASON_ONE_RATER,
    REASON_TEXT,
    REASON_TOO_FEW,
    ZERO_TOL,
    FloatArray,
    IntArray,
    Parts,
    evaluate,
    explain,
    feature_sums,
    safe_divide,
)
from raterstats.agreement.kernels.icc import (
    ICC_FORMS,
    ICC_NAMES,
    icc_parts,
    parse_icc_form,
)
from raterstats.agreement.kernels.kappa import (
    WEIGHT_ALIASES,
    brennan_prediger_parts,
    category_counts,
    conger_parts,
    fleiss_category,
    fleiss_parts,
    gwet_ac_parts,
    pairwise_agreement_parts,
    tolerance_weights,
    unanimous_agreement_parts,
    weight_matrix,
)
from raterstats.agreement.kernels.ranks import (
    average_overlap,
    count_inversions,
    kendall_tau_b,
    kendall_w,
    midranks,
    midranks_columns,
    normalized_positions,
    overlap_at_depth,
    rbo_ext,
    spearman_rho,
)

__all__ = [
    "ICC_FORMS",
    "ICC_NAMES",
    "REASON_CHANCE_ONE",
    "REASON_NO_PAIRS",
    "REASON_NO_VARIANCE",
    "REASON_ONE_CATEGORY",
    "REASON_ONE_RATER",
    "REASON_TEXT",
    "REASON_TOO_FEW",
    "WEIGHT_ALIASES",
    "ZERO_TOL",
    "FloatArray",
    "IntArray",
    "Parts",
    "average_overlap",
    "bootstrap_additive",
    "brennan_prediger_parts",
    "category_counts",
    "cluster_sums",
    "conger_parts",
    "count_inversions",
    "evaluate",
    "explain",
    "feature_sums",
    "fleiss_category",
    "fleiss_parts",
    "group_index",
    "gwet_ac_parts",
    "icc_parts",
    "kendall_tau_b",
    "kendall_w",
    "krippendorff_interval_parts",
    "krippendorff_parts",
    "midranks",
    "midranks_columns",
    "normalized_positions",
    "ordinal_midranks",
    "overlap_at_depth",
    "pairwise_agreement_parts",
    "parse_icc_form",
    "rbo_ext",
    "resample_counts",
    "safe_divide",
    "spearman_rho",
    "take_groups",
    "tolerance_weights",
    "unanimous_agreement_parts",
    "weight_matrix",
]
