"""raterstats: statistics of human and LLM ratings.

Hierarchical Bayesian annotator models, classical agreement statistics, system rankings
with uncertainty and annotation-design comparisons, for human evaluation studies of
generated text (clinical question answering above all).

The public API is listed in ``__all__``; see the README for a tour.
"""

from raterstats._version import __version__
from raterstats.design import (
    annotation_budget,
    cheapest_design,
    compare_designs,
    partial_annotation,
    reliability_projection,
)
from raterstats.diagnostics import diagnose
from raterstats.ingest import Problem, RatingsError, read_ratings
from raterstats.models import MACE, DawidSkene, LengthEffect, OrdinalRaters
from raterstats.posterior import item_posterior, rater_summary
from raterstats.ranking import rank_systems, ranking_agreement
from raterstats.ratings import Exclusion, Ratings, RatingsSummary, concat_ratings
from raterstats.report import methods_paragraph, report
from raterstats.scales import (
    Collapse,
    IntervalScale,
    NominalScale,
    OrdinalScale,
    ScoreMap,
    SegmentRule,
)

__all__ = [
    "MACE",
    "Collapse",
    "DawidSkene",
    "Exclusion",
    "IntervalScale",
    "LengthEffect",
    "NominalScale",
    "OrdinalRaters",
    "OrdinalScale",
    "Problem",
    "Ratings",
    "RatingsError",
    "RatingsSummary",
    "ScoreMap",
    "SegmentRule",
    "__version__",
    "annotation_budget",
    "cheapest_design",
    "compare_designs",
    "concat_ratings",
    "diagnose",
    "item_posterior",
    "methods_paragraph",
    "partial_annotation",
    "rank_systems",
    "ranking_agreement",
    "rater_summary",
    "read_ratings",
    "reliability_projection",
    "report",
]
