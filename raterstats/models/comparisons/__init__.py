"""Models of comparative judgments: Bradley-Terry-Davidson for pairwise comparisons
(:class:`BradleyTerry`) and Plackett-Luce for per-question rankings (:class:`PlackettLuce`).

Modules: ``pairs_data`` / ``rankings_data`` (the judgments as index arrays), ``bt_reference``
/ ``pl_reference`` (NumPy references of the densities), ``kernels_bt`` / ``kernels_pl``
(their numba densities and nutpie callbacks), ``bt_outputs`` (stored groups of a
Bradley-Terry fit) and the models ``bradley_terry`` and ``plackett_luce``. Code outside this
package imports from here, never from its modules.
"""

from raterstats.models.comparisons.bradley_terry import BradleyTerry
from raterstats.models.comparisons.pairs_data import PairsData, prepare_pairs
from raterstats.models.comparisons.plackett_luce import PlackettLuce

__all__ = ["BradleyTerry", "PairsData", "PlackettLuce", "prepare_pairs"]
