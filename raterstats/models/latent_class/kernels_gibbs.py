"""Numba kernels of the data-augmentation (Gibbs) sampler of flat MACE and unpooled
Dawid-Skene (:mod:`~raterstats.models.latent_class.gibbs`).

One sweep is one pass over the ratings, unit by unit: the true label of each unit is drawn
from its full conditional given the parameters (and, for MACE, whether each rating came
from knowing the label or from the rater's spam distribution), the complete-data counts
are accumulated on the way, and then every parameter is drawn from its conjugate
Dirichlet / Beta full conditional given the counts. The same pass gives, for free, the
label probabilities of every unit given the current parameters (averaged over kept
draws: the Rao-Blackwellised label posterior) and each unit's log-likelihood with its
label marginalised (the ``log_likelihood`` group).

A chain is one call of :func:`ds_chain` or :func:`mace_chain`; both release the GIL
(``nogil=True``), so chains run in parallel threads. Each call seeds numba's generator of
its own thread first, so a chain's draws depend on its seed alone, not on the thread that
runs it. (Numba's ``np.random`` is used on purpose: numba has no ``Generator`` in nogil
code, and its legacy generator keeps one state per thread.)
"""

# ruff: noqa: NPY002

from __future__ import annotations

import numpy as np
from numba import njit

NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def dirichlet_row(conc: np.ndarray, k: int, out: np.ndarray) -> None:
    """Fill ``out[:k]`` with a Dirichlet(``conc[:k]``) draw (``out[k:]`` = 0), through
    log-gamma variates for concentrations below 1 so that no component underflows to an
    all-zero row."""
    m = NEG_INF
    for a in range(k):
        c = conc[a]
        if c >= 1.0:
            v = np.log(np.random.gamma(c, 1.0))
        else:  # Gamma(c) = Gamma(c + 1) U^(1/c)
            v = np.log(np.random.gamma(c + 1.0, 1.0)) + np.log(np.random.random()) / c
        out[a] = v
        if v > m:
            m = v
    s = 0.0
    for a in range(k):
        out[a] = np.exp(out[a] - m)
        s += out[a]
    for a in range(k):
        out[a] /= s
    for a in range(k, out.size):
        out[a] = 0.0


@njit(cache=True, nogil=True)
def label_pass(
    table: np.ndarray,
    log_prev: np.ndarray,
    unit_start: np.ndarray,
    r_cell: np.ndarray,
    r_code: np.ndarray,
    unit_dim: np.ndarray,
    unit_gold: np.ndarray,
    n_cat: np.ndarray,
    labels: np.ndarray,
    prob_acc: np.ndarray,
    ll_row: np.ndarray,
    keep: bool,
    counts: np.ndarray,
    prev_n: np.ndarray,
) -> float:
    """Draw every unit's true label given the parameters: ``table[c, a, t]`` is
    log P(rated ``a`` | true ``t``) of parameter row ``c``, ``log_prev (D, K)``; add the
    complete-data counts to ``counts[c, t, a]`` (ratings ``a`` of row ``c`` whose unit
    has label ``t``) and ``prev_n[d, t]`` in the same pass. When ``keep``, add each unit's
    label probabilities to ``prob_acc`` and write its marginal log-likelihood to ``ll_row``
    (when it has room). Returns the summed marginal log-likelihood."""
    K = table.shape[2]
    lp = np.empty(K)
    total = 0.0
    write_ll = keep and ll_row.size > 0
    for u in range(unit_dim.size):
        d = unit_dim[u]
        k = n_cat[d]
        for t in range(k):
            lp[t] = log_prev[d, t]
        for i in range(unit_start[u], unit_start[u + 1]):
            row = table[r_cell[i], r_code[i]]
            for t in range(k):
                lp[t] += row[t]
        g = unit_gold[u]
        m = NEG_INF
        for t in range(k):
            if g >= 0 and t != g:
                lp[t] = NEG_INF
            if lp[t] > m:
                m = lp[t]
        s = 0.0
        for t in range(k):
            lp[t] = np.exp(lp[t] - m)
            s += lp[t]
        ll = m + np.log(s)
        total += ll
        x = np.random.random() * s
        t_new = k - 1
        acc = 0.0
        for t in range(k):
            acc += lp[t]
            if x < acc:
                t_new = t
                break
        labels[u] = t_new
        prev_n[d, t_new] += 1.0
        for i in range(unit_start[u], unit_start[u + 1]):
            counts[r_cell[i], t_new, r_code[i]] += 1.0
        if keep:
            for t in range(k):
                prob_acc[u, t] += lp[t] / s
            if write_ll:
                ll_row[u] = ll
    return total


