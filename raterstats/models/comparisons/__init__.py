"""Models of comparative judgments: Bradley-Terry-Davidson for pairwise comparisons
(:class:`BradleyTerry`). Code outside this package imports from here, never from its
modules."""

from raterstats.models.comparisons.bradley_terry import BradleyTerry
from raterstats.models.comparisons.pairs_data import PairsData, prepare_pairs

__all__ = ["BradleyTerry", "PairsData", "prepare_pairs"]
