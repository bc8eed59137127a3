"""Gold-free choice among the models of the true label: :func:`choose_model` and
:func:`fit` with ``model="auto"``.

A user does not know whether their crowd is dense or sparse, whether its raters make
independent or correlated errors, whether some items are harder than others. The
latent-class models answer these differently (MACE: competent or guessing; Dawid-Skene: a
confusion matrix per rater; GLAD: ability x item difficulty; community Dawid-Skene and
EBCC: correlated errors), and which one describes the ratings best can be measured on the
ratings alone, without gold:

``criterion="heldout"`` (the default; fast, works with point estimates)
    about ``fraction`` (10 %) of the ratings are held out, ``folds`` times over disjoint
    sets; each candidate is fitted by EM to the rest, and scored by the log-probability of
    every held-out rating given the other ratings of its item (the true label summed out):
    ``log p(held out of u | the rest of u, theta)`` per unit ``u``, summed. A rating is held
    out only where its unit and its rater keep at least one rating in the fit, so every
    parameter the score needs is estimated.
``criterion="loo"``
    each candidate is fitted by NUTS (or its fit is given) and compared by PSIS-LOO of the
    per-item log-likelihood (``arviz_stats.compare``, through
    :func:`raterstats.diagnostics.compare`).

The rule (:data:`RULE`) is fixed in advance, before any accuracy against gold was looked at:
the candidate with the highest expected log predictive density is chosen; no tie-breaking by
simplicity. The comparison table is returned and stored with the chosen fit, so that the user
reads how clear the choice was (the difference to the runner-up and its standard error).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import xarray as xr

from raterstats import schema as S
from raterstats.checks import check_arguments
from raterstats.health import ConvergenceWarning
from raterstats.ratings import Ratings

if TYPE_CHECKING:
    from raterstats.models.base import Model

#: the candidates of ``model="auto"`` (those registered), simplest first
DEFAULT_CANDIDATES = ("mace", "dawid_skene", "glad", "community_dawid_skene", "ebcc")

CRITERIA = ("heldout", "loo")

#: the choice rule, in words (stored with every choice)
RULE = (
    "the candidate with the highest expected log predictive density of the ratings "
    "(held-out ratings given the rest of their item, or PSIS-LOO per item) is chosen; the "
    "rule was fixed before any accuracy against gold labels was looked at"
)


@dataclass(frozen=True)
class ModelChoice:
    """The result of :func:`choose_model`.

    Attributes
    ----------
    table : xr.Dataset
        One row per candidate (dim ``model``, best first): ``elpd`` (the criterion's
        expected log predictive density, summed), ``se``, ``elpd_diff`` (to the best) and
        ``se_diff`` (of the paired difference), ``per_rating`` (``elpd`` per scored
        rating: held-out ratings, or all ratings for LOO), ``rank`` (0: chosen),
        ``seconds`` (fitting and scoring) and ``note`` (why a candidate was not compared,
        or a warning about its estimate). ``attrs``: ``criterion``, ``rule``, ``chosen``,
        ``n_scored`` (ratings scored) and, for held-out, ``folds`` and ``fraction``.
    chosen : str
        The registry name of the chosen model.
    models : dict
        The candidate specifications by name.
    fits : dict
        The candidates' fits to all the ratings that the comparison made (LOO: the NUTS
        fits; held-out: none), by name.
    fit_settings : dict
        LOO: the ``Model.fit`` keywords of those fits.
    """

    table: xr.Dataset
    chosen: str
    models: dict[str, Model]
    fits: dict[str, xr.DataTree] = field(default_factory=dict)
    fit_settings: dict[str, Any] = field(default_factory=dict)

    @property
    def model(self) -> Model:
        """The chosen model's specification."""
        return self.models[self.chosen]

    @property
    def criterion(self) -> str:
        """``"heldout"`` or ``"loo"``."""
        return str(self.table.attrs["criterion"])

    def frame(self) -> pl.DataFrame:
        """The comparison as a polars table, best first."""
        t = self.table
        return pl.DataFrame(
            {
                "model": [str(m) for m in t["model"].values],
                **{
                    v: t[v].values.tolist()
                    for v in ("rank", "elpd", "se", "elpd_diff", "se_diff", "per_rating")
                },
                "seconds": t["seconds"].values.tolist(),
                "note": [str(n) for n in t["note"].values],
            }
        )

    def lines(self) -> list[str]:
        """The comparison in words, one line per candidate, then the choice
        (:func:`choice_lines`)."""
        return choice_lines(self.table)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def fit(self, ratings: Ratings, **fit_kwargs: Any) -> xr.DataTree:
        """Fit the chosen model to ``ratings`` (``Model.fit`` keywords) and store the
        comparison with the fit: a ``model_choice`` group (this :attr:`table`) and
        ``attrs["model_choice"]`` (the chosen model and the criterion). A LOO choice reuses
        its fit of the chosen model when no keyword or the same keywords are given."""
        reuse = self.fits.get(self.chosen)
        same = not fit_kwargs or fit_kwargs == self.fit_settings
        dt = reuse.copy() if reuse is not None and same else self.model.fit(ratings, **fit_kwargs)
        dt["model_choice"] = xr.DataTree(self.table)
        dt.attrs["model_choice"] = f"{self.chosen} chosen by {self.criterion} among " + ", ".join(
            str(m) for m in self.table["model"].values
        )
        return dt


