"""The categorical half of the design section: the latent-class rater model fitted to the
analysis's rating schemes as designs (:func:`raterstats.design.combine_schemes`: a
3-point coarse scheme beside a binary fine one in one fit), its comparison of the designs
by rater-vs-truth kappa and posterior predictive agreement
(:func:`raterstats.design.compare_designs`), and where that comparison agrees with the
ordinal model's."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import polars as pl
import xarray as xr

from raterstats.analyze.context import Context, Fit, SectionSkipped
from raterstats.analyze.data import readings
from raterstats.analyze.fits import fit, how_fitted
from raterstats.analyze.health import POINT_METHODS, banners, health_lines, ppc_lines
from raterstats.analyze.tables import format_interval
from raterstats.formatting import escape_markdown, markdown_table
from raterstats.scales import CategoricalScale

#: posterior predictive replicates of the categorical design comparison
N_REPLICATES = 100
#: a posterior probability at least this (or at most one minus it) is a clear preference
DECISIVE = 0.9
#: simulated studies per point of the categorical annotation budget
N_BUDGET_SIMS = 200
#: the kappa of the model's label against the true label that each design is to reach with
#: the fewest raters (a chance-corrected target: label sets of any size, units of any kind)
LABEL_KAPPA_TARGET = 0.8
#: the probability of the true system ranking the cheapest design overall is to reach
RANKING_TARGET = 0.9


#: Threads of the annotation-budget simulations of a report (at most the machine's cores):
#: each simulated study is vectorised NumPy, which releases the GIL, and every task draws
#: from its own seed, so threads give the numbers of one worker; processes would each
#: import the package first (about 2 s), longer than the built-in study's projections take.
BUDGET_THREADS = 2


@contextmanager
def budget_executor() -> Iterator[ThreadPoolExecutor]:
    """A thread pool of :data:`BUDGET_THREADS` workers for ``annotation_budget``'s tasks,
    shut down on exit.

    Examples
    --------
    >>> with budget_executor() as pool:
    ...     list(pool.map(abs, [-1, 2]))
    [1, 2]
    """
    workers = max(1, min(BUDGET_THREADS, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="raterstats-budget") as pool:
        yield pool


def design_origin(ctx: Context, designs: list[str]) -> dict[str, str]:
    """The design of the ratings each design of the categorical comparison comes from: a
    scheme's own ``design`` (:class:`~raterstats.analyze.Scheme`), the design itself when
    the comparison is of the designs as rated; schemes over several designs are left out.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from raterstats.analyze import Scheme
    >>> ctx = SimpleNamespace(options=SimpleNamespace(schemes=(
    ...     Scheme("fine binary", design="fine"), Scheme("all", design=None))))
    >>> design_origin(ctx, ["fine binary", "all", "coarse"])
    {'fine binary': 'fine', 'coarse': 'coarse'}
    """
    by_scheme = {s.name: s.design for s in ctx.options.schemes}
    out = {}
    for g in designs:
        origin = by_scheme.get(g, g) if g in by_scheme else g
        if origin is not None:
            out[g] = origin
    return out


def _categorical_schemes(ctx: Context) -> dict[str, Any]:
    """The schemes whose every dimension is on a categorical scale."""
    parts = {k: v for k, v in readings(ctx).items() if k in ctx.schemes}
    return {
        name: r
        for name, r in parts.items()
        if all(isinstance(s, CategoricalScale) for s in r.scales.values())
    }


#: how the design comparison's fit was made when it is the categorical section's own fit
AS_RATED = "the designs as rated"


def categorical_design_fit(ctx: Context) -> tuple[Fit | None, str]:
    """The latent-class fit that compares the designs, and how its designs were made (or
    None and why there is none): with two or more categorical rating schemes, the first
    planned categorical model fitted to the schemes as designs (one fit, label sets may
    differ); otherwise the categorical section's fit when it has several designs."""
    from raterstats.design import combine_schemes

    if "categorical" not in ctx.models:
        return None, ctx.not_planned.get("categorical", "no categorical model was planned")
    cls = ctx.models["categorical"][0]
    parts = _categorical_schemes(ctx)
    if len(parts) >= 2:
        names = ", ".join(parts)
        try:
            done = fit(ctx, cls, combine_schemes(parts), f"{cls.__name__} (schemes: {names})")
        except SectionSkipped as err:
            return None, str(err)
        return done, f"the rating schemes {names}, each a design of one fit"
    for f in ctx.fits_of("categorical"):
        if f.dt["posterior"].sizes.get("design", 1) > 1:
            return f, AS_RATED
    return None, "the categorical fit has one design and fewer than two categorical schemes"


