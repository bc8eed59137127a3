"""One rating pattern per unit (``LatentClassData.one_pattern_per_unit``, for models with a
parameter per unit such as GLAD) gives each unit exactly the likelihood it has when units
with the same ratings share a pattern."""

from __future__ import annotations

import numpy as np
import polars as pl

from raterstats import MACE, DawidSkene, NominalScale, read_ratings
from raterstats.models.latent_class import prepare_latent_class


def test_unit_patterns_give_each_unit_its_shared_pattern_likelihood() -> None:
    # three raters label every item: 60 items share few rating patterns
    rng = np.random.default_rng(3)
    levels = ["yes", "partially", "no"]
    frame = pl.DataFrame(
        {
            "item": [f"i{i:02d}" for i in range(60) for _ in range(3)],
            "rater": ["a", "b", "c"] * 60,
            "rating": [levels[k] for k in rng.choice(3, size=180, p=[0.6, 0.2, 0.2])],
        }
    )
    r = read_ratings(frame, scale=NominalScale(levels))
    shared = prepare_latent_class(r)
    per_unit = shared.one_pattern_per_unit()
    assert shared.n_patterns < shared.n_units == per_unit.n_patterns
    for model in (MACE(), DawidSkene()):
        dt = model.fit(r, method="em", random_seed=1)
        params = model.params_from_posterior(dt["posterior"].to_dataset())
        joint_shared = model.pattern_log_joint(params, shared)[:, shared.unit_pattern]
        joint_units = model.pattern_log_joint(params, per_unit)
        np.testing.assert_allclose(joint_units, joint_shared, rtol=1e-12, atol=1e-12)
