"""Where a :class:`~raterstats.Ratings` table came from and what was done to it since.

:class:`Exclusion` counts rows removed for a stated reason; :class:`Provenance` holds the
source, the exclusions, the processing steps and what ingest noticed (columns left unused,
scales inferred, column roles guessed from a name: :class:`ColumnGuess`). The summary
(:class:`~raterstats.RatingsSummary`) reports both.
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
class ColumnGuess:
    """A column whose role was decided from its name being an alias, not by the user.

    Attributes
    ----------
    column : str
        The column of the source.
    role : str
        The role its name matches (aliases: ``model`` -> ``system``, ``score`` -> ``rating``).
    as_rater : bool
        False: the column was taken as that role (long format, or the ``item`` of a wide
        table). True: wide format, where every column not named as a role is a rater: the
        column was read as a rater although its name matches ``role`` (an alias, or the
        role's own name when ``columns=`` maps the role to another column).

    Examples
    --------
    >>> print(ColumnGuess("model", "system", as_rater=False))  # doctest: +NORMALIZE_WHITESPACE
    role 'system' taken from column 'model' (an alias of 'system'); map it with
    columns={'system': ...} if that is wrong
    >>> print(ColumnGuess("model", "system", as_rater=True))  # doctest: +NORMALIZE_WHITESPACE
    column 'model' read as a rater (wide format), although its name matches role 'system';
    map it with columns={'system': 'model'} if it is not a rater
    """

    column: str
    role: str
    as_rater: bool = False

    def __str__(self) -> str:
        if self.as_rater:
            return (
                f"column {self.column!r} read as a rater (wide format), although its name "
                f"matches role {self.role!r}; map it with "
                f"columns={{{self.role!r}: {self.column!r}}} if it is not a rater"
            )
        return (
            f"role {self.role!r} taken from column {self.column!r} (an alias of "
            f"{self.role!r}); map it with columns={{{self.role!r}: ...}} if that is wrong"
        )


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
    guessed_roles : tuple of ColumnGuess
        Columns whose role (or, in wide format, whose reading as a rater) was decided
        because their name is an alias of a role, not by the user's ``columns=`` or by the
        role's own name.

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
    guessed_roles: tuple[ColumnGuess, ...] = ()


__all__ = ["ColumnGuess", "Exclusion", "Provenance"]
