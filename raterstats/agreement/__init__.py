"""Classical agreement statistics.

Each function takes a units x raters matrix (array-like; ``None``/NaN = not rated; text
labels allowed for nominal statistics) or a :class:`raterstats.Ratings` holding one dimension
and design, with keyword-only options, and returns a float (per-category kappa returns an
``xr.DataArray``). :func:`agreement` computes many statistics per dimension x design with
cluster-bootstrap intervals in one labelled ``xr.Dataset``; :func:`agreement_table` turns that
into a tidy polars frame with the same numbers. :func:`comparison_agreement` measures
agreement on comparative judgments (:class:`raterstats.Comparisons`) with the same kernels.

Undefined values (expected agreement 1, a single rater, no unit with two ratings) are NaN with
a :class:`DegenerateAgreementWarning` that says why; never a ZeroDivisionError. In
:func:`agreement`, a statistic that does not apply to a cell's data (Cohen's kappa with five
raters, an ICC on a nominal scale) is NaN with its reason in that cell's row, and the other
statistics are computed. Statistics and their options are read by one parser
(:func:`parse_statistics`: ``"krippendorff_alpha:level=interval"``), shared with the command
line and the study file.
"""

from raterstats.agreement.alpha import krippendorff_alpha
from raterstats.agreement.categorical import intra_rater_agreement, percent_agreement
from raterstats.agreement.comparisons import (
    COMPARISON_AGREEMENT_STATISTICS,
    comparison_agreement,
)
from raterstats.agreement.continuous import icc, kendall_w
from raterstats.agreement.data import (
    AgreementInputError,
    AgreementUsageError,
    DegenerateAgreementWarning,
    IncompleteDataWarning,
    ManyLevelsWarning,
    NotApplicableWarning,
)
from raterstats.agreement.kappa import (
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    fleiss_kappa_category,
    gwet_ac1,
    gwet_ac2,
    randolph_kappa,
    scott_pi,
)
from raterstats.agreement.ranking import (
    kendall_tau_b,
    normalized_rank_position,
    rbo,
    spearman_rho,
)
from raterstats.agreement.specs import (
    MAX_UNORDERED_LEVELS,
    ParsedStatistic,
    parse_statistic,
    parse_statistics,
)
from raterstats.agreement.table import (
    AGREEMENT_STATISTICS,
    DEFAULT_STATISTICS,
    agreement,
    agreement_table,
)

__all__ = [
    "AGREEMENT_STATISTICS",
    "COMPARISON_AGREEMENT_STATISTICS",
    "DEFAULT_STATISTICS",
    "MAX_UNORDERED_LEVELS",
    "AgreementInputError",
    "AgreementUsageError",
    "DegenerateAgreementWarning",
    "IncompleteDataWarning",
    "ManyLevelsWarning",
    "NotApplicableWarning",
    "ParsedStatistic",
    "agreement",
    "agreement_table",
    "cohen_kappa",
    "comparison_agreement",
    "conger_kappa",
    "fleiss_kappa",
    "fleiss_kappa_category",
    "gwet_ac1",
    "gwet_ac2",
    "icc",
    "intra_rater_agreement",
    "kendall_tau_b",
    "kendall_w",
    "krippendorff_alpha",
    "normalized_rank_position",
    "parse_statistic",
    "parse_statistics",
    "percent_agreement",
    "randolph_kappa",
    "rbo",
    "scott_pi",
    "spearman_rho",
]
