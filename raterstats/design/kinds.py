"""Design comparison across kinds of judgment: which design (absolute ratings, pairwise
comparisons, per-question rankings) recovers the true ranking of the systems with a target
probability for the fewest rater hours.

:class:`DesignOption` declares one candidate design (its kind, size and seconds per
judgment); :func:`compare_design_kinds` simulates replicate studies of every option from
one truth (:func:`raterstats.simulate_kinds.simulate_kinds`), ranks the systems of each
with the option's estimator and reports the recovery probabilities, Kendall's tau and the
cost (the default estimators are in :mod:`raterstats.design.kind_estimators`);
:func:`kinds_table` is its table for a report and :func:`cheapest_kind` the cheapest
option reaching a target (also reached through :func:`raterstats.design.cheapest_design`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import xarray as xr
from scipy.stats import binomtest, kendalltau

from raterstats import defaults as D
from raterstats import schema as S
from raterstats.checks import check_arguments, check_counts, real_problem
from raterstats.design.budget import run_tasks
from raterstats.design.kind_estimators import DEFAULT_ESTIMATORS, Estimator
from raterstats.formatting import visible
from raterstats.simulate_kinds import KINDS, SimulatedKinds, simulate_kinds, true_strengths

#: ``attrs["analysis"]`` of a :func:`compare_design_kinds` result
KINDS_ANALYSIS = "design_kinds"
#: the criteria a result can be asked for the cheapest design on
KIND_CRITERIA = ("p_recovered", "p_best_first", "mean_tau")
#: simulate_kinds arguments that describe the truth and the panel (the rest is the design)
TRUTH_SETTINGS = (
    "theta", "n_systems", "theta_sd", "n_questions", "answer_sd", "n_raters", "alpha_sd",
    "severity_sd", "n_levels", "cutpoints", "position_bias", "beta_sd", "nu",
    "pair_cutpoints", "dimension",
)  # fmt: skip
#: simulate_kinds arguments each option decides
DESIGN_SETTINGS = (
    "raters_per_answer", "comparisons_per_question", "max_grade", "ties", "ranking_size",
    "rankings_per_question", "kinds", "random_seed",
)  # fmt: skip
#: replicates per task of the executor (results do not depend on it)
_CHUNK = 20


@dataclass(frozen=True)
class DesignOption:
    """One candidate design of :func:`compare_design_kinds`.

    Parameters
    ----------
    kind : {"absolute", "pairs", "rankings"}
        Absolute ratings of each answer, pairwise comparisons of two systems' answers, or
        rankings of several systems' answers to a question.
    size : int or (int, int)
        absolute: raters per answer; pairs: comparisons per question; rankings:
        ``(systems per ranking, rankings per question)`` (``(n_systems, 1)``: one full
        ranking per question).
    seconds_per_judgment : float
        Rater seconds of one judgment: one rating of one answer, one comparison, or one
        ranking of ``size[0]`` answers.
    label : str, optional
        The option's name in results (default from kind and size, e.g. ``"pairs x6"``);
        labels must differ across the options compared.
    max_grade : int
        Pairs: ``K`` of a graded ``-K..K`` outcome (1: binary).
    ties : bool
        Pairs: binary outcomes with a tie option (Davidson).

    Raises
    ------
    ValueError
        Every bad field at once.

    Examples
    --------
    >>> DesignOption("pairs", 6, 40).label
    'pairs x6'
    >>> o = DesignOption("rankings", (3, 2), 90.0)
    >>> o.label, o.describe_size(), o.n_judgments(n_systems=4, n_questions=10)
    ('rankings 3x2', '2 rankings of 3 systems per question', 20)
    >>> DesignOption("absolute", 0, 30)
    Traceback (most recent call last):
    ...
    ... # doctest: +ELLIPSIS
    raterstats.checks.ArgumentError: DesignOption: absolute size (raters per answer) must be ...
    """

    kind: str
    size: int | tuple[int, int]
    seconds_per_judgment: float
    label: str | None = None
    max_grade: int = 1
    ties: bool = False

    def __post_init__(self) -> None:
        problems: list[str | None] = []
        if self.kind not in KINDS:
            problems.append(f"kind must be one of {KINDS}, not {self.kind!r}")
        size = self.size
        if self.kind == "rankings":
            ok = (
                isinstance(size, Sequence)
                and not isinstance(size, str)
                and len(size) == 2
                and all(_is_int(v) for v in size)
            )
            if not ok or int(size[0]) < 2 or int(size[1]) < 1:  # type: ignore[index]
                problems.append(
                    "rankings size must be (systems per ranking >= 2, rankings per question "
                    f">= 1), not {size!r}"
                )
            else:
                object.__setattr__(self, "size", (int(size[0]), int(size[1])))  # type: ignore[index]
        elif self.kind in KINDS:
            what = "raters per answer" if self.kind == "absolute" else "comparisons per question"
            if not _is_int(size) or int(size) < 1:  # type: ignore[arg-type]
                problems.append(f"{self.kind} size ({what}) must be an integer >= 1, not {size!r}")
            else:
                object.__setattr__(self, "size", int(size))  # type: ignore[arg-type]
        problems.append(
            real_problem("seconds_per_judgment", self.seconds_per_judgment, low=0, open_low=True)
        )
        if not _is_int(self.max_grade) or int(self.max_grade) < 1:
            problems.append(f"max_grade must be an integer >= 1, not {self.max_grade!r}")
        elif self.kind != "pairs" and (self.max_grade != 1 or self.ties):
            problems.append("max_grade and ties apply to pairs only")
        elif self.ties and self.max_grade > 1:
            problems.append("ties=True applies to binary pairs (max_grade=1)")
        if not isinstance(self.ties, bool):
            problems.append(f"ties must be True or False, not {self.ties!r}")
        if self.label is not None and (not isinstance(self.label, str) or not self.label):
            problems.append(f"label must be a non-empty string, not {self.label!r}")
        check_arguments(*problems, where="DesignOption")
        object.__setattr__(self, "seconds_per_judgment", float(self.seconds_per_judgment))
        if self.label is None:
            object.__setattr__(self, "label", self._default_label())

    def _default_label(self) -> str:
        if self.kind == "rankings":
            r, n = self.size  # type: ignore[misc]
            return f"rankings {r}x{n}"
        grade = ""
        if self.max_grade > 1:
            grade = f" graded {self.max_grade}"
        elif self.ties:
            grade = " with ties"
        return f"{self.kind} x{self.size}{grade}"

    def describe_size(self) -> str:
        """The size in words (``"3 raters per answer"``)."""
        if self.kind == "absolute":
            return f"{self.size} {_plural(int(self.size), 'rater')} per answer"  # type: ignore[arg-type]
        if self.kind == "pairs":
            outcome = (
                f", graded -{self.max_grade}..{self.max_grade}"
                if self.max_grade > 1
                else (", a / b / tie" if self.ties else "")
            )
            n_c = int(self.size)  # type: ignore[arg-type]
            return f"{n_c} {_plural(n_c, 'comparison')} per question{outcome}"
        r, n = self.size  # type: ignore[misc]
        return f"{n} {_plural(n, 'ranking')} of {r} systems per question"

    def study_settings(self) -> dict[str, Any]:
        """The :func:`~raterstats.simulate_kinds.simulate_kinds` arguments of this design."""
        if self.kind == "absolute":
            return {"kinds": ["absolute"], "raters_per_answer": self.size}
        if self.kind == "pairs":
            return {
                "kinds": ["pairs"],
                "comparisons_per_question": self.size,
                "max_grade": self.max_grade,
                "ties": self.ties,
            }
        r, n = self.size  # type: ignore[misc]
        return {"kinds": ["rankings"], "ranking_size": r, "rankings_per_question": n}

    def n_judgments(self, *, n_systems: int, n_questions: int) -> int:
        """Judgments of one study: ratings (answers x raters per answer), comparisons or
        rankings."""
        if self.kind == "absolute":
            return n_questions * n_systems * int(self.size)  # type: ignore[arg-type]
        if self.kind == "pairs":
            return n_questions * int(self.size)  # type: ignore[arg-type]
        return n_questions * self.size[1]  # type: ignore[index]


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


# ----------------------------------------------------------------------------- estimators


def _resolve_estimators(
    kinds: set[str], estimators: Mapping[str, Estimator] | None
) -> tuple[dict[str, Estimator], str]:
    given = dict(estimators or {})
    bad = [k for k in given if k not in KINDS]
    if bad:
        raise ValueError(
            f"compare_design_kinds: estimators for unknown kinds {bad}; kinds: {KINDS}"
        )
    out: dict[str, Estimator] = {}
    words = []
    for kind in KINDS:
        if kind not in kinds:
            continue
        if kind in given:
            fn = given[kind]
            if not callable(fn):
                raise ValueError(f"compare_design_kinds: estimators[{kind!r}] is not callable")
            name = getattr(fn, "__qualname__", None) or type(fn).__name__
            out[kind] = fn
            words.append(f"{kind}: {visible(str(name))} (given)")
            continue
        fn, text = DEFAULT_ESTIMATORS[kind]
        out[kind] = fn
        words.append(f"{kind}: {text}")
    return out, "; ".join(words)


# ----------------------------------------------------------------------------- replicates


def replicate_metrics(theta: np.ndarray, scores: np.ndarray) -> tuple[bool, bool, float]:
    """Whether estimated ``scores`` order every pair of systems as the true ``theta``
    (distinct) does, whether they put the true best system strictly first, and Kendall's
    tau-b between them (0 when the scores tie every system). A NaN score (a system the
    study left unscored) ranks below every scored system, tied with the other NaNs.

    Examples
    --------
    >>> rec, first, tau = replicate_metrics(np.array([2.0, 1.0, 0.0]), np.array([5.0, 3.0, 4.0]))
    >>> rec, first, round(tau, 4)
    (False, True, 0.3333)
    >>> replicate_metrics(np.array([2.0, 1.0, 0.0]), np.array([1.0, np.nan, np.nan]))
    (False, True, 0.816496580927726)
    """
    s = np.asarray(scores, dtype=float)
    finite = np.isfinite(s)
    low = (s[finite].min() - 1.0) if finite.any() else 0.0
    s = np.where(finite, s, low)
    true_sign = np.sign(theta[:, None] - theta[None, :])
    recovered = bool(np.array_equal(true_sign, np.sign(s[:, None] - s[None, :])))
    best = int(np.argmax(theta))
    first = bool((s[best] > np.delete(s, best)).all())
    tau = float(kendalltau(theta, s).statistic)
    return recovered, first, tau if np.isfinite(tau) else 0.0


def _aligned(scores: Any, systems: list[str], what: str) -> tuple[np.ndarray, str | None]:
    if not isinstance(scores, xr.DataArray):
        raise ValueError(
            f"{what}: the estimator returned {type(scores).__name__}, not an xr.DataArray"
        )
    extra = [d for d in scores.dims if d != S.SYSTEM]
    if S.SYSTEM not in scores.dims or any(scores.sizes[d] != 1 for d in extra):
        raise ValueError(
            f"{what}: the estimator must return scores with the one dim 'system', got dims "
            f"{tuple(scores.dims)}"
        )
    scores = scores.squeeze(extra, drop=True) if extra else scores
    got = [str(v) for v in scores[S.SYSTEM].values]
    unknown = sorted(set(got) - set(systems))
    if unknown or len(set(got)) != len(got):
        raise ValueError(
            f"{what}: the estimator's systems {got} are not distinct systems of the study {systems}"
        )
    pos = {s: k for k, s in enumerate(got)}
    vals = np.asarray(scores.values, dtype=float)
    out = np.array([vals[pos[s]] if s in pos else np.nan for s in systems])
    warn = scores.attrs.get("fit_warning")
    return out, (str(warn) if warn else None)


def kinds_replicates_task(task: dict[str, Any]) -> tuple[int, int, np.ndarray, list[str]]:
    """One task of :func:`compare_design_kinds` (module level, so that process pools can
    run it): simulate the replicate studies of one option and score their rankings.

    Parameters
    ----------
    task : dict
        ``settings`` (:func:`~raterstats.simulate_kinds.simulate_kinds` arguments, the
        option's included), ``seeds`` (one per replicate), ``kind``, ``estimator``,
        ``systems`` and ``theta`` (the truth), ``option`` (its index), ``start`` (the
        first replicate's index) and ``label``.

    Returns
    -------
    (option, start, metrics, warnings) : tuple
        ``metrics`` (replicate, 4): recovered, best first, tau, incomplete (some system
        without a score); ``warnings``: the estimator's fit warnings.

    Examples
    --------
    >>> import numpy as np
    >>> from raterstats.design import mean_rating_scores
    >>> task = {"settings": {"theta": {"a": 3.0, "b": -3.0}, "n_questions": 5,
    ...                      "kinds": ["absolute"], "raters_per_answer": 2},
    ...         "seeds": [1, 2], "kind": "absolute", "estimator": mean_rating_scores,
    ...         "systems": ["a", "b"], "theta": np.array([3.0, -3.0]), "option": 0,
    ...         "start": 0, "label": "absolute x2"}
    >>> kinds_replicates_task(task)[2].tolist()
    [[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0]]
    """
    out = np.zeros((len(task["seeds"]), 4))
    flagged: list[str] = []
    for k, seed in enumerate(task["seeds"]):
        study = simulate_kinds(**task["settings"], random_seed=int(seed))
        what = f"compare_design_kinds, design {visible(task['label'])}"
        try:
            raw = task["estimator"](study.table(task["kind"]))
        except Exception as err:
            raise ValueError(
                f"{what}, replicate {task['start'] + k + 1}: the estimator failed "
                f"({type(err).__name__}: {err})"
            ) from err
        scores, warn = _aligned(raw, task["systems"], what)
        if warn:
            flagged.append(warn)
        rec, first, tau = replicate_metrics(task["theta"], scores)
        out[k] = (rec, first, tau, float(np.isnan(scores).any()))
    return task["option"], task["start"], out, flagged


# ----------------------------------------------------------------------------- the study


def _truth_settings(
    study: SimulatedKinds | Mapping[str, Any] | None, random_seed: int
) -> dict[str, Any]:
    if isinstance(study, SimulatedKinds):
        settings = {k: v for k, v in study.settings.items() if k in TRUTH_SETTINGS}
    else:
        settings = dict(study or {})
        design = sorted(k for k in settings if k in DESIGN_SETTINGS)
        unknown = sorted(k for k in settings if k not in TRUTH_SETTINGS and k not in design)
        if design or unknown:
            raise ValueError(
                "compare_design_kinds: study settings "
                + (f"{design} are decided by each design option; " if design else "")
                + (f"{unknown} are not simulate_kinds arguments; " if unknown else "")
                + f"the truth is set by {list(TRUTH_SETTINGS)}"
            )
    if not isinstance(settings.get("theta"), Mapping):
        settings["theta"] = true_strengths(
            theta=settings.get("theta"),
            n_systems=settings.get("n_systems", 4),
            theta_sd=settings.get("theta_sd", 0.5),
            random_seed=random_seed,
        )
    settings.pop("n_systems", None)
    return settings


def compare_design_kinds(
    options: Sequence[DesignOption],
    *,
    study: SimulatedKinds | Mapping[str, Any] | None = None,
    n_questions: int | None = None,
    n_replicates: int = 200,
    target: float = 0.9,
    estimators: Mapping[str, Estimator] | None = None,
    ci_prob: float | None = None,
    random_seed: int = D.RANDOM_SEED,
    max_workers: int | None = 1,
    executor: Executor | None = None,
    client: Any = None,
) -> xr.Dataset:
    """Which design recovers the true ranking of the systems with probability ``target``
    for the fewest rater hours: absolute ratings, pairs and rankings compared on one truth.

    For each option, ``n_replicates`` studies of ``n_questions`` questions are simulated
    from the same truth (:func:`~raterstats.simulate_kinds.simulate_kinds`: the systems'
    strengths ``theta`` and the answer, rater and scale settings of ``study``); each
    replicate draws new answers and a new panel, and replicate ``r`` of every option uses
    the same answers and panel (common random numbers, so that the options differ only by
    their design). The systems of each study are ranked by the option's estimator and
    compared with the true order of ``theta``.

    Parameters
    ----------
    options : sequence of DesignOption
        The candidate designs (distinct labels).
    study : SimulatedKinds or mapping, optional
        The truth: a simulated study (its ``theta`` and settings; its design is replaced
        by each option's) or :func:`~raterstats.simulate_kinds.simulate_kinds` keyword
        arguments of the truth (:data:`TRUTH_SETTINGS`; ``theta`` drawn from
        ``random_seed`` when not given). Default: simulate_kinds' defaults. Graded pair
        options use the truth's ``pair_cutpoints`` when they have ``2 max_grade`` values,
        else symmetric ones.
    n_questions : int, optional
        Questions per simulated study (default: the study's, 20 without one).
    n_replicates : int
        Simulated studies per option.
    target : float
        The probability of recovering the true order that a design must reach.
    estimators : mapping of kind to callable, optional
        ``{kind: f(table) -> xr.DataArray of scores by system}`` (a higher score is a
        better system; a module-level function when running on processes); a system
        missing or NaN ranks last. Defaults: absolute, the mean rating per system (the
        OrdinalRaters model is too slow for hundreds of replicates); pairs, Bradley-Terry
        MAP strengths; rankings, Plackett-Luce MAP strengths (the models are looked up in
        the registry when needed).
    ci_prob : float, optional
        Probability of the Wilson intervals of the recovery probabilities (default
        ArviZ's ``stats.ci_prob``).
    random_seed : int
        Seed; every replicate has its own stream, so results do not depend on the
        executor.
    max_workers, executor, client
        Where the replicates run (:func:`~raterstats.design.budget.run_tasks`): here
        (``max_workers=1``, the default), on local processes (``max_workers`` of them,
        ``None`` one per core), on a ``concurrent.futures`` executor, or on a Dask
        client. Local processes start by ``"spawn"`` (the replicates use polars, which a
        forked process can hang on): given estimators must then be importable functions
        (not defined in a notebook or in ``__main__``) and a script must call this under
        ``if __name__ == "__main__":``.

    Returns
    -------
    xr.Dataset
        Dim ``design`` (the options' labels; coordinates ``kind`` and ``size`` in
        words): ``p_recovered`` (the estimated order equals the true one: every pair of
        systems ordered as in ``theta``, a tie is not a recovery) with
        ``p_recovered_low`` / ``_high``, ``p_best_first`` (the true best system strictly
        first) with its interval, ``mean_tau`` (Kendall's tau-b with the truth, 0 for a
        study that ties every system), ``n_judgments`` per study,
        ``seconds_per_judgment``, ``rater_hours`` (judgments x seconds / 3600),
        ``reaches_target`` (``p_recovered >= target``), ``n_incomplete`` (replicates with
        a system left unscored) and ``n_flagged`` (replicates whose estimator's fit
        failed its checks). ``attrs``: ``cheapest`` (the label of the cheapest option
        reaching the target, or a sentence saying none does), ``verdict`` (a sentence),
        ``target``, ``estimators`` (in words), ``n_replicates``, ``n_questions``,
        ``true_order``, ``ci_prob``, ``interval``, and ``fit_warning`` when an estimator's
        fit failed in some replicate.

    Raises
    ------
    ValueError
        Bad options or arguments, a design the truth cannot carry (more raters per answer
        than the panel), or a default estimator whose model is not installed.

    Examples
    --------
    >>> from raterstats.design import DesignOption, compare_design_kinds
    >>> opts = [DesignOption("absolute", 1, 30), DesignOption("absolute", 3, 30)]
    >>> ds = compare_design_kinds(opts, study={"theta": [1.0, 0.0, -1.0]}, n_questions=10,
    ...                           n_replicates=20, max_workers=1, random_seed=1)
    >>> ds["rater_hours"].values.tolist(), ds.attrs["cheapest"]
    ([0.25, 0.75], 'absolute x3')
    """
    check_counts(where="compare_design_kinds", n_replicates=(n_replicates, 1))
    check_arguments(
        real_problem("target", target, low=0, high=1, open_low=True),
        where="compare_design_kinds",
    )
    prob = D.resolve_ci_prob(ci_prob)
    opts: list[DesignOption] = [options] if isinstance(options, DesignOption) else list(options)
    if not opts or not all(isinstance(o, DesignOption) for o in opts):
        raise ValueError("compare_design_kinds: options must be a non-empty list of DesignOption")
    labels = [str(o.label) for o in opts]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"compare_design_kinds: design labels must differ; repeated: {dup}")
    truth = _truth_settings(study, random_seed)
    if n_questions is not None:
        truth["n_questions"] = n_questions
    nq = int(truth.get("n_questions", 20))
    systems = list(truth["theta"])
    theta = np.asarray(list(truth["theta"].values()), dtype=float)
    fns, words = _resolve_estimators({o.kind for o in opts}, estimators)
    settings = []
    for o in opts:
        s = {**truth, **o.study_settings()}
        cuts = truth.get("pair_cutpoints")
        if o.kind != "pairs" or cuts is None or len(cuts) != 2 * o.max_grade:
            s.pop("pair_cutpoints", None)
        simulate_kinds(**s, random_seed=random_seed)  # every problem before any work
        settings.append(s)
    seeds = np.random.SeedSequence(random_seed).generate_state(n_replicates).tolist()
    tasks = [
        {
            "settings": settings[g],
            "seeds": seeds[start : start + _CHUNK],
            "kind": o.kind,
            "estimator": fns[o.kind],
            "systems": systems,
            "theta": theta,
            "option": g,
            "start": start,
            "label": labels[g],
        }
        for g, o in enumerate(opts)
        for start in range(0, n_replicates, _CHUNK)
    ]
    results = run_tasks(
        kinds_replicates_task,
        tasks,
        max_workers=max_workers,
        executor=executor,
        client=client,
        start_method="spawn",  # the tasks use polars, which a forked worker can hang on
    )
    metrics = np.zeros((len(opts), n_replicates, 4))
    flagged: dict[str, list[str]] = {}
    for g, start, m, warns in results:
        metrics[g, start : start + m.shape[0]] = m
        if warns:
            flagged.setdefault(labels[g], []).extend(warns)
    return _assemble(opts, labels, metrics, flagged, systems, theta, nq, target, prob, words)


def _assemble(
    opts: list[DesignOption],
    labels: list[str],
    metrics: np.ndarray,
    flagged: dict[str, list[str]],
    systems: list[str],
    theta: np.ndarray,
    nq: int,
    target: float,
    prob: float,
    words: str,
) -> xr.Dataset:
    n_rep = metrics.shape[1]
    data: dict[str, Any] = {}
    for name, col in (("p_recovered", 0), ("p_best_first", 1)):
        k = metrics[:, :, col].sum(axis=1).round().astype(int)
        ci = [binomtest(int(x), n_rep).proportion_ci(prob, method="wilson") for x in k]
        data[name] = k / n_rep
        data[f"{name}_low"] = np.array([c.low for c in ci])
        data[f"{name}_high"] = np.array([c.high for c in ci])
    data["mean_tau"] = metrics[:, :, 2].mean(axis=1)
    n_j = np.array([o.n_judgments(n_systems=len(systems), n_questions=nq) for o in opts])
    secs = np.array([o.seconds_per_judgment for o in opts])
    data["n_judgments"] = n_j
    data["seconds_per_judgment"] = secs
    data["rater_hours"] = n_j * secs / 3600
    data["reaches_target"] = data["p_recovered"] >= target
    data["n_incomplete"] = metrics[:, :, 3].sum(axis=1).astype(int)
    data["n_flagged"] = np.array([len(flagged.get(lab, [])) for lab in labels])
    order = np.argsort(-theta, kind="stable")
    ds = xr.Dataset(
        {k: ("design", v) for k, v in data.items()},
        coords={
            "design": labels,
            "kind": ("design", [o.kind for o in opts]),
            "size": ("design", [o.describe_size() for o in opts]),
        },
        attrs={
            "analysis": KINDS_ANALYSIS,
            "target": float(target),
            "estimators": words,
            "n_replicates": n_rep,
            "n_questions": nq,
            "n_systems": len(systems),
            "true_order": " > ".join(visible(systems[k]) for k in order),
            "ci_prob": prob,
            "interval": f"Wilson score interval ({prob:.0%}) over the replicates",
            "recovered": (
                "the study's ranking orders every pair of systems as their true strengths "
                "do (a tie is not a recovery; a system without a score ranks last)"
            ),
        },
    )
    if flagged:
        ds.attrs["fit_warning"] = "; ".join(
            f"design {visible(lab)}: {len(w)} of {n_rep} replicates ({w[0]})"
            for lab, w in flagged.items()
        )
    best = cheapest_kind(ds, target=target)
    if best.height:
        row = best.row(0, named=True)
        ds.attrs["cheapest"] = row["design"]
        ds.attrs["verdict"] = (
            f"{visible(row['design'])} ({row['size']}) is the cheapest design that recovers "
            f"the true order with probability >= {target:g}: {row['value']:.2f} "
            f"({ds['p_recovered_low'].sel(design=row['design']).item():.2f}-"
            f"{ds['p_recovered_high'].sel(design=row['design']).item():.2f}) over {n_rep} "
            f"simulated studies, {row['rater_hours']:.3g} rater hours"
        )
    else:
        top = int(np.argmax(data["p_recovered"]))
        ds.attrs["cheapest"] = ds.attrs["verdict"] = (
            f"no design recovers the true order with probability >= {target:g}; the best, "
            f"{visible(labels[top])}, does with {data['p_recovered'][top]:.2f} over {n_rep} "
            "simulated studies"
        )
    return ds


def _check_kinds_result(ds: xr.Dataset, what: str) -> None:
    if not isinstance(ds, xr.Dataset) or ds.attrs.get("analysis") != KINDS_ANALYSIS:
        raise ValueError(f"{what}: expected a result of compare_design_kinds")


def cheapest_kind(ds: xr.Dataset, *, target: float, on: str = "p_recovered") -> pl.DataFrame:
    """The cheapest design of a :func:`compare_design_kinds` result whose ``on`` reaches
    ``target`` (fewest rater hours; among equal costs the higher value, then the order of
    the options): one row ``design, kind, size, criterion, target, value, rater_hours``,
    or none when no design reaches it.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"p_recovered": ("design", [0.95, 0.92, 0.5]),
    ...                  "rater_hours": ("design", [3.0, 2.0, 1.0])},
    ...                 coords={"design": ["a", "b", "c"], "kind": ("design", ["pairs"] * 3),
    ...                         "size": ("design", ["x", "y", "z"])},
    ...                 attrs={"analysis": "design_kinds"})
    >>> cheapest_kind(ds, target=0.9)["design"].to_list()
    ['b']
    >>> cheapest_kind(ds, target=0.99).height
    0
    """
    _check_kinds_result(ds, "cheapest_kind")
    if on not in KIND_CRITERIA or on not in ds:
        raise ValueError(
            f"cheapest_kind: on must be one of {KIND_CRITERIA} (a compare_design_kinds "
            f"result), not {on!r}"
        )
    check_arguments(real_problem("target", target), where="cheapest_kind")
    val = ds[on].values.astype(float)
    hours = ds["rater_hours"].values.astype(float)
    ok = np.flatnonzero(val >= target)
    rows = []
    if ok.size:
        g = min(ok, key=lambda k: (hours[k], -val[k], k))
        rows.append(
            {
                "design": str(ds["design"].values[g]),
                "kind": str(ds["kind"].values[g]),
                "size": str(ds["size"].values[g]),
                "criterion": on,
                "target": float(target),
                "value": float(val[g]),
                "rater_hours": float(hours[g]),
            }
        )
    schema = {"design": pl.String, "kind": pl.String, "size": pl.String,
              "criterion": pl.String, "target": pl.Float64, "value": pl.Float64,
              "rater_hours": pl.Float64}  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def kinds_table(ds: xr.Dataset) -> pl.DataFrame:
    """A :func:`compare_design_kinds` result as a table, one row per design in the order
    of the options: ``design, kind, size, n_judgments, seconds_per_judgment, rater_hours,
    p_recovered, p_recovered_low, p_recovered_high, p_best_first, mean_tau,
    reaches_target``.

    Examples
    --------
    >>> from raterstats.design import DesignOption, compare_design_kinds
    >>> ds = compare_design_kinds([DesignOption("absolute", 2, 20)],
    ...                           study={"theta": [3.0, -3.0]}, n_questions=4,
    ...                           n_replicates=5, max_workers=1)
    >>> kinds_table(ds).select("design", "n_judgments", "reaches_target").rows()
    [('absolute x2', 16, True)]
    """
    _check_kinds_result(ds, "kinds_table")
    cols = ["n_judgments", "seconds_per_judgment", "rater_hours", "p_recovered",
            "p_recovered_low", "p_recovered_high", "p_best_first", "mean_tau",
            "reaches_target"]  # fmt: skip
    return pl.DataFrame(
        {
            "design": [str(v) for v in ds["design"].values],
            "kind": [str(v) for v in ds["kind"].values],
            "size": [str(v) for v in ds["size"].values],
            **{c: ds[c].values for c in cols},
        }
    )


__all__ = [
    "DESIGN_SETTINGS",
    "KINDS_ANALYSIS",
    "KIND_CRITERIA",
    "TRUTH_SETTINGS",
    "DesignOption",
    "cheapest_kind",
    "compare_design_kinds",
    "kinds_replicates_task",
    "kinds_table",
    "replicate_metrics",
]
