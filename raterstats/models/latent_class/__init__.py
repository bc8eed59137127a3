"""Latent-class annotator models: a true label per item, marginalised out of the
likelihood (MACE, Dawid-Skene and the models built on :class:`LatentClassModel`).

Code outside this package imports from here, never from its modules, so the modules can
be rearranged without touching their users. The modules, by job: ``data`` (the layout of
the ratings), ``reference`` (the NumPy likelihood every compiled kernel is tested
against), ``graph`` (PyTensor pieces of the PyMC models), ``base`` (the shared model
class), ``summaries`` (its post-fit answers), ``em`` (the EM driver), ``mace*`` and
``dawid_skene*``, ``glad*`` (each model, its compiled density and its EM;
``dawid_skene_eb`` Dawid-Skene's empirical-Bayes prior), ``community_ds*`` and ``ebcc*``
(the correlated-crowd models, with ``crowd_base``, ``crowd_vb``, ``crowd_density`` and
``kernels_crowd``), ``modes`` (the mode checks of sampled fits), ``layout`` (named
positions of the compiled densities' data), ``kernels_density`` / ``kernels_em`` /
``kernels_glad`` (numba) and ``callbacks`` (numba entry points and nutpie's C callbacks).
"""

from raterstats.models.latent_class.base import (
    LatentClassModel,
    replicate_ratings,
    sample_true_class,
)
from raterstats.models.latent_class.community_ds import CommunityDawidSkene
from raterstats.models.latent_class.crowd_sim import (
    CrowdSimulation,
    biased_community_crowd,
    hard_subtype_crowd,
    simulate_community_crowd,
    simulate_subtype_crowd,
)
from raterstats.models.latent_class.data import (
    LatentClassData,
    data_from_groups,
    majority_vote,
    prepare_latent_class,
)
from raterstats.models.latent_class.dawid_skene import POOLINGS, DawidSkene
from raterstats.models.latent_class.ebcc import EnhancedBCC
from raterstats.models.latent_class.glad import GLAD, adversarial_rating_share
from raterstats.models.latent_class.graph import NEG
from raterstats.models.latent_class.mace import MACE
from raterstats.models.latent_class.modes import mode_problems, mode_report, mode_table
from raterstats.models.latent_class.reference import (
    TableLayout,
    class_counts,
    ds_rating_table,
    entropy_np,
    log_joint_np,
    logsumexp_np,
    mace_rating_table,
    pattern_log_joint_np,
    segment_sum_np,
    table_layout,
)
from raterstats.models.latent_class.summaries import label_switching
from raterstats.schema import UNIT_SEP

__all__ = [
    "GLAD",
    "MACE",
    "NEG",
    "POOLINGS",
    "UNIT_SEP",
    "CommunityDawidSkene",
    "CrowdSimulation",
    "DawidSkene",
    "EnhancedBCC",
    "LatentClassData",
    "LatentClassModel",
    "TableLayout",
    "adversarial_rating_share",
    "biased_community_crowd",
    "class_counts",
    "data_from_groups",
    "ds_rating_table",
    "entropy_np",
    "hard_subtype_crowd",
    "label_switching",
    "log_joint_np",
    "logsumexp_np",
    "mace_rating_table",
    "majority_vote",
    "mode_problems",
    "mode_report",
    "mode_table",
    "pattern_log_joint_np",
    "prepare_latent_class",
    "replicate_ratings",
    "sample_true_class",
    "segment_sum_np",
    "simulate_community_crowd",
    "simulate_subtype_crowd",
    "table_layout",
]
