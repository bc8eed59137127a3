"""Ordinal item-response rater model with sentence nesting and answer-length effects.

:class:`OrdinalRaters` is the many-facet graded-response model of MODELS.md section 3: the
latent quality of each answer on each dimension, system and question effects, sentence
deviations for sentence-level (fine) ratings, rater severity and discrimination per
dimension x design with partial pooling, ordered cut-points per dimension x design, a logit
or probit link, and an optional answer-length effect per dimension x design.

Derived quantities are functions of the fitted ``xr.DataTree``: :func:`system_scores`
(latent scores and "fair averages"), :func:`rater_table` (severity, discrimination, infit /
outfit, separation and reliability in the many-facet Rasch vocabulary), :func:`reliability`
(model-implied reliability per dimension x design, and P(design A more reliable than B)),
:func:`length_contrast` and :func:`sentence_aggregation` (P(no sentence negative),
P(at least one sentence positive)).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import polars as pl
import xarray as xr
from scipy.special import expit, log_ndtr, ndtr

from raterstats import schema as S
from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Model, ModelInputError, Prior
from raterstats.models.ordinal.kernels import BLOCKS, zero_sum_basis
from raterstats.ratings import Ratings
from raterstats.scales import OrdinalScale

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")

# ---------------------------------------------------------------------------- data


@dataclass
class OrdinalData:
    """Index arrays and coordinates of ordinal ratings (made by :meth:`OrdinalRaters.prepare`)."""

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

    @property
    def n_obs(self) -> int:
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


def prepare_ordinal(ratings: Ratings, *, length: bool | str = "auto") -> OrdinalData:
    """Check ordinal ratings and build the index arrays of the rater model.

    Raises
    ------
    ModelInputError
        Listing every problem (non-ordinal scales, scales with different numbers of
        levels, fewer than two human raters, a requested length covariate that is absent,
        item attributes that vary within an item).
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
    sent_units = sent.select(S.ITEM, S.SEGMENT).unique(maintain_order=True)
    sent_ids = [f"{a}::{b}" for a, b in sent_units.iter_rows()]
    key = pl.concat_str([pl.col(S.ITEM), pl.lit("::"), pl.col(S.SEGMENT)])
    obs_sentence = (
        d.select(
            pl.when(pl.col(S.SEGMENT).is_null())
            .then(pl.lit(0, dtype=pl.Int64))
            .otherwise(
                key.replace_strict(
                    {s: k + 1 for k, s in enumerate(sent_ids)}, default=0, return_dtype=pl.Int64
                )
            )
        )
        .to_series()
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


# ---------------------------------------------------------------------------- likelihood


def zero_sum_extend_np(y: np.ndarray) -> np.ndarray:
    """PyMC's zero-sum map along the first axis: (n - 1, ...) coordinates to an (n, ...)
    array that sums to zero over that axis (an isometry; the NumPy form of
    :func:`raterstats.models.ordinal.kernels.zero_sum_extend`).

    Examples
    --------
    >>> v = zero_sum_extend_np(np.array([[1.0], [2.0]]))
    >>> v.shape, bool(np.isclose(v.sum(), 0.0)), bool(np.isclose((v**2).sum(), 5.0))
    ((3, 1), True, True)
    """
    n = y.shape[0] + 1
    tot = y.sum(axis=0, keepdims=True)
    norm = tot / (np.sqrt(n) + n)
    return np.concatenate([y - norm, -tot / np.sqrt(n)], axis=0)


def _zero_sum_extend_pt(y: Any, n: int) -> Any:
    """The PyTensor form of :func:`zero_sum_extend_np` (``y`` has n - 1 rows)."""
    tot = y.sum(axis=0, keepdims=True)
    norm = tot / (np.sqrt(n) + n)
    return pt.concatenate([y - norm, -tot / np.sqrt(n)], axis=0)


def sentence_design(data: OrdinalData) -> int:
    """Index of the design whose log-discrimination mean shifts the sampled sentence scale
    (the non-reference design with the most sentence ratings), or -1 when there is none:
    the compiled density and the PyMC model sample ``log tau_d + m_{d, g}`` there."""
    ref = data.coords["design"].index(data.reference_design)
    fine = data.obs_sentence > 0
    counts = np.bincount(data.obs_design[fine], minlength=len(data.coords["design"]))
    counts[ref] = 0
    return int(np.argmax(counts)) if counts.max() > 0 else -1


def _interval_logp(lo: Any, hi: Any, link: str, lib: Any) -> Any:
    """log P(lo < latent <= hi) for a standard logistic / normal latent (``lib`` = pt or np)."""
    if link == "logit":
        softplus = pt.softplus if lib is pt else (lambda x: np.logaddexp(0.0, x))
        log1mexp = pt.log1mexp if lib is pt else (lambda x: np.log(-np.expm1(x)))
        # log(F(hi) - F(lo)) = log F(hi) + log(1 - F(lo)) + log(1 - exp(lo - hi))
        return -softplus(-hi) - softplus(lo) + log1mexp(lo - hi)
    if lib is pt:
        from pymc.distributions.dist_math import normal_lcdf

        a, b = normal_lcdf(0.0, 1.0, hi), normal_lcdf(0.0, 1.0, lo)
        return a + pt.log1mexp(b - a)
    a, b = log_ndtr(hi), log_ndtr(lo)
    return a + np.log(-np.expm1(b - a))


def _log_cdf(x: Any, link: str) -> Any:
    """log F(x) in PyTensor (logistic: -softplus(-x); normal: log Phi(x))."""
    if link == "logit":
        return -pt.softplus(-x)
    from pymc.distributions.dist_math import normal_lcdf

    return normal_lcdf(0.0, 1.0, x)


def ordered_cutpoints(prior: Prior, data: OrdinalData) -> Any:
    """Cut-points ``c[dimension, design, cut]``, ordered within each dimension x design,
    normal prior, started at the empirical cumulative logits (in the current pm.Model)."""
    return pm.Normal(
        "cutpoints",
        mu=float(prior.param("mu", 0.0)),
        sigma=float(prior.param("sigma", 3.0)),
        transform=pm.distributions.transforms.ordered,
        dims=("dimension", "design", "cut"),
        initval=data.initial_cuts,
    )


def ratings_potential(lp: Any, cuts: Any, data: OrdinalData, link: str) -> None:
    """Add the ratings' cumulative-link log-likelihood to the current pm.Model.

    Ratings in the lowest or highest level need one tail probability, the others an
    interval: computing them apart saves most transcendental calls (ratings of generated
    text pile up in the top level). :func:`prepare_ordinal` sorted the ratings into these
    three contiguous blocks.
    """
    ng = len(data.coords["design"])
    k = data.n_levels
    flat = cuts.reshape((-1,))
    base = (data.obs_dim * ng + data.obs_design) * (k - 1)
    nb = int(np.sum(data.y == 0))
    nt = int(np.sum(data.y == k - 1))
    bottom, top, mid = slice(0, nb), slice(nb, nb + nt), slice(nb + nt, data.n_obs)
    terms = []
    if nb:
        terms.append(_log_cdf(flat[base[bottom]] - lp[bottom], link).sum())
    if nt:
        terms.append(_log_cdf(lp[top] - flat[base[top] + k - 2], link).sum())
    if data.n_obs > nb + nt:
        y = data.y[mid]
        hi = flat[base[mid] + y] - lp[mid]
        lo = flat[base[mid] + y - 1] - lp[mid]
        terms.append(_interval_logp(lo, hi, link, pt).sum())
    pm.Potential("ratings_loglik", pt.add(*terms) if len(terms) > 1 else terms[0])


# ---------------------------------------------------------------------------- model


class OrdinalRaters(Model):
    """Many-facet ordinal rater model (graded response) with sentence nesting and length.

    Latent answer quality ``eta_id = s_m(i)d + q_q(i)d + e_id`` (system effects sum to zero
    over systems; question and residual effects are normal with scales per dimension);
    a sentence-level rating uses ``eta_id + w_sd`` with ``w_sd ~ N(0, tau_d)``. Rater ``j``
    rates on dimension ``d`` under design ``g`` with
    ``P(y <= k) = F(c_dgk - (lambda_jdg * eta - delta_jdg + beta_jdg * z(log length_i)))``,
    ``F`` logistic or normal. Human raters are partially pooled: ``log lambda_jdg =
    m_dg + u_j + v_jdg`` and ``delta_jdg = a_j + b_jdg``, where the rater (``u``, ``a``)
    and cell (``v``, ``b``) deviations sum to zero over the human panel, and
    ``m_d,ref = 0`` for the reference design (the first design with whole-answer ratings):
    the cut-points carry the location, the reference design's panel the latent scale. Raters whose
    ``rater_kind`` is not ``"human"`` (an LLM judge) get their own unpooled parameters,
    including their own length effect, reported apart. Latent answer, question and sentence
    effects are non-centred; the human raters' deviations are centred when the data hold
    many ratings per rater cell (see ``centred``).

    Parameters
    ----------
    priors : mapping, optional
        Overrides of :attr:`default_priors` by name.
    link : {"logit", "probit"}
        Link function of the cumulative model.
    length : {"auto", True, False}
        Include the length covariate (``"auto"``: when the ratings have ``length``).
    length_by_rater : bool
        Let the length effect vary by human rater around the dimension x design effect.
    pointwise : {"answer", "rating"}
        Store the log-likelihood per answer x design (summed over its ratings; the unit of
        LOO between designs) or per rating.
    centred : bool, optional
        Sample the human raters' deviations centred (``a_j ~ N(0, sigma)``) or non-centred
        (``a_j = sigma z_j``). Default (None): centred when the median human rater x
        dimension x design cell holds at least 20 ratings (see :meth:`is_centred`).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> from raterstats.models.ordinal import OrdinalRaters
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> m = OrdinalRaters().build(r)
    >>> m.named_vars_to_dims["severity"]
    ('rater', 'dimension', 'design')
    """

    name: ClassVar[str] = "ordinal_raters"
    cli_names: ClassVar[tuple[str, ...]] = ("ordinal",)
    description: ClassVar[str] = (
        "an ordinal many-facet rater model (graded-response likelihood with rater severity "
        "and discrimination; Samejima 1969, Linacre 1989, Patz et al. 2002)"
    )
    references: ClassVar[tuple[str, ...]] = (
        "Samejima, F. (1969). Estimation of latent ability using a response pattern of "
        "graded scores. Psychometrika Monograph 17. https://doi.org/10.1007/BF03372160",
        "Linacre, J. M. (1989). Many-facet Rasch measurement. MESA Press.",
        "Patz, R. J., Junker, B. W., Johnson, M. S., & Mariano, L. T. (2002). The "
        "hierarchical rater model for rated test items. J. Educ. Behav. Stat. 27(4). "
        "https://doi.org/10.3102/10769986027004341",
    )
    default_priors: ClassVar[dict[str, Prior]] = {
        "system_effect": Prior("Normal", sigma=1.0),
        "sigma_question": Prior("HalfNormal", sigma=1.0),
        "sigma_residual": Prior("HalfNormal", sigma=1.0),
        "sigma_sentence": Prior("HalfNormal", sigma=1.0),
        "log_discrimination_design": Prior("Normal", mu=0.0, sigma=0.5),
        "sigma_discrimination_rater": Prior("HalfNormal", sigma=0.5),
        "sigma_discrimination_cell": Prior("HalfNormal", sigma=0.5),
        "sigma_severity_rater": Prior("HalfNormal", sigma=1.0),
        "sigma_severity_cell": Prior("HalfNormal", sigma=1.0),
        "length_effect": Prior("Normal", mu=0.0, sigma=1.0),
        "sigma_length_rater": Prior("HalfNormal", sigma=0.25),
        "cutpoints": Prior("Normal", mu=0.0, sigma=3.0),
        "judge_log_discrimination": Prior("Normal", mu=0.0, sigma=1.0),
        "judge_severity": Prior("Normal", mu=0.0, sigma=1.5),
        "judge_length_effect": Prior("Normal", mu=0.0, sigma=1.0),
    }
    default_options: ClassVar[dict[str, Any]] = {
        "link": "logit",
        "length": "auto",
        "length_by_rater": False,
        "pointwise": "answer",
        "centred": None,
    }
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi")

    def _check_options(self) -> None:
        o = self._options
        problems = []
        if o["link"] not in ("logit", "probit"):
            problems.append(f"link must be 'logit' or 'probit', not {o['link']!r}")
        if o["length"] not in ("auto", True, False):
            problems.append(f"length must be 'auto', True or False, not {o['length']!r}")
        if o["pointwise"] not in ("answer", "rating"):
            problems.append(f"pointwise must be 'answer' or 'rating', not {o['pointwise']!r}")
        if o["centred"] not in (None, True, False):
            problems.append(f"centred must be True, False or None, not {o['centred']!r}")
        if problems:
            raise ValueError("; ".join(problems))

    def fit(
        self, ratings: Ratings, *, draws: int = 2000, tune: int = 500, **options: Any
    ) -> xr.DataTree:
        """Fit the model; as :meth:`raterstats.models.base.Model.fit`, with NUTS defaults of
        2,000 draws after 500 tuning steps per chain.

        The scale parameters of the sentence-level design (its discrimination mean, the
        sentence scale) and of the answer level mix slowest: on the built-in study their bulk
        ESS is about 0.12 per draw, so 4 x 2,000 draws give a minimum bulk ESS of about 900
        (915 measured, max R-hat 1.006, 260 s on 2 cores; ``benchmarks/ordinal.py``) and
        nutpie's step-size and mass-matrix adaptation settles within 500 tuning steps.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=2, random_seed=1,
        ...                          progress=False)
        >>> dict(dt.posterior.sizes)["draw"]
        50
        """
        return super().fit(ratings, draws=draws, tune=tune, **options)

    # -------------------------------------------------------------- data and model

    def is_centred(self, data: OrdinalData) -> bool:
        """Whether the human raters' deviations (``u``, ``v``, ``a``, ``b``) are sampled
        centred: the ``centred`` option, or by default when the median human rater x
        dimension x design cell holds at least 20 ratings. The data then pin every deviation
        down, and the non-centred form (``deviation = sigma * z``) would tie each ``z`` to its
        ``sigma`` along a curved ridge that NUTS crosses slowly; with few ratings per cell
        the prior dominates and the non-centred form has the better geometry."""
        c = self._options["centred"]
        if c is not None:
            return bool(c)
        human = data.obs_rater < data.n_humans
        if not human.any():
            return False
        G = len(data.coords["design"])
        D = len(data.coords["dimension"])
        cell = (data.obs_rater[human] * D + data.obs_dim[human]) * G + data.obs_design[human]
        counts = np.bincount(cell, minlength=data.n_humans * D * G)
        return bool(np.median(counts) >= 20)

    def prepare(self, ratings: Ratings) -> OrdinalData:
        super().prepare(ratings)
        return prepare_ordinal(ratings, length=self._options["length"])

    def _linear_predictor(self, data: OrdinalData) -> tuple[Any, Any]:
        """Build the free variables and return (linear predictor, cut-points) tensors.

        The parameterisation is the one of the compiled density
        (:mod:`raterstats.models.ordinal.kernels`): zero-sum effects are standard normals
        mapped by an orthonormal zero-sum basis, scales are log-transformed half-normals.
        """
        p = self._priors
        nd = len(data.coords["dimension"])
        ng = len(data.coords["design"])
        nh = data.n_humans
        nj = len(data.coords["judge"])
        nm = len(data.coords["system"])
        # latent quality
        if data.use_system:
            bm = zero_sum_basis(nm)
            sz = pm.Normal("system_z", 0.0, 1.0, dims=("dimension", "system_basis"))
            s_eff = pm.Deterministic(
                "system_effect",
                float(p["system_effect"].param("sigma", 1.0)) * pt.dot(sz, bm.T),
                dims=("dimension", "system"),
            )
            eta = s_eff.T[data.item_system]
        else:
            eta = pt.zeros((len(data.coords["item"]), nd))
        # question effects and residuals sum to zero (zero-sum normals): the cut-points
        # alone carry the location, which otherwise trades against their means
        if data.use_question:
            nq = len(data.coords["question"])
            sq = p["sigma_question"].create("sigma_question", dims="dimension")
            qz = pm.Normal("question_z", 0.0, 1.0, dims=("question_basis", "dimension"))
            q_eff = pm.Deterministic(
                "question_effect", _zero_sum_extend_pt(qz, nq) * sq, dims=("question", "dimension")
            )
            eta = eta + q_eff[data.item_question]
        se = p["sigma_residual"].create("sigma_residual", dims="dimension")
        ez = pm.Normal("residual_z", 0.0, 1.0, dims=("item_basis", "dimension"))
        e_full = _zero_sum_extend_pt(ez, len(data.coords["item"]))
        eta = pm.Deterministic("eta", eta + e_full * se, dims=("item", "dimension"))
        # human raters: discrimination (log scale) and severity, partially pooled
        ref = data.coords["design"].index(data.reference_design)
        lmp = p["log_discrimination_design"]
        if ng > 1:
            lm_free = pm.Normal(
                "log_discrimination_design",
                float(lmp.param("mu", 0.0)),
                float(lmp.param("sigma", 0.5)),
                dims=("dimension", "design_contrast"),
            )
            cols = [lm_free[:, k] for k in range(ng - 1)]
            cols.insert(ref, pt.zeros((nd,)))
            lm = pt.stack(cols, axis=1)
        else:
            lm = pt.zeros((nd, 1))
        lm = pm.Deterministic("log_discrimination_mean", lm, dims=("dimension", "design"))
        # sentences: with a sentence design other than the reference, the free variable is
        # log tau_d + m_{d, gs} (unit-Jacobian shear; the prior of tau enters as a potential)
        gs = sentence_design(data)
        if data.has_sentences:
            tp = p["sigma_sentence"]
            if gs >= 0:
                shifted = pm.Flat("sigma_sentence_shifted", dims="dimension")
                log_tau = shifted - lm[:, gs]
                tau = pm.Deterministic("sigma_sentence", pt.exp(log_tau), dims="dimension")
                params = {
                    k: (np.asarray(v) if isinstance(v, list) else v) for k, v in tp.params.items()
                }
                prior_tau = getattr(pm, tp.dist).dist(**params, shape=(nd,))
                pm.Potential("sigma_sentence_prior", (pm.logp(prior_tau, tau) + log_tau).sum())
            else:
                tau = tp.create("sigma_sentence", dims="dimension")
            wz = pm.Normal("sentence_z", 0.0, 1.0, dims=("sentence", "dimension"))
            w = pt.concatenate([pt.zeros((1, nd)), wz * tau], axis=0)
        else:
            w = pt.zeros((1, nd))
        su = p["sigma_discrimination_rater"].create("sigma_discrimination_rater")
        sv = p["sigma_discrimination_cell"].create("sigma_discrimination_cell")
        # deviations of the human raters sum to zero over the panel: the population mean
        # is exactly exp(m_dg), and the latent scale is identified by the reference design
        bh = zero_sum_basis(nh)
        cen = self.is_centred(data)
        sa = p["sigma_severity_rater"].create("sigma_severity_rater")
        sb = p["sigma_severity_cell"].create("sigma_severity_cell")
        cell_dims = ("dimension", "design", "human_basis")

        def deviation(name: str, sigma: Any, dims: Any) -> Any:
            # coordinates in the zero-sum basis: centred N(0, sigma), or sigma * N(0, 1)
            if cen:
                return pm.Normal(f"{name}_basis", 0.0, sigma, dims=dims)
            return sigma * pm.Normal(f"{name}_z", 0.0, 1.0, dims=dims)

        u = deviation("discrimination_rater", su, "human_basis")
        v = deviation("discrimination_cell", sv, cell_dims)
        log_lam = lm[None] + pt.dot(bh, u)[:, None, None] + pt.dot(v, bh.T).transpose(2, 0, 1)
        a = deviation("severity_rater", sa, "human_basis")
        b = deviation("severity_cell", sb, cell_dims)
        sev = pt.dot(bh, a)[:, None, None] + pt.dot(b, bh.T).transpose(2, 0, 1)
        beta_h = None
        if data.has_length:
            bp = p["length_effect"]
            beta = pm.Normal(
                "length_effect",
                float(bp.param("mu", 0.0)),
                float(bp.param("sigma", 1.0)),
                dims=("dimension", "design"),
            )
            beta_h = pt.broadcast_to(beta[None], (nh, nd, ng))
            if self._options["length_by_rater"]:
                sl = p["sigma_length_rater"].create("sigma_length_rater")
                lz = pm.Normal("length_rater_z", 0.0, 1.0, dims=("human", "dimension", "design"))
                beta_h = beta_h + sl * lz
        # judges (LLM raters): unpooled, reported apart
        if nj:
            jdims = ("judge", "dimension", "design")
            jl = p["judge_log_discrimination"].create("judge_log_discrimination", dims=jdims)
            js = p["judge_severity"].create("judge_severity", dims=jdims)
            log_lam = pt.concatenate([log_lam, jl], axis=0)
            sev = pt.concatenate([sev, js], axis=0)
            if data.has_length:
                jb = p["judge_length_effect"].create("judge_length_effect", dims=jdims)
                beta_h = pt.concatenate([beta_h, jb], axis=0)
        lam = pm.Deterministic(
            "discrimination", pt.exp(log_lam), dims=("rater", "dimension", "design")
        )
        delta = pm.Deterministic("severity", sev, dims=("rater", "dimension", "design"))
        cuts = ordered_cutpoints(p["cutpoints"], data)
        # linear predictor per rating (flat gathers)
        cell = (data.obs_rater * nd + data.obs_dim) * ng + data.obs_design
        lat = eta.reshape((-1,))[data.obs_item * nd + data.obs_dim]
        lat = lat + w.reshape((-1,))[data.obs_sentence * nd + data.obs_dim]
        lp = lam.reshape((-1,))[cell] * lat - delta.reshape((-1,))[cell]
        if beta_h is not None:
            lp = lp + beta_h.reshape((-1,))[cell] * data.z_length[data.obs_item]
        return lp, cuts

    def build_model(self, data: OrdinalData) -> pm.Model:
        coords = {k: v for k, v in data.coords.items() if v}
        link = self._options["link"]
        with pm.Model(coords=coords) as model:
            lp, cuts = self._linear_predictor(data)
            ratings_potential(lp, cuts, data, link)
        return model

    def initial_values(self, data: OrdinalData) -> dict[str, np.ndarray] | None:
        return None

    # -------------------------------------------------------------- compiled density

    def _fast_path_ok(self) -> bool:
        p = self._priors
        halfnormal = (
            "sigma_question",
            "sigma_residual",
            "sigma_sentence",
            "sigma_discrimination_rater",
            "sigma_discrimination_cell",
            "sigma_severity_rater",
            "sigma_severity_cell",
            "sigma_length_rater",
        )
        normal = (
            "system_effect",
            "log_discrimination_design",
            "length_effect",
            "cutpoints",
            "judge_log_discrimination",
            "judge_severity",
            "judge_length_effect",
        )
        return (
            self._options["link"] == "logit"
            and all(p[k].dist == "HalfNormal" for k in halfnormal)
            and all(p[k].dist == "Normal" for k in normal)
            and all(np.ndim(v) == 0 for k in (*halfnormal, *normal) for v in p[k].params.values())
        )

    def layout(self, data: OrdinalData) -> dict[str, Any]:
        """Layout of the compiled density's unconstrained vector for these data: block
        ``offsets`` (in the order of ``_ordinal_numba.BLOCKS``), ``sizes`` (the integer
        settings), ``prior`` (the prior constants) and ``prior_scale`` (the half-normal
        scale of every ``log_*`` block)."""
        p = self._priors
        c = data.coords
        D, G, H = len(c["dimension"]), len(c["design"]), data.n_humans
        J, M, Q = len(c["judge"]), len(c["system"]), len(c["question"])
        n_item, S_, K = len(c["item"]), len(c["sentence"]), data.n_levels
        use_sys, use_q = data.use_system, data.use_question
        use_len, lbr = data.has_length, bool(self._options["length_by_rater"]) and data.has_length
        ref = c["design"].index(data.reference_design)
        sizes = {
            "sys_z": D * (M - 1) if use_sys else 0,
            "log_sq": D if use_q else 0,
            "qz": (Q - 1) * D if use_q else 0,
            "log_se": D,
            "ez": (n_item - 1) * D,
            "log_tau": D if data.has_sentences else 0,
            "wz": S_ * D,
            "lm": D * (G - 1),
            "log_su": 1,
            "log_sv": 1,
            "uz": H - 1,
            "vz": D * G * (H - 1),
            "log_sa": 1,
            "log_sb": 1,
            "az": H - 1,
            "bz": D * G * (H - 1),
            "beta": D * G if use_len else 0,
            "log_sl": 1 if lbr else 0,
            "lz": H * D * G if lbr else 0,
            "jl": J * D * G,
            "js": J * D * G,
            "jb": J * D * G if use_len else 0,
            "cuts": D * G * (K - 1),
        }
        off = np.zeros(len(BLOCKS) + 1, dtype=np.int64)
        off[1:] = np.cumsum([sizes[b] for b in BLOCKS])
        ndim = int(off[-1])
        sz = np.array(
            [
                D,
                G,
                H,
                J,
                M,
                Q,
                n_item,
                S_,
                K,
                int(use_sys),
                int(use_q),
                int(data.has_sentences),
                int(use_len),
                int(lbr),
                ref,
                int(self.is_centred(data)),
                sentence_design(data),
            ],
            dtype=np.int64,
        )

        def par(key: str, name: str, default: float) -> float:
            return float(p[key].param(name, default))

        prior = np.array(
            [
                par("system_effect", "sigma", 1.0),
                par("sigma_question", "sigma", 1.0),
                par("sigma_residual", "sigma", 1.0),
                par("sigma_sentence", "sigma", 1.0),
                par("log_discrimination_design", "mu", 0.0),
                par("log_discrimination_design", "sigma", 0.5),
                par("sigma_discrimination_rater", "sigma", 0.5),
                par("sigma_discrimination_cell", "sigma", 0.5),
                par("sigma_severity_rater", "sigma", 1.0),
                par("sigma_severity_cell", "sigma", 1.0),
                par("length_effect", "mu", 0.0),
                par("length_effect", "sigma", 1.0),
                par("sigma_length_rater", "sigma", 0.25),
                par("cutpoints", "mu", 0.0),
                par("cutpoints", "sigma", 3.0),
                par("judge_log_discrimination", "mu", 0.0),
                par("judge_log_discrimination", "sigma", 1.0),
                par("judge_severity", "mu", 0.0),
                par("judge_severity", "sigma", 1.5),
                par("judge_length_effect", "mu", 0.0),
                par("judge_length_effect", "sigma", 1.0),
            ]
        )
        scale_of = {
            "log_sq": prior[1],
            "log_se": prior[2],
            "log_tau": prior[3],
            "log_su": prior[6],
            "log_sv": prior[7],
            "log_sa": prior[8],
            "log_sb": prior[9],
            "log_sl": prior[12],
        }
        return {
            "offsets": off,
            "sizes": sz,
            "prior": prior,
            "prior_scale": scale_of,
            "ndim": ndim,
            "flags": (use_sys, use_q, use_len, lbr, ref),
        }

    def has_density(self, data: OrdinalData) -> bool:
        return self._fast_path_ok()

    def density(
        self, data: OrdinalData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """The log density with a hand-written gradient (numba, compiled once per
        installation) for nutpie; None for the probit link or non-default prior families.
        The model has no EM estimate, so ``start`` must be None."""
        if start is not None:
            raise ValueError(f"{self.name}: no starting point other than the model's own")
        if not self.has_density(data):
            return None
        from raterstats.models.ordinal.kernels import ordinal_logp_grad

        lay = self.layout(data)
        off, sz, prior, ndim = lay["offsets"], lay["sizes"], lay["prior"], lay["ndim"]
        use_sys, use_q, use_len, lbr, ref = lay["flags"]
        c = data.coords
        D, G, H = len(c["dimension"]), len(c["design"]), data.n_humans
        J, M, Q = len(c["judge"]), len(c["system"]), len(c["question"])
        n_item, S_ = len(c["item"]), len(c["sentence"])
        K = data.n_levels
        bm = zero_sum_basis(M)
        bh = zero_sum_basis(H)
        cen = bool(sz[15])
        gs = int(sz[16])
        arrays = (
            data.obs_item.astype(np.int64),
            data.obs_dim.astype(np.int64),
            data.obs_design.astype(np.int64),
            data.obs_rater.astype(np.int64),
            data.obs_sentence.astype(np.int64),
            data.y.astype(np.int64),
            data.item_system.astype(np.int64),
            data.item_question.astype(np.int64),
            np.ascontiguousarray(data.z_length, dtype=np.float64),
            bm,
            bh,
        )

        def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
            g = np.empty(ndim)
            lp = ordinal_logp_grad(x, g, off, sz, prior, *arrays)
            return float(lp), g

        def blk(x: np.ndarray, name: str) -> np.ndarray:
            k = BLOCKS.index(name)
            return x[off[k] : off[k + 1]]

        def expand(x: np.ndarray) -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            sys_eff = np.zeros((D, M))
            if use_sys:
                sys_eff = prior[0] * blk(x, "sys_z").reshape(D, M - 1) @ bm.T
                out["system_effect"] = sys_eff
            eta = sys_eff[:, data.item_system].T.copy()
            if use_q:
                sq = np.exp(blk(x, "log_sq"))
                q_eff = zero_sum_extend_np(blk(x, "qz").reshape(Q - 1, D)) * sq
                out["sigma_question"] = sq
                out["question_effect"] = q_eff
                eta += q_eff[data.item_question]
            se = np.exp(blk(x, "log_se"))
            out["sigma_residual"] = se
            eta += zero_sum_extend_np(blk(x, "ez").reshape(n_item - 1, D)) * se
            out["eta"] = eta
            lm = np.zeros((D, G))
            if G > 1:
                lm[:, [g for g in range(G) if g != ref]] = blk(x, "lm").reshape(D, G - 1)
            out["log_discrimination_mean"] = lm
            if data.has_sentences:
                shift = lm[:, gs] if gs >= 0 else 0.0
                out["sigma_sentence"] = np.exp(blk(x, "log_tau") - shift)
                out["sentence_z"] = blk(x, "wz").reshape(S_, D)
            su, sv = float(np.exp(x[off[8]])), float(np.exp(x[off[9]]))
            sa, sb = float(np.exp(x[off[12]])), float(np.exp(x[off[13]]))
            out["sigma_discrimination_rater"] = np.asarray(su)
            out["sigma_discrimination_cell"] = np.asarray(sv)
            out["sigma_severity_rater"] = np.asarray(sa)
            out["sigma_severity_cell"] = np.asarray(sb)
            if cen:  # the blocks hold the deviations' basis coordinates themselves
                su = sv = sa = sb = 1.0
            log_lam = (
                lm[None]
                + su * (bh @ blk(x, "uz"))[:, None, None]
                + sv * (blk(x, "vz").reshape(D, G, H - 1) @ bh.T).transpose(2, 0, 1)
            )
            sev = sa * (bh @ blk(x, "az"))[:, None, None] + sb * (
                blk(x, "bz").reshape(D, G, H - 1) @ bh.T
            ).transpose(2, 0, 1)
            if use_len:
                out["length_effect"] = blk(x, "beta").reshape(D, G)
                if lbr:
                    out["sigma_length_rater"] = np.asarray(np.exp(x[off[BLOCKS.index("log_sl")]]))
                    out["length_rater_z"] = blk(x, "lz").reshape(H, D, G)
            if J:
                jl = blk(x, "jl").reshape(J, D, G)
                js = blk(x, "js").reshape(J, D, G)
                out["judge_log_discrimination"] = jl
                out["judge_severity"] = js
                log_lam = np.concatenate([log_lam, jl])
                sev = np.concatenate([sev, js])
                if use_len:
                    out["judge_length_effect"] = blk(x, "jb").reshape(J, D, G)
            out["discrimination"] = np.exp(log_lam)
            out["severity"] = sev
            raw = blk(x, "cuts").reshape(D, G, K - 1)
            cuts = np.concatenate([raw[..., :1], np.exp(raw[..., 1:])], axis=-1).cumsum(-1)
            out["cutpoints"] = cuts
            return out

        dims = {
            "system_effect": ("dimension", "system"),
            "sigma_question": ("dimension",),
            "question_effect": ("question", "dimension"),
            "sigma_residual": ("dimension",),
            "eta": ("item", "dimension"),
            "sigma_sentence": ("dimension",),
            "sentence_z": ("sentence", "dimension"),
            "log_discrimination_mean": ("dimension", "design"),
            "sigma_discrimination_rater": (),
            "sigma_discrimination_cell": (),
            "sigma_severity_rater": (),
            "sigma_severity_cell": (),
            "length_effect": ("dimension", "design"),
            "sigma_length_rater": (),
            "length_rater_z": ("human", "dimension", "design"),
            "judge_log_discrimination": ("judge", "dimension", "design"),
            "judge_severity": ("judge", "dimension", "design"),
            "judge_length_effect": ("judge", "dimension", "design"),
            "discrimination": ("rater", "dimension", "design"),
            "severity": ("rater", "dimension", "design"),
            "cutpoints": ("dimension", "design", "cut"),
        }
        probe = expand(np.zeros(ndim))
        shapes = {k: tuple(np.shape(v)) for k, v in probe.items()}
        x_start = np.zeros(ndim)
        for name, val in (
            ("log_se", 0.5),
            ("log_sq", 0.5),
            ("log_tau", 0.5),
            ("log_su", 0.2),
            ("log_sv", 0.2),
            ("log_sa", 0.5),
            ("log_sb", 0.3),
            ("log_sl", 0.1),
        ):
            k = BLOCKS.index(name)
            x_start[off[k] : off[k + 1]] = np.log(val)
        cut0 = data.initial_cuts
        raw0 = np.concatenate(
            [cut0[..., :1], np.log(np.maximum(np.diff(cut0, axis=-1), 1e-3))], axis=-1
        )
        k = BLOCKS.index("cuts")
        x_start[off[k] : off[k + 1]] = raw0.reshape(-1)

        def initial_point(rng: np.random.Generator) -> np.ndarray:
            return x_start + rng.uniform(-0.1, 0.1, ndim)

        return Density(
            ndim=ndim,
            logp_grad=logp_grad,
            expand=expand,
            var_shapes=shapes,
            var_dims={k: dims[k] for k in shapes},
            coords={k: v for k, v in c.items() if v},
            initial_point=initial_point,
        )

    # -------------------------------------------------------------- stored groups

    def data_groups(self, data: OrdinalData, model: pm.Model | None) -> dict[str, xr.Dataset]:
        frame = data.frame
        assert frame is not None
        obs = xr.Dataset(
            {
                "rating": ("rating_id", data.y + 1),
            },
            coords={
                "rating_id": np.arange(data.n_obs),
                "rating_item": ("rating_id", frame[S.ITEM].to_numpy().astype(str)),
                "rating_segment": (
                    "rating_id",
                    frame[S.SEGMENT].fill_null("").to_numpy().astype(str),
                ),
                "rating_rater": ("rating_id", frame[S.RATER].to_numpy().astype(str)),
                "rating_dimension": ("rating_id", frame[S.DIMENSION].to_numpy().astype(str)),
                "rating_design": ("rating_id", frame[S.DESIGN].to_numpy().astype(str)),
                "rating_repeat": ("rating_id", frame[S.REPEAT].to_numpy()),
                "rating_source_row": ("rating_id", frame[S.ROW].to_numpy()),
            },
            attrs={"levels": [str(v) for v in data.levels], "note": "rating is the 1-based level"},
        )
        c = data.coords
        const = xr.Dataset(
            {
                "obs_item": ("rating_id", data.obs_item),
                "obs_dimension": ("rating_id", data.obs_dim),
                "obs_design": ("rating_id", data.obs_design),
                "obs_rater": ("rating_id", data.obs_rater),
                "obs_sentence": ("rating_id", data.obs_sentence),
                "item_system": ("item", np.asarray(c["system"], dtype=str)[data.item_system]),
                "item_question": (
                    "item",
                    np.asarray(c["question"], dtype=str)[data.item_question]
                    if data.has_question
                    else np.full(len(c["item"]), ""),
                ),
                "z_length": ("item", data.z_length),
                "rater_is_human": ("rater", np.arange(len(c["rater"])) < data.n_humans),
                "sentence_item": (
                    "sentence",
                    np.asarray(c["item"], dtype=str)[data.sentence_item]
                    if data.has_sentences
                    else np.zeros(0, dtype=str),
                ),
                "design_has_sentences": ("design", data.design_has_sentences),
            },
            coords={
                "rating_id": np.arange(data.n_obs),
                "item": c["item"],
                "rater": c["rater"],
                "sentence": c["sentence"],
                "design": c["design"],
            },
            attrs={
                "link": self._options["link"],
                "n_levels": data.n_levels,
                "reference_design": data.reference_design,
                "length_log_mean": data.length_log_mean,
                "length_log_sd": data.length_log_sd,
                "has_length": int(data.has_length),
                "has_system": int(data.has_system),
            },
        )
        return {"observed_data": obs, "constant_data": const}

    def log_likelihood(
        self, dt: xr.DataTree, data: OrdinalData, model: pm.Model | None
    ) -> xr.Dataset:
        post = dt["posterior"].to_dataset()
        link = self._options["link"]
        n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
        if self._options["pointwise"] == "rating":
            ll = summed_log_likelihood(post, data, link, np.arange(data.n_obs), data.n_obs)
            return xr.Dataset(
                {"rating": (("chain", "draw", "rating_id"), ll)},
                coords={"rating_id": np.arange(data.n_obs)},
            )
        ni, ng = len(data.coords["item"]), len(data.coords["design"])
        key = data.obs_item * ng + data.obs_design
        summed = summed_log_likelihood(post, data, link, key, ni * ng)
        summed[..., np.setdiff1d(np.arange(ni * ng), key)] = np.nan  # answer not rated there
        return xr.Dataset(
            {
                "answer": (
                    ("chain", "draw", "item", "design"),
                    summed.reshape(n_chain, n_draw, ni, ng),
                )
            },
            coords={"item": data.coords["item"], "design": data.coords["design"]},
            attrs={
                "note": "log-likelihood of all ratings of an answer under a design; NaN where "
                "the answer was not rated under that design"
            },
        )

    def posterior_predictive(
        self, dt: xr.DataTree, data: OrdinalData, model: pm.Model | None, rng: np.random.Generator
    ) -> xr.Dataset:
        post = dt["posterior"].to_dataset()
        cdf = expit if self._options["link"] == "logit" else ndtr
        out = np.empty((post.sizes["chain"], post.sizes["draw"], data.n_obs), dtype=np.int8)
        for sl, part in _draw_chunks(post):
            lp, cuts = _lp_and_cuts(part, data)
            cum = cdf(cuts - lp[..., None])  # P(y <= k), k = 1..K-1
            u = rng.random(lp.shape)
            out[:, sl] = 1 + np.sum(u[..., None] > cum, axis=-1)
        return xr.Dataset(
            {"rating": (("chain", "draw", "rating_id"), out)},
            coords={"rating_id": np.arange(data.n_obs)},
            attrs={"note": "replicated ratings as 1-based levels"},
        )


def _draw_chunks(post: xr.Dataset, size: int = 50) -> Any:
    """(draw slice, posterior restricted to it) in chunks, to bound memory."""
    n = post.sizes["draw"]
    for start in range(0, n, size):
        sl = slice(start, min(start + size, n))
        yield sl, post.isel(draw=sl)


def _lp_and_cuts(post: xr.Dataset, data: OrdinalData) -> tuple[np.ndarray, np.ndarray]:
    """Linear predictor (chain, draw, rating) and each rating's cut-points (.., K-1)."""
    lam = post["discrimination"].transpose("chain", "draw", "rater", "dimension", "design").values
    sev = post["severity"].transpose("chain", "draw", "rater", "dimension", "design").values
    eta = post["eta"].transpose("chain", "draw", "item", "dimension").values
    cuts = post["cutpoints"].transpose("chain", "draw", "dimension", "design", "cut").values
    lat = eta[:, :, data.obs_item, data.obs_dim]
    if data.has_sentences:
        tau = post["sigma_sentence"].transpose("chain", "draw", "dimension").values
        wz = post["sentence_z"].transpose("chain", "draw", "sentence", "dimension").values
        fine = data.obs_sentence > 0
        s = data.obs_sentence[fine] - 1
        dd = data.obs_dim[fine]
        lat[:, :, fine] += wz[:, :, s, dd] * tau[:, :, dd]
    cell = (data.obs_rater, data.obs_dim, data.obs_design)
    lp = lam[(slice(None), slice(None), *cell)] * lat - sev[(slice(None), slice(None), *cell)]
    if data.has_length:
        beta = _length_effects(post, data)
        lp += beta[(slice(None), slice(None), *cell)] * data.z_length[data.obs_item]
    return lp, cuts[:, :, data.obs_dim, data.obs_design]


def _length_effects(post: xr.Dataset, data: OrdinalData) -> np.ndarray:
    """Length effect per (chain, draw, rater, dimension, design)."""
    b = post["length_effect"].transpose("chain", "draw", "dimension", "design").values
    nh = data.n_humans
    out = np.repeat(b[:, :, None], nh, axis=2)
    if "length_rater_z" in post:
        sl = post["sigma_length_rater"].values[:, :, None, None, None]
        out = (
            out
            + sl
            * post["length_rater_z"]
            .transpose("chain", "draw", "human", "dimension", "design")
            .values
        )
    if "judge_length_effect" in post:
        jb = (
            post["judge_length_effect"]
            .transpose("chain", "draw", "judge", "dimension", "design")
            .values
        )
        out = np.concatenate([out, jb], axis=2)
    return out


def summed_log_likelihood(
    post: xr.Dataset, data: OrdinalData, link: str, key: np.ndarray, n_out: int
) -> np.ndarray:
    """Log-likelihood of the ratings summed by ``key`` (rating -> output index), shape
    (chain, draw, n_out): ``key = arange(n_obs)`` gives it per rating.

    The logistic link runs a compiled kernel over blocks of draws on two threads (about
    20 ns per rating and draw, against 300 ns for the NumPy form); the probit link uses
    :func:`rating_log_likelihood`.
    """
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    key = np.asarray(key, dtype=np.int64)
    out = np.zeros((n_chain * n_draw, n_out))
    if link != "logit":
        for sl, part in _draw_chunks(post):
            ll = rating_log_likelihood(part, data, link).reshape(-1, data.n_obs)
            rows = np.arange(n_chain)[:, None] * n_draw + np.arange(n_draw)[sl][None, :]
            block = np.zeros((ll.shape[0], n_out))
            np.add.at(block.T, key, ll.T)
            out[rows.reshape(-1)] = block
        return out.reshape(n_chain, n_draw, n_out)
    from concurrent.futures import ThreadPoolExecutor

    from raterstats.models.ordinal.kernels import rating_loglik_logit

    def flat(name: str, *dims: str) -> np.ndarray:
        v = post[name].transpose("chain", "draw", *dims).values
        return np.ascontiguousarray(v.reshape(n_chain * n_draw, *v.shape[2:]), dtype=float)

    cdg = ("rater", "dimension", "design")
    lam, sev = flat("discrimination", *cdg), flat("severity", *cdg)
    eta = flat("eta", "item", "dimension")
    cuts = flat("cutpoints", "dimension", "design", "cut")
    if data.has_length:
        bet = np.ascontiguousarray(_length_effects(post, data).reshape(lam.shape), dtype=float)
    else:
        bet = np.zeros_like(lam)
    nd = eta.shape[-1]
    n_sent = len(data.coords["sentence"])
    o_item, o_dim, o_design, o_rater, o_sent = (
        np.ascontiguousarray(a, dtype=np.int64)
        for a in (data.obs_item, data.obs_dim, data.obs_design, data.obs_rater, data.obs_sentence)
    )
    y = np.ascontiguousarray(data.y, dtype=np.int64)
    zlen = np.ascontiguousarray(
        data.z_length if data.has_length else np.zeros(eta.shape[1]), dtype=float
    )

    if data.has_sentences:  # views: the sentence deviations are scaled block by block
        tau = post["sigma_sentence"].transpose("chain", "draw", "dimension").values
        tau = tau.reshape(n_chain * n_draw, nd)
        wz = post["sentence_z"].transpose("chain", "draw", "sentence", "dimension").values
        wz = wz.reshape(n_chain * n_draw, n_sent, nd)

    def run(lo: int, hi: int) -> None:
        for a in range(lo, hi, 250):
            b = min(a + 250, hi)
            w = np.zeros((b - a, n_sent + 1, nd))
            if data.has_sentences:
                w[:, 1:] = wz[a:b] * tau[a:b, None, :]
            rating_loglik_logit(
                lam[a:b], sev[a:b], bet[a:b], eta[a:b], w, cuts[a:b], o_item, o_dim, o_design,
                o_rater, o_sent, y, zlen, key, out[a:b],
            )  # fmt: skip

    total = n_chain * n_draw
    half = total // 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        for fut in [pool.submit(run, 0, half), pool.submit(run, half, total)]:
            fut.result()
    return out.reshape(n_chain, n_draw, n_out)


def rating_log_likelihood(post: xr.Dataset, data: OrdinalData, link: str) -> np.ndarray:
    """Log-likelihood of every rating for every draw, shape (chain, draw, rating)."""
    lp, cuts = _lp_and_cuts(post, data)
    pad = np.concatenate(
        [np.full((*cuts.shape[:-1], 1), -np.inf), cuts, np.full((*cuts.shape[:-1], 1), np.inf)],
        axis=-1,
    )
    y = data.y
    idx = np.arange(y.size)
    lo = pad[:, :, idx, y] - lp
    hi = pad[:, :, idx, y + 1] - lp
    return np.asarray(_interval_logp(lo, hi, link, np))


# ---------------------------------------------------------------------------- derived

#: The parameters whose convergence the demo, the recovery test and the benchmark report:
#: the rater facets, system effects, cut-points, length effects and scales (the per-answer
#: and per-sentence effects are left out: hundreds of them, each weakly identified).
DIAGNOSED_PARAMETERS = (
    "severity",
    "discrimination",
    "system_effect",
    "cutpoints",
    "length_effect",
    "sigma_question",
    "sigma_residual",
    "sigma_sentence",
    "judge_length_effect",
)


def _check_fit(dt: xr.DataTree) -> tuple[xr.Dataset, xr.Dataset]:
    if dt.attrs.get("model") != OrdinalRaters.name:
        raise ValueError(
            f"expected a fit of OrdinalRaters (attrs['model'] == {OrdinalRaters.name!r}), "
            f"got {dt.attrs.get('model')!r}"
        )
    return dt["posterior"].to_dataset(), dt["constant_data"].to_dataset()


def _level_values(dt: xr.DataTree) -> np.ndarray:
    levels = dt["observed_data"].attrs.get("levels", [])
    try:
        return np.asarray([float(v) for v in levels])
    except ValueError:
        return np.arange(1, len(levels) + 1, dtype=float)


def _cdf(link: str) -> Any:
    return expit if link == "logit" else ndtr


def _category_probs(lp: np.ndarray, cuts: np.ndarray, link: str) -> np.ndarray:
    """P(y = k) for k = 1..K; ``cuts`` broadcasts against ``lp[..., None]``."""
    cum = _cdf(link)(cuts - lp[..., None])
    ones = np.ones((*cum.shape[:-1], 1))
    cum = np.concatenate([np.zeros_like(ones), cum, ones], axis=-1)
    return np.diff(cum, axis=-1)


def system_scores(dt: xr.DataTree) -> xr.Dataset:
    """System scores per dimension: latent effects and "fair averages" per design.

    The fair average is the expected rating of an answer of average quality for the system
    (question and residual effects at 0, mean log length) given by a typical human rater
    of the design (severity 0, the population discrimination), as in many-facet Rasch
    measurement: a score adjusted for rater severity and question difficulty.

    Returns
    -------
    xr.Dataset
        ``latent`` (chain, draw, dimension, system) and ``fair_average`` (chain, draw,
        dimension, design, system), in the units of the rating scale.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> system_scores(dt)["fair_average"].dims
    ('chain', 'draw', 'dimension', 'design', 'system')
    """
    post, const = _check_fit(dt)
    if "system_effect" not in post:
        raise ValueError("the fit has no system effects (no 'system' column in the ratings)")
    link = str(const.attrs["link"])
    s = post["system_effect"].transpose("chain", "draw", "dimension", "system")
    lam = np.exp(
        post["log_discrimination_mean"].transpose("chain", "draw", "dimension", "design").values
    )
    cuts = post["cutpoints"].transpose("chain", "draw", "dimension", "design", "cut").values
    lp = lam[..., None] * s.values[:, :, :, None, :]  # chain, draw, dim, design, system
    probs = _category_probs(lp, cuts[:, :, :, :, None, :], link)
    fair = probs @ _level_values(dt)
    return xr.Dataset(
        {
            "latent": s,
            "fair_average": (("chain", "draw", "dimension", "design", "system"), fair),
        },
        coords={"design": post["design"].values},
    )


def reliability(dt: xr.DataTree) -> xr.DataArray:
    """Model-implied reliability per dimension x design (a posterior).

    The share of latent-scale variance due to the rated unit,
    ``lambda^2 Var(eta) / (lambda^2 Var(eta) + Var(link))`` with ``Var(link) = pi^2 / 3``
    (logit) or 1 (probit), averaged over the human raters; for a sentence-level design the
    unit's variance includes the sentence deviations (``Var(eta) + tau^2``).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> reliability(dt).dims
    ('chain', 'draw', 'dimension', 'design')
    """
    post, const = _check_fit(dt)
    var_link = np.pi**2 / 3 if const.attrs["link"] == "logit" else 1.0
    var_eta = post["eta"].var("item")  # chain, draw, dimension
    has_sent = xr.DataArray(
        const["design_has_sentences"].values,
        dims="design",
        coords={"design": post["design"].values},
    )
    tau2 = post["sigma_sentence"] ** 2 if "sigma_sentence" in post else 0.0
    v = var_eta + has_sent * tau2
    human = const["rater_is_human"].values
    lam2 = post["discrimination"].isel(rater=np.flatnonzero(human)) ** 2
    rel = (lam2 * v / (lam2 * v + var_link)).mean("rater")
    return rel.transpose("chain", "draw", "dimension", "design").rename("reliability")


def prob_more_reliable(dt: xr.DataTree, a: str, b: str) -> xr.DataArray:
    """Posterior probability, per dimension, that design ``a`` is more reliable than ``b``.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> 0.0 <= float(prob_more_reliable(dt, "fine", "coarse").sel(dimension="safety")) <= 1.0
    True
    """
    rel = reliability(dt)
    return (
        (rel.sel(design=a) > rel.sel(design=b))
        .mean(("chain", "draw"))
        .rename(f"P(reliability {a} > {b})")
    )


def length_contrast(dt: xr.DataTree, a: str = "coarse", b: str = "fine") -> xr.Dataset:
    """Length effects per dimension x design and the contrast ``a - b`` (posteriors).

    ``length_effect`` is the human raters' effect of one SD of log length on the logit (or
    probit) scale; ``contrast`` measures how much more design ``a`` rewards longer answers
    than design ``b`` does, holding latent quality fixed. Judges' own effects, if any, are
    in ``judge_length_effect``.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> length_contrast(dt)["contrast"].dims
    ('chain', 'draw', 'dimension')
    """
    if dt.attrs.get("model") not in (OrdinalRaters.name, "length_effect"):
        raise ValueError(
            f"expected a fit of OrdinalRaters or LengthEffect, got model {dt.attrs.get('model')!r}"
        )
    post = dt["posterior"].to_dataset()
    if "length_effect" not in post:
        raise ValueError("the fit has no length effect (fit with a 'length' column)")
    beta = post["length_effect"]
    out = xr.Dataset(
        {
            "length_effect": beta,
            "contrast": beta.sel(design=a, drop=True) - beta.sel(design=b, drop=True),
        }
    )
    if "judge_length_effect" in post:
        out["judge_length_effect"] = post["judge_length_effect"]
    out.attrs["contrast"] = f"{a} - {b}"
    return out


def sentence_aggregation(dt: xr.DataTree, *, max_draws: int = 400) -> xr.Dataset:
    """Sentence-to-answer aggregation as posteriors, for a typical human rater.

    For every answer rated sentence by sentence: ``p_no_negative`` = P(no rated sentence is
    rated negative) and ``p_any_positive`` = P(at least one rated sentence is rated
    positive), negative / positive being the levels below / above the scale's midpoint —
    the model-based counterparts of the "fine binary" scheme.

    Returns
    -------
    xr.Dataset
        Both with dims (chain, draw, item, dimension, design) restricted to the
        sentence-level designs; ``max_draws`` draws per chain at most (evenly thinned).
    """
    post, const = _check_fit(dt)
    if "sentence_z" not in post:
        raise ValueError("the fit has no sentence-level ratings")
    n_draw = post.sizes["draw"]
    post = post.isel(draw=slice(None, None, max(1, n_draw // max_draws)))
    link = str(const.attrs["link"])
    k = int(const.attrs["n_levels"])
    neg_codes = np.arange(k) < (k - 1) / 2
    pos_codes = np.arange(k) > (k - 1) / 2
    sent_designs = [
        g
        for g, h in zip(post["design"].values, const["design_has_sentences"].values, strict=True)
        if h
    ]
    items = list(post["item"].values)
    sent_item = const["sentence_item"].values
    item_idx = np.array([items.index(i) for i in sent_item])
    eta = post["eta"].transpose("chain", "draw", "item", "dimension").values
    w = (
        (post["sentence_z"] * post["sigma_sentence"])
        .transpose("chain", "draw", "sentence", "dimension")
        .values
    )
    lat = eta[:, :, item_idx, :] + w  # chain, draw, sentence, dimension
    zlen = const["z_length"].values[item_idx]
    rated = np.unique(item_idx)
    onehot = (item_idx[:, None] == rated[None, :]).astype(float)  # sentence x rated answer
    out_neg, out_pos = [], []
    for g in sent_designs:
        lam = np.exp(post["log_discrimination_mean"].sel(design=g).values)  # c, d, dim
        cuts = post["cutpoints"].sel(design=g).transpose("chain", "draw", "dimension", "cut").values
        lp = lam[:, :, None, :] * lat
        if "length_effect" in post:
            lp = lp + post["length_effect"].sel(design=g).values[:, :, None, :] * zlen[:, None]
        probs = _category_probs(lp, cuts[:, :, None, :, :], link)
        p_neg = probs[..., neg_codes].sum(-1)
        p_pos = probs[..., pos_codes].sum(-1)
        # product over an answer's sentences, in log space (sentence -> answer sums)
        log_none_neg = np.einsum("cwsd,si->cwid", np.log1p(-p_neg), onehot)
        log_none_pos = np.einsum("cwsd,si->cwid", np.log1p(-p_pos), onehot)
        out_neg.append(np.exp(log_none_neg))
        out_pos.append(1 - np.exp(log_none_pos))
    dims = ("chain", "draw", "item", "dimension", "design")
    coords = {
        "item": [items[i] for i in rated],
        "dimension": post["dimension"].values,
        "design": sent_designs,
    }
    return xr.Dataset(
        {
            "p_no_negative": (dims, np.stack(out_neg, axis=-1)),
            "p_any_positive": (dims, np.stack(out_pos, axis=-1)),
        },
        coords=coords,
    )


def rater_table(dt: xr.DataTree, *, ci_prob: float = 0.9, max_draws: int = 200) -> xr.Dataset:
    """The rater table in the many-facet Rasch vocabulary, per rater x dimension x design.

    Variables: ``severity`` and ``discrimination`` (posterior mean, with ``*_low`` /
    ``*_high`` equal-tailed ``ci_prob`` intervals), ``infit`` and ``outfit`` (posterior
    predictive mean-square fit: information-weighted and unweighted means of squared
    standardised residuals, 1 = as the model expects, above about 1.3 = noisier, below about
    0.7 = more predictable than expected), ``n_ratings`` and ``is_human``; and per
    dimension x design, over the human raters, the ``separation`` index (spread of
    severities in units of their standard error) and the ``separation_reliability``
    ``G^2 / (1 + G^2)``. Judges (non-human raters) are in the same table, flagged by
    ``is_human``, and are left out of the separation statistics.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> t = rater_table(dt)
    >>> t["infit"].dims
    ('rater', 'dimension', 'design')
    """
    import arviz_stats as azs

    post, const = _check_fit(dt)
    link = str(const.attrs["link"])
    n_draw = post.sizes["draw"]
    thin = post.isel(draw=slice(None, None, max(1, n_draw // max_draws)))
    data = _data_from_constants(dt)
    values = _level_values(dt)
    y = values[data.y]
    nr, nd, ng = (post.sizes[k] for k in ("rater", "dimension", "design"))
    cell = (data.obs_rater * nd + data.obs_dim) * ng + data.obs_design
    sq = np.zeros(nr * nd * ng)
    z2 = np.zeros(nr * nd * ng)
    var_sum = np.zeros(nr * nd * ng)
    n_used = 0
    for _, part in _draw_chunks(thin):
        lp, cuts = _lp_and_cuts(part, data)
        probs = _category_probs(lp, cuts, link)
        ey = probs @ values
        vy = probs @ values**2 - ey**2
        res2 = (y - ey) ** 2
        m = lp.shape[0] * lp.shape[1]
        sq += np.bincount(cell, weights=res2.reshape(m, -1).sum(0), minlength=sq.size)
        var_sum += np.bincount(cell, weights=vy.reshape(m, -1).sum(0), minlength=sq.size)
        z2 += np.bincount(
            cell, weights=(res2 / np.maximum(vy, 1e-12)).reshape(m, -1).sum(0), minlength=sq.size
        )
        n_used += m
    count = np.bincount(cell, minlength=sq.size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        infit = (sq / var_sum).reshape(nr, nd, ng)
        outfit = (z2 / (count * n_used)).reshape(nr, nd, ng)
    dims3 = ("rater", "dimension", "design")
    out = xr.Dataset(coords={k: post[k].values for k in dims3})
    for name in ("severity", "discrimination"):
        da = post[name].transpose("chain", "draw", *dims3)
        out[name] = da.mean(("chain", "draw"))
        ci = azs.eti(da, prob=ci_prob)  # dims (..., ci_bound)
        out[f"{name}_low"] = ci.isel(ci_bound=0, drop=True)
        out[f"{name}_high"] = ci.isel(ci_bound=1, drop=True)
    out["infit"] = (dims3, infit)
    out["outfit"] = (dims3, outfit)
    out["n_ratings"] = (dims3, count.reshape(nr, nd, ng).astype(np.int64))
    human = const["rater_is_human"].values
    out["is_human"] = ("rater", human)
    sev = post["severity"].isel(rater=np.flatnonzero(human))
    obs_var = sev.mean(("chain", "draw")).var("rater", ddof=1)
    mse = sev.var(("chain", "draw")).mean("rater")
    true_var = np.maximum(obs_var - mse, 0.0)
    sep = np.sqrt(true_var / mse)
    out["separation"] = sep
    out["separation_reliability"] = true_var / obs_var
    out.attrs.update({"ci_prob": ci_prob, "draws_used_for_fit": n_used})
    return out


def _data_from_constants(dt: xr.DataTree) -> OrdinalData:
    """The index arrays of a fit, rebuilt from its stored groups (works on a reloaded file)."""
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
