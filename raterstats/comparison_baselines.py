"""Classical baselines for comparative judgments: win rate, online Elo and maximum-likelihood
Bradley-Terry, one point score per dimension x system, and their bootstrap draws for
:func:`raterstats.ranking.rank_systems`.

These are the methods people use without a rater model (the Chatbot Arena notebook, R's
BradleyTerry2, choix): every judgment counts the same, whoever gave it. Each works on
pairwise outcomes: rankings are broken into pairs with
:meth:`~raterstats.comparisons.Comparisons.to_pairs` (a ranking of m systems gives
m(m-1)/2 pairs, which are not independent judgments; the bootstrap resamples whole
rankings for that reason). An outcome scores 1 for the system preferred, 0 for the other
and 1/2 each for a tie; graded outcomes (``-K..K``) count by their sign, whatever the
grade. The results say both in their ``attrs``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl
import xarray as xr
from scipy import sparse
from scipy.sparse.csgraph import connected_components as graph_components
from scipy.special import expit

from raterstats import defaults as D
from raterstats import schema as S
from raterstats.checks import check_counts
from raterstats.comparisons import (
    COMPARISON,
    OUTCOME,
    SYSTEM_A,
    SYSTEM_B,
    Comparisons,
    connected_components,
)
from raterstats.formatting import visible
from raterstats.scoring import PAIRED, describe_bootstrap

#: ``method`` values of :func:`rank_systems` on :class:`~raterstats.Comparisons`
BASELINE_METHODS = ("win_rate", "elo", "bradley_terry_ml")
BaselineMethod = Literal["win_rate", "elo", "bradley_terry_ml"]
#: ridge of :func:`ml_bradley_terry`: ``RIDGE / 2 * sum(theta**2)`` is added to the negative
#: log-likelihood (choix's ``opt_pairwise`` default penalty is of the same size)
RIDGE = 1e-6
#: resampling schemes of :func:`baseline_score_draws`
RANKINGS_SCHEME = "rankings"
JUDGMENTS_SCHEME = "judgments"

_ELO_ORDERS = ("source_row", "shuffled")
# judgments x replicates handled at once by the bootstrap (memory: 8 bytes each)
_CELLS = 2_000_000
# attempts to redraw one invalid bootstrap replicate
_REDRAWS = 200


@dataclass(frozen=True)
class _Dim:
    """The pairwise judgments of one dimension, in file order: system indices ``a``, ``b``
    (into the sorted systems of the whole table), the score of ``a`` (1, 1/2, 0) and the
    resampling cluster of each judgment."""

    name: str
    a: np.ndarray
    b: np.ndarray
    s: np.ndarray
    cluster: np.ndarray
    n_clusters: int
    present: np.ndarray  # bool per system of the table: compared in this dimension


@dataclass(frozen=True)
class _Table:
    systems: list[str]
    dims: list[_Dim]
    scheme: str
    notes: dict[str, str]


def _table(comparisons: Comparisons, what: str) -> _Table:
    """The judgments of every dimension, with the notes every baseline result carries."""
    if not isinstance(comparisons, Comparisons):
        raise TypeError(f"{what}: expected a Comparisons table, got {type(comparisons)!r}")
    pairs = comparisons.to_pairs().data.sort(S.ROW, maintain_order=True)
    if pairs.height == 0:
        raise ValueError(f"{what}: the comparisons hold no judgment")
    systems = list(comparisons.systems)
    at = {s: k for k, s in enumerate(systems)}
    if comparisons.kind == "rankings":
        key = pl.col(COMPARISON).str.replace(r"#\d+$", "")  # to_pairs: "<ranking>#<k>"
        scheme = RANKINGS_SCHEME
    else:
        key = (
            pl.when(pl.col(S.QUESTION).is_null())
            .then(pl.lit("j:") + pl.col(COMPARISON))
            .otherwise(pl.lit("q:") + pl.col(S.QUESTION))
        )
        scheme = ""
    pairs = pairs.with_columns(key.alias("__cluster"))
    dims, schemes = [], {}
    for dim in comparisons.dimensions:
        part = pairs.filter(pl.col(S.DIMENSION) == dim)
        a = np.asarray([at[x] for x in part[SYSTEM_A].to_list()], dtype=np.int64)
        b = np.asarray([at[x] for x in part[SYSTEM_B].to_list()], dtype=np.int64)
        out = part[OUTCOME].to_numpy()
        s = np.where(out > 0, 1.0, np.where(out < 0, 0.0, 0.5))
        _, cluster = np.unique(part["__cluster"].to_numpy(), return_inverse=True)
        n_clusters = int(cluster.max()) + 1
        present = np.zeros(len(systems), dtype=bool)
        present[a] = present[b] = True
        dims.append(_Dim(str(dim), a, b, s, cluster.ravel(), n_clusters, present))
        schemes[str(dim)] = scheme or (PAIRED if n_clusters < part.height else JUDGMENTS_SCHEME)
    notes = {"outcomes": "a preferred system scores 1, the other 0, a tie 1/2 each"}
    if comparisons.graded:
        notes["outcomes"] += (
            f"; graded outcomes (-{comparisons.max_grade}..{comparisons.max_grade}) count by "
            "their sign, whatever the grade"
        )
    if comparisons.kind == "rankings":
        notes["pairs_from_rankings"] = (
            "rankings broken into pairs with Comparisons.to_pairs(): a ranking of m systems "
            "gives m(m-1)/2 pairs, which are not independent judgments"
        )
    absent = [
        f"{visible(systems[k])} ({visible(d.name)})"
        for d in dims
        for k in np.flatnonzero(~d.present)
    ]
    notes["not_compared"] = f"no comparison, so NaN: {', '.join(absent)}" if absent else ""
    split = []
    for d in dims:
        links = {(systems[x], systems[y]) for x, y in zip(d.a.tolist(), d.b.tolist(), strict=True)}
        groups = connected_components(
            sorted(links), [systems[i] for i in np.flatnonzero(d.present)]
        )
        if len(groups) > 1:
            shown = " | ".join(", ".join(visible(x) for x in g) for g in groups[:6])
            split.append(f"{visible(d.name)}: {len(groups)} groups ({shown})")
    notes["split"] = (
        "systems in groups never compared with each other, whose scores are not comparable: "
        + "; ".join(split)
        if split
        else ""
    )
    return _Table(systems, dims, describe_bootstrap(schemes), notes)


def _as_array(values: np.ndarray, table: _Table, name: str, attrs: dict[str, Any]) -> xr.DataArray:
    return xr.DataArray(
        values,
        dims=(S.DIMENSION, S.SYSTEM),
        coords={S.DIMENSION: [d.name for d in table.dims], S.SYSTEM: table.systems},
        name=name,
        attrs={**table.notes, **attrs},
    )


# ---------------------------------------------------------------------------- win rate


def _win_rates(d: _Dim, w: np.ndarray, m: int) -> np.ndarray:
    """Win rates ``(replicates, m)`` with judgment multiplicities ``w`` (replicates, n)."""
    n = d.a.shape[0]
    rows = np.concatenate([np.arange(n), np.arange(n)])
    cols = np.concatenate([d.a, d.b])
    credit = sparse.csr_array((np.concatenate([d.s, 1.0 - d.s]), (rows, cols)), shape=(n, m))
    involved = sparse.csr_array((np.ones(2 * n), (rows, cols)), shape=(n, m))
    wins = np.asarray((credit.T @ w.T).T)
    count = np.asarray((involved.T @ w.T).T)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, wins / np.where(count > 0, count, 1.0), np.nan)


def win_rate(comparisons: Comparisons) -> xr.DataArray:
    """The share of its comparisons each system won, ties counted half, per dimension.

    Parameters
    ----------
    comparisons : Comparisons
        Pairs or rankings (rankings are broken into pairs, see the module docstring).

    Returns
    -------
    xr.DataArray
        ``(dimension, system)`` win rates in [0, 1]; NaN for a system with no comparison in
        a dimension (``attrs["not_compared"]`` names them). ``attrs`` say how outcomes
        were scored (``outcomes``), for rankings that pairs came from rankings, and in
        ``split`` the groups of systems never compared with each other (their win rates
        are not comparable; empty when the comparisons link every system).

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_comparisons
    >>> c = read_comparisons(pl.DataFrame({
    ...     "system_a": ["x", "x", "y"], "system_b": ["y", "z", "z"],
    ...     "rater": ["r1", "r1", "r2"], "outcome": ["a", "tie", "b"]}))
    >>> win_rate(c).sel(dimension="default").values.tolist()
    [0.75, 0.0, 0.75]
    """
    t = _table(comparisons, "win_rate")
    m = len(t.systems)
    vals = np.stack([_win_rates(d, np.ones((1, d.a.shape[0])), m)[0] for d in t.dims])
    return _as_array(vals, t, "win_rate", {"method": "win rate (share of comparisons won)"})


# ---------------------------------------------------------------------------- Elo


@functools.cache
def _elo_kernel() -> Any:
    """The compiled Elo loop (numba, cached on disk; imported on first use so that
    importing raterstats does not load numba)."""
    from numba import njit

    @njit(cache=True, nogil=True)
    def run(
        a: np.ndarray,
        b: np.ndarray,
        s: np.ndarray,
        valid: np.ndarray,
        rating: np.ndarray,
        k: float,
        scale: float,
    ) -> None:
        for r in range(a.shape[0]):
            for t in range(a.shape[1]):
                if valid[r, t] == 0.0:
                    continue
                ia, ib = a[r, t], b[r, t]
                expected = 1.0 / (1.0 + 10.0 ** ((rating[r, ib] - rating[r, ia]) / scale))
                delta = k * (s[r, t] - expected)
                rating[r, ia] += delta
                rating[r, ib] -= delta

    return run


def _elo_run(
    a: np.ndarray,
    b: np.ndarray,
    s: np.ndarray,
    valid: np.ndarray,
    m: int,
    *,
    k: float,
    scale: float,
    initial: float,
) -> np.ndarray:
    """Online Elo of several sequences at once: rows are replicates, columns steps
    (``valid`` false: padding, no update). Returns ``(replicates, m)`` ratings."""
    rating = np.full((a.shape[0], m), float(initial))
    _elo_kernel()(
        np.ascontiguousarray(a, dtype=np.int64),
        np.ascontiguousarray(b, dtype=np.int64),
        np.ascontiguousarray(s, dtype=np.float64),
        np.ascontiguousarray(valid, dtype=np.float64),
        rating,
        float(k),
        float(scale),
    )
    return rating


def _elo_sequences(
    d: _Dim, w: np.ndarray, order: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Padded ``(a, b, s, valid)`` step arrays of replicates with multiplicities ``w``:
    each judgment repeated as often as it was drawn, in file order (``"source_row"``) or
    in a random order (``"shuffled"``)."""
    counts = w.astype(np.int64)
    length = int(counts.sum(axis=1).max()) if counts.size else 0
    idx = np.zeros((counts.shape[0], length), dtype=np.int64)
    valid = np.zeros((counts.shape[0], length))
    for r, row in enumerate(counts):
        seq = np.repeat(np.arange(row.shape[0]), row)
        if order == "shuffled":
            seq = rng.permutation(seq)
        idx[r, : seq.shape[0]] = seq
        valid[r, : seq.shape[0]] = 1.0
    return d.a[idx], d.b[idx], d.s[idx], valid


