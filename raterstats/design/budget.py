"""Annotation budgets: projected reliability and ranking certainty of other designs
(raters per item, sentences per answer) against their cost in rater hours.

:func:`reliability_projection` projects the reliability of an answer's score from the
fitted :class:`~raterstats.OrdinalRaters` model (closed form); :func:`annotation_budget`
adds simulated ranking certainty (:func:`simulate_ranking_task`, run in parallel by
:func:`run_tasks` on local processes, an executor or a Dask cluster) and the cost from
:func:`rating_costs`; :func:`cheapest_design` picks the cheapest design that reaches a
target.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, Literal

import numpy as np
import polars as pl
import xarray as xr
from scipy.special import expit

from raterstats import defaults as D
from raterstats import schema as S
from raterstats.checks import check_counts
from raterstats.design.cluster import check_client, run_on_client
from raterstats.design.compare import check_ordinal_fit, thin_posterior
from raterstats.health import flag_result
from raterstats.intervals import SAMPLE_DIMS, eti
from raterstats.models import is_fit_of
from raterstats.models.latent_class import LatentClassModel
from raterstats.ratings import Ratings


def _projection_parts(dt: xr.DataTree) -> dict[str, xr.DataArray]:
    """Latent answer variance, sentence variance and per-rating error variance (on the
    latent scale) per draw, dimension and design."""
    post = dt["posterior"].to_dataset()
    const = dt["constant_data"].to_dataset()
    var_link = np.pi**2 / 3 if const.attrs["link"] == "logit" else 1.0
    human = np.flatnonzero(const["rater_is_human"].values)
    lam2 = post["discrimination"].isel(rater=human) ** 2
    err = (var_link / lam2).mean("rater")  # chain, draw, dimension, design
    tau2 = (
        post["sigma_sentence"] ** 2
        if "sigma_sentence" in post
        else xr.zeros_like(post["eta"].isel(item=0, drop=True))
    )
    has_sent = xr.DataArray(
        const["design_has_sentences"].values,
        dims="design",
        coords={"design": post["design"].values},
    )
    return {
        "var_eta": post["eta"].var("item"),
        "tau2": tau2 * has_sent,
        "err": err,
        "has_sent": has_sent,
    }


def reliability_projection(
    dt: xr.DataTree,
    *,
    n_raters: Iterable[int] = range(1, 6),
    n_sentences: Iterable[int] = range(1, 7),
) -> xr.DataArray:
    """Model-based reliability of an answer's score for ``r`` raters and ``k`` sentences.

    The answer score is the mean of ``r`` raters' ratings (sentence-level designs: of
    ``k`` sentences, the same for every rater) on the latent scale; its reliability is
    ``Var(eta) / (Var(eta) + tau^2 / k + E_j[Var(link) / lambda_j^2] / (r k))`` per draw,
    dimension and design (``k = 1`` and no ``tau`` term for whole-answer designs), the
    Spearman-Brown logic of generalizability theory applied to the fitted rater model.

    Returns
    -------
    xr.DataArray
        Dims ``chain, draw, dimension, design, n_raters, k`` (a posterior).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> post = xr.Dataset({
    ...     "eta": (("chain", "draw", "item", "dimension"), [[[[0.0], [2.0]]]]),
    ...     "discrimination": (("chain", "draw", "rater", "dimension", "design"),
    ...                        np.full((1, 1, 1, 1, 1), np.pi / np.sqrt(3)))},
    ...     coords={"design": ["coarse"], "dimension": ["c"]})
    >>> const = xr.Dataset({"rater_is_human": ("rater", [True]),
    ...                     "design_has_sentences": ("design", [False])},
    ...                    attrs={"link": "logit"})
    >>> dt = xr.DataTree.from_dict({"posterior": post, "constant_data": const})
    >>> dt.attrs["model"] = "ordinal_raters"
    >>> rel = reliability_projection(dt, n_raters=[1, 3], n_sentences=[1])
    >>> rel.sel(n_raters=3, k=1).values.ravel().tolist()  # Var(eta) = 1, error 1 / 3
    [0.75]
    """
    check_ordinal_fit(dt, "reliability_projection")
    parts = _projection_parts(dt)
    r = xr.DataArray(np.asarray(list(n_raters), dtype=float), dims="n_raters")
    k = xr.DataArray(np.asarray(list(n_sentences), dtype=float), dims="k")
    k_eff = xr.where(parts["has_sent"], k, 1.0)
    noise = parts["tau2"] / k_eff + parts["err"] / (r * k_eff)
    rel = parts["var_eta"] / (parts["var_eta"] + noise)
    return (
        rel.assign_coords(n_raters=r.values.astype(int), k=k.values.astype(int))
        .transpose("chain", "draw", "dimension", "design", "n_raters", "k")
        .rename("reliability")
    )


def rating_costs(ratings: Ratings) -> dict[str, float]:
    """Seconds of a human rater per answer (whole-answer designs) or per sentence
    (sentence-level designs), from ``duration_s`` (one duration per rater x answer x
    design, repeated on the answer's rows).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a", "a", "b"], "segment": ["1", "2", None],
    ...     "rater": ["x", "x", "x"], "rating": [1, 2, 3], "duration_s": [60.0, 60.0, 40.0],
    ...     "design": ["fine", "fine", "coarse"]}))
    >>> rating_costs(r)
    {'coarse': 40.0, 'fine': 30.0}
    """
    d = ratings.data
    if S.DURATION not in d.columns:
        raise ValueError("rating_costs: the ratings have no 'duration_s' column")
    if S.RATER_KIND in d.columns:
        d = d.filter(pl.col(S.RATER_KIND) == "human")
    ev = (
        d.filter(~pl.col(S.REPEAT), pl.col(S.DURATION).is_not_null())
        .group_by(S.DESIGN, S.ITEM, S.RATER)
        .agg(
            pl.col(S.DURATION).first().alias("t"),
            pl.col(S.SEGMENT).n_unique().alias("ns"),
            pl.col(S.SEGMENT).null_count().alias("nn"),
        )
        .sort(S.DESIGN, S.ITEM, S.RATER)  # a fixed order: the same mean to the last bit
    )
    out = {}
    for (des,), part in ev.group_by(S.DESIGN, maintain_order=True):  # sorted above
        segmented = bool((part["nn"] == 0).all())
        unit_t = part["t"] / part["ns"].cast(pl.Float64) if segmented else part["t"]
        out[str(des)] = float(np.mean(unit_t.to_numpy()))
    return dict(sorted(out.items()))


def unit_costs(
    ratings: Ratings,
    seconds_per_unit: Mapping[str, float] | None,
    designs: Iterable[str],
    what: str,
) -> dict[str, float]:
    """Seconds of a human rater per answer (whole-answer designs) or per sentence
    (sentence-level designs) of every design: ``seconds_per_unit`` where given, else
    :func:`~raterstats.design.budget.rating_costs` of ``ratings`` (their ``duration_s``).

    Parameters
    ----------
    ratings : Ratings
        The fitted ratings.
    seconds_per_unit : mapping of str to float, optional
        ``{design: seconds}`` for every design (positive); for data without durations.
    designs : iterable of str
        The designs that need a cost.
    what : str
        The caller's name, for messages.

    Returns
    -------
    dict
        ``{design: seconds}`` for every design of ``designs``.

    Raises
    ------
    ValueError
        No durations and no ``seconds_per_unit``, a design without a cost, or a cost that
        is not a positive number.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_ratings
    >>> r = read_ratings(pl.DataFrame({"item": ["a"], "rater": ["x"], "rating": [1]}))
    >>> unit_costs(r, {"default": 30}, ["default"], "f")
    {'default': 30.0}
    """
    designs = list(designs)
    if seconds_per_unit is None:
        if S.DURATION not in ratings.data.columns:
            raise ValueError(
                f"{what}: the ratings have no 'duration_s' column; pass seconds_per_unit="
                "{design: seconds per answer (whole-answer designs) or per sentence}"
            )
        costs = rating_costs(ratings)
        source = "ratings"
    else:
        if not isinstance(seconds_per_unit, Mapping):
            raise ValueError(
                f"{what}: seconds_per_unit must be a mapping {{design: seconds}}, got "
                f"{type(seconds_per_unit).__name__}"
            )
        costs = {}
        for des, sec in seconds_per_unit.items():
            try:
                val = float(sec)
            except (TypeError, ValueError):
                val = float("nan")
            if not np.isfinite(val) or val <= 0:
                raise ValueError(
                    f"{what}: seconds_per_unit[{des!r}] must be a positive number, got {sec!r}"
                )
            costs[str(des)] = val
        source = "seconds_per_unit"
    missing = [g for g in designs if g not in costs]
    if missing:
        hint = "" if source == "seconds_per_unit" else "; pass seconds_per_unit= for them"
        raise ValueError(f"{what}: no durations for designs {missing} in {source}{hint}")
    return {g: costs[g] for g in designs}


def tau_and_recovery(true: np.ndarray, est: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b of each row of ``est`` with the same row of ``true`` (rows: e.g.
    dimensions; columns: systems), from the signs of all pairs at once (a few systems: sign
    matrices beat sorting), and whether every pair is ordered as in the truth (a tie is not
    recovered). A row that ties every system orders no pair: tau 0 (tau-b is undefined).

    Examples
    --------
    >>> tau, rec = tau_and_recovery(np.array([[1.0, 2, 3], [1, 2, 3]]),
    ...                             np.array([[1.0, 2, 3], [3, 1, 1]]))
    >>> tau.round(3).tolist(), rec.tolist()
    ([1.0, -0.816], [True, False])
    """
    order_true = np.sign(true[:, :, None] - true[:, None, :])
    order_est = np.sign(est[:, :, None] - est[:, None, :])
    concordance = (order_true * order_est).sum(axis=(1, 2))
    scale = np.sqrt((order_true**2).sum(axis=(1, 2)) * (order_est**2).sum(axis=(1, 2)))
    tau = np.divide(concordance, scale, out=np.zeros(len(true)), where=scale > 0)
    return tau, (order_true == order_est).all(axis=(1, 2))


