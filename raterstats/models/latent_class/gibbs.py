"""``fit(method="gibbs")`` of flat MACE and unpooled Dawid-Skene: a data-augmentation
(Gibbs) sampler whose sweep is one pass over the ratings.

Both models have conjugate full conditionals once the true label of every unit is
augmented (and, for MACE, whether each rating that equals the label came from knowing it):
the labels given the parameters are independent categorical draws, and the confusion rows,
competences, spam distributions and prevalences given the labels are Dirichlet and Beta
draws from counts (kernels in :mod:`~raterstats.models.latent_class.kernels_gibbs`). The
chains start at the EM estimate (jittered), so they share its labelling of the classes;
a chain that still ends up in a permuted labelling is reported by the same label-switching
check as a NUTS fit (:func:`raterstats.diagnostics.label_switching`).

The fit has the posterior variables, dims and coordinates of the NUTS fit, a
``label_posterior`` averaged over the kept draws (Rao-Blackwellised: the label
probabilities given each draw's parameters) and the per-unit ``log_likelihood`` with the
label marginalised, both computed by the sweep itself. ``sample_stats`` holds the summed
marginal log-likelihood of every draw (``marginal_loglik``); there are no divergences,
tree depths or energies: Gibbs draws are never rejected.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr
from scipy.special import expit, logit

from raterstats.checks import check_arguments, integer_problem
from raterstats.inference import assemble_datatree
from raterstats.models.latent_class.data import LatentClassData, majority_vote, majority_vote_stats
from raterstats.models.latent_class.summaries import CHAIN_GROUP

if TYPE_CHECKING:
    from raterstats.models.latent_class.base import LatentClassModel

#: thinning of the kept sweeps by default (``thin=``): see :func:`run_gibbs`
DEFAULT_THIN = 1

#: MACE: rounds of the knows / guesses augmentation on the counts per sweep (``inner=``)
DEFAULT_INNER = 5

#: SD of the jitter of each chain's start around the EM estimate (log / logit scale)
START_JITTER = 0.1


def gibbs_problem(model: LatentClassModel, data: LatentClassData) -> str | None:
    """Why ``method="gibbs"`` cannot fit this model to these data (None: it can).

    The sampler covers flat MACE and unpooled Dawid-Skene with Dirichlet priors, gold
    clamping (``use_gold=True``) and repeats included; hierarchical MACE, other poolings
    of Dawid-Skene and Dawid-Skene on dimensions with different numbers of categories need
    ``method="nuts"``.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=3, n_systems=3, random_seed=1)
    >>> m = MACE()
    >>> print(gibbs_problem(m, m.prepare(s.ratings)))  # doctest: +ELLIPSIS
    method='gibbs' fits flat MACE only: these data have 3 dimensions ...
    """
    # the two samplers, told apart by the parameters the model reports
    if "competence" in model.param_names:
        if model.is_hierarchical(data):  # type: ignore[attr-defined]
            n = len(data.dimensions) * len(data.designs)
            why = (
                f"these data have {len(data.dimensions)} dimensions x {len(data.designs)} "
                f"design(s), where MACE is hierarchical by default"
                if model.options["hierarchical"] is None and n > 1
                else "hierarchical=True"
            )
            return (
                f"method='gibbs' fits flat MACE only: {why}; pass hierarchical=False for "
                "independent Beta competences per rater x dimension x design, or use "
                "method='nuts' for hierarchical MACE"
            )
        return None
    if "confusion" in model.param_names:
        pooling = model.options["pooling"]
        if pooling != "unpooled":
            return (
                f"method='gibbs' fits unpooled Dawid-Skene only, not pooling={pooling!r} "
                "(whose confusion matrices have no conjugate full conditional); use "
                "method='nuts'"
            )
        if len({int(k) for k in data.n_categories}) > 1:
            return (
                "method='gibbs' fits Dawid-Skene on dimensions with the same number of "
                f"categories; these have {sorted({int(k) for k in data.n_categories})}: "
                "use method='nuts'"
            )
        return None
    return f"method='gibbs' is not available for {type(model).__name__}; use method='nuts'"


def _rating_arrays(data: LatentClassData) -> dict[str, np.ndarray]:
    """The ratings as the kernels read them (sorted by unit)."""
    starts = np.searchsorted(data.unit, np.arange(data.n_units + 1)).astype(np.int64)
    return {
        "unit_start": starts,
        "r_cell": np.ascontiguousarray(data.cell, dtype=np.int64),
        "r_code": np.ascontiguousarray(data.code, dtype=np.int64),
        "unit_dim": np.ascontiguousarray(data.unit_dim, dtype=np.int64),
        "unit_gold": np.ascontiguousarray(data.unit_gold, dtype=np.int64),
        "n_cat": np.ascontiguousarray(data.n_categories, dtype=np.int64),
    }


def _jitter_rows(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Probability rows (last axis) jittered on the log scale, zeros kept."""
    p = np.asarray(p, dtype=float)
    q = np.where(p > 0, np.clip(p, 1e-6, None) * np.exp(rng.normal(0, START_JITTER, p.shape)), 0)
    return np.asarray(q / q.sum(axis=-1, keepdims=True))


