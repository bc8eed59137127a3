"""Column roles of an input table: which column is the item, the rater, the rating, ...

:func:`resolve_columns` maps the roles of :mod:`raterstats.schema` to the columns of an
input, from the user's ``columns=`` and from the names (a role's own name, or an alias in
long format); every decision taken from an alias is kept as a
:class:`~raterstats.provenance.ColumnGuess` for the summary. In wide format a column not
named as a role is a rater, so an alias never takes a rater's column silently.
:func:`normalize_rater_kinds` stores ``rater_kind`` lower-case. Used by
:func:`raterstats.read_ratings`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

import polars as pl

from raterstats import schema as S
from raterstats.ingest_errors import Problem
from raterstats.provenance import ColumnGuess


def resolve_columns(
    present: Sequence[str],
    columns: Mapping[str, str] | None,
    *,
    need_rating: bool,
    problems: list[Problem],
    wide: bool = False,
    raters_given: bool = False,
    taken: Sequence[str] = (),
    guesses: list[ColumnGuess] | None = None,
) -> dict[str, str]:
    """Map roles to the columns of an input: the user's ``columns=`` first, then names.

    Long format: a role is found by its own name or by an alias (``worker``, ``model``);
    a role found through an alias is recorded in ``guesses``. Wide format (``wide``):
    ``rater`` / ``rating`` are never found by an alias, and without ``raters=``
    (``raters_given`` false) every role but ``item`` is found by its own name only: a
    column named like a role but not mapped by the user stays a rater column, recorded
    in ``guesses`` with ``as_rater=True``. Several columns for one role are one problem
    (never also "missing").

    Parameters
    ----------
    present : sequence of str
        The columns of the input.
    columns : mapping of str to str, optional
        The user's ``{role: column}``.
    need_rating : bool
        Whether ``rater`` and ``rating`` are required (long format).
    problems : list of Problem
        Where problems are appended.
    wide : bool
        Wide format (one column per rater).
    raters_given : bool
        Wide format: the user named the rater columns.
    taken : sequence of str
        Columns that get no role (wide format: the given raters and ``keep``).
    guesses : list of ColumnGuess, optional
        Where the decisions made from an alias are appended.

    Returns
    -------
    dict
        ``{role: column}`` of the roles found.

    Examples
    --------
    >>> from raterstats.roles import resolve_columns
    >>> problems, guesses = [], []
    >>> resolve_columns(["task", "rater", "label", "model"], None, need_rating=True,
    ...                 problems=problems, guesses=guesses)
    {'item': 'task', 'rater': 'rater', 'rating': 'label', 'system': 'model'}
    >>> [g.column for g in guesses]
    ['task', 'label', 'model']
    >>> guesses = []
    >>> resolve_columns(["item", "physician1", "model"], None, need_rating=False,
    ...                 problems=problems, wide=True, guesses=guesses)
    {'item': 'item'}
    >>> print(guesses[0])  # doctest: +NORMALIZE_WHITESPACE
    column 'model' read as a rater (wide format), although its name matches role 'system';
    map it with columns={'system': 'model'} if it is not a rater
    """
    aliases = S.alias_table()
    mapping: dict[str, str] = {}
    used: set[str] = set(taken)
    notes: list[ColumnGuess] = [] if guesses is None else guesses
    for key, user_col in (columns or {}).items():
        role = aliases.get(str(key).lower())
        if role is None:
            problems.append(Problem(str(key), None, f"a column role, one of {sorted(S.ROLES)}"))
            continue
        if user_col not in present:
            close = difflib.get_close_matches(str(user_col), list(present), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                Problem(
                    str(user_col),
                    None,
                    f"a column of the input for role {role!r} (unknown column; the input has "
                    f"{list(present)}{hint})",
                )
            )
            mapping[role] = ""  # known role, column missing: do not auto-detect it
            continue
        mapping[role] = user_col
        used.add(user_col)
    by_name = {c: S.role_of_column(c) for c in present}
    every_col_a_rater = wide and not raters_given
    for role in S.ROLES:
        found = [c for c in present if c not in used and (by_name[c] or ("",))[0] == role]
        canon = [c for c in found if by_name[c] == (role, True)]
        alias = [c for c in found if c not in canon]
        if role in mapping:  # the user chose; in wide format the other columns are raters
            if every_col_a_rater:
                notes.extend(ColumnGuess(c, role, as_rater=True) for c in found)
            continue
        if wide and (role in (S.RATER, S.RATING) or (every_col_a_rater and role != S.ITEM)):
            hits = canon
            if every_col_a_rater:
                notes.extend(ColumnGuess(c, role, as_rater=True) for c in alias)
        elif every_col_a_rater and canon:  # the item of a wide table: its own name first
            hits = canon
            notes.extend(ColumnGuess(c, role, as_rater=True) for c in alias)
        else:
            hits = canon + alias
        if len(hits) > 1:
            problems.append(Problem(None, None, _clash_message(role, hits)))
            mapping[role] = ""  # reported: not also "missing"
        elif hits:
            mapping[role] = hits[0]
            used.add(hits[0])
            if hits[0] in alias:
                notes.append(ColumnGuess(hits[0], role))
    required = [S.ITEM, S.RATER, S.RATING] if need_rating else [S.ITEM]
    for role in required:
        if role not in mapping:
            looked = [role, *S.ROLES[role].aliases]
            close = difflib.get_close_matches(role, [c.lower() for c in present], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                Problem(
                    None,
                    None,
                    f"a column for the required role {role!r} (none of {looked} is in "
                    f"{list(present)}{hint}; name it with columns={{{role!r}: ...}})",
                )
            )
    return {r: c for r, c in mapping.items() if c}


def _clash_message(role: str, hits: Sequence[str]) -> str:
    """What to do when several columns name one role (``rating`` and ``Rating``)."""
    names = ", ".join(repr(c) for c in hits)
    same = len({c.strip().lower() for c in hits}) == 1
    why = " (the same name in different case or spacing)" if same else ""
    return (
        f"one column for role {role!r}, but {len(hits)} columns name it: {names}{why}; "
        f"choose one with columns={{{role!r}: {hits[0]!r}}} (the others then have no role: "
        "listed as not used, or kept with keep=[...])"
    )


def normalize_rater_kinds(work: pl.DataFrame, steps: list[str]) -> pl.DataFrame:
    """The ``rater_kind`` column lower-case (``Human`` -> ``human``), saying so in ``steps``.

    Parameters
    ----------
    work : pl.DataFrame
        A frame with canonical column names, ids already stripped.
    steps : list of str
        The processing steps; one is appended when a kind was changed.

    Returns
    -------
    pl.DataFrame

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats.roles import normalize_rater_kinds
    >>> steps = []
    >>> normalize_rater_kinds(pl.DataFrame({"rater_kind": ["Human", "llm"]}), steps).rows()
    [('human',), ('llm',)]
    >>> steps
    ["rater_kind read lower-case: 'Human' -> 'human' (1 rating)"]
    """
    if S.RATER_KIND not in work.columns:
        return work
    col = pl.col(S.RATER_KIND)
    changed = (
        work.filter(col.is_not_null() & (col != col.str.to_lowercase()))
        .group_by(S.RATER_KIND)
        .agg(pl.len().alias("n"))
        .sort(S.RATER_KIND)
    )
    if changed.height:
        shown = ", ".join(
            f"{k!r} -> {S.normalize_rater_kind(k)!r} ({n} rating{'s' if n != 1 else ''})"
            for k, n in changed.iter_rows()
        )
        steps.append(f"rater_kind read lower-case: {shown}")
    return work.with_columns(col.str.to_lowercase())


__all__ = ["normalize_rater_kinds", "resolve_columns"]
