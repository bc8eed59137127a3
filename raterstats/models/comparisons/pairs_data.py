"""Pairwise judgments prepared for the Bradley-Terry-Davidson model: index arrays, the
position sign, the outcome family and the user's ids.

:func:`prepare_pairs` checks a :class:`~raterstats.Comparisons` table of pairs (listing
every problem at once) and returns :class:`PairsData`, which
:class:`~raterstats.models.comparisons.BradleyTerry` builds its PyMC model, its compiled
density and its stored groups from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from raterstats import schema as S
from raterstats.comparisons import (
    COMPARISON,
    OUTCOME,
    SHOWN_FIRST,
    SYSTEM_A,
    SYSTEM_B,
    Comparisons,
    connected_components,
)
from raterstats.formatting import visible
from raterstats.models.base import ModelInputError
from raterstats.ratings import Ratings

#: outcome families: a / b (``binary``), a / b / tie (``davidson``), graded ``-K..K`` with
#: cut-points symmetric about 0 (``symmetric``) or free (``free``); the integer codes are
#: the compiled density's
OUTCOME_MODES: dict[str, int] = {"binary": 0, "davidson": 1, "symmetric": 2, "free": 3}

Mode = Literal["binary", "davidson", "symmetric", "free"]


@dataclass(frozen=True)
class PairsData:
    """Pairwise judgments as the Bradley-Terry model reads them.

    Attributes
    ----------
    frame : pl.DataFrame
        The canonical pairs frame (one row per judgment, in the order of the arrays).
    mode : {"binary", "davidson", "symmetric", "free"}
        Outcome family.
    max_grade : int
        ``K`` of the outcome scale ``-K..K``.
    obs_dim, obs_a, obs_b, obs_rater : np.ndarray
        Per judgment: indices of dimension, ``system_a``, ``system_b`` and rater into
        ``dimensions``, ``systems`` and ``raters``.
    obs_s : np.ndarray
        Per judgment: ``+1`` when ``system_a`` was shown first, ``-1`` when ``system_b``
        was, ``0`` when not recorded.
    y : np.ndarray
        Per judgment: the outcome ``-K..K`` from the side of ``system_a``.
    dimensions, systems, raters : tuple of str
        The user's ids (coordinates).
    rater_kind : tuple of str
        Per rater: the recorded kind (``""`` when not recorded).
    pooled : np.ndarray
        Per rater: whether the rater belongs to the partially pooled population (the human
        raters; every rater when none is human); the others are LLM judges, unpooled.
    """

    frame: pl.DataFrame
    mode: Mode
    max_grade: int
    obs_dim: np.ndarray
    obs_a: np.ndarray
    obs_b: np.ndarray
    obs_rater: np.ndarray
    obs_s: np.ndarray
    y: np.ndarray
    dimensions: tuple[str, ...]
    systems: tuple[str, ...]
    raters: tuple[str, ...]
    rater_kind: tuple[str, ...]
    pooled: np.ndarray

    @property
    def n_obs(self) -> int:
        """Number of judgments."""
        return int(self.y.size)

    @property
    def pooled_raters(self) -> tuple[str, ...]:
        """Ids of the pooled raters."""
        return tuple(r for r, p in zip(self.raters, self.pooled, strict=True) if p)

    @property
    def judges(self) -> tuple[str, ...]:
        """Ids of the unpooled raters (LLM judges)."""
        return tuple(r for r, p in zip(self.raters, self.pooled, strict=True) if not p)

    @property
    def n_cut(self) -> int:
        """Number of cut-points (``2K`` for graded outcomes, else 0)."""
        return 2 * self.max_grade if self.mode in ("symmetric", "free") else 0

    def coords(self) -> dict[str, list[Any]]:
        """Coordinates of the model's variables (the user's ids)."""
        c: dict[str, list[Any]] = {
            S.DIMENSION: list(self.dimensions),
            S.SYSTEM: list(self.systems),
            S.RATER: list(self.raters),
            "pooled_rater": list(self.pooled_raters),
            "pooled_rater_free": [str(k) for k in range(len(self.pooled_raters) - 1)],
            "judge": list(self.judges),
            "comparison": list(range(self.n_obs)),
        }
        if self.n_cut:
            c["cut"] = list(range(1, self.n_cut + 1))
            c["half_cut"] = list(range(1, self.max_grade + 1))
        return c


def rater_pooling(comparisons: Comparisons) -> tuple[tuple[str, ...], np.ndarray]:
    """Each rater's kind (``""`` when not recorded) and whether its discrimination (and
    position bias) is partially pooled, in the order of ``comparisons.raters``: human raters
    and raters of unrecorded kind form the pooled population; every other kind (``"llm"``,
    ``"crowd"``, ...) is an automatic judge with its own unpooled parameters (as in
    :data:`raterstats.schema.HUMAN`). When no rater is pooled, all are.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_comparisons
    >>> c = read_comparisons(pl.DataFrame({"system_a": ["x"] * 3, "system_b": ["y"] * 3,
    ...     "rater": ["h", "j", "k"], "rater_kind": ["human", "llm", ""],
    ...     "outcome": ["a", "b", "a"]}))
    >>> rater_pooling(c)
    (('human', 'llm', ''), array([ True, False,  True]))
    """
    kinds_map = comparisons.rater_kinds
    kinds = tuple(str(kinds_map.get(r, "")) for r in comparisons.raters)
    pooled = np.isin(np.array(kinds, dtype=object).astype(str), [S.HUMAN, ""])
    if not pooled.any():
        pooled[:] = True
    return kinds, pooled


def prepare_pairs(
    comparisons: Any, *, ties: str, cutpoints: str, model: str = "BradleyTerry"
) -> PairsData:
    """Check pairwise comparisons and index them for the Bradley-Terry model.

    Parameters
    ----------
    comparisons : Comparisons
        Pairs (``kind="pairs"``).
    ties : {"auto", "davidson", "none"}
        How a / b / tie outcomes (``max_grade=1``) are modelled: ``"auto"`` uses Davidson
        ties when the data hold a tie and the binary model otherwise; ``"none"`` refuses
        data with ties. Graded outcomes model the middle grade by their cut-points, so
        ``ties`` must be ``"auto"`` for them.
    cutpoints : {"symmetric", "free"}
        Cut-points of graded outcomes.
    model : str
        The model's name in messages.

    Returns
    -------
    PairsData

    Raises
    ------
    TypeError
        When ``comparisons`` is not a :class:`~raterstats.Comparisons`.
    ModelInputError
        Listing every problem: rankings (fit them with ``PlackettLuce``), no judgments,
        ties that ``ties="none"`` refuses, systems not linked by comparisons within a
        dimension (their strengths would not be identified).

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(n_systems=4, n_comparisons=60, ties=True).comparisons
    >>> d = prepare_pairs(c, ties="auto", cutpoints="symmetric")
    >>> d.mode, d.n_obs, d.systems
    ('davidson', 60, ('s1', 's2', 's3', 's4'))
    """
    if isinstance(comparisons, Ratings):
        raise TypeError(
            f"{model} fits pairwise comparisons (raterstats.Comparisons from "
            "read_comparisons), not ratings: fit Ratings with OrdinalRaters, MACE or DawidSkene"
        )
    if not isinstance(comparisons, Comparisons):
        raise TypeError(f"{model}.fit takes a raterstats.Comparisons, not {type(comparisons)}")
    if comparisons.kind != "pairs":
        raise ModelInputError(
            [
                f"{model} fits pairwise comparisons, and these are rankings: fit rankings with "
                "PlackettLuce, or break them into pairs with Comparisons.to_pairs() (the pairs "
                "of one ranking are then not independent)"
            ]
        )
    frame = comparisons.data
    if frame.height == 0:
        raise ModelInputError([f"{model}: no comparisons to fit"])
    problems = []
    K = comparisons.max_grade
    n_ties = int((frame[OUTCOME] == 0).sum())
    if K > 1:
        if ties != "auto":
            problems.append(
                f"ties={ties!r} applies to a / b / tie outcomes; these are graded "
                f"-{K}..{K}, whose middle grade 0 the cut-points model (use ties='auto')"
            )
        mode: Mode = "symmetric" if cutpoints == "symmetric" else "free"
    elif ties == "none" and n_ties:
        problems.append(
            f"ties='none' but {n_ties} of {frame.height} comparisons are ties (outcome 0); "
            "use ties='auto' or 'davidson' (Davidson 1970), or exclude them with "
            "Comparisons.exclude(reason=...)"
        )
        mode = "binary"
    else:
        mode = "davidson" if ties == "davidson" or (ties == "auto" and n_ties) else "binary"
    dims = comparisons.dimensions
    systems = comparisons.systems
    for d in dims:
        sub = frame.filter(pl.col(S.DIMENSION) == d)
        groups = connected_components(list(zip(sub[SYSTEM_A], sub[SYSTEM_B], strict=True)), systems)
        if len(groups) > 1:
            shown = "; ".join("{" + ", ".join(visible(s) for s in g) + "}" for g in groups[:5])
            problems.append(
                f"dimension {visible(d)}: the systems form {len(groups)} groups not linked by "
                f"comparisons ({shown}{'; ...' if len(groups) > 5 else ''}), so strengths across "
                "groups are not identified by the data (a system never compared on a "
                "dimension is a group of its own); fit each group separately "
                "(Comparisons.filter) or add comparisons that link them"
            )
    if problems:
        raise ModelInputError(problems)
    raters = comparisons.raters
    kinds, pooled = rater_pooling(comparisons)

    def index(col: str, ids: tuple[str, ...]) -> np.ndarray:
        pos = {v: i for i, v in enumerate(ids)}
        return np.array([pos[v] for v in frame[col].to_list()], dtype=np.int64)

    order = frame[SHOWN_FIRST].to_list()
    s = np.array([1 if v == "a" else (-1 if v == "b" else 0) for v in order], dtype=np.int64)
    return PairsData(
        frame=frame,
        mode=mode,
        max_grade=K,
        obs_dim=index(S.DIMENSION, dims),
        obs_a=index(SYSTEM_A, systems),
        obs_b=index(SYSTEM_B, systems),
        obs_rater=index(S.RATER, raters),
        obs_s=s,
        y=frame[OUTCOME].to_numpy().astype(np.int64),
        dimensions=dims,
        systems=systems,
        raters=raters,
        rater_kind=kinds,
        pooled=pooled,
    )


def comparison_coords(data: PairsData) -> dict[str, tuple[str, np.ndarray]]:
    """Auxiliary coordinates of the ``comparison`` dim (one per judgment): the user's
    comparison id, question, systems, rater, dimension, shown-first side and source row.

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(n_systems=3, n_comparisons=5).comparisons
    >>> sorted(comparison_coords(prepare_pairs(c, ties="auto", cutpoints="free")))[:3]
    ['comparison_dimension', 'comparison_id', 'comparison_question']
    """
    f = data.frame

    def text(col: str) -> np.ndarray:
        return np.asarray(f[col].fill_null("").cast(pl.String).to_list(), dtype=str)

    return {
        "comparison_id": ("comparison", text(COMPARISON)),
        "comparison_question": ("comparison", text(S.QUESTION)),
        "comparison_system_a": ("comparison", text(SYSTEM_A)),
        "comparison_system_b": ("comparison", text(SYSTEM_B)),
        "comparison_rater": ("comparison", text(S.RATER)),
        "comparison_dimension": ("comparison", text(S.DIMENSION)),
        "comparison_shown_first": ("comparison", text(SHOWN_FIRST)),
        "comparison_source_row": ("comparison", f[S.ROW].to_numpy()),
    }


__all__ = [
    "OUTCOME_MODES",
    "Mode",
    "PairsData",
    "comparison_coords",
    "prepare_pairs",
]
