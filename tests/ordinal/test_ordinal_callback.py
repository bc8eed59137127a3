"""issue 22: the ordinal model's C callback for nutpie reads the packed data back exactly
(same log density and gradient as the Python entry of the compiled kernel), and its cached
code is invalidated when a source it compiles in changes."""

from __future__ import annotations

import numpy as np

from raterstats.models.ordinal import OrdinalRaters
from raterstats.models.ordinal.kernels_callback import (
    KERNEL_SOURCE_SHA256,
    kernel_source_sha256,
    ordinal_entry,
)
from raterstats.nutpie_callbacks import UserData
from raterstats.simulate import clinical_qa_study


def test_kernel_sources_unchanged() -> None:
    assert kernel_source_sha256() == KERNEL_SOURCE_SHA256, (
        "a source of the ordinal callback changed: set KERNEL_SOURCE_SHA256 in "
        "raterstats/models/ordinal/kernels_callback.py to kernel_source_sha256()"
    )


def test_callback_buffer_gives_the_same_density() -> None:
    ratings = clinical_qa_study(n_questions=6, random_seed=3).ratings
    for options in ({}, {"length_by_rater": True}, {"centred": False}):
        model = OrdinalRaters(**options)
        density = model.density(model.prepare(ratings))
        assert density is not None and density.c_logp is not None
        buf = density.c_data
        assert buf is not None and int(buf[UserData.TOTAL_LENGTH]) == buf.size
        nf = int(buf[UserData.N_FLOATS])
        floats = buf[UserData.BODY : UserData.BODY + nf]
        ints = buf[UserData.BODY + nf :].view(np.int64)
        rng = np.random.default_rng(5)
        for _ in range(3):
            x = density.initial_point(rng) + rng.normal(0, 0.3, density.ndim)
            lp, g = density.logp_grad(x)
            g2 = np.empty(density.ndim)
            lp2 = ordinal_entry(x, ints, floats, g2)
            assert lp2 == lp
            np.testing.assert_array_equal(g2, g)
