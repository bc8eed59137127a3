"""Design sweeps on a Dask cluster: checks of the ``client`` argument and the run of a
sweep's tasks on a :class:`dask.distributed.Client`.

:func:`raterstats.design.budget.run_tasks` (what every sweep of this package runs on:
annotation budgets, partial annotation, design kinds, rater subsampling, simulation-based
calibration) hands its tasks here when it is given a ``client``. Each task is a dict; a
value that several tasks hold as the *same object* (the posterior draws of a budget, the
ratings of a subsampling study, the model and simulator of a calibration) is sent to the
cluster once with :meth:`~dask.distributed.Client.scatter` and reaches every task that
uses it by reference, instead of being pickled into each task. The tasks carry their own
seeds, so the results equal those of a local run with the same ``random_seed``.

dask is optional: ``pip install raterstats[dask]``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

#: how to install the optional Dask support
DASK_EXTRA = "pip install 'raterstats[dask]'"

#: task values of these types are small and never scattered
_SMALL = (bool, int, float, complex, str, bytes, type(None))


def dask_client_class() -> type:
    """The class :class:`dask.distributed.Client`, imported on first use.

    Returns
    -------
    type
        ``distributed.Client``.

    Raises
    ------
    ImportError
        dask.distributed is not installed; the message names the extra to install.

    Examples
    --------
    >>> dask_client_class().__name__
    'Client'
    """
    try:
        from distributed import Client
    except ImportError as err:  # pragma: no cover - the test extra installs dask
        raise ImportError(
            f"running on a Dask cluster (client=) needs dask.distributed: {DASK_EXTRA}"
        ) from err
    return Client


def check_client(client: Any, what: str) -> Any:
    """``client`` when it is a :class:`dask.distributed.Client`, else a clear error.

    Parameters
    ----------
    client : object
        What the user passed as ``client=``.
    what : str
        The caller's name, for messages.

    Returns
    -------
    dask.distributed.Client
        ``client``, unchanged.

    Raises
    ------
    ImportError
        dask.distributed is not installed (the message names the extra).
    TypeError
        ``client`` is not a ``dask.distributed.Client``.

    Examples
    --------
    >>> check_client(object(), "f")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    TypeError: f: client must be a dask.distributed.Client ...
    """
    cls = dask_client_class()
    if not isinstance(client, cls):
        raise TypeError(
            f"{what}: client must be a dask.distributed.Client (e.g. "
            f"Client('tcp://host:8786')), not {type(client).__name__}; pass a "
            "concurrent.futures executor as executor= instead"
        )
    return client


def shared_values(tasks: list[Any]) -> dict[int, Any]:
    """The values that several task dicts hold as the same object (by identity), except
    numbers, strings and None: ``{id(value): value}``. These are what :func:`run_on_client`
    scatters once.

    Parameters
    ----------
    tasks : list
        The tasks (dicts; other tasks share nothing).

    Returns
    -------
    dict
        ``{id: value}`` of the shared values.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros(3)
    >>> list(shared_values([{"x": a, "r": 1}, {"x": a, "r": 2}]).values())[0] is a
    True
    """
    seen: dict[int, Any] = {}
    count: dict[int, int] = {}
    for t in tasks:
        if not isinstance(t, dict):
            continue
        for v in t.values():
            if isinstance(v, _SMALL):
                continue
            seen[id(v)] = v
            count[id(v)] = count.get(id(v), 0) + 1
    return {k: v for k, v in seen.items() if count[k] > 1}


def run_on_client(client: Any, fn: Callable[[Any], Any], tasks: list[Any], what: str) -> list[Any]:
    """``fn`` over ``tasks`` on the Dask cluster of ``client``, results in the order of
    ``tasks``.

    The values that several tasks share (:func:`shared_values`) are scattered to the
    cluster once and replaced by their futures (Dask hands every task the value itself);
    the tasks are submitted with :meth:`~dask.distributed.Client.map` (``pure=False``: each
    runs once, with its own seed) and gathered in order. When a task raises, the others
    are cancelled and the error is raised here.

    Parameters
    ----------
    client : dask.distributed.Client
        The cluster's client (checked by :func:`check_client`).
    fn : callable
        A module-level function (workers import it by name, so they need raterstats
        installed, at the same version).
    tasks : list
        The tasks.
    what : str
        The caller's name, for messages and task keys.

    Returns
    -------
    list
        ``fn(task)`` for each task.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as c:
    ...     with Client(c) as cl:
    ...         run_on_client(cl, abs, [-1, 2, -3], "example")
    [1, 2, 3]
    """
    check_client(client, what)
    if not tasks:
        return []
    shared = shared_values(tasks)
    futures_of: dict[int, Any] = {}
    if shared:
        ids = list(shared)
        scattered = client.scatter([shared[i] for i in ids], hash=False)
        futures_of = dict(zip(ids, scattered, strict=True))
    sent = [
        {k: futures_of.get(id(v), v) for k, v in t.items()} if isinstance(t, dict) else t
        for t in tasks
    ]
    tag = f"{what}-{getattr(fn, '__name__', 'task')}-{uuid.uuid4().hex[:8]}"
    futures = client.map(fn, sent, key=[f"{tag}-{i}" for i in range(len(sent))], pure=False)
    try:
        return list(client.gather(futures))
    finally:
        client.cancel(futures + list(futures_of.values()))


__all__ = ["DASK_EXTRA", "check_client", "dask_client_class", "run_on_client", "shared_values"]
