"""Dawid-Skene's compiled density for nutpie: the packed data of
:func:`raterstats.models.latent_class.kernels_density.ds_logp_grad` by name
(:mod:`~raterstats.models.latent_class.layout`), the map from the unconstrained vector to
the reported variables, and the chains' starting points.

The unconstrained vector is the PyMC model's (see ``ds_logp_grad`` for its layout), so
the compiled density is the PyMC model's log density, which the tests check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit, logsumexp

from raterstats.inference import Density
from raterstats.models.latent_class.data import LatentClassData, majority_vote_stats
from raterstats.models.latent_class.layout import (
    DsFloat,
    DsHeader,
    DsInt,
    DsKind,
    DsScalar,
    header,
)
from raterstats.models.latent_class.reference import (
    simplex_forward_np,
    table_layout,
    unpack_rows,
)

if TYPE_CHECKING:
    from raterstats.models.latent_class.dawid_skene import DawidSkene

#: the confusion parametrisation of each pooling
POOLING_KIND = {
    "unpooled": DsKind.DIRICHLET,
    "pooled": DsKind.DIRICHLET,
    "partial": DsKind.PARTIAL,
    "one_coin": DsKind.ONE_COIN,
}


def ds_packed_fields(
    model: DawidSkene, data: LatentClassData
) -> tuple[dict[DsInt, np.ndarray], dict[DsFloat, np.ndarray]]:
    """The integer and float data of Dawid-Skene's compiled density by name: pack them
    with :func:`~raterstats.models.latent_class.layout.pack_fields` for
    :func:`~raterstats.models.latent_class.callbacks.ds_entry` (partial pooling runs the
    pilot EM of ``DawidSkene.centred_entries``)."""
    from raterstats.models.latent_class.kernels_density import dirichlet_const

    pri = model.priors
    D, G, K = len(data.dimensions), len(data.designs), data.K
    NC, cell, cell_dim, _ = model.cells(data)
    kind = POOLING_KIND[model.options["pooling"]]
    lay = table_layout(data, cell)
    n_cat = data.n_categories.astype(np.int64)
    prev_conc = np.full((D, K), float(pri["prevalence"].param("a", 1.0)))
    const = dirichlet_const(n_cat, prev_conc)
    conf_conc = np.ones((NC, K, K))
    zeta_mu = np.zeros((K, K))
    pr_logit = pri["confusion_logit"]
    acc_pr = pri["accuracy"]
    a_acc, b_acc = float(acc_pr.param("alpha", 2.0)), float(acc_pr.param("beta", 1.0))
    n_off = K * (K - 1)
    partial = kind == DsKind.PARTIAL
    cen = model.centred_entries(data) if partial else np.zeros((NC, n_off), dtype=bool)
    by_error = model.options["spread"] == "error"
    if kind == DsKind.DIRICHLET:
        conf_conc = model.confusion_conc(data, NC)
        const += dirichlet_const(np.full(NC * K, K), conf_conc.reshape(NC * K, K))
    elif partial:
        zeta_mu = np.full((K, K), float(pr_logit.param("mu", -2.0)))
    else:
        const -= NC * (math.lgamma(a_acc) + math.lgamma(b_acc) - math.lgamma(a_acc + b_acc))
    head = {
        DsHeader.KIND: int(kind),
        DsHeader.N_ROWS: NC,
        DsHeader.N_DIMENSIONS: D,
        DsHeader.N_DESIGNS: G,
        DsHeader.N_CLASSES: K,
    }
    scalars = {
        DsScalar.ZETA_SD: float(pr_logit.param("sigma", 1.5)),
        DsScalar.SD_OMEGA: float(pri["rater_sd"].param("sigma", 1.0)),
        DsScalar.COIN_A: a_acc,
        DsScalar.COIN_B: b_acc,
        DsScalar.CONST: const,
    }
    ints = {
        DsInt.HEADER: header(head, np.int64),
        DsInt.N_CATEGORIES: n_cat,
        DsInt.ROW_DIM: cell_dim.astype(np.int64),
        DsInt.E_ROW: lay.e_row,
        DsInt.E_CODE: lay.e_code,
        DsInt.P_E: lay.p_e,
        DsInt.P_START: lay.p_start,
        DsInt.PATTERN_DIM: lay.pattern_dim,
        DsInt.MASK: lay.mask.astype(np.int64),
        DsInt.CENTRED: cen.astype(np.int64).ravel(),
        DsInt.SIG_OF: np.arange(D * n_off) if by_error else np.repeat(np.arange(D), n_off),
    }
    floats = {
        DsFloat.SCALARS: header(scalars, np.float64),
        DsFloat.PATTERN_W: lay.pattern_w,
        DsFloat.CONF_CONC: conf_conc,
        DsFloat.ZETA_MU: zeta_mu,
        DsFloat.PREV_CONC: prev_conc,
    }
    return ints, floats


def ds_density(
    model: DawidSkene, data: LatentClassData, start: Mapping[str, np.ndarray] | None = None
) -> Density:
    """Dawid-Skene's compiled log density with its hand-written gradient (see
    :meth:`raterstats.models.latent_class.dawid_skene.DawidSkene.density`)."""
    from raterstats.models.latent_class.callbacks import ds_entry, ds_logp_cb
    from raterstats.models.latent_class.layout import pack_fields
    from raterstats.nutpie_callbacks import callback_buffer

    pooling = model.options["pooling"]
    kind = POOLING_KIND[pooling]
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    NC, _, cell_dim, cdims = model.cells(data)
    n_cat = data.n_categories.astype(np.int64)
    n_off = K * (K - 1)
    by_error = model.options["spread"] == "error"
    n_sig = D * n_off if by_error else D
    int_fields, float_fields = ds_packed_fields(model, data)
    cen = int_fields[DsInt.CENTRED].reshape(NC, n_off).astype(bool)
    if kind == DsKind.DIRICHLET:
        ndim_head = NC * K * (K - 1)
    elif kind == DsKind.PARTIAL:
        ndim_head = D * n_off + n_sig + NC * n_off
    else:
        ndim_head = NC
    ndim = ndim_head + D * (K - 1)
    ints = pack_fields(int_fields, np.int64)
    floats = pack_fields(float_fields, np.float64)

    def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(ndim)
        lp = ds_entry(x, ints, floats, g)
        return float(lp), g

    lead = tuple({"rater": R, "dimension": D, "design": G}[d] for d in cdims)
    ti, ai = model.off_diagonal(K)

    def expand(x: np.ndarray) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        if kind == DsKind.DIRICHLET:
            rows = unpack_rows(x[:ndim_head], np.full(NC * K, K), K)
            out["confusion"] = rows.reshape(*lead, K, K)
        elif kind == DsKind.PARTIAL:
            zeta = x[: D * n_off].reshape(D, n_off)
            sig = np.exp(x[D * n_off : D * n_off + n_sig])
            sig_full = np.broadcast_to(sig.reshape(D, -1), (D, n_off))
            w = x[D * n_off + n_sig : ndim_head].reshape(NC, n_off)
            omega = np.where(cen, w, zeta[cell_dim] + sig_full[cell_dim] * w)
            logits = np.zeros((NC, K, K))
            logits[:, ti, ai] = omega
            out["confusion_logit_mean"] = zeta
            out["rater_sd"] = sig.reshape(D, n_off) if by_error else sig
            out["confusion_logit"] = omega.reshape(R, D, G, n_off)
            out["confusion"] = np.exp(logits - logsumexp(logits, axis=-1, keepdims=True)).reshape(
                R, D, G, K, K
            )
        else:
            acc = expit(x[:NC]).reshape(R, D, G)
            eye = np.eye(K, dtype=bool)
            out["accuracy"] = acc
            out["confusion"] = np.where(
                eye, acc[..., None, None], ((1 - acc) / (K - 1))[..., None, None]
            )
        out["prevalence"] = unpack_rows(x[ndim_head:], n_cat, K)
        return out

    init = model.initial_values(data)
    st = majority_vote_stats(data)
    conf0 = np.clip(st["confusion"].reshape(R, D, G, K, K), 1e-3, None)

    def start_point() -> np.ndarray:
        assert start is not None
        # rows need not be renormalised after the clip: the simplex transform and the
        # logits against the diagonal are invariant to a row's scale
        c = np.clip(np.asarray(start["confusion"], float), 1e-6, None)
        prev = np.clip(np.asarray(start["prevalence"], float), 1e-6, None)
        if kind == DsKind.DIRICHLET:
            head = simplex_forward_np(c).reshape(-1)
        elif kind == DsKind.PARTIAL:
            lc = np.log(c).reshape(NC, K, K)
            omega = lc[:, ti, ai] - lc[:, ti, ti]  # (cell, error), diagonal logit 0
            zeta = np.asarray(start["confusion_logit_mean"], float).reshape(D, n_off)
            sig = np.maximum(np.asarray(start["rater_sd"], float), 0.05)
            sig_e = np.broadcast_to(sig.reshape(D, -1), (D, n_off))[cell_dim]
            w = np.where(cen, omega, (omega - zeta[cell_dim]) / sig_e)
            head = np.concatenate([zeta.reshape(-1), np.log(sig).reshape(-1), w.ravel()])
        else:
            a0 = np.clip(np.asarray(start["accuracy"], float), 1e-4, 1 - 1e-4)
            head = np.log(a0 / (1 - a0)).reshape(-1)
        return np.concatenate([head, simplex_forward_np(prev).reshape(-1)])

    x_start = start_point() if start is not None else None

    def initial_point(rng: np.random.Generator) -> np.ndarray:
        if x_start is not None:
            return x_start + rng.normal(0.0, 0.1, x_start.size)
        if kind == DsKind.DIRICHLET:
            c = conf0.mean(axis=0) if pooling == "pooled" else conf0
            c = c / c.sum(axis=-1, keepdims=True)
            head = simplex_forward_np(c).reshape(-1)
        elif kind == DsKind.PARTIAL:
            lc = np.log(conf0) - np.log(np.einsum("rdgkk->rdgk", conf0))[..., None]
            off = lc[..., ti, ai]
            zeta = np.clip(off.mean(axis=(0, 2)), -6, 2)
            w = np.where(cen, zeta[cell_dim], 0.0)
            head = np.concatenate([zeta.reshape(-1), np.log(np.full(n_sig, 0.5)), w.reshape(-1)])
        else:
            a0 = init["accuracy"]
            head = np.log(a0 / (1 - a0)).reshape(-1)
        x0 = np.concatenate([head, simplex_forward_np(st["prevalence"]).reshape(-1)])
        return x0 + rng.normal(0.0, 0.1, x0.size)

    dims = {
        "confusion": (*cdims, "true", "rated"),
        "confusion_logit_mean": ("dimension", "error"),
        "rater_sd": model.rater_sd_dims(),
        "confusion_logit": ("rater", "dimension", "design", "error"),
        "accuracy": ("rater", "dimension", "design"),
        "prevalence": ("dimension", "category"),
    }
    probe = expand(initial_point(np.random.default_rng(0)))
    coords = data.coords() | {"true": list(range(K)), "rated": list(range(K))}
    if kind == DsKind.PARTIAL:
        coords["error"] = [f"{t}->{a}" for t, a in zip(ti, ai, strict=True)]
    return Density(
        ndim=ndim,
        logp_grad=logp_grad,
        expand=expand,
        c_logp=ds_logp_cb,
        c_data=callback_buffer(ints, floats),
        var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
        var_dims={k: dims[k] for k in probe},
        coords=coords,
        initial_point=initial_point,
    )


__all__ = ["POOLING_KIND", "ds_density", "ds_packed_fields"]
