"""What nutpie's compiled-model interface needs from a hand-written density, as numba C
callbacks: the signatures, the user-data buffer, the return codes and the expand
function of a model sampled on its unconstrained vector.

nutpie calls a model's callbacks through function pointers from its Rust threads, without
the GIL, so chains run in parallel. The log-density callback gets ``user_data``, a pointer
to one float64 buffer (:func:`callback_buffer`): a header (:class:`UserData`), the floats,
then the integers as int64 bits; :func:`read_user_data` gives both arrays back inside the
callback. :func:`raterstats.inference.run_density` stores the unconstrained vector itself
as the draws (:data:`copy_expand_cb`) and expands them afterwards in Python.

Importing this module compiles :data:`copy_expand_cb` (or loads it from numba's on-disk
cache), so the inference layer imports it only when it samples.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
from numba import carray, cfunc, njit, types

#: ``int64(uint64 n, double* x, double* grad, double* logp, void* user_data)``: a log
#: density and its gradient at ``x`` (nutpie's ``logp`` callback)
LOGP_SIGNATURE = types.int64(
    types.uint64,
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.voidptr,
)
#: ``int64(uint64 n, uint64 n_expanded, double* x, double* out, void* user_data)``: the
#: values stored for a draw (nutpie's ``expand`` callback)
EXPAND_SIGNATURE = types.int64(
    types.uint64,
    types.uint64,
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.voidptr,
)


class UserData(IntEnum):
    """Header of the user-data buffer: ``[total length, n_floats, *floats, *ints]``."""

    TOTAL_LENGTH = 0  #: length of the whole buffer, header included
    N_FLOATS = 1  #: number of floats after the header
    BODY = 2  #: where the floats start (the header's length)


def callback_buffer(ints: np.ndarray, floats: np.ndarray) -> np.ndarray:
    """The user-data buffer of a log-density callback: ``floats`` and ``ints`` (stored as
    int64 bits) behind a :class:`UserData` header.

    Examples
    --------
    >>> buf = callback_buffer(np.array([7, 8]), np.array([0.5]))
    >>> buf[:3].tolist(), buf[3:].view(np.int64).tolist()
    ([5.0, 1.0, 0.5], [7, 8])
    """
    body = np.concatenate([floats.astype(np.float64), ints.astype(np.int64).view(np.float64)])
    head = np.empty(int(UserData.BODY))
    head[UserData.TOTAL_LENGTH] = float(body.size + int(UserData.BODY))
    head[UserData.N_FLOATS] = float(floats.size)
    return np.concatenate([head, body])


@njit(cache=True, nogil=True)
def read_user_data(user_data: types.voidptr) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[valid-type]
    """``(ints, floats)`` of a :func:`callback_buffer` from its pointer (inside a
    callback)."""
    head = carray(user_data, (UserData.BODY,), np.float64)
    full = carray(user_data, (int(head[UserData.TOTAL_LENGTH]),), np.float64)
    nf = int(head[UserData.N_FLOATS])
    return full[UserData.BODY + nf :].view(np.int64), full[UserData.BODY : UserData.BODY + nf]


@njit(cache=True, nogil=True)
def status_code(lp: float, grad: np.ndarray) -> int:
    """nutpie's return code for a log density and its gradient: 0 when both are finite,
    4 for a non-finite log density, 3 for a non-finite gradient."""
    if not np.isfinite(lp):
        return 4
    for i in range(grad.size):
        if not np.isfinite(grad[i]):
            return 3
    return 0


@cfunc(EXPAND_SIGNATURE, cache=True)
def copy_expand_cb(dim, expanded, x_, out_, user_data):
    """nutpie's expand callback storing the unconstrained vector itself (``n_expanded``
    must equal ``n``; -1 otherwise)."""
    if dim != expanded:
        return -1
    x = carray(x_, (dim,))
    out = carray(out_, (dim,))
    for i in range(dim):
        out[i] = x[i]
    return 0


__all__ = [
    "EXPAND_SIGNATURE",
    "LOGP_SIGNATURE",
    "UserData",
    "callback_buffer",
    "copy_expand_cb",
    "read_user_data",
    "status_code",
]
