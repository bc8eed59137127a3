"""Figures (matplotlib), built from existing results; nothing is computed here.

Figures are made with :class:`matplotlib.figure.Figure` directly, so no GUI backend or
global pyplot state is involved; save them with ``fig.savefig(path)``.

Ids from the data (systems, dimensions, designs, statistics, ...) are drawn as the text
they are: :func:`raterstats.formatting.plot_text` escapes ``$`` (no math mode) and shows
control characters, and legends list every entry, also one whose name starts with ``_``
(which matplotlib would leave out). A ``title`` argument is drawn as given, so it may use
matplotlib's math text.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from raterstats.formatting import plot_text


def _legend(ax: Any, handles: list[Any], labels: list[str], **kwargs: Any) -> None:
    """A legend of exactly these entries (matplotlib drops labels starting with ``_`` when
    it collects them itself)."""
    ax.legend(handles, labels, **kwargs)


def agreement_bars(
    ds: xr.Dataset,
    statistic: str = "randolph_kappa",
    *,
    group: str = "dimension",
    hue: str = "scheme",
    title: str | None = None,
    interval: str = "bootstrap",
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
    interval : str
        What the intervals are, for the title ("bootstrap"; "posterior" for a model's
        credible intervals, e.g. the reliability per design of
        :func:`raterstats.compare_designs`).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from raterstats.agreement import agreement
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings.filter(rater_kind="human")
    >>> by_design = {d: r.filter(design=d).collapse("likert5_to_3") for d in ("coarse", "fine")}
    >>> ds = agreement(by_design, ["randolph_kappa"], by=["dimension"], n_boot=50,
    ...                random_seed=1)
    >>> fig = agreement_bars(ds)  # 3 dimensions x 2 designs
    >>> len(fig.axes[0].patches)
    6
    """
    sub = ds.sel(statistic=statistic)
    if group not in sub.dims or hue not in sub.dims:
        raise ValueError(f"the result needs dims {group!r} and {hue!r}; it has {tuple(sub.dims)}")
    est = sub["estimate"].transpose(hue, group)
    lo = sub["ci_low"].transpose(hue, group)
    hi = sub["ci_high"].transpose(hue, group)
    groups = [plot_text(str(v)) for v in est[group].values]
    hues = [plot_text(str(v)) for v in est[hue].values]
    fig = Figure(figsize=(1.8 + 1.6 * len(groups), 3.6), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / max(len(hues), 1)
    x = np.arange(len(groups))
    bars = []
    for k, name in enumerate(hues):
        e = est.values[k]
        err = np.vstack([e - lo.values[k], hi.values[k] - e])
        bar = ax.bar(
            x + (k - (len(hues) - 1) / 2) * width,
            e,
            width,
            yerr=np.nan_to_num(err),
            capsize=3,
            label=name,
        )
        bars.append(bar)
    ax.set_xticks(x, groups)
    ax.axhline(0.0, color="black", linewidth=0.8)
    stat_label = plot_text(statistic.replace("_", " "))
    ax.set_ylabel(stat_label)
    prob = ds.attrs.get("ci_prob")
    note = f" (bars: {100 * float(prob):.0f}% {interval} intervals)" if prob is not None else ""
    ax.set_title((title or stat_label) + plot_text(note), fontsize=10)
    _legend(ax, bars, hues, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    return fig


def _panel_grid(n: int, width: float = 4.2, height: float = 3.4) -> tuple[Figure, list]:
    fig = Figure(figsize=(width * n, height), layout="constrained")
    axes = [fig.add_subplot(1, n, k + 1) for k in range(n)]
    return fig, axes


def rank_heatmap(ds: xr.Dataset, *, title: str | None = None) -> Figure:
    """Heatmap of rank probabilities P(rank(system) = r), one panel per dimension (and
    design), systems ordered by expected rank.

    Parameters
    ----------
    ds : xr.Dataset
        A :func:`raterstats.rank_systems` result (``rank_prob``, ``expected_rank``).
    title : str, optional
        Figure title.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from raterstats.ranking import summarize_ranking
    >>> draws = xr.DataArray(np.random.default_rng(0).normal(size=(1, 50, 3)),
    ...                      dims=("chain", "draw", "system"), coords={"system": list("abc")})
    >>> fig = rank_heatmap(summarize_ranking(draws))
    >>> len(fig.axes)
    2
    """
    prob = ds["rank_prob"]
    extra = [d for d in prob.dims if d not in ("system", "rank")]
    stacked = prob.stack(panel=extra) if extra else prob.expand_dims(panel=[""])
    exp_rank = ds["expected_rank"]
    exp_st = exp_rank.stack(panel=extra) if extra else exp_rank.expand_dims(panel=[""])
    n = stacked.sizes["panel"]
    n_sys = stacked.sizes["system"]
    fig, axes = _panel_grid(n, width=1.2 + 0.45 * n_sys, height=1.0 + 0.35 * n_sys)
    image = None
    for k, ax in enumerate(axes):
        p = stacked.isel(panel=k)
        order = np.argsort(exp_st.isel(panel=k).values, kind="stable")
        mat = p.transpose("system", "rank").values[order]
        image = ax.imshow(mat, vmin=0.0, vmax=1.0, cmap="Blues", aspect="auto")
        names = [plot_text(str(s)) for s in p["system"].values[order]]
        ax.set_yticks(np.arange(n_sys), names, fontsize=8)
        ax.set_xticks(np.arange(n_sys), [str(r) for r in p["rank"].values], fontsize=8)
        ax.set_xlabel("rank")
        key = stacked["panel"].values[k]
        label = " / ".join(plot_text(str(v)) for v in (key if isinstance(key, tuple) else (key,)))
        ax.set_title(label, fontsize=9)
        if n_sys <= 12:
            for i in range(n_sys):
                for j in range(n_sys):
                    ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if mat[i, j] > 0.6 else "black")  # fmt: skip
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="P(rank)")
    fig.suptitle(title or "Rank probabilities", fontsize=10)
    return fig


