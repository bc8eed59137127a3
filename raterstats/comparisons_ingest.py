"""Reading comparative judgments (:func:`read_comparisons`): pairwise preferences and
per-question rankings from CSV / TSV, Parquet, JSON lines, JSON or a frame, validated to the
standard of :func:`raterstats.read_ratings`: every problem at once (file, rows, column, value,
what was expected), nothing dropped silently.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any, Literal

import polars as pl

from raterstats import schema as S
from raterstats.comparisons import (
    COMPARISON,
    OUTCOME,
    PAIR_COLUMNS,
    RANK,
    RANKING,
    RANKING_COLUMNS,
    SHOWN_FIRST,
    SYSTEM_A,
    SYSTEM_B,
    Comparisons,
)
from raterstats.ingest_errors import Problem, RatingsError
from raterstats.provenance import Exclusion, Provenance
from raterstats.readers import FileFormat, read_source

#: roles of a comparisons file and the column names accepted for each (case-insensitive)
PAIR_ROLES: dict[str, tuple[str, ...]] = {
    SYSTEM_A: ("system_a", "model_a", "system_1", "system1", "left"),
    SYSTEM_B: ("system_b", "model_b", "system_2", "system2", "right"),
    OUTCOME: ("outcome", "winner", "preference", "preferred", "choice", "label"),
    S.RATER: ("rater", "annotator", "judge", "worker", "annotator_id", "rater_id", "judge_id"),
    S.QUESTION: ("question", "question_id", "prompt", "prompt_id", "case", "case_id"),
    S.DIMENSION: ("dimension", "aspect", "criterion", "metric"),
    SHOWN_FIRST: ("shown_first", "first", "presented_first", "position"),
    S.RATER_KIND: ("rater_kind", "rater_type", "annotator_type"),
    COMPARISON: ("comparison", "comparison_id", "id"),
}
RANKING_ROLES: dict[str, tuple[str, ...]] = {
    S.QUESTION: PAIR_ROLES[S.QUESTION],
    S.RATER: PAIR_ROLES[S.RATER],
    S.SYSTEM: ("system", "model", "system_id"),
    RANK: ("rank", "ranking", "position", "place"),
    S.DIMENSION: PAIR_ROLES[S.DIMENSION],
    S.RATER_KIND: PAIR_ROLES[S.RATER_KIND],
    # after RANK, so that a file whose ranks are in a column called "ranking" keeps them
    RANKING: ("ranking", "ranking_id"),
}
_REQUIRED = {"pairs": (SYSTEM_A, SYSTEM_B, OUTCOME, S.RATER), "rankings": (S.SYSTEM, RANK, S.RATER)}

#: outcome words read as a / b / tie when no ``outcomes=`` map is given (lower-case)
OUTCOME_WORDS = {
    "a": 1,
    "b": -1,
    "tie": 0,
    "model_a": 1,
    "model_b": -1,
    "system_a": 1,
    "system_b": -1,
    "left": 1,
    "right": -1,
    "draw": 0,
    "equal": 0,
    "tie (bothbad)": 0,
    "both_bad": 0,
    "both_good": 0,
}
_INT = re.compile(r"^[+-]?\d+(\.0+)?$")


def _resolve(
    present: list[str],
    roles: Mapping[str, tuple[str, ...]],
    columns: Mapping[str, str] | None,
    problems: list[Problem],
) -> dict[str, str]:
    """Map roles to columns: the user's ``columns=`` first, then the accepted names."""
    found: dict[str, str] = {}
    lower = {c.lower(): c for c in present}
    for role, col in (columns or {}).items():
        if role not in roles:
            problems.append(
                Problem(None, role, f"a role among {sorted(roles)} as a key of columns=")
            )
        elif col not in present:
            close = difflib.get_close_matches(str(col), present, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(Problem(str(col), None, f"this column in the input{hint}"))
        else:
            found[role] = col
    taken = set(found.values())
    for role, names in roles.items():
        if role in found:
            continue
        for alias in names:
            hit = lower.get(alias)
            if hit is not None and hit not in taken:
                found[role] = hit
                taken.add(hit)
                break
    return found


def _rows(frame: pl.DataFrame, mask: pl.Expr) -> tuple[int, ...]:
    return tuple(frame.filter(mask)[S.ROW].to_list())


def _empty(frame: pl.DataFrame, role: str, col: str, problems: list[Problem], what: str) -> None:
    rows = _rows(frame, pl.col(role).is_null() | (pl.col(role).str.strip_chars() == ""))
    if rows:
        problems.append(Problem(col, "", what, rows))


def _outcomes(
    frame: pl.DataFrame,
    col: str,
    graded: int | None,
    outcomes: Mapping[str, Any] | None,
    problems: list[Problem],
) -> pl.Series:
    """Outcome codes -K..K from the side of system_a (null where unreadable)."""
    words = {str(k).strip().lower(): v for k, v in (outcomes or {}).items()}
    k = graded or 1
    codes: list[int | None] = []
    bad: dict[str, list[int]] = {}
    for raw, a, b, row in frame.select(OUTCOME, SYSTEM_A, SYSTEM_B, S.ROW).iter_rows():
        text = "" if raw is None else str(raw).strip()
        key = text.lower()
        code: Any = None
        if key in words:
            code = words[key]
            code = {"a": 1, "b": -1, "tie": 0}.get(str(code).lower(), code)
        elif graded is not None:
            code = int(float(text)) if _INT.match(text) else None
        elif key in OUTCOME_WORDS:
            code = OUTCOME_WORDS[key]
        elif _INT.match(text) and int(float(text)) in (-1, 0, 1):
            code = int(float(text))  # the canonical codes, as Comparisons.data writes them
        elif text and text == a:
            code = 1
        elif text and text == b:
            code = -1
        if isinstance(code, bool) or not isinstance(code, int) or abs(code) > k:
            if text:
                bad.setdefault(text, []).append(row)
            codes.append(None)
        else:
            codes.append(code)
    if graded is not None:
        expected = f"an integer from -{k} to {k} (graded={k}; positive: system_a preferred)"
    else:
        expected = (
            "'a', 'b' or 'tie' (also 1 / -1 / 0, model_a / model_b, draw, or the name of "
            "system_a or system_b; map other words with outcomes=, or declare a graded scale "
            "with graded=)"
        )
    for value, rows in bad.items():
        problems.append(Problem(col, value, expected, tuple(rows)))
    return pl.Series(OUTCOME, codes, dtype=pl.Int64)


def _shown_first(frame: pl.DataFrame, col: str, problems: list[Problem]) -> pl.Series:
    out: list[str | None] = []
    bad: dict[str, list[int]] = {}
    for raw, a, b, row in frame.select(SHOWN_FIRST, SYSTEM_A, SYSTEM_B, S.ROW).iter_rows():
        text = "" if raw is None else str(raw).strip()
        key = text.lower()
        if not text:
            out.append(None)
        elif key in ("a", "model_a", "system_a", "left", "1") or text == a:
            out.append("a")
        elif key in ("b", "model_b", "system_b", "right", "2") or text == b:
            out.append("b")
        else:
            bad.setdefault(text, []).append(row)
            out.append(None)
    for value, rows in bad.items():
        problems.append(
            Problem(
                col,
                value,
                "which system was shown first: 'a', 'b', or the name of system_a or system_b "
                "(empty: not recorded)",
                tuple(rows),
            )
        )
    return pl.Series(SHOWN_FIRST, out, dtype=pl.String)


def read_comparisons(
    source: Any,
    *,
    columns: Mapping[str, str] | None = None,
    kind: Literal["pairs", "rankings"] | None = None,
    graded: int | None = None,
    outcomes: Mapping[str, Any] | None = None,
    dimension: str | None = None,
    rater: str | None = None,
    file_format: FileFormat | None = None,
    encoding: str = "utf-8",
    separator: str | None = None,
) -> Comparisons:
    """Read pairwise preferences or per-question rankings of systems into
    :class:`~raterstats.comparisons.Comparisons`.

    Parameters
    ----------
    source : path or DataFrame
        A ``.csv``, ``.tsv``, ``.parquet``, ``.jsonl`` or ``.json`` file (optionally
        gzipped) or a polars / pandas frame, one row per judgment (pairs) or per ranked
        system (rankings).
    columns : mapping, optional
        ``{role: column}`` for columns not named by a role or an accepted alias. Pairs:
        ``system_a``, ``system_b``, ``outcome``, ``rater`` (required), ``question``,
        ``dimension``, ``shown_first``, ``rater_kind``, ``comparison`` (an id; must be
        unique). Rankings: ``system``, ``rank``, ``rater`` (required), ``question``,
        ``dimension``, ``rater_kind``, ``ranking`` (an id of each ranking, needed when a
        rater ranks one question's systems more than once; default: one ranking per
        question, rater and dimension). :data:`PAIR_ROLES` and :data:`RANKING_ROLES` list
        the accepted names (``model_a``, ``winner``, ``judge``, ...).
    kind : {"pairs", "rankings"}, optional
        Default: rankings when a ``rank`` column is found, pairs otherwise.
    graded : int, optional
        Pairs only: the outcomes are integers ``-graded..graded`` (e.g. 2 for a -2..2
        scale; positive: ``system_a`` better, 0: no difference). Default: the outcomes are
        ``a`` / ``b`` / ``tie`` (also ``1`` / ``-1`` / ``0``, the codes
        :attr:`Comparisons.data` holds, so that a table written from it reads back;
        ``model_a`` / ``model_b``, ``draw``, or the winning system's name).
    outcomes : mapping, optional
        Pairs only: ``{value in the file: "a" | "b" | "tie" | integer}`` for other outcome
        words (``{"Response 1": "a", "Response 2": "b", "Same": "tie"}``).
    dimension : str, optional
        The dimension of every judgment when the data have no dimension column (default:
        ``"default"``).
    rater : str, optional
        The rater of every judgment when the data have no rater column (e.g. one LLM
        judge).
    file_format, encoding, separator
        As in :func:`raterstats.read_ratings`.

    Returns
    -------
    Comparisons
        Rankings that name fewer than two systems compare nothing: they are excluded and
        counted in :attr:`Comparisons.exclusions` (and the summary). Nothing else is
        dropped.

    Raises
    ------
    RatingsError
        Listing every problem at once, each with the file, rows, column, value and what was
        expected: missing columns; empty systems, raters or outcomes; a system compared
        with itself; an outcome outside the scale; an unreadable ``shown_first``; a
        duplicate comparison id; a rank that is not a positive number; a system ranked
        twice in one ranking.

    Examples
    --------
    >>> import polars as pl
    >>> c = read_comparisons(pl.DataFrame({
    ...     "model_a": ["gpt", "gpt"], "model_b": ["doc", "med"], "judge": ["j1", "j1"],
    ...     "winner": ["model_a", "tie"], "shown_first": ["a", "med"]}))
    >>> c.data.select("system_a", "outcome", "shown_first").rows()
    [('gpt', 1, 'a'), ('gpt', 0, 'b')]
    >>> g = read_comparisons(pl.DataFrame({"system_a": ["x"], "system_b": ["y"],
    ...                                    "rater": ["r"], "outcome": [-2]}), graded=2)
    >>> g.max_grade, g.data["outcome"].to_list()
    (2, [-2])
    """
    if graded is not None and (
        isinstance(graded, bool) or not isinstance(graded, int) or graded < 1
    ):
        raise ValueError(f"read_comparisons: graded must be an integer >= 1, not {graded!r}")
    if kind not in (None, "pairs", "rankings"):
        raise ValueError(f"read_comparisons: kind must be 'pairs' or 'rankings', not {kind!r}")
    loaded = read_source(source, file_format=file_format, encoding=encoding, separator=separator)
    frame, name = loaded.frame, loaded.name
    problems: list[Problem] = list(loaded.problems)
    present = [c for c in frame.columns if c != S.ROW]
    if kind is None:
        probe = _resolve(
            present, RANKING_ROLES, columns if columns and RANK in columns else None, []
        )
        kind = "rankings" if RANK in probe and SYSTEM_A not in (columns or {}) else "pairs"
        if kind == "rankings" and any(c.lower() in PAIR_ROLES[SYSTEM_A] for c in present):
            kind = "pairs"
    roles = PAIR_ROLES if kind == "pairs" else RANKING_ROLES
    if kind == "rankings" and (graded is not None or outcomes is not None):
        problems.append(Problem(None, None, "graded= and outcomes= only for pairwise data"))
    found = _resolve(present, roles, columns, problems)
    required = [r for r in _REQUIRED[kind] if not (r == S.RATER and rater is not None)]
    for role in required:
        if role not in found:
            names = ", ".join(roles[role])
            problems.append(
                Problem(None, None, f"a column for {role!r} (named one of: {names}; or columns=)")
            )
    if any(r not in found for r in required):
        raise RatingsError(name, problems, what="comparisons")
    out = frame.select(*(pl.col(col).alias(role) for role, col in found.items()), pl.col(S.ROW))
    if rater is not None and S.RATER not in found:
        out = out.with_columns(pl.lit(str(rater)).alias(S.RATER))
    if S.DIMENSION not in found:
        out = out.with_columns(pl.lit(dimension or S.DEFAULT_LEVEL).alias(S.DIMENSION))
    elif dimension is not None:
        problems.append(
            Problem(found[S.DIMENSION], None, "either a dimension column or dimension=, not both")
        )
    for role in (S.QUESTION, S.RATER_KIND, SHOWN_FIRST, COMPARISON):
        if role not in out.columns:
            out = out.with_columns(pl.lit(None, dtype=pl.String).alias(role))
    strip = [c for c in out.columns if c != S.ROW and out.schema[c] == pl.String]
    out = out.with_columns(pl.col(c).str.strip_chars() for c in strip)
    out = out.with_columns(
        pl.when(pl.col(c) == "").then(None).otherwise(pl.col(c)).alias(c)
        for c in (S.QUESTION, S.RATER_KIND, SHOWN_FIRST, COMPARISON)
    )
    out = out.with_columns(pl.col(S.RATER_KIND).str.to_lowercase())
    ids = [S.RATER, S.DIMENSION] + ([SYSTEM_A, SYSTEM_B] if kind == "pairs" else [S.SYSTEM])
    for role in ids:
        _empty(out, role, found.get(role, role), problems, f"a non-empty {role}")
    exclusions: list[Exclusion] = []
    if kind == "pairs":
        rows = _rows(out, (pl.col(SYSTEM_A) == pl.col(SYSTEM_B)) & pl.col(SYSTEM_A).is_not_null())
        if rows:
            problems.append(
                Problem(
                    found[SYSTEM_B],
                    None,
                    "a system other than system_a (a system "
                    "compared with itself carries no preference)",
                    rows,
                )
            )
        _empty(out, OUTCOME, found[OUTCOME], problems, "an outcome")
        codes = _outcomes(out, found[OUTCOME], graded, outcomes, problems)
        first = (
            _shown_first(out, found[SHOWN_FIRST], problems)
            if SHOWN_FIRST in found
            else pl.Series(SHOWN_FIRST, [None] * out.height, dtype=pl.String)
        )
        out = out.with_columns(codes, first)
        if COMPARISON in found:
            dup = out.filter(pl.col(COMPARISON).is_not_null() & pl.col(COMPARISON).is_duplicated())
            for value, rows_ in dup.group_by(COMPARISON).agg(pl.col(S.ROW)).iter_rows():
                problems.append(
                    Problem(found[COMPARISON], value, "a unique comparison id", tuple(rows_))
                )
        out = out.with_columns(
            pl.coalesce(pl.col(COMPARISON), pl.col(S.ROW).cast(pl.String)).alias(COMPARISON)
        )
        if problems:
            raise RatingsError(name, problems, what="comparisons")
        data = out.select(PAIR_COLUMNS)
        max_grade = graded or 1
    else:
        text = out[RANK].cast(pl.String)
        num = text.cast(pl.Float64, strict=False)
        bad_rank = out.filter((num.is_null() | (num <= 0)).fill_null(True))
        for value, rows_ in bad_rank.group_by(RANK).agg(pl.col(S.ROW)).iter_rows():
            problems.append(
                Problem(
                    found[RANK],
                    value,
                    "a positive rank (1 = best; equal ranks are ties)",
                    tuple(sorted(rows_)),
                )
            )
        out = out.with_columns(num.alias(RANK))
        key = [S.QUESTION, S.RATER, S.DIMENSION]
        if RANKING in found:  # an id of each ranking: one question, rater and dimension
            _empty(out, RANKING, found[RANKING], problems, "a ranking id")
            mixed = (
                out.filter(pl.col(RANKING).is_not_null())
                .group_by(RANKING)
                .agg(pl.struct(key).n_unique().alias("n"), pl.col(S.ROW))
                .filter(pl.col("n") > 1)
            )
            for value, _, rows_ in mixed.iter_rows():
                problems.append(
                    Problem(found[RANKING], value, "a ranking id used for one question, rater "
                            "and dimension only", tuple(sorted(rows_)))
                )  # fmt: skip
        else:
            out = out.with_columns(
                pl.concat_str([pl.col(c).fill_null("") for c in key], separator=S.UNIT_SEP).alias(
                    RANKING
                )
            )
        dup = out.filter(
            pl.struct(RANKING, S.SYSTEM).is_duplicated() & pl.col(S.SYSTEM).is_not_null()
        )
        for _, system, rows_ in dup.group_by(RANKING, S.SYSTEM).agg(pl.col(S.ROW)).iter_rows():
            problems.append(
                Problem(
                    found[S.SYSTEM],
                    system,
                    "each system once per ranking (question, rater and dimension)",
                    tuple(sorted(rows_)),
                )
            )
        if problems:
            raise RatingsError(name, problems, what="comparisons")
        sizes = out.group_by(RANKING).len()
        single = sizes.filter(pl.col("len") < 2)[RANKING]
        if single.len():
            n = int(out.filter(pl.col(RANKING).is_in(single.implode())).height)
            exclusions.append(
                Exclusion(
                    f"rankings of a single system compare nothing ({single.len()} rankings)", n
                )
            )
            out = out.filter(~pl.col(RANKING).is_in(single.implode()))
        data = out.select(RANKING_COLUMNS)
        max_grade = 1
    ignored = tuple(c for c in present if c not in found.values())
    prov = Provenance(
        source=name, exclusions=tuple(exclusions), steps=loaded.steps, ignored_columns=ignored
    )
    return Comparisons(data, kind=kind, max_grade=max_grade, provenance=prov)


__all__ = ["OUTCOME_WORDS", "PAIR_ROLES", "RANKING_ROLES", "read_comparisons"]
