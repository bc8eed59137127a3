"""Results of a fit as labelled xarray objects: item label posteriors, rater summaries, the
coverage / accuracy curve of entropy-thresholded labels, the item labels beside the
majority vote (:func:`item_labels`) and the check of the labels against gold
(:func:`gold_check`).

Every function takes the ``xr.DataTree`` returned by a model's ``fit`` (or reloaded with
``xr.open_datatree``) and computes nothing that the tree does not hold, so a saved fit gives
the same results as a fresh one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from raterstats.defaults import resolve_ci_prob
from raterstats.health import flag_result
from raterstats.models.base import model_from_datatree

if TYPE_CHECKING:
    import polars as pl


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
        most probable category), ``map_prob``, ``n_ratings``, ``votes`` (ratings per
        category), ``gold`` (the gold code of the ratings, or -1; it clamped the label
        only when ``attrs["gold_used"]`` is 1; ``attrs["gold_stored"]`` is 0 when the fit
        does not know the ratings' gold labels) and, with ``coverage``, ``confident`` and
        ``label_confident``. Items not rated on a dimension hold NaN.
        ``attrs["fit_warning"]`` / ``["uncertainty_note"]``: the fit's health
        (:func:`raterstats.health.flag_result`).

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
        ``accuracy``, ``n_items`` and ``entropy_threshold`` along ``coverage``; the fit's
        health in ``attrs["fit_warning"]`` / ``["uncertainty_note"]`` (as
        :func:`item_posterior`'s).

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
    out = xr.Dataset(
        {
            "accuracy": ("coverage", np.array(acc)),
            "n_items": ("coverage", np.array(n)),
            "entropy_threshold": ("coverage", np.array(thr)),
        },
        coords={"coverage": cov},
        attrs={"dimension": dimension},
    )
    for key in ("fit_warning", "uncertainty_note"):  # the fit's health, as item_posterior's
        if key in post.attrs:
            out.attrs[key] = post.attrs[key]
    return out


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


# ---------------------------------------------------------------------- labels and gold

#: coverages of :func:`gold_check`'s coverage / accuracy curve
GOLD_COVERAGES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: the smallest probability of a gold label in :func:`gold_check`'s log loss (a point
#: estimate may put probability 0 on it: -log p is then bounded by -log of this)
LOG_LOSS_FLOOR = 1e-12
#: what separates the tied labels in :func:`item_labels`' ``majority_labels``
TIE_SEPARATOR = " | "


def _labelled_posterior(dt: xr.DataTree, what: str) -> xr.Dataset:
    """:func:`item_posterior` of a fit, or a ``TypeError`` that says which models have
    labels."""
    try:
        return item_posterior(dt)
    except TypeError as err:
        raise TypeError(f"{what}: {err}") from None


def _gold_codes(post: xr.Dataset, ratings: Any, what: str) -> tuple[np.ndarray, str]:
    """``(item, dimension)`` gold codes (-1: none) for an :func:`item_posterior` result, and
    where they come from: the fit when it keeps them, else the ``gold`` column of
    ``ratings``."""
    if post.attrs.get("gold_stored", 0) or ratings is None:
        return post["gold"].values.astype(np.int64), "fit" if post.attrs.get("gold_stored") else ""
    import polars as pl

    from raterstats import schema as S
    from raterstats.ratings import Ratings

    if not isinstance(ratings, Ratings):
        raise TypeError(
            f"{what}: ratings must be a raterstats.Ratings, not {type(ratings).__name__}"
        )
    gold = np.full(post["gold"].shape, -1, dtype=np.int64)
    if S.GOLD not in ratings.data.columns:
        return gold, ""
    rows = (
        ratings.data.filter(pl.col(S.GOLD).is_not_null())
        .select(
            pl.col(S.ITEM).cast(pl.String),
            pl.col(S.SEGMENT).fill_null("").cast(pl.String),
            pl.col(S.DIMENSION).cast(pl.String),
            pl.col(S.GOLD).cast(pl.String),
        )
        .unique()
        .sort(S.ITEM, S.SEGMENT, S.DIMENSION, S.GOLD)
    )
    index = {
        (str(i), str(g)): k
        for k, (i, g) in enumerate(
            zip(post["unit_item"].values, post["unit_segment"].values, strict=True)
        )
    }
    dims = {str(d): k for k, d in enumerate(post["dimension"].values)}
    labels = post["category_label"].values.astype(str)
    n_cat = post["n_categories"].values.astype(np.int64)
    problems: list[str] = []
    for item, seg, dim, value in rows.iter_rows():
        where = f"item {item!r}" + (f", segment {seg!r}" if seg else "") + f", dimension {dim!r}"
        i, d = index.get((item, seg)), dims.get(dim)
        if i is None or d is None or post["map_code"].values[i, d] < 0:
            problems.append(f"{where}: has a gold label but is not a unit of the fit")
            continue
        lookup = {c: k for k, c in enumerate(labels[d, : n_cat[d]])}
        if value not in lookup:
            problems.append(f"{where}: gold {value!r} is not a category of the fit")
        elif gold[i, d] >= 0 and gold[i, d] != lookup[value]:
            problems.append(f"{where}: several gold labels; give it one gold label")
        else:
            gold[i, d] = lookup[value]
    if problems:
        more = [f"... {len(problems) - 10} more"] if len(problems) > 10 else []
        raise ValueError(
            f"{what}: the ratings' gold labels do not match the fit (were they fitted from "
            "other ratings?): " + "; ".join(problems[:10] + more)
        )
    return gold, "ratings"


def _majority(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(..., K)`` vote counts -> True where a category has the most votes, and the
    number of such categories (0 where there is no vote)."""
    top = votes.max(axis=-1, keepdims=True)
    best = (votes == top) & (votes > 0)
    return best, best.sum(axis=-1)


