"""The ordinal item-response rater model (:class:`OrdinalRaters`) and the quantities
derived from its fits (fair averages, reliability, length contrasts, rater tables).

Code outside this package imports from here, never from its modules.
"""

from raterstats.models.ordinal.model import (
    DIAGNOSED_PARAMETERS,
    OrdinalData,
    OrdinalRaters,
    length_contrast,
    ordered_cutpoints,
    prepare_ordinal,
    prob_more_reliable,
    rater_table,
    rating_log_likelihood,
    ratings_potential,
    reliability,
    sentence_aggregation,
    sentence_design,
    summed_log_likelihood,
    system_scores,
    zero_sum_extend_np,
)

__all__ = [
    "DIAGNOSED_PARAMETERS",
    "OrdinalData",
    "OrdinalRaters",
    "length_contrast",
    "ordered_cutpoints",
    "prepare_ordinal",
    "prob_more_reliable",
    "rater_table",
    "rating_log_likelihood",
    "ratings_potential",
    "reliability",
    "sentence_aggregation",
    "sentence_design",
    "summed_log_likelihood",
    "system_scores",
    "zero_sum_extend_np",
]
