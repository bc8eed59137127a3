"""The NumPy reference of the latent-class likelihood: every compiled kernel of this package
(:mod:`~raterstats.models.latent_class.kernels_density`,
:mod:`~raterstats.models.latent_class.kernels_em`) is an override of a function here, and
the tests check each against it at random points.

The likelihood has one form for every model. A model maps its parameters to a *table*
``T[..., e, t] = log P(rated category | true class t)`` with one row ``e`` per (parameter
row, rated category) pair present in the data (:class:`TableLayout`: MACE's rows are
rater x dimension x design cells, pooled Dawid-Skene's dimension x design cells), and a
log class prior ``(..., D, K)``. A pattern's log joint is its dimension's log prior plus
the sum of its ratings' table rows (:func:`pattern_log_joint_np`), masked where the class
is impossible; the marginal likelihood is its log-sum-exp over classes, weighted by the
pattern count. :func:`mace_rating_table` and :func:`ds_rating_table` are the models'
tables; :func:`em_estep_np` and :func:`em_accumulate_np` are the E-step and the expected
counts of EM (and, for a single parameter value, the likelihood and its gradient with
respect to the table). The simplex transforms are PyMC's, as the compiled densities use
them.

Nothing here imports polars, xarray or numba; draws come first: arrays over draws have
shape ``(S, ...)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from raterstats.models.latent_class.data import LatentClassData, class_mask_np

# ---------------------------------------------------------------------- generic helpers


def logsumexp_np(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Stable log-sum-exp along ``axis`` (``-inf`` rows stay ``-inf``).

    Examples
    --------
    >>> logsumexp_np(np.array([[0.0, np.log(3.0)], [-np.inf, -np.inf]])).round(6).tolist()
    [1.386294, -inf]
    """
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - m), axis=axis)) + np.squeeze(m, axis=axis)


