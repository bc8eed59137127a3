"""Cluster-bootstrap machinery of the agreement statistics: grouping units by cluster,
drawing resample multiplicities, and evaluating every replicate of an additive statistic by
one matrix product per chunk of replicates.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from raterstats.agreement.kernels.core import FloatArray, IntArray, Parts


def group_index(groups: IntArray, n_groups: int) -> tuple[IntArray, IntArray]:
    """``(order, starts)``: members of group ``g`` are ``order[starts[g]:starts[g + 1]]``."""
    groups = np.asarray(groups, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[order], np.arange(n_groups + 1))
    return order, starts


def take_groups(order: IntArray, starts: IntArray, chosen: IntArray) -> IntArray:
    """Members of the ``chosen`` groups (repeats allowed), group after group, no Python loop."""
    chosen = np.asarray(chosen, dtype=np.int64)
    lens = (starts[1:] - starts[:-1])[chosen]
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    block_start = np.cumsum(lens) - lens
    offs = np.repeat(starts[:-1][chosen] - block_start, lens)
    return order[offs + np.arange(total)]


def cluster_sums(
    features: FloatArray | sparse.sparray, cluster: IntArray, n_clusters: int
) -> FloatArray | sparse.sparray:
    """Sum unit-level features within clusters (e.g. sentences within their answer)."""
    cluster = np.asarray(cluster, dtype=np.int64)
    n_units = features.shape[0]
    member = sparse.csr_array(
        (np.ones(n_units), (cluster, np.arange(n_units))), shape=(n_clusters, n_units)
    )
    out = member @ features
    return out if sparse.issparse(out) else np.asarray(out)


def resample_counts(
    rng: np.random.Generator, n_clusters: int, n_boot: int, chunk: int
) -> list[FloatArray]:
    """Cluster multiplicities of ``n_boot`` bootstrap resamples, in chunks of rows.

    Row ``b`` counts how often each cluster was drawn in a with-replacement sample of
    ``n_clusters`` clusters. ``chunk`` rows are drawn at a time (keep ``chunk * n_clusters``
    around a few million for cache-friendly sizes).
    """
    out = []
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        small = b * n_clusters < 2**31 - 1
        draws: NDArray[np.integer[Any]] = rng.integers(
            0, n_clusters, size=(b, n_clusters), dtype=np.int32 if small else np.int64
        )
        draws = draws + (np.arange(b, dtype=draws.dtype) * n_clusters)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n_clusters)
        out.append(counts.reshape(b, n_clusters).astype(np.float64))
        done += b
    return out


def bootstrap_additive(
    parts: Parts, resamples: list[FloatArray], cluster: IntArray, n_clusters: int
) -> tuple[FloatArray, IntArray]:
    """Bootstrap replicates of an additive statistic: ``finalize(counts @ cluster_features)``."""
    feats = cluster_sums(parts.features, cluster, n_clusters)
    ests = []
    reasons = []
    for counts in resamples:
        sums = (feats.T @ counts.T).T if sparse.issparse(feats) else counts @ feats
        e, r = parts.finalize(np.asarray(sums, dtype=np.float64))
        ests.append(np.atleast_1d(e))
        reasons.append(np.atleast_1d(r))
    if not ests:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    return np.concatenate(ests), np.concatenate(reasons)


__all__ = [
    "bootstrap_additive",
    "cluster_sums",
    "group_index",
    "resample_counts",
    "take_groups",
]
