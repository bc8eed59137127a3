"""Sorting ratings into units and grouping units into rating patterns, in O(ratings).

:func:`raterstats.models.latent_class.data.prepare_latent_class` sorts the ratings by unit
(:func:`sort_order`, one integer key instead of a sort on strings) and groups the units
with the same dimension, gold label and multiset of (cell, category) ratings into patterns
(:func:`group_patterns`): each unit gets a 64-bit hash of its ratings, units with equal
hashes share a pattern, and the grouping is then checked exactly, rating by rating,
against each pattern's first unit. A hash collision (two different rating sets with the
same hash) fails the check and the grouping is redone exactly
(:func:`group_patterns_exact`, a polars group-by on the rating lists), so the patterns
are always exact. Patterns are numbered in the order of their first unit.
"""

from __future__ import annotations

import numpy as np
import polars as pl

_U64 = np.uint64


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser of every entry of ``x`` (cast to ``uint64``): a bijection
    of 64-bit integers that mixes every input bit into every output bit (wrapping
    arithmetic).

    Examples
    --------
    >>> h = splitmix64(np.arange(3))
    >>> h.dtype.name, len(set(h.tolist()))
    ('uint64', 3)
    """
    z = np.asarray(x).astype(_U64) + _U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    result: np.ndarray = z ^ (z >> _U64(31))
    return result


def sort_order(codes: list[np.ndarray], sizes: list[int]) -> np.ndarray:
    """The stable order that sorts rows by the integer columns ``codes`` (first column
    first; each in ``0 .. size - 1``): one ``argsort`` of a combined key when the product
    of the sizes fits in 62 bits, ``np.lexsort`` otherwise.

    Examples
    --------
    >>> sort_order([np.array([1, 0, 1]), np.array([0, 5, 2])], [2, 6]).tolist()
    [1, 0, 2]
    """
    n = codes[0].size if codes else 0
    if float(np.prod([max(s, 1) for s in sizes], dtype=float)) < 2.0**62:
        key = np.zeros(n, dtype=np.int64)
        for c, s in zip(codes, sizes, strict=True):
            key = key * max(s, 1) + c.astype(np.int64)
        result: np.ndarray = np.argsort(key, kind="stable")
        return result
    return np.lexsort(tuple(c.astype(np.int64) for c in reversed(codes)))


def unit_hashes(
    unit_start: np.ndarray, key: np.ndarray, unit_dim: np.ndarray, unit_gold: np.ndarray
) -> np.ndarray:
    """A 64-bit hash per unit of its dimension, gold label and multiset of rating keys
    (``key``: ratings sorted by unit, units at ``unit_start`` (``n_units + 1``), none
    empty).

    Examples
    --------
    >>> h = unit_hashes(np.array([0, 2, 4, 5]), np.array([3, 7, 3, 7, 3]),
    ...                 np.zeros(3, dtype=int), np.full(3, -1))
    >>> bool(h[0] == h[1]), bool(h[0] == h[2])
    (True, False)
    """
    n_units = unit_start.size - 1
    if n_units == 0:
        return np.zeros(0, dtype=_U64)
    h = np.add.reduceat(splitmix64(key), unit_start[:-1])
    for extra in (np.diff(unit_start), unit_dim, np.asarray(unit_gold) + 1):
        h = splitmix64(h ^ splitmix64(extra))
    return h


def patterns_from_hashes(h: np.ndarray) -> np.ndarray:
    """The group of every unit by equal hash, groups numbered by their first unit.

    Examples
    --------
    >>> patterns_from_hashes(np.array([9, 4, 9, 1], dtype=np.uint64)).tolist()
    [0, 1, 0, 2]
    """
    n = h.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    # one sort of the hashes; each group's first unit is the least index in its run, and
    # the groups are ranked by first unit with a running count (no second sort)
    perm = np.argsort(h)
    hs = h[perm]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    first = np.minimum.reduceat(perm, starts)
    is_first = np.zeros(n, dtype=bool)
    is_first[first] = True
    rank = (np.cumsum(is_first) - 1)[first]
    result = np.empty(n, dtype=np.int64)
    result[perm] = rank[np.cumsum(new) - 1]
    return result


def same_as_first_unit(
    pattern: np.ndarray,
    unit_start: np.ndarray,
    key: np.ndarray,
    unit_dim: np.ndarray,
    unit_gold: np.ndarray,
) -> bool:
    """Whether every unit has the same dimension, gold label and rating keys (in order)
    as the first unit of its pattern: the exact check of a grouping by hash.

    Examples
    --------
    >>> start, dims, gold = np.array([0, 2, 4]), np.zeros(2, dtype=int), np.full(2, -1)
    >>> same_as_first_unit(np.array([0, 0]), start, np.array([1, 2, 1, 2]), dims, gold)
    True
    >>> same_as_first_unit(np.array([0, 0]), start, np.array([1, 2, 1, 3]), dims, gold)
    False
    """
    n_units = pattern.size
    first = np.zeros(int(pattern.max()) + 1 if n_units else 0, dtype=np.int64)
    first[pattern[::-1]] = np.arange(n_units)[::-1]
    rep = first[pattern]
    length = np.diff(unit_start)
    if not (
        np.array_equal(unit_dim[rep], unit_dim)
        and np.array_equal(unit_gold[rep], unit_gold)
        and np.array_equal(length[rep], length)
    ):
        return False
    unit = np.repeat(np.arange(n_units), length)
    pos = np.arange(key.size) - unit_start[unit] + unit_start[rep][unit]
    return bool(np.array_equal(key[pos], key))


def group_patterns_exact(
    unit: np.ndarray, key: np.ndarray, unit_dim: np.ndarray, unit_gold: np.ndarray
) -> np.ndarray:
    """The pattern of every unit by a polars group-by on (dimension, gold, list of rating
    keys), patterns numbered by their first unit (``unit``: the unit of every rating,
    sorted).

    Examples
    --------
    >>> group_patterns_exact(np.array([0, 0, 1, 1, 2]), np.array([3, 7, 3, 7, 3]),
    ...                      np.zeros(3, dtype=int), np.full(3, -1)).tolist()
    [0, 0, 1]
    """
    pat = (
        pl.DataFrame({"u": unit, "k": key})
        .group_by("u", maintain_order=True)
        .agg(pl.col("k"))
        .sort("u")
        .with_columns(pl.Series("d", unit_dim), pl.Series("g", unit_gold))
    )
    groups = (
        pat.group_by("d", "g", "k", maintain_order=True)
        .agg(pl.col("u"))
        .with_row_index("p")
        .select("p", "u")
        .explode("u")
        .sort("u")
    )
    result: np.ndarray = groups.get_column("p").to_numpy().astype(np.int64)
    return result


def group_patterns(
    unit_start: np.ndarray, key: np.ndarray, unit_dim: np.ndarray, unit_gold: np.ndarray
) -> np.ndarray:
    """The rating pattern of every unit (same dimension, gold label and multiset of
    rating keys; ``key`` sorted within each unit), patterns numbered by their first unit:
    by hash (:func:`unit_hashes`), checked exactly (:func:`same_as_first_unit`), and by
    :func:`group_patterns_exact` if the check fails.

    Examples
    --------
    >>> group_patterns(np.array([0, 2, 4, 5]), np.array([3, 7, 3, 7, 3]),
    ...                np.zeros(3, dtype=int), np.full(3, -1)).tolist()
    [0, 0, 1]
    """
    pattern = patterns_from_hashes(unit_hashes(unit_start, key, unit_dim, unit_gold))
    if same_as_first_unit(pattern, unit_start, key, unit_dim, unit_gold):
        return pattern
    unit = np.repeat(np.arange(unit_start.size - 1), np.diff(unit_start))
    return group_patterns_exact(unit, key, unit_dim, unit_gold)


__all__ = [
    "group_patterns",
    "group_patterns_exact",
    "patterns_from_hashes",
    "same_as_first_unit",
    "sort_order",
    "splitmix64",
    "unit_hashes",
]
