"""The compiled log density of :class:`~raterstats.models.length_effect.LengthEffect` and
the pointwise log-likelihood of its fits.

:func:`length_density` packs prepared ratings for the numba kernel of
:mod:`raterstats.models.kernels_length` (loaded only here, when a fit needs it) and wraps
it in a :class:`~raterstats.inference.Density` with a C callback that nutpie calls from its
threads without the GIL: the same model as the PyMC graph, on the same unconstrained
vector (the value variables of ``LengthEffect().build(ratings)``, in their order).
:func:`density_problem` says which configurations the kernel does not cover (they compile
the PyMC graph). :func:`answer_log_likelihood` is the log-likelihood per answer x design of
a fit's draws (compiled for the logit link, NumPy for probit).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import xarray as xr

from raterstats.inference import Density
from raterstats.models.ordinal import OrdinalData, interval_logp
from raterstats.models.priors import Prior
from raterstats.models.zerosum import zero_sum_basis
from raterstats.threads import over_halves

#: dims of the posterior variables of a LengthEffect fit, in the order the PyMC graph
#: creates them (system and question variables only when the data have those effects)
VARIABLE_DIMS: dict[str, tuple[str, ...]] = {
    "system_z": ("dimension", "system_basis"),
    "system_effect": ("dimension", "system"),
    "sigma_question": ("dimension",),
    "question_z": ("question", "dimension"),
    "question_effect": ("question", "dimension"),
    "sigma_rater": ("dimension",),
    "rater_z": ("rater", "dimension"),
    "severity": ("rater", "dimension"),
    "length_effect": ("dimension", "design"),
    "cutpoints": ("dimension", "design", "cut"),
}

_LOG_2PI = math.log(2.0 * math.pi)


def density_problem(priors: Mapping[str, Prior], link: str) -> str | None:
    """Why the compiled density does not cover a LengthEffect configuration (None when it
    does): it implements the logit link, half-normal scales of the rater and question
    intercepts, and scalar prior parameters (the PyMC graph reads the means and scales of
    the system, length and cut-point priors as normals).

    Examples
    --------
    >>> from raterstats.models.length_effect import LengthEffect
    >>> density_problem(LengthEffect.default_priors, "logit") is None
    True
    >>> density_problem(LengthEffect.default_priors, "probit")
    "the compiled density implements the logit link, not 'probit'"
    """
    if link != "logit":
        return f"the compiled density implements the logit link, not {link!r}"
    problems = []
    for key in ("sigma_rater", "sigma_question"):
        p = priors[key]
        if p.dist != "HalfNormal" or set(p.params) - {"sigma"}:
            problems.append(f"{key} has the prior {p!r} (the compiled density: HalfNormal(sigma))")
    for key, p in priors.items():
        if any(np.ndim(v) != 0 for v in p.params.values()):
            problems.append(f"{key} has array-valued prior parameters")
    return "; ".join(problems) or None


@dataclass(frozen=True)
class SamplingForm:
    """A parametrisation of the LengthEffect density for NUTS: the same model (the same
    posterior of every reported variable) on another unconstrained vector.

    ``centred_raters`` / ``centred_questions``: the vector holds the rater / question
    intercepts themselves (``severity ~ N(0, sigma_rater)``) instead of their standard
    normal coordinates (``rater_z``); ``shift_cuts``: it holds the first cut-point of each
    dimension x design less the mean question intercept plus the mean rater intercept of
    the dimension. The likelihood sees only ``cut - (question - rater)``: without the
    shift, the mean intercepts and the cut-points form a ridge (the location the data
    leave to the priors) far narrower across than along, and with thousands of ratings per
    rater the non-centred ``rater_z`` lie on a curve through ``sigma_rater``; NUTS with a
    diagonal mass matrix crosses both slowly (on the built-in study the PyMC graph's form
    gave a minimum bulk ESS of 123 of 4,000 draws and R-hat 1.04, in 80 s of sampling).
    """

    centred_raters: bool = True
    centred_questions: bool = True
    shift_cuts: bool = True
    rotate: bool = True


#: the form NUTS samples by default (:class:`SamplingForm`)
SAMPLING_FORM = SamplingForm()


@dataclass(frozen=True)
class LengthLayout:
    """The packed data of the compiled density (:mod:`raterstats.models.kernels_length`)
    and where each variable lies in the unconstrained vector.

    ``offsets`` and ``shapes`` give each value variable's block (names as in the PyMC
    graph: ``sigma_question`` and ``sigma_rater`` hold log scales, ``cutpoints`` the ordered
    transform's free values); ``ints`` and ``floats`` are the kernel's packed arrays;
    ``item_design_rated`` marks the answer x design pairs that have ratings.
    """

    offsets: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    ndim: int
    ints: np.ndarray
    floats: np.ndarray
    item_design_rated: np.ndarray

    def block(self, name: str, x: np.ndarray) -> np.ndarray:
        """Variable ``name``'s values in the unconstrained vector ``x``, in its shape."""
        shape = self.shapes[name]
        o = self.offsets[name]
        return x[..., o : o + int(np.prod(shape))].reshape(*x.shape[:-1], *shape)


