"""The descriptive summary of a :class:`~raterstats.Ratings` table.

:class:`RatingsSummary` holds what a methodologist checks before any model: counts,
coverage, repeats, scales and every exclusion, as numbers (:meth:`RatingsSummary.to_dict`)
or as a Markdown report (:meth:`RatingsSummary.to_markdown`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from raterstats import schema as S
from raterstats.formatting import escape_markdown, escape_markdown_cell, markdown_table
from raterstats.provenance import ColumnGuess, Exclusion
from raterstats.scales import scale_text

if TYPE_CHECKING:
    from raterstats.ratings import Ratings


@dataclass(frozen=True)
class RatingsSummary:
    """What a methodologist checks first: counts, coverage, repeats, scales, exclusions.

    ``cells`` has one row per design x dimension: first ratings and repeats, items, units
    (items or segments) and units per item, raters, ratings per unit (mean / min / max),
    ``panel_coverage`` (share of the unit x rater cells of each item's own raters that
    hold a rating: 1 when every rater of an item rated all its units) and ``matrix_fill``
    (share of the full units x raters matrix that holds a rating).
    ``raters`` has ratings per rater. ``rater_kinds`` counts the raters of each
    ``rater_kind`` (empty without that column); ``guessed_roles`` lists the columns whose
    role was decided from an alias of a role name (see
    :class:`~raterstats.provenance.ColumnGuess`).
    """

    source: str | None
    n_ratings: int
    n_items: int
    n_raters: int
    n_systems: int
    n_questions: int
    n_segments: int
    n_repeats: int
    dimensions: tuple[str, ...]
    designs: tuple[str, ...]
    systems: tuple[str, ...]
    scales: dict[str, str]
    cells: pl.DataFrame
    raters: pl.DataFrame
    exclusions: tuple[Exclusion, ...]
    steps: tuple[str, ...]
    ignored_columns: tuple[str, ...]
    inferred_scales: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    guessed_roles: tuple[ColumnGuess, ...] = field(default=())
    rater_kinds: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, r: Ratings) -> RatingsSummary:
        """The summary of a :class:`~raterstats.Ratings` table (as :meth:`Ratings.summary`).

        Examples
        --------
        >>> import polars as pl
        >>> from raterstats import read_ratings
        >>> r = read_ratings(pl.DataFrame({"item": ["a", "a", "b"], "rater": ["x", "y", "x"],
        ...                                "rating": [1, 2, 2]}))
        >>> s = RatingsSummary.of(r)
        >>> s.n_items, s.n_raters, s.cells["panel_coverage"].to_list()
        (2, 2, [1.0])
        """
        d = r.data
        first = d.filter(~pl.col(S.REPEAT))
        # a unit is an (item, segment) pair, the segment null for whole-item ratings
        f = first.with_columns(pl.struct(S.ITEM, S.SEGMENT).alias("unit"))
        per_unit = f.group_by(S.DESIGN, S.DIMENSION, "unit").agg(
            pl.len().alias("n"), pl.col(S.ITEM).first()
        )
        cells = (
            per_unit.group_by(S.DESIGN, S.DIMENSION)
            .agg(
                pl.col("n").sum().alias("ratings"),
                pl.len().alias("units"),
                pl.col(S.ITEM).n_unique().alias("items"),
                pl.col("n").mean().alias("ratings_per_unit"),
                pl.col("n").min().alias("min_per_unit"),
                pl.col("n").max().alias("max_per_unit"),
            )
            .sort(S.DESIGN, S.DIMENSION)
        )
        # raters who rated any unit of an item are its panel; coverage = filled / possible
        panel = f.group_by(S.DESIGN, S.DIMENSION, S.ITEM).agg(
            pl.col(S.RATER).n_unique().alias("panel"),
            pl.col("unit").n_unique().alias("units_in_item"),
            pl.len().alias("filled"),
        )
        cov = panel.group_by(S.DESIGN, S.DIMENSION).agg(
            (pl.col("filled").sum() / (pl.col("panel") * pl.col("units_in_item")).sum()).alias(
                "panel_coverage"
            ),
            pl.col("units_in_item").mean().alias("units_per_item"),
        )
        raters_n = f.group_by(S.DESIGN, S.DIMENSION).agg(pl.col(S.RATER).n_unique().alias("raters"))
        reps = (
            d.filter(pl.col(S.REPEAT))
            .group_by(S.DESIGN, S.DIMENSION)
            .agg(pl.len().alias("repeats"))
        )
        cells = (
            cells.join(raters_n, on=[S.DESIGN, S.DIMENSION])
            .join(cov, on=[S.DESIGN, S.DIMENSION])
            .join(reps, on=[S.DESIGN, S.DIMENSION], how="left")
            .with_columns(
                pl.col("repeats").fill_null(0),
                (pl.col("ratings") / (pl.col("units") * pl.col("raters"))).alias("matrix_fill"),
            )
            .select(
                S.DESIGN,
                S.DIMENSION,
                "ratings",
                "repeats",
                "items",
                "units",
                "units_per_item",
                "raters",
                "ratings_per_unit",
                "min_per_unit",
                "max_per_unit",
                "panel_coverage",
                "matrix_fill",
            )
            .sort(S.DESIGN, S.DIMENSION)
        )
        rater_cols = [S.RATER] + [c for c in (S.GROUP, S.RATER_KIND) if c in d.columns]
        raters = (
            d.group_by(rater_cols)
            .agg(
                pl.len().alias("ratings"),
                pl.col(S.REPEAT).sum().alias("repeats"),
                pl.col(S.ITEM).n_unique().alias("items"),
            )
            .sort(S.RATER)
        )
        seg = d.filter(pl.col(S.SEGMENT).is_not_null()).select(S.ITEM, S.SEGMENT).unique()
        kinds = (
            d.group_by(S.RATER_KIND).agg(pl.col(S.RATER).n_unique()).sort(S.RATER_KIND).rows()
            if S.RATER_KIND in d.columns
            else []
        )
        meta = r.provenance
        return cls(
            source=meta.source,
            n_ratings=d.height,
            n_items=d.get_column(S.ITEM).n_unique(),
            n_raters=d.get_column(S.RATER).n_unique(),
            n_systems=len(r.systems),
            n_questions=d.get_column(S.QUESTION).n_unique() if S.QUESTION in d.columns else 0,
            n_segments=seg.height,
            n_repeats=int(d.get_column(S.REPEAT).sum()),
            dimensions=r.dimensions,
            designs=r.designs,
            systems=r.systems,
            scales={k: scale_text(v) for k, v in r.scales.items()},
            cells=cells,
            raters=raters,
            exclusions=meta.exclusions,
            steps=meta.steps,
            ignored_columns=meta.ignored_columns,
            inferred_scales=meta.inferred_scales,
            guessed_roles=meta.guessed_roles,
            rater_kinds=dict(kinds),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (tables as lists of records)."""
        return {
            "source": self.source,
            "n_ratings": self.n_ratings,
            "n_items": self.n_items,
            "n_raters": self.n_raters,
            "n_systems": self.n_systems,
            "n_questions": self.n_questions,
            "n_segments": self.n_segments,
            "n_repeats": self.n_repeats,
            "dimensions": list(self.dimensions),
            "designs": list(self.designs),
            "systems": list(self.systems),
            "scales": self.scales,
            "cells": self.cells.to_dicts(),
            "raters": self.raters.to_dicts(),
            "exclusions": [{"reason": e.reason, "n_rows": e.n_rows} for e in self.exclusions],
            "steps": list(self.steps),
            "ignored_columns": list(self.ignored_columns),
            "inferred_scales": list(self.inferred_scales),
            "guessed_roles": [
                {"column": g.column, "role": g.role, "as_rater": g.as_rater, "note": str(g)}
                for g in self.guessed_roles
            ],
            "rater_kinds": dict(self.rater_kinds),
        }

    def to_markdown(self) -> str:
        """The summary as a Markdown document; every id, name and label from the data is
        escaped (:func:`raterstats.formatting.escape_markdown`).

        Examples
        --------
        >>> import polars as pl
        >>> from raterstats import read_ratings
        >>> r = read_ratings(pl.DataFrame({"item": ["a", "a"], "rater": ["x|y", "z"],
        ...                                "rating": [1, 2]}))
        >>> print(r.summary().to_markdown().split("## Raters")[1].splitlines()[4])
        | x\\|y | 1 | 0 | 1 |
        """

        def esc(values: tuple[Any, ...] | list[Any]) -> str:
            return ", ".join(escape_markdown(str(v)) for v in values)

        lines = ["# Data summary", ""]
        if self.source:
            lines += [f"Source: {escape_markdown(self.source)}", ""]
        lines += [
            f"- ratings: {self.n_ratings} ({self.n_repeats} repeated ratings)",
            f"- items: {self.n_items}"
            + (f" ({self.n_segments} rated segments)" if self.n_segments else ""),
            f"- raters: {self.n_raters}",
        ]
        if self.n_systems:
            lines.append(f"- systems: {self.n_systems} ({esc(self.systems)})")
        if self.n_questions:
            lines.append(f"- questions: {self.n_questions}")
        lines.append(f"- dimensions: {esc(self.dimensions)}")
        lines.append(f"- designs: {esc(self.designs)}")
        lines += self._role_lines()
        lines += ["", "## Scales", ""]
        lines += [
            f"- {escape_markdown(k)}: {escape_markdown(v)}"
            + (" (inferred)" if k in self.inferred_scales else "")
            for k, v in self.scales.items()
        ]
        lines += ["", "## Ratings by design and dimension", "", markdown_table(self.cells)]
        lines += ["", "## Raters", "", markdown_table(self.raters)]
        lines += ["", "## Exclusions", ""]
        if self.exclusions:
            lines += [f"- {escape_markdown(str(e))}" for e in self.exclusions]
        else:
            lines.append("- none: every row of the source is in the data")
        if self.ignored_columns:
            lines += ["", "Columns not used (no role): " + esc(self.ignored_columns)]
        if self.steps:
            lines += ["", "## Steps since ingest", ""]
            lines += [f"{k}. {escape_markdown(s)}" for k, s in enumerate(self.steps, 1)]
        return "\n".join(lines) + "\n"

    def _role_lines(self) -> list[str]:
        """Rater kinds found, and every column role decided from an alias of a role name."""
        lines = []
        if self.rater_kinds:
            kinds = ", ".join(
                f"{escape_markdown_cell(k)} ({n} rater{'s' if n != 1 else ''})"
                for k, n in self.rater_kinds.items()
            )
            lines.append(f"- rater kinds: {kinds}")
            other = [k for k in self.rater_kinds if k not in S.RATER_KINDS]
            if other:
                shown = ", ".join(escape_markdown_cell(repr(k)) for k in other)
                lines.append(
                    f"- rater kinds other than 'human' and 'llm' ({shown}) are not 'human': "
                    "analyses of human raters (design comparisons, costs, judge agreement) "
                    "leave them out, and the ordinal model fits them apart, like an LLM judge"
                )
        if self.guessed_roles:
            lines += ["", "## Column roles read from names", ""]
            lines += [f"- {escape_markdown_cell(str(g))}" for g in self.guessed_roles]
        return lines

    def __str__(self) -> str:
        return self.to_markdown()


__all__ = ["RatingsSummary"]
