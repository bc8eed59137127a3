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

from raterstats.defaults import resolve_ci_prob
from raterstats.health import flag_result
from raterstats.models.base import model_from_datatree


def item_posterior(dt: xr.DataTree, *, coverage: float | None = None) -> xr.Dataset:
    """Posterior probability of each true label, per item (and segment) and dimension.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of a model with latent true labels (MACE, Dawid-Skene); the fit's model
        answers (:meth:`raterstats.models.base.Model.item_posterior`).
    coverage : float, optional
        MACE-style thresholding: mark as ``confident`` the share ``coverage`` of units with
        the lowest posterior entropy in each dimension (Hovy et al. 2013); labels of the
        other units are withheld (``label_confident`` is empty for them).

    Returns
    -------
    xr.Dataset
        Dims ``item`` (unit ids of :func:`raterstats.schema.unit_id`: the item id, or
        ``"<item>::<segment>"`` for segment ratings, with ``:``, ``|`` and ``\\`` escaped
        where ids would be ambiguous; the coordinates ``unit_item`` and ``unit_segment``
        hold the ids as they are, ``""`` for whole-item units), ``dimension`` and
        ``category`` (codes, with the level text in the ``category_label`` coordinate).
        Variables: ``prob`` (P(true label = category)), ``entropy`` (nats), ``map_code``
        (-1 where the item has no rating on the dimension), ``label`` (level text of the
        most probable category), ``map_prob``, ``n_ratings``, ``gold`` (clamped gold code
        or -1) and, with ``coverage``, ``confident`` and ``label_confident``. Items not
        rated on a dimension hold NaN. ``attrs["fit_warning"]`` / ``["uncertainty_note"]``:
        the fit's health (:func:`raterstats.health.flag_result`).

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
    return flag_result(model_from_datatree(dt).item_posterior(dt, coverage=coverage), dt)


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
    # gold is keyed by the item id: whole-item units by their item, segments by unit id
    items = [str(i) for i in p["item"].values]
    if "unit_item" in p.coords:
        segs = p["unit_segment"].values.astype(str)
        raw = p["unit_item"].values.astype(str)
        items = [str(r) if not sg else i for i, r, sg in zip(items, raw, segs, strict=True)]
    codes = p["map_code"].values
    keep = np.array([i in gold_text and c >= 0 for i, c in zip(items, codes, strict=True)])
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


def rater_summary(dt: xr.DataTree, *, ci_prob: float | None = None) -> xr.Dataset:
    """Rater reliability per dimension and design with equal-tailed credible intervals.

    MACE: ``competence`` (probability of rating the true label rather than spamming) and
    the spam distribution. Dawid-Skene: the confusion matrix and ``accuracy`` (probability
    of rating the true label, averaged over the true label with the estimated prevalence).
    Each summarised quantity ``x`` gives ``x_mean``, ``x_sd``, ``x_low`` and ``x_high``;
    ``n_ratings`` counts ratings per rater x dimension x design. For point estimates
    (``method="em"`` / ``"map"``) the interval collapses to the estimate, which
    ``attrs["uncertainty_note"]`` says; ``attrs["fit_warning"]`` is set when the fit fails
    its convergence checks (:func:`raterstats.health.flag_result`). The fit's model
    answers (:meth:`raterstats.models.base.Model.rater_summary`).

    Parameters
    ----------
    dt : xr.DataTree
        A fit of a model that summarises its raters (MACE, Dawid-Skene, OrdinalRaters:
        :func:`raterstats.models.models_answering` lists them).
    ci_prob : float, optional
        Probability mass of the intervals (default: ArviZ's ``stats.ci_prob`` rcParam,
        :func:`raterstats.defaults.ci_prob`).

    Examples
    --------
    >>> from raterstats import MACE, rater_summary
    >>> from raterstats.simulate import archehr_like_study
    >>> s = archehr_like_study(n_cases=6, n_systems=5, random_seed=3)
    >>> summ = rater_summary(MACE().fit(s.ratings, method="em", random_seed=1))
    >>> summ["competence_mean"].dims
    ('rater', 'dimension', 'design')
    """
    summary = model_from_datatree(dt).rater_summary(dt, ci_prob=resolve_ci_prob(ci_prob))
    return flag_result(summary, dt)


__all__ = ["coverage_accuracy", "item_posterior", "rater_summary"]