def item_labels(dt: xr.DataTree, ratings: Any = None) -> pl.DataFrame:
    """The label a fit gives each item (per segment and dimension), beside the majority
    vote and the gold label.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of a model with latent true labels (MACE, Dawid-Skene; by NUTS, EM, MAP or
        ADVI), fresh or reloaded.
    ratings : Ratings, optional
        The ratings the fit was made from. Only needed for gold labels that the fit does
        not keep (a fit of ratings without a ``gold`` column, or saved by an older
        version); a fit keeps the gold labels of its ratings whether or not they clamped
        the labels.

    Returns
    -------
    polars.DataFrame
        One row per unit of the fit (an item, or an item's segment, on one dimension; units
        without ratings have no row), sorted as :func:`item_posterior`'s items, with the
        user's ids: ``unit`` (the unit id of :func:`raterstats.schema.unit_id`), ``item``,
        ``segment`` (``""`` for whole-item units), ``dimension``, ``label`` (the most
        probable category's level text), ``probability`` (its posterior probability, the
        mean over draws for NUTS / ADVI), ``entropy`` (of the label posterior, nats),
        ``majority_vote`` (the category with the most ratings; null when several tie),
        ``majority_tie`` (whether several tie), ``majority_labels`` (the categories with
        the most ratings, joined by :data:`TIE_SEPARATOR`), ``agrees_with_majority``
        (the label is one of them), ``n_ratings`` and, when there are gold labels,
        ``gold`` (null where none) and ``gold_match`` (null where no gold).

    Raises
    ------
    TypeError
        For a fit of a model without item labels (the ordinal rater model, the
        length-effect regression): the message names the models that have them.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import MACE, NominalScale, read_ratings
    >>> from raterstats.posterior import item_labels
    >>> frame = pl.DataFrame({"item": [f"q{i}" for i in range(4) for _ in "abc"],
    ...                       "rater": list("abc") * 4,
    ...                       "rating": "yes yes no no no yes yes yes yes no no no".split()})
    >>> dt = MACE().fit(read_ratings(frame, scale=NominalScale(["yes", "no"])),
    ...                 method="em", random_seed=1)
    >>> item_labels(dt).select("item", "label", "majority_vote", "n_ratings").rows()
    [('q0', 'yes', 'yes', 3), ('q1', 'no', 'no', 3), ('q2', 'yes', 'yes', 3), ('q3', 'no', 'no', 3)]
    """
    import polars as pl

    post = _labelled_posterior(dt, "item_labels")
    gold, source = _gold_codes(post, ratings, "item_labels")
    present = post["map_code"].values >= 0
    ii, dd = np.nonzero(present)
    labels = post["category_label"].values.astype(str)
    best, n_best = _majority(post["votes"].values[ii, dd])
    majority = [
        [str(labels[d, k]) for k in np.flatnonzero(row)] for d, row in zip(dd, best, strict=True)
    ]
    label = post["label"].values[ii, dd].astype(str)
    out = pl.DataFrame(
        {
            "unit": post["item"].values[ii].astype(str),
            "item": post["unit_item"].values[ii].astype(str),
            "segment": post["unit_segment"].values[ii].astype(str),
            "dimension": post["dimension"].values[dd].astype(str),
            "label": label,
            "probability": post["map_prob"].values[ii, dd].astype(float),
            "entropy": post["entropy"].values[ii, dd].astype(float),
            "majority_vote": [m[0] if len(m) == 1 else None for m in majority],
            "majority_tie": n_best > 1,
            "majority_labels": [TIE_SEPARATOR.join(m) for m in majority],
            "agrees_with_majority": [lab in m for lab, m in zip(label, majority, strict=True)],
            "n_ratings": post["n_ratings"].values[ii, dd].astype(np.int64),
        },
        schema_overrides={"majority_vote": pl.String},
    )
    g = gold[ii, dd]
    if source or (g >= 0).any():
        text = [str(labels[d, k]) if k >= 0 else None for d, k in zip(dd, g, strict=True)]
        out = out.with_columns(
            pl.Series("gold", text, dtype=pl.String),
            pl.Series(
                "gold_match",
                [lab == t if t is not None else None for lab, t in zip(label, text, strict=True)],
                dtype=pl.Boolean,
            ),
        )
    return out