def segment_sum_np(values: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """Sum ``values`` (..., N, K) over the rating axis by sorted group ``index`` into n.

    Examples
    --------
    >>> segment_sum_np(np.ones((4, 2)), np.array([0, 0, 2, 2]), 3).tolist()
    [[2.0, 2.0], [0.0, 0.0], [2.0, 2.0]]
    """
    starts = np.r_[0, np.flatnonzero(np.diff(index)) + 1]
    out = np.add.reduceat(values, starts, axis=-2)
    if starts.size == n:
        return out
    full = np.zeros((*values.shape[:-2], n, values.shape[-1]), dtype=values.dtype)
    full[..., index[starts], :] = out
    return full


def entropy_np(prob: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy (nats) along ``axis``; 0 log 0 = 0.

    Examples
    --------
    >>> entropy_np(np.array([[0.5, 0.5], [0.9, 0.1]])).round(6).tolist()
    [0.693147, 0.325083]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(prob > 0, prob * np.log(prob), 0.0)
    return -np.sum(t, axis=axis)


# ---------------------------------------------------------------------- table layout


class TableLayout(NamedTuple):
    """Index arrays of the table form of the likelihood (see the module docstring).

    ``e_row``, ``e_code``: the parameter row and rated category of every table row ``e``
    (unique pairs, sorted); ``p_e``: the table row of every pattern rating;
    ``p_pattern``: its pattern; ``p_start``: pattern boundaries in the pattern ratings
    (``P + 1``); ``pattern_dim``, ``pattern_w`` (count), ``mask`` ``(P, K)``: the
    patterns' dimension, weight and possible classes.
    """

    e_row: np.ndarray
    e_code: np.ndarray
    p_e: np.ndarray
    p_pattern: np.ndarray
    p_start: np.ndarray
    pattern_dim: np.ndarray
    pattern_w: np.ndarray
    mask: np.ndarray

    @property
    def n_entries(self) -> int:
        """Number of table rows ``E``."""
        return int(self.e_row.size)

    @property
    def n_patterns(self) -> int:
        """Number of patterns ``P``."""
        return int(self.pattern_dim.size)


def unique_inverse(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` of non-negative integers, in O(n) by a
    table of the values present when they are dense enough (at most ``4 n + 1024``
    possible values), by sorting otherwise.

    Examples
    --------
    >>> [a.tolist() for a in unique_inverse(np.array([7, 2, 7, 5]))]
    [[2, 5, 7], [2, 0, 2, 1]]
    """
    n_values = int(key.max()) + 1 if key.size else 0
    if key.size == 0 or key.min() < 0 or n_values > 4 * key.size + 1024:
        uniq, inverse = np.unique(key, return_inverse=True)
        return uniq, inverse.ravel()
    seen = np.zeros(n_values, dtype=bool)
    seen[key] = True
    rank = np.cumsum(seen) - 1
    return np.flatnonzero(seen), rank[key]


def table_layout(data: LatentClassData, row: np.ndarray) -> TableLayout:
    """The :class:`TableLayout` of ``data`` whose pattern ratings have parameter rows
    ``row`` (MACE: ``data.p_cell``; see the models' ``table_rows``).

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> lay = table_layout(d, d.p_cell)
    >>> lay.p_e.size == d.p_code.size, lay.n_patterns == d.n_patterns
    (True, True)
    """
    K = data.K
    key = row.astype(np.int64) * K + data.p_code
    uniq, p_e = unique_inverse(key)
    counts = np.bincount(data.p_pattern, minlength=data.n_patterns)
    return TableLayout(
        e_row=(uniq // K).astype(np.int64),
        e_code=(uniq % K).astype(np.int64),
        p_e=p_e.astype(np.int64),
        p_pattern=data.p_pattern.astype(np.int64),
        p_start=np.r_[0, np.cumsum(counts)].astype(np.int64),
        pattern_dim=data.pattern_dim.astype(np.int64),
        pattern_w=data.pattern_count.astype(np.float64),
        mask=data.class_mask(data.pattern_dim, data.pattern_gold),
    )


# ---------------------------------------------------------------------- the models' tables


def mace_rating_table(competence: np.ndarray, spam: np.ndarray, lay: TableLayout) -> np.ndarray:
    """MACE's table ``(S, E, K)``: ``log(theta + (1 - theta) xi[a])`` where the true class
    is the rated category ``a``, ``log(1 - theta) + log xi[a]`` elsewhere, from
    ``competence (S, R, D, G)`` and ``spam (S, R, D, K)`` (rows: rater x dimension x design
    cells, as ``data.p_cell``).

    Examples
    --------
    >>> lay = TableLayout(np.array([0]), np.array([1]), *([np.zeros(0)] * 6))
    >>> T = mace_rating_table(np.full((1, 1, 1, 1), 0.5), np.full((1, 1, 1, 2), 0.5), lay)
    >>> np.exp(T).round(3).tolist()  # P(rated 1 | true 0), P(rated 1 | true 1)
    [[[0.25, 0.75]]]
    """
    S, R, D, G = competence.shape
    K = spam.shape[-1]
    e_cell, e_code = lay.e_row, lay.e_code
    e_rd = (e_cell // (D * G)) * D + (e_cell // G) % D
    th = competence.reshape(S, -1)[:, e_cell]
    xi = spam.reshape(S, R * D, K)[:, e_rd, e_code]
    with np.errstate(divide="ignore"):
        base = np.log1p(-th) + np.log(xi)
        match = np.log(th + (1.0 - th) * xi)
    T = np.repeat(base[..., None], K, axis=-1)
    T[:, np.arange(e_cell.size), e_code] = match
    return T


def ds_rating_table(log_confusion: np.ndarray, lay: TableLayout) -> np.ndarray:
    """Dawid-Skene's table ``(..., E, K)``: ``T[..., e, t] = log_confusion[..., row_e, t,
    code_e]`` from log confusion matrices ``(..., n_rows, K, K)`` (true x rated; rows as
    the layout's: rater x dimension x design cells, or dimension x design when pooled).

    Examples
    --------
    >>> lay = TableLayout(np.array([0]), np.array([1]), *([np.zeros(0)] * 6))
    >>> conf = np.array([[[0.9, 0.1], [0.2, 0.8]]])
    >>> np.exp(ds_rating_table(np.log(conf), lay)).round(3).tolist()
    [[0.1, 0.8]]
    """
    lead = log_confusion.ndim - 3
    rows = log_confusion[..., lay.e_row, :, lay.e_code]  # (E, ..., K)
    return np.moveaxis(rows, 0, lead)


# ---------------------------------------------------------------------- pattern log joint


def masked_log_joint_np(
    summed: np.ndarray, log_prior: np.ndarray, group_dim: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """``log_prior[..., group_dim, :] + summed`` where ``mask``, ``-inf`` elsewhere.

    Examples
    --------
    >>> masked_log_joint_np(np.zeros((1, 2)), np.log([[0.5, 0.5]]), np.array([0]),
    ...                     np.array([[True, False]])).round(4).tolist()
    [[-0.6931, -inf]]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mask, log_prior[..., group_dim, :] + summed, -np.inf)


def log_joint_np(
    per_rating_logp: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    group_dim: np.ndarray,
    group_gold: np.ndarray,
    log_prior: np.ndarray,
    valid: np.ndarray,
) -> np.ndarray:
    """``(..., n_groups, K)`` log P(class) + sum of log P(rating | class), ``-inf`` where
    the class is impossible (invalid category or not the gold label).

    Examples
    --------
    >>> per = np.log(np.array([[0.9, 0.2], [0.8, 0.3]]))  # two ratings of one unit
    >>> j = log_joint_np(per, np.array([0, 0]), 1, np.array([0]), np.array([-1]),
    ...                  np.log([[0.5, 0.5]]), np.array([[True, True]]))
    >>> np.exp(j).round(3).tolist()
    [[0.36, 0.03]]
    """
    summed = segment_sum_np(per_rating_logp, group, n_groups)
    mask = class_mask_np(valid, group_dim, group_gold)
    return masked_log_joint_np(summed, log_prior, group_dim, mask)


def pattern_log_joint_np(T: np.ndarray, log_prior: np.ndarray, lay: TableLayout) -> np.ndarray:
    """``(..., P, K)`` log joint of every pattern and class from a table ``T (..., E, K)``
    and the log class prior ``(..., D, K)``; ``-inf`` where the class is impossible.

    Examples
    --------
    >>> lay = TableLayout(np.array([0]), np.array([0]), np.array([0, 0]), np.array([0, 0]),
    ...                   np.array([0, 2]), np.array([0]), np.ones(1),
    ...                   np.array([[True, True]]))
    >>> T = np.log(np.array([[0.9, 0.2]]))  # the pattern rates category 0 twice
    >>> np.exp(pattern_log_joint_np(T, np.log([[0.5, 0.5]]), lay)).round(3).tolist()
    [[0.405, 0.02]]
    """
    summed = segment_sum_np(T[..., lay.p_e, :], lay.p_pattern, lay.n_patterns)
    return masked_log_joint_np(summed, log_prior, lay.pattern_dim, lay.mask)


# ---------------------------------------------------------------------- EM


def em_estep_np(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
) -> float:
    """The E-step: fills the class posteriors ``q (P, K)`` of every pattern and returns
    the weighted log marginal likelihood (``-inf`` when a pattern has no possible class
    of positive probability). Reference of
    :func:`raterstats.models.latent_class.kernels_em.em_estep`.

    The ratings' table rows are summed per pattern in their order (a running sum from 0),
    then added to the log prior: :func:`pattern_log_joint_np` sums the same values by
    ``np.add.reduceat``, which rounds differently, so the two agree to rounding only.
    EM keeps this order: its estimates start NUTS chains, whose draws would change with
    the last bit of the start.

    Examples
    --------
    >>> q = np.empty((1, 2))
    >>> ll = em_estep_np(np.log([[0.9, 0.2]]), np.log([[0.5, 0.5]]), np.array([0, 0]),
    ...                  np.array([0, 2]), np.array([0]), np.ones(1),
    ...                  np.array([[True, True]]), q)
    >>> round(float(np.exp(ll)), 3), q.round(3).tolist()
    (0.425, [[0.953, 0.047]])
    """
    P, K = mask.shape
    pat = np.repeat(np.arange(P), np.diff(p_start))
    s = np.array(log_prior[pattern_dim], dtype=float)
    for t in range(K):
        s[:, t] += np.bincount(pat, weights=T[p_e, t], minlength=P)
    s = np.where(mask, s, -np.inf)
    m = s.max(axis=1)
    ok = m > -np.inf
    m_safe = np.where(ok, m, 0.0)
    e = np.where(mask & ok[:, None], np.exp(s - m_safe[:, None]), 0.0)
    acc = e.sum(axis=1)
    pos = acc > 0.0
    q[:] = np.where(pos[:, None], e / np.where(pos, acc, 1.0)[:, None], 0.0)
    if not pos.all():
        return -np.inf
    return float(np.dot(pattern_w, m + np.log(acc)))


def em_accumulate_np(
    q: np.ndarray, p_e: np.ndarray, p_start: np.ndarray, pattern_w: np.ndarray, n_e: int
) -> np.ndarray:
    """Expected counts ``M[e, t] = sum over pattern ratings r with table row e of
    w_p q[p, t]``: the M-step's sufficient statistics and the gradient of the weighted
    log marginal likelihood with respect to the table. Reference of
    :func:`raterstats.models.latent_class.kernels_em.em_accumulate`.

    Examples
    --------
    >>> em_accumulate_np(np.array([[0.75, 0.25]]), np.array([0, 0]), np.array([0, 2]),
    ...                  np.full(1, 2.0), 1).tolist()
    [[3.0, 1.0]]
    """
    P, K = q.shape
    pat = np.repeat(np.arange(P), np.diff(p_start))
    wq = pattern_w[pat, None] * q[pat]
    return np.stack([np.bincount(p_e, weights=wq[:, t], minlength=n_e) for t in range(K)], axis=1)


def em_estep_accumulate_np(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
    M: np.ndarray,
) -> float:
    """:func:`em_estep_np`, then the expected counts of its ``q`` into ``M (E, K)``
    (overwritten). Reference of
    :func:`raterstats.models.latent_class.kernels_em.em_estep_accumulate`.

    Examples
    --------
    >>> q, M = np.empty((1, 2)), np.full((1, 2), 7.0)
    >>> ll = em_estep_accumulate_np(np.zeros((1, 2)), np.log([[0.5, 0.5]]), np.array([0]),
    ...                             np.array([0, 1]), np.array([0]), np.ones(1),
    ...                             np.array([[True, True]]), q, M)
    >>> M.tolist()
    [[0.5, 0.5]]
    """
    ll = em_estep_np(T, log_prior, p_e, p_start, pattern_dim, pattern_w, mask, q)
    M[:] = em_accumulate_np(q, p_e, p_start, pattern_w, M.shape[0])
    return ll


def em_estep_counts_np(
    T: np.ndarray,
    log_prior: np.ndarray,
    p_e: np.ndarray,
    p_start: np.ndarray,
    pattern_dim: np.ndarray,
    pattern_w: np.ndarray,
    mask: np.ndarray,
    q: np.ndarray,
    M: np.ndarray,
    cc: np.ndarray,
) -> float:
    """:func:`em_estep_accumulate_np`, then the expected class counts per dimension of its
    ``q`` into ``cc (D, K)`` (overwritten; :func:`class_counts`): everything one EM
    iteration needs from the patterns. Reference of
    :func:`raterstats.models.latent_class.kernels_em.em_estep_counts`.

    Examples
    --------
    >>> q, M, cc = np.empty((1, 2)), np.empty((1, 2)), np.empty((1, 2))
    >>> ll = em_estep_counts_np(np.zeros((1, 2)), np.log([[0.5, 0.5]]), np.array([0]),
    ...                         np.array([0, 1]), np.array([0]), np.full(1, 4.0),
    ...                         np.array([[True, True]]), q, M, cc)
    >>> cc.tolist()
    [[2.0, 2.0]]
    """
    ll = em_estep_accumulate_np(T, log_prior, p_e, p_start, pattern_dim, pattern_w, mask, q, M)
    cc[:] = pattern_class_counts(q, pattern_dim, pattern_w, cc.shape[0])
    return ll


def pattern_class_counts(
    q: np.ndarray, pattern_dim: np.ndarray, pattern_w: np.ndarray, n_dims: int
) -> np.ndarray:
    """Expected class counts per dimension ``(n_dims, K)``: the pattern weights times the
    class posteriors ``q (P, K)``, summed over each dimension's patterns.

    Examples
    --------
    >>> pattern_class_counts(np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([0, 1]),
    ...                      np.array([2.0, 1.0]), 2).tolist()
    [[1.0, 1.0], [1.0, 0.0]]
    """
    w = np.asarray(pattern_w, dtype=float)
    if n_dims == 1:  # (no BLAS: its threads would compete with the caller's for the cores)
        return (w[:, None] * q).sum(axis=0)[None, :]
    return np.stack(
        [np.bincount(pattern_dim, w * q[:, k], minlength=n_dims) for k in range(q.shape[1])],
        axis=1,
    )


def class_counts(data: LatentClassData, q: np.ndarray) -> np.ndarray:
    """Expected class counts per dimension, ``(D, K)``: the pattern counts times the class
    posteriors ``q (P, K)``, summed over each dimension's patterns.

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3, random_seed=1).ratings)
    >>> q = np.full((d.n_patterns, d.K), 1.0 / d.K)
    >>> bool(np.allclose(class_counts(d, q).sum(axis=1), np.bincount(d.unit_dim) * 1.0))
    True
    """
    return pattern_class_counts(q, data.pattern_dim, data.pattern_count, len(data.dimensions))


# ---------------------------------------------------------------------- simplex transforms


def simplex_forward_np(p: np.ndarray) -> np.ndarray:
    """PyMC's simplex transform (forward) along the last axis.

    Examples
    --------
    >>> simplex_backward_np(simplex_forward_np(np.array([0.2, 0.3, 0.5]))).round(6).tolist()
    [0.2, 0.3, 0.5]
    """
    lp = np.log(np.clip(p, 1e-12, None))
    return lp[..., :-1] - lp.mean(axis=-1, keepdims=True)


def simplex_backward_np(v: np.ndarray) -> np.ndarray:
    """PyMC's simplex transform (backward) along the last axis. Reference of
    :func:`raterstats.models.latent_class.kernels_density.simplex_backward`.

    Examples
    --------
    >>> simplex_backward_np(np.zeros(2)).round(6).tolist()
    [0.333333, 0.333333, 0.333333]
    """
    full = np.concatenate([v, -v.sum(axis=-1, keepdims=True)], axis=-1)
    e = np.exp(full - full.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def pack_rows(p: np.ndarray, n_cat_rows: np.ndarray) -> np.ndarray:
    """Simplex values of padded probability rows ``(n, K)`` concatenated row by row.

    Examples
    --------
    >>> p = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    >>> unpack_rows(pack_rows(p, np.array([2, 3])), np.array([2, 3]), 3).round(6).tolist()
    [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]
    """
    return (
        np.concatenate(
            [simplex_forward_np(p[i, :k] / p[i, :k].sum()) for i, k in enumerate(n_cat_rows)]
        )
        if len(n_cat_rows)
        else np.zeros(0)
    )


def unpack_rows(x: np.ndarray, n_cat_rows: np.ndarray, K: int) -> np.ndarray:
    """Inverse of :func:`pack_rows`: padded ``(n, K)`` probability rows; ``x`` may have
    leading axes (many draws at once: ``(..., m)`` gives ``(..., n, K)``).

    Examples
    --------
    >>> x = np.zeros((2, 3))  # two draws of rows with 2 and 3 categories
    >>> unpack_rows(x, np.array([2, 3]), 3).round(3).tolist()[0]
    [[0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    """
    x = np.asarray(x, float)
    lead = x.shape[:-1]
    out = np.zeros((*lead, n_cat_rows.size, K))
    ks = np.unique(n_cat_rows)
    if ks.size == 1:
        k = int(ks[0])
        out[..., :k] = simplex_backward_np(
            x[..., : n_cat_rows.size * (k - 1)].reshape(*lead, n_cat_rows.size, k - 1)
        )
        return out
    starts = np.concatenate([[0], np.cumsum(n_cat_rows - 1)])
    for k in ks:
        k = int(k)
        rows = np.flatnonzero(n_cat_rows == k)
        cols = starts[rows][:, None] + np.arange(k - 1)
        out[..., rows, :k] = simplex_backward_np(x[..., cols])
    return out


__all__ = [
    "TableLayout",
    "class_counts",
    "ds_rating_table",
    "em_accumulate_np",
    "em_estep_accumulate_np",
    "em_estep_counts_np",
    "em_estep_np",
    "entropy_np",
    "log_joint_np",
    "logsumexp_np",
    "mace_rating_table",
    "masked_log_joint_np",
    "pack_rows",
    "pattern_class_counts",
    "pattern_log_joint_np",
    "segment_sum_np",
    "simplex_backward_np",
    "simplex_forward_np",
    "table_layout",
    "unique_inverse",
    "unpack_rows",
]
