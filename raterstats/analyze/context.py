"""What the sections of an analysis share: the :class:`Context` (the ratings, the options,
the report folder, the models planned and the fits made so far) and the :class:`Section`
record (a key, a title, ``applies(ctx) -> reason or None`` and ``run(ctx) -> Markdown
lines``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from raterstats import schema as S
from raterstats.analyze.folder import ReportFolder
from raterstats.analyze.options import AnalyzeOptions
from raterstats.ratings import Ratings

if TYPE_CHECKING:
    import xarray as xr

    from raterstats.models import Model

Progress = Callable[[str], None]


@dataclass(eq=False)
class Fit:
    """One model fit of the analysis: its label in the report, the model class, the
    ratings it was fitted to and the fit."""

    label: str
    model: type[Model]
    ratings: Ratings
    dt: xr.DataTree


@dataclass
class Context:
    """The state an analysis passes from section to section.

    ``models`` maps a role (``"categorical"``, ``"ordinal"``) to the model classes planned
    for it (:func:`raterstats.analyze.plan_models`), ``not_planned`` a role to the reason
    no model was planned; sections append their fits to ``fits`` (in order), so that later
    sections (rankings, designs, judges) use them.
    """

    ratings: Ratings
    options: AnalyzeOptions
    folder: ReportFolder
    say: Progress
    models: dict[str, list[type[Model]]] = field(default_factory=dict)
    not_planned: dict[str, str] = field(default_factory=dict)
    schemes: dict[str, Ratings] = field(default_factory=dict)
    fits: list[Fit] = field(default_factory=list)
    agreement: list[xr.Dataset] = field(default_factory=list)
    #: the ordinal fit and its rater table (:func:`raterstats.models.ordinal.rater_table`),
    #: made once for the sections that show it (:meth:`rater_table_of`)
    rater_tables: list[tuple[xr.DataTree, xr.Dataset]] = field(default_factory=list)

    def rater_table_of(self, dt: xr.DataTree) -> xr.Dataset:
        """The rater table of the ordinal fit ``dt`` at :attr:`ci_prob`, computed on first
        use (the ordinal and the judge sections both show it)."""
        from raterstats.models.ordinal import rater_table

        for done, table in self.rater_tables:
            if done is dt:
                return table
        table = rater_table(dt, ci_prob=self.ci_prob)
        self.rater_tables.append((dt, table))
        return table

    @property
    def ci_prob(self) -> float:
        """Probability of the posterior intervals."""
        from raterstats.defaults import ci_prob

        return self.options.ci if self.options.ci is not None else ci_prob()

    @property
    def agreement_ci(self) -> float:
        """Coverage of the bootstrap intervals of the agreement statistics."""
        from raterstats.defaults import AGREEMENT_CONFIDENCE

        return self.options.ci if self.options.ci is not None else AGREEMENT_CONFIDENCE

    @property
    def seed(self) -> int:
        """Seed of every stochastic step."""
        return self.options.random_seed

    def fits_of(self, role: str) -> list[Fit]:
        """The fits made so far of the models with ``role``."""
        from raterstats.analyze.options import model_role

        return [f for f in self.fits if model_role(f.model) == role]

    @property
    def ordinal_fit(self) -> Fit | None:
        """The ordinal rater model's fit, when one was made."""
        fits = self.fits_of("ordinal")
        return fits[0] if fits else None

    @property
    def rater_kinds(self) -> dict[str, list[str]]:
        """The raters by kind (``{}`` without a ``rater_kind`` column)."""
        d = self.ratings.data
        if S.RATER_KIND not in d.columns:
            return {}
        pairs = d.select(S.RATER, S.RATER_KIND).unique().sort(S.RATER)
        out: dict[str, list[str]] = {}
        for rater, kind in pairs.iter_rows():
            out.setdefault(str(kind), []).append(str(rater))
        return out

    @property
    def humans_only(self) -> bool:
        """Whether the classical statistics leave the non-human raters out: the data say
        who is human, and there are at least two human raters and some non-human ones."""
        kinds = self.rater_kinds
        return len(kinds.get("human", [])) >= 2 and len(kinds) > 1

    @property
    def humans(self) -> Ratings:
        """The human raters' ratings when :attr:`humans_only`; every rating otherwise."""
        return self.ratings.filter(rater_kind="human") if self.humans_only else self.ratings

    @property
    def judges(self) -> list[str]:
        """The non-human raters (``rater_kind`` other than ``human``)."""
        return sorted(r for k, rs in self.rater_kinds.items() if k != "human" for r in rs)

    @property
    def n_repeats(self) -> int:
        """Number of repeated ratings."""
        return int(self.ratings.data.get_column(S.REPEAT).sum())

    def first_ratings(self) -> pl.DataFrame:
        """The first ratings (no repeats)."""
        return self.ratings.data.filter(~pl.col(S.REPEAT))


class SectionSkipped(Exception):
    """Raised by a section's ``run`` when it finds, on trying, that it does not apply (a
    model that cannot fit these ratings): the section is listed under "Sections not
    included" with this reason."""


@dataclass(frozen=True)
class Section:
    """One section of the report.

    ``applies(ctx)`` returns ``None`` when the section applies to the data and options,
    else the reason it does not (shown under "Sections not included"); ``run(ctx)`` writes
    its files into ``ctx.folder`` and returns its Markdown lines (headed by ``## title``).
    """

    key: str
    title: str
    applies: Callable[[Context], str | None]
    run: Callable[[Context], list[str]]


__all__ = ["Context", "Fit", "Progress", "Section", "SectionSkipped"]
