"""Entry points of the compiled latent-class densities: the packed data read by name
(:mod:`raterstats.models.latent_class.layout`), and the C callbacks nutpie calls.

``mace_entry`` / ``ds_entry`` take the unconstrained vector, the packed integer and float
arrays and a gradient buffer; the density builders call them from Python
(``Density.logp_grad``) and the C callbacks from nutpie's threads (``Density.c_logp``,
with the arrays in one user-data buffer, :func:`raterstats.nutpie_callbacks.callback_buffer`).

Kept apart from :mod:`raterstats.models.latent_class.kernels_em` because numba compiles (or
loads from its cache) every ``cfunc`` when the module is imported, about 0.8 s: the EM and
draw-summary kernels load lazily, so a process that only runs EM does not pay for the
callbacks.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import carray, cfunc, njit

from raterstats.models.latent_class.kernels_density import ds_logp_grad, mace_logp_grad
from raterstats.models.latent_class.layout import (
    DsFloat,
    DsHeader,
    DsInt,
    DsKind,
    DsScalar,
    MaceFloat,
    MaceHeader,
    MaceInt,
    MaceScalar,
)
from raterstats.nutpie_callbacks import LOGP_SIGNATURE, read_user_data, status_code

#: The source files whose code the cached callbacks below compile in, besides this one:
#: the kernels, the named positions of the packed data, and nutpie's buffer helpers.
KERNEL_SOURCES = (
    Path(__file__).with_name("kernels_density.py"),
    Path(__file__).with_name("layout.py"),
    Path(__file__).parents[2] / "nutpie_callbacks.py",
)

#: SHA-256 of :data:`KERNEL_SOURCES` (:func:`kernel_source_sha256`). numba's on-disk cache
#: checks only this file's time stamp and size, not the sources it calls into, so a
#: changed kernel or layout would otherwise leave stale callbacks that read the new data
#: layout with the old code (heap corruption). tests/models/test_structure.py fails until
#: this value is updated, and updating it invalidates the cache.
KERNEL_SOURCE_SHA256 = "20d41538678ba63b7844b5f5e778d246f0ec9e94ef807d8bf73fa2c207a49656"


def kernel_source_sha256() -> str:
    """SHA-256 over the :data:`KERNEL_SOURCES` (each file's bytes, in order)."""
    h = hashlib.sha256()
    for path in KERNEL_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()


@njit(cache=True, nogil=True)
def segment(arr: np.ndarray, i: int) -> np.ndarray:
    """Segment ``i`` of an array packed by
    :func:`raterstats.models.latent_class.layout.pack_segments`."""
    n = int(arr[0])
    start = 1 + n
    for j in range(i):
        start += int(arr[1 + j])
    return arr[start : start + int(arr[1 + i])]


@njit(cache=True, nogil=True)
def mace_entry(x: np.ndarray, ints: np.ndarray, floats: np.ndarray, grad: np.ndarray) -> float:
    """:func:`~raterstats.models.latent_class.kernels_density.mace_logp_grad` with packed
    data (:class:`~raterstats.models.latent_class.layout.MaceInt`,
    :class:`~raterstats.models.latent_class.layout.MaceFloat`)."""
    h = segment(ints, MaceInt.HEADER)
    R, D, G, K = (
        h[MaceHeader.N_RATERS],
        h[MaceHeader.N_DIMENSIONS],
        h[MaceHeader.N_DESIGNS],
        h[MaceHeader.N_CLASSES],
    )
    pattern_dim = segment(ints, MaceInt.PATTERN_DIM)
    sc = segment(floats, MaceFloat.SCALARS)
    return mace_logp_grad(
        x,
        h[MaceHeader.HIERARCHICAL] == 1,
        h[MaceHeader.HAS_CELL_EFFECTS] == 1,
        h[MaceHeader.CENTRED] == 1,
        h[MaceHeader.CENTRED_CELLS] == 1,
        R,
        D,
        G,
        K,
        segment(ints, MaceInt.N_CATEGORIES),
        segment(ints, MaceInt.E_CELL),
        segment(ints, MaceInt.E_CODE),
        segment(ints, MaceInt.P_E),
        segment(ints, MaceInt.P_START),
        pattern_dim,
        segment(floats, MaceFloat.PATTERN_W),
        segment(ints, MaceInt.MASK).reshape((pattern_dim.size, K)),
        sc[MaceScalar.BETA_A],
        sc[MaceScalar.BETA_B],
        segment(floats, MaceFloat.MEAN_MU),
        segment(floats, MaceFloat.MEAN_SD),
        sc[MaceScalar.SD_U],
        sc[MaceScalar.SD_V],
        segment(floats, MaceFloat.SPAM_CONC).reshape((R * D, K)),
        segment(floats, MaceFloat.PREV_CONC).reshape((D, K)),
        segment(floats, MaceFloat.BASIS_R).reshape((R, max(R - 1, 0))),
        segment(floats, MaceFloat.BASIS_C).reshape((D * G, max(D * G - 1, 0))),
        sc[MaceScalar.CONST],
        grad,
    )


@njit(cache=True, nogil=True)
def ds_entry(x: np.ndarray, ints: np.ndarray, floats: np.ndarray, grad: np.ndarray) -> float:
    """:func:`~raterstats.models.latent_class.kernels_density.ds_logp_grad` with packed
    data (:class:`~raterstats.models.latent_class.layout.DsInt`,
    :class:`~raterstats.models.latent_class.layout.DsFloat`)."""
    h = segment(ints, DsInt.HEADER)
    NC, D, G, K = (
        h[DsHeader.N_ROWS],
        h[DsHeader.N_DIMENSIONS],
        h[DsHeader.N_DESIGNS],
        h[DsHeader.N_CLASSES],
    )
    pattern_dim = segment(ints, DsInt.PATTERN_DIM)
    sc = segment(floats, DsFloat.SCALARS)
    return ds_logp_grad(
        x,
        h[DsHeader.KIND] == DsKind.DIRICHLET,
        h[DsHeader.KIND] == DsKind.PARTIAL,
        NC,
        D,
        G,
        K,
        segment(ints, DsInt.N_CATEGORIES),
        segment(ints, DsInt.ROW_DIM),
        segment(ints, DsInt.E_ROW),
        segment(ints, DsInt.E_CODE),
        segment(ints, DsInt.P_E),
        segment(ints, DsInt.P_START),
        pattern_dim,
        segment(floats, DsFloat.PATTERN_W),
        segment(ints, DsInt.MASK).reshape((pattern_dim.size, K)),
        segment(floats, DsFloat.CONF_CONC).reshape((NC, K, K)),
        segment(floats, DsFloat.ZETA_MU).reshape((K, K)),
        sc[DsScalar.ZETA_SD],
        sc[DsScalar.SD_OMEGA],
        sc[DsScalar.COIN_A],
        sc[DsScalar.COIN_B],
        segment(floats, DsFloat.PREV_CONC).reshape((D, K)),
        sc[DsScalar.CONST],
        segment(ints, DsInt.CENTRED),
        segment(ints, DsInt.SIG_OF),
        grad,
    )


@cfunc(LOGP_SIGNATURE, cache=True)
def mace_logp_cb(dim, x_, out_, logp_, user_data):
    """nutpie's log-density callback of MACE (user data: ints and floats of
    :func:`mace_entry`)."""
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = read_user_data(user_data)
    lp = mace_entry(x, ints, floats, out)
    logp[0] = lp
    return status_code(lp, out)


@cfunc(LOGP_SIGNATURE, cache=True)
def ds_logp_cb(dim, x_, out_, logp_, user_data):
    """nutpie's log-density callback of Dawid-Skene (user data: ints and floats of
    :func:`ds_entry`)."""
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = read_user_data(user_data)
    lp = ds_entry(x, ints, floats, out)
    logp[0] = lp
    return status_code(lp, out)


__all__ = [
    "KERNEL_SOURCES",
    "KERNEL_SOURCE_SHA256",
    "ds_entry",
    "ds_logp_cb",
    "kernel_source_sha256",
    "mace_entry",
    "mace_logp_cb",
    "segment",
]
