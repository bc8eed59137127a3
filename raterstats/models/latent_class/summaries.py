"""The post-fit answers of the latent-class models, from a fit's DataTree alone: label
posteriors per item, rater summaries and system scores from the label posteriors.

:class:`~raterstats.models.latent_class.base.LatentClassModel` answers
``item_posterior``, ``rater_summary`` and ``system_score_draws`` (the registry's post-fit
questions) with these functions; ``raterstats.item_posterior`` / ``rater_summary`` /
``rank_systems`` dispatch to it. Each computes nothing the tree does not hold, so a saved
fit gives the same results as a fresh one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.intervals import summarize_draws
from raterstats.models.latent_class.data import LatentClassData, data_from_groups
from raterstats.models.latent_class.reference import entropy_np, logsumexp_np
from raterstats.scoring import as_draws, describe_bootstrap, score_vector, system_means

if TYPE_CHECKING:
    from raterstats.models.latent_class.base import LatentClassModel

#: how the label of an item is scored by :func:`system_score_draws`
LABEL_SCORES = ("sample", "expected", "map")


def fit_data(dt: xr.DataTree) -> LatentClassData:
    """The data layout of a fit, rebuilt from its ``constant_data`` and
    ``observed_data``."""
    return data_from_groups(dt["constant_data"].to_dataset(), dt["observed_data"].to_dataset())


def unit_label_prob(model: LatentClassModel, dt: xr.DataTree) -> np.ndarray:
    """``(n_units, K)`` label posterior of every unit averaged over the draws: the stored
    ``label_posterior`` group, or recomputed from the posterior draws."""
    if "label_posterior" in dt.children:
        return np.asarray(dt["label_posterior"]["prob"].values)
    data = fit_data(dt)
    prob, _ = model.draws_summary(dt["posterior"].to_dataset(), data, loglik=False)
    return prob[data.unit_pattern]


def item_posterior(
    model: LatentClassModel, dt: xr.DataTree, *, coverage: float | None
) -> xr.Dataset:
    """Posterior probability of each true label per item (and segment) and dimension, for
    :func:`raterstats.item_posterior` (see there for the result's variables)."""
    const = dt["constant_data"].to_dataset()
    prob_u = unit_label_prob(model, dt)
    # one row per (item, segment) pair, labelled by its unit id; never grouped by the id
    pairs = pl.DataFrame(
        {"item": const["item"].values.astype(str), "segment": const["segment"].values.astype(str)}
    ).with_row_index("_u")
    seg = pl.when(pl.col("segment") == "").then(None).otherwise(pl.col("segment"))
    uniq_pairs = (
        pairs.select("item", "segment")
        .unique()
        .with_columns(S.unit_id_expr("item", seg))
        .sort("unit")
        .with_row_index("_i")
    )
    item_idx = (
        pairs.join(uniq_pairs, on=["item", "segment"], how="left")
        .sort("_u")
        .get_column("_i")
        .to_numpy()
        .astype(np.int64)
    )
    uniq = uniq_pairs.get_column("unit").to_numpy().astype(str)
    dims = const["dimension"].values.astype(str)
    unit_dim = const["unit_dim"].values.astype(np.int64)
    n_cat = const["n_categories"].values.astype(np.int64)
    labels = const["category_label"].values.astype(str)
    n_i, n_d, K = uniq.size, dims.size, prob_u.shape[1]
    prob = np.full((n_i, n_d, K), np.nan)
    prob[item_idx, unit_dim] = prob_u
    present = np.zeros((n_i, n_d), dtype=bool)
    present[item_idx, unit_dim] = True
    ent = np.full((n_i, n_d), np.nan)
    ent[present] = entropy_np(prob[present])
    map_code = np.full((n_i, n_d), -1, dtype=np.int64)
    map_code[present] = np.argmax(prob[present], axis=-1)
    picked = np.take_along_axis(np.nan_to_num(prob), np.maximum(map_code, 0)[..., None], axis=-1)
    map_prob = np.where(present, picked[..., 0], np.nan)
    label = np.full((n_i, n_d), "", dtype=object)
    for d in range(n_d):
        ok = present[:, d]
        label[ok, d] = labels[d][map_code[ok, d]]
    obs_unit = const["obs_unit"].values.astype(np.int64)
    n_rat_u = np.bincount(obs_unit, minlength=prob_u.shape[0])
    n_ratings = np.zeros((n_i, n_d), dtype=np.int64)
    n_ratings[item_idx, unit_dim] = n_rat_u
    gold = np.full((n_i, n_d), -1, dtype=np.int64)
    # the gold labels of the ratings, clamped or not (fits saved before they were stored
    # whatever use_gold: the clamped ones only)
    gold_var = "gold" if "gold" in const else "unit_gold"
    gold[item_idx, unit_dim] = const[gold_var].values.astype(np.int64)
    code = np.asarray(dt["observed_data"]["rating"].to_numpy(), dtype=np.int64)
    votes_u = np.bincount(obs_unit * K + code, minlength=prob_u.shape[0] * K)
    votes = np.zeros((n_i, n_d, K), dtype=np.int64)
    votes[item_idx, unit_dim] = votes_u.reshape(-1, K)
    ds = xr.Dataset(
        {
            "prob": (("item", "dimension", "category"), prob),
            "entropy": (("item", "dimension"), ent),
            "map_code": (("item", "dimension"), map_code),
            "label": (("item", "dimension"), label.astype(str)),
            "map_prob": (("item", "dimension"), map_prob),
            "n_ratings": (("item", "dimension"), n_ratings),
            "gold": (("item", "dimension"), gold),
            "votes": (("item", "dimension", "category"), votes),
        },
        coords={
            "item": uniq,
            "unit_item": ("item", uniq_pairs.get_column("item").to_numpy().astype(str)),
            "unit_segment": ("item", uniq_pairs.get_column("segment").to_numpy().astype(str)),
            "dimension": dims,
            "category": np.arange(K),
            "category_label": (("dimension", "category"), labels),
            "n_categories": ("dimension", n_cat),
        },
        attrs={
            "model": dt.attrs.get("model", ""),
            "method": dt.attrs.get("method", ""),
            "gold_used": int(const.attrs.get("gold_used", 0)),
            # whether ``gold`` holds the ratings' gold labels (0: the ratings had no gold
            # column, or an old fit that kept unclamped gold out)
            "gold_stored": int(gold_var == "gold" or bool(const.attrs.get("gold_used", 0))),
        },
    )
    if coverage is not None:
        if not 0 < coverage <= 1:
            raise ValueError("coverage must be in (0, 1]")
        conf = np.zeros((n_i, n_d), dtype=bool)
        for d in range(n_d):
            idx = np.flatnonzero(present[:, d])
            n_keep = int(np.ceil(coverage * idx.size))
            order = idx[np.argsort(ent[idx, d], kind="stable")]
            conf[order[:n_keep], d] = True
        ds["confident"] = (("item", "dimension"), conf)
        ds["label_confident"] = (("item", "dimension"), np.where(conf, label, "").astype(str))
        ds.attrs["coverage"] = float(coverage)
    return ds


def rater_summary(model: LatentClassModel, dt: xr.DataTree, *, ci_prob: float) -> xr.Dataset:
    """Rater summaries of a fit, for :func:`raterstats.rater_summary`: ``n_ratings`` per
    rater x dimension x design, and each of the model's
    :meth:`~raterstats.models.latent_class.base.LatentClassModel.rater_quantities` ``x``
    as ``x_mean``, ``x_sd``, ``x_low`` and ``x_high`` (equal-tailed ``ci_prob``
    intervals over the draws, :func:`raterstats.intervals.summarize_draws`).

    ``cell_rated`` (dimension x design) is False in the cells that no rating falls in (a
    table of schemes with different label sets, :func:`raterstats.design.combine_schemes`,
    leaves the cells of a label space in the other schemes' designs empty): every quantity
    with a dimension and a design is NaN there (its posterior is the prior's), and
    ``design_contrast`` also where the dimension's first design has no ratings; the attr
    ``prior_only_cells`` names them in words (empty when there are none)."""
    post = dt["posterior"].to_dataset()
    const = dt["constant_data"].to_dataset()
    out = xr.Dataset()
    R, D, G = const.sizes["rater"], const.sizes["dimension"], const.sizes["design"]
    cells = (
        const["obs_rater"].values.astype(np.int64) * D + const["obs_dimension"].values
    ) * G + const["obs_design"].values
    n = np.bincount(cells.astype(np.int64), minlength=R * D * G).reshape(R, D, G)
    out["n_ratings"] = xr.DataArray(
        n,
        dims=("rater", "dimension", "design"),
        coords={k: const[k].values for k in ("rater", "dimension", "design")},
    )
    # (dimension, design) cells that no rating falls in (a table of schemes with different
    # label sets, raterstats.design.combine_schemes): their parameters are prior only
    rated = out["n_ratings"].sum("rater") > 0
    out["cell_rated"] = rated
    first = rated.isel(design=0, drop=True)
    for qn, da in model.rater_quantities(post).items():
        for stat, val in summarize_draws(da, ci_prob).items():
            if "dimension" in val.dims and "design" in val.dims:
                # a contrast against the first design needs that cell rated too
                val = val.where(rated & first if qn == "design_contrast" else rated)
            out[f"{qn}_{stat}"] = val
    empty = [
        f"{d} x {g}"
        for d in rated["dimension"].values
        for g in rated["design"].values
        if not rated.sel(dimension=d, design=g)
    ]
    out.attrs.update(
        {
            "ci_prob": ci_prob,
            "model": model.name,
            "method": dt.attrs.get("method", ""),
            "prior_only_cells": (
                "no rating falls in the (dimension, design) cells "
                + "; ".join(empty)
                + ": their parameters are prior only and are left out (NaN)"
                if empty
                else ""
            ),
        }
    )
    return out


def label_prob_draws(
    model: LatentClassModel,
    dt: xr.DataTree,
    data: LatentClassData,
    *,
    max_draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Per-draw label posteriors ``(S, n_units, K)`` of at most ``max_draws`` posterior
    draws chosen at random (in their order)."""
    params = model.params_from_posterior(dt["posterior"].to_dataset())
    n = next(iter(params.values())).shape[0]
    keep = np.sort(rng.choice(n, size=min(n, max_draws), replace=False))
    params = {k: v[keep] for k, v in params.items()}
    joint = model.pattern_log_joint(params, data)
    prob = np.exp(joint - logsumexp_np(joint, axis=-1)[..., None])
    return np.nan_to_num(np.take(prob, data.unit_pattern, axis=1))


def unit_system_table(data: LatentClassData, what: str) -> pl.DataFrame:
    """item -> system and case (question; the item itself when the fitted ratings had no
    question for every item), one row per item, sorted by item, from what the fit stored
    (:func:`raterstats.scoring.item_system_table` for a fit)."""
    if data.unit_system is None or data.unit_question is None:
        raise ValueError(
            f"{what}: this fit does not store which system produced each item (it was saved "
            "by a raterstats version before the fit stored it): fit the ratings again"
        )
    systems = np.asarray(data.unit_system, dtype=str)
    if (systems == "").all():
        raise ValueError(
            f"{what}: the fitted ratings had no 'system' column; fit ratings that name the "
            "system of each item"
        )
    if (systems == "").any():
        raise ValueError(f"{what}: the ratings need a 'system' column without missing values")
    t = (
        pl.DataFrame(
            {
                S.ITEM: list(data.unit_item),
                S.SYSTEM: list(data.unit_system),
                S.QUESTION: list(data.unit_question),
            }
        )
        .unique()
        .sort(S.ITEM)
    )
    if t[S.ITEM].n_unique() != t.height:
        raise ValueError(f"{what}: system / question must be constant within an item")
    if (t[S.QUESTION] == "").any():
        t = t.with_columns(pl.col(S.ITEM).alias(S.QUESTION))
    return t


def system_score_draws(
    model: LatentClassModel,
    dt: xr.DataTree,
    *,
    score_map: Any,
    labels: str,
    n_boot: int,
    max_draws: int,
    rng: np.random.Generator,
) -> xr.DataArray:
    """Draws of each system's mean item score, dims ``(chain, draw, dimension, system)``,
    for :func:`raterstats.rank_systems` (see there for ``score_map``, ``labels``,
    ``n_boot`` and ``max_draws``): an item's score is that of its true label (sampled
    from its posterior, expected, or the most probable), mapped through ``score_map``."""
    what = "rank_systems"
    if labels not in LABEL_SCORES:
        raise ValueError(f"{what}: labels must be 'sample', 'expected' or 'map', not {labels!r}")
    data = fit_data(dt)
    table = unit_system_table(data, what)
    prob = label_prob_draws(model, dt, data, max_draws=max_draws, rng=rng)
    seg = np.asarray(data.unit_segment)
    if (seg != "").any():
        raise ValueError(
            f"{what}: the fit has segment-level units; rank systems from whole-item ratings "
            "(aggregate segments first)"
        )
    items = sorted(set(data.unit_item))
    pos = {it: k for k, it in enumerate(items)}
    unit_item = np.asarray([pos[i] for i in data.unit_item])
    n_rep = n_boot if n_boot else prob.shape[0]
    rows = np.arange(n_rep) % prob.shape[0]
    out = []
    systems: list[str] = []
    schemes: dict[str, str] = {}
    redrawn = 0
    for d, dim in enumerate(data.dimensions):
        levels = data.categories[d]
        sv = score_vector(dim, levels, score_map, what)
        sel = np.flatnonzero(data.unit_dim == d)
        p = prob[:, sel, : len(levels)]
        lost = ~np.isclose(p.sum(axis=-1), 1.0, atol=1e-6).all(axis=0)  # NaN posteriors
        if lost.any():
            gone = sorted({data.unit_item[u] for u in sel[lost]})
            raise ValueError(
                f"{what}: the fit gives no label posterior (NaN) on dimension {dim!r} for "
                f"items {gone[:5]}{' ...' if len(gone) > 5 else ''}; their scores are "
                "undefined and would be ranked as numbers: check the fit (diagnose)"
            )
        if labels == "sample":
            u = rng.random((n_rep, sel.size, 1))
            code = np.minimum((u > np.cumsum(p[rows], axis=-1)).sum(-1), len(levels) - 1)
            val = sv[code]
        elif labels == "map":
            val = sv[np.argmax(p, axis=-1)]
        else:
            val = p @ sv
        item_scores = np.full((val.shape[0], len(items)), np.nan)
        item_scores[:, unit_item[sel]] = val
        res = system_means(
            item_scores, table, items, n_boot=n_boot, rng=rng, what=f"{what} ({dim})"
        )
        out.append(res.scores)
        systems, schemes[dim], redrawn = res.systems, res.bootstrap, redrawn + res.redrawn
    draws = as_draws(np.stack(out, axis=1), systems, {"dimension": list(data.dimensions)})
    draws.attrs["source"] = f"{model.name} ({dt.attrs.get('method', '')} fit)"
    draws.attrs.update(bootstrap=describe_bootstrap(schemes), bootstrap_redrawn=redrawn)
    return draws


#: group of a Gibbs fit with each chain's label posterior ``prob (chain, unit, category)``
CHAIN_GROUP = "chain_label_posterior"


def chain_label_prob(
    model: LatentClassModel, dt: xr.DataTree, data: LatentClassData
) -> list[np.ndarray]:
    """Each chain's label posterior ``(n_units, K)``, averaged over that chain's draws
    (a Gibbs fit stores them, :data:`CHAIN_GROUP`; otherwise computed from the draws)."""
    post = dt["posterior"].to_dataset()
    if CHAIN_GROUP in dt.children:
        by_chain = np.asarray(dt[CHAIN_GROUP].to_dataset()["prob"].values)
        return [by_chain[c] for c in range(by_chain.shape[0])]
    out = []
    for c in range(post.sizes["chain"]):
        prob, _ = model.draws_summary(post.isel(chain=[c]), data, loglik=False)
        out.append(prob[data.unit_pattern])
    return out


def switching_lines(
    data: LatentClassData, labels: list[np.ndarray], *, threshold: float = 0.5
) -> list[str]:
    """Chains whose most probable labels (``labels``, one ``(n_units,)`` array per chain)
    are a permutation of chain 0's, per dimension, in words (see
    :func:`raterstats.diagnostics.label_switching`)."""
    from scipy.optimize import linear_sum_assignment  # 0.3 s to import: only when checked

    out = []
    for d, dname in enumerate(data.dimensions):
        k = int(data.n_categories[d])
        sel = data.unit_dim == d
        base = labels[0][sel]
        for c in range(1, len(labels)):
            other = labels[c][sel]
            conf = np.zeros((k, k))
            np.add.at(conf, (other, base), 1)
            row, col = linear_sum_assignment(-conf)
            perm = dict(zip(row.tolist(), col.tolist(), strict=True))
            gain = (conf[row, col].sum() - np.trace(conf)) / max(1, sel.sum())
            if any(a != b for a, b in perm.items()) and gain >= threshold:
                pairs = ", ".join(
                    f"{data.categories[d][a]}->{data.categories[d][b]}"
                    for a, b in perm.items()
                    if a != b
                )
                out.append(
                    f"chain {c} converged to a permuted labelling of dimension {dname!r} "
                    f"(relative to chain 0: {pairs}; agreement {np.trace(conf) / sel.sum():.2f} "
                    f"as labelled, {conf[row, col].sum() / sel.sum():.2f} after permuting)"
                )
    return out


def label_switching(
    model: LatentClassModel, dt: xr.DataTree, *, threshold: float = 0.5
) -> list[str]:
    """Chains whose label posterior is a permutation of chain 0's, per dimension, in words
    (see :func:`raterstats.diagnostics.label_switching`)."""
    post = dt["posterior"].to_dataset()
    if post.sizes["chain"] < 2:
        return []
    data = fit_data(dt)
    labels = [np.argmax(p, axis=-1) for p in chain_label_prob(model, dt, data)]
    return switching_lines(data, labels, threshold=threshold)


__all__ = [
    "CHAIN_GROUP",
    "LABEL_SCORES",
    "chain_label_prob",
    "fit_data",
    "item_posterior",
    "label_prob_draws",
    "label_switching",
    "rater_summary",
    "switching_lines",
    "system_score_draws",
    "unit_label_prob",
    "unit_system_table",
]