def choice_lines(table: xr.Dataset) -> list[str]:
    """A model choice's comparison table (:attr:`ModelChoice.table`, or a fit's
    ``model_choice`` group) in words: one line per candidate, then the choice.

    Examples
    --------
    >>> t = xr.Dataset(
    ...     {"elpd": ("model", [-10.0, -14.0]), "se": ("model", [2.0, 2.5]),
    ...      "elpd_diff": ("model", [0.0, -4.0]), "se_diff": ("model", [0.0, 1.0]),
    ...      "per_rating": ("model", [-0.5, -0.7]), "rank": ("model", [0, 1]),
    ...      "note": ("model", ["", ""])},
    ...     coords={"model": ["dawid_skene", "mace"]},
    ...     attrs={"criterion": "heldout", "n_scored": 20, "folds": 1, "fraction": 0.1,
    ...            "chosen": "dawid_skene"})
    >>> print("\\n".join(choice_lines(t)[:3]))
    model choice by log predictive density of 20 held-out ratings (1 fold(s) of 10%):
      dawid_skene: elpd -10.0 (se 2.0), -0.5000 per rating, best
      mace: elpd -14.0 (se 2.5), -0.7000 per rating, -4.0 (se 1.0) from the best
    """
    a = table.attrs
    what = (
        f"log predictive density of {int(a['n_scored']):,} held-out ratings "
        f"({a['folds']} fold(s) of {100 * float(a['fraction']):g}%)"
        if a["criterion"] == "heldout"
        else f"PSIS-LOO over items ({int(a['n_scored']):,} ratings)"
    )
    out = [f"model choice by {what}:"]
    for i, name in enumerate(table["model"].values):
        row = {v: table[v].values[i] for v in ("elpd", "se", "elpd_diff", "se_diff")}
        per, rank, note = (table[v].values[i] for v in ("per_rating", "rank", "note"))
        if not np.isfinite(row["elpd"]):
            out.append(f"  {name}: not compared ({note})")
            continue
        diff = (
            "best"
            if int(rank) == 0
            else f"{row['elpd_diff']:+.1f} (se {row['se_diff']:.1f}) from the best"
        )
        extra = f"; {note}" if str(note) else ""
        out.append(
            f"  {name}: elpd {row['elpd']:.1f} (se {row['se']:.1f}), "
            f"{float(per):.4f} per rating, {diff}{extra}"
        )
    out.append(f"chosen: {a['chosen']} ({RULE})")
    return out


