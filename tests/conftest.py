"""Shared fixtures and settings of the test suite."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from raterstats.simulate import SimulatedStudy, clinical_qa_study

settings.register_profile(
    "default",
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session")
def study() -> SimulatedStudy:
    """The built-in clinical-QA study at its default seed."""
    return clinical_qa_study()


@pytest.fixture(scope="session")
def small_study() -> SimulatedStudy:
    """A small clinical-QA study (10 questions) for fast tests."""
    return clinical_qa_study(n_questions=10, random_seed=7)


@pytest.fixture(scope="session")
def tiny_study() -> SimulatedStudy:
    """The clinical-QA study with 4 questions: every design, rater kind and repeat, small."""
    return clinical_qa_study(n_questions=4, random_seed=1)


@pytest.fixture(scope="session")
def tiny_ordinal_fit(tiny_study):
    """A short OrdinalRaters fit of ``tiny_study`` (1 chain x 40 draws), shared by the
    ranking and design tests (read only)."""
    from raterstats.models import OrdinalRaters

    return OrdinalRaters().fit(
        tiny_study.ratings, draws=40, tune=40, chains=1, random_seed=1, progress=False
    )


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """The demo with short model fits and without the simulated budget projections (the
    slow demo tests cover those), run once for the demo and the report tests."""
    from raterstats.demo import run_demo

    return run_demo(
        tmp_path_factory.mktemp("demo"),
        n_boot=200,
        random_seed=3,
        ordinal_draws=50,  # the tests check the layout and the numbers' provenance, not
        categorical_draws=50,  # convergence (the slow demo and model tests do)
        design_projections=False,
    )
