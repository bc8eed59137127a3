"""The enhanced Bayesian classifier combination (EBCC; Li, Rubinstein & Cohn 2019): every
true class has subtypes, and a rater's confusion depends on the subtype of the item, so
that errors the raters make together on items of one subtype are absorbed.

Generative story (one latent true label and subtype per unit: item, segment, dimension)::

    T_u ~ Categorical(tau_d)                        tau_d ~ Dirichlet(3)
    g_u | T_u = t ~ Categorical(nu_d[t, :])         nu_d[t] ~ Dirichlet(1), M subtypes
    A_uj | T_u = t, g_u = m ~ Categorical(pi_jdg[t, m, :])
    pi_jdg[t, m, :] ~ Dirichlet(alpha_t)            2.5 K on the diagonal, 1 elsewhere

Given the class alone, the ratings of one unit are *not* independent (they share its
subtype): the likelihood sums each unit's ``K M`` (class, subtype) states out together.
The parameters belong to raters, so units with the same ratings still share a likelihood
(the family's rating patterns). With ``M = 1`` this is Bayesian Dawid-Skene (IBCC). The
number of subtypes is fixed (``subtypes=M``) or chosen by the held-out rule (``"auto"``,
:mod:`~raterstats.models.latent_class.crowd_vb`). The posterior reports ``confusion``,
each rater's confusion averaged over the subtypes (``sum_m nu_d[t, m] pi[t, m, :]``).
See ``models/ebcc/card.md`` for where this differs from the authors' code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Method
from raterstats.models.latent_class.community_ds import diagonal_conc
from raterstats.models.latent_class.crowd_base import CrowdModel
from raterstats.models.latent_class.crowd_vb import VBLayout, cell_indices
from raterstats.models.latent_class.data import LatentClassData, majority_vote_stats
from raterstats.models.latent_class.ebcc_vb import ebcc_vb_run, marginal_confusion, state_mask
from raterstats.models.latent_class.em import EM_NUMPY_MAX
from raterstats.models.latent_class.graph import NEG, segment_sum_pt
from raterstats.models.latent_class.reference import (
    TableLayout,
    ds_rating_table,
    logsumexp_np,
    pattern_log_joint_np,
)
from raterstats.models.priors import Prior

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")


class EnhancedBCC(CrowdModel):
    """Enhanced Bayesian classifier combination: rater confusions per (true class, item
    subtype).

    Parameters
    ----------
    subtypes : int or "auto"
        Number of subtypes ``M`` of every class; ``"auto"`` (default): the held-out rule
        over ``M = 1..4`` (the smallest ``M`` within one standard error of the best
        held-out log-likelihood of the ratings, 5 folds; no gold label is used).
    repeats : {"include", "exclude"}
        Use repeated ratings as further observations (default) or first ratings only.
    use_gold : bool
        Clamp the true label of units with a ``gold`` label (default False).
    priors : mapping, optional
        Override by name: ``confusion`` (Dirichlet rows of every (class, subtype)
        confusion, default ``off_diagonal=1``, ``diagonal_per_category=2.5``),
        ``subtype_weight`` (Dirichlet concentration of ``nu``, default 1),
        ``prevalence`` (Dirichlet concentration, default 3).

    Examples
    --------
    >>> from raterstats.models.latent_class import EnhancedBCC
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=4, random_seed=1).ratings
    >>> dt = EnhancedBCC(subtypes=2).fit(r, method="em", random_seed=1)
    >>> dt.posterior["subtype_confusion"].dims[2:]
    ('rater', 'dimension', 'design', 'true', 'subtype', 'rated')
    """

    name = "ebcc"
    cli_names: ClassVar[tuple[str, ...]] = ("enhanced-bcc",)
    description: ClassVar[str] = (
        "the enhanced Bayesian classifier combination (rater confusions per true class and "
        "item subtype; Li, Rubinstein & Cohn 2019)"
    )
    references: ClassVar[tuple[str, ...]] = (
        "Li, Y., Rubinstein, B. I. P., & Cohn, T. (2019). Exploiting worker correlation for "
        "label aggregation in crowdsourcing. Proceedings of the 36th International "
        "Conference on Machine Learning (ICML), PMLR 97, 3886-3895.",
        "Kim, H.-C., & Ghahramani, Z. (2012). Bayesian classifier combination. Proceedings "
        "of AISTATS, PMLR 22, 619-627.",
    )
    rank_fit_method: ClassVar[Method | None] = "em"
    size_option: ClassVar[str] = "subtypes"
    size_dim: ClassVar[str] = "subtype"
    default_priors: ClassVar[dict[str, Prior]] = {
        "confusion": Prior("Dirichlet", off_diagonal=1.0, diagonal_per_category=2.5),
        "subtype_weight": Prior("Dirichlet", a=1.0),
        "prevalence": Prior("Dirichlet", a=3.0),
    }
    default_options: ClassVar[dict[str, Any]] = {
        "subtypes": "auto",
        "repeats": "include",
        "use_gold": False,
    }
    param_names: ClassVar[tuple[str, ...]] = ("subtype_confusion", "subtype_weight", "prevalence")

    def check_options(self) -> None:
        super().check_options()
        bad = [k for k in self.default_priors if self._priors[k].dist != "Dirichlet"]
        if bad:
            raise ValueError("; ".join(f"prior {k!r} must be a Dirichlet" for k in bad))

    def confusion_conc(self, K: int) -> np.ndarray:
        """``(K, K)`` Dirichlet concentrations of every (class, subtype) confusion row."""
        return diagonal_conc(self._priors["confusion"], K)

    def size_dim_of_start(self, start: Any) -> int | None:
        if isinstance(start, Mapping) and "subtype_weight" in start:
            return int(np.shape(start["subtype_weight"])[-1])
        return None

    # ------------------------------------------------------------------ variational fit

    def vb_run(self, vl: VBLayout, q0: np.ndarray, size: int, **kw: Any) -> dict[str, Any]:
        """:func:`~raterstats.models.latent_class.ebcc_vb.ebcc_vb_run`; the estimates come
        back with the cells as rater x dimension x design."""
        run = ebcc_vb_run(self, vl, q0, size, **kw)
        if "values" in run:
            v = run["values"]
            R, D, G, K = vl.n_raters, vl.n_dims, vl.n_designs, vl.K
            v["subtype_confusion"] = v["subtype_confusion"].reshape(R, D, G, K, size, K)
            v["confusion"] = v["confusion"].reshape(R, D, G, K, K)
        return run

    def rated_probability(self, run: dict[str, Any], vl: VBLayout, size: int) -> np.ndarray:
        sub = np.asarray(run["values"]["subtype_confusion"])
        return sub.reshape(vl.n_cells, vl.K * size, vl.K)

    def em_dims(self) -> dict[str, tuple[str, ...]]:
        return {
            "subtype_confusion": ("rater", "dimension", "design", "true", "subtype", "rated"),
            "subtype_weight": ("dimension", "true", "subtype"),
            "prevalence": ("dimension", "category"),
            "confusion": ("rater", "dimension", "design", "true", "rated"),
        }

    # ------------------------------------------------------------------ PyMC model

    def build_model(self, data: LatentClassData, size: int | None = None) -> pm.Model:
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        M = self.model_size(data) if size is None else int(size)
        NC = R * D * G
        pri = self._priors
        coords: dict[str, list[Any]] = {
            "rater": list(data.raters),
            "dimension": list(data.dimensions),
            "design": list(data.designs),
            "category": list(range(K)),
            "true": list(range(K)),
            "rated": list(range(K)),
            "subtype": list(range(M)),
        }
        conc = self.confusion_conc(K)
        with pm.Model(coords=coords) as model:
            prev = pm.Dirichlet(
                "prevalence",
                a=np.full((D, K), float(pri["prevalence"].param("a", 3.0))),
                dims=("dimension", "category"),
            )
            if M > 1:
                nu = pm.Dirichlet(
                    "subtype_weight",
                    a=np.full((D, K, M), float(pri["subtype_weight"].param("a", 1.0))),
                    dims=("dimension", "true", "subtype"),
                )
            else:
                nu = pm.Deterministic(
                    "subtype_weight", pt.ones((D, K, 1)), dims=("dimension", "true", "subtype")
                )
            sub = pm.Dirichlet(
                "subtype_confusion",
                a=np.broadcast_to(conc[:, None, :], (R, D, G, K, M, K)).copy(),
                dims=("rater", "dimension", "design", "true", "subtype", "rated"),
            )
            pm.Deterministic(
                "confusion",
                (sub * nu[None, :, None, :, :, None]).sum(axis=4),
                dims=("rater", "dimension", "design", "true", "rated"),
            )
            log_sub = pt.log(sub).reshape((NC, K * M, K))
            per = log_sub[data.p_cell, :, data.p_code]  # (Np, K M)
            summed = segment_sum_pt(per, data.p_pattern, data.n_patterns)
            log_prior = (pt.log(prev)[:, :, None] + pt.log(nu)).reshape((D, K * M))
            mask = state_mask(data.class_mask(data.pattern_dim, data.pattern_gold), M)
            joint = pt.where(mask, log_prior[data.pattern_dim] + summed, NEG)
            ll = pt.logsumexp(joint, axis=-1)
            pm.Potential("marginal_loglik", pt.dot(data.pattern_count.astype(float), ll))
        return model

    def initial_values(self, data: LatentClassData) -> dict[str, np.ndarray]:
        """The majority vote's confusions for every subtype, even subtype weights (the
        PyMC path; the compiled density starts at the EM estimate)."""
        st = majority_vote_stats(data)
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        M = self.model_size(data)
        conf = np.clip(st["confusion"].reshape(R, D, G, K, K), 1e-3, None)
        conf = conf / conf.sum(-1, keepdims=True)
        out = {
            "prevalence": st["prevalence"],
            "subtype_confusion": np.broadcast_to(
                conf[:, :, :, :, None, :], (R, D, G, K, M, K)
            ).copy(),
        }
        if M > 1:
            out["subtype_weight"] = np.full((D, K, M), 1.0 / M)
        return out

    # ------------------------------------------------------------------ compiled density

    def has_density(self, data: LatentClassData) -> bool:
        return True

    def density(
        self, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """Compiled log density with a hand-written gradient (the same density as
        :meth:`build_model`); chains start at ``start`` (an EM estimate, jittered) or at
        the majority vote."""
        from raterstats.models.latent_class.crowd_density import ebcc_density

        return ebcc_density(self, data, self.model_size(data, start), start)

    # ------------------------------------------------------------------ NumPy reference

    def state_joint(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: TableLayout | None = None
    ) -> np.ndarray:
        """``(S, P, K, M)`` log P(class, subtype, ratings of the pattern) for S draws."""
        if lay is None:
            lay = self.table_layout(data)
        sub = params["subtype_confusion"]
        S, K = sub.shape[0], data.K
        M = sub.shape[-2]
        NC = len(data.raters) * len(data.dimensions) * len(data.designs)
        sub = sub.reshape(S, NC, K, M, K)
        D = len(data.dimensions)
        with np.errstate(divide="ignore"):
            T = np.log(sub)[:, lay.e_row, :, :, lay.e_code]  # (E, S, K, M)
            T = np.moveaxis(T, 0, 1).reshape(S, -1, K * M)
            lpri = np.log(params["prevalence"])[:, :, :, None] + np.log(params["subtype_weight"])
        joint = pattern_log_joint_np(
            T, lpri.reshape(S, D, K * M), lay._replace(mask=state_mask(lay.mask, M))
        )
        return joint.reshape(S, -1, K, M)

    def pattern_log_joint(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        lay: TableLayout | None = None,
    ) -> np.ndarray:
        """``(S, P, K)`` log P(class, ratings of the pattern), the subtype summed out."""
        return logsumexp_np(self.state_joint(params, data, lay), axis=-1)

    def draws_summary(
        self, posterior: xr.Dataset, data: LatentClassData, *, loglik: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """As the family's, through :meth:`pattern_log_joint` (the (class, subtype) states)
        in chunks of draws."""
        params = self.params_from_posterior(posterior)
        n = next(iter(params.values())).shape[0]
        prob = np.zeros((data.n_patterns, data.K))
        ll = np.empty((n, data.n_patterns)) if loglik else None
        lay = self.table_layout(data)
        M = params["subtype_weight"].shape[-1]
        per = max(1, EM_NUMPY_MAX * 20 // max(1, data.p_code.size * data.K * M))
        for i in range(0, n, per):
            sl = slice(i, min(i + per, n))
            joint = self.pattern_log_joint({k: v[sl] for k, v in params.items()}, data, lay)
            lse = logsumexp_np(joint, axis=-1)
            with np.errstate(invalid="ignore"):
                prob += np.exp(joint - lse[..., None]).sum(axis=0)
            if ll is not None:
                ll[sl] = lse
        return prob / n, ll

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: TableLayout
    ) -> tuple[np.ndarray, np.ndarray]:
        """The table of each rater's confusion averaged over the subtypes
        (``sum_m nu_d[t, m] pi[t, m, a]``, what one rating says about the class) and the
        log prevalence. Not the likelihood of a unit's ratings (which share the unit's
        subtype): that is :meth:`pattern_log_joint`."""
        sub = params["subtype_confusion"]
        S, K = sub.shape[0], data.K
        M = sub.shape[-2]
        R, D, G = len(data.raters), len(data.dimensions), len(data.designs)
        _, _, cell_dim = cell_indices(R, D, G)
        conf = marginal_confusion(sub.reshape(S, -1, K, M, K), params["subtype_weight"], cell_dim)
        with np.errstate(divide="ignore"):
            return ds_rating_table(np.log(conf), lay), np.log(params["prevalence"])

    def simulate_ratings(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        true_class: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Ratings given the true classes: each unit's subtype drawn from its conditional
        posterior given its class and ratings, then every rating from the rater's
        confusion for that class and subtype."""
        sub = params["subtype_confusion"]
        S, K = sub.shape[0], data.K
        M = sub.shape[-2]
        joint = self.state_joint(params, data)[:, data.unit_pattern]  # (S, U, K, M)
        jt = np.take_along_axis(joint, true_class[:, :, None, None], axis=2)[:, :, 0]  # (S, U, M)
        pg = np.exp(jt - logsumexp_np(jt, axis=-1)[..., None])
        g = np.minimum((rng.random((*pg.shape[:2], 1)) > np.cumsum(pg, -1)).sum(-1), M - 1)
        sub = sub.reshape(S, -1, K, M, K)
        t = true_class[:, data.unit]
        rows = sub[np.arange(S)[:, None], data.cell[None, :], t, g[:, data.unit]]
        u = rng.random((*t.shape, 1))
        return np.minimum(np.sum(u > np.cumsum(rows, axis=-1), axis=-1), K - 1).astype(np.int16)

    def rater_quantities(self, posterior: xr.Dataset) -> dict[str, xr.DataArray]:
        """``confusion`` (averaged over the subtypes), ``accuracy`` (its probability of
        the true label, averaged over the true label with the prevalence) and
        ``subtype_confusion``."""
        conf = posterior["confusion"]
        prev = posterior["prevalence"].rename(category="true")
        diag = xr.DataArray(
            np.diagonal(conf.values, axis1=-2, axis2=-1),
            dims=(*conf.dims[:-2], "true"),
            coords={k: v for k, v in conf.coords.items() if k != "rated"},
        )
        return {
            "confusion": conf,
            "accuracy": (diag * prev).sum("true"),
            "subtype_confusion": posterior["subtype_confusion"],
        }

    # ------------------------------------------------------------------ relabelling

    def component_features(self, posterior: xr.Dataset) -> list[tuple[Any, np.ndarray]]:
        """One group per dimension and true class: the subtypes' confusions of every
        rater and design and the subtypes' weights."""
        sub = posterior["subtype_confusion"].values  # (C, N, R, D, G, K, M, K)
        nu = posterior["subtype_weight"].values  # (C, N, D, K, M)
        S = sub.shape[0] * sub.shape[1]
        R, D, G, K, M = sub.shape[2:7]
        if M < 2:
            return []
        sub = sub.reshape(S, R, D, G, K, M, K)
        nu = nu.reshape(S, D, K, M)
        out = []
        for d in range(D):
            for t in range(K):
                f = np.moveaxis(sub[:, :, d, :, t], 3, 1).reshape(S, M, -1)  # (S, M, R G K)
                out.append(((d, t), np.concatenate([f, nu[:, d, t, :, None]], axis=2)))
        return out

    def permute_draws(
        self, posterior: xr.Dataset, perms: dict[Any, np.ndarray]
    ) -> dict[str, np.ndarray]:
        sub = posterior["subtype_confusion"].values
        nu = posterior["subtype_weight"].values
        S = sub.shape[0] * sub.shape[1]
        sub = sub.reshape(S, *sub.shape[2:]).copy()
        nu = nu.reshape(S, *nu.shape[2:]).copy()
        rows = np.arange(S)[:, None]
        for (d, t), p in perms.items():
            sub[:, :, d, :, t] = sub[:, :, d, :, t][rows, :, :, p].transpose(0, 2, 3, 1, 4)
            nu[:, d, t] = nu[:, d, t][rows, p]
        return {"subtype_confusion": sub, "subtype_weight": nu}


__all__ = ["EnhancedBCC"]