class AutoModel:
    """``model="auto"`` as a specification: :meth:`fit` compares the candidates
    (:func:`choose_model`) and fits the chosen one (:func:`fit`). For the command line's
    ``--model auto``; in Python call :func:`fit` or :func:`choose_model`.

    Examples
    --------
    >>> AutoModel().name, "em" in AutoModel().methods
    ('auto', True)
    """

    name = "auto"

    def __init__(self, candidates: Sequence[Any] | None = None, *, criterion: str = "heldout"):
        self.candidates = candidates
        self.criterion = criterion

    @property
    def methods(self) -> tuple[str, ...]:
        """The fit methods every candidate has."""
        models = list(_candidates(self.candidates).values())
        return tuple(m for m in models[0].methods if all(m in o.methods for o in models))

    def fit(self, ratings: Any, **fit_kwargs: Any) -> xr.DataTree:
        """Choose and fit (:func:`fit` with ``model="auto"``; ``ratings`` must be
        :class:`~raterstats.Ratings`, else a ``ValueError`` says so)."""
        return fit(
            ratings, "auto", candidates=self.candidates, criterion=self.criterion, **fit_kwargs
        )

    def __repr__(self) -> str:
        return "auto"


def _candidates(candidates: Sequence[Any] | None) -> dict[str, Model]:
    from raterstats.models.base import Model, model_class, registered_models

    if candidates is None:
        known = registered_models()
        candidates = [n for n in DEFAULT_CANDIDATES if n in known]
    out: dict[str, Model] = {}
    problems = []
    for c in candidates:
        if isinstance(c, Model):
            m = c
        elif isinstance(c, type) and issubclass(c, Model):
            m = c()
        elif isinstance(c, str):
            try:
                m = model_class(c)()
            except ValueError as err:
                problems.append(str(err))
                continue
        else:
            problems.append(f"a candidate is a model name, class or instance, not {c!r}")
            continue
        if any(m == o for o in out.values()):
            problems.append(f"candidate {m!r} is given twice")
            continue
        out[m.name if m.name not in out else repr(m)] = m
    if not problems and len(out) < 2:
        problems.append("choose_model needs at least two candidates")
    if problems:
        raise ValueError("choose_model: " + "; ".join(problems))
    return out


def heldout_folds(
    ratings: Ratings, *, folds: int, fraction: float, random_seed: int | None
) -> np.ndarray:
    """The held-out fold of every rating (row of ``ratings.data``), ``-1`` for ratings
    never held out.

    Up to ``folds`` disjoint sets of about ``fraction`` of the ratings each, drawn at random
    (seeded) among the ratings whose unit (item, segment, dimension) and rater cell (rater,
    dimension, design) keep at least one rating outside the fold: a unit or rater rated once
    is never held out, so its parameters are always estimated from the rest.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=4, n_systems=5, random_seed=3).ratings
    >>> f = heldout_folds(r, folds=2, fraction=0.1, random_seed=1)
    >>> sorted(set(f.tolist())), int((f == 0).sum()) == round(0.1 * r.n_ratings)
    ([-1, 0, 1], True)
    """
    d = ratings.data
    keys = d.select(
        (pl.struct(S.ITEM, S.SEGMENT, S.DIMENSION).rank("dense") - 1).alias("unit"),
        (pl.struct(S.RATER, S.DIMENSION, S.DESIGN).rank("dense") - 1).alias("cell"),
    )
    unit, cell = keys["unit"].to_numpy(), keys["cell"].to_numpy()
    unit_n = np.bincount(unit)
    cell_n = np.bincount(cell)
    n = d.height
    target = max(1, round(fraction * n))
    fold = np.full(n, -1, dtype=np.int64)
    order = np.random.default_rng(random_seed).permutation(n)
    for f in range(folds):
        u_out = np.zeros_like(unit_n)
        c_out = np.zeros_like(cell_n)
        size = 0
        for i in order:
            if fold[i] >= 0:
                continue
            u, c = unit[i], cell[i]
            if u_out[u] + 1 >= unit_n[u] or c_out[c] + 1 >= cell_n[c]:
                continue
            fold[i] = f
            u_out[u] += 1
            c_out[c] += 1
            size += 1
            if size >= target:
                break
        if size == 0:
            break
    return fold


