"""Which statistics :func:`raterstats.agreement.agreement` computes, with which options.

One parser reads them for the Python API, the command line (``raterstats agreement -m``) and
the study file (``[agreement] statistics``):

- ``"krippendorff_alpha"``: a name of :data:`~raterstats.agreement.AGREEMENT_STATISTICS`,
  with the function's defaults;
- ``"krippendorff_alpha:level=interval"``, ``"cohen_kappa:weights=quadratic"``,
  ``"icc:form=ICC1"``, ``"percent_agreement:kind=unanimous,tolerance=1"``: options after a
  colon, ``key=value`` separated by commas (a comma inside parentheses belongs to the value:
  ``icc:form=ICC(3,k)``), named as the keyword arguments of the function of that name;
- ``("krippendorff_alpha", {"level": "interval"})``: the same as a pair (the only way to
  pass a weight matrix).

Every value is read as the function expects it (one of its choices, a number, true or false,
a weight name, an ICC form) and checked before any data is read: an unknown statistic,
option or value is an :class:`~raterstats.agreement.AgreementUsageError` naming the
statistic, the option and what is allowed, with a did-you-mean.
"""

from __future__ import annotations

import difflib
import math
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import numpy as np

from raterstats.agreement import kernels as K
from raterstats.agreement.data import AgreementUsageError, Coded
from raterstats.agreement.estimator import REGISTRY

#: An ordered scale with more levels than this makes the statistics that treat levels as
#: unordered categories warn (:class:`~raterstats.agreement.ManyLevelsWarning`).
MAX_UNORDERED_LEVELS = 10

_ICC_TEXT = (
    "ICC(1,1), ICC(2,1), ICC(3,1), ICC(1,k), ICC(2,k), ICC(3,k) (also McGraw-Wong's "
    "ICC(1), ICC(A,1), ICC(C,1), ICC(k), ICC(A,k), ICC(C,k) and pingouin's ICC1 ... ICC3k)"
)
_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")
_NONE = ("none", "null")


def _hint(value: str, choices: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices`` (a case variant first)."""
    same = [c for c in choices if c.lower() == value.lower()]
    close = same or difflib.get_close_matches(value, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _show(value: Any) -> str:
    """An option value as it is written in a label or the ``options`` text."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value)
    shape = np.shape(value)
    return f"matrix {shape[0]}x{shape[1]}" if len(shape) == 2 else str(value)


@dataclass(frozen=True)
class OptionRule:
    """How one option of one statistic is read and checked.

    ``kind`` is ``"choice"`` (one of ``choices``), ``"weights"`` (a weight name, or a
    matrix from Python), ``"form"`` (an ICC form), ``"number"`` (non-negative) or
    ``"flag"`` (true or false); ``nullable`` options also take ``None`` (``none``).

    Examples
    --------
    >>> rule = option_rules("cohen_kappa")["weights"]
    >>> rule.parse("squared"), rule.parse("quadratic")
    ('quadratic', 'quadratic')
    >>> option_rules("icc")["form"].parse("ICC1")
    'ICC(1,1)'
    """

    statistic: str
    name: str
    kind: Literal["choice", "weights", "form", "number", "flag"]
    default: Any
    choices: tuple[str, ...] = ()
    nullable: bool = False

    def allowed(self) -> str:
        """What the option takes, in words."""
        if self.kind == "choice":
            text = ", ".join(self.choices)
        elif self.kind == "weights":
            names = sorted(set(K.WEIGHT_ALIASES.values()))
            aliases = sorted(set(K.WEIGHT_ALIASES) - set(names))
            text = f"{', '.join(names)} (or {', '.join(aliases)}; in Python also a q x q matrix)"
        elif self.kind == "form":
            text = _ICC_TEXT
        elif self.kind == "number":
            text = "a number >= 0"
        else:
            text = "true or false"
        if not self.nullable:
            return text
        return text + (", or none (its default)" if self.default is None else ", or none")

    def parse(self, value: Any) -> Any:
        """The value in the form the function expects (canonical names); ``ValueError``
        with what is allowed when it is not a valid value."""
        text = value.strip() if isinstance(value, str) else None
        if value is None or (text is not None and text.lower() in _NONE):
            if self.nullable:
                return None
            raise ValueError(f"takes {self.allowed()}, not {value!r}")
        if self.kind == "choice":
            if text in self.choices:
                return text
            raise ValueError(
                f"takes {self.allowed()}, not {value!r}{_hint(str(value), self.choices)}"
            )
        if self.kind == "weights":
            return self._weights(value, text)
        if self.kind == "form":
            try:
                model, unit = K.parse_icc_form(str(text))
            except (KeyError, AttributeError):
                raise ValueError(f"takes {self.allowed()}, not {value!r}") from None
            return K.ICC_NAMES[(model, unit)][0]
        if self.kind == "number":
            try:
                number = float(text if text is not None else value)
            except (TypeError, ValueError):
                number = math.nan
            if isinstance(value, bool) or not math.isfinite(number) or number < 0:
                raise ValueError(f"takes {self.allowed()}, not {value!r}")
            return number
        if isinstance(value, bool):
            return value
        if text is not None and text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ValueError(f"takes {self.allowed()}, not {value!r}")

    def _weights(self, value: Any, text: str | None) -> Any:
        if text is not None:
            if text in K.WEIGHT_ALIASES:
                return K.WEIGHT_ALIASES[text]
            raise ValueError(
                f"takes {self.allowed()}, not {value!r}{_hint(text, list(K.WEIGHT_ALIASES))}"
            )
        try:
            matrix = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            matrix = np.empty(0)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"takes {self.allowed()}, not {value!r}")
        return matrix


