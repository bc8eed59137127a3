"""The demo analysis of the built-in clinical-QA study (``raterstats demo``).

It reads the shipped study and writes a report folder with every analysis the package
offers: the data summary, the label distributions under the scale maps of the clinical-QA
studies (5-point, collapsed 3-point, fine binary), the classical agreement among the
physicians per dimension and scheme with bootstrap intervals, the categorical (MACE) and
ordinal rater models, the system rankings and the comparison of annotation designs, each
as Markdown plus CSV / PNG, and the HTML page of it all.
Library code does not print: progress goes through the ``progress`` callback.

Modules, one job each: :mod:`~raterstats.demo.run` (:func:`run_demo`, the report),
:mod:`~raterstats.demo.study` (the rating schemes), :mod:`~raterstats.demo.tables`
(interval tables and cells), :mod:`~raterstats.demo.folder` (the files written), and one
module per section: :mod:`~raterstats.demo.categorical`, :mod:`~raterstats.demo.ordinal`,
:mod:`~raterstats.demo.rankings`, :mod:`~raterstats.demo.designs`.
"""

from raterstats.demo.run import CATEGORICAL_DRAWS, ORDINAL_DRAWS, DemoResult, Progress, run_demo
from raterstats.demo.study import (
    DEMO_STATISTICS,
    FINE_BINARY_RULES,
    LEVELS_5_TO_3,
    label_distribution,
    schemes,
)

__all__ = [
    "CATEGORICAL_DRAWS",
    "DEMO_STATISTICS",
    "FINE_BINARY_RULES",
    "LEVELS_5_TO_3",
    "ORDINAL_DRAWS",
    "DemoResult",
    "Progress",
    "label_distribution",
    "run_demo",
    "schemes",
]
