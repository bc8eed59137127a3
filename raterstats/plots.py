"""Figures (matplotlib), built from existing results; nothing is computed here.

Figures are made with :class:`matplotlib.figure.Figure` directly, so no GUI backend or
global pyplot state is involved; save them with :func:`save_figure` (or
``fig.savefig(path, dpi=FIGURE_DPI)``).

Ids from the data (systems, dimensions, designs, statistics, ...) are drawn as the text
they are: :func:`raterstats.formatting.plot_text` escapes ``$`` (no math mode) and shows
control characters, and legends list every entry, also one whose name starts with ``_``
(which matplotlib would leave out). A ``title`` argument is drawn as given, so it may use
matplotlib's math text.

**Size rule.** Every figure is laid out for the HTML report of :func:`raterstats.report.report`
at a 1280 px window: it is at most :data:`~raterstats.defaults.REPORT_WIDTH_PX` pixels wide at
:data:`~raterstats.defaults.FIGURE_DPI` (7.5 inches at 120 dpi), so the page shows it at its
natural size; every text is at least :data:`TICK_PT` points, which the page shows at
:func:`effective_text_pt` = 9 x 120 / 96 = 11.25 pt, above
:data:`~raterstats.defaults.MIN_TEXT_PT`. Panels (one per dimension, design, ...) wrap at
most :data:`MAX_COLUMNS` to a row, fewer when their content needs the width, and rows are
added as needed. Category tick labels (systems, dimensions) are turned upright when they
are wider than their slot, and the figure gets the room their length needs; titles wrap to
the figure's width.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator

from raterstats.defaults import FIGURE_DPI, REPORT_WIDTH_PX
from raterstats.formatting import plot_text

#: most panels in one row of a faceted figure
MAX_COLUMNS = 4
#: size (pt) of tick labels, legends and numbers in cells: the smallest text of a figure
TICK_PT = 9.0
#: size (pt) of axis labels and panel titles
LABEL_PT = 10.0
#: size (pt) of a figure's title
TITLE_PT = 11.0
#: PNG text keys under which :func:`save_figure` records the figure's smallest text size
#: and its resolution (read by :func:`raterstats.report.report`)
PNG_KEYS = {"min_font_pt": "raterstats:min_font_pt", "dpi": "raterstats:dpi"}

_LINE = TICK_PT * 1.3 / 72  # height of one line of tick text, inches
_TITLE_LINE = LABEL_PT * 1.45 / 72


def max_figure_width(dpi: float = FIGURE_DPI) -> float:
    """Widest figure (inches) that the report shows at its natural size at ``dpi``:
    :data:`~raterstats.defaults.REPORT_WIDTH_PX` / ``dpi``.

    Examples
    --------
    >>> max_figure_width(120)
    7.5
    """
    return REPORT_WIDTH_PX / dpi


def effective_text_pt(font_pt: float, *, dpi: float, natural_px: float, shown_px: float) -> float:
    """The size (pt at 100 % zoom) at which a browser shows text of ``font_pt`` points drawn
    in a figure saved at ``dpi`` and ``natural_px`` pixels wide, shown ``shown_px`` CSS
    pixels wide: a point of the figure is ``dpi / 72`` image pixels, an image pixel
    ``shown_px / natural_px`` CSS pixels, and a point on screen 96 / 72 CSS pixels.

    Examples
    --------
    >>> effective_text_pt(9, dpi=120, natural_px=900, shown_px=900)
    11.25
    >>> effective_text_pt(9, dpi=120, natural_px=1800, shown_px=900)  # scaled down by half
    5.625
    """
    if natural_px <= 0 or shown_px <= 0:
        raise ValueError(f"image widths must be positive, got {natural_px} and {shown_px}")
    return font_pt * dpi / 96.0 * (shown_px / natural_px)


def min_font_size(fig: Figure) -> float:
    """Size (pt) of the smallest visible, non-empty text of ``fig``.

    Examples
    --------
    >>> fig = Figure()
    >>> _ = fig.text(0.5, 0.5, "a", fontsize=7)
    >>> min_font_size(fig)
    7.0
    """
    sizes = [
        float(t.get_fontsize())
        for t in fig.findobj(Text)
        if isinstance(t, Text) and t.get_visible() and t.get_text().strip()
    ]
    return min(sizes) if sizes else float("inf")


def save_figure(fig: Figure, path: str | Path, *, dpi: float = FIGURE_DPI) -> None:
    """Save ``fig`` as PNG at ``dpi``, recording its smallest text size and resolution
    in the file (:data:`PNG_KEYS`), so that the report can state how large its text is
    shown.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> fig = Figure(figsize=(2, 1))
    >>> _ = fig.text(0.1, 0.5, "a", fontsize=9)
    >>> p = Path(tempfile.mkdtemp()) / "a.png"
    >>> save_figure(fig, p)
    >>> from PIL import Image
    >>> with Image.open(p) as im:
    ...     im.text["raterstats:min_font_pt"], im.size
    ('9', (240, 120))
    """
    meta = {
        PNG_KEYS["min_font_pt"]: f"{min_font_size(fig):g}",
        PNG_KEYS["dpi"]: f"{dpi:g}",
        "Software": "raterstats (matplotlib)",
    }
    fig.savefig(path, dpi=dpi, format="png", metadata=meta)


@lru_cache(maxsize=4096)
def _width_of(text: str, size: float) -> float:
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width = max(
        TextToPath().get_text_width_height_descent(line, FontProperties(size=size), ismath=False)[0]
        for line in text.split("\n")
    )
    return float(width) / 72.0


def text_width(texts: Sequence[str], size: float = TICK_PT) -> float:
    """Width (inches) of the widest of ``texts`` drawn at ``size`` points (0 for none).

    Examples
    --------
    >>> text_width(["a", "a longer label"]) > text_width(["a"]) > 0
    True
    """
    return max((_width_of(str(t), float(size)) for t in texts), default=0.0)


def _wrap(text: str, width_in: float, size: float) -> str:
    """``text`` broken at spaces into lines no wider than ``width_in`` (when it can be)."""
    full = text_width([text], size)
    if full <= width_in or " " not in text:
        return text
    chars = max(8, int(len(text) * width_in / full))
    return "\n".join(textwrap.wrap(text, chars, break_long_words=False, break_on_hyphens=False))


def _category_axis(ax: Any, labels: list[str], slot: float, *, axis: str = "x") -> None:
    """Category tick labels on ``axis``: level when they fit their slot (inches), else
    upright (x axis)."""
    pos = np.arange(len(labels))
    if axis == "x":
        upright = text_width(labels) > 0.92 * slot
        ax.set_xticks(pos, labels, fontsize=TICK_PT, rotation=90 if upright else 0)
    else:
        ax.set_yticks(pos, labels, fontsize=TICK_PT)


def _label_room(labels: list[str], slot: float) -> float:
    """Height (inches) that x tick labels need below an axis at this slot width."""
    widest = text_width(labels)
    return widest + 0.08 if widest > 0.92 * slot else _LINE + 0.05


def _numeric_ticks(ax: Any, axis: str, length: float) -> None:
    """At most one numeric tick per 0.55 inch of a narrow axis (so labels do not touch)."""
    loc = MaxNLocator(nbins=max(2, int(length / 0.55)), steps=[1, 2, 2.5, 5, 10])
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(loc)
    ax.tick_params(axis=axis, labelsize=TICK_PT)


def _columns(n: int, panel: float, fixed: float, *, dpi: float = FIGURE_DPI) -> int:
    """Panels per row: as many as fit the report's width, at least 1, at most
    :data:`MAX_COLUMNS`, balanced over the rows."""
    fit = int((max_figure_width(dpi) - fixed) // panel) if panel > 0 else n
    return _balanced(n, max(1, min(MAX_COLUMNS, n, fit)))


def _balanced(n: int, cols: int) -> int:
    """The fewest columns that keep the rows ``cols`` panels need (4 panels at most 3 a
    row: 2 rows of 2, not 3 and 1)."""
    return math.ceil(n / math.ceil(n / cols))


def _panels(
    fig: Figure, n: int, cols: int, *, sharey: bool = False, sharex: bool = False
) -> list[Any]:
    """``n`` axes in rows of ``cols``; with ``sharey`` only the first of a row labels y."""
    rows = math.ceil(n / cols)
    axes: list[Any] = []
    for k in range(n):
        first = axes[(k // cols) * cols] if k % cols else None
        kw: dict[str, Any] = {}
        if sharey and first is not None:
            kw["sharey"] = first
        if sharex and axes:
            kw["sharex"] = axes[0]
        ax = fig.add_subplot(rows, cols, k + 1, **kw)
        if sharey and first is not None:
            ax.tick_params(labelleft=False)
        ax.tick_params(labelsize=TICK_PT)
        axes.append(ax)
    return axes


def _legend(ax: Any, handles: list[Any], labels: list[str], **kwargs: Any) -> None:
    """A legend of exactly these entries (matplotlib drops labels starting with ``_``
    when it collects them itself)."""
    ax.legend(handles, labels, fontsize=TICK_PT, frameon=False, **kwargs)


def _legend_rows(labels: list[str], width: float) -> tuple[int, float]:
    """Columns of a legend under the panels, and the height (inches) it takes."""
    if not labels:
        return 1, 0.0
    entry = text_width(labels) + 0.5
    ncols = max(1, min(len(labels), int(width // entry)))
    return ncols, math.ceil(len(labels) / ncols) * (_LINE + 0.06) + 0.1


def _fig_legend(fig: Figure, handles: list[Any], labels: list[str], ncols: int) -> None:
    fig.legend(
        handles, labels, loc="outside lower center", ncols=ncols, fontsize=TICK_PT, frameon=False
    )


def _suptitle(fig: Figure, text: str, width: float) -> float:
    """Set the figure title wrapped to ``width``; returns nothing but keeps the layout."""
    wrapped = _wrap(text, width - 0.2, TITLE_PT)
    fig.suptitle(wrapped, fontsize=TITLE_PT)
    return (wrapped.count("\n") + 1) * TITLE_PT * 1.45 / 72


def _title_height(text: str, width: float, size: float = TITLE_PT) -> float:
    return (_wrap(text, width - 0.2, size).count("\n") + 1) * size * 1.45 / 72 + 0.1


def _panel_names(da: xr.DataArray, keep: Sequence[str]) -> tuple[xr.DataArray, list[str]]:
    """``da`` with every dim other than ``keep`` stacked into ``panel``, and the panel
    titles ("dimension value / design value")."""
    extra = [d for d in da.dims if d not in keep]
    stacked = da.stack(panel=extra) if extra else da.expand_dims(panel=[""])
    names = []
    for key in stacked["panel"].values:
        parts = key if isinstance(key, tuple) else (key,)
        names.append(" / ".join(plot_text(str(v)) for v in parts))
    return stacked, names


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
        At most the report's width (see the module's size rule); group names turn upright
        when they are wider than their group.

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
    stat_label = plot_text(statistic.replace("_", " "))
    prob = ds.attrs.get("ci_prob")
    note = f" ({plot_text(f'bars: {100 * float(prob):.0f}% {interval} intervals')})" if prob else ""
    legend_w = text_width(hues) + 0.6
    left = 0.75
    slot = max(0.28 * len(hues) + 0.25, text_width(groups) + 0.15)
    max_w = max_figure_width()
    slot = min(slot, (max_w - left - legend_w) / max(len(groups), 1))
    width = min(max_w, left + legend_w + slot * len(groups))
    head = _title_height((title or stat_label) + note, width, LABEL_PT)
    height = 2.6 + head + _label_room(groups, slot)
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    ax.tick_params(labelsize=TICK_PT)
    bar_w = 0.8 / max(len(hues), 1)
    x = np.arange(len(groups))
    bars = []
    for k, name in enumerate(hues):
        e = est.values[k]
        err = np.vstack([e - lo.values[k], hi.values[k] - e])
        bar = ax.bar(
            x + (k - (len(hues) - 1) / 2) * bar_w,
            e,
            bar_w,
            yerr=np.nan_to_num(err),
            capsize=3,
            label=name,
        )
        bars.append(bar)
    _category_axis(ax, groups, slot)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_ylabel(stat_label, fontsize=LABEL_PT)
    ax.set_title(_wrap((title or stat_label) + note, width - 0.2, LABEL_PT), fontsize=LABEL_PT)
    _legend(ax, bars, hues, loc="upper left", bbox_to_anchor=(1, 1))
    return fig


def rank_heatmap(ds: xr.Dataset, *, title: str | None = None) -> Figure:
    """Heatmap of rank probabilities P(rank(system) = r), one panel per dimension (and
    design), the systems in one order in every panel.

    The order is that of the expected rank averaged over the panels (ties keep the
    result's order), so that a row is the same system across panels and only the first
    panel of a row names them. Panels wrap at most :data:`MAX_COLUMNS` to a row; with up
    to 6 systems each cell shows its probability.

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
    stacked, names = _panel_names(ds["rank_prob"], ("system", "rank"))
    exp_rank = ds["expected_rank"]
    pooled = exp_rank.mean([d for d in exp_rank.dims if d != "system"], skipna=True)
    order = np.argsort(pooled.sel(system=stacked["system"]).values, kind="stable")
    systems = [plot_text(str(s)) for s in stacked["system"].values[order]]
    n, n_sys = stacked.sizes["panel"], stacked.sizes["system"]
    left = text_width(systems) + 0.3
    avail = max_figure_width() - left - 0.75
    # as many panels a row as keep a cell at least 0.16 inch (a line of tick text)
    cols = max(
        [c for c in range(1, min(MAX_COLUMNS, n) + 1) if avail / c - 0.15 >= 0.16 * n_sys] or [1]
    )
    cols = _balanced(n, cols)
    cell = min(0.45, max(0.16, 2.6 / max(n_sys, 1)), (avail / cols - 0.15) / max(n_sys, 1))
    cell = max(cell, 0.16)
    annotate = cell >= 0.4
    panel_w = n_sys * cell + 0.15
    width = min(max_figure_width(), left + 0.75 + cols * panel_w)
    heading = title or "Rank probabilities"
    panel_h = n_sys * cell + 0.55 + _LINE + max(_title_height(s, panel_w, LABEL_PT) for s in names)
    height = math.ceil(n / cols) * panel_h + _title_height(heading, width)
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = _panels(fig, n, cols, sharey=True)
    step = max(1, math.ceil(0.26 / cell))
    ranks = [str(r) for r in stacked["rank"].values]
    image = None
    for k, ax in enumerate(axes):
        mat = stacked.isel(panel=k).transpose("system", "rank").values[order]
        image = ax.imshow(mat, vmin=0.0, vmax=1.0, cmap="Blues", aspect="auto")
        if k % cols == 0:
            _category_axis(ax, systems, cell, axis="y")
        ticks = np.arange(0, n_sys, step)
        ax.set_xticks(ticks, [ranks[i] for i in ticks], fontsize=TICK_PT)
        ax.set_xlabel("rank", fontsize=LABEL_PT)
        ax.set_title(_wrap(names[k], panel_w - 0.15, LABEL_PT), fontsize=LABEL_PT)
        if annotate:
            for i in range(n_sys):
                for j in range(n_sys):
                    ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center", fontsize=TICK_PT,
                            color="white" if mat[i, j] > 0.6 else "black")  # fmt: skip
    if image is not None:
        bar = fig.colorbar(image, ax=axes, shrink=min(1.0, 2.5 / height) if height > 2.5 else 1)
        bar.set_label("P(rank)", fontsize=LABEL_PT)
        bar.ax.tick_params(labelsize=TICK_PT)
    _suptitle(fig, heading, width)
    return fig