def length_layout(
    data: OrdinalData,
    priors: Mapping[str, Prior] | None,
    *,
    form: SamplingForm | None = None,
) -> LengthLayout:
    """Pack prepared ratings and the priors for the compiled density (``priors=None``:
    unit prior constants, for the log-likelihood, which does not read them); ``form``:
    the parametrisation of the vector (default: the PyMC graph's).

    Examples
    --------
    >>> from raterstats.models.length_effect import LengthEffect
    >>> from raterstats.simulate import clinical_qa_study
    >>> m = LengthEffect()
    >>> data = m.prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> lay = length_layout(data, m.default_priors)
    >>> list(lay.offsets)[:3], lay.ndim == sum(int(np.prod(s)) for s in lay.shapes.values())
    (['system_z', 'sigma_question', 'question_z'], True)
    """
    from raterstats.models.kernels_length import LFloat, LInt

    c = data.coords
    nd, ng, nr = len(c["dimension"]), len(c["design"]), len(c["rater"])
    ni, k = len(c["item"]), data.n_levels
    nm = len(c["system"]) if data.use_system else 0
    nq = len(c["question"]) if data.use_question else 0
    shapes: dict[str, tuple[int, ...]] = {}
    if data.use_system:
        shapes["system_z"] = (nd, nm - 1)
    if data.use_question:
        shapes["sigma_question"] = (nd,)
        shapes["question_z"] = (nq, nd)
    shapes["sigma_rater"] = (nd,)
    shapes["rater_z"] = (nr, nd)
    shapes["length_effect"] = (nd, ng)
    shapes["cutpoints"] = (nd, ng, k - 1)
    offsets, o = {}, 0
    for name, shape in shapes.items():
        offsets[name] = o
        o += int(np.prod(shape))
    ndim = o
    # distinct ratings (answer, dimension, design, rater, level) and their counts, sorted in
    # that order (np.unique), so that the kernels see the levels of one rater x answer x
    # dimension x design in a row
    key = np.stack([data.obs_item, data.obs_dim, data.obs_design, data.obs_rater, data.y], 1)
    terms, counts = np.unique(key.astype(np.int64), axis=0, return_counts=True)
    n = terms.shape[0]
    header = np.zeros(int(LInt.BODY), np.int64)
    header[LInt.N_TERMS], header[LInt.N_DIM], header[LInt.N_DESIGN] = n, nd, ng
    header[LInt.N_RATER], header[LInt.N_QUESTION], header[LInt.N_SYSTEM] = nr, nq, nm
    header[LInt.N_LEVELS], header[LInt.N_ITEM] = k, ni
    header[LInt.USE_SYSTEM], header[LInt.USE_QUESTION] = data.use_system, data.use_question
    for field, name in (
        (LInt.O_SYSTEM_Z, "system_z"),
        (LInt.O_LOG_SIGMA_Q, "sigma_question"),
        (LInt.O_QUESTION_Z, "question_z"),
        (LInt.O_LOG_SIGMA_R, "sigma_rater"),
        (LInt.O_RATER_Z, "rater_z"),
        (LInt.O_BETA, "length_effect"),
        (LInt.O_CUTS, "cutpoints"),
    ):
        header[field] = offsets.get(name, 0)
    header[LInt.NDIM] = ndim
    if form is not None:
        header[LInt.CENTRED_RATERS] = form.centred_raters
        header[LInt.CENTRED_QUESTIONS] = form.centred_questions and data.use_question
        header[LInt.SHIFT_CUTS] = form.shift_cuts
        header[LInt.ROTATE] = form.rotate
    ints = np.concatenate(
        [
            header,
            terms.T.reshape(-1),
            np.asarray(data.item_system, np.int64) if data.use_system else np.zeros(ni, np.int64),
            np.asarray(data.item_question, np.int64)
            if data.use_question
            else np.zeros(ni, np.int64),
        ]
    )
    pr = priors or {}

    def param(key: str, name: str, default: float) -> float:
        return float(pr[key].param(name, default)) if key in pr else default

    sig_s = param("system_effect", "sigma", 1.0)
    mu_b, sig_b = param("length_effect", "mu", 0.0), param("length_effect", "sigma", 1.0)
    mu_c, sig_c = param("cutpoints", "mu", 0.0), param("cutpoints", "sigma", 3.0)
    hq, hr = param("sigma_question", "sigma", 1.0), param("sigma_rater", "sigma", 1.0)
    # normalising constants: standard normal z's, normal length effects and cut-points,
    # half-normal scales (as the PyMC graph's log density has them)
    n_std = nd * (nm - 1 if nm else 0) + nq * nd + nr * nd
    const = -0.5 * _LOG_2PI * n_std
    const += nd * ng * (-0.5 * _LOG_2PI - math.log(sig_b))
    const += nd * ng * (k - 1) * (-0.5 * _LOG_2PI - math.log(sig_c))
    half = 0.5 * math.log(2.0 / math.pi)
    const += nd * (half - math.log(hr))
    if data.use_question:
        const += nd * (half - math.log(hq))
    head = np.zeros(int(LFloat.BODY))
    head[LFloat.SIGMA_SYSTEM], head[LFloat.MU_BETA], head[LFloat.SIGMA_BETA] = sig_s, mu_b, sig_b
    head[LFloat.SIGMA_Q], head[LFloat.SIGMA_R] = hq, hr
    head[LFloat.MU_CUT], head[LFloat.SIGMA_CUT], head[LFloat.CONST] = mu_c, sig_c, const
    basis = zero_sum_basis(nm) if nm else np.zeros((0, 0))
    floats = np.concatenate(
        [
            head,
            np.asarray(data.z_length, np.float64),
            counts.astype(np.float64),
            basis.reshape(-1),
        ]
    )
    rated = np.zeros(ni * ng, bool)
    rated[data.obs_item * ng + data.obs_design] = True
    return LengthLayout(
        offsets=offsets,
        shapes=shapes,
        ndim=ndim,
        ints=np.ascontiguousarray(ints, np.int64),
        floats=np.ascontiguousarray(floats, np.float64),
        item_design_rated=rated.reshape(ni, ng),
    )