def simulate_ranking_task(task: dict[str, Any]) -> tuple[int, np.ndarray, np.ndarray]:
    """One projection task of :func:`annotation_budget`: for every posterior draw given,
    simulate a study with ``r`` raters per answer and ``k`` sentences and compare its
    system ranking with the draw's true one (module level, so that process pools can run
    it).

    Parameters
    ----------
    task : dict
        ``eta`` (draw, item, dimension) latent answer quality; ``lam``, ``sev`` and
        ``beta`` (draw, rater, dimension) discrimination, severity and length effect of
        the human panel; ``cuts`` (draw, dimension, cut) cut-points; ``tau`` (draw,
        dimension) sentence standard deviation; ``z`` (item) standardised length;
        ``item_system`` (item) system index; ``r`` raters per answer, ``k`` sentences,
        ``sentences`` (whether the design rates sentences); ``id`` and ``seed``.

    Returns
    -------
    (id, recovered, tau) : tuple
        The task id, whether the study ordered every pair of systems as the truth did
        and its Kendall tau-b with the truth (0 when it ties every system), both
        (draw, dimension).

    Examples
    --------
    >>> import numpy as np
    >>> task = {"eta": np.repeat([100.0, 0.0, -100.0], 2)[None, :, None],
    ...         "lam": np.ones((1, 2, 1)), "sev": np.zeros((1, 2, 1)),
    ...         "beta": np.zeros((1, 2, 1)), "cuts": np.array([[[-50.0, -40.0, 40.0, 50.0]]]),
    ...         "tau": np.zeros((1, 1)), "z": np.zeros(6),
    ...         "item_system": np.repeat(np.arange(3), 2), "r": 2, "k": 1,
    ...         "sentences": False, "id": 7, "seed": 1}
    >>> tid, rec, tau = simulate_ranking_task(task)
    >>> tid, rec.tolist(), tau.tolist()
    (7, [[1.0]], [[1.0]])
    """
    rng = np.random.default_rng(task["seed"])
    eta = task["eta"]  # S, item, dim
    lam, sev = task["lam"], task["sev"]  # S, rater, dim
    cuts = task["cuts"]  # S, dim, K-1
    tau_s = task["tau"]  # S, dim
    beta = task["beta"]  # S, rater, dim
    z = task["z"]  # item
    item_sys = task["item_system"]
    n_sys = int(item_sys.max()) + 1
    r, k, sent = task["r"], task["k"], task["sentences"]
    n_s, n_i, n_d = eta.shape
    n_raters = lam.shape[1]
    levels = np.arange(1, cuts.shape[-1] + 2, dtype=float)
    onehot = (item_sys[:, None] == np.arange(n_sys)).astype(float) / np.bincount(item_sys)
    true = eta.transpose(0, 2, 1) @ onehot  # S, dim, system
    rec = np.empty((n_s, n_d))
    taus = np.empty((n_s, n_d))
    kk = k if sent else 1
    for s in range(n_s):
        who = np.argsort(rng.random((n_i, n_raters)), axis=1)[:, :r]  # item, r
        w = rng.normal(size=(n_i, kk, n_d)) * tau_s[s] if sent else np.zeros((n_i, 1, n_d))
        lat = eta[s][:, None, :] + w  # item, k, dim
        lp = (
            lam[s][who][:, :, None, :] * lat[:, None]
            - sev[s][who][:, :, None, :]
            + beta[s][who][:, :, None, :] * z[:, None, None, None]
        )  # item, r, k, dim
        cum = expit(cuts[s][None, None, None] - lp[..., None])
        u = rng.random((*lp.shape, 1))
        y = levels[(u > cum).sum(-1)]
        item_score = y.mean(axis=(1, 2))  # item, dim
        est = item_score.T @ onehot  # dim, system
        taus[s], rec[s] = tau_and_recovery(true[s], est)
    return task["id"], rec, taus