def _check_elo(k: float, scale: float, initial: float, order: str, what: str) -> None:
    problems = [
        f"{name} must be a positive finite number, not {v!r}"
        for name, v in (("k", k), ("scale", scale))
        if not (isinstance(v, int | float) and np.isfinite(v) and v > 0)
    ]
    if not (isinstance(initial, int | float) and np.isfinite(initial)):
        problems.append(f"initial must be a finite number, not {initial!r}")
    if order not in _ELO_ORDERS:
        problems.append(f"order must be one of {list(_ELO_ORDERS)}, not {order!r}")
    if problems:
        raise ValueError(f"{what}: " + "; ".join(problems))


def elo(
    comparisons: Comparisons,
    *,
    k: float = 4.0,
    scale: float = 400.0,
    initial: float = 1000.0,
    order: Literal["source_row", "shuffled"] = "source_row",
    random_seed: int = D.RANDOM_SEED,
) -> xr.DataArray:
    """Online Elo ratings, as in the Chatbot Arena notebook (``compute_online_elo``).

    Every system starts at ``initial``; the judgments are read one after another and after
    each the two ratings move by ``k * (S - E)`` and ``-k * (S - E)``, where ``S`` is the
    score of ``system_a`` (1, 1/2 for a tie, 0) and ``E = 1 / (1 + 10 ** ((R_b - R_a) /
    scale))`` its expected score. Each dimension is rated on its own.

    Parameters
    ----------
    comparisons : Comparisons
        Pairs or rankings (rankings are broken into pairs, see the module docstring).
    k, scale, initial : float
        Step size, scale (400: a 400-point gap means 10:1 odds) and starting rating.
    order : {"source_row", "shuffled"}
        The order the judgments are read in: file order (``source_row``; the pairs of one
        ranking in :meth:`~raterstats.comparisons.Comparisons.to_pairs` order) or a random
        order drawn from ``random_seed``. Online Elo depends on the order.
    random_seed : int
        Seed of the ``"shuffled"`` order.

    Returns
    -------
    xr.DataArray
        ``(dimension, system)`` ratings on the Elo scale; NaN for a system with no
        comparison in a dimension. ``attrs`` give ``k``, ``scale``, ``initial``, ``order``
        and, as for :func:`win_rate`, ``outcomes`` and ``split``.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_comparisons
    >>> c = read_comparisons(pl.DataFrame({
    ...     "system_a": ["x", "y"], "system_b": ["y", "x"],
    ...     "rater": ["r1", "r2"], "outcome": ["a", "a"]}))
    >>> elo(c).sel(dimension="default").round(3).values.tolist()  # x +2, then y wins back
    [999.977, 1000.023]
    """
    what = "elo"
    _check_elo(k, scale, initial, order, what)
    t = _table(comparisons, what)
    m = len(t.systems)
    rng = np.random.default_rng(random_seed)
    vals = []
    for d in t.dims:
        seq = _elo_sequences(d, np.ones((1, d.a.shape[0])), order, rng)
        rating = _elo_run(*seq, m, k=k, scale=scale, initial=initial)[0]
        vals.append(np.where(d.present, rating, np.nan))
    attrs = {
        "method": "online Elo (Chatbot Arena's compute_online_elo)",
        "k": float(k),
        "scale": float(scale),
        "initial": float(initial),
        "order": order,
    }
    return _as_array(np.stack(vals), t, "elo", attrs)


