"""Results of a fit as labelled xarray objects: item label posteriors, rater summaries, the
coverage / accuracy curve of entropy-thresholded labels.

Every function takes the ``xr.DataTree`` returned by a model's ``fit`` (or reloaded with
``xr.open_datatree``) and computes nothing that the tree does not hold, so a saved fit gives
the same results as a fresh one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from raterstats.models.base import model_from_datatree
from raterstats.models.latent_class import (
    UNIT_SEP,
    LatentClassModel,
    data_from_groups,
    entropy_np,
)


def _latent_model(dt: xr.DataTree) -> LatentClassModel:
    model = model_from_datatree(dt)
    if not isinstance(model, LatentClassModel):
        raise TypeError(
            f"{dt.attrs.get('model')!r} fits have no latent true labels; item posteriors "
            "come from MACE or DawidSkene fits"
        )
    return model


def _unit_prob(dt: xr.DataTree) -> np.ndarray:
    if "label_posterior" in dt.children:
        return np.asarray(dt["label_posterior"]["prob"].values)
    model = _latent_model(dt)
    data = data_from_groups(dt["constant_data"].to_dataset(), dt["observed_data"].to_dataset())
    prob, _ = model.draws_summary(dt["posterior"].to_dataset(), data, loglik=False)
    return prob[data.unit_pattern]


def item_posterior(dt: xr.DataTree, *, coverage: float | None = None) -> xr.Dataset:
    """Posterior probability of each true label, per item (and segment) and dimension.

    Parameters
    ----------
    dt : xr.DataTree
        A MACE or Dawid-Skene fit.
    coverage : float, optional
        MACE-style thresholding: mark as ``confident`` the share ``coverage`` of units with
        the lowest posterior entropy in each dimension (Hovy et al. 2013); labels of the
        other units are withheld (``label_confident`` is empty for them).

    Returns
    -------
    xr.Dataset
        Dims ``item`` (item ids; ``"<item>::<segment>"`` for segment ratings),
        ``dimension`` and ``category`` (codes, with the level text in the
        ``category_label`` coordinate). Variables: ``prob`` (P(true label = category)),
        ``entropy`` (nats), ``map_code`` (-1 where the item has no rating on the
        dimension), ``label`` (level text of the most probable category), ``map_prob``,
        ``n_ratings``, ``gold`` (clamped gold code or -1) and, with ``coverage``,
        ``confident`` and ``label_confident``. Items not rated on a dimension hold NaN.

    Examples
    --------
    >>> from raterstats import MACE, item_posterior
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> dt = MACE().fit(s.ratings, method="em", random_seed=1)
    >>> post = item_posterior(dt)
    >>> post["prob"].dims
    ('item', 'dimension', 'category')
    >>> bool(abs(post["prob"].sum("category") - 1).max() < 1e-9)
    True
    """
    const = dt["constant_data"].to_dataset()
    prob_u = _unit_prob(dt)
    items = const["item"].values.astype(str)
    segs = const["segment"].values.astype(str)
    keys = np.where(segs == "", items, np.char.add(np.char.add(items, UNIT_SEP), segs))
    dims = const["dimension"].values.astype(str)
    unit_dim = const["unit_dim"].values.astype(np.int64)
    n_cat = const["n_categories"].values.astype(np.int64)
    labels = const["category_label"].values.astype(str)
    uniq, item_idx = np.unique(keys, return_inverse=True)
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
    gold[item_idx, unit_dim] = const["unit_gold"].values.astype(np.int64)
    ds = xr.Dataset(
        {
            "prob": (("item", "dimension", "category"), prob),
            "entropy": (("item", "dimension"), ent),
            "map_code": (("item", "dimension"), map_code),
            "label": (("item", "dimension"), label.astype(str)),
            "map_prob": (("item", "dimension"), map_prob),
            "n_ratings": (("item", "dimension"), n_ratings),
            "gold": (("item", "dimension"), gold),
        },
        coords={
            "item": uniq,
            "dimension": dims,
            "category": np.arange(K),
            "category_label": (("dimension", "category"), labels),
            "n_categories": ("dimension", n_cat),
        },
        attrs={"model": dt.attrs.get("model", ""), "method": dt.attrs.get("method", "")},
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


def coverage_accuracy(
    dt: xr.DataTree,
    gold: Any,
    *,
    coverages: Any = None,
    dimension: str | None = None,
) -> xr.Dataset:
    """Accuracy of entropy-thresholded labels against gold labels, by coverage (the MACE
    coverage / accuracy curve).

    Parameters
    ----------
    dt : xr.DataTree
        A MACE or Dawid-Skene fit.
    gold : mapping or xr.DataArray
        Gold level text per item id (``{item: level}``), for one dimension.
    coverages : sequence of float, optional
        Shares of items (lowest entropy first) to keep; default 0.05, 0.10, ..., 1.
    dimension : str, optional
        The dimension (required when the fit has several).

    Returns
    -------
    xr.Dataset
        ``accuracy``, ``n_items`` and ``entropy_threshold`` along ``coverage``.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> r = s.ratings.filter(dimension="answers_question")
    >>> dt = MACE().fit(r, method="em", random_seed=1)
    >>> levels = r.scale_for("answers_question").levels
    >>> truth = s.truth["true_label"].sel(dimension="answers_question")
    >>> gold = {i: levels[int(k)] for i, k in zip(truth["item"].values, truth.values)}
    >>> curve = coverage_accuracy(dt, gold, coverages=[0.5, 1.0])
    >>> bool(curve["accuracy"].sel(coverage=0.5) >= curve["accuracy"].sel(coverage=1.0))
    True
    """
    post = item_posterior(dt)
    dims = list(post["dimension"].values)
    if dimension is None:
        if len(dims) != 1:
            raise ValueError(f"the fit has dimensions {dims}; pass dimension=")
        dimension = dims[0]
    p = post.sel(dimension=dimension)
    if isinstance(gold, xr.DataArray):
        gold = dict(zip(gold[gold.dims[0]].values.tolist(), gold.values.tolist(), strict=True))
    gold_text = {str(k): str(v) for k, v in dict(gold).items()}
    from raterstats.scales import format_level

    gold_text = {k: format_level(float(v)) if _is_num(v) else v for k, v in gold_text.items()}
    items = [str(i) for i in p["item"].values]
    keep = np.array([i in gold_text and p["map_code"].sel(item=i).item() >= 0 for i in items])
    if not keep.any():
        raise ValueError("no item of the fit has a gold label")
    ent = p["entropy"].values[keep]
    lab = p["label"].values[keep].astype(str)
    g = np.array([gold_text[i] for i, k in zip(items, keep, strict=True) if k])
    correct = lab == g
    order = np.argsort(ent, kind="stable")
    cov = np.asarray(
        coverages if coverages is not None else np.round(np.arange(0.05, 1.0001, 0.05), 2), float
    )
    acc, n, thr = [], [], []
    for c in cov:
        m = max(1, int(np.ceil(c * order.size)))
        sel = order[:m]
        acc.append(float(correct[sel].mean()))
        n.append(m)
        thr.append(float(ent[sel].max()))
    return xr.Dataset(
        {
            "accuracy": ("coverage", np.array(acc)),
            "n_items": ("coverage", np.array(n)),
            "entropy_threshold": ("coverage", np.array(thr)),
        },
        coords={"coverage": cov},
        attrs={"dimension": dimension},
    )


def _is_num(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def _summ(da: xr.DataArray, ci_prob: float) -> dict[str, xr.DataArray]:
    lo, hi = (1 - ci_prob) / 2, 1 - (1 - ci_prob) / 2
    q = da.quantile([lo, hi], dim=("chain", "draw"))
    return {
        "mean": da.mean(("chain", "draw")),
        "sd": da.std(("chain", "draw")),
        "low": q.isel(quantile=0, drop=True),
        "high": q.isel(quantile=1, drop=True),
    }


def rater_summary(dt: xr.DataTree, *, ci_prob: float = 0.9) -> xr.Dataset:
    """Rater reliability per dimension and design with equal-tailed credible intervals.

    MACE: ``competence`` (probability of rating the true label rather than spamming) and
    the spam distribution. Dawid-Skene: the confusion matrix and ``accuracy`` (probability
    of rating the true label, averaged over the true label with the estimated prevalence).
    Each summarised quantity ``x`` gives ``x_mean``, ``x_sd``, ``x_low`` and ``x_high``;
    ``n_ratings`` counts ratings per rater x dimension x design. For point estimates
    (``method="em"`` / ``"map"``) the interval collapses to the estimate.

    Parameters
    ----------
    dt : xr.DataTree
        A MACE or Dawid-Skene fit.
    ci_prob : float
        Probability mass of the intervals (default 0.9).

    Examples
    --------
    >>> from raterstats import MACE, rater_summary
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> summ = rater_summary(MACE().fit(s.ratings, method="em", random_seed=1))
    >>> summ["competence_mean"].dims
    ('rater', 'dimension', 'design')
    """
    if not 0 < ci_prob < 1:
        raise ValueError("ci_prob must be in (0, 1)")
    post = dt["posterior"].to_dataset()
    const = dt["constant_data"].to_dataset()
    name = dt.attrs.get("model")
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
    quantities: dict[str, xr.DataArray] = {}
    if name == "mace":
        quantities["competence"] = post["competence"]
        quantities["spam"] = post["spam"]
        if "competence_cell_mean" in post:
            from scipy.special import expit

            quantities["typical_competence"] = xr.apply_ufunc(expit, post["competence_cell_mean"])
        if "design_effect" in post and "competence_cell_mean" in post:
            beta = post["competence_cell_mean"]
            first = beta.isel(design=0, drop=True)
            quantities["design_contrast"] = beta - first
    elif name == "dawid_skene":
        conf = post["confusion"]
        quantities["confusion"] = conf
        prev = post["prevalence"].rename(category="true")
        diag = xr.DataArray(
            np.diagonal(conf.values, axis1=-2, axis2=-1),
            dims=(*conf.dims[:-2], "true"),
            coords={k: v for k, v in conf.coords.items() if k != "rated"},
        )
        quantities["accuracy"] = (diag * prev).sum("true")
    else:
        raise TypeError(f"rater_summary needs a MACE or DawidSkene fit, not {name!r}")
    for qn, da in quantities.items():
        for stat, val in _summ(da, ci_prob).items():
            out[f"{qn}_{stat}"] = val
    out.attrs.update({"ci_prob": ci_prob, "model": name, "method": dt.attrs.get("method", "")})
    return out


__all__ = ["coverage_accuracy", "item_posterior", "rater_summary"]
