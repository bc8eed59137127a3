"""The one home of raterstats' defaults, read by the library and the command line alike.

Change a default here and it changes everywhere; no other module restates these values.
The interval probability of posterior summaries is ArviZ's: :func:`ci_prob` reads
``arviz_base.rcParams["stats.ci_prob"]`` each time it is called, so
``arviz_base.rcParams["stats.ci_prob"] = 0.9`` (or an ``arvizrc`` file) changes every
credible interval raterstats reports. Classical agreement statistics keep the
conventional 95 % bootstrap confidence level (:data:`AGREEMENT_CONFIDENCE`).
"""

from __future__ import annotations

from typing import Final

#: posterior draws per chain (NUTS, ADVI)
DRAWS = 1000
#: draws per chain at which a NUTS fit by nutpie on a compiled density checks itself and
#: stops once it passes (``Model.fit(draws=None)`` of the models that use them: the
#: latent-class models and the ordinal model); the first is :data:`DRAWS`, and a fit that
#: still fails at the last says so
CHECKPOINTS = (1000, 1500, 2000, 3000, 4000)
#: tuning (warm-up) steps per NUTS chain: nutpie's step-size and mass-matrix adaptation
#: settles well within 500 (its own default is 300); benchmarks/RESULTS.md records R-hat,
#: ESS and divergences of these settings on every benchmark study
TUNE = 500
#: NUTS chains
CHAINS = 4
#: NUTS sampler
SAMPLER: Final = "nutpie"
#: fit method
METHOD: Final = "nuts"
#: seed of every stochastic function that is not given one (fits, bootstraps, label
#: samples, tie-breaking, subsampling, simulations of designs), so that a call repeated
#: without a seed gives the same numbers; pass ``random_seed=None`` to a fit for a fresh
#: seed (recorded in the fit's attrs)
RANDOM_SEED = 0
#: bootstrap replicates (agreement confidence intervals, case bootstraps of rankings)
N_BOOT = 1000
#: confidence level of the bootstrap intervals of classical agreement statistics
AGREEMENT_CONFIDENCE = 0.95
#: posterior draws used by summaries that recompute per-draw quantities (label samples
#: for rankings)
MAX_DRAWS = 250
#: resolution of the PNG figures an analysis writes (dots per inch)
FIGURE_DPI = 120
#: width (CSS pixels) of the content column of the HTML report at a 1280 px wide window
#: (:func:`raterstats.report.report`'s stylesheet: 1280 - 2 x 24 padding - 272 contents
#: - 40 gap, less a 17 px scroll bar and the figure's 1 px borders): a figure no wider
#: than this many pixels is shown at its natural size, so its text is not scaled down
REPORT_WIDTH_PX = 900
#: smallest text of a figure or table at 100 % zoom, in points (1 pt = 96/72 CSS pixels)
MIN_TEXT_PT = 9.0


def ci_prob() -> float:
    """Probability mass of credible intervals: ArviZ's ``stats.ci_prob`` rcParam.

    Examples
    --------
    >>> import arviz_base
    >>> ci_prob() == arviz_base.rcParams["stats.ci_prob"]
    True
    """
    from arviz_base import rcParams

    return float(rcParams["stats.ci_prob"])


def resolve_ci_prob(prob: float | None) -> float:
    """``prob`` checked to lie in (0, 1), or :func:`ci_prob` when it is ``None``.

    Examples
    --------
    >>> resolve_ci_prob(0.9)
    0.9
    >>> resolve_ci_prob(1.5)
    Traceback (most recent call last):
    ...
    ValueError: ci_prob must be in (0, 1), not 1.5
    """
    p = ci_prob() if prob is None else float(prob)
    if not 0 < p < 1:
        raise ValueError(f"ci_prob must be in (0, 1), not {prob!r}")
    return p


__all__ = [
    "AGREEMENT_CONFIDENCE",
    "CHAINS",
    "CHECKPOINTS",
    "DRAWS",
    "FIGURE_DPI",
    "MAX_DRAWS",
    "METHOD",
    "MIN_TEXT_PT",
    "N_BOOT",
    "RANDOM_SEED",
    "REPORT_WIDTH_PX",
    "SAMPLER",
    "TUNE",
    "ci_prob",
    "resolve_ci_prob",
]
