"""``raterstats labels``: the label a latent-class model gives each item, beside the
majority vote and the gold label, as a CSV; and the gold lines that ``raterstats fit``
prints.

Gold labels are never used silently: a model clamps its labels to gold only when asked
(``--use-gold``, or ``use_gold = true`` under ``[fit]`` / ``[labels]`` of the study file);
otherwise the gold labels are a check of the fit (:func:`raterstats.posterior.gold_check`),
and both commands print its accuracy, log loss and the majority vote's accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from raterstats import schema as S
from raterstats.cli.app import (
    ChainsOpt,
    DrawsOpt,
    JsonOpt,
    SamplerOpt,
    SeedOpt,
    TargetAcceptOpt,
    TuneOpt,
    UseGoldOpt,
    app,
    fail,
    open_fit,
    output,
    spinner,
)
from raterstats.cli.commands import DEFAULT_MODEL, choice_report, model_names_help
from raterstats.cli.study import DataOptions, Study, data_command, load_ratings, parse_value
from raterstats.cli.studyfile import check_choice, check_target_accept, fit_methods, parse_pairs
from raterstats.defaults import METHOD, RANDOM_SEED, SAMPLER
from raterstats.files import write_atomic

if TYPE_CHECKING:
    import polars as pl
    import xarray as xr

    from raterstats.choice import AutoModel
    from raterstats.models import Model
    from raterstats.ratings import Ratings

#: what ``raterstats fit`` and ``labels`` add to a gold line when gold did not clamp
CLAMP_HINT = " (--use-gold to clamp)"


def has_gold(ratings: Ratings) -> bool:
    """Whether the ratings carry at least one gold label.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> f = pl.DataFrame({"item": ["a", "a"], "rater": ["x", "y"], "rating": [1, 0]})
    >>> has_gold(read_ratings(f)), has_gold(read_ratings(f.with_columns(gold=pl.lit("1"))))
    (False, True)
    """
    data = ratings.data
    return S.GOLD in data.columns and data.get_column(S.GOLD).drop_nulls().len() > 0


def apply_use_gold(cls: type[Model], options: dict[str, Any], use_gold: Any, what: str) -> None:
    """Put ``use_gold`` (when given) into a model's ``options``; a usage error (exit 2)
    when it is true for a model without latent labels to clamp."""
    if use_gold is None:
        return
    if "use_gold" in cls.default_options:
        options["use_gold"] = bool(use_gold)
    elif use_gold:
        raise fail(
            f"{what}: --use-gold: the {cls.name} model has no latent labels to clamp to gold "
            f"(models with labels: {', '.join(labelled_models())})",
            2,
        )


def labelled_models() -> list[str]:
    """Names of the registered models whose fits have item labels (that answer
    ``item_posterior``)."""
    from raterstats.models import models_answering

    return [cls.name for cls in models_answering("item_posterior")]


def gold_report(dt: xr.DataTree, ratings: Ratings | None) -> tuple[str, dict[str, Any]] | None:
    """The gold line of a fit (``gold: N items, accuracy ...``) and its numbers for
    ``--json``, or None when there are no gold labels to check against; a fit of a model
    without item labels gives a line that says so."""
    from raterstats.models import model_from_datatree
    from raterstats.posterior import gold_check

    if ratings is not None and not has_gold(ratings):
        return None
    if not model_from_datatree(dt).answers("item_posterior"):
        if ratings is None:
            return None
        line = (
            f"gold: the ratings have gold labels, but {dt.attrs.get('model')} fits have no item "
            f"labels to check against them (models with labels: {', '.join(labelled_models())})"
        )
        return line, {"checked": False, "reason": line}
    try:
        check = gold_check(dt, ratings)
    except ValueError:
        return None  # no unit of the fit has a gold label
    line = str(check.attrs["summary"]) + ("" if check.attrs["gold_used"] else CLAMP_HINT)
    info: dict[str, Any] = {
        "checked": True,
        "gold_used": bool(check.attrs["gold_used"]),
        "n_gold": int(check["overall_n_gold"]),
        "accuracy": float(check["overall_accuracy"]),
        "majority_accuracy": float(check["overall_majority_accuracy"]),
        "log_loss": float(check["overall_log_loss"]),
        "by_dimension": {
            str(d): {
                "n_gold": int(check["n_gold"].sel(dimension=d)),
                "accuracy": _number(check["accuracy"].sel(dimension=d)),
                "majority_accuracy": _number(check["majority_accuracy"].sel(dimension=d)),
                "log_loss": _number(check["log_loss"].sel(dimension=d)),
            }
            for d in check["dimension"].values
        },
        "summary": line,
    }
    if "note" in check.attrs:
        info["note"] = str(check.attrs["note"])
    return line, info


def echo_gold(command: str, line: str, info: dict[str, Any]) -> None:
    """Print a :func:`gold_report`: the gold line on stdout beside the result, or, when
    there was nothing to check (a model without item labels), a note on stderr."""
    if info.get("checked"):
        typer.echo(line)
    else:
        typer.echo(f"{command}: note: {line}", err=True)


def _number(value: Any) -> float | None:
    v = float(value)
    return None if v != v else v


def labels_summary(table: pl.DataFrame) -> dict[str, Any]:
    """The numbers ``raterstats labels`` prints about an :func:`~raterstats.posterior.
    item_labels` table: units, items, dimensions, the mean label probability, how often
    the label is not one of the majority vote's categories, and the ties.

    Examples
    --------
    >>> import polars as pl
    >>> t = pl.DataFrame({"item": ["a", "b"], "dimension": ["d", "d"],
    ...                   "probability": [0.9, 0.7], "agrees_with_majority": [True, False],
    ...                   "majority_tie": [False, True]})
    >>> labels_summary(t)["disagree_share"]
    0.5
    """
    n = table.height
    disagree = int((~table.get_column("agrees_with_majority")).sum())
    return {
        "units": n,
        "items": table.get_column("item").n_unique(),
        "dimensions": table.get_column("dimension").n_unique(),
        "mean_probability": float(table.get_column("probability").to_numpy().mean()) if n else 0.0,
        "disagree_with_majority": disagree,
        "disagree_share": disagree / n if n else 0.0,
        "majority_ties": int(table.get_column("majority_tie").sum()),
    }


#: the keys :func:`model_spec` reads from the study-file table it is given (``[fit]``,
#: ``[labels]``); the schema test checks this list against the function's own reads
MODEL_SPEC_KEYS = (
    "model",
    "options",
    "use_gold",
    "method",
    "sampler",
    "draws",
    "tune",
    "chains",
    "seed",
    "target_accept",
)


def model_spec(
    s: Study,
    table: str,
    *,
    model: str | None,
    method: str | None,
    sampler: str | None,
    draws: int | None,
    tune: int | None,
    chains: int | None,
    seed: int | None,
    option: list[str] | None,
    use_gold: bool | None,
    labels: bool = False,
    target_accept: float | None = None,
) -> tuple[Model | AutoModel, dict[str, Any]]:
    """The model and fit settings that a fitting command names (the command line, then the
    study file's ``[table]``, then the defaults), checked before any data are read: an
    unknown model or option, a method the model does not have, or (``labels``) a model
    without item labels is a usage error (exit 2). Shared by ``fit`` and ``labels``.
    ``auto`` (:class:`raterstats.choice.AutoModel`) chooses among the models of the true
    label on the ratings when fitted."""
    from raterstats.models import model_class

    name = str(s.option(table, "model", model, DEFAULT_MODEL))
    if name.strip().lower() == "auto":
        return auto_spec(s, table, method=method, sampler=sampler, draws=draws, tune=tune,
                          chains=chains, seed=seed, option=option, use_gold=use_gold,
                          target_accept=target_accept)  # fmt: skip
    try:
        cls = model_class(name)
    except ValueError as err:
        raise fail(str(err), 2) from None
    if labels and not cls.answers("item_posterior"):
        raise fail(
            f"labels: the {cls.name} model has no item labels; models with labels: "
            f"{', '.join(labelled_models())}",
            2,
        )
    options = dict(s.option(table, "options", None, {}))
    options.update({k: parse_value(v) for k, v in parse_pairs(option, "--option").items()})
    apply_use_gold(cls, options, s.option(table, "use_gold", use_gold, None), table)
    try:
        spec = cls(**options)
    except (TypeError, ValueError) as err:
        raise fail(f"model {name}: {err}", 2) from None
    return spec, settings_from_study(
        s, table, cls.methods, method=method, sampler=sampler, draws=draws, tune=tune,
        chains=chains, seed=seed, target_accept=target_accept,
    )  # fmt: skip


def auto_spec(
    s: Study, table: str, *, option: list[str] | None, use_gold: bool | None, **given: Any
) -> tuple[AutoModel, dict[str, Any]]:
    """``--model auto``: the candidates of :func:`raterstats.choice.choose_model`, compared
    on the ratings without gold; model options and ``--use-gold`` do not apply."""
    from raterstats.choice import AutoModel

    if option or s.option(table, "options", None, {}):
        raise fail("--model auto compares the candidates at their defaults: --option does not "
                   "apply (name a model to set its options)", 2)  # fmt: skip
    if s.option(table, "use_gold", use_gold, None):
        raise fail("--model auto chooses without gold: --use-gold does not apply (name a "
                   "model to clamp its labels to gold)", 2)  # fmt: skip
    spec = AutoModel()
    return spec, settings_from_study(s, table, spec.methods, **given)


def settings_from_study(
    s: Study,
    table: str,
    methods: tuple[str, ...],
    *,
    method: str | None,
    sampler: str | None,
    draws: int | None,
    tune: int | None,
    chains: int | None,
    seed: int | None,
    target_accept: float | None,
) -> dict[str, Any]:
    """The fit settings of a fitting command (``method`` among ``methods``, sampler, draws,
    tune, chains, seed, target acceptance): the command line, then the study file's
    ``[table]``, then the defaults (for draws, tuning steps and chains: left out, so that
    the model's own apply); a bad value is a usage error (exit 2)."""
    from raterstats.inference import SAMPLERS

    settings: dict[str, Any] = {
        "method": check_choice(s.option(table, "method", method, METHOD), methods, "--method"),
        "sampler": check_choice(
            s.option(table, "sampler", sampler, SAMPLER), SAMPLERS, "--sampler"
        ),
        "random_seed": int(s.option(table, "seed", seed, RANDOM_SEED)),
    }
    # draws, tuning steps and chains only where given: else the model's own defaults (the
    # ordinal model's differ from the package's), as in Python
    given = {
        "draws": s.option(table, "draws", draws, None),
        "tune": s.option(table, "tune", tune, None),
        "chains": s.option(table, "chains", chains, None),
    }
    settings.update({k: int(v) for k, v in given.items() if v is not None})
    accept = s.option(table, "target_accept", target_accept, None)
    if accept is not None:
        settings["target_accept"] = check_target_accept(float(accept))
    return settings


def _fit(spec: Model | AutoModel, ratings: Ratings, settings: dict[str, Any]) -> xr.DataTree:
    """Fit ``spec``: bad data exit 1 with every problem, bad settings exit 2."""
    from raterstats.models import ModelInputError

    with spinner(f"fitting {spec!r} ({settings['method']})"):
        try:
            return spec.fit(ratings, progress=False, **settings)
        except ModelInputError:
            raise  # bad data: exit 1 with every problem listed
        except (ValueError, NotImplementedError) as err:
            raise fail(f"labels: {err}", 2) from None


@app.command()
@data_command
def labels(
    data: DataOptions,
    model: Annotated[
        str | None,
        typer.Option("--model", help="A model with item labels: " + model_names_help()),
    ] = None,
    fit_file: Annotated[
        Path | None,
        typer.Option(
            "--fit",
            help="Labels of a fit written by `raterstats fit` (no fitting); a data source "
            "beside it supplies gold labels the fit does not keep.",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option("--method", help=f"{', '.join(fit_methods())} (default {METHOD})."),
    ] = None,
    sampler: SamplerOpt = None,
    draws: DrawsOpt = None,
    tune: TuneOpt = None,
    chains: ChainsOpt = None,
    target_accept: TargetAcceptOpt = None,
    seed: SeedOpt = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Model option KEY=VALUE, e.g. pooling=partial."),
    ] = None,
    use_gold: UseGoldOpt = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="CSV file to write (labels.csv).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write each item's inferred label, its probability and entropy, the majority vote
    and gold (when present) as CSV; print a summary.

    One row per item (and segment) and dimension, with the model's label (the most
    probable category), its posterior probability, the entropy of the label posterior,
    the majority vote (ties stated), the number of ratings, and the gold label with
    whether the label matches it. Gold labels clamp the labels only with --use-gold;
    otherwise the summary gives the labels' accuracy against them.

    Example: raterstats labels ratings.csv --model mace --method em --out labels.csv
    """
    from raterstats.posterior import item_labels, point_estimate_note

    s = data.to_study()
    target = Path(s.option("labels", "out", out, "labels.csv"))
    output(target)
    fit_path = s.option("labels", "fit", fit_file, None)
    ratings: Ratings | None = None
    if fit_path is None:
        spec, settings = model_spec(
            s, "labels", model=model, method=method, sampler=sampler, draws=draws, tune=tune,
            chains=chains, seed=seed, option=option, use_gold=use_gold, labels=True,
            target_accept=target_accept,
        )  # fmt: skip
        ratings = load_ratings(s)
        dt = _fit(spec, ratings, settings)
    else:
        given = {
            "--model": model, "--method": method, "--sampler": sampler, "--draws": draws,
            "--tune": tune,
            "--chains": chains, "--seed": seed, "--option": option, "--use-gold": use_gold,
        }  # fmt: skip
        extra = [k for k, v in given.items() if v is not None]
        if extra:
            raise fail(
                f"labels --fit reads a saved fit: {', '.join(extra)} do not apply (the fit "
                "was made with its own; refit with `raterstats fit` to change them)",
                2,
            )
        dt = open_fit(Path(fit_path))
        if s.data is not None:
            ratings = load_ratings(s)
            _check_fingerprint(dt, ratings)
    try:
        table = item_labels(dt, ratings)
    except TypeError as err:
        raise fail(str(err), 2) from None
    except ValueError as err:
        raise fail(str(err)) from None
    write_atomic(target, table.write_csv)
    summary = labels_summary(table)
    gold = gold_report(dt, ratings)
    fitted = f"{dt.attrs.get('model')} ({dt.attrs.get('method')})"
    if dt.attrs.get("health_ok") == 0:  # the contract of a fit's health attrs
        first = str(dt.attrs.get("health", "")).strip().splitlines()[:1]
        typer.echo(
            "labels: warning: the fit fails its checks"
            + (f": {first[0]}" if first else "")
            + "; its labels and probabilities are not to be trusted",
            err=True,
        )
    note = point_estimate_note(str(dt.attrs.get("method")))
    if note:
        typer.echo(f"labels: note: {note}", err=True)
    choice = choice_report(dt)
    if as_json:
        info = {"file": str(target), "fit": fitted, **summary, "gold": gold[1] if gold else None}
        if choice is not None:
            info["model_choice"] = choice[1]
        typer.echo(json.dumps(info, indent=2, default=str))
        return
    if choice is not None:
        typer.echo("\n".join(choice[0]))
    typer.echo(
        f"labels: {summary['units']} units ({summary['items']} items x "
        f"{summary['dimensions']} dimension{'s' if summary['dimensions'] != 1 else ''}) "
        f"from {fitted}, written to {target}"
    )
    n, ties = summary["disagree_with_majority"], summary["majority_ties"]
    typer.echo(
        f"mean label probability {summary['mean_probability']:.2f}; the label is not the "
        f"majority vote on {n} unit{'s' if n != 1 else ''} ({summary['disagree_share']:.1%}); "
        f"{ties} tied majority vote{'s' if ties != 1 else ''}"
    )
    if gold is not None:
        echo_gold("labels", *gold)


def _check_fingerprint(dt: xr.DataTree, ratings: Ratings) -> None:
    """Warn (stderr) when the ratings are not those the fit was made from."""
    from raterstats.models.fingerprint import fingerprint_matches

    stored = dt.attrs.get("data_fingerprint")
    if stored and not fingerprint_matches(stored, ratings):
        typer.echo(
            "labels: warning: the ratings differ from those the fit was made from (data "
            "fingerprint): check that the file and its options (--filter, --collapse, "
            "--scale) are those of the fit",
            err=True,
        )


__all__ = [
    "CLAMP_HINT",
    "MODEL_SPEC_KEYS",
    "apply_use_gold",
    "echo_gold",
    "gold_report",
    "has_gold",
    "labelled_models",
    "labels",
    "labels_summary",
    "model_spec",
]
