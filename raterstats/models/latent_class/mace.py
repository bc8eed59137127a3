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

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr
from scipy.special import digamma, expit, logit

from raterstats.inference import Density, assemble_datatree
from raterstats.lazy import LazyModule
from raterstats.models.base import Prior
from raterstats.models.latent_class.base import (
    LatentClassData,
    LatentClassModel,
    class_counts,
    em_kernels,
    majority_vote,
    majority_vote_stats,
    pack_rows,
    padded_dirichlet,
    padded_dirichlet_init,
    padded_log_simplex_pt,
    pattern_loglik_pt,
    record_restarts,
    segment_sum_pt,
    short_run_restarts,
    table_layout,
    unpack_rows,
)
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
    centred : bool, optional
        Sample the zero-sum rater and cell effects' basis coordinates centred
        (``a ~ N(0, sigma_u)``, ``u = B a``) or non-centred (``a = sigma_u z``,
        ``z ~ N(0, 1)``). Default (None): non-centred unless the median
        rater x dimension x design cell has at least 20 ratings (then the data identify
        each effect and the centred form has the better geometry).
    repeats : {"include", "exclude"}
        Use repeated ratings of a unit by the same rater as further observations (default) or
        only first ratings.
    use_gold : bool
        Clamp the true label of units with a ``gold`` label (default True).
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
    rank_fit_method: ClassVar[str | None] = "em"
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
        "use_gold": True,
    }
    param_names: ClassVar[tuple[str, ...]] = ("competence", "spam", "prevalence")

    def _check_options(self) -> None:
        super()._check_options()
        h = self._options["hierarchical"]
        if h is not None and not isinstance(h, bool):
            raise ValueError("hierarchical must be True, False or None")
        c = self._options["centred"]
        if c is not None and not isinstance(c, bool):
            raise ValueError("centred must be True, False or None")
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

    def is_centred(self, data: LatentClassData) -> bool:
        """Whether the rater and cell effects are sampled centred (``centred`` or the
        default: centred when the median rater x dimension x design cell holds at least 20
        ratings, where the data pin each effect down and the non-centred form would make a
        funnel for NUTS; non-centred otherwise)."""
        c = self._options["centred"]
        if c is not None:
            return bool(c)
        n = np.bincount(data.cell, minlength=data.n_cells)
        return bool(np.median(n[n > 0]) >= 20)

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
        } | _basis_coords(data)
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
                centred = self.is_centred(data)
                cells = ("rater", "dimension", "design")
                basis_r = zero_sum_basis(R)

                def coordinates(name: str, sigma: Any, dims: tuple[str, ...]) -> Any:
                    # zero-sum effects' coordinates in the orthonormal zero-sum bases:
                    # centred N(0, sigma), or sigma * N(0, 1) (non-centred)
                    if centred:
                        return pm.Normal(f"{name}_basis", 0.0, sigma, dims=dims)
                    return sigma * pm.Normal(name.replace("_effect", "_z"), 0.0, 1.0, dims=dims)

                sigma_u = self._priors["rater_sd"].create("rater_sd")
                a_u = coordinates("rater_effect", sigma_u, ("rater_basis",))
                u = pm.Deterministic("rater_effect", pt.dot(basis_r, a_u), dims="rater")
                eta = beta[None, :, :] + u[:, None, None]
                if D * G > 1:
                    basis_c = zero_sum_basis(D * G)
                    sigma_v = self._priors["cell_sd"].create("cell_sd")
                    a_v = coordinates("cell_effect", sigma_v, ("rater_basis", "cell_basis"))
                    v = pt.dot(pt.dot(basis_r, a_v), basis_c.T).reshape((R, D, G))
                    eta = eta + pm.Deterministic("cell_effect", v, dims=cells)
                pm.Deterministic(
                    "competence", pm.math.sigmoid(eta), dims=("rater", "dimension", "design")
                )
                for name, value in _decomposition(beta, D, G).items():
                    pm.Deterministic(name, value, dims=_var_dims(data)[name])
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
            cen = self.is_centred(data)
            init["competence_cell_mean"] = logit(comp.mean(axis=0))
            init["rater_effect_basis" if cen else "rater_z"] = np.zeros(R - 1)
            init["rater_sd"] = np.array(0.5)
            if D * G > 1:
                init["cell_effect_basis" if cen else "cell_z"] = np.zeros((R - 1, D * G - 1))
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
        from raterstats.models.latent_class.callbacks import callback_buffer, mace_logp_cb
        from raterstats.models.latent_class.kernels import (
            dirichlet_const,
            mace_entry,
            pack,
        )

        pri = self._priors
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        C = R * D * G
        hier = self.is_hierarchical(data)
        has_v = hier and D * G > 1
        centred = hier and self.is_centred(data)
        lay = table_layout(data, data.p_cell)
        n_cat = data.n_categories.astype(np.int64)
        rows = np.tile(n_cat, R)
        mp = pri["competence_mean"]
        mean_mu = np.broadcast_to(mp.param("mu", 0.0), (D, G)).reshape(-1).astype(float)
        mean_sd = np.broadcast_to(mp.param("sigma", 1.0), (D, G)).reshape(-1).astype(float)
        spam_conc = np.full((R * D, K), float(pri["spam"].param("a", 10.0)))
        prev_conc = np.full((D, K), float(pri["prevalence"].param("a", 1.0)))
        n_rb, n_cb = R - 1, D * G - 1  # free coordinates of the zero-sum effects
        basis_r, basis_c = zero_sum_basis(R), zero_sum_basis(D * G)
        n_head = (D * G + 1 + n_rb + ((1 + n_rb * n_cb) if has_v else 0)) if hier else C
        n_spam = int(np.sum(rows - 1))
        n_prev = int(np.sum(n_cat - 1))
        ndim = n_head + n_spam + n_prev
        ints = pack(
            [
                np.array([int(hier), int(has_v), R, D, G, K, int(centred)]),
                n_cat,
                lay["e_row"],
                lay["e_code"],
                lay["p_e"],
                lay["p_start"],
                lay["pattern_dim"],
                lay["mask"].astype(np.int64),
            ],
            np.int64,
        )
        a_c, b_c = self.competence_beta()
        const = dirichlet_const(rows, spam_conc) + dirichlet_const(n_cat, prev_conc)
        if not hier:
            const -= C * (math.lgamma(a_c) + math.lgamma(b_c) - math.lgamma(a_c + b_c))
        floats = pack(
            [
                np.array(
                    [
                        a_c,
                        b_c,
                        float(pri["rater_sd"].param("sigma", 1.0)),
                        float(pri["cell_sd"].param("sigma", 1.0)),
                        const,
                    ]
                ),
                mean_mu,
                mean_sd,
                lay["pattern_w"],
                spam_conc,
                prev_conc,
                basis_r,
                basis_c,
            ],
            np.float64,
        )

        def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
            g = np.empty(ndim)
            lp = mace_entry(x, ints, floats, g)
            return float(lp), g

        def expand(x: np.ndarray) -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            if hier:
                beta = x[: D * G].reshape(D, G)
                s_u = np.exp(x[D * G])
                z_u = x[D * G + 1 : D * G + 1 + n_rb]
                u = basis_r @ (z_u if centred else s_u * z_u)
                eta = beta[None] + u[:, None, None]
                out["competence_cell_mean"] = beta
                out["rater_sd"] = np.asarray(s_u)
                out["rater_effect_basis" if centred else "rater_z"] = z_u
                out["rater_effect"] = u
                if has_v:
                    s_v = np.exp(x[D * G + 1 + n_rb])
                    z_v = x[D * G + 2 + n_rb : n_head].reshape(n_rb, n_cb)
                    v = (basis_r @ (z_v if centred else s_v * z_v) @ basis_c.T).reshape(R, D, G)
                    eta = eta + v
                    out["cell_sd"] = np.asarray(s_v)
                    out["cell_effect_basis" if centred else "cell_z"] = z_v
                    out["cell_effect"] = v
                out.update(_decomposition(beta))
                out["competence"] = expit(eta)
            else:
                out["competence"] = arcsine_to_unit(x[:C]).reshape(R, D, G)
            out["spam"] = unpack_rows(x[n_head : n_head + n_spam], rows, K).reshape(R, D, K)
            out["prevalence"] = unpack_rows(x[n_head + n_spam :], n_cat, K)
            return out

        st = majority_vote_stats(data)
        comp0 = np.clip(st["agreement"], 0.3, 0.95).reshape(R, D, G)

        def start_point() -> np.ndarray:
            assert start is not None
            if hier:
                beta = np.asarray(start["competence_cell_mean"], float).reshape(D, G)
                u = np.asarray(start["rater_effect"], float)
                u = u - u.mean()
                s_u = max(float(np.std(u)), 0.05)
                z_u = basis_r.T @ u
                head = [beta.reshape(-1), [np.log(s_u)], z_u if centred else z_u / s_u]
                if has_v:
                    v = np.asarray(start["cell_effect"], float).reshape(R, D * G)
                    v = v - v.mean(axis=0, keepdims=True)
                    v = v - v.mean(axis=1, keepdims=True)
                    s_v = max(float(np.std(v)), 0.05)
                    z_v = (basis_r.T @ v @ basis_c).reshape(-1)
                    head += [[np.log(s_v)], z_v if centred else z_v / s_v]
                h = np.concatenate(head)
            else:
                comp = np.clip(np.asarray(start["competence"], float), 1e-4, 1 - 1e-4)
                h = unit_to_arcsine(comp).reshape(-1)
            spam = np.clip(np.asarray(start["spam"], float).reshape(R * D, K), 1e-6, None)
            prev = np.clip(np.asarray(start["prevalence"], float), 1e-6, None)
            return np.concatenate([h, pack_rows(spam, rows), pack_rows(prev, n_cat)])

        x_start = start_point() if start is not None else None

        def initial_point(rng: np.random.Generator) -> np.ndarray:
            if x_start is not None:
                return x_start + rng.normal(0.0, 0.1, x_start.size)
            if hier:
                head = [logit(comp0.mean(axis=0)).reshape(-1), [np.log(0.5)], np.zeros(n_rb)]
                if has_v:
                    head += [[np.log(0.3)], np.zeros(n_rb * n_cb)]
                h = np.concatenate(head)
            else:
                h = unit_to_arcsine(comp0).reshape(-1)
            x0 = np.concatenate(
                [
                    h,
                    pack_rows(st["label_freq"].reshape(R * D, K), rows),
                    pack_rows(st["prevalence"], n_cat),
                ]
            )
            return x0 + rng.normal(0.0, 0.1, x0.size)

        dims = _var_dims(data) | _BASIS_DIMS
        probe = expand(initial_point(np.random.default_rng(0)))
        return Density(
            ndim=ndim,
            logp_grad=logp_grad,
            expand=expand,
            c_logp=mace_logp_cb,
            c_data=callback_buffer(ints, floats),
            var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
            var_dims={k: dims[k] for k in probe},
            coords=data.coords() | _basis_coords(data),
            initial_point=initial_point,
            # hierarchical competence: with zero-sum effects a diagonal mass matrix needs
            # 15 leapfrog steps per draw on the ArchEHR-like study (33 with free effects),
            # low-rank 14 (8 instead of 15 on the clinical-QA study), and low-rank gave the
            # higher bulk ESS per CPU second on every study measured (see the model card)
            sampler_defaults={"adaptation": "low_rank"} if hier else None,
        )

    # ------------------------------------------------------------------ NumPy kernels

    def rating_log_prob(self, params: dict[str, np.ndarray], data: LatentClassData) -> np.ndarray:
        comp, spam = params["competence"], params["spam"]
        S = comp.shape[0]
        R, D, K = len(data.raters), len(data.dimensions), data.K
        th = comp.reshape(S, -1)[:, data.p_cell]
        xi = spam.reshape(S, R * D, K)[:, data.p_rater * D + data.p_dim, data.p_code]
        with np.errstate(divide="ignore"):
            base = np.log1p(-th) + np.log(xi)
            match = np.log(th + (1.0 - th) * xi)
        out = np.repeat(base[..., None], K, axis=-1)
        out[:, np.arange(data.p_code.size), data.p_code] = match
        return out

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: dict[str, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        comp, spam = params["competence"], params["spam"]
        S = comp.shape[0]
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        e_cell, e_code = lay["e_row"], lay["e_code"]
        e_rd = (e_cell // (D * G)) * D + (e_cell // G) % D
        th = comp.reshape(S, -1)[:, e_cell]
        xi = spam.reshape(S, R * D, K)[:, e_rd, e_code]
        with np.errstate(divide="ignore"):
            base = np.log1p(-th) + np.log(xi)
            match = np.log(th + (1.0 - th) * xi)
            log_prior = np.log(params["prevalence"])
        T = np.repeat(base[..., None], K, axis=-1)
        T[:, np.arange(e_cell.size), e_code] = match
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
        lay = table_layout(data, data.p_cell)
        res, runs, best = short_run_restarts(
            lambda **kw: _mace_em(
                self, data, lay=lay, rng=rng, tol=tol, variational=variational, **kw
            ),
            restarts=restarts,
            short_iter=short_iter,
            max_iter=max_iter,
        )
        values = {k: v[None, None] for k, v in res["values"].items()}
        dt = assemble_datatree(
            values,
            _var_dims(data),
            data.coords(),
            sample_stats={
                "lp": np.array([[res["loglik"]]]),
                "converged": np.array([[res["converged"]]]),
                "n_iterations": np.array([[res["n_iter"]]]),
            },
        )
        record_restarts(dt, runs, best)
        return dt


def arcsine_to_unit(u: np.ndarray) -> np.ndarray:
    """Competence from the arcsine scale: ``sin^2(pi/2 logistic(u))``.

    Examples
    --------
    >>> import numpy as np
    >>> arcsine_to_unit(np.array([0.0])).round(6)
    array([0.5])
    """
    return np.asarray(np.sin(0.5 * np.pi * expit(u)) ** 2)


def unit_to_arcsine(theta: np.ndarray) -> np.ndarray:
    """Inverse of :func:`arcsine_to_unit`: ``logit(2/pi arcsin(sqrt(theta)))``.

    Examples
    --------
    >>> import numpy as np
    >>> theta = np.array([0.01, 0.5, 0.99])
    >>> np.allclose(arcsine_to_unit(unit_to_arcsine(theta)), theta)
    True
    """
    return np.asarray(logit(np.arcsin(np.sqrt(theta)) / (0.5 * np.pi)))


def arcsine_beta_logp_pt(u: Any, a: float, b: float) -> tuple[Any, Any, Any]:
    """Beta(a, b) log density of flat MACE's competence on the arcsine scale, with
    ``log theta`` and ``log(1 - theta)`` (PyTensor; elementwise in ``u``).

    ``theta = sin^2(phi)``, ``phi = pi/2 logistic(u)``. Under Beta(1/2, 1/2), the arcsine
    law, ``phi`` is uniform, so ``u`` is standard logistic a priori; on the logit scale the
    same prior has exponential tails half as steep, and a rater whose ratings say little
    about competence (a near spammer, or one with few ratings) leaves NUTS in those tails.
    On the product data of Zheng et al. (2017) the arcsine scale doubled the smallest bulk
    ESS (see the MACE card). The compiled density uses the same coordinates and formulas
    (:func:`raterstats.models.latent_class.kernels.arcsine_log_sin`).

    Examples
    --------
    >>> import numpy as np
    >>> lp, log_t, log_1mt = arcsine_beta_logp_pt(np.array([0.0]), 0.5, 0.5)
    >>> np.round([lp.eval()[0], np.exp(log_t.eval()[0])], 4)  # log(1/4), theta = 1/2
    array([-1.3863,  0.5   ])
    """
    u = pt.as_tensor_variable(u)

    def log_sin(v: Any) -> Any:
        # log sin(pi/2 logistic(v)), = log(pi/2) + v where sin z = z (z < 1e-13)
        inner = pt.log(pt.sin(0.5 * np.pi * pt.sigmoid(pt.maximum(v, -30.0))))
        return pt.switch(v < -30.0, math.log(0.5 * np.pi) + v, inner)

    ls, lc = log_sin(u), log_sin(-u)
    norm = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    lp = (
        (2 * a - 1) * ls
        + (2 * b - 1) * lc
        + math.log(math.pi)
        - pt.softplus(-u)
        - pt.softplus(u)
        - norm
    )
    return lp, 2 * ls, 2 * lc


def _decomposition(beta: Any, D: int | None = None, G: int | None = None) -> dict[str, Any]:
    """Sum-to-zero decomposition of the logit cell means ``beta (D, G)``:
    ``mu + alpha_d + gamma_g + (alpha gamma)_dg`` (NumPy arrays or PyTensor tensors)."""
    if D is None or G is None:
        D, G = beta.shape
    mu = beta.mean()
    alpha = beta.mean(axis=1) - mu
    gamma = beta.mean(axis=0) - mu
    out = {"competence_mu": mu}
    if D > 1:
        out["dimension_effect"] = alpha
    if G > 1:
        out["design_effect"] = gamma
    if D > 1 and G > 1:
        out["dimension_design_effect"] = beta - mu - alpha[:, None] - gamma[None, :]
    return out


def _var_dims(data: LatentClassData) -> dict[str, tuple[str, ...]]:
    return {
        "competence": ("rater", "dimension", "design"),
        "spam": ("rater", "dimension", "category"),
        "prevalence": ("dimension", "category"),
        "competence_cell_mean": ("dimension", "design"),
        "rater_effect": ("rater",),
        "cell_effect": ("rater", "dimension", "design"),
        "competence_mu": (),
        "dimension_effect": ("dimension",),
        "design_effect": ("design",),
        "dimension_design_effect": ("dimension", "design"),
    }


#: dims of the hierarchical model's scales and zero-sum basis coordinates
_BASIS_DIMS: dict[str, tuple[str, ...]] = {
    "rater_sd": (),
    "cell_sd": (),
    "rater_z": ("rater_basis",),
    "rater_effect_basis": ("rater_basis",),
    "cell_z": ("rater_basis", "cell_basis"),
    "cell_effect_basis": ("rater_basis", "cell_basis"),
}


def _basis_coords(data: LatentClassData) -> dict[str, list[int]]:
    """Coordinates of the zero-sum bases: ``R - 1`` over raters, ``D * G - 1`` over the
    dimension x design cells."""
    n_cells = len(data.dimensions) * len(data.designs)
    return {
        "rater_basis": list(range(len(data.raters) - 1)),
        "cell_basis": list(range(n_cells - 1)),
    }


def _mace_em(
    model: MACE,
    data: LatentClassData,
    *,
    rng: np.random.Generator,
    random_init: bool,
    max_iter: int,
    tol: float,
    variational: bool,
    lay: dict[str, np.ndarray] | None = None,
    state: dict[str, Any] | None = None,
    finish: bool = True,
) -> dict[str, Any]:
    """One EM run: from the majority vote, random parameters (``random_init``) or the
    ``state`` of an earlier run (continued, its iterations counted); ``finish=False``
    skips the point estimates and plug-in likelihood (a short run of the restarts)."""
    pri = model.priors
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C = R * D * G
    hier = model.is_hierarchical(data)
    a_c, b_c = model.competence_beta()
    a_spam = np.broadcast_to(pri["spam"].param("a", 10.0), (K,))
    a_prev = np.broadcast_to(pri["prevalence"].param("a", 1.0), (K,))
    if lay is None:
        lay = table_layout(data, data.p_cell)
    em_estep, em_accumulate, em_estep_acc = em_kernels(lay)
    e_cell, e_code = lay["e_row"], lay["e_code"]
    E = e_cell.size
    e_rd = (e_cell // (D * G)) * D + (e_cell // G) % D
    e_dim = (e_cell // G) % D
    e_valid = data.valid[e_dim]  # (E, K)
    P = data.n_patterns
    mask = lay["mask"]
    valid_rd = np.broadcast_to(data.valid, (R, D, K)).reshape(R * D, K)
    cell_dg = np.arange(C) % (D * G)
    cell_r = np.arange(C) // (D * G)
    m0, s0 = pri["competence_mean"].param("mu", 1.0), pri["competence_mean"].param("sigma", 1.5)
    sig_u = pri["rater_sd"].mean()
    sig_v = pri["cell_sd"].mean()
    n_e = np.bincount(lay["p_e"], lay["pattern_w"][data.p_pattern], minlength=E)
    n_cnt = np.bincount(e_cell, n_e, minlength=C)
    q = np.empty((P, K))

    def table(e_log_t: np.ndarray, e_log_1mt: np.ndarray, e_log_xi: np.ndarray) -> tuple:
        mlog = e_log_1mt[e_cell] + e_log_xi[e_rd, e_code]
        match = np.logaddexp(e_log_t[e_cell], mlog)
        T = np.where(e_valid, mlog[:, None], 0.0)
        T[np.arange(E), e_code] = match
        return T, np.exp(e_log_t[e_cell] - match)

    hier_x = np.zeros(D * G + R + (C if D * G > 1 else 0))
    hier_x[: D * G] = m0
    prev_ll = -np.inf
    it0 = 0
    M: np.ndarray | None = None  # expected counts of q (from the E-step)
    M_buf = np.zeros((E, K))
    if state is not None:
        q[:] = state["q"]
        hier_x = state["hier_x"].copy()
        prev_ll, it0 = state["objective"], state["n_iter"]
        # the M-step's competence responsibilities use the parameters that gave q
        e_log_t, e_log_1mt, e_log_xi = state["e_log"]
        M = state["M"]
        e_log_prev = np.zeros((D, K))
        have_q = True
    elif random_init:
        theta = rng.uniform(0.3, 0.95, C)
        xi = rng.dirichlet(np.ones(K), R * D) * valid_rd + 1e-12
        xi /= xi.sum(axis=1, keepdims=True)
        prev = rng.dirichlet(np.ones(K), D) * data.valid + 1e-12
        prev /= prev.sum(axis=1, keepdims=True)
        e_log_t, e_log_1mt = np.log(theta), np.log1p(-theta)
        with np.errstate(divide="ignore"):
            e_log_xi = np.where(valid_rd, np.log(xi), -np.inf)
            e_log_prev = np.where(data.valid, np.log(prev), -np.inf)
        have_q = False
    else:
        first = np.zeros(P, dtype=np.int64)
        first[data.unit_pattern[::-1]] = np.arange(data.n_units)[::-1]
        q[:] = majority_vote(data)[first]
        e_log_t = np.full(C, np.log(0.7))
        e_log_1mt = np.full(C, np.log(0.3))
        e_log_xi = np.where(valid_rd, np.log(1.0 / K), -np.inf)
        e_log_prev = np.zeros((D, K))
        have_q = True
    eta = np.zeros(C)
    converged = False
    n_iter = it0
    ll = prev_ll
    s_cnt = np.zeros(C)
    sc = np.zeros((R * D, K))
    pc = np.zeros((D, K))
    for it in range(it0, max_iter):
        n_iter = it + 1
        if have_q:
            # ---- M-step from class posteriors q (P, K)
            _, ratio = table(e_log_t, e_log_1mt, e_log_xi)
            if M is None:  # q given (majority vote), not from an E-step
                M = em_accumulate(q, lay["p_e"], lay["p_start"], lay["pattern_w"], E)
            comp = ratio * M[np.arange(E), e_code]
            s_cnt = np.bincount(e_cell, comp, minlength=C)
            spam_cnt = np.bincount(e_rd * K + e_code, n_e - comp, minlength=R * D * K)
            spam_cnt = spam_cnt.reshape(R * D, K)
            prev_cnt = class_counts(data, q)
            if hier:
                hier_x, eta = _hier_mstep(
                    hier_x, s_cnt, n_cnt, cell_dg, cell_r, D * G, R, m0, s0, sig_u, sig_v
                )
                e_log_t, e_log_1mt = -np.logaddexp(0, -eta), -np.logaddexp(0, eta)
            elif variational:
                tot = digamma(a_c + b_c + n_cnt)
                e_log_t = digamma(a_c + s_cnt) - tot
                e_log_1mt = digamma(b_c + n_cnt - s_cnt) - tot
            else:
                th = (a_c + s_cnt) / (a_c + b_c + n_cnt)
                e_log_t, e_log_1mt = np.log(th), np.log1p(-th)
            sc = np.where(valid_rd, spam_cnt + a_spam, 0.0)
            pc = np.where(data.valid, prev_cnt + a_prev, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                if variational:
                    e_log_xi = np.where(
                        valid_rd,
                        digamma(np.where(valid_rd, sc, 1.0))
                        - digamma(sc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
                    e_log_prev = np.where(
                        data.valid,
                        digamma(np.where(data.valid, pc, 1.0))
                        - digamma(pc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
                else:
                    e_log_xi = np.where(
                        valid_rd, np.log(sc / sc.sum(axis=1, keepdims=True)), -np.inf
                    )
                    e_log_prev = np.where(
                        data.valid, np.log(pc / pc.sum(axis=1, keepdims=True)), -np.inf
                    )
        # ---- E-step
        T, _ = table(e_log_t, e_log_1mt, e_log_xi)
        M = M_buf
        ll = em_estep_acc(
            T, e_log_prev, lay["p_e"], lay["p_start"], lay["pattern_dim"], lay["pattern_w"], mask,
            q, M,
        )  # fmt: skip
        have_q = True
        if abs(ll - prev_ll) <= tol * max(1.0, abs(ll)):
            converged = True
            break
        prev_ll = ll
    run: dict[str, Any] = {"objective": float(ll), "converged": converged, "n_iter": n_iter}
    if not finish:
        run["state"] = {
            "q": q, "hier_x": hier_x, "objective": float(ll), "n_iter": n_iter,
            "e_log": (e_log_t, e_log_1mt, e_log_xi), "M": M,
        }  # fmt: skip
        return run
    # ---- point estimates (posterior means) and plug-in marginal log-likelihood
    theta = expit(eta) if hier else (a_c + s_cnt) / (a_c + b_c + n_cnt)
    xi = sc / sc.sum(axis=1, keepdims=True)
    prev = pc / pc.sum(axis=1, keepdims=True)
    values: dict[str, np.ndarray] = {
        "competence": theta.reshape(R, D, G),
        "spam": xi.reshape(R, D, K),
        "prevalence": prev,
    }
    if hier:
        beta = hier_x[: D * G].reshape(D, G)
        values["competence_cell_mean"] = beta
        values["rater_effect"] = hier_x[D * G : D * G + R]
        if D * G > 1:
            values["cell_effect"] = hier_x[D * G + R :].reshape(R, D, G)
        values.update(_decomposition(beta))
    with np.errstate(divide="ignore"):
        T, _ = table(np.log(theta), np.log1p(-theta), np.log(np.where(valid_rd, xi, 1.0)))
        log_prev = np.where(data.valid, np.log(np.where(data.valid, prev, 1.0)), -np.inf)
    ll_plugin = em_estep(
        T, log_prev, lay["p_e"], lay["p_start"], lay["pattern_dim"], lay["pattern_w"], mask,
        np.empty((P, K)),
    )  # fmt: skip
    return {**run, "values": values, "loglik": float(ll_plugin)}


def _hier_mstep(
    x0: np.ndarray,
    s: np.ndarray,
    n: np.ndarray,
    cell_dg: np.ndarray,
    cell_r: np.ndarray,
    n_dg: int,
    R: int,
    m0: float,
    s0: float,
    sig_u: float,
    sig_v: float,
    sweeps: int = 5,
) -> tuple[np.ndarray, np.ndarray]:
    """Increase sum_c s log sigmoid(eta) + (n - s) log sigmoid(-eta) + normal log-priors of
    eta_c = beta_dg + u_r (+ v_c), with the zero-sum effects of the sampled model (``u``
    sums to zero over raters, ``v`` over raters and over cells; their log-priors are
    ``-|u|^2 / 2 sigma_u^2`` and ``-|v|^2 / 2 sigma_v^2``), by block-coordinate Newton sweeps
    (beta, u, v) with a diagonal Hessian, each step projected onto the constraints by
    Lagrange multipliers (a generalised M-step)."""
    has_v = x0.size > n_dg + R
    beta = x0[:n_dg].copy()
    u = x0[n_dg : n_dg + R].copy()
    v = x0[n_dg + R :].copy() if has_v else np.zeros(cell_dg.size)
    for _ in range(sweeps):
        for block in ("beta", "u", "v"):
            eta = beta[cell_dg] + u[cell_r] + v
            p = expit(eta)
            g = s - n * p
            h = n * p * (1 - p)
            if block == "beta":
                gb = np.bincount(cell_dg, g, minlength=n_dg) - (beta - m0) / s0**2
                hb = np.bincount(cell_dg, h, minlength=n_dg) + 1 / s0**2
                beta = beta + gb / hb
            elif block == "u":
                gu = np.bincount(cell_r, g, minlength=R) - u / sig_u**2
                hu = np.bincount(cell_r, h, minlength=R) + 1 / sig_u**2
                lam = np.sum(gu / hu) / np.sum(1 / hu)  # keeps sum(u) = 0
                u = u + (gu - lam) / hu
            elif has_v:
                gv = (g - v / sig_v**2).reshape(R, n_dg)
                hv = (h + 1 / sig_v**2).reshape(R, n_dg)
                v = v + _two_way_zero_sum_step(gv, hv).reshape(-1)
    x = np.concatenate([beta, u, v]) if has_v else np.concatenate([beta, u])
    return x, beta[cell_dg] + u[cell_r] + v


def _two_way_zero_sum_step(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The Newton step ``d`` maximising ``sum(g d - h d^2 / 2)`` subject to zero row and
    column sums: ``d = (g - a_r - b_c) / h`` with multipliers ``a``, ``b`` from the
    (rank-deficient by one) linear system of the constraints."""
    R, M = g.shape
    w = 1.0 / h
    A = np.zeros((R + M, R + M))
    A[:R, :R] = np.diag(w.sum(axis=1))
    A[:R, R:] = w
    A[R:, :R] = w.T
    A[R:, R:] = np.diag(w.sum(axis=0))
    rhs = np.concatenate([(g * w).sum(axis=1), (g * w).sum(axis=0)])
    ab = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return (g - ab[:R, None] - ab[None, R:]) * w


__all__ = ["MACE"]
