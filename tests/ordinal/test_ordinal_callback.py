"""issue 22: the ordinal model's C callback for nutpie reads the packed data back exactly
(same log density and gradient as the Python entry of the compiled kernel), and its cached
code is invalidated when a source it compiles in changes."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_interval_term_with_one_exponential_equals_the_reference() -> None:
    """issue 22: the interval term computed from one exponential and the cut-point gap's
    (kernels.interval_logp_grad) equals the NumPy reference and its derivatives, on both
    sides of 0, far in the tails and for gaps past GAP_MAX."""
    from raterstats.models.ordinal.kernels_interval import GAP_MAX, interval_logp_grad
    from raterstats.models.ordinal.reference import interval_logp

    for lo in (-40.0, -8.0, -1.0, -1e-3, 0.0, 0.5, 6.0, 35.0):
        for gap in (1e-4, 0.3, 2.0, 12.0, GAP_MAX + 5.0):
            hi = lo + gap
            eg = np.exp(gap) if gap < GAP_MAX else np.inf
            lp, ghi, glo = interval_logp_grad(hi, lo, eg)
            want = float(interval_logp(np.array([lo]), np.array([hi]), "logit")[0])
            assert lp == pytest.approx(want, rel=1e-9, abs=1e-12), (lo, gap)
            h = min(1e-6 * max(1.0, abs(hi)), gap * 1e-3)
            d_hi = (
                float(interval_logp(np.array([lo]), np.array([hi + h]), "logit")[0])
                - float(interval_logp(np.array([lo]), np.array([hi - h]), "logit")[0])
            ) / (2 * h)
            assert ghi == pytest.approx(d_hi, rel=1e-5, abs=1e-7), (lo, gap)
            d_lo = (
                float(interval_logp(np.array([lo + h]), np.array([hi]), "logit")[0])
                - float(interval_logp(np.array([lo - h]), np.array([hi]), "logit")[0])
            ) / (2 * h)
            assert glo == pytest.approx(d_lo, rel=1e-5, abs=1e-7), (lo, gap)


def test_interval_probability_with_one_division_equals_the_reference() -> None:
    """issue 22: the interval term as a probability (kernels_interval.interval_p_grad, one
    exponential and one division, the logarithm taken of a product of many ratings) equals
    the NumPy reference and interval_logp_grad's derivatives, in the tails, for tiny gaps
    (where F(hi) - F(lo) cancels) and for gaps past GAP_MAX."""
    from raterstats.models.ordinal.kernels_interval import (
        GAP_MAX,
        interval_logp_grad,
        interval_p_grad,
    )
    from raterstats.models.ordinal.reference import interval_logp

    for lo in (-700.0, -40.0, -8.0, -1.0, -1e-3, 0.0, 0.5, 6.0, 35.0, 700.0):
        for gap in (1e-9, 1e-4, 0.3, 2.0, 12.0, GAP_MAX + 5.0):
            hi = lo + gap
            eg = np.exp(gap) if gap < GAP_MAX else np.inf
            p, log_part, ghi, glo = interval_p_grad(hi, lo, eg, np.expm1(gap))
            assert p > 0 and (p == 1.0 or (p > 1e-8 and log_part == 0.0)), (lo, gap)
            want = float(interval_logp(np.array([lo]), np.array([hi]), "logit")[0])
            assert np.log(p) + log_part == pytest.approx(want, rel=1e-9, abs=1e-12), (lo, gap)
            _, ghi_ref, glo_ref = interval_logp_grad(hi, lo, eg)
            assert ghi == pytest.approx(ghi_ref, rel=1e-8, abs=1e-12), (lo, gap)
            assert glo == pytest.approx(glo_ref, rel=1e-8, abs=1e-12), (lo, gap)
