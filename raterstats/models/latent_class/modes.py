"""Mode checks of a latent-class fit sampled from the EM estimate: chains that left the EM
mode, and chains whose log density sits far below the others.

A latent-class posterior has modes besides the permuted labellings (which
:func:`~raterstats.models.latent_class.summaries.label_switching` detects): a mode where a
class is almost never predicted (its items absorbed by another), or where a cluster of items
and their raters swap two labels. NUTS chains start at the EM estimate (``nuts_start``); a
chain that drifts into another mode during warm-up stays there, and when all chains drift
together R-hat does not see it. Two checks, per chain, for every
:class:`~raterstats.models.latent_class.base.LatentClassModel` (they read the fit alone):

* **agreement with the EM labels**: among the units whose EM label posterior gives their
  most probable label at least :data:`CONFIDENT_PROB`, the share that the chain labels
  otherwise. Within the EM mode a chain relabels such a unit only when its own draws of the
  parameters move the unit's posterior across a class boundary; the EM probability says
  how often that happens (at most ``1 - 0.9`` per unit). A chain is reported when more than
  :data:`EM_DISAGREE_MAX` of these units change, or a class the EM labels give to at least
  :data:`CLASS_MIN_UNITS` units loses more than half of them (a collapsed class).
* **log density**: a chain whose mean ``lp`` is below the mean of the best other chain by
  more than :data:`LP_GAP_Z` Monte Carlo standard errors of the difference (arviz-stats'
  ``mcse``) and by more than :data:`LP_GAP_MIN` (nats): a lesser mode.

The EM labels a fit is checked against are stored with it (group :data:`EM_GROUP`, the EM
start's label posterior per unit), so a reloaded fit is checked the same way; a fit without
the group (saved before it existed, or started elsewhere) gets them from an EM fit of its
own data. The thresholds are justified by measurements in the card of Dawid-Skene
(``models/dawid_skene/card.md``, "Mode checks").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import xarray as xr

from raterstats.lazy import LazyModule
from raterstats.models.latent_class.data import LatentClassData
from raterstats.models.latent_class.reference import logsumexp_np
from raterstats.models.latent_class.summaries import chain_label_prob, fit_data, switching_lines

if TYPE_CHECKING:
    import arviz_stats as azs

    from raterstats.models.latent_class.base import LatentClassModel
else:
    azs = LazyModule("arviz_stats")

#: group of a fit with the label posterior of the EM estimate its chains started from
EM_GROUP = "em_start"
#: units whose EM label probability is at least this are the ones a chain should keep
CONFIDENT_PROB = 0.9
#: a chain is reported when it relabels more than this share of those units ...
EM_DISAGREE_MAX = 0.10
#: ... or loses more than half the units of a class the EM labels give this many units
CLASS_MIN_UNITS = 10
#: a chain's mean lp below the best other chain's by more than this many Monte Carlo
#: standard errors of the difference ...
LP_GAP_Z = 5.0
#: ... and by more than this many nats is reported
LP_GAP_MIN = 2.0

_TABLE_SCHEMA = {
    "chain": pl.Int64,
    "dimension": pl.String,
    "em_units": pl.Int64,
    "em_disagree": pl.Float64,
    "lost_class": pl.String,
    "lp_gap": pl.Float64,
    "lp_gap_z": pl.Float64,
}


def em_start_group(
    model: LatentClassModel, data: LatentClassData, start: dict[str, np.ndarray]
) -> xr.Dataset:
    """The :data:`EM_GROUP` of a fit: the label posterior ``prob (unit, category)`` at the
    EM estimate ``start`` (constrained values by variable name, ``nuts_start``).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.models.latent_class import prepare_latent_class
    >>> from raterstats.simulate import hard_crowd
    >>> r = hard_crowd(n_items=40, n_raters=10, n_classes=3, random_seed=1).ratings
    >>> data = prepare_latent_class(r)
    >>> g = em_start_group(MACE(), data, MACE().nuts_start(data, 1))
    >>> g["prob"].dims, bool(np.allclose(g["prob"].sum("category"), 1.0))
    (('unit', 'category'), True)
    """
    params = {n: np.asarray(start[n], dtype=float)[None] for n in model.param_names}
    joint = model.pattern_log_joint(params, data)[0]
    with np.errstate(invalid="ignore"):
        prob = np.exp(joint - logsumexp_np(joint, axis=-1)[..., None])
    return xr.Dataset(
        {"prob": (("unit", "category"), np.nan_to_num(prob[data.unit_pattern]))},
        coords={"unit": np.arange(data.n_units), "category": np.arange(data.K)},
        attrs={"description": "label posterior at the EM estimate the chains started from"},
    )


def em_label_prob(model: LatentClassModel, dt: xr.DataTree, data: LatentClassData) -> np.ndarray:
    """``(n_units, K)`` the EM start's label posterior: stored (:data:`EM_GROUP`) or from an
    EM fit of the fit's own data (seed ``dt.attrs["random_seed"]``)."""
    if EM_GROUP in dt.children:
        return np.asarray(dt[EM_GROUP]["prob"].values)
    start = model.nuts_start(data, int(dt.attrs.get("random_seed", 0)))
    if start is None:
        raise ValueError(f"{model.name} has no EM estimate to check the chains against")
    return np.asarray(em_start_group(model, data, start)["prob"].values)