def _unit_loglik(model: Model, dt: xr.DataTree, ratings: Ratings) -> tuple[np.ndarray, tuple]:
    """Per-unit log-likelihood of ``ratings`` under the fit's parameters (mean over its
    draws of the per-draw likelihood, on the log scale), and the unit ids."""
    data = model.prepare(ratings)
    post = xr.DataTree.from_dict({"posterior": dt["posterior"].to_dataset()})
    ds = model.log_likelihood(post, data, None)
    if ds is None:
        raise TypeError(f"{type(model).__name__} gives no log-likelihood of ratings")
    ll = np.asarray(ds["ratings"].values)  # (chain, draw, unit)
    flat = ll.reshape(-1, ll.shape[-1])
    m = flat.max(axis=0)
    return m + np.log(np.mean(np.exp(flat - m), axis=0)), tuple(data.unit_ids)


def _check_layout(model: Model, train: Ratings, full: Ratings) -> None:
    a, b = model.prepare(train), model.prepare(full)
    for attr in ("raters", "dimensions", "designs", "unit_ids"):
        if getattr(a, attr) != getattr(b, attr):
            raise RuntimeError(f"held-out split changed the model's {attr} (a bug)")


def _heldout(
    models: dict[str, Model],
    ratings: Ratings,
    *,
    folds: int,
    fraction: float,
    random_seed: int,
) -> tuple[dict[str, np.ndarray | str], dict[str, float], int, dict[str, str]]:
    from raterstats.models.base import ModelInputError

    fold = heldout_folds(ratings, folds=folds, fraction=fraction, random_seed=random_seed)
    n_scored = int((fold >= 0).sum())
    if n_scored == 0:
        raise ValueError(
            "choose_model: no rating can be held out (every item or rater has a single "
            "rating); use criterion='loo'"
        )
    used = sorted({int(f) for f in fold if f >= 0})
    data = ratings.data
    scores: dict[str, np.ndarray | str] = {}
    seconds: dict[str, float] = {}
    notes: dict[str, str] = {}
    units: tuple | None = None
    for name, model in models.items():
        t0 = time.perf_counter()
        total: np.ndarray | None = None
        failed: list[str] = []  # the first health line of each training fit that fails
        try:
            for f in used:
                keep = pl.Series(fold != f)
                train = ratings.derive(
                    data.filter(keep), step=f"choose_model: held-out fold {f} removed"
                )
                with warnings.catch_warnings():  # a failed check goes in the table's note
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    dt = model.fit(
                        train, method="em", random_seed=random_seed + f, progress=False,
                        log_likelihood=True,
                    )  # fmt: skip
                if not bool(dt.attrs.get("health_ok", True)):
                    failed.append(str(dt.attrs.get("health", "")).splitlines()[0])
                ll_train = np.asarray(dt["log_likelihood"]["ratings"].values).reshape(-1)
                ll_full, ids = _unit_loglik(model, dt, ratings)
                if units is None:
                    _check_layout(model, train, ratings)
                    units = ids
                elif ids != units:
                    raise RuntimeError("units differ between candidates (a bug)")
                diff = ll_full - ll_train
                total = diff if total is None else total + diff
        except ModelInputError as err:
            scores[name] = f"cannot fit these ratings: {err}"
        else:
            assert total is not None
            scores[name] = total
            if failed:
                notes[name] = (
                    f"its fit fails its checks on {len(failed)} of {len(used)} training "
                    f"set(s): {failed[0]}"
                )
        seconds[name] = time.perf_counter() - t0
    return scores, seconds, n_scored, notes


def _table(
    scores: Mapping[str, np.ndarray | str],
    seconds: Mapping[str, float],
    n_scored: int,
    attrs: dict[str, Any],
    notes: Mapping[str, str] | None = None,
) -> tuple[xr.Dataset, str]:
    ok = {k: v for k, v in scores.items() if not isinstance(v, str)}
    if not ok:
        raise ValueError(
            "choose_model: no candidate could be compared: "
            + "; ".join(f"{k}: {v}" for k, v in scores.items())
        )
    elpd = {k: float(np.sum(v)) for k, v in ok.items()}
    best = max(elpd, key=lambda k: elpd[k])
    order = sorted(ok, key=lambda k: -elpd[k]) + [k for k in scores if k not in ok]
    n = len(order)
    out = {
        v: np.full(n, np.nan)
        for v in ("elpd", "se", "elpd_diff", "se_diff", "per_rating", "seconds")
    }
    rank = np.full(n, -1, dtype=np.int64)
    note = []
    for i, k in enumerate(order):
        out["seconds"][i] = seconds.get(k, np.nan)
        if k not in ok:
            note.append(str(scores[k]))
            continue
        v = np.asarray(ok[k], dtype=float)
        d = v - np.asarray(ok[best], dtype=float)
        m = v.size
        out["elpd"][i] = elpd[k]
        out["se"][i] = float(np.sqrt(m * np.var(v)))
        out["elpd_diff"][i] = float(d.sum())
        out["se_diff"][i] = float(np.sqrt(m * np.var(d)))
        out["per_rating"][i] = elpd[k] / n_scored
        rank[i] = i
        note.append((notes or {}).get(k, ""))
    ds = xr.Dataset(
        {
            **{k: ("model", v) for k, v in out.items()},
            "rank": ("model", rank),
            "note": ("model", np.array(note, dtype=object).astype(str)),
        },
        coords={"model": order},
        attrs={**attrs, "chosen": best, "rule": RULE, "n_scored": int(n_scored)},
    )
    return ds, best


