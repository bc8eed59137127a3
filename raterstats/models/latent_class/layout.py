"""Named positions of the data the compiled densities read.

A compiled density gets its data as two flat arrays, one of integers and one of floats
(one argument each: numba charges about a microsecond per argument, and the samplers call
the density ~10^5 times per fit; nutpie's C callbacks get them in one buffer, see
:func:`raterstats.nutpie_callbacks.callback_buffer`). Each array is a sequence of
*segments* (:func:`pack_segments`); which segment holds what, and which entry of a header
segment holds which number, is defined here once, as an ``IntEnum`` per array: the Python
side packs by these names (:func:`pack_fields`) and the numba entry points of
:mod:`raterstats.models.latent_class.callbacks` read by them.

``callbacks.KERNEL_SOURCE_SHA256`` covers this file: numba freezes the positions into the
cached callbacks, so a change here must rebuild them.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Any

import numpy as np

# ---------------------------------------------------------------------- MACE


class MaceInt(IntEnum):
    """Segments of MACE's integer array."""

    HEADER = 0  #: :class:`MaceHeader`
    N_CATEGORIES = 1  #: categories per dimension (D)
    E_CELL = 2  #: table rows: cell (E)
    E_CODE = 3  #: table rows: rated category (E)
    P_E = 4  #: table row of every pattern rating
    P_START = 5  #: pattern boundaries (P + 1)
    PATTERN_DIM = 6  #: dimension of every pattern (P)
    MASK = 7  #: possible classes, (P, K) row-major, 0 / 1


class MaceHeader(IntEnum):
    """Entries of MACE's header segment."""

    HIERARCHICAL = 0  #: 1: hierarchical competence, 0: flat
    HAS_CELL_EFFECTS = 1  #: 1: rater x cell effects (several dimension x design cells)
    N_RATERS = 2
    N_DIMENSIONS = 3
    N_DESIGNS = 4
    N_CLASSES = 5  #: K
    CENTRED = 6  #: 1: the rater effects' zero-sum coordinates sampled centred
    CENTRED_CELLS = 7  #: 1: the cell effects' zero-sum coordinates sampled centred


class MaceFloat(IntEnum):
    """Segments of MACE's float array."""

    SCALARS = 0  #: :class:`MaceScalar`
    MEAN_MU = 1  #: prior mean of the logit cell means (D * G)
    MEAN_SD = 2  #: prior sd of the logit cell means (D * G)
    PATTERN_W = 3  #: pattern weights (counts, P)
    SPAM_CONC = 4  #: Dirichlet concentrations of the spam rows, (R * D, K)
    PREV_CONC = 5  #: Dirichlet concentrations of the prevalence rows, (D, K)
    BASIS_R = 6  #: orthonormal zero-sum basis over raters, (R, R - 1)
    BASIS_C = 7  #: orthonormal zero-sum basis over cells, (D * G, D * G - 1)


class MaceScalar(IntEnum):
    """Entries of MACE's scalar segment."""

    BETA_A = 0  #: flat competence: Beta(a, b) prior
    BETA_B = 1
    SD_U = 2  #: HalfNormal scale of the rater effects' sd
    SD_V = 3  #: HalfNormal scale of the cell effects' sd
    CONST = 4  #: constant terms of the log density


# ---------------------------------------------------------------------- Dawid-Skene


class DsInt(IntEnum):
    """Segments of Dawid-Skene's integer array."""

    HEADER = 0  #: :class:`DsHeader`
    N_CATEGORIES = 1  #: categories per dimension (D)
    ROW_DIM = 2  #: dimension of every parameter row (cell)
    E_ROW = 3  #: table rows: parameter row (E)
    E_CODE = 4  #: table rows: rated category (E)
    P_E = 5  #: table row of every pattern rating
    P_START = 6  #: pattern boundaries (P + 1)
    PATTERN_DIM = 7  #: dimension of every pattern (P)
    MASK = 8  #: possible classes, (P, K) row-major, 0 / 1
    CENTRED = 9  #: partial pooling: 1 where an error logit is sampled centred
    SIG_OF = 10  #: partial pooling: the spread of every population error logit


class DsHeader(IntEnum):
    """Entries of Dawid-Skene's header segment."""

    KIND = 0  #: :class:`DsKind`
    N_ROWS = 1  #: parameter rows (cells; dimension x design when pooled)
    N_DIMENSIONS = 2
    N_DESIGNS = 3
    N_CLASSES = 4  #: K