def make_executor(
    *, max_workers: int | None, client: Any, start_method: str | None = None
) -> Executor | None:
    """The executor of :func:`run_tasks` when none is given.

    Parameters
    ----------
    max_workers : int, optional
        Local worker processes (``None``: one per core).
    client : dask.distributed.Client, optional
        A Dask client: its ``get_executor()`` wins over ``max_workers`` (an error when it
        is not a ``Client`` or dask is not installed: ``pip install raterstats[dask]``).
    start_method : str, optional
        How local workers start (:mod:`multiprocessing`: ``"spawn"``, ``"forkserver"``,
        ``"fork"``); default the platform's. Tasks that use polars need ``"spawn"``: a
        forked copy of a process whose polars threads hold locks can hang.

    Returns
    -------
    concurrent.futures.Executor or None
        The Dask executor, a :class:`~concurrent.futures.ProcessPoolExecutor` (the caller
        shuts it down), or ``None`` for one worker (run in this process).

    Examples
    --------
    >>> make_executor(max_workers=1, client=None) is None
    True
    """
    if client is not None:
        return check_client(client, "make_executor").get_executor()
    workers = (os.cpu_count() or 1) if max_workers is None else int(max_workers)
    if workers <= 1:
        return None
    if start_method is None:
        return ProcessPoolExecutor(max_workers=workers)
    import multiprocessing

    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(start_method)
    )