def _rule(statistic: str, key: str, hint: Any, default: Any) -> OptionRule:
    """The rule of one keyword argument, from its annotation."""
    union = get_origin(hint) in (Union, types.UnionType)
    args = get_args(hint) if union else (hint,)
    nullable = type(None) in args or default is None
    rest = [a for a in args if a is not type(None)]
    common = {"statistic": statistic, "name": key, "default": default, "nullable": nullable}
    if key == "weights":
        return OptionRule(kind="weights", **common)
    if key == "form":
        return OptionRule(kind="form", **common)
    if len(rest) == 1 and get_origin(rest[0]) is Literal:
        return OptionRule(kind="choice", choices=tuple(get_args(rest[0])), **common)
    if rest == [bool]:
        return OptionRule(kind="flag", **common)
    if rest in ([float], [int]):
        return OptionRule(kind="number", **common)
    raise TypeError(f"{statistic}: no rule to read option {key!r} annotated {hint!r}")


@cache
def option_rules(name: str) -> dict[str, OptionRule]:
    """The options of the statistic ``name`` and how each is read, in the order of its
    function's signature (from the annotations of its registered estimator).

    Examples
    --------
    >>> list(option_rules("krippendorff_alpha"))
    ['level']
    >>> option_rules("krippendorff_alpha")["level"].choices
    ('nominal', 'ordinal', 'interval', 'ratio')
    """
    stat = REGISTRY[name]
    hints = get_type_hints(stat.prepare)
    return {k: _rule(name, k, hints[k], stat.defaults[k]) for k in stat.options}


@dataclass(frozen=True)
class ParsedStatistic:
    """One statistic to compute: its ``label`` in the result, its registry ``name`` and the
    ``options`` given (checked, in canonical form: ``"squared"`` weights read
    ``"quadratic"``, ICC forms their Shrout-Fleiss name).

    Examples
    --------
    >>> stat = parse_statistic("krippendorff_alpha:level=interval")
    >>> stat.label, stat.name, stat.options
    ('krippendorff_alpha (level=interval)', 'krippendorff_alpha', {'level': 'interval'})
    """

    label: str
    name: str
    options: Mapping[str, Any] = field(default_factory=dict)


#: What the ``statistics`` argument of :func:`raterstats.agreement.agreement` accepts per
#: statistic: a name, ``"name:key=value,..."``, a ``(name, {key: value})`` pair, or an
#: already parsed statistic.
StatisticSpec = str | tuple[str, Mapping[str, Any]] | ParsedStatistic


def _split_options(text: str) -> list[str]:
    """``key=value`` items separated by commas outside parentheses."""
    items, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        current += ch
    items.append(current)
    return items


def _read_text(spec: str, problems: list[str]) -> tuple[str, dict[str, str]]:
    """The name and the raw ``key: value`` texts of ``"name:key=value,..."``."""
    name, sep, rest = spec.partition(":")
    name = name.strip()
    raw: dict[str, str] = {}
    if sep and not rest.strip():
        problems.append("no options after ':' (write name:key=value,key=value)")
    elif sep:
        for item in _split_options(rest):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                problems.append(f"option {item.strip()!r} is not key=value")
            elif key in raw:
                problems.append(f"option {key!r} is given twice")
            else:
                raw[key] = value.strip()
    return name, raw


