"""Annotation budgets and partial annotation from categorical fits (MACE, Dawid-Skene).

:func:`annotation_budget_categorical` answers, for other numbers of raters per unit and
sentences per answer, how often the label of a unit is correct (majority vote and the
model's label), how reliable the model's label is (Cohen's kappa with the truth), how
often the system ranking is recovered, and at what cost in rater hours;
:func:`partial_annotation_categorical` how often an answer-level label built from ``k``
annotated sentences (a segment rule such as ``any_negative``) equals the one from all of
the answer's sentences. Both simulate from the posterior of a latent-class fit: for each
simulated study one posterior draw, the fitted units' true labels drawn from their
posterior given that draw (:func:`~raterstats.models.latent_class.sample_true_class`),
``r`` raters drawn from the human panel of the (label space, design) cell and their labels
drawn from the rater model (each rater's confusion matrix,
:func:`~raterstats.design.categorical.confusion_draws`). The simulations run as
module-level tasks (:func:`simulate_labels_task`) on
:func:`raterstats.design.budget.run_tasks`; every task has its own seed stream, so the
results do not depend on the executor. :func:`raterstats.design.annotation_budget` and
:func:`raterstats.design.partial_annotation` dispatch here for categorical fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import Executor
from typing import Any

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.checks import check_counts
from raterstats.design.budget import run_tasks, unit_costs
from raterstats.design.budget_sim import (
    CategoricalFit,
    FitCell,
    answer_rule,
    prepare_categorical,
    simulate_labels_task,
)
from raterstats.health import flag_result
from raterstats.intervals import eti_np
from raterstats.ratings import Ratings
from raterstats.scales import SegmentRule
from raterstats.scoring import ScoreMapArg, score_vector

#: what ``reliability`` of a categorical budget is (``attrs["reliability_measure"]``)
RELIABILITY_MEASURE = (
    "reliability is Cohen's kappa between the model's label of a unit from r simulated "
    "raters and its true label (chance-corrected, comparable across label sets), mean over "
    "the simulated studies"
)


def _cell_scores(
    fit: CategoricalFit, cell: FitCell, score_map: ScoreMapArg, what: str
) -> np.ndarray | None:
    """Score of every category of the cell's label space (padded with 0), or None when
    the labels are not numbers and no ``score_map`` was given."""
    labels = fit.data.categories[cell.d]
    if score_map is None:
        try:
            [float(lb) for lb in labels]
        except ValueError:
            return None
    sv = score_vector(cell.space, labels, score_map, what)
    return np.r_[sv, np.zeros(fit.data.K - sv.size)]


def _summary(x: np.ndarray, prob: float) -> tuple[float, float, float]:
    """Mean and equal-tailed ``prob`` interval of per-study values (NaN skipped; all NaN
    when none is defined)."""
    ok = x[np.isfinite(x)]
    if ok.size == 0:
        return np.nan, np.nan, np.nan
    low, high = eti_np(ok, prob)
    return float(ok.mean()), float(low), float(high)


#: the task values that depend only on the cell (see ``_run``)
_CELL_DRAWS = ("confusion", "log_prior", "truth", "unit_answer")


def _run(
    fit: CategoricalFit,
    specs: list[tuple[FitCell, int, dict[str, Any]]],
    random_seed: int,
    *,
    max_workers: int | None,
    executor: Executor | None,
    client: Any,
) -> list[dict[str, Any]]:
    """Run one :func:`simulate_labels_task` per (cell, r, extra) spec; results in the
    order of ``specs``. Task ``i`` gets the ``i``-th child of the seed's stream."""
    seeds = np.random.SeedSequence([random_seed, 1]).spawn(max(1, len(specs)))
    tasks = []
    per_cell: dict[int, dict[str, Any]] = {}
    for i, (cell, r, extra) in enumerate(specs):
        task = fit.task(cell, r, seed=seeds[i], task_id=i, **extra)
        # the tasks of one cell share its draws as one object each (a Dask client
        # scatters them once instead of pickling them into every task)
        task.update(per_cell.setdefault(id(cell), {k: task[k] for k in _CELL_DRAWS}))
        tasks.append(task)
    out = run_tasks(
        simulate_labels_task, tasks, max_workers=max_workers, executor=executor, client=client
    )
    return [res for _, res in sorted(out, key=lambda t: t[0])]


