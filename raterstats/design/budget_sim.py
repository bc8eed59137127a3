"""The simulation behind the categorical annotation budgets: a latent-class fit prepared
for simulation (:func:`prepare_categorical`: posterior draws, every rater's confusion
matrix, true labels drawn from their posterior, the (label space, design) cells and their
human panels) and the module-level task that simulates one cell with ``r`` raters
(:func:`simulate_labels_task`), so that process pools and Dask can run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.design.categorical import confusion_draws
from raterstats.design.schemes import base_dimensions
from raterstats.models import is_fit_of, model_from_datatree
from raterstats.models.latent_class import (
    LatentClassData,
    LatentClassModel,
    data_from_groups,
    sample_true_class,
)
from raterstats.ratings import Ratings
from raterstats.scales import (
    SEGMENT_RULES,
    CategoricalScale,
    OrdinalScale,
    SegmentRule,
    format_level,
)

#: segment rules that turn sentence labels into an answer label (``mean`` gives a number)
LABEL_RULES = ("any_negative", "any_positive", "min", "max")


@dataclass(frozen=True)
class FitCell:
    """A (label space, design) cell with ratings: ``space`` (the fit's dimension) and
    ``base`` (the dimension it measures), indices ``d`` and ``g``; ``units`` (the fit's
    units rated in the cell), ``unit_answer`` (each unit's answer, ``0..n_answers-1``),
    ``sentences`` (sentence-level units), ``panel`` (indices of the human raters who
    rated in the cell), ``answer_system`` (each answer's system index; None without
    systems) and ``max_sentences`` (sentences of the longest answer; 1 for whole
    answers)."""

    space: str
    base: str
    d: int
    g: int
    units: np.ndarray
    unit_answer: np.ndarray
    n_answers: int
    sentences: bool
    panel: np.ndarray
    answer_system: np.ndarray | None
    max_sentences: int


@dataclass(frozen=True)
class CategoricalFit:
    """A latent-class fit prepared for simulation (:func:`prepare_categorical`):
    ``conf`` (S, R, D, G, K, K) confusion matrices, ``log_prior`` (S, D, K) log
    prevalence, ``truth`` (S, n_units) true labels drawn from their posterior, one row
    per simulated study; ``cells`` with ratings; ``base_names`` (the base dimensions, in
    the fit's order)."""

    data: LatentClassData
    conf: np.ndarray
    log_prior: np.ndarray
    truth: np.ndarray
    cells: tuple[FitCell, ...]
    base_names: list[str]
    n_distinct_draws: int
    n_items: int

    def design_units(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """Answers rated in design ``g`` and the number of their rated sentences (1 for
        whole-answer units)."""
        data = self.data
        units = np.unique(data.unit[data.design == g])
        t = pl.DataFrame(
            {
                "item": np.asarray(data.unit_item)[units],
                "seg": np.asarray(data.unit_segment)[units],
            }
        )
        per = t.group_by("item").agg(pl.col("seg").n_unique().alias("n")).sort("item")
        return per["item"].to_numpy(), per["n"].to_numpy()

    def n_answers(self, g: int) -> int:
        """Answers rated in design ``g``."""
        return int(self.design_units(g)[0].size)

    def answer_units(self, g: int, ks: list[int]) -> np.ndarray:
        """Rated sentences when ``k`` of each answer's sentences are rated (all of them
        when it has fewer), for each ``k``, in design ``g``."""
        n = self.design_units(g)[1]
        return np.asarray([np.minimum(n, k).sum() for k in ks], dtype=float)

    def design_sentences(self) -> list[bool]:
        """Whether each design is sentence-level (its cells' units are sentences)."""
        out = [False] * len(self.data.designs)
        for c in self.cells:
            out[c.g] = c.sentences
        return out

    def ranking_problem(self, cell: FitCell, scores: np.ndarray | None) -> str | None:
        """Why the system ranking cannot be simulated in ``cell`` (None when it can)."""
        if cell.answer_system is None:
            return (
                "p_recovered and expected_tau are NaN: the fitted ratings had no 'system' "
                "column (or not for every item)"
            )
        if int(cell.answer_system.max()) + 1 < 2:
            return f"p_recovered and expected_tau are NaN in {cell.space!r}: one system only"
        if scores is None:
            return (
                f"p_recovered and expected_tau are NaN in {cell.space!r}: its labels are not "
                "numbers; pass score_map= to score them"
            )
        return None

    def task(
        self,
        cell: FitCell,
        r: int,
        *,
        seed: np.random.SeedSequence,
        task_id: int,
        ks: list[int],
        scores: np.ndarray | None,
        rule: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The :func:`simulate_labels_task` of ``cell`` with ``r`` raters."""
        return {
            "confusion": self.conf[:, cell.panel, cell.d, cell.g],
            "log_prior": self.log_prior[:, cell.d],
            "truth": self.truth[:, cell.units],
            "unit_answer": cell.unit_answer,
            "answer_system": cell.answer_system if scores is not None else None,
            "scores": scores,
            "r": int(r),
            "ks": list(ks),
            "rule": rule,
            "seed": seed,
            "id": task_id,
        }

    def rule_task(
        self, cell: FitCell, rule: SegmentRule, ratings: Ratings, what: str
    ) -> dict[str, Any]:
        """``rule`` on the cell's label space as the task needs it: its kind and, for
        ``any_negative`` / ``any_positive``, the flagged categories ``(K,)``."""
        if cell.space not in ratings.scales:
            raise ValueError(
                f"{what}: the ratings have no dimension {cell.space!r}; pass the fitted ratings"
            )
        scale = ratings.scale_for(cell.space)
        fitted = self.data.categories[cell.d]
        levels = tuple(format_level(v) for v in getattr(scale, "levels", ()))
        if not isinstance(scale, CategoricalScale) or levels != fitted:
            raise ValueError(
                f"{what}: dimension {cell.space!r} of the ratings is not on the fitted scale "
                f"{list(fitted)}; pass the fitted ratings"
            )
        flagged = np.zeros(self.data.K, dtype=bool)
        if rule.kind in ("any_negative", "any_positive"):
            try:
                flagged[rule.flagged_codes(scale)] = True
            except TypeError as e:
                raise ValueError(f"{what}: rule {rule.kind} on {cell.space!r}: {e}") from None
        elif not isinstance(scale, OrdinalScale):
            raise ValueError(
                f"{what}: rule {rule.kind} needs an ordinal scale; {cell.space!r} is nominal"
            )
        return {"kind": rule.kind, "flagged": flagged}


def answer_rule(rule: Any, what: str) -> SegmentRule:
    """A segment rule that gives an answer a label: a name of
    :data:`raterstats.scales.SEGMENT_RULES` or a :class:`~raterstats.scales.SegmentRule`
    of kind ``any_negative``, ``any_positive``, ``min`` or ``max``.

    Examples
    --------
    >>> answer_rule("any_positive", "f").kind
    'any_positive'
    """
    if isinstance(rule, str):
        if rule not in SEGMENT_RULES:
            raise ValueError(f"{what}: unknown rule {rule!r}; known: {list(LABEL_RULES)}")
        rule = SEGMENT_RULES[rule]
    if not isinstance(rule, SegmentRule):
        raise ValueError(
            f"{what}: rule must be a rule name or a SegmentRule, got {type(rule).__name__}"
        )
    if rule.kind not in LABEL_RULES:
        raise ValueError(
            f"{what}: rule {rule.kind!r} does not give the answer a label (a mean is a "
            f"number); use one of {list(LABEL_RULES)}"
        )
    return rule


def _cells(data: LatentClassData, bases: list[str], what: str) -> list[FitCell]:
    """The (label space, design) cells with ratings (their panels: the human raters, as
    the fit stores them, who rated in the cell)."""
    is_human = (
        np.ones(len(data.raters), dtype=bool)
        if data.rater_is_human is None
        else np.asarray(data.rater_is_human, dtype=bool)
    )
    items = np.asarray(data.unit_item)
    segs = np.asarray(data.unit_segment)
    systems = None if data.unit_system is None else np.asarray(data.unit_system)
    cells = []
    taken: dict[tuple[str, int], str] = {}
    for d in range(len(data.dimensions)):
        for g in range(len(data.designs)):
            sel = (data.dim == d) & (data.design == g)
            if not sel.any():
                continue
            space, base = data.dimensions[d], bases[d]
            if (base, g) in taken:
                raise ValueError(
                    f"{what}: design {data.designs[g]!r} rates dimension {base!r} in two label "
                    f"spaces ({taken[(base, g)]!r}, {space!r}); give each its own design"
                )
            taken[(base, g)] = space
            units = np.unique(data.unit[sel])
            sent = segs[units] != ""
            if sent.any() and not sent.all():
                raise ValueError(
                    f"{what}: design {data.designs[g]!r} rates {space!r} both by sentence and "
                    "by whole answer; split it into two designs"
                )
            answers, ua = np.unique(items[units], return_inverse=True)
            by_answer = np.argsort(ua, kind="stable")  # units grouped by answer
            units, ua = units[by_answer], ua[by_answer]
            panel = np.unique(data.rater[sel])
            sys_a = None
            if systems is not None:
                per = systems[units]
                if (per != "").all():
                    first = np.zeros(answers.size, dtype=np.int64)
                    first[ua[::-1]] = np.arange(ua.size)[::-1]
                    _, sys_a = np.unique(per[first], return_inverse=True)
            cells.append(
                FitCell(
                    space=space,
                    base=base,
                    d=d,
                    g=g,
                    units=units,
                    unit_answer=ua.astype(np.int64),
                    n_answers=int(answers.size),
                    sentences=bool(sent.all()),
                    panel=panel[is_human[panel]],
                    answer_system=None if sys_a is None else sys_a.astype(np.int64),
                    max_sentences=int(np.bincount(ua).max()),
                )
            )
    designs_sent: dict[int, set[bool]] = {}
    for c in cells:
        designs_sent.setdefault(c.g, set()).add(c.sentences)
    mixed = [data.designs[g] for g, v in designs_sent.items() if len(v) > 1]
    if mixed:
        raise ValueError(
            f"{what}: designs {mixed} rate some dimensions by sentence and others by whole "
            "answer; their cost per unit is not defined: split them into two designs"
        )
    return cells


def prepare_categorical(
    dt: xr.DataTree, ratings: Ratings, *, n_sims: int, rng: np.random.Generator, what: str
) -> CategoricalFit:
    """A MACE / Dawid-Skene fit prepared for ``n_sims`` simulated studies: ``n_sims``
    posterior draws (without replacement; repeated in turn when the fit has fewer, as an
    EM point estimate), the confusion matrices and prevalence of each, and the fitted
    units' true labels drawn from their posterior given each draw.

    Raises
    ------
    ValueError
        ``dt`` is not a latent-class fit, or ``ratings`` do not name its raters.
    """
    if not is_fit_of(dt, LatentClassModel):
        raise ValueError(
            f"{what}: expected a fit of a latent-class model (MACE, DawidSkene), got a "
            f"DataTree with model {dt.attrs.get('model')!r}"
        )
    if not isinstance(ratings, Ratings):
        raise ValueError(
            f"{what}: ratings must be the fitted Ratings, not {type(ratings).__name__}"
        )
    model = model_from_datatree(dt)
    assert isinstance(model, LatentClassModel)
    data = data_from_groups(dt["constant_data"].to_dataset(), dt["observed_data"].to_dataset())
    rated = {str(x) for x in ratings.data.get_column(S.RATER).unique().to_list()}
    unknown = [r for r in data.raters if r not in rated]
    if unknown:
        raise ValueError(
            f"{what}: the ratings do not name the fitted raters {unknown[:5]}; pass the "
            "ratings the fit was made from"
        )
    bmap = base_dimensions(dt)
    bases = [bmap[d] for d in data.dimensions]
    cells = _cells(data, bases, what)
    params = model.params_from_posterior(dt["posterior"].to_dataset())
    total = next(iter(params.values())).shape[0]
    pick = (
        np.sort(rng.choice(total, size=n_sims, replace=False))
        if total >= n_sims
        else np.arange(n_sims) % total
    )
    params = {k: v[pick] for k, v in params.items()}
    truth = np.empty((n_sims, data.n_units), dtype=np.int64)
    conf = np.empty((n_sims, len(data.raters), len(data.dimensions), len(data.designs),
                     data.K, data.K))  # fmt: skip
    for sl in model.draw_chunks(n_sims, data):
        sub = {k: v[sl] for k, v in params.items()}
        truth[sl] = sample_true_class(model, sub, data, rng)
        # zero in the categories a dimension lacks and in unrated cells (never simulated)
        conf[sl] = np.nan_to_num(confusion_draws(model, sub, data))
    with np.errstate(divide="ignore"):
        log_prior = np.log(np.where(data.valid[None], params["prevalence"], 0.0))
    return CategoricalFit(
        data=data,
        conf=conf,
        log_prior=log_prior,
        truth=truth,
        cells=tuple(cells),
        base_names=list(dict.fromkeys(bases)),
        n_distinct_draws=int(np.unique(pick).size),
        n_items=len(set(data.unit_item)),
    )


def _answer_label(
    codes: np.ndarray, sel: np.ndarray, start: np.ndarray, rule: dict[str, Any]
) -> np.ndarray:
    """``(S, A)`` answer labels from the sentence labels ``codes`` (S, U; units sorted by
    answer, answer ``a`` starting at ``start[a]``) of the selected sentences ``sel``
    (S, U): whether any selected sentence is flagged (``any_*``: the answer label is a
    function of it), or the smallest / largest selected code."""
    if rule["kind"] in ("any_negative", "any_positive"):
        hit = np.add.reduceat((rule["flagged"][codes] & sel).astype(np.int64), start, axis=1)
        return (hit > 0).astype(np.int64)
    if rule["kind"] == "min":
        big = np.iinfo(np.int64).max
        return np.minimum.reduceat(np.where(sel, codes, big), start, axis=1)
    return np.maximum.reduceat(np.where(sel, codes, -1), start, axis=1)


def cohen_kappa_rows(pred: np.ndarray, truth: np.ndarray, n_categories: int) -> np.ndarray:
    """Cohen's kappa between ``pred`` and ``truth`` (codes ``0..n_categories-1``) along the
    last axis, per row; NaN where chance agreement is 1 (both constant on one category:
    kappa is undefined).

    Examples
    --------
    >>> cohen_kappa_rows(np.array([[0, 1, 1, 0], [0, 0, 0, 0]]),
    ...                  np.array([[0, 1, 1, 1], [0, 0, 0, 0]]), 2).round(3).tolist()
    [0.5, nan]
    """
    cats = np.arange(max(int(n_categories), 2))
    p_t = (truth[..., None] == cats).mean(axis=-2)
    p_m = (pred[..., None] == cats).mean(axis=-2)
    p_o = (pred == truth).mean(axis=-1)
    p_e = (p_t * p_m).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p_e < 1 - 1e-12, (p_o - p_e) / (1 - p_e), np.nan)


def ranking_agreement(true: np.ndarray, est: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``(S, n_systems)`` true and estimated system scores: whether the
    estimate orders every pair of systems as the truth does (ties included: a tie where
    the truth orders the pair, or an order where it ties, is not a recovery), and Kendall's
    tau-b between the two (0 where either ties every system, where tau-b is undefined).

    Examples
    --------
    >>> rec, tau = ranking_agreement(np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]),
    ...                              np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0]]))
    >>> rec.tolist(), np.round(tau, 3).tolist()
    ([1.0, 0.0], [1.0, 0.333])
    """
    st = np.sign(true[:, :, None] - true[:, None, :])
    se = np.sign(est[:, :, None] - est[:, None, :])
    upper = np.triu(np.ones(st.shape[1:], dtype=bool), 1)
    num = (st * se)[:, upper].sum(-1)
    nt, ne = np.abs(st)[:, upper].sum(-1), np.abs(se)[:, upper].sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where((nt > 0) & (ne > 0), num / np.sqrt(nt * ne), 0.0)
    return (st == se).all(axis=(1, 2)).astype(float), tau


def simulate_labels_task(task: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """One cell of the categorical budget with ``r`` raters, for every simulated study
    (module level, so that process pools can run it).

    Parameters
    ----------
    task : dict
        ``confusion`` (S, P, K, K) P(rated | true) of the cell's human panel,
        ``log_prior`` (S, K) log prevalence, ``truth`` (S, U) true labels of the cell's
        units, ``unit_answer`` (U,) each unit's answer, ``answer_system`` (A,) each
        answer's system (None: no ranking), ``scores`` (K,) label scores, ``r`` raters
        per answer, ``ks`` sentences per answer, ``rule`` (None, or ``kind`` and
        ``flagged`` for the answer labels of partial annotation), ``id`` and ``seed``.

    Returns
    -------
    (id, results) : tuple
        ``p_majority``, ``p_model`` (S,): share of units whose majority-vote / model label
        is the true one; ``kappa`` (S,): Cohen's kappa of the model label with the truth
        (NaN where the truth has one category); ``recovered``, ``tau`` (S, k) or None;
        ``partial_majority``, ``partial_model``, ``partial_kappa`` (model label; S, k)
        and ``full_majority``,
        ``full_model`` (S,) with a rule: share of answers whose answer label from ``k``
        (all) sentences is the true one.

    Examples
    --------
    >>> import numpy as np
    >>> task = {"confusion": np.eye(2)[None, None].repeat(2, 1), "log_prior":
    ...         np.log([[0.5, 0.5]]), "truth": np.array([[0, 1, 1, 0]]),
    ...         "unit_answer": np.arange(4), "answer_system": np.array([0, 0, 1, 1]),
    ...         "scores": np.array([0.0, 1.0]), "r": 2, "ks": [1], "rule": None,
    ...         "id": 3, "seed": 1}
    >>> tid, res = simulate_labels_task(task)
    >>> tid, res["p_majority"].tolist(), res["kappa"].tolist()
    (3, [1.0], [1.0])
    """
    rng = np.random.default_rng(task["seed"])
    conf, truth, ua = task["confusion"], task["truth"], task["unit_answer"]
    S_, P, K, _ = conf.shape
    U = ua.size
    A = int(ua.max()) + 1
    if (np.diff(ua) < 0).any():
        raise ValueError("simulate_labels_task: unit_answer must be sorted (units by answer)")
    r = task["r"]
    who = np.argsort(rng.random((S_, A, P)), axis=-1)[..., :r][:, ua]  # (S, U, r)
    s_idx = np.arange(S_)[:, None, None]
    rows = conf[s_idx, who, truth[..., None]]  # (S, U, r, K)
    cum = np.cumsum(rows, axis=-1)
    cum /= cum[..., -1:]
    labels = np.minimum((rng.random((S_, U, r, 1)) > cum).sum(-1), K - 1)  # (S, U, r)
    counts = (labels[..., None] == np.arange(K)).sum(axis=2)  # (S, U, K)
    majority = np.argmax(counts + 0.5 * rng.random(counts.shape), axis=-1)
    with np.errstate(divide="ignore"):
        log_conf = np.log(conf)
    lik = log_conf[s_idx, who, :, labels].sum(axis=2)  # (S, U, K)
    model_label = np.argmax(task["log_prior"][:, None, :] + lik, axis=-1)
    out: dict[str, Any] = {
        "p_majority": (majority == truth).mean(axis=1),
        "p_model": (model_label == truth).mean(axis=1),
        "kappa": cohen_kappa_rows(model_label, truth, K),
        "recovered": None,
        "tau": None,
    }
    ks = task["ks"]
    # a random order of each answer's units per study: the first k are its k sentences
    key = rng.random((S_, U))
    order = np.lexsort((key, np.broadcast_to(ua, key.shape)), axis=-1)
    start = np.r_[0, np.cumsum(np.bincount(ua, minlength=A))[:-1]]
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(U)[None, :] - start[ua[order]], axis=-1)
    sys_a, scores = task["answer_system"], task["scores"]
    if sys_a is not None and scores is not None:
        n_sys = int(sys_a.max()) + 1
        to_sys = (sys_a[:, None] == np.arange(n_sys)).astype(float)
        to_sys /= to_sys.sum(axis=0)
        unit_score = scores[labels].mean(axis=-1)  # (S, U)
        true_ans = np.add.reduceat(scores[truth], start, axis=1) / np.bincount(ua)
        true_sys = true_ans @ to_sys  # (S, n_sys)
        rec = np.empty((S_, len(ks)))
        taus = np.empty((S_, len(ks)))
        for j, k in enumerate(ks):
            sel = rank < k
            est = np.add.reduceat(np.where(sel, unit_score, 0.0), start, axis=1)
            est_sys = (est / np.add.reduceat(sel, start, axis=1)) @ to_sys
            rec[:, j], taus[:, j] = ranking_agreement(true_sys, est_sys)
        out["recovered"], out["tau"] = rec, taus
    rule = task["rule"]
    if rule is not None:
        everything = np.ones((S_, U), dtype=bool)
        true_ans = _answer_label(truth, everything, start, rule)
        kappa_k = np.empty((S_, len(ks)))
        for name, codes in (("majority", majority), ("model", model_label)):
            part = np.empty((S_, len(ks)))
            for j, k in enumerate(ks):
                ans = _answer_label(codes, rank < k, start, rule)
                part[:, j] = (ans == true_ans).mean(1)
                if name == "model":
                    kappa_k[:, j] = cohen_kappa_rows(ans, true_ans, K)
            out[f"partial_{name}"] = part
            full = _answer_label(codes, everything, start, rule)
            out[f"full_{name}"] = (full == true_ans).mean(axis=1)
        out["partial_kappa"] = kappa_k
    return task["id"], out


__all__ = [
    "LABEL_RULES",
    "CategoricalFit",
    "FitCell",
    "answer_rule",
    "cohen_kappa_rows",
    "prepare_categorical",
    "ranking_agreement",
    "simulate_labels_task",
]