def auto_label(name: str, options: Mapping[str, Any]) -> str:
    """The label of a statistic in the result: its name, with the options given (in the
    order of the function's signature) in parentheses.

    Examples
    --------
    >>> auto_label("cohen_kappa", {"weights": "quadratic"})
    'cohen_kappa (weights=quadratic)'
    >>> auto_label("fleiss_kappa", {})
    'fleiss_kappa'
    """
    order = [k for k in REGISTRY[name].options if k in options] if name in REGISTRY else []
    order += [k for k in options if k not in order]
    if not order:
        return name
    return f"{name} ({', '.join(f'{k}={_show(options[k])}' for k in order)})"


def parse_statistic(spec: StatisticSpec, *, label: str | None = None) -> ParsedStatistic:
    """Read one statistic: a name, ``"name:key=value,..."`` or ``(name, {key: value})``.

    Parameters
    ----------
    spec : str, tuple or ParsedStatistic
        The statistic and its options (the keyword arguments of the function of that name).
    label : str, optional
        Its label in the result (default: the name, with the options given).

    Returns
    -------
    ParsedStatistic

    Raises
    ------
    AgreementUsageError
        Every problem of ``spec``: an unknown statistic or option, a value the option does
        not take, or options that do not go together; each names the statistic and option
        and says what is allowed.

    Examples
    --------
    >>> parse_statistic("icc:form=ICC(3,k)").options
    {'form': 'ICC(3,k)'}
    >>> parse_statistic(("cohen_kappa", {"weights": "squared"})).label
    'cohen_kappa (weights=quadratic)'
    >>> try:
    ...     parse_statistic("krippendorff_alpha:levl=interval")
    ... except ValueError as err:
    ...     print(err)  # doctest: +NORMALIZE_WHITESPACE
    statistic 'krippendorff_alpha:levl=interval': krippendorff_alpha has no option 'levl';
    did you mean 'level'? (its options: level)
    """
    if isinstance(spec, ParsedStatistic):
        return (
            spec
            if label is None or label == spec.label
            else ParsedStatistic(label, spec.name, dict(spec.options))
        )
    problems: list[str] = []
    given: Mapping[str, Any]
    if isinstance(spec, str):
        name, given = _read_text(spec, problems)
        shown = spec
    elif (
        isinstance(spec, tuple)
        and len(spec) == 2
        and isinstance(spec[0], str)
        and isinstance(spec[1], Mapping)
    ):
        name, given = spec[0], spec[1]
        shown = f"({name!r}, {{{', '.join(f'{k!r}: ...' for k in given)}}})"
    else:
        raise AgreementUsageError(
            [f"statistic {spec!r} is not a name, 'name:key=value' or a (name, {{key: value}}) pair"]
        )
    at = f"statistic {shown!r}: " if isinstance(spec, str) else f"statistic {name!r}: "
    if name not in REGISTRY:
        known = sorted(REGISTRY)
        raise AgreementUsageError(
            [f"{at}unknown statistic {name!r}{_hint(name, known)} (known: {', '.join(known)})"]
        )
    rules = option_rules(name)
    options: dict[str, Any] = {}
    for key, value in given.items():
        if key not in rules:
            problems.append(
                f"{name} has no option {key!r}{_hint(str(key), list(rules))} "
                f"(its options: {', '.join(rules)})"
            )
            continue
        try:
            options[key] = rules[key].parse(value)
        except ValueError as err:
            problems.append(f"{name}: {key} {err}")
    check = REGISTRY[name].check
    if not problems and check is not None:
        problems += check(**{k: options.get(k, rules[k].default) for k in rules})
    if problems:
        raise AgreementUsageError([at + p for p in problems])
    return ParsedStatistic(label or auto_label(name, options), name, options)