def chain_lp_gaps(dt: xr.DataTree) -> tuple[np.ndarray, np.ndarray]:
    """Per chain: how far its mean ``lp`` sits below the best other chain's (nats, positive
    = below), and that gap in Monte Carlo standard errors of the difference (arviz-stats'
    ``mcse`` of each chain's mean); NaN without ``sample_stats.lp`` or with one chain.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> lp = rng.normal(-100.0, 3.0, (3, 500))
    >>> lp[2] -= 20.0  # chain 2 in a lesser mode
    >>> post = xr.Dataset({"mu": (("chain", "draw"), np.zeros((3, 500)))})
    >>> stats = xr.Dataset({"lp": (("chain", "draw"), lp)})
    >>> dt = xr.DataTree(children={"posterior": xr.DataTree(post),
    ...                            "sample_stats": xr.DataTree(stats)})
    >>> gap, z = chain_lp_gaps(dt)
    >>> bool(gap[2] > 19 and z[2] > 50 and z[0] < 5)
    True
    """
    ss = dt["sample_stats"].to_dataset() if "sample_stats" in dt.children else xr.Dataset()
    n_chain = int(dt["posterior"].sizes["chain"])
    gap = np.full(n_chain, np.nan)
    z = np.full(n_chain, np.nan)
    if "lp" not in ss or n_chain < 2:
        return gap, z
    lp = np.asarray(ss["lp"].transpose("chain", "draw").values, dtype=float)
    if lp.shape[1] < 4 or not np.all(np.isfinite(lp)):
        return gap, z
    mean = lp.mean(axis=1)
    se = np.array([float(azs.mcse(lp[c][None, :], method="mean")) for c in range(n_chain)])
    for c in range(n_chain):
        others = [o for o in range(n_chain) if o != c]
        best = max(others, key=lambda o: mean[o])
        gap[c] = mean[best] - mean[c]
        z[c] = gap[c] / max(float(np.hypot(se[c], se[best])), 1e-12)
    return gap, z


def mode_table(
    model: LatentClassModel, dt: xr.DataTree, *, labels: list[np.ndarray] | None = None
) -> pl.DataFrame:
    """Per chain and dimension, what the mode checks measure: ``em_units`` (units the EM
    labels with probability at least :data:`CONFIDENT_PROB`), ``em_disagree`` (the share of
    them the chain labels otherwise), ``lost_class`` (classes of at least
    :data:`CLASS_MIN_UNITS` such units that lose more than half of them, comma-separated),
    ``lp_gap`` (nats below the best other chain's mean lp) and ``lp_gap_z`` (in Monte Carlo
    standard errors); empty for a fit with one draw (EM, MAP).

    Examples
    --------
    >>> from raterstats import DawidSkene
    >>> from raterstats.simulate import hard_crowd
    >>> r = hard_crowd(n_items=40, n_raters=10, n_classes=3, random_seed=1).ratings
    >>> mode_table(DawidSkene(), DawidSkene().fit(r, method="em", random_seed=1)).height
    0
    """
    post = dt["posterior"]
    if post.sizes["draw"] < 2:
        return pl.DataFrame(schema=_TABLE_SCHEMA)
    data = fit_data(dt)
    if labels is None:
        labels = [np.argmax(p, axis=-1) for p in chain_label_prob(model, dt, data)]
    # models without an EM estimate get the log-density check only
    em = em_label_prob(model, dt, data) if "em" in model.methods else np.zeros((data.n_units, 1))
    em_lab = np.argmax(em, axis=-1)
    confident = em.max(axis=-1) >= CONFIDENT_PROB
    gap, z = chain_lp_gaps(dt)
    rows = []
    for d, dname in enumerate(data.dimensions):
        sel = (data.unit_dim == d) & confident
        k = int(data.n_categories[d])
        for c, lab in enumerate(labels):
            same = lab[sel] == em_lab[sel]
            lost = [
                data.categories[d][t]
                for t in range(k)
                if (em_lab[sel] == t).sum() >= CLASS_MIN_UNITS
                and same[em_lab[sel] == t].mean() < 0.5
            ]
            rows.append(
                {
                    "chain": c,
                    "dimension": dname,
                    "em_units": int(sel.sum()),
                    "em_disagree": float(1.0 - same.mean()) if sel.any() else float("nan"),
                    "lost_class": ", ".join(str(x) for x in lost),
                    "lp_gap": float(gap[c]),
                    "lp_gap_z": float(z[c]),
                }
            )
    return pl.DataFrame(rows, schema=_TABLE_SCHEMA)


