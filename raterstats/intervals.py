"""The one equal-tailed interval of raterstats, and the summary of draws built on it.

Every interval that raterstats reports over posterior draws, bootstrap replicates or
simulated repeats comes from :func:`eti`: the ``(1 - prob) / 2`` and ``1 - (1 - prob) / 2``
quantiles of the sample, linearly interpolated (NumPy's default ``"linear"`` method, the
same as ``arviz_stats.eti`` and R's ``quantile(type = 7)``). It is computed with xarray /
NumPy so that summaries of EM and bootstrap results do not import ArviZ.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import xarray as xr

from raterstats.defaults import resolve_ci_prob

#: the sample dims of a posterior (ArviZ schema)
SAMPLE_DIMS = ("chain", "draw")


def eti(
    da: xr.DataArray,
    prob: float | None = None,
    *,
    dim: Hashable | Sequence[Hashable] = SAMPLE_DIMS,
) -> tuple[xr.DataArray, xr.DataArray]:
    """Lower and upper bounds of the equal-tailed interval of ``da`` over ``dim``.

    Parameters
    ----------
    da : xr.DataArray
        Draws (or replicates); NaN values are skipped.
    prob : float, optional
        Probability mass of the interval; default :func:`raterstats.defaults.ci_prob`
        (ArviZ's ``stats.ci_prob`` rcParam).
    dim : str or sequence of str
        The sample dims (default ``("chain", "draw")``).

    Returns
    -------
    (low, high) : tuple of xr.DataArray
        ``da``'s other dims; a sample of one value gives that value twice.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> da = xr.DataArray(np.arange(101.0)[None], dims=("chain", "draw"))
    >>> low, high = eti(da, 0.9)
    >>> round(float(low), 6), round(float(high), 6)
    (5.0, 95.0)

    The same as R's ``quantile(0:100, c(0.05, 0.95))``.
    """
    p = resolve_ci_prob(prob)
    dims = [dim] if isinstance(dim, str) or not isinstance(dim, Sequence) else list(dim)
    q = da.quantile([(1 - p) / 2, 1 - (1 - p) / 2], dim=dims, skipna=True)
    return q.isel(quantile=0, drop=True), q.isel(quantile=1, drop=True)


def eti_np(x: np.ndarray, prob: float | None = None, *, axis: int = -1) -> np.ndarray:
    """NumPy form of :func:`eti`: ``(2, ...)`` lower and upper bounds along ``axis``,
    skipping NaN.

    Examples
    --------
    >>> eti_np(np.arange(101.0), 0.9).round(6).tolist()
    [5.0, 95.0]
    """
    p = resolve_ci_prob(prob)
    return np.nanquantile(np.asarray(x, dtype=float), [(1 - p) / 2, 1 - (1 - p) / 2], axis=axis)


def summarize_draws(
    da: xr.DataArray,
    prob: float | None = None,
    *,
    dim: Hashable | Sequence[Hashable] = SAMPLE_DIMS,
) -> dict[str, xr.DataArray]:
    """Mean, standard deviation and equal-tailed interval of ``da`` over ``dim``:
    ``{"mean", "sd", "low", "high"}``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> da = xr.DataArray(np.arange(101.0)[None], dims=("chain", "draw"))
    >>> {k: round(float(v), 2) for k, v in summarize_draws(da, 0.9).items()}
    {'mean': 50.0, 'sd': 29.15, 'low': 5.0, 'high': 95.0}
    """
    dims = [dim] if isinstance(dim, str) or not isinstance(dim, Sequence) else list(dim)
    low, high = eti(da, prob, dim=dims)
    return {"mean": da.mean(dims), "sd": da.std(dims), "low": low, "high": high}


__all__ = ["SAMPLE_DIMS", "eti", "eti_np", "summarize_draws"]