def annotation_budget_categorical(
    dt: xr.DataTree,
    ratings: Ratings,
    *,
    n_raters: Iterable[int] = range(1, 6),
    n_sentences: Iterable[int] = range(1, 7),
    n_sims: int = 100,
    max_workers: int | None = None,
    executor: Executor | None = None,
    client: Any = None,
    random_seed: int = D.RANDOM_SEED,
    seconds_per_unit: Mapping[str, float] | None = None,
    score_map: ScoreMapArg = None,
    rule: str | SegmentRule | Mapping[str, str | SegmentRule] | None = None,
) -> xr.Dataset:
    """Projected label accuracy, reliability, ranking certainty and cost of other
    annotation designs, from a MACE or Dawid-Skene fit (what
    :func:`raterstats.design.annotation_budget` returns for categorical fits).

    For every (label space, design) cell with ratings, ``r`` raters per unit
    (``n_raters``; at most the cell's human panel, NaN beyond it) and, for sentence-level
    designs, ``k`` sentences per answer (``n_sentences``), ``n_sims`` simulated studies,
    each from one posterior draw (drawn without replacement; a fit with fewer draws, such
    as an EM point estimate, repeats its draws): the fitted units' true labels drawn from
    their posterior given the draw, ``r`` distinct raters per answer drawn from the
    human raters who rated in the cell (the same raters for all sentences of an answer),
    and their labels from the rater model. Per study:

    * ``p_correct_majority``: share of units whose majority-vote label (ties broken at
      random) is the true label;
    * ``p_correct_model``: the same for the model's label, the posterior mode of the true
      label given the simulated labels under the draw's parameters;
    * ``reliability``: Cohen's kappa between the model's label and the true label over the
      cell's units (undefined, and skipped, in a study whose true labels are all one
      category);
    * ``p_recovered`` / ``expected_tau``: whether the system ranking by the mean label
      score of the simulated labels (an answer's score: the mean over its raters and, for
      sentence-level designs, over ``k`` of its sentences chosen at random; nested
      subsets) orders every pair of systems as the ranking by the true labels' scores
      (an answer's true score: the mean over all its sentences) and the Kendall tau-b
      between the two, as in the ordinal version (0 for a study that ties every
      system). They need a ``system`` column and numeric labels (or ``score_map``);
      otherwise they are NaN and ``attrs["ranking_note"]`` says why.

    Sentence-level designs: by default the unit is the sentence, so ``p_correct_*`` and
    ``reliability`` do not depend on ``k`` (they are repeated along it, and
    ``attrs["unit_note"]`` says so); ``k`` changes the ranking and the cost (an answer
    with fewer than ``k`` sentences contributes all of them). With ``rule``, they are
    about the answer's label instead: the rule applied to ``k`` of its sentences' labels
    against the rule applied to all its sentences' true labels (as
    :func:`partial_annotation_categorical`), so that they depend on ``k`` and compare
    with whole-answer designs answer by answer. Whole-answer designs repeat their values
    along ``k``.

    Parameters
    ----------
    dt : xr.DataTree
        A MACE or Dawid-Skene fit (also of :func:`raterstats.design.combine_schemes`'
        tables: results are reported per measured dimension, the base dimension).
    ratings : Ratings
        The fitted ratings: which raters are human (``rater_kind``; all when there is no
        such column) and the costs (``duration_s``).
    n_raters, n_sentences : iterable of int
        Raters per unit and sentences per answer to project.
    n_sims : int
        Simulated studies per design point (at least 1).
    max_workers, executor, client
        Where the simulations run (see :func:`raterstats.design.annotation_budget`).
    random_seed : int
        Seed; every task gets its own stream, so results do not depend on the executor.
    seconds_per_unit : mapping of str to float, optional
        ``{design: seconds per answer (whole-answer) or per sentence}``: the costs for
        data without durations (default: from ``duration_s``,
        :func:`~raterstats.design.budget.rating_costs`).
    score_map : optional
        How a label is scored for the system ranking (as in
        :func:`raterstats.rank_systems`; default: numeric labels as numbers).
    rule : str, SegmentRule or mapping, optional
        Sentence-level designs: report the answer-level label from ``k`` sentences by this
        segment rule (``any_negative``, ``any_positive``, ``min``, ``max``, or ``{dimension:
        rule}``; see :func:`partial_annotation_categorical`) instead of the sentence's.

    Returns
    -------
    xr.Dataset
        Dims ``dimension`` (base dimensions), ``design``, ``n_raters``, ``k``:
        ``p_correct_majority``, ``p_correct_model`` and ``reliability``, each with
        ``_low`` / ``_high`` (90% of the simulated studies), ``p_recovered``,
        ``expected_tau``; ``cost_hours`` (``design, n_raters, k``); per (dimension,
        design) ``label_space`` (``""``: no cell), ``n_units``, ``n_answers`` and
        ``panel_size``; the coordinate ``has_sentences``. NaN in cells without ratings.
        Attrs: ``n_sims``, ``n_draws`` (distinct posterior draws), ``n_items``,
        ``seconds_per_unit``, ``reliability_measure``, ``ranking_note`` / ``panel_note``
        where they apply, and the fit's health (``fit_warning``, ``uncertainty_note``).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = MACE().fit(r, method="em", random_seed=1)
    >>> b = annotation_budget_categorical(dt, r, n_raters=[1, 3], n_sentences=[2], n_sims=5,
    ...                                   max_workers=1, random_seed=1)
    >>> b["p_correct_model"].dims
    ('dimension', 'design', 'n_raters', 'k')
    """
    what = "annotation_budget"
    check_counts(where=what, n_sims=(n_sims, 1))
    rs, ks = _positive(n_raters, "n_raters", what), _positive(n_sentences, "n_sentences", what)
    rng = np.random.default_rng(random_seed)
    fit = prepare_categorical(dt, ratings, n_sims=n_sims, rng=rng, what=what)
    bases, designs = fit.base_names, list(fit.data.designs)
    has_sent = fit.design_sentences()
    costs = unit_costs(ratings, seconds_per_unit, designs, what)
    cost = np.zeros((len(designs), len(rs), len(ks)))
    for g, des in enumerate(designs):
        per_answer = fit.answer_units(g, ks) if has_sent[g] else None
        for a, r in enumerate(rs):
            units = per_answer if per_answer is not None else np.full(len(ks), fit.n_answers(g))
            cost[g, a] = units * r * costs[des] / 3600
    shape = (len(bases), len(designs), len(rs), len(ks))
    names = ("p_correct_majority", "p_correct_model", "reliability")
    vals = {f"{n}{s}": np.full(shape, np.nan) for n in names for s in ("", "_low", "_high")}
    vals["p_recovered"] = np.full(shape, np.nan)
    vals["expected_tau"] = np.full(shape, np.nan)
    cell_info = {
        "label_space": np.full(shape[:2], "", dtype=object),
        "n_units": np.zeros(shape[:2], dtype=np.int64),
        "n_answers": np.zeros(shape[:2], dtype=np.int64),
        "panel_size": np.zeros(shape[:2], dtype=np.int64),
    }
    notes: list[str] = []
    specs: list[tuple[FitCell, int, dict[str, Any]]] = []
    where: list[tuple[int, int, int]] = []
    for cell in fit.cells:
        b, g = bases.index(cell.base), cell.g
        cell_info["label_space"][b, g] = cell.space
        cell_info["n_units"][b, g] = cell.units.size
        cell_info["n_answers"][b, g] = cell.n_answers
        cell_info["panel_size"][b, g] = cell.panel.size
        scores = _cell_scores(fit, cell, score_map, what)
        rank_why = fit.ranking_problem(cell, scores)
        if rank_why:
            notes.append(rank_why)
        extra = {
            "ks": ks if cell.sentences else [1],
            "scores": None if rank_why else scores,
            "rule": (
                fit.rule_task(cell, _rules(rule, [cell], what)[cell.space], ratings, what)
                if rule is not None and cell.sentences
                else None
            ),
        }
        for a, r in enumerate(rs):
            if r <= cell.panel.size:
                specs.append((cell, r, extra))
                where.append((b, g, a))
    results = _run(
        fit, specs, random_seed, max_workers=max_workers, executor=executor, client=client
    )
    undefined = []
    for (b, g, a), res in zip(where, results, strict=True):
        answer_level = "partial_kappa" in res
        keys = (
            ("partial_majority", "partial_model", "partial_kappa")
            if answer_level
            else ("p_majority", "p_model", "kappa")
        )
        if not np.isfinite(res[keys[2]]).any():
            undefined.append(f"{cell_info['label_space'][b, g]!r} x {designs[g]!r}")
        for name, key in zip(names, keys, strict=True):
            per_k = res[key] if answer_level else res[key][:, None]  # (S, k)
            for j in range(per_k.shape[1]):
                m, lo, hi = _summary(per_k[:, j], 0.9)
                sl = (b, g, a, j if answer_level else slice(None))
                vals[name][sl] = m
                vals[f"{name}_low"][sl] = lo
                vals[f"{name}_high"][sl] = hi
        if res["recovered"] is not None:
            vals["p_recovered"][b, g, a] = res["recovered"].mean(axis=0)
            vals["expected_tau"][b, g, a] = res["tau"].mean(axis=0)
    short = [
        f"{c.space!r} x {designs[c.g]!r} ({c.panel.size})"
        for c in fit.cells
        if c.panel.size < max(rs)
    ]
    dd = ("dimension", "design", "n_raters", "k")
    out = xr.Dataset(
        {
            **{n: (dd, v) for n, v in vals.items()},
            "cost_hours": (("design", "n_raters", "k"), cost),
            **{
                n: (("dimension", "design"), v.astype(str) if v.dtype == object else v)
                for n, v in cell_info.items()
            },
        },
        coords={
            "dimension": bases,
            "design": designs,
            "n_raters": rs,
            "k": ks,
            "has_sentences": ("design", [bool(h) for h in has_sent]),
        },
        attrs={
            "n_sims": n_sims,
            "n_draws": fit.n_distinct_draws,
            "n_items": fit.n_items,
            "model": str(dt.attrs.get("model", "")),
            "seconds_per_unit": ", ".join(f"{g} {v:.1f}" for g, v in costs.items()),
            "reliability_measure": RELIABILITY_MEASURE,
        },
    )
    if notes:
        out.attrs["ranking_note"] = "; ".join(dict.fromkeys(notes))
    sentence_designs = [g for g, h in zip(designs, has_sent, strict=True) if h]
    if sentence_designs:
        out.attrs["unit_note"] = (
            f"sentence-level designs ({', '.join(sentence_designs)}): p_correct_* and "
            + (
                f"reliability are about the answer's label from k sentences by the rule "
                f"({_describe_rule(rule)}), against the rule on all its sentences' true labels"
                if rule is not None
                else "reliability are per sentence (the same for every k); pass rule= for "
                "the answer's label from k sentences"
            )
        )
    if undefined:
        out.attrs["reliability_note"] = (
            "reliability (kappa) is NaN where the true labels fell in one category in every "
            "simulated study (kappa is undefined): " + ", ".join(dict.fromkeys(undefined))
        )
    if short:
        out.attrs["panel_note"] = (
            "NaN where r exceeds the human panel of the cell (raters who rated in it): "
            + ", ".join(short)
        )
    return flag_result(out, dt)


