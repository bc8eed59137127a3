"""Stand-alone length-effect regression: do coarse ratings favour longer answers?

:class:`LengthEffect` is the cumulative (ordinal) regression of ``models/length_effect/card.md``,

``y ~ Cumulative(system_d + beta_dg * z(log length) + (1 | rater) + (1 | question))``,

per dimension, with the design interaction: a lighter model than
:class:`~raterstats.models.ordinal.OrdinalRaters` (no latent answer quality, no sentence
nesting, one severity per rater and dimension) for the quick question of whether one design
rewards length more than another. :func:`raterstats.models.ordinal.length_contrast` reads
its fits too.

Fitting: NUTS (nutpie) and ``method="map"`` run on a compiled log density with a
hand-written gradient (:mod:`raterstats.models.length_density`, numba, compiled once per
installation), the same model as the PyMC graph of :meth:`LengthEffect.build_model`; the
probit link and non-default prior families compile the PyMC graph instead (minutes), and
the fit says why in ``dt.attrs["logp_backend_note"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Model, ModelInputError
from raterstats.models.length_density import (
    answer_log_likelihood,
    density_problem,
    length_density,
)
from raterstats.models.ordinal import (
    OrdinalData,
    ordered_cutpoints,
    prepare_ordinal,
    ratings_potential,
)
from raterstats.models.priors import Prior
from raterstats.models.zerosum import zero_sum_basis
from raterstats.ratings import Ratings

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")


#: tuning steps per chain of LengthEffect's NUTS fits by nutpie on the compiled density (the
#: package's default, 500, stays for the PyMC path): nutpie's own default, 300, was enough on
#: the built-in study (seeds 0-3: 0 divergences, max R-hat 1.006-1.007, min bulk ESS
#: 2,190-2,586 over every variable, 15 leapfrog steps per draw as after 500; 2 cores,
#: 2026-11-29), and the fit's checks still judge every sample
TUNE = 300


class LengthEffect(Model):
    """Cumulative-link regression of ratings on system, length x design, rater and question.

    For every dimension ``d``: ``P(y <= k) = F(c_dgk - eta)`` with
    ``eta = s_m(i)d + beta_dg * z(log length_i) - r_jd + q_q(i)d``, system effects summing
    to zero over systems, rater and question intercepts normal with scales per dimension
    (non-centred), cut-points ordered per dimension x design. Every rating counts as one
    observation of its answer (sentence ratings are not nested: use
    :class:`~raterstats.models.ordinal.OrdinalRaters` for that).

    NUTS by nutpie and ``method="map"`` use a compiled log density with a hand-written
    gradient (:func:`~raterstats.models.length_density.length_density`; no per-fit
    compilation, a few seconds on the built-in study): the same model on the same
    unconstrained vector as the PyMC graph (:meth:`build_model`). The MAP is the mode on
    that unconstrained scale, log-Jacobians of the log and ordered transforms included
    (:func:`raterstats.inference.map_density`). The probit link and non-default prior
    families (:func:`~raterstats.models.length_density.density_problem`), other samplers,
    ``method="advi"`` and ``logp_backend="pymc"`` compile the PyMC graph (minutes);
    ``dt.attrs["logp_backend"]`` records which ran, and ``dt.attrs["logp_backend_note"]``
    why the compiled density did not cover the configuration.

    Parameters
    ----------
    priors : mapping, optional
        Overrides of :attr:`default_priors`.
    link : {"logit", "probit"}
        Link function.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> m = LengthEffect().build(r)
    >>> m.named_vars_to_dims["length_effect"]
    ('dimension', 'design')
    """

    name: ClassVar[str] = "length_effect"
    cli_names: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = (
        "a cumulative-link (ordinal) regression of ratings on answer length by design"
    )
    references: ClassVar[tuple[str, ...]] = (
        "Agresti, A. (2010). Analysis of Ordinal Categorical Data, 2nd ed. Wiley. "
        "https://doi.org/10.1002/9780470594001",
        "Bürkner, P.-C., & Vuorre, M. (2019). Ordinal regression models in psychology: a "
        "tutorial. AMPPS 2(1). https://doi.org/10.1177/2515245918823199",
    )
    default_priors: ClassVar[dict[str, Prior]] = {
        "system_effect": Prior("Normal", sigma=1.0),
        "length_effect": Prior("Normal", mu=0.0, sigma=1.0),
        "sigma_rater": Prior("HalfNormal", sigma=1.0),
        "sigma_question": Prior("HalfNormal", sigma=1.0),
        "cutpoints": Prior("Normal", mu=0.0, sigma=3.0),
    }
    default_options: ClassVar[dict[str, Any]] = {"link": "logit"}
    map_on_density: ClassVar[bool] = True

    def check_options(self) -> None:
        if self._options["link"] not in ("logit", "probit"):
            raise ValueError(f"link must be 'logit' or 'probit', not {self._options['link']!r}")

    def density_problem(self) -> str | None:
        """Why the compiled density does not cover this configuration (None when it does;
        see :func:`~raterstats.models.length_density.density_problem`).

        Examples
        --------
        >>> LengthEffect(link="probit").density_problem()
        "the compiled density implements the logit link, not 'probit'"
        """
        return density_problem(self._priors, self._options["link"])

    def has_density(self, data: OrdinalData) -> bool:
        return self.density_problem() is None

    def density(
        self, data: OrdinalData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """The compiled log density of these data (None where :meth:`density_problem`
        says it does not apply). The model has no EM estimate: ``start`` must be None."""
        if start is not None:
            raise ValueError(f"{self.name}: no starting point other than the model's own")
        if not self.has_density(data):
            return None
        return length_density(data, self._priors)

    def fit(self, ratings: Any, *, tune: int | None = None, **options: Any) -> xr.DataTree:
        """Fit the model; as :meth:`raterstats.models.base.Model.fit`. A fit that compiles
        the PyMC graph because the compiled density does not cover its configuration says
        why in ``dt.attrs["logp_backend_note"]``. ``tune=None`` (default): :data:`TUNE`
        (300) tuning steps per chain for NUTS by nutpie on the compiled density, the
        package's 500 otherwise.

        Examples
        --------
        >>> from raterstats.simulate import clinical_qa_study
        >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
        >>> dt = LengthEffect().fit(r, method="map", random_seed=1, progress=False)
        >>> dt.attrs["logp_backend"], dt.posterior.attrs["map_scale"]
        ('compiled', 'unconstrained (log-Jacobians included)')
        """
        problem = self.density_problem()
        if tune is None:
            on_density = (
                problem is None
                and options.get("logp_backend", "auto") == "auto"
                and options.get("sampler", D.SAMPLER) == "nutpie"
            )
            tune = TUNE if on_density else D.TUNE
        dt = super().fit(ratings, tune=tune, **options)
        if dt.attrs.get("logp_backend") == "pymc" and problem is not None:
            dt.attrs["logp_backend_note"] = f"fitted on the PyMC graph: {problem}"
        return dt

    def prepare(self, ratings: Ratings) -> OrdinalData:
        super().prepare(ratings)
        data = prepare_ordinal(ratings, length=True)
        if not data.has_length:  # pragma: no cover - prepare_ordinal raises first
            raise ModelInputError("the length-effect model needs a 'length' column")
        return data

    def build_model(self, data: OrdinalData) -> pm.Model:
        p = self._priors
        c = data.coords
        nd, ng = len(c["dimension"]), len(c["design"])
        coords = {
            k: v
            for k, v in c.items()
            if v and k not in ("human", "judge", "human_basis", "design_contrast", "sentence")
        }
        with pm.Model(coords=coords) as model:
            eta = pt.zeros((len(c["item"]), nd))
            if data.use_system:
                bm = zero_sum_basis(len(c["system"]))
                sys_z = pm.Normal("system_z", 0.0, 1.0, dims=("dimension", "system_basis"))
                s_eff = pm.Deterministic(
                    "system_effect",
                    float(p["system_effect"].param("sigma", 1.0)) * pt.dot(sys_z, bm.T),
                    dims=("dimension", "system"),
                )
                eta = eta + s_eff.T[data.item_system]
            if data.use_question:
                sq = p["sigma_question"].create("sigma_question", dims="dimension")
                qz = pm.Normal("question_z", 0.0, 1.0, dims=("question", "dimension"))
                q_eff = pm.Deterministic("question_effect", qz * sq, dims=("question", "dimension"))
                eta = eta + q_eff[data.item_question]
            sr = p["sigma_rater"].create("sigma_rater", dims="dimension")
            rz = pm.Normal("rater_z", 0.0, 1.0, dims=("rater", "dimension"))
            sev = pm.Deterministic("severity", rz * sr, dims=("rater", "dimension"))
            bp = p["length_effect"]
            beta = pm.Normal(
                "length_effect",
                float(bp.param("mu", 0.0)),
                float(bp.param("sigma", 1.0)),
                dims=("dimension", "design"),
            )
            cuts = ordered_cutpoints(p["cutpoints"], data)
            lp = (
                eta.reshape((-1,))[data.obs_item * nd + data.obs_dim]
                + beta.reshape((-1,))[data.obs_dim * ng + data.obs_design]
                * data.z_length[data.obs_item]
                - sev.reshape((-1,))[data.obs_rater * nd + data.obs_dim]
            )
            ratings_potential(lp, cuts, data, self._options["link"])
        return model

    def data_groups(self, data: OrdinalData, model: pm.Model | None) -> dict[str, xr.Dataset]:
        frame = data.frame
        assert frame is not None
        obs = xr.Dataset(
            {"rating": ("rating_id", data.y + 1)},
            coords={
                "rating_id": np.arange(data.n_obs),
                "rating_item": ("rating_id", frame["item"].to_numpy().astype(str)),
                "rating_rater": ("rating_id", frame["rater"].to_numpy().astype(str)),
                "rating_dimension": ("rating_id", frame["dimension"].to_numpy().astype(str)),
                "rating_design": ("rating_id", frame["design"].to_numpy().astype(str)),
                "rating_source_row": ("rating_id", frame["source_row"].to_numpy()),
            },
            attrs={"levels": [str(v) for v in data.levels]},
        )
        const = xr.Dataset(
            {"z_length": ("item", data.z_length)},
            coords={"item": data.coords["item"]},
            attrs={
                "link": self._options["link"],
                "length_log_mean": data.length_log_mean,
                "length_log_sd": data.length_log_sd,
            },
        )
        return {"observed_data": obs, "constant_data": const}

    def log_likelihood(
        self, dt: xr.DataTree, data: OrdinalData, model: pm.Model | None
    ) -> xr.Dataset | None:
        """Pointwise log-likelihood per answer x design (summed over its ratings; see
        :func:`~raterstats.models.length_density.answer_log_likelihood`)."""
        return answer_log_likelihood(dt["posterior"].to_dataset(), data, self._options["link"])