class DsKind(IntEnum):
    """How Dawid-Skene's confusion rows are parametrised (the header's ``KIND``)."""

    DIRICHLET = 0  #: unpooled / pooled: Dirichlet rows on the simplex transform
    PARTIAL = 1  #: partial pooling: normal off-diagonal logits
    ONE_COIN = 2  #: one logit-accuracy per cell


class DsFloat(IntEnum):
    """Segments of Dawid-Skene's float array."""

    SCALARS = 0  #: :class:`DsScalar`
    PATTERN_W = 1  #: pattern weights (counts, P)
    CONF_CONC = 2  #: Dirichlet concentrations of the confusion rows, (rows, K, K)
    ZETA_MU = 3  #: prior means of the population error logits, (K, K)
    PREV_CONC = 4  #: Dirichlet concentrations of the prevalence rows, (D, K)


class DsScalar(IntEnum):
    """Entries of Dawid-Skene's scalar segment."""

    ZETA_SD = 0  #: prior sd of the population error logits
    SD_OMEGA = 1  #: HalfNormal scale of the spread of the raters' error logits
    COIN_A = 2  #: one-coin: Beta(a, b) prior of the accuracy
    COIN_B = 3
    CONST = 4  #: constant terms of the log density


# ---------------------------------------------------------------------- packing


def pack_segments(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    """``[n, len_0, ..., len_{n-1}, *ravel(a_0), ...]`` as one array of ``dtype``: the
    format that :func:`raterstats.models.latent_class.callbacks.segment` reads.

    Examples
    --------
    >>> pack_segments([np.array([1, 2]), np.array([[3], [4], [5]])], np.int64).tolist()
    [2, 2, 3, 1, 2, 3, 4, 5]
    """
    flat: list[np.ndarray] = [np.ascontiguousarray(a, dtype=dtype).ravel() for a in arrays]
    head: np.ndarray = np.array([len(flat), *[f.size for f in flat]], dtype=dtype)
    return np.concatenate([head, *flat]).astype(dtype)


def fields_enum[F: IntEnum](values: Mapping[F, Any], what: str) -> type[F]:
    """The one ``IntEnum`` whose members are the keys of ``values``, checked to be given
    each exactly once and to number ``0, 1, ...`` (positions in a packed array).

    Examples
    --------
    >>> fields_enum({DsKind.PARTIAL: 1}, "kinds")
    Traceback (most recent call last):
    ...
    ValueError: kinds: DsKind fields missing: ['DIRICHLET', 'ONE_COIN']
    """
    enums = {type(k) for k in values}
    if len(enums) != 1:
        raise TypeError(f"{what}: the keys must be members of one IntEnum, got {enums}")
    (enum,) = enums
    if sorted(int(m) for m in enum) != list(range(len(enum))):
        raise ValueError(f"{what}: {enum.__name__} does not number its members 0, 1, ...")
    missing = [m.name for m in enum if m not in values]
    if missing:
        raise ValueError(f"{what}: {enum.__name__} fields missing: {missing}")
    return enum


def pack_fields[F: IntEnum](fields: Mapping[F, Any], dtype: type) -> np.ndarray:
    """Pack one array's segments given by name (the members of one ``IntEnum``, every
    member exactly once), in the enum's order (:func:`pack_segments`).

    Examples
    --------
    >>> pack_fields({MaceScalar.BETA_B: 2.0, MaceScalar.BETA_A: 1.0, MaceScalar.SD_U: 3.0,
    ...              MaceScalar.SD_V: 4.0, MaceScalar.CONST: 5.0}, np.float64).tolist()
    [5.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """
    enum = fields_enum(fields, "pack_fields")
    return pack_segments([np.asarray(fields[m]) for m in sorted(enum)], dtype)


def header[F: IntEnum](values: Mapping[F, float], dtype: type) -> np.ndarray:
    """A header segment: the entries of one ``IntEnum`` (each exactly once) at their
    positions.

    Examples
    --------
    >>> header({DsScalar.ZETA_SD: 1.5, DsScalar.SD_OMEGA: 1.0, DsScalar.COIN_A: 2.0,
    ...         DsScalar.COIN_B: 1.0, DsScalar.CONST: -3.0}, np.float64).tolist()
    [1.5, 1.0, 2.0, 1.0, -3.0]
    """
    enum = fields_enum(values, "header")
    out: np.ndarray = np.empty(len(enum), dtype=dtype)
    for m in enum:
        out[int(m)] = values[m]
    return out


__all__ = [
    "DsFloat",
    "DsHeader",
    "DsInt",
    "DsKind",
    "DsScalar",
    "MaceFloat",
    "MaceHeader",
    "MaceInt",
    "MaceScalar",
    "fields_enum",
    "header",
    "pack_fields",
    "pack_segments",
]
