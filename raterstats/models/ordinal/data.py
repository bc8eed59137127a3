"""Ordinal ratings as index arrays: the data of :class:`~raterstats.models.ordinal.OrdinalRaters`.

:func:`prepare_ordinal` checks ordinal ratings and builds :class:`OrdinalData` (index arrays
per rating, per answer and per sentence, and the coordinates of the fit);
:func:`data_from_constants` re-creates it from a fit's stored groups, so that the derived
quantities work on a reloaded file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.models.base import ModelInputError
from raterstats.ratings import Ratings
from raterstats.scales import OrdinalScale


@dataclass
class OrdinalData:
    """Index arrays and coordinates of ordinal ratings (made by :func:`prepare_ordinal`).

    Ratings are sorted into three contiguous blocks (lowest level, highest level, the
    rest), the order the likelihood's three formulas take them in. Per rating: ``y``
    (0-based level), ``obs_item``, ``obs_dim``, ``obs_design``, ``obs_rater`` (humans
    first, then judges) and ``obs_sentence`` (1-based sentence, 0 for a whole-answer
    rating); per answer: ``item_system``, ``item_question`` and ``z_length`` (standardised
    log length, zeros without a length covariate); per sentence: ``sentence_item``; per
    design: ``design_has_sentences``. ``coords`` holds the fit's coordinates by dim name
    and ``initial_cuts`` the empirical cumulative logits (dimension, design, cut) that the
    cut-points start from.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> data = prepare_ordinal(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> data.n_obs == data.y.size, data.reference_design, data.n_levels
    (True, 'coarse', 5)
    """

    y: np.ndarray  # 0-based level code per rating
    obs_item: np.ndarray
    obs_dim: np.ndarray
    obs_design: np.ndarray
    obs_rater: np.ndarray
    obs_sentence: np.ndarray  # 1-based sentence index; 0 for whole-answer ratings
    item_system: np.ndarray
    item_question: np.ndarray
    z_length: np.ndarray  # per item; zeros when no length covariate
    coords: dict[str, list[Any]]
    n_humans: int
    n_levels: int
    levels: tuple[Any, ...]
    has_system: bool
    has_question: bool
    has_length: bool
    has_sentences: bool
    reference_design: str
    length_log_mean: float = 0.0
    length_log_sd: float = 1.0
    sentence_item: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    design_has_sentences: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    frame: pl.DataFrame | None = None
    initial_cuts: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0)))
    #: the latent units measured from these ratings, once (``units.latent_units``)
    measured_units: np.ndarray | None = None

    @property
    def n_obs(self) -> int:
        """Number of ratings."""
        return int(self.y.size)

    @property
    def use_system(self) -> bool:
        """System effects are in the model (a system column with at least two systems)."""
        return self.has_system and len(self.coords["system"]) > 1

    @property
    def use_question(self) -> bool:
        """Question effects are in the model (a question column with several questions)."""
        return self.has_question and len(self.coords["question"]) > 1


def _index(col: pl.Series, levels: list[Any]) -> np.ndarray:
    return col.replace_strict(
        {v: k for k, v in enumerate(levels)}, return_dtype=pl.Int64
    ).to_numpy()


def single_unit_cells(frame: pl.DataFrame) -> list[str]:
    """One problem per dimension x design whose ratings all rate one unit (one answer, or
    one sentence of an answer): the ordinal models learn the spread of what is rated, and
    the raters' discrimination, from differences between the units rated in a cell, so
    each cell needs at least two units; with one, those would be their priors alone.

    ``frame`` holds ratings (columns ``item``, ``segment``, ``dimension``, ``design``).

    Examples
    --------
    >>> f = pl.DataFrame({"item": ["a", "b", "b"], "segment": [None, None, None],
    ...                   "dimension": ["x", "x", "y"], "design": ["g"] * 3})
    >>> single_unit_cells(f)  # doctest: +ELLIPSIS
    ["dimension 'y', design 'g': every rating is of item 'b'; ..."]
    """
    cells = (
        frame.group_by(S.DIMENSION, S.DESIGN)
        .agg(
            pl.struct(S.ITEM, S.SEGMENT).n_unique().alias("units"),
            pl.col(S.ITEM).first(),
            pl.col(S.SEGMENT).first(),
        )
        .filter(pl.col("units") < 2)
        .sort(S.DIMENSION, S.DESIGN)
    )
    return [
        f"dimension {dim!r}, design {design!r}: every rating is of "
        + (f"item {item!r}" if seg is None else f"sentence {seg!r} of item {item!r}")
        + "; the ordinal models learn the spread of quality and the raters' discrimination "
        "from differences between rated units, so each dimension x design needs ratings of "
        "at least 2 units (answers, or sentences of an answer)"
        for dim, design, _, item, seg in cells.iter_rows()
    ]


def constant_length_cells(frame: pl.DataFrame) -> list[str]:
    """One problem per dimension x design whose rated answers all have the same length:
    its length effect is learned from answers of different lengths, and would be its prior
    alone. Ratings without a positive length are left to :func:`prepare_ordinal`.

    ``frame`` holds ratings (columns ``item``, ``length``, ``dimension``, ``design``).

    Examples
    --------
    >>> f = pl.DataFrame({"item": ["a", "b", "a"], "length": [10, 10, 10],
    ...                   "dimension": ["x", "x", "y"], "design": ["g"] * 3})
    >>> constant_length_cells(f)  # doctest: +ELLIPSIS
    ["dimension 'x', design 'g': all 2 rated answers have length 10; ...", ...]
    """
    cells = (
        frame.filter(pl.col(S.LENGTH) > 0)
        .group_by(S.DIMENSION, S.DESIGN)
        .agg(
            pl.col(S.LENGTH).n_unique().alias("lengths"),
            pl.col(S.ITEM).n_unique().alias("answers"),
            pl.col(S.LENGTH).first(),
        )
        .filter(pl.col("lengths") < 2)
        .sort(S.DIMENSION, S.DESIGN)
    )
    return [
        f"dimension {dim!r}, design {design!r}: "
        + (f"all {n} rated answers have" if n > 1 else "the one rated answer has")
        + f" length {length}; a length effect needs answers of at least 2 different lengths"
        " in each dimension x design"
        for dim, design, _, n, length in cells.iter_rows()
    ]


def prepare_ordinal(ratings: Ratings, *, length: bool | str = "auto") -> OrdinalData:
    """Check ordinal ratings and build the index arrays of the rater model.

    Parameters
    ----------
    ratings : Ratings
        Ordinal ratings (every dimension on an :class:`~raterstats.OrdinalScale` with the
        same number of levels), at least two of them by human raters.
    length : {"auto", True, False}
        Use the ``length`` column as a covariate (``"auto"``: when there is one).

    Returns
    -------
    OrdinalData

    Notes
    -----
    Every rating is an observation, repeated ratings included (any number per rater and
    unit): each is a draw from the rater's ordinal model of the item's quality, independent
    given the parameters; nothing is left out. The stored ``observed_data`` marks the
    repeats (``rating_repeat``).

    Raises
    ------
    ModelInputError
        Listing every problem (non-ordinal scales, scales with different numbers of
        levels, fewer than two human raters, a requested length covariate that is absent,
        a dimension x design whose ratings are all of one unit (:func:`single_unit_cells`)
        or, with the length covariate, of answers of one length
        (:func:`constant_length_cells`), item attributes that vary within an item).
    """
    problems = []
    scales = ratings.scales
    # ratings in the lowest level first, then the highest, then the rest: the likelihood
    # treats the three groups with different formulas on contiguous blocks
    top = max(s.n_levels for s in scales.values()) - 1
    d = ratings.data.with_columns(
        pl.when(pl.col(S.CODE) == 0)
        .then(0)
        .when(pl.col(S.CODE) == top)
        .then(1)
        .otherwise(2)
        .alias("__block")
    ).sort("__block", maintain_order=True)
    nlev = {dim: s.n_levels for dim, s in scales.items()}
    for dim, s in scales.items():
        if not isinstance(s, OrdinalScale):
            problems.append(
                f"dimension {dim!r} is on {s!r}; the ordinal model needs an OrdinalScale"
            )
    if len(set(nlev.values())) > 1:
        problems.append(f"all dimensions need the same number of levels, got {nlev}")
    kinds = (
        d.select(S.RATER, S.RATER_KIND).unique()
        if S.RATER_KIND in d.columns
        else d.select(S.RATER).unique().with_columns(pl.lit("human").alias(S.RATER_KIND))
    )
    humans = sorted(kinds.filter(pl.col(S.RATER_KIND) == "human")[S.RATER].to_list())
    judges = sorted(kinds.filter(pl.col(S.RATER_KIND) != "human")[S.RATER].to_list())
    if len(humans) < 2:
        problems.append(f"at least two human raters are needed (rater_kind='human'), got {humans}")
    use_length = S.LENGTH in d.columns if length == "auto" else bool(length)
    if use_length and S.LENGTH not in d.columns:
        problems.append("length=True but the ratings have no 'length' column")
    if use_length and S.LENGTH in d.columns and d[S.LENGTH].null_count():
        problems.append(f"{d[S.LENGTH].null_count()} ratings have no length")
    if use_length and S.LENGTH in d.columns and (d[S.LENGTH] <= 0).any():
        problems.append("lengths must be positive for log(length)")
    problems.extend(single_unit_cells(d))
    if use_length and S.LENGTH in d.columns:
        hint = " (length='auto' uses the 'length' column; length=False fits without it)"
        problems.extend(p + (hint if length == "auto" else "") for p in constant_length_cells(d))
    if problems:
        raise ModelInputError(problems)

    items = sorted(d[S.ITEM].unique().to_list())
    dims = sorted(scales)
    designs = sorted(d[S.DESIGN].unique().to_list())
    raters = humans + judges
    per_item = [c for c in (S.SYSTEM, S.QUESTION, S.LENGTH) if c in d.columns]
    attrs = d.select(S.ITEM, *per_item).unique().sort(S.ITEM)
    if attrs.height != len(items):
        raise ModelInputError("system / question / length must be constant within an item")
    has_system = S.SYSTEM in d.columns and d[S.SYSTEM].null_count() == 0
    has_question = S.QUESTION in d.columns and d[S.QUESTION].null_count() == 0
    systems = sorted(attrs[S.SYSTEM].unique().to_list()) if has_system else ["all"]
    questions = sorted(attrs[S.QUESTION].unique().to_list()) if has_question else []
    item_system = _index(attrs[S.SYSTEM], systems) if has_system else np.zeros(len(items), int)
    item_question = (
        _index(attrs[S.QUESTION], questions) if has_question else np.zeros(len(items), int)
    )
    if use_length:
        loglen = np.log(attrs[S.LENGTH].to_numpy().astype(float))
        mean, sd = float(loglen.mean()), float(loglen.std())
        z = (loglen - mean) / (sd if sd > 0 else 1.0)
    else:
        mean, sd, z = 0.0, 1.0, np.zeros(len(items))
    sent = (
        d.filter(pl.col(S.SEGMENT).is_not_null())
        .select(S.ITEM, S.SEGMENT, S.DESIGN)
        .unique()
        .sort(S.ITEM, S.SEGMENT)
    )
    # sentences are (item, segment) pairs, 1-based; their ids are unique too (unit_id)
    sent_units = (
        sent.select(S.ITEM, S.SEGMENT)
        .unique(maintain_order=True)
        .with_row_index("_sentence", offset=1)
    )
    sent_ids = sent_units.select(S.unit_id_expr()).to_series().to_list()
    obs_sentence = (
        d.select(S.ITEM, S.SEGMENT)
        .join(sent_units, on=[S.ITEM, S.SEGMENT], how="left", maintain_order="left")
        .get_column("_sentence")
        .fill_null(0)
        .cast(pl.Int64)
        .to_numpy()
    )
    design_has_sentences = np.array(
        [sent.filter(pl.col(S.DESIGN) == g).height > 0 for g in designs], dtype=bool
    )
    whole = [g for g, has in zip(designs, design_has_sentences, strict=True) if not has]
    reference = whole[0] if whole else designs[0]
    k = next(iter(nlev.values()))
    levels = scales[dims[0]].levels
    coords: dict[str, list[Any]] = {
        "item": items,
        "dimension": dims,
        "design": designs,
        "rater": raters,
        "human": humans,
        "judge": judges,
        "system": systems,
        "question": questions,
        "sentence": sent_ids,
        "cut": list(range(1, k)),
        "system_basis": list(range(1, len(systems))),
        "question_basis": list(range(1, len(questions))),
        "item_basis": list(range(1, len(items))),
        "human_basis": list(range(1, len(humans))),
        "design_contrast": [g for g in designs if g != reference],
    }
    # start the cut-points at the empirical cumulative logits of each dimension x design
    obs_dim = _index(d[S.DIMENSION], dims)
    obs_design = _index(d[S.DESIGN], designs)
    codes = d[S.CODE].to_numpy().astype(np.int64)
    counts = np.zeros((len(dims), len(designs), k))
    np.add.at(counts, (obs_dim, obs_design, codes), 1.0)
    cum = np.cumsum(counts + 0.5, axis=-1)[..., :-1] / (counts + 0.5).sum(-1, keepdims=True)
    initial_cuts = np.log(cum / (1 - cum))
    return OrdinalData(
        y=d[S.CODE].to_numpy().astype(np.int64),
        obs_item=_index(d[S.ITEM], items),
        obs_dim=obs_dim,
        obs_design=obs_design,
        obs_rater=_index(d[S.RATER], raters),
        obs_sentence=obs_sentence.astype(np.int64),
        item_system=item_system.astype(np.int64),
        item_question=item_question.astype(np.int64),
        z_length=z,
        coords=coords,
        n_humans=len(humans),
        n_levels=k,
        levels=levels,
        has_system=has_system,
        has_question=has_question,
        has_length=use_length,
        has_sentences=bool(sent_ids),
        reference_design=reference,
        length_log_mean=mean,
        length_log_sd=sd,
        sentence_item=_index(sent_units[S.ITEM], items) if sent_ids else np.zeros(0, np.int64),
        design_has_sentences=design_has_sentences,
        frame=d.select(
            S.ITEM, S.SEGMENT, S.RATER, S.DIMENSION, S.DESIGN, S.REPEAT, S.RATING, S.ROW
        ),
        initial_cuts=initial_cuts,
    )


def sentence_design(data: OrdinalData) -> int:
    """Index of the design whose log-discrimination mean shifts the sampled sentence scale
    (the non-reference design with the most sentence ratings), or -1 when there is none:
    the compiled density and the PyMC model sample ``log tau_d + m_{d, g}`` there.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> data = prepare_ordinal(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> data.coords["design"][sentence_design(data)]
    'fine'
    """
    ref = data.coords["design"].index(data.reference_design)
    fine = data.obs_sentence > 0
    counts = np.bincount(data.obs_design[fine], minlength=len(data.coords["design"]))
    counts[ref] = 0
    return int(np.argmax(counts)) if counts.max() > 0 else -1


def data_from_constants(dt: xr.DataTree) -> OrdinalData:
    """The index arrays of a fit, rebuilt from its stored groups (works on a reloaded file).

    The result holds what the derived quantities and the posterior predictive need (the
    per-rating indices, levels, lengths, sentences and coordinates); the per-answer system
    and question indices are zeros and ``frame`` is None.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of :class:`~raterstats.models.ordinal.OrdinalRaters`.

    Returns
    -------
    OrdinalData
    """
    const = dt["constant_data"].to_dataset()
    obs = dt["observed_data"].to_dataset()
    post = dt["posterior"].to_dataset()
    coords = {
        k: list(post[k].values) if k in post.coords else []
        for k in ("item", "dimension", "design", "rater", "system", "question", "sentence")
    }
    human = const["rater_is_human"].values
    items = list(const["item"].values)
    sent_item = const["sentence_item"].values
    return OrdinalData(
        y=obs["rating"].values.astype(np.int64) - 1,
        obs_item=const["obs_item"].values,
        obs_dim=const["obs_dimension"].values,
        obs_design=const["obs_design"].values,
        obs_rater=const["obs_rater"].values,
        obs_sentence=const["obs_sentence"].values,
        item_system=np.zeros(len(items), np.int64),
        item_question=np.zeros(len(items), np.int64),
        z_length=const["z_length"].values,
        coords=coords,
        n_humans=int(human.sum()),
        n_levels=int(const.attrs["n_levels"]),
        levels=tuple(obs.attrs.get("levels", ())),
        has_system=bool(const.attrs["has_system"]),
        has_question="question_effect" in post,
        has_length=bool(const.attrs["has_length"]),
        has_sentences="sentence_z" in post,
        reference_design=str(const.attrs["reference_design"]),
        sentence_item=np.array([items.index(i) for i in sent_item], dtype=np.int64),
        design_has_sentences=const["design_has_sentences"].values,
    )
