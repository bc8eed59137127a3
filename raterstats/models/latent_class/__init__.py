"""Latent-class annotator models: a true label per item, marginalised out of the
likelihood (MACE, Dawid-Skene and the models built on :class:`LatentClassModel`).

Code outside this package imports from here, never from its modules, so the modules can
be rearranged without touching their users.
"""

from raterstats.models.latent_class.base import (
    NEG,
    UNIT_SEP,
    LatentClassData,
    LatentClassModel,
    class_counts,
    data_from_groups,
    entropy_np,
    log_joint_np,
    logsumexp_np,
    majority_vote,
    prepare_latent_class,
    replicate_ratings,
    sample_true_class,
    segment_sum_np,
)
from raterstats.models.latent_class.dawid_skene import POOLINGS, DawidSkene
from raterstats.models.latent_class.mace import MACE

__all__ = [
    "MACE",
    "NEG",
    "POOLINGS",
    "UNIT_SEP",
    "DawidSkene",
    "LatentClassData",
    "LatentClassModel",
    "class_counts",
    "data_from_groups",
    "entropy_np",
    "log_joint_np",
    "logsumexp_np",
    "majority_vote",
    "prepare_latent_class",
    "replicate_ratings",
    "sample_true_class",
    "segment_sum_np",
]
