"""What the two correlated-crowd models share (community Dawid-Skene and the enhanced BCC):
an exchangeable size (communities, subtypes) fixed or chosen by the held-out rule of
:mod:`~raterstats.models.latent_class.crowd_vb`, a variational fit with restarts as the
``method="em"`` fast path, and the pivotal relabelling of the exchangeable components of a
NUTS fit before its convergence checks.

Why the relabelling: the communities (subtypes) of a fit are exchangeable, so the
posterior has ``M!`` copies of every mode that differ only in the order of the components,
and chains (or one chain, when two components are alike) can visit different copies.
Whatever depends on the order (a community's confusion, a rater's membership probability)
would then fail R-hat although the chains agree on everything that has a meaning. After
sampling, every draw's components are permuted to match those of the *pivot*, the draw of
highest log density (Marin, Mengersen & Robert 2005, "Bayesian modelling and inference on
mixtures of distributions", Handbook of Statistics 25): the permutation that minimises the
squared distance between the draw's and the pivot's component features (the model's
:meth:`CrowdModel.component_features`). Quantities that do not depend on the order (the
raters' own confusions, the prevalence, the label posteriors, the likelihood) are left as
they are. R-hat and ESS are then computed on the relabelled draws as on any other; chains
that disagree about more than the order still fail them. The posterior's ``relabelling``
attribute says how many draws were permuted. The label switching of the true classes is a
different matter, checked by the family's ``label_switching``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from raterstats.models.base import ModelInputError
from raterstats.models.latent_class.base import LatentClassModel
from raterstats.models.latent_class.crowd_vb import (
    AUTO_SIZES,
    HELDOUT_FOLDS,
    VBLayout,
    choose_size,
    heldout_folds,
    heldout_logprob,
    pivot_permutations,
    vb_layout,
)
from raterstats.models.latent_class.data import LatentClassData
from raterstats.models.latent_class.em import (
    RESTART_UNITS,
    em_datatree,
    restart_subsample,
    short_run_restarts,
)
from raterstats.ratings import Ratings

#: iterations and tolerance (relative change of the ELBO) of the held-out rule's fits (one
#: start each). 1e-5 of an ELBO of 10,000 nats is 0.1 nat, far below the differences in
#: held-out log-likelihood the rule compares; 1e-6 chose the same sizes on the built-in
#: study (collapsed to 3 points) and a simulated hard crowd at 2.3x the time.
RULE_MAX_ITER = 300
RULE_TOL = 1e-5


def layout_majority_vote(vl: VBLayout, smoothing: float = 0.5) -> np.ndarray:
    """``(P, K)`` soft majority vote of every pattern of a layout (its ratings' categories
    counted, ``smoothing`` added on the possible classes, normalised).

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.models.latent_class.crowd_vb import vb_layout
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> bool(np.allclose(layout_majority_vote(vb_layout(d)).sum(1), 1.0))
    True
    """
    lay = vl.lay
    P, K = lay.n_patterns, vl.K
    pat = np.repeat(np.arange(P), np.diff(lay.p_start))
    counts = np.bincount(pat * K + lay.e_code[lay.p_e], minlength=P * K).reshape(P, K)
    q = (counts + smoothing) * lay.mask
    return q / q.sum(axis=1, keepdims=True)


class CrowdModel(LatentClassModel):
    """Base of the correlated-crowd models: an exchangeable size ``M`` (the option
    :attr:`size_option`: a whole number, or ``"auto"`` for the held-out rule over
    :data:`~raterstats.models.latent_class.crowd_vb.AUTO_SIZES`), a variational fit
    (:meth:`vb_run`) driven with restarts as ``fit(method="em")``, and pivotal
    relabelling of NUTS draws (:meth:`relabel`, see the module docstring).

    A subclass implements :meth:`vb_run`, :meth:`rated_probability`, :meth:`em_dims`,
    :meth:`component_features` and :meth:`permute_draws`, besides the family's hooks.
    """

    name = "crowd"
    abstract = True
    #: the option that holds the size (``"communities"``, ``"subtypes"``)
    size_option: ClassVar[str] = "size"
    #: the dim name of the exchangeable components (``"community"``, ``"subtype"``)
    size_dim: ClassVar[str] = "component"
    methods: ClassVar[tuple[str, ...]] = ("nuts", "map", "advi", "em")

    def check_options(self) -> None:
        super().check_options()
        v = self._options[self.size_option]
        ok = v == "auto" or (isinstance(v, int | np.integer) and not isinstance(v, bool) and v >= 1)
        if not ok:
            raise ValueError(f"{self.size_option} must be 'auto' or a whole number >= 1, not {v!r}")
        if isinstance(v, np.integer):
            self._options[self.size_option] = int(v)

    def prepare(self, ratings: Ratings) -> LatentClassData:
        data = super().prepare(ratings)
        if len({int(k) for k in data.n_categories}) > 1:
            raise ModelInputError(
                f"{type(self).__name__} needs the same number of categories on every "
                f"dimension; these ratings have {sorted({int(k) for k in data.n_categories})}: "
                "fit each dimension on its own (ratings.filter(dimension=...))"
            )
        if data.K < 2:
            raise ModelInputError(f"{type(self).__name__} needs at least two categories")
        return data

    # -- to implement
    def vb_run(self, vl: VBLayout, q0: np.ndarray, size: int, **kw: Any) -> dict[str, Any]:
        """One variational run (see ``cds_vb_run`` / ``ebcc_vb_run``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement vb_run")

    def rated_probability(self, run: dict[str, Any], vl: VBLayout, size: int) -> np.ndarray:
        """``(n_cells, S, K)`` posterior mean P(rated category | latent state) of a run
        (the states of its ``q``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement rated_probability")

    def em_dims(self) -> dict[str, tuple[str, ...]]:
        """Dims of the variables of a ``method="em"`` fit."""
        raise NotImplementedError(f"{type(self).__name__} must implement em_dims")

    def component_features(self, posterior: xr.Dataset) -> list[tuple[Any, np.ndarray]]:
        """For each group of exchangeable components (a key), the features of every draw's
        components ``(S, M, F)`` that the relabelling matches against the pivot's."""
        raise NotImplementedError(f"{type(self).__name__} must implement component_features")

    def permute_draws(
        self, posterior: xr.Dataset, perms: dict[Any, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """The posterior variables that depend on the order of the components, as
        ``(S, ...)`` arrays permuted by ``perms[key] (S, M)`` (draw ``s``'s component
        ``perms[key][s, k]`` becomes component ``k``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement permute_draws")

    # -- the size
    def size_candidates(self, data: LatentClassData) -> list[int]:
        """The sizes the held-out rule compares (at most the number of raters)."""
        return [m for m in AUTO_SIZES if m <= max(1, len(data.raters))]

    def choose_size(self, data: LatentClassData) -> tuple[int, dict[str, Any]]:
        """The size and the held-out rule's table (``{"rule": "fixed"}`` for a fixed
        size). The rule depends on the ratings only (a fixed split into folds, one start
        per fit), so every call on the same ratings gives the same size."""
        v = self._options[self.size_option]
        if v != "auto":
            return int(v), {"rule": "fixed", "chosen": int(v)}
        folds = heldout_folds(data, HELDOUT_FOLDS)

        def score(m: int) -> np.ndarray:
            out = np.empty(data.n_ratings)
            for f in folds:
                q0 = layout_majority_vote(f.train)
                run = self.vb_run(
                    f.train, q0, m, rng=np.random.default_rng(0), random_init=False,
                    max_iter=RULE_MAX_ITER, tol=RULE_TOL,
                )  # fmt: skip
                rated = self.rated_probability(run, f.train, m)
                out[f.rating_index] = heldout_logprob(run["q"], rated, f)
            return out

        m, table = choose_size(self.size_candidates(data), score)
        table = {
            "rule": (
                f"held-out ratings ({HELDOUT_FOLDS} folds): the smallest size within one "
                "standard error of the best held-out log-likelihood"
            ),
            **table,
        }
        return m, table

    def model_size(self, data: LatentClassData, start: Any = None) -> int:
        """The size of a fit: that of ``start`` (an EM estimate) when given, else
        :meth:`choose_size`."""
        if start is not None and self.size_dim_of_start(start) is not None:
            return int(self.size_dim_of_start(start))  # type: ignore[arg-type]
        return self.choose_size(data)[0]

    def size_coords(self, data: LatentClassData, size: int) -> dict[str, Any]:
        """The data's coordinates with the true and rated classes and the ``size``
        components (:attr:`size_dim`): those of an EM fit and of the compiled density."""
        return data.coords() | {
            "true": list(range(data.K)),
            "rated": list(range(data.K)),
            self.size_dim: list(range(size)),
        }

    def size_dim_of_start(self, start: Any) -> int | None:
        """The size of a start point (None: it does not say)."""
        return None

    # -- EM (variational) fit
    def fit_em(
        self,
        data: LatentClassData,
        *,
        random_seed: int,
        progress: bool,
        restarts: int = 5,
        max_iter: int = 500,
        tol: float = 1e-6,
        short_iter: int = 20,
        restart_units: int = RESTART_UNITS,
        **unused: Any,
    ) -> xr.DataTree:
        """Point estimates by mean-field variational Bayes (posterior means of the
        variational factors), with restarts by the short-runs strategy of
        :func:`~raterstats.models.latent_class.em.short_run_restarts` (the first at the
        majority vote, the others from random starts; the best by the ELBO is continued to
        convergence: relative change of the ELBO below ``tol``; variational fits creep
        along flat directions of the bound, so the default is looser than Dawid-Skene's
        EM's). The size is the option's or the held-out rule's (:meth:`choose_size`; its table is in
        ``sample_stats.attrs["size_rule"]``, JSON). ``sample_stats.attrs["elbo"]``: the
        ELBO of the kept run; ``lp``: the plug-in log marginal likelihood at its
        estimates."""
        if unused:
            raise TypeError(f"unknown EM options {sorted(unused)}")
        size, table = self.choose_size(data)
        rng = np.random.default_rng(random_seed)
        sub = restart_subsample(data, restart_units, random_seed)

        def on(d: LatentClassData) -> Any:
            vl = vb_layout(d)
            q0 = layout_majority_vote(vl)
            return lambda **kw: self.vb_run(vl, q0, size, rng=rng, tol=tol, **kw)

        res, runs, best = short_run_restarts(
            on(data),
            restarts=restarts,
            short_iter=short_iter,
            max_iter=max_iter,
            short_run=None if sub is None else on(sub),
            rng=rng,
        )
        coords = self.size_coords(data, size)
        units = data.n_units if sub is None else sub.n_units
        dt = em_datatree(res, runs, best, self.em_dims(), coords, restart_units=units)
        attrs = dt["sample_stats"].attrs
        attrs["elbo"] = float(res["objective"])
        attrs["size_rule"] = json.dumps(table)
        attrs[self.size_option] = int(size)
        return dt

    # -- NUTS: relabelling of the exchangeable components
    def relabel(self, posterior: xr.Dataset, lp: np.ndarray) -> xr.Dataset:
        """The posterior with every draw's components permuted to the pivot's (the draw of
        highest log density ``lp (chain, draw)``); ``attrs["relabelling"]`` says how many
        draws were permuted."""
        groups = self.component_features(posterior)
        if not groups:
            return posterior
        n_chain, n_draw = posterior.sizes["chain"], posterior.sizes["draw"]
        lp_flat = np.asarray(lp, dtype=float).reshape(-1)
        ok = np.isfinite(lp_flat)
        if not ok.any():
            return posterior
        pivot = int(np.argmax(np.where(ok, lp_flat, -np.inf)))
        perms: dict[Any, np.ndarray] = {}
        moved = np.zeros(n_chain * n_draw, dtype=bool)
        for key, feats in groups:
            p = pivot_permutations(feats, feats[pivot])
            perms[key] = p
            moved |= (p != np.arange(p.shape[1])).any(axis=1)
        out = posterior.copy()
        for name, arr in self.permute_draws(posterior, perms).items():
            v = posterior[name]
            out[name] = (v.dims, arr.reshape(v.shape))
        chains = [int(moved.reshape(n_chain, n_draw)[c].sum()) for c in range(n_chain)]
        out.attrs["relabelling"] = (
            f"{self.size_dim} labels relabelled draw by draw to the pivot (the draw of highest "
            f"log density, chain {pivot // n_draw} draw {pivot % n_draw}; Marin et al. 2005): "
            f"{int(moved.sum())} of {moved.size} draws permuted (per chain {chains}); "
            "R-hat and ESS are those of the relabelled draws"
        )
        return out

    def extra_groups(self, dt: xr.DataTree, data: Any, model: Any) -> dict[str, xr.Dataset]:
        """The family's ``label_posterior`` and, for a sampled fit (several draws with
        their log density), the posterior relabelled by :meth:`relabel` (it replaces the
        sampler's posterior before the health checks)."""
        out = super().extra_groups(dt, data, model)
        post = dt["posterior"].to_dataset()
        stats = dt["sample_stats"].to_dataset() if "sample_stats" in dt.children else None
        if post.sizes.get("draw", 1) > 1 and stats is not None and "lp" in stats:
            out["posterior"] = self.relabel(post, stats["lp"].values)
        return out


__all__ = ["RULE_MAX_ITER", "RULE_TOL", "CrowdModel", "layout_majority_vote"]