def constrained_values(
    x: np.ndarray, lay: LengthLayout, priors: Mapping[str, Prior]
) -> dict[str, np.ndarray]:
    """The posterior variables of a LengthEffect fit (:data:`VARIABLE_DIMS`) at the
    unconstrained vector ``x`` (the draws of a fit on :func:`length_density`).

    Examples
    --------
    >>> from raterstats.models.length_effect import LengthEffect
    >>> from raterstats.simulate import clinical_qa_study
    >>> m = LengthEffect()
    >>> data = m.prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> lay = length_layout(data, m.default_priors)
    >>> v = constrained_values(np.zeros(lay.ndim), lay, m.default_priors)
    >>> v["sigma_rater"].tolist(), v["cutpoints"].shape == lay.shapes["cutpoints"]
    ([1.0, 1.0, 1.0], True)
    """
    out: dict[str, np.ndarray] = {}
    if "system_z" in lay.shapes:
        sz = lay.block("system_z", x)
        nm = sz.shape[-1] + 1
        out["system_z"] = sz
        out["system_effect"] = float(priors["system_effect"].param("sigma", 1.0)) * (
            sz @ zero_sum_basis(nm).T
        )
    if "question_z" in lay.shapes:
        sq = np.exp(lay.block("sigma_question", x))
        qz = lay.block("question_z", x)
        out["sigma_question"] = sq
        out["question_z"] = qz
        out["question_effect"] = qz * sq[..., None, :]
    sr = np.exp(lay.block("sigma_rater", x))
    rz = lay.block("rater_z", x)
    out["sigma_rater"] = sr
    out["rater_z"] = rz
    out["severity"] = rz * sr[..., None, :]
    out["length_effect"] = lay.block("length_effect", x).copy()
    raw = lay.block("cutpoints", x)
    steps = np.concatenate([raw[..., :1], np.exp(raw[..., 1:])], axis=-1)
    out["cutpoints"] = np.cumsum(steps, axis=-1)
    return out


