"""Scores of systems from item-level scores: category labels to numbers through a score
map, the item -> system (and question) table of a set of ratings, and system means with
an optional bootstrap over cases.

Shared by :func:`raterstats.rank_systems` on raw ratings and the models' own
``system_score_draws`` (latent-class fits score their label posteriors here), so it sits
below both: it imports neither the models nor the rankings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.ratings import Ratings
from raterstats.scales import SCORE_MAPS, ScoreMap

#: a score map as the ranking functions accept it: a ScoreMap, its name,
#: ``{dimension: ScoreMap | name | {label: score}}`` or one ``{label: score}``
ScoreMapArg = ScoreMap | str | Mapping[str, ScoreMap | str | Mapping[Any, float]] | None


def score_vector(dim: str, labels: Sequence[str], score_map: ScoreMapArg, what: str) -> np.ndarray:
    """Score of each category label of one dimension."""
    sm: Any = score_map
    if isinstance(sm, Mapping) and not isinstance(sm, ScoreMap) and dim in sm:
        sm = sm[dim]  # {dimension: score map}; otherwise one {label: score} for all
    if isinstance(sm, str):
        if sm not in SCORE_MAPS:
            raise ValueError(f"{what}: unknown score map {sm!r}; known: {sorted(SCORE_MAPS)}")
        sm = SCORE_MAPS[sm]
    if isinstance(sm, ScoreMap):
        sm = sm.mapping
    if sm is None:
        try:
            out = np.asarray([float(lb) for lb in labels])
        except ValueError:
            raise ValueError(
                f"{what}: dimension {dim!r} has non-numeric categories {list(labels)}; pass "
                "score_map= (a ScoreMap, its name, or {dimension: {label: score}})"
            ) from None
        return _finite_scores(dim, labels, out, what)
    try:
        lookup = {str(k): float(v) for k, v in sm.items()}
    except (TypeError, ValueError):
        raise ValueError(
            f"{what}: score_map must give a number to each label of dimension {dim!r}, got "
            f"{dict(sm)!r}"
        ) from None
    missing = [lb for lb in labels if str(lb) not in lookup]
    if missing:
        raise ValueError(
            f"{what}: score_map gives no score to {missing} on dimension {dim!r} (pass "
            "{label: score} for every label, or {dimension: score map})"
        )
    return _finite_scores(dim, labels, np.asarray([lookup[str(lb)] for lb in labels]), what)


def _finite_scores(dim: str, labels: Sequence[str], scores: np.ndarray, what: str) -> np.ndarray:
    """``scores``, or ValueError naming the labels whose score is NaN or infinite (a system
    score built from them would be undefined, and would be ranked as if it were a number)."""
    bad = [f"{lb!r} -> {s}" for lb, s in zip(labels, scores.tolist(), strict=True)]
    bad = [b for b, ok in zip(bad, np.isfinite(scores), strict=True) if not ok]
    if bad:
        raise ValueError(
            f"{what}: the scores of labels on dimension {dim!r} must be finite numbers; got "
            f"{', '.join(bad)}"
        )
    return scores


def item_system_table(ratings: Ratings, what: str) -> pl.DataFrame:
    """item -> system (and case = question when present), one row per item."""
    d = ratings.data
    if S.SYSTEM not in d.columns or d[S.SYSTEM].null_count():
        raise ValueError(f"{what}: the ratings need a 'system' column without missing values")
    cols = [S.ITEM, S.SYSTEM] + ([S.QUESTION] if S.QUESTION in d.columns else [])
    t = d.select(cols).unique().sort(S.ITEM)
    if t[S.ITEM].n_unique() != t.height:
        raise ValueError(f"{what}: system / question must be constant within an item")
    if S.QUESTION not in t.columns or t[S.QUESTION].null_count():
        t = t.with_columns(pl.col(S.ITEM).alias(S.QUESTION))
    return t


#: :func:`system_means` without replicates: one system mean per row of item scores
NO_BOOTSTRAP = "none"
#: bootstrap of cases within each system (no question holds items of two systems)
STRATIFIED = "stratified by system"
#: bootstrap of the questions that several systems answer (the paired design)
PAIRED = "questions (paired)"

# candidate replicates drawn at once (x cases) when a paired replicate is redrawn
_REDRAW_CELLS = 1_000_000
_REDRAW_ROUNDS = 20


class SystemMeans(NamedTuple):
    """What :func:`system_means` returns.

    Attributes
    ----------
    scores : np.ndarray
        ``(replicates, n_systems)`` system means, never NaN.
    systems : list of str
        The systems, sorted.
    bootstrap : str
        The scheme: :data:`NO_BOOTSTRAP`, :data:`STRATIFIED` or :data:`PAIRED`.
    redrawn : int
        Paired replicates redrawn because a system had no item in them.

    Examples
    --------
    >>> SystemMeans(np.zeros((1, 2)), ["a", "b"], NO_BOOTSTRAP, 0).bootstrap
    'none'
    """

    scores: np.ndarray
    systems: list[str]
    bootstrap: str
    redrawn: int


def bootstrap_scheme(table: pl.DataFrame) -> str:
    """The case bootstrap that suits an item -> system / question table: :data:`PAIRED`
    when some question holds items of two or more systems (systems answer the same
    questions, so their scores are paired through the questions), else :data:`STRATIFIED`.

    Examples
    --------
    >>> t = pl.DataFrame({"item": ["1", "2"], "system": ["a", "b"], "question": ["q", "q"]})
    >>> bootstrap_scheme(t)
    'questions (paired)'
    >>> bootstrap_scheme(t.with_columns(question=pl.col("item")))
    'stratified by system'
    """
    shared = table.group_by(S.QUESTION).agg(pl.col(S.SYSTEM).n_unique().alias("n"))
    return PAIRED if (shared["n"] > 1).any() else STRATIFIED


def describe_bootstrap(schemes: Mapping[str, str]) -> str:
    """One ``attrs["bootstrap"]`` text for the schemes of several dimensions: the scheme
    when they agree, else ``"dimension: scheme; ..."``.

    Examples
    --------
    >>> describe_bootstrap({"x": STRATIFIED, "y": STRATIFIED})
    'stratified by system'
    >>> describe_bootstrap({"x": STRATIFIED, "y": PAIRED})
    'x: stratified by system; y: questions (paired)'
    """
    values = set(schemes.values())
    if len(values) == 1:
        return values.pop()
    return "; ".join(f"{k}: {v}" for k, v in schemes.items())


def _has_every_system(counts: np.ndarray, case_sys: np.ndarray) -> np.ndarray:
    """Whether each replicate (rows of case ``counts``) draws a case of every system;
    ``case_sys`` is (cases, systems), true where the case holds an item of the system."""
    return (((counts > 0).astype(np.float32) @ case_sys.astype(np.float32)) > 0).all(axis=-1)


def _linked_groups(case_sys: np.ndarray) -> np.ndarray:
    """A group label per question (row of ``case_sys``, questions x systems): questions are
    in one group when a chain of systems that answer them links them."""
    parent = list(range(case_sys.shape[0]))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for col in case_sys.T:
        qs = np.flatnonzero(col)
        for q in qs[1:]:
            parent[root(int(q))] = root(int(qs[0]))
    return np.asarray([root(i) for i in range(len(parent))])


def _paired_counts(
    case_sys: np.ndarray, n_boot: int, rng: np.random.Generator, systems: list[str], what: str
) -> tuple[np.ndarray, np.ndarray]:
    """Counts ``(n_boot, questions)`` of a bootstrap of the shared questions, conditioned on
    every system of ``case_sys`` (questions x the systems that answer no other question)
    keeping one: a replicate that leaves such a system out is redrawn (the first valid of
    independent candidates, so the kept replicates follow the conditional distribution
    exactly). Returns the counts and which replicates were redrawn."""
    n = case_sys.shape[0]
    p = np.full(n, 1.0 / n)
    counts = rng.multinomial(n, p, size=n_boot)
    bad = ~_has_every_system(counts, case_sys)
    redrawn = bad.copy()
    batch = 4
    for _ in range(_REDRAW_ROUNDS):
        todo = np.flatnonzero(bad)
        if not todo.size:
            break
        k = max(1, min(batch, _REDRAW_CELLS // (todo.size * n)))
        # n draws from n questions, as counts: one bincount over all candidates at once
        pick = rng.integers(0, n, size=(todo.size * k, n)) + n * np.arange(todo.size * k)[:, None]
        cand = np.bincount(pick.ravel(), minlength=todo.size * k * n).reshape(todo.size, k, n)
        good = _has_every_system(cand, case_sys)
        hit = good.any(axis=1)
        counts[todo[hit]] = cand[hit, good[hit].argmax(axis=1)]
        bad[todo[hit]] = False
        batch *= 4
    if bad.any():
        few = sorted(zip(case_sys.sum(axis=0).tolist(), systems, strict=True))[:5]
        raise ValueError(
            f"{what}: a paired bootstrap of the {n} shared questions almost never keeps an "
            "item of every system (those answering the fewest: "
            f"{', '.join(f'{s} ({c})' for c, s in few)}); rank those systems separately or "
            "filter them out"
        )
    return counts, redrawn


def system_means(
    item_scores: np.ndarray,
    table: pl.DataFrame,
    items: Sequence[str],
    *,
    n_boot: int,
    rng: np.random.Generator,
    what: str = "rank_systems",
) -> SystemMeans:
    """System means of item scores ``(S, n_items)`` (NaN = not scored), with an optional
    case bootstrap that keeps data of every system in every replicate.

    Without ``n_boot``: one system mean per row. With ``n_boot``: ``n_boot`` replicates,
    replicate ``r`` using row ``r % S`` and its own bootstrap of the cases (questions;
    items when there is no question column), chosen by :func:`bootstrap_scheme` on the
    scored items:

    - :data:`STRATIFIED` (no question holds items of two systems: the systems' cases are
      independent): each system's cases are resampled within the system, as many as it
      has, so every system keeps its number of cases;
    - :data:`PAIRED` (systems answer the same questions): the shared questions (those
      with items of two or more systems) are resampled together and every system keeps
      its answers to the drawn questions, which keeps the pairing that the differences
      between systems rely on (shared questions that no chain of systems links, as in
      separate sub-studies, are resampled group by group, each group keeping its size);
      a question that only one system answers is resampled within that system, as in
      the stratified scheme. A replicate in which a system that answers shared questions
      only gets none of them is redrawn (the bootstrap is conditioned on every system
      keeping an item; ``redrawn`` counts them; ValueError when that almost never
      happens).

    A system with a single case keeps the same mean in every replicate: the bootstrap
    cannot see its uncertainty (:func:`raterstats.ranking.summarize_ranking` reports such
    constant scores). Raises ``ValueError`` naming the systems that have no scored item,
    and when an item is scored in some rows and not in others.

    Examples
    --------
    >>> t = pl.DataFrame({"item": ["1", "2", "3"], "system": ["a", "a", "b"]})
    >>> t = t.with_columns(question=pl.col("item"))
    >>> res = system_means(np.array([[1.0, 3.0, 5.0]]), t, ["1", "2", "3"], n_boot=4,
    ...                    rng=np.random.default_rng(0))
    >>> res.bootstrap, res.scores[:, 1].tolist()
    ('stratified by system', [5.0, 5.0, 5.0, 5.0])
    """
    pos = {it: k for k, it in enumerate(items)}
    t = table.filter(pl.col(S.ITEM).is_in(list(items)))
    systems = sorted(t[S.SYSTEM].unique().to_list())
    cols = np.asarray([pos[i] for i in t[S.ITEM].to_list()], dtype=np.int64)
    x = np.asarray(item_scores, dtype=float)[:, cols]
    nan = np.isnan(x)
    partial = nan.any(axis=0) & ~nan.all(axis=0)
    if partial.any():
        some = [str(i) for i in t[S.ITEM].to_numpy()[partial][:5]]
        raise ValueError(f"{what}: items {some} are scored in some draws and not in others")
    scored = ~nan[0] if x.shape[0] else np.zeros(x.shape[1], dtype=bool)
    lost = sorted(set(systems) - set(t.filter(pl.Series(scored))[S.SYSTEM].to_list()))
    if lost:
        raise ValueError(
            f"{what}: systems {lost} have no scored item (no rating there); their score is "
            "undefined: filter them out or rate them"
        )
    t, x = t.filter(pl.Series(scored)), x[:, scored]
    sys_at = {s: k for k, s in enumerate(systems)}
    sys_idx = np.asarray([sys_at[s] for s in t[S.SYSTEM].to_list()])
    onehot = (sys_idx[:, None] == np.arange(len(systems))[None, :]).astype(float)
    if not n_boot:
        return SystemMeans(x @ onehot / onehot.sum(axis=0), systems, NO_BOOTSTRAP, 0)
    scheme = bootstrap_scheme(t)
    keys = t[S.QUESTION].to_list()
    at = {c: k for k, c in enumerate(sorted(set(keys)))}
    case_idx = np.asarray([at[c] for c in keys])
    case_sys = np.zeros((len(at), len(systems)), dtype=bool)
    case_sys[case_idx, sys_idx] = True
    shared = case_sys.sum(axis=1) > 1
    counts = np.zeros((n_boot, len(at)), dtype=np.int64)
    for k in range(len(systems)):  # questions of one system: resampled within the system
        own = np.flatnonzero(case_sys[:, k] & ~shared)
        if own.size:
            counts[:, own] = rng.multinomial(own.size, np.full(own.size, 1.0 / own.size), n_boot)
    redrawn = np.zeros(n_boot, dtype=bool)
    needy = ~(case_sys & ~shared[:, None]).any(axis=0)  # systems with shared questions only
    shared_at = np.flatnonzero(shared)
    groups = _linked_groups(case_sys[shared_at])
    for g in np.unique(groups):  # groups of shared questions that systems link
        qs = shared_at[groups == g]
        keep = case_sys[qs].any(axis=0) & needy
        names = [s for s, n in zip(systems, keep, strict=True) if n]
        counts[:, qs], again = _paired_counts(case_sys[qs][:, keep], n_boot, rng, names, what)
        redrawn |= again
    w = counts[:, case_idx].astype(float)
    rows = np.arange(n_boot) % x.shape[0]
    means = (x[rows] * w) @ onehot / (w @ onehot)
    return SystemMeans(means, systems, scheme, int(redrawn.sum()))


def as_draws(arr: np.ndarray, systems: list[str], extra: dict[str, list[Any]]) -> xr.DataArray:
    """(n, *extra, system) -> DataArray with chain = 1."""
    dims = ("chain", "draw", *extra, "system")
    return xr.DataArray(
        arr[None],
        dims=dims,
        coords={"draw": np.arange(arr.shape[0]), **extra, "system": systems},
    )


__all__ = [
    "NO_BOOTSTRAP",
    "PAIRED",
    "STRATIFIED",
    "ScoreMapArg",
    "SystemMeans",
    "as_draws",
    "bootstrap_scheme",
    "describe_bootstrap",
    "item_system_table",
    "score_vector",
    "system_means",
]
