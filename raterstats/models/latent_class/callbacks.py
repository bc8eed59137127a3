"""C callbacks of the compiled latent-class densities for nutpie.

Kept apart from :mod:`raterstats.models.latent_class.kernels` because numba compiles (or
loads from its cache) every ``cfunc`` when the module is imported, about 0.8 s: the EM and
draw-summary kernels there load lazily, so a process that only runs EM does not pay for
the callbacks.
"""

from __future__ import annotations

import numpy as np
from numba import carray, cfunc, njit, types

from raterstats.models.latent_class.kernels import ds_entry, mace_entry

#: SHA-256 of _numba.py, whose kernels the callbacks below compile in. numba's on-disk
#: cache checks only this file's time stamp and size, not the sources it calls into, so a
#: changed _numba.py would otherwise leave stale callbacks that read the new data layout
#: with the old code (heap corruption). tests/models/test_structure.py fails until this
#: value is updated, and updating it invalidates the cache.
KERNEL_SOURCE_SHA256 = "dd1502a771a76736e55f143b6199c958fefd3a3ea133709e6a739d95e94fa810"

# ---------------------------------------------------------------------- C callbacks for nutpie
# nutpie calls these through function pointers from its Rust threads, without the GIL, so
# chains run in parallel. ``user_data`` points to one float64 buffer:
# ``[total length, n_floats, *floats, *ints (as int64 bits)]`` (see :func:`callback_buffer`).

_LOGP_SIG = types.int64(
    types.uint64,
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.voidptr,
)
_EXPAND_SIG = types.int64(
    types.uint64,
    types.uint64,
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.voidptr,
)


def callback_buffer(ints: np.ndarray, floats: np.ndarray) -> np.ndarray:
    """The user-data buffer read by the C callbacks."""
    body = np.concatenate([floats.astype(np.float64), ints.astype(np.int64).view(np.float64)])
    return np.concatenate([[float(body.size + 2), float(floats.size)], body])


@njit(cache=True, nogil=True)
def _unpack(user_data: types.voidptr) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[valid-type]
    head = carray(user_data, (2,), np.float64)
    full = carray(user_data, (int(head[0]),), np.float64)
    nf = int(head[1])
    return full[2 + nf :].view(np.int64), full[2 : 2 + nf]


@njit(cache=True, nogil=True)
def _status(lp: float, grad: np.ndarray) -> int:
    """nutpie's return code for a log density and its gradient: 0 when both are finite,
    4 for a non-finite log density, 3 for a non-finite gradient."""
    if not np.isfinite(lp):
        return 4
    for i in range(grad.size):
        if not np.isfinite(grad[i]):
            return 3
    return 0


@cfunc(_LOGP_SIG, cache=True)
def mace_logp_cb(dim, x_, out_, logp_, user_data):
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = _unpack(user_data)
    lp = mace_entry(x, ints, floats, out)
    logp[0] = lp
    return _status(lp, out)


@cfunc(_LOGP_SIG, cache=True)
def ds_logp_cb(dim, x_, out_, logp_, user_data):
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    logp = carray(logp_, (1,))
    ints, floats = _unpack(user_data)
    lp = ds_entry(x, ints, floats, out)
    logp[0] = lp
    return _status(lp, out)


@cfunc(_EXPAND_SIG, cache=True)
def copy_expand_cb(dim, expanded, x_, out_, user_data):
    if dim != expanded:
        return -1
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    for i in range(dim):
        out[i] = x[i]
    return 0
