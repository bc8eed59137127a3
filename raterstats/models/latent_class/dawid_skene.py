"""Dawid-Skene (1979): a confusion matrix per rater, unpooled, pooled, partially pooled or
one-coin.

Generative story (one latent true label per unit: item, segment, dimension)::

    T_u ~ Categorical(pi_d)                       pi_d ~ Dirichlet(3)
    A_uj | T_u = t ~ Categorical(beta_c[t, :])    c = (rater j, dimension d, design g)

* ``pooling="unpooled"``: ``beta_c[t, :] ~ Dirichlet(s_dg m_t)``, ``m_t`` the mean row of
  the Stan User's Guide's prior (``alpha_tt = 2.5 K``, ``alpha_ta = 1``, also the R
  package rater's in its early versions) and, by default (``confusion_prior="auto"``),
  the concentration ``s_dg`` of each dimension x design learnt from the ratings
  (empirical Bayes with the hyperprior ``log s ~ N(log(3.5 K - 1), 1)``,
  :mod:`~raterstats.models.latent_class.dawid_skene_eb`; ``"fixed"``: ``s = 3.5 K - 1``,
  the Stan prior itself; ``"empirical_bayes"``: the mean rows learnt too), and
  ``pi_d ~ Dirichlet(3)``;
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

import inspect
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from raterstats.inference import Density
from raterstats.lazy import LazyModule
from raterstats.models.base import Method
from raterstats.models.latent_class.base import LatentClassModel
from raterstats.models.latent_class.data import (
    LatentClassData,
    majority_vote,
    majority_vote_stats,
)
from raterstats.models.latent_class.dawid_skene_density import ds_density
from raterstats.models.latent_class.dawid_skene_eb import empirical_bayes_em
from raterstats.models.latent_class.dawid_skene_em import ds_em_run
from raterstats.models.latent_class.em import (
    RESTART_UNITS,
    em_datatree,
    restart_subsample,
    short_run_restarts,
)
from raterstats.models.latent_class.graph import (
    NEG,
    padded_dirichlet,
    padded_dirichlet_init,
    padded_log_simplex_pt,
    pattern_loglik_pt,
    segment_sum_pt,
)
from raterstats.models.latent_class.reference import TableLayout, ds_rating_table, table_layout
from raterstats.models.priors import Prior

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
else:
    pm = LazyModule("pymc")
    pt = LazyModule("pytensor.tensor")

POOLINGS = ("unpooled", "pooled", "partial", "one_coin")
#: the values of ``DawidSkene(confusion_prior=...)``
CONFUSION_PRIORS = ("auto", "empirical_bayes", "empirical_bayes_scale", "fixed")
#: what ``confusion_prior="auto"`` means for unpooled Dawid-Skene with the default
#: ``priors["confusion"]``: chosen by ``benchmarks/hard_crowds.py`` (see the card)
AUTO_CONFUSION_PRIOR = "empirical_bayes_scale"

#: ``pooling="partial"``, ``centred=None``: an error logit is sampled centred where the
#: data's information about it is at least this many times the prior's precision
CENTRED_MIN_RATIO = 2.0


def keyword_defaults(func: Callable[..., Any]) -> dict[str, Any]:
    """The keyword-only arguments of ``func`` with defaults, by name.

    Examples
    --------
    >>> def f(x, *, a=1, b="z"): ...
    >>> keyword_defaults(f)
    {'a': 1, 'b': 'z'}
    """
    return {
        k: p.default
        for k, p in inspect.signature(func).parameters.items()
        if p.kind is p.KEYWORD_ONLY and p.default is not p.empty
    }


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
        Clamp the true label of units with a ``gold`` label (default False: gold labels
        are kept beside the fit as a check, :func:`raterstats.posterior.gold_check`, and
        do not enter the likelihood; True makes them known labels).
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
    confusion_prior : {"auto", "empirical_bayes_scale", "empirical_bayes", "fixed"}
        ``pooling="unpooled"``: how the Dirichlet rows of the confusion prior are set.
        ``"empirical_bayes_scale"`` learns their concentration from the ratings (one per
        dimension x design, shared by the rows; the mean rows stay those of
        ``priors["confusion"]``), ``"empirical_bayes"`` the mean rows too (kept
        diagonal-dominant), both without gold (:mod:`~raterstats.models.latent_class.
        dawid_skene_eb`), and the fit uses the learnt rows throughout (EM, NUTS, Gibbs, MAP,
        ADVI); ``"fixed"`` uses ``priors["confusion"]`` as given. ``"auto"`` (default):
        :data:`AUTO_CONFUSION_PRIOR` (``"empirical_bayes_scale"``, chosen by measurements on
        simulated crowds, ``benchmarks/hard_crowds.py`` and the card), ``"fixed"`` when
        ``priors`` overrides ``confusion``. Other poolings have their own priors (partial
        pooling learns its population from the ratings already).
    confusion_concentration : array-like, optional
        ``(dimension, design, K, K)`` Dirichlet concentrations of the confusion rows
        (unpooled), replacing ``priors["confusion"]``: what empirical Bayes learnt (a fit
        records it here, so a reloaded fit has the prior it was fitted with), or a prior
        learnt on other data. Given, nothing is learnt.
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
    rank_fit_method: ClassVar[Method | None] = "em"
    default_priors: ClassVar[dict[str, Prior]] = {
        "confusion": Prior("Dirichlet", off_diagonal=1.0, diagonal_per_category=2.5),
        "confusion_logit": Prior("Normal", mu=-2.0, sigma=1.5),
        "rater_sd": Prior("HalfNormal", sigma=1.0),
        "accuracy": Prior("Beta", alpha=2.0, beta=1.0),
        "prevalence": Prior("Dirichlet", a=3.0),
    }
    default_options: ClassVar[dict[str, Any]] = {
        "pooling": "unpooled",
        "confusion_prior": "auto",
        "confusion_concentration": None,
        "rater_prior": None,
        "repeats": "include",
        "use_gold": False,
        "centred": None,
        "spread": "dimension",
    }
    param_names: ClassVar[tuple[str, ...]] = ("confusion", "prevalence")
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi", "em", "gibbs")
    #: the empirical-Bayes EM fit that learnt a model's ``confusion_concentration`` (set by
    #: :meth:`learn_priors` on the new model it returns): (data, (seed, EM options), fit)
    _em_cache: tuple[Any, Any, xr.DataTree] | None = None

    def check_options(self) -> None:
        super().check_options()
        o = self._options
        problems = []
        if o["pooling"] not in POOLINGS:
            problems.append(f"pooling must be one of {list(POOLINGS)}, not {o['pooling']!r}")
        if o["spread"] not in ("error", "dimension"):
            problems.append(f"spread must be 'error' or 'dimension', not {o['spread']!r}")
        if o["centred"] is not None and not isinstance(o["centred"], bool):
            problems.append("centred must be True, False or None")
        if o["confusion_prior"] not in CONFUSION_PRIORS:
            problems.append(
                f"confusion_prior must be one of {list(CONFUSION_PRIORS)}, "
                f"not {o['confusion_prior']!r}"
            )
        if o["confusion_concentration"] is not None:
            try:
                cc = np.asarray(o["confusion_concentration"], dtype=float)
            except (TypeError, ValueError):
                cc = np.full(1, np.nan)
            if cc.ndim != 4 or cc.shape[-1] != cc.shape[-2] or not np.all(np.isfinite(cc)):
                problems.append(
                    "confusion_concentration must be a (dimension, design, K, K) array of "
                    "finite numbers"
                )
            elif np.any(cc < 0):
                problems.append("confusion_concentration must not be negative")
            else:
                o["confusion_concentration"] = cc.tolist()
            if o["pooling"] != "unpooled":
                problems.append("confusion_concentration needs pooling='unpooled'")
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

    def cells(self, data: LatentClassData) -> tuple[int, np.ndarray, np.ndarray, tuple[str, ...]]:
        """Parameter cells (confusion rows): their count, each pattern rating's cell, each
        cell's dimension, and the cells' dims (rater x dimension x design; dimension x design
        when pooled)."""
        R, D, G = len(data.raters), len(data.dimensions), len(data.designs)
        if self._options["pooling"] == "pooled":
            cell = data.p_dim * G + data.p_design
            cell_dim = np.arange(D * G) // G
            return D * G, cell, cell_dim, ("dimension", "design")
        cell_dim = (np.arange(R * D * G) // G) % D
        return R * D * G, data.p_cell, cell_dim, ("rater", "dimension", "design")

    def confusion_conc(self, data: LatentClassData, n_cells: int) -> np.ndarray:
        """``(n_cells, K, K)`` Dirichlet concentrations of the confusion rows."""
        K = data.K
        pr = self._priors["confusion"]
        cell_dim = self.cells(data)[2]
        out = np.ones((n_cells, K, K))
        full = pr.param("a")
        given = self._options["confusion_concentration"]
        if given is not None:
            return self.given_concentration(data, n_cells) + self.rater_prior_counts(data, n_cells)
        for d in np.unique(cell_dim):  # the same rows on every cell of a dimension
            k = int(data.n_categories[d])
            on_d = cell_dim == d
            if full is not None and np.ndim(full) == 2:
                out[on_d, :k, :k] = np.asarray(full)[:k, :k]
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
                out[on_d, :k, :k] = m
        return out + self.rater_prior_counts(data, n_cells)

    def given_concentration(self, data: LatentClassData, n_cells: int) -> np.ndarray:
        """``(n_cells, K, K)``: the option ``confusion_concentration`` (dimension, design,
        K, K) on every rater's cells (unpooled), checked against the data."""
        D, G, K = len(data.dimensions), len(data.designs), data.K
        cc = np.asarray(self._options["confusion_concentration"], dtype=float)
        if cc.shape != (D, G, K, K):
            raise ValueError(
                f"confusion_concentration is {cc.shape}; these data need (dimension, design, "
                f"K, K) = {(D, G, K, K)}"
            )
        for d in range(D):
            k = int(data.n_categories[d])
            if np.any(cc[d, :, :k, :k] <= 0):
                raise ValueError(
                    f"confusion_concentration must be positive on the {k} categories of "
                    f"dimension {data.dimensions[d]!r}"
                )
        group = np.arange(n_cells) % (D * G)  # cell (rater, dimension, design) -> (d, g)
        return np.asarray(cc.reshape(D * G, K, K)[group])

    def learns_concentration(self) -> bool:
        """Whether a fit learns the confusion prior from the ratings (empirical Bayes, see
        ``confusion_prior``): unpooled, no ``confusion_concentration`` given, and
        ``confusion_prior`` ``"empirical_bayes"`` (or ``"auto"`` with the default
        ``priors["confusion"]``)."""
        o = self._options
        if o["pooling"] != "unpooled" or o["confusion_concentration"] is not None:
            return False
        return self.confusion_prior_mode() != "fixed"

    def confusion_prior_mode(self) -> str:
        """``confusion_prior`` resolved: ``"auto"`` is :data:`AUTO_CONFUSION_PRIOR` with the
        default ``priors["confusion"]`` and ``"fixed"`` with a prior given."""
        mode = str(self._options["confusion_prior"])
        if mode != "auto":
            return mode
        default = self._priors["confusion"] == self.default_priors["confusion"]
        return AUTO_CONFUSION_PRIOR if default else "fixed"

    def rater_prior_counts(self, data: LatentClassData, n_cells: int) -> np.ndarray:
        """``(n_cells, K, K)`` the per-rater pseudo-counts of ``rater_prior`` (zeros for the
        raters it does not name; unpooled), added to the confusion prior's concentration."""
        K = data.K
        out = np.zeros((n_cells, K, K))
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
        ti, ai = self.off_diagonal(K)
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
        pilot = ds_em_run(
            self, data, rng=np.random.default_rng(0), random_init=False, max_iter=200,
            tol=1e-6, variational=False,
        )  # fmt: skip
        sd = np.asarray(pilot["values"]["rater_sd"], dtype=float)
        sd = np.broadcast_to(sd.reshape(len(data.dimensions), -1), (len(data.dimensions), ti.size))
        return np.asarray(info * sd[cell_dim] ** 2 >= CENTRED_MIN_RATIO)

    def rater_sd_dims(self) -> tuple[str, ...]:
        """Dims of partial pooling's spread ``rater_sd`` (see ``spread``)."""
        return ("dimension", "error") if self._options["spread"] == "error" else ("dimension",)

    def entry_label(self, data: LatentClassData, i: int) -> str:
        """Label of entry ``i`` of the flat ``(cell, error)`` logits."""
        D, G = len(data.dimensions), len(data.designs)
        ti, ai = self.off_diagonal(data.K)
        c, e = divmod(i, ti.size)
        j, d, g = c // (D * G), (c // G) % D, c % G
        return f"{data.raters[j]}/{data.dimensions[d]}/{data.designs[g]}/{ti[e]}->{ai[e]}"

    def off_diagonal(self, K: int) -> tuple[np.ndarray, np.ndarray]:
        """True and rated category of the ``K (K - 1)`` errors (off-diagonal entries of a
        confusion matrix), row-major."""
        t, a = np.nonzero(~np.eye(K, dtype=bool))
        return t, a

    # ------------------------------------------------------------------ PyMC model

    def build_model(self, data: LatentClassData) -> pm.Model:
        R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
        pooling = self._options["pooling"]
        NC, cell, cell_dim, cdims = self.cells(data)
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
                conc = self.confusion_conc(data, NC).reshape(*lead, K, K)
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
                pr = self._priors["confusion_logit"]
                ti, ai = self.off_diagonal(K)
                # errors that exist in each cell (both categories on its dimension's scale);
                # the others (dimensions with fewer than K categories) get no mass
                k_cell = data.n_categories[cell_dim][:, None]
                exists = (ti[None, :] < k_cell) & (ai[None, :] < k_cell)
                coords_off = [f"{t}->{a}" for t, a in zip(ti, ai, strict=True)]
                model.add_coord("error", coords_off)
                zeta = pm.Normal(
                    "confusion_logit_mean",
                    mu=pr.param("mu", -2.0),
                    sigma=pr.param("sigma", 1.5),
                    dims=("dimension", "error"),
                )
                sd = self._priors["rater_sd"].create("rater_sd", dims=self.rater_sd_dims())
                sigma = sd if sd.ndim == 2 else pt.broadcast_to(sd[:, None], (D, ti.size))
                cen = self.centred_entries(data).ravel()
                mu_all = zeta[cell_dim].ravel()
                sd_all = sigma[cell_dim].ravel()
                omega = pt.zeros(NC * ti.size)
                for flag, var, cname in (
                    (True, "confusion_logit_centred", "centred_logit"),
                    (False, "confusion_z", "noncentred_logit"),
                ):
                    idx = np.flatnonzero((cen == flag) & exists.ravel())
                    if idx.size == 0:
                        continue
                    model.add_coord(cname, [self.entry_label(data, int(i)) for i in idx])
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
                off = pt.where(exists.reshape(R, D, G, -1), omega, NEG)
                logits = pt.set_subtensor(logits[:, :, :, ti, ai], off)
                log_conf = logits - pt.logsumexp(logits, axis=-1, keepdims=True)
                rows = data.valid[None, :, None, :, None] & data.valid[None, :, None, None, :]
                conf = pm.Deterministic(
                    "confusion",
                    pt.where(rows, pt.exp(log_conf), 0.0),
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
        return ds_density(self, data, start)

    # ------------------------------------------------------------------ NumPy reference

    def _cell_confusion(self, conf: np.ndarray, data: LatentClassData) -> np.ndarray:
        """``(S, n_cells_full, K, K)`` confusion per (rater, dimension, design) cell."""
        S, K = conf.shape[0], data.K
        if self._options["pooling"] == "pooled":
            R = len(data.raters)
            c = conf.reshape(S, 1, -1, K, K)
            return np.broadcast_to(c, (S, R, c.shape[2], K, K)).reshape(S, -1, K, K)
        return conf.reshape(S, -1, K, K)

    def table_rows(self, data: LatentClassData) -> np.ndarray:
        """Each pattern rating's confusion row (cell; dimension x design when pooled)."""
        return self.cells(data)[1]

    def draw_tables(
        self, params: dict[str, np.ndarray], data: LatentClassData, lay: TableLayout
    ) -> tuple[np.ndarray, np.ndarray]:
        """Dawid-Skene's table (``reference.ds_rating_table`` of the log confusion rows)
        and the log prevalence, for S draws."""
        conf = params["confusion"]
        S, K = conf.shape[0], data.K
        flat = conf.reshape(S, -1, K, K)  # rows as in table_rows (pooled: dimension x design)
        with np.errstate(divide="ignore"):
            log_conf = np.log(flat)
            log_prior = np.log(params["prevalence"])
        return ds_rating_table(log_conf, lay), log_prior

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

    def rater_quantities(self, posterior: xr.Dataset) -> dict[str, xr.DataArray]:
        """``confusion`` and ``accuracy``: the probability of rating the true label,
        averaged over the true label with the prevalence (draw by draw)."""
        conf = posterior["confusion"]
        prev = posterior["prevalence"].rename(category="true")
        diag = xr.DataArray(
            np.diagonal(conf.values, axis1=-2, axis2=-1),
            dims=(*conf.dims[:-2], "true"),
            coords={k: v for k, v in conf.coords.items() if k != "rated"},
        )
        return {"confusion": conf, "accuracy": (diag * prev).sum("true")}

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
        restart_units: int = RESTART_UNITS,
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

        Large data: with more than ``2 * restart_units`` units (default
        :data:`~raterstats.models.latent_class.em.RESTART_UNITS`), the short runs use a
        random subsample of ``restart_units`` units (seeded by ``random_seed``) and the
        start they pick (the majority vote or the same random parameters) runs on all the
        data to convergence (:func:`~raterstats.models.latent_class.em.short_run_restarts`);
        ``restart_units=0``: the short runs use all the data.
        ``sample_stats.attrs`` record each restart's iterations (``restart_iterations``)
        and the units of the short runs (``restart_units``).

        Unpooled / pooled / one-coin: the M-step adds the prior's concentrations to the
        expected counts (posterior-mean updates; ``variational=True``: mean-field
        variational Bayes). Partial pooling: the M-step maximises the expected
        complete-data log-likelihood plus the normal log-densities of the logits given the
        raters' spread, and the spread follows the empirical-Bayes (Laplace) update of
        :func:`~raterstats.models.latent_class.dawid_skene_em.partial_mstep` (estimated
        from the data, not held at its prior).
        """
        if unused:
            raise TypeError(f"unknown EM options {sorted(unused)}")
        em_options = {
            "restarts": restarts, "max_iter": max_iter, "tol": tol, "variational": variational,
            "short_iter": short_iter, "restart_units": restart_units,
        }  # fmt: skip
        cached = self._em_cache
        if cached is not None and cached[0] is data and cached[1] == (random_seed, em_options):
            return cached[2].copy(deep=True)  # the empirical-Bayes run that learnt the prior
        rng = np.random.default_rng(random_seed)
        sub = restart_subsample(data, restart_units, random_seed)
        eb = self.learns_concentration()
        # empirical Bayes: the restarts run at the starting (fixed) prior, then the prior's
        # rows and the estimates are learnt together from the best of them
        model = self.with_options(confusion_prior="fixed") if eb else self

        def on(d: LatentClassData, lay: TableLayout) -> Any:
            return lambda **kw: ds_em_run(
                model, d, lay=lay, rng=rng, tol=tol, variational=variational, **kw
            )

        lay = table_layout(data, model.cells(data)[1])  # (the same cells as self's)
        res, runs, best = short_run_restarts(
            on(data, lay),
            restarts=restarts,
            short_iter=short_iter,
            max_iter=max_iter,
            short_run=None if sub is None else on(sub, table_layout(sub, model.cells(sub)[1])),
            rng=rng,
            finish_best=not eb,  # empirical Bayes continues the best run
        )
        if eb:
            res = empirical_bayes_em(
                self, data, res, rng=rng, tol=tol, variational=variational, max_iter=max_iter,
                lay=lay,
            )  # fmt: skip
            # the alternation continues the kept restart's run: its iterations count there
            runs[best] = res
        K = data.K
        cdims = self.cells(data)[3]
        dims = {
            "confusion": (*cdims, "true", "rated"),
            "prevalence": ("dimension", "category"),
            "accuracy": ("rater", "dimension", "design"),
            "confusion_logit_mean": ("dimension", "error"),
            "rater_sd": self.rater_sd_dims(),
        }
        coords = data.coords() | {"true": list(range(K)), "rated": list(range(K))}
        ti, ai = self.off_diagonal(K)
        coords["error"] = [f"{t}->{a}" for t, a in zip(ti, ai, strict=True)]
        units = data.n_units if sub is None else sub.n_units
        dt = em_datatree(res, runs, best, dims, coords, restart_units=units)
        if eb:
            dt["sample_stats"].attrs.update(res["empirical_bayes"])
        return dt

    def with_options(self, **options: Any) -> DawidSkene:
        """A new model with the same priors and these options changed."""
        return type(self)(priors=self.priors, **(self.options | options))

    # ------------------------------------------------------------------ empirical Bayes

    def learn_priors(
        self, data: LatentClassData, *, random_seed: int, em_options: Mapping[str, Any]
    ) -> DawidSkene:
        """Empirical Bayes (``confusion_prior``, see :meth:`learns_concentration`): the EM
        fit that learns the confusion prior's Dirichlet rows with the estimates, and a new
        model with the learnt rows as ``confusion_concentration`` (what the fit records and
        its NUTS, Gibbs, MAP and ADVI runs use); that EM fit is kept by the new model, so a
        ``method="em"`` fit and the NUTS start do not run it again. ``self`` when nothing is
        learnt."""
        if not self.learns_concentration():
            return self
        em = self.fit_em(data, random_seed=random_seed, progress=False, **em_options)
        conc = json.loads(em["sample_stats"].attrs["confusion_concentration"])
        learnt = self.with_options(confusion_concentration=conc)
        key = (random_seed, keyword_defaults(self.fit_em) | dict(em_options))
        learnt._em_cache = (data, key, em)
        return learnt


__all__ = ["AUTO_CONFUSION_PRIOR", "CONFUSION_PRIORS", "POOLINGS", "DawidSkene", "keyword_defaults"]
