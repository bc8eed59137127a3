"""Agreement between raters on comparative judgments (pairwise preferences and rankings).

A *unit* is one question and one unordered pair of systems (without a question column:
the unordered pair); every rater who compared the two systems on that question gives it
one outcome, oriented to the sorted pair (``{x, y}`` with ``x < y``: ``+1`` when ``x`` was
preferred, ``-1`` when ``y`` was, ``0`` a tie; graded outcomes ``-K..K`` keep their grade,
sign flipped when the judgment listed ``y`` first). Rankings are broken into pairs with
:meth:`~raterstats.comparisons.Comparisons.to_pairs`. The units x raters table then goes
through the statistics of :mod:`raterstats.agreement` (their registered kernels and the
same percentile bootstrap), so each number here is the one those functions give on that
table.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.agreement import kernels as K
from raterstats.agreement.data import (
    AgreementUsageError,
    Coded,
    DegenerateAgreementWarning,
    NotApplicableWarning,
    encode_matrix,
)
from raterstats.agreement.estimator import REGISTRY, evaluate
from raterstats.agreement.table import bootstrap_replicates
from raterstats.checks import count_problems
from raterstats.comparisons import OUTCOME, SYSTEM_A, SYSTEM_B, Comparisons
from raterstats.defaults import AGREEMENT_CONFIDENCE
from raterstats.formatting import visible
from raterstats.intervals import eti_np

#: statistic -> (registered agreement statistic, its options, the outcomes it reads)
_SPECS: dict[str, tuple[str, dict[str, Any], str]] = {
    "percent_agreement": ("percent_agreement", {}, "sign"),
    "side_agreement": ("percent_agreement", {}, "side"),
    "fleiss_kappa": ("fleiss_kappa", {}, "sign"),
    "randolph_kappa": ("randolph_kappa", {}, "sign"),
    "krippendorff_alpha_ordinal": ("krippendorff_alpha", {"level": "ordinal"}, "graded"),
    "krippendorff_alpha_ordinal_sign": ("krippendorff_alpha", {"level": "ordinal"}, "sign"),
    "krippendorff_alpha_interval_sign": ("krippendorff_alpha", {"level": "interval"}, "sign"),
}
#: the statistics :func:`comparison_agreement` computes (all of them unless told)
COMPARISON_AGREEMENT_STATISTICS: tuple[str, ...] = tuple(_SPECS)

_INTS = ("n_units", "n_boot_valid")


def _unit_table(part: pl.DataFrame, raters: list[str]) -> tuple[np.ndarray, int, int, int, int]:
    """``(units x raters oriented outcomes, NaN = not judged)`` of the units judged by two
    or more raters, plus the counts of units judged by one rater, of later judgments of a
    unit by the same rater (left out), of all units and of raters with a kept judgment."""
    lo = pl.min_horizontal(SYSTEM_A, SYSTEM_B)
    d = part.with_columns(
        pl.col(S.QUESTION).is_null().alias("__noq"),
        pl.col(S.QUESTION).fill_null("").alias("__q"),
        lo.alias("__lo"),
        pl.max_horizontal(SYSTEM_A, SYSTEM_B).alias("__hi"),
        pl.when(pl.col(SYSTEM_A) == lo)
        .then(pl.col(OUTCOME))
        .otherwise(-pl.col(OUTCOME))
        .cast(pl.Float64)
        .alias("__o"),
    )
    keys = ["__noq", "__q", "__lo", "__hi"]
    units = d.select(keys).unique().sort(keys).with_row_index("__unit")
    d = d.join(units, on=keys, how="left").sort(S.ROW, maintain_order=True)
    first = d.unique(subset=["__unit", S.RATER], keep="first", maintain_order=True)
    n_repeats = d.height - first.height
    per = first.group_by("__unit").agg(pl.len().alias("n"))
    shared = per.filter(pl.col("n") >= 2)["__unit"].sort().to_list()
    n_single = per.height - len(shared)
    at = {u: k for k, u in enumerate(shared)}
    col = {r: k for k, r in enumerate(raters)}
    kept = first.filter(pl.col("__unit").is_in(shared))
    mat = np.full((len(shared), len(raters)), np.nan)
    rows = [at[u] for u in kept["__unit"].to_list()]
    cols = [col[r] for r in kept[S.RATER].to_list()]
    mat[rows, cols] = kept["__o"].to_numpy()
    return mat, n_single, n_repeats, units.height, kept[S.RATER].n_unique()


def _codings(mat: np.ndarray, max_grade: int, ties: bool) -> dict[str, Coded]:
    """The three readings of the table: a / b / tie (``sign``), a / b with ties left out
    (``side``) and the graded outcomes (``graded``, only on a graded scale)."""
    sign = np.sign(mat)
    out = {
        "sign": encode_matrix(sign, categories=[-1, 0, 1] if ties else [-1, 1]),
        "side": encode_matrix(np.where(sign == 0, np.nan, sign), categories=[-1, 1]),
    }
    if max_grade > 1:
        out["graded"] = encode_matrix(mat, categories=list(range(-max_grade, max_grade + 1)))
    return out


def _check(statistics: Sequence[str], ci_prob: float, n_boot: int, ties: bool | None) -> list[str]:
    problems = [
        f"unknown statistic {s!r}; known: {list(COMPARISON_AGREEMENT_STATISTICS)}"
        for s in statistics
        if s not in _SPECS
    ]
    if len(set(statistics)) != len(statistics) or not statistics:
        problems.append("statistics must be distinct, and at least one")
    if not (isinstance(ci_prob, int | float) and 0.0 < float(ci_prob) < 1.0):
        problems.append(f"ci_prob must lie in (0, 1), not {ci_prob!r}")
    if ties not in (None, True, False):
        problems.append(f"ties must be True, False or None, not {ties!r}")
    return problems + count_problems(n_boot=(n_boot, 0))


def comparison_agreement(
    comparisons: Comparisons,
    *,
    statistics: Sequence[str] = COMPARISON_AGREEMENT_STATISTICS,
    ties: bool | None = None,
    ci_prob: float | None = None,
    n_boot: int = 1000,
    random_seed: int = 0,
) -> xr.Dataset:
    """Agreement between raters on comparative judgments, per dimension, with bootstrap
    intervals.

    Units are (question, unordered system pair); outcomes are oriented to the sorted pair
    (see the module docstring). A unit judged by one rater only carries no agreement and
    is left out (``n_units_single`` counts them); when a rater judged a unit more than
    once (e.g. with the order of the answers swapped) the first judgment in the file is
    used and the later ones are counted in ``n_repeats``.

    Parameters
    ----------
    comparisons : Comparisons
        Pairs or rankings (rankings become pairs with ``to_pairs()``).
    statistics : sequence of str
        Any of :data:`COMPARISON_AGREEMENT_STATISTICS`:

        - ``percent_agreement``: the outcome's side as three categories (a, b, tie); per
          unit the share of pairs of raters that agree, averaged over the units (as
          :func:`~raterstats.agreement.percent_agreement`);
        - ``side_agreement``: the same with tied judgments left out: do raters who chose a
          side choose the same one (units with two or more judgments that are not ties);
        - ``fleiss_kappa``, ``randolph_kappa``: chance-corrected agreement on a / b / tie
          (Randolph's chance agreement is ``1 / q`` with ``q = 3`` categories when ties
          were possible, else 2, see ``ties``);
        - ``krippendorff_alpha_ordinal``: Krippendorff's alpha, ordinal metric, on the
          graded outcomes ``-K..K`` (NaN with a reason on an a / b / tie scale);
        - ``krippendorff_alpha_ordinal_sign``, ``krippendorff_alpha_interval_sign``:
          alpha on the sign ``-1 / 0 / 1`` (ordinal and interval metric).
    ties : bool, optional
        Whether the raters could answer "tie"; ``None``: yes when some judgment is a tie.
    ci_prob : float, optional
        Coverage of the percentile intervals (default 0.95,
        :data:`raterstats.defaults.AGREEMENT_CONFIDENCE`).
    n_boot : int
        Bootstrap replicates (0: no intervals); units are resampled with replacement, the
        same resamples for every statistic of a dimension.
    random_seed : int
        Seed of the bootstrap.

    Returns
    -------
    xr.Dataset
        Dims ``dimension`` and ``statistic``: ``estimate``, ``ci_low``, ``ci_high``,
        ``n_units`` (units entering the statistic), ``n_boot_valid`` and ``reason`` (why
        an estimate is NaN; empty when it is not); per dimension ``n_judgments``,
        ``n_units_total``, ``n_units_single``, ``n_repeats``, ``n_raters`` (raters with a
        judgment that counts); per statistic ``outcomes`` (what it reads). ``attrs``:
        ``unit``, ``orientation``, ``categories``, ``interval``, ``ci_prob``, ``n_boot``,
        ``random_seed``, ``single_rater_units``, ``repeats``, ``not_applicable`` and
        ``undefined`` (every NaN with its reason), and for rankings
        ``pairs_from_rankings``.

    Warns
    -----
    NotApplicableWarning
        A dimension where no unit was judged by two raters (every statistic is NaN).
    DegenerateAgreementWarning
        Estimates undefined on the data (e.g. every judgment on the same side).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_comparisons
    >>> c = read_comparisons(pl.DataFrame({
    ...     "question": ["q1", "q1", "q2", "q2", "q3", "q3"],
    ...     "system_a": ["x", "y", "x", "x", "x", "y"], "system_b": ["y", "x", "y", "y", "y", "x"],
    ...     "rater": ["r1", "r2"] * 3, "outcome": ["a", "b", "a", "tie", "b", "a"]}))
    >>> ds = comparison_agreement(c, n_boot=0)
    >>> float(ds["estimate"].sel(dimension="default", statistic="percent_agreement"))
    0.6666666666666666
    """
    ci_prob = AGREEMENT_CONFIDENCE if ci_prob is None else ci_prob
    problems = _check(list(statistics), ci_prob, n_boot, ties)
    if not isinstance(comparisons, Comparisons):
        problems.append(f"expected a Comparisons table, got {type(comparisons)!r}")
    if problems:
        raise AgreementUsageError([f"comparison_agreement: {p}" for p in problems])
    pairs = comparisons.to_pairs().data
    if ties is None:
        ties = bool((pairs[OUTCOME] == 0).any())
    elif not ties and bool((pairs[OUTCOME] == 0).any()):
        raise AgreementUsageError(
            ["comparison_agreement: ties=False, but some judgments are ties (outcome 0)"]
        )
    stats, dims = list(statistics), list(comparisons.dimensions)
    shape = (len(dims), len(stats))
    est = {v: np.full(shape, np.nan) for v in ("estimate", "ci_low", "ci_high")}
    ints = {v: np.zeros(shape, dtype=np.int64) for v in _INTS}
    reason = np.full(shape, "", dtype=object)
    per_dim = {
        v: np.zeros(len(dims), dtype=np.int64)
        for v in ("n_judgments", "n_units_total", "n_units_single", "n_repeats", "n_raters")
    }
    undefined, inapplicable = [], []
    seeds = np.random.SeedSequence(random_seed).spawn(max(len(dims), 1))
    raters = list(comparisons.raters)
    grade = comparisons.max_grade if comparisons.kind == "pairs" else 1
    for i, dim in enumerate(dims):
        part = pairs.filter(pl.col(S.DIMENSION) == dim)
        mat, single, repeats, total, n_raters = _unit_table(part, raters)
        per_dim["n_judgments"][i] = part.height
        per_dim["n_units_total"][i] = total
        per_dim["n_units_single"][i] = single
        per_dim["n_repeats"][i] = repeats
        per_dim["n_raters"][i] = n_raters
        where = visible(dim)
        if mat.shape[0] == 0:
            why = "every unit (question x system pair) was judged by one rater only"
            reason[i, :] = why
            inapplicable.append(f"{where}: {why}")
            continue
        coded = _codings(mat, grade, ties)
        n = mat.shape[0]
        rng = np.random.default_rng(seeds[i])
        chunk = max(1, min(n_boot, 2_000_000 // n))
        resamples = K.resample_counts(rng, n, n_boot, chunk) if n_boot else []
        for s, stat in enumerate(stats):
            name, opts, reads = _SPECS[stat]
            if reads not in coded:
                reason[i, s] = (
                    "the outcomes are a / b / tie, not graded (-K..K with K > 1); see "
                    "krippendorff_alpha_ordinal_sign"
                )
                continue
            c = coded[reads]
            ints["n_units"][i, s] = int((c.ratings_per_unit() >= 2).sum())
            prepared = REGISTRY[name].prepare(c, **opts)
            value, mask = evaluate(prepared, c)
            est["estimate"][i, s] = value
            if np.isnan(value):
                if c.n_active_raters() < 2:
                    mask |= K.REASON_ONE_RATER
                reason[i, s] = K.explain(mask or K.REASON_NO_PAIRS)
                undefined.append(f"{stat} [{where}]: {reason[i, s]}")
                continue
            if resamples:
                reps = bootstrap_replicates(prepared, c, resamples)
                ok = ~np.isnan(reps)
                ints["n_boot_valid"][i, s] = int(ok.sum())
                if ok.any():
                    low, high = eti_np(reps[ok], float(ci_prob))
                    est["ci_low"][i, s], est["ci_high"][i, s] = float(low), float(high)
    if inapplicable:
        warnings.warn(
            "comparison_agreement: no agreement to measure (NaN, the reason in `reason`):\n  "
            + "\n  ".join(inapplicable),
            NotApplicableWarning,
            stacklevel=2,
        )
    if undefined:
        warnings.warn(
            "comparison_agreement: undefined (NaN) estimates:\n  " + "\n  ".join(undefined),
            DegenerateAgreementWarning,
            stacklevel=2,
        )
    both = (S.DIMENSION, "statistic")
    has_q = bool(pairs[S.QUESTION].is_not_null().any())
    attrs = {
        "unit": (
            "question x unordered system pair"
            if has_q
            else "unordered system pair (the data have no question column)"
        ),
        "orientation": "outcomes from the side of the alphabetically first system of the pair",
        "categories": "a / b / tie (3 categories)" if ties else "a / b (no ties possible)",
        "interval": ("percentile, bootstrap of the units" if n_boot else "none (n_boot = 0)"),
        "ci_prob": float(ci_prob),
        "n_boot": int(n_boot),
        "random_seed": str(random_seed),
        "single_rater_units": _count_note(
            dims, per_dim["n_units_single"], "units judged by one rater only, left out"
        ),
        "repeats": _count_note(
            dims,
            per_dim["n_repeats"],
            "later judgments of a unit by the same rater, left out (the first counts)",
        ),
        "not_applicable": "\n".join(
            [*inapplicable, *(f"{s}: {r}" for s, r in _structural(reason, stats))]
        ),
        "undefined": "\n".join(undefined),
    }
    if comparisons.kind == "rankings":
        attrs["pairs_from_rankings"] = (
            "rankings broken into pairs with Comparisons.to_pairs(): each ranking gives one "
            "outcome for every pair of systems it ranks"
        )
    data_vars: dict[str, Any] = {v: (both, a) for v, a in {**est, **ints}.items()}
    data_vars["reason"] = (both, reason.astype(str))
    data_vars.update({v: (S.DIMENSION, a) for v, a in per_dim.items()})
    read = {"sign": "a / b / tie", "side": "a / b, ties left out", "graded": "graded -K..K"}
    data_vars["outcomes"] = ("statistic", [read[_SPECS[s][2]] for s in stats])
    return xr.Dataset(data_vars, coords={S.DIMENSION: dims, "statistic": stats}, attrs=attrs)


def _count_note(dims: list[str], counts: np.ndarray, what: str) -> str:
    """``"what: dim n, ..."`` for the dimensions with a count, or ""."""
    hits = [f"{visible(d)} {int(c)}" for d, c in zip(dims, counts, strict=True) if c]
    return f"{what}: {', '.join(hits)}" if hits else ""


def _structural(reason: np.ndarray, stats: list[str]) -> list[tuple[str, str]]:
    """The statistics that do not apply to the scale (graded alpha on a / b / tie)."""
    out = []
    for s, stat in enumerate(stats):
        texts = {str(r) for r in reason[:, s] if "not graded" in str(r)}
        out += [(stat, t) for t in sorted(texts)]
    return out


__all__ = ["COMPARISON_AGREEMENT_STATISTICS", "comparison_agreement"]
