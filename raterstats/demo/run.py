"""The demo: :func:`raterstats.analyze.analyze` on the built-in clinical-QA study with the
rating schemes and agreement statistics of the published analysis (:func:`run_demo`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raterstats.analyze import AnalysisResult, AnalyzeOptions, Progress, Scheme, analyze
from raterstats.defaults import N_BOOT, RANDOM_SEED
from raterstats.models.ordinal import TUNE as ORDINAL_TUNE
from raterstats.ratings import Ratings

#: draws per chain of the demo's ordinal rater model; ``None``: the model's own defaults
#: (:meth:`raterstats.OrdinalRaters.fit`: draws set by the fit's checks at its checkpoints,
#: after :data:`ORDINAL_TUNE` tuning steps)
ORDINAL_DRAWS: int | None = None
#: draws per chain of the demo's hierarchical MACE fits; ``None`` (default): MACE's own,
#: which sample until the fit passes its checks (:data:`raterstats.defaults.CHECKPOINTS`).
#: The slowest-mixing parameter was the rater scale ``rater_sd`` of the design fit (three
#: schemes as designs, 200 unconstrained dimensions), which went on to 2,000 draws until
#: the rater effects were sampled centred (:data:`CATEGORICAL_CENTRED`); an int fixes the
#: draws (tuning steps: as many, at most :data:`CATEGORICAL_TUNE`)
CATEGORICAL_DRAWS: int | None = None
#: the most tuning steps per chain of the demo's MACE fits
CATEGORICAL_TUNE = 500
#: nutpie's mass-matrix adaptation for the demo's MACE fits. MACE's own default for
#: hierarchical fits is the low-rank one, but on the design fit each of its leapfrog steps
#: cost about 1.5 ms against 0.07 ms with a diagonal mass matrix (one core, 200 dimensions):
#: 4 x 1,000 draws took 56 s, of which 50 s tuning, against 5.5 s for 4 x 2,000 draws with
#: the diagonal one, which also passed the checks (model card, "Inference")
CATEGORICAL_ADAPTATION = "diag"
#: how the demo's MACE fits sample the zero-sum rater and cell effects
#: (:class:`~raterstats.models.MACE`'s ``centred``): the rater effects centred, the cell
#: effects not. The built-in study's seven raters (six physicians and an LLM judge) differ
#: widely and each gave thousands of ratings, so the data pin each rater's effect down and
#: the centred form has the better geometry; MACE's default keeps both non-centred in the
#: design fit (its three schemes leave dimension x design cells empty), where ``rater_sd``
#: mixed at about 0.07 effective draws per draw and the fit sampled on to 2,000 draws
#: (12.5 s). Centred rater effects passed the fit's checks at 1,000 draws at seeds 0 and 1
#: (min bulk ESS 988 and 906, max R-hat 1.004 and 1.006, no divergences; 7 s). It is not
#: MACE's default because on raters who are alike (a small ``rater_sd``) the centred form
#: has a funnel (the model card: 9 of 20 simulated scheme studies had divergences)
CATEGORICAL_CENTRED = "raters"
#: title of the demo's report
TITLE = "raterstats demo: the built-in clinical-QA study"

#: Fine-binary rule per dimension used by the clinical-QA studies: an answer is correct if no
#: sentence is rated incorrect; relevant / safe (communicates risks) if at least one sentence is.
FINE_BINARY_RULES = {
    "correctness": "any_negative",
    "relevance": "any_positive",
    "safety": "any_positive",
}

#: Agreement statistics of the demo (the published study reports Randolph's kappa).
DEMO_STATISTICS = (
    "percent_agreement",
    "randolph_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "intra_rater_agreement",
)

#: Collapsed 3-point scale of the published agreement analysis, as a map of the 5 levels.
LEVELS_5_TO_3 = {1: -1, 2: -1, 3: 0, 4: 1, 5: 1}

#: The three rating schemes of the clinical-QA studies: whole-answer ratings collapsed to 3
#: points, sentence ratings collapsed to 3 points, sentence ratings aggregated to one 0/1
#: rating per answer by :data:`FINE_BINARY_RULES`.
DEMO_SCHEMES = (
    Scheme("coarse 3-point", design="coarse", collapse="likert5_to_3"),
    Scheme("fine 3-point", design="fine", collapse="likert5_to_3"),
    Scheme("fine binary", design="fine", segment_rules=FINE_BINARY_RULES),
)

#: the demo's report is an analysis of the built-in study with this alias of its result
DemoResult = AnalysisResult


def schemes(ratings: Ratings) -> dict[str, Ratings]:
    """The three rating schemes of the clinical-QA studies (:data:`DEMO_SCHEMES`), from the
    raw study.

    Examples
    --------
    >>> from raterstats.simulate import clinical_qa_study
    >>> sorted(schemes(clinical_qa_study(n_questions=4, random_seed=1).ratings))
    ['coarse 3-point', 'fine 3-point', 'fine binary']
    """
    return {s.name: s.apply(ratings) for s in DEMO_SCHEMES}


def demo_options(
    *,
    n_boot: int = N_BOOT,
    random_seed: int = RANDOM_SEED,
    ordinal_draws: int | None = ORDINAL_DRAWS,
    categorical_draws: int | None = CATEGORICAL_DRAWS,
    rankings: bool = True,
    designs: bool = True,
    design_projections: bool = True,
) -> AnalyzeOptions:
    """The options of :func:`run_demo` as :class:`~raterstats.analyze.AnalyzeOptions`
    (the parameters are those of :func:`run_demo`).

    Examples
    --------
    >>> demo_options(ordinal_draws=0).models
    ('mace',)
    >>> demo_options().fit_settings["mace"]  # MACE's draws: set by the fit's checks
    {'tune': 500, 'adaptation': 'diag'}
    >>> demo_options().model_options
    {'mace': {'centred': 'raters'}}
    """
    from raterstats.datasets import DATASETS

    models = [m for m, d in (("mace", categorical_draws), ("ordinal", ordinal_draws)) if d != 0]
    settings: dict[str, Any] = {}
    if categorical_draws is None:
        settings["mace"] = {"tune": CATEGORICAL_TUNE, "adaptation": CATEGORICAL_ADAPTATION}
    elif categorical_draws:
        settings["mace"] = {
            "draws": categorical_draws,
            "tune": min(categorical_draws, CATEGORICAL_TUNE),
            "adaptation": CATEGORICAL_ADAPTATION,
        }
    if ordinal_draws:
        settings["ordinal"] = {"draws": ordinal_draws, "tune": min(ordinal_draws, ORDINAL_TUNE)}
    skip = ([] if rankings else ["rankings"]) + (
        [] if designs else ["designs", "intra_rater", "judges"]
    )
    info = DATASETS["clinical_qa_study"]
    return AnalyzeOptions(
        title=TITLE,
        description=f"{info.description} Source: {info.source}; file {info.file} shipped "
        "with the package.",
        models=tuple(models),
        fit_settings=settings,
        model_options={"mace": {"centred": CATEGORICAL_CENTRED}} if "mace" in models else {},
        n_boot=n_boot,
        random_seed=random_seed,
        statistics=DEMO_STATISTICS,
        schemes=DEMO_SCHEMES,
        collapse="likert5_to_3",
        skip=tuple(skip),
        design_projections=design_projections,
    )


def run_demo(
    out: str | Path,
    *,
    progress: Progress | None = None,
    n_boot: int = N_BOOT,
    random_seed: int = RANDOM_SEED,
    ordinal_draws: int | None = ORDINAL_DRAWS,
    categorical_draws: int | None = CATEGORICAL_DRAWS,
    rankings: bool = True,
    designs: bool = True,
    design_projections: bool = True,
) -> AnalysisResult:
    """Run :func:`raterstats.analyze.analyze` on the built-in study and write the report
    folder (``raterstats demo``).

    The study's 5-point ratings are read under the three schemes of the published analysis
    (:data:`DEMO_SCHEMES`) for the label distributions and the agreement among the
    physicians (:data:`DEMO_STATISTICS`); the categorical model (hierarchical MACE) is
    fitted to the ratings collapsed to 3 points, the ordinal rater model to the 5-point
    ratings. Posterior intervals have ArviZ's probability, the agreement intervals the
    library's confidence level.

    Parameters
    ----------
    out : path
        Report folder (created if needed).
    progress : callable, optional
        Called with a short message before each step.
    n_boot : int
        Bootstrap replicates for the agreement intervals and the raw-rating rankings.
    random_seed : int
        Seed of every stochastic step (the same seed gives the same report).
    ordinal_draws : int, optional
        Draws per chain of the ordinal rater model (tuning steps: as many, at most the
        model's own :data:`ORDINAL_TUNE`); ``None`` (default, :data:`ORDINAL_DRAWS`): the
        model's own defaults; 0 leaves the model out. The report's fit-health line says
        whether the fit passed its diagnostics, or what failed.
    categorical_draws : int, optional
        Draws per chain of the hierarchical MACE fits (tuning steps: as many, at most
        :data:`CATEGORICAL_TUNE`; diagonal mass matrix, :data:`CATEGORICAL_ADAPTATION`;
        rater effects centred, :data:`CATEGORICAL_CENTRED`);
        ``None`` (default, :data:`CATEGORICAL_DRAWS`): MACE's own, set by the fit's checks
        (:data:`CATEGORICAL_TUNE` tuning steps); 0 leaves the model out.
    rankings : bool
        Add the system rankings (rater model when fitted, raw-rating baselines).
    designs : bool
        Add the design comparison, intra-rater reliability and the LLM judge.
    design_projections : bool
        Add the simulation-based annotation-budget projection (the slowest design step;
        needs the ordinal model); False for fast runs.

    Returns
    -------
    AnalysisResult

    Examples
    --------
    >>> import tempfile
    >>> res = run_demo(tempfile.mkdtemp(), n_boot=100, ordinal_draws=0, categorical_draws=0,
    ...                rankings=False, designs=False)
    >>> res.report.name
    'report.md'
    """
    from raterstats.datasets import load_clinical_qa

    say = progress or (lambda _msg: None)
    options = demo_options(
        n_boot=n_boot,
        random_seed=random_seed,
        ordinal_draws=ordinal_draws,
        categorical_draws=categorical_draws,
        rankings=rankings,
        designs=designs,
        design_projections=design_projections,
    )
    say("reading the built-in clinical-QA study")
    return analyze(load_clinical_qa(), out, options=options, progress=progress)


__all__ = [
    "CATEGORICAL_ADAPTATION",
    "CATEGORICAL_CENTRED",
    "CATEGORICAL_DRAWS",
    "CATEGORICAL_TUNE",
    "DEMO_SCHEMES",
    "DEMO_STATISTICS",
    "FINE_BINARY_RULES",
    "LEVELS_5_TO_3",
    "ORDINAL_DRAWS",
    "ORDINAL_TUNE",
    "TITLE",
    "DemoResult",
    "demo_options",
    "run_demo",
    "schemes",
]
