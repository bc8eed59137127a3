"""NumPy reference of the ordinal rater model's likelihood and log density.

The one definition, in plain NumPy, of what the compiled kernels of
:mod:`raterstats.models.ordinal.kernels` compute fast:

- the rating log-likelihood, :func:`rating_log_likelihood` (per rating and draw, any link)
  and :func:`summed_log_likelihood` (summed by answer x design or per rating), built from
  the linear predictor :func:`lp_and_cuts` and the interval probability
  :func:`interval_logp`; the logistic link is overridden by
  :func:`~raterstats.models.ordinal.kernels.rating_loglik_logit`;
- the log density of the unconstrained vector that NUTS samples, :func:`log_density`, built
  from the model's variables at that vector, :func:`constrained_values` (which the compiled
  density also uses to store the draws); it is overridden by
  :func:`~raterstats.models.ordinal.kernels.ordinal_logp_grad`, which adds the gradient.

The PyMC graph (:meth:`~raterstats.models.ordinal.OrdinalRaters.build_model`) is the model;
the tests check this reference against it and the kernels against this reference.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import xarray as xr
from scipy.special import expit, log_ndtr, ndtr

from raterstats.models.ordinal.data import OrdinalData
from raterstats.models.ordinal.layout import Block, OrdinalLayout, PriorConst
from raterstats.models.zerosum import zero_sum_basis, zero_sum_extend_np

#: Dims of every variable :func:`constrained_values` returns (after ``chain, draw``).
VARIABLE_DIMS: dict[str, tuple[str, ...]] = {
    "system_effect": ("dimension", "system"),
    "sigma_question": ("dimension",),
    "question_effect": ("question", "dimension"),
    "sigma_residual": ("dimension",),
    "eta": ("item", "dimension"),
    "sigma_sentence": ("dimension",),
    "sentence_z": ("sentence", "dimension"),
    "log_discrimination_mean": ("dimension", "design"),
    "sigma_discrimination_rater": (),
    "sigma_discrimination_cell": (),
    "sigma_severity_rater": (),
    "sigma_severity_cell": (),
    "length_effect": ("dimension", "design"),
    "sigma_length_rater": (),
    "length_rater_z": ("human", "dimension", "design"),
    "judge_log_discrimination": ("judge", "dimension", "design"),
    "judge_severity": ("judge", "dimension", "design"),
    "judge_length_effect": ("judge", "dimension", "design"),
    "discrimination": ("rater", "dimension", "design"),
    "severity": ("rater", "dimension", "design"),
    "cutpoints": ("dimension", "design", "cut"),
}

# ---------------------------------------------------------------------------- likelihood


def draw_chunks(post: xr.Dataset, size: int = 50) -> Iterator[tuple[slice, xr.Dataset]]:
    """(draw slice, posterior restricted to it) in chunks of ``size`` draws, to bound memory.

    Examples
    --------
    >>> post = xr.Dataset({"a": (("chain", "draw"), np.zeros((2, 120)))})
    >>> [sl for sl, _ in draw_chunks(post)]
    [slice(0, 50, None), slice(50, 100, None), slice(100, 120, None)]
    """
    n = post.sizes["draw"]
    for start in range(0, n, size):
        sl = slice(start, min(start + size, n))
        yield sl, post.isel(draw=sl)


def length_effects(post: xr.Dataset, data: OrdinalData) -> np.ndarray:
    """Length effect per (chain, draw, rater, dimension, design): the humans' design
    effect (plus their own deviations with ``length_by_rater``), then the judges'."""
    b = post["length_effect"].transpose("chain", "draw", "dimension", "design").values
    nh = data.n_humans
    out = np.repeat(b[:, :, None], nh, axis=2)
    if "length_rater_z" in post:
        sl = post["sigma_length_rater"].values[:, :, None, None, None]
        out = (
            out
            + sl
            * post["length_rater_z"]
            .transpose("chain", "draw", "human", "dimension", "design")
            .values
        )
    if "judge_length_effect" in post:
        jb = (
            post["judge_length_effect"]
            .transpose("chain", "draw", "judge", "dimension", "design")
            .values
        )
        out = np.concatenate([out, jb], axis=2)
    return out


