"""The rules of the arguments of an inference run (method, sampler, draws, tune, chains,
seed, target acceptance, cores, engine options), checked before anything is compiled:
:func:`sampler_argument_problems`, used by :meth:`raterstats.models.Model.fit`,
:func:`raterstats.inference.run_inference` and :func:`raterstats.inference.run_density`;
and how PyMC's chains start their processes (:func:`chain_process_start`).
"""

from __future__ import annotations

import inspect
import itertools
import sys
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from raterstats.checks import (
    choice_problem,
    flag_problem,
    integer_problem,
    real_problem,
    seed_problem,
    shown,
)

#: Inference methods for PyMC models (``"em"`` is model-specific).
METHODS = ("nuts", "map", "advi")
#: NUTS samplers.
SAMPLERS = ("nutpie", "pymc", "numpyro")
#: nutpie's mass-matrix adaptations (``adaptation=``).
ADAPTATIONS = ("diag", "draw_diag", "low_rank")


def _at_least(low: int) -> Callable[[str, Any], str | None]:
    return lambda name, v: integer_problem(name, v, minimum=low)


#: engine options checked before any compilation: name -> (methods, samplers (``None``:
#: any; NUTS only), check). Other keywords go to the engine unchecked (its own errors).
ENGINE_OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None, Callable[..., Any]]] = {
    "n": (("advi",), None, _at_least(1)),
    "restarts": (("em",), None, _at_least(1)),
    "max_iter": (("em",), None, _at_least(1)),
    "short_iter": (("em",), None, _at_least(1)),
    "tol": (("em",), None, lambda name, v: real_problem(name, v, low=0)),
    "variational": (("em",), None, flag_problem),
    "thin": (("gibbs",), None, _at_least(1)),
    "inner": (("gibbs",), None, _at_least(1)),
    "maxdepth": (("nuts",), ("nutpie",), _at_least(1)),
    "max_energy_error": (
        ("nuts",),
        ("nutpie",),
        lambda name, v: real_problem(name, v, low=0, open_low=True),
    ),
    "adaptation": (
        ("nuts",),
        ("nutpie",),
        lambda name, v: choice_problem(name, v, ADAPTATIONS),
    ),
    "max_treedepth": (("nuts",), ("pymc", "numpyro"), _at_least(1)),
}


def sampler_argument_problems(
    *,
    method: Any,
    draws: Any,
    tune: Any,
    chains: Any,
    random_seed: Any,
    sampler: Any,
    target_accept: Any = None,
    cores: Any = None,
    progress: Any = True,
    methods: tuple[str, ...] = METHODS,
    options: Mapping[str, Any] | None = None,
    em_options: Collection[str] | None = None,
) -> list[str]:
    """Every problem of the arguments of an inference run, one sentence each (empty: all
    good), checked without compiling anything.

    The rules: ``method`` one of ``methods``; ``sampler`` one of :data:`SAMPLERS`;
    ``draws`` and ``chains`` integers of at least 1 (``draws`` may also be a tuple of
    checkpoints with NUTS by nutpie: :func:`draws_problem`); ``tune`` an integer of at least 0,
    and at least 1 for NUTS by nutpie (nutpie adapts its step size and mass matrix during
    tuning and stops with an internal error without it; ``sampler="pymc"`` runs NUTS with
    ``tune=0``, at its initial step size and unit mass matrix); ``random_seed`` None or an
    integer in ``[0, 2**63 - 1]``; ``target_accept`` None or a number in (0, 1); ``cores``
    None or an integer of at least 1; ``progress`` True or False. Integers are ``int`` or
    NumPy integers (not ``2.5``, ``"10"`` nor ``True``). ``options`` (engine keywords)
    are checked by :data:`ENGINE_OPTIONS`: each must belong to the method (and sampler)
    in use and have a valid value; keywords not listed there are left to the engine, except
    with ``method="em"``, where every keyword must be one of ``em_options`` (the options
    the model's EM takes; ``None``: not checked). Every argument is checked whatever the
    method, so that a bad value never passes silently because it went unused.

    Examples
    --------
    >>> for p in sampler_argument_problems(method="nuts", draws=0, tune=10, chains=2.5,
    ...                                    random_seed=1, sampler="nutpie"):
    ...     print(p)
    draws must be at least 1, not 0
    chains must be an integer of at least 1, not 2.5 (float)
    >>> sampler_argument_problems(method="nuts", draws=10, tune=0, chains=1, random_seed=None,
    ...                           sampler="pymc")
    []
    """
    problems = [
        choice_problem("method", method, methods),
        choice_problem("sampler", sampler, SAMPLERS),
        draws_problem(draws, method=method, sampler=sampler),
        integer_problem("tune", tune, minimum=0),
        integer_problem("chains", chains, minimum=1),
        seed_problem("random_seed", random_seed),
        real_problem(
            "target_accept",
            target_accept,
            low=0,
            high=1,
            open_low=True,
            open_high=True,
            optional=True,
        ),
        integer_problem("cores", cores, minimum=1, optional=True),
        flag_problem("progress", progress),
    ]
    nutpie_nuts = method == "nuts" and sampler == "nutpie"
    if nutpie_nuts and problems[3] is None and tune == 0:
        problems[3] = (
            "tune must be at least 1 with method='nuts' and sampler='nutpie' (nutpie adapts "
            "its step size and mass matrix during tuning and cannot sample without it; "
            "sampler='pymc' accepts tune=0), not 0"
        )
    options = dict(options or {})
    if method == "em" and em_options is not None:
        unknown = sorted(k for k in options if k not in em_options)
        if unknown:
            problems.append(f"unknown EM options {unknown}; EM options: {sorted(em_options)}")
        options = {k: v for k, v in options.items() if k not in unknown}
    for name, value in options.items():
        if name not in ENGINE_OPTIONS:
            continue
        for_methods, for_samplers, check = ENGINE_OPTIONS[name]
        if method not in for_methods or (
            method == "nuts" and for_samplers and sampler not in for_samplers
        ):
            where = " and ".join(
                [f"method={m!r}" for m in for_methods][:1]
                + ([f"sampler in {list(for_samplers)}"] if for_samplers else [])
            )
            problems.append(
                f"{name}={shown(value)} is an option of {where}; this run has "
                f"method={method!r}" + (f", sampler={sampler!r}" if method == "nuts" else "")
            )
        else:
            problems.append(check(name, value))
    return [p for p in problems if p is not None]