def _positive(values: Iterable[int], name: str, what: str) -> list[int]:
    """``values`` as a non-empty list of positive integers, or ValueError."""
    out = [int(x) for x in values]
    if not out or min(out) < 1:
        raise ValueError(f"{what}: {name} must be positive integers, got {out}")
    return out


def _rules(
    rule: str | SegmentRule | Mapping[str, str | SegmentRule],
    cells: list[FitCell],
    what: str,
) -> dict[str, SegmentRule]:
    """The segment rule of every cell's label space, from one rule or ``{dimension:
    rule}`` (keyed by label space or base dimension)."""
    out = {}
    for c in cells:
        r: Any = rule
        if isinstance(rule, Mapping):
            key = c.space if c.space in rule else c.base
            if key not in rule:
                raise ValueError(
                    f"{what}: rule gives no segment rule for dimension {c.base!r} "
                    f"(label space {c.space!r}); keys: {sorted(rule)}"
                )
            r = rule[key]
        out[c.space] = answer_rule(r, what)
    return out


def _describe_rule(rule: Any) -> str:
    """A rule argument in words."""
    if isinstance(rule, Mapping):
        return ", ".join(f"{k}: {getattr(v, 'name', v)}" for k, v in rule.items())
    return str(getattr(rule, "name", rule))