def lp_and_cuts(
    post: xr.Dataset, data: OrdinalData, *, per_rating: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Linear predictor of every rating and its cut-points, for every draw.

    ``lambda_jdg * (eta_id + w_sd) - delta_jdg + beta_jdg * z(log length_i)`` per rating,
    from the posterior's ``discrimination``, ``severity``, ``eta``, sentence deviations
    and length effects.

    Parameters
    ----------
    post : xr.Dataset
        Posterior (or any draws) with dims ``chain, draw`` first.
    data : OrdinalData
        The ratings the draws belong to.

    per_rating : bool
        Cut-points per rating (default), or per dimension x design as the posterior holds
        them.

    Returns
    -------
    (lp, cuts) : tuple of np.ndarray
        ``lp`` (chain, draw, rating) and ``cuts`` (chain, draw, rating, K - 1), or
        (chain, draw, dimension, design, K - 1) with ``per_rating=False``.
    """
    lam = post["discrimination"].transpose("chain", "draw", "rater", "dimension", "design").values
    sev = post["severity"].transpose("chain", "draw", "rater", "dimension", "design").values
    eta = post["eta"].transpose("chain", "draw", "item", "dimension").values
    cuts = post["cutpoints"].transpose("chain", "draw", "dimension", "design", "cut").values
    lat = eta[:, :, data.obs_item, data.obs_dim]
    if data.has_sentences:
        tau = post["sigma_sentence"].transpose("chain", "draw", "dimension").values
        wz = post["sentence_z"].transpose("chain", "draw", "sentence", "dimension").values
        fine = data.obs_sentence > 0
        s = data.obs_sentence[fine] - 1
        dd = data.obs_dim[fine]
        lat[:, :, fine] += wz[:, :, s, dd] * tau[:, :, dd]
    cell = (data.obs_rater, data.obs_dim, data.obs_design)
    lp = lam[(slice(None), slice(None), *cell)] * lat - sev[(slice(None), slice(None), *cell)]
    if data.has_length:
        beta = length_effects(post, data)
        lp += beta[(slice(None), slice(None), *cell)] * data.z_length[data.obs_item]
    return lp, cuts[:, :, data.obs_dim, data.obs_design] if per_rating else cuts


def interval_logp(lo: np.ndarray, hi: np.ndarray, link: str) -> np.ndarray:
    """``log P(lo < latent <= hi)`` for a standard logistic (``link="logit"``) or normal
    (``"probit"``) latent variable, in forms that stay accurate far in the tails.

    Examples
    --------
    >>> p = interval_logp(np.array([-np.inf, 0.0]), np.array([0.0, np.inf]), "logit")
    >>> np.exp(p).round(6).tolist()
    [0.5, 0.5]
    >>> float(np.exp(interval_logp(np.array(-1.0), np.array(1.0), "probit")).round(4))
    0.6827
    """
    if link == "logit":
        # log(F(hi) - F(lo)) = log F(hi) + log(1 - F(lo)) + log(1 - exp(lo - hi))
        return -np.logaddexp(0.0, -hi) - np.logaddexp(0.0, lo) + np.log(-np.expm1(lo - hi))
    a, b = log_ndtr(hi), log_ndtr(lo)
    return a + np.log(-np.expm1(b - a))


def cdf(link: str) -> Any:
    """The latent variable's CDF: :func:`scipy.special.expit` (logit) or
    :func:`scipy.special.ndtr` (probit)."""
    return expit if link == "logit" else ndtr


def category_probs(lp: np.ndarray, cuts: np.ndarray, link: str) -> np.ndarray:
    """P(y = k) for k = 1..K given the linear predictor; ``cuts`` (.., K - 1) broadcasts
    against ``lp[..., None]``.

    Examples
    --------
    >>> category_probs(np.array([0.0]), np.array([0.0]), "logit").tolist()
    [[0.5, 0.5]]
    """
    cum = cdf(link)(cuts - lp[..., None])
    ones = np.ones((*cum.shape[:-1], 1))
    cum = np.concatenate([np.zeros_like(ones), cum, ones], axis=-1)
    return np.diff(cum, axis=-1)


def rating_moments(
    lp: np.ndarray, cuts: np.ndarray, link: str, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the rating's value ``values[y]`` given the linear predictor
    (the moments of :func:`category_probs` without forming the probabilities: with
    ``F_k = P(y <= k)``, ``E[v] = v_K - sum_k (v_{k+1} - v_k) F_k``, and the same for
    ``v**2``).

    Examples
    --------
    >>> m, v = rating_moments(np.array([0.0]), np.array([[0.0]]), "logit", np.array([1.0, 2.0]))
    >>> m.tolist(), v.tolist()
    ([1.5], [0.25])
    """
    values = np.asarray(values, float)
    cum = cdf(link)(cuts - lp[..., None])
    mean = values[-1] - cum @ np.diff(values)
    second = values[-1] ** 2 - cum @ np.diff(values**2)
    return mean, second - mean**2


def rating_log_likelihood(post: xr.Dataset, data: OrdinalData, link: str) -> np.ndarray:
    """Log-likelihood of every rating for every draw, shape (chain, draw, rating)."""
    lp, cuts = lp_and_cuts(post, data)
    pad = np.concatenate(
        [np.full((*cuts.shape[:-1], 1), -np.inf), cuts, np.full((*cuts.shape[:-1], 1), np.inf)],
        axis=-1,
    )
    y = data.y
    idx = np.arange(y.size)
    lo = pad[:, :, idx, y] - lp
    hi = pad[:, :, idx, y + 1] - lp
    return np.asarray(interval_logp(lo, hi, link))


def summed_log_likelihood(
    post: xr.Dataset,
    data: OrdinalData,
    link: str,
    key: np.ndarray,
    n_out: int,
    *,
    compiled: bool = True,
) -> np.ndarray:
    """Log-likelihood of the ratings summed by ``key`` (rating -> output index), shape
    (chain, draw, n_out): ``key = arange(n_obs)`` gives it per rating.

    The logistic link runs the compiled override
    (:func:`~raterstats.models.ordinal.kernels.summed_loglik_logit`: about 20 ns per rating
    and draw on two threads, against 300 ns for the NumPy form) unless ``compiled=False``;
    the probit link sums :func:`rating_log_likelihood`.
    """
    if compiled and link == "logit":
        from raterstats.models.ordinal.kernels import summed_loglik_logit

        return summed_loglik_logit(post, data, key, n_out)
    n_chain, n_draw = post.sizes["chain"], post.sizes["draw"]
    key = np.asarray(key, dtype=np.int64)
    out = np.zeros((n_chain * n_draw, n_out))
    for sl, part in draw_chunks(post):
        ll = rating_log_likelihood(part, data, link).reshape(-1, data.n_obs)
        rows = np.arange(n_chain)[:, None] * n_draw + np.arange(n_draw)[sl][None, :]
        block = np.zeros((ll.shape[0], n_out))
        np.add.at(block.T, key, ll.T)
        out[rows.reshape(-1)] = block
    return out.reshape(n_chain, n_draw, n_out)


# ---------------------------------------------------------------------------- log density


def _gap_basis(n: int) -> np.ndarray:
    """The n x (n - 1) matrix of the zero-sum map the kernels use (orthonormal columns)."""
    return zero_sum_extend_np(np.eye(n - 1)) if n > 1 else np.zeros((1, 0))


def standard_vector(x: np.ndarray, layout: OrdinalLayout) -> tuple[np.ndarray, float | np.ndarray]:
    """The standard unconstrained vector of the sampler's ``x`` and the log-Jacobian of the
    map: the NumPy reference of
    :func:`~raterstats.models.ordinal.kernels_scale.to_standard` (the latent-scale
    coordinate; ``x`` itself and 0 without it). Works on a batch: ``x`` (.., ndim)."""
    plan = layout.scale_plan
    x = np.asarray(x, dtype=float)
    if not plan["ell"].size:
        return x, 0.0 if x.ndim == 1 else np.zeros(x.shape[:-1])
    xs = x.copy()
    ell = x[..., plan["ell"]]  # (.., D)
    basis = _gap_basis(plan["gaps"].shape[1])  # n x (n - 1)
    xs[..., plan["gaps"]] = ell[..., None] + x[..., plan["w"]] @ basis.T
    xs[..., plan["shear"]] = x[..., plan["shear"]] + ell[..., plan["shear_dim"]]
    xs[..., plan["scaled"]] = x[..., plan["scaled"]] * np.exp(ell[..., plan["scaled_dim"]])
    logjac = ell[..., plan["scaled_dim"]].sum(axis=-1)
    return xs, (float(logjac) if x.ndim == 1 else logjac)


def sampler_vector(xs: np.ndarray, layout: OrdinalLayout) -> np.ndarray:
    """The inverse of :func:`standard_vector`: the sampler's vector of a standard one."""
    plan = layout.scale_plan
    x = np.array(xs, dtype=float)
    if not plan["ell"].size:
        return x
    y = xs[..., plan["gaps"]]
    ell = y.mean(axis=-1)
    x[..., plan["ell"]] = ell
    x[..., plan["w"]] = (y - ell[..., None]) @ _gap_basis(y.shape[-1])
    x[..., plan["shear"]] = xs[..., plan["shear"]] - ell[..., plan["shear_dim"]]
    x[..., plan["scaled"]] = xs[..., plan["scaled"]] * np.exp(-ell[..., plan["scaled_dim"]])
    return x


def constrained_values(x: np.ndarray, layout: OrdinalLayout, data: OrdinalData) -> dict[str, Any]:
    """The model's variables (constrained, by name; dims in :data:`VARIABLE_DIMS`) at the
    compiled density's unconstrained vector ``x``, or at each of a batch of them.

    Parameters
    ----------
    x : np.ndarray
        The sampler's unconstrained vector of length ``layout.ndim`` (mapped to the standard
        one by :func:`standard_vector` first), or a batch ``(.., ndim)``: each variable
        then has the batch's leading dims (the compiled density's ``expand_draws``).
    layout : OrdinalLayout
        Its layout (:meth:`~raterstats.models.ordinal.OrdinalRaters.layout`).
    data : OrdinalData
        The prepared ratings.

    Returns
    -------
    dict of str to np.ndarray
        ``eta``, ``discrimination``, ``severity``, ``cutpoints``, the scales and the other
        effects present in the model.
    """
    lay = layout
    x, _ = standard_vector(x, lay)
    lead = x.shape[:-1]
    D, G, H, J = lay.n_dim, lay.n_design, lay.n_human, lay.n_judge
    M, Q, n_item, K = lay.n_system, lay.n_question, lay.n_item, lay.n_levels
    ref, gs = lay.reference, lay.sentence_design
    off = lay.offsets
    bm = zero_sum_basis(M)
    bh = zero_sum_basis(H)

    def blk(b: Block, *shape: int) -> np.ndarray:
        v = x[..., off[b] : off[b + 1]]
        return v.reshape(*lead, *shape) if shape else v

    def scalar(b: Block) -> np.ndarray:
        return np.asarray(np.exp(x[..., off[b]]))

    out: dict[str, Any] = {}
    sys_eff = np.zeros((*lead, D, M))
    if lay.use_system:
        sig = np.array([lay.constant(PriorConst.SYSTEM_SIGMA, d) for d in range(D)])
        sys_eff = sig[:, None] * (blk(Block.SYS_Z, D, M - 1) @ bm.T)
        out["system_effect"] = sys_eff
    eta = np.swapaxes(sys_eff[..., data.item_system], -1, -2).copy()  # (.., item, dim)
    # centred: the blocks hold the effects' zero-sum coordinates themselves
    if lay.use_question:
        sq = np.exp(blk(Block.LOG_SQ))
        q_eff = zero_sum_extend_np(blk(Block.QZ, Q - 1, D), axis=-2)
        if not lay.question_centred:
            q_eff = q_eff * sq[..., None, :]
        out["sigma_question"] = sq
        out["question_effect"] = q_eff
        eta += q_eff[..., data.item_question, :]
    se = np.exp(blk(Block.LOG_SE))
    out["sigma_residual"] = se
    e_eff = zero_sum_extend_np(blk(Block.EZ, n_item - 1, D), axis=-2)
    eta += e_eff if lay.latent_centred else e_eff * se[..., None, :]
    out["eta"] = eta
    lm = np.zeros((*lead, D, G))
    if G > 1:
        lm[..., [g for g in range(G) if g != ref]] = blk(Block.LM, D, G - 1)
    out["log_discrimination_mean"] = lm
    if lay.use_sentences:
        shift = lm[..., gs] if gs >= 0 else 0.0
        out["sigma_sentence"] = np.exp(blk(Block.LOG_TAU) - shift)
        out["sentence_z"] = blk(Block.WZ, lay.n_sentence, D)
    su, sv = scalar(Block.LOG_SU), scalar(Block.LOG_SV)
    sa, sb = scalar(Block.LOG_SA), scalar(Block.LOG_SB)
    out["sigma_discrimination_rater"] = su
    out["sigma_discrimination_cell"] = sv
    out["sigma_severity_rater"] = sa
    out["sigma_severity_cell"] = sb
    # (.., H, D, G): the zero-sum basis of the panel along the raters
    cells_v = np.moveaxis(blk(Block.VZ, D, G, H - 1) @ bh.T, -1, -3)
    cells_b = np.moveaxis(blk(Block.BZ, D, G, H - 1) @ bh.T, -1, -3)
    if lay.centred:  # the blocks hold the cell totals (rater + cell deviation) themselves
        log_lam = lm[..., None, :, :] + cells_v
        sev = cells_b
    else:
        per_rater = (..., slice(None), None, None)
        log_lam = (
            lm[..., None, :, :]
            + su[..., None, None, None] * (blk(Block.UZ) @ bh.T)[per_rater]
            + sv[..., None, None, None] * cells_v
        )
        sev = (
            sa[..., None, None, None] * (blk(Block.AZ) @ bh.T)[per_rater]
            + sb[..., None, None, None] * cells_b
        )
    if lay.use_length:
        out["length_effect"] = blk(Block.BETA, D, G)
        if lay.length_by_rater:
            out["sigma_length_rater"] = scalar(Block.LOG_SL)
            out["length_rater_z"] = blk(Block.LZ, H, D, G)
    if J:
        jl = blk(Block.JL, J, D, G)
        js = blk(Block.JS, J, D, G)
        out["judge_log_discrimination"] = jl
        out["judge_severity"] = js
        log_lam = np.concatenate([log_lam, jl], axis=-3)
        sev = np.concatenate([sev, js], axis=-3)
        if lay.use_length:
            out["judge_length_effect"] = blk(Block.JB, J, D, G)
    out["discrimination"] = np.exp(log_lam)
    out["severity"] = sev
    raw = blk(Block.CUTS, D, G, K - 1)
    cuts = np.concatenate([raw[..., :1], np.exp(raw[..., 1:])], axis=-1).cumsum(-1)
    out["cutpoints"] = cuts
    return out


def log_density(x: np.ndarray, layout: OrdinalLayout, data: OrdinalData) -> float:
    """Log density of the unconstrained vector ``x`` (logit link, normal and half-normal
    priors), up to the constant that
    :func:`~raterstats.models.ordinal.kernels.ordinal_logp_grad` leaves out too.

    The sum of the priors of the blocks of ``x`` (:class:`~raterstats.models.ordinal.layout.Block`:
    standard normals; normal effects; half-normal scales sampled on the log scale, with
    their log-Jacobian; the centred deviations' ``N(0, sigma)``; the ordered transform's
    log-Jacobian and the normal prior of the cut-points) and the ratings' log-likelihood
    (:func:`rating_log_likelihood`) at :func:`constrained_values`.

    Examples
    --------
    >>> from raterstats import OrdinalRaters
    >>> from raterstats.simulate import clinical_qa_study
    >>> m = OrdinalRaters()
    >>> data = m.prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> x = np.zeros(m.layout(data).ndim)
    >>> lp, _ = m.density(data).logp_grad(x)
    >>> bool(np.isclose(log_density(x, m.layout(data), data), lp, rtol=1e-10))
    True
    """
    lay = layout
    xs, logjac = standard_vector(x, lay)
    vals = constrained_values(x, lay, data)  # of the sampler's vector
    x = xs  # the priors below read the standard vector
    D, G = lay.n_dim, lay.n_design
    scale = lay.prior_scale

    def std_normal(b: Block) -> float:
        v = x[lay.block(b)]
        return float(-0.5 * np.sum(v * v))

    def normal(b: Block, mu: PriorConst, sd: PriorConst, dim: np.ndarray | None = None) -> float:
        # ``dim``: the dimension of every element (constants stated per dimension)
        v = x[lay.block(b)]
        if dim is None:
            m: float | np.ndarray = lay.constant(mu)
            s: float | np.ndarray = lay.constant(sd)
        else:
            m = np.array([lay.constant(mu, d) for d in dim])
            s = np.array([lay.constant(sd, d) for d in dim])
        z = (v - m) / s
        return float(-0.5 * np.sum(z * z))

    def half_normal(b: Block, u: np.ndarray) -> float:
        # sigma = exp(u), HalfNormal(scale) prior and the log-Jacobian u
        r = np.exp(u) / scale[b.name.lower()]
        return float(np.sum(-0.5 * r * r + u))

    # the dimension of every element of the (.., dimension, design) blocks
    jdg = np.tile(np.repeat(np.arange(D), G), lay.n_judge)

    total = sum(std_normal(b) for b in (Block.SYS_Z, Block.WZ, Block.LZ))
    for b, log_s, centred in (
        (Block.QZ, Block.LOG_SQ, lay.question_centred),
        (Block.EZ, Block.LOG_SE, lay.latent_centred),
    ):
        if centred:  # N(0, sigma_d) zero-sum coordinates, (n - 1) x D
            s = np.exp(x[lay.block(log_s)])
            v = x[lay.block(b)].reshape(-1, lay.n_dim) / s if s.size else np.zeros(0)
            total += float(np.sum(-0.5 * v * v - np.log(s))) if s.size else 0.0
        else:
            total += std_normal(b)
    scales = (Block.LOG_SQ, Block.LOG_SE, Block.LOG_SU, Block.LOG_SV, Block.LOG_SA, Block.LOG_SB)
    for b in (*scales, Block.LOG_SL):
        total += half_normal(b, x[lay.block(b)])
    if lay.use_sentences:  # x holds log tau + m[:, gs] (a shear with unit Jacobian)
        gs = lay.sentence_design
        shift = vals["log_discrimination_mean"][:, gs] if gs >= 0 else 0.0
        total += half_normal(Block.LOG_TAU, x[lay.block(Block.LOG_TAU)] - shift)
    total += normal(Block.LM, PriorConst.LM_MU, PriorConst.LM_SD)
    if lay.use_length:
        total += normal(
            Block.BETA, PriorConst.BETA_MU, PriorConst.BETA_SD, np.repeat(np.arange(D), G)
        )
    total += normal(Block.JL, PriorConst.JL_MU, PriorConst.JL_SD)
    total += normal(Block.JS, PriorConst.JS_MU, PriorConst.JS_SD, jdg)
    if lay.use_length:
        total += normal(Block.JB, PriorConst.JB_MU, PriorConst.JB_SD, jdg)
    if lay.centred:
        # the cell totals of every zero-sum basis coordinate, over the D x G cells:
        # N(0, s_cell^2 I + s_rater^2 J) (the rater-level deviation integrated out)
        n = D * G
        for cells, log_r, log_c in (
            (Block.VZ, Block.LOG_SU, Block.LOG_SV),
            (Block.BZ, Block.LOG_SA, Block.LOG_SB),
        ):
            s_r = float(np.exp(x[lay.block(log_r)][0]))
            s_c = float(np.exp(x[lay.block(log_c)][0]))
            cov = s_c**2 * np.eye(n) + s_r**2 * np.ones((n, n))
            t = x[lay.block(cells)].reshape(n, lay.n_human - 1)
            _, logdet = np.linalg.slogdet(cov)
            quad = np.einsum("ck,ck->", t, np.linalg.solve(cov, t))
            total += float(-0.5 * quad - 0.5 * t.shape[1] * logdet)
    else:
        for b in (Block.UZ, Block.VZ, Block.AZ, Block.BZ):
            total += std_normal(b)
    raw = x[lay.block(Block.CUTS)].reshape(lay.n_dim, lay.n_design, lay.n_levels - 1)
    total += float(raw[..., 1:].sum())  # log-Jacobian of the ordered transform
    cut_mu = np.array([lay.constant(PriorConst.CUT_MU, d) for d in range(D)])[:, None, None]
    cut_sd = np.array([lay.constant(PriorConst.CUT_SD, d) for d in range(D)])[:, None, None]
    z = (vals["cutpoints"] - cut_mu) / cut_sd
    total += float(-0.5 * np.sum(z * z))
    post = xr.Dataset(
        {
            k: (("chain", "draw", *VARIABLE_DIMS[k]), np.asarray(v)[None, None])
            for k, v in vals.items()
        }
    )
    return total + float(rating_log_likelihood(post, data, "logit").sum()) + float(logjac)


__all__ = [
    "VARIABLE_DIMS",
    "category_probs",
    "cdf",
    "constrained_values",
    "draw_chunks",
    "interval_logp",
    "length_effects",
    "log_density",
    "lp_and_cuts",
    "rating_log_likelihood",
    "rating_moments",
    "sampler_vector",
    "standard_vector",
    "summed_log_likelihood",
]
