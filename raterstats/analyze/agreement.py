"""The agreement section: classical agreement statistics per dimension x design (or per
scheme x dimension) with item-bootstrap intervals, the statistics chosen by each
dimension's scale (nominal statistics for every categorical scale; for ordinal scales also
their ordinal and interval versions; for interval scales Krippendorff's interval alpha and
the ICC; the intra-rater statistic only when there are repeats)."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.analyze.context import Context
from raterstats.analyze.data import AS_RATED, readings
from raterstats.analyze.tables import agreement_wide
from raterstats.formatting import escape_markdown, markdown_table
from raterstats.ratings import Ratings
from raterstats.scales import IntervalScale, OrdinalScale, Scale

#: statistics of every categorical scale
NOMINAL_STATISTICS: tuple[Any, ...] = (
    "percent_agreement",
    "fleiss_kappa",
    "randolph_kappa",
    "gwet_ac1",
    ("krippendorff_alpha", {"level": "nominal"}),
)
#: added for ordinal scales of three or more levels
ORDINAL_STATISTICS: tuple[Any, ...] = (
    ("krippendorff_alpha", {"level": "ordinal"}),
    ("krippendorff_alpha", {"level": "interval"}),
    "gwet_ac2",
)
#: statistics of interval scales
INTERVAL_STATISTICS: tuple[Any, ...] = (("krippendorff_alpha", {"level": "interval"}), "icc")
#: the statistic computed from repeated ratings
INTRA = "intra_rater_agreement"
#: statistics drawn in the figure, the first one present
HEADLINE = ("randolph_kappa", "krippendorff_alpha (level=interval)", "krippendorff_alpha")


def scale_kind(scale: Scale) -> str:
    """``"interval"``, ``"ordinal"`` (three or more ordered levels) or ``"nominal"``
    (unordered, or two levels), which decides the statistics.

    Examples
    --------
    >>> from raterstats import OrdinalScale
    >>> scale_kind(OrdinalScale.likert(5)), scale_kind(OrdinalScale([0, 1]))
    ('ordinal', 'nominal')
    """
    if isinstance(scale, IntervalScale):
        return "interval"
    if isinstance(scale, OrdinalScale) and scale.n_levels >= 3:
        return "ordinal"
    return "nominal"


def statistics_for(kind: str, *, repeats: bool) -> list[Any]:
    """The statistics for a scale kind (:func:`scale_kind`), with the intra-rater
    statistic when there are repeats.

    Examples
    --------
    >>> statistics_for("nominal", repeats=True)[-1]
    'intra_rater_agreement'
    """
    stats: list[Any] = (
        list(INTERVAL_STATISTICS)
        if kind == "interval"
        else list(NOMINAL_STATISTICS) + (list(ORDINAL_STATISTICS) if kind == "ordinal" else [])
    )
    return stats + ([INTRA] if repeats else [])


def _compute(
    views: dict[str, Ratings], stats: list[Any], ctx: Context, by: list[str]
) -> tuple[xr.Dataset | None, list[str]]:
    """agreement() of all ``stats``; when it refuses, each statistic alone, the refused
    ones named with their reason."""
    from raterstats.agreement import AgreementInputError, agreement

    src: Any = views if len(views) > 1 or AS_RATED not in views else views[AS_RATED]

    def run(chosen: list[Any]) -> xr.Dataset:
        return agreement(
            src,
            chosen,
            by=by,
            n_boot=ctx.options.n_boot,
            ci_prob=ctx.agreement_ci,
            random_seed=ctx.seed,
        )

    try:
        return run(stats), []
    except (AgreementInputError, ValueError, KeyError) as err:
        if len(stats) == 1:
            return None, [f"{_name(stats[0])}: {err}"]
    kept, refused = [], []
    for s in stats:
        try:
            run([s])
        except (AgreementInputError, ValueError, KeyError) as err:
            refused.append(f"{_name(s)}: {err}")
        else:
            kept.append(s)
    return (run(kept) if kept else None), refused


def _name(spec: Any) -> str:
    """The label the agreement table gives ``spec`` (``"krippendorff_alpha (level=interval)"``)."""
    from raterstats.agreement import AgreementInputError, parse_statistic

    try:
        return parse_statistic(spec).label
    except AgreementInputError:
        return str(spec)


def statistic_label(label: str) -> str:
    """A statistic's label as a reader writes it.

    Examples
    --------
    >>> statistic_label("krippendorff_alpha (level=ordinal)")
    "Krippendorff's alpha (ordinal)"
    >>> statistic_label("icc (form=ICC(3,k))")
    'ICC (ICC(3,k))'
    """
    name, _, opts = label.partition(" (")
    words = {"krippendorff": "Krippendorff's", "fleiss": "Fleiss'", "randolph": "Randolph's",
             "gwet": "Gwet's", "cohen": "Cohen's", "conger": "Conger's", "scott": "Scott's",
             "kendall": "Kendall's", "icc": "ICC", "ac1": "AC1", "ac2": "AC2"}  # fmt: skip
    text = " ".join(words.get(w, w) for w in name.split("_"))
    if opts:
        values = re.findall(r"(?:^|, ?)\w+=((?:[^,(]|\([^)]*\))+)", opts[:-1])
        text += " (" + ", ".join(values) + ")"
    return text


def _humans(r: Ratings, ctx: Context) -> Ratings:
    return r.filter(rater_kind="human") if ctx.humans_only else r


def _figure(table: pl.DataFrame, hue: str, ctx: Context) -> str | None:
    """A bar chart of the headline statistic (``agreement_<name>.png``); its file name."""
    from raterstats.plots import agreement_bars

    present = set(table["statistic"].to_list())
    stat = next((s for s in HEADLINE if s in present), None)
    if stat is None or hue not in table.columns:
        return None
    part = table.filter(pl.col("statistic") == stat).select(
        "statistic", "dimension", hue, "estimate", "ci_low", "ci_high"
    )
    ds = xr.Dataset.from_dataframe(part.to_pandas().set_index(["statistic", "dimension", hue]))
    ds.attrs["ci_prob"] = ctx.agreement_ci
    name = f"agreement_{stat.split('[')[0]}.png"
    label = statistic_label(stat)
    who = " among the human raters" if ctx.humans_only else ""
    title = f"{label}{who} by {'rating scheme' if hue == 'scheme' else hue}"
    ctx.folder.figure(agreement_bars(ds, stat, hue=hue, title=title), name)
    return f"![{label} by dimension and {hue}]({name})"


def agreement_section(ctx: Context) -> list[str]:
    """Agreement per dimension x design (per scheme x dimension when schemes are given),
    with item-bootstrap intervals: ``agreement.csv`` and a bar chart of the headline
    statistic."""
    from raterstats.agreement import agreement_table

    views = {k: _humans(v, ctx) for k, v in readings(ctx).items()}
    if ctx.options.schemes:
        views.pop(AS_RATED)
        by, hue = ["dimension"], "scheme"
    else:
        by, hue = ["dimension", "design"], "design"
    repeats = ctx.n_repeats > 0
    groups: list[tuple[dict[str, Ratings], list[Any]]] = []
    if ctx.options.statistics is not None:
        groups.append((views, list(ctx.options.statistics)))
    else:
        kinds: dict[str, dict[str, list[str]]] = {}
        for vname, r in views.items():
            for dim, scale in r.scales.items():
                kinds.setdefault(scale_kind(scale), {}).setdefault(vname, []).append(dim)
        for kind, dims_of in kinds.items():
            part = {v: views[v].filter(dimension=dims) for v, dims in dims_of.items()}
            groups.append((part, statistics_for(kind, repeats=repeats)))
    tables, refused = [], []
    for part, stats in groups:
        ds, bad = _compute(part, stats, ctx, by)
        refused += bad
        if ds is not None:
            ctx.agreement.append(ds)
            t = agreement_table(ds)
            if hue == "scheme" and "scheme" not in t.columns:
                t = t.with_columns(pl.lit(next(iter(part))).alias("scheme")).select(
                    "statistic", "scheme", *[c for c in t.columns if c != "statistic"]
                )
            tables.append(t)
    if not tables:
        return ["## Agreement", "", "No agreement statistic could be computed:", "",
                *[f"- {escape_markdown(r)}" for r in refused], ""]  # fmt: skip
    table = pl.concat(tables, how="diagonal_relaxed")
    ctx.folder.csv(table, "agreement.csv")
    figure = _figure(table, hue, ctx)
    a = ctx.agreement[0].attrs
    humans = ctx.humans_only
    wide = agreement_wide(table).rename(
        {s: statistic_label(s) for s in table["statistic"].unique().to_list()}
    )
    lines = [
        "## Agreement among the human raters" if humans else "## Agreement",
        "",
        f"Item-level (cluster) bootstrap, {ctx.options.n_boot} replicates, "
        f"{100 * float(a.get('ci_prob', ctx.agreement_ci)):.0f}% percentile intervals, seed "
        f"{ctx.seed}"
        + ("; sentence ratings resample whole items. " if ctx.ratings.has_segments else ". ")
        + (
            "Statistics chosen by each dimension's scale: nominal statistics for every "
            "categorical scale, their ordinal and interval versions for ordinal scales, "
            "Krippendorff's interval alpha and the ICC for interval scales. "
            if ctx.options.statistics is None
            else ""
        )
        + (
            "Intra-rater agreement is the share of repeated ratings equal to the first rating. "
            if repeats
            else ""
        )
        + ("Non-human raters (LLM judges) are left out here." if humans else ""),
        "",
    ]
    if figure:
        lines += [figure, ""]
    lines += [markdown_table(wide), ""]
    if refused:
        lines += ["Not computed (the statistic does not apply to these ratings):", ""]
        lines += [f"- {escape_markdown(r)}" for r in refused] + [""]
    return lines


def agreement_applies(ctx: Context) -> str | None:
    """Agreement needs a unit rated by two raters."""
    d = ctx.humans.data.filter(~pl.col(S.REPEAT))
    per = d.group_by(S.ITEM, S.SEGMENT, S.DIMENSION, S.DESIGN).agg(pl.col(S.RATER).n_unique())
    if per.height == 0 or int(per[S.RATER].max() or 0) < 2:  # type: ignore[arg-type]
        return (
            "no unit (item or sentence) is rated by two raters, so there is no agreement to measure"
        )
    return None


__all__ = [
    "INTERVAL_STATISTICS",
    "NOMINAL_STATISTICS",
    "ORDINAL_STATISTICS",
    "agreement_applies",
    "agreement_section",
    "scale_kind",
    "statistic_label",
    "statistics_for",
]