def _mace_start(
    model: Any, data: LatentClassData, em: dict[str, np.ndarray] | None
) -> dict[str, np.ndarray]:
    R, D = len(data.raters), len(data.dimensions)
    if em is not None:
        return {k: np.asarray(em[k], float) for k in ("competence", "spam", "prevalence")}
    st = majority_vote_stats(data)
    return {
        "competence": np.clip(st["agreement"], 0.3, 0.95).reshape(R, D, -1),
        "spam": st["label_freq"],
        "prevalence": st["prevalence"],
    }


def _ds_start(
    model: Any, data: LatentClassData, em: dict[str, np.ndarray] | None
) -> dict[str, np.ndarray]:
    if em is not None:
        return {k: np.asarray(em[k], float) for k in ("confusion", "prevalence")}
    st = majority_vote_stats(data)
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    conf = st["confusion"]
    # rows of true classes no unit has: the prior mean instead of an arbitrary row
    conc = model.confusion_conc(data, data.n_cells)
    seen = np.zeros((data.n_cells, K), dtype=bool)
    mv = majority_vote(data)[data.unit]
    np.logical_or.at(seen, data.cell, mv > 0.5)
    prior_mean = conc / conc.sum(axis=-1, keepdims=True)
    conf = np.where(seen[:, :, None], conf, prior_mean)
    return {"confusion": conf.reshape(R, D, G, K, K), "prevalence": st["prevalence"]}


