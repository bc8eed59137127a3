"""The options of :func:`raterstats.analyze.analyze`: :class:`AnalyzeOptions` (checked when
made, every problem listed at once) and :class:`Scheme` (a named way of reading the ratings:
a design, a collapse of the scale, segment -> item rules)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from raterstats import defaults as D

if TYPE_CHECKING:
    from raterstats.models import Model
    from raterstats.ratings import Ratings

#: the fit settings of every model (``AnalyzeOptions.method``, ``draws``, ...) and of one
#: model (``AnalyzeOptions.fit_settings``)
FIT_SETTINGS = ("method", "draws", "tune", "chains", "sampler")
#: settings only one model's table of ``fit_settings`` takes (NUTS' target acceptance rate,
#: raised against divergences; nutpie's mass-matrix adaptation)
MODEL_SETTINGS = (*FIT_SETTINGS, "target_accept", "adaptation")
#: what a model fit is used for in the analysis
MODEL_ROLES = ("categorical", "ordinal", "comparisons")


def model_role(cls: type[Model]) -> str | None:
    """``"ordinal"`` for the ordinal rater model, ``"categorical"`` for a latent-class
    model (one that infers each item's true label), ``"comparisons"`` for a model of
    comparative judgments, ``None`` for a model the analysis does not lay out.

    Examples
    --------
    >>> from raterstats.models import MACE, OrdinalRaters, LengthEffect
    >>> model_role(MACE), model_role(OrdinalRaters), model_role(LengthEffect)
    ('categorical', 'ordinal', None)
    """
    from raterstats.models import BradleyTerry, OrdinalRaters, PlackettLuce

    if issubclass(cls, BradleyTerry | PlackettLuce):
        return "comparisons"  # the model of comparative judgments (analyze_comparisons)
    if issubclass(cls, OrdinalRaters):
        return "ordinal"
    if cls.answers("item_posterior"):
        return "categorical"
    return None


@dataclass(frozen=True)
class Scheme:
    """A named reading of the ratings: the ratings of one ``design``, their scale merged by
    a ``collapse`` (a name of :data:`raterstats.scales.COLLAPSES`) and sentence ratings
    turned into one rating per item by ``segment_rules`` (a rule of
    :data:`raterstats.scales.SEGMENT_RULES`, or one per dimension).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> s = Scheme("coarse 3-point", design="coarse", collapse="likert5_to_3")
    >>> s.apply(r).scale_for("safety").levels
    (-1, 0, 1)
    >>> s.describe()
    'design coarse; scale collapsed by likert5_to_3'
    """

    name: str
    design: str | None = None
    collapse: str | None = None
    segment_rules: str | Mapping[str, str] | None = None

    def problems(self) -> list[str]:
        """What is wrong with the scheme (empty when nothing)."""
        from raterstats.scales import COLLAPSES, SEGMENT_RULES

        out = []
        if not isinstance(self.name, str) or not self.name.strip():
            out.append(f"scheme name must be non-empty text, got {self.name!r}")
        if self.collapse is not None and self.collapse not in COLLAPSES:
            out.append(
                f"scheme {self.name!r}: unknown collapse {self.collapse!r}; known: "
                f"{sorted(COLLAPSES)}"
            )
        rules = self.segment_rules
        named = [rules] if isinstance(rules, str) else list((rules or {}).values())
        bad = [r for r in named if r not in SEGMENT_RULES]
        if bad:
            out.append(
                f"scheme {self.name!r}: unknown segment rule(s) {bad}; known: "
                f"{sorted(SEGMENT_RULES)}"
            )
        return out

    def apply(self, ratings: Ratings) -> Ratings:
        """The ratings read by this scheme; a ``ValueError`` naming the scheme when they
        cannot be (a design absent, a collapse that does not fit the scale, ...)."""
        r = ratings
        try:
            if self.design is not None:
                if self.design not in r.designs:
                    raise ValueError(f"design {self.design!r} is not in the ratings {r.designs}")
                r = r.filter(design=self.design)
            if self.collapse is not None:
                r = r.collapse(self.collapse)
            if self.segment_rules is not None:
                rules = self.segment_rules
                r = r.aggregate_segments(rules if isinstance(rules, str) else dict(rules))
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"scheme {self.name!r}: {err}") from None
        return r

    def describe(self) -> str:
        """The scheme in words."""
        parts = []
        if self.design is not None:
            parts.append(f"design {self.design}")
        if self.collapse is not None:
            parts.append(f"scale collapsed by {self.collapse}")
        if isinstance(self.segment_rules, str):
            parts.append(f"sentences -> answer by {self.segment_rules}")
        elif self.segment_rules:
            rules = ", ".join(f"{k} {v}" for k, v in self.segment_rules.items())
            parts.append(f"sentences -> answer by rule ({rules})")
        return "; ".join(parts) or "the ratings as they are"


@dataclass(frozen=True)
class AnalyzeOptions:
    """What :func:`~raterstats.analyze.analyze` computes and how.

    Parameters
    ----------
    title : str, optional
        Title of the report (default: "raterstats analysis" and the data source).
    description : str, optional
        A sentence under the title saying what the data are.
    models : "auto" or sequence of str
        The rater models to fit: registered names or aliases (``"mace"``,
        ``"dawid_skene"``, ``"ordinal"``). ``"auto"``: MACE when some dimension is on a
        nominal or two-level scale or ``collapse`` is given, the ordinal rater model when
        every dimension is on an ordinal scale of three or more levels. ``()``: none.
    method, draws, tune, chains, sampler
        Fit settings of every model; ``None`` leaves each model's own default (the
        ordinal model's defaults are its documented ones).
    fit_settings : mapping
        Settings of one model, overriding the above: ``{"ordinal": {"method": "map"}}``
        (also ``target_accept`` and nutpie's mass-matrix ``adaptation``).
    model_options : mapping
        Options of one model's constructor (its ``default_options``), e.g.
        ``{"mace": {"centred": "raters"}}``; default: the model's own. Not ``use_gold``:
        the analysis keeps gold labels as a check and never clamps them.
    n_boot : int
        Bootstrap replicates of the agreement intervals and raw-rating rankings.
    random_seed : int
        Seed of every stochastic step.
    ci : float, optional
        Interval probability of every interval (default: the posterior intervals ArviZ's
        ``ci_prob``, the agreement intervals :data:`raterstats.defaults.AGREEMENT_CONFIDENCE`).
    statistics : sequence, optional
        Agreement statistics (names or ``(name, {option: value})`` pairs); default: chosen
        by each dimension's scale.
    schemes : sequence of Scheme
        Named readings of the ratings: label distributions and agreement are given per
        scheme (default: the ratings as they are, per dimension x design).
    collapse : str, optional
        A collapse (``"likert5_to_3"``) under which the categorical models are fitted and the
        judge and design agreement computed; asking for it fits the categorical models on
        ordinal ratings.
    score_map : str or mapping, optional
        Scores of categorical labels for the rankings (``"yes_partially_no"``); numeric
        labels score as their value.
    skip : sequence of str
        Sections to leave out, by key (:data:`raterstats.analyze.SECTIONS`).
    design_projections : bool
        Add the simulation-based annotation-budget projection (slow).

    Examples
    --------
    >>> AnalyzeOptions(models=("mace",), method="em").models
    ('mace',)
    >>> AnalyzeOptions(draws=0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: AnalyzeOptions: draws must be an integer >= 1, got 0
    """

    title: str | None = None
    description: str | None = None
    models: str | Sequence[str] = "auto"
    method: str | None = None
    draws: int | None = None
    tune: int | None = None
    chains: int | None = None
    sampler: str | None = None
    fit_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    model_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    n_boot: int = D.N_BOOT
    random_seed: int = D.RANDOM_SEED
    ci: float | None = None
    statistics: Sequence[Any] | None = None
    schemes: Sequence[Scheme] = ()
    collapse: str | None = None
    score_map: str | Mapping[str, Any] | None = None
    skip: Sequence[str] = ()
    design_projections: bool = True

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.models != "auto":
            if isinstance(self.models, str) or not isinstance(self.models, Sequence):
                problems.append(
                    f"models must be 'auto' or a sequence of names, got {self.models!r}"
                )
            else:
                names, bad = _model_names(self.models)
                problems += bad
                object.__setattr__(self, "models", tuple(names))
        problems += _setting_problems(
            {k: getattr(self, k) for k in FIT_SETTINGS}, "", allow_none=True
        )
        settings = {}
        for name, given in dict(self.fit_settings).items():
            cls_names, bad = _model_names([name])
            problems += bad
            if not isinstance(given, Mapping):
                problems.append(f"fit_settings[{name!r}] must be a mapping, got {given!r}")
                continue
            unknown = [k for k in given if k not in MODEL_SETTINGS]
            if unknown:
                problems.append(
                    f"fit_settings[{name!r}]: unknown setting(s) {unknown}; known: "
                    f"{list(MODEL_SETTINGS)}"
                )
            problems += _setting_problems(
                {k: v for k, v in given.items() if k in MODEL_SETTINGS},
                f"fit_settings[{name!r}] ",
                allow_none=False,
            )
            if cls_names:
                settings[cls_names[0]] = dict(given)
        object.__setattr__(self, "fit_settings", settings)
        problems += self._model_option_problems()
        problems += _int_problem("n_boot", self.n_boot, 0)
        problems += _int_problem("random_seed", self.random_seed, 0)
        if self.ci is not None and not (
            isinstance(self.ci, int | float) and not isinstance(self.ci, bool) and 0 < self.ci < 1
        ):
            problems.append(f"ci must be a probability between 0 and 1, got {self.ci!r}")
        problems += _statistics_problems(self.statistics)
        object.__setattr__(self, "schemes", tuple(self.schemes))
        for s in self.schemes:
            problems += (
                s.problems()
                if isinstance(s, Scheme)
                else [f"schemes must hold Scheme objects, got {s!r}"]
            )
        names = [s.name for s in self.schemes if isinstance(s, Scheme)]
        dups = sorted({n for n in names if names.count(n) > 1})
        if dups:
            problems.append(f"scheme names occur more than once: {dups}")
        if self.collapse is not None:
            from raterstats.scales import COLLAPSES

            if self.collapse not in COLLAPSES:
                problems.append(f"unknown collapse {self.collapse!r}; known: {sorted(COLLAPSES)}")
        if isinstance(self.score_map, str):
            from raterstats.scales import SCORE_MAPS

            if self.score_map not in SCORE_MAPS:
                problems.append(
                    f"unknown score map {self.score_map!r}; known: {sorted(SCORE_MAPS)}"
                )
        if isinstance(self.skip, str):
            problems.append(f"skip must be a sequence of section keys, got the text {self.skip!r}")
        else:
            object.__setattr__(self, "skip", tuple(self.skip))
        if not isinstance(self.design_projections, bool):
            problems.append(
                f"design_projections must be True or False, got {self.design_projections!r}"
            )
        for key in ("title", "description"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), str):
                problems.append(f"{key} must be text, got {getattr(self, key)!r}")
        if problems:
            raise ValueError("AnalyzeOptions: " + "; ".join(problems))

    def _model_option_problems(self) -> list[str]:
        """Check ``model_options`` (each model's options exist and its constructor takes
        them) and store them under the models' registry names."""
        from raterstats.models import model_class

        problems: list[str] = []
        given_all = self.model_options
        if not isinstance(given_all, Mapping):
            object.__setattr__(self, "model_options", {})
            return [f"model_options must be a mapping of model names, got {given_all!r}"]
        out = {}
        for name, given in dict(given_all).items():
            cls_names, bad = _model_names([name])
            problems += bad
            what = f"model_options[{name!r}]"
            if not isinstance(given, Mapping):
                problems.append(f"{what} must be a mapping, got {given!r}")
                continue
            if not cls_names:
                continue
            cls = model_class(cls_names[0])
            if "use_gold" in given:
                problems.append(
                    f"{what}: use_gold is not an option of the analysis, which keeps gold "
                    "labels as a check (`raterstats fit --use-gold` clamps them)"
                )
                continue
            known = sorted(k for k in cls.default_options if k != "use_gold")
            unknown = [k for k in given if k not in known]
            if unknown:
                close = difflib.get_close_matches(str(unknown[0]), known, n=1)
                problems.append(
                    f"{what}: unknown option(s) {unknown}; {cls.__name__} takes {known}"
                    + (f" (did you mean {close[0]!r}?)" if close else "")
                )
                continue
            try:
                cls(**dict(given))
            except (TypeError, ValueError) as err:
                problems.append(f"{what}: {err}")
                continue
            out[cls_names[0]] = dict(given)
        object.__setattr__(self, "model_options", out)
        return problems

    def options_for(self, cls: type[Model]) -> dict[str, Any]:
        """The constructor options of model ``cls`` given in ``model_options`` (the others
        are the model's own defaults).

        Examples
        --------
        >>> from raterstats.models import MACE
        >>> AnalyzeOptions(model_options={"MACE": {"centred": "raters"}}).options_for(MACE)
        {'centred': 'raters'}
        >>> AnalyzeOptions(model_options={"mace": {"centred": "yes"}})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: AnalyzeOptions: model_options['mace']: centred must be True, False, ...
        """
        return dict(self.model_options.get(cls.name, {}))

    def settings_for(self, cls: type[Model]) -> dict[str, Any]:
        """The fit settings of model ``cls``: ``fit_settings`` of the model over the common
        ones; a setting given nowhere is left to the model's own default.

        Examples
        --------
        >>> from raterstats.models import MACE
        >>> AnalyzeOptions(draws=200, fit_settings={"mace": {"method": "em"}}).settings_for(MACE)
        {'draws': 200, 'method': 'em'}
        """
        common = {k: getattr(self, k) for k in FIT_SETTINGS if getattr(self, k) is not None}
        return {**common, **self.fit_settings.get(cls.name, {})}


def _model_names(names: Sequence[Any]) -> tuple[list[str], list[str]]:
    """Canonical names of the models (registry names) and the problems."""
    from raterstats.models import model_class

    out, problems = [], []
    for n in names:
        try:
            cls = model_class(str(n))
        except ValueError as err:
            problems.append(str(err))
            continue
        if model_role(cls) is None:
            problems.append(
                f"model {n!r} is not laid out by analyze (it lays out latent-class models and "
                "the ordinal rater model); fit it with `raterstats fit`"
            )
            continue
        if cls.name not in out:
            out.append(cls.name)
    return out, problems


def _int_problem(name: str, value: Any, minimum: int) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        return [f"{name} must be an integer >= {minimum}, got {value!r}"]
    return []


def _setting_problems(values: Mapping[str, Any], where: str, *, allow_none: bool) -> list[str]:
    from raterstats.inference import SAMPLERS
    from raterstats.inference_checks import ADAPTATIONS

    problems = []
    for key, value in values.items():
        if value is None:
            if not allow_none:
                problems.append(f"{where}{key} must be given, not None")
            continue
        if key in ("draws", "chains"):
            problems += _int_problem(where + key, value, 1)
        elif key == "tune":
            problems += _int_problem(where + key, value, 0)
        elif key == "sampler" and value not in SAMPLERS:
            problems.append(f"{where}sampler {value!r} is not one of {list(SAMPLERS)}")
        elif key == "method" and not isinstance(value, str):
            problems.append(f"{where}method must be text, got {value!r}")
        elif key == "target_accept" and not (
            isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1
        ):
            problems.append(f"{where}target_accept must be a number in (0, 1), got {value!r}")
        elif key == "adaptation" and value not in ADAPTATIONS:
            problems.append(f"{where}adaptation {value!r} is not one of {list(ADAPTATIONS)}")
    return problems


def _statistics_problems(statistics: Sequence[Any] | None) -> list[str]:
    if statistics is None:
        return []
    from raterstats.agreement import AGREEMENT_STATISTICS

    if isinstance(statistics, str):
        return [f"statistics must be a sequence, got the text {statistics!r}"]
    names = [
        s if isinstance(s, str) else (s[0] if isinstance(s, tuple) and s else s) for s in statistics
    ]
    bad = [n for n in names if n not in AGREEMENT_STATISTICS]
    if bad:
        return [f"unknown statistic(s) {bad}; known: {list(AGREEMENT_STATISTICS)}"]
    if not names:
        return ["statistics is empty: give at least one, or None to choose by the scale"]
    return []


__all__ = [
    "FIT_SETTINGS",
    "MODEL_ROLES",
    "MODEL_SETTINGS",
    "AnalyzeOptions",
    "Scheme",
    "model_role",
]
