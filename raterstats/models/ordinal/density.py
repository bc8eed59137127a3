"""The compiled density of the ordinal rater model, assembled for nutpie and the optimisers:
:func:`compiled_density` (the numba kernel of :mod:`raterstats.models.ordinal.kernels_scale`
and its C callback, the expansion of draws into the model's variables, the starting point)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from raterstats.inference import Density
from raterstats.models.ordinal.data import OrdinalData
from raterstats.models.ordinal.graph import stretched_cuts
from raterstats.models.ordinal.layout import Block, OrdinalLayout
from raterstats.models.ordinal.reference import VARIABLE_DIMS, constrained_values, sampler_vector
from raterstats.models.zerosum import zero_sum_basis


def compiled_density(
    lay: OrdinalLayout,
    data: OrdinalData,
    target_accept: float,
    map_form: Callable[[], Density] | None = None,
) -> Density:
    """The compiled log density of ``data`` laid out by ``lay`` (the sampler's coordinates:
    :mod:`~raterstats.models.ordinal.kernels_scale`), with nutpie's C callback, the
    expansion of a vector into the model's variables, and a starting point: the scales at
    half their prior unit, the cut-points at the empirical cumulative logits stretched to the
    latent unit (:func:`~raterstats.models.ordinal.graph.stretched_cuts`), the rest at 0.
    ``target_accept`` is nutpie's default for it, ``map_form`` the density whose mode
    ``method="map"`` returns."""
    from raterstats.models.ordinal.kernels_callback import ordinal_logp_cb, pack_ordinal
    from raterstats.models.ordinal.kernels_scale import sampler_logp_grad
    from raterstats.nutpie_callbacks import callback_buffer

    off, settings, prior, ndim = lay.offsets, lay.settings, lay.prior, lay.ndim
    arrays = kernel_arrays(lay, data)

    def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(ndim)
        lp = sampler_logp_grad(x, g, off, settings, prior, *arrays)
        return float(lp), g

    ints, floats = pack_ordinal(
        off, settings, prior, arrays[:6], (arrays[6], arrays[7]), arrays[8], arrays[9], arrays[10]
    )

    def expand(x: np.ndarray) -> dict[str, np.ndarray]:
        return constrained_values(x, lay, data)

    return _density(
        data,
        logp_grad,
        expand,
        starting_point(lay, data),
        c_logp=ordinal_logp_cb,
        c_data=callback_buffer(ints, floats),
        sampler_defaults={"target_accept": target_accept},
        map_form=map_form,
        # every draw at once (constrained_values takes a batch): a checkpoint's look at
        # 6,000 draws spent 0.7 s expanding them one by one and stacking the results
        expand_draws=lambda xs: constrained_values(xs, lay, data),
    )


def _density(
    data: OrdinalData,
    logp_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    expand: Callable[[np.ndarray], dict[str, np.ndarray]],
    x_start: np.ndarray,
    **extra: Any,
) -> Density:
    """A :class:`Density` of the model's variables (shapes probed by ``expand`` at 0, their
    dims, the data's coordinates) started at ``x_start`` with a uniform jitter of 0.1."""
    ndim = int(x_start.size)
    shapes = {k: tuple(np.shape(v)) for k, v in expand(np.zeros(ndim)).items()}

    def initial_point(rng: np.random.Generator) -> np.ndarray:
        return x_start + rng.uniform(-0.1, 0.1, ndim)

    return Density(
        ndim=ndim,
        logp_grad=logp_grad,
        expand=expand,
        var_shapes=shapes,
        var_dims={k: VARIABLE_DIMS[k] for k in shapes},
        coords={k: v for k, v in data.coords.items() if v},
        initial_point=initial_point,
        **extra,
    )