@njit(cache=True, nogil=True)
def ds_chain(
    seed: int,
    n_sweeps: int,
    burn: int,
    thin: int,
    conf0: np.ndarray,
    prev0: np.ndarray,
    conf_conc: np.ndarray,
    prev_conc: np.ndarray,
    unit_start: np.ndarray,
    r_cell: np.ndarray,
    r_code: np.ndarray,
    unit_dim: np.ndarray,
    unit_gold: np.ndarray,
    n_cat: np.ndarray,
    cell_k: np.ndarray,
    out_conf: np.ndarray,
    out_prev: np.ndarray,
    out_ll: np.ndarray,
    out_total: np.ndarray,
    prob_acc: np.ndarray,
) -> None:
    """One Dawid-Skene chain: ``n_sweeps`` sweeps from the confusion rows ``conf0
    (C, K, K)`` (true x rated) and prevalence ``prev0 (D, K)``; after ``burn`` sweeps every
    ``thin``-th state is written to ``out_conf`` / ``out_prev`` (its per-unit marginal
    log-likelihood to ``out_ll`` when that has rows, the summed one to ``out_total``) and
    its label probabilities added to ``prob_acc``. The rows of cell ``c`` have ``cell_k[c]``
    categories (its dimension's)."""
    np.random.seed(seed)
    C, K = conf0.shape[0], conf0.shape[1]
    D = prev0.shape[0]
    U = unit_dim.size
    conf = conf0.copy()
    prev = prev0.copy()
    table = np.empty((C, K, K))
    log_prev = np.empty((D, K))
    counts = np.empty((C, K, K))
    prev_n = np.empty((D, K))
    labels = np.zeros(U, dtype=np.int64)
    conc = np.empty(K)
    row = np.empty(K)
    no_ll = np.empty(0)
    kept = 0
    for s in range(n_sweeps):
        for c in range(C):
            for t in range(K):
                for a in range(K):
                    p = conf[c, t, a]
                    table[c, a, t] = np.log(p) if p > 0 else NEG_INF
        for d in range(D):
            for t in range(K):
                p = prev[d, t]
                log_prev[d, t] = np.log(p) if p > 0 else NEG_INF
        keep = s >= burn and (s - burn) % thin == 0 and kept < out_conf.shape[0]
        ll_row = out_ll[kept] if keep and out_ll.shape[0] > 0 else no_ll
        counts[:] = 0.0
        prev_n[:] = 0.0
        total = label_pass(
            table, log_prev, unit_start, r_cell, r_code, unit_dim, unit_gold, n_cat, labels,
            prob_acc, ll_row, keep, counts, prev_n,
        )  # fmt: skip
        if keep:
            out_conf[kept] = conf
            out_prev[kept] = prev
            out_total[kept] = total
            kept += 1
        for c in range(C):
            k = cell_k[c]
            for t in range(k):
                for a in range(K):
                    conc[a] = conf_conc[c, t, a] + counts[c, t, a]
                dirichlet_row(conc, k, row)
                conf[c, t] = row
        for d in range(D):
            k = n_cat[d]
            for a in range(K):
                conc[a] = prev_conc[d, a] + prev_n[d, a]
            dirichlet_row(conc, k, row)
            prev[d] = row


