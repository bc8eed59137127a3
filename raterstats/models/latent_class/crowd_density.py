"""Compiled densities of the correlated-crowd models for nutpie: the data of
:func:`~raterstats.models.latent_class.kernels_crowd.cds_logp_grad` and
:func:`~raterstats.models.latent_class.kernels_crowd.ebcc_logp_grad`, the constants of
the log density (the Dirichlet and Gamma normalisers and the simplex transforms'
constant log-Jacobians, so that it equals the PyMC model's log density), the map from the
unconstrained vector to the reported variables, and the chains' starting points.

nutpie calls ``logp_grad`` from Python (``nutpie.compiled_pyfunc``); the numba kernels
release the GIL, so the chains' threads run the kernels in parallel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import digamma, gammaln, logsumexp, polygamma

from raterstats.inference import Density
from raterstats.models.latent_class.crowd_vb import cell_indices
from raterstats.models.latent_class.data import LatentClassData, majority_vote_stats
from raterstats.models.latent_class.ebcc_vb import marginal_confusion, state_mask
from raterstats.models.latent_class.reference import (
    simplex_backward_np,
    simplex_forward_np,
    table_layout,
)

if TYPE_CHECKING:
    from raterstats.models.latent_class.community_ds import CommunityDawidSkene
    from raterstats.models.latent_class.ebcc import EnhancedBCC

#: standard deviation of the jitter of the chains' starting points (unconstrained scale)
JITTER = 0.1


def dirichlet_row_const(conc: np.ndarray) -> float:
    """Sum over rows (last axis: categories) of the Dirichlet log normaliser and the
    simplex transform's constant log-Jacobian ``log k``.

    Examples
    --------
    >>> round(dirichlet_row_const(np.ones((2, 3))), 6)  # 2 (log 2! + log 3)
    3.583519
    """
    k = conc.shape[-1]
    rows = np.asarray(gammaln(conc.sum(-1)) - gammaln(conc).sum(-1))
    return float(rows.sum() + rows.size * math.log(k))


def simplex_values(x: np.ndarray, n_rows: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``n_rows`` simplex rows of ``k`` categories from the leading ``n_rows (k - 1)``
    values of ``x (..., n)``, and the rest of ``x``."""
    n = n_rows * (k - 1)
    v = x[..., :n].reshape(*x.shape[:-1], n_rows, k - 1)
    return simplex_backward_np(v), x[..., n:]


def community_membership_np(
    conf: np.ndarray, comm: np.ndarray, rho: np.ndarray, s: np.ndarray, floor: float
) -> np.ndarray:
    """``(S, R, M)`` probability that each rater belongs to each community given the
    confusions ``(S, R, DG, K, K)``, community confusions ``(S, M, DG, K, K)``, weights
    ``(S, M)``, concentration ``(S,)`` and the rows' floor."""
    S, R = conf.shape[:2]
    M, K = comm.shape[1], comm.shape[-1]
    sc = floor + s[:, None, None, None, None] * comm
    tot = gammaln(K * floor + s)[:, None, None, None]
    norm = (tot - gammaln(sc).sum(-1)).sum(axis=(2, 3))  # (S, M)
    with np.errstate(divide="ignore"):
        lc = np.log(conf).reshape(S, R, -1)
        inner = np.einsum("srf,smf->srm", lc, (sc - 1.0).reshape(S, M, -1))
        A = np.log(rho)[:, None, :] + norm[:, None, :] + inner
    return np.exp(A - logsumexp(A, axis=2, keepdims=True))


