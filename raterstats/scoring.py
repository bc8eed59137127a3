"""Scores of systems from item-level scores: category labels to numbers through a score
map, the item -> system (and question) table of a set of ratings, and system means with
an optional bootstrap over cases.

Shared by :func:`raterstats.rank_systems` on raw ratings and the models' own
``system_score_draws`` (latent-class fits score their label posteriors here), so it sits
below both: it imports neither the models nor the rankings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
            return np.asarray([float(lb) for lb in labels])
        except ValueError:
            raise ValueError(
                f"{what}: dimension {dim!r} has non-numeric categories {list(labels)}; pass "
                "score_map= (a ScoreMap, its name, or {dimension: {label: score}})"
            ) from None
    lookup = {str(k): float(v) for k, v in sm.items()}
    missing = [lb for lb in labels if str(lb) not in lookup]
    if missing:
        raise ValueError(
            f"{what}: score_map gives no score to {missing} on dimension {dim!r} (pass "
            "{label: score} for every label, or {dimension: score map})"
        )
    return np.asarray([lookup[str(lb)] for lb in labels])


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


def system_means(
    item_scores: np.ndarray,
    table: pl.DataFrame,
    items: Sequence[str],
    *,
    n_boot: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[str]]:
    """System means of item scores ``(S, n_items)`` (NaN = not scored).

    Without ``n_boot``: one system mean per row. With ``n_boot``: ``n_boot`` replicates,
    replicate ``r`` using row ``r % S`` and its own bootstrap of the cases (questions;
    items when there is no question column). Returns ``(replicates, n_systems)``."""
    pos = {it: k for k, it in enumerate(items)}
    t = table.filter(pl.col(S.ITEM).is_in(list(items)))
    idx = np.asarray([pos[i] for i in t[S.ITEM].to_list()])
    systems = sorted(t[S.SYSTEM].unique().to_list())
    sys_idx = np.asarray([systems.index(s) for s in t[S.SYSTEM].to_list()])
    cases = sorted(t[S.QUESTION].unique().to_list())
    case_idx = np.asarray([cases.index(c) for c in t[S.QUESTION].to_list()])
    x = item_scores[:, idx]
    ok = ~np.isnan(x)
    x0 = np.where(ok, x, 0.0)
    onehot = (sys_idx[:, None] == np.arange(len(systems))[None, :]).astype(float)
    if n_boot:
        rows = np.arange(n_boot) % x.shape[0]
        counts = rng.multinomial(len(cases), np.full(len(cases), 1.0 / len(cases)), size=n_boot)
        w = counts[:, case_idx].astype(float)
        num = (x0[rows] * w) @ onehot
        den = (ok[rows] * w) @ onehot
    else:
        num = x0 @ onehot
        den = ok.astype(float) @ onehot
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den, systems


def as_draws(arr: np.ndarray, systems: list[str], extra: dict[str, list[Any]]) -> xr.DataArray:
    """(n, *extra, system) -> DataArray with chain = 1."""
    dims = ("chain", "draw", *extra, "system")
    return xr.DataArray(
        arr[None],
        dims=dims,
        coords={"draw": np.arange(arr.shape[0]), **extra, "system": systems},
    )


__all__ = ["ScoreMapArg", "as_draws", "item_system_table", "score_vector", "system_means"]
