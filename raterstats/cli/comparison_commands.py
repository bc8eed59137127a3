"""What the commands do with comparative judgments (``--comparisons pairs|rankings``):
``validate``, ``agreement``, ``rank`` and ``fit`` read the file with
:func:`~raterstats.cli.study.load_comparisons` and call these; ``designs`` and ``fit`` use
:func:`comparison_model` and :func:`check_model_data` to refuse a model that fits the other
kind of data (exit 2, naming the models that fit it).

The commands' options keep their meaning; those that apply to ratings only (``--scale``,
``--score``, ``--by``, ...) are usage errors (exit 2) with comparative judgments.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from raterstats.cli.app import fail, print_frame, spinner
from raterstats.cli.studyfile import check_choice
from raterstats.formatting import visible_lines

if TYPE_CHECKING:
    import polars as pl
    import xarray as xr

    from raterstats.comparisons import Comparisons
    from raterstats.models import Model

#: the ``rank --method`` of comparative judgments when none is given (maximum-likelihood
#: Bradley-Terry with a bootstrap: the Chatbot Arena method)
DEFAULT_COMPARISON_METHOD = "bradley_terry_ml"


def comparison_models() -> dict[str, type[Model]]:
    """The model of each kind of comparative judgments (and the default of ``fit`` for
    it): ``{"pairs": BradleyTerry, "rankings": PlackettLuce}``."""
    from raterstats.models import BradleyTerry, PlackettLuce

    return {"pairs": BradleyTerry, "rankings": PlackettLuce}


def comparison_model(cls: type[Model]) -> str | None:
    """The kind of comparative judgments ``cls`` fits (``"pairs"``, ``"rankings"``), or
    ``None`` for a model of ratings.

    Examples
    --------
    >>> from raterstats.models import MACE, PlackettLuce
    >>> comparison_model(MACE), comparison_model(PlackettLuce)
    (None, 'rankings')
    """
    for kind, model in comparison_models().items():
        if issubclass(cls, model):
            return kind
    return None


def check_model_data(cls: type[Model], kind: str | None, command: str) -> None:
    """Exit 2 when model ``cls`` does not fit the data: a model of ratings given
    comparative judgments of ``kind``, a comparison model given ratings (``kind`` None),
    or a model of pairs given rankings and the reverse."""
    fits = comparison_model(cls)
    if fits == kind:
        return
    if kind is None:
        raise fail(
            f"{command}: the {cls.name} model fits comparative judgments ({fits}), not "
            f"ratings: read the file with --comparisons {fits}",
            2,
        )
    model = comparison_models()[kind]
    right = model.cli_names[0] if model.cli_names else model.name
    what = "ratings" if fits is None else f"comparative judgments of kind {fits}"
    raise fail(
        f"{command}: the {cls.name} model fits {what}, and the file holds {kind}: fit "
        f"{kind} with --model {right} (the default for --comparisons {kind})",
        2,
    )


def refuse(command: str, given: dict[str, Any]) -> None:
    """Exit 2 naming the options given (not ``None``) that do not apply to comparative
    judgments."""
    extra = [k for k, v in given.items() if v is not None and v != [] and v is not False]
    if extra:
        raise fail(
            f"{command}: {', '.join(extra)} appl{'ies' if len(extra) == 1 else 'y'} to "
            "ratings only, not to comparative judgments (--comparisons)",
            2,
        )


def validate_comparisons(comparisons: Comparisons, *, as_json: bool) -> None:
    """Print the :class:`~raterstats.comparisons.ComparisonsSummary` (Markdown or JSON)."""
    summary = comparisons.summary()
    if as_json:
        typer.echo(json.dumps(summary.to_dict(), indent=2, default=str))
    else:
        typer.echo(summary.to_markdown())


def agreement_comparisons(
    comparisons: Comparisons,
    *,
    statistics: list[str] | None,
    n_boot: int,
    ci: float,
    seed: int,
    as_json: bool,
    csv: Path | None,
) -> tuple[pl.DataFrame, list[Warning | str]]:
    """``comparison_agreement`` per dimension with bootstrap intervals, printed as a table;
    returns the table and the warnings it gave (for the command's stderr lines)."""
    from raterstats.agreement import COMPARISON_AGREEMENT_STATISTICS, comparison_agreement
    from raterstats.analyze import comparison_agreement_table, comparison_statistics

    known = list(COMPARISON_AGREEMENT_STATISTICS)
    asked = statistics or comparison_statistics(comparisons)  # those that apply, by default
    chosen = [check_choice(s, known, "--statistic") for s in asked]
    with (
        spinner(f"agreement: {len(chosen)} statistics, {n_boot} bootstrap replicates"),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        ds = comparison_agreement(
            comparisons, statistics=chosen, n_boot=n_boot, ci_prob=ci, random_seed=seed
        )
    table = comparison_agreement_table(ds)
    print_frame(table, as_json=as_json, csv=csv)
    return table, [w.message for w in caught]


def rank_source(
    comparisons: Comparisons | None, dt: xr.DataTree | None, method: str | None
) -> dict[str, Any]:
    """The ``rank_systems`` keyword arguments for comparative judgments: a baseline
    ``method`` of ``rank_methods(kind="comparisons")`` (default
    :data:`DEFAULT_COMPARISON_METHOD`), or nothing more for a comparison fit (whose
    data, when given, must be those it was fitted to: a warning otherwise)."""
    from raterstats.models.fingerprint import fingerprint_matches
    from raterstats.ranking import rank_methods

    if dt is None:
        chosen = method or DEFAULT_COMPARISON_METHOD
        return {"method": check_choice(chosen, list(rank_methods(kind="comparisons")), "--method")}
    if comparisons is not None:
        stored = dt.attrs.get("data_fingerprint")
        if stored and not fingerprint_matches(stored, comparisons):
            typer.echo(
                "rank: warning: the comparisons differ from those the fit was made from (data "
                "fingerprint): check the file and its --filter",
                err=True,
            )
    return {}


def fit_model(model: str | None, kind: str | None) -> str | None:
    """The model ``fit`` fits: the one asked for, else for comparative judgments the model
    of their kind (:func:`comparison_models`), else ``None`` (the command's default)."""
    if model is not None or kind is None:
        return model
    return comparison_models()[kind].name


def echo_fit(info: dict[Any, Any], health: Any, target: Path) -> None:
    """The lines ``fit`` prints about a fit (shared by ratings and comparisons)."""
    typer.echo(
        f"{info['model']} fitted by {info['method']} in {float(info['fit_seconds']):.1f} s; "
        f"written to {target}"
    )
    typer.echo(visible_lines(("health: " if health.ok else "health: FAILED: ") + health.text))


def designs_refusal(dt: xr.DataTree) -> str | None:
    """Why ``designs --fit`` cannot compare the designs of a fit of comparative judgments
    (``None`` for any other fit)."""
    from raterstats.models import model_from_datatree

    try:
        cls = type(model_from_datatree(dt))
    except (ValueError, KeyError, TypeError):
        return None
    if comparison_model(cls) is None:
        return None
    return (
        f"designs: {dt.attrs.get('model')} is a fit of comparative judgments; `raterstats "
        "designs` compares the annotation designs of a ratings fit. Whether pairs, rankings or "
        "absolute ratings recover the true ranking for fewer rater hours is answered by "
        "simulation in Python: raterstats.design.compare_design_kinds"
    )


__all__ = [
    "DEFAULT_COMPARISON_METHOD",
    "agreement_comparisons",
    "check_model_data",
    "comparison_model",
    "comparison_models",
    "designs_refusal",
    "echo_fit",
    "fit_model",
    "rank_source",
    "refuse",
    "validate_comparisons",
]
