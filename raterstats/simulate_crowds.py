"""A simulator of hard crowds: sparse raters, imbalanced classes, item difficulty, rater
communities with correlated confusions, and spammers.

:func:`hard_crowd` draws a crowd-sourcing study of one nominal question with ``K`` classes
(``K`` up to 10; 5 by default) and returns a
:class:`~raterstats.simulate.SimulatedStudy`: the validated ratings and the ground truth
(true labels, each rater's community, confusion matrix and spammer flag, each item's
difficulty) as an ``xr.Dataset`` with named dimensions. It is the test bed of the
latent-class models on data as real crowds make them (issue 19): most raters give few
labels, a few give very many, and raters of one community share their mistakes.

Generative story (items ``i``, raters ``j``, classes ``k``)::

    T_i ~ Categorical(pi)                      pi_k ∝ r^(-k / (K - 1)), r = class_imbalance
    C_m[t, :] = (1 - rho) base_t + rho e_{b_m(t)}   if community m confuses t with b_m(t)
              = base_t                              otherwise
    base_t[a] = accuracy if a = t else (1 - accuracy) / (K - 1)
    c_j ~ Categorical(community_weights)       (non-spammers)
    beta_j[t, :] ~ Dirichlet(s C_{c_j}[t, :])  (s = rater_concentration)
    b_i ~ LogNormal(0, difficulty_sd)          item easiness; difficulty 1 / b_i
    P(A_ij = a | T_i = t) = softmax_a(b_i log beta_j[t, a])   (non-spammers)
    spammers: "uniform" rate uniformly at random, "constant" always give one label

The easiness ``b_i`` is an inverse temperature on the rater's log confusion row: a hard item
(small ``b_i``) flattens the row towards a guess, an easy one sharpens it towards the row's
mode (the correct label for a good rater, the confused label where a community's confusion
dominates). With ``difficulty_sd=0`` every item has ``b_i = 1`` and the ratings follow the
raters' confusion matrices exactly (Dawid-Skene's model, with community structure).

Which raters label an item: every item gets ``labels_per_item`` distinct raters, drawn
without replacement with probability proportional to each rater's activity
``w_j ~ Lomax(activity_shape)`` (a Pareto tail: the smaller the shape, the heavier the
tail; ``activity_shape=None``: equal activity). Every rater gives at least one label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.checks import (
    check_arguments,
    choice_problem,
    integer_problem,
    real_problem,
    seed_problem,
)
from raterstats.ingest import read_ratings
from raterstats.scales import NominalScale

if TYPE_CHECKING:
    from raterstats.simulate import SimulatedStudy

#: Seed of :func:`hard_crowd` by default.
CROWD_SEED = 19
#: Kinds of spammer :func:`hard_crowd` simulates.
SPAMMER_KINDS = ("uniform", "constant")
#: The largest number of classes :func:`hard_crowd` simulates.
MAX_CLASSES = 10
#: Items whose rater draws are made at once (bounds the memory of the draws).
ASSIGN_CHUNK = 4096


def _problems(kw: dict[str, Any]) -> list[str | None]:
    """Every problem of :func:`hard_crowd`'s arguments (None for a good one)."""
    K = kw["n_classes"]
    out: list[str | None] = [
        seed_problem("random_seed", kw["random_seed"]),
        integer_problem("n_items", kw["n_items"], minimum=1),
        integer_problem("n_classes", K, minimum=2, maximum=MAX_CLASSES),
        integer_problem("n_raters", kw["n_raters"], minimum=1),
        integer_problem("labels_per_item", kw["labels_per_item"], minimum=1),
        real_problem("activity_shape", kw["activity_shape"], low=0, open_low=True, optional=True),
        real_problem("class_imbalance", kw["class_imbalance"], low=1),
        real_problem("accuracy", kw["accuracy"], low=0, high=1, open_low=True, open_high=True),
        integer_problem("n_communities", kw["n_communities"], minimum=1),
        integer_problem("confusions_per_community", kw["confusions_per_community"], minimum=0),
        real_problem("confusion_rate", kw["confusion_rate"], low=0, high=1),
        real_problem(
            "rater_concentration", kw["rater_concentration"], low=0, open_low=True, optional=True
        ),
        real_problem("difficulty_sd", kw["difficulty_sd"], low=0),
        real_problem("spammer_fraction", kw["spammer_fraction"], low=0, high=1),
        real_problem("spammer_activity", kw["spammer_activity"], low=0, open_low=True),
    ]
    kinds = kw["spammer_kinds"]
    if isinstance(kinds, str) or not isinstance(kinds, Sequence) or not kinds:
        out.append(
            f"spammer_kinds must be a non-empty sequence of {list(SPAMMER_KINDS)}, not {kinds!r}"
        )
    else:
        out += [choice_problem("spammer_kinds entry", k, SPAMMER_KINDS) for k in kinds]
    ints_ok = all(
        isinstance(kw[k], int) and not isinstance(kw[k], bool)
        for k in ("n_items", "n_classes", "n_raters", "labels_per_item", "n_communities")
    )
    if ints_ok and kw["labels_per_item"] > kw["n_raters"]:
        out.append(
            f"labels_per_item ({kw['labels_per_item']}) exceeds n_raters ({kw['n_raters']}): "
            "an item's raters are distinct"
        )
    if ints_ok and kw["n_items"] * kw["labels_per_item"] < kw["n_raters"]:
        out.append(
            f"n_items x labels_per_item ({kw['n_items'] * kw['labels_per_item']}) is below "
            f"n_raters ({kw['n_raters']}): every rater gives at least one label"
        )
    cpc = kw["confusions_per_community"]
    if ints_ok and isinstance(cpc, int) and not isinstance(cpc, bool) and cpc > K:
        out.append(
            f"confusions_per_community ({cpc}) exceeds n_classes ({K}): a community confuses "
            "each true class with at most one other"
        )
    if kw["prevalence"] is not None:
        p = np.asarray(kw["prevalence"], dtype=float)
        if ints_ok and (p.shape != (K,) or not np.all(np.isfinite(p)) or np.any(p <= 0)):
            out.append(f"prevalence must be {K} positive numbers (one per class), not {p.tolist()}")
    if kw["community_weights"] is not None:
        w = np.asarray(kw["community_weights"], dtype=float)
        M = kw["n_communities"]
        if ints_ok and (w.shape != (M,) or not np.all(np.isfinite(w)) or np.any(w < 0)):
            out.append(
                f"community_weights must be {M} non-negative numbers (one per community), "
                f"not {w.tolist()}"
            )
        elif w.sum() <= 0:
            out.append("community_weights must not all be 0")
    if kw["categories"] is not None:
        cats = [str(c) for c in kw["categories"]]
        if ints_ok and (len(cats) != K or len(set(cats)) != K):
            out.append(f"categories must be {K} distinct labels, not {kw['categories']!r}")
    return out


