"""nutpie's C callback of the ordinal rater model's compiled density.

nutpie calls :data:`ordinal_logp_cb` through a function pointer from its Rust threads,
without the GIL, so the chains run in parallel on the cores; with the Python callback
(``Density.logp_grad``) every gradient took the GIL and the four chains of a default fit
shared one core. The data reach the callback in one buffer
(:func:`raterstats.nutpie_callbacks.callback_buffer`) holding the integers and the floats
that :func:`pack_ordinal` lays out and :func:`ordinal_entry` reads back.

Kept apart from :mod:`raterstats.models.ordinal.kernels` because numba compiles (or loads
from its cache) a ``cfunc`` when its module is imported: MAP, the log-likelihood and the
derived quantities do not pay for it.
"""

from __future__ import annotations

import hashlib
from enum import IntEnum
from pathlib import Path

import numpy as np
from numba import carray, cfunc, njit

from raterstats.models.ordinal.kernels_scale import sampler_logp_grad
from raterstats.nutpie_callbacks import LOGP_SIGNATURE, read_user_data, status_code

#: The source files whose code the cached callback compiles in, besides this one: the
#: kernel, the named positions it reads, and nutpie's buffer helpers.
KERNEL_SOURCES = (
    Path(__file__).with_name("kernels.py"),
    Path(__file__).with_name("kernels_interval.py"),
    Path(__file__).with_name("kernels_marginal.py"),
    Path(__file__).with_name("kernels_scale.py"),
    Path(__file__).with_name("layout.py"),
    Path(__file__).parents[2] / "nutpie_callbacks.py",
)

#: SHA-256 of :data:`KERNEL_SOURCES` (:func:`kernel_source_sha256`). numba's on-disk cache
#: checks only this file's time stamp and size, not the sources it calls into, so a changed
#: kernel or layout would otherwise leave a stale callback reading the data at the old
#: positions. tests/ordinal/test_ordinal_callback.py fails until this value is updated,
#: and updating it invalidates the cache.
KERNEL_SOURCE_SHA256 = "9045b72620dc7c625b17ea834dd31faf2fcbbaa30ee2fa3fb32522f5db1d7919"


def kernel_source_sha256() -> str:
    """SHA-256 over the :data:`KERNEL_SOURCES` (each file's bytes, in order)."""
    h = hashlib.sha256()
    for path in KERNEL_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()


class OrdinalHeader(IntEnum):
    """The lengths at the start of the packed integers; the arrays follow in this order:
    block offsets, settings, then the per-rating item, dimension, design, rater, sentence
    and level, then the per-answer system and question. The floats hold the prior
    constants, the per-answer standardised log length and the two zero-sum bases."""

    N_OFFSETS = 0  #: length of the block offsets
    N_SETTINGS = 1  #: length of the settings
    N_PRIOR = 2  #: number of prior constants
    N_OBS = 3  #: number of ratings
    N_ITEM = 4  #: number of answers
    BASIS_M_ROWS = 5  #: rows of the systems' zero-sum basis (M)
    BASIS_M_COLS = 6  #: its columns (M - 1)
    BASIS_H_ROWS = 7  #: rows of the human panel's zero-sum basis (H)
    BASIS_H_COLS = 8  #: its columns (H - 1)
    BODY = 9  #: where the arrays start


