"""The ordinal item-response rater model (:class:`OrdinalRaters`) and the quantities
derived from its fits (fair averages, reliability, length contrasts, rater tables).

Modules: ``data`` (prepared ratings, :func:`prepare_ordinal`, :func:`data_from_constants`),
``units`` (the data's latent unit, in which the priors are stated), ``graph`` (PyMC pieces
of the graph), ``model`` (the PyMC graph and the model's hooks), ``reference`` (the NumPy
reference of the likelihood and log density), ``layout`` (the named layout of the compiled
density's arrays), ``kernels`` (numba overrides of the reference) and ``derived``
(functions of a fit). Code outside this package imports from here, never from its modules.
"""

from raterstats.models.ordinal.data import (
    OrdinalData,
    data_from_constants,
    prepare_ordinal,
    sentence_design,
)
from raterstats.models.ordinal.derived import (
    check_fit,
    length_contrast,
    prob_more_reliable,
    rater_table,
    reliability,
    sentence_aggregation,
    system_scores,
)
from raterstats.models.ordinal.graph import (
    in_units,
    interval_logp_pt,
    ordered_cutpoints,
    ratings_potential,
    stretched_cuts,
)
from raterstats.models.ordinal.layout import (
    BLOCKS,
    PRIOR_KEYS,
    Block,
    OrdinalLayout,
    PriorConst,
    Setting,
    ordinal_layout,
)
from raterstats.models.ordinal.model import (
    CHECKPOINTS,
    DIAGNOSED_PARAMETERS,
    DRAWS,
    TUNE,
    OrdinalRaters,
)
from raterstats.models.ordinal.reference import (
    VARIABLE_DIMS,
    category_probs,
    constrained_values,
    interval_logp,
    log_density,
    lp_and_cuts,
    rating_log_likelihood,
    summed_log_likelihood,
)
from raterstats.models.ordinal.units import latent_units
from raterstats.models.zerosum import zero_sum_extend_np

__all__ = [
    "BLOCKS",
    "CHECKPOINTS",
    "DIAGNOSED_PARAMETERS",
    "DRAWS",
    "PRIOR_KEYS",
    "TUNE",
    "VARIABLE_DIMS",
    "Block",
    "OrdinalData",
    "OrdinalLayout",
    "OrdinalRaters",
    "PriorConst",
    "Setting",
    "category_probs",
    "check_fit",
    "constrained_values",
    "data_from_constants",
    "in_units",
    "interval_logp",
    "interval_logp_pt",
    "latent_units",
    "length_contrast",
    "log_density",
    "lp_and_cuts",
    "ordered_cutpoints",
    "ordinal_layout",
    "prepare_ordinal",
    "prob_more_reliable",
    "rater_table",
    "rating_log_likelihood",
    "ratings_potential",
    "reliability",
    "sentence_aggregation",
    "sentence_design",
    "stretched_cuts",
    "summed_log_likelihood",
    "system_scores",
    "zero_sum_extend_np",
]