def run_tasks(
    fn: Callable[[Any], Any],
    tasks: list[Any],
    *,
    max_workers: int | None,
    executor: Executor | None,
    client: Any,
    start_method: str | None = None,
) -> list[Any]:
    """``fn`` over ``tasks``, results in the order of ``tasks``: on ``executor``, on the
    Dask ``client`` (:func:`~raterstats.design.cluster.run_on_client`: values that several
    tasks share are scattered once), on ``max_workers`` local processes
    (:func:`make_executor`, shut down afterwards), or here (one worker).

    Parameters
    ----------
    fn : callable
        A module-level function of one task (process pools pickle it).
    tasks : list
        The tasks.
    max_workers : int, optional
        Local worker processes (``None``: one per core; 1 runs here).
    executor : concurrent.futures.Executor, optional
        Run on this executor (left open).
    client : dask.distributed.Client, optional
        Run on this Dask cluster (``executor`` and ``client`` together are an error).
    start_method : str, optional
        How local worker processes start (see :func:`make_executor`).

    Returns
    -------
    list
        ``fn(task)`` for each task.

    Examples
    --------
    >>> run_tasks(abs, [-1, 2, -3], max_workers=1, executor=None, client=None)
    [1, 2, 3]
    """
    if client is not None:
        if executor is not None:
            raise ValueError("run_tasks: pass executor= or client=, not both")
        return run_on_client(client, fn, tasks, getattr(fn, "__name__", "run_tasks"))
    own = None
    ex = executor
    if ex is None:
        ex = own = make_executor(max_workers=max_workers, client=client, start_method=start_method)
    try:
        return list(ex.map(fn, tasks)) if ex is not None else [fn(t) for t in tasks]
    finally:
        if own is not None:
            own.shutdown()


