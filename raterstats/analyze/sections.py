"""The sections of an analysis, in report order: :data:`SECTIONS`.

Each is a :class:`~raterstats.analyze.context.Section` (key, title, ``applies`` and
``run``); adding a section is adding one entry here (its module holds the two functions).
A section runs after those above it, so it can use their fits (``ctx.fits``)."""

from __future__ import annotations

from raterstats.analyze.agreement import agreement_applies, agreement_section
from raterstats.analyze.categorical import categorical_applies, categorical_section
from raterstats.analyze.context import Section
from raterstats.analyze.data import data_applies, data_section
from raterstats.analyze.designs import design_applies, design_section
from raterstats.analyze.gold import gold_applies, gold_section
from raterstats.analyze.judges import judge_applies, judge_section
from raterstats.analyze.ordinal import ordinal_applies, ordinal_section
from raterstats.analyze.rankings import ranking_applies, ranking_section
from raterstats.analyze.repeats import intra_rater_applies, intra_rater_section

#: the sections of the report, in order
SECTIONS: tuple[Section, ...] = (
    Section("data", "Data summary and label distributions", data_applies, data_section),
    Section("agreement", "Agreement", agreement_applies, agreement_section),
    Section("categorical", "Categorical rater model", categorical_applies, categorical_section),
    Section("gold", "Accuracy against the gold labels", gold_applies, gold_section),
    Section("ordinal", "Ordinal rater model", ordinal_applies, ordinal_section),
    Section("rankings", "System rankings", ranking_applies, ranking_section),
    Section("designs", "Annotation designs", design_applies, design_section),
    Section("intra_rater", "Intra-rater reliability", intra_rater_applies, intra_rater_section),
    Section("judges", "LLM judges", judge_applies, judge_section),
)

__all__ = ["SECTIONS"]