def verdict(p: float, a: str, b: str) -> str | None:
    """``a`` when ``P(a more reliable than b) = p`` is a clear preference, ``b`` when its
    complement is, else None.

    Examples
    --------
    >>> verdict(0.95, "fine", "coarse"), verdict(0.5, "fine", "coarse")
    ('fine', None)
    """
    if p != p:  # NaN
        return None
    if p >= DECISIVE:
        return a
    if p <= 1 - DECISIVE:
        return b
    return None


def agreement_with_ordinal(
    ordinal: xr.Dataset, categorical: xr.Dataset, origin: dict[str, str]
) -> list[str]:
    """Markdown bullets: for each dimension and each pair of categorical designs from
    different rated designs, whether the ordinal and the categorical comparisons prefer
    the same rated design (:data:`DECISIVE`), differ, or either has no clear preference.

    Examples
    --------
    >>> import numpy as np
    >>> def cmp(designs, p):
    ...     return xr.Dataset({"p_more_reliable": (("dimension", "design", "design_b"),
    ...         [[[np.nan, p], [1 - p, np.nan]]])},
    ...         coords={"dimension": ["safety"], "design": designs, "design_b": designs})
    >>> lines = agreement_with_ordinal(cmp(["coarse", "fine"], 0.05),
    ...     cmp(["coarse 3-point", "fine binary"], 0.97),
    ...     {"coarse 3-point": "coarse", "fine binary": "fine"})
    >>> lines[0][:58]
    '- safety, coarse 3-point vs fine binary: the comparisons d'
    """
    o_designs = [str(g) for g in ordinal["design"].values]
    c_designs = [str(g) for g in categorical["design"].values]
    o_dims = {str(d) for d in ordinal["dimension"].values}
    lines = []
    for dim in [str(d) for d in categorical["dimension"].values]:
        if dim not in o_dims:
            continue
        for a, b in itertools.combinations(c_designs, 2):
            oa, ob = origin.get(a), origin.get(b)
            if oa is None or ob is None or oa == ob or oa not in o_designs or ob not in o_designs:
                continue
            p_c = float(categorical["p_more_reliable"].sel(dimension=dim, design=a, design_b=b))
            p_o = float(ordinal["p_more_reliable"].sel(dimension=dim, design=oa, design_b=ob))
            if p_c != p_c:
                continue
            v_c, v_o = verdict(p_c, a, b), verdict(p_o, oa, ob)
            probs = (
                f"ordinal P({oa} more reliable than {ob}) = {p_o:.2f}; categorical "
                f"P({a} more reliable than {b}) = {p_c:.2f}"
            )
            if v_c is not None and v_o is not None:
                same = origin[v_c] == v_o
                words = (
                    f"the comparisons agree: both favour the {v_o} design"
                    if same
                    else f"the comparisons differ: the ordinal model favours {v_o}, the "
                    f"categorical model {v_c}"
                )
            else:
                unclear = [n for n, v in (("ordinal", v_o), ("categorical", v_c)) if v is None]
                words = (
                    f"no clear preference from the {' and the '.join(unclear)} comparison "
                    f"(neither P reaches {DECISIVE:g} either way), so no verdict"
                )
            lines.append(f"- {escape_markdown(f'{dim}, {a} vs {b}: {words} ({probs}).')}")
    return lines


def reliability_figure(ctx: Context, cmp: xr.Dataset, name: str, title: str) -> None:
    """Write the bar chart of a :func:`raterstats.design.compare_designs` result's
    ``reliability`` (posterior mean and interval per dimension and design) as ``name``."""
    from raterstats.plots import agreement_bars

    bars = xr.Dataset(
        {
            "estimate": cmp["reliability"],
            "ci_low": cmp["reliability_low"],
            "ci_high": cmp["reliability_high"],
        },
        attrs={"ci_prob": cmp.attrs["ci_prob"]},
    ).expand_dims(statistic=["reliability"])
    ctx.folder.figure(
        agreement_bars(bars, "reliability", hue="design", interval="posterior", title=title),
        name,
    )


