"""raterstats: statistics of human and LLM ratings.

Hierarchical Bayesian annotator models, classical agreement statistics, system rankings
with uncertainty and annotation-design comparisons, for human evaluation studies of
generated text (clinical question answering above all).

The public API is listed in ``__all__``; see the README for a tour. The design,
diagnostics and ranking functions are imported on first use (module
``__getattr__``), so that ``import raterstats`` stays quick.
"""

from typing import TYPE_CHECKING, Any

from raterstats.analyze import AnalyzeOptions, Scheme, analyze  # eager: shares a module name
from raterstats.comparisons import Comparisons, ComparisonsSummary
from raterstats.comparisons_ingest import read_comparisons
from raterstats.exports import read_label_studio, read_mturk, read_survey
from raterstats.ingest import Problem, RatingsError, read_ratings
from raterstats.models import (
    GLAD,
    MACE,
    BradleyTerry,
    CommunityDawidSkene,
    DawidSkene,
    EnhancedBCC,
    LengthEffect,
    OrdinalRaters,
    PlackettLuce,
)
from raterstats.posterior import gold_check, item_labels, item_posterior, rater_summary
from raterstats.ratings import Exclusion, Ratings, RatingsSummary, concat_ratings
from raterstats.report import methods_paragraph, report  # eager: the module shares a name
from raterstats.scales import (
    Collapse,
    IntervalScale,
    NominalScale,
    OrdinalScale,
    ScoreMap,
    SegmentRule,
)
from raterstats.version import __version__

if TYPE_CHECKING:
    from raterstats.choice import ModelChoice, choose_model, fit
    from raterstats.design import (
        DesignOption,
        annotation_budget,
        cheapest_design,
        combine_schemes,
        compare_design_kinds,
        compare_designs,
        partial_annotation,
        prior_simulator,
        reliability_projection,
        simulation_based_calibration,
    )
    from raterstats.diagnostics import diagnose, fit_health
    from raterstats.ranking import rank_systems, ranking_agreement

#: public names imported on first use, by module
_LAZY = {
    "annotation_budget": "design",
    "cheapest_design": "design",
    "choose_model": "choice",
    "fit": "choice",
    "ModelChoice": "choice",
    "combine_schemes": "design",
    "compare_design_kinds": "design",
    "compare_designs": "design",
    "DesignOption": "design",
    "partial_annotation": "design",
    "prior_simulator": "design",
    "reliability_projection": "design",
    "simulation_based_calibration": "design",
    "diagnose": "diagnostics",
    "fit_health": "diagnostics",
    "rank_systems": "ranking",
    "ranking_agreement": "ranking",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"raterstats.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'raterstats' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "GLAD",
    "MACE",
    "AnalyzeOptions",
    "BradleyTerry",
    "Collapse",
    "CommunityDawidSkene",
    "Comparisons",
    "ComparisonsSummary",
    "DawidSkene",
    "DesignOption",
    "EnhancedBCC",
    "Exclusion",
    "IntervalScale",
    "LengthEffect",
    "ModelChoice",
    "NominalScale",
    "OrdinalRaters",
    "OrdinalScale",
    "PlackettLuce",
    "Problem",
    "Ratings",
    "RatingsError",
    "RatingsSummary",
    "Scheme",
    "ScoreMap",
    "SegmentRule",
    "__version__",
    "analyze",
    "annotation_budget",
    "cheapest_design",
    "choose_model",
    "combine_schemes",
    "compare_design_kinds",
    "compare_designs",
    "concat_ratings",
    "diagnose",
    "fit",
    "fit_health",
    "gold_check",
    "item_labels",
    "item_posterior",
    "methods_paragraph",
    "partial_annotation",
    "prior_simulator",
    "rank_systems",
    "ranking_agreement",
    "rater_summary",
    "read_comparisons",
    "read_label_studio",
    "read_mturk",
    "read_ratings",
    "read_survey",
    "reliability_projection",
    "report",
    "simulation_based_calibration",
]