def annotation_budget(
    dt: xr.DataTree,
    ratings: Ratings,
    *,
    n_raters: Iterable[int] = range(1, 6),
    n_sentences: Iterable[int] = range(1, 7),
    n_sims: int = 100,
    max_workers: int | None = None,
    executor: Executor | None = None,
    client: Any = None,
    random_seed: int = D.RANDOM_SEED,
    seconds_per_unit: Mapping[str, float] | None = None,
    score_map: Any = None,
    rule: Any = None,
) -> xr.Dataset:
    """Projected reliability, ranking certainty and cost of other annotation designs.

    For every design of the fit, ``r`` raters per answer (``n_raters``) and, for
    sentence-level designs, ``k`` sentences per answer (``n_sentences``): the model-based
    reliability of the answer score (:func:`reliability_projection`, posterior mean), and
    from ``n_sims`` simulated studies (one posterior draw each: the fitted answers'
    latent quality, rater parameters drawn from the fitted human panel, new sentence
    deviations, ordered-logistic ratings) the probability that the study's system ranking
    (by mean rating) equals the true one (by mean latent quality of the same answers;
    every pair ordered as in the truth, so a tie is not a recovery) and the expected
    Kendall tau-b between the two (0 for a simulated study that ties every system, where
    tau-b is undefined); and the cost in rater hours,
    ``answers x r x`` seconds per answer (whole-answer designs) or ``k x`` seconds per
    sentence (:func:`rating_costs` of ``ratings``).

    A MACE or Dawid-Skene fit gets the categorical version
    (:func:`~raterstats.design.budget_categorical.annotation_budget_categorical`): the same
    dims, with the probability that the majority-vote and the model's label of a unit are
    correct (``p_correct_majority``, ``p_correct_model``) and Cohen's kappa of the model's
    label with the truth as ``reliability``, by simulation from the posterior.

    This projects other sizes of the fitted rating designs. To compare kinds of judgment
    (absolute ratings against pairwise comparisons or rankings of the same systems, at a
    declared cost per judgment), use
    :func:`~raterstats.design.kinds.compare_design_kinds`, which simulates every kind from
    one declared truth; :func:`cheapest_design` reads both results.

    Parameters
    ----------
    dt : xr.DataTree
        An :class:`~raterstats.OrdinalRaters` fit with system effects, or a MACE /
        Dawid-Skene fit.
    ratings : Ratings
        The fitted ratings (for the costs, from ``duration_s``).
    n_sims : int
        Simulated studies per design point (0: reliability and cost only).
    max_workers : int, optional
        Local worker processes (default: the number of cores; 1 runs in this process).
    executor : concurrent.futures.Executor, optional
        Run the simulations on this executor instead.
    client : dask.distributed.Client, optional
        Spread the sweep over a Dask cluster (dask is optional: ``pip install
        raterstats[dask]``); the posterior draws every task needs are scattered once.
    random_seed : int
        Seed; every task gets its own stream, so results do not depend on the executor.
    seconds_per_unit : mapping of str to float, optional
        ``{design: seconds per answer (whole-answer designs) or per sentence}``: the costs
        for ratings without durations (default: :func:`rating_costs` of ``ratings``; an
        error when they have no ``duration_s``).
    score_map : optional
        Categorical fits only: how a label is scored for the system ranking (as in
        :func:`raterstats.rank_systems`).
    rule : optional
        Categorical fits only: the segment rule that gives an answer its label from ``k``
        sentences in sentence-level designs (default: report per sentence).

    Returns
    -------
    xr.Dataset
        Dims ``dimension``, ``design``, ``n_raters``, ``k``: ``reliability``,
        ``reliability_low`` / ``reliability_high`` (90%), ``p_recovered``,
        ``expected_tau``, and ``cost_hours`` (``design, n_raters, k``); the coordinate
        ``has_sentences`` marks sentence-level designs. Whole-answer designs repeat their
        values along ``k``. Sentence-level projections assume answers with at least ``k``
        sentences. ``attrs["fit_warning"]`` / ``attrs["uncertainty_note"]``: the fit's
        health (:func:`raterstats.health.flag_result`).

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> from raterstats.models import OrdinalRaters
    >>> r = clinical_qa_study(n_questions=4, random_seed=1).ratings
    >>> dt = OrdinalRaters().fit(r, draws=30, tune=30, chains=1, random_seed=1, progress=False)
    >>> b = annotation_budget(dt, r, n_raters=[1, 3], n_sentences=[2], n_sims=5,
    ...                       max_workers=1, random_seed=1)
    >>> b["p_recovered"].dims
    ('dimension', 'design', 'n_raters', 'k')
    """
    what = "annotation_budget"
    if is_fit_of(dt, LatentClassModel):
        # imported here: the categorical version builds on this module's executor
        from raterstats.design.budget_categorical import annotation_budget_categorical

        return annotation_budget_categorical(
            dt, ratings, n_raters=n_raters, n_sentences=n_sentences, n_sims=n_sims,
            max_workers=max_workers, executor=executor, client=client,
            random_seed=random_seed, seconds_per_unit=seconds_per_unit, score_map=score_map,
            rule=rule,
        )  # fmt: skip
    check_counts(where=what, n_sims=(n_sims, 0))
    check_ordinal_fit(dt, what)
    if score_map is not None or rule is not None:
        raise ValueError(
            f"{what}: score_map and rule apply to categorical fits (MACE, DawidSkene); an "
            "ordinal fit ranks by the mean rating and projects the answer score"
        )
    post = dt["posterior"].to_dataset()
    const = dt["constant_data"].to_dataset()
    if "system_effect" not in post:
        raise ValueError(f"{what}: the fit has no system effects (no 'system' column)")
    rs = [int(x) for x in n_raters]
    ks = [int(x) for x in n_sentences]
    human = np.flatnonzero(const["rater_is_human"].values)
    if not rs or min(rs) < 1 or max(rs) > human.size:
        raise ValueError(
            f"{what}: n_raters must lie in 1..{human.size} (the fitted panel), got {rs}"
        )
    if not ks or min(ks) < 1:
        raise ValueError(f"{what}: n_sentences must be positive, got {ks}")
    dims = [str(d) for d in post["dimension"].values]
    designs = [str(g) for g in post["design"].values]
    rel = reliability_projection(dt, n_raters=rs, n_sentences=ks)
    r_lo, r_hi = eti(rel, 0.9)
    designs_all = [str(g) for g in post["design"].values]
    costs = unit_costs(ratings, seconds_per_unit, designs_all, what)
    n_items = post.sizes["item"]
    has_sent = dict(zip(designs, const["design_has_sentences"].values.astype(bool), strict=True))
    cost = np.zeros((len(designs), len(rs), len(ks)))
    for g, des in enumerate(designs):
        per = np.asarray(ks, dtype=float) if has_sent[des] else np.ones(len(ks))
        cost[g] = n_items * np.asarray(rs, dtype=float)[:, None] * per[None, :] * costs[des] / 3600
    shape = (len(dims), len(designs), len(rs), len(ks))
    p_rec = np.full(shape, np.nan)
    e_tau = np.full(shape, np.nan)
    if n_sims:
        rng = np.random.default_rng(random_seed)
        thin = thin_posterior(post, n_sims, rng)
        sq = lambda v, *d: thin[v].transpose("chain", "draw", *d).values[0]  # noqa: E731
        item_sys_names = const["item_system"].values.astype(str)
        systems = [str(s) for s in post["system"].values]
        item_system = np.asarray([systems.index(s) for s in item_sys_names])
        z = const["z_length"].values.astype(float)
        has_len = "length_effect" in thin
        tasks = []
        seeds = np.random.SeedSequence(random_seed).spawn(len(designs) * len(rs) * len(ks))
        tid = 0
        # one object each, shared by every task (a Dask client scatters them once)
        common = {
            "eta": sq("eta", "item", "dimension"),
            "tau": sq("sigma_sentence", "dimension")
            if "sigma_sentence" in thin
            else np.zeros((thin.sizes["draw"], len(dims))),
            "z": z,
            "item_system": item_system,
        }
        for g, des in enumerate(designs):
            lam = sq("discrimination", "rater", "dimension", "design")[..., g][:, human]
            sev = sq("severity", "rater", "dimension", "design")[..., g][:, human]
            beta = (
                np.broadcast_to(
                    sq("length_effect", "dimension", "design")[..., g][:, None, :], lam.shape
                ).copy()
                if has_len
                else np.zeros_like(lam)
            )
            base = {
                **common,
                "lam": lam,
                "sev": sev,
                "beta": beta,
                "cuts": sq("cutpoints", "dimension", "design", "cut")[:, :, g],
                "sentences": bool(has_sent[des]),
            }
            for a, r in enumerate(rs):
                for b, k in enumerate(ks):
                    if not has_sent[des] and b > 0:
                        tid += 1
                        continue
                    tasks.append(
                        {**base, "r": r, "k": k, "id": tid, "seed": seeds[tid], "where": (g, a, b)}
                    )
                    tid += 1
        results = run_tasks(
            simulate_ranking_task,
            tasks,
            max_workers=max_workers,
            executor=executor,
            client=client,
        )
        where = {t["id"]: t["where"] for t in tasks}
        for task_id, rec, taus in results:
            g, a, b = where[task_id]
            p_rec[:, g, a, b] = rec.mean(axis=0)
            e_tau[:, g, a, b] = taus.mean(axis=0)
        for g, des in enumerate(designs):
            if not has_sent[des]:
                p_rec[:, g] = p_rec[:, g, :, :1]
                e_tau[:, g] = e_tau[:, g, :, :1]
    dd = ("dimension", "design", "n_raters", "k")
    out = xr.Dataset(
        {
            "reliability": rel.mean(SAMPLE_DIMS).transpose(*dd),
            "reliability_low": r_lo.transpose(*dd),
            "reliability_high": r_hi.transpose(*dd),
            "p_recovered": (dd, p_rec),
            "expected_tau": (dd, e_tau),
            "cost_hours": (("design", "n_raters", "k"), cost),
        },
        coords={
            "dimension": dims,
            "design": designs,
            "n_raters": rs,
            "k": ks,
            "has_sentences": ("design", [bool(has_sent[g]) for g in designs]),
        },
        attrs={
            "n_sims": n_sims,
            "n_items": n_items,
            "seconds_per_unit": ", ".join(f"{g} {v:.1f}" for g, v in costs.items()),
        },
    )
    return flag_result(out, dt)


