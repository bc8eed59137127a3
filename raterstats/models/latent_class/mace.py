"""MACE (Hovy et al. 2013): competence and spamming, flat or hierarchical.

Generative story (one latent true label per unit: item, segment, dimension)::

    T_u ~ Categorical(pi_d)                            pi_d ~ Dirichlet(1)
    competent ~ Bernoulli(theta_jdg)                   per rater x dimension x design
    A_uj = T_u if competent, else ~ Categorical(xi_jd)  xi_jd ~ Dirichlet(10)

so ``P(A = a | T = t) = theta 1[a = t] + (1 - theta) xi[a]``. Flat MACE puts
``theta_jdg ~ Beta(0.5, 0.5)``, sampled on the arcsine scale
``theta = sin^2(pi/2 logistic(u))``, under which the default prior makes ``u`` standard
logistic (see :func:`arcsine_beta_logp_pt`). Hierarchical MACE (the default when the data
have several dimensions or designs) puts ``logit theta_jdg = beta_dg + u_j + v_jdg`` with
cell means ``beta_dg`` (equivalently ``mu + alpha_d + gamma_g + (alpha gamma)_dg``,
reported as Deterministics) and zero-sum (panel-centred) effects,
``u ~ ZeroSumNormal(sigma_u)`` over raters and ``v ~ ZeroSumNormal(sigma_v)`` over raters
and over the dimension x design cells, so that ``beta_dg`` is the panel's mean logit
competence and no likelihood-flat direction trades ``beta`` against ``u`` or ``u`` against
``v``. The effects are sampled as coordinates in orthonormal zero-sum bases, non-centred
(centred when the rater cells hold many ratings, see ``centred``). The true labels are
marginalised (log-sum-exp) for NUTS and recovered draw by draw afterwards.
See ``models/mace/card.md`` for priors, identifiability and references.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr
from scipy.special import expit, logit

from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Method
from raterstats.models.latent_class.base import LatentClassModel
from raterstats.models.latent_class.data import LatentClassData, majority_vote_stats
from raterstats.models.latent_class.em import (
    RESTART_UNITS,
    em_datatree,
    restart_subsample,
    short_run_restarts,
)
from raterstats.models.latent_class.graph import (
    padded_dirichlet,
    padded_dirichlet_init,
    padded_log_simplex_pt,
    pattern_loglik_pt,
    segment_sum_pt,
)
from raterstats.models.latent_class.mace_density import mace_density
from raterstats.models.latent_class.mace_em import mace_em_run
from raterstats.models.latent_class.mace_params import (
    arcsine_beta_logp_pt,
    basis_coords,
    decomposition,
    unit_to_arcsine,
    var_dims,
)
from raterstats.models.latent_class.reference import TableLayout, mace_rating_table, table_layout
from raterstats.models.priors import Prior
from raterstats.models.zerosum import zero_sum_basis

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")


class MACE(LatentClassModel):
    """Multi-Annotator Competence Estimation, flat or hierarchical.

    Parameters
    ----------
    hierarchical : bool, optional
        Partially pooled competence per rater x dimension x design (logit-normal).
        Default (None): hierarchical when the data have several dimensions or designs, flat
        otherwise.
    centred : bool or "raters", optional
        Sample the zero-sum rater and cell effects' basis coordinates centred
        (``a ~ N(0, sigma_u)``, ``u = B a``) or non-centred (``a = sigma_u z``,
        ``z ~ N(0, 1)``): True both, False neither, ``"raters"`` the rater effects only.
        Default (None): both centred when the median rater x dimension x design cell has
        at least 20 ratings (then the data identify each effect and the centred form has
        the better geometry) and every dimension x design cell has ratings (a fit of
        schemes with different label sets has cells without: their effects are prior only,
        a funnel in the centred form); non-centred otherwise. ``"raters"`` suits such a
        fit when the raters differ widely: on the built-in study's three schemes it passed
        its checks at 1,000 draws per chain where the default needed 2,000, but on the
        simulated scheme study, whose raters are alike, 9 of 20 fits had divergences
        (the model card).
    repeats : {"include", "exclude"}
        Use repeated ratings of a unit by the same rater as further observations (default) or
        only first ratings.
    use_gold : bool
        Clamp the true label of units with a ``gold`` label (default False: gold labels
        are kept beside the fit as a check, :func:`raterstats.posterior.gold_check`, and
        do not enter the likelihood; True makes them known labels).
    priors : mapping, optional
        Override by name: ``competence`` (flat; Beta, default Beta(0.5, 0.5)), ``spam``
        (Dirichlet concentration of each rater's spam distribution, default 10),
        ``prevalence`` (Dirichlet concentration of the label prior, default 1),
        ``competence_mean`` (hierarchical; Normal on the logit of the dimension x design cell
        means, default N(1, 1.5)), ``rater_sd`` (HalfNormal(1), sigma_u) and ``cell_sd``
        (HalfNormal(0.5), sigma_v).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=10, n_systems=5, random_seed=3)
    >>> dt = MACE().fit(s.ratings, method="em", random_seed=1)
    >>> dt.posterior["competence"].dims
    ('chain', 'draw', 'rater', 'dimension', 'design')
    >>> dt.attrs["model"], dt.attrs["method"]
    ('mace', 'em')
    """

    name = "mace"
    cli_names: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = (
        "MACE (multi-annotator competence estimation; Hovy et al. 2013), with competence per "
        "rater, dimension and design"
    )
    references: ClassVar[tuple[str, ...]] = (
        "Hovy, D., Berg-Kirkpatrick, T., Vaswani, A., & Hovy, E. (2013). Learning whom to "
        "trust with MACE. NAACL-HLT, 1120-1130. https://aclanthology.org/N13-1132",
        "Paun, S., Carpenter, B., Chamberlain, J., Hovy, D., Kruschwitz, U., & Poesio, M. "
        "(2018). Comparing Bayesian models of annotation. TACL 6, 571-585. "
        "https://doi.org/10.1162/tacl_a_00040",
    )
    rank_fit_method: ClassVar[Method | None] = "em"
    default_priors: ClassVar[dict[str, Prior]] = {
        "competence": Prior("Beta", alpha=0.5, beta=0.5),
        "spam": Prior("Dirichlet", a=10.0),
        "prevalence": Prior("Dirichlet", a=1.0),
        "competence_mean": Prior("Normal", mu=1.0, sigma=1.5),
        "rater_sd": Prior("HalfNormal", sigma=1.0),
        "cell_sd": Prior("HalfNormal", sigma=0.5),
    }
    default_options: ClassVar[dict[str, Any]] = {
        "hierarchical": None,
        "centred": None,
        "repeats": "include",
        "use_gold": False,
    }
    param_names: ClassVar[tuple[str, ...]] = ("competence", "spam", "prevalence")
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi", "em", "gibbs")

    def check_options(self) -> None:
        super().check_options()
        h = self._options["hierarchical"]
        if h is not None and not isinstance(h, bool):
            raise ValueError("hierarchical must be True, False or None")
        c = self._options["centred"]
        if c is not None and not isinstance(c, bool) and c != "raters":
            raise ValueError(f"centred must be True, False, 'raters' or None, not {c!r}")
        for key, dist in (
            ("competence", "Beta"),
            ("spam", "Dirichlet"),
            ("prevalence", "Dirichlet"),
            ("competence_mean", "Normal"),
        ):
            if self._priors[key].dist != dist:
                raise ValueError(f"prior {key!r} must be a {dist} (got {self._priors[key].dist})")
        cp = self._priors["competence"].params
        if set(cp) != {"alpha", "beta"} or not all(
            np.ndim(cp[k]) == 0 and float(cp[k]) > 0 for k in ("alpha", "beta")
        ):
            raise ValueError(
                "prior 'competence' must be a Beta with positive scalar alpha and beta "
                f"(got {cp}); one Beta for every rater x dimension x design cell"
            )

    def competence_beta(self) -> tuple[float, float]:
        """``(alpha, beta)`` of flat MACE's Beta competence prior (validated positive
        scalars)."""
        cp = self._priors["competence"].params
        return float(cp["alpha"]), float(cp["beta"])

    def is_centred(self, data: LatentClassData) -> tuple[bool, bool]:
        """Whether the rater effects and the cell effects are sampled centred: the
        ``centred`` option (``"raters"``: the rater effects alone); by default both where
        the median rater x dimension x design cell holds at least 20 ratings, the data then
        pinning each effect down, unless some dimension x design cell holds no rating, as
        in a fit of schemes with different label sets
        (:func:`raterstats.design.combine_schemes`), whose empty cells' effects are prior
        only, a funnel in the centred form.

        Examples
        --------
        >>> from raterstats.models.latent_class.data import prepare_latent_class
        >>> from raterstats.simulate import archehr_like_study
        >>> d = prepare_latent_class(archehr_like_study(random_seed=1).ratings)
        >>> MACE().is_centred(d), MACE(centred="raters").is_centred(d)
        ((True, True), (True, False))
        """
        c = self._options["centred"]
        if c == "raters":
            return True, False
        if c is not None:
            return bool(c), bool(c)
        n = np.bincount(data.cell, minlength=data.n_cells)
        per_dg = n.reshape(len(data.raters), -1).sum(axis=0)
        if (per_dg == 0).any():
            return False, False
        both = bool(np.median(n[n > 0]) >= 20)
        return both, both

    def is_hierarchical(self, data: LatentClassData) -> bool:
        """Whether competence is pooled for these data (``hierarchical`` or the default)."""
        h = self._options["hierarchical"]
        if h is None:
            return len(data.dimensions) * len(data.designs) > 1
        return bool(h)

    # ------------------------------------------------------------------ PyMC model

    def build_model(self, data: LatentClassData) -> pm.Model:
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        coords = {
            "rater": list(data.raters),
            "dimension": list(data.dimensions),
            "design": list(data.designs),
            "category": list(range(K)),
        } | basis_coords(data)
        hier = self.is_hierarchical(data)
        with pm.Model(coords=coords) as model:
            if hier:
                mp = self._priors["competence_mean"]
                beta = pm.Normal(
                    "competence_cell_mean",
                    mu=mp.param("mu", 0.0),
                    sigma=mp.param("sigma", 1.0),
                    dims=("dimension", "design"),
                )
                cen_u, cen_v = self.is_centred(data)
                cells = ("rater", "dimension", "design")
                basis_r = zero_sum_basis(R)

                def coordinates(name: str, sigma: Any, dims: tuple[str, ...], centred: bool) -> Any:
                    # zero-sum effects' coordinates in the orthonormal zero-sum bases:
                    # centred N(0, sigma), or sigma * N(0, 1) (non-centred)
                    if centred:
                        return pm.Normal(f"{name}_basis", 0.0, sigma, dims=dims)
                    return sigma * pm.Normal(name.replace("_effect", "_z"), 0.0, 1.0, dims=dims)

                sigma_u = self._priors["rater_sd"].create("rater_sd")
                a_u = coordinates("rater_effect", sigma_u, ("rater_basis",), cen_u)
                u = pm.Deterministic("rater_effect", pt.dot(basis_r, a_u), dims="rater")
                eta = beta[None, :, :] + u[:, None, None]
                if D * G > 1:
                    basis_c = zero_sum_basis(D * G)
                    sigma_v = self._priors["cell_sd"].create("cell_sd")
                    a_v = coordinates("cell_effect", sigma_v, ("rater_basis", "cell_basis"), cen_v)
                    v = pt.dot(pt.dot(basis_r, a_v), basis_c.T).reshape((R, D, G))
                    eta = eta + pm.Deterministic("cell_effect", v, dims=cells)
                pm.Deterministic(
                    "competence", pm.math.sigmoid(eta), dims=("rater", "dimension", "design")
                )
                for name, value in decomposition(beta, D, G).items():
                    pm.Deterministic(name, value, dims=var_dims(data)[name])
                log_t = -pt.softplus(-eta)
                log_1mt = -pt.softplus(eta)
            else:
                # the arcsine scale (see arcsine_beta_logp_pt); log theta and log(1 - theta)
                # straight from u, so that theta rounding to 1 cannot give an infinite logp
                u_c = pm.Flat("competence_arcsine", dims=("rater", "dimension", "design"))
                prior, log_t, log_1mt = arcsine_beta_logp_pt(u_c, *self.competence_beta())
                pm.Potential("competence_prior", prior.sum())
                pm.Deterministic("competence", pt.exp(log_t), dims=("rater", "dimension", "design"))
            spam = padded_dirichlet(
                "spam", self._priors["spam"].param("a", 10.0), data.n_categories, ("rater",), (R,)
            )
            prev = padded_dirichlet(
                "prevalence", self._priors["prevalence"].param("a", 1.0), data.n_categories, (), ()
            )
            c = data.p_cell
            x = log_t.reshape((-1,))[c]
            log_xi = padded_log_simplex_pt(spam, np.broadcast_to(data.valid, (R, D, K)))
            y = (
                log_1mt.reshape((-1,))[c]
                + log_xi.reshape((R * D, K))[data.p_rater * D + data.p_dim, data.p_code]
            )
            match = pt.logaddexp(x, y)
            base = segment_sum_pt(y, data.p_pattern, data.n_patterns)
            summed = base[:, None] + pt.zeros((data.n_patterns, K))[
                data.p_pattern, data.p_code
            ].inc(match - y)
            log_prior = padded_log_simplex_pt(prev, data.valid)
            ll, _ = pattern_loglik_pt(summed, data, log_prior)
            pm.Potential("marginal_loglik", pt.dot(data.pattern_count.astype(float), ll))
        return model

    def initial_values(self, data: LatentClassData) -> dict[str, np.ndarray]:
        st = majority_vote_stats(data)
        R, D, G = len(data.raters), len(data.dimensions), len(data.designs)
        comp = np.clip(st["agreement"], 0.3, 0.95).reshape(R, D, G)
        init: dict[str, np.ndarray] = {}
        if self.is_hierarchical(data):
            cen_u, cen_v = self.is_centred(data)
            init["competence_cell_mean"] = logit(comp.mean(axis=0))
            init["rater_effect_basis" if cen_u else "rater_z"] = np.zeros(R - 1)
            init["rater_sd"] = np.array(0.5)
            if D * G > 1:
                init["cell_effect_basis" if cen_v else "cell_z"] = np.zeros((R - 1, D * G - 1))
                init["cell_sd"] = np.array(0.3)
        else:
            init["competence_arcsine"] = unit_to_arcsine(comp)
        init.update(padded_dirichlet_init("spam", st["label_freq"], data.n_categories))
        init.update(padded_dirichlet_init("prevalence", st["prevalence"], data.n_categories))
        return init

    # ------------------------------------------------------------------ compiled density

    def _fast_path_ok(self) -> bool:
        p = self._priors
        return (
            p["competence"].dist == "Beta"
            and p["rater_sd"].dist == "HalfNormal"
            and p["cell_sd"].dist == "HalfNormal"
            and np.ndim(p["spam"].param("a", 10.0)) == 0
            and np.ndim(p["prevalence"].param("a", 1.0)) == 0
        )

    def has_density(self, data: LatentClassData) -> bool:
        return self._fast_path_ok()

    def density(
        self, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """The model's log density with a hand-written gradient (compiled once per
        installation), for NUTS without PyMC's compilation; None when the priors are not
        of the default families. Chains start at ``start`` (an EM estimate's
        ``competence``, ``spam``, ``prevalence`` and, hierarchical, its
        ``competence_cell_mean``, ``rater_effect`` and ``cell_effect``) or else at the
        majority vote."""
        if not self.has_density(data):
            return None
        return mace_density(self, data, start)

    # ------------------------------------------------------------------ NumPy reference

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: TableLayout
    ) -> tuple[np.ndarray, np.ndarray]:
        """MACE's table (``reference.mace_rating_table``) and the log prevalence, for S
        draws."""
        T = mace_rating_table(params["competence"], params["spam"], lay)
        with np.errstate(divide="ignore"):
            log_prior = np.log(params["prevalence"])
        return T, log_prior

    def simulate_ratings(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        true_class: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        comp, spam = params["competence"], params["spam"]
        S = comp.shape[0]
        R, D, K = len(data.raters), len(data.dimensions), data.K
        th = comp.reshape(S, -1)[:, data.cell]
        xi = spam.reshape(S, R * D, K)[:, data.rater * D + data.dim, :]
        t = true_class[:, data.unit]
        competent = rng.random(th.shape) < th
        cum = np.cumsum(xi, axis=-1)
        u = rng.random((*th.shape, 1))
        spam_draw = np.minimum(np.sum(u > cum, axis=-1), K - 1)
        return np.where(competent, t, spam_draw).astype(np.int16)

    def rater_quantities(self, posterior: xr.Dataset) -> dict[str, xr.DataArray]:
        """``competence`` and ``spam``; hierarchical fits add ``typical_competence`` (the
        competence of the cell mean, ``logistic(beta_dg)``) and, with several designs,
        ``design_contrast`` (each design's logit cell mean minus the first design's)."""
        quantities = {"competence": posterior["competence"], "spam": posterior["spam"]}
        if "competence_cell_mean" in posterior:
            quantities["typical_competence"] = xr.apply_ufunc(
                expit, posterior["competence_cell_mean"]
            )
        if "design_effect" in posterior and "competence_cell_mean" in posterior:
            beta = posterior["competence_cell_mean"]
            first = beta.isel(design=0, drop=True)
            quantities["design_contrast"] = beta - first
        return quantities

    # ------------------------------------------------------------------ EM

    def fit_em(
        self,
        data: LatentClassData,
        *,
        random_seed: int,
        progress: bool,
        restarts: int = 5,
        max_iter: int = 500,
        tol: float = 1e-7,
        variational: bool = True,
        short_iter: int = 10,
        restart_units: int = RESTART_UNITS,
        **unused: Any,
    ) -> xr.DataTree:
        """Point estimates by (variational) EM with restarts. The first restart starts at
        the majority vote, the others at random parameters.

        Restarts follow the usual short-runs strategy (Biernacki, Celeux & Govaert 2003,
        "emEM"): every restart runs ``short_iter`` EM iterations (or fewer, when it
        converges), the restart with the highest objective after its short run is
        continued to convergence (relative change of the objective below ``tol``, at most
        ``max_iter`` iterations in all), and its estimates are reported; ``short_iter >=
        max_iter`` runs every restart to convergence and keeps the best by marginal
        likelihood. ``sample_stats.attrs["restart_loglik"]`` holds each restart's
        objective at the end of its run.

        Large data: with more than ``2 * restart_units`` units (default
        :data:`~raterstats.models.latent_class.em.RESTART_UNITS`), the short runs use a
        random subsample of ``restart_units`` units (seeded by ``random_seed``) and the
        start they pick (the majority vote or the same random parameters) runs on all the
        data to convergence (:func:`~raterstats.models.latent_class.em.short_run_restarts`);
        ``restart_units=0``: the short runs use all the data.
        ``sample_stats.attrs`` record each restart's iterations (``restart_iterations``)
        and the units of the short runs (``restart_units``).

        Flat MACE: mean-field variational Bayes (``variational=True``: expectations of log
        parameters under their Beta / Dirichlet posteriors, reported at posterior means) or
        EM with prior pseudo-counts. Hierarchical MACE: EM whose M-step maximises the
        expected complete-data log-likelihood plus the normal log-densities of the
        zero-sum rater and cell effects (kept summing to zero, as in the sampled model),
        with ``sigma_u`` and ``sigma_v`` held at their prior means (a penalised point
        estimate).
        """
        if unused:
            raise TypeError(f"unknown EM options {sorted(unused)}")
        rng = np.random.default_rng(random_seed)
        sub = restart_subsample(data, restart_units, random_seed)

        def on(d: LatentClassData) -> Any:
            lay = table_layout(d, d.p_cell)
            return lambda **kw: mace_em_run(
                self, d, lay=lay, rng=rng, tol=tol, variational=variational, **kw
            )

        res, runs, best = short_run_restarts(
            on(data),
            restarts=restarts,
            short_iter=short_iter,
            max_iter=max_iter,
            short_run=None if sub is None else on(sub),
            rng=rng,
        )
        units = data.n_units if sub is None else sub.n_units
        return em_datatree(res, runs, best, var_dims(data), data.coords(), restart_units=units)


__all__ = ["MACE"]