def pack_ordinal(
    offsets: np.ndarray,
    settings: np.ndarray,
    prior: np.ndarray,
    obs: tuple[np.ndarray, ...],
    item: tuple[np.ndarray, np.ndarray],
    z_length: np.ndarray,
    basis_m: np.ndarray,
    basis_h: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The packed ``(ints, floats)`` of the callback's buffer.

    ``obs`` holds the six per-rating arrays (item, dimension, design, rater, 1-based
    sentence, 0-based level) and ``item`` the per-answer system and question, in the order
    :func:`~raterstats.models.ordinal.kernels.ordinal_logp_grad` takes them.

    Examples
    --------
    >>> one = np.zeros(2, np.int64)
    >>> ints, floats = pack_ordinal(np.arange(3), np.arange(2), np.ones(1), (one,) * 6,
    ...                             (one, one), np.zeros(2), np.ones((1, 0)), np.ones((2, 1)))
    >>> int(ints[OrdinalHeader.N_OBS]), ints.size, floats.size
    (2, 30, 5)
    """
    n_obs = int(obs[0].size)
    n_item = int(item[0].size)
    if any(np.asarray(a).size != n_obs for a in obs) or len(obs) != 6:
        raise ValueError("pack_ordinal: obs must be six per-rating arrays of one length")
    head = np.array(
        [
            offsets.size,
            settings.size,
            prior.size,
            n_obs,
            n_item,
            *basis_m.shape,
            *basis_h.shape,
        ],
        dtype=np.int64,
    )
    ints = np.concatenate(
        [head, offsets, settings, *[np.asarray(a) for a in obs], *[np.asarray(a) for a in item]]
    ).astype(np.int64)
    floats = np.concatenate(
        [prior, np.asarray(z_length, float), basis_m.ravel(), basis_h.ravel()]
    ).astype(np.float64)
    return np.ascontiguousarray(ints), np.ascontiguousarray(floats)


@njit(cache=True, nogil=True)
def ordinal_entry(x: np.ndarray, ints: np.ndarray, floats: np.ndarray, grad: np.ndarray) -> float:
    """:func:`~raterstats.models.ordinal.kernels_scale.sampler_logp_grad` with the data packed by
    :func:`pack_ordinal`."""
    n_off = ints[OrdinalHeader.N_OFFSETS]
    n_set = ints[OrdinalHeader.N_SETTINGS]
    n_prior = ints[OrdinalHeader.N_PRIOR]
    n = ints[OrdinalHeader.N_OBS]
    ni = ints[OrdinalHeader.N_ITEM]
    mr, mc = ints[OrdinalHeader.BASIS_M_ROWS], ints[OrdinalHeader.BASIS_M_COLS]
    hr, hc = ints[OrdinalHeader.BASIS_H_ROWS], ints[OrdinalHeader.BASIS_H_COLS]
    p = OrdinalHeader.BODY + 0
    off = ints[p : p + n_off]
    p += n_off
    settings = ints[p : p + n_set]
    p += n_set
    obs_item = ints[p : p + n]
    obs_dim = ints[p + n : p + 2 * n]
    obs_design = ints[p + 2 * n : p + 3 * n]
    obs_rater = ints[p + 3 * n : p + 4 * n]
    obs_sent = ints[p + 4 * n : p + 5 * n]
    obs_y = ints[p + 5 * n : p + 6 * n]
    p += 6 * n
    item_sys = ints[p : p + ni]
    item_q = ints[p + ni : p + 2 * ni]
    prior = floats[:n_prior]
    q = n_prior
    zlen = floats[q : q + ni]
    q += ni
    basis_m = floats[q : q + mr * mc].reshape((mr, mc))
    q += mr * mc
    basis_h = floats[q : q + hr * hc].reshape((hr, hc))
    return sampler_logp_grad(
        x,
        grad,
        off,
        settings,
        prior,
        obs_item,
        obs_dim,
        obs_design,
        obs_rater,
        obs_sent,
        obs_y,
        item_sys,
        item_q,
        zlen,
        basis_m,
        basis_h,
    )


@cfunc(LOGP_SIGNATURE, cache=True)
def ordinal_logp_cb(dim, x_, out_, logp_, user_data):
    """nutpie's log-density callback of the ordinal rater model (user data: the packed
    arrays of :func:`pack_ordinal`)."""
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = read_user_data(user_data)
    lp = ordinal_entry(x, ints, floats, out)
    logp[0] = lp
    return status_code(lp, out)


__all__ = [
    "KERNEL_SOURCES",
    "KERNEL_SOURCE_SHA256",
    "OrdinalHeader",
    "kernel_source_sha256",
    "ordinal_entry",
    "ordinal_logp_cb",
    "pack_ordinal",
]