def parse_statistics(
    statistics: StatisticSpec | Sequence[StatisticSpec] | Mapping[str, StatisticSpec],
) -> tuple[ParsedStatistic, ...]:
    """Read the ``statistics`` of :func:`raterstats.agreement.agreement`: one spec, a
    sequence of them, or a mapping ``{label: spec}``; every problem of every spec is listed
    at once.

    Parameters
    ----------
    statistics : str, tuple, sequence or mapping
        One statistic (see :func:`parse_statistic`), a sequence of them, or a mapping
        ``{label: statistic}`` that sets the labels.

    Returns
    -------
    tuple of ParsedStatistic
        In the order given.

    Raises
    ------
    AgreementUsageError
        The problems of the specs (see :func:`parse_statistic`), labels that occur twice, or
        no statistic at all.

    Examples
    --------
    >>> [s.label for s in parse_statistics(["krippendorff_alpha",
    ...                                     "krippendorff_alpha:level=interval"])]
    ['krippendorff_alpha', 'krippendorff_alpha (level=interval)']
    """
    entries: list[tuple[str | None, Any]]
    if isinstance(statistics, Mapping):
        entries = [(str(k), v) for k, v in statistics.items()]
    elif isinstance(statistics, str | ParsedStatistic) or (
        isinstance(statistics, tuple)
        and len(statistics) == 2
        and isinstance(statistics[1], Mapping)
    ):
        entries = [(None, statistics)]
    else:
        entries = [(None, s) for s in statistics]
    out: list[ParsedStatistic] = []
    problems: list[str] = []
    for label, spec in entries:
        try:
            out.append(parse_statistic(spec, label=label))
        except AgreementUsageError as err:
            problems.extend(err.problems)
    labels = [s.label for s in out]
    dups = sorted({x for x in labels if labels.count(x) > 1})
    if dups:
        problems.append(
            f"statistics: {dups} occur more than once; give each its own options, or labels "
            "with a mapping {label: spec}"
        )
    if not entries:
        problems.append("statistics: nothing to compute")
    if problems:
        raise AgreementUsageError(problems)
    return tuple(out)


def resolve_options(stat: ParsedStatistic, coded: Coded) -> tuple[dict[str, Any], str]:
    """The options ``stat`` is computed with on ``coded`` (its defaults filled in, those
    that depend on the data decided), and their text as the result states it: the main
    option always (level, weights, form, kind, ...), the others when given or not at their
    default, with where a data-dependent default came from.

    Examples
    --------
    >>> from raterstats.agreement.data import encode_matrix
    >>> coded = encode_matrix([[1, 2], [2, 2]])
    >>> resolve_options(parse_statistic("krippendorff_alpha"), coded)[1]
    'level=nominal (default for data without a scale)'
    >>> resolve_options(parse_statistic("cohen_kappa:weight_scale=observed_level_index"),
    ...                 coded)[1]
    'weights=identity, weight_scale=observed_level_index'
    """
    entry = REGISTRY[stat.name]
    full = {k: stat.options.get(k, entry.defaults[k]) for k in entry.options}
    notes: dict[str, str] = {}
    if entry.resolve is not None:
        full, notes = entry.resolve(coded, full)
    parts = []
    for i, key in enumerate(entry.options):
        value = full[key]
        default = entry.defaults[key]
        if value is None or (i > 0 and key not in stat.options and _show(value) == _show(default)):
            continue
        note = f" ({notes[key]})" if key in notes else ""
        parts.append(f"{key}={_show(value)}{note}")
    return full, ", ".join(parts)


def treats_levels_as_unordered(name: str, options: Mapping[str, Any]) -> bool:
    """True when the statistic ``name`` with the (resolved) ``options`` treats the levels as
    unordered categories: nominal alpha, and the statistics with agreement weights when they
    are the identity (no partial agreement, no tolerance).

    Examples
    --------
    >>> treats_levels_as_unordered("fleiss_kappa", {"weights": "identity"})
    True
    >>> treats_levels_as_unordered("krippendorff_alpha", {"level": "interval"})
    False
    """
    names = REGISTRY[name].options
    if "level" in names:
        return options.get("level") == "nominal"
    if "weights" not in names or options.get("tolerance"):
        return False
    weights = options.get("weights")
    return weights is None or (
        isinstance(weights, str) and K.WEIGHT_ALIASES.get(weights) == "identity"
    )


__all__ = [
    "MAX_UNORDERED_LEVELS",
    "OptionRule",
    "ParsedStatistic",
    "StatisticSpec",
    "auto_label",
    "option_rules",
    "parse_statistic",
    "parse_statistics",
    "resolve_options",
    "treats_levels_as_unordered",
]
