"""The whole analysis of any ratings (``raterstats analyze``): :func:`analyze` writes a
report folder with one section per kind of result, each deciding from the data whether it
applies and saying why not when it does not. ``raterstats demo`` is this analysis on the
built-in study (:mod:`raterstats.demo`).

Modules, one job each: :mod:`~raterstats.analyze.run` (:func:`analyze`, the report),
:mod:`~raterstats.analyze.options` (:class:`AnalyzeOptions`, :class:`Scheme`),
:mod:`~raterstats.analyze.context` (what sections share), :mod:`~raterstats.analyze.fits`
(which models, on which ratings), :mod:`~raterstats.analyze.health` (fit-health lines,
banners, predictive checks in words), :mod:`~raterstats.analyze.folder` and
:mod:`~raterstats.analyze.tables` (files and table cells), :mod:`~raterstats.analyze.sections`
(:data:`SECTIONS`, in report order) and one module per section: ``data``, ``agreement``,
``categorical``, ``ordinal``, ``rankings``, ``designs``, ``repeats``, ``judges``; comparative
judgments: :mod:`~raterstats.analyze.comparisons` and
:mod:`~raterstats.analyze.comparison_rankings`. Code
outside this package imports from here, never from its modules.
"""

from raterstats.analyze.comparisons import (
    COMPARISON_SECTIONS,
    RATINGS_ONLY,
    analyze_comparisons,
    comparison_agreement_table,
    comparison_statistics,
    plan_comparison_model,
)
from raterstats.analyze.context import Context, Fit, Progress, Section, SectionSkipped
from raterstats.analyze.data import label_distribution, wide_shares
from raterstats.analyze.fits import plan_models
from raterstats.analyze.health import banners, fit_health, health_lines, ppc_lines
from raterstats.analyze.options import AnalyzeOptions, Scheme, model_role
from raterstats.analyze.run import AnalysisResult, analyze
from raterstats.analyze.sections import SECTIONS
from raterstats.analyze.tables import agreement_wide

__all__ = [
    "COMPARISON_SECTIONS",
    "RATINGS_ONLY",
    "SECTIONS",
    "AnalysisResult",
    "AnalyzeOptions",
    "Context",
    "Fit",
    "Progress",
    "Scheme",
    "Section",
    "SectionSkipped",
    "agreement_wide",
    "analyze",
    "analyze_comparisons",
    "banners",
    "comparison_agreement_table",
    "comparison_statistics",
    "fit_health",
    "health_lines",
    "label_distribution",
    "model_role",
    "plan_comparison_model",
    "plan_models",
    "ppc_lines",
    "wide_shares",
]