def reference_coordinates(
    comm: np.ndarray,
    s: np.ndarray,
    floor: float,
    ref_w: np.ndarray,
    cell_rater: np.ndarray,
    cell_dg: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and spread ``(S, NC, K, K - 1)`` of every rater row's simplex coordinates
    under its reference prior ``Dirichlet(f + s sum_m ref_w[j, m] C[m, dg])``:
    ``psi(alpha_i) - mean_a psi(alpha_a)`` and ``sqrt(psi'(alpha_i))`` (``comm (S, M, DG,
    K, K)``, ``s (S,)``)."""
    cref = np.einsum("cm,smcta->scta", ref_w[cell_rater], comm[:, :, cell_dg])
    al = floor + s[:, None, None, None] * cref
    ps = digamma(al)
    mean = ps[..., :-1] - ps.mean(axis=-1, keepdims=True)
    return mean, np.sqrt(polygamma(1, al[..., :-1]))


def rater_rows_from_offsets(
    z: np.ndarray,
    comm: np.ndarray,
    s: np.ndarray,
    floor: float,
    ref_w: np.ndarray,
    cell_rater: np.ndarray,
    cell_dg: np.ndarray,
    centred: np.ndarray,
) -> np.ndarray:
    """The raters' confusion rows ``(S, NC, K, K)`` from their sampled values
    ``z (S, NC, K, K - 1)``: ``simplex(mean + sd z)`` with the coordinates' mean and
    spread under the reference prior (:func:`reference_coordinates`), or ``simplex(z)``
    where ``centred (NC, K)``."""
    mean, sd = reference_coordinates(comm, s, floor, ref_w, cell_rater, cell_dg)
    return simplex_backward_np(np.where(centred[None, :, :, None], z, mean + sd * z))


def cds_density(
    model: CommunityDawidSkene,
    data: LatentClassData,
    M: int,
    start: Mapping[str, np.ndarray] | None = None,
    ref_weight: np.ndarray | None = None,
) -> Density:
    """Community Dawid-Skene's compiled density with ``M`` communities (see
    :meth:`~raterstats.models.latent_class.community_ds.CommunityDawidSkene.density`).

    The raters' rows are sampled as standardised offsets from a reference in the simplex
    coordinates, or centred (``z``, :func:`rater_rows_from_offsets`; the parametrisation
    of the PyMC model, see
    :meth:`~raterstats.models.latent_class.community_ds.CommunityDawidSkene.build_model`):
    the reference weights are ``ref_weight``, else the start's ``community_membership``
    (each rater non-centred about the communities it belongs to), else even; the centred
    rows are those of :meth:`~raterstats.models.latent_class.community_ds.
    CommunityDawidSkene.centred_rows`."""
    from raterstats.models.latent_class.kernels_crowd import cds_logp_grad

    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    DG, NC, k1 = D * G, R * D * G, K - 1
    pri = model.priors
    a_prev = float(pri["prevalence"].param("a", 3.0))
    a_rho = float(pri["community_weight"].param("a", 1.0))
    s_a = float(pri["concentration"].param("alpha"))
    s_b = float(pri["concentration"].param("beta"))
    floor = float(model.options["rater_floor"])
    conf_conc = model.community_conc(K)
    cell_rater, cell_dg, _ = cell_indices(R, D, G)
    if ref_weight is None:
        ref_weight = model.reference_weight(data, M, start)
    ref_w = np.ascontiguousarray(ref_weight, dtype=np.float64)
    cen = model.centred_rows(data, start).reshape(NC, K)
    lay = table_layout(data, data.p_cell)
    const = dirichlet_row_const(np.full((D, K), a_prev))
    if M > 1:
        const += dirichlet_row_const(np.full((1, M), a_rho))
    const += dirichlet_row_const(np.broadcast_to(conf_conc, (M, DG, K, K)))
    const += s_a * math.log(s_b) - math.lgamma(s_a)
    const += NC * K * math.log(K)  # the raters' simplex Jacobians
    ndim = D * k1 + (M - 1) + M * DG * K * k1 + 1 + NC * K * k1
    args = (
        D, M, DG, K, R, cell_rater.astype(np.int64), cell_dg.astype(np.int64), ref_w,
        cen.astype(np.int64).ravel(), lay.e_row, lay.e_code, lay.p_e, lay.p_start,
        lay.pattern_dim, lay.pattern_w, lay.mask, np.ascontiguousarray(conf_conc), a_prev,
        a_rho, s_a, s_b, floor, const,
    )  # fmt: skip

    def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(ndim)
        lp = cds_logp_grad(np.asarray(x, dtype=np.float64), *args, g)
        return float(lp), g

    def expand_draws(X: np.ndarray) -> dict[str, np.ndarray]:
        X = np.atleast_2d(X)
        S = X.shape[0]
        prev, rest = simplex_values(X, D, K)
        if M > 1:
            rho, rest = simplex_values(rest, 1, M)
            rho = rho[:, 0]
        else:
            rho = np.ones((S, 1))
        n_c = M * DG * K * k1
        comm = simplex_backward_np(rest[:, :n_c].reshape(S, M, DG, K, k1))
        s = np.exp(rest[:, n_c])
        z = rest[:, n_c + 1 :].reshape(S, NC, K, k1)
        conf = rater_rows_from_offsets(z, comm, s, floor, ref_w, cell_rater, cell_dg, cen)
        mem = community_membership_np(conf.reshape(S, R, DG, K, K), comm, rho, s, floor)
        return {
            "prevalence": prev,
            "community_weight": rho,
            "community_confusion": comm.reshape(S, M, D, G, K, K),
            "concentration": s,
            "confusion": conf.reshape(S, R, D, G, K, K),
            "community_membership": mem,
        }

    def expand(x: np.ndarray) -> dict[str, np.ndarray]:
        return {k: v[0] for k, v in expand_draws(np.asarray(x)[None]).items()}

    def to_x(values: Mapping[str, Any]) -> np.ndarray:
        clip = lambda v: np.clip(np.asarray(v, dtype=float), 1e-6, None)  # noqa: E731
        parts = [simplex_forward_np(clip(values["prevalence"])).ravel()]
        if M > 1:
            parts.append(simplex_forward_np(clip(values["community_weight"])).ravel())
        comm = clip(values["community_confusion"]).reshape(M, DG, K, K)
        comm = comm / comm.sum(-1, keepdims=True)
        parts.append(simplex_forward_np(comm).ravel())
        s = max(float(np.asarray(values["concentration"])), 1e-6)
        parts.append(np.array([np.log(s)]))
        xp = simplex_forward_np(clip(values["confusion"])).reshape(NC, K, k1)
        mean, sd = reference_coordinates(
            comm[None], np.array([s]), floor, ref_w, cell_rater, cell_dg
        )
        parts.append(np.where(cen[:, :, None], xp, (xp - mean[0]) / sd[0]).ravel())
        return np.concatenate(parts)

    if start is None:
        st = majority_vote_stats(data)
        conf0 = np.clip(st["confusion"].reshape(R, D, G, K, K), 1e-3, None)
        conf0 = conf0 / conf0.sum(-1, keepdims=True)
        base = {
            "prevalence": st["prevalence"],
            "community_weight": np.full(M, 1.0 / M),
            "community_confusion": np.broadcast_to(conf0.mean(0), (M, D, G, K, K)),
            "concentration": s_a / s_b,
            "confusion": conf0,
        }
        x0 = to_x(base)
    else:
        x0 = to_x(start)

    def initial_point(rng: np.random.Generator) -> np.ndarray:
        return x0 + rng.normal(0.0, JITTER, x0.size)

    dims = model.em_dims()
    probe = expand(x0)
    coords = model.size_coords(data, M)
    return Density(
        ndim=ndim,
        logp_grad=logp_grad,
        expand=expand,
        var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
        var_dims={k: dims[k] for k in probe},
        coords=coords,
        initial_point=initial_point,
        expand_draws=expand_draws,
    )


def ebcc_density(
    model: EnhancedBCC,
    data: LatentClassData,
    M: int,
    start: Mapping[str, np.ndarray] | None = None,
) -> Density:
    """The enhanced BCC's compiled density with ``M`` subtypes per class (see
    :meth:`~raterstats.models.latent_class.ebcc.EnhancedBCC.density`)."""
    from raterstats.models.latent_class.kernels_crowd import ebcc_logp_grad

    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    NC = R * D * G
    pri = model.priors
    a_prev = float(pri["prevalence"].param("a", 3.0))
    a_nu = float(pri["subtype_weight"].param("a", 1.0))
    conf_conc = model.confusion_conc(K)
    _, _, cell_dim = cell_indices(R, D, G)
    lay = table_layout(data, data.p_cell)
    const = dirichlet_row_const(np.full((D, K), a_prev))
    if M > 1:
        const += dirichlet_row_const(np.full((D, K, M), a_nu))
    const += dirichlet_row_const(np.broadcast_to(conf_conc[:, None, :], (NC, K, M, K)))
    ndim = D * (K - 1) + D * K * (M - 1) + NC * K * M * (K - 1)
    args = (
        D, M, K, NC, lay.e_row, lay.e_code, lay.p_e, lay.p_start, lay.pattern_dim,
        lay.pattern_w, np.ascontiguousarray(state_mask(lay.mask, M)),
        np.ascontiguousarray(conf_conc), a_prev, a_nu, const,
    )  # fmt: skip

    def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(ndim)
        lp = ebcc_logp_grad(np.asarray(x, dtype=np.float64), *args, g)
        return float(lp), g

    def expand_draws(X: np.ndarray) -> dict[str, np.ndarray]:
        X = np.atleast_2d(X)
        S = X.shape[0]
        prev, rest = simplex_values(X, D, K)
        if M > 1:
            nu, rest = simplex_values(rest, D * K, M)
            nu = nu.reshape(S, D, K, M)
        else:
            nu = np.ones((S, D, K, 1))
        sub, _ = simplex_values(rest, NC * K * M, K)
        sub = sub.reshape(S, NC, K, M, K)
        conf = marginal_confusion(sub, nu, cell_dim)
        return {
            "prevalence": prev,
            "subtype_weight": nu,
            "subtype_confusion": sub.reshape(S, R, D, G, K, M, K),
            "confusion": conf.reshape(S, R, D, G, K, K),
        }

    def expand(x: np.ndarray) -> dict[str, np.ndarray]:
        return {k: v[0] for k, v in expand_draws(np.asarray(x)[None]).items()}

    def to_x(values: Mapping[str, Any]) -> np.ndarray:
        clip = lambda v: np.clip(np.asarray(v, dtype=float), 1e-6, None)  # noqa: E731
        parts = [simplex_forward_np(clip(values["prevalence"])).ravel()]
        if M > 1:
            parts.append(simplex_forward_np(clip(values["subtype_weight"])).ravel())
        parts.append(simplex_forward_np(clip(values["subtype_confusion"])).ravel())
        return np.concatenate(parts)

    if start is None:
        st = majority_vote_stats(data)
        conf0 = np.clip(st["confusion"].reshape(R, D, G, K, K), 1e-3, None)
        conf0 = conf0 / conf0.sum(-1, keepdims=True)
        base = {
            "prevalence": st["prevalence"],
            "subtype_weight": np.full((D, K, M), 1.0 / M),
            "subtype_confusion": np.broadcast_to(conf0[:, :, :, :, None, :], (R, D, G, K, M, K)),
        }
        x0 = to_x(base)
    else:
        x0 = to_x(start)

    def initial_point(rng: np.random.Generator) -> np.ndarray:
        return x0 + rng.normal(0.0, JITTER, x0.size)

    dims = model.em_dims()
    probe = expand(x0)
    coords = model.size_coords(data, M)
    return Density(
        ndim=ndim,
        logp_grad=logp_grad,
        expand=expand,
        var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
        var_dims={k: dims[k] for k in probe},
        coords=coords,
        initial_point=initial_point,
        expand_draws=expand_draws,
    )


__all__ = [
    "JITTER",
    "cds_density",
    "community_membership_np",
    "dirichlet_row_const",
    "ebcc_density",
    "rater_rows_from_offsets",
    "reference_coordinates",
    "simplex_values",
]
