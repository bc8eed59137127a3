"""Comparing annotation designs from a categorical fit (MACE, Dawid-Skene): the model's
accuracy and chance-corrected agreement of a human rater with the true label per
dimension x design, and posterior predictive agreement per design.

:func:`compare_categorical_designs` is what :func:`raterstats.design.compare_designs` runs
on a fit of :class:`~raterstats.MACE` or :class:`~raterstats.DawidSkene` and returns the
same layout as for an ordinal fit. Per posterior draw and (label space, design) cell with
ratings, each human rater's confusion ``P(rated k | true t)`` (:func:`cell_confusion`,
from the model's own likelihood table) and the label space's prevalence ``pi`` give the
rater's accuracy ``sum_t pi_t P(t | t)`` and Cohen's kappa against the true label
``(p_o - p_e) / (1 - p_e)`` with ``p_e = sum_k pi_k P(rated k)``
(:func:`rater_agreement_draws`); the design's ``accuracy`` and ``reliability`` are their
means over the human raters who rated in the cell. Kappa is chance-corrected, so a
binary design and a 3-point design are compared on one scale; raw accuracy is not
comparable across numbers of categories (chance alone gives 1/2 against 1/3).
Label spaces of one measured dimension (:func:`raterstats.design.base_dimensions`, a fit of
:func:`raterstats.design.combine_schemes`) are reported under that dimension.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import xarray as xr

from raterstats import defaults as D
from raterstats.checks import check_counts
from raterstats.design.schemes import base_dimensions
from raterstats.diagnostics import agreement_replicates
from raterstats.health import flag_result
from raterstats.intervals import SAMPLE_DIMS, eti
from raterstats.models import is_fit_of, model_from_datatree
from raterstats.models.latent_class import (
    LatentClassData,
    LatentClassModel,
    TableLayout,
    data_from_groups,
)
from raterstats.ppc_readout import ppc_readout_text

#: ``attrs["reliability_measure"]`` of a categorical comparison
RELIABILITY_MEASURE = (
    "reliability is the model-implied Cohen's kappa of a human rater's label against the "
    "true label, (accuracy - chance) / (1 - chance) with chance = sum over categories of "
    "P(true = k) P(rated = k), averaged over the human raters who rated in the cell "
    "(chance-corrected, so comparable across numbers of categories)"
)

#: how the predictive statistics are named in the readout
_STATISTICS = {"kappa": "randolph_kappa", "alpha": "krippendorff_alpha"}
_LONG_NAMES = {"kappa": "Randolph's kappa", "alpha": "Krippendorff's alpha (nominal)"}


def is_categorical_fit(dt: xr.DataTree) -> bool:
    """Whether ``dt`` is a fit of a latent-class model (MACE, Dawid-Skene), which
    :func:`compare_categorical_designs` compares.

    Examples
    --------
    >>> import xarray as xr
    >>> is_categorical_fit(xr.DataTree())
    False
    """
    return is_fit_of(dt, LatentClassModel)


def confusion_draws(
    model: LatentClassModel, params: dict[str, np.ndarray], data: LatentClassData
) -> np.ndarray:
    """``(S, R, D, G, K, K)`` P(rated category | true class) of every rater x dimension x
    design cell for S parameter draws (``params``: :meth:`~raterstats.models.latent_class.
    LatentClassModel.params_from_posterior`), true class then rated category, from the
    model's own likelihood table (its ``draw_tables``), whatever the model; NaN in the cells
    without ratings (prior only) and in the categories a dimension does not have.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.models.latent_class import data_from_groups
    >>> from raterstats.simulate import archehr_like_study
    >>> dt = MACE().fit(archehr_like_study(n_cases=3, n_systems=3, random_seed=1).ratings,
    ...                 method="em", random_seed=1)
    >>> m = MACE()
    >>> data = data_from_groups(dt["constant_data"].to_dataset(),
    ...                         dt["observed_data"].to_dataset())
    >>> conf = confusion_draws(m, m.params_from_posterior(dt["posterior"].to_dataset()), data)
    >>> conf.shape[1:4] == (len(data.raters), len(data.dimensions), len(data.designs))
    True
    """
    R, Dn, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    # each rated cell's parameter row (the rows of the model's table), from its ratings
    rows = model.table_rows(data)
    cells, first = np.unique(data.p_cell, return_index=True)
    lay = TableLayout(
        e_row=np.repeat(rows[first], K).astype(np.int64),
        e_code=np.tile(np.arange(K), cells.size).astype(np.int64),
        **{f: np.zeros(0, dtype=np.int64) for f in ("p_e", "p_pattern", "p_start")},
        pattern_dim=np.zeros(0, dtype=np.int64),
        pattern_w=np.zeros(0),
        mask=np.zeros((0, K), dtype=bool),
    )
    n = next(iter(params.values())).shape[0]
    out = np.full((n, R * Dn * G, K, K), np.nan)
    for sl in model.draw_chunks(n, data):
        table, _ = model.draw_tables({k: v[sl] for k, v in params.items()}, data, lay)
        # table (S, cell x rated, true) -> (S, cell, true, rated)
        conf = np.exp(table.reshape(table.shape[0], cells.size, K, K)).transpose(0, 1, 3, 2)
        out[sl, cells] = conf
    valid = data.valid[(np.arange(R * Dn * G) // G) % Dn]  # (cell, K)
    out = np.where(valid[None, :, :, None] & valid[None, :, None, :], out, np.nan)
    return out.reshape(n, R, Dn, G, K, K)


def cell_confusion(dt: xr.DataTree) -> xr.DataArray:
    """Every rater's confusion matrix ``P(rated | true)`` per dimension x design, draw by
    draw, from the fit's own likelihood table (MACE: ``theta 1[k = t] + (1 - theta)
    spam[k]``; Dawid-Skene: the cell's confusion matrix, whatever its pooling).

    Parameters
    ----------
    dt : xr.DataTree
        A fit of MACE or Dawid-Skene.

    Returns
    -------
    xr.DataArray
        Dims ``(chain, draw, rater, dimension, design, true, rated)``; NaN in the cells
        without ratings (whose parameters are prior only) and in the categories a
        dimension does not have.

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.simulate import archehr_like_study
    >>> dt = MACE().fit(archehr_like_study(n_cases=4, n_systems=3, random_seed=1).ratings,
    ...                 method="em", random_seed=1)
    >>> c = cell_confusion(dt)
    >>> c.dims
    ('chain', 'draw', 'rater', 'dimension', 'design', 'true', 'rated')
    >>> bool(abs(c.sum("rated").max() - 1) < 1e-9)
    True
    """
    if not is_categorical_fit(dt):
        raise ValueError(
            "cell_confusion: expected a fit of MACE or DawidSkene, got a DataTree with model "
            f"{dt.attrs.get('model')!r}"
        )
    model = model_from_datatree(dt)
    assert isinstance(model, LatentClassModel)
    post = dt["posterior"].to_dataset()
    data = data_from_groups(dt["constant_data"].to_dataset(), dt["observed_data"].to_dataset())
    R, Dn, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    out = confusion_draws(model, model.params_from_posterior(post), data)
    shape = (post.sizes["chain"], post.sizes["draw"], R, Dn, G, K, K)
    return xr.DataArray(
        out.reshape(shape),
        dims=("chain", "draw", "rater", "dimension", "design", "true", "rated"),
        coords={
            "chain": post["chain"].values,
            "draw": post["draw"].values,
            "rater": list(data.raters),
            "dimension": list(data.dimensions),
            "design": list(data.designs),
            "true": np.arange(K),
            "rated": np.arange(K),
        },
        name="confusion",
    )


def rater_agreement_draws(dt: xr.DataTree) -> xr.Dataset:
    """Each rater's accuracy and Cohen's kappa against the true label, per dimension x
    design, draw by draw.

    With the rater's confusion ``C = P(rated | true)`` (:func:`cell_confusion`) and the
    dimension's prevalence ``pi``: ``accuracy = sum_t pi_t C[t, t]`` (the expected share
    of the rater's labels equal to the true label) and ``kappa = (accuracy - p_e) / (1 -
    p_e)``, ``p_e = sum_k pi_k sum_t pi_t C[t, k]`` (agreement expected by chance from the
    two label distributions).

    Returns
    -------
    xr.Dataset
        ``accuracy`` and ``kappa`` with dims ``(chain, draw, rater, dimension, design)``,
        NaN where the rater gave no rating in the cell; ``rated`` (rater, dimension,
        design): whether the rater rated in the cell; ``rater_is_human`` (rater).

    Examples
    --------
    >>> from raterstats import DawidSkene
    >>> from raterstats.simulate import archehr_like_study
    >>> dt = DawidSkene().fit(archehr_like_study(n_cases=4, n_systems=3,
    ...                       random_seed=1).ratings, method="em", random_seed=1)
    >>> ds = rater_agreement_draws(dt)
    >>> bool((ds["kappa"] <= ds["accuracy"]).where(ds["rated"]).fillna(True).all())
    True
    """
    conf = cell_confusion(dt)
    data = data_from_groups(dt["constant_data"].to_dataset(), dt["observed_data"].to_dataset())
    prev = dt["posterior"].to_dataset()["prevalence"].values  # (chain, draw, dim, K)
    c = np.nan_to_num(conf.values)  # (chain, draw, R, D, G, K, K)
    pi = np.nan_to_num(prev)[:, :, None, :, None, :]  # (chain, draw, 1, D, 1, K)
    acc = (pi * np.diagonal(c, axis1=-2, axis2=-1)).sum(-1)
    rated_dist = (pi[..., :, None] * c).sum(-2)  # P(rated k)
    p_e = (pi * rated_dist).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (acc - p_e) / (1.0 - p_e)
    R, Dn, G = len(data.raters), len(data.dimensions), len(data.designs)
    flat = np.zeros(R * Dn * G, dtype=bool)
    flat[data.cell] = True
    rated = flat.reshape(R, Dn, G)
    lead = ("chain", "draw", "rater", "dimension", "design")
    coords = {k: conf.coords[k] for k in lead}
    human = data.rater_is_human
    if human is None:
        human = np.ones(R, dtype=bool)
    return xr.Dataset(
        {
            "accuracy": (lead, np.where(rated, acc, np.nan)),
            "kappa": (lead, np.where(rated, kappa, np.nan)),
            "rated": (lead[2:], rated),
            "rater_is_human": (("rater",), human),
        },
        coords=coords,
    )


def _cells(dt: xr.DataTree, rated: xr.DataArray) -> tuple[list[str], dict[tuple[str, str], str]]:
    """The base dimensions (in the fit's order) and, per (base dimension, design) with
    human ratings, its label space; two label spaces in one cell are an error."""
    base = base_dimensions(dt)
    dims = list(dict.fromkeys(base[str(d)] for d in rated["dimension"].values))
    cell: dict[tuple[str, str], str] = {}
    for space in rated["dimension"].values:
        for des in rated["design"].values:
            if not bool(rated.sel(dimension=space, design=des).any()):
                continue
            key = (base[str(space)], str(des))
            if key in cell:
                raise ValueError(
                    f"compare_designs: label spaces {cell[key]!r} and {str(space)!r} both "
                    f"measure dimension {key[0]!r} in design {key[1]!r}; a design can rate a "
                    "dimension on one scale only (give each scale its own design, as "
                    "combine_schemes does)"
                )
            cell[key] = str(space)
    return dims, cell


def _by_base(
    da: xr.DataArray, dims: list[str], designs: list[str], cell: dict[tuple[str, str], str]
) -> xr.DataArray:
    """``da`` (label-space dim ``dimension``) on the base dimensions: each (base, design)
    cell takes its label space's values, NaN where none."""
    da = da.transpose(..., "dimension", "design")
    spaces = [str(x) for x in da["dimension"].values]
    own = [str(x) for x in da["design"].values]
    vals = np.full((*da.shape[:-2], len(dims), len(designs)), np.nan)
    for (b, g), space in cell.items():
        vals[..., dims.index(b), designs.index(g)] = da.values[
            ..., spaces.index(space), own.index(g)
        ]
    lead = {d: da[d].values for d in da.dims[:-2] if d in da.coords}
    return xr.DataArray(
        vals,
        dims=da.dims,
        coords={**lead, "dimension": dims, "design": designs},
    )


def _pairwise(da: xr.DataArray, dim: str | tuple[str, ...]) -> xr.DataArray:
    """P(value of ``design`` > value of ``design_b``) over ``dim`` (draws skipped where
    either is NaN; NaN where no draw has both)."""
    other = da.rename(design="design_b")
    both = da.notnull() & other.notnull()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = (da > other).where(both).sum(dim) / both.sum(dim)
    return p.transpose("dimension", "design", "design_b")


def _summarise(name: str, draws: xr.DataArray, ci_prob: float) -> dict[str, xr.DataArray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = eti(draws, ci_prob)
        mean = draws.mean(SAMPLE_DIMS)
    return {name: mean, f"{name}_low": lo, f"{name}_high": hi}


def compare_categorical_designs(
    dt: xr.DataTree,
    *,
    n_replicates: int = 100,
    ci_prob: float | None = None,
    random_seed: int = D.RANDOM_SEED,
) -> xr.Dataset:
    """Compare the accuracy and reliability of annotation designs per dimension, from a
    categorical fit (MACE, Dawid-Skene); :func:`raterstats.design.compare_designs` runs
    this on such a fit.

    Parameters
    ----------
    dt : xr.DataTree
        A fit of :class:`~raterstats.MACE` or :class:`~raterstats.DawidSkene` with one or
        more designs, e.g. of :func:`raterstats.design.combine_schemes` (label spaces with
        different numbers of categories).
    n_replicates : int
        Posterior predictive replicates (posterior draws chosen at random, with
        replacement when the fit has fewer) on which Randolph's kappa and Krippendorff's
        alpha (nominal) are computed; 0 skips the posterior predictive part.
    ci_prob : float
        Probability of the equal-tailed intervals.
    random_seed : int
        Seed of the draw selection and the replicated ratings.

    Returns
    -------
    xr.Dataset
        Dims ``dimension`` (the measured dimensions,
        :func:`raterstats.design.base_dimensions`), ``design``, ``design_b`` and, with
        replicates, ``replicate``. ``reliability`` (posterior mean of the model-implied
        Cohen's kappa of a human rater against the true label, averaged over the human
        raters who rated in the cell; :func:`rater_agreement_draws`) with
        ``reliability_low`` / ``reliability_high`` and ``p_more_reliable``; ``accuracy``
        (the expected share of a rater's labels equal to the true label) with
        ``accuracy_low`` / ``accuracy_high`` and ``p_more_accurate``; for MACE
        ``competence`` / ``competence_low`` / ``competence_high`` (mean over those raters);
        ``n_categories`` (0: no cell); the posterior predictive ``kappa`` / ``alpha`` and
        their ``*_mean``, ``*_low``, ``*_high``, ``*_observed``, ``*_ppp``, ``p_*_higher``
        as for an ordinal fit (human raters' first ratings; ``*_ppp``: share of the
        defined replicates at least the observed value). NaN in cells without ratings.
        ``attrs``: ``ci_prob``, ``n_replicates``, ``reliability_measure``,
        ``ppc_readout`` (the predictive check in words, cells with ratings) and the fit's
        health (``fit_warning``, ``uncertainty_note``; a point estimate says that its
        intervals are not posterior intervals).

    Examples
    --------
    >>> from raterstats import MACE
    >>> from raterstats.analyze import Scheme
    >>> from raterstats.design import combine_schemes
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> both = combine_schemes({s.name: s.apply(r) for s in (
    ...     Scheme("coarse 3-point", design="coarse", collapse="likert5_to_3"),
    ...     Scheme("fine binary", design="fine", segment_rules="any_negative"))})
    >>> dt = MACE().fit(both, method="em", random_seed=1)
    >>> ds = compare_categorical_designs(dt, n_replicates=5, random_seed=1)
    >>> ds["reliability"].dims, ds["n_categories"].sel(dimension="correctness").values
    (('dimension', 'design'), array([3, 2]))
    """
    ci_prob = D.ci_prob() if ci_prob is None else ci_prob
    what = "compare_designs"
    check_counts(where=what, n_replicates=(n_replicates, 0))
    if not is_categorical_fit(dt):
        raise ValueError(
            f"{what}: expected a fit of MACE or DawidSkene, got a DataTree with model "
            f"{dt.attrs.get('model')!r}"
        )
    per_rater = rater_agreement_draws(dt)
    human = per_rater["rater_is_human"]
    rated = per_rater["rated"] & human
    designs = [str(g) for g in per_rater["design"].values]
    dims, cell = _cells(dt, rated)
    n_raters = rated.sum("rater")

    def cell_mean(x: xr.DataArray) -> xr.DataArray:
        # mean over the human raters who rated in the cell
        return x.where(rated).sum("rater") / n_raters.where(n_raters > 0)

    draws = {
        "reliability": cell_mean(per_rater["kappa"]),
        "accuracy": cell_mean(per_rater["accuracy"]),
    }
    model = model_from_datatree(dt)
    assert isinstance(model, LatentClassModel)
    quantities = model.rater_quantities(dt["posterior"].to_dataset())
    if "competence" in quantities:
        draws["competence"] = cell_mean(quantities["competence"])
    draws = {k: _by_base(v, dims, designs, cell) for k, v in draws.items()}
    n_cat = dt["constant_data"].to_dataset()["n_categories"]
    k_cells = xr.DataArray(
        [[n_cat.sel(dimension=cell[(b, g)]).item() if (b, g) in cell else 0 for g in designs]
         for b in dims],
        dims=("dimension", "design"),
    )  # fmt: skip
    out = xr.Dataset(coords={"dimension": dims, "design": designs, "design_b": designs})
    for name in ("reliability", "accuracy", "competence"):
        if name in draws:
            out.update(_summarise(name, draws[name], ci_prob))
    out["p_more_reliable"] = _pairwise(draws["reliability"], SAMPLE_DIMS)
    out["p_more_accurate"] = _pairwise(draws["accuracy"], SAMPLE_DIMS)
    out["n_categories"] = k_cells.astype(np.int64)
    out.attrs.update(
        {
            "ci_prob": ci_prob,
            "n_replicates": n_replicates,
            "reliability_measure": RELIABILITY_MEASURE,
        }
    )
    flag_result(out, dt)
    if n_replicates:
        _predictive(out, dt, n_replicates, ci_prob, random_seed, dims, designs, cell)
    return out


def _predictive(
    out: xr.Dataset,
    dt: xr.DataTree,
    n: int,
    ci_prob: float,
    random_seed: int,
    dims: list[str],
    designs: list[str],
    cell: dict[tuple[str, str], str],
) -> None:
    """The posterior predictive part (in place): kappa / alpha of the human raters' first
    ratings, observed and replicated, on the base dimensions."""
    agr = agreement_replicates(dt, n_draws=n, random_seed=random_seed, human_only=True)
    for name, stat in _STATISTICS.items():
        rep = _by_base(agr["replicated"].sel(statistic=stat, drop=True), dims, designs, cell)
        rep = rep.transpose("replicate", "dimension", "design")
        obs = _by_base(agr["observed"].sel(statistic=stat, drop=True), dims, designs, cell)
        defined = rep.notnull()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[name] = rep.assign_attrs(long_name=_LONG_NAMES[name])
            out[f"{name}_mean"] = rep.mean("replicate")
            out[f"{name}_low"], out[f"{name}_high"] = eti(rep, ci_prob, dim="replicate")
            out[f"{name}_observed"] = obs
            out[f"p_{name}_higher"] = _pairwise(rep, "replicate")
            n_def = defined.sum("replicate")
            out[f"{name}_ppp"] = ((rep >= obs).where(defined).sum("replicate") / n_def).where(
                (n_def > 0) & obs.notnull()
            )
    lines = []
    for b in dims:
        present = [g for g in designs if (b, g) in cell]
        if present:
            keep: list[Any] = [v for n in _STATISTICS for v in (n, f"{n}_observed")]
            sub = out[keep].sel(dimension=[b], design=present)
            lines.append(ppc_readout_text(sub, ci_prob=ci_prob))
    out.attrs["ppc_readout"] = "\n".join(lines)


__all__ = [
    "RELIABILITY_MEASURE",
    "cell_confusion",
    "compare_categorical_designs",
    "confusion_draws",
    "is_categorical_fit",
    "rater_agreement_draws",
]
