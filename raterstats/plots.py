"""Figures (matplotlib), built from existing results; nothing is computed here.

Figures are made with :class:`matplotlib.figure.Figure` directly, so no GUI backend or
global pyplot state is involved; save them with ``fig.savefig(path)``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.figure import Figure


def agreement_bars(
    ds: xr.Dataset,
    statistic: str = "randolph_kappa",
    *,
    group: str = "dimension",
    hue: str = "scheme",
    title: str | None = None,
) -> Figure:
    """Grouped bar chart of one agreement statistic with its interval as error bars.

    Parameters
    ----------
    ds : xr.Dataset
        The result of :func:`raterstats.agreement.agreement` (``estimate``, ``ci_low``,
        ``ci_high`` with dims ``statistic``, ``group`` and ``hue``).
    statistic : str
        Which statistic to draw.
    group, hue : str
        Dimension along the x axis and dimension of the bars within a group (e.g. one bar
        per rating scheme for each rated dimension, as in the clinical-QA papers).
    title : str, optional
        Figure title (default: the statistic's name).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from raterstats.agreement import agreement
    >>> from raterstats.demo import schemes
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings.filter(rater_kind="human")
    >>> ds = agreement(schemes(r), ["randolph_kappa"], by=["dimension"], n_boot=50,
    ...                random_seed=1)
    >>> fig = agreement_bars(ds)
    >>> len(fig.axes[0].patches)
    9
    """
    sub = ds.sel(statistic=statistic)
    if group not in sub.dims or hue not in sub.dims:
        raise ValueError(f"the result needs dims {group!r} and {hue!r}; it has {tuple(sub.dims)}")
    est = sub["estimate"].transpose(hue, group)
    lo = sub["ci_low"].transpose(hue, group)
    hi = sub["ci_high"].transpose(hue, group)
    groups = [str(v) for v in est[group].values]
    hues = [str(v) for v in est[hue].values]
    fig = Figure(figsize=(1.8 + 1.6 * len(groups), 3.6), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / max(len(hues), 1)
    x = np.arange(len(groups))
    for k, name in enumerate(hues):
        e = est.values[k]
        err = np.vstack([e - lo.values[k], hi.values[k] - e])
        ax.bar(
            x + (k - (len(hues) - 1) / 2) * width,
            e,
            width,
            yerr=np.nan_to_num(err),
            capsize=3,
            label=name,
        )
    ax.set_xticks(x, groups)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_ylabel(statistic.replace("_", " "))
    prob = ds.attrs.get("ci_prob")
    note = f" (bars: {100 * float(prob):.0f}% bootstrap intervals)" if prob is not None else ""
    ax.set_title((title or statistic.replace("_", " ")) + note, fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig
