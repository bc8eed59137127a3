"""The ordinal item-response rater model with sentence nesting and answer-length effects.

:class:`OrdinalRaters` is the many-facet graded-response model of ``models/ordinal/card.md``: the
latent quality of each answer on each dimension, system and question effects, sentence
deviations for sentence-level (fine) ratings, rater severity and discrimination per
dimension x design with partial pooling, ordered cut-points per dimension x design, a logit
or probit link, and an optional answer-length effect per dimension x design.

This module holds the PyMC graph and the model's hooks; the data are prepared by
:mod:`raterstats.models.ordinal.data`, the likelihood's NumPy reference is
:mod:`raterstats.models.ordinal.reference` (overridden by the compiled
:mod:`raterstats.models.ordinal.kernels`, laid out by
:mod:`raterstats.models.ordinal.layout`), and the quantities derived from a fit are in
:mod:`raterstats.models.ordinal.derived`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from raterstats import schema as S
from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Model
from raterstats.models.ordinal.data import (
    OrdinalData,
    prepare_ordinal,
    sentence_design,
)
from raterstats.models.ordinal.density import compiled_density
from raterstats.models.ordinal.derived import rater_table, system_scores
from raterstats.models.ordinal.graph import (
    in_units,
    ordered_cutpoints,
    ratings_potential,
    stretched_cuts,
)
from raterstats.models.ordinal.layout import HIGH_AGREEMENT_UNIT, OrdinalLayout, ordinal_layout
from raterstats.models.ordinal.reference import (
    cdf,
    draw_chunks,
    lp_and_cuts,
    summed_log_likelihood,
)
from raterstats.models.ordinal.units import latent_units
from raterstats.models.priors import Prior
from raterstats.models.zerosum import zero_sum_basis, zero_sum_extend_pt
from raterstats.ratings import Ratings

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")

#: nutpie's target acceptance rate for the ordinal model's NUTS fits (see
#: :meth:`OrdinalRaters.fit`): longer steps than at nutpie's 0.8 mix the scale parameters
#: faster per gradient on the built-in study, without divergences
TARGET_ACCEPT = 0.65

#: tuning steps per chain of the ordinal model's NUTS fits (nutpie's own default is 300):
#: the step size and the diagonal mass matrix settle within about 200 on the built-in study
#: (leapfrog steps per draw 61, 40, 36, 31, ... in windows of 50), and the fit passes its
#: checks after 400 (max R-hat 1.009, min bulk ESS 603 over the diagnosed parameters)
TUNE = 400

#: draws per chain of the ordinal model's fits that cannot stop at :data:`CHECKPOINTS`
#: (the PyMC path, ADVI's draws), and the second checkpoint (the package's default is
#: 1,000): with
#: thousands of parameters (6,025 on the built-in study) the largest R-hat at about 1,000
#: effective draws lands on either side of 1.01 by chance: 1.0103 at seed 0 and 1.009 at
#: seed 1 with 1,000 draws; 1,500 gave 1.004 (bulk ESS 1,266) at seed 0, and 1.005 on the
#: high-agreement simulation (1.011 with 1,000); 115 s instead of 84 s on the built-in study
#: (2 cores, 2026-11-29)
DRAWS = 1500

#: draws per chain at which the ordinal model's NUTS fits (nutpie, compiled density) check
#: themselves and stop once they pass (:meth:`OrdinalRaters.fit`): the first look at the
#: package's 1,000, then :data:`DRAWS`, and on up to 4,000 for data whose scales mix slowly
#: (SummEval-OP: max R-hat 1.023 at 1,500 draws, 1.006 at 4,000)
CHECKPOINTS = (1000, DRAWS, 2000, 3000, 4000)

#: Gauss-Hermite nodes over which ``method="map"`` integrates each sentence's deviation
#: (:meth:`OrdinalRaters.mode_form`)
SENTENCE_NODES = 15

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
    effects are non-centred (question effects and residuals can be centred:
    ``centred_latent``); the human raters' deviations are centred when the data hold many
    ratings per rater cell (see ``centred``).

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
    centred_latent : bool, optional
        Sample the question effects and answer residuals centred (``N(0, sigma)``) or
        non-centred (``sigma * N(0, 1)``). Default (None): residuals non-centred, question
        effects centred when the ratings show high agreement (see
        :meth:`is_latent_centred` and :meth:`is_question_centred`).
    latent_unit : "auto" or float
        The unit (logits) in which the priors on the latent scale are stated, per
        dimension: ``"auto"`` measures it from the ratings (:meth:`latent_units`,
        :func:`~raterstats.models.ordinal.latent_units`); a number sets it for every
        dimension (1: the priors as written, in logits).
    scale_coordinate : bool
        Sample the latent scale of every dimension as one coordinate (the default; see
        :mod:`raterstats.models.ordinal.kernels_scale`): the same model in other
        coordinates, which NUTS explores much faster when the raters nearly always agree.

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
        "centred_latent": None,
        "latent_unit": "auto",
        "scale_coordinate": True,
    }
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi")
    #: MAP and ADVI run on the compiled density (the mode: :meth:`mode_form`)
    map_on_density: ClassVar[bool] = True
    advi_on_density: ClassVar[bool] = True

    def check_options(self) -> None:
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
        if o["centred_latent"] not in (None, True, False):
            problems.append(
                f"centred_latent must be True, False or None, not {o['centred_latent']!r}"
            )
        if o["scale_coordinate"] not in (True, False):
            problems.append(
                f"scale_coordinate must be True or False, not {o['scale_coordinate']!r}"
            )
        u = o["latent_unit"]
        if u != "auto" and not (
            isinstance(u, int | float) and not isinstance(u, bool) and np.isfinite(u) and u > 0
        ):
            problems.append(f"latent_unit must be 'auto' or a positive number, not {u!r}")
        if problems:
            raise ValueError("; ".join(problems))

    def default_draws(self, *, watched: bool) -> int | tuple[int, ...]:
        """:data:`CHECKPOINTS` for NUTS by nutpie on the compiled density, else
        :data:`DRAWS` (the PyMC path, ADVI's draws)."""
        return CHECKPOINTS if watched else DRAWS

    def fit(
        self,
        ratings: Any,
        *,
        draws: int | Sequence[int] | None = None,
        tune: int = TUNE,
        **options: Any,
    ) -> xr.DataTree:
        """Fit the model; as :meth:`raterstats.models.base.Model.fit`, with NUTS defaults of
        :data:`TUNE` (400) tuning steps per chain, a target acceptance rate of
        :data:`TARGET_ACCEPT` (nutpie's default is 0.8), and draws set by the fit's own
        checks: ``draws=None`` (default) samples until the fit passes them, looking at
        :data:`CHECKPOINTS` (1,000, 1,500, 2,000, 3,000 and 4,000 draws per chain; a fit
        with divergences stops where they appear). ``draws=`` an int fixes the draws;
        the PyMC path (``logp_backend="pymc"``, the probit link) and ADVI draw
        :data:`DRAWS` (1,500) by default.

        A fixed count was wasted on easy data or short on hard data (SummEval-OP: max R-hat
        1.023 at 1,500 draws, 1.006 at 4,000); the model's card has the figures and what
        looking several times costs (an early pass is slightly easier than at one count).

        The scale parameters of the answer level and of the sentence-level design (its
        discrimination mean, the sentence scale) mix slowest, and every draw takes about 31
        leapfrog steps at either target. At 0.65 the steps are longer and these parameters
        mix faster per gradient: on the built-in study 4 x 1,000 draws gave a minimum bulk
        ESS of 744 over every parameter (max R-hat 1.008, 0 divergences), against 488 at
        0.8 (500 tuning steps); with 4 x 700 draws a few of the 4,665 sentence deviations
        stay above R-hat 1.01. Measured with ``benchmarks/ordinal.py`` (RESULTS.md); a fit
        that fails its checks says so, and ``target_accept=`` raises the rate against
        divergences.

        ``method="map"`` and ``method="advi"`` run on the compiled density (no PyMC
        compilation; the probit link and non-default prior families use the PyMC graph).
        MAP returns the mode of :meth:`mode_form` (sentence deviations integrated out, the
        answers' and questions' scales inflated: read its system ordering, not its scales;
        one that stops short warns and fails its health check). ADVI is mean-field ADVI
        (:func:`raterstats.inference_vi.advi_density`, options ``n``, ``learning_rate``,
        ``mc_samples``, ``eval_every``, ``tol``, ``init_sd``) on NUTS's form; ``draws`` kept.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=2, random_seed=1,
        ...                          progress=False)
        >>> dict(dt.posterior.sizes)["draw"]
        50
        >>> import warnings
        >>> with warnings.catch_warnings(action="ignore"):  # too few draws to pass
        ...     dt = OrdinalRaters().fit(r, draws=(30, 60), tune=50, chains=2, random_seed=1,
        ...                              progress=False)
        >>> dict(dt.posterior.sizes)["draw"]
        60
        >>> dt.attrs["health"].splitlines()[-1]  # doctest: +NORMALIZE_WHITESPACE
        'draws per chain set by checkpoints (30, 60): 30 sampled on;
        stopped at 60: the last checkpoint'
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

    def is_latent_centred(self, data: OrdinalData) -> bool:
        """Whether the answer residuals are sampled centred (their zero-sum coordinates
        ``~ N(0, sigma)``): the ``centred_latent`` option; off by default (None). On the
        built-in study (25 ratings per answer and dimension) the centred form mixed worse
        than the non-centred one (4 x 1,000 draws: min bulk ESS 143 and max R-hat 1.039,
        against 488 and 1.008), since the sentence-only answers leave their residuals weakly
        identified; with high agreement an answer's ratings place it only in an interval of
        the latent scale as wide as the cut-point spacing, not much narrower than the
        residuals' spread (issue 19's simulation: no gain)."""
        return bool(self._options["centred_latent"])

    def is_question_centred(self, data: OrdinalData) -> bool:
        """Whether the question effects are sampled centred: the ``centred_latent`` option
        when set, else (None) when every dimension's latent unit is at least
        :data:`~raterstats.models.ordinal.layout.HIGH_AGREEMENT_UNIT` (3) logits (a single
        rating's reliability of 0.73 or more): each question's effect is then pinned down by
        its answers' nearly deterministic ratings (issue 19's simulation: 14 answers x 2-4
        ratings per question), and the non-centred form ties every coordinate to
        ``sigma_question``."""
        c = self._options["centred_latent"]
        if c is not None:
            return bool(c)
        return bool(np.all(self.latent_units(data) >= HIGH_AGREEMENT_UNIT))

    def latent_units(self, data: OrdinalData) -> np.ndarray:
        """The latent unit of every dimension, in which the priors on the latent scale are
        stated (``models/ordinal/card.md``, "Priors and why"): the ``latent_unit`` option,
        or by default (``"auto"``) the spread of answer quality that the ratings imply,
        :func:`~raterstats.models.ordinal.units.latent_units` (at least 1 logit; 1 gives
        the priors as written, in logits)."""
        u = self._options["latent_unit"]
        if u == "auto":
            return latent_units(data)
        return np.full(len(data.coords["dimension"]), float(u))

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
        # priors on the latent scale in the unit of their dimension (or the largest unit)
        units = self.latent_units(data)
        umax = float(units.max())
        nj = len(data.coords["judge"])
        nm = len(data.coords["system"])
        # latent quality
        if data.use_system:
            bm = zero_sum_basis(nm)
            sys_z = pm.Normal("system_z", 0.0, 1.0, dims=("dimension", "system_basis"))
            sig_s = float(p["system_effect"].param("sigma", 1.0)) * units
            s_eff = pm.Deterministic(
                "system_effect",
                sig_s[:, None] * pt.dot(sys_z, bm.T),
                dims=("dimension", "system"),
            )
            eta = s_eff.T[data.item_system]
        else:
            eta = pt.zeros((len(data.coords["item"]), nd))
        # question effects and residuals sum to zero (zero-sum normals): the cut-points
        # alone carry the location, which otherwise trades against their means
        # centred (see is_latent_centred): the zero-sum coordinates ~ N(0, sigma) themselves
        lat_cen = self.is_latent_centred(data)
        q_cen = self.is_question_centred(data)
        if data.use_question:
            nq = len(data.coords["question"])
            sq = in_units(p["sigma_question"], units).create("sigma_question", dims="dimension")
            qdims = ("question_basis", "dimension")
            if q_cen:
                q_raw = zero_sum_extend_pt(
                    pm.Normal("question_basis_effect", 0.0, sq, dims=qdims), nq
                )
            else:
                q_raw = zero_sum_extend_pt(pm.Normal("question_z", 0.0, 1.0, dims=qdims), nq) * sq
            q_eff = pm.Deterministic("question_effect", q_raw, dims=("question", "dimension"))
            eta = eta + q_eff[data.item_question]
        se = in_units(p["sigma_residual"], units).create("sigma_residual", dims="dimension")
        ni = len(data.coords["item"])
        if ni > 1:  # one item: its residual sums to zero alone, so it is zero (no basis)
            edims = ("item_basis", "dimension")
            if lat_cen:
                eta = eta + zero_sum_extend_pt(pm.Normal("residual_basis", 0.0, se, dims=edims), ni)
            else:
                ez = pm.Normal("residual_z", 0.0, 1.0, dims=edims)
                eta = eta + zero_sum_extend_pt(ez, ni) * se
        eta = pm.Deterministic("eta", eta, dims=("item", "dimension"))
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
            tp = in_units(p["sigma_sentence"], units)
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
        sa = in_units(p["sigma_severity_rater"], umax).create("sigma_severity_rater")
        sb = in_units(p["sigma_severity_cell"], umax).create("sigma_severity_cell")
        cell_dims = ("dimension", "design", "human_basis")

        def deviation(name: str, sigma: Any, dims: Any) -> Any:
            # non-centred coordinates in the zero-sum basis: sigma * N(0, 1)
            return sigma * pm.Normal(f"{name}_z", 0.0, 1.0, dims=dims)

        def cell_totals(name: str, s_rater: Any, s_cell: Any) -> Any:
            # centred and marginal: the rater + cell deviation of every cell, in the
            # zero-sum basis; over the n cells, per basis coordinate, N(0, A I + B J)
            # (A = s_cell^2, B = s_rater^2): the rater-level deviation integrated out
            t = pm.Flat(f"{name}_cell_basis", dims=cell_dims)
            n = nd * ng
            tm = t.reshape((n, nh - 1))
            A, B = s_cell**2, s_rater**2
            C = A + n * B
            sm, sq = tm.sum(axis=0), (tm**2).sum(axis=0)
            logp = (
                -0.5 * (sq / A - B * sm**2 / (A * C)) - (n - 1) * pt.log(s_cell) - 0.5 * pt.log(C)
            )
            pm.Potential(f"{name}_cell_prior", logp.sum())
            return t

        if cen:
            v = cell_totals("discrimination", su, sv)
            log_lam = lm[None] + pt.dot(v, bh.T).transpose(2, 0, 1)
            b = cell_totals("severity", sa, sb)
            sev = pt.dot(b, bh.T).transpose(2, 0, 1)
        else:
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
                float(bp.param("mu", 0.0)) * units[:, None],
                float(bp.param("sigma", 1.0)) * units[:, None],
                dims=("dimension", "design"),
            )
            beta_h = pt.broadcast_to(beta[None], (nh, nd, ng))
            if self._options["length_by_rater"]:
                sl = in_units(p["sigma_length_rater"], umax).create("sigma_length_rater")
                lz = pm.Normal("length_rater_z", 0.0, 1.0, dims=("human", "dimension", "design"))
                beta_h = beta_h + sl * lz
        # judges (LLM raters): unpooled, reported apart
        if nj:
            jdims = ("judge", "dimension", "design")
            jl = p["judge_log_discrimination"].create("judge_log_discrimination", dims=jdims)
            ju = units[None, :, None]
            js = in_units(p["judge_severity"], ju).create("judge_severity", dims=jdims)
            log_lam = pt.concatenate([log_lam, jl], axis=0)
            sev = pt.concatenate([sev, js], axis=0)
            if data.has_length:
                jb = in_units(p["judge_length_effect"], ju).create(
                    "judge_length_effect", dims=jdims
                )
                beta_h = pt.concatenate([beta_h, jb], axis=0)
        lam = pm.Deterministic(
            "discrimination", pt.exp(log_lam), dims=("rater", "dimension", "design")
        )
        delta = pm.Deterministic("severity", sev, dims=("rater", "dimension", "design"))
        cuts = ordered_cutpoints(
            p["cutpoints"], data, units, stretched_cuts(data.initial_cuts, units)
        )
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

    def layout(self, data: OrdinalData) -> OrdinalLayout:
        """Layout of the compiled density's unconstrained vector for these data: sizes,
        switches and prior constants by name, and the arrays the kernel reads (see
        :class:`~raterstats.models.ordinal.layout.OrdinalLayout`)."""
        return ordinal_layout(
            data,
            self._priors,
            centred=self.is_centred(data),
            length_by_rater=bool(self._options["length_by_rater"]),
            latent_centred=self.is_latent_centred(data),
            question_centred=self.is_question_centred(data),
            units=self.latent_units(data),
            scale_coordinate=bool(self._options["scale_coordinate"]),
        )

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
        return compiled_density(
            self.layout(data), data, TARGET_ACCEPT, lambda: self.mode_form(data)
        )

    def mode_form(self, data: OrdinalData) -> Density:
        """The density whose mode ``method="map"`` returns: the **non-centred** compiled
        density (``centred=False``, ``centred_latent=False``, whatever the options say) on
        its unconstrained scale with the log-Jacobians (as
        :func:`~raterstats.inference.map_density`), the sentence deviations integrated out by
        :data:`SENTENCE_NODES`-point Gauss-Hermite quadrature where there are sentence
        ratings (:func:`~raterstats.models.ordinal.density.marginal_density`; ``sentence_z``
        then holds their posterior means at the mode).

        The centred form has no mode, and the joint mode of the sentence deviations runs
        off (the sentence scale grows without a bound from the data where raters agree on
        every sentence). Answers and questions keep their joint mode, whose scales sit above
        the posterior's: read a MAP fit's system ordering, not its scales or reliabilities
        (the model card has the measurements); use ``method="nuts"`` for posterior
        statements."""
        from raterstats.models.ordinal.density import marginal_density

        options = {
            **self._options,
            "centred": False,
            "centred_latent": False,
            "scale_coordinate": False,
        }
        nc = type(self)(priors=self._priors, **options)
        if data.has_sentences:
            return marginal_density(nc.layout(data), data, SENTENCE_NODES)
        density = nc.density(data)
        assert density is not None  # has_density(data) was checked by the caller
        return density

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
                "latent_unit": ("dimension", self.latent_units(data)),
            },
            coords={
                "rating_id": np.arange(data.n_obs),
                "item": c["item"],
                "rater": c["rater"],
                "sentence": c["sentence"],
                "design": c["design"],
                "dimension": c["dimension"],
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
        link_cdf = cdf(self._options["link"])
        out = np.empty((post.sizes["chain"], post.sizes["draw"], data.n_obs), dtype=np.int8)
        for sl, part in draw_chunks(post):
            lp, cuts = lp_and_cuts(part, data)
            cum = link_cdf(cuts - lp[..., None])  # P(y <= k), k = 1..K-1
            u = rng.random(lp.shape)
            out[:, sl] = 1 + np.sum(u[..., None] > cum, axis=-1)
        return xr.Dataset(
            {"rating": (("chain", "draw", "rating_id"), out)},
            coords={"rating_id": np.arange(data.n_obs)},
            attrs={"note": "replicated ratings as 1-based levels"},
        )

    # -------------------------------------------------------------- post-fit questions

    def rater_summary(self, dt: xr.DataTree, *, ci_prob: float) -> xr.Dataset:
        """The rater table of a fit (:func:`~raterstats.models.ordinal.rater_table`):
        severity and discrimination with equal-tailed ``ci_prob`` intervals, infit and
        outfit, separation and separation reliability per rater x dimension x design."""
        return rater_table(dt, ci_prob=ci_prob)

    def system_score_draws(
        self,
        dt: xr.DataTree,
        *,
        score: str,
        score_map: Any,
        labels: str,
        n_boot: int,
        max_draws: int,
        rng: np.random.Generator,
    ) -> xr.DataArray:
        """Posterior draws of the system scores of :func:`~raterstats.models.ordinal.system_scores`
        for :func:`raterstats.rank_systems`: ``score="fair_average"`` (dims chain, draw,
        dimension, design, system) or ``"latent"`` (chain, draw, dimension, system). The
        draws are the posterior's own, so ``score_map``, ``labels``, ``n_boot``,
        ``max_draws`` and ``rng`` do not apply."""
        sc = system_scores(dt)
        if score not in ("fair_average", "latent"):
            raise ValueError(
                f"score must be 'fair_average' or 'latent' for an OrdinalRaters fit, not {score!r}"
            )
        draws = (
            sc[score]
            .astype(str(sc[score].dtype))
            .assign_coords(system=[str(s) for s in sc["system"].values])
        )
        draws.attrs["source"] = f"{self.name} ({score})"
        return draws