def run_gibbs(
    model: LatentClassModel,
    data: LatentClassData,
    *,
    draws: int,
    tune: int,
    chains: int,
    random_seed: int,
    cores: int | None = None,
    thin: int = DEFAULT_THIN,
    inner: int = DEFAULT_INNER,
    start: dict[str, np.ndarray] | None = None,
    log_likelihood: bool = True,
) -> xr.DataTree:
    """Run the Gibbs sampler of flat MACE or unpooled Dawid-Skene
    (:meth:`~raterstats.models.latent_class.base.LatentClassModel.fit_gibbs`).

    ``chains`` chains of ``tune + draws * thin`` sweeps each, in parallel threads on
    ``cores`` cores (default: all); ``draws`` states per chain are kept, every ``thin``-th
    after the first ``tune``. Chain ``c`` starts at ``start`` (an EM estimate's
    constrained values; None: the majority vote) jittered, and draws from its own seed
    (``SeedSequence([random_seed, c])``).

    Returns a DataTree with ``posterior`` (the NUTS fit's variables, dims and
    coordinates), ``sample_stats`` (``marginal_loglik``), ``label_posterior`` and, when
    ``log_likelihood``, ``log_likelihood``.
    """
    problem = gibbs_problem(model, data)
    if problem is not None:
        raise ValueError(problem)
    check_arguments(
        integer_problem("thin", thin, minimum=1),
        integer_problem("inner", inner, minimum=1),
        where="fit(method='gibbs')",
    )
    from raterstats.models.latent_class import kernels_gibbs as kg

    arrays = _rating_arrays(data)
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    U, C = data.n_units, data.n_cells
    is_mace = "competence" in model.param_names
    init = (_mace_start if is_mace else _ds_start)(model, data, start)
    pri = model.priors
    prev_a = np.broadcast_to(np.asarray(pri["prevalence"].param("a", 1.0), float), (D, K))
    prev_conc = np.ascontiguousarray(prev_a)
    n_sweeps = tune + draws * thin
    ll_rows = draws if log_likelihood else 0
    seeds = [
        int(np.random.SeedSequence([random_seed, c]).generate_state(1)[0]) for c in range(chains)
    ]
    shapes: dict[str, tuple[int, ...]]
    if is_mace:
        shapes = {"competence": (R, D, G), "spam": (R, D, K), "prevalence": (D, K)}
        a_c, b_c = model.competence_beta()  # type: ignore[attr-defined]
        spam_conc = np.ascontiguousarray(
            np.broadcast_to(np.asarray(pri["spam"].param("a", 10.0), float), (R * D, K))
        )
    else:
        shapes = {"confusion": (R, D, G, K, K), "prevalence": (D, K)}
        conf_conc = np.ascontiguousarray(model.confusion_conc(data, C))  # type: ignore[attr-defined]
        cell_k = data.n_categories[(np.arange(C) // G) % D].astype(np.int64)
    out = {k: np.empty((chains, draws, *s)) for k, s in shapes.items()}
    out_ll = np.empty((chains, ll_rows, U))
    out_total = np.empty((chains, draws))
    prob = np.zeros((chains, U, K))

    def chain_start(c: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng([random_seed, c, 1])
        prev0 = _jitter_rows(init["prevalence"], rng)
        if is_mace:
            th = np.clip(np.asarray(init["competence"], float), 1e-4, 1 - 1e-4).reshape(-1)
            th = expit(logit(th) + rng.normal(0, START_JITTER, th.shape))
            spam = _jitter_rows(np.asarray(init["spam"]).reshape(R * D, K), rng)
            return {"theta": th, "spam": spam, "prev": prev0}
        conf = np.asarray(init["confusion"], float).reshape(C, K, K)
        return {"conf": _jitter_rows(conf, rng), "prev": prev0}

    def run_chain(c: int) -> None:
        s0 = chain_start(c)
        common = (
            arrays["unit_start"], arrays["r_cell"], arrays["r_code"], arrays["unit_dim"],
            arrays["unit_gold"], arrays["n_cat"],
        )  # fmt: skip
        if is_mace:
            kg.mace_chain(
                seeds[c], n_sweeps, tune, thin, inner, s0["theta"], s0["spam"], s0["prev"], a_c,
                b_c, spam_conc, prev_conc, G, *common, out["competence"][c].reshape(draws, C),
                out["spam"][c].reshape(draws, R * D, K), out["prevalence"][c], out_ll[c],
                out_total[c], prob[c],
            )  # fmt: skip
        else:
            kg.ds_chain(
                seeds[c], n_sweeps, tune, thin, s0["conf"], s0["prev"], conf_conc, prev_conc,
                *common, cell_k, out["confusion"][c].reshape(draws, C, K, K),
                out["prevalence"][c], out_ll[c], out_total[c], prob[c],
            )  # fmt: skip

    workers = max(1, min(chains, cores or os.cpu_count() or 1))
    t0 = time.perf_counter()
    if workers == 1:
        for c in range(chains):
            run_chain(c)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run_chain, range(chains)))
    seconds = time.perf_counter() - t0
    dims = _dims(model)
    coords = data.coords() | {"true": list(range(K)), "rated": list(range(K))}
    dt = assemble_datatree(out, dims, coords, sample_stats={"marginal_loglik": out_total})
    dt["posterior"].attrs.update(
        {
            "sampling_time": seconds,
            "sampler": "gibbs",
            "init": "em" if start is not None else "default",
            "thin": int(thin),
            "sweeps_per_chain": int(n_sweeps),
            "seconds_per_sweep": seconds * workers / max(1, chains * n_sweeps),
        }
    )
    groups = _groups(data, prob / draws, out_ll if log_likelihood else None)
    for name, ds in groups.items():
        dt[name] = xr.DataTree(ds)
    return dt


def _dims(model: LatentClassModel) -> dict[str, tuple[str, ...]]:
    if "competence" in model.param_names:
        return {
            "competence": ("rater", "dimension", "design"),
            "spam": ("rater", "dimension", "category"),
            "prevalence": ("dimension", "category"),
        }
    return {
        "confusion": ("rater", "dimension", "design", "true", "rated"),
        "prevalence": ("dimension", "category"),
    }


def _groups(
    data: LatentClassData, prob: np.ndarray, ll: np.ndarray | None
) -> dict[str, xr.Dataset]:
    """``label_posterior`` and ``log_likelihood`` as the NUTS fit stores them
    (:meth:`~raterstats.models.latent_class.base.LatentClassModel.extra_groups`,
    :meth:`~raterstats.models.latent_class.base.LatentClassModel.log_likelihood`), and
    each chain's label posterior (``prob (chain, unit, category)``), which the
    label-switching check reads instead of recomputing it from the draws."""
    coords = {"unit": np.arange(data.n_units), "category": np.arange(data.K)}
    out = {
        "label_posterior": xr.Dataset(
            {"prob": (("unit", "category"), prob.mean(axis=0))},
            coords=coords,
            attrs={"description": "P(true label = category | data), averaged over draws"},
        ),
        CHAIN_GROUP: xr.Dataset(
            {"prob": (("chain", "unit", "category"), prob)},
            coords={"chain": np.arange(prob.shape[0]), **coords},
            attrs={"description": "label_posterior of each chain (its kept draws)"},
        ),
    }
    if ll is not None:
        const = data.data_groups()["constant_data"].coords
        out["log_likelihood"] = xr.Dataset(
            {"ratings": (("chain", "draw", "unit"), ll)},
            coords={
                "chain": np.arange(ll.shape[0]),
                "draw": np.arange(ll.shape[1]),
                "unit": const["unit"].values,
                "item": ("unit", const["item"].values),
                "unit_dimension": ("unit", const["unit_dimension"].values),
            },
        )
    return out


__all__ = ["DEFAULT_INNER", "DEFAULT_THIN", "START_JITTER", "gibbs_problem", "run_gibbs"]
