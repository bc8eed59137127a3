"""The model registry: every concrete :class:`~raterstats.models.base.Model` subclass
registers itself under its ``name`` when its class is created (``Model.__init_subclass__``);
the look-ups here find a model class by name, by the post-fit questions it answers, or
from a fit's attributes (moved out of :mod:`raterstats.models.base`, which re-exports
them)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import xarray as xr

from raterstats.models.priors import Prior

if TYPE_CHECKING:
    from raterstats.models.base import Model

#: model classes by ``name``, filled by ``Model.__init_subclass__``
REGISTRY: dict[str, type[Model]] = {}


def model_from_datatree(dt: xr.DataTree) -> Model:
    """Re-create the model specification (class, priors, options) of a fit.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=3, n_systems=4, random_seed=1).ratings
    >>> dt = MACE(hierarchical=False).fit(r, method="em", random_seed=1)
    >>> model_from_datatree(dt) == MACE(hierarchical=False)
    True
    """
    name = dt.attrs.get("model")
    discover_models()
    if name not in REGISTRY:
        raise ValueError(
            f"the DataTree was not made by a raterstats model fit (model={name!r}); "
            f"known models: {sorted(REGISTRY)}"
        )
    cls = REGISTRY[str(name)]
    priors = json.loads(dt.attrs.get("priors", "{}"))
    options = json.loads(dt.attrs.get("options", "{}"))
    options = {k: v for k, v in options.items() if k in cls.default_options}
    return cls(priors={k: Prior.from_dict(v) for k, v in priors.items()}, **options)


#: name prefixes of the modules of ``raterstats.models`` that hold compiled (numba) code
#: rather than models (``kernels.py``, ``kernels_em.py``, ``callbacks.py``): discovery does
#: not import them; the models load them lazily, when a fit needs them
COMPILED_MODULE_PREFIXES = ("kernels", "callbacks")

_DISCOVERED = False


def discover_models() -> None:
    """Import every model module of :mod:`raterstats.models` once, so that each model
    class registers itself: a new model needs no edit of any ``__init__`` or list.

    Every module under ``raterstats/models/`` is imported except those whose name starts
    with one of :data:`COMPILED_MODULE_PREFIXES` (numba code, which models load lazily).
    The look-ups below (:func:`registered_models`, :func:`model_class`,
    :func:`model_from_datatree`, :func:`models_answering`) call it first.
    """
    global _DISCOVERED
    if _DISCOVERED:
        return
    import importlib
    import pkgutil

    import raterstats.models as package

    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        if not info.name.rsplit(".", 1)[-1].startswith(COMPILED_MODULE_PREFIXES):
            importlib.import_module(info.name)
    _DISCOVERED = True


def registered_models() -> dict[str, type[Model]]:
    """Model classes by name (every concrete subclass of :class:`Model` in
    :mod:`raterstats.models`, see :func:`discover_models`)."""
    discover_models()
    return dict(REGISTRY)


def norm_name(name: str) -> str:
    return str(name).strip().lower().replace("-", "_")


def is_fit_of(dt: xr.DataTree, cls: type[Model]) -> bool:
    """Whether ``dt`` is a fit of ``cls`` (or of a model derived from it), as the registry
    resolves ``dt.attrs["model"]``; ``False`` for a DataTree no raterstats model made.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.models.latent_class import LatentClassModel
    >>> from raterstats.simulate import archehr_like_study
    >>> dt = MACE().fit(archehr_like_study(n_cases=3, n_systems=2, random_seed=1).ratings,
    ...                 method="em", random_seed=1)
    >>> is_fit_of(dt, LatentClassModel), is_fit_of(xr.DataTree(), MACE)
    (True, False)
    """
    name = dt.attrs.get("model")
    if name is None:
        return False
    try:
        return issubclass(model_class(str(name)), cls)
    except ValueError:
        return False


def model_class(name: str) -> type[Model]:
    """The registered model class called ``name`` (its ``name`` or one of its
    ``cli_names``; ``-`` and ``_`` interchangeable, case ignored).

    Examples
    --------
    >>> model_class("dawid-skene").__name__
    'DawidSkene'
    >>> model_class("no_such_model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown model 'no_such_model'; known: ...dawid_skene, ..., ordinal_raters...
    """
    discover_models()
    key = norm_name(name)
    for cls in REGISTRY.values():
        if key in cls.all_names():
            return cls
    raise ValueError(f"unknown model {name!r}; known: {', '.join(sorted(REGISTRY))}")


def models_answering(question: str) -> list[type[Model]]:
    """The registered model classes that answer a post-fit ``question`` (see
    :meth:`Model.answers`), by name."""
    return [cls for _, cls in sorted(registered_models().items()) if cls.answers(question)]


__all__ = [
    "COMPILED_MODULE_PREFIXES",
    "REGISTRY",
    "discover_models",
    "is_fit_of",
    "model_class",
    "model_from_datatree",
    "models_answering",
    "norm_name",
    "registered_models",
]
