"""Shared pieces of the variational fits of the correlated-crowd models (community
Dawid-Skene, :mod:`~raterstats.models.latent_class.community_ds`; enhanced BCC,
:mod:`~raterstats.models.latent_class.ebcc`): Dirichlet expectations and divergences,
the layout a variational run works on, the held-out folds of the ratings, and the rule
that chooses the number of communities / subtypes from the held-out likelihood.

The rule (:func:`choose_size`) is fixed in advance and sees no gold label: every rating is
held out once over ``folds`` folds (a fixed split, the same whatever the fit's seed, so
every call on the same ratings chooses the same size), the model is fitted to the other
ratings for every candidate size, and each held-out rating is scored by its predictive
probability given the other ratings. The size with the highest total is the best; the
rule picks the *smallest* size whose total is within one standard error of the best (the
one-standard-error rule of Breiman et al. 1984, Hastie, Tibshirani & Friedman 2009, 7.10),
the standard error being that of the per-rating difference from the best, summed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy.special import digamma, gammaln

from raterstats.models.latent_class.data import LatentClassData
from raterstats.models.latent_class.reference import TableLayout, table_layout, unique_inverse

#: candidate numbers of communities / subtypes of ``communities="auto"`` / ``subtypes="auto"``
AUTO_SIZES = (1, 2, 3, 4)
#: folds of the held-out rule
HELDOUT_FOLDS = 5


def dirichlet_elog(conc: np.ndarray) -> np.ndarray:
    """``E[log p]`` under ``Dirichlet(conc)`` along the last axis.

    Examples
    --------
    >>> dirichlet_elog(np.array([1.0, 1.0])).round(4).tolist()
    [-1.0, -1.0]
    """
    return digamma(conc) - digamma(conc.sum(axis=-1, keepdims=True))


def dirichlet_log_norm(conc: np.ndarray) -> np.ndarray:
    """``log Gamma(sum a) - sum log Gamma(a)`` (the log normaliser) along the last axis.

    Examples
    --------
    >>> float(dirichlet_log_norm(np.array([1.0, 1.0, 1.0])).round(6))  # log 2!
    0.693147
    """
    return gammaln(conc.sum(axis=-1)) - gammaln(conc).sum(axis=-1)


def dirichlet_kl(post: np.ndarray, prior: np.ndarray) -> float:
    """``KL(Dirichlet(post) || Dirichlet(prior))`` summed over the rows (last axis: the
    categories; ``prior`` broadcasts against ``post``).

    Examples
    --------
    >>> dirichlet_kl(np.array([[2.0, 2.0]]), np.array([2.0, 2.0]))
    0.0
    >>> round(dirichlet_kl(np.array([[5.0, 1.0]]), np.array([1.0, 1.0])), 4)  # log 5 - 4/5
    0.8094
    """
    prior = np.broadcast_to(prior, post.shape)
    el = dirichlet_elog(post)
    out = dirichlet_log_norm(post) - dirichlet_log_norm(prior) + ((post - prior) * el).sum(-1)
    return float(np.sum(out))


def dirichlet_mean(conc: np.ndarray) -> np.ndarray:
    """Mean of ``Dirichlet(conc)`` along the last axis."""
    return conc / conc.sum(axis=-1, keepdims=True)


class VBLayout(NamedTuple):
    """What a variational run of the correlated-crowd models needs: the table layout of
    the ratings (rows: rater x dimension x design cells) and each cell's rater and
    dimension x design index.

    ``lay``: :class:`~raterstats.models.latent_class.reference.TableLayout` (``e_row`` is a
    cell); ``cell_rater``, ``cell_dg`` (``d G + g``), ``cell_dim``: per cell; ``n_raters``,
    ``n_dims``, ``n_designs``, ``K``.
    """

    lay: TableLayout
    cell_rater: np.ndarray
    cell_dg: np.ndarray
    cell_dim: np.ndarray
    n_raters: int
    n_dims: int
    n_designs: int
    K: int

    @property
    def n_cells(self) -> int:
        """Number of rater x dimension x design cells."""
        return int(self.cell_rater.size)

    @property
    def n_dg(self) -> int:
        """Number of dimension x design pairs."""
        return self.n_dims * self.n_designs


def cell_indices(R: int, D: int, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rater, dimension x design (``d G + g``) and dimension of every cell of the
    row-major rater x dimension x design grid.

    Examples
    --------
    >>> [a.tolist() for a in cell_indices(2, 1, 2)]
    [[0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0]]
    """
    c = np.arange(R * D * G)
    return c // (D * G), c % (D * G), (c // G) % D


