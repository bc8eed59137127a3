"""Agreement between two rankings or two sets of scores: Kendall's tau-b, Spearman's rho,
rank-biased overlap and the normalized rank position.

Typical use: the ranking of systems by an automatic metric (or an LLM judge) against the
human ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from raterstats.agreement import kernels as K
from raterstats.agreement.data import (
    AgreementInputError,
    as_matrix,
    encode,
    is_ratings,
    warn_degenerate,
)


def _two_columns(x: Any, y: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Two aligned numeric vectors from ``(x, y)`` or a two-column ``x``; drops incomplete
    pairs."""
    if y is None:
        if is_ratings(x):
            mat = encode(x, what=what).dense()
        else:
            arr, _ = as_matrix(x, what=what)
            try:
                mat = np.asarray(
                    np.where(arr == None, np.nan, arr) if arr.dtype == object else arr,  # noqa: E711
                    dtype=np.float64,
                )
            except (TypeError, ValueError):
                raise AgreementInputError([f"{what}: scores must be numeric"]) from None
        if mat.shape[1] != 2:
            raise AgreementInputError(
                [
                    f"{what}: expected two columns (two raters / systems / metrics), got "
                    f"{mat.shape[1]}"
                ]
            )
        a, b = mat[:, 0], mat[:, 1]
    else:
        try:
            a = np.asarray(
                [np.nan if v is None else v for v in np.asarray(x, dtype=object)], dtype=np.float64
            )
            b = np.asarray(
                [np.nan if v is None else v for v in np.asarray(y, dtype=object)], dtype=np.float64
            )
        except (TypeError, ValueError):
            raise AgreementInputError([f"{what}: scores must be numeric"]) from None
        problems = []
        if a.ndim != 1 or b.ndim != 1:
            problems.append(f"{what}: x and y must be 1-d")
        elif a.shape != b.shape:
            problems.append(f"{what}: x has {a.shape[0]} entries but y has {b.shape[0]}")
        if problems:
            raise AgreementInputError(problems)
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def kendall_tau_b(x: Any, y: Any = None) -> float:
    """Kendall's tau-b rank correlation (tie-adjusted).

    Parameters
    ----------
    x : array-like or Ratings
        Scores of the first ranking (with ``y``), or a two-column matrix / ``Ratings`` with
        two raters. Pairs with a missing value are left out.
    y : array-like, optional
        Scores of the second ranking, aligned with ``x``.

    Returns
    -------
    float
        tau-b in [-1, 1] (NaN with a warning when a side is constant).

    Notes
    -----
    ``tau_b = (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y))`` with ``P`` concordant and ``Q``
    discordant pairs, ``T_x`` (``T_y``) pairs tied only in ``x`` (``y``). Counted in
    ``O(n log n)`` time.

    References
    ----------
    Kendall, M. G. (1945). The treatment of ties in ranking problems. *Biometrika*, 33(3),
    239-251. https://doi.org/10.1093/biomet/33.3.239

    Examples
    --------
    >>> from raterstats.agreement import kendall_tau_b
    >>> x, y = [12, 2, 1, 12, 2], [1, 4, 7, 1, 0]
    >>> round(kendall_tau_b(x, y), 6)  # R: cor(x, y, method = "kendall")
    -0.471405
    """
    a, b = _two_columns(x, y, "kendall_tau_b")
    est, reason = K.kendall_tau_b(a, b)
    if np.isnan(est):
        warn_degenerate("kendall_tau_b", reason)
    return est