def categorical_design_lines(ctx: Context, ordinal: xr.Dataset | None) -> list[str]:
    """The report lines of the categorical design comparison (with ``ordinal``, the
    ordinal comparison of :func:`raterstats.design.compare_designs`, where the two agree or
    differ), and its files ``design_comparison_categorical.csv`` and
    ``reliability_by_design_categorical.png``."""
    from raterstats.design import compare_designs, design_table

    done, how = categorical_design_fit(ctx)
    head = ["### Designs compared by the categorical model", ""]
    if done is None:
        return [*head, f"No categorical comparison of the designs: {escape_markdown(how)}.", ""]
    dt = done.dt
    point = str(dt.attrs.get("method", "nuts")) in POINT_METHODS
    cmp = compare_designs(
        dt, n_replicates=0 if point else N_REPLICATES, ci_prob=ctx.ci_prob, random_seed=ctx.seed
    )
    tab = design_table(cmp)
    ctx.folder.csv(tab, "design_comparison_categorical.csv")
    reliability_figure(
        ctx,
        cmp,
        "reliability_by_design_categorical.png",
        "Rater kappa vs the true label",
    )

    def cell(stem: str, name: str) -> pl.Expr:
        return format_interval(
            2, mean=stem, low=f"{stem}_low", high=f"{stem}_high", point=point
        ).alias(name)

    columns = [
        pl.col("n_categories").cast(pl.Int64).alias("categories"),
        cell("reliability", "rater kappa vs truth"),
        cell("accuracy", "rater accuracy"),
    ]
    if not point:
        columns += [
            format_interval(2, mean="kappa_mean", low="kappa_low", high="kappa_high").alias(
                "predicted kappa"
            ),
            pl.col("kappa_observed").round(2).alias("observed kappa"),
        ]
    show = tab.filter(pl.col("n_categories") > 0).select("dimension", "design", *columns)
    designs = [str(g) for g in cmp["design"].values]
    p_rows = []
    for dim in cmp["dimension"].values:
        row: dict[str, Any] = {"dimension": str(dim)}
        for a, b in itertools.combinations(designs, 2):
            p = float(cmp["p_more_reliable"].sel(dimension=dim, design=a, design_b=b))
            row[f"P({a} > {b})"] = None if p != p else round(p, 3)
        p_rows.append(row)
    lines = [
        *head,
        f"{escape_markdown(done.label)}, fitted to {escape_markdown(how)} by {how_fitted(dt)}. "
        "Each design's raters are compared by the model-implied Cohen's kappa of a rater's "
        "label against the true label (chance-corrected, so designs with different numbers "
        "of categories are comparable), with the expected share of correct labels beside it"
        + (
            f"; {100 * float(cmp.attrs['ci_prob']):g}% intervals, and Randolph's kappa "
            f"predicted from {N_REPLICATES} replicated studies next to the observed one."
            if not point
            else " (point estimates: no posterior uncertainty, no posterior predictive check)."
        ),
        "",
        # a fit of its own (the schemes as designs) says its health here, as every model
        # section does; the categorical section's fit said it there
        *(health_lines(dt) if how != AS_RATED else []),
        *banners(cmp, dt),
        "![Rater kappa against the true label by design](reliability_by_design_categorical.png)",
        "",
        markdown_table(show),
        "",
        "P(the raters of one design are more reliable than those of another), by rater kappa:",
        "",
        markdown_table(pl.DataFrame(p_rows)),
        "",
    ]
    if not point:
        lines += [
            "Does the model reproduce the observed agreement of each design?",
            "",
            *ppc_lines(cmp, ci_prob=cmp.attrs.get("ci_prob")),
            "",
        ]
    lines += _budget_lines(ctx, done)
    if ordinal is None:
        lines += ["No ordinal comparison to set beside it (the ordinal model was not fitted).", ""]
    elif point or "p_more_reliable" not in ordinal:
        lines += [
            "The two comparisons are not set side by side: the categorical fit is a point "
            "estimate, whose probabilities are not posterior statements.",
            "",
        ]
    else:
        agree = agreement_with_ordinal(
            ordinal, cmp, design_origin(ctx, [str(g) for g in cmp["design"].values])
        )
        lines += [
            "#### Where the ordinal and the categorical comparisons agree",
            "",
            *(
                agree
                or [
                    "No pair of categorical designs comes from two designs the ordinal model "
                    "compares."
                ]
            ),
            "",
        ]
    return lines