def initial_point(data: OrdinalData, lay: LengthLayout) -> np.ndarray:
    """The compiled density's starting point: standard normal coordinates at 0, the
    scales of the rater and question intercepts at 0.5, the cut-points at the empirical
    cumulative logits (where the PyMC graph starts them)."""
    x = np.zeros(lay.ndim)
    for name in ("sigma_question", "sigma_rater"):
        if name in lay.shapes:
            o = lay.offsets[name]
            x[o : o + lay.shapes[name][0]] = math.log(0.5)
    cut0 = np.asarray(data.initial_cuts, float)
    raw0 = np.concatenate([cut0[..., :1], np.log(np.maximum(np.diff(cut0, axis=-1), 1e-3))], -1)
    o = lay.offsets["cutpoints"]
    x[o : o + raw0.size] = raw0.reshape(-1)
    return x


def length_density(
    data: OrdinalData, priors: Mapping[str, Prior], *, form: SamplingForm | None = SAMPLING_FORM
) -> Density:
    """The LengthEffect log density (logit link) with its hand-written gradient and C
    callback, for NUTS by nutpie and the MAP by L-BFGS.

    ``form``: the parametrisation of the sampled vector (:class:`SamplingForm`; None: the
    PyMC graph's value variables, so that ``logp_grad`` equals ``compile_logp()`` of
    ``LengthEffect().build_model(data)``). The density's ``map_form`` is the PyMC graph's
    form: ``method="map"`` gives the mode of the PyMC graph's log density on its
    unconstrained scale (log-Jacobians included), whichever form NUTS samples.

    Examples
    --------
    >>> from raterstats.models.length_effect import LengthEffect
    >>> from raterstats.simulate import clinical_qa_study
    >>> m = LengthEffect()
    >>> data = m.prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> d = length_density(data, m.default_priors)
    >>> lp, grad = d.logp_grad(d.initial_point(np.random.default_rng(0)))
    >>> bool(np.isfinite(lp)), grad.shape == (d.ndim,)
    (True, True)
    """
    from raterstats.models.kernels_length import (
        length_form_logp_grad,
        length_logp_cb,
        model_coordinates,
    )
    from raterstats.nutpie_callbacks import callback_buffer

    lay = length_layout(data, priors, form=form)
    ints, floats, ndim = lay.ints, lay.floats, lay.ndim

    def logp_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
        g = np.empty(ndim)
        lp = length_form_logp_grad(np.ascontiguousarray(x, dtype=np.float64), g, ints, floats)
        return float(lp), g

    def to_model(y: np.ndarray) -> np.ndarray:
        x = np.empty(ndim)
        model_coordinates(np.ascontiguousarray(y, dtype=np.float64), ints, x)
        return x

    def expand(x: np.ndarray) -> dict[str, np.ndarray]:
        return constrained_values(to_model(x), lay, priors)

    def expand_draws(xs: np.ndarray) -> dict[str, np.ndarray]:
        # every draw's model coordinates, then the constrained values of all at once
        # (constrained_values takes leading dimensions): 4,000 draws in about 0.05 s where
        # one call per draw took 0.4 s
        ys = np.ascontiguousarray(xs, dtype=np.float64).reshape(-1, ndim)
        models = np.empty_like(ys)
        for i in range(ys.shape[0]):
            model_coordinates(ys[i], ints, models[i])
        return constrained_values(models, lay, priors)

    x0 = from_model_coordinates(initial_point(data, lay), lay, form)

    def start(rng: np.random.Generator) -> np.ndarray:
        return x0 + rng.uniform(-0.1, 0.1, ndim)

    probe = expand(x0)
    used = {d for k in probe for d in VARIABLE_DIMS[k]}
    return Density(
        ndim=ndim,
        logp_grad=logp_grad,
        expand=expand,
        expand_draws=expand_draws,
        var_shapes={k: tuple(np.shape(v)) for k, v in probe.items()},
        var_dims={k: VARIABLE_DIMS[k] for k in probe},
        coords={k: v for k, v in data.coords.items() if k in used},
        initial_point=start,
        c_logp=length_logp_cb,
        c_data=callback_buffer(ints, floats),
        map_form=None if form is None else (lambda: length_density(data, priors, form=None)),
    )


