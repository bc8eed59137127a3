"""Quantities derived from a fit of :class:`~raterstats.models.ordinal.OrdinalRaters`.

Each is a function of the fitted ``xr.DataTree`` (fresh or reloaded from a file) and
computes nothing the tree does not hold: :func:`system_scores` (latent scores and "fair
averages"), :func:`rater_table` (severity, discrimination, infit / outfit, separation and
reliability in the many-facet Rasch vocabulary), :func:`reliability` (model-implied
reliability per dimension x design) and :func:`prob_more_reliable`,
:func:`length_contrast` (also of :class:`~raterstats.models.length_effect.LengthEffect`
fits) and :func:`sentence_aggregation` (P(no sentence negative), P(at least one sentence
positive)).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import xarray as xr

from raterstats.checks import check_counts
from raterstats.defaults import resolve_ci_prob
from raterstats.health import flag_result
from raterstats.intervals import eti
from raterstats.models.base import Model, is_fit_of
from raterstats.models.ordinal.data import OrdinalData, data_from_constants
from raterstats.models.ordinal.reference import (
    category_probs,
    cdf,
    draw_chunks,
    lp_and_cuts,
    rating_moments,
)
from raterstats.threads import over_halves


def check_fit(dt: xr.DataTree) -> tuple[xr.Dataset, xr.Dataset]:
    """The ``posterior`` and ``constant_data`` groups of an OrdinalRaters fit.

    Raises
    ------
    ValueError
        When ``dt`` is not a fit of :class:`~raterstats.models.ordinal.OrdinalRaters` (or
        of a model derived from it), as the registry resolves ``dt.attrs["model"]``.

    Examples
    --------
    >>> import xarray as xr
    >>> check_fit(xr.DataTree())
    Traceback (most recent call last):
    ...
    ValueError: expected a fit of OrdinalRaters, got a DataTree with model None
    """
    from raterstats.models.ordinal.model import OrdinalRaters  # it imports this module

    if not is_fit_of(dt, OrdinalRaters):
        raise ValueError(
            f"expected a fit of OrdinalRaters, got a DataTree with model {dt.attrs.get('model')!r}"
        )
    return dt["posterior"].to_dataset(), dt["constant_data"].to_dataset()


#: What the scale-dependent results (reliability, fair averages) of a MAP or an ADVI fit
#: lack, after the fit's own note: the mode's scales are inflated
#: (:meth:`~raterstats.models.ordinal.OrdinalRaters.mode_form` says why), mean-field ADVI
#: shrinks them (built-in study: ``sigma_residual`` 0.05-0.6 against NUTS's 0.77-0.84; the
#: model card)
SCALES_NOTE = {
    "map": (
        "the answers' and questions' scales at this mode are inflated (their joint mode "
        "with their effects), so this result is not an estimate of its posterior value: "
        "fit with method='nuts' for it"
    ),
    "advi": (
        "mean-field ADVI can shrink the scales of the answers' and questions' effects "
        "towards 0, so this result may be biased, not only its interval too narrow: fit "
        "with method='nuts' for it"
    ),
}


def flagged[T: (xr.Dataset, xr.DataArray)](out: T, dt: xr.DataTree, *, scales: bool = False) -> T:
    """``out`` with the health of the fit ``dt`` in its attrs
    (:func:`raterstats.health.flag_result`: ``fit_warning`` when the fit fails its checks,
    ``uncertainty_note`` for a point estimate or ADVI); ``scales``: the result depends on the
    latent scales, which a MAP fit inflates and an ADVI fit may shrink (the method's
    :data:`SCALES_NOTE` follows the note).

    Examples
    --------
    >>> import xarray as xr
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, method="map", random_seed=1, progress=False)
    >>> "inflated" in flagged(xr.Dataset(), dt, scales=True).attrs["uncertainty_note"]
    True
    """
    extra = SCALES_NOTE.get(str(dt.attrs.get("method"))) if scales else None
    return flag_result(out, dt, addendum=extra)


def _level_values(dt: xr.DataTree) -> np.ndarray:
    """The numeric value of each level (its label, else 1..K)."""
    levels = dt["observed_data"].attrs.get("levels", [])
    try:
        return np.asarray([float(v) for v in levels])
    except ValueError:
        return np.arange(1, len(levels) + 1, dtype=float)


def system_scores(dt: xr.DataTree, *, compiled: bool | None = None) -> xr.Dataset:
    """System scores per dimension: latent effects and "fair averages" per design.

    The fair average of system ``m`` on dimension ``d`` under design ``g`` is the expected
    rating a typical human rater of the design (severity 0, discrimination at the panel's
    geometric mean ``exp(m_dg)``) gives to the study's own answers of ``m``, averaged over
    those answers: ``FA_mdg = mean_i E[y | eta_id, typical rater]`` per posterior draw, with
    each answer's latent quality ``eta_id`` (system, question and residual effects) of that
    draw, so a posterior predictive mean over the system's answers (``models/ordinal/card.md``;
    ``MODELS.md`` section 8). Under a sentence-level design the rated units are sentences:
    an answer's term is the mean over its sentences rated under the design of
    ``E[y | eta_id + w_sd]``, and answers without such sentences are left out. The length
    term is left at the study's mean log length (0): the score is adjusted for rater
    severity and the length preference, and for the difficulty of the study's questions
    only as far as every system answered them.

    It is not the expected rating of one "average answer" ``E[y | s_md]``: with high
    agreement (a residual spread of many logits against the cut-point spacing) that
    function is nearly a step, and the ratings of systems of different quality collapse
    onto one level.

    ``compiled``: the sums over draws and answers by the numba kernel
    (:func:`raterstats.models.ordinal.kernels_fit.fair_average_sums_logit`, logit link
    only, two threads; the default for the logit link) or by NumPy; they agree to rounding.

    Returns
    -------
    xr.Dataset
        ``latent`` (chain, draw, dimension, system): the system effects ``s_md`` on the
        latent scale; ``fair_average`` (chain, draw, dimension, design, system), in the
        units of the rating scale; ``n_answers`` (design, system): the answers averaged.

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> system_scores(dt)["fair_average"].dims
    ('chain', 'draw', 'dimension', 'design', 'system')
    """
    post, const = check_fit(dt)
    if "system_effect" not in post:
        raise ValueError("the fit has no system effects (no 'system' column in the ratings)")
    link = str(const.attrs["link"])
    values = _level_values(dt)
    s = post["system_effect"].transpose("chain", "draw", "dimension", "system")
    systems = [str(v) for v in post["system"].values]
    item_system = np.array([systems.index(str(v)) for v in const["item_system"].values])
    designs = list(post["design"].values)
    has_sent = const["design_has_sentences"].values
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    n_dim, n_sys = post.sizes["dimension"], len(systems)
    fair = np.full((n_chain, n_draw, n_dim, len(designs), n_sys), np.nan)
    counts = np.zeros((len(designs), n_sys), dtype=np.int64)
    if compiled is None:
        compiled = link == "logit"
    if compiled and link != "logit":
        raise ValueError(f"the compiled fair averages implement the logit link, not {link!r}")
    # per design: each unit's weight in its system's average, its system, answer, sentence
    weights: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]] = []
    for g in range(len(designs)):
        if has_sent[g]:
            o_design = const["obs_design"].values
            o_sent = const["obs_sentence"].values
            sents = np.unique(o_sent[(o_design == g) & (o_sent > 0)]) - 1  # 0-based
            pos = {str(v): k for k, v in enumerate(const["item"].values)}
            item_of = np.array([pos[str(i)] for i in const["sentence_item"].values[sents]])
            # mean over an answer's sentences, then over the system's answers
            per_item = np.bincount(item_of, minlength=len(const["item"]))
            unit_w = 1.0 / per_item[item_of]
            rated = np.flatnonzero(per_item)
            sys_of = item_system[item_of]
            n_items = np.bincount(item_system[rated], minlength=n_sys)
        else:
            sents = None
            item_of = np.arange(len(const["item"]))
            unit_w = np.ones(item_of.size)
            sys_of = item_system
            n_items = np.bincount(item_system, minlength=n_sys)
        counts[g] = n_items
        weights.append((unit_w / np.maximum(n_items[sys_of], 1), sys_of, item_of, sents))
    if compiled:
        _fair_compiled(post, weights, values, fair)
    else:
        _fair_numpy(post, weights, values, link, fair)
    fair[..., counts == 0] = np.nan  # a system with no answers rated under the design
    out = xr.Dataset(
        {
            "latent": s,
            "fair_average": (("chain", "draw", "dimension", "design", "system"), fair),
            "n_answers": (("design", "system"), counts),
        },
        coords={"design": post["design"].values},
    )
    return flagged(out, dt, scales=True)


def _fair_numpy(
    post: xr.Dataset,
    weights: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]],
    values: np.ndarray,
    link: str,
    fair: np.ndarray,
) -> None:
    """Fill ``fair (chain, draw, dimension, design, system)`` with NumPy, in chunks of
    draws (the form of any link)."""
    n_sys = fair.shape[4]
    for sl, part in draw_chunks(post):
        eta = part["eta"].transpose("chain", "draw", "item", "dimension").values
        lam = np.exp(
            part["log_discrimination_mean"].transpose("chain", "draw", "dimension", "design").values
        )
        cuts = part["cutpoints"].transpose("chain", "draw", "dimension", "design", "cut").values
        for g, (unit_w, sys_of, item_of, sents) in enumerate(weights):
            avg = np.zeros((item_of.size, n_sys))
            avg[np.arange(item_of.size), sys_of] = unit_w
            lat = eta[:, :, item_of, :]  # chain, draw, unit, dimension
            if sents is not None:
                tau = part["sigma_sentence"].transpose("chain", "draw", "dimension").values
                wz = part["sentence_z"].transpose("chain", "draw", "sentence", "dimension").values
                lat = lat + wz[:, :, sents, :] * tau[:, :, None, :]
            lp = lam[:, :, None, :, g] * lat
            # E[value] = v_K - sum_k (v_k+1 - v_k) P(y <= k)
            cum = cdf(link)(cuts[:, :, None, :, g, :] - lp[..., None])
            mean = values[-1] - cum @ np.diff(values)
            # (chain, draw, unit, dimension) -> (chain, draw, dimension, system)
            fair[:, sl, :, g, :] = np.einsum("cwud,us->cwds", mean, avg)


def _fair_compiled(
    post: xr.Dataset,
    weights: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]],
    values: np.ndarray,
    fair: np.ndarray,
) -> None:
    """Fill ``fair (chain, draw, dimension, design, system)`` by
    :func:`~raterstats.models.ordinal.kernels_fit.fair_average_sums_logit`, design by
    design, the draws split in two halves on two threads (each half writes its own draws)."""

    def flat(name: str, *dims: str) -> np.ndarray:
        a = post[name].transpose("chain", "draw", *dims).values
        return np.ascontiguousarray(a.reshape(-1, *a.shape[2:]), dtype=np.float64)

    n_chain, n_draw, n_dim = fair.shape[:3]
    S = n_chain * n_draw
    eta = flat("eta", "item", "dimension")
    lam = np.exp(flat("log_discrimination_mean", "dimension", "design"))
    cuts = flat("cutpoints", "dimension", "design", "cut")
    sent = any(w[3] is not None for w in weights)
    wz = flat("sentence_z", "sentence", "dimension") if sent else np.zeros((S, 0, n_dim))
    tau = flat("sigma_sentence", "dimension") if sent else np.zeros((S, n_dim))
    vals = np.ascontiguousarray(values, dtype=np.float64)
    for g, (unit_w, sys_of, item_of, sents) in enumerate(weights):
        unit_sent = np.full(item_of.size, -1, np.int64) if sents is None else sents
        units = (
            np.ascontiguousarray(item_of, dtype=np.int64),
            np.ascontiguousarray(unit_sent, dtype=np.int64),
            np.ascontiguousarray(unit_w, dtype=np.float64),
            np.ascontiguousarray(sys_of, dtype=np.int64),
        )
        out = np.zeros((S, n_dim, fair.shape[4]))
        design = (np.ascontiguousarray(lam[:, :, g]), np.ascontiguousarray(cuts[:, :, g, :]))
        over_halves(partial(_fair_rows, eta, *design, wz, tau, units, vals, out), S)
        fair[:, :, :, g, :] = out.reshape(n_chain, n_draw, n_dim, -1)


def _fair_rows(
    eta: np.ndarray,
    lam: np.ndarray,
    cuts: np.ndarray,
    wz: np.ndarray,
    tau: np.ndarray,
    units: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    vals: np.ndarray,
    out: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """One design's fair-average sums of the draws ``lo:hi`` (``units``: each unit's
    answer, sentence, weight and system) into ``out[lo:hi]``."""
    from raterstats.models.ordinal.kernels_fit import fair_average_sums_logit

    item_of, unit_sent, w, sys_of = units
    fair_average_sums_logit(
        eta[lo:hi], lam[lo:hi], cuts[lo:hi], item_of, unit_sent, wz[lo:hi], tau[lo:hi], w,
        sys_of, vals, out[lo:hi],
    )  # fmt: skip


def reliability(dt: xr.DataTree) -> xr.DataArray:
    """Model-implied reliability per dimension x design (a posterior).

    The share of latent-scale variance due to the rated unit,
    ``lambda^2 Var(eta) / (lambda^2 Var(eta) + Var(link))`` with ``Var(link) = pi^2 / 3``
    (logit) or 1 (probit), averaged over the human raters; for a sentence-level design the
    unit's variance includes the sentence deviations (``Var(eta) + tau^2``).

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> reliability(dt).dims
    ('chain', 'draw', 'dimension', 'design')
    """
    post, const = check_fit(dt)
    var_link = np.pi**2 / 3 if const.attrs["link"] == "logit" else 1.0
    var_eta = post["eta"].var("item")  # chain, draw, dimension
    has_sent = xr.DataArray(
        const["design_has_sentences"].values,
        dims="design",
        coords={"design": post["design"].values},
    )
    tau2 = post["sigma_sentence"] ** 2 if "sigma_sentence" in post else 0.0
    v = var_eta + has_sent * tau2
    human = const["rater_is_human"].values
    lam2 = post["discrimination"].isel(rater=np.flatnonzero(human)) ** 2
    rel = (lam2 * v / (lam2 * v + var_link)).mean("rater")
    out = rel.transpose("chain", "draw", "dimension", "design").rename("reliability")
    return flagged(out, dt, scales=True)


def prob_more_reliable(dt: xr.DataTree, a: str, b: str) -> xr.DataArray:
    """Posterior probability, per dimension, that design ``a`` is more reliable than ``b``.

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> 0.0 <= float(prob_more_reliable(dt, "fine", "coarse").sel(dimension="safety")) <= 1.0
    True
    """
    rel = reliability(dt)
    out = (
        (rel.sel(design=a) > rel.sel(design=b))
        .mean(("chain", "draw"))
        .rename(f"P(reliability {a} > {b})")
    )
    out.attrs = dict(rel.attrs)  # the comparison drops them
    return out


def length_contrast(dt: xr.DataTree, a: str = "coarse", b: str = "fine") -> xr.Dataset:
    """Length effects per dimension x design and the contrast ``a - b`` (posteriors).

    ``length_effect`` is the human raters' effect of one SD of log length on the logit (or
    probit) scale; ``contrast`` measures how much more design ``a`` rewards longer answers
    than design ``b`` does, holding latent quality fixed. Judges' own effects, if any, are
    in ``judge_length_effect``.

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> length_contrast(dt)["contrast"].dims
    ('chain', 'draw', 'dimension')
    """
    if not is_fit_of(dt, Model):
        raise ValueError(
            "expected a fit of OrdinalRaters or LengthEffect, got a DataTree with model "
            f"{dt.attrs.get('model')!r}"
        )
    post = dt["posterior"].to_dataset()
    if "length_effect" not in post:
        raise ValueError("the fit has no length effect (fit with a 'length' column)")
    beta = post["length_effect"]
    out = xr.Dataset(
        {
            "length_effect": beta,
            "contrast": beta.sel(design=a, drop=True) - beta.sel(design=b, drop=True),
        }
    )
    if "judge_length_effect" in post:
        out["judge_length_effect"] = post["judge_length_effect"]
    out.attrs["contrast"] = f"{a} - {b}"
    return flagged(out, dt)


def sentence_aggregation(dt: xr.DataTree, *, max_draws: int = 400) -> xr.Dataset:
    """Sentence-to-answer aggregation as posteriors, for a typical human rater.

    For every answer rated sentence by sentence: ``p_no_negative`` = P(no rated sentence is
    rated negative) and ``p_any_positive`` = P(at least one rated sentence is rated
    positive), negative / positive being the levels below / above the scale's midpoint —
    the model-based counterparts of the "fine binary" scheme.

    Returns
    -------
    xr.Dataset
        Both with dims (chain, draw, item, dimension, design) restricted to the
        sentence-level designs; ``max_draws`` draws per chain at most (evenly thinned).
    """
    check_counts(where="sentence_aggregation", max_draws=(max_draws, 1))
    post, const = check_fit(dt)
    if "sentence_z" not in post:
        raise ValueError("the fit has no sentence-level ratings")
    n_draw = post.sizes["draw"]
    post = post.isel(draw=slice(None, None, max(1, n_draw // max_draws)))
    link = str(const.attrs["link"])
    k = int(const.attrs["n_levels"])
    neg_codes = np.arange(k) < (k - 1) / 2
    pos_codes = np.arange(k) > (k - 1) / 2
    sent_designs = [
        g
        for g, h in zip(post["design"].values, const["design_has_sentences"].values, strict=True)
        if h
    ]
    items = list(post["item"].values)
    sent_item = const["sentence_item"].values
    item_idx = np.array([items.index(i) for i in sent_item])
    eta = post["eta"].transpose("chain", "draw", "item", "dimension").values
    w = (
        (post["sentence_z"] * post["sigma_sentence"])
        .transpose("chain", "draw", "sentence", "dimension")
        .values
    )
    lat = eta[:, :, item_idx, :] + w  # chain, draw, sentence, dimension
    zlen = const["z_length"].values[item_idx]
    rated = np.unique(item_idx)
    onehot = (item_idx[:, None] == rated[None, :]).astype(float)  # sentence x rated answer
    out_neg, out_pos = [], []
    for g in sent_designs:
        lam = np.exp(post["log_discrimination_mean"].sel(design=g).values)  # c, d, dim
        cuts = post["cutpoints"].sel(design=g).transpose("chain", "draw", "dimension", "cut").values
        lp = lam[:, :, None, :] * lat
        if "length_effect" in post:
            lp = lp + post["length_effect"].sel(design=g).values[:, :, None, :] * zlen[:, None]
        probs = category_probs(lp, cuts[:, :, None, :, :], link)
        p_neg = probs[..., neg_codes].sum(-1)
        p_pos = probs[..., pos_codes].sum(-1)
        # product over an answer's sentences, in log space (sentence -> answer sums)
        log_none_neg = np.einsum("cwsd,si->cwid", np.log1p(-p_neg), onehot)
        log_none_pos = np.einsum("cwsd,si->cwid", np.log1p(-p_pos), onehot)
        out_neg.append(np.exp(log_none_neg))
        out_pos.append(1 - np.exp(log_none_pos))
    dims = ("chain", "draw", "item", "dimension", "design")
    coords = {
        "item": [items[i] for i in rated],
        "dimension": post["dimension"].values,
        "design": sent_designs,
    }
    out = xr.Dataset(
        {
            "p_no_negative": (dims, np.stack(out_neg, axis=-1)),
            "p_any_positive": (dims, np.stack(out_pos, axis=-1)),
        },
        coords=coords,
    )
    return flagged(out, dt)


def _fit_sums_compiled(
    part: xr.Dataset,
    data: OrdinalData,
    cell: np.ndarray,
    y: np.ndarray,
    values: np.ndarray,
    sums: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> int:
    """Add the infit / outfit sums of the draws of ``part`` to ``sums`` (squared
    residuals, variances, squared standardised residuals per cell) by
    :func:`raterstats.models.ordinal.kernels_fit.fit_sums_logit`, the draws split in two
    halves on two threads (each into buffers of its own, added in order: the result does
    not depend on the threads). Returns the number of draws."""
    from raterstats.models.ordinal.kernels_fit import fit_sums_logit

    lp, cuts = lp_and_cuts(part, data, per_rating=False)
    m = lp.shape[0] * lp.shape[1]
    lp2 = np.ascontiguousarray(lp.reshape(m, -1), dtype=np.float64)
    cuts2 = np.ascontiguousarray(cuts.reshape(m, *cuts.shape[2:]), dtype=np.float64)
    dim = np.ascontiguousarray(data.obs_dim, dtype=np.int64)
    design = np.ascontiguousarray(data.obs_design, dtype=np.int64)
    cells = np.ascontiguousarray(cell, dtype=np.int64)
    yv = np.ascontiguousarray(y, dtype=np.float64)
    vals = np.ascontiguousarray(values, dtype=np.float64)

    def run(lo: int, hi: int) -> tuple[np.ndarray, ...]:
        buf = tuple(np.zeros_like(b) for b in sums)
        fit_sums_logit(lp2[lo:hi], cuts2[lo:hi], dim, design, cells, yv, vals, *buf)
        return buf

    for buf in over_halves(run, m):
        for total, part_sum in zip(sums, buf, strict=True):
            total += part_sum
    return m


def rater_table(
    dt: xr.DataTree,
    *,
    ci_prob: float | None = None,
    max_draws: int = 200,
    compiled: bool | None = None,
) -> xr.Dataset:
    """The rater table in the many-facet Rasch vocabulary, per rater x dimension x design.

    Variables: ``severity`` and ``discrimination`` (posterior mean, with ``*_low`` /
    ``*_high`` equal-tailed ``ci_prob`` intervals; default ArviZ's ``stats.ci_prob``),
    ``infit`` and ``outfit`` (posterior
    predictive mean-square fit: information-weighted and unweighted means of squared
    standardised residuals, 1 = as the model expects, above about 1.3 = noisier, below about
    0.7 = more predictable than expected), ``n_ratings`` and ``is_human``; and per
    dimension x design, over the human raters, the ``separation`` index (spread of
    severities in units of their standard error) and the ``separation_reliability``
    ``G^2 / (1 + G^2)``. Judges (non-human raters) are in the same table, flagged by
    ``is_human``, and are left out of the separation statistics. The fit statistics use
    at most ``max_draws`` draws per chain (evenly thinned); ``compiled``: their sums by the
    numba kernel (logit link only; default for the logit link) or by NumPy.

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=50, tune=50, chains=1, random_seed=1, progress=False)
    >>> t = rater_table(dt)
    >>> t["infit"].dims
    ('rater', 'dimension', 'design')
    """
    check_counts(where="rater_table", max_draws=(max_draws, 1))
    ci_prob = resolve_ci_prob(ci_prob)
    post, const = check_fit(dt)
    link = str(const.attrs["link"])
    if compiled is None:
        compiled = link == "logit"
    if compiled and link != "logit":
        raise ValueError(f"the compiled fit statistics implement the logit link, not {link!r}")
    n_draw = post.sizes["draw"]
    thin = post.isel(draw=slice(None, None, max(1, n_draw // max_draws)))
    data = data_from_constants(dt)
    values = _level_values(dt)
    y = values[data.y]
    nr, nd, ng = (post.sizes[k] for k in ("rater", "dimension", "design"))
    cell = (data.obs_rater * nd + data.obs_dim) * ng + data.obs_design
    sq = np.zeros(nr * nd * ng)
    z2 = np.zeros(nr * nd * ng)
    var_sum = np.zeros(nr * nd * ng)
    n_used = 0
    for _, part in draw_chunks(thin):
        if compiled:  # on two threads
            n_used += _fit_sums_compiled(part, data, cell, y, values, (sq, var_sum, z2))
            continue
        lp, cuts = lp_and_cuts(part, data)
        ey, vy = rating_moments(lp, cuts, link, values)
        res2 = (y - ey) ** 2
        m = lp.shape[0] * lp.shape[1]
        sq += np.bincount(cell, weights=res2.reshape(m, -1).sum(0), minlength=sq.size)
        var_sum += np.bincount(cell, weights=vy.reshape(m, -1).sum(0), minlength=sq.size)
        z2 += np.bincount(
            cell, weights=(res2 / np.maximum(vy, 1e-12)).reshape(m, -1).sum(0), minlength=sq.size
        )
        n_used += m
    count = np.bincount(cell, minlength=sq.size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        infit = (sq / var_sum).reshape(nr, nd, ng)
        outfit = (z2 / (count * n_used)).reshape(nr, nd, ng)
    dims3 = ("rater", "dimension", "design")
    out = xr.Dataset(coords={k: post[k].values for k in dims3})
    for name in ("severity", "discrimination"):
        da = post[name].transpose("chain", "draw", *dims3)
        out[name] = da.mean(("chain", "draw"))
        out[f"{name}_low"], out[f"{name}_high"] = eti(da, ci_prob)
    out["infit"] = (dims3, infit)
    out["outfit"] = (dims3, outfit)
    out["n_ratings"] = (dims3, count.reshape(nr, nd, ng).astype(np.int64))
    human = const["rater_is_human"].values
    out["is_human"] = ("rater", human)
    sev = post["severity"].isel(rater=np.flatnonzero(human))
    obs_var = sev.mean(("chain", "draw")).var("rater", ddof=1)
    mse = sev.var(("chain", "draw")).mean("rater")
    true_var = np.maximum(obs_var - mse, 0.0)
    if post.sizes["chain"] * post.sizes["draw"] > 1:
        out["separation"] = np.sqrt(true_var / mse)
        out["separation_reliability"] = true_var / obs_var
    else:  # a point estimate has no error variance of the severities
        out["separation"] = xr.full_like(obs_var, np.nan)
        out["separation_reliability"] = xr.full_like(obs_var, np.nan)
        out.attrs["separation_note"] = (
            "separation and its reliability need the severities' posterior variance, which "
            "a point estimate does not have"
        )
    out.attrs.update({"ci_prob": ci_prob, "draws_used_for_fit": n_used})
    return flagged(out, dt)