def gold_check(dt: xr.DataTree, ratings: Any = None) -> xr.Dataset:
    """A fit's item labels checked against gold labels: accuracy, log loss, the majority
    vote's accuracy beside them and the coverage / accuracy curve, per dimension and
    overall.

    Gold labels do not enter a latent-class fit by default (``use_gold=False``): the fit
    keeps them beside the data, and this check is then an independent test of its labels.
    With ``use_gold=True`` they clamped the labels of the gold items, so accuracy is 1 and
    log loss 0 by construction: the result says so (``attrs["note"]``).

    Parameters
    ----------
    dt : xr.DataTree
        A fit of a model with latent true labels (MACE, Dawid-Skene), fresh or reloaded.
    ratings : Ratings, optional
        The ratings the fit was made from, for gold labels the fit does not keep (see
        :func:`item_labels`).

    Returns
    -------
    xr.Dataset
        Along ``dimension``: ``n_gold`` (units with a gold label and ratings),
        ``accuracy`` (share whose most probable label is the gold label), ``log_loss``
        (mean of -log P(true label = gold), P floored at :data:`LOG_LOSS_FLOOR`),
        ``majority_accuracy`` (the majority vote's accuracy; a tie among k categories
        counts 1/k when gold is one of them: the expected accuracy of breaking ties at
        random); along ``dimension`` x ``coverage`` (:data:`GOLD_COVERAGES`):
        ``coverage_accuracy``, the accuracy of the share ``coverage`` of gold units with
        the lowest label entropy, and ``coverage_n``, their number. ``overall_n_gold``,
        ``overall_accuracy``, ``overall_log_loss`` and ``overall_majority_accuracy`` pool
        the dimensions. NaN where a dimension has no gold unit. Attributes: ``gold_used``
        (1 when gold clamped the labels), ``note`` (then: the check is not independent),
        ``uncertainty_note`` (a fit by EM or MAP: :func:`point_estimate_note`; by ADVI: the
        approximation's), ``fit_warning`` (the fit fails its checks:
        :func:`raterstats.health.flag_result`),
        ``summary`` (one line for a person), ``units`` (``"items"``, or ``"segments"`` for a
        fit of segment ratings: what ``n_gold`` counts), ``model``, ``method``.

    Raises
    ------
    ValueError
        When neither the fit nor ``ratings`` hold a gold label of a unit of the fit, or
        the ratings' gold labels name units or categories the fit does not have.
    TypeError
        For a fit of a model without item labels.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import MACE, NominalScale, read_ratings
    >>> from raterstats.posterior import gold_check
    >>> frame = pl.DataFrame({"item": [f"q{i}" for i in range(4) for _ in "abc"],
    ...                       "rater": list("abc") * 4,
    ...                       "rating": "yes yes no no no yes yes yes yes no no no".split(),
    ...                       "gold": ["yes"] * 9 + ["no"] * 3})  # q1: the raters say no
    >>> dt = MACE().fit(read_ratings(frame, scale=NominalScale(["yes", "no"])),
    ...                 method="em", random_seed=1)
    >>> check = gold_check(dt)
    >>> int(check["overall_n_gold"]), float(check["overall_accuracy"]), check.attrs["gold_used"]
    (4, 0.75, 0)
    """
    what = "gold_check"
    post = _labelled_posterior(dt, what)
    gold, _ = _gold_codes(post, ratings, what)
    map_code = post["map_code"].values
    has = (gold >= 0) & (map_code >= 0)
    if not has.any():
        raise ValueError(
            f"{what}: no unit of the fit has a gold label: fit ratings with a 'gold' column, "
            "or pass them as ratings="
        )
    dims = post["dimension"].values.astype(str)
    prob = np.nan_to_num(post["prob"].values)
    entropy = post["entropy"].values
    best, n_best = _majority(post["votes"].values)
    safe = np.maximum(gold, 0)[..., None]
    p_gold = np.take_along_axis(prob, safe, axis=-1)[..., 0]
    correct = map_code == gold
    loss = -np.log(np.maximum(p_gold, LOG_LOSS_FLOOR))
    mv_credit = np.take_along_axis(best, safe, axis=-1)[..., 0] / np.maximum(n_best, 1)
    cov = np.asarray(GOLD_COVERAGES)
    n_gold = has.sum(axis=0)
    acc, ll, mv = (np.full(dims.size, np.nan) for _ in range(3))
    curve = np.full((dims.size, cov.size), np.nan)
    curve_n = np.zeros((dims.size, cov.size), dtype=np.int64)
    for d in range(dims.size):
        idx = np.flatnonzero(has[:, d])
        if idx.size == 0:
            continue
        acc[d], ll[d] = correct[idx, d].mean(), loss[idx, d].mean()
        mv[d] = mv_credit[idx, d].mean()
        order = idx[np.argsort(entropy[idx, d], kind="stable")]
        for c, share in enumerate(cov):
            m = max(1, int(np.ceil(round(share * idx.size, 9))))
            curve[d, c], curve_n[d, c] = correct[order[:m], d].mean(), m
    used = int(post.attrs.get("gold_used", 0))
    ds = xr.Dataset(
        {
            "n_gold": ("dimension", n_gold),
            "accuracy": ("dimension", acc),
            "log_loss": ("dimension", ll),
            "majority_accuracy": ("dimension", mv),
            "coverage_accuracy": (("dimension", "coverage"), curve),
            "coverage_n": (("dimension", "coverage"), curve_n),
            "overall_n_gold": int(has.sum()),
            "overall_accuracy": float(correct[has].mean()),
            "overall_log_loss": float(loss[has].mean()),
            "overall_majority_accuracy": float(mv_credit[has].mean()),
        },
        coords={"dimension": dims, "coverage": cov},
        attrs={
            "gold_used": used,
            "model": post.attrs.get("model", ""),
            "method": post.attrs.get("method", ""),
            "units": "segments" if (post["unit_segment"].values != "").any() else "items",
        },
    )
    # the fit's health: a warning when it fails its checks; for a point estimate, what its
    # label probabilities lack (flag_result's default note for the other methods)
    flag_result(ds, dt, note=point_estimate_note(str(ds.attrs["method"])))
    if used:
        ds.attrs["note"] = (
            "gold labels clamped the labels of the gold items (use_gold=True): accuracy 1 and "
            "log loss 0 against them hold by construction; this is not an independent check"
        )
    ds.attrs["summary"] = gold_check_summary(ds)
    return ds


