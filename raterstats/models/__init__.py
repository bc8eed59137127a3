"""Bayesian rater models: each a specification (priors and options) that fits
:class:`~raterstats.Ratings` to an ``xr.DataTree`` (see :mod:`raterstats.models.base`)."""

from raterstats.models.base import (
    FIT_ATTRS,
    POST_FIT_QUESTIONS,
    Method,
    Model,
    ModelInputError,
    data_fingerprint,
    discover_models,
    is_fit_of,
    model_class,
    model_from_datatree,
    models_answering,
    registered_models,
)
from raterstats.models.comparisons import BradleyTerry, PlackettLuce
from raterstats.models.latent_class import (
    GLAD,
    MACE,
    CommunityDawidSkene,
    DawidSkene,
    EnhancedBCC,
)
from raterstats.models.length_effect import LengthEffect
from raterstats.models.ordinal import OrdinalRaters
from raterstats.models.priors import Prior

__all__ = [
    "FIT_ATTRS",
    "GLAD",
    "MACE",
    "POST_FIT_QUESTIONS",
    "BradleyTerry",
    "CommunityDawidSkene",
    "DawidSkene",
    "EnhancedBCC",
    "LengthEffect",
    "Method",
    "Model",
    "ModelInputError",
    "OrdinalRaters",
    "PlackettLuce",
    "Prior",
    "data_fingerprint",
    "discover_models",
    "is_fit_of",
    "model_class",
    "model_from_datatree",
    "models_answering",
    "registered_models",
]


def __getattr__(name: str) -> type[Model]:
    """A model class by its class name (``raterstats.models.GLAD``), for models that
    registered themselves without being listed here (see
    :func:`~raterstats.models.base.discover_models`)."""
    for cls in registered_models().values():
        if cls.__name__ == name:
            return cls
    raise AttributeError(f"module 'raterstats.models' has no attribute {name!r}")
