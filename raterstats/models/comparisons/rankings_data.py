"""Rankings prepared for the Plackett-Luce model: index arrays in the layout its
likelihood reads (the NumPy reference, the numba kernels and the PyMC graph alike).

A ranking is one rater's ordering of the systems it lists on one question for one
dimension. Its entries (ranked systems) are stored contiguously, best first; entries with
equal ranks form a *tie group*, and the groups of a ranking are contiguous too, so the
*risk set* of a group (the systems still unplaced when it is chosen) is every entry from the
group's first to the ranking's last.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from raterstats import schema as S
from raterstats.comparisons import RANK, RANKING, Comparisons
from raterstats.models.comparisons.pairs_data import rater_pooling
from raterstats.ratings import Ratings

#: the tie-handling options of the Plackett-Luce likelihood
TIES = ("breslow", "efron")


class RankingsInputError(ValueError):
    """The data cannot be fitted by the Plackett-Luce model (the message lists every
    problem); :class:`~raterstats.models.base.ModelInputError` wraps it for a fit."""


@dataclass(frozen=True)
class RankingsData:
    """Rankings as index arrays (see the module docstring).

    Attributes
    ----------
    dimensions, systems, raters, rankings : tuple of str
        The user's ids (coordinates), ``rankings`` in the order of the arrays.
    rater_kind : np.ndarray
        Kind of each rater (``""`` where not recorded).
    pooled : np.ndarray
        bool per rater: its log-discrimination is partially pooled (human raters, or all
        raters when none is human); the others (LLM judges) are unpooled.
    rk_start : np.ndarray
        ``(N + 1,)``: the entries of ranking ``r`` are ``rk_start[r]:rk_start[r + 1]``.
    rk_gstart : np.ndarray
        ``(N + 1,)``: the tie groups of ranking ``r`` are ``rk_gstart[r]:rk_gstart[r + 1]``.
    g_start : np.ndarray
        ``(G + 1,)``: the entries of tie group ``g`` are ``g_start[g]:g_start[g + 1]``.
    rk_dim, rk_rater : np.ndarray
        ``(N,)``: dimension and rater index of each ranking.
    rk_question : np.ndarray
        ``(N,)``: question id of each ranking (``""`` where not recorded).
    entry_system, entry_ranking : np.ndarray
        ``(E,)``: system index and ranking index of each entry.
    entry_rank : np.ndarray
        ``(E,)``: the rank given (1 = best; equal ranks are ties).
    entry_row : np.ndarray
        ``(E,)``: source row of each entry.
    efron : bool
        Ties by Efron's approximation (otherwise Breslow's).
    """

    dimensions: tuple[str, ...]
    systems: tuple[str, ...]
    raters: tuple[str, ...]
    rankings: tuple[str, ...]
    rater_kind: np.ndarray
    pooled: np.ndarray
    rk_start: np.ndarray
    rk_gstart: np.ndarray
    g_start: np.ndarray
    rk_dim: np.ndarray
    rk_rater: np.ndarray
    rk_question: np.ndarray
    entry_system: np.ndarray
    entry_ranking: np.ndarray
    entry_rank: np.ndarray
    entry_row: np.ndarray
    efron: bool

    @property
    def n_rankings(self) -> int:
        """Number of rankings ``N``."""
        return len(self.rankings)

    @property
    def n_entries(self) -> int:
        """Number of ranked systems over all rankings ``E``."""
        return int(self.entry_system.size)

    @property
    def n_groups(self) -> int:
        """Number of tie groups ``G``."""
        return int(self.g_start.size - 1)

    @property
    def pooled_raters(self) -> tuple[str, ...]:
        """Raters whose log-discrimination is partially pooled, in rater order."""
        return tuple(r for r, p in zip(self.raters, self.pooled, strict=True) if p)

    @property
    def judges(self) -> tuple[str, ...]:
        """Raters with unpooled log-discrimination (LLM judges), in rater order."""
        return tuple(r for r, p in zip(self.raters, self.pooled, strict=True) if not p)

    @property
    def group_size(self) -> np.ndarray:
        """``(G,)`` number of systems tied in each group (1 where no tie)."""
        return np.diff(self.g_start)

    def coords(self) -> dict[str, list[str]]:
        """Coordinates of the model's variables (the user's ids; ``system_free`` and the
        rater splits name the free coordinates)."""
        out = {
            S.DIMENSION: list(self.dimensions),
            S.SYSTEM: list(self.systems),
            "system_free": [str(k) for k in range(len(self.systems) - 1)],
            S.RATER: list(self.raters),
            "pooled_rater": list(self.pooled_raters),
            "pooled_rater_free": [str(k) for k in range(len(self.pooled_raters) - 1)],
        }
        if self.judges:
            out["judge"] = list(self.judges)
        return out


def prepare_rankings(comparisons: object, *, ties: str = "breslow") -> RankingsData:
    """Check comparative judgments and turn rankings into :class:`RankingsData`.

    Parameters
    ----------
    comparisons : Comparisons
        Rankings (``kind="rankings"``).
    ties : {"breslow", "efron"}
        How tied systems enter the likelihood.

    Returns
    -------
    RankingsData

    Raises
    ------
    RankingsInputError
        For anything other than rankings (pairs point to ``BradleyTerry``), or rankings
        whose question, rater or dimension is not unique.

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(kind="rankings", n_systems=4, n_raters=3,
    ...                          n_comparisons=5, ranking_size=3, random_seed=1).comparisons
    >>> d = prepare_rankings(c)
    >>> d.n_rankings, d.n_entries, d.n_groups, bool(d.pooled.all())
    (5, 15, 15, True)
    """
    if ties not in TIES:
        raise RankingsInputError(f"ties must be one of {TIES}, not {ties!r}")
    if isinstance(comparisons, Ratings):
        raise RankingsInputError(
            "PlackettLuce fits per-question rankings (Comparisons of kind 'rankings', "
            "read with raterstats.read_comparisons), not absolute ratings"
        )
    if not isinstance(comparisons, Comparisons):
        raise RankingsInputError(
            f"PlackettLuce fits Comparisons of kind 'rankings', not {type(comparisons).__name__}"
        )
    if comparisons.kind != "rankings":
        raise RankingsInputError(
            "PlackettLuce fits rankings, and these comparisons are pairwise judgments; fit "
            "pairs with raterstats.BradleyTerry (or, for rankings broken into pairs, "
            "Comparisons.to_pairs() and BradleyTerry)"
        )
    frame = comparisons.data
    if frame.height == 0:
        raise RankingsInputError("PlackettLuce: the rankings are empty")
    problems = []
    per = frame.group_by(RANKING).agg(
        pl.col(S.RATER).n_unique().alias("n_rater"),
        pl.col(S.DIMENSION).n_unique().alias("n_dim"),
        pl.col(S.QUESTION).n_unique().alias("n_q"),
    )
    for col, what in (("n_rater", "rater"), ("n_dim", "dimension"), ("n_q", "question")):
        bad = per.filter(pl.col(col) > 1)[RANKING].to_list()
        if bad:
            shown = ", ".join(repr(b) for b in sorted(bad)[:5])
            problems.append(
                f"{len(bad)} ranking(s) with more than one {what} ({shown}"
                f"{', ...' if len(bad) > 5 else ''}); a ranking is one rater's ordering on "
                "one question for one dimension"
            )
    if problems:
        raise RankingsInputError("PlackettLuce: " + "; ".join(problems))
    dims = tuple(comparisons.dimensions)
    systems = tuple(comparisons.systems)
    raters = tuple(comparisons.raters)
    if len(systems) < 2:
        raise RankingsInputError("PlackettLuce: need at least two systems")
    kind_names, pooled = rater_pooling(comparisons)
    kind = np.array(kind_names, dtype=object).astype(str)
    sys_pos = {s: k for k, s in enumerate(systems)}
    rat_pos = {r: k for k, r in enumerate(raters)}
    dim_pos = {d: k for k, d in enumerate(dims)}
    f = frame.sort([RANKING, RANK, S.SYSTEM])
    rk_ids = f[RANKING].to_numpy().astype(str)
    new_rk = np.r_[True, rk_ids[1:] != rk_ids[:-1]]
    starts = np.flatnonzero(new_rk)
    rk_start = np.r_[starts, rk_ids.size].astype(np.int64)
    rank = f[RANK].to_numpy().astype(float)
    new_g = new_rk | np.r_[True, rank[1:] != rank[:-1]]
    g_first = np.flatnonzero(new_g)
    g_start = np.r_[g_first, rank.size].astype(np.int64)
    g_of_entry = np.cumsum(new_g) - 1
    rk_gstart = np.r_[g_of_entry[starts], g_first.size].astype(np.int64)
    entry_ranking = (np.cumsum(new_rk) - 1).astype(np.int64)
    first = f[starts]
    return RankingsData(
        dimensions=dims,
        systems=systems,
        raters=raters,
        rankings=tuple(rk_ids[starts].tolist()),
        rater_kind=kind,
        pooled=pooled,
        rk_start=rk_start,
        rk_gstart=rk_gstart,
        g_start=g_start,
        rk_dim=np.array([dim_pos[d] for d in first[S.DIMENSION].to_list()], dtype=np.int64),
        rk_rater=np.array([rat_pos[r] for r in first[S.RATER].to_list()], dtype=np.int64),
        rk_question=first[S.QUESTION].fill_null("").to_numpy().astype(str),
        entry_system=np.array([sys_pos[s] for s in f[S.SYSTEM].to_list()], dtype=np.int64),
        entry_ranking=entry_ranking,
        entry_rank=rank,
        entry_row=f[S.ROW].to_numpy().astype(np.int64),
        efron=ties == "efron",
    )


def with_ranks(data: RankingsData, ranks: np.ndarray) -> RankingsData:
    """The same rankings with new ranks ``(E,)`` per entry (e.g. replicated rankings),
    entries re-sorted best first within each ranking and tie groups rebuilt.

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(kind="rankings", n_systems=4, n_raters=2,
    ...                          n_comparisons=3, ranking_size=3, random_seed=1).comparisons
    >>> d = prepare_rankings(c)
    >>> with_ranks(d, np.ones(d.n_entries)).n_groups  # every ranking one tie
    3
    """
    ranks = np.asarray(ranks, dtype=float)
    order = np.lexsort((ranks, data.entry_ranking))
    rank = ranks[order]
    rk = data.entry_ranking[order]
    new_rk = np.r_[True, rk[1:] != rk[:-1]]
    new_g = new_rk | np.r_[True, rank[1:] != rank[:-1]]
    g_first = np.flatnonzero(new_g)
    g_of_entry = np.cumsum(new_g) - 1
    starts = data.rk_start[:-1]
    return RankingsData(
        dimensions=data.dimensions,
        systems=data.systems,
        raters=data.raters,
        rankings=data.rankings,
        rater_kind=data.rater_kind,
        pooled=data.pooled,
        rk_start=data.rk_start,
        rk_gstart=np.r_[g_of_entry[starts], g_first.size].astype(np.int64),
        g_start=np.r_[g_first, rank.size].astype(np.int64),
        rk_dim=data.rk_dim,
        rk_rater=data.rk_rater,
        rk_question=data.rk_question,
        entry_system=data.entry_system[order],
        entry_ranking=rk,
        entry_rank=rank,
        entry_row=data.entry_row[order],
        efron=data.efron,
    )


__all__ = ["TIES", "RankingsData", "RankingsInputError", "prepare_rankings", "with_ranks"]