def vb_layout(data: LatentClassData) -> VBLayout:
    """The :class:`VBLayout` of all the ratings (rating patterns shared, as in the
    likelihood).

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> v = vb_layout(d)
    >>> v.n_cells == d.n_cells, v.lay.n_patterns == d.n_patterns
    (True, True)
    """
    R, D, G = len(data.raters), len(data.dimensions), len(data.designs)
    rater, dg, dim = cell_indices(R, D, G)
    return VBLayout(table_layout(data, data.p_cell), rater, dg, dim, R, D, G, data.K)


class HeldOut(NamedTuple):
    """One fold of the held-out rule: the layout of the training ratings (every unit its
    own pattern, units whose ratings are all held out included, with no ratings) and the
    held-out ratings' unit, cell, rated category and position among all ratings
    (``rating_index``)."""

    train: VBLayout
    unit: np.ndarray
    cell: np.ndarray
    code: np.ndarray
    rating_index: np.ndarray


def heldout_folds(data: LatentClassData, folds: int = HELDOUT_FOLDS) -> list[HeldOut]:
    """The folds of the held-out rule: the ratings shuffled by a fixed generator (seed 0,
    whatever the fit's seed) and dealt round-robin into ``folds`` folds.

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> f = heldout_folds(d, 3)
    >>> sum(h.rating_index.size for h in f) == d.n_ratings
    True
    >>> f[0].train.lay.n_patterns == d.n_units
    True
    """
    if folds < 2:
        raise ValueError("folds must be at least 2")
    n = data.n_ratings
    fold = np.empty(n, dtype=np.int64)
    fold[np.random.default_rng(0).permutation(n)] = np.arange(n) % folds
    R, D, G, K = len(data.raters), len(data.dimensions), len(data.designs), data.K
    rater, dg, dim = cell_indices(R, D, G)
    cell = data.cell
    mask = data.class_mask(data.unit_dim, data.unit_gold)
    out = []
    for f in range(folds):
        keep = fold != f
        uniq, p_e = unique_inverse(cell[keep] * K + data.code[keep])
        counts = np.bincount(data.unit[keep], minlength=data.n_units)
        lay = TableLayout(
            e_row=(uniq // K).astype(np.int64),
            e_code=(uniq % K).astype(np.int64),
            p_e=p_e.astype(np.int64),
            p_pattern=data.unit[keep].astype(np.int64),
            p_start=np.r_[0, np.cumsum(counts)].astype(np.int64),
            pattern_dim=data.unit_dim.astype(np.int64),
            pattern_w=np.ones(data.n_units),
            mask=mask,
        )
        idx = np.flatnonzero(~keep)
        out.append(
            HeldOut(
                VBLayout(lay, rater, dg, dim, R, D, G, K),
                data.unit[idx],
                cell[idx],
                data.code[idx],
                idx,
            )
        )
    return out


def heldout_logprob(q: np.ndarray, rated: np.ndarray, fold: HeldOut) -> np.ndarray:
    """Log predictive probability of every held-out rating of a fold: ``log sum_s q[u, s]
    rated[c, s, a]`` for the rating's unit ``u``, cell ``c`` and category ``a``, with
    ``q (n_units, S)`` the units' latent-state posteriors given the training ratings and
    ``rated (n_cells, S, K)`` the posterior mean of P(rated category | latent state).

    Examples
    --------
    >>> from raterstats.models.latent_class.data import prepare_latent_class
    >>> from raterstats.simulate import archehr_like_study
    >>> d = prepare_latent_class(archehr_like_study(n_cases=2, n_systems=3,
    ...                          random_seed=1).ratings)
    >>> f = heldout_folds(d, 2)[0]
    >>> q = np.full((d.n_units, d.K), 1.0 / d.K)
    >>> rated = np.full((d.n_cells, d.K, d.K), 1.0 / d.K)
    >>> bool(np.allclose(heldout_logprob(q, rated, f), np.log(1.0 / d.K)))
    True
    """
    p = np.einsum("ns,ns->n", q[fold.unit], rated[fold.cell, :, fold.code])
    with np.errstate(divide="ignore"):
        return np.log(p)


def choose_size(
    candidates: Sequence[int],
    score: Callable[[int], np.ndarray],
) -> tuple[int, dict[str, Any]]:
    """The held-out rule (see the module docstring): ``score(m)`` gives the log predictive
    probability of every rating held out (all folds, in the order of the ratings) for size
    ``m``; returns the chosen size and the table of the comparison (``sizes``,
    ``heldout_loglik`` totals, ``se_diff`` from the best, ``best``, ``chosen``).

    Examples
    --------
    >>> scores = {1: np.full(100, -0.70), 2: np.full(100, -0.60), 3: np.full(100, -0.6)}
    >>> choose_size([1, 2, 3], lambda m: scores[m])[0]
    2
    """
    sizes = [int(m) for m in candidates]
    if not sizes:
        raise ValueError("no candidate sizes")
    per = {m: np.asarray(score(m), dtype=float) for m in sizes}
    total = {m: float(np.sum(per[m])) for m in sizes}
    best = max(sizes, key=lambda m: (total[m], -m))
    se = {}
    for m in sizes:
        diff = per[best] - per[m]
        se[m] = float(np.sqrt(diff.size) * np.std(diff)) if diff.size > 1 else 0.0
    chosen = min(m for m in sizes if total[m] >= total[best] - se[m])
    table = {
        "sizes": sizes,
        "heldout_loglik": [total[m] for m in sizes],
        "se_diff": [se[m] for m in sizes],
        "best": best,
        "chosen": chosen,
        "n_heldout": int(per[best].size),
    }
    return chosen, table


def permutations_of(m: int) -> np.ndarray:
    """All permutations of ``range(m)``, ``(m!, m)``, the identity first.

    Examples
    --------
    >>> permutations_of(3).tolist()[:3]
    [[0, 1, 2], [0, 2, 1], [1, 0, 2]]
    """
    from itertools import permutations

    return np.array(list(permutations(range(m))), dtype=np.int64).reshape(-1, m)


def pivot_permutations(features: np.ndarray, pivot: np.ndarray) -> np.ndarray:
    """Pivotal relabelling (Marin, Mengersen & Robert 2005): for every draw, the
    permutation ``sigma`` of the ``m`` exchangeable components that minimises
    ``sum_k ||features[s, sigma[k]] - pivot[k]||^2``; ``features (S, m, F)``,
    ``pivot (m, F)``; returns ``(S, m)`` (draw ``s``'s component ``sigma[k]`` is the
    pivot's ``k``).

    Examples
    --------
    >>> f = np.array([[[0.0], [1.0]], [[1.0], [0.0]]])
    >>> pivot_permutations(f, np.array([[0.0], [1.0]])).tolist()
    [[0, 1], [1, 0]]
    """
    m = features.shape[1]
    perms = permutations_of(m)
    # cost[s, i, k]: component i of draw s against the pivot's k
    cost = ((features[:, :, None, :] - pivot[None, None, :, :]) ** 2).sum(-1)
    total = cost[:, perms, np.arange(m)].sum(-1)  # (S, m!)
    return perms[np.argmin(total, axis=1)]


__all__ = [
    "AUTO_SIZES",
    "HELDOUT_FOLDS",
    "HeldOut",
    "VBLayout",
    "cell_indices",
    "choose_size",
    "dirichlet_elog",
    "dirichlet_kl",
    "dirichlet_log_norm",
    "dirichlet_mean",
    "heldout_folds",
    "heldout_logprob",
    "permutations_of",
    "pivot_permutations",
    "vb_layout",
]