def _loo(
    models: dict[str, Model],
    ratings: Ratings,
    fits: Mapping[str, xr.DataTree] | None,
    fit_kwargs: dict[str, Any],
) -> tuple[dict[str, np.ndarray | str], dict[str, float], dict[str, str], dict[str, xr.DataTree]]:
    import arviz_stats as azs

    from raterstats.models.base import ModelInputError

    done: dict[str, xr.DataTree] = {}
    scores: dict[str, np.ndarray | str] = {}
    seconds: dict[str, float] = {}
    notes: dict[str, str] = {}
    for name, model in models.items():
        t0 = time.perf_counter()
        dt = (fits or {}).get(name)
        if dt is None:
            try:
                dt = model.fit(ratings, **({"progress": False} | fit_kwargs))
            except ModelInputError as err:
                scores[name] = f"cannot fit these ratings: {err}"
                seconds[name] = time.perf_counter() - t0
                continue
        done[name] = dt
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Pareto k.*")
            warnings.filterwarnings("ignore", message=".*[Ee]stimated shape parameter.*")
            res = azs.loo(dt, pointwise=True)
        scores[name] = np.asarray(res.elpd_i).reshape(-1)
        k = np.asarray(res.pareto_k).reshape(-1)
        bad = int((k > 0.7).sum())
        parts = []
        if bad:
            parts.append(f"{bad} item(s) with Pareto k > 0.7: PSIS-LOO unreliable there")
        if not bool(dt.attrs.get("health_ok", True)):
            parts.append("its fit fails its convergence checks")
        notes[name] = "; ".join(parts)
        seconds[name] = time.perf_counter() - t0
    return scores, seconds, notes, done


