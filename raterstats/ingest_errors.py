"""How bad ratings input is reported: every :class:`Problem` at once in one
:class:`RatingsError`, each naming the file, the 1-based data rows, the column, the
offending value and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Rows listed per problem before "(and N more)".
MAX_ROWS_SHOWN = 10
#: Problems listed in the error message before "... and N more".
MAX_PROBLEMS_SHOWN = 50


@dataclass(frozen=True)
class Problem:
    """One problem found in the input.

    ``rows`` are 1-based data-row numbers (the header is not counted; for JSON lines the
    line number); empty when the problem concerns a column or the whole file.

    Examples
    --------
    >>> Problem("rating", "7", "a level of likert5 (1, 2, 3, 4, 5)", (2, 9)).describe("r.csv")
    "r.csv, rows 2, 9, column 'rating': got '7'; expected a level of likert5 (1, 2, 3, 4, 5)"
    """

    column: str | None
    value: str | None
    expected: str
    rows: tuple[int, ...] = ()

    def describe(self, source: str) -> str:
        """One line naming ``source``, the rows, the column, the value and the expectation."""
        where = [source]
        if self.rows:
            shown = ", ".join(str(r) for r in self.rows[:MAX_ROWS_SHOWN])
            more = len(self.rows) - MAX_ROWS_SHOWN
            label = "row" if len(self.rows) == 1 else "rows"
            where.append(f"{label} {shown}" + (f" (and {more} more)" if more > 0 else ""))
        if self.column is not None:
            where.append(f"column {self.column!r}")
        got = "" if self.value is None else f"got {self.value!r}; "
        return f"{', '.join(where)}: {got}expected {self.expected}"


class RatingsError(ValueError):
    """Every problem found while reading ratings, listed at once.

    Attributes
    ----------
    source : str
        The file (or a description of the frame) that was read.
    problems : list of Problem
        Each with column, value, expectation and the 1-based rows it occurs in.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings, RatingsError, OrdinalScale
    >>> bad = pl.DataFrame({"item": ["a", "b"], "rater": ["x", ""], "rating": [3, 7]})
    >>> try:
    ...     read_ratings(bad, scale=OrdinalScale.likert(5))
    ... except RatingsError as err:
    ...     print(len(err.problems))
    2
    """

    def __init__(self, source: str, problems: Sequence[Problem], *, what: str = "ratings") -> None:
        self.source = source
        self.problems = list(problems)
        n = len(self.problems)
        lines = [
            f"{n} problem{'s' if n != 1 else ''} in {what} from {source} "
            "(rows are data rows numbered from 1, header not counted):"
        ]
        for p in self.problems[:MAX_PROBLEMS_SHOWN]:
            lines.append("  - " + p.describe(source))
        if n > MAX_PROBLEMS_SHOWN:
            lines.append(f"  ... and {n - MAX_PROBLEMS_SHOWN} more (see .problems)")
        super().__init__("\n".join(lines))


__all__ = ["MAX_PROBLEMS_SHOWN", "MAX_ROWS_SHOWN", "Problem", "RatingsError"]