def draws_problem(draws: Any, *, method: Any = "nuts", sampler: Any = "nutpie") -> str | None:
    """The problem of a ``draws`` argument, or None: an integer of at least 1, or, with
    ``method="nuts"`` and ``sampler="nutpie"``, a tuple or list of checkpoints: strictly
    increasing integers of at least 1 (the fit samples until it passes its checks at one
    of them; :func:`raterstats.inference.run_density`).

    Examples
    --------
    >>> draws_problem((1000, 1500)) is None
    True
    >>> print(draws_problem((1500, 1000)))  # doctest: +NORMALIZE_WHITESPACE
    draws as checkpoints must be strictly increasing integers of at least 1,
    not (1500, 1000) (tuple)
    >>> print(draws_problem([500, 1000], method="map"))  # doctest: +NORMALIZE_WHITESPACE
    draws as checkpoints (a sample that stops once its checks pass) needs method='nuts'
    and sampler='nutpie', not method='map'
    """
    if not isinstance(draws, tuple | list):
        return integer_problem("draws", draws, minimum=1)
    ints = all(isinstance(d, int | np.integer) and not isinstance(d, bool) for d in draws)
    if not draws or not ints or draws[0] < 1 or any(b <= a for a, b in itertools.pairwise(draws)):
        return (
            "draws as checkpoints must be strictly increasing integers of at least 1, "
            f"not {shown(draws)}"
        )
    if method != "nuts" or sampler != "nutpie":
        return (
            "draws as checkpoints (a sample that stops once its checks pass) needs "
            f"method='nuts' and sampler='nutpie', not method={method!r}"
            + (f", sampler={sampler!r}" if method == "nuts" else "")
        )
    return None


def keyword_names(fn: Any, skip: tuple[str, ...]) -> tuple[str, ...] | None:
    """The keyword-only options ``fn`` names (less ``skip``); ``None`` when it names none
    and takes ``**options`` only (then options are not checked before the call): the
    ``em_options`` of :func:`sampler_argument_problems`.

    Examples
    --------
    >>> def f(x, *, tol=1.0, seed=0, **rest): ...
    >>> keyword_names(f, ("seed",))
    ('tol',)
    """
    params = inspect.signature(fn).parameters.values()
    names = tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in skip)
    return names or None


def chain_process_start(cores: int) -> str | None:
    """How PyMC's own sampler starts the processes of its chains: ``"forkserver"`` where
    JAX is loaded in this process (after a NumPyro fit; JAX runs threads, and a process
    forked from it may deadlock: JAX warns so at the fork), else None (PyMC's default for
    the platform). One core runs the chains in this process and starts none.

    Examples
    --------
    >>> chain_process_start(1) is None
    True
    """
    if cores > 1 and "jax" in sys.modules:
        return "forkserver"
    return None


__all__ = [
    "ADAPTATIONS",
    "ENGINE_OPTIONS",
    "METHODS",
    "SAMPLERS",
    "chain_process_start",
    "draws_problem",
    "keyword_names",
    "sampler_argument_problems",
]