def from_model_coordinates(
    x: np.ndarray, lay: LengthLayout, form: SamplingForm | None
) -> np.ndarray:
    """The vector of the sampling ``form`` of the PyMC graph's unconstrained vector ``x``
    (the inverse of :func:`raterstats.models.kernels_length.model_coordinates`).

    Examples
    --------
    >>> from raterstats.models.length_effect import LengthEffect
    >>> from raterstats.simulate import clinical_qa_study
    >>> m = LengthEffect()
    >>> data = m.prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> lay = length_layout(data, m.default_priors, form=SAMPLING_FORM)
    >>> x = np.random.default_rng(0).normal(size=lay.ndim)
    >>> y = from_model_coordinates(x, lay, SAMPLING_FORM)
    >>> bool(np.allclose(lay.block("length_effect", y), lay.block("length_effect", x)))
    True
    """
    y = np.array(x, dtype=float)
    if form is None:
        return y

    def to_form(name: str, z: np.ndarray, sig: np.ndarray, centred: bool) -> np.ndarray:
        # z (n, D) standard normal coordinates -> the block of the form; returns the mean
        # intercept per dimension
        e = z * sig if centred else z.copy()
        n = e.shape[0]
        if form.rotate:
            rn = np.sqrt(n)
            v = np.empty_like(e)
            v[0] = e.sum(axis=0) / rn
            # the adjoint of the zero-sum isometry gives the deviations' coordinates
            tot = e[:-1].sum(axis=0)
            v[1:] = e[:-1] - tot / (rn + n) - e[-1] / rn
        else:
            v = e
        o = lay.offsets[name]
        y[o : o + v.size] = v.reshape(-1)
        return (z * sig).mean(axis=0)

    shift = -to_form(
        "rater_z",
        lay.block("rater_z", x),
        np.exp(lay.block("sigma_rater", x)),
        form.centred_raters,
    )
    if "question_z" in lay.shapes:
        shift = shift + to_form(
            "question_z",
            lay.block("question_z", x),
            np.exp(lay.block("sigma_question", x)),
            form.centred_questions,
        )
    if form.shift_cuts:
        raw = lay.block("cutpoints", y).copy()
        raw[..., 0] -= shift[:, None]
        o = lay.offsets["cutpoints"]
        y[o : o + raw.size] = raw.reshape(-1)
    return y
    sr = np.exp(lay.block("sigma_rater", x))
    sev = lay.block("rater_z", x) * sr
    shift = -sev.mean(axis=0)
    if form.centred_raters:
        o = lay.offsets["rater_z"]
        y[o : o + sev.size] = sev.reshape(-1)
    if "question_z" in lay.shapes:
        q = lay.block("question_z", x) * np.exp(lay.block("sigma_question", x))
        shift = shift + q.mean(axis=0)
        if form.centred_questions:
            o = lay.offsets["question_z"]
            y[o : o + q.size] = q.reshape(-1)
    if form.shift_cuts:
        raw = lay.block("cutpoints", y).copy()
        raw[..., 0] -= shift[:, None]
        o = lay.offsets["cutpoints"]
        y[o : o + raw.size] = raw.reshape(-1)
    return y


def _answer_intercepts(post: xr.Dataset, data: OrdinalData) -> np.ndarray:
    """eta[chain, draw, item, dimension] = system effect + question effect."""
    nd = len(data.coords["dimension"])
    eta = np.zeros((post.sizes["chain"], post.sizes["draw"], len(data.coords["item"]), nd))
    if "system_effect" in post:
        s = post["system_effect"].transpose("chain", "draw", "system", "dimension").values
        eta += np.take(s, data.item_system, axis=2)
    if "question_effect" in post:
        q = post["question_effect"].transpose("chain", "draw", "question", "dimension").values
        eta += np.take(q, data.item_question, axis=2)
    return eta


