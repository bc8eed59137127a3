"""Checks of scalar arguments (counts, numbers, seeds, flags, choices) shared by every
public function, so that a bad argument gets the same clear message wherever it enters.

Each ``*_problem`` function returns ``None`` for a good value, or one sentence naming the
argument, the value given and what is allowed. :func:`check_arguments` collects such
sentences and raises one :class:`ArgumentError` (a ``ValueError``) listing every problem at
once; :func:`check_counts` is its one-line form for integer counts
(``check_counts(n_boot=(n_boot, 0), max_draws=(max_draws, 1))``).

A bad argument is always a ``ValueError``, wrong type included (``draws=2.5``,
``random_seed="1"``): one exception type to catch, whatever the mistake.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

#: the largest seed accepted (seeds are stored as 64-bit integers in a fit's attributes)
SEED_MAX = 2**63 - 1

_REPR_MAX = 60


class ArgumentError(ValueError):
    """Bad arguments; ``problems`` lists one sentence per bad argument.

    Examples
    --------
    >>> e = ArgumentError(["draws must be at least 1, not 0"], where="fit")
    >>> str(e), isinstance(e, ValueError)
    ('fit: draws must be at least 1, not 0', True)
    """

    def __init__(self, problems: Sequence[str], *, where: str | None = None) -> None:
        self.problems = list(problems)
        text = "; ".join(self.problems)
        super().__init__(f"{where}: {text}" if where else text)


def shown(value: Any) -> str:
    """``repr`` of a value given by the user, shortened, with its type when that is not
    obvious from the repr (``2.5 (float)``, ``'10' (str)``).

    Examples
    --------
    >>> shown(2.5), shown("10"), shown(3), shown(None)
    ('2.5 (float)', "'10' (str)", '3', 'None')
    """
    text = repr(value)
    if len(text) > _REPR_MAX:
        text = text[: _REPR_MAX - 3] + "..."
    if value is None or is_integer(value):
        return text
    return f"{text} ({type(value).__name__})"


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer (Python or NumPy; ``True`` / ``False`` are not).

    Examples
    --------
    >>> is_integer(3), is_integer(np.int64(3)), is_integer(3.0), is_integer(True)
    (True, True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def is_real(value: Any) -> bool:
    """Whether ``value`` is a real number (int or float, Python or NumPy; not a bool).

    Examples
    --------
    >>> is_real(0.5), is_real(np.float32(0.5)), is_real(1), is_real("0.5"), is_real(False)
    (True, True, True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def integer_problem(
    name: str,
    value: Any,
    *,
    minimum: int | None = 0,
    maximum: int | None = None,
    optional: bool = False,
) -> str | None:
    """``None`` when ``value`` is an integer in ``[minimum, maximum]`` (``None`` too when
    ``optional``), else what is wrong.

    Examples
    --------
    >>> integer_problem("draws", 10, minimum=1) is None
    True
    >>> integer_problem("draws", 0, minimum=1)
    'draws must be at least 1, not 0'
    >>> integer_problem("draws", 2.5, minimum=1)
    'draws must be an integer of at least 1, not 2.5 (float)'
    >>> integer_problem("cores", None, minimum=1, optional=True) is None
    True
    """
    if value is None and optional:
        return None
    if minimum is not None and maximum is not None:
        allowed = f"in [{minimum}, {maximum}]"
    elif minimum is not None:
        allowed = f"at least {minimum}"
    elif maximum is not None:
        allowed = f"at most {maximum}"
    else:
        allowed = ""
    if not is_integer(value):
        of = f" of {allowed}" if allowed.startswith("at ") else (f" {allowed}" if allowed else "")
        return f"{name} must be an integer{of}{' or None' if optional else ''}, not {shown(value)}"
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        return f"{name} must be {allowed}, not {shown(value)}"
    return None


def real_problem(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    optional: bool = False,
) -> str | None:
    """``None`` when ``value`` is a finite real number between ``low`` and ``high``
    (excluded when ``open_low`` / ``open_high``; ``None`` too when ``optional``), else what
    is wrong.

    Examples
    --------
    >>> real_problem("target_accept", 0.9, low=0, high=1, open_low=True, open_high=True)
    >>> real_problem("target_accept", 1.0, low=0, high=1, open_low=True, open_high=True)
    'target_accept must be a number in (0, 1), not 1.0 (float)'
    >>> real_problem("tol", float("nan"), low=0)
    'tol must be a finite number >= 0, not nan (float)'
    """
    if value is None and optional:
        return None
    if low is not None and high is not None:
        allowed = f"in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
    elif low is not None:
        allowed = f"{'>' if open_low else '>='} {low:g}"
    elif high is not None:
        allowed = f"{'<' if open_high else '<='} {high:g}"
    else:
        allowed = ""
    what = f"a finite number {allowed}" if low is None or high is None else f"a number {allowed}"
    message = f"{name} must be {what.rstrip()}{' or None' if optional else ''}, not {shown(value)}"
    if not is_real(value) or not math.isfinite(float(value)):
        return message
    v = float(value)
    too_low = low is not None and (v <= low if open_low else v < low)
    too_high = high is not None and (v >= high if open_high else v > high)
    return message if too_low or too_high else None


def flag_problem(name: str, value: Any) -> str | None:
    """``None`` when ``value`` is ``True`` or ``False``, else what is wrong.

    Examples
    --------
    >>> flag_problem("progress", "no")
    "progress must be True or False, not 'no' (str)"
    """
    if isinstance(value, bool | np.bool_):
        return None
    return f"{name} must be True or False, not {shown(value)}"


def choice_problem(name: str, value: Any, allowed: Sequence[Any]) -> str | None:
    """``None`` when ``value`` is one of ``allowed``, else what is wrong.

    Examples
    --------
    >>> choice_problem("method", "gibbs", ("nuts", "map"))
    "method must be one of ['nuts', 'map'], not 'gibbs' (str)"
    """
    try:
        ok = any(isinstance(value, type(a)) and value == a for a in allowed)
    except (TypeError, ValueError):  # an array compared element-wise
        ok = False
    return None if ok else f"{name} must be one of {list(allowed)}, not {shown(value)}"


def seed_problem(name: str, value: Any, *, optional: bool = True) -> str | None:
    """``None`` when ``value`` is a seed: an integer in ``[0, SEED_MAX]`` (or ``None``
    when ``optional``: a fresh seed is drawn), else what is wrong.

    Examples
    --------
    >>> seed_problem("random_seed", -1)
    'random_seed must be in [0, 9223372036854775807], not -1'
    """
    return integer_problem(name, value, minimum=0, maximum=SEED_MAX, optional=optional)


def check_arguments(*problems: str | None, where: str | None = None) -> None:
    """Raise one :class:`ArgumentError` listing every problem (``None`` entries are good
    arguments); return quietly when there is none.

    Examples
    --------
    >>> check_arguments(None, integer_problem("n_boot", 10))
    >>> check_arguments(integer_problem("n_boot", -1), flag_problem("progress", 1), where="f")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    raterstats.checks.ArgumentError: f: n_boot must be at least 0, not -1; progress must be ...
    """
    found = [p for p in problems if p is not None]
    if found:
        raise ArgumentError(found, where=where)


def count_problems(**counts: tuple[Any, int]) -> list[str]:
    """The problems of integer counts given as ``name=(value, minimum)``.

    Examples
    --------
    >>> count_problems(n_boot=(100, 0), max_draws=(0, 1))
    ['max_draws must be at least 1, not 0']
    """
    found = [integer_problem(k, v, minimum=lo) for k, (v, lo) in counts.items()]
    return [p for p in found if p is not None]


def check_counts(*, where: str | None = None, **counts: tuple[Any, int]) -> None:
    """Raise one :class:`ArgumentError` for every integer count, given as
    ``name=(value, minimum)``, that is not an integer of at least its minimum.

    Examples
    --------
    >>> check_counts(n_boot=(200, 0), max_draws=(250, 1))
    >>> check_counts(n_boot=(2.5, 0), max_draws=(0, 1))  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    raterstats.checks.ArgumentError: n_boot must be an integer of at least 0, not 2.5 (float);
        max_draws must be at least 1, not 0
    """
    check_arguments(*count_problems(**counts), where=where)


__all__ = [
    "SEED_MAX",
    "ArgumentError",
    "check_arguments",
    "check_counts",
    "choice_problem",
    "count_problems",
    "flag_problem",
    "integer_problem",
    "is_integer",
    "is_real",
    "real_problem",
    "seed_problem",
    "shown",
]