def spearman_rho(x: Any, y: Any = None) -> float:
    """Spearman's rank correlation, exact with ties (Pearson correlation of mid-ranks).

    Parameters
    ----------
    x : array-like or Ratings
        Scores of the first ranking (with ``y``), or a two-column matrix / ``Ratings`` with
        two raters. Pairs with a missing value are left out.
    y : array-like, optional
        Scores of the second ranking, aligned with ``x``.

    Returns
    -------
    float
        rho in [-1, 1] (NaN with a warning when a side is constant).

    Notes
    -----
    With ties the shortcut ``1 - 6 sum d^2 / (n (n^2 - 1))`` is wrong; the Pearson
    correlation of mid-ranks is used.

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things.
    *American Journal of Psychology*, 15(1), 72-101. https://doi.org/10.2307/1412159

    Examples
    --------
    >>> from raterstats.agreement import spearman_rho
    >>> x, y = [1, 2, 3, 4, 5], [5, 6, 7, 8, 7]
    >>> round(spearman_rho(x, y), 6)  # R: cor(x, y, method = "spearman")
    0.820783
    """
    a, b = _two_columns(x, y, "spearman_rho")
    est, reason = K.spearman_rho(a, b)
    if np.isnan(est):
        warn_degenerate("spearman_rho", reason)
    return est


def _ranks_of(
    s: Sequence[Any], t: Sequence[Any], what: str
) -> tuple[np.ndarray, np.ndarray, int, int]:
    s_list, t_list = list(s), list(t)
    problems = []
    for name, lst in (("first", s_list), ("second", t_list)):
        seen: set[Any] = set()
        dup = []
        for v in lst:
            if v in seen:
                dup.append(v)
            seen.add(v)
        if dup:
            problems.append(f"{what}: the {name} ranking lists {dup[:5]} more than once")
    if problems:
        raise AgreementInputError(problems)
    pos_t = {v: i + 1 for i, v in enumerate(t_list)}
    rs = [i + 1 for i, v in enumerate(s_list) if v in pos_t]
    rt = [pos_t[v] for v in s_list if v in pos_t]
    return np.asarray(rs, dtype=np.int64), np.asarray(rt, dtype=np.int64), len(s_list), len(t_list)


def rbo(
    s: Sequence[Any],
    t: Sequence[Any],
    *,
    p: float | None = None,
    kind: Literal["ext", "average_overlap"] = "ext",
    depth: int | None = None,
) -> float:
    """Rank-biased overlap between two rankings (lists of ids, best first).

    Parameters
    ----------
    s, t : sequence
        The two rankings, best first; they may differ in length and need not hold the same
        items (top-k lists). Ids must be unique within a list.
    p : float, optional
        Persistence in (0, 1) for ``kind="ext"`` (default 0.9): the weight of the top ``d``
        ranks decays like ``p**d``, so smaller ``p`` is more top-weighted.
    kind : {"ext", "average_overlap"}
        ``"ext"``: extrapolated RBO (Webber, Moffat & Zobel 2010, eq. 32, for lists of unequal
        length). ``"average_overlap"``: the mean of the overlap proportions ``X_d / d`` for
        ``d = 1..depth`` (the ``p -> 1`` limit of truncated RBO); ``p`` must then be None or 1.
    depth : int, optional
        Evaluate only the top ``depth`` entries of each list (for ``"average_overlap"`` the
        default is the shorter list's length).

    Returns
    -------
    float
        Similarity in [0, 1]; 1 for identical rankings.

    Notes
    -----
    With ``l`` and ``s`` the lengths of the longer and the shorter list and ``X_d`` the
    number of items shared by the two top-``d`` prefixes::

        RBO_ext = (1-p)/p [ sum_{d=1}^{l} X_d p^d / d + sum_{d=s+1}^{l} X_s (d - s) p^d / (s d) ]
                  + [ (X_l - X_s) / l + X_s / s ] p^l

    References
    ----------
    Webber, W., Moffat, A., & Zobel, J. (2010). A similarity measure for indefinite rankings.
    *ACM Transactions on Information Systems*, 28(4), 20.
    https://doi.org/10.1145/1852102.1852106

    Examples
    --------
    >>> from raterstats.agreement import rbo
    >>> round(rbo(list("abcde"), list("bcdae"), p=0.9), 3)
    0.828
    >>> round(rbo(list("abcdefg"), list("zcavwxy"), kind="average_overlap"), 3)
    0.312
    """
    what = "rbo"
    problems = []
    if kind not in ("ext", "average_overlap"):
        problems.append(f"{what}: kind must be 'ext' or 'average_overlap', not {kind!r}")
    if kind == "ext":
        p_val = 0.9 if p is None else float(p)
        if not 0.0 < p_val < 1.0:
            problems.append(
                f"{what}: p must lie in (0, 1) for kind='ext', not {p!r} (p = 1 is "
                "kind='average_overlap')"
            )
    else:
        p_val = 1.0
        if p is not None and float(p) != 1.0:
            problems.append(f"{what}: kind='average_overlap' is the p = 1 limit; got p={p!r}")
    if depth is not None and (int(depth) != depth or depth < 1):
        problems.append(f"{what}: depth must be a positive integer, not {depth!r}")
    if problems:
        raise AgreementInputError(problems)
    s_list, t_list = list(s), list(t)
    if depth is not None:
        s_list, t_list = s_list[: int(depth)], t_list[: int(depth)]
    rs, rt, ls, lt = _ranks_of(s_list, t_list, what)
    if kind == "average_overlap":
        d = int(depth) if depth is not None else min(ls, lt)
        if d < 1:
            warn_degenerate(what, K.REASON_TOO_FEW)
            return float("nan")
        return K.average_overlap(rs, rt, d)
    if min(ls, lt) == 0:
        warn_degenerate(what, K.REASON_TOO_FEW)
        return float("nan")
    return K.rbo_ext(rs, rt, ls, lt, p_val)


