"""GLAD's compiled density for nutpie: the packed data of
:func:`raterstats.models.latent_class.kernels_glad.glad_logp_grad` by name, the map from
the unconstrained vector to the reported variables, and the chains' starting points.

The unconstrained vector is the PyMC model's (``ability``, ``easiness_log__``,
``prevalence_simplex__``; with dimensions of different numbers of categories the
prevalence rows are packed by dimension), so the compiled density is the PyMC model's log
density, which the tests check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from raterstats.inference import Density
from raterstats.models.latent_class.data import LatentClassData, majority_vote
from raterstats.models.latent_class.reference import pack_rows, unpack_rows

if TYPE_CHECKING:
    from raterstats.models.latent_class.glad import GLAD

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def glad_var_dims() -> dict[str, tuple[str, ...]]:
    """Dims of GLAD's reported variables (point estimates and draws alike)."""
    return {
        "ability": ("rater", "dimension", "design"),
        "easiness": ("unit",),
        "prevalence": ("dimension", "category"),
    }


def glad_constant(model: GLAD, data: LatentClassData) -> float:
    """The constant terms of GLAD's log density on the unconstrained scale: the normal
    normalisers of the abilities and log easiness values and, per prevalence row, the
    Dirichlet normaliser and the constant of the simplex transform's Jacobian."""
    (_, sd_a), (_, sd_b), a = model.prior_values()
    C, U = data.n_cells, data.n_units
    const = -C * (_LOG_SQRT_2PI + math.log(sd_a)) - U * (_LOG_SQRT_2PI + math.log(sd_b))
    for k in data.n_categories:
        const += math.lgamma(a * k) - k * math.lgamma(a) + math.log(k)
    return const


def glad_packed(model: GLAD, data: LatentClassData) -> tuple[np.ndarray, np.ndarray]:
    """The integer and float arrays of GLAD's compiled density
    (:func:`~raterstats.models.latent_class.kernels_glad.glad_entry`)."""
    from raterstats.models.latent_class.kernels_glad import (
        GladFloat,
        GladHeader,
        GladInt,
        GladScalar,
    )
    from raterstats.models.latent_class.layout import header, pack_fields

    (mu_a, sd_a), (mu_b, sd_b), a = model.prior_values()
    D, K, U = len(data.dimensions), data.K, data.n_units
    head = {
        GladHeader.N_CELLS: data.n_cells,
        GladHeader.N_UNITS: U,
        GladHeader.N_DIMENSIONS: D,
        GladHeader.N_CLASSES: K,
    }
    ints = {
        GladInt.HEADER: header(head, np.int64),
        GladInt.N_CATEGORIES: data.n_categories.astype(np.int64),
        GladInt.UNIT_DIM: data.unit_dim.astype(np.int64),
        GladInt.UNIT_START: np.r_[0, np.cumsum(np.bincount(data.unit, minlength=U))],
        GladInt.CELL: data.cell.astype(np.int64),
        GladInt.CODE: data.code.astype(np.int64),
        GladInt.MASK: data.class_mask(data.unit_dim, data.unit_gold).astype(np.int64),
    }
    scalars = {
        GladScalar.ABILITY_MU: mu_a,
        GladScalar.ABILITY_SD: sd_a,
        GladScalar.EASINESS_MU: mu_b,
        GladScalar.EASINESS_SD: sd_b,
        GladScalar.CONST: glad_constant(model, data),
    }
    floats = {
        GladFloat.SCALARS: header(scalars, np.float64),
        GladFloat.PREV_CONC: np.where(data.valid, a, 0.0).astype(np.float64),
    }
    return pack_fields(ints, np.int64), pack_fields(floats, np.float64)


def glad_to_unconstrained(values: Mapping[str, Any], data: LatentClassData) -> np.ndarray:
    """The unconstrained vector of a point given as constrained values (``ability``,
    ``easiness``, ``prevalence``, e.g. an EM estimate); prevalences are clipped at 1e-6.

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...     random_seed=1).ratings).one_pattern_per_unit()
    >>> point = {"ability": np.ones((12, 3, 1)), "easiness": np.full(d.n_units, np.e),
    ...          "prevalence": np.full((3, 3), 1 / 3)}
    >>> x = glad_to_unconstrained(point, d)
    >>> x.size, float(x[36]), float(x[-1])  # 36 abilities, then log easiness, then simplex
    (60, 1.0, 0.0)
    """
    alpha = np.asarray(values["ability"], float).reshape(-1)
    s = np.log(np.clip(np.asarray(values["easiness"], float).reshape(-1), 1e-300, None))
    prev = np.clip(np.asarray(values["prevalence"], float), 1e-6, None) * data.valid
    return np.concatenate([alpha, s, pack_rows(prev, data.n_categories)])


def glad_density(
    model: GLAD, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
) -> Density:
    """GLAD's compiled log density with its hand-written gradient (see
    :meth:`raterstats.models.latent_class.glad.GLAD.density`)."""
    from raterstats.models.latent_class.kernels_glad import glad_entry, glad_logp_cb
    from raterstats.nutpie_callbacks import callback_buffer

    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C, U = data.n_cells, data.n_units
    n_cat = data.n_categories.astype(np.int64)
    ndim = C + U + int(np.sum(n_cat - 1))
    ints, floats = glad_packed(model, data)

    def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(ndim)
        lp = glad_entry(np.ascontiguousarray(x, dtype=float), ints, floats, g)
        return float(lp), g

    def expand_draws(xs: np.ndarray) -> dict[str, np.ndarray]:
        """The reported variables of many draws ``(n, ndim)`` at once."""
        n = xs.shape[0]
        return {
            "ability": xs[:, :C].reshape(n, R, D, G),
            "easiness": np.exp(xs[:, C : C + U]),
            "prevalence": unpack_rows(xs[:, C + U :], n_cat, K),
        }

    def expand(x: np.ndarray) -> dict[str, np.ndarray]:
        return {k: v[0] for k, v in expand_draws(np.asarray(x, float)[None]).items()}

    (mu_a, _), (mu_b, _), _ = model.prior_values()
    x_start = glad_to_unconstrained(start, data) if start is not None else None
    mv = majority_vote(data)
    prev0 = np.zeros((D, K))
    np.add.at(prev0, data.unit_dim, mv)
    x_default = glad_to_unconstrained(
        {
            "ability": np.full(C, mu_a),
            "easiness": np.full(U, math.exp(mu_b)),
            "prevalence": prev0 + data.valid,
        },
        data,
    )

    def initial_point(rng: np.random.Generator) -> np.ndarray:
        x0 = x_start if x_start is not None else x_default
        return x0 + rng.normal(0.0, 0.1, x0.size)

    dims = glad_var_dims()
    return Density(
        ndim=ndim,
        logp_grad=logp_grad,
        expand=expand,
        expand_draws=expand_draws,
        c_logp=glad_logp_cb,
        c_data=callback_buffer(ints, floats),
        var_shapes={"ability": (R, D, G), "easiness": (U,), "prevalence": (D, K)},
        var_dims=dims,
        coords=data.coords(),
        initial_point=initial_point,
    )


__all__ = [
    "glad_constant",
    "glad_density",
    "glad_packed",
    "glad_to_unconstrained",
    "glad_var_dims",
]
