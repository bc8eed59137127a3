"""The layout of the ordinal model's compiled density: what each position of its arrays means.

The numba kernel (:mod:`raterstats.models.ordinal.kernels`) cannot take Python objects: it
reads the unconstrained vector ``x`` by block offsets, an integer array of settings (sizes
and switches) and a float array of prior constants. The positions in these three arrays
are named here, once, by the IntEnums :class:`Block`, :class:`Setting` and
:class:`PriorConst`, with which both the kernel and the Python side index them.
:class:`OrdinalLayout` holds the named values for one data set and produces the arrays;
:func:`ordinal_layout` is the one place that builds it.

numba compiles the enums' values into the kernel's cached machine code, so
:data:`raterstats.models.ordinal.kernels.LAYOUT_SOURCE_SHA256` names the SHA-256 of this
file: the tests fail until it is updated after an edit here, and updating it invalidates
the kernel's cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property

import numpy as np

from raterstats.models.ordinal.data import OrdinalData, sentence_design
from raterstats.models.priors import Prior


class Block(IntEnum):
    """The blocks of the unconstrained vector ``x``, in order; a block is empty when its
    part of the model is absent (see :attr:`OrdinalLayout.block_sizes` for the sizes)."""

    #: system effects, D x (M - 1) standard normals in the zero-sum basis
    SYS_Z = 0
    #: log sigma_question (D)
    LOG_SQ = 1
    #: question z, (Q - 1) x D, zero-sum map along the questions
    QZ = 2
    #: log sigma_residual (D)
    LOG_SE = 3
    #: answer residual z, (I - 1) x D, zero-sum map along the answers
    EZ = 4
    #: log sigma_sentence (D), plus the sentence design's log-discrimination mean
    LOG_TAU = 5
    #: sentence z (S x D)
    WZ = 6
    #: log-discrimination design means, D x (G - 1) (the reference design's is 0)
    LM = 7
    #: log sigma_discrimination_rater
    LOG_SU = 8
    #: log sigma_discrimination_cell
    LOG_SV = 9
    #: discrimination rater deviations, H - 1 in the zero-sum basis (empty when centred)
    UZ = 10
    #: discrimination cell deviations, D x G x (H - 1) (centred: rater + cell deviation)
    VZ = 11
    #: log sigma_severity_rater
    LOG_SA = 12
    #: log sigma_severity_cell
    LOG_SB = 13
    #: severity rater deviations, H - 1 in the zero-sum basis (empty when centred)
    AZ = 14
    #: severity cell deviations, D x G x (H - 1) (centred: rater + cell deviation)
    BZ = 15
    #: length effects, D x G
    BETA = 16
    #: log sigma_length_rater
    LOG_SL = 17
    #: length rater z, H x D x G
    LZ = 18
    #: judge log-discrimination, J x D x G
    JL = 19
    #: judge severity, J x D x G
    JS = 20
    #: judge length effect, J x D x G
    JB = 21
    #: cut-points, D x G x (K - 1), PyMC's ordered transform
    CUTS = 22


class Setting(IntEnum):
    """Positions in the integer settings array (:attr:`OrdinalLayout.settings`); each
    member's lower-case name is the :class:`OrdinalLayout` field it holds."""

    N_DIM = 0
    N_DESIGN = 1
    N_HUMAN = 2
    N_JUDGE = 3
    N_SYSTEM = 4
    N_QUESTION = 5
    N_ITEM = 6
    N_SENTENCE = 7
    N_LEVELS = 8
    USE_SYSTEM = 9
    USE_QUESTION = 10
    USE_SENTENCES = 11
    USE_LENGTH = 12
    LENGTH_BY_RATER = 13
    REFERENCE = 14
    CENTRED = 15
    SENTENCE_DESIGN = 16
    LATENT_CENTRED = 17
    #: NUTS samples the latent scale of every dimension as one coordinate
    #: (:mod:`raterstats.models.ordinal.kernels_scale`)
    SCALE_COORDINATE = 18
    #: question effects sampled centred (their zero-sum coordinates ~ N(0, sigma_question))
    QUESTION_CENTRED = 19
    #: Gauss-Hermite nodes over which the sentence deviations are integrated out (MAP's
    #: marginal form, :mod:`raterstats.models.ordinal.kernels_marginal`); 0: they are
    #: coordinates of ``x`` (the block ``WZ``), as NUTS samples them
    SENTENCE_NODES = 20
    #: with SENTENCE_NODES: the first rating of the integrated ones (the ratings come
    #: ordered with the whole-answer ratings first, then by sentence x dimension)
    MARGINAL_START = 21