def cheapest_design(
    budget: xr.Dataset,
    *,
    target: float,
    on: Literal[
        "reliability",
        "p_recovered",
        "expected_tau",
        "p_correct_majority",
        "p_correct_model",
        "p_best_first",
        "mean_tau",
    ] = "reliability",
) -> pl.DataFrame:
    """The cheapest design point of :func:`annotation_budget` that reaches ``target`` on
    ``on``, per dimension and for all dimensions at once (the worst dimension must reach
    it; a design point that is NaN on some dimension, such as a design that does not rate
    it, does not count for all dimensions). Columns ``dimension, design, n_raters, k,
    criterion, target, value, cost_hours``; dimensions without a design that reaches the
    target are left out. ``on`` is ``reliability``, ``p_recovered`` or ``expected_tau``;
    for a budget of a categorical fit also ``p_correct_majority`` or ``p_correct_model``.

    A result of :func:`~raterstats.design.kinds.compare_design_kinds` (absolute ratings,
    pairs and rankings compared) goes to :func:`~raterstats.design.kinds.cheapest_kind`:
    ``on`` is then ``p_recovered``, ``p_best_first`` or ``mean_tau``, and the one row (or
    none) has columns ``design, kind, size, criterion, target, value, rater_hours``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> b = xr.Dataset({"reliability": (("dimension", "design", "n_raters", "k"),
    ...                                 np.array([[[[0.5], [0.8]]], [[[0.76], [0.9]]]])),
    ...                 "cost_hours": (("design", "n_raters", "k"), [[[1.0], [2.0]]])},
    ...                coords={"dimension": ["a", "b"], "design": ["coarse"],
    ...                        "n_raters": [1, 2], "k": [1]})
    >>> cheapest_design(b, target=0.75)["n_raters"].to_list()
    [2, 1, 2]
    """
    from raterstats.design.kinds import KINDS_ANALYSIS, cheapest_kind  # it imports this module

    if budget.attrs.get("analysis") == KINDS_ANALYSIS:
        return cheapest_kind(budget, target=target, on=on)
    if on not in budget:
        raise ValueError(f"cheapest_design: {on!r} is not in the budget result")
    val = budget[on]
    cost = budget["cost_hours"]
    rows = []
    groups = [(str(d), val.sel(dimension=d)) for d in val["dimension"].values]
    groups.append(("all dimensions", val.min("dimension", skipna=False)))
    for name, v in groups:
        ok = (v >= target).values
        if not ok.any():
            continue
        c = np.where(ok, np.broadcast_to(cost.transpose(*v.dims).values, ok.shape), np.inf)
        g, a, b = np.unravel_index(np.argmin(c), c.shape)
        rows.append(
            {
                "dimension": name,
                "design": str(v["design"].values[g]),
                "n_raters": int(v["n_raters"].values[a]),
                "k": int(v["k"].values[b]),
                "criterion": on,
                "target": float(target),
                "value": float(v.values[g, a, b]),
                "cost_hours": float(c[g, a, b]),
            }
        )
    schema = {"dimension": pl.String, "design": pl.String, "n_raters": pl.Int64, "k": pl.Int64,
              "criterion": pl.String, "target": pl.Float64, "value": pl.Float64,
              "cost_hours": pl.Float64}  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


__all__ = [
    "annotation_budget",
    "cheapest_design",
    "make_executor",
    "rating_costs",
    "reliability_projection",
    "run_tasks",
    "simulate_ranking_task",
    "tau_and_recovery",
]
