"""Comparative judgments: pairwise preferences and per-question rankings of systems.

A :class:`Comparisons` table is the comparative counterpart of :class:`~raterstats.Ratings`:
validated, with the same views (raters, systems, dimensions, questions), filters,
exclusions and summary. Build it with :func:`raterstats.read_comparisons`; the constructor
takes an already canonical frame and checks its invariants.

Two kinds of judgment:

``"pairs"``
    one row per judgment: rater ``rater`` compared ``system_a`` with ``system_b`` (on
    ``question``, for ``dimension``) and gave ``outcome``, an integer in ``-K..K`` from the
    side of ``system_a`` (positive: ``system_a`` preferred, ``0``: a tie), where ``K`` is
    :attr:`Comparisons.max_grade` (1 for a / b / tie outcomes, 2 for a -2..2 scale);
    ``shown_first`` is ``"a"``, ``"b"`` or null (not recorded).
``"rankings"``
    one row per ranked system: rater ``rater`` ordered systems on ``question`` (for
    ``dimension``); ``rank`` 1 is the best, equal ranks are ties, and a ranking may leave
    systems out (a partial ranking). A ranking is identified by ``ranking`` (question,
    rater and dimension).

:meth:`Comparisons.to_pairs` breaks rankings into the pairwise outcomes they imply, for
win rates, Elo and agreement on the preferred side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
from raterstats.formatting import escape_markdown, format_cell, markdown_table
from raterstats.provenance import Exclusion, Provenance

Kind = Literal["pairs", "rankings"]

#: column names of a comparisons table (those shared with ratings come from the schema)
COMPARISON = "comparison"
RANKING = "ranking"
SYSTEM_A = "system_a"
SYSTEM_B = "system_b"
OUTCOME = "outcome"
SHOWN_FIRST = "shown_first"
RANK = "rank"

#: canonical columns of the two kinds, in order
PAIR_COLUMNS = (
    COMPARISON,
    S.QUESTION,
    SYSTEM_A,
    SYSTEM_B,
    S.RATER,
    S.RATER_KIND,
    S.DIMENSION,
    OUTCOME,
    SHOWN_FIRST,
    S.ROW,
)
RANKING_COLUMNS = (
    RANKING,
    S.QUESTION,
    S.RATER,
    S.RATER_KIND,
    S.DIMENSION,
    S.SYSTEM,
    RANK,
    S.ROW,
)
_TYPES: dict[str, Any] = {
    COMPARISON: pl.String,
    RANKING: pl.String,
    S.QUESTION: pl.String,
    SYSTEM_A: pl.String,
    SYSTEM_B: pl.String,
    S.SYSTEM: pl.String,
    S.RATER: pl.String,
    S.RATER_KIND: pl.String,
    S.DIMENSION: pl.String,
    OUTCOME: pl.Int64,
    SHOWN_FIRST: pl.String,
    RANK: pl.Float64,
    S.ROW: pl.Int64,
}
_FILTERABLE = (S.DIMENSION, S.RATER, S.RATER_KIND, S.QUESTION, S.SYSTEM)


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list | tuple | set | frozenset) else [v]


class Comparisons:
    """A validated table of comparative judgments (pairs or rankings) of systems.

    Parameters
    ----------
    data : pl.DataFrame
        The canonical frame: the columns :data:`PAIR_COLUMNS` (``kind="pairs"``) or
        :data:`RANKING_COLUMNS` (``kind="rankings"``).
    kind : {"pairs", "rankings"}
        What one judgment is.
    max_grade : int
        ``K`` of the outcome scale ``-K..K`` of pairs (1: a / b / tie); ignored for
        rankings.
    provenance : Provenance, optional
        Source, exclusions and processing steps so far.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_comparisons
    >>> c = read_comparisons(pl.DataFrame({
    ...     "system_a": ["gpt", "gpt", "med"], "system_b": ["med", "doc", "doc"],
    ...     "rater": ["r1", "r2", "r1"], "outcome": ["a", "tie", "b"]}))
    >>> c.kind, c.n_judgments, c.systems, c.max_grade
    ('pairs', 3, ('doc', 'gpt', 'med'), 1)
    >>> c.data["outcome"].to_list()
    [1, 0, -1]
    """

    __slots__ = ("_data", "_kind", "_max_grade", "_provenance")

    def __init__(
        self,
        data: pl.DataFrame,
        *,
        kind: Kind,
        max_grade: int = 1,
        provenance: Provenance | None = None,
    ) -> None:
        if kind not in ("pairs", "rankings"):
            raise ValueError(f"Comparisons: kind must be 'pairs' or 'rankings', not {kind!r}")
        cols = PAIR_COLUMNS if kind == "pairs" else RANKING_COLUMNS
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise ValueError(
                f"Comparisons: canonical columns missing: {missing}; use read_comparisons()"
            )
        data = data.select([pl.col(c).cast(_TYPES[c]) for c in cols])
        required = (
            (COMPARISON, SYSTEM_A, SYSTEM_B, S.RATER, S.DIMENSION, OUTCOME)
            if kind == "pairs"
            else (RANKING, S.RATER, S.DIMENSION, S.SYSTEM, RANK)
        )
        nulls = [c for c in required if data.get_column(c).null_count()]
        if nulls:
            raise ValueError(f"Comparisons: columns {nulls} have nulls")
        if kind == "pairs":
            if not isinstance(max_grade, int) or isinstance(max_grade, bool) or max_grade < 1:
                raise ValueError(
                    f"Comparisons: max_grade must be an integer >= 1, not {max_grade!r}"
                )
            out = data.filter(pl.col(OUTCOME).abs() > max_grade)
            if out.height:
                raise ValueError(
                    f"Comparisons: outcomes {sorted(set(out[OUTCOME].to_list()))} outside "
                    f"-{max_grade}..{max_grade}"
                )
            same = data.filter(pl.col(SYSTEM_A) == pl.col(SYSTEM_B)).height
            if same:
                raise ValueError(f"Comparisons: {same} comparisons of a system with itself")
            bad = data.filter(
                pl.col(SHOWN_FIRST).is_not_null() & ~pl.col(SHOWN_FIRST).is_in(["a", "b"])
            ).height
            if bad:
                raise ValueError("Comparisons: shown_first must be 'a', 'b' or null")
        else:
            max_grade = 0
            dup = data.group_by(RANKING, S.SYSTEM).len().filter(pl.col("len") > 1).height
            if dup:
                raise ValueError(f"Comparisons: {dup} systems appear twice in one ranking")
            if data.filter(pl.col(RANK) <= 0).height:
                raise ValueError("Comparisons: ranks must be positive (1 = best)")
        self._data = data
        self._kind: Kind = kind
        self._max_grade = int(max_grade)
        self._provenance = provenance or Provenance()

    # ------------------------------------------------------------------ views

    @property
    def data(self) -> pl.DataFrame:
        """The canonical frame (one row per judgment, or per ranked system)."""
        return self._data

    @property
    def kind(self) -> Kind:
        """``"pairs"`` or ``"rankings"``."""
        return self._kind

    @property
    def max_grade(self) -> int:
        """``K`` of the pairs' outcome scale ``-K..K`` (0 for rankings)."""
        return self._max_grade

    @property
    def graded(self) -> bool:
        """Whether the pairs' outcomes are graded (``K > 1``)."""
        return self._max_grade > 1

    @property
    def ties(self) -> bool:
        """Whether any judgment is a tie (outcome 0, or equal ranks in one ranking)."""
        if self._kind == "pairs":
            return bool((self._data[OUTCOME] == 0).any())
        dup = self._data.group_by(RANKING, RANK).len().filter(pl.col("len") > 1)
        return dup.height > 0

    @property
    def provenance(self) -> Provenance:
        """Source, exclusions and steps."""
        return self._provenance

    @property
    def source(self) -> str | None:
        """The file (or frame) the judgments were read from."""
        return self._provenance.source

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        """Every exclusion so far, with counts."""
        return self._provenance.exclusions

    @property
    def steps(self) -> tuple[str, ...]:
        """Processing steps since ingest."""
        return self._provenance.steps

    def _unique(self, *cols: str) -> tuple[str, ...]:
        vals: set[str] = set()
        for c in cols:
            vals.update(str(v) for v in self._data.get_column(c).drop_nulls().unique())
        return tuple(sorted(vals))

    @property
    def n_judgments(self) -> int:
        """Number of judgments: comparisons (pairs) or rankings."""
        if self._kind == "pairs":
            return self._data.height
        return self._data.get_column(RANKING).n_unique()

    def __len__(self) -> int:
        return self.n_judgments

    @property
    def raters(self) -> tuple[str, ...]:
        """Rater ids, sorted."""
        return self._unique(S.RATER)

    @property
    def systems(self) -> tuple[str, ...]:
        """System ids, sorted."""
        return self._unique(SYSTEM_A, SYSTEM_B) if self._kind == "pairs" else self._unique(S.SYSTEM)

    @property
    def dimensions(self) -> tuple[str, ...]:
        """Dimension names, sorted."""
        return self._unique(S.DIMENSION)

    @property
    def questions(self) -> tuple[str, ...]:
        """Question ids, sorted (empty when the data have none)."""
        return self._unique(S.QUESTION)

    @property
    def rater_kinds(self) -> dict[str, str]:
        """``{rater: kind}`` for raters with a recorded ``rater_kind`` (``"human"``,
        ``"llm"``, ...)."""
        d = self._data.filter(pl.col(S.RATER_KIND).is_not_null())
        return dict(d.select(S.RATER, S.RATER_KIND).unique(S.RATER).sort(S.RATER).rows())

    def __repr__(self) -> str:
        return (
            f"Comparisons(kind={self._kind!r}, {self.n_judgments} judgments, "
            f"{len(self.systems)} systems, {len(self.raters)} raters, "
            f"dimensions={list(self.dimensions)})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Comparisons):
            return NotImplemented
        return (
            self._kind == other._kind
            and self._max_grade == other._max_grade
            and self._data.equals(other._data)
        )

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ selection

    def derive(
        self,
        data: pl.DataFrame,
        *,
        step: str,
        exclusion: Exclusion | None = None,
    ) -> Comparisons:
        """A new table with ``data``, the same kind and scale, and ``step`` (and the
        ``exclusion``) added to the provenance."""
        p = self._provenance
        prov = Provenance(
            source=p.source,
            exclusions=p.exclusions + ((exclusion,) if exclusion else ()),
            steps=(*p.steps, step),
            ignored_columns=p.ignored_columns,
            guessed_roles=p.guessed_roles,
        )
        return Comparisons(data, kind=self._kind, max_grade=self._max_grade or 1, provenance=prov)

    def _mask(self, filters: Mapping[str, Any]) -> pl.Expr:
        expr = pl.lit(True)
        for col, wanted in filters.items():
            if wanted is None:
                continue
            if col not in _FILTERABLE:
                raise TypeError(f"cannot filter on {col!r}; filterable: {list(_FILTERABLE)}")
            vals = [str(v) for v in _as_list(wanted)]
            if col == S.RATER_KIND:
                vals = [S.normalize_rater_kind(v) for v in vals]
            present = set(self.systems if col == S.SYSTEM else self._unique(col))
            unknown = [v for v in vals if v not in present]
            if unknown:
                shown = sorted(present)[:20]
                raise KeyError(f"{col} {unknown} not in the comparisons; present: {shown}")
            if col == S.SYSTEM and self._kind == "pairs":
                # a comparison is kept when both of its systems are selected
                expr = expr & pl.col(SYSTEM_A).is_in(vals) & pl.col(SYSTEM_B).is_in(vals)
            else:
                expr = expr & pl.col(col).is_in(vals)
        return expr

    def filter(self, **filters: Any) -> Comparisons:
        """Select judgments by ``dimension``, ``rater``, ``rater_kind``, ``question`` or
        ``system`` (a value or a list). ``system=[...]`` keeps the comparisons between the
        listed systems (pairs) or the listed systems' places in each ranking (rankings:
        the rankings become partial).

        Examples
        --------
        >>> from raterstats.simulate_comparisons import simulate_comparisons
        >>> c = simulate_comparisons(n_systems=4, n_comparisons=50, random_seed=1).comparisons
        >>> c.filter(system=["s1", "s2"]).systems
        ('s1', 's2')
        """
        data = self._data.filter(self._mask(filters))
        if self._kind == "rankings" and filters.get(S.SYSTEM) is not None:
            data = self._drop_single(data)
        desc = ", ".join(f"{k}={v!r}" for k, v in filters.items() if v is not None)
        return self.derive(data, step=f"filter({desc})")

    @staticmethod
    def _drop_single(data: pl.DataFrame) -> pl.DataFrame:
        """Rankings that keep fewer than two systems compare nothing: drop them."""
        keep = data.group_by(RANKING).len().filter(pl.col("len") >= 2)[RANKING]
        return data.filter(pl.col(RANKING).is_in(keep.implode()))

    def exclude(self, *, reason: str, **filters: Any) -> Comparisons:
        """Remove the judgments matching ``filters``, recording ``reason`` and the count.

        Examples
        --------
        >>> from raterstats.simulate_comparisons import simulate_comparisons
        >>> c = simulate_comparisons(n_systems=4, n_comparisons=50, random_seed=1).comparisons
        >>> c2 = c.exclude(rater="r01", reason="failed the attention check")
        >>> str(c2.exclusions[0]).endswith("failed the attention check")
        True
        """
        if not filters:
            raise TypeError("exclude() needs at least one filter, e.g. rater='r7'")
        mask = self._mask(filters)
        kept = self._data.filter(~mask)
        if self._kind == "rankings" and filters.get(S.SYSTEM) is not None:
            kept = self._drop_single(kept)
        n = self._data.height - kept.height
        return self.derive(kept, step=f"exclude({reason})", exclusion=Exclusion(reason, n))

    # ------------------------------------------------------------------ conversion

    def to_pairs(self) -> Comparisons:
        """Pairwise outcomes: the table itself for pairs; for rankings, every pair of
        systems within a ranking (the better-ranked system preferred, equal ranks a tie),
        with ``comparison`` = ``"<ranking>#<k>"`` and ``shown_first`` null.

        The pairs of one ranking are not independent judgments (a ranking of m systems
        gives m(m-1)/2 pairs): use them for descriptive statistics (win rates, agreement
        on the preferred side), not as if each were a separate judgment.

        Examples
        --------
        >>> import polars as pl
        >>> from raterstats import read_comparisons
        >>> r = read_comparisons(pl.DataFrame({"question": ["q1"] * 3, "rater": ["x"] * 3,
        ...                                    "system": ["a", "b", "c"], "rank": [1, 2, 2]}))
        >>> r.to_pairs().data.select("system_a", "system_b", "outcome").rows()
        [('a', 'b', 1), ('a', 'c', 1), ('b', 'c', 0)]
        """
        if self._kind == "pairs":
            return self
        d = self._data.sort(RANKING, RANK, S.SYSTEM).with_row_index("__k")
        left = d.select(
            RANKING,
            S.QUESTION,
            S.RATER,
            S.RATER_KIND,
            S.DIMENSION,
            S.ROW,
            pl.col(S.SYSTEM).alias(SYSTEM_A),
            pl.col(RANK).alias("__ra"),
            pl.col("__k"),
        )
        right = d.select(
            RANKING,
            pl.col(S.SYSTEM).alias(SYSTEM_B),
            pl.col(RANK).alias("__rb"),
            pl.col("__k").alias("__kb"),
        )
        pairs = (
            left.join(right, on=RANKING)
            .filter(pl.col("__k") < pl.col("__kb"))
            .sort("__k", "__kb")
            .with_columns(
                pl.when(pl.col("__ra") < pl.col("__rb"))
                .then(1)
                .when(pl.col("__ra") > pl.col("__rb"))
                .then(-1)
                .otherwise(0)
                .cast(pl.Int64)
                .alias(OUTCOME),
                pl.lit(None, dtype=pl.String).alias(SHOWN_FIRST),
                pl.concat_str(
                    pl.col(RANKING), pl.lit("#"), pl.int_range(pl.len()).over(RANKING)
                ).alias(COMPARISON),
            )
        )
        prov = Provenance(
            source=self.source,
            exclusions=self.exclusions,
            steps=(*self.steps, "to_pairs() (every pair within each ranking)"),
        )
        return Comparisons(pairs.select(PAIR_COLUMNS), kind="pairs", max_grade=1, provenance=prov)

    # ------------------------------------------------------------------ reporting

    def summary(self) -> ComparisonsSummary:
        """Counts that describe the judgments (see :class:`ComparisonsSummary`).

        Examples
        --------
        >>> from raterstats.simulate_comparisons import simulate_comparisons
        >>> c = simulate_comparisons(n_systems=4, n_comparisons=50, random_seed=1).comparisons
        >>> s = c.summary()
        >>> s.n_judgments, s.n_systems
        (50, 4)
        """
        return ComparisonsSummary.of(self)

    def report(self) -> str:
        """The summary as text (Markdown)."""
        return self.summary().to_markdown()


def connected_components(
    pairs: Sequence[tuple[str, str]], systems: Sequence[str]
) -> list[list[str]]:
    """The groups of systems linked by comparisons (union-find over the pairs), largest
    first. Strengths are comparable only within one group: with two or more, a ranking
    across groups is not identified by the data.

    Examples
    --------
    >>> connected_components([("a", "b"), ("c", "d")], ["a", "b", "c", "d", "e"])
    [['a', 'b'], ['c', 'd'], ['e']]
    """
    parent = {s: s for s in systems}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for s in systems:
        groups.setdefault(find(s), []).append(s)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))


