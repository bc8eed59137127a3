"""Dawid-Skene (1979): a confusion matrix per rater, unpooled, pooled, partially pooled or
one-coin.

Generative story (one latent true label per unit: item, segment, dimension)::

    T_u ~ Categorical(pi_d)                       pi_d ~ Dirichlet(3)
    A_uj | T_u = t ~ Categorical(beta_c[t, :])    c = (rater j, dimension d, design g)

* ``pooling="unpooled"``: ``beta_c[t, :] ~ Dirichlet(alpha_t)`` with extra mass on the
  diagonal: ``alpha_tt = 2.5 K``, ``alpha_ta = 1`` (the Stan User's Guide's prior, also
  the R package rater's in its early versions), and ``pi_d ~ Dirichlet(3)``;
* ``"pooled"``: one confusion matrix per dimension x design shared by all raters;
* ``"partial"`` (Paun et al. 2018, HierD&S): ``beta_c[t, :] = softmax(omega_c[t, :])``
  over the off-diagonal logits (the diagonal logit is the reference 0),
  ``omega_c[t, a] ~ N(zeta_dta, sigma_d)``, ``zeta ~ N(-2, 1.5)``,
  ``sigma ~ HalfNormal(1)``: a population mean for every kind of error and a spread per
  dimension (``spread="error"``: per dimension and kind of error); each logit sampled
  centred where the data pin it down, non-centred (``omega = zeta + sigma z``,
  ``z ~ N(0, 1)``) elsewhere;
* ``"one_coin"``: ``beta_c[t, t] = p_c``, errors uniform over the other categories,
  ``p_c ~ Beta(2, 1)``.

True labels are marginalised (log-sum-exp) and recovered draw by draw. See
``models/dawid_skene/card.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr
from scipy.special import digamma, expit, logsumexp

from raterstats.inference import Density, assemble_datatree
from raterstats.lazy import LazyModule
from raterstats.models.base import Prior
from raterstats.models.latent_class.base import (
    LatentClassData,
    LatentClassModel,
    class_counts,
    em_kernels,
    logsumexp_np,
    majority_vote,
    majority_vote_stats,
    padded_dirichlet,
    padded_dirichlet_init,
    padded_log_simplex_pt,
    pattern_loglik_pt,
    record_restarts,
    segment_sum_pt,
    short_run_restarts,
    simplex_forward_np,
    table_layout,
    unpack_rows,
)

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")

POOLINGS = ("unpooled", "pooled", "partial", "one_coin")

#: ``pooling="partial"``, ``centred=None``: an error logit is sampled centred where the
#: data's information about it is at least this many times the prior's precision
CENTRED_MIN_RATIO = 2.0


class DawidSkene(LatentClassModel):
    """Dawid-Skene confusion-matrix model.

    Parameters
    ----------
    pooling : {"unpooled", "pooled", "partial", "one_coin"}
        How confusion matrices are shared across raters (see the module docstring).
    rater_prior : mapping, optional
        Per-rater prior confusion from earlier studies: ``{rater: K x K pseudo-counts}``
        (rows: true category, columns: rated category), added to the Dirichlet
        concentration of that rater's rows (``pooling="unpooled"`` only).
    repeats : {"include", "exclude"}
        Use repeated ratings as further observations (default) or first ratings only.
    use_gold : bool
        Clamp the true label of units with a ``gold`` label (default True).
    centred : bool, optional
        ``pooling="partial"``: sample every error logit centred (True) or non-centred
        (False). Default (None): per rater x dimension x design cell and kind of error,
        centred where the data pin the logit down (the non-centred form would tie its
        ``z`` to the population parameters), non-centred where they say little (the centred
        form would make a funnel); see :meth:`centred_entries`.
    spread : {"dimension", "error"}
        ``pooling="partial"``: one spread of the raters' error logits per dimension
        (default) or one per dimension and kind of error (Paun et al.'s form; needs many
        ratings of every kind of error, see the card).
    priors : mapping, optional
        Override by name: ``confusion`` (unpooled / pooled; default
        ``Prior("Dirichlet", off_diagonal=1.0, diagonal_per_category=2.5)``, i.e. diagonal
        concentration 2.5 K; or give ``diagonal=`` a number, ``diagonal_mean=`` the prior
        mean of the diagonal, or ``a=`` a full K x K concentration),
        ``confusion_logit`` (partial; Normal on the off-diagonal logits, default
        N(-2, 1.5)), ``rater_sd`` (partial; HalfNormal(1) on the raters' spread),
        ``accuracy`` (one-coin;
        Beta(2, 1)), ``prevalence`` (Dirichlet concentration, default 3).

    Examples
    --------
    >>> from raterstats import DawidSkene
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=10, n_systems=5, random_seed=3)
    >>> dt = DawidSkene().fit(s.ratings, method="em", random_seed=1)
    >>> dt.posterior["confusion"].dims
    ('chain', 'draw', 'rater', 'dimension', 'design', 'true', 'rated')
    """

    name = "dawid_skene"
    cli_names: ClassVar[tuple[str, ...]] = ("dawid-skene", "ds")
    description: ClassVar[str] = (
        "the Dawid-Skene model (one confusion matrix per rater; Dawid & Skene 1979)"
    )
    references: ClassVar[tuple[str, ...]] = (
        "Dawid, A. P., & Skene, A. M. (1979). Maximum likelihood estimation of observer "
        "error-rates using the EM algorithm. Applied Statistics 28(1), 20-28. "
        "https://doi.org/10.2307/2346806",
        "Paun, S., Carpenter, B., Chamberlain, J., Hovy, D., Kruschwitz, U., & Poesio, M. "
        "(2018). Comparing Bayesian models of annotation. TACL 6, 571-585. "
        "https://doi.org/10.1162/tacl_a_00040",
    )
    rank_fit_method: ClassVar[str | None] = "em"
    default_priors: ClassVar[dict[str, Prior]] = {
        "confusion": Prior("Dirichlet", off_diagonal=1.0, diagonal_per_category=2.5),
        "confusion_logit": Prior("Normal", mu=-2.0, sigma=1.5),
        "rater_sd": Prior("HalfNormal", sigma=1.0),
        "accuracy": Prior("Beta", alpha=2.0, beta=1.0),
        "prevalence": Prior("Dirichlet", a=3.0),
    }
    default_options: ClassVar[dict[str, Any]] = {
        "pooling": "unpooled",
        "rater_prior": None,
        "repeats": "include",
        "use_gold": True,
        "centred": None,
        "spread": "dimension",
    }
    param_names: ClassVar[tuple[str, ...]] = ("confusion", "prevalence")

    def _check_options(self) -> None:
        super()._check_options()
        o = self._options
        problems = []
        if o["pooling"] not in POOLINGS:
            problems.append(f"pooling must be one of {list(POOLINGS)}, not {o['pooling']!r}")
        if o["spread"] not in ("error", "dimension"):
            problems.append(f"spread must be 'error' or 'dimension', not {o['spread']!r}")
        if o["centred"] is not None and not isinstance(o["centred"], bool):
            problems.append("centred must be True, False or None")
        if o["rater_prior"] is not None:
            if o["pooling"] != "unpooled":
                problems.append("rater_prior needs pooling='unpooled'")
            if not isinstance(o["rater_prior"], dict):
                problems.append("rater_prior must be a mapping {rater: K x K pseudo-counts}")
            else:
                o["rater_prior"] = {
                    str(k): np.asarray(v, dtype=float).tolist() for k, v in o["rater_prior"].items()
                }
        for key, dist in (
            ("confusion", "Dirichlet"),
            ("confusion_logit", "Normal"),
            ("accuracy", "Beta"),
            ("prevalence", "Dirichlet"),
        ):
            if self._priors[key].dist != dist:
                problems.append(f"prior {key!r} must be a {dist}")
        if problems:
            raise ValueError("; ".join(problems))

    # ------------------------------------------------------------------ layout helpers

    def _cells(self, data: LatentClassData) -> tuple[int, np.ndarray, np.ndarray, tuple[str, ...]]:
        """Parameter cells: count, each pattern rating's cell, each cell's dimension, dims."""
        R, D, G = len(data.raters), len(data.dimensions), len(data.designs)
        if self._options["pooling"] == "pooled":
            cell = data.p_dim * G + data.p_design
            cell_dim = np.arange(D * G) // G
            return D * G, cell, cell_dim, ("dimension", "design")
        cell_dim = (np.arange(R * D * G) // G) % D
        return R * D * G, data.p_cell, cell_dim, ("rater", "dimension", "design")

    def _confusion_conc(self, data: LatentClassData, n_cells: int) -> np.ndarray:
        """``(n_cells, K, K)`` Dirichlet concentrations of the confusion rows."""
        K = data.K
        pr = self._priors["confusion"]
        cell_dim = self._cells(data)[2]
        out = np.ones((n_cells, K, K))
        full = pr.param("a")
        for c in range(n_cells):
            k = int(data.n_categories[cell_dim[c]])
            if full is not None and np.ndim(full) == 2:
                out[c, :k, :k] = np.asarray(full)[:k, :k]
            else:
                off = float(pr.param("off_diagonal", 1.0) if full is None else full)
                m = np.full((k, k), off)
                if pr.param("diagonal_mean") is not None:
                    p = float(pr.param("diagonal_mean"))
                    diag = off * (k - 1) * p / (1 - p)
                elif pr.param("diagonal") is not None:
                    diag = float(pr.param("diagonal"))
                else:
                    diag = float(pr.param("diagonal_per_category", 2.5)) * k
                np.fill_diagonal(m, diag)
                out[c, :k, :k] = m
        rp = self._options["rater_prior"]
        if rp:
            D, G = len(data.dimensions), len(data.designs)
            unknown = [r for r in rp if r not in data.raters]
            if unknown:
                raise ValueError(f"rater_prior names raters not in the data: {unknown}")
            for r, counts in rp.items():
                j = data.raters.index(r)
                m = np.asarray(counts, dtype=float)
                for d in range(D):
                    k = int(data.n_categories[d])
                    if m.shape != (k, k):
                        raise ValueError(
                            f"rater_prior[{r!r}] is {m.shape}; dimension "
                            f"{data.dimensions[d]!r} has {k} categories"
                        )
                    for g in range(G):
                        out[(j * D + d) * G + g, :k, :k] += m
        return out

    def centred_entries(self, data: LatentClassData) -> np.ndarray:
        """``pooling="partial"``: ``(cell, error)``, whether each rater x dimension x design
        cell's error logit is sampled centred (see ``centred``).

        Default rule: centred where the data's information about the logit outweighs the
        prior's precision ``1 / sigma^2`` at least ``CENTRED_MIN_RATIO`` times (Betancourt
        & Girolami 2015: the centred form suits likelihood-dominated effects, the
        non-centred one the others). The information is about ``n_ct p_ta (1 - p_ta)`` for
        the ``n_ct`` ratings the cell gave to units whose majority vote is ``t`` and the
        pooled rate ``p_ta`` of rating ``a`` for ``t``; ``sigma`` is the empirical-Bayes
        spread of a pilot EM run from the majority vote.
        """
        K = data.K
        ti, ai = self._offdiag(K)
        c = self._options["centred"]
        if c is not None:
            return np.full((data.n_cells, ti.size), bool(c))
        q = majority_vote(data)[data.unit]  # (N, K)
        flat = np.zeros((data.n_cells * K, K))
        for t in range(K):
            flat[:, t] = np.bincount(data.cell * K + data.code, q[:, t], minlength=flat.shape[0])
        cnt = flat.reshape(data.n_cells, K, K).transpose(0, 2, 1)  # (cell, true, rated)
        cell_dim = (np.arange(data.n_cells) // len(data.designs)) % len(data.dimensions)
        pooled = np.zeros((len(data.dimensions), K, K))
        np.add.at(pooled, cell_dim, cnt)
        p = pooled / np.maximum(pooled.sum(axis=-1, keepdims=True), 1e-300)
        p = np.clip(p, 1e-3, 1 - 1e-3)[cell_dim]  # (cell, true, rated)
        info = (cnt.sum(axis=-1, keepdims=True) * p * (1 - p))[:, ti, ai]
        pilot = _ds_em(
            self, data, rng=np.random.default_rng(0), random_init=False, max_iter=200,
            tol=1e-6, variational=False,
        )  # fmt: skip
        sd = np.asarray(pilot["values"]["rater_sd"], dtype=float)
        sd = np.broadcast_to(sd.reshape(len(data.dimensions), -1), (len(data.dimensions), ti.size))
        return np.asarray(info * sd[cell_dim] ** 2 >= CENTRED_MIN_RATIO)

    def _rater_sd_dims(self) -> tuple[str, ...]:
        return ("dimension", "error") if self._options["spread"] == "error" else ("dimension",)

    def _entry_label(self, data: LatentClassData, i: int) -> str:
        """Label of entry ``i`` of the flat ``(cell, error)`` logits."""
        D, G = len(data.dimensions), len(data.designs)
        ti, ai = self._offdiag(data.K)
        c, e = divmod(i, ti.size)
        j, d, g = c // (D * G), (c // G) % D, c % G
        return f"{data.raters[j]}/{data.dimensions[d]}/{data.designs[g]}/{ti[e]}->{ai[e]}"

    def _offdiag(self, K: int) -> tuple[np.ndarray, np.ndarray]:
        t, a = np.nonzero(~np.eye(K, dtype=bool))
        return t, a

    # ------------------------------------------------------------------ PyMC model

    def build_model(self, data: LatentClassData) -> pm.Model:
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        pooling = self._options["pooling"]
        NC, cell, cell_dim, cdims = self._cells(data)
        coords: dict[str, list[Any]] = {
            "rater": list(data.raters),
            "dimension": list(data.dimensions),
            "design": list(data.designs),
            "category": list(range(K)),
            "true": list(range(K)),
            "rated": list(range(K)),
        }
        lead = tuple(len(coords[d]) for d in cdims)
        ks = sorted({int(k) for k in data.n_categories})
        with pm.Model(coords=coords) as model:
            if pooling in ("unpooled", "pooled"):
                conc = self._confusion_conc(data, NC).reshape(*lead, K, K)
                if len(ks) == 1:
                    conf = pm.Dirichlet("confusion", a=conc, dims=(*cdims, "true", "rated"))
                    log_conf = pt.log(conf)
                else:
                    flat = pt.zeros((NC, K, K))
                    cflat = conc.reshape(NC, K, K)
                    for k in ks:
                        idx = np.flatnonzero(data.n_categories[cell_dim] == k)
                        v = pm.Dirichlet(
                            f"confusion_k{k}", a=cflat[idx, :k, :k], shape=(idx.size, k, k)
                        )
                        flat = pt.set_subtensor(flat[idx, :k, :k], v)
                    conf = pm.Deterministic(
                        "confusion", flat.reshape((*lead, K, K)), dims=(*cdims, "true", "rated")
                    )
                    log_conf = pt.log(pt.where(conf > 0, conf, 1.0))
            elif pooling == "partial":
                if len(ks) > 1:
                    raise NotImplementedError(
                        "pooling='partial' needs the same number of categories on every dimension"
                    )
                pr = self._priors["confusion_logit"]
                ti, ai = self._offdiag(K)
                coords_off = [f"{t}->{a}" for t, a in zip(ti, ai, strict=True)]
                model.add_coord("error", coords_off)
                zeta = pm.Normal(
                    "confusion_logit_mean",
                    mu=pr.param("mu", -2.0),
                    sigma=pr.param("sigma", 1.5),
                    dims=("dimension", "error"),
                )
                sd = self._priors["rater_sd"].create("rater_sd", dims=self._rater_sd_dims())
                sigma = sd if sd.ndim == 2 else pt.broadcast_to(sd[:, None], (D, ti.size))
                cen = self.centred_entries(data).ravel()
                mu_all = zeta[cell_dim].ravel()
                sd_all = sigma[cell_dim].ravel()
                omega = pt.zeros(NC * ti.size)
                for flag, var, cname in (
                    (True, "confusion_logit_centred", "centred_logit"),
                    (False, "confusion_z", "noncentred_logit"),
                ):
                    idx = np.flatnonzero(cen == flag)
                    if idx.size == 0:
                        continue
                    model.add_coord(cname, [self._entry_label(data, int(i)) for i in idx])
                    if flag:
                        v = pm.Normal(var, mu=mu_all[idx], sigma=sd_all[idx], dims=cname)
                    else:
                        v = mu_all[idx] + sd_all[idx] * pm.Normal(var, 0.0, 1.0, dims=cname)
                    omega = pt.set_subtensor(omega[idx], v)
                omega = pm.Deterministic(
                    "confusion_logit",
                    omega.reshape((R, D, G, ti.size)),
                    dims=("rater", "dimension", "design", "error"),
                )
                logits = pt.zeros((R, D, G, K, K))
                logits = pt.set_subtensor(logits[:, :, :, ti, ai], omega)
                log_conf = logits - pt.logsumexp(logits, axis=-1, keepdims=True)
                conf = pm.Deterministic(
                    "confusion",
                    pt.exp(log_conf),
                    dims=("rater", "dimension", "design", "true", "rated"),
                )
            else:
                acc = self._priors["accuracy"].create(
                    "accuracy", dims=("rater", "dimension", "design")
                )
                kd = data.n_categories[(np.arange(R * D * G) // G) % D].reshape(R, D, G)
                eye = np.eye(K, dtype=bool)
                valid = np.broadcast_to(data.valid[None, :, None, :, None], (R, D, G, K, K)) & (
                    np.broadcast_to(data.valid[None, :, None, None, :], (R, D, G, K, K))
                )
                a5 = acc[..., None, None]
                err = (1.0 - a5) / np.maximum(kd - 1, 1)[..., None, None]
                conf_full = pt.where(eye, a5, err)
                conf = pm.Deterministic(
                    "confusion",
                    pt.where(valid, conf_full, 0.0),
                    dims=("rater", "dimension", "design", "true", "rated"),
                )
                log_a = pt.log(a5)
                log_e = pt.log1p(-a5) - np.log(np.maximum(kd - 1, 1))[..., None, None]
                log_conf = pt.where(eye, log_a, log_e)
            prev = padded_dirichlet(
                "prevalence", self._priors["prevalence"].param("a", 1.0), data.n_categories, (), ()
            )
            lc = log_conf.reshape((NC, K, K))
            per = lc[cell, :, data.p_code]  # (Np, K): log beta_c[t, a] over t
            summed = segment_sum_pt(per, data.p_pattern, data.n_patterns)
            log_prior = padded_log_simplex_pt(prev, data.valid)
            ll, _ = pattern_loglik_pt(summed, data, log_prior)
            pm.Potential("marginal_loglik", pt.dot(data.pattern_count.astype(float), ll))
        return model

    def initial_values(self, data: LatentClassData) -> dict[str, np.ndarray]:
        st = majority_vote_stats(data)
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        pooling = self._options["pooling"]
        conf = st["confusion"].reshape(R, D, G, K, K)
        init: dict[str, np.ndarray] = {}
        ks = sorted({int(k) for k in data.n_categories})
        if pooling in ("unpooled", "pooled"):
            c = conf.mean(axis=0) if pooling == "pooled" else conf
            c = np.clip(c, 1e-3, None)
            if len(ks) == 1:
                c = c / c.sum(axis=-1, keepdims=True)
                init["confusion"] = c
        elif pooling == "one_coin":
            diag = np.einsum("rdgkk->rdgk", conf)
            acc = np.nanmean(np.where(data.valid[None, :, None, :], diag, np.nan), axis=-1)
            init["accuracy"] = np.clip(acc, 0.3, 0.95)
        init.update(padded_dirichlet_init("prevalence", st["prevalence"], data.n_categories))
        return init

    # ------------------------------------------------------------------ compiled density

    def has_density(self, data: LatentClassData) -> bool:
        return len({int(k) for k in data.n_categories}) == 1

    def density(
        self, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
    ) -> Density | None:
        """Compiled log density with a hand-written gradient (same density as
        :meth:`build_model`); None for data whose dimensions have different numbers of
        categories (the PyMC model is used then). Chains start at ``start`` (an EM
        estimate's ``confusion``, ``prevalence`` and, for partial pooling,
        ``confusion_logit_mean`` and ``rater_sd``) or else at the majority vote."""
        if not self.has_density(data):
            return None
        from raterstats.models.latent_class.callbacks import callback_buffer, ds_logp_cb
        from raterstats.models.latent_class.kernels import (
            dirichlet_const,
            ds_entry,
            pack,
        )

        pooling = self._options["pooling"]
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        NC, cell, cell_dim, cdims = self._cells(data)
        kind = {"unpooled": 0, "pooled": 0, "partial": 1, "one_coin": 2}[pooling]
        lay = table_layout(data, cell)
        n_cat = data.n_categories.astype(np.int64)
        prev_conc = np.full((D, K), float(self._priors["prevalence"].param("a", 1.0)))
        const = dirichlet_const(n_cat, prev_conc)
        conf_conc = np.ones((NC, K, K))
        zeta_mu = np.zeros((K, K))
        pr_logit = self._priors["confusion_logit"]
        acc_pr = self._priors["accuracy"]
        a_acc, b_acc = float(acc_pr.param("alpha", 2.0)), float(acc_pr.param("beta", 1.0))
        n_off = K * (K - 1)
        cen = self.centred_entries(data) if kind == 1 else np.zeros((NC, n_off), dtype=bool)
        by_error = self._options["spread"] == "error"
        n_sig = D * n_off if by_error else D
        if kind == 0:
            conf_conc = self._confusion_conc(data, NC)
            const += dirichlet_const(np.full(NC * K, K), conf_conc.reshape(NC * K, K))
            ndim_head = NC * K * (K - 1)
        elif kind == 1:
            zeta_mu = np.full((K, K), float(pr_logit.param("mu", -2.0)))
            ndim_head = D * n_off + n_sig + NC * n_off
        else:
            const -= NC * (math.lgamma(a_acc) + math.lgamma(b_acc) - math.lgamma(a_acc + b_acc))
            ndim_head = NC
        ndim = ndim_head + D * (K - 1)
        ints = pack(
            [
                np.array([kind, NC, D, G, K]),
                n_cat,
                cell_dim.astype(np.int64),
                lay["e_row"],
                lay["e_code"],
                lay["p_e"],
                lay["p_start"],
                lay["pattern_dim"],
                lay["mask"].astype(np.int64),
                cen.astype(np.int64).ravel(),
                np.arange(D * n_off) if by_error else np.repeat(np.arange(D), n_off),
            ],
            np.int64,
        )
        floats = pack(
            [
                np.array(
                    [
                        float(pr_logit.param("sigma", 1.5)),
                        float(self._priors["rater_sd"].param("sigma", 1.0)),
                        a_acc,
                        b_acc,
                        const,
                    ]
                ),
                lay["pattern_w"],
                conf_conc,
                zeta_mu,
                prev_conc,
            ],
            np.float64,
        )

        def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
            g = np.empty(ndim)
            lp = ds_entry(x, ints, floats, g)
            return float(lp), g

        lead = tuple({"rater": R, "dimension": D, "design": G}[d] for d in cdims)
        ti, ai = self._offdiag(K)

        def expand(x: np.ndarray) -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            if kind == 0:
                rows = unpack_rows(x[:ndim_head], np.full(NC * K, K), K)
                out["confusion"] = rows.reshape(*lead, K, K)
            elif kind == 1:
                zeta = x[: D * n_off].reshape(D, n_off)
                sig = np.exp(x[D * n_off : D * n_off + n_sig])
                sig_full = np.broadcast_to(sig.reshape(D, -1), (D, n_off))
                w = x[D * n_off + n_sig : ndim_head].reshape(NC, n_off)
                omega = np.where(cen, w, zeta[cell_dim] + sig_full[cell_dim] * w)
                logits = np.zeros((NC, K, K))
                logits[:, ti, ai] = omega
                out["confusion_logit_mean"] = zeta
                out["rater_sd"] = sig.reshape(D, n_off) if by_error else sig
                out["confusion_logit"] = omega.reshape(R, D, G, n_off)
                out["confusion"] = np.exp(
                    logits - logsumexp(logits, axis=-1, keepdims=True)
                ).reshape(R, D, G, K, K)
            else:
                acc = expit(x[:NC]).reshape(R, D, G)
                eye = np.eye(K, dtype=bool)
                out["accuracy"] = acc
                out["confusion"] = np.where(
                    eye, acc[..., None, None], ((1 - acc) / (K - 1))[..., None, None]
                )
            out["prevalence"] = unpack_rows(x[ndim_head:], n_cat, K)
            return out

        init = self.initial_values(data)
        st = majority_vote_stats(data)
        conf0 = np.clip(st["confusion"].reshape(R, D, G, K, K), 1e-3, None)

        def start_point() -> np.ndarray:
            assert start is not None
            # rows need not be renormalised after the clip: the simplex transform and the
            # logits against the diagonal are invariant to a row's scale
            c = np.clip(np.asarray(start["confusion"], float), 1e-6, None)
            prev = np.clip(np.asarray(start["prevalence"], float), 1e-6, None)
            if kind == 0:
                head = simplex_forward_np(c).reshape(-1)
            elif kind == 1:
                lc = np.log(c).reshape(NC, K, K)
                omega = lc[:, ti, ai] - lc[:, ti, ti]  # (cell, error), diagonal logit 0
                zeta = np.asarray(start["confusion_logit_mean"], float).reshape(D, n_off)
                sig = np.maximum(np.asarray(start["rater_sd"], float), 0.05)
                sig_e = np.broadcast_to(sig.reshape(D, -1), (D, n_off))[cell_dim]
                w = np.where(cen, omega, (omega - zeta[cell_dim]) / sig_e)
                head = np.concatenate([zeta.reshape(-1), np.log(sig).reshape(-1), w.ravel()])
            else:
                a0 = np.clip(np.asarray(start["accuracy"], float), 1e-4, 1 - 1e-4)
                head = np.log(a0 / (1 - a0)).reshape(-1)
            return np.concatenate([head, simplex_forward_np(prev).reshape(-1)])

        x_start = start_point() if start is not None else None

        def initial_point(rng: np.random.Generator) -> np.ndarray:
            if x_start is not None:
                return x_start + rng.normal(0.0, 0.1, x_start.size)
            if kind == 0:
                c = conf0.mean(axis=0) if pooling == "pooled" else conf0
                c = c / c.sum(axis=-1, keepdims=True)
                head = simplex_forward_np(c).reshape(-1)
            elif kind == 1:
                lc = np.log(conf0) - np.log(np.einsum("rdgkk->rdgk", conf0))[..., None]
                off = lc[..., ti, ai]
                zeta = np.clip(off.mean(axis=(0, 2)), -6, 2)
                w = np.where(cen, zeta[cell_dim], 0.0)
                head = np.concatenate(
                    [zeta.reshape(-1), np.log(np.full(n_sig, 0.5)), w.reshape(-1)]
                )
            else:
                a0 = init["accuracy"]
                head = np.log(a0 / (1 - a0)).reshape(-1)
            x0 = np.concatenate([head, simplex_forward_np(st["prevalence"]).reshape(-1)])
            return x0 + rng.normal(0.0, 0.1, x0.size)

        dims = {
            "confusion": (*cdims, "true", "rated"),
            "confusion_logit_mean": ("dimension", "error"),
            "rater_sd": self._rater_sd_dims(),
            "confusion_logit": ("rater", "dimension", "design", "error"),
            "accuracy": ("rater", "dimension", "design"),
            "prevalence": ("dimension", "category"),
        }
        probe = expand(initial_point(np.random.default_rng(0)))
        coords = data.coords() | {"true": list(range(K)), "rated": list(range(K))}
        if kind == 1:
            coords["error"] = [f"{t}->{a}" for t, a in zip(ti, ai, strict=True)]
        return Density(
            ndim=ndim,
            logp_grad=logp_grad,
            expand=expand,
            c_logp=ds_logp_cb,
            c_data=callback_buffer(ints, floats),
            var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
            var_dims={k: dims[k] for k in probe},
            coords=coords,
            initial_point=initial_point,
        )

    # ------------------------------------------------------------------ NumPy kernels

    def _cell_confusion(self, conf: np.ndarray, data: LatentClassData) -> np.ndarray:
        """``(S, n_cells_full, K, K)`` confusion per (rater, dimension, design) cell."""
        S, K = conf.shape[0], data.K
        if self._options["pooling"] == "pooled":
            R = len(data.raters)
            c = conf.reshape(S, 1, -1, K, K)
            return np.broadcast_to(c, (S, R, c.shape[2], K, K)).reshape(S, -1, K, K)
        return conf.reshape(S, -1, K, K)

    def rating_log_prob(self, params: dict[str, np.ndarray], data: LatentClassData) -> np.ndarray:
        conf = self._cell_confusion(params["confusion"], data)
        with np.errstate(divide="ignore"):
            return np.log(conf[:, data.p_cell, :, data.p_code]).transpose(1, 0, 2)

    def table_rows(self, data: LatentClassData) -> np.ndarray:
        return self._cells(data)[1]

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: dict[str, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        conf = params["confusion"]
        S, K = conf.shape[0], data.K
        flat = conf.reshape(S, -1, K, K)  # rows as in table_rows (pooled: dimension x design)
        with np.errstate(divide="ignore"):
            T = np.log(flat[:, lay["e_row"], :, lay["e_code"]]).transpose(1, 0, 2)
            log_prior = np.log(params["prevalence"])
        return T, log_prior

    def simulate_ratings(
        self,
        params: dict[str, np.ndarray],
        data: LatentClassData,
        true_class: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        conf = self._cell_confusion(params["confusion"], data)
        S = conf.shape[0]
        t = true_class[:, data.unit]  # (S, N)
        rows = conf[np.arange(S)[:, None], data.cell[None, :], t]  # (S, N, K)
        cum = np.cumsum(rows, axis=-1)
        u = rng.random((*t.shape, 1))
        return np.minimum(np.sum(u > cum, axis=-1), data.K - 1).astype(np.int16)

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
        variational: bool = False,
        short_iter: int = 10,
        **unused: Any,
    ) -> xr.DataTree:
        """Point estimates by EM with restarts (first at the majority vote, the others at
        random confusion matrices).

        Restarts follow the usual short-runs strategy (Biernacki, Celeux & Govaert 2003,
        "emEM"): every restart runs ``short_iter`` EM iterations (or fewer, when it
        converges), the restart with the highest log-likelihood after its short run is
        continued to convergence (relative change below ``tol``, at most ``max_iter``
        iterations in all), and its estimates are reported; ``short_iter >= max_iter``
        runs every restart to convergence and keeps the best by marginal likelihood.
        ``sample_stats.attrs["restart_loglik"]`` holds each restart's log-likelihood at
        the end of its run.

        Unpooled / pooled / one-coin: the M-step adds the prior's concentrations to the
        expected counts (posterior-mean updates; ``variational=True``: mean-field
        variational Bayes). Partial pooling: the M-step maximises the expected
        complete-data log-likelihood plus the normal log-densities of the logits given the
        raters' spread, and the spread follows the empirical-Bayes (Laplace) update of
        ``_partial_mstep`` (estimated from the data, not held at its prior).
        """
        if unused:
            raise TypeError(f"unknown EM options {sorted(unused)}")
        rng = np.random.default_rng(random_seed)
        lay = table_layout(data, self._cells(data)[1])
        res, runs, best = short_run_restarts(
            lambda **kw: _ds_em(
                self, data, lay=lay, rng=rng, tol=tol, variational=variational, **kw
            ),
            restarts=restarts,
            short_iter=short_iter,
            max_iter=max_iter,
        )
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        cdims = self._cells(data)[3]
        dims = {
            "confusion": (*cdims, "true", "rated"),
            "prevalence": ("dimension", "category"),
            "accuracy": ("rater", "dimension", "design"),
            "confusion_logit_mean": ("dimension", "error"),
            "rater_sd": self._rater_sd_dims(),
        }
        coords = data.coords() | {"true": list(range(K)), "rated": list(range(K))}
        ti, ai = self._offdiag(K)
        coords["error"] = [f"{t}->{a}" for t, a in zip(ti, ai, strict=True)]
        dt = assemble_datatree(
            {k: v[None, None] for k, v in res["values"].items()},
            dims,
            coords,
            sample_stats={
                "lp": np.array([[res["loglik"]]]),
                "converged": np.array([[res["converged"]]]),
                "n_iterations": np.array([[res["n_iter"]]]),
            },
        )
        record_restarts(dt, runs, best)
        del R, D, G
        return dt


def _ds_em(
    model: DawidSkene,
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
    pooling = model.options["pooling"]
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    NC, cell, cell_dim, _ = model._cells(data)
    P = data.n_patterns
    if lay is None:
        lay = table_layout(data, cell)
    _, em_accumulate, em_estep_acc = em_kernels(lay)
    e_cell, e_code = lay["e_row"], lay["e_code"]
    E = e_cell.size
    mask = lay["mask"]
    q = np.empty((P, K))
    valid_c = data.valid[cell_dim]  # (NC, K)
    vmat = valid_c[:, :, None] & valid_c[:, None, :]
    a_prev = float(model.priors["prevalence"].param("a", 1.0))
    if pooling in ("unpooled", "pooled"):
        conc = model._confusion_conc(data, NC)
    else:
        conc = np.ones((NC, K, K))
    acc_pr = model.priors["accuracy"]
    a_acc, b_acc = float(acc_pr.param("alpha", 2.0)), float(acc_pr.param("beta", 1.0))
    pr_logit = model.priors["confusion_logit"]
    z_mu, z_sd = float(pr_logit.param("mu", -2.0)), float(pr_logit.param("sigma", 1.5))
    sig = model.priors["rater_sd"].mean()
    kd = data.n_categories[cell_dim].astype(float)
    ti, ai = np.nonzero(~np.eye(K, dtype=bool))
    # partial pooling: [zeta (D x E), sigma (D x E), omega - zeta (cell x E)]
    logit_state = np.concatenate(
        [np.full(D * ti.size, z_mu), np.full(D * ti.size, sig), np.zeros(NC * ti.size)]
    )
    by_error = model.options["spread"] == "error"

    M: np.ndarray | None = None  # expected counts of q (from the E-step)
    M_buf = np.zeros((E, K))
    prev_ll = -np.inf
    it0 = 0
    if state is not None:
        q[:] = state["q"]
        M, logit_state = state["M"], state["logit_state"].copy()
        prev_ll, it0 = state["objective"], state["n_iter"]
        have_q = True
    elif random_init:
        conf = rng.dirichlet(np.ones(K), (NC, K)) + np.eye(K) * rng.uniform(0.5, 3.0, (NC, 1, 1))
        conf = np.where(vmat, conf, 0.0)
        conf = conf / np.maximum(conf.sum(axis=-1, keepdims=True), 1e-300)
        prev = rng.dirichlet(np.ones(K), D) * data.valid
        prev = prev / prev.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            log_conf = np.where(vmat, np.log(np.where(vmat, conf, 1.0)), -np.inf)
            log_prev = np.where(data.valid, np.log(np.where(data.valid, prev, 1.0)), -np.inf)
        have_q = False
    else:
        first = np.zeros(P, dtype=np.int64)
        first[data.unit_pattern[::-1]] = np.arange(data.n_units)[::-1]
        q[:] = majority_vote(data)[first]
        have_q = True
    ll = prev_ll
    penalty = 0.0  # partial pooling: the log-prior part of the objective (see _partial_mstep)
    converged = False
    n_iter = it0
    counts = np.zeros((NC, K, K))
    prev_cnt = np.zeros((D, K))
    for it in range(it0, max_iter):
        n_iter = it + 1
        if have_q:
            # M-step: expected counts n[c, t, a]
            if M is None:  # q given (majority vote), not from an E-step
                M = em_accumulate(q, lay["p_e"], lay["p_start"], lay["pattern_w"], E)
            counts = np.zeros((NC * K, K))
            idx = e_cell * K + e_code
            for t in range(K):
                counts[:, t] = np.bincount(idx, M[:, t], minlength=NC * K)
            counts = counts.reshape(NC, K, K).transpose(0, 2, 1)  # (c, t, a)
            prev_cnt = class_counts(data, q)
            if pooling in ("unpooled", "pooled"):
                post = np.where(vmat, counts + conc, 0.0)
                tot = post.sum(axis=-1, keepdims=True)
                with np.errstate(divide="ignore", invalid="ignore"):
                    if variational:
                        log_conf = np.where(
                            vmat, digamma(np.where(vmat, post, 1.0)) - digamma(tot), -np.inf
                        )
                    else:
                        log_conf = np.where(vmat, np.log(np.where(vmat, post, 1.0) / tot), -np.inf)
            elif pooling == "one_coin":
                correct = np.einsum("ctt->c", counts)
                total = counts.sum(axis=(1, 2))
                pa = (correct + a_acc) / (total + a_acc + b_acc)
                log_conf = np.where(
                    np.eye(K, dtype=bool), np.log(pa)[:, None, None],
                    (np.log1p(-pa) - np.log(np.maximum(kd - 1, 1)))[:, None, None],
                )  # fmt: skip
                log_conf = np.where(vmat, log_conf, -np.inf)
            else:
                logit_state, log_conf, penalty = _partial_mstep(
                    logit_state, counts, NC, D, K, cell_dim, ti, ai, z_mu, z_sd, by_error
                )
            pc = np.where(data.valid, prev_cnt + a_prev, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                if variational:
                    log_prev = np.where(
                        data.valid,
                        digamma(np.where(data.valid, pc, 1.0))
                        - digamma(pc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
                else:
                    log_prev = np.where(
                        data.valid,
                        np.log(np.where(data.valid, pc, 1.0) / pc.sum(axis=1, keepdims=True)),
                        -np.inf,
                    )
        # E-step
        T = np.where(np.isfinite(log_conf[e_cell, :, e_code]), log_conf[e_cell, :, e_code], 0.0)
        M = M_buf
        ll = em_estep_acc(
            T, log_prev, lay["p_e"], lay["p_start"], lay["pattern_dim"], lay["pattern_w"], mask,
            q, M,
        )  # fmt: skip
        have_q = True
        ll += penalty
        if abs(ll - prev_ll) <= tol * max(1.0, abs(ll)):
            converged = True
            break
        prev_ll = ll
    run: dict[str, Any] = {"objective": float(ll), "converged": converged, "n_iter": n_iter}
    if not finish:
        run["state"] = {
            "q": q, "M": M, "logit_state": logit_state, "objective": float(ll), "n_iter": n_iter,
        }  # fmt: skip
        return run
    # point estimates
    if pooling in ("unpooled", "pooled"):
        post = np.where(vmat, counts + conc, 0.0)
        conf = post / np.maximum(post.sum(axis=-1, keepdims=True), 1e-300)
    else:
        conf = np.where(vmat, np.exp(log_conf), 0.0)
    pc = np.where(data.valid, prev_cnt + a_prev, 0.0)
    prev = pc / pc.sum(axis=1, keepdims=True)
    lead = (D, G) if pooling == "pooled" else (R, D, G)
    values: dict[str, np.ndarray] = {"confusion": conf.reshape(*lead, K, K), "prevalence": prev}
    if pooling == "one_coin":
        values["accuracy"] = np.exp(log_conf[:, 0, 0]).reshape(R, D, G)
    if pooling == "partial":
        E = ti.size
        values["confusion_logit_mean"] = logit_state[: D * E].reshape(D, E)
        sd = logit_state[D * E : 2 * D * E].reshape(D, E)
        values["rater_sd"] = sd if by_error else sd[:, 0]
    params = {"confusion": values["confusion"][None], "prevalence": prev[None]}
    joint = model.pattern_log_joint(params, data)[0]
    ll_plugin = float(np.dot(data.pattern_count, logsumexp_np(joint, axis=-1)))
    return {**run, "values": values, "loglik": ll_plugin}


def _partial_mstep(
    x0: np.ndarray,
    counts: np.ndarray,
    NC: int,
    D: int,
    K: int,
    cell_dim: np.ndarray,
    ti: np.ndarray,
    ai: np.ndarray,
    z_mu: float,
    z_sd: float,
    by_error: bool,
    sweeps: int = 5,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Generalised M-step of partial pooling.

    Increases sum n[c,t,a] log softmax(L[c,t])[a] - (zeta - mu)^2 / 2 s^2 - omega^2 / 2
    sigma^2 over zeta (D, E) and the deviations omega (NC, E) by block-coordinate steps with
    Boehning's bound on the softmax curvature (each step cannot decrease the objective),
    then updates the spread sigma by the empirical-Bayes (Laplace) rule
    ``sigma^2 = mean(omega^2 + v)``, ``v = 1 / (h + 1 / sigma^2)`` with ``h`` the
    likelihood's curvature at omega, over the cells that hold ratings: the spread is
    estimated from the data, and ``v > 0`` keeps it from collapsing to 0 as the joint mode
    would. ``x0`` and the result hold ``[zeta, sigma, omega]``; sigma is per dimension
    (``by_error=False``, stored repeated over the errors) or per dimension and error. The
    third result is the log-prior part of the EM objective at the new values: the
    deviations' Laplace-approximate marginal terms and zeta's normal log density (up to
    constants); the E-step's log-likelihood plus it is what the restarts compare.
    """
    E = ti.size
    zeta = x0[: D * E].reshape(D, E).copy()
    sig_d = x0[D * E : 2 * D * E].reshape(D, E).copy()
    om = x0[2 * D * E :].reshape(NC, E).copy()
    sig = sig_d[cell_dim]  # (NC, E)
    n_row = counts.sum(axis=-1)  # (NC, K)
    h_off = 0.5 * n_row[:, ti]  # bound on the curvature, (NC, E)

    def probs() -> np.ndarray:
        L = np.zeros((NC, K, K))
        L[:, ti, ai] = zeta[cell_dim] + om
        return np.exp(L - logsumexp(L, axis=-1, keepdims=True))

    def grad_off() -> np.ndarray:
        return (counts - n_row[..., None] * probs())[:, ti, ai]

    for _ in range(sweeps):
        g = grad_off()
        gz = np.zeros((D, E))
        hz = np.zeros((D, E))
        np.add.at(gz, cell_dim, g)
        np.add.at(hz, cell_dim, h_off)
        zeta = zeta + (gz - (zeta - z_mu) / z_sd**2) / (hz + 1 / z_sd**2)
        g = grad_off()
        om = om + (g - om / sig**2) / (h_off + 1 / sig**2)
    p = probs()[:, ti, ai]
    v = 1.0 / (n_row[:, ti] * p * (1.0 - p) + 1.0 / sig**2)
    used = (n_row.sum(axis=-1) > 0).astype(float)[:, None]  # cells with ratings
    sq = np.zeros((D, E))
    n_used = np.zeros((D, E))
    np.add.at(sq, cell_dim, used * (om**2 + v))
    np.add.at(n_used, cell_dim, np.broadcast_to(used, (NC, E)))
    if not by_error:
        sq = np.broadcast_to(sq.sum(axis=1, keepdims=True), (D, E))
        n_used = np.broadcast_to(n_used.sum(axis=1, keepdims=True), (D, E))
    sig_d = np.where(n_used > 0, np.sqrt(sq / np.maximum(n_used, 1.0)), sig_d)
    # Laplace approximation of log N(omega; 0, sigma) integrated against the likelihood,
    # relative to the likelihood at the mode: bounded as sigma -> 0, unlike the joint mode
    sig = sig_d[cell_dim]
    v = 1.0 / (n_row[:, ti] * p * (1.0 - p) + 1.0 / sig**2)
    penalty = float(np.sum(used * (0.5 * np.log(v / sig**2) - 0.5 * om**2 / sig**2)))
    penalty -= float(np.sum(0.5 * ((zeta - z_mu) / z_sd) ** 2))
    L = np.zeros((NC, K, K))
    L[:, ti, ai] = zeta[cell_dim] + om
    x = np.concatenate([zeta.ravel(), sig_d.ravel(), om.ravel()])
    return x, L - logsumexp(L, axis=-1, keepdims=True), penalty


__all__ = ["POOLINGS", "DawidSkene"]