def _budget_lines(ctx: Context, done: Fit) -> list[str]:
    """The categorical annotation budget (with durations and ``design_projections``): the
    whole projection in ``annotation_budget_categorical.csv``; per design, the fewest raters
    whose model label reaches :data:`LABEL_KAPPA_TARGET` against the true label (within a
    design: its units, answers or sentences, are not those of another design), and the
    cheapest design overall that recovers the true system ranking with probability
    :data:`RANKING_TARGET` (comparable across designs)."""
    from raterstats import schema as S
    from raterstats.design import annotation_budget, cheapest_design

    if not ctx.options.design_projections:
        return []
    if S.DURATION not in done.ratings.data.columns:
        return ["No categorical annotation budget: the data have no duration_s column.", ""]
    with budget_executor() as pool:
        budget = annotation_budget(
            done.dt, done.ratings, n_sims=N_BUDGET_SIMS, executor=pool, random_seed=ctx.seed
        )
    names = ["p_correct_majority", "p_correct_model", "reliability", "p_recovered"]
    frame = pl.from_pandas(budget[names].to_dataframe().reset_index()).join(
        pl.from_pandas(budget["cost_hours"].to_dataframe().reset_index()),
        on=["design", "n_raters", "k"],
    )
    ctx.folder.csv(frame, "annotation_budget_categorical.csv")
    per_design = pl.concat(
        [
            cheapest_design(budget.sel(design=[g]), target=LABEL_KAPPA_TARGET, on="reliability")
            for g in [str(x) for x in budget["design"].values]
        ]
    ).filter(pl.col("dimension") != "all dimensions")
    ranking = cheapest_design(budget, target=RANKING_TARGET, on="p_recovered")
    notes = [
        str(budget.attrs[k])
        for k in ("unit_note", "reliability_note", "ranking_note", "panel_note")
        if k in budget.attrs
    ]
    shown = pl.col("value", "cost_hours").round(3)
    return [
        "#### Annotation budget from the categorical model",
        "",
        f"From {budget.attrs['n_sims']} studies per design point simulated from the "
        "categorical fit (1-5 raters per unit and, for sentence-level designs, 1-6 "
        "sentences per answer), against the cost in rater hours (seconds per unit: "
        f"{escape_markdown(str(budget.attrs['seconds_per_unit']))}); every design point, with "
        "the probability that the majority vote or the model's label is right, is in "
        "`annotation_budget_categorical.csv`.",
        "",
        *banners(budget, done.dt),
        *[f"- {escape_markdown(n)}" for n in notes],
        *([""] if notes else []),
        f"Fewest raters per unit whose model label reaches a kappa of {LABEL_KAPPA_TARGET:g} "
        "against the true label, per design (a unit is an answer or a sentence, so this "
        "compares raters within a design, not designs; a dimension is missing where 5 raters "
        "do not reach it):",
        "",
        markdown_table(per_design.drop("criterion", "target").with_columns(shown))
        if per_design.height
        else "No design reaches it with 1-5 raters.",
        "",
        f"Cheapest design recovering the true system ranking with probability "
        f"{RANKING_TARGET:g} ('all dimensions': the worst dimension reaches it; a dimension "
        "is missing when no design reaches it):",
        "",
        markdown_table(ranking.drop("criterion", "target").with_columns(shown))
        if ranking.height
        else "No projected design reaches it.",
        "",
    ]


__all__ = [
    "DECISIVE",
    "LABEL_KAPPA_TARGET",
    "N_BUDGET_SIMS",
    "N_REPLICATES",
    "RANKING_TARGET",
    "agreement_with_ordinal",
    "categorical_design_fit",
    "categorical_design_lines",
    "design_origin",
    "reliability_figure",
    "verdict",
]