def kernel_arrays(
    lay: OrdinalLayout, data: OrdinalData, order: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """The kernel's data arguments after ``x, grad, off, settings, prior``: the per-rating
    indices (in ``order`` where given), the per-answer system, question and standardised
    log length, and the zero-sum bases of the systems and the human panel."""
    sel = slice(None) if order is None else order
    return (
        *(
            np.ascontiguousarray(np.asarray(a)[sel], dtype=np.int64)
            for a in (
                data.obs_item,
                data.obs_dim,
                data.obs_design,
                data.obs_rater,
                data.obs_sentence,
                data.y,
            )
        ),
        data.item_system.astype(np.int64),
        data.item_question.astype(np.int64),
        np.ascontiguousarray(data.z_length, dtype=np.float64),
        zero_sum_basis(lay.n_system),
        zero_sum_basis(lay.n_human),
    )


def starting_point(lay: OrdinalLayout, data: OrdinalData) -> np.ndarray:
    """The optimisers' and samplers' start in ``lay``'s coordinates: the scales at half
    their prior unit, the cut-points at the empirical cumulative logits stretched to the
    latent unit, the rest at 0."""
    x_start = np.zeros(lay.ndim)
    units = lay.units
    for b, val, unit in (
        (Block.LOG_SE, 0.5, units),
        (Block.LOG_SQ, 0.5, units),
        (Block.LOG_TAU, 0.5, units),
        (Block.LOG_SU, 0.2, 1.0),
        (Block.LOG_SV, 0.2, 1.0),
        (Block.LOG_SA, 0.5, units.max()),
        (Block.LOG_SB, 0.3, units.max()),
        (Block.LOG_SL, 0.1, units.max()),
    ):
        sl = lay.block(b)
        if sl.stop > sl.start:  # per dimension, or one for all
            u = np.resize(np.asarray(unit, float), sl.stop - sl.start)
            x_start[sl] = np.log(val * u)
    cut0 = stretched_cuts(data.initial_cuts, units)
    raw0 = np.concatenate(
        [cut0[..., :1], np.log(np.maximum(np.diff(cut0, axis=-1), 1e-3))], axis=-1
    )
    x_start[lay.block(Block.CUTS)] = raw0.reshape(-1)
    return sampler_vector(x_start, lay)  # the start above is in standard coordinates


def marginal_density(lay: OrdinalLayout, data: OrdinalData, nodes: int) -> Density:
    """The log density whose mode ``method="map"`` returns when the study has sentence
    ratings: that of ``lay`` (the non-centred form) with the sentence deviations integrated
    out by ``nodes``-point Gauss-Hermite quadrature
    (:mod:`~raterstats.models.ordinal.kernels_marginal`). Its vector is ``lay``'s without
    the block ``WZ``; ``expand`` reports each sentence's posterior mean of ``z`` given the
    other parameters there (the empirical-Bayes prediction of the deviation), so the
    model's variables keep their shapes. The ratings are passed to the kernel with the
    whole-answer ratings first, then grouped by sentence x dimension, as it needs.

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> model = OrdinalRaters(centred=False, centred_latent=False, scale_coordinate=False)
    >>> data = model.prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> lay = model.layout(data)
    >>> dens = marginal_density(lay, data, 15)
    >>> dens.ndim == lay.ndim - lay.block_sizes[Block.WZ]
    True
    """
    from raterstats.models.ordinal.kernels import ordinal_logp_grad
    from raterstats.models.ordinal.kernels_marginal import gauss_hermite_normal

    if lay.scale_coordinate:
        raise ValueError("the marginal form is laid out without the latent-scale coordinate")
    order = np.lexsort((data.obs_dim, data.obs_sentence))  # whole answers (0) first
    gh_x, gh_lw = gauss_hermite_normal(nodes)
    mlay = replace(
        lay,
        sentence_nodes=int(nodes),
        marginal_start=int(np.count_nonzero(data.obs_sentence == 0)),
        prior=np.concatenate([lay.prior, gh_x, gh_lw]),
    )
    off, settings, prior, ndim = mlay.offsets, mlay.settings, mlay.prior, mlay.ndim
    arrays = kernel_arrays(mlay, data, order)
    wz = mlay.block(Block.WZ)
    keep = np.r_[0 : wz.start, wz.stop : ndim]

    def full(xm: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        x = np.zeros(ndim)
        x[keep] = xm
        g = np.empty(ndim)
        lp = ordinal_logp_grad(x, g, off, settings, prior, *arrays)
        return float(lp), x, g

    def logp_grad(xm: np.ndarray) -> tuple[float, np.ndarray]:
        lp, _, g = full(xm)
        return lp, g[keep]

    def expand(xm: np.ndarray) -> dict[str, np.ndarray]:
        _, x, g = full(xm)
        x[wz] = g[wz]  # the sentences' posterior means of z
        return constrained_values(x, lay, data)

    return _density(
        data,
        logp_grad,
        expand,
        starting_point(lay, data)[keep],
        integrated=f"sentence deviations (sentence_z: posterior means at the mode), "
        f"{int(nodes)}-point Gauss-Hermite quadrature",
    )


__all__ = ["compiled_density", "kernel_arrays", "marginal_density", "starting_point"]
