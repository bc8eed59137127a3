"""MACE's compiled density for nutpie: the packed data of
:func:`raterstats.models.latent_class.kernels_density.mace_logp_grad` by name
(:mod:`~raterstats.models.latent_class.layout`), the map from the unconstrained vector to
the reported variables, and the chains' starting points.

The unconstrained vector is the PyMC model's (see ``mace_logp_grad`` for its layout), so
the compiled density is the PyMC model's log density, which the tests check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit, logit

from raterstats.inference import Density
from raterstats.models.latent_class.data import LatentClassData, majority_vote_stats
from raterstats.models.latent_class.layout import (
    MaceFloat,
    MaceHeader,
    MaceInt,
    MaceScalar,
    header,
)
from raterstats.models.latent_class.mace_params import (
    BASIS_DIMS,
    arcsine_to_unit,
    basis_coords,
    decomposition,
    unit_to_arcsine,
    var_dims,
)
from raterstats.models.latent_class.reference import pack_rows, table_layout, unpack_rows
from raterstats.models.zerosum import zero_sum_basis

if TYPE_CHECKING:
    from raterstats.models.latent_class.mace import MACE


def mace_packed_fields(
    model: MACE, data: LatentClassData
) -> tuple[dict[MaceInt, np.ndarray], dict[MaceFloat, np.ndarray]]:
    """The integer and float data of MACE's compiled density by name: pack them with
    :func:`~raterstats.models.latent_class.layout.pack_fields` for
    :func:`~raterstats.models.latent_class.callbacks.mace_entry`."""
    from raterstats.models.latent_class.kernels_density import dirichlet_const

    pri = model.priors
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C = R * D * G
    hier = model.is_hierarchical(data)
    has_v = hier and D * G > 1
    cen_u, cen_v = model.is_centred(data) if hier else (False, False)
    lay = table_layout(data, data.p_cell)
    n_cat = data.n_categories.astype(np.int64)
    rows = np.tile(n_cat, R)
    mp = pri["competence_mean"]
    spam_conc = np.full((R * D, K), float(pri["spam"].param("a", 10.0)))
    prev_conc = np.full((D, K), float(pri["prevalence"].param("a", 1.0)))
    a_c, b_c = model.competence_beta()
    const = dirichlet_const(rows, spam_conc) + dirichlet_const(n_cat, prev_conc)
    if not hier:
        const -= C * (math.lgamma(a_c) + math.lgamma(b_c) - math.lgamma(a_c + b_c))
    head = {
        MaceHeader.HIERARCHICAL: int(hier),
        MaceHeader.HAS_CELL_EFFECTS: int(has_v),
        MaceHeader.N_RATERS: R,
        MaceHeader.N_DIMENSIONS: D,
        MaceHeader.N_DESIGNS: G,
        MaceHeader.N_CLASSES: K,
        MaceHeader.CENTRED: int(cen_u),
        MaceHeader.CENTRED_CELLS: int(cen_v and has_v),
    }
    scalars = {
        MaceScalar.BETA_A: a_c,
        MaceScalar.BETA_B: b_c,
        MaceScalar.SD_U: float(pri["rater_sd"].param("sigma", 1.0)),
        MaceScalar.SD_V: float(pri["cell_sd"].param("sigma", 1.0)),
        MaceScalar.CONST: const,
    }
    ints = {
        MaceInt.HEADER: header(head, np.int64),
        MaceInt.N_CATEGORIES: n_cat,
        MaceInt.E_CELL: lay.e_row,
        MaceInt.E_CODE: lay.e_code,
        MaceInt.P_E: lay.p_e,
        MaceInt.P_START: lay.p_start,
        MaceInt.PATTERN_DIM: lay.pattern_dim,
        MaceInt.MASK: lay.mask.astype(np.int64),
    }
    floats = {
        MaceFloat.SCALARS: header(scalars, np.float64),
        MaceFloat.MEAN_MU: np.broadcast_to(mp.param("mu", 0.0), (D, G)).reshape(-1).astype(float),
        MaceFloat.MEAN_SD: np.broadcast_to(mp.param("sigma", 1.0), (D, G))
        .reshape(-1)
        .astype(float),
        MaceFloat.PATTERN_W: lay.pattern_w,
        MaceFloat.SPAM_CONC: spam_conc,
        MaceFloat.PREV_CONC: prev_conc,
        MaceFloat.BASIS_R: zero_sum_basis(R),
        MaceFloat.BASIS_C: zero_sum_basis(D * G),
    }
    return ints, floats


def mace_density(
    model: MACE, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
) -> Density:
    """MACE's compiled log density with its hand-written gradient (see
    :meth:`raterstats.models.latent_class.mace.MACE.density`)."""
    from raterstats.models.latent_class.callbacks import mace_entry, mace_logp_cb
    from raterstats.models.latent_class.layout import pack_fields
    from raterstats.nutpie_callbacks import callback_buffer

    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    C = R * D * G
    hier = model.is_hierarchical(data)
    has_v = hier and D * G > 1
    cen_u, cen_v = model.is_centred(data) if hier else (False, False)
    n_cat = data.n_categories.astype(np.int64)
    rows = np.tile(n_cat, R)
    n_rb, n_cb = R - 1, D * G - 1  # free coordinates of the zero-sum effects
    int_fields, float_fields = mace_packed_fields(model, data)
    basis_r, basis_c = float_fields[MaceFloat.BASIS_R], float_fields[MaceFloat.BASIS_C]
    n_head = (D * G + 1 + n_rb + ((1 + n_rb * n_cb) if has_v else 0)) if hier else C
    n_spam = int(np.sum(rows - 1))
    n_prev = int(np.sum(n_cat - 1))
    ndim = n_head + n_spam + n_prev
    ints = pack_fields(int_fields, np.int64)
    floats = pack_fields(float_fields, np.float64)

    def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(ndim)
        lp = mace_entry(x, ints, floats, g)
        return float(lp), g

    def expand_draws(xs: np.ndarray) -> dict[str, np.ndarray]:
        """The reported variables of many draws ``(n, ndim)`` at once (leading axis n)."""
        n = xs.shape[0]
        out: dict[str, np.ndarray] = {}
        if hier:
            beta = xs[:, : D * G].reshape(n, D, G)
            s_u = np.exp(xs[:, D * G])
            z_u = xs[:, D * G + 1 : D * G + 1 + n_rb]
            u = (z_u if cen_u else s_u[:, None] * z_u) @ basis_r.T
            eta = beta[:, None] + u[:, :, None, None]
            out["competence_cell_mean"] = beta
            out["rater_sd"] = s_u
            out["rater_effect_basis" if cen_u else "rater_z"] = z_u
            out["rater_effect"] = u
            if has_v:
                s_v = np.exp(xs[:, D * G + 1 + n_rb])
                z_v = xs[:, D * G + 2 + n_rb : n_head].reshape(n, n_rb, n_cb)
                w = z_v if cen_v else s_v[:, None, None] * z_v
                v = np.einsum("ra,nab,cb->nrc", basis_r, w, basis_c).reshape(n, R, D, G)
                eta = eta + v
                out["cell_sd"] = s_v
                out["cell_effect_basis" if cen_v else "cell_z"] = z_v
                out["cell_effect"] = v
            out.update(decomposition(beta))
            out["competence"] = expit(eta)
        else:
            out["competence"] = arcsine_to_unit(xs[:, :C]).reshape(n, R, D, G)
        out["spam"] = unpack_rows(xs[:, n_head : n_head + n_spam], rows, K).reshape(n, R, D, K)
        out["prevalence"] = unpack_rows(xs[:, n_head + n_spam :], n_cat, K)
        return out

    def expand(x: np.ndarray) -> dict[str, np.ndarray]:
        return {k: v[0] for k, v in expand_draws(np.asarray(x, float)[None]).items()}

    st = majority_vote_stats(data)
    comp0 = np.clip(st["agreement"], 0.3, 0.95).reshape(R, D, G)

    def start_point() -> np.ndarray:
        assert start is not None
        if hier:
            beta = np.asarray(start["competence_cell_mean"], float).reshape(D, G)
            u = np.asarray(start["rater_effect"], float)
            u = u - u.mean()
            s_u = max(float(np.std(u)), 0.05)
            z_u = basis_r.T @ u
            head = [beta.reshape(-1), [np.log(s_u)], z_u if cen_u else z_u / s_u]
            if has_v:
                v = np.asarray(start["cell_effect"], float).reshape(R, D * G)
                v = v - v.mean(axis=0, keepdims=True)
                v = v - v.mean(axis=1, keepdims=True)
                s_v = max(float(np.std(v)), 0.05)
                z_v = (basis_r.T @ v @ basis_c).reshape(-1)
                head += [[np.log(s_v)], z_v if cen_v else z_v / s_v]
            h = np.concatenate(head)
        else:
            comp = np.clip(np.asarray(start["competence"], float), 1e-4, 1 - 1e-4)
            h = unit_to_arcsine(comp).reshape(-1)
        spam = np.clip(np.asarray(start["spam"], float).reshape(R * D, K), 1e-6, None)
        prev = np.clip(np.asarray(start["prevalence"], float), 1e-6, None)
        return np.concatenate([h, pack_rows(spam, rows), pack_rows(prev, n_cat)])

    x_start = start_point() if start is not None else None

    def initial_point(rng: np.random.Generator) -> np.ndarray:
        if x_start is not None:
            return x_start + rng.normal(0.0, 0.1, x_start.size)
        if hier:
            head = [logit(comp0.mean(axis=0)).reshape(-1), [np.log(0.5)], np.zeros(n_rb)]
            if has_v:
                head += [[np.log(0.3)], np.zeros(n_rb * n_cb)]
            h = np.concatenate(head)
        else:
            h = unit_to_arcsine(comp0).reshape(-1)
        x0 = np.concatenate(
            [
                h,
                pack_rows(st["label_freq"].reshape(R * D, K), rows),
                pack_rows(st["prevalence"], n_cat),
            ]
        )
        return x0 + rng.normal(0.0, 0.1, x0.size)

    dims = var_dims(data) | BASIS_DIMS
    probe = expand(initial_point(np.random.default_rng(0)))
    return Density(
        ndim=ndim,
        logp_grad=logp_grad,
        expand=expand,
        expand_draws=expand_draws,
        c_logp=mace_logp_cb,
        c_data=callback_buffer(ints, floats),
        var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
        var_dims={k: dims[k] for k in probe},
        coords=data.coords() | basis_coords(data),
        initial_point=initial_point,
        # hierarchical competence: with zero-sum effects a diagonal mass matrix needs
        # 15 leapfrog steps per draw on the ArchEHR-like study (33 with free effects),
        # low-rank 14 (8 instead of 15 on the clinical-QA study), and low-rank gave the
        # higher bulk ESS per CPU second on every study measured (see the model card)
        sampler_defaults={"adaptation": "low_rank"} if hier else None,
    )


__all__ = ["mace_density", "mace_packed_fields"]