def point_estimate_note(method: str) -> str | None:
    """What label probabilities from a point estimate (``method`` ``"em"`` or ``"map"``)
    lack, for a result's ``uncertainty_note``; None for other methods.

    Examples
    --------
    >>> point_estimate_note("nuts") is None, point_estimate_note("em")[:30]
    (True, 'a point estimate (em): the lab')
    """
    if method not in ("em", "map"):
        return None
    return (
        f"a point estimate ({method}): the label probabilities are conditional on the "
        "estimated rater parameters, without their uncertainty, and tend to be overconfident"
    )


def gold_check_summary(check: xr.Dataset) -> str:
    """One line on a :func:`gold_check` result, for a person: the number of gold items,
    the labels' accuracy beside the majority vote's, the log loss, and whether gold was
    used in the fit.

    Examples
    --------
    >>> ds = xr.Dataset({"overall_n_gold": 120, "overall_accuracy": 0.83,
    ...                  "overall_majority_accuracy": 0.8, "overall_log_loss": 0.41},
    ...                 attrs={"gold_used": 0})
    >>> gold_check_summary(ds)
    'gold: 120 items, accuracy 0.83 (majority vote 0.80), log loss 0.41; gold not used in the fit'
    """
    n = int(check["overall_n_gold"])
    units = check.attrs.get("units", "items")
    if check.attrs.get("gold_used"):
        return (
            f"gold: {n} {units} clamped the labels (use_gold): accuracy "
            f"{float(check['overall_accuracy']):.2f} by construction, not an independent check"
        )
    failing = "; the fit FAILS its checks (fit_warning)" if check.attrs.get("fit_warning") else ""
    return (
        f"gold: {n} {units}, accuracy {float(check['overall_accuracy']):.2f} (majority vote "
        f"{float(check['overall_majority_accuracy']):.2f}), log loss "
        f"{float(check['overall_log_loss']):.2f}; gold not used in the fit{failing}"
    )


__all__ = [
    "GOLD_COVERAGES",
    "LOG_LOSS_FLOOR",
    "TIE_SEPARATOR",
    "coverage_accuracy",
    "gold_check",
    "gold_check_summary",
    "item_labels",
    "item_posterior",
    "point_estimate_note",
    "rater_summary",
]
