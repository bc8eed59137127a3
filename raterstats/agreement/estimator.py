"""How a statistic is evaluated: additive parts or a direct function, plus the registry that
:func:`raterstats.agreement.agreement` uses."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from raterstats.agreement import kernels as K
from raterstats.agreement.data import Coded, warn_degenerate


@dataclass(frozen=True)
class Direct:
    """A statistic that is not additive over units: ``fn(coded) -> (estimate, reason)``.

    Bootstrap replicates call ``fn`` on resampled units.
    """

    fn: Callable[[Coded], tuple[float, int]]


Prepared = K.Parts | Direct


def evaluate(prepared: Prepared, coded: Coded) -> tuple[float, int]:
    """Point estimate and reason mask."""
    if isinstance(prepared, Direct):
        return prepared.fn(coded)
    return K.evaluate(prepared)


def finish(name: str, prepared: Prepared, coded: Coded, *, stacklevel: int = 4) -> float:
    """Evaluate, warn with the reason when the value is undefined, return a float."""
    est, reason = evaluate(prepared, coded)
    if np.isnan(est):
        if coded.n_active_raters() < 2 and reason & (K.REASON_NO_PAIRS | K.REASON_TOO_FEW):
            reason |= K.REASON_ONE_RATER
        warn_degenerate(name, reason or K.REASON_NO_PAIRS, stacklevel=stacklevel)
    return float(est)


#: ``check(**options) -> problems``: what is wrong with a combination of options, whatever
#: the data (e.g. ``weights`` and ``tolerance`` together)
OptionCheck = Callable[..., list[str]]
#: ``resolve(coded, options) -> (options, notes)``: the options a cell is computed with, where
#: a default depends on the data (alpha's level follows the scale), and a note per option
#: that the data decided
OptionResolver = Callable[[Coded, dict[str, Any]], tuple[dict[str, Any], dict[str, str]]]


@dataclass(frozen=True)
class Statistic:
    """Registry entry: ``prepare(coded, **options)``, the options it accepts (in the order
    of its signature: the first is the one every result states), their defaults, and the
    optional ``check`` of a combination of options and ``resolve`` of data-dependent
    defaults."""

    name: str
    prepare: Callable[..., Prepared]
    options: tuple[str, ...]
    defaults: dict[str, Any]
    check: OptionCheck | None = None
    resolve: OptionResolver | None = None


REGISTRY: dict[str, Statistic] = {}


def register(
    name: str, *, check: OptionCheck | None = None, resolve: OptionResolver | None = None
) -> Callable[[Callable[..., Prepared]], Callable[..., Prepared]]:
    """Register ``prepare(coded, *, option=default, ...)`` for ``agreement()``, with the
    optional ``check`` of its options and ``resolve`` of its data-dependent defaults."""

    def deco(fn: Callable[..., Prepared]) -> Callable[..., Prepared]:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]
        REGISTRY[name] = Statistic(
            name=name,
            prepare=fn,
            options=tuple(p.name for p in params),
            defaults={p.name: p.default for p in params},
            check=check,
            resolve=resolve,
        )
        return fn

    return deco