class PriorConst(IntEnum):
    """Positions in the prior constants array (:attr:`OrdinalLayout.prior`); where each
    comes from is in :data:`PRIOR_SOURCES`."""

    SYSTEM_SIGMA = 0
    SIGMA_QUESTION = 1
    SIGMA_RESIDUAL = 2
    SIGMA_SENTENCE = 3
    LM_MU = 4
    LM_SD = 5
    SIGMA_DISC_RATER = 6
    SIGMA_DISC_CELL = 7
    SIGMA_SEV_RATER = 8
    SIGMA_SEV_CELL = 9
    BETA_MU = 10
    BETA_SD = 11
    SIGMA_LENGTH_RATER = 12
    CUT_MU = 13
    CUT_SD = 14
    JL_MU = 15
    JL_SD = 16
    JS_MU = 17
    JS_SD = 18
    JB_MU = 19
    JB_SD = 20
    #: the largest latent unit over the dimensions (scales the dimension-free scales)
    UNIT_MAX = 21
    #: the latent unit of dimension ``d`` is at ``UNIT + d`` (the array ends with them)
    UNIT = 22


#: Names of the blocks of ``x``, in order (lower-case :class:`Block` names).
BLOCKS = tuple(b.name.lower() for b in Block)
#: Names of the prior constants, in order (lower-case :class:`PriorConst` names).
PRIOR_KEYS = tuple(c.name.lower() for c in PriorConst)

#: Each prior constant: (prior name, parameter, default) of the model's priors.
PRIOR_SOURCES: dict[PriorConst, tuple[str, str, float]] = {
    PriorConst.SYSTEM_SIGMA: ("system_effect", "sigma", 1.0),
    PriorConst.SIGMA_QUESTION: ("sigma_question", "sigma", 1.0),
    PriorConst.SIGMA_RESIDUAL: ("sigma_residual", "sigma", 1.0),
    PriorConst.SIGMA_SENTENCE: ("sigma_sentence", "sigma", 1.0),
    PriorConst.LM_MU: ("log_discrimination_design", "mu", 0.0),
    PriorConst.LM_SD: ("log_discrimination_design", "sigma", 0.5),
    PriorConst.SIGMA_DISC_RATER: ("sigma_discrimination_rater", "sigma", 0.5),
    PriorConst.SIGMA_DISC_CELL: ("sigma_discrimination_cell", "sigma", 0.5),
    PriorConst.SIGMA_SEV_RATER: ("sigma_severity_rater", "sigma", 1.0),
    PriorConst.SIGMA_SEV_CELL: ("sigma_severity_cell", "sigma", 1.0),
    PriorConst.BETA_MU: ("length_effect", "mu", 0.0),
    PriorConst.BETA_SD: ("length_effect", "sigma", 1.0),
    PriorConst.SIGMA_LENGTH_RATER: ("sigma_length_rater", "sigma", 0.25),
    PriorConst.CUT_MU: ("cutpoints", "mu", 0.0),
    PriorConst.CUT_SD: ("cutpoints", "sigma", 3.0),
    PriorConst.JL_MU: ("judge_log_discrimination", "mu", 0.0),
    PriorConst.JL_SD: ("judge_log_discrimination", "sigma", 1.0),
    PriorConst.JS_MU: ("judge_severity", "mu", 0.0),
    PriorConst.JS_SD: ("judge_severity", "sigma", 1.5),
    PriorConst.JB_MU: ("judge_length_effect", "mu", 0.0),
    PriorConst.JB_SD: ("judge_length_effect", "sigma", 1.0),
}