def scores_by_design(ds: xr.Dataset, *, title: str | None = None) -> Figure:
    """System scores with intervals by design, one panel per dimension (the "coarse vs
    fine" figure of the clinical-QA studies).

    Parameters
    ----------
    ds : xr.Dataset
        A :func:`raterstats.rank_systems` result with dims ``dimension``, ``design`` and
        ``system`` (``score_mean``, ``score_low``, ``score_high``), e.g. from an ordinal fit.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from raterstats.ranking import summarize_ranking
    >>> draws = xr.DataArray(np.random.default_rng(0).normal(size=(1, 50, 2, 2, 3)),
    ...     dims=("chain", "draw", "dimension", "design", "system"),
    ...     coords={"dimension": ["c", "r"], "design": ["coarse", "fine"], "system": list("abc")})
    >>> len(scores_by_design(summarize_ranking(draws)).axes)
    2
    """
    if "design" not in ds["score_mean"].dims:
        ds = ds.expand_dims(design=[""])
    if "dimension" not in ds["score_mean"].dims:
        ds = ds.expand_dims(dimension=[""])
    dims = list(ds["dimension"].values)
    designs = list(ds["design"].values)
    systems = [plot_text(str(s)) for s in ds["system"].values]
    fig, axes = _panel_grid(len(dims), width=0.9 + 0.9 * len(systems), height=3.2)
    x = np.arange(len(systems))
    width = 0.7 / max(len(designs), 1)
    handles: list[Any] = []
    for ax, dim in zip(axes, dims, strict=True):
        handles = []
        for k, des in enumerate(designs):
            sel = {"dimension": dim, "design": des}
            m = ds["score_mean"].sel(sel).values
            lo = ds["score_low"].sel(sel).values
            hi = ds["score_high"].sel(sel).values
            xs = x + (k - (len(designs) - 1) / 2) * width
            err = np.vstack([m - lo, hi - m])
            handles.append(ax.errorbar(xs, m, yerr=err, fmt="o", capsize=3))
        ax.set_xticks(x, systems, fontsize=8)
        ax.set_title(plot_text(str(dim)), fontsize=9)
    axes[0].set_ylabel("score")
    _legend(
        axes[-1],
        handles,
        [plot_text(str(g)) for g in designs],
        fontsize=8,
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    prob = ds.attrs.get("ci_prob")
    note = f" ({100 * float(prob):.0f}% intervals)" if prob is not None else ""
    fig.suptitle((title or "System scores by design") + note, fontsize=10)
    return fig


def partial_annotation_curves(
    ds: xr.Dataset, projection: xr.DataArray | None = None, *, title: str | None = None
) -> Figure:
    """Partial-annotation curves against the number of sentences ``k``: Spearman's rho
    with the full answer score, the inter-rater variance, and optionally the model-based
    reliability projection (posterior mean of :func:`raterstats.design.reliability_projection`
    for one rater, the sentence-level design).

    Examples
    --------
    >>> import xarray as xr
    >>> ds = xr.Dataset({v: (("dimension", "k"), [[0.8, 0.9, 1.0]]) for v in (
    ...     "spearman_mean", "spearman_low", "spearman_high", "variance_mean",
    ...     "variance_low", "variance_high")}, coords={"dimension": ["c"], "k": [1, 2, 3]})
    >>> len(partial_annotation_curves(ds).axes)
    2
    """
    panels = [("spearman", "Spearman with the full score"), ("variance", "inter-rater variance")]
    fig, axes = _panel_grid(len(panels) + (projection is not None), width=3.8)
    k = ds["k"].values
    handles: list[Any] = []
    labels: list[str] = []
    for ax, (var, label) in zip(axes, panels, strict=False):
        handles, labels = [], []
        for dim in ds["dimension"].values:
            m = ds[f"{var}_mean"].sel(dimension=dim).values
            handles += ax.plot(k, m, marker="o")
            labels.append(plot_text(str(dim)))
            ax.fill_between(k, ds[f"{var}_low"].sel(dimension=dim).values,
                            ds[f"{var}_high"].sel(dimension=dim).values, alpha=0.2)  # fmt: skip
        ax.set_xlabel("sentences per answer (k)")
        ax.set_title(label, fontsize=9)
    if projection is not None:
        ax = axes[-1]
        proj = projection
        for d in [d for d in proj.dims if d not in ("dimension", "k", "chain", "draw")]:
            proj = proj.isel({d: 0})
        mean = proj.mean(("chain", "draw")) if "chain" in proj.dims else proj
        handles, labels = [], []
        for dim in mean["dimension"].values:
            handles += ax.plot(mean["k"].values, mean.sel(dimension=dim).values, marker="s")
            labels.append(plot_text(str(dim)))
        ax.set_xlabel("sentences per answer (k)")
        ax.set_title("model-based reliability (1 rater)", fontsize=9)
    _legend(
        axes[-1],
        handles,
        labels,
        fontsize=8,
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    prob = ds.attrs.get("ci_prob")
    note = f" (bands: {100 * float(prob):.0f}% over random subsets)" if prob is not None else ""
    fig.suptitle((title or "Partial annotation") + note, fontsize=10)
    return fig


def budget_curve(
    budget: xr.Dataset, *, on: str = "reliability", title: str | None = None
) -> Figure:
    """Projected reliability or ranking certainty against annotation cost (rater hours),
    one panel per dimension, one line per design (and sentences per answer ``k`` for
    sentence-level designs) over the number of raters per answer.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> b = xr.Dataset({"reliability": (("dimension", "design", "n_raters", "k"),
    ...                                 np.array([[[[0.5], [0.8]]]])),
    ...                 "cost_hours": (("design", "n_raters", "k"), [[[1.0], [2.0]]])},
    ...                coords={"dimension": ["a"], "design": ["coarse"], "n_raters": [1, 2],
    ...                        "k": [1]})
    >>> len(budget_curve(b).axes[0].lines)
    1
    """
    dims = list(budget["dimension"].values)
    fig, axes = _panel_grid(len(dims), width=4.0)
    handles: list[Any] = []
    labels: list[str] = []
    has_sent = {
        str(g): bool(h)
        for g, h in zip(
            budget["design"].values,
            budget["has_sentences"].values
            if "has_sentences" in budget.coords
            else [False] * budget.sizes["design"],
            strict=True,
        )
    }
    for ax, dim in zip(axes, dims, strict=True):
        handles, labels = [], []
        for des in budget["design"].values:
            ks = budget["k"].values if has_sent.get(str(des), False) else budget["k"].values[:1]
            for k in ks:
                cost = budget["cost_hours"].sel(design=des, k=k).values
                val = budget[on].sel(dimension=dim, design=des, k=k).values
                name = plot_text(str(des))
                labels.append(f"{name}, k={k}" if has_sent.get(str(des), False) else name)
                handles += ax.plot(cost, val, marker="o", markersize=3)
        ax.set_xlabel("rater hours")
        ax.set_title(plot_text(str(dim)), fontsize=9)
    label = {
        "p_recovered": "P(true ranking recovered)",
        "expected_tau": "expected Kendall tau with the true ranking",
    }.get(on, plot_text(on.replace("_", " ")))
    axes[0].set_ylabel(label)
    _legend(
        axes[-1],
        handles,
        labels,
        fontsize=7,
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    fig.suptitle(title or f"Projected {label} against cost", fontsize=10)
    return fig