@njit(cache=True, nogil=True)
def mace_chain(
    seed: int,
    n_sweeps: int,
    burn: int,
    thin: int,
    inner: int,
    theta0: np.ndarray,
    spam0: np.ndarray,
    prev0: np.ndarray,
    beta_a: float,
    beta_b: float,
    spam_conc: np.ndarray,
    prev_conc: np.ndarray,
    n_designs: int,
    unit_start: np.ndarray,
    r_cell: np.ndarray,
    r_code: np.ndarray,
    unit_dim: np.ndarray,
    unit_gold: np.ndarray,
    n_cat: np.ndarray,
    out_theta: np.ndarray,
    out_spam: np.ndarray,
    out_prev: np.ndarray,
    out_ll: np.ndarray,
    out_total: np.ndarray,
    prob_acc: np.ndarray,
) -> None:
    """One flat MACE chain: competence ``theta0 (C,)`` per rater x dimension x design
    cell, spam distributions ``spam0 (R * D, K)`` per rater x dimension (row ``c //
    n_designs`` of cell ``c``), prevalence ``prev0 (D, K)``.

    Each sweep draws the true labels (competence marginalised) and counts, per cell, the
    ratings of each category that equal their unit's label (``m[c, a]``) and those that
    differ (spam draws for certain). Given the labels, the competences and spam rows
    depend on the ratings through these counts alone, so ``inner`` rounds of the
    knows / guesses augmentation run on the counts, at no cost per rating: of the
    ``m[c, a]`` matching ratings, ``Binomial(m[c, a], theta / (theta + (1 - theta)
    xi[a]))`` came from knowing; then competence from Beta(a + knew, b + guessed) and the
    spam rows from Dirichlet(conc + guessed ratings by category). Prevalence from
    Dirichlet(conc + label counts). Kept states as in :func:`ds_chain`."""
    np.random.seed(seed)
    C = theta0.size
    RD, K = spam0.shape
    D = prev0.shape[0]
    U = unit_dim.size
    theta = theta0.copy()
    spam = spam0.copy()
    prev = prev0.copy()
    table = np.empty((C, K, K))
    log_prev = np.empty((D, K))
    counts = np.empty((C, K, K))
    prev_n = np.empty((D, K))
    match = np.empty((C, K))
    miss = np.empty((C, K))
    spam_n = np.empty((RD, K))
    labels = np.zeros(U, dtype=np.int64)
    conc = np.empty(K)
    row = np.empty(K)
    no_ll = np.empty(0)
    kept = 0
    for s in range(n_sweeps):
        for c in range(C):
            th = min(theta[c], 1.0 - 1e-15)
            xi = spam[c // n_designs]
            for a in range(K):
                for t in range(K):
                    p = (1.0 - th) * xi[a] + (th if a == t else 0.0)
                    table[c, a, t] = np.log(p) if p > 0 else NEG_INF
        for d in range(D):
            for t in range(K):
                p = prev[d, t]
                log_prev[d, t] = np.log(p) if p > 0 else NEG_INF
        keep = s >= burn and (s - burn) % thin == 0 and kept < out_theta.shape[0]
        ll_row = out_ll[kept] if keep and out_ll.shape[0] > 0 else no_ll
        counts[:] = 0.0
        prev_n[:] = 0.0
        total = label_pass(
            table, log_prev, unit_start, r_cell, r_code, unit_dim, unit_gold, n_cat, labels,
            prob_acc, ll_row, keep, counts, prev_n,
        )  # fmt: skip
        if keep:
            out_theta[kept] = theta
            out_spam[kept] = spam
            out_prev[kept] = prev
            out_total[kept] = total
            kept += 1
        for c in range(C):
            for a in range(K):
                match[c, a] = counts[c, a, a]
                m = 0.0
                for t in range(K):
                    m += counts[c, t, a]
                miss[c, a] = m - counts[c, a, a]
        for _ in range(inner):
            spam_n[:] = 0.0
            for c in range(C):
                rd = c // n_designs
                th = theta[c]
                knew = 0.0
                guessed = 0.0
                for a in range(K):
                    guessed += miss[c, a]
                    spam_n[rd, a] += miss[c, a]
                    n = int(match[c, a])
                    if n == 0:
                        continue
                    p_knew = th / (th + (1.0 - th) * spam[rd, a])
                    k_ = np.random.binomial(n, min(max(p_knew, 0.0), 1.0))
                    knew += k_
                    guessed += n - k_
                    spam_n[rd, a] += n - k_
                theta[c] = np.random.beta(beta_a + knew, beta_b + guessed)
            for r in range(RD):
                k = n_cat[r % D]
                for a in range(K):
                    conc[a] = spam_conc[r, a] + spam_n[r, a]
                dirichlet_row(conc, k, row)
                spam[r] = row
        for d in range(D):
            k = n_cat[d]
            for a in range(K):
                conc[a] = prev_conc[d, a] + prev_n[d, a]
            dirichlet_row(conc, k, row)
            prev[d] = row


__all__ = ["dirichlet_row", "ds_chain", "label_pass", "mace_chain"]
