"""Models of comparative judgments: Plackett-Luce for per-question rankings.

Modules: ``rankings_data`` (rankings as index arrays), ``pl_reference`` (the NumPy
reference of the Plackett-Luce density), ``kernels_pl`` (its numba density and nutpie
callback) and ``plackett_luce`` (the model). Code outside this package imports from here.
"""

from raterstats.models.comparisons.plackett_luce import PlackettLuce

__all__ = ["PlackettLuce"]