def answer_log_likelihood(
    post: xr.Dataset, data: OrdinalData, link: str, *, compiled: bool | None = None
) -> xr.Dataset:
    """Pointwise log-likelihood of a LengthEffect fit per answer x design (summed over its
    ratings; NaN where the answer was not rated under that design), dims ``(chain, draw,
    item, design)``.

    ``compiled``: the numba kernel (logit link only) or NumPy; default (None): the kernel
    for the logit link.

    Examples
    --------
    >>> from raterstats.models.length_effect import LengthEffect
    >>> from raterstats.simulate import clinical_qa_study
    >>> m = LengthEffect()
    >>> data = m.prepare(clinical_qa_study(n_questions=4, random_seed=1).ratings)
    >>> lay = length_layout(data, m.default_priors)
    >>> v = constrained_values(np.zeros((1, 2, lay.ndim)), lay, m.default_priors)
    >>> post = xr.Dataset({k: (("chain", "draw", *VARIABLE_DIMS[k]), a) for k, a in v.items()})
    >>> fast = answer_log_likelihood(post, data, "logit")["answer"]
    >>> slow = answer_log_likelihood(post, data, "logit", compiled=False)["answer"]
    >>> bool(np.allclose(fast, slow, equal_nan=True)), fast.dims
    (True, ('chain', 'draw', 'item', 'design'))
    """
    if compiled is None:
        compiled = link == "logit"
    if compiled and link != "logit":
        raise ValueError(f"the compiled log-likelihood implements the logit link, not {link!r}")
    nc, ndr = post.sizes["chain"], post.sizes["draw"]
    ni, ng = len(data.coords["item"]), len(data.coords["design"])
    eta = _answer_intercepts(post, data)
    beta = post["length_effect"].transpose("chain", "draw", "dimension", "design").values
    sev = post["severity"].transpose("chain", "draw", "rater", "dimension").values
    cuts = post["cutpoints"].transpose("chain", "draw", "dimension", "design", "cut").values
    if compiled:
        from raterstats.models.kernels_length import length_answer_loglik

        lay = length_layout(data, None)
        s = nc * ndr
        out = np.empty((s, ni * ng))
        args = [
            np.ascontiguousarray(a.reshape(s, *a.shape[2:]), dtype=np.float64)
            for a in (eta, beta, sev, cuts)
        ]

        e, b, v, c = args

        def run(lo: int, hi: int) -> None:
            length_answer_loglik(
                e[lo:hi], b[lo:hi], v[lo:hi], c[lo:hi], lay.ints, lay.floats, out[lo:hi]
            )

        over_halves(run, s)
        summed = out.reshape(nc, ndr, ni, ng)
        present = lay.item_design_rated
    else:
        lp = (
            eta[:, :, data.obs_item, data.obs_dim]
            + beta[:, :, data.obs_dim, data.obs_design] * data.z_length[data.obs_item]
            - sev[:, :, data.obs_rater, data.obs_dim]
        )
        cut = cuts[:, :, data.obs_dim, data.obs_design]
        edge = np.full((*cut.shape[:-1], 1), np.inf)
        pad = np.concatenate([-edge, cut, edge], axis=-1)
        idx = np.arange(data.n_obs)
        ll = interval_logp(pad[:, :, idx, data.y] - lp, pad[:, :, idx, data.y + 1] - lp, link)
        key = data.obs_item * ng + data.obs_design
        onehot = np.zeros((data.n_obs, ni * ng))
        onehot[idx, key] = 1.0
        summed = (ll @ onehot).reshape(nc, ndr, ni, ng)
        present = onehot.sum(0).reshape(ni, ng) > 0
    summed[..., ~present] = np.nan
    return xr.Dataset(
        {"answer": (("chain", "draw", "item", "design"), summed)},
        coords={"item": data.coords["item"], "design": data.coords["design"]},
        attrs={
            "note": "log-likelihood of all ratings of an answer under a design; NaN where "
            "the answer was not rated under that design"
        },
    )


__all__ = [
    "SAMPLING_FORM",
    "VARIABLE_DIMS",
    "LengthLayout",
    "SamplingForm",
    "answer_log_likelihood",
    "constrained_values",
    "density_problem",
    "from_model_coordinates",
    "initial_point",
    "length_density",
    "length_layout",
]