def _shown(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` for a Markdown table: a missing value reads ``n/a`` (a share that does not
    apply, e.g. the shown-first share without a recorded order) or ``not recorded`` (a rater
    kind), not ``None``."""
    return frame.with_columns(
        pl.col(c).cast(pl.String).fill_null("not recorded" if c == S.RATER_KIND else "n/a")
        if frame.schema[c] == pl.String or frame.schema[c] == pl.Null
        else pl.col(c).map_elements(format_cell, return_dtype=pl.String).fill_null("n/a")
        for c in frame.columns
        if frame.get_column(c).null_count()
    )


def _mean(frame: pl.DataFrame, expr: pl.Expr) -> float:
    """Mean of ``expr`` over ``frame`` as a float (0.0 for an empty frame)."""
    if frame.height == 0:
        return 0.0
    return float(frame.select(expr.cast(pl.Float64).mean()).item())


@dataclass(frozen=True)
class ComparisonsSummary:
    """What to check before any model: counts per dimension and rater, ties, position, and
    whether the comparison graph links every system.

    ``cells`` has one row per dimension: judgments, raters, systems, questions, ``pairs``
    (distinct unordered system pairs compared) of ``possible_pairs``, ``components``
    (groups of systems linked by comparisons; above 1 the strengths of different groups
    are not comparable), ``tie_share``, and for pairs ``a_preferred_share`` and
    ``position_known_share`` / ``first_preferred_share`` (among judgments with the shown
    order recorded and not tied: the share won by the system shown first). ``raters`` has
    one row per rater. ``notes`` says what needs attention, in words.
    """

    source: str | None
    kind: Kind
    n_judgments: int
    n_rows: int
    n_systems: int
    n_raters: int
    n_questions: int
    max_grade: int
    dimensions: tuple[str, ...]
    systems: tuple[str, ...]
    cells: pl.DataFrame
    raters: pl.DataFrame
    exclusions: tuple[Exclusion, ...]
    steps: tuple[str, ...]
    ignored_columns: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def of(cls, c: Comparisons) -> ComparisonsSummary:
        """The summary of a :class:`Comparisons` table (as :meth:`Comparisons.summary`)."""
        pairs = c.to_pairs().data
        pairs = pairs.with_columns(
            pl.min_horizontal(SYSTEM_A, SYSTEM_B).alias("__lo"),
            pl.max_horizontal(SYSTEM_A, SYSTEM_B).alias("__hi"),
            (pl.col(SHOWN_FIRST).is_not_null()).alias("__known"),
            (
                ((pl.col(SHOWN_FIRST) == "a") & (pl.col(OUTCOME) > 0))
                | ((pl.col(SHOWN_FIRST) == "b") & (pl.col(OUTCOME) < 0))
            ).alias("__first_won"),
        )
        unit = RANKING if c.kind == "rankings" else COMPARISON
        rows = []
        notes = []
        for dim in c.dimensions:
            own = c.data.filter(pl.col(S.DIMENSION) == dim)
            p = pairs.filter(pl.col(S.DIMENSION) == dim)
            systems = (
                sorted(set(own[SYSTEM_A].to_list()) | set(own[SYSTEM_B].to_list()))
                if c.kind == "pairs"
                else sorted(set(own[S.SYSTEM].to_list()))
            )
            links = p.select("__lo", "__hi").unique().rows()
            comps = connected_components(links, systems)
            known = p.filter(pl.col("__known") & (pl.col(OUTCOME) != 0))
            rows.append(
                {
                    S.DIMENSION: dim,
                    "judgments": own.get_column(unit).n_unique(),
                    "raters": own.get_column(S.RATER).n_unique(),
                    "systems": len(systems),
                    "questions": own.get_column(S.QUESTION).drop_nulls().n_unique(),
                    "pairs": len(links),
                    "possible_pairs": len(systems) * (len(systems) - 1) // 2,
                    "components": len(comps),
                    "tie_share": _mean(p, pl.col(OUTCOME) == 0),
                    "a_preferred_share": (
                        _mean(p, pl.col(OUTCOME) > 0) if c.kind == "pairs" else None
                    ),
                    "position_known_share": _mean(p, pl.col("__known")),
                    "first_preferred_share": (
                        _mean(known, pl.col("__first_won")) if known.height else None
                    ),
                }
            )
            if len(comps) > 1:
                shown = "; ".join(", ".join(g) for g in comps[:4])
                notes.append(
                    f"{dim}: the comparisons split the systems into {len(comps)} groups that "
                    f"are never compared with each other ({shown}); strengths of different "
                    "groups are not comparable"
                )
        cells = pl.DataFrame(rows)
        per_rater = (
            c.data.group_by(S.RATER)
            .agg(
                pl.col(unit).n_unique().alias("judgments"),
                pl.col(S.RATER_KIND).drop_nulls().first().alias(S.RATER_KIND),
            )
            .join(
                pairs.group_by(S.RATER).agg(
                    (pl.col(OUTCOME) == 0).mean().alias("tie_share"),
                    pl.col("__first_won")
                    .filter(pl.col("__known") & (pl.col(OUTCOME) != 0))
                    .mean()
                    .alias("first_preferred_share"),
                ),
                on=S.RATER,
                how="left",
            )
            .sort(S.RATER)
        )
        if c.kind == "rankings":
            per = c.data.group_by(RANKING).len()
            sizes = per["len"].to_list()
            notes.append(
                f"rankings of {min(sizes)} to {max(sizes)} systems "
                f"(mean {_mean(per, pl.col('len')):.1f})"
            )
        return cls(
            source=c.source,
            kind=c.kind,
            n_judgments=c.n_judgments,
            n_rows=c.data.height,
            n_systems=len(c.systems),
            n_raters=len(c.raters),
            n_questions=len(c.questions),
            max_grade=c.max_grade,
            dimensions=c.dimensions,
            systems=c.systems,
            cells=cells,
            raters=per_rater,
            exclusions=c.exclusions,
            steps=c.steps,
            ignored_columns=c.provenance.ignored_columns,
            notes=tuple(notes),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (tables as lists of records)."""
        return {
            "source": self.source,
            "kind": self.kind,
            "n_judgments": self.n_judgments,
            "n_rows": self.n_rows,
            "n_systems": self.n_systems,
            "n_raters": self.n_raters,
            "n_questions": self.n_questions,
            "max_grade": self.max_grade,
            "dimensions": list(self.dimensions),
            "systems": list(self.systems),
            "cells": self.cells.to_dicts(),
            "raters": self.raters.to_dicts(),
            "exclusions": [{"reason": e.reason, "n_rows": e.n_rows} for e in self.exclusions],
            "steps": list(self.steps),
            "ignored_columns": list(self.ignored_columns),
            "notes": list(self.notes),
        }

    def to_markdown(self) -> str:
        """The summary as Markdown; every user string escaped."""
        what = "pairwise comparisons" if self.kind == "pairs" else "rankings"
        scale = (
            f"outcomes -{self.max_grade}..{self.max_grade}"
            if self.kind == "pairs" and self.max_grade > 1
            else ("a / b / tie" if self.kind == "pairs" else "rank 1 = best")
        )
        lines = [
            "## Comparisons",
            "",
            f"- source: {escape_markdown(self.source or 'a frame')}",
            f"- {self.n_judgments} {what} ({scale}) of {self.n_systems} systems by "
            f"{self.n_raters} raters"
            + (f" on {self.n_questions} questions" if self.n_questions else ""),
            f"- dimensions: {', '.join(escape_markdown(d) for d in self.dimensions)}",
        ]
        lines += [f"- excluded: {escape_markdown(str(e))}" for e in self.exclusions]
        lines += [f"- ignored column: {escape_markdown(c)}" for c in self.ignored_columns]
        lines += [f"- note: {escape_markdown(n)}" for n in self.notes]
        lines += ["", "### Per dimension", "", markdown_table(_shown(self.cells)), ""]
        lines += ["### Per rater", "", markdown_table(_shown(self.raters)), ""]
        return "\n".join(lines)


__all__ = [
    "COMPARISON",
    "OUTCOME",
    "PAIR_COLUMNS",
    "RANK",
    "RANKING",
    "RANKING_COLUMNS",
    "SHOWN_FIRST",
    "SYSTEM_A",
    "SYSTEM_B",
    "Comparisons",
    "ComparisonsSummary",
    "Kind",
    "connected_components",
]