#: Latent unit (logits) from which a dimension counts as one of high agreement: a single
#: rating's reliability of ``3^2 / (3^2 + pi^2 / 3) = 0.73`` or more. Its latent scale is
#: then one coordinate of the sampler (``kernels_scale``), and its question effects are
#: centred by default (``OrdinalRaters.is_question_centred``).
HIGH_AGREEMENT_UNIT = 3.0

#: The prior constants stated in the latent unit of their dimension (multiplied by it):
#: the priors on the latent scale of quality and rating location (see
#: :mod:`raterstats.models.ordinal.units` and the model card).
UNIT_OF_DIMENSION = frozenset(
    {
        PriorConst.SYSTEM_SIGMA,
        PriorConst.SIGMA_QUESTION,
        PriorConst.SIGMA_RESIDUAL,
        PriorConst.SIGMA_SENTENCE,
        PriorConst.BETA_MU,
        PriorConst.BETA_SD,
        PriorConst.CUT_MU,
        PriorConst.CUT_SD,
        PriorConst.JS_MU,
        PriorConst.JS_SD,
        PriorConst.JB_MU,
        PriorConst.JB_SD,
    }
)
#: The prior constants of scales shared by every dimension, stated in the largest unit.
UNIT_OF_ALL = frozenset(
    {PriorConst.SIGMA_SEV_RATER, PriorConst.SIGMA_SEV_CELL, PriorConst.SIGMA_LENGTH_RATER}
)

#: The half-normal prior scale of each ``log sigma`` block.
HALF_NORMAL_SCALE: dict[Block, PriorConst] = {
    Block.LOG_SQ: PriorConst.SIGMA_QUESTION,
    Block.LOG_SE: PriorConst.SIGMA_RESIDUAL,
    Block.LOG_TAU: PriorConst.SIGMA_SENTENCE,
    Block.LOG_SU: PriorConst.SIGMA_DISC_RATER,
    Block.LOG_SV: PriorConst.SIGMA_DISC_CELL,
    Block.LOG_SA: PriorConst.SIGMA_SEV_RATER,
    Block.LOG_SB: PriorConst.SIGMA_SEV_CELL,
    Block.LOG_SL: PriorConst.SIGMA_LENGTH_RATER,
}