def normalized_rank_position(
    reference: Any,
    candidate: Any = None,
    *,
    k: int = 1,
    descending: bool = True,
) -> float:
    """Where the reference's top items land in the candidate ranking, in [0, 1].

    Parameters
    ----------
    reference : array-like
        Scores of the reference ranking (e.g. human mean scores per system); or a two-column
        matrix (reference, candidate) when ``candidate`` is None.
    candidate : array-like, optional
        Scores of the candidate ranking for the same items, aligned with ``reference``.
    k : int
        How many of the reference's best items to follow (items tied at the boundary are all
        included).
    descending : bool
        Higher scores are better (rank 1 = highest score). Set False for ranks or errors.

    Returns
    -------
    float
        The mean normalized position ``(rank - 1) / (n - 1)`` in the candidate ranking
        (mid-ranks for ties) of the reference's top-``k`` items: 0 when the candidate also
        puts them first, 1 when it puts them last, about 0.5 on average for an unrelated
        ranking.

    Notes
    -----
    There is no single published definition under this name; this is the normalized rank
    (``rank / n`` style, rescaled to [0, 1]) used in retrieval and recommender evaluation,
    applied to the reference's best items. Items with a missing score on either side are
    left out.

    Examples
    --------
    >>> from raterstats.agreement import normalized_rank_position
    >>> human = [4.1, 3.2, 3.9, 2.5]   # system 0 is best for humans
    >>> metric = [0.61, 0.70, 0.58, 0.40]  # the metric puts it second
    >>> round(normalized_rank_position(human, metric), 4)
    0.3333
    """
    what = "normalized_rank_position"
    if int(k) != k or k < 1:
        raise AgreementInputError([f"{what}: k must be a positive integer, not {k!r}"])
    a, b = _two_columns(reference, candidate, what)
    n = a.shape[0]
    if n < 2:
        warn_degenerate(what, K.REASON_TOO_FEW)
        return float("nan")
    ref = -a if descending else a
    better = np.searchsorted(np.sort(ref), ref, side="left")  # items strictly better
    top = better < k
    pos = K.normalized_positions(b, descending=descending)
    return float(pos[top].mean())


__all__ = ["kendall_tau_b", "normalized_rank_position", "rbo", "spearman_rho"]