def partial_annotation_categorical(
    dt: xr.DataTree,
    ratings: Ratings,
    *,
    ks: Iterable[int] = range(1, 7),
    design: str = "fine",
    n_sims: int = 100,
    ci_prob: float | None = None,
    random_seed: int = D.RANDOM_SEED,
    rule: str | SegmentRule | Mapping[str, str | SegmentRule] = "any_negative",
    n_raters: Iterable[int] = range(1, 6),
    max_workers: int | None = None,
    executor: Executor | None = None,
    client: Any = None,
) -> xr.Dataset:
    """What is lost when raters annotate only ``k`` of an answer's sentences, from a MACE
    or Dawid-Skene fit of sentence ratings (what :func:`raterstats.design.partial_annotation`
    returns for such a fit).

    For every label space the sentence-level ``design`` rates, ``r`` raters per answer
    (``n_raters``; at most the human panel, NaN beyond it) and ``k`` sentences per answer
    (``ks``): ``n_sims`` simulated studies, each from one posterior draw (as in
    :func:`annotation_budget_categorical`: true sentence labels drawn from their posterior
    given the draw, ``r`` raters from the cell's human panel labelling every sentence of
    the answer), and the probability that the answer-level label built from ``k``
    sentences chosen at random (nested subsets; all of them when the answer has fewer)
    equals the true answer-level label built from the true labels of *all* its
    sentences. The answer-level label applies ``rule`` (a name of
    :data:`raterstats.scales.SEGMENT_RULES` or a :class:`~raterstats.scales.SegmentRule`:
    ``any_negative``, the default: the answer is negative if any annotated sentence is;
    ``any_positive``; ``min``; ``max``) to the sentences' labels: each sentence's majority
    vote over its raters (ties broken at random) for ``p_correct_majority``, the model's
    label (the posterior mode given the simulated labels under the draw's parameters) for
    ``p_correct_model``.

    Parameters
    ----------
    dt : xr.DataTree
        A MACE or Dawid-Skene fit with a sentence-level design.
    ratings : Ratings
        The fitted ratings: the scales (which levels are negative or positive) and which
        raters are human.
    ks : iterable of int
        Sentences per answer.
    design : str
        The sentence-level design.
    n_sims : int
        Simulated studies (at least 1).
    ci_prob : float, optional
        Interval mass (default: ArviZ's ``stats.ci_prob``).
    random_seed : int
        Seed; every task gets its own stream.
    rule : str, SegmentRule or mapping
        The answer rule, or ``{dimension: rule}`` by base dimension or label space.
    n_raters : iterable of int
        Raters per answer.
    max_workers, executor, client
        Where the simulations run (see :func:`raterstats.design.annotation_budget`).

    Returns
    -------
    xr.Dataset
        Dims ``dimension`` (base dimensions), ``n_raters``, ``k``:
        ``p_correct_majority_mean`` / ``_low`` / ``_high`` and ``p_correct_model_mean`` /
        ``_low`` / ``_high`` (mean and ``ci_prob`` interval over the simulated studies,
        a posterior where the fit has draws); ``p_correct_majority_full`` and
        ``p_correct_model_full`` (``dimension, n_raters``: every sentence annotated,
        from the same simulated labels, so ``k`` at least the longest answer equals it);
        per dimension ``label_space``, ``rule``, ``n_answers`` and ``max_sentences``.
        Attrs: ``ci_prob``, ``n_sims``, ``n_draws``, ``design``, the health of the fit.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings.filter(design="fine")
    >>> dt = MACE().fit(r, method="em", random_seed=1)
    >>> ds = partial_annotation_categorical(dt, r, ks=[1, 6], n_raters=[2], n_sims=5,
    ...                                     max_workers=1, random_seed=1)
    >>> ds["p_correct_majority_mean"].dims
    ('dimension', 'n_raters', 'k')
    """
    what = "partial_annotation"
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
    check_counts(where=what, n_sims=(n_sims, 1))
    kk, rs = _positive(ks, "ks", what), _positive(n_raters, "n_raters", what)
    rng = np.random.default_rng(random_seed)
    fit = prepare_categorical(dt, ratings, n_sims=n_sims, rng=rng, what=what)
    designs = list(fit.data.designs)
    if design not in designs:
        raise ValueError(f"{what}: the fit has no design {design!r}; designs: {designs}")
    g = designs.index(design)
    cells = [c for c in fit.cells if c.g == g]
    if not fit.design_sentences()[g]:
        raise ValueError(
            f"{what}: design {design!r} rates whole answers; partial annotation needs a "
            "sentence-level design (ratings with a segment)"
        )
    rules = _rules(rule, cells, what)
    bases = [c.base for c in cells]
    shape = (len(cells), len(rs), len(kk))
    stats = {
        f"p_correct_{m}_{s}": np.full(shape, np.nan)
        for m in ("majority", "model")
        for s in ("mean", "low", "high")
    }
    full = {f"p_correct_{m}_full": np.full(shape[:2], np.nan) for m in ("majority", "model")}
    specs: list[tuple[FitCell, int, dict[str, Any]]] = []
    where: list[tuple[int, int]] = []
    for i, c in enumerate(cells):
        extra = {"ks": kk, "scores": None, "rule": fit.rule_task(c, rules[c.space], ratings, what)}
        for a, r in enumerate(rs):
            if r <= c.panel.size:
                specs.append((c, r, extra))
                where.append((i, a))
    results = _run(
        fit, specs, random_seed, max_workers=max_workers, executor=executor, client=client
    )
    for (i, a), res in zip(where, results, strict=True):
        for m in ("majority", "model"):
            part = res[f"partial_{m}"]  # (S, k)
            for j in range(len(kk)):
                mean, lo, hi = _summary(part[:, j], ci_prob)
                stats[f"p_correct_{m}_mean"][i, a, j] = mean
                stats[f"p_correct_{m}_low"][i, a, j] = lo
                stats[f"p_correct_{m}_high"][i, a, j] = hi
            full[f"p_correct_{m}_full"][i, a] = float(np.mean(res[f"full_{m}"]))
    dd = ("dimension", "n_raters", "k")
    out = xr.Dataset(
        {
            **{n: (dd, v) for n, v in stats.items()},
            **{n: (("dimension", "n_raters"), v) for n, v in full.items()},
            "label_space": ("dimension", [c.space for c in cells]),
            "rule": ("dimension", [rules[c.space].name for c in cells]),
            "n_answers": ("dimension", [c.n_answers for c in cells]),
            "max_sentences": ("dimension", [c.max_sentences for c in cells]),
        },
        coords={"dimension": bases, "n_raters": rs, "k": kk},
        attrs={
            "ci_prob": ci_prob,
            "n_sims": n_sims,
            "n_draws": fit.n_distinct_draws,
            "design": design,
            "model": str(dt.attrs.get("model", "")),
        },
    )
    short = [f"{c.space!r} ({c.panel.size})" for c in cells if c.panel.size < max(rs)]
    if short:
        out.attrs["panel_note"] = (
            "NaN where r exceeds the human panel of the dimension in the design: "
            + ", ".join(short)
        )
    return flag_result(out, dt)


__all__ = [
    "RELIABILITY_MEASURE",
    "annotation_budget_categorical",
    "partial_annotation_categorical",
]
