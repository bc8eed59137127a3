"""Community Dawid-Skene (Venanzi, Guiver, Kazai, Kohli & Shokouhi 2014): raters in
communities that share a typical confusion matrix.

Generative story (one latent true label per unit: item, segment, dimension)::

    T_u ~ Categorical(pi_d)                          pi_d ~ Dirichlet(3)
    c_j ~ Categorical(rho)                           rho ~ Dirichlet(1), M communities
    C_m,dg[t, :] ~ Dirichlet(alpha_t)                2.5 K on the diagonal, 1 elsewhere
    s ~ Gamma(2, 0.1)                                the raters' concentration
    beta_jdg[t, :] ~ Dirichlet(f + s C_(c_j),dg[t, :])   the rater's own confusion, f = 1
    A_uj | T_u = t ~ Categorical(beta_jdg[t, :])

A rater's community ``c_j`` is shared by its rows on every dimension and design. Given
the raters' confusions the units are independent and ``c_j`` enters only through the
confusions' prior, so ``c_j`` is summed out of it (a mixture of Dirichlet priors per
rater), as the true labels are summed out of the likelihood: NUTS samples the confusions,
the community confusions, ``rho``, ``s`` and the prevalence. With ``M = 1`` this is
Dawid-Skene with a population confusion learnt from the ratings (partial pooling on the
probability scale). The number of communities is fixed (``communities=M``) or chosen by
the held-out rule (``"auto"``, :mod:`~raterstats.models.latent_class.crowd_vb`). See
``models/community_dawid_skene/card.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Method
from raterstats.models.latent_class.community_ds_vb import cds_vb_run
from raterstats.models.latent_class.crowd_base import CrowdModel
from raterstats.models.latent_class.crowd_vb import VBLayout
from raterstats.models.latent_class.data import (
    LatentClassData,
    majority_vote,
    majority_vote_stats,
)
from raterstats.models.latent_class.graph import pattern_loglik_pt, segment_sum_pt
from raterstats.models.latent_class.reference import TableLayout, ds_rating_table
from raterstats.models.priors import Prior

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")


def diagonal_conc(prior: Prior, K: int) -> np.ndarray:
    """``(K, K)`` Dirichlet concentrations of confusion rows from a ``Dirichlet`` prior
    with ``off_diagonal`` and ``diagonal_per_category`` (diagonal ``K`` times it), or
    ``diagonal`` (the diagonal itself), or ``a`` (a full K x K matrix or one number).

    Examples
    --------
    >>> diagonal_conc(Prior("Dirichlet", off_diagonal=1.0, diagonal_per_category=2.5), 2)
    array([[5., 1.],
           [1., 5.]])
    """
    full = prior.param("a")
    if full is not None and np.ndim(full) == 2:
        return np.asarray(full, dtype=float)[:K, :K].copy()
    off = float(prior.param("off_diagonal", 1.0) if full is None else full)
    m = np.full((K, K), off)
    if prior.param("diagonal") is not None:
        diag = float(prior.param("diagonal"))
    elif full is not None:
        diag = off
    else:
        diag = float(prior.param("diagonal_per_category", 2.5)) * K
    np.fill_diagonal(m, diag)
    return m


class CommunityDawidSkene(CrowdModel):
    """Community Dawid-Skene: a confusion matrix per rater, drawn around the typical
    confusion of the rater's community.

    Parameters
    ----------
    communities : int or "auto"
        Number of communities ``M``; ``"auto"`` (default): the held-out rule over
        ``M = 1..4`` (the smallest ``M`` within one standard error of the best held-out
        log-likelihood of the ratings, 5 folds; no gold label is used).
    repeats : {"include", "exclude"}
        Use repeated ratings as further observations (default) or first ratings only.
    use_gold : bool
        Clamp the true label of units with a ``gold`` label (default False).
    rater_floor : float
        ``f`` in the raters' prior ``Dirichlet(f + s C)`` (default 1: every entry's
        concentration at least 1; 0 gives ``Dirichlet(s C)``, whose density is unbounded
        at the simplex's edges when ``s C < 1``, see the card).
    centred : bool, optional
        How NUTS samples each rater's confusion row: centred (True), as an offset from its
        community's row scaled by ``1 / sqrt(s)`` (False), or (default None) centred where
        the row's ratings outweigh the prior (:meth:`centred_rows`).
    priors : mapping, optional
        Override by name: ``community_confusion`` (Dirichlet rows of the communities'
        confusions, default ``off_diagonal=1``, ``diagonal_per_category=2.5``, i.e.
        2.5 K on the diagonal), ``concentration`` (Gamma on ``s``, default
        ``alpha=2, beta=0.1``), ``community_weight`` (Dirichlet concentration of ``rho``,
        default 1), ``prevalence`` (Dirichlet concentration, default 3).

    Examples
    --------
    >>> from raterstats.models.latent_class import CommunityDawidSkene
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=4, random_seed=1).ratings
    >>> dt = CommunityDawidSkene(communities=2).fit(r, method="em", random_seed=1, max_iter=100)
    >>> dt.posterior["community_confusion"].dims[2:]
    ('community', 'dimension', 'design', 'true', 'rated')
    """

    name = "community_dawid_skene"
    cli_names: ClassVar[tuple[str, ...]] = ("community-ds", "cds")
    description: ClassVar[str] = (
        "community Dawid-Skene (a confusion matrix per rater, drawn around its community's; "
        "Venanzi et al. 2014)"
    )
    references: ClassVar[tuple[str, ...]] = (
        "Venanzi, M., Guiver, J., Kazai, G., Kohli, P., & Shokouhi, M. (2014). "
        "Community-based Bayesian aggregation models for crowdsourcing. Proceedings of the "
        "23rd International Conference on World Wide Web (WWW '14), 155-164. "
        "https://doi.org/10.1145/2566486.2567989",
        "Dawid, A. P., & Skene, A. M. (1979). Maximum likelihood estimation of observer "
        "error-rates using the EM algorithm. Applied Statistics 28(1), 20-28. "
        "https://doi.org/10.2307/2346806",
    )
    rank_fit_method: ClassVar[Method | None] = "em"
    size_option: ClassVar[str] = "communities"
    size_dim: ClassVar[str] = "community"
    default_priors: ClassVar[dict[str, Prior]] = {
        "community_confusion": Prior("Dirichlet", off_diagonal=1.0, diagonal_per_category=2.5),
        "concentration": Prior("Gamma", alpha=2.0, beta=0.1),
        "community_weight": Prior("Dirichlet", a=1.0),
        "prevalence": Prior("Dirichlet", a=3.0),
    }
    default_options: ClassVar[dict[str, Any]] = {
        "communities": "auto",
        "repeats": "include",
        "use_gold": False,
        "centred": None,
        "rater_floor": 1.0,
    }
    param_names: ClassVar[tuple[str, ...]] = ("confusion", "prevalence")

    def default_draws(self, *, watched: bool) -> int | tuple[int, ...]:
        """:data:`raterstats.defaults.DRAWS` (1,000), not checkpoints: the communities
        swap within chains, which more draws do not fix (the coverage test's second
        replicate ran on to 4,000 draws and still failed, R-hat 1.012; the card)."""
        return D.DRAWS

    def check_options(self) -> None:
        super().check_options()
        problems = []
        for key, dist in (
            ("community_confusion", "Dirichlet"),
            ("concentration", "Gamma"),
            ("community_weight", "Dirichlet"),
            ("prevalence", "Dirichlet"),
        ):
            if self._priors[key].dist != dist:
                problems.append(f"prior {key!r} must be a {dist}")
        if self._options["centred"] is not None and not isinstance(self._options["centred"], bool):
            problems.append("centred must be True, False or None")
        fl = self._options["rater_floor"]
        if isinstance(fl, bool) or not isinstance(fl, int | float) or not 0 <= fl < np.inf:
            problems.append(f"rater_floor must be a number >= 0, not {fl!r}")
        else:
            self._options["rater_floor"] = float(fl)
        g = self._priors["concentration"]
        if g.dist == "Gamma" and (g.param("alpha") is None or g.param("beta") is None):
            problems.append("prior 'concentration' needs alpha and beta")
        if problems:
            raise ValueError("; ".join(problems))

    def community_conc(self, K: int) -> np.ndarray:
        """``(K, K)`` Dirichlet concentrations of the communities' confusion rows."""
        return diagonal_conc(self._priors["community_confusion"], K)

    def size_dim_of_start(self, start: Any) -> int | None:
        if isinstance(start, Mapping) and "community_confusion" in start:
            return int(np.shape(start["community_confusion"])[0])
        return None

    # ------------------------------------------------------------------ variational fit

    def vb_run(self, vl: VBLayout, q0: np.ndarray, size: int, **kw: Any) -> dict[str, Any]:
        """:func:`~raterstats.models.latent_class.community_ds_vb.cds_vb_run`; the
        estimates come back with the layout's cells as rater x dimension x design."""
        run = cds_vb_run(self, vl, q0, size, **kw)
        if "values" in run:
            v = run["values"]
            R, D, G, K = vl.n_raters, vl.n_dims, vl.n_designs, vl.K
            v["confusion"] = v["confusion"].reshape(R, D, G, K, K)
            v["community_confusion"] = v["community_confusion"].reshape(size, D, G, K, K)
        return run

    def rated_probability(self, run: dict[str, Any], vl: VBLayout, size: int) -> np.ndarray:
        return np.asarray(run["values"]["confusion"]).reshape(vl.n_cells, vl.K, vl.K)

    def em_dims(self) -> dict[str, tuple[str, ...]]:
        return {
            "confusion": ("rater", "dimension", "design", "true", "rated"),
            "prevalence": ("dimension", "category"),
            "community_confusion": ("community", "dimension", "design", "true", "rated"),
            "community_weight": ("community",),
            "concentration": (),
            "community_membership": ("rater", "community"),
        }

    # ------------------------------------------------------------------ PyMC model

    def reference_weight(
        self, data: LatentClassData, M: int, start: Mapping[str, Any] | None = None
    ) -> np.ndarray:
        """``(R, M)`` weights of the communities in each rater's reference point of the
        sampled offsets (see :meth:`build_model`): the start's ``community_membership``
        when it has one (an EM estimate), else even."""
        R = len(data.raters)
        if start is not None and "community_membership" in start:
            w = np.asarray(start["community_membership"], dtype=float).reshape(R, M)
            return w / w.sum(axis=1, keepdims=True)
        return np.full((R, M), 1.0 / M)

    def centred_rows(
        self, data: LatentClassData, start: Mapping[str, Any] | None = None
    ) -> np.ndarray:
        """``(n_cells, K)`` whether NUTS samples each rater confusion row centred.

        Option ``centred`` True / False: all rows alike. Default: centred where the row's
        expected number of ratings (the cell's ratings of units whose soft majority vote is
        the row's class) is at least its prior's total concentration ``K f + s`` (``s``:
        the start's, else the prior mean): the row's posterior weight of the data then
        exceeds its prior's, where the
        centred form samples well; the others are offsets (non-centred), which sample well
        where the prior dominates (Papaspiliopoulos, Roberts & Skold 2007; the same rule as
        Dawid-Skene's partial pooling).
        """
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        NC = R * D * G
        c = self._options["centred"]
        if c is not None:
            return np.full((NC, K), bool(c))
        if start is not None and "concentration" in start:
            s = float(np.asarray(start["concentration"]))
        else:
            g = self._priors["concentration"]
            s = float(g.param("alpha")) / float(g.param("beta"))
        q = majority_vote(data)[data.unit]  # (N, K)
        n = np.stack([np.bincount(data.cell, q[:, t], minlength=NC) for t in range(K)], axis=1)
        return np.asarray(n >= s + K * float(self._options["rater_floor"]))

    def build_model(
        self,
        data: LatentClassData,
        size: int | None = None,
        ref_weight: np.ndarray | None = None,
        centred: np.ndarray | None = None,
    ) -> pm.Model:
        """The PyMC model. The raters' confusion rows are sampled in PyMC's simplex
        coordinates ``confusion_z``: where a row is centred (``centred (n_cells, K)``,
        default :meth:`centred_rows`) ``z`` is the row's coordinates; elsewhere it is
        standardised by the moments of its reference prior: coordinates ``x_i = m_i + sd_i
        z_i`` with ``m_i = psi(alpha_i) - mean_a psi(alpha_a)`` and ``sd_i =
        sqrt(psi'(alpha_i))``, the mean and (nearly) the spread of the coordinates under
        ``Dirichlet(alpha)``, ``alpha = f + s sum_m w_jm C_m[t]`` with fixed weights ``w``
        (``ref_weight``; default even, :meth:`reference_weight`). A row with few ratings,
        sampled centred, would shrink with ``s`` and move with its community's row, which
        NUTS samples badly; standardised, it is about N(0, 1) a priori whatever ``s`` and
        ``C``. The map is one to one for fixed weights and its log-Jacobian is added, so
        the model is the same; only the sampler's coordinates change (Papaspiliopoulos,
        Roberts & Skold 2007)."""
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        M = self.model_size(data) if size is None else int(size)
        NC, k1 = R * D * G, K - 1
        pri = self._priors
        w = self.reference_weight(data, M) if ref_weight is None else np.asarray(ref_weight)
        cen = self.centred_rows(data) if centred is None else np.asarray(centred, dtype=bool)
        cen = cen.reshape(R, D, G, K, 1)
        coords: dict[str, list[Any]] = {
            "rater": list(data.raters),
            "dimension": list(data.dimensions),
            "design": list(data.designs),
            "category": list(range(K)),
            "true": list(range(K)),
            "rated": list(range(K)),
            "community": list(range(M)),
            "simplex_coord": list(range(k1)),
        }
        conf_conc = self.community_conc(K)
        with pm.Model(coords=coords) as model:
            prev = pm.Dirichlet(
                "prevalence",
                a=np.full((D, K), float(pri["prevalence"].param("a", 3.0))),
                dims=("dimension", "category"),
            )
            if M > 1:
                rho = pm.Dirichlet(
                    "community_weight",
                    a=np.full(M, float(pri["community_weight"].param("a", 1.0))),
                    dims="community",
                )
            else:
                rho = pm.Deterministic("community_weight", pt.ones(1), dims="community")
            comm = pm.Dirichlet(
                "community_confusion",
                a=np.broadcast_to(conf_conc, (M, D, G, K, K)).copy(),
                dims=("community", "dimension", "design", "true", "rated"),
            )
            s = pri["concentration"].create("concentration")
            z = pm.Flat(
                "confusion_z", dims=("rater", "dimension", "design", "true", "simplex_coord")
            )
            floor = float(self._options["rater_floor"])
            cref = pt.tensordot(pt.as_tensor(w), comm, axes=[[1], [0]])  # (R, D, G, K, K)
            al = floor + s * cref
            ps = pt.psi(al)
            mean = ps[..., :-1] - ps.mean(axis=-1, keepdims=True)
            sd = pt.sqrt(pt.tri_gamma(al[..., :-1]))
            xr = pt.where(cen, z, mean + sd * z)
            full = pt.concatenate([xr, -xr.sum(axis=-1, keepdims=True)], axis=-1)
            log_conf = full - pt.logsumexp(full, axis=-1, keepdims=True)
            conf = pm.Deterministic(
                "confusion",
                pt.exp(log_conf),
                dims=("rater", "dimension", "design", "true", "rated"),
            )
            sc = floor + s * comm  # (M, D, G, K, K)
            norm = (pt.gammaln(K * floor + s) - pt.gammaln(sc).sum(-1)).sum(axis=(1, 2, 3))
            inner = pt.dot(log_conf.reshape((R, -1)), (sc - 1.0).reshape((M, -1)).T)  # (R, M)
            A = pt.log(rho)[None, :] + norm[None, :] + inner
            jac = log_conf.sum() + NC * K * float(np.log(K)) + pt.where(cen, 0.0, pt.log(sd)).sum()
            pm.Potential("community_prior", pt.logsumexp(A, axis=1).sum() + jac)
            pm.Deterministic(
                "community_membership",
                pt.exp(A - pt.logsumexp(A, axis=1, keepdims=True)),
                dims=("rater", "community"),
            )
            lc = log_conf.reshape((NC, K, K))
            per = lc[data.p_cell, :, data.p_code]  # (Np, K)
            summed = segment_sum_pt(per, data.p_pattern, data.n_patterns)
            ll, _ = pattern_loglik_pt(summed, data, pt.log(prev))
            pm.Potential("marginal_loglik", pt.dot(data.pattern_count.astype(float), ll))
            del conf
        return model

    def initial_values(self, data: LatentClassData) -> dict[str, np.ndarray]:
        """The majority vote's confusions and prevalence, every community at their mean,
        offsets 0 (the PyMC path; the compiled density starts at the EM estimate)."""
        st = majority_vote_stats(data)
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        conf = np.clip(st["confusion"].reshape(R, D, G, K, K), 1e-3, None)
        conf = conf / conf.sum(-1, keepdims=True)
        M = self.model_size(data)
        out = {
            "prevalence": st["prevalence"],
            "confusion_z": np.zeros((R, D, G, K, K - 1)),
            "community_confusion": np.broadcast_to(conf.mean(0), (M, D, G, K, K)).copy(),
            "concentration": np.asarray(
                float(self._priors["concentration"].param("alpha"))
                / float(self._priors["concentration"].param("beta"))
            ),
        }
        if M > 1:
            out["community_weight"] = np.full(M, 1.0 / M)
        return out

    # ------------------------------------------------------------------ compiled density

    def has_density(self, data: LatentClassData) -> bool:
        return True

    def density(
        self, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """Compiled log density with a hand-written gradient (the same density as
        :meth:`build_model`, on its unconstrained variables); chains start at ``start``
        (an EM estimate, jittered) or at the majority vote."""
        from raterstats.models.latent_class.crowd_density import cds_density

        return cds_density(self, data, self.model_size(data, start), start)

    # ------------------------------------------------------------------ NumPy reference

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: TableLayout
    ) -> tuple[np.ndarray, np.ndarray]:
        """Dawid-Skene's table of the raters' own confusions and the log prevalence."""
        conf = params["confusion"]
        S, K = conf.shape[0], data.K
        with np.errstate(divide="ignore"):
            return ds_rating_table(np.log(conf.reshape(S, -1, K, K)), lay), np.log(
                params["prevalence"]
            )

    def simulate_ratings(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        true_class: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        conf = params["confusion"]
        S, K = conf.shape[0], data.K
        conf = conf.reshape(S, -1, K, K)
        t = true_class[:, data.unit]
        rows = conf[np.arange(S)[:, None], data.cell[None, :], t]
        u = rng.random((*t.shape, 1))
        return np.minimum(np.sum(u > np.cumsum(rows, axis=-1), axis=-1), K - 1).astype(np.int16)

    def rater_quantities(self, posterior: xr.Dataset) -> dict[str, xr.DataArray]:
        """``confusion``, ``accuracy`` (the probability of rating the true label, averaged
        over the true label with the prevalence) and ``community_membership`` (the
        probability that the rater belongs to each community)."""
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
            "community_membership": posterior["community_membership"],
        }

    # ------------------------------------------------------------------ relabelling

    def component_features(self, posterior: xr.Dataset) -> list[tuple[Any, np.ndarray]]:
        """One group: every community's confusion (all dimensions and designs) and its
        raters' membership probabilities."""
        comm = posterior["community_confusion"].values
        mem = posterior["community_membership"].values
        S = comm.shape[0] * comm.shape[1]
        M = comm.shape[2]
        if M < 2:
            return []
        feats = np.concatenate(
            [comm.reshape(S, M, -1), np.moveaxis(mem.reshape(S, -1, M), 1, 2)], axis=2
        )
        return [("community", feats)]

    def permute_draws(
        self, posterior: xr.Dataset, perms: dict[Any, np.ndarray]
    ) -> dict[str, np.ndarray]:
        p = perms["community"]
        S = p.shape[0]
        rows = np.arange(S)[:, None]
        comm = posterior["community_confusion"].values
        comm = comm.reshape(S, *comm.shape[2:])[rows, p]
        w = posterior["community_weight"].values
        w = w.reshape(S, -1)[rows, p]
        mem = posterior["community_membership"].values
        mem = mem.reshape(S, *mem.shape[2:])
        mem = np.take_along_axis(mem, p[:, None, :], axis=2)
        return {"community_confusion": comm, "community_weight": w, "community_membership": mem}


__all__ = ["CommunityDawidSkene", "diagonal_conc"]
