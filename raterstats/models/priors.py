"""Named priors: a PyMC distribution name and its parameters, overridable by key.

A model's ``default_priors`` are :class:`Prior` objects; users override some of them by
name (``MACE(priors={"competence": Prior("Beta", alpha=1, beta=1)})``), and a fit stores
them as JSON so that :func:`~raterstats.models.model_from_datatree` re-creates the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from raterstats.lazy import LazyModule

if TYPE_CHECKING:
    import pymc as pm
else:
    pm = LazyModule("pymc")


def jsonable(v: Any) -> Any:
    """``v`` with NumPy arrays and scalars turned into lists and numbers, recursively (for
    JSON attributes of a fit).

    Examples
    --------
    >>> jsonable({"a": np.arange(2), "b": (np.float64(0.5),)})
    {'a': [0, 1], 'b': [0.5]}
    """
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple | list):
        return [jsonable(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): jsonable(x) for k, x in v.items()}
    return v


#: PyMC distributions accepted by :class:`Prior` without importing PyMC (which takes
#: seconds); any other name is checked against PyMC itself
COMMON_DISTS = frozenset(
    {
        "Beta",
        "Dirichlet",
        "Exponential",
        "Gamma",
        "HalfCauchy",
        "HalfNormal",
        "HalfStudentT",
        "InverseGamma",
        "LogNormal",
        "Normal",
        "StudentT",
        "TruncatedNormal",
        "Uniform",
    }
)


class Prior:
    """A named prior distribution: a PyMC distribution name and its parameters.

    Parameters are numbers or arrays (broadcast against the variable's dims). A model
    documents how it reads each of its priors (its ``default_priors`` and card).

    Examples
    --------
    >>> p = Prior("Beta", alpha=0.5, beta=0.5)
    >>> p
    Prior('Beta', alpha=0.5, beta=0.5)
    >>> Prior.from_dict(p.to_dict()) == p
    True
    >>> p.mean()
    0.5
    """

    __slots__ = ("dist", "params")

    def __init__(self, dist: str, **params: Any) -> None:
        if not isinstance(dist, str) or (dist not in COMMON_DISTS and not hasattr(pm, dist)):
            raise ValueError(f"Prior: {dist!r} is not a PyMC distribution name")
        self.dist = dist
        self.params = {k: jsonable(v) for k, v in params.items()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Prior({self.dist!r}{', ' if args else ''}{args})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Prior):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form: ``{"dist": name, **params}``."""
        return {"dist": self.dist, **self.params}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Prior:
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        return cls(d.pop("dist"), **d)

    def param(self, key: str, default: Any = None) -> Any:
        """One parameter as a float or a NumPy array (``default`` when absent)."""
        if key not in self.params:
            return default
        v = self.params[key]
        return np.asarray(v, dtype=float) if isinstance(v, list) else float(v)

    def create(self, name: str, **kwargs: Any) -> Any:
        """Create the random variable in the current ``pm.Model`` (``dims=`` etc. passed on)."""
        params = {k: (np.asarray(v) if isinstance(v, list) else v) for k, v in self.params.items()}
        return getattr(pm, self.dist)(name, **params, **kwargs)

    def mean(self) -> float:
        """Prior mean of the simple families used as defaults (Beta, Normal, HalfNormal)."""
        if self.dist == "Beta":
            a, b = float(self.params["alpha"]), float(self.params["beta"])
            return a / (a + b)
        if self.dist == "Normal":
            return float(self.params.get("mu", 0.0))
        if self.dist == "HalfNormal":
            return float(self.params.get("sigma", 1.0)) * float(np.sqrt(2 / np.pi))
        raise NotImplementedError(f"mean of {self.dist} priors")


def as_prior(key: str, v: Any) -> Prior:
    """A :class:`Prior` from a ``Prior`` or its ``to_dict()`` mapping (``key`` names it in
    the error)."""
    if isinstance(v, Prior):
        return v
    if isinstance(v, Mapping) and "dist" in v:
        return Prior.from_dict(v)
    raise TypeError(f"prior {key!r}: give a Prior(...) or a mapping with a 'dist' key, not {v!r}")


__all__ = ["COMMON_DISTS", "Prior", "as_prior", "jsonable"]
