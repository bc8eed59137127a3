"""Which rater models an analysis fits, to which ratings, with which settings:
:func:`plan_models` decides from the scales and the options (and says why a model is not
planned), :func:`model_ratings` gives the ratings a model is fitted to and :func:`fit` fits
it, turning a model's refusal of the data into a reason to skip its section."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import xarray as xr

from raterstats.analyze.agreement import scale_kind
from raterstats.analyze.context import Context, Fit, SectionSkipped
from raterstats.analyze.health import record_health
from raterstats.analyze.options import AnalyzeOptions, model_role
from raterstats.ratings import Ratings
from raterstats.scales import OrdinalScale

if TYPE_CHECKING:
    from raterstats.models import Model


def _listing(dims: list[str]) -> str:
    return ", ".join(repr(d) for d in dims)


def plan_models(
    ratings: Ratings, options: AnalyzeOptions
) -> tuple[dict[str, list[type[Model]]], dict[str, str]]:
    """The models to fit per role (``"categorical"``, ``"ordinal"``) and, for each role
    without a model, the reason.

    With ``models="auto"``: MACE when some dimension is on a nominal or two-level scale or
    ``options.collapse`` is given; the ordinal rater model when every dimension is on an
    ordinal scale of three or more levels.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> planned, why = plan_models(r, AnalyzeOptions())
    >>> [c.__name__ for c in planned["ordinal"]], sorted(why)
    (['OrdinalRaters'], ['categorical'])
    """
    from raterstats.models import MACE, OrdinalRaters, model_class

    kinds = {d: scale_kind(s) for d, s in ratings.scales.items()}
    not_ordinal = [d for d, k in kinds.items() if k != "ordinal"]
    categorical = [d for d, k in kinds.items() if k == "nominal"]
    planned: dict[str, list[type[Model]]] = {"categorical": [], "ordinal": []}
    why: dict[str, str] = {}
    if options.models == "auto":
        if categorical or options.collapse:
            planned["categorical"].append(MACE)
        else:
            why["categorical"] = (
                "no dimension is on a nominal or two-level scale and no collapse was asked; "
                "to fit a categorical model to ordinal ratings, ask for a collapse "
                "(--categorical-collapse likert5_to_3; in Python collapse=) or name the "
                "model (--model mace; models=)"
            )
        if not not_ordinal:
            planned["ordinal"].append(OrdinalRaters)
        else:
            why["ordinal"] = (
                f"dimension(s) {_listing(not_ordinal)} are not on an ordinal scale of three or "
                "more levels (the ordinal rater model's data)"
            )
    else:
        for name in options.models:
            cls = model_class(name)
            role = model_role(cls)
            if role == "comparisons":
                raise ValueError(
                    f"analyze: {cls.name} fits comparative judgments, and these are ratings "
                    "(read comparisons with read_comparisons, or --comparisons on the command line)"
                )
            if role is not None:
                planned[role].append(cls)
        asked = ", ".join(options.models) or "none"
        for role, classes in planned.items():
            if not classes:
                why[role] = f"no {role} model among the models asked ({asked})"
    return {k: v for k, v in planned.items() if v}, why


def method_problems(planned: dict[str, list[type[Model]]], options: AnalyzeOptions) -> list[str]:
    """Fit settings a planned model does not take (a method it does not have).

    Examples
    --------
    >>> from raterstats.models import OrdinalRaters
    >>> print(method_problems({"ordinal": [OrdinalRaters]}, AnalyzeOptions(method="em"))[0])
    ... # doctest: +ELLIPSIS
    ordinal_raters has no method 'em' (it has nuts, map, advi); give it another in ...
    """
    problems = []
    for classes in planned.values():
        for cls in classes:
            method = options.settings_for(cls).get("method")
            if method is not None and method not in cls.methods:
                problems.append(
                    f"{cls.name} has no method {method!r} (it has {', '.join(cls.methods)}); "
                    f"give it another in fit_settings, e.g. {{{cls.name!r}: {{'method': "
                    f"{cls.methods[1]!r}}}}}"
                )
    return problems


def model_ratings(ctx: Context, role: str) -> tuple[Ratings, str]:
    """The ratings a model of ``role`` is fitted to, and how they were read (for the
    report): categorical models the nominal / two-level dimensions, or every dimension
    under ``options.collapse``; the ordinal model the dimensions on ordinal scales.
    Raises :class:`SectionSkipped` when no dimension fits."""
    r = ctx.ratings
    if role == "categorical":
        if ctx.options.collapse:
            try:
                return r.collapse(
                    ctx.options.collapse
                ), f"scale collapsed by {ctx.options.collapse}"
            except (ValueError, KeyError, TypeError) as err:
                raise SectionSkipped(f"collapse {ctx.options.collapse}: {err}") from None
        dims = [d for d, s in r.scales.items() if scale_kind(s) != "interval"]
        if ctx.options.models == "auto":
            dims = [d for d, s in r.scales.items() if scale_kind(s) == "nominal"]
        if not dims:
            raise SectionSkipped("every dimension is on an interval scale (no categories)")
        return _dimensions(r, dims)
    dims = [d for d, s in r.scales.items() if isinstance(s, OrdinalScale)]
    if not dims:
        raise SectionSkipped("no dimension is on an ordinal scale")
    return _dimensions(r, dims)


def _dimensions(r: Ratings, dims: list[str]) -> tuple[Ratings, str]:
    """The ratings of ``dims``, and how the report words that choice."""
    if len(dims) == len(r.scales):
        return r, "the ratings as they are"
    return r.filter(dimension=dims), f"dimension(s) {_listing(dims)}"


def fit(ctx: Context, cls: type[Model], ratings: Ratings, label: str) -> Fit:
    """Fit ``cls`` (gold not clamped; the options' model options and fit settings, else
    the model's defaults) and record the fit in ``ctx.fits``. A model that refuses the
    ratings raises :class:`SectionSkipped` with its reasons."""
    from raterstats.models import ModelInputError

    options: dict[str, Any] = ctx.options.options_for(cls)
    if "use_gold" in cls.default_options:
        options["use_gold"] = False  # gold is a check, never silently the answer
    settings = ctx.options.settings_for(cls)
    shown = ", ".join(f"{k} {v}" for k, v in settings.items()) or "the model's defaults"
    ctx.say(f"fitting {cls.__name__} ({shown})")
    try:
        dt = cls(**options).fit(ratings, random_seed=ctx.seed, progress=False, **settings)
    except ModelInputError as err:
        raise SectionSkipped(f"{cls.__name__} cannot fit these ratings: {err}") from None
    record_health(dt)
    done = Fit(label=label, model=cls, ratings=ratings, dt=dt)
    ctx.fits.append(done)
    return done


def how_fitted(dt: xr.DataTree) -> str:
    """How a fit was made, for the report: the sampler, chains, draws and tuning steps of a
    NUTS fit, or that it is a point estimate.

    Examples
    --------
    >>> how_fitted(xr.DataTree(dataset=xr.Dataset(attrs={"method": "em"})))
    'EM (point estimate)'
    """
    a = dt.attrs
    method = str(a.get("method", "nuts"))
    if method == "gibbs":
        return (
            f"Gibbs sampler, {a.get('chains')} chains x {a.get('draws')} draws after "
            f"{a.get('tune')} burn-in sweeps"
        )
    if method != "nuts":
        return f"{method.upper()} (point estimate)"
    set_by = (
        " (draws set by the fit's checks)"
        if "posterior" in dt.children and "checkpoints" in dt["posterior"].attrs
        else ""
    )
    return (
        f"NUTS ({a.get('sampler')}), {a.get('chains')} chains x {a.get('draws')} draws"
        f"{set_by} after {a.get('tune')} tuning steps"
    )


__all__ = [
    "fit",
    "how_fitted",
    "method_problems",
    "model_ratings",
    "plan_models",
]