def choose_model(
    ratings: Ratings,
    candidates: Sequence[Any] | None = None,
    *,
    criterion: str = "heldout",
    folds: int = 3,
    fraction: float = 0.1,
    random_seed: int = 0,
    fits: Mapping[str, xr.DataTree] | None = None,
    **fit_kwargs: Any,
) -> ModelChoice:
    """Compare models of the true label on the ratings alone (no gold) and choose one.

    Parameters
    ----------
    ratings : Ratings
        Categorical ratings (the latent-class models' data).
    candidates : sequence, optional
        Model names, classes or instances (default :data:`DEFAULT_CANDIDATES`, those
        registered: MACE, Dawid-Skene, GLAD, community Dawid-Skene, EBCC, at their defaults).
    criterion : {"heldout", "loo"}
        Held-out ratings by EM (default; seconds) or PSIS-LOO of NUTS fits (see the module
        docstring).
    folds, fraction : int, float
        Held-out: the number of disjoint held-out sets and the share of the ratings in each
        (default 3 x 10%).
    random_seed : int
        Seeds the held-out sets and the EM restarts (fold ``f``: ``random_seed + f``).
    fits : mapping, optional
        LOO: fits already made, by candidate name (the others are fitted).
    **fit_kwargs
        LOO: keywords of ``Model.fit`` for the candidates' NUTS fits (``draws``, ``chains``,
        ...; ``random_seed`` is this function's).

    Returns
    -------
    ModelChoice
        The comparison table (best first), the chosen name and specification; its
        :meth:`ModelChoice.fit` fits the chosen model with the comparison attached.

    Raises
    ------
    ValueError
        Listing every bad argument; or when no candidate could be fitted.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=6, n_systems=5, random_seed=3).ratings
    >>> choice = choose_model(r, ["mace", "dawid_skene"], folds=1)
    >>> choice.chosen in ("mace", "dawid_skene"), choice.table["rank"].values.tolist()
    (True, [0, 1])
    """
    check_arguments(
        None if isinstance(ratings, Ratings) else "ratings must be a raterstats.Ratings",
        None if criterion in CRITERIA else f"criterion must be one of {list(CRITERIA)}",
        None if isinstance(folds, int) and 1 <= folds <= 10 else "folds must be 1..10",
        None
        if isinstance(fraction, float | int) and 0 < fraction <= 1 / max(folds, 1)
        else "fraction must be in (0, 1 / folds]",
        None if isinstance(random_seed, int) else "random_seed must be an int",
        None
        if criterion == "loo" or not (fits or fit_kwargs)
        else "fits and fit keywords apply to criterion='loo'",
        where="choose_model",
    )
    models = _candidates(candidates)
    if criterion == "heldout":
        scores, seconds, n_scored, notes = _heldout(
            models, ratings, folds=folds, fraction=float(fraction), random_seed=random_seed
        )
        table, best = _table(
            scores,
            seconds,
            n_scored,
            {"criterion": "heldout", "folds": folds, "fraction": float(fraction)},
            notes,
        )
        return ModelChoice(table=table, chosen=best, models=models)
    fit_kwargs = {"random_seed": random_seed} | fit_kwargs
    scores, seconds, notes, done = _loo(models, ratings, fits, fit_kwargs)
    table, best = _table(scores, seconds, ratings.n_ratings, {"criterion": "loo"}, notes)
    return ModelChoice(table=table, chosen=best, models=models, fits=done, fit_settings=fit_kwargs)


def fit(
    ratings: Ratings,
    model: Any = "auto",
    *,
    candidates: Sequence[Any] | None = None,
    criterion: str = "heldout",
    **fit_kwargs: Any,
) -> xr.DataTree:
    """Fit a rater model by name, class or instance, or the one :func:`choose_model` picks
    (``model="auto"``).

    With ``"auto"`` the candidates are compared on the ratings (``criterion``, default
    held-out ratings by EM) and the chosen one is fitted with ``fit_kwargs`` (default NUTS);
    the fit carries the comparison as its ``model_choice`` group.

    Examples
    --------
    >>> from raterstats.simulate import archehr_like_study
    >>> r = archehr_like_study(n_cases=6, n_systems=5, random_seed=3).ratings
    >>> dt = fit(r, "auto", candidates=["mace", "dawid_skene"], method="em", random_seed=1)
    >>> dt.attrs["model"] == str(dt["model_choice"].attrs["chosen"])
    True
    """
    from raterstats.models.base import Model, model_class

    if isinstance(model, str) and model == "auto":
        rest = dict(fit_kwargs)
        seed = rest.pop("random_seed", 0)
        seed = 0 if seed is None else int(seed)
        if criterion == "loo":  # the candidates' NUTS fits are made with the keywords
            choice = choose_model(ratings, candidates, criterion="loo", random_seed=seed, **rest)
            return choice.fit(ratings)
        choice = choose_model(ratings, candidates, criterion=criterion, random_seed=seed)
        return choice.fit(ratings, random_seed=seed, **rest)
    if candidates is not None:
        raise ValueError("fit: candidates apply to model='auto'")
    if isinstance(model, str):
        spec = model_class(model)()
    elif isinstance(model, type) and issubclass(model, Model):
        spec = model()
    elif isinstance(model, Model):
        spec = model
    else:
        raise TypeError(f"fit: model is 'auto', a model name, class or instance, not {model!r}")
    return spec.fit(ratings, **fit_kwargs)


__all__ = [
    "CRITERIA",
    "DEFAULT_CANDIDATES",
    "RULE",
    "AutoModel",
    "ModelChoice",
    "choice_lines",
    "choose_model",
    "fit",
    "heldout_folds",
]
