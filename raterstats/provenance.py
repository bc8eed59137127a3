"""Where a :class:`~raterstats.Ratings` table came from and what was done to it since.

:class:`Exclusion` counts rows removed for a stated reason; :class:`Provenance` holds the
source, the exclusions, the processing steps and what ingest noticed (columns left unused,
scales inferred). The summary (:class:`~raterstats.RatingsSummary`) reports both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exclusion:
    """Rows removed at the user's request (or by an explicit ingest option), with the count.

    Examples
    --------
    >>> str(Exclusion("automatic judge analysed apart", 12))
    '12 rating(s) excluded: automatic judge analysed apart'
    """

    reason: str
    n_rows: int

    def __str__(self) -> str:
        return f"{self.n_rows} rating(s) excluded: {self.reason}"


@dataclass(frozen=True)
class Provenance:
    """The history of a :class:`~raterstats.Ratings` table.

    Attributes
    ----------
    source : str or None
        The file (or a description of the frame) the ratings were read from.
    exclusions : tuple of Exclusion
        Every exclusion made so far, with counts.
    steps : tuple of str
        The transformations applied since ingest (filters, maps, aggregations).
    ignored_columns : tuple of str
        Columns of the source without a role, not kept.
    inferred_scales : tuple of str
        Dimensions whose scale was inferred from the values rather than declared.
    extra_columns : tuple of str
        Columns without a role kept at the user's request.

    Examples
    --------
    >>> p = Provenance(source="ratings.csv", exclusions=(Exclusion("empty rating", 2),))
    >>> p.source, p.exclusions[0].n_rows, p.steps
    ('ratings.csv', 2, ())
    """

    source: str | None = None
    exclusions: tuple[Exclusion, ...] = ()
    steps: tuple[str, ...] = ()
    ignored_columns: tuple[str, ...] = ()
    inferred_scales: tuple[str, ...] = ()
    extra_columns: tuple[str, ...] = ()


__all__ = ["Exclusion", "Provenance"]