def mode_lines(table: pl.DataFrame) -> list[str]:
    """The problems of a :func:`mode_table` in words, one per chain and check."""
    out = []
    for r in table.iter_rows(named=True):
        c, d = r["chain"], r["dimension"]
        if r["em_disagree"] > EM_DISAGREE_MAX or r["lost_class"]:
            lost = (
                f"; class(es) {r['lost_class']} lose most of their units" if r["lost_class"] else ""
            )
            out.append(
                f"chain {c} left the EM mode on dimension {d!r}: it labels "
                f"{r['em_disagree']:.0%} of the {r['em_units']} units that the EM estimate it "
                f"started from labels with probability >= {CONFIDENT_PROB:g} otherwise "
                f"(more than {EM_DISAGREE_MAX:.0%} is a different mode){lost}"
            )
    seen = set()
    for r in table.iter_rows(named=True):
        c = r["chain"]
        if c in seen:
            continue
        seen.add(c)
        if r["lp_gap"] > LP_GAP_MIN and r["lp_gap_z"] > LP_GAP_Z:
            out.append(
                f"chain {c}'s mean log density sits {r['lp_gap']:.1f} below the best other "
                f"chain's ({r['lp_gap_z']:.0f} Monte Carlo standard errors): a lesser mode"
            )
    return out


def mode_report(
    model: LatentClassModel, dt: xr.DataTree
) -> tuple[list[str], list[str], pl.DataFrame]:
    """The mode checks of a sampled fit: permuted labellings in words
    (:func:`~raterstats.models.latent_class.summaries.switching_lines`), the other mode
    problems in words (:func:`mode_lines`) and the numbers behind them (:func:`mode_table`),
    from one pass over each chain's draws; all empty for a point estimate."""
    post = dt["posterior"]
    if post.sizes["draw"] < 2:
        return [], [], pl.DataFrame(schema=_TABLE_SCHEMA)
    data = fit_data(dt)
    labels = [np.argmax(p, axis=-1) for p in chain_label_prob(model, dt, data)]
    switching = switching_lines(data, labels) if len(labels) > 1 else []
    table = mode_table(model, dt, labels=labels)
    return switching, mode_lines(table), table


def mode_problems(model: LatentClassModel, dt: xr.DataTree) -> list[str]:
    """Every mode problem of a sampled fit, in words: permuted labellings
    (:func:`~raterstats.models.latent_class.summaries.label_switching`), chains that left the
    EM mode and chains whose log density sits far below the others (see the module
    docstring); empty for a point estimate.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import hard_crowd
    >>> r = hard_crowd(n_items=40, n_raters=10, n_classes=3, random_seed=1).ratings
    >>> mode_problems(MACE(), MACE().fit(r, method="em", random_seed=1))
    []
    """
    switching, other, _ = mode_report(model, dt)
    return switching + other


__all__ = [
    "CLASS_MIN_UNITS",
    "CONFIDENT_PROB",
    "EM_DISAGREE_MAX",
    "EM_GROUP",
    "LP_GAP_MIN",
    "LP_GAP_Z",
    "chain_lp_gaps",
    "em_label_prob",
    "em_start_group",
    "mode_lines",
    "mode_problems",
    "mode_report",
    "mode_table",
]