def class_prevalence(n_classes: int, class_imbalance: float) -> np.ndarray:
    """Geometric class prevalences whose largest is ``class_imbalance`` times the smallest
    (class 0 the most common).

    Examples
    --------
    >>> class_prevalence(3, 4.0).round(3).tolist()
    [0.571, 0.286, 0.143]
    """
    p = float(class_imbalance) ** (-np.arange(n_classes) / max(n_classes - 1, 1))
    return np.asarray(p / p.sum())


def community_confusions(
    rng: np.random.Generator,
    *,
    n_classes: int,
    n_communities: int,
    accuracy: float,
    confusions_per_community: int,
    confusion_rate: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Each community's confusion matrix ``(M, K, K)`` and its confused label per true class
    ``(M, K)`` (-1: none): community ``m`` mistakes ``confusions_per_community`` true classes,
    drawn at random, each for one other class, with probability ``confusion_rate`` on top of
    the shared base matrix (``accuracy`` on the diagonal, errors spread evenly).

    Examples
    --------
    >>> conf, confused = community_confusions(
    ...     np.random.default_rng(0), n_classes=3, n_communities=2, accuracy=0.8,
    ...     confusions_per_community=1, confusion_rate=0.5)
    >>> conf.shape, (confused >= 0).sum(axis=1).tolist()
    ((2, 3, 3), [1, 1])
    >>> bool(np.allclose(conf.sum(axis=-1), 1.0))
    True
    """
    K, M = n_classes, n_communities
    base = np.full((K, K), (1.0 - accuracy) / (K - 1))
    np.fill_diagonal(base, accuracy)
    conf = np.broadcast_to(base, (M, K, K)).copy()
    confused = np.full((M, K), -1, dtype=np.int64)
    for m in range(M):
        for t in rng.choice(K, size=confusions_per_community, replace=False):
            b = int(rng.choice([a for a in range(K) if a != t]))
            confused[m, t] = b
            conf[m, t] = (1.0 - confusion_rate) * base[t]
            conf[m, t, b] += confusion_rate
    return conf, confused


def assign_raters(
    rng: np.random.Generator, n_items: int, labels_per_item: int, activity: np.ndarray
) -> np.ndarray:
    """``(n_items, labels_per_item)`` distinct raters per item, drawn without replacement
    with probability proportional to ``activity`` (Gumbel top-k), then repaired so that
    every rater gives at least one label (a label of a rater with several moves to a rater
    with none).

    Examples
    --------
    >>> who = assign_raters(np.random.default_rng(0), 20, 3, np.array([50.0, 1, 1, 1, 1, 1]))
    >>> who.shape, bool((np.sort(who, axis=1)[:, 1:] != np.sort(who, axis=1)[:, :-1]).all())
    ((20, 3), True)
    >>> sorted(set(who.ravel().tolist()))  # every rater rates something
    [0, 1, 2, 3, 4, 5]
    """
    R = activity.size
    logw = np.log(activity)
    out = np.empty((n_items, labels_per_item), dtype=np.int64)
    for s in range(0, n_items, ASSIGN_CHUNK):
        e = min(s + ASSIGN_CHUNK, n_items)
        keys = logw[None, :] + rng.gumbel(size=(e - s, R))
        out[s:e] = np.argpartition(-keys, labels_per_item - 1, axis=1)[:, :labels_per_item]
    counts = np.bincount(out.ravel(), minlength=R)
    for j in np.flatnonzero(counts == 0):
        # a label of the most active rater, on an item rater j does not rate yet
        donor = int(np.argmax(counts))
        rows, cols = np.nonzero(out == donor)
        free = ~(out[rows] == j).any(axis=1)
        pick = int(rng.choice(np.flatnonzero(free)))
        out[rows[pick], cols[pick]] = j
        counts[donor] -= 1
        counts[j] += 1
    return out


def hard_crowd(
    *,
    random_seed: int | None = CROWD_SEED,
    n_items: int = 600,
    n_classes: int = 5,
    n_raters: int = 150,
    labels_per_item: int = 3,
    activity_shape: float | None = 1.0,
    prevalence: Sequence[float] | None = None,
    class_imbalance: float = 6.0,
    accuracy: float = 0.7,
    n_communities: int = 3,
    community_weights: Sequence[float] | None = None,
    confusions_per_community: int = 2,
    confusion_rate: float = 0.5,
    rater_concentration: float | None = 20.0,
    difficulty_sd: float = 0.5,
    spammer_fraction: float = 0.1,
    spammer_kinds: Sequence[str] = SPAMMER_KINDS,
    spammer_activity: float = 1.0,
    categories: Sequence[str] | None = None,
) -> SimulatedStudy:
    """Simulate a hard crowd-sourcing study: sparse raters, class imbalance, item
    difficulty, rater communities with correlated confusions, and spammers.

    The defaults make a sparse five-class crowd: 600 items with 3 labels each from 150
    raters whose activity has a Pareto tail (most raters give fewer than 10 labels, a few
    give over a hundred), classes 6 to 1 from the most to the least common, three
    communities of raters that each mistake two classes for others half of the time, item
    difficulty, and 10 % spammers. See the module docstring for the generative story.

    Parameters
    ----------
    random_seed : int or None
        Seed; the same seed gives identical data.
    n_items, n_classes, n_raters : int
        Items, classes (2 to 10) and raters (each gives at least one label).
    labels_per_item : int
        Distinct raters per item.
    activity_shape : float or None
        Tail index of the raters' activity (Lomax / Pareto II weights): 1 is a heavy tail
        like a real crowd's, larger is more even; None: every rater equally active (a dense
        design when ``labels_per_item`` is close to ``n_raters``).
    prevalence : sequence of float, optional
        Class prevalences (normalised); default geometric with ``class_imbalance``.
    class_imbalance : float
        Ratio of the most to the least common class's prevalence (1: balanced).
    accuracy : float
        A community rater's probability of the correct label before its community's
        confusions (errors spread evenly over the other classes).
    n_communities : int
        Communities of (non-spam) raters; each shares a confusion matrix.
    community_weights : sequence of float, optional
        Relative community sizes (default equal).
    confusions_per_community : int
        True classes each community systematically mistakes for one other class (drawn at
        random per community, so communities differ in their mistakes; 0: none).
    confusion_rate : float
        The probability of a confused class's systematic mistake (a mixture weight: the
        row is ``(1 - confusion_rate) base + confusion_rate e_b``).
    rater_concentration : float or None
        Dirichlet concentration ``s`` of a rater's rows around its community's (larger:
        raters closer to their community); None: every rater has its community's matrix.
    difficulty_sd : float
        Standard deviation of the log item easiness (0: every item alike).
    spammer_fraction : float
        Share of raters who are spammers (rounded to a whole number of raters).
    spammer_kinds : sequence of {"uniform", "constant"}
        Kinds of spammer, each spammer's kind drawn uniformly from this sequence: uniform
        random labels, or one label always (drawn at random per spammer).
    spammer_activity : float
        Factor on the spammers' activity weights: below 1, spammers are drive-by raters who
        give fewer labels than the others (as on open crowd-sourcing platforms); 1: the
        same activity distribution as the other raters.
    categories : sequence of str, optional
        Labels of the classes (default ``c0``, ``c1``, ...); class ``k`` is ``categories[k]``
        and category code ``k`` of the ratings.

    Returns
    -------
    SimulatedStudy
        ``ratings``: one nominal dimension, columns ``item``, ``rater``, ``rating``.
        ``truth``: ``true_label`` (item; code), ``item_easiness`` and ``item_difficulty``
        (item; ``b_i`` and ``1 / b_i``), ``rater_community`` (rater; -1 for spammers),
        ``spammer`` (rater; bool), ``spammer_kind`` (rater; ``""`` for non-spammers),
        ``rater_confusion`` (rater, true, rated; P(rated | true) of an item of easiness 1,
        for spammers their fixed rows), ``rater_accuracy`` (rater; its probability of the
        correct label averaged over the classes' prevalences and the items' easiness),
        ``n_labels`` (rater), ``community_confusion`` (community, true, rated),
        ``confused_with`` (community, true; the confused class, -1 for none),
        ``prevalence`` (category); coordinates ``category_label`` (category).
        ``config``: every argument.

    Examples
    --------
    >>> import numpy as np
    >>> from raterstats.simulate import hard_crowd
    >>> s = hard_crowd(n_items=200, n_raters=60, random_seed=1)
    >>> s.ratings.n_ratings, s.truth["rater_confusion"].dims
    (600, ('rater', 'true', 'rated'))
    >>> bool(np.median(s.truth["n_labels"]) < 10)
    True
    """
    kw = dict(locals())
    check_arguments(*_problems(kw), where="hard_crowd")
    from raterstats.simulate import SimulatedStudy

    K, M, R = n_classes, n_communities, n_raters
    ss = np.random.SeedSequence(random_seed)
    rng_cls, rng_com, rng_rat, rng_asg, rng_rate = (np.random.default_rng(s) for s in ss.spawn(5))
    cats = [f"c{k}" for k in range(K)] if categories is None else [str(c) for c in categories]
    raters = [f"w{j + 1:0{len(str(R))}d}" for j in range(R)]
    items = [f"i{i + 1:0{len(str(n_items))}d}" for i in range(n_items)]

    # items: true labels and easiness ----------------------------------------------------
    prev = (
        class_prevalence(K, class_imbalance)
        if prevalence is None
        else np.asarray(prevalence, float) / np.sum(prevalence)
    )
    true = rng_cls.choice(K, size=n_items, p=prev)
    easiness = np.exp(rng_cls.normal(0.0, float(difficulty_sd), n_items))

    # communities and raters ----------------------------------------------------------------
    com_conf, confused = community_confusions(
        rng_com, n_classes=K, n_communities=M, accuracy=float(accuracy),
        confusions_per_community=confusions_per_community, confusion_rate=float(confusion_rate),
    )  # fmt: skip
    n_spam = round(float(spammer_fraction) * R)
    spam = np.zeros(R, dtype=bool)
    spam[rng_rat.choice(R, size=n_spam, replace=False)] = True
    kind = np.full(R, "", dtype=object)
    kind[spam] = rng_rat.choice(np.asarray(list(spammer_kinds), dtype=object), size=n_spam)
    w = np.ones(M) if community_weights is None else np.asarray(community_weights, float)
    community = np.where(spam, -1, rng_rat.choice(M, size=R, p=w / w.sum()))
    conf = np.empty((R, K, K))
    for j in range(R):
        if kind[j] == "uniform":
            conf[j] = 1.0 / K
        elif kind[j] == "constant":
            conf[j] = np.eye(K)[rng_rat.integers(K)]
        elif rater_concentration is None:
            conf[j] = com_conf[community[j]]
        else:
            a = float(rater_concentration) * com_conf[community[j]]
            conf[j] = _dirichlet_rows(rng_rat, a)
    activity = (
        np.ones(R) if activity_shape is None else rng_rat.pareto(float(activity_shape), R) + 1e-3
    )
    activity = np.where(spam, activity * float(spammer_activity), activity)

    # who rates what, and the ratings -------------------------------------------------------
    who = assign_raters(rng_asg, n_items, labels_per_item, activity)
    row_item = np.repeat(np.arange(n_items), labels_per_item)
    row_rater = who.ravel()
    rows = conf[row_rater, true[row_item]]  # (N, K)
    with np.errstate(divide="ignore"):
        logit = np.log(rows) * easiness[row_item, None]
    prob = np.exp(logit - logit.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    prob = np.where(spam[row_rater, None], rows, prob)  # spammers ignore difficulty
    u = rng_rate.random((row_item.size, 1))
    label = np.minimum(np.sum(u > np.cumsum(prob, axis=1), axis=1), K - 1)

    order = np.lexsort((row_rater, row_item))
    frame = pl.DataFrame(
        {
            S.ITEM: [items[i] for i in row_item[order]],
            S.RATER: [raters[j] for j in row_rater[order]],
            S.RATING: [cats[k] for k in label[order]],
        }
    )
    ratings = read_ratings(
        frame, scale=NominalScale(cats), name=f"hard_crowd(random_seed={random_seed})"
    )
    n_labels = np.bincount(row_rater, minlength=R)
    # accuracy per rater: P(correct) averaged over the classes and the items' easiness
    p_correct = _correct_prob(conf, easiness, spam)
    truth = xr.Dataset(
        {
            "true_label": (("item",), true),
            "item_easiness": (("item",), easiness),
            "item_difficulty": (("item",), 1.0 / easiness),
            "rater_community": (("rater",), community.astype(np.int64)),
            "spammer": (("rater",), spam),
            "spammer_kind": (("rater",), kind.astype(str)),
            "rater_confusion": (("rater", "true", "rated"), conf),
            "rater_accuracy": (("rater",), p_correct @ prev),
            "n_labels": (("rater",), n_labels),
            "community_confusion": (("community", "true", "rated"), com_conf),
            "confused_with": (("community", "true"), confused),
            "prevalence": (("category",), prev),
        },
        coords={
            "item": items,
            "rater": raters,
            "community": np.arange(M),
            "true": np.arange(K),
            "rated": np.arange(K),
            "category": np.arange(K),
            "category_label": ("category", cats),
        },
        attrs={
            "study": "hard_crowd",
            "random_seed": -1 if random_seed is None else int(random_seed),
            "description": (
                "simulated crowd: sparse raters (Pareto activity), class imbalance, item "
                "easiness as an inverse temperature on the raters' log confusion rows, "
                "rater communities with shared confusions, spammers (raterstats.simulate."
                "hard_crowd)"
            ),
        },
    )
    config = {k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()}
    return SimulatedStudy(ratings=ratings, truth=truth, config=config)


def _dirichlet_rows(rng: np.random.Generator, conc: np.ndarray) -> np.ndarray:
    """One Dirichlet draw per row of ``conc`` (K x K concentrations)."""
    return np.stack([rng.dirichlet(row) for row in conc])


def _correct_prob(conf: np.ndarray, easiness: np.ndarray, spam: np.ndarray) -> np.ndarray:
    """``(R, K)`` each rater's probability of the correct label per true class, averaged
    over the items' easiness (over 256 of its quantiles when there are more items;
    spammers: their fixed rows' diagonal)."""
    with np.errstate(divide="ignore"):
        logc = np.log(conf)  # (R, K, K)
    R, K = conf.shape[:2]
    out = np.zeros((R, K))
    # the easiness distribution by at most 256 of its quantiles (exact for fewer items)
    b = easiness if easiness.size <= 256 else np.quantile(easiness, (np.arange(256) + 0.5) / 256)
    for bi in b:
        lg = logc * bi
        p = np.exp(lg - lg.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        out += np.einsum("rkk->rk", p)
    out /= b.size
    diag = np.einsum("rkk->rk", conf)
    return np.where(spam[:, None], diag, out)


__all__ = [
    "CROWD_SEED",
    "MAX_CLASSES",
    "SPAMMER_KINDS",
    "assign_raters",
    "class_prevalence",
    "community_confusions",
    "hard_crowd",
]
