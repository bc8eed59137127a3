"""The demo analysis of the built-in clinical-QA study (``raterstats demo``): the whole
analysis of :func:`raterstats.analyze.analyze` on the shipped study, with the rating schemes
of the clinical-QA studies (5-point, collapsed 3-point, fine binary) and the agreement
statistics of the published analysis (:mod:`~raterstats.demo.run`).
Library code does not print: progress goes through the ``progress`` callback.
"""

from raterstats.analyze import Progress, label_distribution
from raterstats.demo.run import (
    CATEGORICAL_DRAWS,
    CATEGORICAL_TUNE,
    DEMO_SCHEMES,
    DEMO_STATISTICS,
    FINE_BINARY_RULES,
    LEVELS_5_TO_3,
    ORDINAL_DRAWS,
    ORDINAL_TUNE,
    DemoResult,
    demo_options,
    run_demo,
    schemes,
)

__all__ = [
    "CATEGORICAL_DRAWS",
    "CATEGORICAL_TUNE",
    "DEMO_SCHEMES",
    "DEMO_STATISTICS",
    "FINE_BINARY_RULES",
    "LEVELS_5_TO_3",
    "ORDINAL_DRAWS",
    "ORDINAL_TUNE",
    "DemoResult",
    "Progress",
    "demo_options",
    "label_distribution",
    "run_demo",
    "schemes",
]