def scores_by_design(ds: xr.Dataset, *, title: str | None = None) -> Figure:
    """System scores with intervals by design, one panel per dimension (the "coarse vs
    fine" figure of the clinical-QA studies); panels wrap at most :data:`MAX_COLUMNS` to a
    row, the systems in the result's order in every panel.

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
    slot = max(0.2, 0.07 * len(designs) + 0.06)
    panel_w = len(systems) * slot + 0.65
    cols = _columns(len(dims), panel_w, 0.3)
    width = min(max_figure_width(), 0.3 + cols * panel_w)
    if 0.3 + panel_w > width:  # one panel wider than the page: narrower slots
        slot = (width - 0.3 - 0.65) / len(systems)
        panel_w = width - 0.3
    shown = [plot_text(str(g)) for g in designs]
    legend = shown if shown != [""] else []
    ncols, legend_h = _legend_rows(legend, width)
    prob = ds.attrs.get("ci_prob")
    note = f" ({100 * float(prob):.0f}% intervals)" if prob is not None else ""
    heading = (title or "System scores by design") + note
    panel_h = 2.3 + _label_room(systems, slot) + _TITLE_LINE
    height = math.ceil(len(dims) / cols) * panel_h + legend_h + _title_height(heading, width)
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = _panels(fig, len(dims), cols)
    x = np.arange(len(systems))
    bar_w = 0.7 / max(len(designs), 1)
    handles: list[Any] = []
    for j, (ax, dim) in enumerate(zip(axes, dims, strict=True)):
        handles = []
        for k, des in enumerate(designs):
            sel = {"dimension": dim, "design": des}
            m = ds["score_mean"].sel(sel).values
            lo = ds["score_low"].sel(sel).values
            hi = ds["score_high"].sel(sel).values
            xs = x + (k - (len(designs) - 1) / 2) * bar_w
            err = np.vstack([m - lo, hi - m])
            handles.append(ax.errorbar(xs, m, yerr=err, fmt="o", capsize=3))
        _category_axis(ax, systems, slot)
        ax.set_title(_wrap(plot_text(str(dim)), panel_w - 0.65, LABEL_PT), fontsize=LABEL_PT)
        if j % cols == 0:
            ax.set_ylabel("score", fontsize=LABEL_PT)
    if legend:
        _fig_legend(fig, handles, legend, ncols)
    _suptitle(fig, heading, width)
    return fig


def rater_forest(
    ds: xr.Dataset,
    var: str = "competence",
    *,
    hue: str | None = "design",
    title: str | None = None,
) -> Figure:
    """Forest plot of a per-rater quantity with its interval (e.g. MACE competence), one
    panel per dimension, one marker per ``hue`` value (design), the raters in one order in
    every panel (by the mean over panels and hues, highest on top).

    Parameters
    ----------
    ds : xr.Dataset
        :func:`raterstats.rater_summary` output or alike: ``{var}_mean``, ``{var}_low`` and
        ``{var}_high`` with dim ``rater`` and others (``dimension``, ``design``).
    var : str
        The quantity (``competence``, ``accuracy``, ...).
    hue : str, optional
        Dim drawn as dodged markers within a panel (default ``design``; ignored when
        absent or of size 1); every other dim makes panels.
    title : str, optional
        Figure title.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> m = np.full((3, 2), 0.7)
    >>> ds = xr.Dataset({"competence_mean": (("rater", "dimension"), m),
    ...                  "competence_low": (("rater", "dimension"), m - 0.1),
    ...                  "competence_high": (("rater", "dimension"), m + 0.1)},
    ...                 coords={"rater": ["a", "b", "c"], "dimension": ["x", "y"]})
    >>> len(rater_forest(ds).axes)
    2
    """
    for suffix in ("mean", "low", "high"):
        if f"{var}_{suffix}" not in ds:
            raise ValueError(
                f"rater_forest: the Dataset has no {var}_{suffix}; expected {var}_mean, "
                f"{var}_low and {var}_high (as raterstats.rater_summary writes them)"
            )
    mean = ds[f"{var}_mean"]
    if "rater" not in mean.dims:
        raise ValueError(f"rater_forest: {var}_mean has no 'rater' dim; it has {mean.dims}")
    hue_dim = hue if hue in mean.dims and mean.sizes[hue] > 1 else None
    keep = ("rater",) + ((hue_dim,) if hue_dim else ())
    st_mean, names = _panel_names(mean, keep)
    st_low, _ = _panel_names(ds[f"{var}_low"], keep)
    st_high, _ = _panel_names(ds[f"{var}_high"], keep)
    pooled = mean.mean([d for d in mean.dims if d != "rater"], skipna=True)
    order = np.argsort(-pooled.sel(rater=st_mean["rater"]).fillna(-np.inf).values, kind="stable")
    raters = [plot_text(str(r)) for r in st_mean["rater"].values[order]]
    hues = [plot_text(str(h)) for h in st_mean[hue_dim].values] if hue_dim else []
    n, n_r = st_mean.sizes["panel"], len(raters)
    row = max(0.2, 0.09 * max(len(hues), 1))
    left = text_width(raters) + 0.25
    panel_w = 1.7
    cols = _columns(n, panel_w, left)
    width = min(max_figure_width(), left + cols * panel_w)
    ncols, legend_h = _legend_rows(hues, width)
    heading = title or plot_text(var.replace("_", " ")) + " by rater"
    panel_h = n_r * row + 0.45 + 2 * _LINE + _title_height(max(names, key=len), panel_w, LABEL_PT)
    height = math.ceil(n / cols) * panel_h + legend_h + _title_height(heading, width)
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = _panels(fig, n, cols, sharey=True, sharex=True)
    y = np.arange(n_r)
    dodge = 0.7 / max(len(hues), 1)
    handles: list[Any] = []
    for k, ax in enumerate(axes):
        handles = []
        for h in range(max(len(hues), 1)):
            sel = {"panel": k} | ({hue_dim: h} if hue_dim else {})
            m = st_mean.isel(sel).transpose("rater").values[order]
            lo = st_low.isel(sel).transpose("rater").values[order]
            hi = st_high.isel(sel).transpose("rater").values[order]
            ys = y + (h - (max(len(hues), 1) - 1) / 2) * dodge
            handles.append(
                ax.errorbar(m, ys, xerr=np.vstack([m - lo, hi - m]), fmt="o", markersize=3)
            )
        if k % cols == 0:
            _category_axis(ax, raters, row, axis="y")
        ax.set_ylim(n_r - 0.5, -0.5)
        _numeric_ticks(ax, "x", panel_w - 0.2)
        ax.set_xlabel(plot_text(var.replace("_", " ")), fontsize=LABEL_PT)
        ax.set_title(_wrap(names[k], panel_w - 0.1, LABEL_PT), fontsize=LABEL_PT)
        ax.grid(axis="x", linewidth=0.4, alpha=0.5)
    if hues:
        _fig_legend(fig, handles, hues, ncols)
    _suptitle(fig, heading, width)
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
    n = len(panels) + (projection is not None)
    panel_w = 2.4
    cols = _columns(n, panel_w, 0.1)
    width = min(max_figure_width(), 0.1 + cols * panel_w)
    dim_names = [plot_text(str(d)) for d in ds["dimension"].values]
    ncols, legend_h = _legend_rows(dim_names, width)
    prob = ds.attrs.get("ci_prob")
    note = f" (bands: {100 * float(prob):.0f}% over random subsets)" if prob is not None else ""
    heading = (title or "Partial annotation") + note
    panel_h = 2.4 + 2 * _LINE + 2 * _TITLE_LINE
    height = math.ceil(n / cols) * panel_h + legend_h + _title_height(heading, width)
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = _panels(fig, n, cols)
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
        ax.set_xlabel("sentences per answer (k)", fontsize=LABEL_PT)
        ax.set_title(_wrap(label, panel_w - 0.6, LABEL_PT), fontsize=LABEL_PT)
        _numeric_ticks(ax, "x", panel_w - 0.5)
    if projection is not None:
        ax = axes[-1]
        proj = projection
        for d in [d for d in proj.dims if d not in ("dimension", "k", "chain", "draw")]:
            proj = proj.isel({d: 0})
        mean = proj.mean(("chain", "draw")) if "chain" in proj.dims else proj
        for dim in mean["dimension"].values:
            ax.plot(mean["k"].values, mean.sel(dimension=dim).values, marker="s")
        ax.set_xlabel("sentences per answer (k)", fontsize=LABEL_PT)
        ax.set_title(
            _wrap("model-based reliability (1 rater)", panel_w - 0.6, LABEL_PT),
            fontsize=LABEL_PT,
        )
        _numeric_ticks(ax, "x", panel_w - 0.5)
    _fig_legend(fig, handles, labels, ncols)
    _suptitle(fig, heading, width)
    return fig


def budget_curve(
    budget: xr.Dataset, *, on: str = "reliability", title: str | None = None
) -> Figure:
    """Projected reliability or ranking certainty against annotation cost (rater hours),
    one panel per dimension (at most :data:`MAX_COLUMNS` a row), one line per design (and
    sentences per answer ``k`` for sentence-level designs) over the number of raters per
    answer.

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
    lines: list[tuple[Any, Any, str]] = []
    for des in budget["design"].values:
        ks = budget["k"].values if has_sent.get(str(des), False) else budget["k"].values[:1]
        for k in ks:
            name = plot_text(str(des))
            lines.append((des, k, f"{name}, k={k}" if has_sent.get(str(des), False) else name))
    label = {
        "p_recovered": "P(true ranking recovered)",
        "expected_tau": "expected Kendall tau with the true ranking",
    }.get(on, plot_text(on.replace("_", " ")))
    panel_w = 2.4
    cols = _columns(len(dims), panel_w, 0.3)
    width = min(max_figure_width(), 0.3 + cols * panel_w)
    ncols, legend_h = _legend_rows([t for _, _, t in lines], width)
    heading = title or f"Projected {label} against cost"
    ylabel = _wrap(label, 2.2, LABEL_PT)
    panel_h = max(2.4, text_width(ylabel.split("\n"), LABEL_PT) + 0.6) + 2 * _LINE + _TITLE_LINE
    height = math.ceil(len(dims) / cols) * panel_h + legend_h + _title_height(heading, width)
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = _panels(fig, len(dims), cols)
    handles: list[Any] = []
    for j, (ax, dim) in enumerate(zip(axes, dims, strict=True)):
        handles = []
        for des, k, _ in lines:
            cost = budget["cost_hours"].sel(design=des, k=k).values
            val = budget[on].sel(dimension=dim, design=des, k=k).values
            handles += ax.plot(cost, val, marker="o", markersize=3)
        ax.set_xlabel("rater hours", fontsize=LABEL_PT)
        ax.set_title(_wrap(plot_text(str(dim)), panel_w - 0.6, LABEL_PT), fontsize=LABEL_PT)
        _numeric_ticks(ax, "x", panel_w - 0.5)
        if j % cols == 0:
            ax.set_ylabel(ylabel, fontsize=LABEL_PT)
    _fig_legend(fig, handles, [t for _, _, t in lines], ncols)
    _suptitle(fig, heading, width)
    return fig


__all__ = [
    "LABEL_PT",
    "MAX_COLUMNS",
    "PNG_KEYS",
    "TICK_PT",
    "TITLE_PT",
    "agreement_bars",
    "budget_curve",
    "effective_text_pt",
    "max_figure_width",
    "min_font_size",
    "partial_annotation_curves",
    "rank_heatmap",
    "rater_forest",
    "save_figure",
    "scores_by_design",
    "text_width",
]
