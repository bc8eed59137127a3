"""The TOML study file, described once: :data:`STUDY_FILE` names every table, key, expected
type and allowed value, and :func:`check_study` checks a parsed file against it, listing
every problem at once (unknown keys with a did-you-mean, wrong types and values naming the
file, table, key and value). The documentation's table of keys is :func:`schema_markdown`.

Also here: the text forms that the command line and the study file share (scales, filters,
level maps), parsed with a usage error (exit 2) that names the problem.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_type_hints

import typer

from raterstats import schema as S
from raterstats.scales import (
    COLLAPSES,
    SCORE_MAPS,
    IntervalScale,
    NominalScale,
    OrdinalScale,
    Scale,
)

#: the scales ``--scale`` knows by name
NAMED_SCALES: dict[str, Callable[[], Scale]] = {
    "likert5": lambda: OrdinalScale.likert(5),
    "likert7": lambda: OrdinalScale.likert(7),
    "likert3": lambda: OrdinalScale([-1, 0, 1], ["disagree", "neutral", "agree"]),
    "binary": lambda: OrdinalScale([0, 1], ["no", "yes"]),
    "yes-partially-no": lambda: NominalScale(["yes", "partially", "no"]),
    "yes-no-refutes": lambda: NominalScale(["yes", "no", "refutes"]),
    "interval": lambda: IntervalScale(),
}
#: the ``kind:levels`` scales: ``ordinal:1,2,3``, ``nominal:yes,no``
SCALE_KINDS: dict[str, Callable[[list[Any]], Scale]] = {
    "ordinal": OrdinalScale,
    "nominal": NominalScale,
}
#: what ``--filter`` and ``[filter]`` select by: the id roles, and ``repeat``
FILTERABLE = (*(n for n, r in S.ROLES.items() if r.kind == "id"), S.REPEAT)
#: what ``--comparisons`` reads: pairwise preferences or per-question rankings
COMPARISON_KINDS = ("pairs", "rankings")
#: what ``--duplicates`` does with two ratings of one (item, segment, rater, dimension, design)
DUPLICATES = ("error", "first", "last", "repeat")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def did_you_mean(value: str, choices: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices`` (a case variant first), or
    ``""``.

    Examples
    --------
    >>> did_you_mean("Wide", ["long", "wide"]), did_you_mean("drawz", ["draws", "tune"])
    ("; did you mean 'wide'?", "; did you mean 'draws'?")
    """
    same = [c for c in choices if c.lower() == value.lower()]
    close = same or difflib.get_close_matches(value, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _number(text: str) -> int | float | str:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def check_choice(value: str, choices: Sequence[str], what: str) -> str:
    """``value`` when it is one of ``choices`` (case-sensitive); a usage error naming
    ``what``, the choices and the closest one otherwise.

    Examples
    --------
    >>> check_choice("mean", ["mean", "pyramid"], "--method")
    'mean'
    """
    if value not in choices:
        raise typer.BadParameter(
            f"{what} {value!r} is not one of {', '.join(choices)}{did_you_mean(value, choices)}"
        )
    return value


def parse_scale(text: str) -> Scale:
    """The scale named by ``text``: a name of :data:`NAMED_SCALES`, ``ordinal:1,2,3`` or
    ``nominal:yes,no``; a usage error (``typer.BadParameter``) saying what is wrong.

    Examples
    --------
    >>> parse_scale("ordinal:1,2,3").levels
    (1, 2, 3)
    >>> try:
    ...     parse_scale("ordinal:1,1,2")
    ... except typer.BadParameter as err:
    ...     print(err.message)
    scale 'ordinal:1,1,2': levels are not distinct: (1, 1, 2)
    """
    if text in NAMED_SCALES:
        return NAMED_SCALES[text]()
    kind, sep, levels = text.partition(":")
    known = f"use one of {sorted(NAMED_SCALES)}, 'ordinal:1,2,3' or 'nominal:yes,no'"
    if not sep:
        raise typer.BadParameter(
            f"unknown scale {text!r}{did_you_mean(text, list(NAMED_SCALES))}: {known}"
        )
    if kind.strip() not in SCALE_KINDS:
        raise typer.BadParameter(
            f"unknown scale kind {kind!r} in {text!r}"
            f"{did_you_mean(kind.strip(), list(SCALE_KINDS))}: {known}"
        )
    parts = [p.strip() for p in levels.split(",")]
    if not levels.strip() or "" in parts:
        raise typer.BadParameter(
            f"scale {text!r}: every level must be non-empty, separated by commas "
            f"(e.g. '{kind.strip()}:1,2,3')"
        )
    try:
        return SCALE_KINDS[kind.strip()]([_number(p) for p in parts])
    except (ValueError, TypeError) as err:
        raise typer.BadParameter(f"scale {text!r}: {err}") from None


def parse_pairs(specs: Sequence[str] | None, option: str) -> dict[str, str]:
    """``KEY=VALUE`` specs of a repeatable option as a dict (``option`` names it in the
    error); a key given twice, an empty key or no ``=`` is a usage error.

    Examples
    --------
    >>> parse_pairs(["item=answer_id", "rater = annotator"], "--column")
    {'item': 'answer_id', 'rater': 'annotator'}
    """
    out: dict[str, str] = {}
    for spec in specs or []:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{option} takes KEY=VALUE, got {spec!r}")
        if key.strip() in out and out[key.strip()] != value.strip():
            raise typer.BadParameter(
                f"{option} gives {key.strip()!r} twice ({out[key.strip()]!r} and "
                f"{value.strip()!r}); give several values as {key.strip()}=a,b"
            )
        out[key.strip()] = value.strip()
    return out


def parse_bool(value: Any, what: str) -> bool:
    """``true/false``, ``yes/no``, ``1/0`` (or a bool) as a bool; a usage error otherwise.

    Examples
    --------
    >>> parse_bool("Yes", "repeat"), parse_bool(False, "repeat")
    (True, False)
    """
    if isinstance(value, bool):
        return value
    low = str(value).strip().lower()
    if low in _TRUE or low in _FALSE:
        return low in _TRUE
    raise typer.BadParameter(f"{what} takes true or false, got {value!r}")


def parse_filter(key: str, value: Any, what: str = "--filter") -> list[str] | bool:
    """One filter: the values of an id role as a list of stripped strings (``a,b`` or a
    list), or a bool for ``repeat``; a usage error naming the key or value otherwise.

    Examples
    --------
    >>> parse_filter("rater", "1, 2"), parse_filter("repeat", "true")
    (['1', '2'], True)
    """
    if key not in FILTERABLE:
        raise typer.BadParameter(
            f"{what}: cannot filter on {key!r}{did_you_mean(key, FILTERABLE)} "
            f"(filterable: {', '.join(FILTERABLE)})"
        )
    if key == S.REPEAT:
        return parse_bool(value, f"{what} repeat")
    if isinstance(value, bool):
        raise typer.BadParameter(f"{what} {key}: ids are text, got {value!r}")
    parts = value if isinstance(value, list) else str(value).split(",")
    out = [str(p).strip() for p in parts]
    if not out or "" in out:
        raise typer.BadParameter(f"{what} {key}={value!r}: every value must be non-empty")
    return out


def parse_level_map(text: str | Mapping[str, Any] | None) -> dict[int, float] | None:
    """``1=-1,2=-1,3=0,4=1,5=1`` (or a TOML table) as ``{1: -1.0, ...}``; a usage error
    when a level is not an integer or a value not a number.

    Examples
    --------
    >>> parse_level_map("1=-1,2=0,3=1")
    {1: -1.0, 2: 0.0, 3: 1.0}
    """
    if text is None:
        return None
    items = (
        text.items()
        if isinstance(text, Mapping)
        else parse_pairs(text.split(","), "--level-map").items()
    )
    try:
        return {int(k): float(v) for k, v in items}
    except (TypeError, ValueError):
        raise typer.BadParameter(
            f"--level-map takes LEVEL=VALUE pairs of numbers, e.g. 1=-1,2=-1,3=0,4=1,5=1; "
            f"got {text!r}"
        ) from None


def check_target_accept(value: float | None) -> float | None:
    """A NUTS target acceptance rate strictly between 0 and 1 (``None`` passes).

    Examples
    --------
    >>> check_target_accept(0.99)
    0.99
    """
    if value is not None and not 0 < value < 1:
        raise typer.BadParameter(f"a target acceptance rate is between 0 and 1, got {value}")
    return value


def check_probability(value: float | None) -> float | None:
    """An interval probability strictly between 0 and 1 (``None`` passes).

    Examples
    --------
    >>> check_probability(0.9)
    0.9
    """
    if value is not None and not 0 < value < 1:
        raise typer.BadParameter(f"an interval probability is between 0 and 1, got {value}")
    return value


def fit_methods() -> list[str]:
    """The fit methods of the registered models, :data:`~raterstats.defaults.METHOD` first."""
    from raterstats.defaults import METHOD
    from raterstats.inference import METHODS
    from raterstats.models import registered_models

    every = [m for cls in registered_models().values() for m in cls.methods]
    return list(dict.fromkeys([METHOD, *METHODS, *every]))


# ----------------------------------------------------------------------------- the schema


@dataclass(frozen=True)
class Kind:
    """A TOML type a key takes: its name in messages and documentation, and its test."""

    name: str
    test: Callable[[Any], bool]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


STRING = Kind("a string", _is_str)
PATH = Kind("a path (relative to the study file)", lambda v: isinstance(v, str) and v != "")
INTEGER = Kind("an integer", _is_int)
NUMBER = Kind("a number", lambda v: _is_int(v) or isinstance(v, float))
BOOLEAN = Kind("true or false", lambda v: isinstance(v, bool))
STRINGS = Kind("a list of strings", lambda v: isinstance(v, list) and all(map(_is_str, v)))
TABLE = Kind("a table", lambda v: isinstance(v, dict))
STRING_TABLE = Kind(
    "a table of strings", lambda v: isinstance(v, dict) and all(map(_is_str, v.values()))
)
STRING_OR_TABLE = Kind("a string or a table", lambda v: isinstance(v, str | dict))
BOOLEAN = Kind("true or false", lambda v: isinstance(v, bool))
FILTER_TABLE = Kind(
    "a table of ids (a string, an integer or a list of them; repeat: true or false)",
    lambda v: isinstance(v, dict),
)


@dataclass(frozen=True)
class Key:
    """One key of the study file.

    ``choices`` are the allowed values, case-sensitive, of a string or of each string of a
    list: a fixed tuple (listed in the documentation), or a function called when checking
    (values from a registry, which the description names); ``minimum`` bounds a number;
    ``check`` raises ``typer.BadParameter`` on a bad value (scales, models, ...).
    """

    kind: Kind
    description: str
    choices: Sequence[str] | Callable[[], Sequence[str]] | None = None
    minimum: int | None = None
    check: Callable[[Any], object] | None = None


def _exports() -> list[str]:
    from raterstats.exports import EXPORTS

    return sorted(EXPORTS)


def _statistics(value: Any) -> None:
    """The statistics of ``[agreement]``, read as ``-m`` reads them (a usage error naming
    the statistic, option and what is allowed)."""
    from raterstats.agreement import AgreementUsageError, parse_statistics

    try:
        parse_statistics(list(value))
    except AgreementUsageError as err:
        raise typer.BadParameter("; ".join(err.problems)) from None


def _samplers() -> list[str]:
    from raterstats.inference import SAMPLERS

    return list(SAMPLERS)


def _rank_methods() -> list[str]:
    from raterstats.ranking import rank_methods

    return list(rank_methods()) + list(rank_methods(kind="comparisons"))


def rank_scores() -> list[str]:
    """The ``score`` values of :func:`raterstats.rank_systems` (for ordinal fits)."""
    from raterstats.ranking import rank_systems

    return list(get_args(get_type_hints(rank_systems)["score"]))


def _model(name: Any) -> None:
    from raterstats.models import model_class

    try:
        model_class(str(name))
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None


def _analyze_models(value: Any) -> None:
    for name in value:
        if name != "auto":
            _model(name)
    if "auto" in value and len(value) > 1:
        raise typer.BadParameter('"auto" chooses the models itself: give it alone')


def _per_model(field: str, what: str) -> Any:
    """The check of the ``[analyze]`` table ``field`` (``fit_settings`` or
    ``model_options`` of :class:`~raterstats.analyze.AnalyzeOptions`): a table of ``what``
    per model."""

    def check(value: Any) -> None:
        from raterstats.analyze import AnalyzeOptions

        for name, table in value.items():
            _model(name)
            if not isinstance(table, dict):
                raise typer.BadParameter(
                    f"the {what} of {name!r} must be a table, got {_show(table)}"
                )
        try:
            AnalyzeOptions(**{field: value})
        except ValueError as err:
            raise typer.BadParameter(str(err).removeprefix("AnalyzeOptions: ")) from None

    return check


def _schemes(value: Any) -> None:
    for name, table in value.items():
        if not isinstance(table, dict):
            raise typer.BadParameter(f"scheme {name!r} must be a table, got {_show(table)}")
        scheme_of(name, table)


def scheme_of(name: str, table: Mapping[str, Any]) -> Any:
    """The :class:`~raterstats.analyze.Scheme` of a ``[analyze.schemes.NAME]`` table; a
    usage error naming what is wrong.

    Examples
    --------
    >>> scheme_of("coarse 3-point", {"design": "coarse", "collapse": "likert5_to_3"}).describe()
    'design coarse; scale collapsed by likert5_to_3'
    """
    from raterstats.analyze import Scheme

    keys = ("design", "collapse", "segment_rules")
    unknown = [k for k in table if k not in keys]
    if unknown:
        raise typer.BadParameter(
            f"scheme {name!r}: unknown key(s) {unknown}{did_you_mean(unknown[0], keys)}; keys: "
            f"{', '.join(keys)}"
        )
    scheme = Scheme(
        str(name),
        design=None if table.get("design") is None else str(table["design"]),
        collapse=table.get("collapse"),
        segment_rules=table.get("segment_rules"),
    )
    problems = scheme.problems()
    if problems:
        raise typer.BadParameter("; ".join(problems))
    return scheme


def _sections() -> list[str]:
    from raterstats.analyze import COMPARISON_SECTIONS, SECTIONS

    return list(dict.fromkeys([*(s.key for s in SECTIONS), *COMPARISON_SECTIONS]))


def _score_map(value: Any) -> None:
    if isinstance(value, str):
        check_choice(value, list(SCORE_MAPS), "score map")


def _scales(value: Any) -> None:
    if isinstance(value, str):
        parse_scale(value)
        return
    for dim, spec in value.items():
        if not isinstance(spec, str):
            raise typer.BadParameter(f"the scale of {dim!r} must be a string, got {_show(spec)}")
        parse_scale(spec)


def check_columns(value: Mapping[str, Any]) -> None:
    """Column roles ``{role: column}``: every key a role (or an alias of one), every column
    named; a usage error listing every bad entry otherwise.

    Examples
    --------
    >>> check_columns({"item": "answer_id", "worker": "annotator"})
    """
    from raterstats.comparisons_ingest import PAIR_ROLES, RANKING_ROLES

    aliases = S.alias_table()
    roles = list(dict.fromkeys([*S.ROLES, *PAIR_ROLES, *RANKING_ROLES]))  # comparisons' too
    bad = [k for k in value if k.lower() not in aliases and k not in roles]
    if bad:
        raise typer.BadParameter(
            "; ".join(f"{k!r} is not a column role{did_you_mean(k, roles)}" for k in bad)
            + f" (roles: {', '.join(roles)})"
        )
    empty = [k for k, v in value.items() if not v.strip()]
    if empty:
        raise typer.BadParameter(f"empty column name for {empty}")


def _filters(value: Mapping[str, Any]) -> None:
    bad = []
    for key, wanted in value.items():
        ok = _is_str(wanted) or _is_int(wanted) or isinstance(wanted, bool)
        if isinstance(wanted, list):
            ok = bool(wanted) and all(_is_str(w) or _is_int(w) for w in wanted)
        if not ok:
            bad.append(f"{key} = {_show(wanted)}: expected an id, a list of ids or true/false")
            continue
        try:
            parse_filter(key, [str(w) for w in wanted] if isinstance(wanted, list) else wanted)
        except typer.BadParameter as err:
            bad.append(err.message)
    if bad:
        raise typer.BadParameter("; ".join(bad))


#: the top level of the study file (the name of its "table" in :data:`STUDY_FILE`)
TOP = ""
_CI = "Interval probability, between 0 and 1."
_SEED = "Random seed."
_TARGET_ACCEPT = "NUTS target acceptance rate, between 0 and 1 (e.g. 0.99 against divergences)."
_USE_GOLD = (
    "Clamp the latent labels of items with a gold label (default false: gold is a check of "
    "the labels, not data)."
)

#: every table of the study file, its keys, their types, allowed values and meaning
STUDY_FILE: dict[str, dict[str, Key]] = {
    TOP: {
        "data": Key(PATH, "The ratings file (CSV, TSV, Parquet, JSONL or JSON)."),
        "columns": Key(STRING_TABLE, 'Column roles: `role = "column"`.', check=check_columns),
        "scale": Key(
            STRING_OR_TABLE,
            'One scale for every dimension, or a table `dimension = "scale"`.',
            check=_scales,
        ),
        "format": Key(STRING, "`long` (one rating per row) or `wide`.", ("long", "wide")),
        "filter": Key(
            FILTER_TABLE,
            "Keep only these ratings (`role = id or [ids]`), selected before validation.",
            check=_filters,
        ),
        "collapse": Key(
            STRING,
            "Merge scale levels: a name of `raterstats.scales.COLLAPSES`, e.g. `likert5_to_3`.",
            lambda: sorted(COLLAPSES),
        ),
        "duplicates": Key(STRING, "Several ratings of one unit by one rater.", DUPLICATES),
        "separator": Key(
            STRING, "The delimiter of a CSV file (default: sniffed among `,` `;` tab `|`)."
        ),
        "export": Key(
            STRING,
            "Read an annotation tool's export: a name of `raterstats.exports.EXPORTS` "
            "(`label-studio`, `mturk`, `survey`).",
            _exports,
        ),
        "comparisons": Key(
            STRING, "The file holds comparative judgments: `pairs` or `rankings`.", COMPARISON_KINDS
        ),
        "graded": Key(INTEGER, "Pairs: the outcomes are integers `-K..K`; K.", minimum=1),
        "agreement": Key(TABLE, "Defaults of `raterstats agreement`."),
        "fit": Key(TABLE, "Defaults of `raterstats fit`."),
        "labels": Key(TABLE, "Defaults of `raterstats labels`."),
        "rank": Key(TABLE, "Defaults of `raterstats rank`."),
        "designs": Key(TABLE, "Defaults of `raterstats designs`."),
        "analyze": Key(TABLE, "Defaults of `raterstats analyze`."),
    },
    "agreement": {
        "statistics": Key(
            STRINGS,
            "The statistics: names of `raterstats.agreement.AGREEMENT_STATISTICS`, with "
            'options as for `-m`: `"krippendorff_alpha:level=interval"`.',
            check=_statistics,
        ),
        "by": Key(STRINGS, "Split into cells by these columns."),
        "n_boot": Key(INTEGER, "Bootstrap replicates (0: no intervals).", minimum=0),
        "ci": Key(NUMBER, _CI, check=check_probability),
        "seed": Key(INTEGER, _SEED, minimum=0),
    },
    "fit": {
        "model": Key(
            STRING, "The model: a registered name or alias (`raterstats fit --help`).", check=_model
        ),
        "method": Key(STRING, "How to fit it (`raterstats fit --help` lists them).", fit_methods),
        "sampler": Key(STRING, "The NUTS sampler (`raterstats fit --help`).", _samplers),
        "draws": Key(INTEGER, "Draws per chain.", minimum=1),
        "tune": Key(INTEGER, "Tuning steps per chain.", minimum=1),
        "chains": Key(INTEGER, "Chains.", minimum=1),
        "target_accept": Key(NUMBER, _TARGET_ACCEPT, check=check_target_accept),
        "seed": Key(INTEGER, _SEED, minimum=0),
        "options": Key(TABLE, "Model options, e.g. `{ hierarchical = false }`."),
        "use_gold": Key(BOOLEAN, _USE_GOLD),
        "out": Key(PATH, "The netCDF file to write."),
    },
    "labels": {
        "model": Key(
            STRING, "The model: one with item labels (`raterstats labels --help`).", check=_model
        ),
        "method": Key(STRING, "How to fit it (`raterstats labels --help`).", fit_methods),
        "sampler": Key(STRING, "The NUTS sampler (`raterstats fit --help`).", _samplers),
        "draws": Key(INTEGER, "Draws per chain.", minimum=1),
        "tune": Key(INTEGER, "Tuning steps per chain.", minimum=1),
        "chains": Key(INTEGER, "Chains.", minimum=1),
        "target_accept": Key(NUMBER, _TARGET_ACCEPT, check=check_target_accept),
        "seed": Key(INTEGER, _SEED, minimum=0),
        "options": Key(TABLE, 'Model options, e.g. `{ pooling = "partial" }`.'),
        "use_gold": Key(BOOLEAN, _USE_GOLD),
        "fit": Key(PATH, "Labels from this fit (written by `raterstats fit`) instead of fitting."),
        "out": Key(PATH, "The CSV file to write."),
    },
    "rank": {
        "fit": Key(PATH, "Rank from this fit (written by `raterstats fit`)."),
        "method": Key(
            STRING, "Without a fit: how to score (`raterstats rank --help`).", _rank_methods
        ),
        "score": Key(STRING, "Ordinal fit: the score (`raterstats rank --help`).", rank_scores),
        "score_map": Key(
            STRING_OR_TABLE,
            "Scores of labels: a name of `raterstats.scales.SCORE_MAPS` or `label = score`.",
            check=_score_map,
        ),
        "n_boot": Key(INTEGER, "Case-bootstrap replicates.", minimum=0),
        "ci": Key(NUMBER, _CI, check=check_probability),
        "seed": Key(INTEGER, _SEED, minimum=0),
    },
    "designs": {
        "fit": Key(PATH, "The ordinal, MACE or Dawid-Skene fit (written by `raterstats fit`)."),
        "n_replicates": Key(INTEGER, "Posterior predictive replicates (0 skips).", minimum=0),
        "level_map": Key(
            STRING_OR_TABLE,
            'Ordinal fits: map levels before agreement: `"1=-1,2=0,3=1"` or a table.',
            check=parse_level_map,
        ),
        "ci": Key(NUMBER, _CI, check=check_probability),
        "seed": Key(INTEGER, _SEED, minimum=0),
    },
    "analyze": {
        "out": Key(PATH, "The report folder to write."),
        "title": Key(STRING, "Title of the report."),
        "models": Key(
            STRINGS,
            'The rater models: `["auto"]` (default: chosen by the scales), `[]` for none, or '
            "registered names and aliases (`raterstats fit --help`).",
            check=_analyze_models,
        ),
        "method": Key(STRING, "How to fit every model (`raterstats fit --help`).", fit_methods),
        "sampler": Key(STRING, "The NUTS sampler (`raterstats fit --help`).", _samplers),
        "draws": Key(INTEGER, "Draws per chain (default: each model's own).", minimum=1),
        "tune": Key(INTEGER, "Tuning steps per chain (default: each model's own).", minimum=1),
        "chains": Key(INTEGER, "Chains.", minimum=1),
        "fit": Key(
            TABLE,
            "Settings of one model over the above (method, draws, tune, chains, sampler, "
            'target_accept, adaptation): `{ ordinal = { method = "map" } }`.',
            check=_per_model("fit_settings", "settings"),
        ),
        "model_options": Key(
            TABLE,
            'Options of one model: `{ mace = { centred = "raters" } }` (not use_gold).',
            check=_per_model("model_options", "options"),
        ),
        "seed": Key(INTEGER, _SEED, minimum=0),
        "n_boot": Key(INTEGER, "Bootstrap replicates (agreement, raw rankings).", minimum=0),
        "ci": Key(NUMBER, _CI, check=check_probability),
        "statistics": Key(
            STRINGS,
            "Agreement statistics (default: chosen by each dimension's scale), with options "
            'as for `-m`: `"krippendorff_alpha:level=interval"`.',
            check=_statistics,
        ),
        "categorical_collapse": Key(
            STRING,
            "Fit the categorical models (and judge and design agreement) on the ratings "
            "collapsed by this name of `raterstats.scales.COLLAPSES`.",
            lambda: sorted(COLLAPSES),
        ),
        "score_map": Key(
            STRING_OR_TABLE,
            "Scores of labels for the rankings: a name of `raterstats.scales.SCORE_MAPS` or "
            "`label = score`.",
            check=_score_map,
        ),
        "schemes": Key(
            TABLE,
            'Named readings of the ratings: `[analyze.schemes."coarse 3-point"]` with '
            '`design`, `collapse`, `segment_rules` (a rule or a table `dimension = "rule"`).',
            check=_schemes,
        ),
        "skip": Key(STRINGS, "Sections to leave out (`raterstats analyze --help`).", _sections),
        "projections": Key(BOOLEAN, "Add the simulated annotation-budget projection."),
    },
}
#: the command tables of the study file (``[agreement]``, ``[fit]``, ...)
SECTIONS = tuple(name for name in STUDY_FILE if name != TOP)


class StudyFileError(ValueError):
    """Every problem of a study file, listed at once (a usage error: exit 2).

    Examples
    --------
    >>> str(StudyFileError(Path("s.toml"), ["[fit] drawz: unknown key"]))
    'study file s.toml has 1 problem:\\n  - s.toml: [fit] drawz: unknown key'
    """

    def __init__(self, path: Path, problems: Sequence[str]) -> None:
        self.path = path
        self.problems = list(problems)
        n = len(self.problems)
        lines = [f"study file {path} has {n} problem{'s' if n != 1 else ''}:"]
        lines += [f"  - {path}: {p}" for p in self.problems]
        super().__init__("\n".join(lines))


def _show(value: Any) -> str:
    """A TOML value as written, escaped and shortened."""
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _where(section: str, key: str) -> str:
    return key if section == TOP else f"[{section}] {key}"


def _check_value(section: str, name: str, key: Key, value: Any) -> list[str]:
    at = f"{_where(section, name)} = {_show(value)}"
    if isinstance(value, dict) and key.kind.test(value):
        at = f"[{name}]" if section == TOP else f"[{section}] {name}"
    if not key.kind.test(value):
        return [f"{at}: expected {key.kind.name}"]
    if key.minimum is not None and value < key.minimum:
        return [f"{at}: expected {key.kind.name} >= {key.minimum}"]
    if key.choices is not None:
        allowed = list(key.choices() if callable(key.choices) else key.choices)
        for v in value if isinstance(value, list) else [value]:
            if v not in allowed:
                case = " (case matters)" if v.lower() in map(str.lower, allowed) else ""
                return [
                    f"{at}: {v!r} is not one of {', '.join(allowed)}{case}"
                    f"{did_you_mean(v, allowed)}"
                ]
    if key.check is not None:
        try:
            key.check(value)
        except typer.BadParameter as err:
            return [f"{at}: {err.message}"]
    return []


def check_study(raw: Mapping[str, Any]) -> list[str]:
    """Every problem of a parsed study file against :data:`STUDY_FILE`: unknown tables and
    keys (with a did-you-mean), wrong types, values out of range or not allowed.

    Examples
    --------
    >>> for p in check_study({"format": "Wide", "fit": {"drawz": 5, "draws": "many"}}):
    ...     print(p)  # doctest: +ELLIPSIS
    format = "Wide": 'Wide' is not one of long, wide (case matters); did you mean 'wide'?
    [fit] drawz: unknown key; did you mean 'draws'? (keys of [fit]: model, method, ...)
    [fit] draws = "many": expected an integer
    """
    problems: list[str] = []
    for section, keys in STUDY_FILE.items():
        table = raw if section == TOP else raw.get(section, {})
        if not isinstance(table, dict):
            continue  # the top level reports it: expected a table
        for name, value in table.items():
            key = keys.get(name)
            if key is None:
                what = "unknown table or key" if section == TOP else "unknown key"
                listing = "keys and tables" if section == TOP else f"keys of [{section}]"
                problems.append(
                    f"{_where(section, name)}: {what}{did_you_mean(name, list(keys))} "
                    f"({listing}: {', '.join(keys)})"
                )
                continue
            problems += _check_value(section, name, key, value)
    return problems


def schema_markdown() -> str:
    """The study file's tables and keys as a Markdown table (for the documentation).

    Examples
    --------
    >>> print(schema_markdown().splitlines()[3])
    | `columns` | a table of strings | Column roles: `role = "column"`. |
    """
    rows = ["| key | expected | meaning |", "|---|---|---|"]
    for section, keys in STUDY_FILE.items():
        for name, key in keys.items():
            if section == TOP and name in SECTIONS:
                continue
            expected = key.kind.name
            if key.minimum is not None:
                expected += f" >= {key.minimum}"
            if callable(key.choices):
                expected += " (names: see the meaning)"
            elif key.choices is not None:
                expected += ": " + ", ".join(f"`{c}`" for c in key.choices)
            rows.append(f"| `{_where(section, name)}` | {expected} | {key.description} |")
    return "\n".join(rows) + "\n"


__all__ = [
    "COMPARISON_KINDS",
    "DUPLICATES",
    "FILTERABLE",
    "NAMED_SCALES",
    "SCALE_KINDS",
    "SECTIONS",
    "STUDY_FILE",
    "TOP",
    "Key",
    "Kind",
    "StudyFileError",
    "check_choice",
    "check_columns",
    "check_probability",
    "check_study",
    "did_you_mean",
    "fit_methods",
    "parse_bool",
    "parse_filter",
    "parse_level_map",
    "parse_pairs",
    "parse_scale",
    "rank_scores",
    "schema_markdown",
    "scheme_of",
]