# ---------------------------------------------------------------------------- Bradley-Terry


def _win_matrix(d: _Dim, w: np.ndarray, m: int) -> np.ndarray:
    """``wins[i, j]``: the credit of ``i`` against ``j`` (wins + ties / 2), weighted."""
    flat = np.bincount(d.a * m + d.b, weights=w * d.s, minlength=m * m)
    flat += np.bincount(d.b * m + d.a, weights=w * (1.0 - d.s), minlength=m * m)
    return flat.reshape(m, m)


def _bt_objective(
    theta: np.ndarray, wins: np.ndarray, ridge: float
) -> tuple[np.ndarray, np.ndarray]:
    """Penalised negative log-likelihood and its gradient, for a batch ``(B, m)``."""
    diff = theta[:, :, None] - theta[:, None, :]
    value = np.sum(wins * np.logaddexp(0.0, -diff), axis=(1, 2))
    value += 0.5 * ridge * np.sum(theta**2, axis=1)
    g = wins * expit(-diff)
    return value, -g.sum(axis=2) + g.sum(axis=1) + ridge * theta


def _bt_batch(wins: np.ndarray, ridge: float, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method with a backtracking line search on a batch of win matrices
    ``(B, m, m)``, all replicates at once; returns centred strengths and convergence."""
    theta = np.array(start, dtype=float)
    m = wins.shape[1]
    value, grad = _bt_objective(theta, wins, ridge)
    total = wins + wins.transpose(0, 2, 1)
    tol = 1e-10 * np.maximum(1.0, wins.sum(axis=(1, 2)))
    stuck = np.zeros(theta.shape[0], dtype=bool)
    diag = np.arange(m)
    for _ in range(500):
        todo = np.flatnonzero((np.abs(grad).max(axis=1) > tol) & ~stuck)
        if not todo.size:
            break
        th, g = theta[todo], grad[todo]
        p = expit(th[:, :, None] - th[:, None, :])
        h = -total[todo] * p * (1.0 - p)
        h[:, diag, diag] = 0.0
        h[:, diag, diag] = -h.sum(axis=2) + ridge
        step = np.linalg.solve(h, g[:, :, None])[:, :, 0]
        slope = np.sum(g * step, axis=1)
        size = np.ones(todo.size)
        pending = np.ones(todo.size, dtype=bool)
        for _ in range(45):  # halve the step until the value falls enough (Armijo)
            at = np.flatnonzero(pending)
            cand = th[at] - size[at, None] * step[at]
            v, gr = _bt_objective(cand, wins[todo[at]], ridge)
            ok = v <= value[todo[at]] - 1e-4 * size[at] * slope[at]
            # near the optimum the fall in value is below float precision: accept a step
            # that halves the gradient instead
            ok |= np.abs(gr).max(axis=1) <= 0.5 * np.abs(g[at]).max(axis=1)
            rows = todo[at[ok]]
            theta[rows], value[rows], grad[rows] = cand[ok], v[ok], gr[ok]
            pending[at[ok]] = False
            size[at[~ok]] /= 2
            if not pending.any():
                break
        stuck[todo[pending]] = True  # no decrease left at float precision
    done = np.abs(grad).max(axis=1) <= tol
    return theta - theta.mean(axis=1, keepdims=True), done


def bt_strengths(
    wins: np.ndarray, *, ridge: float = RIDGE, start: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry strengths from win matrices by Newton's method with a backtracking
    line search (the penalised log-likelihood is strictly concave), several at once.

    Parameters
    ----------
    wins : np.ndarray
        ``(m, m)`` or a batch ``(B, m, m)``: ``wins[i, j]`` is the credit of system ``i``
        against ``j`` (wins, plus half of the ties). Every system must be compared.
    ridge : float
        ``ridge / 2 * sum(theta**2)`` is added to the negative log-likelihood: it keeps the
        strengths finite when the maximum-likelihood estimate does not exist.
    start : np.ndarray, optional
        Starting strengths, ``(m,)`` or ``(B, m)`` (zeros when not given).

    Returns
    -------
    (theta, converged) : tuple of np.ndarray
        Strengths centred to mean 0 (log-odds scale: ``P(i beats j) = sigmoid(theta_i -
        theta_j)``), ``(m,)`` or ``(B, m)``, and whether the gradient vanished (a bool, or
        one per matrix).

    Examples
    --------
    >>> import numpy as np
    >>> theta, ok = bt_strengths(np.array([[0.0, 3.0], [1.0, 0.0]]))
    >>> round(float(theta[0] - theta[1]), 4), bool(ok)  # log(3 / 1)
    (1.0986, True)
    """
    wins = np.asarray(wins, dtype=float)
    single = wins.ndim == 2
    batch = wins[None] if single else wins
    shape = batch.shape[:2]
    begin = np.zeros(shape) if start is None else np.broadcast_to(start, shape)
    theta, done = _bt_batch(batch, ridge, begin)
    return (theta[0], done[0]) if single else (theta, done)


def ml_exists(wins: np.ndarray) -> bool:
    """Whether the maximum-likelihood Bradley-Terry strengths exist for a win matrix
    (Ford 1957: the directed graph "i got credit against j" is strongly connected, i.e.
    every split of the systems into two groups has a win, or a tie, each way across it).

    Examples
    --------
    >>> import numpy as np
    >>> ml_exists(np.array([[0.0, 2.0], [1.0, 0.0]])), ml_exists(np.array([[0.0, 2.0], [0.0, 0.0]]))
    (True, False)
    """
    n, _ = graph_components(sparse.csr_array(wins > 0), directed=True, connection="strong")
    return bool(n == 1)


def _separated(wins: np.ndarray, names: list[str]) -> str:
    """Why the maximum-likelihood estimate does not exist, or "" when it does."""
    if ml_exists(wins):
        return ""
    credit_for, credit_against = wins.sum(axis=1), wins.sum(axis=0)
    parts = [
        f"{label}: {', '.join(visible(names[i]) for i in np.flatnonzero(mask))}"
        for label, mask in (
            ("never lost nor tied", (credit_against == 0) & (credit_for > 0)),
            ("never won nor tied", (credit_for == 0) & (credit_against > 0)),
        )
        if mask.any()
    ]
    which = "; ".join(parts) or "a group of systems never lost to the others"
    return (
        f"{which}: the maximum-likelihood strengths do not exist (they run off to "
        "infinity); the ridge keeps them finite, so their size (not their order) is set by "
        "the ridge"
    )


def _bt_groups(d: _Dim, systems: list[str], what: str) -> None:
    """ValueError naming the groups when the comparisons do not link every system."""
    names = [systems[i] for i in np.flatnonzero(d.present)]
    links = {(systems[x], systems[y]) for x, y in zip(d.a.tolist(), d.b.tolist(), strict=True)}
    groups = connected_components(sorted(links), names)
    if len(groups) > 1:
        shown = " | ".join(", ".join(visible(s) for s in g) for g in groups[:6])
        raise ValueError(
            f"{what}: in dimension {visible(d.name)} the comparisons split the systems into "
            f"{len(groups)} groups never compared with each other ({shown}); Bradley-Terry "
            "strengths across groups are not identified: add comparisons across the groups, or "
            "rank each group on its own (comparisons.filter(system=[...]))"
        )


def ml_bradley_terry(comparisons: Comparisons, *, ridge: float = RIDGE) -> xr.DataArray:
    """Maximum-likelihood Bradley-Terry strengths per dimension (the Chatbot Arena's
    "MLE Elo" before its rescaling), ties counted as half a win for each side.

    ``P(i preferred to j) = sigmoid(theta_i - theta_j)``; the strengths maximise
    ``sum_ij w_ij log sigmoid(theta_i - theta_j) - ridge / 2 * sum_i theta_i**2``, where
    ``w_ij`` counts the wins of ``i`` over ``j`` plus half of their ties (as BradleyTerry2
    and choix treat ties when given half wins), by Newton's method
    (:func:`bt_strengths`). The tiny ridge (1e-6) moves well-posed estimates by about
    1e-6 relative; it keeps the strengths finite when the maximum-likelihood estimate does
    not exist (a system that never loses): such dimensions are flagged in
    ``attrs["separated"]``.

    Parameters
    ----------
    comparisons : Comparisons
        Pairs or rankings (rankings are broken into pairs, see the module docstring).
    ridge : float
        The ridge (a positive number).

    Returns
    -------
    xr.DataArray
        ``(dimension, system)`` strengths on the log-odds scale, centred to mean 0 over the
        systems compared in each dimension (NaN for the others). ``attrs["separated"]``:
        per dimension, which systems never lost (or never won) so that the estimate runs
        off (empty when every estimate exists).

    Raises
    ------
    ValueError
        When the comparisons of a dimension split the systems into groups never compared
        with each other (naming the groups): strengths across groups are not identified.

    Examples
    --------
    >>> import polars as pl
    >>> from raterstats import read_comparisons
    >>> c = read_comparisons(pl.DataFrame({
    ...     "system_a": ["x", "x", "x", "y"], "system_b": ["y", "y", "y", "x"],
    ...     "rater": ["r1", "r2", "r3", "r4"], "outcome": ["a", "a", "b", "tie"]}))
    >>> theta = ml_bradley_terry(c).sel(dimension="default")
    >>> round(float(theta.sel(system="x") - theta.sel(system="y")), 4)  # log(2.5 / 1.5)
    0.5108
    """
    what = "ml_bradley_terry"
    if not (isinstance(ridge, int | float) and np.isfinite(ridge) and ridge > 0):
        raise ValueError(f"{what}: ridge must be a positive number, not {ridge!r}")
    t = _table(comparisons, what)
    m = len(t.systems)
    vals, separated, stuck = [], [], []
    for d in t.dims:
        _bt_groups(d, t.systems, what)
        keep = np.flatnonzero(d.present)
        wins = _win_matrix(d, np.ones(d.a.shape[0]), m)[np.ix_(keep, keep)]
        theta, ok = bt_strengths(wins, ridge=ridge)
        row = np.full(m, np.nan)
        row[keep] = theta
        vals.append(row)
        why = _separated(wins, [t.systems[i] for i in keep])
        if why:
            separated.append(f"{visible(d.name)}: {why}")
        if not ok:
            stuck.append(visible(d.name))
    attrs = {
        "method": "maximum-likelihood Bradley-Terry (log-odds scale, centred)",
        "ridge": float(ridge),
        "separated": "\n".join(separated),
        "not_converged": (
            f"Newton's method did not reach a zero gradient in: {', '.join(stuck)}" if stuck else ""
        ),
    }
    return _as_array(np.stack(vals), t, "bradley_terry_ml", attrs)


# ---------------------------------------------------------------------------- bootstrap


def _replicate_ok(method: str, d: _Dim, w: np.ndarray, m: int) -> bool:
    """Whether a replicate keeps every system of the dimension (for Bradley-Terry: keeps
    the comparison graph connected, else its strengths are not identified)."""
    used = w > 0
    seen = np.zeros(m, dtype=bool)
    seen[d.a[used]] = seen[d.b[used]] = True
    if not seen[d.present].all():
        return False
    if method != "bradley_terry_ml":
        return True
    keep = np.flatnonzero(d.present)
    adj = sparse.csr_array((np.ones(int(used.sum())), (d.a[used], d.b[used])), shape=(m, m))[
        np.ix_(keep, keep)
    ]
    return graph_components(adj, directed=False)[0] == 1


def _draw_counts(
    method: str, d: _Dim, size: int, m: int, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Cluster counts of ``size`` replicates, each valid (redrawn when not)."""
    nc = d.n_clusters
    p = np.full(nc, 1.0 / nc)
    counts = rng.multinomial(nc, p, size=size)
    redrawn = 0
    for r in range(size):
        if _replicate_ok(method, d, counts[r][d.cluster], m):
            continue
        redrawn += 1
        for _ in range(_REDRAWS):
            counts[r] = rng.multinomial(nc, p)
            if _replicate_ok(method, d, counts[r][d.cluster], m):
                break
        else:
            raise ValueError(
                f"rank_systems: in dimension {visible(d.name)} a bootstrap of the "
                f"{nc} resampled units almost never keeps "
                + (
                    "the comparison graph connected"
                    if method == "bradley_terry_ml"
                    else "a comparison of every system"
                )
                + ": too few comparisons to bootstrap; add comparisons or filter systems out"
            )
    return counts, redrawn


def _scores(
    method: str, d: _Dim, w: np.ndarray, m: int, rng: np.random.Generator, start: np.ndarray
) -> tuple[np.ndarray, int]:
    """Scores ``(replicates, m)`` for multiplicities ``w`` and the number of replicates
    whose Bradley-Terry estimate does not exist."""
    if method == "win_rate":
        return _win_rates(d, w, m), 0
    if method == "elo":
        seq = _elo_sequences(d, w, "source_row", rng)
        return _elo_run(*seq, m, k=4.0, scale=400.0, initial=1000.0), 0
    keep = np.flatnonzero(d.present)
    wins = np.stack([_win_matrix(d, row, m)[np.ix_(keep, keep)] for row in w])
    out = np.full((w.shape[0], m), np.nan)
    out[:, keep], _ = bt_strengths(wins, start=start)
    return out, sum(not ml_exists(x) for x in wins)


def baseline_score_draws(
    comparisons: Comparisons,
    *,
    method: str,
    n_boot: int = D.N_BOOT,
    rng: np.random.Generator | None = None,
) -> xr.DataArray:
    """Bootstrap draws of a baseline score per dimension x system, for
    :func:`raterstats.ranking.rank_systems` (which summarises them).

    The resampled units: whole rankings for rankings; for pairs, the questions when the
    data have a question column and a question holds several judgments (the paired
    design: the systems compared on a drawn question keep all of its judgments; a judgment
    without a question is a unit of its own), else the judgments. Each dimension is
    resampled on its own. A replicate that leaves a system without a comparison (for
    Bradley-Terry: that splits the comparison graph, so that strengths are not identified)
    is redrawn; ``attrs["bootstrap_redrawn"]`` counts them. Elo replicates read their
    judgments in file order (repeated judgments one after another) with ``k = 4``.

    Parameters
    ----------
    comparisons : Comparisons
        The judgments.
    method : {"win_rate", "elo", "bradley_terry_ml"}
        The score (:func:`win_rate`, :func:`elo`, :func:`ml_bradley_terry`).
    n_boot : int
        Replicates; 0: one draw, the point estimate.
    rng : numpy.random.Generator, optional
        Random numbers (a fixed seed when not given).

    Returns
    -------
    xr.DataArray
        ``(chain, draw, dimension, system)`` with one chain; ``attrs``: ``source``,
        ``bootstrap`` (the scheme), ``bootstrap_redrawn`` and ``method_notes`` (how the
        scores were computed, and for Bradley-Terry how many replicates had no
        maximum-likelihood estimate).

    Examples
    --------
    >>> from raterstats.simulate_comparisons import simulate_comparisons
    >>> c = simulate_comparisons(n_systems=3, n_comparisons=60, random_seed=1).comparisons
    >>> draws = baseline_score_draws(c, method="win_rate", n_boot=20)
    >>> draws.dims, draws.attrs["bootstrap"]
    (('chain', 'draw', 'dimension', 'system'), 'questions (paired)')
    """
    what = "rank_systems"
    check_counts(where=what, n_boot=(n_boot, 0))
    if method not in BASELINE_METHODS:
        raise ValueError(
            f"{what}: for Comparisons, method must be one of "
            f"{', '.join(map(repr, BASELINE_METHODS))}, not {method!r} (or fit a comparison "
            "model, raterstats.models.BradleyTerry / PlackettLuce, and rank the fit)"
        )
    rng = np.random.default_rng(D.RANDOM_SEED) if rng is None else rng
    point_fn: dict[str, Callable[[Comparisons], xr.DataArray]] = {
        "win_rate": win_rate,
        "elo": elo,
        "bradley_terry_ml": ml_bradley_terry,
    }
    point = point_fn[method](comparisons)
    t = _table(comparisons, what)
    if point.attrs["not_compared"]:
        raise ValueError(
            f"{what}: {point.attrs['not_compared']}: a system without a comparison cannot be "
            "ranked; rank each dimension on its own (comparisons.filter(dimension=...))"
        )
    m = len(t.systems)
    kept = ("method", "outcomes", "pairs_from_rankings", "split", "separated", "not_converged")
    notes = [f"{k}: {point.attrs[k]}" for k in kept if point.attrs.get(k)]
    if not n_boot:
        draws = point.values[None, None]
        scheme, redrawn = "none", 0
    else:
        out, redrawn, separated = np.empty((n_boot, len(t.dims), m)), 0, {}
        for j, d in enumerate(t.dims):
            chunk = max(1, min(n_boot, _CELLS // max(d.a.shape[0], 1)))
            done, n_sep = 0, 0
            while done < n_boot:
                size = min(chunk, n_boot - done)
                counts, again = _draw_counts(method, d, size, m, rng)
                start = np.nan_to_num(point.values[j])[d.present]
                block, sep = _scores(method, d, counts[:, d.cluster], m, rng, start)
                out[done : done + size, j] = block
                done, redrawn, n_sep = done + size, redrawn + again, n_sep + sep
            if n_sep:
                separated[d.name] = n_sep
        draws, scheme = out[None], t.scheme
        if separated:
            notes.append(
                "bootstrap: replicates without a maximum-likelihood estimate (a system never "
                "lost or never won; finite by the ridge): "
                + ", ".join(f"{visible(k)} {v} of {n_boot}" for k, v in separated.items())
            )
    return xr.DataArray(
        draws,
        dims=("chain", "draw", S.DIMENSION, S.SYSTEM),
        coords={
            "draw": np.arange(draws.shape[1]),
            S.DIMENSION: point[S.DIMENSION].values,
            S.SYSTEM: t.systems,
        },
        attrs={
            "source": f"comparisons ({method})",
            "bootstrap": scheme,
            "bootstrap_redrawn": int(redrawn),
            "method_notes": "\n".join(notes),
        },
    )


__all__ = [
    "BASELINE_METHODS",
    "JUDGMENTS_SCHEME",
    "RANKINGS_SCHEME",
    "RIDGE",
    "BaselineMethod",
    "baseline_score_draws",
    "bt_strengths",
    "elo",
    "ml_bradley_terry",
    "ml_exists",
    "win_rate",
]
