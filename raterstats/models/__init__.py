"""Bayesian rater models: each a specification (priors and options) that fits
:class:`~raterstats.Ratings` to an ``xr.DataTree`` (see :mod:`raterstats.models.base`)."""

from raterstats.models.base import (
    FIT_ATTRS,
    Model,
    ModelInputError,
    Prior,
    data_fingerprint,
    model_from_datatree,
    registered_models,
)
from raterstats.models.latent_class import MACE, DawidSkene
from raterstats.models.length_effect import LengthEffect
from raterstats.models.ordinal import OrdinalRaters

__all__ = [
    "FIT_ATTRS",
    "MACE",
    "DawidSkene",
    "LengthEffect",
    "Model",
    "ModelInputError",
    "OrdinalRaters",
    "Prior",
    "data_fingerprint",
    "model_from_datatree",
    "registered_models",
]