@dataclass(frozen=True, eq=False)
class OrdinalLayout:
    """The compiled density's layout for one data set: sizes, switches and prior constants
    by name, and the arrays the kernel reads (:attr:`offsets`, :attr:`settings`,
    :attr:`prior`).

    Sizes: ``n_dim`` (D), ``n_design`` (G), ``n_human`` (H), ``n_judge`` (J), ``n_system``
    (M), ``n_question`` (Q), ``n_item`` (I), ``n_sentence`` (S), ``n_levels`` (K).
    Switches: which parts of the model are present (``use_*``, ``length_by_rater``) and
    whether the human raters' deviations (``centred``), the answer residuals
    (``latent_centred``) and the question effects (``question_centred``) are centred, and
    whether the sampler's vector holds the latent scale of every dimension as one
    coordinate (``scale_coordinate``; the kernels' density is that of the standard vector,
    see
    :mod:`raterstats.models.ordinal.kernels_scale`). ``reference`` is the index of the
    reference design and ``sentence_design`` that of the design whose log-discrimination
    mean shifts the sampled sentence scale (-1: none). ``prior`` holds the prior constants
    in :class:`PriorConst` order, as written in the priors (in logits), then the largest
    latent unit and the latent unit of every dimension (``UNIT + d``), by which the kernel
    multiplies the constants of :data:`UNIT_OF_DIMENSION` and :data:`UNIT_OF_ALL`.
    ``sentence_nodes`` (> 0 only in MAP's marginal form,
    :func:`~raterstats.models.ordinal.density.marginal_density`) integrates
    the sentence deviations of the ratings from ``marginal_start`` on out by that many
    Gauss-Hermite nodes, whose nodes and then log-weights end ``prior``. The arrays are
    computed once per layout; do not modify them.

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> data = OrdinalRaters().prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> lay = OrdinalRaters().layout(data)
    >>> lay.n_dim, lay.n_levels, int(lay.settings[Setting.N_LEVELS])
    (3, 5, 5)
    >>> lay.block_sizes[Block.CUTS] == lay.n_dim * lay.n_design * (lay.n_levels - 1)
    True
    """

    n_dim: int
    n_design: int
    n_human: int
    n_judge: int
    n_system: int
    n_question: int
    n_item: int
    n_sentence: int
    n_levels: int
    use_system: bool
    use_question: bool
    use_sentences: bool
    use_length: bool
    length_by_rater: bool
    reference: int
    centred: bool
    sentence_design: int
    prior: np.ndarray
    latent_centred: bool = False
    scale_coordinate: bool = False
    question_centred: bool = False
    sentence_nodes: int = 0
    marginal_start: int = 0

    @cached_property
    def block_sizes(self) -> dict[Block, int]:
        """Length of every block of ``x`` (0 for an absent part of the model)."""
        D, G, H = self.n_dim, self.n_design, self.n_human
        J, M, Q = self.n_judge, self.n_system, self.n_question
        K, lbr = self.n_levels, self.length_by_rater
        return {
            Block.SYS_Z: D * (M - 1) if self.use_system else 0,
            Block.LOG_SQ: D if self.use_question else 0,
            Block.QZ: (Q - 1) * D if self.use_question else 0,
            Block.LOG_SE: D,
            Block.EZ: (self.n_item - 1) * D,
            Block.LOG_TAU: D if self.use_sentences else 0,
            Block.WZ: self.n_sentence * D,
            Block.LM: D * (G - 1),
            Block.LOG_SU: 1,
            Block.LOG_SV: 1,
            Block.UZ: 0 if self.centred else H - 1,
            Block.VZ: D * G * (H - 1),
            Block.LOG_SA: 1,
            Block.LOG_SB: 1,
            Block.AZ: 0 if self.centred else H - 1,
            Block.BZ: D * G * (H - 1),
            Block.BETA: D * G if self.use_length else 0,
            Block.LOG_SL: 1 if lbr else 0,
            Block.LZ: H * D * G if lbr else 0,
            Block.JL: J * D * G,
            Block.JS: J * D * G,
            Block.JB: J * D * G if self.use_length else 0,
            Block.CUTS: D * G * (K - 1),
        }

    @cached_property
    def offsets(self) -> np.ndarray:
        """Start of every block of ``x`` and, last, its length (``len(Block) + 1``, int64)."""
        sizes = self.block_sizes
        off = np.zeros(len(Block) + 1, dtype=np.int64)
        off[1:] = np.cumsum([sizes[b] for b in Block])
        return off

    @property
    def ndim(self) -> int:
        """Length of the unconstrained vector ``x``."""
        return int(self.offsets[-1])

    @cached_property
    def settings(self) -> np.ndarray:
        """The integer settings in :class:`Setting` order (int64), as the kernel reads them."""
        return np.array([int(getattr(self, s.name.lower())) for s in Setting], dtype=np.int64)

    @property
    def units(self) -> np.ndarray:
        """The latent unit of every dimension (logits; 1: the priors as written)."""
        return np.asarray(self.prior[PriorConst.UNIT : PriorConst.UNIT + self.n_dim])

    def constant(self, c: PriorConst, d: int | None = None) -> float:
        """Prior constant ``c`` in logits: as written, times the latent unit of dimension
        ``d`` (:data:`UNIT_OF_DIMENSION`) or the largest unit (:data:`UNIT_OF_ALL`)."""
        v = float(self.prior[c])
        if c in UNIT_OF_DIMENSION:
            if d is None:
                raise ValueError(f"{c.name} is stated per dimension: give d")
            return v * float(self.prior[PriorConst.UNIT + d])
        if c in UNIT_OF_ALL:
            return v * float(self.prior[PriorConst.UNIT_MAX])
        return v

    @property
    def prior_scale(self) -> dict[str, np.ndarray]:
        """The half-normal prior scale (logits) of every element of each ``log sigma`` block,
        by block name (per dimension for the blocks with one scale per dimension)."""
        out = {}
        for b, c in HALF_NORMAL_SCALE.items():
            n = self.block_sizes[b]
            if c in UNIT_OF_DIMENSION:
                out[b.name.lower()] = np.array([self.constant(c, d % self.n_dim) for d in range(n)])
            else:
                out[b.name.lower()] = np.full(n, self.constant(c))
        return out

    @cached_property
    def scale_plan(self) -> dict[str, np.ndarray]:
        """Positions of the latent-scale coordinate's map (empty without it, see
        :mod:`raterstats.models.ordinal.kernels_scale`), over the dimensions whose latent
        unit is at least :data:`HIGH_AGREEMENT_UNIT` (``dims``): ``ell`` (per such dimension:
        the mean log gap of the reference design's cut-points), ``gaps`` (those log gaps in
        the standard vector, K - 2 per dimension), ``w`` (their zero-sum spread in the
        sampler's, K - 3), ``shear`` / ``shear_dim`` (positions shifted by the ``ell`` of
        their dimension, an index into ``dims``) and ``scaled`` / ``scaled_dim`` (positions
        multiplied by its ``exp``)."""
        D, G, K = self.n_dim, self.n_design, self.n_levels
        ref = self.reference
        empty = np.zeros(0, dtype=np.int64)
        dims = np.flatnonzero(self.units >= HIGH_AGREEMENT_UNIT)
        if not self.scale_coordinate or K < 3 or not dims.size:
            return {
                "dims": empty,
                "ell": empty,
                "gaps": np.zeros((0, 0), np.int64),
                "w": np.zeros((0, 0), np.int64),
                "shear": empty,
                "shear_dim": empty,
                "scaled": empty,
                "scaled_dim": empty,
            }
        k1 = K - 1
        cut = self.block(Block.CUTS).start
        cells = np.arange(D * G).reshape(D, G)  # cell = d * G + g
        gaps = cut + cells[:, ref, None] * k1 + np.arange(1, K - 1)[None, :]
        shear: list[int] = []
        shear_dim: list[int] = []
        scaled: list[int] = []
        scaled_dim: list[int] = []

        which = np.full(D, -1)
        which[dims] = np.arange(dims.size)

        def add(pos: list, dim: list, b: Block, of: np.ndarray) -> None:
            # the positions of block b whose dimension (``of``, one per position) is in dims
            sl = self.block(b)
            keep = which[of] >= 0
            pos.extend(np.arange(sl.start, sl.stop)[keep].tolist())
            dim.extend(which[of][keep].tolist())

        for b in (Block.LOG_SE, Block.LOG_SQ, Block.LOG_TAU):
            add(shear, shear_dim, b, np.arange(self.block_sizes[b]))
        for i, d in enumerate(dims):
            for g in range(G):
                if g != ref:
                    shear.extend((cut + cells[d, g] * k1 + np.arange(1, k1)).tolist())
                    shear_dim.extend([i] * (k1 - 1))
                scaled.append(cut + cells[d, g] * k1)
                scaled_dim.append(i)
        add(
            scaled,
            scaled_dim,
            Block.SYS_Z,
            np.repeat(np.arange(D), self.block_sizes[Block.SYS_Z] // D),
        )
        add(
            scaled,
            scaled_dim,
            Block.BETA,
            np.repeat(np.arange(D), self.block_sizes[Block.BETA] // D),
        )
        for b in (Block.JS, Block.JB):
            add(
                scaled,
                scaled_dim,
                b,
                np.tile(np.repeat(np.arange(D), G), self.block_sizes[b] // (D * G)),
            )
        if self.centred:
            add(
                scaled,
                scaled_dim,
                Block.BZ,
                np.repeat(np.arange(D), self.block_sizes[Block.BZ] // D),
            )
        for b, centred in ((Block.QZ, self.question_centred), (Block.EZ, self.latent_centred)):
            if centred:
                add(scaled, scaled_dim, b, np.tile(np.arange(D), self.block_sizes[b] // D))
        as_int = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
        gaps = gaps[dims]
        return {
            "dims": dims.astype(np.int64),
            "ell": gaps[:, 0].copy(),
            "gaps": gaps,
            "w": gaps[:, 1:].copy(),
            "shear": as_int(shear),
            "shear_dim": as_int(shear_dim),
            "scaled": as_int(scaled),
            "scaled_dim": as_int(scaled_dim),
        }

    def block(self, b: Block | str) -> slice:
        """The positions of block ``b`` (a :class:`Block` or its lower-case name) in ``x``."""
        k = Block[b.upper()] if isinstance(b, str) else Block(b)
        off = self.offsets
        return slice(int(off[k]), int(off[k + 1]))


def prior_constants(priors: Mapping[str, Prior], units: np.ndarray | None = None) -> np.ndarray:
    """The prior constants of the compiled density in :class:`PriorConst` order (see
    :data:`PRIOR_SOURCES`), then the largest of ``units`` and ``units`` (the latent unit of
    every dimension; default one dimension of unit 1).

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> c = prior_constants(OrdinalRaters.default_priors, np.array([1.0, 4.0]))
    >>> float(c[PriorConst.CUT_SD]), c[PriorConst.UNIT_MAX:].tolist()
    (3.0, [4.0, 1.0, 4.0])
    """
    u = np.ones(1) if units is None else np.asarray(units, dtype=float)
    if u.ndim != 1 or not u.size or not np.all(np.isfinite(u) & (u > 0)):
        raise ValueError(f"units must be positive numbers, one per dimension, got {u}")
    sources = [PRIOR_SOURCES[c] for c in PriorConst if c in PRIOR_SOURCES]
    base = [float(priors[key].param(name, default)) for key, name, default in sources]
    return np.array([*base, float(u.max()), *u])


def ordinal_layout(
    data: OrdinalData,
    priors: Mapping[str, Prior],
    *,
    centred: bool,
    length_by_rater: bool,
    latent_centred: bool = False,
    units: np.ndarray | None = None,
    scale_coordinate: bool = False,
    question_centred: bool | None = None,
) -> OrdinalLayout:
    """The layout of the compiled density for these data, priors and options.

    Parameters
    ----------
    data : OrdinalData
        Prepared ratings.
    priors : mapping of str to Prior
        The model's priors (every key of ``OrdinalRaters.default_priors``).
    centred : bool
        Whether the human raters' deviations are sampled centred.
    length_by_rater : bool
        The ``length_by_rater`` option (used only when the data have a length covariate).
    latent_centred : bool
        Whether the answer residuals are sampled centred (their zero-sum coordinates
        ``~ N(0, sigma)``) rather than as standard normals times sigma.
    question_centred : bool, optional
        The same for the question effects (default: as ``latent_centred``).
    scale_coordinate : bool
        Whether the sampler's vector holds the latent scale of every dimension as one
        coordinate (:mod:`~raterstats.models.ordinal.kernels_scale`).
    units : np.ndarray, optional
        The latent unit of every dimension (:func:`~raterstats.models.ordinal.units.latent_units`;
        default 1: the priors as written, in logits).

    Returns
    -------
    OrdinalLayout
    """
    c = data.coords
    return OrdinalLayout(
        n_dim=len(c["dimension"]),
        n_design=len(c["design"]),
        n_human=data.n_humans,
        n_judge=len(c["judge"]),
        n_system=len(c["system"]),
        n_question=len(c["question"]),
        n_item=len(c["item"]),
        n_sentence=len(c["sentence"]),
        n_levels=data.n_levels,
        use_system=data.use_system,
        use_question=data.use_question,
        use_sentences=data.has_sentences,
        use_length=data.has_length,
        length_by_rater=bool(length_by_rater) and data.has_length,
        reference=c["design"].index(data.reference_design),
        centred=bool(centred),
        sentence_design=sentence_design(data),
        prior=prior_constants(priors, np.ones(len(c["dimension"])) if units is None else units),
        latent_centred=bool(latent_centred),
        scale_coordinate=bool(scale_coordinate),
        question_centred=bool(latent_centred if question_centred is None else question_centred),
    )


__all__ = [
    "BLOCKS",
    "HALF_NORMAL_SCALE",
    "HIGH_AGREEMENT_UNIT",
    "PRIOR_KEYS",
    "PRIOR_SOURCES",
    "UNIT_OF_ALL",
    "UNIT_OF_DIMENSION",
    "Block",
    "OrdinalLayout",
    "PriorConst",
    "Setting",
    "ordinal_layout",
    "prior_constants",
]
